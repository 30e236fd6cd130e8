"""The continuous exponent slices of the ``refining`` modeler and their search (Wolf's Extra-P slides).

Kept apart from :mod:`~extrap_plugins.modelers.refining` so that the default modeler can use the
refined fit as a second opinion (:meth:`~extrap_plugins.modelers.base.PMNFModeler._second_opinion`)
without importing the modeler classes in a cycle.
"""

from __future__ import annotations

import functools

import numpy as np

from .search import SingleFit, evidence_or_cv, evidence_search

COARSE = 1.0 / 12.0
"""First pass: every slice at this resolution."""

STEP = 1.0 / 240.0
"""Second pass: around each series' first choice (within one coarse step), at this resolution."""

POLY_RANGE = (-3.0, 5.0)
LOG_RANGE = (-3.0, 3.0)


@functools.lru_cache(maxsize=4)
def refined_blocks(step: float = STEP) -> np.ndarray:
    """The slices as building blocks ``(a, b)``, shape (n_blocks, 2), sorted.

    >>> blocks = refined_blocks(0.5)
    >>> [tuple(b) for b in blocks[:3].tolist()]
    [(-3.0, 0.0), (-3.0, 1.0), (-3.0, 2.0)]
    """
    poly = np.round(np.arange(POLY_RANGE[0], POLY_RANGE[1] + step / 2, step) / step) * step
    logs = np.round(np.arange(LOG_RANGE[0], LOG_RANGE[1] + step / 2, step) / step) * step
    pairs = {(float(a), float(b)) for a in poly for b in (0.0, 1.0, 2.0)}
    pairs |= {(0.0, float(b)) for b in logs}
    pairs.discard((0.0, 0.0))
    return np.asarray(sorted(pairs), dtype=np.float64)


def _on_grid(values: np.ndarray, step: float) -> np.ndarray:
    return np.abs(values / step - np.round(values / step)) < 1e-6


def refine(x, Y, noise, blocks, usable, criterion: str, improvement: float, max_terms: int = 1,
           own_residuals: bool = False) -> SingleFit:
    """One-term models on the continuous slices of ``blocks`` (:func:`refined_blocks`), for every series.

    The search of the ``refining`` modeler (:mod:`~extrap_plugins.modelers.refining`): every slice at
    :data:`COARSE`, then the neighbourhood of each slice's best at :data:`STEP`, judged by the evidence
    criterion.  ``max_terms`` only pads the result's layout; ``own_residuals`` as in
    :func:`~extrap_plugins.modelers.search.evidence_search`.
    """
    a, b = blocks[:, 0], blocks[:, 1]
    coarse = (_on_grid(a, COARSE) & (b == np.round(b))) | ((a == 0) & _on_grid(b, COARSE))
    slices = [(b == j) & (a != 0) for j in (0.0, 1.0, 2.0)] + [a == 0]
    fit = evidence_or_cv(x, Y, blocks, usable & coarse, 1, criterion, improvement, noise, own_residuals=own_residuals)
    settled = np.zeros(Y.shape[0], dtype=bool) if fit.fallback is None else fit.fallback
    # The best coarse exponent of every slice (as Extra-P refines every slice) ...
    best = np.full((Y.shape[0], len(slices)), -1, dtype=np.int64)
    for k, members in enumerate(slices):
        if (usable & coarse & members).any():
            part = evidence_search(x, Y, blocks, usable & coarse & members, 1, noise, own_residuals=own_residuals)
            best[:, k] = np.where(part.n_terms > 0, part.blocks[:, 0], -1)
    # ... and the neighbourhood of each, at the fine step, judged together: all series with the same
    # coarse bests at once.
    rows, group_of = np.unique(best, axis=0, return_inverse=True)
    for g, row in enumerate(rows):
        # Series that failed the misfit test keep the cross-validation rule's choice (no refinement).
        members = np.flatnonzero((group_of.reshape(-1) == g) & ~settled)
        if members.size == 0:
            continue
        near = np.zeros(blocks.shape[0], dtype=bool)
        for k, block in enumerate(row):
            if block < 0:
                continue
            ca, cb = blocks[block]
            if k < 3:
                near |= slices[k] & (np.abs(a - ca) <= COARSE + 1e-9)
            else:
                near |= slices[k] & (np.abs(b - cb) <= COARSE + 1e-9)
        if not near.any():
            continue
        part = None if noise is None else noise.take(members)
        local = evidence_search(x, Y[members], blocks, usable & near, 1, part, own_residuals=own_residuals)
        # Two sources of model-choice uncertainty, added in quadrature: which slice and coarse exponent
        # (the first pass's spread, about all slices) and where within the neighbourhood (this pass's).
        fit.spread[members] = np.hypot(fit.spread[members], local.spread)
        for name in ("blocks", "coefficients", "n_terms", "score", "runner_up", "mixed"):
            getattr(fit, name)[members] = getattr(local, name)
    if max_terms > 1:  # keep the SingleFit layout of max_terms slots
        pad = max_terms - 1
        fit.blocks = np.concatenate([fit.blocks, np.full((fit.blocks.shape[0], pad), -1)], axis=1)
        fit.coefficients = np.concatenate([fit.coefficients, np.zeros((fit.blocks.shape[0], pad))], axis=1)
    return fit
