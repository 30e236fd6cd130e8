"""The Python API refuses a wrong argument with one InputError naming it, never a TypeError from deep inside."""

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import InputError


def raised(call) -> str:
    """The message of the InputError ``call`` raises (exactly that type, not a raw numpy or builtin error)."""
    with pytest.raises(InputError) as error:
        call()
    assert type(error.value) is InputError
    return str(error.value)


def linear(p=(1.0, 2.0, 4.0, 8.0, 16.0), parameters=("p",)):
    p = np.asarray(p, dtype=float)
    return extrap_plugins.Experiment.from_columns(list(parameters), callpath="main", metric="time",
                                                  coordinates=p.reshape(len(p), -1), value=np.arange(len(p)) + 1.0)


def test_model_refuses_a_parameter_value_that_is_not_finite_rather_than_fit_it(host):
    # before: a constant 3.5 (the point at p = nan sorted among the others), said nowhere
    assert raised(lambda: extrap_plugins.model(linear((1, 2, 4, 8, np.nan)))) == (
        "parameter 'p' has the value nan in 1 of 5 measurements; a parameter's values must be finite numbers")


def test_model_refuses_an_experiment_without_parameters(host):
    empty = extrap_plugins.Experiment.from_columns([], callpath="main", metric="time", coordinates=np.zeros((3, 0)),
                                                   value=[1.0, 2.0, 3.0])
    assert raised(lambda: extrap_plugins.model(empty)) == (
        "model: the experiment has no parameters, so there is nothing to model a value over; give "
        "Experiment.from_columns the parameter names and one coordinate column for each")


def test_model_says_the_modeler_is_a_name(host):
    assert raised(lambda: extrap_plugins.model(linear(), None)) == (
        "model: modeler: expected a modeler name such as 'default', got None")


@pytest.mark.parametrize("call", [
    lambda e: extrap_plugins.model(e, jobs="two"),
    lambda e: extrap_plugins.model(e, executor="process", jobs=0),
    lambda e: extrap_plugins.export(extrap_plugins.model(e), "text", jobs=1.5),
])
def test_jobs_is_a_whole_number_of_at_least_one(host, call):
    # named as the API and the command line name it (before: a TypeError for "two", "--jobs must be ..." for 0)
    assert raised(lambda: call(linear())).startswith("jobs (--jobs): expected a whole number of at least 1, got ")


def test_read_checks_its_executor_and_jobs_even_for_an_input_it_reads_whole(host, tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("callpath,metric,p,value\nmain,time,1,1\nmain,time,2,2\n")
    assert raised(lambda: extrap_plugins.read(path, executor="threads")) == (
        "unknown executor 'threads'; expected one of auto, serial, process, mpi")
    assert raised(lambda: extrap_plugins.read(path, jobs="x")) == "jobs (--jobs): expected a whole number of at least 1, got 'x'"


def test_validate_is_yes_or_no(host):
    assert raised(lambda: extrap_plugins.model(linear(), validate="maybe")) == (
        "validate (--validate): expected on or off (true/false, yes/no, 1/0), got 'maybe'")


def test_export_says_what_path_takes(host):
    models = extrap_plugins.model(linear())
    assert raised(lambda: extrap_plugins.export(models, "text", 3)) == (
        "export: path: expected a path (str or os.PathLike), or None for the text, got the int 3")
