"""The ``refining`` modeler: the search space configured from the data (seed 004, Extra-P's RefiningModeler).

Extra-P's I x J (20 polynomial times 3 logarithm exponents) misses functions
such as ``p^1.3`` or ``log2(p)^1.5``; seed 004 ("automatic configuration of
the search space") searches the exponents on continuous *slices* instead:

* ``x^a log2(x)^b`` for ``b`` = 0, 1, 2 with ``a`` refined (``a`` from -3 to 5:
  falling factors of strong scaling included);
* ``log2(x)^b`` (``a`` = 0) with ``b`` refined (from -3 to 3).

Extra-P refines each slice sequentially by mediants of fractions around the
best exponent, one series at a time.  Here the slices are laid out at the
resolution that refinement reaches (steps of :data:`STEP`) and every point of
every slice is fitted to every series at once -- one QR per exponent shared
by the whole group, the same batched machinery as ``default``
(:func:`~extrap_plugins.modelers.search.evidence_search`) -- so the answer
is the refinement's limit without its sequential steps, and a hypothesis is
chosen by the same evidence criterion (:mod:`~extrap_plugins.modelers.evidence`):
the consensus of the exponents the data cannot tell apart, not the single
best fit.  Models have one term (as Extra-P's refining modeler) plus the
constant, which may be zero; several parameters are combined by the
hierarchical search of ``default``.
"""

from __future__ import annotations

import functools

import numpy as np

from .base import Config, PMNFModeler
from .search import SingleFit, evidence_search

from . import regression

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
    """One-term PMNF models with exponents refined on continuous slices (seed 004).

    Options are those of :class:`~extrap_plugins.modelers.base.PMNFModeler`;
    ``exponents``, ``log_exponents`` and ``negative_exponents`` are replaced
    by the slices, ``max_terms`` is 1 for single-parameter models.
    """

    name = "refining"

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
        fit = evidence_search(x, Y, blocks, usable & coarse, 1, noise)
        # Second pass: the neighbourhood of each first choice on its slice, all series with that choice at once.
        chosen = np.where(fit.n_terms > 0, fit.blocks[:, 0], -1)
        for block in np.unique(chosen[chosen >= 0]):
            members = np.flatnonzero(chosen == block)
            ca, cb = blocks[block]
            near = np.zeros(blocks.shape[0], dtype=bool)
            if cb == np.round(cb) and cb >= 0:  # a refined at this b
                near |= (b == cb) & (np.abs(a - ca) <= COARSE + 1e-9)
            if ca == 0:  # b refined at a = 0
                near |= (a == 0) & (np.abs(b - cb) <= COARSE + 1e-9)
            part = None if noise is None else regression.Noise(noise.variance[members], noise.dof[members])
            local = evidence_search(x, Y[members], blocks, usable & near, 1, part)
            # The spread stays the first pass's: it is about the choice among all slices.
            for name in ("blocks", "coefficients", "n_terms", "score", "runner_up", "mixed"):
                getattr(fit, name)[members] = getattr(local, name)
        if config.max_terms > 1:  # keep the SingleFit layout of max_terms slots
            pad = config.max_terms - 1
            fit.blocks = np.concatenate([fit.blocks, np.full((fit.blocks.shape[0], pad), -1)], axis=1)
            fit.coefficients = np.concatenate([fit.coefficients, np.zeros((fit.blocks.shape[0], pad))], axis=1)
        return fit
