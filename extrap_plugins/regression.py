"""Batched least squares with closed-form leave-one-out cross-validation.

Every hypothesis is a design matrix ``A = [1, column_1, ..., column_k]`` of
shape (n_points, k + 1).  One QR factorisation ``A = Q R`` serves every
series fitted to it: the coefficients are ``R^-1 Q^T y``, the hat matrix is
``H = Q Q^T`` and the leave-one-out residuals follow without refitting
(e.g. Hastie, Tibshirani & Friedman, Eq. 7.52)::

    e_loo = (I - H) y / (1 - diag(H))

so the leave-one-out residuals of all series under one hypothesis are a
single matrix product.  Stacks of hypotheses are factorised at once with
``numpy.linalg.qr`` on 3-D (or 4-D) arrays.

Shapes used throughout::

    A      : (..., n_points, k + 1)     design matrices
    Q      : (..., n_points, k + 1)     orthonormal columns
    R      : (..., k + 1, k + 1)        upper triangular
    scale  : (..., k + 1)               column scaling applied before the QR
    Y      : (n_series, n_points)       one row per series
    scores : (n_series, n_hypotheses)   the selection criterion, lower is better
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CRITERIA = ("relative", "smape", "press", "rss")
"""Selection criteria, all computed from leave-one-out residuals except ``rss``:

