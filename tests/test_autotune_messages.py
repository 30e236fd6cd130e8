"""What the closed loop says, with a measuring function in place of mpiexec (fast)."""

import json
import types

from extrap_plugins import autotune

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
    assert autotune._describe_end(step, 0.05) == ("the budget left buys no further run the selector would plan; "
                                                  "widest interval at the target: main ±5.04%")


def test_the_summary_repeats_no_note_of_the_base_that_the_last_round_says_anew():
    # resumed with n given five values and a second parameter: the base round said "p has fewer …", the last
    # round "p, n have fewer …", and the summary said both
    few = "fewer than 5 candidate values; give more with --param for a trustworthy model"
    shorter = "repetitions per run: 2: the base design with the advised 4 would cost 60.0% of the full factorial"
    rounds = [autotune.Round(1, "base", 0.3, notes=[f"p has {few}", shorter]),
              autotune.Round(2, "budget", 0.5, notes=[f"p, n have {few}", "no further run fits the budget"])]
    assert autotune.final_notes(rounds) == [shorter, f"p, n have {few}", "no further run fits the budget"]
