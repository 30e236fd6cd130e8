import copy
import dataclasses
import math

import numpy as np
import pytest

from extrap_plugins import Experiment, ExtrapWarning, Factor, InputError, Model, ModelSet, Segment, Term


def p_log_p():
    return Model("main->solve", "time", ("p",), 3.1, (Term(2.0, {"p": Factor(1, 1)}),))


def test_function_and_formula_text():
    m = p_log_p()
    assert m.function == "3.1 + 2.0 * p^1 * log2(p)^1"
    assert m.formula == "3.1 + 2 · p · log2(p)"
    cube_root = Model("a", "t", ("p", "n"), 1.5, (Term(-0.25, {"p": Factor(1 / 3, 0), "n": Factor(2, 2)}),))
    assert cube_root.function == "1.5 - 0.25 * p^0.3333333333333333 * n^2 * log2(n)^2"
    assert cube_root.formula == "1.5 - 0.25 · p^(1/3) · n^2 · log2(n)^2"


def test_predict_accepts_mapping_point_and_matrix():
    m = p_log_p()
    assert m.predict({"p": 8}) == pytest.approx(3.1 + 2 * 8 * 3)
    assert m.predict([16]) == pytest.approx(3.1 + 2 * 16 * 4)
    np.testing.assert_allclose(m.predict(np.array([[2.0], [4.0]])), [3.1 + 4, 3.1 + 16])
    np.testing.assert_allclose(m.predict({"p": [2, 4]}), [3.1 + 4, 3.1 + 16])  # one column per parameter


def two_parameters():
    return Model("main", "time", ("p", "n"), 1.0, (Term(2.0, {"p": Factor(0.5, 0), "n": Factor(1, 1)}),))


def raised(call) -> str:
    """The message of the InputError ``call`` raises (exactly that type, not a raw numpy or builtin error)."""
    with pytest.raises(InputError) as error:
        call()
    assert type(error.value) is InputError
    return str(error.value)


EXPECTED_POINT = ("predict: expected a point such as {'p': 64, 'n': 64}, a sequence of 2 numbers (p, n) or an "
                  "array of shape (n_points, 2); got ")


@pytest.mark.parametrize("point, message", [
    ({"p": 4}, "predict: the model of main [time] has the parameters (p, n); the point {'p': 4} has no value for n: "
               "give a value for each parameter and no other, such as {'p': 64, 'n': 64}"),
    ({"p": 4, "n": 10, "q": 1}, "predict: the model of main [time] has the parameters (p, n); the point {'p': 4, "
                                "'n': 10, 'q': 1} names 'q', which is not among them: give a value for each "
                                "parameter and no other, such as {'p': 64, 'n': 64}"),
    ({"p": "four", "n": 10}, "predict: the value of p must be a number (or a list of numbers), got the str 'four'"),
    ({"p": [4, 8], "n": [1, 2, 3]}, "predict: the parameters' values differ in shape (p has shape (2,), n has shape "
                                    "(3,)): give one value per point for every parameter, or arrays of one grid "
                                    "(numpy.meshgrid)"),
    (4, "predict: the model of main [time] has 2 parameters (p, n); got 1 value, the int 4: give one per parameter, "
        "or a mapping such as {'p': 64, 'n': 64}"),
    (None, EXPECTED_POINT + "None"),
    ("p=4,n=10", EXPECTED_POINT + "the str 'p=4,n=10'"),
    ([[1, 2, 3]], "predict: expected an array of shape (n_points, 2), one column per parameter (p, n); got shape "
                  "(1, 3)"),
])
def test_predict_refuses_a_point_that_does_not_fit_the_model_in_one_sentence(point, message):
    assert raised(lambda: two_parameters().predict(point)) == message


def test_predict_takes_columns_and_says_why_a_value_is_not_finite():
    m = two_parameters()
    np.testing.assert_allclose(m.predict({"p": [4, 16], "n": 2}), [1 + 2 * 2 * 2, 1 + 2 * 4 * 2])  # n for both
    with pytest.warns(ExtrapWarning) as caught:
        assert math.isnan(m.predict({"p": -4, "n": 2}))
    assert [str(w.message) for w in caught] == [
        "main [time]: the model is not finite at p=-4, n=2: p is not positive, and the model takes a logarithm or a "
        "power of it"]


