"""Streaming: the same models as in memory, bit for bit, without rank 0 ever holding the values."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import pickle
import shutil
import types
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import InputError, ModelerInfo, ReaderInfo, cli, executors, hookimpl, streaming
from extrap_plugins.engine import CHUNK_SERIES
from extrap_plugins.extrapolation import extrapolate
from plugin_helpers import Mean, fake_distribution, installed  # noqa: F401
from plugin_helpers import cli as run_command

P = (2.0, 4.0, 8.0, 16.0, 32.0)
MANY = CHUNK_SERIES // 2 + 50  # call paths: x 2 metrics, more series than one block holds


def json_of(model_set) -> str:
    return extrap_plugins.export(model_set, "json")


def quietly(function, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args, **kwargs)
    return result, [str(w.message) for w in caught]


# ------------------------------------------- a reader of synthetic runs
def sweep_parts(path, options):
    """Runs ``p<P>.r<rep>``; a run named in the folder's ``broken`` file fails."""
    return [f"{path}/p{p:g}.r{r}" for p in P for r in range(2)]


def read_sweep_part(part, options):
    """One run: every call path at one point, metrics ``time`` and ``visits``.

    Call paths are listed in a run-dependent order and ``visits`` is missing
    for some call paths in some runs, so joining must follow first-seen order
    and blocks must cope with gaps.
    """
    name = os.path.basename(part)
    if os.path.exists(os.path.join(os.path.dirname(part), "broken")) and name == "p8.r1":
        raise InputError("truncated run", part)
    p, r = float(name[1:].split(".r")[0]), int(name.split(".r")[1])
    rng = np.random.default_rng(int(p) * 10 + r)
    n = int(pathlib.Path(part).with_name("size").read_text())
    index = np.arange(n)
    a, b = 1 + index % 7, 0.01 * (1 + index % 5)
    time = a + b * p * np.log2(p) * rng.uniform(0.99, 1.01, n)
    visits = np.round(3 + (index % 4) * p)
    keep_visits = (index + int(p)) % 3 != 0
    if pathlib.Path(part).with_name("complete").exists():  # no gaps: every series at every point
        keep_visits[:] = True
    names = np.array([f"main->k{i}" for i in index], dtype=object)
    if r == 1 and not pathlib.Path(part).with_name("forward").exists():  # the second repetition lists them backwards
        names, time, visits, keep_visits = names[::-1], time[::-1], visits[::-1], keep_visits[::-1]
    callpath = np.concatenate([names, names[keep_visits]])
    metric = ["time"] * n + ["visits"] * int(keep_visits.sum())
    return extrap_plugins.Experiment.from_columns(
        ["p"], callpath=callpath, metric=metric, coordinates=np.full((callpath.size, 1), p),
        value=np.concatenate([time, visits[keep_visits]]), repetition=np.full(callpath.size, r), source=part)


@pytest.fixture
def sweep(host, tmp_path):
    info = ReaderInfo("sweep", read=None, directories=True, sniff=lambda p: True, parts=sweep_parts,
                      read_part=read_sweep_part)
    plugin = types.ModuleType("sweep_reader")
    plugin.extrap_readers = hookimpl(lambda: [info])
    host.register(plugin, "sweep_reader")
    (tmp_path / "size").write_text("300")
    return tmp_path


@pytest.fixture
def cube(shared_data):
    pytest.importorskip("pycubexr")
    return shared_data / "cube" / "extrap"


# ------------------------------------------------------------- identity
@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_generic_reader_streams_to_the_same_models_as_in_memory(sweep, tmp_path, executor):
    (sweep / "size").write_text(str(MANY))
    in_memory = json_of(extrap_plugins.model(extrap_plugins.read(sweep, executor=executor, jobs=2),
                                             executor=executor, jobs=2))
    models = streaming.stream_models(sweep, executor=executor, jobs=2, scratch=tmp_path)
    assert json_of(models) == in_memory
    assert [(m.callpath, m.metric) for m in models][:3] == [("main->k0", "time"), ("main->k0", "visits"),
                                                            ("main->k1", "time")]
    assert len(models) == 2 * MANY and models.experiment is None
    assert models.get("main->k5", "time").predict({"p": 64}) == pytest.approx(6 + 0.01 * 64 * 6, rel=0.02)


def test_selection_by_metric_and_call_path_streams_like_in_memory(sweep, tmp_path):
    read = extrap_plugins.read(sweep, metrics=["visits"], callpaths=["main->k1*"], executor="serial")
    in_memory = json_of(extrap_plugins.model(read, executor="serial"))
    streamed = json_of(streaming.stream_models(sweep, metrics=["visits"], callpaths=["main->k1*"],
                                               executor="serial", scratch=tmp_path))
    assert streamed == in_memory
    assert '"metric": "time"' not in streamed and '"callpath": "main->k2"' not in streamed


