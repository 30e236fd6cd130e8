"""The one home of number formatting (extrap_plugins.formatting)."""

from __future__ import annotations

import math

from extrap_plugins.formatting import (described, format_bytes, format_callpath, format_callpaths, format_count, format_number,
                                      format_percent, format_share, format_value, format_warned)


def test_a_share_keeps_one_decimal_below_ten_thousand_percent():
    assert format_share(0.0512) == "5.1%"
    assert format_share(10.627) == "1062.7%"
    assert format_share(99.99) == "9999.0%"


def test_a_huge_share_is_given_in_three_significant_digits():
    # an interval around a prediction near zero: main [PAPI_L3_TCM] of the CUBE multi_parameter set
    assert format_share(3467679230.612) == "3.47e+11%"
    assert format_share(100.0) == "1e+04%"
    assert format_share(math.inf) == "inf%"


def test_numbers_for_people_and_for_machines():
    assert format_number(0.000123456, False) == "0.0001235"
    assert format_number(1.5e-12, False) == "1.5e-12"
    assert format_number(0.1, True) == "0.1"
    assert format_value(4.0) == "4" and format_value(0.5) == "0.5"


def test_a_count_takes_the_plural_unless_it_is_one():
    assert [format_count(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    assert format_count(1, "more run") == "1 more run"


def test_a_share_the_user_gave_keeps_its_digits():
    assert [format_percent(t) for t in (0.05, 0.3, 0.025, 0.001, 1e-4)] == ["5%", "30%", "2.5%", "0.1%", "0.01%"]


def test_a_warning_of_up_to_three_series_names_them_all():
    # "IntelMPI->MPI_Allgather [median] and 1 more series: ...": the other was never named
    assert format_warned(["main [time]", "main->a [time]", "main->b [time]"], "noisy") == \
        "main [time], main->a [time] and main->b [time]: noisy"
    assert format_warned(["a [median]", "b [median]"], "noisy", "--export json lists them all") == \
        "a [median] and b [median]: noisy"
    assert format_warned(["main [time]"], "noisy") == "main [time]: noisy"
    assert format_warned(["main [time]", "main [time]"], "noisy") == "main [time]: noisy"  # one series, warned twice
    assert format_warned([], "a file could not be read") == "a file could not be read"
    long = "main->" + "region" * 40 + " [time]"
    assert format_warned([long, "main [time]"], "noisy") == f"{format_callpath(long)} and main [time]: noisy"
    alike = ["main->alpha->x->y->solve [t]", "main->beta->x->y->solve [t]"]
    assert format_warned(alike, "noisy") == f"{' and '.join(format_callpaths(alike))}: noisy"


def test_a_warning_of_more_series_names_the_first_counts_the_others_and_says_where_all_are():
    series = [f"main->r{k} [time]" for k in range(8)]
    assert format_warned(series, "noisy") == "main->r0 [time] and 7 more series: noisy"
    assert format_warned(series, "noisy", "--export json lists them all") == \
        "main->r0 [time] and 7 more series (--export json lists them all): noisy"


def test_byte_sizes_go_up_to_exbibytes():
    # "1 PiB" printed as "1024 TiB"
    assert [format_bytes(2.0**k) for k in (10, 31, 40, 50, 60, 62)] == \
        ["1 KiB", "2 GiB", "1 TiB", "1 PiB", "1 EiB", "4 EiB"]
    assert format_bytes(1536 * 2.0**40) == "1536 TiB" and format_bytes(1.5e9) == "1.5e+09 bytes"
    assert format_bytes(1000) == "1000 bytes" and format_bytes(2.0**80) == "1.2089258196146292e+24 bytes"
    assert format_bytes(2147483649) == "2147483649 bytes"  # exact, not 2.14748e+09
    from extrap_plugins.codesign_output import size_text  # the codesign outputs' sizes (system: ... per process)

    assert size_text(2.0**50) == "1 PiB"


def test_a_long_call_path_keeps_its_root_and_its_last_regions():
    assert format_callpath("main->solve [time]") == "main->solve [time]"  # short: whole
    deep = "main->" + "->".join(f"region{i:02d}" for i in range(20)) + " [time]"
    assert format_callpath(deep, 60) == \
        "main->…->region16->region17->region18->region19 [time]"
    assert len(format_callpath(deep, 60)) <= 60
    # a C++ template region alone longer than the width: its beginning and its end (the metric stays)
    template = "lulesh->main->void thrust::for_each_n<" + "int, " * 100 + "long>::operator [visits]"
    short = format_callpath(template, 100)
    assert len(short) == 100 and short.startswith("lulesh->…->void thrust::for_each_n<int, ")
    assert short.endswith("int, long>::operator [visits]") and short.count("…") == 2
    # a root too long to keep is elided too
    assert format_callpath("r" * 80 + "->" + "leaf", 50) == "…->leaf"


def test_call_paths_shortened_alike_keep_the_region_that_tells_most_of_them_apart():
    # three callers of one routine deep below them, and the same call path twice (two metrics): its rows read alike
    paths = [f"main->{caller}->" + "->".join(f"r{i:02d}" for i in range(30)) + "->leaf" for caller in "abc"]
    assert len({format_callpath(path, 40) for path in paths}) == 1
    assert format_callpaths(paths + paths[:1], 40) == ["main->a->…->leaf", "main->b->…->leaf", "main->c->…->leaf",
                                                       "main->a->…->leaf"]
    # names that differ only inside their shortened last region are numbered in the order given
    twins = ["main->" + "x" * 50 + kind + "y" * 50 for kind in ("float", "double")]
    assert [text[-4:] for text in format_callpaths(twins, 40)] == [" (1)", " (2)"]
    assert format_callpaths(["main", "main->solve"]) == ["main", "main->solve"]


def test_a_text_table_aligns_wide_characters_as_a_terminal_shows_them():
    # tabulate counts characters: a column after a call path in Japanese started 6 columns too far right
    from extrap_plugins.formatting import text_table

    assert text_table(["call path", "metric"], [["main->日本語", "time"], ["main->x", "bytes"]]).splitlines() == [
        "call path     metric",
        "------------  --------",
        "main->日本語  time",
        "main->x       bytes"]


def test_a_text_table_shows_control_characters_escaped_one_row_a_line():
    # a tab or a newline in a region's name broke the row; an escape sequence was sent to the terminal
    from extrap_plugins.formatting import printable, text_table

    assert printable("a\tb\nc\x1b[2Jd") == "a\\tb\\nc\\x1b[2Jd" and printable("日本 é") == "日本 é"
    assert text_table(["name"], [["a\tb\nc"]]).splitlines() == ["name", "-------", "a\\tb\\nc"]


def test_call_paths_for_people_escape_control_characters_also_in_warnings():
    # the warnings at the end of the text output named a region with a tab or an escape sequence raw
    from extrap_plugins.formatting import format_callpath, format_callpaths, format_warned

    assert format_callpath("main->a\tb") == "main->a\\tb"
    assert format_callpaths(["main->x\x1b[2J", "main->y"]) == ["main->x\\x1b[2J", "main->y"]
    assert format_warned(["main->a\nb [time]"], "noisy") == "main->a\\nb [time]: noisy"


def test_an_exponent_a_rounding_away_from_whole_is_whole():
    # a plugin's fitted 0.9999999999 was printed p^(1/1)
    from extrap_plugins.formatting import format_exponent

    assert [format_exponent(e) for e in (0.9999999999, 2.0000000001, 0.5000000001)] == ["1", "2", "(1/2)"]


def test_a_value_whose_repr_spans_lines_is_described_on_one():
    class Frame:
        def __repr__(self):
            return "   p   n\n0  1  10\n1  2  20"

    assert described(Frame()) == "the Frame p n 0 1 10 1 2 20"
    assert described("a  b") == "the str 'a  b'"  # a str's own spaces kept
