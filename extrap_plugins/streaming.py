"""Streaming: model a sweep too large for memory without rank 0 ever holding its values.

A sweep of 625 runs x 100,000 call paths x 20 metrics is 1.25 billion
values: more than one process should hold, and far more than should travel
through rank 0.  :func:`stream_models` reads and models such a sweep in two
passes over a scratch folder, through one executor:

1. **Read by run.**  Each worker reads one run (a reader *part*) with the
   reader's ``read_part``, sorts its rows by call path and writes them as
   raw columns into one file of the scratch folder (one file a run: on a
   parallel file system, creating and removing files is what costs).  It sends back a
   :class:`PartSummary` (names digest, metrics, row count): no values.
2. **Model by block.**  Call paths are cut into blocks (all metrics of a few
   call paths, at most :data:`~extrap_plugins.engine.CHUNK_SERIES` series, the
   same blocks :func:`~extrap_plugins.api.model` fits).  Each worker gathers
   its block's rows from every run's files (memory-mapped, one contiguous
   slice per run in the usual case), fits the block, and sends back models.

Rank 0 holds the call path names, a few numbers per run and the models: its
memory does not grow with the number of runs, and each value is written
once and read once, never sent through rank 0.  The models are bit for bit
those of ``model(read(...))`` (same blocks, same row order within each
measurement point), whatever the executor and the number of workers.

With the ``mpi`` executor on several nodes the scratch folder must be on a
file system every node sees (``--scratch``); a worker that cannot see it
says so.

Runs are joined by :mod:`extrap_plugins.joining`, as on the in-memory path.
A reader with its own ``join`` (Caliper's chooses the parameters from the
runs' metadata) has it called on rank 0 with a *stand-in* for each run:
everything the run holds but its values (parameters, metrics, notes,
constants, and one row per distinct point, repetition and metric, valued
0).  What the join makes of those rows is what it would make of the run's
values there: the parameters it chose, each point's coordinates and
repetition numbers, the metrics (units, inclusive or exclusive), its checks
and its warnings; the blocks are gathered accordingly (:func:`follow_join`).
A join that adds, drops or reorders rows or renames call paths or metrics
cannot be followed without the values and is refused.  Readers that leave
zeros out (``omits_zeros``: CUBE) are joined here as their join does,
without calling it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import json
import os
import pathlib
import shutil
import socket
import tempfile
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from . import engine, executors
from .api import named_reader
from .errors import ExtrapWarning, InputError, kept_warnings, unnoted
from .experiment import (Callpath, Experiment, Metric, Parameter, check_measure, check_same_parameters, merged_metrics,
                         row_codes)
from .formatting import describe_inputs
from .interrupts import interrupts_held, terminate_as_interrupt
from .joining import check_selection, coverage_findings, omitted_zeros
from .models import Model, ModelSet
from .plugins import PluginHost, get_host
from .registration import ReaderInfo

SCRATCH_VARIABLE = "EXTRAP_PLUGINS_SCRATCH"
SCRATCH_PREFIX = "extrap-scratch-"
STREAM_AUTO_BYTES = 2 * 1024**3
"""``stream="auto"`` streams inputs larger than this (bytes on disk)."""
STREAM_CHOICES = ("auto", "on", "off")
COLUMNS = {"value": "<f8", "metric": "<i4", "point": "<i4", "repetition": "<i4"}
"""The per-row column files of a spilled run and their types."""
ROW_BYTES = sum(np.dtype(dtype).itemsize for dtype in COLUMNS.values())
"""Bytes a measured value takes in the scratch folder, at most (its row in every column file)."""


# ---------------------------------------------------------- pass 1: spill
@dataclass(frozen=True)
class PartSummary:
    """What a worker sends back for one run it wrote to the scratch folder (no values).

    Attributes
    ----------
    file : str
        Where the run's columns are (:func:`write_part`).
    sections : tuple of (name, start, size)
        Where each column and the call path names are in ``file`` (bytes).
    source : str
        The run's file, for messages.
    parameters : tuple of str
    digest : str
        SHA-1 of the run's call path names in order (runs with the same call
        paths share one name list on rank 0).
    metrics : tuple of Metric
        The metrics with values, in the order of their codes in the files.
    n_rows : int
    first_point : tuple of float
        Coordinates and repetition of the run's first row (where a value the
        run leaves out would sit).
    first_repetition : int
    notes : tuple of str
    declared_metrics : tuple of Metric
        Every metric the run names, with values or not (for messages, and
        for the reader's ``join``).
    constants : tuple of (column, value)
        Integer columns with one value on every row (a CUBE run has one
        point and one repetition): not written, their value is here.
    points : ndarray, shape (n_points, n_params)
        The run's distinct coordinates; the ``point`` column indexes them.
    cells : ndarray of int64, shape (n_cells, 2)
        The run's distinct (point, repetition) pairs, sorted: the rows of
        its stand-in for the reader's ``join`` (:func:`follow_join`).
    renumbered : ndarray of int64, shape (n_cells,), optional
        The repetition the reader's ``join`` gives each of ``cells`` (None:
        the run's own).
    run_constants : tuple of (parameter, value)
        The run's :attr:`~extrap_plugins.experiment.Experiment.constants`.
    """

    file: str
    source: str
    parameters: tuple[str, ...]
    digest: str
    metrics: tuple[Metric, ...]
    n_rows: int
    first_point: tuple[float, ...]
    first_repetition: int
    notes: tuple[str, ...] = ()
    declared_metrics: tuple[Metric, ...] = ()
    constants: tuple[tuple[str, int], ...] = ()
    points: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    cells: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    renumbered: np.ndarray | None = None
    run_constants: tuple[tuple[str, float], ...] = ()
    sections: tuple[tuple[str, int, int], ...] = ()


def spill_part(task) -> tuple[PartSummary | None, InputError | None, list[Warning]]:
    """Read one part in a worker and write it to the scratch folder.

    ``task`` is ``(read, part, options, file, selection)`` or that and
    ``reader``; ``selection`` is ``(metrics, callpaths)`` for readers that do
    not select themselves, else None; ``reader`` is how messages name a
    third-party reader (:func:`~extrap_plugins.engine.reader_label`).
    Returns like :func:`~extrap_plugins.engine.read_one_part`.
    """
    read, part, options, file, selection = task[:5]
    reader = task[5] if len(task) > 5 else ""
    experiment, error, caught = engine.read_one_part((read, part, options, selection, reader))
    if error is not None:
        return None, error, caught
    return write_part(experiment, file), None, caught


def write_part(experiment: Experiment, file: str) -> PartSummary:
    """Write one run's rows, sorted by call path, as raw little-endian sections of ``file`` (created here).

    Sections (:attr:`PartSummary.sections`): ``offsets`` (int64, shape
    (n_callpaths + 1,): rows of call path ``i`` are ``offsets[i]:offsets[i + 1]``),
    one per column of :data:`COLUMNS` (``point`` indexes
    :attr:`PartSummary.points`; an integer column with one value on every
    row is left out, see :attr:`PartSummary.constants`), and ``callpaths``
    (the JSON list of the names of the call paths with values, in the run's order).
    """
    e = experiment
    cp_counts = np.bincount(e.callpath_index, minlength=len(e.callpaths)) if len(e) else np.zeros(0, np.int64)
    used_cp = np.flatnonzero(cp_counts)
    local_cp = np.full(len(e.callpaths), -1, dtype=np.int64)
    local_cp[used_cp] = np.arange(used_cp.size)
    m_counts = np.bincount(e.metric_index, minlength=len(e.metrics)) if len(e) else np.zeros(0, np.int64)
    used_m = np.flatnonzero(m_counts)
    local_m = np.full(len(e.metrics), -1, dtype=np.int64)
    local_m[used_m] = np.arange(used_m.size)
    order = np.argsort(local_cp[e.callpath_index], kind="stable")
    offsets = np.zeros(used_cp.size + 1, dtype=np.int64)
    np.cumsum(cp_counts[used_cp], out=offsets[1:])
    points, point_code = row_codes(e.coordinates) if len(e) else (np.zeros((0, len(e.parameters))), np.zeros(0))
    text = json.dumps([e.callpaths[i].name for i in used_cp])
    columns = {
        "value": e.value[order],
        "metric": local_m[e.metric_index[order]],
        "point": point_code[order],
        "repetition": e.repetition[order],
    }
    constants = [(name, int(column[0])) for name, column in columns.items()
                 if name != "value" and column.size and np.all(column == column[0])]
    written = [("offsets", offsets, "<i8")] + [(name, column, COLUMNS[name]) for name, column in columns.items()
                                               if name not in dict(constants)]
    try:
        sections = _write_raw(file, [*written, ("callpaths", np.frombuffer(text.encode("utf-8"), np.uint8), "u1")])
    except FileNotFoundError:
        raise InputError(f"the scratch folder is not visible on this worker ({socket.gethostname()}): give "
                         f"--scratch a folder on a file system every MPI rank sees",
                         os.path.dirname(file)) from None
    except OSError as error:  # "No space left on device" alone said nothing of where
        raise _unwritable(e, file, error) from None
    return PartSummary(
        file=str(file),
        source=e.source,
        parameters=tuple(p.name for p in e.parameters),
        digest=hashlib.sha1(text.encode("utf-8")).hexdigest(),
        metrics=tuple(e.metrics[i] for i in used_m),
        n_rows=len(e),
        first_point=tuple(float(v) for v in e.coordinates[0]) if len(e) else (),
        first_repetition=int(e.repetition[0]) if len(e) else 0,
        notes=tuple(e.notes),
        declared_metrics=tuple(e.metrics),
        constants=tuple(constants),
        points=np.ascontiguousarray(points, dtype=np.float64),
        cells=(row_codes(np.column_stack([point_code, e.repetition]).astype(np.float64))[0].astype(np.int64)
               if len(e) else np.zeros((0, 2), dtype=np.int64)),
        run_constants=tuple(e.constants.items()),
        sections=sections,
    )


def _write_raw(path: str, sections: Iterable[tuple[str, np.ndarray, str]]) -> tuple[tuple[str, int, int], ...]:
    """Write each ``(name, array, dtype)`` as raw ``dtype`` values, one after the other (converted one at a time);
    returns each one's ``(name, start, size)`` in bytes.  Not numpy's ``tofile``: a write that fails when its buffer
    is flushed (a full disk) went unsaid there, or was said as "1001 requested and 0 written", without an errno.
    Opened as a descriptor first: Ctrl-C as ``open`` returned left the file object unclosed, which Python said as a
    warning ("unclosed file ...") on most interrupts, creating a file being most of a small run's time."""
    written, start = [], 0
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666), "wb") as stream:
        for name, array, dtype in sections:
            size = stream.write(memoryview(np.ascontiguousarray(array, dtype=dtype)).cast("B"))
            written.append((name, start, size))
            start += size
    return tuple(written)


