"""Measure a Python program without changing it: ``python -m extrap_plugins.instrument app.py [ARGS...]``.

Like ``python -m cProfile app.py``, this runs the program as ``python app.py`` would (``-m module`` runs a
module), inside one region, ``main``, so its whole run is timed; and when the program imports mpi4py,
``MPI.COMM_WORLD`` is replaced by a recording communicator (:func:`extrap_plugins.instrument.mpi.wrap`)
before the program sees it, so every MPI call on it, and on communicators made from it, becomes a child
region of ``main`` with its bytes and messages.  In a sweep::

    extrap-plugins run --np 1,2,4 --param n=1000,2000 -o runs/ -- python -m extrap_plugins.instrument app.py

Parameters reach the program as ``EXTRAP_PARAM_<NAME>`` and ``{name}`` in its arguments, as for any program;
the measurements go to ``<program>.extrap.jsonl`` named after ``app.py``.  Regions the program defines itself
are recorded below ``main``.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.util
import os
import runpy
import sys
import zipfile
from typing import Sequence

from . import mpi, regions
from .session import session as _session

ROOT = "main"
USAGE = "usage: python -m extrap_plugins.instrument (SCRIPT.py | -m MODULE) [ARGS...]"
HELP = """
Run a Python program as python would, measured: its whole run as the region main and, when it imports
mpi4py, every MPI call on MPI.COMM_WORLD (and on communicators made from it) below main.  The measurements
are appended to <program>.extrap.jsonl (or $EXTRAP_OUTPUT); in a sweep:

  extrap-plugins run --np 1,2,4 --param n=1000,2000 -o runs/ -- python -m extrap_plugins.instrument app.py
"""


def main(argv: Sequence[str] | None = None) -> None:
    """Run the program the arguments name as ``python`` would, measured (see the module's docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["-h"], ["--help"]):
        sys.stdout.write(USAGE + "\n" + HELP)
        raise SystemExit(0)
    module = argv[:1] == ["-m"]
    problem = _problem(argv, module)
    if problem:
        sys.stderr.write(f"{USAGE}\nextrap_plugins.instrument: error: {problem}\n")
        raise SystemExit(2)
    target = argv[1] if module else argv[0]
    sys.argv = argv[1:] if module else argv
    _session.name_program(program_name(argv, module))
    if not regions._state.environment_off and importlib.util.find_spec("mpi4py") is not None:
        _record_world_on_import()
    with regions.region(ROOT):
        if module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        elif os.path.isdir(target) or zipfile.is_zipfile(target):  # a folder or zip with __main__.py: runpy puts
            del sys.path[0]                                          # it first on the path, as python does
            runpy.run_path(os.path.abspath(target), run_name="__main__")
        else:
            sys.path[0] = os.path.dirname(os.path.abspath(target))  # as python puts the script's folder first
            runpy.run_path(target, run_name="__main__")


_RUNNERS = ("mpi4py", "mpi4py.run", "mpi4py.futures")  # ``python -m RUNNER [options] app.py`` runs app.py


def program_name(argv: Sequence[str], module: bool) -> str:
    """What a run is named after: the script, or the last part of the module's name; through mpi4py's runners
    (``-m mpi4py.futures app.py``, ``-m mpi4py -rc threads=0 -m app``) the program they run."""
    if not module:
        return script_name(argv[0])
    if argv[1] in _RUNNERS:
        rest = list(argv[2:])
        while rest[:1] == ["-rc"] or rest[:1] and rest[0].startswith("--rc="):  # the runner's own options
            del rest[:2 if rest[0] == "-rc" else 1]
        if rest[:1] == ["-m"] and len(rest) > 1:
            return rest[1].rsplit(".", 1)[-1]
        if rest and not rest[0].startswith("-"):
            return script_name(rest[0])
    return argv[1].rsplit(".", 1)[-1]


def script_name(path: str) -> str:
    """What the measurements of ``python PATH`` are named after: ``app`` of ``app.py``, of a folder ``app/`` or
    of a zip application ``app.pyz`` that holds a ``__main__.py``."""
    return os.path.splitext(os.path.basename(os.path.normpath(path)))[0]


def _problem(argv: list[str], module: bool) -> str | None:
    """What is wrong with the arguments, if anything."""
    if not argv:
        return "no program given"
    if module and len(argv) < 2:
        return "-m needs a module name"
    if module and not _findable(argv[1]):
        return f"{argv[1]}: no such module"
    if not module and not os.path.exists(argv[0]):
        return f"{argv[0]}: no such file"
    if not module and os.path.isdir(argv[0]) and not os.path.isfile(os.path.join(argv[0], "__main__.py")):
        return f"{argv[0]}: a folder without __main__.py"
    return None


def _findable(name: str) -> bool:
    """Whether ``python -m name`` finds a module (importing the packages it is in, as python does)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _record_world_on_import() -> None:
    """Replace ``MPI.COMM_WORLD`` by a recording communicator as soon as ``mpi4py.MPI`` is imported (at once
    if it already is): a program that never imports mpi4py does not start MPI because of us."""
    loaded = sys.modules.get("mpi4py.MPI")
    if loaded is not None:
        _record_world(loaded)
        return
    sys.meta_path.insert(0, _WorldRecorder())


def _record_world(MPI) -> None:
    """Make ``MPI.COMM_WORLD`` a recording communicator: now if MPI is initialised, else right after the program's
    ``MPI.Init()`` or ``MPI.Init_thread()`` (``mpi4py.rc.initialize = False``: nothing can be recorded before)."""
    if MPI.Is_initialized():
        MPI.COMM_WORLD = mpi.wrap(MPI.COMM_WORLD)
        return
    for name in ("Init", "Init_thread"):
        setattr(MPI, name, _then_record_world(MPI, getattr(MPI, name)))


def _then_record_world(MPI, init):
    @functools.wraps(init)
    def initialise(*args, **kwargs):
        result = init(*args, **kwargs)
        if not mpi.is_wrapped(MPI.COMM_WORLD):
            MPI.COMM_WORLD = mpi.wrap(MPI.COMM_WORLD)
        return result

    return initialise


class _WorldRecorder(importlib.abc.MetaPathFinder):
    """Finds ``mpi4py.MPI`` with the other finders and wraps its loader (once, then steps aside)."""

    def find_spec(self, name, path, target=None):
        if name != "mpi4py.MPI":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


class _Loader(importlib.abc.Loader):
    def __init__(self, loader) -> None:
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        _record_world(module)
