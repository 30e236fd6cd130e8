"""Held-out validation (``--validate``, ``model(..., validate=True)``), the quality figures and the
flag for children that outgrow their parents (issue 19, items 5 and 6)."""

from __future__ import annotations

import csv
import io
import json
import math
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.cli import ExitStatus, main
from extrap_plugins.engine import held_out_points
from extrap_plugins.quality import quality_figures, validation_line, validation_summary

TEXT = """PARAMETER p

POINTS ( 2 ) ( 4 ) ( 8 ) ( 16 ) ( 32 ) ( 64 )

REGION main
METRIC time
DATA 5 5
DATA 7 7
DATA 11 11
DATA 19 19
DATA 35 35
DATA 67 67
REGION main->work
METRIC time
DATA 1 1
DATA 1.5 1.5
DATA 3 3
DATA 7 7
DATA 19 19
DATA 90 90
"""


@pytest.fixture
def measured(tmp_path):
    path = tmp_path / "two.txt"
    path.write_text(TEXT)
    return path


def quietly(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return extrap_plugins.model(*args, **kwargs)


def test_the_largest_value_of_every_parameter_is_held_out():
    X = np.array([[1, 10], [1, 20], [2, 10], [2, 20], [3, 10], [3, 20], [3, 30]], dtype=float)
    e = extrap_plugins.Experiment.from_columns(["a", "b"], callpath="m", metric="t", coordinates=X, value=np.ones(7))
    assert held_out_points(e).tolist() == [False, False, False, False, True, True, True]


def test_validate_refits_without_the_largest_point_and_reports_the_error_there(host, measured):
    models = quietly(extrap_plugins.read(measured), validate=True)
    main_model = models.get("main", "time")
    assert main_model.formula == "3 + 1 · p"  # fitted on all points
    assert main_model.validation == pytest.approx(0.0, abs=1e-9)  # 3 + p from 2..32 predicts 67 at 64
    work = models.get("main->work", "time")
    assert math.isfinite(work.validation) and work.validation > 0.05
    summary = validation_summary([m.validation for m in models])
    assert summary["models"] == 2 and summary["within_10"] == 0.5 and summary["median"] == pytest.approx(
        np.median([0.0, work.validation]))


def test_without_validate_there_is_no_validation(host, measured):
    models = quietly(extrap_plugins.read(measured))
    assert all(math.isnan(m.validation) for m in models)
    assert "held-out" not in extrap_plugins.export(models, "text")
    assert "validation_error" not in extrap_plugins.export(models, "csv")


def test_validation_in_text_csv_json_and_html(host, measured, tmp_path):
    models = quietly(extrap_plugins.read(measured), validate=True)
    text = extrap_plugins.export(models, "text")
    assert "held-out error" in text and validation_line([m.validation for m in models]) in text
    rows = list(csv.DictReader(io.StringIO(extrap_plugins.export(models, "csv"))))
    assert float(rows[0]["validation_error"]) == pytest.approx(models.models[0].validation, abs=1e-12)
    document = json.loads(extrap_plugins.export(models, "json", version=2))
    assert document["validation"]["models"] == 2 and document["validation"]["within_10"] == 0.5
    assert document["models"][1]["validation"]["error"] == pytest.approx(models.models[1].validation)
    page = tmp_path / "report.html"
    extrap_plugins.export(models, "html", page, plot_top=0)
    content = page.read_text()
    assert '"validation"' in content and "held-out error" in content


def test_cli_validate_prints_the_summary_line(host, measured, capsys):
    assert main(["model", str(measured), "--validate", "--progress", "off"]) == ExitStatus.OK
    out = capsys.readouterr().out
    assert "validation (largest value of each parameter held out, refitted, predicted): 2 models, 50.0 % " \
           "within 10 %" in out


def test_the_summary_line_counts_one_model_in_the_singular():
    assert validation_line([0.05]).startswith("validation (largest value of each parameter held out, refitted, "
                                              "predicted): 1 model, 100.0 % within 10 %")


def test_cli_validate_refuses_streaming(host, measured, capsys):
    assert main(["model", str(measured), "--validate", "--stream", "on", "--progress", "off"]) == \
        ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == \
        "extrap-plugins: error: --validate needs the measurements in memory: use --stream off\n"


def test_an_exact_fit_of_a_series_with_a_zero_has_smape_zero():
    # It showed 50 % before: the model's 1e-17 against a measured 0 counted as a 200 % miss.
    q = quality_figures(np.array([[0.0, 1, 2, 3]]), np.array([[1e-17, 1, 2, 3 + 4e-16]]), 1)
    assert q["smape"].tolist() == [0.0] and q["re"].tolist() == [0.0]
    e = extrap_plugins.Experiment.from_columns(["p"], callpath="m", metric="t", coordinates=[[1], [2], [3], [4], [5]],
                                               value=[0.0, 1, 2, 3, 4])
    (model,) = quietly(e).models
    assert model.formula == "-1 + 1 · p" and model.quality.smape == pytest.approx(0.0, abs=1e-6)


def test_a_child_that_outgrows_its_parent_at_the_target_is_flagged(host, tmp_path):
    path = tmp_path / "outgrown.txt"
    path.write_text(TEXT.replace("DATA 90 90", "DATA 60 60"))  # main->work grows faster than main
    models = quietly(extrap_plugins.read(path))
    x = extrap_plugins.extrapolate(models, "p=1024")
    flags = {m.callpath: row.outgrows_parent for m, row in x}
    assert flags == {"main": False, "main->work": True}
    text = extrap_plugins.export(models, "text", target="p=1024")
    assert "(!)" in text and "inconsistent extrapolation" in text and "  main->work [time]" in text
    document = json.loads(extrap_plugins.export(models, "json", version=2, target="p=1024"))
    assert [m["target"]["outgrows_parent"] for m in document["models"]] == [False, True]


def test_a_minimum_modelled_above_its_maximum_at_the_target_is_flagged(host):
    # per-visit times of one region: the minimum grows faster than the maximum and overtakes it beyond p = 64
    p = np.array([[2.0], [4], [8], [16], [32], [64]])
    columns = dict(callpath=["main->exchange"] * 18, coordinates=np.vstack([p, p, p]),
                   metric=["visit_time_min"] * 6 + ["visit_time_max"] * 6 + ["time"] * 6,
                   value=np.concatenate([0.1 * p[:, 0], 10 + 0.05 * p[:, 0], 30 + p[:, 0]]))
    models = quietly(extrap_plugins.Experiment.from_columns(["p"], **columns))
    flags = {m.metric: row.crosses for m, row in extrap_plugins.extrapolate(models, "p=1024")}
    assert flags == {"visit_time_min": "visit_time_max", "visit_time_max": "visit_time_min", "time": None}
    assert {m.metric: row.crosses for m, row in extrap_plugins.extrapolate(models, "p=128")} == \
        {"visit_time_min": None, "visit_time_max": None, "time": None}  # 12.8 below 16.4: consistent
    text = extrap_plugins.export(models, "text", target="p=1024")
    assert ("inconsistent extrapolation (a minimum above its maximum at the target, each modelled apart):\n"
            "  main->exchange: visit_time_min above visit_time_max\n") in text
    document = json.loads(extrap_plugins.export(models, "json", version=2, target="p=1024"))
    assert {m["metric"]: m["target"]["crosses"] for m in document["models"]} == flags


def test_the_bounds_of_a_metric_are_paired_by_the_words_min_and_max():
    from extrap_plugins.extrapolation import bound_pairs
    from extrap_plugins.models import Model

    names = ["visit_time_min", "visit_time_max", "Min time/rank", "Max time/rank", "minimum", "maximum",
             "admin_time", "max_time", "time_minimal", "time_maximal"]
    models = [Model("main", name, ("p",), 1.0) for name in names]
    assert [(names[i], names[j]) for i, j in bound_pairs(models)] == [
        ("visit_time_min", "visit_time_max"), ("Min time/rank", "Max time/rank"), ("minimum", "maximum")]


def test_the_held_out_refit_s_warnings_do_not_reach_the_user(recwarn):
    # "parameter p has only 4 distinct values" was said of data with 5: the refit without the largest values
    import pathlib

    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "stencil.jsonl"
    models = extrap_plugins.model(extrap_plugins.read(example), validate=True)
    assert all(math.isfinite(m.validation) for m in models.models)
    assert [str(w.message) for w in recwarn if "distinct values" in str(w.message)] == []