# ------------------------------------------------------------ sets: look-up, indexing, printing
def stencil_models():
    return ModelSet(("p", "n"), [two_parameters(), Model("main", "bytes", ("p", "n"), 8.0),
                                 Model("main->solve", "time", ("p", "n"), 3.0)], modeler="default", source="s.jsonl")


def test_get_names_what_is_there_when_nothing_matches():
    models = stencil_models()
    assert models.get("main->solve", "time") is models.models[2]
    assert raised(lambda: models.get("mian", "time")) == "no model for call path 'mian' (metric 'time'); did you " \
                                                         "mean 'main'?"
    assert raised(lambda: models.get("zzz", "time")) == ("no model for call path 'zzz' (metric 'time'); the call "
                                                         "paths are main, main->solve")
    assert raised(lambda: models.get("main", "tme")) == "no model of metric 'tme' for call path 'main'; did you " \
                                                        "mean 'time'?"
    assert raised(lambda: models.get("main->solve", "bytes")) == ("no model of metric 'bytes' for call path "
                                                                  "'main->solve'; its metrics are time")


def test_a_model_set_is_a_sequence_of_models():
    models = stencil_models()
    assert models[0] is models.models[0] and models[-1] is models.models[2]
    assert models["main", "bytes"] is models.models[1]
    assert [m.metric for m in models[1:]] == ["bytes", "time"] and isinstance(models[1:], ModelSet)
    assert raised(lambda: models[3]) == "model 3 is out of range: the set has 3 models (0 to 2, or -1 for the last)"
    assert raised(lambda: models["main"]) == ("models['main']: a call path alone does not name one model; give the "
                                              "metric too (main has models of time, bytes: models['main', 'time'])")
    assert raised(lambda: models[1.5]) == ("a ModelSet is indexed by position (models[0]) or by call path and metric "
                                           "(models['main', 'time']); got the float 1.5")


def test_reprs_are_short_and_str_is_the_text_table():
    models = stencil_models()
    assert repr(models[2]) == "<Model main->solve [time]: 3>"
    assert repr(models) == "<ModelSet: 3 models of p, n by default from s.jsonl>"
    import io

    from extrap_plugins.exporters.text_exporter import export_text

    table = io.StringIO()
    export_text(models, table, {})
    assert str(models) == table.getvalue() and str(models).startswith("call path")
    assert "main->solve" in str(models) and "ModelSet(" not in str(models)


def test_expect_model_set_says_how_to_get_one():
    from extrap_plugins.models import expect_model_set

    experiment = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[1], [2]], value=[1, 2])
    assert raised(lambda: expect_model_set(experiment, "extrapolate")) == (
        "extrapolate: expected a ModelSet (from extrap_plugins.model), got an Experiment: model it first, "
        "extrap_plugins.model(experiment)")
    assert raised(lambda: expect_model_set("x.jsonl", "export")) == (
        "export: expected a ModelSet (from extrap_plugins.model), got the str 'x.jsonl': read and model it first, "
        "extrap_plugins.model(extrap_plugins.read(path))")


def test_segmented_model_predicts_with_the_right_segment():
    low = Segment({"p": (1, 64)}, 1.0, (Term(1.0, {"p": Factor(1, 0)}),))
    high = Segment({"p": (128, 1024)}, 100.0, ())
    m = Model("a", "t", ("p",), math.nan, segments=(low, high))
    np.testing.assert_allclose(m.predict(np.array([[2.0], [512.0], [4096.0]])), [3.0, 100.0, 100.0])
    assert m.formula == "1 + 1 · p for 1 ≤ p ≤ 64; 100 for 128 ≤ p ≤ 1024"
    wide = Model("a", "t", ("p",), math.nan, segments=(Segment({"p": (1, 524288)}, 1.0, ()),
                                                       Segment({"p": (1048576, 4194304)}, 2.0, ())))
    assert wide.formula == "1 for 1 ≤ p ≤ 524288; 2 for 1048576 ≤ p ≤ 4194304"  # values as given, not 1.04858e+06


