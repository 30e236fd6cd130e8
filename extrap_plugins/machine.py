"""Machine profiles, their calibration, and what-if predictions (Bailey and Snavely 2005: signatures × machine
profiles).

An application's signature is what it asks of the machine per process --
floating-point operations, bytes sent and received, loads and stores,
messages -- as PMNF models of ``p`` and ``n`` per call path.  A machine
profile is the rate at which one process gets each of them done (or the
time each costs, for latencies).  Their convolution predicts the time::

    time(call path, p, n) ≈ Σ_rates amount(p, n) / rate + Σ_latencies amount(p, n) · latency

:func:`calibrate` fits the profile to measured times by non-negative least
squares (relative errors: every measurement counts alike), :func:`whatif`
predicts the time at a target point on the profile and on a changed one
(``bandwidth=4x, latency=0.25x``), and the speedup from improving each
resource alone by a factor (Bailey and Snavely's (2005) Fig. 3: ×4 processor, ×4 bandwidth,
÷4 latency).

The profile (TOML)::

    [machine]
    name = "cluster A"
    [rates]            # per process, amount per second: time += amount / rate
    processor = { metric = "flop", rate = 2e9 }
    bandwidth = { metric = "bytes_sent+bytes_received", rate = 1e9 }
    memory    = { metric = "loads_stores", rate = 4e9 }
    [latencies]        # seconds per unit: time += amount · latency
    latency   = { metric = "messages_sent", seconds = 2e-6 }

``processor = 2e9`` alone takes the metric from the resource's name
(processor, computation, flops: the computation role of
:mod:`extrap_plugins.requirements`; bandwidth, network, communication:
communication; memory, memory_bandwidth, memory_access: memory access;
latency, messages: ``messages_sent``).  Rates and latencies may be left out
(``processor = { metric = "flop" }``) when ``--calibrate`` fits them.

A resource whose cost the measured times do not show (:func:`calibrate`: a
fitted cost of 0, a rounding's worth, or not significantly above 0) is not
identified: it is said, taken to cost no time, and left out of a saved
profile (:meth:`Machine.toml` writes why as a comment).
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .errors import ExtrapWarning, InputError
from .experiment import Experiment, check_measure
from .extrapolation import warn_below_floor
from .formatting import described, format_number, format_point
from .models import Model, ModelSet
from .codesign import _check_sum, _read_toml, default_roles

__all__ = ["Resource", "Machine", "Calibration", "WhatIf", "load_machine", "default_machine", "calibrate",
           "whatif", "parse_scale", "convolve"]

FORMAT = "extrap-plugins/whatif"
VERSION = 1
SENSITIVITY = 4.0
TIME_METRIC = "time"
"""The measured time's metric unless named (``--time-metric``)."""
NEGLIGIBLE = 1e-9
"""A resource whose fitted cost is at most this share of every measured time is not identified by them (a
rounding's worth, not a cost)."""
SIGNIFICANCE = 0.95
"""The level of the one-sided t-test that a fitted cost is above 0 (:func:`calibrate`)."""

ALIASES = {
    "computation": ("processor", "cpu", "computation", "compute", "flops", "flop", "flop_rate"),
    "communication": ("bandwidth", "network", "network_bandwidth", "communication"),
    "memory_access": ("memory", "memory_bandwidth", "memory_access"),
    "messages": ("latency", "network_latency", "messages"),
}
MESSAGES_DEFAULTS = (("messages_sent",), ("messages",), ("visits",))
DEFAULT_NAMES = {"computation": "processor", "communication": "bandwidth", "memory_access": "memory",
                 "messages": "latency"}


@dataclass(frozen=True)
class Resource:
    """One row of a machine profile.

    ``kind`` is ``"rate"`` (``value`` = amount per second) or ``"latency"``
    (``value`` = seconds per unit of amount); ``metrics`` are summed into
    the amount; ``value`` None means not known yet (to be calibrated).
    ``unidentified`` says why calibration could not tell the value from the
    measured times (its ``value`` is then a cost of 0: an infinite rate, a
    latency of 0); None for a value given or identified.
    """

    name: str
    kind: str
    metrics: tuple[str, ...] | None
    value: float | None = None
    unidentified: str | None = None

    @property
    def seconds_per_unit(self) -> float:
        if self.value is None:
            raise InputError(f"machine resource {self.name!r} has no {self.unit_word}; give it or use --calibrate")
        return 1.0 / self.value if self.kind == "rate" else self.value

    @property
    def unit_word(self) -> str:
        return "rate" if self.kind == "rate" else "seconds"

    def scaled(self, factor: float) -> Resource:
        return replace(self, value=None if self.value is None else self.value * factor)

    def improved(self, factor: float) -> Resource:
        """``factor`` times better: a rate times ``factor``, a latency divided by it."""
        return self.scaled(factor if self.kind == "rate" else 1.0 / factor)


