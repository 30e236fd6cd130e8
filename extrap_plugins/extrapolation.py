"""Extrapolation and ranking: every model at a target point, shares, growth classes, intervals.

What the exporters add to each model when the user asks where the
application is going (``--target p=65536,n=1e6``)::

    value at the largest measured point and at the target   Model.predict
    share of the parent's and of the root's value, at both  shares add up in the call tree
    growth class in big-O form                               O(p·log p), O(n^(3/2))
    95 % prediction interval of the value at the target     least-squares covariance

The *largest measured point* is the largest measured value of every
parameter.  Shares are computed from the models' values at a point, so
that "now" and "at the target" compare like with like.

Prediction intervals come from the covariance of the least-squares
coefficients: the model's terms are re-evaluated at the points it was fitted
to (``ModelSet.experiment``), giving the design matrix ``A`` (one column per
term, the constant first); the residual variance ``s²`` is the models'
residual sum of squares over ``n_points - n_columns`` degrees of freedom; a
new measurement at ``x`` (reduced with the same measure) lies in::

    f(x) ± t(level, dof) · s · sqrt(1 + a(x)ᵀ (AᵀA)⁻¹ a(x))

(drop the ``1 +`` for the interval of the model value itself).  Models that
share their points and the shape of their terms share ``(AᵀA)⁻¹``, so the
work is one small matrix inverse per shape and point set, not per series.
The least-squares part assumes independent noise of constant variance and a
correct choice of terms.  The choice of terms adds its own part: modelers that
judge many hypotheses (``default``, ``refining``) report how much the
hypotheses the data cannot tell apart disagree beyond the measurements
(``Model.choice_spread``, a log-scale standard deviation at 2, 4, 10 and 100
times the largest measured point); at a target ``x`` it is interpolated and
added in quadrature: ``z · |f(x)| · spread(x)``.  An interval of a quantity whose every measured value
is 0 or more (a time, a count) is cut at 0 (:attr:`Uncertainty.floor`), and so is its value at the target (a
target below the measured range can take a model below 0), with an :class:`~extrap_plugins.errors.ExtrapWarning`
naming the series and the model's own value there, and its value at the largest measured point (inside the
measurements, where the modelers say of a model below 0; :func:`value_floors`).

A segmented model's interval at a target is that of the segment :meth:`Model.predict` uses there (the one
that contains the target; outside all of them the nearest, so beyond the data the last), each segment's
least-squares part from the points inside it (:class:`SegmentedUncertainty`).
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field, fields, replace
from typing import Callable, Mapping, Sequence

import numpy as np

from .errors import ExtrapWarning, InputError
from .experiment import CALLPATH_SEPARATOR, Experiment, row_codes
from .formatting import format_exponent, format_number, format_point, format_share
from .models import Factor, Model, ModelSet, Term, expect_model_set
from .options import parse_share

LEVEL = 0.95
CHOICE_AT = (2.0, 4.0, 10.0, 100.0)
"""Multiples of the largest measured point where modelers report the model-choice spread
(:data:`extrap_plugins.modelers.evidence.REFERENCE`)."""
SORT_KEYS = ("growth", "target", "share")
VALUE_KINDS = ("auto", "inclusive", "exclusive")

OUTGROWN = 1e-6
"""A share of the parent above ``1 + OUTGROWN`` at the target flags an inconsistent extrapolation."""

AUTO_SHORTFALL = 0.1
"""``values="auto"`` for a metric without a hint: its values are exclusive when its parents fall short of their
children's sums by more than this share of those sums, all parents together (:func:`shortfall`)."""

_BELOW_FLOOR = " though every measured value is "
"""In the warning about a model below its floor at the target (:func:`extrapolate`)."""


# ---------------------------------------------------------------------- target
def parse_target(target: str | Mapping[str, float] | None, parameters: Sequence[str],
                 defaults: Mapping[str, float] | None = None) -> dict[str, float] | None:
    """``"p=65536,n=1e6"`` -> ``{"p": 65536.0, "n": 1000000.0}``, checked against ``parameters``.

    Every parameter needs a value (or one in ``defaults``); unknown names and
    values that are not positive finite numbers are errors.

    >>> parse_target("p=65536, n=1e6", ("p", "n"))
    {'p': 65536.0, 'n': 1000000.0}
    """
    if target is None or (isinstance(target, str) and not target.strip()):
        return None
    if isinstance(target, Mapping):
        pairs = [(str(k), v) for k, v in target.items()]
    else:
        pairs = []
        for item in str(target).split(","):
            name, sep, value = item.partition("=")
            if not sep or not name.strip():
                raise InputError(
                    f"target {target!r}: expected NAME=VALUE pairs separated by commas, e.g. p=65536,n=1e6")
            pairs.append((name.strip(), value.strip()))
    result: dict[str, float] = {}
    for name, value in pairs:
        if name not in parameters:
            raise InputError(
                f"target {target!r}: unknown parameter {name!r}; the parameters are {', '.join(parameters)}")
        if name in result:
            raise InputError(f"target {target!r}: {name} is given twice")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InputError(f"target {target!r}: {name}={value!r} is not a number") from None
        if not math.isfinite(number) or number <= 0:
            beyond = " (beyond the range of a float)" if math.isinf(number) and "inf" not in str(value).lower() else ""
            raise InputError(f"target {target!r}: {name} must be a finite positive number, got {value}{beyond}")
        result[name] = number
    result = {**(defaults or {}), **result}
    missing = [p for p in parameters if p not in result]
    if missing:
        raise InputError(f"target {target!r}: give a value for {', '.join(missing)} as well")
    return {p: result[p] for p in parameters}




def largest_point(experiment: Experiment | None) -> dict[str, float] | None:
    """The largest measured value of every parameter (None without measurements)."""
    if experiment is None or len(experiment) == 0:
        return None
    top = np.max(experiment.coordinates, axis=0)
    return {name: float(v) for name, v in zip(experiment.parameter_names, top)}


# --------------------------------------------------------------- growth class
def leading_terms(constant: float, terms: Sequence[Term],
                  parameters: Sequence[str]) -> list[tuple[tuple[float, float], ...]]:
    """The monomials of the terms no other term outgrows, fastest first.

    A monomial is one ``(exponent, log_exponent)`` pair per parameter.  Term
    ``a`` outgrows ``b`` when, for every parameter, ``a``'s pair is at least
    ``b``'s (compared exponent first); the constant is the monomial of zeros.
    Terms of negative coefficient in a model with a positive term are left
    out (they subtract; the growth class follows the sign).  A falling term
    (``p^-1``) is outgrown by a constant; alone it is the class: ``O(p^-1)``.
    """
    monomials = set()
    # Terms that subtract from a model that is positive where it grows do not rule its growth:
    # 5 + p - 0.1·p^3·log2(p)^2 does not grow like p^3 (it turns down, see the evidence criterion).
    positive = constant >= 0 and any(t.coefficient > 0 for t in terms)
    counted = [t for t in terms if t.coefficient > 0 or (t.coefficient < 0 and not positive)]
    if constant != 0 or not counted:
        monomials.add(tuple((0.0, 0.0) for _ in parameters))
    for term in counted:
        monomials.add(tuple(
            (float(term.factors[p].exponent), float(term.factors[p].log_exponent)) if p in term.factors else (0.0, 0.0)
            for p in parameters
        ))
    kept = [
        m for m in monomials
        if not any(o != m and all(po >= pm for po, pm in zip(o, m)) for o in monomials)
    ]
    return sorted(kept, key=lambda m: (_degree_of(m), m), reverse=True)


