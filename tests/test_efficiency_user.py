"""Efficiency as a new user meets it: models below zero, --measure, the limiter's growth, measurements that contradict
the models at the level, the largest p as printed, a target that is no number. Known answers in closed form."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

import extrap_plugins
from extrap_plugins import Experiment, Factor, Model, Term
from extrap_plugins.cli import main
from extrap_plugins.models import ModelSet

ROOT = Path(__file__).resolve().parents[1]
PS = np.array([1, 2, 4, 8, 16, 32, 64], dtype=float)


def write(path: Path, rows: list[tuple[str, float, float]]) -> Path:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["callpath", "p", "value"])
        writer.writerows(rows)
    return path


def model_set(model: Model, values: np.ndarray) -> ModelSet:
    """Models of T taken as they are, with measurements ``values`` of ``main`` at :data:`PS`."""
    measured = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=PS[:, None], value=values)
    return ModelSet(("p",), [model], experiment=measured)


# ------------------------------------------------------------- a model below zero
def falling_below_zero() -> ModelSet:
    """T = 1000/p − 0.5·log2(p): C = p·T = 1000 − 0.5·p·log2(p) is 0 at p·log2(p) = 2000 (p ≈ 250.9)."""
    t = Model("main", "time", ("p",), 0.0, (Term(1000.0, {"p": Factor(-1, 0)}), Term(-0.5, {"p": Factor(0, 1)})))
    return model_set(t, 1000 / PS - 0.5 * np.log2(PS))


ZERO = brentq(lambda p: p * np.log2(p) - 2000, 2, 1e4)


def test_a_model_below_zero_has_no_efficiency_and_no_largest_p_beyond_its_zero():
    result = extrap_plugins.efficiency(falling_below_zero())  # target 512, beyond the zero
    target = result.rows[-1]
    assert target.point["p"] == 512 and target.resource == pytest.approx(1000 - 0.5 * 512 * 9)  # -1304
    assert math.isnan(target.efficiency) and math.isnan(target.speedup)  # was E = -0.7669, S = -392.6
    assert math.isnan(result.callpaths[0].efficiency_target)
    assert result.largest_p_at_level is None  # was 250.9: the pole of W / C, not where E falls below 0.8
    assert result.largest_p_note == (
        f"E stays at or above 0.8 up to p={ZERO:.4g}, where the model of the total's C = p·T falls to zero: beyond it "
        f"the model predicts no time, so where E falls below 0.8 is unknown")
    assert result.notes[0] == (
        f"the model of the total's C = p·T falls to zero or below from p={ZERO:.4g} on (at the target, -1304): a time "
        f"of zero or less is no time, so E and S there are n/a; the model is not to be trusted beyond the data")
    text = str(result)
    assert "512 (target)  -2.547  -1304      1000  -2304        n/a        n/a" in text
    document = json.loads(extrap_plugins.export_report(result, "json"))
    assert document["rows"][-1]["efficiency"] is None and document["largest_p_at_level"] is None
    assert document["callpaths"][0]["efficiency_target"] is None


def test_a_model_that_falls_to_zero_beyond_the_target_bounds_the_search_only():
    result = extrap_plugins.efficiency(falling_below_zero(), target=200)
    assert result.rows[-1].efficiency == pytest.approx(1000 / (1000 - 0.5 * 200 * np.log2(200)))  # 4.244, above 1
    assert result.largest_p_at_level is None and f"up to p={ZERO:.4g}, where the model" in result.largest_p_note
    assert not any("falls to zero or below" in note for note in result.notes)


def test_a_call_path_whose_model_is_negative_at_the_target_is_named():
    comm = Model("main->comm", "time", ("p",), 0.0, (Term(-0.01, {"p": Factor(0, 1)}),))
    main = Model("main", "time", ("p",), 0.0, (Term(1000.0, {"p": Factor(-1, 0)}),))
    measured = Experiment.from_columns(
        ["p"], callpath=np.repeat(["main", "main->comm"], len(PS)), metric="time",
        coordinates=np.concatenate([PS, PS])[:, None], value=np.concatenate([1000 / PS, np.zeros(len(PS))]))
    result = extrap_plugins.efficiency(ModelSet(("p",), [main, comm], experiment=measured))
    entry = next(c for c in result.callpaths if c.callpath == "main->comm")
    assert math.isnan(entry.efficiency_target)  # W = 0 and C = -0.01·512·9 < 0: no efficiency (was 0)
    assert ("at p=512 the model of C = p·T is negative for main->comm [time] (-46.08): a time below zero is no "
            "time, so E there is n/a") in result.notes


# ----------------------------------------------------------------- --measure
def test_the_measured_efficiency_reduces_repetitions_as_the_models_do(tmp_path, capsys):
    rows = [("main", p, (1000 / p + 0.5 * np.log2(p)) * (10 if (p == 1 and r == 0) else 1))
            for p in PS for r in range(5)]  # one repetition at p0 ten times too slow
    data = write(tmp_path / "outlier.csv", rows)
    result = extrap_plugins.efficiency(str(data), measure="median")
    for row in result.rows[:-1]:
        p = row.point["p"]
        assert row.efficiency == pytest.approx(1000 / (1000 + 0.5 * p * np.log2(p)), rel=1e-6)
        assert row.measured_efficiency == pytest.approx(row.efficiency, rel=1e-6)  # was 2.797 at p=2 (means)
    assert main(["efficiency", str(data), "--measure", "median", "--export", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["rows"][1]["measured_efficiency"] == pytest.approx(1000 / 1001)
    # the mean, as the models take it: a repetition 10x the others at its point is left out of both (it counted
    # in both: 2.797 at p=2)
    mean = extrap_plugins.efficiency(str(data))
    assert mean.rows[1].measured_efficiency == pytest.approx(1000 / 1001)


# --------------------------------------------------------- the limiter's growth
def tree(path: Path, inclusive: bool) -> Path:
    """main's own part: 5 (T, so C = 5·p: overhead O(p)); compute 1000/p; comm 0.5·log2(p) (overhead O(p·log p))."""
    rows = []
    for p in PS:
        rows += [("main", p, 5.0 + (1000 / p + 0.5 * np.log2(p) if inclusive else 0.0)),
                 ("main->compute", p, 1000 / p), ("main->comm", p, 0.5 * np.log2(p))]
    return write(path, rows)


