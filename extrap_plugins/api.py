"""The Python API: ``read``, ``model`` and ``export``.

The CLI is a thin layer over these three functions; the work behind them
(reading runs in workers, fitting blocks of series) is in
:mod:`extrap_plugins.engine`.
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
import pathlib
import warnings
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from . import executors
from .engine import (BlockPlan, Growing, Progress, call_exporter, call_reader, check_coordinates, fit_blocks, followed,
                     folder_files, held_out_points, input_paths, options_by_reader, read_parts, select_reader,
                     validation_errors)
from .errors import ExtrapWarning, InputError, kept_warnings, unnoted
from .experiment import Experiment, check_measure, names_argument
from .files import atomic_writer, check_destination
from .formatting import described, format_value
from .joining import select_each
from .models import ModelSet, expect_model_set
from .options import parse_bool, parse_int
from .plugins import PluginHost, get_host
from .registration import ExporterInfo, ReaderInfo

__all__ = ["read", "model", "export", "input_paths", "select_reader"]

PATHS = "a path (str or os.PathLike) or a list of paths"
"""What :func:`read` takes, for messages."""


# ------------------------------------------------------- checked arguments
def data_frame(value: Any) -> str | None:
    """A pandas DataFrame as messages name it, with how to make an Experiment of it; None for anything else."""
    if type(value).__name__ != "DataFrame" or not hasattr(value, "columns"):  # (pandas is not imported for it)
        return None
    columns = ", ".join(map(str, value.columns))
    columns = columns if len(columns) <= 60 else columns[:59] + "…"
    return (f"a pandas DataFrame (columns {columns}): build an Experiment from its columns, "
            "extrap_plugins.Experiment.from_columns(PARAMETER_NAMES, callpath=..., metric=..., "
            "coordinates=frame[PARAMETER_NAMES], value=frame[VALUE_COLUMN])")


def paths_argument(value: Any, function: str, expected: str = PATHS) -> str | os.PathLike | list:
    """``value`` as :func:`read` takes it: a path, or a list of them (from any iterable of paths).

    Raises
    ------
    InputError
        ``value`` is something else; the message names ``function`` and says what it ``expected``.
    """
    if isinstance(value, (str, os.PathLike)):
        return value
    ours = type(value).__module__.startswith("extrap_plugins.")  # an Experiment given where paths are read
    if frame := data_frame(value):  # (iterable, over its column names)
        raise InputError(f"{function}: expected {expected}, got {frame}")
    if isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)) and not ours:
        paths = list(value)
        wrong = [p for p in paths if not isinstance(p, (str, os.PathLike))]
        if not wrong:
            return paths
        raise InputError(f"{function}: expected {expected}, got a {type(value).__name__} holding "
                         f"{described(wrong[0])}")
    raise InputError(f"{function}: expected {expected}, got {described(value)}")


def checked(parse, value: Any, name: str, *bounds: int) -> Any:
    """``parse(value, name, *bounds)`` (a parser of :mod:`extrap_plugins.options`), its ValueError an InputError."""
    try:
        return parse(value, name, *bounds)
    except ValueError as error:
        raise InputError(str(error)) from None


def progress_argument(value: Any, function: str, called: str) -> Any:
    """``value`` if it is None or can be called (as ``called`` says), else an InputError naming ``function``."""
    if value is None or callable(value):
        return value
    raise InputError(f"{function}: progress: expected a function, called as {called}, or None; got {described(value)}")


def workers_argument(executor: Any, jobs: Any) -> int | None:
    """``jobs`` as a number of workers (None: the cores), once ``executor`` is known to name an executor.

    Raises
    ------
    InputError
        ``executor`` names none, or ``jobs`` is not a whole number of at least 1.
    """
    executors.resolve(executor, 0)
    return None if jobs is None else checked(parse_int, jobs, "jobs (--jobs)", 1)


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
    progress: Growing | None = None,
    **options: Any,
) -> Experiment:
    """Read measurements from a file or folder (or a list of them) into an Experiment.

    The reader is ``reader`` if given, else the one whose file-name pattern
    matches, else the one whose content sniffing says yes.  ``metrics`` and
    ``callpaths`` (globs) select what is kept, inside the reader when it can.
    Inputs made of independent runs are read through ``executor``
    (see :mod:`extrap_plugins.executors`); a run with bad content is
    skipped with a warning naming it (a third-party reader that fails on a
    run otherwise is a :class:`~extrap_plugins.errors.PluginError`, see
    :class:`~extrap_plugins.registration.ReaderInfo`).  What reading warned
    of is also kept, each text once, as the experiment's
    :attr:`~extrap_plugins.experiment.Experiment.reading_warnings` (the
    exports carry them).  ``options`` go to
    the reader (for example ``aggregation="max"`` for CUBE; a list such as
    ``parameters=["p", "n"]`` as its names, ``p,n``; None as not given).

    ``metrics`` and ``callpaths`` may each be one name (``metrics="time"``).

    ``progress``, if given, is called ``progress(done, more)`` as the runs are
    found and read: ``more`` runs found once a reader has listed an input's
    runs (its ``parts``; an input its reader reads whole is one), ``done`` read
    since the last call (see :func:`extrap_plugins.engine.following`).

    Raises
    ------
    InputError
        ``path`` is not a path or a list of paths, the file is missing or
        unreadable, no reader or several readers fit, ``reader`` reads one
        file and ``path`` is a folder, or the reader found bad content (the
        message names file and line; a parameter value that is NaN or
        infinite is bad content).
    PluginError
        A third-party reader failed or broke its contract (naming it, its
        plugin and distribution).
    """
    kept: list[str] = []
    with kept_warnings(kept):
        experiment = _read(path, reader, metrics, callpaths, executor, jobs, host, progress, options)
    experiment.reading_warnings = unnoted(kept, experiment.notes)
    return experiment


def _read(path, reader, metrics, callpaths, executor, jobs, host, progress, options) -> Experiment:
    """:func:`read`, what it warns of aside."""
    host = host or get_host()
    given = input_paths(paths_argument(path, "read"))
    paths = folder_files(given, host, reader)
    jobs = workers_argument(executor, jobs)
    progress = progress_argument(progress, "read", "progress(done, more)") or followed().reading
    metrics, callpaths = names_argument(metrics, "metrics"), names_argument(callpaths, "callpaths")
    str_options = option_texts(options)
    infos = [named_reader(host, reader, p) if reader else select_reader(p, host) for p in paths]
    experiments, unselected = [], []
    by_reader = options_by_reader(infos, str_options)
    for info, group in _by_reader(infos, paths):
        reader_options = dict(by_reader[info.name])
        if info.filters:
            reader_options.update(metrics=metrics, callpaths=callpaths)
        if info.parts is not None and info.read_part is not None:
            # All inputs of a run-splitting reader form one set (one parts call, one join).
            selection = None if info.filters else (metrics, callpaths)
            experiment = read_parts(info, group[0] if len(group) == 1 else group, reader_options, executor, jobs,
                                     selection, host=host, progress=progress)
            batch = [experiment]
        else:
            batch = [_read_whole(info, p, reader_options, host, progress) for p in group]
        for experiment in batch:
            experiment.reader = info.name
            if not info.filters:
                unselected.append(len(experiments))
            experiments.append(experiment)
    source = ", ".join(str(p) for p in given)
    if len(experiments) == 1 and unselected:
        experiments = [experiments[0].select(metrics=metrics, callpaths=callpaths)]
    elif unselected and (metrics or callpaths):  # a name need only be in one input
        chosen = select_each([experiments[k] for k in unselected], metrics, callpaths, source=source,
                             selected=[e for k, e in enumerate(experiments) if k not in unselected])
        for k, experiment in zip(unselected, chosen):
            experiments[k] = experiment
    if len(experiments) == 1:
        return experiments[0]
    joined = Experiment.concatenate(experiments, source=source)
    joined.reader = experiments[0].reader
    return joined


def named_reader(host: PluginHost, name: str, path: pathlib.Path) -> ReaderInfo:
    """The reader ``name`` (``--reader``) for ``path``: a folder only for a reader that reads folders.

    Raises
    ------
    InputError
        ``path`` is a folder and the reader's ``ReaderInfo.directories`` says it reads one file (it would fail on
        the folder, and a third-party reader be blamed for the user's input).
    """
    info = host.reader(name)
    if path.is_dir() and not info.directories:
        raise InputError(f"is a folder; the {info.name} reader reads one file", path)
    return info


def _read_whole(info: ReaderInfo, path: pathlib.Path, options: dict, host: PluginHost,
                progress: Growing | None) -> Experiment:
    """One input its reader reads whole: one piece of ``progress``."""
    if progress is not None:
        progress(0, 1)
    experiment = call_reader(info, info.read, path, path, options, host=host)
    if progress is not None:
        progress(1, 0)
    return experiment


def _by_reader(infos: list[ReaderInfo], paths: list[pathlib.Path]) -> list[tuple[ReaderInfo, list[pathlib.Path]]]:
    """Inputs grouped by reader, in first-seen order."""
    groups: dict[str, tuple[ReaderInfo, list[pathlib.Path]]] = {}
    for info, p in zip(infos, paths):
        groups.setdefault(info.name, (info, []))[1].append(p)
    return list(groups.values())


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
    validate: bool = False,
    **options: Any,
) -> ModelSet:
    """Learn one model per (call path, metric) series of ``experiment``.

    Parameters
    ----------
    experiment : Experiment
        What :func:`read` returns.  A path is refused rather than read: the
        ``**options`` here are the modeler's, so a reader's could not be given.
    modeler : str
        A registered modeler name (``extrap-plugins plugins`` lists them).
    measure : {"mean", "median", "minimum", "maximum"}
        How the repetitions of a point are reduced before fitting.
    metrics, callpaths : str or iterables of str
        Only these metrics, and call paths matching these globs (empty: all);
        one str is one name.
    progress : callable(int), optional
        Called with the number of series finished after each chunk (by default, inside
        :func:`extrap_plugins.engine.following`, its ``modeling`` is told the series first).
    executor : {"auto", "serial", "process", "mpi"}
        Where the chunks of series are fitted (see :mod:`extrap_plugins.executors`).
        The models are identical whatever the executor.
    jobs : int, optional
        Number of worker processes for ``process`` (default: the cores).
    validate : bool
        Also hold out the largest value of every parameter, refit on the rest
        with the same modeler and options, and store each model's relative
        error at the held-out points in ``Model.validation`` (Wolf's Extra-P slides'
        evaluation as an output; summary: :func:`extrap_plugins.quality.validation_summary`).
    **options
        Passed to the modeler's factory (``--option KEY=VALUE``).

    Returns
    -------
    ModelSet
        Models in the experiment's call path order, then metric order.
    """
    host = host or get_host()
    _check_experiment(experiment)
    check_measure(measure)
    progress = progress_argument(progress, "model", "progress(series)")
    jobs, validate = workers_argument(executor, jobs), checked(parse_bool, validate, "validate (--validate)")
    if not isinstance(modeler, str):
        raise InputError(f"model: modeler: expected a modeler name such as 'default', got {described(modeler)}")
    info = host.modeler(modeler)
    instance = host.build_modeler(modeler, options, tuple(experiment.parameter_names))
    metrics, callpaths = names_argument(metrics, "metrics"), names_argument(callpaths, "callpaths")
    selected = experiment.select(metrics=metrics, callpaths=callpaths) if metrics or callpaths else experiment
    said = _warn_constant_parameters(selected)
    _warn_stored_statistic(selected, measure)
    plan = BlockPlan.of(selected)
    growing = followed().modeling if progress is None else None
    if growing is not None:
        growing(0, _n_series(selected))
        progress = lambda done: growing(done, 0)  # noqa: E731
    models = fit_blocks(plan.blocks(), plan.n_blocks, instance, measure, info.name, executor, jobs, progress,
                        host=host, said=said)
    order = {(c.name, m.name): i for i, (c, m) in enumerate(
        (c, m) for c in experiment.callpaths for m in experiment.metrics)}
    models.sort(key=lambda m: order.get((m.callpath, m.metric), len(order)))
    if validate:
        held = held_out_points(selected)
        if held.any() and not held.all():
            with warnings.catch_warnings():  # about the refit's fewer points, not the user's data
                warnings.simplefilter("ignore")
                refitted = model(selected.take(~held), modeler, measure=measure, executor=executor, jobs=jobs,
                                 host=host, **options)
            errors = validation_errors(refitted.models, selected, held, measure)
            models = [dataclasses.replace(m, validation=errors.get((m.callpath, m.metric), math.nan))
                      for m in models]
    return ModelSet(
        parameters=tuple(experiment.parameter_names),
        models=models,
        modeler=info.name,
        options=dict(options),
        measure=measure,
        source=experiment.source,
        experiment=selected,
    )


def _check_experiment(experiment: Any) -> None:
    """What :func:`model` is given must be an Experiment: say how to get one from what it is."""
    if isinstance(experiment, Experiment):
        if not experiment.parameters:
            raise InputError("model: the experiment has no parameters, so there is nothing to model a value over; "
                             "give Experiment.from_columns the parameter names and one coordinate column for each")
        if not len(experiment):
            raise InputError("model: the experiment holds no measured values, so there is nothing to model; give "
                             "Experiment.from_columns one row (a coordinate and a value) per measurement")
        check_coordinates(experiment, experiment.source or None)
        return
    if isinstance(experiment, (str, os.PathLike)):
        fix = f": read it first, extrap_plugins.model(extrap_plugins.read({os.fspath(experiment)!r}))"
    elif isinstance(experiment, ModelSet):
        fix = ", which is modelled already (its measurements are ModelSet.experiment)"
    elif frame := data_frame(experiment):
        raise InputError(f"model: expected an Experiment (from extrap_plugins.read), got {frame}")
    else:
        fix = ""
    raise InputError(f"model: expected an Experiment (from extrap_plugins.read), got {described(experiment)}{fix}")


def _n_series(experiment: Experiment) -> int:
    """How many (call path, metric) series have values."""
    if not len(experiment):
        return 0
    series = experiment.callpath_index.astype(np.int64) * max(len(experiment.metrics), 1) + experiment.metric_index
    return int(np.count_nonzero(np.bincount(series)))


def _warn_stored_statistic(experiment: Experiment, measure: str) -> None:
    """``measure`` other than the mean for a file that keeps one statistic per point (Extra-P's experiments without
    their repetitions): the measure cannot reach the reader, which read before; say which reader option does."""
    from extrap_plugins.readers._common import measure_warning

    message = measure_warning(experiment, measure)
    if message:
        warnings.warn(ExtrapWarning(message), stacklevel=3)


def _warn_constant_parameters(experiment: Experiment) -> tuple[str, ...]:
    """A parameter with one value in every measurement says nothing about growth: say so, once.

    Returns what the modelers' notes of each series begin with that this says already (``parameter n has the
    single value 30``), so that they are not warned again (:func:`~extrap_plugins.engine.fit_blocks`); the models
    keep them.
    """
    from .errors import QualityWarning
    from .modelers.base import SINGLE_VALUE

    if not len(experiment) or not experiment.parameter_names:
        return ()
    constant = experiment.coordinates.shape[0] and (experiment.coordinates == experiment.coordinates[0]).all(axis=0)
    if not np.all(constant):  # (with another parameter varying, only the modelers say it, per series)
        return ()
    pairs = list(zip(experiment.parameter_names, map(format_value, experiment.coordinates[0])))
    values = ", ".join(f"{name} = {value}" for name, value in pairs)
    warnings.warn(QualityWarning(f"{values} in every measurement: every model is a constant, no model can show "
                                 "how anything grows; measure at several values"), stacklevel=3)
    return tuple(SINGLE_VALUE.format(name=name, value=value) for name, value in pairs)


# -------------------------------------------------------------------- export
def _option_text(value: Any) -> str:
    """Readers and exporters receive text, as from the command line: a mapping such as a target point becomes
    ``p=65536,n=1e6``, a list (any iterable but a str) of names such as ``["p", "n"]`` becomes ``p,n``."""
    if isinstance(value, np.ndarray):
        value = value.tolist()  # (one number, if it has no dimension)
    if isinstance(value, Mapping):
        return ",".join(f"{key}={float(item)!r}" if isinstance(item, float) else f"{key}={item}"
                        for key, item in value.items())  # (float(): a numpy float's repr names its type)
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        return ",".join(map(str, value))
    return str(value)


def option_texts(options: Mapping[str, Any]) -> dict[str, str]:
    """``**options`` of :func:`read` or :func:`export` as their plugin receives them (:func:`_option_text`); one
    given as None is left out, as not given (``target=None``: no target, as for ``extrapolate``)."""
    return {key: _option_text(value) for key, value in options.items() if value is not None}


def export(
    model_set: ModelSet,
    exporter: str = "text",
    path: str | os.PathLike | None = None,
    *,
    executor: str = "auto",
    jobs: int | None = None,
    host: PluginHost | None = None,
    inputs: Sequence[str | os.PathLike] | None = None,
    allow_read_only: bool = False,
    **options: Any,
) -> str | None:
    """Write ``model_set`` with the named exporter.

    ``executor`` and ``jobs`` say where an exporter runs independent pieces
    of work (the ``plot`` and ``html`` exporters render figures there; see
    :func:`extrap_plugins.executors.current`).

    With ``path`` None the output is returned as a string (text exporters
    only); otherwise it is written to ``path``, atomically: a temporary file
    beside it is renamed over it only when the exporter has finished, so an
    error never leaves half a file or destroys an existing one.  ``path``
    is checked first (:func:`extrap_plugins.files.check_destination`): never
    one of ``inputs`` (default: the inputs the models were read from) nor
    inside an input folder, and a read-only file only with ``allow_read_only``.
    ``options`` go to the exporter as to :func:`read`'s reader (``target={"p": 4096}`` as ``p=4096``).
    """
    host = host or get_host()
    expect_model_set(model_set, "export")
    jobs = workers_argument(executor, jobs)
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise InputError(f"export: path: expected a path (str or os.PathLike), or None for the text, got "
                         f"{described(path)}")
    allow_read_only = checked(parse_bool, allow_read_only, "allow_read_only (--overwrite-read-only)")
    if inputs is not None:
        inputs = paths_argument(inputs, "export: inputs")
        inputs = [inputs] if isinstance(inputs, (str, os.PathLike)) else inputs
    if path is not None:
        check_output(host, exporter, path, model_inputs(model_set) if inputs is None else inputs, allow_read_only)
    with executors.chosen(executor, jobs):
        return _export(host, model_set, exporter, path, options, allow_read_only)


def check_output(host: PluginHost, exporter: str, path, inputs: Sequence, allow_read_only: bool = False) -> None:
    """Check ``-o`` before any work: see :func:`extrap_plugins.files.check_destination`."""
    info = host.exporter(exporter)
    check_destination(path, inputs=inputs, folder=info.kind == "path" and info.folder, allow_read_only=allow_read_only)


def model_inputs(model_set: ModelSet) -> list[str]:
    """The input files and folders the models were read from, as far as their sources name existing paths."""
    sources = {model_set.source or ""}
    if model_set.experiment is not None:
        sources.add(model_set.experiment.source or "")
    found = []
    for source in sources:
        for candidate in [source, *source.split(", ")]:
            if candidate and os.path.exists(candidate):
                found.append(candidate)
    return found


def check_export_options(info: ExporterInfo, options: Iterable[str]) -> None:
    """The option names given to an exporter are the options of every exporter
    (:data:`~extrap_plugins.exporters._options.COMMON_OPTIONS`) or its own (``ExporterInfo.options``): checked by
    the host for every exporter, third-party ones too, before it runs.

    Raises
    ------
    InputError
        Naming the exporter, the unknown names and the known ones.
    """
    from .exporters._options import check_option_names
    from .plugins import option_help

    check_option_names(options, info.name, [name for name, _ in option_help(info.options)])


def _export(host: PluginHost, model_set: ModelSet, exporter: str, path, options: Mapping[str, Any],
            allow_read_only: bool = False) -> str | None:
    info = host.exporter(exporter)
    str_options = option_texts(options)
    check_export_options(info, str_options)
    if info.kind == "path":
        if path is None:
            raise InputError(f"exporter {info.name!r} writes files: give it an output path (the path argument)")
        call_exporter(host, info, model_set, pathlib.Path(path), str_options, path)
        return None
    if path is None:
        buffer = io.StringIO()
        call_exporter(host, info, model_set, buffer, str_options)
        return buffer.getvalue()
    with atomic_writer(pathlib.Path(path), allow_read_only=allow_read_only) as stream:
        call_exporter(host, info, model_set, stream, str_options, path)
    return None
