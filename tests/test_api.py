"""The Python API: reader selection, modelling, per-series adapter."""

import shutil
import types
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import InputError, ModelerInfo, ReaderInfo, cli, hookimpl
from extrap_plugins.engine import select_reader


def reader(name, patterns=(), sniff=None, directories=False):
    def read(path, options):
        return extrap_plugins.Experiment.from_columns(["p"], callpath=name, metric="time",
                                                      coordinates=[[1], [2]], value=[1.0, 2.0], source=str(path))

    return ReaderInfo(name, read, patterns=patterns, sniff=sniff, directories=directories)


def register(host, *infos):
    plugin = types.ModuleType("test_readers")
    plugin.extrap_readers = hookimpl(lambda: list(infos))
    host.register(plugin, "test_readers")


@pytest.fixture
def file(tmp_path):
    path = tmp_path / "run.dat"
    path.write_text("MAGIC 1\n")
    return path


def test_pattern_wins_when_one_reader_claims_the_name(host, file):
    register(host, reader("dat", patterns=("*.DAT",)), reader("other", sniff=lambda p: True))
    assert select_reader(file, host).name == "dat"


def test_sniffing_decides_between_readers_claiming_the_same_name(host, file):
    register(host, reader("a", ("*.dat",), sniff=lambda p: p.read_text().startswith("MAGIC")),
             reader("b", ("*.dat",), sniff=lambda p: False))
    assert select_reader(file, host).name == "a"


def test_several_matches_is_an_error_listing_them(host, file):
    register(host, reader("a", ("*.dat",), sniff=lambda p: True), reader("b", ("*.dat",), sniff=lambda p: True))
    with pytest.raises(InputError) as error:
        select_reader(file, host)
    assert str(error.value) == f"{file}: several readers can read this input (a, b); choose one with --reader"


def test_a_sniffer_that_raises_counts_as_no(host, file):
    def broken(path):
        raise RuntimeError("sniffer bug")

    register(host, reader("a", sniff=broken), reader("b", sniff=lambda p: True))
    assert select_reader(file, host).name == "b"


def test_folders_go_only_to_readers_that_take_folders(host, tmp_path):
    register(host, reader("files", sniff=lambda p: True), reader("folders", sniff=lambda p: True, directories=True))
    assert select_reader(tmp_path, host).name == "folders"


def test_a_reader_named_for_a_folder_must_take_folders(host, tmp_path):
    """``ReaderInfo.directories`` was honoured only when choosing a reader: named, a reader of one file got the
    folder, failed on it, and a third-party one took the blame (exit 3)."""
    register(host, reader("files"), reader("folders", directories=True))
    with pytest.raises(InputError) as refused:
        extrap_plugins.read(tmp_path, reader="files")
    assert str(refused.value) == f"{tmp_path}: is a folder; the files reader reads one file"
    assert extrap_plugins.read(tmp_path, reader="folders").callpaths[0].name == "folders"


def test_read_several_inputs_joins_them(host, tmp_path):
    register(host, reader("dat", ("*.dat",)))
    for name in ("a.dat", "b.dat"):
        (tmp_path / name).write_text("")
    experiment = extrap_plugins.read([tmp_path / "a.dat", tmp_path / "b.dat"])
    assert len(experiment) == 4 and experiment.repetition.tolist() == [0, 0, 0, 0]


def test_one_input_given_twice_is_refused_by_any_name(host, tmp_path):
    # its runs counted twice (as repetitions never run): the models and intervals moved, with no word
    register(host, reader("dat", ("*.dat",)))
    (tmp_path / "a.dat").write_text("")
    (tmp_path / "link.dat").symlink_to(tmp_path / "a.dat")
    for again in (tmp_path / "a.dat", tmp_path / "." / "a.dat", tmp_path / "link.dat"):
        with pytest.raises(InputError) as refused:
            extrap_plugins.read([tmp_path / "a.dat", again])
        assert str(refused.value) == (f"{again}: given twice (also as {tmp_path / 'a.dat'}): its measurements "
                                      "would count twice")


