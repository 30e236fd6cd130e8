"""Efficiency, speedup and iso-efficiency: known answers in closed form, every output, bad input, real data."""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
from browser_helpers import StaticPage
from reading_helpers import measured

import extrap_plugins
from extrap_plugins import Experiment, Factor, InputError, Model, Term
from extrap_plugins.cli import main
from extrap_plugins.efficiency_analysis import overhead_model
from extrap_plugins.errors import ExtrapWarning

LEVEL = 0.8
N = [1e4, 2e4, 4e4, 8e4, 1.6e5]


def experiment(functions, ps, ns=N, noise=0.0, repetitions=1, seed=0):
    """One call path per ``functions`` entry (name -> T(p, n)), measured at every (p, n)."""
    rng = np.random.default_rng(seed)
    rows, values, paths = [], [], []
    for name, f in functions.items():
        for p in ps:
            for n in ns:
                for _ in range(repetitions):
                    rows.append((p, n))
                    values.append(f(p, n) * (1 + noise * rng.uniform(-1, 1)))
                    paths.append(name)
    return Experiment.from_columns(["p", "n"], callpath=np.array(paths), metric="time",
                                   coordinates=np.array(rows, dtype=float), value=np.array(values), source="synthetic")


def strong_iso(p, p0, level=LEVEL):
    """n(p) for T = n/p + log2(p): W = n + p0·log2(p0), C = n + p·log2(p), E = W/C = level."""
    return (level * p * np.log2(p) - p0 * np.log2(p0)) / (1 - level)


@pytest.fixture(scope="module")
def known():
    data = experiment({"main": lambda p, n: n / p + np.log2(p)}, [1, 2, 4, 8, 16, 32])
    return extrap_plugins.efficiency(data, size="n", level=LEVEL, target=256)


# ------------------------------------------------------------ known answers
@pytest.mark.parametrize("ps", [[1, 2, 4, 8, 16, 32], [4, 8, 16, 32, 64]])
def test_isoefficiency_of_n_over_p_plus_log_p_is_p_log_p(ps):
    data = experiment({"main": lambda p, n: n / p + np.log2(p)}, ps)
    result = extrap_plugins.efficiency(data, size="n", level=LEVEL, target=8 * ps[-1])
    p0 = ps[0]
    assert result.p0 == p0 and result.scaling == "strong"
    iso = result.isoefficiency
    assert iso.growth == "O(p·log p)"
    solved = np.array([(p, n) for p, n in iso.points if n is not None])
    inside = solved[(solved[:, 0] >= 2 * p0)]
    assert np.allclose(inside[:, 1], strong_iso(inside[:, 0], p0), rtol=0.01)
    beyond = 8 * ps[-1]
    assert iso.model.predict([beyond]) == pytest.approx(strong_iso(beyond, p0), rel=0.05)
    for p in ps[1:]:
        assert iso.model.predict([p]) == pytest.approx(strong_iso(p, p0), rel=0.01)


def test_work_overhead_efficiency_and_speedup_of_the_closed_form(known):
    n = N[-1]
    for row in known.rows:
        p = row.point["p"]
        assert row.point["n"] == n
        assert row.resource == pytest.approx(n + p * np.log2(p), rel=1e-9)
        assert row.work == pytest.approx(n, rel=1e-9)
        assert row.overhead == pytest.approx(p * np.log2(p), rel=1e-6, abs=1e-6)
        assert row.efficiency == pytest.approx(n / (n + p * np.log2(p)), rel=1e-9)
        assert row.speedup == pytest.approx(n / (n / p + np.log2(p)), rel=1e-9)
        assert row.time == pytest.approx(n / p + np.log2(p), rel=1e-9)
    assert [r.measured for r in known.rows] == [True] * 6 + [False]
    assert all(r.measured_efficiency == pytest.approx(r.efficiency, rel=1e-9) for r in known.rows if r.measured)


def test_largest_p_at_the_level_solves_the_closed_form(known):
    from scipy.optimize import brentq

    n = N[-1]
    exact = brentq(lambda p: n / (n + p * np.log2(p)) - LEVEL, 2, 1e6, xtol=1e-12)
    assert known.largest_p_at_level == pytest.approx(exact, rel=1e-6)
    assert "falls below 0.8" in known.largest_p_note


def test_weak_scaling_isoefficiency_is_logarithmic():
    # T = 1e-3·n + log2(p) per process: W = p·T(p0) with work ∝ p·n, E = T(p0)/T(p).
    data = experiment({"main": lambda p, n: 1e-3 * n + np.log2(p)}, [2, 4, 8, 16, 32], ns=[100, 200, 400, 800, 1600])
    result = extrap_plugins.efficiency(data, size="n", scaling="weak", target=1024)
    assert result.scaling == "weak"
    assert result.isoefficiency.growth == "O(log p)"
    # E = (1e-3·n + 1) / (1e-3·n + log2 p) = 0.8  =>  n = (0.8·log2 p − 1) / (0.2e-3)
    for p, n in result.isoefficiency.points:
        if n is not None and p >= 4:
            assert n == pytest.approx((LEVEL * np.log2(p) - 1) / (0.2e-3), rel=0.01)
    row = result.rows[-1]
    assert row.efficiency == pytest.approx((1e-3 * 1600 + 1) / (1e-3 * 1600 + 10), rel=1e-6)
    assert row.speedup == pytest.approx(1024 / 2 * row.efficiency, rel=1e-12)


def test_no_problem_size_can_hold_the_level_when_overhead_grows_like_the_work():
    # C = n·(1 + log2 p): E = (1 + log2 p0)/(1 + log2 p), the same for every n.
    data = experiment({"main": lambda p, n: n * (1 + np.log2(p)) / p}, [1, 2, 4, 8, 16])
    result = extrap_plugins.efficiency(data, size="n", target=1024)
    assert result.isoefficiency is None
    assert result.isoefficiency_note.startswith("no problem size keeps E at 0.8 from p=")
    document = json.loads(extrap_plugins.export_report(result, "json"))
    assert document["isoefficiency"] is None and "no problem size" in document["isoefficiency_note"]
    assert "iso-efficiency: none: no problem size keeps E" in extrap_plugins.export_report(result, "text")


def test_overhead_models_are_exact_pmnf_and_name_the_limiter():
    functions = {"main": lambda p, n: n / p + 1.5 * np.log2(p), "main->compute": lambda p, n: n / p,
                 "main->allreduce": lambda p, n: np.log2(p), "main->barrier": lambda p, n: 0.5 * np.log2(p)}
    result = extrap_plugins.efficiency(experiment(functions, [1, 2, 4, 8, 16, 32]), size="n", target=1024)
    assert result.values == "inclusive" and [m.callpath for m in result.total] == ["main"]
    ranked = {c.callpath: c for c in result.callpaths}
    assert result.limiter.callpath == "main->allreduce"
    assert [c.callpath for c in result.callpaths][:2] == ["main->allreduce", "main->barrier"]
    assert ranked["main->allreduce"].own_overhead_share_target == pytest.approx(2 / 3, rel=1e-6)
    assert ranked["main->barrier"].own_overhead_share_target == pytest.approx(1 / 3, rel=1e-6)
    assert sum(c.own_overhead_share_target for c in result.callpaths) == pytest.approx(1.0, abs=1e-6)
    assert ranked["main"].overhead_share_target == pytest.approx(1.0)
    assert ranked["main->allreduce"].overhead_growth == "O(p·log p)"
    assert ranked["main->compute"].overhead_growth == "O(1)"  # n/p·p − n: nothing left
    assert ranked["main"].overhead_model.formula == "1.5 · p · log2(p)"


