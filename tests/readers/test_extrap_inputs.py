"""Every Extra-P input file in ../shared/data/extrap: what Extra-P 4.2.5 reads, we read; what it rejects, we reject.

The reference (``data/extrap_inputs_reference.csv.gz``, made by
``data/make_extrap_inputs_reference.py`` with Extra-P 4.2.5) holds, for every
file, each point's repetitions (or, for saved experiments, its saved
statistics) as Extra-P read them.  The reader is chosen automatically, as on
the command line.
"""

from __future__ import annotations

import collections
import csv
import gzip
import pathlib

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.cli import ExitStatus, main
from extrap_plugins.errors import InputError

REFERENCE = pathlib.Path(__file__).with_name("data") / "extrap_inputs_reference.csv.gz"
OUR_READER = {"text": "text", "json": "json", "talpas": "talpas", "experiment": "extrap-experiment",
              "extrap3": "extrap3"}
# Deliberate difference: a value without a metric name is "time" here ("" in Extra-P's text
# reader, "<default>" in its JSON Lines reader).
OUR_METRIC = {"": "time", "<default>": "time"}

INCOMPLETE = ("(Extra-P needs every series at every point; --reader-option incomplete=allow reads it anyway)")
REJECTED = {
    "input/experiments_MP/experiment_MP_neg1.txt":
        "9: call path 'met1', metric 'time' has 24 DATA lines (lines 9-32), expected 25, one per point",
    "input/experiments_MP/experiment_MP_neg2.txt":
        "34: call path 'met1', metric 'time' has more DATA lines than the 25 points (its DATA lines start on line 9)",
    "input/experiments_SP/experiment3_neg.txt":
        "5: POINTS without parentheses give one value per point, but there are 4 parameters (p, q, r, s); "
        "write each point as ( v1 ... v4 )",
    "input/experiments_SP/experiment_neg.txt":
        "1: POINTS before any PARAMETER line; declare the parameters first (PARAMETER p)",
    "json/input_11.JSON":
        f"56: call path 'sweep', metric 'time' is measured at 4 of the 5 points; missing: (x=64) {INCOMPLETE}",
    "talpas/talpas_10_neg.txt":
        f"27: call path 'compute', metric 'flops' is measured at 3 of the 5 points; missing: (x=40), (x=50) "
        f"{INCOMPLETE}",
}


def _reference() -> dict[str, list[dict]]:
    by_file: dict[str, list[dict]] = collections.defaultdict(list)
    with gzip.open(REFERENCE, "rt", newline="", encoding="utf-8") as stream:
        for row in csv.DictReader(stream):
            by_file[row["file"]].append(row)
    return dict(by_file)


EXTRAP = _reference()
READ = sorted(f for f, rows in EXTRAP.items() if not rows[0]["error"])
REJECTED_BY_EXTRAP = sorted(f for f, rows in EXTRAP.items() if rows[0]["error"])


def test_the_reference_covers_every_file(shared_data):
    files = sorted(p.relative_to(shared_data / "extrap").as_posix() for p in (shared_data / "extrap").rglob("*")
                   if p.is_file() and p.suffix not in (".md", ".csv"))
    assert files == sorted(EXTRAP)
    assert len(READ) == 110 and REJECTED_BY_EXTRAP == sorted(REJECTED)


def _ours(experiment) -> dict[tuple, list[float]]:
    """(call path, metric, point) -> values in file order."""
    cells: dict[tuple, list[float]] = collections.defaultdict(list)
    callpaths = [c.name for c in experiment.callpaths]
    metrics = [m.name for m in experiment.metrics]
    for c, m, point, value in zip(experiment.callpath_index.tolist(), experiment.metric_index.tolist(),
                                  map(tuple, experiment.coordinates.tolist()), experiment.value.tolist()):
        cells[callpaths[c], metrics[m], point].append(value)
    return dict(cells)


