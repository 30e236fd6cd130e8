"""The reader of the instrument shim's output: files, folders, fragments, errors."""

from __future__ import annotations

import json
import math
import pathlib
import warnings

import pytest

import extrap_plugins
from extrap_plugins import cli
from extrap_plugins.engine import select_reader
from extrap_plugins.errors import ExtrapWarning, InputError
from extrap_plugins.instrument import output, regions

HAND_WRITTEN = (
    '{"format":"extrap-plugins/instrument","version":1,"run":"a","status":"ok","errors":[],"program":"app",'
    '"host":"h","started":"2025-01-01T00:00:00Z","duration":1.0,"parameters":{"p":2,"n":10},"repetition":0,'
    '"size":2,"rank":null,"ranks":2,"metrics":{"time":{"unit":"sec","kind":"time"},'
    '"bytes_sent":{"unit":"bytes","kind":"count"}},"statistics":["sum","mean","min","max"],'
    '"callpaths":["main","main->MPI_Send"],'
    '"values":{"time":{"sum":[3.0,0.5],"mean":[1.5,0.25],"min":[1.0,0.0],"max":[2.0,0.5]},'
    '"bytes_sent":{"sum":[null,160],"mean":[null,80],"min":[null,0],"max":[null,160]}}}\n'
)


def make_line(parameters: dict, per_rank: list[dict[str, dict[str, float]]], *, run="r", rank=None, size=None,
              repetition=0, status="ok", errors=()) -> str:
    """One record: ``per_rank[r] = {callpath: {metric: value}}``, aggregated like the shim does."""
    tables = []
    for paths in per_rank:
        rows = [[paths[c].get(m, math.nan) for m in regions.METRICS] for c in paths]
        tables.append((list(paths), rows))
    size = size or len(per_rank)
    callpaths, stats = output.aggregate(tables, n_ranks=size if rank is None else 1)
    record = output.make_record(run=run, callpaths=callpaths, stats=stats, parameters=parameters,
                                repetition=repetition, size=size, rank=rank,
                                ranks=size if rank is None else 1, status=status, errors=errors)
    return output.encode(record).decode()


def write(path: pathlib.Path, *lines: str) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines))
    return path


def values(experiment, callpath: str, metric: str) -> list[tuple[list[float], float]]:
    coordinates, v = experiment.values_of(callpath, metric)
    return sorted(zip(coordinates.tolist(), v.tolist()))


def test_a_hand_written_line_reads_exactly(host, tmp_path):
    path = write(tmp_path / "app.extrap.jsonl", HAND_WRITTEN)
    experiment = extrap_plugins.read(path)
    assert experiment.reader == "instrument"
    assert experiment.parameter_names == ["p", "n"]
    assert [c.name for c in experiment.callpaths] == ["main", "main->MPI_Send"]
    assert [(m.name, m.unit, m.kind) for m in experiment.metrics] == [("time", "sec", "time"),
                                                                     ("bytes_sent", "bytes", "count")]
    assert values(experiment, "main", "time") == [([2.0, 10.0], 1.5)]
    assert values(experiment, "main->MPI_Send", "bytes_sent") == [([2.0, 10.0], 80.0)]
    assert experiment.values_of("main", "bytes_sent")[1].size == 0  # null: not applicable
    largest = extrap_plugins.read(path, aggregation="max")
    assert values(largest, "main", "time") == [([2.0, 10.0], 2.0)]
    assert len(experiment) == 3


def test_a_folder_of_runs_is_one_experiment_with_repetitions(host, tmp_path):
    for p in (1, 2, 4):
        lines = [make_line({"p": p, "n": n}, [{"main": {"time": 0.1 * n, "visits": 1}}] * p, run=f"p{p}n{n}r{r}",
                           repetition=r) for n in (10, 20) for r in range(2)]
        write(tmp_path / "runs" / f"app{p}.extrap.jsonl", *lines)
    write(tmp_path / "runs" / "logs" / "p1.log", "not data\n")
    experiment = extrap_plugins.read(tmp_path / "runs")
    assert experiment.parameter_names == ["p", "n"]
    assert len(experiment.points()) == 6
    coordinates, v = experiment.values_of("main", "visits")
    assert len(v) == 12 and set(v.tolist()) == {1.0}
    assert sorted(set(experiment.repetition.tolist())) == [0, 1]
    [group] = list(experiment.series_groups())
    assert [(c.name, m.name) for c, m in group.keys] == [("main", "time"), ("main", "visits")]
    assert group.values.shape == (2, 6, 2)  # 6 points, 2 repetitions each