@pytest.mark.parametrize("folder", ["single_parameter", "multi_parameter", "simple_threaded", "allowed_formats",
                                    "extra_file", "extra_folder"])
def test_cube_sets_stream_to_the_same_json_as_in_memory(host, cube, tmp_path, folder):
    in_memory, warned = quietly(lambda: json_of(extrap_plugins.model(
        extrap_plugins.read(cube / folder, executor="serial"), executor="serial")))
    streamed, warned_streamed = quietly(lambda: json_of(streaming.stream_models(cube / folder, executor="serial",
                                                                                scratch=tmp_path)))
    assert streamed == in_memory and warned_streamed == warned


def modelled_both_ways(path, tmp_path):
    """``(in memory, streamed)``, each ``((parameters, JSON) or the InputError's text, every warning's text)``."""
    def run(function):
        try:
            models = function()
        except InputError as error:
            return str(error)
        return models.parameters, json_of(models)

    return (quietly(run, lambda: extrap_plugins.model(extrap_plugins.read(path, executor="serial"),
                                                      executor="serial")),
            quietly(run, lambda: streaming.stream_models(path, executor="serial", scratch=tmp_path)))


ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("path, parameters", [
    (ROOT / "examples" / "codesign" / "runs", ("p", "n")),  # the instrument reader's folder of JSONL runs
    ("extrap/experiments/two_parameter3.txt.extra-p", ("x", "y")),  # Extra-P's formats: files, no folder reader
    ("extrap/input/experiment_3", ("p",)),
    ("extrap/text", "no reader recognises this input"),
])
def test_other_real_inputs_stream_as_in_memory(host, shared_data, tmp_path, path, parameters):
    path = shared_data / path if isinstance(path, str) else path
    in_memory, streamed = modelled_both_ways(path, tmp_path)
    assert streamed == in_memory
    result, _ = streamed
    assert result[0] == parameters if isinstance(parameters, tuple) else parameters in result


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_partial_runs_and_a_corrupt_run_stream_with_the_same_models_and_warnings(host, cube, tmp_path, executor):
    sweep = tmp_path / "sweep"
    for x in (1, 10, 25):
        shutil.copytree(cube / "single_parameter" / f"mm.x{x}y1z1.r1", sweep / f"app.x{x}")
    shutil.copytree(cube / "simple_threaded" / "example.f1", sweep / "app.x50")  # other call paths and metrics
    shutil.copytree(cube / "single_parameter" / "mm.x100y1z1.r1", sweep / "app.x100")
    corrupt = sweep / "app.x100" / "profile.cubex"
    corrupt.write_bytes(corrupt.read_bytes()[:5000])
    in_memory, warned = quietly(lambda: json_of(extrap_plugins.model(
        extrap_plugins.read(sweep, executor=executor, jobs=2), executor=executor, jobs=2)))
    streamed, warned_streamed = quietly(lambda: json_of(streaming.stream_models(
        sweep, executor=executor, jobs=2, scratch=tmp_path)))
    assert streamed == in_memory
    assert warned_streamed == warned
    assert warned[0] == (f"skipped: {corrupt}: not a readable CUBE file (damaged archive: unexpected end of data); "
                         "is it truncated or corrupt?")
    assert warned[1].startswith("7 call paths are measured in only some runs and are kept where measured: ")
    assert '"callpath": "main->foo"' in streamed  # measured only in app.x50


ZERO_RUNS = {  # CUBE-like runs that leave zero values out
    "r1": [("main", "time", 1.0), ("main", "bytes", 8.0), ("main->f", "time", 0.5)],
    "r2": [("main", "time", 2.0), ("main->f", "time", 1.0), ("main->f", "bytes", 4.0)],
    "r3": [("main", "time", 3.0), ("main", "bytes", 2.0), ("main->f", "time", 1.5)],
}


def read_zero_run(part, options):
    rows = ZERO_RUNS[part]
    return extrap_plugins.Experiment.from_columns(
        ["x"], callpath=[c for c, _, _ in rows], metric=[m for _, m, _ in rows],
        coordinates=[[float(part[1:])]] * len(rows), value=[v for _, _, v in rows], repetition=[0] * len(rows),
        source=part)


def test_runs_that_leave_zeros_out_get_them_back_when_streamed(host, tmp_path):
    info = ReaderInfo("zeros", read=None, directories=True, sniff=lambda p: True, omits_zeros=True,
                      parts=lambda path, options: list(ZERO_RUNS), read_part=read_zero_run)
    plugin = types.ModuleType("zeros_reader")
    plugin.extrap_readers = hookimpl(lambda: [info])
    plugin.extrap_modelers = hookimpl(lambda: [ModelerInfo("mean", Mean)])
    host.register(plugin, "zeros_reader")
    models = streaming.stream_models(tmp_path, "zeros", "mean", executor="serial", scratch=tmp_path)
    assert models.get("main->f", "bytes").points == 3
    assert models.get("main->f", "bytes").constant == 4 / 3  # 0, 4, 0: the zeros runs 1 and 3 left out are back
    assert models.get("main", "bytes").constant == 10 / 3  # 8, 0, 2
    assert models.get("main->f", "time").constant == 1.0  # 0.5, 1, 1.5: nothing to fill
    info_plain = ReaderInfo("plain", read=None, directories=True, sniff=lambda p: True,
                            parts=lambda path, options: list(ZERO_RUNS), read_part=read_zero_run)
    plugin.extrap_readers = hookimpl(lambda: [info_plain])
    host.unregister(name="zeros_reader")
    host.register(plugin, "plain_reader")
    plain = streaming.stream_models(tmp_path, "plain", "mean", executor="serial", scratch=tmp_path)
    assert plain.get("main->f", "bytes").points == 1  # a reader that keeps its zeros gets no fill


