"""The ``refining`` modeler: the search space configured from the data (Wolf's Extra-P slides; Extra-P's
RefiningModeler).

Extra-P's I x J (20 polynomial times 3 logarithm exponents) misses functions
such as ``p^1.3`` or ``log2(p)^1.5``; Wolf's Extra-P slides ("automatic configuration of
the search space") searches the exponents on continuous *slices* instead:

* ``x^a log2(x)^b`` for ``b`` = 0, 1, 2 with ``a`` refined (``a`` from -3 to 5:
  falling factors of strong scaling included);
* ``log2(x)^b`` (``a`` = 0) with ``b`` refined (from -3 to 3).

Extra-P refines each slice sequentially by mediants of fractions around the
best exponent, one series at a time.  Here every slice is first searched at
steps of :data:`COARSE`; then the neighbourhood (one coarse step either side)
of each slice's best exponent is searched at steps of :data:`STEP` (the
resolution that mediant refinement reaches), every candidate fitted to every
series with the same coarse bests at once -- one QR per exponent shared
by the whole group, the same batched machinery as ``default``
(:func:`~extrap_plugins.modelers.search.evidence_search`) -- so the answer
is the refinement's limit without its sequential steps, and a hypothesis is
chosen by the same evidence criterion (:mod:`~extrap_plugins.modelers.evidence`):
the consensus of the exponents the data cannot tell apart, not the single
best fit (series that fail its misfit test keep the cross-validation rule's
choice on the coarse slices, unrefined: refining a step into a fine
exponent only sharpens a wrong trend).  Models have one term (as Extra-P's refining modeler) plus the
constant, which may be zero; several parameters are combined by the
hierarchical search of ``default``.
"""

from __future__ import annotations

import functools

import numpy as np

from . import regression
from .base import Config, PMNFModeler
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


class RefiningModeler(PMNFModeler):
    """One-term PMNF models with exponents refined on continuous slices (Wolf's Extra-P slides).

    Options are those of :class:`~extrap_plugins.modelers.base.PMNFModeler`;
    ``exponents``, ``log_exponents`` and ``negative_exponents`` are replaced
    by the slices, ``max_terms`` is 1 for single-parameter models.
    """

    name = "refining"
    second_opinion = False  # its own fit is the second opinion

    def _config(self) -> Config:
        config = super()._config()
        return Config(
            blocks=refined_blocks(),
            max_terms=config.max_terms,
            criterion=config.criterion,
            improvement=config.improvement,
            weighting=config.weighting,
            measure=config.measure,
            selection="evidence",
        )

    def _single(self, x, Y, noise, blocks, usable, config: Config) -> SingleFit:
        a, b = blocks[:, 0], blocks[:, 1]
        coarse = (_on_grid(a, COARSE) & (b == np.round(b))) | ((a == 0) & _on_grid(b, COARSE))
        slices = [(b == j) & (a != 0) for j in (0.0, 1.0, 2.0)] + [a == 0]
        fit = evidence_or_cv(x, Y, blocks, usable & coarse, 1, config.criterion, config.improvement, noise)
        settled = np.zeros(Y.shape[0], dtype=bool) if fit.fallback is None else fit.fallback
        # The best coarse exponent of every slice (as Extra-P refines every slice) ...
        best = np.full((Y.shape[0], len(slices)), -1, dtype=np.int64)
        for k, members in enumerate(slices):
            if (usable & coarse & members).any():
                part = evidence_search(x, Y, blocks, usable & coarse & members, 1, noise)
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
            part = None if noise is None else regression.Noise(
                noise.variance[members], noise.dof[members], None if noise.points is None else noise.points[members])
            local = evidence_search(x, Y[members], blocks, usable & near, 1, part)
            # Two sources of model-choice uncertainty, added in quadrature: which slice and coarse exponent
            # (the first pass's spread, about all slices) and where within the neighbourhood (this pass's).
            fit.spread[members] = np.hypot(fit.spread[members], local.spread)
            for name in ("blocks", "coefficients", "n_terms", "score", "runner_up", "mixed"):
                getattr(fit, name)[members] = getattr(local, name)
        if config.max_terms > 1:  # keep the SingleFit layout of max_terms slots
            pad = config.max_terms - 1
            fit.blocks = np.concatenate([fit.blocks, np.full((fit.blocks.shape[0], pad), -1)], axis=1)
            fit.coefficients = np.concatenate([fit.coefficients, np.zeros((fit.blocks.shape[0], pad))], axis=1)
        return fit
