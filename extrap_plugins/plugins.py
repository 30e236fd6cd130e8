"""The plugin manager: loads built-in and third-party plugins, and knows what they register.

Built-in readers, modelers and exporters are plugins like any other: the
modules in :data:`DEFAULT_PLUGINS` are registered through the same hooks as
third-party ones, which come from the entry-point group ``extrap_plugins``.
Each entry point is registered under ``DISTRIBUTION:ENTRY_POINT``, so two
distributions that both call their entry point ``plugin`` are both loaded; only
the same distribution found twice on the path is loaded once (the first, as
``import`` would).

A third-party plugin that cannot be used does not stop the tool: one that fails
to import or whose hooks cannot be called (:func:`_hooks_problem`), and one
whose hook fails or returns something wrong, is skipped with a
:class:`PluginLoadWarning` naming it, its distribution and the problem (for a
hook, every registration that hook returned is set aside: a list with one bad
entry is not trusted for the others).  It is an error (:class:`PluginError`,
exit status 3) only when a name it registered is the one asked for, or under
``EXTRAP_PLUGINS_STRICT=1``.  ``extrap-plugins plugins`` lists what was set
aside and why.

Names that clash
    Two third-party plugins registering the same name is a warning naming all of
    them, and neither registration is used (asking for that name is the error);
    all clashes are reported, not only the first.  A third-party plugin
    registering a built-in name is a warning too, and the built-in keeps the
    name.  That is deliberate: ``--export csv`` in a script, a notebook or this
    README must mean the same on every installation, and installing a package
    must not change it behind the user's back.  pluggy itself takes a plugin
    name once (``register`` refuses a second), and pytest replaces a built-in
    plugin only when told to (``-p no:NAME``); llm and datasette collect their
    hooks' answers into a dict, so whichever is called last silently wins,
    which is what this host avoids.  A plugin that means to replace a built-in
    registers a name of its own (``csv2``) and users choose it by typing it.  A
    problem with a built-in plugin is a bug of ours and always an error.

Environment variables:

``EXTRAP_PLUGINS_NO_AUTOLOAD=1``
    Do not load entry points (tests use this for a clean registry).
``EXTRAP_PLUGINS_STRICT=1``
    A third-party plugin that fails to load, a hook that fails and a name
    that clashes are errors instead of warnings.
``EXTRAP_PLUGINS_DISABLE=NAME[,NAME...]``
    Do not load these third-party plugins.  A ``NAME`` is a distribution (what
    ``pip install`` takes and the "provided by" column of ``extrap-plugins
    plugins`` shows: all its entry points) or ``DISTRIBUTION:ENTRY_POINT`` (one
    of them); distribution names compare as pip compares them (case, ``-``,
    ``_`` and ``.`` do not matter).  Entry-point names alone are not accepted:
    two distributions may use the same one.  A switched-off plugin is not even
    imported, so this also silences one that breaks at import.  Built-in
    plugins cannot be switched off.  A name that matches no installed plugin is
    a warning.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pathlib
import re
import warnings
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Generic, Mapping, TypeVar

import pluggy

from . import hookspecs
from .errors import InputError, PluginError, exit_text
from .formatting import described, did_you_mean
from .options import env_flag
from .registration import ExporterInfo, ModelerInfo, ReaderInfo

ENTRY_POINT_GROUP = "extrap_plugins"
"""The entry-point group third-party plugins register under (``[project.entry-points.extrap_plugins]``)."""
BUILTIN_DISTRIBUTION = "extrap-plugins"
"""The distribution that provides the built-in plugins."""
DISABLE_VARIABLE = "EXTRAP_PLUGINS_DISABLE"
"""The environment variable naming third-party plugins not to load (see the module's documentation)."""
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
    "extrap_plugins.exporters.extrap_experiment_exporter",
    "extrap_plugins.exporters.plot_exporter",
    "extrap_plugins.exporters.html_exporter",
)

Info = TypeVar("Info", ReaderInfo, ModelerInfo, ExporterInfo)

KINDS: dict[str, tuple[str, type]] = {
    "reader": ("extrap_readers", ReaderInfo),
    "modeler": ("extrap_modelers", ModelerInfo),
    "exporter": ("extrap_exporters", ExporterInfo),
}
"""Each kind of registration: the hook that registers it and its registration object."""


#: Extra-P's names of modelers this tool has under another name (``default``): an unknown modeler of these names
#: says so.  Not aliases: a plugin may register these names.
EXTRAP_MODELER_NAMES = frozenset({"basic", "multi-parameter", "multiparameter"})


