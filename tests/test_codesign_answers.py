"""The co-design answers as a new user meets them: what requirements, whatif and compare print must mean what
their labels say, and bad input is one line and exit status 2 (found by a user's hunt through the answers)."""

from __future__ import annotations

import csv
import json
import math
import warnings

import pytest

import extrap_plugins
from extrap_plugins import InputError
from extrap_plugins.cli import main
from extrap_plugins.errors import ExtrapWarning

SYSTEM = """\
[system]
processes = 65536
memory_per_process = "2 GiB"
[upgrades]
"double the racks"   = { processes = "2x" }
"double the sockets" = { processes = "2x", memory_per_process = "0.5x" }
"double the memory"  = { memory_per_process = "2x" }
"""


def write_csv(path, rows, parameters=("p", "n")) -> str:
    """``rows``: (point, call path, metric, value)."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*parameters, "callpath", "metric", "value"])
        for point, callpath, metric, value in rows:
            writer.writerow([*point, callpath, metric, value])
    return str(path)


def grid(functions, ps=(2, 4, 8, 16, 32), ns=(1000, 2000, 4000, 8000, 16000)):
    """``functions``: {(call path, metric): f(p, n)} on every point."""
    return [((p, n), callpath, metric, f(p, n)) for p in ps for n in ns for (callpath, metric), f in functions.items()]


@pytest.fixture
def system_file(tmp_path):
    path = tmp_path / "system.toml"
    path.write_text(SYSTEM)
    return str(path)


def run(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# --------------------------------------------------------------------------- requirements
def test_a_requirement_model_below_0_is_no_ratio_and_is_said_once(tmp_path, system_file, capsys):
    # bytes_sent falls linearly with p: its exact model is -1.31e9 at 65,536 processes and -2.62e9 at twice that;
    # the table printed their ratio, "2 (4)": the communication doubling, from two impossible values
    app = write_csv(tmp_path / "app.csv", grid({("main", "bytes_used"): lambda p, n: 16 * n + 100,
                                                ("main", "flop"): lambda p, n: 100 * n,
                                                ("main", "bytes_sent"): lambda p, n: 1e6 - 2e4 * p}))
    status, out, err = run(["requirements", app, "--system", system_file, "--modeler", "exhaustive"], capsys)
    assert status == 0, err
    assert [line.split() for line in out.splitlines() if line.startswith("communication")] == [
        ["communication", "–", "(–)"]] * 3
    assert err.count("warning") == 1 and err.count("\n") == 1
    assert err == ("extrap-plugins: warning: main [bytes_sent]: the model is -1.31e9 at p=65536, n=1.342e8 (the "
                   "system, and 3 more), below 0, which a requirement never is: it is taken as 0 there, and the "
                   "ratios of communication are not given (–) for the upgrades it touches (do not trust the model "
                   "there)\n")
    status, out, err = run(["requirements", app, "--system", system_file, "--modeler", "exhaustive",
                            "--export", "json"], capsys)
    rows = json.loads(out)["rows"]
    assert [r["requirements"]["communication"] for r in rows] == [None] * 3
    assert [r["requirements_total"]["communication"] for r in rows] == [None] * 3
    assert rows[0]["old"]["communication"] == 0 and rows[0]["requirements"]["computation"] == pytest.approx(1.0)


def test_ranking_by_a_role_whose_ratio_is_unknown_marks_no_upgrade(tmp_path, system_file, capsys):
    app = write_csv(tmp_path / "app.csv", grid({("main", "bytes_used"): lambda p, n: 16 * n + 100,
                                                ("main", "bytes_sent"): lambda p, n: 1e6 - 2e4 * p}))
    status, out, err = run(["requirements", app, "--system", system_file, "--modeler", "exhaustive",
                            "--rank-by", "communication", "--export", "json"], capsys)
    assert status == 0, err
    assert [(r["best"], r["worst"]) for r in json.loads(out)["rows"]] == [(False, False)] * 3


def test_exclusive_values_sum_every_call_path(tmp_path, system_file, capsys):
    # the root's exclusive memory (100 bytes) was taken for the whole program's: "the memory model does not depend
    # on the problem size per process 'n'", exit 2, though the program's memory is 100 + 24 n + 64 p
    app = write_csv(tmp_path / "excl.csv", grid({
        ("main", "bytes_used"): lambda p, n: 100, ("main->a", "bytes_used"): lambda p, n: 16 * n,
        ("main->b", "bytes_used"): lambda p, n: 8 * n + 64 * p,
        ("main", "flop"): lambda p, n: 10, ("main->a", "flop"): lambda p, n: 100 * n,
        ("main->b", "flop"): lambda p, n: 50 * n * p}))
    status, out, err = run(["requirements", app, "--system", system_file, "--export", "json"], capsys)
    assert status == 0, err
    document = json.loads(out)
    assert document["models"]["excl"]["memory"] == ["main [bytes_used]: 100", "main->a [bytes_used]: 16 · n",
                                                     "main->b [bytes_used]: 8 · n + 64 · p"]
    racks = document["rows"][0]
    n_old = (2**31 - 100 - 64 * 65536) / 24  # memory(p, n) = 2 GiB
    n_new = (2**31 - 100 - 64 * 131072) / 24
    assert racks["old"]["problem_size_per_process"] == pytest.approx(n_old, rel=1e-9)
    assert racks["problem_size_per_process"] == pytest.approx(n_new / n_old, rel=1e-9)


def test_a_process_count_takes_no_unit(tmp_path, capsys):
    # processes = "2 GiB" was 2,147,483,648 processes
    app = write_csv(tmp_path / "app.csv", grid({("main", "bytes_used"): lambda p, n: 16 * n}))
    system = tmp_path / "s.toml"
    system.write_text('[system]\nprocesses = "2 GiB"\nmemory_per_process = "2 GiB"\n[upgrades]\na = { processes = "2x" }\n')
    status, out, err = run(["requirements", app, "--system", str(system)], capsys)
    assert status == 2 and out == ""
    assert err == (f"extrap-plugins: error: {system}:2: [system] processes: expected a positive number (a count, "
                   f"without a unit), got '2 GiB'\n")
    system.write_text('[system]\nracks = 4\nmemory_per_process = "2 GiB"\n[upgrades]\na = { racks = "8 MB" }\n')
    status, out, err = run(["requirements", app, "--system", str(system)], capsys)
    assert status == 2
    assert err == (f"extrap-plugins: error: {system}:5: upgrade 'a', racks: expected a positive number (a count, "
                   f"without a unit), or a factor such as \"2x\", got '8 MB'\n")


def test_a_system_of_the_wrong_kind_is_an_input_error():
    # requirements(apps, 5): TypeError from pathlib
    with pytest.raises(InputError) as caught:
        extrap_plugins.requirements({"a": "a.csv"}, 5)
    assert str(caught.value) == ("requirements: expected a System or the path of a system file (TOML), got the "
                                 "int 5")


# --------------------------------------------------------------------------------- whatif
def test_the_total_of_exclusive_values_sums_every_call_path(tmp_path, capsys):
    # the total was the root's own (exclusive) time: main alone, a fraction of the program
    app = write_csv(tmp_path / "excl.csv", grid({
        ("main", "flop"): lambda p, n: 1e3 * n, ("main->a", "flop"): lambda p, n: 4e3 * n,
        ("main", "time"): lambda p, n: 1e3 * n / 1e9, ("main->a", "time"): lambda p, n: 4e3 * n / 1e9}))
    machine = tmp_path / "m.toml"
    machine.write_text('[rates]\nprocessor = { metric = "flop", rate = 1e9 }\n')
    status, out, err = run(["whatif", app, "--machine", str(machine), "--target", "p=64,n=32000"], capsys)
    assert status == 0, err
    lines = out.splitlines()
    [total] = [line.split() for line in lines if line.startswith("total ")]
    assert [float(v) for v in total[1:3]] == [pytest.approx(0.16), pytest.approx(0.16)]  # 5e3 · 32000 / 1e9
    assert lines[-1] == "total: the sum of every call path (exclusive values)"
    status, out, err = run(["whatif", app, "--machine", str(machine), "--target", "p=64,n=32000", "--export",
                            "json"], capsys)
    document = json.loads(out)
    assert document["values"] == {"flop": "exclusive", "time": "exclusive"}
    assert document["total"]["time"] == pytest.approx(0.16) and document["total"]["amounts"] == {
        "processor": pytest.approx(1.6e8)}


def test_an_unknown_key_of_the_machine_table_is_refused(tmp_path, capsys):
    # a misspelt name (nmae) was ignored
    machine = tmp_path / "m.toml"
    machine.write_text('[machine]\nnmae = "cluster"\n[rates]\nprocessor = 2e9\n')
    with pytest.raises(InputError) as caught:
        extrap_plugins.machine.load_machine(machine)
    assert str(caught.value) == f"{machine}:2: [machine] has no key 'nmae'; its one key is name"


@pytest.mark.parametrize("metric, message", [
    ("flop+flop", "metric 'flop' is named twice in 'flop+flop', so its amount would count twice; name each metric "
                  "once"),
    ("flop+", "metric must be a metric name (or names joined by +), got 'flop+'"),
])
def test_a_metric_summed_twice_or_an_empty_one_is_refused(tmp_path, metric, message):
    # flop+flop doubled the amount, and halved the rate a calibration found
    machine = tmp_path / "m.toml"
    machine.write_text(f'[rates]\nprocessor = {{ metric = "{metric}", rate = 2e9 }}\n')
    with pytest.raises(InputError) as caught:
        extrap_plugins.machine.load_machine(machine)
    assert str(caught.value) == f"{machine}:2: [rates] processor: {message}"


# -------------------------------------------------------------------------------- compare
def test_a_ratio_at_the_largest_common_point_is_never_of_a_value_below_0(tmp_path, capsys):
    # B, measured from p=64 on, is -290 + 50·log2(p): -40 at A's largest p=32; "B/A now" read -0.9524 beside a
    # "B/A target" of 0 at the very same point
    a = write_csv(tmp_path / "a.csv", [((p,), "main", "time", 10 + p) for p in (2, 4, 8, 16, 32)], ("p",))
    b = write_csv(tmp_path / "b.csv", [((p,), "main", "time", -290 + 50 * math.log2(p))
                                       for p in (64, 128, 256, 512, 1024)], ("p",))
    for target in ([], ["--target", "p=2048"]):
        status, out, err = run(["compare", a, b, "--export", "json", *target], capsys)
        assert status == 0, err
        [pair] = json.loads(out)["pairs"]
        assert (pair["value_b_largest"], pair["ratio_largest"]) == (0.0, 0.0)
        assert err.count("the model is -40 at p=32, below 0") == 1


def test_a_rule_with_more_stars_in_b_is_refused_where_it_is_written(tmp_path, capsys):
    # said after the modelling, without the mapping file's name and line
    a = write_csv(tmp_path / "a.csv", [((p,), "main->x", "time", p) for p in (2, 4, 8, 16, 32)], ("p",))
    mapping = tmp_path / "map.csv"
    mapping.write_text("# rules\nmain->*,main->*_kernel*\n")
    status, out, err = run(["compare", a, a, "--map", str(mapping)], capsys)
    assert status == 2 and out == ""
    assert err == (f"extrap-plugins: error: {mapping}:2: B's call path main->*_kernel* has more '*' than A's "
                   f"main->*: each '*' of B takes the text of one '*' of A\n")
    status, out, err = run(["compare", a, a, "--map-rule", "x=*"], capsys)
    assert status == 2
    assert err == ("extrap-plugins: error: mapping rule 'x=*': B's call path * has more '*' than A's x: each '*' of "
                   "B takes the text of one '*' of A\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExtrapWarning)  # refused before any modelling
        with pytest.raises(InputError):
            extrap_plugins.compare(a, a, rules="main->*=*->*")
