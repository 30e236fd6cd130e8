"""Single-parameter views of a multi-parameter measurement design.

The hierarchical search (Calotoiu et al. 2016, Section IV-B) first models each parameter
alone.  It needs, for each parameter, measurements where only that parameter
varies: a *line* of points whose other coordinates are all equal.

* In a full factorial design every point lies on such a line; the lines with
  the same values are averaged, which is the projection of Calotoiu et al. 2016 IV-C.
* In a sparse design (Ritter et al. 2020, Section III-A) each parameter has a line of
  at least five values with the others fixed, plus a few extra points that
  lie on no long line; only the longest lines are used.

:func:`parameter_line` returns a :class:`Line`: the parameter's values and an
averaging matrix, so the projected series of a whole group is one product
``Y @ line.weights.T``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_LINE = 3
"""The fewest values a line needs before we use lines at all (fewer: average by value)."""


@dataclass(frozen=True)
class Line:
    """The measurements along which one parameter varies alone.

    Attributes
    ----------
    values : ndarray, shape (n_values,)
        The parameter's distinct values along the line, ascending.
    weights : ndarray, shape (n_values, n_points)
        Row ``v`` averages the points that have ``values[v]`` on the chosen
        lines: the projected series are ``Y @ weights.T``.
    n_lines : int
        How many parallel lines were averaged (0 when the fallback averaged
        every point with the same value).
    """

    values: np.ndarray
    weights: np.ndarray
    n_lines: int

    def project(self, Y: np.ndarray) -> np.ndarray:
        """Project series measured at the design's points.

        Parameters
        ----------
        Y : ndarray, shape (n_series, n_points)

        Returns
        -------
        ndarray, shape (n_series, n_values)
        """
        return Y @ self.weights.T


def parameter_line(points: np.ndarray, parameter: int) -> Line:
    """The longest lines along ``parameter`` in a design, averaged.

    Parameters
    ----------
    points : ndarray, shape (n_points, n_params)
        Distinct measurement points.
    parameter : int
        Column of the parameter to isolate.

    Returns
    -------
    Line
        Built from the lines (groups of points equal in every other
        coordinate) with the most distinct values of ``parameter``; among
        those, the ones sharing the most common set of values are averaged.
        When no line has :data:`MIN_LINE` values, every point with the same
        value is averaged instead (a biased projection, which the caller
        should report).

    Examples
    --------
    >>> cross = np.array([[1, 1], [2, 1], [3, 1], [4, 1], [5, 1], [1, 2], [1, 3], [1, 4], [1, 5], [2, 2]])
    >>> line = parameter_line(cross, 0)
    >>> line.values.tolist(), line.n_lines
    ([1.0, 2.0, 3.0, 4.0, 5.0], 1)
    """
    points = np.asarray(points, dtype=np.float64)
    n_points = points.shape[0]
    x = points[:, parameter]
    others = np.delete(points, parameter, axis=1)
    if others.shape[1] == 0:
        line_id = np.zeros(n_points, dtype=np.int64)
    else:
        _, line_id = np.unique(others, axis=0, return_inverse=True)
        line_id = line_id.reshape(-1)
    counts = np.bincount(line_id)
    longest = int(counts.max())
    if longest < MIN_LINE and np.unique(x).size > longest:
        return _average_by_value(x)
    candidates = np.flatnonzero(counts == longest)
    # Among the longest lines, keep those with the most common value set.
    signatures = {}
    for line in candidates:
        key = tuple(np.sort(x[line_id == line]))
        signatures.setdefault(key, []).append(line)
    values, members = max(signatures.items(), key=lambda item: (len(item[1]), -item[0][0]))
    values = np.asarray(values)
    chosen = np.isin(line_id, members)
    weights = np.zeros((values.shape[0], n_points))
    column = np.searchsorted(values, x[chosen])
    weights[column, np.flatnonzero(chosen)] = 1.0 / len(members)
    return Line(values, weights, len(members))


def _average_by_value(x: np.ndarray) -> Line:
    values, inverse = np.unique(x, return_inverse=True)
    inverse = inverse.reshape(-1)
    weights = np.zeros((values.shape[0], x.shape[0]))
    weights[inverse, np.arange(x.shape[0])] = 1.0
    weights /= weights.sum(axis=1, keepdims=True)
    return Line(values, weights, 0)
