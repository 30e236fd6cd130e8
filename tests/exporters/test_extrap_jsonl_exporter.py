"""The extrap-jsonl exporter: the measurements behind a model set, as Extra-P JSON Lines."""

from __future__ import annotations

import json

import pytest

import extrap_plugins
from extrap_plugins import Experiment, ModelSet, cli
from extrap_plugins.errors import InputError


def test_every_value_becomes_one_line_in_extrap_format(host):
    experiment = Experiment.from_columns(
        ["p", "n"],
        callpath=["main->solve", "main", "main", "main", "main->solve"],
        metric=["time", "time", "time", "bytes", "time"],
        coordinates=[[2, 0.5], [1, 10], [1, 10], [1, 10], [2, 0.5]],
        value=[0.1, 1.0, 1.25, 800, 0.30000000000000004],
    )
    models = extrap_plugins.model(experiment, executor="serial")
    text = extrap_plugins.export(models, "extrap-jsonl")
    assert text.splitlines() == [  # in the experiment's call path and metric order
        '{"params":{"p":2,"n":0.5},"callpath":"main->solve","metric":"time","value":0.1}',
        '{"params":{"p":2,"n":0.5},"callpath":"main->solve","metric":"time","value":0.30000000000000004}',
        '{"params":{"p":1,"n":10},"callpath":"main","metric":"time","value":1.0}',
        '{"params":{"p":1,"n":10},"callpath":"main","metric":"time","value":1.25}',
        '{"params":{"p":1,"n":10},"callpath":"main","metric":"bytes","value":800.0}',
    ]
    for line in text.splitlines():  # each line is what Extra-P's JSON Lines reader expects
        assert set(json.loads(line)) == {"params", "callpath", "metric", "value"}


def test_the_export_reads_back_into_the_same_measurements(host, tmp_path):
    experiment = Experiment.from_columns(
        ["p"], callpath="main", metric="time", coordinates=[[1], [2], [4], [8], [16]] * 2,
        value=[1, 2, 4, 8, 16, 1.5, 2.5, 4.5, 8.5, 16.5])
    models = extrap_plugins.model(experiment, executor="serial")
    target = tmp_path / "out.jsonl"
    extrap_plugins.export(models, "extrap-jsonl", target)
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert sorted((d["params"]["p"], d["value"]) for d in lines) == sorted(
        zip([1, 2, 4, 8, 16] * 2, [1, 2, 4, 8, 16, 1.5, 2.5, 4.5, 8.5, 16.5]))


def test_a_model_set_without_measurements_cannot_be_exported(host):
    with pytest.raises(InputError, match="writes the measurements behind the models, and this model set carries none"):
        extrap_plugins.export(ModelSet(("p",), []), "extrap-jsonl")
    with pytest.raises(InputError) as error:
        extrap_plugins.export(ModelSet(("p",), []), "extrap-jsonl", precision="3")
    assert str(error.value) == ("exporter 'extrap-jsonl' has no option 'precision'; its options are those of every "
                                "exporter: target, sort, values, level")


def test_the_options_of_every_exporter_are_taken(host, tmp_path, capsys):
    """They were refused ('the extrap-jsonl exporter has no options, got target'), though every exporter takes them
    (``ExporterInfo``): ``--target`` with ``--export extrap-jsonl`` was an error."""
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps({"params": {"p": p}, "callpath": "main", "metric": "time", "value": 2.0 * p},
                                       separators=(",", ":"))
                            + "\n" for p in (1, 2, 4, 8, 16)))
    assert cli.main(["model", str(path), "--export", "extrap-jsonl", "--target", "p=64", "--sort", "target"]) == 0
    assert capsys.readouterr().out == path.read_text()


def test_a_missing_value_is_left_out_with_a_warning(host):
    # a reader's nan (a failed repetition) is a missing value: JSON has no number for it; the
    # other repetition keeps the point, so Extra-P reads the file
    experiment = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[1], [2], [2]],
                                         value=[1.0, float("nan"), 2.5])
    models = extrap_plugins.model(experiment, executor="serial")
    with pytest.warns(extrap_plugins.errors.ExtrapWarning) as said:
        text = extrap_plugins.export(models, "extrap-jsonl")
    assert [str(w.message) for w in said] == [  # the series was not named
        "main [time]: the extrap-jsonl export leaves out 1 missing value (not a finite number) that JSON cannot hold"]
    assert text.splitlines() == ['{"params":{"p":1},"callpath":"main","metric":"time","value":1.0}',
                                 '{"params":{"p":2},"callpath":"main","metric":"time","value":2.5}']


def test_a_series_missing_a_point_is_named_since_extra_p_then_reads_nothing(host):
    # main->a's only value at p = 3 is missing: Extra-P 4.2.5 refuses the whole file ("the number of measurements
    # (4) ... does not match the number of coordinates (5)"); the warning said "Extra-P reads the rest"
    p = [1, 2, 3, 4, 5]
    experiment = Experiment.from_columns(["p"], callpath=["main->a"] * 5 + ["main->b"] * 5, metric="time",
                                         coordinates=[[x] for x in p + p],
                                         value=[1.0, 2.0, float("nan"), 4.0, 5.0] + [1.0, 2.0, 3.0, 4.0, 5.0])
    models = extrap_plugins.model(experiment, executor="serial")
    with pytest.warns(extrap_plugins.errors.ExtrapWarning) as said:
        text = extrap_plugins.export(models, "extrap-jsonl")
    assert [str(w.message) for w in said][1:] == [
        "main->a [time]: measured at fewer than all 5 points of the file: Extra-P 4.2.5 reads no file where a series "
        "misses a point (select complete series with --callpath or --metric)"]
    assert len(text.splitlines()) == 9
