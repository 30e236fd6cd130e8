"""extrap-plugins: empirical performance modeling for HPC.

Read measurements, learn one PMNF model per call path and metric, export::

    import extrap_plugins
    experiment = extrap_plugins.read("examples/jacobi.jsonl")
    models = extrap_plugins.model(experiment)
    extrap_plugins.export(models, "text")
"""

from importlib.metadata import PackageNotFoundError, version as _version

from .api import export, model, read
from .errors import ExtrapError, ExtrapWarning, InputError, PluginError, QualityWarning
from .experiment import Callpath, Experiment, Metric, Parameter, SeriesGroup
from .extrapolation import extrapolate
from .hatchet import from_graphframes
from .hookspecs import hookimpl
from .model import Factor, Model, ModelSet, Quality, Segment, Term
from .registration import ExporterInfo, ModelerInfo, ReaderInfo
from .thicket import from_thicket

try:
    __version__ = _version("extrap-plugins")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "read", "model", "export", "extrapolate", "hookimpl", "from_thicket", "from_graphframes",
    "Experiment", "Parameter", "Callpath", "Metric", "SeriesGroup",
    "Model", "ModelSet", "Term", "Factor", "Quality", "Segment",
    "ReaderInfo", "ModelerInfo", "ExporterInfo",
    "ExtrapError", "InputError", "PluginError", "ExtrapWarning", "QualityWarning",
    "__version__",
]