class PluginLoadWarning(UserWarning):
    """A third-party plugin, or what one of its hooks registers, cannot be used and was skipped."""


class PluginOptionsWarning(UserWarning):
    """A modeler's ``ModelerInfo.options`` do not agree with the keywords its factory takes."""


@dataclass(frozen=True)
class Registered(Generic[Info]):
    """A registration object and where it came from."""

    info: Info
    plugin: str
    distribution: str


@dataclass(frozen=True)
class Problem:
    """Something wrong with a plugin, and what of it is not used.

    Attributes
    ----------
    kind : str
        ``"reader"``, ``"modeler"`` or ``"exporter"``, or ``"plugin"`` for a
        whole plugin (one that failed to import or is switched off).
    status : str
        ``"broken"`` (the plugin's fault), ``"not used"`` (a name clash) or
        ``"switched off"`` (``EXTRAP_PLUGINS_DISABLE``).
    message : str
        The whole sentence, as warned or raised.
    note : str
        The short form ``extrap-plugins plugins`` shows next to what is not used.
    plugin, distribution : str
        Whose problem it is (empty for a clash between several plugins).
    skipped : tuple of Registered
        The registrations set aside, by name: asking for one of these names
        raises ``message``.  Empty where the names are not known (a hook that
        raised) or for a whole plugin.
    """

    kind: str
    status: str
    message: str
    note: str
    plugin: str = ""
    distribution: str = ""
    skipped: tuple[Registered, ...] = ()


