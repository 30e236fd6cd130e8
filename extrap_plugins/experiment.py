"""The measurement data model: parameters, call paths, metrics and an Experiment.

An :class:`Experiment` stores every measured value in flat numpy columns, one
entry per (call path, metric, coordinate, repetition)::

    callpath_index : int32,   shape (n_rows,)   index into ``experiment.callpaths``
    metric_index   : int32,   shape (n_rows,)   index into ``experiment.metrics``
    coordinates    : float64, shape (n_rows, n_params)
    repetition     : int32,   shape (n_rows,)
    value          : float64, shape (n_rows,)

so that a million rows load, filter and group with a handful of vectorised
numpy calls.  Modelers never see rows: :meth:`Experiment.series_groups`
hands them blocks of series that share the same measurement points.
"""

from __future__ import annotations

import difflib
import fnmatch
import warnings
from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator, Mapping, Sequence, Sized

import numpy as np

from .errors import InputError
from .formatting import CALLPATH_SEPARATOR, described, format_callpath, format_count, format_value

MEASURES = ("mean", "median", "minimum", "maximum")
REDUCERS = {"mean": np.nanmean, "median": np.nanmedian, "minimum": np.nanmin, "maximum": np.nanmax}
"""How each of :data:`MEASURES` reduces the repetitions of a point (missing values, NaN, left out; the mean
leaves out :func:`outlying` repetitions too, :func:`reduce_repetitions`)."""

OUTLYING_FACTOR = 3.0
"""A repetition this many times above or below the median of its point's repetitions, and far outside their spread
(:data:`OUTLYING_SPREAD`), is left out of their mean: a run on a slow node, a timer glitch, a run cut short."""
OUTLYING_SPREAD = 5 * 1.4826
"""How far outside the spread, in median absolute deviations of the point's repetitions (1.4826 MAD estimates a
normal spread's standard deviation)."""


