"""Experiment design: which runs to do next, cheapest first (Ritter et al. 2020, Sections III-E and IV).

The heuristic of Ritter et al. ("Learning cost-effective sampling strategies
for empirical performance modeling"):

1. Measure the cheapest line of five values per parameter; the lines share
   one point, their corner (``5 + 4 (m - 1)`` points for ``m`` parameters).
2. Add the cheapest point not measured yet; with two or more parameters one
   such point is part of the base design (lines alone cannot tell additive
   from multiplicative effects).
3. Re-model with all points.  Quality check: the model made without the most
   expensive additional point predicts it within ``tolerance``.
4. Go back to 2 until the quality is reached or the budget is spent.

:func:`suggest` does one step of this loop on the measurements so far (none
at first) and says which runs to do next; :func:`run_design` drives the
whole loop with a measuring function (benchmarks, simulations).  Costs come
from a :class:`CostModel`; repetitions from :func:`advise_repetitions`.

A plan is written as JSON (``write_plan``/``load_plan``)::

    {"format": "extrap-plugins/plan", "version": 1,
     "parameters": ["p", "n"],
     "runs": [{"point": {"p": 4, "n": 1000}, "repetitions": 4, "cost": 4.0}, ...]}

``runs`` are in the order to measure them: the missing points of the base
design first, then additional points, each part cheapest first; ``point``
has one number per parameter (whole numbers written as integers),
``repetitions`` is how often to run the point, ``cost`` the cost model's
value for one run (one repetition).  A run that repeats a measured point says
from which repetition on (``"first_repetition": 2`` adds the third run; the
key is left out when it is 0).  ``suggest --export`` also writes each run's reason (``"why"``) and the step's
``"assessment"``: ``status`` (``base``, ``add``, ``done``, ``budget``, ``exhausted``), ``target``,
``share_measured`` and ``share_with_plan`` (of the full factorial's cost), ``widths`` and ``expected_widths``
(each judged kernel's relative half-width at the target, now and after the plan), ``not_judged`` and ``notes``;
``load_plan`` reads the runs and ignores the rest.
"""

from __future__ import annotations

import functools
import json
import math
import os
import pathlib
import re
import warnings
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from .errors import InputError
from .extrapolation import bound_metrics
from .experiment import RESOURCE_NAMES, Experiment, row_codes
from .formatting import (format_callpath, format_count, format_percent, format_point, format_share, format_value,
                         json_number, json_plain)
from .options import parse_share
from .plugins import get_host

PLAN_FORMAT = "extrap-plugins/plan"
PLAN_VERSION = 1
LINE = 5
"""Values per parameter line (Ritter et al. 2020 after Calotoiu et al. 2016: five per parameter)."""
TOLERANCE = 0.05
"""Largest relative error of the hold-out prediction at which the model is good enough."""
BASE_SHARE = 0.5
"""The uncertainty strategy plans as many of the advised repetitions as the whole base design with them can
have within this share of the budget (single runs when not even two fit): the rest is the selector's.
Measured in ``benchmarks/design.py --selector-points auto`` against ``auto-full`` (the whole budget): on
RELeARN 71.4 % of the kernels within ±10 % at 20 % against 28.6 / 42.9 %; three quarters lost RELeARN's
20 % target too (``benchmarks/design-history.md``)."""
EXHAUSTED = "every candidate point is measured: give further values with --param (towards the target) to go on"
"""The note when nothing is left to measure (status ``"exhausted"``)."""
REPEATING = ("every candidate point is measured: the plan repeats measured points (up to {cap} runs each); further "
             "values with --param (towards the target) would tell more of the models' shape")
"""The note when the uncertainty strategy, every candidate point measured, plans repetitions of measured points."""
REPEATING_NOISY = ("no further new point fits the budget: the plan repeats measured points (up to {cap} runs each) "
                   "for the kernels whose single runs vary by ±{quiet} or more of the value at the target")
"""The note when no new point fits the budget and the noisy kernels get repetitions of measured points."""
INSIDE = ("1: the target lies within the candidate values of every parameter, where the points around it pin its "
          "value: single runs cover more of them (repetitions of measured points follow once every candidate point "
          "is measured)")
"""The reason for single runs when the target lies inside the candidate values (:func:`target_inside`).  Beyond
them a run's noise is amplified by the extrapolation and the advised repetitions pay; inside, coverage does.
Measured in ``benchmarks/design.py`` (``--eval-corner``; ``benchmarks/design-history.md``, session 40): with the
evaluation at the grid's corner, left out, single runs gained on RELeARN at 50 % (71.4 / 78.6 against 66.7 /
66.7 % of the kernels within ±10 %) and on two of three held-out realistic draws, and lost on the third; with
the evaluation beyond the grid they lost on two of the same draws and gained on the third."""
BARELY = 0.1
"""A plan *barely* narrows the intervals it leaves open when it closes less than this share of the way from each
of their widths to the tolerance: the note on them then says so (with the widest's before and after), for the
budget is not what keeps them open."""
QUIET_NOISE = 0.01
"""Relative noise of one run below which a repetition tells the models little.  ``advise_repetitions`` halves
the repetitions below it.  When no new point fits the budget, only kernels whose single runs' noise, taken at
the candidate points in units of the prediction at the target
(:meth:`~extrap_plugins.selector.Assessment.scaled_run_noise`), is at least this much get repetitions of
measured points: a second run of a kernel that varies by 0.1 % tells the modeler its noise is tiny, and on
RELeARN `main()` then gets a trend that does not extrapolate (1.6 % off at the evaluation point with single
runs, 10.4 % with one repetition).  Measured against gating on the run's noise relative to its own value, which
also repeats the steep kernels' cheap points (``benchmarks/design-history.md``, session 38)."""
UNPRICED = "a run's measured time grows"
"""How the note of :func:`unpriced_growth` begins."""
UNPRICED_GROWTH = 4.0
"""A run's time growing this many times over a parameter's measured values that the cost model does not count
is said in a note (:func:`unpriced_growth`)."""
PAIRS = 3
"""When no new point fits the budget, the noisy kernels get repetitions of measured points only if the budget left
pays for one at each of this many of the cheapest measured points, and a plan of repetitions where no point is
repeated yet repeats this many points (:func:`_with_pairs`): the noise the modeler reads from one or two pairs
misleads it (a second run at two points of a nearly constant kernel, ±2 % noise, gave a p³·log2(p)² term 558 % off
at the target; ``benchmarks/design-history.md``, session 39)."""


# ---------------------------------------------------------------------- plans
@dataclass(frozen=True)
class Run:
    """One point to measure: ``point`` maps parameter names to values."""

    point: Mapping[str, float]
    repetitions: int
    cost: float
    role: str = ""
    """Why this run: ``line p``, ``corner``, ``additional`` (not written to plan files)."""
    first: int = 0
    """The repetition its first run is (the runs the point already has): a run of a measured point adds
    repetitions ``first`` … ``first + repetitions - 1``."""
    serves: tuple[tuple[str, float, float], ...] = ()
    """The kernels a run the selector planned narrows most, by their whole names: (kernel, relative half-width
    at the target before, expected after); ``role`` says the same for people, with long names shortened."""


@dataclass
class Plan:
    """Runs to do, cheapest first."""

    parameters: tuple[str, ...]
    runs: list[Run] = field(default_factory=list)


def parse_tolerance(value: float | str) -> float:
    """The stopping rule's tolerance, a share given as ``0.05`` or ``"5%"``
    (:func:`~extrap_plugins.options.parse_share`)."""
    try:
        return parse_share(value, "--tolerance")
    except ValueError as error:
        raise InputError(str(error)) from None


def plan_document(plan: Plan, suggestion: Suggestion | None = None) -> dict:
    """The plan as the JSON document described in the module docstring; with the ``suggestion`` it came from,
    each run's reason (``why``) and the step's ``assessment`` (status, target, shares, intervals, notes), for
    scripts that drive the loop themselves (a batch scheduler instead of ``autotune``)."""
    document = {
        "format": PLAN_FORMAT,
        "version": PLAN_VERSION,
        "parameters": list(plan.parameters),
        "runs": [run_document(run, plan.parameters, why=suggestion is not None) for run in plan.runs],
    }
    if suggestion is None:
        return document
    return document | {"assessment": {
        "status": suggestion.status,
        "strategy": suggestion.strategy,
        "target": None if suggestion.target is None else {k: json_plain(v) for k, v in suggestion.target.items()},
        "share_measured": json_number(suggestion.measured_share),
        "share_with_plan": json_number(suggestion.share),
        "widths": {k: json_number(v) for k, v in (suggestion.widths or {}).items()},
        "expected_widths": {k: json_number(v) for k, v in (suggestion.predicted or {}).items()},
        "not_judged": dict(suggestion.not_judged or {}),
        "notes": list(suggestion.notes),
    }}


def run_document(run: Run, parameters: Sequence[str], why: bool = False) -> dict:
    """One run as plan files (and ``autotune.json``) hold it; ``first_repetition`` only when it is not 0; ``why``:
    with its reason (``suggest --export``, ``autotune.json``)."""
    document = {"point": {name: json_plain(run.point[name]) for name in parameters},
                "repetitions": int(run.repetitions), "cost": float(run.cost)}
    serves = [{"kernel": name, "half_width": json_number(before), "expected_half_width": json_number(after)}
              for name, before, after in run.serves]
    return (document | ({"first_repetition": int(run.first)} if run.first else {})
            | ({"why": run.role} if why else {}) | ({"serves": serves} if why and serves else {}))


def write_plan(path: str | os.PathLike, plan: Plan, suggestion: Suggestion | None = None) -> None:
    """Write ``plan`` to ``path`` as JSON (replacing the file only when complete); with the ``suggestion`` it
    came from, its reasons and assessment too (:func:`plan_document`)."""
    target = pathlib.Path(path)
    if target.is_dir():
        raise InputError("is a folder; the plan is one file", target)
    if not (target.parent if str(target.parent) else pathlib.Path(".")).is_dir():
        raise InputError("the folder for the plan does not exist", target)
    from .files import write_atomically

    write_atomically(target, (json.dumps(plan_document(plan, suggestion), indent=1, ensure_ascii=False) + "\n")
                     .encode("utf-8"))