# ------------------------------------------------- a reader with its own join
CHOOSING_RUNS = {  # run: (p, values of main's two records); two runs at p = 4
    "a": (1.0, (1.1, 1.3)), "b": (2.0, (2.2, 2.0)), "c": (4.0, (9.6, 7.2)), "d": (4.0, (5.4, 2.8)),
    "e": (8.0, (8.3, 8.1)), "f": (16.0, (16.2, 16.4)),
}
BYTES = extrap_plugins.Metric("bytes", "B", "count", "exclusive")
TIME = extrap_plugins.Metric("time", "sec", "time", "inclusive")


def read_choosing_part(part, options):
    """One run as Caliper's reader gives it: every metadata key a provisional parameter (``p``, and ``build``,
    the same in every run), each call path recorded twice (repetitions within the run), metrics ``bytes`` and
    ``time``; run ``a`` names ``bytes`` but has no value of it."""
    p, (first, second) = CHOOSING_RUNS[part]
    rows = [("main", "time", first), ("main", "time", second), ("main->f", "time", first / 2),
            ("main->f", "time", second / 2)]
    if part != "a":
        rows += [("main", "bytes", 8 * p), ("main", "bytes", 8 * p), ("main->f", "bytes", 4 * p),
                 ("main->f", "bytes", 4 * p)]
    run = extrap_plugins.Experiment.from_columns(
        ["build", "p"], callpath=[c for c, _, _ in rows], metric=[m for _, m, _ in rows],
        coordinates=[[7.0, p]] * len(rows), value=[v for _, _, v in rows], metrics=[BYTES, TIME], source=part)
    if part == "a":  # its metrics list bytes first, without values
        run.metrics, run.metric_index = [BYTES, TIME], run.metric_index + 1
    return run


def choosing_join(experiments, path, options):
    """As Caliper's join: keeps the parameters that vary across the runs, numbers the repetitions anew in run order
    (two runs at one point: 0, 1, then 2, 3), metrics in the order the runs name them."""
    names = [p.name for p in experiments[0].parameters]
    coordinates = np.concatenate([e.coordinates for e in experiments]).reshape(-1, len(names))
    keep = [i for i, _ in enumerate(names) if np.unique(coordinates[:, i]).size > 1]
    metrics = extrap_plugins.experiment.merged_metrics(m for e in experiments for m in e.metrics)
    code = {m.name: k for k, m in enumerate(metrics)}
    return extrap_plugins.Experiment.from_columns(
        [names[i] for i in keep],
        callpath=[e.callpaths[i].name for e in experiments for i in e.callpath_index],
        metric=([m.name for m in metrics], [code[e.metrics[i].name] for e in experiments for i in e.metric_index]),
        coordinates=coordinates[:, keep], value=np.concatenate([e.value for e in experiments]), metrics=metrics,
        source=str(path))


def adding_join(experiments, path, options):
    """A join that adds a value (as filling in a zero would)."""
    joined = choosing_join(experiments, path, options)
    return extrap_plugins.Experiment.concatenate([joined, joined.take(np.arange(1))])


def renaming_join(experiments, path, options):
    """A join that renames a metric."""
    joined = choosing_join(experiments, path, options)
    joined.metrics = [dataclasses.replace(m, name=m.name.upper()) for m in joined.metrics]
    return joined