def outlying(values: np.ndarray) -> np.ndarray:
    """Which repetitions lie far off the others of their point: :data:`OUTLYING_FACTOR` times above or below their
    median and :data:`OUTLYING_SPREAD` MADs from it, at a point of three or more repetitions (of two, neither can be
    told the odd one), at most a quarter of them (at least one) and never all but one. Repetitions that split into
    two groups (``1, 1, 1, 10, 10``) are none: a program that takes two paths is no outlier.

    Parameters
    ----------
    values : ndarray, shape (n_series, n_points, n_reps), NaN-padded

    Returns
    -------
    ndarray of bool, the shape of ``values``
    """
    found = np.zeros(values.shape, dtype=bool)
    if values.ndim != 3 or values.shape[2] < 3:
        return found
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (points without values)
        missing = np.isnan(values)
        if missing.any():
            count = values.shape[2] - np.sum(missing, axis=2)
            low, high = np.nanmin(values, axis=2), np.nanmax(values, axis=2)
        else:  # (every repetition there: the plain reductions are several times faster)
            count = np.full(values.shape[:2], values.shape[2])
            low, high = values.min(axis=2), values.max(axis=2)
        # only where the largest is OUTLYING_FACTOR times the smallest can one be that far from the median
        candidate = (count >= 3) & (low >= 0) & (high > OUTLYING_FACTOR * low)
        if not candidate.any():
            return found
        rows, n = values[candidate], count[candidate][:, None]
        median = _median(rows, n)
        deviation = np.abs(rows - median)
        spread = _median(deviation, n)
        ratio = rows / median
        far = ((median > 0) & ((ratio > OUTLYING_FACTOR) | (ratio < 1 / OUTLYING_FACTOR))
               & (deviation > OUTLYING_SPREAD * spread))
    many = far.sum(axis=1, keepdims=True)
    found[candidate] = far & (many <= np.maximum(1, n // 4)) & (n - many >= 2)
    return found


def _median(rows: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The median of each row's first ``count`` values once sorted (NaN sorts last), shape (n_rows, 1)."""
    ordered = np.sort(rows, axis=1)
    below, above = (count - 1) // 2, count // 2
    return (np.take_along_axis(ordered, below, axis=1) + np.take_along_axis(ordered, above, axis=1)) / 2


def reduce_repetitions(values: np.ndarray, measure: str, far: np.ndarray | None = None) -> np.ndarray:
    """Each point's ``measure`` of its repetitions, shape ``values.shape[:2]`` (NaN where it has none); the mean
    of those that are not :func:`outlying` (``far``, where it was found already)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():  # a point without values is NaN, said elsewhere
        warnings.simplefilter("ignore", RuntimeWarning)  # ("Mean of empty slice", naming no series)
        if measure == "mean":
            far = outlying(values) if far is None else far
            values = np.where(far, np.nan, values) if far.any() else values
        return REDUCERS[measure](values, axis=2)


def check_measure(measure) -> str:
    """``measure`` if it names one of :data:`MEASURES`, else the one InputError every caller gives.

    >>> check_measure("median")
    'median'
    """
    if measure not in MEASURES:
        raise InputError(f"unknown measure {measure!r}; expected one of {', '.join(MEASURES)}")
    return measure
RESOURCE_NAMES = frozenset({
    "p", "np", "nprocs", "n_procs", "numprocs", "num_procs", "procs", "processes", "process", "ranks", "nranks",
    "num_ranks", "mpi_ranks", "jobsize", "mpi.world.size", "world_size", "nodes", "num_nodes", "cores", "threads",
    "nthreads", "num_threads", "omp_num_threads", "gpus", "ngpus", "num_gpus", "tasks", "ntasks", "num_tasks",
    "workers",
})
"""Parameter names (compared in lower case) that count resources — processes, nodes, threads, GPUs —, as
schedulers, Caliper (``jobsize``, ``mpi.world.size``) and programs name them: a run's default cost is their
product (:class:`~extrap_plugins.design.CostModel`), and the first of them is the process count of ``efficiency``
and ``isoefficiency`` (:func:`~extrap_plugins.scaling.resource_parameter`)."""


@dataclass(frozen=True)
class Parameter:
    """A model parameter such as the process count ``p`` or problem size ``n``."""

    name: str

    def __str__(self) -> str:
        return self.name


VALUE_HINTS = ("", "inclusive", "exclusive")
"""What :attr:`Metric.values` may say: unknown, or whether a call path's value includes its children's."""


@dataclass(frozen=True)
class Metric:
    """A measured quantity: ``time``, ``visits``, ``bytes_sent``, a PAPI counter...

    ``unit`` is free text (``"sec"``, ``"bytes"``, ``"occ"``); ``kind`` says how
    the values arise: ``"time"`` (noisy), ``"count"`` (exact counters) or ``""``
    when unknown.  ``values`` says whether a call path's value includes its
    children's, when the source knows it: ``"inclusive"`` (Caliper's
    ``avg#inclusive#sum#time.duration``, Hatchet's ``time (inc)``),
    ``"exclusive"`` (Caliper's ``sum#time.duration``, Hatchet's ``time``) or
    ``""`` when it does not; shares and efficiency totals follow it, and
    guess from the measurements only where it is ``""``
    (:func:`~extrap_plugins.extrapolation.extrapolate`).

    >>> Metric("Avg time/rank", "sec", "time", "inclusive").values
    'inclusive'
    """

    name: str
    unit: str = ""
    kind: str = ""
    values: str = ""

    def __post_init__(self):
        if self.values not in VALUE_HINTS:
            raise InputError(f"metric {self.name!r}: values must be 'inclusive', 'exclusive' or '' (unknown), "
                             f"got {self.values!r}")

    def __str__(self) -> str:
        return self.name


def merged_metrics(metrics: Iterable[Metric]) -> list[Metric]:
    """One Metric per name, in first-seen order, for experiments joined: the first unit and kind given, and the hint
    on values only where every one of that name gives the same (``""`` where they differ: which is right is unknown,
    and a wrong hint is worse than none, as the shares then follow the measurements).

    >>> merged_metrics([Metric("t", values="inclusive"), Metric("t", "sec", values="exclusive")])
    [Metric(name='t', unit='sec', kind='', values='')]
    """
    merged: dict[str, Metric] = {}
    for metric in metrics:
        first = merged.setdefault(metric.name, metric)
        if first is not metric:
            merged[metric.name] = replace(first, unit=first.unit or metric.unit, kind=first.kind or metric.kind,
                                          values=first.values if first.values == metric.values else "")
    return list(merged.values())


@dataclass(frozen=True)
class Callpath:
    """A call path such as ``main->solve->MPI_Allreduce``.

    The call tree is implied by the ``->`` separators: the parent of
    ``main->solve`` is ``main``; a root call path has no parent.
    """

    name: str

    @property
    def regions(self) -> tuple[str, ...]:
        return tuple(self.name.split(CALLPATH_SEPARATOR))

    @property
    def region(self) -> str:
        """The innermost region name (the last element of the path)."""
        return self.regions[-1]

    @property
    def depth(self) -> int:
        return len(self.regions) - 1

    @property
    def parent(self) -> Callpath | None:
        regions = self.regions
        if len(regions) == 1:
            return None
        return Callpath(CALLPATH_SEPARATOR.join(regions[:-1]))

    def __str__(self) -> str:
        return self.name


@dataclass
class SeriesGroup:
    """Series that share exactly the same measurement points.

    Attributes
    ----------
    points : ndarray, shape (n_points, n_params)
        The distinct coordinates, sorted lexicographically.
    keys : list of (Callpath, Metric), length n_series
    values : ndarray, shape (n_series, n_points, n_reps)
        Every repetition's value; NaN where a point has fewer repetitions
        than the most repeated one.
    """

    parameters: tuple[Parameter, ...]
    points: np.ndarray
    keys: list[tuple[Callpath, Metric]]
    values: np.ndarray
    _outlying: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.keys)

    def reduce(self, measure: str = "mean") -> np.ndarray:
        """Reduce the repetitions to one value per point.

        Returns
        -------
        ndarray, shape (n_series, n_points)
        """
        if measure not in REDUCERS:
            raise ValueError(
                f"unknown measure {measure!r}: expected one of {', '.join(MEASURES)}"
            )
        return reduce_repetitions(self.values, measure, self.outlying() if measure == "mean" else None)

    def kept(self, measure: str = "mean") -> np.ndarray:
        """The repetitions ``measure`` reduces, shape (n_series, n_points, n_reps): for the mean, NaN where one is
        :func:`outlying`."""
        if measure != "mean":
            return self.values
        far = self.outlying()
        return np.where(far, np.nan, self.values) if far.any() else self.values

    def outlying(self) -> np.ndarray:
        """:func:`outlying` of the group's values, found once."""
        if self._outlying is None or self._outlying.shape != self.values.shape:
            self._outlying = outlying(self.values)
        return self._outlying

    def repetitions(self) -> np.ndarray:
        """Number of non-missing repetitions, shape (n_series, n_points)."""
        return np.sum(~np.isnan(self.values), axis=2)


@dataclass
class Experiment:
    """All measurements of one application, column-wise.

    Build one with :meth:`from_columns` (readers do); read it with
    :meth:`series_groups`, :meth:`values_of` and the ``callpaths``,
    ``metrics`` and ``parameters`` lists.
    """

    parameters: tuple[Parameter, ...]
    callpaths: list[Callpath]
    metrics: list[Metric]
    callpath_index: np.ndarray
    metric_index: np.ndarray
    coordinates: np.ndarray
    repetition: np.ndarray
    value: np.ndarray
    source: str = ""
    reader: str = ""
    notes: list[str] = field(default_factory=list)
    reading_warnings: list[str] = field(default_factory=list)
    """What reading warned of, each warning's text once (a run skipped, a line cut short, a folder ignored):
    :func:`extrap_plugins.api.read` keeps them so that the exports carry them beside the models (JSON, the text and
    HTML reports; the CLI shows them on stderr too)."""
    constants: dict[str, float] = field(default_factory=dict)
    """Parameters the reader left out because every run has the same value, with that value: nothing can be
    modeled over them, but a design that varies them next needs to know where they were measured
    (:meth:`with_parameters`)."""

    def __repr__(self) -> str:
        """One line a notebook can show: what was measured, not every value."""
        runs, points = len(self.runs()), len(self.points())
        parameters = ", ".join(self.parameter_names) or "no parameters"
        constants = "".join(f", {name}={format_value(value)}" for name, value in self.constants.items())
        metrics = ", ".join(m.name for m in self.metrics)
        source = f" from {self.source}" if self.source else ""
        return (f"<Experiment {parameters}{constants}: {format_count(points, 'point')}, "
                f"{format_count(runs, 'run')}; {format_count(len(self.callpaths), 'call path')}; "
                f"{format_count(len(self.metrics), 'metric')} ({metrics}); {format_count(len(self), 'value')}"
                f"{source}>")

    def __getstate__(self) -> dict:
        """Pickle call paths as their names: runs travel back from workers twice as fast."""
        state = dict(self.__dict__)
        state["callpaths"] = [c.name for c in self.callpaths]
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        state["callpaths"] = [Callpath(name) for name in state["callpaths"]]
        self.__dict__.update(state)

    # ------------------------------------------------------------------ build
    @classmethod
    def from_columns(
        cls,
        parameters: Sequence[str | Parameter],
        *,
        callpath: Sequence[str] | np.ndarray | str,
        metric: Sequence[str] | np.ndarray | str,
        coordinates: np.ndarray | Sequence[Sequence[float]],
        value: np.ndarray | Sequence[float],
        repetition: np.ndarray | Sequence[int] | None = None,
        metrics: Sequence[Metric] = (),
        source: str = "",
        reader: str = "",
    ) -> Experiment:
        """Build an Experiment from flat columns, one entry per measured value.

        Parameters
        ----------
        parameters : sequence of str, length n_params (one str: one parameter)
        callpath, metric : array of str, shape (n_rows,) (a pandas column), one str (a Callpath, a Metric) for all rows,
            or a pair ``(names, codes)`` with ``codes`` an int array of shape
            (n_rows,) indexing ``names`` (the fastest form, for readers).
            Call paths are ``->``-joined region names.
        coordinates : array_like, shape (n_rows, n_params)
        value : array_like, shape (n_rows,)
        repetition : array_like of int, shape (n_rows,), optional
            When omitted, rows with the same (call path, metric, coordinate)
            are numbered 0, 1, 2, ... in the order given.
        metrics : sequence of Metric, optional
            Units and kinds for metric names; names not listed get plain metrics.

        Examples
        --------
        >>> e = Experiment.from_columns(["p"], callpath="main", metric="time",
        ...     coordinates=[[1], [2], [4], [8], [16]], value=[1, 2, 4, 8, 16])
        >>> e.callpaths, len(e)
        ([Callpath(name='main')], 5)
        """
        if isinstance(parameters, (str, Parameter)):  # one name, not one parameter per letter
            parameters = [parameters]
        if not isinstance(parameters, Iterable):
            raise InputError(f"parameters: expected a name or a list of names, got {described(parameters)}")
        parameters = tuple(p if isinstance(p, Parameter) else Parameter(str(p)) for p in parameters)
        names = [p.name for p in parameters]
        if len(set(names)) != len(names):
            raise InputError(f"parameter names must be unique, got {names}")
        given = value
        value = _numbers(value, "value").reshape(-1)
        n_rows = value.shape[0]
        coordinates = _numbers(_columns_by_name(coordinates, names), "coordinates")
        if coordinates.ndim == 1 and len(parameters) == 1:
            coordinates = coordinates.reshape(-1, 1)
        if coordinates.ndim == 2 and coordinates.shape[1] == len(parameters) and (
                given is None or coordinates.shape[0] != n_rows):
            raise InputError(f"value: expected one value per row of coordinates ({coordinates.shape[0]}), got "
                             f"{'None' if given is None else n_rows}")
        if coordinates.shape != (n_rows, len(parameters)):
            raise InputError(
                f"expected coordinates of shape ({n_rows}, {len(parameters)}) "
                f"(one row per value, one column per parameter), got shape {coordinates.shape}"
            )
        metrics = [metrics] if isinstance(metrics, (str, Metric)) else list(metrics)
        if isinstance(metric, Metric):  # one metric for all rows, with its unit
            metric, metrics = metric.name, [metric, *metrics]
        callpath = callpath.name if isinstance(callpath, Callpath) else callpath
        callpath_names, callpath_index = _factorize(callpath, n_rows, "callpath")
        metric_names, metric_index = _factorize(metric, n_rows, "metric")
        wrong = [m for m in metrics if not isinstance(m, Metric)]
        if wrong:
            raise InputError(f"metrics: expected Metric objects such as Metric('time', 'sec'), got "
                             f"{described(wrong[0])}")
        known = {m.name: m for m in metrics}
        metric_objects = [known.get(name, Metric(name)) for name in metric_names]
        if repetition is None:
            repetition = _number_repetitions(callpath_index, metric_index, coordinates)
        if not (isinstance(repetition, np.ndarray) and repetition.dtype.kind in "iu"):  # (readers give ints)
            repetition = _numbers(repetition, "repetition").reshape(-1)
            fractional = np.flatnonzero(repetition != np.round(repetition))
            if fractional.size:
                row = fractional[0]
                raise InputError(f"repetition: row {row} is {repetition[row]:g}, not a whole number")
        repetition = np.asarray(repetition, dtype=np.int32).reshape(-1)
        if repetition.shape[0] != n_rows:
            raise InputError(f"expected {n_rows} repetition numbers, got {repetition.shape[0]}")
        return cls(
            parameters=parameters,
            callpaths=[Callpath(name) for name in callpath_names],
            metrics=metric_objects,
            callpath_index=callpath_index,
            metric_index=metric_index,
            coordinates=coordinates,
            repetition=repetition,
            value=value,
            source=source,
            reader=reader,
        )

    @classmethod
    def concatenate(cls, experiments: Sequence[Experiment], source: str = "") -> Experiment:
        """Join experiments with the same parameters (for instance one per run)."""
        if not experiments:
            raise InputError("no experiments to join")
        first = experiments[0]
        experiments = [first] + [in_parameter_order(other, first) for other in experiments[1:]]
        units = {m.name: m for m in merged_metrics(m for e in experiments for m in e.metrics)}
        return cls.from_columns(
            first.parameters,
            callpath=_merged_codes([([c.name for c in e.callpaths], e.callpath_index) for e in experiments]),
            metric=_merged_codes([([m.name for m in e.metrics], e.metric_index) for e in experiments]),
            coordinates=np.concatenate([e.coordinates for e in experiments]),
            value=np.concatenate([e.value for e in experiments]),
            repetition=np.concatenate([e.repetition for e in experiments]),
            metrics=list(units.values()),
            source=source or first.source,
            reader=first.reader,
        )

    # ------------------------------------------------------------------ read
    def __len__(self) -> int:
        return int(self.value.shape[0])

    @property
    def parameter_names(self) -> list[str]:
        return [p.name for p in self.parameters]

    def points(self) -> np.ndarray:
        """All distinct coordinates, shape (n_points, n_params), sorted."""
        return row_codes(self.coordinates)[0]

    def runs(self) -> np.ndarray:
        """All distinct runs, shape (n_runs, n_params + 1): a point's coordinates, then the repetition; sorted."""
        return row_codes(np.column_stack([self.coordinates, self.repetition]))[0]

    def single_valued(self) -> dict[str, float]:
        """The parameters with one value in every measurement, and that value (the reader keeps them while every
        run is at one point; :meth:`with_parameters` leaves them out when not asked for)."""
        if not len(self.value):
            return {}
        return {name: float(self.coordinates[0, j]) for j, name in enumerate(self.parameter_names)
                if np.all(self.coordinates[:, j] == self.coordinates[0, j])}

    def children(self, callpath: Callpath) -> list[Callpath]:
        """The call paths directly below ``callpath`` in the call tree."""
        return [c for c in self.callpaths if c.parent == callpath]

    def roots(self) -> list[Callpath]:
        return [c for c in self.callpaths if c.parent is None]

    def values_of(self, callpath: str | Callpath, metric: str | Metric) -> tuple[np.ndarray, np.ndarray]:
        """Coordinates and values of one series.

        Returns
        -------
        coordinates : ndarray, shape (n_values, n_params)
        values : ndarray, shape (n_values,)
        """
        c = self._callpath_position(str(callpath))
        m = self._metric_position(str(metric))
        rows = (self.callpath_index == c) & (self.metric_index == m)
        return self.coordinates[rows], self.value[rows]

    def select(self, metrics: str | Iterable[str] = (), callpaths: str | Iterable[str] = ()) -> Experiment:
        """A new Experiment with only the named metrics and the call paths
        matching any of the glob patterns (``main->*``).  Empty means all; one name is one
        (:func:`names_argument`)."""
        metrics, callpaths = list(names_argument(metrics, "metrics")), list(names_argument(callpaths, "callpaths"))
        keep = np.ones(len(self), dtype=bool)
        if metrics:
            known = [m.name for m in self.metrics]
            missing = [m for m in metrics if m not in known]
            if missing:
                raise InputError(
                    f"{self._where()}no metric {', '.join(map(repr, missing))}; "
                    f"the metrics are {', '.join(known)}"
                )
            wanted = np.array([m.name in metrics for m in self.metrics], dtype=bool)
            keep &= wanted[self.metric_index]
        if callpaths:
            matched = set(matching(callpaths, [c.name for c in self.callpaths]))
            wanted = np.array([c.name in matched for c in self.callpaths], dtype=bool)
            if not wanted.any():
                raise InputError(f"{self._where()}no call path matches {', '.join(map(repr, callpaths))}"
                                 f"{callpath_hint(callpaths, [c.name for c in self.callpaths])}")
            keep &= wanted[self.callpath_index]
        return self.take(keep)

    def _where(self) -> str:
        """``SOURCE: `` to begin a message about this experiment, or nothing when it has no source."""
        return f"{self.source}: " if self.source else ""

    def series_groups(self) -> Iterator[SeriesGroup]:
        """Group all (call path, metric) series by their set of measurement points.

        Series measured at exactly the same points land in one
        :class:`SeriesGroup`, so a modeler fits the whole group with one
        factorisation per hypothesis.  Groups come largest first; within a
        group, series are ordered by call path, then metric, as in the
        experiment.
        """
        if len(self) == 0:
            return
        n_metrics = len(self.metrics)
        series_id = self.callpath_index.astype(np.int64) * n_metrics + self.metric_index
        points, point_id = row_codes(self.coordinates)
        n_points = points.shape[0]
        # Which points does each series have?  One bit-set row per series.
        series, series_pos = np.unique(series_id, return_inverse=True)
        series_pos = series_pos.reshape(-1)
        present = np.zeros((series.shape[0], n_points), dtype=bool)
        present[series_pos, point_id] = True
        packed = np.packbits(present, axis=1)
        _, first, pattern_of_series = np.unique(
            np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).reshape(-1),
            return_index=True, return_inverse=True)
        patterns = present[first]
        pattern_of_series = pattern_of_series.reshape(-1)
        # Position of each row among the repetitions of its (series, point) cell.
        cell = series_pos.astype(np.int64) * n_points + point_id
        order = np.lexsort((self.repetition, cell))
        sorted_cell = cell[order]
        starts = np.r_[0, np.flatnonzero(np.diff(sorted_cell)) + 1]
        run_length = np.diff(np.r_[starts, sorted_cell.shape[0]])
        rank_sorted = np.arange(sorted_cell.shape[0]) - np.repeat(starts, run_length)
        rep_rank = np.empty_like(rank_sorted)
        rep_rank[order] = rank_sorted

        sizes = np.bincount(pattern_of_series, minlength=patterns.shape[0])
        for pattern in np.argsort(-sizes, kind="stable"):
            members = np.flatnonzero(pattern_of_series == pattern)
            columns = np.flatnonzero(patterns[pattern])
            member_pos = np.full(series.shape[0], -1)
            member_pos[members] = np.arange(members.shape[0])
            column_pos = np.full(n_points, -1)
            column_pos[columns] = np.arange(columns.shape[0])
            rows = member_pos[series_pos] >= 0
            n_reps = int(rep_rank[rows].max()) + 1
            values = np.full((members.shape[0], columns.shape[0], n_reps), np.nan)
            values[member_pos[series_pos[rows]], column_pos[point_id[rows]], rep_rank[rows]] = self.value[rows]
            keys = [
                (self.callpaths[int(s) // n_metrics], self.metrics[int(s) % n_metrics])
                for s in series[members]
            ]
            yield SeriesGroup(self.parameters, points[columns], keys, values)

    def take(self, rows: np.ndarray, *, callpaths: Sequence[Callpath] | None = None,
             callpath_index: np.ndarray | None = None) -> Experiment:
        """The rows ``rows`` (a boolean mask or indices) as a new experiment; names and notes kept.

        ``callpaths`` with ``callpath_index`` (one code per kept row) replace
        the call path list, for a piece that holds only some call paths.
        """
        return Experiment(
            parameters=self.parameters,
            callpaths=self.callpaths if callpaths is None else list(callpaths),
            metrics=self.metrics,
            callpath_index=self.callpath_index[rows] if callpath_index is None else callpath_index,
            metric_index=self.metric_index[rows],
            coordinates=self.coordinates[rows],
            repetition=self.repetition[rows],
            value=self.value[rows],
            source=self.source,
            reader=self.reader,
            notes=list(self.notes),
            reading_warnings=list(self.reading_warnings),
            constants=dict(self.constants),
        )

    def with_parameters(self, names: Sequence[str]) -> Experiment:
        """The same measurements with the parameters ``names``, in that order: a parameter the reader left out
        for having one value in every run (:attr:`constants`) comes back as a column of that value, and one not
        among ``names`` that has one value in every run becomes a constant (the reader keeps every parameter of
        runs at one point: the process count 1 of a program run without ``p``, say).

        Raises
        ------
        InputError
            A name that is neither a parameter nor a constant, or a parameter not among ``names`` that varies.
        """
        have = list(self.parameter_names)
        if list(names) == have:
            return self
        unknown = [n for n in names if n not in have and n not in self.constants]
        dropped = [n for n in have if n not in names]
        single = {n: v for n, v in self.single_valued().items() if n in dropped}
        if unknown or len(single) < len(dropped):
            wanted = ", ".join(names)
            raise InputError(f"the parameters are {', '.join(have) or 'none'}, expected {wanted}", self.source or None)
        columns = [self.coordinates[:, have.index(n)] if n in have else np.full(len(self.value), self.constants[n])
                   for n in names]
        by_name = {p.name: p for p in self.parameters}
        return replace(
            self, parameters=tuple(by_name.get(n, Parameter(n)) for n in names),
            coordinates=np.column_stack(columns) if columns else self.coordinates[:, :0], notes=list(self.notes),
            constants={**{n: v for n, v in self.constants.items() if n not in names}, **single})

    # --------------------------------------------------------------- private
    def _callpath_position(self, name: str) -> int:
        names = [c.name for c in self.callpaths]
        if name not in names:
            raise InputError(f"{self._where()}no call path {name!r}{callpath_hint([name], names)}")
        return names.index(name)

    def _metric_position(self, name: str) -> int:
        names = [m.name for m in self.metrics]
        if name not in names:
            raise InputError(f"{self._where()}no metric {name!r}; the metrics are {', '.join(names) or 'none'}")
        return names.index(name)


NAMED = (Callpath, Metric, Parameter)
"""What an Experiment lists (``experiment.metrics``, ``callpaths``, ``parameters``): given for names, their names."""


def names_argument(value: str | Iterable[str] | None, argument: str) -> tuple[str, ...]:
    """Names given as one ``str`` or as an iterable of them (``metrics="time"`` is one metric, not four); a
    :data:`NAMED` object (``experiment.metrics[0]``) stands for its name.

    >>> names_argument("time", "metrics"), names_argument(["time", "bytes"], "metrics")
    (('time',), ('time', 'bytes'))

    Raises
    ------
    InputError
        ``value`` is neither, or holds something other than a str.
    """
    if value is None:
        return ()
    if isinstance(value, (str, *NAMED)):
        value = [value]
    if isinstance(value, (bytes, Mapping)) or not isinstance(value, Iterable):
        raise InputError(f"{argument}: expected a name or a list of names, got {described(value)}")
    names = tuple(name.name if isinstance(name, NAMED) else name for name in value)
    wrong = [name for name in names if not isinstance(name, str)]
    if wrong:
        raise InputError(f"{argument}: expected names (str), got {described(wrong[0])} among them")
    return names


def _columns_by_name(coordinates, names: list[str]):
    """Coordinates in a table of named columns (a pandas DataFrame) taken by the parameters' names, whatever the
    order of its columns (``frame[["p", "n"]]`` for the parameters ``n, p`` was read as n = p); a table whose
    columns are named otherwise is taken in order, and one that has only some of the names is refused."""
    columns = getattr(coordinates, "columns", None)
    if columns is None or isinstance(coordinates, np.ndarray):
        return coordinates
    have = [str(c) for c in columns]
    if all(name in have for name in names):
        return np.column_stack([np.asarray(coordinates[columns[have.index(name)]]) for name in names]) \
            if names else coordinates
    if any(name in have for name in names):
        raise InputError(f"coordinates: the table's columns are {', '.join(have)}, the parameters "
                         f"{', '.join(names)}: give a column of each parameter's name, or name the parameters as the "
                         "columns")
    return coordinates


def in_parameter_order(other: Experiment, first: Experiment) -> Experiment:
    """``other`` with its coordinate columns in the order of ``first``'s parameters: inputs joined into one set
    may name the same parameters in another order (a CSV's columns ``n,p`` beside another's ``p,n``).

    Raises
    ------
    InputError
        ``other`` has other parameters than ``first``.
    """
    check_same_parameters(other.parameter_names, first.parameter_names, other.source, first.source)
    return other.with_parameters(first.parameter_names)


def check_same_parameters(theirs: Sequence[str], names: Sequence[str], source: str, first: str) -> None:
    """An InputError naming ``source`` where its parameters ``theirs`` are not ``names`` (of ``first``), in any
    order: the one refusal of inputs that cannot be joined, in memory or streamed."""
    if sorted(theirs) != sorted(names):
        raise InputError(f"parameters ({', '.join(theirs)}) differ from ({', '.join(names)}) in {first}",
                         source or None)


def _factorize(column, n_rows: int, argument: str = "names") -> tuple[list[str], np.ndarray]:
    """Names in first-seen order and an int32 index per row.

    ``column`` (the ``argument`` of :meth:`Experiment.from_columns`, for messages) is one name for all rows, a
    sequence of names, or an already factorised pair ``(names, codes)`` (what fast readers pass).
    """
    if column is None or not isinstance(column, (str, Sized)):
        raise InputError(f"{argument}: expected a name, or one name per value, got {described(column)}")
    if isinstance(column, str):
        return [column], np.zeros(n_rows, dtype=np.int32)
    if isinstance(column, tuple) and len(column) == 2 and not isinstance(column[0], str):
        names, codes = [str(n) for n in column[0]], np.asarray(column[1], dtype=np.int32).reshape(-1)
        if codes.shape[0] != n_rows:
            raise InputError(f"expected {n_rows} codes, one per value, got {codes.shape[0]}")
        if n_rows and (codes.min() < 0 or codes.max() >= len(names)):
            raise InputError(f"codes must lie in 0..{len(names) - 1}")
        return names, codes
    if len(column) != n_rows:
        raise InputError(f"expected {n_rows} names, one per value, got {len(column)}")
    seen: dict = {}
    codes = np.fromiter((seen.setdefault(name, len(seen)) for name in column), dtype=np.int32, count=n_rows)
    missing = [name for name in seen if name is None or name != name]  # a pandas column's empty cells: None, NaN
    if missing:
        row = int(np.flatnonzero(codes == seen[missing[0]])[0])
        raise InputError(f"{argument}: row {row} is {missing[0]!r}, not a name")
    return [str(name) for name in seen], codes


def _merged_codes(columns: Sequence[tuple[list[str], np.ndarray]]) -> tuple[list[str], np.ndarray]:
    """Factorised columns ``(names, codes)`` joined end to end as one ``(names, codes)`` pair, the names in order of
    first appearance in the joined rows (as :func:`_factorize` numbers a column of names), names no row uses left
    out; one dictionary step per name, not per row."""
    seen: dict[str, int] = {}
    joined = []
    for names, codes in columns:
        codes = np.asarray(codes, dtype=np.int64)
        used, first = np.unique(codes, return_index=True)
        local = np.zeros(len(names), dtype=np.int32)
        for code in used[np.argsort(first, kind="stable")]:
            local[code] = seen.setdefault(str(names[code]), len(seen))
        joined.append(local[codes])
    return list(seen), (np.concatenate(joined) if joined else np.zeros(0, dtype=np.int32))


def row_codes(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a float matrix and each row's index among them.

    Much faster than ``np.unique(matrix, axis=0)``: each column is coded on
    its own, then the codes are combined into one int64 key.

    Parameters
    ----------
    matrix : ndarray, shape (n_rows, n_columns)

    Returns
    -------
    unique : ndarray, shape (n_unique, n_columns), rows sorted lexicographically
    inverse : ndarray of int64, shape (n_rows,)
    """
    n_rows, n_columns = matrix.shape
    if n_columns == 0:
        return np.zeros((min(n_rows, 1), 0)), np.zeros(n_rows, dtype=np.int64)
    key = np.zeros(n_rows, dtype=np.int64)
    radix = 1
    for column in range(n_columns):
        values, codes = np.unique(matrix[:, column], return_inverse=True)
        radix *= values.shape[0]
        if radix >= 2**62:  # too many combinations for one integer key
            unique, inverse = np.unique(matrix, axis=0, return_inverse=True)
            return unique, inverse.reshape(-1).astype(np.int64)
        key = key * values.shape[0] + codes.reshape(-1)
    keys, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return matrix[first], inverse.reshape(-1).astype(np.int64)


def _number_repetitions(callpath_index, metric_index, coordinates) -> np.ndarray:
    """0, 1, 2, ... for rows sharing (call path, metric, coordinate), in row order."""
    n_rows = coordinates.shape[0]
    if n_rows == 0:
        return np.zeros(0, dtype=np.int32)
    _, point = row_codes(coordinates)
    n_points = int(point.max()) + 1
    n_metrics = int(metric_index.max()) + 1
    cell = (callpath_index.astype(np.int64) * n_metrics + metric_index) * n_points + point
    order = np.argsort(cell, kind="stable")
    sorted_cell = cell[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_cell)) + 1]
    run_length = np.diff(np.r_[starts, n_rows])
    rank = np.empty(n_rows, dtype=np.int32)
    rank[order] = np.arange(n_rows) - np.repeat(starts, run_length)
    return rank


def matching(patterns: Sequence[str], names: Sequence[str]) -> list[str]:
    """The ``names`` (call paths) any of the glob ``patterns`` (``main->*``) matches, in their order.

    >>> matching(["main->*"], ["main", "main->a", "main->a->b"])
    ['main->a', 'main->a->b']
    """
    return [name for name in names if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)]


def callpath_hint(patterns: Sequence[str], names: Sequence[str], shown: int = 5) -> str:
    """What to add to "no call path matches ...": the names meant, as far as they can be guessed.

    The names whose last part is the pattern's or close to it (``compute`` for
    ``main->compute``, ``main->solve`` for ``solv``); otherwise the first names.
    """
    leaf = {name: name.rsplit(CALLPATH_SEPARATOR, 1)[-1] for name in names}
    close = {match for pattern in patterns for match in difflib.get_close_matches(
        pattern.rsplit(CALLPATH_SEPARATOR, 1)[-1], set(leaf.values()), cutoff=0.75)}
    meant = [name for name in names if leaf[name] in close]
    if meant:
        return f"; did you mean {', '.join(map(repr, meant[:3]))}?"
    if len(names) > shown:
        return f"; the call paths include {', '.join(map(format_callpath, names[:shown]))} ({len(names)} in all)"
    return f"; the call paths are {', '.join(map(format_callpath, names))}" if names else ""


def _numbers(values, name: str) -> np.ndarray:
    """``values`` as floats, or an InputError naming the first row that is not a number."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        try:
            items = np.asarray(values, dtype=object)
        except ValueError:  # ragged rows
            raise InputError(f"{name}: expected numbers, one per row (rows of one length)") from None
        per_row = int(np.prod(items.shape[1:])) if items.ndim > 1 else 1
        for position, item in enumerate(items.reshape(-1)):
            try:
                float(item)
            except (TypeError, ValueError):
                raise InputError(f"{name}: row {position // per_row} is {item!r}, not a number") from None
        raise InputError(f"{name}: expected numbers, one per row") from None
