"""Where are the models uncertain?  Point selection by expected reduction of the interval at the target.

For every kernel (call path × metric) the uncertainty of its prediction at
the target point is represented by an *ensemble*: a set of deviations from
the model's prediction, evaluated at every candidate point and at the
target.  Two kinds of members make it up:

* **model choice** (jackknife): the modeler is run again with one measured
  point left out, for up to ``members`` points whose removal leaves every
  parameter all its measured values (so the refit searches the same
  hypotheses); each refit may choose other terms.  Their deviations, scaled by ``sqrt((n - 1) / L)`` (the jackknife
  variance for ``n`` points and ``L`` refits), say how much the choice of
  the model depends on single points — the uncertainty the least-squares
  interval does not see;
* **other selection rules** (query by committee, :data:`COMMITTEE`): the
  ``refining`` modeler and the cross-validation rule (``selection=cv``) fitted
  to the same data; where they disagree with the model, the data do not
  settle the choice of terms (the jackknife alone sees nothing on a design of
  lines, where almost no point can be left out);
* **noise** (wild bootstrap): the modeler refitted to the model plus sign-flipped
  residuals (:data:`REPLICATES`; every sign a fixed function of its measurement, so the
  same measurements give the same plan, whatever else is modelled beside them);
* **coefficients** (least squares): one member per eigenvector of the
  coefficient covariance ``s² (AᵀA)⁻¹`` of the model's terms
  (:func:`extrap_plugins.extrapolation.uncertainties`), so that the members'
  variance at any point is the usual confidence variance;
* **misfit**, on request (``assess(misfit=True)``; a Gaussian process over the
  model's relative residuals, :func:`_discrepancy_members`): where the measured
  means stray from the model by more than their noise (a step, a change of
  regime, outliers), the same misfit is expected at the target, and mostly a
  measurement near the target can say how large it is there.  A model that fits
  within the noise has none;
* **interaction**, on request (``assess(interaction=True)``, :func:`_interaction_members`): for every
  parameter, the largest factor ``(x / x0)^e`` on the model's other terms that the measured points cannot
  rule out -- what lines through a corner cannot see where those terms are small.

At a point already measured ``n`` times, the model-choice members (jackknife,
committee) deviate by 0 -- its value is known, so repeating it cannot tell them
apart -- and the noise members by at most the noise of the mean, ``σ²/n``: a
repetition narrows only that.  (Without this, the cheapest measured points
looked most informative per unit of cost and budgets went to repeating them.)

With ``D`` the deviations (rows: candidates and the target, relative to
the model's value at the target) and ``σ²(x)`` the relative variance of one
run's value at ``x``, measuring ``x`` is expected to shrink the variance at
the target by the linear-Gaussian (ensemble Kalman) update::

    reduction(x) = (D[x] · D[t])² / (|D[x]|² + σ²(x))

The selector takes the candidate of the largest sum of reductions over the
kernels that are not yet within tolerance, per unit of cost; to plan several
runs at once the ensembles are updated as if that run had been measured
(the square-root update ``D ← D (I − β dᵀd)``, ``d = D[x]``), and the next
run is chosen.  The interval at the target is ``± z·sqrt(|D[t]|²)`` (``z``
the normal quantile of the level); the stopping rule holds when it is within
the tolerance for every judged kernel.

**Calibration.**  The members are refits to the same few points, so they agree
more than the data allow (an under-dispersed ensemble; ensemble Kalman filters
inflate theirs for the same reason).  Each kernel's ensemble is therefore
inflated to at least the model's own confidence interval at the target (least
squares with the t quantile, plus the model-choice spread beyond the measured
range; its coverage is measured in the README's robust-models section).  The
difference is a member of its own that deviates at the target alone
(:func:`_floor_member`): it counts in the interval and the stopping rule, and
no run is expected to narrow it, since it is mostly the modeler's model-choice
spread, which more points move only by changing the modeler's evidence (until
session 43 the model-choice members took it, :func:`_inflated`, and promised
reductions that did not come).  Without the floor the rule held on single runs
while a prediction was 11 % off (``benchmarks/design-history.md``).  But where
candidates lie beyond the measured values towards the target (values added
with ``--param`` after a sweep, a target far out), a run there shortens the
extrapolation itself, and with it the spread the floor stands for: there the
floor is a ladder of members that such runs narrow (:func:`_floor_ladder`,
since session 52; before, the plan said a run at x = 1000 for a target at
x = 1940, measured up to 60, would narrow ±90.7 % only to ±90.0 %, and it
narrowed to ±6.7 %).

Why an ensemble over the model rather than a Gaussian process over the
values (Extra-P's GPR strategy, github extra-p/extrap-gpr): the quantity to
shrink is the error of the *model's* prediction at the target, which is
dominated by the choice of terms; a stationary GP over the values knows
neither the PMNF shape nor the target, so it spreads points where it is
unsure of the values (usually the expensive corner).  A GP over the model's
*residuals* (the misfit members) says where the model's form fails and how far
that failure reaches, and is empty where the form holds; it is measured beside
the default and not (yet) adopted.  ``benchmarks/design.py`` measures both
strategies.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np

from .errors import QualityWarning
from .experiment import Experiment
from .extrapolation import design_matrix, uncertainties
from .formatting import format_callpath, format_share
from .models import evaluate
from .modelers.base import binary_scale

__all__ = ["Kernel", "Assessment", "assess", "plan_runs", "PlannedRun", "default_target", "z_of", "choose_models"]

MEMBERS = 10
"""Refits with one point left out, at most (the points nearest the target first)."""
REPLICATES = 24
"""Wild-bootstrap refits (model choice under the measured noise).  24 rather than 8: fewer replicates leave the
ensemble's noise part a Monte Carlo estimate that moves plans from one draw of the signs to the next; 24 gained
on RELeARN and the held-out synthetic functions (``benchmarks/design-history.md``) for about 1.4 times the time per
step."""
COMMITTEE = (("refining", {}), ("default", {"selection": "cv"}))
"""Other model-choice rules fitted to the same data (query by committee): where they disagree with the model
beyond the measurements, the choice of terms is uncertain there."""
FLOORS = ("own", "members", "ladder")
"""How :func:`assess` widens an ensemble to the model's confidence interval (its ``floor`` argument)."""
FLOOR = "ladder"
"""The default of :func:`assess`'s ``floor``."""
EXACT_MISFIT = 1e-3
"""Where a kernel's runs agree to within this relative standard deviation (counts: bytes, messages, flops) and its
model reproduces them as closely (mean relative error), a model-choice member that misses a measured value by more
than this share of it is refuted by that measurement and left out: on an mpi4py stencil the exact
``64 + 640·n - 640·n/p`` of bytes sent was given ±393 % at the target by the committee's one-term fits, and the loop
spent its runs on it."""
NEGLIGIBLE = 1e-9
"""A run's expected reduction of a kernel's variance at the target below this share of it counts as none (the
half-width would shrink by a few parts in 10^10: rounding, not information)."""
MIN_SHARE = 0.01
"""Kernels below this share of their metric's largest value at the target, or of their own largest measured value,
are not judged (GPR's 1 % filter)."""
NOT_JUDGED = (f"zero (or not finite) at the target, or below {MIN_SHARE:.0%} of their metric's largest there and in "
              f"the measurements, or of their own largest measured value")
