"""A comparison of two experiments (:class:`~extrap_plugins.comparison.Comparison`) as text, CSV, JSON and HTML.

JSON (``format: extrap-plugins/comparison``, version 1) has one top-level key per line and one pair per line,
ranked by change, and per side (``A``, ``B``, as ``labels`` and ``measured_ranges``) ``reading_notes``: what
its reader noted (:attr:`Comparison.reading_notes <extrap_plugins.comparison.Comparison.reading_notes>`), and
``reading_warnings``: what reading its measurements warned of (:attr:`Comparison.reading_warnings
<extrap_plugins.comparison.Comparison.reading_warnings>`), which the text and HTML reports list too; CSV has
one row per pair; the HTML diff report draws both models of every pair (the first ``plot_top``) with the
crossovers marked.
"""

from __future__ import annotations

import csv
import html
import io
import math
from typing import Any

import numpy as np

from extrap_plugins.comparison import Comparison, Pair
from extrap_plugins.errors import InputError
from extrap_plugins.exporters._options import option_int
from extrap_plugins.formatting import (callpath_labels, format_count, format_percent, format_point, format_value,
                                      json_number, note_items, note_lines, reading_items, reading_lines, text_table)
from extrap_plugins.notebook import drawn

from . import cell, definition_list, json_lines, people, table
from .svg import PALETTE, Mark, Series, chart

FORMAT = "extrap-plugins/comparison"
VERSION = 1
PLOT_TOP = 50
CSV_COLUMNS = ("rank", "callpath_a", "callpath_b", "metric", "unit", "function_a", "function_b", "growth_a",
               "growth_b", "growth_differs", "value_a_largest", "value_b_largest", "ratio_largest",
               "value_a_target", "value_b_target", "ratio_target", "interval_a_low", "interval_a_high",
               "interval_b_low", "interval_b_high", "significant", "crossovers")


def _crossings(pair: Pair, along: str) -> str:
    return "; ".join(f"{along}={people(c.value)} ({c.lower_after} lower after)" for c in pair.crossovers)


def _ratio(value: float) -> str:
    """A ratio for people: ``inf`` where A's value is 0 and B's not (CSV and JSON leave it empty, as their values
    say it)."""
    return "inf" if value == math.inf else people(value)


def _significant(pair: Pair) -> str:
    return {True: "yes", False: "no", None: "n/a"}[pair.significant]


def _header(result: Comparison) -> list[str]:
    a, b = result.labels
    crossovers = (f"crossovers along {result.along} from {format_value(result.smallest[result.along])} to "
                  f"{format_value(result.target[result.along])}")
    significant = f"significant: the {format_percent(result.level)} prediction intervals at the target do not overlap"
    if result.untested:
        significant = f"significant: n/a, not tested: {result.untested}"
    if result.common:
        target = format_point(result.target) + ("" if result.target_given else " (the largest common point; "
                                                "give --target to extrapolate)")
        return [f"comparison: {a} against {b}; ratios are {b}/{a}",
                f"largest common point {format_point(result.largest)}; target {target}; {crossovers}", significant]
    return [f"comparison: {a} against {b}; ratios are {b}/{a}", _no_common_point(result) + f"; {crossovers}",
            significant]


def _no_common_point(result: Comparison) -> str:
    """The header line of two experiments whose measured ranges do not overlap: where "now" is, and which side is
    extrapolated there."""
    below = result.below(result.largest)
    disjoint = [name for name in result.parameters if any(name == n for _, n in below)]
    ranges = "; ".join(f"{label} measured " + ", ".join(
        f"{name} from {format_value(side[name][0])} to {format_value(side[name][1])}" for name in disjoint)
        for label, side in zip(result.labels, result.measured))
    tops = [{name: side[name][1] for name in result.parameters} for side in result.measured]
    whose = next((f"{label}'s largest measured point" for label, top in zip(result.labels, tops)
                  if top == result.largest), "per parameter the smaller of the two largest measured values")
    sides = list(dict.fromkeys(label for label, _ in below))
    several = len(result.parameters) > 1
    where = " and ".join(f"{label}'s measured range" + (f" of {', '.join(n for s, n in below if s == label)}"
                                                         if several else "") for label in sides)
    values = f"{sides[0]}'s values" if len(sides) == 1 else f"the values of {' and '.join(sides)}"
    target = format_point(result.target) + ("" if result.target_given else " (now; give --target to extrapolate)")
    return (f"no common measured point ({ranges}): now is {format_point(result.largest)}, {whose}, below {where}, "
            f"where {values} are extrapolated; target {target}")


