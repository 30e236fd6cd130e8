"""Machine profiles, calibration by non-negative least squares, and what-if predictions (seed 003)."""

from __future__ import annotations

import csv
import dataclasses
import html
import io
import json
import math
import re
import warnings

import numpy as np
import pytest
from reading_helpers import MACHINE, measured, noted

import extrap_plugins
from extrap_plugins import Experiment, InputError
from extrap_plugins.errors import ExtrapWarning
from extrap_plugins.cli import main
from extrap_plugins.machine import Machine, Resource, calibrate, load_machine, parse_scale, whatif
from extrap_plugins.models import Factor, Model, ModelSet, Term

TRUE = {"processor": 2e9, "memory": 5e8, "bandwidth": 1e9, "latency": 5e-6}
P = (2, 4, 8, 16, 32)
N = (1e4, 2e4, 4e4, 8e4, 1.6e5)

MACHINE_TOML = """\
[machine]
name = "synthetic"
[rates]
processor = { metric = "flop" }
memory = { metric = "loads_stores" }
bandwidth = { metric = "bytes_sent+bytes_received" }
[latencies]
latency = { metric = "messages_sent" }
"""


def amounts(p: float, n: float) -> dict[str, dict[str, float]]:
    """Per-process requirements of the two regions below main (exact counts)."""
    compute = {"flop": 40 * n * math.log2(n), "loads_stores": 30 * n * math.log2(p)}
    exchange = {"bytes_sent": 800 * n**0.5 * math.log2(p), "bytes_received": 800 * n**0.5 * math.log2(p),
                "messages_sent": 40 * math.log2(p)}
    return {"main->compute": compute, "main->exchange": exchange}


def true_time(values: dict[str, float]) -> float:
    return (values.get("flop", 0) / TRUE["processor"] + values.get("loads_stores", 0) / TRUE["memory"]
            + (values.get("bytes_sent", 0) + values.get("bytes_received", 0)) / TRUE["bandwidth"]
            + values.get("messages_sent", 0) * TRUE["latency"])


