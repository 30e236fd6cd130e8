"""Parameters and repetitions from Score-P folder names, and mapping files."""

from __future__ import annotations

import pathlib

import pytest

from extrap_plugins.errors import InputError
from extrap_plugins.readers.cube_names import RunName, parse_pairs, parse_run_name, read_mapping, repetition_folder


@pytest.mark.parametrize("name, parameters, values, repetition", [
    # every folder name among the Extra-P fixtures
    ("mm.x1000y1z1.r1", ("x", "y", "z"), (1000, 1, 1), 1),
    ("mm.x25y10z1.r1", ("x", "y", "z"), (25, 10, 1), 1),
    ("example.f3", ("f",), (3,), None),
    ("gpu.s128", ("s",), (128,), None),
    ("mm.x1.1y1.1z1.1", ("x", "y", "z"), (1.1, 1.1, 1.1), None),
    ("mm.x1y1z1", ("x", "y", "z"), (1, 1, 1), None),
    ("mm.x20,5.y20,5.z1,5.r1", ("x", "y", "z"), (20.5, 20.5, 1.5), 1),
    ("mm.x21.5,y21,5,z1.15.r1", ("x", "y", "z"), (21.5, 21.5, 1.15), 1),
    ("mm.x22.5.y22.5.z1.25.r1", ("x", "y", "z"), (22.5, 22.5, 1.25), 1),
    ("mm.x25.y25.z1.r1", ("x", "y", "z"), (25, 25, 1), 1),
    ("x10y1z1", ("x", "y", "z"), (10, 1, 1), None),
    ("mm.x1y1wrong1", ("x", "y", "wrong"), (1, 1, 1), None),
    ("mm.y1x1z1", ("y", "x", "z"), (1, 1, 1), None),
    ("time.p4.n2000.x1.r0", ("p", "n", "x"), (4, 2000, 1), 0),
    ("kripke.p8.d2.g32.r1", ("p", "d", "g"), (8, 2, 32), 1),
    ("fastest.p16.size131072.r1", ("p", "size"), (16, 131072), 1),
    # what Extra-P gets wrong: .ranks8 is a parameter, 1e6 is a million
    ("app.ranks8.size25.r2", ("ranks", "size"), (8, 25), 2),
    ("app.n1e6.p64", ("n", "p"), (1e6, 64), None),
    ("app.n2.5E-3", ("n",), (2.5e-3,), None),
    ("lulesh2.p8", ("p",), (8,), None),
    ("app.size_x4_size_y8", ("size_x", "size_y"), (4, 8), None),
    ("x22.5.y22.5", ("x", "y"), (22.5, 22.5), None),  # no prefix: the whole name is tried
    # what users write besides Extra-P's convention: name=value, a repetition after _ or -, .rep, a prefix ended by -
    ("p=64_n=1000", ("p", "n"), (64, 1000), None),
    ("p=64,n=1000", ("p", "n"), (64, 1000), None),
    ("app.p=64.n=1000.r2", ("p", "n"), (64, 1000), 2),
    ("num_procs=8_n=3", ("num_procs", "n"), (8, 3), None),
    ("app.p64.n1000.rep3", ("p", "n"), (64, 1000), 3),
    ("app.p64.n1000_r1", ("p", "n"), (64, 1000), 1),
    ("p64-n1000-rep2", ("p", "n"), (64, 1000), 2),
    ("app.grid_r8", ("grid_r",), (8,), None),  # _r8 after a letter is a name's end, not a repetition
    ("scorep-p64-n1000", ("p", "n"), (64, 1000), None),
])
def test_folder_names(name, parameters, values, repetition):
    assert parse_run_name(name) == RunName(parameters, tuple(float(v) for v in values), repetition)


def test_a_prefix_with_dots_is_given_as_a_literal_or_a_regular_expression():
    assert parse_run_name("my.app.v2.p8.r3", "my.app.v2") == RunName(("p",), (8.0,), 3)
    assert parse_run_name("run-2024-01-31_p8_n10", r"run-[0-9-]+") == RunName(("p", "n"), (8.0, 10.0), None)


def test_without_the_pattern_a_dotted_prefix_is_an_error_that_suggests_it():
    with pytest.raises(InputError) as caught:
        parse_run_name("my.app.p8", where="/runs/my.app.p8")
    assert str(caught.value) == (
        "/runs/my.app.p8: cannot read parameters from the folder name 'my.app.p8': 'app.p8' is not a <name><number> "
        "pair; expected <prefix>.<name><value>...[.r<repetition>], e.g. app.p64.size25.r1 (give --reader-option "
        "pattern=PREFIX when the prefix contains dots, or mapping=FILE.csv)")


def test_a_pattern_that_does_not_match_names_the_folder():
    with pytest.raises(InputError) as caught:
        parse_run_name("other.p8", r"my\.app", where="/runs/other.p8")
    assert str(caught.value) == r"/runs/other.p8: the folder name 'other.p8' does not start with the pattern 'my\.app'"
    with pytest.raises(InputError) as caught:
        parse_run_name("other.p8", "my(app", where="/runs/other.p8")
    assert str(caught.value) == ("/runs/other.p8: the pattern 'my(app' is neither a prefix of 'other.p8' nor a valid "
                                 "regular expression (missing ), unterminated subpattern at position 2)")


