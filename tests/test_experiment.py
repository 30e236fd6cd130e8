import numpy as np
import pytest

from extrap_plugins import Callpath, Experiment, InputError, Metric
from extrap_plugins.experiment import Parameter, SeriesGroup


def make(rows):
    """rows: (callpath, metric, p, value) tuples."""
    callpath, metric, p, value = zip(*rows)
    return Experiment.from_columns(["p"], callpath=list(callpath), metric=list(metric),
                                   coordinates=np.array(p, dtype=float)[:, None], value=value)


def test_names_keep_file_order_and_repetitions_are_numbered():
    e = make([("main->b", "time", 1, 5.0), ("main", "time", 1, 1.0), ("main->b", "time", 1, 6.0),
              ("main", "visits", 2, 3.0)])
    assert [c.name for c in e.callpaths] == ["main->b", "main"]
    assert [m.name for m in e.metrics] == ["time", "visits"]
    assert e.repetition.tolist() == [0, 0, 1, 0]


def test_callpath_tree():
    assert Callpath("main->solve->MPI_Allreduce").parent == Callpath("main->solve")
    assert Callpath("main").parent is None
    assert Callpath("main->solve").region == "solve"
    e = make([("main", "t", 1, 1.0), ("main->a", "t", 1, 1.0), ("main->b", "t", 1, 1.0), ("main->a->x", "t", 1, 1.0)])
    assert e.children(Callpath("main")) == [Callpath("main->a"), Callpath("main->b")]
    assert e.roots() == [Callpath("main")]


def test_series_groups_share_points_and_pad_missing_repetitions_with_nan():
    e = make([("a", "t", 1, 1.0), ("a", "t", 1, 3.0), ("a", "t", 2, 2.0),
              ("b", "t", 1, 10.0), ("b", "t", 2, 20.0),
              ("c", "t", 1, 7.0)])
    groups = list(e.series_groups())
    assert [[k[0].name for k in g.keys] for g in groups] == [["a", "b"], ["c"]]
    first = groups[0]
    assert first.points.tolist() == [[1.0], [2.0]]
    assert first.values.shape == (2, 2, 2)
    np.testing.assert_array_equal(first.reduce("mean"), [[2.0, 2.0], [10.0, 20.0]])
    np.testing.assert_array_equal(first.reduce("minimum"), [[1.0, 2.0], [10.0, 20.0]])
    np.testing.assert_array_equal(first.repetitions(), [[2, 1], [1, 1]])


def test_a_million_rows_group_in_seconds():
    rng = np.random.default_rng(0)
    n_series, n_points, n_reps = 20_000, 10, 5
    series = np.repeat(np.arange(n_series), n_points * n_reps)
    p = np.tile(np.repeat(2.0 ** np.arange(n_points), n_reps), n_series)
    e = Experiment.from_columns(["p"], callpath=series.astype(str), metric="time",
                                coordinates=p[:, None], value=rng.random(series.shape[0]))
    groups = list(e.series_groups())
    assert len(groups) == 1 and groups[0].values.shape == (n_series, n_points, n_reps)


def test_select_by_metric_and_glob():
    e = make([("main", "time", 1, 1.0), ("main->a", "time", 1, 2.0), ("main->a", "visits", 1, 3.0)])
    s = e.select(metrics=["time"], callpaths=["main->*"])
    assert s.value.tolist() == [2.0]
    with pytest.raises(InputError, match="no metric 'bytes'; the metrics are time, visits"):
        e.select(metrics=["bytes"])
    with pytest.raises(InputError) as error:
        e.select(callpaths=["solve"])
    assert str(error.value) == "no call path matches 'solve'; the call paths are main, main->a"


