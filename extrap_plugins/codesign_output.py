"""Text, CSV, JSON and HTML for the co-design answers: requirements under upgrades, and what-if.

:func:`render_requirements` writes :class:`~extrap_plugins.codesign.Requirements`
(Wolf's Extra-P slides' table), :func:`render_whatif` writes
:class:`~extrap_plugins.machine.WhatIf`.  JSON is the machine interface
(``extrap-plugins/requirements`` and ``extrap-plugins/whatif``, version 1;
NaN and infinity become ``null``; ``reading_notes``: what the reader noted
of how it read the measurements, and ``reading_warnings``: what reading them
warned of, per application for requirements, which the text and HTML
reports list too); HTML is one self-contained page (inline CSS, no script,
nothing fetched from the network).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from typing import Any, Sequence

from .errors import InputError
from .formatting import (format_bytes, format_point, format_value, json_number, note_items, note_lines, reading_items,
                         reading_lines, text_table)

KINDS = ("text", "csv", "json", "html")

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f0f0f0; }
td.best { background: #d9f2d9; font-weight: bold; } td.worst { background: #f8d7d7; }
.note { color: #555; font-size: 0.9em; }
"""


def _check(kind: str) -> None:
    if kind not in KINDS:
        raise InputError(f"--export {kind}: expected one of {', '.join(KINDS)}")


def _ratio(value: float) -> str:
    """Three significant digits, as Wolf's Extra-P slides' table (``1.26``, ``0.548``, ``2``)."""
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.3g}"


def _number(value: float | None) -> str:
    if value is not None and value == math.inf:
        return "∞"
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.4g}"


def _csv_number(value: float | None) -> str:
    """A number as Python writes it back exactly; an empty cell for none or one not given (NaN: "–" in the text)."""
    return "" if value is None or math.isnan(value) else repr(value)


def _json(document: Any) -> str:
    return json.dumps(_clean(document), indent=1, allow_nan=False) + "\n"


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    return text_table(headers, rows)


