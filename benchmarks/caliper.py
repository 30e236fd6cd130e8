"""Read and model Thicket's LULESH runs (five .cali files): extrap-plugins beside Thicket + Extra-P 4.2.5.

Usage (from the project root; Thicket with Extra-P lives in its own venv, never beside extrap-plugins,
because Extra-P pins numpy below 2 and pulls PySide6)::

    python3 -m venv ../venv-thicket && ../venv-thicket/bin/pip install llnl-thicket extrap==4.2.5
    .venv/bin/pip install -e '.[caliper,thicket]'
    .venv/bin/python benchmarks/caliper.py [--thicket-python ../venv-thicket/bin/python] [--repeat 3] [--models]

Every case models every call path (45) and metric (4) of the five runs, 180 models, serially:

* ``extrap-plugins read + model``: ``extrap_plugins.read(folder)`` and ``extrap_plugins.model(...)`` in this
  process, imports done (best of ``--repeat``);
* ``extrap-plugins CLI``: ``extrap-plugins model FOLDER`` as a fresh process, start-up and imports included,
  serially and with the default executor (``auto`` starts worker processes for more than four runs, which
  costs more than it saves on five small files);
* ``Thicket + extrap_plugins.thicket.Modeling``: Thicket's reader, our modeling (the one-import switch);
* ``Thicket + Extra-P``: ``Thicket.from_caliperreader`` then ``thicket.model_extrap.Modeling(tk, "jobsize")
  .produce_models()``, in Thicket's venv, once per fresh process (best of ``--repeat``).

``--models`` also prints our model and Extra-P's for every call path of ``Avg time/rank`` side by side.

``--read`` times reading alone instead, on the real files and on large ones written here the way Caliper writes
them (``write_profiles``: a call tree of ``--regions`` regions at most ten deep; ``spot``: one record per region
with the spot controller's four cross-rank metrics, at 8 ... 128 ranks; ``ranks``: ``hatchet-region-profile``'s one
record per region and ``mpi.rank`` with ``sum#time.duration`` and ``count``, at 16 ... 128 ranks)::

    .venv/bin/python benchmarks/caliper.py --read [--regions 2000] [--repeat 5]

Each case is read by ``extrap_plugins.read(folder, executor="serial")`` and by caliper-reader's ``CaliperReader``
(records as dicts of text, nothing checked or converted: the floor of any reader built on it), best CPU time of
``--repeat`` in this process; and, when Thicket is installed, once by ``Thicket.from_caliperreader``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = (ROOT / ".." / "shared" / "data" / "caliper" / "thicket" / "mpi_scaling_cali").resolve()
FILES = [str(DATA / f"{n}_cores.cali") for n in (27, 64, 125, 216, 343)]

THICKET_SCRIPT = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
start = time.perf_counter()
from thicket import Thicket
from thicket.model_extrap import Modeling
imported = time.perf_counter()
tk = Thicket.from_caliperreader(sys.argv[1:], disable_tqdm=True)
read = time.perf_counter()
Modeling(tk, "jobsize").produce_models()
modeled = time.perf_counter()
frame = tk.statsframe.dataframe
models = {}
for node in frame.index:
    path = "->".join(n.frame["name"] for n in node.path())
    for column in frame.columns:
        if column.endswith("_extrap-model") and not column.endswith(("_RSS_extrap-model", "_rRSS_extrap-model",
                "_SMAPE_extrap-model", "_AR2_extrap-model", "_RE_extrap-model")):
            models[path + "|" + column[: -len("_extrap-model")]] = str(frame.at[node, column])
print(json.dumps({"import": imported - start, "read": read - imported, "model": modeled - read,
                  "models": models}))
"""