def test_a_call_path_that_matches_nothing_names_the_ones_meant():
    names = ["main", "main->solve", "main->solve->MPI_Allreduce", "compute"]
    e = make([(name, "time", 1, 1.0) for name in names])
    for patterns, hint in [(["main->compute"], "did you mean 'compute'?"),
                           (["main->solv"], "did you mean 'main->solve'?"),
                           (["*->Allreduce"], "did you mean 'main->solve->MPI_Allreduce'?")]:
        with pytest.raises(InputError) as error:
            e.select(callpaths=patterns)
        assert str(error.value).endswith(f"; {hint}")
    many = make([(f"kernel{i}", "time", 1, 1.0) for i in range(8)])
    with pytest.raises(InputError) as error:
        many.select(callpaths=["solver"])
    assert str(error.value).endswith("; the call paths include kernel0, kernel1, kernel2, kernel3, kernel4 (8 in all)")


def test_bad_shapes_say_what_was_expected():
    with pytest.raises(InputError, match=r"expected coordinates of shape \(3, 2\)"):
        Experiment.from_columns(["p", "n"], callpath="a", metric="t", coordinates=[[1], [2], [3]], value=[1, 2, 3])


def test_concatenate_joins_runs_and_rejects_other_parameters():
    a = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[1]], value=[1.0], source="a")
    b = Experiment.from_columns(["p"], callpath="main->x", metric="time", coordinates=[[2]], value=[2.0], source="b",
                                metrics=[Metric("time", "sec", "time")])
    joined = Experiment.concatenate([a, b])
    assert [c.name for c in joined.callpaths] == ["main", "main->x"]
    assert joined.metrics[0].unit == "sec"
    c = Experiment.from_columns(["n"], callpath="main", metric="time", coordinates=[[1]], value=[1.0], source="c")
    with pytest.raises(InputError, match=r"^c: parameters \(n\) differ from \(p\) in a$"):
        Experiment.concatenate([a, c])


def test_concatenate_names_call_paths_in_order_of_first_appearance_and_drops_unused_ones():
    # factorised columns whose name lists hold an unused name and list the names in another order than the rows
    a = Experiment.from_columns(["p"], callpath=(["unused", "b", "a"], np.array([2, 1, 2])), metric="time",
                                coordinates=[[1], [1], [2]], value=[1.0, 2.0, 3.0])
    b = Experiment.from_columns(["p"], callpath=(["c", "a"], np.array([1, 0])), metric=(["visits"], np.array([0, 0])),
                                coordinates=[[4], [4]], value=[4.0, 5.0])
    joined = Experiment.concatenate([a, b])
    assert [c.name for c in joined.callpaths] == ["a", "b", "c"]
    assert [m.name for m in joined.metrics] == ["time", "visits"]
    names = [joined.callpaths[i].name for i in joined.callpath_index]
    assert names == ["a", "b", "a", "a", "c"] and joined.value.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert [joined.metrics[i].name for i in joined.metric_index] == ["time"] * 3 + ["visits"] * 2


def test_precoded_names_and_two_parameter_grouping():
    p, n = np.meshgrid([1.0, 2, 4, 8, 16], [10.0, 20, 30, 40, 50], indexing="ij")
    coords = np.column_stack([p.ravel(), n.ravel()])
    e = Experiment.from_columns(["p", "n"], callpath=(["a", "b"], np.repeat([0, 1], 25)), metric="time",
                                coordinates=np.vstack([coords, coords]), value=np.arange(50.0))
    (group,) = list(e.series_groups())
    assert group.points.shape == (25, 2)
    assert group.points[:3].tolist() == [[1.0, 10.0], [1.0, 20.0], [1.0, 30.0]]
    assert group.reduce()[1, 0] == 25.0
    with pytest.raises(InputError, match="codes must lie in 0..1"):
        Experiment.from_columns(["p"], callpath=(["a", "b"], [0, 2]), metric="t", coordinates=[[1], [2]], value=[1, 2])


def test_an_experiment_pickles_with_its_call_paths_as_names():
    import pickle

    e = Experiment.from_columns(["p"], callpath=["main", "main->a", "main->a"], metric=["t", "t", "v"],
                                coordinates=[[1], [2], [2]], value=[1.0, 2.0, 3.0], source="runs/")
    state = e.__getstate__()
    assert state["callpaths"] == ["main", "main->a"]
    back = pickle.loads(pickle.dumps(e))
    assert back.callpaths == e.callpaths and back.metrics == e.metrics and back.source == "runs/"
    assert all(np.array_equal(getattr(back, c), getattr(e, c))
               for c in ("callpath_index", "metric_index", "coordinates", "repetition", "value"))


