"""The talpas reader: Talpas records, exact values and exact messages for bad input."""

from __future__ import annotations

import pytest

from extrap_plugins import cli
from extrap_plugins.errors import InputError
from extrap_plugins.readers import talpas_reader
from reader_helpers import reading

RECORD = '{{"parameters":{{"x":{x}}};"metric":"{m}";"callpath":"{c}";"value":{v}}}\n'


read = reading(talpas_reader)


def test_real_file_with_two_call_paths_and_two_metrics(shared_data):
    experiment = read(shared_data / "extrap" / "talpas" / "talpas_9.txt")
    assert experiment.parameter_names == ["x", "y"]
    assert [c.name for c in experiment.callpaths] == ["compute", "sort"]
    assert [m.name for m in experiment.metrics] == ["time", "flops"]
    coordinates, values = experiment.values_of("compute", "time")
    at = coordinates.tolist().index([20.0, 1.0])
    assert values[at] == 1.007912824061828
    assert [len(g) for g in experiment.series_groups()] == [4]
    assert len(experiment.points()) == 25


def test_records_with_blank_lines_and_repetitions(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text(RECORD.format(x=1, m="time", c="f", v=1.5) + "\n" + RECORD.format(x=1, m="time", c="f", v=1.7)
                    + RECORD.format(x=2, m="time", c="f", v=3))
    experiment = read(path)
    assert experiment.value.tolist() == [1.5, 1.7, 3.0] and experiment.repetition.tolist() == [0, 1, 0]


def test_old_mac_line_ends_read_as_extrap_reads_them(tmp_path):
    """Records ended by a carriage return alone, as Extra-P reads them; said "not valid JSON: Extra data"."""
    path = tmp_path / "t.txt"
    path.write_text((RECORD.format(x=1, m="time", c="f", v=1.5) + RECORD.format(x=2, m="time", c="f", v=3))
                    .replace("\n", "\r"))
    assert read(path).value.tolist() == [1.5, 3.0]


@pytest.mark.parametrize("content, message", [
    (RECORD.format(x=1, m="time", c="f", v=1) + '{"parameters":{"x":2};"metric":"time";"value":1}\n',
     "2: no 'callpath'"),
    (RECORD.format(x=1, m="time", c="f", v=1) + '{"parameters":{"x":2};"metric":"time" "callpath":"f";"value":1}\n',
     "2: not valid JSON: Expecting ';' delimiter (column 39)"),
    ('{"parameters":{"x":1};"metric":"time";"callpath":"f";"value":"fast"}\n', "1: value 'fast' is not a number"),
    ('{"parameters":{"x":1};"metric":"time";"callpath":"f";"value":"1.5"}\n',
     "1: value '1.5' is a string, not a number (write it without quotes)"),
    ('{"parameters":{"x":1};"metric":"time";"callpath":"f->";"value":1.5}\n',
     "1: 'callpath' 'f->' has an empty region name (a call path is region names joined with '->', each non-empty)"),
    ('{"params":{"x":1};"metric":"time";"callpath":"f";"value":1}\n',
     "1: no 'parameters'; expected 'parameters': {parameter: value, ...}"),
])
def test_bad_input(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:{message}"


def test_options_and_sniff(tmp_path, shared_data):
    path = shared_data / "extrap" / "talpas" / "talpas_1.txt"
    assert talpas_reader.sniff(path)
    assert not talpas_reader.sniff(shared_data / "extrap" / "text" / "one_parameter_1.txt")
    assert not talpas_reader.sniff(shared_data / "extrap" / "jsonlines" / "test1.jsonl")
    with pytest.raises(InputError) as error:
        read(path, value="mean")
    assert str(error.value) == "the talpas reader has no option 'value'; its options are: incomplete"


def test_keys_that_are_not_read_are_noted(tmp_path):
    path = tmp_path / "talpas.txt"
    path.write_text('{"parameters":{"x":1};"metric":"time";"callpath":"a";"value":1;"units":"s"}\n')
    assert read(path).notes == ["not read: 1 key 'units' (line 1); a row holds parameters, callpath, metric, value"]


def test_keys_in_another_case_are_refused_naming_the_key(shared_data, tmp_path, capsys, host):
    # "no reader recognises this input" (the sniffer looked for lower-case keys); with one key in another case,
    # "no 'callpath'"
    original = (shared_data / "extrap" / "talpas" / "talpas_1.txt").read_text()
    path = tmp_path / "talpas_1.txt"
    path.write_text(original.replace('"metric"', '"Metric"').replace('"value"', '"Value"'))
    assert cli.main(["model", str(path)]) == 2
    assert capsys.readouterr().err == (f"extrap-plugins: error: {path}:1: key 'Metric' is not read: keys are "
                                       "case-sensitive; write 'metric'\n")
