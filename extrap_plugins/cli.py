"""The command line: ``extrap-plugins model|plugins|suggest|run``.

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

import numpy as np

from . import api
from .errors import ExtrapError, InputError, PluginError
from .executors import EXECUTORS, MPI_LAUNCH, WorkerLost, end_mpi_job
from .experiment import MEASURES
from .exporters.json_exporter import JSON_VERSION, JSON_VERSIONS
from .extrapolation import SORT_KEYS
from .options import guess_type

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

    suggest = commands.add_parser(
        "suggest", help="say which runs to do next (experiment design: where the models are uncertain)",
        description="Suggest the next runs: the base design that fits the budget (lines of values through a "
                    "common corner), then the runs that narrow the models' intervals at the target most per "
                    "unit of cost, until every judged kernel's interval is within --tolerance or the budget "
                    "is spent (--strategy cheapest: seed 002's cheapest-first heuristic with a hold-out check).")
    suggest.add_argument("inputs", nargs="*", metavar="INPUT",
                         help="measurements so far (their values are candidates, their points are done)")
    add_design_arguments(suggest)
    suggest.add_argument("--export", metavar="PLAN.json", help="also write the runs as a plan file")
    suggest.add_argument("--reader", help="reader name for the inputs")
    suggest.add_argument("--reader-option", action="append", default=[], metavar="KEY=VALUE",
                         help="an option for the reader (repeatable)")
    suggest.add_argument("--strategy", choices=["uncertainty", "cheapest"], default="uncertainty",
                         help="uncertainty (default): largest expected narrowing of the interval at the target "
                              "per unit of cost; cheapest: seed 002's cheapest point first")
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
    autotune.add_argument("--max-steps", type=int, default=50, metavar="N",
                          help="at most N rounds of suggest and run (default: %(default)s)")
    autotune.add_argument("--progress", choices=["auto", "on", "off"], default="on",
                          help="one line per round on stderr (default: on)")
    autotune.add_argument("program", nargs=argparse.REMAINDER, metavar="-- PROGRAM [ARGS]",
                          help="the instrumented program, after --")
    from .instrument import sweep

    run = commands.add_parser("run", help="run an instrumented program at several process counts and parameter "
                                          "values (extrap_plugins.instrument), ready to model")
    sweep.add_arguments(run)
    return parser


def add_design_arguments(parser: argparse.ArgumentParser) -> None:
    """The options ``suggest`` and ``autotune`` share."""
    parser.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2,...",
                        help="candidate values of a parameter, e.g. p=4,8,16,32,64 (repeatable)")
    parser.add_argument("--cost", metavar="EXPR",
                        help="cost of one run: a product such as 'p' or 'p*n^2', or 'uniform' "
                             "(default: the product of the resource parameters p, procs, ranks, nodes, threads...)")
    parser.add_argument("--budget", metavar="SHARE|Cu|N",
                        help="limit for the whole design: a share of the full factorial's cost (15%%, 0.15), a cost "
                             "in the cost model's units (400u) or a number of points (20)")
    parser.add_argument("--repetitions", type=int, metavar="N", help="repetitions per run (default: advised)")
    parser.add_argument("--tolerance", type=float, default=None, metavar="SHARE",
                        help="stopping rule: relative half-width of the 95%% interval at the target (uncertainty) "
                             "or error of the hold-out prediction (cheapest) (default 0.05)")
    parser.add_argument("--target", metavar="P=V,...",
                        help="where the models must be accurate (default: one step beyond the largest candidates)")
    parser.add_argument("--modeler", default="default", help="modeler (default: %(default)s)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option for the modeler (repeatable)")
    parser.add_argument("--measure", choices=MEASURES, default="mean", help="how repetitions are reduced")
    parser.add_argument("--metric", action="append", default=[], metavar="NAME",
                        help="judge the models of this metric only (repeatable)")
    parser.add_argument("--callpath", action="append", default=[], metavar="GLOB",
                        help="judge the models of these call paths only (repeatable)")


def program(args: argparse.Namespace) -> ExitStatus:
    if args.command == "model":
        return _model_command(args)
    if args.command == "plugins":
        return _plugins_command()
    if args.command == "suggest":
        return _suggest_command(args)
    if args.command == "autotune":
        return _autotune_command(args)
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
                        **parse_options(args.reader_option, "--reader-option", reserved=READ_FLAGS))
    series = selected.callpath_index.astype("int64") * max(len(selected.metrics), 1) + selected.metric_index
    total = int(np.count_nonzero(np.bincount(series))) if len(series) else 0
    from tqdm import tqdm

    show = {"on": True, "off": False}.get(args.progress, sys.stderr.isatty())
    with tqdm(total=total, disable=not show, file=sys.stderr, unit="series", desc="modeling") as bar:
        model_set = api.model(selected, args.modeler, measure=args.measure, progress=bar.update,
                              executor=args.executor, jobs=args.jobs,
                              **parse_options(args.option, "--option", reserved=MODEL_FLAGS))
    options = {**parse_options(args.export_option, "--export-option", reserved=EXPORT_FLAGS), **export_options(args)}
    text = api.export(model_set, args.export, args.output, executor=args.executor, jobs=args.jobs, **options)
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
                                  reader_options=parse_options(args.reader_option, "--reader-option",
                                                               reserved=READ_FLAGS),
                                  **parse_options(args.option, "--option", reserved=STREAM_FLAGS))
    options = {**parse_options(args.export_option, "--export-option", reserved=EXPORT_FLAGS), **export_options(args)}
    text = api.export(model_set, args.export, args.output, executor=args.executor, jobs=args.jobs, **options)
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


def _suggest_command(args: argparse.Namespace) -> ExitStatus:
    from . import design

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
    result = design.suggest(
        space, experiment, cost=args.cost, budget=args.budget, repetitions=args.repetitions,
        tolerance=design.TOLERANCE if args.tolerance is None else args.tolerance, modeler=args.modeler,
        measure=args.measure, metrics=args.metric, callpaths=args.callpath, strategy=args.strategy,
        target=args.target, **parse_options(args.option, "--option", reserved=DESIGN_FLAGS))
    if args.export:
        design.write_plan(args.export, result.plan)
    sys.stdout.write(format_suggestion(result, space))
    return ExitStatus.OK


def format_suggestion(result, space) -> str:
    """The suggestion as text: what the space is, the runs as a table, and what to do after."""
    from tabulate import tabulate

    names = space.parameters
    sizes = " × ".join(f"{n} ({v.size} values)" for n, v in zip(names, space.values))
    lines = [
        f"design space: {sizes} = {result.full_points} points; cost of a run: "
        f"{result.cost_model.text or '1'} (full factorial: {result.full_cost:g})",
        f"measured so far: {result.measured_points} points, "
        f"{result.measured_cost / result.full_cost if result.full_cost else 0:.1%} of the full factorial's cost",
        f"repetitions per run: {result.repetitions_reason if result.repetitions_reason != 'given' else result.repetitions}",
    ]
    heading = {
        "base": "next: the base design (a line of values per parameter through a common corner, and one point "
                "off the lines)",
        "add": ("next: the runs that narrow the intervals at the target most per unit of cost; measure them "
                "(the first at least), then run suggest again with all measurements"
                if result.strategy == "uncertainty" else
                "next: the cheapest point not measured yet; measure it, then run suggest again with all "
                "measurements"),
        "done": "no further runs needed",
        "budget": "the budget is spent: no further runs fit",
    }[result.status]
    if result.status == "add" and result.holdout is not None:
        point = ", ".join(f"{n}={v:g}" for n, v in zip(names, result.holdout["point"]))
        heading += (f" (the model without ({point}) predicts it only within {result.holdout['worst']:.1%})")
    lines.append(heading)
    lines.extend(format_widths(result))
    if result.plan.runs:
        rows, spent = [], result.measured_cost
        for k, run in enumerate(result.plan.runs, 1):
            spent += run.cost
            rows.append([k, *(f"{run.point[n]:g}" for n in names), run.repetitions, f"{run.cost:g}",
                         f"{spent / result.full_cost if result.full_cost else 0:.1%}", run.role])
        table = tabulate(rows, headers=["#", *names, "repetitions", "cost", "share so far", "why"],
                         tablefmt="simple", disable_numparse=True)
        lines.extend(["", table, ""])
        lines.append(f"planned: {len(result.plan.runs)} runs; with the measured ones {result.share:.1%} of the "
                     f"full factorial's cost")
    lines.extend(f"note: {note}" for note in result.notes)
    return "\n".join(lines) + "\n"


def format_widths(result) -> list[str]:
    """The judged kernels' intervals at the target, before and (as expected) after the plan."""
    if not result.widths:
        return []
    from .formatting import format_point

    where = format_point(result.target, brackets=True)
    lines = [f"interval at the target {where} (95 %, relative half-width):"]
    ranked = sorted(result.widths.items(), key=lambda kv: -kv[1])
    for name, width in ranked[:10]:
        after = f" -> ±{result.predicted[name]:.1%} expected after the plan" if result.predicted else ""
        lines.append(f"  {name}: ±{width:.1%}{after}")
    if len(ranked) > 10:
        lines.append(f"  ... {len(ranked) - 10} more kernels")
    if result.not_judged:
        lines.append(f"  not judged: {len(result.not_judged)} kernels (zero or below 1 % of their metric's "
                     f"largest at the target)")
    return lines