@pytest.mark.parametrize("name", READ)
def test_we_read_exactly_what_extrap_reads(shared_data, host, name):
    rows = EXTRAP[name]
    experiment = extrap_plugins.read(shared_data / "extrap" / name)
    assert experiment.reader == OUR_READER[rows[0]["reader"]]
    assert experiment.parameter_names == rows[0]["parameters"].split()
    assert [c.name for c in experiment.callpaths] == list(dict.fromkeys(r["callpath"] for r in rows))
    assert [m.name for m in experiment.metrics] == list(dict.fromkeys(OUR_METRIC.get(r["metric"], r["metric"])
                                                                      for r in rows))
    ours = _ours(experiment)
    expected = {}
    for r in rows:
        key = (r["callpath"], OUR_METRIC.get(r["metric"], r["metric"]), tuple(map(float, r["point"].split())))
        if r["values"]:
            ours[key] = sorted(ours.get(key, []))
            expected[key] = sorted(map(float, r["values"].split()))
        elif r["reader"] in ("experiment", "extrap3"):
            # Saved experiments keep no repetitions: one value per point, the mean by default.
            expected[key] = [float(r["mean"])]
        else:
            # Extra-P's JSON Lines reader keeps only statistics: compare ours (file order) with them.
            values = np.asarray(ours.get(key, [np.nan]))
            ours[key] = [float(np.mean(values)), float(np.median(values)), float(values.min()), float(values.max())]
            expected[key] = [float(r["mean"]), float(r["median"]), float(r["minimum"]), float(r["maximum"])]
    assert ours == expected  # exact: bit for bit


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_we_reject_what_extrap_rejects_naming_file_and_line(shared_data, host, name):
    path = shared_data / "extrap" / name
    with pytest.raises(InputError) as error:
        extrap_plugins.read(path)
    assert str(error.value) == f"{path}:{REJECTED[name]}"


def test_a_rejected_file_is_one_line_on_the_command_line(shared_data, host, capsys):
    path = shared_data / "extrap" / "talpas" / "talpas_10_neg.txt"
    assert main(["model", str(path)]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == f"extrap-plugins: error: {path}:{REJECTED['talpas/talpas_10_neg.txt']}\n"


@pytest.mark.parametrize("name, series, points", [
    ("json/input_11.JSON", [("sweep", "time")], {("sweep", "time"): 4}),
    ("talpas/talpas_10_neg.txt", [("compute", "time"), ("compute", "flops")],
     {("compute", "time"): 5, ("compute", "flops"): 3}),
])
def test_incomplete_series_read_when_allowed(shared_data, host, name, series, points):
    experiment = extrap_plugins.read(shared_data / "extrap" / name, incomplete="allow")
    keys = [(c.name, m.name) for group in experiment.series_groups() for c, m in group.keys]
    assert sorted(keys) == sorted(series)
    for callpath, metric in series:
        coordinates, _ = experiment.values_of(callpath, metric)
        assert len(np.unique(coordinates, axis=0)) == points[callpath, metric]


def test_saved_experiments_choose_the_statistic(shared_data, host):
    path = shared_data / "extrap" / "input" / "exp_only_mean_median.extra-p"
    rows = [r for r in EXTRAP["input/exp_only_mean_median.extra-p"]
            if r["callpath"] == "merge" and r["metric"] == "time"]
    for statistic in ("mean", "median", "minimum", "maximum"):
        experiment = extrap_plugins.read(path, value=statistic)
        coordinates, values = experiment.values_of("merge", "time")
        got = dict(zip(map(tuple, coordinates.tolist()), values.tolist()))
        assert got == {tuple(map(float, r["point"].split())): float(r[statistic]) for r in rows}
        assert experiment.notes == [
            f"the experiment keeps one {statistic} per point, not the repetitions: every point has one value "
            "(--reader-option value=mean|median|minimum|maximum chooses the statistic)"]
