"""The caliper reader on time series: the snapshots of Caliper's ``timeseries`` service (the profile of each interval
of a loop, numbered by ``timeseries.snapshot``) and the ``timeseries`` channel of the spot controller (written by
hand here, with Hatchet's reading as the reference)."""

from __future__ import annotations

import pathlib
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.readers import caliper_reader

pytest.importorskip("caliperreader", reason="the caliper extra (caliper-reader) is not installed")

SIZES = (2, 4, 8)
#: foo's four snapshots: sum#time.duration.ns (times jobsize), count, min#, max# of each.
SLICES = ((100, 2, 40, 60), (200, 4, 30, 90), (300, 4, 20, 80))


def timeseries_run(jobsize: int) -> str:
    """A .cali file as Caliper's timeseries service writes it (``hatchet-region-profile,timeseries``): per snapshot
    one record per region with ``timeseries.snapshot`` and ``timeseries.starttime``, and the snapshot's own record
    at the loop with its iteration (``iteration#mainloop``, an attribute of class ``iteration``)."""
    lines = [
        "__rec=node,id=12,attr=10,data=268,parent=3",  # region, loop: string, nested
        "__rec=node,id=13,attr=8,data=region,parent=12",
        "__rec=node,id=14,attr=8,data=loop,parent=12",
        "__rec=node,id=16,attr=10,data=85,parent=5",  # double, as value
        "__rec=node,id=17,attr=8,data=sum#time.duration.ns,parent=16",
        "__rec=node,id=18,attr=8,data=min#time.duration.ns,parent=16",
        "__rec=node,id=19,attr=8,data=max#time.duration.ns,parent=16",
        "__rec=node,id=20,attr=8,data=avg#time.duration.ns,parent=16",
        "__rec=node,id=24,attr=8,data=timeseries.starttime,parent=16",
        "__rec=node,id=21,attr=10,data=85,parent=2",  # uint, as value
        "__rec=node,id=22,attr=8,data=count,parent=21",
        "__rec=node,id=23,attr=8,data=timeseries.snapshot,parent=21",
        "__rec=node,id=27,attr=10,data=84,parent=6",  # class.iteration: bool
        "__rec=node,id=28,attr=8,data=class.iteration,parent=27",
        "__rec=node,id=29,attr=28,data=true,parent=1",
        "__rec=node,id=30,attr=10,data=21,parent=29",
        "__rec=node,id=31,attr=8,data=iteration#mainloop,parent=30",
        "__rec=node,id=32,attr=10,data=1612,parent=1",  # jobsize: int, global
        "__rec=node,id=33,attr=8,data=jobsize,parent=32",
        "__rec=node,id=40,attr=13,data=main",
        "__rec=node,id=41,attr=14,data=mainloop,parent=40",
        "__rec=node,id=42,attr=13,data=foo,parent=41",
    ]
    for snapshot, (total, count, low, high) in enumerate(SLICES):
        start = 1700000000.5 + snapshot
        lines += [f"__rec=ctx,ref=42,attr=17=18=19=20=22=23=24,data={total * jobsize}={low}={high}="
                  f"{total * jobsize / count}={count}={snapshot}={start}",
                  f"__rec=ctx,ref=41,attr=17=22=23=24,data=7={count}={snapshot}={start}",
                  f"__rec=ctx,ref=41,attr=23=24=31,data={snapshot}={start}={10 * snapshot + 9}"]
    lines += [f"__rec=node,id=50,attr=33,data={jobsize}", "__rec=globals,ref=50"]
    return "\n".join(lines) + "\n"


@pytest.fixture
def timeseries_runs(tmp_path):
    for p in SIZES:
        (tmp_path / f"{p}.cali").write_text(timeseries_run(p))
    return tmp_path


def values(experiment, callpath, metric):
    """{jobsize: [values of every repetition]} of one series."""
    names = np.array([c.name for c in experiment.callpaths])[experiment.callpath_index]
    metrics = np.array([m.name for m in experiment.metrics])[experiment.metric_index]
    found: dict = {}
    for c, m, point, value in zip(names, metrics, experiment.coordinates[:, 0], experiment.value):
        if (c, m) == (callpath, metric):
            found.setdefault(int(point), []).append(float(value))
    return found