def load_plan(path: str | os.PathLike) -> Plan:
    """Read a plan file written by :func:`write_plan` (or by hand), checking every field.

    Raises
    ------
    InputError
        Not JSON, another format or version, or a run that lacks a parameter,
        has a non-numeric value, fewer than one repetition or a negative cost; an empty name or a folder.
    """
    if not os.fspath(path).strip():  # (pathlib takes '' for '.', the current folder: ".: Is a directory")
        raise InputError(f"plan {os.fspath(path)!r} (--plan): expected the path of a plan file (JSON, as suggest "
                         "--export writes it)")
    path = pathlib.Path(path)
    if path.is_dir():
        raise InputError("is a folder; expected a plan file (JSON, as suggest --export writes it)", path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        line = getattr(error, "lineno", None)
        raise InputError(f"not a JSON plan: {getattr(error, 'msg', error)}", path, line) from None
    if not isinstance(document, dict) or document.get("format") != PLAN_FORMAT:
        found = document.get("format") if isinstance(document, dict) else type(document).__name__
        raise InputError(f"not a plan: expected \"format\": \"{PLAN_FORMAT}\", got {found!r}", path)
    if document.get("version") != PLAN_VERSION:
        raise InputError(f"plan version {document.get('version')!r} is not supported (expected {PLAN_VERSION})", path)
    parameters = document.get("parameters")
    if not isinstance(parameters, list) or not parameters or not all(isinstance(p, str) for p in parameters):
        raise InputError(f"\"parameters\" must be a non-empty list of names, got {parameters!r}", path)
    runs = document.get("runs")
    if not isinstance(runs, list):
        raise InputError(f"\"runs\" must be a list, got {type(runs).__name__}", path)
    plan = Plan(tuple(parameters))
    plan.runs = [run_from_document(entry, parameters, f"run {index + 1}", path) for index, entry in enumerate(runs)]
    return plan


def run_from_document(entry, parameters: Sequence[str], where: str, path: pathlib.Path) -> Run:
    """One run of a plan file (or of ``autotune.json``) as :func:`run_document` writes it, every field checked;
    ``where`` names it in the error (``run 3``).  Its ``serves`` are not read back (people's and scripts' to read)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("point"), dict):
        raise InputError(f"{where}: expected {{\"point\": {{...}}, \"repetitions\": N, \"cost\": X}}", path)
    point = entry["point"]
    if sorted(point) != sorted(parameters):
        raise InputError(f"{where}: the point has {sorted(point)}, expected the parameters {list(parameters)}", path)
    if not all(is_number(point[p]) for p in parameters):
        raise InputError(f"{where}: every parameter value must be a number, got {point}", path)
    repetitions = entry.get("repetitions")
    if not isinstance(repetitions, int) or isinstance(repetitions, bool) or not 1 <= repetitions <= MAX_REPETITIONS:
        raise InputError(f"{where}: repetitions must be a whole number from 1 to {MAX_REPETITIONS}, got "
                         f"{repetitions!r}", path)
    cost = entry.get("cost")
    if not is_number(cost) or cost < 0:
        raise InputError(f"{where}: cost must be a number >= 0, got {cost!r}", path)
    first = entry.get("first_repetition", 0)
    if not isinstance(first, int) or isinstance(first, bool) or first < 0:
        raise InputError(f"{where}: first_repetition must be a whole number >= 0, got {first!r}", path)
    why = entry.get("why", "")
    return Run({p: float(point[p]) for p in parameters}, repetitions, float(cost), why if isinstance(why, str) else "",
               first=first)


def is_number(value) -> bool:
    """A finite int or float (not a bool): what plan files and ``autotune.json`` hold as numbers."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)




# ------------------------------------------------------------------- costs
@dataclass(frozen=True)
class RunTime:
    """A run's time as a power law of the parameters, ``exp(log_scale) * prod(x_l ** exponent_l)``, fitted by
    least squares in logs to the measured runs' time (the sum of the root call paths' ``time``; a Score-P
    profile read with ``aggregation=strong`` sums every process's time, so count it as ``time`` alone there; with
    the default ``weak``, the mean over the processes, as ``p*time``)."""

    parameters: tuple[str, ...]
    log_scale: float
    exponents: tuple[float, ...]
    low: tuple[float, ...]
    """Each parameter's smallest measured value (with ``high``, the range the fit saw)."""
    high: tuple[float, ...]
    runs: int

    @classmethod
    def fit(cls, experiment: Experiment | None, parameters: Sequence[str]) -> RunTime | None:
        """The power law of the runs of ``experiment`` (its parameters in the order of ``parameters``); None
        without a ``time`` of a root call path above 0.  Parameters with one measured value get exponent 0, and
        all do while there are fewer runs than varying parameters + 2 (the mean of the logs: a constant)."""
        metrics = [m.name for m in experiment.metrics] if experiment is not None else []
        if "time" not in metrics:
            return None
        experiment = experiment.with_parameters(list(parameters))
        roots = [k for k, c in enumerate(experiment.callpaths) if c.parent is None]
        rows = (experiment.metric_index == metrics.index("time")) & np.isin(experiment.callpath_index, roots)
        runs, which = row_codes(np.column_stack([experiment.coordinates[rows], experiment.repetition[rows]]))
        seconds = np.bincount(which, weights=experiment.value[rows], minlength=len(runs))
        usable = (seconds > 0) & np.all(runs[:, :-1] > 0, axis=1)
        if not usable.any():
            return None
        points, seconds = runs[usable, :-1], seconds[usable]
        varying = [j for j in range(points.shape[1]) if np.unique(points[:, j]).size >= 2]
        if len(points) < len(varying) + 2:
            varying = []
        x = np.column_stack([np.ones(len(points)), np.log(points[:, varying])])
        solution = np.linalg.lstsq(x, np.log(seconds), rcond=None)[0]
        exponents = np.zeros(points.shape[1])
        exponents[varying] = solution[1:]
        return cls(tuple(parameters), float(solution[0]), tuple(exponents.tolist()),
                   tuple(points.min(axis=0).tolist()), tuple(points.max(axis=0).tolist()), len(points))

    def __call__(self, points: np.ndarray) -> np.ndarray:
        points = np.asarray(points, dtype=np.float64).reshape(-1, len(self.parameters))
        exponents = np.asarray(self.exponents)
        used = exponents != 0  # a parameter the time does not depend on may be 0 somewhere
        with np.errstate(all="ignore"):
            return np.exp(self.log_scale + np.log(points[:, used]) @ exponents[used])

    def __str__(self) -> str:
        factors = [f"{name}^{exponent:.2f}" for name, exponent in zip(self.parameters, self.exponents) if exponent]
        return " · ".join([f"{math.exp(self.log_scale):.3g}", *factors]) + " s"


@dataclass(frozen=True)
class CostModel:
    """The cost of one run at a point: ``scale * prod(x_l ** power_l) * run_time(x) ** time``.

    Ties (points of equal cost) are broken by the product of all parameter
    values: of two runs with the same process count, the smaller problem is
    taken first.
    """

    parameters: tuple[str, ...]
    powers: tuple[float, ...]
    scale: float = 1.0
    text: str = ""
    time: float = 0.0
    """The power of a run's time in the product (``p*time``: 1)."""
    run_time: RunTime | None = None
    """The time of a run at any point, fitted to the measured runs (:meth:`with_run_time`); None: 1."""
    no_time: str = "until runs with a time are measured"
    """Why the time counts 1, said by :meth:`describe` when ``run_time`` is None."""

    @classmethod
    def parse(cls, text: str | None, parameters: Sequence[str]) -> CostModel:
        """Build a cost model from text.

        ``None`` or ``""``: the product of the resource parameters (named like
        ``p``, ``procs``, ``ranks``, ``nodes``, ``threads``...), or of all
        parameters if none is; ``"p*n"``, ``"p^2*n"``, ``"2*p"``: a product of
        parameter powers and numbers; ``"uniform"`` or ``"1"``: every run costs 1;
        ``time`` (unless a parameter has that name) is a run's time, ``p*time``
        its core-seconds (:class:`RunTime`, fitted to the measured runs; 1 before any).

        Examples
        --------
        >>> CostModel.parse(None, ["p", "n"]).text
        'p'
        >>> CostModel.parse("p*n^2", ["p", "n"])(np.array([[4.0, 10.0]])).tolist()
        [400.0]
        """
        parameters = tuple(parameters)
        if text is not None and not isinstance(text, str):
            raise InputError(f"--cost {text!r}: expected text such as 'p*n', 'p^2' or 'p*time', or 'uniform'")
        if text is None or not text.strip():
            chosen = [p for p in parameters if p.lower() in RESOURCE_NAMES] or list(parameters)
            return cls(parameters, tuple(1.0 if p in chosen else 0.0 for p in parameters), 1.0, "*".join(chosen))
        spec = text.strip()
        if spec.lower() == "uniform":
            spec = "1"
        powers = dict.fromkeys(parameters, 0.0)
        scale, time = 1.0, 0.0
        for factor in re.split(r"\s*(?<!\*)\*(?!\*)\s*", spec):  # "*" but not "**"
            match = re.fullmatch(r"([A-Za-z_][\w.]*)(?:\s*(?:\^|\*\*)\s*([-+]?\d+(?:\.\d+)?))?", factor)
            if match and match.group(1) in powers:
                powers[match.group(1)] += float(match.group(2) or 1)
                continue
            if match and match.group(1) == "time":
                time += float(match.group(2) or 1)
                continue
            try:
                scale *= float(factor)
            except ValueError:
                known = ", ".join(parameters)
                raise InputError(
                    f"--cost {text!r}: {factor!r} is neither a parameter ({known}), time nor a number; "
                    f"expected a product such as 'p*n', 'p^2' or 'p*time', or 'uniform'"
                ) from None
        if not math.isfinite(scale) or scale <= 0:
            raise InputError(f"--cost {text!r}: the factor must be a positive number")
        return cls(parameters, tuple(powers[p] for p in parameters), scale, text.strip(), time)

    def __call__(self, points: np.ndarray) -> np.ndarray:
        """Cost per run, points shape (n_points, n_params) -> shape (n_points,)."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, len(self.parameters))
        with np.errstate(all="ignore"):
            cost = self.scale * np.prod(np.power(points, np.asarray(self.powers)[None, :]), axis=1)
            if self.time and self.run_time is not None:
                cost = cost * self.run_time(points) ** self.time
            return cost

    def with_run_time(self, experiment: Experiment | None) -> CostModel:
        """This cost model with a run's time fitted to ``experiment`` where it counts time (else itself)."""
        if not self.time:
            return self
        if experiment is not None and len(experiment) and "time" not in [m.name for m in experiment.metrics]:
            names = ", ".join(m.name for m in experiment.metrics[:4]) + (", ..." if len(experiment.metrics) > 4 else "")
            return replace(self, run_time=None, no_time=f"the runs have no metric 'time' ({names})")
        return replace(self, run_time=RunTime.fit(experiment, self.parameters))

    def describe(self) -> str:
        """``p*time (time: 1.2e-05 · p^-0.98 · n^1.01 s, fitted to 12 runs)``: the text, and the time it uses."""
        text = self.text or "1"
        if not self.time:
            return text
        if self.run_time is None:
            return f"{text} (time: 1, {self.no_time})"
        return f"{text} (time: {self.run_time}, fitted to {format_count(self.run_time.runs, 'run')})"

    def order(self, points: np.ndarray) -> np.ndarray:
        """Indices of ``points`` from cheapest to dearest (ties: smaller product of all values first)."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, len(self.parameters))
        secondary = np.prod(np.abs(points), axis=1)
        return np.lexsort(tuple(points[:, ::-1].T) + (secondary, self(points)))


# ------------------------------------------------------------- the space
@dataclass(frozen=True)
class Space:
    """Candidate values per parameter; the design space is their full factorial."""

    parameters: tuple[str, ...]
    values: tuple[np.ndarray, ...]

    @classmethod
    def of(cls, candidates: Mapping[str, Iterable[float]]) -> Space:
        names, values = [], []
        for name, given in candidates.items():
            try:  # a string is no list of values (its characters would be), nor is a number alone
                if isinstance(given, (str, bytes)):
                    raise TypeError
                array = np.unique(np.asarray(list(given), dtype=np.float64))
            except (TypeError, ValueError):
                raise InputError(f"parameter {name}: expected a list of numbers as candidate values, got "
                                 f"{given!r}") from None
            if array.size == 0 or not np.all(np.isfinite(array)):
                raise InputError(f"parameter {name}: expected finite candidate values, got {list(given)}")
            names.append(str(name))
            values.append(array)
        if not names:
            raise InputError("no parameters: give candidate values such as --param p=4,8,16,32,64")
        return cls(tuple(names), tuple(values))

    @classmethod
    def from_experiment(cls, experiment: Experiment, extra: Mapping[str, Iterable[float]] | None = None) -> Space:
        """The measured values of each parameter, joined with ``extra`` candidates; a parameter the reader left
        out for having one value in every run (``experiment.constants``) is one of them when ``extra`` gives it
        values, and one measured at one value that ``extra`` does not name is not (the reader keeps every
        parameter of runs at one point: p = 1 of a program run without process counts); the design's experiment
        is then ``experiment.with_parameters(space.parameters)``."""
        extra = dict(extra or {})
        names = experiment.parameter_names + [n for n in experiment.constants if n in extra]
        if extra:
            single = experiment.single_valued()
            names = [n for n in names if n in extra or n not in single]
        if len(names) > len(experiment.parameter_names):  # one comes back: the order --param gives, as autotune's
            names = [n for n in extra if n in names] + [n for n in names if n not in extra]
        unknown = [name for name in extra if name not in names]
        if unknown:
            raise InputError(
                f"{experiment.source}: no parameter {', '.join(map(repr, unknown))}; "
                f"the parameters are {', '.join(experiment.parameter_names)}"
            )
        experiment = experiment.with_parameters(names)
        return cls.of({
            name: np.concatenate([np.unique(experiment.coordinates[:, param]),
                                  np.asarray(list(extra.get(name, ())), float)])
            for param, name in enumerate(names)
        })

    def grid(self) -> np.ndarray:
        """Every combination, shape (n_points, n_params), the last parameter varying fastest."""
        mesh = np.meshgrid(*self.values, indexing="ij")
        return np.stack([m.reshape(-1) for m in mesh], axis=1)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(v.size for v in self.values)

    @property
    def varied(self) -> tuple[str, ...]:
        """The parameters of more than one candidate value: those the design varies and the models have (one of
        one value is a constant, which the readers leave out of the models; it counts neither for the advised
        repetitions nor for lines and a point off them)."""
        return tuple(name for name, values in zip(self.parameters, self.values) if values.size > 1)


def cheapest_cross(space: Space, cost: np.ndarray, line: int = LINE) -> np.ndarray:
    """The cheapest corner and lines of ``line`` values per parameter through it.

    Parameters
    ----------
    space : Space
    cost : ndarray, shape (n_points,)
        Cost of each grid point (in :meth:`Space.grid` order); 0 for points
        already measured, so that a design reuses them.  A tiny tie-breaking
        term may be added by the caller.
    line : int
        Values per line (all values of a parameter that has fewer).

    Returns
    -------
    ndarray of int: grid indices of the corner and its lines, without repeats.
    The corner minimises ``cost(corner) + sum over parameters of the
    cheapest line - 1 other values along that parameter``; computed for every
    corner at once.
    """
    shape = space.shape
    C = np.asarray(cost, dtype=np.float64).reshape(shape)
    total = C.copy()
    for axis, size in enumerate(shape):
        k = min(line, size) - 1
        if k <= 0:
            continue
        ordered = np.sort(C, axis=axis)
        cheapest = np.take(ordered, np.arange(k), axis=axis).sum(axis=axis, keepdims=True)
        kth = np.take(ordered, [k - 1], axis=axis)
        next_one = np.take(ordered, [k], axis=axis)  # k <= size - 1
        # The corner's own value is on the line: if it is among the k cheapest others,
        # the line takes the next one instead.
        own_inside = C <= kth
        with np.errstate(invalid="ignore"):  # an excluded point costs inf: inf - inf in the branch not taken
            total = total + np.where(own_inside, cheapest - C + next_one, cheapest)
    corner = np.unravel_index(int(np.argmin(np.nan_to_num(total, nan=np.inf))), shape)
    chosen = {int(np.ravel_multi_index(corner, shape))}
    for axis, size in enumerate(shape):
        index = list(corner)
        along = [C[tuple(index[:axis] + [i] + index[axis + 1:])] for i in range(size)]
        others = [i for i in np.argsort(along, kind="stable") if i != corner[axis]][: min(line, size) - 1]
        for i in others:
            index[axis] = int(i)
            chosen.add(int(np.ravel_multi_index(tuple(index), shape)))
    return np.array(sorted(chosen), dtype=np.int64)


# ------------------------------------------------------------ repetitions
def advise_repetitions(n_params: int, noise: float | None = None, counters: bool = False) -> tuple[int, str]:
    """How often to repeat each run (Ritter et al. 2020, Sections III-B and IV).

    Two repetitions for one parameter, four for two or three, six beyond;
    counters (exactly reproducible metrics) and measured noise below 1 % need
    half as many (one for exact counters); measured noise above 5 % two more.

    Returns
    -------
    (repetitions, reason)

    Examples
    --------
    >>> advise_repetitions(2)
    (4, '4 for 2 parameters (Ritter et al. 2020)')
    >>> advise_repetitions(3, noise=0.08)[0]
    6
    """
    base = 2 if n_params <= 1 else 4 if n_params <= 3 else 6
    reason = f"{base} for {n_params} parameter{'s' if n_params != 1 else ''} (Ritter et al. 2020)"
    if counters and (noise is None or noise == 0):
        return 1, "1: the metrics are exact counters"
    if counters or (noise is not None and noise < QUIET_NOISE):
        halved = max(1, base // 2)
        # two decimals, rounded away from the threshold, so that the number said agrees with "below" (0.997 % is
        # not "±1.0%"); the same for "exceeds"
        why = "counters" if counters else f"measured noise ±{math.floor(noise * 1e4) / 1e4:.2%} is below 1 %"
        return halved, f"{halved}: {reason}, halved because {why}"
    if noise is not None and noise > 0.05:
        return base + 2, (f"{base + 2}: {reason}, plus 2 because measured noise ±{math.ceil(noise * 1e4) / 1e4:.2%} "
                          f"exceeds 5 %")
    if noise is not None:
        return base, f"{reason}; measured noise ±{noise:.1%}"
    return base, reason


def measured_noise(experiment: Experiment) -> float | None:
    """Median over series and points of half the range of the repetitions relative to their mean; over the
    series of metrics that are not exact counters where there are any (the byte and visit counts of the
    instrument shim repeat exactly and would hide the noise of its times), and over the series whose
    repetitions differ somewhere where there are any (exact all the same: a Caliper profile's block size or
    bytes per repetition, metadata of unknown kind); 0 when every series repeats exactly.

    ``None`` when no point was measured more than once.
    """
    timed = np.array([metric.kind != "count" for metric in experiment.metrics], dtype=bool)[experiment.metric_index]
    if timed.any() and not timed.all():
        experiment = experiment.take(timed)
    spreads, exact = [], False
    for group in experiment.series_groups():
        values = group.values
        repeated = np.sum(~np.isnan(values), axis=2) >= 2
        if values.shape[2] < 2 or not repeated.any():
            continue
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nanmean(values, axis=2)
            half = (np.nanmax(values, axis=2) - np.nanmin(values, axis=2)) / 2
            relative = np.where(np.abs(mean) > 0, half / np.abs(mean), 0.0)
        varies = np.any(repeated & (relative > 0), axis=1)
        exact = exact or not varies.all()
        spreads.append(relative[varies][repeated[varies]])
    spreads = [spread for spread in spreads if spread.size]
    if not spreads:
        return 0.0 if exact else None
    return float(np.median(np.concatenate(spreads)))


# ------------------------------------------------------------- suggesting
@dataclass
class Suggestion:
    """The outcome of one step of the design loop.

    ``plan`` holds the runs to do next (empty when the quality is reached or
    the budget is spent); ``status`` is ``"base"`` (lines still missing),
    ``"add"`` (more points needed), ``"done"`` (quality reached),
    ``"budget"`` (nothing more fits) or ``"exhausted"`` (every candidate
    point is measured: more values are needed to go on).  Costs are in the cost model's units and count
    every run (a point measured four times costs four runs); ``full_cost`` is the full factorial's, every
    point with ``reference_repetitions`` runs, the measure of a budget's share.
    """

    plan: Plan
    status: str
    cost_model: CostModel
    repetitions: int
    repetitions_reason: str
    full_cost: float
    full_points: int
    measured_cost: float
    measured_points: int
    reference_repetitions: int = 1
    """Runs per point of the full factorial that a budget's share is of."""
    noise: float | None = None
    holdout: dict | None = None
    notes: list[str] = field(default_factory=list)
    strategy: str = "cheapest"
    target: dict[str, float] | None = None
    """The point the uncertainty strategy judges the models at."""
    widths: dict[str, float] | None = None
    """Relative half-width of each judged kernel's interval at the target, before the plan."""
    predicted: dict[str, float] | None = None
    """The same after the planned runs, as the selector expects them."""
    not_judged: dict[str, str] | None = None
    """Kernels left out of the stopping rule, with the reason."""
    budget_limit: float = math.inf
    budget_points: int | None = None
    """A budget of points: at most this many (``budget_limit`` is then infinite)."""
    """The cost the budget allows (infinite without a cost budget)."""
    space: Space | None = field(default=None, repr=False, compare=False)
    """The candidate values the plan was made from."""

    def __str__(self) -> str:
        """What ``extrap-plugins suggest`` prints."""
        from .design_output import format_suggestion

        return format_suggestion(self)

    def __repr__(self) -> str:
        runs = format_count(sum(run.repetitions for run in self.plan.runs), "run")  # a point's repetitions each
        return f"<Suggestion {self.status}: {runs} planned, {self.share:.1%} of the full factorial's cost with them>"

    def _repr_html_(self) -> str:
        """A notebook shows the text ``suggest`` prints."""
        import html

        return f"<pre>{html.escape(str(self))}</pre>"

    @property
    def planned_cost(self) -> float:
        return float(sum(run.cost * run.repetitions for run in self.plan.runs))

    @property
    def measured_share(self) -> float:
        """Cost of the measured points as a share of the full factorial's."""
        return self.measured_cost / self.full_cost if self.full_cost > 0 else 0.0

    @property
    def share(self) -> float:
        """Cost of measured plus planned points as a share of the full factorial's."""
        return (self.measured_cost + self.planned_cost) / self.full_cost if self.full_cost > 0 else 0.0


EXTREMES_NOTE = ("not judged unless named with --metric: {metrics} (minima and maxima over visits or ranks, the "
                 "noisiest statistics a profile holds: a loop judging them never stopped on an mpi4py stencil, its "
                 "widest interval always a visit_time_min)")
"""The note for the metrics :func:`suggest` leaves out of its judgement by default."""

FEW_VALUES = "fewer than {line} candidate values; give more with --param for a trustworthy model"
"""The note, after the parameters' names, for parameters of fewer candidate values than a line has."""


def is_space_note(note: str) -> bool:
    """Whether ``note`` is one that every suggestion makes afresh about the candidates and the metrics
    (:data:`EXTREMES_NOTE`, :data:`FEW_VALUES`), not about the base design or the plan."""
    return note.startswith(EXTREMES_NOTE.partition("{")[0]) or note.endswith(FEW_VALUES.partition("}")[2])


@dataclass(frozen=True)
class Budget:
    """A limit on the whole design: a share of the full factorial's cost, a cost in the cost model's units,
    or a number of points."""

    share: float | None = None
    points: int | None = None
    cost: float | None = None

    @classmethod
    def parse(cls, text: str | float | int | None) -> Budget | None:
        """``"15%"`` or ``0.15``: a share of the full factorial cost; ``"400u"``: 400 in the cost model's
        units; ``20``: at most 20 points.

        Examples
        --------
        >>> Budget.parse("15%"), Budget.parse("20"), Budget.parse("400u")
        (Budget(share=0.15, points=None, cost=None), Budget(share=None, points=20, cost=None), \
Budget(share=None, points=None, cost=400.0))
        """
        if text is None:
            return None
        raw = str(text).strip()
        try:
            if not raw:
                raise ValueError
            if raw.endswith("%"):
                share = float(raw[:-1]) / 100
            elif raw.lower().endswith("u"):
                cost = float(raw[:-1])
                if not math.isfinite(cost) or cost <= 0:
                    raise InputError(f"--budget {raw!r}: a cost must be a positive number of the cost model's units")
                return cls(cost=cost)
            else:
                number = float(raw)
                if number > 1:
                    if not number.is_integer():
                        raise ValueError
                    return cls(points=int(number))
                share = number
        except ValueError:
            raise InputError(
                f"--budget {raw!r}: expected a share of the full factorial cost (15% or 0.15), "
                f"a cost in the cost model's units (400u) or a number of points (20)"
            ) from None
        if not 0 < share <= 1:
            raise InputError(f"--budget {raw!r}: a share must be above 0 % and at most 100 %")
        return cls(share=share)

    def limit(self, full_cost: float) -> float:
        """The cost this budget allows (infinite for a budget of points)."""
        if self.share is not None:
            return self.share * full_cost
        if self.cost is not None:
            return self.cost
        return math.inf


def check_modeler(modeler: str, options: Mapping[str, object], parameters: Sequence[str], host=None):
    """The host, once ``modeler`` is known and takes ``options`` (else an :class:`InputError`): checked before
    anything is planned, since a base design planned (and, in ``autotune``, run) before a misspelt ``--modeler``
    or ``--option`` is found would spend the user's machine time."""
    host = host or get_host()
    host.build_modeler(modeler, options, tuple(parameters))
    return host


def unpriced_growth(experiment: Experiment | None, cost_model: CostModel) -> str | None:
    """A note when a run's measured time grows with a parameter the cost model does not count.

    A power law fitted to the measured runs' time (:class:`RunTime`) gives each parameter's exponent.  Where
    one the cost model leaves out makes the time grow :data:`UNPRICED_GROWTH` times or more over its measured
    values, the budget takes its large values for cheap runs: the note says so and names the cost that would
    count it.  A cost model with ``time`` counts it already.
    """
    if cost_model.time or experiment is None:
        return None
    fitted = RunTime.fit(experiment, cost_model.parameters)
    if fitted is None:
        return None
    for name, power, exponent, low, high in zip(fitted.parameters, cost_model.powers, fitted.exponents, fitted.low,
                                                fitted.high):
        growth = (high / low) ** exponent
        if power == 0 and growth >= UNPRICED_GROWTH:
            rounded = max(round(exponent * 2) / 2, 0.5)
            factor = name if rounded == 1 else f"{name}^{rounded:g}"
            priced = cost_model.text if cost_model.text.lower() not in ("", "1", "uniform") else ""
            cost = f"{priced}*{factor}" if priced else factor
            timed = f"{priced}*time" if priced else "time"
            return (f"{UNPRICED} about like {name}^{exponent:.2f} (×{growth:.0f} from {name}={format_value(low)} "
                    f"to {name}={format_value(high)}), which the cost model ({cost_model.text or 'uniform'}) does not "
                    f"count: the budget takes large {name} for cheap runs; --cost '{cost}' would count it, "
                    f"--cost '{timed}' the time itself")
    return None


def suggest(
    space: Space,
    experiment: Experiment | None = None,
    *,
    cost: str | CostModel | None = None,
    budget: str | float | Budget | None = None,
    repetitions: int | None = None,
    tolerance: float | str = TOLERANCE,
    modeler: str = "default",
    measure: str = "mean",
    metrics: Iterable[str] = (),
    callpaths: Iterable[str] = (),
    line: int = LINE,
    strategy: str = "uncertainty",
    target: Mapping[str, float] | str | None = None,
    exclude: Iterable[Sequence[float]] = (),
    host=None,
    progress: Callable[[int, int], None] | None = None,
    **options,
) -> Suggestion:
    """One step of the design loop: the runs to do next.

    ``strategy="uncertainty"`` (the default, :mod:`extrap_plugins.selector`): the base design that fits
    the budget, then (for a target beyond the candidate values, while an interval is open) the point nearest the
    target (:func:`nearest_candidate`), then the runs of largest expected reduction of the interval at ``target``
    per unit of cost, merged over the kernels; done when every judged kernel's interval at the target is within
    ``tolerance``.  ``strategy="cheapest"``: Ritter et al.'s (2020) heuristic, cheapest points first until the
    hold-out check passes.

    Parameters
    ----------
    space : Space, mapping or Experiment
        Candidate values; the measured points of ``experiment`` must lie in it
        (:meth:`Space.from_experiment` makes sure they do).  A mapping such as
        ``{"p": [4, 8, 16], "n": [...]}`` is joined with the measured values (as ``--param``);
        an Experiment alone stands for its measured values and itself.
    experiment : Experiment, optional
        The measurements so far.
    cost : str or CostModel
        See :meth:`CostModel.parse`; default: the resource parameters.
    budget : see :meth:`Budget.parse`.  With a budget, the plan is filled with
        further cheapest points up to it (measure them in order and stop when
        the quality is reached); without, it holds only the next step.  A share
        is of the full factorial with every point measured the advised number of
        times (:func:`advise_repetitions` without the measured noise) or
        ``repetitions`` times; every run counts.
    repetitions : int, optional
        Overrides :func:`advise_repetitions`.  Without it the uncertainty
        strategy plans as many of the advised repetitions as the whole base
        design can have within half the budget (:func:`base_cost`,
        :data:`BASE_SHARE`), single runs when not even two fit, and single runs
        for a ``target`` inside the candidate values (:func:`target_inside`).
    tolerance : float
        Quality goal: relative error of the hold-out prediction.
    modeler, measure, metrics, callpaths, host, **options
        How the quality check models the measurements (as :func:`extrap_plugins.model`).  Without ``metrics``
        every metric is judged but those that come as a minimum and its maximum (``visit_time_min`` and
        ``visit_time_max``, ``Min time/rank`` and ``Max time/rank``: :data:`EXTREMES_NOTE`), which are judged when
        named.
    target : mapping or "p=...,n=...", optional
        Uncertainty strategy: where the models must be accurate (default: one step beyond the
        largest candidate of every parameter).
    exclude : points never to plan (for instance an evaluation point).
    progress : callable(fitted, more), optional
        Uncertainty strategy: told of the modeling work (see :func:`extrap_plugins.selector.assess`).

    Returns
    -------
    Suggestion
    """
    if strategy not in ("uncertainty", "cheapest"):
        raise InputError(f"--strategy {strategy!r}: expected uncertainty or cheapest")
    if isinstance(target, str) and not target.strip():  # none given (as `model --target ''`): the default target
        target = None
    space, experiment = _as_space(space, experiment)
    parameters = space.parameters
    if experiment is not None and list(experiment.parameter_names) != list(parameters):
        # in the design's order; a parameter the reader left out for its one value comes back (Experiment.constants)
        # and one of one value the design does not vary is left out
        have = set(experiment.parameter_names) - (set(experiment.single_valued()) - set(parameters))
        if not have <= set(parameters) or not set(parameters) <= have | set(experiment.constants):
            raise InputError(f"the parameters are {experiment.parameter_names}, the design's {list(parameters)}",
                             experiment.source or None)
        experiment = experiment.with_parameters(parameters)
    tolerance = parse_tolerance(tolerance)
    host = check_modeler(modeler, options, parameters, host)
    cost_model = cost if isinstance(cost, CostModel) else CostModel.parse(cost, parameters)
    cost_model = cost_model.with_run_time(experiment)
    budget = budget if isinstance(budget, Budget) or budget is None else Budget.parse(budget)
    grid = space.grid()
    costs = cost_model(grid)
    if not np.all(np.isfinite(costs)) or np.any(costs < 0):
        bad = grid[np.flatnonzero(~np.isfinite(costs) | (costs < 0))[0]]
        raise InputError(f"the cost model {cost_model.describe()} gives negative or infinite costs on this space, "
                         f"at {format_point(bad, parameters, brackets=True)} first (--cost uniform counts every run "
                         f"as 1)", experiment.source if experiment is not None and experiment.source else None)
    order = cost_model.order(grid)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    runs_at, next_repetition = _measured_runs(grid, experiment)
    measured = runs_at > 0
    selected, extremes = None, []
    if experiment is not None:
        selected = experiment.select(metrics=metrics, callpaths=callpaths)
        if not metrics:
            names = [m.name for m in selected.metrics]
            extremes = bound_metrics(names)
            if extremes and len(extremes) < len(names):
                selected = selected.select(metrics=[n for n in names if n not in extremes])
            else:
                extremes = []
    noise = measured_noise(selected) if selected is not None and len(selected) else None
    counters = selected is not None and len(selected) > 0 and all(
        selected.metrics[int(i)].kind == "count" for i in np.unique(selected.metric_index))
    inside = strategy == "uncertainty" and target is not None and target_inside(space, target)
    repetitions, reason, reference = _repetitions(space, costs, repetitions, noise, counters, strategy, budget, line,
                                                  inside)
    full_cost = reference * float(costs.sum())

    # Measured points are free; a tiny rank term breaks ties the cost model's way.
    effective = np.where(measured, 0.0, costs) + rank * (np.min(costs[costs > 0]) if (costs > 0).any() else 1.0) * 1e-9
    base = np.zeros(grid.shape[0], dtype=bool)
    base[cheapest_cross(space, effective, line)] = True
    roles = _roles(grid, base, space, effective)
    notes = [EXTREMES_NOTE.format(metrics=", ".join(extremes))] if extremes else []
    short = [name for name, values in zip(parameters, space.values) if 1 < values.size < line]
    if short:
        notes.append(f"{', '.join(short)} {'has' if len(short) == 1 else 'have'} {FEW_VALUES.format(line=line)}")
    suggestion = Suggestion(
        plan=Plan(parameters), status="base", cost_model=cost_model, repetitions=repetitions,
        repetitions_reason=reason, full_cost=full_cost, full_points=int(grid.shape[0]),
        measured_cost=float(np.sum(costs * runs_at)), measured_points=int(measured.sum()),
        reference_repetitions=reference, noise=noise, notes=notes, space=space,
    )

    if strategy == "uncertainty":
        result = _suggest_uncertainty(
            space, grid, costs, (runs_at, next_repetition), order, rank, effective, suggestion, selected,
            budget=budget, tolerance=tolerance, target=target, exclude=exclude, modeler=modeler, measure=measure,
            host=host, line=line, options=options, progress=progress)
    else:
        result = _suggest_cheapest(grid, costs, measured, base, order, rank, roles, suggestion, selected, budget=budget,
                                   tolerance=tolerance, modeler=modeler, measure=measure, host=host, options=options)
    unpriced = unpriced_growth(experiment, cost_model)
    if unpriced:  # last: what the plan does comes first
        result.notes.append(unpriced)
    return result


def _suggest_cheapest(grid, costs, measured, base, order, rank, roles, suggestion: Suggestion, selected, *, budget,
                      tolerance, modeler, measure, host, options) -> Suggestion:
    """Ritter et al.'s (2020) heuristic: the base design, then the cheapest point not measured until the model
    without a measured point predicts it within ``tolerance``."""
    parameters, repetitions = suggestion.plan.parameters, suggestion.repetitions
    missing = base & ~measured
    off = off_the_lines(grid, np.flatnonzero(base))
    extra_needed = len(suggestion.space.varied) > 1 and not (measured & off).any()
    unmeasured = [int(i) for i in order if not measured[i]]
    if missing.any() or extra_needed:
        chosen = [i for i in unmeasured if missing[i]]
        if extra_needed:
            chosen += [i for i in unmeasured if off[i]][:1]
        suggestion.status = "base"
    else:
        held = _holdout_point(grid, measured, base, order)
        if held is not None and selected is not None and len(selected):
            suggestion.holdout = holdout_check(selected, grid[held], modeler=modeler, measure=measure, host=host,
                                               **options)
            if suggestion.holdout["worst"] <= tolerance:
                suggestion.status = "done"
                suggestion.notes.append(
                    f"quality reached: the model without {format_point(grid[held], parameters, brackets=True)} "
                    "predicts it within "
                    f"{suggestion.holdout['worst']:.1%} (tolerance {format_percent(tolerance)})"
                )
                return suggestion
        suggestion.status = "add"
        chosen = unmeasured[:1]
    if not chosen:
        suggestion.status = "exhausted"
        suggestion.notes.append(EXHAUSTED)
        return suggestion
    chosen = _fit_budget(chosen, unmeasured, costs, measured, budget, suggestion)
    # The base design first (a model needs all of it), then the additional points; each cheapest first.
    suggestion.plan.runs = [
        Run({name: float(grid[i, param]) for param, name in enumerate(parameters)}, repetitions, float(costs[i]),
            roles[i])
        for i in sorted(chosen, key=lambda i: (not base[i], rank[i]))
    ]
    if not suggestion.plan.runs and suggestion.status != "done":
        suggestion.status = "budget"
        limit = budget.limit(suggestion.full_cost) if budget is not None else math.inf
        if suggestion.measured_cost >= limit:
            suggestion.budget_limit = limit
            suggestion.notes.append(f"{_spent(suggestion)}: nothing is left to spend")
    return suggestion


def _as_space(space, experiment: Experiment | None) -> tuple[Space, Experiment | None]:
    """The candidates ``suggest`` was given as a Space, a mapping of candidate values or an Experiment; either
    experiment may be a path (or several), read as :func:`extrap_plugins.read` reads it."""
    from .api import read

    if isinstance(space, (str, os.PathLike)) or (isinstance(space, (list, tuple)) and space
                                                  and all(isinstance(s, (str, os.PathLike)) for s in space)):
        space = read(space)
    if isinstance(experiment, (str, os.PathLike, list, tuple)):
        experiment = read(experiment)
    if isinstance(space, Experiment) and experiment is None:
        return Space.from_experiment(space), space
    if isinstance(space, Mapping):
        return (Space.from_experiment(experiment, space) if experiment is not None else Space.of(space)), experiment
    if not isinstance(space, Space):
        raise InputError(f"suggest: the candidates are a {type(space).__name__}; expected a Space, candidate values "
                         "per parameter ({'p': [4, 8, 16], ...}) or an Experiment")
    return space, experiment


def holdout_check(experiment: Experiment, point: np.ndarray, *, modeler: str = "default", measure: str = "mean",
                  host=None, **options) -> dict:
    """Model without ``point`` and compare the prediction there with the measurement.

    Parameters
    ----------
    experiment : Experiment
    point : ndarray, shape (n_params,)

    Returns
    -------
    dict with ``point`` (list), ``errors`` {(callpath, metric): relative error} and ``worst``
    (the largest error; infinite when no series was measured at the point).
    """
    from .api import model as fit_models

    point = np.asarray(point, dtype=np.float64)
    at_point = np.all(experiment.coordinates == point[None, :], axis=1)
    measured = {}
    for group in experiment.take(at_point).series_groups():
        for (callpath, metric), value in zip(group.keys, group.reduce(measure)[:, 0]):
            measured[(callpath.name, metric.name)] = float(value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = fit_models(experiment.take(~at_point), modeler, measure=measure, executor="serial", host=host,
                            **options)
    errors = {}
    for m in models:
        key = (m.callpath, m.metric)
        if key not in measured:
            continue
        predicted = float(m.predict(point))
        value = measured[key]
        errors[key] = abs(predicted - value) / abs(value) if value != 0 else (0.0 if predicted == 0 else math.inf)
    worst = max(errors.values()) if errors else math.inf
    return {"point": point.tolist(), "errors": errors, "worst": worst}


# ------------------------------------------------ the uncertainty strategy
def base_cost(space, point_cost: np.ndarray, line: int = LINE) -> float:
    """The cost of the whole base design: lines of ``line`` values through the cheapest corner and, with two or
    more parameters, the cheapest point off them, at ``point_cost`` per grid point (a point with all its
    repetitions; it scales with a uniform factor, so one repetition's cost tells every count's).
    :func:`suggest` plans as many of the advised repetitions as this allows within :data:`BASE_SHARE` of the
    budget: shortening the lines, or leaving the selector nothing, to pay for repetitions would give up the terms
    the points tell apart, while the selector can buy a repetition's worth of information as single runs where
    they narrow the intervals most."""
    point_cost = np.asarray(point_cost, dtype=np.float64)
    lines = cheapest_cross(space, point_cost, line)
    spent = float(np.sum(point_cost[lines]))
    off = off_the_lines(space.grid(), lines)
    if off.any():
        spent += float(np.min(point_cost[off]))
    return spent


FORBIDDEN = 1e300
"""The cost that marks a grid point no run may go to (the target, or a point excluded by the caller)."""

EVEN_LINES = "even lines of 3 values exceed the budget: these runs are the minimum for a model"
"""The note of a base design that does not fit the budget even with the shortest lines."""

NO_OFF_POINT = ("no point off the lines fits the budget: the models cannot tell whether the parameters' effects add "
                "or multiply")
"""The note of a base design whose shortest lines fit the budget, but not with a point off them."""


def base_design(space, effective: np.ndarray, limit: float, line: int = 5,
                fits: Callable[[np.ndarray], bool] | None = None) -> tuple[np.ndarray, int, list[str]]:
    """The cheapest lines through a corner that fit ``limit``: five values per parameter if they fit, else fewer.

    Parameters
    ----------
    space : extrap_plugins.design.Space
    effective : ndarray, shape (n_points,)
        Cost per grid point, 0 where measured (see :func:`extrap_plugins.design.cheapest_cross`).
    limit : float
        Cost the base design may spend (``inf``: no limit).
    fits : callable, optional
        A further test of the lines' grid indices (a budget of points).

    Returns
    -------
    (indices, values per line, notes)
    """
    chosen, longest = None, None
    for length in range(line, 2, -1):
        indices = cheapest_cross(space, effective, length)
        if np.any(effective[indices] >= FORBIDDEN):  # then the shorter lines, which may pass by the point
            continue
        longest = longest or length
        within = float(np.sum(effective[indices])) <= limit * (1 + 1e-9) and (fits is None or fits(indices))
        if within or length == 3:
            chosen = (indices, length, within)
            if within:
                break
    if chosen is None:  # ``indices``: the lines of 3 values, through a point no run may go to
        raise _no_lines_around(space, effective, indices)
    indices, length, within = chosen
    notes = []
    # (a parameter held at one value has no line: it neither shortens the lines nor silences the note)
    if length < line and min((v.size for v in space.values if v.size > 1), default=0) >= line:
        terms = "one term per parameter" if length >= 3 else "only constants"
        longer = " or ".join(map(str, range(longest, length, -1)))  # the lengths the budget did not pay for
        why = (f"lines of {length} values, not {line} (longer lines would run through the target, or an "
               f"excluded point, which is never measured)" if length == longest else
               f"the budget allows lines of {length} values, not {line}" if within else  # not when even they exceed it
               f"the budget allows no lines of {longer} values; they have {length}")
        notes.append(f"{why}: models get at most {terms} along each line (fewer exponents are told apart), and the "
                     f"interval at the target says how much that costs")
    if not within:
        notes.append(EVEN_LINES)
    return indices, length, notes


def _no_lines_around(space, effective: np.ndarray, lines: np.ndarray) -> InputError:
    """The error when every line of 3 values through a corner runs through a point no run may go to (``lines``:
    the cheapest such lines): a parameter with 3 values or fewer, one of them the target's."""
    point = space.grid()[int(lines[np.argmax(effective[lines] >= FORBIDDEN)])]
    short = ", ".join(name for name, values in zip(space.parameters, space.values) if values.size <= 3)
    return InputError(f"every line of 3 values the base design could measure runs through "
                      f"{format_point(dict(zip(space.parameters, point)), brackets=True)}, which is the target (or "
                      f"excluded) and never measured: give {short or 'the parameters'} more candidate values with "
                      f"--param, or another --target")


def base_points(space, cost_of: np.ndarray, remaining: float, line: int = LINE, *, measured: np.ndarray | None = None,
                max_points: int | None = None, order: np.ndarray | None = None, allowed: np.ndarray | None = None
                ) -> tuple[np.ndarray, int | None, list[str]]:
    """The base design: the longest lines through a corner (``line``, 4 or 3 values) that fit the budget's cost
    (``remaining``) and points (``max_points``, the measured ones included) together with, for two or more
    parameters, the cheapest point off them (:func:`off_the_lines`) unless one is measured.  When the shortest
    lines do not fit with that point, the lines alone (:data:`NO_OFF_POINT`; :data:`EVEN_LINES` too when they do
    not fit either).

    Parameters
    ----------
    cost_of : ndarray, shape (n_points,)
        Cost of every grid point (:meth:`Space.grid` order), about 0 where measured.
    measured, allowed : ndarray of bool, optional
        The grid points measured (none), and those a run may go to (every point of cost below :data:`FORBIDDEN`).
    order : ndarray of int, optional
        The grid points cheapest first (as ``cost_of`` ranks them).

    Returns
    -------
    (indices of the lines, index of the point off them or None, notes)
    """
    grid = space.grid()
    measured = np.zeros(grid.shape[0], dtype=bool) if measured is None else measured
    allowed = cost_of < FORBIDDEN if allowed is None else allowed
    order = np.argsort(cost_of, kind="stable") if order is None else order
    several = len(space.varied) > 1

    def fits(indices, with_off: bool = True) -> bool:
        off = off_the_lines(grid, indices)
        candidates = cost_of[off & ~measured & allowed]
        needed = with_off and several and not (measured & off).any() and candidates.size > 0
        cost = float(np.sum(cost_of[indices])) + (float(candidates.min()) if needed else 0.0)
        points = int(measured.sum()) + int((~measured[indices]).sum()) + needed
        return cost <= remaining * (1 + 1e-6) and (max_points is None or points <= max_points)  # 1e-6: tie-breaks

    indices, _, notes = base_design(space, cost_of, remaining, line, fits=fits)
    off_lines = off_the_lines(grid, indices)
    off = None
    if several and not (measured & off_lines).any():
        if EVEN_LINES in notes:  # the lines alone: within the budget, or the minimum for a model
            notes = [note for note in notes if note != EVEN_LINES or not fits(indices, with_off=False)]
            notes.append(NO_OFF_POINT)
        else:
            off = next((int(i) for i in order if off_lines[i] and allowed[i] and not measured[i]), None)
    return indices, off, notes


def _base_runs(space, grid, measured, cost_of, remaining, line, max_points, order, rank, effective, suggestion):
    """The base design's points still to measure (:func:`base_points`) and every grid point's role
    (``_suggest_uncertainty``); the notes go to ``suggestion``."""
    indices, off, notes = base_points(space, cost_of, remaining, line, measured=measured, max_points=max_points,
                                      order=order)
    base = np.zeros(grid.shape[0], dtype=bool)
    base[indices] = True
    roles = _roles(grid, base, space, effective)
    missing = [int(i) for i in sorted(indices, key=lambda i: rank[i]) if not measured[i]]
    if off is not None:
        missing.append(off)
        roles[off] = "off the lines (additive or multiplicative?)"
    suggestion.status = "base"
    if max_points is not None and suggestion.measured_points + len(missing) > max_points:
        notes = [note for note in notes if note != EVEN_LINES]  # said for the points below
        notes.append(f"the base design needs {suggestion.measured_points + len(missing)} points, "
                     f"more than the budget's {max_points}: these runs are the minimum for a model")
    suggestion.notes.extend(notes)
    return missing, roles


def _base_out_of_budget(suggestion, said: int, remaining: float) -> None:
    """Status and notes when the base design is not complete but none of its runs fits the budget (the measured
    lines may already be longer than the budget's, through a point other than the corner): the notes on what
    the budget allows for the lines, said from ``said`` on, no longer apply; whether a point off them fits does."""
    suggestion.status = "budget"
    suggestion.notes[said:] = [note for note in suggestion.notes[said:] if note == NO_OFF_POINT]
    if suggestion.budget_points is not None:
        suggestion.notes.append(f"no further point of the base design fits the budget (at most "
                                f"{format_count(suggestion.budget_points, 'point')}, "
                                f"{suggestion.measured_points} measured)")
        return
    suggestion.notes.append(f"{_spent(suggestion)}: nothing is left to spend" if remaining <= 0 else
                            f"no further run of the base design fits the budget ({cost_units(remaining)} left)")


def _check_single_values(space: Space, target: Mapping[str, float], experiment) -> None:
    """A parameter of one candidate value is not varied, so the models cannot say how the values change with it:
    the target must lie at that value (a constant left out of the models, the default target keeps it), and some
    parameter must have more values (one point alone was "done", its interval the noise of its repetitions)."""
    single = [(name, float(values[0])) for name, values in zip(space.parameters, space.values) if values.size == 1]
    source = experiment.source if experiment is not None and experiment.source else None
    if single and len(single) == len(space.parameters):
        point = format_point(dict(single), brackets=True)
        raise InputError(f"every parameter has one candidate value, {point}: there is nothing to design; give more "
                         f"values with --param, such as --param {single[0][0]}=...", source)
    for name, value in single:
        if not math.isclose(target[name], value, rel_tol=1e-9):
            raise InputError(f"{name} has one candidate value ({value:g}) and the target lies at {name}="
                             f"{target[name]:g}: the models cannot tell how the values change with {name}; give "
                             f"more values with --param {name}=..., or a target at {name}={value:g}", source)


def _spent(suggestion) -> str:
    """What the measured runs cost beside the budget, for the notes when nothing is left to spend."""
    full = suggestion.full_cost
    if full > 0:
        budget = format_share(suggestion.budget_limit / full)
        if float(budget[:-1]) == 0:  # a budget of cost units that rounds to 0.0 % of it ("3600u": a core-hour)
            budget = f"{cost_units(suggestion.budget_limit)} ({format_percent(suggestion.budget_limit / full)})"
        return (f"the measured runs already cost {format_share(suggestion.measured_share)} of the full factorial's, "
                f"the budget {budget}")
    return (f"the measured runs already cost {cost_units(suggestion.measured_cost)}, the budget "
            f"{cost_units(suggestion.budget_limit)}")


def _suggest_uncertainty(space, grid, costs, measured_runs, order, rank, effective, suggestion, selected, *,
                         budget, tolerance, target, exclude, modeler, measure, host, line, options, progress=None):
    """:func:`extrap_plugins.design.suggest` with ``strategy="uncertainty"`` (see the module docstring);
    ``measured_runs`` is what :func:`_measured_runs` returns."""
    from .extrapolation import parse_target
    from .selector import assess, default_target, plan_runs, z_of

    parameters = space.parameters
    runs_at, next_repetition = measured_runs
    measured = runs_at > 0
    suggestion.strategy = "uncertainty"
    full_cost = suggestion.full_cost
    limit = budget.limit(full_cost) if budget is not None else math.inf
    max_points = budget.points if budget is not None and budget.points is not None else None
    suggestion.budget_limit, suggestion.budget_points = limit, max_points
    spent = suggestion.measured_cost
    remaining = limit - spent
    chosen_target = parse_target(target, parameters) if target is not None else default_target(space)
    suggestion.target = chosen_target
    target_point = np.array([chosen_target[p] for p in parameters])
    _check_single_values(space, chosen_target, selected)
    excluded = np.zeros(grid.shape[0], dtype=bool)
    for point in list(exclude) + [target_point]:
        excluded |= np.all(np.isclose(grid, np.asarray(point, dtype=np.float64)[None, :]), axis=1)
    if (measured & excluded).any():
        bad = grid[np.flatnonzero(measured & excluded)[0]]
        if np.allclose(bad, target_point):
            raise InputError(f"the target {format_point(bad, parameters, brackets=True)} is measured: the models are "
                             f"judged by their interval there, beyond the measurements; give another --target")
        raise InputError(f"the excluded point {format_point(bad, parameters, brackets=True)} is measured; "
                         f"it cannot judge the models")
    # What the base design and the selector weigh: a point with all its repetitions.
    cost_of = np.where(excluded, np.inf, effective) * suggestion.repetitions
    point_costs = costs * suggestion.repetitions

    def runs_of(indices, roles, serves=None):
        return [Run({name: float(grid[i, param]) for param, name in enumerate(parameters)}, suggestion.repetitions,
                    float(costs[i]), roles[i] if isinstance(roles, list) else roles,
                    serves=tuple(serves.get(i, ())) if serves else ()) for i in indices]

    # Base: the longest lines (5, 4 or 3 values) through a corner that fit; once a cross of 3 is measured,
    # the selector decides (it may extend the lines when that narrows the intervals most).
    complete = None
    for length in (line, 4, 3):
        cross = cheapest_cross(space, cost_of, min(length, line))
        # With two or more parameters one point off the lines tells additive from multiplicative (Ritter et al. 2020).
        if not (~measured[cross]).any() and (len(space.varied) <= 1 or (measured & off_the_lines(grid, cross)).any()):
            complete = length
            break
    if complete is None or selected is None or len(selected) == 0:
        said = len(suggestion.notes)
        missing, roles = _base_runs(space, grid, measured, np.where(excluded, FORBIDDEN, cost_of), remaining, line,
                                    max_points, order, rank, effective, suggestion)
        if not missing and complete is None:  # lines measured (maybe through another point), nothing more fits
            _base_out_of_budget(suggestion, said, remaining)
        suggestion.plan = Plan(parameters, runs_of(missing, roles))
        return suggestion

    # New points, each with the plan's repetitions; once every candidate point is measured (or no new point fits
    # and some open kernel's single runs are noisy), single runs that repeat measured points, up to the advised
    # repetitions (the full factorial's) each.
    candidates = np.flatnonzero(~measured & ~excluded)
    per_run, run_costs, available = suggestion.repetitions, point_costs[candidates], None
    cap = max(suggestion.reference_repetitions, suggestion.repetitions)
    repeating = candidates.size == 0
    if repeating:
        candidates = np.flatnonzero(measured & ~excluded & (runs_at < cap))
        per_run, run_costs, available = 1, costs[candidates], cap - runs_at[candidates]
    assessment = assess(selected, target_point, grid[candidates], modeler=modeler, measure=measure, host=host,
                        repetitions=per_run, progress=progress, **options)
    z = z_of(assessment.level)
    suggestion.widths = {k.name: z * math.sqrt(k.variance()) for k in assessment.kernels if k.judged}
    suggestion.not_judged = {k.name: k.why_not for k in assessment.kernels if not k.judged}
    where = format_point(chosen_target, brackets=True)
    if assessment.holds(tolerance):
        suggestion.status = "done"
        suggestion.notes.append(_holds_note(suggestion, assessment.level, where, tolerance))
        suggestion.notes.extend(_untested_near_target(space, grid, measured, excluded, costs, target_point))
        extra, after = [], {}
        if budget is not None:  # without one, nothing is planned (and repetitions without end would be)
            extra, after = plan_runs(assessment, run_costs, tolerance=0.0, limit=remaining,
                                     max_runs=_room(max_points, suggestion), available=available)
        suggestion.notes.append(_would_buy(extra, after, suggestion.widths, remaining, budget, candidates.size,
                                           per_run, _room(max_points, suggestion)))
        return suggestion
    # A run that narrows no interval as printed is not planned (nor, repeating, one expected to narrow nothing: an
    # exact counter's value is known); ``next_run``: the run that fits and would come next then.
    before = [k.deviations for k in assessment.kernels]
    first = [] if repeating else _nearest_first(space, grid, point_costs, candidates, ~excluded, target_point,
                                                remaining, assessment, tolerance, _room(max_points, suggestion))
    rest = _after_first(first, remaining, _room(max_points, suggestion), available, candidates.size)
    runs, predicted = plan_runs(assessment, run_costs, tolerance=tolerance, **rest, visible=True)
    runs = first + runs
    runs, predicted = _with_pairs(assessment, before, runs, predicted, run_costs, remaining,
                                  _room(max_points, suggestion), not repeating or (runs_at > 1).any())
    next_run = None if runs else _next_run(assessment, run_costs, tolerance, remaining, _room(max_points, suggestion),
                                           available)
    fitting = bool(runs) or next_run is not None
    assessed = functools.partial(assess, selected, target_point, grid[candidates], modeler=modeler, measure=measure,
                                 host=host, progress=progress, **options)
    runs, predicted, per_run = _with_fewer_repetitions(suggestion, bool(runs) | repeating, assessed, costs[candidates],
                                                       tolerance, remaining, _room(max_points, suggestion), predicted,
                                                       runs, per_run)
    fitting |= bool(runs)
    noisy_repetitions, noisy, paid = False, [], False
    repeatable = measured & ~excluded & (runs_at < cap)
    repetition_fits = bool((costs[repeatable] <= remaining).any())
    if not fitting and not repeating and per_run == 1 and repetition_fits:
        # No new point fits, a repetition would: repetitions for the kernels whose single runs are noisy.
        open_names = {k.name for k in assessment.open_kernels(tolerance)}
        noise = assessment.scaled_run_noise(grid[~excluded])
        noisy = [k.name for k, v in zip(assessment.kernels, noise) if k.name in open_names and v >= QUIET_NOISE**2]
        paid = pairs_fit(costs[repeatable], remaining)
        if noisy and paid:
            candidates = np.flatnonzero(repeatable)
            run_costs, available = costs[candidates], cap - runs_at[candidates]
            again = assess(selected, target_point, grid[candidates], modeler=modeler, measure=measure, host=host,
                           repetitions=1, progress=progress, **options)
            before = [k.deviations for k in again.kernels]
            runs, after = _plan_for(again, noisy, run_costs, tolerance, remaining, _room(max_points, suggestion),
                                    available)
            runs, after = _with_pairs(again, before, runs, after, run_costs, remaining,
                                      _room(max_points, suggestion), (runs_at > 1).any())
            predicted = {**predicted, **after}
            repeating = noisy_repetitions = bool(runs)
    suggestion.predicted = {name: predicted[name] for name in suggestion.widths}
    if not runs:
        why = _why_none(len(candidates), fitting, repetition_fits and not repeating, per_run, noisy, paid, remaining)
        unseen = ""
        if why == "no gain" and next_run.gain > 0:  # a run fits, but none narrows an interval as printed
            why, unseen = "unseen", _unseen(next_run, assessment, run_costs, tolerance, available, remaining)
        _nothing_to_plan(suggestion, where, tolerance, why, unseen)
        return suggestion
    suggestion.status = "add"
    if repeating:
        suggestion.notes.append((REPEATING_NOISY if noisy_repetitions else REPEATING).format(
            cap=cap, quiet=f"{QUIET_NOISE:.0%}"))
        suggestion.plan = _repetitions_plan(parameters, grid, costs, candidates, runs, runs_at, next_repetition)
    else:
        roles = {int(candidates[r.index]): r.reason() for r in runs}
        suggestion.plan = Plan(parameters, runs_of([int(candidates[r.index]) for r in runs], list(
            roles.get(i, "") for i in range(grid.shape[0])), {int(candidates[r.index]): r.serves for r in runs}))
    _note_left_open(suggestion, tolerance, where,
                    _what_is_left(runs, candidates, available, runs_at, per_run, cap, costs, ~excluded, remaining,
                                  _room(max_points, suggestion)))
    return suggestion


NEAREST = "nearest the target, which lies beyond the values of {names}: tests how the parameters combine there"
"""The reason of the run :func:`_nearest_first` plans.  Measured in ``benchmarks/design.py`` (``--selector-nearest``;
``benchmarks/design-history.md``, sessions 69 and 70): on the four realistic draws at 15 % of the cost it landed 12
functions of 160 more within ±10 % per kernel (the far corner tells a product term from an additive one where the
lines cannot), and the plan merged over all 40 functions two to three more; it lost 4 cells of 360 net on the
seed-002 two-parameter sets (additive functions).  For a target inside the candidate values it lost RELeARN's
20 % target, so it is not planned there."""


def is_nearest_run(run: Run) -> bool:
    """Whether ``run`` is the one :func:`_nearest_first` planned (its reason begins as :data:`NEAREST`)."""
    return run.role.startswith(NEAREST.partition(",")[0])


@dataclass(frozen=True)
class _NearestRun:
    """The run planned first where the target lies beyond the candidate values (:func:`_nearest_first`)."""

    index: int
    cost: float
    names: tuple[str, ...]
    serves: tuple = ()

    def reason(self) -> str:
        from .selector import PlannedRun

        said = " and ".join([", ".join(self.names[:-1]), self.names[-1]] if len(self.names) > 1 else self.names)
        narrows = PlannedRun(self.index, self.cost, 0.0, list(self.serves)).reason() if self.serves else ""
        return NEAREST.format(names=said) + (f"; {narrows}" if narrows else "")


def nearest_candidate(space: Space, points: np.ndarray, target: np.ndarray, costs: np.ndarray) -> int | None:
    """Of ``points`` (rows of the space's parameters), the index of the one nearest ``target`` where two or more
    parameters vary and the target lies beyond the candidate values of some (None otherwise, or without points):
    the sum over the parameters of ``|log(target / x)|`` (the distance relative to the parameter's range where a
    value is not positive), the cheaper of equals (``costs``)."""
    target = np.asarray(target, dtype=np.float64)
    if not _beyond(space, target) or len(space.varied) < 2 or len(points) == 0:
        return None
    points = np.asarray(points, dtype=np.float64)
    with np.errstate(all="ignore"):
        logs = np.abs(np.log(target[None, :] / points))
        spans = np.array([max(float(np.ptp(values)), 1.0) for values in space.values])
        linear = np.abs(target[None, :] - points) / spans[None, :]
    positive = (points > 0) & (target[None, :] > 0)
    distance = np.sum(np.where(positive, logs, linear), axis=1)
    return int(np.lexsort((np.asarray(costs, dtype=np.float64), np.round(distance, 9)))[0])


def _nearest_first(space, grid, costs, candidates, allowed, target, remaining, assessment, tolerance, room) -> list:
    """The run planned before the selector's where two or more parameters vary, the target lies beyond the
    candidate values of some and some kernel's interval is open: the point nearest the target among those
    ``allowed`` (measured or not; :func:`nearest_candidate`), if it is one of the ``candidates`` (not measured yet)
    and fits the budget left (``costs``: of a run at each point of ``grid``, with the plan's repetitions).
    ``assessment`` is conditioned on it.  None otherwise (see :data:`NEAREST`)."""
    open_kernels = [k.name for k in assessment.open_kernels(tolerance)]
    if not open_kernels or room == 0 or candidates.size == 0:
        return []
    points = np.flatnonzero(allowed)
    nearest = nearest_candidate(space, grid[points], target, costs[points])
    where = np.flatnonzero(candidates == points[nearest]) if nearest is not None else []
    if len(where) == 0 or not costs[candidates[where[0]]] <= remaining * (1 + 1e-12):
        return []
    index = int(where[0])
    before = assessment.half_widths()
    for k in assessment.kernels:
        k.observe(index)
    after = assessment.half_widths()
    serves = tuple(sorted(((name, before[name], after[name]) for name in open_kernels if after[name] < before[name]),
                          key=lambda served: served[2] - served[1]))
    return [_NearestRun(index, float(costs[candidates[index]]), _beyond(space, target), serves)]


def _beyond(space: Space, target) -> tuple[str, ...]:
    """The parameters whose candidate values ``target`` (one value per parameter) lies beyond."""
    return tuple(name for name, values, value in zip(space.parameters, space.values, target)
                 if not values.min() <= value <= values.max())


def _after_first(first: list, remaining: float, room: int | None, available: np.ndarray | None,
                 n_candidates: int) -> dict:
    """What :func:`~extrap_plugins.selector.plan_runs` may plan after the runs ``first``: the budget and the room
    left, and the runs each candidate may still have (``available``; None: once each) without those."""
    if not first:
        return dict(limit=remaining, max_runs=room, available=available)
    left = np.ones(n_candidates, dtype=np.int64) if available is None else np.array(available, dtype=np.int64)
    for run in first:
        left[run.index] -= 1
    return dict(limit=remaining - sum(run.cost for run in first),
                max_runs=None if room is None else room - len(first), available=left)


FEWER_AT_THE_END = ("{fewer}: the budget left pays for no new point with {per_run}, and for one with {fewer}: new "
                    "points tell more than repetitions of measured ones")
"""The reason for fewer repetitions at new points when the budget is nearly spent."""


def _with_fewer_repetitions(suggestion, planned, assessed, costs, tolerance, remaining, room, predicted, runs,
                            per_run):
    """Where nothing is ``planned`` (no run, nor repetitions of measured points), no new point fits with ``per_run``
    repetitions and one would with fewer: the new points planned with those (the suggestion's repetitions and their
    reason changed), the widths expected after them and the repetitions; else ``runs``, ``predicted`` and
    ``per_run`` as they were.  The budget left goes to new points: a single run at p = 4 tells more about a target
    at p = 4 than repetitions at p = 1, which an mpi4py program's loop bought instead while 3 % of its budget stayed
    unspent."""
    from .selector import plan_runs

    fewer = 0 if planned else _fewer_repetitions(costs, per_run, remaining)
    if not fewer:
        return runs, predicted, per_run
    new, after = plan_runs(assessed(repetitions=fewer), costs * fewer, tolerance=tolerance, limit=remaining,
                           max_runs=room, visible=True)
    if not new:
        return runs, predicted, per_run
    suggestion.repetitions_reason = FEWER_AT_THE_END.format(fewer=fewer, per_run=per_run)
    suggestion.repetitions = fewer
    return new, after, fewer


def _fewer_repetitions(costs: np.ndarray, per_run: int, remaining: float) -> int:
    """The most repetitions below ``per_run`` with which some new point (one run costing ``costs``) fits the budget
    left, where none fits with ``per_run``; 0 where one fits with ``per_run`` or none with a single run."""
    if per_run <= 1 or costs.size == 0 or (costs * per_run <= remaining).any():
        return 0
    cheapest = float(costs.min())
    return next((r for r in range(per_run - 1, 0, -1) if cheapest * r <= remaining * (1 + 1e-12)), 0)


def cost_units(amount: float) -> str:
    """``1 cost unit``, ``2.5 cost units``: an amount of the cost model's units.

    >>> cost_units(1.0), cost_units(98)
    ('1 cost unit', '98 cost units')
    """
    return f"{amount:g} cost unit{'' if amount == 1 else 's'}"


def format_width(width: float, tolerance: float) -> str:
    """A relative half-width beside the tolerance it is judged by: :func:`format_share`, with more decimals where
    one would put it on the tolerance's side while it lies beyond (±5.04 % against 5 % is "5.04%", not "5.0%")."""
    text = format_share(width)
    for digits in range(2, 6):
        if abs(width) >= 100 or (float(text[:-1]) / 100 > tolerance) == (width > tolerance):
            break
        text = f"{width:.{digits}%}"
    return text


def _holds_note(suggestion, level: float, where: str, tolerance: float) -> str:
    """The note when the rule holds: the widest interval, or, with no kernel judged, why none is."""
    from .selector import NOT_JUDGED

    if not suggestion.widths:
        return f"no kernel is judged at {where}: all {len(suggestion.not_judged)} are {NOT_JUDGED}"
    widest, width = max(suggestion.widths.items(), key=lambda kv: kv[1])
    return (f"the rule holds: every judged kernel's {format_percent(level)} interval at {where} is within "
            f"±{format_percent(tolerance)} (widest: {format_callpath(widest)} ±{format_width(width, tolerance)})")


def _untested_near_target(space, grid, measured, excluded, costs, target) -> list[str]:
    """The caveat when the rule holds for a target inside the candidate values of two or more parameters while no
    measured point is next to it in all of them (one candidate value away at most in each): the intervals then rest
    on the parameters' effects combining as the lines and the points off them show, which none of the ensemble's
    members can question (a product term small where the lines run; benchmarks/design-history.md, sessions 41 and
    42).  Names the cheapest run next to the target that would test it."""
    if len(space.varied) < 2 or not target_inside(space, dict(zip(space.parameters, target))):
        return []
    steps = np.stack([np.abs(np.searchsorted(values, grid[:, i]) - np.searchsorted(values, target[i]))
                      for i, values in enumerate(space.values)], axis=1)
    near = np.all(steps <= 1, axis=1) & ~np.all(grid == target[None, :], axis=1)
    if (near & measured).any():
        return []
    options = np.flatnonzero(near & ~measured & ~excluded)
    test = (f"; a run at {format_point(grid[options[np.argmin(costs[options])]], space.parameters, brackets=True)}"
            f" would test that") if options.size else ""
    return [f"the target lies within every parameter's candidate values, but no measured point is next to it in all "
            f"of them: the intervals assume the parameters' effects combine there as the measured points show{test}"]


def _what_is_left(runs, candidates, available, runs_at, per_run, cap, costs, allowed, remaining, room=None) -> str:
    """What the budget could still buy after the planned ``runs``, in the words of the note on the kernels they leave
    open: candidates left over that the budget left pays for (the plan ends where the next would narrow no interval
    as printed) or not, or (every candidate planned) a repetition of a measured or planned point that fits the budget
    left (the loop buys those next), or neither (``room``: the points a budget of points has left)."""
    planned = np.array([r.index for r in runs], dtype=np.int64)
    left = np.ones(candidates.size, dtype=np.int64) if available is None else available.copy()
    np.subtract.at(left, planned, 1)
    leftover = remaining - sum(r.cost for r in runs)
    if (left > 0).any():
        unit = costs[candidates] * (per_run if available is None else 1)
        fits = (left > 0) & (unit <= leftover + 1e-9 * max(remaining, 1.0))
        if fits.any() and (room is None or len(runs) < room):
            return "further runs the budget left pays for would narrow no interval as printed"
        return "the budget ends first"
    after = runs_at.copy()
    if available is None:  # new points, each with ``per_run`` repetitions
        after[candidates[planned]] += per_run
    else:  # repetitions, one per run
        np.add.at(after, candidates[planned], 1)
    repeatable = allowed & (after > 0) & (after < cap)
    if not repeatable.any():
        return "nothing is left to measure"
    if (costs[repeatable] <= leftover).any():
        return "every candidate point is then measured; repetitions of them come next, as far as the budget goes"
    return "the budget ends first"


def _note_left_open(suggestion, tolerance, where, why) -> None:
    """The note on the kernels the plan is expected to leave above the tolerance, and why (``why``, from
    :func:`_what_is_left`), or that the runs barely narrow them (:data:`BARELY`), with the widest's before and
    after."""
    widths, predicted = suggestion.widths, suggestion.predicted
    left_open = [name for name, width in predicted.items() if width > tolerance]
    if not left_open:
        return
    if all(widths[name] - predicted[name] < BARELY * (widths[name] - tolerance) for name in left_open):
        widest = max(left_open, key=widths.get)
        them = "them: the widest," if len(left_open) > 1 else "it:"
        why = (f"these runs barely narrow {them} {format_callpath(widest)}, from "
               f"±{format_share(widths[widest])} only to ±{format_share(predicted[widest])}")
    suggestion.notes.append(f"after these runs the selector still expects {format_count(len(left_open), 'kernel')} "
                            f"above ±{format_percent(tolerance)} at {where} ({why})")


def _why_none(n_candidates: int, fitting: bool, repetition_fits: bool, per_run: int, noisy: list,
              paid: bool, remaining: float) -> str:
    """Why the selector planned no run (the keys of :func:`_nothing_to_plan`); ``paid``: whether the budget left
    pays for repetitions at :data:`PAIRS` measured points; ``remaining``: the budget left."""
    if not n_candidates:
        return "exhausted"
    if remaining <= 0:
        return "spent"
    if fitting:
        return "no gain"
    if not repetition_fits or (noisy and paid):  # nothing fits, or the noisy kernels' repetitions narrow nothing
        return "budget"
    if per_run > 1:
        return "no new point"
    return "few pairs" if noisy else "quiet"


def _nothing_to_plan(suggestion, where, tolerance, why, unseen: str = "") -> None:
    """Status and note when the selector plans no run: every candidate is measured (``exhausted``), repeating
    the measured points would narrow nothing (``no gain``, also ``exhausted``), or nothing fits (``budget``; also
    ``spent``: the measured runs already cost the whole budget or more;
    ``no new point``: no new point fits, a repetition would, and the plan's points have their repetitions, more
    come once every point is measured; ``quiet``: no new point fits, a repetition would, but no open kernel's
    single runs are noisy; ``few pairs``: the same, some are, but the budget left does not pay for repetitions at
    :data:`PAIRS` measured points; ``unseen``: runs fit, but none narrows an interval as printed, and
    ``unseen`` says how far the next would and what would narrow it, :func:`_unseen`)."""
    widest = max(suggestion.widths.items(), key=lambda kv: kv[1])
    stays = (f"the widest interval at {where} stays {format_callpath(widest[0])} ±{format_width(widest[1], tolerance)} "
             f"(tolerance ±{format_percent(tolerance)})")
    suggestion.status = "exhausted" if why in ("exhausted", "no gain") else "budget"  # also "unseen"
    suggestion.notes.append({"budget": f"no further run fits the budget; {stays}",
                             "spent": f"{_spent(suggestion)}: nothing is left to spend; {stays}",
                             "no new point": f"no further new point fits the budget (a repetition of a measured "
                                             f"point would, but with repetitions in the plan, repetitions beyond "
                                             f"them come only once every candidate point is measured); {stays}",
                             "quiet": f"no further new point fits the budget (a repetition of a measured point "
                                      f"would, but the kernels still open vary by less than ±{QUIET_NOISE:.0%} "
                                      f"of the value at the target from one run to the next, where a repetition "
                                      f"tells the models little); {stays}",
                             "few pairs": f"no further new point fits the budget (a repetition of a measured point "
                                          f"would, but not one at each of {PAIRS} measured points, the fewest from "
                                          f"which the models read the noise of a run); {stays}",
                             "unseen": f"{unseen}; {stays}",
                             "exhausted": f"{EXHAUSTED}; {stays}",
                             "no gain": f"{EXHAUSTED}: repeating measured points would not narrow the intervals; "
                                        f"{stays}"}[why])


def _plan_for(assessment, names, costs, tolerance, limit, max_runs, available):
    """:func:`~extrap_plugins.selector.plan_runs` for the kernels ``names`` of ``assessment`` alone (the others
    measured alongside, but not asking for the runs), without runs that narrow no interval as printed."""
    from .selector import Assessment, plan_runs

    wanted = set(names)
    kernels = [k for k in assessment.kernels if k.name in wanted]
    only = Assessment(assessment.parameters, assessment.target, assessment.candidates, kernels, assessment.level)
    return plan_runs(only, costs, tolerance=tolerance, limit=limit, max_runs=max_runs, available=available,
                     visible=True)


PAIRS_REASON = f"with the other repetitions, {PAIRS} pairs tell the noise (fewer mislead the modeler)"
"""The reason of a repetition planned only so that a plan of repetitions repeats :data:`PAIRS` points."""


@dataclass(frozen=True)
class _PairRun:
    """A repetition planned for the noise estimate alone (it narrows no interval as printed)."""

    index: int
    cost: float
    serves: tuple = ()

    def reason(self) -> str:
        return PAIRS_REASON


def _with_pairs(assessment, before, runs, predicted, costs, remaining, room, settled: bool):
    """Repetitions ``runs``, with the widths ``predicted`` after them, made to repeat :data:`PAIRS` points: the
    cheapest others added, or where those do not fit the budget left, the :data:`PAIRS` cheapest points (planned
    runs among them keep their reasons); none where a budget of points, ``room``, is too small.  The noise the
    modeler reads from one or two pairs misleads it.  Left as they are where ``settled`` (the runs are new points,
    or some point is repeated already) or where the budget left does not pay for the :data:`PAIRS` cheapest.
    ``assessment`` as conditioned on ``runs``, ``before`` its deviations before them; the widths returned are those
    after the runs returned."""
    points = {r.index for r in runs}
    if settled or not points or len(points) >= PAIRS or not pairs_fit(costs, remaining):
        return runs, predicted
    added = pairs_added(points, sum(r.cost for r in runs), costs, remaining)
    if added is not None:
        chosen = list(runs) + [_PairRun(i, float(costs[i])) for i in added]
    else:
        kept = {r.index: r for r in runs}
        chosen = [kept.get(i) or _PairRun(i, float(costs[i])) for i in cheapest(costs)]  # pairs_fit: they fit
    if room is not None and len(chosen) > room:
        chosen = []
    for k, deviations in zip(assessment.kernels, before):
        k.deviations = deviations
    for run in chosen:
        for k in assessment.kernels:
            k.observe(run.index)
    return chosen, assessment.half_widths()


def cheapest(costs: np.ndarray, count: int = PAIRS) -> list[int]:
    """The ``count`` cheapest of ``costs`` (indices, cheapest first; ``inf`` never)."""
    order = [int(i) for i in np.argsort(costs, kind="stable") if math.isfinite(costs[i])]
    return order[:count]


def pairs_added(points, planned_cost: float, costs: np.ndarray, remaining: float) -> list[int] | None:
    """The cheapest other points that make repetitions at ``points`` (costing ``planned_cost``) repeat
    :data:`PAIRS` points, or None where they do not fit ``remaining`` (then the plan is the :data:`PAIRS` cheapest,
    :func:`cheapest`)."""
    added = [i for i in cheapest(costs, len(costs)) if i not in points][: PAIRS - len(points)]
    return added if planned_cost + sum(costs[i] for i in added) <= remaining else None


def pairs_fit(costs: np.ndarray, remaining: float) -> bool:
    """Whether ``remaining`` pays for one run at each of the :data:`PAIRS` cheapest of ``costs`` (the costs of
    repeating the measured points; ``inf`` where a point cannot be repeated)."""
    costs = np.asarray(costs, dtype=np.float64)
    lowest = cheapest(costs)
    return len(lowest) == PAIRS and float(costs[lowest].sum()) <= remaining


def _next_run(assessment, costs, tolerance, limit, max_runs, available):
    """The run :func:`~extrap_plugins.selector.plan_runs` would plan next, whether or not it narrows an interval as
    printed (None when none fits), leaving ``assessment`` as it was."""
    from .selector import plan_runs

    if max_runs == 0:
        return None
    kept = [k.deviations for k in assessment.kernels]
    runs, _ = plan_runs(assessment, costs, tolerance=tolerance, limit=limit, max_runs=1, available=available)
    for k, deviations in zip(assessment.kernels, kept):
        k.deviations = deviations
    return runs[0] if runs else None


def _unseen(run, assessment, costs, tolerance, available, remaining) -> str:
    """Why no run is planned although ``run`` fits the budget left: how far it would narrow the widest open
    interval (not as printed: :func:`~extrap_plugins.selector.narrows_visibly`), and how many such runs would narrow
    it visibly together at what cost (beyond the budget left, or not), or that no run among the candidates would."""
    from .selector import narrows_visibly, plan_runs, z_of

    z = z_of(assessment.level)
    kernel = max(assessment.open_kernels(tolerance), key=lambda k: k.variance())
    width = after = z * math.sqrt(kernel.variance())
    if run.serves and run.serves[0][0] == kernel.name:
        after = run.serves[0][2]
    said = (f"no run the budget left ({cost_units(remaining)}) pays for narrows an interval at the target as printed "
            f"(the next, {format_point(assessment.candidates[run.index], assessment.parameters, brackets=True)}, "
            f"would take the widest, {format_callpath(kernel.name)}, from ±{format_share(width)} only to "
            f"±{format_share(after)})")
    left = np.ones(len(costs), dtype=np.int64) if available is None else np.asarray(available).copy()
    planned = []
    while True:  # the runs the selector would plan without a budget, one at a time, until the widest narrows
        runs, _ = plan_runs(assessment, costs, tolerance=tolerance, max_runs=1, available=left)
        if not runs or not runs[0].gain > 0:
            return (f"{said}; no run among the candidates would, nor all of them together: further values with "
                    f"--param (towards the target) would tell more of the models' shape")
        planned.append(runs[0])
        left[runs[0].index] -= 1
        narrowed = z * math.sqrt(kernel.variance())
        if narrows_visibly(width, narrowed):
            spent = sum(r.cost for r in planned)
            first = format_point(assessment.candidates[planned[0].index], assessment.parameters, brackets=True)
            which = f"a run at {first}" if len(planned) == 1 else f"{len(planned)} runs together"
            beyond = " (more than the budget left)" if spent > remaining else ""
            return f"{said}; {which} would narrow it to ±{format_share(narrowed)} at {cost_units(spent)}{beyond}"


def _repetitions_plan(parameters, grid, costs, candidates, runs, runs_at, next_repetition) -> Plan:
    """The planned runs as single runs that repeat measured points, each from the next free repetition on (its
    reason names it by that number, counted from 0 as the sweep runner, its log and the readers count)."""
    plan = Plan(parameters)
    planned = runs_at.copy()  # a point planned twice: its second run is the next repetition
    for r in runs:
        i = int(candidates[r.index])
        first = int(next_repetition[i] + planned[i] - runs_at[i])
        plan.runs.append(Run({name: float(grid[i, param]) for param, name in enumerate(parameters)}, 1,
                             float(costs[i]), f"repetition {first}: {r.reason()}", first=first,
                             serves=tuple(r.serves)))
        planned[i] += 1
    return plan


def _room(max_points, suggestion) -> int | None:
    if max_points is None:
        return None
    return max(max_points - suggestion.measured_points, 0)


def _would_buy(runs, after, widths, remaining, budget, n_candidates, per_run: int = 1, room: int | None = None) -> str:
    """What the budget left would buy once the rule holds (``n_candidates``: points new or still to repeat;
    ``per_run``: the runs of each new point, its repetitions; ``room``: the points a budget of points has left)."""
    from .selector import narrows_visibly

    if budget is None:
        return "without a budget, further runs are not planned"
    if room == 0:
        return (f"the measured points already fill the budget (at most {format_count(budget.points, 'point')}): "
                f"nothing is left to spend")
    if remaining <= 0:
        return "the measured runs already cost the whole budget or more: nothing is left to spend"
    if not n_candidates:
        return "every candidate point is measured with its repetitions: nothing is left to buy"
    left = format_count(room, "point") if room is not None else cost_units(remaining)  # (inf with points)
    if not runs:
        return f"the remaining budget ({left}) buys no further run"
    worst = max(widths, key=widths.get)
    if not narrows_visibly(widths[worst], after[worst]):
        return f"further runs would not narrow the intervals noticeably: the remaining budget ({left}) is left"
    # The ensembles conditioned on the runs as if the models kept their form: a run that changes a model's terms
    # moves the interval more than that, either way (benchmarks/design-history.md, "the widths plans promise").
    bought = format_count(len(runs), "more run")
    if per_run > 1:
        bought = f"{format_count(len(runs), 'more point')} ({len(runs) * per_run} runs with the repetitions)"
    return (f"the remaining budget ({left}) would buy {bought}, "
            f"which would narrow the widest interval ({format_callpath(worst)}) from "
            f"±{format_share(widths[worst])} to ±{format_share(after[worst])} if the models kept their form")


# ---------------------------------------------------------------- the loop
@dataclass
class DesignRun:
    """What :func:`run_design` did: the measurements, the steps and the final models."""

    experiment: Experiment
    steps: list[Suggestion]
    status: str


def run_design(space: Space, measure_runs: Callable[[list[Run]], Experiment], *, max_steps: int = 1000,
               **settings) -> DesignRun:
    """Drive the design loop: suggest, measure, re-model, until done or out of budget.

    Parameters
    ----------
    space : Space
    measure_runs : callable
        Takes the runs of one step and returns their measurements as an
        Experiment with the space's parameters.
    **settings
        As :func:`suggest`; without a budget the loop may measure every point.

    Returns
    -------
    DesignRun
    """
    experiment = None
    steps = []
    for _ in range(max_steps):
        step = suggest(space, experiment, **settings)
        steps.append(step)
        if not step.plan.runs:
            break
        # With a budget the plan lists every point that fits; measure only the next step of it.
        runs = step.plan.runs if step.status == "base" else step.plan.runs[:1]
        if step.status == "base":
            extra = [r for r in runs if r.role == "additional"]
            runs = [r for r in runs if r.role != "additional"] + extra[:1]
        fresh = measure_runs(runs)
        experiment = fresh if experiment is None else Experiment.concatenate([experiment, fresh])
    return DesignRun(experiment, steps, steps[-1].status if steps else "base")


# ----------------------------------------------------------------- helpers
MAX_REPETITIONS = 1000
"""The most ``repetitions`` a plan takes: plans are made run by run, and more runs a point tell no more."""


def _repetitions(space, costs, given, noise, counters, strategy, budget, line, inside=False) -> tuple[int, str, int]:
    """The repetitions per planned point with their reason, and the full factorial's a budget's share is of: the
    given ones, or those advised for the number of parameters (neither the measured noise nor the metrics' kind,
    which only measurements show: the budget stays put from the first suggestion on).  The uncertainty strategy
    plans single runs for a target ``inside`` the candidate values (:func:`target_inside`), else as many of the
    advised repetitions as the whole base design can have within :data:`BASE_SHARE` of the budget, and single
    runs when not even two fit."""
    n = max(len(space.varied), 1)
    if given is not None:
        if int(given) != given or given < 1:
            raise InputError(f"--repetitions {given!r}: expected a whole number >= 1")
        if given > MAX_REPETITIONS:
            raise InputError(f"--repetitions {given!r}: at most {MAX_REPETITIONS} runs a point")
        return int(given), "given", int(given)
    reference = advise_repetitions(n)[0]
    repetitions, reason = advise_repetitions(n, noise, counters)
    if inside and repetitions > 1:  # only the uncertainty strategy asks whether the target is inside
        return 1, INSIDE, reference
    if strategy == "uncertainty" and repetitions > 1:
        full_cost = reference * float(costs.sum())
        limit = budget.limit(full_cost) if budget is not None else math.inf
        once = base_cost(space, costs, line)  # one repetition of every base point
        allowed = BASE_SHARE * limit * (1 + 1e-9)
        if once * repetitions > allowed:
            too_dear = (f"the base design with the advised {repetitions} would cost "
                        f"{format_share(once * repetitions / full_cost)} of the full factorial, more than half the "
                        f"budget")
            fewer = int(allowed // once)  # fewer than the advised (once > 0 here)
            if fewer >= 2:
                return fewer, (f"{fewer}: {too_dear}; with {fewer} it fits, and the repetitions still tell the "
                               f"noise of a run"), reference
            lines = ("keep its lines whole" if once <= limit * (1 + 1e-9) else
                     "are what it can have, though even they do not keep its lines whole (see the notes),")
            return 1, (f"1: {too_dear}; single runs {lines} and leave the selector room to buy each "
                       f"further run where it narrows the intervals most per unit of cost (until a point is measured "
                       f"twice the noise is judged from the models' residuals, and on noisy data a model can take a "
                       f"term from the noise)"), reference
    return repetitions, reason, reference


def target_inside(space: Space, target) -> bool:
    """Whether ``target`` (``"p=512,n=9000"`` or a mapping) lies within the candidate values of every parameter,
    so that the models interpolate there (see :data:`INSIDE`)."""
    from .extrapolation import parse_target

    point = parse_target(target, space.parameters)
    if point is None:  # none given: the default target lies one step beyond the candidates
        return False
    return all(values.min() <= point[name] <= values.max() for name, values in zip(space.parameters, space.values))


def _measured_runs(grid: np.ndarray, experiment: Experiment | None) -> tuple[np.ndarray, np.ndarray]:
    """How many runs (distinct repetitions) the experiment has at every grid point, and the number of the next
    repetition there (one above the largest measured: a repetition that failed leaves a gap, and a run planned
    into the gap would be skipped as measured); a measured point outside the grid is an error."""
    runs = np.zeros(grid.shape[0], dtype=np.int64)
    following = np.zeros(grid.shape[0], dtype=np.int64)
    if experiment is None or len(experiment) == 0:
        return runs, following
    index = {tuple(row): i for i, row in enumerate(grid.tolist())}
    for row in experiment.points().tolist():
        if tuple(row) not in index:
            raise InputError(
                f"{experiment.source}: the measured point "
                f"{format_point(row, experiment.parameter_names, brackets=True)} "
                f"is not in the design space; add its values with --param"
            )
    for row in experiment.runs().tolist():
        i = index[tuple(row[:-1])]
        runs[i] += 1
        following[i] = max(following[i], int(row[-1]) + 1)
    return runs, following


def _corner(grid: np.ndarray, members: np.ndarray) -> np.ndarray:
    """The corner of lines through a common point (grid rows ``members``): the member that differs from every
    other member in one parameter only (the first member if none does)."""
    sub = grid[members]
    for point in sub:
        others = sub[np.any(sub != point, axis=1)]
        if np.all(np.sum(others != point, axis=1) == 1):
            return point
    return sub[0]


def off_the_lines(grid: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """Which grid points lie off the lines through a corner (grid rows ``lines``): those that differ from the corner
    in two parameters or more.  A point on a line's extension (a sixth value of a parameter, or a value beyond a line
    the budget shortened) differs in one and cannot tell additive from multiplicative effects.

    Returns
    -------
    ndarray of bool, shape (n_points,); all False with one parameter or without lines.
    """
    lines = np.asarray(lines, dtype=np.int64)
    if lines.size == 0 or grid.shape[1] < 2:
        return np.zeros(grid.shape[0], dtype=bool)
    return np.sum(grid != _corner(grid, lines)[None, :], axis=1) >= 2


def _roles(grid, base, space, effective) -> list[str]:
    """``corner``, ``line NAME`` or ``additional`` for every grid point."""
    roles = ["additional"] * grid.shape[0]
    members = np.flatnonzero(base)
    if members.size == 0:
        return roles
    corner = _corner(grid, members)
    for i in members:
        differs = np.flatnonzero(grid[i] != corner)
        if differs.size == 0:
            roles[i] = "corner" if len(space.varied) > 1 else f"line {(space.varied or space.parameters)[0]}"
        else:
            roles[i] = f"line {space.parameters[differs[0]]}"
    return roles


def _holdout_point(grid, measured, base, order) -> int | None:
    """The dearest measured point outside the base lines (the last one added)."""
    candidates = [int(i) for i in order[::-1] if measured[i] and not base[i]]
    return candidates[0] if candidates else None


def _fit_budget(chosen, unmeasured, costs, measured, budget, suggestion) -> list[int]:
    """Trim the next step to the budget, or fill the budget with the next cheapest points."""
    if budget is None:
        return chosen
    spent = suggestion.measured_cost
    count = int(measured.sum())
    limit_cost = budget.limit(suggestion.full_cost)
    point_costs = costs * suggestion.repetitions  # every point with its repetitions
    limit_points = budget.points if budget.points is not None else math.inf
    kept = []
    for i in chosen:
        if suggestion.status == "base" or (spent + point_costs[i] <= limit_cost + 1e-9 and count + 1 <= limit_points):
            kept.append(i)
            spent += point_costs[i]
            count += 1
    if suggestion.status == "base" and (spent > limit_cost + 1e-9 or count > limit_points):
        suggestion.notes.append("the base design alone exceeds the budget: these runs are the minimum for a model")
        return kept
    for i in unmeasured:
        if i in kept:
            continue
        if spent + point_costs[i] > limit_cost + 1e-9 or count + 1 > limit_points:
            break
        kept.append(i)
        spent += point_costs[i]
        count += 1
    return kept
