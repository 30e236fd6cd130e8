"""The closed loop under a real mpiexec: suggest, run, model until the rule holds or the budget is spent."""

from __future__ import annotations

import contextlib
import dataclasses
import html
import math
import json
import os
import pathlib
import socket
import sys
import types
import warnings

import pytest

import extrap_plugins
from extrap_plugins import autotune, cli
from extrap_plugins.errors import InputError, RunsFailed
from extrap_plugins.experiment import Experiment
from shim_helpers import PROGRAMS, records

JACOBI = pathlib.Path(__file__).resolve().parents[2] / "examples" / "jacobi" / "jacobi.py"
PROGRAM = [sys.executable, str(JACOBI), "--iterations", "2", "--check", "1", "--rows", "4"]


@pytest.fixture
def no_extrap_environment(monkeypatch):
    for key in list(os.environ):
        if key.startswith("EXTRAP_"):
            monkeypatch.delenv(key)


def test_the_loop_ends_by_itself_within_budget_and_resumes(mpiexec, tmp_path, no_extrap_environment, capsys):
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2,3", "--param", "n=16,32,64", "--budget", "60%", "--repetitions", "1",
            "--metric", "bytes_sent", "--callpath", "main->halo_exchange", "-o", str(runs), "--", *PROGRAM]
    assert cli.main(args) == cli.ExitStatus.OK
    captured = capsys.readouterr()
    # lines of three values through (p=1, n=16) and one point off them: 10 of the full factorial's 18 units
    assert captured.out.splitlines()[0] == ("done: the models are within tolerance at the target "
                                            "(55.6% of the full factorial's cost)")
    # the base's first run alone (the names and the metrics' kind come from it), then the rest of the base
    assert ("extrap-plugins autotune: round 1: the base design's first run, alone (it tells what --metric and "
            "--callpath match and whether the metrics are exact counts): 1 point × 1 repetition (p=1, n=16)"
            in captured.err)
    assert "extrap-plugins autotune: round 2: the base design: 5 points × 1 repetition" in captured.err
    assert captured.err.count("note: p, n have fewer than 5 candidate values") == 1  # said once for both rounds
    assert captured.out.splitlines()[1].startswith("measured: 6 points, 6 runs with the repetitions, in 2 rounds; ")
    assert len(records(runs / "jacobi.extrap.jsonl")) == 6
    state = json.loads((runs / "autotune.json").read_text())
    assert state["status"] == "done" and "measured_before" not in state
    assert [(run["point"]["p"], run["point"]["n"], run["why"]) for r in state["rounds"][:2] for run in r["runs"]] == [
        (1, 16, "corner"), (1, 32, "line n"), (1, 64, "line n"), (2, 16, "line p"), (3, 16, "line p"),
        (2, 32, "off the lines (additive or multiplicative?)")]
    report = (runs / "autotune.html").read_text()
    assert "Points measured, and why" in report and "off the lines (additive or multiplicative?)" in report
    assert "<td>before</td>" not in report  # every run in the folder was planned by a round
    assert "<li>rounds: 2 that measured, then 1 assessment; " in report  # (it said "rounds: 3", the summary 2)
    assert (runs / "models.html").exists()
    assert not (runs / ".autotune-plan.json").exists()  # the sweep's copy of the last round's plan was left behind

    # The final models are those of `model` on the same runs.
    told = {}

    @contextlib.contextmanager
    def assessing(description):  # what the CLI's progress bar gets: the series announced and fitted
        told[description] = []
        yield lambda fitted, more: told[description].append((fitted, more))

    result = autotune.autotune({"p": [1, 2, 3], "n": [16, 32, 64]}, PROGRAM, runs, budget="60%", repetitions=1,
                               metrics=["bytes_sent"], callpaths=["main->halo_exchange"], progress=False,
                               assessing=assessing)
    assert len(records(runs / "jacobi.extrap.jsonl")) == 6  # resumed: nothing measured twice
    # the verdict of round 3 (no runs) is assessed again, not followed by a round 4 that measures nothing either
    assert list(told) == ["round 3: assessing the models"]
    assert [r["round"] for r in json.loads((runs / "autotune.json").read_text())["rounds"]] == [1, 2, 3]
    calls = told["round 3: assessing the models"]
    assert sum(more for _, more in calls) == sum(fitted for fitted, _ in calls) > 0
    assert result.status == "done" and result.share <= 0.6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = extrap_plugins.model(extrap_plugins.read(runs))
    assert [(m.callpath, m.metric, m.function) for m in result.model_set] == [
        (m.callpath, m.metric, m.function) for m in again]
    halo = result.model_set.get("main->halo_exchange", "bytes_sent")
    assert halo.predict({"p": 5, "n": 128}) == pytest.approx(2 * 8 * 128 * 2)
    capsys.readouterr()
    assert cli.main(args) == cli.ExitStatus.OK  # and once more from the command line: still three rounds
    captured = capsys.readouterr()
    assert ("extrap-plugins autotune: the loop ended after 3 rounds (done): its last round is assessed again with the "
            "settings given; measured runs are reused\n") in captured.err
    assert captured.out.splitlines()[1].startswith("measured: 6 points, 6 runs with the repetitions, in 2 rounds; ")


def test_a_rule_that_cannot_hold_ends_when_the_budget_is_spent(mpiexec, tmp_path, no_extrap_environment, capsys):
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2,3", "--param", "n=16,32,64", "--budget", "70%", "--repetitions", "1",
            "--metric", "time", "--callpath", "main", "--tolerance", "0.0001", "-o", str(runs), "--", *PROGRAM]
    assert cli.main(args) == cli.ExitStatus.OK
    out = capsys.readouterr().out
    assert out.startswith("stopped: the budget left buys no further run that narrows an interval as printed, before the rule holds (")
    state = json.loads((runs / "autotune.json").read_text())
    spent = sum(run["cost"] for r in state["rounds"] for run in r["runs"])
    assert spent <= 0.7 * 18 and state["status"] == "budget"
    # the runs bought after the base serve main (whether any narrows its interval as printed, and is bought, depends
    # on the times this machine measures)
    narrowing = [run for r in state["rounds"][1:] for run in r["runs"] if run["why"].startswith("narrows main ±")]
    assert all(run["serves"][0]["kernel"] == "main" for run in narrowing)


def test_autotune_needs_a_program(tmp_path, capsys):
    assert cli.main(["autotune", "--param", "p=1,2", "-o", str(tmp_path / "r")]) == cli.ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == ("extrap-plugins: error: no program to run: give it after --, for example: "
                                       "-- python app.py\n")


@pytest.mark.parametrize("program, message", [
    (["no-such-program"], "the program 'no-such-program': no such program on the PATH"),
    (["./no/such/binary"], "the program './no/such/binary': no such file"),
    (["python", "missing.py"], "the script 'missing.py': no such file (from {cwd})"),
    (["python", "-m", "extrap_plugins.instrument", "missing.py"], "the script 'missing.py': no such file (from {cwd})"),
])
def test_a_program_that_cannot_start_is_one_line_before_anything_runs(tmp_path, monkeypatch, capsys, program,
                                                                      message):
    monkeypatch.chdir(tmp_path)
    for command in (["autotune", "--param", "p=1,2", "--param", "n=1,2"], ["run", "--np", "1,2"]):
        assert cli.main([*command, "-o", "runs", "--", *program]) == cli.ExitStatus.BAD_INPUT
        assert capsys.readouterr().err.splitlines()[-1].endswith(f"error: {message.format(cwd=tmp_path)}")
    assert not (tmp_path / "runs").exists()


def test_a_target_no_base_design_can_avoid_stops_the_loop_before_anything_runs(tmp_path, capsys):
    assert cli.main(["autotune", "--param", "n=1,2,4", "--target", "n=4", "-o", str(tmp_path / "runs"), "--",
                     "python", "a.py"]) == cli.ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (
        "extrap-plugins: error: every line of 3 values the base design could measure runs through (n=4), which is "
        "the target (or excluded) and never measured: give n more candidate values with --param, or another "
        "--target\n")
    assert not (tmp_path / "runs").exists()