def test_a_run_inside_a_folder_also_given_is_refused(host, tmp_path):
    # a CUBE folder of runs and one of its runs, or a Caliper folder and one of its files: read twice
    register(host, reader("runs", sniff=lambda p: True, directories=True))
    run = tmp_path / "runs" / "p4.r1"
    run.mkdir(parents=True)
    for inputs in ([tmp_path / "runs", run], [run, tmp_path / "runs"]):
        with pytest.raises(InputError) as refused:
            extrap_plugins.read(inputs)
        assert str(refused.value) == f"{run}: inside {tmp_path / 'runs'}, also given: its measurements would count twice"


def test_an_empty_folder_is_said_to_be_empty(host, tmp_path):
    register(host, reader("runs", sniff=lambda p: False, directories=True))
    with pytest.raises(InputError) as refused:
        extrap_plugins.read(tmp_path)
    assert str(refused.value) == f"{tmp_path}: the folder is empty: no measurements to read"


def test_model_orders_models_as_the_experiment(host):
    p = np.array([1.0, 2, 4, 8, 16])
    e = extrap_plugins.Experiment.from_columns(
        ["p"], callpath=["z"] * 5 + ["a"] * 5 + ["z"] * 5, metric=["time"] * 10 + ["visits"] * 5,
        coordinates=np.r_[p, p, p][:, None], value=np.r_[p, 2 * p, 3 * p])
    models = extrap_plugins.model(e)
    assert [(m.callpath, m.metric) for m in models] == [("z", "time"), ("z", "visits"), ("a", "time")]
    assert models.experiment is not None and len(models.experiment) == 15


def test_unknown_measure_is_bad_input(host):
    e = extrap_plugins.Experiment.from_columns(["p"], callpath="a", metric="t", coordinates=[[1]], value=[1.0])
    with pytest.raises(InputError, match="unknown measure 'average'; expected one of mean, median, minimum, maximum"):
        extrap_plugins.model(e, measure="average")


def test_per_series_modeler_without_pmnf_uses_its_predict_and_formula(host):
    class Step:
        formula_ = "step at p = 4"

        def fit(self, X, y):
            self.low_, self.high_ = y[X[:, 0] < 4].mean(), y[X[:, 0] >= 4].mean()
            return self

        def predict(self, X):
            return np.where(X[:, 0] < 4, self.low_, self.high_)

    plugin = types.ModuleType("step")
    plugin.extrap_modelers = hookimpl(lambda: [ModelerInfo("step", Step)])
    host.register(plugin, "step")
    e = extrap_plugins.Experiment.from_columns(["p"], callpath="a", metric="t", coordinates=[[1], [2], [4], [8]],
                                               value=[1.0, 1.0, 5.0, 5.0])
    (m,) = extrap_plugins.model(e, "step")
    assert m.function == "step at p = 4" and m.quality.rss == 0.0
    assert m.predict({"p": 100}) == 5.0


def read_run(part, options):
    """A module-level read_part (workers import it by name)."""
    if "broken" in part.name:
        raise InputError("truncated file", part / "profile.dat")
    p = float(part.name.split(".p")[1])
    keep = [c for c in ("main", "main->solve") if not options["callpaths"] or c in options["callpaths"]]
    return extrap_plugins.Experiment.from_columns(
        ["p"], callpath=keep, metric="time", coordinates=[[p]] * len(keep), value=[p] * len(keep), source=str(part))


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_runs_are_read_in_parallel_and_a_broken_run_is_skipped_with_a_warning(host, tmp_path, executor):
    for name in ("app.p1", "app.p2", "app.broken", "app.p4"):
        (tmp_path / name).mkdir()
    info = ReaderInfo("runs", read=None, directories=True, sniff=lambda p: True, filters=True,
                      parts=lambda path, options: sorted(path.iterdir()), read_part=read_run)
    register(host, info)
    with pytest.warns(extrap_plugins.ExtrapWarning) as caught:
        experiment = extrap_plugins.read(tmp_path, callpaths=["main->solve"], executor=executor, jobs=2)
    assert [str(w.message) for w in caught] == [f"skipped: {tmp_path / 'app.broken' / 'profile.dat'}: truncated file"]
    assert sorted(experiment.coordinates[:, 0].tolist()) == [1.0, 2.0, 4.0]
    assert [c.name for c in experiment.callpaths] == ["main->solve"]


