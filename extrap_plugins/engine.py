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
import errno
import fnmatch
import gc
import hashlib
import io
import numbers
import os
import pathlib
import pickle
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from . import executors
from .errors import ExtrapWarning, InputError, PluginError, QualityWarning, exit_text, none_read, skip_warnings
from .experiment import OUTLYING_FACTOR, Experiment, SeriesGroup
from .formatting import describe_inputs, format_count, format_point, format_value, format_warned
from .joining import check_selection, join_parts, select_leniently, with_rows
from .models import NO_FINITE_VALUES, Factor, Model, Quality, Segment, Term
from .quality import quality_figures
from .readers._common import SAME_BYTES, SAME_FILE, check_input_file, guarded_read, same_bytes
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
        No input, an empty name, one that does not exist, or one given twice (by any name, a hard link too).
    """
    given = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    if any(os.fspath(g) == "" for g in given):  # (pathlib takes '' for '.', the current folder)
        raise InputError("an input is '', an empty name: give a file or folder of measurements")
    paths = [pathlib.Path(p) for p in given]
    if not paths:
        raise InputError("no input given")
    shown = [os.fspath(g) for g in given]  # as the user typed it (pathlib drops ./): for messages
    seen: dict[str, int] = {}
    files: dict[tuple[int, int], int] = {}
    for k, p in enumerate(paths):
        if str(p) == "-" and not p.exists():  # (a file named - in the folder is read as any other)
            raise InputError("standard input is not read: save the measurements to a file and give its name "
                             "(a reader needs the file's name and can read it more than once)", p)
        if not p.exists():
            raise InputError("no such file or folder", p)
        check_input_file(p)
        first = seen.setdefault(os.path.realpath(p), k)
        if first != k:  # its runs would count twice, as repetitions the program never ran
            raise InputError(f"given twice (also as {shown[first]}): its measurements would count twice", shown[k])
        status = os.stat(p)
        linked = files.setdefault((status.st_dev, status.st_ino), k)
        if linked != k:  # a hard link to another input: one file under two names
            raise InputError(SAME_FILE.format(shown[linked]), shown[k])
    folders = {real: paths[k] for real, k in seen.items() if paths[k].is_dir()}
    for real, k in seen.items():  # a run inside a folder also given: the folder's reader reads it too
        above = next((folders[str(parent)] for parent in pathlib.PurePath(real).parents if str(parent) in folders),
                     None)  # (each input's own parents looked up: not every pair, 5,000 runs took 7.6 s)
        if above is not None:
            raise InputError(f"inside {above}, also given: its measurements would count twice", paths[k])
    warn_copies(paths)
    return paths


def warn_copies(paths: Sequence[pathlib.Path]) -> None:
    """Warn about an input file with the bytes of an earlier one (``week1/runs.csv`` copied into ``week2/``): its
    measurements are read again, as repetitions never run.  Files are told apart by size and a digest of their first
    64 KiB; only files alike in both are compared whole, so many inputs cost one short read each."""
    earlier: dict[tuple[int, bytes], list[pathlib.Path]] = {}
    for p in paths:
        try:
            size = p.stat().st_size if p.is_file() else 0
            if not size:
                continue
            with open(p, "rb") as file:
                key = (size, hashlib.blake2b(file.read(1 << 16), digest_size=16).digest())
        except OSError:  # (the reader says what is wrong with the file)
            continue
        copied = [e for e in earlier.get(key, []) if same_bytes(e, p)]
        if copied:
            warnings.warn(ExtrapWarning(f"{p}: {SAME_BYTES.format(copied[0])}"), stacklevel=3)
        earlier.setdefault(key, []).append(p)


def options_by_reader(infos: Sequence[ReaderInfo], options: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Each reader's share of ``--reader-option``, by reader name.  With inputs for several readers (a CUBE folder
    and a CSV file), each gets the options it declares (:attr:`ReaderInfo.options`; one declaring none gets them
    all), so ``delimiter=;`` for the CSV file is no error of the CUBE reader's.

    Raises
    ------
    InputError
        With several readers, each declaring its options, an option none of them declares.
    """
    readers = list({info.name: info for info in infos}.values())
    if len(readers) < 2:
        return {info.name: dict(options) for info in readers}
    if all(info.options for info in readers):
        unknown = [key for key in options if not any(key in info.options for info in readers)]
        if unknown:
            listed = "; ".join(f"{info.name}: {', '.join(info.options)}" for info in readers)
            raise InputError(f"--reader-option {', '.join(map(repr, unknown))}: no reader of these inputs has it; "
                             f"their options are {listed}")
    return {info.name: {k: v for k, v in options.items() if k in info.options or not info.options}
            for info in readers}


