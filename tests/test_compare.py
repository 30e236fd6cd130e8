"""Comparing two experiments: matching, ratios, growth, crossovers with known answers, significance, outputs,
bad input, and Intel MPI against Open MPI from mpi_data.csv."""

from __future__ import annotations

import csv
import dataclasses
import html
import io
import json

import numpy as np
import pytest
from browser_helpers import StaticPage
from reading_helpers import measured, noted

import extrap_plugins
from extrap_plugins import Experiment, InputError
from extrap_plugins.cli import main
from extrap_plugins.comparison import Rule, parse_rule, read_mapping
from extrap_plugins.errors import ExtrapWarning

P = [4, 8, 16, 32, 64]
MPI = {"value": "median", "parameters": "Ranks", "callpath": "mpi,variable"}


def experiment(functions, ps=P, noise=0.0, repetitions=1, seed=0, unit=""):
    rng = np.random.default_rng(seed)
    rows, values, paths = [], [], []
    for name, f in functions.items():
        for p in ps:
            for _ in range(repetitions):
                rows.append([p])
                values.append(f(p) * (1 + noise * rng.normal()))
                paths.append(name)
    from extrap_plugins import Metric

    return Experiment.from_columns(["p"], callpath=np.array(paths), metric="time", coordinates=np.array(rows, float),
                                   value=np.array(values), metrics=[Metric("time", unit)] if unit else ())


@pytest.fixture(scope="module")
def known():
    a = experiment({"main": lambda p: 100 + p, "main->solve": lambda p: 20 * np.log2(p), "main->old": lambda p: p})
    b = experiment({"main": lambda p: 20 + 2 * p, "main->solve": lambda p: 3 * p, "main->new": lambda p: p})
    return extrap_plugins.compare(a, b, labels=("v1", "v2"), target="p=1024")


# ------------------------------------------------------------ known answers
def test_crossovers_are_solved_from_the_models(known):
    pairs = {p.callpath_a: p for p in known.pairs}
    main_pair = pairs["main"]
    assert [c.value for c in main_pair.crossovers] == [pytest.approx(80.0, rel=1e-9)]  # 100 + p = 20 + 2p
    assert main_pair.crossovers[0].lower_after == "v1"
    # 20·log2(p) = 3p once in [4, 1024], near p = 34 (its other root lies below the measured range)
    from scipy.optimize import brentq

    expected = brentq(lambda p: 20 * np.log2(p) - 3 * p, 4, 64, xtol=1e-13)
    solve = pairs["main->solve"]
    assert [c.value for c in solve.crossovers] == [pytest.approx(expected, rel=1e-9)]
    assert [c.lower_after for c in solve.crossovers] == ["v1"]
    assert solve.growth_a == "O(log p)" and solve.growth_b == "O(p)" and solve.growth_differs


def test_every_crossing_with_the_side_that_is_lower_after():
    from extrap_plugins.scaling import crossings

    found = crossings(lambda p: (p - 10) * (p - 100) * (p - 500), 4, 1024)
    assert [x for x, _ in found] == [pytest.approx(v, rel=1e-12) for v in (10, 100, 500)]
    assert [after for _, after in found] == [1, -1, 1]
    assert crossings(lambda p: p + 1, 4, 1024) == []


def test_ratios_growth_and_significance(known):
    main_pair = next(p for p in known.pairs if p.callpath_a == "main")
    assert main_pair.value_a_largest == pytest.approx(164) and main_pair.value_b_largest == pytest.approx(148)
    assert main_pair.ratio_largest == pytest.approx(148 / 164)
    assert main_pair.ratio_target == pytest.approx((20 + 2048) / (100 + 1024))
    assert main_pair.growth_a == main_pair.growth_b == "O(p)" and not main_pair.growth_differs
    assert main_pair.significant is True  # noise-free fits: intervals of zero width
    assert known.largest == {"p": 64.0} and known.target == {"p": 1024.0} and known.along == "p"
    # ranked by |log2(B/A)| at the target: solve (3072 vs 200) changed most
    assert [p.callpath_a for p in known.pairs] == ["main->solve", "main"]


def test_unmatched_are_listed_with_the_reason(known):
    assert [(u.side, u.callpath, u.reason) for u in known.unmatched] == [
        ("v1", "main->old", "not in v2 (by name)"), ("v2", "main->new", "no partner in v1")]


