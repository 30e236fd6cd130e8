"""Every executor gives the same models, bit for bit, in the same order."""

import concurrent.futures as cf

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import executors
from extrap_plugins.api import CHUNK_SERIES


def synthetic(n_series=2 * CHUNK_SERIES + 7):
    rng = np.random.default_rng(1)
    p = np.array([2.0, 4, 8, 16, 32, 64])
    a, b = rng.uniform(1, 10, n_series), rng.uniform(0.1, 2, n_series)
    values = a[:, None] + b[:, None] * p * np.log2(p) * rng.uniform(0.98, 1.02, (n_series, p.size))
    return extrap_plugins.Experiment.from_columns(
        ["p"], callpath=np.repeat([f"main->k{i}" for i in range(n_series)], p.size), metric="time",
        coordinates=np.tile(p, n_series)[:, None], value=values.reshape(-1))


def test_serial_and_process_give_identical_json(host):
    experiment = synthetic()
    serial = extrap_plugins.export(extrap_plugins.model(experiment, executor="serial"), "json")
    process = extrap_plugins.export(extrap_plugins.model(experiment, executor="process", jobs=2), "json")
    assert serial == process
    assert serial.count('"callpath"') == len(experiment.callpaths)


def test_auto_uses_processes_only_for_enough_work(monkeypatch):
    monkeypatch.setattr(executors, "available_cores", lambda: 2)
    assert executors.resolve("auto", 1) == "serial"
    assert executors.resolve("auto", 100) == "process"
    monkeypatch.setattr(executors, "available_cores", lambda: 1)
    assert executors.resolve("auto", 100) == "serial"


def test_mpi_without_a_pool_says_how_to_start_it():
    with pytest.raises(extrap_plugins.InputError) as error:
        executors.create_executor("mpi")
    assert "mpiexec -n N python -m mpi4py.futures -m extrap_plugins model ..." in str(error.value)


def test_map_ordered_keeps_order_and_reports_progress():
    seen = []
    with executors.SerialExecutor() as pool:
        assert list(executors.map_ordered(pool, lambda x: x * x, [3, 1, 2], on_done=seen.append)) == [9, 1, 4]
    assert sorted(seen) == [1, 4, 9]


def test_an_error_in_a_piece_of_work_reaches_the_caller():
    def fail(x):
        raise ValueError(f"bad {x}")

    with executors.SerialExecutor() as pool, pytest.raises(ValueError, match="bad 1"):
        list(executors.map_ordered(pool, fail, [1]))


def test_mpi_pool_gives_the_same_json_as_serial(tmp_path):
    import os
    import pathlib
    import shutil
    import subprocess
    import sys

    pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
    mpiexec = pathlib.Path(sys.executable).with_name("mpiexec")
    if not mpiexec.exists():
        mpiexec = shutil.which("mpiexec")
    assert mpiexec, "mpi4py is installed but no mpiexec was found"
    root = pathlib.Path(__file__).resolve().parents[1]
    example = root / "examples" / "stencil.jsonl"
    env = {**os.environ, "EXTRAP_PLUGINS_NO_AUTOLOAD": "1"}
    common = ["model", str(example), "--export", "json"]
    serial = subprocess.run([sys.executable, "-m", "extrap_plugins", *common, "--executor", "serial"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert serial.returncode == 0, serial.stderr
    mpi = subprocess.run([str(mpiexec), "-n", "3", sys.executable, "-m", "mpi4py.futures", "-m", "extrap_plugins",
                          *common, "--executor", "mpi"], capture_output=True, text=True, env=env, timeout=300)
    assert mpi.returncode == 0, mpi.stderr
    assert mpi.stdout == serial.stdout
    plain = subprocess.run([str(mpiexec), "-n", "2", sys.executable, "-m", "extrap_plugins", *common,
                            "--executor", "mpi"], capture_output=True, text=True, env=env, timeout=120)
    assert plain.returncode == 2
    assert "start the command as 'mpiexec -n N python -m mpi4py.futures -m extrap_plugins model ...'" in plain.stderr
