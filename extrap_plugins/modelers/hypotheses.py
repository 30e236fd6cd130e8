"""The PMNF hypothesis space: exponent sets, building blocks and hypotheses.

A *building block* is one factor ``x^i * log2(x)^j`` of a single parameter,
stored as the exponent pair ``(i, j)``; a *hypothesis* of ``k`` terms is a
tuple of ``k`` distinct building blocks plus the constant (Calotoiu et al. 2016, Eq. 1).
Everything here is pure functions over small arrays:

    blocks     : float64, shape (n_blocks, 2)   the (i, j) pairs
    columns    : float64, shape (n_points, n_blocks)   every block at every point
    hypotheses : int64,   shape (n_hypotheses, k)   block indices, one row each

The defaults are Extra-P's: I = {0, 1/4, 1/3, 1/2, 2/3, 3/4, 4/5, 1, 5/4, 4/3,
3/2, 5/3, 7/4, 2, 9/4, 7/3, 5/2, 8/3, 11/4, 3} and J = {0, 1, 2}.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Iterable, Sequence

import numpy as np

DEFAULT_EXPONENTS = "0,1/4,1/3,1/2,2/3,3/4,4/5,1,5/4,4/3,3/2,5/3,7/4,2,9/4,7/3,5/2,8/3,11/4,3"
DEFAULT_LOG_EXPONENTS = "0,1,2"


def parse_exponents(value, name: str = "exponents") -> tuple[float, ...]:
    """Parse an exponent set given as text (``"0,1/3,1/2,1,2"``) or a sequence of numbers.

    Parameters
    ----------
    value : str or sequence of (int, float, str, Fraction)
    name : str
        The option name, for the error message.

    Returns
    -------
    tuple of float
        The distinct exponents, sorted ascending.

    Raises
    ------
    ValueError
        Naming the option, what was expected and what was given.

    Examples
    --------
    >>> parse_exponents("0, 1/2, 1")
    (0.0, 0.5, 1.0)
    >>> parse_exponents([2, "1/3"])
    (0.3333333333333333, 2.0)
    """
    expected = (
        f"{name}: expected a comma-separated list of numbers or fractions such as "
        f"'0,1/3,1/2,1,2' (or a list of numbers), got {value!r}"
    )
    if isinstance(value, str):
        items: Iterable = [item for item in value.replace(";", ",").split(",")]
    elif isinstance(value, (int, float, Fraction)) and not isinstance(value, bool):
        items = [value]
    else:
        try:
            items = list(value)
        except TypeError:
            raise ValueError(expected) from None
    result = set()
    for item in items:
        if isinstance(item, bool):
            raise ValueError(expected)
        if isinstance(item, str):
            item = item.strip()
            if not item:
                continue
            try:
                number = float(Fraction(item))
            except (ValueError, ZeroDivisionError):
                raise ValueError(expected) from None
        else:
            try:
                number = float(item)
            except (TypeError, ValueError):
                raise ValueError(expected) from None
        if not np.isfinite(number):
            raise ValueError(expected)
        result.add(number)
    if not result:
        raise ValueError(expected)
    return tuple(sorted(result))


def building_blocks(
    exponents: Sequence[float], log_exponents: Sequence[float], negative: bool = False
) -> np.ndarray:
    """Every factor ``x^i log2(x)^j`` with ``i`` from ``exponents`` and ``j`` from ``log_exponents``.

    With ``negative`` the falling factors of strong scaling are added:
    ``x^-i`` for every ``i > 0``, ``x^-i log2(x)`` for ``i`` in 1, 3/2, 2
    (``log2(p) / p``; if those are in I and 1 in J), and ``log2(x)^-j`` for ``j > 0`` (Extra-P's
    ``allow_negative_exponents``).  Where J holds negative log exponents, the falling powers are
    also combined with them: ``x^-i log2(x)^j`` for every ``j < 0`` (Extra-P's products such as
    ``p^-(1/2) log2(p)^-1``; not in the default J: they cost speed and, on noisy falling data,
    accuracy).  The pair (0, 0) is the constant and never a block.

    Returns
    -------
    ndarray, shape (n_blocks, 2)
        Sorted by (i, j).

    Examples
    --------
    >>> building_blocks([0, 1], [0, 1]).tolist()
    [[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
    >>> building_blocks([0, 1], [0, 1], negative=True).tolist()
    [[-1.0, 0.0], [-1.0, 1.0], [0.0, -1.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
    >>> building_blocks([0, 1], [-1, 0], negative=True).tolist()
    [[-1.0, -1.0], [-1.0, 0.0], [0.0, -1.0], [1.0, -1.0], [1.0, 0.0]]
    """
    pairs = {(float(i), float(j)) for i in exponents for j in log_exponents}
    if negative:
        positive_i = [float(i) for i in exponents if i > 0]
        pairs |= {(-i, 0.0) for i in positive_i}
        pairs |= {(-i, float(j)) for i in positive_i for j in log_exponents if j == 1 and i in (1.0, 1.5, 2.0)}
        pairs |= {(0.0, -float(j)) for j in log_exponents if j > 0}
        pairs |= {(-i, float(j)) for i in positive_i for j in log_exponents if j < 0}
    pairs.discard((0.0, 0.0))
    return np.asarray(sorted(pairs), dtype=np.float64).reshape(-1, 2)


def evaluate_blocks(x: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """Evaluate every block at every value of one parameter.

    Parameters
    ----------
    x : ndarray, shape (n_points,)
    blocks : ndarray, shape (n_blocks, 2)

    Returns
    -------
    ndarray, shape (n_points, n_blocks)
        NaN or inf where a block is undefined (log of x <= 0, fractional
        power of a negative value, negative power of zero).
    """
    x = np.asarray(x, dtype=np.float64)[:, None]
    i, j = blocks[:, 0][None, :], blocks[:, 1][None, :]
    with np.errstate(all="ignore"):
        power = np.where(i == 0, 1.0, np.power(x, i))
        logarithm = np.where(j == 0, 1.0, np.power(np.log2(x), j))
        return power * logarithm


def usable_blocks(x: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """Which blocks can describe values measured at ``x``.

    A block is usable when it is finite at every point and not constant over
    them (a constant column duplicates the model's constant).  Logarithmic
    blocks need every ``x >= 1`` (as in Extra-P), so that ``log2`` is
    non-negative and grows with ``x``.

    Returns
    -------
    ndarray of bool, shape (n_blocks,)
    """
    x = np.asarray(x, dtype=np.float64)
    columns = evaluate_blocks(x, blocks)
    finite = np.all(np.isfinite(columns), axis=0)
    with np.errstate(all="ignore"):
        spread = np.ptp(np.where(np.isfinite(columns), columns, 0.0), axis=0)
        scale = np.max(np.abs(np.where(np.isfinite(columns), columns, 0.0)), axis=0)
        varying = spread > 1e-12 * np.maximum(scale, 1e-300)
    log_ok = (blocks[:, 1] == 0) | (np.min(x) >= 1.0 if x.size else False)
    return finite & varying & log_ok


def combinations(n_blocks: int, k: int) -> np.ndarray:
    """All ``k``-term hypotheses over ``n_blocks`` blocks: sorted index tuples.

    Returns
    -------
    ndarray of int64, shape (C(n_blocks, k), k)

    Examples
    --------
    >>> combinations(3, 2).tolist()
    [[0, 1], [0, 2], [1, 2]]
    """
    if k == 0:
        return np.zeros((1, 0), dtype=np.int64)
    rows = list(itertools.combinations(range(n_blocks), k))
    return np.asarray(rows, dtype=np.int64).reshape(-1, k)


def slope_order(x_max: float, blocks: np.ndarray) -> np.ndarray:
    """Block indices sorted by the slope of ``x^i log2(x)^j`` at the largest value ``x_max``.

    The ranking of Calotoiu et al. 2016, Section IV-A: the fit error along this order is
    (nearly) unimodal, which the golden-section search exploits.  Ties break
    by (i, j).

    Returns
    -------
    ndarray of int64, shape (n_blocks,)
    """
    i, j = blocks[:, 0], blocks[:, 1]
    x = float(x_max)
    with np.errstate(all="ignore"):
        lg = np.log2(x) if x > 0 else np.nan
        # d/dx x^i log2(x)^j = x^(i-1) log2(x)^(j-1) (i log2(x) + j / ln 2)
        slope = np.power(x, i - 1) * np.where(j == 0, 1.0 / lg if lg else 0.0, np.power(lg, j - 1)) * (
            i * lg + j / np.log(2.0)
        )
    slope = np.where(np.isfinite(slope), slope, np.inf)
    return np.lexsort((j, i, slope)).astype(np.int64)


def exponent_complexity(blocks: np.ndarray) -> np.ndarray:
    """How unusual each block's polynomial exponent is: 0 whole, 1 halves, 2 thirds or quarters, 3 other.

    Used to break ties between hypotheses that the data cannot tell apart
    (all explained by measurement noise): the simplest exponents win.

    Returns
    -------
    ndarray of int, shape (n_blocks,)

    Examples
    --------
    >>> exponent_complexity(np.array([[1, 0], [0.5, 1], [1 / 3, 0], [0.8, 0]])).tolist()
    [0, 1, 2, 3]
    """
    result = np.full(blocks.shape[0], 3, dtype=np.int64)
    for rank, denominator in ((2, 4), (2, 3), (1, 2), (0, 1)):
        scaled = blocks[:, 0] * denominator
        result[np.abs(scaled - np.round(scaled)) < 1e-9] = rank
    return result
