"""The one place that decides where independent work runs.

Every stage that loops over independent pieces of work (reading runs,
modelling blocks of series, rendering plots) submits them to the
:class:`concurrent.futures.Executor` made here, through :func:`map_ordered`;
no stage writes its own pool.

``serial``
    In this process, one piece after the other.
``process``
    A :class:`~concurrent.futures.ProcessPoolExecutor` with ``jobs`` workers
    (default and at most: the cores, :func:`process_workers`).
``mpi``
    :class:`mpi4py.futures.MPIPoolExecutor`, started as
    ``mpiexec -n N python -m mpi4py.futures -m extrap_plugins model ...``:
    rank 0 runs the command, the other N-1 ranks are the workers.
``auto``
    ``process`` when there is more than one core and more than a few pieces
    of work, else ``serial``.

Results never depend on the executor: work is split the same way whatever
runs it, and results are put back in submission order.

Each worker of ``process`` and ``mpi`` runs its BLAS with one thread
(:func:`single_threaded`): the workers already fill the cores, and a BLAS
pool per worker would oversubscribe them (two workers on two cores ran
the modelling stage slower than one process did).

A worker that dies (killed by the system, a crash in a C library) ends the
work with :class:`WorkerLost` instead of a hang: a process pool notices at
once; an MPI pool notices when no piece of work has finished for
:func:`stall_timeout` seconds (MPI launchers usually end the whole job
themselves when a rank dies; the watchdog covers those that do not).
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import contextlib
import contextvars
import os
import sys
import time
import warnings
from typing import Callable, Iterable, Iterator, TypeVar

from .errors import ExitStatus, ExtrapError, InputError, SetupWarning

EXECUTORS = ("auto", "serial", "process", "mpi")
MPI_LAUNCH = "mpiexec -n N python -m mpi4py.futures -m extrap_plugins model ..."
AUTO_MINIMUM_TASKS = 4
MPI_BACKOFF = 1e-4
"""Longest sleep (s) between two polls of mpi4py.futures' message loops (its default is 1e-3).