def _verdict(result: Comparison) -> str:
    """What the pairs say in one line: no difference where every pair has one model on both sides, else how many
    differ significantly at the target."""
    a, b = result.labels
    pairs = format_count(len(result.pairs), "pair")
    unmatched = f"; {len(result.unmatched)} unmatched" if result.unmatched else ""
    if all(pair.model_a.function == pair.model_b.function for pair in result.pairs):
        return f"no difference: {a} and {b} have the same model in every pair ({pairs}){unmatched}"
    if result.untested:
        return f"{pairs}, not tested for significance{unmatched}"
    different = sum(pair.significant is True for pair in result.pairs)
    return f"significantly different at {format_point(result.target)}: {different} of {pairs}{unmatched}"


def _ratio_headers(result: Comparison) -> list[str]:
    """The headers of the two ratios, naming their points (``v2/v1 at p=64``; they said ``now`` and ``target``),
    told apart where the target is the largest point measured."""
    a, b = result.labels
    largest, target = format_point(result.largest), format_point(result.target)
    return [f"{b}/{a} at {largest}", f"{b}/{a} at {target}" + (" (target)" if target == largest else "")]


def text(result: Comparison) -> str:
    a, b = result.labels
    lines = _header(result) + [""]
    # long call paths shortened as in the text export, each told apart from the others (CSV and JSON keep them whole)
    names = callpath_labels([*(p.callpath_a for p in result.pairs), *(p.callpath_b for p in result.pairs),
                             *(u.callpath for u in result.unmatched)])

    def name(pair: Pair) -> str:
        return names[pair.callpath_a] + ("" if pair.callpath_a == pair.callpath_b else f" → {names[pair.callpath_b]}")

    rows = []
    for rank, pair in enumerate(result.pairs, 1):
        growth = f"{pair.growth_a} → {pair.growth_b}" if pair.growth_differs else (pair.growth_a or "n/a")
        rows.append([rank, name(pair), pair.metric, growth, _ratio(pair.ratio_largest), _ratio(pair.ratio_target),
                     _significant(pair), _crossings(pair, result.along) or "none"])
    lines.append(text_table(["#", "call path", "metric", f"growth {a} → {b}", *_ratio_headers(result), "significant",
                             "crossovers"], rows))
    lines += ["", _verdict(result), "", "models:"]
    for pair in result.pairs:
        lines.append(f"  {name(pair)} [{pair.metric}]: {a}: {pair.model_a.formula}   {b}: {pair.model_b.formula}")
    if result.unmatched:
        lines += ["", f"unmatched ({len(result.unmatched)}):"]
        lines += [f"  {u.side}: {names[u.callpath]} [{u.metric}]: {u.reason}" for u in result.unmatched]
    for label, noted, warned in zip(result.labels, result.reading_notes, result.reading_warnings):
        lines += [*note_lines(noted, label), *reading_lines(warned, label)]
    return "\n".join(lines) + "\n"


def csv_text(result: Comparison) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for rank, p in enumerate(result.pairs, 1):
        writer.writerow([rank, p.callpath_a, p.callpath_b, p.metric, p.unit, p.model_a.function, p.model_b.function,
                         p.growth_a or "", p.growth_b or "", str(p.growth_differs).lower(), cell(p.value_a_largest),
                         cell(p.value_b_largest), cell(p.ratio_largest), cell(p.value_a_target),
                         cell(p.value_b_target), cell(p.ratio_target), cell(p.interval_a[0]), cell(p.interval_a[1]),
                         cell(p.interval_b[0]), cell(p.interval_b[1]),
                         "" if p.significant is None else str(p.significant).lower(),
                         ";".join(f"{c.value!r}:{c.lower_after}" for c in p.crossovers)])
    return out.getvalue()


