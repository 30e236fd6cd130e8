"""A multi-parameter model that leaves out a parameter along whose line the values clearly trend says so
(the one-parameter selection's note, ``unexplained_trend_note``, was its only home)."""

from __future__ import annotations

import warnings

import numpy as np

import extrap_plugins
from extrap_plugins.errors import QualityWarning
from extrap_plugins.modelers.base import unexplained_trend_note
from extrap_plugins.plugins import PluginHost

from .conftest import experiment, grid


def _model_and_warnings(experiment_):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        models = extrap_plugins.model(experiment_, host=PluginHost(autoload=False))
    return models, [str(w.message) for w in caught if issubclass(w.category, QualityWarning)]


def test_strong_scaling_two_parameters_constant_says_both_trends(shared_data):
    # x = 20 ... 60 by y = 1 ... 5: rising with x, falling to 1.0 at y = 5; every combination is ruled out and the
    # model is the mean (SMAPE 91 %), which said nothing before
    path = shared_data / "extrap" / "text" / "strong_scaling" / "two_parameter_1.txt"
    (model,), messages = _model_and_warnings(extrap_plugins.read(str(path)))
    assert model.terms == ()
    assert round(model.constant, 1) == 498.4
    assert model.warnings == (
        "the values rise 8.88-fold from x=20 to x=60 (111.8 to 993.1, the mean of 5 lines along x), but the model "
        "is the constant: no hypothesis that describes them is plausible",
        "the values fall 836-fold from y=1 to y=5 (835.2 to 0.9989, the mean of 5 lines along y), but the model "
        "is the constant: no hypothesis that describes them is plausible",
    )
    assert messages == [f"reg [metr]: {note}" for note in model.warnings]


def test_a_model_of_both_parameters_gets_no_trend_note():
    e = experiment(["p", "n"], grid([64, 128, 256, 512, 1024], [10, 20, 30, 40, 50]),
                   {"work": lambda p, n: 3.0 * n / p + 0.5})
    (model,), messages = _model_and_warnings(e)
    assert {name for term in model.terms for name in term.factors} == {"p", "n"}
    assert model.warnings == ()
    assert messages == []


def test_a_single_line_says_where_it_lies(shared_data):
    # Extra-P's mpa/2_param_base3.txt: a line of p at n = 6000 and one of n at p = 32 (two repetitions that agree
    # to 0.5 %), the mean 626.1 for both
    path = shared_data / "extrap" / "text" / "mpa" / "2_param_base3.txt"
    (model,), _ = _model_and_warnings(extrap_plugins.read(str(path)))
    assert model.terms == ()
    assert model.warnings[-2:] == (
        "the values rise 1.41-fold from p=32 to p=256 (509.8 to 717.2 at n=6000), but the model is the constant: "
        "no hypothesis that describes them is plausible",
        "the values rise 1.78-fold from n=5000 to n=9000 (406 to 722.9 at p=32), but the model is the constant: "
        "no hypothesis that describes them is plausible",
    )


def test_the_note_of_a_parameter_left_out():
    assert unexplained_trend_note(np.array([20.0, 40, 60]), np.array([112.0, 443, 993]), "x", " at y=3", False) == (
        "the values rise 8.87-fold from x=20 to x=60 (112 to 993 at y=3), but the model leaves x out: no hypothesis "
        "that describes them is plausible")


def test_no_trend_note_without_repetitions():
    # noise of 40 % about 5, one repetition: the mean of the six lines along n falls 5.675 -> 4.382, a trend against
    # the line's own closest fit, but not against the 36 points the combination judged
    rng = np.random.default_rng(5)
    values = [np.round(5.0 * (1 + rng.uniform(-0.4, 0.4, 36)), 2) for _ in range(12)][-1]
    e = experiment(["p", "n"], grid([4, 8, 16, 32, 64, 128], [10, 20, 40, 80, 160, 320]), {"s": values})
    (model,), messages = _model_and_warnings(e)
    assert model.terms == ()
    assert round(model.constant, 3) == 4.893
    assert model.warnings == ()
    assert messages == []


def test_a_model_that_leaves_a_trending_parameter_out_says_so(shared_data):
    # Extra-P's cross_matrix_2p.jsonl: a cross of lines at x = 60 and y = 3; the model has x alone (adjusted R² 0.41)
    (model,), _ = _model_and_warnings(extrap_plugins.read(str(shared_data / "extrap" / "jsonlines" /
                                                               "cross_matrix_2p.jsonl")))
    assert {name for term in model.terms for name in term.factors} == {"x"}
    assert model.warnings == (
        "the values rise 1.46-fold from y=1 to y=5 (1138 to 1656 at x=60), but the model leaves y out: no hypothesis "
        "that describes them is plausible",)


def test_one_point_of_a_single_run_keeps_the_trend_notes(shared_data):
    # The same file with four of the five repetitions of x = 20, y = 4 left out: a design that repeats some
    # points only.  That point's variance is unknown, and with it (NaN x 0 in the projection) the noise of every
    # line: both notes were dropped and the mean stood without a word.
    path = shared_data / "extrap" / "text" / "strong_scaling" / "two_parameter_1.txt"
    full = extrap_plugins.read(str(path))
    X = full.coordinates
    keep = ~(np.all(X == [20.0, 4.0], axis=1) & (full.repetition > 0))
    assert keep.sum() == X.shape[0] - 4
    e = extrap_plugins.Experiment.from_columns(["x", "y"], callpath="reg", metric="metr", coordinates=X[keep],
                                               value=full.value[keep], repetition=full.repetition[keep])
    (model,), messages = _model_and_warnings(e)
    assert model.terms == ()
    assert model.warnings == (
        "the values rise 8.86-fold from x=20 to x=60 (112 to 993.1, the mean of 5 lines along x), but the model "
        "is the constant: no hypothesis that describes them is plausible",
        "the values fall 836-fold from y=1 to y=5 (835.2 to 0.9989, the mean of 5 lines along y), but the model "
        "is the constant: no hypothesis that describes them is plausible",
    )
    assert messages == [f"reg [metr]: {note}" for note in model.warnings]


def test_values_falling_in_a_straight_line_towards_zero_are_said_to_fall_not_to_scatter():
    # 207 - 1.5 p, measured 3 times at p = 2 ... 64 (1 % noise): every fit that follows them reaches 0 at p = 138
    # and is ruled out; the model worse than the mean is the mean, and the note said the values "jump or scatter"
    rng = np.random.default_rng(2)
    p = np.repeat([2.0, 4, 8, 16, 32, 64], 3)
    values = (207 - 1.5 * p) * (1 + rng.uniform(-0.01, 0.01, p.size))
    e = extrap_plugins.Experiment.from_columns(["p"], callpath="k", metric="time", coordinates=p[:, None],
                                               value=values)
    (model,), messages = _model_and_warnings(e)
    assert model.terms == ()
    assert model.warnings[0] == ("the values fall 1.83-fold from p=2 to p=64 (203.8 to 111.6), but the model is the "
                                 "constant: no hypothesis that describes them is plausible")
    assert model.warnings[1].startswith("the 34 hypotheses that fit the measurements clearly better predict 0 or less")
    assert not any("jump or scatter" in note for note in model.warnings)
    assert messages == [f"k [time]: {note}" for note in model.warnings]