def _unwritable(experiment: Experiment, file: str, error: OSError) -> InputError:
    """A run that cannot be written to the scratch folder (full, over quota): said of the ``--scratch`` folder the
    user gave, with the run."""
    message = f"cannot write the measurements of {experiment.source or 'a run'} into the scratch folder: " \
              f"{error.strerror or error}"
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        message += f" (streaming writes {ROW_BYTES} bytes there per measured value); give --scratch a folder with " \
                   "more room"
    return InputError(message, os.path.dirname(os.path.dirname(file)))


# --------------------------------------------------------- the catalogue
@dataclass
class Catalogue:
    """Rank 0's knowledge of the spilled runs: names and a few numbers per run, no values.

    Each run's call paths map to the global (first-seen) numbering as a few
    segments ``(local start, global start, length)``; runs with the same
    call paths share them.

    Attributes
    ----------
    parameters : tuple of str
    callpaths : list of str
        Every call path with values, first-seen order over the runs.
    metrics : list of Metric
    parts : list of PartSummary
        The runs that were read, in order.
    part_shape : list of int
        Index of each run's call-path list among the distinct ones.
    segments : list of ndarray, shape (n_segments, 3)
        Per distinct call-path list: (local start, global start, length).
    part_metrics : list of ndarray
        Per run: global code of each of its metrics.
    same_parameters : bool
        Whether every run must have the parameters of the first (False when
        the reader's ``join`` chooses them across the runs: :func:`follow_join`).
    """

    parameters: tuple[str, ...] = ()
    callpaths: list[str] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    parts: list[PartSummary] = field(default_factory=list)
    part_shape: list[int] = field(default_factory=list)
    segments: list[np.ndarray] = field(default_factory=list)
    part_metrics: list[np.ndarray] = field(default_factory=list)
    same_parameters: bool = True
    _callpath_code: dict[str, int] = field(default_factory=dict, repr=False)
    _metric_code: dict[str, int] = field(default_factory=dict, repr=False)
    _shapes: dict[str, int] = field(default_factory=dict, repr=False)
    _shape_runs: list[int] = field(default_factory=list, repr=False)

    def add(self, summary: PartSummary) -> None:
        """Take in one run (in run order)."""
        if not self.parts:
            self.parameters = summary.parameters
        elif summary.parameters != self.parameters and self.same_parameters:
            check_same_parameters(summary.parameters, self.parameters, summary.source, self.parts[0].source)
            summary = _in_parameter_order(summary, self.parameters)
        shape = self._shapes.get(summary.digest)
        if shape is None:
            names = json.loads(_read_span(summary.file, summary.sections, "callpaths", "u1").tobytes())
            codes = np.fromiter((self._callpath_code.setdefault(n, len(self._callpath_code)) for n in names),
                                dtype=np.int64, count=len(names))
            if len(self._callpath_code) > len(self.callpaths):
                self.callpaths.extend(list(self._callpath_code)[len(self.callpaths):])
            shape = self._shapes[summary.digest] = len(self.segments)
            self.segments.append(_segments(codes))
            self._shape_runs.append(0)
        self._shape_runs[shape] += 1
        codes = []
        for metric in summary.metrics:
            if metric.name not in self._metric_code:
                self._metric_code[metric.name] = len(self.metrics)
                self.metrics.append(metric)
            codes.append(self._metric_code[metric.name])
        self.parts.append(summary)
        self.part_shape.append(shape)
        self.part_metrics.append(np.asarray(codes, dtype=np.int64))

    def callpath_runs(self) -> np.ndarray:
        """In how many runs each call path has values, shape (n_callpaths,)."""
        difference = np.zeros(len(self.callpaths) + 1, dtype=np.int64)
        for segments, runs in zip(self.segments, self._shape_runs):
            np.add.at(difference, segments[:, 1], runs)
            np.add.at(difference, segments[:, 1] + segments[:, 2], -runs)
        return np.cumsum(difference[:-1])

    def metric_in_run(self) -> np.ndarray:
        """Which metrics each run has values for, shape (n_runs, n_metrics)."""
        present = np.zeros((len(self.parts), len(self.metrics)), dtype=bool)
        for r, codes in enumerate(self.part_metrics):
            present[r, codes] = True
        return present

    def first_callpath(self, run: int) -> str | None:
        """The name of the first call path with values in run ``run`` (None for a run without values)."""
        segments = self.segments[self.part_shape[run]]
        return self.callpaths[int(segments[0, 1])] if len(segments) else None

    def reorder_metrics(self, metrics: Sequence[Metric]) -> None:
        """Take the metric objects of ``metrics`` and their order (metrics not among them keep theirs, after)."""
        known = {m.name for m in metrics}
        ordered = [m for m in metrics if m.name in self._metric_code] + [m for m in self.metrics if m.name not in known]
        new_code = np.array([[m.name for m in ordered].index(m.name) for m in self.metrics], dtype=np.int64)
        self.metrics = ordered
        self._metric_code = {m.name: k for k, m in enumerate(ordered)}
        self.part_metrics = [new_code[codes] for codes in self.part_metrics]

    def measured_points(self) -> np.ndarray:
        """Every distinct measured point, sorted, shape (n_points, n_params)."""
        points = np.concatenate([p.points for p in self.parts]).reshape(-1, len(self.parameters))
        return row_codes(points)[0] if len(points) else points

    def ranges(self, shape: int, start: int, stop: int) -> np.ndarray:
        """Where global call paths ``start..stop-1`` sit in runs of one call-path list.

        Returns
        -------
        ndarray of int64, shape (n_ranges, 3)
            ``(local start, position in the block, length)`` per contiguous range.
        """
        s = self.segments[shape]
        lo = np.maximum(s[:, 1], start)
        hi = np.minimum(s[:, 1] + s[:, 2], stop)
        hit = hi > lo
        return np.column_stack([s[hit, 0] + lo[hit] - s[hit, 1], lo[hit] - start, hi[hit] - lo[hit]]).astype(np.int32)