def test_a_run_is_read_with_the_garbage_collector_paused_and_it_resumes_after_errors():
    import gc

    from extrap_plugins import engine

    seen = []

    def read_part(part, options):
        seen.append(gc.isenabled())
        raise InputError("truncated file", part)

    result, error, caught = engine.read_one_part((read_part, "runs/r1/profile.cubex", {}))
    assert seen == [False] and gc.isenabled()
    assert result is None and str(error) == "runs/r1/profile.cubex: truncated file" and caught == []


# ------------------------------------------- runs that could not be read: said once per cause, or only by the error
def read_or_refuse(part, options):
    """A module-level read_part: ``app.<kind>.<x>`` is a run (``p<number>``) or one broken in a way of its own."""
    kind, where = part.name.split(".")[1], part / "profile.dat"
    if kind == "truncated":
        raise InputError("truncated file", where)
    if kind == "locked":  # the message repeats the file name: still one cause
        raise InputError(f"cannot open {where}: permission denied", where)
    if kind == "empty":
        raise InputError("the file is empty", where)
    p = float(kind[1:])
    return extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[p]], value=[p],
                                                  source=str(part))


def register_runs(host, folder, *names):
    for name in names:
        (folder / name).mkdir()
    register(host, ReaderInfo("runs", read=None, directories=True, sniff=lambda p: True,
                              parts=lambda path, options: sorted(path.iterdir()), read_part=read_or_refuse))


def read_recording(*args, **kwargs):
    """``(experiment or the InputError raised, every warning's text)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = extrap_plugins.read(*args, **kwargs)
        except InputError as error:
            result = error
    return result, [str(w.message) for w in caught]


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_skipped_runs_are_said_once_per_cause_naming_how_many_and_the_first(host, tmp_path, executor):
    register_runs(host, tmp_path, "app.p1", "app.p2", "app.p4", "app.truncated.a", "app.locked.a", "app.truncated.b",
                  "app.empty.a", "app.locked.b")
    experiment, said = read_recording(tmp_path, executor=executor, jobs=2)
    assert said == [
        f"skipped: {tmp_path / 'app.empty.a' / 'profile.dat'}: the file is empty",
        f"skipped 2 of the 8 runs for the same reason; the first: {tmp_path / 'app.locked.a' / 'profile.dat'}: "
        f"cannot open {tmp_path / 'app.locked.a' / 'profile.dat'}: permission denied",
        f"skipped 2 of the 8 runs for the same reason; the first: {tmp_path / 'app.truncated.a' / 'profile.dat'}: "
        "truncated file",
    ]
    assert sorted(experiment.coordinates[:, 0].tolist()) == [1.0, 2.0, 4.0]


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_when_no_run_could_be_read_the_error_alone_says_so(host, tmp_path, executor):
    register_runs(host, tmp_path, "app.truncated.a", "app.truncated.b", "app.empty.a")
    error, said = read_recording(tmp_path, executor=executor, jobs=2)
    assert said == []
    assert str(error) == (f"{tmp_path}: none of the 3 runs could be read; the first: "
                          f"{tmp_path / 'app.empty.a' / 'profile.dat'}: the file is empty")


LULESH_RUNS = ("27", "64", "125", "216", "343")
LULESH_KEYS = ("compilerversion, elapsed_time, figure_of_merit, iterations, {jobsize}, mpi.world.size, num_regions, "
               "numhosts, problem_size, region_balance, region_cost, spot.format.version, threads")


@pytest.fixture
def lulesh(shared_data, tmp_path):
    """A copy of Thicket's five LULESH Caliper runs (``mpi_scaling_cali``), to damage."""
    pytest.importorskip("caliperreader", reason="the caliper extra (caliper-reader) is not installed")
    folder = shared_data / "caliper" / "thicket" / "mpi_scaling_cali"
    if not folder.is_dir():
        pytest.skip(f"Thicket's Caliper data is not in {folder}")
    copy = tmp_path / "lulesh"
    copy.mkdir()
    for n in LULESH_RUNS:
        shutil.copy(folder / f"{n}_cores.cali", copy)
    return copy


