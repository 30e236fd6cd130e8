"""Joining runs and selecting from them: the data-model operations every reading path shares.

``join_parts`` puts runs read separately together (the in-memory path, the
streaming path and the CUBE reader all join this way); ``omitted_zeros`` and
``coverage_findings`` say what only some runs measured; ``select_leniently``,
``check_selection`` and ``matching`` apply ``--metric``/``--callpath``.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Iterable, Sequence

import numpy as np

from .errors import InputError
from .experiment import Callpath, Experiment, Metric, callpath_hint, in_parameter_order
from .formatting import format_count


def join_parts(experiments: Sequence[Experiment], source: str = "") -> Experiment:
    """Put runs read separately together, vectorised.

    Call paths and metrics that have values are numbered in first-seen
    order of each run's own lists (so a run's call-tree order is kept);
    rows keep their order, run after run.

    Parameters
    ----------
    experiments : sequence of Experiment, same parameters (in any order: the first's order is kept)
    source : str

    Returns
    -------
    Experiment
        Its notes are the runs' notes, once each.
    """
    if not experiments:
        raise InputError("no runs to join", source or None)
    first = experiments[0]
    names = first.parameter_names
    experiments = [first] + [in_parameter_order(other, first) for other in experiments[1:]]
    callpath_code: dict[str, int] = {}
    metric_code: dict[str, int] = {}
    metrics: list[Metric] = []
    cp_codes, m_codes = [], []
    for e in experiments:
        cp_map = _first_seen([c.name for c in e.callpaths], e.callpath_index, callpath_code)
        m_map = _first_seen([m.name for m in e.metrics], e.metric_index, metric_code, e.metrics, metrics)
        cp_codes.append(cp_map[e.callpath_index])
        m_codes.append(m_map[e.metric_index])
    joined = Experiment(
        parameters=first.parameters,
        callpaths=[Callpath(name) for name in callpath_code],
        metrics=metrics,
        callpath_index=np.concatenate(cp_codes).astype(np.int32),
        metric_index=np.concatenate(m_codes).astype(np.int32),
        coordinates=np.concatenate([e.coordinates for e in experiments]).reshape(-1, len(names)),
        repetition=np.concatenate([e.repetition for e in experiments]).astype(np.int32),
        value=np.concatenate([e.value for e in experiments]).astype(np.float64),
        source=source or first.source,
        reader=first.reader,
    )
    joined.notes = list(dict.fromkeys(note for e in experiments for note in e.notes))
    if all(e.constants == first.constants for e in experiments):  # else a constant varies: where is unknown
        joined.constants = dict(first.constants)
    return joined


def _first_seen(names: list[str], codes: np.ndarray, known: dict[str, int],
                objects: Sequence[Metric] = (), collected: list | None = None) -> np.ndarray:
    """Global codes for a run's names that have rows (in the run's order); -1 for the others."""
    used = np.bincount(codes, minlength=len(names)) > 0 if len(codes) else np.zeros(len(names), bool)
    mapping = np.full(len(names), -1, dtype=np.int64)
    for i in np.flatnonzero(used):
        name = names[i]
        if name not in known:
            known[name] = len(known)
            if collected is not None:
                collected.append(objects[i])
        mapping[i] = known[name]
    return mapping


def omitted_zeros(callpath_codes: Sequence[np.ndarray], metric_codes: Sequence[np.ndarray], n_callpaths: int,
                  n_metrics: int, metric_in_run: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values a run leaves out because they are zero (CUBE's convention).

    A (call path, metric) series with a value in some run is 0 in a run
    that has values for that call path and for that metric but none for
    the pair.  Each run's call paths are those among its rows; this is local
    to call paths, so it can run on any subset of them.

    Parameters
    ----------
    callpath_codes, metric_codes : sequences of int arrays, one pair per run
        Each run's rows, coded in ``0..n_callpaths-1`` and ``0..n_metrics-1``.
    metric_in_run : ndarray of bool, shape (n_runs, n_metrics), optional
        Which metrics each run has values for (default: from the rows given).

    Returns
    -------
    run, callpath, metric : int arrays, shape (n_missing,)
        The cells to fill with 0, run by run.
    """
    n_runs = len(callpath_codes)
    cp_in_run = np.zeros((n_runs, n_callpaths), dtype=bool)
    if metric_in_run is None:
        metric_in_run = np.zeros((n_runs, n_metrics), dtype=bool)
        for r, m in enumerate(metric_codes):
            metric_in_run[r, m] = True
    series_any = np.zeros((n_callpaths, n_metrics), dtype=bool)
    for r, (cp, m) in enumerate(zip(callpath_codes, metric_codes)):
        cp_in_run[r, cp] = True
        series_any[cp, m] = True
    runs, cps, ms = [], [], []
    for r, (cp, m) in enumerate(zip(callpath_codes, metric_codes)):
        have = np.zeros((n_callpaths, n_metrics), dtype=bool)
        have[cp, m] = True
        missing = series_any & cp_in_run[r][:, None] & metric_in_run[r][None, :] & ~have
        if missing.any():
            c, k = np.nonzero(missing)
            runs.append(np.full(c.size, r))
            cps.append(c)
            ms.append(k)
    if not runs:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return np.concatenate(runs), np.concatenate(cps), np.concatenate(ms)


