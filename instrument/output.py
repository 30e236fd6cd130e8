"""The shim's output: per-rank tables, their aggregation, the exit gather and JSON Lines files.

Every run appends one line (one JSON object) to the output file::

    {"format": "extrap-plugins/instrument", "version": 1,
     "run": "3f9c0a1b2c4d", "status": "ok", "errors": [],
     "program": "jacobi", "host": "node17", "started": "2025-01-31T10:00:00Z", "duration": 1.92,
     "parameters": {"p": 4, "n": 256}, "unread": [], "repetition": 0,
     "size": 4, "rank": null, "ranks": 4,
     "metrics": {"time": {"unit": "sec", "kind": "time"}, ...},
     "statistics": ["sum", "mean", "min", "max"],
     "callpaths": ["main", "main->solve", "main->solve->MPI_Allreduce"],
     "values": {"time": {"sum": [...], "mean": [...], "min": [...], "max": [...]}, ...}}

``unread`` (only in a run that got parameters from ``EXTRAP_PARAM_<NAME>``)
lists those the program never read: neither through
:func:`~extrap_plugins.instrument.parameter` or ``parameters`` nor from
``os.environ`` after the shim was loaded (on every rank).

``values[metric][statistic][i]`` is the statistic over the ranks of
``metric`` at ``callpaths[i]`` (``null`` where the metric does not apply,
e.g. bytes for a region without MPI calls below it).  For the additive
metrics a rank without the call path counts as 0; the shortest and longest
visit are taken over the ranks that visited the path.

A line ``{"format": ..., "version": 1, "verdict": "failed", "run": ID,
"errors": [...]}`` (written by the sweep runner when a launch that wrote
its measurements then failed) tells readers to skip run ``ID``.

When the exit gather cannot complete (a rank raised, a rank did not arrive
within the timeout, the output could not be written), every rank writes its
own *fragment*: the same object with ``"rank": r``, ``"ranks": 1`` and
``"status"`` ``"failed"`` (this rank raised or called ``sys.exit`` with a
failing status) or ``"partial"``, in a file of its own beside the output
(``app.<run>.rank3.extrap.jsonl``).  On SIGTERM or SIGHUP every rank writes
its fragment at once, without the gather, with ``"status": "terminated"``.
The reader joins the fragments of a run when every rank is there and none
failed, and warns when the run was cut short.
"""

from __future__ import annotations

import json
import os
import pickle
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    import numpy as np

from extrap_plugins.files import write_atomically as _write_atomically
from extrap_plugins.formatting import json_plain

from .regions import METRICS

FORMAT = "extrap-plugins/instrument"
VERSION = 1
SUFFIX = ".extrap.jsonl"
STATISTICS = ("sum", "mean", "min", "max")
METRIC_INFO = {
    "time": ("sec", "time"),
    "time_exclusive": ("sec", "time"),
    "visits": ("occ", "count"),
    "visit_time_min": ("sec", "time"),
    "visit_time_max": ("sec", "time"),
    "bytes_sent": ("bytes", "count"),
    "bytes_received": ("bytes", "count"),
    "messages_sent": ("occ", "count"),
    "messages_received": ("occ", "count"),
}
EXTREMAL = ("visit_time_min", "visit_time_max")
"""Metrics aggregated only over the ranks that visited a path (the others: absent counts as 0)."""

TAG_DATA = 32011
TAG_REPLY = 32012
REPLY_BYTES = 4096
MAX_PAUSE = 0.002
"""Longest sleep between two polls of a pending message at exit (seconds)."""


@dataclass
class RankTable:
    """One rank's measurements: what it sends to rank 0 at exit.

    Attributes
    ----------
    callpaths : list of str, length n_paths
    rows : list of list of float, shape (n_paths, len(METRICS)), NaN where a metric does not apply
    """

    rank: int
    callpaths: list[str]
    rows: list[list[float]]
    parameters: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    duration: float = 0.0
    counters: dict[str, dict[str, float]] = field(default_factory=dict)
    """User counters (:func:`extrap_plugins.instrument.count`, ``peak``): ``{callpath: {name: value}}``."""
    counter_info: dict[str, tuple[str, str]] = field(default_factory=dict)
    """``{name: (kind, unit)}`` of the counters, kind ``count`` or ``peak``."""
    unread: list[str] | None = None
    """The parameters the sweep gave this rank that the program did not read (None: the sweep gave none)."""


