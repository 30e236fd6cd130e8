"""The closed loop: suggest → run → model → suggest, until the models are accurate at the target or the budget is spent.

::

    extrap-plugins autotune --param p=1,2,3,4,5 --param n=64,128,256,512,1024 --budget 40% \\
        -o runs/ -- python examples/jacobi/jacobi.py

Each round asks :func:`extrap_plugins.design.suggest` (the uncertainty
strategy of :mod:`extrap_plugins.selector`) for the next runs, measures the
base design whole (with ``--metric`` or ``--callpath`` its first run alone
before the rest, which is then planned knowing the metrics' kind) and
afterwards one run per round with the sweep runner of the instrument shim
(``extrap-plugins run``; the parameter ``p`` is the process count), and reads
the folder again; once every candidate point is measured (or
no new point fits the budget, the kernels still open vary by ±1 % or more a run
and the budget left pays for repetitions at three measured points), a round
repeats a measured point (up to the advised repetitions each).  It ends
when the stopping rule holds (``done``), when no further run fits the budget
(``budget``), when every candidate point is measured with its advised
repetitions (``exhausted``), when a launch fails
(``failed``; exit status 4) or after ``max_steps`` rounds if given (``steps``).
Runs that differ only in a parameter the program never reads (the shim's
records say so and the counts are the same) end it with an
:class:`~extrap_plugins.errors.InputError` (exit status 2) naming it.

Everything lives in the output folder: the measurements
(``<program>.extrap.jsonl``, as ``run`` writes them), the logs,
``autotune.json`` (every round: its status, the runs and why, the intervals at
the target), ``autotune.html`` (the report: the models, the points measured
and why) and ``models.html`` (the models' interactive report).  Starting again
on the same folder resumes: the measured points are read back and never run
twice, and a round that did not finish (Ctrl-C, a failed launch) is finished
first.  The final models are :func:`extrap_plugins.model` of everything the
folder holds, the same as ``extrap-plugins model FOLDER``.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import json
import math
import os
import pathlib
import shlex
import socket
import sys
import warnings
from dataclasses import dataclass, field
from typing import Callable, ContextManager, Iterator, Mapping, Sequence

import numpy as np

from . import design
from .errors import InputError, RunsFailed
from .files import atomic_writer, is_read_only
from .formatting import (callpath_labels, format_callpath, format_count, format_percent, format_point, format_share,
                         json_number, json_plain)

LOCK = ".autotune.lock"
"""Held while a loop runs on the folder (:func:`_tuning`)."""

STATE = "autotune.json"
REPORT = "autotune.html"
MODELS = "models.html"
FORMAT = "extrap-plugins/autotune"
VERSION = 1
NAMES_SHOWN = 8
"""How many of the first run's call paths a note about an unmatched --callpath lists."""
TIMED_COST = ("the cost counts a run's time as fitted to the runs measured so far, anew each round, so the shares of "
              "the full factorial's cost said here move as the fit does")
"""Said once a loop whose cost model has ``time`` in it has a fitted run time."""


@dataclass
class Round:
    """One round of the loop."""

    number: int
    status: str
    share: float
    runs: list[dict] = field(default_factory=list)
    widths: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def document(self) -> dict:
        return {"round": self.number, "status": self.status, "share": self.share, "runs": self.runs,
                "widths": {k: json_number(v) for k, v in self.widths.items()}, "notes": self.notes}


@dataclass
class AutotuneResult:
    """What the loop did and the final models."""

    folder: pathlib.Path
    status: str
    rounds: list[Round]
    model_set: object
    target: dict[str, float] | None
    tolerance: float
    share: float
    """The measured runs' cost as a share of the full factorial's."""
    cost: float
    full_cost: float
    budget_limit: float
    message: str = ""
    points: int = 0
    """Points measured in the folder (by the loop or before it)."""
    runs: int = 0
    """Runs measured in the folder: points × their repetitions."""
    before: list[dict] = field(default_factory=list)
    """Runs in the folder that no round planned (measured before the loop), per point as a round's runs are."""
    unmeasured: dict[tuple[int, int], int] = field(default_factory=dict)
    """Repetitions a round planned that the folder lacks (a failed launch, a point no candidate any more), by
    (round number, the run's place in the round)."""
    budget_points: int | None = None
    """A budget of points: at most this many (``budget_limit`` is then infinite)."""

    def __str__(self) -> str:
        """What ``extrap-plugins autotune`` prints at the end."""
        return summary(self)

    def __repr__(self) -> str:
        points = format_count(self.points, "point")
        return f"<AutotuneResult {self.status}: {_verdict(self)}; {points} in {self.folder}>"


