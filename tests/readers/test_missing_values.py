"""Values that are not finite numbers (``nan``, ``inf``, ``1e400``) are missing, not a reason to refuse the file.

Extra-P reads such a file and models every other series; a failed repetition written as ``nan`` in a file of a
thousand regions must not cost every model.  Every reader of Extra-P's formats and CSV reads them as missing
(NaN) with one warning per file naming the file, the lines and the series; the modeler leaves them out (README,
Modeling, bad input).  Malformed numbers (``abc``, ``1,5``) stay exit 2 with file and line, and parameter values
must stay finite.
"""

from __future__ import annotations

import json
import struct
import warnings
import zipfile

import numpy as np
import pytest
from reader_helpers import reading

from extrap_plugins import api, cli
from extrap_plugins.errors import ExtrapWarning, InputError
from extrap_plugins.readers import csv_reader, extrap_experiment_reader, json_reader, talpas_reader, text_reader

WHY = "(nan, inf or beyond the range of a float)"

TEXT = """PARAMETER p
POINTS 2 4 8 16 32
REGION main
METRIC time
DATA 1
DATA 2
DATA nan
DATA 4
DATA 5
REGION other
METRIC time
DATA 1
DATA 2
DATA 3
DATA 4
DATA 5
"""


def read_warned(read, path, **options):
    """The experiment and the warnings the read gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        experiment = read(path, **options)
    return experiment, [str(w.message) for w in caught if issubclass(w.category, ExtrapWarning)]


def finite_cells(experiment, callpath):
    """The finite values of a call path's first metric, in file order."""
    _, values = experiment.values_of(callpath, experiment.metrics[0].name)
    return values[np.isfinite(values)].tolist()


# ----------------------------------------------------------------- readers
CASES = [
    ("text", text_reader, "nan2.txt", TEXT, 7, "main [time]"),
    ("text-huge", text_reader, "huge.txt", TEXT.replace("DATA nan", "DATA 1e400"), 7, "main [time]"),
    ("text-inf", text_reader, "inf.txt", TEXT.replace("DATA nan", "DATA -inf"), 7, "main [time]"),
    ("jsonl", json_reader, "nan.jsonl",
     '{"params":{"p":2},"value":1,"callpath":"main"}\n{"params":{"p":4},"value":[2, NaN],"callpath":"main"}\n'
     '{"params":{"p":8},"value":3,"callpath":"main"}\n', 2, "main [time]"),
    ("json-document", json_reader, "nan.json",
     '{"parameters": ["p"],\n "measurements": {"main": {"time": [\n  {"point": [2], "values": [1]},\n'
     '  {"point": [4], "values": [2, Infinity]},\n  {"point": [8], "values": [3]}]}}}', 4, "main [time]"),
    ("json-legacy", json_reader, "legacy.json",
     '{"callpaths": [{"id": 1, "name": "main"}], "metrics": [{"id": 1, "name": "time"}],\n'
     '"parameters": [{"id": 1, "name": "p"}],\n"coordinates": [{"id": 1, "parameter_value_pairs": '
     '[{"parameter_id": 1, "parameter_value": 2}]}, {"id": 2, "parameter_value_pairs": '
     '[{"parameter_id": 1, "parameter_value": 4}]}],\n"measurements": [\n'
     '{"callpath_id": 1, "coordinate_id": 1, "metric_id": 1, "value": 1},\n'
     '{"callpath_id": 1, "coordinate_id": 2, "metric_id": 1, "value": NaN}]}', 6, "main [time]"),
    ("csv", csv_reader, "nan.csv", "p,callpath,value\n2,main,1\n4,main,2\n8,main,nan\n16,main,4\n", 4,
     "main [time]"),
    ("csv-huge", csv_reader, "huge.csv", "p,callpath,value\n2,main,1\n4,main,1e400\n8,main,3\n", 3, "main [time]"),
    ("talpas", talpas_reader, "nan.txt",
     '{"parameters":{"x":20};"metric":"time";"callpath":"main";"value":1.0}\n'
     '{"parameters":{"x":40};"metric":"time";"callpath":"main";"value":NaN}\n', 2, "main [time]"),
]