def test_significance_against_the_prediction_intervals():
    rng_a = experiment({"k": lambda p: 10 + p}, noise=0.02, repetitions=5, seed=1)
    same = experiment({"k": lambda p: 10 + p}, noise=0.02, repetitions=5, seed=2)
    slower = experiment({"k": lambda p: 10 + 1.5 * p}, noise=0.02, repetitions=5, seed=3)
    assert extrap_plugins.compare(rng_a, same, target="p=128").pairs[0].significant is False
    assert extrap_plugins.compare(rng_a, slower, target="p=128").pairs[0].significant is True


def test_mapping_rules_and_files(tmp_path):
    assert Rule("cpu->*", "gpu->*_kernel").apply("cpu->stencil") == "gpu->stencil_kernel"
    assert Rule("a->*->*", "b->*->*").apply("a->x->y") == "b->x->y"
    assert Rule("cpu->*", "gpu->*").apply("main->cpu->x") is None
    assert parse_rule(" cpu->solve = gpu->solve_kernel ") == Rule("cpu->solve", "gpu->solve_kernel")
    path = tmp_path / "map.csv"
    path.write_text("a,b\n# comment\ncpu->solve,gpu->solve_kernel\n\nIntelMPI->*,OpenMPI->*\n")
    assert read_mapping(path) == [Rule("cpu->solve", "gpu->solve_kernel"), Rule("IntelMPI->*", "OpenMPI->*")]
    # the header after a comment line is still the header (it was read as the rule a -> b)
    path.write_text("# the port of the solver\n\nFrom,To\ncpu->solve,gpu->solve_kernel\n")
    assert read_mapping(path) == [Rule("cpu->solve", "gpu->solve_kernel")]
    a = experiment({"main": lambda p: 10 + p, "main->cpu_solve": lambda p: 5 * p})
    b = experiment({"main": lambda p: 10 + p, "main->gpu_solve": lambda p: 0.5 * p})
    (tmp_path / "port.csv").write_text("main->cpu_solve,main->gpu_solve\n")
    result = extrap_plugins.compare(a, b, mapping=tmp_path / "port.csv", labels=("CPU", "GPU"))
    port = next(p for p in result.pairs if p.callpath_a == "main->cpu_solve")
    assert port.callpath_b == "main->gpu_solve" and port.name == "main->cpu_solve → main->gpu_solve"
    assert port.ratio_target == pytest.approx(0.1) and result.unmatched == []


def test_metrics_must_agree_in_unit():
    a = experiment({"main": lambda p: p}, unit="s")
    b = experiment({"main": lambda p: p}, unit="ms")
    with pytest.raises(InputError, match=r"no call path and metric match in name and unit: main \[time\]: units "
                                         r"differ: s in A, ms in B"):
        extrap_plugins.compare(a, b)


# ----------------------------------------------------------------- outputs
def test_json_csv_and_text(known):
    document = json.loads(extrap_plugins.export_report(known, "json"))
    assert document["format"] == "extrap-plugins/comparison" and document["version"] == 1
    assert document["labels"] == {"A": "v1", "B": "v2"} and document["target_point"] == {"p": 1024.0}
    first = document["pairs"][0]
    assert first["callpath_a"] == "main->solve" and first["growth_differs"] is True
    assert [c["p"] for c in first["crossovers"]] == [pytest.approx(c.value) for c in known.pairs[0].crossovers]
    assert document["unmatched"][0]["callpath"] == "main->old"
    rows = list(csv.DictReader(io.StringIO(extrap_plugins.export_report(known, "csv"))))
    assert [r["callpath_a"] for r in rows] == ["main->solve", "main"]
    assert float(rows[1]["crossovers"].split(":")[0]) == pytest.approx(80.0)
    text = extrap_plugins.export_report(known, "text")
    assert "p=80 (v1 lower after)" in text and "O(log p) → O(p)" in text
    assert "v1: main->old [time]: not in v2 (by name)" in text  # (it named the call path twice)


def test_html_opens_in_chromium_with_two_curves_and_the_crossover(browser, known, tmp_path):  # noqa: F811
    path = tmp_path / "compare.html"
    extrap_plugins.export_report(known, "html", path, title="v1 against v2")
    text = path.read_text()
    assert "<script" not in text and "default-src 'none'" in text
    page = StaticPage(browser, path)
    assert page.count("svg.pair-plot") == 2
    assert page.count("#pair-2 svg path.curve") == 2  # main: both models
    assert page.count("#pair-2 svg line.mark-x") == 2  # the crossover at p = 80, and the target
    assert "crossover p=80" in page.page.text_content("#pair-2 svg")
    assert page.count("#pair-table tbody tr") == 2 and page.count("#unmatched-table tbody tr") == 2
    assert page.width("#pair-1 svg") > 300
    assert page.console == [] and page.requests == [page.url]
    page.page.close()


