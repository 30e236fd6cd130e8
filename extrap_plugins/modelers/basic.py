"""A plain least-squares modeler over one-term PMNF hypotheses, batched over series."""

from __future__ import annotations

import itertools

import numpy as np

from extrap_plugins.experiment import SeriesGroup
from extrap_plugins.model import Factor, Model, Quality, Term
from extrap_plugins.quality import quality_figures

EXPONENTS = (0, 0.5, 1, 1.5, 2, 3)
LOG_EXPONENTS = (0, 1, 2)


class BasicModeler:
    """``c0 + c1 * prod x^i log2(x)^j``: the hypothesis with the smallest RSS wins."""

    def fit_group(self, group: SeriesGroup, *, measure: str = "mean") -> list[Model]:
        X, Y = group.points, group.reduce(measure)
        names = tuple(p.name for p in group.parameters)
        factors = [(i, j) for i in EXPONENTS for j in LOG_EXPONENTS if (i, j) != (0, 0)]
        best_rss = np.sum((Y - Y.mean(axis=1, keepdims=True)) ** 2, axis=1)
        best = [None] * len(group)
        best_coef = np.column_stack([Y.mean(axis=1), np.zeros(len(group))])
        for combo in itertools.product(factors, repeat=len(names)):
            column = np.prod([X[:, k] ** i * np.log2(X[:, k]) ** j for k, (i, j) in enumerate(combo)], axis=0)
            A = np.column_stack([np.ones(X.shape[0]), column])
            coef, *_ = np.linalg.lstsq(A, Y.T, rcond=None)
            rss = np.sum((A @ coef - Y.T) ** 2, axis=0)
            better = rss < best_rss * (1 - 1e-9)
            best_rss = np.where(better, rss, best_rss)
            best_coef[better] = coef.T[better]
            for s in np.flatnonzero(better):
                best[s] = combo
        models = []
        for s, (callpath, metric) in enumerate(group.keys):
            terms = ()
            if best[s] is not None:
                terms = (Term(float(best_coef[s, 1]), {n: Factor(i, j) for n, (i, j) in zip(names, best[s])}),)
            model = Model(callpath.name, metric.name, names, float(best_coef[s, 0]), terms, points=X.shape[0])
            figures = quality_figures(Y[s : s + 1], model.predict(X)[None, :], len(terms))
            model.quality = Quality(**{k: float(v[0]) for k, v in figures.items()})
            models.append(model)
        return models