def _in_parameter_order(summary: PartSummary, names: tuple[str, ...]) -> PartSummary:
    """The run's summary with its coordinates in the order ``names`` (the same parameters, named in another order
    by its input; its files hold point codes, not coordinates, so only the summary changes)."""
    order = [summary.parameters.index(n) for n in names]
    first_point = tuple(summary.first_point[i] for i in order) if summary.first_point else ()
    return replace(summary, parameters=tuple(names), points=summary.points[:, order], first_point=first_point)


def _segments(codes: np.ndarray) -> np.ndarray:
    """Runs of consecutive global codes: (local start, global start, length), shape (n_segments, 3)."""
    if codes.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    breaks = np.flatnonzero(np.diff(codes) != 1) + 1
    starts = np.r_[0, breaks]
    lengths = np.diff(np.r_[starts, codes.size])
    return np.column_stack([starts, codes[starts], lengths]).astype(np.int64)


# ------------------------------------------------- the reader's own join
def stand_in(summary: PartSummary, callpath: str | None, reader: str = "") -> Experiment:
    """A run as the reader's ``join`` sees it when streaming: all it holds but its values.

    Its parameters, metrics (all it names), notes, constants and source are
    the run's; its rows are one per distinct (point, repetition) of the run
    (:attr:`PartSummary.cells`, in order) and metric with values there (in
    the order the run names them), on the run's first call path, valued 0.
    """
    declared = list(summary.declared_metrics)
    with_values = {m.name for m in summary.metrics}
    codes = np.array([k for k, m in enumerate(declared) if m.name in with_values], dtype=np.int32)
    cells = np.repeat(summary.cells, codes.size, axis=0)
    n = len(cells)
    return Experiment(
        parameters=tuple(Parameter(p) for p in summary.parameters),
        callpaths=[Callpath(callpath)] if callpath is not None else [],
        metrics=declared,
        callpath_index=np.zeros(n, dtype=np.int32),
        metric_index=np.tile(codes, len(summary.cells)),
        coordinates=summary.points[cells[:, 0]].reshape(n, len(summary.parameters)),
        repetition=cells[:, 1].astype(np.int32),
        value=np.zeros(n),
        source=summary.source,
        reader=reader,
        notes=list(summary.notes),
        constants=dict(summary.run_constants),
    )