def _degree_of(monomial: tuple[tuple[float, float], ...]) -> tuple[float, float]:
    return (sum(e for e, _ in monomial), sum(j for _, j in monomial))


def _pmnf_part(model: Model) -> tuple[float, Sequence[Term]] | None:
    """The constant and terms that rule the model's growth (the last segment's if segmented); None for a model
    not in PMNF, and for no model (:meth:`~extrap_plugins.models.Model.missing`)."""
    if model.predictor is not None or model.function_text is not None or model.is_missing():
        return None
    if model.segments:
        last = _last_segment(model)
        return last.constant, last.terms
    return model.constant, model.terms


def _last_segment(model: Model):
    """The segment reaching furthest: it rules growth and extrapolation."""
    return max(model.segments, key=lambda s: tuple(hi for _, hi in s.range.values()))


def growth_class(model: Model) -> str | None:
    """The model's growth in big-O form, from its leading terms.

    ``3 + 2·p·log2(p)`` -> ``"O(p·log p)"``, ``1 + 4·n^1.5`` -> ``"O(n^(3/2))"``,
    a constant -> ``"O(1)"``; None for a model that is not in PMNF.
    """
    part = _pmnf_part(model)
    if part is None:
        return None
    monomials = leading_terms(part[0], part[1], model.parameters)
    return "O(" + " + ".join(_format_monomial(m, model.parameters) for m in monomials) + ")"


def growth_degree(model: Model) -> tuple[float, float]:
    """A sort key for growth: (total exponent, total log exponent) of the fastest leading term.

    NaNs for a model that is not in PMNF.
    """
    part = _pmnf_part(model)
    if part is None:
        return (math.nan, math.nan)
    return _degree_of(leading_terms(part[0], part[1], model.parameters)[0])


def _format_monomial(monomial: tuple[tuple[float, float], ...], parameters: Sequence[str]) -> str:
    parts = []
    for name, (exponent, log_exponent) in zip(parameters, monomial):
        if exponent != 0:
            parts.append(name if exponent == 1 else f"{name}^{format_exponent(exponent)}")
        if log_exponent != 0:
            parts.append(f"log {name}" if log_exponent == 1 else f"log^{format_exponent(log_exponent)} {name}")
    return "·".join(parts) or "1"




# ----------------------------------------------------------------- intervals
@dataclass(frozen=True)
class Uncertainty:
    """What the prediction interval of one model needs.

    Attributes
    ----------
    parameters : tuple of str
    columns : tuple of dict
        The factors of each design-matrix column, the constant (``{}``) first.
    scale : ndarray, shape (n_columns,)
        Column scales (largest absolute value at the fitted points).
    gram_inverse : ndarray, shape (n_columns, n_columns)
        ``(A_sᵀ A_s)⁻¹`` of the scaled design matrix ``A_s = A / scale``
        (a pseudo-inverse when the columns are dependent).
    residual_variance : float
        ``s² = RSS / dof`` at the fitted points, in units of ``unit²``.
    dof : int
        Residual degrees of freedom, ``n_points - n_columns`` (> 0).
    """

    parameters: tuple[str, ...]
    columns: tuple[Mapping[str, Factor], ...]
    scale: np.ndarray
    gram_inverse: np.ndarray
    residual_variance: float
    dof: int
    coefficients: tuple[float, ...] = ()
    """The model's constant and term coefficients, in column order (for the model-choice part)."""
    choice_spread: tuple[float, ...] = ()
    """:attr:`Model.choice_spread`: log-scale spread of the plausible hypotheses at :data:`CHOICE_AT`."""
    largest: tuple[float, ...] = ()
    """The largest measured value of each parameter."""
    floor: float = -math.inf
    """The smallest value the quantity can take: 0 where every measured value is 0 or more (a time, a
    count), so that no interval of such a model reaches below zero."""
    unit: float = 1.0
    """The power of two :attr:`residual_variance` is counted in (:func:`~extrap_plugins.modelers.base.binary_scale`
    of the measured values: 1 unless they lie beyond 1e30 or below 1e-30, whose squares may leave the numbers)."""

    def choice(self, X: np.ndarray) -> np.ndarray:
        """The model-choice spread (log scale) at points ``X``, shape (n, n_params) -> (n,).

        See :func:`choice_spread_at`.
        """
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        if not self.largest:
            return np.zeros(X.shape[0])
        return choice_spread_at(np.asarray([self.choice_spread], dtype=np.float64), self.largest, X)[0]

    def leverage(self, X: np.ndarray) -> np.ndarray:
        """``a(x)ᵀ (AᵀA)⁻¹ a(x)`` at points ``X``, shape (n, n_params) -> (n,)."""
        a = design_matrix(self.columns, self.parameters, X) / self.scale
        return np.einsum("ni,ij,nj->n", a, self.gram_inverse, a)

    def half_width(self, X: np.ndarray, level: float = LEVEL, kind: str = "prediction") -> np.ndarray:
        """Half the width of the ``level`` interval at points ``X``, shape (n, n_params) -> (n,).

        ``kind="prediction"``: for a new measurement (reduced like the fitted
        ones); ``kind="confidence"``: for the model value itself.  Both include
        the model-choice part: ``z · |f(x)| · spread(x)`` (see :meth:`choice`),
        added in quadrature to the least-squares part.
        """
        from scipy.special import stdtrit  # the t distribution's quantile; lighter than scipy.stats

        h = self.leverage(np.atleast_2d(np.asarray(X, dtype=np.float64)))
        if kind == "prediction":
            h = 1.0 + h
        elif kind != "confidence":
            raise ValueError(f"unknown interval kind {kind!r}; expected prediction or confidence")
        quantile = stdtrit(self.dof, 0.5 + level / 2.0)
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        fit = quantile * np.sqrt(self.residual_variance * np.maximum(h, 0.0))  # in units of self.unit
        if not self.coefficients:
            return fit * self.unit
        from scipy.special import ndtri

        value = design_matrix(self.columns, self.parameters, X) @ np.asarray(self.coefficients)
        choice = ndtri(0.5 + level / 2.0) * np.abs(value) * self.choice(X) / self.unit
        return np.sqrt(fit * fit + choice * choice) * self.unit

    def bounds(self, value: np.ndarray, half_width: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The interval ``value ± half_width``, cut at :attr:`floor` (shapes as ``value``); both bounds NaN
        (unknown) where either is not finite (the width overflowed far out: its low end was the floor, 0, and
        said so)."""
        return interval_bounds(value, half_width, self.floor)


@dataclass(frozen=True)
class SegmentedUncertainty(Uncertainty):
    """What the prediction interval of a segmented model needs: one :class:`Uncertainty` per segment.

    At a point the interval is that of the segment :meth:`Model.predict <extrap_plugins.models.Model.predict>`
    takes the value from (:meth:`segment_of`): the one that contains the point, else the nearest -- beyond the
    measurements the last, as the extrapolation itself.  Each segment's least-squares part comes from the points
    inside it; the model-choice part is the last segment's (the ``segmented`` modeler reports the spread of the
    last segment's fit, :attr:`Model.choice_spread`; the other segments are inside the measurements, where it is
    0).  The reason: a segment is a model of its own points, and a point in the first segment is as far from the
    last segment's fit as the change between them -- the last segment's interval there said nothing about it
    (means of 4.1, 3.9, 4.05, 3.95, 4.0 at p = 1000 ... 5000, then an exact ``10 + 0.01·p``, got 4.0 … 4.0 at
    p = 2500, the exact last segment's zero width; the first segment's own is 3.76 … 4.24).  Giving none, as
    the README said, would leave out the intervals the model does have; taking the widest of the segments would
    be wrong wherever they differ.  The change points themselves are taken as known: near a change the interval
    is the one of the side the point lies on.

    The fields of :class:`Uncertainty` are the last segment's (what code that reads them without a point saw
    before); :meth:`leverage`, :meth:`choice` and :meth:`half_width` take each point's own segment (NaN where
    that segment has no residual degrees of freedom).

    Attributes
    ----------
    ranges : tuple of dict
        Each segment's ``{parameter: (low, high)}``, in the model's order.
    pieces : tuple of (Uncertainty or None)
        Each segment's interval data, fitted on the points inside it (None without degrees of freedom).
    """

    ranges: tuple[Mapping[str, tuple[float, float]], ...] = ()
    pieces: tuple[Uncertainty | None, ...] = ()

    def segment_of(self, X: np.ndarray) -> np.ndarray:
        """The segment each point's value comes from, shape (n, n_params) -> (n,) of int.

        The rule of :meth:`Model.predict <extrap_plugins.models.Model.predict>`: the first segment that
        contains the point, else the nearest (summed distance beyond each range; the first of equals).
        """
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        result = np.full(X.shape[0], -1, dtype=np.int64)
        for k, bounds in enumerate(self.ranges):
            inside = np.ones(X.shape[0], dtype=bool)
            for name, (lo, hi) in bounds.items():
                column = X[:, self.parameters.index(name)]
                inside &= (column >= lo) & (column <= hi)
            result[inside & (result < 0)] = k
        for i in np.flatnonzero(result < 0):
            distance = [sum(max(lo - X[i, self.parameters.index(name)], 0.0, X[i, self.parameters.index(name)] - hi)
                            for name, (lo, hi) in bounds.items()) for bounds in self.ranges]
            result[i] = int(np.argmin(distance))  # the first of equals, as min() in Model.predict
        return result

    def at(self, X: np.ndarray) -> Uncertainty | None:
        """The interval data of the segment that gives the value at one point ``X``, shape (n_params,) or
        (1, n_params)."""
        return self.pieces[int(self.segment_of(X)[0])]

    def _per_segment(self, X: np.ndarray, method: str, *args) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        which = self.segment_of(X)
        result = np.full(X.shape[0], np.nan)
        for k in np.unique(which):
            piece = self.pieces[k]
            if piece is not None:
                rows = which == k
                result[rows] = getattr(piece, method)(X[rows], *args)
        return result

    def leverage(self, X: np.ndarray) -> np.ndarray:
        """``a(x)ᵀ (AᵀA)⁻¹ a(x)`` of each point's segment, shape (n, n_params) -> (n,)."""
        return self._per_segment(X, "leverage")

    def choice(self, X: np.ndarray) -> np.ndarray:
        """The model-choice spread of each point's segment, shape (n, n_params) -> (n,)."""
        return self._per_segment(X, "choice")

    def half_width(self, X: np.ndarray, level: float = LEVEL, kind: str = "prediction") -> np.ndarray:
        """:meth:`Uncertainty.half_width` of each point's segment, shape (n, n_params) -> (n,); NaN where
        that segment has no interval."""
        if kind not in ("prediction", "confidence"):
            raise ValueError(f"unknown interval kind {kind!r}; expected prediction or confidence")
        return self._per_segment(X, "half_width", level, kind)


