"""from_graphframes: Hatchet GraphFrames (any format Hatchet reads) become an Experiment."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.errors import InputError

pytest.importorskip("pandas", reason="pandas is not installed")
ht = pytest.importorskip("hatchet", reason="Hatchet (llnl-hatchet, with the thicket extra) is not installed")

RANKS = (27, 64, 125, 216, 343)


def literal(p: float, repeat: int = 1):
    """A two-node call tree whose times follow known laws: main 2 + 3·p (inclusive), solve 3·p·log2(p)."""
    solve = 3.0 * p * np.log2(p)
    return ht.GraphFrame.from_literal([{
        "frame": {"name": "main", "type": "function"},
        "metrics": {"time (inc)": 2.0 + solve, "time": 2.0},
        "children": [{"frame": {"name": "solve", "type": "function"},
                      "metrics": {"time (inc)": solve, "time": solve}}],
    }])


def series(experiment):
    found = {}
    callpaths = [c.name for c in experiment.callpaths]
    metrics = [m.name for m in experiment.metrics]
    for c, m, x, v in zip(experiment.callpath_index, experiment.metric_index, experiment.coordinates,
                          experiment.value):
        found.setdefault((callpaths[c], metrics[m], tuple(x)), []).append(v)
    return found


def test_literal_frames_recover_the_laws(host):
    sizes = [4, 8, 16, 32, 64, 128]
    experiment = extrap_plugins.from_graphframes([literal(p) for p in sizes], {"p": sizes})
    assert experiment.parameter_names == ["p"]
    assert [c.name for c in experiment.callpaths] == ["main", "main->solve"]
    assert [m.name for m in experiment.metrics] == ["time", "time (inc)"]
    models = extrap_plugins.model(experiment)
    assert models.get("main->solve", "time").formula == "3 · p · log2(p)"
    assert models.get("main", "time").formula == "2"


def test_parameters_as_one_mapping_per_frame_and_repetitions(host):
    frames = [literal(p) for p in (4, 4, 8, 16, 32, 64)]
    experiment = extrap_plugins.from_graphframes(frames, [{"p": p} for p in (4, 4, 8, 16, 32, 64)],
                                                 metrics=["time"])
    found = series(experiment)
    assert len(found[("main->solve", "time", (4.0,))]) == 2  # equal parameters: repetitions
    assert [m.name for m in experiment.metrics] == ["time"]


def test_caliper_frames_equal_the_caliper_reader(host, shared_data):
    pytest.importorskip("caliperreader", reason="the caliper extra is not installed")
    folder = shared_data / "caliper" / "thicket" / "mpi_scaling_cali"
    if not folder.is_dir():
        pytest.skip(f"Thicket's LULESH data is not in {folder}")
    files = [str(folder / f"{n}_cores.cali") for n in RANKS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frames = [ht.GraphFrame.from_caliperreader(f) for f in files]
    experiment = extrap_plugins.from_graphframes(frames, {"jobsize": RANKS})
    assert series(experiment) == series(extrap_plugins.read(files))


@pytest.mark.parametrize("parameters, message", [
    ({"p": [1, 2]}, "parameter 'p' has 2 values for 3 frames"),
    ([{"p": 1}, {"p": 2}], "2 parameter mappings for 3 frames"),
    ([{"p": 1}, {"p": 2}, {"q": 3}], "frame 0 has no value for parameter 'q'"),
    ({"p": [1, 2, "x"]}, "frame 2: parameter p='x' is not a number"),
    ({}, "no parameters given"),
])
def test_bad_parameters(parameters, message):
    with pytest.raises(InputError, match=message):
        extrap_plugins.from_graphframes([literal(p) for p in (4, 8, 16)], parameters)


def test_missing_metric_names_the_frame():
    with pytest.raises(InputError, match="frame 0 has no metric 'visits'"):
        extrap_plugins.from_graphframes([literal(4), literal(8)], {"p": [4, 8]}, metrics=["visits"])


def _leaf():
    return None


def _program(n: int):
    for _ in range(n):
        _leaf()


def test_cprofile_frames_from_a_real_python_program(host, tmp_path):
    """A format Hatchet reads that we have no reader for: cProfile, the call counts modelled exactly."""
    import cProfile

    sizes = [1000, 2000, 4000, 8000, 16000]
    frames = []
    for n in sizes:
        profiler = cProfile.Profile()
        profiler.enable()
        _program(n)
        profiler.disable()
        profiler.dump_stats(tmp_path / f"run{n}.pstats")
        frames.append(ht.GraphFrame.from_cprofile(str(tmp_path / f"run{n}.pstats")))
    experiment = extrap_plugins.from_graphframes(frames, {"n": sizes}, metrics=["numcalls", "time"])
    leaf = [c.name for c in experiment.callpaths if c.name.endswith("->_leaf")]
    assert leaf == ["_program->_leaf"]
    models = extrap_plugins.model(experiment, metrics=["numcalls"])
    calls = models.get("_program->_leaf", "numcalls")
    assert calls.predict([1e6]) == pytest.approx(1e6, rel=1e-9)


# ------------------------------------- inclusive values (D1), wrong arguments (D8), names with the separator (D4)
def test_the_frames_say_which_metrics_are_inclusive(host, shared_data):
    experiment = extrap_plugins.from_graphframes([literal(p) for p in (4, 8, 16)], {"p": [4, 8, 16]})
    assert {m.name: m.values for m in experiment.metrics} == {"time": "exclusive", "time (inc)": "inclusive"}
    models = extrap_plugins.model(experiment)
    assert extrap_plugins.extrapolate(models).values == {"time": "exclusive", "time (inc)": "inclusive"}
    pytest.importorskip("caliperreader", reason="the caliper extra is not installed")
    folder = shared_data / "caliper" / "thicket" / "mpi_scaling_cali"
    if not folder.is_dir():
        pytest.skip(f"Thicket's LULESH data is not in {folder}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frames = [ht.GraphFrame.from_caliperreader(str(folder / f"{n}_cores.cali")) for n in RANKS]
    assert frames[0].inc_metrics == []  # Hatchet files the aliases under exc_metrics; spot.metrics tells
    experiment = extrap_plugins.from_graphframes(frames, {"jobsize": RANKS})
    assert {m.name: m.values for m in experiment.metrics} == {
        "Min time/rank": "inclusive", "Max time/rank": "inclusive", "Avg time/rank": "inclusive",
        "Total time": "inclusive"}


def test_metric_values_from_spot_metrics_names_and_hatchet_s_lists():
    from extrap_plugins.hatchet import metric_values

    spot = ["min#inclusive#sum#time.duration", "any#any#max#Bytes/Rep"]
    assert metric_values(["Min time/rank", "Bytes/Rep", "sum#time.duration", "visits"], ["Min time/rank", "visits"],
                         [], spot) == {"Min time/rank": "inclusive", "Bytes/Rep": "", "sum#time.duration": "exclusive",
                                       "visits": ""}  # exc_metrics alone says nothing: Hatchet's Caliper reader


@pytest.mark.parametrize("frames, given", [
    ("x.cali", "got the str 'x.cali'; read .cali files with extrap_plugins.read('x.cali')"),
    ("ab", "got the str 'ab'; read .cali files with extrap_plugins.read('ab')"),
    ({"a": 1}, "got a dict; read .cali files with extrap_plugins.read(files)"),
    (3, "got an int; read .cali files with extrap_plugins.read(files)"),
])
def test_a_path_or_other_object_instead_of_frames_is_one_input_error(frames, given):
    # "ab" was two frames, one per character; "x.cali" one frame of six
    with pytest.raises(InputError) as caught:
        extrap_plugins.from_graphframes(frames, {"p": [1, 2]})
    assert str(caught.value) == (f"from_graphframes: expected a list of hatchet GraphFrames, one per run, {given}, "
                                 f"or make a GraphFrame of each with hatchet.GraphFrame.from_caliperreader(file)")


def test_one_frame_or_a_stray_item_instead_of_a_list_of_frames_is_said():
    with pytest.raises(InputError) as caught:
        extrap_plugins.from_graphframes(literal(4), {"p": [4]})
    assert str(caught.value) == ("from_graphframes: expected a list of hatchet GraphFrames, one per run, got one "
                                 "(hatchet.graphframe.GraphFrame); give a list: from_graphframes([gf, ...], parameters)")
    with pytest.raises(InputError) as caught:
        extrap_plugins.from_graphframes([literal(4), "b.cali"], {"p": [4, 8]})
    assert str(caught.value) == (
        "from_graphframes: expected a list of hatchet GraphFrames, one per run, but frame 1 is the str 'b.cali'; "
        "read .cali files with extrap_plugins.read('b.cali'), or make a GraphFrame of each with "
        "hatchet.GraphFrame.from_caliperreader(file)")


def test_a_node_named_with_the_separator_is_refused_naming_the_frame():
    # a root "main->solve" and main's child "solve" were one call path
    def frame(p):
        solve = 3.0 * p
        return ht.GraphFrame.from_literal([
            {"frame": {"name": "main"}, "metrics": {"time": 2.0},
             "children": [{"frame": {"name": "solve"}, "metrics": {"time": solve}}]},
            {"frame": {"name": "main->solve"}, "metrics": {"time": 1.0}}])

    with pytest.raises(InputError) as caught:
        extrap_plugins.from_graphframes([frame(p) for p in (4, 8)], {"p": [4, 8]})
    assert str(caught.value) == (
        "frame 0: node 'main->solve' contains the call-path separator '->': its call path would read as nested "
        "nodes and could merge with a nested call path; rename the node (its region in the program)")


_FORMS = "give one list of values per name ({'p': [27, 64, ...]}) or one mapping per frame ([{'p': 27}, ...])"


@pytest.mark.parametrize("parameters, message", [
    ([4, 8, 16], f"from_graphframes: parameters: got a list of 3 int; {_FORMS}"),
    (None, f"from_graphframes: parameters: got a NoneType; {_FORMS}"),
    ("p", f"from_graphframes: parameters: got the str 'p'; {_FORMS}; from the frames' metadata: "
          "{'p': [gf.metadata['p'] for gf in frames]}"),
    ({"p": 4}, "parameter 'p' has the value 4 for 3 frames; give one value per frame ({'p': [27, 64, ...]})"),
])
def test_parameters_in_another_form_are_one_input_error_saying_the_forms(parameters, message):
    # these were TypeErrors ('int' object is not iterable), and "p" was "1 parameter mappings for 3 frames"
    with pytest.raises(InputError) as caught:
        extrap_plugins.from_graphframes([literal(p) for p in (4, 8, 16)], parameters)
    assert str(caught.value) == message


def test_one_metric_named_by_a_string_is_that_metric():
    # metrics="time" was read as the metrics 't', 'i', 'm', 'e'
    experiment = extrap_plugins.from_graphframes([literal(p) for p in (4, 8, 16)], {"p": [4, 8, 16]},
                                                 metrics="time (inc)")
    assert [m.name for m in experiment.metrics] == ["time (inc)"]


# --------------------- call graphs, nodes of one call path, names from the dataframe (session 62)
def _recursive(n: int) -> int:
    return _recursive(n - 1) + 1 if n else 0


def test_a_call_graph_of_a_recursive_program_is_an_input_error_not_a_recursion_error(host, tmp_path):
    # node.path() recursed without end on cProfile's cycle: RecursionError
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
    _recursive(5)
    profiler.disable()
    profiler.dump_stats(tmp_path / "run.pstats")
    frame = ht.GraphFrame.from_cprofile(str(tmp_path / "run.pstats"))
    with pytest.raises(InputError) as caught:
        extrap_plugins.from_graphframes([frame, frame], {"p": [1, 2]})
    assert str(caught.value) == (
        "frame 0: node '_recursive' is called from '_recursive' (a cycle): the frame is a call graph (cProfile and gprof give one where a function recurses or has several "
        "callers), not a call tree, so the node has no one call path; model call-tree profiles (Caliper, "
        "HPCToolkit, TAU, pyinstrument)")


def _two_solves(p: float):
    """main with two loops named solve (at lines 10 and 20: two nodes of one call path) and a statement node that
    only the dataframe names (``cpi.c:30``, as HPCToolkit's)."""
    return ht.GraphFrame.from_literal([{
        "frame": {"name": "main", "type": "function"}, "metrics": {"time": 1.0},
        "children": [{"frame": {"name": "solve", "type": "loop", "line": 10}, "metrics": {"time": 2.0 * p}},
                     {"frame": {"name": "solve", "type": "loop", "line": 20}, "metrics": {"time": 3.0 * p}},
                     {"frame": {"type": "statement", "file": "cpi.c", "line": 30}, "name": "cpi.c:30",
                      "metrics": {"time": 4.0}}]}])


def test_nodes_of_one_call_path_add_up_and_take_hatchet_s_names(host):
    # main->solve was two repetitions (2p and 3p, modelled as their mean 2.5p); the statement node was
    # "main->{'file': 'cpi.c', 'line': '30', 'type': 'statement'}"
    experiment = extrap_plugins.from_graphframes([_two_solves(p) for p in (2, 4)], {"p": [2, 4]})
    assert series(experiment) == {("main", "time", (2.0,)): [1.0], ("main", "time", (4.0,)): [1.0],
                                  ("main->solve", "time", (2.0,)): [10.0], ("main->solve", "time", (4.0,)): [20.0],
                                  ("main->cpi.c:30", "time", (2.0,)): [4.0], ("main->cpi.c:30", "time", (4.0,)): [4.0]}
