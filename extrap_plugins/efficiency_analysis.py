"""Speedup, efficiency and iso-efficiency from the models (Wolf's Extra-P slides; Shudler et al., PPoPP 2017).

For each call path, the time ``T(p, n)`` becomes the *resource consumption*
``C(p, n) = p · T(p, n)``.  For strong scaling ``C`` is what gets modelled
(Extra-P converts strong-scaling data the same way): ``n/p`` in ``T`` is ``n`` in
``C``, so the models keep to the positive exponents of the PMNF.  For weak
scaling ``T`` is modelled (it is the nearly flat curve, and its terms add up) and
multiplied by ``p`` term by term (:func:`resource_models`).  With ``p0`` the smallest measured process count::

                    strong scaling (n: total size)       weak scaling (n: size per process)
    work W          C(p0, n)                             (p / p0) · C(p0, n)   (work ∝ total size p·n)
    overhead O      C(p, n) − W                          C(p, n) − W
    efficiency E    W / C                                W / C   (= T(p0, n) / T(p, n))
    speedup S       T(p0, n) / T(p, n) = (p / p0) · E    (p / p0) · E   (scaled speedup)

The *iso-efficiency function* is the problem size ``n(p)`` that keeps ``E``
at a level: for process counts up to the target, ``E(p, n) = level`` is solved
for ``n`` (a scan of ``n`` on a log grid, refined by Brent's method), and the
solved points are themselves modelled in PMNF, so the answer reads like
``n = 4 · p · log2(p)``.  When no problem size reaches the level (the overhead
grows as fast in ``n`` as the work does) there is no such function, and the
result says so.  The *largest p at the level* is where ``E`` falls below the
level for the measured problem size.

Per call path, the overhead ``O_i = C_i − W_i`` is a PMNF model again
(:func:`overhead_model`), so its growth class is exact; its share of the whole
overhead at the target ranks the call paths, the limiter first (the call paths of a named total, which hold
everything, last).  Each overhead at the target has its 95 % interval from its model's (:func:`overhead_half_width`):
the limiter line states the limiter's, and a parent whose model falls short of its children's overhead within its
interval (a root whose work is too noisy to show the overhead its children's models see) has theirs
(:func:`_reconcile`), so that only models further apart than their uncertainty are inconsistent.

The public entry is :func:`extrap_plugins.efficiency` (in :mod:`extrap_plugins.api`),
which reads, models ``C`` and calls :func:`analyse`.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .api import model, names_argument
from .errors import InputError
from .experiment import REDUCERS, RESOURCE_NAMES, Experiment, Metric, reduce_repetitions
from .extrapolation import (SegmentedUncertainty, Uncertainty, design_matrix, extrapolate, growth_class,
                            growth_degree, largest_point, parse_target, tree_links, uncertainties)
from .formatting import described, format_count, format_number, format_point, format_value
from .models import Model, ModelSet, Term
from .options import is_number
from .plugins import PluginHost, get_host
from .scaling import (ancestors, argument, at_value, combine, crossings, experiment_of, pmnf_part, processes_name,
                      refuse_reading_options, report_text, selected_models, share_argument, sum_predict,
                      total_models, with_factor)

SCALINGS = ("strong", "weak")
LEVEL = 0.8
TARGET_FACTOR = 8.0
"""Without a target, the analysis reaches this many times the largest measured process count."""
ISO_POINTS = 32
"""Process counts at which the iso-efficiency equation is solved (even in log p, from p0 to the target)."""
N_BELOW, N_ABOVE = 1e-6, 1e12
"""The problem sizes searched: from this share of the smallest measured size to this many times the largest."""
P_BEYOND = 1024.0
"""The largest p at the level is searched up to this many times the target."""
ISO_MIN_POINTS = 5
MISFIT = 0.1
"""Where the PMNF model of the solved iso-efficiency points misses one by more than this share of it, a note says so."""
CONSISTENT = 5e-4
"""How far, as a share of the whole program's overhead, a call path's overhead may exceed its parent's or the whole
program's (or its modelled children's its own) before it is inconsistent: half the 0.1 % a share is printed to."""
UNCERTAINTY = 0.95
"""The level of the intervals of the overhead at the target (:attr:`CallpathOverhead.overhead_uncertainty`): a
parent whose model's overhead is below its children's by less than its interval has theirs (:func:`_reconcile`),
and the limiter line gives the interval of the limiter's own overhead."""
SHARES_OVERLAP = 1e-6
"""Without a call tree (:attr:`Efficiency.flat`), shares of the overhead that add up to more than ``1 +`` this are
said to."""
SUPERLINEAR = 1e-6
"""An efficiency above ``1 + SUPERLINEAR`` is superlinear (below it, rounding of ``W / C`` at ``p0``)."""
AVERAGE = re.compile(r"\b(avg|average|mean)\b", re.IGNORECASE)
"""A time metric named like this averages over the processes (Caliper's ``Avg time/rank``): the default metric where
none is named ``time`` (:func:`default_metric`)."""


# --------------------------------------------------------------------- results
@dataclass(frozen=True)
class ScalingRow:
    """The whole program at one process count (and the reference problem size)."""

    point: dict[str, float]
    measured: bool
    """Whether every call path of the total was measured at this very point (process count and problem size)."""
    time: float
    resource: float
    work: float
    overhead: float
    efficiency: float
    speedup: float
    measured_efficiency: float = math.nan


@dataclass(frozen=True)
class CallpathOverhead:
    """One call path's part in the overhead at the target."""

    callpath: str
    metric: str
    model: Model
    """The model of the call path's resource consumption ``C = p · T``."""
    work_target: float
    overhead_target: float
    overhead_share_target: float
    """Share of the whole overhead, the call path's children included (inclusive values: its own value's)."""
    own_overhead_share_target: float
    """Share of the whole overhead without the modelled children: these add up to 1 over the call tree.  Without a
    call tree (:attr:`Efficiency.flat`) there are no modelled children: it is the share with whatever the call path
    calls, as :attr:`overhead_share_target` is, and the shares overlap."""
    overhead_model: Model | None
    overhead_growth: str | None
    overhead_degree: tuple[float, float]
    efficiency_target: float
    inconsistency: str = ""
    """Why the call path's overhead at the target is inconsistent with its parent's, its children's or the whole
    program's (models that disagree there), such as ``its overhead, 1.39e6, exceeds its parent's, 6.884e4``; empty
    when it is consistent (see :func:`_inconsistencies` for the rules).  The shares of an inconsistent call path
    are no shares (above 100 % or below 0 %, or parts of an overhead that another model contradicts): the reports
    leave them out, the ranking puts the call path after the consistent ones and :attr:`Efficiency.limiter` passes
    it over."""
    overhead_uncertainty: float = math.nan
    """Half the width of the :data:`UNCERTAINTY` interval of :attr:`overhead_target` (the least-squares part and the
    model-choice part of the model's interval, :mod:`~extrap_plugins.extrapolation`): NaN where the model has none."""
    modelled_overhead: float = math.nan
    """Where the call path's model cannot tell its overhead from its uncertainty (:attr:`overhead_uncertainty`) and
    its modelled children's add up to more, its model's overhead, and :attr:`overhead_target` (and
    :attr:`overhead_model`) is theirs; else NaN."""
    own_overhead: float = math.nan
    """The overhead :attr:`own_overhead_share_target` is a share of: without the modelled children's (inclusive
    values in a call tree), else :attr:`overhead_target`."""
    own_overhead_uncertainty: float = math.nan
    """Half the width of the interval of :attr:`own_overhead` from the fit to the measurements alone (the
    least-squares part; the call path's and its modelled children's in quadrature): whether the measurements show
    the own overhead above zero (:attr:`decided`)."""
    own_overhead_uncertainty_with_choice: float = math.nan
    """:attr:`own_overhead_uncertainty` with the model-choice part (how far the hypotheses that the measurements
    cannot tell apart disagree at the target) in quadrature: how uncertain the size of the own overhead is."""
    own_overhead_growth: str | None = None
    """The growth class of the call path's own overhead, the one :attr:`own_overhead_share_target` is a share of:
    with inclusive values in a call tree its overhead less its modelled children's (a PMNF model again,
    :func:`own_overhead_models`), else its overhead's (:attr:`overhead_growth`).  None where a model is not PMNF."""

    @property
    def consistent(self) -> bool:
        return not self.inconsistency

    @property
    def decided(self) -> bool:
        """Whether the call path's own overhead is above zero beyond its uncertainty (where it has one): the
        measurements show that it adds to the overhead (the limiter line says where it does not)."""
        spread = self.own_overhead_uncertainty if math.isfinite(self.own_overhead_uncertainty) else 0.0
        return math.isfinite(self.own_overhead) and self.own_overhead - spread > 0


