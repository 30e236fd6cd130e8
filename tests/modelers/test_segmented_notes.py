"""Notes of the ``segmented`` modeler: one per cause, and short whatever the options."""

import warnings

import numpy as np

import extrap_plugins
from extrap_plugins.experiment import Experiment
from extrap_plugins.modelers.segmentation import too_few_points_note


def test_a_segment_with_too_few_points_is_warned_of_once(host):
    # the last segment has 4 points: our note names what to measure; the wrapped modeler's own note about the
    # same 4 values ("only 4 distinct values ... trustworthy model") said it a second time
    p = 2.0 ** np.arange(1, 11)
    experiment = Experiment.from_columns(["p"], callpath="k", metric="time", coordinates=p[:, None],
                                         value=np.where(p <= 64, 10 + p, 3 * p))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (model,) = extrap_plugins.model(experiment, "segmented", executor="serial")
    note = ("segment 128 ≤ p ≤ 1024 has only 4 points (p = 128, 256, 512, 1024); 5 are needed for a model of "
            "its own: measure p = 2048")
    assert model.formula == "10 + 1 · p for 2 ≤ p ≤ 64; 3 · p for 128 ≤ p ≤ 1024"
    assert model.warnings == (note,)
    assert [str(w.message) for w in caught] == [f"k [time]: {note}"]


def test_a_large_min_points_names_a_few_values_to_measure():
    # min_points=1e9 listed (and first built) a billion values: the run ran out of memory
    note = too_few_points_note("p", (6.0, 10.0), [6.0, 7.0, 8.0, 9.0, 10.0], range(1, 11), 1000, "above")
    assert note == ("segment 6 ≤ p ≤ 10 has only 5 points (p = 6, 7, 8, 9, 10); 1000 are needed for a model of "
                    "its own: measure p = 11, 12, 13, 14, 15, 16, 17, 18, …")
