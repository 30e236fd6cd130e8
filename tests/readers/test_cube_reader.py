"""The cube reader end to end: every fixture folder, Extra-P's values, options, bad input, models."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import pathlib
import shutil
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import cli
from extrap_plugins.errors import ExtrapWarning, InputError
from extrap_plugins.readers import cube_reader

pytest.importorskip("pycubexr")

DATA = pathlib.Path(__file__).parent / "data"
MM_METRICS = ["visits", "time", "min_time", "max_time", "PAPI_FP_OPS", "PAPI_L3_TCM", "PAPI_L2_TCM"]
MM_CALLPATHS = ["main", "main->init_mat", "main->zero_mat", "main->mat_mul"]


@pytest.fixture
def cube(shared_data):
    return shared_data / "cube" / "extrap"


def read_quietly(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean set reads without any warning
        return extrap_plugins.read(path, **options)


def series(experiment, key=lambda name: name):
    """{(call path, metric, point): values of every repetition}."""
    callpaths = np.array([key(c.name) for c in experiment.callpaths], dtype=object)
    metrics = np.array([m.name for m in experiment.metrics], dtype=object)
    found: dict = {}
    for c, m, point, value in zip(callpaths[experiment.callpath_index], metrics[experiment.metric_index],
                                  map(tuple, experiment.coordinates), experiment.value):
        found.setdefault((c, m, point), []).append(value)
    return found


# ------------------------------------------------------------- the fixtures
def test_single_parameter(host, cube):
    e = read_quietly(cube / "single_parameter")
    assert e.reader == "cube" and e.parameter_names == ["x"]
    assert e.points().ravel().tolist() == [1, 10, 25, 50, 100, 250, 500, 1000, 2000]
    assert [c.name for c in e.callpaths] == MM_CALLPATHS
    assert [(m.name, m.unit, m.kind) for m in e.metrics][:3] == [
        ("visits", "occ", "count"), ("time", "sec", "time"), ("min_time", "sec", "time")]
    assert [m.name for m in e.metrics] == MM_METRICS
    assert len(e) == 9 * 4 * 7
    assert e.notes == ["parameters with one value in every run are left out: y=1, z=1",
                       "metrics without data are left out: bytes_put, bytes_get"]
    assert e.constants == {"y": 1.0, "z": 1.0}  # for a design that varies them next
    _, visits = e.values_of("main->init_mat", "visits")
    assert visits.tolist() == [2.0] * 9


def test_multi_parameter(host, cube):
    e = read_quietly(cube / "multi_parameter")
    assert e.parameter_names == ["x", "y", "z"]
    assert e.points().tolist() == [[x, y, z] for x in (1, 10, 25) for y in (1, 10, 25) for z in (1, 10, 25)]
    assert len(e) == 27 * 4 * 7


def test_threaded(host, cube):
    weak = read_quietly(cube / "simple_threaded")
    strong = read_quietly(cube / "simple_threaded", aggregation="strong")
    assert weak.parameter_names == ["f"] and weak.points().ravel().tolist() == [1, 2, 3, 4, 5]
    assert [c.name for c in weak.callpaths] == ["main", "main->foo", "main->bar", "main->omp parallel", "main->zero"]
    assert [m.name for m in weak.metrics] == ["time", "visits"]
    # 4 locations: the sum over them is 4 times their mean
    np.testing.assert_allclose(strong.value, 4 * weak.value, rtol=1e-15)


def test_allowed_formats_with_repetitions(host, cube):
    e = read_quietly(cube / "allowed_formats")
    assert e.points().tolist() == [[1, 1, 1], [1.1, 1.1, 1.1], [10, 1, 1], [20.5, 20.5, 1.5], [21.5, 21.5, 1.15],
                                   [22.5, 22.5, 1.25], [25, 25, 1]]
    _, time = e.values_of("main", "visits")
    repetitions = {tuple(point): sorted(e.repetition[(e.coordinates == point).all(axis=1)
                                                     & (e.callpath_index == 0) & (e.metric_index == 0)].tolist())
                   for point in e.points()}
    # profile1/profile2 in one folder, and mm.x10y1z1.r1 beside x10y1z1, are repetitions of one point
    assert repetitions[(1.0, 1.0, 1.0)] == repetitions[(1.1, 1.1, 1.1)] == repetitions[(10.0, 1.0, 1.0)] == [0, 1]
    assert repetitions[(25.0, 25.0, 1.0)] == [0]


@pytest.mark.parametrize("folder, stray, reason", [
    ("extra_file", "test_file.txt", "neither a run folder nor a .cubex file"),
    ("extra_folder", "_test_folder", "a folder without .cubex files"),
])
def test_stray_entries_are_ignored_with_a_warning_naming_them(host, cube, folder, stray, reason):
    with pytest.warns(ExtrapWarning) as caught:
        e = extrap_plugins.read(cube / folder)
    assert [str(w.message) for w in caught] == [f"{cube / folder / stray}: ignored, {reason}"]
    assert e.parameter_names == ["x"] and e.points().ravel().tolist() == [1, 10]
    assert len(e) == 2 * 4 * 7


def test_no_negative_exclusive_time_from_rounding(host, cube):
    """KERNELS groups the CUDA kernels: its inclusive time minus theirs was -3.5e-17 s at the GPU stream, and its
    model a time of -1.168e-17 s."""
    e = read_quietly(cube / "cuda_callsite_data", metrics=["time"])
    assert e.value.min() == 0.0
    assert e.values_of("lulesh2.0-cuda-scorep8->KERNELS", "time")[1].tolist() == [0.0, 0.0]


def test_runs_of_two_programs_are_an_error_naming_each(host, cube, tmp_path):
    """blast.p8 and kripke.p8 were read as two repetitions of p = 8: the call paths both programs have (PARALLEL,
    MPI_Init...) were averaged over the two, with only a note that some call paths are in 5 of 10 runs."""
    profile = cube / "single_parameter" / "mm.x10y1z1.r1" / "profile.cubex"
    for name in ("blast.p8.r1", "blast.p16.r1", "kripke.p8.r1", "kripke.p16.r1", "p32.r1"):
        (tmp_path / name).mkdir()
        shutil.copy(profile, tmp_path / name)
    with pytest.raises(InputError) as caught:
        extrap_plugins.read(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path}: the runs' names start with 2 programs: blast (blast.p16.r1, blast.p8.r1), kripke "
        f"(kripke.p16.r1, kripke.p8.r1); read each program's runs on its own, or give --reader-option "
        f"pattern=REGEX matching every prefix when they name one program")
    e = extrap_plugins.read(tmp_path, pattern="(blast|kripke)?")
    assert e.points().ravel().tolist() == [8, 16, 32]


def test_score_p_files_beside_the_profile_are_no_stray_entries(host, cube, tmp_path):
    """Score-P writes scorep.cfg and MANIFEST.md (and traces with tracing on) into every experiment directory:
    given one, each was a warning 'ignored, neither a run folder nor a .cubex file'."""
    run = tmp_path / "app.p8.r1"
    (run / "traces").mkdir(parents=True)
    shutil.copy(cube / "single_parameter" / "mm.x10y1z1.r1" / "profile.cubex", run)
    for name in ("scorep.cfg", "MANIFEST.md", "traces.otf2", "traces.def", "notes.txt"):
        (run / name).write_text("x\n")
    with pytest.warns(ExtrapWarning) as caught:
        e = extrap_plugins.read(run, metrics=["time"])
    assert [str(w.message) for w in caught] == [f"{run / 'notes.txt'}: ignored, neither a run folder nor a .cubex file"]
    assert e.parameter_names == ["p"] and len(e) == 4


@pytest.mark.parametrize("folder, other", [
    ("negative_example", "mm.x1y1wrong1 has (x, y, wrong)"),
    ("negative_example2", "mm.y1x1z1 has (y, x, z)"),
])
def test_runs_naming_different_parameters_are_rejected(host, cube, folder, other):
    with pytest.raises(InputError) as caught:
        extrap_plugins.read(cube / folder)
    assert str(caught.value) == (
        f"{cube / folder / 'x10y1z1'}: the runs name different parameters: x10y1z1 has (x, y, z) but {other}; "
        f"every run must name the same parameters in the same order")


def test_cuda_call_site_profiles(host, cube):
    e = read_quietly(cube / "cuda_callsite_data")
    assert e.parameter_names == ["s"] and e.points().ravel().tolist() == [64, 128]
    assert len(e.callpaths) == 5943
    assert [m.name for m in e.metrics] == [
        "visits", "time", "min_time", "max_time", "bytes_put", "gpu_mem_usage", "blocks_per_grid",
        "threads_per_block", "threads_per_kernel", "static_shared_mem", "dynamic_shared_mem", "local_mem_total",
        "registers_per_thread"]
    assert len(set(zip(e.callpath_index.tolist(), e.metric_index.tolist()))) == 23842  # as many series as Extra-P
    assert any("12 call-tree nodes repeat a call path" in note for note in e.notes)


# ------------------------------------------------------- Extra-P's values
REFERENCES = sorted(p for p in DATA.glob("extrap_*.csv.gz") if p.name.endswith(("_exclusive.csv.gz", "_inclusive.csv.gz")))


def parse_reference_name(path):
    stem = path.name[len("extrap_"):-len(".csv.gz")]
    stem, values = stem.rsplit("_", 1)
    for aggregation in ("weak_threaded", "weak", "strong"):
        if stem.endswith("_" + aggregation):
            return stem[: -len(aggregation) - 1], aggregation, values
    raise AssertionError(path)


@pytest.mark.parametrize("reference", REFERENCES, ids=lambda p: p.name[len("extrap_"):-len(".csv.gz")])
def test_values_equal_what_extrap_reads(host, cube, reference):
    """Made by data/make_cube_reference.py with Extra-P 4.2.5; the CUDA set is sampled and its names hashed."""
    fixture, aggregation, values = parse_reference_name(reference)
    e = read_quietly(cube / fixture, aggregation=aggregation, values=values)
    hashed = fixture == "cuda_callsite_data"
    ours = series(e, (lambda name: hashlib.sha1(name.encode()).hexdigest()[:16]) if hashed else (lambda name: name))
    with gzip.open(reference, "rt", newline="") as stream:
        rows = list(csv.reader(stream))
    n_params = len(rows[0]) - 6
    assert rows[0][2:2 + n_params] == e.parameter_names
    # Extra-P pools the values of every location and repetition; we aggregate locations per run first.  The
    # means agree exactly; median, minimum and maximum too where a run has one location or sums them (strong).
    all_statistics = aggregation == "strong" or fixture in ("single_parameter", "multi_parameter", "allowed_formats")
    # Deliberately different: Extra-P averages min_time and max_time over every location, also those that never
    # visited the call path (test_min_and_max_time_come_from_the_locations_that_visited_the_call_path).
    unvisited = {"min_time", "max_time"} if fixture == "cuda_callsite_data" else set()
    for row in rows[1:]:
        key = (row[0], row[1], tuple(float(v) for v in row[2:2 + n_params]))
        if row[1] in unvisited:
            continue
        mean, median, minimum, maximum = (float(v) for v in row[2 + n_params:])
        mine = np.array(ours[key])
        assert mine.mean() == mean, key
        if all_statistics:
            assert (np.median(mine), mine.min(), mine.max()) == (median, minimum, maximum), key
    if not hashed:
        assert len(ours) == len(rows) - 1


def test_inclusive_values_add_up_the_exclusive_ones(host, cube):
    exclusive = read_quietly(cube / "single_parameter", metrics=["time"])
    inclusive = read_quietly(cube / "single_parameter", metrics=["time"], values="inclusive")
    _, main = inclusive.values_of("main", "time")
    total = np.zeros(9)
    for callpath in MM_CALLPATHS:
        total += exclusive.values_of(callpath, "time")[1]
    np.testing.assert_allclose(main, total, rtol=1e-12)


# ------------------------------------------------------------ inputs, options
def test_one_profile(host, cube):
    e = read_quietly(cube / "cuda_callsite_data" / "gpu.s64" / "profile.cubex")
    assert e.parameter_names == ["s"] and e.points().tolist() == [[64.0]]
    assert len(e.callpaths) == 5943


def test_a_list_of_profiles_is_one_set(cube):
    root = cube / "single_parameter"
    files = [root / f"mm.x{x}y1z1.r1" / "profile.cubex" for x in (1, 10, 25)]
    e = cube_reader.read(files, {})
    assert e.parameter_names == ["x"] and e.points().ravel().tolist() == [1, 10, 25]
    assert e.notes[0] == "parameters with one value in every run are left out: y=1, z=1"
    assert e.constants == {"y": 1.0, "z": 1.0}
    assert len(cube_reader.parts(files, {})) == 3


def test_a_run_folder_given_directly_keeps_its_parameters(host, cube):
    e = read_quietly(cube / "allowed_formats" / "mm.x1y1z1")
    assert e.parameter_names == ["x", "y", "z"] and e.points().tolist() == [[1.0, 1.0, 1.0]]
    assert sorted(set(e.repetition.tolist())) == [0, 1]


def test_a_prefix_with_dots(host, cube, tmp_path):
    for x in (1, 10, 25):
        (tmp_path / f"my.app.v2.x{x}.r1").mkdir()
        (tmp_path / f"my.app.v2.x{x}.r1" / "profile.cubex").symlink_to(
            cube / "single_parameter" / f"mm.x{x}y1z1.r1" / "profile.cubex")
    with pytest.raises(InputError, match="cannot read parameters from the folder name 'my.app.v2.x1.r1'"):
        extrap_plugins.read(tmp_path)
    e = read_quietly(tmp_path, pattern="my.app.v2")
    assert e.parameter_names == ["x"] and e.points().ravel().tolist() == [1, 10, 25]


def test_a_mapping_file(host, cube, tmp_path):
    mapping = tmp_path / "runs.csv"
    root = cube / "single_parameter"
    mapping.write_text(f"path,p,n,repetition\n{root / 'mm.x1y1z1.r1'},4,100,1\n"
                       f"{root / 'mm.x10y1z1.r1' / 'profile.cubex'},8,100,1\n{root / 'mm.x25y1z1.r1'},8,100,2\n")
    e = read_quietly(tmp_path, reader="cube", mapping=str(mapping))  # nothing to sniff: say which reader
    assert e.parameter_names == ["p"]  # n has one value and is left out
    coordinates, values = e.values_of("main->init_mat", "PAPI_FP_OPS")
    x, expected = read_quietly(root).values_of("main->init_mat", "PAPI_FP_OPS")
    by_x = dict(zip(x.ravel().tolist(), expected.tolist()))
    assert sorted(zip(coordinates.ravel().tolist(), values.tolist())) == sorted(
        [(4.0, by_x[1.0]), (8.0, by_x[10.0]), (8.0, by_x[25.0])])
    assert sorted(e.repetition.tolist()) == [1] * 56 + [2] * 28  # the mapping's numbers: p=8 twice, 1 and 2


def test_a_mapping_row_pointing_nowhere(host, tmp_path):
    mapping = tmp_path / "runs.csv"
    mapping.write_text("path,p\nmissing_run,4\n")
    with pytest.raises(InputError) as caught:
        extrap_plugins.read(tmp_path, reader="cube", mapping=str(mapping))
    assert str(caught.value) == f"{mapping}:2: no such file or folder: {tmp_path / 'missing_run'}"


def test_metric_and_callpath_selection_happens_in_the_reader(host, cube):
    e = read_quietly(cube / "multi_parameter", metrics=["time", "visits"], callpaths=["main->*"])
    assert [m.name for m in e.metrics] == ["visits", "time"]
    assert [c.name for c in e.callpaths] == MM_CALLPATHS[1:]
    with pytest.raises(InputError) as caught:
        extrap_plugins.read(cube / "single_parameter", metrics=["bytes_put"])
    assert str(caught.value) == f"{cube / 'single_parameter'}: metric 'bytes_put' has no data in any run"
    with pytest.raises(InputError) as caught:
        extrap_plugins.read(cube / "single_parameter", metrics=["cycles"])
    assert str(caught.value) == (f"{cube / 'single_parameter'}: no metric 'cycles'; the metrics are visits, time, "
                                 "min_time, max_time, bytes_put, bytes_get, PAPI_FP_OPS, PAPI_L3_TCM, PAPI_L2_TCM")
    with pytest.raises(InputError, match=r"no call path matches 'solver\*'"):
        extrap_plugins.read(cube / "single_parameter", callpaths=["solver*"])


@pytest.mark.parametrize("options, message", [
    ({"scaling": "weak"}, "the cube reader has no option 'scaling'; its options are: aggregation, values, pattern, "
                          "mapping, parallel, metrics, callpaths (Extra-P's scaling types are "
                          "aggregation=weak|weak_threaded|strong)"),
    ({"depth": "2"}, "the cube reader has no option 'depth'; its options are: aggregation, values, pattern, "
                     "mapping, parallel, metrics, callpaths"),
    ({"mapping": "/nonexistent/runs.csv"}, "/nonexistent/runs.csv: no such mapping file"),
    ({"aggregation": "mean"}, "unknown aggregation 'mean'; expected one of weak, weak_threaded, strong, max, min"),
    ({"values": "both"}, "unknown values 'both'; expected exclusive or inclusive"),
    ({"parallel": "maybe"}, "parallel: expected on or off (true/false, yes/no, 1/0), got 'maybe'"),
])
def test_bad_options(host, cube, options, message):
    with pytest.raises(InputError) as caught:
        extrap_plugins.read(cube / "single_parameter", **options)
    assert str(caught.value) == message


def test_same_experiment_however_the_runs_are_read(host, cube):
    reference = read_quietly(cube / "multi_parameter", executor="serial")
    for kwargs in ({"executor": "process", "jobs": 2}, {"parallel": "off"}):
        other = read_quietly(cube / "multi_parameter", **kwargs)
        assert [c.name for c in other.callpaths] == [c.name for c in reference.callpaths]
        assert [m.name for m in other.metrics] == [m.name for m in reference.metrics]
        for column in ("callpath_index", "metric_index", "coordinates", "repetition", "value"):
            np.testing.assert_array_equal(getattr(other, column), getattr(reference, column))
    direct = cube_reader.read(cube / "multi_parameter", {})
    np.testing.assert_array_equal(direct.value, reference.value)


def test_sniff(cube, tmp_path):
    assert cube_reader.sniff(cube / "single_parameter")
    assert cube_reader.sniff(cube / "cuda_callsite_data" / "gpu.s64")
    assert cube_reader.sniff(cube / "cuda_callsite_data" / "gpu.s64" / "profile.cubex")
    assert not cube_reader.sniff(tmp_path)
    (tmp_path / "notes.txt").write_text("x")
    assert not cube_reader.sniff(tmp_path)
    assert not cube_reader.sniff(tmp_path / "notes.txt")


def copy_runs(cube, folder, names):
    """``folder/NAME/profile.cubex`` for each NAME, a copy of single_parameter's run at x = the value given."""
    for name, x in names.items():
        (folder / name).mkdir(parents=True)
        shutil.copy(cube / "single_parameter" / f"mm.x{x}y1z1.r1" / "profile.cubex", folder / name / "profile.cubex")


