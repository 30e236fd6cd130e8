"""The caliper reader on Caliper configurations other than spot: a per-rank region profile
(``hatchet-region-profile``: ``sum#time.duration`` by region and ``mpi.rank``, written by hand here)."""

from __future__ import annotations

import pytest

import extrap_plugins

pytest.importorskip("caliperreader", reason="the caliper extra (caliper-reader) is not installed")

SIZES = (2, 4, 8, 16, 32)


def region_profile(jobsize: int, times: tuple[float, float, float], ranks: int = 2) -> str:
    """A .cali file as Caliper's hatchet-region-profile writes it: one record per region and rank, the region
    ``solve`` nested in itself (one name at two depths), ``mpi.rank`` an int value attribute, ``jobsize`` a
    global."""
    lines = [
        "__rec=node,id=12,attr=10,data=268,parent=3",  # region: string, nested
        "__rec=node,id=13,attr=8,data=region,parent=12",
        "__rec=node,id=14,attr=10,data=2113,parent=5",  # sum#time.duration: double, as value, aggregatable
        "__rec=node,id=15,attr=8,data=sum#time.duration,parent=14",
        "__rec=node,id=16,attr=10,data=1,parent=1",  # mpi.rank: int, as value
        "__rec=node,id=17,attr=8,data=mpi.rank,parent=16",
        "__rec=node,id=18,attr=10,data=1612,parent=1",  # jobsize: int, global
        "__rec=node,id=19,attr=8,data=jobsize,parent=18",
        "__rec=node,id=20,attr=13,data=main",
        "__rec=node,id=21,attr=13,data=solve,parent=20",
        "__rec=node,id=22,attr=13,data=solve,parent=21",
    ]
    for rank in range(ranks):
        lines += [f"__rec=ctx,ref={node},attr=15=17,data={t}={rank}" for node, t in zip((20, 21, 22), times)]
    lines += [f"__rec=node,id=30,attr=19,data={jobsize}", "__rec=globals,ref=30"]
    return "\n".join(lines) + "\n"


@pytest.fixture
def region_profiles(tmp_path):
    for p in SIZES:
        (tmp_path / f"{p}.cali").write_text(region_profile(p, (1.0, 2.0 * p, 3.0)))
    return tmp_path


def test_the_rank_of_a_per_rank_profile_is_no_metric(host, region_profiles):
    experiment = extrap_plugins.read(region_profiles)
    assert [(m.name, m.values) for m in experiment.metrics] == [("sum#time.duration", "exclusive")]
    assert [c.name for c in experiment.callpaths] == ["main", "main->solve", "main->solve->solve"]
    models = extrap_plugins.model(experiment)
    assert [(m.callpath, m.formula) for m in models] == [
        ("main", "1"), ("main->solve", "2 · jobsize"), ("main->solve->solve", "3")]


def test_a_parameter_named_twice_is_an_option_error_not_a_bad_run(host, region_profiles):
    # it was "none of the 5 runs could be read; the first: parameter names must be unique, got ['jobsize', 'jobsize']"
    with pytest.raises(extrap_plugins.errors.InputError) as caught:
        extrap_plugins.read(region_profiles, parameters="jobsize, jobsize")
    assert str(caught.value) == "option parameters names jobsize twice; name each metadata key once"