def autotune(
    candidates: Mapping[str, Sequence[float]],
    command: Sequence[str],
    output: str | pathlib.Path,
    *,
    cost: str | None = None,
    budget: str | None = None,
    repetitions: int | None = None,
    tolerance: float | str = design.TOLERANCE,
    target: str | Mapping[str, float] | None = None,
    modeler: str = "default",
    measure: str = "mean",
    metrics: Sequence[str] = (),
    callpaths: Sequence[str] = (),
    mpiexec: str | None = None,
    mpiexec_args: Sequence[str] = (),
    timeout: float | None = None,
    max_steps: int | None = None,
    progress: bool = True,
    options: Mapping[str, object] | None = None,
    host=None,
    measure_runs: Callable[[list[design.Run], pathlib.Path], bool] | None = None,
    assessing: Callable[[str], ContextManager[Callable[[int, int], None] | None]] | None = None,
) -> AutotuneResult:
    """Run the loop (see the module docstring).

    Parameters
    ----------
    candidates : mapping
        Candidate values per parameter (``{"p": [1, 2, 4], "n": [...]}``); ``p`` is the process count.
    command : the program and its arguments (``["python", "app.py"]``).
    output : the folder for everything.
    measure_runs : callable, optional
        ``(runs, folder) -> ok``: measures the runs into the folder (default: the sweep runner under mpiexec).
    assessing : callable, optional
        ``(description) -> context manager`` yielding the progress callback of each round's assessment
        (:func:`extrap_plugins.selector.assess`); the CLI passes a progress bar when stderr is a terminal.
    progress : bool
        A line per round and per launch on stderr; without, failed launches only (``--progress off``).

    Raises
    ------
    InputError
        No candidates, no program, bad settings, measurements in the folder outside the candidates, or runs that
        show a parameter the program never reads (:func:`extrap_plugins.instrument.sweep.never_read`).
    """
    from . import api

    if not candidates:
        raise InputError("autotune needs candidate values: --param p=1,2,4,8,16 --param n=...")
    if not command and measure_runs is None:
        raise InputError("no program to run: give it after --, for example: -- python app.py")
    if max_steps is not None and max_steps < 1:
        raise InputError(f"--max-steps must be at least 1, got {max_steps}")
    _check_callpaths(callpaths)
    tolerance = design.parse_tolerance(tolerance)
    space = design.Space.of(candidates)
    steps = max_steps if max_steps is not None else _most_rounds(space, repetitions)
    settings = dict(cost=cost, budget=budget, repetitions=repetitions, tolerance=tolerance, target=target,
                    modeler=modeler, measure=measure, metrics=metrics, callpaths=callpaths, host=host,
                    **dict(options or {}))
    # Every setting is checked before the folder is made or anything runs: a plan without measurements parses
    # the cost model, the budget, the target and the modeler with its options (cheap: nothing is modeled).
    design.suggest(space, None, **settings)
    launching = None if measure_runs else _check_launch(candidates, command, output, mpiexec, mpiexec_args, timeout)
    folder = pathlib.Path(output)
    if folder.exists() and not folder.is_dir():
        raise InputError("is not a folder", folder)
    _check_own_files(folder)
    folder.mkdir(parents=True, exist_ok=True)
    from .interrupts import terminate_as_interrupt

    # this loop's alone until it ends; SIGTERM (a batch scheduler's limit) ends it as Ctrl-C does
    with _tuning(folder), terminate_as_interrupt():
        say = _say if progress else (lambda message: None)
        rounds, saved_status = _load_rounds(folder, space.parameters)
        interrupted = saved_status in ("running", "failed")
        if launching:
            say(launching)
        runner = measure_runs or _sweep_runner(command, mpiexec, mpiexec_args, timeout, not progress)
        status, message, last = "steps", "", None
        _resume(rounds, saved_status, say)
        if interrupted and rounds:
            failed = _finish_round(rounds[-1], space, folder, host, runner, say)
            if failed:
                status, message = "failed", _failed(failed, folder)
        # the last round's runs, once the runner said they went well (a loop that stopped for not finding them in the
        # folder looks for them again before it plans: the sweep would skip them as launched)
        launched = [_as_run(r) for r in rounds[-1].runs] if saved_status == "unmeasured" and rounds else []
        timed = False  # whether TIMED_COST was said
        for _ in range(steps):
            if status == "failed":  # the unfinished round could not be finished
                break
            space, experiment = _aligned(space, _read(folder, host))
            number = len(rounds) + 1
            unread = _never_read(folder, command, space)
            if unread:  # every further run would measure the same program again
                _save(folder, space, rounds, "unread")
                raise InputError(unread)
            if launched and _none_measured(launched, space, experiment):  # planned again, it would never end
                status, message = "unmeasured", _unseen(launched, number - 1, folder)
                break
            with (assessing or _quietly)(f"round {number}: assessing the models") as told:
                last = _suggest(space, experiment, rounds, told, settings)
            if not last.plan.runs:
                status = last.status
                rounds.append(Round(number, last.status, last.share, [], dict(last.widths or {}), list(last.notes)))
                _save(folder, space, rounds, status)
                say(f"round {number}: {_describe_end(last, tolerance)}")
                break
            runs, alone = _this_round(last, experiment, metrics, callpaths)
            spent = last.measured_cost + sum(r.cost * r.repetitions for r in runs)
            share = spent / last.full_cost if last.full_cost else 0.0
            say(f"round {number}: {_describe_round(last, runs, share, tolerance, alone)}")
            _say_notes(last, rounds, number, say)
            _say_repetitions(last, runs, rounds, number, say, alone)
            timed = _say_timed_cost(last, timed, number, say)
            record = Round(number, last.status, share, [_saved(r, space.parameters) for r in runs],
                           dict(last.widths or {}), _round_notes(last, alone))
            rounds.append(record)
            _save(folder, space, rounds, "running")  # before running: an interrupted round keeps its reasons
            if not runner(runs, folder):
                status, message = "failed", _failed(_left_out(runs, space, _read(folder, host, True)) or runs, folder)
                break
            launched = runs
            if alone:
                _note_unmatched(folder, host, runs[0], metrics, callpaths, say)
        else:
            message = (f"stopped after --max-steps {format_count(max_steps, 'round')}; start again to go on"
                       if max_steps is not None else
                       f"stopped after {steps} rounds, as many as the full factorial has runs, before the rule held or "
                       f"the budget was spent: the runs may not measure the points planned (see {folder / 'logs'})")
        experiment = _read(folder, host, status in ("failed", "unmeasured"))
        if experiment is None and status in ("failed", "unmeasured"):
            _save(folder, space, rounds, status)
            raise RunsFailed(f"{folder}: " + (message if status == "unmeasured" else
                                              f"every launch failed, nothing was measured (see {folder / 'logs'}); "
                                              f"fix it and start again"))
        if experiment is None:
            raise InputError("no measurements were made", folder)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model_set = api.model(experiment, modeler, measure=measure, host=host, **dict(options or {}))
        space, designed = _aligned(space, experiment)  # ``experiment`` as read: the final models are ``model``'s
        final = design.suggest(space, designed, **settings) if status in ("steps", "failed", "unmeasured") else last
        launches = designed.runs()
        before = _measured_before(launches, space.parameters, rounds, final.cost_model)
        _save(folder, space, rounds, status, before)
        # The share spent: after a failed launch or --max-steps, ``final`` is a fresh plan whose share counts its runs.
        result = AutotuneResult(folder, status, rounds, model_set, final.target, tolerance, final.measured_share,
                                final.measured_cost, final.full_cost, final.budget_limit, message,
                                len(designed.points()), len(launches), before, _unmeasured(rounds, space, launches),
                                budget_points=final.budget_points)
        _write_reports(result, final, host)
        say(f"{_verdict(result)}; report: {folder / REPORT}")
        return result


