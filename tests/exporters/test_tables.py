import csv
import io
import json
import math
import warnings

import pytest

import extrap_plugins
from extrap_plugins import Factor, Model, ModelSet, Quality, Term


@pytest.fixture
def model_set():
    solve = Model("main->solve", "time", ("p", "n"), 3.1, (Term(2.0, {"p": Factor(1.0, 1)}),),
                  Quality(rss=0.0, ar2=1.0, smape=0.0, re=0.0), points=5, modeler="default")
    third = Model("main->x", "visits", ("p", "n"), 0.5, (Term(-1.5, {"n": Factor(1 / 3, 0)}),),
                  Quality(rss=1.25, ar2=math.nan, smape=3.5, re=2.0), points=25, modeler="default",
                  warnings=("too few points",))
    return ModelSet(("p", "n"), [solve, third], modeler="default")


def test_json_export_is_exactly_the_documented_document(model_set, host):
    document = json.loads(extrap_plugins.export(model_set, "json"))
    assert document == {
        "format": "extrap-plugins/models", "version": 1, "parameters": ["p", "n"],
        "models": [
            {"callpath": "main->solve", "metric": "time", "modeler": "default",
             "function": "3.1 + 2.0 * p^1 * log2(p)^1", "constant": 3.1,
             "terms": [{"coefficient": 2.0, "factors": {"p": {"exponent": 1.0, "log_exponent": 1}}}],
             "segments": None, "quality": {"rss": 0.0, "ar2": 1.0, "smape": 0.0, "re": 0.0}, "points": 5},
            {"callpath": "main->x", "metric": "visits", "modeler": "default",
             "function": "0.5 - 1.5 * n^0.3333333333333333", "constant": 0.5,
             "terms": [{"coefficient": -1.5, "factors": {"n": {"exponent": 0.3333333333333333, "log_exponent": 0}}}],
             "segments": None, "quality": {"rss": 1.25, "ar2": None, "smape": 3.5, "re": 2.0}, "points": 25},
        ]}


def test_text_export_is_an_aligned_table_with_warnings(model_set, host):
    text = extrap_plugins.export(model_set, "text")
    lines = text.splitlines()
    assert lines[0].split() == ["call", "path", "metric", "model", "adj.", "R²", "SMAPE"]
    assert lines[2].split() == ["main->solve", "time", "3.1", "+", "2", "·", "p", "·", "log2(p)", "1.0000", "0.00%"]
    assert lines[3].split()[-2:] == ["n/a", "3.50%"]
    assert lines[0].index("metric") == lines[2].index("time")  # aligned columns
    assert lines[-1] == "  main->x [visits]: too few points"


def test_text_export_says_a_warning_shared_by_many_series_once(host):
    # a sweep of two process counts: every series has the same warning, which is one line, not one per series
    quality = Quality(rss=0.0, ar2=1.0, smape=0.0, re=0.0)
    few = "parameter p has only 2 distinct values; at least 5 are needed for a trustworthy model"
    models = [Model(callpath, metric, ("p",), 1.0, (), quality, points=2, modeler="default",
                    warnings=(few, "noisy") if callpath == "main->b" and metric == "time" else (few,))
              for callpath in ("main", "main->a", "main->b") for metric in ("time", "visits")]
    lines = extrap_plugins.export(ModelSet(("p",), models, modeler="default"), "text").splitlines()
    assert lines[lines.index("warnings:") + 1:] == [
        f"  main [time] and 5 more series (--export json lists them all): {few}", "  main->b [time]: noisy"]


def test_a_warning_of_a_few_series_names_every_one_and_json_lists_them_all(host):
    # "IntelMPI->MPI_Allgather [median] and 1 more series: terms of opposite sign": which other series?
    quality = Quality(rss=0.0, ar2=1.0, smape=0.0, re=0.0)
    signs = "terms of opposite sign"
    models = [Model(callpath, "median", ("p",), 1.0, (), quality, points=5, modeler="default",
                    warnings=(signs,) if callpath != "OpenMPI->MPI_Bcast" else ())
              for callpath in ("IntelMPI->MPI_Allgather", "OpenMPI->MPI_Allgather", "OpenMPI->MPI_Bcast",
                               "OpenMPI->MPI_Reduce")]
    model_set = ModelSet(("p",), models, modeler="default")
    lines = extrap_plugins.export(model_set, "text").splitlines()
    assert lines[lines.index("warnings:") + 1:] == [
        f"  IntelMPI->MPI_Allgather [median], OpenMPI->MPI_Allgather [median] and OpenMPI->MPI_Reduce [median]: "
        f"{signs}"]
    document = json.loads(extrap_plugins.export(model_set, "json", version=2))
    assert [m["warnings"] for m in document["models"]] == [[signs], [signs], [], [signs]]


