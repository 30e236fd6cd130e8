"""The Python API: ``read``, ``model`` and ``export``.

The CLI is a thin layer over these three functions.
"""

from __future__ import annotations

import contextlib
import fnmatch
import gc
import inspect
import io
import os
import pathlib
import tempfile
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from . import executors
from .errors import ExtrapWarning, InputError
from .experiment import MEASURES, Experiment, SeriesGroup
from .model import Model, ModelSet, Quality, Term
from .plugins import PluginHost, get_host
from .quality import quality_figures
from .registration import ReaderInfo

Progress = Callable[[int], None]


# ---------------------------------------------------------------------- read
def read(
    path: str | os.PathLike | Sequence[str | os.PathLike],
    reader: str | None = None,
    *,
    metrics: Iterable[str] = (),
    callpaths: Iterable[str] = (),
    executor: str = "auto",
    jobs: int | None = None,
    host: PluginHost | None = None,
    **options: Any,
) -> Experiment:
    """Read measurements from a file or folder (or a list of them) into an Experiment.

    The reader is ``reader`` if given, else the one whose file-name pattern
    matches, else the one whose content sniffing says yes.  ``metrics`` and
    ``callpaths`` (globs) select what is kept, inside the reader when it can.
    Inputs made of independent runs are read through ``executor``
    (see :mod:`extrap_plugins.executors`); a broken run is skipped with a
    warning naming it.  ``options`` go to the reader (for example
    ``aggregation="max"`` for CUBE).

    Raises
    ------
    InputError
        The file is missing or unreadable, no reader or several readers fit,
        or the reader found bad content (the message names file and line).
    """
    host = host or get_host()
    paths = input_paths(path)
    metrics, callpaths = tuple(metrics), tuple(callpaths)
    str_options = {key: str(value) for key, value in options.items()}
    infos = [host.reader(reader) if reader else select_reader(p, host) for p in paths]
    experiments = []
    for info, group in _by_reader(infos, paths):
        reader_options = dict(str_options)
        if info.filters:
            reader_options.update(metrics=metrics, callpaths=callpaths)
        if info.parts is not None and info.read_part is not None:
            # All inputs of a run-splitting reader form one set (one parts call, one join).
            selection = None if info.filters else (metrics, callpaths)
            experiment = _read_parts(info, group[0] if len(group) == 1 else group, reader_options, executor, jobs,
                                     selection)
            batch = [experiment]
        else:
            batch = [info.read(p, reader_options) for p in group]
        for experiment in batch:
            if not info.filters and (metrics or callpaths):
                experiment = experiment.select(metrics=metrics, callpaths=callpaths)
            experiment.reader = info.name
            experiments.append(experiment)
    if len(experiments) == 1:
        return experiments[0]
    joined = Experiment.concatenate(experiments, source=", ".join(str(p) for p in paths))
    joined.reader = experiments[0].reader
    return joined


def input_paths(path: str | os.PathLike | Sequence[str | os.PathLike]) -> list[pathlib.Path]:
    """The inputs as a list of paths that exist.

    Raises
    ------
    InputError
        No input, or one that does not exist.
    """
    paths = [pathlib.Path(path)] if isinstance(path, (str, os.PathLike)) else [pathlib.Path(p) for p in path]
    if not paths:
        raise InputError("no input given")
    for p in paths:
        if not p.exists():
            raise InputError("no such file or folder", p)
    return paths


def _by_reader(infos: list[ReaderInfo], paths: list[pathlib.Path]) -> list[tuple[ReaderInfo, list[pathlib.Path]]]:
    """Inputs grouped by reader, in first-seen order."""
    groups: dict[str, tuple[ReaderInfo, list[pathlib.Path]]] = {}
    for info, p in zip(infos, paths):
        groups.setdefault(info.name, (info, []))[1].append(p)
    return list(groups.values())


