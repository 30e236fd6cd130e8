"""Efficiency, second round as a performance engineer meets it: a named total that counts a call path twice, an
iso-efficiency model that misses the points it was fitted to, and the HTML report's conclusions."""

from __future__ import annotations

import csv
import html
import warnings
from pathlib import Path

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import Experiment, Factor, InputError, Model, Term
from extrap_plugins.cli import main
from extrap_plugins.formatting import format_number
from extrap_plugins.models import ModelSet

PS = np.array([1, 2, 4, 8, 16], dtype=float)


# ------------------------------------------------------- a total counted twice
def tree() -> ModelSet:
    """Inclusive values: main = compute + comm, T = 1000/p + 2·log2(p)."""
    compute = Model("main->compute", "time", ("p",), 0.0, (Term(1000.0, {"p": Factor(-1, 0)}),))
    comm = Model("main->comm", "time", ("p",), 0.0, (Term(2.0, {"p": Factor(0, 1)}),))
    whole = Model("main", "time", ("p",), 0.0, compute.terms + comm.terms)
    values = {"main": 1000 / PS + 2 * np.log2(PS), "main->compute": 1000 / PS, "main->comm": 2 * np.log2(PS)}
    measured = Experiment.from_columns(
        ["p"], callpath=np.repeat(list(values), len(PS)), metric="time", coordinates=np.tile(PS, 3)[:, None],
        value=np.concatenate(list(values.values())))
    return ModelSet(("p",), [whole, compute, comm], experiment=measured)


def test_a_total_naming_a_call_path_and_its_caller_is_refused():
    with pytest.raises(InputError) as error:  # was: the total main + main->comm, comm's overhead counted twice
        extrap_plugins.efficiency(tree(), total=["main->comm", "main"])
    assert str(error.value) == (
        "total (--total): 'main->comm' is part of 'main' (inclusive values: a call path's value holds its "
        "children's), so the total would count it twice: name 'main' or its parts, not both")
    parts = extrap_plugins.efficiency(tree(), total=["main->compute", "main->comm"])  # the parts are a total
    assert parts.rows[-1].overhead == pytest.approx(2 * 128 * 7 - 2 * 1 * 0)
    exclusive = extrap_plugins.efficiency(tree(), total=["main->comm", "main"], values="exclusive")
    assert [m.callpath for m in exclusive.total] == ["main->comm", "main"]  # exclusive values add up


def test_the_command_refuses_a_total_counted_twice_in_one_line(tmp_path, capsys):
    path = tmp_path / "tree.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["callpath", "p", "value"])
        for p in PS:
            writer.writerows([("main", p, 1000 / p + 2 * np.log2(p)), ("main->compute", p, 1000 / p),
                              ("main->comm", p, 2 * np.log2(p))])
    assert main(["efficiency", str(path), "--total", "main", "--total", "main->comm"]) == 2
    assert capsys.readouterr().err == (
        "extrap-plugins: error: total (--total): 'main->comm' is part of 'main' (inclusive values: a call path's "
        "value holds its children's), so the total would count it twice: name 'main' or its parts, not both\n")


