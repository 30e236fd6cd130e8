"""Quality figures of fitted models, for many series at once."""

from __future__ import annotations

import numpy as np

from .formatting import format_count


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
    SMAPE and relative error are percentages.  A residual within rounding of the series'
    largest value (``1e-12`` of it) counts as zero, so an exact fit gives 0 % even where a
    measured value is 0.

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
        # A residual at rounding level is an exact fit: at a measured 0 the model's 1e-17 would
        # otherwise count as a 200 % miss (an exact fit of a series with a zero showed 50 %).
        scale = np.max(np.abs(Y), axis=1, keepdims=True)
        negligible = np.abs(residual) <= 1e-12 * scale
        smape_terms = np.where((denominator > 0) & ~negligible, 2.0 * np.abs(residual) / denominator, 0.0)
        smape = 100.0 * smape_terms.mean(axis=1)
        re_terms = np.where(negligible, 0.0, np.where(Y != 0, np.abs(residual) / np.abs(Y), np.inf))
        re = 100.0 * re_terms.mean(axis=1)
    return {"rss": rss, "ar2": ar2, "smape": smape, "re": re}


def validation_summary(errors) -> dict[str, float]:
    """Share of held-out errors within 10 % and 25 %, and their median (NaN errors are left out).

    Parameters
    ----------
    errors : sequence of float
        Relative errors (0.1 is 10 %), one per model.

    Returns
    -------
    dict with ``models`` (how many had an error), ``within_10``, ``within_25`` (fractions) and ``median``.

    Examples
    --------
    >>> validation_summary([0.05, 0.2, 0.5, float("nan")])
    {'models': 3, 'within_10': 0.3333333333333333, 'within_25': 0.6666666666666666, 'median': 0.2}
    """
    e = np.asarray([v for v in errors if v is not None], dtype=np.float64)
    e = e[np.isfinite(e)]
    if e.size == 0:
        return {"models": 0, "within_10": float("nan"), "within_25": float("nan"), "median": float("nan")}
    return {"models": int(e.size), "within_10": float(np.mean(e <= 0.10)), "within_25": float(np.mean(e <= 0.25)),
            "median": float(np.median(e))}


def validation_line(errors) -> str:
    """The summary as one line of text (what the text exporter and the CLI print)."""
    s = validation_summary(errors)
    if not s["models"]:
        return ("validation: no model could be checked (every parameter needs a value left after holding out "
                "its largest)")
    return ("validation (largest value of each parameter held out, refitted, predicted): "
            f"{format_count(s['models'], 'model')}, "
            f"{100 * s['within_10']:.1f} % within 10 %, {100 * s['within_25']:.1f} % within 25 %, "
            f"median error {100 * s['median']:.1f} %")
