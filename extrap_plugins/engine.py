"""The engine behind ``read`` and ``model``: reading runs in workers, and fitting blocks of series.

========================  ==============================================================
:func:`input_paths`       the inputs, checked to exist
:func:`select_reader`     the reader for an input: by file name, then by content
:func:`read_parts`        read the runs of one input through an executor, join them
:func:`read_one_part`     read one run in a worker (errors and warnings come back as data)
:class:`BlockPlan`        an experiment cut into blocks of call paths, the same for every executor
:func:`fit_blocks`        fit every block through an executor
:func:`fit_chunk`         fit one group of series: batched ``fit_group`` or the per-series adapter
:func:`fit_per_series`    adapt a scikit-learn style ``fit``/``predict`` modeler
:func:`warn_per_cause`    the warnings of many series, one per cause (what ``fit_blocks`` shows)
:func:`following`         where ``read`` and ``model`` report progress when not told (``efficiency``, ``compare``)
========================  ==============================================================

The API facade (:mod:`extrap_plugins.api`) and streaming
(:mod:`extrap_plugins.streaming`) both run on these, so a model is the same
bit for bit whichever path made it.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import fnmatch
import gc
import os
import pathlib
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from . import executors
from .errors import ExtrapWarning, InputError, PluginError, QualityWarning, exit_text, none_read, skip_warnings
from .experiment import Experiment, SeriesGroup
from .formatting import describe_inputs, format_warned
from .joining import check_selection, join_parts, select_leniently, with_rows
from .models import Model, Quality, Term
from .quality import quality_figures
from .readers._common import check_input_file, guarded_read
from .registration import ReaderInfo

if TYPE_CHECKING:
    from .plugins import PluginHost

Progress = Callable[[int], None]
"""Told the number of series finished after each chunk (``model(progress=...)``)."""
Growing = Callable[[int, int], None]
"""Told ``(done, more)`` for work found as it goes: pieces finished since the last call, and pieces newly found (a
reader's runs once it has listed them; the series of each ``model`` call)."""


@dataclass(frozen=True)
class Following:
    """Where :func:`~extrap_plugins.api.read` and :func:`~extrap_plugins.api.model` report progress when their
    caller gives no ``progress`` (see :func:`following`)."""

    reading: Growing | None = None
    modeling: Growing | None = None


NOT_FOLLOWED = Following()
_FOLLOWING: contextvars.ContextVar[Following | None] = contextvars.ContextVar("extrap_plugins_following",
                                                                               default=None)


@contextlib.contextmanager
def following(reading: Growing | None = None, modeling: Growing | None = None) -> Iterator[None]:
    """Inside the block, every :func:`~extrap_plugins.api.read` and :func:`~extrap_plugins.api.model` that is not
    given a ``progress`` reports to ``reading`` (runs) and ``modeling`` (series), told ``(done, more)``.

    ``efficiency`` and ``compare`` read and model deep inside; the command line follows them with this, as
    :func:`extrap_plugins.executors.chosen` carries the executor, without every analysis passing it along.
    """
    token = _FOLLOWING.set(Following(reading, modeling))
    try:
        yield
    finally:
        _FOLLOWING.reset(token)


def followed() -> Following:
    """The callbacks of the enclosing :func:`following` block (none outside one)."""
    return _FOLLOWING.get() or NOT_FOLLOWED


def input_paths(path: str | os.PathLike | Sequence[str | os.PathLike]) -> list[pathlib.Path]:
    """The inputs as a list of paths that exist.

    Raises
    ------
    InputError
        No input, one that does not exist, or one given twice (by any name).
    """
    paths = [pathlib.Path(path)] if isinstance(path, (str, os.PathLike)) else [pathlib.Path(p) for p in path]
    if not paths:
        raise InputError("no input given")
    seen: dict[str, pathlib.Path] = {}
    for p in paths:
        if not p.exists():
            raise InputError("no such file or folder", p)
        check_input_file(p)
        first = seen.setdefault(os.path.realpath(p), p)
        if first is not p:  # its runs would count twice, as repetitions the program never ran
            raise InputError(f"given twice (also as {first}): its measurements would count twice", p)
    for real, p in seen.items():  # a run inside a folder also given: the folder's reader reads it too
        folder = next((f for r, f in seen.items() if real.startswith(r.rstrip(os.sep) + os.sep) and f.is_dir()), None)
        if folder is not None:
            raise InputError(f"inside {folder}, also given: its measurements would count twice", p)
    return paths


def call_reader(info: ReaderInfo, function: Callable, path, *args, host: PluginHost | None = None):
    """Call one of a reader's functions through the one guarded entry of every read.

    Bad data is an :class:`InputError` naming the file (see
    :func:`extrap_plugins.readers._common.guarded_read`); any other failure of a
    third-party reader, ``sys.exit()`` included, and a ``read`` or ``join`` that
    returns something other than an :class:`~extrap_plugins.experiment.Experiment`
    (or ``parts`` something other than a list), is a :class:`PluginError` naming
    the reader, its plugin and its distribution (exit 3); a built-in reader's
    failure is a bug and propagates as it is (exit 1).
    """
    inputs = describe_inputs(path)
    try:
        result = guarded_read(function, path, *args, reader=info.name)
    except (InputError, PluginError):
        raise
    except (Exception, SystemExit) as error:
        failure = plugin_failure(host, "reader", info.name, error, f" on {inputs}")
        if failure is None:
            raise
        raise failure from error
    if function is info.parts:
        what, wanted, expected = "parts returned", (list, tuple), "a list of runs"
    else:
        what = "join returned" if function is info.join else "returned"
        wanted, expected = Experiment, "an extrap_plugins.Experiment"
    if not isinstance(result, wanted):
        fault = PluginFault(f"{what} {_a(result)} for {inputs}, expected {expected}")
        raise plugin_failure(host, "reader", info.name, fault) or fault
    return result


@contextlib.contextmanager
def reader_guard(host: PluginHost | None, name: str) -> Iterator[None]:
    """A :class:`PluginFault` a worker reported for the reader ``name`` (see :func:`read_one_part`) is a
    :class:`PluginError` naming it."""
    try:
        yield
    except PluginFault as fault:
        failure = plugin_failure(host, "reader", name, fault)
        if failure is None:
            raise
        raise failure from fault


def _a(value) -> str:
    """``None``, or ``a str``: what a plugin returned, for messages."""
    return "None" if value is None else f"a {type(value).__name__}"


def plugin_failure(host: PluginHost | None, kind: str, name: str, error: BaseException,
                   where: str = "") -> PluginError | None:
    """The :class:`PluginError` for a third-party plugin's failure, or None for a built-in one (a bug of ours).

    A :class:`SystemExit` (the plugin called ``sys.exit()``) is named with the exit it attempted.
    """
    from .plugins import BUILTIN_DISTRIBUTION, get_host

    host = host or get_host()
    table = {"reader": host.readers, "modeler": host.modelers, "exporter": host.exporters}[kind]
    registered = table.get(name)
    if registered is not None and registered.distribution == BUILTIN_DISTRIBUTION:
        return None
    plugin, distribution = ((registered.plugin, registered.distribution) if registered is not None
                            else ("?", "unknown distribution"))
    who = f"{kind} {name!r} (plugin {plugin} from distribution {distribution!r})"
    if isinstance(error, SystemExit):
        return PluginError(f"{who}: {exit_text(error)}{where}")
    text = str(error).splitlines()[0] if str(error) else ""
    if isinstance(error, PluginFault):
        return PluginError(f"{who}: {text}")
    return PluginError(f"{who} failed{where}: {type(error).__name__}{': ' + text if text else ''}")


class PluginFault(RuntimeError):
    """A plugin broke its contract (what it returned is wrong); the host names the plugin and its distribution."""


def call_exporter(host: PluginHost | None, info, model_set, out, options: dict) -> None:
    """Run an exporter; a third-party exporter's failure (``sys.exit()`` too) is a :class:`PluginError` naming it
    (exit 3)."""
    try:
        info.export(model_set, out, options)
    except (InputError, PluginError, OSError):
        raise
    except (Exception, SystemExit) as error:
        failure = plugin_failure(host, "exporter", info.name, error)
        if failure is None:
            raise
        raise failure from error


def check_models(fitted: Sequence, group: SeriesGroup, name: str) -> None:
    """Check what a modeler returned for a group before anything is shown or exported.

    One :class:`~extrap_plugins.models.Model` per series, in order, each for
    its own call path and metric, over the experiment's parameters only, with
    a finite constant and coefficients wherever the series has values.  A
    model with its own ``predictor`` is evaluated at the group's points: it
    must not raise, must return one value per point, and a finite one at
    every point where the series has a value.

    Raises
    ------
    PluginFault
        Naming the modeler and the first series that is wrong.
    """
    if len(fitted) != len(group):
        raise PluginFault(f"returned {len(fitted)} models for {len(group)} series")
    known = {p.name for p in group.parameters}
    for i, (m, (callpath, metric)) in enumerate(zip(fitted, group.keys)):
        series = f"{callpath.name} [{metric.name}]"
        if not isinstance(m, Model):
            raise PluginFault(f"returned a {type(m).__name__} for {series}, expected an extrap_plugins.Model")
        if (m.callpath, m.metric) != (callpath.name, metric.name):
            raise PluginFault(f"returned a model for {m.callpath} [{m.metric}] in place of {series}")
        terms = list(m.terms or ())
        for segment in m.segments or ():
            terms.extend(segment.terms)
        for term in terms:
            if not isinstance(term, Term):
                raise PluginFault(f"{series}: a term is a {type(term).__name__}, expected an extrap_plugins.Term")
            unknown = sorted(set(term.factors) - known)
            if unknown:
                raise PluginFault(f"{series}: a term uses {', '.join(map(repr, unknown))}, which is not a parameter "
                                  f"(the parameters are {', '.join(sorted(known)) or 'none'})")
        measured = np.isfinite(group.values[i]).any(axis=-1)
        has_values = bool(measured.any())
        numbers = [m.constant, *(t.coefficient for t in terms), *(s.constant for s in m.segments or ())]
        try:
            finite = all(np.isfinite(float(x)) for x in numbers)
        except (TypeError, ValueError):
            finite = False
        if has_values and not finite:
            raise PluginFault(f"{series}: the model's constant or a coefficient is not a finite number "
                              f"({m.constant!r}{' + ...' if terms else ''})")
        if has_values and m.predictor is not None:
            try:
                predicted = np.asarray(m.predictor(np.array(group.points, dtype=np.float64)), dtype=np.float64)
            except Exception as error:  # the predictor is the plugin's code: its failure is the plugin's fault
                raise PluginFault(f"{series}: predict failed: {type(error).__name__}: {error}") from error
            check_predictions(series, predicted, measured)


def check_predictions(series: str, predicted: np.ndarray, measured: np.ndarray) -> None:
    """Check a modeler's predictions at the measured points of one series.

    Parameters
    ----------
    series : str
        ``callpath [metric]``, for messages.
    predicted : ndarray
        What ``predict`` returned for the points.
    measured : ndarray of bool, shape (n_points,)
        Where the series has a value: the prediction must be finite there.

    Raises
    ------
    PluginFault
        The shape is not ``(n_points,)``, or a prediction is NaN or infinite where the series has a value.
    """
    n = measured.size
    if predicted.shape != (n,):
        raise PluginFault(f"{series}: predict returned shape {predicted.shape} for {n} points, expected ({n},)")
    if not np.isfinite(predicted[measured]).all():
        raise PluginFault(f"{series}: predict returned values that are not finite (NaN or infinity)")


def select_reader(path: pathlib.Path, host: PluginHost) -> ReaderInfo:
    """Choose the reader for ``path``: by file-name pattern, then by sniffing the content."""
    readers = [r.info for r in host.readers.values()]
    if path.is_dir():
        readers = [r for r in readers if r.directories]
    name = path.name.lower()
    by_name = [r for r in readers if any(fnmatch.fnmatch(name, p.lower()) for p in r.patterns)]
    if len(by_name) == 1:
        return by_name[0]
    candidates = by_name or readers
    by_content = [r for r in candidates if r.sniff is not None and _safe_sniff(r, path, host)]
    if len(by_content) == 1:
        return by_content[0]
    if not by_content:
        if path.is_dir() and not any(path.iterdir()):
            raise InputError("the folder is empty: no measurements to read", path)
        names = ", ".join(sorted(r.name for r in readers)) or "none"
        raise InputError(f"no reader recognises this input; choose one with --reader (readers: {names})", path)
    names = ", ".join(sorted(r.name for r in by_content))
    raise InputError(f"several readers can read this input ({names}); choose one with --reader", path)


def _safe_sniff(reader: ReaderInfo, path: pathlib.Path, host: PluginHost | None = None) -> bool:
    """Whether ``reader`` recognises ``path``: a sniff that raises does not; one that calls ``sys.exit()`` is a
    broken plugin (:func:`plugin_failure`)."""
    try:
        return bool(reader.sniff(path))
    except Exception:
        return False
    except SystemExit as error:
        failure = plugin_failure(host, "reader", reader.name, error, f" on {path}")
        if failure is None:
            raise
        raise failure from error


def read_parts(info: ReaderInfo, path, options: dict, executor: str, jobs: int | None,
                selection: tuple[tuple[str, ...], tuple[str, ...]] | None = None,
                host: PluginHost | None = None, progress: Growing | None = None) -> Experiment:
    """Read the runs of one input in parallel; skip (and warn about) broken runs.

    ``selection`` is ``(metrics, callpaths)`` to apply in the workers for
    readers that do not select themselves, so unselected values never
    travel back.  ``progress`` is told ``(0, n_runs)`` once the reader has
    listed its runs, then ``(1, 0)`` as each run is read (or skipped).
    """
    source = describe_inputs(path)
    parts = call_reader(info, info.parts, path, path, options, host=host)
    if not parts:
        raise InputError(f"no runs found for the {info.name} reader", source)
    kind = executors.resolve(executor, len(parts))
    experiments, skipped = [], []
    if progress is not None:
        progress(0, len(parts))
    with executors.create_executor(kind, jobs) as pool, reader_guard(host, info.name):
        tasks = ((info.read_part, part, options, selection) for part in parts)
        done = (lambda result: progress(1, 0)) if progress is not None else None
        results = executors.map_ordered(pool, read_one_part, tasks, on_done=done)
        for experiment in report_parts(results, stacklevel=4, skipped=skipped):
            experiments.append(experiment)
    if not experiments:
        raise none_read(len(parts), skipped, source)
    if selection is not None:
        check_selection(*selection, with_values={m.name for e in experiments for m in with_rows(e.metrics,
                                                                                           e.metric_index)},
                        declared=list(dict.fromkeys(m.name for e in experiments for m in e.metrics)),
                        any_callpath=any(len(e) for e in experiments), source=source)
    if info.join is not None:
        return call_reader(info, info.join, path, experiments, path, options, host=host)
    return join_parts(experiments, source)


def read_one_part(task) -> tuple[Any, InputError | PluginFault | None, list[Warning]]:
    """Read one part in a worker: ``(result, error, warnings)``, never an exception.

    ``task`` is ``(read_part, part, options)`` or ``(read_part, part,
    options, selection)`` with ``selection`` ``(metrics, callpaths)`` (or
    None) applied here for readers that do not select themselves.  A bad run
    comes back as an :class:`InputError` naming it (a reader bug too, with
    its type, so one odd file cannot end a long sweep); warnings come back to
    be shown once each.  A reader that calls ``sys.exit()`` or returns
    something other than an Experiment comes back as a :class:`PluginFault`,
    which :func:`report_parts` raises (:func:`reader_guard` names the reader).
    """
    read_part, part, options = task[:3]
    selection = task[3] if len(task) > 3 else None
    with warnings.catch_warnings(record=True) as caught, collector_paused():
        warnings.simplefilter("always")
        where = str(getattr(part, "path", part))
        try:
            result, error = guarded_read(read_part, where, part, options), None
        except InputError as problem:
            result, error = None, problem
        except Exception as problem:  # noqa: BLE001 - reported by path, the sweep goes on
            result, error = None, InputError(f"reading failed ({type(problem).__name__}: {problem})", where)
        except SystemExit as problem:  # not an end of this worker, nor of the command: the plugin's fault
            result, error = None, PluginFault(f"{exit_text(problem)} on {where}")
    if error is None and not isinstance(result, Experiment):
        result, error = None, PluginFault(f"returned {_a(result)} for {where}, expected an "
                                          "extrap_plugins.Experiment")
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


def portable_warning(message: Warning) -> Warning:
    """A warning that survives pickling back from a worker (its category kept where possible)."""
    if isinstance(message, ExtrapWarning) or type(message).__module__ == "builtins":
        return message
    return ExtrapWarning(str(message))


def report_parts(results: Iterable[tuple[Any, InputError | PluginFault | None, list[Warning]]],
                 stacklevel: int = 3, skipped: list[InputError] | None = None):
    """Yield the parts that were read; warn (once per text) about what workers reported and, once every part is
    in, about the parts that were not read: once per cause (:func:`~.errors.skip_warnings`).

    ``skipped``, if given, receives why each part that was not read was not, and the caller then reports the
    case where no part was read (:func:`~.errors.none_read`, which names the first cause and the count): no "skipped"
    warning is given then, so the error is the one line about it.

    Raises
    ------
    PluginFault
        A worker reported a broken reader (:func:`read_one_part`).
    """
    seen: set[tuple[type, str]] = set()
    errors: list[InputError] = []
    n_parts = 0
    for result, error, caught in results:
        n_parts += 1
        for message in caught:
            key = (type(message), str(message))
            if key not in seen:
                seen.add(key)
                warnings.warn(message, stacklevel=stacklevel)
        if isinstance(error, PluginFault):
            raise error
        if error is not None:
            errors.append(error)
            if skipped is not None:
                skipped.append(error)
        else:
            yield result
    if skipped is None or len(errors) < n_parts:
        for message in skip_warnings(errors, n_parts):
            warnings.warn(message, stacklevel=stacklevel)


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
        return e.take(rows, callpaths=[e.callpaths[i] for i in codes],
                      callpath_index=(self.position[rows] - start).astype(np.int32))

    def blocks(self) -> Iterator[Experiment]:
        """Every block, made only when asked for (at most a few are in memory at once)."""
        return (self.block(b) for b in range(self.n_blocks))


MODELLING_IMPORTS = ("scipy.special",)
"""Modules the engine imports on its first fit: imported before process workers fork."""


def fit_blocks(blocks: Iterable, n_blocks: int, instance, measure: str, name: str, executor: str,
               jobs: int | None, progress: Progress | None, fit: Callable = None,
               host: PluginHost | None = None, said: Sequence[str] = ()) -> list[Model]:
    """Fit every block through the executor; models in block order.

    The warnings of every block are shown once all are fitted, one per cause
    (:func:`warn_per_cause`); causes beginning with one of ``said`` (said
    already, of the whole experiment) are left out: the models keep them in
    :attr:`~extrap_plugins.models.Model.warnings`.
    """
    kind = executors.resolve(executor, n_blocks)
    fit = fit or fit_block
    models: list[Model] = []
    caught: list[Warning] = []
    with executors.create_executor(kind, jobs, preload=MODELLING_IMPORTS) as pool, modeler_guard(host, name):
        done = (lambda result: progress(len(result[0]))) if progress is not None else None
        tasks = ((instance, block, measure, name) for block in blocks)
        for fitted, warned in executors.map_ordered(pool, fit, tasks, on_done=done):
            caught.extend(warned)
            models.extend(fitted)
    warn_per_cause(caught, stacklevel=3, said=said)
    return models


KEPT = "their Model.warnings say it"
"""Where a quality warning of more series than it names sends a Python user (:func:`warn_per_cause`); the command
line names its own place (``--export json lists them all``)."""


def warn_per_cause(caught: Iterable[Warning], stacklevel: int = 2, said: Sequence[str] = ()) -> None:
    """Warn once per cause about the series the warnings in ``caught`` name, in the order the causes came.

    A cause is the warning's class and text apart from its series (``ExtrapWarning.message``); a cause of one
    series is its warning as it came, one of several is one warning naming them as
    :func:`~extrap_plugins.formatting.format_warned` does (``main->a [time] and 86 more series (their
    Model.warnings say it): ...``), with its first series as ``callpath`` and ``metric``.  Every warning shown
    carries all its series as ``series``, ``((callpath, metric), ...)`` (empty for a warning about no series), so
    that whoever gathers warnings (the command line's :class:`~extrap_plugins.cli.WarningLines`) still sees each
    one.  A cause beginning with one of ``said`` is not shown.
    """
    causes: dict[tuple[type, str], tuple[Warning, list[tuple[str, str]]]] = {}
    for message in caught:
        text, series = warned_cause(message)
        if said and text.startswith(tuple(said)):
            continue
        causes.setdefault((type(message), text), (message, []))[1].extend(series)
    for (kind, text), (first, series) in causes.items():
        series = list(dict.fromkeys(series))  # a series warned twice of one cause is one series
        if len(series) > 1:
            first = copy.copy(first)  # (ExtrapWarning.__reduce__: a new warning of the same class and cause)
            first.callpath, first.metric = series[0]
            first.args = (format_warned([f"{c} [{m}]" for c, m in series], text,
                                        KEPT if issubclass(kind, QualityWarning) else ""),)
        with contextlib.suppress(AttributeError):  # (a warning class with __slots__)
            first.series = tuple(series)
        warnings.warn(first, stacklevel=stacklevel + 1)


def warned_cause(message: Warning) -> tuple[str, list[tuple[str, str]]]:
    """A warning's cause (its text apart from the series it names) and its series, ``[(callpath, metric), ...]``,
    as the command line's :class:`~extrap_plugins.cli.WarningLines` reads them."""
    series = getattr(message, "series", None)
    callpath, metric = getattr(message, "callpath", ""), getattr(message, "metric", "")
    text = getattr(message, "message", None)
    if not isinstance(text, str) or not (series or callpath or metric):
        return str(message), []
    return text, [tuple(pair) for pair in series] if series else [(callpath, metric)]


@contextlib.contextmanager
def modeler_guard(host: PluginHost | None, name: str) -> Iterator[None]:
    """A third-party modeler that raises, calls ``sys.exit()`` (in this process or, coming back through the
    executor, in a worker), or returns what :func:`check_models` refuses, is a PluginError naming it."""
    try:
        yield
    except (InputError, PluginError, executors.WorkerLost):
        raise
    except (Exception, SystemExit) as error:
        failure = plugin_failure(host, "modeler", name, error)
        if failure is None:
            raise
        raise failure from error


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
            fitted, warned = fit_chunk((instance, chunk, measure, name))
            models.extend(fitted)
            caught.extend(warned)
    return models, caught


def split_group(group: SeriesGroup, size: int) -> list[SeriesGroup]:
    """Cut a group into groups of at most ``size`` series (same points)."""
    return [
        SeriesGroup(group.parameters, group.points, group.keys[start:start + size], group.values[start:start + size])
        for start in range(0, len(group), size)
    ]


def fit_chunk(task) -> tuple[list[Model], list[Warning]]:
    """Fit one chunk; runs in a worker.  Warnings travel back with the models."""
    instance, group, measure, name = task
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = fit_any(instance, group, measure, name)
    check_models(fitted, group, name)
    ranges, non_negative = measured_extent(group)
    for m, span, sign in zip(fitted, ranges, non_negative):
        m.modeler = m.modeler or name
        if not m.measured_range:
            m.measured_range, m.non_negative = span, sign
    return fitted, [series_warning(w.message, group) for w in caught]


def measured_extent(group: SeriesGroup) -> tuple[list[tuple[tuple[float, float], ...]], list[bool | None]]:
    """Per series of ``group``: the smallest and largest measured value of each parameter where it has values,
    and whether every value is 0 or more (None for a series without values).

    Returns
    -------
    ranges : list of tuple, one ``((low, high), ...)`` per series (empty for a series without values)
    non_negative : list of bool or None, one per series
    """
    X = np.asarray(group.points, dtype=np.float64)
    values = np.asarray(group.values, dtype=np.float64).reshape(len(group), X.shape[0], -1)
    finite = np.isfinite(values)
    measured = finite.any(axis=-1)  # (n_series, n_points)
    inside = measured[:, :, None]
    low = np.where(inside, X[None], np.inf).min(axis=1, initial=np.inf)
    high = np.where(inside, X[None], -np.inf).max(axis=1, initial=-np.inf)
    non_negative = np.where(finite, values >= 0, True).all(axis=(1, 2))
    has = measured.any(axis=1)
    ranges = [tuple(zip(lo, hi)) if h else () for lo, hi, h in zip(low.tolist(), high.tolist(), has.tolist())]
    return ranges, [bool(n) if h else None for n, h in zip(non_negative.tolist(), has.tolist())]


def series_warning(message: Warning, group: SeriesGroup) -> Warning:
    """A warning raised while fitting ``group``, naming its series (numpy's own warnings name none)."""
    if isinstance(message, ExtrapWarning) or not len(group):
        return portable_warning(message)
    callpath, metric = group.keys[0]
    if len(group) == 1:
        return ExtrapWarning(str(message), callpath.name, metric.name)
    return ExtrapWarning(str(message), f"one of {len(group)} series fitted together, from {callpath.name}", metric.name)



def fit_any(instance, group: SeriesGroup, measure: str, name: str) -> list[Model]:
    """Fit a group with a batched modeler (``fit_group``), or series by series with a scikit-learn style one."""
    if hasattr(instance, "fit_group"):
        return list(instance.fit_group(group, measure=measure))
    return fit_per_series(instance, group, measure, name)


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
            y_hat = np.asarray(fitted.predict(X[valid]), dtype=np.float64)
        check_predictions(f"{callpath.name} [{metric.name}]", y_hat, np.ones(int(valid.sum()), dtype=bool))
        for w in caught:
            warnings.warn(ExtrapWarning(str(w.message), callpath.name, metric.name), stacklevel=2)
        terms = tuple(getattr(fitted, "terms_", ()) or ())
        if terms and not all(isinstance(t, Term) for t in terms):
            raise PluginFault("terms_ must be a list of extrap_plugins.Term")
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


# ----------------------------------------------------------------- validation
def held_out_points(experiment: Experiment) -> np.ndarray:
    """Which measurement rows lie at the largest value of some parameter (the ones to hold out).

    Parameters with a single value are ignored.

    Returns
    -------
    ndarray of bool, shape (n_rows,)
    """
    X = np.asarray(experiment.coordinates, dtype=np.float64)
    held = np.zeros(X.shape[0], dtype=bool)
    for k in range(X.shape[1]):
        column = X[:, k]
        if np.unique(column).size > 1:
            held |= column == column.max()
    return held


def validation_errors(refitted: Sequence[Model], experiment: Experiment, held: np.ndarray,
                      measure: str) -> dict[tuple[str, str], float]:
    """Relative error of each refitted model at the held-out points, mean over those points.

    The measured value at a point is its repetitions reduced by ``measure``;
    points whose value is 0 are skipped (NaN when none is left).
    """
    test = experiment.take(held)
    by_key = {(m.callpath, m.metric): m for m in refitted}
    result: dict[tuple[str, str], float] = {}
    for group in test.series_groups():
        Y = group.reduce(measure)
        for row, (callpath, metric) in enumerate(group.keys):
            model = by_key.get((callpath.name, metric.name))
            if model is None or model.points == 0:
                continue
            with np.errstate(all="ignore"):
                predicted = np.asarray(model.predict(group.points), dtype=np.float64)
                y = Y[row]
                error = np.abs(predicted - y) / np.abs(y)
            error = error[np.isfinite(error) & (y != 0)]
            result[(callpath.name, metric.name)] = float(error.mean()) if error.size else float("nan")
    return result