# ---------------------------------------------- an iso-efficiency model that misses
@pytest.fixture(scope="module")
def exponential():
    """T = 1 + log2(n)/p: W = log2(n) + 1, C = log2(n) + p, so E = 0.8 at log2(n) = 4·p − 5: n = 2^(4p − 5) grows
    faster than any PMNF function, and the model of the solved points misses them."""
    t = Model("main", "time", ("p", "n"), 1.0, (Term(1.0, {"p": Factor(-1, 0), "n": Factor(0, 1)}),))
    X = np.array([(p, n) for p in (1.0, 2.0, 4.0, 8.0) for n in (1e3, 2e3, 4e3, 8e3, 1.6e4)])
    measured = Experiment.from_columns(["p", "n"], callpath="main", metric="time", coordinates=X,
                                       value=1 + np.log2(X[:, 1]) / X[:, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the modeler warns that no hypothesis describes the solved points
        return extrap_plugins.efficiency(ModelSet(("p", "n"), [t], experiment=measured), size="n", target=16)


def test_an_isoefficiency_model_that_misses_its_solved_points_says_so(exponential):
    iso = exponential.isoefficiency
    p = 16 ** (1 / 32)  # the first solved point: its n, 2^(4p − 5) = 0.6426, is the one the model misses most
    n = dict(iso.points)[p]
    assert n == pytest.approx(2 ** (4 * p - 5), rel=1e-9)
    assert iso.formula == format_number(iso.model.constant, False)  # a constant (4.85e14) for n from 0.64 to 1.5e16
    miss = (f"the PMNF model of n(p) misses the solved points by more than 10%: at p={p:.4g} it gives "
            f"{format_number(iso.model.constant, False)} for the solved {format_number(n, False)}, so its formula "
            f"and growth describe them only roughly (the solved points are exact)")
    assert miss in iso.note.split("; ")  # was not said: "n = 4.85e14 [O(1)], keeps E at 0.8"
    assert exponential.isoefficiency_note == iso.note


def test_the_html_report_gives_the_isoefficiency_note_its_own_paragraph(exponential):
    page = extrap_plugins.export_report(exponential, "html")
    iso = exponential.isoefficiency
    assert f'<p class="conclusion">note: {html.escape(iso.note)}</p>' in page  # was run on after "to 14.67"
    assert "\n  note:" not in page


def test_an_exact_isoefficiency_model_has_no_such_note():
    path = Path(__file__).resolve().parents[1] / "examples" / "isoefficiency.csv"
    result = extrap_plugins.efficiency(str(path), size="n", target=1024)
    assert result.isoefficiency.formula == "6 · p · log2(p)" and result.isoefficiency.note == ""


# ------------------------------------------------ a flat input without --total
def flat() -> ModelSet:
    """A flat file (no call tree): main holds comm, T(main) = 1000/p + 2·log2(p), T(comm) = 2·log2(p)."""
    main_ = Model("main", "time", ("p",), 0.0, (Term(1000.0, {"p": Factor(-1, 0)}), Term(2.0, {"p": Factor(0, 1)})))
    comm = Model("comm", "time", ("p",), 0.0, (Term(2.0, {"p": Factor(0, 1)}),))
    measured = Experiment.from_columns(
        ["p"], callpath=np.repeat(["main", "comm"], len(PS)), metric="time", coordinates=np.tile(PS, 2)[:, None],
        value=np.concatenate([1000 / PS + 2 * np.log2(PS), 2 * np.log2(PS)]))
    return ModelSet(("p",), [main_, comm], experiment=measured)


def test_a_flat_input_without_a_named_total_says_the_sum_may_count_a_call_path_twice():
    result = extrap_plugins.efficiency(flat())
    assert result.flat and [m.callpath for m in result.total] == ["main", "comm"]
    assert result.rows[-1].time == pytest.approx(1000 / 128 + 4 * 7)  # main's and comm's: comm counted twice
    assert result.notes[-1] == (
        "the input has no call tree: a call path's value may hold others' (the input cannot say which), so its share "
        "of the overhead is that of its value with whatever it calls, and the shares overlap; the whole program is "
        "taken as the sum of all 2 call paths, which counts a call path twice where another's value holds it: "
        "total (--total) names the call paths whose sum is the whole program, such as 'main'")  # was not said
    named = extrap_plugins.efficiency(flat(), total="main")
    assert named.rows[-1].time == pytest.approx(1000 / 128 + 2 * 7)
    assert named.notes[-1].endswith("and the shares overlap (here they add up to 200.0%)")


# --------------------------------------- a lone parameter not named like a process count
def test_a_lone_parameter_not_named_like_a_process_count_is_said_to_stand_in_for_one():
    t = Model("main", "time", ("x",), 0.0, (Term(1000.0, {"x": Factor(-1, 0)}), Term(2.0, {"x": Factor(0, 1)})))
    measured = Experiment.from_columns(["x"], callpath="main", metric="time", coordinates=PS[:, None],
                                       value=1000 / PS + 2 * np.log2(PS))
    result = extrap_plugins.efficiency(ModelSet(("x",), [t], experiment=measured))
    assert result.processes == "x"
    assert result.notes[0] == (  # was not said: a matrix size taken silently as the process count
        "x is taken as the process count, as it is the only parameter, though not named like one (p, ranks, procs, "
        "jobsize, ...): if it is not the process count, the efficiency means nothing; processes (--processes) names "
        "the parameter")
    named = extrap_plugins.efficiency(ModelSet(("x",), [t], experiment=measured), processes="x")
    assert not any("taken as the process count" in note for note in named.notes)


# ----------------------------------------------------- numbers as the tables print them
def test_large_numbers_in_the_notes_are_written_as_in_the_tables():
    t = Model("main", "time", ("p",), 0.0, (Term(1000.0, {"p": Factor(-1, 0)}),))  # C = 1000: E = 1 everywhere
    measured = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=PS[:, None],
                                       value=1000 / PS)
    result = extrap_plugins.efficiency(ModelSet(("p",), [t], experiment=measured))
    assert result.largest_p_note == "E stays at or above 0.8 up to p=1.311e5; searched no further"  # was 1.311e+05
    assert "(E stays at or above 0.8 up to p=1.311e5; searched no further)\n" in str(result)  # as tables write it


# ----------------------------------------------------- the efficiency chart near a zero of C
def test_the_efficiency_chart_keeps_the_tables_values_readable_where_e_shoots_up(monkeypatch):
    """T = 1000/p − 0.5·log2(p): C = 1000 − 0.5·p·log2(p) falls to zero at p = 250.9, where E = W/C shoots up."""
    from extrap_plugins.reports import efficiency_report

    t = Model("main", "time", ("p",), 0.0, (Term(1000.0, {"p": Factor(-1, 0)}), Term(-0.5, {"p": Factor(0, 1)})))
    ps = np.array([1, 2, 4, 8, 16, 32, 64], dtype=float)
    measured = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=ps[:, None],
                                       value=1000 / ps - 0.5 * np.log2(ps))
    result = extrap_plugins.efficiency(ModelSet(("p",), [t], experiment=measured))
    ranges, real = {}, efficiency_report.chart

    def chart(series, **options):
        ranges[options["css_class"]] = options.get("y_range")
        return real(series, **options)

    monkeypatch.setattr(efficiency_report, "chart", chart)
    efficiency_report.figures(result)
    largest = 1000 / (1000 - 0.5 * 64 * 6)  # E at p=64, the largest in the table: 1.238
    assert ranges["chart efficiency-plot"] == (0.0, pytest.approx(2 * largest * 1.05))  # was (0, 115): E near p=250.9


