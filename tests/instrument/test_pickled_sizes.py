"""The pickled sizes that lower-case MPI calls count: remembered per kind of scalar, always exact."""

from __future__ import annotations

import pickle
import types

import pytest

from extrap_plugins.instrument import mpi

BOUNDARIES = [0, 1, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**32, 2**39 - 1, 2**39, 2**63, 2**64, 10**40,
              -1, -128, -129, -255, -256, -65536, -2**31 + 1, -2**31, -2**31 - 1, -2**39, -2**39 - 1, -10**40]
OTHERS = [0.0, -1.5, 1e300, float("nan"), float("inf"), True, False, None, "halo", b"\x00" * 10, (1, 2.0),
          {"rank": 3}, [1, 2, 3]]


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_remembered_sizes_equal_the_pickled_sizes_of_every_value(monkeypatch, protocol):
    dumps = lambda obj: pickle.dumps(obj, protocol=protocol)  # noqa: E731 - stands in for MPI.pickle.dumps
    monkeypatch.setattr(mpi, "_MPI", types.SimpleNamespace(pickle=types.SimpleNamespace(dumps=dumps)))
    monkeypatch.setattr(mpi, "_pickled_sizes", {})
    values = BOUNDARIES + [v + d for v in BOUNDARIES for d in (-1, 1)] + OTHERS
    for _ in range(2):  # the first pass fills the memory, the second reads it
        assert [mpi._pickled(v) for v in values] == [len(dumps(v)) for v in values]
    assert set(mpi._pickled_sizes) >= {float, bool, type(None), 0, 8, 9, 16, 17, -1}