@dataclass(frozen=True)
class Machine:
    """A machine profile: named rates and latencies per process."""

    resources: tuple[Resource, ...]
    name: str = ""
    source: str | None = None

    def __getitem__(self, name: str) -> Resource:
        for r in self.resources:
            if r.name == name:
                return r
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.resources]

    def with_values(self, values: Mapping[str, float]) -> Machine:
        return replace(self, resources=tuple(replace(r, value=values.get(r.name, r.value)) for r in self.resources))

    def scaled(self, factors: Mapping[str, float]) -> Machine:
        """Each named resource's value times its factor (``bandwidth=4`` is 4× the bandwidth)."""
        unknown = [k for k in factors if k not in self.names]
        if unknown:
            raise InputError(f"--scale {', '.join(unknown)}: the machine has no such resource; its resources are "
                             f"{', '.join(self.names)}")
        return replace(self, resources=tuple(r.scaled(factors[r.name]) if r.name in factors else r
                                             for r in self.resources))

    def resolved(self, metrics: Sequence[str], where: str = "") -> Machine:
        """Every resource with its metrics: named ones checked, the rest from the resource's name.

        Raises
        ------
        InputError
            A resource names a metric the measurements lack, or none is
            named and its name suggests none that exists.
        """
        found = default_roles(metrics)
        lower = {m.lower(): m for m in metrics}
        for alternative in MESSAGES_DEFAULTS:
            if all(a in lower for a in alternative):
                found.setdefault("messages", tuple(lower[a] for a in alternative))
                break
        resources = []
        for r in self.resources:
            chosen = r.metrics
            if chosen is None:
                role = next((role for role, names in ALIASES.items() if r.name.lower() in names), None)
                if role is None and r.name in metrics:
                    chosen = (r.name,)
                elif role is None or role not in found:
                    raise InputError(f"machine resource {r.name!r}: no metric is named and none of the measured "
                                     f"ones fits its name; write {r.name} = {{ metric = \"NAME\", ... }} "
                                     f"(the metrics are {', '.join(metrics)})", self.source)
                else:
                    chosen = found[role]
            missing = [m for m in chosen if m not in metrics]
            if missing:
                raise InputError(f"machine resource {r.name!r}: {where or 'the input'} has no metric "
                                 f"{', '.join(map(repr, missing))}; its metrics are {', '.join(metrics)}",
                                 self.source)
            resources.append(replace(r, metrics=tuple(chosen)))
        return replace(self, resources=tuple(resources))

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "resources": [
            {"name": r.name, "kind": r.kind, "metric": "+".join(r.metrics or ()), "value": r.value,
             "identified": r.unidentified is None}
            for r in self.resources]}

    def toml(self) -> str:
        """The profile as a machine file (for ``--save-machine``).

        A resource calibration did not identify is left out, with a comment
        saying why: its value would mean nothing.
        """
        lines = ["[machine]", f"name = {_toml_string(self.name or 'calibrated')}", "", "[rates]"]
        for r in self.resources:
            if r.kind == "rate":
                value = "" if r.value is None or math.isnan(r.value) else f", rate = {float(r.value)!r}"  # inf: free
                lines.append(_toml_line(r, value))
        lines += ["", "[latencies]"]
        for r in self.resources:
            if r.kind == "latency":
                value = "" if r.value is None else f", seconds = {float(r.value)!r}"
                lines.append(_toml_line(r, value))
        return "\n".join(lines) + "\n"


def _toml_line(r: Resource, value: str) -> str:
    metric = _toml_string("+".join(r.metrics or ()))
    if r.unidentified is not None:
        return (f"# {_toml_key(r.name)} = {{ metric = {metric} }} is left out: the measured times do not identify "
                f"its {_cost_word(r)} ({r.unidentified})")
    return f"{_toml_key(r.name)} = {{ metric = {metric}{value} }}"


def _cost_word(r: Resource) -> str:
    return "rate" if r.kind == "rate" else "latency"


def _toml_string(text: str) -> str:
    import json

    return json.dumps(text)


def _toml_key(name: str) -> str:
    return name if name.replace("_", "").replace("-", "").isalnum() else _toml_string(name)


def load_machine(path: str | os.PathLike) -> Machine:
    """Read a machine profile (TOML).

    Raises
    ------
    InputError
        Not TOML, an unknown table or key, a value that is not a positive
        number, no resource at all (the message names the file).
    """
    document = _read_toml(path, "machine")
    where = os.fspath(path)
    unknown = [k for k in document if k not in ("machine", "rates", "latencies")]
    if unknown:
        raise InputError(f"unknown table {', '.join(map(repr, unknown))}; a machine file has [machine], [rates] "
                         f"and [latencies]", where, document.line(unknown[0]))
    head = document.get("machine", {})
    if not isinstance(head, Mapping):
        raise InputError("[machine] must be a table (name = \"...\")", where, document.line("machine"))
    extra = [k for k in head if k != "name"]
    if extra:
        raise InputError(f"[machine] has no key {', '.join(map(repr, extra))}; its one key is name", where,
                         document.line("machine", extra[0]))
    resources = []
    for table, kind, key in (("rates", "rate", "rate"), ("latencies", "latency", "seconds")):
        entries = document.get(table, {})
        if not isinstance(entries, Mapping):
            raise InputError(f"[{table}] must be a table of NAME = {{ metric = \"...\", {key} = NUMBER }}", where,
                             document.line(table))
        for name, entry in entries.items():
            with document.at(table, name):
                resources.append(_resource(name, entry, table, kind, key, where, resources))
    if not resources:
        raise InputError("no resource: give [rates] (and [latencies])", where)
    name = head.get("name", "")
    return Machine(tuple(resources), str(name), where)


