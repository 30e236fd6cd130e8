"""The caliper reader against caliper-reader and Thicket on LLNL's own data: every value, parameters, bad input."""

from __future__ import annotations

import json
import math
import shutil
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import cli
from extrap_plugins.errors import ExtrapWarning, InputError
from extrap_plugins.readers import caliper_reader

caliperreader = pytest.importorskip("caliperreader", reason="the caliper extra (caliper-reader) is not installed")

LULESH_RANKS = (27, 64, 125, 216, 343)


@pytest.fixture(scope="module")
def thicket_data(shared_data):
    folder = shared_data / "caliper" / "thicket"
    if not folder.is_dir():
        pytest.skip(f"Thicket's Caliper data is not in {folder}")
    return folder


@pytest.fixture(scope="module")
def lulesh(thicket_data):
    return [thicket_data / "mpi_scaling_cali" / f"{n}_cores.cali" for n in LULESH_RANKS]


@pytest.fixture(scope="module")
def rajaperf(thicket_data):
    return sorted((thicket_data / "rajaperf").rglob("*.cali"))


def series(experiment):
    """{(call path, metric, point): [values of every repetition]}."""
    callpaths = np.array([c.name for c in experiment.callpaths], dtype=object)
    metrics = np.array([m.name for m in experiment.metrics], dtype=object)
    found: dict = {}
    for c, m, point, value in zip(callpaths[experiment.callpath_index], metrics[experiment.metric_index],
                                  map(tuple, experiment.coordinates), experiment.value):
        found.setdefault((c, m, point), []).append(value)
    return found


def expected_from_caliper_reader(files, parameter):
    """What caliper-reader itself gives: {(call path, alias, point): [values]} over region records."""
    expected: dict = {}
    for file in files:
        reader = caliperreader.CaliperReader()
        reader.read(str(file))
        point = (float(reader.globals[parameter]),)
        for record in reader.records:
            if "path" not in record:
                continue
            path = record["path"]
            callpath = path if isinstance(path, str) else "->".join(path)
            for name, raw in record.items():
                if name == "path":
                    continue
                attribute = reader.attribute(name)
                if not attribute.is_value() or name == "min#min#aggregate.slot":
                    continue
                alias = attribute.get("attribute.alias") or name
                expected.setdefault((callpath, alias, point), []).append(float(raw))
    return expected


# ------------------------------------------------------------------ values
def test_lulesh_every_value_equals_caliper_reader(host, lulesh):
    experiment = extrap_plugins.read(lulesh)
    assert experiment.reader == "caliper"
    assert experiment.parameter_names == ["jobsize"]
    assert len(experiment.callpaths) == 45
    assert [(m.name, m.unit) for m in experiment.metrics] == [
        ("Min time/rank", "sec"), ("Max time/rank", "sec"), ("Avg time/rank", "sec"), ("Total time", "sec")]
    found = series(experiment)
    expected = expected_from_caliper_reader(lulesh, "jobsize")
    assert len(expected) == 45 * 4 * 5
    assert found == expected  # every region, metric and run, exactly
    assert sorted({p for _, _, p in found}) == [(float(n),) for n in LULESH_RANKS]
    assert found[("MPI_Allreduce", "Avg time/rank", (27.0,))] == [0.000026]


def test_lulesh_folder_equals_list_and_notes_say_what_was_taken(host, lulesh):
    from_folder = extrap_plugins.read(lulesh[0].parent)
    assert series(from_folder) == series(extrap_plugins.read(lulesh))
    notes = "\n".join(from_folder.notes)
    assert "parameters from run metadata: jobsize" in notes
    assert "mpi.world.size, numhosts vary with jobsize: left out" in notes
    assert "figure_of_merit varies but is not integer-valued" in notes
    assert "5 record(s) outside any region" in notes


def test_rajaperf_repetitions_equal_caliper_reader(host, rajaperf):
    assert len(rajaperf) == 5
    experiment = extrap_plugins.read(rajaperf[0].parents[3])  # rajaperf/quartz: both problem sizes
    assert experiment.parameter_names == ["ProblemSizeRunParam"]
    found = series(experiment)
    assert found == expected_from_caliper_reader(rajaperf, "ProblemSizeRunParam")
    # Four runs at 1048576 are repetitions, one run at 2097152.
    assert len(found[("RAJAPerf->Stream->Stream_TRIAD", "Avg time/rank", (1048576.0,))]) == 4
    assert len(found[("RAJAPerf->Stream->Stream_TRIAD", "Avg time/rank", (2097152.0,))]) == 1
    assert {m.name for m in experiment.metrics} >= {"Avg time/rank", "Bytes/Rep", "Flops/Rep", "Reps"}
    assert "Node order" not in {m.name for m in experiment.metrics}


@pytest.mark.parametrize("dataset, parameter, n_metrics", [("lulesh", "jobsize", 4),
                                                            ("rajaperf", "ProblemSizeRunParam", 11)])
