"""The command line: ``extrap-plugins model|plugins|run``.

Every command is one API call plus argument parsing and printing.
:func:`main` handles errors around :func:`program`, which does the work.
"""

from __future__ import annotations

import argparse
import enum
import os
import sys
import warnings
from typing import Sequence

from . import api
from .errors import ExtrapError, InputError, PluginError
from .executors import EXECUTORS, MPI_LAUNCH, WorkerLost, end_mpi_job
from .experiment import MEASURES
from .exporters import JSON_VERSION, JSON_VERSIONS
from .extrapolation import SORT_KEYS

PLOT_STYLES = ("lines", "heatmap")
from .plugins import get_host

PROG = "extrap-plugins"
MAX_WARNINGS_SHOWN = 20


class ExitStatus(enum.IntEnum):
    OK = 0
    ERROR = 1  # a bug or an unexpected failure
    BAD_INPUT = 2  # the user's files, options or values are wrong
    PLUGIN_ERROR = 3  # a plugin is broken or two plugins collide
    INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Empirical performance modeling: learn a PMNF model per call path and metric.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--traceback", action="store_true", help="show the full traceback on errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    model = commands.add_parser("model", help="read measurements and print one model per call path and metric")
    model.add_argument("inputs", nargs="+", metavar="INPUT", help="a file or folder of measurements (several are joined)")
    model.add_argument("--reader", help="reader name (default: chosen by file name, then by content)")
    model.add_argument("--reader-option", action="append", default=[], metavar="KEY=VALUE",
                       help="an option for the reader (repeatable)")
    model.add_argument("--modeler", default="default", help="modeler name (default: %(default)s)")
    model.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                       help="an option for the modeler (repeatable)")
    model.add_argument("--measure", choices=MEASURES, default="mean",
                       help="how repetitions are reduced before fitting (default: %(default)s)")
    model.add_argument("--metric", action="append", default=[], metavar="NAME", help="only this metric (repeatable)")
    model.add_argument("--callpath", action="append", default=[], metavar="GLOB",
                       help="only call paths matching this glob, e.g. 'main->*' (repeatable)")
    model.add_argument("--export", default="text", metavar="NAME", help="exporter name (default: %(default)s)")
    model.add_argument("--export-option", action="append", default=[], metavar="KEY=VALUE",
                       help="an option for the exporter (repeatable)")
    model.add_argument("-o", "--output", metavar="PATH", help="write here instead of stdout")
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
    model.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                       help="progress bar on stderr (auto: only when stderr is a terminal)")
    model.add_argument("--executor", choices=EXECUTORS, default="auto",
                       help="where independent work runs: serial, process (--jobs workers), or mpi "
                            f"(start as '{MPI_LAUNCH}'); auto: process when there is enough work")
    model.add_argument("--jobs", type=int, metavar="N", help="worker processes for --executor process")
    model.add_argument("--stream", choices=("auto", "on", "off"), default="auto",
                       help="read run by run into --scratch and model block by block, never holding all "
                            "measurements (auto: for inputs over 2 GiB)")
    model.add_argument("--scratch", metavar="DIR", help="folder for streamed runs (default: $EXTRAP_PLUGINS_SCRATCH "
                                                        "or the temporary folder; shared by all nodes for MPI)")

    commands.add_parser("plugins", help="list every reader, modeler and exporter and who provides it")

    from .instrument import sweep

    run = commands.add_parser("run", help="run an instrumented program at several process counts and parameter "
                                          "values (extrap_plugins.instrument), ready to model")
    sweep.add_arguments(run)
    return parser


def program(args: argparse.Namespace) -> ExitStatus:
    if args.command == "model":
        return _model_command(args)
    if args.command == "plugins":
        return _plugins_command()
    if args.command == "run":
        from .instrument import sweep

        return ExitStatus(sweep.run(args))
    raise AssertionError(f"unhandled command {args.command}")


