"""Without the caliper extra, a .cali input is one clear error (exit 2) saying what to install."""

from __future__ import annotations

import sys

from extrap_plugins import cli


def test_missing_caliper_reader_says_what_to_install(host, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "caliperreader", None)  # import caliperreader now raises ImportError
    for name in ("a", "b"):
        (tmp_path / f"{name}.cali").write_text("__rec=node,id=1,attr=8,data=x\n")
    assert cli.main(["model", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == (f"extrap-plugins: error: {tmp_path}: reading .cali files needs caliper-reader: "
                           "pip install 'extrap-plugins[caliper]'")
