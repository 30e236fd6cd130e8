"""An efficiency analysis (:class:`~extrap_plugins.efficiency_analysis.Efficiency`) as text, CSV, JSON and HTML.

JSON (``format: extrap-plugins/efficiency``, version 1) has one top-level key per line and one call path per
line, ``notes`` on the analysis and ``reading_warnings`` (what reading the measurements warned of:
:attr:`Efficiency.reading_warnings <extrap_plugins.efficiency_analysis.Efficiency.reading_warnings>`) among them;
the text and HTML reports list those too; CSV is one tidy table whose ``kind`` column says what a row is
(``total`` at a process count, ``isoefficiency`` a solved point, ``callpath`` one call path at the target).
"""

from __future__ import annotations

import csv
import html
import io
import math
from typing import Any

import numpy as np

from extrap_plugins.efficiency_analysis import Efficiency, efficiency_values, inconsistencies, uncertain
from extrap_plugins.formatting import (WARNINGS_LISTED, callpath_labels, format_number, format_point, format_value,
                                       json_number, reading_items, reading_lines, text_table, warning_lines,
                                       warning_texts)

from . import cell, definition_list, json_lines, people, percent, table
from .svg import PALETTE, Mark, Series, chart

FORMAT = "extrap-plugins/efficiency"
VERSION = 1
CSV_COLUMNS = ("kind", "callpath", "metric", "processes", "size", "time", "resource", "work", "overhead",
               "efficiency", "speedup", "measured_efficiency", "overhead_share", "own_overhead_share",
               "overhead_growth", "function", "inconsistency", "scope", "overhead_uncertainty",
               "own_overhead_uncertainty", "own_overhead_uncertainty_with_choice", "modelled_overhead")
SCOPES = {"own": "each call path's own, without its children", "with children": "with its children",
          "with what it calls": "with what it calls"}
"""How the title of the table of call paths says what their overhead, work and E are of (``callpath_scope``)."""


# ------------------------------------------------------------------- words
def scaling_text(result: Efficiency) -> str:
    if result.scaling == "strong":
        size = f", fixed problem size {result.size}={format_value(result.reference[result.size])}" \
            if result.size else ", fixed problem size"
        return f"strong scaling{size}"
    if result.size is None:
        return "weak scaling, fixed problem size per process"
    return f"weak scaling, problem size per process {result.size}={format_value(result.reference[result.size])}"


def isoefficiency_text(result: Efficiency) -> str:
    iso = result.isoefficiency
    if iso is None or iso.model is None:
        return f"iso-efficiency: none: {result.isoefficiency_note}"
    solved = [p for p, n in iso.points if n is not None]
    text = (f"iso-efficiency: {result.size} = {iso.formula}   [{iso.growth}], keeps E at {result.level:g}; "
            f"solved at {len(solved)} process counts from {result.processes}={solved[0]:.4g} to {solved[-1]:.4g}")
    return text + (f"\n  note: {iso.note}" if iso.note else "")


def undefined(result: Efficiency) -> bool:
    """Whether ``E = W / C`` is undefined in every row (``W = C = 0``: all values zero)."""
    return not any(math.isfinite(r.efficiency) for r in result.rows)


def rounded_down(value: float, digits: int = 4) -> float:
    """``value`` rounded down to ``digits`` significant digits, and from 1 on to a whole number: the largest p at
    the level printed as the process count where E is still at the level (2377.69 is 2377: at 2378, E is below it;
    90.51 is 90, as there are no 90.5 processes).

    >>> rounded_down(2377.69), rounded_down(79.258), rounded_down(145746.3), rounded_down(0.5128)
    (2377.0, 79.0, 145700.0, 0.5128)
    """
    if not math.isfinite(value) or value <= 0:
        return value
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(value)))
    down = math.floor(value * scale * (1 + 1e-9)) / scale  # not below a root that Brent put a hair under
    return float(math.floor(down)) if down >= 1 else down


def largest_p_text(result: Efficiency) -> str:
    if result.largest_p_at_level is not None:
        value = format_number(rounded_down(result.largest_p_at_level), False)
    else:
        value = "n/a" if undefined(result) else "none found"
    return f"largest {result.processes} with E ≥ {result.level:g}: {value} ({result.largest_p_note})"


def speedup_label(result: Efficiency) -> str:
    """The speedup's column: ``S``, or with weak scaling ``scaled S`` (``(p / p0) · E``, not ``T(p0) / T(p)``)."""
    return "scaled S" if result.scaling == "weak" else "S"