A run or a block is megabytes; MPICH moves such a message in many pieces,
one per poll, so with 1 ms sleeps the transfers, not the work, set the pace:
at 1e-3 the ``mpi`` executor read and modelled a 125-run sweep three times
slower than ``process``, at 1e-4 as fast.  ``$MPI4PY_FUTURES_BACKOFF``
overrides it.
"""
ABORT_GRACE = 1.0
"""Seconds between writing the reason and aborting the MPI job: a rank's output reaches the user through the
launcher's proxy, which the abort tears down; once in a CI run the message of a dead worker was lost (empty
stderr, exit status 1), which a second of grace on this already failing path avoids."""
STALL_TIMEOUT_VARIABLE = "EXTRAP_PLUGINS_STALL_TIMEOUT"
STALL_TIMEOUT = 1800.0
"""Seconds without any finished piece of work after which an MPI worker counts as dead."""
STALL_FACTOR = 20.0
"""... or this many times the longest wait between two finished pieces, if that is longer."""

T = TypeVar("T")
R = TypeVar("R")


class WorkerLost(ExtrapError):
    """A worker died (or stopped answering) while it held a piece of work.

    ``mpi`` says whether it was an MPI worker: then the job cannot end
    normally (MPI would wait for the dead rank) and must be aborted.
    """

    def __init__(self, message: str, mpi: bool = False):
        super().__init__(message)
        self.mpi = mpi


class SerialExecutor(cf.Executor):
    """Runs each submitted call at once, in this process (the default for small work)."""

    _max_workers = 1

    def submit(self, fn, /, *args, **kwargs) -> cf.Future:
        future: cf.Future = cf.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:  # delivered through the future, as other executors do (not Ctrl-C: kept in
            future.set_exception(error)  # the future, it took effect only after the next piece of work had run)
        return future


_CHOICE: contextvars.ContextVar[tuple[str, int | None]] = contextvars.ContextVar("extrap_executor",
                                                                                default=("auto", None))


@contextlib.contextmanager
def chosen(kind: str = "auto", jobs: int | None = None) -> Iterator[None]:
    """Make ``(kind, jobs)`` the choice that :func:`current` returns inside the block.

    :func:`extrap_plugins.export` sets it around an exporter, so a stage deep
    inside a plugin (the ``plot`` exporter rendering figures) runs on the
    executor the user chose without every plugin passing it along.
    """
    resolve(kind, 0)  # an unknown kind is an error here, not later
    token = _CHOICE.set((kind, jobs))
    try:
        yield
    finally:
        _CHOICE.reset(token)


def current() -> tuple[str, int | None]:
    """The ``(kind, jobs)`` chosen by the enclosing :func:`chosen` block (``("auto", None)`` outside one)."""
    return _CHOICE.get()


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def resolve(kind: str, n_tasks: int) -> str:
    """The executor kind ``auto`` stands for, given how many pieces of work there are."""
    if kind not in EXECUTORS:
        raise InputError(f"unknown executor {kind!r}; expected one of {', '.join(EXECUTORS)}")
    if kind != "auto":
        return kind
    return "process" if available_cores() > 1 and n_tasks > AUTO_MINIMUM_TASKS else "serial"


def create_executor(kind: str = "serial", jobs: int | None = None, preload: Iterable[str] = ()) -> cf.Executor:
    """Make the executor of the given kind (``auto`` must be resolved first).

    ``preload`` names modules the work imports lazily: a ``process`` pool
    imports them here, before its workers fork, so each worker does not
    import them again (``scipy.special`` costs 0.2 s per worker).
    """
    if jobs is not None and jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {jobs}")
    if kind == "serial":
        return SerialExecutor()
    if kind == "process":
        import importlib
        import multiprocessing

        for module in preload:
            importlib.import_module(module)

        # "spawn" would re-import plugins in each worker; "fork" is the cheap, usual choice on Linux.
        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        return _ProcessPool(max_workers=process_workers(jobs), mp_context=context, initializer=_process_worker)
    if kind == "mpi":
        return _mpi_executor(jobs)
    raise InputError(f"unknown executor {kind!r}; expected one of {', '.join(EXECUTORS[1:])}")


def process_workers(jobs: int | None) -> int:
    """How many workers a ``process`` pool of ``--jobs jobs`` starts: ``jobs``, at most the cores (the default).

    A forking pool starts all its workers at once, each a copy of this process
    holding up to two pieces of work: ``--jobs 1000`` on two cores forked a
    thousand processes (minutes of forking, gigabytes, Ctrl-C unheard) for
    work that two of them do as fast.  More workers than cores is said once.
    """
    cores = available_cores()
    if jobs is None:
        return cores
    if jobs > cores:
        warnings.warn(SetupWarning(f"--jobs {jobs} is more than the {cores} cores here: {cores} worker processes "
                                   "(more would only share the cores, each holding its own work in memory)"),
                      stacklevel=3)
        return cores
    return jobs


def _mpi_executor(jobs: int | None) -> cf.Executor:
    launched_by_futures = "mpi4py.futures" in sys.modules
    try:
        from mpi4py import MPI
        from mpi4py.futures import MPIPoolExecutor
    except ImportError as error:
        raise InputError(f"--executor mpi needs mpi4py: pip install 'extrap-plugins[mpi]' ({error})") from None
    if not launched_by_futures and MPI.COMM_WORLD.Get_rank() > 0:  # plain mpiexec: every rank runs the command,
        raise SystemExit(ExitStatus.BAD_INPUT)                        # and rank 0 alone says why it cannot
    if not launched_by_futures or MPI.COMM_WORLD.Get_size() < 2:
        raise InputError(
            "--executor mpi needs a pool of MPI workers: start the command as "
            f"'{MPI_LAUNCH}' with N >= 2 (rank 0 runs the command, ranks 1..N-1 are the workers)"
        )

    class WatchedMPIPool(MPIPoolExecutor):
        """An MPI pool whose work is watched for dead workers; it does not wait for them at shutdown."""

        stall_timeout: float | None = None
        lost = False

        def shutdown(self, wait=True, *, cancel_futures=False):
            if self.lost:  # waiting would wait for the dead rank forever
                wait, cancel_futures = False, True
            super().shutdown(wait, cancel_futures=cancel_futures)

    options = {} if os.environ.get("MPI4PY_FUTURES_BACKOFF") else {"backoff": MPI_BACKOFF}
    pool = WatchedMPIPool(max_workers=jobs, initializer=single_threaded, **options)
    pool.stall_timeout = stall_timeout()
    return pool


class _ProcessPool(cf.ProcessPoolExecutor):
    """A process pool that an interrupt (Ctrl-C, SIGTERM as one) ends at once: its workers are stopped rather than
    waited for.  Waiting, the standard pool could hang for good when the interrupt came while it handed out work
    (the workers waiting for work, the command for them: ``model --export html`` writing its figures).

    A worker ended while it sent a result (SIGTERM to the whole batch job reaches the workers too) leaves half a
    message in the pipe of results: the pool's thread then waited for the rest forever, and the command, which
    waits for that thread when it exits, never ended.  Once the workers are gone, this process's end of the pipe
    is closed, so that the thread reads the end of the pipe instead and stops."""

    def __exit__(self, exc_type, exc, traceback):
        if exc_type is None or issubclass(exc_type, Exception):
            return super().__exit__(exc_type, exc, traceback)
        workers = list((getattr(self, "_processes", None) or {}).values())
        results = getattr(self, "_result_queue", None)
        self.shutdown(wait=False, cancel_futures=True)
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.join(timeout=5)
        if results is not None:
            with contextlib.suppress(OSError):
                results._writer.close()
        return False


def _process_worker() -> None:
    """A process pool's worker: :func:`single_threaded`, Ctrl-C left to the command (a terminal sends it to every
    process of the job; the command stops the workers, :class:`_ProcessPool`), and SIGTERM ending it as it ends
    any process (not by a handler the command had when the worker was forked from it), and SIGHUP too unless
    ignored (``nohup``)."""
    import signal

    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:  # nohup: kept
            signal.signal(signal.SIGHUP, signal.SIG_DFL)
    single_threaded()


def single_threaded() -> None:
    """Limit this worker's native thread pools (BLAS, OpenMP) to one thread each.

    scipy's own BLAS is loaded first (an MPI worker starts fresh), since only
    libraries already loaded can be limited.
    """
    import scipy.linalg  # noqa: F401 - loads scipy's BLAS so that it is limited too
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


def stall_timeout() -> float:
    """Seconds without progress after which an MPI worker counts as dead.

    ``$EXTRAP_PLUGINS_STALL_TIMEOUT`` overrides :data:`STALL_TIMEOUT`.
    """
    text = os.environ.get(STALL_TIMEOUT_VARIABLE, "")
    if not text:
        return STALL_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"${STALL_TIMEOUT_VARIABLE} must be a number of seconds, got {text!r}") from None
    if value <= 0:
        raise InputError(f"${STALL_TIMEOUT_VARIABLE} must be positive, got {text!r}")
    return value


def end_mpi_job(status: int) -> None:
    """Abort the whole MPI job (after a :class:`WorkerLost`): the only way not to wait for a dead rank."""
    from mpi4py import MPI

    sys.stdout.flush()
    sys.stderr.flush()
    time.sleep(ABORT_GRACE)
    MPI.COMM_WORLD.Abort(status)


def workers(executor: cf.Executor) -> int:
    """How many pieces of work the executor runs at once."""
    return max(1, int(getattr(executor, "_max_workers", 1) or 1))


def map_ordered(executor: cf.Executor, fn: Callable[[T], R], items: Iterable[T],
                on_done: Callable[[R], None] | None = None, window: int | None = None) -> Iterator[R]:
    """``fn(item)`` for every item on ``executor``; results in the items' order.

    ``items`` is consumed lazily: at most ``window`` pieces (default: twice
    the workers) are in flight, so a generator of large pieces never has
    them all in memory.  ``on_done`` is called with each result as it
    completes (for progress bars).  An exception in a piece of work is
    raised here when its turn comes.

    Raises
    ------
    WorkerLost
        A worker process died, or (MPI) no piece has finished for longer
        than the stall timeout while pieces were in flight.
    """
    window = window or 2 * workers(executor)
    limit = getattr(executor, "stall_timeout", None)
    source = iter(items)
    pending: collections.deque[cf.Future] = collections.deque()
    running: set[cf.Future] = set()
    exhausted = False
    last_progress = time.monotonic()
    longest_gap = 0.0

    def finished(future: cf.Future) -> None:
        nonlocal last_progress, longest_gap
        running.discard(future)
        now = time.monotonic()
        longest_gap = max(longest_gap, now - last_progress)
        last_progress = now
        if on_done is not None and not future.cancelled() and future.exception() is None:
            on_done(future.result())

    try:
        while True:
            while not exhausted and len(running) < window:
                try:
                    item = next(source)
                except StopIteration:
                    exhausted = True
                    break
                future = executor.submit(fn, item)
                pending.append(future)
                running.add(future)
            if not pending:
                return
            head = pending[0]
            if head.done():
                pending.popleft()
                if head in running:
                    finished(head)
                yield head.result()
                continue
            allowed = None if limit is None else max(limit, STALL_FACTOR * longest_gap)
            timeout = None if allowed is None else max(0.0, last_progress + allowed - time.monotonic())
            done, _ = cf.wait(running, timeout=timeout, return_when=cf.FIRST_COMPLETED)
            for future in done:
                finished(future)
            if not done and allowed is not None and time.monotonic() - last_progress >= allowed:
                executor.lost = True  # type: ignore[attr-defined]
                raise WorkerLost(
                    f"no MPI worker has finished a piece of work for {allowed:.3g} s ({len(running)} in flight): "
                    f"a worker has died or hangs (see the MPI launcher's messages); stopping the job. "
                    f"If the pieces are just slow, raise ${STALL_TIMEOUT_VARIABLE} (seconds)", mpi=True)
    except cf.BrokenExecutor as error:
        raise WorkerLost(f"a worker process died while working ({error}); was it killed for using too much "
                         f"memory? Try fewer --jobs, --stream on, or --executor serial") from None
    finally:
        for future in pending:
            future.cancel()