def _read_parts(info: ReaderInfo, path, options: dict, executor: str, jobs: int | None,
                selection: tuple[tuple[str, ...], tuple[str, ...]] | None = None) -> Experiment:
    """Read the runs of one input in parallel; skip (and warn about) broken runs.

    ``selection`` is ``(metrics, callpaths)`` to apply in the workers for
    readers that do not select themselves, so unselected values never
    travel back.
    """
    source = describe_inputs(path)
    parts = info.parts(path, options)
    if not parts:
        raise InputError(f"no runs found for the {info.name} reader", source)
    kind = executors.resolve(executor, len(parts))
    experiments = []
    with executors.create_executor(kind, jobs) as pool:
        tasks = ((info.read_part, part, options, selection) for part in parts)
        results = executors.map_ordered(pool, read_one_part, tasks)
        for experiment in report_parts(results, stacklevel=4):
            experiments.append(experiment)
    if not experiments:
        raise InputError(f"none of the {len(parts)} runs could be read", source)
    if selection is not None:
        check_selection(*selection, with_values={m.name for e in experiments for m in _with_rows(e.metrics,
                                                                                           e.metric_index)},
                        declared=list(dict.fromkeys(m.name for e in experiments for m in e.metrics)),
                        any_callpath=any(len(e) for e in experiments), source=source)
    if info.join is not None:
        return info.join(experiments, path, options)
    from .streaming import join_parts

    return join_parts(experiments, source)


def _with_rows(names: Sequence, codes: np.ndarray) -> list:
    """The entries of ``names`` that some row uses."""
    used = np.bincount(codes, minlength=len(names)) > 0 if len(codes) else np.zeros(len(names), dtype=bool)
    return [name for name, u in zip(names, used) if u]


def check_selection(metrics: Sequence[str], callpaths: Sequence[str], *, with_values: Iterable[str],
                    declared: Sequence[str], any_callpath: bool, source: str) -> None:
    """Check what ``--metric``/``--callpath`` selected after every run was read.

    Raises
    ------
    InputError
        A metric no run declares (listing the ones they do), a metric with no
        value in any run, or call path globs that match nothing.
    """
    with_values = set(with_values)
    missing = [m for m in metrics if m not in with_values]
    unknown = [m for m in missing if m not in declared]
    if unknown:
        listed = f"; the metrics are {', '.join(declared)}" if declared else " in any run"
        raise InputError(f"no metric {', '.join(map(repr, unknown))}{listed}", source)
    if missing:
        raise InputError(f"metric {', '.join(map(repr, missing))} has no data in any run", source)
    if callpaths and not any_callpath:
        raise InputError(f"no call path matches {', '.join(map(repr, callpaths))}", source)


def describe_inputs(path) -> str:
    """The inputs as one string for messages: ``a, b`` for a list."""
    return ", ".join(map(str, path)) if isinstance(path, (list, tuple)) else str(path)


def read_one_part(task) -> tuple[Any, InputError | None, list[Warning]]:
    """Read one part in a worker: ``(result, error, warnings)``, never an exception.

    ``task`` is ``(read_part, part, options)`` or ``(read_part, part,
    options, selection)`` with ``selection`` ``(metrics, callpaths)`` (or
    None) applied here for readers that do not select themselves.  A bad run
    comes back as an :class:`InputError` naming it (a reader bug too, with
    its type, so one odd file cannot end a long sweep); warnings come back to
    be shown once each.
    """
    read_part, part, options = task[:3]
    selection = task[3] if len(task) > 3 else None
    with warnings.catch_warnings(record=True) as caught, collector_paused():
        warnings.simplefilter("always")
        try:
            result, error = read_part(part, options), None
        except InputError as problem:
            result, error = None, problem
        except Exception as problem:  # noqa: BLE001 - reported by path, the sweep goes on
            result, error = None, InputError(f"reading failed ({type(problem).__name__}: {problem})",
                                             str(getattr(part, "path", part)))
    if result is not None and selection is not None:
        result = select_leniently(result, *selection)
    return result, error, [portable_warning(w.message) for w in caught]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while one run is read.

    Parsing a run makes millions of small objects (pycubexr's call tree of a
    10,000-call-path CUBE file is 1.25 M of them); each allocation burst made
    the collector scan every object alive, including the runs already read,
    so reading a sweep in one process took a third longer than it needed.
    The run's own cycles are collected after it, in one pass.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def select_leniently(experiment: Experiment, metrics: Sequence[str], callpaths: Sequence[str]) -> Experiment:
    """The rows of the named metrics and of call paths matching the globs; a run may have none.

    The name lists stay whole (for messages); :func:`check_selection`
    checks the selection once all runs are read.
    """
    if not metrics and not callpaths:
        return experiment
    keep = np.ones(len(experiment), dtype=bool)
    if metrics:
        wanted = np.array([m.name in metrics for m in experiment.metrics], dtype=bool)
        keep &= wanted[experiment.metric_index]
    if callpaths:
        keep &= matching(experiment.callpaths, callpaths)[experiment.callpath_index]
    return experiment._subset(keep)