def test_a_misspelt_modeler_option_stops_the_loop_before_anything_runs(tmp_path, capsys):
    launched = []
    assert cli.main(["autotune", "--param", "p=1,2,3,4,5", "--option", "max_term=2", "-o", str(tmp_path / "runs"),
                     "--", "python", "a.py"]) == cli.ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (
        "extrap-plugins: error: modeler 'default' has no option 'max_term'; its options are: exponents, "
        "log_exponents, max_terms, negative_exponents, criterion, improvement, weighting, measure, selection, "
        "outlying_points\n")
    assert not (tmp_path / "runs").exists()
    with pytest.raises(InputError, match="unknown modeler 'nope'"):
        autotune.autotune({"p": [1, 2, 3, 4, 5]}, ["python", "a.py"], tmp_path / "api", modeler="nope",
                          measure_runs=lambda runs, folder: launched.append(runs) or True)
    assert launched == [] and not (tmp_path / "api").exists()


@pytest.mark.parametrize("params, message", [
    (["p=0,1,2"], "--param p: p is the process count: expected positive whole numbers, got 0"),
    (["p=1,2.5,4"], "--param p: p is the process count: expected positive whole numbers, got 2.5"),
    (["p=1,2", "--param", "my-n=1,2"], "--param 'my-n': the program receives it as EXTRAP_PARAM_<NAME>: expected an identifier "
                            "such as n"),
    (["p=1,2", "--budget", "12q"], "--budget '12q': expected a share of the full factorial cost (15% or 0.15), a cost "
                                   "in the cost model's units (400u) or a number of points (20)"),
    (["p=1,2", "--target", "q=4"], "target 'q=4': unknown parameter 'q'; the parameters are p"),
    (["p=1,2", "--cost", "z"], "--cost 'z': 'z' is neither a parameter (p), time nor a number; expected a product "
                               "such as 'p*n', 'p^2' or 'p*time', or 'uniform'"),
    (["p=1,2", "--repetitions", "0"], "--repetitions 0: expected a whole number >= 1"),
    (["N=1,2,3", "--param", "n=10,20,30"],  # both reached the program as N: points run twice, then a crash
     "--param N and --param n reach the program as one variable, EXTRAP_PARAM_N: rename one"),
    (["p=1,2", "--timeout", "0"], "--timeout must be positive, got 0.0"),
    (["p=1,2", "--mpiexec", "/no/such/mpiexec"], "--mpiexec '/no/such/mpiexec': no such executable"),
])
def test_settings_are_rejected_before_the_folder_is_made_or_anything_runs(tmp_path, capsys, params, message):
    args = ["--param", params[0], *params[1:]]
    assert cli.main(["autotune", *args, "-o", str(tmp_path / "runs"), "--", "python", "a.py"]) == \
        cli.ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == f"extrap-plugins: error: {message}\n"
    assert not (tmp_path / "runs").exists()


def test_a_folder_with_another_program_s_measurements_is_refused_before_anything_runs(mpiexec, tmp_path, capsys):
    # the loop reads the whole folder: other.py's points would count as measured for a.py
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "other.extrap.jsonl").write_text("")
    (runs / "a.extrap.jsonl").write_text("")  # a.py's own, and its per-rank files, are fine
    (runs / "a.p2.r0.1234.rank0.extrap.jsonl").write_text("")
    assert cli.main(["autotune", "--param", "p=1,2", "--param", "n=1,2", "-o", str(runs), "--", "python", "a.py"]) \
        == cli.ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins: error: {runs}: holds measurements of another program "
                                       f"(other.extrap.jsonl), which the loop would count as a.extrap.jsonl's; give "
                                       f"a new -o folder\n")
    assert not (runs / "logs").exists()


