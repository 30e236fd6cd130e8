"""The run around the regions: parameters, where the output goes, and writing it at exit.

Nothing here runs until the program uses the shim (defines a region, wraps
a communicator or sets parameters): then an ``atexit`` handler and a
``sys.excepthook`` are installed, and, once MPI is initialised, an attribute
on ``MPI.COMM_SELF`` whose delete callback runs inside ``MPI_Finalize``, so a
program that calls ``MPI.Finalize()`` itself is measured up to that call.

Environment variables (the sweep runner sets the first four):

``EXTRAP_OUTPUT``
    The output file (``runs/app.extrap.jsonl``) or an existing folder;
    default ``<program>.extrap.jsonl`` in the starting directory.
``EXTRAP_PARAM_<NAME>``
    A parameter value (``EXTRAP_PARAM_N=1000`` records ``n = 1000``);
    ``EXTRAP_PARAM_NAMES=blockSize,n`` keeps the spelling of the names.
``EXTRAP_REPETITION``
    The repetition number of this run.
``EXTRAP_RUN_ID``
    The run's identifier (default: made up by rank 0).
``EXTRAP_EXIT_TIMEOUT``
    Seconds rank 0 waits for the other ranks at exit (default 30).
``EXTRAP_QUIET=1``
    No note on stderr when the run was written.
``EXTRAP_INSTRUMENT=0``
    Record nothing, write nothing.
"""

from __future__ import annotations

import atexit
import datetime
import math
import os
import socket
import sys
import threading
import time
import uuid
from typing import Any

from extrap_plugins.options import env_flag

from . import regions

PROG = "extrap-plugins instrument"
DEFAULT_TIMEOUT = 30.0
SIGNAL_GRACE = 1.0
"""Seconds a rank of a multi-rank job waits after writing its measurements at SIGTERM before it ends."""
CUT_SHORT_WAIT = 10.0
"""Seconds a rank waits at SIGTERM for its other thread to write the measurements it has."""