def choice_spread_at(spreads: np.ndarray, largest: Sequence[float], X: np.ndarray) -> np.ndarray:
    """The model-choice spread (log scale) of several models at points ``X``.

    Interpolated in ``log d`` between the spreads at :data:`CHOICE_AT` times the largest measured
    point, with ``d`` the largest ratio of a coordinate to its largest measured value; 0 inside the
    measurements (``d <= 1``), growing in proportion to ``log d`` past 100x.

    Parameters
    ----------
    spreads : ndarray, shape (n_models, len(CHOICE_AT))
        :attr:`Model.choice_spread` of each model; a row of another length or with a NaN counts as 0.
    largest : sequence of float, length n_params
    X : ndarray, shape (n, n_params)

    Returns
    -------
    ndarray, shape (n_models, n)

    >>> choice_spread_at(np.array([[0.1, 0.2, 0.3, 0.4]]), [10.0], np.array([[5.0], [40.0], [1e4]])).round(3)
    array([[0. , 0.2, 0.6]])
    """
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    spreads = np.atleast_2d(np.asarray(spreads, dtype=np.float64))
    if spreads.shape[1] != len(CHOICE_AT):
        return np.zeros((spreads.shape[0], X.shape[0]))
    spreads = np.where(np.all(np.isfinite(spreads), axis=1, keepdims=True), spreads, 0.0)
    with np.errstate(all="ignore"):
        d = np.max(X / np.asarray(largest, dtype=np.float64)[None, :], axis=1)
        log_d = np.log(np.maximum(np.where(np.isfinite(d), d, 1.0), 1.0))
    knots = np.log(np.concatenate([[1.0], CHOICE_AT]))
    values = np.concatenate([np.zeros((spreads.shape[0], 1)), spreads], axis=1)
    j = np.clip(np.searchsorted(knots, log_d, side="right") - 1, 0, len(knots) - 2)
    t = np.clip((log_d - knots[j]) / (knots[j + 1] - knots[j]), 0.0, 1.0)
    inside = values[:, j] * (1.0 - t) + values[:, j + 1] * t
    beyond = spreads[:, -1:] * (log_d / knots[-1])[None, :]
    return np.where((log_d > knots[-1])[None, :], beyond, inside)


def design_matrix(columns: Sequence[Mapping[str, Factor]], parameters: Sequence[str], X: np.ndarray) -> np.ndarray:
    """Evaluate each column's factors at points ``X``.

    Parameters
    ----------
    columns : sequence of dict, length n_columns
        ``{parameter: Factor}`` per column; ``{}`` is the constant column of ones.
    X : ndarray, shape (n_points, n_params)

    Returns
    -------
    ndarray, shape (n_points, n_columns)
    """
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    named = {name: X[:, i] for i, name in enumerate(parameters)}
    result = np.ones((X.shape[0], len(columns)))
    for k, factors in enumerate(columns):
        for name, factor in factors.items():
            result[:, k] *= factor.evaluate(named[name])
    return result