@pytest.mark.parametrize("scaling", ["strong", "weak"])
def test_overhead_model_equals_resource_minus_work_everywhere(scaling):
    model = Model("x", "time", ("p", "n"), 3.0, (
        Term(2.0, {"p": Factor(1, 1)}), Term(0.5, {"n": Factor(1, 0)}),
        Term(0.01, {"p": Factor(0.5, 0), "n": Factor(1, 1)})))
    p0 = 4.0
    overhead = overhead_model(model, "p", p0, scaling)
    X = np.array([[p, n] for p in (4, 7, 64, 1000) for n in (10, 333, 1e5)], dtype=float)
    X0 = X.copy()
    X0[:, 0] = p0
    work = model.predict(X0) * (X[:, 0] / p0 if scaling == "weak" else 1.0)
    assert np.allclose(overhead.predict(X), model.predict(X) - work, rtol=1e-10, atol=1e-9)


# ----------------------------------------------------------------- outputs
def test_json_document(known):
    document = json.loads(extrap_plugins.export_report(known, "json"))
    assert document["format"] == "extrap-plugins/efficiency" and document["version"] == 1
    assert document["scaling"] == "strong" and document["level"] == 0.8
    iso = document["isoefficiency"]
    assert iso["growth"] == "O(p·log p)" and iso["function"] == known.isoefficiency.model.function
    assert len(iso["points"]) == 32 and all(len(point) == 2 for point in iso["points"])
    assert document["largest_p_at_level"] == pytest.approx(known.largest_p_at_level)
    assert document["callpaths"][0] == {
        "callpath": "main", "metric": "time", "function": known.callpaths[0].model.function,
        "work_target": pytest.approx(1.6e5), "overhead_target": pytest.approx(256 * 8),
        "overhead_share_target": 1.0, "own_overhead_share_target": 1.0, "overhead_growth": "O(p·log p)",
        "own_overhead_growth": "O(p·log p)",
        "overhead_function": known.callpaths[0].overhead_model.function,
        "efficiency_target": pytest.approx(1.6e5 / (1.6e5 + 2048)), "inconsistency": None,
        "overhead_uncertainty": pytest.approx(0, abs=1.0),  # exact runs: the choice of model only, 0.18
        "own_overhead": pytest.approx(2048),
        "own_overhead_uncertainty": pytest.approx(0, abs=1e-6),
        "own_overhead_uncertainty_with_choice": pytest.approx(0, abs=1.0), "modelled_overhead": None,
        "warnings": []}
    assert document["total"]["warnings"] == [[]]
    assert document["passed_over"] == []
    assert document["target_point"] == {"p": 256.0, "n": 1.6e5}
    text = extrap_plugins.export_report(known, "json")
    # one line per key, per row and per call path, the brackets around the two lists, and the braces
    assert text.count("\n") == len(document) + len(document["rows"]) + len(document["callpaths"]) + 4


def test_csv_and_text(known):
    rows = list(csv.DictReader(io.StringIO(extrap_plugins.export_report(known, "csv"))))
    kinds = [r["kind"] for r in rows]
    assert kinds == ["total"] * 7 + ["isoefficiency"] * 32 + ["callpath"]
    assert float(rows[6]["processes"]) == 256
    assert float(rows[6]["efficiency"]) == pytest.approx(known.rows[-1].efficiency)
    text = extrap_plugins.export_report(known, "text")
    assert "strong scaling, fixed problem size n=160000" in text
    assert "iso-efficiency: n = 4 · p · log2(p)   [O(p·log p)]" in text
    assert "largest p with E ≥ 0.8: 3408 (E falls below 0.8 at p=3409 for n=160000)" in text
    assert "limiter: main" in text


def test_html_is_static_and_self_contained(known, tmp_path):
    path = tmp_path / "efficiency.html"
    assert extrap_plugins.export_report(known, "html", path) is None
    text = path.read_text()
    assert "<script" not in text and "default-src 'none'" in text
    assert 'class="chart efficiency-plot"' in text and 'class="chart isoefficiency-plot"' in text
    assert "level 0.8" in text and "n = 4 · p · log2(p)" in text


def test_html_opens_in_chromium_with_the_level_and_the_isoefficiency_curve(browser, known, tmp_path):  # noqa: F811
    path = tmp_path / "efficiency.html"
    extrap_plugins.export_report(known, "html", path)
    page = StaticPage(browser, path)
    assert page.width("svg.efficiency-plot") > 300
    assert page.count("svg.efficiency-plot line.mark-y") == 1  # the level
    assert page.count("svg.efficiency-plot path.curve") == 1 and page.count("svg.efficiency-plot circle.point") == 6
    assert page.count("svg.isoefficiency-plot path.curve") == 1
    assert page.count("svg.isoefficiency-plot circle.point") == 32
    assert page.count("#callpath-table tbody tr") == 1 and page.count("#scaling-table tbody tr") == 7
    assert page.console == [] and page.requests == [page.url]
    page.page.close()


# --------------------------------------------------------------- the CLI
def write_csv(path, functions, ps, ns=N):
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["callpath", "p", "n", "value"])
        for name, f in functions.items():
            for p in ps:
                for n in ns:
                    writer.writerow([name, p, n, repr(float(f(p, n)))])
    return path


