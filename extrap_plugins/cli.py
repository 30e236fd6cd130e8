"""The command line: ``extrap-plugins model|plugins|suggest|run|requirements|whatif|efficiency|compare``.

Every command is one API call plus argument parsing and printing.
:func:`main` handles errors around :func:`program`, which does the work.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import sys
import warnings
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from . import api
from .errors import ExitStatus, ExtrapError, InputError, PluginError, QualityWarning, RunsFailed
from .executors import EXECUTORS, MPI_LAUNCH, WorkerLost, end_mpi_job
from .experiment import MEASURES
from .exporters.json_exporter import JSON_VERSION, JSON_VERSIONS
from .formatting import WARNINGS_LISTED
from .extrapolation import SORT_KEYS
from .interrupts import terminate_as_interrupt
from .options import Parser, guess_type, one_line, parse_share, split_values
from .plugins import get_host

PLOT_STYLES = ("lines", "heatmap")

PROG = "extrap-plugins"
MAX_WARNINGS_SHOWN = 20


def add_reading_and_modelling(parser: argparse.ArgumentParser) -> None:
    """The options every command that reads and models takes: reader, modeler, their options, the measure."""
    parser.add_argument("--reader", help="reader name (default: chosen by file name, then by content)")
    parser.add_argument("--reader-option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option for the reader (repeatable)")
    parser.add_argument("--modeler", default="default", help="modeler name (default: %(default)s)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option for the modeler (repeatable)")
    parser.add_argument("--measure", choices=MEASURES, default="mean",
                        help="how repetitions are reduced before fitting (default: %(default)s)")


def add_progress(parser: argparse.ArgumentParser) -> None:
    """``--progress auto|on|off``, for the commands that read and model (``model``, ``efficiency``, ``compare``):
    bars of the runs read and the series modelled on stderr (:func:`progress_shown`)."""
    parser.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                        help="progress bar on stderr (auto: only when stderr is a terminal)")


def progress_shown(args: argparse.Namespace) -> bool:
    """Whether ``--progress`` means showing the bars: ``on``, or ``auto`` with stderr a terminal."""
    return {"on": True, "off": False}.get(args.progress, sys.stderr.isatty())


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = Parser(
        prog=PROG,
        description="Empirical performance modeling: learn a PMNF model per call path and metric.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--traceback", action="store_true", help="show the full traceback on errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    model = commands.add_parser("model", help="read measurements and print one model per call path and metric")
    model.add_argument("inputs", nargs="+", metavar="INPUT",
                       help="a file or folder of measurements (several are joined)")
    add_reading_and_modelling(model)
    model.add_argument("--metric", action=Names, default=[], metavar="NAME[,NAME...]",
                       help="only these metrics (repeatable)")
    model.add_argument("--callpath", action=Glob, default=[], metavar="GLOB",
                       help="only call paths matching this glob, e.g. 'main->*' (repeatable)")
    model.add_argument("--export", metavar="NAME",
                       help="exporter name (default: the one whose extension -o has, as .json, .csv, .html; else text)")
    model.add_argument("--export-option", action="append", default=[], metavar="KEY=VALUE",
                       help="an option for the exporter (repeatable)")
    model.add_argument("-o", "--output", metavar="PATH",
                       help="write here instead of stdout (never over an input; - is stdout)")
    model.add_argument("--overwrite-read-only", action="store_true",
                       help="replace an -o file that is read-only (refused otherwise)")
    model.add_argument("--target", metavar="P=V,...",
                       help="extrapolate every model to this point, e.g. p=65536,n=1e6: adds the value there, "
                            "its prediction interval and the shares of parent and root")
    model.add_argument("--sort", choices=SORT_KEYS,
                       help="order the rows by growth class, by value at the target, or by share of the root")
    model.add_argument("--json-version", type=int, choices=JSON_VERSIONS,
                       help=f"version of the json export (default {JSON_VERSION}; 1 is the old document exactly)")
    model.add_argument("--plot-style", choices=PLOT_STYLES,
                       help="plot and html exports with two parameters: one curve per value of the second "
                            "(lines, default) or a heat map")
    model.add_argument("--plot-top", type=int, metavar="N",
                       help="plot only the first N rows (html: default 50; plot: default all)")
    add_progress(model)
    model.add_argument("--executor", choices=EXECUTORS, default="auto",
                       help="where independent work runs: serial, process (--jobs workers), or mpi "
                            f"(start as '{MPI_LAUNCH}'); auto: process when there is enough work")
    model.add_argument("--jobs", type=int, metavar="N", help="worker processes for --executor process")
    model.add_argument("--validate", action="store_true",
                       help="also hold out the largest value of every parameter, refit, and report each model's "
                            "prediction error there (a column and a summary line; JSON version 2, CSV, HTML)")
    model.add_argument("--stream", choices=("auto", "on", "off"), default="auto",
                       help="read run by run into --scratch and model block by block, never holding all "
                            "measurements (auto: for inputs over 2 GiB)")
    model.add_argument("--scratch", metavar="DIR", help="folder for streamed runs (default: $EXTRAP_PLUGINS_SCRATCH "
                                                        "or the temporary folder; shared by all nodes for MPI)")

    plugins = commands.add_parser(
        "plugins", help="list every reader, modeler and exporter and who provides it, or show one with its options",
        description="Without NAME: every reader, modeler and exporter, the distribution that provides it and what it "
                    "does; what cannot be used (a plugin that fails to load, a broken hook, a name that clashes) is "
                    "listed as BROKEN, NOT USED or SWITCHED OFF. With NAME: that reader, modeler or exporter (each, "
                    "if several kinds have the name), its plugin and distribution, and its options with their help.")
    plugins.add_argument("name", nargs="?", metavar="NAME", help="a reader, modeler or exporter to show in full")

    suggest = commands.add_parser(
        "suggest", help="say which runs to do next (experiment design: where the models are uncertain)",
        description="Suggest the next runs: the base design that fits the budget (lines of values through a "
                    "common corner), then the runs that narrow the models' intervals at the target most per "
                    "unit of cost, until every judged kernel's interval is within --tolerance or the budget "
                    "is spent (--strategy cheapest: Ritter et al.'s (2020) cheapest-first heuristic with a hold-out "
                    "check).")
    suggest.add_argument("inputs", nargs="*", metavar="INPUT",
                         help="measurements so far (their values are candidates, their points are done)")
    add_design_arguments(suggest)
    suggest.add_argument("--export", metavar="PLAN.json", help="also write the runs as a plan file")
    suggest.add_argument("--reader", help="reader name for the inputs")
    suggest.add_argument("--reader-option", action="append", default=[], metavar="KEY=VALUE",
                         help="an option for the reader (repeatable)")
    suggest.add_argument("--strategy", choices=["uncertainty", "cheapest"], default="uncertainty",
                         help="uncertainty (default): largest expected narrowing of the interval at the target "
                              "per unit of cost; cheapest: Ritter et al.'s (2020) cheapest point first")
    suggest.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                         help="progress bar of the modeling on stderr (auto: only when stderr is a terminal)")
    autotune = commands.add_parser(
        "autotune", help="measure an instrumented program where the models are uncertain, until they are "
                         "accurate at the target or the budget is spent (suggest, run, model, repeat)",
        description="The closed loop: suggest the next runs, run them under mpiexec (as 'run' does), model, "
                    "and again, until the stopping rule holds or the budget is spent. Runs already in the "
                    "output folder are reused, so an interrupted loop resumes. Writes OUTPUT/autotune.json "
                    "(the runs and why), OUTPUT/autotune.html (the report) and OUTPUT/models.html.")
    add_design_arguments(autotune)
    autotune.add_argument("-o", "--output", required=True, metavar="FOLDER",
                          help="folder for the measurements, the logs and the report")
    autotune.add_argument("--mpiexec", metavar="PATH", help="the launcher (default: as 'run')")
    autotune.add_argument("--mpiexec-arg", action="append", default=[], metavar="ARG",
                          help="an extra argument for mpiexec (repeatable)")
    autotune.add_argument("--timeout", type=float, metavar="SECONDS", help="end a launch that runs longer")
    autotune.add_argument("--max-steps", type=int, metavar="N",
                          help="at most N rounds of suggest and run (default: as many as the full factorial has "
                               "runs, so that the rule or the budget ends the loop)")
    autotune.add_argument("--progress", choices=["auto", "on", "off"], default="on",
                          help="one line per round and per launch on stderr, and a bar of each round's modeling "
                               "when stderr is a terminal (default: on; off: failed launches only)")
    autotune.add_argument("program", nargs=argparse.REMAINDER, metavar="-- PROGRAM [ARGS]",
                          help="the instrumented program, after --; {n} in its arguments becomes the value of "
                               "parameter n, {p} the process count; a program without the shim: python -m "
                               "extrap_plugins.instrument app.py")
    add_codesign_commands(commands)
    from .instrument import sweep

    run = commands.add_parser("run", help="run an instrumented program at several process counts and parameter "
                                          "values (extrap_plugins.instrument), ready to model")
    sweep.add_arguments(run)
    add_analysis_commands(commands)
    for command in commands.choices.values():  # also after the command: the internal error's hint says so
        command.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                             help="show the full traceback on errors")
    return parser


class Names(argparse.Action):
    """A repeatable option whose value may name several, comma-separated: ``--metric visits,bytes_sent`` is
    ``--metric visits --metric bytes_sent`` (as ``--np 1,2,4`` names three process counts)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        given = [name.strip() for name in values.split(",") if name.strip()]
        if not given:
            parser.error(f"{option_string} {values!r}: expected a name (or several, comma-separated)")
        setattr(namespace, self.dest, list(getattr(namespace, self.dest) or []) + given)