@dataclass
class _Table:
    usable: dict[str, Registered]
    problems: list[Problem]


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
        self.labels: dict[str, str] = {}
        """The name messages give a plugin registered under another (an entry point's own name)."""
        self.load_problems: list[Problem] = []
        """Third-party plugins not loaded: failed to import, or switched off."""
        self._tables: dict[str, _Table] | None = None
        for module_name in DEFAULT_PLUGINS:
            self.register(importlib.import_module(module_name), name=module_name)
        if autoload is None:
            autoload = not env_flag("EXTRAP_PLUGINS_NO_AUTOLOAD")
        if autoload:
            self.load_entry_points()

    def register(self, plugin, name: str, distribution: str = BUILTIN_DISTRIBUTION, label: str | None = None) -> None:
        """Register a plugin module or object under ``name`` (messages call it ``label``, default ``name``)."""
        self.manager.register(plugin, name=name)
        self.distributions[name] = distribution
        self.labels[name] = label or name
        self._tables = None

    def unregister(self, name: str) -> None:
        self.manager.unregister(name=name)
        self.distributions.pop(name, None)
        self.labels.pop(name, None)
        self._tables = None

    def load_entry_points(self) -> None:
        """Load the ``extrap_plugins`` entry points one by one.

        Each is registered as ``DISTRIBUTION:ENTRY_POINT`` (see the module's
        documentation), so entry points of the same name from different
        distributions are all loaded; the same distribution found twice on
        the path is loaded once.  Those ``EXTRAP_PLUGINS_DISABLE`` names are
        not imported.  A plugin that fails to import is skipped with a
        :class:`PluginLoadWarning` naming its distribution and the error, and
        so is an entry point naming a module loaded already (by another
        entry point, or a built-in one), naming both, unless
        ``EXTRAP_PLUGINS_STRICT=1``.
        """
        strict = env_flag("EXTRAP_PLUGINS_STRICT")
        disabled = _disabled_names()
        matched: set[str] = set()
        seen: set[str] = set()
        installed: set[str] = set()
        for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
            distribution = entry_point.dist.metadata["name"] if entry_point.dist else "unknown distribution"
            name = f"{distribution}:{entry_point.name}"
            if name in seen or self.manager.has_plugin(name):
                continue  # the same distribution twice on the path: the first one found counts, as for import
            seen.add(name)
            keys = {_normalized(distribution), f"{_normalized(distribution)}:{entry_point.name}"}
            installed |= keys
            if keys & disabled:
                matched |= keys & disabled
                self.load_problems.append(Problem(
                    "plugin", "switched off", f"plugin {entry_point.name!r} from distribution {distribution!r} is "
                    f"switched off ({DISABLE_VARIABLE})", f"switched off by {DISABLE_VARIABLE}",
                    entry_point.name, distribution))
                continue
            cause = loaded_as = None
            try:
                plugin = entry_point.load()
                loaded_as = self.manager.get_name(plugin)  # (pluggy refuses it with a list of every plugin)
                problem = None if loaded_as else _hooks_problem(self.manager, plugin)
                if problem is None and loaded_as is None:
                    self.register(plugin, name=name, distribution=distribution, label=entry_point.name)
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # a broken plugin must not break the tool (not even sys.exit())
                problem, cause = _error_text(error), error
            if loaded_as is not None:  # two entry points naming one module (a renamed project's old dist-info)
                owner = "a built-in plugin" if self.distributions[loaded_as] == BUILTIN_DISTRIBUTION else \
                    f"plugin {self.labels[loaded_as]} from distribution {self.distributions[loaded_as]!r}"
                note = f"it is {entry_point.value}, loaded already as {owner}"
                status, said = "not used", f"is not loaded: {note}"
            elif problem is not None:
                status, note = "broken", f"failed to load: {problem}"
                said = note
            else:
                continue
            message = f"plugin {entry_point.name!r} from distribution {distribution!r} {said}"
            if strict:
                raise PluginError(message) from cause
            self.load_problems.append(Problem("plugin", status, message, note, entry_point.name, distribution))
            warnings.warn(message, PluginLoadWarning, stacklevel=2)
        for unknown in sorted(disabled - matched):
            known = sorted({key for key in installed if ":" not in key})
            what = ("the built-in plugins cannot be switched off" if unknown == _normalized(BUILTIN_DISTRIBUTION)
                    else f"the installed plugin distributions are: {', '.join(known) or 'none'}")
            warnings.warn(f"{DISABLE_VARIABLE} names {unknown!r}, which is no installed plugin; {what}",
                          PluginLoadWarning, stacklevel=2)

    # ------------------------------------------------------------------ tables
    @property
    def readers(self) -> dict[str, Registered[ReaderInfo]]:
        return self._table("reader").usable

    @property
    def modelers(self) -> dict[str, Registered[ModelerInfo]]:
        return self._table("modeler").usable

    @property
    def exporters(self) -> dict[str, Registered[ExporterInfo]]:
        return self._table("exporter").usable

    @property
    def problems(self) -> list[Problem]:
        """What is not used and why: plugins not loaded, then set-aside registrations, by kind."""
        return [*self.load_problems, *(p for kind in KINDS for p in self._table(kind).problems)]

    def reader(self, name: str) -> ReaderInfo:
        return self._lookup("reader", name).info

    def modeler(self, name: str) -> ModelerInfo:
        return self._lookup("modeler", name).info

    def exporter(self, name: str) -> ExporterInfo:
        return self._lookup("exporter", name).info

    def exporter_for(self, path) -> str | None:
        """The exporter whose :attr:`~extrap_plugins.registration.ExporterInfo.extension` (or one of its
        ``extensions``) the file name ``path`` has (``models.json``: ``json``, ``models.pdf``: ``plot``); None where
        none or several have it."""
        suffix = pathlib.PurePath(os.fspath(path)).suffix.lower()
        found = []
        for name, registered in self.exporters.items():
            extensions = (registered.info.extension, *registered.info.extensions)
            if suffix and suffix in {extension.lower() for extension in extensions}:
                found.append(name)
        return found[0] if len(found) == 1 else None

    def named(self, name: str) -> list[tuple[str, Registered, Problem | None]]:
        """Every registration called ``name``, of each kind: ``(kind, registered, problem)``.

        ``problem`` is None for the registration in use, else why it is not
        used (those set aside are listed too).  No such name is an
        :class:`InputError` suggesting close ones.
        """
        found = []
        names: set[str] = set()
        for kind in KINDS:
            table = self._table(kind)
            names |= set(table.usable)
            if name in table.usable:
                found.append((kind, table.usable[name], None))
            for problem in table.problems:
                names |= {r.info.name for r in problem.skipped}
                found += [(kind, r, problem) for r in problem.skipped if r.info.name == name]
        if not found:
            hint = did_you_mean(name, sorted(names), f"the names are: {', '.join(sorted(names))}")
            raise InputError(f"no reader, modeler or exporter is named {name!r}; {hint}")
        return found

    def modeler_options(self, name: str) -> tuple[str, ...] | None:
        """The options the modeler ``name`` takes (``None``: its factory takes any keyword, or cannot be read)."""
        accepted = _factory_parameters(self.modeler(name).factory)
        if accepted is None or any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
            return None
        return _keywords(accepted)

    def modeler_options_problem(self, name: str) -> str | None:
        """How the options a modeler documents (``ModelerInfo.options``) and the keywords its factory takes
        disagree, as a sentence naming the modeler and its plugin (None: they agree, or the factory's signature
        cannot be read).  A factory that takes ``**options`` takes every documented option."""
        registered = self._lookup("modeler", name)
        accepted = _factory_parameters(registered.info.factory)
        if accepted is None:
            return None
        documented = [option for option, _ in option_help(registered.info.options)]
        taken = _keywords(accepted)
        any_keyword = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
        untaken = [] if any_keyword else [option for option in documented if option not in taken]
        undocumented = [option for option in taken if option not in documented]
        parts = []
        if untaken:
            parts.append(f"ModelerInfo.options lists {_names(untaken)}, which its factory does not take")
        if undocumented:
            parts.append(f"its factory takes {_names(undocumented)}, which ModelerInfo.options does not list")
        third_party = registered.distribution != BUILTIN_DISTRIBUTION  # (ours are tested; it imports every command)
        clashing, commands = _taken_by_commands(taken) if third_party and taken else ([], [])
        if clashing:
            many = len(clashing) > 1
            parts.append(f"its option{'s' * many} {_names(clashing)} cannot be given to {_and(commands)}, which "
                         f"{'takes' if len(commands) == 1 else 'take'} arguments of "
                         f"{'those names' if many else 'that name'} themselves; name {'them' if many else 'it'} "
                         "otherwise")
        if not parts:
            return None
        return f"{_who('modeler', name, registered)}: {'; '.join(parts)}"

    def check_modeler_options(self, names: list[str] | None = None) -> None:
        """Warn (:class:`PluginOptionsWarning`) for each modeler whose documented options and factory disagree
        (:meth:`modeler_options_problem`); ``names`` defaults to every usable modeler."""
        for name in sorted(self.modelers) if names is None else names:
            problem = self.modeler_options_problem(name)
            if problem:
                warnings.warn(problem, PluginOptionsWarning, stacklevel=2)

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
        accepted = _factory_parameters(info.factory) or {}
        needed = [n for n in _keywords(accepted) if accepted[n].default is accepted[n].empty and n not in options]
        if needed:  # (not the factory's TypeError, which names its class and its arguments)
            what = f"the option {_names(needed)}: it has" if len(needed) == 1 else \
                f"the options {_names(needed)}: they have"
            raise InputError(f"modeler {info.name!r} needs {what} no default")
        options = dict(options)
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

    def _lookup(self, kind: str, name: str) -> Registered:
        """The registration in use for ``name``; a set-aside one is its problem (a :class:`PluginError`)."""
        table = self._table(kind)
        if not isinstance(name, str):  # (a list or None crashed below, in name.strip())
            known = ", ".join(sorted(table.usable)) or "none"
            article = "an" if kind[0] in "aeiou" else "a"
            raise InputError(f"{article} {kind} is named by a string, got {described(name)}; the {kind}s are: {known}")
        if name in table.usable:
            return table.usable[name]
        for problem in table.problems:
            if any(r.info.name == name for r in problem.skipped):
                raise PluginError(problem.message)
        known = ", ".join(sorted(table.usable)) or "none"
        hint = ""
        if kind == "modeler" and name.strip().lower().replace("_", "-") in EXTRAP_MODELER_NAMES and "default" in \
                table.usable:
            hint = (" (Extra-P's basic and multi-parameter modelers are this tool's default, for one parameter and "
                    "for several; Extra-P's refining is refining)")
        raise InputError(f"unknown {kind} {name!r}; the {kind}s are: {known}{hint}")

    def _table(self, kind: str) -> _Table:
        if self._tables is None:
            self._tables = {}
        if kind not in self._tables:
            self._tables[kind] = self._collect(kind)
        return self._tables[kind]

    def _collect(self, kind: str) -> _Table:
        """Call every plugin's hook for ``kind`` and sort what they return into usable and set aside.

        A third-party plugin whose hook raises or returns anything wrong has
        all of that hook's registrations set aside; a name that clashes is
        resolved as the module's documentation says.  Every problem is a
        :class:`PluginLoadWarning` (all of them, then an error, under
        ``EXTRAP_PLUGINS_STRICT=1``); a built-in plugin's problem is a bug and
        an error at once.
        """
        hook_name, info_type = KINDS[kind]
        candidates: dict[str, list[Registered]] = {}
        problems: list[Problem] = []
        for impl in getattr(self.manager.hook, hook_name).get_hookimpls():  # in registration order
            registered_as = self.manager.get_name(impl.plugin) or repr(impl.plugin)
            plugin = self.labels.get(registered_as, registered_as)
            distribution = self.distributions.get(registered_as, "unknown distribution")
            returned, faults = _call_hook(impl.function, hook_name, info_type)
            if faults:
                note = f"{'; '.join(faults)}; none of the {kind}s it registers is used"
                skipped = {info.name: Registered(info, plugin, distribution) for info in returned
                           if isinstance(info, info_type) and _is_name(info.name)}
                problem = Problem(kind, "broken", f"plugin {plugin} ({distribution}): {note}", note, plugin,
                                  distribution, tuple(skipped.values()))
                if distribution == BUILTIN_DISTRIBUTION:
                    raise PluginError(problem.message)
                problems.append(problem)
                continue
            for info in returned:
                candidates.setdefault(info.name, []).append(Registered(info, plugin, distribution))
        usable: dict[str, Registered] = {}
        for name, registrations in candidates.items():
            builtins = [r for r in registrations if r.distribution == BUILTIN_DISTRIBUTION]
            if len(registrations) == 1:
                usable[name] = registrations[0]
                continue
            if len(builtins) == 1:  # the built-in keeps its name (see the module's documentation)
                usable[name] = builtins[0]
                for r in registrations:
                    if r is not builtins[0]:
                        problems.append(Problem(
                            kind, "not used", f"plugin {r.plugin} ({r.distribution}): its {kind} {name!r} is not "
                            f"used: a built-in {kind} has that name", f"a built-in {kind} has this name",
                            r.plugin, r.distribution, (r,)))
                continue
            registrations.sort(key=lambda r: (r.distribution, r.plugin))  # not the order of sys.path
            listed = _and([f"{r.plugin} ({r.distribution})" for r in registrations])
            count = {2: "two", 3: "three"}.get(len(registrations), str(len(registrations)))
            clash = f"{count} plugins register the {kind} {name!r}: {listed}"
            if builtins:  # two built-ins with one name: ours to fix
                raise PluginError(clash)
            neither = "neither" if len(registrations) == 2 else "none"
            problems.append(Problem(kind, "not used", f"{clash}; {neither} is used (uninstall one, or switch one off "
                                    f"with {DISABLE_VARIABLE}=DISTRIBUTION)", f"{count} plugins register this name: "
                                    f"{listed}", skipped=tuple(registrations)))
        if problems and env_flag("EXTRAP_PLUGINS_STRICT"):
            raise PluginError("; ".join(p.message for p in problems))
        for problem in problems:
            warnings.warn(problem.message, PluginLoadWarning, stacklevel=3)
        return _Table(usable, problems)


