"""The text reader: Extra-P's text format, exact values from real files and exact messages for bad input."""

from __future__ import annotations

import numpy as np
import pytest

from extrap_plugins import cli
from extrap_plugins.errors import InputError
from extrap_plugins.readers import text_reader
from reader_helpers import cells, reading


read = reading(text_reader)


# ------------------------------------------------------------- real files
def test_repetitions_per_data_line_may_differ(shared_data):
    experiment = read(shared_data / "extrap" / "input" / "experiments_SP" / "experiment2.txt")
    assert experiment.parameter_names == ["p"]
    assert [c.name for c in experiment.callpaths] == ["met1", "met2", "met3", "met4"]
    assert [m.name for m in experiment.metrics] == ["test"]  # METRIC before the first REGION holds for all
    got = cells(experiment)
    assert got["met2", "test", (16000.0,)] == [256.01, 255.99, 256.0, 256.0]  # 4 values on this DATA line
    assert got["met4", "test", (1000.0,)] == [1000000.0, 1000001.0, 1000002.0]
    assert len(experiment) == 5 * 5 * 3 - 1 + 5 * 3


def test_metric_switches_inside_a_region_and_points_one_per_line(shared_data):
    experiment = read(shared_data / "extrap" / "text" / "one_parameter_3.txt")
    assert [m.name for m in experiment.metrics] == ["time", "flops"]
    got = cells(experiment)
    assert got["compute", "time", (20.0,)] == [82.00848518948744, 81.42023198759563, 81.98984501217201,
                                               80.76019835580321, 82.54252892405795]
    assert sorted(p[0] for (_, m, p) in got if m == "flops") == [20.0, 30.0, 40.0, 50.0, 60.0]


def test_several_points_per_line_three_parameters(shared_data):
    experiment = read(shared_data / "extrap" / "text" / "three_parameter_1.txt")
    assert experiment.parameter_names == ["x", "y", "z"]
    assert len(experiment.points()) == 125 and len(experiment) == 125 * 5
    assert experiment.points()[0].tolist() == [20.0, 1.0, 100.0]


def test_points_without_parentheses_and_no_metric(shared_data):
    experiment = read(shared_data / "extrap" / "text" / "one_parameter_7.txt")
    assert experiment.points()[:, 0].tolist() == [1000.0, 2000.0, 4000.0, 8000.0, 16000.0]
    assert [m.name for m in experiment.metrics] == ["time"]  # no METRIC line: "time" ("" in Extra-P)


def test_parameters_on_one_line_comments_and_tabs(shared_data):
    experiment = read(shared_data / "extrap" / "text" / "two_parameter_5.txt")
    assert experiment.parameter_names == ["p", "s"]
    assert cells(experiment)["main", "time", (2.0, 10.0)] == [10.84]  # "DATA\t10.84" after a "# formula" line
    tabs = read(shared_data / "extrap" / "text" / "two_parameter_segmented_1.txt")  # "POINTS\t(\t10\t2\t)"
    assert len(tabs.points()) == 60


def test_region_names_keep_hashes_and_collapse_spaces(shared_data):
    experiment = read(shared_data / "extrap" / "text" / "mpa" / "relearn_data.txt")
    names = [c.name for c in experiment.callpaths]
    assert len(names) == 14
    assert "Update #synaptic elements delta" in names and "Exchange branch nodes (w/ Allgather)" in names


def test_call_tree_from_arrows(shared_data):
    experiment = read(shared_data / "extrap" / "text" / "one_parameter_2.txt")
    main = next(c for c in experiment.callpaths if c.name == "main")
    assert [c.name for c in experiment.children(main)] == ["main->merge", "main->sort"]
    assert [c.name for c in experiment.roots()] == ["main", "side"]


