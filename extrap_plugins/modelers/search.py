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

from extrap_plugins.modelers import regression
from extrap_plugins.modelers.hypotheses import combinations, evaluate_blocks, exponent_complexity, slope_order

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
    runner_up : ndarray of int, shape (n_series,)
        The block of the best one-term hypothesis (-1 if none): a candidate
        for the multi-parameter combination even where the constant won.
    """

    blocks: np.ndarray
    coefficients: np.ndarray
    n_terms: np.ndarray
    score: np.ndarray
    runner_up: np.ndarray | None = None


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
    noise: regression.Noise | None = None,
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
        One of :data:`extrap_plugins.modelers.regression.CRITERIA`.
    improvement : float
        See :func:`extrap_plugins.modelers.regression.select_by_terms`.
    noise : Noise, optional
        Measurement noise from the repetitions: where known, the number of
        terms is the fewest whose best fit is explained by noise.

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
    explained = np.zeros((n_series, max_terms + 1), dtype=bool)
    stacks = []
    pending = np.arange(n_series)
    for k in range(limit + 1):
        hypotheses = usable_ids[combinations(usable_ids.size, k)]
        factorization = regression.factorize(design(columns, hypotheses))
        stacks.append((hypotheses, factorization))
        if pending.size == 0:
            continue
        complexity = exponent_complexity(blocks)[hypotheses].sum(axis=1)
        part = None if noise is None else regression.Noise(noise.variance[pending], noise.dof[pending])
        index, score, flags = regression.best_shared(
            Y[pending], factorization, criterion, part, complexity, positive_terms=True
        )
        best_index[pending, k], best_score[pending, k], explained[pending, k] = index, score, flags
        # A series explained by noise (or fitted exactly) never takes more terms: stop searching
        # it, after the one-term level (cheap, and its best is the runner-up for combinations).
        if k >= 1:
            pending = pending[~(explained[pending].any(axis=1) | (best_score[pending] <= regression.EXACT[criterion]).any(axis=1))]
    chosen = regression.select_by_terms(best_score, criterion, improvement, explained if noise is not None else None)
    fit = SingleFit(
        blocks=np.full((n_series, max_terms), -1, dtype=np.int64),
        coefficients=np.zeros((n_series, max_terms + 1)),
        n_terms=chosen,
        score=best_score[np.arange(n_series), chosen],
        runner_up=stacks[1][0][best_index[:, 1], 0] if len(stacks) > 1 else np.full(n_series, -1),
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
    noise: regression.Noise | None = None,
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
        first = np.zeros(n_series, dtype=np.int64)
        first_score = np.full(n_series, np.inf)
        for positions in slices:
            candidates = np.broadcast_to(positions, (n_series, positions.size))
            lengths = np.full(n_series, positions.size)
            found = candidates[rows, _golden_lockstep(Y, f1, candidates, lengths, criterion, noise)]
            score = _objective(Y, f1, found, criterion, noise)
            better = score < first_score
            first, first_score = np.where(better, found, first), np.where(better, score, first_score)
        best_score[:, 1] = _objective(Y, f1, first, criterion, None)
        stacks.append((usable_ids[:, None], f1, first))
    if limit >= 2:
        pairs = combinations(n_usable, 2)
        f2 = regression.factorize(design(columns, usable_ids[pairs]))
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
            found = candidates[rows, _golden_lockstep(Y, f2, candidates, np.maximum(lengths, 1), criterion, noise)]
            score = np.where(lengths > 0, _objective(Y, f2, np.maximum(found, 0), criterion, noise), np.inf)
            score = np.where(found >= 0, score, np.inf)
            better = score < second_score
            second, second_score = np.where(better, found, second), np.where(better, score, second_score)
        best_score[:, 2] = _objective(Y, f2, np.maximum(second, 0), criterion, None)
        stacks.append((usable_ids[pairs], f2, np.maximum(second, 0)))
    explained = None
    if noise is not None:
        explained = np.zeros((n_series, max_terms + 1), dtype=bool)
        for k, (_, factorization, index) in enumerate(stacks):
            residuals = regression.shared_residuals(factorization, index, Y)
            explained[:, k] = regression.explained_by_noise(Y, residuals, factorization.leverage[index], noise)
    chosen = regression.select_by_terms(best_score, criterion, improvement, explained)
    fit = SingleFit(
        blocks=np.full((n_series, max_terms), -1, dtype=np.int64),
        coefficients=np.zeros((n_series, max_terms + 1)),
        n_terms=chosen,
        score=best_score[rows, chosen],
        runner_up=usable_ids[stacks[1][2]] if len(stacks) > 1 else np.full(n_series, -1),
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


def _golden_lockstep(
    Y: np.ndarray,
    f: regression.Factorization,
    candidates: np.ndarray,
    lengths: np.ndarray,
    criterion: str,
    noise: regression.Noise | None,
) -> np.ndarray:
    """Golden-section search for each series' minimum along its candidate list.

    Parameters
    ----------
    Y : ndarray, shape (n_series, n_points)
    f : Factorization of the hypotheses, Q of shape (n_hypotheses, n_points, n_coef)
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
            part = None if noise is None else regression.Noise(noise.variance[who], noise.dof[who])
            score = _objective(Y[who], f, np.maximum(hypothesis, 0), criterion, part)
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


def _objective(Y, f: regression.Factorization, index, criterion: str, noise) -> np.ndarray:
    """Score of each series under its own hypothesis ``index[s]``, shape (n_series,).

    With ``noise``, hypotheses not explained by noise get 1e6 added, so any
    explained one ranks first while the order within each class is kept.
    """
    Q = f.Q[index]
    residuals = Y - np.einsum("spk,sk->sp", Q, np.einsum("spk,sp->sk", Q, Y))
    E = residuals.copy()
    if criterion != "rss":
        with np.errstate(divide="ignore", invalid="ignore"):
            E /= 1.0 - f.leverage[index]
    scores = regression.score_residuals(E[:, None, :], Y, criterion)[:, 0]
    scores[~f.valid[index]] = np.inf
    if noise is not None:
        explained = regression.explained_by_noise(Y, residuals, f.leverage[index], noise)
        known = np.isfinite(noise.variance)
        scores = scores + np.where(known & ~explained, 1e6, 0.0)
    return scores


def _fill(fit: SingleFit, members, hypotheses, factorization, index, Y) -> None:
    """Store the coefficients of ``members`` fitted to their chosen hypotheses."""
    k = hypotheses.shape[1]
    chosen = regression.Factorization(
        factorization.Q[index], factorization.R[index], factorization.scale[index],
        factorization.leverage[index], factorization.valid[index],
    )
    # The constant alone is the mean, exactly.
    coefficients = regression.solve(chosen, Y[members]) if k else Y[members].mean(axis=1, keepdims=True)
    fit.blocks[members, :k] = hypotheses
    fit.coefficients[members, : k + 1] = coefficients
