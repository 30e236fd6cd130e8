"""Performance models in the performance model normal form (PMNF).

A PMNF model (Calotoiu et al. 2016, Eq. 2) is::

    f(x_1..x_m) = c_0 + sum_k c_k * prod_l x_l^(i_kl) * log2(x_l)^(j_kl)

:class:`Factor` is one ``x^i * log2(x)^j``, :class:`Term` a coefficient times
factors of distinct parameters, :class:`Model` a constant plus terms with its
quality figures, and :class:`ModelSet` every model of one modeling run.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import warnings
import weakref
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Sequence

import numpy as np

from .errors import ExtrapWarning, InputError
from .experiment import NAMED, Metric
from .formatting import (described, did_you_mean, format_count, format_exponent, format_number, format_value,
                         shortened_repr)

if TYPE_CHECKING:
    from .experiment import Experiment


def _one_nan(value):
    """NaN as the one object ``math.nan``: NaN equals nothing, not even itself, so two models (or a model and its
    pickled copy, whose NaN is a new object) compared equal only where their NaN fields were the same object."""
    return math.nan if isinstance(value, float) and value != value else value


NO_FINITE_VALUES = "no finite values: no model can be made"
"""The note of a series none of whose points has a finite value (:meth:`Model.missing`)."""


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

    def __post_init__(self) -> None:
        for name, value in self.__dict__.items():
            object.__setattr__(self, name, _one_nan(value))

    def __setstate__(self, state: dict) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, _one_nan(value))


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
    """A model not in PMNF: its values, ``X (n_points, n_params) -> (n_points,)``.  It must be picklable: with
    ``--executor process`` or ``mpi`` (which ``--executor auto`` chooses for large inputs) models are sent back
    from worker processes, so use a module-level function, or an instance of a module-level class with
    ``__call__`` for one that needs data, never a lambda or a closure (the host refuses a modeler whose models
    cannot be sent, saying so; ``--executor serial`` needs no pickling).  JSON writes such a model's
    ``constant`` and ``terms`` as null."""
    validation: float = math.nan
    choice_spread: tuple[float, ...] = field(default=(), compare=False)
    """How much the hypotheses the data cannot tell apart disagree beyond the measurements: the weighted
    standard deviation of their log predictions at 2, 4, 10 and 100 times the largest measured value of
    every parameter (:mod:`extrap_plugins.modelers.evidence`); empty when the modeler does not say."""
    """With ``model(..., validate=True)``: the relative error, at the held-out largest value of each
    parameter, of the model refitted without those points (mean over the held-out points); NaN otherwise."""
    measured_range: tuple[tuple[float, float], ...] = field(default=(), repr=False, compare=False)
    """The smallest and largest measured value of each parameter (in the order of ``parameters``) where the series
    has values; set by the engine for every model it fits, empty when unknown.  A notebook draws the model over it
    when the measurements are not at hand."""
    non_negative: bool | None = field(default=None, repr=False, compare=False)
    """Whether every measured value of the series is 0 or more (times, counts): a notebook draws no curve below 0
    then.  Set by the engine; None when unknown."""

    # A model taken from a ModelSet (get, indexing, iteration) is linked to the set's measurements, weakly
    # (``_measurements``: a weak reference to the Experiment), so that its notebook view shows them; the link is
    # no field: models compare, hash, copy and pickle as before, and a model never keeps an experiment alive.

    def __post_init__(self) -> None:
        self.validation = _one_nan(self.validation)

    def __getstate__(self) -> dict:
        """Pickled and copied without the link to the measurements (a weak reference pickles not)."""
        state = dict(self.__dict__)
        state.pop("_measurements", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, validation=_one_nan(state.get("validation", math.nan)))

    def _linked_experiment(self) -> Experiment | None:
        """The Experiment of the ModelSet this model was last taken from (``models.get``, ``models[i]``, iteration)
        while that exists, else None."""
        link = self.__dict__.get("_measurements")
        return link() if link is not None else None

    # ------------------------------------------------------------- evaluate
    def predict(self, point):
        """Evaluate the model.

        Parameters
        ----------
        point : mapping, sequence or ndarray
            ``{"p": 64, "n": 1e6}``: one point, a float returned;
            ``{"p": [64, 128], "n": [1e6, 1e6]}``: one column per parameter (a single value stands for every
            point), an array of shape (n_points,) returned (arrays of one grid, as ``numpy.meshgrid`` makes
            them: an array of the grid's shape); one point as a sequence of n_params numbers
            (in the order of ``parameters``), a float returned; or an array of shape (n_points, n_params),
            an array of shape (n_points,) returned.  A pandas DataFrame (or Series) whose columns (or index) are
            the parameter names is taken as the mapping of them, by name whatever their order (its other
            columns, such as the measured values, left aside).

        The value is NaN (or infinite) where the model is undefined: ``log2`` of a value at or below 0, a
        fractional power of a negative value, a negative power of 0.  A mapping point where that happens
        gets an :class:`~extrap_plugins.errors.ExtrapWarning` saying which parameter is out of range.

        Raises
        ------
        InputError
            A mapping that leaves out a parameter or names one the model does not have, a value that is not
            a number, or a sequence or array whose length or shape does not fit the model's parameters.

        >>> m = Model("main", "time", ("p",), 1.0, (Term(2.0, {"p": Factor(1, 0)}),))
        >>> m.predict({"p": 4}), m.predict([[1], [2]]).tolist()
        (9.0, [3.0, 5.0])
        """
        X, single, grid = self._points(point)
        if self.predictor is not None:
            result = np.asarray(self.predictor(X), dtype=np.float64)
        elif self.segments:
            result = _evaluate_segments(self.segments, self.parameters, X)
        else:
            result = evaluate(self.constant, self.terms, self.parameters, X)
        if single:
            value = float(result[0])
            if isinstance(point, Mapping) and not math.isfinite(value) and not self.is_missing():
                self._warn_undefined(X[0])
            return value
        return result.reshape(grid) if grid else result

    def _points(self, point) -> tuple[np.ndarray, bool, tuple[int, ...] | None]:
        """``point`` as an array of shape (n_points, n_params), whether it was one point, and the shape of the
        grid its columns span where they are arrays of two or more dimensions (``numpy.meshgrid``), else None."""
        names = self.parameters
        if (isinstance(point, np.ndarray) and point.ndim == 2 and point.shape[1] == len(names)
                and point.dtype.kind in "fiu"):
            return np.asarray(point, dtype=np.float64), False, None  # the fast path of the analyses' grids
        shape = f"({', '.join(names)})" if names else "(no parameter)"
        table = not isinstance(point, (Mapping, np.ndarray)) and callable(getattr(point, "keys", None))
        point = _by_name(point)
        if isinstance(point, Mapping):
            missing = [name for name in names if name not in point]
            # a table's other columns (the measured values beside the parameters) are no mistake
            unknown = [key for key in point if key not in names and not (table and not missing)]
            if missing or unknown:
                problem = " and ".join(
                    ([f"has no value for {', '.join(missing)}"] if missing else [])
                    + ([f"names {', '.join(map(repr, unknown))}, which {'is' if len(unknown) == 1 else 'are'} "
                        "not among them"] if unknown else []))
                raise InputError(f"predict: the model of {self.callpath} [{self.metric}] has the parameters "
                                 f"{shape}; the point {shortened_repr(dict(point))} {problem}: give a value for each "
                                 f"parameter and no other, such as {_example(names)}")
            columns = [_numbers(point[name], f"the value of {name}") for name in names]
            try:
                columns = np.broadcast_arrays(*columns) if columns else []
            except ValueError:
                lengths = ", ".join(f"{name} has shape {np.shape(point[name])}" for name in names)
                raise InputError(f"predict: the parameters' values differ in shape ({lengths}): give one value "
                                 f"per point for every parameter, or arrays of one grid (numpy.meshgrid)") from None
            single = all(np.ndim(point[name]) == 0 for name in names)
            X = np.stack([np.reshape(c, -1) for c in columns], axis=1) if columns else np.zeros((1, 0))
            grid = columns[0].shape if columns and columns[0].ndim > 1 else None
            return X, single, grid
        if point is None or isinstance(point, (str, bytes, bool)):
            raise InputError(f"predict: expected a point such as {_example(names)}, a sequence of {len(names)} "
                             f"numbers {shape} or an array of shape (n_points, {len(names)}); got {described(point)}")
        X = _numbers(point, "the point")
        if X.ndim <= 1:
            if X.size != len(names):
                raise InputError(f"predict: the model of {self.callpath} [{self.metric}] has {len(names)} "
                                 f"parameter{'s' if len(names) != 1 else ''} {shape}; got {X.size} "
                                 f"value{'s' if X.size != 1 else ''}, {described(point)}: give one per parameter, "
                                 f"or a mapping such as {_example(names)}")
            return X.reshape(1, len(names)), True, None
        if X.ndim != 2 or X.shape[1] != len(names):
            raise InputError(f"predict: expected an array of shape (n_points, {len(names)}), one column per "
                             f"parameter {shape}; got shape {X.shape}")
        return X, False, None

    @classmethod
    def missing(cls, callpath: str, metric: str, parameters: tuple[str, ...], modeler: str) -> Model:
        """The stand-in for the model of a series without finite values: NaN everywhere, with the note saying so
        (whichever modeler was asked: a plugin's ``fit`` is never given no values)."""
        return cls(callpath, metric, parameters, float("nan"), (), Quality(), points=0, modeler=modeler,
                   warnings=(NO_FINITE_VALUES,))

    def is_missing(self) -> bool:
        """Whether this stands for no model (:meth:`missing`): NaN everywhere, said once already."""
        return (self.predictor is None and self.function_text is None and not self.segments and not self.terms
                and math.isnan(self.constant))

    def _warn_undefined(self, x: np.ndarray) -> None:
        """Say why the model has no finite value at the one point ``x``."""
        where = ", ".join(f"{name}={format_value(float(v))}" for name, v in zip(self.parameters, x))
        if self.predictor is None and self.function_text is None:  # which parameters the formula takes
            terms = [t for segment in self.segments or () for t in segment.terms] + list(self.terms)
            used = {name for t in terms for name in t.factors}
        else:
            used = set(self.parameters)
        low = [name for name, v in zip(self.parameters, x) if v <= 0 and name in used]
        why = (f": {', '.join(low)} {'is' if len(low) == 1 else 'are'} not positive, and the model takes a "
               "logarithm or a power of it" if low else "")
        warnings.warn(ExtrapWarning(f"the model is not finite at {where}{why}", self.callpath, self.metric),
                      stacklevel=3)

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

        def within(name: str, lo: float, hi: float) -> str:  # (for people, a segment of one value as the notes say it)
            if lo == hi and not machine:
                return f"{name} = {bound(lo)}"
            return f"{bound(lo)}{at_most}{name}{at_most}{bound(hi)}"

        return "; ".join(
            format_function(s.constant, s.terms, machine=machine) + " for "
            + ", ".join(within(name, lo, hi) for name, (lo, hi) in s.range.items())
            for s in self.segments)

    def __repr__(self) -> str:
        return f"<Model {self.callpath} [{self.metric}]: {self.formula}>"

    def _repr_html_(self) -> str:
        """A notebook shows the formula, the quality and, for one parameter, the curve: with the measurements of
        the ModelSet it was taken from, else over its measured range (:attr:`measured_range`)."""
        return _notebook().model_html(self, self._linked_experiment())


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
    metrics: tuple[Metric, ...] = field(default=(), compare=False)
    """What the source said of the models' metrics (:class:`~extrap_plugins.experiment.Metric`: unit, kind,
    whether values are inclusive or exclusive), in its order: given by a streamed set, which has no ``experiment``
    (:mod:`extrap_plugins.streaming`), else taken from ``experiment``.  Read them through :meth:`metric` and
    :attr:`known_metrics`, which prefer the experiment's.  Like ``experiment``, not compared: two sets of the same
    models are equal whatever is known of their units."""

    notes: tuple[str, ...] = field(default=(), compare=False)
    """What the reader said of how it read the measurements (which metadata became parameters, what was left out
    and why): given by a streamed set, else taken from ``experiment`` (its ``notes``).  Not compared."""
    reading_warnings: tuple[str, ...] = field(default=(), compare=False)
    """What reading warned of (a run skipped, a line cut short): given by a streamed set, else taken from
    ``experiment`` (its :attr:`~extrap_plugins.experiment.Experiment.reading_warnings`).  Not compared."""

    def __post_init__(self):
        self.metrics = tuple(self.metrics)
        if not self.metrics and self.experiment is not None:
            self.metrics = tuple(self.experiment.metrics)
        self.notes = tuple(self.notes)
        if not self.notes and self.experiment is not None:
            self.notes = tuple(self.experiment.notes)
        self.reading_warnings = tuple(self.reading_warnings)
        if not self.reading_warnings and self.experiment is not None:
            self.reading_warnings = tuple(self.experiment.reading_warnings)

    @property
    def known_metrics(self) -> tuple[Metric, ...]:
        """The metrics as their source described them, the one place to look them up: the experiment's when the
        set has one, then those of :attr:`metrics` it does not name (a streamed set's are all there; empty when
        nothing is known)."""
        if self.experiment is None:
            return self.metrics
        own = tuple(self.experiment.metrics)
        names = {m.name for m in own}
        return own + tuple(m for m in self.metrics if m.name not in names)

    def metric(self, name: str) -> Metric:
        """The :class:`~extrap_plugins.experiment.Metric` named ``name`` (its unit, kind and whether its values are
        inclusive), from :attr:`known_metrics`; ``Metric(name)`` (all unknown) when they do not name it.

        >>> ModelSet(("p",), [], metrics=(Metric("time", "sec"),)).metric("time").unit
        'sec'
        """
        for metric in self.known_metrics:
            if metric.name == name:
                return metric
        return Metric(name)

    def __iter__(self) -> Iterator[Model]:
        if self.experiment is None:
            return iter(self.models)
        return (self._linked(m) for m in self.models)

    def _linked(self, model: Model) -> Model:
        """``model``, linked (weakly) to this set's measurements for its notebook view (``Model._repr_html_``)."""
        if self.experiment is not None and model._linked_experiment() is not self.experiment:
            model.__dict__["_measurements"] = weakref.ref(self.experiment)
        return model

    def __len__(self) -> int:
        return len(self.models)

    def __getitem__(self, key):
        """``models[0]`` (a Model, by position), ``models[1:3]`` (a ModelSet of those) or
        ``models["main", "time"]`` (as :meth:`get`)."""
        if isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, (str, *NAMED)) for k in key):
            return self.get(*key)
        if isinstance(key, slice):
            return dataclasses.replace(self, models=self.models[key])
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not -len(self.models) <= key < len(self.models):
                raise InputError(f"model {key} is out of range: the set has {format_count(len(self.models), 'model')}"
                                 + (f" (0 to {len(self.models) - 1}, or -1 for the last)" if self.models else ""))
            return self._linked(self.models[key])
        if isinstance(key, str):
            metrics = [m.metric for m in self.models if m.callpath == key]
            hint = (f"{key} has models of {', '.join(metrics)}: models[{key!r}, {metrics[0]!r}]" if metrics else
                    f"models[0], or models[CALLPATH, METRIC] such as models[{key!r}, 'time']")
            raise InputError(f"models[{key!r}]: a call path alone does not name one model; give the metric too "
                             f"({hint})")
        raise InputError(f"a ModelSet is indexed by position (models[0]) or by call path and metric "
                         f"(models['main', 'time']); got {described(key)}")

    def get(self, callpath: str, metric: str) -> Model:
        """The model of ``callpath`` and ``metric`` (names, or the experiment's ``Callpath`` and ``Metric``).

        Raises
        ------
        InputError
            There is none (the message lists the call paths or metrics meant, or those there are).
        """
        callpath, metric = (key.name if isinstance(key, NAMED) else key for key in (callpath, metric))
        for m in self.models:
            if m.callpath == callpath and m.metric == metric:
                return self._linked(m)
        metrics = [m.metric for m in self.models if m.callpath == callpath]
        if metrics:
            hint = did_you_mean(str(metric), metrics, f"its metrics are {', '.join(metrics)}")
            raise InputError(f"no model of metric {metric!r} for call path {callpath!r}; {hint}")
        from .experiment import callpath_hint

        names = list(dict.fromkeys(m.callpath for m in self.models))
        hint = callpath_hint([str(callpath)], names) if names else "; the set has no models"
        raise InputError(f"no model for call path {callpath!r} (metric {metric!r}){hint}")

    def __repr__(self) -> str:
        parameters = ", ".join(self.parameters) or "no parameter"
        by = f" by {self.modeler}" if self.modeler else ""
        source = f" from {self.source}" if self.source else ""
        return f"<ModelSet: {format_count(len(self.models), 'model')} of {parameters}{by}{source}>"

    def __str__(self) -> str:
        """The table ``extrap-plugins model`` prints (the text exporter's)."""
        return _notebook().model_set_text(self)

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