def follow_join(info: ReaderInfo, catalogue: Catalogue, path, options: dict, host: PluginHost | None = None,
                source: str = "") -> Experiment:
    """Call the reader's ``join`` on a stand-in of each run (:func:`stand_in`) and take its choices.

    The catalogue takes the parameters the join chose, each run's points in
    them and the repetition the join gives each of the run's (point,
    repetition) pairs (in its row of the first metric: the order of the
    repetitions at a point is what the fit depends on), and the join's
    metrics (their units, whether values are inclusive, their order); the
    join's warnings are shown as in memory, and it checks ``--metric`` and
    ``--callpath`` as in memory.

    Returns
    -------
    Experiment
        What the join returned for the stand-ins (its notes and constants are the joined runs').

    Raises
    ------
    InputError
        What the join raises (Caliper: no metadata key varies, runs of two
        programs, a metric inclusive in one run and exclusive in another);
        or the join adds or drops rows, reorders them, renames call paths or
        metrics, or gives one point of a run different coordinates by
        repetition or metric: what the runs' values could not follow.
    """
    stand_ins = [stand_in(summary, catalogue.first_callpath(r), info.name) for r, summary in enumerate(catalogue.parts)]
    joined = engine.call_reader(info, info.join, path, stand_ins, path, options, host=host)
    sizes = [len(e) for e in stand_ins]
    cannot = "so the runs cannot be streamed (joined without their values); model them with --stream off"
    if len(joined) != sum(sizes):
        raise InputError(f"the {info.name} reader's join turns the runs' {sum(sizes)} points and repetitions into "
                         f"{len(joined)}: it adds or drops values, {cannot}", source or None)
    given = [(e.callpaths[c].name, e.metrics[m].name) for e in stand_ins for c, m in zip(e.callpath_index,
                                                                                         e.metric_index)]
    taken = [(joined.callpaths[c].name, joined.metrics[m].name) for c, m in zip(joined.callpath_index,
                                                                                  joined.metric_index)]
    if taken != given:
        raise InputError(f"the {info.name} reader's join renames or reorders the runs' call paths or metrics, "
                         f"{cannot}", source or None)
    parameters = tuple(joined.parameter_names)
    coordinates = joined.coordinates.reshape(len(joined), len(parameters))
    parts, start = [], 0
    for summary, size in zip(catalogue.parts, sizes):
        rows = np.arange(start, start + size)
        start += size
        cells = summary.cells
        per_cell = size // len(cells) if len(cells) else 0
        points = np.zeros((len(summary.points), len(parameters)))
        points[cells[:, 0]] = coordinates[rows[::per_cell] if per_cell else rows]
        if not np.array_equal(points[np.repeat(cells[:, 0], per_cell)], coordinates[rows]):
            raise InputError(f"the {info.name} reader's join gives one point of a run different coordinates for "
                             f"different repetitions or metrics, {cannot}", summary.source or None)
        renumbered = joined.repetition[rows[::per_cell] if per_cell else rows].astype(np.int64)
        first_point, first_repetition = summary.first_point, summary.first_repetition
        if size:
            first = int(np.flatnonzero((summary.points == np.asarray(first_point)).all(axis=1))[0])
            first_point = tuple(float(v) for v in points[first])
            cell = np.flatnonzero((cells[:, 0] == first) & (cells[:, 1] == first_repetition))[0]
            first_repetition = int(renumbered[cell])
        parts.append(dataclasses.replace(
            summary, parameters=parameters, points=points, first_point=first_point,
            first_repetition=first_repetition,
            renumbered=None if np.array_equal(renumbered, cells[:, 1]) else renumbered))
    catalogue.parts = parts
    catalogue.parameters = parameters
    catalogue.reorder_metrics(joined.metrics)
    return joined