def json_document(result: Comparison) -> dict[str, Any]:
    a, b = result.labels

    def interval(values):
        return [json_number(values[0]), json_number(values[1])]

    return {
        "format": FORMAT, "version": VERSION,
        "labels": {"A": a, "B": b}, "parameters": list(result.parameters), "along": result.along,
        "largest_common_point": {k: json_number(v) for k, v in result.largest.items()},
        "ranges_overlap": result.common,
        "measured_ranges": {side: {k: [json_number(lo), json_number(hi)] for k, (lo, hi) in ranges.items()}
                            for side, ranges in zip(("A", "B"), result.measured)},
        "reading_notes": {side: list(noted) for side, noted in zip(("A", "B"), result.reading_notes)},
        "reading_warnings": {side: list(warned) for side, warned in zip(("A", "B"), result.reading_warnings)},
        "significance_not_tested": result.untested or None,
        "target_point": {k: json_number(v) for k, v in result.target.items()},
        "target_given": result.target_given, "interval_level": result.level,
        "pairs": [{"callpath_a": p.callpath_a, "callpath_b": p.callpath_b, "metric": p.metric, "unit": p.unit,
                   "function_a": p.model_a.function, "function_b": p.model_b.function,
                   "growth_a": p.growth_a, "growth_b": p.growth_b, "growth_differs": p.growth_differs,
                   "value_a_largest": json_number(p.value_a_largest), "value_b_largest": json_number(p.value_b_largest),
                   "ratio_largest": json_number(p.ratio_largest),
                   "value_a_target": json_number(p.value_a_target), "value_b_target": json_number(p.value_b_target),
                   "ratio_target": json_number(p.ratio_target),
                   "interval_a": interval(p.interval_a), "interval_b": interval(p.interval_b),
                   "significant": p.significant,
                   "crossovers": [{result.along: json_number(c.value), "lower_after": c.lower_after}
                                  for c in p.crossovers],
                   "warnings_a": list(p.model_a.warnings), "warnings_b": list(p.model_b.warnings)}
                  for p in result.pairs],
        "unmatched": [{"side": u.side, "callpath": u.callpath, "metric": u.metric, "reason": u.reason}
                      for u in result.unmatched],
    }


def json_text(result: Comparison) -> str:
    return json_lines(json_document(result), ("pairs", "unmatched"))


