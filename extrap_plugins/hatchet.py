"""Hatchet GraphFrames in: any profile Hatchet reads (HPCToolkit, TAU, cProfile, pyinstrument, timemory,
Caliper JSON, ...) becomes an Experiment.

::

    import hatchet as ht
    import extrap_plugins
    frames = [ht.GraphFrame.from_caliperreader(f"lulesh-{p}.cali") for p in (27, 64, 125, 216, 343)]
    experiment = extrap_plugins.from_graphframes(frames, {"p": [27, 64, 125, 216, 343]})
    models = extrap_plugins.model(experiment)

Hatchet is not imported here: the frames are used through their
``dataframe``, ``exc_metrics`` and ``inc_metrics`` and the nodes' ``path()``
and ``frame``, so the function works with any Hatchet (or Thicket) version
that provides those.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .errors import InputError
from .experiment import CALLPATH_SEPARATOR, Experiment


def from_graphframes(
    frames: Sequence[Any],
    parameters: Sequence[Mapping[str, float]] | Mapping[str, Sequence[float]],
    *,
    metrics: Sequence[str] | None = None,
    source: str = "graphframes",
) -> Experiment:
    """One Experiment from Hatchet GraphFrames, one frame per run.

    Parameters
    ----------
    frames : sequence of hatchet.GraphFrame, length n_runs
    parameters : one mapping per frame (``[{"p": 27}, {"p": 64}, ...]``), or
        one sequence of values per parameter name (``{"p": [27, 64, ...]}``).
        Frames with equal parameters are repetitions.
    metrics : sequence of str, optional
        Columns to read; default: the frames' ``exc_metrics`` and
        ``inc_metrics`` (the numeric ones).
    source : str
        What the experiment's ``source`` says.

    Returns
    -------
    Experiment
        Call paths are the node names from the root, joined with ``->``.
        Rows of one node repeated in a frame (one per rank or thread) are
        repetitions at that point; missing values (NaN) are left out.

    Raises
    ------
    InputError
        Parameters that do not match the frames (count, names, non-numeric
        values), or a metric that a frame lacks (naming the frame).
    """
    frames = list(frames)
    if not frames:
        raise InputError("from_graphframes: no frames given")
    names, points = _points(parameters, len(frames), "frame")
    columns = []
    for i, frame in enumerate(frames):
        chosen = list(metrics) if metrics is not None else _default_metrics(frame)
        columns.append(frame_columns(frame.dataframe, chosen, f"frame {i}"))
    return build(names, points, columns, source)


def _default_metrics(frame) -> list[str]:
    listed = list(dict.fromkeys([*getattr(frame, "exc_metrics", []), *getattr(frame, "inc_metrics", [])]))
    frame_df = frame.dataframe
    return [m for m in listed if m in frame_df.columns and np.issubdtype(frame_df[m].dtype, np.number)]


def _points(parameters, n_runs: int, what: str) -> tuple[list[str], np.ndarray]:
    """Parameter names and a (n_runs, n_params) array from either accepted form."""
    if isinstance(parameters, Mapping):
        names = [str(k) for k in parameters]
        columns = [list(v) if not isinstance(v, (str, bytes)) else [v] for v in parameters.values()]
        for name, column in zip(names, columns):
            if len(column) != n_runs:
                raise InputError(f"parameter {name!r} has {len(column)} values for {n_runs} {what}s; "
                                 f"give one value per {what}")
        rows = [dict(zip(names, values)) for values in zip(*columns)] if names else [{}] * n_runs
    else:
        rows = list(parameters)
        if len(rows) != n_runs:
            raise InputError(f"{len(rows)} parameter mappings for {n_runs} {what}s; give one per {what}")
        names = list(dict.fromkeys(str(k) for row in rows for k in row))
    if not names:
        raise InputError("no parameters given; name at least one, e.g. {'p': [...]}")
    points = np.empty((n_runs, len(names)))
    for i, row in enumerate(rows):
        for j, name in enumerate(names):
            if name not in row:
                raise InputError(f"{what} {i} has no value for parameter {name!r}")
            try:
                points[i, j] = float(row[name])
            except (TypeError, ValueError):
                raise InputError(f"{what} {i}: parameter {name}={row[name]!r} is not a number") from None
            if not np.isfinite(points[i, j]):
                raise InputError(f"{what} {i}: parameter {name}={row[name]!r} is not a finite number")
    return names, points


def node_callpath(node) -> str:
    """``main->solve->MPI_Allreduce``: the names of a Hatchet node's path from its root."""
    path = node.path() if callable(getattr(node, "path", None)) else (node,)
    return CALLPATH_SEPARATOR.join(str(n.frame.get("name", n.frame)) if hasattr(n.frame, "get") else str(n.frame)
                                   for n in path)


def frame_columns(dataframe, metrics: Sequence[str], what: str, node_level: int = 0):
    """Call path per row and the values of each metric, from a Hatchet-style DataFrame.

    Returns
    -------
    callpaths : list of str, one per row
    values : dict metric -> ndarray of float64, shape (n_rows,)
    """
    missing = [m for m in metrics if m not in dataframe.columns]
    if missing:
        raise InputError(f"{what} has no metric {', '.join(map(repr, missing))}; its columns: "
                         f"{', '.join(map(str, dataframe.columns))}")
    nodes = dataframe.index.get_level_values(node_level) if dataframe.index.nlevels > 1 else dataframe.index
    cache: dict[int, str] = {}
    callpaths = []
    for node in nodes:
        key = id(node)
        if key not in cache:
            cache[key] = node_callpath(node)
        callpaths.append(cache[key])
    values = {}
    for metric in metrics:
        try:
            values[metric] = dataframe[metric].to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            raise InputError(f"{what}: metric {metric!r} is not numeric") from None
    return callpaths, values


def build(names: Sequence[str], points: np.ndarray, columns, source: str) -> Experiment:
    """An Experiment from per-run (callpaths, values) pairs at ``points[i]``."""
    cp_all, mt_all, vals, rows_of_run = [], [], [], []
    metric_order: list[str] = []
    for i, (callpaths, values) in enumerate(columns):
        cps = np.asarray(callpaths, dtype=object)
        for metric, column in values.items():
            if metric not in metric_order:
                metric_order.append(metric)
            keep = np.isfinite(column)
            cp_all.append(cps[keep])
            mt_all.append(np.full(int(keep.sum()), metric, dtype=object))
            vals.append(column[keep])
            rows_of_run.append(np.full(int(keep.sum()), i))
    value = np.concatenate(vals) if vals else np.zeros(0)
    if value.shape[0] == 0:
        raise InputError("no values: every selected metric is empty in every run")
    run = np.concatenate(rows_of_run)
    callpath = np.concatenate(cp_all)
    metric = np.concatenate(mt_all)
    # Order the rows call path first (in first-seen order), then metric, so the models come in tree order.
    cp_names = list(dict.fromkeys(callpath.tolist()))
    cp_code = {n: k for k, n in enumerate(cp_names)}
    mt_code = {n: k for k, n in enumerate(metric_order)}
    cp_index = np.fromiter((cp_code[c] for c in callpath), dtype=np.int32, count=len(callpath))
    mt_index = np.fromiter((mt_code[m] for m in metric), dtype=np.int32, count=len(metric))
    order = np.lexsort((run, mt_index, cp_index))
    return Experiment.from_columns(
        list(names), callpath=(cp_names, cp_index[order]), metric=(metric_order, mt_index[order]),
        coordinates=points[run[order]], value=value[order], source=source, reader="hatchet",
    )
