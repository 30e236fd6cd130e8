import math

import numpy as np
import pytest

from extrap_plugins import Factor, Model, Segment, Term


def p_log_p():
    return Model("main->solve", "time", ("p",), 3.1, (Term(2.0, {"p": Factor(1, 1)}),))


def test_function_and_formula_text():
    m = p_log_p()
    assert m.function == "3.1 + 2.0 * p^1 * log2(p)^1"
    assert m.formula == "3.1 + 2 · p · log2(p)"
    cube_root = Model("a", "t", ("p", "n"), 1.5, (Term(-0.25, {"p": Factor(1 / 3, 0), "n": Factor(2, 2)}),))
    assert cube_root.function == "1.5 - 0.25 * p^0.3333333333333333 * n^2 * log2(n)^2"
    assert cube_root.formula == "1.5 - 0.25 · p^(1/3) · n^2 · log2(n)^2"


def test_predict_accepts_mapping_point_and_matrix():
    m = p_log_p()
    assert m.predict({"p": 8}) == pytest.approx(3.1 + 2 * 8 * 3)
    assert m.predict([16]) == pytest.approx(3.1 + 2 * 16 * 4)
    np.testing.assert_allclose(m.predict(np.array([[2.0], [4.0]])), [3.1 + 4, 3.1 + 16])
    with pytest.raises(ValueError, match="predict needs a value for p"):
        m.predict({"n": 3})


def test_segmented_model_predicts_with_the_right_segment():
    low = Segment({"p": (1, 64)}, 1.0, (Term(1.0, {"p": Factor(1, 0)}),))
    high = Segment({"p": (128, 1024)}, 100.0, ())
    m = Model("a", "t", ("p",), math.nan, segments=(low, high))
    np.testing.assert_allclose(m.predict(np.array([[2.0], [512.0], [4096.0]])), [3.0, 100.0, 100.0])
    assert m.formula == "1 + 1 · p for 1 ≤ p ≤ 64; 100 for 128 ≤ p ≤ 1024"
    wide = Model("a", "t", ("p",), math.nan, segments=(Segment({"p": (1, 524288)}, 1.0, ()),
                                                       Segment({"p": (1048576, 4194304)}, 2.0, ())))
    assert wide.formula == "1 for 1 ≤ p ≤ 524288; 2 for 1048576 ≤ p ≤ 4194304"  # values as given, not 1.04858e+06


# ------------------------------------------------------------ pandas and notebooks
def _linear_model_set():
    import extrap_plugins

    p = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    experiment = extrap_plugins.Experiment.from_columns(
        ["p"], callpath=["main"] * 5 + ["main->solve"] * 5, metric="time",
        coordinates=np.concatenate([p, p]).reshape(-1, 1), value=np.concatenate([1.0 + 3.0 * p, 3.0 * p]))
    return extrap_plugins.model(experiment)


def test_to_dataframe_one_row_per_model_with_values_and_intervals(host):
    pytest.importorskip("pandas", reason="pandas is not installed")
    models = _linear_model_set()
    frame = models.to_dataframe()
    assert list(frame["callpath"]) == ["main", "main->solve"]
    assert list(frame.columns[:5]) == ["callpath", "metric", "formula", "function", "growth"]
    assert "target" not in frame.columns
    assert frame.loc[1, "formula"] == "3 · p"
    assert frame.loc[1, "growth"] == "O(p)"
    assert frame.loc[0, "largest"] == pytest.approx(1.0 + 3.0 * 64)
    assert frame.loc[1, "points"] == 5
    at = models.to_dataframe(target={"p": 1024})
    assert at.loc[0, "target"] == pytest.approx(1.0 + 3.0 * 1024)
    assert at.loc[0, "lower"] <= at.loc[0, "target"] <= at.loc[0, "upper"]
    assert at.loc[1, "share_target"] == pytest.approx(3.0 * 1024 / (1.0 + 3.0 * 1024))
    assert at.attrs["target_point"] == {"p": 1024.0}


def test_html_in_notebooks(host):
    models = _linear_model_set()
    table = models._repr_html_()
    assert table.count("<tr>") == 3 and "<code>3 · p</code>" in table and "O(p)" in table
    single = models.models[1]._repr_html_()
    assert "<svg" in single and "<code>3 · p</code>" in single
    from extrap_plugins.notebook import model_html

    with_points = model_html(models.models[1], models.experiment)
    assert with_points.count("<circle") == 5