@contextlib.contextmanager
def _quietly(description: str) -> Iterator[None]:
    yield None


@contextlib.contextmanager
def _tuning(folder: pathlib.Path) -> Iterator[None]:
    """The folder for one loop at a time: a second loop started on it while this one runs ends with one line
    (both would plan and launch the same runs and write the same ``autotune.json``).  An advisory lock on
    ``OUTPUT/.autotune.lock``, which the system releases when the process ends, however it ends.  No lock where
    there is no ``fcntl`` (Windows), where the folder cannot be written (what writes next says so) or where the
    file system has no locks (some NFS mounts): the loop runs as before."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    path = folder / LOCK
    try:
        stream = open(path, "a+", encoding="utf-8")
    except OSError:
        yield
        return
    with stream:
        try:
            fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            stream.seek(0)
            holder = stream.read().strip()
            raise InputError(f"another autotune is tuning this folder{f' ({holder})' if holder else ''}; wait for "
                             f"it to end, or give another -o folder", folder) from None
        except OSError:  # no locks here
            stream.close()
            path.unlink(missing_ok=True)
            yield
            return
        stream.seek(0)
        stream.truncate()
        stream.write(f"process {os.getpid()} on {socket.gethostname()}\n")
        stream.flush()
        try:
            yield
        finally:
            path.unlink(missing_ok=True)  # before the lock goes: a loop that starts now makes a file of its own


# ------------------------------------------------------------------ running
def _most_rounds(space: design.Space, repetitions: int | None) -> int:
    """Rounds enough for any loop on ``space``: the base round, then at least one run a round, and a point never
    runs more often than the most repetitions ever advised (those for noise above 5 %) or given."""
    per_point = max(design.advise_repetitions(len(space.parameters), noise=1.0)[0], repetitions or 1)
    return space.grid().shape[0] * per_point + 1


def _check_launch(candidates, command, output, mpiexec, mpiexec_args, timeout) -> str:
    """Check that the sweep runner can launch these candidates (p processes, the others environment variables),
    before anything runs; what it launches with and where the measurements go, for the first line."""
    from .instrument import sweep

    sweep.check_launchable(candidates)
    counts = [int(p) for p in candidates.get("p", [1])]
    launcher = sweep.check_launch(timeout, mpiexec, mpiexec_args, counts)
    crowded = sweep.oversubscribed(counts)
    data = sweep.data_file(output, command)
    _check_only_this_program(pathlib.Path(output), data)
    sweep.check_program(command)
    names = [name for name in candidates if name != "p"]
    notes = [note for note in (crowded, sweep.scorep_replaced(data, names, command)) if note]
    return (f"runs with {sweep.describe_launcher(launcher)}; measurements to "
            f"{sweep.destinations(data, names, command)}"
            + "".join(f"; note: {note}" for note in notes))


def _check_callpaths(callpaths: Sequence[str]) -> None:
    """An empty --callpath matches nothing, which the loop would find only after measuring the base design."""
    blank = next((glob for glob in callpaths if not str(glob).strip()), None)
    if blank is not None:
        raise InputError(f"--callpath {blank!r}: expected a call path or a glob such as 'main->*'")


def _check_own_files(folder: pathlib.Path) -> None:
    """The loop replaces its state file every round and its reports at the end: a read-only one stops it before
    anything runs (the write would, after the first round), and so does a file with a report's name in a folder no
    loop has tuned (no state file: a loop saves it before its first run, and its reports only at its end), which is
    the user's, not a report to replace; a folder of one of their names, which it would fail to write at its end."""
    for own in (folder / STATE, folder / REPORT, folder / MODELS):
        if own.is_dir():
            what = "state" if own.name == STATE else "report"
            raise InputError(f"is a folder; the loop writes its {what} there as one file: move it away, or give "
                             f"another -o folder", own)
        if own.is_file() and is_read_only(own):  # also another user's file: said before a round has run
            raise InputError("is read-only; the loop keeps its state and reports here: make it writable", own)
    if (folder / STATE).exists():
        return
    for report in (folder / REPORT, folder / MODELS):
        if report.exists() or report.is_symlink():
            raise InputError(f"is not a report an earlier loop wrote here (there is no {STATE} beside it); it is not "
                             f"replaced (move it away, or give another -o folder)", report)


def _check_only_this_program(folder: pathlib.Path, data: pathlib.Path) -> None:
    """The loop reads the whole folder: measurements of another program there would count as this one's (their
    points measured, their call paths modelled), so they stop it before anything runs."""
    if not folder.is_dir():
        return
    from .instrument import sweep

    stem = data.name[: -len(".extrap.jsonl")]
    others = sorted(p.name for p in folder.glob("*.extrap.jsonl")
                    if p.name != data.name and not p.name.startswith(f"{stem}."))
    prefix = sweep.scorep_prefix(data)  # a Score-P program's profiles: <prefix>.p4.n8000.r0/profile.cubex
    others += sorted(p.parent.name for p in folder.glob(f"*/{sweep.SCOREP_PROFILE}")
                     if not p.parent.name.startswith(f"{prefix}."))
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise InputError(f"holds measurements of another program ({shown}), which the loop would count as "
                         f"{data.name}'s; give a new -o folder", folder)


