"""The extra-p exporter: models and measurements as an Extra-P 4 experiment archive (``*.extra-p``)."""

from __future__ import annotations

import json
import os
import subprocess
import warnings
import zipfile

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import Experiment, cli
from extrap_plugins.errors import ExtrapWarning
from extrap_plugins.exporters.extrap_experiment_exporter import _exponent

EXTRAP_PYTHON = os.environ.get("EXTRAP_PYTHON")
"""A Python with Extra-P 4.2 installed (``pip install extrap==4.2.5`` in a venv of its own), for the test that
Extra-P itself opens what we write; without it that test is skipped."""


def archive_json(path) -> dict:
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read("experiment.json"))


def test_a_two_parameter_model_is_written_as_extrap_writes_one(host, shared_data, tmp_path):
    source = shared_data / "extrap" / "text" / "two_parameter_1.txt"
    models = extrap_plugins.model(extrap_plugins.read(source), executor="serial")
    (model,) = models.models
    target = tmp_path / "out.extra-p"
    extrap_plugins.export(models, "extra-p", target)
    document = archive_json(target)
    assert document["Extra-P"] == "4.2.0" and document["parameters"] == ["x", "y"]
    modeler = document["modelers"][0]
    assert modeler["name"] == "extrap-plugins default"
    assert modeler["modeler"] == {"use_median": False, "use_measure": "MEAN", "$type": "MultiParameterModeler"}
    hypothesis = modeler["models"]["reg"]["metr"]["hypothesis"]
    function = hypothesis.pop("function")
    assert function == {  # 0.9988 + 0.2002 · x^2 · log2(y)
        "constant_coefficient": model.constant,
        "compound_terms": [{"coefficient": model.terms[0].coefficient, "parameter_term_pairs": {
            "0": {"coefficient": 1.0, "simple_terms": [{"term_type": "polynomial", "exponent": 2.0}]},
            "1": {"coefficient": 1.0, "simple_terms": [{"term_type": "logarithm", "exponent": 1.0}]}}}],
        "$type": "MultiParameterFunction"}
    assert hypothesis["$type"] == "MultiParameterHypothesis" and hypothesis["_costs_are_calculated"] is True
    # the costs Extra-P shows, computed its way: they agree with ours where both have one
    assert hypothesis["SMAPE"] == pytest.approx(model.quality.smape, rel=1e-9)
    assert hypothesis["AR2"] == pytest.approx(model.quality.ar2, rel=1e-9)
    assert hypothesis["RSS"] == pytest.approx(model.quality.rss, rel=1e-9)
    # every point of the 25 with its five repetitions, and the statistics Extra-P keeps
    points = document["measurements"]["reg"]["metr"]
    assert len(points) == 25 and points[0]["coordinate"] == [20.0, 1.0] and points[0]["repetitions"] == 5
    assert points[0]["mean"] == pytest.approx(0.9986326048319512, rel=1e-12)
    assert points[0]["values"] == [0, 0] and points[24]["values"] == [0, 24]


def test_the_measure_of_the_models_is_extrap_s_and_the_costs_are_over_it(host, shared_data, tmp_path):
    source = shared_data / "extrap" / "text" / "one_parameter_1.txt"
    models = extrap_plugins.model(extrap_plugins.read(source), measure="median", executor="serial")
    (model,) = models.models
    document = json.loads(zipfile.ZipFile(_written(models)).read("experiment.json"))
    modeler = document["modelers"][0]
    assert modeler["modeler"]["use_measure"] == "MEDIAN" and modeler["modeler"]["use_median"] is True
    hypothesis = modeler["models"]["compute"]["time"]["hypothesis"]
    assert hypothesis["_use_measure"] == "MEDIAN"
    assert hypothesis["SMAPE"] == pytest.approx(model.quality.smape, rel=1e-9)  # over the medians, as the fit
    first = document["measurements"]["compute"]["time"][0]  # six repetitions: the median of the middle two
    assert first["repetitions"] == 6 and first["median"] == pytest.approx((81.98984501217201 + 82.00848518948744) / 2)