def _html_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Rows of cells; a cell may be ``(text, css_class)``."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for cell in row:
            text, css = cell if isinstance(cell, tuple) else (cell, "")
            cls = f' class="{css}"' if css else ""
            cells.append(f"<td{cls}>{html.escape(str(text))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _html_reading(items: Sequence[tuple[str, str]]) -> list[str]:
    """What the reader noted and what reading warned of (:func:`~extrap_plugins.formatting.note_items`,
    :func:`~extrap_plugins.formatting.reading_items`) as notes of the page."""
    return [f"<p class=\"note\">{html.escape(heading)}: {html.escape(text)}</p>" for heading, text in items]


def _read_of(result) -> list[tuple[str, Sequence[str], Sequence[str]]]:
    """Per application of a :class:`~extrap_plugins.codesign.Requirements`: its name, what its reader noted and what
    reading warned of."""
    apps = dict.fromkeys([*result.reading_notes, *result.reading_warnings])
    return [(app, result.reading_notes.get(app, ()), result.reading_warnings.get(app, ())) for app in apps]


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")


size_text = format_bytes
"""A size in bytes for people (:func:`~extrap_plugins.formatting.format_bytes`)."""


# ------------------------------------------------------------------------ requirements
QUANTITY_LABELS = {"problem_size_per_process": "problem size per process", "problem_size": "overall problem size",
                   "memory_access": "memory access"}


def _label(name: str) -> str:
    return QUANTITY_LABELS.get(name, name.replace("_", " "))


def _system_line(result) -> str:
    s = result.system
    return f"system: {format_value(s.processes)} processes, {size_text(s.memory_per_process)} of memory per process"


def is_size(key: str) -> bool:
    """Whether a system key is a memory (a size, which may have a unit) rather than a count."""
    return key.startswith("memory_per_")


def _system_value(key: str, value: float) -> str:
    """A value of a system key as given: a memory as a size (``512 GiB``), a count exactly (``2097152``)."""
    return size_text(value) if is_size(key) else format_value(value)


def _upgrade_line(upgrade) -> str:
    changes = ", ".join(f"{k} {v:g}x" if kind == "factor" else f"{k} = {_system_value(k, v)}"
                        for k, (kind, v) in upgrade.changes.items())
    return f"{upgrade.name} ({changes})"


def _requirement_blocks(result) -> list[tuple[Any, list[str], list[list[Any]]]]:
    """Per upgrade: (upgrade, headers, rows) with cells (text, css)."""
    apps = result.applications
    blocks = []
    for upgrade in result.upgrades:
        rows_of = {app: result.row(app, upgrade.name) for app in apps}
        headers = ["ratio new/old", *apps]
        rows = [[_label("problem_size_per_process"), *(_ratio(rows_of[a].problem_size_per_process) for a in apps)],
                [_label("problem_size"), *(_ratio(rows_of[a].problem_size) for a in apps)]]
        for role in result.role_names:
            cells = []
            for a in apps:
                r = rows_of[a]
                if role in r.requirements:
                    cells.append(f"{_ratio(r.requirements[role])} ({_ratio(r.requirements_total[role])})")
                else:
                    cells.append("–")
            rows.append([_label(role), *cells])
        verdict = []
        for a in apps:
            r = rows_of[a]
            verdict.append(("best", "best") if r.best else ("worst", "worst") if r.worst else "")
        rows.append(["verdict", *verdict])
        blocks.append((upgrade, headers, rows))
    return blocks


def _plain_cells(rows):
    return [[c[0] if isinstance(c, tuple) else c for c in row] for row in rows]


def render_requirements(result, kind: str = "text") -> str:
    """The table of Wolf's Extra-P slides as ``text``, ``csv``, ``json`` or ``html``."""
    _check(kind)
    if kind == "json":
        return _json(result.as_json())
    if kind == "csv":
        roles = result.role_names
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["application", "upgrade", "best", "worst", "problem_size_per_process", "problem_size",
                         *roles, *(f"{r}_total" for r in roles)])
        for r in result.rows:
            writer.writerow([r.application, r.upgrade, int(r.best), int(r.worst),
                             _csv_number(r.problem_size_per_process), _csv_number(r.problem_size),
                             *(_csv_number(r.requirements.get(x)) for x in roles),
                             *(_csv_number(r.requirements_total.get(x)) for x in roles)])
        return out.getvalue()
    blocks = _requirement_blocks(result)
    ranking = ("the largest overall problem size (ties: the least computation per process)"
               if result.rank_by == "problem_size" else f"the smallest {_label(result.rank_by)} per process")
    legend = (f"ratios new/old; requirements per process (in total over all processes); best and worst upgrade per "
              f"application by {ranking}")
    roles = "; ".join(f"{app}: " + ", ".join(f"{_label(role)} = {'+'.join(m)}" for role, m in roles.items())
                      for app, roles in result.roles.items())
    if kind == "text":
        parts = [_system_line(result), legend, f"roles: {roles}"]
        for upgrade, headers, rows in blocks:
            parts += ["", f"upgrade: {_upgrade_line(upgrade)}", _table(headers, _plain_cells(rows))]
        for app, noted, warned in _read_of(result):
            parts += [*note_lines(noted, app), *reading_lines(warned, app)]
        return "\n".join(parts) + "\n"
    body = [f"<p>{html.escape(_system_line(result))}</p>", f"<p class=\"note\">{html.escape(legend)}</p>",
            f"<p class=\"note\">roles: {html.escape(roles)}</p>"]
    for upgrade, headers, rows in blocks:
        body.append(f"<h2>{html.escape(_upgrade_line(upgrade))}</h2>")
        body.append(_html_table(headers, rows))
    models = []
    for app, formulas in result.models.items():
        for role, texts in formulas.items():
            for text in texts:
                models.append([app, _label(role), text])
    body.append("<h2>requirement models (per process)</h2>")
    body.append(_html_table(["application", "role", "model"], models))
    body += _html_reading([item for app, noted, warned in _read_of(result)
                           for item in [*note_items(noted, app), *reading_items(warned, app)]])
    return _page("Response of the workload to system upgrades", "\n".join(body))


# ------------------------------------------------------------------------------ what-if
def _machine_line(machine) -> str:
    parts = []
    for r in machine.resources:
        unit = "/s" if r.kind == "rate" else "s"
        value = f"{_number(r.value)} {unit}" if r.unidentified is None else \
            "not identified (taken to cost no time)"
        parts.append(f"{r.name} ({'+'.join(r.metrics or ())}) {value}")
    name = f"{machine.name}: " if machine.name else ""
    return f"machine: {name}" + ", ".join(parts)


def _whatif_headers(result) -> list[str]:
    """The columns of the what-if table; the time with the machine scaled and its speedup only with a ``scale``
    (``--scale``: without one they would repeat the time and read 1)."""
    factor = f"{result.sensitivity:g}"
    sens = [f"{r.name} {'×' if r.kind == 'rate' else '÷'}{factor}" for r in result.machine.resources]
    scaled = ", ".join(f"{k} {v:g}x" for k, v in result.scale.items())
    with_scale = [f"with {scaled} [s]", "speedup"] if scaled else []
    return ["call path", "time [s]", "modelled [s]", *with_scale, *sens, f"all {factor}×"]