def _sweep_runner(command, mpiexec, mpiexec_args, timeout, quiet=False):
    def run(runs: list[design.Run], folder: pathlib.Path) -> bool:
        from .instrument import sweep

        plan = design.Plan(tuple(runs[0].point), list(runs))
        plan_path = folder / ".autotune-plan.json"
        design.write_plan(plan_path, plan)
        args = argparse.Namespace(plan=str(plan_path), np=None, param=[], repetitions=None, output=str(folder),
                                  mpiexec=mpiexec, mpiexec_arg=list(mpiexec_args), timeout=timeout, dry_run=False,
                                  program=list(command), loop=True, quiet=quiet)
        try:
            return sweep.run(args) == 0
        finally:
            plan_path.unlink(missing_ok=True)  # the round's plan is in autotune.json; this copy was the sweep's

    return run


def _measured_before(launches: np.ndarray, names, rounds: list[Round], cost_model: design.CostModel) -> list[dict]:
    """The runs of the folder (``launches``, :meth:`~extrap_plugins.experiment.Experiment.runs` over the parameters
    ``names``) beyond those the rounds planned, per point: measured before the loop (by `run`, say), for the
    report."""
    points, counts = np.unique(launches[:, :-1], axis=0, return_counts=True)
    planned: dict[tuple, int] = {}
    for r in rounds:
        for run in r.runs:
            key = tuple(float(run["point"][n]) for n in names)
            planned[key] = planned.get(key, 0) + int(run["repetitions"])
    costs = cost_model(points)
    return [{"point": dict(zip(names, point)), "repetitions": count - planned.get(tuple(point), 0), "cost": cost,
             "why": "measured before the loop"}
            for point, count, cost in zip(points.tolist(), counts.tolist(), costs.tolist())
            if count > planned.get(tuple(point), 0)]


def _unmeasured(rounds: list[Round], space: design.Space, launches: np.ndarray) -> dict[tuple[int, int], int]:
    """The repetitions each round's runs lack in the folder (``launches``: its runs, in the space's order)."""
    done = _done(launches)
    lacking = {(r.number, place): _missing(run, space.parameters, done)
               for r in rounds for place, run in enumerate(map(_as_run, r.runs))}
    return {key: missing for key, missing in lacking.items() if missing}


def _finish_round(last: Round, space: design.Space, folder: pathlib.Path, host, runner, say) -> list[design.Run]:
    """Measure what an interrupted round left out (stopped after its last run, it is complete) at points that are
    still candidates; the runs a failed launch left unmeasured (empty when all went well)."""
    runs = [_as_run(r) for r in last.runs]
    inside = [run for run in runs if _is_candidate(run, space)]
    if len(inside) < len(runs):
        outside = [run for run in runs if not _is_candidate(run, space)]
        say(f"round {last.number}'s runs at {_points(outside)} are no candidates now (--param): left out")
    left_out = _left_out(inside, space, _read(folder, host))
    if not left_out:
        return []
    say(f"round {last.number} did not finish: measuring what it left out ({format_count(len(left_out), 'point')})")
    if runner(left_out, folder):
        return []
    return _left_out(left_out, space, _read(folder, host)) or left_out


def _is_candidate(run: design.Run, space: design.Space) -> bool:
    return all(np.isclose(values, float(run.point[name])).any() for name, values in zip(space.parameters, space.values))


def _failed(runs: list[design.Run], folder: pathlib.Path) -> str:
    """What the loop says when a launch failed: where, and the ways to go on."""
    them = "the point" if len(runs) == 1 else "these points"
    return (f"a launch failed at {_points(runs)} (see {folder / 'logs'}); fix the program, or give --param values that "
            f"leave {them} out, and start again: measured runs are reused")


def _never_read(folder: pathlib.Path, command: Sequence[str], space: design.Space) -> str | None:
    """What stops the loop when the runs so far show a parameter the program never reads
    (:func:`extrap_plugins.instrument.sweep.never_read`: runs alike but in its value, measured alike, and the
    shim saying the program did not read it); None while none does."""
    if not command:
        return None
    from .instrument import sweep

    names = [name for name in space.parameters if name != "p"]
    said = sweep.never_read(sweep.data_file(folder, command), names, command)
    return "; ".join(said) + "; start again in a new -o folder" if said else None


def _none_measured(runs: list[design.Run], space: design.Space, experiment) -> bool:
    """Whether the folder lacks every repetition of every one of ``runs``."""
    if experiment is None:
        return True
    done = _done(experiment.runs())
    return all(_missing(run, space.parameters, done) == run.repetitions for run in runs)


def _unseen(runs: list[design.Run], number: int, folder: pathlib.Path) -> str:
    """What the loop says when a round's launches went well and the folder shows none of its runs."""
    return (f"round {number}'s runs at {_points(runs)} ended well, yet the measurements in {folder} hold none of "
            f"them (as the readers number points and repetitions; see {folder / 'logs'}): does the program take its "
            f"parameters from EXTRAP_PARAM_<NAME> or {{name}} in its arguments, and do earlier runs in the folder "
            f"come from another sweep? (`extrap-plugins model {shlex.quote(str(folder))}` shows what the readers make "
            f"of it, broken profiles too) Start again in a new folder")


def _left_out(runs: list[design.Run], space: design.Space, experiment) -> list[design.Run]:
    """The runs of which ``experiment`` lacks a repetition (of a run with several, the runner launches only the
    missing ones)."""
    if experiment is None or not runs:
        return runs
    space, experiment = _aligned(space, experiment)
    names = list(space.parameters)
    done = _done(experiment.runs())
    return [run for run in runs if _missing(run, names, done)]


def _done(launches: np.ndarray) -> set[tuple]:
    """The runs measured (``Experiment.runs()``: point and repetition per row) as a set to look runs up in."""
    return {tuple(row) for row in launches.tolist()}


def _missing(run: design.Run, names: Sequence[str], done: set[tuple]) -> int:
    """How many of ``run``'s repetitions the folder lacks (``done``: its runs, point and repetition, in the order
    of ``names``)."""
    point = tuple(float(run.point[name]) for name in names)
    return sum((*point, float(k)) not in done for k in range(run.first, run.first + run.repetitions))


