"""Scale-out benchmark: a synthetic Score-P sweep read and modelled with every executor.

Usage (from the project root, in a venv with ``pip install -e '.[cube,mpi]'``)::

    .venv/bin/python benchmarks/scale.py              # 125 runs x 10,000 call paths x 5 metrics (~30 min)
    .venv/bin/python benchmarks/scale.py --quick      # 125 runs x 2,000 call paths: scaled down, ~6 min
    .venv/bin/python benchmarks/scale.py --scan 25,125,250 --keep /tmp/sweep

The sweep is generated here, never committed: ``app.p<p>.n<n>.r<rep>/profile.cubex`` for 5 values of ``p``,
5 of ``n`` and 5 repetitions (125 runs), each a real CUBE archive (``anchor.xml`` plus one index and one
data file per metric, as Score-P writes them) with one location, a call tree ``main -> mod<i> -> fn<j>``
and 5 metrics (time, visits, bytes_sent, PAPI_FP_OPS, PAPI_L3_TCM) following known PMNF functions.

Every configuration runs the real command line in a fresh process, ``extrap-plugins model SWEEP
--export json``, with ``--stream off`` (all measurements in memory) and ``--stream on`` (run by run
through a scratch folder, block by block), under ``serial``, ``process`` with 1 and 2 workers and
``mpi`` with 1 and 2 workers (``mpiexec -n 2|3 python -m mpi4py.futures ...``).  It prints wall time,
speed-up over serial, and the peak resident memory of rank 0 (the process that runs the command), and
checks that every configuration wrote byte-identical JSON.  A second table reads sweeps of 25 and 125
runs (``--scan``: 1 and 5 repetitions, 250 with 10) to show that rank 0's peak memory does not grow with
the number of runs when streaming, beside the in-memory path, whose memory does.  Last, the cost of a
625-run x 100,000-call-path sweep is projected from the measured times and memory.

The times are wall-clock times on whatever else the machine runs: the load average is printed beside
each row; a speed-up measured on a busy machine understates what free cores give.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
P_VALUES = (2, 4, 8, 16, 32)
N_VALUES = (16, 32, 64, 128, 256)
METRICS = (  # name, CUBE type, unit
    ("time", "DOUBLE", "sec"),
    ("visits", "UINT64", "occ"),
    ("bytes_sent", "UINT64", "bytes"),
    ("PAPI_FP_OPS", "UINT64", "#"),
    ("PAPI_L3_TCM", "UINT64", "#"),
)
TERMS = (  # exponents (p, log2 p, n) of the one term of each synthetic function
    (0, 0, 1), (1, 0, 0), (0, 1, 0), (1, 1, 0), (0, 0, 2), (1, 0, 1), (0.5, 0, 1), (0, 1, 1),
)


# ------------------------------------------------------------ the sweep
def call_tree(n_callpaths: int) -> list[tuple[int, str]]:
    """(parent, region) per node in pre-order: ``main``, modules below it, functions below those."""
    n_modules = max(1, int(np.ceil(np.sqrt(n_callpaths))))
    nodes = [(-1, "main")]
    module = 0
    while len(nodes) < n_callpaths:
        parent = len(nodes)
        nodes.append((0, f"mod{module}"))
        for j in range(n_modules - 1):
            if len(nodes) >= n_callpaths:
                break
            nodes.append((parent, f"fn{module}_{j}"))
        module += 1
    return nodes[:n_callpaths]


def anchor_xml(nodes: list[tuple[int, str]]) -> bytes:
    """CUBE 4 ``anchor.xml``: metrics, one region per node, the call tree, one location."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<cube version="4.5">', "<metrics>"]
    for k, (name, dtype, unit) in enumerate(METRICS):
        lines.append(f'<metric id="{k}" type="EXCLUSIVE"><disp_name>{name}</disp_name><uniq_name>{name}'
                     f"</uniq_name><dtype>{dtype}</dtype><uom>{unit}</uom><url></url><descr></descr></metric>")
    lines.append("</metrics><program>")
    for i, (_, region) in enumerate(nodes):
        lines.append(f'<region id="{i}" mod="synthetic.c" begin="1" end="2"><name>{region}</name>'
                     f"<mangled_name>{region}</mangled_name><paradigm>user</paradigm><role>function</role>"
                     f"<url></url><descr></descr></region>")
    children: list[list[int]] = [[] for _ in nodes]
    for i, (parent, _) in enumerate(nodes):
        if parent >= 0:
            children[parent].append(i)

    def emit(i: int) -> None:
        lines.append(f'<cnode id="{i}" calleeId="{i}">')
        for child in children[i]:
            emit(child)
        lines.append("</cnode>")

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    emit(0)
    lines.append("</program><system>"
                 '<systemtreenode Id="0"><name>machine</name><class>machine</class>'
                 '<systemtreenode Id="1"><name>node</name><class>node</class>'
                 '<locationgroup Id="0"><name>rank 0</name><rank>0</rank><type>process</type>'
                 '<location Id="0"><name>thread 0</name><rank>0</rank><type>thread</type></location>'
                 "</locationgroup></systemtreenode></systemtreenode></system></cube>")
    return "\n".join(lines).encode()