HEADER = [  # Caliper's attribute attributes, a nested region attribute, the globals jobsize and caliper version
    "__rec=node,id=12,attr=10,data=64,parent=3",
    "__rec=node,id=13,attr=8,data=attribute.alias,parent=12",
    "__rec=node,id=14,attr=8,data=attribute.unit,parent=12",
    "__rec=node,id=20,attr=10,data=268,parent=3",
    "__rec=node,id=21,attr=8,data=region,parent=20",
    "__rec=node,id=30,attr=10,data=1612,parent=1",
    "__rec=node,id=31,attr=8,data=jobsize,parent=30",
    "__rec=node,id=32,attr=10,data=1612,parent=3",
    "__rec=node,id=33,attr=8,data=cali.caliper.version,parent=32",
]
SPOT_METRICS = [  # the spot controller's Min/Max/Avg time/rank and Total time, as in LULESH's files
    "__rec=node,id=83,attr=14,data=sec,parent=5",
    "__rec=node,id=84,attr=13,data=Min time/rank,parent=83",
    "__rec=node,id=85,attr=10,data=65,parent=84",
    "__rec=node,id=86,attr=8,data=min#inclusive#sum#time.duration,parent=85",
    "__rec=node,id=87,attr=13,data=Max time/rank,parent=83",
    "__rec=node,id=88,attr=10,data=65,parent=87",
    "__rec=node,id=89,attr=8,data=max#inclusive#sum#time.duration,parent=88",
    "__rec=node,id=90,attr=13,data=Avg time/rank,parent=83",
    "__rec=node,id=91,attr=10,data=65,parent=90",
    "__rec=node,id=92,attr=8,data=avg#inclusive#sum#time.duration,parent=91",
    "__rec=node,id=97,attr=13,data=Total time,parent=83",
    "__rec=node,id=98,attr=10,data=65,parent=97",
    "__rec=node,id=99,attr=8,data=sum#inclusive#sum#time.duration,parent=98",
    "__rec=node,id=15,attr=8,data=spot.channel,parent=12",
    "__rec=node,id=101,attr=15,data=regionprofile",
]
RANK_METRICS = [  # hatchet-region-profile: sum#time.duration and count per region and mpi.rank
    "__rec=node,id=40,attr=10,data=2113,parent=5",
    "__rec=node,id=41,attr=8,data=sum#time.duration,parent=40",
    "__rec=node,id=42,attr=10,data=2113,parent=2",
    "__rec=node,id=43,attr=8,data=count,parent=42",
    "__rec=node,id=44,attr=10,data=1,parent=1",
    "__rec=node,id=45,attr=8,data=mpi.rank,parent=44",
]


def write_profiles(folder: pathlib.Path, kind: str, regions: int, sizes: tuple[int, ...], seed: int = 0) -> None:
    """One ``.cali`` file per rank count in ``sizes``: ``kind`` ``spot`` (one record per region) or ``ranks`` (one
    record per region and rank); ``regions`` regions in a call tree at most ten deep (deterministic)."""
    import random

    folder.mkdir(parents=True, exist_ok=True)
    for jobsize in sizes:
        rng = random.Random(seed + jobsize)
        tree, depth = [], {}
        for i in range(regions):
            recent = [node for node, _, _ in tree[-30:] if depth[node] < 9]
            parent = rng.choice(recent) if i and recent else (1000 if i else None)
            depth[1000 + i] = depth[parent] + 1 if parent else 0
            tree.append((1000 + i, f"kernel_{i}" if i else "main", parent))
        lines = HEADER + (SPOT_METRICS if kind == "spot" else RANK_METRICS)
        for node, name, parent in tree:
            lines.append(f"__rec=node,id={node},attr=21,data={name}" + (f",parent={parent}" if parent else ""))
            if kind == "spot":
                t = rng.uniform(0.001, 10.0) * jobsize ** 0.5
                lines.append(f"__rec=ctx,ref={node}=101,attr=86=89=92=99,data={t * 0.9:.6f}={t * 1.1:.6f}={t:.6f}="
                             f"{t * jobsize:.6f}")
        if kind == "ranks":
            lines += [f"__rec=ctx,ref={node},attr=41=43=45,data={rng.uniform(0.001, 10.0):.6f}="
                      f"{rng.randrange(1, 1000)}={rank}" for rank in range(jobsize) for node, _, _ in tree]
        lines += [f"__rec=node,id=900,attr=31,data={jobsize}", "__rec=node,id=901,attr=33,data=2.9.0,parent=900",
                  "__rec=globals,ref=901"]
        (folder / f"{jobsize}.cali").write_text("\n".join(lines) + "\n")