def points_and_repetitions(experiment):
    rows = (experiment.callpath_index == 0) & (experiment.metric_index == 0)
    return sorted(zip(experiment.coordinates[rows].ravel().tolist(), experiment.repetition[rows].tolist()))


@pytest.mark.parametrize("layout", [
    "app.p{x}.rep{r}", "p={x}_rep{r}", "app.p{x}_r{r}", "app.p{x}/r{r}", "r{r}/app.p{x}", "p={x}/{r}"])
def test_repetitions_however_the_folders_say_them(host, cube, tmp_path, layout):
    """A repetition is never read as a parameter (app.p8.rep2 gave a parameter 'rep'), and a run folder may hold
    one folder per repetition, or a repetition folder one per run (nested folders were no input at all)."""
    copy_runs(cube, tmp_path, {layout.format(x=x, r=r): x for x in (1, 10, 25) for r in (1, 2)})
    e = read_quietly(tmp_path, metrics=["time"])
    assert e.parameter_names == ["p"]
    assert points_and_repetitions(e) == [(x, r) for x in (1.0, 10.0, 25.0) for r in (1, 2)]


@pytest.mark.parametrize("first, second, repetitions", [
    ("r1", "r2", [1, 2]), ("scorep-20240101_1200_1", "scorep-20240101_1300_2", [0, 1])])
