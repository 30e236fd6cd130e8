"""Performance models in the performance model normal form (PMNF).

A PMNF model (Calotoiu et al. 2016, Eq. 2) is::

    f(x_1..x_m) = c_0 + sum_k c_k * prod_l x_l^(i_kl) * log2(x_l)^(j_kl)

:class:`Factor` is one ``x^i * log2(x)^j``, :class:`Term` a coefficient times
factors of distinct parameters, :class:`Model` a constant plus terms with its
quality figures, and :class:`ModelSet` every model of one modeling run.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Sequence

import numpy as np

from .formatting import format_exponent, format_number, format_value

if TYPE_CHECKING:
    from .experiment import Experiment


@dataclass(frozen=True)
class Factor:
    """``x^exponent * log2(x)^log_exponent`` for one parameter ``x``."""

    exponent: float = 0.0
    log_exponent: float = 0.0

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """Evaluate at ``x``, shape (n,) -> shape (n,)."""
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            result = np.ones_like(x)
            if self.exponent != 0:
                result = result * np.power(x, self.exponent)
            if self.log_exponent != 0:
                result = result * np.power(np.log2(x), self.log_exponent)
        return result


@dataclass(frozen=True)
class Term:
    """``coefficient * prod(factor(parameter))`` over the parameters in ``factors``."""

    coefficient: float
    factors: Mapping[str, Factor]

    def evaluate(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """Evaluate at the points given as one array per parameter name."""
        result = None
        for name, factor in self.factors.items():
            value = factor.evaluate(columns[name])
            result = value if result is None else result * value
        if result is None:
            return np.full(len(next(iter(columns.values()))), self.coefficient)
        return self.coefficient * result


@dataclass(frozen=True)
class Quality:
    """How well a model fits its own measurements.

    rss : residual sum of squares; ar2 : adjusted R²; smape : symmetric mean
    absolute percentage error (0..200 %); re : mean relative error (%).
    """

    rss: float = math.nan
    ar2: float = math.nan
    smape: float = math.nan
    re: float = math.nan


@dataclass(frozen=True)
class Segment:
    """One piece of a segmented model, valid where each parameter lies in ``range``."""

    range: Mapping[str, tuple[float, float]]
    constant: float
    terms: tuple[Term, ...]


@dataclass
class Model:
    """The model of one (call path, metric) series.

    ``constant`` and ``terms`` define the function in PMNF.  A model made by
    a third-party modeler that is not PMNF sets ``function_text`` to its own text
    and ``predictor`` to a callable ``X (n_points, n_params) -> (n_points,)``.
    """

    callpath: str
    metric: str
    parameters: tuple[str, ...]
    constant: float
    terms: tuple[Term, ...] = ()
    quality: Quality = field(default_factory=Quality)
    points: int = 0
    modeler: str = ""
    segments: tuple[Segment, ...] | None = None
    warnings: tuple[str, ...] = ()
    function_text: str | None = None
    predictor: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False, compare=False)
    validation: float = math.nan
    choice_spread: tuple[float, ...] = field(default=(), compare=False)
    """How much the hypotheses the data cannot tell apart disagree beyond the measurements: the weighted
    standard deviation of their log predictions at 2, 4, 10 and 100 times the largest measured value of
    every parameter (:mod:`extrap_plugins.modelers.evidence`); empty when the modeler does not say."""
    """With ``model(..., validate=True)``: the relative error, at the held-out largest value of each
    parameter, of the model refitted without those points (mean over the held-out points); NaN otherwise."""

    # ------------------------------------------------------------- evaluate
    def predict(self, point):
        """Evaluate the model.

        ``point`` is a mapping ``{"p": 64, "n": 1e6}``, one point as a
        sequence of length n_params (float returned), or an array of shape
        (n_points, n_params) (array of shape (n_points,) returned).
        """
        if isinstance(point, Mapping):
            missing = [p for p in self.parameters if p not in point]
            if missing:
                raise ValueError(f"predict needs a value for {', '.join(missing)}; got {dict(point)}")
            point = [float(point[p]) for p in self.parameters]
        X = np.asarray(point, dtype=np.float64)
        single = X.ndim <= 1
        X = np.atleast_2d(X).reshape(-1, len(self.parameters)) if len(self.parameters) else X.reshape(-1, 0)
        if self.predictor is not None:
            result = np.asarray(self.predictor(X), dtype=np.float64)
        elif self.segments:
            result = _evaluate_segments(self.segments, self.parameters, X)
        else:
            result = evaluate(self.constant, self.terms, self.parameters, X)
        return float(result[0]) if single else result

    def scaled(self, factor: float) -> Model:
        """The same model of values ``factor`` times larger (a PMNF model: its constant, coefficients and RSS)."""
        return replace(
            self,
            constant=self.constant * factor,
            terms=tuple(replace(term, coefficient=term.coefficient * factor) for term in self.terms),
            quality=replace(self.quality, rss=self.quality.rss * factor * factor),
        )

    # ---------------------------------------------------------------- text
    @property
    def function(self) -> str:
        """The machine-readable formula: ``3.1 + 2.0 * p^1 * log2(p)^1``; a segmented model's segments each with
        its range, ``1.0 * p^2 for 1.0 <= p <= 6.0; 30.0 + 1.0 * p^1 for 6.0 <= p <= 10.0``."""
        return self._text(machine=True)

    @property
    def formula(self) -> str:
        """The human-readable formula: ``3.1 + 2.0 · p · log2(p)``."""
        return self._text(machine=False)

    def _text(self, machine: bool) -> str:
        """The formula for :attr:`function` (``machine``) or :attr:`formula`, segments each with its range."""
        if self.function_text is not None:
            return self.function_text
        if not self.segments:
            return format_function(self.constant, self.terms, machine=machine)
        at_most = " <= " if machine else " ≤ "
        bound = (lambda x: repr(float(x))) if machine else format_value
        return "; ".join(
            format_function(s.constant, s.terms, machine=machine) + " for "
            + ", ".join(f"{bound(lo)}{at_most}{name}{at_most}{bound(hi)}" for name, (lo, hi) in s.range.items())
            for s in self.segments)

    def _repr_html_(self) -> str:
        """A notebook shows the formula, the quality and, for one parameter, the curve."""
        return _notebook().model_html(self)


@dataclass
class ModelSet:
    """Every model of one modeling run, in call path then metric order."""

    parameters: tuple[str, ...]
    models: list[Model]
    modeler: str = ""
    options: dict = field(default_factory=dict)
    measure: str = "mean"
    source: str = ""
    experiment: Experiment | None = field(default=None, repr=False, compare=False)
    """The measurements the models were learned from (for plots and intervals)."""
    measured_points: np.ndarray | None = field(default=None, repr=False, compare=False)
    """The distinct measured points, shape (n_points, n_params), when ``experiment`` is None because the
    measurements were streamed and never all in memory (:mod:`extrap_plugins.streaming`)."""

    def __iter__(self) -> Iterator[Model]:
        return iter(self.models)

    def __len__(self) -> int:
        return len(self.models)

    def get(self, callpath: str, metric: str) -> Model:
        for m in self.models:
            if m.callpath == callpath and m.metric == metric:
                return m
        raise KeyError(f"no model for call path {callpath!r} and metric {metric!r}")

    def to_dataframe(self, target=None):
        """A pandas DataFrame, one row per call path and metric (see :func:`extrap_plugins.notebook.to_dataframe`).

        ``target`` (``"p=4096"`` or ``{"p": 4096}``) adds the value there, its
        prediction interval and the share of the root.  Needs pandas.
        """
        return _notebook().to_dataframe(self, target)

    def _repr_html_(self) -> str:
        """A notebook shows the table of models."""
        return _notebook().model_set_html(self)


def _notebook():
    """:mod:`extrap_plugins.notebook`, looked up when a notebook or pandas asks for it.

    The presentation sits above extrapolation, which imports this module; loading it by name at call time keeps
    the data model at the bottom of the import graph (``tests/test_imports.py``) while ``ModelSet`` and
    ``Model`` still carry ``to_dataframe`` and ``_repr_html_``, where pandas and Jupyter users look for them.
    """
    import importlib

    return importlib.import_module("extrap_plugins.notebook")


# ----------------------------------------------------------------------------
def evaluate(constant: float, terms: Sequence[Term], parameters: Sequence[str], X: np.ndarray) -> np.ndarray:
    """Evaluate ``constant + sum(terms)`` at points ``X``, shape (n_points, n_params)."""
    X = np.asarray(X, dtype=np.float64)
    columns = {name: X[:, i] for i, name in enumerate(parameters)}
    result = np.full(X.shape[0], float(constant))
    for term in terms:
        result = result + term.evaluate(columns)
    return result


def _evaluate_segments(segments, parameters, X) -> np.ndarray:
    result = np.full(X.shape[0], np.nan)
    for segment in segments:
        inside = np.ones(X.shape[0], dtype=bool)
        for name, (lo, hi) in segment.range.items():
            column = X[:, list(parameters).index(name)]
            inside &= (column >= lo) & (column <= hi)
        todo = inside & np.isnan(result)
        result[todo] = evaluate(segment.constant, segment.terms, parameters, X[todo])
    # Extrapolate beyond the last segment (or before the first) with the nearest one.
    outside = np.isnan(result)
    if outside.any():
        for i in np.flatnonzero(outside):
            best = min(segments, key=lambda s: _distance(s, parameters, X[i]))
            result[i] = evaluate(best.constant, best.terms, parameters, X[i : i + 1])[0]
    return result


def _distance(segment, parameters, x) -> float:
    distance = 0.0
    for name, (lo, hi) in segment.range.items():
        v = x[list(parameters).index(name)]
        distance += max(lo - v, 0.0, v - hi)
    return distance






def format_factor(name: str, factor: Factor, machine: bool) -> list[str]:
    """``["p^1", "log2(p)^1"]``: the text of one factor (cached: models share few factors)."""
    return list(_factor_text(name, float(factor.exponent), float(factor.log_exponent), machine))


@functools.lru_cache(maxsize=4096)
def _factor_text(name: str, exponent: float, log_exponent: float, machine: bool) -> tuple[str, ...]:
    factor = Factor(exponent, log_exponent)
    parts = []
    if factor.exponent != 0:
        if machine:
            parts.append(f"{name}^{format_exponent(factor.exponent, True)}")
        else:
            parts.append(name if factor.exponent == 1 else f"{name}^{format_exponent(factor.exponent, False)}")
    if factor.log_exponent != 0:
        if machine:
            parts.append(f"log2({name})^{format_exponent(factor.log_exponent, True)}")
        else:
            parts.append(
                f"log2({name})"
                if factor.log_exponent == 1
                else f"log2({name})^{format_exponent(factor.log_exponent, False)}"
            )
    return tuple(parts)


def format_function(constant: float, terms: Sequence[Term], machine: bool) -> str:
    """``3.1 + 2.0 * p^1 * log2(p)^1`` (machine) or ``3.1 + 2 · p · log2(p)`` (human)."""
    times = " * " if machine else " · "
    text = format_number(constant, machine)
    for term in terms:
        factors = [part for name, f in term.factors.items() for part in format_factor(name, f, machine)]
        sign = "-" if term.coefficient < 0 else "+"
        text += f" {sign} " + times.join([format_number(abs(term.coefficient), machine)] + factors)
    if not machine and constant == 0 and terms:  # people read "37.8 · g", not "0 + 37.8 · g"
        text = text[len(format_number(constant, machine)) + 3 :]
        text = ("-" + text) if terms[0].coefficient < 0 else text
    return text