def _shape_key(model: Model) -> tuple | None:
    """Models with equal keys share their design-matrix columns (PMNF, unsegmented only)."""
    if model.predictor is not None or model.function_text is not None or model.segments:
        return None
    return tuple(
        tuple((name, f.exponent, f.log_exponent) for name, f in term.factors.items())
        for term in model.terms
    )


def uncertainties(model_set: ModelSet) -> list[Uncertainty | None]:
    """The interval data of every model, in the model set's order.

    None for models without measurements in ``model_set.experiment``, not in
    PMNF, or with no residual degrees of freedom.  A segmented model gets a
    :class:`SegmentedUncertainty`: at a point, the interval of the segment
    that gives the model's value there, fitted on the points inside that
    segment (None when its last segment, the one that extrapolates, has no
    residual degrees of freedom).
    """
    result: list[Uncertainty | None] = [None] * len(model_set.models)
    experiment = model_set.experiment
    if experiment is None or len(experiment) == 0:
        return result
    position = {(m.callpath, m.metric): i for i, m in enumerate(model_set.models)}
    parameters = tuple(model_set.parameters)
    for group in experiment.series_groups():
        Y = group.reduce(model_set.measure)
        by_shape: dict[tuple, list[tuple[int, int]]] = {}
        for row, (callpath, metric) in enumerate(group.keys):
            index = position.get((callpath.name, metric.name))
            if index is None:
                continue
            model = model_set.models[index]
            key = _shape_key(model)
            if key is not None:
                by_shape.setdefault(key, []).append((row, index))
            elif model.segments and model.predictor is None:
                result[index] = _segment_uncertainty(model, group.points, Y[row], parameters)
        for members in by_shape.values():
            first = model_set.models[members[0][1]]
            columns = ({},) + tuple(dict(t.factors) for t in first.terms)
            found = _shape_uncertainties(group.points, Y, members, columns, parameters, model_set.models)
            for index, uncertainty in found:
                result[index] = uncertainty
    return result


def _segment_uncertainty(model: Model, points: np.ndarray, y: np.ndarray,
                         parameters: tuple[str, ...]) -> SegmentedUncertainty | None:
    """The interval data of a segmented model: each segment's from the points inside it.

    The model's :attr:`~Model.choice_spread` (the ``segmented`` modeler's: its last segment's fit) goes with the
    last segment, the one beyond the measurements; every segment's interval is cut at 0 where all the series'
    measured values are 0 or more.  None when the last segment has no interval.
    """
    last = _last_segment(model)
    pieces = []
    for segment in model.segments:
        inside = np.ones(points.shape[0], dtype=bool)
        for name, (lo, hi) in segment.range.items():
            column = points[:, parameters.index(name)]
            inside &= (column >= lo) & (column <= hi)
        piece = Model(model.callpath, model.metric, model.parameters, segment.constant, segment.terms,
                      choice_spread=tuple(model.choice_spread) if segment is last else ())
        columns = ({},) + tuple(dict(t.factors) for t in segment.terms)
        found = _shape_uncertainties(points[inside], y[None, inside], [(0, 0)], columns, parameters, [piece])
        pieces.append(found[0][1] if found else None)
    own = pieces[model.segments.index(last)]
    if own is None:
        return None
    measured = y[np.isfinite(y)]
    floor = 0.0 if measured.size and np.all(measured >= 0) else -math.inf
    pieces = tuple(None if p is None else replace(p, floor=floor) for p in pieces)
    base = {f.name: getattr(own, f.name) for f in fields(Uncertainty)}
    base["floor"] = floor
    return SegmentedUncertainty(**base, ranges=tuple(dict(s.range) for s in model.segments), pieces=pieces)


def _shape_uncertainties(points, Y, members, columns, parameters, models):
    """One Gram inverse for all models of one shape on one point set; one s² per model."""
    A = design_matrix(columns, parameters, points)
    finite = np.all(np.isfinite(A), axis=1)
    dof = int(finite.sum()) - len(columns)
    if dof <= 0:
        return []
    A = A[finite]
    scale = np.max(np.abs(A), axis=0)
    scale[scale == 0] = 1.0
    scaled = A / scale
    gram_inverse = np.linalg.pinv(scaled.T @ scaled)
    rows = np.array([r for r, _ in members])
    coefficients = np.array([
        [models[i].constant] + [t.coefficient for t in models[i].terms] for _, i in members
    ], dtype=np.float64)
    from .modelers.base import binary_scale

    predicted = coefficients @ A.T  # (n_members, n_points)
    units = binary_scale(Y[rows][:, finite])  # squares of values near 1e160 or 1e-200 leave the numbers
    residual = (Y[rows][:, finite] - predicted) / units[:, None]
    variance = np.sum(residual**2, axis=1) / dof
    out = []
    largest = tuple(float(v) for v in np.max(points, axis=0))
    nonnegative = np.all(Y[rows][:, finite] >= 0, axis=1)
    for (_, index), s2, c, zero_or_more, unit in zip(members, variance, coefficients.tolist(), nonnegative, units):
        if np.isfinite(s2):
            spread = tuple(models[index].choice_spread)
            out.append((index, Uncertainty(parameters, columns, scale, gram_inverse, float(s2), dof,
                                           tuple(c), spread, largest, 0.0 if zero_or_more else -math.inf,
                                           float(unit))))
    return out


# ------------------------------------------------------------------- results
@dataclass(frozen=True)
class Extrapolation:
    """What the exporters add to one model's row.

    Values and shares are NaN where they cannot be known (no measurements,
    no target, no parent model); ``interval`` is the prediction interval of
    the value at the target, ``confidence`` that of the model value there.
    """

    growth: str | None
    degree: tuple[float, float]
    value_largest: float
    value_target: float
    interval: tuple[float, float]
    confidence: tuple[float, float]
    share_parent_largest: float
    share_root_largest: float
    share_parent_target: float
    share_root_target: float
    outgrows_parent: bool = False
    """At the target the model's value exceeds its parent's (share above 100 %): the two extrapolations
    contradict each other (a callee cannot take longer than its caller), so at least one is wrong."""
    crosses: str | None = None
    """At the target this model of a minimum lies above the model of the maximum named here (or, of a maximum,
    below that minimum): ``visit_time_min`` and ``visit_time_max``, ``Min time/rank`` and ``Max time/rank``.
    Modelled apart, the two contradict each other there, so at least one is wrong."""

    def inconsistencies(self, metric: str, target: Mapping[str, float]) -> list[str]:
        """:attr:`outgrows_parent` and :attr:`crosses` of this model of ``metric`` at ``target``, as sentences for
        a report's row (none where the extrapolation is consistent)."""
        said = []
        at, wrong = format_point(target), "at least one of the two models is wrong there"
        if self.outgrows_parent:
            said.append(f"outgrows its parent at {at} ({format_share(self.share_parent_target)} of its value): {wrong}")
        if self.crosses:
            side = "above" if is_minimum(metric) else "below"
            said.append(f"{side} {self.crosses} at {at}, each modelled apart: {wrong}")
        return said