"""Why kernels are not judged, for the messages of ``suggest``."""
COPY_OF = "the same measurements as"
"""Why a kernel whose measurements equal a judged one's is not judged (it is, through that one)."""
MISFIT_LENGTH = 0.5
"""Correlation length of the misfit GP, in units of a parameter's log2 range (0.5: the misfit at one end of a
range says little about the other end)."""
ROUND_OFF = 1e-12
"""A relative misfit variance below this (a relative misfit of 10⁻⁶) is round-off, not misfit."""
LACK_OF_FIT = 0.95
"""Misfit members only where the residuals exceed the noise of the means at this level (lack-of-fit F test)."""


def z_of(level: float) -> float:
    """The two-sided normal quantile of ``level`` (1.96 for 0.95)."""
    from scipy.special import ndtri

    return float(ndtri(0.5 + level / 2.0))


@dataclass
class Kernel:
    """The uncertainty of one series' prediction at the target.

    ``deviations`` has shape (n_candidates + 1, n_members), relative to
    ``value`` (the last row is the target); ``noise`` (n_candidates,) is the
    relative variance of one run's value at each candidate.
    """

    callpath: str
    metric: str
    value: float
    """The model's prediction at the target."""
    deviations: np.ndarray
    noise: np.ndarray
    judged: bool = True
    why_not: str = ""
    formula: str = ""
    run_noise: float = math.nan
    """Relative variance of one run's value (from the repetitions, else from the model's residuals)."""
    largest_measured: float = math.nan
    """The largest magnitude of the series' measured means."""

    @property
    def name(self) -> str:
        return self.callpath if self.metric == "time" else f"{self.callpath} [{self.metric}]"

    def variance(self) -> float:
        """Relative variance of the prediction at the target."""
        return float(np.sum(self.deviations[-1] ** 2))

    def reductions(self) -> np.ndarray:
        """Expected reduction of the relative variance at the target per candidate, shape (n_candidates,).

        A reduction below :data:`NEGLIGIBLE` of the variance is 0: on exact data the noise members are rounding,
        and whether a repetition "narrows" by 1e-30 must not depend on the machine's arithmetic."""
        D = self.deviations
        cross = D[:-1] @ D[-1]
        own = np.sum(D[:-1] ** 2, axis=1) + self.noise
        with np.errstate(all="ignore"):
            reduction = np.where(own > 0, cross**2 / own, 0.0)
        return np.where(reduction > NEGLIGIBLE * self.variance(), reduction, 0.0)

    def observe(self, index: int) -> None:
        """Update the ensemble as if candidate ``index`` had been measured once more."""
        d = self.deviations[index]
        norm = float(d @ d)
        if norm <= 0:
            return
        noise = float(self.noise[index])
        beta = (1.0 - math.sqrt(noise / (norm + noise))) / norm if noise > 0 else 1.0 / norm
        self.deviations = self.deviations - beta * np.outer(self.deviations @ d, d)


@dataclass
class Assessment:
    """Every kernel's uncertainty at the target, and the candidates it was judged on."""

    parameters: tuple[str, ...]
    target: np.ndarray
    candidates: np.ndarray
    kernels: list[Kernel]
    level: float = 0.95
    model_set: object = field(default=None, repr=False)

    def half_widths(self) -> dict[str, float]:
        """Relative half-width of the interval at the target per kernel name."""
        z = z_of(self.level)
        return {k.name: z * math.sqrt(k.variance()) for k in self.kernels}

    def scaled_run_noise(self, points: np.ndarray) -> list[float]:
        """Per kernel, the median over ``points`` of one run's noise variance in units of the prediction at the
        target, ``σ² · (y(x) / y(target))²`` (what :attr:`Kernel.noise` holds per candidate for single runs):
        how much a run's noise weighs against the value to predict; 0 where unknown."""
        out = []
        for kernel, model in zip(self.kernels, getattr(self.model_set, "models", [])):
            with np.errstate(all="ignore"):
                scaled = (model.predict(points) / kernel.value) ** 2 * kernel.run_noise
            scaled = scaled[np.isfinite(scaled)]
            out.append(float(np.median(scaled)) if scaled.size else 0.0)
        return out

    def open_kernels(self, tolerance: float) -> list[Kernel]:
        """Judged kernels whose interval at the target is wider than ``tolerance``."""
        z = z_of(self.level)
        return [k for k in self.kernels if k.judged and z * math.sqrt(k.variance()) > tolerance]

    def holds(self, tolerance: float) -> bool:
        """The stopping rule: every judged kernel's interval at the target within ``tolerance``."""
        return not self.open_kernels(tolerance)


