"""The objects a plugin returns from its hooks to register what it provides.

A plugin module implements one or more of the hooks in
:mod:`extrap_plugins.hookspecs` and returns a list of these frozen
dataclasses.  The host alone decides about duplicate names and records which
distribution provided what.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Mapping

from .experiment import Experiment
from .models import ModelSet


@dataclass(frozen=True)
class ReaderInfo:
    """A reader: turns a file or folder into an :class:`~extrap_plugins.experiment.Experiment`.

    Attributes
    ----------
    name : str
        What users pass to ``--reader``: non-empty, no spaces around it.
    read : callable ``(path: pathlib.Path, options: dict[str, str]) -> Experiment``
        Reads one input.  Raises :class:`~extrap_plugins.errors.InputError`
        naming the file and line (or row) for bad input (one raised without a
        path, such as :meth:`Experiment.from_columns
        <extrap_plugins.experiment.Experiment.from_columns>`'s, gets the
        input's name from the host).  ``options`` holds
        the ``--reader-option KEY=VALUE`` pairs; a reader rejects keys it
        does not know with an ``InputError`` listing the ones it does.
        Returning anything but an Experiment (``None``, a str), raising any
        other exception or calling ``sys.exit()`` is a broken plugin (exit 3,
        naming the reader, its plugin, distribution and the input);
        the same holds for ``read_part`` (naming the run) and ``join``.  A
        parameter value that is NaN or infinite in what a reader returns is
        bad input (exit 2, naming the input, the parameter and the reader).
        May be None for a reader with ``parts`` and ``read_part``.
    patterns : tuple of str
        File-name globs (``"*.jsonl"``) this reader claims; matched against
        the base name, case-insensitively.
    sniff : callable ``(path: pathlib.Path) -> bool``, optional
        Looks at the content (first bytes, a folder's entries) and says
        whether this reader can read it; must be cheap and never raise.
    directories : bool
        Whether the reader accepts a folder as input.  A folder given to a
        reader without (also one named with ``--reader``) is bad input
        (``FOLDER: is a folder; the NAME reader reads one file``, exit 2):
        the reader is never called with it.
    options : mapping of option name to help text
        The ``--reader-option`` keys ``read`` knows, each with one line of
        help; ``extrap-plugins plugins NAME`` shows them.
    parts : callable ``(path, options) -> list``, optional
        For inputs made of independent runs (a folder of profiles): the list
        of runs, each a picklable description (usually a path).  When the
        user gives several inputs for this reader, ``path`` is the list of
        them, to be read as one set.  The host
        then reads them with ``read_part`` through the chosen executor, in
        parallel, skips a run that raises ``InputError`` with a warning
        naming it, and joins the rest with ``join`` (default
        :func:`extrap_plugins.joining.join_parts`).  A run on which
        ``read_part`` raises anything else is not skipped: that is a bug,
        and a broken plugin (exit 3, naming the run and the exception).
        Only the built-in readers skip a run their own code fails on (with
        the warning ``skipped: RUN: reading failed (KeyError: ...)``), so
        that one odd file among thousands of a sweep cannot end it.
    read_part : callable ``(part, options) -> Experiment``, optional
        Reads one run from ``parts``; must be a module-level function.  With
        ``--executor process`` or ``mpi`` (which ``--executor auto`` chooses
        for more than four runs, given more than one core) ``read_part`` and
        the runs ``parts`` returns are pickled and sent to worker processes:
        a lambda, a closure or a run holding a lock or an open file is
        refused before reading, as a broken plugin (exit 3) that says so;
        ``--executor serial`` sends nothing.
    join : callable ``(experiments, path, options) -> Experiment``, optional
        Joins the runs read by ``read_part`` (in the order of ``parts``), in
        the main process; default :func:`extrap_plugins.joining.join_parts`.  A reader
        uses it for checks across runs (call paths found in only some runs)
        and to issue warnings its workers could only record.  When streaming
        (``--stream on``, :mod:`extrap_plugins.streaming`) it is called too,
        once, in the main process, with the same ``path`` and ``options`` but a
        *stand-in* for each run read (:func:`~extrap_plugins.streaming.stand_in`):
        the run's parameters, the metrics it names (with values or not),
        notes, constants and source, and one row per distinct point and
        repetition of the run and metric with values in it (ordered by point,
        repetition, then metric as the run names them), all on the run's
        first call path and valued 0.  So it must decide from the metadata,
        the metrics and the coordinates only, never from values or call paths.
        What it returns for the stand-ins is followed as in memory: the
        parameters it chose, each point's coordinates (which must be the same
        for every repetition and metric of one point of a run), the repetition
        numbers it gives (those of each point and repetition's first row), its
        metrics (units, :attr:`~extrap_plugins.experiment.Metric.values`, order),
        its warnings and the ``InputError`` it raises.  It must keep the
        rows: as many, in their order, each with its call path's and metric's
        name; a join that adds, drops or reorders rows or renames a call path
        or metric cannot be followed without the values and is refused (exit 2,
        "... cannot be streamed ...; model them with --stream off").  When
        streaming a reader with ``omits_zeros`` it is not called: the host
        joins the runs as such a join does (see ``omits_zeros``).
    filters : bool
        Whether the reader applies the selection itself: ``options`` then
        holds ``"metrics"`` and ``"callpaths"`` as tuples of str (names and
        globs; empty means all), and values outside them are never
        materialised.  Otherwise the host selects after reading.
    omits_zeros : bool
        Whether runs leave zero values out, as CUBE files do.  When the host
        joins runs itself (streaming, see :mod:`extrap_plugins.streaming`,
        where ``join`` is not called), a (call path, metric) series with a
        value in some run is then 0 in a run that has values for that call
        path and for that metric but none for the pair, and call paths or
        metrics found in only some runs are reported as warnings, as
        :func:`extrap_plugins.streaming.omitted_zeros` and
        :func:`~extrap_plugins.streaming.coverage_findings` do.  A reader
        with a ``join`` and ``omits_zeros`` joins the same way (by calling
        those two functions), so streaming gives the same models.
    """

    name: str
    read: Callable[[pathlib.Path, dict[str, str]], Experiment]
    description: str = ""
    patterns: tuple[str, ...] = ()
    sniff: Callable[[pathlib.Path], bool] | None = None
    directories: bool = False
    options: Mapping[str, str] = field(default_factory=dict)
    parts: Callable[[pathlib.Path, dict], list[Any]] | None = None
    read_part: Callable[[Any, dict], Experiment] | None = None
    join: Callable[[list[Experiment], pathlib.Path, dict], Experiment] | None = None
    filters: bool = False
    omits_zeros: bool = False


@dataclass(frozen=True)
class ModelerInfo:
    """A modeler: learns one model per series.

    Attributes
    ----------
    name : str
        What users pass to ``--modeler``: non-empty, no spaces around it.
    factory : callable ``(**options) -> modeler``
        Builds a modeler from keyword options (``--option KEY=VALUE``; values
        arrive as int, float, bool or str).  A factory with a ``parameters``
        argument also receives the experiment's parameter names, in order.
        A factory raises ``ValueError`` for a bad option value, with a message
        that says what was expected.  A keyword without a default is an
        option the user must give: the host names it when it is missing.  The object it returns is either

        * batched: it has ``fit_group(group: SeriesGroup, *, measure: str)
          -> list[Model]``, one model per series of the group, in order; or
        * per series, in the scikit-learn style: ``fit(X, y) -> self`` with
          ``X`` of shape (n_points, n_params) and ``y`` of shape (n_points,),
          and ``predict(X) -> ndarray of shape (n_points,)``.  It may set
          ``constant_`` and ``terms_`` (a list of
          :class:`~extrap_plugins.models.Term`) for a PMNF formula, or
          ``formula_`` (text).  The host adapts it: it loops over the
          series, computes quality figures and builds the models.

        What the modeler returns is checked before anything is shown
        (:func:`extrap_plugins.engine.check_models`): its terms must be
        :class:`~extrap_plugins.models.Term` objects whose factors are
        :class:`~extrap_plugins.models.Factor` objects, its constant,
        coefficients and exponents real numbers (not text), finite where
        the series has values; a model with its own
        ``predictor`` is evaluated at the measured points there, and must
        return one value per point, finite wherever the series has a value.
        A modeler (or factory) that raises, calls ``sys.exit()`` (also in a
        worker process) or fails these checks is a broken plugin (exit 3);
        the message names the series (``failed on main [time]: ...``,
        ``main [time]: the coefficient of term 1 is nan, expected a finite
        number``).  A model that is negative at a measured point of a series
        whose measured values are all positive is a
        :class:`~extrap_plugins.errors.QualityWarning` naming the series and
        the modeler.

        The modeler object and the models it returns (a ``predictor`` too)
        must be picklable: with ``--executor process`` or ``mpi`` they are
        sent to and from worker processes, and ``--executor auto`` (the
        default) chooses processes by itself for large inputs (more than
        four blocks of about 1,024 series, given more than one core), so a
        modeler that works on a small input can fail on a large one.  Use
        module-level classes and functions, not lambdas, closures or local
        classes; a ``predictor`` that needs data is an instance of a
        module-level class with ``__call__``.  With worker processes, the
        host refuses a modeler object that cannot be pickled before
        fitting, and models that cannot be sent back, as a broken plugin
        (exit 3) whose message says so and suggests ``--executor serial``.
    options : mapping of option name to help text
        The ``--option`` keys, each with one line of help; ``extrap-plugins
        plugins NAME`` shows them.  They must be the keywords ``factory``
        takes (``parameters`` and ``host`` aside, which the host passes):
        the host rejects an option the factory does not take, and
        ``extrap-plugins plugins`` warns, naming the modeler, where the two
        disagree, and where an option has the name of an argument of a
        command that hands the other ``--option`` values to the modeler
        (``tolerance`` of ``suggest``, ``level`` of ``efficiency``): it cannot
        be given to that command.  A factory with ``**options`` takes any
        key, so only its documented keys guide the user.
    """

    name: str
    factory: Callable[..., Any]
    description: str = ""
    options: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ExporterInfo:
    """An exporter: writes a :class:`~extrap_plugins.models.ModelSet`.

    Attributes
    ----------
    name : str
        What users pass to ``--export``: non-empty, no spaces around it.
    export : callable ``(model_set: ModelSet, out, options: dict[str, str]) -> None``
        With ``kind="text"``, ``out`` is a text stream (stdout or a file the
        host opens and replaces atomically); with ``kind="path"``, ``out`` is
        the ``pathlib.Path`` given with ``-o`` (a file or folder the exporter
        writes itself), and ``-o`` is required.

        ``options`` holds the ``--export-option KEY=VALUE`` pairs plus the
        options common to every exporter: ``target`` and ``sort`` (also
        given as ``--target`` and ``--sort``), ``values`` and ``level``.  An
        exporter accepts those four keys, even when it ignores them (it must
        not reject them as unknown), and can pass them to
        :func:`extrap_plugins.extrapolate` (``extrapolate(model_set,
        options.get("target"), sort=options.get("sort"), ...)``) to show
        values at the target as the built-in exporters do.  Any other key
        is one of ``options`` below, or the host refuses it before the
        export runs (before reading, on the command line; exit 2, listing
        the known ones).  A bad option value is the user's mistake: raise
        :class:`~extrap_plugins.errors.InputError` saying what was expected,
        or a ``ValueError`` (reported as ``exporter 'NAME': ...``, as for a
        modeler's factory); exit 2.  An ``OSError`` is the user's only when
        it is on the output (``-o``, a file inside it for ``kind="path"``,
        the temporary file the host writes it through) or the disk is full;
        on any other file it is a broken plugin.  An exporter that raises
        anything else or calls ``sys.exit()`` is a broken plugin (exit 3).
    kind : {"text", "path"}
        What ``out`` is (see ``export``); any other kind is refused at registration.
    extension : str
        The usual file extension, for messages and defaults (``".json"``); ``-o`` with it chooses this exporter.
    extensions : tuple of str
        Other file extensions ``-o`` chooses this exporter by (the formats it also writes: ``plot``'s ``.svg``
        and ``.pdf``).
    folder : bool
        With ``kind="path"``: whether ``-o`` may name a folder the exporter writes its files into (``plot``);
        False for an exporter that writes one file itself (``extra-p``), so that a folder, or a name ending in
        ``/``, is refused before any reading or modelling.
    options : mapping of option name to help text
        The exporter's own ``--export-option`` keys (not the common four),
        each with one line of help; ``extrap-plugins plugins NAME`` shows them.
    """

    name: str
    export: Callable[[ModelSet, IO[str] | pathlib.Path, dict[str, str]], None]
    description: str = ""
    kind: str = "text"
    extension: str = ""
    options: Mapping[str, str] = field(default_factory=dict)
    extensions: tuple[str, ...] = ()
    folder: bool = True
