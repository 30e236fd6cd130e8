"""Joining runs read separately (the in-memory path, streaming and the CUBE reader share it)."""

from __future__ import annotations

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import joining, read
from extrap_plugins.errors import InputError


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


def test_coverage_findings_say_one_call_path_in_the_singular():
    findings = joining.coverage_findings(np.array([2, 1]), np.ones((2, 1), bool), ["main", "main->late"], ["time"],
                                         ["r1", "r2"])
    assert findings == ["1 call path is measured in only some runs and is kept where measured: main->late "
                        "(1 of 2 runs)"]


def test_a_run_without_the_chosen_metric_is_said_of_the_metric_not_of_every_call_path():
    # --metric PAPI_FP_OPS, which run r2 did not count: r2 has no rows at all, and that is one cause, not two
    findings = joining.coverage_findings(np.array([2, 2, 1]), np.array([[1], [0], [1]], bool),
                                         ["main", "main->a", "main->late"], ["PAPI_FP_OPS"], ["r1", "r2", "r3"])
    assert findings == [
        "1 call path is measured in only some runs and is kept where measured: main->late (1 of 2 runs)",
        "metric 'PAPI_FP_OPS' has no data in 1 of 3 runs (r2); kept where measured"]


def test_a_metric_or_call_path_of_one_input_selects_from_several(tmp_path):
    # runs of week 1 measured time only; week 2 added bytes: --metric bytes and --callpath main->b need only be in
    # one input (they were checked against each input alone: "w1.csv: no metric 'bytes'")
    (tmp_path / "w1.csv").write_text("p,value\n2,3\n4,5\n8,9\n")
    (tmp_path / "b.csv").write_text("callpath,metric,p,value\n" + "".join(f"main->b,bytes,{p},{2 * p}\n"
                                                                          for p in (2, 4, 8)))
    inputs = [tmp_path / "w1.csv", tmp_path / "b.csv"]
    chosen = read(inputs, metrics=["bytes"])
    assert [m.name for m in chosen.metrics] == ["bytes"] and len(chosen) == 3
    chosen = read(inputs, callpaths=["main->b"])
    assert [c.name for c in chosen.callpaths] == ["main->b"] and len(chosen) == 3
    # what no input has is still refused, once, naming the inputs
    with pytest.raises(InputError) as refused:
        read(inputs, metrics=["flops"])
    assert str(refused.value) == f"{tmp_path / 'w1.csv'}, {tmp_path / 'b.csv'}: no metric 'flops'; the metrics are " \
                                 "time, bytes"
    with pytest.raises(InputError) as refused:
        read(inputs, callpaths=["main->c"])
    assert str(refused.value) == f"{tmp_path / 'w1.csv'}, {tmp_path / 'b.csv'}: no call path matches 'main->c'; " \
                                 "the call paths are <root>, main->b"


def _weeks(tmp_path):
    """Week 1's CSV names its columns p, n; week 2's n, p (the same parameters): time = 1 + p² · n."""
    (tmp_path / "w1.csv").write_text("p,n,value\n" + "".join(f"{p},{n},{1 + p * p * n}\n"
                                                             for p in (2, 4, 8, 16) for n in (1, 2, 3, 4, 5)))
    (tmp_path / "w2.csv").write_text("n,p,value\n" + "".join(f"{n},32,{1 + 32 * 32 * n}\n" for n in (1, 2, 3, 4, 5)))
    return [tmp_path / "w1.csv", tmp_path / "w2.csv"]


def test_inputs_that_name_the_same_parameters_in_another_order_are_joined_by_name(tmp_path):
    # (they were refused: "w2.csv: parameters ['n', 'p'] differ from ['p', 'n'] in w1.csv")
    joined = read(_weeks(tmp_path))
    assert joined.parameter_names == ["p", "n"]
    at_32 = joined.coordinates[:, 0] == 32
    assert sorted(joined.coordinates[at_32, 1]) == [1, 2, 3, 4, 5]
    assert list(joined.value[at_32]) == [1 + 1024 * n for n in joined.coordinates[at_32, 1]]
    a, b = (extrap_plugins.read(path) for path in _weeks(tmp_path))
    assert np.array_equal(joining.join_parts([a, b]).coordinates, joined.coordinates)


@pytest.mark.parametrize("stream", ["off", "on"])
def test_the_model_of_inputs_naming_parameters_in_another_order_is_the_model_of_one(tmp_path, capsys, stream):
    from extrap_plugins.cli import main
    assert main(["model", *map(str, _weeks(tmp_path)), "--stream", stream]) == 0
    assert capsys.readouterr().out.splitlines()[2].split() == ["<root>", "time", "1", "+", "1", "·", "p^2", "·", "n",
                                                               "1.0000", "0.00%"]


def test_inputs_of_other_parameters_are_still_refused(tmp_path):
    (tmp_path / "w1.csv").write_text("p,n,value\n2,1,3\n")
    (tmp_path / "w2.csv").write_text("p,m,value\n2,1,3\n")
    with pytest.raises(InputError) as refused:
        read([tmp_path / "w1.csv", tmp_path / "w2.csv"])
    assert str(refused.value) == f"{tmp_path / 'w2.csv'}: parameters (p, m) differ from (p, n) in {tmp_path / 'w1.csv'}"
