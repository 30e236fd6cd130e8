"""Single-parameter hypothesis searches, batched over every series of a group.

Both searches take the values of one parameter ``x`` (shape (n_points,)) and
the series ``Y`` (shape (n_series, n_points)) measured there, and return a
:class:`SingleFit`: for each series the chosen blocks and coefficients.

* :func:`full_search` scores every hypothesis of up to ``max_terms`` terms;
  per number of terms one stack of QR factorisations serves the whole group.
* :func:`golden_search` is seed 000's modified golden-section search: the
  one-term hypotheses sorted by their slope at the largest ``x``, searched
  for the minimum error in logarithmically many steps, all series in
  lock-step; a second term is searched the same way with the first fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from extrap_plugins import regression
from extrap_plugins.hypotheses import combinations, evaluate_blocks, slope_order

GOLDEN = (1.0 + 5.0**0.5) / 2.0


@dataclass
class SingleFit:
    """Chosen single-parameter models of a batch of series.

    Attributes
    ----------
    blocks : ndarray of int, shape (n_series, max_terms)
        Indices into the building-block array, -1 for unused slots.
    coefficients : ndarray, shape (n_series, max_terms + 1)
        Constant first, then one per block; 0 for unused slots.
    n_terms : ndarray of int, shape (n_series,)
    score : ndarray, shape (n_series,)
        The criterion value of the chosen hypothesis.
    """

    blocks: np.ndarray
    coefficients: np.ndarray
    n_terms: np.ndarray
    score: np.ndarray


def term_limit(n_points: int, max_terms: int) -> int:
    """How many terms the points support: leave-one-out needs spare points.

    Five points allow two terms; four or three allow one; two only the constant.
    """
    supported = n_points - 3 if n_points >= 5 else (1 if n_points >= 3 else 0)
    return int(max(0, min(max_terms, supported)))


def design(columns: np.ndarray, hypotheses: np.ndarray) -> np.ndarray:
    """Design matrices ``[1, column_a, column_b, ...]`` of a stack of hypotheses.

    Parameters
    ----------
    columns : ndarray, shape (n_points, n_blocks)
    hypotheses : ndarray of int, shape (n_hypotheses, k)

    Returns
    -------
    ndarray, shape (n_hypotheses, n_points, k + 1)
    """
    n_points = columns.shape[0]
    ones = np.ones((hypotheses.shape[0], n_points, 1))
    terms = columns[:, hypotheses].transpose(1, 0, 2)
    return np.concatenate([ones, terms], axis=2)


def full_search(
    x: np.ndarray,
    Y: np.ndarray,
    blocks: np.ndarray,
    usable: np.ndarray,
    max_terms: int,
    criterion: str,
    improvement: float,
) -> SingleFit:
    """Try every hypothesis of up to ``max_terms`` usable blocks; keep the simplest clearly best.

    Parameters
    ----------
    x : ndarray, shape (n_points,)
    Y : ndarray, shape (n_series, n_points)
        Finite values.
    blocks : ndarray, shape (n_blocks, 2)
    usable : ndarray of bool, shape (n_blocks,)
    max_terms : int
    criterion : str
        One of :data:`extrap_plugins.regression.CRITERIA`.
    improvement : float
        See :func:`extrap_plugins.regression.select_by_terms`.

    Returns
    -------
    SingleFit
    """
    n_series, n_points = Y.shape
    columns = evaluate_blocks(x, blocks)
    usable_ids = np.flatnonzero(usable)
    limit = min(term_limit(n_points, max_terms), usable_ids.size)
    best_score = np.full((n_series, max_terms + 1), np.inf)
    best_index = np.zeros((n_series, max_terms + 1), dtype=np.int64)
    stacks = []
    for k in range(limit + 1):
        hypotheses = usable_ids[combinations(usable_ids.size, k)]
        factorization = regression.factorize(design(columns, hypotheses))
        index, score = regression.best_shared(Y, factorization, criterion)
        best_index[:, k], best_score[:, k] = index, score
        stacks.append((hypotheses, factorization))
    chosen = regression.select_by_terms(best_score, criterion, improvement)
    fit = SingleFit(
        blocks=np.full((n_series, max_terms), -1, dtype=np.int64),
        coefficients=np.zeros((n_series, max_terms + 1)),
        n_terms=chosen,
        score=best_score[np.arange(n_series), chosen],
    )
    for k, (hypotheses, factorization) in enumerate(stacks):
        members = np.flatnonzero(chosen == k)
        if members.size:
            _fill(fit, members, hypotheses[best_index[members, k]], factorization, best_index[members, k], Y)
    return fit


def golden_search(
    x: np.ndarray,
    Y: np.ndarray,
    blocks: np.ndarray,
    usable: np.ndarray,
    max_terms: int,
    criterion: str,
    improvement: float,
) -> SingleFit:
    """Seed 000's modified golden-section search over slope-ordered hypotheses.

    Sorting all blocks by slope makes the error unimodal only for pure powers
    (seed 000 uses J = {0}); with logarithms the order interleaves families.
    So, as in the Extra-P slides (004, "slices"), the blocks are cut into
    slices along which the error is unimodal: one per log exponent ``j``
    (``x^i log2(x)^j`` for every ``i``) and one of pure logarithms
    (``log2(x)^j``).  Each slice is searched by golden section, sorted by
    slope at ``max(x)``, and the best slice minimum wins.  A second term (if
    ``max_terms >= 2`` and the points allow) is searched the same way with
    the first fixed; terms beyond two are not searched.  Same parameters and
    result as :func:`full_search`.
    """
    n_series, n_points = Y.shape
    columns = evaluate_blocks(x, blocks)
    usable_ids = np.flatnonzero(usable)
    n_usable = usable_ids.size
    limit = min(term_limit(n_points, max_terms), n_usable, 2)
    rows = np.arange(n_series)
    best_score = np.full((n_series, max_terms + 1), np.inf)
    constant = regression.factorize(np.ones((1, n_points, 1)))
    best_score[:, 0] = regression.best_shared(Y, constant, criterion)[1]
    stacks = [(np.zeros((1, 0), dtype=np.int64), constant, np.zeros(n_series, dtype=np.int64))]
    if limit >= 1:
        slices = _slices(float(np.max(x)), blocks[usable_ids])  # positions among the usable blocks
        f1 = regression.factorize(design(columns, usable_ids[:, None]))
        M1 = _operators(f1, criterion)
        first = np.zeros(n_series, dtype=np.int64)
        first_score = np.full(n_series, np.inf)
        for positions in slices:
            candidates = np.broadcast_to(positions, (n_series, positions.size))
            lengths = np.full(n_series, positions.size)
            found = candidates[rows, _golden_lockstep(Y, M1, candidates, lengths, criterion)]
            score = _score_gathered(Y, M1, found, criterion)
            better = score < first_score
            first, first_score = np.where(better, found, first), np.where(better, score, first_score)
        best_score[:, 1] = first_score
        stacks.append((usable_ids[:, None], f1, first))
    if limit >= 2:
        pairs = combinations(n_usable, 2)
        f2 = regression.factorize(design(columns, usable_ids[pairs]))
        M2 = _operators(f2, criterion)
        pair_id = np.full((n_usable, n_usable), -1, dtype=np.int64)
        pair_id[pairs[:, 0], pairs[:, 1]] = np.arange(pairs.shape[0])
        pair_id[pairs[:, 1], pairs[:, 0]] = np.arange(pairs.shape[0])
        second = np.zeros(n_series, dtype=np.int64)
        second_score = np.full(n_series, np.inf)
        for positions in slices:
            # Each series searches the slice without its first term.
            keep = positions[None, :] != first[:, None]
            lengths = keep.sum(axis=1)
            order = np.argsort(~keep, axis=1, kind="stable")
            others = np.take_along_axis(np.broadcast_to(positions, keep.shape), order, axis=1)
            others = np.where(np.arange(positions.size)[None, :] < lengths[:, None], others, others[:, :1])
            if positions.size < 2 and not (lengths > 0).any():
                continue
            candidates = pair_id[first[:, None], others]
            found = candidates[rows, _golden_lockstep(Y, M2, candidates, np.maximum(lengths, 1), criterion)]
            score = np.where(lengths > 0, _score_gathered(Y, M2, np.maximum(found, 0), criterion), np.inf)
            score = np.where(found >= 0, score, np.inf)
            better = score < second_score
            second, second_score = np.where(better, found, second), np.where(better, score, second_score)
        best_score[:, 2] = second_score
        stacks.append((usable_ids[pairs], f2, np.maximum(second, 0)))
    chosen = regression.select_by_terms(best_score, criterion, improvement)
    fit = SingleFit(
        blocks=np.full((n_series, max_terms), -1, dtype=np.int64),
        coefficients=np.zeros((n_series, max_terms + 1)),
        n_terms=chosen,
        score=best_score[rows, chosen],
    )
    for k, (hypotheses, factorization, index) in enumerate(stacks):
        members = np.flatnonzero(chosen == k)
        if members.size:
            _fill(fit, members, hypotheses[index[members]], factorization, index[members], Y)
    return fit


def _slices(x_max: float, blocks: np.ndarray) -> list[np.ndarray]:
    """Unimodal slices of the blocks, each sorted by slope at ``x_max`` (positions into ``blocks``)."""
    order = slope_order(x_max, blocks)
    slices = []
    for j in np.unique(blocks[:, 1]):
        members = order[blocks[order, 1] == j]
        if members.size:
            slices.append(members)
    pure_logs = order[blocks[order, 0] == 0]
    if pure_logs.size > 1:
        slices.append(pure_logs)
    return slices


def _operators(f: regression.Factorization, criterion: str) -> np.ndarray:
    return regression.residual_operators(f) if criterion == "rss" else regression.loo_operators(f)


def _golden_lockstep(
    Y: np.ndarray, M: np.ndarray, candidates: np.ndarray, lengths: np.ndarray, criterion: str
) -> np.ndarray:
    """Golden-section search for each series' minimum along its candidate list.

    Parameters
    ----------
    Y : ndarray, shape (n_series, n_points)
    M : ndarray, shape (n_hypotheses, n_points, n_points)
        Residual operators.
    candidates : ndarray of int, shape (n_series, n_candidates)
        Each series' hypotheses in search order.
    lengths : ndarray of int, shape (n_series,)
        How many leading candidates of each row are real (>= 1).

    Returns
    -------
    ndarray of int, shape (n_series,)
        Position in ``candidates`` of the minimum found.  Each step evaluates
        at most one new hypothesis per series; earlier values are reused.
    """
    n_series, n = candidates.shape
    rows = np.arange(n_series)
    cache = np.full((n_series, n), np.nan)

    def value(position):
        missing = np.isnan(cache[rows, position])
        if missing.any():
            who = rows[missing]
            hypothesis = candidates[who, position[missing]]
            score = _score_gathered(Y[who], M, np.maximum(hypothesis, 0), criterion)
            cache[who, position[missing]] = np.where(hypothesis >= 0, score, np.inf)
        return cache[rows, position]

    lo = np.zeros(n_series, dtype=np.int64)
    hi = np.maximum(lengths - 1, 0).astype(np.int64)
    while True:
        open_ = hi - lo > 2
        if not open_.any():
            break
        step = np.rint((hi - lo) / GOLDEN).astype(np.int64)
        a = np.where(open_, hi - step, lo)
        b = np.where(open_, lo + step, hi)
        b = np.where(b <= a, np.minimum(a + 1, hi), b)
        left = value(a) <= value(b)  # the minimum lies in [lo, b]
        hi = np.where(open_ & left, b, hi)
        lo = np.where(open_ & ~left, a, lo)
    # At most three candidates remain: take the best.
    best = lo.copy()
    best_value = value(lo)
    for offset in (1, 2):
        position = np.minimum(lo + offset, hi)
        v = value(position)
        better = v < best_value
        best = np.where(better, position, best)
        best_value = np.where(better, v, best_value)
    return best


def _score_gathered(Y: np.ndarray, M: np.ndarray, index: np.ndarray, criterion: str) -> np.ndarray:
    """Score each series under its own hypothesis ``index[s]``; shape (n_series,)."""
    operators = M[index]
    E = np.einsum("sqp,sp->sq", np.nan_to_num(operators), Y)[:, None, :]
    scores = regression.score_residuals(E, Y, criterion)[:, 0]
    scores[~np.all(np.isfinite(operators), axis=(1, 2))] = np.inf
    return scores


def _fill(fit: SingleFit, members, hypotheses, factorization, index, Y) -> None:
    """Store the coefficients of ``members`` fitted to their chosen hypotheses."""
    k = hypotheses.shape[1]
    chosen = regression.Factorization(
        factorization.Q[index], factorization.R[index], factorization.scale[index],
        factorization.leverage[index], factorization.valid[index],
    )
    coefficients = regression.solve(chosen, Y[members])
    fit.blocks[members, :k] = hypotheses
    fit.coefficients[members, : k + 1] = coefficients
