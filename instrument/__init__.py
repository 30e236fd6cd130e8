"""Instrumentation shim for Python and mpi4py programs: measure, sweep, model.

::

    from mpi4py import MPI
    from extrap_plugins import instrument

    comm = instrument.mpi.wrap(MPI.COMM_WORLD)   # records every MPI call as a child region
    n = instrument.parameter("n", 1000)          # EXTRAP_PARAM_N if a sweep sets it, else 1000
    instrument.parameters(m=64)                  # or record values the program computed
                                                 # (p, the communicator size, is recorded by itself)

    @instrument.region
    def solve():
        with instrument.region("halo exchange"):
            ...
        comm.Allreduce(local, total)
        instrument.count("flop", 2 * n * n)        # operations done here (summed over visits)
        instrument.peak("bytes_used", grid.nbytes)  # memory footprint here (the largest value recorded)

At exit, rank 0 gathers every rank's call-path tree and appends one JSON
line per run to ``<program>.extrap.jsonl`` (or ``$EXTRAP_OUTPUT``);
``extrap-plugins run`` sweeps process counts and parameters, and
``extrap-plugins model`` turns the output into one model per call path and
metric.  ``EXTRAP_INSTRUMENT=0`` makes all of it free.

Modules: :mod:`.regions` (timing core, no mpi4py), :mod:`.mpi` (the
recording communicator), :mod:`.session` (parameters, exit handling),
:mod:`.output` (aggregation, gather and files), :mod:`.sweep` (the runner).
"""

from __future__ import annotations

import os
from typing import Any

from . import mpi, regions
from .regions import Region, disable, enable, enabled, region
from .session import session as _session

__all__ = ["region", "Region", "parameters", "parameter", "count", "peak", "enable", "disable", "enabled", "configure",
           "finish", "mpi", "snapshot"]

regions._on_new_region.append(_session.use)


def parameters(**values: Any) -> dict[str, float]:
    """Record parameters of this run, for example ``parameters(n=1000, m=64)``.

    ``p`` is the size of ``MPI.COMM_WORLD`` (1 without MPI) unless given
    here; parameters from ``EXTRAP_PARAM_<NAME>`` are recorded without a
    call, and a value given here wins over them (with a note on stderr if
    they differ).

    Returns
    -------
    dict
        Every parameter recorded so far, ``p`` first.

    Raises
    ------
    ValueError, TypeError
        A name is not an identifier, or a value is not a finite number.
    """
    _session.use()
    return _session.parameters(values)


def parameter(name: str, default: int | float) -> int | float:
    """A parameter's value for this run, recorded: ``EXTRAP_PARAM_<NAME>`` if set, else ``default``.

    ``n = instrument.parameter("n", 1000)`` lets a sweep set ``n`` and a
    plain run use 1000.  The value has the type of ``default`` when it fits
    (an int default and an integral value give an int).

    Raises
    ------
    ValueError, TypeError
        ``name`` is not an identifier or ``default`` is not a finite number.
    """
    _session.use()
    value = _session.environment_parameters.get(name, default)
    if isinstance(default, int) and not isinstance(default, bool) and float(value).is_integer():
        value = int(value)
    _session.parameters({name: value})
    return value


def count(name: str, value: float = 1, *, unit: str = "") -> None:
    """Add ``value`` to the counter ``name`` of the innermost open region (operations, loads, FLOPs...).

    Counters become metrics of the run beside time and bytes: inclusive
    (a call path's count includes its descendants'), summed over visits and
    threads, with the statistics over ranks of every metric (the reader's
    default, ``mean``, is the count per process).  ``unit`` (``"flop"``)
    is written with the metric.  Outside any region the value is ignored
    with a warning; with recording off it costs a flag check.

    Raises
    ------
    ValueError, TypeError
        The name is empty, contains ``->`` or is a built-in metric
        (``time``, ``bytes_sent``, ...), was used with another kind or unit,
        or the value is not a finite number.
    """
    regions.record_counter(name, value, "count", unit)


def peak(name: str, value: float, *, unit: str = "bytes") -> None:
    """Record ``value`` for the counter ``name`` of the innermost open region, keeping the largest.

    For sizes such as the memory footprint (``peak("bytes_used",
    array.nbytes)``): a call path's value is the largest recorded at it or
    below, over visits and threads; over ranks the reader takes the mean
    (per process) unless told otherwise.  Raises as :func:`count`.
    """
    regions.record_counter(name, value, "peak", unit)


def configure(output: str | os.PathLike | None | bool = ..., *, timeout: float | None = None,
              quiet: bool | None = None) -> None:
    """Change where and how the run is written (instead of environment variables).

    Parameters
    ----------
    output : path, optional
        The JSON Lines file to append to, or an existing folder; ``None``
        or ``False``: write nothing at exit.
    timeout : float, optional
        Seconds rank 0 waits at exit for the other ranks (``EXTRAP_EXIT_TIMEOUT``).
    quiet : bool, optional
        No note on stderr when the run was written (``EXTRAP_QUIET``).
    """
    _session.configure(output, timeout=timeout, quiet=quiet)


def finish() -> str | None:
    """Write the measurements now instead of at exit (once; collective with MPI).

    Returns the file written (rank 0, or a rank's own file), else None.
    """
    return _session.finish("finish")


def snapshot() -> dict[str, dict[str, float]]:
    """This process's measurements so far, ``{callpath: {metric: value}}`` (for a quick look)."""
    callpaths, rows = regions.snapshot()
    return {
        path: {metric: value for metric, value in zip(regions.METRICS, row) if value == value}
        for path, row in zip(callpaths, rows)
    }
