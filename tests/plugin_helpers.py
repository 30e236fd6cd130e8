"""Small plugins the tests register on a fresh host, and real installed distributions for entry-point tests."""

from __future__ import annotations

import re
import sys
import textwrap

import numpy as np
import pytest

from extrap_plugins.cli import main
from extrap_plugins.plugins import BUILTIN_DISTRIBUTION, set_host


def fake_distribution(tmp_path, monkeypatch, name, entry_points, modules):
    """Put a real installed distribution (dist-info with entry points) on sys.path, at ``tmp_path``.

    ``entry_points`` maps entry-point names to module names, ``modules`` module names to their source.
    Give each distribution its own folder when a test installs several.
    """
    tmp_path.mkdir(parents=True, exist_ok=True)
    dist_info = tmp_path / f"{name.replace('-', '_')}-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entry_points.items())
    (dist_info / "entry_points.txt").write_text(f"[extrap_plugins]\n{lines}\n")
    for module_name, source in modules.items():
        (tmp_path / f"{module_name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.fixture
def installed(monkeypatch, tmp_path):
    """The CLI's host is built from the real entry points of what a test installs (under ``tmp_path``, with
    :func:`fake_distribution`); the plugin modules it imported are forgotten after it."""
    monkeypatch.delenv("EXTRAP_PLUGINS_NO_AUTOLOAD", raising=False)
    set_host(None)
    yield
    set_host(None)
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def cli(capsys, *argv):
    """``extrap-plugins ARGV`` with a host built afresh: (exit status, stdout, stderr)."""
    set_host(None)
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def third_party_rows(listing: str) -> list[list[str]]:
    """The rows of ``extrap-plugins plugins`` that are not the built-ins', split into columns."""
    rows = [re.split(r"\s{2,}", line.strip()) for line in listing.splitlines()[2:]]
    return [row for row in rows if row[2] != BUILTIN_DISTRIBUTION]


class Mean:
    """A per-series (scikit-learn style) modeler: the mean of the values it was given."""

    def fit(self, X, y):
        self.constant_, self.terms_ = float(np.mean(y)), []
        return self

    def predict(self, X):
        return np.full(len(X), self.constant_)


class Exits:
    """A batched modeler whose ``fit_group`` calls ``sys.exit(code)`` (picklable: it goes to process workers)."""

    def __init__(self, code):
        self.code = code

    def fit_group(self, group, *, measure):
        sys.exit(self.code)


class Interrupted:
    """A batched modeler whose ``fit_group`` is interrupted (Ctrl-C)."""

    def fit_group(self, group, *, measure):
        raise KeyboardInterrupt