def test_cli_writes_every_format(tmp_path, capsys):
    data = write_csv(tmp_path / "iso.csv", {"main": lambda p, n: n / p + np.log2(p)}, [1, 2, 4, 8, 16])
    assert main(["efficiency", str(data), "--size", "n", "--target", "p=128", "--export", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["isoefficiency"]["growth"] == "O(p·log p)"
    assert main(["efficiency", str(data), "--size", "n", "--export", "html", "-o", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["efficiency", str(data), "--size", "n", "--level", "0.9"]) == 0
    as_number = capsys.readouterr().out
    assert "keeps E at 0.9" in as_number
    assert main(["efficiency", str(data), "--size", "n", "--level", "90%"]) == 0
    assert capsys.readouterr().out == as_number


@pytest.mark.parametrize("arguments, message", [
    (["--size", "n", "--target", "p=8"], "target p=8 is below the largest measured p=16: give a target of at "
                                         "least 16"),
    (["--size", "m"], "size 'm' (--size): no such parameter; the parameters are p, n"),
    (["--scaling", "weak"], "parameter n varies but is neither the processes nor the size (--processes, --size): "
                            "name it as the size, or select runs where it is fixed"),  # without n: a fixed size
    (["--size", "n", "--level", "1.5"], "--level: expected a share between 0 and 1 (exclusive), such as 80% or 0.8, "
                                        "got 1.5"),
    (["--size", "n", "--level", "high"], "--level: expected a share between 0 and 1 (exclusive), such as 80% or 0.8, "
                                         "got 'high'"),
    (["--processes", "q"], "processes 'q' (--processes): no such parameter; the parameters are p, n"),
    ([], "parameter n varies but is neither the processes nor the size (--processes, --size): name it as the size, "
         "or select runs where it is fixed"),
    (["--size", "n", "--total", "nothing"], "total (--total): no model of time for 'nothing'; the call paths are "
                                            "main"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, arguments, message):
    data = write_csv(tmp_path / "iso.csv", {"main": lambda p, n: n / p + np.log2(p)}, [1, 2, 4, 8, 16])
    assert main(["efficiency", str(data), *arguments]) == 2
    err = capsys.readouterr().err
    assert err == f"extrap-plugins: error: {message}\n"


def test_the_api_raises_input_error():
    data = experiment({"main": lambda p, n: n / p}, [1, 2, 4, 8, 16])
    with pytest.raises(InputError, match="below the largest measured p=16"):
        extrap_plugins.efficiency(data, size="n", target=4)


def raised(call) -> str:
    """The message of the InputError ``call`` raises (exactly that type, not a raw builtin error)."""
    with pytest.raises(InputError) as error:
        call()
    assert type(error.value) is InputError
    return str(error.value)


def test_the_api_takes_a_level_as_the_cli_does_and_one_str_as_one_total(known):
    data = experiment({"main": lambda p, n: n / p + np.log2(p)}, [1, 2, 4, 8, 16, 32])
    result = extrap_plugins.efficiency(data, size="n", level="80%", target=256, total="main")
    assert result.level == 0.8 and [m.callpath for m in result.total] == ["main"]
    assert result.isoefficiency.formula == known.isoefficiency.formula
    assert raised(lambda: extrap_plugins.efficiency(data, size="n", level=80)) == (
        "level (--level): expected a share between 0 and 1 (exclusive), such as 80% or 0.8, got 80")
    assert raised(lambda: extrap_plugins.efficiency(data, size="n", total="nosuch")) == (
        "total (--total): no model of time for 'nosuch'; the call paths are main")
    assert raised(lambda: extrap_plugins.efficiency(data, size=["n"])) == (
        "size (--size): expected a parameter name (one of p, n), got the list ['n']")


def test_a_model_set_is_analysed_as_compare_takes_it(known):
    data = experiment({"main": lambda p, n: n / p + np.log2(p)}, [1, 2, 4, 8, 16, 32])
    models = extrap_plugins.model(data)
    result = extrap_plugins.efficiency(models, size="n", level=LEVEL, target=256)
    assert result.isoefficiency.growth == known.isoefficiency.growth == "O(p·log p)"
    assert result.largest_p_at_level == pytest.approx(known.largest_p_at_level, rel=1e-9)
    assert extrap_plugins.efficiency(models, size="n", target=256, callpaths="main").callpaths[0].callpath == "main"
    assert raised(lambda: extrap_plugins.efficiency(models, size="n", callpaths="zz")) == (
        "synthetic: no call path matches 'zz'; the call paths are main")
    assert raised(lambda: extrap_plugins.efficiency(models, size="n", reader="csv")) == (
        "efficiency: reader says how to read measurements, but nothing is read (ModelSets and Experiments are "
        "given): leave it out")
    streamed = extrap_plugins.ModelSet(models.parameters, models.models)
    assert raised(lambda: extrap_plugins.efficiency(streamed, size="n")) == (
        "efficiency: the ModelSet holds no measurements (ModelSet.experiment; streamed models have none): give the "
        "measurements, a path or an Experiment, instead")


@pytest.mark.parametrize("data, got", [(5, "the int 5"), (None, "None"), ({"p": 1}, "the dict {'p': 1}")])
def test_what_cannot_be_analysed_is_named(data, got):
    assert raised(lambda: extrap_plugins.efficiency(data)) == (
        f"efficiency: expected a path (str or os.PathLike), a list of paths, an Experiment or a ModelSet, got {got}")


def test_the_result_prints_as_its_report_and_has_a_short_repr(known):
    assert str(known) == extrap_plugins.export_report(known, "text")
    assert repr(known) == ("<Efficiency of time over p, strong scaling: iso-efficiency n = "
                           f"{known.isoefficiency.formula}; limiter main>")


def test_the_package_names_stay_functions_after_the_modules_load():
    import extrap_plugins.comparison  # noqa: F401
    import extrap_plugins.efficiency_analysis  # noqa: F401

    assert callable(extrap_plugins.efficiency) and callable(extrap_plugins.compare)


# -------------------------------------------------------------- real data
def test_relearn_weak_scaling(shared_data):
    path = shared_data / "extrap" / "text" / "mpa" / "relearn_data.txt"
    with pytest.warns(UserWarning):
        result = extrap_plugins.efficiency(path, size="n", scaling="weak", target=4096, total=["main()"])
    assert result.p0 == 32 and [m.callpath for m in result.total] == ["main()"]
    measured = {r.point["p"]: r.measured_efficiency for r in result.rows if r.measured}
    assert measured[64] == pytest.approx(0.7065, abs=1e-3)
    assert 32 < result.largest_p_at_level < 64  # measured E is 0.71 at p = 64
    assert result.limiter.callpath == "Simulation loop"
    assert result.isoefficiency is not None and "n must stay at or below" in result.isoefficiency.note
    assert ("the PMNF model of n(p) misses the solved points by more than 10%: at p=43.34 it gives 1085 for the solved "
            "1.291e4, so its formula and growth describe them only roughly") in result.isoefficiency.note
    # the table's first row was main() (the total, 100 %), though the limiter is said to come first
    assert result.flat and result.callpaths[0] is result.limiter and result.callpaths[-1].callpath == "main()"
    added = sum(c.overhead_share_target for c in result.callpaths if math.isfinite(c.overhead_share_target))
    assert added > 4 and result.notes[-1].endswith(f"and the shares overlap (here they add up to {added:.1%})")


RISE = ("the values rise 23.2-fold from p=32 to p=512 (4.916e-06 to 0.000114, the mean of 5 lines along p), but the "
        "model is the constant: no hypothesis that describes them is plausible")
OPPOSITE = ("terms of opposite sign: they cancel where measured and the data demand them, but the extrapolation "
            "depends on which one wins beyond the measurements")


def test_each_model_s_warnings_are_in_the_json_report_beside_its_call_path(shared_data, capsys):
    """What stderr warns of a model (naming its call path and metric) is also in the machine interface: the
    ``warnings`` of its call path, and of the total's models."""
    path = shared_data / "extrap" / "text" / "mpa" / "relearn_data.txt"
    assert main(["efficiency", str(path), "--size", "n", "--scaling", "weak", "--target", "4096", "--total", "main()",
                 "--export", "json"]) == 0
    out, err = capsys.readouterr()
    document = json.loads(out)
    warned = {c["callpath"]: c["warnings"] for c in document["callpaths"]}
    assert warned["Insert branch nodes into global tree"] == [RISE]
    assert warned["Update #synaptic elements + del synapses"] == ["all values are zero"]
    assert warned["Simulation loop"] == [OPPOSITE] and warned["Update local trees"] == []
    assert document["total"]["callpaths"] == ["main()"] and document["total"]["warnings"] == [[OPPOSITE]]
    assert f"Insert branch nodes into global tree [time]: {RISE}" in err  # stderr says it too
    assert main(["efficiency", str(path), "--size", "n", "--scaling", "weak", "--target", "4096", "--total", "main()",
                 "--export", "html"]) == 0
    listed = (f"Simulation loop [time] and 4 more series (--export json lists them all): {OPPOSITE}; Update "
              f"#synaptic elements + del synapses [time]: all values are zero; Insert branch nodes into global tree "
              f"[time]: {RISE}")
    assert f"<dt>warnings</dt><dd>{html.escape(listed)}</dd>" in capsys.readouterr().out  # the HTML summary too


def test_the_text_report_ends_with_what_the_models_warn_of_said_once_where_stderr_goes_with_it(shared_data,
                                                                                                 tmp_path):
    path = shared_data / "extrap" / "text" / "mpa" / "relearn_data.txt"
    argv = ["efficiency", str(path), "--size", "n", "--scaling", "weak", "--target", "4096", "--total", "main()"]
    ending = ["", "warnings:",
              f"  Simulation loop [time] and 4 more series (--export json lists them all): {OPPOSITE}",
              "  Update #synaptic elements + del synapses [time]: all values are zero",
              f"  Insert branch nodes into global tree [time]: {RISE}"]
    together = subprocess.run([sys.executable, "-m", "extrap_plugins", *argv], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=300)
    assert together.returncode == 0, together.stdout
    assert together.stdout.splitlines()[-5:] == ending and together.stdout.count(RISE) == 1
    saved = tmp_path / "report.txt"
    apart = subprocess.run([sys.executable, "-m", "extrap_plugins", *argv, "-o", str(saved)], capture_output=True,
                           text=True, timeout=300)
    assert apart.returncode == 0 and saved.read_text().splitlines()[-5:] == ending  # the saved report keeps them
    assert f"extrap-plugins: warning: Insert branch nodes into global tree [time]: {RISE}" in apart.stderr


def test_cube_single_parameter(shared_data):
    pytest.importorskip("pycubexr", reason="the cube extra (pip install -e '.[cube]') reads CUBE files")
    result = extrap_plugins.efficiency(shared_data / "cube" / "extrap" / "single_parameter", processes="x",
                                       target=16000)
    assert result.processes == "x" and result.size is None and result.isoefficiency is None
    assert result.values == "exclusive" and len(result.total) == len(result.callpaths)
    assert math.isclose(sum(c.own_overhead_share_target for c in result.callpaths), 1.0, rel_tol=1e-9)


def test_one_parameter_has_no_isoefficiency_but_every_output(tmp_path):
    data = Experiment.from_columns(["p"], callpath=np.repeat(["main", "main->comm"], 5), metric="time",
                                   coordinates=np.tile([[1.0], [2.0], [4.0], [8.0], [16.0]], (2, 1)),
                                   value=[100 / p + 2 * p for p in (1, 2, 4, 8, 16)]
                                   + [2 * p for p in (1, 2, 4, 8, 16)])
    result = extrap_plugins.efficiency(data)
    assert result.processes == "p" and result.size is None and result.target == {"p": 128.0}  # 8 × the largest
    assert result.isoefficiency is None and "no problem-size parameter, size (--size)" in result.isoefficiency_note
    assert result.limiter.callpath == "main->comm" and result.limiter.overhead_growth == "O(p^2)"
    document = json.loads(extrap_plugins.export_report(result, "json"))
    assert document["isoefficiency"] is None and document["size"] is None
    page = extrap_plugins.export_report(result, "html")
    assert "no problem-size parameter" in page and "isoefficiency-plot" not in page
    assert extrap_plugins.export_report(result, "csv").count("\ncallpath,") == 2


def test_report_formats_and_paths_are_checked(known, tmp_path):
    with pytest.raises(InputError, match="unknown report format 'pdf'; expected one of text, csv, json, html"):
        extrap_plugins.export_report(known, "pdf")
    with pytest.raises(InputError, match="is a folder"):
        extrap_plugins.export_report(known, "json", tmp_path)
    with pytest.raises(InputError, match="the folder for the output does not exist"):
        extrap_plugins.export_report(known, "json", tmp_path / "missing" / "r.json")
    with pytest.raises(InputError, match="option title applies to the html report only"):
        extrap_plugins.export_report(known, "text", title="x")


def test_the_process_count_is_found_by_the_names_schedulers_and_caliper_give_it():
    from extrap_plugins import scaling

    assert scaling.processes_name(["problem_size", "jobsize"], None) == "jobsize"  # Caliper's spot channel
    assert scaling.processes_name(["n", "mpi.world.size"], None) == "mpi.world.size"
    assert scaling.processes_name(["n", "NRanks"], None) == "NRanks"


# ------------------------------------------------- what a new user tripped on
STRONG = {"main": lambda p, n: n / p + np.log2(p), "main->compute": lambda p, n: n / p,
          "main->comm": lambda p, n: np.log2(p)}
PS, NS = [1, 2, 4, 8, 16], [1000, 2000, 4000, 8000, 16000]


def one_parameter(functions, ps=(1, 2, 4, 8, 16, 32)):
    """One call path per ``functions`` entry (name -> T(p)), measured at every p."""
    paths = np.repeat(list(functions), len(ps))
    values = [float(f(p)) for f in functions.values() for p in ps]
    return Experiment.from_columns(["p"], callpath=paths, metric="time",
                                   coordinates=np.tile(np.array(ps, dtype=float)[:, None], (len(functions), 1)),
                                   value=values, source="synthetic")


def test_a_target_naming_only_the_size_keeps_the_default_process_count(tmp_path, capsys):
    data = write_csv(tmp_path / "strong.csv", STRONG, PS, NS)
    assert main(["efficiency", str(data), "--size", "n", "--target", "n=100"]) == 0
    out = capsys.readouterr().out
    assert "target p=128, n=100;" in out  # 8 × the largest measured p, as --help says
    assert "\n128 (target)  " in out
    assert out.count("note: ") == 1 and out.endswith(
        "note: n=100 is below the smallest measured n=1000 (measured 1000–16000): the values at it extrapolate the "
        "models to a smaller n\n")
    result = extrap_plugins.efficiency(str(data), size="n", target={"n": 100})
    assert result.target == {"p": 128.0, "n": 100.0} and result.rows[-1].point == {"p": 128.0, "n": 100.0}
    assert result.rows[-1].efficiency == pytest.approx(100 / (100 + 128 * 7), rel=1e-9)
    inside = extrap_plugins.efficiency(str(data), size="n", target="n=2000")
    assert inside.target == {"p": 128.0, "n": 2000.0} and inside.notes == []


@pytest.mark.parametrize("target, got", [(True, "the bool True"), ([256], "the list [256]")])
def test_a_target_that_is_no_process_count_nor_point_is_refused(target, got):
    data = experiment({"main": lambda p, n: n / p}, [1, 2, 4, 8, 16])
    assert raised(lambda: extrap_plugins.efficiency(data, size="n", target=target)) == (
        f"target (--target): expected a process count, 'P=V,...' or a mapping such as {{'p': 128}}, got {got}")
    assert extrap_plugins.efficiency(data, size="n", target=np.int64(256)).target == {"p": 256.0, "n": 1.6e5}


def test_a_target_at_the_largest_measured_process_count_is_its_row(tmp_path, capsys):
    data = write_csv(tmp_path / "strong.csv", STRONG, PS, NS)
    assert main(["efficiency", str(data), "--size", "n", "--target", "p=16,n=100"]) == 0
    out = capsys.readouterr().out
    assert "\n16 (target)  " in out and "(target)" not in out.split("\n16 (target)")[0]


def superlinear():
    """T = 100 / p^1.5 split 60 % / 40 % between two children: E = p^(1/2), O = C − W < 0 from p0 on."""
    return one_parameter({"main": lambda p: 100 / p ** 1.5, "main->a": lambda p: 60 / p ** 1.5,
                          "main->b": lambda p: 40 / p ** 1.5})


SUPERLINEAR = ("E > 1 (up to 16 at p=256): superlinear speedup — the model's time falls faster than 1/p, so C = p·T "
               "falls below the work and the overhead O = C − W is negative")


def test_superlinear_speedup_is_explained_and_names_no_limiter(tmp_path):
    result = extrap_plugins.efficiency(superlinear(), target=256)
    assert result.rows[-1].efficiency == pytest.approx(16, rel=1e-9)
    assert result.rows[-1].overhead == pytest.approx(-93.75, rel=1e-9)
    assert result.limiter is None
    assert result.limiter_note == "the overhead at p=256, -93.75, is negative: there is no overhead to limit"
    assert all(math.isnan(c.own_overhead_share_target) and math.isnan(c.overhead_share_target)
               for c in result.callpaths)  # no share of a negative overhead
    note = (SUPERLINEAR + "; the measurements show it too (E measured up to 5.657 at p=32): cache effects (each "
            "process's share of the data fitting in faster memory) can do this within the data, but they end, so the "
            "model is not to be trusted beyond the measured p")
    assert result.notes == [note]
    text = extrap_plugins.export_report(result, "text")
    assert "limiter: none (the overhead at p=256, -93.75, is negative: there is no overhead to limit)\n" in text
    assert "60.0%" not in text and "overhead per call path at p=256 (overhead growth, overhead, work and E with its children):\n" in text
    assert text.endswith(f"note: {note}\n")
    document = json.loads(extrap_plugins.export_report(result, "json"))
    assert document["limiter"] is None and document["notes"] == [note]
    assert document["limiter_note"] == "the overhead at p=256, -93.75, is negative: there is no overhead to limit"
    assert document["callpaths"][0]["own_overhead_share_target"] is None
    page = extrap_plugins.export_report(result, "html")
    assert html.escape(f"note: {note}") in page and "there is no overhead to limit" in page


def test_superlinear_models_of_measurements_that_are_not_say_so():
    data = one_parameter({"main": lambda p: 100 / p})  # measured E = 1 everywhere
    models = extrap_plugins.ModelSet(("p",), [Model("main", "time", ("p",), 0.0, (Term(100.0, {"p": Factor(-1.5, 0)}),))],
                                     experiment=data)
    result = extrap_plugins.efficiency(models, target=256)
    assert result.notes == [SUPERLINEAR + "; the measurements do not (E measured at most 1 at p=1): the model is not "
                                          "to be trusted beyond the data"]


def test_no_note_without_superlinear_speedup(known):
    assert known.notes == [] and json.loads(extrap_plugins.export_report(known, "json"))["notes"] == []
    assert known.limiter_note == "" and json.loads(extrap_plugins.export_report(known, "json"))["limiter_note"] is None


def test_negative_times_are_refused_naming_the_file_and_the_series(tmp_path, capsys):
    # the smallest value in four digits (-5.0004831 was printed whole, as -1.4048314138643199 was)
    path = tmp_path / "neg.csv"
    path.write_text("callpath,p,n,value\n" + "".join(f"main,{p},10,{v}\n" for p, v in
                                                      [(1, -5.0004831), (2, -3), (4, -1), (8, -0.5), (16, -0.2)]))
    assert main(["efficiency", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"extrap-plugins: error: {path}: main [time] has negative values (the smallest, -5, at p=1, n=10): times and "
        "resources must be zero or positive; leave it out with callpaths=GLOB (--callpath GLOB) or choose "
        "metric=NAME (--metric NAME)\n")
    data = one_parameter({"main": lambda p: 10 - p, "main->a": lambda p: 4 - p, "main->b": lambda p: 1 + p})
    assert raised(lambda: extrap_plugins.efficiency(data)) == (
        "synthetic: main [time], main->a [time] have negative values (the smallest, -28, at p=32): times and "
        "resources must be zero or positive; leave them out with callpaths=GLOB (--callpath GLOB) or choose "
        "metric=NAME (--metric NAME)")
    assert extrap_plugins.efficiency(data, callpaths="main->b").total[0].callpath == "main->b"


def test_all_zero_values_leave_the_efficiency_undefined_and_say_so(tmp_path):
    data = experiment({"main": lambda p, n: 0.0 * p}, [1, 2, 4, 8, 16])
    with pytest.warns(UserWarning, match="all values are zero"):
        result = extrap_plugins.efficiency(data, size="n")
    undefined = "E is undefined: every measured value of main [time] is zero"
    assert result.largest_p_at_level is None and result.largest_p_note == undefined
    assert result.isoefficiency is None and result.isoefficiency_note == undefined
    text = extrap_plugins.export_report(result, "text")
    assert "nan" not in text
    assert f"largest p with E ≥ 0.8: n/a ({undefined})\n" in text
    table = text.split("\n\n")[1].splitlines()
    assert table[2].split() == ["1", "0", "0", "0", "0", "n/a", "n/a", "n/a"]  # measured, but undefined
    assert table[-1].split() == ["128", "(target)", "0", "0", "0", "0", "n/a", "n/a"]  # not measured: no E measured
    page = extrap_plugins.export_report(result, "html")
    assert "nan" not in page.replace("nanos", "") and "largest p with E ≥ 0.8: n/a" in page


def test_the_isoefficiency_search_starts_at_a_millionth_of_the_smallest_size():
    # exclusive values: C = p (main) + n (compute) + p·log2 p (comm), W = 1 + n; E = 0.8 at n = 4·(p + p·log2 p) − 5,
    # below 1 right above p0 = 1 (0.946 at the first p searched): solved there too, no size "keeps the level"
    data = experiment({"main": lambda p, n: 1.0 + 0 * p, "main->compute": lambda p, n: n / p,
                       "main->comm": lambda p, n: np.log2(p)}, PS, NS)
    result = extrap_plugins.efficiency(data, size="n", values="exclusive")
    points = result.isoefficiency.points
    assert all(n is not None for _, n in points) and result.isoefficiency.note == ""
    p, n = points[0]
    assert p == pytest.approx(128 ** (1 / 32)) and n == pytest.approx(4 * (p + p * np.log2(p)) - 5, rel=1e-6)
    assert n < 1


def test_a_row_is_measured_only_where_the_total_was(tmp_path, capsys):
    points = [(p, n) for p in PS for n in NS if (p, n) not in ((1, 16000), (16, 1000))]
    path = tmp_path / "sparse.csv"
    path.write_text("callpath,p,n,value\n" + "".join(f"main,{p},{n},{n / p + math.log2(p)!r}\n" for p, n in points))
    assert main(["efficiency", str(path), "--size", "n", "--export", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["point"]["p"], r["measured"]) for r in rows] == [(1, False), (2, True), (4, True), (8, True),
                                                                 (16, True), (128, False)]
    assert all(r["measured_efficiency"] is None for r in rows)  # no measured p0 at n=16000 to compare with
    assert main(["efficiency", str(path), "--size", "n"]) == 0
    table = capsys.readouterr().out.split("\n\n")[1].splitlines()
    assert table[2].split()[0:2] == ["1", "1.6e4"] and table[-1].startswith("128 (target)")


# ------------------------------------------------- shares and the ranking
def flat():
    """A flat input (no call tree, as Extra-P's text format): comm runs inside loop, loop inside main(), which
    the input cannot say; every value holds its callees'."""
    return experiment({"main()": lambda p, n: n / p + 1.5 * np.log2(p), "comm": lambda p, n: 0.5 * np.log2(p),
                       "loop": lambda p, n: n / p + np.log2(p)}, [1, 2, 4, 8, 16, 32])


def test_without_a_call_tree_the_shares_are_said_to_hold_the_callees_and_the_limiter_is_the_first_row():
    # RELeARN: "own share" main() 100 %, Simulation loop 99.9 %, ... "ranked by own share", main() first, and the
    # limiter named was Simulation loop
    result = extrap_plugins.efficiency(flat(), size="n", target=256, total="main()")
    assert result.flat and result.set_aside == ["main()"]
    assert [c.callpath for c in result.callpaths] == ["loop", "comm", "main()"]
    assert result.limiter is result.callpaths[0]
    shares = [c.own_overhead_share_target for c in result.callpaths]
    assert shares == pytest.approx([2 / 3, 1 / 3, 1.0], rel=1e-6)
    assert shares == pytest.approx([c.overhead_share_target for c in result.callpaths], rel=1e-12)
    note = ("the input has no call tree: a call path's value may hold others' (the input cannot say which), so its "
            "share of the overhead is that of its value with whatever it calls, and the shares overlap (here they add "
            "up to 200.0%)")
    assert result.notes[-1] == note
    lines = extrap_plugins.export_report(result, "text").splitlines()
    assert "limiter: loop (66.7% of the overhead at p=256, with what it calls; its overhead grows as O(p·log p))" \
        in lines
    title = lines.index("overhead per call path at p=256, n=160000 (overhead growth, overhead, work and E with what it "
                        "calls), ranked by share, so the limiter comes first; the total, main(), last:")
    assert [cell for cell in lines[title + 1].split("  ") if cell][:2] == ["call path", "share with what it calls"]
    assert [line.split()[:2] for line in lines[title + 3:title + 6]] == [["loop", "66.7%"], ["comm", "33.3%"],
                                                                          ["main()", "100.0%"]]
    assert lines[-1] == f"note: {note}"
    document = json.loads(extrap_plugins.export_report(result, "json"))
    assert document["flat"] is True and document["limiter"] == "loop"
    assert [c["callpath"] for c in document["callpaths"]] == ["loop", "comm", "main()"]
    page = extrap_plugins.export_report(result, "html")
    assert "<th>share of the overhead, with what it calls</th><th>overhead growth</th>" in page
    assert "own share" not in page and "ranked by share, so the limiter comes first; the total, main(), last" in page


def test_with_a_call_tree_a_named_total_is_ranked_last_as_the_limiter_passes_it_over():
    data = experiment({"main": lambda p, n: n / p + 3 * np.log2(p), "main->allreduce": lambda p, n: np.log2(p)},
                      [1, 2, 4, 8, 16, 32])
    result = extrap_plugins.efficiency(data, size="n", target=256, total="main")
    assert not result.flat and result.limiter.callpath == "main->allreduce"
    assert [(c.callpath, round(c.own_overhead_share_target, 6)) for c in result.callpaths] == [
        ("main->allreduce", round(1 / 3, 6)), ("main", round(2 / 3, 6))]
    lines = extrap_plugins.export_report(result, "text").splitlines()
    title = lines.index("overhead per call path at p=256, n=160000 (overhead growth, overhead, work and E with its "
                        "children), ranked by own share, so the limiter comes first; the total, main, last:")
    assert lines[title + 1].split()[:6] == ["call", "path", "own", "share", "with", "children"]
    assert "limiter: main->allreduce (33.3% of the overhead at p=256; its overhead grows as O(p·log p))" in lines
    assert json.loads(extrap_plugins.export_report(result, "json"))["flat"] is False
    found = extrap_plugins.efficiency(data, size="n", target=256)  # the root found: ranked by own share alone
    assert [c.callpath for c in found.callpaths] == ["main", "main->allreduce"] and found.set_aside == []
    assert found.limiter is found.callpaths[0]
    assert ("overhead per call path at p=256, n=160000 (overhead growth, overhead, work and E with its children), "
            "ranked by own share, so the limiter comes first:") in extrap_plugins.export_report(found, "text").splitlines()


# ------------------------------------------- overhead the models disagree on
LULESH = ("caliper", "thicket", "mpi_scaling_cali")
WAITALL_NODAL = "main->lulesh.cycle->LagrangeLeapFrog->LagrangeNodal->CalcForceForNodes->MPI_Waitall"
WAITALL_Q = "main->lulesh.cycle->LagrangeLeapFrog->LagrangeElements->CalcQForElems->MPI_Waitall"


@pytest.fixture(scope="module")
def lulesh_max(shared_data):
    """LULESH's Max time/rank, where a child's model outgrows its parent's (the new user's limiter at 1013.4 %, at
    605.3 % with today's models)."""
    pytest.importorskip("caliperreader", reason="the caliper extra (caliper-reader) is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the modeler's quality warnings on these series
        return extrap_plugins.efficiency(shared_data.joinpath(*LULESH), metric="Max time/rank", values="inclusive")


def shown_shares(text: str) -> list[float]:
    """Every percentage in a report, as a share."""
    return [float(found) / 100 for found in re.findall(r"(-?\d+(?:\.\d+)?)%", text)]


def test_the_limiter_passes_over_call_paths_whose_overhead_outgrows_their_parents(lulesh_max):
    # the limiter named was WAITALL_NODAL, "1013.4% of the overhead": its overhead, 1.39e6, was ten times the whole
    # program's, 1.372e5, as its model outgrows its parent's.  Since single runs of one parameter are judged by
    # their own residuals its model of C = jobsize · T is 1.613e-5 · jobsize^(5/2) · log2(jobsize)^2
    # (was 6.728e-5 · jobsize^3; its runs scatter 0.045 to 11.8 s a rank), and it outgrows its parent still:
    # 8.302e5, six times the whole program's 1.371e5
    result = lulesh_max
    nodal = next(c for c in result.callpaths if c.callpath == WAITALL_NODAL)
    assert round(nodal.own_overhead_share_target, 4) == 6.053  # the share it would be given: 605.3 %
    assert result.limiter.callpath == "main->lulesh.cycle->TimeIncrement->MPI_Allreduce"
    assert result.limiter.consistent and round(result.limiter.own_overhead_share_target, 4) == 0.2948
    assert not result.limiter.decided  # 4.044e4 ± 5.326e4: five runs say little of 2,744 ranks
    assert [(c.callpath, c.inconsistency) for c in result.passed_over] == [
        (WAITALL_NODAL, "its overhead, 8.302e5, exceeds its parent's, 6.884e4"),
        (WAITALL_Q, "its overhead, 3.549e5, exceeds its parent's, 2.755e4")]
    ranked = [c.consistent for c in result.callpaths]
    # the inconsistent ones after the others: 9 before single runs were judged so, now also EvalEOSForElems,
    # C = 9.746 · jobsize (was 4.757 · jobsize^(3/4) · log2(jobsize); its time a rank is flat, 9.0 … 12.9 s), above its parent
    # ApplyMaterialPropertiesForElems, 4.803 · jobsize^(3/4) · log2(jobsize) on runs 1 % longer (the two shapes fit
    # both series alike: relative RSS 0.071 against 0.064), and so that parent, its children above it
    assert ranked == [True] * 34 + [False] * 11
    reasons = {c.callpath: c.inconsistency for c in result.callpaths if not c.consistent}
    assert reasons["main->lulesh.cycle->LagrangeLeapFrog->LagrangeNodal->CalcForceForNodes"] == (
        "its modelled children's overhead, 8.96e5, exceeds its own, 6.884e4")
    # main's model falls short of its children's within its uncertainty (1.351e5 ± 2.761e5), but theirs, 1.392e5,
    # is no more certain: it keeps its own
    assert reasons["main"] == "its modelled children's overhead, 1.392e5, exceeds its own, 1.351e5"
    assert not any(math.isfinite(c.modelled_overhead) for c in result.callpaths)
    assert all(0 <= c.own_overhead_share_target <= 1 and 0 <= c.overhead_share_target <= 1
               for c in result.callpaths if c.consistent)


def test_no_report_shows_a_share_above_100_or_below_0_percent(lulesh_max):
    limiter = ("limiter: main->lulesh.cycle->TimeIncrement->MPI_Allreduce (29.5% of the overhead at jobsize=2744, own "
               "overhead 4.044e4 ± 5.326e4 (± 1.167e5 with the choice of model), within its uncertainty of zero; its "
               "overhead grows as O(jobsize)); passed "
               f"over as inconsistent: {WAITALL_NODAL} (its overhead, 8.302e5, "
               f"exceeds its parent's, 6.884e4), {WAITALL_Q} (its overhead, 3.549e5, exceeds its parent's, 2.755e4)")
    text = extrap_plugins.export_report(lulesh_max, "text")
    lines = text.splitlines()
    assert limiter in lines
    # WAITALL_NODAL's share would be 605.3 % (1013.4 % before single runs were judged by their own residuals; the fixture's first test)
    assert all(0 <= share <= 1 for share in shown_shares(text)) and "605.3%" not in text
    title = lines.index("overhead per call path at jobsize=2744 (overhead growth, overhead, work and E with its children), ranked by own share, so the limiter comes first; "
                        "those with inconsistent overhead after the others:")
    assert lines[title + 1].split()[-1] == "inconsistency"
    row = next(line for line in lines[title:] if line.startswith(WAITALL_NODAL + " "))
    assert row.split()[1:3] == ["n/a", "n/a"] and row.endswith("its overhead, 8.302e5, exceeds its parent's, 6.884e4")
    note = lines[lines.index("warnings:") - 2]  # the notes, then what the models warn of
    assert note.startswith("note: at jobsize=2744 the overhead of 11 call paths is inconsistent (where a call "
                                "path's overhead exceeds its parent's or its children's exceeds its own, the models "
                                "disagree: a parent's model may miss a term its children have, or a child's may have "
                                "one too many): their shares are not given, the ranking puts them after the others and "
                                f"the limiter passes them over: {WAITALL_NODAL} (its overhead, 8.302e5, exceeds its")
    assert note.endswith("and 8 more (the table of call paths says why for each); total (--total) names the "
                              "call paths to trust for the total")
    document = json.loads(extrap_plugins.export_report(lulesh_max, "json"))
    assert document["limiter"] == "main->lulesh.cycle->TimeIncrement->MPI_Allreduce"
    assert document["passed_over"] == [WAITALL_NODAL, WAITALL_Q] and document["limiter_note"] is None
    shares = [c[key] for c in document["callpaths"] for key in ("overhead_share_target", "own_overhead_share_target")]
    assert all(share is None or 0 <= share <= 1 for share in shares)
    first = next(c for c in document["callpaths"] if c["callpath"] == WAITALL_NODAL)
    assert first["own_overhead_share_target"] is None and first["overhead_share_target"] is None
    assert first["inconsistency"] == "its overhead, 8.302e5, exceeds its parent's, 6.884e4"
    assert first["overhead_target"] == pytest.approx(8.302e5, rel=1e-3)  # the model's overhead is still given
    rows = list(csv.DictReader(io.StringIO(extrap_plugins.export_report(lulesh_max, "csv"))))
    row = next(r for r in rows if r["callpath"] == WAITALL_NODAL)
    assert row["own_overhead_share"] == row["overhead_share"] == "" and row["inconsistency"].startswith("its overhead")
    assert all(0 <= float(r[key]) <= 1 for r in rows if r["kind"] == "callpath"
               for key in ("own_overhead_share", "overhead_share") if r[key])
    page = extrap_plugins.export_report(lulesh_max, "html")
    assert html.escape(limiter) in page and "605.3%" not in page and "<th>inconsistency</th>" in page
    assert all(0 <= share <= 1 for share in shown_shares(page.split('<section id="callpaths">')[1]))


def disagreeing():
    """main->a outgrows main: at p=256 its overhead, 3·256·8 = 6144, is three times main's, 256·8 = 2048."""
    return one_parameter({"main": lambda p: 100 / p + np.log2(p), "main->a": lambda p: 90 / p + 3 * np.log2(p),
                          "main->b": lambda p: 10 / p})


UNDETERMINED = ("at p=256 the overhead of every call path with a share of it is inconsistent: main->a (its overhead, "
                "6144, exceeds its parent's, 2048)")


def test_the_limiter_is_undetermined_when_no_call_path_with_overhead_is_consistent():
    result = extrap_plugins.efficiency(disagreeing(), target=256, values="inclusive")
    assert result.limiter is None and [c.callpath for c in result.passed_over] == ["main->a"]
    assert result.limiter_note == UNDETERMINED
    assert [(c.callpath, c.inconsistency) for c in result.callpaths] == [
        ("main->b", ""), ("main->a", "its overhead, 6144, exceeds its parent's, 2048"),
        ("main", "its modelled children's overhead, 6144, exceeds its own, 2048")]
    assert repr(result) == "<Efficiency of time over p, strong scaling: iso-efficiency none; limiter undetermined>"
    text = extrap_plugins.export_report(result, "text")
    assert f"limiter: undetermined ({UNDETERMINED})\n" in text
    assert "overhead per call path at p=256 (overhead growth, overhead, work and E with its children), ranked by own share; those with inconsistent overhead after the others:" \
        in text and all(0 <= share <= 1 for share in shown_shares(text))
    document = json.loads(extrap_plugins.export_report(result, "json"))
    assert document["limiter"] is None and document["limiter_note"] == UNDETERMINED
    assert document["passed_over"] == ["main->a"]
    assert html.escape(f"limiter: undetermined ({UNDETERMINED})") in extrap_plugins.export_report(result, "html")


def test_an_overhead_above_the_whole_programs_is_no_share_either():
    # exclusive values: main->b gets faster with p (its overhead is negative), so main->a's overhead, 2·256·8 = 4096,
    # exceeds the whole program's, 4096 + 100/256^(1/2) − 100 = 4002.25
    data = one_parameter({"main": lambda p: 0 * p, "main->a": lambda p: 2 * np.log2(p),
                          "main->b": lambda p: 100 / p ** 1.5})
    with pytest.warns(UserWarning, match="all values are zero"):
        result = extrap_plugins.efficiency(data, target=256, values="exclusive")
    assert result.limiter is None and result.limiter_note == (
        "at p=256 the overhead of every call path with a share of it is inconsistent: main->a (its overhead, 4096, "
        "exceeds the whole program's, 4002)")
    assert result.notes[-1] == (
        "at p=256 the overhead of 1 call path is inconsistent (where it exceeds the whole program's, the overhead of "
        "other call paths is negative): its shares are not given, the ranking puts it after the others and the "
        "limiter passes it over: main->a (its overhead, 4096, exceeds the whole program's, 4002); total (--total) "
        "names the call paths to trust for the total")


# ----------------------------------------------------- defaults for Caliper
AVERAGE_CHOSEN = ("metric 'Avg time/rank' chosen, as no metric is named time: of the time metrics ('Min time/rank', "
                  "'Max time/rank', 'Avg time/rank', 'Total time') it is the average over the processes, which times "
                  "their count is the time they consume together (a minimum or maximum over them does not add up "
                  "over call paths, a sum over them is that product already); metric (--metric) chooses another")


def test_without_a_time_metric_the_average_over_the_ranks_is_analysed(shared_data, capsys):
    # the metric analysed was the first, Min time/rank
    pytest.importorskip("caliperreader", reason="the caliper extra (caliper-reader) is not installed")
    path = shared_data.joinpath(*LULESH)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = extrap_plugins.efficiency(path, values="inclusive")
        chosen = extrap_plugins.efficiency(path, values="inclusive", metric="Avg time/rank")
    assert result.metric == "Avg time/rank" and result.notes[0] == AVERAGE_CHOSEN
    assert result.notes[1:] == chosen.notes
    assert [r.efficiency for r in result.rows] == [r.efficiency for r in chosen.rows]
    assert main(["efficiency", str(path), "--values", "inclusive"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("efficiency of Avg time/rank over jobsize: strong scaling, fixed problem size; level 0.8\n")
    assert f"\nnote: {AVERAGE_CHOSEN}\n" in out


def time_metrics(*names, kind="time"):
    return [extrap_plugins.Metric(name, "sec", kind) for name in names]


@pytest.mark.parametrize("metrics, chosen, note", [
    (time_metrics("time", "Avg time/rank"), "time", ""),  # Extra-P's and Score-P's name, as before
    ([extrap_plugins.Metric("visits", "", "count")], "visits", ""),  # the only one
    (time_metrics("Min time/rank", "mean runtime"), "mean runtime",
     "metric 'mean runtime' chosen, as no metric is named time: of the time metrics ('Min time/rank', 'mean runtime') "
     "it is the average over the processes, which times their count is the time they consume together (a minimum or "
     "maximum over them does not add up over call paths, a sum over them is that product already); metric (--metric) "
     "chooses another"),
    (time_metrics("wall time") + [extrap_plugins.Metric("visits", "", "count")], "wall time",
     "metric 'wall time' chosen, as no metric is named time: it is the only time metric; metric (--metric) chooses "
     "another"),
])
def test_the_default_metric(metrics, chosen, note):
    from extrap_plugins.efficiency_analysis import default_metric

    assert default_metric(metrics) == (chosen, note)


@pytest.mark.parametrize("metrics, message", [
    (time_metrics("Min time/rank", "Max time/rank"),
     "which metric? none is named time and of the time metrics, 'Min time/rank', 'Max time/rank', none is an average "
     "over the processes: give metric (--metric), the time of one process (an average over the processes where there "
     "are several)"),
    (time_metrics("avg time/rank", "mean time/thread"),
     "which metric? none is named time and of the time metrics, 'avg time/rank', 'mean time/thread', more than one "
     "('avg time/rank', 'mean time/thread') is an average over the processes: give metric (--metric), the time of one "
     "process (an average over the processes where there are several)"),
    (time_metrics("visits", "bytes", kind=""),
     "which metric? none is named time and no metric is a time ('visits', 'bytes'): give metric (--metric), the time "
     "of one process (an average over the processes where there are several)"),
])
def test_an_ambiguous_default_metric_is_refused_naming_the_candidates(metrics, message):
    from extrap_plugins.efficiency_analysis import default_metric

    assert raised(lambda: default_metric(metrics)) == message


def test_two_metrics_and_none_a_time_are_refused_before_modelling(tmp_path, capsys):
    path = tmp_path / "two.csv"
    path.write_text("callpath,metric,p,value\n" + "".join(f"main,{m},{p},{v * p}\n" for m, v in
                                                           (("visits", 1), ("bytes", 8)) for p in (1, 2, 4, 8, 16)))
    assert main(["efficiency", str(path)]) == 2
    assert capsys.readouterr().err == (
        "extrap-plugins: error: which metric? none is named time and no metric is a time ('visits', 'bytes'): give "
        "metric (--metric), the time of one process (an average over the processes where there are several)\n")


def test_weak_scaling_without_a_size_takes_the_size_per_process_as_fixed(shared_data, capsys):
    # LULESH runs 30³ elements per rank in every run (problem_size=30 in the metadata, left out as constant): weak
    # scaling was refused without --size, and --size problem_size said "no such parameter"
    pytest.importorskip("caliperreader", reason="the caliper extra (caliper-reader) is not installed")
    path = shared_data.joinpath(*LULESH)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed = extrap_plugins.efficiency(path, scaling="weak", values="inclusive")
        named = extrap_plugins.efficiency(path, scaling="weak", values="inclusive", metric="Avg time/rank",
                                          size="problem_size", reader_options={"parameters": "jobsize,problem_size"})
    assert fixed.size is None and fixed.isoefficiency is None
    assert [r.efficiency for r in fixed.rows] == pytest.approx([r.efficiency for r in named.rows], rel=1e-12)
    assert all(r.efficiency == pytest.approx(fixed.rows[0].time / r.time, rel=1e-12) for r in fixed.rows)  # T(p0)/T
    # T(2744) = 53.38 s of 50.82 at p0: the total's root models of T, extrapolated eight-fold, add 2.6 s; it was
    # 0.9477 (53.62 s) before single runs were judged so, mostly MPI_Comm_split's
    # 1.494e-7 · jobsize^(4/3) · log2(jobsize)^2 (was 9.514e-7 · jobsize^(7/4): the two fit its five scattered runs,
    # 1.5 to 26 ms, alike, relative RSS 0.95 against 0.92) giving 0.75 s at 2744 against 0.99
    assert round(fixed.rows[-1].efficiency, 4) == 0.952
    # a model without a term in jobsize has no overhead, exactly: it said "exceeds its parent's, 1.455e-11"
    nodal = next(c for c in fixed.callpaths if c.callpath == "main->lulesh.cycle->LagrangeLeapFrog->LagrangeNodal")
    assert nodal.overhead_growth == "O(1)" and nodal.overhead_target == 0
    assert not any("e-11" in c.inconsistency or "e-12" in c.inconsistency for c in fixed.callpaths)
    assert named.isoefficiency is None and named.isoefficiency_note == (
        "problem_size has one measured value (30): the iso-efficiency function needs measurements at several problem "
        "sizes")
    assert main(["efficiency", str(path), "--scaling", "weak", "--values", "inclusive"]) == 0
    assert capsys.readouterr().out.startswith(
        "efficiency of Avg time/rank over jobsize: weak scaling, fixed problem size per process; level 0.8\n")
    assert main(["efficiency", str(path), "--scaling", "weak", "--size", "problem_size"]) == 2
    assert capsys.readouterr().err == (
        "extrap-plugins: error: size 'problem_size' (--size): no such parameter; the parameters are jobsize (a problem "
        "size that is the same in every run is no parameter: leave size (--size) out, and the analysis takes the size "
        "as fixed)\n")


# ------------------------------------------------------------- notebooks
def notebook_view(page: str) -> str:
    """What a notebook should show of a report: the page's header and body, in a div whose style is scoped to it."""
    from extrap_plugins.reports import scoped_style

    content = page.split("<body>\n")[1].split("\n</body>")[0]
    return f'<div class="extrap-plugins-report">\n<style>{scoped_style()}</style>\n{content}\n</div>\n'


def test_a_notebook_shows_the_html_report(known):
    # hasattr(extrap_plugins.efficiency(...), "_repr_html_") was False: a notebook showed the one-line repr
    shown = known._repr_html_()
    assert shown == notebook_view(extrap_plugins.export_report(known, "html"))
    assert 'class="chart efficiency-plot"' in shown and '<table id="callpath-table">' in shown
    assert not any(tag in shown for tag in ("<!DOCTYPE", "<html", "<head>", "<body", "<meta", "<script"))
    style = shown.split("<style>")[1].split("</style>")[0]
    selectors = [part.strip() for rule in style.splitlines() for part in rule.split("{")[0].split(",")]
    assert len(selectors) == 21 and all(s.startswith(".extrap-plugins-report") for s in selectors)


def test_the_notebook_view_draws_and_leaves_the_notebooks_style_alone(browser, known, tmp_path):  # noqa: F811
    path = tmp_path / "notebook.html"
    path.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'><style>body { background: rgb(1, 2, 3); }"
                    f"</style></head><body><p id='before'>a cell</p>{known._repr_html_()}</body></html>")
    page = StaticPage(browser, path)
    assert page.width(".extrap-plugins-report svg.efficiency-plot") > 300
    assert page.count(".extrap-plugins-report svg.efficiency-plot path.curve") == 1
    assert page.count("#callpath-table tbody tr") == 1 and page.count("#scaling-table tbody tr") == 7
    background = "node => getComputedStyle(node).backgroundColor"
    assert page.page.eval_on_selector("body", background) == "rgb(1, 2, 3)"
    assert page.page.eval_on_selector(".extrap-plugins-report header", background) == "rgb(31, 59, 90)"
    assert page.console == [] and page.requests == [page.url]
    page.page.close()


def test_what_reading_warned_of_is_in_the_json_text_and_html_reports(tmp_path):
    """A value left out while reading was said on stderr alone: the JSON a pipeline keeps said nothing of it."""
    path = tmp_path / "runs.jsonl"
    said = measured(path)
    with pytest.warns(ExtrapWarning):  # (and the model's own, of the point left out)
        result = extrap_plugins.efficiency(str(path), size="n")
    assert result.reading_warnings == (said,)
    document = json.loads(extrap_plugins.export_report(result, "json"))
    assert (document["version"], document["reading_warnings"]) == (1, [said])
    assert extrap_plugins.export_report(result, "text").endswith(
        f"\n\nwarnings on reading:\n  {said}\n\nwarnings:\n  main [time]: 1 of 25 points have no finite value (NaN or "
        "infinite) and were left out\n")
    assert f"<dt>warnings on reading</dt><dd>{html.escape(said)}</dd>" in extrap_plugins.export_report(result, "html")