def test_a_parameter_left_out_for_its_one_value_comes_back_as_a_column():
    e = Experiment.from_columns(["n"], callpath="main", metric="time", coordinates=[[10], [20], [40]],
                                value=[1.0, 2.0, 4.0])
    e.constants = {"p": 1.0}
    both = e.with_parameters(["p", "n"])
    assert both.parameter_names == ["p", "n"]
    assert both.coordinates.tolist() == [[1, 10], [1, 20], [1, 40]]
    assert both.constants == {} and both.value.tolist() == [1.0, 2.0, 4.0]
    assert e.with_parameters(["n"]) is e
    assert repr(e) == "<Experiment n, p=1: 3 points, 3 runs; 1 call path; 1 metric (time); 3 values>"
    with pytest.raises(InputError, match=r"the parameters are n, expected p, q$"):
        e.with_parameters(["p", "q"])
    with pytest.raises(InputError, match=r"the parameters are n, expected p$"):
        e.with_parameters(["p"])


def test_a_parameter_with_one_value_that_is_not_asked_for_becomes_a_constant():
    # runs at one point keep every parameter (the reader cannot tell which to leave out); p = 1 of a program run
    # without process counts is then no parameter of the design
    e = Experiment.from_columns(["p", "n"], callpath="main", metric="time", coordinates=[[1, 10], [1, 10]],
                                value=[1.0, 1.5])
    assert e.single_valued() == {"p": 1.0, "n": 10.0}
    n = e.with_parameters(["n"])
    assert n.parameter_names == ["n"] and n.constants == {"p": 1.0} and n.coordinates.tolist() == [[10], [10]]
    varying = Experiment.from_columns(["p", "n"], callpath="main", metric="time", coordinates=[[1, 10], [2, 10]],
                                      value=[1.0, 1.5])
    with pytest.raises(InputError, match=r"the parameters are p, n, expected n$"):
        varying.with_parameters(["n"])


def test_an_experiment_s_repr_says_what_was_measured_not_every_value(shared_data):
    # a notebook cell that ends with the experiment shows one line, not its columns
    import extrap_plugins

    path = shared_data / "extrap" / "text" / "mpa" / "relearn_data.txt"
    e = extrap_plugins.read(path)
    assert repr(e) == (f"<Experiment p, n: 25 points, 50 runs; 14 call paths; 1 metric (time); 700 values "
                       f"from {e.source}>")


@pytest.mark.parametrize("coordinates, value, message", [
    ([[1], [2]], [1, "a"], "value: row 1 is 'a', not a number"),
    ([[1, 2], [3, "x"]], [1, 2], "coordinates: row 1 is 'x', not a number"),
])
def test_from_columns_names_the_row_that_is_not_a_number(coordinates, value, message):
    parameters = ["p", "n"][: len(coordinates[0])]
    with pytest.raises(InputError) as error:
        Experiment.from_columns(parameters, callpath="main", metric="time", coordinates=coordinates, value=value)
    assert str(error.value) == message


def test_an_experiment_without_a_source_begins_no_message_with_a_colon():
    e = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[1], [2]], value=[1, 2])
    with pytest.raises(InputError) as error:
        e.select(metrics=["bytes"])
    assert str(error.value) == "no metric 'bytes'; the metrics are time"


# ------------------------------------------------- whether values are inclusive (Metric.values)
def test_a_metric_says_whether_its_values_are_inclusive_and_refuses_anything_else():
    assert Metric("time").values == ""  # unknown: the shares then follow the measurements
    assert Metric("Avg time/rank", "sec", "time", "inclusive").values == "inclusive"
    with pytest.raises(InputError) as error:
        Metric("time", values="subtree")
    assert str(error.value) == "metric 'time': values must be 'inclusive', 'exclusive' or '' (unknown), got 'subtree'"


