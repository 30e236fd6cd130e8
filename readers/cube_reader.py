"""The ``cube`` reader: Score-P CUBE profiles become an Experiment.

Input is a folder of runs, one sub-folder per run and repetition named by
Extra-P's convention (``mm.x25y10z1.r1/profile.cubex``, see
:mod:`extrap_plugins.readers.cube_names`), or a single ``.cubex`` file whose
folder is named that way, or a folder of ``.cubex`` files named that way.  A
run folder may hold a folder per repetition (``app.p64/r1/profile.cubex``),
and a repetition folder a folder per run (``r1/app.p64/profile.cubex``).

Every metric with data is read (time, visits, bytes, PAPI counters,
min_time/max_time, ...), exclusive by default, and its values over the
locations (ranks, threads, GPU streams) of a run are aggregated to one value
per call path.  Runs are the parts the host reads in parallel; broken runs
are skipped with a warning per cause naming the first file, and when no run
can be read the error names the count and the first; :func:`join` puts the
runs together and reports call paths and metrics found in only some runs.

Options (``--reader-option KEY=VALUE``):

``aggregation``  weak (default) | weak_threaded | strong | max | min
``values``       exclusive (default) | inclusive
``pattern``      where parameters start in a folder name: a prefix or a regex
``mapping``      a CSV ``path,<param>...[,repetition]`` for unconventional names
``parallel``     on (default) | off: off reads all runs in one task
``metrics``, ``callpaths``  comma-separated names and globs (the host passes
                 ``--metric``/``--callpath`` here)
"""

from __future__ import annotations

import fnmatch
import itertools
import pathlib
import re
import warnings
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

import numpy as np

from extrap_plugins.errors import ExtrapWarning, InputError, none_read, skip_warnings
from extrap_plugins.experiment import Experiment, Metric, callpath_hint
from extrap_plugins.formatting import describe_inputs, did_you_mean
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.options import parse_bool
from extrap_plugins.registration import ReaderInfo
from extrap_plugins.joining import coverage_findings, omitted_zeros

from ._common import (EMPTY_FILE, RUN_FOLDER_EXTRAS, SAME_BYTES, SAME_FILE, check_distinct_files, same_bytes,
                      same_file)
from .cube_names import CONVENTION, RunName, is_scorep_default, parse_run_name, read_mapping, repetition_folder
from .cube_tree import AGGREGATIONS

OPTIONS = {
    "aggregation": "how the locations (ranks, threads) of a run combine: weak (mean, default), "
                   "weak_threaded (mean of non-zero), strong (sum), max or min",
    "values": "exclusive (default, as Extra-P) or inclusive",
    "pattern": "where parameters start in a folder name: a literal prefix or a regular expression",
    "mapping": "a CSV file path,<param>...[,repetition] giving each run's parameters",
    "parallel": "on (default): read runs in parallel through the executor; off: in one task",
    "metrics": "only these metrics (comma-separated)",
    "callpaths": "only call paths matching these globs (comma-separated)",
}
VALUES = ("exclusive", "inclusive")
SCOREP_PROFILE = "profile.cubex"  # the name Score-P gives every run's profile
# What else Score-P writes into an experiment directory: passed by without a word when one is given.
SCOREP_FILES = frozenset({"scorep.cfg", "MANIFEST.md", "traces.otf2", "traces.def", "traces"})
WARNING_NOTE = "warning: "  # notes that join() turns into warnings in the main process


@dataclass(frozen=True)
class Settings:
    """The validated reader options."""

    aggregation: str = "weak"
    inclusive: bool = False
    pattern: str | None = None
    mapping: pathlib.Path | None = None
    parallel: bool = True
    metrics: tuple[str, ...] = ()
    callpaths: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunSpec:
    """One profile to read and where it sits in the experiment (picklable, for workers)."""

    path: str
    label: str
    parameters: tuple[str, ...]
    values: tuple[float, ...]
    repetition: int
    notes: tuple[str, ...] = ()
    constants: tuple[tuple[str, float], ...] = ()
    """Parameters left out for having one value in every run, with that value (``Experiment.constants``)."""


