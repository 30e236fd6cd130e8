"""Helpers for the modeler tests: experiments from known functions."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.plugins import PluginHost


def experiment(parameters, points, series, repetitions=1, noise=0.0, seed=0):
    """An Experiment with one call path per entry of ``series``.

    ``series`` maps a call path to a function of the columns (one array per
    parameter) or to an array of values, one per point.  With ``noise``, each
    repetition is multiplied by 1 + U(-noise, noise).
    """
    points = np.asarray(points, dtype=float).reshape(len(points), -1)
    rng = np.random.default_rng(seed)
    callpath, coordinates, value = [], [], []
    for name, function in series.items():
        clean = function(*points.T) if callable(function) else np.asarray(function, dtype=float)
        values = np.repeat(clean[:, None], repetitions, axis=1)
        values = values * (1.0 + rng.uniform(-noise, noise, size=values.shape))
        callpath += [name] * values.size
        coordinates.append(np.repeat(points, repetitions, axis=0))
        value.append(values.reshape(-1))
    return extrap_plugins.Experiment.from_columns(
        list(parameters), callpath=callpath, metric="time",
        coordinates=np.concatenate(coordinates), value=np.concatenate(value),
    )


def grid(*axes):
    return np.array(list(itertools.product(*axes)), dtype=float)


def model_quietly(experiment_, modeler="default", **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return extrap_plugins.model(experiment_, modeler, host=PluginHost(autoload=False), **options)


def factors(model):
    """The model's terms as a set of frozensets of (parameter, exponent, log exponent)."""
    return {
        frozenset((name, f.exponent, f.log_exponent) for name, f in term.factors.items())
        for term in model.terms
    }


@pytest.fixture
def builtin_host():
    return PluginHost(autoload=False)