def efficiency_cell(value: float) -> str:
    """An efficiency in the tables: four decimals, ``n/a`` where undefined."""
    return f"{value:.4f}" if math.isfinite(value) else "n/a"


def measured_cell(row) -> str:
    """E from the measurements: empty where the point was not measured, ``n/a`` where measured but undefined."""
    if math.isfinite(row.measured_efficiency):
        return f"{row.measured_efficiency:.4f}"
    return "n/a" if row.measured else ""


def row_label(result: Efficiency, row) -> str:
    return format_value(row.point[result.processes]) + (" (target)" if row.point == result.target else "")


def limiter_text(result: Efficiency) -> str:
    """The limiter line: the limiter, its share and its own overhead with its uncertainty (where the measurements
    have noise: whether it is above zero beyond it), and the call paths with inconsistent overhead it passes over;
    ``undetermined`` where every call path with a share of the overhead is inconsistent, ``none`` where there is no
    overhead."""
    top = result.limiter
    if top is None:
        return f"limiter: {'undetermined' if result.passed_over else 'none'} ({result.limiter_note})"
    calls = ", with what it calls" if result.flat else ""
    where = f"{result.processes}={format_value(result.target[result.processes])}"
    own = uncertain(top.own_overhead, top.own_overhead_uncertainty)
    stated = ""
    if own != format_number(top.own_overhead, False):  # exact measurements: no uncertainty to state
        spread = top.own_overhead_uncertainty_with_choice
        choice = f" (± {format_number(spread, False)} with the choice of model)" if uncertain(
            top.own_overhead, spread) != own else ""
        stated = f", own overhead {own}{choice}" + ("" if top.decided else ", within its uncertainty of zero")
    text = (f"limiter: {top.callpath} ({percent(top.own_overhead_share_target)} of the overhead at {where}{calls}"
            f"{stated}; {growth_text(top)})")
    passed = result.passed_over
    if passed:
        text += f"; passed over as inconsistent: {inconsistencies(passed)}"
    return text


def growth_text(entry) -> str:
    """How the overhead that a call path's own share is of grows: ``its overhead grows as O(p)``, or where its own
    overhead (without its modelled children's) grows otherwise than its overhead with them, both."""
    whole = entry.overhead_growth or "n/a"
    if entry.own_overhead_growth is None or entry.own_overhead_growth == entry.overhead_growth:
        return f"its overhead grows as {whole}"
    return f"its own overhead grows as {entry.own_overhead_growth}, with its children's as {whole}"


def share_headers(result: Efficiency) -> list[str]:
    """The share columns of the table of call paths: the own share and the share with the children, or without a
    call tree (:attr:`~extrap_plugins.efficiency_analysis.Efficiency.flat`) the one share there is."""
    return ["share with what it calls"] if result.flat else ["own share", "with children"]


def share_cells(result: Efficiency, c) -> list[str]:
    """The share cells of a call path: ``n/a`` where its overhead is inconsistent (they would be no shares)."""
    shares = [c.own_overhead_share_target] + ([] if result.flat else [c.overhead_share_target])
    return [percent(share if c.consistent else None) for share in shares]


def inconsistent(result: Efficiency) -> bool:
    """Whether a call path's overhead is inconsistent: the table of call paths then says why, in a last column."""
    return any(not c.consistent for c in result.callpaths)


def callpaths_title(result: Efficiency) -> str:
    """The title of the table of call paths: where, what its overhead, work and E are of, and how it is ranked."""
    return (f"overhead per call path at {format_point(result.target)} (overhead growth, overhead, work and E "
            f"{SCOPES[result.callpath_scope]}){ranking_text(result)}")


def ranking_text(result: Efficiency) -> str:
    """How the table of call paths is ranked, as its title says: by the rule the limiter is chosen by."""
    if not any(math.isfinite(c.own_overhead_share_target) for c in result.callpaths):
        return ""
    text = ", ranked by share" if result.flat else ", ranked by own share"
    if result.limiter is not None:
        text += ", so the limiter comes first"
    if inconsistent(result):
        text += "; those with inconsistent overhead after the others"
    aside = result.set_aside
    if aside:
        text += f"; the total, {', '.join(aside)}, last"
    return text