@dataclass
class ReadRun:
    """The one run of an input, read already by :func:`parts` (its error is the input's, see there)."""

    path: str
    experiment: Experiment


@dataclass(frozen=True)
class RunSet:
    """All runs of an input as one part (``parallel=off``); ``path`` is the input, as errors name it."""

    path: str
    runs: tuple[RunSpec, ...]


# ------------------------------------------------------------------ options
def parse_options(options: dict) -> Settings:
    """Check the reader options and turn them into :class:`Settings`.

    Raises
    ------
    InputError
        An unknown key (the message lists the known ones) or a bad value.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        hint = " (Extra-P's scaling types are aggregation=weak|weak_threaded|strong)" \
            if {"scaling", "scaling_type"} & set(unknown) else ""
        raise InputError(f"the cube reader has no option {', '.join(map(repr, unknown))}; "
                         f"its options are: {', '.join(OPTIONS)}{hint}")
    aggregation = str(options.get("aggregation", "weak")).strip().lower()
    if aggregation not in AGGREGATIONS:
        raise InputError(f"unknown aggregation {aggregation!r}; expected one of {', '.join(AGGREGATIONS)}")
    values = str(options.get("values", "exclusive")).strip().lower()
    if values not in VALUES:
        raise InputError(f"unknown values {values!r}; expected exclusive or inclusive")
    try:
        parallel = parse_bool(options.get("parallel", "on"), "parallel")
    except ValueError as error:
        raise InputError(str(error)) from None
    mapping = options.get("mapping")
    if mapping is not None:
        mapping = pathlib.Path(str(mapping))
        if not mapping.is_file():
            raise InputError("no such mapping file", mapping)
    pattern = options.get("pattern")
    return Settings(
        aggregation=aggregation,
        inclusive=values == "inclusive",
        pattern=None if pattern is None else str(pattern),
        mapping=mapping,
        parallel=parallel,
        metrics=_names(options.get("metrics", ())),
        callpaths=_names(options.get("callpaths", ())),
    )


def _names(value) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return tuple(str(v) for v in value)


# --------------------------------------------------------------- find runs
def find_runs(path: pathlib.Path | Sequence[pathlib.Path], settings: Settings) -> list[RunSpec]:
    """Every profile of the input with its parameters and repetition.

    ``path`` is a folder of runs, one ``.cubex`` file, or a list of these
    read as one set (parameters with one value in every run are left out
    across the whole list).  Stray files and folders beside the runs are
    skipped with a warning each.

    Raises
    ------
    InputError
        No profiles, a folder name that cannot be parsed, runs that name
        different parameters (naming the folders), or one profile reached
        by two names (a link to a sibling run: it would count twice).
    """
    if settings.mapping is not None:
        parameters, found = _runs_from_mapping(settings.mapping)
        return _number_runs(parameters, found)
    paths = [pathlib.Path(path)] if isinstance(path, (str, pathlib.PurePath)) else [pathlib.Path(p) for p in path]
    named = []
    for one in paths:
        if one.is_file():
            if one.suffix.lower() != ".cubex":
                raise InputError("not a .cubex file", one)
            if one.stat().st_size == 0:  # before its name is read: what is wrong is the file
                raise InputError(EMPTY_FILE, one)
            named.append((one, _file_run_name(one, settings.pattern)))
        elif one.is_dir():
            named.extend(_scan_folder(one, settings.pattern))
        else:
            raise InputError("no such file or folder", one)
    if not named:
        raise InputError("no input given")
    check_distinct_files([profile for profile, _ in named])
    _check_one_program(named, describe_inputs(path))
    parameters, found = _runs_from_names(named)
    return _number_runs(parameters, found)


def _scan_folder(folder: pathlib.Path, pattern: str | None) -> list[tuple[pathlib.Path, tuple[str, RunName]]]:
    """(profile, (label, parsed name)) for the runs in ``folder``; warns about stray entries."""
    runs: list[tuple[pathlib.Path, tuple[str, RunName]]] = []
    direct: list[pathlib.Path] = []
    try:  # a run folder given directly (mm.x1y1z1 holding profile1.cubex, profile2.cubex, or r1/, r2/)
        folder_run, folder_error = parse_run_name(folder.name, pattern, str(folder)), None
    except InputError as error:
        folder_run, folder_error = None, error
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.name in RUN_FOLDER_EXTRAS or entry.name in SCOREP_FILES:
            continue
        if entry.is_dir():
            profiles = _cubex_files(entry)
            number = repetition_folder(entry.name)
            if profiles and folder_run is not None and (number is not None or is_scorep_default(entry.name)):
                named = replace(folder_run, repetition=number)  # one repetition of the run folder given
                runs.extend((profile, (folder.name, named)) for profile in profiles)
            elif profiles:
                parsed = parse_run_name(entry.name, pattern, str(entry))
                runs.extend((profile, (entry.name, parsed)) for profile in profiles)
                if _nested_folders(entry):  # repetition folders beside the run's own profiles
                    runs.extend(_nested_runs(entry, pattern))
            elif _nested_folders(entry):
                runs.extend(_nested_runs(entry, pattern))
            else:
                warnings.warn(ExtrapWarning(f"{entry}: ignored, a folder without .cubex files"), stacklevel=4)
        elif entry.suffix.lower() == ".cubex":
            direct.append(entry)
        else:
            warnings.warn(ExtrapWarning(f"{entry}: ignored, neither a run folder nor a .cubex file"), stacklevel=4)
    if direct:
        # The run folder's files are repetitions; in a folder named by no run, each file names its run (app.p8.cubex).
        for profile in direct:
            if folder_run is not None:
                runs.append((profile, (folder.name, folder_run)))
            elif profile.name == SCOREP_PROFILE:  # Score-P's own file name: only the folder could name the run
                raise folder_error
            else:
                runs.append((profile, (profile.stem, parse_run_name(profile.stem, pattern, str(profile),
                                                                    what="file name"))))
    if not runs:
        raise InputError(f"no CUBE profiles here: expected run folders holding .cubex files "
                         f"({CONVENTION}/profile.cubex) or .cubex files", folder)
    return runs


def _nested_folders(folder: pathlib.Path) -> list[pathlib.Path]:
    """The sub-folders of ``folder`` that hold .cubex files (one repetition each, or one run each)."""
    return [sub for sub in sorted(folder.iterdir())
            if not sub.name.startswith(".") and sub.name not in SCOREP_FILES and sub.is_dir() and _cubex_files(sub)]


def _nested_runs(folder: pathlib.Path, pattern: str | None) -> list[tuple[pathlib.Path, tuple[str, RunName]]]:
    """The runs of a folder of folders: a run's repetitions (``app.p64/r1/profile.cubex``: numbered by
    :func:`repetition_folder`, else in order), or one repetition's runs (``r1/app.p64/profile.cubex``)."""
    runs = []
    repetition = repetition_folder(folder.name)
    if repetition is not None:  # r1/app.p64/profile.cubex
        for sub in _nested_folders(folder):
            parsed = parse_run_name(sub.name, pattern, str(sub))
            named = replace(parsed, repetition=repetition if parsed.repetition is None else parsed.repetition)
            runs.extend((profile, (sub.name, named)) for profile in _cubex_files(sub))
        return runs
    parsed = parse_run_name(folder.name, pattern, str(folder))
    for sub in _nested_folders(folder):
        named = replace(parsed, repetition=repetition_folder(sub.name))
        runs.extend((profile, (folder.name, named)) for profile in _cubex_files(sub))
    return runs