# ---------------------------------------------------------------- bad input
def test_different_parameters_no_common_call_path_and_a_low_target_are_errors():
    a = experiment({"main": lambda p: p})
    two = Experiment.from_columns(["p", "n"], callpath="main", metric="time",
                                  coordinates=[[p, n] for p in P for n in P], value=[1.0] * 25)
    with pytest.raises(InputError, match=r"A has parameters \(p\) but B has \(p, n\): compare experiments over the "
                                         r"same parameters"):
        extrap_plugins.compare(a, two)
    with pytest.raises(InputError, match=r"no call path of A .* matches one of B .*: map them with mapping=FILE or "
                                         r"rules=\['A_CALLPATH=B_CALLPATH'\] \(--map, --map-rule"):
        extrap_plugins.compare(a, experiment({"other": lambda p: p}))
    assert raised(lambda: extrap_plugins.compare(a, experiment({"main": lambda p: p}), target="p=32")) == (
        "the target p=32 is below the largest measured p=64: the target must be at least it")


def raised(call) -> str:
    """The message of the InputError ``call`` raises (exactly that type, not a raw builtin error)."""
    with pytest.raises(InputError) as error:
        call()
    assert type(error.value) is InputError
    return str(error.value)


@pytest.mark.parametrize("labels, got", [(("only",), "the tuple ('only',) (1 given)"), ("AB", "the str 'AB'"),
                                         (None, "None")])
def test_labels_are_two_names(labels, got):
    a = experiment({"main": lambda p: p})
    assert raised(lambda: extrap_plugins.compare(a, a, labels=labels)) == (
        f"labels (--label): expected two names, A's and B's, such as ('v1', 'v2'); got {got}")


def test_what_cannot_be_compared_is_named():
    a = experiment({"main": lambda p: p})
    assert raised(lambda: extrap_plugins.compare(1, 2)) == (
        "compare: a: expected a path (str or os.PathLike), a list of paths, an Experiment or a ModelSet, got the int 1")
    assert raised(lambda: extrap_plugins.compare(a, [a])) == (
        "compare: b: expected a path (str or os.PathLike), a list of paths, an Experiment or a ModelSet, got a list "
        "holding an Experiment")
    models = extrap_plugins.model(a)
    assert raised(lambda: extrap_plugins.compare(models, a, reader="csv", reader_options={"value": "median"})) == (
        "compare: reader and reader_options say how to read measurements, but nothing is read (ModelSets and "
        "Experiments are given): leave them out")
    named = extrap_plugins.model(dataclasses.replace(a, source="a.csv"))
    assert raised(lambda: extrap_plugins.compare(named, a, callpaths_a="zz")) == (
        "a.csv: no call path matches 'zz'; the call paths are main")
    assert raised(lambda: extrap_plugins.compare(a, a, along="q")) == (
        "along 'q' (--along): no such parameter; the parameters are p")


def test_one_str_is_one_rule_and_the_level_may_be_a_percentage():
    a = experiment({"cpu->stencil": lambda p: 2 * p})
    b = experiment({"gpu->stencil": lambda p: p})
    result = extrap_plugins.compare(a, b, rules="cpu->*=gpu->*", level="90%", callpaths_a="cpu->*", metrics="time")
    assert [(pair.callpath_a, pair.callpath_b) for pair in result.pairs] == [("cpu->stencil", "gpu->stencil")]
    assert result.level == 0.9
    models = extrap_plugins.compare(extrap_plugins.model(a), b, rules="cpu->*=gpu->*", callpaths_a="cpu->*",
                                    metrics="time")  # selections apply to a ModelSet's models as to measurements
    assert [(pair.callpath_a, pair.callpath_b) for pair in models.pairs] == [("cpu->stencil", "gpu->stencil")]
    assert raised(lambda: extrap_plugins.compare(a, b, level=95)) == (
        "level (--level): expected a share between 0 and 1 (exclusive), such as 95% or 0.95, got 95")


def test_the_result_prints_as_its_report_and_has_a_short_repr(known):
    assert str(known) == extrap_plugins.export_report(known, "text")
    assert repr(known) == "<Comparison v1 vs v2: 2 matched, 2 significantly different at p=1024, 2 unmatched>"


def write(path, functions, ps=P):
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["callpath", "p", "value"])
        for name, f in functions.items():
            for p in ps:
                writer.writerow([name, p, repr(float(f(p)))])
    return str(path)


