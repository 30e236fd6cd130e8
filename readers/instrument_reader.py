"""Reader for the instrument shim's output: one ``*.extrap.jsonl`` file, or a folder of them.

Every line of such a file is one run (see :mod:`extrap_plugins.instrument.output`);
a folder's files are read together as one Experiment, so the folder left by
``extrap-plugins run`` models in one step.  Per-rank fragments (written when
the exit gather could not complete) are joined back into their run when all
ranks are there.  A run in which a rank failed, with ranks missing, or that the
sweep runner declared failed is skipped: one warning per cause, naming the
first run's file and line (a fragment's for a run in fragments); when no run
can be read, one error names the count and the first.

Option ``aggregation`` (``--reader-option aggregation=max``) chooses the
statistic over ranks that becomes the value: ``mean`` (default: per rank),
``sum``, ``min`` or ``max``.
"""

from __future__ import annotations

import json
import math
import pathlib
import re
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from extrap_plugins.errors import ExtrapWarning, InputError, none_read, skip_warnings
from extrap_plugins.experiment import Experiment, Metric
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.instrument.output import (FORMAT, METRIC_INFO, STATISTICS, SUFFIX, VERSION, aggregate,
                                              aggregate_counters)
from extrap_plugins.instrument.regions import METRICS
from extrap_plugins.registration import ReaderInfo

from ._common import check_distinct_files, head_readings, read_text, universal_newlines

NAME = "instrument"
OPTIONS = {"aggregation": "the statistic over ranks: mean (default), sum, min or max"}
_SNIFF = re.compile(rb'"format"\s*:\s*"' + re.escape(FORMAT.encode()) + rb'"')


@hookimpl
def extrap_readers() -> list[ReaderInfo]:
    return [
        ReaderInfo(
            name=NAME,
            read=read,
            description="the instrument shim's runs (*.extrap.jsonl, or a folder of them)",
            patterns=("*" + SUFFIX, "*.jsonl"),  # other *.jsonl too: the content decides
            sniff=sniff,
            directories=True,
            options=OPTIONS,
        )
    ]


def sniff(path: pathlib.Path) -> bool:
    """A file whose first line is a shim record, or a folder holding ``*.extrap.jsonl`` files."""
    try:
        if path.is_dir():
            return any(True for _ in _files(path))
        return _sniff_file(path)
    except OSError:
        return False


def _sniff_file(path: pathlib.Path) -> bool:
    """The first bytes name the shim's format (read as :func:`~._common.head_readings` reads them: in UTF-16 too,
    with or without its byte-order mark, which :func:`~._common.read_text` then reads or refuses, saying so)."""
    return any(_SNIFF.search(data) for data in head_readings(path))


@dataclass
class _Run:
    """One line of a file, checked."""

    path: pathlib.Path
    line: int
    record: dict[str, Any]
    parameters: dict[str, float] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def read(path: pathlib.Path, options: dict[str, str]) -> Experiment:
    """Read one output file or a folder of them into an Experiment.

    Raises
    ------
    InputError
        An unknown option; a line that is not a shim record (file and line
        named); runs with different parameter names; no usable run (the count
        and the first run's cause); a file of the folder reached by two names
        (a link: its runs would count twice).
    """
    path = pathlib.Path(path)
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise InputError(f"the {NAME} reader has no option {', '.join(map(repr, unknown))}; "
                         f"its options are: {', '.join(OPTIONS)}")
    aggregation = options.get("aggregation", "mean")
    if aggregation not in STATISTICS:
        raise InputError(f"aggregation={aggregation!r}: expected one of {', '.join(STATISTICS)}")
    files = sorted(_files(path)) if path.is_dir() else [path]
    if not files:
        raise InputError(f"no *{SUFFIX} files (or other JSON Lines files of the instrument shim) in this folder", path)
    check_distinct_files(files)
    runs: list[_Run] = []
    for file in files:
        runs.extend(_read_file(file, aggregation))
    _warn_programs(runs, path)
    skipped: list[InputError] = []  # why each run that cannot be read cannot
    runs = _join(_drop_failed_launches(runs, skipped), skipped)
    n_runs = len(runs) + len(skipped)
    if skipped and not any(r.record["callpaths"] for r in runs):  # one error, no warning repeating it
        nothing = [InputError(f"the run measured nothing: {NOTHING_MEASURED}", r.path, r.line) for r in runs]
        raise none_read(n_runs, _in_file_order(skipped + nothing), str(path))
    if not runs:
        raise InputError("no run to read: no line holds a run's measurements", path)
    for message in skip_warnings(_in_file_order(skipped), n_runs):
        warnings.warn(message, stacklevel=2)
    return _experiment(_measured(runs, n_runs), aggregation, str(path))