def warn_constant_parameters(catalogue: Catalogue) -> tuple[str, ...]:
    """Say once that no parameter varies, as :func:`~extrap_plugins.api.model` does; returns what the modelers'
    notes of each series begin with that this says already."""
    from .api import _warn_constant_parameters

    if not catalogue.parameters or not catalogue.parts:
        return ()
    points = catalogue.measured_points()
    return _warn_constant_parameters(Experiment.from_columns(
        catalogue.parameters, callpath="", metric="", coordinates=points, value=np.zeros(len(points))))


# ---------------------------------------------------------- pass 2: model
@dataclass
class BlockTask:
    """One block of call paths to gather from the scratch folder and fit (picklable)."""

    instance: Any
    measure: str
    modeler: str
    parameters: tuple[str, ...]
    callpaths: list[str]
    metrics: list[Metric]
    files: list[str]
    sections: list[tuple[tuple[str, int, int], ...]]
    ranges: list[np.ndarray]
    metric_maps: list[np.ndarray]
    constants: list[tuple[tuple[str, int], ...]]
    points: list[np.ndarray]
    first_points: list[tuple[float, ...]]
    first_repetitions: list[int]
    metric_in_run: np.ndarray | None  # (n_runs here, n_metrics) when the reader leaves zeros out
    renumbering: list[tuple[np.ndarray, np.ndarray] | None] = field(default_factory=list)
    """Per run: its ``(cells, renumbered)`` when the reader's join numbers the repetitions anew, else None."""


def gather_block(task: BlockTask) -> Experiment:
    """The block's rows from every run's files, run after run, as an Experiment.

    With ``metric_in_run`` given, the values runs leave out as zeros are
    added after them (:func:`omitted_zeros`), as the in-memory join does.
    """
    n_params = len(task.parameters)
    cp_parts, m_parts, coordinate_parts, repetition_parts, value_parts = [], [], [], [], []
    renumbering = task.renumbering or [None] * len(task.files)
    for file, sections, ranges, metric_map, constants, points, renumber in zip(
            task.files, task.sections, task.ranges, task.metric_maps, task.constants, task.points, renumbering):
        local = _row_ranges(ranges[:, 0], ranges[:, 0] + ranges[:, 2])  # the run's call paths in this block
        first, last = int(local.min()), int(local.max())
        offsets = _read_span(file, sections, "offsets", "<i8", first, last + 2)
        begin, end = int(offsets[0]), int(offsets[-1])
        per_callpath = offsets[local - first + 1] - offsets[local - first]
        rows = _row_ranges(offsets[local - first], offsets[local - first + 1]) - begin  # within the span read
        columns = _read_columns(file, sections, dict(constants), begin, end, rows)
        position = _row_ranges(ranges[:, 1], ranges[:, 1] + ranges[:, 2])
        cp_parts.append(np.repeat(position, per_callpath))
        m_parts.append(metric_map[columns["metric"]])
        coordinate_parts.append(points[columns["point"]])
        repetition_parts.append(columns["repetition"] if renumber is None else
                                _renumbered(columns["point"], columns["repetition"], *renumber))
        value_parts.append(columns["value"])
    if task.metric_in_run is not None:
        run, cp, m = omitted_zeros(cp_parts, m_parts, len(task.callpaths), len(task.metrics), task.metric_in_run)
        if run.size:
            cp_parts.append(cp)
            m_parts.append(m)
            coordinate_parts.append(np.asarray(task.first_points, dtype=np.float64).reshape(-1, n_params)[run])
            repetition_parts.append(np.asarray(task.first_repetitions, dtype=np.int32)[run])
            value_parts.append(np.zeros(run.size))
    return Experiment(
        parameters=tuple(Parameter(p) for p in task.parameters),
        callpaths=[Callpath(name) for name in task.callpaths],
        metrics=list(task.metrics),
        callpath_index=np.concatenate(cp_parts).astype(np.int32),
        metric_index=np.concatenate(m_parts).astype(np.int32),
        coordinates=np.concatenate(coordinate_parts).reshape(-1, n_params),
        repetition=np.concatenate(repetition_parts).astype(np.int32),
        value=np.concatenate(value_parts),
    )


def _renumbered(point: np.ndarray, repetition: np.ndarray, cells: np.ndarray, renumbered: np.ndarray) -> np.ndarray:
    """Each row's repetition as the reader's join numbers it: ``renumbered`` of its (point, repetition) among
    ``cells`` (sorted, shape (n_cells, 2))."""
    low = int(cells[:, 1].min())
    stride = int(cells[:, 1].max()) - low + 1
    keys = cells[:, 0] * stride + (cells[:, 1] - low)
    return renumbered[np.searchsorted(keys, point.astype(np.int64) * stride + (repetition.astype(np.int64) - low))]


def fit_streamed_block(task: BlockTask) -> tuple[list[Model], list[Warning]]:
    """Gather one block and fit it (runs in a worker)."""
    return engine.fit_block((task.instance, gather_block(task), task.measure, task.modeler))


