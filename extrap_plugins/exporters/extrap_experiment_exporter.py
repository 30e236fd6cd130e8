"""Exporter ``extra-p``: the models with their measurements, as an Extra-P 4 experiment (``*.extra-p``).

Extra-P 4 opens the file with its GUI (*File → Open experiment*) or
``extrap --experiment FILE``, and shows our models beside the measurements,
under the modeler name ``extrap-plugins NAME``::

    extrap-plugins model runs/ --export extra-p -o runs.extra-p

The file is what Extra-P itself saves (a zip archive holding
``experiment.json``, and the repetitions in ``values/0.vals``, located
through ``values/0.indx``): per call path and metric, every point's mean,
median, minimum, maximum, standard deviation (``ddof=0``, as Extra-P's) and
repetitions; per model its function and the costs Extra-P shows (RSS, rRSS,
nRSS, SMAPE, adjusted R², RE), computed as Extra-P computes them, from the
model's predictions at the points reduced by the measure the models were
made with.  A model that is not one PMNF function (a segmented model, a
third-party model with its own predictor) has no form in this file: its
series keeps its measurements without a model, and a warning counts them.
Our own reader (``extrap-experiment``) reads the measurements back.
"""

from __future__ import annotations

import io
import json
import math
import pathlib
import struct
import warnings
import zipfile
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np
from numpy.lib import format as npy

from extrap_plugins.errors import ExtrapWarning, InputError
from extrap_plugins.files import atomic_writer
from extrap_plugins.formatting import format_count, format_warned
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.models import Model, ModelSet
from extrap_plugins.registration import ExporterInfo

from ._options import check_option_names
from .extrap_jsonl_exporter import series_names

NAME = "extra-p"
VERSION = "4.2.0"
"""The Extra-P version whose file format this writes (Extra-P 4.2 and later read it without a warning)."""
MEASURES = {"mean": "MEAN", "median": "MEDIAN", "minimum": "MINIMUM", "maximum": "MAXIMUM"}
DENOMINATOR = 12
"""Exponents that are fractions of at most this denominator are written as Extra-P writes them (``"3/2"``)."""


@hookimpl
def extrap_exporters() -> list[ExporterInfo]:
    return [
        ExporterInfo(
            NAME,
            export_extrap_experiment,
            "the models and their measurements as an Extra-P 4 experiment (extrap --experiment FILE)",
            kind="path",
            extension=".extra-p",
            folder=False,  # one file, written by the exporter itself (a zip archive)
        )
    ]


def export_extrap_experiment(model_set: ModelSet, path: pathlib.Path, options: dict[str, str]) -> None:
    """Write ``model_set`` and the measurements behind it as an Extra-P 4 experiment archive at ``path``."""
    check_option_names(options, NAME)  # the options of every exporter are taken, and ignored: no values here
    experiment = model_set.experiment
    if experiment is None:
        raise InputError(f"the {NAME} exporter writes the models with the measurements behind them, and this model "
                         f"set carries none (a streamed model set: model it without --stream on)")
    points = Points.of(experiment)
    document = {
        "Extra-P": VERSION,
        "parameters": list(experiment.parameter_names),
        "measurements": points.measurements(experiment),
        "modelers": [_modeler(model_set, experiment, points)],
    }
    buffer = io.BytesIO()  # zipfile takes its offsets from the stream's position, which a device does not keep
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        _write_values(archive, np.split(points.values, points.starts[1:]) if len(points.starts) else [])
        archive.writestr("experiment.json", json.dumps(document))
    with atomic_writer(path, binary=True, allow_read_only=True) as stream:
        stream.write(buffer.getbuffer())


