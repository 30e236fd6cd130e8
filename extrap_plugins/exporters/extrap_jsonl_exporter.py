"""Exporter ``extrap-jsonl``: the measurements behind a model set, as Extra-P JSON Lines.

Extra-P 4 reads this format (``extrap --json FILE``): one JSON object
per measured value::

    {"params":{"p":4,"n":256},"callpath":"main->solve","metric":"time","value":0.0123}

Repetitions are lines with the same parameters, call path and metric.  With
it, measurements made by the instrument shim (or read by any of our
readers) can be modeled side by side in Extra-P::

    extrap-plugins model runs/ --export extrap-jsonl -o runs.jsonl
    extrap --json runs.jsonl
"""

from __future__ import annotations

import json
import warnings
from typing import IO

import numpy as np

from extrap_plugins.errors import ExtrapWarning, InputError
from extrap_plugins.formatting import format_count, format_warned, json_plain
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.models import ModelSet
from extrap_plugins.registration import ExporterInfo

from ._options import check_option_names

NAME = "extrap-jsonl"


@hookimpl
def extrap_exporters() -> list[ExporterInfo]:
    return [
        ExporterInfo(
            NAME,
            export_extrap_jsonl,
            "the measurements behind the models as Extra-P JSON Lines (extrap --json FILE)",
            extension=".jsonl",
        )
    ]


def export_extrap_jsonl(model_set: ModelSet, out: IO[str], options: dict[str, str]) -> None:
    """Write every measured value of ``model_set.experiment`` as one Extra-P JSON line.

    Lines are ordered by call path and metric (in the experiment's order),
    then point and repetition.  Numbers
    keep their exact shortest representation; integral parameter values are
    written as integers.
    """
    check_option_names(options, NAME)  # the options of every exporter are taken, and ignored: no values here
    experiment = model_set.experiment
    if experiment is None:
        raise InputError(f"the {NAME} exporter writes the measurements behind the models, "
                         f"and this model set carries none")
    if len(experiment) == 0:
        return
    order = np.lexsort((experiment.repetition, *experiment.coordinates.T[::-1],
                        experiment.metric_index, experiment.callpath_index))
    points, point_index = np.unique(experiment.coordinates[order], axis=0, return_inverse=True)
    names = experiment.parameter_names
    params = np.array([
        '{"params":' + json.dumps({n: json_plain(v) for n, v in zip(names, point)}, separators=(",", ":")) + ","
        for point in points.tolist()
    ] or [""], dtype=object)
    callpaths = np.array(['"callpath":' + json.dumps(c.name) + "," for c in experiment.callpaths], dtype=object)
    metrics = np.array(['"metric":' + json.dumps(m.name) + ',"value":' for m in experiment.metrics], dtype=object)
    values = experiment.value[order]
    finite = np.isfinite(values)  # a missing value (a reader's nan or inf) has no JSON number: it is left out
    if not finite.all():
        missing = int((~finite).sum())
        warnings.warn(ExtrapWarning(format_warned(
            series_names(experiment, order[~finite]),
            f"the {NAME} export leaves out {format_count(missing, 'missing value')} (not a finite number) that JSON "
            f"cannot hold")), stacklevel=2)
    order, values, point_index = order[finite], values[finite], point_index.reshape(-1)[finite]
    _warn_incomplete(experiment, order, point_index, len(points))
    if values.size == 0:
        return
    texts = np.array(json.dumps(values.tolist())[1:-1].split(", "), dtype=object)  # exact float reprs, in C
    lines = (params[point_index] + callpaths[experiment.callpath_index[order]]
             + metrics[experiment.metric_index[order]] + texts + "}\n")
    out.write("".join(lines.tolist()))



def _warn_incomplete(experiment, order: np.ndarray, point_index: np.ndarray, n_points: int) -> None:
    """Say which series the file holds at fewer than all its points: Extra-P 4.2.5 then reads none of it
    ("the number of measurements ... does not match the number of coordinates")."""
    series = _series_codes(experiment, order)
    pairs = np.unique(np.column_stack([series, point_index]), axis=0)
    codes, counts = np.unique(pairs[:, 0], return_counts=True)
    short = codes[counts < n_points]
    if short.size:
        names = series_names(experiment, order[np.isin(series, short)])
        warnings.warn(ExtrapWarning(format_warned(names, f"measured at fewer than all {n_points} points of the "
                                                         "file: Extra-P 4.2.5 reads no file where a series misses a "
                                                         "point (select complete series with --callpath or "
                                                         "--metric)")), stacklevel=3)


def _series_codes(experiment, rows: np.ndarray) -> np.ndarray:
    """One code per series (call path, then metric, in the experiment's order) for the values at ``rows``."""
    return experiment.callpath_index[rows].astype(np.int64) * len(experiment.metrics) + experiment.metric_index[rows]


def series_names(experiment, rows: np.ndarray) -> list[str]:
    """``callpath [metric]`` of every series that holds a value at ``rows`` (indices), in the experiment's order
    (for a warning of :func:`~extrap_plugins.formatting.format_warned`)."""
    n_metrics = len(experiment.metrics)
    return [f"{experiment.callpaths[c // n_metrics].name} [{experiment.metrics[c % n_metrics].name}]"
            for c in np.unique(_series_codes(experiment, rows)).tolist()]