def _resource(name: str, entry: Any, table: str, kind: str, key: str, where: str,
              resources: Sequence[Resource]) -> Resource:
    """One entry of ``[rates]`` or ``[latencies]`` (``key``: ``rate`` or ``seconds``), checked."""
    metrics, value = None, None
    if isinstance(entry, Mapping):
        extra = [k for k in entry if k not in ("metric", key)]
        if extra:
            raise InputError(f"[{table}] {name}: unknown key {', '.join(map(repr, extra))}; expected metric and {key}",
                             where)
        if "metric" in entry:
            if not isinstance(entry["metric"], str) or not entry["metric"].strip():
                raise InputError(f"[{table}] {name}: metric must be a metric name (or names joined by +)", where)
            metrics = tuple(m.strip() for m in entry["metric"].split("+"))
            _check_sum(metrics, f"[{table}] {name}", where)
        value = entry.get(key)
    else:
        value = entry
    if value is not None:
        free = key == "rate" and value == math.inf  # a resource calibration found costs no time
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 \
                or not (math.isfinite(value) or free):
            raise InputError(f"[{table}] {name}: {key} must be a positive number, got {value!r}", where)
        value = float(value)
    if any(r.name == name for r in resources):
        raise InputError(f"resource {name!r} is both a rate and a latency", where)
    return Resource(name, kind, metrics, value)


def default_machine(metrics: Sequence[str]) -> Machine:
    """The resources the metric names suggest (for ``--calibrate`` without ``--machine``)."""
    probe = Machine(tuple(Resource(DEFAULT_NAMES[role], "latency" if role == "messages" else "rate", None)
                          for role in ("computation", "memory_access", "communication", "messages")))
    resources = []
    for r in probe.resources:
        try:
            resources.append(Machine((r,)).resolved(metrics).resources[0])
        except InputError:
            continue
    if not resources:
        raise InputError(f"no metric suggests a resource (flop, bytes_sent, loads_stores, messages_sent, ...); "
                         f"give a machine file with --machine (the metrics are {', '.join(metrics)})")
    return Machine(tuple(resources), "calibrated")


def parse_scale(text: str | Iterable[str] | Mapping[str, Any] | None) -> dict[str, float]:
    """``"bandwidth=4x,latency=0.25x"`` -> ``{"bandwidth": 4.0, "latency": 0.25}``."""
    if text is None:
        return {}
    if isinstance(text, Mapping):
        items = list(text.items())
    else:
        texts = [text] if isinstance(text, str) else list(text)
        items = []
        for t in texts:
            for pair in t.split(","):
                key, sep, value = pair.partition("=")
                if not sep or not key.strip():
                    raise InputError(f"--scale {pair.strip()!r}: expected NAME=FACTOR, such as bandwidth=4x")
                items.append((key.strip(), value.strip()))
    factors = {}
    for key, value in items:
        number = value
        if isinstance(value, str):
            stripped = value.strip().rstrip("x×").strip()
            try:
                number = float(stripped)
            except ValueError:
                number = None
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number) \
                or number <= 0:
            raise InputError(f"--scale {key}={value}: expected a positive factor such as 4x or 0.25x")
        factors[key] = float(number)
    return factors


# -------------------------------------------------------------------- measurements
def _series(experiment: Experiment, measure: str) -> dict[tuple[str, str], dict[tuple[float, ...], float]]:
    """``{(callpath, metric): {point: value}}`` with repetitions reduced by ``measure``."""
    reduce = {"mean": np.mean, "median": np.median, "minimum": np.min, "maximum": np.max}[measure]
    out: dict[tuple[str, str], dict[tuple[float, ...], list[float]]] = {}
    names_c = [c.name for c in experiment.callpaths]
    names_m = [m.name for m in experiment.metrics]
    for c, m, point, value in zip(experiment.callpath_index, experiment.metric_index,
                                  map(tuple, experiment.coordinates), experiment.value):
        out.setdefault((names_c[c], names_m[m]), {}).setdefault(point, []).append(value)
    return {key: {point: float(reduce(values)) for point, values in points.items()} for key, points in out.items()}


def convolve(machine: Machine, amounts: Mapping[str, float]) -> float:
    """Seconds: Σ amount · seconds per unit over the machine's resources (``amounts`` by resource name)."""
    return float(sum(amounts.get(r.name, 0.0) * r.seconds_per_unit for r in machine.resources))


# ---------------------------------------------------------------------- calibration
@dataclass
class CallpathFit:
    """How well the convolution explains one call path's measured times."""

    callpath: str
    points: int
    mean_error: float
    max_error: float
    share: float
    """Convolved over measured time, summed over the points."""


@dataclass
class Calibration:
    """The machine profile fitted to measured times, and how well it explains them."""

    machine: Machine
    fits: list[CallpathFit]
    mean_error: float
    max_error: float
    rows: int
    given: tuple[str, ...] = ()
    """The resources whose values the machine gave: kept, not fitted."""

    def as_json(self) -> dict[str, Any]:
        return {"machine": self.machine.as_json(), "mean_error": self.mean_error, "max_error": self.max_error,
                "rows": self.rows, "given": list(self.given),
                "callpaths": [{"callpath": f.callpath, "points": f.points, "mean_error": f.mean_error,
                               "max_error": f.max_error, "share": f.share} for f in self.fits]}