# ------------------------------------------------------------ weak scaling's speedup
def test_weak_scaling_calls_its_speedup_scaled_in_the_text_and_the_html():
    t = Model("main", "time", ("p",), 10.0, (Term(1.0, {"p": Factor(0, 1)}),))  # T = 10 + log2(p), weak scaling
    measured = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=PS[:, None],
                                       value=10 + np.log2(PS))
    result = extrap_plugins.efficiency(ModelSet(("p",), [t], experiment=measured), scaling="weak")
    assert result.rows[-1].speedup == pytest.approx(128 * 10 / 17)  # (p / p0) · E: scaled, not T(p0) / T(p)
    header = str(result).splitlines()[4].split()
    assert header[-4:] == ["scaled", "S", "E", "measured"]  # was "S", as strong scaling's T(p0) / T(p)
    page = extrap_plugins.export_report(result, "html")
    assert "Scaled speedup against the smallest measured process count" in page and "<th>scaled S</th>" in page
    strong = extrap_plugins.efficiency(ModelSet(("p",), [t], experiment=measured))
    assert str(strong).splitlines()[4].split()[-3:] == ["S", "E", "measured"]


def test_every_csv_row_says_what_its_efficiency_is_of(exponential):
    rows = list(csv.DictReader(extrap_plugins.export_report(exponential, "csv").splitlines()))
    iso = [r for r in rows if r["kind"] == "isoefficiency"]
    assert iso and {r["efficiency"] for r in iso} == {"0.8"}  # the level the whole program's E is kept at
    assert {r["kind"]: r["scope"] for r in rows} == {"total": "whole program", "isoefficiency": "whole program",
                                                     "callpath": "with children"}  # was "" for isoefficiency


def test_a_large_negative_overhead_is_written_as_in_the_tables():
    t = Model("main", "time", ("p",), 0.0, (Term(1e12, {"p": Factor(-2, 0)}),))  # superlinear: C = 1e12/p
    measured = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=PS[:, None],
                                       value=1e12 / PS**2)
    result = extrap_plugins.efficiency(ModelSet(("p",), [t], experiment=measured))
    assert result.rows[-1].overhead == pytest.approx(1e12 / 128 - 1e12)
    assert result.limiter_note == ("the overhead at p=128, -9.922e11, is negative: there is no overhead to limit")
    target = next(line for line in str(result).splitlines() if line.startswith("128 (target)"))
    assert target.split()[5] == "-9.922e11"  # the table's O, as the note now writes it: was -992200000000


def test_a_largest_p_beyond_ten_thousand_is_written_as_in_the_tables():
    t = Model("main", "time", ("p",), 0.001, (Term(1000.0, {"p": Factor(-1, 0)}),))  # C = 1000 + 0.001·p
    measured = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=PS[:, None],
                                       value=1000 / PS + 0.001)
    result = extrap_plugins.efficiency(ModelSet(("p",), [t], experiment=measured), target=1000)
    assert result.largest_p_at_level == pytest.approx(250001.25)  # 1000.001 / (1000 + 0.001·p) = 0.8
    assert "largest p with E ≥ 0.8: 2.5e5 (E falls below 0.8 at p=2.5e5)\n" in str(result)  # was 2.5e+05