def test_the_limiter_line_gives_the_growth_of_the_overhead_its_share_is_of(tmp_path):
    result = extrap_plugins.efficiency(str(tree(tmp_path / "incl.csv", True)))
    top = result.limiter
    assert top.callpath == "main" and result.values == "inclusive"
    assert top.own_overhead_share_target == pytest.approx(5 * 511 / (5 * 511 + 0.5 * 512 * 9))  # 52.6 %
    assert top.overhead_growth == "O(p·log p)" and top.own_overhead_growth == "O(p)"
    assert ("limiter: main (52.6% of the overhead at p=512; its own overhead grows as O(p), with its children's as "
            "O(p·log p))\n") in str(result)  # was "its overhead grows as O(p·log p)": comm's growth, not main's own
    document = json.loads(extrap_plugins.export_report(result, "json"))
    assert [(c["callpath"], c["own_overhead_growth"]) for c in document["callpaths"]] == [
        ("main", "O(p)"), ("main->comm", "O(p·log p)"), ("main->compute", "O(1)")]
    exclusive = extrap_plugins.efficiency(str(tree(tmp_path / "excl.csv", False)))
    assert exclusive.values == "exclusive"
    assert "limiter: main (52.6% of the overhead at p=512; its overhead grows as O(p))\n" in str(exclusive)


# --------------------------------------------- measurements against the models
def test_measurements_on_the_other_side_of_the_level_are_noted():
    t = Model("main", "time", ("p",), 0.0, (Term(1000.0, {"p": Factor(-1, 0)}),))  # C = 1000: E = 1 everywhere
    result = extrap_plugins.efficiency(model_set(t, 1000 / PS + 0.5 * np.log2(PS)), level=0.9)
    assert result.largest_p_at_level is None
    assert result.rows[6].measured_efficiency == pytest.approx(1000 / 1192)
    assert result.notes[-1] == (
        "the measurements and the models disagree about the level 0.9: at p=64 E measured 0.8389 < 0.9 ≤ E of the "
        "models 1.0000; the largest p at the level comes from the models and is only as good as their fit to the "
        "measurements")
    exact = Model("main", "time", ("p",), 0.0, (Term(1000.0, {"p": Factor(-1, 0)}), Term(0.5, {"p": Factor(0, 1)})))
    agreed = extrap_plugins.efficiency(model_set(exact, 1000 / PS + 0.5 * np.log2(PS)), level=0.9)
    assert not any("disagree" in note for note in agreed.notes)


# ----------------------------------------------------------- printed numbers
def test_the_largest_p_at_the_level_is_printed_where_e_is_still_at_the_level(capsys):
    assert main(["efficiency", str(ROOT / "examples" / "isoefficiency.csv"), "--size", "n", "--target", "1024"]) == 0
    out = capsys.readouterr().out
    exact = brentq(lambda p: 0.2 * 160000 - 0.8 * 1.5 * p * np.log2(p), 2, 1e5)  # 2377.69
    assert math.floor(exact) == 2377
    assert "largest p with E ≥ 0.8: 2377 (E falls below 0.8 at p=2378 for n=160000)\n" in out  # was 2378: E < 0.8


@pytest.mark.parametrize("target", ["abc", "p"])
def test_a_target_that_is_no_number_is_named_as_given(tmp_path, capsys, target):
    data = write(tmp_path / "strong.csv", [("main", p, 1000 / p) for p in PS])
    assert main(["efficiency", str(data), "--target", target]) == 2
    assert capsys.readouterr().err == (f"extrap-plugins: error: target {target!r} (--target): expected a process "
                                       f"count or 'P=V,...' such as p=512\n")  # was "target 'p=abc': ..."
