"""The ``json`` exporter: the versioned machine interface (format ``extrap-plugins/models``)."""

from __future__ import annotations

import json
import math
import warnings
from typing import IO, Any

from extrap_plugins.errors import ExtrapWarning, InputError
from extrap_plugins.extrapolation import Extrapolation, Extrapolations, extrapolate
from extrap_plugins.formatting import json_number, json_plain
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.models import Model, ModelSet, Segment, Term
from extrap_plugins.quality import validation_summary
from extrap_plugins.registration import ExporterInfo

from ._options import from_options

JSON_FORMAT = "extrap-plugins/models"
JSON_VERSION = 2
JSON_VERSIONS = (1, 2)
JSON_DEFAULT_VERSION = 1
"""What ``export(models, "json")`` writes when no ``version`` is given (the CLI asks for 2)."""



@hookimpl
def extrap_exporters() -> list[ExporterInfo]:
    return [ExporterInfo("json", export_json, f"the versioned machine interface ({JSON_FORMAT} v1, v2)",
                         extension=".json", options={"version": "1 or 2 (default 1; the CLI writes 2)"})]


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
    if version == "1" and ranked.target is not None:  # (it was left out without a word)
        warnings.warn(ExtrapWarning("JSON version 1 holds no values at a target: the target is left out (version 2, "
                                    "the command line's default, has them)"), stacklevel=2)
    write_document(json_document(model_set, version=int(version), extrapolations=ranked), out)


def write_document(document: dict[str, Any], out: IO[str]) -> None:
    """Write the document: one top-level key per line, one model per line.

    Each model is encoded by the json module's C encoder (``indent`` would
    switch to its pure-Python encoder, five times slower on 100,000 models);
    one line per model stays readable, and ``grep`` finds a call path's model (names are written as they are,
    not as ``\\u`` escapes: JSON is UTF-8).
    """
    out.write("{\n")
    last = len(document) - 1
    for i, (key, value) in enumerate(document.items()):
        out.write(f" {json.dumps(key)}: ")
        if key == "models" and value:
            out.write("[\n  ")
            out.write(",\n  ".join(json.dumps(m, allow_nan=False, ensure_ascii=False) for m in value))
            out.write("\n ]")
        else:
            out.write(json.dumps(value, allow_nan=False, ensure_ascii=False))
        out.write(",\n" if i < last else "\n")
    out.write("}\n")


def json_document(model_set: ModelSet, version: int = JSON_DEFAULT_VERSION,
                  extrapolations: Extrapolations | None = None) -> dict[str, Any]:
    """The JSON export as a plain dict (what ``export_json`` writes).

    Version 2 adds, at the top, ``largest_point``, ``target_point``,
    ``interval_level``, ``sort``, ``values``, ``notes`` (the reader's, :attr:`ModelSet.notes
    <extrap_plugins.models.ModelSet.notes>`) and ``reading_warnings`` (what reading warned of, :attr:`ModelSet.
    reading_warnings <extrap_plugins.models.ModelSet.reading_warnings>`), and to every model
    ``growth``, ``largest`` and ``target`` (see :func:`_extrapolation_to_json`) and ``warnings`` (the model's
    :attr:`~extrap_plugins.models.Model.warnings`, every one, as the text export's end counts them); models made with
    ``validate=True`` add ``validation: {"error": ...}`` to every model and the summary
    ``validation: {"models", "within_10", "within_25", "median"}`` at the top.
    """
    if version == 1 and extrapolations is None:
        return {
            "format": JSON_FORMAT,
            "version": 1,
            "parameters": list(model_set.parameters),
            "models": [_model_to_json(m) for m in model_set],
        }
    if extrapolations is None:
        extrapolations = extrapolate(model_set)
    if version == 1:
        return {
            "format": JSON_FORMAT,
            "version": 1,
            "parameters": list(model_set.parameters),
            "models": [_model_to_json(m) for m, _ in extrapolations],
        }
    validated = any(math.isfinite(m.validation) for m in model_set.models)
    document = {
        "format": JSON_FORMAT,
        "version": 2,
        "parameters": list(model_set.parameters),
        "largest_point": _point(extrapolations.largest),
        "target_point": _point(extrapolations.target),
        "interval_level": extrapolations.level,
        "sort": extrapolations.sort,
        "values": dict(extrapolations.values),
        "notes": list(model_set.notes),
        "reading_warnings": list(model_set.reading_warnings),
    }
    if validated:
        summary = validation_summary([m.validation for m in model_set.models])
        document["validation"] = {k: v if k == "models" else json_number(v) for k, v in summary.items()}
    document["models"] = [
        {**_model_to_json(m), **_extrapolation_to_json(x, extrapolations.target is not None),
         "warnings": list(m.warnings), **({"validation": {"error": json_number(m.validation)}} if validated else {})}
        for m, x in extrapolations
    ]
    return document


def _point(point: dict[str, float] | None) -> dict[str, float] | None:
    return None if point is None else {k: float(v) for k, v in point.items()}


def _extrapolation_to_json(x: Extrapolation, has_target: bool) -> dict[str, Any]:
    """The version 2 keys of one model."""
    return {
        "growth": x.growth,
        "largest": {
            "value": json_number(x.value_largest),
            "share_of_parent": json_number(x.share_parent_largest),
            "share_of_root": json_number(x.share_root_largest),
        },
        "target": None if not has_target else {
            "value": json_number(x.value_target),
            "interval": [json_number(x.interval[0]), json_number(x.interval[1])],
            "share_of_parent": json_number(x.share_parent_target),
            "share_of_root": json_number(x.share_root_target),
            "outgrows_parent": x.outgrows_parent,
            "crosses": x.crosses,
        },
    }


def _model_to_json(model: Model) -> dict[str, Any]:
    """One model's keys of version 1.  A model that is not in PMNF (a third-party modeler's own ``function``, with a
    ``predictor``) has ``null`` as ``constant`` and ``terms``: ``0.0`` and ``[]`` would read as a model of 0."""
    pmnf = model.predictor is None and model.function_text is None
    return {
        "callpath": model.callpath,
        "metric": model.metric,
        "modeler": model.modeler,
        "function": model.function,
        "constant": json_number(model.constant) if pmnf else None,
        "terms": [_term_to_json(t) for t in model.terms] if pmnf else None,
        "segments": None if model.segments is None else [_segment_to_json(s) for s in model.segments],
        "quality": {
            "rss": json_number(model.quality.rss),
            "ar2": json_number(model.quality.ar2),
            "smape": json_number(model.quality.smape),
            "re": json_number(model.quality.re),
        },
        "points": int(model.points),
    }


def _term_to_json(term: Term) -> dict[str, Any]:
    return {
        "coefficient": json_number(term.coefficient),
        "factors": {
            name: {"exponent": float(f.exponent), "log_exponent": json_plain(f.log_exponent)}
            for name, f in term.factors.items()
        },
    }


def _segment_to_json(segment: Segment) -> dict[str, Any]:
    return {
        "range": {name: [float(lo), float(hi)] for name, (lo, hi) in segment.range.items()},
        "constant": json_number(segment.constant),
        "terms": [_term_to_json(t) for t in segment.terms],
    }