def _call_hook(function, hook_name: str, info_type: type) -> tuple[list, list[str]]:
    """What a hook returned (a list) and what is wrong with it (empty: nothing), each as the end of a sentence."""
    try:
        returned = function()
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # a hook that raises (or exits) is the plugin's fault: name it
        return [], [f"{hook_name} failed: {_error_text(error)}"]
    if returned is None:  # nothing to register
        return [], []
    if not isinstance(returned, (list, tuple)):  # a dict would register its keys
        return [], [f"{hook_name} must return a list of {info_type.__name__} objects, got {type(returned).__name__}"]
    returned = list(returned)
    faults = []
    counts: dict[str, int] = {}
    for info in returned:
        if not isinstance(info, info_type):
            faults.append(f"{hook_name} must return {info_type.__name__} objects, got {type(info).__name__}")
            continue
        problem = registration_problem(info)
        if problem:
            faults.append(f"{hook_name} returned {problem}")
        elif _is_name(info.name):
            counts[info.name] = counts.get(info.name, 0) + 1
    what = info_type.__name__.removesuffix("Info").lower()
    faults += [f"{hook_name} returned the {what} {name!r} more than once" for name, n in counts.items() if n > 1]
    return returned, faults


HOOKS = tuple(hook for hook, _ in KINDS.values())
"""The hooks a plugin implements (each called without arguments)."""