def index_file(n_nodes: int) -> bytes:
    """A dense CUBE index: every node, in pre-order (exclusive metrics use the deep enumeration)."""
    return (b"CUBEX.INDEX" + struct.pack("<ihbi", 1, 0, 1, n_nodes)
            + np.arange(n_nodes, dtype="<i4").tobytes())


def synthetic_values(n_nodes: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients (n_metrics, n_nodes, 2) and term choice (n_metrics, n_nodes) of each series."""
    rng = np.random.default_rng(seed)
    coefficients = rng.uniform(1, 100, (len(METRICS), n_nodes, 2))
    coefficients[:, :, 1] /= 10
    terms = rng.integers(0, len(TERMS), (len(METRICS), n_nodes))
    return coefficients, terms


def run_values(p: float, n: float, repetition: int, coefficients: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """Every series' value in one run, shape (n_metrics, n_nodes): time noisy (±2 %), counters exact."""
    exponents = np.asarray(TERMS, dtype=np.float64)[terms]
    term = p ** exponents[..., 0] * np.log2(p) ** exponents[..., 1] * n ** exponents[..., 2]
    values = coefficients[..., 0] + coefficients[..., 1] * term
    noise = np.random.default_rng(int(p * 1000 + n * 10 + repetition)).uniform(0.98, 1.02, values.shape[1])
    values[0] *= noise
    values[1:] = np.round(values[1:])
    return values


def write_profile(path: pathlib.Path, anchor: bytes, index: bytes, values: np.ndarray) -> None:
    """One ``profile.cubex``: a tar of anchor.xml and ``<id>.index``/``<id>.data`` per metric."""
    def add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, BytesIO(data))

    with tarfile.open(path, "w") as tar:
        add(tar, "anchor.xml", anchor)
        for k, (_, dtype, _) in enumerate(METRICS):
            column = values[k].astype("<f8" if dtype == "DOUBLE" else "<u8")
            add(tar, f"{k}.index", index)
            add(tar, f"{k}.data", b"CUBEX.DATA" + column.tobytes())


def make_sweep(folder: pathlib.Path, n_callpaths: int, repetitions: int) -> list[pathlib.Path]:
    """Write the sweep (25 points x ``repetitions``) into ``folder``; returns the run folders."""
    nodes = call_tree(n_callpaths)
    anchor, index = anchor_xml(nodes), index_file(len(nodes))
    coefficients, terms = synthetic_values(len(nodes))
    runs = []
    for p in P_VALUES:
        for n in N_VALUES:
            for r in range(1, repetitions + 1):
                run = folder / f"app.p{p}.n{n}.r{r}"
                run.mkdir(parents=True, exist_ok=True)
                write_profile(run / "profile.cubex", anchor, index, run_values(p, n, r, coefficients, terms))
                runs.append(run)
    return runs


# ------------------------------------------------------------ measuring
def rank0_main(out: str, argv: list[str]) -> int:
    """Run the command line here; record wall time, peak memory and the memory after imports in ``out``."""
    import extrap_plugins.streaming  # noqa: F401 - imported before the baseline is taken
    from extrap_plugins import cli

    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    start = time.perf_counter()
    status = cli.main(argv)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    pathlib.Path(out).write_text(json.dumps({"seconds": seconds, "peak": peak, "baseline": baseline,
                                             "status": status}))
    return status