def _file_run_name(path: pathlib.Path, pattern: str | None) -> tuple[str, RunName]:
    """A single file is named by its folder (Score-P's layout), else by its own name."""
    folder = path.parent.resolve()
    try:
        return folder.name, parse_run_name(folder.name, pattern, str(folder))
    except InputError as folder_error:
        try:
            return path.stem, parse_run_name(path.stem, pattern, str(path), what="file name")
        except InputError:
            raise folder_error from None


def _cubex_files(folder: pathlib.Path) -> list[pathlib.Path]:
    return sorted(f for f in folder.iterdir()
                  if f.suffix.lower() == ".cubex" and not f.name.startswith(".") and f.is_file())


def _check_one_program(runs, source: str) -> None:
    """The runs' names start with one program (``lulesh`` of ``lulesh.p64.r1``; runs named by parameters alone go
    with any): runs of two would be read as repetitions of each other."""
    programs: dict[str, set[str]] = {}
    for _, (label, parsed) in runs:
        if parsed.prefix:
            programs.setdefault(parsed.prefix, set()).add(label)
    if len(programs) > 1:
        listed = ", ".join(f"{prefix} ({', '.join(sorted(labels)[:2])}{_more(len(labels) - 2)})"
                           for prefix, labels in sorted(programs.items()))
        raise InputError(f"the runs' names start with {len(programs)} programs: {listed}; read each "
                         f"program's runs on its own, or give --reader-option pattern=REGEX matching every prefix "
                         f"when they name one program", source)