# -------------------------------------------------------------------- aggregate
def aggregate(tables: Sequence[tuple[Sequence[str], Any]],
              n_ranks: int | None = None) -> tuple[list[str], dict[str, dict[str, np.ndarray]]]:
    """Statistics over ranks per call path and metric.

    Parameters
    ----------
    tables : sequence of (callpaths, rows)
        One per rank; ``rows`` has shape (len(callpaths), len(METRICS)).
    n_ranks : int, optional
        The number of ranks of the run (default ``len(tables)``); ranks
        without a table count as ranks without any call path.

    Returns
    -------
    callpaths : list of str, length n_paths
        The union of the ranks' call paths, in first-seen order.
    stats : dict metric -> dict statistic -> ndarray, shape (n_paths,)
        ``sum``, ``mean``, ``min``, ``max`` over the ranks; NaN where no rank
        has the metric at that path.

    Examples
    --------
    >>> paths, stats = aggregate([(["a"], [[2.0] + [1.0] * 8]), (["a", "b"], [[4.0] + [1.0] * 8, [1.0] * 9])])
    >>> stats["time"]["mean"].tolist(), stats["time"]["min"].tolist()
    ([3.0, 0.5], [2.0, 0.0])
    """
    import numpy as np  # here, not at the top: the shim imports this module on every rank

    n_ranks = len(tables) if n_ranks is None else n_ranks
    index: dict[str, int] = {}
    for callpaths, _ in tables:
        for path in callpaths:
            index.setdefault(path, len(index))
    n_metrics = len(METRICS)
    cube = np.full((max(n_ranks, 1), len(index), n_metrics), np.nan)
    for r, (callpaths, rows) in enumerate(tables):
        if len(callpaths):
            positions = np.fromiter((index[p] for p in callpaths), dtype=np.int64, count=len(callpaths))
            cube[r, positions] = np.asarray(rows, dtype=np.float64).reshape(len(callpaths), n_metrics)
    missing = np.isnan(cube)
    defined = ~missing.all(axis=0)  # (n_paths, n_metrics)
    filled = np.where(missing, 0.0, cube)
    with np.errstate(invalid="ignore"):
        total = filled.sum(axis=0)
        result = {
            "sum": total,
            "mean": total / max(n_ranks, 1),
            "min": filled.min(axis=0),
            "max": filled.max(axis=0),
        }
        extremal = [METRICS.index(m) for m in EXTREMAL]
        present = ~missing[:, :, extremal]
        count = present.sum(axis=0)
        values = np.where(present, cube[:, :, extremal], 0.0)
        summed = values.sum(axis=0)
        result["sum"][:, extremal] = summed
        result["mean"][:, extremal] = summed / np.maximum(count, 1)
        result["min"][:, extremal] = np.where(present, cube[:, :, extremal], np.inf).min(axis=0)
        result["max"][:, extremal] = np.where(present, cube[:, :, extremal], -np.inf).max(axis=0)
    stats = {
        metric: {s: np.where(defined[:, k], result[s][:, k], np.nan) for s in STATISTICS}
        for k, metric in enumerate(METRICS)
    }
    return list(index), stats


def aggregate_counters(tables: Sequence[tuple[Sequence[str], Any]], callpaths: Sequence[str],
                       n_ranks: int | None = None) -> dict[str, dict[str, np.ndarray]]:
    """Statistics over ranks of the user counters, aligned with ``callpaths``.

    Parameters
    ----------
    tables : sequence of (callpaths, counters)
        One per rank; ``counters`` is ``{callpath: {name: value}}``.
    callpaths : sequence of str, length n_paths
        The call paths of the run (:func:`aggregate`'s).

    Returns
    -------
    dict name -> dict statistic -> ndarray, shape (n_paths,)
        As :func:`aggregate`: a rank without the counter at a path counts
        as 0; NaN where no rank has it.
    """
    import numpy as np  # here, not at the top: the shim imports this module on every rank

    n_ranks = len(tables) if n_ranks is None else n_ranks
    index = {path: k for k, path in enumerate(callpaths)}
    names = list(dict.fromkeys(name for _, counters in tables for values in counters.values() for name in values))
    result: dict[str, dict[str, np.ndarray]] = {}
    for name in names:
        cube = np.full((max(n_ranks, 1), len(index)), np.nan)
        for r, (_, counters) in enumerate(tables):
            for path, values in counters.items():
                if name in values and path in index:
                    cube[r, index[path]] = values[name]
        defined = ~np.isnan(cube).all(axis=0)
        filled = np.where(np.isnan(cube), 0.0, cube)
        total = filled.sum(axis=0)
        stats = {"sum": total, "mean": total / max(n_ranks, 1), "min": filled.min(axis=0),
                 "max": filled.max(axis=0)}
        result[name] = {s: np.where(defined, stats[s], np.nan) for s in STATISTICS}
    return result