@pytest.fixture
def choosing(host):
    info = ReaderInfo("choosing", read=None, directories=True, sniff=lambda p: True,
                      parts=lambda path, options: list(CHOOSING_RUNS), read_part=read_choosing_part,
                      join=choosing_join)
    plugin = types.ModuleType("choosing_reader")
    plugin.extrap_readers = hookimpl(lambda: [info] + [
        ReaderInfo(name, read=None, directories=True, parts=info.parts, read_part=read_choosing_part, join=join)
        for name, join in (("adding", adding_join), ("renaming", renaming_join))])
    host.register(plugin, "choosing_reader")
    return host


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_reader_s_own_join_chooses_the_parameters_when_streamed_as_in_memory(choosing, tmp_path, executor):
    # streaming never called the join: the models were over build and p (build "has the single value 7" in every
    # series' warnings), the repetitions of the two runs at p = 4 were summed in another order (a mean 6.25 for
    # 6.250000000000001) and the metrics came in the order first seen with values (time, then bytes)
    in_memory, warned = quietly(lambda: extrap_plugins.model(
        extrap_plugins.read(tmp_path, "choosing", executor=executor, jobs=2), executor=executor, jobs=2))
    streamed, warned_streamed = quietly(lambda: streaming.stream_models(
        tmp_path, "choosing", executor=executor, jobs=2, scratch=tmp_path))
    assert streamed.parameters == in_memory.parameters == ("p",)
    assert json_of(streamed) == json_of(in_memory)
    assert warned_streamed == warned
    assert [(m.callpath, m.metric) for m in streamed] == [("main", "bytes"), ("main", "time"), ("main->f", "bytes"),
                                                         ("main->f", "time")]
    assert streamed.measured_points.tolist() == [[1.0], [2.0], [4.0], [8.0], [16.0]]
    # what the join said of the metrics: units and, for extrapolate, bytes exclusive though its parents do not
    # fall short (it was lost, and bytes guessed inclusive from the models)
    assert streamed.metrics == in_memory.metrics == (BYTES, TIME)
    assert streamed.metric("time").unit == "sec"
    assert extrapolate(streamed).values == extrapolate(in_memory).values == {"bytes": "exclusive",
                                                                             "time": "inclusive"}


def test_the_catalogue_takes_the_join_s_points_repetitions_and_metrics(choosing, tmp_path):
    info = choosing.reader("choosing")
    catalogue = streaming.Catalogue(same_parameters=False)
    for i, part in enumerate(CHOOSING_RUNS):
        summary, error, _ = streaming.spill_part((read_choosing_part, part, {}, str(tmp_path / f"p{i}"), None))
        catalogue.add(summary)
    assert catalogue.parameters == ("build", "p")
    assert [m.name for m in catalogue.metrics] == ["time", "bytes"]  # first seen with values
    assert catalogue.parts[3].cells.tolist() == [[0, 0], [0, 1]]  # run d: one point, repetitions 0 and 1
    stand_in = streaming.stand_in(catalogue.parts[3], catalogue.first_callpath(3))
    assert stand_in.coordinates.tolist() == [[7.0, 4.0]] * 4 and stand_in.repetition.tolist() == [0, 0, 1, 1]
    assert [stand_in.metrics[k].name for k in stand_in.metric_index] == ["time", "bytes"] * 2  # as the run has them
    streaming.follow_join(info, catalogue, tmp_path, {})
    assert catalogue.parameters == ("p",)
    assert catalogue.metrics == [BYTES, TIME]
    assert catalogue.parts[3].points.tolist() == [[4.0]]
    assert catalogue.parts[3].renumbered.tolist() == [2, 3]  # after run c's 0 and 1, as the join numbers them
    assert catalogue.parts[0].renumbered is None


@pytest.mark.parametrize("reader, what", [
    ("adding", "turns the runs' 22 points and repetitions into 23: it adds or drops values"),
    ("renaming", "renames or reorders the runs' call paths or metrics")])
def test_a_join_streaming_cannot_follow_without_the_values_is_refused(choosing, tmp_path, reader, what):
    with pytest.raises(InputError) as error:
        streaming.stream_models(tmp_path, reader, executor="serial", scratch=tmp_path)
    assert str(error.value) == (f"{tmp_path}: the {reader} reader's join {what}, so the runs cannot be streamed "
                                "(joined without their values); model them with --stream off")


def read_hinted(path, options):
    """A whole input: ``HINT`` then ``p value`` pairs; ``main`` takes the value, ``main->f`` half of it."""
    hint, *numbers = pathlib.Path(path).read_text().split()
    p, value = np.array(numbers, dtype=float).reshape(-1, 2).T
    return extrap_plugins.Experiment.from_columns(
        ["p"], callpath=["main"] * p.size + ["main->f"] * p.size, metric="time", coordinates=np.r_[p, p][:, None],
        value=np.r_[value, value / 2], metrics=[extrap_plugins.Metric("time", "sec", values=hint)], source=str(path))


@pytest.mark.parametrize("hints, said", [(("exclusive", "exclusive"), "exclusive"), (("inclusive", "exclusive"), "")])
def test_inputs_read_whole_give_their_metrics_as_joined_in_memory(host, tmp_path, hints, said):
    # one hint where the inputs agree, none where they differ (Experiment.concatenate): the streamed set had the
    # first input's, for a shortfall of no account
    plugin = types.ModuleType("hinted_reader")
    plugin.extrap_readers = hookimpl(lambda: [ReaderInfo("hinted", read_hinted, patterns=("*.hint",))])
    host.register(plugin, "hinted_reader")
    paths = []
    for k, hint in enumerate(hints):
        paths.append(tmp_path / f"r{k}.hint")
        paths[-1].write_text(hint + "".join(f" {p:g} {p * (k + 1)}" for p in P[k::2]))
    in_memory = extrap_plugins.model(extrap_plugins.read(paths, executor="serial"), executor="serial")
    streamed = streaming.stream_models(paths, executor="serial", scratch=tmp_path)
    assert streamed.metrics == in_memory.metrics == (extrap_plugins.Metric("time", "sec", values=said),)
    assert extrapolate(streamed).values == extrapolate(in_memory).values == {"time": said or "inclusive"}