def _model_command(args: argparse.Namespace) -> ExitStatus:
    from . import streaming

    if streaming.should_stream(args.inputs, args.stream):
        return _stream_command(args)
    selected = api.read(args.inputs if len(args.inputs) > 1 else args.inputs[0], reader=args.reader,
                        metrics=args.metric, callpaths=args.callpath, executor=args.executor, jobs=args.jobs,
                        **parse_options(args.reader_option, "--reader-option"))
    total = len({(int(c), int(m)) for c, m in zip(selected.callpath_index, selected.metric_index)}) \
        if len(selected) < 2_000_000 else None
    from tqdm import tqdm

    show = {"on": True, "off": False}.get(args.progress, sys.stderr.isatty())
    with tqdm(total=total, disable=not show, file=sys.stderr, unit="series", desc="modeling") as bar:
        model_set = api.model(selected, args.modeler, measure=args.measure, progress=bar.update,
                              executor=args.executor, jobs=args.jobs, **parse_options(args.option, "--option"))
    options = {**parse_options(args.export_option, "--export-option"), **export_options(args)}
    text = api.export(model_set, args.export, args.output, **options)
    if text is not None:
        sys.stdout.write(text)
    return ExitStatus.OK


def _stream_command(args: argparse.Namespace) -> ExitStatus:
    from tqdm import tqdm

    from .streaming import stream_models

    if args.target is not None:
        warnings.warn("streamed models carry no measurements: prediction intervals at --target are left out "
                      "(--stream off computes them)", stacklevel=2)
    show = {"on": True, "off": False}.get(args.progress, sys.stderr.isatty())
    with tqdm(disable=not show, file=sys.stderr, unit="series", desc="modeling") as bar:
        model_set = stream_models(args.inputs, args.reader, args.modeler, metrics=args.metric,
                                  callpaths=args.callpath, measure=args.measure, executor=args.executor,
                                  jobs=args.jobs, scratch=args.scratch, progress=bar.update,
                                  reader_options=parse_options(args.reader_option, "--reader-option"),
                                  **parse_options(args.option, "--option"))
    options = {**parse_options(args.export_option, "--export-option"), **export_options(args)}
    text = api.export(model_set, args.export, args.output, **options)
    if text is not None:
        sys.stdout.write(text)
    return ExitStatus.OK


def export_options(args: argparse.Namespace) -> dict[str, object]:
    """The exporter options the dedicated flags stand for (only those given)."""
    options: dict[str, object] = {}
    if args.target is not None:
        options["target"] = args.target
    if args.sort is not None:
        options["sort"] = args.sort
    if args.export == "json":
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


def _plugins_command() -> ExitStatus:
    from tabulate import tabulate

    host = get_host()
    rows = []
    for kind, table in (("reader", host.readers), ("modeler", host.modelers), ("exporter", host.exporters)):
        for name, registered in sorted(table.items()):
            rows.append([kind, name, registered.distribution, registered.info.description])
    sys.stdout.write(tabulate(rows, headers=["kind", "name", "provided by", "description"], tablefmt="simple") + "\n")
    return ExitStatus.OK


def parse_options(pairs: Sequence[str], flag: str) -> dict[str, object]:
    """``["terms=2", "negative=true"]`` -> ``{"terms": 2, "negative": True}``.

    Values become int, float or bool when they look like one, else stay text.
    """
    options: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise InputError(f"{flag} {pair!r}: expected KEY=VALUE")
        options[key] = _convert(value.strip())
    return options


def _convert(value: str) -> object:
    lowered = value.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI: errors become one line on stderr and an exit status, never a traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    shown = [0]
    hidden = [0]

    def show_warning(message, category, filename, lineno, file=None, line=None):
        if shown[0] < MAX_WARNINGS_SHOWN:
            sys.stderr.write(f"{PROG}: warning: {message}\n")
            shown[0] += 1
        else:
            hidden[0] += 1

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = show_warning
            status = program(args)
            if hidden[0]:
                sys.stderr.write(f"{PROG}: warning: {hidden[0]} more warnings not shown\n")
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


def _fail(args, message, status: ExitStatus, error: BaseException | None = None) -> int:
    if getattr(args, "traceback", False):
        import traceback

        traceback.print_exception(error or message)
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return int(status)
