"""The co-design commands on a co-design engineer's own system and machine files: what they print about the
inputs means what was given (exact counts and sizes), a misspelt option is refused, and values given are kept."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import InputError
from extrap_plugins.cli import main
from extrap_plugins.codesign import System
from extrap_plugins.experiment import Experiment
from extrap_plugins.machine import calibrate, whatif
from extrap_plugins.models import Factor, Model, ModelSet, Term


def memory_model() -> ModelSet:
    """bytes_used = 10^5 · n · log2 n per process (seed 004's), the one role requirements needs."""
    return ModelSet(parameters=("p", "n"), source="app", models=[
        Model(callpath="main", metric="bytes_used", parameters=("p", "n"), constant=0.0,
              terms=(Term(1e5, {"n": Factor(1, 1)}),))])


# --------------------------------------------------------------------------- requirements
def test_the_system_and_its_upgrades_are_printed_as_given(tmp_path):
    # "system: 1.04858e+06 processes", "upgrade: a (processes = 2.09715e+06)", "(memory_per_process = 3.22123e+09)"
    # and "(memory_per_node = 5.49756e+11, ...)": six digits of a count or a size the user wrote exactly
    result = extrap_plugins.requirements(
        [memory_model()], System.of(1048576, "2 GiB"),
        ["a=processes:2097152", "b=memory_per_process:3 GiB", "c=memory_per_process:1.5x",
         "d=memory_per_process:1500000000"])
    lines = result.text().splitlines()
    assert lines[0] == "system: 1048576 processes, 2 GiB of memory per process"
    assert [line for line in lines if line.startswith("upgrade: ")] == [
        "upgrade: a (processes = 2097152)", "upgrade: b (memory_per_process = 3 GiB)",
        "upgrade: c (memory_per_process 1.5x)", "upgrade: d (memory_per_process = 1.5e+09 bytes)"]
    path = tmp_path / "system.toml"
    path.write_text('[system]\nracks = 16\nnodes_per_rack = 32\nsockets_per_node = 2\ncores_per_socket = 64\n'
                    'memory_per_node = "256 GiB"\n[upgrades]\nbigger = { memory_per_node = "512 GiB", racks = "0.5x" }\n')
    text = extrap_plugins.requirements([memory_model()], path).text()
    assert "upgrade: bigger (memory_per_node = 512 GiB, racks 0.5x)" in text.splitlines()
    assert "<h2>bigger (memory_per_node = 512 GiB, racks 0.5x)</h2>" in \
        extrap_plugins.requirements([memory_model()], path).render("html")


def test_a_ratio_not_given_is_an_empty_csv_cell_as_in_whatif(recwarn):
    # the requirements CSV wrote "nan" where the text reads "–" and the JSON null (whatif's CSV: an empty cell)
    sent = Model(callpath="main", metric="bytes_sent", parameters=("p", "n"), constant=1e6,
                 terms=(Term(-2e4, {"p": Factor(1, 0)}),))  # 1e6 - 2e4 · p: below 0 from p = 50 on
    models = ModelSet(parameters=("p", "n"), source="app", models=[*memory_model().models, sent])
    result = extrap_plugins.requirements([models], System.of(65536, "2 GiB"), "racks=processes:2x")
    assert result.text().splitlines()[-3:-1] == ["memory                    1 (2)", "communication             – (–)"]
    header, row = result.render("csv").splitlines()
    assert header == "application,upgrade,best,worst,problem_size_per_process,problem_size,memory,communication," \
                     "memory_total,communication_total"
    assert row.split(",")[-4:] == ["1.0", "", "2.0", ""]
    assert [str(w.message).startswith("main [bytes_sent]: the model is -1.31e9 at p=65536") for w in recwarn] == [True]


@pytest.mark.parametrize("role, message", [
    ("memory=bytes_used+bytes_used", "--role memory=bytes_used+bytes_used: metric 'bytes_used' is named twice in "
                                     "'bytes_used+bytes_used', so its amount would count twice; name each metric once"),
    ("memory=bytes_used+", "--role memory=bytes_used+: metric must be a metric name (or names joined by +), got "
                           "'bytes_used+'"),
])
def test_a_role_summing_a_metric_twice_or_an_empty_one_is_refused_as_in_a_machine_file(role, message):
    # memory=bytes_used+bytes_used doubled the memory, so n filled half of it: every ratio was of the wrong size;
    # bytes_used+ said "application 'app' has no metric ''"
    with pytest.raises(InputError) as caught:
        extrap_plugins.requirements([memory_model()], System.of(64, "2 GiB"), "a=processes:2x", roles=role)
    assert str(caught.value) == message


# --------------------------------------------------------------------------------- whatif
def measured(flop_rate: float = 1e9, latency: float = 0.0) -> Experiment:
    """main: flop = 1e6 · p and messages = 10 · p, time = flop / flop_rate + messages · latency, at p = 1..16."""
    ps = (1, 2, 4, 8, 16)
    rows = [(metric, p, value) for p in ps for metric, value in (
        ("flop", 1e6 * p), ("messages_sent", 10.0 * p), ("time", 1e6 * p / flop_rate + 10 * p * latency))]
    metric, p, value = zip(*rows)
    return Experiment.from_columns(["p"], callpath=["main"] * len(rows), metric=np.array(metric, dtype=object),
                                   coordinates=[[x] for x in p], value=value, source="runs.csv")


def test_a_time_metric_the_input_lacks_is_refused_without_calibrate_too(tmp_path, capsys):
    # --time-metric tme (a typo) was ignored without --calibrate: the modelled column read "–", without a word
    machine = tmp_path / "m.toml"
    machine.write_text('[rates]\nprocessor = { metric = "flop", rate = 1e9 }\n')
    with pytest.raises(InputError) as caught:
        whatif(measured(), machine, target="p=64", time_metric="tme")
    assert str(caught.value) == "runs.csv: --time-metric tme: no such metric; the metrics are flop, messages_sent, time"
    data = tmp_path / "runs.csv"
    data.write_text("p,callpath,metric,value\n" + "".join(f"{p},main,flop,{1e6 * p}\n" for p in (1, 2, 4, 8, 16)))
    assert main(["whatif", str(data), "--machine", str(machine), "--target", "p=64", "--time-metric", "tme"]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (
        "", f"extrap-plugins: error: {data}: --time-metric tme: no such metric; the metrics are flop\n")
    # the default time metric may be missing: the time metric's own model is then not given
    assert main(["whatif", str(data), "--machine", str(machine), "--target", "p=64", "--export", "csv"]) == 0
    time, modelled = capsys.readouterr().out.splitlines()[1].split(",")[1:3]
    assert (float(time), modelled) == (pytest.approx(0.064), "")  # 1e6 · 64 flop at 1e9 /s


def latency_bound(tmp_path, machine_text: str) -> tuple[Experiment, str]:
    """main: flop = 1e6 · p, messages = 10 · p², time = flop / 1e9 + messages · 1e-5 (p = 1..16); a machine file."""
    ps = (1, 2, 4, 8, 16)
    rows = [(metric, p, value) for p in ps for metric, value in (
        ("flop", 1e6 * p), ("messages_sent", 10.0 * p * p), ("time", 1e-3 * p + 1e-4 * p * p))]
    metric, p, value = zip(*rows)
    experiment = Experiment.from_columns(["p"], callpath=["main"] * len(rows), metric=np.array(metric, dtype=object),
                                         coordinates=[[x] for x in p], value=value, source="runs.csv")
    machine = tmp_path / "m.toml"
    machine.write_text(machine_text)
    return experiment, str(machine)


def test_calibration_fits_the_values_left_out_and_keeps_those_given(tmp_path):
    # a rate given in the machine file was replaced by a fitted one without a word ("values left out: --calibrate
    # fits them"): the processor's 2e9 /s became 1e9 /s
    latency = '[latencies]\nlatency = { metric = "messages_sent" }\n'
    experiment, machine = latency_bound(tmp_path, '[rates]\nprocessor = { metric = "flop", rate = 1e9 }\n' + latency)
    fitted = calibrate(experiment, machine).machine
    assert fitted["processor"].value == 1e9 and fitted["latency"].value == pytest.approx(1e-5, rel=1e-9)
    experiment, machine = latency_bound(tmp_path, '[rates]\nprocessor = { metric = "flop", rate = 2e9 }\n' + latency)
    result = calibrate(experiment, machine)
    assert result.machine["processor"].value == 2e9 and result.machine["latency"].value > 1e-5
    # every value given: nothing to fit, the calibration says how well the profile explains the times
    experiment, machine = latency_bound(tmp_path, '[rates]\nprocessor = { metric = "flop", rate = 2e9 }\n[latencies]\n'
                                                  'latency = { metric = "messages_sent", seconds = 1e-5 }\n')
    result = calibrate(experiment, machine)
    assert [(r.name, r.value) for r in result.machine.resources] == [("processor", 2e9), ("latency", 1e-5)]
    # at p = 1: 1.1e-3 s measured, 0.6e-3 s convolved
    assert result.max_error == pytest.approx(0.5 / 1.1) and result.fits[0].share < 1
    assert result.given == ("processor", "latency") and result.as_json()["given"] == ["processor", "latency"]


def test_the_calibration_says_which_values_it_kept(tmp_path):
    experiment, machine = latency_bound(tmp_path, '[rates]\nprocessor = { metric = "flop", rate = 1e9 }\n'
                                                  '[latencies]\nlatency = { metric = "messages_sent" }\n')
    lines = whatif(experiment, machine, target="p=32", calibrate_rates=True).text().splitlines()
    assert lines[0] == "machine: processor (flop) 1e+09 /s, latency (messages_sent) 1e-05 s"
    assert lines[2] == ("calibrated on 5 measurements (non-negative least squares; processor as given): mean error "
                        "0.00%, max 0.00%")


@pytest.mark.parametrize(("argv", "said"), [
    (["requirements", "{data}", "--system", ""], "system '' (--system): expected the path of a TOML file"),
    (["whatif", "{data}", "--machine", "", "--target", "p=64"], "machine '' (--machine): expected the path of a "
                                                                 "TOML file"),
])
def test_a_system_or_machine_file_named_by_an_empty_name_is_refused_naming_its_option(argv, said, tmp_path, capsys,
                                                                                       monkeypatch):
    # ('' was pathlib's '.', the current folder: ".: is a folder; expected a TOML file")
    monkeypatch.chdir(tmp_path)
    data = pathlib.Path(__file__).resolve().parents[1] / "examples" / "codesign" / "synthetic.jsonl"
    assert main([word.replace("{data}", str(data)) for word in argv]) == 2
    assert capsys.readouterr().err == f"extrap-plugins: error: {said}\n"


def test_a_callpath_glob_of_whatif_that_matches_nothing_is_said_as_models_is(capsys):
    # (it was "nothing to calibrate: no call path has both 'time' and an amount of processor, ...", naming no glob)
    codesign = pathlib.Path(__file__).resolve().parents[1] / "examples" / "codesign"
    data = codesign / "synthetic.jsonl"
    assert main(["whatif", str(data), "--machine", str(codesign / "machine.toml"), "--calibrate", "--target",
                 "p=256,n=1.6e5", "--callpath", "[", "--callpath", "comp"]) == 2
    assert capsys.readouterr().err == (f"extrap-plugins: error: {data}: no call path matches '[', 'comp' (--callpath); "
                                       "the call paths are main->compute, main->exchange, main\n")