def _warn_programs(runs: list[_Run], path: pathlib.Path) -> None:
    """Warn when the runs are of several programs (each record names its own: ``app`` beside ``jacobi``, two sweeps
    into one folder): their call trees are modelled as one."""
    programs = sorted({str(r.record.get("program") or "") for r in runs} - {""})
    if len(programs) > 1:
        warnings.warn(ExtrapWarning(f"{path}: holds the measurements of {len(programs)} programs "
                                    f"({', '.join(programs)}), modelled as one; read each program's runs alone if "
                                    "they are different programs"), stacklevel=3)


def _in_file_order(errors: list[InputError]) -> list[InputError]:
    """As the runs are (:func:`_join`): by file, then line."""
    return sorted(errors, key=lambda error: (error.path or "", error.line or 0))


def _files(folder: pathlib.Path):
    """``*.extrap.jsonl`` files below ``folder``, and other ``*.jsonl`` files that hold shim records."""
    for candidate in folder.rglob("*.jsonl"):
        if not candidate.is_file() or candidate.name.startswith("."):
            continue
        if candidate.name.endswith(SUFFIX) or _sniff_file(candidate):
            yield candidate


# ---------------------------------------------------------------------- lines
def _read_file(path: pathlib.Path, aggregation: str = "mean") -> list[_Run]:
    text = universal_newlines(read_text(path))
    lines = text.split("\n")
    runs = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            if _cut_short(line, error):  # a write cut short (the shim starts the next run on a line of its own):
                last = "last " if number == len(lines) else ""  # that run is lost, the file is fine
                warnings.warn(ExtrapWarning(f"{path}:{number}: skipped an incomplete {last}line"), stacklevel=3)
                continue
            raise InputError(f"not a JSON object ({error.msg} at column {error.colno})", path, number) from error
        runs.append(_compact(_check(record, path, number), aggregation))
    return runs


def _cut_short(line: str, error: json.JSONDecodeError) -> bool:
    """Whether a line that is no JSON is a record whose write stopped part-way: it starts an object, and does not
    end it or is wrong only where it ends (a line that starts otherwise is no record of ours, cut or not)."""
    line = line.strip()
    return line.startswith("{") and (not line.endswith("}") or error.pos >= len(line))


def _compact(run: _Run, aggregation: str) -> _Run:
    """Keep of a checked run's values only the statistic it is read by (``sum`` for a rank's fragment:
    :func:`_join_fragments` aggregates those), as arrays (null: NaN), and its call paths' names once for all runs.
    As parsed, every run of a folder held four statistics of some 30 bytes a number until all were read: reading
    took 6 to 9 times the files' size, whether streamed or not."""
    record = run.record
    if "verdict" in record:
        return run
    statistic = aggregation if record.get("rank") is None else "sum"
    record["values"] = {metric: {statistic: np.array(columns[statistic], dtype=np.float64)}
                        for metric, columns in record["values"].items()}
    record["callpaths"] = [sys.intern(name) for name in record["callpaths"]]
    return run


_NONE = object()
_REQUIRED = {"parameters": dict, "callpaths": list, "values": dict, "size": int, "ranks": int}