# -------------------------------------------------------------------- text
def text(result: Efficiency) -> str:
    p = result.processes
    lines = [
        f"efficiency of {result.metric} over {p}: {scaling_text(result)}; level {result.level:g}",
        f"p0 = {format_value(result.p0)} (smallest measured), target {format_point(result.target)}; "
        f"total = {' + '.join(m.callpath for m in result.total)} ({result.values} values)",
        f"resource consumption C = {p}·T of the total: "
        + " + ".join(f"[{m.formula}]" for m in result.total),
        "",
    ]
    rows = [[row_label(result, r), people(r.time), people(r.resource), people(r.work), people(r.overhead),
             efficiency_cell(r.efficiency), people(r.speedup), measured_cell(r)] for r in result.rows]
    lines.append(text_table([p, "T", f"C = {p}·T", "W", "O = C − W", "E = W/C", speedup_label(result), "E measured"],
                            rows))
    lines += ["", isoefficiency_text(result), largest_p_text(result), limiter_text(result), ""]
    why = inconsistent(result)
    names = callpath_labels([c.callpath for c in result.callpaths])  # shortened as in the text export
    rows = [[names[c.callpath], *share_cells(result, c), c.overhead_growth or "n/a", people(c.overhead_target),
             people(c.work_target), people(c.efficiency_target), *([c.inconsistency] if why else [])]
            for c in result.callpaths]
    lines.append(f"{callpaths_title(result)}:")
    lines.append(text_table(["call path", *share_headers(result), "overhead growth", "overhead", "work", "E",
                             *(["inconsistency"] if why else [])], rows))
    lines += [f"note: {note}" for note in result.notes]
    lines += reading_lines(result.reading_warnings)
    lines += warning_lines(result.analysed_models, WARNINGS_LISTED)
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------- CSV
def csv_text(result: Efficiency) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    p, s = result.processes, result.size
    total = "+".join(m.callpath for m in result.total)
    for r in result.rows:
        writer.writerow(["total", total, result.metric, cell(r.point[p]), cell(r.point[s]) if s else "",
                         cell(r.time), cell(r.resource), cell(r.work), cell(r.overhead), cell(r.efficiency),
                         cell(r.speedup), cell(r.measured_efficiency), "", "", "", "", "", "whole program", "", "",
                         "", ""])
    if result.isoefficiency is not None:
        for x, n in result.isoefficiency.points:
            writer.writerow(["isoefficiency", "", result.metric, cell(x), cell(n), "", "", "", "",
                             cell(result.level), "", "", "", "", result.isoefficiency.growth or "",
                             result.isoefficiency.function or "", "", "whole program", "", "", "", ""])
    for c in result.callpaths:
        shares = (c.overhead_share_target, c.own_overhead_share_target) if c.consistent else (None, None)
        writer.writerow(["callpath", c.callpath, c.metric, cell(result.target[p]),
                         cell(result.target[s]) if s else "", "", "", cell(c.work_target), cell(c.overhead_target),
                         cell(c.efficiency_target), "", "", cell(shares[0]), cell(shares[1]),
                         c.overhead_growth or "", c.model.function, c.inconsistency, result.callpath_scope,
                         cell(c.overhead_uncertainty), cell(c.own_overhead_uncertainty),
                         cell(c.own_overhead_uncertainty_with_choice), cell(c.modelled_overhead)])
    return out.getvalue()


# -------------------------------------------------------------------- JSON
def _point(point: dict[str, float]) -> dict[str, float | None]:
    return {k: json_number(v) for k, v in point.items()}


def json_document(result: Efficiency) -> dict[str, Any]:
    iso = result.isoefficiency
    iso_document = None
    if iso is not None and iso.model is not None:
        iso_document = {"function": iso.function, "formula": iso.formula, "growth": iso.growth,
                        "points": [[json_number(x), None if n is None else json_number(n)] for x, n in iso.points],
                        "note": iso.note or None}
    limiter = result.limiter
    return {
        "format": FORMAT, "version": VERSION,
        "scaling": result.scaling, "level": result.level, "metric": result.metric,
        "parameters": list(result.parameters), "processes": result.processes, "size": result.size,
        "values": result.values,
        "reference_point": _point(result.reference), "largest_point": _point(result.largest),
        "target_point": _point(result.target),
        "total": {"callpaths": [m.callpath for m in result.total], "functions": [m.function for m in result.total],
                  "warnings": [list(m.warnings) for m in result.total]},
        "rows": [{"point": _point(r.point), "measured": r.measured, "time": json_number(r.time),
                  "resource": json_number(r.resource), "work": json_number(r.work),
                  "overhead": json_number(r.overhead), "efficiency": json_number(r.efficiency),
                  "speedup": json_number(r.speedup), "measured_efficiency": json_number(r.measured_efficiency)}
                 for r in result.rows],
        "isoefficiency": iso_document,
        "isoefficiency_note": result.isoefficiency_note or None,
        "largest_p_at_level": None if result.largest_p_at_level is None else json_number(result.largest_p_at_level),
        "largest_p_note": result.largest_p_note,
        "limiter": None if limiter is None else limiter.callpath,
        "limiter_note": result.limiter_note or None, "whole_overhead": json_number(result.whole_overhead),
        "passed_over": [c.callpath for c in result.passed_over],
        "flat": result.flat, "callpath_scope": result.callpath_scope,
        "notes": list(result.notes), "reading_warnings": list(result.reading_warnings),
        "callpaths": [{"callpath": c.callpath, "metric": c.metric, "function": c.model.function,
                       "work_target": json_number(c.work_target), "overhead_target": json_number(c.overhead_target),
                       "overhead_share_target": json_number(c.overhead_share_target) if c.consistent else None,
                       "own_overhead_share_target": json_number(c.own_overhead_share_target) if c.consistent
                       else None,
                       "overhead_growth": c.overhead_growth, "own_overhead_growth": c.own_overhead_growth,
                       "overhead_function": None if c.overhead_model is None else c.overhead_model.function,
                       "efficiency_target": json_number(c.efficiency_target),
                       "inconsistency": c.inconsistency or None,
                       "overhead_uncertainty": json_number(c.overhead_uncertainty),
                       "own_overhead": json_number(c.own_overhead),
                       "own_overhead_uncertainty": json_number(c.own_overhead_uncertainty),
                       "own_overhead_uncertainty_with_choice": json_number(c.own_overhead_uncertainty_with_choice),
                       "modelled_overhead": json_number(c.modelled_overhead),
                       "warnings": list(c.model.warnings)} for c in result.callpaths],
    }