def _read(folder: pathlib.Path, host, failed: bool = False):
    """The measurements in ``folder`` so far (None before the first run, and after failed launches when the
    readers find no run whole: every launch failed, also after writing its measurements)."""
    from . import api
    from .instrument import sweep

    if not sweep.has_measurements(folder):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return api.read(folder, host=host)
        except InputError:
            if failed:
                return None
            raise


def _say_notes(last: design.Suggestion, rounds: list[Round], number: int, say) -> None:
    """What the budget does to the base design (shorter lines, no point off them), once, also when the base
    takes two rounds; and once, in the round it is first found, that the cost model leaves out a parameter a
    run's time grows with (stop with Ctrl-C and start again with --cost)."""
    for note in last.notes:
        if note.startswith(design.UNPRICED):
            said = any(n.startswith(design.UNPRICED) for r in rounds for n in r.notes)
        else:
            said = last.status != "base" or any(note in r.notes for r in rounds if r.status == "base")
        if not said:
            say(f"round {number}: note: {note}")


def _say_repetitions(last: design.Suggestion, runs: list[design.Run], rounds: list[Round], number: int,
                     say, alone: bool = False) -> None:
    """Why the base design's points get fewer repetitions than the full factorial's (the budget, or exact counts),
    with what that means, and why a later round's new points get another number than the last round's (the noise
    measured so far, or what the budget leaves), when it changes.  Not for the base's first run alone: its count
    is planned before the noise is known, and the rest of the base says the reason the summary repeats (it said
    'the advised 4' there, and the summary 'the advised 6')."""
    if not runs or runs[0].first or alone:
        return
    if last.status == "base":
        if last.repetitions < last.reference_repetitions:
            say(f"round {number}: repetitions per run: {last.repetitions_reason}")
        return
    before = next((r.runs[0]["repetitions"] for r in reversed(rounds)
                   if r.runs and not r.runs[0].get("first_repetition")), None)
    if before is None:
        before = last.reference_repetitions
        if runs[0].repetitions >= before:  # as many as advised: nothing to explain
            return
    if before != runs[0].repetitions:
        say(f"round {number}: repetitions per run: {last.repetitions_reason}")


def _round_notes(last: design.Suggestion, alone: bool) -> list[str]:
    """A round's notes as saved (the summary and the report repeat the base design's): the plan's, and for the base
    with fewer than the advised repetitions, why (the first run alone is planned before the metrics' kind is
    known, so its count is not the base's).  The plan's count, not a run's: a run that finishes an interrupted
    point has only the repetitions it lacks."""
    notes = list(last.notes)
    if last.status == "base" and not alone and last.repetitions < last.reference_repetitions:
        notes.append(f"repetitions per run: {last.repetitions_reason}")
    return notes


def _say_timed_cost(last: design.Suggestion, said: bool, number: int, say) -> bool:
    """Say :data:`TIMED_COST` in the first round whose cost model has a fitted run time; whether it is said."""
    if said or not getattr(last.cost_model, "time", 0) or last.cost_model.run_time is None:
        return said
    say(f"round {number}: note: {TIMED_COST}")
    return True


def _this_round(last: design.Suggestion, experiment, metrics, callpaths) -> tuple[list[design.Run], bool]:
    """The runs a round measures, and whether it is the base design's first run alone: into an empty folder with
    --metric or --callpath that run comes first, since the names come from the measurements, and so does the
    metrics' kind (exact counters need one run a point), which the rest of the base is then planned with."""
    runs = last.plan.runs if last.status == "base" else last.plan.runs[:1]
    alone = experiment is None and bool(metrics or callpaths) and len(runs) > 1
    return (runs[:1] if alone else runs), alone


def _note_unmatched(folder: pathlib.Path, host, run: design.Run, metrics, callpaths, say) -> None:
    unmatched = _unmatched_names(folder, host, run, metrics, callpaths)
    if unmatched:
        say(f"note: {unmatched}")


def _resume(rounds: list[Round], saved_status: str | None, say) -> None:
    """Say how the loop goes on from the rounds saved; a loop that had ended drops its verdict (its last round,
    without runs), which the round assessed now replaces."""
    if rounds and not rounds[-1].runs:
        ended = f" ({saved_status})" if saved_status else ""
        say(f"the loop ended after {format_count(len(rounds), 'round')}{ended}: its last round is assessed again "
            f"with the settings given; measured runs are reused")
        rounds.pop()
    elif rounds:
        say(f"resuming after {format_count(len(rounds), 'round')}: measured runs are reused")


def _suggest(space: design.Space, experiment, rounds: list[Round], told, settings: dict) -> design.Suggestion:
    """The next step; while the base design is being measured, names of ``--metric`` and ``--callpath`` that
    match nothing yet plan the rest of it as if nothing were selected (a region may be entered only at larger
    scales); once the base is measured, such names are an error."""
    try:
        return design.suggest(space, experiment, progress=told, **settings)
    except InputError:
        if not (rounds and rounds[-1].status == "base"):
            raise
        rest = _base_without_names(space, experiment, told, settings)
        if rest is None or rest.status != "base":
            raise
        return rest


def _base_without_names(space: design.Space, experiment, told, settings: dict) -> design.Suggestion | None:
    """The rest of the base design planned without the names that match nothing yet: without the call paths where
    the metrics match (their kind still decides the repetitions: exact counts need one run a point), else without
    both; None when neither plans.  Metrics named with --metric stay the judged ones, so the note on the minima
    and maxima that are not judged unless named is left out."""
    for dropped in (("callpaths",), ("metrics", "callpaths")):
        try:
            rest = design.suggest(space, experiment, progress=told, **{**settings, **dict.fromkeys(dropped, ())})
        except InputError:
            continue
        if settings.get("metrics"):
            unnamed = design.EXTREMES_NOTE.partition("{")[0]
            rest.notes = [note for note in rest.notes if not note.startswith(unnamed)]
        return rest
    return None


