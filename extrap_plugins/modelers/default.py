"""The ``default`` modeler: full single-parameter search, hierarchical multi-parameter search."""

from __future__ import annotations

from .base import PMNFModeler


class DefaultModeler(PMNFModeler):
    """PMNF models by least squares, chosen by their evidence (or leave-one-out cross-validation, ``selection``).

    One parameter: every hypothesis of up to ``max_terms`` terms from I x J
    is fitted (one QR per hypothesis for the whole group of series) and the
    simplest hypothesis that no more complex one clearly beats is kept; the
    constant model when nothing beats it.

    Several parameters: the hierarchical search of Calotoiu et al. 2016, Section IV-B.
    Each parameter is first modeled alone along its longest lines (the
    projection of a full factorial design, or the lines of a sparse design),
    then every additive and multiplicative combination of those models'
    terms is fitted to all points and the best is kept the same way.
    Parameters whose single-parameter model is constant drop out.

    Options are those of :class:`~extrap_plugins.modelers.base.PMNFModeler`.

    Examples
    --------
    >>> import extrap_plugins
    >>> e = extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time",
    ...     coordinates=[[2], [4], [8], [16], [32]], value=[3, 5, 9, 17, 33])
    >>> group = next(e.series_groups())
    >>> DefaultModeler().fit_group(group)[0].formula
    '1 + 1 · p'
    """

    name = "default"
