"""Scale-out benchmark: a synthetic Score-P sweep read and modelled with every executor.

Usage (from the project root, in a venv with ``pip install -e '.[cube,mpi]'``)::

    .venv/bin/python benchmarks/scale.py                # 125 runs x 10,000 call paths x 5 metrics
    .venv/bin/python benchmarks/scale.py --quick        # 125 runs x 2,000 call paths: a smoke run
    .venv/bin/python benchmarks/scale.py --callpaths 20000 --keep /tmp/sweep

The sweep is generated here, never committed: ``app.p<p>.n<n>.r<rep>/profile.cubex`` for 5 values of ``p``,
5 of ``n`` and 5 repetitions (125 runs), each a real CUBE archive (``anchor.xml`` plus one index and one
data file per metric, as Score-P writes them) with one location, a call tree ``main -> mod<i> -> fn<j>``
and 5 metrics (time, visits, bytes_sent, PAPI_FP_OPS, PAPI_L3_TCM) following known PMNF functions.

Every configuration runs the real command line in a fresh process, ``extrap-plugins model SWEEP
--export json``, with ``--stream off`` (all measurements in memory) and ``--stream on`` (run by run
through a scratch folder, block by block), under ``serial``, ``process`` with 1 and 2 workers and
``mpi`` with 1 and 2 workers (``mpiexec -n 2|3 python -m mpi4py.futures ...``).  It prints wall time,
speed-up over serial, and the peak resident memory of rank 0 (the process that runs the command), and
checks that every configuration wrote byte-identical JSON.  A second table streams sweeps of 25, 125
and 250 runs (1, 5 and 10 repetitions) to show that rank 0's peak memory does not grow with the number
of runs, beside the in-memory path, whose memory does.  Last, the cost of a 625-run x 100,000-call-path
sweep is projected from the measured per-value read and per-series modelling rates.
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
    """Run the command line here and record this process's wall time and peak memory in ``out``."""
    from extrap_plugins import cli

    start = time.perf_counter()
    status = cli.main(argv)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    pathlib.Path(out).write_text(json.dumps({"seconds": seconds, "peak": peak, "status": status}))
    return status


def run_config(sweep, executor: str, workers: int, stream: str, output: pathlib.Path, scratch: pathlib.Path,
               timeout: float) -> dict:
    """One configuration in a fresh process; returns seconds, rank-0 peak bytes and the JSON written."""
    record = output.with_suffix(".rank0.json")
    python = sys.executable
    inputs = [str(s) for s in (sweep if isinstance(sweep, list) else [sweep])]
    command = [*inputs, "--export", "json", "-o", str(output), "--stream", stream, "--scratch", str(scratch),
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
    wall = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    wall = time.perf_counter() - wall
    if done.returncode != 0 or not record.exists():
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    result = json.loads(record.read_text())
    result["wall"] = wall
    return result


def mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:,.0f} MiB"


