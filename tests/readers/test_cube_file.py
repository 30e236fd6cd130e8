"""One CUBE file: values equal what cube_dump prints; damaged files are clear errors."""

from __future__ import annotations

import csv
import shutil
import sys

import numpy as np
import pytest

from extrap_plugins.errors import ExtrapWarning, InputError
from extrap_plugins.readers.cube_file import UnsupportedMetricType, open_profile

pytest.importorskip("pycubexr")

# (folder, file) under cube/pycubexr with cube_dump's incl.csv and excl.csv beside the file
DUMPED = [
    ("call_tree_test", "call_tree_test.cubex"),
    ("time.p4.n2000.x1.r0", "profile.cubex"),
    ("blast.p64.r1", "profile.cubex"),
]


def read_dump(path):
    """cube_dump's CSV: cnode id, location, then one column per metric."""
    with open(path, newline="") as stream:
        rows = list(csv.reader(stream))
    header = [cell.strip() for cell in rows[0]]
    data = np.array([[float(cell) for cell in row] for row in rows[1:]])
    return header[2:], data[:, 0].astype(np.int64), data[:, 1].astype(np.int64), data[:, 2:]


@pytest.mark.parametrize("folder, name", DUMPED)
@pytest.mark.parametrize("kind", ["incl", "excl"])
def test_every_value_equals_cube_dump(shared_data, folder, name, kind):
    metric_names, cnodes, locations, expected = read_dump(shared_data / "cube" / "pycubexr" / folder / f"{kind}.csv")
    with open_profile(shared_data / "cube" / "pycubexr" / folder / name) as profile:
        position = {int(c): i for i, c in enumerate(profile.cnode_ids)}
        rows = np.array([position[int(c)] for c in cnodes])
        # the dump covers every node and location exactly once
        assert len(set(zip(rows.tolist(), locations.tolist()))) == profile.tree.n_nodes * profile.n_locations
        metrics = {m.name: m for m in profile.metrics}
        compared = 0
        for column, metric_name in enumerate(metric_names):
            result = profile.location_values(metrics[metric_name], inclusive=kind == "incl")
            if result is None:  # no data in the file: cube_dump prints zeros
                assert not expected[:, column].any(), metric_name
                continue
            values, has_data = result
            # cube_dump prints about six significant digits for time
            np.testing.assert_allclose(values[rows, locations].astype(float), expected[:, column],
                                       rtol=1e-5, atol=1e-12, err_msg=metric_name)
            compared += 1
    assert compared >= 4  # visits, time, min_time, max_time at least


def test_overflowed_hardware_counters_stay_non_negative_and_match_the_per_node_recursion(shared_data):
    """PAPI counters that wrapped below zero: CubeLib reads them as 0 and never lets a difference go negative."""
    path = shared_data / "cube" / "pycubexr" / "hw_counter" / "L2_DCM_negative.cubex"
    from pycubexr import CubexParser

    with open_profile(path) as profile, CubexParser(str(path)) as reference:
        metric = next(m for m in profile.metrics if m.name == "PAPI_L2_DCM")
        cube_metric = reference.get_metric_by_name("PAPI_L2_DCM")
        reference_values = reference.get_metric_values(cube_metric)
        for inclusive in (False, True):
            values, has_data = profile.location_values(metric, inclusive)
            assert values.dtype == np.uint64 and has_data.all()
            assert values.max() < 2**63
            cnodes = {c.id: c for c in reference.all_cnodes()}
            expected = np.array([reference_values.value(cnodes[int(i)], convert_to_exclusive=not inclusive,
                                                        convert_to_inclusive=inclusive)
                                 for i in profile.cnode_ids], dtype=np.float64)
            np.testing.assert_array_equal(values.sum(axis=1, dtype=np.float64), expected)