def calibrate(
    experiment: Experiment | ModelSet | str | os.PathLike | Sequence[str | os.PathLike],
    machine: Machine | str | os.PathLike | None = None,
    *,
    time_metric: str = TIME_METRIC,
    callpaths: str | Sequence[str] | None = None,
    measure: str = "mean",
    reader: str | None = None,
    reader_options: Mapping[str, Any] | None = None,
) -> Calibration:
    """Fit the machine's rates and latencies left out to the measured times by non-negative least squares.

    Every measured (call path, point) with a time and at least one
    resource amount is one equation ``time = Σ amount_k · s_k`` with
    ``s_k >= 0`` the seconds per unit of resource ``k``; each equation is
    divided by its time, so relative errors are minimised
    (``scipy.optimize.nnls``).  Rates are ``1 / s_k``, latencies ``s_k``.
    A value the machine gives is kept (:attr:`Calibration.given`): the others
    explain what it leaves of each time.

    A resource the times do not identify -- its fitted cost is 0, at most
    :data:`NEGLIGIBLE` of every measured time, or not significantly above 0
    (one-sided t-test at :data:`SIGNIFICANCE` over the fit's residuals) --
    is left out and the rest fitted again, the least significant first,
    until every resource left is identified (one is always left).  It is
    said (:class:`~extrap_plugins.errors.ExtrapWarning`), taken to cost no
    time, and its :attr:`Resource.unidentified` says why.

    Parameters
    ----------
    experiment : Experiment, ModelSet with measurements, or path(s)
        The measurements (a path is read as :func:`extrap_plugins.read` reads it, with ``reader`` and
        ``reader_options``).
    machine : Machine or path of a machine file, optional
        The resources to fit; without one, those the metric names suggest (:func:`default_machine`).
    callpaths : glob or globs, optional
        Only these call paths (one str is one glob).

    Raises
    ------
    InputError
        No time metric, no equation, an unknown measure, an argument of the
        wrong kind, or a resource whose amount is zero everywhere (it cannot
        be calibrated).
    """
    check_measure(measure)
    machine = _machine_argument(machine, "calibrate")
    callpaths = _callpaths_argument(callpaths)
    experiment = _measurements(experiment, "calibrate", reader, reader_options,
                               "measurements: an Experiment, a ModelSet of them, or a path (str or os.PathLike) or "
                               "a list of paths")
    metrics = [m.name for m in experiment.metrics]
    _check_time_metric(time_metric, metrics, experiment.source, required=True)
    machine = (machine or default_machine(metrics)).resolved(metrics, experiment.source)
    data = _series(experiment, measure)
    names = _selected([c.name for c in experiment.callpaths], callpaths, experiment.source)
    rows, times, owners = [], [], []
    for callpath in names:
        measured = data.get((callpath, time_metric))
        if not measured:
            continue
        for point, seconds in measured.items():
            amounts = [sum(data.get((callpath, m), {}).get(point, 0.0) for m in r.metrics) for r in machine.resources]
            if not any(amounts) or not seconds > 0 or not all(map(math.isfinite, amounts)):
                continue
            rows.append(amounts)
            times.append(seconds)
            owners.append(callpath)
    if not rows:
        raise InputError(f"nothing to calibrate: no call path has both {time_metric!r} and an amount of "
                         f"{', '.join(machine.names)}", experiment.source or None)
    A = np.asarray(rows, dtype=np.float64)
    t = np.asarray(times, dtype=np.float64)
    given = [k for k, r in enumerate(machine.resources) if r.value is not None]
    left_out = [k for k, r in enumerate(machine.resources) if r.value is None]
    unused = [machine.resources[k].name for k in left_out if not np.any(A[:, k])]
    if unused:
        raise InputError(f"machine resource {', '.join(map(repr, unused))}: its amount is zero wherever time is "
                         f"measured; it cannot be calibrated (leave it out of the machine file)",
                         experiment.source or None)
    seconds_per_unit = np.array([r.seconds_per_unit if k in given else 0.0 for k, r in enumerate(machine.resources)])
    unidentified: dict[int, str] = {}
    if left_out:  # the values given are kept: the others explain what they leave of each time
        rest = 1.0 - (A[:, given] @ seconds_per_unit[given]) / t
        fitted, why = _fit(A[:, left_out] / t[:, None], rest)  # each equation over its time: relative errors
        seconds_per_unit[left_out] = fitted
        unidentified = {left_out[j]: text for j, text in why.items()}
    values: dict[int, float] = {}
    for k, r in enumerate(machine.resources):
        if k in given:
            values[k] = r.value
        elif k in unidentified:
            warnings.warn(ExtrapWarning(
                f"machine resource {r.name!r} ({'+'.join(r.metrics)}): the measured times do not identify its "
                f"{_cost_word(r)} ({unidentified[k]}); it is taken to cost no time and a saved machine leaves it "
                f"out"), stacklevel=2)
            values[k] = math.inf if r.kind == "rate" else 0.0
        else:
            s = float(seconds_per_unit[k])
            values[k] = 1.0 / s if r.kind == "rate" else s
    fitted = replace(machine, resources=tuple(replace(r, value=values[k], unidentified=unidentified.get(k))
                                              for k, r in enumerate(machine.resources)))
    predicted = A @ seconds_per_unit
    error = np.abs(predicted - t) / t
    fits = []
    for callpath in dict.fromkeys(owners):
        mine = np.array([o == callpath for o in owners])
        fits.append(CallpathFit(callpath, int(mine.sum()), float(error[mine].mean()), float(error[mine].max()),
                                float(predicted[mine].sum() / t[mine].sum())))
    return Calibration(fitted, fits, float(error.mean()), float(error.max()), len(t),
                       tuple(machine.resources[k].name for k in given))