def _resume_from(tmp_path, state: dict) -> tuple[pathlib.Path, int]:
    """``autotune`` over p, n = 1, 2 of a program doing nothing, started on a folder whose state file is ``state``:
    the folder and the exit status."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "autotune.json").write_text(json.dumps({"format": "extrap-plugins/autotune", "version": 1, **state}))
    program = tmp_path / "a.py"
    program.write_text("")
    return runs, cli.main(["autotune", "--param", "p=1,2", "--param", "n=1,2", "-o", str(runs), "--", "python",
                           str(program)])


def test_a_folder_tuned_over_other_parameters_is_not_resumed(tmp_path, capsys):
    runs, status = _resume_from(tmp_path, {"parameters": ["p", "m"], "rounds": []})
    assert status == cli.ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins: error: {runs / 'autotune.json'}: cannot resume: the folder "
                                       f"was tuned over ['p', 'm'], now ['p', 'n']; use another -o folder\n")


@pytest.mark.parametrize("rounds, message", [
    ({}, '"rounds" must be a list'),
    ([{"round": "x"}], 'round 1: expected "round" (a whole number), "status" and "share" (a number)'),
    ([{"round": 1, "status": "base", "share": 0.1, "widths": {"main": "wide"}}],
     'round 1: "runs" and "notes" must be lists, "widths" numbers by kernel'),
    ([{"round": 1, "status": "base", "share": 0.1, "runs": [{"point": {"p": "a"}}]}],
     "round 1, run 1: the point has ['p'], expected the parameters ['p', 'n']"),
    ([{"round": 1, "status": "base", "share": 0.1, "runs": [{"point": {"p": 1, "n": 1}, "repetitions": 0,
                                                              "cost": 1}]}],
     "round 1, run 1: repetitions must be a whole number from 1 to 1000, got 0"),
    ([{"round": 1, "status": "base", "share": 0.1, "runs": [{"point": {"p": 1, "n": 1}, "repetitions": 10**9,
                                                              "cost": 1}]}],  # it filled the memory
     "round 1, run 1: repetitions must be a whole number from 1 to 1000, got 1000000000"),
])
def test_a_state_file_edited_by_hand_ends_the_loop_with_one_line(tmp_path, capsys, rounds, message):
    # each of these was an internal error (KeyError, ValueError) with exit status 1
    runs, status = _resume_from(tmp_path, {"parameters": ["p", "n"], "status": "running", "rounds": rounds})
    assert status == cli.ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins: error: {runs / 'autotune.json'}: cannot resume: "
                                       f"{message}\n")


def test_an_interrupted_round_is_finished_first_when_the_loop_starts_again(mpiexec, tmp_path, no_extrap_environment,
                                                                           capsys):
    runs = tmp_path / "runs"
    settings = dict(budget="60%", repetitions=2, metrics=["bytes_sent"], callpaths=["main->halo_exchange"])
    sweep_runner = autotune._sweep_runner(PROGRAM, None, (), None)

    launched = []

    def interrupted(planned, folder):  # three runs of the base design, then Ctrl-C
        runs = planned[:3 - len(launched)]
        launched.extend(runs)
        sweep_runner(runs, folder)
        if len(launched) == 3:
            raise KeyboardInterrupt
        return True

    with pytest.raises(KeyboardInterrupt):
        autotune.autotune({"p": [1, 2, 3], "n": [16, 32, 64]}, PROGRAM, runs, measure_runs=interrupted, **settings)
    assert len(records(runs / "jacobi.extrap.jsonl")) == 3 * 2
    assert json.loads((runs / "autotune.json").read_text())["status"] == "running"
    capsys.readouterr()

    result = autotune.autotune({"p": [1, 2, 3], "n": [16, 32, 64]}, PROGRAM, runs, **settings)
    err = capsys.readouterr().err
    # round 1 was the base's first run alone, round 2 the rest of the base
    assert "extrap-plugins autotune: round 2 did not finish: measuring what it left out (3 points)\n" in err
    assert "already measured" not in err  # the runner's resume line is the loop's to say
    assert result.status == "done" and (result.points, result.runs) == (6, 12)
    assert len(records(runs / "jacobi.extrap.jsonl")) == 12  # each base run twice, none three times
    assert str(result).splitlines()[1].startswith("measured: 6 points, 12 runs with the repetitions, in 2 rounds; ")
    assert repr(result) == ("<AutotuneResult done: done: the models are within tolerance at the target "
                            f"({result.share:.1%} of the full factorial's cost); 6 points in {runs}>")


def test_a_round_stopped_after_its_last_run_is_not_measured_again(mpiexec, tmp_path, no_extrap_environment, capsys):
    # Ctrl-C after the base design's runs, while the next round is assessed: the state still says "running"
    runs = tmp_path / "runs"
    settings = dict(budget="60%", repetitions=1, metrics=["bytes_sent"], callpaths=["main->halo_exchange"])
    sweep_runner = autotune._sweep_runner(PROGRAM, None, (), None)

    calls = []

    def stopped_after(planned, folder):  # round 1: the first run alone (the names are checked on it); 2: the rest
        sweep_runner(planned, folder)
        calls.append(len(planned))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return True

    with pytest.raises(KeyboardInterrupt):
        autotune.autotune({"p": [1, 2, 3], "n": [16, 32, 64]}, PROGRAM, runs, measure_runs=stopped_after, **settings)
    assert json.loads((runs / "autotune.json").read_text())["status"] == "running"
    measured = len(records(runs / "jacobi.extrap.jsonl"))
    assert calls == [1, 5] and measured == 6
    capsys.readouterr()

    result = autotune.autotune({"p": [1, 2, 3], "n": [16, 32, 64]}, PROGRAM, runs, **settings)
    err = capsys.readouterr().err
    assert "did not finish" not in err and "already measured" not in err and "nothing to run" not in err
    assert "resuming after 2 rounds: measured runs are reused\n" in err
    assert result.status == "done" and len(records(runs / "jacobi.extrap.jsonl")) == measured


def test_a_failing_launch_stops_the_loop_with_the_status_of_failed_runs(mpiexec, tmp_path, no_extrap_environment,
                                                                         capsys):
    # the program exits 3 for n = 2 (a fault of the measured program, not of ours: exit status 4, not 1)
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2,3", "--param", "n=1,2,3", "--budget", "60%", "--repetitions", "1",
            "-o", str(runs), "--", sys.executable, str(PROGRAMS / "sweepable.py")]
    assert cli.main(args) == cli.ExitStatus.RUNS_FAILED
    captured = capsys.readouterr()
    # the share is what the runs that succeeded cost, (1, 1), (1, 3), (2, 1) and (3, 1): 7 of the full factorial's 18
    # (it was the share of a fresh plan's runs beside them)
    assert captured.out.startswith("stopped: a launch failed (38.9% of the full factorial's cost)\n")
    assert captured.out.splitlines()[2] == (f"a launch failed at (p=1, n=2), (p=2, n=2) (see {runs / 'logs'}); fix the "
                                            "program, or give --param values that leave these points out, and start "
                                            "again: measured runs are reused")
    assert "p=1 n=2 repetition 0: FAILED: exit status 3" in captured.err
    assert json.loads((runs / "autotune.json").read_text())["status"] == "failed"
    assert ("<tr><td>1</td><td>p=1, n=2</td><td>0 of 1</td><td>1</td><td>line n (not measured: a launch failed, or "
            "the point is no candidate any more)</td></tr>") in (runs / "autotune.html").read_text()

    # started again without n = 2, the loop leaves the failed run out and goes on
    args[4] = "n=1,3"
    assert cli.main(args) == cli.ExitStatus.OK
    err = capsys.readouterr().err
    assert ("extrap-plugins autotune: round 1's runs at (p=1, n=2), (p=2, n=2) are no candidates now (--param): left "
            "out\n") in err
    assert "repetition 0: FAILED" not in err
    assert json.loads((runs / "autotune.json").read_text())["status"] != "failed"


def test_a_launch_ended_by_the_timeout_is_measured_again_when_the_loop_resumes(mpiexec, tmp_path, monkeypatch,
                                                                             no_extrap_environment, capsys):
    # a program measured unchanged (the launcher) that runs 60 s at n = 3: the first loop ends it at 10 s; its
    # cut-short values are no repetition, and the resumed loop (a longer timeout) measures the point again.  The
    # timeout is far above a launch's time on a loaded machine (three ranks: 1.5 s at a load of 10 on two cores; at
    # --timeout 2 a launch at n = 1 or 2 could be ended too, and the first loop leave out more than one point)
    program = tmp_path / "slow.py"
    program.write_text("import os, time\nfrom mpi4py import MPI\n"
                       "time.sleep(60 if os.environ['EXTRAP_PARAM_N'] == '3' and "
                       "not os.environ.get('FAST') else 0.01)\nMPI.COMM_WORLD.Barrier()\n")
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2,3", "--param", "n=1,2,3", "--budget", "60%", "--repetitions", "1",
            "--metric", "visits", "-o", str(runs), "--", sys.executable, "-m", "extrap_plugins.instrument",
            str(program)]
    assert cli.main([*args[:1], "--timeout", "10", *args[1:]]) == cli.ExitStatus.RUNS_FAILED
    assert "p=1 n=3 repetition 0: FAILED: still running after 10 s (--timeout)" in capsys.readouterr().err
    monkeypatch.setenv("FAST", "1")  # inherited by the launches
    assert cli.main(args) == cli.ExitStatus.OK
    err = capsys.readouterr().err
    assert "extrap-plugins autotune: round 2 did not finish: measuring what it left out (1 point)\n" in err
    with pytest.warns(extrap_plugins.ExtrapWarning) as caught:
        experiment = extrap_plugins.read(runs)
    [cut] = runs.glob("slow.p1.n3.r0.*.rank0.extrap.jsonl")  # the launch the first loop's --timeout ended
    assert [str(w.message) for w in caught] == [f"skipped: {cut}:1: ended by --timeout after 10 s (extrap-plugins run)"]
    at = experiment.coordinates[:, experiment.parameter_names.index("n")] == 3
    assert sorted(set(experiment.repetition[at & (experiment.coordinates[:, 0] == 1)].tolist())) == [0]


FAILS_AFTER_MEASURING = ("from mpi4py import MPI\nfrom extrap_plugins import instrument\n"
                         "comm = instrument.mpi.wrap(MPI.COMM_WORLD)\n"
                         "with instrument.region('main'):\n    comm.allreduce(1.0)\nraise SystemExit(3)\n")


@pytest.mark.parametrize("source", ["print('hello')", FAILS_AFTER_MEASURING], ids=["silent", "fails-after-measuring"])
def test_a_program_that_never_measures_stops_the_loop_with_one_line_and_the_status_of_failed_runs(
        mpiexec, tmp_path, no_extrap_environment, capsys, source):
    # a program that wrote its measurements and then failed, every time, ended with exit status 2 and "no complete
    # run to read (see the warnings)", the warnings not shown, and the state file said the loop was running
    runs = tmp_path / "runs"
    program = tmp_path / "program.py"
    program.write_text(source)
    args = ["autotune", "--param", "p=1,2", "--param", "n=1,2,3", "--budget", "60%", "--repetitions", "1",
            "-o", str(runs), "--", sys.executable, str(program)]
    assert cli.main(args) == cli.ExitStatus.RUNS_FAILED
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (f"extrap-plugins: error: {runs}: every launch failed, nothing was measured "
                                    f"(see {runs / 'logs'}); fix it and start again")
    assert "model them with" not in err
    assert json.loads((runs / "autotune.json").read_text())["status"] == "failed"


def test_max_steps_ends_the_loop_as_asked(mpiexec, tmp_path, no_extrap_environment, capsys):
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2,3", "--param", "n=16,32,64", "--budget", "70%", "--repetitions", "1",
            "--metric", "time", "--callpath", "main", "--tolerance", "0.0001", "--max-steps", "1", "-o", str(runs),
            "--", *PROGRAM]
    assert cli.main(args) == cli.ExitStatus.OK
    assert capsys.readouterr().out.startswith("stopped: --max-steps reached (")
    assert len(records(runs / "jacobi.extrap.jsonl")) == 1  # the base design's first run, alone
    assert not (runs / autotune.LOCK).exists()  # held while the loop ran, gone with it


def test_a_second_loop_on_a_folder_that_a_loop_is_tuning_ends_with_one_line(tmp_path, capsys):
    # two loops on one folder planned and launched the same runs and overwrote each other's autotune.json
    pytest.importorskip("fcntl", reason="no fcntl here: autotune runs without the lock")
    folder = tmp_path / "runs"
    folder.mkdir()
    args = ["autotune", "--param", "p=1,2", "--param", "n=1,2", "-o", str(folder), "--", sys.executable,
            str(PROGRAMS / "plain.py")]
    with autotune._tuning(folder):  # the first loop, in this process: an advisory lock of the system
        assert (folder / autotune.LOCK).read_text().startswith(f"process {os.getpid()} on ")
        assert cli.main(args) == cli.ExitStatus.BAD_INPUT
        err = capsys.readouterr().err
        assert err == (f"extrap-plugins: error: {folder}: another autotune is tuning this folder (process "
                       f"{os.getpid()} on {socket.gethostname()}); wait for it to end, or give another -o folder\n")
        assert sorted(p.name for p in folder.iterdir()) == [autotune.LOCK]  # nothing ran, nothing written
    assert not (folder / autotune.LOCK).exists()



def test_a_file_system_without_locks_leaves_the_loop_as_it_was(tmp_path, monkeypatch):
    # flock on some NFS mounts fails with ENOLCK: that is no other loop, and the loop runs without the lock
    import errno

    fcntl = pytest.importorskip("fcntl", reason="no fcntl here: autotune runs without the lock")

    def no_locks(stream, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    with autotune._tuning(tmp_path):
        assert not (tmp_path / autotune.LOCK).exists()


def test_the_progress_counts_points_and_their_repetitions():
    assert autotune._count([4] * 10) == "10 points × 4 repetitions"
    assert autotune._count([1]) == "1 point × 1 repetition"
    assert autotune._count([4, 4, 2]) == "3 points, 10 launches"


def test_a_budget_too_small_for_the_repetitions_buys_single_runs(mpiexec, tmp_path, no_extrap_environment, capsys):
    """Without --repetitions: the base design with the advised four runs a point would cost 55.6 % of the full
    factorial (four runs at each of 9 points, 72 units), more than 20 %; single runs keep the lines whole."""
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2,3", "--param", "n=16,32,64", "--budget", "20%",
            "--metric", "bytes_sent", "--callpath", "main->halo_exchange", "-o", str(runs), "--", *PROGRAM]
    assert cli.main(args) == cli.ExitStatus.OK
    captured = capsys.readouterr()
    assert "extrap-plugins autotune: round 2: the base design: 5 points × 1 repetition" in captured.err
    assert captured.out.splitlines()[0] == ("done: the models are within tolerance at the target "
                                            "(13.9% of the full factorial's cost)")
    assert len(records(runs / "jacobi.extrap.jsonl")) == 6
    # why one run a point while the loop runs, in the round of the base planned once the first run (alone, planned
    # by the budget, which said so and contradicted the summary) showed exact counts, and in the summary and report
    assert "round 1: repetitions per run" not in captured.err
    assert "extrap-plugins autotune: round 2: repetitions per run: 1: the metrics are exact counters" in captured.err
    assert "note: repetitions per run: 1: the metrics are exact counters" in captured.out.splitlines()
    assert "<li>repetitions per run: 1: the metrics are exact counters</li>" in (runs / "autotune.html").read_text()


def test_a_budget_in_core_seconds_counts_the_time_of_the_runs_measured(mpiexec, tmp_path, no_extrap_environment,
                                                                        capsys):
    # --cost 'p*time': the base is planned by p (no time is known yet), then every round prices runs by the
    # time fitted to those measured; the share said is of the full factorial's core-seconds
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2,3", "--param", "n=16,32,64", "--budget", "60%", "--cost", "p*time",
            "--metric", "bytes_sent", "--callpath", "main->halo_exchange", "-o", str(runs), "--", *PROGRAM]
    assert cli.main(args) == cli.ExitStatus.OK
    captured = capsys.readouterr()
    assert captured.out.startswith("done: the models are within tolerance at the target (")
    experiment = extrap_plugins.read(runs)
    final = autotune.design.suggest(autotune.design.Space.from_experiment(experiment), experiment, cost="p*time",
                                    budget="60%", metrics=["bytes_sent"], callpaths=["main->halo_exchange"])
    assert final.cost_model.run_time is not None and final.cost_model.run_time.runs == len(experiment.runs())
    shares = json.loads((runs / "autotune.json").read_text())["rounds"]
    assert shares[-1]["share"] == pytest.approx(final.measured_share, rel=1e-9)  # core-seconds, as the loop said
    assert f"({final.measured_share:.1%} of the full factorial's cost)" in captured.out.splitlines()[0]
    report = (runs / "autotune.html").read_text()
    assert f"cost units; cost of a run: {html.escape(final.cost_model.describe())}</li>" in report


def test_a_budget_of_points_shortens_the_base_and_the_loop_says_so_to_the_end(mpiexec, tmp_path, no_extrap_environment,
                                                                            capsys):
    # six points: lines of three through (1, 16) and the point off them, (2, 32); the consequence is stated while
    # the loop runs, in its summary and in its report
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2,3,4,5", "--param", "n=16,32,64,128,256", "--budget", "6",
            "--repetitions", "1", "--metric", "bytes_sent", "--callpath", "main->halo_exchange", "-o", str(runs),
            "--", *PROGRAM]
    assert cli.main(args) == cli.ExitStatus.OK
    captured = capsys.readouterr()
    note = ("the budget allows lines of 3 values, not 5: models get at most one term per parameter along each line "
            "(fewer exponents are told apart), and the interval at the target says how much that costs")
    assert f"extrap-plugins autotune: round 1: note: {note}\n" in captured.err
    assert f"note: {note}\n" in captured.out
    assert note in (runs / "autotune.html").read_text()
    points = {(r["parameters"]["p"], r["parameters"]["n"]) for r in records(runs / "jacobi.extrap.jsonl")}
    assert points == {(1, 16), (1, 32), (1, 64), (2, 16), (3, 16), (2, 32)}


def test_once_every_point_is_measured_the_loop_repeats_points_within_the_budget(mpiexec, tmp_path,
                                                                               no_extrap_environment, capsys):
    # six points, each measured once, cost 12 of the full factorial's 48 (four runs each, advised for two
    # parameters); a rule that cannot hold: the budget left (40 %: 19.2) goes to second repetitions.  The times are
    # a stand-in's, fixed: with Jacobi's, what a round after the base buys depended on the times measured (runs
    # that scatter by 1 % about a smooth function leave nothing to repeat: the loop stops in round 3)
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2,3", "--param", "n=16,32", "--budget", "40%", "--metric", "time",
            "--callpath", "main", "--tolerance", "0.0001", "-o", str(runs), "--", sys.executable,
            str(PROGRAMS / "fixed_times.py")]
    assert cli.main(args) == cli.ExitStatus.OK
    captured = capsys.readouterr()
    said = f"stdout:\n{captured.out}\nstderr:\n{captured.err}"
    assert captured.out.startswith("stopped: the budget left buys no further run that narrows an interval as "
                                   "printed, before the rule holds ("), said
    assert "round 4: a repetition of largest expected gain: 1 point × 1 repetition (" in captured.err, said
    state = json.loads((runs / "autotune.json").read_text())
    planned = [run for r in state["rounds"] for run in r["runs"]]
    assert len(planned) > 6 and sum(run["cost"] for run in planned) <= 0.4 * 48
    repeats = planned[6:]
    assert all(run["first_repetition"] >= 1 and run["why"].startswith(f"repetition {run['first_repetition']}: ")
               for run in repeats)
    launched = [(r["size"], r["parameters"]["n"], r["repetition"]) for r in records(runs / "fixed_times.extrap.jsonl")]
    by_point = {}
    for size, n, repetition in launched:
        by_point.setdefault((size, n), set()).add(repetition)
    assert len(by_point) == 6 and sum(len(r) for r in by_point.values()) == len(planned)
    assert all(r == set(range(len(r))) for r in by_point.values())  # 0, then 1: never a repetition twice


def test_a_callpath_the_first_run_does_not_measure_is_noted_before_the_rest_of_the_base_runs(
        mpiexec, tmp_path, no_extrap_environment, capsys):
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2", "--param", "n=16,32", "--budget", "60%", "--repetitions", "1",
            "--metric", "time", "--callpath", "main->solv", "-o", str(runs), "--", *PROGRAM]
    assert cli.main(args) == cli.ExitStatus.BAD_INPUT
    err = capsys.readouterr().err.splitlines()
    note = next(i for i, line in enumerate(err) if "note: the first run" in line)
    assert err[note] == (
        "extrap-plugins autotune: note: the first run (p=1, n=16) measured no call path matching "
        "'main->solv' (it measured main, main->setup, main->setup->MPI_Cart_create, main->halo_exchange, "
        "main->halo_exchange->MPI_Sendrecv, main->update, main->residual, main->residual->MPI_Allreduce); other runs "
        "may, but if the name is wrong, stop with Ctrl-C and start again with the right one: measured runs are kept")
    launched = [line.split(": ok")[0] for line in err if line.startswith("extrap-plugins run: [")]
    assert launched == ["extrap-plugins run: [1/1] p=1 n=16 repetition 0", "extrap-plugins run: [1/2] p=1 n=32 "
                        "repetition 0", "extrap-plugins run: [2/2] p=2 n=16 repetition 0"]
    assert err.index(next(line for line in err if "[1/2]" in line)) > note  # the note came after the first run
    assert err[-1] == (f"extrap-plugins: error: {runs}: no call path matches 'main->solv'; "
                       "the call paths include main, main->setup, main->setup->MPI_Cart_create, main->halo_exchange, "
                       "main->halo_exchange->MPI_Sendrecv (8 in all)")
    assert json.loads((runs / "autotune.json").read_text())["status"] == "running"  # resumable with the right name



def test_a_metric_the_first_run_does_not_measure_is_noted(mpiexec, tmp_path, no_extrap_environment, capsys):
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2", "--param", "n=16,32", "--budget", "60%", "--repetitions", "1",
            "--metric", "flops", "-o", str(runs), "--", *PROGRAM]
    assert cli.main(args) == cli.ExitStatus.BAD_INPUT
    err = capsys.readouterr().err.splitlines()
    metrics = ("time, time_exclusive, visits, visit_time_min, visit_time_max, bytes_sent, bytes_received, "
               "messages_sent, messages_received")
    note = next(i for i, line in enumerate(err) if "note: the first run" in line)
    assert err[note] == ("extrap-plugins autotune: note: the first run (p=1, n=16) measured no metric "
                         f"'flops' (it measured {metrics}); other runs may, but if the name is wrong, stop with "
                         "Ctrl-C and start again with the right one: measured runs are kept")
    assert "[1/1] p=1 n=16" in err[note - 1]  # the note comes after the first run, before the rest of the base
    assert err[note + 1].startswith("extrap-plugins autotune: round 2: the base design: 2 points × 1 repetition")
    assert err[-1] == f"extrap-plugins: error: {runs}: no metric 'flops'; the metrics are {metrics}"


def test_a_folder_measured_at_one_process_count_is_resumed_with_more(mpiexec, tmp_path, no_extrap_environment,
                                                                     capsys):
    # `run` at p = 1 alone: the reader leaves p out (one value in every run), and autotune over p = 1, 2 failed
    # with "the measurements have the parameters ['n'], the candidates ['p', 'n']"
    runs = tmp_path / "runs"
    assert cli.main(["run", "--np", "1", "--param", "n=16,32", "-o", str(runs), "--", *PROGRAM]) == 0
    args = ["autotune", "--param", "p=1,2", "--param", "n=16,32", "--budget", "100%", "--repetitions", "1",
            "--metric", "bytes_sent", "--callpath", "main->halo_exchange", "-o", str(runs), "--", *PROGRAM]
    assert cli.main(args) == cli.ExitStatus.OK
    captured = capsys.readouterr()
    assert "round 1: the base design: 2 points × 1 repetition (p=2, n=16), (p=2, n=32) " in captured.err
    assert captured.out.count("have fewer than 5 candidate values") == 1
    launched = sorted((r["size"], r["parameters"]["n"]) for r in records(runs / "jacobi.extrap.jsonl"))
    assert launched == [(1, 16), (1, 32), (2, 16), (2, 32)]  # the two runs at p = 1 are not launched again
    state = json.loads((runs / "autotune.json").read_text())
    assert state["measured_before"] == [
        {"point": {"p": 1, "n": 16}, "repetitions": 1, "cost": 1.0, "why": "measured before the loop"},
        {"point": {"p": 1, "n": 32}, "repetitions": 1, "cost": 1.0, "why": "measured before the loop"}]
    report = (runs / "autotune.html").read_text()  # the runs the loop found are listed with the ones it planned
    assert ("<tr><td>before</td><td>p=1, n=16</td><td>1</td><td>1</td><td>measured before the loop</td></tr>"
            "<tr><td>before</td><td>p=1, n=32</td><td>1</td><td>1</td><td>measured before the loop</td></tr>"
            "<tr><td>1</td><td>p=2, n=16</td>") in report


def test_a_loop_without_process_counts_runs_one_process_and_models_the_other_parameters(mpiexec, tmp_path,
                                                                                         no_extrap_environment, capsys):
    # without --param p every launch has one process; the first round's one point kept p as a parameter of the
    # measurements, and round 2 ended with "the measurements have the parameters ['p', 'n'], the candidates ['n']"
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "n=16,32,64,128,256", "--budget", "60%", "--repetitions", "1",
            "--metric", "bytes_sent", "--callpath", "main->halo_exchange", "-o", str(runs), "--", *PROGRAM]
    assert cli.main(args) == cli.ExitStatus.OK
    captured = capsys.readouterr()
    assert captured.out.startswith("done: ")
    assert {r["size"] for r in records(runs / "jacobi.extrap.jsonl")} == {1}
    state = json.loads((runs / "autotune.json").read_text())
    assert state["parameters"] == ["n"] and state["rounds"][1]["status"] == "base"
    with pytest.warns(extrap_plugins.ExtrapWarning, match=r"parameter p = 1 in every run: not modeled"):
        assert extrap_plugins.read(runs).parameter_names == ["n"]


def test_the_report_gives_a_kernel_judged_through_another_that_one_s_interval(tmp_path):

    from extrap_plugins import Model, ModelSet, Quality

    quality = Quality(rss=0.0, ar2=1.0, smape=0.0, re=0.0)
    models = ModelSet(("p",), [Model("main->a", metric, ("p",), 2.0, (), quality, points=5, modeler="default")
                               for metric in ("time", "time_exclusive")], modeler="default")
    result = autotune.AutotuneResult(folder=tmp_path, status="done", rounds=[], model_set=models, target={"p": 64.0},
                                     tolerance=0.05, share=0.1, cost=10.0, full_cost=100.0, budget_limit=20.0)
    final = types.SimpleNamespace(widths={"main->a": 0.031},
                                  not_judged={"main->a [time_exclusive]": "the same measurements as main->a"})
    report = autotune.render_report(result, final)
    assert report.count("<td>±3.1%</td>") == 2  # the exclusive time of a leaf is its time, interval and all


def test_the_report_says_why_a_kernel_has_no_interval(tmp_path):
    # a kernel too small to matter at the target had an empty cell, as if something were missing
    from extrap_plugins import Model, ModelSet, Quality

    quality = Quality(rss=0.0, ar2=1.0, smape=0.0, re=0.0)
    models = ModelSet(("p",), [Model(name, "time", ("p",), value, (), quality, points=5, modeler="default")
                               for name, value in (("main", 100.0), ("main->tiny", 0.1))], modeler="default")
    result = autotune.AutotuneResult(folder=tmp_path, status="done", rounds=[], model_set=models, target={"p": 64.0},
                                     tolerance=0.05, share=0.1, cost=10.0, full_cost=100.0, budget_limit=20.0)
    final = types.SimpleNamespace(widths={"main": 0.02},
                                  not_judged={"main->tiny": "below 1% of the largest time at the target"})
    report = autotune.render_report(result, final)
    assert "<td>±2.0%</td>" in report
    assert "<td>not judged: below 1% of the largest time at the target</td>" in report


def test_the_report_says_why_a_kernel_outside_the_judgement_has_no_interval(tmp_path):
    # autotune --metric bytes_sent on jacobi: 60 of its 68 models had an empty cell, the minima and maxima the loop
    # leaves out unless named with --metric too, while the report promises an interval or why there is none
    from extrap_plugins import Model, ModelSet, Quality, design

    quality = Quality(rss=0.0, ar2=1.0, smape=0.0, re=0.0)
    models = ModelSet(("p",), [Model("main", metric, ("p",), 2.0, (), quality, points=5, modeler="default")
                               for metric in ("time", "bytes_sent", "visit_time_min", "visit_time_max")])
    result = autotune.AutotuneResult(folder=tmp_path, status="done", rounds=[], model_set=models, target={"p": 64.0},
                                     tolerance=0.05, share=0.1, cost=10.0, full_cost=100.0, budget_limit=20.0)
    extremes = design.EXTREMES_NOTE.format(metrics="visit_time_min, visit_time_max")
    final = types.SimpleNamespace(widths={"main [bytes_sent]": 0.0}, not_judged={}, notes=[extremes])
    cells = [row.split("<td>")[-1] for row in autotune.render_report(result, final).split("</td></tr>")[:-1]][:4]
    assert cells == ["not judged: not selected by --metric and --callpath", "±0.0%",
                     "not judged: a minimum or maximum, judged when named with --metric",
                     "not judged: a minimum or maximum, judged when named with --metric"]
    final.notes = []  # named with --metric: the others were not selected
    cells = [row.split("<td>")[-1] for row in autotune.render_report(result, final).split("</td></tr>")[:-1]][:4]
    assert cells[2] == "not judged: not selected by --metric and --callpath"


def test_the_report_tells_apart_call_paths_that_would_be_shortened_alike(tmp_path):
    from extrap_plugins import Model, ModelSet, Quality

    quality = Quality(rss=0.0, ar2=1.0, smape=0.0, re=0.0)
    deep = "->".join(f"region_{i:02d}" for i in range(12))
    names = [f"main->{caller}->{deep}->leaf" for caller in ("solve", "setup")]
    models = ModelSet(("p",), [Model(name, "time", ("p",), 1.0, (), quality, points=5, modeler="default")
                               for name in names], modeler="default")
    result = autotune.AutotuneResult(folder=tmp_path, status="done", rounds=[], model_set=models, target={"p": 64.0},
                                     tolerance=0.05, share=0.1, cost=10.0, full_cost=100.0, budget_limit=20.0)
    report = autotune.render_report(result, types.SimpleNamespace(widths={}, not_judged={}))
    for caller, name in zip(("solve", "setup"), names):
        assert f'<td title="{html.escape(name)}">{html.escape(f"main->{caller}->…->leaf")}</td>' in report


def test_the_report_says_where_a_minimum_s_model_lies_above_its_maximum_s_at_the_target(tmp_path):
    from extrap_plugins import Factor, Model, ModelSet, Quality, Term

    quality = Quality(rss=0.0, ar2=1.0, smape=0.0, re=0.0)
    grows = (Term(0.1, {"p": Factor(1, 0)}),)  # the minimum grows faster than the maximum, a constant
    models = ModelSet(("p",), [Model("main", "visit_time_min", ("p",), 0.0, grows, quality, points=5),
                               Model("main", "visit_time_max", ("p",), 5.0, (), quality, points=5)])
    result = autotune.AutotuneResult(folder=tmp_path, status="done", rounds=[], model_set=models, target={"p": 64.0},
                                     tolerance=0.05, share=0.1, cost=10.0, full_cost=100.0, budget_limit=20.0)
    report = autotune.render_report(result, types.SimpleNamespace(widths={}, not_judged={}))
    assert "<td>6.4 (!) above visit_time_max there: one of the two is wrong</td>" in report
    assert "<td>5 (!) below visit_time_min there: one of the two is wrong</td>" in report


def test_the_loop_ends_when_a_round_s_runs_went_well_and_measured_nothing(tmp_path):
    # a runner that says "done" but writes nothing: the same base round would be planned for ever (until session 49
    # the loop ran as many rounds as the full factorial has runs, 25 here, and said "no measurements were made")
    calls = []

    def measure_runs(runs, folder):
        calls.append(len(runs))
        return True

    assert autotune._most_rounds(autotune.design.Space.of({"p": [1, 2], "n": [1, 2]}), None) == 25  # the bound
    assert autotune._most_rounds(autotune.design.Space.of({"p": [1, 2]}), 8) == 17
    folder = tmp_path / "runs"
    with pytest.raises(RunsFailed) as caught:
        autotune.autotune({"p": [1, 2], "n": [1, 2]}, [], folder, budget="50%", measure_runs=measure_runs,
                          progress=False)
    assert len(calls) == 1
    assert str(caught.value) == (
        f"{folder}: round 1's runs at (p=1, n=1), (p=1, n=2), (p=2, n=1) ... ended well, yet the measurements in "
        f"{folder} hold none of them (as the readers number points and repetitions; see {folder / 'logs'}): does "
        f"the program take its parameters from EXTRAP_PARAM_<NAME> or {{name}} in its arguments, and do earlier "
        f"runs in the folder come from another sweep? (`extrap-plugins model {folder}` shows what the readers make "
        f"of it, broken profiles too) Start again in a new folder")


def test_a_round_whose_runs_the_folder_does_not_show_ends_the_loop_with_the_reason(mpiexec, tmp_path, monkeypatch,
                                                                                   no_extrap_environment, capsys):
    # real launches whose measurements carry other repetition numbers than planned (as when another sweep's runs
    # share the folder and the reader renumbers them): the loop planned the same runs again and again
    sweep_runner = autotune._sweep_runner

    def shifted_runner(*args):
        runner = sweep_runner(*args)
        return lambda runs, folder: runner([dataclasses.replace(run, first=run.first + 5) for run in runs], folder)

    monkeypatch.setattr(autotune, "_sweep_runner", shifted_runner)
    folder = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2,3", "--param", "n=16,32,64", "--budget", "60%", "--repetitions", "1",
            "--metric", "bytes_sent", "-o", str(folder), "--", *PROGRAM]
    assert cli.main(args) == cli.ExitStatus.RUNS_FAILED
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("stopped: a round's runs went well and measured nothing the folder shows (")
    assert out[1].startswith("measured: 1 point, 1 run with the repetitions, in 1 round; ")
    assert out[2].startswith(f"round 1's runs at (p=1, n=16) ended well, yet the measurements in {folder} hold "
                             "none of them")  # the base design's first run, alone
    assert len(records(folder / "jacobi.extrap.jsonl")) == 1  # measured once, not again and again
    assert json.loads((folder / "autotune.json").read_text())["status"] == "unmeasured"
    # started again in the same folder, it stops at once: it planned the same runs once more, which the sweep
    # skipped as launched
    assert cli.main(args) == cli.ExitStatus.RUNS_FAILED
    captured = capsys.readouterr()
    assert captured.out.splitlines()[2].startswith("round 1's runs at (p=1, n=16) ended well, yet the measurements")
    assert "extrap-plugins run:" not in captured.err and "round 2" not in captured.err
    assert len(json.loads((folder / "autotune.json").read_text())["rounds"]) == 1


def _said_repetitions(plans, advised=4):
    said, rounds = [], []
    for number, (status, repetitions, first, reason, *alone) in enumerate(plans, 1):
        runs = [autotune.design.Run({"p": 2.0}, repetitions, 2.0, "", first)]
        last = types.SimpleNamespace(status=status, repetitions=repetitions, repetitions_reason=reason,
                                     reference_repetitions=advised)
        autotune._say_repetitions(last, runs, rounds, number, said.append, bool(alone))
        rounds.append(autotune.Round(number, status, 0.1, [autotune._saved(r, ["p"]) for r in runs]))
    return said


def test_a_round_says_why_its_new_points_get_another_number_of_repetitions():
    # a round line read "1 point × 4 repetitions", the next "× 3" with no word why (the noise measured so far, or
    # what the budget leaves, sizes them each round); repetitions of measured points are one run each and say nothing.
    # The base design said nothing either when the budget gave it fewer than the advised repetitions: single runs,
    # whose noise the models cannot tell, with no word why (suggest says it in its header)
    single = ("1: the base design with the advised 4 would cost 23.9% of the full factorial, more than half the "
              "budget; single runs keep its lines whole")
    said = _said_repetitions([("base", 1, 0, single), ("add", 4, 0, "4 for 2 parameters (Ritter et al. 2020)"),
                              ("add", 4, 0, "4 for 2 parameters (Ritter et al. 2020)"),
                              ("add", 3, 0, "3: the base design with the advised 6 would cost 26.6% of the full "
                                            "factorial"),
                              ("add", 1, 3, "repeating")])
    assert said == [f"round 1: repetitions per run: {single}",
                    "round 2: repetitions per run: 4 for 2 parameters (Ritter et al. 2020)",
                    "round 4: repetitions per run: 3: the base design with the advised 6 would cost 26.6% of the full "
                    "factorial"]
    # the base's first run alone says nothing (planned before the noise or the metrics' kind is known: it said 'the
    # advised 4' there and the summary 'the advised 6'), the rest of the base says the reason the summary repeats;
    # the advised number: nothing to say
    assert _said_repetitions([("base", 1, 0, "planned blind", True), ("base", 1, 0, single), ("add", 1, 0, single)]) == [
        f"round 2: repetitions per run: {single}"]
    assert _said_repetitions([("base", 4, 0, "4 for 2 parameters (Ritter et al. 2020)"),
                              ("add", 4, 0, "4 for 2 parameters (Ritter et al. 2020)")]) == []


def test_with_time_in_the_cost_the_loop_says_once_that_its_shares_move_with_the_fitted_time():
    # "cost so far 8.0%" in one round, "4.7%" in the next: the run time behind the shares is fitted anew each round
    said = []
    unfitted = types.SimpleNamespace(cost_model=types.SimpleNamespace(time=1.0, run_time=None))
    fitted = types.SimpleNamespace(cost_model=types.SimpleNamespace(time=1.0, run_time=object()))
    by_p = types.SimpleNamespace(cost_model=types.SimpleNamespace(time=0.0, run_time=None))
    assert autotune._say_timed_cost(by_p, False, 1, said.append) is False
    assert autotune._say_timed_cost(unfitted, False, 1, said.append) is False
    assert autotune._say_timed_cost(fitted, False, 2, said.append) is True
    assert autotune._say_timed_cost(fitted, True, 3, said.append) is True
    assert said == [f"round 2: note: {autotune.TIMED_COST}"]
    assert autotune.TIMED_COST.startswith("the cost counts a run's time as fitted to the runs measured so far, anew")


def test_the_note_on_a_cost_model_that_misses_the_time_is_said_once_in_the_round_it_is_found():
    unpriced = ("a run's measured time grows about like n^1.00 (×16 from n=1000 to n=16000), which the cost model "
                "(p) does not count: the budget takes large n for cheap runs; --cost 'p*n' would count it, --cost 'p*time' "
                "the time itself")
    said = []
    rounds = []
    for number, (status, notes) in enumerate([("base", ["lines of 4 values"]), ("base", ["lines of 4 values"]),
                                               ("add", [unpriced]), ("add", [unpriced.replace("1.00", "0.98")])], 1):
        autotune._say_notes(types.SimpleNamespace(status=status, notes=notes), rounds, number, said.append)
        rounds.append(autotune.Round(number, status, 0.1, [], {}, notes))
    assert said == ["round 1: note: lines of 4 values", f"round 3: note: {unpriced}"]


def test_a_budget_of_points_is_said_as_points(tmp_path):
    # the report said "budget: none" and the last note "(inf cost units left)" for --budget 2, and what was spent
    # in cost units alone ("budget: at most 14 points; spent: 3640 cost units")
    from extrap_plugins import Model, ModelSet, Quality

    quality = Quality(rss=0.0, ar2=1.0, smape=0.0, re=0.0)
    models = ModelSet(("p",), [Model("main", "time", ("p",), 1.0, (), quality, points=5)])
    result = autotune.AutotuneResult(folder=tmp_path, status="budget", rounds=[], model_set=models,
                                     target={"p": 64.0}, tolerance=0.05, share=0.1, cost=10.0, full_cost=100.0,
                                     budget_limit=math.inf, points=2, budget_points=2)
    report = autotune.render_report(result, types.SimpleNamespace(widths={}, not_judged={}))
    assert "<li>budget: at most 2 points; spent: 2 points (10 cost units)</li>" in report
    space = autotune.design.Space.of({"p": [1, 2], "n": [100, 200, 400, 800, 1600]})
    base = autotune.design.suggest(space, budget="2")  # the minimum for a model, beyond the budget
    assert [tuple(run.point.values()) for run in base.plan.runs] == [(1, 100), (1, 200), (1, 400), (2, 100)]
    measured = Experiment.from_columns(["p", "n"], callpath="main", metric="time",
                                       coordinates=[list(run.point.values()) for run in base.plan.runs] * 2,
                                       value=[1.0, 1.1, 1.2, 1.3, 1.01, 1.11, 1.21, 1.31])
    step = autotune.design.suggest(space, measured, budget="2")
    assert step.status == "budget" and not step.plan.runs
    assert step.notes[-1] == "no further point of the base design fits the budget (at most 2 points, 4 measured)"


def test_a_read_only_file_of_the_loop_is_named_before_anything_runs(tmp_path, capsys):
    # it ended the first round with "is read-only; ... (make it writable, or --overwrite-read-only)", an option
    # autotune does not have
    folder = tmp_path / "runs"
    folder.mkdir()
    report = folder / autotune.REPORT
    report.write_text("<p>an earlier report</p>\n")
    report.chmod(0o444)
    args = ["autotune", "--param", "p=1,2", "--param", "n=1,2", "-o", str(folder), "--", sys.executable,
            str(PROGRAMS / "plain.py")]
    assert cli.main(args) == cli.ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins: error: {report}: is read-only; the loop keeps its state and "
                                       "reports here: make it writable\n")
    assert sorted(path.name for path in folder.iterdir()) == [autotune.REPORT]


def test_the_summary_says_the_growth_the_cost_leaves_out_once_as_fitted_last():
    # the base round's note (n^0.99) and the last round's (n^1.01) were both printed at the end
    def note(exponent):
        return (f"a run's measured time grows about like n^{exponent} (×16 from n=100 to n=1600), which the cost "
                f"model (p) does not count")

    rounds = [autotune.Round(1, "base", 0.1, [], {}, [note("0.99"), "lines of 3 values"]),
              autotune.Round(2, "add", 0.2, [], {}, [note("1.01")])]
    assert autotune.final_notes(rounds) == ["lines of 3 values", note("1.01")]


def test_progress_off_leaves_out_the_launches_lines_too(mpiexec, tmp_path, no_extrap_environment, capsys):
    # the round lines went, each launch's "[1/1] p=1 n=16 repetition 0: ok" stayed
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "p=1,2,3", "--param", "n=16,32,64", "--budget", "70%", "--repetitions", "1",
            "--metric", "time", "--callpath", "main", "--max-steps", "1", "--progress", "off", "-o", str(runs), "--",
            *PROGRAM]
    assert cli.main(args) == cli.ExitStatus.OK
    assert capsys.readouterr().err == ""
    assert len(records(runs / "jacobi.extrap.jsonl")) == 1


def test_sigterm_ends_the_loop_as_ctrl_c_does_wherever_it_comes(tmp_path):
    """SIGTERM (a batch scheduler's limit) while the loop assessed or wrote: exit 143 with no word, no report, and
    the lock file left behind; now it is an interrupt wherever it comes, and the loop's files stay resumable."""
    import os
    import signal

    class Killed(Exception):
        pass

    def killed(number, frame):  # what SIGTERM does without the loop's handler: here an error, not pytest's end
        raise Killed

    def measure_runs(runs, folder):
        os.kill(os.getpid(), signal.SIGTERM)
        return True

    folder = tmp_path / "runs"
    previous = signal.signal(signal.SIGTERM, killed)
    try:
        with pytest.raises(KeyboardInterrupt):
            autotune.autotune({"p": [1, 2, 3], "n": [1, 2, 3]}, [], folder, budget="50%", measure_runs=measure_runs,
                              progress=False)
        assert signal.getsignal(signal.SIGTERM) is killed  # given back when the loop ends
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert json.loads((folder / "autotune.json").read_text())["status"] == "running"
    assert not (folder / autotune.LOCK).exists()


def test_a_parameter_the_program_never_reads_ends_the_loop_at_the_first_runs_that_differ_in_it(
        tmp_path, no_extrap_environment, capsys):
    # the program reads n, the loop gives size: before, it spent the whole budget on one program, every record
    # saying n=1000 while size varied, and nothing was said
    from extrap_plugins.instrument import sweep

    program = tmp_path / "typo.py"
    program.write_text('from extrap_plugins import instrument\n\nn = instrument.parameter("n", 1000)\n'
                       'with instrument.region("work"):\n    instrument.count("cells", 3 * n)\n')
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "size=1,2,3,4,5", "--budget", "100%", "-o", str(runs), "--", sys.executable,
            str(program)]
    assert cli.main(args) == cli.ExitStatus.BAD_INPUT
    err = capsys.readouterr().err
    # a program that uses the shim writes no Score-P profile: the first line does not promise one
    assert err.splitlines()[0] == (f"extrap-plugins autotune: runs with {sweep.describe_launcher(sweep.find_launcher())}"
                                   f"; measurements to {runs / 'typo.extrap.jsonl'}")
    message = ("extrap-plugins: error: --param size: the program never read it (its runs record n=1000 whatever size "
               "is); is it named n?; start again in a new -o folder\n")
    assert err.endswith(message)
    assert [r["parameters"] for r in records(runs / "typo.extrap.jsonl")] == [  # the first two runs, then the stop
        {"p": 1, "size": 1, "n": 1000}, {"p": 1, "size": 2, "n": 1000}]
    assert json.loads((runs / "autotune.json").read_text())["status"] == "unread"
    # started again in the folder, it stops at once
    assert cli.main(args) == cli.ExitStatus.BAD_INPUT
    assert capsys.readouterr().err.endswith(message)
    assert len(records(runs / "typo.extrap.jsonl")) == 2