def test_fragments_are_joined_into_their_run(host, tmp_path):
    ranks = [{"main": {"time": 1.0, "visits": 1}, "main->MPI_Send": {"time": 0.1, "visits": 2, "bytes_sent": 64}},
             {"main": {"time": 3.0, "visits": 1}}]
    for r in range(2):
        write(tmp_path / f"app.x1.rank{r}.extrap.jsonl",
              make_line({"p": 2}, [ranks[r]], run="x1", rank=r, size=2, status="partial"))
    write(tmp_path / "app.extrap.jsonl", make_line({"p": 1}, [{"main": {"time": 1.0, "visits": 1}}], run="y"))
    experiment = extrap_plugins.read(tmp_path)
    assert values(experiment, "main", "time") == [([1.0], 1.0), ([2.0], 2.0)]
    assert values(experiment, "main->MPI_Send", "bytes_sent") == [([2.0], 32.0)]  # mean over the 2 ranks
    assert values(extrap_plugins.read(tmp_path, aggregation="min"), "main->MPI_Send", "visits") == [([2.0], 0.0)]


def test_fragments_of_a_run_that_was_also_written_whole_are_ignored(host, tmp_path):
    whole = make_line({"p": 2}, [{"main": {"time": 1.0}}, {"main": {"time": 3.0}}], run="z")
    write(tmp_path / "app.extrap.jsonl", whole)
    write(tmp_path / "app.z.rank1.extrap.jsonl", make_line({"p": 2}, [{"main": {"time": 3.0}}], run="z", rank=1, size=2))
    assert values(extrap_plugins.read(tmp_path), "main", "time") == [([2.0], 2.0)]


def test_failed_and_incomplete_runs_are_skipped_with_a_warning(host, tmp_path):
    write(tmp_path / "app.f.rank0.extrap.jsonl", make_line({"p": 2}, [{"main": {"time": 1.0}}], run="f", rank=0,
                                                           size=2, status="partial", errors=["rank 1 failed: KeyError: 'x'"]))
    write(tmp_path / "app.f.rank1.extrap.jsonl", make_line({"p": 2}, [{"main": {"time": 1.0}}], run="f", rank=1,
                                                           size=2, status="failed", errors=["rank 1 failed: KeyError: 'x'"]))
    write(tmp_path / "app.g.rank0.extrap.jsonl", make_line({"p": 4}, [{"main": {"time": 1.0}}], run="g", rank=0, size=4))
    write(tmp_path / "app.extrap.jsonl", make_line({"p": 1}, [{"main": {"time": 1.0}}], run="ok"))
    with pytest.warns(ExtrapWarning) as caught:
        experiment = extrap_plugins.read(tmp_path)
    assert [str(w.message) for w in caught] == [
        f"skipped: {tmp_path / 'app.f.rank0.extrap.jsonl'}:1: rank 1 failed: KeyError: 'x'",
        f"skipped: {tmp_path / 'app.g.rank0.extrap.jsonl'}:1: 3 of the run's 4 ranks left no measurements "
        "(ranks 1, 2, 3)"]
    assert experiment.points().tolist() == [[1.0]]


def fragment(folder, run, p, *, size=2, status="partial", errors=()):
    """Rank 0's fragment of run ``run`` (of ``size`` ranks) at p = ``p``: rank 1 ... left nothing, unless
    written too."""
    return write(folder / f"app.{run}.rank0.extrap.jsonl", make_line({"p": p}, [{"main": {"time": 1.0}}], run=run,
                                                                     rank=0, size=size, status=status, errors=errors))