# ---------------------------------------------------------- rank 0 load
class RecordingExecutor(executors.SerialExecutor):
    """Runs work here, but counts the bytes every task and result would take to travel."""

    sent = 0
    received = 0

    def submit(self, fn, /, *args, **kwargs):
        RecordingExecutor.sent += len(pickle.dumps(args))
        future = super().submit(fn, *args, **kwargs)
        if future.exception() is None:
            RecordingExecutor.received += len(pickle.dumps(future.result()))
        return future


def test_values_never_travel_through_rank_0_when_streaming(sweep, tmp_path, monkeypatch):
    (sweep / "size").write_text("1000")
    (sweep / "forward").write_text("")  # every run lists its call paths in the same order
    (sweep / "complete").write_text("")  # no gaps, so no warnings travel back with the models
    monkeypatch.setattr(executors, "create_executor", lambda kind, jobs=None, preload=(): RecordingExecutor())
    RecordingExecutor.sent = RecordingExecutor.received = 0
    experiment = extrap_plugins.read(sweep, executor="serial")
    models = extrap_plugins.model(experiment, executor="serial")
    values_bytes = 8 * len(experiment)
    assert RecordingExecutor.received > values_bytes  # in memory, every value comes back to rank 0 ...
    RecordingExecutor.sent = RecordingExecutor.received = 0
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    streamed = streaming.stream_models(sweep, executor="serial", scratch=scratch)
    assert json_of(streamed) == json_of(models)
    assert RecordingExecutor.received - len(pickle.dumps(streamed.models)) < values_bytes / 10  # ... streamed, none
    names_bytes = len(pickle.dumps([m.callpath for m in streamed.models[::2]]))
    assert RecordingExecutor.sent - names_bytes < values_bytes / 10  # the names go out once, with the blocks
    assert os.listdir(scratch) == []  # and the scratch folder is gone


# ------------------------------------------------------------ the parts



def test_the_catalogue_maps_each_runs_call_paths_in_segments(tmp_path):
    catalogue = streaming.Catalogue()
    folders = []
    for i, names in enumerate((["a", "b", "c"], ["a", "x", "b", "c"], ["a", "b", "c"])):
        e = extrap_plugins.Experiment.from_columns(["p"], callpath=names, metric="t",
                                                   coordinates=[[i + 1]] * len(names), value=np.ones(len(names)))
        folders.append(streaming.write_part(e, str(tmp_path / f"p{i}")))
        catalogue.add(folders[-1])
    assert catalogue.callpaths == ["a", "b", "c", "x"]
    assert catalogue.part_shape == [0, 1, 0]
    assert catalogue.callpath_runs().tolist() == [3, 3, 3, 1]
    # global b..x (1..3) in the second run: b, c at local 2..3 (block 0..1), x at local 1 (block 2)
    assert catalogue.ranges(1, 1, 4).tolist() == [[1, 2, 1], [2, 0, 2]]


def test_row_ranges():
    assert streaming._row_ranges(np.array([5, 0, 9]), np.array([7, 0, 12])).tolist() == [5, 6, 9, 10, 11]


# ------------------------------------------------------- choices, errors
def test_auto_streams_only_large_inputs(tmp_path, monkeypatch):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "profile.cubex").write_bytes(b"x" * 1000)
    monkeypatch.setattr(streaming, "STREAM_AUTO_BYTES", 999)
    assert streaming.should_stream(tmp_path) and not streaming.should_stream(tmp_path, "off")
    monkeypatch.setattr(streaming, "STREAM_AUTO_BYTES", 1000)
    assert not streaming.should_stream(tmp_path) and streaming.should_stream(tmp_path, "on")


def test_bad_scratch_and_unknown_metric_are_bad_input(sweep, tmp_path):
    with pytest.raises(InputError, match="the scratch folder does not exist"):
        streaming.stream_models(sweep, executor="serial", scratch=tmp_path / "nowhere")
    for function in (lambda: streaming.stream_models(sweep, metrics=["bytes"], executor="serial", scratch=tmp_path),
                     lambda: extrap_plugins.read(sweep, metrics=["bytes"], executor="serial")):
        with pytest.raises(InputError) as error:
            function()
        assert str(error.value) == f"{sweep}: no metric 'bytes'; the metrics are time, visits"
    with pytest.raises(InputError) as error:
        streaming.stream_models(sweep, callpaths=["solve*"], executor="serial", scratch=tmp_path)
    assert str(error.value) == f"{sweep}: no call path matches 'solve*'"