def test_a_parameter_held_at_one_value_is_designed_around_and_reported_at_that_value(tmp_path, no_extrap_environment,
                                                                                     capsys):
    # --param m=7 beside the values of n: the loop measured its runs, then ended with exit status 2 and no report,
    # "target 'n=6.0,m=7.0': unknown parameter 'm'; the parameters are n" (the readers leave m out of the models)
    program = tmp_path / "held.py"
    program.write_text('from extrap_plugins import instrument\n\nn = instrument.parameter("n", 1)\n'
                       'm = instrument.parameter("m", 1)\nwith instrument.region("work"):\n'
                       '    instrument.count("cells", 3 * n * m)\n')
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "n=1,2,3,4,5", "--param", "m=7", "--budget", "100%", "--metric", "cells", "-o",
            str(runs), "--", sys.executable, str(program)]
    assert cli.main(args) == cli.ExitStatus.OK
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == ("done: the models are within tolerance at the target (50.0% of the full "
                                            "factorial's cost)")
    assert "round 1: the base design's first run, alone" in captured.err  # then the rest of the line along n
    assert "off the lines" not in captured.err and "m has fewer" not in captured.err
    assert [r["parameters"]["n"] for r in records(runs / "held.extrap.jsonl")] == [1, 2, 3, 4, 5]
    report = (runs / autotune.REPORT).read_text()
    assert "target: (n=6, m=7)" in report
    assert "<td>cells</td><td class=f>21 · n</td><td>126</td><td>±0.0%</td>" in report