def _check(record: Any, path: pathlib.Path, line: int) -> _Run:
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise InputError(f"not an extrap-plugins instrument record (expected \"format\": \"{FORMAT}\")", path, line)
    version = record.get("version")
    if not isinstance(version, int) or version < 1:
        raise InputError(f"bad version {version!r}; expected an integer", path, line)
    if version > VERSION:
        raise InputError(f"written by a newer extrap-plugins (record version {version}, this reader knows "
                         f"up to {VERSION}); upgrade extrap-plugins", path, line)
    if "verdict" in record:  # the sweep runner's word on a launch
        if record["verdict"] != "failed" or not isinstance(record.get("run"), str):
            raise InputError('bad verdict record: expected "verdict": "failed" and a run id', path, line)
        return _Run(path, line, record)
    for key, kind in _REQUIRED.items():
        if key not in record:
            raise InputError(f"no {key!r}", path, line)
        if not isinstance(record[key], kind):
            raise InputError(f"{key!r} must be a {kind.__name__}, got {type(record[key]).__name__}", path, line)
    parameters = {}
    for name, value in record["parameters"].items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"parameter {name!r} must be a number, got {value!r}", path, line)
        parameters[name] = float(value)
    n_paths = len(record["callpaths"])
    for i, name in enumerate(record["callpaths"]):
        if not isinstance(name, str) or not name:
            raise InputError(f"call path {i + 1} must be a non-empty string, got {json.dumps(name)[:60]}", path, line)
    if not 1 <= record["size"] < 2**31 or not 1 <= record["ranks"] < 2**31:
        raise InputError(f"'size' and 'ranks' must be from 1 to {2**31 - 1}", path, line)
    repetition = record.get("repetition")
    if repetition is not None and (isinstance(repetition, bool) or not isinstance(repetition, int)
                                   or not 0 <= repetition < 2**31):
        raise InputError(f"repetition {json.dumps(repetition)[:60]} must be a whole number from 0 to {2**31 - 1}",
                         path, line)
    _check_values(record["values"], n_paths, path, line)
    rank = record.get("rank")
    if rank is not None and (not isinstance(rank, int) or not 0 <= rank < record["size"]):
        raise InputError(f"rank {rank!r} outside 0..{record['size'] - 1}", path, line)
    return _Run(path, line, record, parameters)


def _check_values(values: dict, n_paths: int, path: pathlib.Path, line: int) -> None:
    """Every metric's statistics: lists of one number (or null) per call path."""
    for metric, columns in values.items():
        if not isinstance(columns, dict):
            raise InputError(f"values of {metric!r} must be an object of statistics", path, line)
        for statistic in STATISTICS:
            column = columns.get(statistic)
            if not isinstance(column, list) or len(column) != n_paths:
                raise InputError(f"values[{metric!r}][{statistic!r}] must be a list of {n_paths} numbers "
                                 f"(one per call path)", path, line)
            bad = next((v for v in column if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                                                or not -1e308 < v < 1e308)), _NONE)
            if bad is not _NONE:
                raise InputError(f"values[{metric!r}][{statistic!r}] holds {json.dumps(bad)[:60]}, not a number",
                                 path, line)


# ----------------------------------------------------------------- fragments
def _drop_failed_launches(runs: list[_Run], skipped: list[InputError]) -> list[_Run]:
    """Remove verdict lines, and the runs (whole or fragments) they declare failed: ``skipped`` gets why, once
    per run, at its first line."""
    failed = {r.record["run"]: r for r in runs if "verdict" in r.record}
    kept, said = [], set()
    for r in runs:
        if "verdict" in r.record:
            continue
        verdict = failed.get(r.record.get("run"))
        if verdict is None:
            kept.append(r)
        elif r.record["run"] not in said:
            said.add(r.record["run"])
            skipped.append(InputError("; ".join(verdict.record.get("errors") or ["failed"]), r.path, r.line))
    return kept


NOTHING_MEASURED = "the program ended before any instrumented region or wrapped MPI call ran (did it exit early?)"


def _measured(runs: list[_Run], n_runs: int) -> list[_Run]:
    """The runs that measured something: a program that ended before any region or wrapped MPI call ran (by
    ``raise SystemExit``, which the shim cannot tell from a normal end) writes a run without call paths.
    ``n_runs`` counts the skipped runs too."""
    empty = [r for r in runs if not r.record["callpaths"]]
    if not empty:
        return runs
    where = ", ".join(f"{name}={value:g}" for name, value in empty[0].parameters.items())
    if len(empty) == len(runs):
        said = "the run measured nothing" if len(runs) == 1 else \
            f"none of the {len(runs)} runs measured anything (the first: {where})"
        raise InputError(f"{said}: {NOTHING_MEASURED}", empty[0].path, empty[0].line)
    warnings.warn(ExtrapWarning(f"{empty[0].where}: {len(empty)} of the {n_runs} runs measured nothing (the first: "
                                f"{where}): {NOTHING_MEASURED}; skipped"), stacklevel=3)
    return [r for r in runs if r.record["callpaths"]]


