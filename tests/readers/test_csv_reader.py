"""The csv reader: tidy tables, statistics tables such as mpi_data.csv, exact messages for bad input."""

from __future__ import annotations

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.cli import ExitStatus, main
from extrap_plugins.errors import InputError
from extrap_plugins.readers import csv_reader
from reader_helpers import cells, reading


read = reading(csv_reader)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


TIDY = ("p,n,callpath,metric,value\n"
        "4,100,main->solve,time,1.25\n"
        "4,100,main->solve,time,1.31\n"
        "8,100,main->solve,time,2.52\n"
        "8,100,main,visits,3\n")


# ---------------------------------------------------------- tidy tables
def test_tidy_table(tmp_path):
    experiment = read(write(tmp_path, "t.csv", TIDY))
    assert experiment.parameter_names == ["p", "n"]
    assert [c.name for c in experiment.callpaths] == ["main->solve", "main"]
    assert [m.name for m in experiment.metrics] == ["time", "visits"]
    assert cells(experiment) == {("main->solve", "time", (4.0, 100.0)): [1.25, 1.31],
                                 ("main->solve", "time", (8.0, 100.0)): [2.52],
                                 ("main", "visits", (8.0, 100.0)): [3.0]}
    assert experiment.repetition.tolist() == [0, 1, 0, 0]
    assert experiment.notes == []


def test_only_parameters_and_value_and_case_insensitive_names(tmp_path):
    experiment = read(write(tmp_path, "t.csv", "\ufeffRanks,Value\n32,1.5\n64,2.5\n\n64,2.7\n"))
    assert experiment.parameter_names == ["Ranks"]
    assert cells(experiment) == {("<root>", "time", (32.0,)): [1.5], ("<root>", "time", (64.0,)): [2.5, 2.7]}


def test_repetition_column(tmp_path):
    experiment = read(write(tmp_path, "t.csv", "p,repetition,value\n1,1,10\n1,0,11\n2,0,20\n"))
    assert experiment.parameter_names == ["p"]
    assert experiment.repetition.tolist() == [1, 0, 0]
    group = next(experiment.series_groups())
    np.testing.assert_array_equal(group.values[0], [[11.0, 10.0], [20.0, np.nan]])


@pytest.mark.parametrize("text", ["p;value\n1;2\n2;4\n", "p\tvalue\n1\t2\n2\t4\n", "p,value\r\n1,2\r\n2,4\r\n"])
def test_semicolon_and_tab_delimiters(tmp_path, text):
    experiment = read(write(tmp_path, "t.csv", text))
    assert cells(experiment) == {("<root>", "time", (1.0,)): [2.0], ("<root>", "time", (2.0,)): [4.0]}


def test_quoted_fields_match_the_fast_path(tmp_path):
    plain = read(write(tmp_path, "plain.csv", TIDY))
    quoted = read(write(tmp_path, "quoted.csv", TIDY.replace("main->solve", '"main->solve"')))
    assert cells(quoted) == cells(plain)
    comma = read(write(tmp_path, "comma.csv", 'p,callpath,value\n1,"f(a,b)",2\n2,"f(a,b)",3\n'))
    assert [c.name for c in comma.callpaths] == ["f(a,b)"]


def test_blocks_give_the_same_result_and_the_right_lines(tmp_path, monkeypatch):
    text = "p,callpath,value\n" + "".join(f"{p},f{p % 3},{p * 1.5}\n" + ("\n" if p == 4 else "") for p in range(1, 30))
    path = write(tmp_path, "t.csv", text)
    whole = cells(read(path))
    monkeypatch.setattr(csv_reader, "BLOCK", 20)  # a block every line or two
    assert cells(read(path)) == whole
    bad = write(tmp_path, "bad.csv", text.replace("25,f1,37.5", "25,f1,x"))
    with pytest.raises(InputError) as error:
        read(bad)
    assert str(error.value) == (f"{bad}:27: column 'value': 'x' is not a number (a value not measured is written "
                                "empty, NA or nan: it is left out as missing)")  # header, 24 rows, a blank line


# ------------------------------------------------------------ mpi_data.csv
MPI = dict(value="median", parameters="Ranks", callpath="mpi,variable")


def test_a_table_without_a_value_column_gets_an_example_of_its_own_columns(tmp_path):
    # the example named mpi_data.csv's columns (value=median parameters=Ranks ...) for every table
    path = tmp_path / "h.csv"
    path.write_text("p,time_ms\n1,2\n2,3\n")
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value).endswith("(for example: value=time_ms parameters=p)")