def _fit(weighted: np.ndarray, rest: np.ndarray) -> tuple[np.ndarray, dict[int, str]]:
    """Seconds per unit of each resource fitting ``weighted @ s = rest`` (non-negative least squares), and why each
    resource the equations do not identify is left out (its cost 0).

    ``weighted`` : ndarray, shape (n_equations, n_resources), each equation over its time; ``rest`` the share of each
    time these resources are to explain (1 where no value is given).  The unidentified (:func:`_unidentified`) are
    left out and the rest fitted again -- those of no cost at once, else the least significant -- until none is, or
    one of a cost above 0 is left.
    """
    from scipy.optimize import nnls
    from scipy.special import stdtrit  # the t distribution's quantile; lighter than scipy.stats

    kept = list(range(weighted.shape[1]))
    unidentified: dict[int, str] = {}
    while True:
        scale = weighted[:, kept].max(axis=0)  # columns of comparable size: nnls is scale-sensitive in its tolerance
        solution, _ = nnls(weighted[:, kept] / scale, rest, maxiter=50 * len(kept))
        seconds_per_unit = np.zeros(weighted.shape[1])
        seconds_per_unit[kept] = solution / scale
        if len(kept) == 1 and seconds_per_unit[kept[0]] > 0:
            return seconds_per_unit, unidentified
        free, weak = _unidentified(weighted[:, kept], seconds_per_unit[kept], rest, stdtrit)
        if len(free) == len(kept) and np.any(seconds_per_unit[kept] > 0):  # keep the one of most cost
            del free[int(np.argmax((weighted[:, kept] * seconds_per_unit[kept]).max(axis=0)))]
        if weak and not free:  # the least significant alone: without it the others may be
            least = min(weak, key=lambda j: weak[j][1])
            free = {least: weak[least][0]}
        if not free:
            return seconds_per_unit, unidentified
        for j in sorted(free, reverse=True):
            unidentified[kept[j]] = free[j]
            del kept[j]
        if not kept:  # the values given explain the times already
            return seconds_per_unit, unidentified


def _unidentified(weighted: np.ndarray, seconds_per_unit: np.ndarray, rest: np.ndarray,
                  quantile) -> tuple[dict[int, str], dict[int, tuple[str, float]]]:
    """The columns of a non-negative fit of ``weighted @ s = rest`` whose cost the data do not show, with why: those
    of no cost (0, or a rounding's worth), else those whose cost is not significantly above 0 with their t.

    ``weighted`` : ndarray, shape (n_equations, n_resources), each equation over its time; ``rest`` what they are
    to explain of each time (:func:`_fit`); ``quantile(dof, q)`` the t distribution's.  The t statistics are
    those of least squares on these columns, all of positive cost.
    """
    share = weighted * seconds_per_unit  # each resource's share of each measured time
    largest = share.max(axis=0)
    free = {}
    for j, s in enumerate(seconds_per_unit):
        if s <= 0:
            free[j] = "its fitted cost is 0"
        elif largest[j] <= NEGLIGIBLE:
            free[j] = f"its fitted cost is at most {largest[j]:.1e} of any measured time"
    n, k = weighted.shape
    dof = n - k
    residual = rest - share.sum(axis=1)
    if free or dof <= 0 or not np.any(residual):  # no residual to judge by (an exact fit): every cost is shown
        return free, {}
    size = weighted.max(axis=0)
    try:
        gram_inverse = np.linalg.inv((weighted / size).T @ (weighted / size))
    except np.linalg.LinAlgError:  # proportional columns: none is identified by itself
        gram_inverse = np.full((k, k), np.inf)
    error = np.sqrt(float(residual @ residual) / dof * np.abs(np.diag(gram_inverse)))
    t_values = seconds_per_unit * size / error
    critical = float(quantile(dof, SIGNIFICANCE))
    return free, {j: (f"its fitted share of the measured times, at most {largest[j]:.2%}, is not significantly "
                      f"above 0: t = {t_value:.2f} < {critical:.2f} (one-sided {SIGNIFICANCE:.0%}, {dof} degrees of "
                      f"freedom)", float(t_value))
                  for j, t_value in enumerate(t_values) if not t_value >= critical}


# -------------------------------------------------------------------------- what-if
@dataclass
class WhatIfRow:
    """One call path at the target: amounts, predicted times and speedups."""

    callpath: str
    amounts: dict[str, float]
    time: float
    """Predicted on the machine as given (or calibrated)."""
    scaled_time: float | None
    """Predicted on the machine changed by ``scale``; None where it changes a resource the calibration did not
    identify (its cost is unknown, so is the time with it changed: as in :attr:`speedups`)."""
    modelled_time: float | None
    """The time metric's own PMNF model at the target, when the input has one."""
    shares: dict[str, float]
    """Each resource's share of ``time``."""
    speedups: dict[str, float | None]
    """``time`` over the time with one resource improved by the sensitivity factor; ``"all"``: all of them.
    None for a resource the calibration did not identify (:attr:`Resource.unidentified`): its cost is unknown, so
    is what improving it buys."""

    @property
    def speedup(self) -> float | None:
        if self.scaled_time is None:
            return None
        return self.time / self.scaled_time if self.scaled_time > 0 else math.nan