def verdict(run, reason):
    """The sweep runner's line declaring run ``run`` failed."""
    return output.encode({"format": output.FORMAT, "version": output.VERSION, "verdict": "failed", "run": run,
                          "errors": [reason]}).decode()


def read_recording(path):
    """``(experiment or the InputError raised, every warning's text)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = extrap_plugins.read(path)
        except InputError as error:
            result = error
    return result, [str(w.message) for w in caught]


def test_runs_skipped_for_one_cause_are_one_warning_naming_how_many_and_the_first(host, tmp_path):
    # each run was a warning of its own ("run a skipped: 1 of its 2 ranks left no measurements ...", ...)
    for run, p in (("a", 8), ("b", 16), ("c", 32)):
        fragment(tmp_path, run, p)
    failed = write(tmp_path / "app.f.rank1.extrap.jsonl", make_line({"p": 2}, [{"main": {"time": 1.0}}], run="f",
                                                                    rank=1, size=2, status="failed",
                                                                    errors=["rank 1 failed: KeyError: 'x'"]))
    fragment(tmp_path, "f", 2)
    launch_failed = "the launch failed (exit status 3; extrap-plugins run)"
    data = write(tmp_path / "app.extrap.jsonl",
                 *(make_line({"p": p}, [{"main": {"time": 1.0}}] * p, run=f"p{p}") for p in (1, 2, 4)),
                 verdict("p2", launch_failed), verdict("p4", launch_failed),
                 make_line({"p": 64}, [{}], run="empty"))
    experiment, said = read_recording(tmp_path)
    assert said == [
        f"skipped 3 of the 8 runs for the same reason; the first: {tmp_path / 'app.a.rank0.extrap.jsonl'}:1: 1 of "
        "the run's 2 ranks left no measurements (rank 1)",
        f"skipped 2 of the 8 runs for the same reason; the first: {data}:2: {launch_failed}",
        f"skipped: {failed.with_name('app.f.rank0.extrap.jsonl')}:1: rank 1 failed: KeyError: 'x'",
        f"{data}:6: 1 of the 8 runs measured nothing (the first: p=64): the program ended before any instrumented "
        "region or wrapped MPI call ran (did it exit early?); skipped",
    ]
    assert experiment.points().tolist() == [[1.0]]


def test_a_folder_of_runs_missing_ranks_is_one_error_naming_how_many_and_the_first(host, tmp_path, capsys):
    # each run was a warning, then "no complete run to read (see the warnings)"
    for run, p in (("a", 8), ("b", 16), ("c", 32)):
        fragment(tmp_path, run, p)
    error, said = read_recording(tmp_path)
    message = (f"{tmp_path}: none of the 3 runs could be read; the first: {tmp_path / 'app.a.rank0.extrap.jsonl'}:1: "
               "1 of the run's 2 ranks left no measurements (rank 1)")
    assert (str(error), said) == (message, [])
    assert cli.main(["model", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"extrap-plugins: error: {message}"]


def test_runs_unreadable_in_different_ways_are_one_error_counting_them_all(host, tmp_path):
    # a run that measured nothing, beside runs skipped: counted with them, and said by the same error
    data = write(tmp_path / "app.extrap.jsonl", make_line({"p": 64}, [{}], run="empty"),
                 make_line({"p": 1}, [{"main": {"time": 1.0}}], run="p1"),
                 verdict("p1", "ended by --timeout after 2 s (extrap-plugins run)"))
    fragment(tmp_path, "b", 8, size=4)
    error, said = read_recording(tmp_path)
    assert (str(error), said) == (
        f"{tmp_path}: none of the 3 runs could be read; the first: {tmp_path / 'app.b.rank0.extrap.jsonl'}:1: 3 of "
        "the run's 4 ranks left no measurements (ranks 1, 2, 3)", [])
    (tmp_path / "app.b.rank0.extrap.jsonl").unlink()
    error, said = read_recording(tmp_path)
    assert (str(error), said) == (
        f"{tmp_path}: none of the 2 runs could be read; the first: {data}:1: the run measured nothing: the program "
        "ended before any instrumented region or wrapped MPI call ran (did it exit early?)", [])


def test_runs_that_measured_nothing_are_skipped_and_named_when_nothing_else_is_there(host, tmp_path):
    # a program that ended before any region ran (raise SystemExit, which the shim cannot see) writes a run
    # without call paths; a file of only such runs gave "internal error: ValueError: need at least one array"
    empty = make_line({"p": 4, "n": 10}, [{}] * 4, run="e")
    path = write(tmp_path / "alone" / "app.extrap.jsonl", empty)
    with pytest.raises(InputError) as raised:
        extrap_plugins.read(path)
    assert str(raised.value) == (f"{path}:1: the run measured nothing: the program ended before any instrumented "
                                 f"region or wrapped MPI call ran (did it exit early?)")
    two = write(tmp_path / "two" / "app.extrap.jsonl", empty, empty)
    with pytest.raises(InputError, match=r":1: none of the 2 runs measured anything \(the first: p=4, n=10\): "):
        extrap_plugins.read(two)
    mixed = write(tmp_path / "mixed" / "app.extrap.jsonl", empty,
                  *(make_line({"p": p, "n": 10}, [{"main": {"time": 1.0}}] * p, run=str(p)) for p in (1, 2)))
    with pytest.warns(ExtrapWarning) as caught:
        experiment = extrap_plugins.read(mixed)
    assert f"{mixed}:1: 1 of the 3 runs measured nothing (the first: p=4, n=10): the program ended before any " \
           f"instrumented region or wrapped MPI call ran (did it exit early?); skipped" in [str(w.message) for w in caught]
    assert sorted(experiment.points()[:, 0].tolist()) == [1.0, 2.0]


def test_a_parameter_with_one_value_everywhere_is_not_modeled(host, tmp_path):
    lines = [make_line({"p": p, "rows": 32}, [{"main": {"time": p}}] * p, run=str(p)) for p in (1, 2, 4)]
    write(tmp_path / "a.extrap.jsonl", *lines)
    with pytest.warns(ExtrapWarning, match="parameter rows = 32 in every run: not modeled"):
        experiment = extrap_plugins.read(tmp_path / "a.extrap.jsonl")
    assert experiment.parameter_names == ["p"]
    assert experiment.constants == {"rows": 32.0}  # where it was measured, for a design that varies it next


def test_repeated_repetition_numbers_are_renumbered(host, tmp_path):
    line = make_line({"p": 1}, [{"main": {"time": 1.0}}], repetition=0)
    write(tmp_path / "a.extrap.jsonl", line, line, line)
    experiment = extrap_plugins.read(tmp_path / "a.extrap.jsonl")
    assert sorted(experiment.repetition.tolist()) == [0, 1, 2]
    assert any("renumbered" in note for note in experiment.notes)


@pytest.mark.parametrize("text, message", [
    ("{not json}\n", "a.extrap.jsonl:2: not a JSON object (Expecting property name enclosed in double quotes at column 2)"),
    ('{"format": "something else"}\n',
     'a.extrap.jsonl:2: not an extrap-plugins instrument record (expected "format": "extrap-plugins/instrument")'),
    ('{"format": "extrap-plugins/instrument", "version": 9}\n',
     "a.extrap.jsonl:2: written by a newer extrap-plugins (record version 9, this reader knows up to 1); "
     "upgrade extrap-plugins"),
    (HAND_WRITTEN.replace('"sum":[3.0,0.5]', '"sum":[3.0]'),
     "a.extrap.jsonl:2: values['time']['sum'] must be a list of 2 numbers (one per call path)"),
    (HAND_WRITTEN.replace('"n":10', '"n":"ten"'), "a.extrap.jsonl:2: parameter 'n' must be a number, got 'ten'"),
])
def test_bad_lines_name_file_and_line(host, tmp_path, text, message):
    path = write(tmp_path / "a.extrap.jsonl", HAND_WRITTEN, text)
    with pytest.raises(InputError) as error:
        extrap_plugins.read(path)
    assert str(error.value).endswith(message)


def test_runs_with_different_parameters_cannot_be_joined(host, tmp_path):
    path = write(tmp_path / "a.extrap.jsonl", HAND_WRITTEN, make_line({"p": 1}, [{"main": {"time": 1.0}}]))
    with pytest.raises(InputError, match=r"a.extrap.jsonl:2: parameters \['p'\] differ from \['n', 'p'\]"):
        extrap_plugins.read(path)


def test_a_line_cut_short_at_the_end_is_skipped_with_a_warning(host, tmp_path):
    path = write(tmp_path / "a.extrap.jsonl", HAND_WRITTEN, HAND_WRITTEN[:100])
    with pytest.warns(ExtrapWarning, match="a.extrap.jsonl:2: skipped an incomplete last line"):
        experiment = extrap_plugins.read(path)
    assert len(experiment) == 3


def test_options_are_checked(host, tmp_path):
    path = write(tmp_path / "a.extrap.jsonl", HAND_WRITTEN)
    with pytest.raises(InputError, match="the instrument reader has no option 'statistic'; its options are: aggregation"):
        extrap_plugins.read(path, statistic="max")
    with pytest.raises(InputError, match="aggregation='median': expected one of sum, mean, min, max"):
        extrap_plugins.read(path, aggregation="median")
    with pytest.raises(InputError, match="no \\*.extrap.jsonl files"):
        (tmp_path / "empty").mkdir()
        extrap_plugins.read(tmp_path / "empty", reader="instrument")


def test_the_reader_is_chosen_by_name_and_by_content(host, tmp_path):
    named = write(tmp_path / "x" / "app.extrap.jsonl", HAND_WRITTEN)
    plain = write(tmp_path / "y" / "measurements.jsonl", HAND_WRITTEN)
    assert select_reader(named, host).name == "instrument"
    assert select_reader(plain, host).name == "instrument"
    assert select_reader(tmp_path / "y", host).name == "instrument"  # a folder with shim records
    assert values(extrap_plugins.read(tmp_path / "y"), "main", "time") == [([2.0, 10.0], 1.5)]
    extrap_lines = write(tmp_path / "z" / "extrap.jsonl", '{"params":{"x":1},"metric":"m","value":1}\n')
    from extrap_plugins.readers.instrument_reader import sniff

    assert not sniff(extrap_lines) and not sniff(tmp_path / "z")


def test_a_link_to_a_sibling_file_is_refused_naming_both(host, tmp_path):
    # the linked file's runs were read twice, as repetitions never run
    for p in (1, 2):
        write(tmp_path / f"app{p}.extrap.jsonl", make_line({"p": p}, [{"main": {"time": 1.0}}], run=f"p{p}"))
    (tmp_path / "copy.extrap.jsonl").symlink_to("app1.extrap.jsonl")
    with pytest.raises(InputError) as error:
        extrap_plugins.read(tmp_path)
    assert str(error.value) == (f"{tmp_path / 'copy.extrap.jsonl'}: the same file as {tmp_path / 'app1.extrap.jsonl'}: "
                                "its measurements would count twice")


def test_a_byte_order_mark_is_accepted_and_latin1_named(host, tmp_path):
    path = tmp_path / "a.extrap.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + HAND_WRITTEN.encode())
    assert values(extrap_plugins.read(path), "main", "time") == [([2.0, 10.0], 1.5)]
    path.write_bytes(HAND_WRITTEN.encode() + HAND_WRITTEN.replace('"h"', '"h\xe9"').encode("latin-1"))
    with pytest.raises(InputError) as error:
        extrap_plugins.read(path)
    assert str(error.value) == f"{path}:2: not UTF-8 text (byte 0xe9); is this the right reader?"


def test_a_folder_of_runs_is_held_compactly_while_read(host, tmp_path):
    # every run of a folder was held as parsed (four statistics of every metric, some 30 bytes a number) until all
    # were read: 188 MB of runs took 1.1 GB to read, streamed or not, whatever --metric and --callpath selected.
    # Here the peak was 8.7 times the files' size; kept compactly, 3.3 (most of it the experiment made of them)
    import tracemalloc

    paths = [f"main->f{i}" for i in range(1000)]
    for p in (2, 4, 8, 16, 32):
        for r in range(2):
            write(tmp_path / f"app.p{p}.r{r}.extrap.jsonl",
                  make_line({"p": p}, [{c: {"time": p + i, "visits": 3.0} for i, c in enumerate(paths)}],
                            repetition=r, run=f"{p}.{r}"))
    size = sum(f.stat().st_size for f in tmp_path.iterdir())
    tracemalloc.start()
    try:
        experiment = extrap_plugins.read(tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * size
    assert values(experiment, "main->f7", "time")[::2] == [([2.0], 9.0), ([4.0], 11.0), ([8.0], 15.0),
                                                           ([16.0], 23.0), ([32.0], 39.0)]


def test_runs_of_two_programs_in_one_folder_are_a_warning_naming_them(host, tmp_path):
    # runs/ holding app.py's sweep and then jacobi.py's: one call tree of both, said only as renumbered repetitions
    for program in ("app", "jacobi"):
        record = json.loads(make_line({"p": 1}, [{"main": {"time": 1.0, "visits": 1}}], run=program))
        record["program"] = program
        write(tmp_path / "runs" / f"{program}.extrap.jsonl", json.dumps(record) + "\n")
    with pytest.warns(ExtrapWarning) as caught:
        extrap_plugins.read(tmp_path / "runs")
    assert f"{tmp_path / 'runs'}: holds the measurements of 2 programs (app, jacobi), modelled as one; read each " \
           "program's runs alone if they are different programs" in [str(w.message) for w in caught]


def test_a_line_cut_short_before_a_later_run_is_skipped_with_a_warning(host, tmp_path):
    # a run killed mid-write, then the next run appended on a line of its own (the shim starts one)
    path = write(tmp_path / "a.extrap.jsonl", HAND_WRITTEN[:100] + "\n", HAND_WRITTEN)
    with pytest.warns(ExtrapWarning, match="a.extrap.jsonl:1: skipped an incomplete line"):
        experiment = extrap_plugins.read(path)
    assert len(experiment) == 3


def test_a_line_broken_in_its_middle_is_still_refused(host, tmp_path):
    path = write(tmp_path / "a.extrap.jsonl", HAND_WRITTEN.replace('"run":"a"', '"run" "a"'), HAND_WRITTEN)
    with pytest.raises(InputError, match=r"a.extrap.jsonl:1: not a JSON object \("):
        extrap_plugins.read(path)


# ------------------------------------------------------------------ damaged files
@pytest.mark.parametrize("encode", [
    lambda text: text.encode("utf-16"),  # "no reader recognises this input": the sniffer saw the raw bytes
    lambda text: text.replace("\n", "\r").encode(),  # old Mac line ends: "not a JSON object (Extra data ...)"
], ids=["utf-16", "cr"])
def test_a_file_in_utf16_or_with_cr_line_ends_reads_as_written(host, tmp_path, encode):
    plain = extrap_plugins.read(write(tmp_path / "plain" / "app.extrap.jsonl", HAND_WRITTEN, HAND_WRITTEN))
    path = tmp_path / "app.extrap.jsonl"
    path.write_bytes(encode(HAND_WRITTEN + HAND_WRITTEN))
    experiment = extrap_plugins.read(path)
    assert values(experiment, "main", "time") == values(plain, "main", "time") == [([2.0, 10.0], 1.5)] * 2


def test_a_line_that_is_no_record_is_refused_not_skipped_as_cut_short(host, tmp_path):
    # a line of 10 MB of garbage was "skipped an incomplete line" (a warning), as a write cut short is
    path = write(tmp_path / "a.extrap.jsonl", HAND_WRITTEN, "x" * (10 << 20) + "\n", HAND_WRITTEN)
    with pytest.raises(InputError) as error:
        extrap_plugins.read(path)
    assert str(error.value) == f"{path}:2: not a JSON object (Expecting value at column 1)"


def test_a_record_without_parameters_says_so(host, tmp_path):
    # "'parameters' must be a dict, got NoneType"
    path = write(tmp_path / "a.extrap.jsonl", HAND_WRITTEN.replace('"parameters"', '"Parameters"'))
    with pytest.raises(InputError) as error:
        extrap_plugins.read(path)
    assert str(error.value) == f"{path}:1: no 'parameters'"