@pytest.mark.parametrize("name", [autotune.MODELS, autotune.REPORT])
def test_a_file_of_the_user_s_with_a_report_s_name_is_not_replaced(tmp_path, capsys, name):
    # -o into a folder of the user's holding their own models.html: the loop ran and replaced it at its end
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / name).write_text("<p>mine</p>\n")
    (folder / "notes.txt").write_text("mine too\n")
    args = ["autotune", "--param", "p=1,2", "--param", "n=1,2", "-o", str(folder), "--", sys.executable,
            str(PROGRAMS / "plain.py")]
    assert cli.main(args) == cli.ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins: error: {folder / name}: is not a report an earlier loop "
                                       f"wrote here (there is no autotune.json beside it); it is not replaced (move "
                                       f"it away, or give another -o folder)\n")
    assert sorted(path.name for path in folder.iterdir()) == sorted([name, "notes.txt"])
    assert (folder / name).read_text() == "<p>mine</p>\n"
    # a loop's own report, beside its state file, is replaced as before
    (folder / autotune.STATE).write_text("{}")
    autotune._check_own_files(folder)


def test_the_base_planned_past_a_call_path_not_measured_yet_keeps_the_metrics_named(tmp_path, no_extrap_environment,
                                                                                    capsys):
    # --metric cells --callpath wrk: the rest of the base was planned as if no --metric had been given, so its runs
    # were repeated for the noise of times, and "not judged unless named with --metric: visit_time_min, ..." was
    # said in that round and in the summary, though the user had named the metric
    program = tmp_path / "cells.py"
    program.write_text('from extrap_plugins import instrument\n\nn = instrument.parameter("n", 1)\n'
                       'with instrument.region("work"):\n    instrument.count("cells", 3 * n)\n')
    runs = tmp_path / "runs"
    args = ["autotune", "--param", "n=1,2,3,4,5,6,7,8,9,10", "--budget", "100%", "--metric", "cells", "--callpath",
            "wrk", "-o", str(runs), "--", sys.executable, str(program)]
    assert cli.main(args) == cli.ExitStatus.BAD_INPUT
    err = capsys.readouterr().err
    assert ("extrap-plugins autotune: round 2: the base design: 4 points × 1 repetition (n=2), (n=3), (n=4) ... "
            in err)
    assert "extrap-plugins autotune: round 2: repetitions per run: 1: the metrics are exact counters\n" in err
    assert "not judged unless named" not in err
    assert err.endswith(f"extrap-plugins: error: {runs}: no call path matches 'wrk'; did you mean 'work'?\n")
    assert len(records(runs / "cells.extrap.jsonl")) == 6  # the first run twice (before its kind was known)


