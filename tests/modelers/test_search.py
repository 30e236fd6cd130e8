"""The evidence search's building blocks: the pair screening and the bounded selection."""

from __future__ import annotations

import numpy as np
import pytest

from extrap_plugins.modelers.search import _products, _residual_form, smallest


def test_smallest_gives_the_k_smallest_of_each_row_in_increasing_order():
    rng = np.random.default_rng(3)
    values = rng.standard_normal((50, 301)) ** 2
    values[7, :] = np.arange(301)[::-1]  # the smallest at the end of the row, in one group
    values[8, :40] = 1e-9  # many small values in the first groups
    got = smallest(values, 12)
    expected = np.argsort(values, axis=1, kind="stable")[:, :12]
    assert np.array_equal(np.take_along_axis(values, got, axis=1), np.take_along_axis(values, expected, axis=1))
    assert got[7].tolist() == list(range(300, 288, -1))


def test_smallest_counts_nan_as_the_largest_value():
    values = np.array([[np.nan, 3.0, 1.0, 2.0, np.nan, 0.5]])
    assert smallest(values, 2).tolist() == [[5, 2]]
    assert smallest(values, 4).tolist() == [[5, 2, 3, 1]]


def test_the_residual_form_gives_each_hypothesis_s_least_squares_residual():
    rng = np.random.default_rng(4)
    x = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    designs = np.stack([np.column_stack([np.ones(5), x, np.log2(x)]),
                        np.column_stack([np.ones(5), x**2, x**0.5])])  # (2, 5, 3)
    Q = np.linalg.qr(designs)[0]
    y = rng.uniform(1.0, 10.0, size=(6, 5))
    rss = _products(y) @ _residual_form(Q)  # (6, 2)
    for h in range(2):
        coefficients = np.linalg.lstsq(designs[h], y.T, rcond=None)[0]
        expected = np.sum((y.T - designs[h] @ coefficients) ** 2, axis=0)
        assert rss[:, h] == pytest.approx(expected, rel=1e-9, abs=1e-12)