def test_mpi_data_needs_to_be_told_its_columns(shared_data):
    path = shared_data / "extrap" / "mpi_data.csv"
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == (
        f"{path}:1: no 'value' column; the columns are: mpi, variable, Ranks, N, mean, sd, median, min, max, iqr, "
        "ci_sd_left, ci_sd_right, ci_median_left, ci_median_right, ci_iqr_left, ci_iqr_right, smallest_left, "
        "largest_left, smallest_right, largest_right, smallest_interval, largest_interval. Name the value column(s) "
        "with --reader-option value=COL[,COL...] and the parameter columns with --reader-option parameters=COL[,...] "
        "(Extra-P's mpi_data.csv, for example, is read with value=median parameters=Ranks callpath=mpi,variable)")
    with pytest.raises(InputError) as error:
        read(path, value="median")
    assert str(error.value) == (
        f"{path}:2: column 'mpi': 'IntelMPI' is not a number; every column but median is a numeric parameter: "
        "choose the parameter columns with --reader-option parameters=COL[,COL...] (and callpath=COL[,COL...] "
        "for name columns)")


def test_mpi_data_with_its_columns(shared_data):
    experiment = read(shared_data / "extrap" / "mpi_data.csv", **MPI)
    assert experiment.parameter_names == ["Ranks"]
    assert len(experiment.callpaths) == 14 and experiment.callpaths[0].name == "IntelMPI->MPI_Barrier"
    assert [c.name for c in experiment.roots()] == []  # "IntelMPI" itself has no values
    assert [m.name for m in experiment.metrics] == ["median"]
    assert experiment.points()[:, 0].tolist() == [32.0, 64.0, 128.0, 256.0, 512.0]
    got = cells(experiment)
    assert got["IntelMPI->MPI_Barrier", "median", (32.0,)] == [11.21505]
    assert got["OpenMPI->MPI_Allreduce", "median", (512.0,)] == [150.82025]
    assert len(experiment) == 70
    assert experiment.notes == ["ignored columns: N, mean, sd, min, max, iqr, ci_sd_left, ci_sd_right, ci_median_left, "
                                "ci_median_right, ci_iqr_left, ci_iqr_right, smallest_left, largest_left, "
                                "smallest_right, largest_right, smallest_interval, largest_interval"]


def test_mpi_data_several_statistics_become_metrics(shared_data):
    experiment = read(shared_data / "extrap" / "mpi_data.csv", value="mean,median,min", parameters="Ranks",
                      callpath="mpi,variable")
    assert [m.name for m in experiment.metrics] == ["mean", "median", "min"]
    got = cells(experiment)
    assert got["OpenMPI->MPI_Allreduce", "mean", (512.0,)] == [270.24556625]
    assert got["OpenMPI->MPI_Allreduce", "median", (512.0,)] == [150.82025]
    assert len(experiment) == 3 * 70


def test_mpi_data_with_a_metric_column(shared_data):
    experiment = read(shared_data / "extrap" / "mpi_data.csv", value="median", parameters="Ranks",
                      callpath="variable", metric="mpi")
    assert [m.name for m in experiment.metrics] == ["IntelMPI", "OpenMPI"]
    assert len(experiment.callpaths) == 7
    assert cells(experiment)["MPI_Allreduce", "OpenMPI", (512.0,)] == [150.82025]


def test_mpi_data_models_from_the_command_line(shared_data, host, capsys):
    path = shared_data / "extrap" / "mpi_data.csv"
    status = main(["model", str(path), "--reader-option", "value=median", "--reader-option", "parameters=Ranks",
                   "--reader-option", "callpath=mpi,variable", "--callpath", "OpenMPI->MPI_Allreduce",
                   "--export", "csv"])
    assert status == ExitStatus.OK
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("callpath,metric,") and lines[1].startswith("OpenMPI->MPI_Allreduce,median,")
    assert len(lines) == 2