def matching(names: Sequence, globs: Sequence[str]) -> np.ndarray:
    """Which names (call paths) match any of the globs: one compiled pattern for all, shape (n_names,)."""
    import fnmatch
    import re

    pattern = re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs))
    return np.fromiter((pattern.match(str(n)) is not None for n in names), dtype=bool, count=len(names))


def portable_warning(message: Warning) -> Warning:
    """A warning that survives pickling back from a worker (its category kept where possible)."""
    if isinstance(message, ExtrapWarning) or type(message).__module__ == "builtins":
        return message
    return ExtrapWarning(str(message))


def report_parts(results: Iterable[tuple[Any, InputError | None, list[Warning]]], stacklevel: int = 3):
    """Yield the parts that were read; warn (once per text) about the rest and about what workers reported."""
    seen: set[tuple[type, str]] = set()
    for result, error, caught in results:
        for message in caught:
            key = (type(message), str(message))
            if key not in seen:
                seen.add(key)
                warnings.warn(message, stacklevel=stacklevel)
        if error is not None:
            warnings.warn(ExtrapWarning(f"skipped: {error}"), stacklevel=stacklevel)
        else:
            yield result


def select_reader(path: pathlib.Path, host: PluginHost | None = None) -> ReaderInfo:
    """Choose the reader for ``path``: by file-name pattern, then by sniffing the content."""
    host = host or get_host()
    readers = [r.info for r in host.readers.values()]
    if path.is_dir():
        readers = [r for r in readers if r.directories]
    name = path.name.lower()
    by_name = [r for r in readers if any(fnmatch.fnmatch(name, p.lower()) for p in r.patterns)]
    if len(by_name) == 1:
        return by_name[0]
    candidates = by_name or readers
    by_content = [r for r in candidates if r.sniff is not None and _safe_sniff(r, path)]
    if len(by_content) == 1:
        return by_content[0]
    if not by_content:
        names = ", ".join(sorted(r.name for r in readers)) or "none"
        raise InputError(f"no reader recognises this input; choose one with --reader (readers: {names})", path)
    names = ", ".join(sorted(r.name for r in by_content))
    raise InputError(f"several readers can read this input ({names}); choose one with --reader", path)


def _safe_sniff(reader: ReaderInfo, path: pathlib.Path) -> bool:
    try:
        return bool(reader.sniff(path))
    except Exception:
        return False