def test_a_run_folder_given_with_its_repetition_folders(host, cube, tmp_path, first, second, repetitions):
    """app.p8 given, holding r1/ and r2/: read as a parameter 'r' of values 1 and 2 and no p (and Score-P's names
    were an error)."""
    copy_runs(cube, tmp_path, {f"app.p8/{first}": 1, f"app.p8/{second}": 10})
    e = read_quietly(tmp_path / "app.p8", metrics=["time"])
    assert e.parameter_names == ["p"] and points_and_repetitions(e) == [(8.0, r) for r in repetitions]


def test_a_run_folder_with_a_profile_and_repetition_folders_reads_them_all(host, cube, tmp_path):
    """app.p{x}/profile.cubex beside app.p{x}/r2/profile.cubex: the folder r2 was passed over without a word."""
    copy_runs(cube, tmp_path, {name.format(x=x): x for x in (1, 10) for name in ("app.p{x}", "app.p{x}/r2")})
    e = read_quietly(tmp_path, metrics=["time"])
    assert points_and_repetitions(e) == [(1.0, 0), (1.0, 1), (10.0, 0), (10.0, 1)]
    assert points_and_repetitions(read_quietly(tmp_path / "app.p1", metrics=["time"])) == [(1.0, 0), (1.0, 1)]