@dataclass
class Extrapolations:
    """Every model of a set with its :class:`Extrapolation`, and how they were made."""

    model_set: ModelSet
    rows: list[Extrapolation]
    target: dict[str, float] | None
    largest: dict[str, float] | None
    level: float = LEVEL
    sort: str | None = None
    values: dict[str, str] = field(default_factory=dict)
    """Per metric, whether values were taken as ``inclusive`` or ``exclusive``."""
    uncertainty: list[Uncertainty | None] = field(default_factory=list, repr=False)
    order: list[int] = field(default_factory=list)
    """Positions of the models in the requested order."""

    def __iter__(self):
        """``(model, extrapolation)`` pairs in the requested order."""
        for i in self.order:
            yield self.model_set.models[i], self.rows[i]

    def __len__(self) -> int:
        return len(self.rows)

    def of(self, model: Model) -> Extrapolation:
        for m, row in zip(self.model_set.models, self.rows):
            if m is model:
                return row
        raise KeyError(f"model {model.callpath} [{model.metric}] is not in this set")

    def __repr__(self) -> str:
        at = f" at {format_point(self.target)}" if self.target else ""
        return f"<Extrapolations of {len(self.rows)} models{at}>"

    def __str__(self) -> str:
        """The table ``extrap-plugins model --target ... --sort ...`` prints."""
        from .models import _notebook

        options = {"level": repr(self.level)}
        if self.target:
            options["target"] = ",".join(f"{name}={value!r}" for name, value in self.target.items())
        if self.sort:
            options["sort"] = self.sort
        with warnings.catch_warnings():
            if any(u is not None for u in self.uncertainty):  # values below their floors were said when made
                warnings.filterwarnings("ignore", ".*" + re.escape(_BELOW_FLOOR), ExtrapWarning)
            return _notebook().model_set_text(self.model_set, options)


def extrapolate(
    model_set: ModelSet,
    target: str | Mapping[str, float] | None = None,
    *,
    sort: str | None = None,
    level: float | str = LEVEL,
    values: str = "auto",
    intervals: bool | None = None,
) -> Extrapolations:
    """Evaluate every model at its largest measured point and at ``target``; rank them.

    Parameters
    ----------
    model_set : ModelSet
        Its ``experiment`` gives the largest measured point and the data for
        the prediction intervals (without it those are NaN).
    target : str or mapping, optional
        ``"p=65536,n=1e6"`` or ``{"p": 65536, "n": 1e6}``; every parameter needs a value.
    sort : {"growth", "target", "share"}, optional
        ``growth``: by growth class (fastest first, then by value at the
        target, or at the largest point without a target); ``target``: by
        value at the target, largest first; ``share``: by share of the root
        at the target (at the largest point without a target).  Always
        within each metric.  None keeps the model set's order.
    level : float or str
        Confidence level of the intervals, a share between 0 and 1 (exclusive): ``0.9`` or, as on the
        command line, ``"90%"`` (:func:`~extrap_plugins.options.parse_share`).
    values : {"auto", "inclusive", "exclusive"}
        Whether a call path's value includes its children's.  For exclusive
        values a node's share is that of its subtree (its value plus all its
        descendants'), so children's shares and the parent's own add up to the
        parent's share.  ``auto`` decides per metric: as the source says where
        it knows (:attr:`Metric.values <extrap_plugins.experiment.Metric.values>`:
        Caliper's ``#inclusive#`` attributes, a Thicket's ``inc_metrics``), else
        exclusive when the parents fall short of their children's sums by more
        than :data:`AUTO_SHORTFALL` of those sums, all parents together, in the
        measurements (:func:`shortfall`), or in the models' values at the largest
        point when the model set has no measurements.
    intervals : bool, optional
        Whether to prepare the prediction intervals (``Extrapolations.uncertainty``,
        which needs a pass over the measurements); default: when there is a target.

    Returns
    -------
    Extrapolations

    Warns
    -----
    ExtrapWarning
        Once per series whose model lies below 0 at the target though every measured value is 0 or more: its
        ``value_target`` is 0, and the warning gives the model's own value there.
    """
    model_set = expect_model_set(model_set, "extrapolate")
    if sort is not None and sort not in SORT_KEYS:
        raise InputError(f"unknown sort {sort!r}; expected one of {', '.join(SORT_KEYS)}")
    if values not in VALUE_KINDS:
        raise InputError(f"unknown values {values!r}; expected one of {', '.join(VALUE_KINDS)}")
    try:
        level = parse_share(level, "level", f"{LEVEL:.0%}")  # as --level of efficiency and compare
    except ValueError as error:
        raise InputError(str(error)) from None
    parameters = tuple(model_set.parameters)
    target_point = parse_target(target, parameters)
    if sort == "target" and target_point is None:
        raise InputError("sorting by 'target' needs a target point (--target p=...)")
    largest = _largest_measured(model_set)
    models = model_set.models
    n = len(models)
    now = _values_at(models, largest)
    later = _values_at(models, target_point)
    if intervals is None:
        intervals = target_point is not None
    uncertainty = uncertainties(model_set) if intervals else [None] * n
    # a quantity never below 0 is not given below it: the value is cut as its interval is, before its shares are
    # taken; at a target (one under the measured range can take a model there) the cut is said, at the largest
    # point, inside the measurements, the modelers said it (a model of terms of opposite sign can dip there)
    floors = value_floors(models, uncertainty)
    now = np.where(np.isnan(now), now, np.maximum(now, floors))
    if target_point is not None:
        warn_below_floor(models, later, floors, target_point)
        later = np.where(np.isnan(later), later, np.maximum(later, floors))
    kinds = _value_kinds(model_set, lambda: now, values)
    links = tree_links(models)
    share_parent_now, share_root_now = shares(models, now, kinds, links)
    share_parent_later, share_root_later = shares(models, later, kinds, links)
    prediction = confidence = np.full((n, 2), np.nan)
    if target_point is not None:
        point = np.array([[target_point[p] for p in parameters]])
        prediction, confidence = _intervals(uncertainty, later, point, level)
    growth = _growth_table(models)
    crossed = crossings(models, later) if target_point is not None else {}
    rows = [
        Extrapolation(
            growth=growth[i][0], degree=growth[i][1],
            value_largest=float(now[i]), value_target=float(later[i]),
            interval=(float(prediction[i, 0]), float(prediction[i, 1])),
            confidence=(float(confidence[i, 0]), float(confidence[i, 1])),
            share_parent_largest=float(share_parent_now[i]), share_root_largest=float(share_root_now[i]),
            share_parent_target=float(share_parent_later[i]), share_root_target=float(share_root_later[i]),
            outgrows_parent=bool(target_point is not None and share_parent_later[i] > 1.0 + OUTGROWN),
            crosses=crossed.get(i),
        )
        for i in range(n)
    ]
    result = Extrapolations(model_set, rows, target_point, largest, level, sort, kinds, uncertainty, list(range(n)))
    result.order = rank(result, sort)
    return result


