"""Joining runs read separately (the in-memory path, streaming and the CUBE reader share it)."""

from __future__ import annotations

import numpy as np

import extrap_plugins
from extrap_plugins import joining


def test_join_parts_numbers_names_first_seen_in_each_runs_own_order():
    a = extrap_plugins.Experiment.from_columns(
        ["p"], callpath=(["unused", "b", "a"], np.array([2, 1, 2])), metric=(["m2", "m1"], np.array([1, 1, 0])),
        coordinates=[[1], [1], [1]], value=[1.0, 2.0, 3.0], source="a")
    b = extrap_plugins.Experiment.from_columns(["p"], callpath=["c", "b"], metric="m1", coordinates=[[2], [2]],
                                               value=[4.0, 5.0], source="b")
    joined = joining.join_parts([a, b], "both")
    assert [c.name for c in joined.callpaths] == ["b", "a", "c"]
    assert [m.name for m in joined.metrics] == ["m2", "m1"]
    names = [(joined.callpaths[c].name, joined.metrics[m].name, v)
             for c, m, v in zip(joined.callpath_index, joined.metric_index, joined.value)]
    assert names == [("a", "m1", 1.0), ("b", "m1", 2.0), ("a", "m2", 3.0), ("c", "m1", 4.0), ("b", "m1", 5.0)]


def test_omitted_zeros_fill_only_where_the_run_has_the_call_path_and_the_metric():
    # run 0: (0, 0), (0, 1), (1, 0); run 1: (0, 0), (1, 0), (1, 1); run 2: (2, 0) only
    cps = [np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([2])]
    ms = [np.array([0, 1, 0]), np.array([0, 0, 1]), np.array([0])]
    run, cp, m = joining.omitted_zeros(cps, ms, 3, 2)
    assert list(zip(run.tolist(), cp.tolist(), m.tolist())) == [(0, 1, 1), (1, 0, 1)]


def test_coverage_findings_name_partial_call_paths_and_metrics():
    findings = joining.coverage_findings(np.array([3, 2, 1]), np.array([[1, 1], [1, 0], [1, 0]], bool),
                                           ["main", "main->a", "main->b"], ["time", "bytes"], ["r1", "r2", "r3"])
    assert findings == [
        "2 call paths are measured in only some runs and are kept where measured: main->a (2 of 3 runs), "
        "main->b (1 of 3 runs)",
        "metric 'bytes' has no data in 2 of 3 runs (r2, r3); kept where measured"]
