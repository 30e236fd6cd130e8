"""SIGTERM to an instrumented job (a scheduler's time limit, ``run --timeout``): nothing measured is lost."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time
import warnings

import pytest

import extrap_plugins
from extrap_plugins.errors import ExitStatus, ExtrapWarning
from extrap_plugins.instrument import sweep
from shim_helpers import PROGRAMS, clean_environment, records, wait_for, when_said



def start_job(mpiexec, folder: pathlib.Path, mode: str, processes: int = 3, **environment: str):
    ready = folder / "ready"
    command = [*mpiexec[:1], "-n", str(processes), *mpiexec[1:], sys.executable, str(PROGRAMS / "long.py"),
               str(ready), mode]
    env = clean_environment(EXTRAP_OUTPUT=str(folder / "out.extrap.jsonl"), EXTRAP_PARAM_N="7", **environment)
    job = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert job.poll() is None and time.monotonic() < deadline, job.communicate()
        time.sleep(0.05)
    time.sleep(0.2)
    return job


@pytest.mark.parametrize("mode", ["loop", "barrier"])
def test_sigterm_to_the_job_leaves_every_ranks_measurements_and_model_reads_them(mpiexec, tmp_path, mode):
    job = start_job(mpiexec, tmp_path, mode)
    os.killpg(job.pid, signal.SIGTERM)  # as a batch scheduler does: every process of the job
    _, err = job.communicate(timeout=60)
    fragments = sorted(tmp_path.glob("out.*.rank*.extrap.jsonl"))
    assert len(fragments) == 3, err
    for path in fragments:
        [record] = records(path)
        assert record["status"] == "terminated" and record["errors"][0].startswith("cut short by SIGTERM after ")
        assert "setup" in record["callpaths"]
    with pytest.warns(ExtrapWarning, match=r"run \S+ was cut short by SIGTERM after [\d.]+ s \(the job was ended "
                                            r"before it finished\): its measurements go up to the signal"):
        experiment = extrap_plugins.read(tmp_path)
    assert "setup" in [c.name for c in experiment.callpaths]


@pytest.mark.parametrize("where", ["exit gather", "MPI_Finalize"])
def test_sigterm_to_a_job_with_one_hung_rank_leaves_every_ranks_measurements(mpiexec, tmp_path, where):
    # ranks 0 and 2 have ended and wait for rank 1, first in the exit gather (EXTRAP_EXIT_TIMEOUT), then, having
    # written their own, in MPI_Finalize.  A signal in the gather ended them without writing anything; one in
    # MPI_Finalize ended them at once (the interpreter had dropped the handler), and the launcher killed rank 1
    # before it wrote the measurements it had
    job = start_job(mpiexec, tmp_path, "straggler", EXTRAP_EXIT_TIMEOUT="60" if where == "exit gather" else "1")
    deadline = time.monotonic() + 60
    if where == "MPI_Finalize":
        while len(list(tmp_path.glob("out.*.rank*.extrap.jsonl"))) < 2:
            assert job.poll() is None and time.monotonic() < deadline, job.communicate()
            time.sleep(0.05)
    time.sleep(1.0)
    os.killpg(job.pid, signal.SIGTERM)
    _, err = job.communicate(timeout=60)
    fragments = {records(path)[0]["rank"]: records(path)[0] for path in tmp_path.glob("out.*.rank*.extrap.jsonl")}
    assert sorted(fragments) == [0, 1, 2], err
    assert fragments[1]["status"] == "terminated" and "setup->wait" not in fragments[1]["callpaths"]
    assert {"setup", "wait"} <= set(fragments[1]["callpaths"])
    ended = "terminated" if where == "exit gather" else "partial"
    assert [fragments[r]["status"] for r in (0, 2)] == [ended, ended]
    with pytest.warns(ExtrapWarning, match=r"run \S+ was cut short by SIGTERM after [\d.]+ s"):
        experiment = extrap_plugins.read(tmp_path)
    assert {"setup", "wait"} <= {c.name for c in experiment.callpaths}


def test_a_sweep_timeout_keeps_the_measurements_of_the_launch(mpiexec, tmp_path, no_extrap_environment, capsys,
                                                              monkeypatch):
    monkeypatch.setattr(sweep, "STILL_RUNNING", 1.0)  # (a minute in use)
    # the sweep's clock is held at its first line until every rank has measured its setup (a loaded machine starts
    # the ranks slowly, 1.5 s at a load of 10 on two cores): --timeout ends the launch only after that
    when_said(monkeypatch, "still running after 1 s", lambda: wait_for((tmp_path / "ready").exists))
    status = sweep.main(["--np", "2", "--timeout", "4", "-o", str(tmp_path), "--", sys.executable,
                         str(PROGRAMS / "long.py"), str(tmp_path / "ready")])
    assert status == ExitStatus.RUNS_FAILED
    said = capsys.readouterr().err.splitlines()
    # while it runs, the launch is said at 1 s, 2 s, ... with where its output goes, until --timeout ends it
    log = tmp_path / "logs" / "p2.r0.log"
    assert [line for line in said if "still running" in line] == [
        f"extrap-plugins run: [1/1] p=2 repetition 0: still running after 1 s (its output: {log}; --timeout ends it "
        "after 4 s)",
        f"extrap-plugins run: [1/1] p=2 repetition 0: still running after 2 s (its output: {log}; --timeout ends it "
        "after 4 s)",
        "extrap-plugins run: [1/1] p=2 repetition 0: FAILED: still running after 4 s (--timeout)",
        f"extrap-plugins run:   p=2 repetition 0: still running after 4 s (--timeout); log: {log}"]  # the summary
    fragments = sorted(tmp_path.glob("long.*.rank*.extrap.jsonl"))
    assert len(fragments) == 2
    assert {records(p)[0]["status"] for p in fragments} == {"terminated"}
    # the runner knows the launch failed: its measurements stay, but models skip them and a new start runs it again
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing else was measured: the run's error alone, no warning repeating it
        with pytest.raises(extrap_plugins.InputError) as error:
            extrap_plugins.read(tmp_path)
    assert str(error.value) == f"{fragments[0]}:1: ended by --timeout after 4 s (extrap-plugins run)"
    assert sweep.measured_launches(tmp_path / "long.extrap.jsonl", []) == set()


def test_sigterm_to_a_single_process_without_mpi_leaves_its_measurements(tmp_path):
    # the signal reaches the main thread's handler and the wakeup watcher alike: the second must not end the
    # process while the first writes (it did, and nothing was written, with one rank)
    program = tmp_path / "alone.py"
    program.write_text("import pathlib, sys, time\nfrom extrap_plugins import instrument\n"
                       "with instrument.region('setup'):\n    time.sleep(0.05)\n"
                       "pathlib.Path(sys.argv[1]).write_text('ready')\n"
                       "while True:\n    with instrument.region('work'):\n        time.sleep(0.01)\n")
    ready = tmp_path / "ready"
    env = clean_environment(EXTRAP_OUTPUT=str(tmp_path / "out.extrap.jsonl"))
    job = subprocess.Popen([sys.executable, str(program), str(ready)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert job.poll() is None and time.monotonic() < deadline, job.communicate()
        time.sleep(0.05)
    job.send_signal(signal.SIGTERM)
    _, err = job.communicate(timeout=60)
    # ended by the signal, or by the watcher thread's exit status for it, whichever thread wrote
    assert job.returncode in (-signal.SIGTERM, 128 + signal.SIGTERM)
    [fragment] = tmp_path.glob("out.*.rank*.extrap.jsonl")
    [record] = records(fragment)
    assert record["status"] == "terminated" and {"setup", "work"} <= set(record["callpaths"]), err


def test_sigterm_to_the_sweep_ends_the_launch_group(mpiexec, tmp_path, no_extrap_environment):
    command = [sys.executable, "-m", "extrap_plugins", "run", "--np", "2", "-o", str(tmp_path), "--",
               sys.executable, str(PROGRAMS / "long.py"), str(tmp_path / "ready")]
    env = clean_environment()
    runner = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "ready").exists():
        assert runner.poll() is None and time.monotonic() < deadline, runner.communicate()
        time.sleep(0.05)
    runner.send_signal(signal.SIGTERM)
    _, err = runner.communicate(timeout=60)
    assert runner.returncode == 130, err
    assert "extrap-plugins: interrupted" in err
    # no mpiexec, no rank left running (long.py runs until it is ended); a rank may still be writing its
    # measurements when the runner has returned, so they are given time to end (a fixed 0.5 s before: little on a
    # loaded machine)
    def leftover() -> str:
        return subprocess.run(["pgrep", "-f", str(tmp_path / "ready")], capture_output=True, text=True).stdout.strip()

    assert wait_for(lambda: not leftover(), seconds=30), leftover()
    fragments = sorted(tmp_path.glob("long.*.rank*.extrap.jsonl"))
    assert len(fragments) == 2
    # the launch was cut short: its measurements stay, but models skip them and `run` or `autotune` started again
    # runs it again (autotune's models took the cut-short times, and the loop never ran the point again)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing else was measured: the run's error alone, no warning repeating it
        with pytest.raises(extrap_plugins.InputError) as error:
            extrap_plugins.read(tmp_path)
    assert str(error.value) == f"{fragments[0]}:1: interrupted (Ctrl-C or SIGTERM to extrap-plugins)"
    assert sweep.measured_launches(tmp_path / "long.extrap.jsonl", []) == set()