@pytest.mark.parametrize("module, name, content, line, series", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_value_that_is_not_finite_is_missing_with_one_warning(tmp_path, module, name, content, line, series):
    path = tmp_path / name
    path.write_text(content)
    experiment, said = read_warned(reading(module), path)
    assert said == [f"{path}: 1 value is not a finite number {WHY} and is left out as missing: "
                    f"line {line}; series {series}"]
    assert np.isnan(experiment.value).sum() == 1
    assert np.isfinite(experiment.value).sum() == len(experiment) - 1


def test_every_other_series_keeps_its_values(tmp_path):
    path = tmp_path / "nan2.txt"
    path.write_text(TEXT)
    experiment, _ = read_warned(reading(text_reader), path)
    assert finite_cells(experiment, "main") == [1, 2, 4, 5]
    assert finite_cells(experiment, "other") == [1, 2, 3, 4, 5]


def test_many_missing_values_are_one_warning_with_the_first_lines_and_a_count(tmp_path):
    lines = ["PARAMETER p", "POINTS 2 4 8 16 32"]
    for region in ("a", "b", "c", "d", "e", "f", "g"):
        lines += [f"REGION {region}", "DATA 1 nan", "DATA 2 2", "DATA 3 inf", "DATA 4 4", "DATA 5 5"]
    path = tmp_path / "many.txt"
    path.write_text("\n".join(lines) + "\n")
    experiment, said = read_warned(reading(text_reader), path)
    assert said == [f"{path}: 14 values are not finite numbers {WHY} and are left out as missing: "
                    "lines 4, 6, 10, 12, 16 and 9 more (14 lines); "
                    "series a [time], b [time], c [time], d [time], e [time] and 2 more (7 series)"]
    assert np.isnan(experiment.value).sum() == 14


def test_no_warning_without_missing_values(tmp_path):
    path = tmp_path / "fine.txt"
    path.write_text(TEXT.replace("DATA nan", "DATA 3"))
    experiment, said = read_warned(reading(text_reader), path)
    assert said == [] and np.isfinite(experiment.value).all()


@pytest.mark.parametrize("module, name, content, message", [
    (text_reader, "a.txt", TEXT.replace("DATA nan", "DATA abc"), "7: DATA value 'abc' is not a number"),
    (text_reader, "b.txt", TEXT.replace("DATA nan", "DATA 1,5"), "7: DATA value '1,5' is not a number"),
    (text_reader, "c.txt", TEXT.replace("POINTS 2 4 8 16 32", "POINTS 2 4 8 16 inf"),
     "2: POINTS value 'inf' is not a finite number"),
    (csv_reader, "d.csv", "p,value\n2,1\n4,1;5\n", "3: column 'value': '1;5' is not a number"),
    (csv_reader, "e.csv", "p,value\n2,1\nnan,2\n", "3: column 'p': 'nan' is not a finite number; every column but "
     "value is a numeric parameter: choose the parameter columns with --reader-option parameters=COL[,COL...] (and "
     "callpath=COL[,COL...] for name columns)"),
    (json_reader, "f.jsonl", '{"params": {"p": 1}, "value": "nan"}\n',
     "1: value 'nan' is a string, not a number (write it without quotes)"),
    (json_reader, "g.jsonl", '{"params": {"p": NaN}, "value": 1}\n', "1: parameter 'p': NaN is not a finite number"),
], ids=["abc", "comma", "points", "csv-semicolon", "csv-parameter", "json-string", "json-parameter"])
def test_malformed_numbers_and_parameters_that_are_not_finite_stay_errors(tmp_path, module, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(InputError) as error:
        reading(module)(path)
    assert str(error.value) == f"{path}:{message}"


# ------------------------------------------------------ Extra-P experiments
def test_archive_mean_that_is_not_finite_is_missing(tmp_path):
    measurements = [{"coordinate": [float(x)], "mean": float(x), "median": float(x), "minimum": float(x),
                     "maximum": float(x), "std": 0.0, "repetitions": 1, "values": None} for x in (1, 2, 4, 8, 16)]
    measurements[2]["mean"] = float("nan")
    document = {"Extra-P": "4.2.0", "parameters": ["x"], "measurements": {"merge": {"time": measurements}}}
    path = tmp_path / "nan.extra-p"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("experiment.json", json.dumps(document))
    experiment, said = read_warned(lambda p: extrap_experiment_reader.read_archive(p, {}), path)
    assert said == [f"{path}: 1 value is not a finite number {WHY} and is left out as missing: "
                    "measurement merge [time] (x=4)"]
    assert finite_cells(experiment, "merge") == [1, 2, 8, 16]


def test_extrap3_mean_that_is_not_finite_is_missing(shared_data, tmp_path):
    data = (shared_data / "extrap" / "input" / "experiment_3").read_bytes()
    mean = struct.pack("<d", 4.0200000000000005)  # the first point's mean of met1 (little-endian file)
    path = tmp_path / "experiment_3"
    path.write_bytes(data.replace(mean, struct.pack("<d", float("inf")), 1))
    experiment, said = read_warned(lambda p: extrap_experiment_reader.read_extrap3(p, {}), path)
    original = extrap_experiment_reader.read_extrap3(shared_data / "extrap" / "input" / "experiment_3", {})
    assert len(said) == 1 and said[0].startswith(f"{path}: 1 value is not a finite number {WHY} and is left out "
                                                 "as missing: measurement met1 [test] (p=")
    assert np.isnan(experiment.value).sum() == 1
    same = np.isfinite(experiment.value)
    assert np.array_equal(experiment.value[same], original.value[same])


# ------------------------------------------------------------ command line
def test_cli_models_every_series_and_warns_once(tmp_path, host, capsys):
    path = tmp_path / "nan2.txt"
    path.write_text(TEXT)
    assert cli.main(["model", str(path)]) == 0
    out, err = capsys.readouterr()
    assert [line.split()[0] for line in out.splitlines()[2:4]] == ["main", "other"]
    said = [line for line in err.splitlines() if "not a finite number" in line]
    assert said == [f"extrap-plugins: warning: {path}: 1 value is not a finite number {WHY} and is left out as "
                    "missing: line 7; series main [time]"]


def test_a_series_of_no_finite_value_gets_the_documented_nan_model(tmp_path, host):
    path = tmp_path / "all.txt"
    path.write_text(TEXT.replace("DATA 1\nDATA 2\nDATA nan\nDATA 4\nDATA 5",
                                 "DATA nan\nDATA nan\nDATA nan\nDATA inf\nDATA 1e400"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = {m.callpath: m for m in api.model(api.read(path)).models}
    assert models["main"].points == 0 and np.isnan(models["main"].constant)
    assert models["other"].points == 5

