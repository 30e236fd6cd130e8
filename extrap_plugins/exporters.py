"""Built-in exporters: ``text`` (an aligned table), ``json`` (the machine interface) and ``csv``.

Every exporter takes the common options of :mod:`extrap_plugins.extrapolation`
(``target``, ``sort``, ``values``, ``level``): rows come in the requested
order and gain the value at the target, the shares of parent and root, the
growth class and the prediction interval.
"""

from __future__ import annotations

import csv
import json
import math
from typing import IO, Any

from tabulate import tabulate

from .errors import InputError
from .extrapolation import Extrapolation, Extrapolations, format_point, from_options
from .hookspecs import hookimpl
from .model import Model, ModelSet, Segment, Term
from .registration import ExporterInfo

JSON_FORMAT = "extrap-plugins/models"
JSON_VERSION = 2
JSON_VERSIONS = (1, 2)
JSON_DEFAULT_VERSION = 1
"""What ``export(models, "json")`` writes when no ``version`` is given (the CLI asks for 2)."""
CSV_COLUMNS_V1 = ("callpath", "metric", "modeler", "function", "rss", "ar2", "smape", "re", "points")
CSV_COLUMNS = CSV_COLUMNS_V1 + (
    "growth", "value_largest", "value_target", "interval_low", "interval_high",
    "share_parent_largest", "share_root_largest", "share_parent_target", "share_root_target",
)


@hookimpl
def extrap_exporters() -> list[ExporterInfo]:
    return [
        ExporterInfo("text", export_text, "an aligned table: formula, adjusted R², SMAPE (+ extrapolation)",
                     extension=".txt"),
        ExporterInfo("json", export_json, f"the versioned machine interface ({JSON_FORMAT} v1, v2)",
                     extension=".json", options={"version": "1 or 2 (default 1; the CLI writes 2)"}),
        ExporterInfo("csv", export_csv, "one row per model: function, quality, growth, extrapolation",
                     extension=".csv"),
    ]


# ---------------------------------------------------------------------- text
def export_text(model_set: ModelSet, out: IO[str], options: dict[str, str]) -> None:
    """One row per call path and metric: the human formula, adjusted R² and SMAPE.

    With a ``target`` or a ``sort`` the table gains the growth class, the
    values at the largest measured point (and the target, with its interval)
    and the shares of parent and root.
    """
    ranked, _ = from_options(model_set, options, "text")
    extended = ranked.target is not None or ranked.sort is not None
    headers = ["call path", "metric", "model", "adj. R²", "SMAPE"]
    if extended:
        headers += _extrapolation_headers(ranked)
    rows = []
    for m, x in ranked:
        row = [m.callpath, m.metric, m.formula, _fixed(m.quality.ar2, 4), _fixed(m.quality.smape, 2, "%")]
        if extended:
            row += _extrapolation_cells(ranked, x)
        rows.append(row)
    out.write(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True))
    out.write("\n")
    warned = [m for m, _ in ranked if m.warnings]
    if warned:
        out.write("\nwarnings:\n")
        for m in warned:
            for text in m.warnings:
                out.write(f"  {m.callpath} [{m.metric}]: {text}\n")


def _extrapolation_headers(ranked: Extrapolations) -> list[str]:
    headers = ["growth", f"at {format_point(ranked.largest)}" if ranked.largest else "at largest"]
    if ranked.target is not None:
        headers += [f"at {format_point(ranked.target)}", f"{ranked.level:.0%} interval"]
    arrow = " → target" if ranked.target is not None else ""
    return headers + [f"share of parent{arrow}", f"share of root{arrow}"]


