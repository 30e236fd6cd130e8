"""User counters: instrument.count (summed) and instrument.peak (largest), inclusive, through ranks to models."""

from __future__ import annotations

import warnings

import pytest

import extrap_plugins
from extrap_plugins import instrument
from extrap_plugins.instrument import regions
from shim_helpers import mpi_program, records, series


def test_counts_add_and_peaks_keep_the_largest_inclusively(clean):
    with instrument.region("main"):
        instrument.count("flop", 3)
        with instrument.region("a"):
            instrument.count("flop", 10)
            instrument.peak("bytes_used", 400)
        with instrument.region("a"):
            instrument.count("flop", 10)
            instrument.peak("bytes_used", 100)
        with instrument.region("b"):
            instrument.peak("bytes_used", 250)
    counters: dict = {}
    regions.snapshot(counters=counters)
    assert counters == {"main": {"flop": 23.0, "bytes_used": 400.0}, "main->a": {"flop": 20.0, "bytes_used": 400.0},
                        "main->b": {"bytes_used": 250.0}}


def test_bad_counters_are_refused(clean):
    with instrument.region("main"):
        with pytest.raises(ValueError, match="'time' is a metric the shim measures itself"):
            instrument.count("time", 1)
        instrument.count("ops", 1)
        with pytest.raises(ValueError, match="counter 'ops' is a count counter; it cannot also be a peak counter"):
            instrument.peak("ops", 1, unit="")
        with pytest.raises(ValueError, match="must be finite"):
            instrument.count("ops", float("nan"))
        with pytest.raises(TypeError, match="must be a number"):
            instrument.count("ops", "many")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        instrument.count("ops", 5)
    assert [str(w.message) for w in caught] == [
        "counter 'ops' recorded outside any region: ignored (record it inside a region)"]


def test_counters_are_free_when_recording_is_off(clean):
    regions.disable()
    with instrument.region("main"):
        instrument.count("never", 1)
    regions.enable()
    counters: dict = {}
    regions.snapshot(counters=counters)
    assert counters == {}


def test_counters_of_three_ranks_reach_the_record_and_the_reader(mpiexec, tmp_path):
    result = mpi_program(mpiexec, "counters", 3, tmp_path)
    assert result.returncode == 0, result.stderr
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert record["metrics"]["flop"] == {"unit": "flop", "kind": "count", "counter": "count"}
    assert record["metrics"]["bytes_used"] == {"unit": "bytes", "kind": "count", "counter": "peak"}
    # ranks count 100, 200, 300 in work, plus 7 each in main
    assert series(record, "flop", "sum") == {"main": 621, "main->work": 600}
    assert series(record, "flop", "mean") == {"main": 207, "main->work": 200}
    assert series(record, "bytes_used", "max") == {"main": 3000, "main->work": 3000}
    assert series(record, "bytes_used", "mean") == {"main": 2000, "main->work": 2000}
    experiment = extrap_plugins.read(tmp_path / "out.extrap.jsonl")
    coordinates, values = experiment.values_of("main", "flop")
    assert values.tolist() == [207.0]
    assert {m.name: m.unit for m in experiment.metrics}["bytes_used"] == "bytes"