def _unmatched_names(folder: pathlib.Path, host, run: design.Run, metrics, callpaths) -> str | None:
    """What the first run says of the names ``--metric`` and ``--callpath`` select, when they match nothing in it
    (None when they do).  A note, not an error: a region may be entered only at other scales."""
    experiment = _read(folder, host)
    if experiment is None:
        return None
    try:
        experiment.select(metrics=metrics, callpaths=callpaths)
        return None
    except InputError:
        pass
    known = [m.name for m in experiment.metrics]
    unknown = [m for m in metrics if m not in known]
    if unknown:
        what = f"no metric {', '.join(map(repr, unknown))} (it measured {', '.join(known)})"
    else:
        names = [c.name for c in experiment.callpaths]
        shown = ", ".join(names[:NAMES_SHOWN]) + (f", ... ({len(names)} in all)" if len(names) > NAMES_SHOWN else "")
        what = f"no call path matching {', '.join(map(repr, callpaths))} (it measured {shown})"
    return (f"the first run {format_point(run.point, brackets=True)} measured {what}; other runs may, but if the "
            f"name is wrong, stop with Ctrl-C and start again with the right one: measured runs are kept")


def _aligned(space: design.Space, experiment):
    """The space in the experiment's parameter order (the reader decides it), and the experiment with every
    parameter of the space: one the reader left out for having one value in every run comes back
    (:meth:`~extrap_plugins.experiment.Experiment.with_parameters`; runs at p = 1 alone, say, before the loop),
    and one that is no candidate but has one value in every run is left out (the process count 1 of a loop
    without ``--param p``, which the reader keeps while every run is at one point)."""
    if experiment is None:
        return space, None
    single = experiment.single_valued()
    names = [n for n in experiment.parameter_names if n in space.parameters or n not in single]
    restored = [n for n in space.parameters if n not in names and n in experiment.constants]
    if restored:  # the candidates' order, which the reader keeps once every parameter varies
        names = [n for n in space.parameters if n in names or n in restored]
    if sorted(names) != sorted(space.parameters):
        raise InputError(f"the measurements have the parameters {list(experiment.parameter_names)}, the candidates "
                         f"{list(space.parameters)}; give --param for exactly these (p is the process count)")
    values = dict(zip(space.parameters, space.values))
    return design.Space(tuple(names), tuple(values[n] for n in names)), experiment.with_parameters(names)


# -------------------------------------------------------------------- state
def _saved(run: design.Run, parameters) -> dict:
    """A run of a round as ``autotune.json`` keeps it (:func:`_as_run` reads it back)."""
    return design.run_document(run, parameters, why=True)


def _as_run(saved: Mapping) -> design.Run:
    """A run of a saved round (checked by :func:`_loaded_round`), to measure again (its ``serves`` stay in the
    saved round)."""
    return design.run_from_document(saved, list(saved["point"]), "a saved run", pathlib.Path(STATE))


def _load_rounds(folder: pathlib.Path, parameters) -> tuple[list[Round], str | None]:
    """The rounds saved in the folder, and the status the loop saved with them (``running`` while a round was
    interrupted; None without a state file)."""
    path = folder / STATE
    if not path.exists():
        return [], None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise InputError(f"cannot resume: {error}", path) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(f"cannot resume: not an autotune state (\"format\": \"{FORMAT}\")", path)
    if document.get("version") != VERSION:  # as a plan file's: a later version's state is not read as this one's
        raise InputError(f"cannot resume: state version {document.get('version')!r} is not supported (expected "
                         f"{VERSION})", path)
    tuned = document.get("parameters")
    if not isinstance(tuned, list) or sorted(map(str, tuned)) != sorted(parameters):
        raise InputError(f"cannot resume: the folder was tuned over {tuned}, now {list(parameters)}; use another -o "
                         f"folder", path)
    saved = document.get("rounds", [])
    if not isinstance(saved, list):
        raise InputError("cannot resume: \"rounds\" must be a list", path)
    rounds = [_loaded_round(r, number, parameters, path) for number, r in enumerate(saved, 1)]
    return rounds, document.get("status")


def _loaded_round(saved, number: int, parameters, path: pathlib.Path) -> Round:
    """Round ``number`` of ``autotune.json`` (:meth:`Round.document`), every field checked: a state file edited by
    hand or cut short ends the loop with one line, not an internal error."""
    where = f"cannot resume: round {number}"
    if not isinstance(saved, dict):
        raise InputError(f"{where}: expected an object", path)
    runs, widths, notes = saved.get("runs", []), saved.get("widths", {}), saved.get("notes", [])
    if not (isinstance(saved.get("round"), int) and isinstance(saved.get("status"), str)
            and design.is_number(saved.get("share"))):
        raise InputError(f"{where}: expected \"round\" (a whole number), \"status\" and \"share\" (a number)", path)
    if not (isinstance(runs, list) and isinstance(notes, list) and isinstance(widths, dict)
            and all(v is None or design.is_number(v) for v in widths.values())):
        raise InputError(f"{where}: \"runs\" and \"notes\" must be lists, \"widths\" numbers by kernel", path)
    # the reason as the run reads it: "" where a hand-edited file has none, or no text
    runs = [{**run, "why": design.run_from_document(run, parameters, f"{where}, run {place}", path).role}
            for place, run in enumerate(runs, 1)]
    return Round(saved["round"], saved["status"], float(saved["share"]), runs,
                 {name: math.nan if v is None else float(v) for name, v in widths.items()}, [str(n) for n in notes])


def _save(folder: pathlib.Path, space: design.Space, rounds: list[Round], status: str,
          before: list[dict] | None = None) -> None:
    """The state file; at the end, ``before`` lists the runs measured before the loop (as the report does)."""
    document = {"format": FORMAT, "version": VERSION, "parameters": list(space.parameters),
                "candidates": {n: [json_plain(v) for v in values] for n, values in zip(space.parameters, space.values)},
                "status": status, "rounds": [r.document() for r in rounds]}
    if before:
        document["measured_before"] = [{**run, "point": {n: json_plain(v) for n, v in run["point"].items()}}
                                       for run in before]
    with atomic_writer(folder / STATE) as stream:
        stream.write(json.dumps(document, indent=1) + "\n")