def test_the_hint_on_values_survives_selection_parameters_pickling_and_joins():
    import pickle

    hinted = [Metric("time", "sec", "time", "inclusive"), Metric("visits", "occ", "count", "exclusive")]
    e = Experiment.from_columns(["p"], callpath=["main", "main->a", "main", "main->a"],
                                metric=["time", "time", "visits", "visits"], coordinates=[[1], [1], [2], [2]],
                                value=[2.0, 1.0, 1.0, 1.0], metrics=hinted, source="a")
    assert e.metrics == hinted
    assert e.select(metrics=["time"]).metrics == hinted  # the rows go, the metric list stays
    assert e.take(e.value > 1.5).metrics == hinted
    e.constants = {"n": 8.0}
    assert e.with_parameters(["p", "n"]).metrics == hinted
    assert pickle.loads(pickle.dumps(e)).metrics == hinted
    assert Experiment.concatenate([e, e]).metrics == hinted


def test_joined_experiments_that_disagree_about_a_metric_s_values_leave_it_unknown():
    # a wrong hint is worse than none: the shares of an unknown metric follow the measurements
    def one(values, unit=""):
        return Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[1]], value=[1.0],
                                       metrics=[Metric("time", unit, values=values)])

    assert Experiment.concatenate([one("inclusive"), one("exclusive", "sec")]).metrics == [Metric("time", "sec")]
    assert Experiment.concatenate([one("inclusive"), one("")]).metrics == [Metric("time")]
    assert Experiment.concatenate([one(""), one("inclusive")]).metrics == [Metric("time")]
    assert Experiment.concatenate([one("exclusive"), one("exclusive")]).metrics == [Metric("time", values="exclusive")]


# ------------------------------------------------- from_columns: wrong arguments are named
def columns(**given):
    """``Experiment.from_columns`` of three values of ``p``, with ``given`` in place of the defaults."""
    arguments = dict(parameters=["p"], callpath="main", metric="time", coordinates=[[1], [2], [4]],
                     value=[1.0, 2.0, 4.0])
    arguments.update(given)
    parameters = arguments.pop("parameters")
    return Experiment.from_columns(parameters, **arguments)


def test_from_columns_takes_one_str_as_one_parameter_and_a_metric_with_its_unit():
    assert columns(parameters="procs").parameter_names == ["procs"]  # not five parameters p, r, o, c, s
    e = columns(metric=Metric("time", "sec"), callpath=Callpath("main"))
    assert e.metrics == [Metric("time", "sec")] and e.callpaths == [Callpath("main")]


@pytest.mark.parametrize("given, message", [
    (dict(parameters=None), "parameters: expected a name or a list of names, got None"),
    (dict(callpath=None), "callpath: expected a name, or one name per value, got None"),
    (dict(metric=7), "metric: expected a name, or one name per value, got the int 7"),
    (dict(metrics=["time"]), "metrics: expected Metric objects such as Metric('time', 'sec'), got the str 'time'"),
    (dict(metrics="time"), "metrics: expected Metric objects such as Metric('time', 'sec'), got the str 'time'"),
    (dict(repetition="abc"), "repetition: row 0 is 'abc', not a number"),
    (dict(repetition=[0, 0.5, 1]), "repetition: row 1 is 0.5, not a whole number"),
    (dict(value=5.0), "value: expected one value per row of coordinates (3), got 1"),
    (dict(value=None), "value: expected one value per row of coordinates (3), got None"),
    (dict(callpath=["main", None, "main"]), "callpath: row 1 is None, not a name"),
    (dict(metric=["time", "time", float("nan")]), "metric: row 2 is nan, not a name"),
])
def test_from_columns_names_the_argument_that_is_wrong(given, message):
    with pytest.raises(InputError) as error:
        columns(**given)
    assert type(error.value) is InputError and str(error.value) == message


