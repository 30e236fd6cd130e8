"""Hooks a plugin author gets wrong: each is one warning line naming the plugin, its distribution and the hook.

Each case installs a real distribution (dist-info with an entry point) and runs ``extrap-plugins plugins``: a
hook with arguments, a misspelt hook and functions not marked ``@hookimpl`` would otherwise register nothing
without a word (or, for arguments, print pluggy's message over three lines).
"""

from __future__ import annotations

import inspect
import pathlib

import pytest

from plugin_helpers import Mean, cli, fake_distribution, installed, third_party_rows  # noqa: F401

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "stencil.jsonl"

MEAN = ("import numpy as np\nfrom extrap_plugins import ModelerInfo, hookimpl\n\n" + inspect.getsource(Mean)
        + "\n")  # the module of an installed plugin: its source

CASES = {
    "arguments": (MEAN + "@hookimpl\ndef extrap_modelers(config):\n    return [ModelerInfo('mine', Mean)]\n",
                  "its hook extrap_modelers takes config, but hooks are called without arguments"),
    "misspelt": (MEAN + "@hookimpl\ndef extrap_modeler():\n    return [ModelerInfo('mine', Mean)]\n",
                 "extrap_modeler is marked @hookimpl, but no hook has that name; the hooks are extrap_readers, "
                 "extrap_modelers and extrap_exporters"),
    "unmarked": (MEAN + "def extrap_modelers():\n    return [ModelerInfo('mine', Mean)]\n",
                 "it implements no hook: its extrap_modelers is not marked @extrap_plugins.hookimpl"),
    "empty": ("VERSION = 1\n", "it implements no hook (extrap_readers, extrap_modelers or extrap_exporters, "
                               "marked @extrap_plugins.hookimpl)"),
}


@pytest.mark.usefixtures("installed")
@pytest.mark.parametrize("case", CASES)
def test_a_hook_the_host_cannot_call_is_one_warning_line_naming_the_plugin_and_the_hook(tmp_path, monkeypatch,
                                                                                        capsys, case):
    source, problem = CASES[case]
    fake_distribution(tmp_path, monkeypatch, "hooks-dist", {"mine": f"hooks_{case}"}, {f"hooks_{case}": source})
    monkeypatch.delenv("EXTRAP_PLUGINS_STRICT", raising=False)
    message = f"plugin 'mine' from distribution 'hooks-dist' failed to load: {problem}"
    status, out, err = cli(capsys, "plugins")
    assert (status, err) == (0, f"extrap-plugins: warning: {message}\n")
    assert third_party_rows(out) == [["plugin", "mine", "hooks-dist", f"BROKEN: failed to load: {problem}"]]
    monkeypatch.setenv("EXTRAP_PLUGINS_STRICT", "1")
    assert cli(capsys, "plugins") == (3, "", f"extrap-plugins: error: {message}\n")


@pytest.mark.usefixtures("installed")
def test_an_optional_hook_of_a_later_version_is_not_a_problem(tmp_path, monkeypatch, capsys):
    source = (MEAN + "@hookimpl\ndef extrap_modelers():\n    return [ModelerInfo('mine', Mean)]\n\n"
              "@hookimpl(optionalhook=True)\ndef extrap_later():\n    return []\n")
    fake_distribution(tmp_path, monkeypatch, "later-dist", {"later": "hooks_later"}, {"hooks_later": source})
    status, out, err = cli(capsys, "model", EXAMPLE, "--progress", "off", "--callpath", "main", "--modeler", "mine",
                           "--export", "csv")
    assert (status, err) == (0, "")
    assert out.splitlines()[1].startswith("main,time,mine,3.16")


@pytest.mark.usefixtures("installed")
def test_a_hook_failing_with_several_lines_is_one_warning_line(tmp_path, monkeypatch, capsys):
    source = "from extrap_plugins import hookimpl\n\n@hookimpl\ndef extrap_exporters():\n" \
             "    raise RuntimeError('first line\\n  second line')\n"
    fake_distribution(tmp_path, monkeypatch, "lines-dist", {"lines": "hooks_lines"}, {"hooks_lines": source})
    monkeypatch.delenv("EXTRAP_PLUGINS_STRICT", raising=False)
    assert cli(capsys, "plugins")[2] == (
        "extrap-plugins: warning: plugin lines (lines-dist): extrap_exporters failed: RuntimeError: first line "
        "second line; none of the exporters it registers is used\n")
