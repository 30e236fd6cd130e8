"""Real data, held out: fit all but the largest value of a parameter, predict the largest (issue 19).

    python benchmarks/real.py                 # or: python benchmarks/robustness.py --real
    python benchmarks/real.py --modelers default,golden

Data (``../shared/data/extrap/``, see ``../shared/data/README.md``):

``relearn 2p``
    ``text/mpa/relearn_data.txt``: RELeARN (Extra-P's GPR study), 14 regions, p = 32..512 x
    n = 5000..9000, 2 repetitions.  Two-parameter models on the 4 x 5 grid without p = 512
    (predict the 5 points at p = 512) and on the 5 x 4 grid without n = 9000.
``relearn p-lines``, ``relearn n-lines``
    The same data as one-parameter lines: along p at each n (70 lines, 4 points fitted,
    p = 512 predicted) and along n at each p (70 lines, n = 9000 predicted).
``mpi``
    ``mpi_data.csv``: per-collective statistics of Intel MPI and Open MPI at 32..512 ranks
    (the segmented-modeling paper's case study); metrics ``mean`` and ``median``,
    one value per point; 512 predicted from 32..256.
``lulesh (Caliper)``
    ``caliper/thicket/mpi_scaling_cali``: LULESH regions at 27, 64, 125, 216, 343 ranks (one run
    each; ``Min/Max/Avg time/rank`` and ``Total time``); 343 predicted from 27..216.

Score: relative error of the prediction against the measured mean at each held-out point;
share within +-10 % and median, ours beside Extra-P 4.2.5 (basic, refining) on the same
files; "constant" = share of models that are a constant.  Series whose held-out values are 0
(one RELeARN region is all zeros) are left out.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after the installed package: the layout maps readers/ and instrument/ into it
sys.path.insert(0, str(ROOT / "benchmarks"))

import extrap_plugins  # noqa: E402
from accuracy import extrap_python, write_text  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "extrap"
CALIPER = ROOT.parent / "shared" / "data" / "caliper" / "thicket"


def parse_text(path):
    """Extra-P text file -> (parameters, points (n, m), {(region, metric): values (n, reps)})."""
    parameters, points, series = [], [], {}
    region, metric, rows = None, None, None
    for line in pathlib.Path(path).read_text().splitlines():
        line = line.strip()
        if line.startswith("PARAMETER"):
            parameters.append(line.split()[1])
        elif line.startswith("POINTS"):
            for group in re.findall(r"\(([^)]*)\)", line):
                points.append([float(v) for v in group.split()])
        elif line.startswith("REGION"):
            region = line[len("REGION"):].strip()
        elif line.startswith("METRIC"):
            metric = line.split(None, 1)[1].strip()
        elif line.startswith("DATA"):
            rows = series.setdefault((region, metric), [])
            rows.append([float(v) for v in line.split()[1:]])
    out = {}
    for key, rows in series.items():
        width = min(len(r) for r in rows)
        out[key] = np.array([r[:width] for r in rows])
    return tuple(parameters), np.array(points), out


def cases():
    """(name, parameters, points, {series name: values}, held-out mask) per fitted set."""
    result = []
    parameters, X, series = parse_text(DATA / "text" / "mpa" / "relearn_data.txt")
    named = {f"{r}|{m}": v for (r, m), v in series.items()}
    for param, name in enumerate(parameters):
        result.append((f"relearn 2p, {name} held out", parameters, X, named, X[:, param] == X[:, param].max()))
    for param, name in enumerate(parameters):
        other = 1 - param
        for value in np.unique(X[:, other]):
            keep = X[:, other] == value
            x = X[keep][:, [param]]
            lines = {f"{k}|{parameters[other]}={value:g}": v[keep] for k, v in named.items()}
            result.append((f"relearn {name}-lines", (name,), x, lines, x[:, 0] == x[:, 0].max()))
    by_series: dict[str, dict[float, dict[str, float]]] = {}
    with open(DATA / "mpi_data.csv") as stream:
        for rec in csv.DictReader(stream):
            for metric in ("mean", "median"):
                key = f"{rec['mpi']} {rec['variable']}|{metric}"
                by_series.setdefault(key, {})[float(rec["Ranks"])] = float(rec[metric])
    groups: dict[tuple, dict[str, np.ndarray]] = {}
    for key, values in by_series.items():
        ranks = tuple(sorted(values))
        groups.setdefault(ranks, {})[key] = np.array([[values[r]] for r in ranks])
    for ranks, named_mpi in groups.items():
        x = np.array(ranks)[:, None]
        result.append(("mpi collectives, p-lines", ("p",), x, named_mpi, x[:, 0] == x[:, 0].max()))
    lulesh = caliper_lines()
    if lulesh is not None:
        result.append(lulesh)
    return result


def caliper_lines():
    """LULESH under Caliper at 27...343 ranks (Thicket's test data): every region and metric, one run each."""
    folder = CALIPER / "mpi_scaling_cali"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            experiment = extrap_plugins.read(str(folder), parameters="jobsize")
    except Exception as error:  # caliper-reader not installed: the row is left out, said so
        print(f"(LULESH row left out: {error})", file=sys.stderr)
        return None
    x = experiment.points()
    named = {}
    for callpath in experiment.callpaths:
        for metric in experiment.metrics:
            coordinates, values = experiment.values_of(callpath, metric)
            if coordinates.shape[0] != x.shape[0]:
                continue
            order = np.lexsort(coordinates.T[::-1])
            named[f"{callpath}|{metric}"] = values[order][:, None]
    return ("lulesh (Caliper), p-lines", ("p",), x, named, x[:, 0] == x[:, 0].max())


def merge(all_cases):
    """Cases of the same name become one table row."""
    rows: dict[str, list] = {}
    for case in all_cases:
        rows.setdefault(case[0], []).append(case)
    return rows


def write_cases(all_cases, folder):
    """Every case's training points as an Extra-P text file; the held-out truth per series."""
    files, truth, ids = [], {}, []
    for c, (name, parameters, X, named, held) in enumerate(all_cases):
        train = X[~held]
        regions = []
        for s, (key, V) in enumerate(named.items()):
            sid = f"c{c}s{s}"
            held_mean = V[held].mean(axis=1)
            if not np.all(np.isfinite(held_mean)) or np.any(held_mean == 0):
                continue  # relative error undefined (RELeARN's all-zero region)
            regions.append((sid, V[~held]))
            truth[sid] = (name, key, X[held], V[held].mean(axis=1))
            ids.append(sid)
        path = os.path.join(folder, f"case{c}.txt")
        write_text(path, parameters, train, regions)
        files.append({"path": path, "predict": X[held].tolist()})
    return files, truth, ids


def run(python, ours, extrap, options, verbose=0, reference="Extra-P basic"):
    folder = tempfile.mkdtemp(prefix="real-")
    files, truth, ids = write_cases(cases(), folder)
    predictions: dict[str, dict[str, np.ndarray]] = {}
    formulas: dict[str, dict[str, str]] = {}

    def extrap_one(modeler):
        task = os.path.join(folder, f"task-{modeler}.json")
        with open(task, "w") as stream:
            json.dump({"files": files, "modeler": modeler}, stream)
        done = subprocess.run([python, str(ROOT / "benchmarks" / "_extrap_runner.py"), task],
                              capture_output=True, text=True)
        if done.returncode != 0:
            print(f"Extra-P ({modeler}) failed: {done.stderr[-2000:]}", file=sys.stderr)
            return modeler, None
        return modeler, json.loads(done.stdout)

    with ThreadPoolExecutor(max_workers=max(1, len(extrap))) as pool:
        pending = pool.map(extrap_one, extrap) if extrap else []
        for modeler in ours:
            predictions[modeler], formulas[modeler] = {}, {}
            for f in files:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    experiment = extrap_plugins.read(f["path"], reader="text")
                    models = extrap_plugins.model(experiment, modeler, **options)
                for m in models.models:
                    predictions[modeler][m.callpath] = np.asarray(m.predict(np.array(f["predict"])), dtype=float)
                    formulas[modeler][m.callpath] = m.formula
        for modeler, output in pending:
            if output is None:
                continue
            who = f"Extra-P {modeler}"
            predictions[who] = {m["callpath"].strip(): np.array(m["predictions"], dtype=float)
                                for m in output["models"]}
            formulas[who] = {m["callpath"].strip(): m["function"] for m in output["models"]}
    for f in files:
        os.unlink(f["path"])
    whos = list(predictions)
    print("\n## Real data: fit without the largest value of a parameter, predict it\n")
    print("share of held-out points within ±10 % / median relative error / share of constant models\n")
    print("| data | series | held-out points | " + " | ".join(whos) + " |")
    print("|" + "---|" * (3 + len(whos)))
    totals = {w: [] for w in whos}
    constants = {w: [0, 0] for w in whos}
    for name in dict.fromkeys(t[0] for t in truth.values()):
        sids = [s for s in ids if truth[s][0] == name]
        n_points = sum(len(truth[s][3]) for s in sids)
        cells = [name, str(len(sids)), str(n_points)]
        for w in whos:
            e, const = [], 0
            for s in sids:
                p = predictions[w].get(s)
                t = truth[s][3]
                if p is None:
                    e.extend([np.inf] * len(t))
                    continue
                with np.errstate(all="ignore"):
                    e.extend(np.abs(p - t) / np.abs(t))
                const += int(is_constant(formulas[w][s]))
            e = np.array(e)
            totals[w].extend(e)
            constants[w][0] += const
            constants[w][1] += len(sids)
            cells.append(f"{100 * np.mean(e <= 0.10):.1f} % / {100 * np.median(e):.1f} % / "
                         f"{100 * const / len(sids):.0f} %")
        print("| " + " | ".join(cells) + " |")
    cells = ["**all held-out points**", "", str(len(totals[whos[0]]))]
    for w in whos:
        e = np.array(totals[w])
        cells.append(f"**{100 * np.mean(e <= 0.10):.1f} %** / {100 * np.median(e):.1f} % / "
                     f"{100 * constants[w][0] / constants[w][1]:.0f} %")
    print("| " + " | ".join(cells) + " |")
    if verbose:
        show_differences(ids, truth, predictions, formulas, ours[0] if ours else None, verbose, reference)


def show_differences(ids, truth, predictions, formulas, ours, count, ref="Extra-P basic"):
    """The ``count`` series where ours is furthest behind ``ref`` (Extra-P basic, or another of ours)."""
    print(f"\nlargest differences between ours and {ref}:\n")
    if ref not in predictions or ours is None:
        return
    diff = []
    for s in ids:
        t = truth[s][3]
        with np.errstate(all="ignore"):
            a = np.median(np.abs(predictions[ours][s] - t) / np.abs(t))
            b = np.median(np.abs(predictions[ref][s] - t) / np.abs(t)) if s in predictions[ref] else np.inf
        diff.append((a - b, s, a, b))
    for _, s, a, b in sorted(diff, reverse=True)[:count]:
        print(f"- {truth[s][0]} `{truth[s][1]}`: {ours} `{formulas[ours][s]}` ({100 * a:.1f} %), "
              f"{ref} `{formulas[ref].get(s)}` ({100 * b:.1f} %)")


def is_constant(formula: str) -> bool:
    try:
        float(formula.replace(" ", ""))
        return True
    except ValueError:
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modelers", default="default,golden,refining")
    parser.add_argument("--extrap-modelers", default="basic,refining")
    parser.add_argument("--extrap-python", default=None)
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--show", type=int, default=10, help="largest losses of ours to print")
    parser.add_argument("--reference", default="Extra-P basic",
                        help="whom the losses of the first of ours are against (Extra-P basic, or one of ours)")
    args = parser.parse_args(argv)
    from robustness import ours_modelers

    python = extrap_python(args.extrap_python or os.environ.get("EXTRAP_PYTHON")
                           or str(ROOT.parent / "venv-extrap" / "bin" / "python"))
    ours = ours_modelers(args.modelers.split(","))
    extrap = [m for m in args.extrap_modelers.split(",") if m] if python else []
    run(python, ours, extrap, dict(item.split("=", 1) for item in args.option), args.show, args.reference)


if __name__ == "__main__":
    main()
