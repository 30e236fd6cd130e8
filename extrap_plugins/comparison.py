"""Comparing two experiments call path by call path: ratios, growth classes, crossovers, significance.

Call paths are matched by name, or by mapping rules for renamed or
restructured regions (a CPU kernel against its GPU port): a rule is a pair
``A_PATTERN, B_PATTERN`` in which ``*`` stands for any text, carried over in
order (``IntelMPI->*`` → ``OpenMPI->*``).  Rules come first; a call path no rule
covers is matched by its name.  Metrics are matched by name and unit.  What
finds no partner is listed with the reason, never dropped silently.

For every matched pair (both models learned from their own experiment):

* the values and the ratio B/A at the *largest common point* (per parameter the
  smaller of the two largest measured values) and at the target; where the two
  measured ranges do not overlap that point lies below one side's measured range,
  and that side's values there are extrapolated (:attr:`Comparison.common` is False);
* both growth classes and whether they differ;
* the *crossovers*: the values of the scaling parameter (``along``, the process
  count by default) where one model overtakes the other, solved from the models
  (a log grid, refined by Brent's method) from the smallest measured value up to
  the target, the other parameters at the target's values;
* whether the difference at the target is *significant*: true when the two
  prediction intervals at the target (:func:`extrap_plugins.extrapolate`) do not
  overlap, false when they do, None when an interval is unknown or the target lies
  below a side's measured range (an interval there leaves out the uncertainty of
  the model choice, which is known only above the measurements;
  :attr:`Comparison.untested` says so).

A mapping rule that maps no call path is an :class:`~extrap_plugins.errors.ExtrapWarning`
naming the rule (and its file and line); two rules for the same A call path are an error.

The summary ranks the pairs by how much they changed: ``|log2(B/A)|`` at the target.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .api import model, names_argument
from .engine import warn_per_cause, warned_cause
from .errors import ExtrapWarning, InputError
from .extrapolation import extrapolate, largest_point, parse_target, warn_below_floor
from .formatting import described, format_point, format_value
from .models import Model, ModelSet
from .experiment import Experiment
from .plugins import PluginHost, get_host
from .scaling import (argument, crossings, experiment_of, refuse_reading_options, report_text, resource_parameter,
                      selected_models, share_argument)

LEVEL = 0.95


# ------------------------------------------------------------------ mapping
@dataclass(frozen=True)
class Rule:
    """``a`` and ``b`` patterns; ``*`` in ``a`` captures text that fills the ``*`` of ``b`` in order.

    ``source`` and ``line`` say where a rule of a mapping file stands (for messages; not compared).
    """

    a: str
    b: str
    source: str | None = field(default=None, compare=False)
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        """Refuse a rule whose B has more ``*`` than A (each ``*`` of B takes the text of one of A), where it is
        written, before any reading or modelling."""
        if self.b.count("*") > self.a.count("*"):
            message = (f"B's call path {self.b} has more '*' than A's {self.a}: each '*' of B takes the text of one "
                       f"'*' of A")
            if self.source is None:
                raise InputError(f"{self.where}: {message}")
            raise InputError(message, self.source, self.line)

    @property
    def where(self) -> str:
        """The rule as the user wrote it, with its file and line: ``map.csv:3: the rule a,b`` or
        ``mapping rule 'a=b'``."""
        if self.source is None:
            return f"mapping rule {self.a + '=' + self.b!r}"
        line = f":{self.line}" if self.line is not None else ""
        return f"{self.source}{line}: the rule {self.a},{self.b}"

    def apply(self, name: str) -> str | None:
        """The B name for A's ``name``, or None when the rule does not cover it."""
        regex = "^" + "(.*?)".join(re.escape(part) for part in self.a.split("*")) + "$"
        found = re.match(regex, name, re.S)
        if not found:
            return None
        parts = self.b.split("*")  # no more '*' than A's (__post_init__)
        captured = list(found.groups())
        text = parts[0]
        for value, part in zip(captured, parts[1:]):
            text += value + part
        return text


