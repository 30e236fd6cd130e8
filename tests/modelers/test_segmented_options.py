"""Options of the ``segmented`` modeler: errors name the option as the user typed it."""

from extrap_plugins.cli import ExitStatus, main


def test_an_unknown_window_option_is_named_as_given(host, tmp_path, capsys):
    path = tmp_path / "p.txt"
    path.write_text("PARAMETER p\n\n" + "".join(f"POINTS ( {p} )\n" for p in range(1, 11))
                    + "\nREGION main\nMETRIC time\n" + "".join(f"DATA {p * p}\n" for p in range(1, 11)))
    assert main(["model", str(path), "--modeler", "segmented", "--option", "window_foo=1"]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (
        "extrap-plugins: error: modeler 'segmented': window_foo: modeler 'default' has no option 'foo'; its options "
        "are: exponents, log_exponents, max_terms, negative_exponents, criterion, improvement, weighting, measure, "
        "selection, outlying_points\n"
    )


def test_infinite_counts_are_refused_with_the_option_named(host, tmp_path, capsys):
    # int(inf) raised OverflowError: an internal error, exit 1
    path = tmp_path / "p.txt"
    path.write_text("PARAMETER p\n\n" + "".join(f"POINTS ( {p} )\n" for p in range(1, 11))
                    + "\nREGION main\nMETRIC time\n" + "".join(f"DATA {p * p}\n" for p in range(1, 11)))
    for option in ("window", "min_points", "max_changes"):
        assert main(["model", str(path), "--modeler", "segmented", "--option", f"{option}=inf"]) == \
            ExitStatus.BAD_INPUT
        assert capsys.readouterr().err == (
            f"extrap-plugins: error: modeler 'segmented': {option}: expected a whole number, got inf\n")


def test_a_bad_window_option_value_is_named_as_given(host, tmp_path, capsys):
    path = tmp_path / "p.txt"
    path.write_text("PARAMETER p\n\n" + "".join(f"POINTS ( {p} )\n" for p in range(1, 11))
                    + "\nREGION main\nMETRIC time\n" + "".join(f"DATA {p * p}\n" for p in range(1, 11)))
    assert main(["model", str(path), "--modeler", "segmented", "--option", "window_max_terms=x"]) == \
        ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (
        "extrap-plugins: error: modeler 'segmented': window_max_terms: modeler 'default': max_terms: expected a "
        "whole number from 1 to 4, got 'x'\n")