@dataclass
class WhatIf:
    """What-if predictions per call path and in total."""

    machine: Machine
    scale: dict[str, float]
    target: dict[str, float]
    sensitivity: float
    rows: list[WhatIfRow]
    total: WhatIfRow
    calibration: Calibration | None = None
    models: dict[str, dict[str, str]] = field(default_factory=dict)
    values: dict[str, str] = field(default_factory=dict)
    """Per metric (amounts and time), ``"inclusive"`` or ``"exclusive"``: what the total sums (the root call paths,
    or every call path)."""
    reading_warnings: list[str] = field(default_factory=list)
    """What reading the measurements warned of (a value left out, a run skipped): the models'
    :attr:`~extrap_plugins.models.ModelSet.reading_warnings`."""
    reading_notes: list[str] = field(default_factory=list)
    """What the reader noted of how it read the measurements (which metadata became parameters, what was left out
    and why; a warning a note says is kept only here): the models' :attr:`~extrap_plugins.models.ModelSet.notes`."""
    model_warnings: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    """Per call path and metric of :attr:`models`, what that model warns of (its
    :attr:`~extrap_plugins.models.Model.warnings`, as stderr says them; an empty list where nothing)."""

    def as_json(self) -> dict[str, Any]:
        """The machine interface: ``{"format": "extrap-plugins/whatif", "version": 1, "machine", "scale", "target",
        "sensitivity", "calibration", "values", "models", "model_warnings", "reading_notes", "reading_warnings",
        "rows", "total"}`` (``models``: per call path and metric the formula; ``model_warnings``: per call path and
        metric what that model warns of; ``reading_notes`` and ``reading_warnings`` lists of str, empty where the
        reader noted nothing and where reading warned of nothing)."""
        def row(r: WhatIfRow) -> dict[str, Any]:
            return {"callpath": r.callpath, "amounts": r.amounts, "time": r.time, "scaled_time": r.scaled_time,
                    "speedup": r.speedup, "modelled_time": r.modelled_time, "shares": r.shares,
                    "speedups": r.speedups}

        return {"format": FORMAT, "version": VERSION, "machine": self.machine.as_json(), "scale": self.scale,
                "target": self.target, "sensitivity": self.sensitivity,
                "calibration": None if self.calibration is None else self.calibration.as_json(),
                "values": self.values, "models": self.models, "model_warnings": self.model_warnings,
                "reading_notes": list(self.reading_notes),
                "reading_warnings": list(self.reading_warnings),
                "rows": [row(r) for r in self.rows], "total": row(self.total)}

    def render(self, kind: str = "text") -> str:
        from . import codesign_output

        return codesign_output.render_whatif(self, kind)

    def text(self) -> str:
        return self.render("text")