# --------------------------------------------------------------------- model
def model(
    experiment: Experiment,
    modeler: str = "default",
    *,
    measure: str = "mean",
    metrics: Iterable[str] = (),
    callpaths: Iterable[str] = (),
    progress: Progress | None = None,
    executor: str = "auto",
    jobs: int | None = None,
    host: PluginHost | None = None,
    **options: Any,
) -> ModelSet:
    """Learn one model per (call path, metric) series of ``experiment``.

    Parameters
    ----------
    experiment : Experiment
    modeler : str
        A registered modeler name (``extrap-plugins plugins`` lists them).
    measure : {"mean", "median", "minimum", "maximum"}
        How the repetitions of a point are reduced before fitting.
    metrics, callpaths : iterables of str
        Only these metrics, and call paths matching these globs (empty: all).
    progress : callable(int), optional
        Called with the number of series finished after each chunk.
    executor : {"auto", "serial", "process", "mpi"}
        Where the chunks of series are fitted (see :mod:`extrap_plugins.executors`).
        The models are identical whatever the executor.
    jobs : int, optional
        Number of worker processes for ``process`` (default: the cores).
    **options
        Passed to the modeler's factory (``--option KEY=VALUE``).

    Returns
    -------
    ModelSet
        Models in the experiment's call path order, then metric order.
    """
    host = host or get_host()
    if measure not in MEASURES:
        raise InputError(f"unknown measure {measure!r}; expected one of {', '.join(MEASURES)}")
    info = host.modeler(modeler)
    instance = _build_modeler(info, options, tuple(experiment.parameter_names))
    metrics, callpaths = tuple(metrics), tuple(callpaths)
    selected = experiment.select(metrics=metrics, callpaths=callpaths) if metrics or callpaths else experiment
    plan = BlockPlan.of(selected)
    models = fit_blocks(plan.blocks(), plan.n_blocks, instance, measure, info.name, executor, jobs, progress)
    order = {(c.name, m.name): i for i, (c, m) in enumerate(
        (c, m) for c in experiment.callpaths for m in experiment.metrics)}
    models.sort(key=lambda m: order.get((m.callpath, m.metric), len(order)))
    return ModelSet(
        parameters=tuple(experiment.parameter_names),
        models=models,
        modeler=info.name,
        options=dict(options),
        measure=measure,
        source=experiment.source,
        experiment=selected,
    )


CHUNK_SERIES = 1024
"""Series per piece of modelling work: fixed, so results never depend on the executor."""