# ----------------------------------------------------------------- messages
def _say(message: str) -> None:
    sys.stderr.write(f"extrap-plugins autotune: {message}\n")
    sys.stderr.flush()


def _widest(widths: Mapping[str, float] | None, tolerance: float) -> str:
    if not widths:
        return ""
    name, width = max(widths.items(), key=lambda kv: kv[1])
    return f"; widest interval at the target: {format_callpath(name)} ±{design.format_width(width, tolerance)}"


def _count(repetitions: list[int]) -> str:
    """Points with their repetitions each: "10 points × 4 repetitions", or "3 points, 7 launches" when they differ."""
    points = format_count(len(repetitions), "point")
    if len(set(repetitions)) == 1:
        return f"{points} × {format_count(repetitions[0], 'repetition')}"
    return f"{points}, {sum(repetitions)} launches"


def _points(runs: list[design.Run], shown: int = 3) -> str:
    """"(p=1, n=64), (p=2, n=64) ...": the first points of some runs."""
    return ", ".join(format_point(r.point, brackets=True) for r in runs[:shown]) + (" ..." if len(runs) > shown else "")


NEAREST_ROUND = ("the point nearest the target, which lies beyond the candidate values (it tests how the parameters "
                 "combine there)")
"""How a round names the run ``suggest`` plans first beyond the candidate values (:func:`design.is_nearest_run`)."""


def _describe_round(s, runs, share, tolerance, alone: bool = False) -> str:
    if alone:
        what = ("the base design's first run, alone (it tells what --metric and --callpath match and whether the "
                "metrics are exact counts)")
    elif s.status == "base":
        what = "the base design"
    else:
        what = ("a repetition of largest expected gain" if runs[0].first else NEAREST_ROUND
                if design.is_nearest_run(runs[0]) else "the run of largest expected gain")
    count = _count([int(r.repetitions) for r in runs])
    return (f"{what}: {count} {_points(runs)} (cost so far {share:.1%} of the full factorial)"
            f"{_widest(s.widths, tolerance)}")


def _describe_end(s, tolerance) -> str:
    if s.status == "done":
        return (f"the stopping rule holds (every judged interval within ±{format_percent(tolerance)})"
                f"{_widest(s.widths, tolerance)}")
    if s.status == "budget":
        return f"the budget left buys no further run that narrows an interval as printed{_widest(s.widths, tolerance)}"
    if s.status == "exhausted":
        return f"every candidate point is measured{_widest(s.widths, tolerance)}"
    return s.status


def _verdict(result: AutotuneResult) -> str:
    text = {"done": "done: the models are within tolerance at the target",
            "budget": "stopped: the budget left buys no further run that narrows an interval as printed, before the "
                      "rule holds",
            "exhausted": "stopped: every candidate point is measured before the rule holds",
            "failed": "stopped: a launch failed",
            "unmeasured": "stopped: a round's runs went well and measured nothing the folder shows",
            "steps": "stopped: --max-steps reached"}.get(result.status, result.status)
    return f"{text} ({result.share:.1%} of the full factorial's cost)"


def summary(result: AutotuneResult) -> str:
    """The final state as text for stdout."""
    measuring = _measuring_rounds(result)
    lines = [_verdict(result), f"measured: {format_count(result.points, 'point')}, "
                               f"{format_count(result.runs, 'run')} with the repetitions, in "
                               f"{format_count(measuring, 'round')}; "
                               f"models: {len(result.model_set)}; report: {result.folder / REPORT}"]
    if result.message:
        lines.append(result.message)
    lines.extend(f"note: {n}" for n in final_notes(result.rounds))
    return "\n".join(lines) + "\n"


def _measuring_rounds(result: AutotuneResult) -> int:
    """The rounds that measured something (not the last assessment, which measured nothing): the summary's and
    the report's count."""
    return sum(1 for r in result.rounds if r.runs)


def final_notes(rounds: list[Round]) -> list[str]:
    """The notes of the last round, after those of the base design's last round that it does not repeat (what the
    budget did to the base: lines shorter than five values, no point off them).  The last: the base design's first
    run, measured alone, was planned before the metrics' kind and a run's time were known, and the rest of the base
    is planned again after it (its "no point off the lines fits the budget" was said to the end of a loop whose
    next round measured one).  Notes about the candidates and the metrics come from the last round alone (a loop
    resumed with other --param values said "p has fewer than 5 …" of the base and "p, n have fewer …" last)."""
    if not rounds:
        return []
    last = list(rounds[-1].notes)
    bases = [r for r in rounds[:-1] if r.status == "base"]
    base = [n for n in (bases[-1].notes if bases else []) if n not in last and not design.is_space_note(n)]
    if any(n.startswith(design.UNPRICED) for n in last):  # the growth the cost leaves out, as fitted last only
        base = [n for n in base if not n.startswith(design.UNPRICED)]
    return list(dict.fromkeys(base)) + last


# ------------------------------------------------------------------- report
def _write_reports(result: AutotuneResult, final, host) -> None:
    from . import api

    target = _models_target(result)
    options = {"target": target} if target else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # The folder is autotune's own workspace: its report sits beside the runs it measured (the readers
        # skip it), so the "not inside an input folder" rule for -o does not apply here.
        api.export(result.model_set, "html", result.folder / MODELS, host=host, inputs=(), **options)
    with atomic_writer(result.folder / REPORT) as stream:
        stream.write(render_report(result, final))


def _models_target(result: AutotuneResult) -> dict[str, float] | None:
    """The target in the final models' parameters: one of one candidate value (``--param n=1000``) is a constant
    the readers leave out of the models, and the target lies at that value."""
    if not result.target:
        return result.target
    return {name: value for name, value in result.target.items() if name in result.model_set.parameters}


