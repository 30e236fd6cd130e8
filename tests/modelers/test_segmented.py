"""The ``segmented`` modeler: registration, segment models, notes, exports and the command line."""

import json
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.cli import ExitStatus, main
from extrap_plugins.errors import InputError, QualityWarning
from extrap_plugins.experiment import Experiment
from extrap_plugins.plugins import PluginHost
from extrap_plugins.registration import ModelerInfo


def text_file(shared_data, name):
    return shared_data / "extrap" / "text" / name


def model_of(path, name="segmented", **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return extrap_plugins.model(extrap_plugins.read(path), name, executor="serial", **options)


def test_it_is_a_built_in_plugin(host):
    registered = host.modelers["segmented"]
    assert registered.distribution == "extrap-plugins"
    assert registered.plugin == "extrap_plugins.modelers.segmented"
    assert "base" in registered.info.options and "threshold" in registered.info.options


def test_seed_001_example_gets_two_segments_sharing_p_6(host, shared_data):
    (model,) = model_of(text_file(shared_data, "one_parameter_segmented_1.txt"))
    assert model.modeler == "segmented"
    assert [dict(s.range) for s in model.segments] == [{"p": (1.0, 6.0)}, {"p": (6.0, 10.0)}]
    assert model.predict({"p": 3}) == pytest.approx(9.0)       # p^2
    assert model.predict({"p": 8}) == pytest.approx(38.0)      # 30 + p
    assert model.predict({"p": 100}) == pytest.approx(130.0)   # extrapolated with the last segment
    assert model.predict(np.array([[2.0], [9.0]])) == pytest.approx([4.0, 39.0])
    assert (model.constant, model.terms) == (model.segments[-1].constant, model.segments[-1].terms)
    assert " for 1 ≤ p ≤ 6; " in model.formula and model.formula.endswith(" for 6 ≤ p ≤ 10")
    assert model.quality.rss == pytest.approx(0.0, abs=1e-9)
    assert model.warnings == ()


def test_one_behaviour_gets_one_model(host, shared_data):
    (model,) = model_of(text_file(shared_data, "one_parameter_segmented_3.txt"))  # p^2 log2(p) throughout
    assert model.segments is None
    assert model.predict({"p": 200}) == pytest.approx(200**2 * np.log2(200), rel=1e-6)


def test_the_change_after_4000(host, shared_data):
    models = model_of(text_file(shared_data, "one_parameter_segmented_6.txt"))
    model = models.get("met1+5", "time")  # about 4 up to p = 4000, then 9 + p/1000
    assert [dict(s.range) for s in model.segments] == [{"p": (500.0, 4000.0)}, {"p": (5000.0, 9000.0)}]
    assert model.predict({"p": 7000}) == pytest.approx(16.0, rel=1e-3)
    assert model.predict({"p": 2000}) == pytest.approx(4.0, rel=0.05)


def test_a_small_segment_gets_a_note_naming_the_points_to_measure(host):
    p = 2.0 ** np.arange(1, 11)
    y = np.where(p <= 256, 20 + p, 10 * p)
    experiment = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=p[:, None], value=y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (model,) = extrap_plugins.model(experiment, "segmented", executor="serial")
    note = ("segment 512 ≤ p ≤ 1024 has only 2 points (p = 512, 1024); 5 are needed for a model of its own: "
            "measure p = 2048, 4096, 8192")
    assert model.warnings == (note,)
    assert [dict(s.range) for s in model.segments] == [{"p": (2.0, 256.0)}, {"p": (512.0, 1024.0)}]
    assert model.segments[1].terms == () and model.segments[1].constant == pytest.approx(7680.0)
    assert model.predict({"p": 100}) == pytest.approx(120.0, rel=1e-6)
    assert any(isinstance(w.message, QualityWarning) and str(w.message) == f"main [time]: {note}" for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = extrap_plugins.export(extrap_plugins.model(experiment, "segmented", executor="serial"), "text")
    assert f"  main [time]: {note}\n" in text


def test_two_parameters_are_cut_along_the_parameter_that_changes(host, shared_data):
    path = text_file(shared_data, "two_parameter_segmented_1.txt")
    (model,) = model_of(path)
    assert [dict(s.range) for s in model.segments] == [{"x": (10.0, 50.0)}, {"x": (60.0, 100.0)}]
    experiment = extrap_plugins.read(path)
    X, y = experiment.values_of("reg", "metr")
    for x_value, y_value in ((30, 8), (90, 32)):
        rows = (X[:, 0] == x_value) & (X[:, 1] == y_value)
        assert model.predict({"x": x_value, "y": y_value}) == pytest.approx(y[rows].mean(), rel=0.1)


def test_json_export_writes_the_segments(host, shared_data):
    models = model_of(text_file(shared_data, "one_parameter_segmented_1.txt"))
    (document,) = json.loads(extrap_plugins.export(models, "json"))["models"]
    assert [s["range"] for s in document["segments"]] == [{"p": [1.0, 6.0]}, {"p": [6.0, 10.0]}]
    first, second = document["segments"]
    assert first["terms"][0]["factors"] == {"p": {"exponent": 2.0, "log_exponent": 0}}
    assert second["constant"] == pytest.approx(30.0) and second["terms"][0]["coefficient"] == pytest.approx(1.0)


def test_worker_processes_give_the_same_models(host, shared_data):
    experiment = extrap_plugins.read(text_file(shared_data, "one_parameter_segmented_4.txt"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        serial = extrap_plugins.model(experiment, "segmented", executor="serial")
        parallel = extrap_plugins.model(experiment, "segmented", executor="process", jobs=2)
    assert [m.formula for m in serial] == [m.formula for m in parallel]
    assert all(m.segments is not None for m in parallel)


@pytest.mark.parametrize("options, message", [
    ({"base": "segmented"}, "modeler 'segmented': base: the segmented modeler cannot wrap itself; "
                            "choose e.g. base=default"),
    ({"threshold": "high"}, "modeler 'segmented': threshold: expected a number, got 'high'"),
    ({"window": 4.5}, "modeler 'segmented': window: expected a whole number, got 4.5"),
    ({"base": "magic"}, "unknown modeler 'magic'; the modelers are: "),
])
def test_bad_options_say_what_was_expected(host, options, message):
    experiment = Experiment.from_columns(["p"], callpath="main", metric="time",
                                         coordinates=[[1], [2], [3], [4], [5], [6]], value=[1, 2, 3, 4, 5, 6])
    with pytest.raises(InputError) as error:
        extrap_plugins.model(experiment, "segmented", **options)
    assert str(error.value).startswith(message)


def test_the_command_line_prints_the_piecewise_formula(host, shared_data, capsys):
    path = text_file(shared_data, "one_parameter_segmented_4.txt")
    assert main(["model", str(path), "--modeler", "segmented", "--executor", "serial"]) == ExitStatus.OK
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [row.split()[0] for row in rows] == ["main", "main->comp"]
    assert all("for 1 ≤ p ≤ 6; 30 + 1 · p for 6 ≤ p ≤ 10" in row for row in rows)
    assert main(["model", str(path), "--modeler", "segmented", "--option", "ratio=1"]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == "extrap-plugins: error: modeler 'segmented': ratio: expected a number > 1, got 1.0\n"


def test_detect_changes_reports_per_series_with_any_base_modeler(host, shared_data):
    from extrap_plugins.modelers.segmented import detect_changes

    experiment = extrap_plugins.read(text_file(shared_data, "one_parameter_segmented_5.txt"))
    found = {(d.callpath, d.metric): d for d in detect_changes(experiment, "default")}
    assert list(found) == [("met1", "time"), ("met2", "time"), ("met1+2", "time")]
    assert not found[("met1", "time")].segmented and not found[("met2", "time")].segmented
    (change,) = found[("met1+2", "time")].changes  # about 4 up to p = 5000, then p/1000 - 1
    assert change.parameter == "p" and 4000 <= change.before <= change.after <= 5000


def test_the_base_modeler_is_found_on_the_host_the_caller_gave():
    from plugin_helpers import Mean

    class Plugin:
        @extrap_plugins.hookimpl
        def extrap_modelers(self):
            return [ModelerInfo("mean", Mean)]

    host = PluginHost(autoload=False)  # not the process-wide host: "mean" exists only here
    host.register(Plugin(), "mine", "my-dist")
    p = np.arange(1.0, 11.0)
    e = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=p[:, None],
                                value=np.where(p <= 6, 1.0, 5.0))
    (model,) = extrap_plugins.model(e, "segmented", host=host, base="mean", executor="serial")
    assert model.modeler == "segmented"
    assert [s.constant for s in model.segments] == [1.0, 5.0]


def test_the_model_choice_spread_is_the_last_segment_s(host):
    """The interval beyond the data is the last segment's (:class:`extrap_plugins.extrapolation.SegmentedUncertainty`),
    so the spread of the model choice that widens it is the last segment's fit's; it was left out (no spread)."""
    p = np.arange(1000.0, 11000.0, 1000.0)
    rng = np.random.default_rng(5)
    values = np.concatenate([np.full(5, 4.0), 10 + 0.01 * p[5:] ** 1.3]) * (1 + rng.uniform(-0.03, 0.03, 10))
    experiment = Experiment.from_columns(["p"], callpath="k", metric="time", coordinates=p[:, None], value=values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (model,) = extrap_plugins.model(experiment, "segmented", executor="serial")
        last = Experiment.from_columns(["p"], callpath="k", metric="time", coordinates=p[5:, None], value=values[5:])
        (alone,) = extrap_plugins.model(last, "default", executor="serial")
    assert model.segments[-1].range == {"p": (6000.0, 10000.0)}
    assert model.segments[-1].constant == pytest.approx(alone.constant, rel=1e-9)
    assert len(model.choice_spread) == 4 and model.choice_spread[-1] > 0
    np.testing.assert_allclose(model.choice_spread, alone.choice_spread, rtol=1e-9)
