"""What a Thicket user hands the API besides a Thicket: a groupby's dict of Thickets, its Thickets as frames, the text
tree() prints; and Thickets whose call trees or metadata are odd (session 62)."""

from __future__ import annotations

import warnings

import pytest

import extrap_plugins
from extrap_plugins.errors import InputError

pytest.importorskip("pandas", reason="the thicket extra (pandas) is not installed")
pytest.importorskip("thicket", reason="the thicket extra (llnl-thicket) is not installed")

from thicket import Thicket  # noqa: E402

from extrap_plugins.thicket import Modeling, from_thicket  # noqa: E402


@pytest.fixture(scope="module")
def tk(mpi_scaling_cali):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Thicket.from_caliperreader(mpi_scaling_cali[:3], disable_tqdm=True)


@pytest.mark.parametrize("call", [from_thicket, Modeling])
def test_a_groupby_s_dict_of_thickets_is_said_to_be_one(tk, call):
    # it was "expected a thicket.Thicket, got a thicket.groupby.GroupBy; read .cali files with ..."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        groups = tk.groupby("jobsize")
    with pytest.raises(InputError) as caught:
        call(groups, "jobsize")
    name = call.__name__
    assert str(caught.value) == (
        f"{name}: expected a thicket.Thicket, got a dict of 3 Thickets (what tk.groupby returns); model the Thicket "
        f"before the groupby, whose profiles are the runs: {name}(tk, ...)")


def test_a_groupby_s_thickets_as_frames_are_an_input_error_not_a_value_error(tk):
    # it was ValueError: The truth value of a DataFrame is ambiguous (a Thicket's metadata in `metadata or {}`)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        groups = tk.groupby("jobsize")
    with pytest.raises(InputError) as caught:
        extrap_plugins.from_graphframes(list(groups.values()), {"jobsize": list(groups)})
    assert str(caught.value) == (
        "from_graphframes: frame 0 is a Thicket, not a GraphFrame; model a Thicket with "
        "extrap_plugins.from_thicket(tk), the Thicket of every profile (not its groupby)")


def test_the_text_tree_prints_is_named_as_a_text_not_echoed(tk):
    # the message repeated the whole tree twice (3,484 characters for three LULESH runs), once as a path to read
    text = tk.tree(metric_column="Avg time/rank")
    with pytest.raises(InputError) as caught:
        from_thicket(text)
    lines = text.strip().splitlines()
    assert str(caught.value) == (
        f"from_thicket: expected a thicket.Thicket, got a text of {len(lines)} lines ({lines[0][:60]!r}; what tree() "
        f"prints?); read .cali files with extrap_plugins.read(files), or make a Thicket of them with "
        f"Thicket.from_caliperreader(files)")


def test_a_flag_named_as_parameter_is_no_number(tk):
    # True and False were the parameter values 1 and 0
    flagged = tk.deepcopy()
    flagged.metadata["flag"] = [True, False, True]
    profile = flagged.metadata.index[0]
    with pytest.raises(InputError) as caught:
        from_thicket(flagged, "flag")
    assert str(caught.value) == (f"{flagged.profile_mapping[profile]}: parameter flag=True is a flag (True or "
                                 f"False), not a number")


def test_modeling_a_metric_without_values_says_so(host, tk):
    # it was "model: the experiment holds no measured values, ...; give Experiment.from_columns one row ..."
    empty = tk.deepcopy()
    empty.dataframe["Avg time/rank"] = float("nan")
    with pytest.raises(InputError) as caught:
        Modeling(empty, "jobsize", chosen_metrics=["Avg time/rank"]).produce_models()
    assert str(caught.value) == "Modeling: no values: 'Avg time/rank' is empty (NaN) in every profile of this Thicket"