def test_a_file_name_is_called_a_file_name():
    with pytest.raises(InputError) as caught:
        parse_run_name("other.p8", r"my\.app", where="/runs/other.p8.cubex", what="file name")
    assert str(caught.value) == r"/runs/other.p8.cubex: the file name 'other.p8' does not start with the pattern 'my\.app'"
    with pytest.raises(InputError, match="^/runs/L2_DCM.cubex: cannot read parameters from the file name 'L2_DCM': "):
        parse_run_name("L2_DCM", where="/runs/L2_DCM.cubex", what="file name")


@pytest.mark.parametrize("name, reason", [
    ("hw_counter", "'hw_counter' is not a <name><number> pair"),
    ("app.p", "'p' is not a <name><number> pair"),
    ("mm.x1x2", "the parameter 'x' appears twice"),
    ("app.r8", "'app' is not a <name><number> pair (the trailing .r8 is read as the repetition)"),
    ("app.n1e400", "the value 1e400 of 'n' is beyond the floating-point range"),
    ("scorep-20240312_1012_1234567890", "it is Score-P's default name, which holds no parameters (name each run's "
                                        "folder with SCOREP_EXPERIMENT_DIRECTORY=app.p64.r1)"),
])
def test_names_without_parameters_are_errors_saying_why(name, reason):
    with pytest.raises(InputError) as caught:
        parse_run_name(name)
    assert str(caught.value).startswith(f"{name}: cannot read parameters from the folder name {name!r}: {reason}; ")


def test_a_repetition_beyond_int32_is_an_error_naming_the_folder():
    """Was 'none of the 3 runs could be read; the first: .../profile.cubex: a number is out of range'."""
    with pytest.raises(InputError) as caught:
        parse_run_name("app.p8.r3000000000", where="/runs/app.p8.r3000000000")
    assert str(caught.value) == ("/runs/app.p8.r3000000000: the repetition .r3000000000 in the folder name "
                                 "'app.p8.r3000000000' is not from 0 to 2147483647")


@pytest.mark.parametrize("name, number", [
    ("r1", 1), ("rep2", 2), ("run_3", 3), ("4", 4), ("Rep-05", 5), ("scorep-20240101_1200_123", None), ("p64", None),
    ("3000000000", None)])
def test_repetition_folders(name, number):
    assert repetition_folder(name) == number


def test_pairs():
    assert parse_pairs("p64size25") == (("p", "size"), (64.0, 25.0))
    with pytest.raises(ValueError, match="no parameters after the prefix"):
        parse_pairs("")


def test_mapping_file(tmp_path):
    (tmp_path / "run_a").mkdir()
    mapping = tmp_path / "runs.csv"
    mapping.write_text("path,p,n,repetition\n# a comment\nrun_a/profile.cubex,4,1e3,2\n\n/abs/run_b,8,\"2,5\",1\n")
    parameters, runs = read_mapping(mapping)
    assert parameters == ("p", "n")
    assert [(r.path, r.values, r.repetition, r.line) for r in runs] == [
        (tmp_path / "run_a" / "profile.cubex", (4.0, 1000.0), 2, 3),
        (pathlib.Path("/abs/run_b"), (8.0, 2.5), 1, 5),
    ]


@pytest.mark.parametrize("text, line, message", [
    ("", None, "the mapping file is empty; expected a header such as path,p,n,repetition"),
    ("file,p\n", 1, "the first column must be 'path', got 'file'; expected a header such as path,p,n,repetition"),
    ("path,repetition\n", 1, "the mapping file names no parameter column after 'path'"),
    ("path,p,p\n", 1, "the parameter column 'p' appears twice"),
    ("path,p,n\na,1\n", 2, "expected 3 fields (path,p,n), got 2"),
    ("path,p\na,four\n", 2, "the p value 'four' is not a number"),
    ("path,p,repetition\na,4,1.5\n", 2, "the repetition '1.5' is not a whole number"),
    # were a run skipped later for its parameter, a traceback (exit 1), or an error naming neither file nor line
    ("path,p\na,nan\n", 2, "the p value 'nan' is not a finite number"),
    ("path,p\na,1e400\n", 2, "the p value '1e400' is not a finite number"),
    ("path,p,repetition\na,4,nan\n", 2, "the repetition value 'nan' is not a finite number"),
    ("path,p,repetition\na,4,-inf\n", 2, "the repetition value '-inf' is not a finite number"),
    ("path,p,repetition\na,4,3e9\n", 2, "the repetition '3e9' is not from 0 to 2147483647"),
    ("path,p,repetition\na,4,-1\n", 2, "the repetition '-1' is not from 0 to 2147483647"),
])
def test_mapping_errors_name_file_and_line(tmp_path, text, line, message):
    mapping = tmp_path / "runs.csv"
    mapping.write_text(text)
    with pytest.raises(InputError) as caught:
        read_mapping(mapping)
    assert (caught.value.path, caught.value.line, caught.value.message) == (str(mapping), line, message)
