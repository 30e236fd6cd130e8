"""The plugin manager: loads built-in and third-party plugins, and knows what they register.

Built-in readers, modelers and exporters are plugins like any other: the
modules in :data:`DEFAULT_PLUGINS` are registered through the same hooks as
third-party ones, which come from the entry-point group ``extrap_plugins``.

Environment variables:

``EXTRAP_PLUGINS_NO_AUTOLOAD=1``
    Do not load entry points (tests use this for a clean registry).
``EXTRAP_PLUGINS_STRICT=1``
    A third-party plugin that fails to load is an error instead of a warning.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Generic, Mapping, TypeVar

import pluggy

from . import hookspecs
from .errors import InputError, PluginError, exit_text
from .options import env_flag
from .registration import ExporterInfo, ModelerInfo, ReaderInfo

ENTRY_POINT_GROUP = "extrap_plugins"
"""The entry-point group third-party plugins register under (``[project.entry-points.extrap_plugins]``)."""
BUILTIN_DISTRIBUTION = "extrap-plugins"
"""The distribution that provides the built-in plugins."""
_INJECTED = ("parameters", "host")
"""Factory arguments the host passes itself, never user options."""

DEFAULT_PLUGINS: tuple[str, ...] = (
    "extrap_plugins.readers.json_reader",
    "extrap_plugins.readers.text_reader",
    "extrap_plugins.readers.csv_reader",
    "extrap_plugins.readers.talpas_reader",
    "extrap_plugins.readers.extrap_experiment_reader",
    "extrap_plugins.readers.cube_reader",
    "extrap_plugins.readers.caliper_reader",
    "extrap_plugins.readers.instrument_reader",
    "extrap_plugins.modelers",
    "extrap_plugins.modelers.segmented",
    "extrap_plugins.exporters.text_exporter",
    "extrap_plugins.exporters.json_exporter",
    "extrap_plugins.exporters.csv_exporter",
    "extrap_plugins.exporters.extrap_jsonl_exporter",
    "extrap_plugins.exporters.plot_exporter",
    "extrap_plugins.exporters.html_exporter",
)

Info = TypeVar("Info", ReaderInfo, ModelerInfo, ExporterInfo)


class PluginLoadWarning(UserWarning):
    """A third-party plugin could not be loaded and was skipped."""


@dataclass(frozen=True)
class Registered(Generic[Info]):
    """A registration object and where it came from."""

    info: Info
    plugin: str
    distribution: str


class PluginHost:
    """A pluggy plugin manager plus what its plugins registered, by kind and name.

    >>> host = PluginHost(autoload=False)   # built-ins only
    >>> sorted(host.exporters)
    ['csv', 'extrap-jsonl', 'html', 'json', 'plot', 'text']
    """

    def __init__(self, autoload: bool | None = None):
        self.manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.manager.add_hookspecs(hookspecs)
        self.distributions: dict[str, str] = {}
        self._tables: dict[str, dict[str, Registered]] | None = None
        for module_name in DEFAULT_PLUGINS:
            self.register(importlib.import_module(module_name), name=module_name)
        if autoload is None:
            autoload = not env_flag("EXTRAP_PLUGINS_NO_AUTOLOAD")
        if autoload:
            self.load_entry_points()

    def register(self, plugin, name: str, distribution: str = BUILTIN_DISTRIBUTION) -> None:
        """Register a plugin module or object under ``name``."""
        self.manager.register(plugin, name=name)
        self.distributions[name] = distribution
        self._tables = None

    def unregister(self, name: str) -> None:
        self.manager.unregister(name=name)
        self.distributions.pop(name, None)
        self._tables = None

    def load_entry_points(self) -> None:
        """Load the ``extrap_plugins`` entry points one by one.

        A plugin that fails to import is skipped with a :class:`PluginLoadWarning`
        naming its distribution and the error, unless ``EXTRAP_PLUGINS_STRICT=1``.
        """
        strict = env_flag("EXTRAP_PLUGINS_STRICT")
        for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
            if self.manager.get_plugin(entry_point.name) is not None:
                continue
            distribution = entry_point.dist.metadata["name"] if entry_point.dist else "unknown distribution"
            try:
                self.register(entry_point.load(), name=entry_point.name, distribution=distribution)
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # a broken plugin must not break the tool (not even sys.exit())
                message = (
                    f"plugin {entry_point.name!r} from distribution {distribution!r} "
                    f"failed to load: {type(error).__name__}: {error}"
                )
                if strict:
                    raise PluginError(message) from error
                warnings.warn(message, PluginLoadWarning, stacklevel=2)

    # ------------------------------------------------------------------ tables
    @property
    def readers(self) -> dict[str, Registered[ReaderInfo]]:
        return self._table("extrap_readers", ReaderInfo)

    @property
    def modelers(self) -> dict[str, Registered[ModelerInfo]]:
        return self._table("extrap_modelers", ModelerInfo)

    @property
    def exporters(self) -> dict[str, Registered[ExporterInfo]]:
        return self._table("extrap_exporters", ExporterInfo)

    def reader(self, name: str) -> ReaderInfo:
        return _lookup(self.readers, name, "reader").info

    def modeler(self, name: str) -> ModelerInfo:
        return _lookup(self.modelers, name, "modeler").info

    def exporter(self, name: str) -> ExporterInfo:
        return _lookup(self.exporters, name, "exporter").info

    def modeler_options(self, name: str) -> tuple[str, ...] | None:
        """The options the modeler ``name`` takes (``None``: its factory takes any keyword, or cannot be read)."""
        accepted = _factory_parameters(self.modeler(name).factory)
        if accepted is None or any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
            return None
        return tuple(n for n, p in accepted.items()
                     if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and n not in _INJECTED)

    def build_modeler(self, name: str, options: Mapping[str, Any], parameters: tuple[str, ...]):
        """An instance of the modeler ``name``: its factory called with the user's ``options``.

        A factory that takes ``parameters`` gets the experiment's parameter
        names; one that takes ``host`` gets this host (so a modeler that
        wraps another, like ``segmented``, finds it where the caller
        registered it).  Options the factory does not take, and values it
        rejects (``ValueError``/``TypeError``), are an :class:`InputError`
        naming the modeler.
        """
        info = self.modeler(name)
        for injected in _INJECTED:
            if injected in options:
                raise InputError(f"{injected!r} is not a modeler option: it is passed automatically")
        known = self.modeler_options(name)
        unknown = [k for k in options if known is not None and k not in known]
        if unknown:
            listed = ", ".join(known) or "none"
            raise InputError(
                f"modeler {info.name!r} has no option {', '.join(map(repr, unknown))}; its options are: {listed}"
            )
        options = dict(options)
        accepted = _factory_parameters(info.factory) or {}
        for injected, value in (("parameters", parameters), ("host", self)):
            if injected in accepted:
                options[injected] = value
        try:
            return info.factory(**options)
        except (ValueError, TypeError) as error:  # option validation failed: the user's input
            raise InputError(f"modeler {info.name!r}: {error}") from error
        except (InputError, PluginError):
            raise
        except (Exception, SystemExit) as error:  # sys.exit() in a factory is the plugin's fault too
            registered = self.modelers[name]
            if registered.distribution == BUILTIN_DISTRIBUTION:
                raise
            what = exit_text(error) if isinstance(error, SystemExit) else f"{type(error).__name__}: {error}"
            raise PluginError(f"modeler {name!r} (plugin {registered.plugin} from distribution "
                              f"{registered.distribution!r}) failed to start: {what}") from error

    def _table(self, hook_name: str, kind: type) -> dict[str, Registered]:
        if self._tables is None:
            self._tables = {}
        if hook_name not in self._tables:
            self._tables[hook_name] = self._collect(hook_name, kind)
        return self._tables[hook_name]

    def _collect(self, hook_name: str, kind: type) -> dict[str, Registered]:
        found: dict[str, Registered] = {}
        hook = getattr(self.manager.hook, hook_name)
        for impl in hook.get_hookimpls():  # in registration order
            plugin_name = self.manager.get_name(impl.plugin) or repr(impl.plugin)
            distribution = self.distributions.get(plugin_name, "unknown distribution")
            try:
                returned = impl.function()
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # a hook that raises (or exits) is the plugin's fault: name it
                raise PluginError(f"plugin {plugin_name} ({distribution}): {hook_name} failed: "
                                  f"{type(error).__name__}: {error}") from error
            if returned is None:  # nothing to register
                returned = []
            if not isinstance(returned, (list, tuple)):  # a dict would register its keys
                raise PluginError(f"plugin {plugin_name} ({distribution}): {hook_name} must return a list of "
                                  f"{kind.__name__} objects, got {type(returned).__name__}")
            for info in returned:
                if not isinstance(info, kind):
                    raise PluginError(
                        f"plugin {plugin_name} ({distribution}): {hook_name} must return "
                        f"{kind.__name__} objects, got {type(info).__name__}"
                    )
                problem = registration_problem(info)
                if problem:
                    raise PluginError(f"plugin {plugin_name} ({distribution}): {hook_name} returned {problem}")
                if info.name in found:
                    other = found[info.name]
                    what = kind.__name__.removesuffix("Info").lower()
                    raise PluginError(
                        f"two plugins register the {what} {info.name!r}: "
                        f"{other.plugin} ({other.distribution}) and {plugin_name} ({distribution})"
                    )
                found[info.name] = Registered(info, plugin_name, distribution)
        return found


_CALLABLES: dict[type, tuple[tuple[str, bool], ...]] = {
    ReaderInfo: (("read", True), ("sniff", False), ("parts", False), ("read_part", False), ("join", False)),
    ModelerInfo: (("factory", True),),
    ExporterInfo: (("export", True),),
}
"""The fields of each registration object that hold functions, and whether each is required."""
_EXPORTER_KINDS = ("text", "path")


def registration_problem(info: ReaderInfo | ModelerInfo | ExporterInfo) -> str | None:
    """What is wrong with a registration object, as the end of a sentence (None if nothing is).

    The name must be non-empty text without spaces around it (what users type after ``--reader``,
    ``--modeler``, ``--export``); the functions must be callable (a reader's ``read`` may be None when it
    has ``parts`` and ``read_part``); a reader's ``patterns`` a tuple of
    globs (a bare string would match by its characters); an exporter's ``kind`` ``text`` or ``path``.

    >>> registration_problem(ModelerInfo("mine", 42))
    "the modeler 'mine' with a factory that is not callable (got int)"
    """
    what = type(info).__name__.removesuffix("Info").lower()
    if not isinstance(info.name, str) or not info.name.strip() or info.name != info.name.strip():
        return (f"{_article(what)} {what} with the name {info.name!r}: a name must be non-empty text without "
                "spaces around it")
    runs = isinstance(info, ReaderInfo) and callable(info.parts) and callable(info.read_part)
    for field, required in _CALLABLES[type(info)]:
        value = getattr(info, field)
        required = required and not (runs and field == "read")  # a reader of runs may read only through them
        if not callable(value) and (required or value is not None):
            return (f"the {what} {info.name!r} with {_article(field)} {field} that is not callable "
                    f"(got {type(value).__name__})")
    if isinstance(info, ReaderInfo) and (not isinstance(info.patterns, (tuple, list))
                                         or not all(isinstance(p, str) for p in info.patterns)):
        return (f"the reader {info.name!r} with patterns {info.patterns!r}: expected a tuple of file-name "
                "globs such as ('*.csv',)")
    if isinstance(info, ExporterInfo) and info.kind not in _EXPORTER_KINDS:
        return f"the exporter {info.name!r} of kind {info.kind!r}: expected 'text' or 'path'"
    return None


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _lookup(table: dict[str, Registered], name: str, kind: str) -> Registered:
    if name not in table:
        known = ", ".join(sorted(table)) or "none"
        raise InputError(f"unknown {kind} {name!r}; the {kind}s are: {known}")
    return table[name]


def _factory_parameters(factory) -> Mapping[str, inspect.Parameter] | None:
    """The parameters of a plugin factory's signature (``None`` where it cannot be read)."""
    try:
        return inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return None


_host: PluginHost | None = None


def get_host() -> PluginHost:
    """The process-wide plugin host, built on first use."""
    global _host
    if _host is None:
        _host = PluginHost()
    return _host


def set_host(host: PluginHost | None) -> None:
    """Replace (or forget, with None) the process-wide host; for tests and embedding."""
    global _host
    _host = host
