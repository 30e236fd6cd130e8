"""The ``exhaustive`` modeler: every hypothesis, no search heuristic (the accuracy reference)."""

from __future__ import annotations

from extrap_plugins.errors import InputError
from extrap_plugins.modelers import eq3, regression

from .base import Config, PMNFModeler, Result

MAX_PARAMETERS = 2


class ExhaustiveModeler(PMNFModeler):
    """Fit every hypothesis to all points and keep the simplest clearly best one.

    One parameter: every hypothesis of up to ``max_terms`` terms, as
    ``default`` does (it is cheap enough to be exhaustive already).

    Two parameters: the search space of Calotoiu et al. 2016, Eq. 3, without the
    hierarchical heuristic: one factor ``x^i log2(x)^j`` per parameter
    from I x J, combined as ``f``, ``g``, ``f*g``, ``f + g``, ``f*g + f``,
    ``f*g + g`` (and ``f + g + f*g`` when ``max_terms >= 3``), plus every
    two-term single-parameter hypothesis ``f1 + f2``; each fitted to every
    point.  About 14,000 hypotheses with the default exponent sets.

    More than two parameters are refused: the space grows as
    ``(|I| |J|)^m`` and the hierarchical ``default`` modeler is the way.
    """

    name = "exhaustive"
    whole_search = False  # its search is the whole space already

    def _multi(self, X, Y, variance, active, usable, config: Config, notes, names) -> Result:
        if len(active) > MAX_PARAMETERS:
            raise InputError(
                f"the exhaustive modeler searches at most {MAX_PARAMETERS} parameters; these series vary "
                f"{len(active)} ({', '.join(names[i] for i in active)}): use the default modeler"
            )
        noise = regression.Noise.estimate(Y, *variance)
        return Result(*eq3.search(X, Y, noise, active, usable, config.blocks, config.max_terms, config.criterion,
                                  config.improvement))