def test_a_broken_run_is_skipped_by_path(sweep, tmp_path):
    (sweep / "broken").write_text("")
    models, warned = quietly(streaming.stream_models, sweep, executor="serial", scratch=tmp_path)
    assert [w for w in warned if w.startswith("skipped:")] == [f"skipped: {sweep}/p8.r1: truncated run"]
    assert models.get("main->k0", "time").points == len(P)


def tidy_csv(path, rows=None) -> str:
    lines = ["p,callpath,metric,value"] + [f"{p:g},main,time,{1 + 0.5 * p}" for p in P]
    path.write_text("\n".join(lines if rows is None else lines[:rows]) + "\n")
    return str(path)


def test_a_broken_input_file_is_one_error_as_in_memory(tmp_path, capsys):
    # a truncated CSV streamed was warned about ("skipped: ...") and then the error said it again; beside a good
    # file it was skipped (exit 0) where in memory it is an error
    good, broken = tidy_csv(tmp_path / "good.csv"), tmp_path / "broken.csv"
    broken.write_text(pathlib.Path(good).read_text() + "64\n")
    expected = f"extrap-plugins: error: {broken}:7: 1 fields, expected 4 (p, callpath, metric, value)\n"
    for inputs in ([str(broken)], [good, str(broken)]):
        for stream in ("on", "off"):
            assert cli.main(["model", *inputs, "--stream", stream, "--scratch", str(tmp_path),
                             "--executor", "serial"]) == 2
            out, err = capsys.readouterr()
            assert (out, err) == ("", expected), (inputs, stream)