def _note(message: str) -> None:
    try:
        sys.stderr.write(f"{PROG}: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed at exit
        pass


def _program_name() -> str:
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name:
        name = spec.name.rsplit(".", 1)[-1]
        return spec.name.rsplit(".", 2)[-2] if name == "__main__" and "." in spec.name else name
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if argv0 in ("", "-c", "-"):
        return "python"
    stem = os.path.basename(argv0)
    return stem[:-3] if stem.endswith(".py") else stem


def _environment_parameters() -> tuple[dict[str, float], list[str]]:
    """``EXTRAP_PARAM_<NAME>`` values, and complaints about unusable ones."""
    spelled = {n.strip().upper(): n.strip() for n in os.environ.get("EXTRAP_PARAM_NAMES", "").split(",") if n.strip()}
    found: dict[str, float] = {}
    problems = []
    for key, text in sorted(os.environ.items()):
        if not key.startswith("EXTRAP_PARAM_") or key == "EXTRAP_PARAM_NAMES":
            continue
        upper = key[len("EXTRAP_PARAM_"):]
        name = spelled.get(upper, upper.lower())
        try:
            value = float(text)
        except ValueError:
            problems.append(f"{key}={text!r} is not a number; ignored")
            continue
        if not math.isfinite(value):
            problems.append(f"{key}={text!r} is not finite; ignored")
            continue
        found[name] = value
    # the sweep's order (its --param order, as EXTRAP_PARAM_NAMES lists them), then any others alphabetically
    given = [name for name in spelled.values() if name in found]
    others = sorted(name for name in found if name not in given)
    return {name: found[name] for name in given + others}, problems


def _importing_as_worker() -> bool:
    """Whether this process is a spawned (or forkserver) ``multiprocessing`` worker that is importing the program:
    it runs the program's file under the name ``__mp_main__`` before multiprocessing records its parent (in the
    parent, ``__mp_main__`` is another name of ``__main__``).  A pool ended at once ends such workers, and a program
    without the ``if __name__ == "__main__"`` guard fails there; :class:`Session` remembers it once seen, as a
    failed import leaves no trace of it at exit."""
    return getattr(sys.modules.get("__mp_main__"), "__name__", None) == "__mp_main__"


class Session:
    """Process-wide state of the shim (one instance, :data:`session`)."""

    def __init__(self) -> None:
        self.started_wall = datetime.datetime.now(datetime.timezone.utc)
        self.started = time.perf_counter()
        self.program = _program_name()
        self.environment_parameters, self.parameter_problems = _environment_parameters()
        self.program_parameters: dict[str, float] = {}
        # names the program asked for (instrument.parameter, parameters) or read from os.environ as
        # EXTRAP_PARAM_<NAME> once the shim was loaded: a sweep's --param the program never reads is told by them
        self.read_parameters: set[str] = set()
        if self.environment_parameters:
            _watch_environment(self)
        self.repetition, repetition_problem = _repetition_env()
        self.run_id: str | None = os.environ.get("EXTRAP_RUN_ID") or None  # else one per launch, see _launch_id
        self.timeout, timeout_problem = _seconds_env("EXTRAP_EXIT_TIMEOUT", DEFAULT_TIMEOUT)
        self.setting_problems = [problem for problem in (repetition_problem, timeout_problem) if problem]
        self.quiet = env_flag("EXTRAP_QUIET")
        self.output: str | None = _default_output(self.program)
        self.failure: str | None = None
        self.finished = False
        self.gathering = False  # in the exit gather: the measurements are not written yet
        self.hooks_installed = False
        self.mpi_attached = False
        self.world: tuple[int, int] | None = None  # (rank, size) once MPI was seen
        self.channel = None  # the shim's own duplicate of MPI.COMM_WORLD for the exit gather (see attach_mpi)
        self.used = False
        self.lock = threading.Lock()
        self.cut_short: threading.Event | None = None  # set once a signal's measurements are written
        self.signals: list[int] = []  # the signals whose handler is ours (_watch_signals)
        self.wakeup: tuple[int, int] | None = None  # our wakeup pipe (reading, writing), see _watch_wakeups
        self.forked = False  # this process is a child os.fork made of the measured one (see _forked)
        self.spawned = _importing_as_worker()  # a spawned worker importing the program (see child_process)
        self.interrupted = False  # the program ended by Ctrl-C (an unhandled KeyboardInterrupt)

    def name_program(self, name: str) -> None:
        """The program is ``name`` (``python -m extrap_plugins.instrument app.py`` runs ``app``): its
        measurements are named after it, not after the launcher."""
        self.program, self.output = name, _default_output(name)

    # ------------------------------------------------------------- hooks
    def use(self, collective: bool = False) -> None:
        """The program uses the shim: install the exit hooks, look for MPI (see :meth:`attach_mpi` for
        ``collective``)."""
        self.used = True
        self.spawned = self.spawned or _importing_as_worker()
        # (a spawned worker is no rank: no hooks, and its signals keep their default action)
        if not self.hooks_installed and not regions._state.environment_off and not self.spawned:
            self.hooks_installed = True
            atexit.register(self._at_exit)
            previous = sys.excepthook

            def record_failure(kind, value, traceback):
                self.failure = f"{kind.__name__}: {value}" if str(value) else kind.__name__
                self.interrupted = issubclass(kind, KeyboardInterrupt)
                previous(kind, value, traceback)

            sys.excepthook = record_failure
            self._watch_exit_calls()
            self._watch_signals()
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=self._forked)
            for problem in self.setting_problems + self.parameter_problems:
                _note(problem)
        self.attach_mpi(collective)

    def _watch_exit_calls(self) -> None:
        """``sys.exit(status)``, ``exit(status)`` and ``quit(status)`` with a failing status are recorded as this
        rank's failure (the run is not ok).  (``raise SystemExit(status)`` cannot be seen: the sweep runner's
        launch status catches it.)"""
        original = sys.exit

        def record(call: str, status) -> None:
            if status not in (None, 0) and self.failure is None:
                self.failure = f"the program called {call}({status!r})"

        def exit_recorded(status=None):
            record("sys.exit", status)
            original(status)

        exit_recorded.__wrapped__ = original  # type: ignore[attr-defined]
        sys.exit = exit_recorded
        import builtins

        for name in ("exit", "quit"):  # the site module's, for scripts
            quitter = getattr(builtins, name, None)
            if quitter is not None and not isinstance(quitter, _WatchedQuitter):
                setattr(builtins, name, _WatchedQuitter(name, quitter, record))

    def _watch_signals(self) -> None:
        """On SIGTERM (how batch schedulers and ``extrap-plugins run --timeout`` end a job), and on SIGHUP,
        each rank writes what it has measured so far to its own file, at once and without talking to the
        other ranks (they are being ended too), then ends by the same signal.  Only where the program
        left the signal's default action in place, and only from the main thread."""
        import signal

        if threading.current_thread() is not threading.main_thread():
            return
        watched = []
        for name in ("SIGTERM", "SIGHUP"):
            number = getattr(signal, name, None)
            if number is None:
                continue
            try:
                if signal.getsignal(number) is signal.SIG_DFL:
                    signal.signal(number, self._on_signal)
                    watched.append(number)
            except (ValueError, OSError):  # not the main thread of the main interpreter
                return
        self.signals = watched
        if watched:
            self._watch_wakeups(watched)

    def _watch_wakeups(self, watched: list[int]) -> None:
        """A rank blocked inside MPI (a barrier, a receive) runs no Python signal handler until the call
        returns: a thread reading the interpreter's wakeup pipe writes the measurements then instead
        (mpi4py releases the GIL while it waits).  Skipped when the program uses the wakeup fd itself."""
        import signal

        try:
            reading, writing = os.pipe()
            os.set_blocking(writing, False)
            if signal.set_wakeup_fd(writing, warn_on_full_buffer=False) != -1:
                signal.set_wakeup_fd(-1)  # someone else's (asyncio): leave the Python handler alone
                os.close(reading)
                os.close(writing)
                return
        except (ValueError, OSError):
            return
        self.wakeup = (reading, writing)

        def watch():
            while True:
                try:
                    data = os.read(reading, 64)
                except OSError:
                    return
                if not data:
                    return
                for number in data:
                    if number in watched:
                        self._on_signal(number, None)

        threading.Thread(target=watch, name="extrap-plugins-signals", daemon=True).start()

    def _on_signal(self, number, frame) -> None:
        import signal

        if self.child_process():  # a pool worker ended by its pool: not a rank, nothing of the run to write
            self._end_by(number)
            return
        name = signal.Signals(number).name
        with self.lock:
            # the first signal writes, also one that comes while this rank waits for the others in the exit gather
            first = self.cut_short is None and (not self.finished or self.gathering)
            self.finished = True
            if first:
                self.cut_short = threading.Event()
        if first:
            try:
                if not regions._state.environment_off and self.output is not None and self.used:
                    self._write_cut_short(name)
            except Exception as error:  # never stand between the signal and the end of the process
                _note(f"could not write the measurements at {name}: {error}")
            finally:
                self.cut_short.set()
        elif self.cut_short is not None:
            # The main thread's handler and the wakeup watcher both see the signal: the one that came second
            # must not end the process while the other writes.
            self.cut_short.wait(CUT_SHORT_WAIT)
        # The launcher ends the whole job once one rank dies of the signal: give the other ranks, which got
        # the signal at the same moment, a little time to write theirs before this one goes.
        time.sleep(SIGNAL_GRACE if self.world and self.world[1] > 1 else 0.0)
        self._end_by(number)

    @staticmethod
    def _end_by(number: int) -> None:
        """End this process by the signal ``number``, as it would have ended without the shim."""
        import signal

        if threading.current_thread() is not threading.main_thread():  # the wakeup watcher: end the process
            os._exit(128 + number)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)

    def child_process(self) -> bool:
        """Whether this process is a child of the measured program (``os.fork``, a ``multiprocessing`` worker or
        process, forked or spawned): not a rank of the run, so it writes no measurements, at exit or at a signal
        (a pool ends its workers by SIGTERM)."""
        if self.forked or self.spawned or _importing_as_worker():
            return True
        multiprocessing = sys.modules.get("multiprocessing")
        return multiprocessing is not None and multiprocessing.parent_process() is not None

    def _forked(self) -> None:
        """In the child of an ``os.fork``: it inherited the parent's measurements, hooks and wakeup pipe.  It
        writes nothing (the parent writes the run), a signal ends it as without the shim, and its signals no longer
        reach the parent's wakeup watcher through the pipe (which made the parent end as if it got them)."""
        import signal

        self.forked = True
        self.lock = threading.Lock()  # another thread of the parent may have held it at the fork
        try:
            self._hand_over_signals(signal.SIG_DFL)
            if self.wakeup is not None:
                reading, writing = self.wakeup
                previous = signal.set_wakeup_fd(-1)
                if previous not in (writing, -1):  # the program's own since ours: left as it is
                    signal.set_wakeup_fd(previous)
                os.close(reading)
                os.close(writing)
        except (ValueError, OSError):  # not the main thread (an older Python): _on_signal still ends it
            pass
        finally:
            self.signals, self.wakeup = [], None

    def _write_cut_short(self, name: str) -> str | None:
        """This rank's measurements so far, as a fragment marked ``terminated``: fast and without numpy
        (the launcher may end the other processes soon after the first one ends)."""
        from extrap_plugins.files import write_atomically

        from . import output

        now = time.perf_counter()
        callpaths, rows = regions.snapshot(now)
        rank, size = self.world if self.world else (_rank_from_launcher(), _size_from_launcher())
        run = self.run_id or _launch_id()
        reason = f"cut short by {name} after {now - self.started:.1f} s"
        record = {
            "format": output.FORMAT, "version": output.VERSION, "run": run, "status": "terminated",
            "errors": [reason], "program": self.program, "host": socket.gethostname(),
            "started": _iso(self.started_wall), "duration": round(now - self.started, 6),
            "parameters": {n: output.json_plain(v) for n, v in self.current_parameters(size).items()},
            "repetition": self.repetition,
            "size": int(size), "rank": rank, "ranks": 1, "statistics": list(output.STATISTICS),
            "callpaths": list(callpaths), "values": output.rank_values(rows),
        }
        record["metrics"] = {m: {"unit": output.METRIC_INFO[m][0], "kind": output.METRIC_INFO[m][1]}
                             for m in record["values"]}
        path = output.fragment_path(self.output, run, rank)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        write_atomically(path, output.encode(record), sync=False)
        if rank == 0 and not self.quiet:
            _note(f"{reason}: each rank wrote the measurements it had to {output.fragment_path(self.output, run, '*')}")
        return path

    def attach_mpi(self, collective: bool = False) -> None:
        """Once MPI is initialised: note rank and size, hook into ``MPI_Finalize``.

        ``collective``: every rank calls this at this point of the program (it wraps ``MPI.COMM_WORLD``, as
        ``python -m extrap_plugins.instrument`` does when MPI starts), so the shim duplicates ``MPI.COMM_WORLD``
        for its exit gather: a receive of the program's from any source with any tag cannot take those messages.
        """
        MPI = sys.modules.get("mpi4py.MPI")
        if MPI is None or not MPI.Is_initialized() or MPI.Is_finalized():
            return
        if collective and self.channel is None:
            self.channel = _world(MPI).Dup()
        if self.mpi_attached:
            return
        self.mpi_attached = True
        world = _world(MPI)
        self.world = (world.Get_rank(), world.Get_size())
        try:
            keyval = MPI.Comm.Create_keyval(delete_fn=self._at_finalize)
            MPI.COMM_SELF.Set_attr(keyval, True)
            self._keyval = keyval
        except Exception as error:  # an MPI without attribute callbacks: atexit still works
            _note(f"cannot hook into MPI_Finalize ({error}); call MPI.Finalize() only at the very end")

    def _at_finalize(self, comm, keyval, value) -> None:
        if not self.finished:
            self.finish(reason="MPI_Finalize")

    def _at_exit(self) -> None:
        if self.child_process():  # no MPI calls from a forked copy of a rank either
            return
        self.finish(reason="exit")
        if self.interrupted:
            _end_by_sigint_after_exit()
        # Drop the COMM_SELF attribute while Python still runs: mpi4py finalises
        # MPI after the interpreter, when the callback could no longer run.
        keyval = getattr(self, "_keyval", None)
        MPI = sys.modules.get("mpi4py.MPI")
        if MPI is not None and not MPI.Is_finalized():
            if keyval is not None:
                try:
                    MPI.COMM_SELF.Delete_attr(keyval)
                    MPI.Comm.Free_keyval(keyval)
                except Exception:
                    pass
            self._outlast_signals()

    def _outlast_signals(self) -> None:
        """This rank has written its measurements; it will wait in ``MPI_Finalize`` for the other ranks, after the
        interpreter has dropped our handlers.  A SIGTERM to the job would end it there at once, and the launcher
        would then kill a rank still writing the measurements it had when the signal came (a rank that hung): it
        ignores SIGTERM and SIGHUP from now on, and ends with the job (the others' end, or the launcher's kill)."""
        import signal

        if not self.world or self.world[1] == 1:
            return
        try:
            self._hand_over_signals(signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread
            pass

    def _hand_over_signals(self, handler) -> None:
        """The signals whose handler is still ours get ``handler`` (``SIG_DFL``, ``SIG_IGN``); raises as
        ``signal.signal`` does outside the main thread."""
        import signal

        for number in self.signals:
            if signal.getsignal(number) == self._on_signal:
                signal.signal(number, handler)

    # -------------------------------------------------------- parameters
    def parameters(self, values: dict[str, Any]) -> dict[str, float]:
        for name, value in values.items():
            if not name.isidentifier():
                raise ValueError(f"a parameter name must be an identifier such as n or size, got {name!r}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise TypeError(f"parameter {name} must be a finite number, got {value!r}")
            from_environment = self.environment_parameters.get(name)
            if from_environment is not None and from_environment != float(value):
                _note(f"parameter {name} = {value} from the program overrides {from_environment:g} "
                      f"from EXTRAP_PARAM_{name.upper()}")
            self.program_parameters[name] = float(value)
            self.read_parameters.add(name)
        return self.current_parameters()

    def environment_read(self, key: str) -> None:
        """The program read ``os.environ[key]``: ``EXTRAP_PARAM_<NAME>`` counts as reading parameter NAME."""
        upper = key[len("EXTRAP_PARAM_"):]
        for name in self.environment_parameters:
            if name.upper() == upper:
                self.read_parameters.add(name)

    def unread_parameters(self) -> list[str] | None:
        """The parameters the sweep gave (``EXTRAP_PARAM_<NAME>``) that the program has not read (None: it gave
        none); the sweep runner tells a ``--param`` the program never reads by them."""
        if not self.environment_parameters:
            return None
        return [name for name in self.environment_parameters if name not in self.read_parameters]

    def current_parameters(self, size: int | None = None) -> dict[str, float]:
        """``p`` first, then the environment's parameters, then the program's."""
        if size is None:
            size = self.world[1] if self.world else _size_from_launcher()
        merged = {"p": float(size)}
        merged.update(self.environment_parameters)
        merged.update(self.program_parameters)
        return merged

    # ------------------------------------------------------------ finish
    def finish(self, reason: str = "finish") -> str | None:
        """Write the measurements now (once); return where they went, or None.

        Called at exit and inside ``MPI_Finalize``; a program may call it
        itself (:func:`extrap_plugins.instrument.finish`) to write earlier.
        With MPI running, this is collective over ``MPI.COMM_WORLD``.
        """
        with self.lock:
            if self.finished:
                return None
            self.finished = True
        if regions._state.environment_off or self.output is None or not self.used or self.child_process():
            return None
        self.attach_mpi()
        from . import output

        now = time.perf_counter()
        counters: dict[str, dict[str, float]] = {}
        callpaths, rows = regions.snapshot(now, counters)
        MPI = sys.modules.get("mpi4py.MPI")
        comm = None
        if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized():
            comm = _world(MPI) if self.channel is None else self.channel
        rank, size = self.world if self.world else (_rank_from_launcher(), _size_from_launcher())
        table = output.RankTable(rank, callpaths, rows, self.current_parameters(size), self.failure,
                                 now - self.started, counters, dict(regions._counters), self.unread_parameters())
        if comm is None or comm.Get_size() == 1:
            if size > 1:  # MPI is gone (or was never initialised here): no gather possible
                started = MPI is not None and MPI.Is_initialized()
                why = ("MPI was finalised before the shim could gather the ranks" if started else
                       "the program did not start MPI, so the shim could not gather the ranks")
                return self._write_fragment(table, size, self.run_id or _launch_id(), why)
            return self._write_single(table)
        self.gathering = True
        try:
            return self._gather(comm, table)
        finally:
            self.gathering = False

    def _gather(self, comm, table) -> str | None:
        from . import output

        size = comm.Get_size()

        def write(complete, received):
            run = self.run_id or _launch_id()
            failed = [t for t in received if t.error]
            if complete is not None and not failed:
                try:
                    self._append(self._combined_record(complete, run, size))
                    return True, run, ""
                except OSError as error:
                    return False, run, f"rank 0 could not write {self.output}: {error}"
            if failed:
                by_error: dict[str, list[int]] = {}
                for t in failed:
                    by_error.setdefault(t.error, []).append(t.rank)
                note = "; ".join(f"{_ranks(ranks)} failed: {error}" for error, ranks in by_error.items())
            else:
                missing = sorted(set(range(size)) - {t.rank for t in received})
                note = f"{_ranks(missing)} did not reach the end within {self.timeout:g} s (EXTRAP_EXIT_TIMEOUT)"
            return False, run, note

        try:
            result = output.gather(comm, table, self.timeout, write)
        except Exception as error:  # MPI broke down: keep this rank's data
            return self._write_fragment(table, size, self.run_id or _launch_id(), f"the exit gather failed: {error}")
        if result.written:
            if table.rank == 0 and not self.quiet:
                _note(f"appended the measurements of {size} ranks to {self.output}")
            return self.output
        run = result.run or self.run_id or _launch_id()
        reason = result.note or "the exit gather did not complete"
        if result.run is None:  # rank 0 did not answer: its note, naming every rank's failure, never came
            if table.error:
                reason = f"rank {table.rank} failed: {table.error}; {reason}"
            return self._write_fragment(table, size, run, reason)
        # Rank 0's note names every rank's failure and every rank has it: rank 0 says it, once per run.
        return self._write_fragment(table, size, run, reason, announce=table.rank == 0 if result.note else None)

    def _combined_record(self, tables, run: str, size: int) -> dict:
        from . import output

        callpaths, stats = output.aggregate([(t.callpaths, t.rows) for t in tables], n_ranks=size)
        counters = output.aggregate_counters([(t.callpaths, t.counters) for t in tables], callpaths, n_ranks=size)
        info = {name: kind_unit for t in tables for name, kind_unit in t.counter_info.items()}
        parameters = tables[0].parameters
        errors = []
        for t in tables[1:]:
            if t.parameters != parameters:
                errors.append(f"rank {t.rank} has parameters {t.parameters}, rank 0 has {parameters}")
        unread = tables[0].unread  # a parameter one rank read is read
        if unread is not None:
            unread = [name for name in unread if all(name in (t.unread or ()) for t in tables[1:])]
        return output.make_record(
            run=run, callpaths=callpaths, stats=stats, parameters=parameters, repetition=self.repetition,
            size=size, rank=None, ranks=size, status="ok", errors=errors, program=self.program,
            host=socket.gethostname(), started=_iso(self.started_wall), duration=max(t.duration for t in tables),
            counters=counters, counter_info=info, unread=unread,
        )

    def _write_single(self, table) -> str | None:
        run = self.run_id or uuid.uuid4().hex[:12]
        if table.error:
            return self._write_fragment(table, 1, run, f"the program failed: {table.error}")
        try:
            self._append(self._combined_record([table], run, 1))
        except OSError as error:
            _note(f"cannot write the measurements to {self.output}: {error}")
            return None
        if not self.quiet:
            _note(f"appended the measurements to {self.output}")
        return self.output

    def _write_fragment(self, table, size: int, run: str, reason: str, announce: bool | None = None) -> str | None:
        """This rank's measurements as a file of its own; the note on it comes from rank 0, from a failed rank
        and from a single process, unless ``announce`` says whether this rank gives it."""
        from . import output

        callpaths, stats = output.aggregate([(table.callpaths, table.rows)])
        counters = output.aggregate_counters([(table.callpaths, table.counters)], callpaths)
        status = "failed" if table.error else "partial"
        record = output.make_record(
            run=run, callpaths=callpaths, stats=stats, parameters=table.parameters, repetition=self.repetition,
            size=size, rank=table.rank, ranks=1, status=status, errors=[reason] if reason else [],
            program=self.program, host=socket.gethostname(), started=_iso(self.started_wall),
            duration=table.duration, counters=counters, counter_info=table.counter_info, unread=table.unread,
        )
        path = output.fragment_path(self.output, run, table.rank)
        try:
            output.write_atomically(path, output.encode(record))
        except OSError as error:
            _note(f"rank {table.rank}: cannot write its measurements to {path}: {error}")
            return None
        if announce if announce is not None else (table.rank == 0 or table.error or size == 1):
            pattern = output.fragment_path(self.output, run, "*")  # type: ignore[arg-type]
            _note(f"{reason}; each rank wrote its own measurements ({pattern}); read the folder to join them")
        return path

    def _append(self, record: dict) -> None:
        from . import output

        output.append_line(self.output, output.encode(record))

    def configure(self, output: str | os.PathLike | None | bool = ..., timeout: float | None = None,
                  quiet: bool | None = None) -> None:
        if output is not ...:
            if output is None or output is False:
                self.output = None
            else:
                self.output = _resolve_output(os.fspath(output), self.program)
        if timeout is not None:
            if timeout <= 0:
                raise ValueError(f"timeout must be positive, got {timeout}")
            self.timeout = float(timeout)
        if quiet is not None:
            self.quiet = bool(quiet)


def _seconds_env(name: str, default: float) -> tuple[float, str | None]:
    """Seconds from the environment variable ``name`` (``default`` where unset), and what is wrong with it."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default, None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        return default, f"{name}={text!r} is not a positive number of seconds; using {default:g}"
    return value, None


def _repetition_env() -> tuple[int | None, str | None]:
    """The repetition number from ``EXTRAP_REPETITION`` (None where unset), and what is wrong with it."""
    text = os.environ.get("EXTRAP_REPETITION", "").strip()
    if not text:
        return None, None
    if not text.isascii() or not text.isdigit() or int(text) >= 2**31:
        return None, f"EXTRAP_REPETITION={text!r} is not a whole number from 0 to {2**31 - 1}; ignored"
    return int(text), None


def _watch_environment(session: Session) -> None:
    """Tell ``session`` when the program reads an ``EXTRAP_PARAM_<NAME>`` from ``os.environ`` (``os.environ[...]``,
    ``os.getenv``, ``in``, a copy): a parameter read that way is read, not one the program never takes.  The class of
    ``os.environ`` becomes a subclass of its own whose item lookup notes those keys; nothing else changes."""
    environ = os.environ
    base = type(environ)

    class _Environ(base):  # type: ignore[valid-type, misc]
        def __getitem__(self, key):
            if isinstance(key, str) and key.startswith("EXTRAP_PARAM_"):
                session.environment_read(key)
            return base.__getitem__(self, key)

    _Environ.__qualname__ = base.__qualname__
    try:
        environ.__class__ = _Environ
    except TypeError:  # another os.environ (replaced by some library): reads through it are not seen
        pass


def _end_by_sigint_after_exit() -> None:
    """Let a program ended by Ctrl-C end by SIGINT (status 130) as without the shim.  CPython notes the unhandled
    KeyboardInterrupt in a flag that any ``exec`` of a string clears (importing ``dataclasses`` or numpy, as
    writing the measurements may): set it again (CPython 3.10 and 3.11; a no-op where the flag is not exported)."""
    try:
        import ctypes

        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt").value = 1
    except (ImportError, AttributeError, ValueError, OSError):
        pass


def _world(MPI):
    """``MPI.COMM_WORLD`` for the shim's own calls: plain, also where a program (or ``python -m
    extrap_plugins.instrument``) replaced it by a recording communicator (a subclass of mpi4py's class made
    in :mod:`.mpi`; the same MPI handle)."""
    world = MPI.COMM_WORLD
    plain = next((kind for kind in type(world).__mro__ if kind.__module__ == MPI.__name__), type(world))
    return world if plain is type(world) else plain(world)


def _default_output(program: str) -> str:
    return _resolve_output(os.environ.get("EXTRAP_OUTPUT", "").strip(), program)


def _resolve_output(text: str, program: str) -> str:
    name = program + ".extrap.jsonl"
    if not text:
        return os.path.abspath(name)
    if text.endswith(os.sep) or os.path.isdir(text):
        return os.path.abspath(os.path.join(text, name))
    return os.path.abspath(text)


def _rank_from_launcher() -> int:
    for key in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"):
        if os.environ.get(key, "").isdigit():
            return int(os.environ[key])
    return 0


def _size_from_launcher() -> int:
    for key in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"):
        if os.environ.get(key, "").isdigit():
            return int(os.environ[key])
    return 1


def _launch_id() -> str:
    """An identifier every rank of one launch computes alike, without communicating.

    The launcher's job identifier where it sets one (PMIx, Open MPI, Slurm),
    else host and launcher process: the same for all ranks of a launch on one
    node (ranks on other nodes then cannot be joined with these, if the exit
    gather fails; the sweep runner sets ``EXTRAP_RUN_ID`` for every launch).
    """
    for keys in (("PMIX_NAMESPACE",), ("OMPI_MCA_ess_base_jobid",), ("SLURM_JOB_ID", "SLURM_STEP_ID")):
        if all(os.environ.get(k) for k in keys):
            text = "-".join(os.environ[k] for k in keys)
            return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)
    return f"{socket.gethostname()}-{os.getppid()}"


def _iso(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _ranks(ranks: list[int], shown: int = 10) -> str:
    """``rank 3``, ``ranks 0, 1, 2`` or, for many, ``512 ranks (0, 1, …, 511)``."""
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    if len(ranks) <= shown:
        return f"ranks {', '.join(map(str, ranks))}"
    return f"{len(ranks)} ranks ({', '.join(map(str, ranks[:shown - 1]))}, …, {ranks[-1]})"


class _WatchedQuitter:
    """The builtin ``exit`` or ``quit``, which records a failing status before it ends the program (and reads as
    the original in an interactive session)."""

    def __init__(self, name: str, quitter, record) -> None:
        self.name, self.quitter, self.record = name, quitter, record

    def __repr__(self) -> str:
        return repr(self.quitter)

    def __call__(self, code=None):
        self.record(self.name, code)
        return self.quitter(code)


session = Session()
