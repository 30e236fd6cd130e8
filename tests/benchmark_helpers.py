"""A script of ``benchmarks/`` imported as a module by the tests that pin its machinery."""

from __future__ import annotations

import contextlib
import importlib.util
import pathlib
import sys
from types import ModuleType
from typing import Iterator

BENCHMARKS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"


@contextlib.contextmanager
def benchmark_module(script: str, name: str) -> Iterator[ModuleType]:
    """``benchmarks/SCRIPT`` as the module ``name`` (registered, as dataclasses look their module up), with
    ``benchmarks/`` on the import path while the block runs (the scripts import their siblings)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / script)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCHMARKS))
