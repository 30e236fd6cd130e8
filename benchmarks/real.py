"""Real data, held out: fit all but the largest value of a parameter, predict the largest (issue 19).

    python benchmarks/real.py                 # or: python benchmarks/robustness.py --real
    python benchmarks/real.py --modelers default,golden
    python benchmarks/real.py --sets all --modelers default --extrap-modelers basic --show 10   # every input: ~4 min

Besides the table of every modeler (share within +-10 % of the held-out points, pooled), the first of ours is
set beside ``--reference`` (Extra-P basic, its default) per series: median, 90th percentile and share within
+-10 % of the relative errors, the ratio of the medians; ``--show N`` lists the N series where ours loses
most (by how many times further off), with both formulas, the fitted measurements and the held-out ones.

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

``relearn 2p, corner held out``
    RELeARN fitted on the 4 x 4 grid without p = 512 and without n = 9000, the corner (512, 9000) predicted.
``Extra-P examples, 1p / 2p / 3-4p``
    Every input of Extra-P's own test data that we read (``text/``, ``json/``, ``jsonlines/``, ``talpas/``,
    ``input/``, ``experiments/``; not the ``*neg*`` files, RELeARN and ``mpi_data.csv``, which have rows of
    their own), each series once (the same data in several formats count once): one row holds the largest
    value of one parameter out (every parameter in turn), one the corner (every parameter's largest value
    out of the fit, the point where all are largest predicted, where it was measured).
``CUBE single_parameter``, ``CUBE simple_threaded``
    Score-P CUBE experiment sets (``../shared/data/cube/extrap/``): ``mm.x1..2000`` (9 runs) and
    ``example.f1..5`` (5 runs), every call path and metric, the largest value predicted.

A parameter's largest value is held out only where at least 3 other values of it stay in the fit (so
``cube/extrap/multi_parameter`` and ``experiment_3_mp`` with 3 values per parameter, the CUDA and
RAJAPerf sets with 2, are not used; ``--sets`` prints what was left out and why).

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
import shutil
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
CUBE = ROOT.parent / "shared" / "data" / "cube" / "extrap"
EXAMPLE_FOLDERS = ("text", "json", "jsonlines", "talpas", "input", "experiments")
OWN_ROWS = ("relearn_data.txt", "mpi_data.csv")  # read by cases() into rows of their own
MIN_FITTED_VALUES = 3  # a parameter's largest value is held out only where this many others stay in the fit
SETS = ("classic", "corner", "examples", "cube")
NOT_READ = ("cube/extrap/cuda_callsite_data: 2 runs (s = 64, 128), nothing to fit once the larger is held out",
            "caliper/thicket/rajaperf: 2 problem sizes (1,048,576 and 2,097,152), nothing to fit once the larger is "
            "held out")
"""Multi-run sets with a varying parameter that ``cases`` does not read (too few values), said so with ``--sets``."""
EXACT = 1e-4  # relative errors below 0.01 % count as 0.01 % in the ratio of medians (both exact: 1.00x, not 0/0)


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


def cases(sets=("classic",), skipped=None):
    """(name, parameters, points, {series name: values}, held-out mask[, fitted mask]) per fitted set.

    ``sets`` chooses the data: ``classic`` (RELeARN, the MPI collectives, LULESH: the rows the README's
    figures were first measured on), ``corner`` (RELeARN's corner), ``examples`` (Extra-P's test inputs),
    ``cube`` (Score-P CUBE sets).  Without a fitted mask the fit is every point not held out.
    ``skipped``, a list, collects the inputs left out with the reason.
    """
    skipped = [] if skipped is None else skipped
    result = []
    parameters, X, series = parse_text(DATA / "text" / "mpa" / "relearn_data.txt")
    named = {f"{r}|{m}": v for (r, m), v in series.items()}
    if "corner" in sets:
        for label, fitted, held in holdouts(X, parameters):
            if label == "corner":
                result.append(("relearn 2p, corner held out", parameters, X, named, held, fitted))
    if "examples" in sets:
        result.extend(example_cases(skipped))
    if "cube" in sets:
        result.extend(cube_cases(skipped))
        skipped.extend(NOT_READ)
    if "classic" not in sets:
        return result
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


def holdouts(X, parameters):
    """(label, fitted mask, held-out mask) for each way of holding the largest values of ``X`` out.

    One per parameter whose largest value leaves at least ``MIN_FITTED_VALUES`` others in the fit
    (label: the parameter's name; the other parameters keep all their values), and with two or more
    parameters ``corner``: every parameter's largest value out of the fit, the points where all are
    largest predicted (only where such a point was measured and every parameter keeps enough values).
    """
    top = X.max(axis=0)
    at_top = X == top
    enough = [len(np.unique(X[~at_top[:, k], k])) >= MIN_FITTED_VALUES for k in range(X.shape[1])]
    result = []
    for k, name in enumerate(parameters):
        if enough[k]:
            result.append((name, ~at_top[:, k], at_top[:, k]))
    if X.shape[1] >= 2 and all(enough):
        fitted, held = ~at_top.any(axis=1), at_top.all(axis=1)
        fitted_values = [len(np.unique(X[fitted, k])) for k in range(X.shape[1])]
        if held.any() and min(fitted_values) >= MIN_FITTED_VALUES:
            result.append(("corner", fitted, held))
    return result


def experiment_series(experiment, source):
    """[(parameters, points, {series name: values (n_points, n_reps), NaN-padded})], one per set of points."""
    parameters = tuple(str(p) for p in experiment.parameters)
    groups = []
    for group in experiment.series_groups():
        named = {f"{source}|{callpath}|{metric}": group.values[i] for i, (callpath, metric) in enumerate(group.keys)}
        groups.append((parameters, group.points, named))
    return groups


def series_cases(row, parameters, X, named, skipped, source, generic=False):
    """Cases for one set of points: each parameter's largest value held out, and the corner.

    ``generic`` names the rows by the number of parameters and the kind of hold-out (``one parameter``
    pools every parameter's), not by the parameters' names, so that inputs of different names share rows.
    """
    found = holdouts(X, parameters)
    if not found:
        counts = ", ".join(f"{p} {len(np.unique(X[:, k]))}" for k, p in enumerate(parameters))
        skipped.append(f"{source}: too few values per parameter to hold the largest out ({counts})")
        return []
    m = len(parameters)
    size = f"{m}p" if m < 3 else "3-4p"
    result = []
    for label, fitted, held in found:
        if generic:
            kind = "corner" if label == "corner" else ("largest held out" if m == 1 else "one parameter held out")
            name = f"{row} {size}, {kind}"
        else:
            name = f"{row}, {label} held out"
        result.append((name, parameters, X, named, held, fitted))
    return result


def _read_quietly(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return extrap_plugins.read(str(path), **options)


def example_inputs():
    """Extra-P's own test inputs, in name order: files, and the saved experiments that are folders."""
    found = []
    for folder in EXAMPLE_FOLDERS:
        for path in sorted((DATA / folder).rglob("*")):
            if "neg" in path.name or path.name in OWN_ROWS or path.name.lower().startswith("readme"):
                continue
            if path.is_file() and path.parent.name.startswith("experiment_3"):
                continue  # inside a saved experiment's folder: the folder is the input
            if path.is_file() or path.name.startswith("experiment_3"):
                found.append(path)
    return found


def example_cases(skipped):
    """Every series of Extra-P's test inputs, each once, as held-out cases (rows ``Extra-P examples ...``)."""
    seen = set()
    result = []
    for path in example_inputs():
        source = str(path.relative_to(DATA))
        try:
            experiment = _read_quietly(path)
        except Exception as error:  # noqa: BLE001 - an input we refuse is listed, not modeled
            skipped.append(f"{source}: not read ({str(error).splitlines()[0][:120]})")
            continue
        for parameters, X, named in experiment_series(experiment, source):
            unique = {}
            for key, V in named.items():
                fingerprint = (len(parameters), X.tobytes(), np.nan_to_num(V, nan=-1.2345e300).tobytes())
                if fingerprint not in seen:
                    seen.add(fingerprint)
                    unique[key] = V
            if unique:
                result.extend(series_cases("Extra-P examples", parameters, X, unique, skipped, source,
                                           generic=True))
    return result


def cube_cases(skipped):
    """The Score-P CUBE experiment sets with one varying parameter (rows ``CUBE ...``)."""
    result = []
    for name in ("single_parameter", "simple_threaded", "multi_parameter"):
        source = f"cube/extrap/{name}"
        try:
            experiment = _read_quietly(CUBE / name, reader="cube")
        except Exception as error:  # noqa: BLE001 - pycubexr missing: the row is left out, said so
            skipped.append(f"{source}: not read ({str(error).splitlines()[0][:120]})")
            continue
        for parameters, X, named in experiment_series(experiment, source):
            result.extend(series_cases(f"CUBE {name}", parameters, X, named, skipped, source))
    return result


def merge(all_cases):
    """Cases of the same name become one table row."""
    rows: dict[str, list] = {}
    for case in all_cases:
        rows.setdefault(case[0], []).append(case)
    return rows


def write_cases(all_cases, folder):
    """Every case's training points as an Extra-P text file; the held-out truth per series."""
    files, truth, ids = [], {}, []
    for c, case in enumerate(all_cases):
        name, parameters, X, named, held = case[:5]
        fitted = case[5] if len(case) > 5 else ~held
        train = X[fitted]
        regions = []
        for s, (key, V) in enumerate(named.items()):
            sid = f"c{c}s{s}"
            with np.errstate(all="ignore"):
                held_mean = np.nanmean(V[held], axis=1) if np.isnan(V).any() else V[held].mean(axis=1)
            if not np.all(np.isfinite(held_mean)) or np.any(held_mean == 0) or not np.isfinite(V[fitted]).any():
                continue  # relative error undefined (RELeARN's all-zero region)
            regions.append((sid, V[fitted]))
            truth[sid] = (name, key, X[held], held_mean, train, V[fitted])
            ids.append(sid)
        if not regions:
            continue
        path = os.path.join(folder, f"case{c}.txt")
        write_text(path, parameters, train, regions)
        files.append({"path": path, "predict": X[held].tolist()})
    return files, truth, ids


def run(python, ours, extrap, options, verbose=0, reference="Extra-P basic", sets=("classic",)):
    folder = tempfile.mkdtemp(prefix="real-")
    skipped = []
    files, truth, ids = write_cases(cases(sets, skipped), folder)
    for line in skipped:
        print(f"(left out: {line})", file=sys.stderr)
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
    shutil.rmtree(folder, ignore_errors=True)
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
    if ours and reference in predictions and reference != ours[0]:
        print_versus(ids, truth, predictions, ours[0], reference)
    if verbose:
        show_differences(ids, truth, predictions, formulas, ours[0] if ours else None, verbose, reference)


def relative_errors(prediction, measured):
    """|prediction - measured| / |measured| per held-out point; a missing or non-finite prediction is inf."""
    if prediction is None:
        return np.full(len(measured), np.inf)
    with np.errstate(all="ignore"):
        error = np.abs(np.asarray(prediction, dtype=float) - measured) / np.abs(measured)
    return np.where(np.isfinite(error), error, np.inf)


def summary(errors):
    """(median, 90th percentile, share within 10 %) of pooled relative errors (inf counts as a miss)."""
    e = np.asarray(errors, dtype=float)
    if e.size == 0:
        return np.nan, np.nan, np.nan
    median, p90 = np.quantile(e, [0.5, 0.9], method="inverted_cdf")
    return float(median), float(p90), float(np.mean(e <= 0.10))


def percent(value):
    return "no model" if not np.isfinite(value) else f"{100 * value:.1f} %"


def series_error(prediction, measured):
    """One series' relative error: the median over its held-out points (inf without a usable prediction)."""
    return float(np.median(relative_errors(prediction, measured)))


def family(name):
    """Which total a row counts in: Extra-P's test inputs (mostly generated functions) or measured applications."""
    return "Extra-P's test inputs" if name.startswith("Extra-P examples") else "measured applications"


def versus_rows(ids, truth, predictions, ours, ref):
    """Per table row, per family and over all: (label, series, points, ours' and ref's summaries over the
    series' errors, the ratio of the medians, series without a usable prediction of ours and of ref).

    Each series counts once (its error the median over its held-out points), so that a four-parameter input
    with 125 held-out points weighs as much as a RELeARN line with one.
    """
    names = list(dict.fromkeys(truth[s][0] for s in ids))
    groups = [(name, [s for s in ids if truth[s][0] == name]) for name in names]
    families = list(dict.fromkeys(family(name) for name in names))
    groups += [(f"**all {f}**", [s for s in ids if family(truth[s][0]) == f]) for f in families]
    groups.append(("**all**", list(ids)))
    rows = []
    for label, sids in groups:
        errors = {who: [series_error(predictions[who].get(s), truth[s][3]) for s in sids] for who in (ours, ref)}
        a, b = summary(errors[ours]), summary(errors[ref])
        ratio = max(a[0], EXACT) / max(b[0], EXACT)
        rows.append((label, len(sids), sum(len(truth[s][3]) for s in sids), a, b, ratio,
                     int(np.sum(np.isinf(errors[ours]))), int(np.sum(np.isinf(errors[ref])))))
    return rows


def print_versus(ids, truth, predictions, ours, ref):
    """The table of issue H5: ours beside ``ref``, median, 90th percentile and share within +-10 %."""
    print(f"\n### {ours} beside {ref}: relative error at the held-out points\n")
    print("per series (call path and metric; its error the median over its held-out points): median / 90th "
          f"percentile / share within ±10 %; ratio = median of {ours} / median of {ref} (each at least 0.01 %, "
          "so that two exact fits are 1.00×); "
          "no model = series without a usable prediction\n")
    print(f"| data | series | points | {ours} | {ref} | ratio | no model ({ours} / {ref}) |")
    print("|---|---|---|---|---|---|---|")
    for label, n, points, a, b, ratio, miss_a, miss_b in versus_rows(ids, truth, predictions, ours, ref):
        cells = [label, str(n), str(points),
                 f"{percent(a[0])} / {percent(a[1])} / {100 * a[2]:.1f} %",
                 f"{percent(b[0])} / {percent(b[1])} / {100 * b[2]:.1f} %",
                 f"{ratio:.2f}×", f"{miss_a} / {miss_b}"]
        print("| " + " | ".join(cells) + " |")


def log_miss(prediction, measured, wrong_sign=10.0):
    """How far a prediction is off, symmetric in over- and under-prediction: the mean over the held-out points of
    ``|log(prediction / measured)|``; a prediction of the wrong sign, or none, counts ``wrong_sign``."""
    if prediction is None:
        return wrong_sign
    with np.errstate(all="ignore"):
        ratio = np.asarray(prediction, dtype=float) / measured
        miss = np.where(ratio > 0, np.abs(np.log(ratio)), wrong_sign)
    return float(np.mean(np.where(np.isfinite(miss), miss, wrong_sign)))


def show_differences(ids, truth, predictions, formulas, ours, count, ref="Extra-P basic"):
    """The ``count`` series where ours is furthest behind ``ref`` (Extra-P basic, or another of ours).

    Ranked by the difference of :func:`log_miss`, i.e. by how many times further off ours is: a factor of 2
    over counts as much as a factor of 2 under (the relative error caps an under-prediction at 100 % and lets
    an over-prediction grow without bound, so ranking by its difference lists series where both are useless).
    """
    print(f"\nlargest differences between ours and {ref}:\n")
    if ref not in predictions or ours is None:
        return
    diff = []
    for s in ids:
        t = truth[s][3]
        a, b = series_error(predictions[ours].get(s), t), series_error(predictions[ref].get(s), t)
        diff.append((log_miss(predictions[ours].get(s), t) - log_miss(predictions[ref].get(s), t), s, a, b))
    for _, s, a, b in sorted(diff, reverse=True)[:count]:
        name, key, held_points, measured, fitted_points, fitted_values = truth[s]
        print(f"- {name} `{key}`: {ours} `{formulas[ours][s]}` ({100 * a:.1f} %), "
              f"{ref} `{formulas[ref].get(s)}` ({100 * b:.1f} %)")
        print(f"  - fitted: {measured_text(fitted_points, fitted_values)}")
        predicted = [np.asarray(predictions[w].get(s, [np.nan] * len(measured)), dtype=float) for w in (ours, ref)]
        print("  - held out: " + "; ".join(
            f"{point_text(x)} measured {v:.4g}, {ours} {p:.4g}, {ref} {q:.4g}"
            for x, v, p, q in zip(held_points, measured, *predicted)))


def point_text(x):
    return "(" + ", ".join(f"{v:g}" for v in x) + ")"


def measured_text(points, values):
    """Each point's mean and, with repetitions, their range: ``(32, 5000) 1.25 [1.2-1.3]``."""
    parts = []
    for x, row in zip(points, values):
        row = row[~np.isnan(row)]
        text = f"{point_text(x)} {row.mean():.4g}"
        if row.size > 1:
            text += f" [{row.min():.4g}-{row.max():.4g}]"
        parts.append(text)
    return "; ".join(parts)


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
    parser.add_argument("--sets", default="classic",
                        help="comma-separated data sets: " + ", ".join(SETS) + ", or all (default: classic, "
                             "the rows of the README's first table)")
    args = parser.parse_args(argv)
    sets = SETS if args.sets == "all" else tuple(args.sets.split(","))
    unknown = sorted(set(sets) - set(SETS))
    if unknown:
        parser.error(f"unknown set {unknown[0]!r}: expected some of {', '.join(SETS)} or all")
    from robustness import ours_modelers

    python = extrap_python(args.extrap_python or os.environ.get("EXTRAP_PYTHON")
                           or str(ROOT.parent / "venv-extrap" / "bin" / "python"))
    ours = ours_modelers(args.modelers.split(","))
    extrap = [m for m in args.extrap_modelers.split(",") if m] if python else []
    run(python, ours, extrap, dict(item.split("=", 1) for item in args.option), args.show, args.reference, sets)


if __name__ == "__main__":
    main()