# ------------------------------------------------------------ pandas and notebooks
def _linear_model_set():
    import extrap_plugins

    p = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    experiment = extrap_plugins.Experiment.from_columns(
        ["p"], callpath=["main"] * 5 + ["main->solve"] * 5, metric="time",
        coordinates=np.concatenate([p, p]).reshape(-1, 1), value=np.concatenate([1.0 + 3.0 * p, 3.0 * p]))
    return extrap_plugins.model(experiment)


def test_to_dataframe_one_row_per_model_with_values_and_intervals(host):
    pytest.importorskip("pandas", reason="pandas is not installed")
    models = _linear_model_set()
    frame = models.to_dataframe()
    assert list(frame["callpath"]) == ["main", "main->solve"]
    assert list(frame.columns[:6]) == ["callpath", "metric", "unit", "formula", "function", "growth"]
    assert "target" not in frame.columns
    assert frame.loc[1, "formula"] == "3 · p"
    assert frame.loc[1, "growth"] == "O(p)"
    assert frame.loc[0, "largest"] == pytest.approx(1.0 + 3.0 * 64)
    assert frame.loc[1, "points"] == 5
    at = models.to_dataframe(target={"p": 1024})
    assert at.loc[0, "target"] == pytest.approx(1.0 + 3.0 * 1024)
    assert at.loc[0, "lower"] <= at.loc[0, "target"] <= at.loc[0, "upper"]
    assert at.loc[1, "share_target"] == pytest.approx(3.0 * 1024 / (1.0 + 3.0 * 1024))
    assert at.attrs["target_point"] == {"p": 1024.0}


def test_html_in_notebooks(host):
    models = _linear_model_set()
    table = models._repr_html_()
    assert table.count("<tr>") == 3 and "<code>3 · p</code>" in table and "O(p)" in table
    single = models.models[1]._repr_html_()
    assert "<svg" in single and "<code>3 · p</code>" in single
    from extrap_plugins.notebook import model_html

    with_points = model_html(models.models[1], models.experiment)
    assert with_points.count("<circle") == 5


def _labels(svg):
    """The axis labels of a notebook curve: smallest and largest x, then largest and smallest y."""
    import re

    return re.findall(r">([-0-9.e+]+)</text>", svg)


def test_a_model_taken_from_its_set_shows_its_measurements_in_a_notebook(host):
    # models.get(...) was drawn over 1 ... 1024 with no measurements, and below 0 where never fitted
    models = _linear_model_set()
    for model in (models.get("main->solve", "time"), models[1], list(models)[1], models["main->solve", "time"],
                  models[1:][0]):
        shown = model._repr_html_()
        assert shown.count("<circle") == 5 and _labels(shown) == ["4", "96", "288", "12"]


def test_without_its_measurements_a_model_is_drawn_over_its_measured_range(host):
    import pickle

    models = _linear_model_set()
    model = models[1]
    again = pickle.loads(pickle.dumps(model))  # (no experiment travels with a model)
    assert again.function == model.function and again.measured_range == ((4.0, 64.0),) and again.non_negative
    shown = again._repr_html_()
    assert shown.count("<circle") == 0 and _labels(shown) == ["4", "96", "288", "12"]
    assert model == dataclasses.replace(model, measured_range=(), non_negative=None)  # equality as before
    assert "measured_range" not in repr(model) and copy.deepcopy(model).function == model.function
    import gc

    lone = _linear_model_set()[1]  # its set and the set's measurements are gone: a model keeps no experiment alive
    gc.collect()
    assert lone._repr_html_().count("<circle") == 0 and _labels(lone._repr_html_()) == ["4", "96", "288", "12"]
    assert "measured_range" not in repr(model) and copy.deepcopy(model).function == model.function
    unknown = Model("a", "t", ("p",), 1.0, (Term(2.0, {"p": Factor(1, 0)}),))
    assert _labels(unknown._repr_html_()) == ["1", "1024", "2049", "3"]  # nothing known: 1 ... 1024


