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


def test_model_refuses_an_experiment_without_values(host):
    # before: a ModelSet of 0 models, without a word (a frame filtered down to no rows, say)
    empty = extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=np.zeros((0, 1)),
                                                   value=[])
    assert raised(lambda: extrap_plugins.model(empty)) == (
        "model: the experiment holds no measured values, so there is nothing to model; give Experiment.from_columns "
        "one row (a coordinate and a value) per measurement")


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


def test_progress_is_a_function_or_none(host, tmp_path):
    # before: a TypeError "'int' object is not callable" from inside the reading or the fitting
    path = tmp_path / "m.csv"
    path.write_text("callpath,metric,p,value\nmain,time,1,1\nmain,time,2,2\n")
    assert raised(lambda: extrap_plugins.read(path, progress=3)) == (
        "read: progress: expected a function, called as progress(done, more), or None; got the int 3")
    assert raised(lambda: extrap_plugins.model(linear(), progress="bar")) == (
        "model: progress: expected a function, called as progress(series), or None; got the str 'bar'")


def test_allow_read_only_no_keeps_a_read_only_file(host, tmp_path):
    # before: the str "no" was true, and the read-only file was replaced
    kept = tmp_path / "kept.json"
    kept.write_text("keep")
    kept.chmod(0o444)
    models = extrap_plugins.model(linear())
    with pytest.raises(InputError, match="is read-only; it is not replaced"):
        extrap_plugins.export(models, "json", kept, allow_read_only="no")
    assert kept.read_text() == "keep"
    assert raised(lambda: extrap_plugins.export(models, "json", tmp_path / "x.json", allow_read_only="maybe")) == (
        "allow_read_only (--overwrite-read-only): expected on or off (true/false, yes/no, 1/0), got 'maybe'")


def test_inputs_of_export_is_one_path_or_a_list_of_them(host, tmp_path):
    # before: one str was a list of one-letter inputs, "." among them ("inside the input folder ."), and an int a
    # TypeError
    models = extrap_plugins.model(linear())
    given = tmp_path / "given.json"
    assert raised(lambda: extrap_plugins.export(models, "json", given, inputs=str(given))) == (
        f"{given}: the output (-o) is an input: writing there would destroy the measurements; choose another file")
    extrap_plugins.export(models, "json", tmp_path / "out.json", inputs=str(given))
    assert (tmp_path / "out.json").exists()
    assert raised(lambda: extrap_plugins.export(models, "json", given, inputs=3)) == (
        "export: inputs: expected a path (str or os.PathLike) or a list of paths, got the int 3")


def test_names_may_be_the_experiments_own_metrics_and_callpaths(host):
    # before: "metrics: expected names (str), got a Metric among them" for what experiment.metrics holds
    experiment = extrap_plugins.Experiment.from_columns(
        ["p"], callpath=["main", "main->a"] * 5, metric="time", coordinates=np.repeat([1, 2, 4, 8, 16], 2),
        value=np.arange(10) + 1.0)
    (chosen,) = extrap_plugins.model(experiment, metrics=experiment.metrics[0], callpaths=experiment.callpaths[1:])
    assert (chosen.callpath, chosen.metric) == ("main->a", "time")


def test_a_data_frame_given_to_model_or_read_is_told_how_to_become_an_experiment(host):
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"p": [1, 2, 4], "time": [1.0, 2.0, 4.0]})
    advice = ("a pandas DataFrame (columns p, time): build an Experiment from its columns, extrap_plugins.Experiment."
              "from_columns(PARAMETER_NAMES, callpath=..., metric=..., coordinates=frame[PARAMETER_NAMES], "
              "value=frame[VALUE_COLUMN])")
    # before: "got the DataFrame    p  time\n0  1   1.0\n...", several lines and no way forward
    assert raised(lambda: extrap_plugins.model(frame)) == (
        f"model: expected an Experiment (from extrap_plugins.read), got {advice}")
    # before: its column names taken for paths, "p: no such file or folder"
    assert raised(lambda: extrap_plugins.read(frame)) == (
        f"read: expected a path (str or os.PathLike) or a list of paths, got {advice}")


def test_a_reader_option_given_as_a_list_is_its_comma_separated_names(host, tmp_path):
    # before: str(["p", "n"]), and "runs.csv:1: no column \"['p'\" (option parameters=)"
    path = tmp_path / "runs.csv"
    path.write_text("p,n,time,label\n" + "".join(f"{p},{n},{p * n},a\n" for p in (1, 2, 4) for n in (10, 20)))
    experiment = extrap_plugins.read(path, parameters=["p", "n"], value=("time",))
    assert experiment.parameter_names == ["p", "n"] and [m.name for m in experiment.metrics] == ["time"]
    assert extrap_plugins.read(path, parameters=np.array(["n"]), value="time").parameter_names == ["n"]


def test_an_option_given_as_none_is_not_given(host, tmp_path):
    # before: "target 'None': expected NAME=VALUE pairs ..." where extrapolate(models, None) has no target
    models = extrap_plugins.model(linear())
    assert extrap_plugins.export(models, "text", target=None, sort=None) == extrap_plugins.export(models, "text")
    path = tmp_path / "m.csv"
    path.write_text("callpath,metric,p,value\nmain,time,1,1\nmain,time,2,2\n")
    assert len(extrap_plugins.read(path, parameters=None)) == 2  # before: no column 'None'


def test_a_target_of_numpy_numbers_is_its_numbers(host):
    # before: "target 'p=np.float64(32.0)': p='np.float64(32.0)' is not a number" (the repr of a numpy 2 float)
    models = extrap_plugins.model(linear())
    assert extrap_plugins.export(models, "csv", target={"p": np.float64(32.0)}) == (
        extrap_plugins.export(models, "csv", target={"p": 32.0}))
