"""What a notebook shows of models: ``ModelSet._repr_html_``, ``Model._repr_html_`` and ``to_dataframe``."""

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import Factor, Model, ModelSet, Term


def linear(callpath="main"):
    return Model(callpath, "time", ("p",), 1.0, (Term(2.0, {"p": Factor(1, 0)}),))


def caption(model_set: ModelSet) -> str:
    html = model_set._repr_html_()
    return html[html.index("<caption>") + len("<caption>"):html.index("</caption>")]


def test_the_caption_counts_models_as_the_repr_does_and_names_no_unknown_modeler():
    # before: "1 models of p by ?" for a set put together by hand
    assert caption(ModelSet(("p",), [linear()])) == "1 model of p"
    assert caption(ModelSet(("p",), [linear("a"), linear("b")], modeler="default", source="s.jsonl")) == (
        "2 models of p by default from s.jsonl")


def test_to_dataframe_has_the_validation_error_of_validated_models_as_the_csv_export_has(host):
    pytest.importorskip("pandas")
    p = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
    experiment = extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time",
                                                        coordinates=p.reshape(-1, 1), value=3 + 2 * p + 0.01 * p ** 2)
    validated = extrap_plugins.model(experiment, validate=True)
    # before: no such column, though extrap-plugins model --validate --export csv has it
    frame = validated.to_dataframe()
    assert list(frame["validation_error"]) == [validated[0].validation] and validated[0].validation > 0
    assert "validation_error" in validated.to_dataframe("p=64").columns
    assert "validation_error" not in extrap_plugins.model(experiment).to_dataframe().columns


def test_print_of_models_points_a_shared_warning_to_model_warnings_not_to_the_command_line(host):
    # print(models) said "(--export json lists them all)", an option of the command line, to a Python user
    import warnings

    points = [1, 2, 1, 2]
    experiment = extrap_plugins.Experiment.from_columns(
        ["p"], callpath=[f"f{c}" for c in range(5) for _ in points], metric="time",
        coordinates=[[p] for _ in range(5) for p in points], value=[1.0 + p for _ in range(5) for p in points])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = extrap_plugins.model(experiment, host=host)
    assert str(models).endswith(
        "\nwarnings:\n  f0 [time] and 4 more series (their Model.warnings say it): parameter p has only 2 distinct "
        "values; at least 5 are needed for a trustworthy model\n")
    assert all(model.warnings == ("parameter p has only 2 distinct values; at least 5 are needed for a trustworthy "
                                  "model",) for model in models)
