"""Comparing two experiments at the edges: a call path whose time vanishes or appears, metrics whose units differ,
no call path in common, measurements the figures cannot show."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import Experiment, InputError, Metric

P = [4, 8, 16, 32, 64]


def side(series, metrics=(), ps=P):
    """``{callpath: function of p}`` measured at ``ps``, the metric ``time``."""
    return Experiment.from_columns(["p"], callpath=[name for name in series for _ in ps], metric="time",
                                   coordinates=[[p] for _ in series for p in ps],
                                   value=[float(f(p)) for f in series.values() for p in ps], metrics=metrics)


def quietly(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "all values are zero"
        return call()


def test_a_call_path_whose_time_vanishes_or_appears_ranks_first():
    # ranked last with the ratio n/a: |log2(B/A)| is infinite where one side is 0, the largest change there is
    before = side({"main": lambda p: 100 + p, "main->gone": lambda p: 10, "main->idle": lambda p: 0})
    after = side({"main": lambda p: 100 + 2 * p, "main->gone": lambda p: 0, "main->idle": lambda p: 0})
    result = quietly(lambda: extrap_plugins.compare(before, after, target="p=1024"))
    assert [(p.callpath_a, p.ratio_target) for p in result.pairs][:2] == [("main->gone", 0.0),
                                                                           ("main", pytest.approx(2148 / 1124))]
    assert math.isnan(result.pairs[2].ratio_target)  # 0 against 0: no ratio, no change to rank by
    back = quietly(lambda: extrap_plugins.compare(after, before, target="p=1024"))
    assert [(p.callpath_a, p.ratio_largest, p.ratio_target) for p in back.pairs][0] == ("main->gone", math.inf,
                                                                                          math.inf)
    assert str(back).splitlines()[6].split() == ["1", "main->gone", "time", "O(1)", "inf", "inf", "yes", "none"]
    pair = json.loads(extrap_plugins.export_report(back, "json"))["pairs"][0]
    assert (pair["callpath_a"], pair["value_a_target"], pair["value_b_target"], pair["ratio_target"]) == (
        "main->gone", 0.0, 10.0, None)  # JSON has no infinity; the two values say it


def test_b_says_why_its_metric_found_no_partner_when_the_units_differ():
    # B's "main [time]" said "no partner in A": A has it, in ms
    two = [Experiment.from_columns(["p"], callpath="main", metric=["time"] * 5 + ["visits"] * 5,
                                   coordinates=[[p] for p in P] * 2, value=[float(p) for p in P] + [3.0] * 5,
                                   metrics=[Metric("time", unit), Metric("visits", "occ")]) for unit in ("ms", "s")]
    result = extrap_plugins.compare(*two)
    assert [(u.side, u.callpath, u.metric, u.reason) for u in result.unmatched] == [
        ("A", "main", "time", "units differ: ms in A, s in B"),
        ("B", "main", "time", "units differ: ms in A, s in B")]


def test_b_says_which_rule_took_its_partner():
    # B's "main->solve" said "no partner in A": A has it, mapped by a rule to another B call path
    a = side({"main": lambda p: p, "main->solve": lambda p: 2 * p})
    b = side({"main": lambda p: p, "main->solve": lambda p: 2 * p, "main->solve_gpu": lambda p: p})
    result = extrap_plugins.compare(a, b, rules="main->solve=main->solve_gpu")
    assert [(u.side, u.callpath, u.reason) for u in result.unmatched] == [
        ("B", "main->solve", "A's main->solve is mapped to main->solve_gpu by the rule main->solve = main->solve_gpu")]


def test_no_call_path_in_common_names_them_all_when_few():
    # said "(compute, ...)" of a side with one call path
    with pytest.raises(InputError) as error:
        extrap_plugins.compare(side({"compute": lambda p: p}), side({"main": lambda p: p, "main->a": lambda p: p}))
    assert str(error.value) == (
        "no call path of A (compute) matches one of B (main, main->a): map them with mapping=FILE or "
        "rules=['A_CALLPATH=B_CALLPATH'] (--map, --map-rule; '*' for any text)")


def test_a_figure_names_no_measurements_it_does_not_draw():
    # the legend listed "A measured" and "B measured" with no point drawn: none was measured at the target's n
    def grid(factor):
        points = [(p, n) for p in P for n in (100, 200, 400, 800, 1600)]
        return Experiment.from_columns(["p", "n"], callpath="main", metric="time", coordinates=points,
                                       value=[factor * (n / p + p) for p, n in points])

    beyond = extrap_plugins.export_report(extrap_plugins.compare(grid(1), grid(2), target="p=1024,n=3200"), "html")
    assert "A measured" not in beyond and "B measured" not in beyond
    measured = extrap_plugins.export_report(extrap_plugins.compare(grid(1), grid(2), target="p=1024,n=1600"), "html")
    assert "A measured" in measured and "B measured" in measured


@pytest.mark.parametrize("order", [("main->solve", "main->solve_v2"), ("main->solve_v2", "main->solve")])
def test_a_rule_takes_its_b_call_path_before_a_name_does(order):
    # "rules come first": A's main->solve took B's main->solve by name when it came first in A, and the rule's
    # main->solve_v2 was left "already matched"
    functions = {"main->solve": lambda p: p, "main->solve_v2": lambda p: 2 * p}
    a = side({name: functions[name] for name in order})
    result = extrap_plugins.compare(a, side({"main->solve": lambda p: 3 * p}), rules="main->solve_v2=main->solve")
    assert [(p.callpath_a, p.callpath_b) for p in result.pairs] == [("main->solve_v2", "main->solve")]
    assert [(u.side, u.callpath, u.reason) for u in result.unmatched] == [
        ("A", "main->solve", "main->solve in B is already matched to main->solve_v2")]



def test_a_crossover_is_written_as_the_ratios_are():
    # "p=3.8e+04" in the table and the figure, beside ratios written "1.171e4"
    result = extrap_plugins.compare(side({"main": lambda p: 1000 + p}), side({"main": lambda p: 20000 + 0.5 * p}),
                                    target="p=1e6")
    assert result.pairs[0].crossovers[0].value == pytest.approx(38000)
    assert str(result).splitlines()[6].endswith("  p=3.8e4 (B lower after)")
    assert ">crossover p=3.8e4</text>" in extrap_plugins.export_report(result, "html")


def test_a_figure_draws_no_model_below_0_where_the_values_never_are(monkeypatch):
    # B's -100 + 20·log2(p), measured at p = 64..1024 (20 to 100), was drawn down to -100 at p=1 on a linear axis,
    # where the table gives it 0 (as the notebook's curves and the plot exporter cut it)
    from extrap_plugins.reports import compare_report

    drawn = {}
    monkeypatch.setattr(compare_report, "chart", lambda series, **options: drawn.update(series=series, **options))
    a = side({"main": lambda p: 5 + p}, ps=[1, 2, 4, 8, 16])
    b = side({"main": lambda p: -100 + 20 * np.log2(p)}, ps=[64, 128, 256, 512, 1024])
    result = quietly(lambda: extrap_plugins.compare(a, b, target="p=2048"))
    compare_report.figure(result, result.pairs[0])
    curve_b = drawn["series"][1].y
    below = np.isnan(curve_b)
    assert below[0] and not below[-1] and np.all(curve_b[~below] >= 0)
    assert drawn["y_log"] is True  # both curves positive where drawn


@pytest.mark.parametrize("target", ["", " "])
def test_an_empty_target_is_the_largest_common_point_as_in_efficiency(tmp_path, capsys, target):
    # an internal error, exit 1: "TypeError: 'NoneType' object is not subscriptable"
    from extrap_plugins.cli import main

    path = tmp_path / "v1.csv"
    path.write_text("callpath,p,value\n" + "".join(f"main,{p},{100 + p}\n" for p in P))
    assert main(["compare", str(path), str(path), "--target", target]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "largest common point p=64; target p=64 (the largest common point; give --target to extrapolate); "
        "crossovers along p from 4 to 64")


def message(call) -> str:
    with pytest.raises(InputError) as error:
        call()
    return str(error.value)


def test_an_empty_label_or_mapping_path_is_refused_as_on_the_command_line():
    # the label '' made "comparison:  against x; ratios are x/"; the path '' said ": no such mapping file"
    a = side({"main": lambda p: p})
    assert message(lambda: extrap_plugins.compare(a, a, labels=("", "x"))) == (
        "labels (--label): expected two names, A's and B's, such as ('v1', 'v2'); got the tuple ('', 'x') (an empty "
        "name)")
    assert message(lambda: extrap_plugins.compare(a, a, mapping="")) == (
        "mapping (--map): expected the path (str or os.PathLike) of one CSV file of 'A call path,B call path' lines, "
        "got the str ''")
