"""The co-design answers in the units and places a co-design engineer meets them: a memory footprint recorded in
KiB, an upgrade beyond what the memory holds, a resource the calibration did not identify scaled by --scale, and a
machine or system file with a typo (found by a co-design engineer's third round)."""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import pytest

from extrap_plugins import Experiment, InputError
from extrap_plugins.cli import main
from extrap_plugins.codesign import System, load_system, requirements
from extrap_plugins.errors import ExtrapWarning
from extrap_plugins.experiment import Metric
from extrap_plugins.machine import load_machine, whatif


def run(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def application(memory_unit: str = "bytes") -> Experiment:
    """main: memory 1000 + 8 · n + p (in ``memory_unit``), 50 · n flop, on 5 × 5 points."""
    rows = [(p, n, metric, value) for p in (2, 4, 8, 16, 32) for n in (1000, 2000, 4000, 8000, 16000)
            for metric, value in (("memory", 1000.0 + 8 * n + p), ("flop", 50.0 * n))]
    p, n, metric, value = zip(*rows)
    return Experiment.from_columns(["p", "n"], callpath="main", metric=list(metric), coordinates=np.c_[p, n],
                                   value=list(value), metrics=[Metric("memory", memory_unit)], source="app.jsonl")


# --------------------------------------------------------------------------- requirements
def test_a_memory_recorded_in_kib_fills_the_memory_in_kib():
    # the unit was not read: 2 GiB were taken for 2 GiB of KiB, the problem size per process 1024x too large
    system = System.of(65536, "2 GiB")
    in_bytes = requirements({"app": application("bytes")}, system, "more=processes:2x")
    in_kib = requirements({"app": application("KiB")}, system, "more=processes:2x")
    assert in_bytes.rows[0].old["problem_size_per_process"] == pytest.approx((2**31 - 1000 - 65536) / 8)
    assert in_kib.rows[0].old["problem_size_per_process"] == pytest.approx((2**21 - 1000 - 65536) / 8)
    assert in_kib.rows[0].old["memory"] == pytest.approx(2**31)  # bytes, as the system's memory
    assert in_kib.rows[0].new["problem_size_per_process"] == pytest.approx((2**21 - 1000 - 131072) / 8)


def test_a_memory_metric_in_a_unit_that_is_no_size_is_refused():
    with pytest.raises(InputError) as caught:
        requirements({"app": application("sec")}, System.of(65536, "2 GiB"), "more=processes:2x")
    assert str(caught.value) == ("application 'app': the memory metric 'memory' is in 'sec', not in bytes (or KiB, "
                                 "MB, ...), so it cannot fill the memory per process; name a metric of bytes with "
                                 "--role memory=METRIC")


def test_memory_that_an_upgrade_cannot_hold_names_the_upgrade():
    # the message blamed "the 2 GiB per process the system has", which holds the application; the upgrade does not
    with pytest.raises(InputError) as caught:
        requirements({"app": application()}, System.of(65536, "2 GiB"), "huge=processes:1e10")
    assert str(caught.value) == ("application 'app': the memory model needs 1e+10 bytes per process already at "
                                 "n = 1, more than the 2 GiB per process of upgrade 'huge' (10000000000 processes)")


# ------------------------------------------------------------------------------- what-if
TWO_RATES = '[rates]\nprocessor = { metric = "flop" }\nbandwidth = { metric = "bytes_sent" }\n'


def compute_bound() -> Experiment:
    """Exact times of 50 · n flop at 2e9/s; 1000 · p bytes sent cost nothing (the bandwidth is not identified)."""
    rows = []
    for p in (2, 4, 8, 16, 32):
        for n in (1e4, 2e4, 4e4, 8e4, 1.6e5):
            rows += [("flop", p, n, 50 * n), ("bytes_sent", p, n, 1000.0 * p), ("time", p, n, 50 * n / 2e9)]
    metric, p, n, value = zip(*rows)
    return Experiment.from_columns(["p", "n"], callpath="main", metric=list(metric), coordinates=np.c_[p, n],
                                   value=list(value), source="compute.jsonl")


def test_scaling_a_resource_that_is_not_identified_buys_an_unknown_speedup_not_1(tmp_path):
    # as in the sensitivity columns: its cost is unknown, so is the time with it changed (it read 1: no gain)
    machine = tmp_path / "m.toml"
    machine.write_text(TWO_RATES)
    with pytest.warns(ExtrapWarning):
        result = whatif(compute_bound(), str(machine), target="p=256,n=1e6", calibrate_rates=True,
                        scale="bandwidth=4x")
    total = result.as_json()["total"]
    assert (total["scaled_time"], total["speedup"]) == (None, None)
    assert total["time"] == pytest.approx(50 * 1e6 / 2e9)
    [total_line] = [line for line in result.text().splitlines() if line.startswith("total ")]
    assert re.split(r"\s{2,}", total_line)[:5] == ["total", "0.025", "0.025", "–", "–"]
    table = list(csv.DictReader(io.StringIO(result.render("csv"))))
    assert (table[-1]["scaled_time"], table[-1]["speedup"]) == ("", "")
    with pytest.warns(ExtrapWarning):
        known = whatif(compute_bound(), str(machine), target="p=256,n=1e6", calibrate_rates=True,
                       scale="processor=4x")
    assert known.total.speedup == pytest.approx(4.0)


# --------------------------------------------------------------------------- file typos
def test_a_machine_file_with_a_typo_is_one_line_exit_2_naming_file_and_line(tmp_path, capsys):
    machine = tmp_path / "m.toml"
    machine.write_text('[rates]\nprocessor = { metric = "flop", rate = 2e9 }\nbandwidth = { metric = "bytes_sent",'
                       ' rate = 1e9 ]\n')
    data = tmp_path / "app.csv"
    data.write_text("p,n,value\n2,10,1\n")
    status, out, err = run(["whatif", str(data), "--machine", str(machine), "--target", "p=4,n=10"], capsys)
    assert (status, out) == (2, "")
    assert err == f"extrap-plugins: error: {machine}:3: not valid TOML: Unclosed inline table (column 49)\n"


@pytest.mark.parametrize("load, text, message", [
    # a TOML typo names its line, as every error does
    (load_machine, '[rates]\nprocessor = { metric = "flop" rate = 2e9 }\n',
     "2: not valid TOML: Unclosed inline table (column 31)"),
    (load_system, '[system]\nprocesses = 64\nmemory_per_process = 2 GiB\n',
     "3: not valid TOML: Expected newline or end of document after a statement (column 24)"),
    # a wrong value names its line too (it named the table and key only)
    (load_machine, '[machine]\nname = "A"\n\n[rates]\nprocessor = { metric = "flop", rate = 2e9 }\n'
                   'bandwidth = { metric = "bytes_sent", rate = -1e9 }\n',
     "6: [rates] bandwidth: rate must be a positive number, got -1000000000.0"),
    (load_machine, '[rates]\nprocessor = 2e9\n[latencies]\nlatency = { metric = "messages_sent", rate = 5e-6 }\n',
     "4: [latencies] latency: unknown key 'rate'; expected metric and seconds"),
    (load_machine, '[rates.processor]\nmetric = "flop"\nrate = "2 GFlop/s"\n',
     "1: [rates] processor: rate must be a positive number, got '2 GFlop/s'"),
    (load_machine, '[machine]\nname = "A"\nnodes = 4\n[rates]\nprocessor = 2e9\n',
     "3: [machine] has no key 'nodes'; its one key is name"),
    (load_machine, '[rates]\nprocessor = 2e9\n[latencies]\nprocessor = 1e-6\n',
     "4: resource 'processor' is both a rate and a latency"),
    (load_machine, 'rates = 3\n', '1: [rates] must be a table of NAME = { metric = "...", rate = NUMBER }'),
    (load_system, '[system]\nprocesses = 64\nmemory_per_process = "2 GB"\n[upgrades]\n"double the racks" = '
                  '{ processes = "2x" }\n"more memory" = { memory_per_process = "2 GiBx" }\n',
     "6: upgrade 'more memory', memory_per_process: expected a positive number, a size such as \"2 GiB\", or a "
     "factor such as \"2x\", got '2 GiBx'"),
    (load_system, '[system]\nprocesses = 64\n\nmemory_per_process = "-2 GB"\n',
     "4: [system] memory_per_process: expected a positive number, a size such as \"2 GiB\", got '-2 GB'"),
    (load_system, '# the machine\n[system]\nprocesses = 64\nracks = 4\nmemory_per_process = "2 GB"\n',
     "2: [system] gives processes and racks: give the process count or the structure, not both"),
])
def test_a_typo_or_a_wrong_value_in_a_machine_or_system_file_names_its_line(tmp_path, load, text, message):
    # the message named the table and key but not the line, as every other file error does (FILE:LINE: ...)
    path = tmp_path / "file.toml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load(path)
    assert str(caught.value) == f"{path}:{message}"


def test_an_upgrade_of_the_system_file_that_cannot_apply_names_its_line(tmp_path, capsys):
    system = tmp_path / "s.toml"
    system.write_text('[system]\nprocesses = 64\nmemory_per_process = "2 GiB"\n[upgrades]\n'
                      '"double the racks" = { processes = "2x" }\n"more racks" = { racks = "2x" }\n')
    with pytest.raises(InputError) as caught:
        requirements({"app": application()}, str(system))
    assert str(caught.value) == (f"{system}:6: upgrade 'more racks' changes racks, which the system does not give; "
                                 f"the system gives processes, memory_per_process")
    system.write_text('[system]\nprocesses = 64\nmemory_per_process = "2 GiB"\n[upgrades]\nsame = { processes = "1x" }\n')
    with pytest.raises(InputError) as caught:
        requirements({"app": application()}, str(system))
    assert str(caught.value) == (f"{system}:5: upgrade 'same' changes nothing: the system keeps 64 processes and "
                                 f"2 GiB per process")


def test_a_count_that_is_no_whole_number_is_refused(tmp_path, capsys):
    # processes:2.5 (meant: 2.5x) was a system of 2.5 processes: every ratio 3.8e-05, and a verdict
    data = tmp_path / "app.csv"
    data.write_text("p,n,metric,value\n" + "".join(f"{p},{n},memory,{1000 + 8 * n + p}\n"
                                                   for p in (2, 4, 8, 16, 32) for n in (1000, 2000, 4000, 8000, 16000)))
    system = tmp_path / "s.toml"
    system.write_text('[system]\nprocesses = 64\nmemory_per_process = "2 GiB"\n')
    status, out, err = run(["requirements", str(data), "--system", str(system), "--upgrade", "more=processes:2.5"],
                           capsys)
    assert (status, out) == (2, "")
    assert err == ("extrap-plugins: error: --upgrade more: upgrade 'more', processes: a count is a whole number, got "
                   "'2.5' (a factor is written \"2.5x\")\n")
    system.write_text('[system]\nracks = 4.5\nmemory_per_process = "2 GiB"\n')
    with pytest.raises(InputError) as caught:
        load_system(system)
    assert str(caught.value) == f"{system}:2: [system] racks: a count is a whole number, got 4.5"
    system.write_text('[system]\ncores_per_socket = 24\nprocesses_per_core = 0.25\nmemory_per_socket = "96 GiB"\n')
    assert load_system(system)[0].processes == 6  # a process on 4 cores
