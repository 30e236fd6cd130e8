"""Parameters, the output record, aggregation over ranks, and how files are written."""

from __future__ import annotations

import json
import math
import multiprocessing
import sys

import numpy as np
import pytest

from extrap_plugins import instrument
from extrap_plugins.instrument import output, regions
from extrap_plugins.instrument.session import Session
from shim_helpers import PROGRAMS, records, run_program, series

ROW = len(regions.METRICS)


def row(**values: float) -> list[float]:
    """A snapshot row with the given metrics (others NaN)."""
    return [values.get(m, math.nan) for m in regions.METRICS]


def test_a_plain_python_run_is_p_1_with_the_environment_parameters(tmp_path):
    result = run_program([sys.executable, str(PROGRAMS / "plain.py")], tmp_path,
                         EXTRAP_PARAM_N="25", EXTRAP_PARAM_BLOCKSIZE="8", EXTRAP_PARAM_NAMES="blockSize,n",
                         EXTRAP_REPETITION="2", EXTRAP_RUN_ID="plain-1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "n 25"
    assert "appended the measurements to" in result.stderr
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert record["format"] == "extrap-plugins/instrument" and record["version"] == 1
    assert record["parameters"] == {"p": 1, "blockSize": 8, "n": 25, "m": 3}
    assert record["repetition"] == 2 and record["run"] == "plain-1" and record["program"] == "plain"
    assert record["size"] == 1 and record["rank"] is None and record["status"] == "ok"
    assert series(record, "visits") == {"work": 4}
    assert set(record["values"]) == {"time", "time_exclusive", "visits", "visit_time_min", "visit_time_max"}
    assert record["metrics"]["visits"] == {"unit": "occ", "kind": "count"}
    stats = record["values"]["time"]
    assert stats["sum"] == stats["mean"] == stats["min"] == stats["max"]


def test_runs_append_lines_and_the_default_output_is_named_after_the_program(tmp_path):
    for _ in range(2):
        result = run_program([sys.executable, str(PROGRAMS / "plain.py")], tmp_path, EXTRAP_OUTPUT=str(tmp_path))
        assert result.returncode == 0, result.stderr
    lines = records(tmp_path / "plain.extrap.jsonl")
    assert len(lines) == 2
    assert lines[0]["run"] != lines[1]["run"]
    assert lines[0]["repetition"] is None  # the reader numbers them


def test_the_shim_never_imports_mpi4py_by_itself(tmp_path):
    program = ("import sys\nfrom extrap_plugins import instrument\nfrom extrap_plugins.instrument import sweep\n"
               "with instrument.region('x'):\n    pass\nprint('mpi4py' in sys.modules)\n")
    result = run_program([sys.executable, "-c", program], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_a_program_that_measures_nothing_writes_nothing(tmp_path):
    result = run_program([sys.executable, "-c", "import extrap_plugins.instrument"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []


def test_parameters_are_checked():
    s = Session()
    with pytest.raises(TypeError, match="parameter n must be a finite number, got 'big'"):
        s.parameters({"n": "big"})
    with pytest.raises(TypeError, match="parameter n must be a finite number, got nan"):
        s.parameters({"n": math.nan})
    with pytest.raises(ValueError, match="must be an identifier"):
        s.parameters({"my size": 3})
    assert s.parameters({"n": 4, "m": 2.5}) == {"p": 1.0, "n": 4.0, "m": 2.5}


def test_environment_parameters_are_read_and_bad_ones_reported(monkeypatch):
    monkeypatch.setenv("EXTRAP_PARAM_N", "1000")
    monkeypatch.setenv("EXTRAP_PARAM_SIZE", "big")
    s = Session()
    assert s.environment_parameters == {"n": 1000.0}
    assert s.parameter_problems == ["EXTRAP_PARAM_SIZE='big' is not a number; ignored"]
    assert s.current_parameters(size=4) == {"p": 4.0, "n": 1000.0}


@pytest.mark.parametrize("timeout", ["-3", "0", "nan", "inf", "soon"])
def test_unusable_settings_are_said_once_when_the_program_uses_the_shim(tmp_path, timeout):
    # a timeout of 0 or below was replaced by 30 s without a word; a word was a RuntimeWarning pointing into the
    # shim, and a bad EXTRAP_REPETITION was dropped silently
    result = run_program([sys.executable, str(PROGRAMS / "plain.py")], tmp_path, EXTRAP_EXIT_TIMEOUT=timeout,
                         EXTRAP_REPETITION="first")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[:2] == [
        "extrap-plugins instrument: EXTRAP_REPETITION='first' is not a whole number from 0 to 2147483647; ignored",
        f"extrap-plugins instrument: EXTRAP_EXIT_TIMEOUT={timeout!r} is not a positive number of seconds; using 30"]
    assert "Warning" not in result.stderr
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert record["repetition"] is None


def test_usable_settings_are_taken_without_a_word(monkeypatch):
    monkeypatch.setenv("EXTRAP_EXIT_TIMEOUT", " 2.5 ")
    monkeypatch.setenv("EXTRAP_REPETITION", "3")
    s = Session()
    assert (s.timeout, s.repetition, s.setting_problems) == (2.5, 3, [])


def test_parameter_reads_the_environment_or_the_default(monkeypatch):
    from extrap_plugins.instrument.session import session

    monkeypatch.setattr(session, "environment_parameters", {"n": 512.0})
    monkeypatch.setattr(session, "program_parameters", {})
    assert instrument.parameter("n", 100) == 512 and isinstance(instrument.parameter("n", 100), int)
    assert instrument.parameter("m", 2.5) == 2.5
    assert session.program_parameters == {"n": 512.0, "m": 2.5}


def test_aggregate_gives_sum_mean_min_max_over_ranks_with_absent_paths_as_zero():
    rank0 = (["main", "main->MPI_Send"], [row(time=2.0, visits=1, visit_time_min=2.0, visit_time_max=2.0),
                                          row(time=0.5, visits=4, visit_time_min=0.1, visit_time_max=0.2,
                                              bytes_sent=64)])
    rank1 = (["main"], [row(time=4.0, visits=1, visit_time_min=4.0, visit_time_max=4.0)])
    callpaths, stats = output.aggregate([rank0, rank1])
    assert callpaths == ["main", "main->MPI_Send"]
    assert stats["time"]["sum"].tolist() == [6.0, 0.5]
    assert stats["time"]["mean"].tolist() == [3.0, 0.25]
    assert stats["time"]["min"].tolist() == [2.0, 0.0]  # rank 1 never sent: 0
    assert stats["bytes_sent"]["max"].tolist()[1] == 64 and math.isnan(stats["bytes_sent"]["max"][0])
    # the shortest visit is over the ranks that visited
    assert stats["visit_time_min"]["min"].tolist() == [2.0, 0.1]
    assert stats["visit_time_min"]["mean"].tolist() == [3.0, 0.1]
    _, three = output.aggregate([rank0, rank1], n_ranks=3)  # a third rank without any data
    assert three["visits"]["mean"].tolist() == [2 / 3, 4 / 3]


def test_a_record_is_one_line_of_strict_json():
    callpaths, stats = output.aggregate([(["a"], [row(time=1.5, visits=2, visit_time_min=0.5, visit_time_max=1.0)])])
    record = output.make_record(run="r1", callpaths=callpaths, stats=stats, parameters={"p": 1.0, "n": 0.5},
                                repetition=0, size=1, rank=None, ranks=1)
    line = output.encode(record)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    decoded = json.loads(line)
    assert decoded["parameters"] == {"p": 1, "n": 0.5}
    assert decoded["values"]["visits"] == {"sum": [2], "mean": [2], "min": [2], "max": [2]}
    assert "bytes_sent" not in decoded["values"]


def test_fragment_names_keep_the_reader_suffix():
    assert output.fragment_path("runs/app.extrap.jsonl", "r7", 3) == "runs/app.r7.rank3.extrap.jsonl"
    assert output.fragment_path("out.jsonl", "r7", 0) == "out.r7.rank0.extrap.jsonl"
    assert output.fragment_path("data", "r7", 1) == "data.r7.rank1.extrap.jsonl"


def _append_many(path: str, writer: int) -> None:
    for k in range(100):
        output.append_line(path, output.encode({"writer": writer, "k": k, "pad": "x" * 5000}))


def test_concurrent_appends_never_interleave_lines(tmp_path):
    path = str(tmp_path / "deep" / "runs.extrap.jsonl")
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    processes = [context.Process(target=_append_many, args=(path, w)) for w in range(4)]
    for p in processes:
        p.start()
    for p in processes:
        p.join()
    lines = [json.loads(line) for line in open(path)]
    assert len(lines) == 400
    assert sorted((d["writer"], d["k"]) for d in lines) == [(w, k) for w in range(4) for k in range(100)]


def test_a_run_appended_after_a_line_cut_short_starts_a_line_of_its_own(tmp_path):
    # the run was glued to the torn line a write cut short left (a full disk, a kill): both lines were lost and the
    # file no longer read ("not a JSON object")
    path = tmp_path / "runs.extrap.jsonl"
    path.write_bytes(b'{"run": "a"}\n{"run": "b", "val')
    output.append_line(path, b'{"run": "c"}\n')
    output.append_line(path, b'{"run": "d"}\n')
    assert path.read_bytes() == b'{"run": "a"}\n{"run": "b", "val\n{"run": "c"}\n{"run": "d"}\n'


def test_atomic_writes_leave_no_temporary_files(tmp_path):
    target = tmp_path / "f.extrap.jsonl"
    output.write_atomically(target, b"one\n")
    output.write_atomically(target, b"two\n")
    assert target.read_bytes() == b"two\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.extrap.jsonl"]


def test_snapshot_helper_shows_this_process(clean):
    with instrument.region("look"):
        pass
    assert instrument.snapshot()["look"]["visits"] == 1
    assert np.isnan(regions.snapshot()[1][0][regions.METRICS.index("bytes_sent")])


def test_the_record_names_the_parameters_given_that_the_program_never_read(tmp_path):
    # the shim records every EXTRAP_PARAM_<NAME> it was given, read or not; "unread" tells them apart, so that a
    # sweep can say which --param the program never takes (read through instrument.parameter or os.environ is read)
    program = tmp_path / "reads.py"
    program.write_text("import os\n\nfrom extrap_plugins import instrument\n\nn = instrument.parameter('n', 1)\n"
                       "m = os.environ.get('EXTRAP_PARAM_M')\nwith instrument.region('work'):\n    pass\n")
    result = run_program([sys.executable, str(program)], tmp_path, EXTRAP_PARAM_N="3", EXTRAP_PARAM_M="4",
                         EXTRAP_PARAM_SIZE="5", EXTRAP_PARAM_NAMES="size,m,n")
    assert result.returncode == 0, result.stderr
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert record["parameters"] == {"p": 1, "size": 5, "m": 4, "n": 3}
    assert record["unread"] == ["size"]
    (tmp_path / "out.extrap.jsonl").unlink()
    assert run_program([sys.executable, str(program)], tmp_path).returncode == 0
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert record["parameters"] == {"p": 1, "n": 1} and "unread" not in record  # no sweep, nothing to tell
