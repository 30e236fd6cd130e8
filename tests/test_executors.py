"""Every executor gives the same models, bit for bit, in the same order; dead workers end the work clearly."""

import concurrent.futures as cf
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import executors
from extrap_plugins.engine import CHUNK_SERIES
from extrap_plugins.errors import ExitStatus


def synthetic(n_series=2 * CHUNK_SERIES + 7):
    rng = np.random.default_rng(1)
    p = np.array([2.0, 4, 8, 16, 32, 64])
    a, b = rng.uniform(1, 10, n_series), rng.uniform(0.1, 2, n_series)
    values = a[:, None] + b[:, None] * p * np.log2(p) * rng.uniform(0.98, 1.02, (n_series, p.size))
    return extrap_plugins.Experiment.from_columns(
        ["p"], callpath=np.repeat([f"main->k{i}" for i in range(n_series)], p.size), metric="time",
        coordinates=np.tile(p, n_series)[:, None], value=values.reshape(-1))


@pytest.mark.slow
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
    pytest.importorskip("mpi4py", reason="the mpi extra is not installed (pip install -e '.[test,mpi]')")
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


def test_ctrl_c_in_serial_work_stops_it_at_once():
    # the serial executor kept the KeyboardInterrupt in its future and ran the next piece first: Ctrl-C during
    # `model BIG --executor serial` took effect a whole block later (8 s on a 1,000-call-path CUBE sweep)
    ran = []

    def work(x):
        ran.append(x)
        raise KeyboardInterrupt

    with executors.SerialExecutor() as pool, pytest.raises(KeyboardInterrupt):
        list(executors.map_ordered(pool, work, [1, 2, 3]))
    assert ran == [1]


def test_map_ordered_takes_only_a_window_of_items_ahead():
    pulled = []

    def items():
        for i in range(10):
            pulled.append(i)
            yield i

    with executors.SerialExecutor() as pool:
        results = executors.map_ordered(pool, lambda x: -x, items(), window=2)
        assert next(results) == 0 and pulled == [0, 1]
        assert list(results) == [-i for i in range(1, 10)]


def die(x):
    os._exit(1)


def test_a_dead_worker_process_ends_the_work_with_a_clear_message():
    with executors.create_executor("process", 1) as pool, pytest.raises(executors.WorkerLost) as lost:
        list(executors.map_ordered(pool, die, [1, 2]))
    assert "a worker process died while working" in str(lost.value)
    assert "Try fewer --jobs, --stream on, or --executor serial" in str(lost.value)
    assert not lost.value.mpi


def test_an_interrupt_stops_the_process_pools_workers_instead_of_waiting_for_them():
    """Ctrl-C while ``model --export html`` rendered its figures left the command hanging for good (the pool
    waited for workers that waited for work); now the workers are stopped, and they ignore SIGINT themselves (a
    terminal sends it to every process of the job; the command ends them)."""
    import signal

    if not pathlib.Path("/proc/self").exists():
        pytest.skip("no /proc here to see the workers end")

    def running(pid: int) -> bool:  # (Process.is_alive misreads a worker the pool's own thread has reaped)
        try:
            return pathlib.Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
        except (OSError, IndexError):
            return False

    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with executors.create_executor("process", 2) as pool:
            assert pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN
            pool.submit(time.sleep, 60)
            pids = [worker.pid for worker in pool._processes.values()]
            raise KeyboardInterrupt
    assert time.monotonic() - start < 30  # not the minute the work would take
    assert len(pids) == 2 and not any(running(pid) for pid in pids)


class SilentExecutor(cf.Executor):
    """Accepts work and never finishes it, like a pool whose worker died without its launcher noticing."""

    stall_timeout = 0.2
    lost = False
    _max_workers = 2

    def submit(self, fn, /, *args, **kwargs):
        return cf.Future()


def test_no_progress_for_the_stall_timeout_ends_the_work():
    pool = SilentExecutor()
    start = time.monotonic()
    with pytest.raises(executors.WorkerLost) as lost:
        list(executors.map_ordered(pool, abs, [1, 2, 3]))
    assert 0.2 <= time.monotonic() - start < 5
    assert str(lost.value).startswith("no MPI worker has finished a piece of work for 0.2 s (3 in flight): "
                                      "a worker has died or hangs")
    assert lost.value.mpi and pool.lost