@pytest.mark.parametrize("b_functions, arguments, message", [
    ({"other": lambda p: p}, [], "no call path of A (main) matches one of B (other): map them with "
                                 "mapping=FILE or rules=['A_CALLPATH=B_CALLPATH'] (--map, --map-rule; '*' for any "
                                 "text)"),
    ({"main": lambda p: p}, ["--target", "p=8"], "the target p=8 is below the largest measured p=64: the target "
                                                 "must be at least it"),
    ({"main": lambda p: p}, ["--label", "A=x", "--label", "B=x"],
     "the two labels are both 'x': give each side its own (labels=('v1', 'v2'); --label A=... --label B=...)"),
    # a side labelled twice: the last label won, without a word
    ({"main": lambda p: p}, ["--label", "A=x", "--label", "a=y"], "--label names A twice: 'x' and 'y'"),
    ({"main": lambda p: p}, ["--map-rule", "nothing"],
     "mapping rule 'nothing': expected A_CALLPATH=B_CALLPATH, such as 'IntelMPI->*=OpenMPI->*'"),
    ({"main": lambda p: p}, ["--level", "100%"],
     "--level: expected a share between 0 and 1 (exclusive), such as 95% or 0.95, got 100%"),
])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys, b_functions, arguments, message):
    a = write(tmp_path / "a.csv", {"main": lambda p: p})
    b = write(tmp_path / "b.csv", b_functions)
    assert main(["compare", a, b, *arguments]) == 2
    assert capsys.readouterr().err == f"extrap-plugins: error: {message}\n"


def test_cli_different_parameters(tmp_path, capsys):
    a = write(tmp_path / "a.csv", {"main": lambda p: p})
    b = tmp_path / "b.csv"
    b.write_text("callpath,q,value\n" + "".join(f"main,{p},{p}\n" for p in P))
    assert main(["compare", a, str(b)]) == 2
    assert capsys.readouterr().err == ("extrap-plugins: error: A has parameters (p) but B has (q): compare "
                                       "experiments over the same parameters (rename with the reader's options, or "
                                       "select runs)\n")


# ------------------------------------------------------ Intel MPI, Open MPI
MPI_ARGUMENTS = ["--reader-option", "value=median", "--reader-option", "parameters=Ranks", "--reader-option",
                 "callpath=mpi,variable", "--callpath-a", "IntelMPI->*", "--callpath-b", "OpenMPI->*",
                 "--map-rule", "IntelMPI->*=OpenMPI->*", "--label", "A=IntelMPI", "--label", "B=OpenMPI",
                 "--target", "Ranks=4096"]