# ------------------------------------------------------------ bad input
EMPTY = "has an empty region name (a call path is region names joined with '->', each non-empty)"
BAD = [
    ("a.csv", "p,value\n1,1\n2,abc\n", "3: column 'value': 'abc' is not a number (a value not measured is written "
                                      "empty, NA or nan: it is left out as missing)"),
    ("b.csv", "p,value\n1,1\n2,3,4\n", "3: 3 fields, expected 2 (p, value)"),
    ("c.csv", "p,value\n1,1\n,2\n", "3: column 'p' is empty; every column but value is a numeric parameter: "
                                   "choose the parameter columns with --reader-option parameters=COL[,COL...] (and "
                                   "callpath=COL[,COL...] for name columns)"),
    ("d.csv", "p,callpath,value\n1,,1\n", "2: column 'callpath' is empty"),
    ("e.csv", "p,value,p\n1,1,1\n", "1: column 'p' appears twice in the header"),
    ("f.csv", "value\n1\n", "1: no parameter column (the columns are: value); add one, such as p, or choose them "
                            "with --reader-option parameters=COL[,COL...]"),
    ("g.csv", "p,value,repetition\n1,1,0\n1,2,0\n",
     "3: call path '<root>', metric 'time', point (p=1) has repetition 0 twice (also on line 2)"),
    ("h.csv", "p,value,repetition\n1,1,0.5\n",
     "2: column 'repetition': '0.5' is not a repetition number (0, 1, 2, ...)"),
    ("i.csv", "p,value\n", " no rows below the header"),
    ("j.csv", "", " the file is empty"),
    ("k.csv", 'p,value\n1,"1\n2,2\n', "2: column 'value': '1\\n2,2\\n' is not a number"),
    # a parameter value must be finite; a measured value that is not is missing (test_missing_values.py)
    ("l.csv", "p,value\ninf,1\n", "2: column 'p': 'inf' is not a finite number; every column but value is a "
                                  "numeric parameter: choose the parameter columns with --reader-option "
                                  "parameters=COL[,COL...] (and callpath=COL[,COL...] for name columns)"),
    ("m.csv", 'p,value\n1,2\n"2",3,4\n', "3: 3 fields, expected 2 (p, value)"),
    ("n.csv", "p,,value\n1,2,3\n", "2: column 2 has no name in the header, yet holds '2': name it in the header, or "
                                   "choose the parameter columns with --reader-option parameters=COL[,COL...] (the "
                                   "other columns are then ignored)"),
    # accepted before, as the JSON Lines and Talpas readers refuse it
    ("o.csv", "p,callpath,value\n1,main,1\n2,main->->solve,2\n3,main->->solve,3\n",
     f"3: 'callpath' 'main->->solve' {EMPTY}"),
]


@pytest.mark.parametrize("name, content, message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_file_line_and_problem(tmp_path, name, content, message):
    path = write(tmp_path, name, content)
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:{message}"


def test_an_empty_region_name_in_joined_call_path_columns(tmp_path):
    path = write(tmp_path, "j.csv", "mpi,variable,p,value\nIntelMPI,Barrier,1,2\nIntelMPI->,Barrier,2,3\n")
    with pytest.raises(InputError) as error:
        read(path, callpath="mpi,variable")
    assert str(error.value) == f"{path}:3: call path 'IntelMPI->->Barrier' {EMPTY}"


@pytest.mark.parametrize("options, message", [
    (dict(unit="s"), "the csv reader has no option 'unit'; its options are: callpath, decimal, delimiter, metric, "
                     "parameters, repetition, value"),
    (dict(value="runtime"), "{path}:1: no column 'runtime' (option value=); the columns are: p, n, callpath, metric, "
                            "value"),
    (dict(value="value,p"), "{path}: several value columns (value, p) name the metrics themselves; drop the metric "
                            "column 'metric' (option metric=) or choose one value column"),
    (dict(parameters="p,value"), "{path}: column 'value' cannot be a parameter and a value, call path, metric or "
                                 "repetition column"),
    (dict(delimiter="#"), "{path}: option delimiter='#': expected one of , ; | tab"),
])
def test_bad_options(tmp_path, options, message):
    path = write(tmp_path, "t.csv", TIDY)
    with pytest.raises(InputError) as error:
        read(path, **options)
    assert str(error.value) == message.format(path=path)


def test_sniff_and_selection(tmp_path, host):
    path = write(tmp_path, "measurements.dat", TIDY)
    assert csv_reader.sniff(path)
    assert not csv_reader.sniff(write(tmp_path, "other.dat", "a,b\n1,2\n"))
    assert extrap_plugins.read(path).reader == "csv"


def test_a_cell_of_200_kb_is_quoted_cut_short(shared_data, tmp_path):
    # the message quoted the cell whole: one error line of 200 kB
    lines = (shared_data / "extrap" / "mpi_data.csv").read_text().split("\n")
    lines = ["," + lines[0], "y" * 200_000 + "," + lines[1], *("," + line for line in lines[2:] if line)]
    path = tmp_path / "mpi_data.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as error:
        read(path, value="median", callpath="mpi,variable")
    assert str(error.value) == (f"{path}:2: column 1 has no name in the header, yet holds '{'y' * 58}… (pandas' "
                                "to_csv writes its index so: index=False leaves it out; R's write.csv its row names: "
                                "row.names=FALSE): name it in the header, or choose the parameter columns with "
                                "--reader-option parameters=COL[,COL...] (the other columns are then ignored)")
