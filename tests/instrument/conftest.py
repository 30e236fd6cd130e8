"""Fixtures for the instrument shim: a clean timing core, and programs run under a real mpiexec."""

from __future__ import annotations

import os

import pytest

from extrap_plugins.instrument import regions
from extrap_plugins.instrument.session import session

# Tests that time regions in this process must never leave a file behind at exit.
session.configure(output=None)


@pytest.fixture
def clean():
    """The timing core with nothing recorded and recording on."""
    regions.reset()
    regions.enable()
    yield
    regions.reset()
    regions.enable()


@pytest.fixture(scope="session")
def mpiexec() -> list[str]:
    """The launch command prefix of the installed MPI (the test needs the ``mpi`` extra)."""
    pytest.importorskip("mpi4py", reason="the mpi extra is not installed (pip install -e '.[test,mpi]')")
    from extrap_plugins.instrument.sweep import find_launcher

    launcher = find_launcher()
    if launcher is None:
        pytest.fail("mpi4py is installed but no mpiexec was found beside Python or on the PATH")
    return [launcher.path, *launcher.arguments]


@pytest.fixture
def no_extrap_environment(monkeypatch):
    """Launches inherit this environment: no EXTRAP_* settings from outside the test."""
    for key in list(os.environ):
        if key.startswith("EXTRAP_"):
            monkeypatch.delenv(key)