# ------------------------------------------------------------------ assess
@np.errstate(over="ignore", invalid="ignore")  # a far target overflows a model: said per kernel, not by numpy
def assess(
    experiment: Experiment,
    target: Sequence[float],
    candidates: np.ndarray,
    *,
    modeler: str = "default",
    measure: str = "mean",
    host=None,
    members: int = MEMBERS,
    level: float = 0.95,
    min_share: float = MIN_SHARE,
    repetitions: int = 1,
    replicates: int = REPLICATES,
    seed: int = 0,
    committee: Sequence[tuple[str, dict]] = COMMITTEE,
    misfit: bool = False,
    calibrated: bool = True,
    floor: str = FLOOR,
    interaction: bool = False,
    progress: Callable[[int, int], None] | None = None,
    **options,
) -> Assessment:
    """Model ``experiment`` and build every kernel's ensemble at ``candidates`` and ``target``.

    Parameters
    ----------
    experiment : Experiment
        The measurements so far (only the series to judge).
    target : sequence of float, length n_params
    candidates : ndarray, shape (n_candidates, n_params)
        Points that could be measured next.
    repetitions : int
        Repetitions per planned run (divides the noise variance of a run).
    seed : int
        Salt of the wild bootstrap's signs (:func:`_signs`); the plan of one seed is as valid as another's.
    misfit : bool
        Add the misfit members (:func:`_discrepancy_members`).  Off by default: measured with
        ``benchmarks/design.py --selector-misfit``, they gain on RELeARN's reversed sample at 20 % and lose on
        held-out two-parameter functions at 10 % (``benchmarks/design-history.md`` has the figures).
    interaction : bool
        Add the interaction members (:func:`_interaction_members`: the largest interaction of a parameter with
        the other terms that the measured points cannot rule out).  Off by default: measured with
        ``benchmarks/design.py --selector-interaction``.
    calibrated : bool
        Widen every ensemble to at least the model's own confidence interval at the target (default).  False
        gives the ensemble alone (``benchmarks/design.py --selector-uncalibrated`` measures the difference).
    floor : {"ladder", "own", "members"}
        How the calibration widens it.  ``"ladder"`` (default since session 52): as ``"own"``, but runs beyond the
        measured values towards the target narrow the excess (:func:`_floor_ladder`).  ``"own"`` (the default
        from session 43): the excess of that interval over the ensemble at the target is a member of its own that
        no run narrows (:func:`_floor_member`), so the expected reductions are those of the ensemble alone.
        ``"members"``: the model-choice members are
        scaled up to it (:func:`_inflated`), so that every run that moves them is expected to narrow the
        excess as well; on a strong-scaling program those expectations were three times too narrow for twelve
        rounds (``benchmarks/design-history.md``, session 43).
    progress : callable(fitted, more), optional
        Told of the work: ``(0, n)`` when a modeling call of ``n`` series starts, ``(k, 0)`` when ``k`` of them
        are fitted (the CLI's progress bar grows its total with the first and advances with the second).
    modeler, measure, host, **options
        How to model (as :func:`extrap_plugins.model`).

    Returns
    -------
    Assessment
    """
    if floor not in FLOORS:
        raise ValueError(f"floor {floor!r}: expected one of {', '.join(FLOORS)}")
    parameters = tuple(experiment.parameter_names)
    target = np.asarray(target, dtype=np.float64).reshape(1, -1)
    candidates = np.asarray(candidates, dtype=np.float64).reshape(-1, len(parameters))
    rows = np.vstack([candidates, target])
    experiment, copies = _without_copies(experiment)
    with warnings.catch_warnings():  # what the models of the data say of them is the user's (a run left out);
        warnings.simplefilter("ignore")  # the refits, committee and bootstrap below stay silent
        warnings.simplefilter("default", QualityWarning)
        full = _fit(experiment, modeler, measure, host, progress, options)
    exact = _exact_series(experiment, full)
    spread = _refits(experiment, full, rows, modeler, measure, host, members, options, progress, exact)
    others = _committee(experiment, full, rows, measure, host, committee, options, progress, exact)
    shaken = _bootstrap(experiment, full, rows, modeler, measure, host, replicates, seed, options, progress, exact)
    intervals = uncertainties(full)
    least_squares = _coefficient_members(intervals, rows)
    noise = _relative_noise(experiment, full, measure)
    misfits = _discrepancy_members(experiment, full, rows, noise) if misfit else {}
    interactions = _interaction_members(experiment, full, rows, noise) if interaction else {}
    measured = _measured(experiment, full, candidates)
    largest = _largest_measured(experiment, full)
    reach = np.max(np.asarray(experiment.coordinates, dtype=np.float64), axis=0)
    z = z_of(level)
    kernels = []
    for index, m in enumerate(full.models):
        value = float(m.predict(target)[0])
        at_rows = m.predict(rows)
        scale = abs(value) if value != 0 and math.isfinite(value) else 0.0
        # What the measured points already say.  Model-choice members (refits without a point, other selection
        # rules) stand for what the measurements leave open: at a measured point the value is known, so
        # measuring it again cannot tell them apart (deviation 0 there).  The noise members (wild bootstrap,
        # coefficients) may deviate at a measured point by no more than the noise of the mean of its
        # ``n`` repetitions, σ²/n: one more repetition narrows that, and only that.
        # Members in units of a power of two near the value (exact: the same digits), so that their squares
        # neither overflow nor vanish for values of 1e160 or 1e-200.
        unit = float(binary_scale(np.array([[scale]]))[0])
        choice = [p / unit for p in (spread.get(index), others.get(index), interactions.get(index))
                  if p is not None and p.size]
        noisy = [p / unit for p in (shaken.get(index), least_squares[index]) if p is not None and p.size]
        excess = []
        if calibrated and intervals[index] is not None:
            # the model's own confidence interval at the target, as a standard deviation
            sd = float(intervals[index].half_width(target, level, kind="confidence")[0]) / z / unit
            if floor == "members":
                choice, noisy = _inflated(choice, noisy, sd * sd)
            elif floor == "ladder":
                excess = _floor_ladder(choice + noisy, sd * sd, rows, reach, m)
            else:
                excess = _floor_member(choice + noisy, sd * sd, rows.shape[0])
        times = measured.get(index)
        if times is not None and times.any():
            at = times > 0
            for p in choice:
                p[:-1][at] = 0.0
            if noisy and scale > 0:
                allowed = ((at_rows[:-1][at] / unit) ** 2) * noise.get(index, 0.0) / times[at]
                norm = sum(np.sum(p[:-1][at] ** 2, axis=1) for p in noisy)
                with np.errstate(all="ignore"):
                    shrink = np.where(norm > allowed, np.sqrt(allowed / norm), 1.0)
                shrink = np.where(np.isfinite(shrink), shrink, 1.0)
                for p in noisy:
                    p[:-1][at] *= shrink[:, None]
        parts = choice + noisy + excess + ([misfits[index] / unit] if index in misfits else [])
        D = np.hstack(parts) if parts else np.zeros((rows.shape[0], 0))
        if scale > 0:
            D = D / (scale / unit)
            relative = (at_rows[:-1] / scale) ** 2 * noise.get(index, 0.0) / max(repetitions, 1)
        else:
            D = np.zeros_like(D)
            relative = np.zeros(candidates.shape[0])
        D = np.where(np.isfinite(D), D, 0.0)
        kernels.append(Kernel(m.callpath, m.metric, value, D, np.where(np.isfinite(relative), relative, 0.0),
                              formula=m.formula, run_noise=noise.get(index, math.nan),
                              largest_measured=largest.get(index, math.nan)))
    # A copy is judged by its own metric (its metric's largest value, the reason named with it), then the series is
    # judged once: as the original where that is judged, else as the copy where the copy matters under its metric.
    by_key = {(k.callpath, k.metric): k for k in kernels}
    copied = [(replace(by_key[first], callpath=callpath, metric=metric), by_key[first])
              for (callpath, metric), first in copies.items()]
    _mark_judged(kernels + [copy for copy, _ in copied], min_share)
    for copy, original in copied:
        if original.judged:
            copy.judged, copy.why_not = False, f"{COPY_OF} {original.name}"
        elif copy.judged:
            original.why_not = f"{COPY_OF} {copy.name}"
        kernels.append(copy)
    return Assessment(parameters, target[0], candidates, kernels, level, full)


def _without_copies(experiment: Experiment) -> tuple[Experiment, dict[tuple[str, str], tuple[str, str]]]:
    """The experiment without the series whose every measurement (point, repetition, value) equals an earlier
    series' (a leaf's exclusive time and its time, the bytes an allreduce receives and sends, a minimum and
    maximum over one visit), and which series each of those copies: one of them is modelled and judged, once,
    so that the same measurements neither cost the ensembles twice nor count twice in a plan's gain."""
    width = max(len(experiment.metrics), 1)
    series = experiment.callpath_index.astype(np.int64) * width + experiment.metric_index
    order = np.lexsort((experiment.repetition, *experiment.coordinates.T[::-1], series))
    codes, starts = np.unique(series[order], return_index=True)
    first_of: dict[bytes, int] = {}
    copies: dict[tuple[str, str], tuple[str, str]] = {}
    dropped = []
    for code, rows in zip(codes.tolist(), np.split(order, starts[1:])):
        signature = (experiment.coordinates[rows].tobytes() + experiment.repetition[rows].tobytes()
                     + experiment.value[rows].tobytes())
        first = first_of.setdefault(signature, code)
        if first != code:
            copies[_series_name(experiment, code, width)] = _series_name(experiment, first, width)
            dropped.append(code)
    if not copies:
        return experiment, {}
    return experiment.take(~np.isin(series, dropped)), copies


