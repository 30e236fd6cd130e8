"""Quality figures of fitted models, for many series at once."""

from __future__ import annotations

import numpy as np


def quality_figures(Y: np.ndarray, Y_hat: np.ndarray, n_terms) -> dict[str, np.ndarray]:
    """RSS, adjusted R², SMAPE and relative error of each series' fit.

    Parameters
    ----------
    Y : ndarray, shape (n_series, n_points)
        The measured values (one per point, repetitions already reduced).
    Y_hat : ndarray, shape (n_series, n_points)
        The model's predictions at the same points.
    n_terms : int or ndarray of shape (n_series,)
        Number of terms besides the constant (the model's degrees of freedom
        used for adjusting R²).

    Returns
    -------
    dict with keys ``rss``, ``ar2``, ``smape``, ``re``; each ndarray, shape (n_series,).
    SMAPE and relative error are percentages.

    Examples
    --------
    >>> q = quality_figures(np.array([[1., 2., 3.]]), np.array([[1., 2., 3.]]), 1)
    >>> float(q["rss"][0]), float(q["ar2"][0])
    (0.0, 1.0)
    """
    Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
    Y_hat = np.atleast_2d(np.asarray(Y_hat, dtype=np.float64))
    n_points = Y.shape[1]
    residual = Y - Y_hat
    rss = np.sum(residual**2, axis=1)
    tss = np.sum((Y - Y.mean(axis=1, keepdims=True)) ** 2, axis=1)
    n_terms = np.broadcast_to(np.asarray(n_terms, dtype=np.float64), rss.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(tss > 0, 1.0 - rss / tss, np.where(rss <= 1e-30, 1.0, 0.0))
        dof = n_points - n_terms - 1
        ar2 = np.where(dof > 0, 1.0 - (1.0 - r2) * (n_points - 1) / dof, r2)
        denominator = np.abs(Y) + np.abs(Y_hat)
        smape_terms = np.where(denominator > 0, 2.0 * np.abs(residual) / denominator, 0.0)
        smape = 100.0 * smape_terms.mean(axis=1)
        re_terms = np.where(Y != 0, np.abs(residual) / np.abs(Y), np.where(residual == 0, 0.0, np.inf))
        re = 100.0 * re_terms.mean(axis=1)
    return {"rss": rss, "ar2": ar2, "smape": smape, "re": re}