def test_repetition_folders_named_by_score_p_are_numbered_in_order(host, cube, tmp_path):
    copy_runs(cube, tmp_path, {f"app.p{x}/scorep-2024010{r}_1200_{x}": x for x in (1, 10) for r in (1, 2)})
    assert cube_reader.sniff(tmp_path)
    e = read_quietly(tmp_path, metrics=["time"])
    assert points_and_repetitions(e) == [(1.0, 0), (1.0, 1), (10.0, 0), (10.0, 1)]


def test_a_run_folder_named_by_score_p_is_the_error_not_its_profile(host, cube, tmp_path, capsys):
    copy_runs(cube, tmp_path, {"scorep-20240312_1012_1234567890": 1})
    run = tmp_path / "scorep-20240312_1012_1234567890"
    assert cli.main(["model", str(run)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"extrap-plugins: error: {run}: cannot read parameters from the folder name "
        "'scorep-20240312_1012_1234567890': it is Score-P's default name, which holds no parameters (name each run's "
        "folder with SCOREP_EXPERIMENT_DIRECTORY=app.p64.r1); expected <prefix>.<name><value>...[.r<repetition>], "
        "e.g. app.p64.size25.r1 (give --reader-option pattern=PREFIX when the prefix contains dots, or "
        "mapping=FILE.csv)"]


def test_each_metric_says_whether_its_values_are_inclusive(host, cube):
    """The reader knows what it read; the exporters guessed from the measurements and got PAPI_L3_TCM wrong."""
    exclusive = read_quietly(cube / "single_parameter")
    inclusive = read_quietly(cube / "single_parameter", values="inclusive")
    minmax = {"min_time", "max_time"}  # the shortest and longest visit, children included: never summed
    assert {m.name: m.values for m in exclusive.metrics} == {
        name: "inclusive" if name in minmax else "exclusive" for name in MM_METRICS}
    assert {m.name: m.values for m in inclusive.metrics} == dict.fromkeys(MM_METRICS, "inclusive")


def test_shares_of_exclusive_counters_count_the_whole_subtree(host, cube, tmp_path):
    out = tmp_path / "models.json"
    assert cli.main(["model", str(cube / "single_parameter"), "--metric", "PAPI_L3_TCM", "--export", "json",
                     "-o", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["values"] == {"PAPI_L3_TCM": "exclusive"}
    value = {m["callpath"]: m["largest"]["value"] for m in document["models"]}
    share = {m["callpath"]: m["largest"]["share_of_root"] for m in document["models"]}
    assert share["main->init_mat"] == pytest.approx(value["main->init_mat"] / sum(value.values()))  # was 0.254
    # single runs of small counts (init_mat 2 ... 5 misses, main 5 ... 39): judged by their own residuals, init_mat's
    # 4 and 5 misses at x = 500 ... 2000 take a term, 2.485 + 0.001 · x (4.485 at x = 2000), and main's 39 at x = 1
    # one falling to 7.377; the constants 3.222 and 12.67 gave 0.2028
    assert share["main->init_mat"] == pytest.approx(4.485 / (4.485 + 7.377), abs=1e-4)


@pytest.mark.parametrize("options, message", [
    ({"metrics": ["tim"]}, "no metric 'tim'; did you mean 'time'?"),
    ({"callpaths": ["main->init"]}, "no call path matches 'main->init'; the call paths are main, main->init_mat, "
                                    "main->zero_mat, main->mat_mul"),
    ({"callpaths": ["main->initmat"]}, "no call path matches 'main->initmat'; did you mean 'main->init_mat'?"),
])
def test_a_selection_that_misses_says_what_was_meant(host, cube, options, message):
    for path in (cube / "single_parameter", cube / "single_parameter" / "mm.x1y1z1.r1"):
        with pytest.raises(InputError) as caught:
            extrap_plugins.read(path, **options)
        assert str(caught.value) == f"{path}: {message}"


# --------------------------------------------------------------- bad input
def link_run(folder, name, profile):
    (folder / name).mkdir()
    (folder / name / "profile.cubex").symlink_to(profile)


def test_broken_runs_are_skipped_with_a_warning_each_and_the_rest_loads(host, cube, tmp_path):
    for x in (1, 10, 25, 50):
        link_run(tmp_path, f"app.x{x}", cube / "single_parameter" / f"mm.x{x}y1z1.r1" / "profile.cubex")
    good = (cube / "single_parameter" / "mm.x100y1z1.r1" / "profile.cubex").read_bytes()
    for x, content in ((100, good[:9000]), (250, b"hello"), (500, b"")):
        (tmp_path / f"app.x{x}").mkdir()
        (tmp_path / f"app.x{x}" / "profile.cubex").write_bytes(content)
    for parallel in ("on", "off"):
        with pytest.warns(ExtrapWarning) as caught:
            e = extrap_plugins.read(tmp_path, parallel=parallel)
        assert sorted(str(w.message) for w in caught) == [
            f"skipped: {tmp_path / 'app.x100' / 'profile.cubex'}: not a readable CUBE file "
            "(damaged archive: unexpected end of data); is it truncated or corrupt?",
            f"skipped: {tmp_path / 'app.x250' / 'profile.cubex'}: not a readable CUBE file (not a tar archive); "
            "is it truncated or corrupt?",
            f"skipped: {tmp_path / 'app.x500' / 'profile.cubex'}: the file is empty",
        ]
        assert e.points().ravel().tolist() == [1, 10, 25, 50]


def read_recording(path, how):
    """``(experiment or the InputError raised, every warning's text)``, read ``how``: through the host with
    ``parallel`` on or off, or by the reader's own ``read`` (one process)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if how == "read":
                result = cube_reader.read(path, {})
            else:
                result = extrap_plugins.read(path, parallel=how)
        except InputError as error:
            result = error
    return result, [str(w.message) for w in caught]


READINGS = ("on", "off", "read")


def broken_copy(source, run, cut):
    """``run/profile.cubex``: a copy of ``source`` made unreadable by ``cut`` (bytes -> bytes)."""
    run.mkdir()
    (run / "profile.cubex").write_bytes(cut(source.read_bytes()))


def test_broken_runs_are_said_once_per_cause_naming_how_many_and_the_first(host, cube, tmp_path):
    # with parallel=off (and the reader's own read) every broken run was a warning of its own
    for x in (1, 10, 25):
        run = tmp_path / f"app.x{x}"
        run.mkdir()
        shutil.copyfile(cube / "single_parameter" / f"mm.x{x}y1z1.r1" / "profile.cubex", run / "profile.cubex")
    for x in (50, 100, 250):
        broken_copy(cube / "single_parameter" / f"mm.x{x}y1z1.r1" / "profile.cubex", tmp_path / f"app.x{x}",
                    lambda data: data[: len(data) // 2])
    broken_copy(cube / "single_parameter" / "mm.x500y1z1.r1" / "profile.cubex", tmp_path / "app.x500",
                lambda data: b"")
    for how in READINGS:
        e, said = read_recording(tmp_path, how)
        assert said == [
            f"skipped 3 of the 7 runs for the same reason; the first: {tmp_path / 'app.x100' / 'profile.cubex'}: "
            "not a readable CUBE file (damaged archive: unexpected end of data); is it truncated or corrupt?",
            f"skipped: {tmp_path / 'app.x500' / 'profile.cubex'}: the file is empty",
        ], how
        assert e.points().ravel().tolist() == [1, 10, 25]


@pytest.mark.parametrize("how", READINGS)
def test_nothing_readable(host, tmp_path, capsys, how):
    # why, in the error itself: autotune reads its folder quietly, and the warning that said it was not shown;
    # and nothing but the error: parallel=off said each run skipped, then an error that named no folder
    for name in ("app.x1", "app.x2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "profile.cubex").write_bytes(b"")
    first = tmp_path / "app.x1" / "profile.cubex"
    error, said = read_recording(tmp_path, how)
    assert (str(error), said) == (f"{tmp_path}: none of the 2 runs could be read; the first: {first}: the file is "
                                  "empty", [])
    if how != "read":
        assert cli.main(["model", str(tmp_path), "--reader-option", f"parallel={how}"]) == 2
        assert capsys.readouterr().err.splitlines() == [f"extrap-plugins: error: {error}"]
    (tmp_path / "app.x2" / "profile.cubex").unlink()
    (tmp_path / "app.x2").rmdir()
    error, said = read_recording(tmp_path, how)  # one run: its error alone, no "skipped" warning repeating it
    assert (str(error), said) == (f"{first}: the file is empty", [])


def test_a_folder_without_profiles(host, tmp_path):
    (tmp_path / "app.x1").mkdir()
    with pytest.warns(ExtrapWarning, match="a folder without .cubex files"):
        with pytest.raises(InputError) as caught:
            extrap_plugins.read(tmp_path, reader="cube")
    assert str(caught.value) == (f"{tmp_path}: no CUBE profiles here: expected run folders holding .cubex files "
                                 "(<prefix>.<name><value>...[.r<repetition>], e.g. app.p64.size25.r1/profile.cubex) "
                                 "or .cubex files")


def test_metrics_and_call_paths_of_only_some_runs_are_kept_with_warnings(host, cube, tmp_path):
    for x in (1, 10, 25):
        link_run(tmp_path, f"app.x{x}", cube / "single_parameter" / f"mm.x{x}y1z1.r1" / "profile.cubex")
    other = cube / "simple_threaded" / "example.f1" / "cube-example1.cubex"
    link_run(tmp_path, "app.x50", other)
    with pytest.warns(ExtrapWarning) as caught:
        e = extrap_plugins.read(tmp_path)
    assert [str(w.message) for w in caught] == [
        "7 call paths are measured in only some runs and are kept where measured: main->init_mat (3 of 4 runs), "
        "main->zero_mat (3 of 4 runs), main->mat_mul (3 of 4 runs) and 4 more",
        f"metrics 'min_time', 'max_time', 'PAPI_FP_OPS', 'PAPI_L3_TCM', 'PAPI_L2_TCM' have no data in 1 of 4 runs "
        f"({tmp_path / 'app.x50' / 'profile.cubex'}); kept where measured",
    ]
    assert e.values_of("main->init_mat", "time")[0].ravel().tolist() == [1, 10, 25]
    assert e.values_of("main->foo", "time")[0].ravel().tolist() == [50]
    assert e.values_of("main", "time")[0].ravel().tolist() == [1, 10, 25, 50]


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_metrics_without_plain_numbers_are_skipped_with_one_warning_each_even_from_workers(
        host, shared_data, tmp_path, executor):
    profile = shared_data / "cube" / "pycubexr" / "test_only_files" / "cube-values_example.cubex"
    for x in range(1, 6):  # copies: links to one file would be one run read five times, which is refused
        (tmp_path / f"app.x{x}").mkdir()
        shutil.copyfile(profile, tmp_path / f"app.x{x}" / "profile.cubex")
    with pytest.warns(ExtrapWarning) as caught:
        e = extrap_plugins.read(tmp_path, executor=executor, jobs=2)
    assert [str(w.message) for w in caught] == [
        f"metric {name!r} skipped: it holds {kind} values, not plain numbers" for name, kind in (
            ("RATE", "RATE"), ("TAU_ATOMIC", "TAU_ATOMIC"), ("HISTOGRAM5", "HISTOGRAM(5)"),
            ("NDOUBLES10", "NDOUBLES(10)"), ("SCALE_FUNC3", "SCALE_FUNC"), ("COMPLEX", "COMPLEX"),
            ("TAU_ATOMIC2", "TAU_ATOMIC"))]
    assert [m.name for m in e.metrics] == ["INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64",
                                           "DOUBLE", "MINDOUBLE", "MAXDOUBLE"]
    # exclusive INT8 of main is 1 - 5 - 9 at location 0 ... the mean over the 4 locations
    assert e.values_of("main", "INT8")[1].tolist() == [-14.5] * 5


def test_a_value_missing_from_one_runs_index_is_a_zero(host):
    def run(x, rows):
        e = extrap_plugins.Experiment.from_columns(
            ["x"], callpath=[c for c, _, _ in rows], metric=[m for _, m, _ in rows],
            coordinates=[[x]] * len(rows), value=[v for _, _, v in rows], repetition=[0] * len(rows),
            source=f"app.x{x}/profile.cubex")
        return e

    a = run(1, [("main", "time", 1.0), ("main", "bytes", 8.0), ("main->f", "time", 0.5)])
    b = run(2, [("main", "time", 2.0), ("main->f", "time", 1.0), ("main->f", "bytes", 4.0)])
    joined = cube_reader.join_runs([a, b], "set")
    for callpath, expected in (("main", [(1.0, 8.0), (2.0, 0.0)]), ("main->f", [(1.0, 0.0), (2.0, 4.0)])):
        x, values = joined.values_of(callpath, "bytes")
        assert sorted(zip(x.ravel().tolist(), values.tolist())) == expected
    assert joined.notes == ["2 values that a run's CUBE index leaves out (zeros) were filled in as 0"]


# ------------------------------------------------------------------ models
@pytest.mark.parametrize("folder, parameters", [
    ("single_parameter", ("x",)), ("multi_parameter", ("x", "y", "z")), ("simple_threaded", ("f",))])
def test_every_series_gets_a_model(host, cube, folder, parameters):
    experiment = read_quietly(cube / folder)
    models = extrap_plugins.model(experiment)
    assert models.parameters == parameters
    assert len(models.models) == len(set(zip(experiment.callpath_index.tolist(), experiment.metric_index.tolist())))
    if folder == "single_parameter":
        visits = next(m for m in models.models if (m.callpath, m.metric) == ("main->init_mat", "visits"))
        assert visits.predict({"x": 10_000}) == pytest.approx(2.0)


def test_command_line(host, cube, capsys):
    status = cli.main(["model", str(cube / "single_parameter"), "--reader-option", "aggregation=strong",
                       "--metric", "visits", "--executor", "serial"])
    out, err = capsys.readouterr()
    assert status == 0 and err == ""
    table, notes = out.split("\nnotes on reading:\n")
    assert [line.split()[:2] for line in table.splitlines()[2:]] == [[c, "visits"] for c in MM_CALLPATHS]
    assert notes == "  parameters with one value in every run are left out: y=1, z=1\n"
    status = cli.main(["model", str(cube / "negative_example")])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err == (f"extrap-plugins: error: {cube / 'negative_example' / 'x10y1z1'}: the runs name different "
                   "parameters: x10y1z1 has (x, y, z) but mm.x1y1wrong1 has (x, y, wrong); every run must name the "
                   "same parameters in the same order\n")


def test_a_single_broken_profile_is_one_error_line(host, cube, tmp_path, capsys):
    run = tmp_path / "mm.x1y1z1.r1"
    run.mkdir()
    data = (cube / "single_parameter" / "mm.x1y1z1.r1" / "profile.cubex").read_bytes()
    (run / "profile.cubex").write_bytes(data[: len(data) // 2])
    message = (f"extrap-plugins: error: {run / 'profile.cubex'}: not a readable CUBE file (damaged archive: "
               "unexpected end of data); is it truncated or corrupt?")
    for given in (run / "profile.cubex", run, tmp_path):
        assert cli.main(["model", str(given)]) == 2
        assert capsys.readouterr().err.splitlines() == [message]
    for parallel in ("on", "off"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(InputError) as caught:
                extrap_plugins.read(run / "profile.cubex", parallel=parallel)
        assert f"extrap-plugins: error: {caught.value}" == message


def test_a_run_named_by_its_file_says_file_name(host, shared_data, capsys):
    folder = shared_data / "cube" / "pycubexr" / "hw_counter"
    assert cli.main(["model", str(folder)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"extrap-plugins: error: {folder / 'L2_DCM_negative.cubex'}: cannot read parameters from the file name "
        "'L2_DCM_negative': 'DCM_negative' is not a <name><number> pair; expected <prefix>.<name><value>..."
        "[.r<repetition>], e.g. app.p64.size25.r1 (give --reader-option pattern=PREFIX when the prefix contains "
        "dots, or mapping=FILE.csv)"]


# ------------------------------------------------ mapping, links, damaged members
def test_a_mapping_file_not_utf8_is_exit_2_naming_its_line(host, tmp_path, capsys):
    # it was an internal error (exit 1): UnicodeDecodeError
    mapping = tmp_path / "map.csv"
    mapping.write_bytes(b"path,x\nmm.x1y1z1.r1/profile.cubex,\xe9\n")
    assert cli.main(["model", str(tmp_path), "--reader", "cube", "--reader-option", f"mapping={mapping}"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"extrap-plugins: error: {mapping}:2: not UTF-8 text (byte 0xe9); save the mapping file as UTF-8"]


def test_a_run_folder_linked_to_a_sibling_is_refused(host, cube, tmp_path):
    # mm.x1y1z1.r2 -> mm.x1y1z1.r1 read one run as two repetitions
    for x in (1, 10, 25, 50, 100):
        shutil.copytree(cube / "single_parameter" / f"mm.x{x}y1z1.r1", tmp_path / f"mm.x{x}y1z1.r1")
    (tmp_path / "mm.x1y1z1.r2").symlink_to("mm.x1y1z1.r1")
    with pytest.raises(InputError) as caught:
        extrap_plugins.read(tmp_path)
    assert str(caught.value) == (f"{tmp_path / 'mm.x1y1z1.r2' / 'profile.cubex'}: the same file as "
                                 f"{tmp_path / 'mm.x1y1z1.r1' / 'profile.cubex'}: its measurements would count twice")


def test_a_mapping_naming_one_profile_twice_is_refused(host, cube, tmp_path):
    run = cube / "single_parameter" / "mm.x1y1z1.r1"
    mapping = tmp_path / "runs.csv"
    mapping.write_text(f"path,p\n{run},4\n{run / 'profile.cubex'},8\n")
    with pytest.raises(InputError) as caught:
        extrap_plugins.read(tmp_path, reader="cube", mapping=str(mapping))
    profile = run / "profile.cubex"
    assert str(caught.value) == (f"{mapping}:3: {profile}: the same file as {profile}: its measurements would count "
                                 "twice (also on line 2)")


@pytest.mark.parametrize("cut, problem", [
    (lambda data: b"", "its data file 1.data in the archive is empty (cut short or damaged)"),
    (lambda data: b"CUBEX.DAT", "its data file 1.data in the archive does not start with CUBEX.DATA (damaged)"),
    (lambda data: data[: len(data) // 2], "its files 1.index and 1.data in the archive hold fewer bytes than they "
                                          "declare (cut short or damaged: error: unpack requires a buffer of 96 "
                                          "bytes)"),
])
def test_a_damaged_data_member_says_what_is_wrong(host, cube, tmp_path, cut, problem):
    # an empty 1.data said "cannot read the data of metric 'time': AssertionError"
    import io
    import tarfile

    source = cube / "single_parameter" / "mm.x1y1z1.r1" / "profile.cubex"
    run = tmp_path / "mm.x1y1z1.r1"
    run.mkdir()
    with tarfile.open(source) as original, tarfile.open(run / "profile.cubex", "w") as damaged:
        for member in original.getmembers():
            data = original.extractfile(member).read()
            if member.name == "1.data":
                data = cut(data)
            member.size = len(data)
            damaged.addfile(member, io.BytesIO(data))
    with pytest.raises(InputError) as caught:
        extrap_plugins.read(run / "profile.cubex")
    assert str(caught.value) == f"{run / 'profile.cubex'}: cannot read the data of metric 'time': {problem}"


@pytest.mark.parametrize("aggregation", ["weak", "min", "max", "strong"])
def test_min_and_max_time_come_from_the_locations_that_visited_the_call_path(host, cube, aggregation):
    """A location that never entered a call path holds no visit to take the minimum or maximum of: Score-P leaves
    min_time there at its start value (2^64 timer ticks, 7.4e9 s) or 0, and max_time at 0.  Averaged in, the CUDA
    kernels' shortest visit was 2.465e9 s (78 years) and their longest a third of the one GPU stream's."""
    e = read_quietly(cube / "cuda_callsite_data" / "gpu.s64" / "profile.cubex", metrics=["min_time", "max_time"],
                     callpaths=["*->KERNELS", "*->KERNELS->COMPUTE IDLE"], aggregation=aggregation)
    found = {(c, m): v[0] for (c, m, _), v in series(e, lambda name: name.rsplit("->", 1)[1]).items()}
    # COMPUTE IDLE: visits 0, 610, 0 at the master thread and the two GPU streams
    assert found["COMPUTE IDLE", "min_time"] == 1.2542918208359267e-05
    assert found["COMPUTE IDLE", "max_time"] == 0.24076438939562228
    assert found["KERNELS", "min_time"] == found["KERNELS", "max_time"] == 0.0  # visited nowhere: no visit to measure


def test_a_run_copied_into_a_second_input_folder_is_a_warning_naming_both(host, cube, tmp_path):
    # wk1/ and wk3/ each with mm.x10y1z1.r1, the second a copy: read, silently, as a second repetition; a run that
    # only shares its number (two sweeps numbered alike) is a repetition, as before, without a word
    runs = {"wk1": ("mm.x10y1z1.r1", "mm.x100y1z1.r1"), "wk3": ("mm.x10y1z1.r1", "mm.x100y1z1.r1")}
    for folder, names in runs.items():
        for name in names:
            (tmp_path / folder / name).mkdir(parents=True)
    source = cube / "single_parameter"
    shutil.copy(source / "mm.x10y1z1.r1" / "profile.cubex", tmp_path / "wk1" / "mm.x10y1z1.r1")
    shutil.copy(source / "mm.x10y1z1.r1" / "profile.cubex", tmp_path / "wk3" / "mm.x10y1z1.r1")
    shutil.copy(source / "mm.x100y1z1.r1" / "profile.cubex", tmp_path / "wk1" / "mm.x100y1z1.r1")
    shutil.copy(source / "mm.x1000y1z1.r1" / "profile.cubex", tmp_path / "wk3" / "mm.x100y1z1.r1")
    with pytest.warns(ExtrapWarning) as caught:
        extrap_plugins.read([tmp_path / "wk1", tmp_path / "wk3"])
    copies = [str(w.message) for w in caught if "the same bytes" in str(w.message)]
    assert copies == [f"{tmp_path / 'wk3' / 'mm.x10y1z1.r1' / 'profile.cubex'}: the same bytes as "
                      f"{tmp_path / 'wk1' / 'mm.x10y1z1.r1' / 'profile.cubex'}: its measurements count twice, as "
                      "repetitions never run (a copy given by mistake?)"]