def synthetic(noise: float = 0.01, repetitions: int = 3, seed: int = 1) -> Experiment:
    """Times made from the known profile with ±noise (uniform), on 5 × 5 points; main sums its children."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in P:
        for n in N:
            parts = amounts(p, n)
            parts["main"] = {k: v for part in list(parts.values()) for k, v in part.items()}
            for callpath, values in parts.items():
                for metric, value in values.items():
                    rows += [(callpath, metric, p, n, value)] * repetitions
                exact = true_time(values)
                rows += [(callpath, "time", p, n, exact * (1 + rng.uniform(-noise, noise)))
                         for _ in range(repetitions)]
    callpath, metric, p, n, value = zip(*rows)
    return Experiment.from_columns(["p", "n"], callpath=np.array(callpath, dtype=object),
                                   metric=np.array(metric, dtype=object), coordinates=np.c_[p, n],
                                   value=value, source="synthetic")


@pytest.fixture
def machine_file(tmp_path):
    path = tmp_path / "machine.toml"
    path.write_text(MACHINE_TOML)
    return path


def test_calibration_recovers_the_rates_within_two_percent(machine_file):
    result = calibrate(synthetic(), load_machine(machine_file))
    errors = {r.name: abs(r.value / TRUE[r.name] - 1) for r in result.machine.resources}
    assert max(errors.values()) < 0.02, errors
    assert result.mean_error < 0.01 and [f.callpath for f in result.fits] == ["main->compute", "main->exchange", "main"]


def test_calibrated_profile_predicts_eight_times_the_scale_within_five_percent(machine_file):
    target = {"p": 8 * max(P), "n": max(N)}
    result = whatif(synthetic(), machine_file, target=target, calibrate_rates=True)
    parts = amounts(target["p"], target["n"])
    expected = true_time({k: v for part in parts.values() for k, v in part.items()})
    assert result.total.callpath == "total"
    assert abs(result.total.time / expected - 1) < 0.05
    for row in result.rows:
        truth = true_time(parts[row.callpath]) if row.callpath in parts else expected
        assert abs(row.time / truth - 1) < 0.05, row.callpath


def test_sensitivity_and_scale_are_exact_on_the_true_profile(tmp_path):
    path = tmp_path / "true.toml"
    path.write_text('[rates]\nprocessor = { metric = "flop", rate = 2e9 }\n'
                    'bandwidth = { metric = "bytes_sent+bytes_received", rate = 1e9 }\n'
                    'memory = { metric = "loads_stores", rate = 5e8 }\n'
                    '[latencies]\nlatency = { metric = "messages_sent", seconds = 5e-6 }\n')
    target = {"p": 256.0, "n": 1.6e5}
    result = whatif(synthetic(noise=0), path, target=target, scale="bandwidth=4x,latency=0.25x")
    exchange = result.rows[[r.callpath for r in result.rows].index("main->exchange")]
    truth = amounts(256, 1.6e5)["main->exchange"]
    bandwidth = (truth["bytes_sent"] + truth["bytes_received"]) / 1e9
    latency = truth["messages_sent"] * 5e-6
    assert exchange.time == pytest.approx(bandwidth + latency, rel=1e-6)
    assert exchange.scaled_time == pytest.approx(bandwidth / 4 + latency / 4, rel=1e-6)
    assert exchange.speedups["bandwidth"] == pytest.approx((bandwidth + latency) / (bandwidth / 4 + latency), rel=1e-6)
    assert exchange.speedups["processor"] == pytest.approx(1.0)
    assert exchange.shares["latency"] == pytest.approx(latency / (bandwidth + latency), rel=1e-6)
    document = result.as_json()
    assert document["format"] == "extrap-plugins/whatif" and document["total"]["callpath"] == "total"


def test_the_json_document_gives_each_model_and_what_it_warns_of(tmp_path):
    machine = tmp_path / "true.toml"
    machine.write_text('[rates]\nprocessor = { metric = "flop", rate = 2e9 }\n'
                       'bandwidth = { metric = "bytes_sent+bytes_received", rate = 1e9 }\n'
                       'memory = { metric = "loads_stores", rate = 5e8 }\n'
                       '[latencies]\nlatency = { metric = "messages_sent", seconds = 5e-6 }\n')
    models = extrap_plugins.model(synthetic(noise=0))
    sent = next(m for m in models.models if (m.callpath, m.metric) == ("main->exchange", "bytes_sent"))
    warned = dataclasses.replace(sent, warnings=("all values are zero",))
    models = dataclasses.replace(models, models=[warned if m is sent else m for m in models.models])
    document = whatif(models, machine, target={"p": 256.0, "n": 1.6e5}).as_json()
    assert document["models"]["main->exchange"]["bytes_sent"] == sent.formula
    assert document["model_warnings"]["main->exchange"] == {"bytes_sent": ["all values are zero"],
                                                           "bytes_received": [], "messages_sent": []}
    assert set(document["model_warnings"]) == set(document["models"])


def test_parse_scale():
    assert parse_scale("bandwidth=4x,latency=0.25x") == {"bandwidth": 4.0, "latency": 0.25}
    with pytest.raises(InputError, match=r"^--scale latency=fast: expected a positive factor such as 4x or 0.25x$"):
        parse_scale("latency=fast")


def write_jsonl(experiment: Experiment, path) -> str:
    lines = []
    names_c = [c.name for c in experiment.callpaths]
    names_m = [m.name for m in experiment.metrics]
    for c, m, (p, n), v in zip(experiment.callpath_index, experiment.metric_index, experiment.coordinates,
                               experiment.value):
        lines.append(json.dumps({"params": {"p": p, "n": n}, "callpath": names_c[c], "metric": names_m[m],
                                 "value": v}))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_cli_whatif_calibrate_json(tmp_path, machine_file, capsys):
    data = write_jsonl(synthetic(), tmp_path / "runs.jsonl")
    saved = tmp_path / "fitted.toml"
    status = main(["whatif", data, "--machine", str(machine_file), "--calibrate", "--target", "p=256,n=1.6e5",
                   "--scale", "bandwidth=4x", "--export", "json", "--save-machine", str(saved)])
    out, err = capsys.readouterr()
    assert status == 0, err
    document = json.loads(out)
    rates = {r["name"]: r["value"] for r in document["machine"]["resources"]}
    assert all(abs(rates[k] / TRUE[k] - 1) < 0.02 for k in TRUE)
    assert document["calibration"]["mean_error"] < 0.01
    again = load_machine(saved)
    assert {r.name: r.value for r in again.resources} == pytest.approx(rates)


def test_cli_whatif_text(tmp_path, machine_file, capsys):
    data = write_jsonl(synthetic(), tmp_path / "runs.jsonl")
    status = main(["whatif", data, "--machine", str(machine_file), "--calibrate", "--target", "p=256,n=1.6e5"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "main->exchange" in out and "total" in out and "processor" in out


def test_the_scaled_time_is_a_column_only_when_the_machine_is_scaled(tmp_path, machine_file, capsys):
    # without --scale the table had "with unchanged [s]" (the time again) and "speedup" (1 everywhere)
    data = write_jsonl(synthetic(), tmp_path / "runs.jsonl")
    base = ["whatif", data, "--machine", str(machine_file), "--calibrate", "--target", "p=256,n=1.6e5"]
    headers = {}
    for scale in ([], ["--scale", "bandwidth=4x"]):
        for export in ("text", "html"):
            assert main([*base, *scale, "--export", export]) == 0
            headers[bool(scale), export] = capsys.readouterr().out
    plain = next(line for line in headers[False, "text"].splitlines() if line.startswith("call path  ") and
                 "time [s]" in line)
    assert plain.split() == ["call", "path", "time", "[s]", "modelled", "[s]", "processor", "×4", "memory", "×4",
                             "bandwidth", "×4", "latency", "÷4", "all", "4×"]
    assert "unchanged" not in headers[False, "html"] and "<th>speedup</th>" not in headers[False, "html"]
    assert "with bandwidth 4x [s]    speedup" in headers[True, "text"]
    assert "<th>with bandwidth 4x [s]</th><th>speedup</th>" in headers[True, "html"]


def test_the_machine_file_is_named_when_it_would_be_saved_over(tmp_path, machine_file, capsys):
    # "writing there would destroy the measurements": it is the machine file
    data = write_jsonl(synthetic(), tmp_path / "runs.jsonl")
    before = machine_file.read_text()
    status = main(["whatif", data, "--machine", str(machine_file), "--calibrate", "--target", "p=256,n=1.6e5",
                   "--save-machine", str(machine_file)])
    assert (status, capsys.readouterr().err) == (2, (
        f"extrap-plugins: error: {machine_file}: the output (--save-machine) is an input, the machine file "
        "(--machine): writing there would replace it; choose another file\n"))
    assert machine_file.read_text() == before
    system = tmp_path / "system.toml"
    system.write_text("[system]\nprocesses = 64\nmemory_per_process = \"2 GiB\"\n")
    assert main(["requirements", data, "--system", str(system), "-o", str(system)]) == 2
    assert capsys.readouterr().err == (f"extrap-plugins: error: {system}: the output (-o) is an input, the system file "
                                       "(--system): writing there would replace it; choose another file\n")


@pytest.mark.parametrize("argv, message", [
    (["--scale", "network=2x"], "--scale network: the machine has no such resource; its resources are processor, "
                                "memory, bandwidth, latency"),
    (["--target", "p=256"], "target 'p=256': give a value for n as well"),
    (["--time-metric", "seconds"], "--time-metric seconds: no such metric; the metrics are flop, loads_stores, time, "
                                   "bytes_sent, bytes_received, messages_sent"),
])
def test_cli_bad_input_is_one_line_exit_2(tmp_path, machine_file, capsys, argv, message):
    data = write_jsonl(synthetic(), tmp_path / "runs.jsonl")
    base = ["whatif", data, "--machine", str(machine_file), "--calibrate", "--target", "p=256,n=1.6e5"]
    status = main(base + argv)
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.endswith(f"{message}\n") and err.startswith("extrap-plugins: error: ") and err.count("\n") == 1


def test_a_machine_file_not_in_utf8_is_one_line_exit_2_naming_its_line(tmp_path, capsys):
    # a Latin-1 comment ended in UnicodeDecodeError inside tomllib (exit 1)
    data = write_jsonl(synthetic(), tmp_path / "runs.jsonl")
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(MACHINE_TOML.encode().replace(b"[rates]\n", b"[rates]\n# d\xe9bit\n"))
    status = main(["whatif", data, "--machine", str(latin1), "--calibrate", "--target", "p=256,n=1.6e5"])
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    assert err == (f"extrap-plugins: error: {latin1}:4: not UTF-8 text (byte 0xe9); TOML files are UTF-8: "
                    "save it as UTF-8\n")


def test_bad_machine_file(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[rates]\nprocessor = { metric = "flop", rate = -1 }\n')
    with pytest.raises(InputError) as caught:
        load_machine(path)
    assert str(caught.value) == f"{path}:2: [rates] processor: rate must be a positive number, got -1"


def test_a_saved_profile_with_a_free_resource_is_read_back(tmp_path):
    # calibration gives a resource that explains none of the time an infinite rate; --save-machine wrote no rate
    # for it, and the saved profile was refused ("has no value")
    from extrap_plugins.machine import Machine, Resource

    machine = Machine((Resource("processor", "rate", ("flop",), 2e9), Resource("bandwidth", "rate", ("bytes",), math.inf),
                       Resource("network", "latency", ("messages",), 1e-6)), name="calibrated")
    path = tmp_path / "saved.toml"
    path.write_text(machine.toml())
    assert 'bandwidth = { metric = "bytes", rate = inf }' in machine.toml()
    loaded = load_machine(path)
    assert [(r.name, r.kind, r.metrics, r.value) for r in loaded.resources] == [
        ("processor", "rate", ("flop",), 2e9), ("bandwidth", "rate", ("bytes",), math.inf),
        ("network", "latency", ("messages",), 1e-6)]
    path.write_text('[rates]\nprocessor = { metric = "flop", rate = 2e9 }\n[latencies]\nnetwork = { metric = "m", '
                    'seconds = inf }\n')
    with pytest.raises(InputError, match=r"\[latencies\] network: seconds must be a positive number, got inf"):
        load_machine(path)


def test_resources_without_a_value_are_named_in_number(tmp_path):
    experiment = Experiment.from_columns(["p"], callpath=["main"] * 10, metric=["time"] * 5 + ["flop"] * 5,
                                         coordinates=[[p] for p in (1, 2, 4, 8, 16)] * 2,
                                         value=[1.0, 2.0, 4.0, 8.0, 16.0, 1e9, 2e9, 4e9, 8e9, 16e9])
    for rates, said in (('processor = { metric = "flop" }\n',
                         "machine resource 'processor' has no value; give it in the machine file or use --calibrate"),
                        ('processor = { metric = "flop" }\nmemory = { metric = "flop" }\n',
                         "machine resources 'processor', 'memory' have no value; give them in the machine file or "
                         "use --calibrate")):
        path = tmp_path / "m.toml"
        path.write_text("[rates]\n" + rates)
        with pytest.raises(InputError) as refused:
            whatif(experiment, path, target="p=64")
        assert str(refused.value) == f"{path}: {said}"


# ------------------------------------------------ what a model of positive data cannot predict: below 0
def falling() -> tuple[Experiment, ModelSet]:
    """Positive measurements of main (time, flop, bytes_sent) and main->solve (time, flop) at p = 1 ... 32, with
    the models ``1 - 0.1 · log2(p)`` (time, flop in 1e9), ``1000 · p`` (bytes): time and flop fall below 0 from
    p = 1024 on; at p = 2^20 they are -1 (time) and -1e9 (flop)."""
    rows = []
    for p in (1, 2, 4, 8, 16, 32):
        level = 1 - 0.1 * math.log2(p)
        rows += [("main", "time", p, level), ("main", "flop", p, 1e9 * level), ("main", "bytes_sent", p, 1000.0 * p),
                 ("main->solve", "time", p, level / 2), ("main->solve", "flop", p, 1e9 * level)]
    callpath, metric, p, value = zip(*rows)
    experiment = Experiment.from_columns(["p"], callpath=list(callpath), metric=list(metric),
                                         coordinates=[[x] for x in p], value=list(value))
    log = {"p": Factor(0.0, 1.0)}

    def falls(callpath, metric, scale):
        return Model(callpath, metric, ("p",), scale, (Term(-0.1 * scale, log),))

    models = [falls("main", "time", 1.0), falls("main", "flop", 1e9),
              Model("main", "bytes_sent", ("p",), 0.0, (Term(1000.0, {"p": Factor(1.0, 0.0)}),)),
              falls("main->solve", "time", 0.5), falls("main->solve", "flop", 1e9)]
    return experiment, ModelSet(("p",), models, experiment=experiment)


FALLING_MACHINE = '[rates]\nprocessor = { metric = "flop", rate = 2e9 }\nbandwidth = { metric = "bytes_sent", rate = 1e9 }\n'
BELOW = ("the model is {value} at p=1048576, below 0 though every measured value is 0 or more: the value given is 0 "
         "(of its terms of opposite sign, the negative ones win there; do not trust the model there)")


def test_a_time_or_amount_below_0_at_the_target_is_given_as_0_and_said(tmp_path):
    # the modelled time was -1 (a negative "modelled [s]"), the flops were cut at 0 unsaid, and main->solve, whose
    # amounts were all cut, left the table unsaid
    machine = tmp_path / "m.toml"
    machine.write_text(FALLING_MACHINE)
    _, models = falling()
    with pytest.warns() as said:
        result = whatif(models, machine, target={"p": 2**20})
    texts = [str(w.message) for w in said]
    assert texts == ["main [flop]: " + BELOW.format(value="-1e9"), "main [time]: " + BELOW.format(value="-1"),
                     "main->solve [flop]: " + BELOW.format(value="-1e9"),
                     "main->solve [flop, bytes_sent]: every amount is 0 at p=1048576, the negative ones cut at 0: the "
                     "call path is left out of the what-if"]
    [main] = result.rows
    assert (main.callpath, main.modelled_time, main.amounts) == ("main", 0.0, {"processor": 0.0,
                                                                                "bandwidth": 1000.0 * 2**20})
    assert result.total.modelled_time == 0.0 and result.as_json()["rows"][0]["modelled_time"] == 0.0
    assert main.time == pytest.approx(2**20 * 1000 / 1e9)
    with pytest.warns(ExtrapWarning), pytest.raises(InputError) as refused:
        whatif(models, machine, target={"p": 2**20}, callpaths="main->solve")
    assert str(refused.value) == ("no call path has an amount of flop, bytes_sent above 0 at p=1048576 to predict "
                                  "from")


def test_without_measurements_a_time_below_0_is_cut_and_said_in_its_own_words(tmp_path):
    import dataclasses

    machine = tmp_path / "m.toml"
    machine.write_text(FALLING_MACHINE)
    _, models = falling()
    streamed = dataclasses.replace(models, experiment=None)  # as extrap_plugins.streaming makes them
    with pytest.warns() as said:
        result = whatif(streamed, machine, target={"p": 2**20}, callpaths="main")
    assert [str(w.message) for w in said] == [
        "main [flop]: the model is -1e9 at p=1048576, below 0, which an amount never is: the value given is 0 (do "
        "not trust the model there)",
        "main [time]: the model is -1 at p=1048576, below 0, which a time never is: the value given is 0 (do not "
        "trust the model there)"]
    assert [r.modelled_time for r in result.rows] == [0.0]


def test_a_call_path_without_amounts_is_said_to_be_left_out(tmp_path):
    machine = tmp_path / "m.toml"
    machine.write_text(FALLING_MACHINE)
    experiment, models = falling()
    timed_only = [m for m in models if (m.callpath, m.metric) != ("main->solve", "flop")]
    import dataclasses

    with pytest.warns() as said:
        result = whatif(dataclasses.replace(models, models=timed_only), machine, target={"p": 64})
    assert [str(w.message) for w in said] == ["main->solve [flop, bytes_sent]: no model of an amount: the call path is "
                                              "left out of the what-if"]
    assert [r.callpath for r in result.rows] == ["main"]


def test_cli_whatif_gives_no_negative_time_and_says_why(tmp_path, capsys, monkeypatch):
    import extrap_plugins.api

    experiment, models = falling()
    data = tmp_path / "falling.jsonl"
    names_c, names_m = [c.name for c in experiment.callpaths], [m.name for m in experiment.metrics]
    data.write_text("".join(json.dumps({"params": {"p": p}, "callpath": names_c[c], "metric": names_m[m], "value": v})
                            + "\n" for c, m, (p,), v in zip(experiment.callpath_index, experiment.metric_index,
                                                            experiment.coordinates.tolist(), experiment.value)))
    machine = tmp_path / "m.toml"
    machine.write_text(FALLING_MACHINE)
    monkeypatch.setattr(extrap_plugins.api, "model", lambda *args, **kwargs: models)  # these models, whatever fits
    status = main(["whatif", str(data), "--machine", str(machine), "--target", "p=1048576", "--export", "json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    document = json.loads(out)
    assert [(r["callpath"], r["modelled_time"], r["amounts"]["processor"]) for r in document["rows"]] == [
        ("main", 0.0, 0.0)]
    assert err.splitlines() == [
        "extrap-plugins: warning: main [flop] and main->solve [flop]: " + BELOW.format(value="-1e9"),
        "extrap-plugins: warning: main [time]: " + BELOW.format(value="-1"),
        "extrap-plugins: warning: main->solve [flop, bytes_sent]: every amount is 0 at p=1048576, the negative ones "
        "cut at 0: the call path is left out of the what-if"]


# ------------------------------------------------------------- arguments of calibrate and whatif
def test_calibrate_reads_a_path_and_a_machine_file_as_whatif_does(tmp_path, machine_file):
    # calibrate(experiment, 'machine.toml') ended in AttributeError: 'str' object has no attribute 'resolved';
    # calibrate('runs.jsonl') in AttributeError: 'str' object has no attribute 'metrics'
    experiment = synthetic()
    data = write_jsonl(experiment, tmp_path / "runs.jsonl")
    given = calibrate(experiment, load_machine(machine_file))
    for source, machine in ((data, machine_file), (experiment, str(machine_file)), ([data], machine_file)):
        again = calibrate(source, machine)
        assert [r.name for r in again.machine.resources] == [r.name for r in given.machine.resources]
        assert [r.value for r in again.machine.resources] == pytest.approx([r.value for r in given.machine.resources],
                                                                           rel=1e-9)
    assert [r.name for r in calibrate(data).machine.resources] == ["processor", "memory", "bandwidth", "latency"]


@pytest.mark.parametrize("call, message", [
    (lambda e, m: calibrate(3, m), "calibrate: expected measurements: an Experiment, a ModelSet of them, or a path "
                                   "(str or os.PathLike) or a list of paths, got the int 3"),
    (lambda e, m: calibrate(e, 3), "calibrate: expected a Machine or the path of a machine file (TOML), got the int 3"),
    (lambda e, m: whatif(e, 3, target="p=256,n=1e5"), "whatif: expected a Machine or the path of a machine file "
                                                      "(TOML), got the int 3"),
    (lambda e, m: whatif(3, m, target="p=256,n=1e5"), "whatif: expected an Experiment, a ModelSet or a path (str or "
                                                      "os.PathLike) or a list of paths, got the int 3"),
    # KeyError: 'avg' (from the reduction of the repetitions)
    (lambda e, m: calibrate(e, m, measure="avg"), "unknown measure 'avg'; expected one of mean, median, minimum, "
                                                  "maximum"),
    (lambda e, m: whatif(e, m, target="p=256,n=1e5", calibrate_rates=True, measure="avg"),
     "unknown measure 'avg'; expected one of mean, median, minimum, maximum"),
    (lambda e, m: whatif(e, m, target="p=256,n=1e5", calibrate_rates=True, callpaths=3),
     "callpaths: expected a name or a list of names, got the int 3"),
], ids=["calibrate-source", "calibrate-machine", "whatif-machine", "whatif-source", "calibrate-measure",
        "whatif-measure", "callpaths"])
def test_a_wrong_argument_is_one_input_error_saying_what_was_expected(machine_file, call, message):
    with pytest.raises(InputError) as refused:
        call(synthetic(), machine_file)
    assert str(refused.value) == message


def test_the_measure_is_refused_in_the_words_of_model():
    from extrap_plugins import model

    with pytest.raises(InputError) as refused:
        model(synthetic(), measure="avg")
    assert str(refused.value) == "unknown measure 'avg'; expected one of mean, median, minimum, maximum"


def test_one_str_of_callpaths_is_one_glob(machine_file):
    # callpaths="main" was taken letter by letter: "nothing to calibrate: no call path has both 'time' and ..."
    experiment = synthetic()
    one = calibrate(experiment, machine_file, callpaths="main")
    assert [f.callpath for f in one.fits] == ["main"]
    target = {"p": 256, "n": 1.6e5}
    as_str = whatif(experiment, machine_file, target=target, calibrate_rates=True, callpaths="main")
    as_list = whatif(experiment, machine_file, target=target, calibrate_rates=True, callpaths=["main"])
    assert [r.callpath for r in as_str.rows] == ["main"] and as_str.total.time == as_list.total.time
    assert [f.callpath for f in as_str.calibration.fits] == ["main"]


# ------------------------------------------------ a rate the measured times do not identify
def compute_bound(bytes_share: float = 0.0, noise: float = 0.0, seed: int = 3) -> Experiment:
    """Times (± noise) of 50 · n flop at 2e9/s and 1000 · p bytes sent at 32000 / (bytes_share · 2.5e-4) per
    second: ``bytes_share`` of the smallest time where the most bytes are sent (p = 32, n = 1e4)."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in (2, 4, 8, 16, 32):
        for n in (1e4, 2e4, 4e4, 8e4, 1.6e5):
            flop, sent = 50 * n, 1000.0 * p
            seconds = (flop / 2e9 + bytes_share * 2.5e-4 * sent / 32000) * (1 + rng.uniform(-noise, noise))
            rows += [("main", "flop", p, n, flop), ("main", "bytes_sent", p, n, sent), ("main", "time", p, n, seconds)]
    callpath, metric, p, n, value = zip(*rows)
    return Experiment.from_columns(["p", "n"], callpath=list(callpath), metric=list(metric), coordinates=np.c_[p, n],
                                   value=list(value), source="compute.jsonl")