def _join(runs: list[_Run], skipped: list[InputError]) -> list[_Run]:
    """Whole runs as they are, plus the fragments of each run joined into one; ``skipped`` gets why a run's
    fragments could not be (:func:`_join_fragments`)."""
    whole = [r for r in runs if r.record.get("rank") is None]
    written = {r.record.get("run") for r in whole if r.record.get("run")}
    groups: dict[tuple, list[_Run]] = {}
    for r in runs:
        if r.record.get("rank") is None:
            continue
        if r.record.get("run") in written:
            continue  # rank 0 wrote the run after all: the fragment is a copy
        key = (r.record.get("run"), r.record["size"], tuple(sorted(r.parameters.items())), r.record.get("repetition"))
        groups.setdefault(key, []).append(r)
    for (run, size, _, _), fragments in groups.items():
        joined = _join_fragments(run, size, fragments)
        if isinstance(joined, InputError):
            skipped.append(joined)
        else:
            whole.append(joined)
    whole.sort(key=lambda r: (str(r.path), r.line))
    return whole


def _join_fragments(run: str | None, size: int, fragments: list[_Run]) -> _Run | InputError:
    """The run the fragments of one run make, or why they make none: an error at the first fragment (the others
    are named like it: ``<program>.<run>.rank<N>.extrap.jsonl``), worded alike for every run it befalls so that it
    is said once (:func:`~extrap_plugins.errors.skip_warnings`)."""
    first = min(fragments, key=lambda f: (str(f.path), f.line))
    by_rank: dict[int, _Run] = {}
    for f in fragments:
        other = by_rank.setdefault(f.record["rank"], f)
        if other is not f:
            return InputError(f"rank {f.record['rank']} of the run appears twice (also {other.where})", f.path, f.line)
    failed = [f for f in fragments if f.record.get("status") == "failed"]
    if failed:
        return InputError("; ".join(sorted({e for f in failed
                                            for e in f.record.get("errors") or [f"rank {f.record['rank']} failed"]})),
                          first.path, first.line)
    missing = sorted(set(range(size)) - set(by_rank))
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        return InputError(f"{len(missing)} of the run's {size} ranks left no measurements "
                          f"(rank{'s' if len(missing) > 1 else ''} {shown})", first.path, first.line)
    cut = sorted({e for f in fragments if f.record.get("status") == "terminated" for e in f.record.get("errors") or []})
    if cut:
        files = ", ".join(sorted({str(f.path) for f in fragments}))
        warnings.warn(ExtrapWarning(f"run {run} was {cut[0]} (the job was ended before it finished): its "
                                    f"measurements go up to the signal; files: {files}"), stacklevel=4)
    tables = []
    for rank in range(size):
        record = by_rank[rank].record
        n_paths = len(record["callpaths"])
        rows = np.full((n_paths, len(METRICS)), np.nan)
        for k, metric in enumerate(METRICS):
            if metric in record["values"]:
                rows[:, k] = np.array(record["values"][metric]["sum"], dtype=np.float64)
        tables.append((record["callpaths"], rows))
    callpaths, stats = aggregate(tables, n_ranks=size)
    user = []  # counters recorded with instrument.count/peak: {callpath: {name: value}} per rank
    for rank in range(size):
        record = by_rank[rank].record
        names = [m for m in record["values"] if m not in METRICS]
        sums = {m: record["values"][m]["sum"] for m in names}
        user.append((record["callpaths"], {path: {m: v for m in names if not math.isnan(v := sums[m][k])}
                                           for k, path in enumerate(record["callpaths"])}))
    counters = aggregate_counters(user, callpaths, n_ranks=size)
    first = by_rank[0]
    record = dict(first.record)
    units = {m: {"unit": METRIC_INFO[m][0], "kind": METRIC_INFO[m][1]} for m in METRICS}
    values = {m: {s: stats[m][s] for s in STATISTICS} for m in METRICS if not np.isnan(stats[m]["sum"]).all()}
    for name, columns in counters.items():
        units[name] = (first.record.get("metrics") or {}).get(name, {"unit": "", "kind": "count"})
        values[name] = columns
    record.update(rank=None, ranks=size, callpaths=callpaths, metrics=units, values=values)
    return _Run(first.path, first.line, record, first.parameters)


