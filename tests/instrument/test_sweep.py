"""The sweep runner: a sweep of the Jacobi example models exactly; failures, bad input, the CLI."""

from __future__ import annotations

import pathlib
import sys

import pytest

import extrap_plugins
from extrap_plugins import cli
from extrap_plugins.errors import ExitStatus, ExtrapWarning
from extrap_plugins.instrument import sweep
from shim_helpers import PROGRAMS, line_of, records, run_program, wait_for, when_said

JACOBI = pathlib.Path(__file__).resolve().parents[2] / "examples" / "jacobi" / "jacobi.py"
ITERATIONS, CHECK = 20, 5




def test_a_sweep_of_the_jacobi_example_models_its_communication_exactly(mpiexec, tmp_path, no_extrap_environment,
                                                                        capsys):
    program = ["--", sys.executable, str(JACOBI), "--iterations", str(ITERATIONS), "--check", str(CHECK)]
    runs = tmp_path / "runs"
    # A cross design: p from 1 to 5 at n = 64, and n from 16 to 256 at p = 2.
    assert sweep.main(["--np", "1,2,3,4,5", "--param", "n=64", "-o", str(runs), *program]) == 0
    assert sweep.main(["--np", "2", "--param", "n=16,32,128,256", "-o", str(runs), *program]) == 0
    progress = capsys.readouterr().err
    assert "[5/5] p=5 n=64 repetition 0: ok" in progress and "all 4 runs succeeded" in progress
    assert len(records(runs / "jacobi.extrap.jsonl")) == 9

    experiment = extrap_plugins.read(runs)
    assert experiment.parameter_names == ["p", "n"]
    assert {c.name for c in experiment.callpaths} >= {
        "main", "main->setup->MPI_Cart_create", "main->halo_exchange->MPI_Sendrecv", "main->residual->MPI_Allreduce"}

    in_p = extrap_plugins.model(line_of(experiment, "n", 64), executor="serial",
                                metrics=["bytes_sent", "messages_sent", "visits"])
    halo_bytes = in_p.get("main->halo_exchange", "bytes_sent")
    assert not halo_bytes.terms and halo_bytes.constant == pytest.approx(2 * 8 * 64 * ITERATIONS, rel=1e-12)
    assert halo_bytes.predict({"p": 4096}) == pytest.approx(20480, rel=1e-12)
    for callpath, metric, value in [("main->halo_exchange->MPI_Sendrecv", "messages_sent", 2 * ITERATIONS),
                                    ("main->halo_exchange->MPI_Sendrecv", "visits", 2 * ITERATIONS),
                                    ("main->residual->MPI_Allreduce", "bytes_sent", 8 * ITERATIONS // CHECK),
                                    ("main->residual", "visits", ITERATIONS // CHECK)]:
        model = in_p.get(callpath, metric)
        assert not model.terms and model.constant == pytest.approx(value, rel=1e-12), (callpath, metric)

    in_n = extrap_plugins.model(line_of(experiment, "p", 2), executor="serial", metrics=["bytes_received"])
    halo = in_n.get("main->halo_exchange", "bytes_received")
    [term] = halo.terms
    assert dict(term.factors) == {"n": extrap_plugins.Factor(1, 0)}
    assert term.coefficient == pytest.approx(2 * 8 * ITERATIONS, rel=1e-9)
    assert abs(halo.constant) < 1e-6
    assert halo.predict({"n": 4096}) == pytest.approx(2 * 8 * 4096 * ITERATIONS, rel=1e-9)
    residual = in_n.get("main->residual->MPI_Allreduce", "bytes_received")
    assert not residual.terms and residual.constant == pytest.approx(8 * ITERATIONS // CHECK, rel=1e-12)


def test_runs_failing_the_same_way_are_listed_once_per_problem(tmp_path, no_extrap_environment, capsys):
    program = tmp_path / "silent.py"
    program.write_text("print('hello')\n")  # never imports the shim: no measurements
    status = sweep.main(["--np", "1", "--param", "n=1,2,3,4,5", "-o", str(tmp_path / "out"), "--",
                         sys.executable, str(program)])
    err = capsys.readouterr().err
    assert status == ExitStatus.RUNS_FAILED
    problem = ("no measurements were written (does the program import extrap_plugins.instrument and define regions? "
               "to measure it unchanged: -- python -m extrap_plugins.instrument app.py; a Score-P program writes its "
               "profile.cubex to the SCOREP_EXPERIMENT_DIRECTORY each launch gets)")
    summary = err[err.index("5 of 5 runs failed:"):].splitlines()
    assert summary[1:6] == [
        f"{sweep.PROG}:   p=1 n=1 repetition 0: {problem}; log: {tmp_path / 'out' / 'logs' / 'p1.n1.r0.log'}",
        f"{sweep.PROG}:   p=1 n=2 repetition 0: {problem}; log: {tmp_path / 'out' / 'logs' / 'p1.n2.r0.log'}",
        f"{sweep.PROG}:   p=1 n=3 repetition 0: {problem}; log: {tmp_path / 'out' / 'logs' / 'p1.n3.r0.log'}",
        f"{sweep.PROG}:   ... and 2 more with the same problem (logs in {tmp_path / 'out' / 'logs'})",
        f"{sweep.PROG}:     | hello"]


def test_a_sweep_started_again_launches_only_what_is_not_measured(tmp_path, no_extrap_environment, capsys):
    out = tmp_path / "out"
    command = ["--np", "1", "--param", "n=1,3", "-o", str(out), "--", sys.executable, str(PROGRAMS / "sweepable.py")]
    assert sweep.main(["--repetitions", "2", *command]) == ExitStatus.OK
    capsys.readouterr()
    assert sweep.main(["--repetitions", "3", *command]) == ExitStatus.OK
    err = capsys.readouterr().err
    data = out / "sweepable.extrap.jsonl"
    assert f"4 of these runs are already measured in {data}: only the other 2 are launched" in err
    assert "[1/2] p=1 n=1 repetition 2: ok" in err and "[2/2] p=1 n=3 repetition 2: ok" in err
    assert sorted((r["parameters"]["n"], r["repetition"]) for r in records(data)) == [
        (1, 0), (1, 1), (1, 2), (3, 0), (3, 1), (3, 2)]
    assert sweep.main(["--repetitions", "3", *command]) == ExitStatus.OK
    err = capsys.readouterr().err
    assert f"all 6 runs are already measured in {data} (a new -o folder measures everything again)\n" in err
    assert "only the other 0" not in err and "nothing to run: model them with: extrap-plugins model" in err
    assert len(records(data)) == 6


@pytest.mark.slow
def test_the_sweep_goes_on_past_a_failing_run_and_reports_it(tmp_path, no_extrap_environment, capsys):
    status = sweep.main(["--np", "1", "--param", "n=1,2,3", "--repetitions", "2", "-o", str(tmp_path / "out"),
                         "--", sys.executable, str(PROGRAMS / "sweepable.py")])
    err = capsys.readouterr().err
    assert status == ExitStatus.RUNS_FAILED
    assert "6 runs (1 process count × 3 values of n × 2 repetitions)" in err
    assert "[2/6] p=1 n=2 repetition 0: FAILED: exit status 3" in err
    assert "[6/6] p=1 n=3 repetition 1: ok" in err
    assert "2 of 6 runs failed:" in err
    log = tmp_path / "out" / "logs" / "p1.n2.r1.log"
    assert f"p=1 n=2 repetition 1: exit status 3; log: {log}" in err
    assert "    | n = 2 is not supported" in err
    lines = records(tmp_path / "out" / "sweepable.extrap.jsonl")
    measured = [d for d in lines if "verdict" not in d]
    assert sorted((d["parameters"]["n"], d["repetition"]) for d in measured) == [(1, 0), (1, 1), (3, 0), (3, 1)]
    # n = 2 measured, then called sys.exit(3): its rank wrote a failed fragment, never an "ok" run
    failed = [records(f)[0] for f in sorted((tmp_path / "out").glob("sweepable.p1.n2.*.rank0.extrap.jsonl"))]
    assert [(d["status"], d["errors"]) for d in failed] == [("failed", ["the program failed: the program called "
                                                                        "sys.exit(3)"])] * 2
    verdicts = [d for d in lines if "verdict" in d]
    assert [d["errors"] for d in verdicts] == [["the launch failed (exit status 3; extrap-plugins run)"]] * 2
    with pytest.warns(ExtrapWarning) as caught:
        experiment = extrap_plugins.read(tmp_path / "out")
    messages = sorted(str(w.message) for w in caught)
    assert messages[0] == "parameter p = 1 in every run: not modeled"
    # the two runs of n = 2 fail alike: said once, at the first run's first fragment
    [first] = (tmp_path / "out").glob("sweepable.p1.n2.r0.*.rank0.extrap.jsonl")
    assert messages[1] == (f"skipped 2 of the 6 runs for the same reason; the first: {first}:1: the launch failed "
                           "(exit status 3; extrap-plugins run)")
    assert experiment.parameter_names == ["n"]
    assert experiment.points().tolist() == [[1.0], [3.0]]


def test_a_launch_that_hangs_is_ended_by_the_timeout(tmp_path, no_extrap_environment, capsys):
    status = sweep.main(["--np", "1", "--param", "n=99", "--timeout", "1", "-o", str(tmp_path),
                         "--", sys.executable, str(PROGRAMS / "sweepable.py")])
    assert status == ExitStatus.RUNS_FAILED
    assert "p=1 n=99 repetition 0: FAILED: still running after 1 s (--timeout)" in capsys.readouterr().err


def test_a_long_launch_is_said_while_it_runs_with_where_its_output_goes(tmp_path, no_extrap_environment, capsys,
                                                                       monkeypatch):
    # the launch ends once the second line is said, long before a third would be (at 4 s): it slept 1.4 s between
    # lines at 0.4, 0.8 and 1.6 s, and a start and end slower than 0.2 s (0.15 s under mpiexec at a load of 9 on two
    # cores) made a third line
    monkeypatch.setattr(sweep, "STILL_RUNNING", 1.0)  # (a minute in use)
    go = tmp_path / "go"
    when_said(monkeypatch, "still running after 2 s", go.touch)
    waits = ("import pathlib, sys, time\n"
             "for _ in range(6000):  # a minute at most\n"
             "    if pathlib.Path(sys.argv[1]).exists():\n        break\n    time.sleep(0.01)\n")
    status = sweep.main(["--np", "1", "-o", str(tmp_path), "--", sys.executable, "-c", waits, str(go)])
    assert status == ExitStatus.RUNS_FAILED  # (it writes no measurements)
    said = [line for line in capsys.readouterr().err.splitlines() if "still running" in line]
    ends = f"(its output: {tmp_path / 'logs' / 'p1.r0.log'}; Ctrl-C stops the sweep; started again it resumes)"
    assert said == [f"extrap-plugins run: [1/1] p=1 repetition 0: still running after {t} s {ends}" for t in (1, 2)]


def test_a_program_that_writes_no_measurements_is_a_failed_run(tmp_path, no_extrap_environment, capsys):
    status = sweep.main(["--np", "1", "-o", str(tmp_path), "--", sys.executable, "-c", "print('hello')"])
    assert status == ExitStatus.RUNS_FAILED
    err = capsys.readouterr().err
    assert "FAILED: no measurements were written (does the program import extrap_plugins.instrument" in err
    # nothing to model: no hint to model the folder, what to do instead
    assert err.endswith("extrap-plugins run: nothing was measured: fix the failures above and start again\n")
    assert "model them with" not in err


@pytest.mark.parametrize("arguments, message", [
    (["--np", "1,x", "--", "app"], "--np '1,x': expected a comma-separated list of positive integers such as 1,2,4"),
    (["--np", "0", "--", "app"], "--np '0': expected a comma-separated list of positive integers such as 1,2,4"),
    (["--np", "2,2", "--", "app"], "--np '2,2': a process count appears twice"),
    (["--np", "1,,4", "--", "app"], "--np '1,,4': a value is missing between commas"),  # (was 1,4: a design lost)
    (["--np", "1", "--param", "n=1,,3", "--", "app"], "--param 'n=1,,3': a value is missing between commas"),
    (["--np", "1", "--param", "p=1,2", "--", "app"], "--param p=...: p is the process count; give it with --np"),
    (["--np", "1", "--param", "n=1,big", "--", "app"], "--param 'n=1,big': 'big' is not a number"),
    (["--np", "1", "--param", "n", "--", "app"],
     "--param 'n': expected NAME=V1,V2,... with NAME an identifier such as n"),
    (["--np", "1", "--param", "n=1", "--param", "n=2", "--", "app"],
     "--param n is given twice; list all its values in one --param n=V1,V2"),
    (["--np", "1", "--param", "N=1,2", "--param", "n=3,4", "--", "app"],  # both reached the program as N
     "--param N and --param n reach the program as one variable, EXTRAP_PARAM_N: rename one"),
    (["--np", "1", "--repetitions", "0", "--", "app"], "--repetitions must be at least 1, got 0"),
    (["--np", "1"], "no program to run: give it after --, for example: -- python app.py"),
    (["--np", "2", "--mpiexec", "/no/such/mpiexec", "--", "app"], "--mpiexec '/no/such/mpiexec': no such executable"),
])
def test_bad_arguments_are_one_line_errors(arguments, message, capsys, tmp_path):
    assert sweep.main(["-o", str(tmp_path / "never"), *arguments]) == 2
    assert capsys.readouterr().err == f"extrap-plugins run: error: {message}\n"
    assert not (tmp_path / "never").exists()


def test_a_dry_run_prints_the_launches(mpiexec, tmp_path, capsys):
    assert sweep.main(["--np", "1,4", "--param", "n=8,16", "--dry-run", "-o", str(tmp_path / "r"),
                       "--mpiexec-arg=-bind-to", "--mpiexec-arg=core", "--", "python", "app.py", "-v"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4
    assert out[3].startswith(f"EXTRAP_PARAM_N=16 EXTRAP_PARAM_NAMES=n EXTRAP_REPETITION=0 "
                             f"EXTRAP_OUTPUT={(tmp_path / 'r' / 'app.extrap.jsonl').resolve()} ")
    assert out[3].endswith(f" -n 4 -bind-to core {sys.executable} app.py -v")  # python: the one running us
    assert not (tmp_path / "r").exists()


def test_braces_in_the_program_s_arguments_take_the_launch_s_values(mpiexec, tmp_path, capsys):
    # a program that takes its sizes on the command line: {n} is the value of n, {p} the process count
    assert sweep.main(["--np", "1,4", "--param", "n=8,16", "--dry-run", "-o", str(tmp_path / "r"), "--", "python",
                       "app.py", "--size", "{n}", "--tag=r{p}-{n}", "--json", '{"n": 1}', "{q}"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[3].endswith(f" -n 4 {sys.executable} app.py --size 16 --tag=r4-16 --json '{{\"n\": 1}}' '{{q}}'")
    assert out[3].startswith("EXTRAP_PARAM_N=16 ")  # the environment as before


def test_a_program_reads_its_size_from_its_arguments_under_a_real_mpiexec(mpiexec, tmp_path, capsys):
    status = cli.main(["run", "--np", "1", "--param", "n=5,6", "-o", str(tmp_path / "runs"), "--", sys.executable,
                       str(PROGRAMS / "sweepable.py"), "--expect-n", "{n}"])
    assert status == 0, capsys.readouterr().err
    lines = records(tmp_path / "runs" / "sweepable.extrap.jsonl")
    assert [d["parameters"] for d in lines] == [{"p": 1, "n": 5}, {"p": 1, "n": 6}]


def test_the_launcher_of_the_installed_mpi_is_found(mpiexec):
    launcher = sweep.find_launcher()
    assert launcher.flavor in ("MPICH", "Open MPI", "Intel MPI", "unknown MPI")
    if launcher.flavor == "Open MPI":
        assert "--oversubscribe" in launcher.arguments
    assert launcher.command(3, ["python", "a.py"])[:3] == [launcher.path, "-n", "3"]


def test_open_mpi_gets_oversubscribe_and_as_root_allow_run_as_root(tmp_path, monkeypatch):
    fake = tmp_path / "mpiexec"
    fake.write_text("#!/bin/sh\necho 'mpiexec (OpenRTE) 4.1.2'\necho 'Report bugs to http://www.open-mpi.org/community/help/'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sweep.os, "geteuid", lambda: 0)
    launcher = sweep.find_launcher(str(fake), ["--bind-to", "core"])
    assert launcher.flavor == "Open MPI"
    assert launcher.command(4, ["python", "app.py"]) == [
        str(fake), "-n", "4", "--oversubscribe", "--allow-run-as-root", "--bind-to", "core", "python", "app.py"]
    monkeypatch.setattr(sweep.os, "geteuid", lambda: 1000)
    assert sweep.find_launcher(str(fake)).arguments == ("--oversubscribe",)
    fake.write_text("#!/bin/sh\necho 'HYDRA build details:'\n")
    assert sweep.find_launcher(str(fake)) == sweep.Launcher(str(fake), "MPICH", ())


def test_the_cli_run_command_is_the_sweep(tmp_path, no_extrap_environment, capsys):
    status = cli.main(["run", "--np", "1", "--param", "n=5,6", "-o", str(tmp_path / "runs"),
                       "--", sys.executable, str(PROGRAMS / "sweepable.py")])
    assert status == 0
    assert "all 2 runs succeeded" in capsys.readouterr().err
    lines = records(tmp_path / "runs" / "sweepable.extrap.jsonl")
    assert [d["parameters"] for d in lines] == [{"p": 1, "n": 5}, {"p": 1, "n": 6}]
    assert cli.main(["run", "--np", "x", "--", "app"]) == 2
    assert capsys.readouterr().err == ("extrap-plugins: error: --np 'x': expected a comma-separated list of "
                                       "positive integers such as 1,2,4\n")


def test_a_plan_from_suggest_is_run_in_its_order_with_its_repetitions(mpiexec, tmp_path, capsys):
    from extrap_plugins.design import Plan, Run, write_plan

    plan_file = tmp_path / "plan.json"
    write_plan(plan_file, Plan(("p", "n"), [Run({"p": 1, "n": 8.0}, 2, 1.0), Run({"p": 4, "n": 16.0}, 1, 4.0)]))
    assert sweep.main(["--plan", str(plan_file), "--dry-run", "-o", str(tmp_path / "r"), "--", "python", "app.py"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3
    assert [line.split()[:3] for line in out] == [
        ["EXTRAP_PARAM_N=8", "EXTRAP_PARAM_NAMES=n", "EXTRAP_REPETITION=0"],
        ["EXTRAP_PARAM_N=16", "EXTRAP_PARAM_NAMES=n", "EXTRAP_REPETITION=0"],
        ["EXTRAP_PARAM_N=8", "EXTRAP_PARAM_NAMES=n", "EXTRAP_REPETITION=1"]]
    assert out[1].endswith(f" -n 4 {sys.executable} app.py")


def test_a_plan_excludes_np_and_np_is_needed_without_a_plan(tmp_path, capsys):
    assert sweep.main(["--plan", "x.json", "--np", "1", "--", "python", "a.py"]) == 2
    assert capsys.readouterr().err.endswith("--plan gives the runs: leave out --np, --param and --repetitions\n")
    assert sweep.main(["--", "python", "a.py"]) == 2
    assert capsys.readouterr().err.endswith(
        "give the process counts with --np (for example --np 1,2,4) or a plan with --plan\n")


NEVER_READS_SIZE = """\
from extrap_plugins import instrument

n = instrument.parameter("n", 1000)
with instrument.region("work"):
    instrument.count("cells", 3 * n)
"""


def test_a_sweep_warns_at_its_end_of_a_parameter_the_program_never_reads(tmp_path, no_extrap_environment, capsys):
    program = tmp_path / "typo.py"
    program.write_text(NEVER_READS_SIZE)  # it reads n; the sweep gives size
    runs = tmp_path / "runs"
    assert sweep.main(["--np", "1", "--param", "size=1,2", "-o", str(runs), "--", sys.executable, str(program)]) == 0
    assert capsys.readouterr().err.splitlines()[-3:] == [
        f"{sweep.PROG}: all 2 runs succeeded",
        f"{sweep.PROG}: warning: --param size: the program never read it (its runs record n=1000 whatever size is); "
        "is it named n?",
        f"{sweep.PROG}: model them with: extrap-plugins model {runs}"]
    # a parameter the program takes as {size} in its arguments is read
    assert sweep.never_read(runs / "typo.extrap.jsonl", ["size"], [sys.executable, str(program), "{size}"]) == []


def test_a_parameter_is_never_read_only_when_the_runs_also_measure_the_same_counts(tmp_path):
    # a program that reads EXTRAP_PARAM_SIZE before it loads the shim is not seen reading it, but its counts tell
    reads_early = tmp_path / "early.py"
    reads_early.write_text("import os\n\nsize = int(os.environ['EXTRAP_PARAM_SIZE'])\n\n"
                           "from extrap_plugins import instrument  # noqa: E402\n\n"
                           "with instrument.region('work'):\n    instrument.count('cells', size)\n")
    ignores = tmp_path / "ignores.py"
    ignores.write_text("from extrap_plugins import instrument\n\nwith instrument.region('work'):\n"
                       "    instrument.count('cells', 7)\n")
    for program in (reads_early, ignores):
        for size in ("1", "2"):
            data = tmp_path / f"{program.stem}.extrap.jsonl"
            result = run_program([sys.executable, str(program)], tmp_path, EXTRAP_OUTPUT=str(data),
                                 EXTRAP_PARAM_SIZE=size, EXTRAP_PARAM_NAMES="size")
            assert result.returncode == 0, result.stderr
            assert records(data)[-1]["unread"] == ["size"]
    command = [sys.executable, "app.py"]
    assert sweep.never_read(tmp_path / "early.extrap.jsonl", ["size"], command) == []
    assert sweep.never_read(tmp_path / "ignores.extrap.jsonl", ["size"], command) == [
        "--param size: the program never read it (its runs measured the same counts whatever size is); does it read "
        "EXTRAP_PARAM_SIZE or take {size} in its arguments?"]


CRASHES_ON_RANK_1 = """\
from mpi4py import MPI

from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)
with instrument.region("main"):
    if comm.Get_rank() == 1:
        1 / 0
    comm.Barrier()
"""


def test_a_failed_run_s_summary_quotes_the_program_s_error_not_the_launcher_s_banner(
        mpiexec, tmp_path, no_extrap_environment, capsys, monkeypatch):
    # rank 1 raises, rank 0 waits in the barrier until --timeout ends the launch; after the traceback the log has
    # the shim's note of the cut-short run, and MPICH's "YOUR APPLICATION TERMINATED ..." banner when the launcher
    # outlives a rank (not always)
    # (a loaded machine starts the ranks slowly, 1.5 s at a load of 10 on two cores, and --timeout 3 could come
    # before rank 1 has raised: the sweep's clock is held at its first "still running" line until the traceback is
    # in the log)
    program = tmp_path / "crash.py"
    program.write_text(CRASHES_ON_RANK_1)
    runs = tmp_path / "runs"
    log = runs / "logs" / "p2.r0.log"
    monkeypatch.setattr(sweep, "STILL_RUNNING", 1.0)  # (a minute in use)
    when_said(monkeypatch, "still running after 1 s",
              lambda: wait_for(lambda: "ZeroDivisionError" in log.read_text()))
    status = sweep.main(["--np", "2", "--timeout", "3", "-o", str(runs), "--", sys.executable, str(program)])
    assert status == ExitStatus.RUNS_FAILED
    err = capsys.readouterr().err
    assert err[err.index("1 of 1 runs failed:"):].splitlines()[1:6] == [
        f"{sweep.PROG}:   p=2 repetition 0: still running after 3 s (--timeout); log: {log}",
        f"{sweep.PROG}:     the program's error (the first traceback in {log}):",
        f'{sweep.PROG}:     |   File "{program}", line 8, in <module>',
        f"{sweep.PROG}:     |     1 / 0",
        f"{sweep.PROG}:     | ZeroDivisionError: division by zero"]


MPICH_LOG = """\
$ mpiexec -n 3 python crash_rank.py
Traceback (most recent call last):
  File "/tmp/apps/crash_rank.py", line 15, in <module>
    main()
  File "/opt/venv/lib/python3.11/site-packages/extrap_plugins/instrument/regions.py", line 382, in timed
    return function(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/apps/crash_rank.py", line 13, in main
    1 / 0
    ~~^~~
ZeroDivisionError: division by zero

===================================================================================
=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES
=   PID 13247 RUNNING AT vm
=   EXIT CODE: 9
=   CLEANING UP REMAINING PROCESSES
=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES
===================================================================================
YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)
This typically refers to a problem with your application.
Please see the FAQ page for debugging suggestions"""


def test_the_summary_quotes_the_first_traceback_of_a_log_that_ends_with_mpich_s_banner(tmp_path, capsys):
    log = tmp_path / "p3.r0.log"
    log.write_text(MPICH_LOG)  # a rank raised; MPICH's cleanup banner came after, as it does when it kills the rest
    launch = sweep.Launch(3, (), 0)
    sweep._report_failures([sweep.Outcome(launch, False, 60.0, "still running after 60 s (--timeout)", log)], tmp_path)
    assert capsys.readouterr().err.splitlines() == [
        f"{sweep.PROG}:   p=3 repetition 0: still running after 60 s (--timeout); log: {log}",
        f"{sweep.PROG}:     the program's error (the first traceback in {log}):",
        f'{sweep.PROG}:     |   File "/tmp/apps/crash_rank.py", line 13, in main',
        f"{sweep.PROG}:     |     1 / 0",
        f"{sweep.PROG}:     | ZeroDivisionError: division by zero"]
    log.write_text("$ app\nstarting\nout of memory\n")  # no traceback: the log's last lines, as before
    sweep._report_failures([sweep.Outcome(launch, False, 1.0, "exit status 1", log)], tmp_path)
    assert capsys.readouterr().err.splitlines()[1:] == [f"{sweep.PROG}:     | starting", f"{sweep.PROG}:     | out of memory"]


def test_the_first_line_names_score_p_profiles_only_for_a_program_that_may_write_them(tmp_path, capsys):
    runs = tmp_path / "r"
    assert sweep.main(["--np", "1", "--param", "n=8", "--dry-run", "-o", str(runs), "--", sys.executable,
                       str(PROGRAMS / "sweepable.py")]) == 0
    launcher = sweep.describe_launcher(sweep.find_launcher())
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{sweep.PROG}: 1 run (1 process count × 1 value of n × 1 repetition) with {launcher}, measurements to "
        f"{runs / 'sweepable.extrap.jsonl'}")
    script = tmp_path / "app.py"
    script.write_text("print('no shim here')\n")
    assert sweep.uses_shim(["python", "-m", "extrap_plugins.instrument", str(script), "--size", "{n}"])
    assert sweep.uses_shim([sys.executable, "-u", str(PROGRAMS / "sweepable.py")])
    assert not sweep.uses_shim(["python3", str(script)])  # (the stand-in of test_scorep_runs.py is such a one)
    assert not sweep.uses_shim(["python", "-m", "scorep", str(PROGRAMS / "sweepable.py")])  # Score-P's Python
    assert not sweep.uses_shim(["./lulesh2.0", "-s", "{n}"])


def test_an_output_that_is_a_file_is_one_line_before_anything_runs(tmp_path, capsys):
    # it said the first line, "measurements to notes.txt/plain.extrap.jsonl", then "notes.txt: File exists"
    output = tmp_path / "notes.txt"
    output.write_text("mine\n")
    args = ["run", "--np", "1", "-o", str(output), "--", sys.executable, str(PROGRAMS / "plain.py")]
    assert cli.main(args) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == f"extrap-plugins: error: {output}: is not a folder\n"
    assert output.read_text() == "mine\n"
