"""Warnings at the end of a command: once per cause, naming call path and metric, never shown twice."""

import json
import os
import pathlib
import subprocess
import sys

import pytest
from reading_helpers import MACHINE, SYSTEM, measured

from extrap_plugins import cli
from extrap_plugins.cli import WarningLines
from extrap_plugins.errors import ExtrapWarning, QualityWarning

ROOT = pathlib.Path(__file__).resolve().parents[1]

OPPOSITE = ("terms of opposite sign: they cancel where measured and the data demand them, but the extrapolation "
            "depends on which one wins beyond the measurements")


def run_command(*args, together: bool) -> subprocess.CompletedProcess:
    """``extrap-plugins ARGS``, with stderr to stdout's place (a terminal, ``> out.txt 2>&1``) or apart."""
    environment = {**os.environ, "EXTRAP_PLUGINS_NO_AUTOLOAD": "1"}
    return subprocess.run([sys.executable, "-m", "extrap_plugins", *map(str, args)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if together else subprocess.PIPE, text=True, cwd=ROOT,
                          env=environment, timeout=300)


def run_model(*args, together: bool) -> subprocess.CompletedProcess:
    """``extrap-plugins model ARGS`` (:func:`run_command`)."""
    return run_command("model", *args, together=together)


def test_a_sorted_report_and_stderr_together_show_each_warning_once(shared_data):
    """Sorted, the report names another series first than stderr does (the modelling's order): the same cause was
    shown twice there, in two wordings. It is the cause and its series the report listed that stderr leaves out."""
    folder = shared_data / "cube" / "extrap" / "multi_parameter"
    apart = run_model(folder, "--sort", "share", together=False)
    assert apart.returncode == 0, apart.stderr
    listed = apart.stdout[apart.stdout.index("\nwarnings:\n"):].splitlines()[2:]
    assert f"  main->mat_mul [time] and 10 more series (--export json lists them all): {OPPOSITE}" in listed
    assert (f"extrap-plugins: warning: main->init_mat [time] and 10 more series (--export json lists them all): "
            f"{OPPOSITE}") in apart.stderr.splitlines()
    assert len(apart.stderr.splitlines()) == len(listed) == 3  # x, y and z of 3 values: one line
    together = run_model(folder, "--sort", "share", together=True)
    assert together.returncode == 0
    assert together.stdout == apart.stdout  # the report alone: every warning is in it, once
    assert together.stdout.count(OPPOSITE) == 1


def test_what_reading_warned_of_is_in_the_report_and_shown_once_where_stderr_goes_too(tmp_path):
    """A value left out at its line was said on stderr alone: ``-o report.txt`` kept no word of it."""
    data = tmp_path / "runs.csv"
    data.write_text("p,value\n1,1.0\n2,2.0\n4,nan\n8,8.1\n16,16.2\n32,32.0\n")
    said = (f"{data}: 1 value is not a finite number (nan, inf or beyond the range of a float) and is left out as "
            "missing: line 4; series <root> [time]")
    apart = run_model(data, together=False)
    assert apart.returncode == 0, apart.stderr
    assert apart.stdout[apart.stdout.index("\nwarnings on reading:\n"):].splitlines()[2] == f"  {said}"
    assert f"extrap-plugins: warning: {said}" in apart.stderr.splitlines()  # (a pipe: stderr says it too)
    together = run_model(data, together=True)
    assert together.returncode == 0
    assert together.stdout == apart.stdout and together.stdout.count(said) == 1
    report = tmp_path / "report.txt"
    assert run_model(data, "-o", report, together=False).returncode == 0
    assert f"  {said}\n" in report.read_text()


ANALYSES = {"efficiency": ["{runs}", "--size", "n"], "compare": ["{runs}", "{clean}"],
            "requirements": ["{runs}", "--system", "{system}"],
            "whatif": ["{runs}", "--machine", "{machine}", "--target", "p=64,n=100"]}
"""The arguments of each analysis command; ``runs`` is the input reading warns of, ``clean`` one it does not."""


@pytest.mark.parametrize("command", ANALYSES)
def test_each_analysis_report_lists_what_reading_warned_of_and_stderr_not_again_where_it_goes_too(tmp_path, capsys,
                                                                                                 command):
    """efficiency, compare, requirements and whatif said a value left out while reading on stderr alone: their
    JSON, which a pipeline keeps, and their reports said nothing of it."""
    runs, clean, system, machine = (tmp_path / name for name in ("runs.jsonl", "clean.jsonl", "system.toml",
                                                                  "machine.toml"))
    said = measured(runs)
    measured(clean, nan=False)
    system.write_text(SYSTEM)
    machine.write_text(MACHINE)
    args = [command, *(arg.format(runs=runs, clean=clean, system=system, machine=machine) for arg in ANALYSES[command])]
    assert cli.main(args) == 0  # (captured: stdout and stderr apart)
    apart = capsys.readouterr()
    of = {"compare": " A", "requirements": " runs"}.get(command, "")  # (compare: each side, requirements: each input)
    # (efficiency's text report ends with what its models warn of: here the point left out, as the model said it)
    models_warned = {"efficiency": "\nwarnings:\n  main [time]: 1 of 25 points have no finite value (NaN or "
                                   "infinite) and were left out\n"}.get(command, "")
    assert apart.out.endswith(f"\n\nwarnings on reading{of}:\n  {said}\n{models_warned}")
    assert f"extrap-plugins: warning: {said}" in apart.err.splitlines()
    assert cli.main([*args, "--export", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["reading_warnings"] == {
        "compare": {"A": [said], "B": []}, "requirements": {"runs": [said]}}.get(command, [said])
    together = run_command(*args, together=True)
    assert together.returncode == 0, together.stdout
    assert together.stdout.count(said) == 1 and f"  {said}" in together.stdout.splitlines()  # the report's line


MIXED = ("{cube}/single_parameter/mm.x1y1z1.r1/profile.cubex", "{cube}/single_parameter/mm.x10y1z1.r1/profile.cubex",
         "{cube}/single_parameter/mm.x25y1z1.r1/profile.cubex", "{cube}/simple_threaded/example.f1/cube-example1.cubex")
"""Real CUBE profiles of two programs, as the runs ``app.x1``, ``app.x10``, ``app.x25`` and ``app.x50`` of one sweep."""


@pytest.mark.parametrize("command", ["compare", "whatif"])
def test_a_warning_that_a_reader_s_note_says_reaches_the_analysis_reports_as_that_note(shared_data, tmp_path, capsys,
                                                                                       command):
    """The CUBE reader says which call paths and metrics only some runs have both as a warning and as a note, and
    what reading warned of leaves out what a note says (``errors.unnoted``): compare and whatif, which wrote no
    notes, kept it nowhere but on stderr."""
    cube = shared_data / "cube" / "extrap"
    runs = tmp_path / "runs"
    for x, profile in zip((1, 10, 25, 50), MIXED):
        (runs / f"app.x{x}").mkdir(parents=True)
        (runs / f"app.x{x}" / "profile.cubex").symlink_to(profile.format(cube=cube))
    findings = ["7 call paths are measured in only some runs and are kept where measured: main->init_mat (3 of 4 "
                "runs), main->zero_mat (3 of 4 runs), main->mat_mul (3 of 4 runs) and 4 more",
                "metrics 'min_time', 'max_time', 'PAPI_FP_OPS', 'PAPI_L3_TCM', 'PAPI_L2_TCM' have no data in 1 of 4 "
                f"runs ({runs / 'app.x50' / 'profile.cubex'}); kept where measured"]
    notes = ["metrics without data are left out: bytes_put, bytes_get", *findings]
    machine = tmp_path / "machine.toml"
    machine.write_text('[rates]\nprocessor = { metric = "PAPI_FP_OPS", rate = 1e9 }\n')
    args = {"compare": ["compare", str(runs), str(cube / "single_parameter"), "--label", "A=mixed", "--label", "B=mm"],
            "whatif": ["whatif", str(runs), "--machine", str(machine), "--target", "x=100"]}[command]
    assert cli.main([*args, "--export", "json"]) == 0
    out, err = capsys.readouterr()
    assert all(f"extrap-plugins: warning: {finding}" in err.splitlines() for finding in findings)
    document = json.loads(out)
    if command == "compare":
        assert document["reading_notes"] == {"A": notes, "B": ["parameters with one value in every run are left out: "
                                                               "y=1, z=1", notes[0]]}
        assert document["reading_warnings"] == {"A": [], "B": []}
    else:
        assert (document["reading_notes"], document["reading_warnings"]) == (notes, [])
    assert cli.main(args) == 0
    of = " mixed" if command == "compare" else ""
    assert f"\n\nnotes on reading{of}:\n" + "".join(f"  {note}\n" for note in notes) in capsys.readouterr().out


def test_a_cause_the_report_lists_for_some_of_its_series_names_the_others_on_stderr(capsys):
    lines = WarningLines("--export json lists them all")
    lines.shown.update({("noisy", "main->a [time]"), ("noisy", "main->b [time]")})
    with lines:
        lines.add(QualityWarning("noisy", "main->a", "time"))
        lines.add(QualityWarning("noisy", "main->b", "time"))
        lines.add(QualityWarning("noisy", "main->c", "time"))
        lines.add(QualityWarning("few points", "main->a", "time"))
        lines.add(ExtrapWarning("runs.csv: 2 values are missing"))
    assert capsys.readouterr().err == ("extrap-plugins: warning: main->c [time]: noisy\n"
                                       "extrap-plugins: warning: main->a [time]: few points\n"
                                       "extrap-plugins: warning: runs.csv: 2 values are missing\n")


OUTLYING = ("a run 3x or more off the others at its point is left out of the mean (a slow node, a timer glitch? "
            "--measure median keeps every run)")


def test_many_causes_that_differ_only_in_their_figures_are_one_line_on_stderr(tmp_path):
    """Eight call paths, each with one run 10x off at its own point: eight causes of one kind were eight lines (300
    such call paths: 20 lines and '280 more warnings not shown'); stderr says them in one, the report each."""
    rows = [f"{p},main->k{i},{(1 + i) * p * (1 + 0.01 * r) * (10 if (j, r) == (i % 6, i % 5) else 1):g}"
            for i in range(8) for j, p in enumerate((2, 4, 8, 16, 32, 64)) for r in range(5)]
    path = tmp_path / "slow_runs.csv"
    path.write_text("p,callpath,value\n" + "\n".join(rows) + "\n")
    apart = run_model(path, together=False)
    assert apart.returncode == 0, apart.stderr
    assert apart.stderr == (f"extrap-plugins: warning: main->k0 [time] and 7 more series (--export json lists them "
                            f"all): {OUTLYING}: p=2, run 1 of 5 (figures of main->k0 [time]; the others have their "
                            f"own)\n")
    listed = apart.stdout[apart.stdout.index("\nwarnings:\n"):].splitlines()[2:]
    assert listed[0] == f"  main->k0 [time]: {OUTLYING}: p=2, run 1 of 5"
    assert listed[7] == f"  main->k7 [time]: {OUTLYING}: p=4, run 3 of 5"
    assert len(listed) == 8


def test_a_few_causes_of_one_kind_keep_a_line_each_and_names_with_digits_stay_apart(capsys):
    # two slow runs, each spoiling its own series, are two causes worth a line each; x1 and x2 are two parameters
    lines = WarningLines()
    with lines:
        for k, where in enumerate(("p=16, run 1 of 5", "p=32, run 4 of 5", "p=16, run 1 of 5")):
            lines.add(QualityWarning(f"a run 3x or more off: {where}", f"r{k}", "time"))
        for k in range(5):
            lines.add(QualityWarning(f"parameter x{k} has only 4 distinct values", "main", "time"))
    assert capsys.readouterr().err.splitlines() == [
        "extrap-plugins: warning: r0 [time] and r2 [time]: a run 3x or more off: p=16, run 1 of 5",
        "extrap-plugins: warning: r1 [time]: a run 3x or more off: p=32, run 4 of 5",
        *(f"extrap-plugins: warning: main [time]: parameter x{k} has only 4 distinct values" for k in range(5))]
