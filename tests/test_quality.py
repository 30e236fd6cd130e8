import numpy as np

from extrap_plugins.quality import quality_figures


def test_quality_figures_by_hand():
    y = np.array([[1.0, 2.0, 3.0, 4.0]])
    y_hat = np.array([[1.0, 2.0, 3.0, 5.0]])
    q = quality_figures(y, y_hat, 1)
    assert q["rss"][0] == 1.0
    r2 = 1 - 1.0 / 5.0
    assert np.isclose(q["ar2"][0], 1 - (1 - r2) * 3 / 2)
    assert np.isclose(q["smape"][0], 100 * (2 * 1 / 9) / 4)
    assert np.isclose(q["re"][0], 100 * (1 / 4) / 4)


def test_constant_series_fitted_exactly_has_r2_one():
    q = quality_figures(np.full((2, 5), 3.0), np.full((2, 5), 3.0), 0)
    assert q["ar2"].tolist() == [1.0, 1.0]
    assert q["smape"].tolist() == [0.0, 0.0]