def coverage_findings(callpath_runs: np.ndarray, metric_in_run: np.ndarray, callpath_names: Sequence[str],
                      metric_names: Sequence[str], sources: Sequence[str]) -> list[str]:
    """Say which call paths and metrics only some runs have.

    Parameters
    ----------
    callpath_runs : ndarray of int, shape (n_callpaths,)
        In how many runs each call path has values.
    metric_in_run : ndarray of bool, shape (n_runs, n_metrics)
        A run with none of the metrics (``--metric`` chose one it lacks) is
        said of the metrics, not again of every call path.
    callpath_names, metric_names : sequences of str
    sources : sequence of str, length n_runs
        How to name each run (its file).

    Returns
    -------
    list of str
        One finding for the call paths, one per set of runs missing metrics.
    """
    n_runs = len(sources)
    findings: list[str] = []
    if n_runs < 2:
        return findings
    n_measured = int(metric_in_run.any(axis=1).sum())
    partial = np.flatnonzero(callpath_runs < n_measured)
    if partial.size:
        examples = ", ".join(f"{callpath_names[i]} ({callpath_runs[i]} of {n_measured} runs)" for i in partial[:3])
        more = f" and {partial.size - 3} more" if partial.size > 3 else ""
        are = "is" if partial.size == 1 else "are"
        findings.append(f"{format_count(partial.size, 'call path')} {are} measured in only some runs and {are} kept "
                        f"where measured: {examples}{more}")
    by_runs: dict[tuple[int, ...], list[str]] = {}
    for k in np.flatnonzero(metric_in_run.sum(axis=0) < n_runs):
        by_runs.setdefault(tuple(np.flatnonzero(~metric_in_run[:, k]).tolist()), []).append(metric_names[k])
    for runs, names in by_runs.items():
        missing = [sources[r] for r in runs]
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        what = f"metric {names[0]!r} has" if len(names) == 1 else f"metrics {', '.join(map(repr, names))} have"
        findings.append(f"{what} no data in {len(missing)} of {n_runs} runs ({shown}); kept where measured")
    return findings


def with_rows(names: Sequence, codes: np.ndarray) -> list:
    """The entries of ``names`` that some row uses."""
    used = np.bincount(codes, minlength=len(names)) > 0 if len(codes) else np.zeros(len(names), dtype=bool)
    return [name for name, u in zip(names, used) if u]


def check_selection(metrics: Sequence[str], callpaths: Sequence[str], *, with_values: Iterable[str],
                    declared: Sequence[str], any_callpath: bool, source: str) -> None:
    """Check what ``--metric``/``--callpath`` selected after every run was read.

    Raises
    ------
    InputError
        A metric no run declares (listing the ones they do), a metric with no
        value in any run, or call path globs that match nothing.
    """
    with_values = set(with_values)
    missing = [m for m in metrics if m not in with_values]
    unknown = [m for m in missing if m not in declared]
    if unknown:
        listed = f"; the metrics are {', '.join(declared)}" if declared else " in any run"
        raise InputError(f"no metric {', '.join(map(repr, unknown))}{listed}", source)
    if missing:
        raise InputError(f"metric {', '.join(map(repr, missing))} has no data in any run", source)
    if callpaths and not any_callpath:
        raise InputError(f"no call path matches {', '.join(map(repr, callpaths))}", source)


def select_each(experiments: Sequence[Experiment], metrics: Sequence[str], callpaths: Sequence[str], *,
                selected: Sequence[Experiment] = (), source: str) -> list[Experiment]:
    """Each input's rows of the named metrics and of call paths matching the globs, checked once across all: a
    name need only be in one input (week 2's runs added a metric).  ``selected``: inputs their readers selected
    from already, counted in the check."""
    chosen = [select_leniently(e, metrics, callpaths) for e in experiments]
    every = [*chosen, *selected]
    if callpaths and not any(len(e) for e in every):
        names = list(dict.fromkeys(c.name for e in experiments for c in e.callpaths))
        raise InputError(f"no call path matches {', '.join(map(repr, callpaths))}{callpath_hint(callpaths, names)}",
                         source)
    check_selection(metrics, callpaths, with_values={m.name for e in every for m in with_rows(e.metrics,
                                                                                              e.metric_index)},
                    declared=list(dict.fromkeys(m.name for e in [*experiments, *selected] for m in e.metrics)),
                    any_callpath=True, source=source)
    return chosen


def select_leniently(experiment: Experiment, metrics: Sequence[str], callpaths: Sequence[str]) -> Experiment:
    """The rows of the named metrics and of call paths matching the globs; a run may have none.

    The name lists stay whole (for messages); :func:`check_selection`
    checks the selection once all runs are read.
    """
    if not metrics and not callpaths:
        return experiment
    keep = np.ones(len(experiment), dtype=bool)
    if metrics:
        wanted = np.array([m.name in metrics for m in experiment.metrics], dtype=bool)
        keep &= wanted[experiment.metric_index]
    if callpaths:
        keep &= matching(experiment.callpaths, callpaths)[experiment.callpath_index]
    return experiment.take(keep)


def matching(names: Sequence, globs: Sequence[str]) -> np.ndarray:
    """Which names (call paths) match any of the globs: one compiled pattern for all, shape (n_names,)."""
    pattern = re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs))
    return np.fromiter((pattern.match(str(n)) is not None for n in names), dtype=bool, count=len(names))