def _extrapolation_cells(ranked: Extrapolations, x: Extrapolation) -> list[str]:
    cells = [x.growth or "n/a", _short(x.value_largest)]
    if ranked.target is not None:
        cells += [_short(x.value_target), f"{_short(x.interval[0])} … {_short(x.interval[1])}"
                  if math.isfinite(x.interval[0]) else "n/a"]
        cells += [f"{_percent(x.share_parent_largest)} → {_percent(x.share_parent_target)}",
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


# ---------------------------------------------------------------------- json
def export_json(model_set: ModelSet, out: IO[str], options: dict[str, str]) -> None:
    """The document described in the README (format ``extrap-plugins/models``).

    ``version=1`` (the default here) writes version 1 exactly; ``version=2``
    adds the extrapolation keys.  Models come in the ``sort`` order.
    """
    ranked, own = from_options(model_set, options, "json", {"version": ""})
    version = own.get("version", str(JSON_DEFAULT_VERSION))
    if version not in {str(v) for v in JSON_VERSIONS}:
        known = ", ".join(map(str, JSON_VERSIONS))
        raise InputError(f"JSON version {version!r} does not exist; expected one of {known}")
    write_document(json_document(model_set, version=int(version), extrapolations=ranked), out)


def write_document(document: dict[str, Any], out: IO[str]) -> None:
    """Write the document: one top-level key per line, one model per line.

    Each model is encoded by the json module's C encoder (``indent`` would
    switch to its pure-Python encoder, five times slower on 100,000 models);
    one line per model stays readable, and ``grep`` finds a call path's model.
    """
    out.write("{\n")
    last = len(document) - 1
    for i, (key, value) in enumerate(document.items()):
        out.write(f" {json.dumps(key)}: ")
        if key == "models" and value:
            out.write("[\n  ")
            out.write(",\n  ".join(json.dumps(m, allow_nan=False) for m in value))
            out.write("\n ]")
        else:
            out.write(json.dumps(value, allow_nan=False))
        out.write(",\n" if i < last else "\n")
    out.write("}\n")


def json_document(model_set: ModelSet, version: int = JSON_DEFAULT_VERSION,
                  extrapolations: Extrapolations | None = None) -> dict[str, Any]:
    """The JSON export as a plain dict (what ``export_json`` writes).

    Version 2 adds, at the top, ``largest_point``, ``target_point``,
    ``interval_level``, ``sort`` and ``values``, and to every model
    ``growth``, ``largest`` and ``target`` (see :func:`_extrapolation_to_json`).
    """
    if version == 1 and extrapolations is None:
        return {
            "format": JSON_FORMAT,
            "version": 1,
            "parameters": list(model_set.parameters),
            "models": [_model_to_json(m) for m in model_set],
        }
    if extrapolations is None:
        from .extrapolation import extrapolate

        extrapolations = extrapolate(model_set)
    if version == 1:
        return {
            "format": JSON_FORMAT,
            "version": 1,
            "parameters": list(model_set.parameters),
            "models": [_model_to_json(m) for m, _ in extrapolations],
        }
    return {
        "format": JSON_FORMAT,
        "version": 2,
        "parameters": list(model_set.parameters),
        "largest_point": _point(extrapolations.largest),
        "target_point": _point(extrapolations.target),
        "interval_level": extrapolations.level,
        "sort": extrapolations.sort,
        "values": dict(extrapolations.values),
        "models": [{**_model_to_json(m), **_extrapolation_to_json(x, extrapolations.target is not None)}
                   for m, x in extrapolations],
    }


def _point(point: dict[str, float] | None) -> dict[str, float] | None:
    return None if point is None else {k: float(v) for k, v in point.items()}


def _extrapolation_to_json(x: Extrapolation, has_target: bool) -> dict[str, Any]:
    """The version 2 keys of one model."""
    return {
        "growth": x.growth,
        "largest": {
            "value": _number(x.value_largest),
            "share_of_parent": _number(x.share_parent_largest),
            "share_of_root": _number(x.share_root_largest),
        },
        "target": None if not has_target else {
            "value": _number(x.value_target),
            "interval": [_number(x.interval[0]), _number(x.interval[1])],
            "share_of_parent": _number(x.share_parent_target),
            "share_of_root": _number(x.share_root_target),
        },
    }


def _model_to_json(model: Model) -> dict[str, Any]:
    return {
        "callpath": model.callpath,
        "metric": model.metric,
        "modeler": model.modeler,
        "function": model.function,
        "constant": _number(model.constant),
        "terms": [_term_to_json(t) for t in model.terms],
        "segments": None if model.segments is None else [_segment_to_json(s) for s in model.segments],
        "quality": {
            "rss": _number(model.quality.rss),
            "ar2": _number(model.quality.ar2),
            "smape": _number(model.quality.smape),
            "re": _number(model.quality.re),
        },
        "points": int(model.points),
    }


def _term_to_json(term: Term) -> dict[str, Any]:
    return {
        "coefficient": _number(term.coefficient),
        "factors": {
            name: {"exponent": float(f.exponent), "log_exponent": _integral(f.log_exponent)}
            for name, f in term.factors.items()
        },
    }


def _segment_to_json(segment: Segment) -> dict[str, Any]:
    return {
        "range": {name: [float(lo), float(hi)] for name, (lo, hi) in segment.range.items()},
        "constant": _number(segment.constant),
        "terms": [_term_to_json(t) for t in segment.terms],
    }


def _number(value: float) -> float | None:
    """JSON has no NaN or infinity: those become null."""
    value = float(value)
    return value if math.isfinite(value) else None


def _integral(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


# ----------------------------------------------------------------------- csv
def export_csv(model_set: ModelSet, out: IO[str], options: dict[str, str]) -> None:
    """One row per model with the columns in :data:`CSV_COLUMNS`, in the ``sort`` order.

    Values that cannot be known (no target, no parent) are empty cells.
    """
    ranked, _ = from_options(model_set, options, "csv")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for m, x in ranked:
        q = m.quality
        writer.writerow([m.callpath, m.metric, m.modeler, m.function, _csv_number(q.rss),
                         _csv_number(q.ar2), _csv_number(q.smape), _csv_number(q.re), m.points,
                         x.growth or "", _csv_number(x.value_largest), _csv_number(x.value_target),
                         _csv_number(x.interval[0]), _csv_number(x.interval[1]),
                         _csv_number(x.share_parent_largest), _csv_number(x.share_root_largest),
                         _csv_number(x.share_parent_target), _csv_number(x.share_root_target)])


def _csv_number(value: float) -> str:
    return repr(float(value)) if math.isfinite(value) else ""