def test_a_model_of_data_never_below_zero_is_not_drawn_below_zero(host):
    falling = Model("a", "t", ("p",), 10.0, (Term(-0.5, {"p": Factor(1, 0)}),), measured_range=((4.0, 64.0),),
                    non_negative=True)
    shown = falling._repr_html_()
    assert _labels(shown) == ["4", "96", "8", "0.2689"]  # the curve stops where it would fall below 0 (p = 20)
    assert shown.count("<polyline") == 1
    signed = Model("a", "t", ("p",), 10.0, (Term(-0.5, {"p": Factor(1, 0)}),), measured_range=((4.0, 64.0),))
    assert _labels(signed._repr_html_()) == ["4", "96", "8", "-38"]


def test_the_notebook_view_of_thickets_lulesh_model_shows_its_five_runs(host, shared_data):
    pytest.importorskip("caliperreader", reason="the caliper extra (caliper-reader) is not installed")
    import warnings

    import extrap_plugins

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = extrap_plugins.model(extrap_plugins.read(shared_data / "caliper" / "thicket" / "mpi_scaling_cali"),
                                      metrics=["Avg time/rank"])
    model = models.get("main->lulesh.cycle->LagrangeLeapFrog->LagrangeNodal->CalcForceForNodes->"
                       "CalcVolumeForceForElems->CalcHourglassControlForElems->CalcFBHourglassForceForElems",
                       "Avg time/rank")
    shown = model._repr_html_()
    assert shown.count("<circle") == 5 and _labels(shown)[:2] == ["27", "514.5"]
    assert all(float(label) >= 0 for label in _labels(shown)[2:])


def test_to_dataframe_has_the_unit_of_each_metric(host):
    pytest.importorskip("pandas", reason="pandas is not installed")
    import extrap_plugins
    from extrap_plugins.experiment import Metric

    p = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    experiment = extrap_plugins.Experiment.from_columns(
        ["p"], callpath="main", metric=["time"] * 5 + ["visits"] * 5, coordinates=np.r_[p, p][:, None],
        value=np.r_[p, 3 * p], metrics=[Metric("time", "sec", "time"), Metric("visits")])
    models = extrap_plugins.model(experiment)
    assert list(models.to_dataframe()["unit"]) == ["sec", ""]
    assert list(ModelSet(("p",), models.models).to_dataframe()["unit"]) == ["", ""]  # no experiment: unknown
    streamed = dataclasses.replace(models, experiment=None)  # a streamed set carries the metrics itself
    assert list(streamed.to_dataframe()["unit"]) == ["sec", ""]


def test_a_model_set_carries_its_metrics_with_or_without_its_experiment(host):
    import pickle

    import extrap_plugins
    from extrap_plugins.experiment import Metric

    time, visits = Metric("time", "sec", "time", "inclusive"), Metric("visits", kind="count")
    p = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    experiment = extrap_plugins.Experiment.from_columns(
        ["p"], callpath="main", metric=["time"] * 5 + ["visits"] * 5, coordinates=np.r_[p, p][:, None],
        value=np.r_[p, 3 * p], metrics=[time, visits])
    models = extrap_plugins.model(experiment)
    assert models.metrics == (time, visits) == models.known_metrics  # taken from the experiment
    assert models.metric("time") is time and models.metric("bytes") == Metric("bytes")  # unknown: nothing said
    streamed = ModelSet(models.parameters, models.models, models.modeler, models.options, metrics=(time, visits))
    assert streamed.metric("time").values == "inclusive" and streamed.known_metrics == (time, visits)
    # equality as before: the metrics are what is known of the models, as the experiment is, not compared
    assert streamed == models == dataclasses.replace(models, metrics=())
    assert repr(streamed) == repr(models) == "<ModelSet: 2 models of p by default>"
    again = pickle.loads(pickle.dumps(streamed))
    assert again.metrics == (time, visits) and [m.function for m in again] == [m.function for m in streamed]
    assert models[:1].metrics == (time, visits) and copy.deepcopy(streamed).metrics == (time, visits)
    # the experiment's metrics come first: what the measurements at hand say
    hinted = dataclasses.replace(experiment, metrics=[dataclasses.replace(time, values="exclusive"), visits])
    assert dataclasses.replace(streamed, experiment=hinted).metric("time").values == "exclusive"
    assert ModelSet(("p",), [], metrics=[time]).metrics == (time,)  # any sequence, kept as a tuple


