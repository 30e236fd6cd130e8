"""Built-in exporters: ``text`` (an aligned table), ``json`` (the machine interface) and ``csv``."""

from __future__ import annotations

import csv
import json
import math
from typing import IO, Any

from tabulate import tabulate

from .hookspecs import hookimpl
from .model import Model, ModelSet, Segment, Term
from .registration import ExporterInfo

JSON_FORMAT = "extrap-plugins/models"
JSON_VERSION = 1
CSV_COLUMNS = ("callpath", "metric", "modeler", "function", "rss", "ar2", "smape", "re", "points")


@hookimpl
def extrap_exporters() -> list[ExporterInfo]:
    return [
        ExporterInfo("text", export_text, "an aligned table: formula, adjusted R², SMAPE", extension=".txt"),
        ExporterInfo("json", export_json, f"the versioned machine interface ({JSON_FORMAT} v{JSON_VERSION})", extension=".json"),
        ExporterInfo("csv", export_csv, "one row per model: function and quality figures", extension=".csv"),
    ]


# ---------------------------------------------------------------------- text
def export_text(model_set: ModelSet, out: IO[str], options: dict[str, str]) -> None:
    """One row per call path and metric: the human formula, adjusted R² and SMAPE."""
    _reject_options("text", options)
    rows = [
        [m.callpath, m.metric, m.formula, _fixed(m.quality.ar2, 4), _fixed(m.quality.smape, 2, "%")]
        for m in model_set
    ]
    headers = ["call path", "metric", "model", "adj. R²", "SMAPE"]
    out.write(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True))
    out.write("\n")
    warned = [m for m in model_set if m.warnings]
    if warned:
        out.write("\nwarnings:\n")
        for m in warned:
            for text in m.warnings:
                out.write(f"  {m.callpath} [{m.metric}]: {text}\n")


def _fixed(value: float, digits: int, suffix: str = "") -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.{digits}f}{suffix}"


# ---------------------------------------------------------------------- json
def export_json(model_set: ModelSet, out: IO[str], options: dict[str, str]) -> None:
    """The document described in the README (format ``extrap-plugins/models``, version 1)."""
    _reject_options("json", options)
    json.dump(json_document(model_set), out, indent=1, allow_nan=False)
    out.write("\n")


def json_document(model_set: ModelSet) -> dict[str, Any]:
    """The JSON export as a plain dict (what ``export_json`` writes)."""
    return {
        "format": JSON_FORMAT,
        "version": JSON_VERSION,
        "parameters": list(model_set.parameters),
        "models": [_model_to_json(m) for m in model_set],
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
    """One row per model with the columns in :data:`CSV_COLUMNS`."""
    _reject_options("csv", options)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for m in model_set:
        q = m.quality
        writer.writerow([m.callpath, m.metric, m.modeler, m.function, _csv_number(q.rss),
                         _csv_number(q.ar2), _csv_number(q.smape), _csv_number(q.re), m.points])


def _csv_number(value: float) -> str:
    return repr(float(value)) if math.isfinite(value) else ""


def _reject_options(name: str, options: dict[str, str]) -> None:
    if options:
        from .errors import InputError

        raise InputError(f"exporter {name!r} takes no options; got {', '.join(sorted(options))}")