def _more(n: int) -> str:
    return f" and {n} more" if n > 0 else ""


def _runs_from_names(runs) -> tuple[tuple[str, ...], list[tuple[pathlib.Path, str, tuple[float, ...], int | None]]]:
    """Check that every run names the same parameters, in the same order."""
    first_profile, (first_label, first) = runs[0]
    for profile, (label, parsed) in runs[1:]:
        if parsed.parameters != first.parameters:
            raise InputError(
                f"the runs name different parameters: {label} has ({', '.join(parsed.parameters)}) but "
                f"{first_label} has ({', '.join(first.parameters)}); every run must name the same parameters "
                f"in the same order", profile.parent)
    return first.parameters, [(profile, label, parsed.values, parsed.repetition) for profile, (label, parsed) in runs]


def _runs_from_mapping(mapping: pathlib.Path):
    parameters, rows = read_mapping(mapping)
    found = []
    for row in rows:
        if row.path.is_dir():
            profiles = _cubex_files(row.path)
            if not profiles:
                raise InputError(f"{row.path} holds no .cubex file", mapping, row.line)
        elif row.path.is_file():
            profiles = [row.path]
        else:
            raise InputError(f"no such file or folder: {row.path}", mapping, row.line)
        found.extend((profile, row.path.name, row.values, row.repetition, row.line) for profile in profiles)
    pair = same_file([run[0] for run in found])
    if pair is not None:
        blamed, other = found[pair[0]], found[pair[1]]
        raise InputError(f"{blamed[0]}: {SAME_FILE.format(other[0])} (also on line {other[4]})", mapping, blamed[4])
    return parameters, [run[:4] for run in found]