@dataclass(frozen=True)
class Isoefficiency:
    """The problem size that keeps the efficiency at the level, solved and modelled."""

    model: Model | None
    growth: str | None
    points: list[tuple[float, float | None]]
    """``(p, n)`` where ``E(p, n) = level`` was solved; ``n`` None where no size reaches the level."""
    note: str = ""

    @property
    def function(self) -> str | None:
        return None if self.model is None else self.model.function

    @property
    def formula(self) -> str | None:
        return None if self.model is None else self.model.formula


@dataclass
class Efficiency:
    """The result of :func:`analyse` (and of ``extrap_plugins.efficiency``)."""

    scaling: str
    level: float
    metric: str
    processes: str
    size: str | None
    parameters: tuple[str, ...]
    reference: dict[str, float]
    """The smallest measured process count ``p0`` with the problem size of the target (default: the largest
    measured): the size at which the scaling table and the largest p at the level are given."""
    target: dict[str, float]
    largest: dict[str, float]
    values: str
    """``inclusive`` or ``exclusive``: how the call paths' values add up (decides the total)."""
    total: list[Model]
    rows: list[ScalingRow]
    isoefficiency: Isoefficiency | None
    isoefficiency_note: str
    largest_p_at_level: float | None
    largest_p_note: str
    callpaths: list[CallpathOverhead]
    model_set: ModelSet = field(repr=False)
    notes: list[str] = field(default_factory=list)
    """Notes on the analysis as a whole (superlinear speedup, a target size below the measured ones, ...)."""

    def __str__(self) -> str:
        """The text report (``extrap-plugins efficiency``'s output)."""
        return report_text(self)

    def _repr_html_(self) -> str:
        """A notebook shows the HTML report (``export_report(result, "html")``) as one element.

        :mod:`extrap_plugins.reports` imports this module, so it is looked up by name (as
        :func:`~extrap_plugins.scaling.report_text` does for ``str()``)."""
        import importlib

        return importlib.import_module("extrap_plugins.reports").notebook_html(self)

    def __repr__(self) -> str:
        formula = self.isoefficiency.formula if self.isoefficiency is not None else None
        iso = f"{self.size} = {formula}" if formula else "none"
        limiter = self.limiter.callpath if self.limiter is not None else (
            "undetermined" if self.passed_over else "none")
        return (f"<Efficiency of {self.metric} over {self.processes}, {self.scaling} scaling: iso-efficiency {iso}; "
                f"limiter {limiter}>")

    @property
    def p0(self) -> float:
        return self.reference[self.processes]

    @property
    def reading_warnings(self) -> tuple[str, ...]:
        """What reading the measurements warned of (a value left out, a run skipped): the models' (:attr:`ModelSet.
        reading_warnings <extrap_plugins.models.ModelSet.reading_warnings>`); the reports list them beside
        :attr:`notes`."""
        return self.model_set.reading_warnings

    @property
    def analysed_models(self) -> list:
        """The models the analysis reads: each call path's, then the total's not among them (what the reports list
        the warnings of)."""
        models = {(c.callpath, c.metric): c.model for c in self.callpaths}
        for m in self.total:
            models.setdefault((m.callpath, m.metric), m)
        return list(models.values())

    total_given: bool = False
    """Whether the total's call paths were named (``total=``) rather than found in the call tree."""
    whole_overhead: float = math.nan
    """The whole program's overhead at the target that the call paths' shares are of: the total's models'
    (:attr:`overhead_target`), or where one of them cannot tell its overhead from its uncertainty, its modelled
    children's (:attr:`CallpathOverhead.modelled_overhead`)."""
    flat: bool = False
    """Whether the input has no call tree (several call paths, none with a modelled parent, inclusive values: a
    flat text file): a call path's value may hold others' (the input cannot say), so its share of the overhead is
    that of its value with whatever it calls, the shares overlap, and no own share can be told."""

    @property
    def callpath_scope(self) -> str:
        """What a call path's overhead, its growth, work and E (:class:`CallpathOverhead`) are of: ``own`` (exclusive
        values: the call path alone, without its children), ``with children`` (inclusive values in a call tree) or
        ``with what it calls`` (:attr:`flat`: the input cannot say what its value holds)."""
        if self.values == "exclusive":
            return "own"
        return "with what it calls" if self.flat else "with children"

    @property
    def limiter(self) -> CallpathOverhead | None:
        """The call path with the largest own share of the overhead at the target: the first of :attr:`callpaths`
        with overhead, as they are ranked by the same rule.

        Call paths whose overhead is inconsistent (:attr:`CallpathOverhead.inconsistency`) are passed over
        (:attr:`passed_over`); when no other call path has overhead, there is no limiter and :attr:`limiter_note`
        says why it is undetermined.  When the total was named (a flat input without a call tree), the named call
        paths hold everything and are passed over in favour of the first other call path (:attr:`set_aside`).
        """
        aside = set(self.set_aside)
        return next((c for c in self.callpaths if _limits(c) and c.consistent and c.callpath not in aside), None)

    @property
    def passed_over(self) -> list[CallpathOverhead]:
        """The call paths with inconsistent overhead that the limiter passes over: those with a larger own overhead
        than the limiter's (with no limiter, every one with a share of the overhead), largest first."""
        top = self.limiter
        aside = set(self.set_aside)
        return [c for c in self.callpaths if _limits(c) and not c.consistent and c.callpath not in aside
                and (top is None or c.own_overhead_share_target > top.own_overhead_share_target)]

    @property
    def set_aside(self) -> list[str]:
        """The call paths of a named total (``total=``) while another call path has overhead: they hold everything,
        so the limiter passes them over and the ranking of :attr:`callpaths` puts them last."""
        return _set_aside(self.callpaths, self.total, self.total_given)

    @property
    def overhead_target(self) -> float:
        """The whole program's overhead ``O = C − W`` at the target."""
        X = np.array([[self.target[name] for name in self.parameters]])
        C, W, _ = efficiency_values(self.total, X, self.parameters.index(self.processes), self.p0, self.scaling)
        return float(C[0] - W[0])

    @property
    def limiter_note(self) -> str:
        """Why no limiter is named (empty when one is)."""
        if self.limiter is not None:
            return ""
        where = f"{self.processes}={format_value(self.target[self.processes])}"
        if self.passed_over:
            return (f"at {where} the overhead of every call path with a share of it is inconsistent: "
                    f"{inconsistencies(self.passed_over)}")
        overhead = self.overhead_target
        if not math.isfinite(overhead):
            return f"the overhead at {where} is undefined"
        if overhead < 0:
            return f"the overhead at {where}, {_number(overhead)}, is negative: there is no overhead to limit"
        return "no overhead at the target"

    # Curves for plots and checks: arrays of p at the reference problem size.
    def points(self, p: np.ndarray, n: np.ndarray | float | None = None) -> np.ndarray:
        """Points ``(len(p), n_params)`` with the processes from ``p`` and the other parameters at the reference."""
        p = np.asarray(p, dtype=np.float64).reshape(-1)
        X = np.empty((p.shape[0], len(self.parameters)))
        for k, name in enumerate(self.parameters):
            X[:, k] = self.reference[name]
        X[:, self.parameters.index(self.processes)] = p
        if n is not None and self.size is not None:
            X[:, self.parameters.index(self.size)] = n
        return X

    def efficiency_at(self, X: np.ndarray) -> np.ndarray:
        return efficiency_values(self.total, X, self.parameters.index(self.processes), self.p0, self.scaling)[2]


# ------------------------------------------------------------------ the maths
def resource_experiment(experiment: Experiment, processes: str) -> Experiment:
    """The experiment with every value multiplied by its process count: ``C = p · T``."""
    k = experiment.parameter_names.index(processes)
    return dataclasses.replace(experiment, value=experiment.value * experiment.coordinates[:, k],
                               notes=list(experiment.notes))


def resource_model(model: Model, processes: str) -> Model:
    """``p · T`` as a model: PMNF terms gain a factor ``p`` (the constant becomes ``c·p``); other models are
    wrapped."""
    part = pmnf_part(model)
    if part is None:
        k = model.parameters.index(processes)
        inner = model.predict
        return dataclasses.replace(model, segments=None, function_text=f"{processes} · ({model.function})",
                                   predictor=lambda X: np.asarray(X)[:, k] * np.asarray(inner(X)))
    constant, terms = part
    pieces = [with_factor(Term(constant, {}), processes, 1.0)] + [with_factor(t, processes, 1.0) for t in terms]
    product = combine(model.callpath, model.metric, model.parameters, 0.0, pieces)
    return dataclasses.replace(model, constant=product.constant, terms=product.terms)


def resource_models(model_set: ModelSet, processes: str) -> ModelSet:
    """The model set of ``C = p · T`` from models of ``T``, with the experiment of ``C``."""
    experiment = None if model_set.experiment is None else resource_experiment(model_set.experiment, processes)
    return dataclasses.replace(model_set, models=[resource_model(m, processes) for m in model_set.models],
                               experiment=experiment)


