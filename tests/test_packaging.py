"""The wheel holds every package: an editable install would hide a package missing from pyproject.toml."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
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
