"""The inputs of one command line, checked before any reading (engine.input_paths)."""

from __future__ import annotations

import os
import warnings

import pytest

from extrap_plugins import engine
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
