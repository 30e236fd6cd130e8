"""Option values from text (extrap_plugins.options)."""

from __future__ import annotations

import pytest

from extrap_plugins.options import parse_share, split_values


@pytest.mark.parametrize("text, share", [("5%", 0.05), ("0.05", 0.05), (" 80% ", 0.8), ("99.5%", 0.995), (0.25, 0.25)])
def test_a_share_is_a_percentage_or_a_number_between_0_and_1(text, share):
    assert parse_share(text, "--tolerance") == pytest.approx(share)


@pytest.mark.parametrize("text, given", [("0", "0"), ("1", "1"), ("100%", "100%"), ("-5%", "-5%"), ("5", "5"),
                                         ("nan", "nan"), ("5x", "'5x'"), ("%", "'%'"), ("", "''"), (True, "True")])
def test_anything_else_names_the_option_what_it_expects_and_what_it_got(text, given):
    with pytest.raises(ValueError) as error:
        parse_share(text, "--level", example="80%")
    assert str(error.value) == f"--level: expected a share between 0 and 1 (exclusive), such as 80% or 0.8, got {given}"


def test_the_sweeps_own_parser_names_an_unknown_option_before_the_program(capsys):
    # the rule lives in options.Parser, so the sweep run as a module says it as 'extrap-plugins run' does
    from extrap_plugins.instrument import sweep

    with pytest.raises(SystemExit) as ended:
        sweep.main(["--np", "1", "--parm", "n=1", "-o", "runs", "--", "python", "app.py"])
    assert ended.value.code == 2
    assert capsys.readouterr().err == ("extrap-plugins run: error: unrecognized option '--parm' (before '--'); did "
                                       "you mean --param?; see extrap-plugins run --help\n")


@pytest.mark.parametrize("text, values", [("4,8,16", ["4", "8", "16"]), (" 4, 8 ,16,", ["4", "8", "16"]),
                                          ("4", ["4"]), ("", [])])
def test_a_list_of_values_may_end_with_a_comma(text, values):
    assert split_values(text) == values


@pytest.mark.parametrize("text", ["4,,16", ",4", "4, ,8"])
def test_a_value_left_out_between_commas_is_refused(text):
    with pytest.raises(ValueError, match="^a value is missing between commas$"):
        split_values(text)


def test_an_error_message_is_one_line_of_reasonable_length():
    """Control characters a value brought in are escapes (a newline in --processes split the error in two lines);
    a word past LONGEST_WORD characters (a 100,000-character value said back) is cut in its middle."""
    from extrap_plugins.options import one_line

    assert one_line("the process count (a\nb\tc\0)") == "the process count (a\\nb\\tc\\x00)"
    assert one_line("main->計算 ok") == "main->計算 ok"
    word = "'" + "x" * 100_000 + "':"
    assert one_line(f"-o {word} is a folder") == ("-o '" + "x" * 59 + "… (99,883 characters left out) …" + "x" * 58
                                                  + "': is a folder")
    assert one_line("/" + "d" * 299 + " stays") == "/" + "d" * 299 + " stays"  # (a long path of 300 stays whole)
