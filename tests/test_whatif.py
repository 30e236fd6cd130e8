"""Machine profiles, calibration by non-negative least squares, and what-if predictions (seed 003)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from extrap_plugins import Experiment, InputError
from extrap_plugins.cli import main
from extrap_plugins.machine import calibrate, load_machine, parse_scale, whatif

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
    assert str(caught.value) == f"{path}: [rates] processor: rate must be a positive number, got -1"


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