def expect_model_set(value, function: str) -> ModelSet:
    """``value`` if it is a ModelSet, else an InputError saying what ``function`` got and how to make one."""
    if isinstance(value, ModelSet):
        return value
    from .experiment import Experiment

    if isinstance(value, Experiment):
        fix = ": model it first, extrap_plugins.model(experiment)"
    elif isinstance(value, (str, os.PathLike)):
        fix = ": read and model it first, extrap_plugins.model(extrap_plugins.read(path))"
    else:
        fix = ""
    raise InputError(f"{function}: expected a ModelSet (from extrap_plugins.model), got {described(value)}{fix}")


def _example(names: Sequence[str]) -> str:
    """A point such as ``{'p': 64, 'n': 64}`` over ``names``, for messages."""
    return "{" + ", ".join(f"{name!r}: 64" for name in names) + "}"


def _by_name(point):
    """A point with named columns (a pandas DataFrame, a Series indexed by name) as a mapping of them, so that its
    values are taken by parameter name, not by the order of its columns; anything else as it is."""
    keys = getattr(point, "keys", None)
    if isinstance(point, (Mapping, np.ndarray)) or not callable(keys):
        return point
    names = list(keys())
    if not names or not all(isinstance(name, str) for name in names):
        return point  # columns numbered 0, 1, ...: by position
    return {name: point[name] for name in names}


def _numbers(value, what: str) -> np.ndarray:
    """``value`` as float64 numbers; an InputError for text, truth values, None and anything else that is not
    one."""
    try:
        raw = np.asarray(value)
        if raw.dtype.kind in "USb" or (raw.dtype.kind == "O" and any(item is None for item in raw.flat)):
            raise ValueError
        return raw.astype(np.float64)
    except (TypeError, ValueError):
        raise InputError(f"predict: {what} must be a number (or a list of numbers), got {described(value)}") from None


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