def _whatif_cells(result, row) -> list[str]:
    with_scale = [_number(row.scaled_time), _ratio(row.speedup)] if result.scale else []
    return [row.callpath, _number(row.time), _number(row.modelled_time), *with_scale,
            *(_ratio(row.speedups[r.name]) for r in result.machine.resources), _ratio(row.speedups["all"])]


def _total_text(values: dict[str, str]) -> str:
    """What the total row sums: the root call paths (inclusive values) or every call path (exclusive ones)."""
    kinds = set(values.values())
    if not kinds:
        return ""
    if kinds == {"inclusive"}:
        return "total: the sum of the root call paths (inclusive values)"
    if kinds == {"exclusive"}:
        return "total: the sum of every call path (exclusive values)"
    by_kind = {kind: ", ".join(m for m, k in values.items() if k == kind) for kind in ("inclusive", "exclusive")}
    return (f"total: the sum of the root call paths for inclusive values ({by_kind['inclusive']}), of every call "
            f"path for exclusive ones ({by_kind['exclusive']})")


def _calibration_rows(calibration) -> list[list[str]]:
    return [[f.callpath, str(f.points), f"{f.mean_error:.2%}", f"{f.max_error:.2%}", _ratio(f.share)]
            for f in calibration.fits]


CALIBRATION_HEADERS = ["call path", "points", "mean error", "max error", "convolved / measured"]


def render_whatif(result, kind: str = "text") -> str:
    """Predicted times and sensitivities per call path as ``text``, ``csv``, ``json`` or ``html``."""
    _check(kind)
    if kind == "json":
        return _json(result.as_json())
    names = [r.name for r in result.machine.resources]
    if kind == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["callpath", "time", "modelled_time", "scaled_time", "speedup",
                         *(f"amount_{n}" for n in names), *(f"share_{n}" for n in names),
                         *(f"speedup_{n}" for n in names), "speedup_all"])
        for r in [*result.rows, result.total]:
            writer.writerow([r.callpath, repr(r.time), _csv_number(r.modelled_time),
                             _csv_number(r.scaled_time), _csv_number(r.speedup), *(repr(r.amounts[n]) for n in names),
                             *(repr(r.shares[n]) for n in names), *(_csv_number(r.speedups[n]) for n in names),
                             repr(r.speedups["all"])])
        return out.getvalue()
    head = [_machine_line(result.machine), f"target: {format_point(result.target)}"]
    calibration = result.calibration
    if calibration is not None:
        given = f"; {', '.join(calibration.given)} as given" if calibration.given else ""
        head.append(f"calibrated on {calibration.rows} measurements (non-negative least squares{given}): mean error "
                    f"{calibration.mean_error:.2%}, max {calibration.max_error:.2%}")
    headers = _whatif_headers(result)
    rows = [_whatif_cells(result, r) for r in [*result.rows, result.total]]
    note = ("time: the machine profile convolved with the requirement models at the target; modelled: the time "
            "metric's own model there; speedups: the time over the time with that resource improved"
            + (" (–: a resource the times do not identify)" if any(r.unidentified is not None
                                                                   for r in result.machine.resources) else ""))
    total = _total_text(result.values)
    if kind == "text":
        parts = head[:]
        if calibration is not None:
            parts += ["", _table(CALIBRATION_HEADERS, _calibration_rows(calibration))]
        parts += ["", _table(headers, rows), "", note, *([total] if total else []),
                  *note_lines(result.reading_notes), *reading_lines(result.reading_warnings)]
        return "\n".join(parts) + "\n"
    body = [f"<p>{html.escape(line)}</p>" for line in head]
    if calibration is not None:
        body += ["<h2>calibration</h2>", _html_table(CALIBRATION_HEADERS, _calibration_rows(calibration))]
    body += ["<h2>prediction and sensitivity</h2>", _html_table(headers, rows),
             f"<p class=\"note\">{html.escape(note)}</p>",
             *([f"<p class=\"note\">{html.escape(total)}</p>"] if total else []),
             *_html_reading([*note_items(result.reading_notes), *reading_items(result.reading_warnings)])]
    formulas = [[cp, metric, text] for cp, by_metric in result.models.items() for metric, text in by_metric.items()]
    if formulas:
        body += ["<h2>requirement models (per process)</h2>", _html_table(["call path", "metric", "model"], formulas)]
    return _page("What if: machine sensitivity", "\n".join(body))
