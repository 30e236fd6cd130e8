"""What the notes of a plan say about the budget: each true, none contradicting another."""

from extrap_plugins import design
from extrap_plugins.design import Space, suggest
from extrap_plugins.experiment import Experiment

P = [1, 2, 4, 8, 16]
N = [10, 20, 30, 40, 50]


def test_lines_that_do_not_fit_the_budget_are_not_said_to_be_allowed_by_it():
    # 1 % of the full factorial's 620 is 6.2; the lines of three through (1, 10) cost 9 even as single runs
    notes = suggest(Space.of({"p": P, "n": N}), budget="1%").notes
    assert notes[:2] == [
        "the budget allows no lines of 5 or 4 values; they have 3: models get at most one term per parameter along "
        "each line (fewer exponents are told apart), and the interval at the target says how much that costs",
        "even lines of 3 values exceed the budget: these runs are the minimum for a model"]
    # a budget of 3 points: the lines of three are 5
    notes = suggest(Space.of({"p": P, "n": N}), budget="3").notes
    assert notes[0].startswith("the budget allows no lines of 5 or 4 values; they have 3: ")
    assert notes[-1] == "the base design needs 5 points, more than the budget's 3: these runs are the minimum for a model"


def exact_counts():
    """A count of 3 + 2·p measured twice at p = 1 … 16: the rule holds at once."""
    return Experiment.from_columns(["p"], callpath="main", metric="visits",
                                   coordinates=[[p] for p in P for _ in range(2)],
                                   value=[3 + 2 * p for p in P for _ in range(2)])


def test_what_a_budget_of_points_leaves_is_said_in_points():
    # before: "the remaining budget (inf cost units) is left", and with every point of the budget measured
    # "the remaining budget (inf cost units) buys no further run"
    space = Space.of({"p": P + [32]})
    assert suggest(space, exact_counts(), budget="8").notes[-1] == (
        "further runs would not narrow the intervals noticeably: the remaining budget (3 points) is left")
    assert suggest(space, exact_counts(), budget="5").notes[-1] == (
        "the measured points already fill the budget (at most 5 points): nothing is left to spend")


def test_an_interval_just_beyond_the_tolerance_is_not_printed_as_the_tolerance():
    # ±32.9150 % at p = 64 against a tolerance of 32.9 %: before, "stays main ±32.9% (tolerance ±32.9%)"
    noise = [1.03, 0.98, 0.99, 1.02, 1.01, 0.97, 1.0, 1.02, 0.98, 1.01]
    points = [p for p in P for _ in range(2)]
    experiment = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[p] for p in points],
                                         value=[(3 + 2 * p) * factor for p, factor in zip(points, noise)])
    result = suggest(Space.of({"p": P + [32]}), experiment, budget="5", tolerance=0.329)
    assert result.notes == ["no further run fits the budget; the widest interval at (p=64) stays main ±32.91% "
                            "(tolerance ±32.9%)"]
    assert [design.format_width(w, 0.05) for w in (0.0504, 0.04996, 0.050004, 0.9)] == ["5.04%", "5.0%", "5.0004%", "90.0%"]


def test_one_cost_unit_is_singular():
    # "the remaining budget (1 cost units) ..."
    from extrap_plugins.design import cost_units

    assert (cost_units(1.0), cost_units(98), cost_units(2.5)) == ("1 cost unit", "98 cost units", "2.5 cost units")


def test_a_parameter_held_at_one_value_leaves_the_note_on_shorter_lines_as_it_was():
    # with --param m=3 beside p and n the plan had the same lines of three and no note saying what they cost
    held = suggest(Space.of({"p": P, "n": N, "m": [3]}), budget="6")
    assert [tuple(run.point.values()) for run in held.plan.runs] == [
        (1, 10, 3), (1, 20, 3), (1, 30, 3), (2, 10, 3), (4, 10, 3), (2, 20, 3)]
    assert held.notes[0] == suggest(Space.of({"p": P, "n": N}), budget="6").notes[0] == (
        "the budget allows lines of 3 values, not 5: models get at most one term per parameter along each line "
        "(fewer exponents are told apart), and the interval at the target says how much that costs")


DOUBLING = [10, 20, 40, 80, 160]


def base_design():
    """A time measured once at the base design's points over p = 1 … 16 × n = 10 … 160: ±97.0 % or ±21.8 % at
    (32, 320), by the machine's rounding (:func:`test_a_plan_buys_only_runs_that_narrow_the_intervals_as_printed_together`)."""
    coordinates = [[p, 10] for p in P] + [[1, n] for n in DOUBLING[1:]] + [[2, 20]]
    values = [1.0, 1.1, 1.2, 1.3, 1.4, 2.0, 4.0, 8.1, 16.2, 2.2]
    return Experiment.from_columns(["p", "n"], callpath="main", metric="time", coordinates=coordinates, value=values)


def test_a_budget_in_cost_units_far_below_the_measured_cost_is_not_said_to_be_0_percent():
    # a core-second budget (cost p*time) of a sweep whose full factorial costs 5100 core-seconds: it said "the budget
    # 0.0%"
    notes = suggest(Space.of({"p": P, "n": DOUBLING}), base_design(), cost="p*time", budget="1u").notes
    assert notes[-1].startswith("the measured runs already cost 1.5% of the full factorial's, the budget 1 cost unit "
                                "(0.0196%): nothing is left to spend; ")


def test_a_plan_buys_only_runs_that_narrow_the_intervals_as_printed_together():
    # a tolerance no run reaches: the plan went on to 50 % with runs "±3.0%→±3.0%" at its end; now it ends with a
    # run that narrows the interval as printed, up to where the budget ends.  (The width before the first run is the
    # bootstrap's of ten single runs, a knife edge of rounding: ±97.0 % on one machine, ±21.8 % on another; a run
    # inside the plan may print as it was where the runs after it narrow the interval together.)  The first run is
    # the point nearest the target, (16, 160), which narrows the most (to ±6.1 or ±6.2 %); after it, the plan ends
    # at 43.4 % (46.0 % with numpy 2.4 and scipy 1.17: the same knife edge of rounding), short of the budget, where it
    # went on to 48.5 % before that run came first: further runs would narrow nothing as printed
    result = suggest(Space.of({"p": P, "n": DOUBLING}), base_design(), budget="50%", tolerance=1e-12)
    reasons = [run.role for run in result.plan.runs]
    assert reasons[0].startswith("nearest the target, which lies beyond the values of p and n: tests how the "
                                 "parameters combine there; narrows main ±")
    widths = [r.split("narrows main ")[1].split("→") for r in reasons]
    assert all(after == following for (_, after), (following, _) in zip(widths, widths[1:]))  # one chain
    assert reasons[-1] == "narrows main ±2.9%→±2.8%" and widths[0][0] != "±2.9%"
    assert 0.40 < result.share < 0.48  # stopped where narrowing as printed ends, before the budget (50 %)
    assert result.notes[0] == ("after these runs the selector still expects 1 kernel above ±1e-10% at (p=32, n=320) "
                               "(further runs the budget left pays for would narrow no interval as printed)")
