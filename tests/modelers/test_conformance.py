"""One conformance suite, run over every registered modeler (third-party ones included).

In the spirit of scikit-learn's ``parametrize_with_checks``: each check is a
small contract every modeler must keep, whatever its method.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.engine import fit_any
from extrap_plugins.plugins import PluginHost

from .conftest import experiment, grid

REGISTERED = sorted(PluginHost().modelers)


def fit(name, e, **options):
    """All models of ``e`` with modeler ``name``, group by group, in group order."""
    modeler = PluginHost().build_modeler(name, options, tuple(e.parameter_names))
    models = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for group in e.series_groups():
            fitted = fit_any(modeler, group, "mean", name)
            assert len(fitted) == len(group)
            models.append((group, fitted))
    return models


def test_the_built_in_modelers_are_registered():
    assert {"default", "exhaustive", "golden"} <= set(REGISTERED)


@pytest.mark.parametrize("name", REGISTERED)
def test_declared_options_are_accepted_by_the_factory(name):
    host = PluginHost()
    info = host.modeler(name)
    parameters = inspect.signature(info.factory).parameters
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    assert accepts_any or set(info.options) <= set(parameters)
    host.build_modeler(name, {}, ("p",))  # every option has a default


@pytest.mark.parametrize("name", REGISTERED)
def test_recovers_a_known_single_parameter_function(name):
    truth = lambda p: 3.0 + 2.0 * p * np.log2(p)  # noqa: E731
    e = experiment(["p"], [2, 4, 8, 16, 32, 64], {"main": truth})
    ((_, (model,)),) = fit(name, e)
    far = np.array([[1024.0], [4096.0]])
    np.testing.assert_allclose(model.predict(far), truth(far[:, 0]), rtol=1e-6)


@pytest.mark.parametrize("name", REGISTERED)
def test_recovers_a_known_two_parameter_function(name):
    truth = lambda p, n: 1.5 + 0.25 * p**0.5 * n  # noqa: E731
    e = experiment(["p", "n"], grid([4, 8, 16, 32, 64], [10, 20, 30, 40, 50]), {"main": truth})
    ((_, (model,)),) = fit(name, e)
    far = np.array([[256.0, 100.0], [1024.0, 60.0]])
    np.testing.assert_allclose(model.predict(far), truth(*far.T), rtol=1e-6)


@pytest.mark.parametrize("name", REGISTERED)
def test_returns_one_model_per_series_in_order(name):
    e = experiment(
        ["p"], [1, 2, 4, 8, 16],
        {"b": lambda p: 5 + p, "a": lambda p: 2 * p**2, "c->d": lambda p: 7 + 0 * p},
    )
    ((group, models),) = fit(name, e)
    assert [(m.callpath, m.metric) for m in models] == [(c.name, m.name) for c, m in group.keys]
    assert [m.parameters for m in models] == [("p",)] * 3


@pytest.mark.parametrize("name", REGISTERED)
def test_series_with_missing_or_infinite_values_get_a_model_each(name):
    values = {
        "clean": [2.0, 4.0, 8.0, 16.0, 32.0, 64.0],
        "one nan": [2.0, 4.0, np.nan, 16.0, 32.0, 64.0],
        "one inf": [2.0, 4.0, 8.0, np.inf, 32.0, 64.0],
        "all nan": [np.nan] * 6,
    }
    e = experiment(["p"], [1, 2, 4, 8, 16, 32], values)
    models = {m.callpath: m for _, fitted in fit(name, e) for m in fitted}
    assert set(models) == set(values)
    for key in ("clean", "one nan", "one inf"):
        assert models[key].predict([64.0]) == pytest.approx(128.0, rel=1e-6)


@pytest.mark.parametrize("name", REGISTERED)
def test_constant_and_all_zero_series_get_constant_models(name):
    e = experiment(["p"], [1, 2, 4, 8, 16], {"flat": [42.0] * 5, "zero": [0.0] * 5})
    models = {m.callpath: m for _, fitted in fit(name, e) for m in fitted}
    assert models["flat"].predict([1e6]) == pytest.approx(42.0)
    assert models["zero"].predict([1e6]) == 0.0


@pytest.mark.parametrize("name", REGISTERED)
def test_is_deterministic(name):
    e = experiment(["p"], [4, 8, 16, 32, 64], {"noisy": lambda p: 10 + p**1.5}, repetitions=3, noise=0.05)
    first = [m.function for _, fitted in fit(name, e) for m in fitted]
    second = [m.function for _, fitted in fit(name, e) for m in fitted]
    assert first == second


@pytest.mark.parametrize("name", REGISTERED)
def test_runs_through_the_public_api_with_quality_figures(name):
    e = experiment(["p"], [4, 8, 16, 32, 64], {"main": lambda p: 1 + p}, repetitions=2, noise=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = extrap_plugins.model(e, name, host=PluginHost())
    (model,) = models
    assert model.modeler == name
    assert np.isfinite([model.quality.rss, model.quality.ar2, model.quality.smape, model.quality.re]).all()
    assert model.points == 5