def whatif(
    source: Any,
    machine: Machine | str | os.PathLike | None = None,
    *,
    target: Mapping[str, float] | str,
    scale: Mapping[str, Any] | str | None = None,
    calibrate_rates: bool = False,
    sensitivity: float = SENSITIVITY,
    time_metric: str = TIME_METRIC,
    callpaths: Sequence[str] | None = None,
    measure: str = "mean",
    reader: str | None = None,
    modeler: str = "default",
    reader_options: Mapping[str, Any] | None = None,
    **model_options: Any,
) -> WhatIf:
    """Predict each call path's time at ``target`` on ``machine``, on a changed machine, and its sensitivities.

    Parameters
    ----------
    source : path, Experiment or ModelSet
        Measurements (modelled here: one PMNF model per call path and
        resource metric) or models.  Calibration needs measurements.
    machine : Machine or path, optional
        The profile; without one, ``calibrate_rates`` builds it from the
        metric names (:func:`default_machine`).
    target : mapping
        The point, such as ``{"p": 4096, "n": 1e6}``.
    scale : ``{"bandwidth": 4, "latency": 0.25}`` or ``"bandwidth=4x,latency=0.25x"``
        The changed machine: each named resource's value times its factor.
    calibrate_rates : bool
        Fit the machine's values to the measured times first (:func:`calibrate`).
    sensitivity : float
        The factor of the sensitivity study (4: ×4 rates, ÷4 latencies).
    callpaths : glob or globs, optional
        Only these call paths (the total sums the roots among them; one str is one glob).

    A time or an amount whose model lies below 0 at the target is given as
    0, and a call path whose amounts are all 0 there is left out; each is
    said (:class:`~extrap_plugins.errors.ExtrapWarning`, naming the call
    path and metric).
    """
    from . import api

    check_measure(measure)
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, float)) or not sensitivity > 0 \
            or not math.isfinite(sensitivity):
        raise InputError(f"--sensitivity {sensitivity}: expected a positive factor such as 4")
    machine = _machine_argument(machine, "whatif")
    callpaths = _callpaths_argument(callpaths)
    experiment = None
    if isinstance(source, ModelSet):
        models = source
        experiment = source.experiment
    else:
        experiment = _measurements(source, "whatif", reader, reader_options,
                                   f"an Experiment, a ModelSet or {api.PATHS}")
    metrics = [m.name for m in experiment.metrics] if experiment is not None else \
        list(dict.fromkeys(m.metric for m in models))
    _check_time_metric(time_metric, metrics, models.source if experiment is None else experiment.source,
                       required=calibrate_rates)
    calibration = None
    if calibrate_rates:
        if experiment is None:
            raise InputError("--calibrate needs measurements; the models given carry none")
        calibration = calibrate(experiment, machine, time_metric=time_metric, callpaths=callpaths, measure=measure)
        machine = calibration.machine
    elif machine is None:
        raise InputError("whatif needs a machine profile (--machine M.toml) or --calibrate")
    machine = machine.resolved(metrics, getattr(experiment, "source", "") or "")
    missing = [r.name for r in machine.resources if r.value is None]
    if missing:
        which = (f"machine resource {missing[0]!r} has no value" if len(missing) == 1 else
                 f"machine resources {', '.join(map(repr, missing))} have no value")
        raise InputError(f"{which}; give {'it' if len(missing) == 1 else 'them'} in the machine file or use "
                         f"--calibrate", machine.source)
    factors = parse_scale(scale)
    changed = machine.scaled(factors)
    wanted = sorted({m for r in machine.resources for m in r.metrics} | ({time_metric} & set(metrics)))
    if not isinstance(source, ModelSet):
        models = api.model(experiment, modeler, metrics=wanted, measure=measure, **model_options)
    point = _target(target, models.parameters)
    by_key = {(m.callpath, m.metric): m for m in models}
    names = _selected(list(dict.fromkeys(m.callpath for m in models)), callpaths,
                      models.source if experiment is None else experiment.source)
    negatives = _negative_series(models.experiment if models.experiment is not None else experiment)
    amount_metrics = [m for r in machine.resources for m in r.metrics]
    unknown = any(machine[name].unidentified is not None for name, factor in factors.items() if factor != 1)
    rows = []
    formulas: dict[str, dict[str, str]] = {}
    cautions: dict[str, dict[str, list[str]]] = {}
    given_by_metric: dict[str, dict[str, float]] = {}  # call path -> metric -> amount (for the total)
    for callpath in names:
        amounts, found, cut = {}, False, False
        for r in machine.resources:
            amount = 0.0
            for metric in r.metrics:
                m = by_key.get((callpath, metric))
                if m is not None:
                    value = float(m.predict(point))
                    given = _at_least_zero(m, value, point, negatives, "an amount")
                    given_by_metric.setdefault(callpath, {})[metric] = given
                    amount += given
                    found, cut = True, cut or value < 0
                    formulas.setdefault(callpath, {})[metric] = m.formula
                    cautions.setdefault(callpath, {})[metric] = list(m.warnings)
            amounts[r.name] = amount
        if not any(amounts.values()):
            why = ("no model of an amount" if not found else
                   f"every amount is 0 at {format_point(point)}{', the negative ones cut at 0' if cut else ''}")
            warnings.warn(ExtrapWarning(f"{why}: the call path is left out of the what-if", callpath,
                                        ", ".join(amount_metrics)), stacklevel=2)
            continue
        timed = by_key.get((callpath, time_metric))
        modelled = None if timed is None else \
            _at_least_zero(timed, float(timed.predict(point)), point, negatives, "a time")
        rows.append(_row(callpath, amounts, machine, None if unknown else changed, sensitivity, modelled))
    if not rows:
        if any(key[1] in amount_metrics for key in by_key if key[0] in names):
            raise InputError(f"no call path has an amount of {', '.join(amount_metrics)} above 0 at "
                             f"{format_point(point)} to predict from")
        raise InputError(f"no call path has a model of {', '.join(sorted(wanted))} to predict from")
    kinds = _value_kinds(models, [*amount_metrics, time_metric])
    amounts = {r.name: sum(given_by_metric.get(row.callpath, {}).get(metric, 0.0)
                           for metric in r.metrics for row in _total_rows(rows, kinds[metric]))
               for r in machine.resources}
    modelled = [r.modelled_time for r in _total_rows(rows, kinds[time_metric])]
    total = _row("total", amounts, machine, None if unknown else changed, sensitivity,
                 None if any(m is None for m in modelled) else float(sum(modelled)))
    return WhatIf(machine, factors, point, float(sensitivity), rows, total, calibration, formulas,
                  {metric: kinds[metric] for metric in dict.fromkeys([*amount_metrics, time_metric])
                   if any(m.metric == metric for m in models)}, list(models.reading_warnings), list(models.notes),
                  cautions)


def _value_kinds(models: ModelSet, metrics: Sequence[str]) -> dict[str, str]:
    """Per metric, whether a call path's value includes its children's (``"inclusive"``) or not
    (``"exclusive"``), as :func:`~extrap_plugins.extrapolate` tells them apart; inclusive where no model has it."""
    from .extrapolation import value_kinds

    found = value_kinds(models)
    return {metric: found.get(metric, "inclusive") for metric in metrics}


def _total_rows(rows: Sequence[WhatIfRow], kind: str) -> list[WhatIfRow]:
    """The rows whose sum is the whole program: every one for exclusive values, else those without an ancestor
    among them (the roots)."""
    if kind == "exclusive":
        return list(rows)
    return [r for r in rows if not any(r.callpath.startswith(o.callpath + "->") for o in rows)]