def parse_rule(text: str) -> Rule:
    """``"IntelMPI->*=OpenMPI->*"`` -> ``Rule("IntelMPI->*", "OpenMPI->*")``.

    The text is split at its first ``=``; call paths holding ``=`` go in a mapping file instead.
    """
    a, sep, b = text.partition("=")
    if not sep or not a.strip() or not b.strip():
        raise InputError(f"mapping rule {text!r}: expected A_CALLPATH=B_CALLPATH, such as 'IntelMPI->*=OpenMPI->*'")
    return Rule(a.strip(), b.strip())


MAPPING_HEADERS = (["a", "b"], ["callpath_a", "callpath_b"], ["from", "to"])
"""The headers a mapping file may begin with (after comments)."""


def read_mapping(path: str | os.PathLike) -> list[Rule]:
    """Rules from a CSV file (UTF-8, a byte-order mark dropped): two columns, A's call path and B's (``*`` allowed);
    ``#`` lines and blank lines are skipped, and so is a header (``a,b``, ``callpath_a,callpath_b`` or ``from,to``)
    before the first rule."""
    from .readers._common import read_text  # UTF-8, a byte-order mark dropped: the readers' rule

    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path).strip():
        raise InputError(f"{argument('mapping', flag='map')}: expected the path (str or os.PathLike) of one CSV file "
                         f"of 'A call path,B call path' lines, got {described(path)}")
    if not os.path.exists(path):
        raise InputError("no such mapping file: give a CSV of 'A call path,B call path' lines", path)
    if os.path.isdir(path):
        raise InputError("is a folder; expected a CSV file of 'A call path,B call path' lines", path)
    text = read_text(path, hint="save the mapping file as UTF-8 (a CSV of 'A call path,B call path' lines)")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    rules: list[Rule] = []
    headed = False
    for number, row in enumerate(rows, 1):
        cells = [cell.strip() for cell in row]
        if not cells or not any(cells) or cells[0].startswith("#"):
            continue
        if len(cells) != 2 or not cells[0] or not cells[1]:
            raise InputError(f"expected two columns, A's call path and B's, got {len(cells)}", path, number)
        if not rules and not headed and [c.lower() for c in cells] in MAPPING_HEADERS:
            headed = True
            continue
        rules.append(Rule(cells[0], cells[1], os.fspath(path), number))
    if not rules:
        raise InputError("the mapping file holds no rules (lines 'A call path,B call path')", path)
    return rules


# ------------------------------------------------------------------ results
@dataclass(frozen=True)
class Crossover:
    """Where the two models cross: the scaling parameter's value, and which side is lower beyond it."""

    value: float
    lower_after: str
    """The label of the side whose value is lower just beyond the crossover."""


@dataclass(frozen=True)
class Pair:
    """One matched call path and metric."""

    callpath_a: str
    callpath_b: str
    metric: str
    unit: str
    model_a: Model
    model_b: Model
    growth_a: str | None
    growth_b: str | None
    value_a_largest: float
    value_b_largest: float
    value_a_target: float
    value_b_target: float
    interval_a: tuple[float, float]
    interval_b: tuple[float, float]
    crossovers: tuple[Crossover, ...]
    untested: str = ""
    """Why the significance is not tested (:attr:`Comparison.untested`), or ''."""

    @property
    def growth_differs(self) -> bool:
        return self.growth_a != self.growth_b

    @property
    def ratio_largest(self) -> float:
        return _ratio(self.value_b_largest, self.value_a_largest)

    @property
    def ratio_target(self) -> float:
        return _ratio(self.value_b_target, self.value_a_target)

    @property
    def change(self) -> float:
        """``|log2(B/A)|`` at the target: infinite where one side is 0 and the other not (a call path whose time
        vanished or appeared), NaN where the ratio is unknown or negative."""
        r = self.ratio_target
        if r == 0 or r == math.inf:
            return math.inf
        return abs(math.log2(r)) if math.isfinite(r) and r > 0 else math.nan

    @property
    def significant(self) -> bool | None:
        """Whether the prediction intervals at the target are disjoint (None where one is unknown, and where the
        target lies below a side's measured range: :attr:`untested`)."""
        values = (*self.interval_a, *self.interval_b)
        if self.untested or not all(math.isfinite(v) for v in values):
            return None
        return self.interval_a[1] < self.interval_b[0] or self.interval_b[1] < self.interval_a[0]

    @property
    def name(self) -> str:
        return self.callpath_a if self.callpath_a == self.callpath_b else f"{self.callpath_a} → {self.callpath_b}"


