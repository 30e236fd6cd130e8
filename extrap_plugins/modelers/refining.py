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

from .base import Config, PMNFModeler
from .search import SingleFit
from .slices import COARSE, LOG_RANGE, POLY_RANGE, STEP, refine, refined_blocks

__all__ = ["COARSE", "LOG_RANGE", "POLY_RANGE", "STEP", "RefiningModeler", "refined_blocks"]


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
        return refine(x, Y, noise, blocks, usable, config.criterion, config.improvement, config.max_terms,
                      own_residuals=config.interior)
