"""Broken plugins: every case is exit 3 with one line naming the plugin and its distribution.

Each case registers a third-party plugin (distribution ``broken-dist``) in a fresh host and runs
``extrap-plugins model`` through the CLI's main(); nothing a broken plugin does is exported.
"""

from __future__ import annotations

import math
import pathlib
import textwrap

import numpy as np
import pytest

from extrap_plugins import ExporterInfo, Model, ModelerInfo, ReaderInfo, Term, cli, hookimpl
from extrap_plugins.models import Factor
from extrap_plugins.plugins import PluginHost, set_host

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "stencil.jsonl"
DIST = "broken-dist"


class Batched:
    """A batched modeler returning what ``make(group)`` makes."""

    def __init__(self, make):
        self.make = make

    def fit_group(self, group, *, measure):
        return self.make(group)


def models(group, constant=1.0, terms=(), callpath=None):
    return [Model(callpath=callpath or c.name, metric=m.name, parameters=tuple(p.name for p in group.parameters),
                  constant=constant, terms=terms) for c, m in group.keys]


class Raises:
    def fit(self, X, y):
        raise RuntimeError("the fit fell over")


class WrongShape:
    def fit(self, X, y):
        self.constant_ = 1.0
        return self

    def predict(self, X):
        return np.ones((len(X), 2))


class AllNaN(WrongShape):
    def predict(self, X):
        return np.full(len(X), math.nan)


def boom(*args, **kwargs):
    raise RuntimeError("boom")


def _exporter_that_raises(model_set, out, options):
    raise KeyError("column")


MODELERS = {
    "raises": (lambda: Raises(), "failed: RuntimeError: the fit fell over"),
    "too-few": (lambda: Batched(lambda g: models(g)[:-1]), "returned 6 models for 7 series"),
    "not-models": (lambda: Batched(lambda g: ["3 + p"] * len(g)),
                   "returned a str for main [time], expected an extrap_plugins.Model"),
    "unknown-parameter": (lambda: Batched(lambda g: models(g, terms=(Term(2.0, {"q": Factor(1.0)}),))),
                          "main [time]: a term uses 'q', which is not a parameter (the parameters are n, p)"),
    "nan": (lambda: Batched(lambda g: models(g, constant=math.nan, terms=(Term(math.nan, {"p": Factor(1.0)}),))),
            "main [time]: the model's constant or a coefficient is not a finite number (nan + ...)"),
    "invented-callpath": (lambda: Batched(lambda g: models(g, callpath="nowhere")),
                          "returned a model for nowhere [time] in place of main [time]"),
    "wrong-shape": (lambda: WrongShape(), "main [time]: predict returned shape (25, 2) for 25 points, expected (25,)"),
    "all-nan": (lambda: AllNaN(), "main [time]: predict returned values that are not finite (NaN or infinity)"),
    "factory-raises": (boom, "failed to start: RuntimeError: boom"),
}


class Plugin:
    @hookimpl
    def extrap_modelers(self):
        return [ModelerInfo(name, factory) for name, (factory, _) in MODELERS.items()]

    @hookimpl
    def extrap_exporters(self):
        return [ExporterInfo("raises", _exporter_that_raises)]

    @hookimpl
    def extrap_readers(self):
        return [ReaderInfo("raises", boom, patterns=("*.broken",))]


class HookRaises:
    @hookimpl
    def extrap_exporters(self):
        raise ValueError("no exporters today")


@pytest.fixture
def broken(monkeypatch):
    monkeypatch.setenv("EXTRAP_PLUGINS_NO_AUTOLOAD", "1")
    host = PluginHost(autoload=False)
    host.register(Plugin(), name="broken_plugin", distribution=DIST)
    set_host(host)
    yield host
    set_host(None)


def run(capsys, *argv) -> tuple[int, str]:
    status = cli.main(["model", *map(str, argv), "--executor", "serial", "--progress", "off"])
    captured = capsys.readouterr()
    return status, captured.err


@pytest.mark.parametrize("name", sorted(MODELERS))
def test_a_broken_modeler_is_exit_3_naming_it_and_nothing_is_exported(broken, capsys, tmp_path, name):
    out = tmp_path / "models.json"
    status, err = run(capsys, EXAMPLE, "--modeler", name, "--export", "json", "-o", out)
    expected = MODELERS[name][1]
    lines = [line for line in err.splitlines() if "error" in line]
    assert status == 3
    assert lines == [f"extrap-plugins: error: modeler {name!r} (plugin broken_plugin from distribution {DIST!r})"
                     f"{'' if expected.startswith('failed') else ':'} {expected}"]
    assert not out.exists()


def test_a_broken_exporter_is_exit_3_naming_it(broken, capsys):
    assert run(capsys, EXAMPLE, "--export", "raises") == (
        3, f"extrap-plugins: error: exporter 'raises' (plugin broken_plugin from distribution {DIST!r}) failed: "
           "KeyError: 'column'\n")


def test_a_broken_reader_is_exit_3_naming_it(broken, capsys, tmp_path):
    path = tmp_path / "in.broken"
    path.write_text("anything")
    assert run(capsys, path) == (
        3, f"extrap-plugins: error: reader 'raises' (plugin broken_plugin from distribution {DIST!r}) failed on "
           f"{path}: RuntimeError: boom\n")


def test_a_hook_that_raises_is_exit_3_naming_it(broken, capsys):
    broken.register(HookRaises(), name="hook_raises", distribution=DIST)
    assert run(capsys, EXAMPLE) == (
        3, f"extrap-plugins: error: plugin hook_raises ({DIST}): extrap_exporters failed: ValueError: no exporters "
           "today\n")


def test_sys_exit_at_import_is_a_load_warning_not_the_end_of_the_tool(tmp_path, monkeypatch, capsys):
    from test_plugins import fake_distribution

    fake_distribution(tmp_path, monkeypatch, "exits-dist", {"exits": "exits_at_import"},
                      {"exits_at_import": "import sys\nsys.exit(4)\n"})
    monkeypatch.delenv("EXTRAP_PLUGINS_NO_AUTOLOAD", raising=False)
    monkeypatch.delenv("EXTRAP_PLUGINS_STRICT", raising=False)
    set_host(None)
    try:
        status, err = run(capsys, EXAMPLE)
        assert status == 0
        assert ("extrap-plugins: warning: plugin 'exits' from distribution 'exits-dist' failed to load: "
                "SystemExit: 4") in err
        monkeypatch.setenv("EXTRAP_PLUGINS_STRICT", "1")
        set_host(None)
        status, err = run(capsys, EXAMPLE)
        assert (status, err) == (3, "extrap-plugins: error: plugin 'exits' from distribution 'exits-dist' failed "
                                    "to load: SystemExit: 4\n")
    finally:
        set_host(None)
