"""extrap-plugins: empirical performance modeling for HPC.

Read measurements, learn one PMNF model per call path and metric, export::

    import extrap_plugins
    experiment = extrap_plugins.read("examples/stencil.jsonl")
    models = extrap_plugins.model(experiment)
    print(extrap_plugins.export(models, "text"))

The names below are loaded on first use (PEP 562), so ``import
extrap_plugins.instrument`` on every MPI rank does not pay for numpy and the
modelling stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "read": "api", "model": "api", "export": "api",
    "stream_models": "streaming", "extrapolate": "extrapolation", "hookimpl": "hookspecs",
    "requirements": "codesign", "whatif": "machine", "calibrate": "machine",
    "PluginHost": "plugins", "detect_changes": "modelers.segmented",
    "Experiment": "experiment", "Parameter": "experiment", "Callpath": "experiment", "Metric": "experiment",
    "SeriesGroup": "experiment",
    "Model": "models", "ModelSet": "models", "Term": "models", "Factor": "models", "Quality": "models",
    "Segment": "models",
    "ReaderInfo": "registration", "ModelerInfo": "registration", "ExporterInfo": "registration",
    "ExtrapError": "errors", "InputError": "errors", "PluginError": "errors", "ExtrapWarning": "errors",
    "QualityWarning": "errors",
    "from_graphframes": "hatchet", "from_thicket": "thicket",
    "efficiency": "efficiency_analysis", "compare": "comparison", "export_report": "reports",
    "suggest": "design", "Space": "design",
}

__all__ = [
    "read", "model", "export", "stream_models", "extrapolate", "hookimpl", "PluginHost", "detect_changes",
    "requirements", "whatif", "calibrate", "from_thicket", "from_graphframes",
    "Experiment", "Parameter", "Callpath", "Metric", "SeriesGroup",
    "Model", "ModelSet", "Term", "Factor", "Quality", "Segment",
    "ReaderInfo", "ModelerInfo", "ExporterInfo",
    "ExtrapError", "InputError", "PluginError", "ExtrapWarning", "QualityWarning",
    "efficiency", "compare", "export_report", "suggest", "Space",
    "__version__",
]

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ loads these
    from .api import export, model, read
    from .comparison import compare
    from .design import Space, suggest
    from .efficiency_analysis import efficiency
    from .reports import export_report
    from .errors import ExtrapError, ExtrapWarning, InputError, PluginError, QualityWarning
    from .experiment import Callpath, Experiment, Metric, Parameter, SeriesGroup
    from .codesign import requirements
    from .extrapolation import extrapolate
    from .hatchet import from_graphframes
    from .machine import calibrate, whatif
    from .hookspecs import hookimpl
    from .models import Factor, Model, ModelSet, Quality, Segment, Term
    from .modelers.segmented import detect_changes
    from .plugins import PluginHost
    from .registration import ExporterInfo, ModelerInfo, ReaderInfo
    from .streaming import stream_models
    from .thicket import from_thicket


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("extrap-plugins")
        except PackageNotFoundError:  # a source tree that is not installed
            value = "0+unknown"
    elif name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
