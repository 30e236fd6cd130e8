"""Hook specifications: the reference documentation of the plugin interface.

A plugin is a module (or object) with functions marked ``@hookimpl`` whose
names match the specifications below.  Third parties make theirs
discoverable with an entry point in the group ``extrap_plugins``::

    [project.entry-points.extrap_plugins]
    my_modeler = "my_package.plugin"

Hooks are called with keyword arguments only.  Each returns a list of
registration objects (:mod:`extrap_plugins.registration`); the host joins the
lists of every plugin, and two plugins registering the same name is an error
naming both.

The host checks every registration before using any (a
:class:`~extrap_plugins.errors.PluginError` naming the plugin and its
distribution, exit status 3): a hook that raises or calls ``sys.exit()``, one
that returns anything but a list or tuple (``None`` counts as empty) of the
hook's registration objects, and an object whose name is empty or has spaces
around it, whose functions are not callable, whose ``patterns`` are not a
tuple of globs or whose exporter ``kind`` is neither ``"text"`` nor ``"path"``.
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
        every plugin and joins the lists; reader names must be unique.
    """


@hookspec
def extrap_modelers() -> list[ModelerInfo]:
    """Register modelers that learn one performance model per series.

    Returns
    -------
    list of ModelerInfo
        Every modeler this plugin provides (may be empty).  The host calls
        every plugin and joins the lists; modeler names must be unique.
    """


@hookspec
def extrap_exporters() -> list[ExporterInfo]:
    """Register exporters that write a ModelSet (text table, JSON, CSV, ...).

    Returns
    -------
    list of ExporterInfo
        Every exporter this plugin provides (may be empty).  The host calls
        every plugin and joins the lists; exporter names must be unique.
    """
