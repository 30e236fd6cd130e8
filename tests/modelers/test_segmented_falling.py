"""The ``segmented`` modeler on falling series (strong scaling): windows may use the falling factors."""

import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.experiment import Experiment

P = 2.0 ** np.arange(1, 12)  # 2 … 2048


def model_of(values, strict=True, **options):
    experiment = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=P[:, None],
                                         value=values)
    with warnings.catch_warnings():
        warnings.simplefilter("error" if strict else "ignore")  # a smooth series gets no note
        (model,) = extrap_plugins.model(experiment, "segmented", executor="serial", **options)
    return model


def test_strong_scaling_is_not_cut(host):
    model = model_of(5 + 1000 / P)
    assert model.segments is None
    assert model.formula == "5 + 1000 · p^-1"
    assert model.warnings == ()
    assert extrap_plugins.detect_changes(
        Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=P[:, None],
                                value=5 + 1000 / P))[0].changes == ()


def test_a_jump_in_a_falling_series_is_found_where_it_is(host):
    model = model_of(np.where(P <= 64, 1000 / P, 2000 / P))
    assert [dict(s.range) for s in model.segments] == [{"p": (2.0, 64.0)}, {"p": (128.0, 2048.0)}]
    assert model.formula == "1000 · p^-1 for 2 ≤ p ≤ 64; 2000 · p^-1 for 128 ≤ p ≤ 2048"
    assert model.predict({"p": 4096}) == pytest.approx(2000 / 4096)


def test_the_user_keeps_the_window_space_he_chose(host):
    # window_negative_exponents=False is the paper's space: a falling window then has no one-term fit
    model = model_of(5 + 1000 / P, strict=False, window_negative_exponents=False)
    assert model.segments is not None