def value_floors(models: Sequence[Model], uncertainty: Sequence[Uncertainty | None]) -> np.ndarray:
    """The least value each model may be given, shape (n_models,): its interval's :attr:`Uncertainty.floor` where
    it has one, else 0 where every measured value of its series is 0 or more (:attr:`Model.non_negative
    <extrap_plugins.models.Model.non_negative>`: a time, a count), else -inf."""
    return np.array([u.floor if u is not None else 0.0 if m.non_negative else -math.inf
                     for m, u in zip(models, uncertainty)], dtype=np.float64)


def warn_below_floor(models: Sequence[Model], value: np.ndarray, floors: np.ndarray,
                      target: Mapping[str, float]) -> None:
    """Say of each model whose value at ``target`` lies below its floor (:attr:`Uncertainty.floor`: 0 where every
    measured value is 0 or more) that the value given there is the floor, not the model's: one warning per series,
    none where the value is NaN or not below the floor."""
    with np.errstate(invalid="ignore"):
        below = np.flatnonzero(value < floors)
    for i in below:
        model = models[i]
        plain = _shape_key(model) is not None  # one formula everywhere (a segmented model's may not be this one)
        coefficients = (model.constant, *(t.coefficient for t in model.terms)) if plain else ()
        mixed = any(c > 0 for c in coefficients) and any(c < 0 for c in coefficients)
        why = "of its terms of opposite sign, the negative ones win there; " if mixed else ""
        floor = format_number(floors[i], False)
        warnings.warn(ExtrapWarning(
            f"the model is {format_number(value[i], False)} at {format_point(target)}, below {floor}{_BELOW_FLOOR}"
            f"{floor} or more: the value given is {floor} ({why}do not trust the model there)",
            model.callpath, model.metric), stacklevel=3)


def rank(extrapolations: Extrapolations, sort: str | None) -> list[int]:
    """Positions of the models in ``sort`` order (see :func:`extrapolate`).

    Rows are ranked within each metric (values of different metrics do not
    compare), metrics in their first-seen order; NaNs last, ties stable.
    """
    rows = extrapolations.rows
    n = len(rows)
    if sort is None:
        return list(range(n))
    has_target = extrapolations.target is not None
    if sort == "target":
        keys = [(r.value_target,) for r in rows]
    elif sort == "share":
        keys = [(r.share_root_target if has_target else r.share_root_largest,) for r in rows]
    elif sort == "growth":
        keys = [(*r.degree, r.value_target if has_target else r.value_largest) for r in rows]
    else:
        raise InputError(f"unknown sort {sort!r}; expected one of {', '.join(SORT_KEYS)}")
    models = extrapolations.model_set.models
    metric_position = {name: k for k, name in enumerate(dict.fromkeys(m.metric for m in models))}

    def key(i):
        k = keys[i]
        missing = any(math.isnan(v) for v in k)
        return (metric_position[models[i].metric], missing, tuple(0.0 if missing else -v for v in k), i)

    return sorted(range(n), key=key)


def _values_at(models: Sequence[Model], point: Mapping[str, float] | None) -> np.ndarray:
    """Every model's value at one point, shape (n_models,); NaN without a point.

    Models of one shape are evaluated together, with exactly the operations
    of :meth:`Model.predict` (so the values are equal to its, bit for bit).
    """
    value = np.full(len(models), np.nan)
    if point is None:
        return value
    by_shape: dict[tuple, list[int]] = {}
    with np.errstate(over="ignore", invalid="ignore"):  # a far point overflows a model: said per series, below
        for i, model in enumerate(models):
            key = _shape_key(model)
            if key is None:
                value[i] = model.predict(point)
            else:
                by_shape.setdefault((model.parameters, key), []).append(i)
        for (parameters, _), members in by_shape.items():
            first = models[members[0]]
            X = np.array([[float(point[p]) for p in parameters]])
            columns = design_matrix([t.factors for t in first.terms], parameters, X)[0]
            result = np.array([models[i].constant for i in members], dtype=np.float64)
            for k, column in enumerate(columns):
                result = result + np.array([models[i].terms[k].coefficient for i in members]) * column
            value[members] = result
            for i in np.array(members)[~np.isfinite(result)]:
                value[i] = models[i].predict(point)  # the same value, with Model.predict's warning naming the series
    return value


@np.errstate(over="ignore", invalid="ignore")  # a far target overflows a model: said per series (_values_at)
def _intervals(uncertainty: Sequence[Uncertainty | None], value: np.ndarray, point: np.ndarray,
               level: float) -> tuple[np.ndarray, np.ndarray]:
    """Prediction and confidence intervals at one point, each shape (n_models, 2); NaN where unknown.

    The same interval as :meth:`Uncertainty.half_width` and :meth:`Uncertainty.bounds` (the least-squares
    part and the model-choice part in quadrature, cut at the quantity's floor), batched: models that share
    a Gram inverse share the leverage at ``point``, one evaluation per shape and point set.
    """
    from scipy.special import ndtri, stdtrit

    n = len(uncertainty)
    prediction, confidence = np.full((n, 2), np.nan), np.full((n, 2), np.nan)
    # a segmented model's interval is its segment's at the point
    uncertainty = [u.at(point) if isinstance(u, SegmentedUncertainty) else u for u in uncertainty]
    groups: dict[int, list[int]] = {}
    for i, u in enumerate(uncertainty):
        if u is not None:
            groups.setdefault(id(u.gram_inverse), []).append(i)
    z = ndtri(0.5 + level / 2.0)
    for members in groups.values():
        first = uncertainty[members[0]]
        h = float(first.leverage(point)[0])
        quantile = stdtrit(first.dof, 0.5 + level / 2.0)
        s2 = np.array([uncertainty[i].residual_variance for i in members])
        units = np.array([uncertainty[i].unit for i in members])
        floor = np.array([uncertainty[i].floor for i in members])
        center = value[members]
        choice = np.zeros(len(members))
        if first.largest:
            spreads = np.array([_spread_row(uncertainty[i]) for i in members])
            choice = z * np.abs(center) * choice_spread_at(spreads, first.largest, point)[:, 0]
        for out, factor in ((prediction, 1.0 + h), (confidence, h)):
            in_units = choice / units  # squares in the unit of s² (values of 1e160 or 1e-200 square out of range)
            half = np.sqrt(quantile * quantile * s2 * max(factor, 0.0) + in_units * in_units) * units
            out[members, 0], out[members, 1] = interval_bounds(center, half, floor)
    return prediction, confidence


def interval_bounds(center, half_width, floor) -> tuple[np.ndarray, np.ndarray]:
    """``center ± half_width`` cut at ``floor`` (arrays that broadcast); both bounds NaN, unknown, where either is
    not finite: a width that overflowed far out had its low end cut to the floor, and 0 was said for it."""
    with np.errstate(over="ignore", invalid="ignore"):
        low, high = center - half_width, center + half_width
    known = np.isfinite(low) & np.isfinite(high)
    return np.where(known, np.maximum(low, floor), np.nan), np.where(known, np.maximum(high, floor), np.nan)


def _spread_row(u: Uncertainty) -> tuple[float, ...]:
    """``u.choice_spread`` as a row of :data:`CHOICE_AT`'s length (NaNs where a modeler reported none)."""
    return u.choice_spread if len(u.choice_spread) == len(CHOICE_AT) else (math.nan,) * len(CHOICE_AT)