def test_value_types(shared_data):
    path = shared_data / "cube" / "pycubexr" / "test_only_files" / "cube-values_example.cubex"
    with open_profile(path) as profile:
        assert profile.callpaths == ["main", "main->foo", "main->bar"]
        metrics = {m.name: m for m in profile.metrics}
        inclusive, _ = profile.location_values(metrics["INT8"], inclusive=True)
        assert inclusive.tolist() == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
        exclusive, _ = profile.location_values(metrics["INT8"])
        assert exclusive.tolist() == [[-13, -14, -15, -16], [5, 6, 7, 8], [9, 10, 11, 12]]
        unsigned, _ = profile.location_values(metrics["UINT16"])
        assert unsigned[0].tolist() == [0, 0, 0, 0]
        minimum, _ = profile.location_values(metrics["MINDOUBLE"], inclusive=True)
        assert minimum[0].tolist() == [1.1, 2.2, 3.3, 4.4]
        for name in ("RATE", "TAU_ATOMIC", "HISTOGRAM5", "NDOUBLES10", "SCALE_FUNC3", "COMPLEX"):
            with pytest.raises(UnsupportedMetricType) as caught:
                profile.location_values(metrics[name])
            assert caught.value.message == f"metric {name!r} holds {metrics[name].data_type} values, not plain numbers"


def test_units_and_kinds(shared_data):
    with open_profile(shared_data / "cube" / "pycubexr" / "fastest.p16.size131072.r1" / "profile.cubex") as profile:
        kinds = {m.name: (m.unit, m.kind) for m in profile.metrics}
    assert kinds["time"] == ("sec", "time")
    assert kinds["min_time"] == ("sec", "time")
    assert kinds["visits"] == ("occ", "count")
    assert kinds["bytes_sent"] == ("bytes", "count")
    assert kinds["maximum_heap_memory_allocated"] == ("bytes", "")  # a MAXDOUBLE


def test_a_cube_4_8_file_with_bad_tar_checksums_reads_silently(shared_data, recwarn):
    with open_profile(shared_data / "cube" / "pycubexr" / "bt-mz_sum.p2.r1" / "cube4.8_with_checksum_bug.cubex") as p:
        values, _ = p.location_values(next(m for m in p.metrics if m.name == "time"))
    assert values.shape == (127, 8) and values.sum() > 0
    assert not [w for w in recwarn if "checksum" in str(w.message)]


def test_duplicate_call_paths_are_combined(shared_data):
    """The CUDA profile calls the same regions from different call sites: one call path, values added up."""
    with open_profile(shared_data / "cube" / "extrap" / "cuda_callsite_data" / "gpu.s64" / "profile.cubex") as p:
        assert (p.tree.n_nodes, len(p.callpaths)) == (5955, 5943)
        visits = next(m for m in p.metrics if m.name == "visits")
        per_node, _ = p.location_values(visits)
        per_callpath, has_data = p.callpath_values(visits, inclusive=False, aggregation="strong")
    code = p.callpaths.index("lulesh2.0-cuda-scorep8->_sti__$E")
    nodes = np.flatnonzero(p.callpath_of_node == code)
    assert nodes.size == 4
    assert per_callpath[code] == per_node[nodes].sum() == 4.0


@pytest.mark.parametrize("content, message", [
    (b"", "the file is empty"),
    (b"hello\n", "not a readable CUBE file (not a tar archive); is it truncated or corrupt?"),
])
def test_not_a_cube_file(tmp_path, content, message):
    path = tmp_path / "profile.cubex"
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        open_profile(path)
    assert (caught.value.path, caught.value.message) == (str(path), message)


@pytest.mark.parametrize("size", [2000, 9000])
def test_truncated_file(shared_data, tmp_path, size):
    original = shared_data / "cube" / "extrap" / "single_parameter" / "mm.x10y1z1.r1" / "profile.cubex"
    path = tmp_path / "profile.cubex"
    path.write_bytes(original.read_bytes()[:size])
    with pytest.raises(InputError) as caught:
        open_profile(path)
    assert caught.value.message == ("not a readable CUBE file (damaged archive: unexpected end of data); "
                                    "is it truncated or corrupt?")


