"""Hatchet GraphFrames in: any profile Hatchet reads (HPCToolkit, TAU, cProfile, pyinstrument, timemory,
Caliper JSON, ...) becomes an Experiment.

::

    import hatchet as ht
    import extrap_plugins
    frames = [ht.GraphFrame.from_caliperreader(f"lulesh-{p}.cali") for p in (27, 64, 125, 216, 343)]
    experiment = extrap_plugins.from_graphframes(frames, {"p": [27, 64, 125, 216, 343]})
    models = extrap_plugins.model(experiment)

Hatchet is not imported here: the frames are used through their
``dataframe``, ``exc_metrics``, ``inc_metrics`` and ``metadata`` and the nodes'
``path()`` and ``frame``, so the function works with any Hatchet (or Thicket)
version that provides those.

Whether a metric's values include the children's is taken from the frames
(:func:`metric_values`): Hatchet's ``inc_metrics``, the names (``time (inc)``,
Caliper's ``avg#inclusive#sum#time.duration``) and, for frames read from
Caliper's spot profiles, the ``spot.metrics`` metadata.  A node name
containing the call-path separator ``->`` is refused, as by the caliper
reader (:func:`node_callpath`).
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .errors import InputError
from .experiment import CALLPATH_SEPARATOR, Experiment, Metric


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
    frames = _checked_frames(frames)
    names, points = _points(parameters, len(frames), "frame")
    columns = []
    for i, frame in enumerate(frames):
        chosen = metric_names(metrics) if metrics is not None else _default_metrics(frame)
        columns.append(frame_columns(frame.dataframe, chosen, f"frame {i}"))
    hints = [metric_values(list(values), getattr(frame, "exc_metrics", ()), getattr(frame, "inc_metrics", ()),
                           spot_metrics(getattr(frame, "metadata", None) or {}))
             for frame, (_, values) in zip(frames, columns)]
    return build(names, points, columns, source, hints)


def read_argument(value: Any) -> str:
    """What to pass ``extrap_plugins.read`` in a message's advice: the path given, or ``files``.

    >>> read_argument("x.cali"), read_argument(3), read_argument("main\\n└─ solve\\n")
    ("'x.cali'", 'files', 'files')
    """
    if isinstance(value, (str, os.PathLike)) and not _is_text(os.fspath(value)):
        return repr(os.fspath(value))
    return "files"


def _is_text(value: Any) -> bool:
    """Whether ``value`` is a text of several lines (what ``tk.tree()`` returns), not a path."""
    return isinstance(value, str) and "\n" in value.strip("\n")


def _read_cali(value: Any) -> str:
    """How to model .cali files instead, for the message of a call given ``value``."""
    return (f"read .cali files with extrap_plugins.read({read_argument(value)}), or make a GraphFrame of each with "
            f"hatchet.GraphFrame.from_caliperreader(file)")


def given(value: Any) -> str:
    """What a call was given, for its error message: ``the str 'x.cali'``, ``a list of 2 str``, ``an int``.

    >>> given("x.cali"), given(["a", "b"]), given(3), given("main\\n└─ solve\\n")
    ("the str 'x.cali'", 'a list of 2 str', 'an int', "a text of 2 lines ('main'; what tree() prints?)")
    """
    if _is_text(value):
        lines = value.strip().splitlines()
        return f"a text of {len(lines)} lines ({lines[0][:60]!r}; what tree() prints?)"
    if isinstance(value, (str, bytes)):
        return f"the {type(value).__name__} {value[:80]!r}"
    if isinstance(value, os.PathLike):
        return f"the path {os.fspath(value)!r}"
    if isinstance(value, (list, tuple)) and value:
        kinds = {_type_name(item) for item in value}
        return f"a {type(value).__name__} of {len(value)} {kinds.pop() if len(kinds) == 1 else 'items'}"
    name = _type_name(value)
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def is_thicket(value: Any) -> bool:
    """Whether ``value`` has what a Thicket is used through here (its ``dataframe``, ``metadata`` and
    ``statsframe``)."""
    return all(hasattr(value, name) for name in ("dataframe", "metadata", "statsframe"))


def _checked_frames(frames: Any) -> list:
    """``frames`` as a list of GraphFrame-like objects, or the InputError saying what was given instead."""
    if is_thicket(frames):
        raise InputError("from_graphframes: expected a list of hatchet GraphFrames, one per run, got a Thicket; "
                         "model a Thicket with extrap_plugins.from_thicket(tk)")
    if hasattr(frames, "dataframe"):
        raise InputError(f"from_graphframes: expected a list of hatchet GraphFrames, one per run, got one "
                         f"({_type_name(frames)}); give a list: from_graphframes([gf, ...], parameters)")
    if isinstance(frames, (str, bytes, os.PathLike, Mapping)) or hasattr(frames, "columns") \
            or not isinstance(frames, Iterable):  # a pandas DataFrame iterates over its column names
        raise InputError(f"from_graphframes: expected a list of hatchet GraphFrames, one per run, got "
                         f"{given(frames)}; {_read_cali(frames)}")
    frames = list(frames)
    if not frames:
        raise InputError("from_graphframes: no frames given")
    for i, frame in enumerate(frames):
        if is_thicket(frame):
            raise InputError(f"from_graphframes: frame {i} is a Thicket, not a GraphFrame; model a Thicket with "
                             f"extrap_plugins.from_thicket(tk), the Thicket of every profile (not its groupby)")
        if not hasattr(frame, "dataframe"):
            raise InputError(f"from_graphframes: expected a list of hatchet GraphFrames, one per run, but frame {i} "
                             f"is {given(frame)}; {_read_cali(frame)}")
    return frames


def spot_metrics(metadata: Mapping) -> list[str]:
    """The Caliper attributes a spot profile lists in its ``spot.metrics`` metadata (none for other frames)."""
    listed = metadata.get("spot.metrics") if hasattr(metadata, "get") else None
    if not isinstance(listed, str):
        return []
    return [name.strip() for name in listed.split(",") if name.strip()]


def metric_values(names: Sequence[str], exc_metrics: Iterable[str] = (), inc_metrics: Iterable[str] = (),
                  spot: Iterable[str] = ()) -> dict[str, str]:
    """Whether each metric's values include the children's, as far as a frame says (:attr:`Metric.values
    <extrap_plugins.experiment.Metric.values>`).

    In this order: a metric named by a Caliper attribute, or the spot controller's alias of one listed in the
    frame's ``spot.metrics`` (``Avg time/rank`` for ``avg#inclusive#sum#time.duration``), as that attribute's
    name says (:func:`~extrap_plugins.readers.caliper_reader.values_of_attribute`); a name ending in ``(inc)``,
    or listed in ``inc_metrics``: inclusive; listed in ``exc_metrics`` while ``inc_metrics`` is not empty:
    exclusive.  Hatchet's Caliper reader lists aliased metrics under ``exc_metrics`` whatever they are (it looks
    for ``inclusive`` in the alias), so ``exc_metrics`` alone says nothing; where nothing says, ``""``.

    >>> metric_values(["time", "time (inc)", "visits"], ["time", "visits"], ["time (inc)"])
    {'time': 'exclusive', 'time (inc)': 'inclusive', 'visits': 'exclusive'}
    >>> metric_values(["Avg time/rank"], ["Avg time/rank"], [], ["avg#inclusive#sum#time.duration"])
    {'Avg time/rank': 'inclusive'}
    """
    from .readers.caliper_reader import SPOT_ALIASES, values_of_attribute

    known: dict[str, str] = {}
    for attribute in spot:
        hint = values_of_attribute(attribute)
        if hint:
            known[attribute] = hint
            if attribute in SPOT_ALIASES:
                known[SPOT_ALIASES[attribute]] = hint
    inclusive, exclusive = set(inc_metrics), set(exc_metrics)
    result = {}
    for name in names:
        hint = known.get(name) or values_of_attribute(name)
        if not hint and (name.endswith("(inc)") or name in inclusive):
            hint = "inclusive"
        elif not hint and name in exclusive and inclusive:
            hint = "exclusive"
        result[name] = hint
    return result


def metric_names(metrics: str | Iterable[str]) -> list[str]:
    """The metrics asked for as a list: a string names one metric (not one per character).

    >>> metric_names("Avg time/rank"), metric_names(("time", "time (inc)"))
    (['Avg time/rank'], ['time', 'time (inc)'])
    """
    return [metrics] if isinstance(metrics, str) else list(metrics)


def _default_metrics(frame) -> list[str]:
    listed = list(dict.fromkeys([*getattr(frame, "exc_metrics", []), *getattr(frame, "inc_metrics", [])]))
    frame_df = frame.dataframe
    return [m for m in listed if m in frame_df.columns and np.issubdtype(frame_df[m].dtype, np.number)]


def _points(parameters, n_runs: int, what: str) -> tuple[list[str], np.ndarray]:
    """Parameter names and a (n_runs, n_params) array from either accepted form."""
    if isinstance(parameters, Mapping):
        names = [str(k) for k in parameters]
        for name, value in zip(names, parameters.values()):
            if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
                raise InputError(f"parameter {name!r} has the value {value!r} for {n_runs} {what}s; give one value "
                                 f"per {what} ({{{name!r}: [27, 64, ...]}})")
        columns = [list(v) for v in parameters.values()]
        for name, column in zip(names, columns):
            if len(column) != n_runs:
                raise InputError(f"parameter {name!r} has {len(column)} values for {n_runs} {what}s; "
                                 f"give one value per {what}")
        rows = [dict(zip(names, values)) for values in zip(*columns)] if names else [{}] * n_runs
    else:
        rows = list(parameters) if isinstance(parameters, Iterable) and not isinstance(parameters, (str, bytes)) \
            else [parameters]
        if not all(isinstance(row, Mapping) for row in rows):
            forms = "one list of values per name ({'p': [27, 64, ...]}) or one mapping per frame ([{'p': 27}, ...])"
            if isinstance(parameters, str):
                key = repr(parameters)
                forms += f"; from the frames' metadata: {{{key}: [gf.metadata[{key}] for gf in frames]}}"
            raise InputError(f"from_graphframes: parameters: got {given(parameters)}; give {forms}")
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


def node_callpath(node, what: str = "", labels: Mapping[int, str] | None = None) -> str:
    """``main->solve->MPI_Allreduce``: the names of a Hatchet node's path from its root.

    A node is named as Hatchet shows it: by ``labels`` (``id(node)`` -> the dataframe's ``name`` column, which
    names HPCToolkit's statement nodes ``cpi.c:30``), else by its frame's ``name``.

    Raises
    ------
    InputError
        A name containing the call-path separator ``->`` (C++'s ``operator->``), naming ``what`` holds it: the
        call path would read as nested nodes and merge with a nested call path of those names, so it is refused
        rather than renamed, as by the caliper reader
        (:func:`~extrap_plugins.readers.caliper_reader.callpath_of` says why).  A node of a call graph (several
        parents, or a cycle: cProfile's recursion), which has no one call path.
    """
    labels = labels or {}
    path = _path(node, what, labels)
    names = [labels.get(id(n)) or _frame_name(n) for n in path]
    for name in names:
        if CALLPATH_SEPARATOR in name:
            where = f"{what}: " if what else ""
            raise InputError(f"{where}node {name!r} contains the call-path separator {CALLPATH_SEPARATOR!r}: its "
                             f"call path would read as nested nodes and could merge with a nested call path; rename "
                             f"the node (its region in the program)")
    return CALLPATH_SEPARATOR.join(names)


def _frame_name(node) -> str:
    frame = node.frame
    return str(frame.get("name", frame)) if hasattr(frame, "get") else str(frame)


def _path(node, what: str, labels: Mapping[int, str]) -> list:
    """The nodes from a root down to ``node``, walked up its ``parents`` (a node without them: its ``path()``).

    Raises
    ------
    InputError
        A node with several parents or on a cycle (a call graph, as cProfile gives for recursion).
    """
    if not hasattr(node, "parents"):
        return list(node.path()) if callable(getattr(node, "path", None)) else [node]
    path, seen = [node], {id(node)}
    while node.parents:
        if len(node.parents) > 1 or id(node.parents[0]) in seen:
            parents = sorted(dict.fromkeys(labels.get(id(n)) or _frame_name(n) for n in node.parents))
            where = f"{what}: " if what else ""
            raise InputError(f"{where}node {labels.get(id(node)) or _frame_name(node)!r} is called from "
                             f"{', '.join(map(repr, parents))}{' (a cycle)' if len(node.parents) == 1 else ''}: "
                             f"the frame is a call graph (cProfile and gprof give one where a function recurses or "
                             f"has several callers), not a call tree, so the node has no one call path; model "
                             f"call-tree profiles (Caliper, HPCToolkit, TAU, pyinstrument)")
        node = node.parents[0]
        seen.add(id(node))
        path.append(node)
    return path[::-1]


def node_labels(dataframe, node_level: int = 0) -> dict[int, str]:
    """``id(node)`` -> the node's name in a Hatchet-style DataFrame's ``name`` column (empty without one): how
    Hatchet shows a node, also one whose frame has no ``name`` (HPCToolkit's statement ``cpi.c:30``)."""
    if "name" not in dataframe.columns:
        return {}
    nodes = dataframe.index.get_level_values(node_level) if dataframe.index.nlevels > 1 else dataframe.index
    labels: dict[int, str] = {}
    for node, label in zip(nodes, dataframe["name"]):
        if isinstance(label, str) and label:
            labels.setdefault(id(node), label)
    return labels


def frame_columns(dataframe, metrics: Sequence[str], what: str, node_level: int = 0):
    """Call path per row and the values of each metric, from a Hatchet-style DataFrame.

    Nodes are named by the dataframe's ``name`` column where it has one, as Hatchet shows them
    (:func:`node_callpath`).  Rows of distinct nodes with one call path (two ``solve`` loops of ``main``, at
    different lines; HPCToolkit's ``<unknown procedure>`` siblings) and the same other index levels (rank,
    thread, profile) are one row: their values add up, as Caliper books a call path's time, where a metric has
    any (NaN where none has).

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
    labels = node_labels(dataframe, node_level)
    cache: dict[int, str] = {}
    callpaths = []
    for node in nodes:
        key = id(node)
        if key not in cache:
            cache[key] = node_callpath(node, what, labels)
        callpaths.append(cache[key])
    values = {metric: numeric_column(dataframe, metric, what) for metric in metrics}
    others = [dataframe.index.get_level_values(level) for level in range(dataframe.index.nlevels)
              if level != node_level]
    keys = list(zip(callpaths, *others))
    if len(set(keys)) == len(keys):
        return callpaths, values
    rows: dict[tuple, list[int]] = {}
    for row, key in enumerate(keys):
        rows.setdefault(key, []).append(row)
    merged = {}
    for metric, column in values.items():
        parts = [column[members] for members in rows.values()]
        merged[metric] = np.array([part[~np.isnan(part)].sum() if not np.isnan(part).all() else np.nan
                                   for part in parts])
    return [key[0] for key in rows], merged


def numeric_column(dataframe, metric: str, what: str) -> np.ndarray:
    """The column ``metric`` of a Hatchet-style DataFrame as float64, missing values NaN.

    Raises
    ------
    InputError
        The column is not numeric (``name``), naming ``what`` holds it.
    """
    try:
        return dataframe[metric].to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise InputError(f"{what}: metric {metric!r} is not numeric") from None


def build(names: Sequence[str], points: np.ndarray, columns, source: str,
          hints: Sequence[Mapping[str, str]] = ()) -> Experiment:
    """An Experiment from per-run (callpaths, values) pairs at ``points[i]``; ``hints`` (one mapping per run, metric
    -> :attr:`Metric.values <extrap_plugins.experiment.Metric.values>`) say whether values are inclusive, ``""``
    where runs disagree.  A metric without a value in any run is left out."""
    cp_all, mt_all, vals, rows_of_run = [], [], [], []
    metric_order: list[str] = []
    for i, (callpaths, values) in enumerate(columns):
        cps = np.asarray(callpaths, dtype=object)
        for metric, column in values.items():
            keep = np.isfinite(column)
            if metric not in metric_order and keep.any():
                metric_order.append(metric)
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
    said = [{hint.get(m, "") for hint in hints} for m in metric_order]
    metrics = [Metric(m, values=kinds.pop() if len(kinds) == 1 else "") for m, kinds in zip(metric_order, said)]
    return Experiment.from_columns(
        list(names), callpath=(cp_names, cp_index[order]), metric=(metric_order, mt_index[order]),
        coordinates=points[run[order]], value=value[order], metrics=metrics, source=source, reader="hatchet",
    )