def test_inline_comments_and_data_before_region(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text("# measured on node 17\nPARAMETER p   # processes\nPOINTS 1 2 4\n"
                    "DATA 1.5 1.6  # first\nDATA 3\nDATA 6\n")
    assert cells(read(path)) == {("<root>", "time", (1.0,)): [1.5, 1.6], ("<root>", "time", (2.0,)): [3.0],
                                 ("<root>", "time", (4.0,)): [6.0]}


def test_windows_line_ends(tmp_path):
    path = tmp_path / "crlf.txt"
    path.write_bytes(b"PARAMETER p\r\nPOINTS ( 1 ) ( 2 )\r\nREGION main\r\nMETRIC time\r\nDATA 1 2\r\nDATA 3\r\n")
    assert cells(read(path)) == {("main", "time", (1.0,)): [1.0, 2.0], ("main", "time", (2.0,)): [3.0]}


def test_old_mac_line_ends_read_as_extrap_reads_them(tmp_path):
    """Lines ended by a carriage return alone: Extra-P reads them (Python's universal newlines); they were refused
    ("the lines end with a carriage return only"). Errors still name the line."""
    path = tmp_path / "cr.txt"
    path.write_bytes(b"PARAMETER p\rPOINTS ( 1 ) ( 2 )\rREGION main\r\r\nMETRIC time\rDATA 1 2\rDATA 3\r")
    assert cells(read(path)) == {("main", "time", (1.0,)): [1.0, 2.0], ("main", "time", (2.0,)): [3.0]}
    path.write_bytes(b"PARAMETER p\rPOINTS ( 1 ) ( 2 )\rREGION main\r\r\nMETRIC time\rDATA 1 2\rDATA x\r")
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:7: DATA value 'x' is not a number"


# ------------------------------------------------------------ bad input
BAD = [
    ("a.txt", "PARAMETER p\nPOINTS 1 2 4\nREGION main\nDATA 1 2\nDATA 2 abc\nDATA 3\n",
     "5: DATA value 'abc' is not a number"),
    ("b.txt", "PARAMETER p\nPOINTS 1 2 4\nREGION main\nFOO 1\n",
     "4: unknown keyword 'FOO'; a line starts with PARAMETER, POINTS, REGION, METRIC or DATA (or # for a comment)"),
    ("c.txt", "PARAMETER p n\nPOINTS ( 1 2 ) ( 3 )\n", "2: point ( 3 ) has 1 value, expected 2 (p, n)"),
    ("d.txt", "PARAMETER p\nPOINTS 1 2 1\n", "2: point (p=1) is listed twice (first on line 2)"),
    ("e.txt", "PARAMETER p\nPOINTS 1 2\nREGION a\nDATA 1\nDATA 2\nREGION a\nDATA 1\nDATA 2\n",
     "7: call path 'a', metric 'time' already has DATA lines (from line 4); give each REGION and METRIC pair once"),
    ("f.txt", "PARAMETER p\nREGION a\nDATA 1\n", "3: DATA before any POINTS line"),
    ("g.txt", "PARAMETER p\nPOINTS 1 2\nREGION a\nDATA\n", "4: DATA line without values"),
    ("h.txt", "PARAMETER p p\n", "1: parameter 'p' is declared twice (first on line 1)"),
    ("i.txt", "PARAMETER p\nPOINTS (1 (2)\n", "2: cannot read the points '(1 (2)': write ( v ) ( v ) ..."),
    ("l.txt", "PARAMETER p\nPOINTS 1 2\nREGION a\nDATA 1\nDATA 2\nPOINTS 4\n",
     "6: POINTS after DATA lines; give every point before the data"),
    # a point must be finite; a measured value that is not is missing (test_missing_values.py)
    ("m.txt", "PARAMETER p\nPOINTS 1 nan\n", "2: POINTS value 'nan' is not a finite number"),
    ("n.txt", "PARAMETER p\nPOINTS 1 2\nREGION a\nDATA 1\nREGION b\nDATA 1\nDATA 2\n",
     "4: call path 'a', metric 'time' has 1 DATA line (line 4), expected 2, one per point"),
    ("o.txt", "PARAMETER p\nPOINTS 1 2\nMETRIC\n", "3: METRIC without a name"),
    ("p.txt", "PARAMETER p q\nPOINTS 1 2\n", "2: POINTS without parentheses give one value per point, but there are "
                                             "2 parameters (p, q); write each point as ( v1 ... v2 )"),
    ("q.txt", "PARAMETER p\nPOINTS ( 1 ) ( x )\n", "2: POINTS value 'x' is not a number"),
    ("j.txt", "# nothing\n", "no PARAMETER line; is this an Extra-P text file?"),
    ("k.txt", "PARAMETER p\nPOINTS 1 2\n", "no DATA lines"),
    # accepted before, as the JSON Lines and Talpas readers refuse it
    ("r.txt", "PARAMETER p\nPOINTS 1 2\nREGION main->->solve\nDATA 1\nDATA 2\n",
     "3: REGION 'main->->solve' has an empty region name (a call path is region names joined with '->', each "
     "non-empty)"),
]


@pytest.mark.parametrize("name, content, message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_file_line_and_problem(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(InputError) as error:
        read(path)
    where = f"{path}:" if message[0].isdigit() else f"{path}: "
    assert str(error.value) == where + message


def test_not_utf8(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"PARAMETER p\nPOINTS 1 \xff\n")
    with pytest.raises(InputError) as error:
        read(path)
    assert str(error.value) == f"{path}:2: not UTF-8 text (byte 0xff); is this the right reader?"


def test_no_options(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("PARAMETER p\nPOINTS 1\nDATA 1\n")
    with pytest.raises(InputError) as error:
        read(path, incomplete="allow")
    assert str(error.value) == "the text reader has no option 'incomplete'; its options are: none"


def test_sniff(tmp_path, shared_data):
    assert text_reader.sniff(shared_data / "extrap" / "text" / "two_parameter_5.txt")
    commented = tmp_path / "c.txt"
    commented.write_text("# a comment first\n\nPARAMETER p\n")
    other = tmp_path / "o.txt"
    other.write_text("PARAMETERS p\n")
    assert text_reader.sniff(commented) and not text_reader.sniff(other)
    assert not text_reader.sniff(shared_data / "extrap" / "talpas" / "talpas_1.txt")


def test_any_white_space_ends_the_keyword_as_in_extrap(tmp_path):
    # a no-break space (text copied from a web page or a PDF) or a form feed after the keyword was
    # "unknown keyword 'DATA\xa01'"; Extra-P reads them as spaces
    path = tmp_path / "nbsp.txt"
    path.write_text("PARAMETER\u00a0p\nPOINTS\u00a01 2\u00a04\nREGION\u00a0main\u00a0loop\n"
                    "DATA\u00a01\nDATA\f2\u20033\nDATA\u00a04\n")
    assert cells(read(path)) == {("main loop", "time", (1.0,)): [1.0], ("main loop", "time", (2.0,)): [2.0, 3.0],
                                 ("main loop", "time", (4.0,)): [4.0]}
    assert text_reader.sniff(path)


def test_a_line_of_10_mb_is_quoted_cut_short(shared_data, tmp_path, capsys, host):
    # the message quoted the whole line: one error line of 10 MB
    lines = (shared_data / "extrap" / "text" / "one_parameter_1.txt").read_text().split("\n")
    lines.insert(9, "x" * (10 << 20))
    path = tmp_path / "one_parameter_1.txt"
    path.write_text("\n".join(lines))
    assert cli.main(["model", str(path)]) == 2
    assert capsys.readouterr().err == (f"extrap-plugins: error: {path}:10: unknown keyword '{'x' * 58}…; a line starts "
                                       "with PARAMETER, POINTS, REGION, METRIC or DATA (or # for a comment)\n")


def test_a_point_written_minus_0_is_the_point_0(shared_data, tmp_path):
    # kept as -0.0: the quality warnings said "parameter x has values below 1 (smallest -0)"
    text = (shared_data / "extrap" / "text" / "one_parameter_1.txt").read_text()
    path = tmp_path / "one_parameter_1.txt"
    path.write_text(text.replace("POINTS ( 20 )", "POINTS ( -0 )"))
    experiment = read(path)
    assert np.signbit(experiment.coordinates).sum() == 0
    assert sorted(set(experiment.coordinates[:, 0].tolist())) == [0.0, 30.0, 40.0, 50.0, 60.0]