def test_the_archive_reads_back_into_the_same_measurements_and_models(host, shared_data, tmp_path):
    source = shared_data / "extrap" / "text" / "three_parameter_1.txt"
    experiment = extrap_plugins.read(source)
    models = extrap_plugins.model(experiment, executor="serial")
    target = tmp_path / "three.extra-p"
    extrap_plugins.export(models, "extra-p", target)
    again = extrap_plugins.read(target)

    def rows(e: Experiment) -> np.ndarray:
        table = np.column_stack([e.coordinates, e.value])
        return table[np.lexsort(table.T[::-1])]

    assert again.parameter_names == experiment.parameter_names
    np.testing.assert_array_equal(rows(again), rows(experiment))  # every repetition, bit for bit
    (before,), (after,) = models.models, extrap_plugins.model(again, executor="serial").models
    assert str(after) == str(before)  # the same terms (sums taken in another order: equal to rounding)
    np.testing.assert_allclose([after.constant, *(t.coefficient for t in after.terms)],
                               [before.constant, *(t.coefficient for t in before.terms)], rtol=1e-9)


def test_a_constant_and_a_one_parameter_model_take_extrap_s_types(host):
    experiment = Experiment.from_columns(
        ["p"], callpath=["flat"] * 5 + ["grows"] * 5, metric="time",
        coordinates=[[2], [4], [8], [16], [32]] * 2, value=[3.0] * 5 + [2 ** 1.5, 4 ** 1.5, 8 ** 1.5, 16 ** 1.5,
                                                                    32 ** 1.5])
    models = extrap_plugins.model(experiment, executor="serial")
    document = json.loads(zipfile.ZipFile(_written(models)).read("experiment.json"))
    written = document["modelers"][0]["models"]
    flat, grows = written["flat"]["time"]["hypothesis"], written["grows"]["time"]["hypothesis"]
    assert flat["function"] == {"constant_coefficient": 3.0, "$type": "ConstantFunction"}
    assert flat["$type"] == "ConstantHypothesis" and flat["AR2"] == 1.0 and flat["RSS"] == 0.0
    assert grows["$type"] == "SingleParameterHypothesis"
    assert grows["function"]["$type"] == "SingleParameterFunction"
    assert grows["function"]["compound_terms"][0]["simple_terms"] == [{"term_type": "polynomial", "exponent": "3/2"}]


def _written(models) -> str:
    import tempfile

    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "out.extra-p")
    extrap_plugins.export(models, "extra-p", path)
    return path


def test_a_segmented_model_leaves_its_series_without_a_model_and_says_so(host, shared_data):
    source = shared_data / "extrap" / "text" / "one_parameter_segmented_1.txt"
    models = extrap_plugins.model(extrap_plugins.read(source), "segmented", executor="serial")
    assert models.models[0].segments  # (the file is a segmented one)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = _written(models)
    assert [str(w.message) for w in caught if issubclass(w.category, ExtrapWarning)] == [
        "the extra-p export writes 1 model that is not one PMNF function (first main [runtime], a segmented model) "
        "without a model: Extra-P's file has no form for it; the measurements are there"]
    document = json.loads(zipfile.ZipFile(path).read("experiment.json"))
    assert document["modelers"][0]["models"] == {}
    assert len(document["measurements"]["main"]["runtime"]) == 10


def test_a_streamed_model_set_is_refused_in_one_line(shared_data, tmp_path, capsys):
    source = shared_data / "extrap" / "text" / "two_parameter_1.txt"
    target = tmp_path / "out.extra-p"
    status = cli.main(["model", str(source), "--stream", "on", "--scratch", str(tmp_path), "--export", "extra-p",
                       "-o", str(target), "--progress", "off"])
    assert status == cli.ExitStatus.BAD_INPUT and not target.exists()
    assert capsys.readouterr().err == (
        "extrap-plugins: error: the extra-p exporter writes the models with the measurements behind them, and this "
        "model set carries none (a streamed model set: model it without --stream on)\n")