def test_intel_mpi_against_open_mpi(shared_data, tmp_path, capsys):
    path = str(shared_data / "extrap" / "mpi_data.csv")
    assert main(["compare", path, path, *MPI_ARGUMENTS, "--export", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    collectives = {"MPI_Allgather", "MPI_Allreduce", "MPI_Alltoall", "MPI_Barrier", "MPI_Bcast", "MPI_Gather",
                   "MPI_Reduce"}
    assert {p["callpath_a"].split("->")[1] for p in document["pairs"]} == collectives  # every collective matched
    assert all(p["callpath_b"] == p["callpath_a"].replace("IntelMPI", "OpenMPI") for p in document["pairs"])
    assert document["unmatched"] == [] and document["largest_common_point"] == {"Ranks": 512.0}
    crossing = {p["callpath_a"]: p["crossovers"] for p in document["pairs"]}
    assert any(crossing.values())  # crossovers listed
    for crossovers in crossing.values():
        assert all(32 <= c["Ranks"] <= 4096 and c["lower_after"] in ("IntelMPI", "OpenMPI") for c in crossovers)
    changes = [abs(np.log2(p["ratio_target"])) for p in document["pairs"]]
    assert changes == sorted(changes, reverse=True)


def test_intel_mpi_against_open_mpi_report_in_chromium(shared_data, browser, tmp_path):  # noqa: F811
    path = str(shared_data / "extrap" / "mpi_data.csv")
    report = tmp_path / "mpi.html"
    assert main(["compare", path, path, *MPI_ARGUMENTS, "--export", "html", "-o", str(report)]) == 0
    page = StaticPage(browser, report)
    assert page.count("svg.pair-plot") == 7 and page.count("svg.pair-plot path.curve") == 14
    assert page.count("svg.pair-plot line.mark-x") >= 7  # the target in every figure, and the crossovers
    assert page.console == [] and page.requests == [page.url]
    page.page.close()


def test_the_same_through_the_api(shared_data):
    path = shared_data / "extrap" / "mpi_data.csv"
    result = extrap_plugins.compare(path, path, labels=("IntelMPI", "OpenMPI"), rules=["IntelMPI->*=OpenMPI->*"],
                                    callpaths_a=["IntelMPI->*"], callpaths_b=["OpenMPI->*"], reader_options=MPI)
    assert len(result.pairs) == 7 and not result.target_given and result.target == {"Ranks": 512.0}


def test_each_side_s_model_warnings_are_in_the_json_report_beside_its_pair(shared_data, capsys):
    path = str(shared_data / "extrap" / "text" / "mpa" / "relearn_data.txt")
    assert main(["compare", path, path, "--export", "json"]) == 0
    pairs = {p["callpath_a"]: p for p in json.loads(capsys.readouterr().out)["pairs"]}
    rise = ("the values rise 23.2-fold from p=32 to p=512 (4.916e-06 to 0.000114, the mean of 5 lines along p), but "
            "the model is the constant: no hypothesis that describes them is plausible")
    assert pairs["Insert branch nodes into global tree"]["warnings_a"] == [rise]
    assert pairs["Insert branch nodes into global tree"]["warnings_b"] == [rise]
    assert pairs["Update local trees"]["warnings_a"] == pairs["Update local trees"]["warnings_b"] == []


def test_identical_experiments_and_constant_series(tmp_path):
    """The stencil example against itself: ratios 1, no crossover, nothing significant; constant metrics plot."""
    import pathlib

    stencil = pathlib.Path(__file__).resolve().parents[1] / "examples" / "stencil.jsonl"
    result = extrap_plugins.compare(stencil, stencil, target="p=4096,n=16384")
    assert len(result.pairs) == 7 and result.unmatched == []
    assert all(p.ratio_target == pytest.approx(1.0) and p.crossovers == () for p in result.pairs)
    assert {p.significant for p in result.pairs} <= {False, None}
    html = extrap_plugins.export_report(result, "html")
    assert html.count('class="chart pair-plot"') == 7


def test_degenerate_series_still_draw():
    from extrap_plugins.reports.svg import Series, chart

    for ys in ([8, 8, 8], [8, 8.000000000000002, 8], [0, 0, 0], [-3, -3, -3]):
        for log in (False, True):
            for xs in ([1, 2, 4], [1, 1, 1]):
                assert chart([Series("a", xs, ys)], title="t", x_label="x", y_label="y", y_log=log).endswith("</svg>")
    assert chart([], title="t", x_label="x", y_label="y").endswith("</svg>")


def test_cli_with_a_mapping_file_and_csv(tmp_path, capsys):
    a = write(tmp_path / "a.csv", {"main": lambda p: 10 + p, "main->cpu_solve": lambda p: 5 * p})
    b = write(tmp_path / "b.csv", {"main": lambda p: 10 + p, "main->gpu_solve": lambda p: 0.5 * p + 40})
    (tmp_path / "map.csv").write_text("a,b\nmain->cpu_*,main->gpu_*\n")
    assert main(["compare", a, b, "--map", str(tmp_path / "map.csv"), "--label", "A=CPU", "--label", "B=GPU",
                 "--target", "p=1024", "--export", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    port = next(r for r in rows if r["callpath_a"] == "main->cpu_solve")
    assert port["callpath_b"] == "main->gpu_solve"
    assert float(port["crossovers"].split(":")[0]) == pytest.approx(40 / 4.5) and port["crossovers"].endswith(":GPU")
    assert main(["compare", a, b, "--map", str(tmp_path / "nothing.csv")]) == 2
    assert "no such mapping file" in capsys.readouterr().err


@pytest.mark.parametrize("content, line, why", [
    (b"a,b\nmain->s\xe9lve,main->solve\n", 2, "byte 0xe9"),  # Latin-1
    (b"tAu\xc5p\xa3\xacp\xef\n\x00\x87", 2, "NUL bytes: UTF-16 without its byte-order mark?"),  # random bytes
])
def test_a_mapping_file_not_in_utf8_is_one_line_exit_2_naming_its_line(tmp_path, capsys, content, line, why):
    # both ended in UnicodeDecodeError in read_mapping (exit 1)
    a = write(tmp_path / "a.csv", {"main": lambda p: 10 + p})
    b = write(tmp_path / "b.csv", {"main": lambda p: 10 + p})
    mapping = tmp_path / "map.csv"
    mapping.write_bytes(content)
    assert main(["compare", a, b, "--map", str(mapping)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"extrap-plugins: error: {mapping}:{line}: not UTF-8 text ({why}); save the mapping "
                    "file as UTF-8 (a CSV of 'A call path,B call path' lines)\n")


def test_a_mapping_file_with_a_byte_order_mark_maps_its_first_call_path(tmp_path):
    # the mark stayed at the start of the first rule, which then matched no call path
    mapping = tmp_path / "map.csv"
    mapping.write_bytes(b"\xef\xbb\xbfmain->cpu_*,main->gpu_*\r\n")
    assert read_mapping(mapping) == [Rule("main->cpu_*", "main->gpu_*")]


# ------------------------------------------------- no common measured point
LOW, HIGH = [1, 2, 4, 8, 16], [64, 128, 256, 512, 1024]


@pytest.fixture(scope="module")
def disjoint():
    """A measured at p = 1..16, B at p = 64..1024: no point lies in both measured ranges."""
    return experiment({"main": lambda p: 10 + 2 * p}, ps=LOW), experiment({"main": lambda p: 100 + p}, ps=HIGH)


NOT_TESTED = ("the target p=16 lies below B's measured range (p from 64 to 1024), where a prediction interval leaves "
              "out the uncertainty of the model choice")


def test_without_a_common_measured_point_the_report_says_so_and_tests_no_significance(disjoint):
    # said "largest common point p=16 ... significant yes": B never ran at p=16, its value there is extrapolated
    # below its measured range, where its interval leaves out the model choice
    result = extrap_plugins.compare(*disjoint)
    assert not result.common and result.largest == {"p": 16.0} and result.target == {"p": 16.0}
    assert result.measured == ({"p": (1.0, 16.0)}, {"p": (64.0, 1024.0)})
    pair = result.pairs[0]
    assert pair.ratio_largest == pytest.approx(116 / 42)
    assert pair.significant is None and pair.untested == result.untested == NOT_TESTED
    lines = str(result).splitlines()
    assert lines[:3] == [
        "comparison: A against B; ratios are B/A",
        "no common measured point (A measured p from 1 to 16; B measured p from 64 to 1024): now is p=16, A's "
        "largest measured point, below B's measured range, where B's values are extrapolated; target p=16 (now; "
        "give --target to extrapolate); crossovers along p from 1 to 16",
        f"significant: n/a, not tested: {NOT_TESTED}"]
    assert lines[6].split() == ["1", "main", "time", "O(p)", "2.762", "2.762", "n/a", "none"]
    document = json.loads(extrap_plugins.export_report(result, "json"))
    assert document["ranges_overlap"] is False and document["significance_not_tested"] == NOT_TESTED
    assert document["measured_ranges"] == {"A": {"p": [1.0, 16.0]}, "B": {"p": [64.0, 1024.0]}}
    assert document["pairs"][0]["significant"] is None
    assert "significant: n/a, not tested: " in extrap_plugins.export_report(result, "html")


def test_a_target_above_both_measured_ranges_is_tested(disjoint, known):
    result = extrap_plugins.compare(*disjoint, target="p=4096")
    assert not result.common and result.untested == "" and result.pairs[0].significant is True
    assert str(result).splitlines()[2] == "significant: the 95% prediction intervals at the target do not overlap"
    between = extrap_plugins.compare(*disjoint, target="p=32")  # still below B's measurements
    assert between.pairs[0].significant is None and between.untested.startswith("the target p=32 lies below B's")
    assert known.common and known.untested == ""
    assert json.loads(extrap_plugins.export_report(known, "json"))["significance_not_tested"] is None


def test_cli_without_a_common_measured_point(tmp_path, capsys, disjoint):
    lo = write(tmp_path / "lo.csv", {"main": lambda p: 10 + 2 * p}, ps=LOW)
    hi = write(tmp_path / "hi.csv", {"main": lambda p: 100 + p}, ps=HIGH)
    assert main(["compare", lo, hi]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("no common measured point (A measured p from 1 to 16; B measured p from "
                                          "64 to 1024)")
    assert out.splitlines()[2] == f"significant: n/a, not tested: {NOT_TESTED}"
    assert main(["compare", lo, hi, "--target", "p=8"]) == 2
    assert capsys.readouterr().err == ("extrap-plugins: error: the target p=8 is below the largest measured p=16 "
                                       "(A's; B's is p=1024): the target must be at least it\n")


def test_a_target_below_the_largest_measured_value_says_which(disjoint):
    # said "below the measured range" of a target inside it
    assert raised(lambda: extrap_plugins.compare(disjoint[1], disjoint[0], target="p=8")) == (
        "the target p=8 is below the largest measured p=16 (B's; A's is p=1024): the target must be at least it")


# ----------------------------------------------------------------- plot_top
def test_a_negative_plot_top_is_refused_as_model_refuses_it(tmp_path, capsys, known):
    # compare --plot-top -1 --export html acted as 0; model refused it
    a = write(tmp_path / "a.csv", {"main": lambda p: 10 + p})
    b = write(tmp_path / "b.csv", {"main": lambda p: 20 + p})
    message = "plot_top: expected a whole number of at least 0, got -1"
    assert main(["model", a, "--export", "html", "--plot-top", "-1", "-o", str(tmp_path / "m.html")]) == 2
    assert capsys.readouterr().err == f"extrap-plugins: error: {message}\n"
    report = tmp_path / "c.html"
    assert main(["compare", a, b, "--export", "html", "--plot-top", "-1", "-o", str(report)]) == 2
    assert capsys.readouterr().err == f"extrap-plugins: error: {message}\n"
    assert not report.exists()
    assert raised(lambda: extrap_plugins.export_report(known, "html", plot_top=-1)) == message
    assert 'id="pair-1"' not in extrap_plugins.export_report(known, "html", plot_top=0)


# ------------------------------------------------------ mapping rules checked
def test_a_rule_that_maps_nothing_is_a_warning_naming_its_file_and_line(tmp_path, capsys):
    # such rules were ignored without a word
    a = write(tmp_path / "a.csv", {"main": lambda p: 10 + p, "main->x": lambda p: 2 * p})
    b = write(tmp_path / "b.csv", {"main": lambda p: 10 + p, "main->y": lambda p: p})
    mapping = tmp_path / "map.csv"
    mapping.write_text("a,b\nmain->x,main->y\nmain->nothere,main->y\nmain->*,main->*\n")
    assert main(["compare", a, b, "--map", str(mapping), "--map-rule", "zz=main->y"]) == 0
    out, err = capsys.readouterr()
    assert "main->x → main->y" in out
    assert err == (
        f"extrap-plugins: warning: {mapping}:3: the rule main->nothere,main->y matches no call path of A (main, "
        f"main->x)\n"
        f"extrap-plugins: warning: {mapping}:4: the rule main->*,main->* maps no call path: those of A it matches "
        f"(main->x) are mapped by an earlier rule\n"
        "extrap-plugins: warning: mapping rule 'zz=main->y' matches no call path of A (main, main->x)\n")


@pytest.mark.parametrize("lines, rules, message", [
    ("main->x,main->y\nmain->x,main->z\n", [],
     "{map}:2: a second rule for the A call path main->x (to main->z); line 1 maps it to main->y: give one rule per "
     "A call path"),
    ("main->x,main->y\n# the same again\nmain->x,main->y\n", [], "{map}:3: the same rule as line 1: give each rule once"),
    ("main->x,main->y\n", ["--map-rule", "main->x=main"],
     "mapping rule 'main->x=main': a second rule for the A call path main->x (to main); {map}:1 maps it to main->y: "
     "give one rule per A call path"),
])
def test_two_rules_for_one_a_call_path_are_refused(tmp_path, capsys, lines, rules, message):
    # only the first was used, the second ignored without a word
    a = write(tmp_path / "a.csv", {"main": lambda p: 10 + p, "main->x": lambda p: 2 * p})
    b = write(tmp_path / "b.csv", {"main": lambda p: 10 + p, "main->y": lambda p: p, "main->z": lambda p: p})
    mapping = tmp_path / "map.csv"
    mapping.write_text(lines)
    assert main(["compare", a, b, "--map", str(mapping), *rules]) == 2
    assert capsys.readouterr() == ("", f"extrap-plugins: error: {message.format(map=mapping)}\n")


def test_two_rules_for_one_a_call_path_through_the_api():
    a = experiment({"main->x": lambda p: 2 * p})
    b = experiment({"main->y": lambda p: p, "main->z": lambda p: p})
    assert raised(lambda: extrap_plugins.compare(a, b, rules=["main->x=main->y", "main->x=main->z"])) == (
        "mapping rule 'main->x=main->z': a second rule for the A call path main->x (to main->z); mapping rule "
        "'main->x=main->y' maps it to main->y: give one rule per A call path")
    assert raised(lambda: extrap_plugins.compare(a, b, rules=["main->x=main->y", "main->x=main->y"])) == (
        "mapping rule 'main->x=main->y': the same rule as an earlier mapping rule: give each rule once")
    with pytest.warns(extrap_plugins.ExtrapWarning, match=r"^mapping rule 'zz=main->y' matches no call path of A "
                                                          r"\(main->x\)$"):
        extrap_plugins.compare(a, b, rules=["main->x=main->y", "zz=main->y"])


def test_the_mapping_is_one_path():
    # a list of paths ended in a TypeError from os.path.exists (exit 1)
    a = experiment({"main": lambda p: p})
    assert raised(lambda: extrap_plugins.compare(a, a, mapping=["map.csv"])) == (
        "mapping (--map): expected the path (str or os.PathLike) of one CSV file of 'A call path,B call path' lines, "
        "got the list ['map.csv']")


def test_a_notebook_shows_the_html_report(known):
    # hasattr(extrap_plugins.compare(...), "_repr_html_") was False: a notebook showed the one-line repr
    from extrap_plugins.reports import scoped_style

    shown = known._repr_html_()
    content = extrap_plugins.export_report(known, "html").split("<body>\n")[1].split("\n</body>")[0]
    assert shown == f'<div class="extrap-plugins-report">\n<style>{scoped_style()}</style>\n{content}\n</div>\n'
    assert shown.count('class="pair"') == 2 and '<table id="pair-table">' in shown
    assert not any(tag in shown for tag in ("<!DOCTYPE", "<html", "<head>", "<body", "<meta", "<script"))


def test_a_warning_about_a_series_names_its_side(tmp_path, capsys):
    # both sides have their main [time]: "main [time]: the model is the mean" did not say whose
    scattered, rising = tmp_path / "old.csv", tmp_path / "new.csv"
    scattered.write_text("p,callpath,value\n" + "".join(f"{p},main,{v}\n" for p, v in zip(P, (5, 1, 9, 2, 7))))
    rising.write_text("p,callpath,value\n" + "".join(f"{p},main,{10 + p}\n" for p in P))
    assert main(["compare", str(scattered), str(rising), "--label", "A=old", "--label", "B=new"]) == 0
    assert capsys.readouterr().err == (
        "extrap-plugins: warning: old: main [time]: no hypothesis describes the measurements better than their mean "
        "(they jump or scatter, as a step does): the model is the mean\n")


def test_what_reading_warned_of_is_kept_per_side_in_the_json_text_and_html_reports(tmp_path):
    """A value left out while reading one side was said on stderr alone; the reports say it of that side."""
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    said = measured(old)
    measured(new, nan=False)
    with pytest.warns(ExtrapWarning):  # (and the model's own, of the point left out)
        result = extrap_plugins.compare(str(old), str(new), labels=("v1", "v2"), metrics="time")
    assert result.reading_warnings == ((said,), ())
    assert json.loads(extrap_plugins.export_report(result, "json"))["reading_warnings"] == {"A": [said], "B": []}
    text = extrap_plugins.export_report(result, "text")
    assert text.endswith(f"\n\nwarnings on reading v1:\n  {said}\n") and "warnings on reading v2" not in text
    page = extrap_plugins.export_report(result, "html")
    assert f"<dt>warnings on reading v1</dt><dd>{html.escape(said)}</dd>" in page and "reading v2" not in page


def test_what_each_side_s_reader_noted_is_kept_per_side_in_the_json_text_and_html_reports(tmp_path):
    """A key the reader of one side leaves unread is said in its notes alone (no warning): compare's JSON and
    reports said nothing of how either side was read.  Each side's notes come before what reading it warned of."""
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    note, _ = noted(old)
    said = measured(new)
    with pytest.warns(ExtrapWarning):  # (the value left out of B, and the model's own of it)
        result = extrap_plugins.compare(str(old), str(new), labels=("v1", "v2"), metrics="time")
    assert (result.reading_notes, result.reading_warnings) == (((note,), ()), ((), (said,)))
    document = json.loads(extrap_plugins.export_report(result, "json"))
    assert document["version"] == 1
    assert document["reading_notes"] == {"A": [note], "B": []}
    assert document["reading_warnings"] == {"A": [], "B": [said]}
    assert list(document).index("reading_notes") + 1 == list(document).index("reading_warnings")
    text = extrap_plugins.export_report(result, "text")
    assert text.endswith(f"\n\nnotes on reading v1:\n  {note}\n\nwarnings on reading v2:\n  {said}\n")
    assert "notes on reading v2" not in text and "warnings on reading v1" not in text
    page = extrap_plugins.export_report(result, "html")
    assert f"<dt>notes on reading v1</dt><dd>{html.escape(note)}</dd>" in page and "notes on reading v2" not in page
