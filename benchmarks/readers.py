"""Read time and memory of the JSON Lines, Talpas, text and CSV readers beside Extra-P 4.2.5's, in the same run.

Usage (from the project root; Extra-P lives in its own venv, never beside extrap-plugins)::

    python3 -m venv ../venv-extrap && ../venv-extrap/bin/pip install extrap==4.2.5
    .venv/bin/python benchmarks/readers.py [--extrap-python ../venv-extrap/bin/python] [--rows 1000000] [--repeat 3]

Synthetic inputs (made here, deterministic): ``--rows`` measured values of 4 call paths x 2 metrics at
5 x 5 points of (p, n), as JSON Lines, Talpas and CSV, and as Extra-P text with as many values spread over
``rows / 125`` regions (25 points, 5 repetitions each); plus every file of ``../shared/data/extrap`` that
Extra-P reads.  Each read runs in a fresh process (ours: best of ``--repeat``; Extra-P: one run), which
reports its wall and CPU time and its peak resident memory (interpreter and imports included).  Extra-P has
no CSV reader; its columns for CSV repeat its JSON Lines figures for the same rows.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = (ROOT / ".." / "shared" / "data" / "extrap").resolve()

OURS = r"""
import json, pathlib, resource, sys, time, warnings
warnings.simplefilter("ignore")
import extrap_plugins
paths, reader = json.loads(sys.argv[1]), sys.argv[2]
start, cpu = time.perf_counter(), time.process_time()
rows = 0
for path in paths:
    rows += len(extrap_plugins.read(pathlib.Path(path), reader=None if reader == "auto" else reader))
print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, "rows": rows,
                  "mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

EXTRAP = r"""
import json, pathlib, resource, sys, time, warnings
warnings.simplefilter("ignore")
from extrap.fileio.experiment_io import ExperimentReader
from extrap.fileio.file_reader.extrap3_experiment_reader import Extrap3ExperimentFileReader
from extrap.fileio.file_reader.json_file_reader import JsonFileReader
from extrap.fileio.file_reader.talpas_file_reader import TalpasFileReader
from extrap.fileio.file_reader.text_file_reader import TextFileReader
READERS = {"json": JsonFileReader, "talpas": TalpasFileReader, "text": TextFileReader,
           "extrap-experiment": ExperimentReader, "extrap3": Extrap3ExperimentFileReader}
paths, reader = json.loads(sys.argv[1]), sys.argv[2]
start, cpu = time.perf_counter(), time.process_time()
series = 0
for path in paths:
    name = reader if reader != "auto" else json.loads(sys.argv[3])[path]
    series += len(READERS[name]().read_experiment(pathlib.Path(path)).measurements)
print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, "series": series,
                  "mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


# ------------------------------------------------------------------ inputs
def measurements(rows: int, seed: int = 0):
    """``rows`` values: columns p, n, call path, metric, value (4 call paths x 2 metrics x 25 points)."""
    rng = np.random.default_rng(seed)
    callpaths = ["main", "main->solve", "main->solve->MPI_Allreduce", "main->io"]
    metrics = ["time", "visits"]
    cells = [(p, n, c, m) for p in (4, 8, 16, 32, 64) for n in (10, 20, 30, 40, 50)
             for c in callpaths for m in metrics]
    index = np.arange(rows) % len(cells)
    p, n, c, m = (np.asarray(column, dtype=object)[index] for column in zip(*cells))
    value = (1.0 + p.astype(float) * n.astype(float) * 1e-3) * rng.lognormal(0.0, 0.02, rows)
    return p.tolist(), n.tolist(), c.tolist(), m.tolist(), value.tolist()


def write_inputs(folder: pathlib.Path, rows: int) -> dict[str, pathlib.Path]:
    p, n, c, m, v = measurements(rows)
    paths = {"jsonl": folder / "rows.jsonl", "talpas": folder / "rows.txt", "csv": folder / "rows.csv",
             "text": folder / "regions.txt"}
    with open(paths["jsonl"], "w") as out:
        out.writelines(f'{{"params": {{"p": {a}, "n": {b}}}, "callpath": "{cp}", "metric": "{me}", "value": {x!r}}}\n'
                       for a, b, cp, me, x in zip(p, n, c, m, v))
    with open(paths["talpas"], "w") as out:
        out.writelines(f'{{"parameters":{{"p":{a},"n":{b}}};"metric":"{me}";"callpath":"{cp}";"value":{x!r}}}\n'
                       for a, b, cp, me, x in zip(p, n, c, m, v))
    with open(paths["csv"], "w") as out:
        out.write("p,n,callpath,metric,value\n")
        out.writelines(f"{a},{b},{cp},{me},{x!r}\n" for a, b, cp, me, x in zip(p, n, c, m, v))
    regions = max(1, rows // 125)
    points = [(a, b) for a in (4, 8, 16, 32, 64) for b in (10, 20, 30, 40, 50)]
    values = np.asarray(v[: regions * 125] + [1.0] * max(0, regions * 125 - len(v))).reshape(regions, 25, 5)
    with open(paths["text"], "w") as out:
        out.write("PARAMETER p\nPARAMETER n\n")
        out.write("POINTS " + " ".join(f"( {a} {b} )" for a, b in points) + "\n\nMETRIC time\n")
        for r in range(regions):
            out.write(f"REGION main->kernel{r}\n")
            out.writelines("DATA " + " ".join(map(repr, values[r, i].tolist())) + "\n" for i in range(25))
    return paths


def shared_files() -> dict[str, str]:
    """Every file of ../shared/data/extrap that Extra-P reads -> our reader's name."""
    reference = ROOT / "tests" / "readers" / "data" / "extrap_inputs_reference.csv.gz"
    import csv
    import gzip

    names = {"text": "text", "json": "json", "talpas": "talpas", "experiment": "extrap-experiment",
             "extrap3": "extrap3"}
    with gzip.open(reference, "rt", newline="") as stream:
        return {str(DATA / r["file"]): names[r["reader"]] for r in csv.DictReader(stream) if not r["error"]}


