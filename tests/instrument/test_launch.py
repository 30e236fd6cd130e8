"""``python -m extrap_plugins.instrument app.py``: a program measured without changing it (instrument/launch.py)."""

from __future__ import annotations

import sys
import textwrap

import pytest

import extrap_plugins
from extrap_plugins.errors import ExitStatus
from extrap_plugins.instrument import launch, sweep
from shim_helpers import records, run_program

LAUNCH = [sys.executable, "-m", "extrap_plugins.instrument"]

RING = """\
import os
import sys

import numpy as np
from mpi4py import MPI

from helper import size  # a module beside the script: its folder is on sys.path, as for python ring.py

comm = MPI.COMM_WORLD
n = size()
right, left = (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size
received = np.empty(n)
comm.Sendrecv(np.ones(n), dest=right, recvbuf=received, source=left)
half = comm.Split(comm.rank % 2)
half.allreduce(1)
assert sys.argv[1:] == ["--size", str(n)], sys.argv
"""


def _ring(tmp_path):
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / "ring.py").write_text(RING)
    (folder / "helper.py").write_text("import os\n\n\ndef size():\n    return int(os.environ['EXTRAP_PARAM_N'])\n")
    return folder / "ring.py"


def test_an_unchanged_mpi4py_program_is_swept_and_models_exactly(mpiexec, tmp_path, no_extrap_environment, capsys):
    runs = tmp_path / "runs"
    status = sweep.main(["--np", "1,2", "--param", "n=100,200,400", "-o", str(runs), "--", *LAUNCH,
                         str(_ring(tmp_path)), "--size", "{n}"])
    assert status == ExitStatus.OK, capsys.readouterr().err
    assert len(records(runs / "ring.extrap.jsonl")) == 6  # named after the script, not the launcher
    experiment = extrap_plugins.read(runs)
    names = {c.name for c in experiment.callpaths}
    assert {"main", "main->MPI_Sendrecv", "main->MPI_Allreduce"} <= names  # the split's calls are recorded too
    models = extrap_plugins.model(experiment, executor="serial", metrics=["bytes_sent", "visits"])
    sendrecv = models.get("main->MPI_Sendrecv", "bytes_sent")
    [term] = sendrecv.terms
    assert dict(term.factors) == {"n": extrap_plugins.Factor(1, 0)}
    assert sendrecv.predict({"p": 64, "n": 1600}) == pytest.approx(8 * 1600, rel=1e-9)
    assert models.get("main", "visits").constant == pytest.approx(1, rel=1e-12)


