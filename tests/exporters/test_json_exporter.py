"""The json exporter: a model that is not in PMNF has no constant or terms to give (null, not 0.0 and [])."""

from __future__ import annotations

import io
import json
import shutil

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import Experiment, Model, ModelerInfo, hookimpl
from extrap_plugins.errors import ExtrapWarning
from extrap_plugins.exporters.json_exporter import export_json
from extrap_plugins.models import Factor, ModelSet, Term


class Mean:
    """A scikit-learn style modeler without a PMNF formula: its model is ``predict`` and ``formula_``."""

    def fit(self, X, y):
        self.mean_ = float(np.mean(y))
        self.formula_ = "mean(y)"
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


class MeanPlugin:
    @hookimpl
    def extrap_modelers(self):
        return [ModelerInfo("mean", Mean)]


def document(model_set, **options) -> dict:
    out = io.StringIO()
    export_json(model_set, out, {k: str(v) for k, v in options.items()})
    return json.loads(out.getvalue())


@pytest.mark.parametrize("version", [1, 2])
def test_a_model_that_is_not_pmnf_has_null_constant_and_terms(host, version):
    """``"constant": 0.0, "terms": []`` read as a model of 0 everywhere; this one predicts 3 everywhere."""
    host.register(MeanPlugin(), "mean_plugin", distribution="mean-dist")
    e = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[1], [2], [4], [8], [16]],
                                value=[2, 3, 4, 3, 3])
    models = extrap_plugins.model(e, "mean", host=host, executor="serial")
    (model,) = document(models, version=version)["models"]
    assert (model["function"], model["constant"], model["terms"]) == ("mean(y)", None, None)
    assert models[0].predict({"p": 1024}) == 3.0


def test_a_pmnf_model_keeps_its_constant_and_terms():
    m = Model("main", "time", ("p",), 1.5, (Term(2.0, {"p": Factor(1.0, 0)}),))
    (model,) = document(ModelSet(("p",), [m]))["models"]
    assert (model["constant"], model["terms"]) == (1.5, [{"coefficient": 2.0, "factors": {"p": {
        "exponent": 1.0, "log_exponent": 0}}}])


def test_a_model_of_its_own_text_alone_is_not_pmnf_either():
    m = Model("main", "time", ("p",), 0.0, function_text="see the paper")
    (model,) = document(ModelSet(("p",), [m]))["models"]
    assert (model["function"], model["constant"], model["terms"]) == ("see the paper", None, None)


def test_version_2_carries_the_reader_s_notes_in_memory_and_streamed(host, shared_data, tmp_path):
    """How the reader read the runs (which metadata became parameters, what was left out) was in
    ``Experiment.notes`` only: no output said it."""
    from extrap_plugins.streaming import stream_models

    folder = shared_data / "cube" / "extrap" / "single_parameter"
    in_memory = extrap_plugins.model(extrap_plugins.read(folder, metrics=["time"]), executor="serial")
    streamed = stream_models(folder, metrics=["time"], executor="serial", scratch=tmp_path)
    expected = ["parameters with one value in every run are left out: y=1, z=1"]
    for models in (in_memory, streamed):
        document = json.loads(extrap_plugins.export(models, "json", version=2))
        assert document["notes"] == expected
    assert list(in_memory.notes) == expected


def test_version_2_and_the_html_report_carry_what_reading_warned_of_in_memory_and_streamed(host, shared_data,
                                                                                             tmp_path, capsys):
    """A folder the reader ignored (or a run it skipped) was said on stderr alone: the JSON a pipeline keeps, and
    the report, said nothing of it."""
    from extrap_plugins import cli
    from extrap_plugins.exporters.html_exporter import summary
    from extrap_plugins.extrapolation import extrapolate

    folder = tmp_path / "runs"
    shutil.copytree(shared_data / "cube" / "extrap" / "single_parameter", folder)
    (folder / "stray").mkdir()
    said = f"{folder / 'stray'}: ignored, a folder without .cubex files"
    with pytest.warns(ExtrapWarning) as caught:
        experiment = extrap_plugins.read(folder, metrics=["time"])
    assert [str(w.message) for w in caught] == [said]  # still said as it came, once
    assert experiment.reading_warnings == [said]
    for stream in ("off", "on"):
        out = tmp_path / f"models-{stream}.json"
        assert cli.main(["model", str(folder), "--metric", "time", "--stream", stream, "--scratch", str(tmp_path),
                         "--export", "json", "-o", str(out)]) == 0
        assert capsys.readouterr().err.splitlines() == [f"extrap-plugins: warning: {said}"]
        document = json.loads(out.read_text())
        assert (document["notes"], document["reading_warnings"]) == (
            ["parameters with one value in every run are left out: y=1, z=1"], [said])
    models = extrap_plugins.model(experiment, executor="serial")
    assert ["warnings on reading", said] in summary(extrapolate(models))
    assert json.loads(extrap_plugins.export(models, "json", version=2))["reading_warnings"] == [said]


def test_a_value_left_out_at_its_line_is_a_reading_warning_and_the_model_s_own_stays_the_model_s(tmp_path, capsys):
    from extrap_plugins import cli

    data = tmp_path / "runs.csv"
    data.write_text("p,value\n1,1.0\n2,2.0\n4,nan\n8,8.1\n16,16.2\n32,32.0\n")
    out = tmp_path / "models.json"
    assert cli.main(["model", str(data), "--export", "json", "-o", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["reading_warnings"] == [
        f"{data}: 1 value is not a finite number (nan, inf or beyond the range of a float) and is left out as "
        "missing: line 4; series <root> [time]"]
    assert document["models"][0]["warnings"] == ["1 of 6 points have no finite value (NaN or infinite) and were left out"]
    assert len(capsys.readouterr().err.splitlines()) == 2  # both on stderr too, once each


@pytest.mark.parametrize("version", ["1", "2"])
def test_a_name_that_is_not_ascii_is_written_as_it_is_so_grep_finds_its_model(version):
    # it was "main->\u8a08\u7b97": grep 'main->計算' models.json found nothing
    m = Model("main->計算", "Zeit [µs]", ("größe",), 1.5, (Term(2.0, {"größe": Factor(1.0, 0)}),))
    out = io.StringIO()
    export_json(ModelSet(("größe",), [m]), out, {"version": version})
    (line,) = [line for line in out.getvalue().splitlines() if "main->計算" in line]
    assert '"metric": "Zeit [µs]"' in line and '"größe": {"exponent": 1.0' in line
    assert '"parameters": ["größe"]' in out.getvalue()
