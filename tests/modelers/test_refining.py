"""The refining modeler: exponents found on continuous slices (seed 004)."""

from __future__ import annotations

import numpy as np
import pytest

from extrap_plugins.modelers.refining import STEP, refined_blocks

from .conftest import experiment, factors, grid, model_quietly

P7 = [4, 8, 16, 32, 64, 128, 256]


@pytest.mark.parametrize("function, expected", [
    (lambda p: 3 + p**1.3, ("p", 1.3, 0.0)),  # outside Extra-P's I
    (lambda p: 2 + np.log2(p) ** 1.5, ("p", 0.0, 1.5)),  # outside J
    (lambda p: 25.1 + 0.0011 * p**1.75, ("p", 1.75, 0.0)),
    (lambda p: 7 + 0.5 * p**2.2 * np.log2(p), ("p", 2.2, 1.0)),
])
def test_exponents_off_the_grid_are_found_to_the_refined_step(function, expected):
    e = experiment(["p"], P7, {"main": function})
    (model,) = model_quietly(e, "refining")
    ((found,),) = [tuple(f) for f in factors(model)]
    assert found[0] == expected[0]
    assert found[1] == pytest.approx(expected[1], abs=STEP) and found[2] == pytest.approx(expected[2], abs=STEP)
    assert model.predict([1024.0]) == pytest.approx(function(1024.0), rel=0.01)


def test_falling_exponents_are_refined_too():
    e = experiment(["p"], P7, {"main": lambda p: 1000 * p**-0.8})
    (model,) = model_quietly(e, "refining")
    assert model.constant == 0.0
    assert model.predict([4096.0]) == pytest.approx(1000 * 4096**-0.8, rel=0.01)


def test_several_parameters_are_combined():
    e = experiment(["p", "n"], grid([4, 8, 16, 32, 64], [10, 20, 30, 40, 50]),
                   {"main": lambda p, n: 5 + 0.3 * p**1.3 * n**0.6})
    (model,) = model_quietly(e, "refining")
    far = np.array([[256.0, 200.0]])
    assert model.predict(far)[0] == pytest.approx(5 + 0.3 * 256**1.3 * 200**0.6, rel=0.02)


def test_the_slices_cover_the_refined_exponents():
    blocks = refined_blocks()
    assert ((blocks[:, 0] == 1.3) | np.isclose(blocks[:, 0], round(1.3 / STEP) * STEP)).any()
    assert set(np.unique(blocks[blocks[:, 0] != 0, 1]).tolist()) == {0.0, 1.0, 2.0}
    assert blocks[blocks[:, 0] == 0, 1].min() == -3.0