def test_the_stall_timeout_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("EXTRAP_PLUGINS_STALL_TIMEOUT", "2.5")
    assert executors.stall_timeout() == 2.5
    monkeypatch.setenv("EXTRAP_PLUGINS_STALL_TIMEOUT", "soon")
    with pytest.raises(extrap_plugins.InputError, match="must be a number of seconds, got 'soon'"):
        executors.stall_timeout()
    monkeypatch.delenv("EXTRAP_PLUGINS_STALL_TIMEOUT")
    assert executors.stall_timeout() == executors.STALL_TIMEOUT


# ---------------------------------------------------------------- MPI
SYNTHETIC = r'''
"""A synthetic sweep for the MPI tests: 6,000 series (two blocks); run p8.r1 can kill the worker reading it."""
import os
import sys
import types

import numpy as np

import extrap_plugins
from extrap_plugins import ReaderInfo, cli, hookimpl, plugins

P = (2, 4, 8, 16, 32)


def parts(path, options):
    return [f"p{p}.r{r}" for p in P for r in (0, 1)]


def read_part(part, options):
    if part == "p8.r1" and os.environ.get("DIE_IN_WORKER"):
        os._exit(0)  # as a crashing library would: no exception, no message, exit status 0
    p, r = int(part[1:].split(".")[0]), int(part[-1])
    n = 3000
    k = np.arange(n)
    time = 1 + k % 7 + 0.01 * (1 + k % 5) * p * np.log2(p) * np.random.default_rng(p * 10 + r).uniform(0.99, 1.01, n)
    names = [f"main->k{i}" for i in range(n)]
    return extrap_plugins.Experiment.from_columns(
        ["p"], callpath=names * 2, metric=["time"] * n + ["visits"] * n, coordinates=np.full((2 * n, 1), float(p)),
        value=np.r_[time, np.round(3 + k % 4 * p)], repetition=np.full(2 * n, r), source=part)


if __name__ == "__main__":
    plugin = types.ModuleType("synthetic")
    plugin.extrap_readers = hookimpl(lambda: [ReaderInfo("synthetic", read=None, directories=True, parts=parts,
                                                         read_part=read_part)])
    plugins.get_host().register(plugin, "synthetic")
    sys.exit(cli.main(sys.argv[1:]))
'''


@pytest.fixture
def mpiexec():
    pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
    found = pathlib.Path(sys.executable).with_name("mpiexec")
    found = str(found) if found.exists() else shutil.which("mpiexec")
    assert found, "mpi4py is installed but no mpiexec was found"
    return found


def run(*argv, env=None, timeout=180):
    environment = {**os.environ, "EXTRAP_PLUGINS_NO_AUTOLOAD": "1", **(env or {})}
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=environment, timeout=timeout)


def under_mpi(mpiexec, n, *argv, **kwargs):
    return run(mpiexec, "-n", n, sys.executable, "-m", "mpi4py.futures", *argv, **kwargs)


@pytest.fixture
def cube_sweep(shared_data, tmp_path):
    """The 27-run multi-parameter CUBE set with one run truncated."""
    pytest.importorskip("pycubexr")
    sweep = tmp_path / "sweep"
    shutil.copytree(shared_data / "cube" / "extrap" / "multi_parameter", sweep)
    corrupt = sweep / "mm.x10y10z10.r1" / "profile.cubex"
    corrupt.write_bytes(corrupt.read_bytes()[:4000])
    return sweep, corrupt


def test_serial_process_and_mpi_give_byte_identical_json_and_skip_the_corrupt_run(mpiexec, cube_sweep, tmp_path):
    sweep, corrupt = cube_sweep
    skipped = (f"extrap-plugins: warning: skipped: {corrupt}: not a readable CUBE file (damaged archive: unexpected "
               "end of data); is it truncated or corrupt?")
    common = ["model", sweep, "--export", "json", "--scratch", tmp_path]
    reference = run(sys.executable, "-m", "extrap_plugins", *common, "--executor", "serial", "--stream", "off")
    assert reference.returncode == 0, reference.stderr
    assert reference.stdout.count('"callpath"') > 20 and skipped in reference.stderr.splitlines()
    for stream in ("off", "on"):
        process = run(sys.executable, "-m", "extrap_plugins", *common, "--executor", "process", "--jobs", 2,
                      "--stream", stream)
        mpi = under_mpi(mpiexec, 3, "-m", "extrap_plugins", *common, "--executor", "mpi", "--stream", stream)
        for result in (process, mpi):
            assert result.returncode == 0, result.stderr
            assert result.stdout == reference.stdout
            assert skipped in result.stderr.splitlines()
    assert os.listdir(tmp_path) == ["sweep"]  # no scratch folder left behind


