"""A modeler plugin's options as its users give them (``--option KEY=VALUE``, or keywords of ``model``)."""

from __future__ import annotations

import types

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import ModelerInfo, hookimpl
from extrap_plugins.errors import InputError
from extrap_plugins.plugins import PluginHost


class Scaled:
    """The mean of the values times ``factor``, plus ``offset``: two options without defaults."""

    def __init__(self, factor, *, offset):
        self.factor, self.offset = float(factor), float(offset)

    def fit(self, X, y):
        self.constant_, self.terms_ = float(np.mean(y)) * self.factor + self.offset, []
        return self

    def predict(self, X):
        return np.full(len(X), self.constant_)


@pytest.fixture
def host():
    host = PluginHost(autoload=False)
    plugin = types.ModuleType("scaling")
    plugin.extrap_modelers = hookimpl(lambda: [ModelerInfo("scaled", Scaled, options={"factor": "", "offset": ""})])
    host.register(plugin, "scaling", "scaling-dist")
    return host


EXPERIMENT = extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time",
                                                    coordinates=[[1], [2], [3]], value=[1.0, 2.0, 6.0])


@pytest.mark.parametrize("given, missing", [
    ({}, "the options 'factor' and 'offset': they have no default"),
    ({"factor": 2}, "the option 'offset': it has no default"),
])
def test_an_option_a_modeler_needs_and_was_not_given_is_named_as_the_users_to_give(host, given, missing):
    with pytest.raises(InputError) as caught:
        extrap_plugins.model(EXPERIMENT, "scaled", host=host, **given)
    assert str(caught.value) == f"modeler 'scaled' needs {missing}"


def test_a_modeler_given_every_option_it_needs_runs(host):
    (m,) = extrap_plugins.model(EXPERIMENT, "scaled", host=host, factor=2, offset=1)
    assert m.function == "7.0"
