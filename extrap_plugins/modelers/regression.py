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

import functools
import warnings
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

NOISE_QUANTILE = 0.999
"""A fit is 'explained by noise' unless its residuals exceed this quantile of their noise-only distribution."""

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
    solvable: np.ndarray | None = None  # full rank and finite (leave-one-out may still be undefined)


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
    return Factorization(Q, R, scale, leverage, valid, finite & full_rank)


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


def _shared_chunks(
    Y: np.ndarray,
    f: Factorization,
    criterion: str,
    noise: Noise | None = None,
    positive_terms: bool = False,
):
    """Yield (start, scores, explained) for slices of ``Y`` under every hypothesis of ``f``.

    One GEMM gives the training residuals of every series under every
    hypothesis; dividing by ``1 - h`` turns them into leave-one-out residuals.
    ``explained`` (or None without ``noise``) flags fits within noise.
    With ``positive_terms``, a hypothesis of two or more terms that gives
    any term a negative coefficient for a series whose values are all
    positive is implausible and scores inf: such fits cancel near-collinear
    terms and extrapolate wildly.
    """
    n_hyp, n_points, n_coef = f.Q.shape
    M = residual_operators(f)
    # T[s, h, q] = sum_p M[h, q, p] Y[s, p]  ->  one GEMM with M laid out (p, h*q)
    operator = np.ascontiguousarray(M.transpose(2, 0, 1).reshape(n_points, n_hyp * n_points))
    operator[~np.isfinite(operator)] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        inverse_gap = np.where(f.valid[:, None], 1.0 / (1.0 - f.leverage), np.nan)
    invalid = ~f.valid
    positive_terms = positive_terms and n_coef >= 3
    if positive_terms:
        R = np.where(f.valid[:, None, None], f.R, np.eye(n_coef))
        # rows of the term coefficients: coefficient_t = sum_j inverse[t, j, h] (Q^T y)[j, h]
        inverse = np.ascontiguousarray(np.linalg.inv(R)[:, 1:, :].transpose(1, 2, 0))  # (n_coef - 1, n_coef, n_hyp)
        basis = np.ascontiguousarray(f.Q.transpose(1, 2, 0).reshape(n_points, n_coef * n_hyp))
    keep = 1.0 - np.where(f.valid[:, None], f.leverage, 0.0)  # (n_hyp, n_points)
    ones = np.ones(n_points)
    gap_squared = np.where(f.valid[:, None], inverse_gap, 0.0) ** 2
    chunk = max(1, CHUNK_ELEMENTS // max(1, n_hyp * n_points))
    for start in range(0, Y.shape[0], chunk):
        y = Y[start : start + chunk]
        T = (y @ operator).reshape(y.shape[0], n_hyp, n_points)
        if criterion == "relative":
            # Fast path: squares once; every sum over points is a matrix product.
            np.square(T, out=T)
            rss = np.matmul(T, ones)  # sums over the points, as a matrix-vector product
            T *= gap_squared[None]
            magnitude = np.abs(y)
            fallback = np.mean(magnitude, axis=1, keepdims=True)
            magnitude = np.where(magnitude > 0, magnitude, np.where(fallback > 0, fallback, 1.0))
            inverse_square = 1.0 / (magnitude * magnitude * n_points)
            scores = np.matmul(T, inverse_square[:, :, None])[:, :, 0]
            scores = np.where(np.isfinite(scores), scores, np.inf)
        else:
            rss = np.einsum("shp,shp->sh", T, T)
            if criterion != "rss":
                T *= inverse_gap[None]
            scores = score_residuals(T, y, criterion)
        scores[:, invalid] = np.inf
        explained = None
        if noise is not None:
            part = Noise(noise.variance[start : start + chunk], noise.dof[start : start + chunk])
            explained = explained_from_rss(y, rss, keep, part)
            explained[:, invalid] = False
        if positive_terms:
            positive = np.all(y > 0, axis=1)
            if positive.any():
                projected = (y[positive] @ basis).reshape(-1, n_coef, n_hyp)
                implausible = np.zeros((projected.shape[0], n_hyp), dtype=bool)
                for row in inverse:
                    coefficient = projected[:, 0, :] * row[0]
                    for j in range(1, n_coef):
                        coefficient += projected[:, j, :] * row[j]
                    implausible |= coefficient < 0
                scores[positive] = np.where(implausible, np.inf, scores[positive])
                if explained is not None:
                    explained[positive] &= ~implausible
        yield start, scores, explained


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
    for start, scores, _ in _shared_chunks(Y, f, criterion):
        result[start : start + scores.shape[0]] = scores
    return result


def prefer_explained(
    scores: np.ndarray, explained: np.ndarray | None, complexity: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The best hypothesis per series, among those explained by noise when there are any.

    Among explained hypotheses the least complex win (Occam's razor: the
    data cannot tell them apart), then the lowest score.

    Parameters
    ----------
    scores : ndarray, shape (n_series, n_hypotheses)
    explained : ndarray of bool, same shape, or None
    complexity : ndarray of int, shape (n_hypotheses,) or (n_series, n_hypotheses), optional

    Returns
    -------
    index, score : ndarray, shape (n_series,)
    any_explained : ndarray of bool, shape (n_series,)
    """
    rows = np.arange(scores.shape[0])
    if explained is None:
        index = np.argmin(scores, axis=1)
        return index, scores[rows, index], np.zeros(scores.shape[0], dtype=bool)
    allowed = explained
    if complexity is not None:
        ranks = np.broadcast_to(complexity, scores.shape)
        simplest = np.min(np.where(explained, ranks, np.iinfo(np.int64).max), axis=1, keepdims=True)
        allowed = explained & (ranks == simplest)
    masked = np.where(allowed, scores, np.inf)
    any_explained = explained.any(axis=1)
    index = np.where(any_explained, np.argmin(masked, axis=1), np.argmin(scores, axis=1))
    return index, scores[rows, index], any_explained


def best_shared(
    Y: np.ndarray,
    f: Factorization,
    criterion: str,
    noise: Noise | None = None,
    complexity: np.ndarray | None = None,
    positive_terms: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The best hypothesis of a shared stack for each series, without keeping every score.

    Hypotheses are processed in slices, so the residual operators of a large
    stack never have to exist all at once.  With ``noise``, hypotheses whose
    fit is explained by noise are preferred (see :func:`prefer_explained`).

    Returns
    -------
    index : ndarray of int, shape (n_series,)
    score : ndarray, shape (n_series,)
        inf when no hypothesis is valid.
    explained : ndarray of bool, shape (n_series,)
        Whether the chosen hypothesis fits within noise.
    """
    n_hyp, n_points = f.Q.shape[0], f.Q.shape[1]
    if complexity is None:
        complexity = np.zeros(n_hyp, dtype=np.int64)
    index = np.zeros(Y.shape[0], dtype=np.int64)
    best = np.full(Y.shape[0], np.inf)
    explained = np.zeros(Y.shape[0], dtype=bool)
    rank = np.full(Y.shape[0], np.iinfo(np.int64).max)
    step = max(1, CHUNK_ELEMENTS // (n_points * n_points))
    for first in range(0, n_hyp, step):
        part = _slice(f, slice(first, first + step))
        part_complexity = complexity[first : first + step]
        for start, scores, flags in _shared_chunks(Y, part, criterion, noise, positive_terms):
            stop = start + scores.shape[0]
            local, value, local_explained = prefer_explained(scores, flags, part_complexity)
            local_rank = np.where(local_explained, part_complexity[local], np.iinfo(np.int64).max)
            # explained beats unexplained, then lower complexity, then the lower score
            old_explained, old_rank = explained[start:stop], rank[start:stop]
            better = (local_explained & ~old_explained) | (
                (local_explained == old_explained)
                & ((local_rank < old_rank) | ((local_rank == old_rank) & (value < best[start:stop])))
            )
            index[start:stop] = np.where(better, local + first, index[start:stop])
            best[start:stop] = np.where(better, value, best[start:stop])
            explained[start:stop] = np.where(better, local_explained, old_explained)
            rank[start:stop] = np.where(better, local_rank, old_rank)
    return index, best, explained


def _slice(f: Factorization, which) -> Factorization:
    solvable = None if f.solvable is None else f.solvable[which]
    return Factorization(f.Q[which], f.R[which], f.scale[which], f.leverage[which], f.valid[which], solvable)


def take(f: Factorization, index: np.ndarray) -> Factorization:
    """The factorisations ``index`` (an int array over the leading axis) of a stack."""
    return _slice(f, index)


def score_individual(Y: np.ndarray, f: Factorization, criterion: str, noise: Noise | None = None):
    """Score series that each have their own stack of designs.

    Parameters
    ----------
    Y : ndarray, shape (n_series, n_points)
    f : Factorization with Q of shape (n_series, n_hypotheses, n_points, n_coef)
    noise : Noise, optional

    Returns
    -------
    scores : ndarray, shape (n_series, n_hypotheses)
    explained : ndarray of bool, shape (n_series, n_hypotheses), or None without ``noise``
    """
    coefficients = np.einsum("shpk,sp->shk", f.Q, Y)
    E = Y[:, None, :] - np.einsum("shpk,shk->shp", f.Q, coefficients)
    explained = None
    if noise is not None:
        explained = explained_by_noise(Y, E, f.leverage, noise) & f.valid
    if criterion != "rss":
        with np.errstate(divide="ignore", invalid="ignore"):
            E /= 1.0 - f.leverage
    scores = score_residuals(E, Y, criterion)
    scores[~f.valid] = np.inf
    return scores, explained


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


@dataclass
class Noise:
    """How noisy each series is, from its repetitions.

    Attributes
    ----------
    variance : ndarray, shape (n_series,)
        Pooled relative variance of the fitted values: the mean over points of
        ``var(mean of repetitions) / value^2``; NaN where unknown.
    dof : ndarray, shape (n_series,)
        Degrees of freedom of that estimate (repetitions minus one, summed); also where the repetitions agree
        exactly (variance NaN): the data are exact.
    points : ndarray, shape (n_series, n_points), optional
        The relative variance of each point's value (NaN where unknown).
    """

    variance: np.ndarray
    dof: np.ndarray
    points: np.ndarray | None = None

    def take(self, rows: np.ndarray) -> Noise:
        """The noise of the series ``rows`` (an index or mask), per-point variances included."""
        return Noise(self.variance[rows], self.dof[rows], None if self.points is None else self.points[rows])

    @classmethod
    def estimate(cls, Y: np.ndarray, V: np.ndarray | None, counts: np.ndarray | None) -> Noise:
        """Pool the per-point variances ``V`` (n_series, n_points) of values ``Y``.

        ``counts`` (n_series, n_points) are the repetitions behind each value.
        """
        n_series = Y.shape[0]
        if V is None or counts is None:
            return cls(np.full(n_series, np.nan), np.zeros(n_series))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            relative = np.where((Y != 0) & np.isfinite(V), V / (Y * Y), np.nan)
            variance = np.nanmean(relative, axis=1)
        dof = np.sum(np.where(np.isfinite(relative), np.maximum(counts - 1, 0), 0), axis=1).astype(float)
        known = np.isfinite(variance) & (variance > 1e-24) & (dof > 0)
        # Repetitions that agree exactly keep their degrees of freedom (the variance stays unknown): the data are
        # exact, not of unknown noise (:data:`~extrap_plugins.modelers.evidence.EXACT`).
        exact = np.isfinite(variance) & (variance <= 1e-24) & (dof > 0)
        return cls(np.where(known, variance, np.nan), np.where(known | exact, dof, 0.0), relative)


def explained_by_noise(
    Y: np.ndarray, residuals: np.ndarray, leverage: np.ndarray, noise: Noise, quantile: float = NOISE_QUANTILE
) -> np.ndarray:
    """Whether least-squares fits leave residuals no larger than measurement noise.

    With noise variances ``sigma_i^2`` (the pooled relative variance times
    ``y_i^2``), a correct hypothesis leaves an expected residual sum of squares
    ``sum_i sigma_i^2 (1 - h_ii)``.  The ratio of the actual RSS to that
    expectation is tested against the ``quantile`` of F(nu, noise dof), with
    ``nu`` the Satterthwaite degrees of freedom of the weighted sum.

    Parameters
    ----------
    Y : ndarray, shape (n_series, n_points)
    residuals : ndarray, shape (n_series, n_points) or (n_series, n_hypotheses, n_points)
        Training residuals.
    leverage : ndarray, broadcastable to ``residuals``
        Diagonal of each fit's hat matrix.
    noise : Noise

    Returns
    -------
    ndarray of bool, shape ``residuals.shape[:-1]``
        False where the noise is unknown or no degree of freedom is left.
    """
    three = residuals.ndim == 3
    known = np.isfinite(noise.variance) & (noise.dof > 0)
    if not known.any():
        return np.zeros(residuals.shape[:-1], dtype=bool)
    variance = noise.variance[:, None] * Y * Y
    if three:
        variance = variance[:, None, :]
    with np.errstate(all="ignore"):
        weight = variance * np.maximum(1.0 - leverage, 0.0)
        expected = np.sum(weight, axis=-1)
        nu = expected * expected / np.sum(weight * weight, axis=-1)
        statistic = np.sum(residuals * residuals, axis=-1) / expected
    limit = _f_quantile(quantile, nu, noise.dof)
    if three:
        known = known[:, None]
    return known & np.isfinite(statistic) & (expected > 0) & (statistic <= limit)


def explained_from_rss(Y: np.ndarray, rss: np.ndarray, keep: np.ndarray, noise: Noise,
                       quantile: float = NOISE_QUANTILE) -> np.ndarray:
    """:func:`explained_by_noise` for a shared stack, from residual sums of squares.

    Parameters
    ----------
    Y : ndarray, shape (n_series, n_points)
    rss : ndarray, shape (n_series, n_hypotheses)
    keep : ndarray, shape (n_hypotheses, n_points)
        ``1 - leverage`` of each hypothesis (0 for invalid ones).
    noise : Noise

    Returns
    -------
    ndarray of bool, shape (n_series, n_hypotheses)
    """
    known = np.isfinite(noise.variance) & (noise.dof > 0)
    if not known.any():
        return np.zeros(rss.shape, dtype=bool)
    square = Y * Y
    with np.errstate(all="ignore"):
        # sum_p sigma_p^2 (1 - h_p) and sum_p (sigma_p^2 (1 - h_p))^2, with sigma_p^2 = variance * y_p^2
        first = square @ keep.T
        second = (square * square) @ (keep * keep).T
        nu = first * first / second
        expected = first * noise.variance[:, None]
        statistic = rss / expected
    limit = _f_quantile(quantile, nu, noise.dof)
    return known[:, None] & np.isfinite(statistic) & (expected > 0) & (statistic <= limit)


@functools.lru_cache(maxsize=64)
def _f_table(quantile: float, dof: float, top: int) -> np.ndarray:
    """F quantiles for numerator dof 1, 1.05, ..., ``top`` (step 1/20)."""
    from scipy.special import fdtri  # the F quantile; lighter to import than scipy.stats

    grid = 1.0 + np.arange(20 * (top - 1) + 1) / 20.0
    return fdtri(grid, dof, quantile)


def _f_quantile(quantile: float, nu: np.ndarray, dof: np.ndarray) -> np.ndarray:
    """``scipy.stats.f.ppf(quantile, nu, dof)`` for many ``nu``, from a table in steps of 1/20.

    Parameters
    ----------
    nu : ndarray, shape (n_series,) or (n_series, n_hypotheses)
    dof : ndarray, shape (n_series,)
        Denominator degrees of freedom, one per series (row).
    """
    result = np.full(nu.shape, np.nan)
    rows = dof > 0
    finite = np.isfinite(nu)
    if not (rows.any() and finite.any()):
        return result
    top = int(np.ceil(max(2.0, float(np.max(nu, where=finite, initial=2.0)))))
    position = np.rint((np.clip(np.where(finite, nu, 1.0), 1.0, top) - 1.0) * 20.0).astype(np.int64)
    for d in np.unique(dof[rows]):
        which = dof == d
        result[which] = _f_table(float(quantile), float(d), top)[position[which]]
    return np.where(finite, result, np.nan)


def shared_residuals(f: Factorization, index: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Training residuals of each series under hypothesis ``index[s]`` of a shared stack.

    Returns
    -------
    ndarray, shape (n_series, n_points)
    """
    Q = f.Q[index]
    return Y - np.einsum("spk,sk->sp", Q, np.einsum("spk,sp->sk", Q, Y))


def select_by_terms(
    best: np.ndarray,
    criterion: str,
    improvement: float,
    explained: np.ndarray | None = None,
) -> np.ndarray:
    """Choose how many terms each series' model gets.

    Where ``explained`` says some number of terms fits within measurement
    noise, the fewest such terms win: noise is not modeled.  Otherwise a
    hypothesis with more terms replaces the current choice only if it is
    clearly better: its score is below ``(1 - improvement)`` times the
    current one, and the current one is not already an exact fit.

    Parameters
    ----------
    best : ndarray, shape (n_series, max_terms + 1)
        The best score among hypotheses of 0, 1, 2, ... terms (inf if none).
    criterion : str
    improvement : float in [0, 1)
    explained : ndarray of bool, shape (n_series, max_terms + 1), optional
        Whether the best hypothesis of each size fits within noise
        (:func:`explained_by_noise`).

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
    if explained is None:
        return chosen
    explained = explained & np.isfinite(best)
    return np.where(explained.any(axis=1), np.argmax(explained, axis=1), chosen)
