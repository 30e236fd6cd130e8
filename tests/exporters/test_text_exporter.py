"""The text export as a terminal and a pipe show it: labels that say what the numbers are, columns that line up."""

import extrap_plugins
from extrap_plugins import Factor, Model, ModelSet, Quality, Term

EXACT = Quality(rss=0.0, ar2=1.0, smape=0.0, re=0.0)


def linear(callpath, coefficient=1.0):
    return Model(callpath, "time", ("p",), 1.0, (Term(coefficient, {"p": Factor(1.0, 0)}),), EXACT, points=5,
                 modeler="default")


def test_the_interval_header_names_the_level_given_not_a_rounded_one(host):
    # --export-option level=0.975 headed the column "98% interval", level=0.999 "100% interval"
    model_set = ModelSet(("p",), [linear("main")], modeler="default")
    for level, header in (("0.975", "97.5% interval"), ("99.9%", "99.9% interval"), ("0.95", "95% interval")):
        text = extrap_plugins.export(model_set, "text", target="p=64", level=level)
        assert header in text.splitlines()[0]


def test_columns_line_up_after_wide_characters_and_control_characters_are_escaped(host):
    # "main->日本語の関数名" pushed its row's columns 7 places right of the others'; a tab in a name broke the row
    models = [linear("main->日本語の関数名"), linear("main->tab\there"), linear("main->\x1b[2Jclear")]
    lines = extrap_plugins.export(ModelSet(("p",), models, modeler="default"), "text").splitlines()
    assert lines[2:5] == ["main->日本語の関数名  time      1 + 1 · p  1.0000     0.00%",
                          "main->tab\\there       time      1 + 1 · p  1.0000     0.00%",
                          "main->\\x1b[2Jclear    time      1 + 1 · p  1.0000     0.00%"]