def test_mpi_gives_the_same_blocks_of_many_series_as_serial(mpiexec, tmp_path):
    script = tmp_path / "synthetic.py"
    script.write_text(SYNTHETIC)
    common = ["model", tmp_path, "--reader", "synthetic", "--export", "json"]
    serial = run(sys.executable, script, *common, "--executor", "serial")
    assert serial.returncode == 0, serial.stderr
    assert serial.stdout.count('"callpath"') == 6000
    mpi = under_mpi(mpiexec, 3, script, *common, "--executor", "mpi", "--stream", "on", "--scratch", tmp_path)
    assert mpi.returncode == 0, mpi.stderr
    assert mpi.stdout == serial.stdout


def test_a_dead_mpi_worker_ends_the_job_with_a_message_instead_of_a_hang(mpiexec, tmp_path):
    script = tmp_path / "synthetic.py"
    script.write_text(SYNTHETIC)
    start = time.monotonic()
    # Hydra normally kills the whole job when a rank dies; without that clean-up rank 0 would wait forever.
    result = run(mpiexec, "-disable-auto-cleanup", "-n", 3, sys.executable, "-m", "mpi4py.futures", script,
                 "model", tmp_path, "--reader", "synthetic", "--executor", "mpi",
                 env={"DIE_IN_WORKER": "1", "EXTRAP_PLUGINS_STALL_TIMEOUT": "3"}, timeout=120)
    assert time.monotonic() - start < 100
    assert result.returncode == 1 and result.stdout == ""
    # at least 3 s, or 20 times the longest wait between two finished pieces if that is longer
    assert re.search(r"^extrap-plugins: error: no MPI worker has finished a piece of work for [0-9.]+ s \(1 in "
                     r"flight\): a worker has died or hangs \(see the MPI launcher's messages\); stopping the job\.",
                     result.stderr, re.MULTILINE), result.stderr


def test_mpi_without_a_pool_of_workers_says_how_to_start_it(mpiexec, cube_sweep):
    sweep, _ = cube_sweep
    plain = run(mpiexec, "-n", 2, sys.executable, "-m", "extrap_plugins", "model", sweep, "--executor", "mpi")
    assert plain.returncode == 2
    assert "start the command as 'mpiexec -n N python -m mpi4py.futures -m extrap_plugins model ...'" in plain.stderr


def blas_threads(_):
    from threadpoolctl import threadpool_info

    return sorted({pool["num_threads"] for pool in threadpool_info()})


def test_workers_run_their_blas_with_one_thread():
    with executors.create_executor("process", 2) as pool:
        assert list(executors.map_ordered(pool, blas_threads, range(4))) == [[1]] * 4


def test_a_chosen_executor_holds_inside_its_block_only():
    assert executors.current() == ("auto", None)
    with executors.chosen("serial", 3):
        assert executors.current() == ("serial", 3)
    assert executors.current() == ("auto", None)
    with pytest.raises(extrap_plugins.InputError, match="unknown executor 'threads'"):
        with executors.chosen("threads"):
            pass


POOL_SETTINGS = r'''
"""Reports what an MPI worker runs with: its BLAS threads, and the pool's polling backoff."""
from threadpoolctl import threadpool_info

from extrap_plugins import executors


def blas_threads(_):
    return sorted({pool["num_threads"] for pool in threadpool_info()})


if __name__ == "__main__":
    with executors.create_executor("mpi") as pool:
        print(list(executors.map_ordered(pool, blas_threads, range(4))), pool._options.get("backoff"))
'''


def test_mpi_workers_run_one_blas_thread_and_poll_often(mpiexec, tmp_path):
    script = tmp_path / "pool_settings.py"
    script.write_text(POOL_SETTINGS)
    result = under_mpi(mpiexec, 3, script)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{[[1]] * 4} {executors.MPI_BACKOFF}\n"
    chosen = under_mpi(mpiexec, 2, script, env={"MPI4PY_FUTURES_BACKOFF": "0.002"})
    assert chosen.stdout == f"{[[1]] * 4} None\n"  # the user's setting is left to mpi4py


def test_a_command_under_plain_mpiexec_says_once_how_to_start_the_pool(mpiexec):
    # every rank ran the command and printed the same line: two lines for -n 2
    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "stencil.jsonl"
    result = run(mpiexec, "-n", 2, sys.executable, "-m", "extrap_plugins", "model", example, "--executor", "mpi")
    assert result.returncode == ExitStatus.BAD_INPUT
    assert result.stderr.count("--executor mpi needs a pool of MPI workers") == 1, result.stderr