def _number_runs(parameters: tuple[str, ...], found) -> list[RunSpec]:
    """Leave out parameters with one value everywhere; number the repetitions.

    When every run has a ``.r<N>`` (or mapping) number, distinct at its point, the runs keep them (Extra-P's folders
    start at ``r1``, the sweep runner's at ``r0``): a repetition that failed leaves its gap, and the next repetition
    planned (``suggest``, ``autotune``: one above the largest) is one whose folder is not there yet.  Otherwise they
    are numbered 0, 1, ... per point, in the order of those numbers, then of the paths.
    """
    values = np.array([v for _, _, v, _ in found], dtype=np.float64).reshape(len(found), len(parameters))
    varying = np.array([np.unique(values[:, j]).size > 1 for j in range(len(parameters))], dtype=bool)
    notes: tuple[str, ...] = ()
    constants: tuple[tuple[str, float], ...] = ()
    if varying.any() and not varying.all():
        constants = tuple((name, float(values[0, j])) for j, name in enumerate(parameters) if not varying[j])
        constant = [f"{name}={value:g}" for name, value in constants]
        notes = (f"parameters with one value in every run are left out: {', '.join(constant)}",)
        parameters = tuple(p for p, keep in zip(parameters, varying) if keep)
        values = values[:, varying]
    order = sorted(range(len(found)), key=lambda i: (tuple(values[i]), found[i][3] if found[i][3] is not None else -1,
                                                     str(found[i][0])))
    numbers = [run[3] for run in found]
    own = None not in numbers and len({(tuple(values[i]), n) for i, n in enumerate(numbers)}) == len(found)
    if None not in numbers and not own:
        _warn_same_run(found, values, numbers)
    specs: list[RunSpec | None] = [None] * len(found)
    for _, group in itertools.groupby(order, key=lambda i: tuple(values[i])):
        for repetition, i in enumerate(group):
            profile, label, _, _ = found[i]
            specs[i] = RunSpec(str(profile), label, parameters, tuple(float(v) for v in values[i]),
                               numbers[i] if own else repetition, notes, constants)
    return specs  # type: ignore[return-value]


def _warn_same_run(found, values: np.ndarray, numbers: list[int]) -> None:
    """Warn of a profile with the bytes of another of the same point and repetition number (``wk1/mm.x1.r1`` copied
    into ``wk3/``): its measurements count twice.  Profiles that merely share a number (two sweeps numbered alike)
    are repetitions, as read."""
    first: dict[tuple, int] = {}
    for i, n in enumerate(numbers):
        j = first.setdefault((tuple(values[i]), n), i)
        if j != i and same_bytes(found[j][0], found[i][0]):
            warnings.warn(ExtrapWarning(f"{found[i][0]}: {SAME_BYTES.format(found[j][0])}"), stacklevel=4)


# ----------------------------------------------------------------- reading
def read_run(spec: RunSpec, settings: Settings) -> Experiment:
    """Read one profile into an Experiment with one row per (call path, metric) that has data.

    Raises
    ------
    InputError
        The file is missing, truncated or corrupt (naming it).
    """
    from .cube_file import UnsupportedMetricType, open_profile

    notes = list(spec.notes)
    with open_profile(spec.path) as profile:
        selected = _selected_callpaths(profile.callpaths, settings.callpaths)
        codes, metric_codes, values, metrics = [], [], [], []
        empty = []
        for metric in profile.metrics:
            if settings.metrics and metric.name not in settings.metrics:
                continue
            try:
                result = profile.callpath_values(metric, settings.inclusive, settings.aggregation)
            except UnsupportedMetricType:
                warnings.warn(ExtrapWarning(f"metric {metric.name!r} skipped: it holds {metric.data_type} values, "
                                            "not plain numbers"), stacklevel=2)
                continue
            if result is None:
                empty.append(metric.name)
                continue
            per_callpath, has_data = result
            rows = np.flatnonzero(has_data & selected)
            codes.append(rows)
            metric_codes.append(np.full(rows.size, len(metrics), dtype=np.int64))
            values.append(per_callpath[rows])
            metrics.append(metric.as_metric(settings.inclusive))
        if profile.has_duplicate_callpaths:
            n_merged = profile.tree.n_nodes - len(profile.callpaths)
            notes.append(f"{n_merged} call-tree nodes repeat a call path (different call sites or parameters); "
                         f"their values are combined")
    if empty:
        notes.append(f"metrics without data are left out: {', '.join(empty)}")
    codes_all = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
    used, callpath_codes = np.unique(codes_all, return_inverse=True)  # pre-order positions of used call paths
    n = codes_all.size
    experiment = Experiment.from_columns(
        spec.parameters,
        callpath=([profile.callpaths[i] for i in used], callpath_codes.reshape(-1)),
        metric=([m.name for m in metrics], np.concatenate(metric_codes) if metric_codes else np.zeros(0, np.int64)),
        coordinates=np.tile(np.asarray(spec.values, dtype=np.float64), (n, 1)),
        value=np.concatenate(values) if values else np.zeros(0),
        repetition=np.full(n, spec.repetition, dtype=np.int32),
        metrics=metrics,
        source=spec.path,
    )
    experiment.notes = notes
    experiment.constants = dict(spec.constants)
    return experiment