def block_size(n_metrics: int) -> int:
    """Call paths per block: all metrics of these call paths make at most :data:`CHUNK_SERIES` series."""
    return max(1, CHUNK_SERIES // max(1, n_metrics))


@dataclass
class BlockPlan:
    """An experiment cut into blocks of consecutive call paths (all their metrics), for modelling.

    The cut depends only on the data (the call paths that have values, in the
    experiment's order, and how many metrics have values), never on the
    executor or on whether the data were streamed, so every way of running
    fits exactly the same batches and gets bit-identical models.

    Attributes
    ----------
    experiment : Experiment
    callpaths : ndarray of int, shape (n_present,)
        Codes of the call paths that have values, in the experiment's order.
    size : int
        Call paths per block (:func:`block_size`).
    order : ndarray of int, shape (n_rows,)
        Rows sorted by block (stable: rows of one call path keep their order).
    bounds : ndarray of int, shape (n_blocks + 1,)
        Block ``b`` is ``order[bounds[b]:bounds[b + 1]]``.
    position : ndarray of int, shape (n_rows,)
        Each row's call path among ``callpaths``.
    """

    experiment: Experiment
    callpaths: np.ndarray
    size: int
    order: np.ndarray
    bounds: np.ndarray
    position: np.ndarray

    @classmethod
    def of(cls, experiment: Experiment) -> BlockPlan:
        n_cp = len(experiment.callpaths)
        counts = np.bincount(experiment.callpath_index, minlength=n_cp)
        present = np.flatnonzero(counts)
        n_metrics = int(np.count_nonzero(np.bincount(experiment.metric_index, minlength=1)))
        size = block_size(n_metrics)
        rank = np.cumsum(counts > 0) - 1
        position = rank[experiment.callpath_index] if len(experiment) else np.zeros(0, np.int64)
        order = np.argsort(position, kind="stable")
        n_blocks = -(-present.size // size)
        bounds = np.searchsorted(position[order] // size, np.arange(n_blocks + 1))
        return cls(experiment, present, size, order, bounds, position)

    @property
    def n_blocks(self) -> int:
        return self.bounds.size - 1

    def block(self, b: int) -> Experiment:
        """Block ``b`` as an Experiment holding only its call paths (small to send to a worker)."""
        e = self.experiment
        rows = self.order[self.bounds[b]:self.bounds[b + 1]]
        start = b * self.size
        codes = self.callpaths[start:start + self.size]
        return Experiment(
            parameters=e.parameters,
            callpaths=[e.callpaths[i] for i in codes],
            metrics=e.metrics,
            callpath_index=(self.position[rows] - start).astype(np.int32),
            metric_index=e.metric_index[rows],
            coordinates=e.coordinates[rows],
            repetition=e.repetition[rows],
            value=e.value[rows],
            source=e.source,
            reader=e.reader,
        )

    def blocks(self) -> Iterator[Experiment]:
        """Every block, made only when asked for (at most a few are in memory at once)."""
        return (self.block(b) for b in range(self.n_blocks))


MODELLING_IMPORTS = ("scipy.special",)
"""Modules the engine imports on its first fit: imported before process workers fork."""


def fit_blocks(blocks: Iterable, n_blocks: int, instance, measure: str, name: str, executor: str,
               jobs: int | None, progress: Progress | None, fit: Callable = None) -> list[Model]:
    """Fit every block through the executor; models in block order, warnings shown once each."""
    kind = executors.resolve(executor, n_blocks)
    fit = fit or fit_block
    models: list[Model] = []
    with executors.create_executor(kind, jobs, preload=MODELLING_IMPORTS) as pool:
        done = (lambda result: progress(len(result[0]))) if progress is not None else None
        tasks = ((instance, block, measure, name) for block in blocks)
        for fitted, caught in executors.map_ordered(pool, fit, tasks, on_done=done):
            for warning in caught:
                warnings.warn(warning, stacklevel=3)
            models.extend(fitted)
    return models


def fit_block(task) -> tuple[list[Model], list[Warning]]:
    """Fit one block (an Experiment of a few call paths); runs in a worker.

    Its series groups are fitted in chunks of at most :data:`CHUNK_SERIES`
    series; warnings travel back with the models.
    """
    instance, block, measure, name = task
    models: list[Model] = []
    caught: list[Warning] = []
    for group in block.series_groups():
        for chunk in split_group(group, CHUNK_SERIES):
            fitted, warned = _fit_chunk((instance, chunk, measure, name))
            models.extend(fitted)
            caught.extend(warned)
    return models, caught


def split_group(group: SeriesGroup, size: int) -> list[SeriesGroup]:
    """Cut a group into groups of at most ``size`` series (same points)."""
    return [
        SeriesGroup(group.parameters, group.points, group.keys[start:start + size], group.values[start:start + size])
        for start in range(0, len(group), size)
    ]


def _fit_chunk(task) -> tuple[list[Model], list[Warning]]:
    """Fit one chunk; runs in a worker.  Warnings travel back with the models."""
    instance, group, measure, name = task
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if hasattr(instance, "fit_group"):
            fitted = list(instance.fit_group(group, measure=measure))
        else:
            fitted = fit_per_series(instance, group, measure, name)
    if len(fitted) != len(group):
        raise RuntimeError(f"modeler {name!r} returned {len(fitted)} models for {len(group)} series")
    for m in fitted:
        m.modeler = m.modeler or name
    return fitted, [portable_warning(w.message) for w in caught]


def _build_modeler(info, options: Mapping[str, Any], parameters: tuple[str, ...]):
    """Call the modeler's factory with the user's options (and ``parameters`` if it takes them)."""
    try:
        signature = inspect.signature(info.factory)
    except (TypeError, ValueError):
        signature = None
    if "parameters" in options:
        raise InputError("'parameters' is not a modeler option: the experiment's parameters are passed automatically")
    if signature is not None and "parameters" in signature.parameters:
        options = {**options, "parameters": parameters}
    if signature is not None:
        accepts_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
        known = [n for n, p in signature.parameters.items()
                 if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and n != "parameters"]
        unknown = [k for k in options if k not in known and k != "parameters"]
        if unknown and not accepts_any:
            listed = ", ".join(known) or "none"
            raise InputError(
                f"modeler {info.name!r} has no option {', '.join(map(repr, unknown))}; its options are: {listed}"
            )
    try:
        return info.factory(**options)
    except (ValueError, TypeError) as error:  # option validation failed: the user's input
        raise InputError(f"modeler {info.name!r}: {error}") from error


def fit_per_series(estimator, group: SeriesGroup, measure: str, name: str) -> list[Model]:
    """Adapt a scikit-learn style ``fit(X, y)``/``predict(X)`` modeler to a group.

    Each series gets a fresh clone of ``estimator`` (``copy.deepcopy``), is fitted
    on the group's points and the reduced values, and becomes a :class:`Model`
    with quality figures computed here.
    """
    import copy

    X = group.points
    Y = group.reduce(measure)
    parameters = tuple(p.name for p in group.parameters)
    models = []
    for (callpath, metric), y in zip(group.keys, Y):
        fitted = copy.deepcopy(estimator)
        valid = np.isfinite(y)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fitted.fit(X[valid], y[valid])
            y_hat = np.asarray(fitted.predict(X[valid]), dtype=np.float64).reshape(-1)
        for w in caught:
            warnings.warn(ExtrapWarning(str(w.message), callpath.name, metric.name), stacklevel=2)
        terms = tuple(getattr(fitted, "terms_", ()) or ())
        if terms and not all(isinstance(t, Term) for t in terms):
            raise TypeError(f"modeler {name!r}: terms_ must be a list of extrap_plugins.Term")
        has_formula = hasattr(fitted, "constant_")
        figures = quality_figures(y[valid][None, :], y_hat[None, :], len(terms))
        models.append(
            Model(
                callpath=callpath.name,
                metric=metric.name,
                parameters=parameters,
                constant=float(getattr(fitted, "constant_", 0.0)),
                terms=terms,
                quality=Quality(**{k: float(v[0]) for k, v in figures.items()}),
                points=int(valid.sum()),
                modeler=name,
                function_text=None if has_formula else str(getattr(fitted, "formula_", type(fitted).__name__)),
                predictor=None if has_formula else fitted.predict,
            )
        )
    return models


# -------------------------------------------------------------------- export
def _option_text(value: Any) -> str:
    """Exporters receive text: a mapping such as a target point becomes ``p=65536,n=1e6``."""
    if isinstance(value, Mapping):
        return ",".join(f"{key}={item!r}" if isinstance(item, float) else f"{key}={item}"
                        for key, item in value.items())
    return str(value)


def export(
    model_set: ModelSet,
    exporter: str = "text",
    path: str | os.PathLike | None = None,
    *,
    executor: str = "auto",
    jobs: int | None = None,
    host: PluginHost | None = None,
    **options: Any,
) -> str | None:
    """Write ``model_set`` with the named exporter.

    ``executor`` and ``jobs`` say where an exporter runs independent pieces
    of work (the ``plot`` and ``html`` exporters render figures there; see
    :func:`extrap_plugins.executors.current`).

    With ``path`` None the output is returned as a string (text exporters
    only); otherwise it is written to ``path``, atomically: a temporary file
    beside it is renamed over it only when the exporter has finished, so an
    error never leaves half a file or destroys an existing one.
    """
    with executors.chosen(executor, jobs):
        return _export(host or get_host(), model_set, exporter, path, options)


def _export(host: PluginHost, model_set: ModelSet, exporter: str, path, options: Mapping[str, Any]) -> str | None:
    info = host.exporter(exporter)
    str_options = {key: _option_text(value) for key, value in options.items()}
    if info.kind == "path":
        if path is None:
            raise InputError(f"exporter {info.name!r} writes files: give an output path with -o")
        info.export(model_set, pathlib.Path(path), str_options)
        return None
    if path is None:
        buffer = io.StringIO()
        info.export(model_set, buffer, str_options)
        return buffer.getvalue()
    target = pathlib.Path(path)
    if target.is_dir():
        raise InputError(f"is a folder; exporter {info.name!r} writes one file", target)
    directory = target.parent if str(target.parent) else pathlib.Path(".")
    if not directory.is_dir():
        raise InputError("the folder for the output does not exist", target)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            info.export(model_set, stream, str_options)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
    return None