@dataclass(frozen=True)
class Unmatched:
    side: str
    callpath: str
    metric: str
    reason: str


@dataclass
class Comparison:
    """The result of :func:`compare_models` (and of ``extrap_plugins.compare``), pairs ranked by change."""

    labels: tuple[str, str]
    parameters: tuple[str, ...]
    along: str
    largest: dict[str, float]
    """The largest common point: per parameter, the smaller of the two largest measured values (below one side's
    measured range where the ranges do not overlap: :attr:`common`)."""
    smallest: dict[str, float]
    target: dict[str, float]
    target_given: bool
    level: float
    pairs: list[Pair]
    unmatched: list[Unmatched]
    model_sets: tuple[ModelSet, ModelSet] = field(repr=False)
    rules: list[Rule] = field(default_factory=list)
    measured: tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float]]] = field(
        default_factory=lambda: ({}, {}), repr=False)
    """Per side, per parameter: the smallest and the largest measured value."""

    def below(self, point: Mapping[str, float]) -> list[tuple[str, str]]:
        """``(label, parameter)`` wherever ``point`` lies below that side's measured range of that parameter."""
        return [(label, name) for label, ranges in zip(self.labels, self.measured) for name in self.parameters
                if name in ranges and point[name] < ranges[name][0]]

    @property
    def common(self) -> bool:
        """Whether the two measured ranges overlap (in every parameter), so that the largest common point lies in
        both; False: no point was measured by both, and one side's values at :attr:`largest` are extrapolated
        below its measurements."""
        return not self.below(self.largest)

    @property
    def untested(self) -> str:
        """Why the significance is not tested ('' when it is): the target lies below a side's measured range, where
        a prediction interval leaves out the uncertainty of the model choice (known above the measurements only)."""
        below = self.below(self.target)
        if not below:
            return ""
        ranges = " and ".join(f"{label}'s measured range ({name} from {format_value(self._range(label, name)[0])} "
                              f"to {format_value(self._range(label, name)[1])})" for label, name in below)
        return (f"the target {format_point(self.target)} lies below {ranges}, where a prediction interval leaves out "
                f"the uncertainty of the model choice")

    def _range(self, label: str, name: str) -> tuple[float, float]:
        return self.measured[self.labels.index(label)][name]

    @property
    def reading_warnings(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Per side (A, then B), what reading its measurements warned of (a value left out, a run skipped): its
        models' :attr:`~extrap_plugins.models.ModelSet.reading_warnings`."""
        return self.model_sets[0].reading_warnings, self.model_sets[1].reading_warnings

    @property
    def reading_notes(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Per side (A, then B), what its reader noted of how it read the measurements (which metadata became
        parameters, what was left out and why; a warning a note says is kept only here): its models'
        :attr:`~extrap_plugins.models.ModelSet.notes`."""
        return self.model_sets[0].notes, self.model_sets[1].notes

    def __str__(self) -> str:
        """The text report (``extrap-plugins compare``'s output)."""
        return report_text(self)

    def _repr_html_(self) -> str:
        """A notebook shows the HTML report (``export_report(result, "html")``) as one element.

        :mod:`extrap_plugins.reports` imports this module, so it is looked up by name (as
        :func:`~extrap_plugins.scaling.report_text` does for ``str()``)."""
        import importlib

        return importlib.import_module("extrap_plugins.reports").notebook_html(self)

    def __repr__(self) -> str:
        significant = sum(pair.significant is True for pair in self.pairs)
        return (f"<Comparison {self.labels[0]} vs {self.labels[1]}: {len(self.pairs)} matched, {significant} "
                f"significantly different at {format_point(self.target)}, {len(self.unmatched)} unmatched>")

    def curve_points(self, x: np.ndarray) -> np.ndarray:
        """Points with ``along`` from ``x`` and the other parameters at the target's values."""
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        X = np.array([[self.target[name] for name in self.parameters]] * x.shape[0], dtype=np.float64)
        X[:, self.parameters.index(self.along)] = x
        return X


def _ratio(b: float, a: float) -> float:
    """``b / a``; infinite where only ``a`` is 0 and ``b`` positive, NaN where both are 0 or one is unknown."""
    if not (math.isfinite(a) and math.isfinite(b)) or a == 0 == b:
        return math.nan
    if a == 0:
        return math.inf if b > 0 else math.nan
    return b / a


# ------------------------------------------------------------------ compare
def match(models_a: Sequence[Model], models_b: Sequence[Model], units_a: Mapping[str, str],
          units_b: Mapping[str, str], rules: Sequence[Rule], labels: tuple[str, str]):
    """Pairs ``(model_a, model_b)`` and the unmatched models of both sides (with reasons)."""
    by_b = {(m.callpath, m.metric): m for m in models_b}
    b_paths = {m.callpath for m in models_b}
    claimed: dict[tuple[str, str], str] = {}
    why_b: dict[tuple[str, str], str] = {}  # why a B model found no partner, where A has one of its name
    pairs, unmatched = [], []
    found = [(m, *_partner(m.callpath, rules)) for m in models_a]
    # rules come first: a B call path a rule maps to is taken before one of A's of the same name can take it
    for m, target_name, how in sorted(found, key=lambda f: f[1] == f[0].callpath):
        if target_name != m.callpath:
            why_b[(m.callpath, m.metric)] = f"{labels[0]}'s {m.callpath} is mapped to {target_name} {how}"
        key = (target_name, m.metric)
        if key not in by_b:
            named = "it" if target_name == m.callpath else target_name  # (the line names the call path already)
            if target_name in b_paths:
                reason = f"{labels[1]} has {named} but not its metric {m.metric}"
            elif target_name == m.callpath:
                reason = f"not in {labels[1]} ({how})"
            else:
                reason = f"no call path {target_name} in {labels[1]} ({how})"
            unmatched.append(Unmatched(labels[0], m.callpath, m.metric, reason))
            continue
        if key in claimed:
            unmatched.append(Unmatched(labels[0], m.callpath, m.metric,
                                       f"{target_name} in {labels[1]} is already matched to {claimed[key]}"))
            continue
        unit_a, unit_b = units_a.get(m.metric, ""), units_b.get(m.metric, "")
        if unit_a and unit_b and unit_a != unit_b:
            why_b[key] = f"units differ: {unit_a} in {labels[0]}, {unit_b} in {labels[1]}"
            unmatched.append(Unmatched(labels[0], m.callpath, m.metric, why_b[key]))
            continue
        claimed[key] = m.callpath
        pairs.append((m, by_b[key]))
    order = {(m.callpath, m.metric): i for i, m in enumerate(models_a)}
    unmatched.sort(key=lambda u: order[(u.callpath, u.metric)])  # in A's order, as read
    for m in models_b:
        key = (m.callpath, m.metric)
        if key not in claimed:
            unmatched.append(Unmatched(labels[1], m.callpath, m.metric,
                                       why_b.get(key, f"no partner in {labels[0]}")))
    return pairs, unmatched


def _partner(callpath: str, rules: Sequence[Rule]) -> tuple[str, str]:
    """The B call path for A's ``callpath`` and how it was found: by the first rule that covers it, else by name."""
    for rule in rules:
        mapped = rule.apply(callpath)
        if mapped is not None:
            return mapped, f"by the rule {rule.a} = {rule.b}"
    return callpath, "by name"


def check_parameters(a: Sequence[str], b: Sequence[str], labels: tuple[str, str]) -> None:
    """Both sides must have the same parameters (in any order)."""
    if sorted(a) != sorted(b):
        raise InputError(f"{labels[0]} has parameters ({', '.join(a) or 'none'}) but {labels[1]} has "
                         f"({', '.join(b) or 'none'}): compare experiments over the same parameters "
                         f"(rename with the reader's options, or select runs)")


def _along(parameters: Sequence[str], given: str | None) -> str:
    return resource_parameter(list(parameters), given, "along") or parameters[0]


def compare_models(
    a: ModelSet,
    b: ModelSet,
    *,
    labels: tuple[str, str] = ("A", "B"),
    rules: Sequence[Rule] = (),
    target: str | Mapping[str, float] | None = None,
    along: str | None = None,
    level: float = LEVEL,
) -> Comparison:
    """Compare the models of ``a`` and ``b`` (see the module docstring)."""
    labels = (str(labels[0]), str(labels[1]))
    if labels[0] == labels[1]:
        raise InputError(f"the two labels are both {labels[0]!r}: give each side its own (labels=('v1', 'v2'); "
                         f"--label A=... --label B=...)")
    check_parameters(a.parameters, b.parameters, labels)
    parameters = tuple(a.parameters)
    if not parameters:
        raise InputError("the experiments have no parameters: nothing scales, nothing to compare")
    b_models = [_reordered(m, parameters) for m in b.models]
    check_rules(rules)
    _warn_unused_rules(rules, {m.callpath for m in a.models}, labels[0])
    units_a = {m.name: m.unit for m in a.known_metrics}
    units_b = {m.name: m.unit for m in b.known_metrics}
    matched, unmatched = match(a.models, b_models, units_a, units_b, rules, labels)
    _warn_one_unit([model_a.metric for model_a, _ in matched], units_a, units_b, labels)
    if not matched:
        names_a = _some(sorted({m.callpath for m in a.models}))
        names_b = _some(sorted({m.callpath for m in b.models}))
        units = next((u for u in unmatched if u.reason.startswith("units differ")), None)
        if units is not None:
            raise InputError(f"no call path and metric match in name and unit: {units.callpath} [{units.metric}]: "
                             f"{units.reason}; convert one side, or compare other metrics, "
                             f"{argument('metrics', flag='metric')}")
        raise InputError(f"no call path of {labels[0]} ({names_a}) matches one of {labels[1]} ({names_b}): "
                         f"map them with mapping=FILE or rules=['A_CALLPATH=B_CALLPATH'] (--map, --map-rule; '*' "
                         f"for any text)")
    if largest_point(a.experiment) is None or largest_point(b.experiment) is None:
        raise InputError("comparing needs the measurements of both experiments (ModelSet.experiment)")
    measured = (_ranges(a.experiment, parameters), _ranges(b.experiment, parameters))
    largest = {p: min(measured[0][p][1], measured[1][p][1]) for p in parameters}
    smallest = {p: min(measured[0][p][0], measured[1][p][0]) for p in parameters}
    target_point = _target(target, parameters, measured, labels)
    given = target_point is not None
    target_point = target_point or dict(largest)
    along = _along(parameters, along)
    with once_per_cause():
        with of_side(labels[0]):
            rows_a = _rows(a, target_point, largest, level)
        with of_side(labels[1]):  # B's measurements in A's order of the parameters, as its models are
            experiment_b = b.experiment.with_parameters(parameters)
            rows_b = _rows(ModelSet(parameters, b_models, experiment=experiment_b, measure=b.measure,
                                    metrics=b.metrics), target_point, largest, level)
    lo, hi = smallest[along], target_point[along]
    comparison = Comparison(labels, parameters, along, largest, smallest, target_point, given, level, [], unmatched,
                            (a, b), list(rules), measured)
    untested = comparison.untested
    pairs = []
    for model_a, model_b in matched:
        (xa, now_a), (xb, now_b) = rows_a[(model_a.callpath, model_a.metric)], rows_b[(model_b.callpath,
                                                                                       model_b.metric)]
        crossing = _crossovers(model_a, model_b, comparison, lo, hi)
        unit = units_a.get(model_a.metric, "") or units_b.get(model_b.metric, "")
        pairs.append(Pair(model_a.callpath, model_b.callpath, model_a.metric, unit, model_a, model_b,
                          xa.growth, xb.growth, now_a, now_b,
                          xa.value_target, xb.value_target, xa.interval, xb.interval, crossing, untested))
    pairs.sort(key=lambda p: (math.isnan(p.change), 0.0 if math.isnan(p.change) else -p.change))
    comparison.pairs = pairs
    return comparison


def _ranges(experiment: Experiment, parameters: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Per parameter, the smallest and the largest measured value."""
    columns = experiment.coordinates
    return {p: (float(columns[:, experiment.parameter_names.index(p)].min()),
                float(columns[:, experiment.parameter_names.index(p)].max())) for p in parameters}


def _target(target: str | Mapping[str, float] | None, parameters: Sequence[str],
            measured: tuple[Mapping[str, tuple[float, float]], ...], labels: tuple[str, str]
            ) -> dict[str, float] | None:
    """The target point given (None without one), at least the largest common point (``measured``: per side, per
    parameter the smallest and the largest measured value)."""
    point = parse_target(target, parameters)
    if point is None:  # none given, or an empty one (as efficiency takes it)
        return None
    below = [p for p in parameters if point[p] < min(measured[0][p][1], measured[1][p][1])]
    if below:
        raise InputError(_below_largest(point, below, measured, labels))
    return point


def _below_largest(target: Mapping[str, float], below: Sequence[str],
                   measured: tuple[Mapping[str, tuple[float, float]], ...], labels: tuple[str, str]) -> str:
    """The message for a target below the largest common point (per parameter the smaller largest measured value)."""
    pieces = []
    for p in below:
        top_a, top_b = measured[0][p][1], measured[1][p][1]
        piece = f"{p}={format_value(min(top_a, top_b))}"
        if top_a != top_b:
            side, other, top = (labels[0], labels[1], top_b) if top_a < top_b else (labels[1], labels[0], top_a)
            piece += f" ({side}'s; {other}'s is {p}={format_value(top)})"
        pieces.append(piece)
    given = ", ".join(f"{p}={format_value(target[p])}" for p in below)
    return (f"the target {given} is below the largest measured {', '.join(pieces)}: the target must be at least "
            f"{'it' if len(below) == 1 else 'these'}")


def check_rules(rules: Sequence[Rule]) -> None:
    """Refuse two rules for the same A call path (only the first would ever apply)."""
    first: dict[str, Rule] = {}
    for rule in rules:
        earlier = first.setdefault(rule.a, rule)
        if earlier is rule:
            continue
        if earlier.source is None:
            there = "an earlier mapping rule" if earlier.b == rule.b else earlier.where
        elif earlier.source == rule.source:
            there = f"line {earlier.line}"
        else:
            there = f"{earlier.source}:{earlier.line}"
        if earlier.b == rule.b:
            message = f"the same rule as {there}: give each rule once"
        else:
            message = (f"a second rule for the A call path {rule.a} (to {rule.b}); {there} maps it to {earlier.b}: "
                       f"give one rule per A call path")
        if rule.source is not None:
            raise InputError(message, rule.source, rule.line)
        raise InputError(f"{rule.where}: {message}")


def _warn_unused_rules(rules: Sequence[Rule], callpaths: Iterable[str], label: str) -> None:
    """Warn of every rule that maps no call path of A: it matches none, or an earlier rule maps all it matches."""
    callpaths = sorted(callpaths)
    matched: list[list[str]] = [[] for _ in rules]
    used = set()
    for name in callpaths:
        hits = [i for i, rule in enumerate(rules) if rule.apply(name) is not None]
        for i in hits:
            matched[i].append(name)
        if hits:
            used.add(hits[0])
    for i, rule in enumerate(rules):
        if i in used:
            continue
        if matched[i]:
            text = (f"{rule.where} maps no call path: those of {label} it matches ({_some(matched[i])}) are mapped "
                    f"by an earlier rule")
        else:
            text = f"{rule.where} matches no call path of {label} ({_some(callpaths)})"
        warnings.warn(ExtrapWarning(text), stacklevel=3)


def _warn_one_unit(metrics: Iterable[str], units_a: Mapping[str, str], units_b: Mapping[str, str],
                   labels: tuple[str, str]) -> None:
    """Warn once per compared metric whose unit only one side gives (a CSV gives none): its values are compared as
    if both were in that unit."""
    for metric in dict.fromkeys(metrics):
        unit_a, unit_b = units_a.get(metric, ""), units_b.get(metric, "")
        if bool(unit_a) != bool(unit_b):
            (known, unit), other = ((labels[0], unit_a), labels[1]) if unit_a else ((labels[1], unit_b), labels[0])
            warnings.warn(ExtrapWarning(f"metric {metric}: {known} gives its unit, {unit}, {other} none: {other}'s "
                                        f"values are compared as if they were in {unit} (convert them if not)"),
                          stacklevel=3)


def _some(names: Sequence[str], count: int = 4) -> str:
    return ", ".join(names[:count]) + (", ..." if len(names) > count else "")


def _reordered(model: Model, parameters: tuple[str, ...]) -> Model:
    if model.parameters == parameters:
        return model
    from dataclasses import replace

    if model.predictor is not None:  # a predictor takes its own column order
        own = [parameters.index(p) for p in model.parameters]
        inner = model.predictor
        return replace(model, parameters=parameters, predictor=lambda X: inner(np.asarray(X)[:, own]))
    return replace(model, parameters=parameters)


def _rows(model_set: ModelSet, target: dict[str, float], largest: dict[str, float], level: float):
    """Per (call path, metric): the extrapolation to ``target``, and the value at the largest common point.

    That value is cut at the floor the target's is cut at (0 for a quantity measured never below 0), and the cut
    is said, so that the two ratios of a pair mean the same where the two points are one (a model extrapolated
    below its side's measurements to the largest common point may lie below 0 there).
    """
    ranked = extrapolate(model_set, target, level=level, intervals=True)
    floors = np.array([u.floor if u is not None else -math.inf for u in ranked.uncertainty])
    if largest == target:
        now = np.array([x.value_target for x in ranked.rows])
    else:
        now = np.array([float(m.predict(largest)) for m in model_set.models])
        warn_below_floor(model_set.models, now, floors, largest)
        now = np.where(np.isnan(now), now, np.maximum(now, floors))
    return {(m.callpath, m.metric): (x, float(value)) for m, x, value in zip(model_set.models, ranked.rows, now)}


def _crossovers(model_a: Model, model_b: Model, comparison: Comparison, lo: float, hi: float) -> tuple[Crossover, ...]:
    def difference(x):
        X = comparison.curve_points(x)
        return np.asarray(model_b.predict(X), dtype=np.float64) - np.asarray(model_a.predict(X), dtype=np.float64)

    label_a, label_b = comparison.labels
    return tuple(Crossover(x, label_b if after < 0 else label_a) for x, after in crossings(difference, lo, hi))


def compare(
    a: str | os.PathLike | Sequence[str | os.PathLike] | Experiment | ModelSet,
    b: str | os.PathLike | Sequence[str | os.PathLike] | Experiment | ModelSet,
    *,
    labels: Sequence[str] = ("A", "B"),
    mapping: str | os.PathLike | None = None,
    rules: str | Sequence[str] = (),
    target: str | Mapping[str, float] | None = None,
    along: str | None = None,
    level: float | str = 0.95,
    metrics: str | Iterable[str] = (),
    callpaths_a: str | Iterable[str] = (),
    callpaths_b: str | Iterable[str] = (),
    reader: str | None = None,
    reader_options: Mapping[str, Any] | None = None,
    modeler: str = "default",
    measure: str = "mean",
    host: PluginHost | None = None,
    **options: Any,
) -> Comparison:
    """Compare two experiments call path by call path.

    ``a`` and ``b`` are what :func:`read` reads, Experiments, or ModelSets
    (with their experiments, for the intervals).  Call paths are matched by
    name, or through ``mapping`` (a CSV file of ``A,B`` call paths, ``*``
    standing for any text) and ``rules`` (``"IntelMPI->*=OpenMPI->*"``);
    ``callpaths_a``/``callpaths_b`` select call paths (globs) of each side
    first.  ``rules``, ``metrics`` and the call path selections may each be
    one str; ``labels`` are two names; ``level`` is a share, ``0.95`` or
    ``"95%"``.  Returns a :class:`Comparison` (printed, its text report).
    """
    host = host or get_host()
    labels = _labels(labels)
    level = share_argument(level, "level", "95%")
    rules = names_argument(rules, "rules")
    metrics = names_argument(metrics, "metrics")
    mapping_rules = read_mapping(mapping) if mapping is not None else []
    mapping_rules += [parse_rule(rule) for rule in rules]
    check_rules(mapping_rules)  # before the reading and the modelling
    if all(isinstance(data, (ModelSet, Experiment)) for data in (a, b)):
        refuse_reading_options("compare", reader=reader, reader_options=reader_options)
    sides = []
    for side, data, selection in (("a", a, callpaths_a), ("b", b, callpaths_b)):
        selection = names_argument(selection, f"callpaths_{side}")
        if isinstance(data, ModelSet):
            sides.append(selected_models(data, f"compare: {side}", metrics, selection))
        else:
            sides.append(experiment_of(data, reader, reader_options, metrics, selection, host, f"compare: {side}"))
    names = [list(s.parameters) if isinstance(s, ModelSet) else s.parameter_names for s in sides]
    check_parameters(names[0], names[1], labels)  # before the modelling, as the target and along are
    experiments = [s.experiment if isinstance(s, ModelSet) else s for s in sides]
    if all(largest_point(e) is not None for e in experiments):
        _target(target, names[0], tuple(_ranges(e, names[0]) for e in experiments), labels)
    _along(names[0], along)
    sets = []
    with once_per_cause():
        for side, label in zip(sides, labels):
            with of_side(label):
                sets.append(side if isinstance(side, ModelSet) else
                            model(side, modeler, measure=measure, executor="serial", host=host, **options))
    return compare_models(sets[0], sets[1], labels=labels, rules=mapping_rules, target=target, along=along,
                          level=level)


@contextlib.contextmanager
def of_side(label: str) -> Iterator[None]:
    """Warnings about series said inside the block name the side they are of (``new: main [time]: ...``): both
    sides have their ``main [time]``.  A warning of several series (:func:`~extrap_plugins.engine.warn_per_cause`)
    is said once per series, for :func:`once_per_cause` around both sides to join.  Other warnings pass as they
    are."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for said in caught:
        message = said.message
        text, series = warned_cause(message)
        if isinstance(message, ExtrapWarning) and series:
            for callpath, metric in series:
                warnings.warn(type(message)(text, f"{label}: {callpath}", metric), said.category, stacklevel=3)
        else:
            warnings.warn(message, said.category, stacklevel=3)


@contextlib.contextmanager
def once_per_cause() -> Iterator[None]:
    """The warnings said inside the block, one per cause naming its series of both sides
    (:func:`~extrap_plugins.engine.warn_per_cause`)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    warn_per_cause([said.message for said in caught], stacklevel=3)


def _labels(labels: Any) -> tuple[str, str]:
    """The two sides' names, given as a pair (a str would be its characters)."""
    pair = isinstance(labels, Sequence) and not isinstance(labels, str)
    if not pair or len(labels) != 2 or not all(str(label).strip() for label in labels):
        count = "" if not pair else " (an empty name)" if len(labels) == 2 else f" ({len(labels)} given)"
        raise InputError(f"{argument('labels', flag='label')}: expected two names, A's and B's, such as "
                         f"('v1', 'v2'); got {described(labels)}{count}")
    return str(labels[0]), str(labels[1])