``relative``  mean squared leave-one-out error relative to the measured value
``smape``     symmetric mean absolute percentage error of the leave-one-out predictions
``press``     mean squared leave-one-out error relative to the mean squared value
``rss``       training residual sum of squares relative to the mean squared value (no CV)
"""

EXACT = {"relative": 1e-20, "smape": 1e-9, "press": 1e-20, "rss": 1e-20}
"""Scores at or below these are exact fits up to rounding: never 'clearly' beaten."""

LEVERAGE_LIMIT = 1.0 - 1e-8
"""A point with leverage above this decides its own fit; leave-one-out is undefined."""

CHUNK_ELEMENTS = 1 << 22
"""Work arrays are cut into pieces of about this many float64 values (32 MB)."""


@dataclass
class Factorization:
    """QR factorisations of a stack of design matrices.

    Attributes
    ----------
    Q : ndarray, shape (..., n_points, n_coef)
    R : ndarray, shape (..., n_coef, n_coef)
    scale : ndarray, shape (..., n_coef)
        Each design column was divided by this before factorising.
    leverage : ndarray, shape (..., n_points)
        The diagonal of the hat matrix.
    valid : ndarray of bool, shape (...)
        Full rank, finite, and every leverage below :data:`LEVERAGE_LIMIT`.
    """

    Q: np.ndarray
    R: np.ndarray
    scale: np.ndarray
    leverage: np.ndarray
    valid: np.ndarray


def factorize(A: np.ndarray) -> Factorization:
    """Factorise a stack of design matrices, column-scaled for conditioning.

    Parameters
    ----------
    A : ndarray, shape (..., n_points, n_coef)

    Returns
    -------
    Factorization

    Examples
    --------
    >>> A = np.stack([np.ones(5), np.arange(1.0, 6.0)], axis=1)[None]
    >>> f = factorize(A)
    >>> f.Q.shape, bool(f.valid[0])
    ((1, 5, 2), True)
    """
    A = np.asarray(A, dtype=np.float64)
    finite = np.all(np.isfinite(A), axis=(-2, -1))
    A = np.where(np.isfinite(A), A, 0.0)
    scale = np.max(np.abs(A), axis=-2)
    scale = np.where(scale > 0, scale, 1.0)
    Q, R = np.linalg.qr(A / scale[..., None, :])
    diagonal = np.abs(np.diagonal(R, axis1=-2, axis2=-1))
    column_norm = np.linalg.norm(A / scale[..., None, :], axis=-2)
    full_rank = np.all(diagonal > 1e-10 * np.maximum(column_norm, 1e-300), axis=-1)
    leverage = np.sum(Q * Q, axis=-1)
    valid = finite & full_rank & np.all(leverage < LEVERAGE_LIMIT, axis=-1)
    return Factorization(Q, R, scale, leverage, valid)


def loo_operators(f: Factorization) -> np.ndarray:
    """The matrices mapping a series to its leave-one-out residuals.

    Returns
    -------
    ndarray, shape (..., n_points, n_points)
        ``M`` with ``e_loo = M @ y``: ``(I - Q Q^T)`` with row ``i`` divided by
        ``1 - h_ii``.  Invalid hypotheses get NaN.
    """
    n_points = f.Q.shape[-2]
    residual_maker = np.eye(n_points) - np.einsum("...ik,...jk->...ij", f.Q, f.Q)
    with np.errstate(divide="ignore", invalid="ignore"):
        M = residual_maker / (1.0 - f.leverage)[..., :, None]
    M[~f.valid] = np.nan
    return M


def residual_operators(f: Factorization) -> np.ndarray:
    """``I - Q Q^T``: maps a series to its training residuals (for the ``rss`` criterion)."""
    n_points = f.Q.shape[-2]
    M = np.eye(n_points) - np.einsum("...ik,...jk->...ij", f.Q, f.Q)
    M[~f.valid] = np.nan
    return M


def score_residuals(E: np.ndarray, Y: np.ndarray, criterion: str) -> np.ndarray:
    """Reduce residuals to one score per series and hypothesis (lower is better).

    Parameters
    ----------
    E : ndarray, shape (n_series, n_hypotheses, n_points)
        Leave-one-out (or training, for ``rss``) residuals; overwritten.
    Y : ndarray, shape (n_series, n_points)
        The measured values.
    criterion : str
        One of :data:`CRITERIA`.

    Returns
    -------
    ndarray, shape (n_series, n_hypotheses)
        NaN becomes inf, so invalid hypotheses never win.
    """
    with np.errstate(all="ignore"):
        if criterion == "relative":
            magnitude = np.abs(Y)
            fallback = np.mean(magnitude, axis=1, keepdims=True)
            magnitude = np.where(magnitude > 0, magnitude, np.where(fallback > 0, fallback, 1.0))
            E *= (1.0 / magnitude)[:, None, :]
            np.square(E, out=E)
            scores = np.mean(E, axis=-1)
        elif criterion == "smape":
            predicted = Y[:, None, :] - E
            denominator = np.abs(Y)[:, None, :] + np.abs(predicted)
            np.abs(E, out=E)
            ratio = np.where(denominator > 0, 2.0 * E / denominator, 0.0)
            scores = np.mean(ratio, axis=-1)
        elif criterion in ("press", "rss"):
            energy = np.mean(Y * Y, axis=1)
            energy = np.where(energy > 0, energy, 1.0)
            np.square(E, out=E)
            scores = np.mean(E, axis=-1) / energy[:, None]
        else:
            raise ValueError(f"unknown criterion {criterion!r}: expected one of {', '.join(CRITERIA)}")
    return np.where(np.isfinite(scores), scores, np.inf)


def _shared_chunks(Y: np.ndarray, f: Factorization, criterion: str):
    """Yield (start, scores of Y[start:start+chunk]) under every hypothesis of ``f``."""
    M = residual_operators(f) if criterion == "rss" else loo_operators(f)
    n_hyp, n_points = M.shape[0], M.shape[1]
    # E[s, h, q] = sum_p M[h, q, p] Y[s, p]  ->  one GEMM with M laid out (p, h*q)
    operator = np.ascontiguousarray(M.transpose(2, 0, 1).reshape(n_points, n_hyp * n_points))
    operator[~np.isfinite(operator)] = 0.0
    invalid = ~f.valid
    chunk = max(1, CHUNK_ELEMENTS // max(1, n_hyp * n_points))
    for start in range(0, Y.shape[0], chunk):
        y = Y[start : start + chunk]
        E = (y @ operator).reshape(y.shape[0], n_hyp, n_points)
        scores = score_residuals(E, y, criterion)
        scores[:, invalid] = np.inf
        yield start, scores


def score_shared(Y: np.ndarray, f: Factorization, criterion: str) -> np.ndarray:
    """Score every series under every hypothesis of a shared stack of designs.

    All series are measured at the same points, so each hypothesis' residual
    operator is applied to every series with one matrix product.

    Parameters
    ----------
    Y : ndarray, shape (n_series, n_points)
    f : Factorization with Q of shape (n_hypotheses, n_points, n_coef)

    Returns
    -------
    ndarray, shape (n_series, n_hypotheses)
    """
    result = np.empty((Y.shape[0], f.Q.shape[0]))
    for start, scores in _shared_chunks(Y, f, criterion):
        result[start : start + scores.shape[0]] = scores
    return result


def best_shared(Y: np.ndarray, f: Factorization, criterion: str) -> tuple[np.ndarray, np.ndarray]:
    """The best hypothesis of a shared stack for each series, without keeping every score.

    Hypotheses are processed in slices, so the residual operators of a large
    stack never have to exist all at once.

    Returns
    -------
    index : ndarray of int, shape (n_series,)
    score : ndarray, shape (n_series,)
        inf when no hypothesis is valid.
    """
    n_hyp, n_points = f.Q.shape[0], f.Q.shape[1]
    index = np.zeros(Y.shape[0], dtype=np.int64)
    best = np.full(Y.shape[0], np.inf)
    step = max(1, CHUNK_ELEMENTS // (n_points * n_points))
    for first in range(0, n_hyp, step):
        part = _slice(f, slice(first, first + step))
        for start, scores in _shared_chunks(Y, part, criterion):
            stop = start + scores.shape[0]
            local = np.argmin(scores, axis=1)
            value = scores[np.arange(scores.shape[0]), local]
            better = value < best[start:stop]
            index[start:stop] = np.where(better, local + first, index[start:stop])
            best[start:stop] = np.where(better, value, best[start:stop])
    return index, best


def _slice(f: Factorization, which) -> Factorization:
    return Factorization(f.Q[which], f.R[which], f.scale[which], f.leverage[which], f.valid[which])


def take(f: Factorization, index: np.ndarray) -> Factorization:
    """The factorisations ``index`` (an int array over the leading axis) of a stack."""
    return _slice(f, index)


def score_individual(Y: np.ndarray, f: Factorization, criterion: str) -> np.ndarray:
    """Score series that each have their own stack of designs.

    Parameters
    ----------
    Y : ndarray, shape (n_series, n_points)
    f : Factorization with Q of shape (n_series, n_hypotheses, n_points, n_coef)

    Returns
    -------
    ndarray, shape (n_series, n_hypotheses)
    """
    coefficients = np.einsum("shpk,sp->shk", f.Q, Y)
    fitted = np.einsum("shpk,shk->shp", f.Q, coefficients)
    E = Y[:, None, :] - fitted
    if criterion != "rss":
        with np.errstate(divide="ignore", invalid="ignore"):
            E /= 1.0 - f.leverage
    scores = score_residuals(E, Y, criterion)
    scores[~f.valid] = np.inf
    return scores


def solve(f: Factorization, Y: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of each series under its own design.

    Parameters
    ----------
    f : Factorization with Q of shape (n_series, n_points, n_coef)
    Y : ndarray, shape (n_series, n_points)

    Returns
    -------
    ndarray, shape (n_series, n_coef)
        In the units of the original (unscaled) design columns.
    """
    if f.Q.shape[-1] == 0:
        return np.zeros(Y.shape[:1] + (0,))
    projected = np.einsum("spk,sp->sk", f.Q, Y)
    R = f.R.copy()
    # A singular R (only for invalid designs) must not stop the others.
    singular = np.abs(np.diagonal(R, axis1=-2, axis2=-1)) < 1e-300
    R[singular.any(axis=-1)] = np.eye(R.shape[-1])
    coefficients = np.linalg.solve(R, projected[..., None])[..., 0]
    return coefficients / f.scale


def select_by_terms(best: np.ndarray, criterion: str, improvement: float) -> np.ndarray:
    """Choose how many terms each series' model gets.

    A hypothesis with more terms replaces the current choice only if it is
    clearly better: its score is below ``(1 - improvement)`` times the
    current one, and the current one is not already an exact fit.

    Parameters
    ----------
    best : ndarray, shape (n_series, max_terms + 1)
        The best score among hypotheses of 0, 1, 2, ... terms (inf if none).
    criterion : str
    improvement : float in [0, 1)

    Returns
    -------
    ndarray of int, shape (n_series,)

    Examples
    --------
    >>> select_by_terms(np.array([[1.0, 0.9, 0.1], [1.0, 0.3, 0.2]]), "relative", 0.5).tolist()
    [2, 1]
    """
    exact = EXACT[criterion]
    chosen = np.zeros(best.shape[0], dtype=np.int64)
    current = best[:, 0].copy()
    for k in range(1, best.shape[1]):
        candidate = best[:, k]
        take = np.isfinite(candidate) & (current > exact) & (candidate < (1.0 - improvement) * current)
        take |= ~np.isfinite(current) & np.isfinite(candidate)
        chosen = np.where(take, k, chosen)
        current = np.where(take, candidate, current)
    return chosen