# ------------------------------------------------------------------ timing
def run(python: str, script: str, paths: list[str], reader: str, extra: str = "{}", timeout: float = 1800):
    try:
        result = subprocess.run([python, "-c", script, json.dumps(paths), reader, extra], capture_output=True,
                                text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return None
    if result.returncode != 0:
        print(f"failed: {result.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extrap-python", default=os.environ.get("EXTRAP_PYTHON", "../venv-extrap/bin/python"),
                        help="the Python of a venv with extrap==4.2.5 (default: %(default)s); 'none' to skip")
    parser.add_argument("--rows", type=int, default=1_000_000, help="measured values in the synthetic inputs")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many reads for ours")
    args = parser.parse_args(argv)
    python = None if args.extrap_python == "none" or not pathlib.Path(args.extrap_python).exists() \
        else args.extrap_python
    if python is None:
        print("Extra-P not found: its columns stay empty (give --extrap-python)", file=sys.stderr)

    from tabulate import tabulate

    scratch = tempfile.TemporaryDirectory(prefix="readers_bench_")
    paths = write_inputs(pathlib.Path(scratch.name), args.rows)
    shared = shared_files()
    cases = [  # label, our reader, files, Extra-P's reader (None: none), target in seconds
        (f"JSON Lines, {args.rows:,} rows", "json", [str(paths["jsonl"])], "json", 10.0),
        (f"Talpas, {args.rows:,} rows", "talpas", [str(paths["talpas"])], "talpas", None),
        (f"CSV, {args.rows:,} rows", "csv", [str(paths["csv"])], ("json", [str(paths["jsonl"])]), 10.0),
        (f"text, {max(1, args.rows // 125):,} regions x 25 points x 5 reps", "text", [str(paths["text"])], "text",
         None),
        (f"all {len(shared)} Extra-P input files read by Extra-P", "auto", list(shared), "auto", None),
    ]
    table = []
    extrap_json = None
    for label, reader, files, theirs, target in cases:
        ours = [run(sys.executable, OURS, files, reader) for _ in range(args.repeat)]
        ours = [o for o in ours if o]
        best = min(ours, key=lambda o: o["cpu"]) if ours else None
        extrap = None
        if python is not None and isinstance(theirs, tuple):  # Extra-P's JSON Lines time for the CSV rows
            extrap = extrap_json
        elif python is not None and theirs is not None:
            extrap = run(python, EXTRAP, files, theirs, json.dumps(shared))
            if reader == "json":
                extrap_json = extrap
        seconds = best["seconds"] if best else float("nan")
        cpu = best["cpu"] if best else float("nan")
        table.append([
            label, f"{seconds:.2f}", f"{cpu:.2f}", f"{best['mb']:.0f}" if best else "n/a",
            "n/a" if extrap is None
            else f"{extrap['seconds']:.2f}" + (" (JSON Lines)" if isinstance(theirs, tuple) else ""),
            "n/a" if extrap is None else f"{extrap['cpu']:.2f}",
            "n/a" if extrap is None else f"{extrap['mb']:.0f}",
            "n/a" if extrap is None else f"{extrap['cpu'] / cpu:.1f}x",
            "-" if target is None else f"< {target:g} s: {'met' if cpu < target else 'MISSED'}",
        ])
    scratch.cleanup()
    print(tabulate(table, headers=["input", "ours wall (s)", "ours CPU (s)", "ours peak MB", "Extra-P wall (s)",
                                   "Extra-P CPU (s)", "Extra-P peak MB", "Extra-P / ours (CPU)", "target (CPU)"],
                   tablefmt="github"))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"\ncores: {cores}, load average at the end: {load:.1f}, python {sys.version.split()[0]}, "
          f"best of {args.repeat} fresh processes for ours (by CPU time), one for Extra-P; peak MB includes the "
          "interpreter; the ratio uses CPU time, which a busy machine disturbs less than wall time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
