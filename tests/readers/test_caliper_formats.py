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


def many_ranks(ranks: int = 64) -> str:
    """A per-rank profile of 64 ranks, its records interleaved as Caliper flushes them rank after rank, among them
    records of other layouts: a region whose name has an escaped comma (``solve\\,2``), a record whose fields come
    in another order, one with a string value attribute (``kernel.variant``) and one of the root (no region)."""
    lines = region_profile(ranks, (1.0, 2.0, 3.0), ranks=0).split("\n")[:-3]  # the nodes, no records, no globals
    lines += [
        "__rec=node,id=23,attr=13,data=solve\\,2,parent=20",
        "__rec=node,id=24,attr=10,data=1,parent=3",  # kernel.variant: string, as value
        "__rec=node,id=25,attr=8,data=kernel.variant,parent=24",
    ]
    for rank in range(ranks):
        lines += [f"__rec=ctx,ref=20,attr=15=17,data={1 + rank / 8}={rank}",
                  f"__rec=ctx,ref=21,attr=15=17,data={2 + rank / 16}={rank}",
                  f"__rec=ctx,ref=22,attr=17=15,data={rank}={3 + rank / 32}",
                  f"__rec=ctx,ref=23,attr=15=17,data={4 + rank}={rank}",
                  f"__rec=ctx,attr=15=17,ref=21,data={5 + rank}={rank}",
                  f"__rec=ctx,ref=20,attr=15=25=17,data={6 + rank}=seq\\,omp={rank}",
                  f"__rec=ctx,attr=15=17,data={7 + rank}={rank}"]
    lines += [f"__rec=node,id=30,attr=19,data={ranks}", "__rec=globals,ref=30"]
    return "\n".join(lines) + "\n"


def test_every_record_of_many_ranks_equals_caliper_reader_in_order(tmp_path):
    # the reader reads records a layout (the same ref nodes and attribute ids) at a time; what it gives must still be
    # caliper-reader's records one by one, in the file's order, escapes and other orders of fields included
    import caliperreader

    from extrap_plugins.readers import caliper_reader

    path = tmp_path / "64.cali"
    path.write_text(many_ranks(64))
    reader = caliperreader.CaliperReader()
    reader.read(str(path))
    expected = [("->".join(r["path"]) if isinstance(r["path"], list) else r["path"], float(r["sum#time.duration"]))
                for r in reader.records if "path" in r]
    experiment = caliper_reader.read_part(str(path), {})
    names = [c.name for c in experiment.callpaths]
    assert names == ["main", "main->solve", "main->solve->solve", "main->solve,2"]
    assert [(names[c], v) for c, v in zip(experiment.callpath_index.tolist(), experiment.value.tolist())] == expected
    assert len(expected) == 6 * 64
    assert expected[:3] == [("main", 1.0), ("main->solve", 2.0), ("main->solve->solve", 3.0)]
    assert experiment.repetition.tolist()[-6:] == [126, 126, 63, 63, 127, 127]  # main and solve twice a rank
    assert "'outside': 64" in experiment.notes[0]


@pytest.mark.parametrize("damage, message", [
    # a value of the region main at rank 40 and of main->solve at rank 3: the record earlier in the file is named
    ({(40, 0): "x", (3, 1): "nan"}, "64.cali:{line}: call path 'main->solve': metric 'sum#time.duration' value 'nan' "
                                    "is not a finite number"),
    ({(3, 1): "x", (3, 0): "1e999"}, "64.cali:{line}: call path 'main': metric 'sum#time.duration' value '1e999' is "
                                     "not a finite number"),
])
def test_the_first_bad_value_in_the_file_is_the_error_across_layouts(host, tmp_path, damage, message):
    lines = many_ranks(64).split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith("__rec=ctx"))
    for (rank, region), value in damage.items():
        number = first + 7 * rank + region
        fields = lines[number].split("=")
        lines[number] = "=".join(fields[:-2] + [value, fields[-1]])
    path = tmp_path / "64.cali"
    path.write_text("\n".join(lines))
    with pytest.raises(extrap_plugins.errors.InputError) as caught:
        caliper_read_one(path)
    line = 1 + first + min(7 * rank + region for rank, region in damage)
    assert str(caught.value) == str(path.parent / message.format(line=line))


def caliper_read_one(path):
    from extrap_plugins.readers import caliper_reader

    return caliper_reader.read_part(str(path), {})