def _selected_callpaths(callpaths: Sequence[str], globs: Sequence[str]) -> np.ndarray:
    """Which call paths match any of the globs (one compiled pattern for all of them)."""
    if not globs:
        return np.ones(len(callpaths), dtype=bool)
    pattern = re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs))
    return np.fromiter((pattern.match(c) is not None for c in callpaths), dtype=bool, count=len(callpaths))


def join_runs(experiments: Sequence[Experiment], source: str, settings: Settings | None = None) -> Experiment:
    """Put the runs of one set together, vectorised.

    A (call path, metric) that has data in some runs and is absent from the
    CUBE index of another run where the call path exists gets 0 there (CUBE
    stores zeros by leaving them out).  Call paths or metrics found in only
    some runs are kept where measured, with a warning note naming them.

    Returns
    -------
    Experiment
        Its ``notes`` hold the runs' notes (once each) and the findings;
        those starting with :data:`WARNING_NOTE` become warnings in
        :func:`emit_warnings`.
    """
    if not experiments:
        raise InputError("no runs to join", source)
    callpath_code: dict[str, int] = {}
    metric_code: dict[str, int] = {}
    metric_objects: dict[str, Metric] = {}
    remapped_cp, remapped_m = [], []
    previous_names: list[str] | None = None
    for e in experiments:
        names = [c.name for c in e.callpaths]
        if names != previous_names:  # the runs of a sweep usually share one call tree: coded once
            cp_map = np.fromiter((callpath_code.setdefault(name, len(callpath_code)) for name in names),
                                 dtype=np.int64, count=len(names))
            previous_names = names
        m_map = np.fromiter((metric_code.setdefault(m.name, len(metric_code)) for m in e.metrics),
                            dtype=np.int64, count=len(e.metrics))
        for m in e.metrics:
            metric_objects.setdefault(m.name, m)
        remapped_cp.append(cp_map[e.callpath_index] if cp_map.size else np.zeros(0, np.int64))
        remapped_m.append(m_map[e.metric_index] if m_map.size else np.zeros(0, np.int64))
    n_cp, n_m, n_runs = len(callpath_code), len(metric_code), len(experiments)
    fill_run, fill_cp, fill_m = omitted_zeros(remapped_cp, remapped_m, n_cp, n_m)
    n_params = len(experiments[0].parameters)
    coordinates = [e.coordinates for e in experiments]
    repetitions = [e.repetition for e in experiments]
    values = [e.value for e in experiments]
    n_filled = fill_run.size
    if n_filled:
        run = fill_run
        remapped_cp.append(fill_cp)
        remapped_m.append(fill_m)
        values.append(np.zeros(n_filled))
        first_row = [e.coordinates[0] if len(e) else np.zeros(n_params) for e in experiments]
        coordinates.append(np.asarray(first_row).reshape(n_runs, n_params)[run])
        repetitions.append(np.asarray([e.repetition[0] if len(e) else 0 for e in experiments], np.int32)[run])
    callpath_names = list(callpath_code)
    metric_names = list(metric_code)
    joined = Experiment.from_columns(
        experiments[0].parameters,
        callpath=(callpath_names, np.concatenate(remapped_cp)),
        metric=(metric_names, np.concatenate(remapped_m)),
        coordinates=np.concatenate(coordinates).reshape(-1, n_params),
        value=np.concatenate(values),
        repetition=np.concatenate(repetitions),
        metrics=list(metric_objects.values()),
        source=source,
    )
    notes = _unique(note for e in experiments for note in e.notes)
    if n_filled:
        notes.append(f"{n_filled} values that a run's CUBE index leaves out (zeros) were filled in as 0")
    cp_runs = np.zeros(n_cp, dtype=np.int64)
    m_in_run = np.zeros((n_runs, n_m), dtype=bool)
    for r, (cp, m) in enumerate(zip(remapped_cp[:n_runs], remapped_m[:n_runs])):
        cp_runs[np.unique(cp)] += 1
        m_in_run[r, m] = True
    findings = coverage_findings(cp_runs, m_in_run, callpath_names, metric_names, [e.source for e in experiments])
    notes.extend(WARNING_NOTE + finding for finding in findings)
    joined.notes = notes
    joined.constants = dict(experiments[0].constants)
    if settings is not None:
        _check_selection(joined, settings, source, experiments[0].source)
    return joined