def _growth_table(models: Sequence[Model]) -> list[tuple[str | None, tuple[float, float]]]:
    """Growth class and degree of every model; computed once per distinct shape."""
    cache: dict[tuple, tuple[str | None, tuple[float, float]]] = {}
    result = []
    for model in models:
        part = _pmnf_part(model)
        if part is None:
            result.append((None, (math.nan, math.nan)))
            continue
        constant, terms = part
        key = (model.parameters, constant != 0, tuple(
            (t.coefficient != 0, tuple((n, f.exponent, f.log_exponent) for n, f in t.factors.items())) for t in terms))
        if key not in cache:
            monomials = leading_terms(constant, terms, model.parameters)
            text = "O(" + " + ".join(_format_monomial(m, model.parameters) for m in monomials) + ")"
            cache[key] = (text, _degree_of(monomials[0]))
        result.append(cache[key])
    return result


def _largest_measured(model_set: ModelSet) -> dict[str, float] | None:
    """The largest measured point of the models' measurements, or of a streamed set's measured points."""
    largest = largest_point(model_set.experiment)
    if largest is None and model_set.measured_points is not None and len(model_set.measured_points):  # streamed
        largest = {name: float(v) for name, v in zip(model_set.parameters, np.max(model_set.measured_points, axis=0))}
    return largest


def value_kinds(model_set: ModelSet, values: str = "auto") -> dict[str, str]:
    """What :func:`extrapolate`'s ``values`` says of each metric (``"inclusive"`` or ``"exclusive"``), without the
    extrapolation: the models are evaluated only where the rule needs them (streamed sets without hints)."""
    return _value_kinds(model_set, lambda: _values_at(model_set.models, _largest_measured(model_set)), values)


def _value_kinds(model_set: ModelSet, now: Callable[[], np.ndarray], values: str) -> dict[str, str]:
    """Per metric of the models of ``model_set``, whether its values are ``"inclusive"`` or ``"exclusive"``.

    ``values`` itself unless it is ``"auto"``.  Under ``"auto"``: the metric's own hint
    (:attr:`~extrap_plugins.experiment.Metric.values`, from :meth:`ModelSet.metric
    <extrap_plugins.models.ModelSet.metric>`: the source knew it, streamed or not); else the rule of
    :func:`shortfall` on the measured means of ``model_set.experiment``; else (streamed models, no measurements) on
    the models' values at the largest measured point, ``now()`` (shape (n_models,); called only then).  Exclusive
    when the shortfall exceeds :data:`AUTO_SHORTFALL`; inclusive otherwise, and where no parent has a child to
    compare with.
    """
    models, experiment = model_set.models, model_set.experiment
    metrics = list(dict.fromkeys(m.metric for m in models))
    if values != "auto":
        return {metric: values for metric in metrics}
    hints = {metric: model_set.metric(metric).values for metric in metrics}
    guessed = [metric for metric in metrics if not hints[metric]]
    found = shortfall(experiment, guessed) if guessed and experiment is not None and len(experiment) else {}
    if any(metric not in found for metric in guessed):
        found = {**_model_shortfall(models, now()), **found}
    return {metric: value_kind(hints[metric], found.get(metric, 0.0)) for metric in metrics}


def value_kind(hint: str | None, found: float) -> str:
    """``"inclusive"`` or ``"exclusive"``: the metric's own hint where it has one, else exclusive where its parents
    fall short of their children by more than :data:`AUTO_SHORTFALL` (``found``, from :func:`shortfall`)."""
    return hint or ("exclusive" if found > AUTO_SHORTFALL else "inclusive")


