"""extrap_plugins.thicket on the odd corners of a Thicket user's session: arguments in another form, columns that
are no metric, other metadata that varies, a model asked for below its measurements."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.errors import InputError

pytest.importorskip("pandas", reason="the thicket extra (pandas) is not installed")
pytest.importorskip("thicket", reason="the thicket extra (llnl-thicket) is not installed")

from thicket import Thicket  # noqa: E402

from extrap_plugins.thicket import MODEL_TAG, Modeling, from_thicket  # noqa: E402


@pytest.fixture
def tk(mpi_scaling_cali):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Thicket.from_caliperreader(mpi_scaling_cali, disable_tqdm=True)


def test_a_column_that_is_no_number_is_one_input_error(host, tk):
    # chosen_metrics=["name"] was ValueError: could not convert string to float: 'MPI_Allreduce'
    with pytest.raises(InputError) as caught:
        Modeling(tk, "jobsize", chosen_metrics=["name"]).produce_models()
    assert str(caught.value) == "this Thicket: metric 'name' is not numeric"


def test_one_metric_named_by_a_string_is_that_metric(host, tk):
    # "Avg time/rank" was read as the metrics 'A', 'v', 'g', ...
    assert [m.name for m in from_thicket(tk, metrics="Avg time/rank").metrics] == ["Avg time/rank"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mdl = Modeling(tk, "jobsize", chosen_metrics="Avg time/rank").produce_models()
    assert mdl.chosen_metrics == ["Avg time/rank"]
    assert {m.metric for m in mdl.model_set} == {"Avg time/rank"}
    assert "Avg time/rank" + MODEL_TAG in tk.statsframe.dataframe.columns


ISEND = "main->lulesh.cycle->LagrangeLeapFrog->LagrangeNodal->CalcForceForNodes->MPI_Isend"


def test_a_time_is_never_predicted_below_0(host, tk):
    # w.eval(1) was -5945.07 (seconds) for CalcFBHourglassForceForElems's 3.694 - 5994 · p^(-5/2) + 45.71 · p^-1,
    # measured 3.8 … 3.9 s; judged by its own residuals that series' model is the constant 3.955.
    # MPI_Isend under CalcForceForNodes, measured 0.049 … 0.071 s at jobsize 27 … 343, is 0.07165 - 0.6117 · p^-1
    # (under the old rule too): a positive constant and a falling term that wins below jobsize 8.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mdl = Modeling(tk, "jobsize", chosen_metrics=["Avg time/rank"]).produce_models()
    frame = tk.statsframe.dataframe
    node = next(n for n in frame.index if "->".join(f.frame["name"] for f in n.path()) == ISEND)
    wrapper = frame.at[node, "Avg time/rank" + MODEL_TAG]
    model = mdl.model_set.get(ISEND, "Avg time/rank")
    assert model.predict([1.0]) == pytest.approx(-0.5400565705, rel=1e-9)  # the function itself
    with pytest.warns(extrap_plugins.errors.ExtrapWarning) as caught:
        assert wrapper.eval(1.0) == 0.0
    assert [str(w.message) for w in caught] == [
        f"{ISEND} [Avg time/rank]: the model is -0.5401 at jobsize=1, below 0 though every measured value is 0 "
        f"or more: the value given is 0 (of its terms of opposite sign, the negative ones win there; do not trust "
        f"the model there)"]
    with pytest.warns(extrap_plugins.errors.ExtrapWarning, match="the model is -0.5401 at jobsize=1"):
        values = wrapper.eval(np.array([1.0, 2.0, 27.0, 512.0]))
    assert values[:2].tolist() == [0.0, 0.0]
    assert values[2:].tolist() == pytest.approx(model.predict(np.array([[27.0], [512.0]])).tolist(), rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # at and beyond the measurements: the model, no warning
        assert wrapper.eval(27.0) == pytest.approx(model.predict([27.0]), rel=1e-12)


def test_other_metadata_varying_at_equal_parameter_values_is_a_warning(host, mpi_scaling_cali, tmp_path):
    # six runs: three rank counts, each at problem_size 30 and 40; modelled over jobsize, the two problem sizes
    # were averaged as repetitions without a word
    files = []
    for name in mpi_scaling_cali[:3]:
        text = open(name).read()
        node = next(line for line in text.split("\n") if ",data=problem_size," in line).split(",")[1][3:]
        for size in (30, 40):
            files.append(tmp_path / f"{size}_{name.rsplit('/', 1)[1]}")
            files[-1].write_text(text.replace(f",attr={node},data=30,", f",attr={node},data={size},"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tk = Thicket.from_caliperreader([str(f) for f in files], disable_tqdm=True)
    assert sorted(tk.metadata["problem_size"]) == [30, 30, 30, 40, 40, 40]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Modeling(tk, "jobsize", chosen_metrics=["Avg time/rank"]).produce_models()
    said = [str(w.message) for w in caught if isinstance(w.message, extrap_plugins.errors.ExtrapWarning)
            and "problem_size" in str(w.message)]
    assert said == ["Modeling: metadata problem_size varies between profiles of equal jobsize: their values are "
                    "averaged as repetitions of one point; to model it too: "
                    "extrap_plugins.from_thicket(tk, ['jobsize', 'problem_size'])"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Modeling(tk, "mpi.world.size", chosen_metrics=["Avg time/rank"]).produce_models()
    assert [str(w.message) for w in caught if "problem_size" in str(w.message)] == [
        said[0].replace("equal jobsize", "equal mpi.world.size").replace("'jobsize'", "'mpi.world.size'")]
    with pytest.warns(extrap_plugins.errors.ExtrapWarning) as caught:
        experiment = from_thicket(tk, "jobsize", metrics=["Avg time/rank"])
    assert [str(w.message) for w in caught] == [said[0].replace("Modeling:", "from_thicket:")]
    assert experiment.parameter_names == ["jobsize"]
    assert from_thicket(tk).parameter_names == ["jobsize", "problem_size"]  # the default takes both, no warning


@pytest.mark.parametrize("parameters", [[], {}])
def test_no_parameter_named_is_one_input_error(host, tk, parameters):
    # [] gave an experiment without parameters, modelled as constants
    with pytest.raises(InputError) as caught:
        from_thicket(tk, parameters)
    assert str(caught.value) == ("from_thicket: no parameter named; name metadata columns (parameters='jobsize'), "
                                 "or leave parameters out to take the columns that vary")


def test_metadata_of_caliper_json_exports_is_numeric_text_and_a_parameter(host, tmp_path):
    # Caliper's JSON exports (cali-query -q "... format json-split") hold every metadata value as text, so
    # Thicket.from_caliper gives object columns: from_thicket(tk) said "no numeric metadata column varies"
    import json

    files = []
    for p in (2, 4, 8, 16, 32):
        files.append(tmp_path / f"{p}.json")
        files[-1].write_text(json.dumps({
            "data": [[0, 1.0 * p, 0], [1, 0.5 * p * p, 1]], "columns": ["Node order", "time", "path"],
            "column_metadata": [{"is_value": True}, {"is_value": True}, {"is_value": False}],
            "nodes": [{"label": "main", "column": "path"}, {"label": "solve", "column": "path", "parent": 0}],
            "jobsize": str(p), "launchdate": str(1685046480 + p), "cali.channel": "hatchet-region-profile"}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tk = Thicket.from_caliper([str(f) for f in files], disable_tqdm=True)
    assert tk.metadata["jobsize"].dtype == object
    experiment = from_thicket(tk)
    assert experiment.parameter_names == ["jobsize"]
    assert experiment.notes == ["parameters from the Thicket metadata: jobsize",
                                "metadata launchdate varies but is a date or time, not a parameter"]
    values = {(experiment.callpaths[c].name, x[0]): v
              for c, x, v in zip(experiment.callpath_index, experiment.coordinates, experiment.value)}
    assert values == {**{("main", p): 1.0 * p for p in (2, 4, 8, 16, 32)},
                      **{("main->solve", p): 0.5 * p * p for p in (2, 4, 8, 16, 32)}}
