"""Modeler options: stored by __init__, validated with messages that say what was expected."""

from __future__ import annotations

import pytest

import extrap_plugins
from extrap_plugins.errors import InputError
from extrap_plugins.modelers import DefaultModeler, ExhaustiveModeler, GoldenModeler
from extrap_plugins.plugins import PluginHost

from .conftest import experiment, factors, model_quietly


def test_init_stores_options_as_given():
    m = DefaultModeler(exponents="0,1,2", max_terms="1", negative_exponents="true")
    assert (m.exponents, m.max_terms, m.negative_exponents) == ("0,1,2", "1", "true")
    assert "exponents='0,1,2'" in repr(m)


@pytest.mark.parametrize("options, message", [
    ({"max_terms": 0}, "max_terms: expected a whole number from 1 to 4, got 0"),
    ({"max_terms": "two"}, "max_terms: expected a whole number from 1 to 4, got 'two'"),
    ({"negative_exponents": "maybe"}, "negative_exponents: expected on or off (true/false, yes/no, 1/0), got 'maybe'"),
    ({"criterion": "aic"}, "criterion: expected one of relative, smape, press, rss, got 'aic'"),
    ({"improvement": 1.5}, "improvement: expected a number from 0 up to (not including) 1, got 1.5"),
    ({"weighting": "log"}, "weighting: expected relative or none, got 'log'"),
    ({"measure": "mode"}, "measure: expected one of mean, median, minimum, maximum, got 'mode'"),
    ({"selection": "vote"}, "selection: expected evidence or cv, got 'vote'"),
    ({"exponents": "0", "log_exponents": "0"},
     "exponents and log_exponents: expected at least one non-zero exponent, got '0' and '0'"),
])
@pytest.mark.parametrize("factory", [DefaultModeler, ExhaustiveModeler, GoldenModeler])
def test_bad_options_fail_at_construction(factory, options, message):
    with pytest.raises(ValueError) as error:
        factory(**options)
    assert str(error.value) == message


def test_bad_options_through_the_api_are_input_errors():
    e = experiment(["p"], [1, 2, 4, 8, 16], {"main": lambda p: p})
    with pytest.raises(InputError, match=r"^modeler 'default': max_terms: expected a whole number from 1 to 4, got 9$"):
        extrap_plugins.model(e, host=PluginHost(autoload=False), max_terms=9)


def test_exponent_sets_from_the_command_line_restrict_the_search():
    e = experiment(["p"], [2, 4, 8, 16, 32], {"main": lambda p: 1 + p**1.5})
    (free,) = model_quietly(e)
    (restricted,) = model_quietly(e, exponents="0,1,2", log_exponents="0")
    assert factors(free) == {frozenset({("p", 1.5, 0.0)})}
    assert all(f.exponent in (1.0, 2.0) and f.log_exponent == 0 for t in restricted.terms for f in t.factors.values())


def test_negative_exponents_model_strong_scaling():
    e = experiment(["p"], [2, 4, 8, 16, 32, 64], {"main": lambda p: 3 + 120 / p})
    (model,) = model_quietly(e, negative_exponents=True)
    assert factors(model) == {frozenset({("p", -1.0, 0.0)})}
    assert model.predict([1024.0]) == pytest.approx(3 + 120 / 1024)


def test_max_terms_one_keeps_one_term():
    e = experiment(["p"], [2, 4, 8, 16, 32, 64], {"main": lambda p: 1 + p + p**2})
    (one,) = model_quietly(e, max_terms=1)
    (two,) = model_quietly(e)
    assert len(one.terms) == 1 and factors(two) == {frozenset({("p", 1.0, 0.0)}), frozenset({("p", 2.0, 0.0)})}


@pytest.mark.parametrize("measure, expected", [("mean", 2.0), ("median", 1.0), ("minimum", 0.5), ("maximum", 4.5)])
def test_the_measure_option_chooses_the_repetition_statistic(measure, expected):
    import numpy as np

    points = np.repeat([1.0, 2, 4, 8, 16], 3)
    values = np.tile([0.5, 1.0, 4.5], 5)
    e = extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time",
                                               coordinates=points[:, None], value=values)
    (model,) = model_quietly(e, measure=measure)
    assert model.constant == pytest.approx(expected) and model.terms == ()
