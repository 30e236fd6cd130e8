"""Large sweeps at the limits of the machine: more --jobs than cores, a full scratch folder, a batch job's end."""

from __future__ import annotations

import errno
import os
import pathlib
import tempfile

import pytest

from extrap_plugins import cli, engine, executors, streaming

P = (4, 8, 16, 32, 64)


def tidy_csv(path: pathlib.Path) -> str:
    lines = ["p,callpath,metric,value"] + [f"{p},main,time,{1 + 0.5 * p}" for p in P]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_more_jobs_than_cores_start_as_many_workers_as_cores(monkeypatch):
    # a forking pool starts all its workers at once: --jobs 1000 on two cores forked a thousand processes (minutes,
    # gigabytes, Ctrl-C unheard), and --jobs 99999999 would have tried to fork that many
    monkeypatch.setattr(executors, "available_cores", lambda: 2)
    with pytest.warns(UserWarning) as caught:
        pool = executors.create_executor("process", 99999999)
    pool.shutdown()
    assert pool._max_workers == 2
    assert [str(w.message) for w in caught] == [
        "--jobs 99999999 is more than the 2 cores here: 2 worker processes (more would only share the cores, each "
        "holding its own work in memory)"]
    for jobs, workers in ((None, 2), (1, 1), (2, 2)):
        pool = executors.create_executor("process", jobs)
        pool.shutdown()
        assert pool._max_workers == workers


@pytest.mark.parametrize("stream", ["off", "on"])
def test_huge_jobs_model_as_the_cores_do_with_one_warning(tmp_path, capsys, monkeypatch, stream):
    monkeypatch.setattr(executors, "available_cores", lambda: 2)
    data = tidy_csv(tmp_path / "runs.csv")
    common = ["model", data, "--export", "json", "--stream", stream, "--scratch", str(tmp_path)]
    assert cli.main([*common, "--executor", "serial"]) == 0
    reference = capsys.readouterr().out
    assert cli.main([*common, "--executor", "process", "--jobs", "1000"]) == 0
    out, err = capsys.readouterr()
    assert out == reference
    assert err.splitlines().count(
        "extrap-plugins: warning: --jobs 1000 is more than the 2 cores here: 2 worker processes (more would only "
        "share the cores, each holding its own work in memory)") == 1


def test_a_full_scratch_folder_is_named_with_the_run(tmp_path, capsys, monkeypatch):
    # it was "extrap-plugins: error: No space left on device": no folder, no run, nothing of streaming
    data, scratch = tidy_csv(tmp_path / "runs.csv"), tmp_path / "scratch"
    scratch.mkdir()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(streaming, "_write_raw", full)
    assert cli.main(["model", data, "--stream", "on", "--scratch", str(scratch), "--executor", "serial"]) == 2
    assert capsys.readouterr() == ("", (
        f"extrap-plugins: error: {scratch}: cannot write the measurements of {data} into the scratch folder: "
        f"{os.strerror(errno.ENOSPC)} (streaming writes 20 bytes there per measured value); give --scratch a folder "
        "with more room\n"))
    assert os.listdir(scratch) == []  # nothing left behind


def test_a_scratch_folder_that_fills_up_while_a_run_is_written_is_said_to_be_full(tmp_path, capsys, monkeypatch):
    # numpy's tofile says a short write as "40 requested and 0 written" (no errno): a full disk was not said to be
    # full, nor what streaming needs there
    data, scratch = tidy_csv(tmp_path / "runs.csv"), tmp_path / "scratch"
    scratch.mkdir()
    mkdtemp = tempfile.mkdtemp

    def first_run_on_a_full_disk(*args, **kwargs):
        folder = mkdtemp(*args, **kwargs)
        os.symlink("/dev/full", os.path.join(folder, "p000000"))
        return folder

    monkeypatch.setattr(tempfile, "mkdtemp", first_run_on_a_full_disk)
    assert cli.main(["model", data, "--stream", "on", "--scratch", str(scratch), "--executor", "serial"]) == 2
    assert capsys.readouterr() == ("", (
        f"extrap-plugins: error: {scratch}: cannot write the measurements of {data} into the scratch folder: "
        f"{os.strerror(errno.ENOSPC)} (streaming writes 20 bytes there per measured value); give --scratch a folder "
        "with more room\n"))
    assert os.listdir(scratch) == []


TERMINATED_WHILE_STREAMING = """
import os, signal, sys
from extrap_plugins import cli, streaming

fit = streaming.fit_streamed_block

def terminated(task):  # the batch job's time limit, as a block is modelled
    os.kill(os.getpid(), signal.SIGTERM)
    return fit(task)

streaming.fit_streamed_block = terminated
sys.exit(cli.main(sys.argv[1:]))
"""


def test_sigterm_while_streaming_removes_the_scratch_folder_as_ctrl_c_does(tmp_path):
    # a batch job's time limit (SIGTERM) killed the command outright: the scratch folder, as large as the sweep's
    # values, was left behind, where Ctrl-C removed it (in a process of its own: a SIGTERM must not reach pytest)
    import subprocess
    import sys

    data, scratch, output = tidy_csv(tmp_path / "runs.csv"), tmp_path / "scratch", tmp_path / "models.json"
    scratch.mkdir()
    output.write_text("kept\n")
    ended = subprocess.run([sys.executable, "-c", TERMINATED_WHILE_STREAMING, "model", data, "--stream", "on",
                            "--scratch", str(scratch), "--executor", "serial", "--export", "json", "-o", str(output)],
                           capture_output=True, text=True, timeout=120,
                           env={**os.environ, "EXTRAP_PLUGINS_NO_AUTOLOAD": "1"})
    assert (ended.returncode, ended.stdout, ended.stderr) == (130, "", "extrap-plugins: interrupted\n")
    assert os.listdir(scratch) == []
    assert output.read_text() == "kept\n"


