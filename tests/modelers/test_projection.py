"""Lines through full factorial and sparse designs."""

from __future__ import annotations

import numpy as np

from extrap_plugins.modelers.projection import parameter_line

from .conftest import grid


def test_full_factorial_lines_are_averaged():
    points = grid([1, 2, 3, 4, 5], [10, 20, 30])
    line = parameter_line(points, 0)
    assert line.values.tolist() == [1, 2, 3, 4, 5] and line.n_lines == 3
    Y = (points[:, 0] * 100 + points[:, 1])[None, :]
    np.testing.assert_allclose(line.project(Y), [[120, 220, 320, 420, 520]])


def test_sparse_cross_uses_only_the_line():
    corner = [(1, 10, 100)]
    points = np.array(
        corner + [(p, 10, 100) for p in (2, 4, 8, 16)] + [(1, s, 100) for s in (20, 30, 40, 50)]
        + [(1, 10, n) for n in (200, 300, 400, 500)] + [(2, 20, 100), (2, 10, 200), (4, 20, 200)],
        dtype=float,
    )
    for column, expected in ((0, [1, 2, 4, 8, 16]), (1, [10, 20, 30, 40, 50]), (2, [100, 200, 300, 400, 500])):
        line = parameter_line(points, column)
        assert line.values.tolist() == expected and line.n_lines == 1
        assert (line.weights > 0).sum() == 5


def test_without_lines_every_point_with_a_value_is_averaged():
    points = np.array([(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (1, 5)], dtype=float)
    line = parameter_line(points, 0)
    assert line.n_lines == 0 and line.values.tolist() == [1, 2, 3, 4, 5]
    np.testing.assert_allclose(line.weights.sum(axis=1), 1.0)