def test_a_program_that_never_imports_mpi4py_is_timed_without_starting_mpi(tmp_path):
    package = tmp_path / "tool"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "work.py").write_text(textwrap.dedent("""\
        import sys, time
        time.sleep(0.05)
        with open(sys.argv[1], "w") as marker:
            marker.write(str("mpi4py.MPI" in sys.modules))
    """))
    result = run_program([*LAUNCH, "-m", "tool.work", "marker.txt"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "marker.txt").read_text() == "False"
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert record["program"] == "work" and record["status"] == "ok"
    assert [c for c in record["callpaths"]] == ["main"]


EXPLICIT_INIT = """\
import mpi4py
mpi4py.rc.initialize = False
from mpi4py import MPI
{init}
MPI.COMM_WORLD.allreduce(1)
MPI.Request.Waitall([MPI.COMM_WORLD.Ibarrier()])
MPI.Finalize()
"""


@pytest.mark.parametrize("init", ["MPI.Init()", "MPI.Init_thread(MPI.THREAD_FUNNELED)"])
def test_a_program_that_initialises_mpi_itself_is_recorded_from_its_init(mpiexec, tmp_path, no_extrap_environment,
                                                                         capsys, init):
    # COMM_WORLD cannot be wrapped before MPI_Init (MPICH aborts the process): it is wrapped right after it
    program = tmp_path / "explicit.py"
    program.write_text(EXPLICIT_INIT.format(init=init))
    runs = tmp_path / "runs"
    status = sweep.main(["--np", "2", "-o", str(runs), "--", *LAUNCH, str(program)])
    assert status == ExitStatus.OK, capsys.readouterr().err
    [record] = records(runs / "explicit.extrap.jsonl")
    assert record["status"] == "ok" and record["size"] == 2
    assert sorted(record["callpaths"]) == ["main", "main->MPI_Allreduce", "main->MPI_Ibarrier", "main->MPI_Waitall"]


def test_wrapping_before_mpi_init_says_so_instead_of_aborting(tmp_path):
    script = ("import mpi4py\nmpi4py.rc.initialize = False\nfrom mpi4py import MPI\n"
              "from extrap_plugins.instrument import mpi\nmpi.wrap(MPI.COMM_WORLD)\n")
    result = run_program([sys.executable, "-c", script], tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "RuntimeError: wrap() needs MPI initialised and not finalised: call it after MPI.Init() "
        "(mpi4py.rc.initialize = False) and before MPI.Finalize()")


def test_a_program_that_fails_fails_the_same_way_when_measured(tmp_path):
    (tmp_path / "crash.py").write_text("raise RuntimeError('the solver diverged')\n")
    result = run_program([*LAUNCH, "crash.py"], tmp_path)
    assert result.returncode == 1
    assert "RuntimeError: the solver diverged" in result.stderr.splitlines()  # the program's own traceback
    # as for any measured program that fails: its own file, which model reads with a warning and skips
    [fragment] = tmp_path.glob("out.*.rank*.extrap.jsonl")
    [record] = records(fragment)
    assert record["status"] == "failed" and record["errors"] == ["the program failed: RuntimeError: the solver diverged"]
    (tmp_path / "stop.py").write_text("import sys\nsys.exit(3)\n")
    assert run_program([*LAUNCH, "stop.py"], tmp_path).returncode == 3


@pytest.mark.parametrize("args, problem", [
    ([], "no program given"),
    (["missing.py"], "missing.py: no such file"),
    (["-m"], "-m needs a module name"),
    # a traceback from runpy, exit status 1, and a failed run's file for a program that never ran
    (["-m", "missing_module"], "missing_module: no such module"),
    (["-m", "missing_package.app"], "missing_package.app: no such module"),
])
def test_bad_arguments_say_what_is_wrong_in_one_line(tmp_path, args, problem):
    result = run_program([*LAUNCH, *args], tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert sorted(tmp_path.iterdir()) == []
    assert result.stderr.splitlines() == ["usage: python -m extrap_plugins.instrument (SCRIPT.py | -m MODULE) [ARGS...]",
                                          f"extrap_plugins.instrument: error: {problem}"]


def test_help_says_what_the_launcher_does(tmp_path):
    result = run_program([*LAUNCH, "--help"], tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.splitlines()[2].startswith("Run a Python program as python would, measured")


def test_the_sweep_names_the_measurements_after_the_program_the_launcher_runs():
    assert sweep.program_name([sys.executable, "-m", "extrap_plugins.instrument", "app.py", "--size", "4"]) == "app"
    assert sweep.program_name([sys.executable, "-m", "extrap_plugins.instrument", "-m", "tool.work"]) == "work"


def test_the_parameters_keep_the_order_the_sweep_gives_them(mpiexec, tmp_path, no_extrap_environment, capsys):
    # they came in alphabetical order (the environment's), so a loop over --param n=... --param iters=... spoke
    # of (p=5, iters=32, n=32000)
    program = tmp_path / "quiet.py"
    program.write_text("import time\ntime.sleep(0.01)\n")
    runs = tmp_path / "runs"
    assert sweep.main(["--np", "1", "--param", "z=1,2", "--param", "a=3,4", "-o", str(runs), "--", *LAUNCH,
                       str(program)]) == ExitStatus.OK
    assert list(records(runs / "quiet.extrap.jsonl")[0]["parameters"]) == ["p", "z", "a"]
    assert extrap_plugins.read(runs).parameter_names == ["z", "a"]


@pytest.mark.parametrize("kind", ["folder", "zip"])
def test_a_folder_or_zip_application_runs_measured_as_python_runs_it(tmp_path, kind):
    # python app/ and python app.pyz run the __main__.py inside, with the folder or zip first on sys.path (it was
    # "app: no such file" for a folder)
    main = ("import os, sys\nfrom helper import size\n"
            "print(size(), sys.argv[1:], os.path.basename(sys.path[0]))\n")
    app = tmp_path / ("app" if kind == "folder" else "app.pyz")
    if kind == "folder":
        app.mkdir()
        (app / "__main__.py").write_text(main)
        (app / "helper.py").write_text("def size():\n    return 7\n")
    else:
        import zipfile

        with zipfile.ZipFile(app, "w") as archive:
            archive.writestr("__main__.py", main)
            archive.writestr("helper.py", "def size():\n    return 7\n")
    result = run_program([*LAUNCH, app.name, "--size", "3"], tmp_path, EXTRAP_OUTPUT="")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"7 ['--size', '3'] {app.name}\n"
    [record] = records(tmp_path / "app.extrap.jsonl")
    assert record["program"] == "app" and record["callpaths"] == ["main"]
    assert sweep.program_name([sys.executable, "-m", "extrap_plugins.instrument", f"{app.name}/", "-v"]) == "app"


def test_a_folder_without_main_is_said_as_python_would(tmp_path):
    (tmp_path / "lib").mkdir()
    result = run_program([*LAUNCH, "lib"], tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == "extrap_plugins.instrument: error: lib: a folder without __main__.py"
    assert sorted(tmp_path.iterdir()) == [tmp_path / "lib"]


@pytest.mark.parametrize("argv, name", [
    (["-m", "mpi4py.futures", "solver.py", "8"], "solver"),
    (["-m", "mpi4py", "-rc", "threads=0", "-m", "pkg.solver"], "solver"),
    (["-m", "mpi4py", "--rc=threads=0", "run/solver.py"], "solver"),
    (["-m", "mpi4py.run", "-c", "print(1)"], "run"),  # a command has no name of its own
    (["-m", "tool.work"], "work"),
    (["app/solver.py"], "solver"),
])
def test_a_run_is_named_after_the_program_mpi4pys_runners_run(argv, name):
    assert launch.program_name(argv, module=argv[0] == "-m") == name


def test_a_program_run_by_mpi4pys_runner_is_named_after_itself(tmp_path):
    pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
    (tmp_path / "solver.py").write_text("from mpi4py import MPI\nMPI.COMM_WORLD.Barrier()\n")
    result = run_program([*LAUNCH, "-m", "mpi4py", "solver.py"], tmp_path)
    assert result.returncode == 0, result.stderr
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert record["program"] == "solver" and record["status"] == "ok"
