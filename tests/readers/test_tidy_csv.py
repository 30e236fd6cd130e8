"""Tables as people write them: pandas (NaN as an empty cell, its index column), spreadsheets (decimal commas,
CRLF), shell loops (a header again where tables were joined, a delimiter at the end of every line), gzip; and
JSON Lines from other tools."""

from __future__ import annotations

import gzip
import warnings

import numpy as np
import pytest

from extrap_plugins.cli import ExitStatus, main
from extrap_plugins.errors import ExtrapWarning, InputError
from extrap_plugins.readers import csv_reader
from reader_helpers import cells, reading

read = reading(csv_reader)


def write(tmp_path, name, text, newline=None):
    path = tmp_path / name
    path.write_text(text, newline=newline)
    return path


def read_warning(path, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        experiment = read(path, **options)
    return experiment, [str(w.message) for w in caught if issubclass(w.category, ExtrapWarning)]


# ------------------------------------------------------------ missing values
@pytest.mark.parametrize("mark", ["", "NA", "n/a", "null", " None "])
def test_an_empty_or_na_value_is_missing_with_one_warning(tmp_path, mark):
    path = write(tmp_path, "t.csv", f"p,callpath,value\n2,main,1\n4,main,{mark}\n8,main,3\n8,main,nan\n")
    experiment, said = read_warning(path)
    assert len(experiment) == 4  # every row is a measurement; the missing ones are NaN
    np.testing.assert_array_equal(experiment.value, [1.0, np.nan, 3.0, np.nan])
    assert said == [f"{path}: 2 values are not finite numbers (empty, NA, nan, inf or beyond the range of a float) "
                    "and are left out as missing: lines 3, 5; series main [time]"]


def test_pandas_nan_in_one_of_several_value_columns(tmp_path):
    path = write(tmp_path, "t.csv", "p,time,memory\n1,2,10\n2,4,\n4,8,40\n")
    experiment, said = read_warning(path, value="time,memory")
    got = cells(experiment)
    assert got["<root>", "time", (2.0,)] == [4.0] and np.isnan(got["<root>", "memory", (2.0,)][0])
    assert said == [f"{path}: 1 value is not a finite number (empty, NA, nan, inf or beyond the range of a float) "
                    "and is left out as missing: line 3; series <root> [memory]"]


@pytest.mark.parametrize("cell, hint", [
    ("-", " (a value not measured is written empty, NA or nan: it is left out as missing)"),
    ("1,5", " (a decimal comma? --reader-option decimal=, reads it)"),
    ("1e3x", ""),
])
def test_a_value_that_is_no_number_says_how_to_write_it(tmp_path, cell, hint):
    path = write(tmp_path, "t.csv", f'p,value\n1,1\n2,"{cell}"\n')
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:3: column 'value': {cell!r} is not a number{hint}"


# ------------------------------------------------------------ spreadsheets
EXCEL = '\ufeffp;n;"time [s]"\r\n1;10;"1,5"\r\n2;10;3,25\r\n4;10;6,5\r\n'


def test_a_decimal_comma_is_refused_without_a_carriage_return_and_read_with_the_option(tmp_path):
    path = write(tmp_path, "t.csv", EXCEL.replace('"', ""), newline="")
    with pytest.raises(InputError) as error:
        read(path, value="time [s]")
    assert str(error.value) == (f"{path}:2: column 'time [s]': '1,5' is not a number (a decimal comma? "
                                "--reader-option decimal=, reads it)")
    for text in (EXCEL, EXCEL.replace('"', "")):  # the quoted path and the fast path
        experiment = read(write(tmp_path, "t.csv", text, newline=""), value="time [s]", decimal=",")
        assert experiment.parameter_names == ["p", "n"]
        assert cells(experiment) == {("<root>", "time [s]", (1.0, 10.0)): [1.5],
                                     ("<root>", "time [s]", (2.0, 10.0)): [3.25],
                                     ("<root>", "time [s]", (4.0, 10.0)): [6.5]}


def test_the_decimal_option_needs_another_delimiter(tmp_path):
    path = write(tmp_path, "t.csv", "p,value\n1,2\n")
    with pytest.raises(InputError) as error:
        read(path, decimal=",")
    assert str(error.value) == (f"{path}: option decimal=,: the delimiter is ',' too; choose another with "
                                "--reader-option delimiter=")
    with pytest.raises(InputError) as error:
        read(path, decimal="dot")
    assert str(error.value) == "option decimal='dot': expected one of ., ,"


def test_crlf_leaves_no_carriage_return_in_a_message(tmp_path):
    path = write(tmp_path, "t.csv", "p,value,metric\r\n1,2,time\r\n2,abc\r\n", newline="")
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:3: 2 fields, expected 3 (p, value, metric)"
    path = write(tmp_path, "u.csv", "p,value\r\n1,2\r\n2,3x\r\n", newline="")
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:3: column 'value': '3x' is not a number"


# ------------------------------------------------------------ shell loops
def test_a_header_again_where_tables_were_joined_is_skipped_with_a_note(tmp_path):
    run = "p,callpath,value\n1,main,2\n2,main,4\n"
    path = write(tmp_path, "all.csv", run + run.replace("1,", "4,").replace("2,main,4", "8,main,16") + "\n" + run)
    experiment = read(path)
    assert len(experiment) == 6
    assert cells(experiment)["main", "time", (1.0,)] == [2.0, 2.0]
    assert experiment.notes == ["skipped lines 4, 8: the header again"]
    quoted = write(tmp_path, "q.csv", '"p","value"\n1,2\n"p","value"\n2,"4"\n')
    experiment = read(quoted)
    assert len(experiment) == 2 and experiment.notes == ["skipped line 3: the header again"]
    bad = write(tmp_path, "bad.csv", run + run + "4,main,x\n")
    with pytest.raises(InputError) as error:
        read(bad)
    assert str(error.value).startswith(f"{bad}:7: column 'value': 'x' is not a number")


def test_a_header_again_at_a_block_boundary(tmp_path, monkeypatch):
    monkeypatch.setattr(csv_reader, "BLOCK", 8)
    path = write(tmp_path, "t.csv", "p,value\n1,2\np,value\np,value\n2,4\n")
    experiment = read(path)
    assert cells(experiment) == {("<root>", "time", (1.0,)): [2.0], ("<root>", "time", (2.0,)): [4.0]}
    assert experiment.notes == ["skipped lines 3, 4: the header again"]


def test_a_delimiter_at_the_end_of_every_line_is_no_column(tmp_path):
    experiment = read(write(tmp_path, "t.csv", "p,value,\n1,2,\n2,4,\n"))
    assert experiment.parameter_names == ["p"]
    assert cells(experiment) == {("<root>", "time", (1.0,)): [2.0], ("<root>", "time", (2.0,)): [4.0]}
    assert experiment.notes == []
    path = write(tmp_path, "rows.csv", "p,value\n1,2,\n")
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == (f"{path}:2: 3 fields, expected 2 (p, value); the line ends with the delimiter ',': "
                                "end the header line with it too, or drop it from the rows")


# ------------------------------------------------------------ pandas
PANDAS_INDEX = ",p,value\n0,1,2\n1,2,4\n"


def test_the_index_pandas_writes_is_refused_saying_how_to_leave_it_out(tmp_path):
    path = write(tmp_path, "t.csv", PANDAS_INDEX)
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == (
        f"{path}:2: column 1 has no name in the header, yet holds '0' (pandas' to_csv writes its index so: "
        "index=False leaves it out; R's write.csv its row names: row.names=FALSE): name it in the header, or choose "
        "the parameter columns with --reader-option parameters=COL[,COL...] (the other columns are then ignored)")
    experiment = read(path, parameters="p")
    assert experiment.parameter_names == ["p"]
    assert cells(experiment) == {("<root>", "time", (1.0,)): [2.0], ("<root>", "time", (2.0,)): [4.0]}
    assert experiment.notes == ["ignored columns: column 1 (no name)"]


def test_a_table_from_pandas_models_the_known_function(tmp_path, host, capsys):
    rng = np.random.default_rng(3)
    rows = ["p,n,callpath,value"]
    for p in (2, 4, 8, 16, 32, 64):
        for n in (100, 200, 400, 800, 1600):
            for _ in range(3):
                rows.append(f"{p},{n},main->solve,{(3.1 + 2.0 * p * np.log2(p)) * (1 + 0.005 * rng.standard_normal())}")
    rows[5] = rows[5].rsplit(",", 1)[0] + ","  # a failed run: pandas writes NaN as an empty cell
    path = write(tmp_path, "t.csv", "\r\n".join(rows) + "\r\n", newline="")
    status = main(["model", str(path), "--export", "csv"])
    captured = capsys.readouterr()
    assert status == ExitStatus.OK
    row = captured.out.splitlines()[1].split(",")
    assert row[:2] == ["main->solve", "time"] and row[3].endswith(" * p^1 * log2(p)^1") and row[8] == "30"
    constant, coefficient = float(row[3].split(" + ")[0]), float(row[3].split(" + ")[1].split(" * ")[0])
    assert abs(constant - 3.1) < 0.2 and abs(coefficient - 2.0) < 0.01
    assert f"{path}: 1 value is not a finite number (empty, NA" in captured.err
    assert len(read_warning(path)[0]) == 90  # every row in is a measurement


# ------------------------------------------------------------ gzip
def test_a_gzip_compressed_table(tmp_path, host, capsys, monkeypatch):
    text = "p,value\n1,2\n2,4\n4,8\n"
    path = tmp_path / "t.csv.gz"
    path.write_bytes(gzip.compress(text.encode()))
    assert cells(read(path)) == cells(read(write(tmp_path, "t.csv", text)))
    two = tmp_path / "two.csv.gz"  # cat a.gz b.gz
    two.write_bytes(gzip.compress(text.encode()) + gzip.compress(text.encode()))
    assert len(read(two)) == 6 and read(two).notes == ["skipped line 5: the header again"]
    assert main(["model", str(path), "--export", "csv"]) == ExitStatus.OK
    capsys.readouterr()
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(path.read_bytes()[:-12])
    assert main(["model", str(cut)]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins: error: {cut}: the gzip stream is cut short (the file is "
                                       "truncated)\n")
    monkeypatch.setenv("EXTRAP_PLUGINS_MAX_INFLATED", "10")
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == (f"{path}: decompresses to more than 10 bytes, the limit for one input "
                                "(EXTRAP_PLUGINS_MAX_INFLATED=BYTES raises it)")


# ------------------------------------------------------------ JSON Lines of other tools
def test_json_lines_with_other_keys_are_the_json_reader_s_to_explain(tmp_path, host, capsys):
    path = write(tmp_path, "t.jsonl", '{"parameters": {"p": 1}, "value": 2}\n')
    assert main(["model", str(path)]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins: error: {path}:1: neither an Extra-P JSON document "
                                       "('parameters' and 'measurements') nor a JSON Lines row ('params'); its keys "
                                       "are: 'parameters', 'value'\n")
