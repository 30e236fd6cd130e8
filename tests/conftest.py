"""Shared fixtures (the real data in ../shared/data, a clean plugin host) and the markers.

Markers, set here from what a test uses so that no test can forget its own:
``mpi`` (runs under a real mpiexec), ``browser`` (drives headless Chromium),
``shared_data`` (reads ../shared/data), ``slow`` (several seconds: installs a
package or builds a wheel; marked in the test).  ``pytest -m "not slow and not
mpi"`` is the quick loop.
"""

from __future__ import annotations

import pathlib

import pytest

from browser_helpers import browser  # noqa: F401 - the headless Chromium fixture, for every test folder
from extrap_plugins import plugins

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED_DATA = (ROOT / ".." / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> pathlib.Path:
    """The read-only third-party data folder (``../shared/data`` from the project root)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"the shared data folder is missing ({SHARED_DATA}): tests on real third-party files are skipped")
    return SHARED_DATA


LULESH_RANKS = (27, 64, 125, 216, 343)
"""The rank counts of Thicket's LULESH Caliper files (``caliper/thicket/mpi_scaling_cali``)."""


@pytest.fixture(scope="session")
def mpi_scaling_cali(shared_data) -> list[str]:
    """Thicket's LULESH Caliper files, one per rank count of :data:`LULESH_RANKS`."""
    folder = shared_data / "caliper" / "thicket" / "mpi_scaling_cali"
    if not folder.is_dir():
        pytest.skip(f"Thicket's LULESH data is not in {folder}")
    return [str(folder / f"{n}_cores.cali") for n in LULESH_RANKS]


@pytest.fixture
def host(monkeypatch):
    """A fresh plugin host with the built-ins only, installed as the process-wide host."""
    monkeypatch.setenv("EXTRAP_PLUGINS_NO_AUTOLOAD", "1")
    fresh = plugins.PluginHost(autoload=False)
    previous = plugins._host
    plugins.set_host(fresh)
    try:
        yield fresh
    finally:
        plugins.set_host(previous)


MARKED_BY_FIXTURE = {"mpiexec": "mpi", "browser": "browser", "shared_data": "shared_data"}


def pytest_collection_modifyitems(items):
    for item in items:
        for fixture, marker in MARKED_BY_FIXTURE.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)