def call_reader(info: ReaderInfo, function: Callable, path, *args, host: PluginHost | None = None):
    """Call one of a reader's functions through the one guarded entry of every read.

    Bad data is an :class:`InputError` naming the file (see
    :func:`extrap_plugins.readers._common.guarded_read`; one a third-party
    reader raised without a path, as :meth:`Experiment.from_columns
    <extrap_plugins.experiment.Experiment.from_columns>` raises them, gets the
    input being read: the built-in readers name a file where they mean one,
    and leave it out of a bad option); any other failure of a
    third-party reader, ``sys.exit()`` included, and a ``read`` or ``join`` that
    returns something other than an :class:`~extrap_plugins.experiment.Experiment`
    (or ``parts`` something other than a list), is a :class:`PluginError` naming
    the reader, its plugin and its distribution (exit 3); a built-in reader's
    failure is a bug and propagates as it is (exit 1).  An Experiment with a
    parameter value that is NaN or infinite is an :class:`InputError` naming the
    input and the parameter (:func:`check_coordinates`).
    """
    inputs = describe_inputs(path)
    try:
        result = guarded_read(function, path, *args, reader=info.name)
    except InputError as error:
        if registered_plugin(host, "reader", info.name) is not None:  # (the built-in readers name what they mean)
            with_input(error, inputs)
        raise
    except PluginError:
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
    if isinstance(result, Experiment):
        check_coordinates(result, inputs, reader_label(host, info.name))
        if function is info.read and not len(result) and registered_plugin(host, "reader", info.name) is not None:
            # (the built-in readers say what they found instead; an empty table was printed, exit 0)
            raise InputError(f"no measurements: {reader_label(host, info.name)} read none", inputs or None)
    return result


def with_input(error: InputError, inputs: str) -> InputError:
    """``error`` naming ``inputs`` when it names no file (a reader's ``InputError("...")``, or one raised by
    :meth:`Experiment.from_columns <extrap_plugins.experiment.Experiment.from_columns>` inside it)."""
    if error.path is None and inputs:
        error.path = inputs
        error.args = (str(error),)
    return error


def check_coordinates(experiment: Experiment, inputs: str, reader: str = "") -> None:
    """Every parameter value a reader gave is a finite number.

    A NaN or infinite coordinate would be sorted among the points and fitted
    (a model of 5 points of which one is at p = nan is a wrong model, said
    nowhere); the built-in readers refuse such numbers themselves, so this is
    the host's check of third-party readers.  ``reader`` (``reader 'ptab'
    (plugin ... from distribution ...)``, empty for a built-in) is named in the
    message.

    Raises
    ------
    InputError
        Naming ``inputs``, the parameter, the first value that is not finite and how many measurements have one.
    """
    X = np.asarray(experiment.coordinates)
    if X.size == 0 or X.dtype.kind not in "fc":
        return
    bad = ~np.isfinite(X)
    if not bad.any():
        return
    column = int(np.flatnonzero(bad.any(axis=0))[0])
    rows = np.flatnonzero(bad[:, column])
    name = experiment.parameter_names[column]
    by = f" (as {reader} read it)" if reader else ""
    raise InputError(f"parameter {name!r} has the value {float(X[rows[0], column])} in {rows.size} of "
                     f"{format_count(X.shape[0], 'measurement')}{by}; a parameter's values must be finite numbers",
                     inputs)


def reader_label(host: PluginHost | None, name: str) -> str:
    """``reader 'ptab' (plugin hunt_reader from distribution 'hunt-plug')`` for a third-party reader, else ``""``."""
    registered = registered_plugin(host, "reader", name)
    return "" if registered is None else _who("reader", name, registered)


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


def _an(value) -> str:
    """``a str ('2.0')``: a value of the wrong type, for messages (its text cut short)."""
    text = repr(value)
    return f"{_a(value)} ({text if len(text) <= 40 else text[:37] + '...'})"


def registered_plugin(host: PluginHost | None, kind: str, name: str):
    """The registration of the third-party ``kind`` ``name`` (a :class:`~extrap_plugins.plugins.Registered`), or
    None for a built-in one; an unknown name is a third-party one of unknown origin."""
    from .plugins import BUILTIN_DISTRIBUTION, Registered, get_host

    host = host or get_host()
    table = {"reader": host.readers, "modeler": host.modelers, "exporter": host.exporters}[kind]
    registered = table.get(name)
    if registered is None:
        return Registered(None, "?", "unknown distribution")
    return None if registered.distribution == BUILTIN_DISTRIBUTION else registered


def _who(kind: str, name: str, registered) -> str:
    return f"{kind} {name!r} (plugin {registered.plugin} from distribution {registered.distribution!r})"


