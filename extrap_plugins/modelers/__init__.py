"""Built-in modelers, registered through the ``extrap_modelers`` hook."""

from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.registration import ModelerInfo

from .basic import BasicModeler


@hookimpl
def extrap_modelers():
    return [
        ModelerInfo(
            name="default",
            factory=BasicModeler,
            description="least squares over one-term PMNF hypotheses (placeholder for the full engine)",
        )
    ]
