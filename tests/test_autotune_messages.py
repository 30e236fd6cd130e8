"""What the closed loop says, with a measuring function in place of mpiexec (fast)."""

import json
import types

import pytest

from extrap_plugins import autotune
from extrap_plugins.errors import InputError

STATISTICS = ["sum", "mean", "min", "max"]


def write_runs(function):
    """A measuring function for the loop: one record of the instrument shim per repetition, ``main``'s time
    ``function(**point)``."""

    def measure_runs(runs, folder):
        with open(folder / "app.extrap.jsonl", "a", encoding="utf-8") as stream:
            for run in runs:
                for repetition in range(run.first, run.first + run.repetitions):
                    point = {name: int(value) for name, value in run.point.items()}
                    value = function(**point)
                    stream.write(json.dumps({
                        "format": "extrap-plugins/instrument", "version": 1, "run": f"{point}.{repetition}",
                        "status": "ok", "errors": [], "program": "app", "parameters": point,
                        "repetition": repetition, "size": 1, "rank": None, "ranks": 1,
                        "metrics": {"time": {"unit": "sec", "kind": "time"}}, "statistics": STATISTICS,
                        "callpaths": ["main"], "values": {"time": dict.fromkeys(STATISTICS, [value])}}) + "\n")
        return True

    return measure_runs


def test_max_steps_of_one_round_is_said_in_the_singular(tmp_path):
    # before: "stopped after --max-steps 1 rounds"
    result = autotune.autotune({"p": [1, 2, 4, 8, 16]}, [], tmp_path / "runs", budget="50%", max_steps=1,
                               measure_runs=write_runs(lambda p: 3.0 + p), progress=False)
    assert (result.status, result.message) == ("steps", "stopped after --max-steps 1 round; start again to go on")


def test_the_widest_interval_beyond_the_tolerance_is_not_printed_as_the_tolerance():
    # before: "...; widest interval at the target: main ±5.0%" for ±5.04 % while the rule asks for ±5 %
    step = types.SimpleNamespace(status="budget", widths={"main": 0.0504, "main->solve": 0.01})
    assert autotune._describe_end(step, 0.05) == ("the budget left buys no further run that narrows an interval as printed; "
                                                  "widest interval at the target: main ±5.04%")


def test_the_summary_repeats_no_note_of_the_base_that_the_last_round_says_anew():
    # resumed with n given five values and a second parameter: the base round said "p has fewer …", the last
    # round "p, n have fewer …", and the summary said both
    few = "fewer than 5 candidate values; give more with --param for a trustworthy model"
    shorter = "repetitions per run: 2: the base design with the advised 4 would cost 60.0% of the full factorial"
    rounds = [autotune.Round(1, "base", 0.3, notes=[f"p has {few}", shorter]),
              autotune.Round(2, "budget", 0.5, notes=[f"p, n have {few}", "no further run fits the budget"])]
    assert autotune.final_notes(rounds) == [shorter, f"p, n have {few}", "no further run fits the budget"]


def test_a_saved_run_without_its_reason_is_reported_without_one(tmp_path):
    # a state file edited by hand: a run without "why" (a plan file's runs may lack it) ended the loop's report with
    # KeyError: 'why' (exit status 1), one whose "why" is a number with AttributeError
    folder, measure = tmp_path / "runs", write_runs(lambda p: 3.0 + p)
    autotune.autotune({"p": [1, 2, 4, 8, 16]}, [], folder, budget="50%", measure_runs=measure, progress=False)
    state = json.loads((folder / autotune.STATE).read_text())
    del state["rounds"][0]["runs"][0]["why"]
    state["rounds"][0]["runs"][1]["why"] = 7
    (folder / autotune.STATE).write_text(json.dumps(state))
    result = autotune.autotune({"p": [1, 2, 4, 8, 16]}, [], folder, budget="50%", measure_runs=measure,
                               progress=False)
    assert [run["why"] for run in result.rounds[0].runs[:3]] == ["", "", "line p"]
    report = (folder / autotune.REPORT).read_text()
    assert "<tr><td>1</td><td>p=1</td><td>1</td><td>1</td><td></td></tr>" in report


def earlier_loop(tmp_path):
    """A folder with the state file of a loop that ran no round yet."""
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / autotune.STATE).write_text(json.dumps({"format": autotune.FORMAT, "parameters": ["p"], "rounds": []}))
    return folder


def refused_before_any_run(folder) -> str:
    """The error of a loop into ``folder`` that is refused before it measures anything (asserted)."""
    measure, measured = write_runs(lambda p: 3.0 + p), []
    with pytest.raises(InputError) as error:
        autotune.autotune({"p": [1, 2, 4, 8, 16]}, [], folder, budget="50%", progress=False,
                          measure_runs=lambda runs, where: measured.append(runs) or measure(runs, where))
    assert not measured
    return str(error.value)


@pytest.mark.parametrize("name", [autotune.REPORT, autotune.MODELS])
def test_a_folder_where_a_report_goes_is_named_before_anything_runs(tmp_path, name):
    # beside the state file of an earlier loop: the loop measured its runs and then ended with IsADirectoryError
    # (autotune.html, exit status 1) or "is a folder; this exporter writes one file" (models.html)
    folder = earlier_loop(tmp_path)
    (folder / name).mkdir()
    assert refused_before_any_run(folder) == (f"{folder / name}: is a folder; the loop writes its report there as one "
                                              f"file: move it away, or give another -o folder")


def test_a_state_file_this_user_may_not_write_is_named_before_anything_runs(tmp_path, monkeypatch):
    # the rule of files.is_read_only (no write bit, or another user's file): the loop checked the write bits
    # only, so another user's state file stopped it after a round had run
    folder = earlier_loop(tmp_path)
    asked = []
    monkeypatch.setattr(autotune, "is_read_only", lambda path: asked.append(path) or path.name == autotune.STATE)
    assert refused_before_any_run(folder) == (f"{folder / autotune.STATE}: is read-only; the loop keeps its state "
                                              f"and reports here: make it writable")
    assert asked == [folder / autotune.STATE]


def test_a_state_file_of_another_version_is_not_resumed_as_this_one(tmp_path):
    # as a plan file of another version is refused: it was resumed as if it were version 1
    folder, measure = tmp_path / "runs", write_runs(lambda p: 3.0 + p)
    autotune.autotune({"p": [1, 2, 4, 8, 16]}, [], folder, budget="50%", measure_runs=measure, progress=False)
    state = json.loads((folder / autotune.STATE).read_text())
    state["version"] = 2
    (folder / autotune.STATE).write_text(json.dumps(state))
    with pytest.raises(InputError) as error:
        autotune.autotune({"p": [1, 2, 4, 8, 16]}, [], folder, budget="50%", measure_runs=measure, progress=False)
    assert str(error.value) == f"{folder / autotune.STATE}: cannot resume: state version 2 is not supported (expected 1)"