def test_command_line_streams_to_the_same_output(sweep, tmp_path, capsys):
    assert cli.main(["model", str(sweep), "--executor", "serial", "--stream", "off", "--export", "csv"]) == 0
    in_memory = capsys.readouterr().out
    assert cli.main(["model", str(sweep), "--executor", "serial", "--stream", "on", "--scratch", str(tmp_path),
                     "--export", "csv"]) == 0
    assert capsys.readouterr().out == in_memory
    assert cli.main(["model", str(sweep), "--stream", "on", "--scratch", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err == f"extrap-plugins: error: {tmp_path / 'x'}: the scratch folder does not exist\n"


def test_a_scratch_that_is_a_file_is_said_to_be_a_file(tmp_path, capsys):
    # it was said not to exist
    data, scratch = tidy_csv(tmp_path / "runs.csv"), tmp_path / "scratch.txt"
    scratch.write_text("")
    assert cli.main(["model", data, "--stream", "on", "--scratch", str(scratch)]) == 2
    assert capsys.readouterr() == ("", f"extrap-plugins: error: {scratch}: is a file; the scratch folder must be a "
                                       "folder\n")


def test_streamed_exports_show_values_at_the_largest_point_but_no_intervals(sweep, tmp_path, capsys):
    (sweep / "complete").write_text("")  # no gaps, so the only warning is the one about intervals
    common = ["model", str(sweep), "--executor", "serial", "--export", "csv", "--target", "p=64"]
    assert cli.main([*common, "--stream", "off"]) == 0
    in_memory = capsys.readouterr().out.splitlines()
    assert cli.main([*common, "--stream", "on", "--scratch", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    streamed = out.splitlines()
    assert err == ("extrap-plugins: warning: streamed models carry no measurements: prediction intervals at "
                   "--target are left out (--stream off computes them)\n")
    header = in_memory[0].split(",")
    interval = [header.index("interval_low"), header.index("interval_high")]
    assert len(streamed) == len(in_memory) == 2 * 300 + 1
    with_interval = 0
    for ours, theirs in zip(streamed[1:], in_memory[1:]):
        ours, theirs = ours.split(","), theirs.split(",")
        assert [ours[i] for i in interval] == ["", ""]
        with_interval += all(theirs[i] for i in interval)
        assert [v for i, v in enumerate(ours) if i not in interval] == \
               [v for i, v in enumerate(theirs) if i not in interval]
    assert with_interval >= 300  # every time series has one in memory


# ------------------------------------------------ warnings: one per cause over every block, as in memory
def read_four_point_run(part, options):
    """One run at p = 1, 2, 4 or 8 (``p<P>``): :data:`MANY` call paths, metrics ``time`` and ``visits``."""
    p = float(part[1:])
    names = [f"main->k{i}" for i in range(MANY)]
    return extrap_plugins.Experiment.from_columns(
        ["p"], callpath=names * 2, metric=["time"] * MANY + ["visits"] * MANY, coordinates=[[p]] * (2 * MANY),
        value=np.r_[np.arange(MANY) + 3 * p, np.arange(MANY) + p * p], source=part)


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_warning_of_series_in_many_blocks_is_one_warning_when_streamed_as_in_memory(host, tmp_path, executor):
    # each block's warnings were shown as they came, one per series
    info = ReaderInfo("four", read=None, directories=True, sniff=lambda p: True, read_part=read_four_point_run,
                      parts=lambda path, options: ["p1", "p2", "p4", "p8"])
    plugin = types.ModuleType("four_reader")
    plugin.extrap_readers = hookimpl(lambda: [info])
    host.register(plugin, "four_reader")
    few = "parameter p has only 4 distinct values; at least 5 are needed for a trustworthy model"
    expected = [f"main->k0 [time] and {2 * MANY - 1} more series (their Model.warnings say it): {few}"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        models = streaming.stream_models(tmp_path, executor=executor, jobs=2, scratch=tmp_path)
    assert [str(w.message) for w in caught] == expected
    assert sorted(caught[0].message.series) == sorted((m.callpath, m.metric) for m in models)
    in_memory, said = quietly(lambda: extrap_plugins.model(extrap_plugins.read(tmp_path, executor=executor, jobs=2),
                                                           executor=executor, jobs=2))
    assert said == expected and json_of(in_memory) == json_of(models)


def test_streaming_reports_the_runs_it_reads_as_read_does(sweep, tmp_path):
    from extrap_plugins.engine import following

    told = []
    with following(reading=lambda *progress: told.append(progress)):
        quietly(streaming.stream_models, sweep, executor="serial", scratch=tmp_path)
    assert told == [(0, 10)] + [(1, 0)] * 10


def test_streaming_reports_the_series_it_fits_as_model_does(sweep, tmp_path):
    # inside following(modeling=...), model reported its series and stream_models none
    from extrap_plugins.engine import following

    told = []
    with following(modeling=lambda *progress: told.append(progress)):
        models, _ = quietly(streaming.stream_models, sweep, executor="serial", scratch=tmp_path)
    assert told and sum(done for done, _ in told) == sum(found for _, found in told) == len(models)


def test_streaming_announces_its_call_paths_before_modelling_them(sweep, tmp_path):
    # the series are found block by block, so the modelling bar had no total (no ETA on a long run); the call
    # paths are known once the runs are read
    told = []
    models, _ = quietly(streaming.stream_models, sweep, executor="serial", scratch=tmp_path,
                        callpath_progress=lambda *progress: told.append(progress))
    assert told == [(0, 300), (300, 0)]
    assert len({m.callpath for m in models.models}) == 300


# ------------------------------------ a third-party reader's messages, streamed and in memory
RUNS_READER = """
    import pathlib
    import threading

    from extrap_plugins import Experiment, ReaderInfo, hookimpl

    def read(path, options):
        rows = [line.split() for line in pathlib.Path(path).read_text().splitlines() if line.strip()]
        return Experiment.from_columns(["p"], callpath="main", metric="time",
                                       coordinates=[[float(row[0])] for row in rows],
                                       value=[float(row[1]) for row in rows], source=str(path))

    def parts(path, options):
        return [str(run) for run in sorted(pathlib.Path(path).glob("*.run"))]

    def read_part(part, options):
        return read(part, options)

    class Run:
        '''A run that cannot be pickled (it holds a lock).'''

        def __init__(self, path):
            self.path, self.lock = path, threading.Lock()

        def __repr__(self):
            return f"Run({pathlib.Path(self.path).name!r})"

    def unsendable_parts(path, options):
        return [Run(run) for run in parts(path, options)]

    def read_run(part, options):
        return read(part.path, options)

    @hookimpl
    def extrap_readers():
        return [ReaderInfo("tab", read, patterns=("*.tab",)),
                ReaderInfo("tab-lambda", lambda path, options: read(path, options), patterns=("*.tabl",)),
                ReaderInfo("tabdir", None, directories=True, parts=parts, read_part=read_part),
                ReaderInfo("tabdir-lambda", None, directories=True, parts=parts,
                           read_part=lambda part, options: read(part, options)),
                ReaderInfo("tabdir-unsendable", None, directories=True, parts=unsendable_parts, read_part=read_run)]
    """
RUNS_PLUGIN = "(plugin runs_reader from distribution 'runs-plug')"


@pytest.fixture
def runs_plug(request, tmp_path, monkeypatch):
    """:data:`RUNS_READER` installed as a real distribution (``runs-plug``) and a folder ``runs`` of six runs."""
    request.getfixturevalue("installed")
    monkeypatch.delenv("EXTRAP_PLUGINS_STRICT", raising=False)
    fake_distribution(tmp_path / "site", monkeypatch, "runs-plug", {"runs_reader": "runs_reader_mod"},
                      {"runs_reader_mod": RUNS_READER})
    runs = tmp_path / "runs"
    runs.mkdir()
    for p in (2, 4, 8, 16, 32, 64):
        (runs / f"run{p}.run").write_text(f"{p} {3 + 2 * p}\n")
    return runs


def both_ways(capsys, tmp_path, *argv):
    """``extrap-plugins model ARGV`` in memory and streamed: ((status, out, err), (status, out, err))."""
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    return (run_command(capsys, "model", *argv, "--progress", "off", "--stream", "off"),
            run_command(capsys, "model", *argv, "--progress", "off", "--stream", "on", "--scratch", scratch))


@pytest.mark.parametrize("reader", ["tab", "text"])
def test_a_folder_given_to_a_reader_of_one_file_is_the_same_bad_input_streamed(runs_plug, capsys, tmp_path, reader):
    # streamed, the reader was called with the folder: a third-party one was blamed (exit 3), the built-in failed
    # its own way
    in_memory, streamed = both_ways(capsys, tmp_path, runs_plug, "--reader", reader, "--executor", "serial")
    assert streamed == in_memory == (
        2, "", f"extrap-plugins: error: {runs_plug}: is a folder; the {reader} reader reads one file\n")


@pytest.mark.parametrize("reader, what", [
    ("tabdir-lambda", "read_part cannot be sent to worker processes (AttributeError: Can't pickle local object "
                      "'extrap_readers.<locals>.<lambda>'): it must be a module-level function, not a lambda, a "
                      "closure or a local function"),
    ("tabdir-unsendable", "parts returned a run that cannot be sent to worker processes, a Run (Run('run16.run')) "
                          "(TypeError: cannot pickle '_thread.lock' object): each run must be picklable (a path, a "
                          "str, a tuple)")])
def test_a_reader_that_cannot_be_sent_to_workers_is_the_same_plugin_error_streamed(runs_plug, capsys, tmp_path,
                                                                                   reader, what):
    # streamed, the pickling failed inside the pool: an internal error (exit 1)
    in_memory, streamed = both_ways(capsys, tmp_path, runs_plug, "--reader", reader, "--executor", "process",
                                    "--jobs", "2")
    assert streamed == in_memory == (
        3, "", f"extrap-plugins: error: reader '{reader}' {RUNS_PLUGIN}: {what}; or use --executor serial\n")
    in_memory, streamed = both_ways(capsys, tmp_path, runs_plug, "--reader", reader, "--executor", "serial")
    assert streamed[0] == in_memory[0] == 0 and streamed[2] == in_memory[2] == ""  # serial: nothing is sent


def test_a_whole_file_reader_that_cannot_be_sent_to_workers_is_a_plugin_error_streamed(runs_plug, capsys, tmp_path):
    # streamed, whole inputs are read in the workers: a lambda read failed inside the pool as an internal error
    # (exit 1); in memory they are read here, and nothing is sent
    files = [runs_plug / f"run{p}.run" for p in (2, 4, 8, 16, 32, 64)]
    in_memory, streamed = both_ways(capsys, tmp_path, *files, "--reader", "tab-lambda", "--executor", "process",
                                    "--jobs", "2")
    assert in_memory[0] == 0 and "main" in in_memory[1]
    assert streamed == (
        3, "", f"extrap-plugins: error: reader 'tab-lambda' {RUNS_PLUGIN}: read cannot be sent to worker processes "
               "(AttributeError: Can't pickle local object 'extrap_readers.<locals>.<lambda>'): it must be a "
               "module-level function, not a lambda, a closure or a local function; or use --executor serial\n")
    _, serial = both_ways(capsys, tmp_path, *files, "--reader", "tab-lambda", "--executor", "serial")
    assert serial == in_memory


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_run_with_a_value_that_is_not_finite_names_the_reader_streamed_as_in_memory(runs_plug, capsys, tmp_path,
                                                                                      executor):
    # streamed, the warning left out "(as reader ... read it)"
    (runs_plug / "run128.run").write_text("inf 1\n")
    in_memory, streamed = both_ways(capsys, tmp_path, runs_plug, "--reader", "tabdir", "--executor", executor,
                                    "--jobs", "2")
    assert streamed == in_memory
    assert in_memory[0] == 0 and in_memory[2] == (
        f"extrap-plugins: warning: skipped: {runs_plug / 'run128.run'}: parameter 'p' has the value inf in 1 of 1 "
        f"measurement (as reader 'tabdir' {RUNS_PLUGIN} read it); a parameter's values must be finite numbers\n")


def test_a_target_naming_no_parameter_is_said_before_the_modelling_streamed(host, tmp_path, monkeypatch):
    # streamed, the exporter said it after all the modelling; now stream_models checks it once the runs are read
    from extrap_plugins import streaming

    fitted = []
    monkeypatch.setattr(streaming, "_fit_in_pool", lambda *args: fitted.append(1) or [])
    data = tmp_path / "runs.csv"
    data.write_text("p,value\n" + "".join(f"{p},{p}\n" for p in (2, 4, 8, 16, 32)))
    with pytest.raises(InputError) as caught:
        streaming.stream_models(data, executor="serial", scratch=tmp_path, target="q=5")
    assert str(caught.value) == "target 'q=5': unknown parameter 'q'; the parameters are p" and fitted == []