def run_config(sweep, executor: str, workers: int, stream: str, output: pathlib.Path, scratch: pathlib.Path,
               timeout: float) -> dict:
    """One configuration in a fresh process: seconds, rank-0 peak and baseline bytes, load average."""
    record = output.with_suffix(".rank0.json")
    python = sys.executable
    command = [str(sweep), "--export", "json", "-o", str(output), "--stream", stream, "--scratch", str(scratch),
               "--progress", "off", "--executor", executor]
    if executor == "process":
        command += ["--jobs", str(workers)]
    here = str(pathlib.Path(__file__).resolve())
    if executor == "mpi":
        mpiexec = pathlib.Path(python).with_name("mpiexec")
        argv = [str(mpiexec if mpiexec.exists() else "mpiexec"), "-n", str(workers + 1), python, "-m",
                "mpi4py.futures", here, "--rank0", str(record), "model", *command]
    else:
        argv = [python, here, "--rank0", str(record), "model", *command]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    if done.returncode != 0 or not record.exists():
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    result = json.loads(record.read_text())
    result["load"] = os.getloadavg()[0]
    return result


def mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:,.0f} MiB"


def table(rows: list[list], headers: list[str]) -> str:
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--callpaths", type=int, default=10_000, help="call paths per run (default 10,000)")
    parser.add_argument("--quick", action="store_true",
                        help="2,000 call paths per run instead: about five times faster, for a check")
    parser.add_argument("--scan", default="25,125", help="run counts for the memory table: 25, 125 or 250 "
                                                         "(1, 5, 10 repetitions; default 25,125)")
    parser.add_argument("--keep", metavar="DIR", help="generate the sweep here and keep it")
    parser.add_argument("--no-mpi", action="store_true", help="skip the mpi executor")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run every configuration this many times and keep the fastest (default 1)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per configuration")
    args = parser.parse_args(argv)
    n_callpaths = 2_000 if args.quick else args.callpaths
    base = pathlib.Path(args.keep) if args.keep else pathlib.Path(tempfile.mkdtemp(prefix="extrap-scale-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        return measure(base, n_callpaths, args)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


def sweep_with(base: pathlib.Path, sweep: pathlib.Path, runs: list[pathlib.Path], n_callpaths: int,
               repetitions: int) -> pathlib.Path:
    """The sweep with 1, 5 or 10 repetitions (fewer: links to the 5-repetition runs; more: generated)."""
    if repetitions == 5:
        return sweep
    subset = base / f"sweep-r{repetitions}"
    if subset.exists():
        return subset
    if repetitions < 5:
        subset.mkdir()
        for run in runs:
            if int(run.name.rsplit(".r", 1)[1]) <= repetitions:
                (subset / run.name).symlink_to(run)
    else:
        make_sweep(subset, n_callpaths, repetitions)
    return subset


def measure(base: pathlib.Path, n_callpaths: int, args) -> int:
    sweep = base / "sweep"
    start = time.perf_counter()
    runs = make_sweep(sweep, n_callpaths, repetitions=5) if not sweep.exists() else sorted(sweep.iterdir())
    size = sum((r / "profile.cubex").stat().st_size for r in runs)
    n_values = len(runs) * n_callpaths * len(METRICS)
    print(f"sweep: {len(runs)} runs x {n_callpaths:,} call paths x {len(METRICS)} metrics = {n_values:,} values "
          f"in {size / 2**20:,.0f} MiB of CUBE files (generated in {time.perf_counter() - start:.0f} s); "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before the runs\n")
    scratch = base / "scratch"
    scratch.mkdir(exist_ok=True)
    configs = [("serial", 1), ("process", 1), ("process", 2)]
    if not args.no_mpi:
        configs += [("mpi", 1), ("mpi", 2)]
    rows, reference, results = [], None, {}
    for round_ in range(args.repeat):  # rounds over all configurations: slow spells of the machine hit them alike
        for stream in ("off", "on"):
            for executor, workers in configs:
                out = base / f"{executor}{workers}-{stream}.json"
                result = run_config(sweep, executor, workers, stream, out, scratch, args.timeout)
                text = out.read_bytes()
                reference = reference or text
                result["same"] = text == reference
                key = (executor, workers, stream)
                if key in results:  # keep the fastest run; the largest peak; any difference in the output
                    best = results[key]
                    result["peak"] = max(result["peak"], best["peak"])
                    result["same"] = result["same"] and best["same"]
                    if best["seconds"] <= result["seconds"]:
                        result = {**best, "peak": result["peak"], "same": result["same"]}
                results[key] = result
                print(f"  round {round_ + 1}: {executor} {workers} stream={stream}: {result['seconds']:.1f} s",
                      file=sys.stderr, flush=True)
    for stream in ("off", "on"):
        for executor, workers in configs:
            result = results[(executor, workers, stream)]
            serial = results[("serial", 1, stream)]["seconds"]
            rows.append([f"{executor}, {workers} worker{'s' if workers > 1 else ''}",
                         "streamed" if stream == "on" else "in memory", f"{result['seconds']:.1f} s",
                         f"{serial / result['seconds']:.2f}x", mib(result["peak"]),
                         "yes" if result["same"] else "NO", f"{result['load']:.1f}"])
    n_models = len(json.loads(reference)["models"])
    best = f"the fastest of {args.repeat} runs" if args.repeat > 1 else "one run"
    print(f"`extrap-plugins model SWEEP --export json` ({n_models:,} models): wall time ({best}), "
          "speed-up over serial, "
          f"peak memory of rank 0 (the process running the command), whether the JSON is byte-identical to the "
          f"first row's, and the machine's 1-minute load average after the run:\n")
    print(table(rows, ["executor", "measurements", "time", "speed-up", "rank-0 peak", "same JSON", "load"]))

    print("\nrank-0 peak memory against the number of runs (process executor, 2 workers):\n")
    memory_rows = []
    for n_runs in (int(n) for n in args.scan.split(",")):
        subset = sweep_with(base, sweep, runs, n_callpaths, n_runs // 25)
        row = [f"{n_runs} runs", f"{n_runs * n_callpaths * len(METRICS):,}"]
        for stream in ("off", "on"):
            if n_runs == 125:
                result = results[("process", 2, stream)]
            else:
                result = run_config(subset, "process", 2, stream, base / f"memory-{n_runs}-{stream}.json", scratch,
                                    args.timeout)
            row += [f"{result['seconds']:.1f} s", mib(result["peak"])]
        memory_rows.append(row)
        print(f"  {row}", file=sys.stderr, flush=True)
    print(table(memory_rows, ["sweep", "values", "in memory: time", "in memory: rank-0 peak", "streamed: time",
                              "streamed: rank-0 peak"]))

    big_values = 625 * 100_000 * len(METRICS)
    value_ratio = big_values / n_values
    series_ratio = 100_000 / n_callpaths
    print(f"\nprojected for 625 runs x 100,000 call paths x {len(METRICS)} metrics ({big_values:,} values, "
          f"{value_ratio:.0f}x this sweep): time linear in the values; rank-0 memory above the "
          f"{mib(results[('serial', 1, 'off')]['baseline'])} of the loaded program linear in the values "
          f"in memory, in the series ({series_ratio:.0f}x: names, models, the export) when streamed:\n")
    projection = []
    for stream in ("off", "on"):
        for executor, workers in configs:
            result = results[(executor, workers, stream)]
            ratio = value_ratio if stream == "off" else series_ratio
            memory = result["baseline"] + (result["peak"] - result["baseline"]) * ratio
            projection.append([f"{executor}, {workers} worker{'s' if workers > 1 else ''}",
                               "streamed" if stream == "on" else "in memory",
                               f"{result['seconds'] * value_ratio / 3600:.1f} h", mib(memory)])
    print(table(projection, ["executor", "measurements", "time", "rank-0 peak"]))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--rank0":
        sys.exit(rank0_main(sys.argv[2], sys.argv[3:]))
    sys.exit(main())
