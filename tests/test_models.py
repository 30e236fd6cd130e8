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