def _series_name(experiment: Experiment, code: int, width: int) -> tuple[str, str]:
    return experiment.callpaths[code // width].name, experiment.metrics[code % width].name


def _fit(experiment: Experiment, modeler: str, measure: str, host, progress, options: dict):
    """One modeling call of the assessment, on the executor of the enclosing
    :func:`extrap_plugins.executors.chosen` block (``auto`` outside one: a process pool when there are cores and
    enough series, as for ``model``), told to ``progress`` (see :func:`assess`)."""
    from .api import model as fit_models
    from .executors import current

    kind, jobs = current()
    told = None
    if progress is not None:
        series = experiment.callpath_index.astype(np.int64) * max(len(experiment.metrics), 1) + experiment.metric_index
        progress(0, len(np.unique(series)))
        told = lambda fitted: progress(fitted, 0)  # noqa: E731
    return fit_models(experiment, modeler, measure=measure, executor=kind, jobs=jobs, host=host, progress=told,
                      **options)


def _refits(experiment, full, rows, modeler, measure, host, members, options, progress=None,
            exact: dict | None = None) -> dict[int, np.ndarray]:
    """Jackknife deviations per model index, shape (n_rows, n_refits), from one modeling call.

    Series measured at the same points (one series group) share their left-out points; each group is
    perturbed on its own points only.  For the kernels of ``exact`` (:func:`_exact_series`) a refit that misses
    the measurements (the one left out among them) is refuted by them and left out.
    """
    callpath_position = {c.name: i for i, c in enumerate(experiment.callpaths)}
    metric_position = {m.name: i for i, m in enumerate(experiment.metrics)}
    series_code = experiment.callpath_index.astype(np.int64) * max(len(experiment.metrics), 1) + experiment.metric_index
    parts, factors = [], {}
    for g, group in enumerate(experiment.series_groups()):
        points = group.points
        n = points.shape[0]
        if n < 3 or members <= 0:
            continue
        # Only points whose removal leaves every parameter with all its measured values: a refit then searches
        # the same hypotheses (a line one value shorter would allow fewer terms, which is no like-for-like
        # perturbation).  Nearest the target first: they steer the extrapolation most.
        removable = np.ones(n, dtype=bool)
        for column in range(points.shape[1]):
            values, counts = np.unique(points[:, column], return_counts=True)
            single = set(values[counts == 1].tolist())
            removable &= np.array([v not in single for v in points[:, column].tolist()])
        logs = np.log2(np.maximum(points, 1e-300))
        order = [i for i in np.argsort(-logs.sum(axis=1), kind="stable") if removable[i]][:members]
        if len(order) < 2:
            continue
        codes = [callpath_position[c.name] * max(len(experiment.metrics), 1) + metric_position[m.name]
                 for c, m in group.keys]
        in_group = np.isin(series_code, codes)
        factors[g] = math.sqrt((n - 1) / len(order))
        for k, left in enumerate(order):
            keep = in_group & ~np.all(experiment.coordinates == points[left][None, :], axis=1)
            parts.append(_tagged(experiment, f"{g}.{k}", keep=keep))
    if not parts:
        return {}
    joined = Experiment.concatenate(parts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        refits = _fit(joined, modeler, measure, host, progress, options)
    position = {(m.callpath, m.metric): i for i, m in enumerate(full.models)}
    center = {i: m.predict(rows) for i, m in enumerate(full.models)}
    found: dict[int, list[np.ndarray]] = {}
    factor_of: dict[int, float] = {}
    for m in refits.models:
        tag, _, callpath = m.callpath.partition("\x1f")
        index = position.get((callpath, m.metric))
        if index is None:
            continue
        factor_of[index] = factors[int(tag.split(".")[0])]
        if _refuted(m, exact, index):
            continue
        found.setdefault(index, []).append(m.predict(rows) - center[index])
    return {i: factor_of[i] * np.stack(v, axis=1) for i, v in found.items()}


def _exact_series(experiment: Experiment, full) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The measured points and means, per model index, of the kernels whose repetitions agree and whose model
    reproduces their means, both within :data:`EXACT_MISFIT` (with a spare point beyond the model's
    coefficients, so that an exact fit is evidence): a member that misses them is refuted."""
    out = {}
    for group, series in _series(experiment, full):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.nanmean(group.values, axis=2)
            spread = np.nanmax(group.values, axis=2) - np.nanmin(group.values, axis=2)
        for row, index in series:
            model = full.models[index]
            finite = np.isfinite(means[row])
            if finite.sum() < len(model.terms) + 2 or model.predictor is not None or model.segments:
                continue
            points, values = group.points[finite], means[row][finite]
            agree = np.all(spread[row][finite] <= _allowed(values))
            if agree and _reproduces(model, points, values):
                out[index] = (points, values)
    return out


def _refuted(member, exact: dict | None, index: int) -> bool:
    """Whether ``member`` (a refit, a replicate or another rule's model of kernel ``index``) misses the measurements
    of an exact kernel (``exact``, :func:`_exact_series`)."""
    return exact is not None and index in exact and not _reproduces(member, *exact[index])


def _reproduces(model, points: np.ndarray, values: np.ndarray) -> bool:
    """Whether ``model`` is within :data:`EXACT_MISFIT` of ``values`` at ``points``."""
    with np.errstate(all="ignore"):
        predicted = model.predict(points)
    return bool(np.all(np.abs(predicted - values) <= _allowed(values)))


def _allowed(values: np.ndarray) -> np.ndarray:
    """How far from ``values`` an exact count may be: :data:`EXACT_MISFIT` of each, and rounding of the largest
    where a value is 0 (halo bytes at one process)."""
    return EXACT_MISFIT * np.abs(values) + 1e-9 * np.max(np.abs(values))


def _committee(experiment, full, rows, measure, host, committee, options, progress=None,
               exact: dict | None = None) -> dict[int, np.ndarray]:
    """Deviations of other model-choice rules from the model, per model index, shape (n_rows, n_rules).

    Every rule gets the caller's modeler options it takes (``exponents=…``: the same hypotheses), its own
    settings on top.  Scaled by ``1 / sqrt(n_rules)``: their mean square is the variance they stand for.  A
    rule that cannot model the data (an error) is left out, and so is, for the kernels of ``exact``
    (:func:`_exact_series`), a rule's model that misses their measurements.
    """
    from .errors import InputError
    from .plugins import get_host

    host_of_rules = host or get_host()
    position = {(m.callpath, m.metric): i for i, m in enumerate(full.models)}
    center = {i: m.predict(rows) for i, m in enumerate(full.models)}
    found: dict[int, list[np.ndarray]] = {}
    for name, settings in committee:
        known = host_of_rules.modeler_options(name)
        shared = {k: v for k, v in options.items() if known is None or k in known}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                others = _fit(experiment, name, measure, host, progress, {**shared, **dict(settings)})
        except (InputError, ValueError):
            continue
        for m in others.models:
            index = position.get((m.callpath, m.metric))
            if index is not None and not _refuted(m, exact, index):
                found.setdefault(index, []).append(m.predict(rows) - center[index])
    return {i: np.stack(v, axis=1) / math.sqrt(len(v)) for i, v in found.items()}


def _series(experiment: Experiment, full):
    """Every group of series that share their measured points, with ``(row, model index)`` for each of its series
    that ``full`` modelled."""
    position = {(m.callpath, m.metric): i for i, m in enumerate(full.models)}
    for group in experiment.series_groups():
        keys = ((callpath.name, metric.name) for callpath, metric in group.keys)
        yield group, [(row, position[key]) for row, key in enumerate(keys) if key in position]


def _measured(experiment: Experiment, full, candidates: np.ndarray) -> dict[int, np.ndarray]:
    """Per model index, how many repetitions its series has at each candidate, shape (n_candidates,)."""
    out: dict[int, np.ndarray] = {}
    for group, series in _series(experiment, full):
        points = np.asarray(group.points, dtype=np.float64)
        repetitions = np.sum(np.isfinite(group.values), axis=2)  # (n_series, n_points)
        where = [np.flatnonzero(np.all(np.isclose(candidates, point[None, :], rtol=1e-9, atol=0.0), axis=1))
                 for point in points]
        for row, index in series:
            times = np.zeros(candidates.shape[0])
            for j, hits in enumerate(where):
                times[hits] += repetitions[row, j]
            out[index] = times
    return out


def _largest_measured(experiment: Experiment, full) -> dict[int, float]:
    """Per model index, the largest magnitude of its series' measured means."""
    out: dict[int, float] = {}
    for group, series in _series(experiment, full):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.abs(np.nanmean(group.values, axis=2))
        for row, index in series:
            finite = means[row][np.isfinite(means[row])]
            if finite.size:
                out[index] = max(out.get(index, 0.0), float(finite.max()))
    return out


def _bootstrap(experiment, full, rows, modeler, measure, host, replicates, seed, options,
               progress=None, exact: dict | None = None) -> dict[int, np.ndarray]:
    """Wild-bootstrap deviations per model index, shape (n_rows, replicates), from one modeling call.

    Every measured value ``y`` becomes ``f(x) + s (y - f(x))`` with ``f`` the model and ``s`` a random sign
    (:func:`_signs`: fixed per measurement), and the modeler runs again: where the noise could have made it
    choose other terms, the replicates disagree at the target.  Exact data should give identical replicates, but
    their rounding residuals flip the sign of a count of 0 (halo bytes at one process) and the refit changes: for
    the kernels of ``exact`` (:func:`_exact_series`) a replicate that misses the measurements is left out.
    """
    if replicates <= 0 or len(experiment) == 0:
        return {}
    position = {(m.callpath, m.metric): i for i, m in enumerate(full.models)}
    fitted = np.full(len(experiment), np.nan)
    for rows_of, model in _rows_of_models(experiment, full):
        fitted[rows_of] = model.predict(experiment.coordinates[rows_of])
    residual = np.where(np.isfinite(fitted), experiment.value - fitted, 0.0)
    fitted = np.where(np.isfinite(fitted), fitted, experiment.value)
    parts = [_tagged(experiment, str(b), value=fitted + signs * residual)
             for b, signs in enumerate(_signs(experiment, replicates, seed))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        refits = _fit(Experiment.concatenate(parts), modeler, measure, host, progress, options)
    center = {i: m.predict(rows) for i, m in enumerate(full.models)}
    found: dict[int, list[np.ndarray]] = {}
    for m in refits.models:
        _, _, callpath = m.callpath.partition("\x1f")
        index = position.get((callpath, m.metric))
        if index is not None and not _refuted(m, exact, index):
            found.setdefault(index, []).append(m.predict(rows) - center[index])
    return {i: np.stack(v, axis=1) / math.sqrt(len(v)) for i, v in found.items()}


def _tagged(experiment: Experiment, tag: str, keep: np.ndarray | None = None,
            value: np.ndarray | None = None) -> Experiment:
    """A perturbed copy of ``experiment`` to model beside others in one call: the rows ``keep`` (all), their
    values replaced by ``value``, each call path renamed ``tag + "\x1f" + name`` (the refits tell the copies
    apart by it).  Built from the experiment's codes, so its cost does not grow with a Python loop over rows."""
    rows = slice(None) if keep is None else keep
    callpaths = [f"{tag}\x1f{c.name}" for c in experiment.callpaths]
    return Experiment.from_columns(
        experiment.parameters, callpath=(callpaths, experiment.callpath_index[rows]),
        metric=([m.name for m in experiment.metrics], experiment.metric_index[rows]),
        coordinates=experiment.coordinates[rows], value=(experiment.value if value is None else value)[rows],
        repetition=experiment.repetition[rows], metrics=experiment.metrics)


def _rows_of_models(experiment: Experiment, full):
    """``(rows, model)`` for every model of ``full`` with rows in ``experiment`` (one sort, no scan per model)."""
    n_metrics = max(len(experiment.metrics), 1)
    series = experiment.callpath_index.astype(np.int64) * n_metrics + experiment.metric_index
    order = np.argsort(series, kind="stable")
    codes, starts = np.unique(series[order], return_index=True)
    bounds = dict(zip(codes.tolist(), zip(starts.tolist(), np.append(starts[1:], len(order)).tolist())))
    callpath_of = {c.name: i for i, c in enumerate(experiment.callpaths)}
    metric_of = {m.name: i for i, m in enumerate(experiment.metrics)}
    for model in full.models:
        if model.callpath in callpath_of and model.metric in metric_of:
            span = bounds.get(callpath_of[model.callpath] * n_metrics + metric_of[model.metric])
            if span is not None:
                yield order[span[0]:span[1]], model


def _signs(experiment: Experiment, replicates: int, seed: int = 0) -> np.ndarray:
    """Random signs, shape (replicates, n_rows), each a fixed function of its measurement (series, point,
    repetition) and replicate: a kernel's replicates do not depend on which other kernels, or which other points,
    are in the experiment, and a measurement keeps its signs as points are added."""
    import zlib

    def codes(names) -> np.ndarray:
        return np.array([zlib.crc32(str(n).encode("utf-8")) for n in names], dtype=np.uint64)

    with np.errstate(over="ignore"):
        key = codes(c.name for c in experiment.callpaths)[experiment.callpath_index] * np.uint64(0x9E3779B97F4A7C15)
        key ^= codes(m.name for m in experiment.metrics)[experiment.metric_index]
        for column in np.ascontiguousarray(experiment.coordinates, dtype=np.float64).view(np.uint64).T:
            key = _mix(key ^ column)
        key = _mix(key ^ np.asarray(experiment.repetition, dtype=np.int64).astype(np.uint64))
        key = _mix(key ^ np.uint64(seed & 0xFFFFFFFF) * np.uint64(0x94D049BB133111EB))
        bits = np.stack([_mix(key + np.uint64(b + 1) * np.uint64(0xBF58476D1CE4E5B9)) for b in range(replicates)])
    return np.where(bits >> np.uint64(63), 1.0, -1.0)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: 64 well-mixed bits from any 64-bit key (wrapping arithmetic)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _inflated(choice: list[np.ndarray], noisy: list[np.ndarray], floor: float):
    """The members scaled so that their variance at the target (the last row) is at least ``floor``
    (``assess(floor="members")``, the rule until session 43; the default is :func:`_floor_member`).

    A finite ensemble fitted to the same few points is under-dispersed (ensemble Kalman filters meet the same
    and inflate); the model's confidence interval (:meth:`~extrap_plugins.extrapolation.Uncertainty.half_width`,
    least squares with the t quantile plus the model-choice spread beyond the measured range) has a measured
    coverage (README, robust models), so it is the floor.  The model-choice members take the missing variance,
    since that is what more points settle; without them the noise members do.  Where the ensemble is empty
    nothing is added: no candidate could narrow a member the ensemble does not have.
    """
    have, chosen = _variance_at_target(choice + noisy), _variance_at_target(choice)
    if not floor > have or not math.isfinite(floor):
        return choice, noisy
    if chosen > 0:
        gain = math.sqrt((floor - (have - chosen)) / chosen)
        return [p * gain for p in choice], noisy
    if have > 0:
        gain = math.sqrt(floor / have)
        return choice, [p * gain for p in noisy]
    return choice, noisy


def _variance_at_target(parts: list[np.ndarray]) -> float:
    """The variance the members (rows: candidates, then the target) give at the target."""
    return sum(float(np.sum(p[-1] ** 2)) for p in parts)


def _floor_member(members: list[np.ndarray], floor: float, n_rows: int) -> list[np.ndarray]:
    """The variance the ensemble lacks at the target (the last row) to reach ``floor``, as one member that
    deviates there alone: no candidate narrows it (empty when the ensemble reaches the floor).

    The floor is the model's confidence interval (:func:`_inflated` says why it has a measured coverage); what it
    has beyond the ensemble is mostly the modeler's model-choice spread beyond the measured range, which more
    points narrow only by changing the modeler's evidence, not in proportion to how a run moves the members.
    The interval and the stopping rule keep it; the expected reductions do not promise it away.  An empty
    ensemble gets the whole floor (``_inflated`` added nothing there, and the rule then held at ±0)."""
    have = _variance_at_target(members)
    if not math.isfinite(floor) or floor <= have:
        return []
    member = np.zeros((n_rows, 1))
    member[-1, 0] = math.sqrt(floor - have)
    return [member]


RUNGS = 8
"""Members of the floor ladder per parameter (:func:`_floor_ladder`)."""


def _floor_ladder(members: list[np.ndarray], floor: float, rows: np.ndarray, reach: np.ndarray,
                  model) -> list[np.ndarray]:
    """The floor's excess as members that runs beyond the measured values narrow (``floor="ladder"``).

    Per parameter the target lies beyond the largest measured value (``reach``), the excess gets a share by that
    parameter's distance to the target in logs, split into :data:`RUNGS` members, each a model error that starts
    somewhere between the measured values and the target: a candidate that reaches past a rung's start tells it,
    in proportion to how much the model's value there depends on the parameter (its elasticity, relative to the
    target's).  The rungs are spaced so that a run reaching a share ``c`` of the way (in logs) resolves the share
    ``1 - (1 - c)²`` of the parameter's excess: the error of an extrapolation grows about linearly with its length
    in logs.  A target within the measured values, or candidates none of which reach beyond them towards it, keep
    :func:`_floor_member` (the same variance, nothing to narrow)."""
    have = _variance_at_target(members)
    if not math.isfinite(floor) or floor <= have:
        return []
    target = rows[-1]
    with np.errstate(all="ignore"):
        span = np.where((reach > 0) & (target > reach), np.log(target / reach), 0.0)
    beyond = (span > 0) & np.any(rows[:-1] > reach, axis=0)
    if not beyond.any():  # no candidate reaches towards the target: no run narrows the excess
        return _floor_member(members, floor, rows.shape[0])
    excess = floor - have
    elastic = _elasticities(model, rows)
    out = []
    for i in np.flatnonzero(span > 0):
        size = math.sqrt(excess * span[i] / span.sum() / RUNGS)
        at_target = abs(elastic[-1, i])
        weight = np.clip(np.abs(elastic[:-1, i]) / at_target, 0.0, 1.0) if at_target > 1e-3 else np.ones(len(rows) - 1)
        with np.errstate(all="ignore"):
            covered = np.where(rows[:-1, i] > reach[i], np.log(rows[:-1, i] / reach[i]) / span[i], 0.0)
        for j in range(RUNGS):
            start = 1.0 - math.sqrt(1.0 - (j + 0.5) / RUNGS)
            member = np.zeros((len(rows), 1))
            member[-1, 0] = size
            member[:-1, 0] = size * weight * (covered >= start)
            out.append(member)
    return out


def _elasticities(model, rows: np.ndarray, step: float = 0.01) -> np.ndarray:
    """d log f / d log x_i of ``model`` at every row, per parameter (0 where the model is not positive)."""
    base = np.asarray(model.predict(rows), dtype=np.float64)
    out = np.zeros(rows.shape)
    for i in range(rows.shape[1]):
        moved = rows.copy()
        moved[:, i] *= 1.0 + step
        with np.errstate(all="ignore"):
            value = np.log(np.asarray(model.predict(moved), dtype=np.float64) / base) / math.log1p(step)
        out[:, i] = np.where(np.isfinite(value), value, 0.0)
    return out


def _coefficient_members(intervals, rows) -> list[np.ndarray | None]:
    """Least-squares members: one per eigenvector of the coefficient covariance (``intervals``: the model
    set's :func:`~extrap_plugins.extrapolation.uncertainties`)."""
    result: list[np.ndarray | None] = []
    for u in intervals:
        if u is None:
            result.append(None)
            continue
        values, vectors = np.linalg.eigh(u.residual_variance * (u.gram_inverse + u.gram_inverse.T) / 2)
        values = np.maximum(values, 0.0)
        a = design_matrix(u.columns, u.parameters, rows) / u.scale
        result.append(a @ (vectors * (np.sqrt(values) * u.unit)[None, :]))
    return result


def _discrepancy_members(experiment: Experiment, full, rows: np.ndarray,
                         noise: dict[int, float]) -> dict[int, np.ndarray]:
    """Misfit members: a Gaussian process over the model's relative residuals, per model index, shape
    (n_rows, n_members), in the model's units.

    Where the data are not of the model's form (a step, a change of regime, outliers), the model misses the
    measured means by more than their noise; the same misfit is expected at the target, and only a measurement
    near it can say how large it is there.  The misfit is a stationary GP (:func:`_matern32` over log2
    coordinates scaled to [0, 1] per parameter, length :data:`MISFIT_LENGTH`) of variance ``s²``, the relative
    residuals' variance beyond the noise of the means; conditioned on the measured points (each with the noise
    of its mean), its posterior covariance over ``rows`` is split into members by its eigenvectors.  A model
    that fits within the noise has ``s² = 0`` and no misfit members: the selector then follows the model.
    """
    from scipy.stats import f as fisher

    out: dict[int, np.ndarray] = {}
    for group, series in _series(experiment, full):
        points = np.asarray(group.points, dtype=np.float64)
        if points.shape[0] < 2:
            continue
        scaled = _log_unit(np.vstack([points, rows]))
        at_points, at_rows = scaled[: points.shape[0]], scaled[points.shape[0]:]
        k_pp, k_rp, k_rr = (_matern32(a, b, MISFIT_LENGTH) for a, b in
                            ((at_points, at_points), (at_rows, at_points), (at_rows, at_rows)))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.nanmean(group.values, axis=2)
        counts = np.sum(np.isfinite(group.values), axis=2)
        for row, index in series:
            model = full.models[index]
            predicted = model.predict(points)
            with np.errstate(all="ignore"):
                relative = (means[row] - predicted) / np.abs(predicted)
            ok = np.isfinite(relative) & (counts[row] > 0)
            dof = int(ok.sum()) - len(model.terms) - 1
            if dof < 1:
                continue
            # Only a misfit the repetitions show to be more than noise (the lack-of-fit F test): without
            # repetitions the noise is read from the same residuals, and nothing is left over.
            noise_dof = int(np.sum(np.maximum(counts[row][ok] - 1, 0)))
            of_means = noise.get(index, 0.0) / counts[row][ok]
            expected = float(np.mean(of_means))
            lack = float(np.sum(relative[ok] ** 2) / dof)
            s2 = lack - expected
            if noise_dof < 1 or not s2 > ROUND_OFF or not math.isfinite(s2):
                continue
            if expected > 0 and lack / expected < fisher.ppf(LACK_OF_FIT, dof, noise_dof):
                continue
            gram = k_pp[np.ix_(ok, ok)] + np.diag(of_means / s2 + 1e-9)
            cross = k_rp[:, ok]
            try:
                posterior = k_rr - cross @ np.linalg.solve(gram, cross.T)
            except np.linalg.LinAlgError:
                continue
            values, vectors = np.linalg.eigh((posterior + posterior.T) / 2)
            keep = values > 1e-9 * max(float(values.max()), 0.0)
            if not keep.any():
                continue
            members = vectors[:, keep] * np.sqrt(values[keep] * s2)[None, :]
            out[index] = members * np.abs(model.predict(rows))[:, None]
    return out


INTERACTION_EXPONENTS = np.arange(1, 25) / 8.0
"""The exponents an interaction member tries (1/8 … 3, PMNF's range), the largest the measurements allow kept."""


def _interaction_members(experiment: Experiment, full, rows: np.ndarray,
                         noise: dict[int, float]) -> dict[int, np.ndarray]:
    """Interaction members: the largest interaction of each parameter with the model's other terms that the
    measured points cannot rule out, per model index, shape (n_rows, n_members), in the model's units.

    A design of lines through a corner sees each parameter where the others are smallest.  There a term of
    ``p`` may be a percent of the value, so a factor ``(s / s0)^e`` on it changes nothing the line of ``s`` can
    see, yet at the target, where the term dominates, it changes everything; every refit and selection rule
    agrees on the same flat line, so the other members are blind to it.  For every parameter ``x``, with
    ``g(x)`` the model's terms without ``x`` (the constant excluded) and ``x0`` the value of ``x`` where ``|g|``
    is largest among the measured points, a member deviates by ``g · ((x / x0)^e − 1)`` for the largest
    ``e`` of :data:`INTERACTION_EXPONENTS` (and the largest ``−e``) whose deviation stays within twice the noise
    of the mean at every measured point.  A point off the lines where ``g`` is large rules the member out; until
    one is measured, the interval at the target says the interaction is open.  Scaled by ``1 / sqrt(n)`` for
    ``n`` members, as the committee.
    """
    names = list(experiment.parameter_names)
    out: dict[int, np.ndarray] = {}
    for group, series in _series(experiment, full):
        points = np.asarray(group.points, dtype=np.float64)
        counts = np.sum(np.isfinite(group.values), axis=2)
        for row, index in series:
            model = full.models[index]
            if model.predictor is not None or model.segments or len(names) < 2 or not model.terms:
                continue
            at = counts[row] > 0
            predicted = np.abs(model.predict(points[at]))
            allowed = 2.0 * np.sqrt(max(noise.get(index, 0.0), 0.0) / counts[row][at]) * predicted
            members = []
            for j, name in enumerate(names):
                others = [t for t in model.terms if name not in t.factors or
                          (t.factors[name].exponent == 0 and t.factors[name].log_exponent == 0)]
                if not others:
                    continue
                g_points = evaluate(0.0, others, names, points[at])
                if not np.any(g_points):
                    continue
                x0 = points[at][int(np.argmax(np.abs(g_points))), j]
                ratio = points[at][:, j] / x0
                g_rows = evaluate(0.0, others, names, rows)
                for sign in (1.0, -1.0):
                    largest = 0.0
                    for e in INTERACTION_EXPONENTS:
                        if np.all(np.abs(g_points * (ratio ** (sign * e) - 1.0)) <= allowed):
                            largest = sign * e
                        else:
                            break
                    if largest:
                        members.append(g_rows * ((rows[:, j] / x0) ** largest - 1.0))
            if members:
                stacked = np.stack(members, axis=1)
                out[index] = np.where(np.isfinite(stacked), stacked, 0.0) / math.sqrt(len(members))
    return out


def _log_unit(points: np.ndarray) -> np.ndarray:
    """log2 coordinates scaled to [0, 1] per parameter over ``points`` (a parameter of one value: 0)."""
    logs = np.log2(np.maximum(points, 1e-300))
    low, span = logs.min(axis=0), np.ptp(logs, axis=0)
    return np.where(span > 0, (logs - low) / np.where(span > 0, span, 1.0), 0.0)


def _matern32(a: np.ndarray, b: np.ndarray, length: float) -> np.ndarray:
    """Matérn-3/2 correlation between the rows of ``a`` and ``b``, shape (len(a), len(b))."""
    from scipy.spatial.distance import cdist

    r = cdist(a, b) * (math.sqrt(3.0) / length)
    return (1.0 + r) * np.exp(-r)


def _relative_noise(experiment: Experiment, full, measure: str) -> dict[int, float]:
    """Relative variance of one repetition per model index: from repetitions, else from the residuals."""
    sums: dict[int, list[float]] = {}
    for group, series in _series(experiment, full):
        values = group.values
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nanmean(values, axis=2)
            # in a power-of-two unit near the values (exact), whose squares stay numbers for values of 1e160
            unit = binary_scale(mean)[:, None]
            variance = (np.nanvar(values / unit[:, :, None], axis=2, ddof=1) if values.shape[2] > 1
                        else np.full(mean.shape, np.nan))
            relative = variance / (mean / unit) ** 2
        for row, index in series:
            model = full.models[index]
            finite = relative[row][np.isfinite(relative[row])]
            if finite.size:
                sums.setdefault(index, []).append(float(np.mean(finite)))
            else:
                predicted = model.predict(group.points)
                with np.errstate(all="ignore"):
                    r = (mean[row] - predicted) / predicted
                r = r[np.isfinite(r)]
                dof = max(r.size - 1 - len(model.terms), 1)
                if r.size:
                    sums.setdefault(index, []).append(float(np.sum(r**2) / dof))
    return {i: float(np.mean(v)) for i, v in sums.items()}


def _mark_judged(kernels: list[Kernel], min_share: float) -> None:
    """Kernels of value zero, below ``min_share`` of their metric's largest at the target (and in the measurements:
    a kernel that matters where measured is judged, whatever its model says of the target), or below ``min_share``
    of their own largest measured value (a model that falls to nothing there: a relative interval around almost
    zero means nothing, and a counter that is mostly zero gets such a model) are not judged.

    (By the target alone, an mpi4py sample sort's ``samples`` region, 7 % of the program's time measured at the
    target, escaped: its model said 0.4 %.)"""
    largest: dict[str, float] = {}
    measured: dict[str, float] = {}
    for k in kernels:
        if math.isfinite(k.value):
            largest[k.metric] = max(largest.get(k.metric, 0.0), abs(k.value))
        if math.isfinite(k.largest_measured):
            measured[k.metric] = max(measured.get(k.metric, 0.0), k.largest_measured)
    for k in kernels:
        small_here = not k.largest_measured >= min_share * measured.get(k.metric, 0.0)
        if not math.isfinite(k.value):
            k.judged, k.why_not = False, "no finite value at the target (the model overflows there)"
        elif k.value == 0:
            k.judged, k.why_not = False, "predicted 0 at the target"
        elif abs(k.value) < min_share * largest.get(k.metric, 0.0) and small_here:
            k.judged, k.why_not = False, f"below {min_share:.0%} of the largest {k.metric} at the target"
        elif abs(k.value) < min_share * k.largest_measured:
            k.judged, k.why_not = False, f"below {min_share:.0%} of its largest measured value at the target"


# -------------------------------------------------------------------- plan
NARROWS = "narrows "
"""How a planned run's reason begins when it names the kernels it serves (:meth:`PlannedRun.reason`)."""

SERVES_SAID = 3
"""A run's reason names this many of the kernels it serves, then counts the rest."""


def narrows_visibly(before: float, after: float) -> bool:
    """Whether a relative half-width going from ``before`` to ``after`` narrows as printed (:func:`format_share`):
    by half a unit of its last digit at least, and to another number (±25.0%→±25.0% narrows nothing one sees)."""
    return before - after >= 0.0005 and format_share(before) != format_share(after)


@dataclass
class PlannedRun:
    """One run of a plan: the candidate, its cost, and whom it serves."""

    index: int
    cost: float
    gain: float
    """Sum over the open kernels of the expected reduction of the relative variance at the target."""
    serves: list[tuple[str, float, float]]
    """(kernel, half-width before, half-width after) for the kernels this run narrows most."""

    def reason(self) -> str:
        if not self.serves:
            return "cheapest remaining point (no kernel expects a gain)"
        parts = [f"{format_callpath(name)} ±{format_share(before)}→±{format_share(after)}"
                 for name, before, after in self.serves[:SERVES_SAID]]
        more = f" +{len(self.serves) - SERVES_SAID} more" if len(self.serves) > SERVES_SAID else ""
        return NARROWS + ", ".join(parts) + more


def plan_runs(
    assessment: Assessment,
    costs: np.ndarray,
    *,
    tolerance: float,
    limit: float = math.inf,
    max_runs: int | None = None,
    available: np.ndarray | None = None,
    visible: bool = False,
) -> tuple[list[PlannedRun], dict[str, float]]:
    """Choose runs greedily by expected reduction per unit cost until the rule holds or ``limit`` is spent (with
    ``visible``, then cut after the shortest part of the plan whose intervals print as the whole plan's, none where
    those print as before it, :func:`format_share`: the state is left as after the runs kept)

    Parameters
    ----------
    assessment : Assessment
        Updated in place (its ensembles are conditioned on the planned runs).
    costs : ndarray, shape (n_candidates,)
        Cost of one run at each candidate.
    tolerance : float
        Relative half-width at the target that is good enough.
    limit : float
        Cost the plan may spend.
    max_runs : int, optional
    available : ndarray of int, shape (n_candidates,), optional
        How often each candidate may still be run (default: once).

    Returns
    -------
    (runs, predicted) : the runs in order, and the predicted relative
    half-width per kernel name after them.
    """
    z = z_of(assessment.level)
    costs = np.asarray(costs, dtype=np.float64)
    left = np.ones(costs.shape[0], dtype=np.int64) if available is None else np.asarray(available).copy()
    runs: list[PlannedRun] = []
    states: list[list[np.ndarray]] = []  # before each run (observe replaces the deviations)
    widths: list[dict[str, float]] = [{k.name: z * math.sqrt(k.variance()) for k in assessment.kernels  # the open
                                       if k.judged and z * math.sqrt(k.variance()) > tolerance}]
    spent = 0.0
    while max_runs is None or len(runs) < max_runs:
        open_kernels = [k for k in assessment.kernels if k.judged and z * math.sqrt(k.variance()) > tolerance]
        if not open_kernels:
            break
        fits = (left > 0) & (spent + costs <= limit + 1e-9 * max(limit, 1.0))
        if not fits.any():
            break
        gains = np.zeros(costs.shape[0])
        per_kernel = []
        for k in open_kernels:
            r = k.reductions()
            # A kernel's gain counts only until it reaches the tolerance.
            r = np.minimum(r, max(k.variance() - (tolerance / z) ** 2, 0.0) + 1e-300)
            per_kernel.append(r)
            gains += r
        with np.errstate(all="ignore"):
            score = np.where(fits, gains / np.maximum(costs, 1e-300), -np.inf)
        best = int(np.argmax(score))
        if not gains[best] > 0:
            cheapest = np.where(fits, costs, np.inf)
            best = int(np.argmin(cheapest))
        before = {k.name: z * math.sqrt(k.variance()) for k in open_kernels}
        order = np.argsort([-r[best] for r in per_kernel], kind="stable")
        states.append([k.deviations for k in assessment.kernels])
        for k in assessment.kernels:
            k.observe(best)
        after = {k.name: z * math.sqrt(k.variance()) for k in open_kernels}
        widths.append({k.name: z * math.sqrt(k.variance()) for k in assessment.kernels if k.name in widths[0]})
        serves = [(open_kernels[i].name, before[open_kernels[i].name], after[open_kernels[i].name])
                  for i in order if per_kernel[i][best] > 0 and per_kernel[i][best] >= 0.05 * gains[best]]
        runs.append(PlannedRun(best, float(costs[best]), float(gains[best]), serves))
        spent += float(costs[best])
        left[best] -= 1
    if visible and runs:
        final = widths[-1]
        shown = next(m for m in range(len(runs) + 1)  # the first part that narrows as far as the whole, as printed
                     if all(format_share(widths[m][name]) == format_share(final[name]) for name in final))
        if shown < len(runs):
            for k, deviations in zip(assessment.kernels, states[shown]):
                k.deviations = deviations
            runs = runs[:shown]
    predicted = {k.name: z * math.sqrt(k.variance()) for k in assessment.kernels}
    return runs, predicted


# ----------------------------------------------------------- modeler per kernel
def choose_models(experiment: Experiment, modelers: Sequence[str] = ("default", "refining"), *,
                  measure: str = "mean", host=None) -> tuple[list, dict[tuple[str, str], str]]:
    """Per kernel, the model of the modeler that best predicted its own largest measured values.

    Every modeler is run with ``validate=True`` (hold out the largest value of every parameter, refit,
    predict them); per series the model of the modeler with the smallest held-out error is kept, the first
    modeler on ties or where no error is known.  A backtest of the extrapolation, not a fit criterion: on
    thin designs the modelers differ most in what they predict beyond the data.

    Returns
    -------
    (models, chosen) : the models in the first modeler's order, and per (call path, metric) the modeler's name.
    """
    from .api import model as fit_models

    sets = []
    for name in modelers:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sets.append(fit_models(experiment, name, measure=measure, executor="serial", host=host, validate=True))
    by_key = [{(m.callpath, m.metric): m for m in s.models} for s in sets]
    models, chosen = [], {}
    for m in sets[0].models:
        key = (m.callpath, m.metric)
        scores = [b[key].validation if key in b and math.isfinite(b[key].validation) else math.inf
                  for b in by_key]
        best = int(np.argmin(scores)) if any(math.isfinite(v) for v in scores) else 0
        models.append(by_key[best][key])
        chosen[key] = modelers[best]
    return models, chosen


# ------------------------------------------------------------------ target
def default_target(space) -> dict[str, float]:
    """One step beyond the largest candidate of every parameter: doubling sequences double, squares and cubes of
    evenly spaced whole numbers (27, 64, 125, 216, 343: LULESH's process counts) go on as such, others add a
    step."""
    target = {}
    for name, values in zip(space.parameters, space.values):
        if values.size < 2:
            target[name] = float(values[-1])
            continue
        last, before = float(values[-1]), float(values[-2])
        ratio = last / before if before > 0 else 0.0
        geometric = values.size >= 3 and before > 0 and values[-3] > 0 and math.isclose(
            ratio, before / float(values[-3]), rel_tol=1e-6) and ratio > 1
        if geometric:
            target[name] = last * ratio
        elif (power := _power_sequence(values[-3:])) is not None:
            root, step, degree = power
            target[name] = float((root + step) ** degree)
        else:
            target[name] = last + (last - before)
    return target


def _power_sequence(values: np.ndarray) -> tuple[int, int, int] | None:
    """(last root, step, degree) when the values are squares or cubes of evenly spaced whole numbers above 1."""
    if values.size < 3 or values[0] <= 1:
        return None
    for degree in (2, 3):
        roots = np.rint(values ** (1 / degree))
        steps = np.diff(roots)
        if np.array_equal(roots ** degree, values) and steps[0] > 0 and np.all(steps == steps[0]):
            return int(roots[-1]), int(steps[0]), degree
    return None
