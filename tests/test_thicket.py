"""extrap_plugins.thicket against Thicket's own test_model_extrap.py expectations, re-expressed, and from_thicket."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.errors import InputError

pytest.importorskip("pandas", reason="the thicket extra (pandas) is not installed")
pytest.importorskip("thicket", reason="the thicket extra (llnl-thicket) is not installed")

from thicket import Thicket  # noqa: E402

from extrap_plugins.thicket import MODEL_TAG, Modeling, ModelWrapper, from_thicket  # noqa: E402

RANKS = (27, 64, 125, 216, 343)  # (conftest's mpi_scaling_cali: one file per rank count)


def thicket_of(files):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Thicket.from_caliperreader(files, disable_tqdm=True)


def strings(frame):
    return frame.map(str) if hasattr(frame, "map") else frame.applymap(str)


# ------------------------------------------- Thicket's test_model_extrap, re-expressed
def test_model_extrap(host, mpi_scaling_cali):
    # Method 1: the parameter from a metadata column.
    t_ens = thicket_of(mpi_scaling_cali)
    mdl = Modeling(t_ens, "jobsize", chosen_metrics=["Avg time/rank"])
    mdl.produce_models()
    # Method 2: the core counts given per file (on a Thicket of its own, so the comparison means something).
    t_ens2 = thicket_of(mpi_scaling_cali)
    core_list = dict(zip(mpi_scaling_cali, RANKS))
    mdl2 = Modeling(t_ens2, "cores", core_list, chosen_metrics=["Avg time/rank"])
    mdl2.produce_models()
    assert t_ens2.metadata["cores"].tolist() == t_ens2.metadata["jobsize"].tolist()

    frame, frame2 = mdl.tht.statsframe.dataframe, mdl2.tht.statsframe.dataframe
    assert frame.shape == frame2.shape == (45, 1 + 6)
    assert strings(frame).equals(strings(frame2))
    column = frame["Avg time/rank" + MODEL_TAG]
    assert all(isinstance(w, ModelWrapper) for w in column)
    assert [f"Avg time/rank_{s}{MODEL_TAG}" for s in ("RSS", "rRSS", "SMAPE", "AR2", "RE")] == list(frame.columns[2:])


def test_componentize_functions(host, mpi_scaling_cali):
    t_ens = thicket_of(mpi_scaling_cali)
    mdl = Modeling(t_ens, "jobsize", chosen_metrics=["Avg time/rank", "Max time/rank"])
    mdl.produce_models(add_stats=False)
    original_shape = t_ens.statsframe.dataframe.shape
    assert original_shape == (45, 1 + 2)  # 90 models: 45 call paths, two metrics
    mdl.componentize_statsframe()
    xp_comp_df = t_ens.statsframe.dataframe
    assert xp_comp_df.shape[1] > original_shape[1]
    for column in xp_comp_df.columns:
        assert not xp_comp_df[column].isnull().all()
    # The components rebuild each model: c + sum(coefficient * term) at p = 512.
    for node in xp_comp_df.index:
        wrapper = xp_comp_df.at[node, "Avg time/rank" + MODEL_TAG]
        parts = {k[1]: v for k, v in xp_comp_df.loc[node].items()
                 if isinstance(k, tuple) and k[0] == "Avg time/rank" + MODEL_TAG and not _isnan(v)}
        assert parts["c"] == wrapper.mdl.hypothesis.function.constant_coefficient
        assert math.isclose(sum(v * _term(k, 512.0) for k, v in parts.items()), wrapper.eval(512.0), rel_tol=1e-9)


def _isnan(v):
    return isinstance(v, float) and math.isnan(v)


def _term(text: str, p: float) -> float:
    if text == "c":
        return 1.0
    value = 1.0
    for factor in text.split(" * "):
        base, exponent = factor.split("^")
        numerator, _, denominator = exponent.strip("()").partition("/")
        e = float(numerator) / float(denominator or 1)
        value *= (math.log2(p) if base == "log2(p)" else p) ** e
    return value


# ----------------------------------------------------------- the model objects
def test_wrappers_behave_like_thickets(host, mpi_scaling_cali):
    t_ens = thicket_of(mpi_scaling_cali)
    mdl = Modeling(t_ens, "jobsize", chosen_metrics=["Avg time/rank"]).produce_models()
    frame = t_ens.statsframe.dataframe
    models = extrap_plugins.model(extrap_plugins.read(mpi_scaling_cali), metrics=["Avg time/rank"])
    assert len(mdl.model_set) == 45
    for node in frame.index:
        wrapper = frame.at[node, "Avg time/rank" + MODEL_TAG]
        callpath = "->".join(n.frame["name"] for n in node.path())
        ours = models.get(callpath, "Avg time/rank")
        # The same models as reading the files with the caliper reader: same data, same modeler.
        assert wrapper.model.function == ours.function
        assert wrapper.eval(512.0) == pytest.approx(ours.predict([512.0]), rel=1e-12)
        assert np.allclose(wrapper.eval(np.array([27.0, 1000.0])), ours.predict(np.array([[27.0], [1000.0]])))
        # Extra-P's notation: the constant, then " + coefficient * p^(a/b) * log2(p)^(c)".
        text = str(wrapper)
        assert text.startswith(repr(ours.constant))
        assert ("jobsize" not in text) and (" * p^(" in text or " * log2(p)^(" in text or "+" not in text)
        # Quality figures as Extra-P defines them, over the five measured points.
        points = [m.coordinate[0] for m in wrapper.mdl.measurements]
        assert points == [float(n) for n in RANKS]
        actual = np.array([m.value(True) for m in wrapper.mdl.measurements])
        predicted = np.array([wrapper.eval(p) for p in points])
        rss = frame.at[node, "Avg time/rank_RSS" + MODEL_TAG]
        assert rss == pytest.approx(np.sum((predicted - actual) ** 2), rel=1e-9, abs=1e-300)
        assert frame.at[node, "Avg time/rank_rRSS" + MODEL_TAG] == pytest.approx(
            np.sum(((predicted - actual) / actual) ** 2), rel=1e-9)
        assert frame.at[node, "Avg time/rank_AR2" + MODEL_TAG] == ours.quality.ar2
    allreduce = frame.loc[[n for n in frame.index if n.frame["name"] == "MPI_Allreduce"
                           and len(n.path()) == 1][0], "Avg time/rank" + MODEL_TAG]
    # LULESH's MPI_Allreduce grows superlinearly in the rank count (Extra-P: 1.92e-05 + 9.09e-09 * p^(9/4)).
    assert allreduce.eval(343.0) > 20 * allreduce.eval(27.0)


def test_any_registered_modeler_by_name(host, mpi_scaling_cali):
    t_ens = thicket_of(mpi_scaling_cali)
    mdl = Modeling(t_ens, "jobsize", chosen_metrics=["Avg time/rank"], modeler="exhaustive").produce_models()
    assert {m.modeler for m in mdl.model_set} == {"exhaustive"}
    assert isinstance(t_ens.statsframe.dataframe["Avg time/rank" + MODEL_TAG].iloc[0], ModelWrapper)


def test_display_and_to_html(host, mpi_scaling_cali):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    import matplotlib

    matplotlib.use("Agg")
    t_ens = thicket_of(mpi_scaling_cali)
    mdl = Modeling(t_ens, "jobsize", chosen_metrics=["Avg time/rank"]).produce_models()
    wrapper = t_ens.statsframe.dataframe["Avg time/rank" + MODEL_TAG].iloc[0]
    fig, ax = wrapper.display(RSS=True)
    assert ax.get_xlabel() == "jobsize" and ax.get_ylabel() == "Avg time/rank"
    page = mdl.to_html()
    assert page.count("data:image/jpg;base64,") == 45
    assert "<svg" in wrapper._repr_html_()


def test_bad_arguments(host, mpi_scaling_cali):
    t_ens = thicket_of(mpi_scaling_cali)
    with pytest.raises(TypeError, match="'params' must be provided as a dict"):
        Modeling(t_ens, "cores", [27, 64, 125, 216, 343])
    with pytest.raises(ValueError, match="length of params must equal the number of profiles: 2 != 5"):
        Modeling(t_ens, "cores", dict(zip(mpi_scaling_cali[:2], RANKS)))
    with pytest.raises(InputError, match="no metadata column 'cores'"):
        Modeling(t_ens, "cores")
    with pytest.raises(InputError, match="no metric 'Flops'"):
        Modeling(t_ens, "jobsize", chosen_metrics=["Flops"]).produce_models()


# ----------------------------------------------------------------- from_thicket
def test_from_thicket_equals_the_caliper_reader(host, mpi_scaling_cali):
    pytest.importorskip("caliperreader", reason="the caliper extra is not installed")
    t_ens = thicket_of(mpi_scaling_cali)
    experiment = from_thicket(t_ens)
    assert experiment.parameter_names == ["jobsize"]
    assert "parameters from the Thicket metadata: jobsize" in experiment.notes
    read = extrap_plugins.read(mpi_scaling_cali)
    assert _series(experiment) == _series(read)
    two = from_thicket(t_ens, ["jobsize", "problem_size"], metrics=["Avg time/rank"])
    assert two.parameter_names == ["jobsize", "problem_size"] and [m.name for m in two.metrics] == ["Avg time/rank"]
    by_file = from_thicket(t_ens, {"cores": dict(zip(mpi_scaling_cali, RANKS))})
    assert sorted(set(by_file.coordinates[:, 0])) == [float(n) for n in RANKS]
    models = extrap_plugins.model(experiment, metrics=["Avg time/rank"])
    assert extrap_plugins.extrapolate(models, "jobsize=4096").target == {"jobsize": 4096.0}
    with pytest.raises(InputError, match="no metadata column 'cores'"):
        from_thicket(t_ens, "cores")


def _series(experiment):
    found = {}
    callpaths = [c.name for c in experiment.callpaths]
    metrics = [m.name for m in experiment.metrics]
    for c, m, x, v in zip(experiment.callpath_index, experiment.metric_index, experiment.coordinates,
                          experiment.value):
        found.setdefault((callpaths[c], metrics[m], tuple(x)), []).append(v)
    return found


# ------------------------------------- inclusive values (D1), two programs (D7), wrong arguments (D8), names (D4)
def test_the_thicket_s_inclusive_metrics_stay_inclusive(host, mpi_scaling_cali):
    # Hatchet's Caliper reader files the aliased spot metrics under exc_metrics; spot.metrics says what they are
    t_ens = thicket_of(mpi_scaling_cali)
    assert t_ens.inc_metrics == [] and "Avg time/rank" in t_ens.exc_metrics
    experiment = from_thicket(t_ens)
    assert {m.name: m.values for m in experiment.metrics} == {
        "Min time/rank": "inclusive", "Max time/rank": "inclusive", "Avg time/rank": "inclusive",
        "Total time": "inclusive"}
    models = extrap_plugins.model(experiment, metrics=["Avg time/rank"])
    assert extrap_plugins.extrapolate(models).values == {"Avg time/rank": "inclusive"}
    mdl = Modeling(t_ens, "jobsize", chosen_metrics=["Avg time/rank"]).produce_models()
    assert [m.values for m in mdl.model_set.experiment.metrics] == ["inclusive"]


@pytest.fixture(scope="module")
def two_programs(shared_data):
    folder = shared_data / "caliper" / "thicket"
    files = sorted(str(f) for f in folder.rglob("*.cali"))
    if len(files) != 10:
        pytest.skip(f"Thicket's LULESH and RAJAPerf data are not in {folder}")
    return files


def test_a_thicket_of_two_programs_names_the_sets_and_a_fix_that_works(host, two_programs):
    # it said no column varies and suggested parameters='jobsize', which then failed on np.float64(nan)
    tk = thicket_of(two_programs)
    with pytest.raises(InputError) as caught:
        from_thicket(tk)
    assert str(caught.value) == (
        "no numeric metadata column varies across all 10 profiles: they fall into 2 sets with different metadata "
        "columns, as profiles of different programs do: mpi_scaling_cali (5 profiles): jobsize varies; "
        "rajaperf/quartz (5 profiles): ProblemSizeRunParam varies; model each set on its own, e.g. "
        "from_thicket(tk.filter_metadata(lambda m: m.notna()['jobsize']))")
    lulesh = from_thicket(tk.filter_metadata(lambda m: m.notna()['jobsize']))  # the fix given
    assert lulesh.parameter_names == ["jobsize"] and len(lulesh.callpaths) == 45
    # RAJAPerf's metrics are the Thicket's too, but without a value here: left out
    assert sorted(m.name for m in lulesh.metrics) == ["Avg time/rank", "Max time/rank", "Min time/rank", "Total time"]
    profiles = dict.fromkeys(tk.dataframe.index.get_level_values("profile"))  # in the order of the Thicket's rows
    rajaperf = [tk.profile_mapping[p] for p in profiles if "rajaperf" in tk.profile_mapping[p]]
    with pytest.raises(InputError) as caught:
        from_thicket(tk, parameters="jobsize")
    assert str(caught.value) == (
        f"metadata column jobsize has no value in 5 of the 10 profiles: {', '.join(rajaperf[:3])} and 2 more (runs "
        f"of another program?); model the profiles that have it: "
        f"from_thicket(tk.filter_metadata(lambda m: m.notna()['jobsize']), parameters='jobsize')")


def test_a_profile_without_the_rank_count_is_named_by_its_file(host, mpi_scaling_cali):
    tk = thicket_of(mpi_scaling_cali)
    file_of = {f: p for p, f in tk.profile_mapping.items()}
    run = mpi_scaling_cali[1]  # 64_cores.cali
    tk.metadata.at[file_of[run], "jobsize"] = math.nan
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        experiment = from_thicket(tk)
    assert experiment.parameter_names == ["mpi.world.size"]  # not numhosts, the node count
    assert [str(w.message) for w in caught] == [
        f"{run}: metadata key jobsize missing (present in the other 4 profiles), so it is not a parameter; "
        f"from_thicket(tk.filter_metadata(lambda m: m.notna()['jobsize'])) models the profiles that have it"]
    with pytest.raises(InputError) as caught:
        from_thicket(tk, parameters=["jobsize"])
    assert str(caught.value) == (
        f"metadata column jobsize has no value in 1 of the 5 profiles: {run} (runs of another program?); model the "
        f"profiles that have it: from_thicket(tk.filter_metadata(lambda m: m.notna()['jobsize']), "
        f"parameters=['jobsize'])")
    with pytest.raises(InputError) as caught:
        Modeling(tk, "jobsize", chosen_metrics=["Avg time/rank"]).produce_models()
    assert str(caught.value) == f"{run}: parameter jobsize has no value (a run of another program?)"


@pytest.mark.parametrize("value, shown", [("many", "cores='many' is not a number"),
                                          (math.inf, "cores=inf is not a finite number")])
def test_a_parameter_value_that_is_no_number_is_said_plainly_naming_the_file(host, mpi_scaling_cali, value, shown):
    tk = thicket_of(mpi_scaling_cali)
    cores = dict(zip(mpi_scaling_cali, RANKS))
    cores[mpi_scaling_cali[2]] = value
    with pytest.raises(InputError) as caught:
        from_thicket(tk, {"cores": cores})
    assert str(caught.value) == f"{mpi_scaling_cali[2]}: parameter {shown}"
    del cores[mpi_scaling_cali[2]]
    with pytest.raises(InputError) as caught:
        from_thicket(tk, {"cores": cores})
    assert str(caught.value) == (f"parameter 'cores' has no value for {mpi_scaling_cali[2]}; give one for every "
                                 f"profile, by its file (tk.profile_mapping) or its profile")


def test_no_varying_column_suggests_giving_the_values(host, mpi_scaling_cali):
    tk = thicket_of(mpi_scaling_cali)
    tk.metadata = tk.metadata.drop(columns=["jobsize", "mpi.world.size", "numhosts"])
    with pytest.raises(InputError) as caught:
        from_thicket(tk)
    assert str(caught.value) == (
        "no numeric metadata column varies across the 5 profiles; give each profile's value by its file: "
        "from_thicket(tk, parameters={'NAME': {file: value, ...}}), the files as in tk.profile_mapping")
    experiment = from_thicket(tk, parameters={"p": dict(zip(mpi_scaling_cali, RANKS))})  # as it says
    assert sorted(set(experiment.coordinates[:, 0])) == [float(n) for n in RANKS]


def test_a_path_or_other_object_instead_of_a_thicket_is_one_input_error(host, mpi_scaling_cali, tmp_path):
    # from_thicket("x.cali") was AttributeError: 'str' object has no attribute 'dataframe'
    calls = {"from_thicket": lambda x: from_thicket(x), "Modeling": lambda x: Modeling(x, "jobsize")}
    for name, call in calls.items():
        with pytest.raises(InputError) as caught:
            call("x.cali")
        assert str(caught.value) == (
            f"{name}: expected a thicket.Thicket, got the str 'x.cali'; read .cali files with "
            f"extrap_plugins.read('x.cali'), or make a Thicket of them with Thicket.from_caliperreader('x.cali')")
    with pytest.raises(InputError) as caught:
        from_thicket(tmp_path / "runs")
    assert str(caught.value) == (
        f"from_thicket: expected a thicket.Thicket, got the path '{tmp_path / 'runs'}'; read .cali files with "
        f"extrap_plugins.read('{tmp_path / 'runs'}'), or make a Thicket of them with "
        f"Thicket.from_caliperreader('{tmp_path / 'runs'}')")
    with pytest.raises(InputError) as caught:
        from_thicket(mpi_scaling_cali)
    assert str(caught.value) == (
        "from_thicket: expected a thicket.Thicket, got a list of 5 str; read .cali files with "
        "extrap_plugins.read(files), or make a Thicket of them with Thicket.from_caliperreader(files)")
    import hatchet as ht

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = ht.GraphFrame.from_caliperreader(mpi_scaling_cali[0])
    with pytest.raises(InputError) as caught:
        from_thicket(frame)
    assert str(caught.value) == ("from_thicket: expected a thicket.Thicket, got a hatchet.graphframe.GraphFrame; "
                                 "model GraphFrames with extrap_plugins.from_graphframes(frames, parameters)")


def test_a_node_named_with_the_separator_is_refused_naming_the_file(host, mpi_scaling_cali, tmp_path):
    region = "__rec=node,id=36,attr=35,data=MPI_Comm_split\n"
    files = []
    for name in mpi_scaling_cali:
        text = open(name).read()
        assert text.count(region) == 1
        files.append(tmp_path / name.rsplit("/", 1)[1])
        files[-1].write_text(text.replace(region, region.replace("MPI_Comm_split", "main->MPI_Irecv")))
    tk = thicket_of([str(f) for f in files])
    with pytest.raises(InputError) as caught:
        from_thicket(tk, "jobsize")
    message = ("node 'main->MPI_Irecv' contains the call-path separator '->': its call path would read as nested "
               "nodes and could merge with a nested call path; rename the node (its region in the program)")
    first = tk.profile_mapping[tk.dataframe.index.get_level_values(1)[0]]
    assert str(caught.value) == f"{first}: {message}"
    with pytest.raises(InputError) as caught:
        Modeling(tk, "jobsize", chosen_metrics=["Avg time/rank"]).produce_models()
    assert str(caught.value) == f"this Thicket: {message}"