def time_reads(regions: int, repeat: int) -> None:
    """The ``--read`` table: read time of ours, caliper-reader's and Thicket's, on real and large inputs."""
    import tempfile

    import caliperreader

    import extrap_plugins

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from thicket import Thicket
    except ImportError:
        Thicket = None
    scratch = tempfile.TemporaryDirectory(prefix="caliper_read_")
    spot, ranks = pathlib.Path(scratch.name) / "spot", pathlib.Path(scratch.name) / "ranks"
    write_profiles(spot, "spot", regions, (8, 16, 32, 64, 128))
    write_profiles(ranks, "ranks", regions // 2, (16, 32, 64, 128))
    cases = [("LULESH, 5 runs (mpi_scaling_cali)", DATA),
             ("RAJAPerf, 5 runs", DATA.parent / "rajaperf"),
             (f"spot, {regions:,} regions, 5 runs (8-128 ranks)", spot),
             (f"hatchet-region-profile, {regions // 2:,} regions x 16-128 ranks, 4 runs", ranks)]

    def best(function) -> float:
        seconds = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            function()
            seconds = min(seconds, time.process_time() - start)
        return seconds

    print(f"Read time, best CPU seconds of {repeat} (in process, imports done)\n")
    print("| input | size | records | ours (s) | caliper-reader (s) | caliper-reader / ours | Thicket reader (s) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, folder in cases:
        files = sorted(str(f) for f in pathlib.Path(folder).rglob("*.cali"))

        def ours(folder=folder):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return extrap_plugins.read(folder, reader="caliper", executor="serial")

        def peer(files=files):
            count = 0
            for file in files:
                reader = caliperreader.CaliperReader()
                reader.read(file)
                count += len(reader.records)
            return count

        def thicket(files=files):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                Thicket.from_caliperreader(files, disable_tqdm=True)

        ours()
        records, theirs = peer(), best(peer)
        mine = best(ours)
        try:
            tk = "n/a"
            if Thicket is not None:  # once: tens of seconds on the large inputs
                start = time.process_time()
                thicket()
                tk = f"{time.process_time() - start:.3f}"
        except Exception as error:  # noqa: BLE001 - Thicket's failure is a result of the comparison
            tk = f"fails ({type(error).__name__})"
        size = sum(pathlib.Path(f).stat().st_size for f in files) / 1e6
        print(f"| {label} | {size:.2f} MB | {records:,} | {mine:.3f} | {theirs:.3f} | {theirs / mine:.1f}x | {tk} |")
    scratch.cleanup()


def time_ours(repeat: int) -> tuple[float, float, object]:
    import extrap_plugins

    best_read = best_model = float("inf")
    models = None
    for _ in range(repeat):
        start = time.perf_counter()
        experiment = extrap_plugins.read(DATA, executor="serial")
        read = time.perf_counter()
        models = extrap_plugins.model(experiment, executor="serial")
        done = time.perf_counter()
        best_read, best_model = min(best_read, read - start), min(best_model, done - read)
    return best_read, best_model, models


def time_cli(repeat: int, executor: str) -> float:
    exe = pathlib.Path(sys.executable).with_name("extrap-plugins")
    command = [str(exe), "model", str(DATA), "--executor", executor]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def time_our_modeling(repeat: int) -> tuple[float, float] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from thicket import Thicket
    except ImportError:
        return None
    from extrap_plugins.thicket import Modeling

    best_read = best_model = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tk = Thicket.from_caliperreader(FILES, disable_tqdm=True)
        read = time.perf_counter()
        Modeling(tk, "jobsize", executor="serial").produce_models()
        done = time.perf_counter()
        best_read, best_model = min(best_read, read - start), min(best_model, done - read)
    return best_read, best_model


def time_thicket(python: str | None, repeat: int) -> dict | None:
    if not python or not pathlib.Path(python).exists():
        return None
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        out = subprocess.run([python, "-c", THICKET_SCRIPT, *FILES], check=True, capture_output=True, text=True)
        wall = time.perf_counter() - start
        result = json.loads(out.stdout.strip().splitlines()[-1])
        result["wall"] = wall
        if best is None or result["read"] + result["model"] < best["read"] + best["model"]:
            best = result
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_python = str(ROOT / ".." / "venv-thicket" / "bin" / "python")
    parser.add_argument("--thicket-python", default=os.environ.get("THICKET_PYTHON", default_python))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--models", action="store_true", help="print the models side by side")
    parser.add_argument("--read", action="store_true", help="time reading alone, on real and large inputs")
    parser.add_argument("--regions", type=int, default=2000, help="regions of the large spot inputs (--read)")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"no data: {DATA}", file=sys.stderr)
        return 1
    if args.read:
        time_reads(args.regions, args.repeat)
        return 0
    read, model, models = time_ours(args.repeat)
    cli = time_cli(args.repeat, "serial")
    cli_auto = time_cli(args.repeat, "auto")
    ours_on_thicket = time_our_modeling(args.repeat)
    thicket = time_thicket(args.thicket_python, args.repeat)
    extrap_total = thicket["read"] + thicket["model"] if thicket else None

    def ratio(seconds):
        return f"{extrap_total / seconds:.1f}x" if extrap_total else "n/a"

    print(f"{len(models)} models (45 call paths x 4 metrics) of five LULESH runs; best of {args.repeat}\n")
    print("| case | read (s) | model (s) | read + model (s) | Thicket + Extra-P / this |")
    print("|---|---:|---:|---:|---:|")
    print(f"| extrap-plugins read + model (in process) | {read:.3f} | {model:.3f} | {read + model:.3f} | "
          f"{ratio(read + model)} |")
    print(f"| extrap-plugins CLI, --executor serial (fresh process, imports included) | | | {cli:.3f} | "
          f"{ratio(cli)} |")
    print(f"| extrap-plugins CLI, default executor (auto: 2 worker processes for 5 runs) | | | {cli_auto:.3f} | "
          f"{ratio(cli_auto)} |")
    if ours_on_thicket:
        r, m = ours_on_thicket
        print(f"| Thicket reader + extrap_plugins.thicket.Modeling | {r:.3f} | {m:.3f} | {r + m:.3f} | "
              f"{ratio(r + m)} |")
    if thicket:
        print(f"| Thicket reader + thicket.model_extrap.Modeling (Extra-P 4.2.5) | {thicket['read']:.3f} | "
              f"{thicket['model']:.3f} | {extrap_total:.3f} | 1.0x |")
        print(f"\nThicket + Extra-P as a fresh process: {thicket['wall']:.2f} s "
              f"(imports {thicket['import']:.2f} s); extrap-plugins CLI: {cli:.2f} s")
    else:
        print("\nThicket + Extra-P: not installed (--thicket-python)")
    if args.models and thicket:
        print("\n| call path | extrap-plugins (default modeler) | Thicket + Extra-P 4.2.5 |")
        print("|---|---|---|")
        for m in models:
            if m.metric != "Avg time/rank":
                continue
            theirs = thicket["models"].get(f"{m.callpath}|{m.metric}", "")
            print(f"| `{m.callpath}` | `{m.formula}` | `{_short(theirs)}` |")
    return 0


def _short(function: str) -> str:
    """Extra-P's full-precision text in four significant digits, for the table."""
    out = []
    for token in function.split(" "):
        try:
            out.append(f"{float(token):.4g}")
        except ValueError:
            out.append(token)
    return " ".join(out).replace("+ -", "- ")


if __name__ == "__main__":
    sys.exit(main())