def test_auto_models_many_blocks_of_one_streamed_file_in_worker_processes(tmp_path, capsys, monkeypatch):
    # auto chose the executor by the runs alone: one large file (one run) was modelled in this process, block after
    # block, twice as slow as in memory, where the blocks chose worker processes
    monkeypatch.setattr(executors, "available_cores", lambda: 2)
    monkeypatch.setattr(engine, "CHUNK_SERIES", 1)  # a block per call path: six blocks
    run = tmp_path / "runs.csv"
    run.write_text("p,callpath,metric,value\n" + "".join(f"{p},main->f{i},time,{1 + i * p}\n" for i in range(6)
                                                          for p in P))
    made = []
    create = executors.create_executor
    monkeypatch.setattr(executors, "create_executor", lambda kind, *args, **kwargs: made.append(kind) or
                        create(kind, *args, **kwargs))
    common = ["model", str(run), "--export", "json", "--scratch", str(tmp_path)]
    assert cli.main([*common, "--stream", "off"]) == 0
    reference = capsys.readouterr().out
    assert made == ["process"]  # in memory: six blocks fitted by workers
    made.clear()
    assert cli.main([*common, "--stream", "on"]) == 0
    assert capsys.readouterr().out == reference
    assert made == ["serial", "process"]  # one run read here, then six blocks fitted by workers


def test_a_missing_scratch_folder_set_in_the_environment_says_where_it_was_set(tmp_path, capsys, monkeypatch):
    # "/scratch/old: the scratch folder does not exist", though no --scratch was given: the variable, set long ago
    # in a job script, went unnamed
    gone = tmp_path / "gone"
    monkeypatch.setenv(streaming.SCRATCH_VARIABLE, str(gone))
    assert cli.main(["model", tidy_csv(tmp_path / "runs.csv"), "--stream", "on", "--executor", "serial"]) == 2
    assert capsys.readouterr() == ("", f"extrap-plugins: error: {gone}: the scratch folder (from "
                                       "$EXTRAP_PLUGINS_SCRATCH) does not exist\n")
    assert cli.main(["model", tidy_csv(tmp_path / "runs.csv"), "--stream", "on", "--executor", "serial",
                     "--scratch", str(gone)]) == 2  # given here: named as given
    assert capsys.readouterr().err == f"extrap-plugins: error: {gone}: the scratch folder does not exist\n"


def test_each_run_is_one_file_in_the_scratch_folder(tmp_path, capsys, monkeypatch):
    # each run was a folder of four to six files: where creating and removing files is slow (a parallel file system;
    # this machine's disk too), 5,000 runs spent 30 s of 61 s removing the scratch folder, past a batch system's
    # grace time after SIGTERM
    runs = [tmp_path / f"run{p}.csv" for p in P]
    for p, run in zip(P, runs):
        run.write_text("p,callpath,metric,value\n" + "".join(f"{p},main->f{i},{m},{1 + i * p}\n" for i in range(3)
                                                              for m in ("time", "visits")))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    seen = []
    fit = streaming.fit_streamed_block

    def looking(task):
        seen.extend(sorted(str(p.relative_to(scratch)).split(os.sep, 1)[1] for p in scratch.rglob("*")
                           if p.parent != scratch))
        return fit(task)

    monkeypatch.setattr(streaming, "fit_streamed_block", looking)
    assert cli.main(["model", *map(str, runs), "--stream", "on", "--scratch", str(scratch), "--executor", "serial",
                     "--export", "json"]) == 0
    streamed = capsys.readouterr().out
    assert seen == [f"p{i:06d}" for i in range(len(P))]
    assert os.listdir(scratch) == []
    assert cli.main(["model", *map(str, runs), "--stream", "off", "--export", "json"]) == 0
    assert capsys.readouterr().out == streamed


def test_ctrl_c_as_a_run_s_file_is_opened_says_only_interrupted(tmp_path, capsys, monkeypatch):
    # creating a file is most of a small run's time: Ctrl-C then came as open() returned, before the with block,
    # and the interrupt was followed by "warning: unclosed file <_io.BufferedWriter name='.../p000456'>"
    data, scratch = tidy_csv(tmp_path / "runs.csv"), tmp_path / "scratch"
    scratch.mkdir()

    def interrupted_as_it_returns(opener):
        def opening(path, *args, **kwargs):
            opened = opener(path, *args, **kwargs)
            if os.path.basename(str(path)) == "p000000":  # nothing holds what was opened, as in the real race
                if isinstance(opened, int):
                    os.close(opened)  # (a descriptor is left open silently: closed here to keep the test clean)
                del opened
                raise KeyboardInterrupt
            return opened
        return opening

    monkeypatch.setattr(streaming, "open", interrupted_as_it_returns(open), raising=False)
    monkeypatch.setattr(os, "open", interrupted_as_it_returns(os.open))
    assert cli.main(["model", data, "--stream", "on", "--scratch", str(scratch), "--executor", "serial"]) == 130
    assert capsys.readouterr() == ("", "extrap-plugins: interrupted\n")
    assert os.listdir(scratch) == []
