"""Shared fixtures: the real data in ../shared/data and a clean plugin host."""

from __future__ import annotations

import pathlib

import pytest

from extrap_plugins import plugins

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED_DATA = (ROOT / ".." / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> pathlib.Path:
    """The read-only third-party data folder (``../shared/data`` from the project root)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the shared data folder is missing: {SHARED_DATA}")
    return SHARED_DATA


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
