"""The ``csv`` exporter: one row per model (function, quality, growth, extrapolation)."""

from __future__ import annotations

import csv
import math
from typing import IO

from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.models import ModelSet
from extrap_plugins.registration import ExporterInfo

from ._options import from_options

CSV_COLUMNS_V1 = ("callpath", "metric", "modeler", "function", "rss", "ar2", "smape", "re", "points")
CSV_COLUMNS = CSV_COLUMNS_V1 + (
    "growth", "value_largest", "value_target", "interval_low", "interval_high",
    "share_parent_largest", "share_root_largest", "share_parent_target", "share_root_target",
)


@hookimpl
def extrap_exporters() -> list[ExporterInfo]:
    return [ExporterInfo("csv", export_csv, "one row per model: function, quality, growth, extrapolation",
                         extension=".csv")]


def export_csv(model_set: ModelSet, out: IO[str], options: dict[str, str]) -> None:
    """One row per model with the columns in :data:`CSV_COLUMNS`, in the ``sort`` order.

    Values that cannot be known (no target, no parent) are empty cells.  Models made with
    ``validate=True`` add the column ``validation_error`` (relative error at the held-out points).
    """
    ranked, _ = from_options(model_set, options, "csv")
    writer = csv.writer(out, lineterminator="\n")
    validated = any(math.isfinite(m.validation) for m in model_set.models)
    writer.writerow(CSV_COLUMNS + (("validation_error",) if validated else ()))
    for m, x in ranked:
        q = m.quality
        extra = [_csv_number(m.validation)] if validated else []
        writer.writerow([m.callpath, m.metric, m.modeler, m.function, _csv_number(q.rss),
                         _csv_number(q.ar2), _csv_number(q.smape), _csv_number(q.re), m.points,
                         x.growth or "", _csv_number(x.value_largest), _csv_number(x.value_target),
                         _csv_number(x.interval[0]), _csv_number(x.interval[1]),
                         _csv_number(x.share_parent_largest), _csv_number(x.share_root_largest),
                         _csv_number(x.share_parent_target), _csv_number(x.share_root_target)] + extra)


def _csv_number(value: float) -> str:
    return repr(float(value)) if math.isfinite(value) else ""