def test_the_snapshots_of_a_run_are_one_measurement_of_its_totals(host, timeseries_runs):
    # they were averaged as repetitions: foo's sum#time.duration.ns at jobsize 2 was [200, 400, 600] (mean 400),
    # a third of the run's 1200, and the snapshot number and its start time were metrics
    experiment = extrap_plugins.read(timeseries_runs)
    assert [m.name for m in experiment.metrics] == [
        "sum#time.duration.ns", "min#time.duration.ns", "max#time.duration.ns", "avg#time.duration.ns", "count"]
    assert values(experiment, "main->mainloop->foo", "sum#time.duration.ns") == {2: [1200.0], 4: [2400.0],
                                                                               8: [4800.0]}
    assert values(experiment, "main->mainloop->foo", "count") == {2: [10.0], 4: [10.0], 8: [10.0]}
    assert values(experiment, "main->mainloop->foo", "min#time.duration.ns")[2] == [20.0]
    assert values(experiment, "main->mainloop->foo", "max#time.duration.ns")[2] == [90.0]
    assert values(experiment, "main->mainloop->foo", "avg#time.duration.ns") == {2: [120.0], 4: [240.0],
                                                                               8: [480.0]}
    assert values(experiment, "main->mainloop", "sum#time.duration.ns")[2] == [21.0]
    assert ("27 record(s) of Caliper's timeseries snapshots summed per call path into each run's total (min# the "
            "smallest, max# the largest, avg# weighted by count), as Hatchet sums them") in experiment.notes
    models = extrap_plugins.model(experiment, metrics=["sum#time.duration.ns"])
    assert models.get("main->mainloop->foo", "sum#time.duration.ns").formula == "600 · jobsize"


def test_the_totals_equal_hatchet_s(host, timeseries_runs):
    ht = pytest.importorskip("hatchet", reason="the thicket extra (llnl-thicket, with Hatchet) is not installed")
    experiment = extrap_plugins.read(timeseries_runs)
    for p in SIZES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = ht.GraphFrame.from_caliperreader(str(timeseries_runs / f"{p}.cali")).dataframe
        rows = {"->".join(n.frame["name"] for n in node.path()): row for node, row in frame.iterrows()}
        for metric in ("sum#time.duration.ns", "count"):
            assert values(experiment, "main->mainloop->foo", metric)[p] == [rows["main->mainloop->foo"][metric]]


def spot_timeseries(path, target):
    """A spot profile with the ``timeseries`` option: LULESH's region profile and two records of the spot
    controller's ``timeseries`` channel (per block of the loop ``lulesh.cycle``: the block, its iterations and time),
    as Caliper's SpotController writes them."""
    text = path.read_text()
    extra = "\n".join([
        "__rec=node,id=300,attr=10,data=65,parent=1",
        "__rec=node,id=301,attr=8,data=block,parent=300",
        "__rec=node,id=302,attr=13,data=Iterations,parent=1",
        "__rec=node,id=303,attr=10,data=65,parent=302",
        "__rec=node,id=304,attr=8,data=max#sum#loop.iterations,parent=303",
        "__rec=node,id=305,attr=13,data=Time (s),parent=83",
        "__rec=node,id=306,attr=10,data=65,parent=305",
        "__rec=node,id=307,attr=8,data=max#scale#time.duration.ns,parent=306",
        "__rec=node,id=308,attr=15,data=timeseries",
        "__rec=node,id=309,attr=49,data=lulesh.cycle",
        "__rec=ctx,ref=309=308,attr=301=304=307,data=0=5=0.5",
        "__rec=ctx,ref=309=308,attr=301=304=307,data=5=5=0.75",
    ]) + "\n"
    target.write_text(text + extra)
    return target


def test_the_spot_timeseries_channel_is_left_out_as_hatchet_does(host, mpi_scaling_cali, tmp_path):
    lulesh = [pathlib.Path(f) for f in mpi_scaling_cali[:2]]
    # its blocks were a root call path 'lulesh.cycle' with the metrics block, Iterations and Time (s), averaged
    files = [spot_timeseries(f, tmp_path / f.name) for f in lulesh]
    experiment = extrap_plugins.read(files)
    plain = extrap_plugins.read(lulesh)
    assert [c.name for c in experiment.callpaths] == [c.name for c in plain.callpaths]
    assert [m.name for m in experiment.metrics] == [m.name for m in plain.metrics]
    assert np.array_equal(experiment.value, plain.value)
    assert "4 record(s) of Caliper's spot timeseries channel left out, as Hatchet and Thicket do" in experiment.notes


@pytest.mark.parametrize("attribute, parts, total", [
    ("sum#time.duration", [(2.0, 1), (3.0, 3)], 5.0),
    ("count", [(2.0, 2), (3.0, 3)], 5.0),
    ("min#time.duration", [(2.0, 1), (3.0, 3)], 2.0),
    ("max#time.duration", [(2.0, 1), (3.0, 3)], 3.0),
    ("alloc.region.highwatermark", [(7.0, 1), (5.0, 3)], 7.0),  # memory's peak, not a sum of peaks
    ("avg#time.duration", [(2.0, 1), (1.0, 3)], 1.25),  # weighted by count
    ("avg#time.duration", [(2.0, 1), (1.0, None)], 1.5),  # a snapshot without count: the plain mean
])
def test_each_aggregate_keeps_its_meaning_over_the_snapshots(attribute, parts, total):
    assert caliper_reader.snapshot_total(attribute, parts) == total