def test_the_summary_says_what_the_budget_did_to_the_base_as_its_last_round_planned_it():
    # the base design's first run, alone, was planned counting a run's time as 1: "no point off the lines fits the
    # budget" ended the summary and the report of a loop whose next round measured the rest of the base with one
    lone = ["p has fewer than 5 candidate values", "even lines of 3 values exceed the budget: these runs are the "
            "minimum for a model", "no point off the lines fits the budget: the models cannot tell whether the "
            "parameters' effects add or multiply"]
    rest = ["p has fewer than 5 candidate values", "repetitions per run: 3: the base design with the advised 4 would "
            "cost 32.0% of the full factorial"]
    rounds = [autotune.Round(1, "base", 0.01, [], {}, lone), autotune.Round(2, "base", 0.2, [], {}, rest),
              autotune.Round(3, "add", 0.3, [], {}, ["p has fewer than 5 candidate values"])]
    assert autotune.final_notes(rounds) == [rest[1], "p has fewer than 5 candidate values"]


def test_the_round_after_the_base_measures_the_point_nearest_a_target_beyond_the_candidates(
        tmp_path, no_extrap_environment, capsys):
    # two parameters, the default target (6, 6) one step beyond: the lines through (1, 1) and the point off them
    # leave the far corner unmeasured, where a product of a and b shows; the loop measures it next, and says why
    program = tmp_path / "grid.py"
    program.write_text("import math\n\nfrom extrap_plugins import instrument\n\n"
                       "a = instrument.parameter('a', 1)\nb = instrument.parameter('b', 1)\n"
                       "with instrument.region('work'):\n"
                       "    instrument.count('cells', int(1000 * a**1.3 * b**0.6 * (1 + 0.04 * math.sin(7 * a + 3 * b))))\n")
    runs = tmp_path / "runs"
    assert cli.main(["autotune", "--param", "a=1,2,3,4,5", "--param", "b=1,2,3,4,5", "--budget", "40%", "--metric",
                     "cells", "--max-steps", "3", "-o", str(runs), "--", sys.executable, str(program)]) == cli.ExitStatus.OK
    assert ("extrap-plugins autotune: round 3: the point nearest the target, which lies beyond the candidate values (it "
            "tests how the parameters combine there): 1 point × 1 repetition (a=5, b=5) (cost so far 6.8% of the full "
            "factorial)") in capsys.readouterr().err
    state = json.loads((runs / "autotune.json").read_text())
    third = state["rounds"][2]["runs"]
    assert [run["point"] for run in third] == [{"a": 5, "b": 5}]
    assert third[0]["why"].startswith("nearest the target, which lies beyond the values of a and b: tests how the "
                                      "parameters combine there; narrows work [cells] ±")
    assert "nearest the target, which lies beyond the values of a and b" in (runs / "autotune.html").read_text()
