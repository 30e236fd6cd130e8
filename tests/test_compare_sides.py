"""Comparing two experiments as a user would: the sides' parameters in another order, warnings of many series,
identical inputs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import Experiment
from extrap_plugins.cli import main

P = [4, 8, 16, 32, 64]
N = [100, 200, 400, 800, 1600]


def grid(order, function=lambda p, n: (n / p + 2 * p) * (1 + 0.002 * np.sin(p * n))):
    """``main [time]`` on P × N, its parameters in ``order``."""
    points = [(p, n) for p in P for n in N]
    coordinates = [[{"p": p, "n": n}[name] for name in order] for p, n in points]
    return Experiment.from_columns(list(order), callpath="main", metric="time", coordinates=coordinates,
                                   value=[function(p, n) for p, n in points])


def test_the_intervals_of_b_hold_when_its_parameters_come_in_another_order():
    # B's experiment has (n, p): its prediction interval was taken on swapped columns, [0, 1.1e4] around 2050
    result = extrap_plugins.compare(grid(("p", "n")), grid(("n", "p")), target="p=1024,n=1600")
    pair = result.pairs[0]
    assert pair.value_b_target == pytest.approx(pair.value_a_target, rel=1e-12)
    assert pair.interval_b == pytest.approx(pair.interval_a, rel=1e-9)


def test_a_warning_of_several_series_keeps_every_series_of_both_sides():
    zero = Experiment.from_columns(["p"], callpath=["main->a"] * 5 + ["main->b"] * 5 + ["main"] * 5, metric="time",
                                   coordinates=[[p] for p in P] * 3, value=[0.0] * 10 + [float(p) for p in P])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        extrap_plugins.compare(zero, zero)
    said = [str(w.message) for w in caught if "all values are zero" in str(w.message)]
    # was "A: main->a [time] and B: main->a [time]: ...": a warning of several series kept its first only
    assert said == ["A: main->a [time] and 3 more series (their Model.warnings say it): all values are zero"]


def test_cli_a_warning_of_several_series_names_them_all(tmp_path, capsys):
    path = tmp_path / "zero.csv"
    path.write_text("callpath,p,value\n" + "".join(f"main,{p},{p}\nmain->a,{p},0\nmain->b,{p},0\n" for p in P))
    assert main(["compare", str(path), str(path)]) == 0
    err = capsys.readouterr().err
    assert err == "extrap-plugins: warning: A: main->a [time] and 3 more series: all values are zero\n"


def test_identical_inputs_say_no_difference(tmp_path, capsys):
    # the report said "significant: the 95% prediction intervals at the target do not overlap" and nothing else
    path = tmp_path / "v1.csv"
    path.write_text("callpath,p,value\n" + "".join(f"main,{p},{100 + p}\nmain->solve,{p},{3 * p}\n" for p in P))
    assert main(["compare", str(path), str(path), "--label", "A=v1", "--label", "B=again"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[out.index("models:") - 2] == "no difference: v1 and again have the same model in every pair (2 pairs)"
    html = extrap_plugins.export_report(extrap_plugins.compare(path, path), "html")
    assert "<dd>no difference: A and B have the same model in every pair (2 pairs)</dd>" in html


def test_the_report_counts_the_pairs_that_differ_significantly_at_the_target():
    a = Experiment.from_columns(["p"], callpath=["main"] * 5 + ["old"] * 5, metric="time",
                                coordinates=[[p] for p in P] * 2, value=[100.0 + p for p in P] + [1.0 * p for p in P])
    b = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[p] for p in P],
                                value=[20.0 + 2 * p for p in P])
    lines = str(extrap_plugins.compare(a, b, target="p=1024")).splitlines()
    assert lines[lines.index("models:") - 2] == "significantly different at p=1024: 1 of 1 pair; 1 unmatched"


def test_a_unit_only_one_side_gives_is_a_warning_once():
    # a CSV in ms against a CUBE in seconds: the ratios (0.001) were said without a word on the units
    def side(unit, scale):
        metrics = [extrap_plugins.Metric("time", unit)] if unit else ()
        return Experiment.from_columns(["p"], callpath=["main"] * 5 + ["main->a"] * 5, metric="time",
                                       coordinates=[[p] for p in P] * 2, value=[scale * p for p in P] * 2,
                                       metrics=metrics)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = extrap_plugins.compare(side("", 1000.0), side("sec", 1.0))
    assert [str(w.message) for w in caught] == [
        "metric time: B gives its unit, sec, A none: A's values are compared as if they were in sec (convert them "
        "if not)"]
    assert [pair.ratio_largest for pair in result.pairs] == [pytest.approx(0.001)] * 2


def test_a_figure_says_at_which_point_its_ratio_is():
    # the caption said "B/A at the target: 1.84", not where the target was
    a = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[p] for p in P],
                                value=[100.0 + p for p in P])
    b = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[p] for p in P],
                                value=[20.0 + 2 * p for p in P])
    html = extrap_plugins.export_report(extrap_plugins.compare(a, b, labels=("v1", "v2"), target="p=1024"), "html")
    assert "; v2/v1 at p=1024: 1.84</figcaption>" in html


@pytest.mark.parametrize("arguments, message", [
    (["--target", "p=1024"], "target 'p=1024': give a value for n as well"),
    (["--target", "p=8,n=1600"], "the target p=8 is below the largest measured p=16: the target must be at least it"),
    (["--along", "q"], "along 'q' (--along): no such parameter; the parameters are p, n"),
])
def test_cli_a_bad_target_or_along_is_refused_before_the_modelling(tmp_path, capsys, arguments, message):
    # the modelling ran first: its warning (4 values of n) came before the error
    path = tmp_path / "pn.csv"
    path.write_text("callpath,p,n,value\n" + "".join(f"main,{p},{n},{n / p + p}\n" for p in (2, 4, 8, 16)
                                                     for n in (100, 200, 400, 1600)))
    assert main(["compare", str(path), str(path), *arguments]) == 2
    assert capsys.readouterr().err == f"extrap-plugins: error: {message}\n"