def _hooks_problem(manager: pluggy.PluginManager, plugin) -> str | None:
    """Why the host cannot call a plugin's hooks, as the end of a sentence (None: it can).

    pluggy itself would register a misspelt hook, or functions not marked ``@hookimpl``, as nothing at all,
    and say a hook with arguments over three lines.  A hook marked ``optionalhook=True`` (of a later version of
    this host) is no problem.
    """
    marked = {}
    for attribute in dir(plugin):
        marker = manager.parse_hookimpl_opts(plugin, attribute)
        if marker is not None:
            marked[marker.get("specname") or attribute] = (getattr(plugin, attribute), marker)
    for hook, (function, marker) in marked.items():
        if hook not in HOOKS:
            if marker.get("optionalhook"):
                continue
            return f"{hook} is marked @hookimpl, but no hook has that name; the hooks are {_and(list(HOOKS))}"
        taken = [name for name, p in inspect.signature(function).parameters.items()
                 if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if taken:
            return f"its hook {hook} takes {', '.join(taken)}, but hooks are called without arguments"
    if marked:
        return None
    unmarked = [hook for hook in HOOKS if callable(getattr(plugin, hook, None))]
    if unmarked:
        return f"it implements no hook: its {_and(unmarked)} {'is' if len(unmarked) == 1 else 'are'} not marked " \
               "@extrap_plugins.hookimpl"
    return f"it implements no hook ({', '.join(HOOKS[:-1])} or {HOOKS[-1]}, marked @extrap_plugins.hookimpl)"


def _error_text(error: BaseException) -> str:
    """``KeyError: 'time'``: an exception a plugin raised, on one line (pluggy's own take three)."""
    text = re.sub(r"\s*\n\s*", " ", str(error)).strip()
    return f"{type(error).__name__}: {text}"


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
    if isinstance(info, ExporterInfo) and (not isinstance(info.extensions, (tuple, list))
                                           or not all(isinstance(e, str) for e in info.extensions)):
        return (f"the exporter {info.name!r} with extensions {info.extensions!r}: expected a tuple of file "
                "extensions such as ('.svg', '.pdf')")
    return None


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def option_help(options) -> list[tuple[str, str]]:
    """A registration's ``options`` as ``(name, help)`` pairs: a mapping as documented, or (leniently) names only."""
    if isinstance(options, Mapping):
        return [(str(name), str(text)) for name, text in options.items()]
    if isinstance(options, (list, tuple, set, frozenset)):
        return [(str(name), "") for name in options]
    return []


_PASSING_OPTIONS = ("model", "stream_models", "suggest", "efficiency", "compare", "requirements", "whatif")
"""The public functions (and commands) that hand the keyword arguments they do not take themselves to the
modeler's factory (``--option``)."""
_HANDED_ON = ("measure",)
"""Their arguments that reach every modeler anyway (``fit_group(group, measure=...)``)."""


def _taken_by_commands(options: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Those of a factory's ``options`` that cannot be given to some of :data:`_PASSING_OPTIONS` (each takes an
    argument of that name itself: ``suggest --option tolerance=...`` is refused for ``--tolerance``), and those."""
    import extrap_plugins

    clashing, commands = [], []
    for command in _PASSING_OPTIONS:
        taken = inspect.signature(getattr(extrap_plugins, command)).parameters
        found = [option for option in options if option in taken and option not in _HANDED_ON]
        clashing += [option for option in found if option not in clashing]
        commands += [command] if found else []
    return clashing, commands


def _is_name(name) -> bool:
    return isinstance(name, str) and bool(name.strip()) and name == name.strip()


def _who(kind: str, name: str, registered: Registered) -> str:
    return f"{kind} {name!r} (plugin {registered.plugin} from distribution {registered.distribution!r})"


def _names(names: list[str]) -> str:
    return _and([repr(name) for name in names])


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def factory_options(factory) -> tuple[str, ...]:
    """The options a modeler factory takes by keyword (not ``**options``, not what the host passes itself);
    empty when its signature cannot be read."""
    return _keywords(_factory_parameters(factory) or {}) if callable(factory) else ()


def _keywords(parameters: Mapping[str, inspect.Parameter]) -> tuple[str, ...]:
    """The user options among a factory's parameters (by keyword, not the ones the host passes)."""
    return tuple(n for n, p in parameters.items()
                 if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and n not in _INJECTED)


def _normalized(distribution: str) -> str:
    """A distribution name as pip compares them (PEP 503): lower case, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _disabled_names() -> set[str]:
    """What ``EXTRAP_PLUGINS_DISABLE`` names: ``dist`` or ``dist:entry_point``, the distribution normalized."""
    names = set()
    for item in os.environ.get(DISABLE_VARIABLE, "").split(","):
        distribution, colon, entry_point = item.strip().partition(":")
        if distribution.strip():
            names.add(_normalized(distribution.strip()) + (f":{entry_point.strip()}" if colon else ""))
    return names


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
