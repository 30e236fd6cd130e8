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
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"no data: {DATA}", file=sys.stderr)
        return 1
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