def plugin_failure(host: PluginHost | None, kind: str, name: str, error: BaseException,
                   where: str = "") -> PluginError | None:
    """The :class:`PluginError` for a third-party plugin's failure, or None for a built-in one (a bug of ours).

    A :class:`SystemExit` (the plugin called ``sys.exit()``) is named with the exit it attempted.  ``where``
    (`` on FILE``) defaults to what the engine noted on the exception (:func:`noted`: the series a modeler
    failed on).
    """
    registered = registered_plugin(host, kind, name)
    if registered is None:
        return None
    who = _who(kind, name, registered)
    if isinstance(error, SystemExit):
        return PluginError(f"{who}: {exit_text(error)}{where}")
    if isinstance(error, PluginFailed):
        return PluginError(f"{who} failed{error.where}: {error.what}")
    text = str(error).splitlines()[0] if str(error) else ""
    if isinstance(error, PluginFault):
        return PluginError(f"{who}: {text}")
    where = where or getattr(error, WHERE, "")
    return PluginError(f"{who} failed{where}: {type(error).__name__}{': ' + text if text else ''}")


WHERE = "extrap_plugins_where"
"""The attribute :func:`noted` sets on a plugin's exception: `` on main [time]`` (it travels back from workers
with the exception, in its ``__dict__``)."""


def noted(error: BaseException, where: str) -> BaseException:
    """``error`` with ``where`` noted for :func:`plugin_failure` (unless it has a note already)."""
    with contextlib.suppress(AttributeError, TypeError):
        if not getattr(error, WHERE, ""):
            setattr(error, WHERE, where)
    return error


class PluginFault(RuntimeError):
    """A plugin broke its contract (what it returned is wrong); the host names the plugin and its distribution."""


class PluginFailed(PluginFault):
    """A plugin's code raised in a worker (``KeyError: 'x'``): said as ``<plugin> failed<where>: <what>``, as
    :func:`plugin_failure` says an exception raised in this process (the exception itself may not pickle)."""

    def __init__(self, what: str, where: str = ""):
        self.what, self.where = what, where
        super().__init__(f"failed{where}: {what}")

    def __reduce__(self):  # survive the trip back from a worker process
        return (type(self), (self.what, self.where))


def failure_text(error: BaseException) -> str:
    """``KeyError: 'x'``: an exception's type and the first line of its text."""
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}{': ' + text if text else ''}"