@dataclass
class Points:
    """Every (series, point) of an experiment with its statistics, computed for all at once: the measured values
    sorted by call path, metric, coordinates and value, and where each point's repetitions start among them.
    Values that are not finite (missing) are left out, with one warning."""

    callpath: np.ndarray  # shape (n_points,): each point's call path code, then metric code, coordinates
    metric: np.ndarray
    coordinates: np.ndarray  # shape (n_points, n_params)
    values: np.ndarray  # every repetition, shape (n_values,)
    starts: np.ndarray  # shape (n_points,): where each point's repetitions start in ``values``
    statistics: dict[str, np.ndarray]  # "mean", "median", "minimum", "maximum", "std", "repetitions"

    @classmethod
    def of(cls, experiment) -> Points:
        finite = np.isfinite(experiment.value)
        if not finite.all():
            warnings.warn(ExtrapWarning(format_warned(
                series_names(experiment, np.flatnonzero(~finite)),
                f"the {NAME} export leaves out {format_count(int((~finite).sum()), 'missing value')} (not a finite "
                f"number)")), stacklevel=4)
        coordinates, value = experiment.coordinates[finite], experiment.value[finite]
        callpath, metric = experiment.callpath_index[finite], experiment.metric_index[finite]
        order = np.lexsort((value, *coordinates.T[::-1], metric, callpath))
        keys = np.column_stack([callpath[order], metric[order], coordinates[order]])
        values = value[order]
        starts = np.flatnonzero(np.r_[True, np.any(keys[1:] != keys[:-1], axis=1)]) if len(keys) else \
            np.array([], dtype=np.int64)
        counts = np.diff(np.r_[starts, len(values)])
        ends = starts + counts - 1
        mean = np.add.reduceat(values, starts) / counts if len(starts) else values[:0]
        spread = np.add.reduceat((values - np.repeat(mean, counts)) ** 2, starts) / counts if len(starts) else mean
        median = (values[starts + (counts - 1) // 2] + values[starts + counts // 2]) / 2  # (sorted in each point)
        return cls(keys[starts, 0].astype(np.int64), keys[starts, 1].astype(np.int64), keys[starts, 2:], values,
                   starts, {"mean": mean, "median": median, "minimum": values[starts], "maximum": values[ends],
                            "std": np.sqrt(spread), "repetitions": counts})

    def measurements(self, experiment) -> dict:
        """Extra-P's ``measurements``: call path → metric → one entry per point, whose ``values: [0, i]`` is the
        ``i``-th array of :func:`_write_values`."""
        columns = {name: self.statistics[name].tolist() for name in ("median", "mean", "minimum", "maximum", "std",
                                                                     "repetitions")}
        coordinates = self.coordinates.tolist()
        measurements: dict = {}
        for i, (c, m) in enumerate(zip(self.callpath.tolist(), self.metric.tolist())):
            series = measurements.setdefault(experiment.callpaths[c].name, {}).setdefault(
                experiment.metrics[m].name, [])
            series.append({"coordinate": coordinates[i], **{name: column[i] for name, column in columns.items()},
                           "values": [0, i]})
        return measurements

    def of_series(self, experiment) -> Callable[[str, str], slice]:
        """``points(callpath, metric)``: the slice of this series' points."""
        n_metrics = max(len(experiment.metrics), 1)
        keys = self.callpath * n_metrics + self.metric
        callpaths = {c.name: i for i, c in enumerate(experiment.callpaths)}
        metrics = {m.name: i for i, m in enumerate(experiment.metrics)}

        def points(callpath: str, metric: str) -> slice:
            key = callpaths[callpath] * n_metrics + metrics[metric]
            return slice(int(np.searchsorted(keys, key, "left")), int(np.searchsorted(keys, key, "right")))

        return points


def _write_values(archive: zipfile.ZipFile, repetitions: list[np.ndarray]) -> None:
    """Extra-P's value store: ``values/0.vals`` (a magic line, then one ``.npy`` array per point) and
    ``values/0.indx`` (a magic line, the count, then each array's offset in ``0.vals``)."""
    if not repetitions:
        return
    buffer = io.BytesIO()
    buffer.write(b"Extra-P VALUES\0\0")
    offsets = []
    for values in repetitions:
        offsets.append(buffer.tell())
        npy.write_array(buffer, np.ascontiguousarray(values, dtype=np.float64))
    index = b"Extra-P INDEX\0\0\0" + struct.pack(f"<Q{len(offsets)}Q", len(offsets), *offsets)
    archive.writestr(zipfile.ZipInfo("values/0.vals"), buffer.getvalue(), compress_type=zipfile.ZIP_STORED)
    archive.writestr(zipfile.ZipInfo("values/0.indx"), index, compress_type=zipfile.ZIP_STORED)


def _modeler(model_set: ModelSet, experiment, points: Points) -> dict:
    """One entry of Extra-P's ``modelers``: our models under the name ``extrap-plugins NAME``, as made with the
    measure ``model_set.measure`` (Extra-P's own modeler type, so that Extra-P can model again from it)."""
    measure = MEASURES[model_set.measure]
    parameters = list(experiment.parameter_names)
    of_series = points.of_series(experiment)
    reduced = points.statistics[model_set.measure]
    models: dict = {}
    left_out = []
    for model in model_set.models:
        hypothesis = _hypothesis(model, parameters, measure)
        if hypothesis is None:
            left_out.append(model)
            continue
        where = of_series(model.callpath, model.metric)
        columns = [parameters.index(name) for name in model.parameters]
        hypothesis.update(_costs(model, points.coordinates[where][:, columns], reduced[where]))
        models.setdefault(model.callpath, {})[model.metric] = {"hypothesis": hypothesis, "annotations": []}
    if left_out:
        first, verb = left_out[0], "is" if len(left_out) == 1 else "are"
        warnings.warn(ExtrapWarning(
            f"the {NAME} export writes {format_count(len(left_out), 'model')} that {verb} not one PMNF function "
            f"(first {first.callpath} [{first.metric}], a {first.modeler or 'third-party'} model) without a model: "
            f"Extra-P's file has no form for it; the measurements are there"), stacklevel=4)
    return {"name": f"extrap-plugins {model_set.modeler}".strip(),
            "modeler": {"use_median": measure == "MEDIAN", "use_measure": measure, "$type": "MultiParameterModeler"},
            "models": models}


def _hypothesis(model: Model, parameters: list[str], measure: str) -> dict | None:
    """Extra-P's hypothesis for ``model`` without its costs, or None for a model that is not one PMNF function."""
    if model.predictor is not None or model.segments or model.function_text is not None:
        return None
    if not model.terms:
        kind, function = "Constant", {"constant_coefficient": float(model.constant), "$type": "ConstantFunction"}
    elif len(parameters) == 1:
        kind = "SingleParameter"
        function = {"constant_coefficient": float(model.constant),
                    "compound_terms": [{"coefficient": float(term.coefficient),
                                        "simple_terms": _simple_terms(next(iter(term.factors.values())))}
                                       for term in model.terms],
                    "$type": "SingleParameterFunction"}
    else:
        kind = "MultiParameter"
        function = {"constant_coefficient": float(model.constant),
                    "compound_terms": [{"coefficient": float(term.coefficient),
                                        "parameter_term_pairs": {
                                            str(parameters.index(name)): {"coefficient": 1.0,
                                                                          "simple_terms": _simple_terms(factor)}
                                            for name, factor in term.factors.items()}}
                                       for term in model.terms],
                    "$type": "MultiParameterFunction"}
    return {"function": function, "_use_median": measure == "MEDIAN", "_use_measure": measure,
            "$type": f"{kind}Hypothesis"}


def _simple_terms(factor) -> list[dict]:
    """A factor ``x^a · log2(x)^b`` as Extra-P's simple terms (a polynomial and a logarithm, each left out at 0)."""
    return [{"term_type": kind, "exponent": _exponent(exponent)}
            for kind, exponent in (("polynomial", factor.exponent), ("logarithm", factor.log_exponent))
            if exponent != 0]


def _exponent(value: float) -> float | str:
    """An exponent as Extra-P writes it: a whole number as a float, a simple fraction as ``"p/q"``."""
    fraction = Fraction(value).limit_denominator(DENOMINATOR)
    if fraction.denominator == 1 or abs(float(fraction) - value) > 1e-12 * max(abs(value), 1.0):
        return float(value)
    return f"{fraction.numerator}/{fraction.denominator}"


def _costs(model: Model, points: np.ndarray, actual: np.ndarray) -> dict:
    """The costs Extra-P shows for a model, as Extra-P computes them (``Hypothesis.compute_cost``), over the
    series' ``points`` (in the model's parameter order) and their values reduced by the measure, ``actual``; the
    adjusted R² counts the model's terms (1 for a constant, as Extra-P's; NaN where it is not defined, as nRSS for
    values of mean 0: Extra-P writes NaN there too)."""
    predicted = model.predict(points)
    difference = predicted - actual
    rss = float(np.sum(difference ** 2))
    nonzero = actual != 0
    relative = difference[nonzero] / actual[nonzero]
    total = np.abs(actual) + np.abs(predicted)
    smape = np.abs(difference[total != 0]) / total[total != 0] * 2
    tss = float(np.sum((actual - actual.mean()) ** 2))
    freedom = len(actual) - len(model.terms) - 1
    if not model.terms:
        ar2 = 1.0  # (Extra-P's, for a constant)
    else:
        ar2 = 1 - (rss / tss) * (len(actual) - 1) / freedom if tss > 0 and freedom > 0 else math.nan
    mean = float(actual.mean())
    return {"RSS": rss, "rRSS": float(np.sum(relative ** 2)), "nRSS": rss ** 0.5 / mean if mean else math.nan,
            "SMAPE": float(np.sum(smape) / len(actual) * 100), "AR2": float(ar2),
            "RE": float(np.mean(np.abs(relative))) if relative.size else 0.0, "_costs_are_calculated": True}
