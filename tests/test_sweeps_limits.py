"""Large sweeps at the limits of the machine: more --jobs than cores, a full scratch folder."""

from __future__ import annotations

import errno
import os
import pathlib

import pytest

from extrap_plugins import cli, executors

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

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pathlib.Path, "write_text", full)
    assert cli.main(["model", data, "--stream", "on", "--scratch", str(scratch), "--executor", "serial"]) == 2
    assert capsys.readouterr() == ("", (
        f"extrap-plugins: error: {scratch}: cannot write the measurements of {data} into the scratch folder: "
        f"{os.strerror(errno.ENOSPC)} (streaming writes 20 bytes there per measured value); give --scratch a folder "
        "with more room\n"))
    assert os.listdir(scratch) == []  # nothing left behind


def test_a_scratch_folder_that_fills_up_while_a_column_is_written_is_said_to_be_full(tmp_path, capsys, monkeypatch):
    # numpy's tofile says a short write as "40 requested and 0 written" (no errno): a full disk was not said to be
    # full, nor what streaming needs there
    data, scratch = tidy_csv(tmp_path / "runs.csv"), tmp_path / "scratch"
    scratch.mkdir()
    mkdir = os.mkdir

    def run_folder_on_a_full_disk(path, *args, **kwargs):
        mkdir(path, *args, **kwargs)
        if os.path.basename(path) == "p000000":
            os.symlink("/dev/full", os.path.join(path, "value.bin"))

    monkeypatch.setattr(os, "mkdir", run_folder_on_a_full_disk)
    assert cli.main(["model", data, "--stream", "on", "--scratch", str(scratch), "--executor", "serial"]) == 2
    assert capsys.readouterr() == ("", (
        f"extrap-plugins: error: {scratch}: cannot write the measurements of {data} into the scratch folder: "
        f"{os.strerror(errno.ENOSPC)} (streaming writes 20 bytes there per measured value); give --scratch a folder "
        "with more room\n"))
    assert os.listdir(scratch) == []