def _interval(width: float | None, why_not: str | None) -> str:
    """The report's interval cell: the half-width, or why the kernel was not judged (too small to matter at the
    target, say), or nothing when there is no assessment."""
    if width is not None:
        return "±" + format_share(width)
    return html.escape(f"not judged: {why_not}") if why_not else ""


def render_report(result: AutotuneResult, final) -> str:
    """A self-contained page: the verdict, the models at the target, and every run with its reason."""
    from .extrapolation import extrapolate
    from .selector import COPY_OF

    esc = html.escape
    target = result.target
    ranked = extrapolate(result.model_set, _models_target(result), intervals=target is not None)
    widths = (final.widths or {}) if final is not None else {}
    not_judged = (final.not_judged or {}) if final is not None else {}
    copy_of = {name: why[len(COPY_OF):].strip() for name, why in not_judged.items()
               if why.startswith(COPY_OF)}  # judged through another kernel with the same measurements
    assessed = bool(widths or not_judged)
    extremes = _extremes(result.model_set, getattr(final, "notes", None) or ())
    model_rows = []
    shown = callpath_labels([m.callpath for m, _ in ranked])
    for model, row in ranked:
        name = model.callpath if model.metric == "time" else f"{model.callpath} [{model.metric}]"
        width = widths.get(name, widths.get(copy_of.get(name, "")))
        why_not = not_judged.get(name) or (_unselected(model.metric, extremes) if assessed else None)
        model_rows.append(
            f"<tr><td title=\"{esc(model.callpath)}\">{esc(shown[model.callpath])}</td>"
            f"<td>{esc(model.metric)}</td><td class=f>{esc(model.formula)}</td>"
            f"<td>{_num(row.value_target)}{_crossing(model.metric, row.crosses)}</td>"
            f"<td>{_interval(width, why_not)}</td></tr>")
    run_rows = [_run_row("before", run) for run in result.before]
    run_rows += [_run_row(str(r.number), run, result.unmeasured.get((r.number, place), 0))
                 for r in result.rounds for place, run in enumerate(r.runs)]
    notes = "".join(f"<li>{esc(n)}</li>" for n in final_notes(result.rounds))
    where = format_point(target, brackets=True) if target else "(none)"
    priced = f"; cost of a run: {final.cost_model.describe()}" if getattr(final, "cost_model", None) else ""
    budget = "none" if not math.isfinite(result.budget_limit) else f"{result.budget_limit:g} cost units " \
        f"({result.budget_limit / result.full_cost:.1%} of the full factorial)"
    spent = f"{result.cost:g} cost units"
    if result.budget_points is not None:  # what was spent in the budget's units too
        budget = f"at most {format_count(result.budget_points, 'point')}"
        spent = f"{format_count(result.points, 'point')} ({spent})"
    measuring = _measuring_rounds(result)  # as the summary counts them
    rounds = f"{measuring} that measured" + (f", then {format_count(len(result.rounds) - measuring, 'assessment')}"
                                             if len(result.rounds) > measuring else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>extrap-plugins autotune: {esc(str(result.folder))}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:75em}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:.25em .6em;text-align:left}}th{{background:#eee}}td.f{{font-family:monospace}}
.verdict{{font-size:1.2em;font-weight:bold}}</style></head><body>
<h1>Autotune report</h1>
<p class="verdict">{esc(_verdict(result))}</p>
<ul><li>target: {esc(where)}; stopping rule: every judged kernel's 95 % interval at the target within
±{format_percent(result.tolerance)}</li><li>budget: {esc(budget)}; spent: {esc(spent)}{esc(priced)}</li>
<li>rounds: {esc(rounds)}; measurements: {esc(str(result.folder))}; interactive models report:
<a href="{MODELS}">{MODELS}</a></li>{notes}</ul>
<h2>Models</h2>
<table><tr><th>call path</th><th>metric</th><th>model</th><th>value at the target</th>
<th>interval at the target</th></tr>
{''.join(model_rows)}</table>
<h2>Points measured, and why</h2>
<table><tr><th>round</th><th>point</th><th>repetitions</th><th>cost per run</th><th>why</th></tr>
{''.join(run_rows)}</table>
</body></html>
"""


def _extremes(model_set, notes) -> set[str]:
    """The metrics of the final models that the assessment left out as minima and maxima (its notes say so when
    --metric named none)."""
    from .extrapolation import bound_metrics

    if not any(note.startswith(design.EXTREMES_NOTE.partition("{")[0]) for note in notes):
        return set()
    return set(bound_metrics(list(dict.fromkeys(model.metric for model in model_set))))


def _unselected(metric: str, extremes: set[str]) -> str:
    """Why a kernel has no interval that the assessment neither judged nor said why not: it was not among those
    selected (the report's models are all of the folder's)."""
    if metric in extremes:
        return "a minimum or maximum, judged when named with --metric"
    return "not selected by --metric and --callpath"


def _run_row(when: str, run: Mapping, unmeasured: int = 0) -> str:
    """A row of the report's table of the points measured: the round (or "before"), the point, why; repetitions
    the round planned and the folder lacks are said."""
    esc = html.escape
    repetitions, why = run["repetitions"], run["why"]
    if unmeasured:
        repetitions = f"{repetitions - unmeasured} of {repetitions}"
        why += " (not measured: a launch failed, or the point is no candidate any more)"
    return (f"<tr><td>{esc(when)}</td><td>{esc(format_point(run['point']))}</td><td>{repetitions}</td>"
            f"<td>{run['cost']:g}</td><td>{esc(why)}</td></tr>")


def _crossing(metric: str, other: str | None) -> str:
    """What the report says beside a value at the target that contradicts its bound's (a minimum above its
    maximum, modelled apart)."""
    from .extrapolation import is_minimum

    if other is None:
        return ""
    return html.escape(f" (!) {'above' if is_minimum(metric) else 'below'} {other} there: one of the two is wrong")


def _num(value: float) -> str:
    return "" if value is None or not math.isfinite(value) else f"{value:.4g}"

