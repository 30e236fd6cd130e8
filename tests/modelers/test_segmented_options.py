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
        "selection\n"
    )
