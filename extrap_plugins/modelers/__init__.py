"""Built-in modelers, registered through the ``extrap_modelers`` hook.

``default``     full single-parameter search, hierarchical multi-parameter search
``exhaustive``  every hypothesis (the accuracy reference; at most two parameters)
``golden``      golden-section single-parameter search (Calotoiu et al. 2016, Section IV-A)
``refining``    one-term models with exponents refined on continuous slices (Wolf's Extra-P slides)
"""

from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.registration import ModelerInfo

from .base import OPTIONS, PMNFModeler
from .default import DefaultModeler
from .exhaustive import ExhaustiveModeler
from .golden import GoldenModeler
from .refining import RefiningModeler

__all__ = ["PMNFModeler", "DefaultModeler", "ExhaustiveModeler", "GoldenModeler", "RefiningModeler"]


@hookimpl
def extrap_modelers():
    return [
        ModelerInfo(
            name="default",
            factory=DefaultModeler,
            description="PMNF models chosen by their evidence (an information criterion against the noise; "
            "--option selection=cv: leave-one-out cross-validation); hierarchical search for several parameters "
            "(full factorial or sparse lines)",
            options=dict(OPTIONS),
        ),
        ModelerInfo(
            name="exhaustive",
            factory=ExhaustiveModeler,
            description="every PMNF hypothesis fitted to all points (accuracy reference, up to two parameters)",
            options=dict(OPTIONS),
        ),
        ModelerInfo(
            name="golden",
            factory=GoldenModeler,
            description="golden-section search over slope-ordered hypotheses (Calotoiu et al. 2016, IV-A), "
            "combined hierarchically for several parameters",
            options=dict(OPTIONS),
        ),
        ModelerInfo(
            name="refining",
            factory=RefiningModeler,
            description="one-term models with exponents refined on continuous slices (Wolf's Extra-P slides: automatic "
            "configuration of the search space), combined hierarchically for several parameters",
            options=dict(OPTIONS),
        ),
    ]