def test_coordinates_of_a_data_frame_are_taken_by_the_parameters_names():
    # (frame[["p", "n"]] for the parameters n, p was read by position: n = p, and the model came out in the other)
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"p": [1, 2, 4], "n": [10, 20, 30], "t": [1.0, 2.0, 3.0]})
    e = Experiment.from_columns(["n", "p"], callpath="main", metric="time", coordinates=frame[["p", "n"]],
                                value=frame["t"])
    assert e.coordinates.tolist() == [[10, 1], [20, 2], [30, 4]]
    whole = Experiment.from_columns(["n", "p"], callpath="main", metric="time", coordinates=frame, value=frame["t"])
    assert whole.coordinates.tolist() == e.coordinates.tolist()  # the other columns left out
    renamed = Experiment.from_columns(["x", "y"], callpath="main", metric="time", coordinates=frame[["p", "n"]],
                                      value=frame["t"])
    assert renamed.coordinates.tolist() == [[1, 10], [2, 20], [4, 30]]  # named otherwise: in order
    with pytest.raises(InputError) as refused:
        Experiment.from_columns(["n", "q"], callpath="main", metric="time", coordinates=frame[["p", "n"]],
                                value=frame["t"])
    assert str(refused.value) == ("coordinates: the table's columns are p, n, the parameters n, q: give a column of "
                                  "each parameter's name, or name the parameters as the columns")


def test_select_takes_one_name_as_one_name_and_its_own_objects_as_their_names():
    e = Experiment.from_columns(["p"], callpath="main", metric=["time", "bytes"], coordinates=[[1], [2]],
                                value=[1.0, 2.0])
    assert e.select(metrics="time").value.tolist() == [1.0]  # (was "no metric 't', 'i', 'm', 'e'")
    assert e.select(metrics=e.metrics[1]).value.tolist() == [2.0]
    with pytest.raises(InputError, match=r"^metrics: expected a name or a list of names, got the int 3$"):
        e.select(metrics=3)


def test_values_of_an_unknown_series_is_an_input_error_with_the_names_meant():
    # (a bare KeyError)
    e = Experiment.from_columns(["p"], callpath=["main->compute", "main"], metric="time", coordinates=[[1], [2]],
                                value=[1.0, 2.0], source="runs.csv")
    with pytest.raises(InputError, match=r"^runs\.csv: no call path 'main->comput'; did you mean 'main->compute'\?$"):
        e.values_of("main->comput", "time")
    with pytest.raises(InputError, match=r"^runs\.csv: no metric 'tim'; the metrics are time$"):
        e.values_of("main", "tim")


@pytest.mark.parametrize("repetitions, expected", [
    ([1.0, 1.02, 10.0], [False, False, True]),             # a slow run: 10x the others
    ([1.0, 1.02, 0.9, 0.2], [False, False, False, True]),  # a run cut short: 5x below
    ([1.0, 1.0, 1.0, 0.0], [False, False, False, True]),   # a run that measured nothing
    ([1.0, 3.5, 10.0], [False, False, False]),             # noisy, not one odd run: within the spread
    ([1.0, 1.0, 1.0, 10.0, 10.0], [False] * 5),            # two groups: a program taking two paths
    ([1.0, 10.0], [False, False]),                         # of two, neither is the odd one
    ([1.0, 1.3, 0.7, 2.9], [False] * 4),                   # under 3x off
])
def test_outlying_repetitions_are_gross_and_few(repetitions, expected):
    from extrap_plugins.experiment import outlying
    values = np.array([[repetitions]], dtype=float)
    assert outlying(values)[0, 0].tolist() == expected


def test_the_mean_leaves_out_outlying_repetitions_and_the_others_keep_them():
    values = np.array([[[1.0, 1.02, 10.0, np.nan], [2.0, 2.0, 2.0, 2.0]]])
    group = SeriesGroup((Parameter("p"),), np.array([[1.0], [2.0]]), [(Callpath("main"), Metric("time"))], values)
    assert group.reduce("mean").tolist() == [[1.01, 2.0]]
    assert group.reduce("median").tolist() == [[1.02, 2.0]]
    assert group.reduce("maximum").tolist() == [[10.0, 2.0]]
    assert np.isnan(group.kept("mean")[0, 0, 2]) and group.kept("maximum")[0, 0, 2] == 10.0
