"""The one place that decides where independent work runs.

Every stage that loops over independent pieces of work (reading runs,
modelling chunks of series, rendering plots) submits them to the
:class:`concurrent.futures.Executor` made here; no stage writes its own pool.

``serial``
    In this process, one piece after the other.
``process``
    A :class:`~concurrent.futures.ProcessPoolExecutor` with ``jobs`` workers.
``mpi``
    :class:`mpi4py.futures.MPIPoolExecutor`, started as
    ``mpiexec -n N python -m mpi4py.futures -m extrap_plugins model ...``:
    rank 0 runs the command, the other N-1 ranks are the workers.
``auto``
    ``process`` when there is more than one core and more than a few pieces
    of work, else ``serial``.

Results never depend on the executor: work is split the same way whatever
runs it, and results are put back in submission order.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import sys
from typing import Callable, Iterable, Iterator, TypeVar

from .errors import InputError

EXECUTORS = ("auto", "serial", "process", "mpi")
MPI_LAUNCH = "mpiexec -n N python -m mpi4py.futures -m extrap_plugins model ..."
AUTO_MINIMUM_TASKS = 4

T = TypeVar("T")
R = TypeVar("R")


class SerialExecutor(cf.Executor):
    """Runs each submitted call at once, in this process (the default for small work)."""

    def submit(self, fn, /, *args, **kwargs) -> cf.Future:
        future: cf.Future = cf.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # delivered through the future, as other executors do
            future.set_exception(error)
        return future


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


def create_executor(kind: str = "serial", jobs: int | None = None) -> cf.Executor:
    """Make the executor of the given kind (``auto`` must be resolved first)."""
    if jobs is not None and jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {jobs}")
    if kind == "serial":
        return SerialExecutor()
    if kind == "process":
        import multiprocessing

        # "spawn" would re-import plugins in each worker; "fork" is the cheap, usual choice on Linux.
        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        return cf.ProcessPoolExecutor(max_workers=jobs or available_cores(), mp_context=context)
    if kind == "mpi":
        return _mpi_executor(jobs)
    raise InputError(f"unknown executor {kind!r}; expected one of {', '.join(EXECUTORS[1:])}")


def _mpi_executor(jobs: int | None) -> cf.Executor:
    launched_by_futures = "mpi4py.futures" in sys.modules
    try:
        from mpi4py import MPI
        from mpi4py.futures import MPIPoolExecutor
    except ImportError as error:
        raise InputError(f"--executor mpi needs mpi4py: pip install 'extrap-plugins[mpi]' ({error})") from None
    if not launched_by_futures or MPI.COMM_WORLD.Get_size() < 2:
        raise InputError(
            "--executor mpi needs a pool of MPI workers: start the command as "
            f"'{MPI_LAUNCH}' with N >= 2 (rank 0 runs the command, ranks 1..N-1 are the workers)"
        )
    return MPIPoolExecutor(max_workers=jobs)


def map_ordered(executor: cf.Executor, fn: Callable[[T], R], items: Iterable[T],
                on_done: Callable[[R], None] | None = None) -> Iterator[R]:
    """``fn(item)`` for every item on ``executor``; results in the items' order.

    ``on_done`` is called with each result as it completes (for progress bars).
    An exception in a piece of work is raised here when its turn comes.
    """
    futures = [executor.submit(fn, item) for item in items]
    if on_done is not None:
        for future in cf.as_completed(futures):
            if future.exception() is None:
                on_done(future.result())
    for future in futures:
        yield future.result()