def json_text(result: Efficiency) -> str:
    return json_lines(json_document(result), ("rows", "callpaths"))


# -------------------------------------------------------------------- HTML
def figures(result: Efficiency) -> dict[str, str]:
    """The SVG charts: ``efficiency`` (with the level), ``speedup``, ``isoefficiency`` (when solved)."""
    p = result.processes
    k = result.parameters.index(p)
    p_hi = result.target[p]
    if result.largest_p_at_level is not None and result.largest_p_at_level > p_hi:
        p_hi = min(result.largest_p_at_level * 1.5, p_hi * 64)
    grid = np.geomspace(result.p0, p_hi, 200)
    _, _, E = efficiency_values(result.total, result.points(grid), k, result.p0, result.scaling)
    measured = [r for r in result.rows if r.measured and math.isfinite(r.measured_efficiency)]
    marks = [Mark("y", result.level, f"level {result.level:g}", "#b71c1c"),
             Mark("x", result.target[p], f"target {p}={format_value(result.target[p])}", "#555555")]
    if result.largest_p_at_level is not None:
        marks.append(Mark("x", result.largest_p_at_level,
                          f"E < {result.level:g} from {format_number(result.largest_p_at_level, False)}", "#b71c1c",
                          dashed=False))
    # near a zero of the model's C, E = W / C shoots up: the axis keeps the table's values readable
    shown = [e for r in result.rows for e in (r.efficiency, r.measured_efficiency) if math.isfinite(e)]
    top = max(1.05, min(float(np.nanmax(E)), 2 * max(shown, default=1.0)) * 1.05) if np.isfinite(E).any() else 1.05
    out = {"efficiency": chart(
        [Series("model E = W / C", grid, E, "line", PALETTE[0]),
         Series("measured", [r.point[p] for r in measured], [r.measured_efficiency for r in measured], "points",
                PALETTE[1])],
        title=f"Parallel efficiency ({scaling_text(result)})", x_label=p, y_label="efficiency E",
        marks=marks, y_range=(0.0, top), css_class="chart efficiency-plot")}
    speedup = "scaled speedup" if result.scaling == "weak" else "speedup"
    out["speedup"] = chart(
        [Series(f"model {speedup_label(result)}", grid, grid / result.p0 * E, "line", PALETTE[0]),
         Series("ideal", grid, grid / result.p0, "dashed", "#888888")],
        title=f"{speedup.capitalize()} against the smallest measured process count", x_label=p,
        y_label=f"{speedup} S", y_log=True, marks=[Mark("x", result.target[p], "target")],
        css_class="chart speedup-plot")
    iso = result.isoefficiency
    if iso is not None and iso.model is not None:
        solved = [(x, n) for x, n in iso.points if n is not None]
        xs = np.array([x for x, _ in solved])
        curve_x = np.geomspace(xs.min(), xs.max(), 200)
        curve_y = np.asarray(iso.model.predict(curve_x[:, None]), dtype=np.float64)
        out["isoefficiency"] = chart(
            [Series(f"{result.size} = {iso.formula}", curve_x, curve_y, "line", PALETTE[2]),
             Series("solved E = level", xs, [n for _, n in solved], "points", PALETTE[3])],
            title=f"Iso-efficiency: the {result.size} that keeps E at {result.level:g} ({iso.growth})",
            x_label=p, y_label=result.size, y_log=True,
            marks=[Mark("x", result.largest[p], f"largest measured {p}")], css_class="chart isoefficiency-plot")
    return out