# -------------------------------------------------------------------- HTML
def _measured(result: Comparison, side: int, callpath: str, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean measured values along ``result.along`` where the other parameters are at the target's values."""
    experiment = result.model_sets[side].experiment
    try:
        X, y = experiment.values_of(callpath, metric)
    except (KeyError, ValueError, InputError):  # not measured on this side
        return np.array([]), np.array([])
    names = experiment.parameter_names
    keep = np.ones(len(y), dtype=bool)
    for j, name in enumerate(names):
        if name != result.along:
            keep &= X[:, j] == result.target[name]
    x = X[keep, names.index(result.along)]
    values = y[keep]
    levels = np.unique(x)
    return levels, np.array([np.nanmean(values[x == v]) for v in levels])


def figure(result: Comparison, pair: Pair) -> str:
    a, b = result.labels
    lo, hi = result.smallest[result.along], result.target[result.along]
    grid = np.geomspace(lo, max(hi, lo * 1.0001), 240)
    X = result.curve_points(grid)
    xa, ya = _measured(result, 0, pair.callpath_a, pair.metric)
    xb, yb = _measured(result, 1, pair.callpath_b, pair.metric)
    marks = [Mark("x", c.value, f"crossover {result.along}={people(c.value)}", "#b71c1c", dashed=False)
             for c in pair.crossovers]
    if hi > result.largest[result.along]:
        marks.append(Mark("x", hi, "target"))
    unit = f" [{pair.unit}]" if pair.unit else ""
    # cut at 0 where the values never are below (the table's values are), as the notebook's curves are
    curve_a = drawn(pair.model_a, pair.model_a.predict(X), ya)
    curve_b = drawn(pair.model_b, pair.model_b.predict(X), yb)
    shown = np.concatenate([curve_a, curve_b])
    positive = bool(np.all(shown[np.isfinite(shown)] > 0))
    # a side measured nowhere at the target's other values has no points, and no legend entry for them
    measured = [Series(f"{label} measured", x, y, "points", color)
                for label, x, y, color in ((a, xa, ya, PALETTE[0]), (b, xb, yb, PALETTE[1])) if len(x)]
    return chart([Series(f"{a}: {pair.model_a.formula}", grid, curve_a, "line", PALETTE[0]),
                  Series(f"{b}: {pair.model_b.formula}", grid, curve_b, "line", PALETTE[1]), *measured],
                 title=f"{pair.name} [{pair.metric}]", x_label=result.along, y_label=f"{pair.metric}{unit}",
                 marks=marks, y_log=positive, css_class="chart pair-plot")


def _reading_items(result: Comparison) -> list[tuple[str, str]]:
    """Per side, what its reader noted and what reading warned of, as rows of the HTML summary (``notes on reading
    v1``, ``warnings on reading v1``); none of a side where there is nothing."""
    return [item for label, noted, warned in zip(result.labels, result.reading_notes, result.reading_warnings)
            for item in [*note_items(noted, label), *reading_items(warned, label)]]


def html_parts(result: Comparison, title: str | None = None, plot_top: int | None = None) -> tuple[str, str, str]:
    """The title, subtitle and body of the HTML report (:func:`~extrap_plugins.reports.page` makes the page,
    :func:`~extrap_plugins.reports.notebook_html` the notebook's view)."""
    a, b = result.labels
    top = option_int({} if plot_top is None else {"plot_top": plot_top}, "plot_top", PLOT_TOP, minimum=0)
    rows = []
    for rank, pair in enumerate(result.pairs, 1):
        growth = (f'<span class="differs">{html.escape(str(pair.growth_a))} → {html.escape(str(pair.growth_b))}'
                  "</span>") if pair.growth_differs else html.escape(pair.growth_a or "n/a")
        link = f'<a href="#pair-{rank}">{html.escape(pair.name)}</a>' if rank <= top else html.escape(pair.name)
        rows.append([str(rank), link, html.escape(pair.metric), growth, html.escape(_ratio(pair.ratio_largest)),
                     html.escape(_ratio(pair.ratio_target)), _significant(pair),
                     html.escape(_crossings(pair, result.along) or "none")])
    figures = "".join(
        f'<figure id="pair-{rank}" class="pair">{figure(result, pair)}<figcaption>{html.escape(a)}: '
        f"{html.escape(pair.model_a.formula)} ({html.escape(pair.growth_a or 'n/a')}); {html.escape(b)}: "
        f"{html.escape(pair.model_b.formula)} ({html.escape(pair.growth_b or 'n/a')}); {html.escape(b)}/"
        f"{html.escape(a)} at {html.escape(format_point(result.target))}: {html.escape(_ratio(pair.ratio_target))}"
        "</figcaption></figure>"
        for rank, pair in enumerate(result.pairs[:top], 1))
    unmatched = table(["side", "call path", "metric", "why"],
                      [[u.side, u.callpath, u.metric, u.reason] for u in result.unmatched], "unmatched-table") \
        if result.unmatched else "<p>Every call path and metric found its partner.</p>"
    summary = definition_list([("A", a), ("B", b), ("pairs", str(len(result.pairs))),
                               ("unmatched", str(len(result.unmatched)))] +
                              _reading_items(result) +
                              [("", line) for line in [*_header(result), _verdict(result)]],
                              "summary-list")
    body = f"""
<section id="summary"><h2>Comparison</h2>{summary}</section>
<section id="ranking"><h2>What changed most (by |log2 {html.escape(b)}/{html.escape(a)}| at the target)</h2>
{table(["#", "call path", "metric", "growth", *_ratio_headers(result), "significant", "crossovers"],
       rows, "pair-table", numeric=(0, 4, 5), raw=range(8))}
</section>
<section id="figures"><h2>Both models per call path</h2>{figures or "<p>No figures (plot_top=0).</p>"}</section>
<section id="unmatched"><h2>Unmatched</h2>{unmatched}</section>"""
    return title or f"Comparison: {a} against {b}", "made by extrap-plugins compare", body
