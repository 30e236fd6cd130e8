"""The held-out benchmark on real data (``benchmarks/real.py``): what is held out, what is fitted, and how a
miss is counted.

The benchmark's figures are in the README; these tests pin what makes them mean what they say: the fitted
file holds exactly the measurements of the points not held out (every repetition, none invented where a point
has fewer), the corner is predicted from the grid without any parameter's largest value, a parameter is held
out only where enough of its values stay in the fit, the same data read from two formats count once, and a
series without a usable prediction counts as a miss, not as nothing."""

from __future__ import annotations


import numpy as np
import pytest
from benchmark_helpers import benchmark_module

import extrap_plugins

@pytest.fixture(scope="module")
def real():
    with benchmark_module("real.py", "extrap_real_benchmark") as module:  # real.py imports its sibling accuracy
        yield module


def test_relearn_holds_out_each_parameter_and_the_corner(real, shared_data):
    parameters, X, _ = real.parse_text(shared_data / "extrap/text/mpa/relearn_data.txt")
    found = {label: (fitted, held) for label, fitted, held in real.holdouts(X, parameters)}
    assert list(found) == ["p", "n", "corner"]
    fitted, held = found["p"]
    assert np.array_equal(held, ~fitted) and held.sum() == 5 and set(X[held, 0]) == {512.0}
    fitted, held = found["corner"]
    assert X[held].tolist() == [[512.0, 9000.0]]
    assert fitted.sum() == 16  # the 4 x 4 grid: p = 32..256, n = 5000..8000
    assert X[fitted, 0].max() == 256.0 and X[fitted, 1].max() == 8000.0


def test_a_parameter_with_three_values_is_not_held_out(real, shared_data):
    skipped = []
    experiment = extrap_plugins.read(str(shared_data / "cube/extrap/multi_parameter"), reader="cube")
    cases = [case for parameters, X, named in real.experiment_series(experiment, "multi")
             for case in real.series_cases("CUBE", parameters, X, named, skipped, "multi")]
    assert cases == []
    assert skipped == ["multi: too few values per parameter to hold the largest out (x 3, y 3, z 3)"]


def test_the_fitted_file_holds_every_measured_repetition(real, shared_data, tmp_path):
    """CUBE single_parameter: 9 runs of x, the fitted file has the 8 smaller ones with their exact values."""
    experiment = extrap_plugins.read(str(shared_data / "cube/extrap/single_parameter"), reader="cube")
    [(parameters, X, named)] = real.experiment_series(experiment, "single")
    [case] = real.series_cases("CUBE single_parameter", parameters, X, named, [], "single")
    assert case[0] == "CUBE single_parameter, x held out"
    files, truth, ids = real.write_cases([case], str(tmp_path))
    fitted = extrap_plugins.read(files[0]["path"], reader="text")
    assert files[0]["predict"] == [[X[:, 0].max()]]
    for sid in ids:
        name, key, held_points, measured, _, values = truth[sid]
        coordinates, written = fitted.values_of(sid, "time")
        assert np.array_equal(np.sort(written), np.sort(values[~np.isnan(values)]))
        assert set(coordinates[:, 0]) == set(X[:-1, 0])
        assert measured == pytest.approx(np.nanmean(named[key][-1:], axis=1))
    assert len(ids) == len([k for k, v in named.items() if np.nanmean(v[-1]) != 0])


def test_rows_of_unequal_repetitions_are_written_without_gaps(real, tmp_path):
    from accuracy import write_text

    path = tmp_path / "ragged.txt"
    write_text(path, ("p",), np.array([[1.0], [2.0], [4.0]]),
               [("r", np.array([[1.0, 1.5], [2.0, np.nan], [4.0, 4.5]]))])
    assert "DATA 2.0\n" in path.read_text()
    coordinates, values = extrap_plugins.read(str(path), reader="text").values_of("r", "time")
    assert sorted(zip(coordinates[:, 0], values)) == [(1, 1.0), (1, 1.5), (2, 2.0), (4, 4.0), (4, 4.5)]


def test_the_same_data_in_two_formats_count_once(real, shared_data):
    """``input/input_data_1p.txt`` and ``input/json_test_input.jsonl`` hold the same measurements: of all of
    Extra-P's test inputs, one series with those values is modeled."""
    first = extrap_plugins.read(str(shared_data / "extrap/input/input_data_1p.txt"))
    second = extrap_plugins.read(str(shared_data / "extrap/input/json_test_input.jsonl"))
    [(_, X1, a)] = real.experiment_series(first, "a")
    [(_, X2, b)] = real.experiment_series(second, "b")
    values = next(iter(a.values()))
    assert np.array_equal(X1, X2) and np.array_equal(values, next(iter(b.values())))
    holding = [key for case in real.example_cases([]) for key, v in case[3].items()
               if v.shape == values.shape and np.array_equal(v, values)]
    assert len(holding) == 1


def test_a_missing_prediction_is_a_miss(real):
    measured = np.array([2.0, 4.0])
    assert real.relative_errors(None, measured).tolist() == [np.inf, np.inf]
    assert real.relative_errors([2.2, np.nan], measured).tolist() == pytest.approx([0.1, np.inf])
    median, p90, within = real.summary([0.05, 0.2, np.inf, 0.01])
    assert (median, p90, within) == (0.05, np.inf, 0.5)
    assert real.percent(p90) == "no model" and real.percent(0.1234) == "12.3 %"


def test_losses_rank_by_how_many_times_further_off(real):
    """Twice too large and half too small are the same miss; a negative prediction of positive data is worse."""
    measured = np.array([100.0])
    assert real.log_miss([200.0], measured) == pytest.approx(real.log_miss([50.0], measured))
    assert real.log_miss([-5.0], measured) == 10.0 and real.log_miss(None, measured) == 10.0
    assert real.series_error([110.0, 300.0, 100.0], np.array([100.0, 100.0, 100.0])) == pytest.approx(0.1)


def test_the_table_counts_each_series_once_and_exact_fits_tie(real):
    """A series of five held-out points weighs as much as one of one point; two exact fits are 1.00x."""
    truth = {"a": ("row", "a", None, np.array([1.0, 1.0, 1.0, 1.0, 1.0])), "b": ("row", "b", None, np.array([2.0])),
             "c": ("other", "c", None, np.array([5.0]))}
    predictions = {"ours": {"a": np.full(5, 1.5), "b": np.array([2.0]), "c": np.array([5.0])},
                   "theirs": {"a": np.full(5, 1.0), "b": np.array([2.1]), "c": np.array([5.0])}}
    rows = {row[0]: row for row in real.versus_rows(["a", "b", "c"], truth, predictions, "ours", "theirs")}
    label, n, points, ours, theirs, ratio, missing_ours, missing_theirs = rows["row"]
    assert (n, points, missing_ours, missing_theirs) == (2, 6, 0, 0)
    assert ours[0] == 0.0 and ours[2] == 0.5 and theirs[0] == 0.0 and theirs[2] == 1.0
    assert rows["other"][5] == 1.0 and rows["**all**"][1:3] == (3, 7)
