"""Hook specifications: the reference documentation of the plugin interface.

A plugin is a module (or object) with functions marked ``@hookimpl`` whose
names match the specifications below.  Third parties make theirs
discoverable with an entry point in the group ``extrap_plugins``::

    [project.entry-points.extrap_plugins]
    powerlaw = "extrap_powerlaw"

Give the entry point a name of its own, after your package or what it
provides, not a generic one like ``plugin``: the host registers it as
``DISTRIBUTION:ENTRY_POINT``, so two distributions using the same generic name
are both loaded, but messages name the plugin by its entry point, and
``EXTRAP_PLUGINS_DISABLE=DISTRIBUTION:ENTRY_POINT`` switches one off by it.

Hooks are called without arguments.  A plugin with a function marked ``@hookimpl``
whose name is no hook below (unless marked ``optionalhook=True``), with a hook
that takes arguments, or with no hook at all (a function named like one but not
marked) is not loaded, with a warning naming it and the function.  Each returns a list of
registration objects (:mod:`extrap_plugins.registration`); the host joins the
lists of every plugin and alone decides about names: one plugin registering a
name twice is that plugin's fault; two third-party plugins registering the
same name is a warning naming both, and neither is used; a third-party name
that is also a built-in one is a warning, and the built-in keeps it (why:
:mod:`extrap_plugins.plugins`).  Choose names unlikely to clash.

The host checks every registration before using any: a hook that raises or
calls ``sys.exit()``, one that returns anything but a list or tuple (``None``
counts as empty) of the hook's registration objects, and an object whose name
is empty or has spaces around it, whose functions are not callable, whose
``patterns`` are not a tuple of globs or whose exporter ``kind`` is neither
``"text"`` nor ``"path"``.  Any of these sets aside everything that hook of
that plugin returned, with a :class:`~extrap_plugins.plugins.PluginLoadWarning`
naming the plugin, its distribution and the problem; the rest of the tool
works.  Asking for a name that was set aside (``--modeler NAME``), or running
with ``EXTRAP_PLUGINS_STRICT=1``, makes it a
:class:`~extrap_plugins.errors.PluginError` (exit status 3).  ``extrap-plugins
plugins`` lists what was set aside, and ``extrap-plugins plugins NAME`` shows
one registration with the help of its options.
"""

from __future__ import annotations

import pluggy

from .registration import ExporterInfo, ModelerInfo, ReaderInfo

PROJECT_NAME = "extrap_plugins"
"""The pluggy project name (hook markers); the distribution is ``extrap-plugins``."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def extrap_readers() -> list[ReaderInfo]:
    """Register readers that turn measurement files into an Experiment.

    Returns
    -------
    list of ReaderInfo
        Every reader this plugin provides (may be empty).  The host calls
        every plugin and joins the lists; reader names must be unique (see
        the module's documentation for what happens when they are not).
    """


@hookspec
def extrap_modelers() -> list[ModelerInfo]:
    """Register modelers that learn one performance model per series.

    Returns
    -------
    list of ModelerInfo
        Every modeler this plugin provides (may be empty).  The host calls
        every plugin and joins the lists; modeler names must be unique (see
        the module's documentation for what happens when they are not).
    """


@hookspec
def extrap_exporters() -> list[ExporterInfo]:
    """Register exporters that write a ModelSet (text table, JSON, CSV, ...).

    Returns
    -------
    list of ExporterInfo
        Every exporter this plugin provides (may be empty).  The host calls
        every plugin and joins the lists; exporter names must be unique (see
        the module's documentation for what happens when they are not).
    """