def test_caliper_runs_missing_the_same_key_are_one_warning(host, lulesh):
    for n in ("64", "216"):
        run = lulesh / f"{n}_cores.cali"
        run.write_text(run.read_text().replace("jobsize", "jobsiz"))
    experiment, said = read_recording(lulesh, parameters="jobsize")
    assert [s for s in said if "skipped" in s] == [
        f"skipped 2 of the 5 runs for the same reason; the first: {lulesh / '216_cores.cali'}: no metadata key "
        f"'jobsize' in this run (its numeric keys: {LULESH_KEYS.format(jobsize='jobsiz')})"]
    assert sorted({tuple(p) for p in experiment.points().tolist()}) == [(27.0,), (125.0,), (343.0,)]


@pytest.mark.parametrize("stream", ["off", "on"])
def test_caliper_runs_none_of_which_has_the_key_are_one_error_line_and_no_warning(host, lulesh, capsys, stream):
    error, said = read_recording(lulesh, parameters="nope")
    first = (f"{lulesh}: none of the 5 runs could be read; the first: {lulesh / '125_cores.cali'}: no metadata key "
             f"'nope' in this run (its numeric keys: {LULESH_KEYS.format(jobsize='jobsize')})")
    assert (str(error), said) == (first, [])
    status = cli.main(["model", str(lulesh), "--reader-option", "parameters=nope", "--stream", stream])
    assert (status, capsys.readouterr().err.splitlines()) == (2, [f"extrap-plugins: error: {first}"])


# ------------------------------------------------- the user's mistakes, each one sentence
def raised(call) -> str:
    """The message of the InputError ``call`` raises (exactly that type, not a raw builtin error)."""
    with pytest.raises(InputError) as error:
        call()
    assert type(error.value) is InputError
    return str(error.value)


def two_series():
    p = np.array([1.0, 2, 4, 8, 16])
    return extrap_plugins.Experiment.from_columns(
        ["p"], callpath=["main"] * 10, metric=["time"] * 5 + ["bytes"] * 5, coordinates=np.r_[p, p][:, None],
        value=np.r_[p, 8 * p], source="two")


@pytest.mark.parametrize("path, got", [(42, "the int 42"), (None, "None"), (["a.csv", 3], "a list holding the int 3"),
                                       (b"a.csv", "the bytes b'a.csv'")])
def test_read_says_what_it_takes(host, path, got):
    assert raised(lambda: extrap_plugins.read(path)) == (
        f"read: expected a path (str or os.PathLike) or a list of paths, got {got}")


def test_model_takes_an_experiment_and_says_to_read_a_path_first(host):
    assert raised(lambda: extrap_plugins.model("examples/stencil.jsonl")) == (
        "model: expected an Experiment (from extrap_plugins.read), got the str 'examples/stencil.jsonl': read it "
        "first, extrap_plugins.model(extrap_plugins.read('examples/stencil.jsonl'))")
    assert raised(lambda: extrap_plugins.model(None)) == "model: expected an Experiment (from extrap_plugins.read), " \
                                                         "got None"
    models = extrap_plugins.model(two_series())
    assert raised(lambda: extrap_plugins.model(models)) == (
        "model: expected an Experiment (from extrap_plugins.read), got a ModelSet, which is modelled already (its "
        "measurements are ModelSet.experiment)")


def test_one_str_is_one_name(host, tmp_path):
    experiment = two_series()
    assert [m.metric for m in extrap_plugins.model(experiment, metrics="time")] == ["time"]
    assert len(extrap_plugins.model(experiment, callpaths="main")) == 2
    path = tmp_path / "two.csv"
    path.write_text("callpath,metric,p,value\n" + "".join(f"main,{m},{p},{p}\n" for m in ("time", "bytes")
                                                          for p in (1, 2, 4)))
    read = extrap_plugins.read(path, metrics="time")
    assert {read.metrics[i].name for i in read.metric_index} == {"time"} and len(read) == 3
    assert raised(lambda: extrap_plugins.model(experiment, metrics=["time", 3])) == (
        "metrics: expected names (str), got the int 3 among them")
    assert raised(lambda: extrap_plugins.model(experiment, callpaths=5)) == (
        "callpaths: expected a name or a list of names, got the int 5")