def _check_selection(experiment: Experiment, settings: Settings, source: str, first_profile: str) -> None:
    """``--metric`` names a metric with data and ``--callpath`` matches a call path; else an error saying which
    names were likely meant (the first profile is opened again for them, on this error path only)."""
    known = {m.name for m in experiment.metrics}
    missing = [m for m in settings.metrics if m not in known]
    if missing:
        declared = [m.name for m in _declared(first_profile).metrics]
        unknown = [m for m in missing if m not in declared]
        if unknown:
            every = f"the metrics are {', '.join(declared)}"
            hint = did_you_mean(unknown[0], declared, every) if len(unknown) == 1 else every
            raise InputError(f"no metric {', '.join(map(repr, unknown))}; {hint}", source)
        raise InputError(f"metric {', '.join(map(repr, missing))} has no data in any run", source)
    if settings.callpaths and not experiment.callpaths:
        hint = callpath_hint(settings.callpaths, _declared(first_profile).callpaths)
        raise InputError(f"no call path matches {', '.join(map(repr, settings.callpaths))}{hint}", source)


def _declared(path: str):
    """What a profile declares: its metrics and call paths (:class:`~.cube_file.CubeProfile`), closed again."""
    from .cube_file import open_profile

    with open_profile(path) as profile:
        return profile


def emit_warnings(experiment: Experiment) -> Experiment:
    """Turn the warning notes into :class:`ExtrapWarning` (once each); keep them as plain notes."""
    plain = []
    for note in experiment.notes:
        if note.startswith(WARNING_NOTE):
            note = note[len(WARNING_NOTE):]
            warnings.warn(ExtrapWarning(note), stacklevel=3)
        plain.append(note)
    experiment.notes = _unique(plain)
    return experiment


def _unique(notes: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(notes))


# ------------------------------------------------------- the host interface
def parts(path: pathlib.Path | Sequence[pathlib.Path], options: dict) -> list:
    """The runs to read: one part per profile, or one part with all of them when ``parallel=off``.

    ``path`` may be a list of folders and files, read as one set.  A single run is read here: a broken one is
    then the error of the input, one line, not a run skipped with a warning and an error repeating it.
    """
    settings = parse_options(options)
    runs = find_runs(path, settings)
    _require_pycubexr(path)  # once, naming the fix, rather than one skipped run per profile
    if len(runs) == 1:
        return [ReadRun(runs[0].path, read_run(runs[0], settings))]
    return runs if settings.parallel else [RunSet(describe_inputs(path), tuple(runs))]


def _require_pycubexr(path) -> None:
    import importlib.util

    if importlib.util.find_spec("pycubexr") is None:
        from .cube_file import INSTALL_HINT

        raise InputError(INSTALL_HINT, describe_inputs(path))


