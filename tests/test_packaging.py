"""The wheel holds every package: an editable install would hide a package missing from pyproject.toml."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

ROOT = pathlib.Path(__file__).resolve().parents[1]


def settings() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def packages_on_disk() -> set[str]:
    """Every folder with an ``__init__.py`` under the mapped package folders, as a dotted name."""
    found = set()
    for name, folder in settings()["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            relative = init.parent.relative_to(base).parts
            if "__pycache__" not in relative:
                found.add(".".join((name, *relative)))
    return found


def test_every_package_folder_is_listed_in_pyproject():
    assert packages_on_disk() == set(settings()["packages"])


@pytest.mark.slow
def test_the_built_wheel_holds_every_module_and_asset(tmp_path):
    pytest.importorskip("wheel", reason="building a wheel needs the test extra (setuptools, wheel)")
    source = tmp_path / "source"  # a copy: setuptools leaves build/ and *.egg-info beside the sources
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path), str(source)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("extrap_plugins-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = set()
    for name, folder in settings()["package-dir"].items():
        for module in (ROOT / folder).rglob("*.py"):
            relative = module.relative_to(ROOT / folder)
            expected.add("/".join((*name.split("."), *relative.parts)))
    for package, patterns in settings()["package-data"].items():
        for pattern in patterns:
            expected.add("/".join((*package.split("."), pattern)))
    assert sorted(expected - names) == []


def readme_block(marker: str) -> str:
    """The first code block after ``marker`` in README.md."""
    return (ROOT / "README.md").read_text().split(marker, 1)[1].split("```")[1]


def test_the_readme_layout_names_every_module():
    """``interrupts.py`` (the commands' signal handling) was missing from the README's layout of the package."""
    layout = readme_block("## Layout")
    for folder in ("", "modelers", "exporters"):
        for module in sorted((ROOT / "extrap_plugins" / folder).glob("*.py")):
            assert module.name in layout, f"{module.relative_to(ROOT)} is not in the README's layout"


def test_the_quick_start_prints_the_table_the_readme_shows(host, capsys):  # host: the built-in plugins only
    from extrap_plugins.cli import main

    assert main(["model", str(ROOT / "examples" / "stencil.jsonl")]) == 0
    shown = readme_block("<!-- example-output -->").strip("\n")
    assert capsys.readouterr().out.rstrip("\n") == shown


@pytest.mark.parametrize("script, example", [("make_stencil_example.py", "stencil.jsonl"),
                                             ("make_isoefficiency_example.py", "isoefficiency.csv")])
def test_the_shipped_examples_are_what_their_scripts_write(tmp_path, script, example):
    """The README names each script as the maker of its example, which documents the true functions."""
    shutil.copy(ROOT / "examples" / script, tmp_path)
    subprocess.run([sys.executable, str(tmp_path / script)], check=True, capture_output=True, timeout=60)
    assert (tmp_path / example).read_bytes() == (ROOT / "examples" / example).read_bytes()


@pytest.mark.slow
def test_the_source_distribution_holds_the_examples_docs_tests_and_benchmarks(tmp_path):
    """The README's quick start reads ``examples/stencil.jsonl`` and shows ``docs/*.png``: a user of the sdist has
    them too."""
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__"))
    subprocess.run([sys.executable, "-c", "from setuptools import build_meta as b; b.build_sdist('dist')"],
                   cwd=source, check=True, capture_output=True)
    (sdist,) = (source / "dist").glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for wanted in ("examples/stencil.jsonl", "examples/jacobi/jacobi.py", "docs/report.png", "tests/conftest.py",
                   "benchmarks/design.py", "README.md", "pyproject.toml"):
        assert wanted in names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