class Glob(argparse.Action):
    """A repeatable call-path pattern (not split at commas: C++ names hold them); an empty one, which matches
    nothing, is refused before anything is read."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        if not values.strip():
            parser.error(f"{option_string} {values!r}: expected a call path or a glob such as 'main->*'")
        setattr(namespace, self.dest, list(getattr(namespace, self.dest) or []) + [values])


def add_design_arguments(parser: argparse.ArgumentParser) -> None:
    """The options ``suggest`` and ``autotune`` share."""
    parser.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2,...",
                        help="candidate values of a parameter, e.g. p=4,8,16,32,64 (repeatable)")
    parser.add_argument("--cost", metavar="EXPR",
                        help="cost of one run: a product such as 'p' or 'p*n^2', or 'uniform'; 'time' is a run's "
                             "time fitted to the measured runs ('p*time': core-seconds) (default: the product of the "
                             "resource parameters p, procs, ranks, jobsize, nodes, threads...)")
    parser.add_argument("--budget", metavar="SHARE|Cu|N",
                        help="limit for the whole design: a share of the full factorial's cost (15%%, 0.15; a "
                             "number up to 1 is a share: 1 is 100%%), a cost in the cost model's units (400u) or a "
                             "number of points (20: a whole number above 1)")
    parser.add_argument("--repetitions", type=int, metavar="N", help="repetitions per run (default: advised)")
    parser.add_argument("--tolerance", default=None, metavar="SHARE",
                        help="stopping rule: relative half-width of the 95%% interval at the target (uncertainty) "
                             "or error of the hold-out prediction (cheapest): 5%% or 0.05 (the default)")
    parser.add_argument("--target", metavar="P=V,...",
                        help="where the models must be accurate (default: one step beyond the largest candidates)")
    parser.add_argument("--modeler", default="default", help="modeler (default: %(default)s)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option for the modeler (repeatable)")
    parser.add_argument("--measure", choices=MEASURES, default="mean", help="how repetitions are reduced")
    parser.add_argument("--metric", action=Names, default=[], metavar="NAME[,NAME...]",
                        help="judge the models of these metrics only (repeatable)")
    parser.add_argument("--callpath", action=Glob, default=[], metavar="GLOB",
                        help="judge the models of these call paths only (repeatable)")


def program(args: argparse.Namespace) -> ExitStatus:
    if args.command == "model":
        return _model_command(args)
    if args.command == "plugins":
        return _plugins_command(args)
    if args.command == "suggest":
        return _suggest_command(args)
    if args.command == "requirements":
        return _requirements_command(args)
    if args.command == "whatif":
        return _whatif_command(args)
    if args.command in ("efficiency", "compare"):
        return analysis_command(args)
    if args.command == "autotune":
        return _autotune_command(args)
    if args.command == "run":
        from .instrument import sweep

        _refuse_empty("-o", args.output, "a folder name")
        return ExitStatus(sweep.run(args))
    raise AssertionError(f"unhandled command {args.command}")


def _model_command(args: argparse.Namespace) -> ExitStatus:
    from . import streaming

    if args.export is None:  # -o models.json writes JSON, as its name says; text otherwise
        args.export = (get_host().exporter_for(args.output) if args.output else None) or "text"
    given = parse_options(args.export_option, "--export-option", reserved=EXPORT_FLAGS)
    options = {**given, **export_options(args, given)}
    _check_output(args, options)  # before any work: the exporter, its options and -o, the modeler
    if streaming.should_stream(args.inputs, args.stream):
        return _stream_command(args, options)
    from tqdm import tqdm

    show = progress_shown(args)
    with growing_bar(show, "reading", unit="run") as reading:  # the runs, once the reader has listed them
        selected = api.read(args.inputs if len(args.inputs) > 1 else args.inputs[0], reader=args.reader,
                            metrics=args.metric, callpaths=args.callpath, executor=args.executor, jobs=args.jobs,
                            progress=reading,
                            **parse_options(args.reader_option, "--reader-option", reserved=READ_FLAGS))
    if options.get("target") is not None:  # a target that names no parameter is said before the modelling
        from .extrapolation import parse_target

        parse_target(options["target"], selected.parameter_names)
    series = selected.callpath_index.astype("int64") * max(len(selected.metrics), 1) + selected.metric_index
    total = int(np.count_nonzero(np.bincount(series))) if len(series) else 0
    with tqdm(total=total, disable=not show, file=sys.stderr, unit="series", desc="modeling") as bar:
        model_set = api.model(selected, args.modeler, measure=args.measure, progress=bar.update,
                              executor=args.executor, jobs=args.jobs, validate=args.validate,
                              **parse_options(args.option, "--option", reserved=MODEL_FLAGS))
    return _export_command(args, model_set, options, show)


def _check_output(args: argparse.Namespace, options: dict[str, object]) -> None:
    """What ``model`` can check before reading anything (a mistake there would be said only after all the reading
    and modelling): the exporter exists, takes these option names (:func:`extrap_plugins.api.check_export_options`)
    and, if it writes files, has ``-o``; ``-o`` itself (``api.check_output``, with messages that name the exporter
    and the flags of ``model``); the modeler exists; ``--scratch`` is a folder, also where the input is then read
    without streaming.  Options of a mode not chosen are taken without a word: a job script that varies
    ``--stream`` or ``--executor`` keeps its ``--scratch`` and ``--jobs``."""
    from .files import check_destination

    if args.scratch is not None:  # (a file, /dev/full or a folder that does not exist was left unused)
        from .streaming import check_scratch

        check_scratch(args.scratch)

    host = get_host()
    info = host.exporter(args.export)
    api.check_export_options(info, options)
    if info.kind == "path" and args.output is None:
        raise InputError(f"exporter {info.name!r} writes files: give it an output path with -o")
    if args.output is not None:
        with _read_only_flag():
            check_destination(args.output, inputs=args.inputs, folder=info.kind == "path" and info.folder,
                              allow_read_only=args.overwrite_read_only, writes=f"the {info.name} exporter's files")
    _check_modeler(args)


def _check_modeler(args: argparse.Namespace) -> None:
    """An unknown ``--modeler`` is said before anything is read (else only after all the reading)."""
    get_host().modeler(args.modeler)


@contextlib.contextmanager
def _read_only_flag() -> Iterator[None]:
    """A read-only output refused by a command that has ``--overwrite-read-only``: the advice names the flag."""
    from .files import ReadOnlyOutput

    try:
        yield
    except ReadOnlyOutput as error:
        raise ReadOnlyOutput(error.path, "--overwrite-read-only") from None


def _refuse_empty(option: str, value: str | None, expected: str) -> None:
    if value == "":
        raise InputError(f"{option} '': expected {expected}")


def _export_command(args: argparse.Namespace, model_set, options: dict, show: bool) -> ExitStatus:
    from tqdm import tqdm

    with tqdm(total=1, disable=not show, file=sys.stderr, unit="export", desc="exporting") as bar, _read_only_flag():
        text = api.export(model_set, args.export, args.output, executor=args.executor, jobs=args.jobs,
                          inputs=args.inputs, allow_read_only=args.overwrite_read_only, **options)
        bar.update(1)
    if text is not None:
        _report(args, text, listed_warnings(model_set))
    return ExitStatus.OK


def listed_warnings(model_set) -> set[tuple[str, str]]:
    """The warnings the text report lists at its end: each model's own (:func:`models_listed`) and what reading
    warned of (:func:`read_listed`)."""
    return models_listed(model_set.models) | read_listed(model_set.reading_warnings)


def models_listed(models) -> set[tuple[str, str]]:
    """What the models warn of, as a text report lists it (:func:`~extrap_plugins.formatting.warning_lines`):
    ``(cause, "callpath [metric]")`` each."""
    return {(text, f"{m.callpath} [{m.metric}]") for m in models for text in m.warnings or ()}


def read_listed(*warned: Iterable[str]) -> set[tuple[str, str]]:
    """What reading warned of, of one input or of each of several (``warned``), as a text report lists it
    (:func:`~extrap_plugins.formatting.reading_lines`): ``(text, "")`` each, a warning of no series."""
    return {(text, "") for texts in warned for text in texts}


def _report(args: argparse.Namespace, text: str, listed: Iterable[tuple[str, str]] = ()) -> None:
    """Write a report to stdout; where it is a text report (``--export text``) and stderr goes to the same place
    (a terminal, ``> file 2>&1``), the warnings it lists (``listed``: cause and series) are not repeated there at
    the end (:class:`WarningLines`)."""
    sys.stdout.write(text)
    shown = getattr(args, "warnings_shown", None)
    if shown is not None and args.export == "text" and same_destination(sys.stdout, sys.stderr):
        shown.update(listed)


def same_destination(a, b) -> bool:
    """Whether two streams write to the same file, pipe or terminal."""
    try:
        first, second = os.fstat(a.fileno()), os.fstat(b.fileno())
    except (AttributeError, OSError, ValueError):  # no file behind a stream (captured output)
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def _stream_command(args: argparse.Namespace, options: dict) -> ExitStatus:
    from .streaming import stream_models

    if args.validate:
        raise InputError("--validate needs the measurements in memory: use --stream off")
    from .engine import following

    show = progress_shown(args)
    with contextlib.ExitStack() as bars:
        reading = bars.enter_context(growing_bar(show, "reading", unit="run"))
        modeling = []

        def model(done: int, more: int) -> None:  # told the call paths once the runs are read: their bar ends there
            if not modeling:
                bars.close()
                modeling.append(bars.enter_context(growing_bar(show, "modeling", unit="callpath")))
            modeling[0](done, more)

        with following(reading=reading):
            model_set = stream_models(args.inputs, args.reader, args.modeler, metrics=args.metric,
                                      callpaths=args.callpath, measure=args.measure, executor=args.executor,
                                      jobs=args.jobs, scratch=args.scratch, callpath_progress=model,
                                      reader_options=parse_options(args.reader_option, "--reader-option",
                                                                   reserved=READ_FLAGS), target=args.target,
                                      **parse_options(args.option, "--option", reserved=STREAM_FLAGS))
    if args.target is not None:
        warnings.warn("streamed models carry no measurements: prediction intervals at --target are left out "
                      "(--stream off computes them)", stacklevel=2)
    return _export_command(args, model_set, options, show)


def export_options(args: argparse.Namespace, given: Mapping[str, object] = {}) -> dict[str, object]:
    """The exporter options the dedicated flags stand for (only those given), beside those ``--export-option``
    ``given``."""
    options: dict[str, object] = {}
    if args.target is not None:
        options["target"] = args.target
    if args.sort is not None:
        options["sort"] = args.sort
    if args.export == "json" and "version" in given:  # (the default version overwrote it, without a word)
        if args.json_version is not None:
            raise InputError("give the JSON version once: --json-version or --export-option version=")
    elif args.export == "json":
        options["version"] = args.json_version or JSON_VERSION
    elif args.json_version is not None:
        raise InputError("--json-version applies to --export json only")
    for flag, name in (("plot_style", "plot_style"), ("plot_top", "plot_top")):
        value = getattr(args, flag)
        if value is not None:
            if args.export not in ("plot", "html"):
                raise InputError(f"--{flag.replace('_', '-')} applies to --export plot and html only")
            options[name] = value
    return options


def add_codesign_commands(commands) -> None:
    """The ``requirements`` and ``whatif`` commands (seeds 004 and 003)."""
    from .codesign_output import KINDS

    def common(command, callpaths: str) -> None:
        command.add_argument("--reader", help="reader name for the inputs")
        command.add_argument("--reader-option", action="append", default=[], metavar="KEY=VALUE",
                             help="an option for the reader (repeatable)")
        command.add_argument("--modeler", default="default", help="modeler name (default: %(default)s)")
        command.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                             help="an option for the modeler (repeatable)")
        command.add_argument("--callpath", action=Glob, default=None, metavar="GLOB",
                             help=f"only these call paths (repeatable; default: {callpaths})")
        command.add_argument("--export", choices=KINDS, help=REPORT_FORMAT_HELP)
        command.add_argument("-o", "--output", metavar="PATH",
                             help="write here (atomically) instead of stdout; - is stdout")

    req = commands.add_parser(
        "requirements", help="how each application's requirements respond to system upgrades (Wolf's Extra-P slides)",
        description="Per application and upgrade: the ratios new/old of the problem size per process (it fills "
                    "the memory), the overall problem size and every requirement, per process and in total.")
    req.add_argument("inputs", nargs="+", metavar="INPUT",
                     help="one experiment per application (NAME=PATH names it; default: the file name)")
    req.add_argument("--system", required=True, metavar="SYSTEM.toml",
                     help="[system] processes and memory_per_process (or racks, sockets, ...) and [upgrades]")
    req.add_argument("--upgrade", action="append", default=[], metavar="NAME=KEY:VALUE,...",
                     help="another upgrade, e.g. 'double the racks=processes:2x' (repeatable)")
    req.add_argument("--role", action="append", default=[], metavar="ROLE=METRIC,...",
                     help="which metric plays which role, e.g. memory=bytes_used,computation=PAPI_FP_OPS or "
                          "communication=bytes_sent+bytes_received (default: from the metric names)")
    req.add_argument("--processes", default="p", metavar="NAME", help="the process count parameter (default: p)")
    req.add_argument("--size", default="n", metavar="NAME",
                     help="the problem size per process parameter (default: n)")
    req.add_argument("--rank-by", default="problem_size", metavar="problem_size|ROLE",
                     help="what makes an upgrade best: the largest overall problem size (default) or the smallest "
                          "ratio of a role per process")
    common(req, "the whole program: the root call paths, or every call path for exclusive values")

    what = commands.add_parser(
        "whatif", help="predict time on a machine profile and its sensitivity to each rate (Bailey and Snavely 2005)",
        description="Convolve requirement models with a machine profile (time = Σ amount / rate + messages × "
                    "latency) at a target point, on the machine as given and as changed by --scale, with the "
                    "speedup from improving each resource alone.")
    what.add_argument("inputs", nargs="+", metavar="INPUT", help="measurements (several are joined)")
    what.add_argument("--machine", metavar="M.toml", help="the machine profile: [rates] and [latencies]")
    what.add_argument("--calibrate", action="store_true",
                      help="fit the values the profile leaves out to the measured times (non-negative least squares) "
                           "first; values it gives are kept")
    what.add_argument("--save-machine", metavar="OUT.toml", help="write the (calibrated) profile here")
    what.add_argument("--target", required=True, metavar="P=V,...", help="the point to predict, e.g. p=4096,n=1e6")
    what.add_argument("--scale", action="append", default=[], metavar="NAME=FACTOR,...",
                      help="the changed machine, e.g. bandwidth=4x,latency=0.25x")
    what.add_argument("--sensitivity", type=float, default=4.0, metavar="FACTOR",
                      help="improvement per resource in the sensitivity columns (default: 4, rates ×4, latencies ÷4)")
    what.add_argument("--time-metric", default="time", metavar="NAME", help="the measured time (default: time)")
    what.add_argument("--measure", choices=MEASURES, default="mean", help="how repetitions are reduced")
    common(what, "every call path; the total sums the root call paths among them, or every one for exclusive "
                 "values")


def _write_report(args: argparse.Namespace, text: str, listed: Iterable[tuple[str, str]]) -> None:
    """A report of ``requirements`` or ``whatif``: to ``-o``, else to stdout (:func:`_report`, with the warnings it
    lists)."""
    if args.output is None:
        _report(args, text, listed)
    else:
        _write_output(text, args.output)


def _write_output(text: str, output: str) -> None:
    from .files import atomic_writer

    target = os.path.abspath(output)
    if os.path.isdir(target):
        raise InputError("is a folder; give a file name", output)
    if not os.path.isdir(os.path.dirname(target)):
        raise InputError("the folder for the output does not exist", output)
    with atomic_writer(target) as stream:
        stream.write(text)


def _check_outputs(outputs: dict[str, str | None], inputs: Sequence[str | tuple[str | None, str] | None]) -> None:
    """Before any work: no output (by its option) over an input or inside an input folder, nor two outputs on one
    file (the second would replace the first); see :func:`extrap_plugins.files.check_destination` (an input that is
    not measurements comes with what it is: ``(path, "the machine file (--machine)")``)."""
    from .files import check_destination

    given = {option: path for option, path in outputs.items() if path is not None}
    sources = [path for path in inputs if (path[0] if isinstance(path, tuple) else path)]
    seen: dict[str, str] = {}
    for option, path in given.items():
        check_destination(path, inputs=sources, option=option)
        where = os.path.realpath(path)
        if where in seen:
            raise InputError(f"{option} and {seen[where]} name the same file: the second would replace the first",
                             path)
        seen[where] = option


def _requirements_command(args: argparse.Namespace) -> ExitStatus:
    from .codesign import requirements

    _check_outputs({"-o": args.output}, [*args.inputs, (args.system, "the system file (--system)")])
    _check_modeler(args)

    result = requirements(
        args.inputs, args.system, args.upgrade, roles=args.role or None, processes=args.processes, size=args.size,
        callpaths=args.callpath, rank_by=args.rank_by, reader=args.reader, modeler=args.modeler,
        reader_options=parse_options(args.reader_option, "--reader-option", reserved=READ_FLAGS),
        **modeler_options(args.option, requirements, "requirements"))
    _write_report(args, result.render(args.export), read_listed(*result.reading_warnings.values()))
    return ExitStatus.OK


def _whatif_command(args: argparse.Namespace) -> ExitStatus:
    from .machine import whatif

    if args.machine is None and not args.calibrate:
        raise InputError("whatif needs a machine profile (--machine M.toml) or --calibrate")
    _check_outputs({"-o": args.output, "--save-machine": args.save_machine},
                   [*args.inputs, (args.machine, "the machine file (--machine)")])
    _check_modeler(args)
    result = whatif(
        args.inputs if len(args.inputs) > 1 else args.inputs[0], args.machine, target=args.target,
        scale=args.scale or None, calibrate_rates=args.calibrate, sensitivity=args.sensitivity,
        time_metric=args.time_metric, callpaths=args.callpath, measure=args.measure, reader=args.reader,
        modeler=args.modeler, reader_options=parse_options(args.reader_option, "--reader-option", reserved=READ_FLAGS),
        **modeler_options(args.option, whatif, "whatif"))
    if args.save_machine:
        _write_output(result.machine.toml(), args.save_machine)
    _write_report(args, result.render(args.export), read_listed(result.reading_warnings))
    return ExitStatus.OK


def _plugins_command(args: argparse.Namespace) -> ExitStatus:
    """``plugins``: the table of every registration (what is not used marked), or ``plugins NAME`` in full.

    A modeler whose ``ModelerInfo.options`` disagree with its factory's keywords is a warning naming it.
    """
    host = get_host()
    if args.name is not None:
        found = host.named(args.name)
        host.check_modeler_options([args.name] if any(kind == "modeler" and problem is None
                                                      for kind, _, problem in found) else [])
        sys.stdout.write("\n".join(_plugin_details(kind, registered, problem) for kind, registered, problem in found))
        return ExitStatus.OK
    rows = []
    for kind, table in (("reader", host.readers), ("modeler", host.modelers), ("exporter", host.exporters)):
        for name, registered in table.items():
            rows.append([kind, name, registered.distribution, _one_line(registered.info.description)])
    for problem in host.problems:
        mark = f"{problem.status.upper()}: {problem.note}"
        if problem.skipped:
            rows += [[problem.kind, r.info.name, r.distribution, mark] for r in problem.skipped]
        else:  # a whole plugin, or a hook whose registrations are not known
            rows.append(["plugin", problem.plugin, problem.distribution, mark])
    order = {"reader": 0, "modeler": 1, "exporter": 2, "plugin": 3}
    rows.sort(key=lambda row: (order[row[0]], row[1], row[2]))
    host.check_modeler_options()
    from .formatting import text_table

    sys.stdout.write(text_table(["kind", "name", "provided by", "description"], rows) + "\n")
    return ExitStatus.OK


def _plugin_details(kind: str, registered, problem) -> str:
    """One registration in full for ``plugins NAME``: who provides it, what it does, its options and their help."""
    from .exporters._options import COMMON_OPTIONS
    from .plugins import factory_options, option_help

    info = registered.info
    lines = [f"{kind} {info.name}", f"  provided by: {registered.distribution} (plugin {registered.plugin})"]
    if problem is not None:
        lines.append(f"  {problem.status}: {problem.message}")
    lines.append(f"  description: {_one_line(info.description) or '(none)'}")
    options = option_help(info.options)
    if kind == "modeler":  # what the factory takes without documenting it can still be given
        documented = {name for name, _ in options}
        options += [(name, "(not documented)") for name in factory_options(info.factory) if name not in documented]
    flag = {"reader": "--reader-option", "modeler": "--option", "exporter": "--export-option"}[kind]
    flags = {"reader": READ_FLAGS, "modeler": MODEL_FLAGS, "exporter": EXPORT_FLAGS}[kind]
    options = [(name, f"{text}; on the command line {flags[name]}" if flags.get(name) else text)
               for name, text in options]
    if options:
        width = max(len(name) for name, _ in options)
        lines.append(f"  options ({flag} KEY=VALUE):")
        lines += [f"    {name.ljust(width)}  {_one_line(text)}".rstrip() for name, text in options]
    else:
        lines.append("  options: none")
    if kind == "exporter":
        lines.append(f"  and the options of every exporter: {', '.join(COMMON_OPTIONS)}")
    return "\n".join(lines) + "\n"


def _one_line(text) -> str:
    """A description or help text on one line (a plugin's may hold line breaks, or not be text at all)."""
    return " ".join(str(text or "").split())


def _suggest_command(args: argparse.Namespace) -> ExitStatus:
    from . import design

    _check_outputs({"--export": args.export}, args.inputs)
    suffix = os.path.splitext(args.export or "")[1].lower()
    if suffix in SUFFIX_FORMATS and suffix != ".json":  # the plan file is JSON, which run --plan reads
        raise InputError(f"a plan file is JSON (what run --plan reads), not {SUFFIX_FORMATS[suffix]}: name it "
                         f"{os.path.splitext(args.export)[0]}.json", args.export)
    _check_modeler(args)
    candidates = parse_params(args.param)
    experiment = None
    if args.inputs:
        experiment = api.read(args.inputs if len(args.inputs) > 1 else args.inputs[0], reader=args.reader,
                              **parse_options(args.reader_option, "--reader-option", reserved=READ_FLAGS))
        space = design.Space.from_experiment(experiment, candidates)
    elif candidates:
        space = design.Space.of(candidates)
    else:
        raise InputError("suggest needs candidate values (--param p=4,8,16,32,64) or measurements (INPUT)")
    show = {"on": True, "off": False}.get(args.progress, sys.stderr.isatty())
    with growing_bar(show, "assessing the models") as progress:
        result = design.suggest(
            space, experiment, cost=args.cost, budget=args.budget, repetitions=args.repetitions,
            tolerance=_tolerance(args), modeler=args.modeler,
            measure=args.measure, metrics=args.metric, callpaths=args.callpath, strategy=args.strategy,
            target=args.target, progress=progress, **parse_options(args.option, "--option", reserved=DESIGN_FLAGS))
    if args.export:
        design.write_plan(args.export, result.plan, result)
    sys.stdout.write(str(result))
    return ExitStatus.OK


@contextlib.contextmanager
def growing_bar(show: bool, description: str, leave: bool = True,
                unit: str = "series") -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr whose total grows as work is announced; yields the ``(done, more)`` callback
    that :func:`extrap_plugins.selector.assess` calls (series fitted, more series announced), and
    :func:`extrap_plugins.api.read` (runs read, more runs found; ``unit="run"``)."""
    from tqdm import tqdm

    with tqdm(total=0, disable=not show, file=sys.stderr, unit=unit, desc=description, leave=leave) as bar:
        def tell(done: int, more: int) -> None:
            if more:
                bar.total += more
                bar.refresh()
            if done:
                bar.update(done)

        yield tell


def _autotune_command(args: argparse.Namespace) -> ExitStatus:
    from . import autotune

    _refuse_empty("-o", args.output, "a folder name")
    command = list(args.program)
    if command and command[0] == "--":
        command = command[1:]
    result = autotune.autotune(
        parse_params(args.param), command, args.output, cost=args.cost, budget=args.budget,
        repetitions=args.repetitions, tolerance=_tolerance(args),
        target=args.target, modeler=args.modeler, measure=args.measure, metrics=args.metric,
        callpaths=args.callpath, mpiexec=args.mpiexec, mpiexec_args=args.mpiexec_arg, timeout=args.timeout,
        max_steps=args.max_steps, progress=args.progress != "off",
        options=parse_options(args.option, "--option", reserved=DESIGN_FLAGS),
        assessing=(lambda what: growing_bar(True, what, leave=False))
        if args.progress != "off" and sys.stderr.isatty() else None)
    sys.stdout.write(str(result))
    if result.status in ("failed", "unmeasured"):
        return ExitStatus.RUNS_FAILED
    return ExitStatus.OK if result.status in ("done", "budget", "exhausted", "steps") else ExitStatus.ERROR


def _share(text: str, flag: str, example: str = "5%") -> float:
    """A share option (``5%`` or ``0.05``) of the command line (:func:`~extrap_plugins.options.parse_share`)."""
    try:
        return parse_share(text, flag, example)
    except ValueError as error:
        raise InputError(str(error)) from None


def _tolerance(args: argparse.Namespace) -> float | str:
    """``--tolerance`` of suggest and autotune as given (both parse it: ``design.parse_tolerance``), or the
    default."""
    from . import design

    return design.TOLERANCE if args.tolerance is None else args.tolerance


def parse_params(pairs: Sequence[str]) -> dict[str, list[float]]:
    """``["p=4,8,16", "n=1e3,2e3"]`` -> ``{"p": [4.0, 8.0, 16.0], "n": [1000.0, 2000.0]}``."""
    params: dict[str, list[float]] = {}
    for pair in pairs:
        name, sep, values = pair.partition("=")
        name = name.strip()
        try:
            items = split_values(values)
        except ValueError as error:
            raise InputError(f"--param {pair!r}: {error}") from None
        try:
            numbers = [float(v) for v in items]
        except ValueError:
            numbers = []
        if not sep or not name or not numbers:
            raise InputError(f"--param {pair!r}: expected NAME=V1,V2,... with numbers, such as p=4,8,16,32,64")
        if not name.isprintable():  # (a line break pasted in: the plan's table broke at it)
            raise InputError(f"--param {pair!r}: the name {name!r} holds a line break or another control character")
        if name in params:
            raise InputError(f"--param {name} is given twice; list all its values once")
        if len(set(numbers)) != len(numbers):  # as `run` says: a typo more often than not
            raise InputError(f"--param {pair!r}: a value appears twice")
        params[name] = numbers
    return params


# Keys that name an argument of the API call itself, with the flag to use instead.
READ_FLAGS = {"reader": "--reader", "metrics": "--metric", "callpaths": "--callpath",
              "executor": "--executor", "jobs": "--jobs", "host": None, "progress": "--progress"}
MODEL_FLAGS = {"modeler": "--modeler", "measure": "--measure", "metrics": "--metric", "callpaths": "--callpath",
               "progress": "--progress", "executor": "--executor", "jobs": "--jobs", "validate": "--validate",
               "host": None}
STREAM_FLAGS = {**MODEL_FLAGS, "scratch": "--scratch", "reader_options": "--reader-option", "reader": "--reader",
                "target": "--target", "callpath_progress": "--progress"}
DESIGN_FLAGS = {"modeler": "--modeler", "measure": "--measure", "metrics": "--metric", "callpaths": "--callpath",
                "target": "--target", "budget": "--budget", "cost": "--cost", "tolerance": "--tolerance",
                "repetitions": "--repetitions", "strategy": "--strategy", "host": None, "exclude": None,
                "progress": "--progress"}
EXPORT_FLAGS = {"exporter": "--export", "path": "-o", "executor": "--executor", "jobs": "--jobs", "host": None,
                "inputs": None, "allow_read_only": "--overwrite-read-only"}


def modeler_options(pairs: Sequence[str], call: Callable, command: str) -> dict[str, object]:
    """``--option`` values for the modeler that the API ``call`` of ``command`` builds: a key that names an
    argument of ``call`` itself is refused, for it would reach the call twice (``whatif --option scale=2``: "got
    multiple values for keyword argument 'scale'"), not the modeler."""
    options = parse_options(pairs, "--option", reserved=MODEL_FLAGS)
    own = [name for name, parameter in inspect.signature(call).parameters.items()
           if parameter.kind is not parameter.VAR_KEYWORD]
    taken = next((key for key in options if key in own), None)
    if taken is not None:
        pair = next(pair for pair in pairs if pair.partition("=")[0].strip().replace("-", "_") == taken)
        raise InputError(f"--option {pair!r}: {taken!r} is an argument of {command} itself, not an option of the "
                         "modeler")
    return options


def parse_options(pairs: Sequence[str], flag: str, reserved: dict[str, str | None] | None = None) -> dict[str, object]:
    """``["terms=2", "negative=true"]`` -> ``{"terms": 2, "negative": True}``.

    Values become int, float or bool when they look like one, else stay text.
    Keys in ``reserved`` are refused, naming the flag to use instead.
    """
    options: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise InputError(f"{flag} {pair!r}: expected KEY=VALUE")
        if reserved and key in reserved:
            instead = f"; use {reserved[key]}" if reserved[key] else ""
            raise InputError(f"{flag} {pair!r}: {key!r} is not an option here{instead}")
        options[key] = guess_type(value.strip())
    return options




# ------------------------------------------------ efficiency and compare
REPORT_FORMATS = ("text", "csv", "json", "html")
REPORT_FORMAT_HELP = "output format (default: the one -o's extension names, .csv, .json, .html; else text)"
SUFFIX_FORMATS = {".txt": "text", ".csv": "csv", ".json": "json", ".html": "html", ".htm": "html"}


def report_format(output: str | None) -> str:
    """The format of a report written to ``output`` without ``--export``: the one its extension names, else text."""
    return SUFFIX_FORMATS.get(os.path.splitext(output or "")[1].lower(), "text")


def _add_input_options(command: argparse.ArgumentParser) -> None:
    add_reading_and_modelling(command)
    add_progress(command)
    command.add_argument("--export", choices=REPORT_FORMATS, help=REPORT_FORMAT_HELP)
    command.add_argument("-o", "--output", metavar="PATH",
                         help="write here (atomically) instead of stdout; - is stdout")
    command.add_argument("--title", help="title of the html report")


def add_analysis_commands(commands) -> None:
    """The ``efficiency`` and ``compare`` subcommands (thin layers over the API's functions of those names)."""
    efficiency = commands.add_parser(
        "efficiency", help="speedup, efficiency, iso-efficiency and overhead per call path from the models")
    efficiency.add_argument("inputs", nargs="+", metavar="INPUT", help="measurements (several are joined)")
    efficiency.add_argument("--processes", metavar="NAME",
                            help="the process-count parameter (default: the one named p, ranks, procs, ...)")
    efficiency.add_argument("--size", metavar="NAME",
                            help="the problem-size parameter: total for strong scaling, per process for weak")
    efficiency.add_argument("--scaling", choices=("strong", "weak"), default="strong",
                            help="strong: fixed total problem size; weak: fixed size per process (default: strong)")
    efficiency.add_argument("--level", default="0.8", metavar="SHARE",
                            help="the efficiency to keep: 80%% or 0.8 (the default)")
    efficiency.add_argument("--target", metavar="P|P=V,...",
                            help="the process count to reach (default: 8 x the largest measured); other "
                                 "parameters default to their largest measured value")
    efficiency.add_argument("--metric", metavar="NAME",
                            help="the metric (default: time, else the time metric that averages over the processes)")
    efficiency.add_argument("--callpath", action=Glob, default=[], metavar="GLOB",
                            help="only call paths matching this glob (repeatable)")
    efficiency.add_argument("--total", action="append", default=[], metavar="CALLPATH",
                            help="a call path of the whole program's total (repeatable; default: the roots of the "
                                 "call tree, or every call path for exclusive values)")
    efficiency.add_argument("--values", choices=("auto", "inclusive", "exclusive"), default="auto",
                            help="whether a call path's value includes its children's (default: detected)")
    _add_input_options(efficiency)

    compare = commands.add_parser("compare", help="compare two experiments call path by call path")
    compare.add_argument("a", metavar="A", help="the first experiment (a file or folder)")
    compare.add_argument("b", metavar="B", help="the second experiment")
    compare.add_argument("--label", action="append", default=[], metavar="A=NAME|B=NAME",
                         help="names of the two sides in the output (default: A and B)")
    compare.add_argument("--map", metavar="FILE",
                         help="a CSV of 'A call path,B call path' lines for renamed regions ('*' for any text)")
    compare.add_argument("--map-rule", action="append", default=[], metavar="A_CALLPATH=B_CALLPATH",
                         help="one mapping rule, e.g. 'IntelMPI->*=OpenMPI->*' (repeatable)")
    compare.add_argument("--callpath-a", action=Glob, default=[], metavar="GLOB",
                         help="only these call paths of A (repeatable)")
    compare.add_argument("--callpath-b", action=Glob, default=[], metavar="GLOB",
                         help="only these call paths of B (repeatable)")
    compare.add_argument("--metric", action=Names, default=[], metavar="NAME[,NAME...]",
                         help="only these metrics (repeatable)")
    compare.add_argument("--target", metavar="P=V,...",
                         help="the point to compare at (default: per parameter the smaller of the two largest "
                         "measured values)")
    compare.add_argument("--along", metavar="NAME",
                         help="the parameter along which crossovers are sought (default: the process count)")
    compare.add_argument("--level", default="0.95", metavar="SHARE",
                         help="level of the prediction intervals: 95%% or 0.95 (the default)")
    compare.add_argument("--plot-top", type=int, metavar="N", help="html: figures for the first N pairs (default 50)")
    _add_input_options(compare)


def _labels(pairs: Sequence[str]) -> tuple[str, str]:
    labels = {"A": "A", "B": "B"}
    given: dict[str, str] = {}
    for pair in pairs:
        side, sep, name = pair.partition("=")
        side = side.strip().upper()
        if not sep or side not in labels or not name.strip():
            raise InputError(f"--label {pair!r}: expected A=NAME or B=NAME")
        if side in given and given[side] != name.strip():  # (the last one won, without a word)
            raise InputError(f"--label names {side} twice: {given[side]!r} and {name.strip()!r}")
        given[side] = labels[side] = name.strip()
    return labels["A"], labels["B"]


def analysis_command(args: argparse.Namespace) -> ExitStatus:
    from .comparison import compare
    from .efficiency_analysis import efficiency
    from .engine import following
    from .reports import export_report

    inputs = args.inputs if args.command == "efficiency" else [args.a, args.b, args.map]
    _check_outputs({"-o": args.output}, inputs)
    _check_modeler(args)
    report_options = {} if args.command == "efficiency" or args.plot_top is None else {"plot_top": args.plot_top}
    if args.export != "html" and (args.title or report_options):
        raise InputError("--title and --plot-top apply to --export html only")
    if args.title:
        report_options["title"] = args.title
    level = _share(args.level, "--level", "80%" if args.command == "efficiency" else "95%")
    reader_options = parse_options(args.reader_option, "--reader-option", reserved=READ_FLAGS)
    options = modeler_options(args.option, efficiency if args.command == "efficiency" else compare, args.command)
    common = dict(reader=args.reader, reader_options=reader_options, modeler=args.modeler, measure=args.measure)
    show = progress_shown(args)
    with growing_bar(show, "reading", unit="run") as reading, growing_bar(show, "modeling") as modeling, \
            following(reading=reading, modeling=modeling):  # the API's read and model calls inside report here
        if args.command == "efficiency":
            result = efficiency(args.inputs if len(args.inputs) > 1 else args.inputs[0], processes=args.processes,
                                size=args.size, scaling=args.scaling, level=level,
                                target=args.target, metric=args.metric, values=args.values, total=args.total,
                                callpaths=args.callpath, **common, **options)
        else:
            result = compare(args.a, args.b, labels=_labels(args.label), mapping=args.map, rules=args.map_rule,
                             target=args.target, along=args.along, level=level,
                             metrics=args.metric, callpaths_a=args.callpath_a, callpaths_b=args.callpath_b,
                             **common, **options)
    text = export_report(result, args.export, args.output, **report_options)
    if text is not None:  # (a comparison's are of each side)
        warned = result.reading_warnings if args.command == "compare" else (result.reading_warnings,)
        listed = read_listed(*warned)
        if args.command == "efficiency":  # its text report lists what the models warn of too
            listed |= models_listed(result.analysed_models)
        _report(args, text, listed)
    return ExitStatus.OK


FOLDER_OUTPUTS = ("autotune", "run")
"""The commands whose ``-o`` is a folder of runs (elsewhere ``-o -`` is stdout)."""


def _encodable_stdout() -> None:
    """Names the terminal's encoding cannot hold (``main->計算`` on an ASCII or cp1252 stdout) are written as
    ``\\u8a08`` escapes, as stderr writes them, not an internal error."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None and (sys.stdout.errors or "strict") == "strict":
        reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI: errors become one line on stderr and an exit status, never a traceback."""
    _encodable_stdout()
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "output", None) == "-" and args.command not in FOLDER_OUTPUTS:
        args.output = None  # -o - is stdout, as the tools of a pipeline take it
    if args.command in ("requirements", "whatif", "efficiency", "compare") and args.export is None:
        args.export = report_format(args.output)
    collected = WarningLines(WARNINGS_LISTED if args.command == "model" else "")
    args.warnings_shown = collected.shown
    try:
        with terminate_as_interrupt(), warnings.catch_warnings(), collected:  # SIGTERM (a batch job's limit) as Ctrl-C
            warnings.simplefilter("default")
            warnings.showwarning = collected.add
            status = program(args)
            return int(status)
    except BrokenPipeError:  # the reader of our output went away (``| head``): not an error
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return int(ExitStatus.OK)
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return int(ExitStatus.INTERRUPTED)
    except InputError as error:
        return _fail(args, error, ExitStatus.BAD_INPUT)
    except PluginError as error:
        return _fail(args, error, ExitStatus.PLUGIN_ERROR)
    except RunsFailed as error:
        return _fail(args, error, ExitStatus.RUNS_FAILED)
    except OSError as error:  # unreadable input, unwritable output
        where = f"{error.filename}: " if error.filename else ""
        return _fail(args, f"{where}{error.strerror or error}", ExitStatus.BAD_INPUT, error)
    except WorkerLost as error:
        status = _fail(args, error, ExitStatus.ERROR)
        if error.mpi:  # a dead rank: MPI cannot end normally, end the whole job now
            end_mpi_job(status)
        return status
    except ExtrapError as error:
        return _fail(args, error, ExitStatus.ERROR)
    except Exception as error:  # a bug: say so, without a traceback unless asked
        return _fail(args, f"internal error: {type(error).__name__}: {error} "
                           f"(run with --traceback for details)", ExitStatus.ERROR, error)


class WarningLines:
    """Warnings gathered over a command and shown at its end: one line per cause, naming the first series and
    counting the others (``main->a [time] and 86 more series: ...``); at most :data:`MAX_WARNINGS_SHOWN` lines.

    More than :data:`~extrap_plugins.formatting.WARNED_NAMED` causes that differ only in their figures
    (:func:`~extrap_plugins.engine.cause_apart_from_figures`: ``the 34 hypotheses ... at about p=98`` of one series,
    ``the 33 ... at about p=140`` of the next) are one line, with the first one's figures, saying so: 300 call paths
    of one such cause do not drown the result.  What a report on stdout listed where stderr goes too (``shown``) is
    not repeated."""

    def __init__(self, listed: str = "") -> None:
        self.causes: dict[tuple[type, str], list[str]] = {}
        self.shown: set[tuple[str, str]] = set()  # (cause, series) a report listed where stderr goes too
        self.listed = listed  # where a model's warnings of more series than a line names are all listed

    def add(self, message, category=None, filename=None, lineno=None, file=None, line=None) -> None:
        """Take one warning: its cause and every series it names (the modelling's come one per cause, with their
        series as ``series``: :func:`~extrap_plugins.engine.warn_per_cause`)."""
        from .engine import warned_cause

        text, series = warned_cause(message)
        self.causes.setdefault((type(message), text), []).extend(f"{callpath} [{metric}]"
                                                                 for callpath, metric in series)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        from .engine import cause_apart_from_figures
        from .formatting import WARNED_NAMED, format_warned

        kinds: dict[tuple[type, str], list[tuple[str, list[str]]]] = {}
        for (kind, text), series in self.causes.items():  # a series the report listed with this cause: said there
            unsaid = [name for name in series if (text, name) not in self.shown]
            if unsaid or (not series and (text, "") not in self.shown):
                kinds.setdefault((kind, cause_apart_from_figures(text) if series else text), []).append((text, unsaid))
        lines = []
        for (kind, _), causes in kinds.items():
            every = self.listed if issubclass(kind, QualityWarning) else ""
            if len(causes) <= WARNED_NAMED:
                lines += [format_warned(series, text, every) for text, series in causes]
                continue
            (text, first), *_ = causes  # many causes that differ only in their figures (one per series): one line
            series = [name for _, names in causes for name in names]
            named = format_warned(first, "").rstrip(": ")
            lines.append(format_warned(series, f"{text} (figures of {named}; the others have their own)", every))
        for line in lines[:MAX_WARNINGS_SHOWN]:
            sys.stderr.write(f"{PROG}: warning: {line}\n")
        if len(lines) > MAX_WARNINGS_SHOWN:
            sys.stderr.write(f"{PROG}: warning: {len(lines) - MAX_WARNINGS_SHOWN} more warnings not shown\n")


def _fail(args, message, status: ExitStatus, error: BaseException | None = None) -> int:
    if getattr(args, "traceback", False):
        import traceback

        traceback.print_exception(error or message)
    sys.stderr.write(f"{PROG}: error: {one_line(message)}\n")  # (a value given with a newline in it: still one line)
    return int(status)
