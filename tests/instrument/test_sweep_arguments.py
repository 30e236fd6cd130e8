"""The sweep runner as a user with an mpi4py program of their own meets it: what it says at the end, a module that
is not there, an output folder that cannot hold the sweep."""

from __future__ import annotations

import shlex
import sys

import pytest

from extrap_plugins import cli
from extrap_plugins.errors import ExitStatus, InputError
from extrap_plugins.instrument import sweep
from shim_helpers import PROGRAMS


def test_a_sweep_whose_every_launch_failed_after_measuring_is_not_offered_to_model(tmp_path, no_extrap_environment,
                                                                                   capsys):
    # n = 2 measures, then exits 3: its rank's file is there, marked failed, and `model` could read no run of it
    runs = tmp_path / "runs"
    status = sweep.main(["--np", "1", "--param", "n=2", "-o", str(runs), "--", sys.executable,
                         str(PROGRAMS / "sweepable.py")])
    assert status == ExitStatus.RUNS_FAILED
    assert list(runs.glob("sweepable.p1.n2.r0.*.rank0.extrap.jsonl"))
    err = capsys.readouterr().err
    assert err.endswith(f"{sweep.PROG}: nothing was measured: fix the failures above and start again\n")
    assert "model them with" not in err


def test_the_command_to_model_the_folder_can_be_pasted_when_its_name_has_a_space(tmp_path, no_extrap_environment,
                                                                                 capsys):
    runs = tmp_path / "my runs"
    command = ["--np", "1", "--param", "n=1", "-o", str(runs), "--", sys.executable, str(PROGRAMS / "sweepable.py")]
    assert sweep.main(command) == ExitStatus.OK
    assert capsys.readouterr().err.endswith(f"{sweep.PROG}: model them with: extrap-plugins model "
                                            f"{shlex.quote(str(runs))}\n")
    assert sweep.main(command) == ExitStatus.OK  # started again: nothing to run, the same command
    assert capsys.readouterr().err.endswith(f"{sweep.PROG}: nothing to run: model them with: extrap-plugins model "
                                            f"{shlex.quote(str(runs))}\n")


@pytest.mark.parametrize("program", [["python", "-m", "no_such_module_s60"],
                                     ["python3", "-m", "extrap_plugins.instrument", "-m", "no_such_module_s60.app"]])
def test_a_module_that_is_not_there_is_one_line_before_anything_runs(program, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    status = sweep.main(["--np", "1,2", "--param", "n=1,2", "-o", str(tmp_path / "runs"), "--", *program])
    assert status == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"{sweep.PROG}: error: the module 'no_such_module_s60': no such module "
                                       f"(from {tmp_path})\n")
    assert not (tmp_path / "runs").exists()
    # autotune checks the program the same way, before its first round
    assert cli.main(["autotune", "--param", "p=1,2", "--param", "n=1,2", "-o", "runs", "--", *program]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (f"extrap-plugins: error: the module 'no_such_module_s60': "
                                                        f"no such module (from {tmp_path})")
    assert not (tmp_path / "runs").exists()


def test_a_module_of_the_current_folder_or_of_the_installed_packages_can_be_started(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "solver").mkdir()
    (tmp_path / "solver" / "__init__.py").write_text("")
    (tmp_path / "solver" / "cg.py").write_text("raise SystemExit('never imported by the check')\n")
    for module in ("solver.cg", "solver.{n}", "json.tool", "{app}"):
        sweep.check_program(["python", "-m", module])
        sweep.check_program([sys.executable, "-m", "extrap_plugins.instrument", "-m", module, "--size", "{n}"])
    with pytest.raises(InputError, match="no such module"):
        sweep.check_program([sys.executable, "-m", "solvers.cg"])


def test_another_python_s_modules_are_left_to_it(tmp_path, monkeypatch):
    # a Python other than the one running the sweep has packages of its own: its modules are not looked for here
    monkeypatch.chdir(tmp_path)
    other = tmp_path / "python3.9"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    sweep.check_program([str(other), "-m", "only_there"])


def test_the_measurements_are_named_after_the_module_not_an_argument_of_it():
    assert sweep.program_name([sys.executable, "-m", "solver.cg", "--config", "setup.py"]) == "cg"
    assert sweep.program_name([sys.executable, "-m", "extrap_plugins.instrument", "-m", "solver.cg", "--config",
                               "setup.py"]) == "cg"
    assert sweep.program_name([sys.executable, "app.py", "--config", "setup.py"]) == "app"


def test_an_output_folder_whose_logs_is_a_file_is_one_line_before_the_first(tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "logs").write_text("my notes\n")
    status = sweep.main(["--np", "1", "-o", str(runs), "--", sys.executable, str(PROGRAMS / "sweepable.py")])
    assert status == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == f"{sweep.PROG}: error: {runs / 'logs'}: is not a folder\n"
    assert (runs / "logs").read_text() == "my notes\n"
    assert sorted(p.name for p in runs.iterdir()) == ["logs"]


def test_an_output_folder_that_cannot_be_made_is_one_line_before_the_first(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine\n")
    runs = tmp_path / "notes.txt" / "runs"
    status = sweep.main(["--np", "1", "-o", str(runs), "--", sys.executable, str(PROGRAMS / "sweepable.py")])
    assert status == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == f"{sweep.PROG}: error: {runs}: cannot make the folder: Not a directory\n"
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_timeout_that_is_not_a_number_of_seconds_is_one_line(value, tmp_path, capsys):
    # (nan was taken as no timeout at all, inf said "--timeout ends it after inf h" while a launch ran)
    status = sweep.main(["--np", "1", "--timeout", value, "-o", str(tmp_path / "runs"), "--", sys.executable,
                         str(PROGRAMS / "sweepable.py")])
    assert status == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == f"{sweep.PROG}: error: --timeout must be a number of seconds, got {value}\n"
    assert not (tmp_path / "runs").exists()


def test_a_data_file_that_cannot_be_read_is_one_line_also_from_the_module(tmp_path, capsys):
    # python -m extrap_plugins.instrument.sweep is extrap-plugins run: no traceback where run says one line
    runs = tmp_path / "runs"
    (runs / "sweepable.extrap.jsonl").mkdir(parents=True)
    status = sweep.main(["--np", "1", "-o", str(runs), "--", sys.executable, str(PROGRAMS / "sweepable.py")])
    assert status == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err.splitlines()[-1] == (f"{sweep.PROG}: error: {runs / 'sweepable.extrap.jsonl'}: "
                                                        "Is a directory")


def test_a_sweep_of_more_launches_than_anyone_runs_is_one_line(tmp_path, capsys):
    # --repetitions 100000000000 built the list of launches for minutes before the first line
    status = sweep.main(["--np", "1,2", "--repetitions", "100000000000", "-o", str(tmp_path / "runs"), "--",
                         sys.executable, str(PROGRAMS / "sweepable.py")])
    assert status == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"{sweep.PROG}: error: the sweep asks for 200,000,000,000 launches, more than "
                                       "1,000,000: is --np, --param or --repetitions mistyped?\n")
    assert not (tmp_path / "runs").exists()