def _negative_series(experiment: Experiment | None) -> set[tuple[str, str]] | None:
    """The (call path, metric) series with a measured value below 0; None when the measurements are not known."""
    if experiment is None:
        return None
    below = np.asarray(experiment.value, dtype=np.float64) < 0  # NaN is not
    names_c = [c.name for c in experiment.callpaths]
    names_m = [m.name for m in experiment.metrics]
    pairs = set(zip(np.asarray(experiment.callpath_index)[below].tolist(),
                    np.asarray(experiment.metric_index)[below].tolist()))
    return {(names_c[c], names_m[m]) for c, m in pairs}


def _at_least_zero(model: Model, value: float, point: Mapping[str, float], negatives: set[tuple[str, str]] | None,
                   what: str) -> float:
    """``value``, the model's at ``point``, or 0 where it lies below: said once, with the model's own value.

    A time (``what``) whose measured values lie below 0 too is no duration, and not cut; an amount always is.
    """
    if not value < 0:
        return value
    if negatives is not None and (model.callpath, model.metric) not in negatives:
        warn_below_floor([model], np.array([value]), np.array([0.0]), point)  # the words of model --target's
    elif what == "a time" and negatives is not None:
        return value
    else:
        warnings.warn(ExtrapWarning(f"the model is {format_number(value, False)} at {format_point(point)}, below 0, "
                                    f"which {what} never is: the value given is 0 (do not trust the model there)",
                                    model.callpath, model.metric), stacklevel=3)
    return 0.0


def _check_time_metric(time_metric: str, metrics: Sequence[str], source: str | None, required: bool) -> None:
    """The time metric must be measured to calibrate on; else it may be missing only as the default
    (:data:`TIME_METRIC`: the time metric's own model is then not given), not as a name given (a typo)."""
    if time_metric not in metrics and (required or time_metric != TIME_METRIC):
        raise InputError(f"--time-metric {time_metric}: no such metric; the metrics are {', '.join(metrics)}",
                         source or None)


def _selected(names: Sequence[str], callpaths: Sequence[str], source: str | None) -> list[str]:
    """The call paths of ``names`` the globs ``callpaths`` match (all without globs); none is an error naming the
    globs, as ``model``'s (it was "nothing to calibrate: no call path has both 'time' and an amount of ...")."""
    from .experiment import callpath_hint, matching

    if not callpaths:
        return list(names)
    chosen = matching(callpaths, names)
    if not chosen:
        raise InputError(f"no call path matches {', '.join(map(repr, callpaths))} (--callpath)"
                         f"{callpath_hint(callpaths, names)}", source or None)
    return chosen


def _callpaths_argument(callpaths: Any) -> tuple[str, ...]:
    from .api import names_argument

    return names_argument(callpaths, "callpaths")


def _machine_argument(machine: Any, function: str) -> Machine | None:
    """``machine`` as a Machine: read from its path, None kept."""
    if machine is None or isinstance(machine, Machine):
        return machine
    if isinstance(machine, (str, os.PathLike)):
        return load_machine(machine)
    raise InputError(f"{function}: expected a Machine or the path of a machine file (TOML), got {described(machine)}")


def _measurements(source: Any, function: str, reader: str | None, reader_options: Mapping[str, Any] | None,
                  expected: str) -> Experiment:
    """``source`` as an Experiment: read from its path(s), or the measurements a ModelSet carries."""
    from . import api

    if isinstance(source, Experiment):
        return source
    if isinstance(source, ModelSet):
        if source.experiment is None:
            raise InputError(f"{function} needs measurements; the models given carry none")
        return source.experiment
    return api.read(api.paths_argument(source, function, expected), reader, **(reader_options or {}))


def _target(target: Mapping[str, float] | str | None, parameters: Sequence[str]) -> dict[str, float]:
    from .extrapolation import parse_target

    point = parse_target(target, parameters)
    if point is None:
        raise InputError("whatif needs --target, such as p=4096,n=1e6")
    return point


def _row(callpath: str, amounts: Mapping[str, float], machine: Machine, changed: Machine | None, factor: float,
         modelled: float | None) -> WhatIfRow:
    """The row of one call path; ``changed`` None: the scaled machine's time is unknown (it changes a resource the
    calibration did not identify)."""
    time = convolve(machine, amounts)
    parts = {r.name: amounts[r.name] * r.seconds_per_unit for r in machine.resources}
    speedups = {}
    for r in machine.resources:
        if r.unidentified is not None:
            speedups[r.name] = None
            continue
        better = replace(machine, resources=tuple(x.improved(factor) if x.name == r.name else x
                                                  for x in machine.resources))
        speedups[r.name] = _divide(time, convolve(better, amounts))
    everything = replace(machine, resources=tuple(x.improved(factor) for x in machine.resources))
    speedups["all"] = _divide(time, convolve(everything, amounts))
    return WhatIfRow(callpath, dict(amounts), time, None if changed is None else convolve(changed, amounts), modelled,
                     {k: _divide(v, time) for k, v in parts.items()}, speedups)


def _divide(a: float, b: float) -> float:
    return a / b if b > 0 else (1.0 if a == 0 else math.inf)