@pytest.mark.parametrize("value, written", [(2.0, 2.0), (0.5, "1/2"), (2 / 3, "2/3"), (-0.25, "-1/4"),
                                            (0.37, 0.37), (1.25, "5/4")])
def test_exponents_are_written_as_extrap_writes_them(value, written):
    assert _exponent(value) == written


@pytest.mark.skipif(not EXTRAP_PYTHON, reason="Extra-P is not installed here: set EXTRAP_PYTHON to a Python with "
                                              "extrap==4.2.5 to check that Extra-P opens the archive")
def test_extrap_itself_opens_the_archive_and_evaluates_our_models(host, shared_data, tmp_path):
    source = shared_data / "extrap" / "text" / "three_parameter_1.txt"
    models = extrap_plugins.model(extrap_plugins.read(source), executor="serial")
    target = tmp_path / "three.extra-p"
    extrap_plugins.export(models, "extra-p", target)
    script = (
        "import json, sys\n"
        "from extrap.fileio.experiment_io import read_experiment\n"
        "e = read_experiment(sys.argv[1])\n"
        "(generator,) = e.modelers\n"
        "out = {}\n"
        "for (callpath, metric), model in generator.models.items():\n"
        "    h = model.hypothesis\n"
        "    out[callpath.name + ' ' + metric.name] = [[float(h.function.evaluate(m.coordinate)), m.mean,\n"
        "        len(m.values)] for m in model.measurements] + [[h.SMAPE, h.AR2]]\n"
        "print(json.dumps({'name': generator.name, 'models': out}))\n")
    done = subprocess.run([EXTRAP_PYTHON, "-c", script, str(target)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["name"] == "extrap-plugins default"
    (model,) = models.models
    rows = seen["models"]["reg metr"]
    *points, (smape, ar2) = rows
    experiment = models.experiment
    coordinates = np.unique(experiment.coordinates, axis=0)
    assert len(points) == len(coordinates) == 125
    ours = model.predict(coordinates)
    theirs = np.array([p[0] for p in points])
    np.testing.assert_allclose(np.sort(theirs), np.sort(ours), rtol=1e-12)  # Extra-P evaluates our formula
    assert all(p[2] == 5 for p in points) and smape == pytest.approx(model.quality.smape, rel=1e-9)
    assert ar2 == pytest.approx(model.quality.ar2, rel=1e-9)


def test_the_archive_can_be_written_to_a_device(host, tmp_path, capsys):
    # -o /dev/null was exit 1, "internal error: error: argument out of range": zipfile wrote through a stream whose
    # position stays 0, so the directory at the end had negative offsets
    source = tmp_path / "runs.jsonl"
    source.write_text("".join(f'{{"params": {{"p": {p}}}, "value": {2 * p}}}\n' for p in (1, 2, 4, 8, 16)))
    assert cli.main(["model", str(source), "--export", "extra-p", "-o", os.devnull]) == cli.ExitStatus.OK
    assert capsys.readouterr().err == ""


def test_missing_values_left_out_are_said_with_their_series(host, tmp_path):
    # "the extra-p export leaves out 2 missing values (not a finite number)", naming no series
    experiment = Experiment.from_columns(["p"], callpath=["a"] * 3 + ["b"] * 3, metric="time",
                                         coordinates=[[1], [2], [2]] * 2,
                                         value=[1.0, float("nan"), 2.5, 1.0, 2.0, float("inf")])
    models = extrap_plugins.model(experiment, executor="serial")
    with pytest.warns(ExtrapWarning) as said:
        extrap_plugins.export(models, "extra-p", tmp_path / "out.extra-p")
    assert [str(w.message) for w in said] == [
        "a [time] and b [time]: the extra-p export leaves out 2 missing values (not a finite number)"]
    assert archive_json(tmp_path / "out.extra-p")["measurements"]["b"]["time"][1]["repetitions"] == 1