def test_export_takes_a_model_set(host, tmp_path):
    experiment = two_series()
    assert raised(lambda: extrap_plugins.export(experiment, "text")) == (
        "export: expected a ModelSet (from extrap_plugins.model), got an Experiment: model it first, "
        "extrap_plugins.model(experiment)")
    models = extrap_plugins.model(experiment)
    assert raised(lambda: extrap_plugins.export(models, "plot")) == (
        "exporter 'plot' writes files: give it an output path (the path argument)")


def test_an_exporter_gets_only_the_options_it_lists_and_those_of_every_exporter(host):
    """The host checked the option names of the built-in exporters only; a third-party one got any key."""
    given = []
    plugin = types.ModuleType("test_exporters")
    plugin.extrap_exporters = hookimpl(lambda: [extrap_plugins.ExporterInfo(
        "mine", lambda model_set, out, options: given.append(options), options={"digits": "decimal places"})])
    host.register(plugin, "test_exporters", distribution="mine-dist")
    models = extrap_plugins.model(two_series())
    assert raised(lambda: extrap_plugins.export(models, "mine", digitz=3)) == (
        "exporter 'mine' has no option 'digitz'; its options are: digits, and those of every exporter: target, sort, "
        "values, level")
    assert given == []  # refused before the exporter ran
    extrap_plugins.export(models, "mine", digits=3, target={"p": 64}, sort="target", level="90%", values="auto")
    assert given == [{"digits": "3", "target": "p=64", "sort": "target", "level": "90%", "values": "auto"}]


# ------------------------------------------------ warnings of the modelling: one per cause, naming every series
FEW = "parameter p has only 4 distinct values; at least 5 are needed for a trustworthy model"


def four_points(names, metric="time"):
    """Series of ``names`` measured at four values of p: each gets the quality warning :data:`FEW`."""
    p = np.array([1.0, 2.0, 4.0, 8.0])
    return extrap_plugins.Experiment.from_columns(
        ["p"], callpath=np.repeat(names, 4), metric=metric, coordinates=np.tile(p, len(names))[:, None],
        value=np.concatenate([(k + 1) * p + 3 for k in range(len(names))]))