def test_csv_export_has_one_row_per_model(model_set, host):
    rows = list(csv.DictReader(io.StringIO(extrap_plugins.export(model_set, "csv"))))
    assert [r["callpath"] for r in rows] == ["main->solve", "main->x"]
    assert rows[0]["function"] == "3.1 + 2.0 * p^1 * log2(p)^1"
    assert rows[1]["ar2"] == "" and rows[1]["points"] == "25"


def test_export_to_a_file_is_atomic_and_keeps_the_old_file_on_error(model_set, host, tmp_path):
    target = tmp_path / "models.json"
    extrap_plugins.export(model_set, "json", target)
    assert json.loads(target.read_text())["version"] == 1
    broken = ModelSet(("p",), [Model("a", "t", ("p",), 1.0, points=1, modeler="x")])
    broken.models[0].points = object()  # not serialisable: the exporter fails half way
    with pytest.raises(TypeError):
        extrap_plugins.export(broken, "json", target)
    assert json.loads(target.read_text())["version"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["models.json"]


def test_exporters_reject_options(model_set, host):
    # "exporter 'text' takes no options; got bogus (the options of every exporter are target, ...)": it takes four
    for exporter in ("csv", "text"):
        with pytest.raises(extrap_plugins.InputError) as error:
            extrap_plugins.export(model_set, exporter, color="red")
        assert str(error.value) == (f"exporter {exporter!r} has no option 'color'; its options are those of every "
                                    "exporter: target, sort, values, level")


def test_text_export_shortens_long_call_paths_and_says_where_they_are_whole(host):
    # a C++ template region: the table's rows were as wide as the longest call path (6,380 characters on a
    # Score-P CUDA profile)
    long = "main->" + "thrust::detail::vector_base<double, std::allocator<double> >::" * 20 + "resize"
    e = extrap_plugins.Experiment.from_columns(["p"], callpath=["main"] * 5 + [long] * 5, metric="time",
                                               coordinates=[[p] for p in (2, 4, 8, 16, 32)] * 2,
                                               value=[1, 2, 3, 4, 5] * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = extrap_plugins.model(e)
    text = extrap_plugins.export(models, "text")
    assert max(len(line) for line in text.splitlines()) < 160
    assert "main->…->" in text and long not in text
    assert text.endswith("call paths longer than 100 characters are shortened here (their root, …, their last "
                         "regions;\nwhere two would read the same, the region that tells them apart, or a number); "
                         "--export csv or json give them whole\n")
    assert long in extrap_plugins.export(models, "csv")


def test_call_paths_shortened_alike_are_told_apart_in_the_text_export(host):
    # one routine called from two places under one long template region (5,588 of the 5,943 call paths of a Score-P
    # CUDA LULESH profile read as another did), and two that differ only inside their shortened last region
    template = "thrust::detail::vector_base<double, std::allocator<double> >::" * 3
    paths = [f"main->NewDomain->{caller}->{template}resize" for caller in ("AllocateElemPersistent",
                                                                            "AllocateNodalPersistent")]
    paths += [f"main->solve->{'x' * 60}{kind}{'y' * 60}" for kind in ("float", "double")]
    e = extrap_plugins.Experiment.from_columns(["p"], callpath=[c for c in paths for _ in range(5)], metric="time",
                                               coordinates=[[p] for p in (2, 4, 8, 16, 32)] * 4,
                                               value=[1, 2, 3, 4, 5] * 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = extrap_plugins.export(extrap_plugins.model(e), "text")
    shown = [line.split("  ")[0] for line in text.splitlines()[2:6]]
    assert shown == [
        "main->…->AllocateElemPersistent->thrust::detail::vector_base<doubl… std::allocator<double> >::resize",
        "main->…->AllocateNodalPersistent->thrust::detail::vector_base<doubl…std::allocator<double> >::resize",
        f"main->…->{'x' * 45}…{'y' * 45} (1)", f"main->…->{'x' * 45}…{'y' * 45} (2)"]


def test_the_csv_of_a_segmented_model_holds_every_segment(shared_data, host):
    # the machine-readable function held the last segment alone: 30 + p, for p from 1 to 10
    import extrap_plugins

    models = extrap_plugins.model(extrap_plugins.read(shared_data / "extrap" / "text" / "one_parameter_segmented_1.txt"),
                                  "segmented")
    [model] = models.models
    assert model.formula == "1 · p^2 for 1 ≤ p ≤ 6; 30 + 1 · p for 6 ≤ p ≤ 10"
    parts = model.function.split("; ")
    assert len(parts) == 2 and parts[0].endswith(" * p^2 for 1.0 <= p <= 6.0")
    assert parts[1].endswith(" * p^1 for 6.0 <= p <= 10.0")
    assert f",{model.function}," in extrap_plugins.export(models, "csv")
