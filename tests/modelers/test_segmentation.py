"""Change-point detection (seed 001): window scores, classification, location, recursion, several parameters."""

import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.experiment import Experiment, Parameter
from extrap_plugins.modelers.segmentation import (
    ChangePoint,
    Settings,
    classify,
    expected_patterns,
    find_changes,
    lines_along,
    locate,
    points_to_measure,
    segment_ranges,
    too_few_points_note,
    window_nrss,
)
from extrap_plugins.modelers.segmented import fit_quietly

SEED_FIG1_P = np.arange(1, 11, dtype=float)
SEED_FIG1_Y = np.where(SEED_FIG1_P <= 6, SEED_FIG1_P**2, 30 + SEED_FIG1_P)  # seed 001, Fig. 1


def window_fit(host):
    modeler = host.build_modeler("segmented", {}, ("p",))
    return lambda group: fit_quietly(modeler.window_inner, group, measure="mean", name="default")


def group_of(x, *series):
    experiment = Experiment.from_columns(
        ["p"], callpath=np.repeat([f"s{k}" for k in range(len(series))], len(x)), metric="time",
        coordinates=np.tile(x, len(series))[:, None], value=np.concatenate(series))
    return next(experiment.series_groups())


# ------------------------------------------------------------ window scores
def test_the_windows_that_mix_two_behaviours_score_high(host):
    E = window_nrss(SEED_FIG1_P, SEED_FIG1_Y[None, :, None], window_fit(host), Parameter("p"))
    assert E.shape == (1, 6)
    # s1, s2 (p^2 only) and s6 (30 + p only) are fitted exactly; s3..s5 mix both (seed 001, Table 1).
    assert np.all(E[0, [0, 1, 5]] < 1e-6)
    assert np.all(E[0, [2, 3, 4]] > 0.1)
    segmented, tags = classify(E)
    assert segmented.tolist() == [True]
    assert tags[0].astype(int).tolist() == [0, 0, 1, 1, 1, 0]


# ---------------------------------------------------------- classification
@pytest.mark.parametrize("nrss, segmented", [
    ([0.0, 0.0, 0.2, 0.25, 0.2, 0.0], True),        # below 0.5, but 0.2 is far above its neighbour
    ([0.01, 0.02, 0.7, 0.8, 0.6, 0.01], True),      # above the threshold of 0.5
    ([0.15, 0.2, 0.18, 0.16, 0.22, 0.19], False),   # noise lifts every window: no jump
    ([0.01, 0.03, 0.05, 0.04, 0.02, 0.01], False),  # all homogeneous
    ([0.3, 0.32, 0.31, 0.4, 0.35, 0.3], False),     # grey zone without a jump
])
def test_absolute_and_relative_nrss_decide(nrss, segmented):
    result, _ = classify(np.array([nrss]))
    assert result.tolist() == [segmented]


def test_noise_lifted_windows_are_not_tagged_unless_far_above_the_best():
    _, tags = classify(np.array([[0.12, 0.15, 0.9, 0.95, 0.8, 0.13]]))
    assert tags[0].astype(int).tolist() == [0, 0, 1, 1, 1, 0]


def test_settings_are_validated():
    with pytest.raises(ValueError, match="window: expected a whole number of points >= 3, got 2"):
        Settings(window=2)
    with pytest.raises(ValueError, match="expected 0 < heterogeneous <= threshold, got 0.6 and 0.5"):
        Settings(heterogeneous=0.6)
    with pytest.raises(ValueError, match="ratio: expected a number > 1, got 1"):
        Settings(ratio=1)


# --------------------------------------------------------------- location
def test_expected_patterns_follow_the_paper():
    left, right, P = expected_patterns(10)
    patterns = {(int(a), int(b)): "".join(map(str, p.astype(int))) for a, b, p in zip(left, right, P)}
    assert patterns[(4, 5)] == "011110"  # between points 4 and 5: four windows hold both
    assert patterns[(5, 5)] == "001110"  # point 5 shared: three windows (seed 001, Fig. 3)
    assert patterns[(1, 2)] == "110000"  # cut off at the start
    assert patterns[(8, 9)] == "000001"
    assert len(patterns) == 9 + 8


@pytest.mark.parametrize("tags, where", [
    ("001110", (5, 5)),   # the paper's example: change at p = 6
    ("011110", (4, 5)),
    ("110000", (1, 2)),
    ("000011", (7, 8)),
    ("011010", (4, 5)),   # one window flipped by noise
])
def test_the_change_point_is_read_off_the_pattern(tags, where):
    T = np.array([[c == "1" for c in tags]])
    E = np.where(T, 0.3, 0.01)
    left, right = locate(E, T)
    assert (int(left[0]), int(right[0])) == where


def test_a_shared_point_stays_shared_only_when_it_fits_both_sides(host):
    fit = window_fit(host)
    p = Parameter("p")
    # Seed 001, Fig. 1: p = 6 is on both p^2 and 30 + p.
    (changes,) = find_changes(SEED_FIG1_P, SEED_FIG1_Y[None, :, None], fit, p)
    assert changes == [(5, 5)]
    # Move the second behaviour up: p = 6 now belongs to p^2 only.
    y = np.where(SEED_FIG1_P <= 6, SEED_FIG1_P**2, 60 + SEED_FIG1_P)
    (changes,) = find_changes(SEED_FIG1_P, y[None, :, None], fit, p)
    assert changes == [(5, 6)]