def _autotune_command(args: argparse.Namespace) -> ExitStatus:
    from . import autotune, design

    command = list(args.program)
    if command and command[0] == "--":
        command = command[1:]
    result = autotune.autotune(
        parse_params(args.param), command, args.output, cost=args.cost, budget=args.budget,
        repetitions=args.repetitions, tolerance=design.TOLERANCE if args.tolerance is None else args.tolerance,
        target=args.target, modeler=args.modeler, measure=args.measure, metrics=args.metric,
        callpaths=args.callpath, mpiexec=args.mpiexec, mpiexec_args=args.mpiexec_arg, timeout=args.timeout,
        max_steps=args.max_steps, progress=args.progress != "off",
        options=parse_options(args.option, "--option", reserved=DESIGN_FLAGS))
    sys.stdout.write(autotune.summary(result))
    return ExitStatus.OK if result.status in ("done", "budget") else ExitStatus.ERROR


def parse_params(pairs: Sequence[str]) -> dict[str, list[float]]:
    """``["p=4,8,16", "n=1e3,2e3"]`` -> ``{"p": [4.0, 8.0, 16.0], "n": [1000.0, 2000.0]}``."""
    params: dict[str, list[float]] = {}
    for pair in pairs:
        name, sep, values = pair.partition("=")
        name = name.strip()
        try:
            numbers = [float(v) for v in values.split(",") if v.strip()]
        except ValueError:
            numbers = []
        if not sep or not name or not numbers:
            raise InputError(f"--param {pair!r}: expected NAME=V1,V2,... with numbers, such as p=4,8,16,32,64")
        if name in params:
            raise InputError(f"--param {name} is given twice; list all its values once")
        params[name] = numbers
    return params


# Keys that name an argument of the API call itself, with the flag to use instead.
READ_FLAGS = {"reader": "--reader", "metrics": "--metric", "callpaths": "--callpath",
              "executor": "--executor", "jobs": "--jobs", "host": None}
MODEL_FLAGS = {"modeler": "--modeler", "measure": "--measure", "metrics": "--metric", "callpaths": "--callpath",
               "progress": "--progress", "executor": "--executor", "jobs": "--jobs", "host": None}
STREAM_FLAGS = {**MODEL_FLAGS, "scratch": "--scratch", "reader_options": "--reader-option", "reader": "--reader"}
DESIGN_FLAGS = {"modeler": "--modeler", "measure": "--measure", "metrics": "--metric", "callpaths": "--callpath",
                "target": "--target", "budget": "--budget", "cost": "--cost", "tolerance": "--tolerance",
                "repetitions": "--repetitions", "strategy": "--strategy", "host": None, "exclude": None}
EXPORT_FLAGS = {"exporter": "--export", "path": "-o", "executor": "--executor", "jobs": "--jobs", "host": None}


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