# ------------------------------------------------------------ points with named columns (pandas)
def test_predict_takes_a_data_frame_or_series_by_its_column_names_not_their_order():
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    m = Model("main", "time", ("p", "n"), 1.0, (Term(2.0, {"p": Factor(1, 0)}), Term(3.0, {"n": Factor(2, 0)})))
    frame = pd.DataFrame({"n": [10.0, 20.0], "p": [4.0, 8.0]})  # columns in another order than the parameters
    np.testing.assert_allclose(m.predict(frame), [1 + 2 * 4 + 3 * 100, 1 + 2 * 8 + 3 * 400])
    assert m.predict(frame.iloc[1]) == 1 + 2 * 8 + 3 * 400  # one row: a float
    assert raised(lambda: m.predict(frame[["n"]])).startswith(
        "predict: the model of main [time] has the parameters (p, n); the point {'n': ")
    # a table's other columns (the measured values beside the parameters) are left aside (they were refused)
    np.testing.assert_allclose(m.predict(frame.assign(time=1.0)), m.predict(frame))
    np.testing.assert_allclose(m.predict(pd.DataFrame([[4.0, 10.0]])), [309.0])  # unnamed columns: by position


def test_predict_refuses_a_missing_value_rather_than_answering_nan():
    assert raised(lambda: two_parameters().predict({"p": None, "n": 10})) == (
        "predict: the value of p must be a number (or a list of numbers), got None")
    assert raised(lambda: two_parameters().predict({"p": [4, None], "n": 10})) == (
        "predict: the value of p must be a number (or a list of numbers), got the list [4, None]")


def test_a_pickled_model_and_model_set_equal_the_originals_with_nan_fields():
    # NaN equals nothing: a pickled copy's NaN validation and quality fields (new objects) made it unequal
    import pickle

    from extrap_plugins.models import Quality

    model = Model("main", "time", ("p",), 1.0, (Term(2.0, {"p": Factor(1, 0)}),),
                  quality=Quality(rss=float("nan"), ar2=np.float64("nan")), validation=np.nan)
    again = pickle.loads(pickle.dumps(model))
    assert again == model and hash(again.quality) == hash(model.quality)
    assert Model("main", "time", ("p",), 1.0, validation=float("nan")) == Model("main", "time", ("p",), 1.0)


def test_a_segment_of_one_value_reads_as_the_notes_say_it():
    # (it read "100 for 2 ≤ p ≤ 2"; the machine's text keeps both bounds)
    m = Model("main", "time", ("p",), math.nan, segments=(
        Segment({"p": (2.0, 2.0)}, 100.0, ()), Segment({"p": (4.0, 64.0)}, 0.0, (Term(2.0, {"p": Factor(1, 0)}),))))
    assert m.formula == "100 for p = 2; 2 · p for 4 ≤ p ≤ 64"
    assert m.function.startswith("100.0 for 2.0 <= p <= 2.0; ")


def test_predict_over_a_grid_of_numpy_meshgrid_gives_the_grid_s_shape():
    # (arrays of two dimensions were refused: "expected one number or a list of numbers per parameter")
    m = two_parameters()
    P, N = np.meshgrid([4.0, 8.0, 16.0], [1.0, 2.0])
    grid = m.predict({"p": P, "n": N})
    assert grid.shape == (2, 3)
    np.testing.assert_allclose(grid, m.predict({"p": P.ravel(), "n": N.ravel()}).reshape(2, 3))
