"""The Python API: ``read``, ``model`` and ``export``.

The CLI is a thin layer over these three functions.
"""

from __future__ import annotations

import fnmatch
import inspect
import io
import os
import pathlib
import tempfile
import warnings
from typing import Any, Callable, Iterable, Mapping, Sequence

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
    paths = [pathlib.Path(path)] if isinstance(path, (str, os.PathLike)) else [pathlib.Path(p) for p in path]
    if not paths:
        raise InputError("no input given")
    metrics, callpaths = tuple(metrics), tuple(callpaths)
    str_options = {key: str(value) for key, value in options.items()}
    for p in paths:
        if not p.exists():
            raise InputError("no such file or folder", p)
    infos = [host.reader(reader) if reader else select_reader(p, host) for p in paths]
    experiments = []
    for info, group in _by_reader(infos, paths):
        reader_options = dict(str_options)
        if info.filters:
            reader_options.update(metrics=metrics, callpaths=callpaths)
        if info.parts is not None and info.read_part is not None:
            # All inputs of a run-splitting reader form one set (one parts call, one join).
            experiment = _read_parts(info, group[0] if len(group) == 1 else group, reader_options, executor, jobs)
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


def _by_reader(infos: list[ReaderInfo], paths: list[pathlib.Path]) -> list[tuple[ReaderInfo, list[pathlib.Path]]]:
    """Inputs grouped by reader, in first-seen order."""
    groups: dict[str, tuple[ReaderInfo, list[pathlib.Path]]] = {}
    for info, p in zip(infos, paths):
        groups.setdefault(info.name, (info, []))[1].append(p)
    return list(groups.values())


def _read_parts(info: ReaderInfo, path, options: dict, executor: str, jobs: int | None) -> Experiment:
    """Read the runs of one input in parallel; skip (and warn about) broken runs."""
    source = ", ".join(map(str, path)) if isinstance(path, list) else str(path)
    parts = info.parts(path, options)
    if not parts:
        raise InputError(f"no runs found for the {info.name} reader", source)
    kind = executors.resolve(executor, len(parts))
    with executors.create_executor(kind, jobs) as pool:
        results = list(executors.map_ordered(pool, _read_one_part, ((info.read_part, part, options) for part in parts)))
    experiments = []
    for part, (experiment, error) in zip(parts, results):
        if error is not None:
            warnings.warn(ExtrapWarning(f"skipped: {error}"), stacklevel=3)
        else:
            experiments.append(experiment)
    if not experiments:
        raise InputError(f"none of the {len(parts)} runs could be read", source)
    if info.join is not None:
        return info.join(experiments, path, options)
    joined = Experiment.concatenate(experiments, source=source)
    joined.notes = [note for e in experiments for note in e.notes]
    return joined


def _read_one_part(task) -> tuple[Experiment | None, InputError | None]:
    """Runs in a worker: a bad run comes back as an error value, not an exception."""
    read_part, part, options = task
    try:
        return read_part(part, options), None
    except InputError as error:
        return None, error


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
    selected = experiment.select(metrics=metrics, callpaths=callpaths)
    chunks = [chunk for group in selected.series_groups() for chunk in split_group(group, CHUNK_SERIES)]
    kind = executors.resolve(executor, len(chunks))
    models: list[Model] = []
    with executors.create_executor(kind, jobs) as pool:
        done = (lambda result: progress(len(result[0]))) if progress is not None else None
        tasks = ((instance, chunk, measure, info.name) for chunk in chunks)
        for fitted, caught in executors.map_ordered(pool, _fit_chunk, tasks, on_done=done):
            for warning in caught:
                warnings.warn(warning, stacklevel=2)
            models.extend(fitted)
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


CHUNK_SERIES = 4096
"""Series per piece of modelling work: fixed, so results never depend on the executor."""


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
    return fitted, [w.message for w in caught]


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
    host: PluginHost | None = None,
    **options: Any,
) -> str | None:
    """Write ``model_set`` with the named exporter.

    With ``path`` None the output is returned as a string (text exporters
    only); otherwise it is written to ``path``, atomically: a temporary file
    beside it is renamed over it only when the exporter has finished, so an
    error never leaves half a file or destroys an existing one.
    """
    host = host or get_host()
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