def test_values_equal_thicket_reader(host, request, dataset, parameter, n_metrics):
    pytest.importorskip("thicket", reason="the thicket extra (llnl-thicket) is not installed")
    from thicket import Thicket

    files = request.getfixturevalue(dataset)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tk = Thicket.from_caliperreader([str(f) for f in files], disable_tqdm=True)
    experiment = extrap_plugins.read(files)
    found = series(experiment)
    value_of = tk.metadata[parameter].to_dict()
    metrics = [m.name for m in experiment.metrics]
    assert sorted(metrics) == sorted(tk.exc_metrics + tk.inc_metrics) and len(metrics) == n_metrics
    thickets: dict = {}
    for (node, profile), row in tk.dataframe.iterrows():
        callpath = "->".join(n.frame["name"] for n in node.path())
        for metric in metrics:
            thickets.setdefault((callpath, metric, (float(value_of[profile]),)), []).append(row[metric])
    assert {k: sorted(v) for k, v in found.items()} == {k: sorted(v) for k, v in thickets.items()}


# ---------------------------------------------------------------- options
def test_named_parameters_and_selection(host, lulesh):
    experiment = extrap_plugins.read(lulesh, parameters="mpi.world.size,problem_size",
                                     metrics=["Avg*"], callpaths=["main->lulesh.cycle*"])
    assert experiment.parameter_names == ["mpi.world.size", "problem_size"]
    assert [m.name for m in experiment.metrics] == ["Avg time/rank"]
    assert all(c.name.startswith("main->lulesh.cycle") for c in experiment.callpaths)
    assert sorted(set(map(tuple, experiment.coordinates))) == [(float(n), 30.0) for n in LULESH_RANKS]


def test_unknown_option_lists_the_known(host, lulesh):
    with pytest.raises(InputError, match="no option 'aggregation'; its options are: parameters, metrics, callpaths"):
        extrap_plugins.read(lulesh, aggregation="max")


def test_one_run_has_nothing_to_model(host, lulesh):
    with pytest.raises(InputError, match="27_cores.cali: one run: nothing varies"):
        extrap_plugins.read(lulesh[0])


# ---------------------------------------------------------------- bad input
def test_missing_key_skips_that_run_naming_it(host, lulesh, tmp_path):
    runs = [shutil.copy(f, tmp_path) for f in lulesh]
    broken = tmp_path / "64_cores.cali"
    broken.write_text(broken.read_text().replace("jobsize", "jobsiz"))
    with pytest.warns(ExtrapWarning, match=r"skipped: .*64_cores.cali: no metadata key 'jobsize' in this run"):
        experiment = extrap_plugins.read(runs, parameters="jobsize")
    assert sorted({p for _, _, p in series(experiment)}) == [(27.0,), (125.0,), (216.0,), (343.0,)]


LULESH_KEYS = ("compilerversion, elapsed_time, figure_of_merit, iterations, {jobsize}, mpi.world.size, num_regions, "
               "numhosts, problem_size, region_balance, region_cost, spot.format.version, threads")