TWO_RATES = '[rates]\nprocessor = { metric = "flop" }\nbandwidth = { metric = "bytes_sent" }\n'
UNIDENTIFIED = ("machine resource 'bandwidth' (bytes_sent): the measured times do not identify its rate ({why}); it "
                "is taken to cost no time and a saved machine leaves it out")


def test_a_rate_the_times_do_not_show_is_not_identified_not_a_number(tmp_path, capsys):
    # exact times of the flops alone: the bandwidth's fitted cost was a rounding's worth, 1.6e24 /s, printed and
    # saved as a rate
    data = write_jsonl(compute_bound(), tmp_path / "compute.jsonl")
    machine, saved = tmp_path / "m.toml", tmp_path / "saved.toml"
    machine.write_text(TWO_RATES)
    status = main(["whatif", data, "--machine", str(machine), "--calibrate", "--target", "p=256,n=1e6",
                   "--save-machine", str(saved)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out.splitlines()[0] == "machine: processor (flop) 2e+09 /s, bandwidth (bytes_sent) not identified (taken to " \
                                  "cost no time)"
    [warning] = err.splitlines()
    assert re.fullmatch(re.escape("extrap-plugins: warning: " + UNIDENTIFIED.format(why="@")).replace(
        "@", r"its fitted cost is at most \d\.\de-1\d of any measured time"), warning), warning
    text = saved.read_text()
    assert re.search(r'^# bandwidth = \{ metric = "bytes_sent" \} is left out: the measured times do not identify its '
                     r"rate \(its fitted cost is at most \d\.\de-1\d of any measured time\)$", text, re.M), text
    again = load_machine(saved)
    assert [(r.name, r.value) for r in again.resources] == [("processor", pytest.approx(2e9))]


def test_improving_a_resource_that_is_not_identified_buys_an_unknown_speedup_not_1(tmp_path, capsys):
    # its cost is unknown, so is what improving it buys: the table said 1 (no gain)
    data = write_jsonl(compute_bound(), tmp_path / "compute.jsonl")
    machine = tmp_path / "m.toml"
    machine.write_text(TWO_RATES)
    status = main(["whatif", data, "--machine", str(machine), "--calibrate", "--target", "p=256,n=1e6"])
    out, err = capsys.readouterr()
    assert status == 0, err
    lines = out.splitlines()
    header = [line for line in lines if line.startswith("call path")][-1]  # the calibration's table comes first
    assert re.split(r"\s{2,}", header)[-3:] == ["processor ×4", "bandwidth ×4", "all 4×"]
    [total] = [line for line in lines if line.startswith("total ")]
    assert re.split(r"\s{2,}", total)[-3:] == ["4", "–", "4"]
    assert lines[-2].endswith("improved (–: a resource the times do not identify)")
    assert lines[-1] == "total: the sum of the root call paths (inclusive values)"
    with pytest.warns(ExtrapWarning):
        result = whatif(compute_bound(), str(machine), target="p=256,n=1e6", calibrate_rates=True)
    row = result.as_json()["total"]
    assert (row["speedups"]["processor"], row["speedups"]["bandwidth"]) == (pytest.approx(4.0), None)
    table = list(csv.DictReader(io.StringIO(result.render("csv"))))
    assert (table[-1]["speedup_bandwidth"], float(table[-1]["speedup_processor"])) == ("", pytest.approx(4.0))


def test_a_rate_of_no_fitted_cost_is_not_identified(machine_file):
    # the times shrink as the bytes grow: the bandwidth's cost is 0 at best (it was an infinite rate, saved)
    experiment = compute_bound(bytes_share=-0.01)
    machine = Machine((Resource("processor", "rate", ("flop",)), Resource("bandwidth", "rate", ("bytes_sent",))))
    with pytest.warns() as said:
        result = calibrate(experiment, machine)
    assert [str(w.message) for w in said] == [UNIDENTIFIED.format(why="its fitted cost is 0")]
    bandwidth = result.machine["bandwidth"]
    assert (bandwidth.value, bandwidth.unidentified) == (math.inf, "its fitted cost is 0")
    assert result.machine.as_json()["resources"][1]["identified"] is False
    assert not re.search("^bandwidth", result.machine.toml(), re.M)


def test_a_rate_not_significantly_above_0_is_not_identified_and_the_rest_fitted_again():
    # 1 % noise hides a bandwidth cost of at most 0.02 % of a time
    experiment = compute_bound(bytes_share=2e-4, noise=0.01, seed=1)
    machine = Machine((Resource("processor", "rate", ("flop",)), Resource("bandwidth", "rate", ("bytes_sent",))))
    with pytest.warns() as said:
        result = calibrate(experiment, machine)
    [message] = [str(w.message) for w in said]
    why = (r"its fitted share of the measured times, at most 0\.\d\d%, is not significantly above 0: t = 0\.\d\d < "
           r"1\.71 \(one-sided 95%, 23 degrees of freedom\)")
    assert re.fullmatch(re.escape(UNIDENTIFIED.format(why="@")).replace("@", why), message), message
    assert result.machine["bandwidth"].unidentified is not None
    alone = calibrate(experiment, Machine((Resource("processor", "rate", ("flop",)),)))
    assert result.machine["processor"].value == alone.machine["processor"].value  # fitted without the bandwidth


def test_identified_rates_are_kept_and_said_to_be():
    experiment = compute_bound(bytes_share=0.3, noise=0.01)
    machine = Machine((Resource("processor", "rate", ("flop",)), Resource("bandwidth", "rate", ("bytes_sent",))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = calibrate(experiment, machine)
    assert [r.unidentified for r in result.machine.resources] == [None, None]
    assert result.machine["bandwidth"].value == pytest.approx(32000 / (0.3 * 2.5e-4), rel=0.1)
    assert [r["identified"] for r in result.machine.as_json()["resources"]] == [True, True]


def test_what_reading_warned_of_is_in_the_json_text_and_html_reports_also_of_models_given(tmp_path):
    """A value left out while reading was said on stderr alone: the JSON a pipeline keeps said nothing of it."""
    path, machine = tmp_path / "runs.jsonl", tmp_path / "machine.toml"
    said = measured(path)
    machine.write_text(MACHINE)
    with pytest.warns(ExtrapWarning):  # (and the model's own, of the point left out)
        models = extrap_plugins.model(extrap_plugins.read(path), executor="serial")
        results = [whatif(source, machine, target="p=64,n=100") for source in (str(path), models)]
    for result in results:
        assert result.reading_warnings == [said]
        assert json.loads(result.render("json"))["reading_warnings"] == [said]
        assert result.render("text").endswith(f"\n\nwarnings on reading:\n  {said}\n")
        assert f'<p class="note">warnings on reading: {html.escape(said)}</p>' in result.render("html")


def test_what_the_reader_noted_is_in_the_json_text_and_html_reports_also_of_models_given(tmp_path):
    """A key the reader leaves unread is said in its notes alone (no warning): the what-if's JSON and reports said
    nothing of how the measurements were read.  The notes come before what reading warned of."""
    path, machine = tmp_path / "runs.jsonl", tmp_path / "machine.toml"
    note, said = noted(path, nan=True)
    machine.write_text(MACHINE)
    with pytest.warns(ExtrapWarning):  # (the value left out, and the model's own of it)
        models = extrap_plugins.model(extrap_plugins.read(path), executor="serial")
        results = [whatif(source, machine, target="p=64,n=100") for source in (str(path), models)]
    for result in results:
        assert (result.reading_notes, result.reading_warnings) == ([note], [said])
        document = json.loads(result.render("json"))
        assert (document["version"], document["reading_notes"]) == (1, [note])
        assert list(document).index("reading_notes") + 1 == list(document).index("reading_warnings")
        assert result.render("text").endswith(f"\n\nnotes on reading:\n  {note}\n\nwarnings on reading:\n  {said}\n")
        assert (f'<p class="note">notes on reading: {html.escape(note)}</p>\n'
                f'<p class="note">warnings on reading: {html.escape(said)}</p>') in result.render("html")
