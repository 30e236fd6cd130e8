"""An empty file named as some reader's files are is that reader's to reject, in the same words for every reader."""

from __future__ import annotations

import pytest

from extrap_plugins import cli, plugins


def patterns() -> list[str]:
    host = plugins.PluginHost(autoload=False)
    return sorted({p for r in host.readers.values() for p in r.info.patterns})


def test_every_reader_pattern_is_covered():
    assert {"*.cali", "*.csv", "*.cubex", "*.extra-p", "*.json", "*.jsonl", "*.talpas", "*.tsv",
            "*.txt"} <= set(patterns())


@pytest.mark.parametrize("pattern", patterns())
def test_an_empty_file_says_it_is_empty(host, tmp_path, capsys, pattern):
    path = tmp_path / pattern.replace("*", "empty")
    path.write_bytes(b"")
    assert cli.main(["model", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"extrap-plugins: error: {path}: the file is empty"]


@pytest.mark.parametrize("name", ["blank.txt", "blank.jsonl", "blank.json", "blank.csv"])
def test_a_file_of_blank_lines_is_empty_too(host, tmp_path, capsys, name):
    path = tmp_path / name
    path.write_text("\n  \n\n")
    assert cli.main(["model", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"extrap-plugins: error: {path}: the file is empty"]


def test_an_empty_file_of_no_known_pattern_is_still_no_readers(host, tmp_path, capsys):
    path = tmp_path / "empty.dat"
    path.write_bytes(b"")
    assert cli.main(["model", str(path)]) == 2
    assert capsys.readouterr().err.splitlines()[0].startswith(
        f"extrap-plugins: error: {path}: no reader recognises this input")
