"""The inputs of one command line, checked before any reading (engine.input_paths)."""

from __future__ import annotations

import os
import warnings

import pytest

from extrap_plugins import engine, read
from extrap_plugins.errors import ExtrapWarning, InputError


def test_a_hard_link_to_another_input_is_refused(tmp_path):
    # one file under two names (runs-week1/results.csv linked into runs-week2/): its rows would count twice,
    # as repetitions never run, and the models move with no word
    (tmp_path / "w1.csv").write_text("p,value\n2,3\n")
    os.link(tmp_path / "w1.csv", tmp_path / "w2.csv")
    with pytest.raises(InputError) as refused:
        engine.input_paths([tmp_path / "w1.csv", tmp_path / "w2.csv"])
    assert str(refused.value) == (f"{tmp_path / 'w2.csv'}: the same file as {tmp_path / 'w1.csv'}: its measurements "
                                  "would count twice")


def test_two_files_of_one_size_with_their_own_content_are_both_inputs_without_a_word(tmp_path):
    for name, text in (("w1.csv", "p,value\n2,3\n"), ("w2.csv", "p,value\n4,5\n")):
        (tmp_path / name).write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert engine.input_paths([tmp_path / "w1.csv", tmp_path / "w2.csv"]) == [tmp_path / "w1.csv",
                                                                                  tmp_path / "w2.csv"]


def test_a_copy_of_another_input_is_read_with_a_warning_naming_both(tmp_path):
    # runs-week1/results.csv copied into runs-week2/ by mistake: every measurement would count twice, unsaid
    for name, text in (("w1.csv", "p,value\n2,3\n"), ("w2.csv", "p,value\n2,3\n"), ("w3.csv", "p,value\n2,4\n")):
        (tmp_path / name).write_text(text)
    inputs = [tmp_path / "w1.csv", tmp_path / "w3.csv", tmp_path / "w2.csv"]
    with pytest.warns(ExtrapWarning) as caught:
        assert engine.input_paths(inputs) == inputs
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / 'w2.csv'}: the same bytes as {tmp_path / 'w1.csv'}: its measurements count twice, as "
        "repetitions never run (a copy given by mistake?)"]


def test_reader_options_go_to_the_readers_that_have_them(shared_data, tmp_path):
    # a CUBE folder and a spreadsheet's CSV of later runs: decimal=, is the CSV reader's (the CUBE reader refused it)
    later = tmp_path / "later.csv"
    later.write_text("callpath;metric;x;value\nextra;time;10;1,5\nextra;time;100;2,5\nextra;time;1000;3,5\n")
    folder = shared_data / "cube" / "extrap" / "single_parameter"
    joined = read([folder, later], decimal=",", metrics=["time"])
    extra = joined.take(joined.callpath_index == [c.name for c in joined.callpaths].index("extra"))
    assert sorted(extra.value.tolist()) == [1.5, 2.5, 3.5]
    with pytest.raises(InputError) as refused:
        read([folder, later], decimals=",")
    assert str(refused.value) == (
        "--reader-option 'decimals': no reader of these inputs has it; their options are cube: aggregation, values, "
        "pattern, mapping, parallel, metrics, callpaths; csv: value, parameters, callpath, metric, repetition, "
        "delimiter, decimal")


def test_one_reader_says_itself_which_options_it_has():
    from extrap_plugins.registration import ReaderInfo

    csv = ReaderInfo("csv", read=lambda path, options: None, options={"decimal": "the decimal mark"})
    assert engine.options_by_reader([csv, csv], {"bogus": "1"}) == {"csv": {"bogus": "1"}}
    undeclared = ReaderInfo("theirs", read=lambda path, options: None)
    assert engine.options_by_reader([csv, undeclared], {"bogus": "1", "decimal": ","}) == {
        "csv": {"decimal": ","}, "theirs": {"bogus": "1", "decimal": ","}}


def test_an_input_given_twice_is_named_as_the_user_typed_it(tmp_path, monkeypatch):
    # model stencil.jsonl ./stencil.jsonl said "stencil.jsonl: given twice (also as stencil.jsonl)"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stencil.jsonl").write_text("{}\n")
    with pytest.raises(InputError) as refused:
        engine.input_paths(["stencil.jsonl", "./stencil.jsonl"])
    assert str(refused.value) == "./stencil.jsonl: given twice (also as stencil.jsonl): its measurements would count " \
                                 "twice"


def _csv_runs(folder, formats=("csv",)):
    folder.mkdir()
    for k, p in enumerate((2, 4, 8, 16, 32)):
        (folder / f"run_p{p}.{formats[k % len(formats)]}").write_text(f"p,value\n{p},{3 * p}\n")
    return folder


def test_a_folder_of_one_file_runs_is_read_as_its_files(tmp_path):
    # (a sweep's CSV runs, one file each: "no reader recognises this input"; given one by one, 100,000 of them
    # pass the shell's limit)
    folder = _csv_runs(tmp_path / "sweep")
    (folder / "README.md").write_text("how the runs were made\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        experiment = read(folder)
    assert sorted(experiment.coordinates[:, 0]) == [2, 4, 8, 16, 32] and experiment.source == str(folder)
    assert [str(w.message) for w in caught] == [
        f"{folder}: 1 file no reader reads by its name left out of the folder's runs: README.md"]


def test_a_folder_of_one_file_runs_streams_as_it_reads(tmp_path, capsys):
    from extrap_plugins.cli import main
    folder = _csv_runs(tmp_path / "sweep")
    outputs = []
    for stream in ("off", "on"):
        assert main(["model", str(folder), "--stream", stream, "--export", "json"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and '"function": "' in outputs[0]


def test_a_folder_of_files_of_several_formats_is_not_taken_for_one_sweep(tmp_path):
    folder = _csv_runs(tmp_path / "mixed", formats=("csv", "jsonl"))
    with pytest.raises(InputError, match="no reader recognises this input"):
        read(folder)
