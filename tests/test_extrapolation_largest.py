"""The value at the largest measured point: a quantity never below 0 is not given below 0 there either."""

import warnings

import numpy as np

from extrap_plugins import Experiment, Factor, Model, ModelSet, Term
from extrap_plugins.extrapolation import extrapolate


def test_a_model_below_zero_at_the_largest_point_of_positive_data_gives_zero():
    """Score-P's multi_parameter cubes: main->init_mat [PAPI_L3_TCM], a count, was given as -1.92e-07 at
    x=25, y=25, z=25 beside an interval cut at 0 -- as the value at the target is.  Inside the measurements the
    modelers say of a model below 0: the cut adds no warning (it said the same of p=64 as the modeler did)."""
    P = np.array([[4.0], [8.0], [16.0], [32.0], [64.0]])
    falls = Model("main", "count", ("p",), 1.0, (Term(-0.02, {"p": Factor(1, 0)}),))  # -0.28 at p = 64
    experiment = Experiment.from_columns(["p"], callpath="main", metric="count", coordinates=P,
                                         value=[0.9, 0.8, 0.7, 0.4, 0.0], reader="test")
    model_set = ModelSet(("p",), [falls], modeler="hand", experiment=experiment)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        (row,) = extrapolate(model_set, "p=2").rows
    assert row.value_largest == 0.0 and row.value_target == 0.96
    assert record == []


def test_without_intervals_the_value_at_the_largest_point_is_cut_where_the_series_is_never_negative():
    """Without a target no intervals are prepared: the JSON export then gave -0.28 where, with one, it gave 0.
    The series' sign is the model's own (:attr:`Model.non_negative`, from the engine), so streamed models,
    without measurements, are cut too."""
    slope = (Term(-0.02, {"p": Factor(1, 0)}),)
    count = Model("main", "count", ("p",), 1.0, slope, non_negative=True)
    delta = Model("main", "delta", ("p",), 1.0, slope, non_negative=False)
    unknown = Model("main", "other", ("p",), 1.0, slope)
    model_set = ModelSet(("p",), [count, delta, unknown], modeler="hand", measured_points=np.array([[4.0], [64.0]]))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        rows = extrapolate(model_set).rows
        (_, _, target) = extrapolate(model_set, "p=100").rows
    assert [row.value_largest for row in rows] == [0.0, 1.0 - 0.02 * 64, 1.0 - 0.02 * 64]
    assert [str(w.message) for w in record] == [
        "main [count]: the model is -1 at p=100, below 0 though every measured value is 0 or more: the value "
        "given is 0 (of its terms of opposite sign, the negative ones win there; do not trust the model there)"]
    assert target.value_target == 1.0 - 0.02 * 100
