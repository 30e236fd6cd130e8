"""What the overhead, work and E of a call path are of (its own value, or with its children), in every output; and a
call path whose own overhead is negative (it scales superlinearly) among others whose overhead grows."""

from __future__ import annotations

import csv
import html
import io
import json

import numpy as np
import pytest

import extrap_plugins

PS = (1, 2, 4, 8, 16, 32)


def one_parameter(functions):
    """One call path per ``functions`` entry (name -> T(p)), measured at every p of :data:`PS`."""
    return extrap_plugins.Experiment.from_columns(
        ["p"], callpath=np.repeat(list(functions), len(PS)), metric="time",
        coordinates=np.tile(np.array(PS, dtype=float)[:, None], (len(functions), 1)),
        value=[float(f(p)) for f in functions.values() for p in PS], source="synthetic")


INCLUSIVE = {"main": lambda p: 100 / p + np.log2(p), "main->a": lambda p: 100 / p, "main->b": lambda p: np.log2(p)}
EXCLUSIVE = {"main": lambda p: 1.0, "main->a": lambda p: 100 / p, "main->b": lambda p: np.log2(p)}


@pytest.mark.parametrize("functions, values, scope, phrase, main_overhead", [
    (INCLUSIVE, "inclusive", "with children", "with its children", 2048.0),  # 256·8 + 100 − 100
    (EXCLUSIVE, "exclusive", "own", "each call path's own, without its children", 255.0),  # 256·1 − 1
])
def test_every_output_says_whose_overhead_work_and_e_a_call_path_has(functions, values, scope, phrase,
                                                                     main_overhead):
    # main's overhead was "overhead 2048" with inclusive values and "overhead 255" with exclusive ones, under the
    # same header: nothing said that one is main with its children and the other main alone
    result = extrap_plugins.efficiency(one_parameter(functions), target=256, values=values)
    main = next(c for c in result.callpaths if c.callpath == "main")
    assert main.overhead_target == pytest.approx(main_overhead)
    assert result.callpath_scope == scope
    title = f"overhead per call path at p=256 (overhead growth, overhead, work and E {phrase}), ranked by own share"
    text = extrap_plugins.export_report(result, "text")
    assert f"\n{title}, so the limiter comes first:\n" in text
    document = json.loads(extrap_plugins.export_report(result, "json"))
    assert document["callpath_scope"] == scope
    rows = list(csv.DictReader(io.StringIO(extrap_plugins.export_report(result, "csv"))))
    assert {r["kind"]: r["scope"] for r in rows} == {"total": "whole program", "callpath": scope}
    page = extrap_plugins.export_report(result, "html")
    assert f"<h2>O{html.escape(title[1:])}, so the limiter comes first</h2>" in page


def test_a_flat_input_says_its_overhead_is_with_what_a_call_path_calls():
    result = extrap_plugins.efficiency(one_parameter({"main": lambda p: 100 / p + np.log2(p),
                                                      "comm": lambda p: np.log2(p)}), target=256, total="main")
    assert result.flat and result.callpath_scope == "with what it calls"
    assert ("overhead per call path at p=256 (overhead growth, overhead, work and E with what it calls), ranked by "
            "share") in extrap_plugins.export_report(result, "text")


def faster_compute():
    """main = compute + comm: compute's C = 100 − 0.1·log2(p) gets faster than 1/p (its overhead at p=256 is −0.8),
    comm's C = 0.05·p·log2(p) grows (102.4); main's overhead, 101.6, is their sum."""
    return one_parameter({"main": lambda p: (100 - 0.1 * np.log2(p)) / p + 0.05 * np.log2(p),
                          "main->compute": lambda p: (100 - 0.1 * np.log2(p)) / p,
                          "main->comm": lambda p: 0.05 * np.log2(p)})


def test_a_call_path_whose_overhead_is_negative_is_no_inconsistency_of_its_children_or_its_siblings():
    # main->compute, which calls nothing, was inconsistent as "its modelled children's overhead, 0, exceeds its own,
    # -0.8", and main->comm as "its overhead, 102.4, exceeds its parent's, 101.6", which is 102.4 − 0.8 exactly
    with pytest.warns(UserWarning, match="terms of opposite sign"):
        result = extrap_plugins.efficiency(faster_compute(), target=256)
    reasons = {c.callpath: c.inconsistency for c in result.callpaths}
    assert reasons.pop("main").endswith("is its overhead less its modelled children's, and that of main->comm is "
                                        "inconsistent")  # its own overhead is 0, give or take rounding
    assert reasons == {"main->compute": "", "main->comm": "its overhead, 102.4, exceeds the whole program's, 101.6"}
    compute = next(c for c in result.callpaths if c.callpath == "main->compute")
    assert compute.own_overhead_share_target == pytest.approx(-0.8 / 101.6)
    assert compute.overhead_share_target == pytest.approx(-0.8 / 101.6)