def test_a_tar_without_anchor_is_not_a_cube_file(tmp_path):
    source = tmp_path / "content"
    source.mkdir()
    (source / "0.data").write_text("x")
    archive = shutil.make_archive(str(tmp_path / "fake"), "tar", source)
    path = tmp_path / "fake.cubex"
    shutil.move(archive, path)
    with pytest.raises(InputError) as caught:
        open_profile(path)
    assert caught.value.message == ("not a readable CUBE file (no anchor.xml in the archive); "
                                    "is it truncated or corrupt?")


@pytest.mark.parametrize("old, new, problem", [
    # time read visits' integers as doubles (-1.5e-323 s for main), without a word
    ('<metric id="1"', '<metric id="0"', "the file defines metric id 0 twice"),
    # was "cannot read the data of metric 'time': AssertionError"
    ('<cnode id="1" ', '<cnode id="0" ', "the file defines call-tree node id 0 twice"),
])
def test_an_anchor_defining_an_id_twice_is_damaged(shared_data, tmp_path, old, new, problem):
    path = _with_anchor_changed(shared_data, tmp_path, old.encode(), new.encode())
    with pytest.raises(InputError) as caught:
        with open_profile(path) as profile:
            for metric in profile.metrics:
                profile.callpath_values(metric, False, "weak")
    assert caught.value.message == f"not a readable CUBE file ({problem}); is it truncated or corrupt?"


def test_without_pycubexr_the_error_says_what_to_install(shared_data, monkeypatch):
    monkeypatch.setitem(sys.modules, "pycubexr", None)
    path = shared_data / "cube" / "extrap" / "single_parameter" / "mm.x10y1z1.r1" / "profile.cubex"
    with pytest.raises(InputError) as caught:
        open_profile(path)
    assert str(caught.value) == f"{path}: reading CUBE files needs pycubexr: pip install 'extrap-plugins[cube]'"


@pytest.mark.parametrize("aggregation", ["weak", "weak_threaded", "strong", "max", "min"])
@pytest.mark.parametrize("inclusive", [False, True])
def test_locations_in_blocks_give_the_same_values(shared_data, aggregation, inclusive):
    """Large runs are converted a few locations at a time; the result must not depend on it."""
    with open_profile(shared_data / "cube" / "pycubexr" / "blast.p64.r1" / "profile.cubex") as profile:
        assert profile.n_locations == 64
        for metric in profile.metrics:
            whole = profile.callpath_values(metric, inclusive, aggregation)
            if whole is None:
                continue
            blocks = profile.callpath_values(metric, inclusive, aggregation, block_size=profile.tree.n_nodes * 5)
            np.testing.assert_allclose(blocks[0], whole[0], rtol=1e-13, err_msg=metric.name)
            np.testing.assert_array_equal(blocks[1], whole[1])


def test_a_region_named_with_the_separator_keeps_the_call_tree(shared_data, tmp_path):
    # C++'s Ptr::operator->() under main: joined with -> its parent would read as main->Ptr::operator
    path = _with_anchor_changed(shared_data, tmp_path, b"<name>init_mat</name>", b"<name>Ptr::operator-&gt;()</name>")
    with pytest.warns(ExtrapWarning) as caught:
        with open_profile(path) as profile:
            names = list(profile.callpaths)
    assert "main->Ptr::operator-›()" in names and "main->init_mat" not in names
    assert [str(w.message) for w in caught] == [
        "region 'Ptr::operator->()' contains the call-path separator '->': it is called 'Ptr::operator-›()'"]


def _with_anchor_changed(shared_data, tmp_path, old: bytes, new: bytes):
    """A copy of a real profile whose anchor.xml has its first ``old`` replaced by ``new``."""
    import gzip
    import io
    import tarfile

    source = shared_data / "cube" / "extrap" / "single_parameter" / "mm.x10y1z1.r1" / "profile.cubex"
    path = tmp_path / "profile.cubex"
    with tarfile.open(source) as original, tarfile.open(path, "w") as changed:
        for member in original.getmembers():
            data = original.extractfile(member).read()
            if member.name == "anchor.xml":
                data = gzip.decompress(data).replace(old, new, 1)
            member.size = len(data)
            changed.addfile(member, io.BytesIO(data))
    return path