def efficiency_values(total: Sequence[Model], X: np.ndarray, k: int, p0: float,
                      scaling: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Resource consumption ``C``, work ``W`` and efficiency ``E = W / C`` of ``total`` at points ``X``.

    Parameters
    ----------
    total : models of ``C = p · T`` whose sum is the program
    X : ndarray, shape (n, n_params)
    k : column of the process count in ``X``
    p0 : the smallest measured process count
    scaling : ``strong`` or ``weak``

    Returns
    -------
    C, W, E : ndarray, shape (n,)
    """
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    X0 = X.copy()
    X0[:, k] = p0
    C = sum_predict(total, X)
    W = sum_predict(total, X0)
    if scaling == "weak":
        W = W * X[:, k] / p0
    return C, W, work_share(W, C)


def work_share(W: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``E = W / C`` where it is an efficiency: NaN where ``C ≤ 0`` or ``W < 0``.

    A model that falls to zero or below predicts no resource consumption (a time of zero or less), so ``W / C``
    there is no efficiency: it passes a pole at ``C = 0`` and changes sign beyond (and ``0 / 0`` where every value
    is zero is undefined).
    """
    W, C = np.asarray(W, dtype=np.float64), np.asarray(C, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((C > 0) & (W >= 0), W / C, np.nan)


def overhead_model(model: Model, processes: str, p0: float, scaling: str) -> Model | None:
    """``O = C − W`` of one call path as a PMNF model (None when ``model`` is not plain PMNF).

    Strong scaling: the constant and the terms without ``p`` cancel; each term
    with ``p`` loses its value at ``p0``.  Weak scaling: ``W = (p / p0) · C(p0, n)``
    is ``p`` times a PMNF in the other parameters.
    """
    part = pmnf_part(model)
    if part is None:
        return None
    constant, terms = part
    if scaling == "strong":
        pieces = [t for t in terms if processes in t.factors]
        pieces += [dataclasses.replace(at_value(t, processes, p0), coefficient=-at_value(t, processes, p0).coefficient)
                   for t in terms if processes in t.factors]
        return combine(model.callpath, model.metric, model.parameters, 0.0, pieces)
    pieces = list(terms)
    pieces.append(with_factor(Term(-constant / p0, {}), processes, 1.0))
    for t in terms:
        fixed = at_value(t, processes, p0)
        pieces.append(with_factor(dataclasses.replace(fixed, coefficient=-fixed.coefficient / p0), processes, 1.0))
    return combine(model.callpath, model.metric, model.parameters, constant, pieces)


# -------------------------------------------------------------------- analyse
def analyse(
    model_set: ModelSet,
    *,
    processes: str,
    size: str | None = None,
    scaling: str = "strong",
    level: float = LEVEL,
    target: str | Mapping[str, float] | float | None = None,
    metric: str | None = None,
    values: str = "auto",
    total: Sequence[str] = (),
    fit: Callable[[Experiment], ModelSet] | None = None,
) -> Efficiency:
    """Efficiency, iso-efficiency and overhead per call path from models of ``C = p · T``.

    Parameters
    ----------
    model_set : ModelSet
        Models of the resource consumption (see :func:`resource_experiment`),
        with the experiment they were learned from.
    processes, size : parameter names
        The process count, and the problem size (total for strong scaling,
        per process for weak scaling); without ``size`` there is no iso-efficiency.
    scaling : ``strong`` or ``weak``
    level : the efficiency to keep, between 0 and 1
    target : the process count (or point) the analysis reaches; default
        :data:`TARGET_FACTOR` times the largest measured one.
    metric : the metric analysed (default: :func:`default_metric`, which a note then names)
    values : ``auto``, ``inclusive`` or ``exclusive`` (see :func:`extrap_plugins.extrapolate`)
    total : call paths whose sum is the whole program (default: the roots for inclusive values, every
        call path for exclusive ones); for inputs without a call tree, such as flat text files
    fit : ``Experiment -> ModelSet``, the modeler that models the solved ``n(p)``
    """
    experiment = model_set.experiment
    if experiment is None or len(experiment) == 0:
        raise InputError("efficiency needs the measurements the models were learned from")
    parameters = tuple(model_set.parameters)
    level = share_argument(level, "level", "80%")
    total = names_argument(total, "total")
    metrics = list(dict.fromkeys(m.metric for m in model_set.models))
    if not metrics:
        raise InputError("no models to analyse")
    chosen = ""
    if metric is None:
        known = {m.name: m for m in experiment.metrics}
        metric, chosen = default_metric([known.get(name, Metric(name)) for name in metrics])
    elif metric not in metrics:
        raise InputError(f"no models of metric {metric!r}; the metrics are {', '.join(metrics)}")
    target_point = check(experiment, processes=processes, size=size, scaling=scaling, level=level, target=target,
                         metric=metric)
    low = experiment.coordinates.min(axis=0)
    high = experiment.coordinates.max(axis=0)
    models = [m for m in model_set.models if m.metric == metric]
    p0 = float(low[parameters.index(processes)])
    largest = largest_point(experiment)
    reference = dict(target_point)
    reference[processes] = p0
    kind = extrapolate(ModelSet(parameters, models, experiment=experiment), values=values, intervals=False) \
        .values.get(metric, "inclusive")
    if total:
        known = {m.callpath: m for m in models}
        missing = [name for name in total if name not in known]
        if missing:
            raise InputError(f"{argument('total')}: no model of {metric} for {', '.join(map(repr, missing))}; the "
                             f"call paths are {', '.join(list(known)[:8])}{', ...' if len(known) > 8 else ''}")
        total_set = [known[name] for name in dict.fromkeys(total)]
        if kind == "inclusive":
            _refuse_counted_twice(list(dict.fromkeys(total)))
    else:
        total_set = total_models(models, kind)

    result = Efficiency(
        scaling=scaling, level=level, metric=metric, processes=processes, size=size, parameters=parameters,
        reference=reference, target=target_point, largest=largest, values=kind, total=total_set, rows=[],
        isoefficiency=None, isoefficiency_note="", largest_p_at_level=None, largest_p_note="", callpaths=[],
        model_set=model_set, total_given=bool(total),
    )
    result.notes += [chosen] if chosen else []
    result.notes += _outside_notes(target_point, processes, parameters, low, high)
    result.callpaths = _callpaths(result, models, kind)
    result.total = _reconciled_total(result, models)
    result.rows = _rows(result, experiment)
    undefined = _undefined(result, experiment)
    if undefined:
        result.largest_p_note = undefined
    else:
        result.largest_p_at_level, result.largest_p_note = _largest_p(result)
    if size is None:
        result.isoefficiency_note = (f"no problem-size parameter, {argument('size')}: the iso-efficiency function "
                                     "needs measurements at several problem sizes")
    elif undefined:
        result.isoefficiency_note = undefined
    elif low[parameters.index(size)] == high[parameters.index(size)]:
        only = format_value(float(low[parameters.index(size)]))
        result.isoefficiency_note = (f"{size} has one measured value ({only}): the iso-efficiency function needs "
                                     f"measurements at several problem sizes")
    else:
        result.isoefficiency, result.isoefficiency_note = _isoefficiency(result, low, high, fit)
    result.flat = kind == "inclusive" and len(models) > 1 and bool(np.all(tree_links(models)[2] < 0))
    if result.flat:
        shares = [c.overhead_share_target for c in result.callpaths if math.isfinite(c.overhead_share_target)]
        added = f" (here they add up to {sum(shares):.1%})" if sum(shares) > 1 + SHARES_OVERLAP else ""
        summed = ""
        if not total:  # every call path is a root: their sum counts twice what one's value holds of another's
            X0 = result.points(np.array([p0]))
            largest = max(total_set, key=lambda m: float(m.predict(X0)[0])).callpath
            summed = (f"; the whole program is taken as the sum of all {len(total_set)} call paths, which counts a "
                      f"call path twice where another's value holds it: {argument('total')} names the call paths "
                      f"whose sum is the whole program, such as {largest!r}")
        result.notes.append(f"the input has no call tree: a call path's value may hold others' (the input cannot "
                            f"say which), so its share of the overhead is that of its value with whatever it calls, "
                            f"and the shares overlap{added}{summed}")
    result.notes += _vanishing_notes(result)
    result.notes += _reconciled_notes(result)
    result.notes += _level_notes(result)
    result.notes += _superlinear_notes(result)
    inconsistent = [c for c in result.callpaths if not c.consistent]
    if inconsistent:
        where = f"{processes}={format_value(target_point[processes])}"
        one = len(inconsistent) == 1
        whys = []
        if any("the whole program's" not in c.inconsistency for c in inconsistent):
            whys.append("where a call path's overhead exceeds its parent's or its children's exceeds its own, the "
                        "models disagree: a parent's model may miss a term its children have, or a child's may have "
                        "one too many")
        if any("the whole program's" in c.inconsistency for c in inconsistent):
            whys.append("where it exceeds the whole program's, the overhead of other call paths is negative")
        why = f" ({'; '.join(whys)})"
        hint = "" if total else f"; {argument('total')} names the call paths to trust for the total"
        more = " (the table of call paths says why for each)" if len(inconsistent) > 3 else ""
        result.notes.append(
            f"at {where} the overhead of {len(inconsistent)} call path{'' if one else 's'} is inconsistent{why}: "
            f"{'its' if one else 'their'} shares "
            f"are not given, the ranking puts {'it' if one else 'them'} after the others and the limiter passes "
            f"{'it' if one else 'them'} over: {inconsistencies(inconsistent)}{more}{hint}")
    return result


def _refuse_counted_twice(total: Sequence[str]) -> None:
    """An InputError where a named total (inclusive values) holds a call path and one of its callers: the caller's
    value holds the call path's, so the sum would count it twice."""
    named = set(total)
    for callpath in total:
        caller = next((a for a in ancestors(callpath) if a in named), None)
        if caller is not None:
            raise InputError(f"{argument('total')}: {callpath!r} is part of {caller!r} (inclusive values: a call "
                             f"path's value holds its children's), so the total would count it twice: name "
                             f"{caller!r} or its parts, not both")


def check(experiment: Experiment, *, processes: str, size: str | None, scaling: str, level: float,
          target: str | Mapping[str, float] | float | None, metric: str | None = None) -> dict[str, float]:
    """Check the request against the measurements (before any modelling); return the target point.

    Raises :class:`InputError` with what to do for an unknown scaling, a level outside (0, 1), an unknown
    or doubled parameter, a parameter that varies but is neither the processes nor the size, a single process
    count, negative values of ``metric`` (default: every metric of ``experiment``), and a target that is not
    a process count or point, or is below the largest measured process count.
    """
    if scaling not in SCALINGS:
        raise InputError(f"unknown scaling {scaling!r}; expected strong or weak")
    level = share_argument(level, "level", "80%")
    parameters = tuple(experiment.parameter_names)
    if size is not None and not isinstance(size, str):
        raise InputError(f"{argument('size')}: expected a parameter name (one of {', '.join(parameters)}), got "
                         f"{described(size)}")
    if size is not None and size not in parameters:
        fixed = ""
        if processes in parameters and len(parameters) == 1:
            fixed = (f" (a problem size that is the same in every run is no parameter: leave {argument('size')} "
                     f"out, and the analysis takes the size as fixed)")
        raise InputError(f"{argument('size', size)}: no such parameter; the parameters are "
                         f"{', '.join(parameters)}{fixed}")
    if size == processes:
        raise InputError(f"{argument('size', size)} is the process count too: name the problem-size parameter")
    if len(experiment) == 0:
        raise InputError("no measurements to analyse")
    low = experiment.coordinates.min(axis=0)
    high = experiment.coordinates.max(axis=0)
    others = [name for name in parameters if name not in (processes, size)]
    varying = [name for name in others if low[parameters.index(name)] != high[parameters.index(name)]]
    if varying:
        raise InputError(f"parameter {', '.join(varying)} varies but is neither the processes nor the size "
                         f"(--processes, --size): name it as the size, or select runs where it is fixed")
    k = parameters.index(processes)
    p0 = float(low[k])
    if p0 <= 0:
        raise InputError(f"the smallest measured {processes} is {format_value(p0)}; process counts must be positive")
    if high[k] == p0:
        raise InputError(f"{processes} has one measured value ({format_value(p0)}): efficiency needs several "
                         f"process counts")
    point = _target(target, parameters, processes, largest_point(experiment))
    _refuse_negative(experiment, metric)
    return point


def _refuse_negative(experiment: Experiment, metric: str | None) -> None:
    """An InputError naming the input and the series (call path and metric) with negative values.

    Times and resources cannot be negative, and ``W``, ``O`` and ``E`` of a total that holds such a series mean
    nothing; as the total is a sum over call paths (of every call path for exclusive values), leaving a series
    out would change the whole program's numbers, so the user chooses what to leave out (``--callpath``).
    """
    rows = np.ones(len(experiment), dtype=bool)
    if metric is not None:
        rows = np.array([m.name == metric for m in experiment.metrics])[experiment.metric_index]
    negative = rows & (experiment.value < 0)
    if not negative.any():
        return
    series = sorted({(int(c), int(m)) for c, m in zip(experiment.callpath_index[negative],
                                                       experiment.metric_index[negative])})
    names = [f"{experiment.callpaths[c].name} [{experiment.metrics[m].name}]" for c, m in series]
    named = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    i = int(np.flatnonzero(negative)[np.argmin(experiment.value[negative])])
    where = format_point({name: float(v) for name, v in zip(experiment.parameter_names, experiment.coordinates[i])})
    source = f"{experiment.source}: " if experiment.source else ""
    one = len(names) == 1
    smallest = format_number(float(experiment.value[i]), False)  # four digits (it printed -1.4048314138643199)
    raise InputError(f"{source}{named} {'has' if one else 'have'} negative values (the smallest, "
                     f"{smallest}, at {where}): times and resources must be zero or "
                     f"positive; leave {'it' if one else 'them'} out with callpaths=GLOB (--callpath GLOB) or choose "
                     f"metric=NAME (--metric NAME)")


def _target(target, parameters, processes, largest) -> dict[str, float]:
    """The target point: the process count :data:`TARGET_FACTOR` times the largest measured and the other
    parameters at their largest measured value, unless given."""
    defaults = {**largest, processes: largest[processes] * TARGET_FACTOR}
    if target is None or (isinstance(target, str) and not target.strip()):
        return defaults
    if isinstance(target, bool) or not isinstance(target, (str, numbers.Real, Mapping)):
        raise InputError(f"{argument('target')}: expected a process count, 'P=V,...' or a mapping such as "
                         f"{{{processes!r}: {format_value(defaults[processes])}}}, got {described(target)}")
    if isinstance(target, numbers.Real):
        target = {processes: float(target)}
    elif isinstance(target, str) and "=" not in target:
        if not is_number(target):
            raise InputError(f"{argument('target', target)}: expected a process count or 'P=V,...' such as "
                             f"{processes}={format_value(defaults[processes])}")
        target = f"{processes}={target.strip()}"  # a bare number is the process count
    point = parse_target(target, parameters, defaults=defaults)
    if point[processes] < largest[processes]:
        raise InputError(f"target {processes}={format_value(point[processes])} is below the largest measured "
                         f"{processes}={format_value(largest[processes])}: give a target of at least "
                         f"{format_value(largest[processes])}")
    return point


def _outside_notes(target: Mapping[str, float], processes: str, parameters: Sequence[str], low: np.ndarray,
                   high: np.ndarray) -> list[str]:
    """A note for each parameter but the process count whose target value lies below the measured ones."""
    notes = []
    for j, name in enumerate(parameters):
        if name != processes and target[name] < low[j]:
            measured = (f"measured {format_value(float(low[j]))}–{format_value(float(high[j]))}" if high[j] > low[j]
                        else "the only one measured")
            notes.append(f"{name}={format_value(target[name])} is below the smallest measured "
                         f"{name}={format_value(float(low[j]))} ({measured}): the values at it extrapolate the models "
                         f"to a smaller {name}")
    return notes


def _measured_resource(result: Efficiency, experiment: Experiment) -> dict[float, float]:
    """Measured ``C`` of the total at each measured process count (at the reference size): per call path, its
    repetitions reduced as for the models (``ModelSet.measure``: mean, median, minimum or maximum)."""
    measure = result.model_set.measure if result.model_set.measure in REDUCERS else "mean"
    names = {m.callpath for m in result.total}
    k = result.parameters.index(result.processes)
    metric_rows = np.array([m.name == result.metric for m in experiment.metrics])[experiment.metric_index]
    at_reference = np.ones(len(experiment), dtype=bool)
    for j, name in enumerate(result.parameters):
        if name != result.processes:
            at_reference &= experiment.coordinates[:, j] == result.reference[name]
    sums: dict[float, list[float]] = {}
    for callpath in names:
        code = next(i for i, c in enumerate(experiment.callpaths) if c.name == callpath)
        rows = metric_rows & at_reference & (experiment.callpath_index == code)
        for p in np.unique(experiment.coordinates[rows, k]):
            at_p = rows & (experiment.coordinates[:, k] == p)
            repetitions = experiment.value[at_p][None, None, :]
            sums.setdefault(float(p), []).append(float(reduce_repetitions(repetitions, measure)[0, 0]))
    return {p: float(np.sum(v)) for p, v in sums.items() if len(v) == len(names)}


def _rows(result: Efficiency, experiment: Experiment) -> list[ScalingRow]:
    k = result.parameters.index(result.processes)
    measured = sorted({float(v) for v in experiment.coordinates[:, k]})
    ps = measured + ([result.target[result.processes]] if result.target[result.processes] not in measured else [])
    X = result.points(np.array(ps))
    C, W, E = efficiency_values(result.total, X, k, result.p0, result.scaling)
    observed = _measured_resource(result, experiment)
    c0 = observed.get(result.p0)
    rows = []
    for i, p in enumerate(ps):
        e_measured = math.nan
        if c0 is not None and p in observed and observed[p] > 0:
            w = c0 * (p / result.p0 if result.scaling == "weak" else 1.0)
            e_measured = w / observed[p]
        rows.append(ScalingRow(
            point={name: float(X[i, j]) for j, name in enumerate(result.parameters)}, measured=p in observed,
            time=float(C[i] / p), resource=float(C[i]), work=float(W[i]), overhead=float(C[i] - W[i]),
            efficiency=float(E[i]), speedup=float(p / result.p0 * E[i]), measured_efficiency=e_measured))
    return rows


def _undefined(result: Efficiency, experiment: Experiment) -> str:
    """Why ``E = W / C`` is undefined (``W = C = 0``) from ``p0`` to the target; empty when it is defined."""
    k = result.parameters.index(result.processes)
    grid = np.geomspace(result.p0, result.target[result.processes], 64)
    if np.isfinite(efficiency_values(result.total, result.points(grid), k, result.p0, result.scaling)[2]).any():
        return ""
    names = {m.callpath for m in result.total}
    rows = np.array([c.name in names for c in experiment.callpaths])[experiment.callpath_index]
    rows &= np.array([m.name == result.metric for m in experiment.metrics])[experiment.metric_index]
    total = " + ".join(m.callpath for m in result.total)
    if rows.any() and np.all(experiment.value[rows] == 0):
        return f"E is undefined: every measured value of {total} [{result.metric}] is zero"
    return f"E is undefined: the model of {total} is zero, so W = C = 0"


def _largest_p(result: Efficiency) -> tuple[float | None, str]:
    """Where ``E`` first falls below the level at the reference problem size."""
    k = result.parameters.index(result.processes)
    hi = result.target[result.processes] * P_BEYOND

    def gap(p):
        return efficiency_values(result.total, result.points(p), k, result.p0, result.scaling)[2] - result.level

    end = _vanishes(result, hi)  # beyond it W / C is no efficiency: search no further
    falls = [p for p, after in crossings(gap, result.p0 * (1 + 1e-9), hi if end is None else end) if after < 0]
    where = _size_text(result)
    if falls:
        return falls[0], f"E falls below {result.level:g} at {result.processes}={_number(falls[0])}{where}"
    first = gap(np.array([result.p0 * (1 + 1e-6)]))[0]
    if first < 0:
        return result.p0, f"E is below {result.level:g} right above {result.processes}={format_value(result.p0)}{where}"
    if end is not None:
        return None, (f"E stays at or above {result.level:g} up to {result.processes}={_number(end)}{where}, where the "
                      f"model of the total's C = {result.processes}·T falls to zero: beyond it the model predicts no "
                      f"time, so where E falls below {result.level:g} is unknown")
    return None, (f"E stays at or above {result.level:g} up to {result.processes}={_number(hi)}{where}; searched no "
                  f"further")


def _vanishes(result: Efficiency, hi: float) -> float | None:
    """The smallest process count from ``p0`` up to ``hi`` at which the model of the total's ``C = p·T`` falls to
    zero or below (at the reference problem size); None where it stays positive."""
    def consumption(p):
        return sum_predict(result.total, result.points(p))

    if consumption(np.array([result.p0]))[0] <= 0:
        return result.p0
    return next((p for p, after in crossings(consumption, result.p0, hi) if after < 0), None)


def _vanishing_notes(result: Efficiency) -> list[str]:
    """A note where the model of the total's ``C`` falls to zero or below by the target, and one naming the call
    paths whose model is negative at the target: a time of zero or less is no time, so ``E`` there is n/a."""
    p = result.processes
    notes = []
    end = _vanishes(result, result.target[p])
    if end is not None:
        notes.append(f"the model of the total's C = {p}·T falls to zero or below from {p}={_number(end)} on (at the "
                     f"target, {_number(result.rows[-1].resource)}): a time of zero or less is no time, so E and S "
                     f"there are n/a; the model is not to be trusted beyond the data")
    whole = [m.callpath for m in result.total] if len(result.total) == 1 else []
    negative = [c for c in result.callpaths if c.work_target + c.overhead_target < 0 and c.callpath not in whole]
    if negative:
        named = ", ".join(f"{c.callpath} [{c.metric}] ({_number(c.work_target + c.overhead_target)})"
                          for c in negative[:3]) + (f" and {len(negative) - 3} more" if len(negative) > 3 else "")
        notes.append(f"at {p}={format_value(result.target[p])} the model of C = {p}·T is negative for {named}: a "
                     f"time below zero is no time, so E there is n/a")
    return notes


def _reconciled_notes(result: Efficiency) -> list[str]:
    """A note naming the call paths whose overhead at the target is their modelled children's
    (:attr:`CallpathOverhead.modelled_overhead`), with their model's overhead and its uncertainty."""
    taken = [c for c in result.callpaths if math.isfinite(c.modelled_overhead)]
    if not taken:
        return []
    named = ", ".join(f"{c.callpath} (model {uncertain(c.modelled_overhead, c.overhead_uncertainty)}, children "
                      f"{_number(c.overhead_target)})" for c in taken[:3]) + (
        f" and {len(taken) - 3} more" if len(taken) > 3 else "")
    its = "its" if len(taken) == 1 else "their"
    total = {m.callpath for m in result.total}
    table = ("; the scaling table, the largest p at the level and the iso-efficiency function take the total's "
             "children's overhead too" if any(c.callpath in total for c in taken) else "")
    return [f"at {result.processes}={format_value(result.target[result.processes])} the model of "
            f"{format_count(len(taken), 'call path')} cannot tell {its} overhead from {its} {UNCERTAINTY:.0%} "
            f"uncertainty (the choice of model included; a model without a term in {result.processes} tells none) and "
            f"{its} modelled children's add up to more, so {its} overhead is taken as theirs: {named}{table}"]


def _size_text(result: Efficiency) -> str:
    if result.size is None:
        return ""
    return f" for {result.size}={format_value(result.reference[result.size])}"


def _isoefficiency(result: Efficiency, low: np.ndarray, high: np.ndarray,
                   fit: Callable[[Experiment], ModelSet] | None) -> tuple[Isoefficiency | None, str]:
    """Solve ``E(p, n) = level`` for ``n`` at process counts up to the target, then model the solutions."""
    k = result.parameters.index(result.processes)
    s = result.parameters.index(result.size)
    n_low, n_high = float(low[s]), float(high[s])
    lo, hi = n_low * N_BELOW, n_high * N_ABOVE
    p_target = result.target[result.processes]
    ps = result.p0 * (p_target / result.p0) ** (np.arange(1, ISO_POINTS + 1) / ISO_POINTS)
    points: list[tuple[float, float | None]] = []
    kinds: list[str] = []  # per p: "at least", "at most" (n must be above / below the solution), "any", "none"
    for p in ps:
        def gap(n, p=p):
            X = result.points(np.full(np.shape(n), p), n)
            return efficiency_values(result.total, X, k, result.p0, result.scaling)[2] - result.level

        found = crossings(gap, lo, hi)
        if found:
            points.append((float(p), float(found[0][0])))
            kinds.append("at least" if found[0][1] > 0 else "at most")
        else:
            points.append((float(p), None))
            kinds.append("any" if gap(np.array([lo]))[0] >= 0 else "none")
    solved = [(p, n) for p, n in points if n is not None]
    searched = f"{result.size} from {_number(lo)} to {_number(hi)} searched"
    none_from = next((p for p, kind in zip(ps, kinds) if kind == "none"), None)
    if len(solved) < ISO_MIN_POINTS:
        if none_from is not None:
            return None, (f"no problem size keeps E at {result.level:g} from {result.processes}="
                          f"{_number(none_from)} on ({searched}): the overhead grows as fast in {result.size} as the "
                          f"work, or faster")
        return None, (f"E stays at or above {result.level:g} for every problem size ({searched}) up to "
                      f"{result.processes}={_number(p_target)}: no iso-efficiency constraint")
    notes = []
    directions = {kind for kind in kinds if kind in ("at least", "at most")}
    if directions == {"at most"}:
        notes.append(f"E falls as {result.size} grows: {result.size} must stay at or below n(p) to keep E at "
                     f"{result.level:g}")
    elif len(directions) > 1:
        notes.append(f"E is not monotonic in {result.size}: the first solution from the smallest size is given")
    if none_from is not None:
        notes.append(f"no problem size keeps E at {result.level:g} from {result.processes}={_number(none_from)} on "
                     f"({searched})")
    free = sum(kind == "any" for kind in kinds)
    if free:
        notes.append(f"at {free} process count{'s' if free > 1 else ''} every size keeps the level")
    model = None
    growth = None
    if fit is not None:
        iso = Experiment.from_columns([result.processes], callpath="isoefficiency", metric=result.size,
                                      coordinates=np.array([[p] for p, _ in solved]),
                                      value=np.array([n for _, n in solved]), source="isoefficiency",
                                      reader="solved")
        fitted = fit(iso)
        if fitted.models:
            model = fitted.models[0]
            growth = growth_class(model)
            notes += _misfit_notes(result, model, solved)
    note = "; ".join(notes)
    return Isoefficiency(model, growth, points, note), note


def _misfit_notes(result: Efficiency, model: Model, solved: Sequence[tuple[float, float]]) -> list[str]:
    """A note where the PMNF model of the solved iso-efficiency points misses one by more than :data:`MISFIT` of it
    (``n(p)`` grows faster than any PMNF function, or bends as none does), naming the point it misses most."""
    p = np.array([x for x, _ in solved])
    n = np.array([y for _, y in solved])
    with np.errstate(all="ignore"):
        predicted = np.asarray(model.predict(p[:, None]), dtype=np.float64).reshape(-1)
        miss = np.where(np.isfinite(predicted), np.abs(predicted - n) / n, np.inf)
    worst = int(np.argmax(miss))
    if not miss[worst] > MISFIT:
        return []
    return [f"the PMNF model of {result.size}({result.processes}) misses the solved points by more than "
            f"{MISFIT:.0%}: at {result.processes}={_number(p[worst])} it gives {_number(predicted[worst])} for the "
            f"solved {_number(n[worst])}, so its formula and growth describe them only roughly (the solved points are "
            f"exact)"]


def _callpaths(result: Efficiency, models: Sequence[Model], kind: str) -> list[CallpathOverhead]:
    k = result.parameters.index(result.processes)
    X = np.array([[result.target[name] for name in result.parameters]])
    C = np.array([float(m.predict(X)[0]) for m in models])
    X0 = X.copy()
    X0[:, k] = result.p0
    W = np.array([float(m.predict(X0)[0]) for m in models])
    if result.scaling == "weak":
        W = W * X[0, k] / result.p0
    overhead = C - W
    found = {id(m): u for m, u in zip(result.model_set.models, uncertainties(result.model_set))}
    factor = X[0, k] / result.p0 if result.scaling == "weak" else 1.0
    half = np.array([overhead_half_width(found.get(id(m)), C[i], X, X0, factor) for i, m in enumerate(models)])
    fit_half = np.array([overhead_half_width(found.get(id(m)), C[i], X, X0, factor, with_choice=False)
                         for i, m in enumerate(models)])
    parent, _, ancestor, depth = tree_links(models)
    o_models = [overhead_model(m, result.processes, result.p0, result.scaling) for m in models]
    # a model without a term in p says nothing of the overhead: it found none above the noise of its work
    blind = np.array([o is not None and not o.terms and o.constant == 0 for o in o_models])
    overhead[blind] = 0.0  # exactly (C − W from two predictions leaves crumbs such as -2.91e-11)
    E = work_share(W, np.where(blind, W, C))
    modelled = (_reconcile(overhead, np.where(blind, np.inf, half), fit_half, ancestor, depth) if kind == "inclusive"
                else np.full(len(models), np.nan))
    E = np.where(np.isnan(modelled), E, work_share(W, W + overhead))
    total_overhead = float(np.sum([overhead[i] for i, m in enumerate(models) if any(m is t for t in result.total)]))
    result.whole_overhead = total_overhead
    subtree = overhead.copy()
    own = overhead.copy()
    own_variance = np.nan_to_num(fit_half * fit_half)  # a model without interval data: taken as exact
    own_choice_variance = np.nan_to_num(half * half)
    if kind == "exclusive":
        for level in np.unique(depth)[::-1]:
            rows = np.flatnonzero((depth == level) & (ancestor >= 0))
            np.add.at(subtree, ancestor[rows], subtree[rows])
    else:
        rows = np.flatnonzero(ancestor >= 0)
        np.add.at(own, ancestor[rows], -overhead[rows])
        own[~np.isnan(modelled)] = 0.0  # its children's overhead, exactly (the sum less its parts leaves crumbs)
        np.add.at(own_variance, ancestor[rows], own_variance[rows].copy())
        np.add.at(own_choice_variance, ancestor[rows], own_choice_variance[rows].copy())
    own_half = np.where(np.isnan(fit_half), math.nan, np.sqrt(own_variance))
    own_choice_half = np.where(np.isnan(half), math.nan, np.sqrt(own_choice_variance))
    with np.errstate(divide="ignore", invalid="ignore"):  # no share of an overhead that is zero or negative
        share = subtree / total_overhead if total_overhead > 0 else np.full(len(models), np.nan)
        own_share = own / total_overhead if total_overhead > 0 else np.full(len(models), np.nan)
    reasons = _inconsistencies(models, kind, overhead, subtree, own, total_overhead, parent, ancestor)
    o_models = _reconciled_overhead_models(o_models, modelled, ancestor, depth)
    own_models = own_overhead_models(o_models, ancestor) if kind == "inclusive" else o_models
    entries = []
    for i, m in enumerate(models):
        o_model = o_models[i]
        entries.append(CallpathOverhead(
            callpath=m.callpath, metric=m.metric, model=m, work_target=float(W[i]), overhead_target=float(overhead[i]),
            overhead_share_target=float(share[i]), own_overhead_share_target=float(own_share[i]),
            overhead_model=o_model, overhead_growth=None if o_model is None else growth_class(o_model),
            overhead_degree=(math.nan, math.nan) if o_model is None else growth_degree(o_model),
            efficiency_target=float(E[i]), inconsistency=reasons[i], overhead_uncertainty=float(half[i]),
            modelled_overhead=float(modelled[i]), own_overhead=float(own[i]),
            own_overhead_uncertainty=float(own_half[i]),
            own_overhead_uncertainty_with_choice=float(own_choice_half[i]),
            own_overhead_growth=None if own_models[i] is None else growth_class(own_models[i])))
    aside = set(_set_aside(entries, result.total, result.total_given))  # last, as the limiter passes them over
    entries.sort(key=lambda e: (e.callpath in aside, not e.consistent, not math.isfinite(e.own_overhead_share_target),
                                -e.own_overhead_share_target if math.isfinite(e.own_overhead_share_target) else 0.0))
    return entries


def _reconcile(overhead: np.ndarray, half: np.ndarray, fit_half: np.ndarray, ancestor: np.ndarray,
               depth: np.ndarray) -> np.ndarray:
    """With inclusive values, where a call path's modelled children's overhead adds up to more than its own model's,
    by more than their fits' uncertainty (``fit_half``, in quadrature: their measurements show it) and less than
    its model's (``half``, :func:`overhead_half_width`; infinite for a model without a term in ``p``, which tells
    no overhead at all), its overhead becomes theirs, in place: its model cannot tell the overhead from the noise of
    its work (a root whose compute time is a hundred times its communication), while theirs can.  Deepest first, so
    a parent sees its children's overhead as reconciled.  Returns, per call path, its model's own overhead where it
    was replaced, else NaN."""
    modelled = np.full(len(overhead), np.nan)
    for level in np.unique(depth)[::-1]:
        for i in np.flatnonzero(depth == level):
            children = ancestor == i
            below = float(overhead[children].sum())  # 0 without modelled children
            shown = math.sqrt(float(np.sum(np.nan_to_num(fit_half[children]) ** 2)))
            short = below - overhead[i]
            if below > 0 and short > max(CONSISTENT * below, shown) and short <= np.nan_to_num(half[i]):
                modelled[i], overhead[i] = overhead[i], below
    return modelled


def _reconciled_total(result: Efficiency, models: Sequence[Model]) -> list[Model]:
    """The total's models, where one's overhead at the target is its modelled children's
    (:attr:`CallpathOverhead.modelled_overhead`), with their overhead model in place of its own: ``C − O + O_children``
    term by term, so that the scaling table, the largest p at the level and the iso-efficiency function have the
    overhead the table of call paths has.  A model that is not PMNF, or has a child that is not, stays as it is."""
    entries = {c.callpath: c for c in result.callpaths}
    total = []
    for m in result.total:
        entry = entries[m.callpath]
        own = overhead_model(m, result.processes, result.p0, result.scaling)
        taken = entry.overhead_model
        if not math.isfinite(entry.modelled_overhead) or own is None or taken is None:
            total.append(m)
            continue
        terms = list(m.terms) + [dataclasses.replace(t, coefficient=-t.coefficient) for t in own.terms] + list(
            taken.terms)
        combined = combine(m.callpath, m.metric, m.parameters, m.constant - own.constant + taken.constant, terms)
        total.append(dataclasses.replace(m, constant=combined.constant, terms=combined.terms))
    return total


def _reconciled_overhead_models(overheads: Sequence[Model | None], modelled: np.ndarray, ancestor: np.ndarray,
                                depth: np.ndarray) -> list[Model | None]:
    """The overhead models, where a call path's overhead is its modelled children's (``modelled`` finite,
    :func:`_reconcile`) the sum of theirs (as reconciled, deepest first); None where one of them is None."""
    found = list(overheads)
    for level in np.unique(depth)[::-1]:
        for i in np.flatnonzero((depth == level) & np.isfinite(modelled)):
            parts = [found[j] for j in np.flatnonzero(ancestor == i)]
            o = found[i]
            found[i] = None if o is None or any(part is None for part in parts) else combine(
                o.callpath, o.metric, o.parameters, sum(part.constant for part in parts),
                [t for part in parts for t in part.terms])
    return found


def own_overhead_models(overheads: Sequence[Model | None], ancestor: np.ndarray) -> list[Model | None]:
    """Per call path of a call tree with inclusive values, its own overhead as a PMNF model: its overhead less
    the overheads of the call paths whose nearest modelled ancestor it is (``ancestor``, of
    :func:`~extrap_plugins.extrapolation.tree_links`), term by term; None where one of these is None."""
    own: list[Model | None] = []
    for i, o in enumerate(overheads):
        children = [overheads[j] for j in np.flatnonzero(ancestor == i)]
        if o is None or any(c is None for c in children):
            own.append(None)
            continue
        terms = list(o.terms) + [dataclasses.replace(t, coefficient=-t.coefficient) for c in children for t in c.terms]
        own.append(combine(o.callpath, o.metric, o.parameters, o.constant - sum(c.constant for c in children), terms))
    return own


def _inconsistencies(models: Sequence[Model], kind: str, overhead: np.ndarray, subtree: np.ndarray, own: np.ndarray,
                     total_overhead: float, parent: np.ndarray, ancestor: np.ndarray) -> list[str]:
    """Per call path, why its overhead at the target is inconsistent (:attr:`CallpathOverhead.inconsistency`).

    With inclusive values a call path's overhead is at most its parent's (more by what the negative overhead of its
    siblings, which scale superlinearly, takes off the parent's), and its modelled children's add up to at most its
    own (a call path without modelled children may have a negative overhead, and so a negative share); with either
    kind it is at most the whole program's (``total_overhead``).  Each is allowed :data:`CONSISTENT` of the whole
    program's overhead for rounding (a parent whose model cannot tell its overhead from its uncertainty has its
    children's already: :func:`_reconcile`).  With inclusive values, a call path's own
    overhead is its overhead less its modelled children's, so a call path with an inconsistent child is
    inconsistent too.  Nothing is checked where the whole program has no overhead (there are no shares then).
    """
    reasons = [""] * len(models)
    if not total_overhead > 0:
        return reasons
    slack = CONSISTENT * total_overhead
    tree = kind == "inclusive"
    children: dict[int, list[int]] = {}  # the modelled children of each call path, in order
    for j, up in enumerate(ancestor.tolist()):
        if up >= 0:
            children.setdefault(up, []).append(j)
    negative = np.minimum(overhead, 0.0)
    # siblings that scale superlinearly (negative overhead) take their part off the parent's overhead
    children_negative = {up: float(negative[js].sum()) for up, js in children.items()}
    for i in range(len(models)):
        up = int(ancestor[i])
        faster = -(children_negative[up] - negative[i]) if up >= 0 else 0.0
        if tree and up >= 0 and overhead[i] > overhead[up] + faster + slack:
            whose = "its parent's" if parent[i] == up else f"that of {models[up].callpath}, which calls it"
            reasons[i] = f"its overhead, {_number(overhead[i])}, exceeds {whose}, {_number(overhead[up])}"
        elif subtree[i] > total_overhead + slack:
            reasons[i] = f"its overhead, {_number(subtree[i])}, exceeds the whole program's, {_number(total_overhead)}"
        elif tree and own[i] < -slack and i in children:  # without children: its overhead is negative
            reasons[i] = (f"its modelled children's overhead, {_number(overhead[i] - own[i])}, exceeds its own, "
                          f"{_number(overhead[i])}")
    if tree:  # an own overhead is the overhead less the children's: it is no better than theirs
        for i in range(len(models)):
            inconsistent = [j for j in children.get(i, ()) if reasons[j]]
            if inconsistent and not reasons[i]:
                reasons[i] = (f"its own overhead, {_number(own[i])}, is its overhead less its modelled children's, "
                              f"and that of {models[inconsistent[0]].callpath} is inconsistent")
    return reasons


def _number(value: float) -> str:
    return format_number(float(value), False)


def uncertain(value: float, half_width: float) -> str:
    """``9173 ± 514.4``: a value with half the width of its interval; the value alone where that is unknown, or
    below :data:`CONSISTENT` of the value (it would not change the value's four digits: rounding in a fit to exact
    measurements).

    >>> uncertain(9173.2, 514.4), uncertain(5.0, math.nan), uncertain(2555.0, 3e-8)
    ('9173 ± 514.4', '5', '2555')
    """
    if not (math.isfinite(half_width) and half_width > CONSISTENT * abs(value)):
        return _number(value)
    return f"{_number(value)} ± {_number(half_width)}"


def overhead_half_width(u: Uncertainty | None, value: float, X: np.ndarray, X0: np.ndarray, factor: float,
                        with_choice: bool = True, level: float = UNCERTAINTY) -> float:
    """Half the width of the ``level`` interval of a call path's overhead ``O = C(X) − factor · C(X0)`` (``X0`` at
    ``p0``; ``factor`` is ``p / p0`` for weak scaling, else 1), ``value`` being ``C(X)``; NaN where the model has
    no interval data (``u`` None, or segmented).

    The least-squares part is that of the difference: ``t · s · sqrt(dᵀ (AᵀA)⁻¹ d)`` with ``d = a(X) − factor ·
    a(X0)``, so a term that cancels in ``O`` (one without ``p``, for strong scaling) adds no uncertainty; the
    model-choice part is that of ``C(X)`` (at ``p0`` the model is within the measurements), added in quadrature,
    as for the prediction intervals (:meth:`~extrap_plugins.extrapolation.Uncertainty.half_width`); without
    ``with_choice`` the least-squares part alone."""
    from scipy.special import ndtri, stdtrit

    if u is None or isinstance(u, SegmentedUncertainty):
        return math.nan
    d = (design_matrix(u.columns, u.parameters, X) - factor * design_matrix(u.columns, u.parameters, X0)) / u.scale
    leverage = max(float(np.einsum("ni,ij,nj->n", d, u.gram_inverse, d)[0]), 0.0)
    fit = float(stdtrit(u.dof, 0.5 + level / 2.0)) * math.sqrt(u.residual_variance * leverage) * u.unit
    choice = float(ndtri(0.5 + level / 2.0)) * abs(value) * float(u.choice(X)[0]) if with_choice else 0.0
    return math.hypot(fit, choice)


def inconsistencies(entries: Sequence[CallpathOverhead], shown: int = 3) -> str:
    """``A (its overhead, ..., exceeds its parent's, ...), B (...) and 4 more``: the first ``shown`` entries with
    why their overhead is inconsistent."""
    named = ", ".join(f"{e.callpath} ({e.inconsistency})" for e in entries[:shown])
    return named + (f" and {len(entries) - shown} more" if len(entries) > shown else "")


def _limits(entry: CallpathOverhead) -> bool:
    """Whether a call path can be the limiter: it has a share of the overhead, above 0."""
    return math.isfinite(entry.own_overhead_share_target) and entry.own_overhead_share_target > 0


def _set_aside(entries: Sequence[CallpathOverhead], total: Sequence[Model], given: bool) -> list[str]:
    """:attr:`Efficiency.set_aside` of these call paths, in their order."""
    names = {m.callpath for m in total} if given else set()
    if not any(_limits(e) and e.callpath not in names for e in entries):
        return []
    return [e.callpath for e in entries if e.callpath in names]


def _level_notes(result: Efficiency) -> list[str]:
    """A note where the measured E and the models' E lie on opposite sides of the level at a measured process
    count: there the largest p at the level, which the models give, contradicts the measurements."""
    p, level = result.processes, result.level
    rows = [r for r in result.rows if math.isfinite(r.measured_efficiency) and math.isfinite(r.efficiency)
            and (r.measured_efficiency < level) != (r.efficiency < level)]
    if not rows:
        return []
    named = ", ".join(f"at {p}={format_value(r.point[p])} E measured {r.measured_efficiency:.4f} "
                      + (f"< {level:g} ≤ E of the models {r.efficiency:.4f}" if r.measured_efficiency < level
                         else f"≥ {level:g} > E of the models {r.efficiency:.4f}") for r in rows[:3])
    more = f" and {len(rows) - 3} more" if len(rows) > 3 else ""
    return [f"the measurements and the models disagree about the level {level:g}: {named}{more}; the largest {p} "
            f"at the level comes from the models and is only as good as their fit to the measurements"]


def _superlinear_notes(result: Efficiency) -> list[str]:
    """A note when ``E > 1`` in the scaling table: what superlinear speedup means, and whether the measurements
    show it."""
    p = result.processes
    above = [r for r in result.rows if math.isfinite(r.efficiency) and r.efficiency > 1 + SUPERLINEAR]
    if not above:
        return []
    top = max(above, key=lambda r: r.efficiency)
    measured = [r for r in result.rows if math.isfinite(r.measured_efficiency)]
    seen = max(measured, key=lambda r: r.measured_efficiency) if measured else None
    text = (f"E > 1 (up to {top.efficiency:.4g} at {p}={format_value(top.point[p])}): superlinear speedup — the "
            f"model's time falls faster than 1/{p}, so C = {p}·T falls below the work and the overhead O = C − W is "
            f"negative")
    if seen is None:
        return [text + "; no measured E to check it against: the model is not to be trusted beyond the data"]
    measured_text = f"E measured {'up to' if seen.measured_efficiency > 1 + SUPERLINEAR else 'at most'} " \
                    f"{seen.measured_efficiency:.4g} at {p}={format_value(seen.point[p])}"
    if seen.measured_efficiency > 1 + SUPERLINEAR:
        return [text + f"; the measurements show it too ({measured_text}): cache effects (each process's share of "
                       f"the data fitting in faster memory) can do this within the data, but they end, so the model "
                       f"is not to be trusted beyond the measured {p}"]
    return [text + f"; the measurements do not ({measured_text}): the model is not to be trusted beyond the data"]


def efficiency(
    data: str | os.PathLike | Sequence[str | os.PathLike] | Experiment | ModelSet,
    *,
    processes: str | None = None,
    size: str | None = None,
    scaling: str = "strong",
    level: float | str = 0.8,
    target: str | Mapping[str, float] | float | None = None,
    metric: str | None = None,
    values: str = "auto",
    total: str | Sequence[str] = (),
    callpaths: str | Iterable[str] = (),
    reader: str | None = None,
    reader_options: Mapping[str, Any] | None = None,
    modeler: str = "default",
    measure: str = "mean",
    host: PluginHost | None = None,
    **options: Any,
) -> Efficiency:
    """Speedup, efficiency and iso-efficiency per call path.

    ``data`` is what :func:`read` reads, an Experiment of times, or a ModelSet of
    times (as :func:`compare` takes; with its measurements, ``ModelSet.experiment``).
    From measurements the resource consumption ``C = p · T`` of every call path is
    modelled with ``modeler`` (``options`` go to it, as in :func:`model`); a
    ModelSet's models of ``T`` are taken as they are, times ``p`` term by term,
    and ``modeler`` and ``options`` only model the iso-efficiency function.
    ``metric`` defaults to :func:`default_metric` (``time``, else the time metric that
    averages over the processes; a note names it).  ``size`` names the problem-size
    parameter (total for ``scaling="strong"``, per process for ``"weak"``); without it
    the size is fixed (for weak scaling, the same per process in every run) and there
    is no iso-efficiency function; ``level`` is a share, ``0.8`` or ``"80%"``;
    ``total`` names the call paths whose sum is the program (default: the roots of
    the call tree, or every call path for exclusive values).  ``total`` and
    ``callpaths`` may each be one name.  Returns an :class:`Efficiency` (printed, its
    text report); :func:`extrap_plugins.reports.export_report` writes it as text,
    CSV, JSON or HTML.
    """
    host = host or get_host()
    if metric is not None and not isinstance(metric, str):
        raise InputError(f"{argument('metric')}: expected one metric name, got {described(metric)}")
    level = share_argument(level, "level", "80%")
    total = names_argument(total, "total")
    callpaths = names_argument(callpaths, "callpaths")
    metrics = (metric,) if metric else ()
    if isinstance(data, (ModelSet, Experiment)):
        refuse_reading_options("efficiency", reader=reader, reader_options=reader_options)
    given = None
    if isinstance(data, ModelSet):
        given = selected_models(data, "efficiency", metrics, callpaths)
        experiment = given.experiment
    else:
        experiment = experiment_of(data, reader, reader_options, metrics, callpaths, host, "efficiency")
    chosen = ""
    if not metric and len(experiment.metrics) > 1:  # model only the metric analysed
        metric, chosen = default_metric(experiment.metrics)
        experiment = experiment.select(metrics=[metric])
        if given is not None:
            given = selected_models(given, "efficiency", (metric,), callpaths)
    name = processes_name(experiment.parameter_names, processes)
    check(experiment, processes=name, size=size, scaling=scaling, level=level, target=target)  # fail fast
    if given is not None:  # the models of T as they are: C = p·T term by term
        model_set = resource_models(given, name)
    elif scaling == "weak":  # T is nearly flat and its terms add up: model T, then multiply by p
        model_set = resource_models(model(experiment, modeler, measure=measure, executor="serial", host=host,
                                          **options), name)
    else:  # n/p in T is n in C = p·T: model C, in positive exponents
        model_set = model(resource_experiment(experiment, name), modeler, measure=measure, executor="serial",
                          host=host, **options)

    def fit(solved: Experiment) -> ModelSet:
        fitted = model(solved, modeler, executor="serial", host=host, **options)
        if solved.value[-1] < solved.value[0] and "negative_exponents" not in options:  # falling: try p^-i too
            falling = model(solved, modeler, executor="serial", host=host, negative_exponents=True, **options)
            if falling.models[0].quality.smape < fitted.models[0].quality.smape:
                return falling
        return fitted

    result = analyse(model_set, processes=name, size=size, scaling=scaling, level=level, target=target,
                     metric=metric, values=values, total=total, fit=fit)
    result.notes[:0] = [note for note in (_stand_in_note(name, processes), chosen) if note]
    return result


def _stand_in_note(name: str, given: str | None) -> str:
    """A note where the only parameter is taken as the process count though it is not named like one."""
    if given or name.lower() in RESOURCE_NAMES:
        return ""
    return (f"{name} is taken as the process count, as it is the only parameter, though not named like one (p, ranks, "
            f"procs, jobsize, ...): if it is not the process count, the efficiency means nothing; "
            f"{argument('processes')} names the parameter")


def default_metric(metrics: Sequence[Metric]) -> tuple[str, str]:
    """The metric to analyse when none is named, and a note that says why it was chosen (empty for ``time``).

    The analysis needs the time of one process, ``T``, so that ``p · T`` is what the processes consume together.
    The rule: the only metric; else ``time`` (Extra-P's and Score-P's name); else, of the time metrics
    (``Metric.kind == "time"``, or where the kind is unknown a name with ``time``), the one that averages over the
    processes (a name with ``avg``, ``average`` or ``mean``, as Caliper's ``Avg time/rank``): a minimum or maximum
    over the processes does not add up over call paths, and a sum over them (Caliper's ``Total time``) is ``p · T``
    already; else the only time metric.  Anything else is ambiguous: an :class:`InputError` lists the candidates.

    >>> default_metric([Metric("Min time/rank", "sec", "time"), Metric("Avg time/rank", "sec", "time")])[0]
    'Avg time/rank'
    """
    names = [m.name for m in metrics]
    if len(names) == 1 or "time" in names:
        return ("time" if "time" in names else names[0]), ""
    times = [m.name for m in metrics if m.kind == "time" or (not m.kind and "time" in m.name.lower())]
    averages = [name for name in times if AVERAGE.search(name)]
    if len(averages) == 1:
        return averages[0], (f"metric {averages[0]!r} chosen, as no metric is named time: of the time metrics "
                             f"({', '.join(map(repr, times))}) it is the average over the processes, which times "
                             f"their count is the time they consume together (a minimum or maximum over them does "
                             f"not add up over call paths, a sum over them is that product already); "
                             f"{argument('metric')} chooses another")
    if len(times) == 1:
        return times[0], (f"metric {times[0]!r} chosen, as no metric is named time: it is the only time metric; "
                          f"{argument('metric')} chooses another")
    if times:
        why = (f"of the time metrics, {', '.join(map(repr, times))}, "
               + ("none" if not averages else f"more than one ({', '.join(map(repr, averages))})")
               + " is an average over the processes")
    else:
        why = f"no metric is a time ({', '.join(map(repr, names))})"
    raise InputError(f"which metric? none is named time and {why}: give {argument('metric')}, the time of one "
                     f"process (an average over the processes where there are several)")