def shortfall(experiment: Experiment, metrics: Sequence[str] | None = None) -> dict[str, float]:
    """How far each metric's parents fall short of their children, as a share: the evidence that its values are
    exclusive.

    For every parent call path, at the largest point where it and some child of it are measured (points in
    lexicographic order), with ``own`` its mean over the repetitions and ``children`` the sum of its children's
    means there: ``sum(max(0, children - own)) / sum(children)`` over the parents of the metric.

    Why this rule.  Inclusive values obey ``own >= children`` in every run, for sums, means and minima over ranks
    alike, and the mean over repetitions keeps it; in inclusive data a parent falls short only through rounding
    of stored values, through maxima over ranks (children peaking on different ranks: LULESH's ``Max time/rank``
    gives 0.18), or through model error when models stand in for the measurements, each a few per cent of that
    parent.  Exclusive values obey no such law, and the call paths high in the tree (``main``, a time-step
    loop) own little beside their children, so their shortfall is of the size of the whole program's value
    (Score-P's exclusive ``time`` of Extra-P's CUBE tests gives 0.59 and 0.63, RAJAPerf's per-kernel counts
    0.4-0.9).  The share is a mean of the parents' relative shortfalls weighted by their children's sums, so it
    never exceeds the largest one: a metric whose every parent is within :data:`AUTO_SHORTFALL` (10 %) of its
    children stays inclusive, however large the tree, while one ``main`` at a sliver of its children turns it
    exclusive.  The rule it replaces flipped a whole metric on one parent more than 1 % below its children's
    models (LULESH's ``main->lulesh.cycle``, 50.77 against 52.35: every share of a Caliper experiment wrong).

    Parameters
    ----------
    experiment : Experiment
    metrics : sequence of str, optional
        The metrics to judge; default: all.

    Returns
    -------
    dict
        metric name -> share between 0 and 1; metrics where no parent has a measured child are left out.
    """
    names = [m.name for m in experiment.metrics]
    wanted = np.array([metrics is None or n in metrics for n in names], dtype=bool)
    rows = wanted[experiment.metric_index] & np.isfinite(experiment.value)
    if not rows.any():
        return {}
    callpaths = [c.name for c in experiment.callpaths]
    position = {name: i for i, name in enumerate(callpaths)}
    parent_of = np.array([position.get(_parent(name), -1) if _parent(name) is not None else -1
                          for name in callpaths], dtype=np.int64)
    _, point = row_codes(experiment.coordinates[rows])
    n_points, n_callpaths = int(point.max()) + 1, len(callpaths)
    series = experiment.metric_index[rows].astype(np.int64) * n_callpaths + experiment.callpath_index[rows]
    cells, inverse = np.unique(series * n_points + point, return_inverse=True)
    inverse = inverse.reshape(-1)
    mean = np.bincount(inverse, weights=experiment.value[rows]) / np.bincount(inverse)
    metric_of, callpath_of = (cells // n_points) // n_callpaths, (cells // n_points) % n_callpaths
    parent = parent_of[callpath_of]
    parent_cell = (metric_of * n_callpaths + parent) * n_points + cells % n_points
    slot = np.clip(np.searchsorted(cells, parent_cell), 0, len(cells) - 1)
    child = (parent >= 0) & (cells[slot] == parent_cell)
    children = np.zeros(len(cells))
    counted = np.zeros(len(cells), dtype=bool)
    np.add.at(children, slot[child], mean[child])
    counted[slot[child]] = True
    judged = np.flatnonzero(counted)
    if not len(judged):
        return {}
    group = cells[judged] // n_points
    judged = judged[np.r_[group[1:] != group[:-1], True]]  # each parent's largest point (cells are sorted)
    judged = judged[children[judged] > 0]
    short = np.clip(children[judged] - mean[judged], 0.0, children[judged])  # a negative own value: all short
    metric = metric_of[judged]
    lacking = np.bincount(metric, weights=short, minlength=len(names))
    total = np.bincount(metric, weights=children[judged], minlength=len(names))
    return {names[k]: float(lacking[k] / total[k]) for k in np.flatnonzero(total > 0)}


def _model_shortfall(models: Sequence[Model], now: np.ndarray) -> dict[str, float]:
    """:func:`shortfall` of the models' values at one point (``now``, shape (n_models,)), for models without
    measurements."""
    value = {(m.callpath, m.metric): v for m, v in zip(models, now)}
    children: dict[tuple[str, str], float] = {}
    for (callpath, metric), v in value.items():
        parent = _parent(callpath)
        if parent is not None and (parent, metric) in value and np.isfinite(v):
            children[(parent, metric)] = children.get((parent, metric), 0.0) + v
    lacking: dict[str, float] = {}
    total: dict[str, float] = {}
    for (parent, metric), sum_of_children in children.items():
        own = value[(parent, metric)]
        if np.isfinite(own) and sum_of_children > 0:
            lacking[metric] = lacking.get(metric, 0.0) + min(max(sum_of_children - own, 0.0), sum_of_children)
            total[metric] = total.get(metric, 0.0) + sum_of_children
    return {metric: lacking[metric] / total[metric] for metric in total}


_EXTREME = re.compile(r"(?<![A-Za-z])(min|max)(?=imum|[^A-Za-z]|$)", re.IGNORECASE)
"""``min`` or ``max`` as a word of a metric's name (``visit_time_min``, ``Max time/rank``, ``minimum``)."""


def is_minimum(metric: str) -> bool:
    """Whether a metric's name says it is a minimum (``visit_time_min``, ``Min time/rank``)."""
    words = [word.group(1).lower() for word in _EXTREME.finditer(metric)]
    return words == ["min"]


def maximum_of(metric: str) -> str | None:
    """The name of the maximum that goes with a minimum's name (``visit_time_min`` -> ``visit_time_max``, ``Min
    time/rank`` -> ``Max time/rank``); None for a name that is not a minimum's."""
    if not is_minimum(metric):
        return None
    word = next(_EXTREME.finditer(metric))
    other = "MAX" if word.group(1).isupper() else "Max" if word.group(1)[0].isupper() else "max"
    return metric[: word.start()] + other + metric[word.end():]


def bound_pairs(models: Sequence[Model]) -> list[tuple[int, int]]:
    """(minimum, maximum): the positions of the models of one call path whose metrics' names differ only in
    ``min`` and ``max`` (``visit_time_min``/``visit_time_max``, ``min_time``/``max_time``, ``Min time/rank``/``Max
    time/rank``)."""
    index = {(m.callpath, m.metric): i for i, m in enumerate(models)}
    pairs = []
    for i, m in enumerate(models):
        j = index.get((m.callpath, maximum_of(m.metric)))
        if j is not None:
            pairs.append((i, j))
    return pairs


def bound_metrics(names: Sequence[str]) -> list[str]:
    """The metrics of ``names`` that come as a minimum and its maximum (``visit_time_min`` and ``visit_time_max``),
    both, in the order given."""
    present, bounds = set(names), set()
    for name in names:
        maximum = maximum_of(name)
        if maximum in present:
            bounds |= {name, maximum}
    return [n for n in names if n in bounds]


def crossings(models: Sequence[Model], value: np.ndarray) -> dict[int, str]:
    """Models of a minimum whose value lies above that of their maximum (:func:`bound_pairs`) at one point, each
    with the other's metric (both are flagged)."""
    found = {}
    for low, high in bound_pairs(models):
        if np.isfinite(value[low]) and np.isfinite(value[high]) and value[low] > value[high] * (1 + OUTGROWN):
            found[low], found[high] = models[high].metric, models[low].metric
    return found


def _parent(callpath: str) -> str | None:
    head, sep, _ = callpath.rpartition(CALLPATH_SEPARATOR)
    return head if sep else None


def tree_links(models: Sequence[Model]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """How the models hang together in the call tree, per metric.

    Returns
    -------
    parent, root, ancestor, depth : ndarray of int, shape (n_models,)
        Index of the model of the call path's parent, of its root, and of
        its nearest ancestor that has a model (all with the same metric; -1
        where there is none), and the call path's depth.
    """
    index = {(m.callpath, m.metric): i for i, m in enumerate(models)}
    n = len(models)
    parent = np.full(n, -1, dtype=np.int64)
    root = np.full(n, -1, dtype=np.int64)
    ancestor = np.full(n, -1, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    for i, m in enumerate(models):
        regions = m.callpath.split(CALLPATH_SEPARATOR)
        depth[i] = len(regions) - 1
        root[i] = index.get((regions[0], m.metric), -1)
        for up in range(len(regions) - 1, 0, -1):
            j = index.get((CALLPATH_SEPARATOR.join(regions[:up]), m.metric), -1)
            if up == len(regions) - 1:
                parent[i] = j
            if j >= 0:
                ancestor[i] = j
                break
    return parent, root, ancestor, depth


def shares(models: Sequence[Model], value: np.ndarray, kinds: Mapping[str, str],
           links: tuple[np.ndarray, ...] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each model's share of its parent's and of its root's value.

    Parameters
    ----------
    models : sequence of Model, length n_models
    value : ndarray, shape (n_models,)
        The models' values at one point.
    kinds : mapping metric -> ``"inclusive"`` or ``"exclusive"``
        For exclusive metrics a node's value is first replaced by its
        subtree's total.
    links : the :func:`tree_links` of ``models``, optional (computed if not given)

    Returns
    -------
    share_of_parent, share_of_root : ndarray, shape (n_models,)
        NaN where the parent (root) has no model or a zero value; a root's
        share of its root is 1.
    """
    parent, root, ancestor, depth = links if links is not None else tree_links(models)
    total = np.asarray(value, dtype=np.float64).copy()
    exclusive = np.fromiter((kinds.get(m.metric) == "exclusive" for m in models), dtype=bool, count=len(models))
    if exclusive.any():
        # Subtree totals: add each level into its nearest ancestors, deepest level first.
        for level in np.unique(depth[exclusive])[::-1]:
            rows = np.flatnonzero(exclusive & (depth == level) & (ancestor >= 0))
            np.add.at(total, ancestor[rows], total[rows])
    return _ratios(total, parent), _ratios(total, root)


def _ratios(total: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``total / total[other]`` where ``other`` exists and both are finite, the divisor non-zero; else NaN."""
    result = np.full(total.shape, np.nan)
    has = other >= 0
    a, b = total[has], total[other[has]]
    ok = (b != 0) & np.isfinite(a) & np.isfinite(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        result[np.flatnonzero(has)[ok]] = a[ok] / b[ok]
    return result
