"""A point of one run far off its neighbours and the model is left out of the fit (modelers/base.py,
PMNFModeler._leave_out_points): talpas_3's two 10x low values bent its model."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.plugins import PluginHost

from .conftest import experiment, grid

P = 4.0 * 2 ** np.arange(8)  # p = 4 ... 512, one run each
CLEAN = 2 + 0.05 * P ** 1.5 * (1 + np.array([0.02, -0.01, 0.03, -0.02, 0.01, -0.03, 0.02, -0.01]))
NOTE = ("a point 3x or more off its neighbours and the model of the others is left out of the fit (a slow node, a "
        "timer glitch? --option outlying_points=false keeps it): p={}")


def fitted(values, parameters=("p",), points=P[:, None], repetitions=1, **options):
    """The models of each series of ``values`` and the warnings' texts."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        models = extrap_plugins.model(experiment(parameters, points, values, repetitions), "default",
                                      host=PluginHost(autoload=False), **options)
    return {m.callpath: m for m in models}, [str(w.message) for w in caught]


def with_point(factor, at):
    values = CLEAN.copy()
    values[at] *= factor
    return values


def test_a_single_run_10x_off_is_left_out_and_said_once():
    models, said = fitted({"slow": with_point(10.0, 3), "short": with_point(0.2, 4), "clean": CLEAN})
    assert said == ["slow [time]: " + NOTE.format(32), "short [time]: " + NOTE.format(64)]
    for name in ("slow", "short"):
        assert models[name].points == 7
        assert models[name].warnings == (NOTE.format(32 if name == "slow" else 64),)
        # as without the point: 2 + 0.05 p^1.5 is 1640 at p = 1024
        assert models[name].predict([1024.0]) == pytest.approx(models["clean"].predict([1024.0]), rel=0.02)
    assert models["clean"].points == 8 and models["clean"].predict([1024.0]) == pytest.approx(1640.4, rel=0.01)


def test_the_option_keeps_every_point():
    models, said = fitted({"slow": with_point(10.0, 3)}, outlying_points="false")
    assert said == [] and models["slow"].points == 8
    assert models["slow"].predict([1024.0]) < 1200  # bent: 32 % low


@pytest.mark.parametrize("values", [
    np.where(P <= 64, 1.0, 10.0),  # a step of 10x between p = 64 and 128 (RELeARN's Update global tree)
    with_point(10.0, 7),           # the last point: the first of a new regime?
    with_point(10.0, 1),           # the second point: no two neighbours below it to judge it by
    with_point(2.5, 3),            # under 3x off
    np.where((P == 32) | (P == 64), 10.0, 1.0) * CLEAN,  # two points off together
])
def test_steps_ends_and_runs_of_points_stay(values):
    models, said = fitted({"main": values})
    assert models["main"].points == 8 and not any("left out of the fit" in text for text in said)


def test_points_of_three_runs_are_left_to_the_rule_of_runs():
    values = np.repeat(with_point(10.0, 3)[:, None], 3, axis=1).reshape(-1)  # three runs that agree: no glitch
    ex = extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time",
                                                coordinates=np.repeat(P, 3)[:, None], value=values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, = extrap_plugins.model(ex, "default", host=PluginHost(autoload=False))
    assert model.points == 8


def test_two_low_values_of_a_grid_are_left_out():
    """talpas_3 in small: x^3 y^2 + z on 5 x 5 points, two neighbours along y 10x low at x = 16."""
    X = grid([4, 8, 16, 32, 64], [100, 200, 300, 400, 500])
    values = X[:, 0] ** 3 * 4 + X[:, 1]
    low = (X[:, 0] == 16) & (X[:, 1] >= 400)
    values[low] /= 10
    models, said = fitted({"compute": values}, ("x", "z"), X)
    assert said == ["compute [time]: 2 points 3x or more off their neighbours and the model of the others are left "
                    "out of the fit (a slow node, a timer glitch? --option outlying_points=false keeps them): x=16, "
                    "z=400; x=16, z=500"]
    model = models["compute"]
    assert model.points == 23
    assert model.predict([128.0, 1000.0]) == pytest.approx(128**3 * 4 + 1000, rel=1e-6)


def test_a_point_without_a_value_is_said_apart():
    values = with_point(10.0, 3)
    values[6] = np.nan
    models, said = fitted({"main": values})
    assert said == ["main [time]: 1 of 8 points have no finite value (NaN or infinite) and were left out",
                    "main [time]: " + NOTE.format(32)]
    assert models["main"].points == 6