def test_recursion_finds_two_change_points(host):
    x = np.arange(1, 16, dtype=float)
    y = np.where(x <= 5, 10.0, np.where(x <= 10, 3 * x**2, 500 + 5 * x))
    (changes,) = find_changes(x, y[None, :, None], window_fit(host), Parameter("p"))
    assert changes == [(4, 5), (9, 10)]
    (limited,) = find_changes(x, y[None, :, None], window_fit(host), Parameter("p"), Settings(max_changes=1))
    assert len(limited) == 1


def test_many_series_are_scanned_together(host):
    rng = np.random.default_rng(3)
    x = np.arange(1, 11, dtype=float)
    smooth = 5 + 2 * x[None, :] ** 1.5 * rng.uniform(1, 3, (40, 1))
    jump = np.where(x <= 5, 100 + 0 * x, 20 * x**2)[None, :] * rng.uniform(1, 3, (40, 1))
    values = np.concatenate([smooth, jump])[:, :, None]
    found = find_changes(x, values, window_fit(host), Parameter("p"))
    assert all(changes == [] for changes in found[:40])
    assert all(changes == [(4, 5)] for changes in found[40:])


# ------------------------------------------------------- several parameters
def test_lines_along_a_parameter_are_batched_by_their_values():
    points = np.array([[x, y] for y in (1, 2, 3) for x in (10, 20, 30, 40)] + [[50, 1]], dtype=float)
    lines = lines_along(points, 0)
    by_length = sorted((len(x), len(rows)) for x, rows in lines)
    assert by_length == [(4, 2), (5, 1)]  # y = 2, 3 share x = 10..40; y = 1 also has 50
    along_y = lines_along(points, 1)
    assert sorted(len(rows) for _, rows in along_y) == [1, 4]


def test_the_change_of_a_two_parameter_file_belongs_to_x(host, shared_data):
    experiment = extrap_plugins.read(shared_data / "extrap" / "text" / "two_parameter_segmented_1.txt")
    (detection,) = host.build_modeler("segmented", {}, ("p",)).detect(next(experiment.series_groups()))
    (change,) = detection.changes
    assert (change.parameter, change.before, change.after) == ("x", 50.0, 60.0)
    assert change.of_lines == 6 and change.lines >= 5  # six lines along x (one per y), ten values each
    assert str(change).startswith("change between x = 50 and 60 (on ")


def test_one_window_cannot_locate_but_says_what_to_measure(host):
    x = np.array([32.0, 64, 128, 256, 512])
    y = np.array([30.0, 42, 59, 580, 750])  # Open MPI's Gather medians (mpi_data.csv)
    (detection,) = host.build_modeler("segmented", {}, ("p",)).detect(group_of(x, y))
    assert not detection.segmented
    assert detection.notes == [
        "the 5 values of p do not fit one model (window nRSS above 0.5): the behaviour may change, but 5 points "
        "cannot say where; measure p = 16 or 1024 (or between the measured values) to locate the change"
    ]


# ----------------------------------------------------------------- segments
def test_segment_ranges_cut_at_change_points():
    values = np.arange(1.0, 16.0)
    changes = [ChangePoint("p", 5, 6), ChangePoint("p", 10, 10)]
    assert segment_ranges(values, changes) == [(1.0, 5.0), (6.0, 10.0), (10.0, 15.0)]


@pytest.mark.parametrize("segment, line, count, side, expected", [
    ([256, 512], [32, 64, 128, 256, 512], 3, "above", [1024.0, 2048.0, 4096.0]),
    ([32, 64], [32, 64, 128, 256, 512], 3, "below", [16.0, 8.0, 4.0]),
    ([10, 20, 30], list(range(10, 101, 10)), 3, "below", [15.0, 25.0, 12.0]),   # no room below 10: halve gaps
    ([1.0, 2.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, "below", []),              # whole numbers, nothing fits
    ([0.5, 1.0, 1.5], [0.5, 1.0, 1.5, 2.0, 2.5, 3.0], 2, "inside", [0.75, 1.25]),
])
def test_points_to_measure_continue_the_spacing(segment, line, count, side, expected):
    assert points_to_measure(segment, line, count, side) == expected


def test_the_note_for_a_small_segment_names_the_points():
    note = too_few_points_note("p", (512.0, 1024.0), [512.0, 1024.0], [2.0**k for k in range(1, 11)], 5, "above")
    assert note == ("segment 512 ≤ p ≤ 1024 has only 2 points (p = 512, 1024); 5 are needed for a model of its "
                    "own: measure p = 2048, 4096, 8192")


POWERS = 2.0 ** np.arange(1, 11)
EIGHT = np.arange(1.0, 9.0)


@pytest.mark.parametrize("x, values, segments", [
    # flat up to 64, then a jump: the window 8 … 128 fits a steep one-term model and looked homogeneous, so the
    # change was put after 128
    (POWERS, np.where(POWERS <= 64, 10 + 0.1 * POWERS, 50 + 0.3 * POWERS), [(2.0, 64.0), (128.0, 1024.0)]),
    # eight points, p^2 up to 4: the pattern put the change after 7, the recursion then cut after 5 as well
    (EIGHT, np.where(EIGHT <= 4, EIGHT**2, 40 + EIGHT), [(1.0, 4.0), (5.0, 8.0)]),
])
def test_a_point_at_the_edge_of_a_change_joins_the_side_it_fits(host, x, values, segments):
    experiment = Experiment.from_columns(["p"], callpath="k", metric="time", coordinates=x[:, None], value=values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the notes on small segments
        (model,) = extrap_plugins.model(experiment, "segmented", executor="serial")
    assert [s.range["p"] for s in model.segments] == segments