def table(rows: list[list], headers: list[str]) -> str:
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--callpaths", type=int, default=10_000, help="call paths per run (default 10,000)")
    parser.add_argument("--quick", action="store_true", help="2,000 call paths and no 250-run sweep: a smoke run")
    parser.add_argument("--keep", metavar="DIR", help="generate the sweep here and keep it")
    parser.add_argument("--no-mpi", action="store_true", help="skip the mpi executor")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per configuration")
    args = parser.parse_args(argv)
    n_callpaths = 2_000 if args.quick else args.callpaths
    base = pathlib.Path(args.keep) if args.keep else pathlib.Path(tempfile.mkdtemp(prefix="extrap-scale-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        return measure(base, n_callpaths, args)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


def measure(base: pathlib.Path, n_callpaths: int, args) -> int:
    sweep = base / "sweep"
    start = time.perf_counter()
    runs = make_sweep(sweep, n_callpaths, repetitions=5) if not sweep.exists() else sorted(sweep.iterdir())
    size = sum((r / "profile.cubex").stat().st_size for r in runs)
    n_values = len(runs) * n_callpaths * len(METRICS)
    print(f"sweep: {len(runs)} runs x {n_callpaths:,} call paths x {len(METRICS)} metrics = {n_values:,} values, "
          f"{size / 2**20:,.0f} MiB of CUBE files (generated in {time.perf_counter() - start:.0f} s)\n")
    scratch = base / "scratch"
    scratch.mkdir(exist_ok=True)
    configs = [("serial", 1), ("process", 1), ("process", 2)]
    if not args.no_mpi:
        configs += [("mpi", 1), ("mpi", 2)]
    rows, reference, results = [], None, {}
    for stream in ("off", "on"):
        for executor, workers in configs:
            out = base / f"{executor}{workers}-{stream}.json"
            result = run_config(sweep, executor, workers, stream, out, scratch, args.timeout)
            text = out.read_bytes()
            reference = reference or text
            results[(executor, workers, stream)] = result
            serial = results[("serial", 1, stream)]["seconds"]
            rows.append([f"{executor} ({workers} worker{'s' if workers > 1 else ''})",
                         "stream" if stream == "on" else "in memory", f"{result['seconds']:.1f} s",
                         f"{serial / result['seconds']:.2f}x", mib(result["peak"]),
                         "yes" if text == reference else "NO"])
            print(f"  {rows[-1]}", file=sys.stderr)
    n_models = len(json.loads(reference)["models"])
    print(f"{n_models:,} models; time and rank-0 peak memory of `extrap-plugins model SWEEP --export json` "
          f"on {os.cpu_count()} cores:\n")
    print(table(rows, ["executor", "measurements", "time", "speed-up", "rank-0 peak", "same JSON"]))

    # Memory against the number of runs: 1, 5 and 10 repetitions of the 25 points.
    print("\nrank-0 peak memory against the number of runs (process, 2 workers):\n")
    memory_rows = []
    reps = (1, 5) if args.quick else (1, 5, 10)
    for repetitions in reps:
        if repetitions == 5:
            subset = sweep
        else:
            subset = base / f"sweep-r{repetitions}"
            if not subset.exists():
                if repetitions < 5:
                    subset.mkdir()
                    for run in runs:
                        if run.name.endswith(tuple(f".r{r}" for r in range(1, repetitions + 1))):
                            (subset / run.name).symlink_to(run)
                else:
                    make_sweep(subset, n_callpaths, repetitions)
        n_runs = 25 * repetitions
        row = [f"{n_runs} runs", f"{n_runs * n_callpaths * len(METRICS):,}"]
        for stream in ("off", "on"):
            result = run_config(subset, "process", 2, stream, base / f"memory-{n_runs}-{stream}.json", scratch,
                                args.timeout)
            row += [f"{result['seconds']:.1f} s", mib(result["peak"])]
        memory_rows.append(row)
        print(f"  {row}", file=sys.stderr)
    print(table(memory_rows, ["sweep", "values", "in memory: time", "in memory: rank-0 peak", "streamed: time",
                              "streamed: rank-0 peak"]))

    # Projection: 625 runs x 100,000 call paths (x 5 metrics), from the streamed serial and 2-worker rates.
    big_values = 625 * 100_000 * len(METRICS)
    scale = big_values / n_values
    print(f"\nprojected for 625 runs x 100,000 call paths x {len(METRICS)} metrics ({big_values:,} values, "
          f"{scale:.0f}x this sweep; time linear in the values, streamed rank-0 memory linear in the call paths):\n")
    projection = []
    for executor, workers in configs:
        for stream in ("off", "on"):
            result = results[(executor, workers, stream)]
            if stream == "off":
                memory = f"{mib(result['peak'] * scale)} (all values)"
            else:
                memory = f"{mib(result['peak'] * 100_000 / n_callpaths)} (names, models)"
            projection.append([f"{executor} ({workers})", "stream" if stream == "on" else "in memory",
                               f"{result['seconds'] * scale / 3600:.1f} h", memory])
    print(table(projection, ["executor (workers)", "measurements", "time", "rank-0 peak"]))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--rank0":
        sys.exit(rank0_main(sys.argv[2], sys.argv[3:]))
    sys.exit(main())
