"""The ``text`` exporter: an aligned table of formulas and quality figures (+ extrapolation columns)."""

from __future__ import annotations

import math
from typing import IO

from extrap_plugins.extrapolation import Extrapolation, Extrapolations, is_minimum
from extrap_plugins.formatting import (CALLPATH_WIDTH, WARNINGS_LISTED, callpath_labels, format_percent, format_point,
                                      note_lines, reading_lines, text_table, warning_lines)
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.models import ModelSet
from extrap_plugins.quality import validation_line
from extrap_plugins.registration import ExporterInfo

from ._options import from_options


@hookimpl
def extrap_exporters() -> list[ExporterInfo]:
    return [ExporterInfo("text", export_text, "an aligned table: formula, adjusted R², SMAPE (+ extrapolation)",
                         extension=".txt")]


def export_text(model_set: ModelSet, out: IO[str], options: dict[str, str], listed: str = WARNINGS_LISTED) -> None:
    """One row per call path and metric: the human formula, adjusted R² and SMAPE.

    With a ``target`` or a ``sort`` the table gains the growth class, the
    values at the largest measured point (and the target, with its interval)
    and the shares of parent and root.  ``listed`` says where a warning's
    series are all listed (``print(models)`` in Python: their ``Model.warnings``).
    """
    ranked, _ = from_options(model_set, options, "text")
    extended = ranked.target is not None or ranked.sort is not None
    validated = any(math.isfinite(m.validation) for m in model_set.models)
    headers = ["call path", "metric", "model", "adj. R²", "SMAPE"]
    if validated:
        headers.append("held-out error")
    if extended:
        headers += _extrapolation_headers(ranked)
    rows = []
    # one shortened name per call path, told apart from the others (in the table and the lists below it)
    names = callpath_labels([m.callpath for m in model_set.models])  # (printable, as people read them)
    for m, x in ranked:
        row = [names[m.callpath], m.metric, m.formula, _fixed(m.quality.ar2, 4),
               _fixed(m.quality.smape, 2, "%")]
        if validated:
            row.append(_fixed(100 * m.validation, 1, "%"))
        if extended:
            row += _extrapolation_cells(ranked, x)
        rows.append(row)
    out.write(text_table(headers, rows))
    out.write("\n")
    if any(len(m.callpath) > CALLPATH_WIDTH for m in model_set.models):
        out.write(f"\ncall paths longer than {CALLPATH_WIDTH} characters are shortened here (their root, …, their last "
                  "regions;\nwhere two would read the same, the region that tells them apart, or a number); --export "
                  "csv or json give them whole\n")
    if validated:
        out.write("\n" + validation_line([m.validation for m in model_set.models]) + "\n")
    outgrown = [m for m, x in ranked if x.outgrows_parent]
    if outgrown:
        out.write("\ninconsistent extrapolation (a call path outgrows its parent at the target, share above 100 %):\n")
        for m in outgrown:
            out.write(f"  {names[m.callpath]} [{m.metric}]\n")
    crossed = [(m, x) for m, x in ranked if x.crosses and is_minimum(m.metric)]  # (each pair once)
    if crossed:
        out.write("\ninconsistent extrapolation (a minimum above its maximum at the target, each modelled apart):\n")
        for m, x in crossed:
            out.write(f"  {names[m.callpath]}: {m.metric} above {x.crosses}\n")
    _write_reading(model_set, out)
    out.write("".join(f"{line}\n" for line in warning_lines([m for m, _ in ranked], listed)))  # as ``model`` ends


def _write_reading(model_set: ModelSet, out: IO[str]) -> None:
    """What the reader noted, and what reading warned of (a report saved with ``-o`` keeps it; where stderr goes
    to the same terminal or file, the command line leaves it to the report: ``cli.listed_warnings``;
    :func:`~extrap_plugins.formatting.note_lines` and :func:`~extrap_plugins.formatting.reading_lines`)."""
    lines = [*note_lines(model_set.notes), *reading_lines(model_set.reading_warnings)]
    out.write("".join(f"{line}\n" for line in lines))


def _extrapolation_headers(ranked: Extrapolations) -> list[str]:
    headers = ["growth", f"at {format_point(ranked.largest)}" if ranked.largest else "at largest"]
    if ranked.target is not None:
        headers += [f"at {format_point(ranked.target)}", f"{format_percent(ranked.level)} interval"]
    arrow = " → target" if ranked.target is not None else ""
    return headers + [f"share of parent{arrow}", f"share of root{arrow}"]


def _extrapolation_cells(ranked: Extrapolations, x: Extrapolation) -> list[str]:
    cells = [x.growth or "n/a", _short(x.value_largest)]
    if ranked.target is not None:
        cells += [_short(x.value_target), f"{_short(x.interval[0])} … {_short(x.interval[1])}"
                  if math.isfinite(x.interval[0]) else "n/a"]
        flag = " (!)" if x.outgrows_parent else ""
        cells += [f"{_percent(x.share_parent_largest)} → {_percent(x.share_parent_target)}{flag}",
                  f"{_percent(x.share_root_largest)} → {_percent(x.share_root_target)}"]
    else:
        cells += [_percent(x.share_parent_largest), _percent(x.share_root_largest)]
    return cells


def _short(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.4g}"


def _percent(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{100 * value:.1f}%"


def _fixed(value: float, digits: int, suffix: str = "") -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.{digits}f}{suffix}"