def read_part(part, options: dict) -> Experiment:
    """Read one run (or, with ``parallel=off``, all runs in turn: see :func:`read_runs`)."""
    if isinstance(part, ReadRun):
        return part.experiment
    settings = parse_options(options)
    if isinstance(part, RunSpec):
        return read_run(part, settings)
    return emit_warnings(join_runs(read_runs(part.runs, settings, part.path), part.path))


def read_runs(specs: Sequence[RunSpec], settings: Settings, source: str) -> list[Experiment]:
    """Read the runs in turn in this process, skipping broken ones with a warning per cause (as the host does).

    Raises
    ------
    InputError
        No run could be read: the one run's error, or one naming the count and the first broken run (no
        warning repeats it).
    """
    experiments, problems = [], []
    for spec in specs:
        try:
            experiments.append(read_run(spec, settings))
        except InputError as error:
            problems.append(error)
    if not experiments:
        raise none_read(len(specs), problems, source)
    for message in skip_warnings(problems, len(specs)):
        warnings.warn(message, stacklevel=3)
    return experiments


def join(experiments: Sequence[Experiment], path: pathlib.Path, options: dict) -> Experiment:
    """Join the runs the host read (see :func:`join_runs`) and warn about what only some runs have."""
    return emit_warnings(join_runs(experiments, str(path), parse_options(options)))


def read(path: pathlib.Path | Sequence[pathlib.Path], options: dict) -> Experiment:
    """Read a folder of runs, one ``.cubex`` file, or a list of them as one set, run after run in this process."""
    settings = parse_options(options)
    source, failed = describe_inputs(path), None
    with warnings.catch_warnings(record=True) as caught:  # runs repeat the same warnings: each is said once
        warnings.simplefilter("always")
        try:
            experiments = read_runs(find_runs(path, settings), settings, source)
        except InputError as error:
            failed = error
    for message in _unique_warnings(w.message for w in caught):
        warnings.warn(message, stacklevel=2)
    if failed is not None:
        raise failed
    return emit_warnings(join_runs(experiments, source, settings))


def _unique_warnings(messages: Iterable[Warning]) -> list[Warning]:
    """Each warning text once, in first-seen order (runs repeat the same warnings)."""
    seen: dict[tuple[type, str], Warning] = {}
    for message in messages:
        seen.setdefault((type(message), str(message)), message)
    return list(seen.values())


def sniff(path: pathlib.Path) -> bool:
    """A ``.cubex`` file, or a folder holding ``.cubex`` files or run folders that do."""
    path = pathlib.Path(path)
    if path.is_file():
        return path.suffix.lower() == ".cubex"
    if not path.is_dir():
        return False
    for entry in itertools.islice(path.iterdir(), 200):
        if entry.name.startswith("."):
            continue
        if entry.suffix.lower() == ".cubex" and entry.is_file():
            return True
        if entry.is_dir() and _holds_cubex(entry, depth=2):
            return True
    return False


def _holds_cubex(folder: pathlib.Path, depth: int) -> bool:
    """Whether one of the first entries of ``folder``, or of its sub-folders down to ``depth``, is a .cubex file."""
    for entry in itertools.islice(folder.iterdir(), 50):
        if entry.suffix.lower() == ".cubex" or (depth > 1 and entry.is_dir() and not entry.name.startswith(".")
                                                and _holds_cubex(entry, depth - 1)):
            return True
    return False


READER = ReaderInfo(
    name="cube",
    read=read,
    description="Score-P CUBE profiles: a folder of runs <app>.<name><value>...[.r<N>]/profile.cubex, or one .cubex",
    patterns=("*.cubex",),
    sniff=sniff,
    directories=True,
    options=OPTIONS,
    parts=parts,
    read_part=read_part,
    filters=True,
    join=join,
    omits_zeros=True,
)


@hookimpl
def extrap_readers():
    return [READER]