def read_in_one_process(path, **options):
    """``(experiment or the InputError raised, every warning's text)`` of the reader's own ``read``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = caliper_reader.read(path, {k: str(v) for k, v in options.items()})
        except InputError as error:
            result = error
    return result, [str(w.message) for w in caught]


def test_runs_skipped_for_one_cause_are_one_warning_in_one_process(host, lulesh, tmp_path):
    # read() warned once per run
    for f in lulesh:
        shutil.copy(f, tmp_path)
    for n in (64, 216):
        run = tmp_path / f"{n}_cores.cali"
        run.write_text(run.read_text().replace("jobsize", "jobsiz"))
    experiment, said = read_in_one_process(tmp_path, parameters="jobsize")
    assert said == [f"skipped 2 of the 5 runs for the same reason; the first: {tmp_path / '216_cores.cali'}: no "
                    f"metadata key 'jobsize' in this run (its numeric keys: {LULESH_KEYS.format(jobsize='jobsiz')})"]
    assert sorted({p for _, _, p in series(experiment)}) == [(27.0,), (125.0,), (343.0,)]


def test_no_run_readable_in_one_process_is_one_error_naming_the_count_and_the_first(host, lulesh, tmp_path):
    # read() raised the first run's error alone, as if the folder held one run
    for f in lulesh:
        shutil.copy(f, tmp_path)
    error, said = read_in_one_process(tmp_path, parameters="nope")
    assert (str(error), said) == (
        f"{tmp_path}: none of the 5 runs could be read; the first: {tmp_path / '125_cores.cali'}: no metadata key "
        f"'nope' in this run (its numeric keys: {LULESH_KEYS.format(jobsize='jobsize')})", [])


def test_non_numeric_parameter_skips_that_run(host, lulesh, tmp_path):
    runs = [shutil.copy(f, tmp_path) for f in lulesh]
    broken = tmp_path / "125_cores.cali"
    broken.write_text(broken.read_text().replace("data=125,", "data=many,"))  # mpi.world.size (int) and jobsize
    with pytest.warns(ExtrapWarning, match=r"skipped: .*125_cores.cali:133: metadata mpi\.world\.size='many' is not "
                                           r"a number, though the file types it int$"):
        experiment = extrap_plugins.read(runs, parameters="jobsize")
    assert sorted({p for _, _, p in series(experiment)}) == [(27.0,), (64.0,), (216.0,), (343.0,)]


@pytest.mark.parametrize("content, message", [
    ("p,value\n1,2\n", r"foreign.cali:1: not a Caliper .cali record"),
    ("", "foreign.cali: the file is empty$"),
    ("__rec=node,id=12,attr=10,data=64,parent=3\n__rec=nod", "foreign.cali:2: truncated: the last line"),
    # cut within the first characters of a record: was "not a Caliper .cali record ...; is this the right reader?"
    ("__rec=node,id=12,attr=10,data=64,parent=3\n__re", "foreign.cali:2: truncated: the last line is incomplete$"),
])
def test_foreign_or_truncated_file(host, tmp_path, content, message):
    path = tmp_path / "foreign.cali"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        extrap_plugins.read(path)


def test_truncated_profile_without_metadata(host, lulesh, tmp_path):
    data = lulesh[0].read_bytes()
    cut = data[: data.rfind(b"\n", 0, len(data) // 2) + 1]  # whole lines, but the globals are at the end
    path = tmp_path / "cut.cali"
    path.write_bytes(cut)
    with pytest.raises(InputError, match="cut.cali: no run metadata"):
        extrap_plugins.read(path)


def test_command_line_exit_2_naming_the_file(host, tmp_path, capsys):
    path = tmp_path / "bad.cali"
    path.write_text("not caliper\n")
    assert cli.main(["model", str(path), "--reader", "caliper"]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == f"extrap-plugins: error: {path}:1: not a Caliper .cali record " \
                          "(lines start with __rec=); is this the right reader?"


def test_command_line_models_lulesh(host, lulesh, capsys):
    status = cli.main(["model", str(lulesh[0].parent), "--metric", "Avg time/rank", "--callpath", "MPI_Allreduce"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "MPI_Allreduce" in out and "jobsize" in out


def test_sniff(lulesh, tmp_path):
    assert caliper_reader.sniff(lulesh[0])
    assert caliper_reader.sniff(lulesh[0].parent)
    (tmp_path / "x.csv").write_text("p,value\n")
    assert not caliper_reader.sniff(tmp_path / "x.csv")
    assert not caliper_reader.sniff(tmp_path)


def test_choose_parameters_rules():
    runs = [{"jobsize": n, "mpi.world.size": n, "numhosts": h, "elapsed_time": t, "threads": 1.0, "x": 2.5 * n}
            for n, h, t in ((27.0, 1.0, 47.2), (64.0, 2.0, 55.1), (125.0, 4.0, 56.2))]
    taken, notes = caliper_reader.choose_parameters(runs)
    assert taken == ["jobsize"]
    assert any("elapsed_time" in n and "date or time" in n for n in notes)
    assert any("x varies but is not integer-valued" in n for n in notes)
    runs[1]["problem"] = 3.0
    assert "problem" not in caliper_reader.choose_parameters(runs)[0]
    assert not math.isnan(runs[0]["jobsize"])


# ------------------------------------------------------- damaged records
def run_cli(capsys, *args) -> tuple[int, list[str]]:
    status = cli.main(["model", *map(str, args)])
    return status, capsys.readouterr().err.splitlines()


def without_line(path, number: int, target):
    lines = path.read_text().split("\n")
    target.write_text("\n".join(lines[:number - 1] + lines[number:]))
    return target


@pytest.mark.parametrize("number, message", [
    (4, "node 84 refers to parent node 83, which is not defined"),
    (5, "node 85 refers to parent node 84, which is not defined"),
    (1, "node 13 refers to parent node 12, which is not defined"),
    (22, "ctx record refers to node 101, which is not defined"),
])
def test_a_deleted_line_is_exit_2_naming_the_line_and_the_missing_node(host, lulesh, tmp_path, capsys, number,
                                                                       message):
    path = without_line(lulesh[0], number, tmp_path / "27.cali")
    assert run_cli(capsys, path) == (2, [f"extrap-plugins: error: {path}:{number}: {message}"])


def test_a_damaged_run_in_a_folder_is_skipped_naming_its_line(host, lulesh, tmp_path):
    for f in lulesh:
        shutil.copy(f, tmp_path)
    without_line(lulesh[0], 4, tmp_path / "27_cores.cali")
    with pytest.warns(ExtrapWarning) as caught:
        experiment = extrap_plugins.read(tmp_path)
    assert f"skipped: {tmp_path / '27_cores.cali'}:4: node 84 refers to parent node 83, which is not defined" in [
        str(w.message) for w in caught]
    assert sorted({p for _, _, p in series(experiment)}) == [(64.0,), (125.0,), (216.0,), (343.0,)]


@pytest.mark.parametrize("old, new, message", [
    ("__rec=node,id=84,", "__rec=nodf,id=84,", "unknown record kind 'nodf' (Caliper writes node, ctx and globals "
                                               "records)"),
    ("__rec=node,id=84,", "__rec=node,id=8x4,", "node record: id '8x4' is not a node number"),
    ("__rec=node,id=84,attr=13,", "__rec=node,id=84,attr=12,", "node 84 refers to attribute 12, which is not an "
                                                               "attribute"),
    ("__rec=node,id=85,attr=10,data=65,", "__rec=node,id=85,attr=10,data=6x5,",
     "node 85: attribute properties '6x5' are not a number"),
    ("__rec=node,id=84,", "__rec=node,id=83,", "node 83 is defined twice (first on line 4)"),
    ("attr=86=89=92=96=94=99,data=0.000218=", "attr=86=89=92=96=94,data=0.000218=",
     "ctx record has 5 attribute ids but 6 values"),
])
def test_malformed_records_name_their_line(host, lulesh, tmp_path, old, new, message):
    text = lulesh[0].read_text()
    assert text.count(old) == 1
    path = tmp_path / "bad.cali"
    path.write_text(text.replace(old, new))
    line = text[:text.index(old)].count("\n") + 1
    with pytest.raises(InputError) as caught:
        extrap_plugins.read(path)
    assert str(caught.value) == f"{path}:{line}: {message}"


def test_deleted_and_swapped_characters_are_bad_input_never_a_crash(lulesh, tmp_path):
    """Delete each of the first 40 lines, swap neighbouring characters and overwrite one at 150 places: every
    result reads or is an InputError (exit 2), never another exception (exit 1)."""
    text = lulesh[0].read_text()
    lines = text.split("\n")
    variants = ["\n".join(lines[:i] + lines[i + 1:]) for i in range(40)]
    rng = np.random.default_rng(7)
    for p in rng.choice(len(text) - 1, 150, replace=False).tolist():
        swapped = list(text)
        swapped[p], swapped[p + 1] = swapped[p + 1], swapped[p]
        variants.append("".join(swapped))
        variants.append(text[:p] + "=,\\x9 "[p % 6] + text[p + 1:])
    path = tmp_path / "fuzz.cali"
    errors = 0
    for variant in variants:
        path.write_text(variant)
        try:
            caliper_reader.read(path, {"parameters": "jobsize"})
        except InputError:
            errors += 1
    assert errors > 50


@pytest.mark.parametrize("value, message", [
    ("abc2", "value 'abc2' is not a number"),
    ("1e999", "value '1e999' is not a finite number"),
    ("nan", "value 'nan' is not a finite number"),
])
def test_a_bad_value_names_its_line(host, lulesh, tmp_path, capsys, value, message):
    text = lulesh[0].read_text()
    record = "__rec=ctx,ref=37=101,attr=86=89=92=96=94=99,data=0.000054=0.000515=0.000484="
    assert text.count(record) == 1
    path = tmp_path / "27.cali"
    path.write_text(text.replace(record, record.replace("=0.000484=", f"={value}=")))
    line = text[:text.index(record)].count("\n") + 1
    assert run_cli(capsys, path) == (
        2, [f"extrap-plugins: error: {path}:{line}: call path 'MPI_Bcast': metric 'Avg time/rank' {message}"])


def test_runs_of_different_programs_name_the_sets(host, thicket_data, capsys):
    assert run_cli(capsys, thicket_data) == (2, [
        f"extrap-plugins: error: {thicket_data}: no numeric metadata key varies across all 10 runs: they fall into "
        "2 sets with different metadata keys, as runs of different programs do: mpi_scaling_cali (5 runs): jobsize "
        "varies; rajaperf/quartz (5 runs): ProblemSizeRunParam varies; read each set on its own, or name the "
        "parameters with --reader-option parameters=KEY[,KEY]"])


# ------------------------------------------- folders, metadata, byte-order mark
def test_a_link_to_a_sibling_in_a_folder_is_refused_naming_both(host, lulesh, tmp_path, capsys):
    # link.cali -> 27_cores.cali was read as a sixth run, a repetition of 27 ranks never run
    for f in lulesh:
        shutil.copy(f, tmp_path)
    (tmp_path / "link.cali").symlink_to("27_cores.cali")
    assert run_cli(capsys, tmp_path) == (2, [
        f"extrap-plugins: error: {tmp_path / 'link.cali'}: the same file as {tmp_path / '27_cores.cali'}: "
        "its measurements would count twice"])


def test_a_date_named_as_parameter_is_called_a_date(host, lulesh, tmp_path):
    # launchdate=1616614379 is a number; it was refused as "not a number"
    path = shutil.copy(lulesh[0], tmp_path / "27.cali")
    line = next(i for i, text in enumerate(lulesh[0].read_text().split("\n"), 1) if "attr=160," in text)
    with pytest.raises(InputError) as caught:
        caliper_reader.read_part(path, {"parameters": "launchdate"})
    assert str(caught.value) == (f"{path}:{line}: metadata launchdate='1616614379' is a date "
                                 "(Adiak type date: 2021-03-24 19:32:59 UTC), not a parameter")


def test_a_text_value_named_as_parameter_is_not_a_number(host, lulesh, tmp_path):
    path = shutil.copy(lulesh[0], tmp_path / "27.cali")
    with pytest.raises(InputError, match=r"27\.cali:\d+: metadata cluster='opal' is not a number; a parameter needs "
                                         r"a numeric value$"):
        caliper_reader.read_part(path, {"parameters": "cluster"})


@pytest.mark.parametrize("value, problem", [
    ("sixtyfour", "is not a number"), ("1e999", "is not a whole number"), ("-64", "is negative")])
def test_a_typed_parameter_value_that_is_not_its_type_skips_the_run(host, lulesh, tmp_path, value, problem):
    # jobsize=sixtyfour in one run: jobsize silently dropped out of that run and numhosts became the parameter
    for f in lulesh:
        shutil.copy(f, tmp_path)
    broken = tmp_path / "64_cores.cali"
    text = broken.read_text()
    old = "__rec=node,id=171,attr=146,data=64,parent=170"  # jobsize (uint) of this run
    assert text.count(old) == 1
    broken.write_text(text.replace(old, old.replace("data=64,", f"data={value},")))
    line = text[:text.index(old)].count("\n") + 1
    with pytest.warns(ExtrapWarning) as caught:
        experiment = extrap_plugins.read(tmp_path)
    assert f"skipped: {broken}:{line}: metadata jobsize={value!r} {problem}, though the file types it uint" in [
        str(w.message) for w in caught]
    assert experiment.parameter_names == ["jobsize"]
    assert sorted({p for _, _, p in series(experiment)}) == [(27.0,), (125.0,), (216.0,), (343.0,)]


def test_a_byte_order_mark_is_accepted(host, lulesh, tmp_path):
    # the run was skipped as "not a Caliper .cali record"
    for f in lulesh:
        shutil.copy(f, tmp_path)
    marked = tmp_path / "64_cores.cali"
    marked.write_bytes(b"\xef\xbb\xbf" + marked.read_bytes())
    assert caliper_reader.sniff(marked)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExtrapWarning)
        experiment = extrap_plugins.read(tmp_path)
    assert sorted({p for _, _, p in series(experiment)}) == [(27.0,), (64.0,), (125.0,), (216.0,), (343.0,)]
    assert series(experiment) == series(extrap_plugins.read(lulesh))


# ------------------------------------------- inclusive values (D1), the rank count (D3), region names (D4)
@pytest.mark.parametrize("attribute, values", [
    ("avg#inclusive#sum#time.duration", "inclusive"), ("inclusive#sum#time.duration", "inclusive"),
    ("sum#time.inclusive.duration", "inclusive"), ("sum#time.duration", "exclusive"),
    ("avg#sum#time.duration.ns", "exclusive"), ("any#any#max#Bytes/Rep", ""), ("sum#papi.PAPI_TOT_CYC", ""),
    ("count", ""),
])
def test_the_attribute_name_says_whether_values_are_inclusive(attribute, values):
    assert caliper_reader.values_of_attribute(attribute) == values


def test_caliper_s_inclusive_metrics_are_inclusive_in_every_output(host, lulesh, capsys):
    # they were taken as exclusive: shares of the parent of 50 % where 100 % is right, efficiency totals 6x off
    experiment = extrap_plugins.read(lulesh)
    assert [(m.name, m.values) for m in experiment.metrics] == [
        ("Min time/rank", "inclusive"), ("Max time/rank", "inclusive"), ("Avg time/rank", "inclusive"),
        ("Total time", "inclusive")]
    models = extrap_plugins.model(experiment, metrics=["Avg time/rank"])
    ranked = extrap_plugins.extrapolate(models, "jobsize=4096")
    assert ranked.values == {"Avg time/rank": "inclusive"}
    allreduce = ranked.of(models.get("main->lulesh.cycle->TimeIncrement->MPI_Allreduce", "Avg time/rank"))
    assert allreduce.share_parent_largest == pytest.approx(1.0, abs=1e-3)  # its parent does nothing else
    efficiency = extrap_plugins.efficiency(experiment, metric="Avg time/rank")  # its total: the roots, not all 45
    assert efficiency.values == "inclusive" and [m.callpath for m in efficiency.total] == [
        "MPI_Comm_split", "MPI_Bcast", "MPI_Allreduce", "MPI_Comm_free", "MPI_Gather", "main", "MPI_Initialized",
        "MPI_Comm_dup"]
    assert cli.main(["model", str(lulesh[0].parent), "--target", "jobsize=4096", "--export", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["values"] == {"Min time/rank": "inclusive", "Max time/rank": "inclusive",
                                  "Avg time/rank": "inclusive", "Total time": "inclusive"}


def test_rajaperf_s_time_metrics_are_inclusive_and_its_counts_unknown(host, rajaperf):
    experiment = extrap_plugins.read(rajaperf[0].parents[3])
    assert {m.name: m.values for m in experiment.metrics} == {
        "Min time/rank": "inclusive", "Max time/rank": "inclusive", "Avg time/rank": "inclusive",
        "Total time": "inclusive", "BlockSize": "", "Bytes/Rep": "", "Flops/Rep": "", "Iterations/Rep": "",
        "Kernels/Rep": "", "ProblemSize": "", "Reps": ""}


def test_runs_that_disagree_about_inclusive_values_are_an_error(host, lulesh, tmp_path):
    for f in lulesh:
        shutil.copy(f, tmp_path)
    run = tmp_path / "27_cores.cali"
    old = "data=avg#inclusive#sum#time.duration,parent="
    assert run.read_text().count(old) == 1
    run.write_text(run.read_text().replace(old, "data=avg#sum#time.duration,parent="))  # still "Avg time/rank"
    with pytest.raises(InputError) as caught:
        extrap_plugins.read(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path}: metric 'Avg time/rank' holds inclusive values in {tmp_path / '125_cores.cali'} but exclusive "
        f"ones in {run}: the runs were measured with different Caliper configurations; read them apart")


JOBSIZE_64 = "__rec=node,id=171,attr=146,data=64,parent=170\n"  # 64_cores.cali's jobsize, in the globals' chain


def without_jobsize(lulesh, folder):
    """The five runs, 64_cores.cali without its jobsize (the next node hung on the one before)."""
    for f in lulesh:
        shutil.copy(f, folder)
    run = folder / "64_cores.cali"
    text = run.read_text()
    assert text.count(JOBSIZE_64) == 1 and text.count(",parent=171\n") == 1
    run.write_text(text.replace(JOBSIZE_64, "").replace(",parent=171\n", ",parent=170\n"))
    return run


def test_a_run_without_jobsize_gives_the_rank_count_and_a_warning_naming_it(host, lulesh, tmp_path):
    # the models silently took numhosts (1 to 10 nodes) as the parameter, and nothing named the run
    run = without_jobsize(lulesh, tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        experiment = extrap_plugins.read(tmp_path)
    assert [str(w.message) for w in caught] == [
        f"{run}: metadata key jobsize missing (present in the other 4 runs), so it is not a parameter; "
        f"--reader-option parameters=jobsize models the runs that have it"]
    assert experiment.parameter_names == ["mpi.world.size"]
    assert sorted({p for _, _, p in series(experiment)}) == [(float(n),) for n in LULESH_RANKS]
    assert "metadata numhosts vary with mpi.world.size: left out" in experiment.notes
    assert "metadata jobsize missing in some runs, not a parameter" in experiment.notes
    with pytest.warns(ExtrapWarning, match=r"skipped: .*64_cores\.cali: no metadata key 'jobsize' in this run"):
        named = extrap_plugins.read(tmp_path, parameters="jobsize")  # what the warning says to do
    assert sorted({p for _, _, p in series(named)}) == [(27.0,), (125.0,), (216.0,), (343.0,)]


def test_the_command_line_says_which_run_lacks_the_key(host, lulesh, tmp_path, capsys):
    run = without_jobsize(lulesh, tmp_path)
    status = cli.main(["model", str(tmp_path), "--metric", "Avg time/rank", "--callpath", "MPI_Allreduce"])
    out, err = capsys.readouterr()
    assert status == 0 and "mpi.world.size" in out
    assert err.splitlines() == [
        f"extrap-plugins: warning: {run}: metadata key jobsize missing (present in the other 4 runs), so it is not "
        f"a parameter; --reader-option parameters=jobsize models the runs that have it"]


def test_keys_that_vary_together_prefer_the_rank_count_then_the_largest_values():
    ranks = (27.0, 64.0, 125.0)

    def runs(**columns):
        return [{key: f(n) for key, f in columns.items()} for n in ranks]

    def taken(**columns):
        return caliper_reader.choose_parameters(runs(**columns))[0]

    assert taken(jobsize=lambda n: n, numhosts=lambda n: n // 27) == ["jobsize"]
    assert taken(**{"mpi.world.size": lambda n: n, "numhosts": lambda n: n // 27}) == ["mpi.world.size"]
    assert taken(**{"jobsize": lambda n: n, "mpi.world.size": lambda n: n}) == ["jobsize"]  # equal: the user's key
    # a size that follows the rank count (weak scaling) has larger values, but the rank count is the parameter
    assert taken(jobsize=lambda n: n, elements=lambda n: 27000 * n) == ["jobsize"]
    assert taken(numhosts=lambda n: n // 27, iterations=lambda n: 10 * n) == ["iterations"]  # no rank count


def test_missing_keys_are_one_warning_per_set_of_runs_and_only_for_keys_that_could_be_parameters():
    runs = ["a.cali", "b.cali", "c.cali", "d.cali"]
    metadata = [{"jobsize": 8.0, "size": 1.0, "seed": 3.0, "when_date": 1.0, "fom": 0.5},
                {"jobsize": 16.0, "size": 2.0, "seed": 3.0, "when_date": 2.0, "fom": 0.7},
                {"jobsize": 32.0, "level": 1.0},
                {"level": 2.0}]
    assert caliper_reader.missing_keys(metadata, runs) == [
        "d.cali: metadata key jobsize missing (present in the other 3 runs), so it is not a parameter; "
        "--reader-option parameters=jobsize models the runs that have it",
        "a.cali, b.cali: metadata key level missing (present in the other 2 runs), so it is not a parameter; "
        "--reader-option parameters=level models the runs that have it",
        "c.cali, d.cali: metadata key size missing (present in the other 2 runs), so it is not a parameter; "
        "--reader-option parameters=size models the runs that have it"]
    # seed (one value), when_date (a date) and fom (not whole) could not be parameters: notes only
    two = [{"jobsize": 8.0, "size": 1.0}, {"jobsize": 16.0, "size": 2.0}, {}]
    assert caliper_reader.missing_keys(two, ["a", "b", "c"]) == [
        "c: metadata keys jobsize, size missing (present in the other 2 runs), so they are not parameters; "
        "--reader-option parameters=jobsize,size models the runs that have them"]


REGION_36 = "__rec=node,id=36,attr=35,data=MPI_Comm_split\n"  # a root region of every LULESH run


@pytest.mark.parametrize("written, name", [
    ("main->MPI_Irecv", "main->MPI_Irecv"), ("operator->", "operator->"),
    # a name with characters the file escapes: the message lacked the line
    ("std::map<int\\,int>::operator->", "std::map<int,int>::operator->"),
])
def test_a_region_named_with_the_separator_is_refused_naming_the_file_line_and_region(host, lulesh, tmp_path,
                                                                                      written, name):
    # a root region "main->MPI_Irecv" merged with main's child MPI_Irecv: one series, the mean of both
    text = lulesh[0].read_text()
    assert text.count(REGION_36) == 1
    path = tmp_path / "27.cali"
    path.write_text(text.replace(REGION_36, REGION_36.replace("MPI_Comm_split", written)))
    line = text[:text.index(REGION_36)].count("\n") + 1
    with pytest.raises(InputError) as caught:
        extrap_plugins.read(path)
    assert str(caught.value) == (
        f"{path}:{line}: region {name!r} contains the call-path separator '->': its call path would read as nested "
        f"regions and could merge with a nested call path; rename the region in the program")


def test_a_run_with_a_region_named_with_the_separator_is_skipped_among_others(host, lulesh, tmp_path):
    for f in lulesh:
        shutil.copy(f, tmp_path)
    run = tmp_path / "27_cores.cali"
    run.write_text(run.read_text().replace(REGION_36, REGION_36.replace("MPI_Comm_split", "main->MPI_Irecv")))
    with pytest.warns(ExtrapWarning) as caught:
        experiment = extrap_plugins.read(tmp_path, metrics=["Avg time/rank"])
    assert [str(w.message) for w in caught] == [
        f"skipped: {run}:29: region 'main->MPI_Irecv' contains the call-path separator '->': its call path would "
        f"read as nested regions and could merge with a nested call path; rename the region in the program"]
    assert sorted({p for _, _, p in series(experiment)}) == [(64.0,), (125.0,), (216.0,), (343.0,)]
    assert len(series(experiment)[("main->MPI_Irecv", "Avg time/rank", (64.0,))]) == 1  # main's child alone


# ------------------------------------------------- streamed as in memory
def both_ways(path, tmp_path, executor="serial", **options):
    """``(in memory, streamed)``: each ``(ModelSet as JSON, its parameters, every warning)`` or the InputError's
    text, of ``model(read(path))`` and of ``stream_models(path)``."""
    from extrap_plugins import streaming

    selection = {key: options.pop(key) for key in ("metrics", "callpaths") if key in options}

    def run(function):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                models = function()
            except InputError as error:
                return str(error), [str(w.message) for w in caught]
        return (extrap_plugins.export(models, "json"), models.parameters), [str(w.message) for w in caught]

    in_memory = run(lambda: extrap_plugins.model(extrap_plugins.read(path, executor=executor, jobs=2, **selection,
                                                                     **options), executor=executor, jobs=2))
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    streamed = run(lambda: streaming.stream_models(path, executor=executor, jobs=2, scratch=scratch, **selection,
                                                   reader_options=options))
    return in_memory, streamed


@pytest.mark.parametrize("folder, parameters, executor", [
    ("mpi_scaling_cali", ("jobsize",), "serial"), ("mpi_scaling_cali", ("jobsize",), "process"),
    ("rajaperf", ("ProblemSizeRunParam",), "serial")])
def test_streamed_runs_get_the_parameters_and_models_of_memory(host, thicket_data, tmp_path, folder, parameters,
                                                               executor):
    # streaming never called the join: every numeric metadata key was a parameter, elapsed_time stood for jobsize,
    # mpi.world.size and numhosts in all 180 LULESH series, and the models were flat
    in_memory, streamed = both_ways(thicket_data / folder, tmp_path, executor)
    assert streamed == in_memory
    (document, taken), said = streamed
    assert taken == parameters and json.loads(document)["parameters"] == list(parameters)
    assert not [w for w in said if "elapsed_time" in w or "single value" in w]


@pytest.mark.parametrize("options", [{"parameters": "mpi.world.size,problem_size"},
                                     {"parameters": "problem_size"},  # no parameter varies: one warning says so
                                     {"metrics": ["Avg*"], "callpaths": ["main->lulesh.cycle*"]}])
def test_named_parameters_and_selections_stream_as_in_memory(host, lulesh, tmp_path, options):
    in_memory, streamed = both_ways(lulesh[0].parent, tmp_path, **options)
    assert streamed == in_memory
    if options.get("parameters") == "problem_size":
        # the five runs (27 ... 343 ranks) are repetitions of one point here: their means leave out runs 3x off
        constant, *outlying = streamed[1]
        assert constant == ("problem_size = 30 in every measurement: every model is a constant, no model can show "
                            "how anything grows; measure at several values")
        assert outlying and all("3x or more off the others at" in w for w in outlying)


def test_a_run_without_jobsize_streams_as_in_memory_and_is_named_once(host, lulesh, tmp_path):
    (tmp_path / "runs").mkdir()
    run = without_jobsize(lulesh, tmp_path / "runs")
    in_memory, streamed = both_ways(tmp_path / "runs", tmp_path)
    assert streamed == in_memory
    assert streamed[0][1] == ("mpi.world.size",)
    missing = [w for w in streamed[1] if "jobsize" in w]
    assert missing == [f"{run}: metadata key jobsize missing (present in the other 4 runs), so it is not a "
                       f"parameter; --reader-option parameters=jobsize models the runs that have it"]


def test_what_the_join_refuses_streamed_is_refused_as_in_memory(host, thicket_data, lulesh, tmp_path):
    # streamed, four repetitions of one size and two programs were modelled over every metadata key
    expected = {
        thicket_data / "rajaperf" / "quartz" / "gcc10.3.1_1048576":
            "no numeric metadata key varies across the 4 runs; name the parameters with --reader-option "
            "parameters=KEY[,KEY]",
        thicket_data: "no numeric metadata key varies across all 10 runs: they fall into 2 sets",
    }
    for path, message in expected.items():
        in_memory, streamed = both_ways(path, tmp_path)
        assert streamed == in_memory and streamed[0].startswith(f"{path}: {message}")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for f in lulesh:
        shutil.copy(f, mixed)
    run = mixed / "27_cores.cali"
    run.write_text(run.read_text().replace("data=avg#inclusive#sum#time.duration,parent=",
                                           "data=avg#sum#time.duration,parent="))
    in_memory, streamed = both_ways(mixed, tmp_path)
    assert streamed == in_memory and "holds inclusive values in" in streamed[0]


@pytest.mark.parametrize("selection, message", [
    ({"metrics": ["nope"]}, "no metric 'nope'; the metrics are Min time/rank, Max time/rank, Avg time/rank, "
                            "Total time"),
    ({"metrics": ["Avg*", "Sum*"]}, "no metric 'Sum*'; the metrics are Min time/rank, Max time/rank, "
                                    "Avg time/rank, Total time"),
    ({"callpaths": ["solve*"]}, "no call path matches 'solve*'"),
])
def test_a_selection_that_matches_nothing_is_said_read_or_streamed(host, lulesh, tmp_path, selection, message):
    # read said "no values selected in these runs", or, with one metric found, nothing about the other
    in_memory, streamed = both_ways(lulesh[0].parent, tmp_path, **selection)
    assert streamed == in_memory == (f"{lulesh[0].parent}: {message}", [])


def test_the_streaming_catalogue_has_the_parameters_points_and_metrics_of_the_join(host, lulesh, tmp_path):
    # the catalogue kept each run's provisional parameters (every numeric key) and the metrics without the join's
    from extrap_plugins import streaming

    experiment = extrap_plugins.read(lulesh)
    info = host.reader("caliper")
    catalogue = streaming.Catalogue(same_parameters=False)
    for i, part in enumerate(info.parts(lulesh, {})):
        summary, error, _ = streaming.spill_part((info.read_part, part, {}, str(tmp_path / f"p{i}"), None))
        catalogue.add(summary)
    streaming.follow_join(info, catalogue, lulesh, {})
    assert catalogue.parameters == tuple(experiment.parameter_names) == ("jobsize",)
    assert catalogue.measured_points().tolist() == [[float(n)] for n in LULESH_RANKS]
    assert catalogue.metrics == experiment.metrics  # with their units and Metric.values
    assert {m.values for m in catalogue.metrics} == {"inclusive"}
    assert catalogue.callpaths == [c.name for c in experiment.callpaths]


def test_the_command_line_streams_lulesh_over_jobsize(host, lulesh, tmp_path, capsys):
    folder = str(lulesh[0].parent)
    assert cli.main(["model", folder, "--executor", "serial", "--stream", "off"]) == 0
    in_memory = capsys.readouterr()
    assert cli.main(["model", folder, "--executor", "serial", "--stream", "on", "--scratch", str(tmp_path)]) == 0
    assert capsys.readouterr() == in_memory  # the reader's notes too, streamed as in memory
    table, notes = in_memory.out.split("\nnotes on reading:\n")
    assert "jobsize" in table and "elapsed_time" not in table + in_memory.err
    assert "  metadata elapsed_time varies but is a date or time, not a parameter\n" in notes


def test_the_command_line_json_of_lulesh_streamed_keeps_caliper_s_inclusive_metrics(host, lulesh, tmp_path, capsys):
    folder = str(lulesh[0].parent)
    assert cli.main(["model", folder, "--executor", "serial", "--export", "json", "--stream", "off"]) == 0
    in_memory = json.loads(capsys.readouterr().out)
    assert cli.main(["model", folder, "--executor", "serial", "--export", "json", "--stream", "on", "--scratch",
                     str(tmp_path)]) == 0
    streamed = json.loads(capsys.readouterr().out)
    assert in_memory["values"]["Max time/rank"] == "inclusive"
    assert streamed["values"] == in_memory["values"] and streamed == in_memory
