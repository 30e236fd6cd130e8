"""A re-implementation of Extra-P's Gaussian-process point selection (the GPR strategy), for comparison.

From the paper ("Cost-effective empirical performance modeling", Ritter et al.) and the description and
evaluation scripts of github extra-p/extrap-gpr; our own code, with numpy and scipy only:

* base design: per parameter the cheapest line of five values (the other parameters fixed at the values
  whose line is cheapest), one repetition per point;
* a Gaussian process over the measured values (the mean per point): a Matérn kernel (ν = 3/2) times an
  amplitude, plus white noise; coordinates normalised to ``100 · x / max(x)``; the amplitude, length scale
  and noise level fitted by maximising the marginal likelihood (bounds 1e-5 … 1e5, several starts, as
  scikit-learn's ``n_restarts_optimizer``);
* the next measurement (one repetition of a point, a point may be repeated while repetitions are left) is
  the one that minimises ``cost(t)² · m(t) / var(t)²``, with ``var(t)`` the GP's predictive variance and
  ``m(t) = 2^((r - 1) / 2) - tanh(noise% / 4 - 2.5)`` for the ``r``-th repetition (the repository's cost
  multiplier), among the measurements that still fit the budget;
* no stopping rule: measurements are added until none fits the budget.

Deviations, on purpose: the values are divided by their largest absolute value before the fit (the GP's
bounds then suit every kernel whatever its unit), and the GP is refitted on all measured points after each
addition (the repository's helper refits on the newest point alone, which looks like an accident).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize

BOUNDS = (math.log(1e-5), math.log(1e5))


def matern32(A: np.ndarray, B: np.ndarray, length: float) -> np.ndarray:
    r = np.sqrt(np.maximum(((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2), 0.0)) / length
    s = math.sqrt(3.0) * r
    return (1.0 + s) * np.exp(-s)


class GaussianProcess:
    """GP regression with amplitude · Matérn(3/2) + white noise; ``fit`` then ``variance``."""

    def __init__(self, noise: float, restarts: int = 4, seed: int = 0):
        self.noise0 = min(max(noise, 1e-5), 1e5)
        self.restarts = restarts
        self.rng = np.random.default_rng(seed)

    def _nll(self, theta, X, y):
        amplitude, length, noise = np.exp(theta)
        K = amplitude * matern32(X, X, length) + (noise + 1e-10) * np.eye(X.shape[0])
        try:
            L = np.linalg.cholesky(K)
        except np.linalg.LinAlgError:
            return 1e25
        alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
        return float(0.5 * y @ alpha + np.log(np.diag(L)).sum() + 0.5 * len(y) * math.log(2 * math.pi))

    def fit(self, X: np.ndarray, y: np.ndarray) -> GaussianProcess:
        self.X = np.asarray(X, float)
        y = np.asarray(y, float)
        starts = [np.log([1.0, 1.0, self.noise0])]
        starts += [self.rng.uniform(*BOUNDS, 3) for _ in range(self.restarts)]
        best = None
        for start in starts:
            result = minimize(self._nll, start, args=(self.X, y), method="L-BFGS-B", bounds=[BOUNDS] * 3)
            if best is None or result.fun < best.fun:
                best = result
        self.amplitude, self.length, self.noise = np.exp(best.x)
        K = self.amplitude * matern32(self.X, self.X, self.length) + (self.noise + 1e-10) * np.eye(len(y))
        self.L = np.linalg.cholesky(K)
        return self

    def variance(self, T: np.ndarray) -> np.ndarray:
        """Predictive variance (with the white noise, as scikit-learn's ``return_cov``) at points ``T``."""
        k = self.amplitude * matern32(np.asarray(T, float), self.X, self.length)
        v = np.linalg.solve(self.L, k.T)
        return np.maximum(self.amplitude + self.noise - np.sum(v * v, axis=0), 1e-300)


def base_lines(points: np.ndarray, cost: np.ndarray, line: int = 5) -> list[int]:
    """Per parameter the cheapest line of ``line`` values (the others fixed), as the GPR scripts choose it."""
    chosen: list[int] = []
    m = points.shape[1]
    for axis in range(m):
        others = [a for a in range(m) if a != axis]
        lines: dict[tuple, list[int]] = {}
        for i, p in enumerate(points):
            lines.setdefault(tuple(p[others]), []).append(i)
        wanted = min(line, len(np.unique(points[:, axis])))  # fewer values measured: the whole line
        full = {key: idx for key, idx in lines.items() if len(idx) >= wanted}
        if not full:
            continue
        key = min(full, key=lambda k: float(np.sum(cost[full[k]])))
        for i in full[key]:
            if i not in chosen:
                chosen.append(i)
    return chosen


def cost_multiplier(repetition: int, noise_percent: float) -> float:
    return 2 ** (0.5 * repetition - 0.5) - math.tanh(0.25 * noise_percent - 2.5)


def select(points: np.ndarray, counts: np.ndarray, means: np.ndarray, run_cost: np.ndarray,
           available: np.ndarray, limit: float, noise_percent: float, gp: GaussianProcess) -> int | None:
    """The next measurement: index of a point, or None when nothing fits ``limit``.

    ``counts`` measured repetitions per point, ``means`` their mean (NaN where unmeasured), ``run_cost``
    the cost of the next repetition at each point, ``available`` repetitions left per point.
    """
    fits = (available > 0) & (run_cost <= limit + 1e-12)
    if not fits.any():
        return None
    scale = 100.0 / np.max(points, axis=0)
    measured = counts > 0
    y = means[measured]
    top = np.max(np.abs(y)) if y.size and np.max(np.abs(y)) > 0 else 1.0
    gp.fit(points[measured] * scale, y / top)
    variance = gp.variance(points * scale)
    multiplier = np.array([cost_multiplier(int(c) + 1, noise_percent) for c in counts])
    with np.errstate(all="ignore"):
        rated = run_cost**2 * multiplier / variance**2
    rated = np.where(fits, rated, np.inf)
    return int(np.argmin(rated))


def mean_noise_percent(values: np.ndarray) -> float:
    """The repository's noise estimate: mean over points of the mean absolute deviation from the mean, in %."""
    out = []
    for row in values:
        row = row[np.isfinite(row)]
        if row.size == 0:
            continue
        mean = row.mean()
        out.append(0.0 if mean == 0 else float(np.mean(np.abs(row / (mean / 100) - 100))))
    return float(np.mean(out)) if out else 0.0