# ----------------------------------------------------------------- experiment
def _experiment(runs: list[_Run], aggregation: str, source: str) -> Experiment:
    names = list(runs[0].parameters)
    for r in runs[1:]:
        if set(r.parameters) != set(names):
            raise InputError(f"parameters {sorted(r.parameters)} differ from {sorted(names)} in "
                             f"{runs[0].where}; every run must set the same parameters", r.path, r.line)
    all_names = names
    names, dropped = _varying(runs, names)
    callpath_codes: dict[str, int] = {}
    metric_codes: dict[str, int] = {}
    metrics: dict[str, Metric] = {}
    columns: dict[str, list[np.ndarray]] = {"callpath": [], "metric": [], "coordinates": [], "value": [], "run": []}
    for position, r in enumerate(runs):
        codes = np.fromiter((callpath_codes.setdefault(c, len(callpath_codes)) for c in r.record["callpaths"]),
                            dtype=np.int32, count=len(r.record["callpaths"]))
        point = np.array([r.parameters[n] for n in names], dtype=np.float64)
        units = r.record.get("metrics") or {}
        for metric, statistics in r.record["values"].items():
            values = np.array(statistics[aggregation], dtype=np.float64)
            valid = ~np.isnan(values)
            if not valid.any():
                continue
            if metric not in metric_codes:
                metric_codes[metric] = len(metric_codes)
                info = units.get(metric) or {}
                metrics[metric] = Metric(metric, str(info.get("unit", "")), str(info.get("kind", "")))
            n = int(valid.sum())
            columns["callpath"].append(codes[valid])
            columns["metric"].append(np.full(n, metric_codes[metric], dtype=np.int32))
            columns["coordinates"].append(np.broadcast_to(point, (n, len(names))))
            columns["value"].append(values[valid])
            columns["run"].append(np.full(n, position, dtype=np.int32))
    coordinates = np.concatenate(columns["coordinates"])
    repetition, note = _repetitions(runs, np.concatenate(columns["run"]))
    experiment = Experiment.from_columns(
        names,
        callpath=(list(callpath_codes), np.concatenate(columns["callpath"])),
        metric=(list(metric_codes), np.concatenate(columns["metric"])),
        coordinates=coordinates,
        value=np.concatenate(columns["value"]),
        repetition=repetition,
        metrics=list(metrics.values()),
        source=source,
        reader=NAME,
    )
    experiment.notes.extend(n for n in (note, dropped) if n)
    experiment.constants = {n: runs[0].parameters[n] for n in all_names if n not in names}
    return experiment


def _varying(runs: list[_Run], names: list[str]) -> tuple[list[str], str]:
    """Drop parameters with one value in every run (when another one varies): they cannot be modeled."""
    if len(runs) < 2:
        return names, ""
    constant = [n for n in names if len({r.parameters[n] for r in runs}) == 1]
    if not constant or len(constant) == len(names):
        return names, ""
    values = ", ".join(f"{n} = {runs[0].parameters[n]:g}" for n in constant)
    note = f"parameter{'s' if len(constant) > 1 else ''} {values} in every run: not modeled"
    warnings.warn(ExtrapWarning(note), stacklevel=4)
    return [n for n in names if n not in constant], note


def _repetitions(runs: list[_Run], run_of_row: np.ndarray) -> tuple[np.ndarray | None, str]:
    """The runs' own repetition numbers if every run has a distinct one per point, else None (renumber)."""
    numbers = [r.record.get("repetition") for r in runs]
    if any(not isinstance(n, int) for n in numbers):
        return None, ""
    seen = set()
    for r, n in zip(runs, numbers):
        key = (tuple(sorted(r.parameters.items())), n)
        if key in seen:
            return None, ("repetition numbers repeat at some points (several sweeps in one folder?); "
                          "runs were renumbered in file order")
        seen.add(key)
    return np.asarray(numbers, dtype=np.int32)[run_of_row], ""