# ----------------------------------------------------------------------- record
def make_record(
    *,
    run: str | None,
    callpaths: list[str],
    stats: dict[str, dict[str, np.ndarray]],
    parameters: dict[str, float],
    repetition: int | None,
    size: int,
    rank: int | None,
    ranks: int,
    status: str = "ok",
    errors: Sequence[str] = (),
    program: str = "",
    host: str = "",
    started: str = "",
    duration: float = 0.0,
    counters: dict[str, dict[str, np.ndarray]] | None = None,
    counter_info: dict[str, tuple[str, str]] | None = None,
    unread: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The JSON object of one run (``rank=None``) or one rank's fragment.

    ``values`` keeps numpy columns (NaN where a metric does not apply);
    :func:`encode` writes them as JSON numbers and ``null``.  User counters
    (:func:`aggregate_counters`) follow the built-in metrics, with the unit
    given and the kind ``count`` (``peak`` counters too: exact values).
    ``unread`` (the parameters from ``EXTRAP_PARAM_<NAME>`` the program never
    read) becomes ``"unread"`` after ``"parameters"``; None leaves it out.
    """
    import numpy as np  # here, not at the top: the shim imports this module on every rank

    values = {
        metric: {s: np.asarray(stats[metric][s], dtype=np.float64) for s in STATISTICS}
        for metric in METRICS
        if not np.isnan(stats[metric]["sum"]).all()
    }
    units = {m: {"unit": METRIC_INFO[m][0], "kind": METRIC_INFO[m][1]} for m in values}
    for name, columns in (counters or {}).items():
        if name in values or np.isnan(columns["sum"]).all():
            continue
        values[name] = {s: np.asarray(columns[s], dtype=np.float64) for s in STATISTICS}
        kind, unit = (counter_info or {}).get(name, ("count", ""))
        units[name] = {"unit": unit, "kind": "count", "counter": kind}
    record = {
        "format": FORMAT,
        "version": VERSION,
        "run": run,
        "status": status,
        "errors": list(errors),
        "program": program,
        "host": host,
        "started": started,
        "duration": round(float(duration), 6),
        "parameters": {name: json_plain(v) for name, v in parameters.items()},
    }
    if unread is not None:
        record["unread"] = list(unread)
    return {
        **record,
        "repetition": repetition,
        "size": int(size),
        "rank": rank,
        "ranks": int(ranks),
        "metrics": units,
        "statistics": list(STATISTICS),
        "callpaths": list(callpaths),
        "values": values,
    }




def rank_values(rows: Sequence[Sequence[float]]) -> dict[str, dict[str, list[float]]]:
    """One rank's statistics without numpy (for a signal handler: no import, no allocation of note).

    With one rank, ``sum``, ``mean``, ``min`` and ``max`` are the rank's own
    values; metrics without any value are left out, as :func:`make_record` does.
    """
    values = {}
    for k, metric in enumerate(METRICS):
        column = [float(row[k]) for row in rows]
        if all(x != x for x in column):
            continue
        values[metric] = {s: column for s in STATISTICS}
    return values


def encode(record: dict[str, Any]) -> bytes:
    """One line of JSON, ending in a newline.

    Numeric columns (numpy arrays) are written by the C encoder in one call
    each, NaN as ``null``; everything else is ordinary JSON.
    """
    head = {k: v for k, v in record.items() if k != "values"}
    text = json.dumps(head, allow_nan=False, separators=(",", ":"))
    columns = []
    for metric, statistics in record.get("values", {}).items():
        encoded = ",".join(f"{json.dumps(s)}:{_json_column(column)}" for s, column in statistics.items())
        columns.append(f"{json.dumps(metric)}:{{{encoded}}}")
    return (text[:-1] + ',"values":{' + ",".join(columns) + "}}\n").encode("utf-8")


def _json_column(column) -> str:
    """A list of numbers as JSON, with NaN and infinities as ``null`` (no strings here to confuse)."""
    if isinstance(column, list):  # plain floats (see rank_values): no numpy needed
        numbers = column
    else:
        import numpy as np  # here, not at the top: the shim imports this module on every rank

        numbers = np.asarray(column, dtype=np.float64).tolist()
    text = json.dumps(numbers, allow_nan=True, separators=(",", ":"))
    return text.replace("NaN", "null").replace("-Infinity", "null").replace("Infinity", "null")


# ------------------------------------------------------------------------ files
def append_line(path: str | os.PathLike, line: bytes) -> None:
    """Append one whole line to ``path`` (created with its folder if missing).

    The line goes out in a single ``write`` on a file opened with
    ``O_APPEND``, under an exclusive ``flock`` where available, so
    concurrent writers never interleave their lines; after a line that a
    write cut short (no newline at the end of the file) it starts a line
    of its own.
    """
    path = os.fspath(path)
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        except (ImportError, OSError):  # not POSIX, or a file system without locks
            pass
        if _ends_mid_line(fd):
            line = b"\n" + line
        view = memoryview(line)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)


def _ends_mid_line(fd: int) -> bool:
    """Whether the file open as ``fd`` (for reading too) ends in a line without its newline."""
    end = os.lseek(fd, 0, os.SEEK_END)
    if not end:
        return False
    os.lseek(fd, end - 1, os.SEEK_SET)
    return os.read(fd, 1) != b"\n"


def write_atomically(path: str | os.PathLike, data: bytes) -> None:
    """Write ``path`` atomically (:func:`extrap_plugins.files.write_atomically`), making its folder first."""
    os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)
    _write_atomically(path, data)



def fragment_path(output: str | os.PathLike, run: str, rank: int) -> str:
    """``runs/app.extrap.jsonl`` -> ``runs/app.<run>.rank3.extrap.jsonl``."""
    output = os.fspath(output)
    for suffix in (SUFFIX, ".jsonl"):
        if output.endswith(suffix):
            output = output[: -len(suffix)]
            break
    return f"{output}.{run}.rank{rank}{SUFFIX}"


# ----------------------------------------------------------------- exit gather
@dataclass
class GatherResult:
    """What the exit gather gave this rank.

    ``tables`` (rank 0 only) holds every rank's table when all arrived;
    ``written`` tells the other ranks that rank 0 wrote the run, so they
    need not write a fragment; ``run`` is rank 0's run id.
    """

    tables: list[RankTable] | None
    written: bool
    run: str | None
    note: str = ""


def gather(comm, table: RankTable, timeout: float, write) -> GatherResult:
    """Rank 0 collects every rank's table, writes the run, and tells the others.

    Only point-to-point messages with the reserved tags :data:`TAG_DATA` and
    :data:`TAG_REPLY` on ``comm`` are used, every wait polls against
    ``timeout`` seconds: a rank that raised, died or never arrives cannot
    make another rank hang here.  ``write(tables) -> (written, run, note)``
    runs on rank 0 once the tables are in (or the time is up).
    """
    from mpi4py import MPI

    rank, size = comm.Get_rank(), comm.Get_size()
    payload = pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL)
    deadline = time.monotonic() + timeout
    if rank == 0:
        tables = {0: table}
        status = MPI.Status()
        pause = 1e-4
        while len(tables) < size and time.monotonic() < deadline:
            if comm.Iprobe(source=MPI.ANY_SOURCE, tag=TAG_DATA, status=status):
                source, count = status.Get_source(), status.Get_count(MPI.BYTE)
                buffer = bytearray(count)
                comm.Recv([buffer, MPI.BYTE], source=source, tag=TAG_DATA)
                tables[source] = pickle.loads(buffer)
                pause = 1e-4
            else:
                time.sleep(pause)
                pause = min(pause * 2, MAX_PAUSE)
        ordered = [tables[r] for r in sorted(tables)]
        written, run, note = write(ordered if len(tables) == size else None, ordered)
        reply = json.dumps({"written": written, "run": run, "note": note}).encode()[:REPLY_BYTES]
        requests = [comm.Isend([reply, MPI.BYTE], dest=r, tag=TAG_REPLY) for r in sorted(tables) if r != 0]
        _wait_all(requests, deadline=time.monotonic() + min(timeout, 5.0))
        return GatherResult(ordered if len(tables) == size else None, written, run, note)
    send = comm.Isend([payload, MPI.BYTE], dest=0, tag=TAG_DATA)
    buffer = bytearray(REPLY_BYTES)
    receive = comm.Irecv([buffer, MPI.BYTE], source=0, tag=TAG_REPLY)
    status = MPI.Status()
    if not _wait(receive, deadline, status):
        _abandon(receive)
        _abandon(send)
        return GatherResult(None, False, None, f"rank 0 did not answer within {timeout:g} s")
    send.Wait()
    answer = json.loads(bytes(buffer[: status.Get_count(MPI.BYTE)]))
    return GatherResult(None, bool(answer["written"]), answer.get("run"), answer.get("note", ""))


def _wait(request, deadline: float, status=None) -> bool:
    pause = 1e-4
    while True:
        done = request.Test(status) if status is not None else request.Test()
        if done:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, MAX_PAUSE)


def _wait_all(requests, deadline: float) -> None:
    for request in requests:
        if not _wait(request, deadline):
            _abandon(request)


def _abandon(request) -> None:
    """Give up on a request that will not complete (the peer is gone or late)."""
    try:
        if not request.Test():
            request.Cancel()
            request.Free()
    except Exception:  # cancelling is best effort; the data is written elsewhere
        pass
