"""The ``golden`` modeler: Calotoiu et al.'s (2016) modified golden-section search for single parameters."""

from __future__ import annotations

from .base import Config, PMNFModeler
from .search import SingleFit, golden_search


class GoldenModeler(PMNFModeler):
    """Like ``default``, but single-parameter models come from a golden-section search.

    The one-term hypotheses are sorted by their slope at the largest
    parameter value; along that order the fit error is (nearly) unimodal, so
    a golden-section search finds the best term in logarithmically many
    evaluations (Calotoiu et al. 2016, Section IV-A).  A second term is searched the same
    way with the first fixed; ``max_terms`` above 2 is treated as 2.
    Multi-parameter models combine these single-parameter models as in
    ``default``.
    """

    name = "golden"

    def _single(self, x, Y, noise, blocks, usable, config: Config) -> SingleFit:
        return golden_search(x, Y, blocks, usable, config.max_terms, config.criterion, config.improvement, noise)