FULL_DISK = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""errno of a write that failed because the file system is full, over quota or the file too large (ENOSPC,
EDQUOT, EFBIG): a write to the output, whoever wrote."""


def call_exporter(host: PluginHost | None, info, model_set, out, options: dict, path=None) -> None:
    """Run an exporter.

    A third-party exporter's failure (``sys.exit()`` too) is a :class:`PluginError` naming it (exit 3), with
    two exceptions that are the user's (exit 2): an :class:`InputError` or a ``ValueError`` (a bad option
    value, as for a modeler's factory: said as ``exporter 'NAME': ...``), and an ``OSError`` on the output
    itself: its file ``path`` (``-o``), a file inside it (a folder for ``kind="path"``), the temporary file
    the host writes for it (``out.name``), or a full disk.  An ``OSError`` on any other file is the plugin's
    failure: the user never named that file.  A built-in exporter's failures pass as they are.
    """
    try:
        info.export(model_set, out, options)
    except (InputError, PluginError):
        raise
    except (Exception, SystemExit) as error:
        registered = registered_plugin(host, "exporter", info.name)
        if registered is None:
            raise
        if isinstance(error, OSError) and _on_output(error, out, path):
            if path is not None and not isinstance(out, os.PathLike) and error.filename is not None:
                # the temporary file: named as -o, as the host names its own errors there (files.atomic_writer)
                raise OSError(error.errno, error.strerror or str(error), os.fspath(path)) from None
            raise
        if isinstance(error, ValueError):
            raise InputError(f"exporter {info.name!r}: {error}") from error
        raise plugin_failure(host, "exporter", info.name, error) from error


def _on_output(error: OSError, out, path) -> bool:
    """Whether ``error`` happened on the output: see :func:`call_exporter`."""
    filename = error.filename
    if filename is None:
        return error.errno in FULL_DISK
    try:
        where = os.path.realpath(os.fspath(filename))
    except (TypeError, ValueError):
        return False
    outputs = [os.fspath(p) for p in (path, out if isinstance(out, os.PathLike) else None,
                                       getattr(out, "name", None)) if isinstance(p, (str, os.PathLike))]
    for output in outputs:
        real = os.path.realpath(output)
        if where == real or where.startswith(real.rstrip(os.sep) + os.sep):
            return True
    try:  # the temporary file the host opened for -o (a stream of a file descriptor has no name)
        opened, named = os.fstat(out.fileno()), os.stat(where)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)


def check_models(fitted: Sequence, group: SeriesGroup, name: str) -> list[np.ndarray | None]:
    """Check what a modeler returned for a group before anything is shown or exported.

    One :class:`~extrap_plugins.models.Model` per series, in order, each for
    its own call path and metric, over the experiment's parameters only:
    its terms :class:`~extrap_plugins.models.Term` objects whose factors are
    :class:`~extrap_plugins.models.Factor` objects, and its constant,
    coefficients and exponents real numbers (not text), finite wherever the
    series has values.  A model with its own ``predictor`` is evaluated at the
    group's points: it must not raise, must return one value per point, and a
    finite one at every point where the series has a value.

    Returns
    -------
    list
        Per series, the predictions at the group's points of a model with its own ``predictor`` (None for the
        others), as evaluated here.

    Raises
    ------
    PluginFault
        Naming the first series that is wrong and what is wrong with it (the modeler is named by the caller).
    """
    if len(fitted) != len(group):
        raise PluginFault(f"returned {len(fitted)} models for {len(group)} series")
    known = {p.name for p in group.parameters}
    predictions: list[np.ndarray | None] = []
    for i, (m, (callpath, metric)) in enumerate(zip(fitted, group.keys)):
        series = f"{callpath.name} [{metric.name}]"
        if not isinstance(m, Model):
            raise PluginFault(f"returned a {type(m).__name__} for {series}, expected an extrap_plugins.Model")
        if (m.callpath, m.metric) != (callpath.name, metric.name):
            raise PluginFault(f"returned a model for {m.callpath} [{m.metric}] in place of {series}")
        measured = np.isfinite(group.values[i]).any(axis=-1)
        problem = model_problem(m, known, has_values=bool(measured.any()))
        if problem:
            raise PluginFault(f"{series}: {problem}")
        predicted = None
        if measured.any() and m.predictor is not None:
            try:
                predicted = np.asarray(m.predictor(np.array(group.points, dtype=np.float64)), dtype=np.float64)
            except Exception as error:  # the predictor is the plugin's code: its failure is the plugin's fault
                raise PluginFault(f"{series}: predict failed: {type(error).__name__}: {error}") from error
            check_predictions(series, predicted, measured)
        predictions.append(predicted)
    return predictions


def model_problem(m: Model, known: set[str], has_values: bool = True) -> str | None:
    """What is wrong with the formula of a model a modeler returned (None: nothing), as the end of a sentence
    (``the coefficient of term 1 is a str ('2.0'), expected a real number``).

    The terms (and segments) must be what :mod:`extrap_plugins.models` defines, over the parameters ``known``;
    the constant, the coefficients and the exponents real numbers, finite when the series ``has_values``.
    """
    parts: list[tuple[str, Any, Sequence]] = [("", m.constant, m.terms)]
    if m.segments is not None:
        if not isinstance(m.segments, (list, tuple)):
            return f"segments is {_an(m.segments)}, expected a tuple of extrap_plugins.Segment"
        for k, segment in enumerate(m.segments, 1):
            if not isinstance(segment, Segment):
                return f"segment {k} is {_an(segment)}, expected an extrap_plugins.Segment"
            parts.append((f" of segment {k}", segment.constant, segment.terms))
    numbers_: list[tuple[str, Any]] = []
    for of, constant, terms in parts:
        numbers_.append((f"the constant{of}", constant))
        if not isinstance(terms, (list, tuple)):
            return f"the terms{of} are {_an(terms)}, expected a tuple of extrap_plugins.Term"
        for t, term in enumerate(terms, 1):
            problem = _term_problem(term, f"term {t}{of}", known, numbers_)
            if problem:
                return problem
    for what, value in numbers_:
        if not _is_real(value):
            return f"{what} is {_an(value)}, expected a real number"
    if has_values:
        for what, value in numbers_:
            if not np.isfinite(float(value)):
                return f"{what} is {float(value)}, expected a finite number"
    return None


def _term_problem(term, at: str, known: set[str], numbers_: list[tuple[str, Any]]) -> str | None:
    """What is wrong with one term (``at``: ``term 2 of segment 1``), its numbers added to ``numbers_``."""
    if not isinstance(term, Term):
        return f"{at} is {_an(term)}, expected an extrap_plugins.Term"
    numbers_.append((f"the coefficient of {at}", term.coefficient))
    if not isinstance(term.factors, Mapping):
        return (f"the factors of {at} are {_an(term.factors)}, expected a mapping of parameter names to "
                "extrap_plugins.Factor")
    unknown = sorted(map(str, set(term.factors) - known))
    if unknown:
        return (f"a term uses {', '.join(map(repr, unknown))}, which is not a parameter "
                f"(the parameters are {', '.join(sorted(known)) or 'none'})")
    for parameter, factor in term.factors.items():
        if not isinstance(factor, Factor):
            return f"the factor of {parameter!r} in {at} is {_an(factor)}, expected an extrap_plugins.Factor"
        numbers_.append((f"the exponent of {parameter!r} in {at}", factor.exponent))
        numbers_.append((f"the log exponent of {parameter!r} in {at}", factor.log_exponent))
    return None


def _is_real(value) -> bool:
    """A real number (int, float, numpy's), not a bool nor text."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


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


def folder_files(paths: Sequence[pathlib.Path], host: PluginHost, reader: str | None = None) -> list[pathlib.Path]:
    """The inputs, each folder that no reader of folders reads standing for its files that one reader of one file
    reads by name, in name order: a sweep's runs as CSV or JSON Lines files, one file a run (given one by one,
    100,000 of them pass the shell's limit). Its other files are left out with one warning naming them; a folder
    with no such files, or files of several formats (hardly the runs of one sweep), stays, for
    :func:`select_reader` to say so."""
    found: list[pathlib.Path] = []
    for path in paths:
        if not path.is_dir() or _reads_folder(path, host, reader):
            found.append(path)
            continue
        readers = [host.reader(reader)] if reader else [r.info for r in host.readers.values() if not r.info.directories]
        files = sorted(f for f in path.iterdir() if f.is_file() and not f.name.startswith("."))
        formats = {f: {info.name for info in readers
                       if any(fnmatch.fnmatch(f.name.lower(), pattern.lower()) for pattern in info.patterns)}
                   for f in files}
        taken = [f for f in files if formats[f]]
        if not taken or len(set().union(*formats.values())) > 1:  # files of several formats: hardly one sweep
            found.append(path)
            continue
        others = [f.name for f in files if not formats[f]]
        if others:
            shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
            warnings.warn(ExtrapWarning(f"{path}: {format_count(len(others), 'file')} no reader reads by "
                                        f"{'its' if len(others) == 1 else 'their'} name left out of the folder's "
                                        f"runs: {shown}"), stacklevel=2)
        found += taken
    return found


def _reads_folder(path: pathlib.Path, host: PluginHost, reader: str | None) -> bool:
    """Whether a reader of folders reads ``path`` (``reader``, or one whose pattern or sniff takes it)."""
    if reader:
        return host.reader(reader).directories
    name = path.name.lower()
    return any(any(fnmatch.fnmatch(name, pattern.lower()) for pattern in info.patterns)
               or (info.sniff is not None and _safe_sniff(info, path, host))
               for info in (r.info for r in host.readers.values() if r.info.directories))


def select_reader(path: pathlib.Path, host: PluginHost) -> ReaderInfo:
    """Choose the reader for ``path``: by file-name pattern, then by sniffing the content (of the readers the name
    fits when several do, and of every other reader when none of those recognises it)."""
    readers = [r.info for r in host.readers.values()]
    if path.is_dir():
        readers = [r for r in readers if r.directories]
    name = path.name.lower()
    by_name = [r for r in readers if any(fnmatch.fnmatch(name, p.lower()) for p in r.patterns)]
    if len(by_name) == 1:
        return by_name[0]
    candidates = by_name or readers
    by_content = [r for r in candidates if r.sniff is not None and _safe_sniff(r, path, host)]
    if not by_content and by_name:  # named as one format, written in another (a CSV table called results.txt)
        by_content = [r for r in readers if r not in by_name and r.sniff is not None and _safe_sniff(r, path, host)]
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
    """Read the runs of one input in parallel; skip (and warn about) bad runs.

    ``selection`` is ``(metrics, callpaths)`` to apply in the workers for
    readers that do not select themselves, so unselected values never
    travel back.  ``progress`` is told ``(0, n_runs)`` once the reader has
    listed its runs, then ``(1, 0)`` as each run is read (or skipped).

    Raises
    ------
    PluginError
        A third-party reader whose ``read_part`` fails on a run, or that cannot be sent to worker processes
        (:func:`check_sendable`).
    """
    source = describe_inputs(path)
    parts = call_reader(info, info.parts, path, path, options, host=host)
    if not parts:
        raise InputError(f"no runs found for the {info.name} reader", source)
    kind = executors.resolve(executor, len(parts))
    if kind != "serial":
        check_sendable(info, parts, host)
    experiments, skipped = [], []
    if progress is not None:
        progress(0, len(parts))
    reader = reader_label(host, info.name)
    with executors.create_executor(kind, jobs) as pool, reader_guard(host, info.name):
        tasks = ((info.read_part, part, options, selection, reader) for part in parts)
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


SERIAL_ADVICE = "or use --executor serial"
"""How to do without worker processes (:func:`check_sendable`, :data:`PICKLABLE_MODELER`)."""


def check_sendable(info: ReaderInfo, parts: Sequence, host: PluginHost | None = None,
                   function: str = "read_part") -> None:
    """Before reading runs in worker processes: the reader's ``function`` (``read_part``, or ``read`` where
    streaming reads whole inputs in the workers) and its runs can be sent to them.

    A lambda, a closure or a local function cannot be pickled; sending it would fail in the pool, as an internal
    error.  A third-party reader's is the plugin's fault (exit 3), saying what ``function`` must be and that
    ``--executor serial`` reads without workers; a built-in reader's is a bug (the pickling error as it is).

    Raises
    ------
    PluginError
        Naming the reader, its plugin and distribution, and what cannot be sent.
    """
    try:
        pickle.dumps(getattr(info, function))
    except Exception as error:
        fault = PluginFault(f"{function} cannot be sent to worker processes ({failure_text(error)}): it must be a "
                            f"module-level function, not a lambda, a closure or a local function; {SERIAL_ADVICE}")
        failure = plugin_failure(host, "reader", info.name, fault)
        if failure is None:
            raise
        raise failure from error
    try:
        pickle.dumps(list(parts))
    except Exception:
        for part in parts:
            try:
                pickle.dumps(part)
            except Exception as error:
                fault = PluginFault(f"parts returned a run that cannot be sent to worker processes, {_an(part)} "
                                    f"({failure_text(error)}): each run must be picklable (a path, a str, a tuple); "
                                    f"{SERIAL_ADVICE}")
                failure = plugin_failure(host, "reader", info.name, fault)
                if failure is None:
                    raise
                raise failure from error
        raise


def read_one_part(task) -> tuple[Any, InputError | PluginFault | None, list[Warning]]:
    """Read one part in a worker: ``(result, error, warnings)``, never an exception.

    ``task`` is ``(read_part, part, options)``, ``(read_part, part, options,
    selection)`` with ``selection`` ``(metrics, callpaths)`` (or None)
    applied here for readers that do not select themselves, or that and
    ``reader``, how messages name a third-party reader (:func:`reader_label`).

    A bad run comes back as an :class:`InputError` naming it (one a
    third-party reader raised without a path gets the run's; a parameter value that is not finite is
    one, :func:`check_coordinates`), to be skipped with a warning; warnings
    come back to be shown once each.  Any other exception is a failure of
    the reader's code: a third-party reader's comes back as a
    :class:`PluginFailed` (exit 3, naming the reader, the run and the
    exception), and so does a ``sys.exit()`` or a result that is not an
    Experiment, which :func:`report_parts` raises (:func:`reader_guard`
    names the reader).  The built-in readers' own code (:func:`ours`) failing
    on one run is that run skipped with a warning (``reading failed
    (KeyError: ...)``), so that one odd file among thousands cannot end a
    long sweep.
    """
    read_part, part, options = task[:3]
    selection = task[3] if len(task) > 3 else None
    reader = task[4] if len(task) > 4 else ""
    with warnings.catch_warnings(record=True) as caught, collector_paused():
        warnings.simplefilter("always")
        where = str(getattr(part, "path", part))
        try:
            result, error = guarded_read(read_part, where, part, options), None
        except InputError as problem:
            result, error = None, problem if ours(read_part) else with_input(problem, where)
        except Exception as problem:  # noqa: BLE001 - the reader's failure: whose code, decides what comes of it
            if ours(read_part):
                result, error = None, InputError(f"reading failed ({type(problem).__name__}: {problem})", where)
            else:
                result, error = None, PluginFailed(failure_text(problem), f" on {where}")
        except SystemExit as problem:  # not an end of this worker, nor of the command: the plugin's fault
            result, error = None, PluginFault(f"{exit_text(problem)} on {where}")
    if error is None and not isinstance(result, Experiment):
        result, error = None, PluginFault(f"returned {_a(result)} for {where}, expected an "
                                          "extrap_plugins.Experiment")
    if error is None:
        try:
            check_coordinates(result, where, reader)
        except InputError as problem:
            result, error = None, problem
    if result is not None and selection is not None:
        result = select_leniently(result, *selection)
    return result, error, [portable_warning(w.message) for w in caught]


def ours(function: Callable) -> bool:
    """Whether ``function`` is this package's code (a built-in reader's), not a plugin's."""
    while hasattr(function, "func"):  # functools.partial
        function = function.func
    module = getattr(function, "__module__", None) or ""
    return module == "extrap_plugins" or module.startswith("extrap_plugins.")


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

    With worker processes, a third-party modeler object that cannot be
    pickled is refused before any work, and models that cannot be sent back
    are said as such (:data:`PICKLABLE_MODELER`).
    """
    kind = executors.resolve(executor, n_blocks)
    fit = fit or fit_block
    models: list[Model] = []
    caught: list[Warning] = []
    third_party = registered_plugin(host, "modeler", name) is not None
    with executors.create_executor(kind, jobs, preload=MODELLING_IMPORTS) as pool, modeler_guard(host, name):
        if kind != "serial" and third_party:
            try:
                pickle.dumps(instance)
            except Exception as error:
                raise PluginFault(f"the modeler object cannot be sent to worker processes ({failure_text(error)}): "
                                  f"{PICKLABLE_MODELER}") from error
        done = (lambda result: progress(len(result[0]))) if progress is not None else None
        tasks = ((instance, block, measure, name) for block in blocks)
        try:
            for fitted, warned in executors.map_ordered(pool, fit, tasks, on_done=done):
                caught.extend(warned)
                models.extend(fitted)
        except Exception as error:
            if kind != "serial" and third_party and unpicklable(error):
                raise PluginFault(f"the models it returned cannot be sent back from worker processes "
                                  f"({failure_text(error)}): {PICKLABLE_MODELER}") from error
            raise
    warn_per_cause(caught, stacklevel=3, said=said)
    return models


PICKLABLE_MODELER = ("with --executor process or mpi, which --executor auto chooses for large inputs, the modeler "
                     "and the models it returns (a predictor too) must be picklable: use module-level classes and "
                     f"functions, not lambdas, closures or local classes; {SERIAL_ADVICE}")
"""What a modeler that cannot be sent to or from worker processes must be (:func:`fit_blocks`,
:func:`modeler_guard`)."""


def unpicklable(error: BaseException) -> bool:
    """Whether ``error`` says that something could not be pickled (to send it to or from a worker process)."""
    return isinstance(error, pickle.PicklingError) or (
        isinstance(error, (AttributeError, TypeError)) and "pickle" in str(error).lower())


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


FIGURE = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
"""A number in a warning's text (``34``, ``19.0``, ``1e-05``), not part of a name (``x1``, ``run2.csv``): what
:func:`cause_apart_from_figures` leaves out."""


def cause_apart_from_figures(text: str) -> str:
    """A cause's text with its numbers as ``#``: the causes of one series each that differ only in their figures
    (``the 34 hypotheses ... predict 0 or less at about p=98`` and ``... the 33 hypotheses ... at about p=140``)
    are one kind, which the command line shows as one line (:class:`~extrap_plugins.cli.WarningLines`).

    >>> cause_apart_from_figures("the 34 hypotheses ... at about p=98 (from p=93 on)")
    'the # hypotheses ... at about p=# (from p=# on)'
    """
    return FIGURE.sub("#", text)


@contextlib.contextmanager
def modeler_guard(host: PluginHost | None, name: str) -> Iterator[None]:
    """A third-party modeler that raises, calls ``sys.exit()`` (in this process or, coming back through the
    executor, in a worker), returns what :func:`check_models` refuses, or cannot be sent to or from worker
    processes (:data:`PICKLABLE_MODELER`), is a PluginError naming it (and the series it failed on, where
    :func:`noted`)."""
    try:
        yield
    except (InputError, PluginError, executors.WorkerLost):
        raise
    except (Exception, SystemExit) as error:
        if unpicklable(error) and not isinstance(error, PluginFault):  # (only worker processes pickle)
            error = PluginFault(f"the modeler or its models cannot be sent between worker processes "
                                f"({failure_text(error)}): {PICKLABLE_MODELER}")
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
    predictions = check_models(fitted, group, name)
    ranges, non_negative = measured_extent(group)
    for m, span, sign in zip(fitted, ranges, non_negative):
        m.modeler = m.modeler or name
        if not m.measured_range:
            m.measured_range, m.non_negative = span, sign
    warned = [series_warning(w.message, group) for w in caught]
    return fitted, warned + outlying_notes(fitted, group, measure) + negative_where_positive(
        fitted, group, measure, name, predictions)


def outlying_notes(fitted: list[Model], group: SeriesGroup, measure: str, shown: int = 4) -> list[Warning]:
    """A :class:`QualityWarning` for each series whose mean left out :func:`~extrap_plugins.experiment.outlying`
    repetitions, naming each one's point and place among the point's runs (``p=32, run 3 of 5``), so that the
    series one slow run spoilt share one warning line; the note is added to the model's ``warnings``."""
    if measure != "mean":
        return []
    far = group.outlying()
    if not far.any():
        return []
    said: list[Warning] = []
    names = [p.name for p in group.parameters]
    runs = np.sum(~np.isnan(group.values), axis=2)
    for i in np.flatnonzero(far.any(axis=(1, 2))):
        cells = np.argwhere(far[i])
        listed = "; ".join(f"{format_point(group.points[j], names)}, run {r + 1} of {runs[i, j]}"
                           for j, r in cells[:shown])
        more = f"; and {len(cells) - shown} more" if len(cells) > shown else ""
        one = len(cells) == 1
        note = (f"{'a run' if one else f'{len(cells)} runs'} {format_value(OUTLYING_FACTOR)}x or more off the others "
                f"at {'its point is' if one else 'their points are'} left out of the mean (a slow node, a timer "
                f"glitch? --measure median keeps every run): {listed}{more}")
        m = fitted[i]
        m.warnings = (*tuple(m.warnings or ()), note)
        said.append(QualityWarning(note, m.callpath, m.metric))
    return said


NEGATIVE = "the model of modeler {!r} is negative at measured points, though every measured value is positive"
"""The quality warning of a model below 0 where its series was measured above 0 (:func:`negative_where_positive`)."""


def negative_where_positive(fitted: list[Model], group: SeriesGroup, measure: str, name: str,
                            predictions: Sequence[np.ndarray | None]) -> list[Warning]:
    """A :class:`QualityWarning` naming the series and the modeler (:data:`NEGATIVE`) for each model that is
    negative at a point where its series was measured, when every measured value of that series is positive (a
    time or a count below 0 cannot be right); the note is added to the model's ``warnings``.

    Only models that can be negative there are evaluated: one whose SMAPE at its points is below ``200 / n``
    % cannot be (a negative prediction of a positive value is a 200 % miss at that point), nor one whose
    predictions :func:`check_models` made already are all 0 or more.
    """
    threshold = 200.0 / max(len(group.points), 1) * (1 - 1e-9)
    candidates = [i for i, m in enumerate(fitted)
                  if (predictions[i] is not None and (predictions[i] < 0).any())
                  or (predictions[i] is None and not (_smape(m) < threshold))]
    if not candidates:
        return []
    Y = group.reduce(measure)
    X = np.asarray(group.points, dtype=np.float64)
    said: list[Warning] = []
    for i in candidates:
        y, m = Y[i], fitted[i]
        finite = np.isfinite(y)
        if not finite.any() or not (y[finite] > 0).all():
            continue
        predicted = predictions[i]
        if predicted is None:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                predicted = np.asarray(m.predict(X), dtype=np.float64)
        if (predicted[finite] < 0).any():
            note = NEGATIVE.format(name)
            m.warnings = (*tuple(m.warnings or ()), note)
            said.append(QualityWarning(note, m.callpath, m.metric))
    return said


def _smape(m: Model) -> float:
    """A model's SMAPE at its points (NaN where its modeler gave none, or something else)."""
    try:
        return float(m.quality.smape)
    except (AttributeError, TypeError, ValueError):
        return float("nan")


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
        try:
            return list(instance.fit_group(group, measure=measure))
        except Exception as error:  # the modeler's failure: the series it failed on, for the message
            noted(error, f" on {group_text(group)}")
            raise
    return fit_per_series(instance, group, measure, name)


def group_text(group: SeriesGroup) -> str:
    """``main [time]``, or ``7 series fitted together, from main [time]``: the series of a group, for messages."""
    if not len(group):
        return "no series"
    callpath, metric = group.keys[0]
    first = f"{callpath.name} [{metric.name}]"
    return first if len(group) == 1 else f"{len(group)} series fitted together, from {first}"


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
        series = f"{callpath.name} [{metric.name}]"
        fitted = copy.deepcopy(estimator)
        valid = np.isfinite(y)
        if not valid.any():  # nothing to fit: the plugin is not to blame for what it makes of no values
            models.append(Model.missing(callpath.name, metric.name, parameters, name))
            warnings.warn(QualityWarning(NO_FINITE_VALUES, callpath.name, metric.name), stacklevel=2)
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                fitted.fit(X[valid], y[valid])
                y_hat = np.asarray(fitted.predict(X[valid]), dtype=np.float64)
            except Exception as error:  # the modeler's failure: the series it failed on, for the message
                noted(error, f" on {series}")
                raise
        check_predictions(series, y_hat, np.ones(int(valid.sum()), dtype=bool))
        for w in caught:
            warnings.warn(ExtrapWarning(str(w.message), callpath.name, metric.name), stacklevel=2)
        terms = getattr(fitted, "terms_", None) or ()
        if not isinstance(terms, (list, tuple)):
            raise PluginFault(f"{series}: terms_ is {_an(terms)}, expected a list of extrap_plugins.Term")
        terms = tuple(terms)
        wrong = next((t for t in terms if not isinstance(t, Term)), None)
        if wrong is not None:
            raise PluginFault(f"{series}: terms_ holds {_an(wrong)}, expected extrap_plugins.Term objects")
        has_formula = hasattr(fitted, "constant_")
        if has_formula and not _is_real(fitted.constant_):
            raise PluginFault(f"{series}: constant_ is {_an(fitted.constant_)}, expected a real number")
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