def html_parts(result: Efficiency, title: str | None = None, plot_top: int | None = None) -> tuple[str, str, str]:
    """The title, subtitle and body of the HTML report (:func:`~extrap_plugins.reports.page` makes the page,
    :func:`~extrap_plugins.reports.notebook_html` the notebook's view)."""
    p = result.processes
    source = result.model_set.source or (result.model_set.experiment.source if result.model_set.experiment else "")
    summary = [
        ("input", str(source) or "n/a"), ("metric", result.metric), ("scaling", scaling_text(result)),
        ("process count", f"{p}, smallest measured {format_value(result.p0)}"),
        ("target", format_point(result.target)), ("level", f"{result.level:g}"),
        ("total", " + ".join(m.callpath for m in result.total) + f" ({result.values} values)"),
        ("modeler", result.model_set.modeler or "n/a"), *reading_items(result.reading_warnings),
    ]
    warned = warning_texts(result.analysed_models, WARNINGS_LISTED)
    summary += [("warnings", "; ".join(warned))] if warned else []  # what the models warn of, as the text ends
    charts = figures(result)
    conclusions = "".join(f"<p class=\"conclusion\">{html.escape(line)}</p>"
                          for line in (*(line.strip() for line in isoefficiency_text(result).split("\n")),
                                       largest_p_text(result), limiter_text(result),
                                       *(f"note: {note}" for note in result.notes)))
    scaling_rows = [[row_label(result, r), people(r.time), people(r.resource), people(r.work), people(r.overhead),
                     efficiency_cell(r.efficiency), people(r.speedup), measured_cell(r)] for r in result.rows]
    path_rows = []
    why = inconsistent(result)
    for c in result.callpaths:
        share = c.own_overhead_share_target
        width = int(max(0.0, min(1.0, share)) * 120) if math.isfinite(share) and c.consistent else 0
        shares = [html.escape(text) for text in share_cells(result, c)]
        path_rows.append([html.escape(c.callpath), f'<span class="bar" style="width:{width}px"></span>' + shares[0],
                          *shares[1:], html.escape(c.overhead_growth or "n/a"), html.escape(people(c.overhead_target)),
                          html.escape(people(c.work_target)), html.escape(people(c.efficiency_target)),
                          html.escape(c.model.formula), *([html.escape(c.inconsistency)] if why else [])])
    share_columns = (["share of the overhead, with what it calls"] if result.flat
                     else ["own share of the overhead", "with children"])
    first = 1 + len(share_columns)  # the first column after the shares
    body = f"""
<section id="summary"><h2>Analysis</h2>{definition_list(summary, "summary-list")}{conclusions}</section>
<section id="plots"><h2>Efficiency and speedup</h2>
<figure id="efficiency-figure">{charts["efficiency"]}
<figcaption>E = W / C from the models of C = {html.escape(p)}·T (line) and from the measurements, their
repetitions reduced as for the models (dots); the level is the horizontal line.</figcaption></figure>
<figure id="speedup-figure">{charts["speedup"]}</figure>
</section>
<section id="isoefficiency"><h2>Iso-efficiency</h2>
{('<figure id="isoefficiency-figure">' + charts["isoefficiency"] + "<figcaption>The problem size solved from "
  "E(p, n) = level at each process count (dots) and its PMNF model (line).</figcaption></figure>")
 if "isoefficiency" in charts else "<p>" + html.escape(result.isoefficiency_note) + "</p>"}
</section>
<section id="scaling"><h2>The whole program</h2>
{table([p, "T", f"C = {p}·T", "W", "O = C − W", "E", speedup_label(result), "E measured"], scaling_rows,
       "scaling-table", numeric=range(1, 8))}
</section>
<section id="callpaths"><h2>{html.escape(callpaths_title(result).replace("overhead", "Overhead", 1))}</h2>
{table(["call path", *share_columns, "overhead growth", "overhead", "work", "E", f"model of C = {p}·T",
        *(["inconsistency"] if why else [])], path_rows, "callpath-table", numeric=range(first + 1, first + 4),
       raw=range(first + 6))}
</section>"""
    return title or f"Efficiency: {result.metric} over {p}", "made by extrap-plugins efficiency", body
