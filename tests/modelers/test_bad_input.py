"""Bad input: a clear QualityWarning naming call path and metric, an honest model or none, no crash."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.errors import InputError, QualityWarning
from extrap_plugins.plugins import PluginHost

from .conftest import experiment, factors, grid


def model_with_warnings(e, modeler="default", **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        models = extrap_plugins.model(e, modeler, host=PluginHost(autoload=False), **options)
    quality = [w.message for w in caught if isinstance(w.message, QualityWarning)]
    return models, [(callpath, metric, w.message) for w in quality  # one warning per cause names all its series
                    for callpath, metric in getattr(w, "series", None) or [(w.callpath, w.metric)]]


def test_fewer_than_five_values_warn_and_still_give_an_honest_model():
    e = experiment(["p"], [2, 4, 8, 16], {"main": lambda p: 3 + 2 * p})
    (model,), caught = model_with_warnings(e)
    message = "parameter p has only 4 distinct values; at least 5 are needed for a trustworthy model"
    assert caught == [("main", "time", message)]
    assert model.warnings == (message,)
    assert factors(model) == {frozenset({("p", 1.0, 0.0)})}
    assert model.predict([100.0]) == pytest.approx(203.0)


def test_several_parameters_of_few_values_are_one_note(shared_data):
    # Score-P's multi_parameter set (x, y, z = 3 values each): three notes for the same 28 series, one a parameter
    e = extrap_plugins.read(str(shared_data / "cube" / "extrap" / "multi_parameter"), reader="cube")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        models = extrap_plugins.model(e, host=PluginHost(autoload=False), executor="serial")
    note = "parameters x, y and z have only 3, 3 and 3 distinct values; at least 5 are needed for a trustworthy model"
    assert all(m.warnings[0] == note for m in models.models)
    assert not any("distinct values" in w for m in models.models for w in m.warnings[1:])
    assert [str(w.message).count("distinct values") for w in caught if "distinct values" in str(w.message)] == [1]


@pytest.mark.parametrize("n_points, n_terms", [(3, 1), (2, 0), (1, 0)])
def test_very_few_points_limit_the_number_of_terms(n_points, n_terms):
    p = [2, 4, 8][:n_points]
    e = experiment(["p"], p, {"main": lambda p: 3 + 2 * p})
    (model,), caught = model_with_warnings(e)
    assert len(model.terms) <= n_terms
    assert all(np.isfinite(model.predict(np.array(p, dtype=float)[:, None])))
    if n_points > 1:
        assert any(f"only {n_points} distinct values" in m for _, _, m in caught)


def test_zero_and_negative_parameter_values_allow_no_logarithms():
    e = experiment(["t"], [-2, -1, 0, 1, 2, 3], {"main": lambda t: 5 + 2 * t**2})
    (model,), caught = model_with_warnings(e)
    assert [m for _, _, m in caught] == [
        "parameter t has values below 1 (smallest -2): no logarithmic terms for it",
        "parameter t has negative values (smallest -2): no fractional powers are tried for it, nor negative ones",
    ]
    assert factors(model) == {frozenset({("t", 2.0, 0.0)})}
    assert model.predict([10.0]) == pytest.approx(205.0)


def test_a_parameter_measured_at_zero_keeps_its_fractional_powers_and_the_note_says_so():
    """0^(1/2) is 0: only negative powers are lost (the note said 'only whole-number powers' beside p^(1/2))."""
    e = experiment(["p"], [0, 1, 2, 4, 8, 16], {"main": lambda p: 2 + 3 * np.sqrt(p)})
    (model,), caught = model_with_warnings(e)
    assert [m for _, _, m in caught] == [
        "parameter p has values below 1 (smallest 0): no logarithmic terms for it",
        "parameter p has the value 0: no negative powers are tried for it",
    ]
    assert factors(model) == {frozenset({("p", 0.5, 0.0)})}


def test_values_between_zero_and_one_use_powers_only():
    e = experiment(["f"], [0.125, 0.25, 0.5, 0.75, 1.0], {"main": lambda f: 1 + 4 * f**0.5})
    (model,), caught = model_with_warnings(e)
    assert [m for _, _, m in caught] == ["parameter f has values below 1 (smallest 0.125): no logarithmic terms for it"]
    assert factors(model) == {frozenset({("f", 0.5, 0.0)})}


def test_missing_values_are_left_out_with_a_warning():
    values = [2.0, 4.0, np.nan, 16.0, np.inf, 64.0]
    e = experiment(["p"], [1, 2, 4, 8, 16, 32], {"main": values})
    (model,), caught = model_with_warnings(e)
    assert caught[0] == ("main", "time", "2 of 6 points have no finite value (NaN or infinite) and were left out")
    assert model.points == 4
    assert model.predict([64.0]) == pytest.approx(128.0)


def test_a_series_without_finite_values_gets_no_model_and_says_so():
    e = experiment(["p"], [1, 2, 4, 8, 16], {"gone": [np.nan] * 5, "ok": [1.0, 2, 3, 4, 5]})
    models, caught = model_with_warnings(e)
    gone = models.get("gone", "time")
    assert math.isnan(gone.constant) and gone.terms == () and gone.points == 0
    # one warning for one cause (there were two: "5 of 5 points have no finite value ... and were left out")
    assert caught == [("gone", "time", "no finite values: no model can be made")]
    assert math.isnan(gone.predict({"p": 32}))  # without "the model is not finite at p=32" besides
    from extrap_plugins.extrapolation import growth_class
    assert growth_class(gone) is None  # it was "O(1)", in every export


def test_a_series_without_finite_values_is_said_once_on_the_command_line(tmp_path, capsys):
    from extrap_plugins.cli import main
    path = tmp_path / "nan.csv"
    path.write_text("callpath,metric,p,value\n" + "".join(f"f,time,{p},nan\ng,time,{p},{3 * p}\n"
                                                         for p in (2, 4, 8, 16, 32)))
    assert main(["model", str(path)]) == 0
    # (besides these, numpy's "Mean of empty slice", naming no series, and "f [time]: the model is not finite
    # at p=32")
    assert capsys.readouterr().err.splitlines() == [
        f"extrap-plugins: warning: {path}: 5 values are not finite numbers (nan, inf or beyond the range of a float) "
        "and are left out as missing: lines 2, 4, 6, 8, 10; series f [time]",
        "extrap-plugins: warning: f [time]: no finite values: no model can be made"]


def test_all_zero_series_is_the_zero_model_with_a_warning():
    e = experiment(["p"], [1, 2, 4, 8, 16], {"zero": [0.0] * 5})
    (model,), caught = model_with_warnings(e)
    assert caught == [("zero", "time", "all values are zero")]
    assert model.constant == 0.0 and model.terms == ()
    assert model.quality.rss == 0.0 and model.quality.ar2 == 1.0


def test_a_constant_series_is_a_constant_model_without_warning():
    e = experiment(["p"], [1, 2, 4, 8, 16], {"flat": [7.5] * 5})
    (model,), caught = model_with_warnings(e)
    assert caught == [] and model.function == "7.5" and model.terms == ()


def test_a_parameter_with_one_value_drops_out_with_a_warning():
    points = [(p, 10) for p in (1, 2, 4, 8, 16)]
    e = experiment(["p", "n"], points, {"main": lambda p, n: 1 + p * n})
    (model,), caught = model_with_warnings(e)
    assert caught == [("main", "time", "parameter n has the single value 10: it cannot appear in the model")]
    assert factors(model) == {frozenset({("p", 1.0, 0.0)})}
    assert model.predict([32.0, 10.0]) == pytest.approx(321.0)


def test_a_short_line_in_a_multi_parameter_design_is_reported():
    # p has five values, but with n fixed only three of them: no line of five.
    points = [(p, 1) for p in (1, 2, 4)] + [(p, 2) for p in (8, 16)] + [(1, n) for n in (2, 3, 4, 5)]
    e = experiment(["p", "n"], points, {"main": lambda p, n: 1 + p + n})
    models, caught = model_with_warnings(e)
    messages = {m for _, _, m in caught}
    assert "parameter p: the longest line with the other parameters fixed has only 3 values; at least 5 are needed for a trustworthy model" in messages


def test_exhaustive_refuses_three_parameters_with_a_clear_error():
    e = experiment(["a", "b", "c"], grid([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5]), {"f": lambda a, b, c: a + b + c})
    with pytest.raises(InputError, match=r"the exhaustive modeler searches at most 2 parameters; these series vary 3 \(a, b, c\): use the default modeler"):
        model_with_warnings(e, "exhaustive")


def test_warnings_for_a_group_name_every_series():
    e = experiment(["p"], [2, 4, 8, 16], {"a": lambda p: p, "b": lambda p: 2 * p})
    _, caught = model_with_warnings(e)
    assert sorted(c[0] for c in caught) == ["a", "b"]


@pytest.mark.parametrize("scale", [1e160, 1e100, 1e-40, 1e-200])
def test_values_of_any_magnitude_get_the_model_of_their_shape(scale):
    """Least squares squares the values: 1e100 gave a model with SMAPE 133 %, 1e160 '0 · p'.  Such series are fitted
    scaled by a power of two, so the model is the unit series' model times the scale."""
    p = [1, 2, 4, 8, 16, 32]
    e = experiment(["p"], p, {"main": lambda p: (3 + 2 * p) * scale}, repetitions=2, noise=0.01)
    unit = experiment(["p"], p, {"main": lambda p: 3 + 2 * p}, repetitions=2, noise=0.01)
    (model,), caught = model_with_warnings(e)
    (reference,), _ = model_with_warnings(unit)
    assert caught == []
    assert factors(model) == factors(reference) == {frozenset({("p", 1.0, 0.0)})}
    assert model.constant == pytest.approx(reference.constant * scale, rel=1e-12)
    assert model.terms[0].coefficient == pytest.approx(reference.terms[0].coefficient * scale, rel=1e-12)
    assert model.quality.smape == pytest.approx(reference.quality.smape, rel=1e-9)


def test_one_slow_repetition_is_left_out_of_the_mean_with_a_warning_naming_it():
    # 2 + 0.05·p^1.5 at p = 8...128, five repetitions ±3 %, the third at p = 32 ten times slower: the mean of all
    # five made the model 0.08546·p·log2(p), 47 % low at p = 1024
    p = np.repeat([8.0, 16.0, 32.0, 64.0, 128.0], 5)
    wobble = np.tile([1.0, 1.03, 0.97, 1.01, 0.99], 5)
    value = (2 + 0.05 * p ** 1.5) * wobble
    value[12] *= 10
    e = extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=p[:, None],
                                               value=value)
    (model,), caught = model_with_warnings(e)
    assert model.predict({"p": 1024}) == pytest.approx(2 + 0.05 * 1024 ** 1.5, rel=0.01)
    assert caught == [("main", "time", "a run 3x or more off the others at its point is left out of the mean (a "
                                       "slow node, a timer glitch? --measure median keeps every run): p=32, run 3 of 5")]
    (median,), said = model_with_warnings(e, measure="median")
    assert said == [] and median.predict({"p": 1024}) == pytest.approx(2 + 0.05 * 1024 ** 1.5, rel=0.01)