def _read_span(file: str, sections: Sequence[tuple[str, int, int]], name: str, dtype: str, start: int = 0,
               stop: int | None = None) -> np.ndarray:
    """Elements ``start:stop`` (default: all) of a section of a run's file (read, not mapped: rank 0's memory stays
    its own)."""
    begin, size = next((begin, size) for section, begin, size in sections if section == name)
    itemsize = np.dtype(dtype).itemsize
    stop = size // itemsize if stop is None else stop
    try:
        with open(file, "rb") as stream:
            stream.seek(begin + start * itemsize)
            span = np.fromfile(stream, dtype=dtype, count=min(stop, size // itemsize) - start)
    except FileNotFoundError:
        raise InputError(f"the scratch folder is not visible on this worker ({socket.gethostname()}): give "
                         f"--scratch a folder on a file system every MPI rank sees", os.path.dirname(file)) from None
    if span.size != stop - start:
        raise InputError(f"the scratch file is shorter than expected ({span.size} of {stop - start} values); "
                         "was the scratch folder changed while streaming?", file)
    return span


def _read_columns(file: str, sections: Sequence[tuple[str, int, int]], constants: dict[str, int], begin: int,
                  end: int, rows: np.ndarray) -> dict[str, np.ndarray]:
    """The per-row columns at ``begin + rows``, reading the span ``begin:end`` of each file once."""
    contiguous = rows.size == end - begin and bool(np.all(np.diff(rows) == 1))
    columns = {}
    for name, dtype in COLUMNS.items():
        if name in constants:
            columns[name] = np.full(rows.size, constants[name], dtype=np.int64)
            continue
        span = _read_span(file, sections, name, dtype, begin, end)
        columns[name] = span if contiguous else span[rows]
    columns["value"] = columns["value"].astype(np.float64, copy=False)
    return columns


def _row_ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """``concatenate([arange(a, b) for a, b in zip(starts, stops)])``, vectorised."""
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(stops, dtype=np.int64) - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    if starts.size == 1:
        return np.arange(starts[0], starts[0] + total)
    offsets = np.repeat(starts - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
    return np.arange(total) + offsets


# -------------------------------------------------------------- the API
def stream_models(
    path: str | os.PathLike | Sequence[str | os.PathLike],
    reader: str | None = None,
    modeler: str = "default",
    *,
    metrics: Iterable[str] = (),
    callpaths: Iterable[str] = (),
    measure: str = "mean",
    executor: str = "auto",
    jobs: int | None = None,
    scratch: str | os.PathLike | None = None,
    progress: engine.Progress | None = None,
    reader_options: dict[str, Any] | None = None,
    host: PluginHost | None = None,
    target: str | Mapping[str, float] | None = None,
    callpath_progress: engine.Growing | None = None,
    **options: Any,
) -> ModelSet:
    """Read and model inputs too large for memory, run by run, block by block.

    The same models as ``model(read(path, ...), modeler, ...)``, bit for bit,
    with rank 0 holding no measured values (see the module documentation).

    Parameters
    ----------
    path, reader, metrics, callpaths, executor, jobs
        As for :func:`~extrap_plugins.api.read`.
    modeler, measure, progress, **options
        As for :func:`~extrap_plugins.api.model`; inside :func:`extrap_plugins.engine.following`, the runs read are
        reported as :func:`~extrap_plugins.api.read` reports them, and without ``progress`` the series fitted as
        :func:`~extrap_plugins.api.model` reports them (found block by block: their number is not known before).
    scratch : path, optional
        Where the runs' columns are written for the modelling pass (a
        temporary folder inside it, removed at the end).  Default
        ``$EXTRAP_PLUGINS_SCRATCH``, else the system's temporary folder; with
        MPI on several nodes it must be on a file system every node sees.
    reader_options : dict, optional
        Options for the reader (``--reader-option``).
    target : str or mapping, optional
        Where the models will be extrapolated to (``--target``): checked against the parameters once the runs are
        read, before the modelling (a name the runs lack is said then, not after all the modelling).
    callpath_progress : callable, optional
        Told ``(done, more)`` in call paths: all of them once the runs are read, then each block's as it is fitted
        (a total for a progress bar, which the series, found block by block, cannot give).

    Returns
    -------
    ModelSet
        Its ``experiment`` is None: the measurements were never in memory;
        ``measured_points`` holds the distinct points instead (exporters show
        values at the largest measured point, as for ``model(read(...))``;
        prediction intervals and plots need the measurements), and
        ``metrics`` what the reader said of the metrics (units, inclusive or
        exclusive: the reader's ``join``'s where it was followed), as the
        experiment says it in memory; ``reading_warnings`` what reading
        warned of, as :func:`~extrap_plugins.api.read` keeps it.
    """
    host = host or get_host()
    check_measure(measure)
    info_modeler = host.modeler(modeler)
    kept: list[str] = []  # what reading warned of, as api.read keeps it (not the modelling's warnings)
    with kept_warnings(kept):  # (a file no reader reads, a copy of another)
        paths = engine.folder_files(engine.input_paths(path), host, reader)
    infos = [named_reader(host, reader, p) if reader else engine.select_reader(p, host) for p in paths]
    if len({i.name for i in infos}) > 1:
        needed = ", ".join(sorted({i.name for i in infos}))
        raise InputError(f"streaming reads inputs of one reader; these need {needed}: stream them separately or give "
                         "--reader")
    info = infos[0]
    metrics, callpaths = tuple(metrics), tuple(callpaths)
    reader_options = {key: str(value) for key, value in (reader_options or {}).items()}
    if info.filters:
        reader_options.update(metrics=metrics, callpaths=callpaths)
    selection = None if info.filters else (metrics, callpaths)
    inputs = paths[0] if len(paths) == 1 else paths
    runs = info.parts is not None and info.read_part is not None
    if runs:
        with kept_warnings(kept):  # (a folder of no runs, say)
            parts = engine.call_reader(info, info.parts, inputs, inputs, reader_options, host=host)
        read = info.read_part
    else:
        parts, read = list(paths), info.read
    source = describe_inputs(inputs)
    if not parts:
        raise InputError(f"no runs found for the {info.name} reader", source)
    joins = runs and info.join is not None and not info.omits_zeros  # (CUBE's join is the one done here)
    kind = executors.resolve(executor, len(parts))
    if kind != "serial":  # as read does: read_part (or read, for whole inputs) and the runs travel to the workers
        engine.check_sendable(info, parts, host, function="read_part" if runs else "read")
    label = engine.reader_label(host, info.name)  # how the workers' messages name a third-party reader
    reading = engine.followed().reading  # (runs read, runs found), as api.read reports them
    modeling = engine.followed().modeling if progress is None else None  # (series fitted, series found)
    if modeling is not None:
        progress = lambda done: modeling(done, done)  # noqa: E731
    if reading is not None:
        reading(0, len(parts))
    with scratch_folder(scratch) as folder, executors.create_executor(kind, jobs) as pool, \
            engine.reader_guard(host, info.name):
        tasks = ((read, part, reader_options, os.path.join(folder, f"p{i:06d}"), selection, label)
                 for i, part in enumerate(parts))
        catalogue, skipped = Catalogue(same_parameters=not joins), []
        with kept_warnings(kept):
            results = executors.map_ordered(pool, spill_part, tasks,
                                            on_done=None if reading is None else (lambda result: reading(1, 0)))
            if not runs:  # each part is an input the user named: a broken one is an error, as in memory
                results = _refused(results)
            for summary in engine.report_parts(results, stacklevel=3, skipped=skipped):
                catalogue.add(summary)
            if not catalogue.parts:
                raise engine.none_read(len(parts), skipped, source)
            if selection is not None or not joins:  # (a reader that selects itself checks in its join, as in memory)
                declared = dict.fromkeys(m.name for p in catalogue.parts for m in p.declared_metrics)
                check_selection(metrics, callpaths, with_values=[m.name for m in catalogue.metrics],
                                declared=list(declared), any_callpath=bool(catalogue.callpaths), source=source)
            notes = list(dict.fromkeys(note for p in catalogue.parts for note in p.notes))  # (as runs are joined)
            if joins:
                notes = follow_join(info, catalogue, inputs, reader_options, host=host, source=source).notes
            if info.omits_zeros:
                for finding in coverage_findings(catalogue.callpath_runs(), catalogue.metric_in_run(),
                                                 catalogue.callpaths, [m.name for m in catalogue.metrics],
                                                 [p.source for p in catalogue.parts]):
                    warnings.warn(ExtrapWarning(finding), stacklevel=2)
                    notes.append(finding)  # (CUBE's join keeps its findings as notes too)
        if target is not None:  # a target naming no parameter is said before the modelling, as in memory
            from .extrapolation import parse_target

            parse_target(target, catalogue.parameters)
        instance = host.build_modeler(modeler, options, catalogue.parameters)
        said = warn_constant_parameters(catalogue)
        size = engine.block_size(len(catalogue.metrics))
        blocks = _block_tasks(catalogue, size, instance, measure, info_modeler.name, info.omits_zeros)
        n_blocks = -(-len(catalogue.callpaths) // size)
        with _modelling_pool(pool, kind, executor, n_blocks, jobs) as fitting, \
                engine.modeler_guard(host, info_modeler.name):
            models = _fit_in_pool(fitting, blocks, progress, said, callpath_progress, len(catalogue.callpaths))
    order = {name: i for i, name in enumerate(catalogue.callpaths)}
    metric_order = {m.name: k for k, m in enumerate(catalogue.metrics)}
    models.sort(key=lambda m: (order[m.callpath], metric_order[m.metric]))
    metrics = list(catalogue.metrics)  # (the join's, when the reader's join was followed)
    if not runs and len(catalogue.parts) > 1:  # inputs read whole: described as Experiment.concatenate joins them
        merged = {m.name: m for m in merged_metrics(m for p in catalogue.parts for m in p.declared_metrics)}
        metrics = [merged.get(m.name, m) for m in metrics]
    return ModelSet(
        parameters=catalogue.parameters,
        models=models,
        modeler=info_modeler.name,
        options=dict(options),
        measure=measure,
        source=source,
        experiment=None,
        measured_points=catalogue.measured_points(),
        metrics=tuple(metrics),
        notes=tuple(notes),
        reading_warnings=tuple(unnoted(kept, notes)),
    )


@contextlib.contextmanager
def _modelling_pool(pool, kind: str, executor: str, n_blocks: int, jobs: int | None) -> Iterator[Any]:
    """The reading pass's pool, or, where ``auto`` chose ``serial`` for few runs (one large file), worker
    processes for the blocks when they are many, as :func:`~extrap_plugins.engine.fit_blocks` chooses in memory."""
    fitting = executors.resolve(executor, n_blocks)
    if kind != "serial" or fitting == "serial":
        yield pool
        return
    with executors.create_executor(fitting, jobs, preload=engine.MODELLING_IMPORTS) as other:
        yield other


def _refused(results: Iterable[tuple[Any, Any, list[Warning]]]) -> Iterator[tuple[Any, Any, list[Warning]]]:
    """The results of reading whole inputs, raising the first :class:`InputError` (after the warnings its input
    gave) rather than letting :func:`~extrap_plugins.engine.report_parts` skip the input with a warning."""
    for result in results:
        _, error, caught = result
        if isinstance(error, InputError):
            for message in caught:
                warnings.warn(message, stacklevel=3)
            raise error
        yield result


def _fit_in_pool(pool, blocks: Iterator[BlockTask], progress, said: Sequence[str] = (),
                 callpath_progress: engine.Growing | None = None, n_callpaths: int = 0) -> list[Model]:
    """Fit every block; their warnings are shown once all are fitted, one per cause, as
    :func:`~extrap_plugins.engine.fit_blocks` shows them (causes beginning with one of ``said`` left out).
    ``progress`` is told each block's series; ``callpath_progress`` the ``n_callpaths`` first, then each block's
    call paths (every one has a series)."""
    models: list[Model] = []
    caught: list[Warning] = []
    if callpath_progress is not None:
        callpath_progress(0, n_callpaths)

    def done(result: tuple[list[Model], list[Warning]]) -> None:
        if progress is not None:
            progress(len(result[0]))
        if callpath_progress is not None:
            callpath_progress(len({m.callpath for m in result[0]}), 0)

    for fitted, warned in executors.map_ordered(pool, fit_streamed_block, blocks, on_done=done):
        caught.extend(warned)
        models.extend(fitted)
    engine.warn_per_cause(caught, stacklevel=3, said=said)
    return models


def _block_tasks(catalogue: Catalogue, size: int, instance, measure: str, modeler: str,
                 omits_zeros: bool) -> Iterator[BlockTask]:
    """The blocks of :func:`~extrap_plugins.engine.block_size` call paths, made as the pool asks for them."""
    metric_in_run = catalogue.metric_in_run() if omits_zeros else None
    for start in range(0, len(catalogue.callpaths), size):
        stop = min(start + size, len(catalogue.callpaths))
        by_shape = {shape: catalogue.ranges(shape, start, stop) for shape in set(catalogue.part_shape)}
        runs = [r for r, shape in enumerate(catalogue.part_shape) if by_shape[shape].size]
        yield BlockTask(
            instance=instance,
            measure=measure,
            modeler=modeler,
            parameters=catalogue.parameters,
            callpaths=catalogue.callpaths[start:stop],
            metrics=catalogue.metrics,
            files=[catalogue.parts[r].file for r in runs],
            sections=[catalogue.parts[r].sections for r in runs],
            ranges=[by_shape[catalogue.part_shape[r]] for r in runs],
            metric_maps=[catalogue.part_metrics[r] for r in runs],
            constants=[catalogue.parts[r].constants for r in runs],
            points=[catalogue.parts[r].points for r in runs],
            first_points=[catalogue.parts[r].first_point for r in runs],
            first_repetitions=[catalogue.parts[r].first_repetition for r in runs],
            metric_in_run=None if metric_in_run is None else metric_in_run[runs],
            renumbering=[None if catalogue.parts[r].renumbered is None else
                         (catalogue.parts[r].cells, catalogue.parts[r].renumbered) for r in runs],
        )


def check_scratch(scratch: str | os.PathLike | None = None) -> tuple[pathlib.Path, str]:
    """The folder streamed runs go into (``scratch``, else ``$EXTRAP_PLUGINS_SCRATCH``, else the system's temporary
    folder) and how messages name it; an error if it is no folder.  ``model`` checks it before reading, also when
    it then reads without streaming: a mistyped ``--scratch`` is said at once, not on the first large input."""
    from_variable = not scratch and bool(os.environ.get(SCRATCH_VARIABLE))
    parent = pathlib.Path(scratch or os.environ.get(SCRATCH_VARIABLE) or tempfile.gettempdir())
    named = f"the scratch folder (from ${SCRATCH_VARIABLE})" if from_variable else "the scratch folder"
    if not parent.is_dir():
        if parent.exists():
            raise InputError(f"is {'a file' if parent.is_file() else 'not a folder'}; {named} must be a folder",
                             parent)
        raise InputError(f"{named} does not exist", parent)
    return parent, named


@contextlib.contextmanager
def scratch_folder(scratch: str | os.PathLike | None = None) -> Iterator[str]:
    """A fresh folder for the runs' columns inside ``scratch``, removed afterwards; also when SIGTERM (a batch
    job's time limit) ends the command, which it ends as Ctrl-C does while the folder exists."""
    parent, named = check_scratch(scratch)
    try:
        folder = tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=parent)
    except OSError as error:
        raise InputError(f"cannot write in {named}: {error.strerror or error}", parent) from None
    try:
        with terminate_as_interrupt():
            yield folder
    finally:
        with interrupts_held():  # a second Ctrl-C or SIGTERM waits until the folder is gone
            shutil.rmtree(folder, ignore_errors=True)


def input_bytes(paths: Sequence[pathlib.Path]) -> int:
    """Bytes on disk of the input files and of everything inside the input folders."""
    total = 0
    for p in paths:
        if p.is_dir():
            for root, _, files in os.walk(p):
                for name in files:
                    with contextlib.suppress(OSError):
                        total += os.stat(os.path.join(root, name)).st_size
        else:
            with contextlib.suppress(OSError):
                total += p.stat().st_size
    return total


def should_stream(path, stream: str = "auto") -> bool:
    """Whether ``stream`` (``auto``, ``on``, ``off``) means streaming for these inputs.

    ``auto`` streams inputs larger than :data:`STREAM_AUTO_BYTES` on disk.
    """
    if stream not in STREAM_CHOICES:
        raise InputError(f"unknown stream choice {stream!r}; expected one of {', '.join(STREAM_CHOICES)}")
    if stream != "auto":
        return stream == "on"
    return input_bytes(engine.input_paths(path)) > STREAM_AUTO_BYTES
