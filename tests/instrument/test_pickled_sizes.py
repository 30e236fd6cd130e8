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


@pytest.mark.parametrize("protocol", [2, 3, 5])
def test_numpy_numbers_are_remembered_by_type_where_their_size_is_fixed(monkeypatch, protocol):
    # comm.allreduce(np.sum(a)) pickled its numpy float twice per call, 10 µs above the raw call
    np = pytest.importorskip("numpy")
    dumps = lambda obj: pickle.dumps(obj, protocol=protocol)  # noqa: E731 - stands in for MPI.pickle.dumps
    fake = types.SimpleNamespace(pickle=types.SimpleNamespace(dumps=dumps, PROTOCOL=protocol))
    monkeypatch.setattr(mpi, "_MPI", fake)
    monkeypatch.setattr(mpi, "_pickled_sizes", {})
    monkeypatch.setattr(mpi, "_fixed_size_kinds", {})
    values = [kind(v) for kind in (np.float64, np.float32, np.int64, np.uint8, np.bool_, np.complex128)
              for v in (0, 1, 7)] + [np.float64("nan"), np.float64(-1e300), np.int64(-2**63), np.timedelta64(3, "ms"),
                                     np.timedelta64(3, "s"), np.str_("halo")]
    for _ in range(2):
        assert [mpi._pickled(v) for v in values] == [len(dumps(v)) for v in values]
    remembered = {np.float64, np.float32, np.int64, np.uint8, np.bool_, np.complex128}
    assert set(mpi._pickled_sizes) == (remembered if protocol >= 3 else set())
