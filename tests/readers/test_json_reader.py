"""The json reader: JSON Lines and Extra-P's JSON documents, exact values and exact messages for bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import cli
from extrap_plugins.errors import InputError
from extrap_plugins.readers import json_reader
from reader_helpers import cells, reading

INCOMPLETE = "(Extra-P needs every series at every point; --reader-option incomplete=allow reads it anyway)"


read = reading(json_reader)


# ------------------------------------------------------------- real files
def test_json_lines_with_lists_of_repetitions(shared_data):
    experiment = read(shared_data / "extrap" / "jsonlines" / "extended2.jsonl")
    assert experiment.parameter_names == ["x", "y"]
    assert [c.name for c in experiment.callpaths] == ["test"] and [m.name for m in experiment.metrics] == ["metr"]
    assert len(experiment) == 45 and len(experiment.points()) == 9
    got = cells(experiment)
    assert got["test", "metr", (1.0, 2.0)] == [3.0] * 5
    assert got["test", "metr", (3.0, 1.0)] == [10.0] * 5
    assert sorted(experiment.repetition[:5].tolist()) == [0, 1, 2, 3, 4]


def test_json_lines_without_callpath_and_metric_get_the_defaults(shared_data):
    experiment = read(shared_data / "extrap" / "jsonlines" / "reduced.jsonl")
    assert [c.name for c in experiment.callpaths] == ["<root>"]
    assert [m.name for m in experiment.metrics] == ["time"]
    assert len(experiment) == 125 and len(experiment.points()) == 25


def test_json_lines_keep_the_first_lines_parameter_order(shared_data):
    experiment = read(shared_data / "extrap" / "input" / "json_test_input4.jsonl")
    assert experiment.parameter_names == ["t", "s", "a"]
    group = next(experiment.series_groups())
    assert group.points[0].tolist() == [4.0, 10.0, 100.0] and group.values[0, 0].tolist() == [6500.0]


def test_new_schema_document(shared_data):
    experiment = read(shared_data / "extrap" / "json" / "new" / "input2.json")
    assert experiment.parameter_names == ["x", "y"]
    assert [c.name for c in experiment.callpaths] == ["sweep", "sweep2"]
    assert [m.name for m in experiment.metrics] == ["time", "visits"]
    got = cells(experiment)
    assert got["sweep", "time", (64.0, 50.0)] == [33.5] * 5
    assert got["sweep2", "visits", (4.0, 10.0)] == [5.0]
    assert len(experiment) == 2 * 5 * 5 + 2 * 5


def test_old_schema_document_with_ids(shared_data):
    experiment = read(shared_data / "extrap" / "json" / "input_4.JSON")
    assert experiment.parameter_names == ["x"]
    assert [c.name for c in experiment.callpaths] == ["sweep", "solve"]
    assert [m.name for m in experiment.metrics] == ["time", "flops"]
    assert len(experiment) == 100
    assert cells(experiment)["solve", "flops", (64.0,)] == [6148.5] * 5


def test_a_json_array_of_rows_and_a_single_row(tmp_path):
    rows = [{"params": {"p": p}, "callpath": "main->solve", "value": 2.0 * p} for p in (1, 2, 4)]
    array = tmp_path / "rows.json"
    array.write_text(json.dumps(rows, indent=2))
    assert cells(read(array)) == {("main->solve", "time", (p,)): [2.0 * p] for p in (1.0, 2.0, 4.0)}
    single = tmp_path / "one.jsonl"
    single.write_text(json.dumps(rows[0]))
    assert cells(read(single)) == {("main->solve", "time", (1.0,)): [2.0]}


def test_blank_lines_and_windows_line_ends(tmp_path):
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(b'{"params": {"p": 1}, "value": 1.5}\r\n\r\n  \r\n{"params": {"p": 2}, "value": 2.5}\r\n')
    assert cells(read(path)) == {("<root>", "time", (1.0,)): [1.5], ("<root>", "time", (2.0,)): [2.5]}


def test_old_mac_line_ends_read_as_extrap_reads_them(tmp_path):
    """JSON Lines ended by a carriage return alone, as Extra-P reads them; said "not valid JSON: Extra data"."""
    path = tmp_path / "cr.jsonl"
    path.write_bytes(b'{"params": {"p": 1}, "value": 1.5}\r\r{"params": {"p": 2}, "value": 2.5}\r')
    assert cells(read(path)) == {("<root>", "time", (1.0,)): [1.5], ("<root>", "time", (2.0,)): [2.5]}
    path.write_bytes(b'{"params": {"p": 1}, "value": 1.5}\r\r{"params": {"p": 2}, "value": "2.5"}\r')
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:3: value '2.5' is a string, not a number (write it without quotes)"


def test_incomplete_series_allowed_on_request(tmp_path):
    path = tmp_path / "sparse.jsonl"
    path.write_text('{"params": {"p": 1}, "metric": "a", "value": 1}\n{"params": {"p": 2}, "metric": "a", "value": 2}\n'
                    '{"params": {"p": 1}, "metric": "b", "value": 3}\n')
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == (f"{path}:3: call path '<root>', metric 'b' is measured at 1 of the 2 points; "
                                f"missing: (p=2) {INCOMPLETE}")
    experiment = read(path, incomplete="allow")
    assert [len(g) for g in experiment.series_groups()] == [1, 1]


def test_blocks_give_the_same_result_and_the_right_lines(tmp_path, monkeypatch):
    lines = [json.dumps({"params": {"p": p}, "callpath": f"f{p % 3}", "value": [p, p + 0.5]}) for p in range(1, 30)]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines[:5]) + "\n\n" + "\n".join(lines[5:]) + "\n")
    whole = cells(read(path, incomplete="allow"))
    monkeypatch.setattr(json_reader.JsonLines, "BLOCK", 40)  # a block every line or two
    assert cells(read(path, incomplete="allow")) == whole
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == (f"{path}:1: call path 'f1', metric 'time' is measured at 10 of the 29 points; "
                                "missing: (p=2), (p=3), (p=5), (p=6), (p=8) and 14 more " + INCOMPLETE)
    lines[20] = lines[20].replace('"value": [21, 21.5]', '"value": [21, "x"]')
    path.write_text("\n".join(lines[:5]) + "\n\n" + "\n".join(lines[5:]) + "\n")
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:22: value 'x' is not a number"
    path.write_text("\n".join(lines[:5]) + "\n\n" + "\n".join(lines[5:20]) + "\n{broken\n")
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:22: not valid JSON: Expecting property name enclosed in double quotes (column 2)"


# ------------------------------------------------------------ bad input
BAD = [
    ("a.jsonl", '{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2}, "value": 2}\n{"params": {"p": 4}, "value": }\n',
     "3: not valid JSON: Expecting value (column 31)"),
    ("b.jsonl", '{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2}}\n', "2: no 'value'"),
    ("c.jsonl", '{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2}, "value": "abc"}\n',
     "2: value 'abc' is not a number"),
    ("d.jsonl", '{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2}, "value": null}\n',
     "2: value null is not a number"),
    ("e.jsonl", '{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2, "n": 3}, "value": 1}\n',
     "2: parameters {p, n} differ from {p} of the first line"),
    ("f.jsonl", '{"value": 1}\n{"params": {"p": 2}, "value": 1}\n',
     "1: no 'params'; expected 'params': {parameter: value, ...}"),
    ("g.jsonl", '{"params": {"p": 1}, "value": 1, "callpath": 5}\n',
     "1: 'callpath' must be a non-empty string, got the number 5"),
    ("h.jsonl", '{"params": {"p": "x"}, "value": 1}\n', "1: parameter 'p': 'x' is not a number"),
    ("j.jsonl", '{"params": {"p": 1}, "value": 1}\n[1, 2]\n', "2: expected a JSON object per line, got a list"),
    ("k.jsonl", '{"params": {"p": 1}, "value": 1}\n'
                '{"params": {"p": 2}, "value": 1}, {"params": {"p": 3}, "value": 1}\n',
     "2: not valid JSON: Extra data (column 33)"),
    ("l.jsonl", '{"params": {"p": 1}, "value": [1, "x"]}\n', "1: value 'x' is not a number"),
    # a parameter value must be finite; a measured value that is not is missing (test_missing_values.py)
    ("m.jsonl", '{"params": {"p": Infinity}, "value": 1}\n', "1: parameter 'p': Infinity is not a finite number"),
    ("n.jsonl", '{"params": {}, "value": 1}\n', "1: 'params' is empty; give at least one parameter"),
    ("o.jsonl", '{"params": {"p": 1}, "value": 1, "metric": ""}\n',
     "1: 'metric' must be a non-empty string, got an empty string"),
    ("p.json", '{"parameters": ["x", "y"], "measurements": {"a": {"time": [{"point": [4], "values": [1]}]}}}',
     "1: point [4] has 1 value, expected 2 (x, y)"),
    ("q.json", '{\n "parameters": ["x"],\n "measurements": {"a": {"time": [\n  {"point": [4], "values": [1]},\n'
               '  {"point": [8], "values": ["z"]}]}}}', "5: value 'z' is not a number"),
    ("r.json", '{"callpaths": [{"id": 1, "name": "a"}], "metrics": [{"id": 1, "name": "t"}], '
               '"parameters": [{"id": 1, "name": "x"}],\n"coordinates": [{"id": 1, "parameter_value_pairs": '
               '[{"parameter_id": 1, "parameter_value": 4}]}],\n"measurements": [\n'
               '{"callpath_id": 1, "coordinate_id": 1, "metric_id": 1, "value": 1},\n'
               '{"callpath_id": 9, "coordinate_id": 1, "metric_id": 1, "value": 1}]}',
     "5: callpath_id 9 names no call path"),
    ("w.json", '{"callpaths": [{"id": 1, "name": "a"}], "metrics": [{"id": 1, "name": "t"}], '
               '"parameters": [{"id": 1, "name": "x"}],\n"coordinates": [{"id": 1, "parameter_value_pairs": '
               '[{"parameter_id": 1, "parameter_value": 4}]}],\n"measurements": [\n'
               '{"callpath_id": 1, "coordinate_id": 1, "metric_id": 1, "value": 1},\n'
               '{"callpath_id": 1, "coordinate_id": 1, "metric_id": 1, "value": "2"}]}',
     "5: value '2' is a string, not a number (write it without quotes)"),
    ("v.json", '{"callpaths": [{"id": 1, "name": "a"}], "metrics": [{"id": 1, "name": "t"}],\n'
               '"parameters": [{"id": 1, "name": "x"}],\n"coordinates": [\n{"id": [1], "parameter_value_pairs": '
               '[{"parameter_id": 1, "parameter_value": 4}]}],\n"measurements": []}',
     "4: coordinate id [1] must be a number"),
    ("s.json", '{"foo": 1}', "1: neither an Extra-P JSON document ('parameters' and 'measurements') nor a JSON Lines "
                             "row ('params'); its keys are: 'foo'"),
    ("t.json", '{"parameters": ["x"], \n"measurements": {"a": {"time": [{"point": [4], "values": [1]}], '
               '"flops": [{"point": [4], "values": [1]}, {"point": [8], "values": [1]}]}}}',
     f"2: call path 'a', metric 'time' is measured at 1 of the 2 points; missing: (x=8) {INCOMPLETE}"),
    ("u.json", "[1, 2", "1: not valid JSON: Expecting ',' delimiter (column 6); the text ends there (the file cut "
                        "short?)"),
]


@pytest.mark.parametrize("name, content, message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_file_line_and_problem(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:{message}"


def test_empty_and_binary_files(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(InputError, match="^.*empty.jsonl: the file is empty$"):
        read(empty)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'{"params": {"p": 1},\n "value": \xff}')
    with pytest.raises(InputError) as error:
        read(binary)
    assert str(error.value) == f"{binary}:2: not UTF-8 text (byte 0xff); is this the right reader?"


def test_options_are_checked(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"params": {"p": 1}, "value": 1}\n')
    with pytest.raises(InputError) as error:
        read(path, aggregation="max")
    assert str(error.value) == "the json reader has no option 'aggregation'; its options are: incomplete"
    with pytest.raises(InputError) as error:
        read(path, incomplete="maybe")
    assert str(error.value) == "option incomplete='maybe': expected one of error, allow"


# -------------------------------------------------------------- selection
def test_sniffing_tells_json_from_talpas_and_the_shim(tmp_path):
    rows = tmp_path / "rows.data"
    rows.write_text('{"params": {"p": 1}, "value": 1}\n')
    talpas = tmp_path / "talpas.data"
    talpas.write_text('{"parameters":{"x":20};"metric":"time";"callpath":"compute";"value":82.0}\n')
    shim = tmp_path / "run.data"
    shim.write_text('{"format": "extrap-plugins/instrument", "version": 1, "parameters": {"p": 4}, '
                    '"callpaths": ["main"]}\n')
    assert json_reader.sniff(rows) and not json_reader.sniff(talpas) and not json_reader.sniff(shim)
    assert not json_reader.sniff(tmp_path / "missing.json")


def test_talpas_records_named_json_are_told_apart(tmp_path, host, capsys):
    """Extra-P's Talpas files named *.json: said only "not valid JSON: Expecting ',' delimiter (column 23)"."""
    path = tmp_path / "talpas.json"
    path.write_text('{"parameters":{"x":20};"metric":"time";"callpath":"compute";"value":82.0}\n')
    assert cli.main(["model", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"extrap-plugins: error: {path}:1: not valid JSON: Expecting ',' delimiter (column 23); the fields are "
        "separated by ';' as in a Talpas file: --reader talpas reads it"]
    assert cli.main(["model", str(path), "--reader", "talpas"]) == 0


def test_read_through_the_api_chooses_this_reader(shared_data, host):
    experiment = extrap_plugins.read(shared_data / "extrap" / "json" / "input_1.JSON")
    assert experiment.reader == "json"
    assert np.array_equal(experiment.points()[:, 0], [4.0, 8.0, 16.0, 32.0, 64.0])


ROW = '{"params": {"p": 1}, "callpath": "a", "value": 1}\n'


@pytest.mark.parametrize("row, message", [
    ('{"params": {"p": 2}, "value": true}', "value true is not a number"),
    ('{"params": {"p": 2}, "value": "1"}', "value '1' is a string, not a number (write it without quotes)"),
    ('{"params": {"p": 2}, "value": [1.5, "2"]}', "value '2' is a string, not a number (write it without quotes)"),
    ('{"params": {"p": 2}, "value": null}', "value null is not a number"),
    ('{"params": {"p": 2}, "value": [1, [2]]}', "value is a list, not a number"),
    ('{"params": {"p": false}, "value": 1}', "parameter 'p': false is not a number"),
    ('{"params": {"p": 2}, "callpath": "a->->b", "value": 1}',
     "'callpath' 'a->->b' has an empty region name (a call path is region names joined with '->', each non-empty)"),
    ('{"params": {"p": 2}, "callpath": "->a", "value": 1}',
     "'callpath' '->a' has an empty region name (a call path is region names joined with '->', each non-empty)"),
    ('{"params": {"p": 2}, "callpath": "a->", "value": 1}',
     "'callpath' 'a->' has an empty region name (a call path is region names joined with '->', each non-empty)"),
    # silently dropped before
    ('{"params": {"p": 2}, "value": []}', "'value' is empty"),
    # read as the number 2 before, where "2" as a value was refused
    ('{"params": {"p": "2"}, "value": 1}', "parameter 'p': '2' is a string, not a number (write it without quotes)"),
])
def test_json_lines_values_are_json_numbers_and_regions_have_names(host, tmp_path, capsys, row, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(ROW + "\n" + row + "\n")
    assert cli.main(["model", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"extrap-plugins: error: {path}:3: {message}"]


# ------------------------------------------------------ Extra-P's JSON document
def document(entries: str, parameters: str = '["x"]') -> str:
    """A newer-schema document, one entry per line: line 3 holds the first entry."""
    return f'{{"parameters": {parameters},\n"measurements": {{"sweep": {{"time": [\n' + ",\n".join(entries) + "]}}}"


GOOD = ['{"point": [4], "values": [3.5]}', '{"point": [16], "values": [9.5]}']


@pytest.mark.parametrize("entry, message", [
    # read as the numbers 5 and 8 before
    ('{"point": [8], "values": ["5"]}', "value '5' is a string, not a number (write it without quotes)"),
    ('{"point": ["8"], "values": [5]}', "parameter 'x': '8' is a string, not a number (write it without quotes)"),
    ('{"point": "8", "values": [5]}', "'point' must be a list of one number per parameter, got the string '8'"),
    ('{"point": [8], "values": "5"}', "'values' must be a list of numbers, one per repetition, got the string '5'"),
    ('{"point": [8], "values": [null]}', "value null is not a number"),
    # a second entry at a point became its repetitions, and a point disappeared
    ('{"point": [4], "values": [5.5]}', "call path 'sweep', metric 'time': point (x=4) is listed twice "
                                        "(first on line 3)"),
])
def test_document_entries_hold_json_numbers_at_distinct_points(tmp_path, entry, message):
    path = tmp_path / "doc.json"
    path.write_text(document([GOOD[0], entry, GOOD[1]]))
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:4: {message}"


def test_document_point_and_values_may_be_numbers_as_extrap_reads_them(tmp_path):
    """Extra-P 4.2.5 reads ``"point": 8`` (one parameter) and ``"values": 5`` (one repetition); both were refused."""
    path = tmp_path / "doc.json"
    path.write_text(document([GOOD[0], '{"point": 8, "values": 5}', '{"point": [12], "values": 7.5}', GOOD[1]]))
    assert cells(read(path)) == {("sweep", "time", (4.0,)): [3.5], ("sweep", "time", (8.0,)): [5.0],
                                 ("sweep", "time", (12.0,)): [7.5], ("sweep", "time", (16.0,)): [9.5]}
    path.write_text(document(['{"point": [4, 1], "values": [3.5]}', '{"point": 8, "values": [5]}'],
                             parameters='["x", "y"]'))
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:4: 'point' must be a list of one number per parameter, got the number 8"


def test_a_parameter_declared_twice_is_named(tmp_path):
    # said "point [4] has 1 value, expected 2 (x, x)"
    path = tmp_path / "doc.json"
    path.write_text(document(GOOD, parameters='["x", "x"]'))
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:1: parameter 'x' is declared twice"


def test_a_json_list_of_numbers_is_called_a_list(tmp_path, host, capsys):
    # said "expected a JSON object per line, got the number 1", the JSON Lines message
    path = tmp_path / "list.json"
    path.write_text("[1, 2, 3]\n")
    assert cli.main(["model", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"extrap-plugins: error: {path}:1: the file is a JSON list, not an Extra-P experiment object ('parameters' "
        "and 'measurements'); a list must hold JSON Lines rows ({\"params\": {...}, \"value\": ...}), but item 1 "
        "is the number 1"]


def legacy(callpaths=("a",), metrics=("t",), parameters=("x",), points=((4,), (8,)), parameter_id=None) -> str:
    """An older-schema document, one entry per line: call paths from line 2, then metrics, parameters, coordinates
    and one measurement per coordinate, call path and metric."""
    def table(names):
        return [json.dumps({"id": i + 1, "name": name}) for i, name in enumerate(names)]

    coordinates = [json.dumps({"id": i + 1, "parameter_value_pairs": [
        {"parameter_id": parameter_id or j + 1, "parameter_value": v} for j, v in enumerate(point)]})
        for i, point in enumerate(points)]
    measurements = [json.dumps({"callpath_id": c + 1, "metric_id": m + 1, "coordinate_id": i + 1, "value": 1.0})
                    for c in range(len(callpaths)) for m in range(len(metrics)) for i in range(len(points))]
    parts = [("callpaths", table(callpaths)), ("metrics", table(metrics)), ("parameters", table(parameters)),
             ("coordinates", coordinates), ("measurements", measurements)]
    return "{\n" + ",\n".join(f'"{key}": [\n' + ",\n".join(rows) + "\n]" for key, rows in parts) + "\n}"


@pytest.mark.parametrize("kwargs, message", [
    # Extra-P 4.2.5 fails with an IndexError on each of these; we read the first as repetitions of x=4, the
    # others as two series of one name
    (dict(points=((4,), (4,))), "13: coordinates 1 and 2 are the same point (x=4)"),
    (dict(callpaths=("a", "a")), "4: call paths 1 and 2 have the same name 'a'"),
    (dict(metrics=("t", "t")), "7: metrics 1 and 2 have the same name 't'"),
    # printed as the model "1 · " and a blank call path or metric, or read as a call path
    (dict(parameters=("",)), "9: parameter 1 has an empty name"),
    (dict(callpaths=("",)), "3: call path 1 has an empty name"),
    (dict(metrics=("",)), "6: metric 1 has an empty name"),
    (dict(callpaths=("a->->b",)), "3: call path 'a->->b' has an empty region name (a call path is region names "
                                  "joined with '->', each non-empty)"),
    # exit 1, "internal error: TypeError: unhashable type: 'list'"
    (dict(parameter_id=[1]), "12: a parameter-value pair needs a known 'parameter_id' and a 'parameter_value'"),
])
def test_old_schema_names_and_points_are_distinct_and_named(tmp_path, kwargs, message):
    path = tmp_path / "old.json"
    path.write_text(legacy(**kwargs))
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:{message}"


def test_old_schema_document_helper_reads(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(legacy(callpaths=("a", "a->b"), points=((4,), (8,), (16,))))
    got = cells(read(path))
    assert got == {(c, "t", (x,)): [1.0] for c in ("a", "a->b") for x in (4.0, 8.0, 16.0)}


@pytest.mark.parametrize("measurements, message", [
    ('{"a->->b": {"time": [{"point": [4], "values": [1]}]}}', "2: call path 'a->->b' has an empty region name (a call "
                                                               "path is region names joined with '->', each non-empty)"),
    ('{"": {"time": [{"point": [4], "values": [1]}]}}', "2: a call path has an empty name"),
    ('{"a": {"": [{"point": [4], "values": [1]}]}}', "2: call path 'a': a metric has an empty name"),
])
def test_new_schema_call_paths_and_metrics_have_names(tmp_path, measurements, message):
    # read as a call path 'a->->b' and printed as blank names in the table
    path = tmp_path / "new.json"
    path.write_text('{"parameters": ["x"],\n"measurements": ' + measurements + "}")
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:{message}"


@pytest.mark.parametrize("name", ["", " "])
def test_a_parameter_without_a_name_is_refused(tmp_path, name):
    # a JSON Lines parameter "" was modelled and printed as "2 · "
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"params": {"p": p, name: p}, "value": p}) + "\n" for p in (1, 2)))
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:1: parameter {name!r} has no name; give every parameter a name"
    path = tmp_path / "p.json"
    path.write_text(document(GOOD, parameters=json.dumps(["x", name])))
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:1: 'parameters' must be a non-empty list of parameter names"


def test_keys_that_are_not_read_are_noted(tmp_path):
    # a misspelt "callpath" put every value in <root>, as repetitions of one another, without a word
    path = tmp_path / "rows.jsonl"
    path.write_text('{"params": {"p": 1}, "value": 1, "call_path": "a"}\n\n'
                    '{"params": {"p": 1}, "value": 2, "call_path": "b", "unit": "s"}\n')
    experiment = read(path)
    assert [c.name for c in experiment.callpaths] == ["<root>"]
    assert experiment.notes == ["not read: 2 keys 'call_path' (line 1), 'unit' (line 3); a row holds params, "
                                "callpath, metric, value"]


def test_a_caliper_json_export_says_what_reads_it(tmp_path):
    # (it said "neither an Extra-P JSON document ... its keys are: 'data', 'columns', ...", giving no lead)
    from extrap_plugins import read
    path = tmp_path / "lulesh.json"
    path.write_text('{"data": [], "columns": ["path"], "column_metadata": [], "nodes": []}')
    with pytest.raises(InputError) as refused:
        read(path)
    assert str(refused.value).startswith(f"{path}:1: a Caliper JSON export, not an Extra-P document: read it with "
                                         "Hatchet or Thicket")


# ---------------------------------------------------------- damaged real files
def test_a_key_in_another_case_is_refused_not_left_unread(shared_data, tmp_path):
    # "METRIC" was a key not read (a note): every row's metric became "time", the metrics of a file merged as
    # repetitions of one
    original = (shared_data / "extrap" / "jsonlines" / "complete_matrix_2p.jsonl").read_text()
    path = tmp_path / "complete_matrix_2p.jsonl"
    path.write_text(original.replace('"metric"', '"METRIC"'))
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:1: key 'METRIC' is not read: keys are case-sensitive; write 'metric'"


def test_a_no_break_space_in_a_json_document_is_named(shared_data, tmp_path):
    # "Expecting property name enclosed in double quotes (column 5)" at a line that looks right
    lines = (shared_data / "extrap" / "json" / "new" / "input1.json").read_text().split("\n")
    lines[1] = lines[1].replace(" ", "\u00a0", 1)
    path = tmp_path / "input1.json"
    path.write_text("\n".join(lines))
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == (f"{path}:2: not valid JSON: Expecting property name enclosed in double quotes (column 1)"
                                "; there: NO-BREAK SPACE (U+00A0)")


def test_a_json_document_cut_short_says_where_the_text_ends(shared_data, tmp_path):
    text = (shared_data / "extrap" / "json" / "input_1.JSON").read_text()
    path = tmp_path / "input_1.JSON"
    path.write_text(text[:text.index('"parameter_value": 8') + len('"parameter_value": 8')])
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == (f"{path}:23: not valid JSON: Expecting ',' delimiter (column 41); the text ends there "
                                "(the file cut short?)")


def test_a_key_of_140_kb_is_quoted_cut_short(shared_data, tmp_path):
    # the message listed the keys whole: one error line of 140 kB
    text = (shared_data / "extrap" / "json" / "new" / "input1.json").read_text()
    path = tmp_path / "input1.json"
    path.write_text(text.replace('"parameters"', '"' + "x" * 140_000 + '"', 1))
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == (f"{path}:1: neither an Extra-P JSON document ('parameters' and 'measurements') nor a "
                                f"JSON Lines row ('params'); its keys are: '{'x' * 58}…, 'measurements'")


def test_a_parameter_name_of_1000_characters_is_cut_in_the_message(shared_data, tmp_path):
    # "parameters {xxxx...(1,000 x), y} differ from {x, y} of the first line": an error line of 1 kB
    lines = (shared_data / "extrap" / "jsonlines" / "complete_matrix_2p.jsonl").read_text().split("\n")
    lines[1] = lines[1].replace('"x"', '"' + "x" * 1000 + '"')
    path = tmp_path / "complete_matrix_2p.jsonl"
    path.write_text("\n".join(lines))
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:2: parameters {{{'x' * 59}…, y}} differ from {{x, y}} of the first line"
