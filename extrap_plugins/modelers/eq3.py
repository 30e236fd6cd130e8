"""The two-parameter search space of Calotoiu et al. 2016, Eq. 3, searched whole: every hypothesis on every point.

The ``exhaustive`` modeler is this search; the hierarchical ``default`` modeler falls back on it where its lines
cannot see a term (:meth:`~extrap_plugins.modelers.base.PMNFModeler._fit_points`).
"""

from __future__ import annotations

import numpy as np

from extrap_plugins.modelers import regression
from extrap_plugins.modelers.hypotheses import combinations, evaluate_blocks, exponent_complexity


def search(X: np.ndarray, Y: np.ndarray, noise: regression.Noise, active: list[int], usable: list[np.ndarray],
           blocks: np.ndarray, max_terms: int, criterion: str, improvement: float):
    """Per series, the best hypothesis of Eq. 3 over the two parameters ``active`` (columns of ``X``), fitted to
    every point.

    Returns
    -------
    terms : ndarray of int, shape (n_series, max(max_terms, 2), n_params)
    coefficients : ndarray, shape (n_series, max(max_terms, 2) + 1)
    n_terms : ndarray of int, shape (n_series,)
    """
    n_series, n_points = Y.shape
    a, b = active
    hypotheses = eq3_hypotheses(np.flatnonzero(usable[a]), np.flatnonzero(usable[b]), max_terms)
    columns = [evaluate_blocks(X[:, param], blocks) for param in active]
    limit = min(len(hypotheses) - 1, max(0, n_points - 2))
    slots = max(max_terms, 2)
    best_score = np.full((n_series, slots + 1), np.inf)
    best_index = np.zeros((n_series, slots + 1), dtype=np.int64)
    explained = np.zeros((n_series, slots + 1), dtype=bool)
    factorizations = []
    for k in range(limit + 1):
        f = regression.factorize(_designs(columns, hypotheses[k]))
        complexity = _complexity(hypotheses[k], exponent_complexity(blocks))
        best_index[:, k], best_score[:, k], explained[:, k] = regression.best_shared(
            Y, f, criterion, noise, complexity
        )
        factorizations.append(f)
    chosen = regression.select_by_terms(best_score, criterion, improvement, explained)
    terms = np.full((n_series, slots, X.shape[1]), -1, dtype=np.int64)
    coefficients = np.zeros((n_series, slots + 1))
    for k, f in enumerate(factorizations):
        who = np.flatnonzero(chosen == k)
        if who.size == 0:
            continue
        index = best_index[who, k]
        if k:
            coefficients[who, : k + 1] = regression.solve(regression.take(f, index), Y[who])
        else:  # the constant alone is the mean, exactly
            coefficients[who, :1] = Y[who].mean(axis=1, keepdims=True)
        terms[who[:, None], np.arange(k)[None, :], a] = hypotheses[k][index, :, 0]
        terms[who[:, None], np.arange(k)[None, :], b] = hypotheses[k][index, :, 1]
    return terms, coefficients, chosen


def eq3_hypotheses(blocks_a: np.ndarray, blocks_b: np.ndarray, max_terms: int) -> list[np.ndarray]:
    """The two-parameter hypotheses of Calotoiu et al. 2016, Eq. 3, by number of terms.

    Parameters
    ----------
    blocks_a, blocks_b : ndarray of int
        Usable building blocks of the two parameters.
    max_terms : int

    Returns
    -------
    list of ndarray, one per k = 0..min(max_terms, 3)
        Element k has shape (n_hypotheses_k, k, 2): for each term the block of
        each parameter, -1 where the parameter is absent.

    Examples
    --------
    >>> [h.shape for h in eq3_hypotheses(np.array([0, 1]), np.array([2]), 2)]
    [(1, 0, 2), (5, 1, 2), (7, 2, 2)]
    """
    A, B = np.meshgrid(blocks_a, blocks_b, indexing="ij")
    A, B = A.reshape(-1), B.reshape(-1)
    none_a, none_b = np.full_like(A, -1), np.full_like(B, -1)
    f = lambda a: np.stack([a, np.full_like(a, -1)], axis=-1)  # noqa: E731
    g = lambda b: np.stack([np.full_like(b, -1), b], axis=-1)  # noqa: E731
    fg = np.stack([A, B], axis=-1)
    by_size = [np.zeros((1, 0, 2), dtype=np.int64)]
    if max_terms >= 1:
        by_size.append(np.concatenate([f(blocks_a), g(blocks_b), fg])[:, None, :])
    if max_terms >= 2:
        pairs_a = blocks_a[combinations(blocks_a.size, 2)]
        pairs_b = blocks_b[combinations(blocks_b.size, 2)]
        two = [
            np.stack([f(A), g(B)], axis=1),
            np.stack([fg, np.stack([A, none_b], axis=-1)], axis=1),
            np.stack([fg, np.stack([none_a, B], axis=-1)], axis=1),
            np.stack([f(pairs_a[:, 0]), f(pairs_a[:, 1])], axis=1),
            np.stack([g(pairs_b[:, 0]), g(pairs_b[:, 1])], axis=1),
        ]
        by_size.append(np.concatenate(two).reshape(-1, 2, 2))
    if max_terms >= 3:
        by_size.append(np.stack([f(A), g(B), fg], axis=1))
    return [h.astype(np.int64) for h in by_size]


def _complexity(hypotheses: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Occam rank of each hypothesis: factors used, then how unusual their exponents are.

    ``hypotheses`` has shape (n_hyp, k, 2); returns shape (n_hyp,).
    """
    present = hypotheses >= 0
    factors = present.sum(axis=(1, 2))
    unusual = np.where(present, ranks[np.maximum(hypotheses, 0)], 0).sum(axis=(1, 2))
    return factors * 16 + unusual


def _designs(columns: list[np.ndarray], hypotheses: np.ndarray) -> np.ndarray:
    """``[1, terms...]`` for a stack of two-parameter hypotheses: shape (n_hyp, n_points, k + 1)."""
    n_hyp, k, _ = hypotheses.shape
    n_points = columns[0].shape[0]
    values = np.ones((n_hyp, n_points, k))
    for param, cols in enumerate(columns):
        ids = hypotheses[:, :, param]
        values *= np.where(ids[:, None, :] >= 0, cols[:, np.maximum(ids, 0)].transpose(1, 0, 2), 1.0)
    return np.concatenate([np.ones((n_hyp, n_points, 1)), values], axis=2)