def model_recording(experiment, *args, **kwargs):
    """``(models, every warning shown)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        models = extrap_plugins.model(experiment, *args, **kwargs)
    return models, [w.message for w in caught]


def test_a_quality_warning_of_many_series_is_one_warning_naming_the_first_and_counting_the_others(host):
    # 33 warnings for 2 causes in a notebook (Thicket's LULESH runs), one per series
    names = ["main"] + [f"main->r{k}" for k in range(1, 87)]
    models, said = model_recording(four_points(names), executor="serial")
    assert [str(w) for w in said] == [f"main [time] and 86 more series (their Model.warnings say it): {FEW}"]
    (warning,) = said
    assert isinstance(warning, extrap_plugins.QualityWarning)
    assert (warning.callpath, warning.metric, warning.message) == ("main", "time", FEW)
    assert warning.series == tuple((name, "time") for name in names)
    assert [m.warnings for m in models] == [(FEW,)] * 87  # every series keeps it


def test_a_warning_of_a_few_series_names_each_and_one_of_one_series_is_as_it_was(host):
    _, said = model_recording(four_points(["a", "b", "c"]))
    assert [str(w) for w in said] == [f"a [time], b [time] and c [time]: {FEW}"]
    _, said = model_recording(four_points(["a"]))
    assert [str(w) for w in said] == [f"a [time]: {FEW}"] and said[0].series == (("a", "time"),)


def test_series_of_one_cause_in_several_blocks_are_one_warning(host):
    from extrap_plugins.engine import CHUNK_SERIES

    names = [f"r{k}" for k in range(CHUNK_SERIES + 10)]  # two blocks
    _, said = model_recording(four_points(names), executor="serial")
    assert [str(w) for w in said] == [f"r0 [time] and {CHUNK_SERIES + 9} more series (their Model.warnings say it): "
                                      f"{FEW}"]
    assert len(said[0].series) == CHUNK_SERIES + 10


def test_warnings_of_a_per_series_modeler_are_one_per_cause_in_the_order_they_came(host):
    class Warn:
        def fit(self, X, y):
            warnings.warn("only 4 points", stacklevel=2)
            if y[-1] > 20:
                warnings.warn("steep", stacklevel=2)
            self.constant_, self.terms_ = float(y.mean()), []
            return self

        def predict(self, X):
            return np.full(len(X), self.constant_)

    plugin = types.ModuleType("warn")
    plugin.extrap_modelers = hookimpl(lambda: [ModelerInfo("warn", Warn)])
    host.register(plugin, "warn")
    _, said = model_recording(four_points(["a", "b", "c", "d", "e"]), "warn")
    assert [(type(w), str(w)) for w in said] == [
        (extrap_plugins.ExtrapWarning, "a [time] and 4 more series: only 4 points"),  # (no quality warning)
        (extrap_plugins.ExtrapWarning, "c [time], d [time] and e [time]: steep")]


def test_a_parameter_constant_in_every_measurement_is_said_once(host):
    # 46 warnings: the summary and a copy per series of "parameter problem_size has the single value 30"
    e = extrap_plugins.Experiment.from_columns(
        ["problem_size"], callpath=np.repeat(["main", "main->a", "main->b"], 3), metric="time",
        coordinates=[[30.0]] * 9, value=np.arange(9.0))
    models, said = model_recording(e)
    assert [str(w) for w in said] == ["problem_size = 30 in every measurement: every model is a constant, no model "
                                      "can show how anything grows; measure at several values"]
    assert [m.warnings for m in models] == [
        ("parameter problem_size has the single value 30: it cannot appear in the model",)] * 3


def test_a_parameter_constant_beside_one_that_varies_is_said_once_per_cause(host):
    p = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    e = extrap_plugins.Experiment.from_columns(
        ["p", "n"], callpath=np.repeat(["a", "b"], 5), metric="time",
        coordinates=np.column_stack([np.r_[p, p], np.full(10, 7.0)]), value=np.r_[p, 2 * p])
    _, said = model_recording(e)
    assert [str(w) for w in said] == ["a [time] and b [time]: parameter n has the single value 7: it cannot appear "
                                      "in the model"]


# --------------------------------------------------------------------------------- progress of reading
def test_reading_runs_reports_each_run_once_the_reader_has_listed_them(host, tmp_path):
    register_runs(host, tmp_path, "app.p1", "app.p2", "app.truncated.a", "app.p4")
    told = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the truncated run is skipped with a warning)
        extrap_plugins.read(tmp_path, executor="serial", progress=lambda done, more: told.append((done, more)))
    assert told == [(0, 4), (1, 0), (1, 0), (1, 0), (1, 0)]


def test_an_input_read_whole_is_one_piece_of_progress(host, file):
    register(host, reader("magic", patterns=("*.dat",)))
    told = []
    extrap_plugins.read(file, progress=lambda done, more: told.append((done, more)))
    assert told == [(0, 1), (1, 0)]


def test_read_and_model_report_where_following_says_when_not_given_progress(host, tmp_path):
    from extrap_plugins.engine import following

    register_runs(host, tmp_path, "app.p1", "app.p2", "app.p4", "app.p8", "app.p16")
    reading, modeling = [], []
    with following(reading=lambda *told: reading.append(told), modeling=lambda *told: modeling.append(told)):
        experiment = extrap_plugins.read(tmp_path, executor="serial")
        extrap_plugins.model(experiment, executor="serial")
    assert reading == [(0, 5)] + [(1, 0)] * 5
    assert modeling == [(0, 1), (1, 0)]
    told = []  # an explicit progress wins, and outside the block nothing is told
    extrap_plugins.model(experiment, progress=told.append)
    assert told == [1] and reading == [(0, 5)] + [(1, 0)] * 5 and modeling == [(0, 1), (1, 0)]
