"""Accuracy of the modelers on synthetic functions, beside Extra-P 4.2.5.

A script, not a test::

    python benchmarks/accuracy.py                       # default sample sizes
    python benchmarks/accuracy.py --samples 2000 --modelers default,golden,exhaustive
    EXTRAP_PYTHON=../venv-extrap/bin/python python benchmarks/accuracy.py

Scenarios (protocols of the seed papers; see benchmarks/README.md):

``eq3-m1``, ``eq3-m2``
    Calotoiu et al. 2016, Eq. 3: ``c0 + c1 (f)^{0|1} (g)^{0|1} + c2 (f)^{0|1} (g)^{0|1}`` with
    ``f = x^i log2^j(x)``, ``g = y^k log2^l(y)``, i, k from Extra-P's I, j, l from
    J = {0, 1, 2}, coefficients uniform in (0, 100); 5 (m = 1) or 5 x 5 (m = 2)
    points p = 4..64, s = 10..50, no noise.  Score: share of models identical to
    the true function, i.e. predicting (128, 60) and (512, 200) within 0.1 %.
``noise-m1``, ``noise-m2``, ``noise-m3``
    Ritter et al. 2020, Section III-B: one factor ``x^i log2^j(x)`` per parameter, i from
    {0, 1, 2, 3}, j from {0, 1, 2}, combined by a random additive/multiplicative
    template, coefficients uniform in (0.01, 1000); full factorial 5^m points
    p = 4..64, s = 10..50, n = 1000..5000; 4 repetitions with uniform +-5 %
    noise.  Score: share predicting the next point (128, 60, 6000) within
    +-5 %, +-10 %, +-20 %.
``sparse-m3``
    As ``noise-m3``, but only lines of five values per parameter through the
    cheapest corner plus the 3 cheapest other points (cost = p * f).

The Extra-P column needs Extra-P 4.2.5 in a separate Python: its path from
``--extrap-python`` or ``EXTRAP_PYTHON``; otherwise it says "not installed".
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after the installed package: the layout maps readers/ and instrument/ into it

import extrap_plugins  # noqa: E402
from extrap_plugins.modelers.hypotheses import DEFAULT_EXPONENTS, parse_exponents  # noqa: E402

VALUES = {
    "p": np.array([4.0, 8, 16, 32, 64]),
    "s": np.array([10.0, 20, 30, 40, 50]),
    "n": np.array([1000.0, 2000, 3000, 4000, 5000]),
}
NEXT = {"p": 128.0, "s": 60.0, "n": 6000.0}
FAR = {"p": 512.0, "s": 200.0, "n": 20000.0}
NAMES = ("p", "s", "n")


@dataclass
class Case:
    """Synthetic functions to model, all measured at the same kind of design."""

    name: str
    parameters: tuple[str, ...]
    points: list[np.ndarray]  # per function, (n_points, m)
    values: list[np.ndarray]  # per function, (n_points, n_reps)
    truth: np.ndarray  # (n_functions, n_predict)
    predict: np.ndarray  # (n_predict, m)
    tolerances: tuple[float, ...]
    formulas: list[str]


# ------------------------------------------------------------- generators
def factor(x, i, j):
    return np.power(x, i) * np.power(np.log2(x), j)


def evaluate(function, X):
    """``function = (c0, [(c, [(i, j) per parameter]), ...])`` at X (n, m)."""
    c0, terms = function
    result = np.full(X.shape[0], c0, dtype=float)
    for c, factors in terms:
        value = np.full(X.shape[0], c, dtype=float)
        for column, (i, j) in enumerate(factors):
            value = value * factor(X[:, column], i, j)
        result += value
    return result


def describe(function, names):
    c0, terms = function
    text = f"{c0:.4g}"
    for c, factors in terms:
        parts = [f"{c:.4g}"]
        for name, (i, j) in zip(names, factors):
            if i:
                parts.append(f"{name}^{Fraction(i).limit_denominator(12)}")
            if j:
                parts.append(f"log2({name})^{j:g}")
        text += " + " + "*".join(parts)
    return text


def eq3_function(rng, m, exponents):
    J = (0, 1, 2)
    f = [(float(rng.choice(exponents)), float(rng.choice(J))) for _ in range(m)]
    c = rng.uniform(0, 100, size=3)
    terms = []
    for k in (1, 2):
        use = rng.integers(0, 2, size=m)
        terms.append((c[k], [f[q] if use[q] else (0.0, 0.0) for q in range(m)]))
    return (c[0], terms)


def template_structures(m):
    """Additive/multiplicative combinations of m per-parameter factors (as in Extra-P)."""
    params = list(range(m))
    products = [c for r in range(1, m + 1) for c in itertools.combinations(params, r)]
    structures = []
    for r in range(1, m + 1):
        for chosen in itertools.combinations(products, r):
            used = set(itertools.chain(*chosen))
            if used == set(params):
                structures.append(chosen)
    return structures


def seed002_function(rng, m):
    exponents, log_exponents = (0, 1, 2, 3), (0, 1, 2)
    f = [(float(rng.choice(exponents)), float(rng.choice(log_exponents))) for _ in range(m)]
    structures = template_structures(m)
    structure = structures[rng.integers(len(structures))]
    c = rng.uniform(0.01, 1000, size=len(structure) + 1)
    terms = [(c[k + 1], [f[q] if q in product else (0.0, 0.0) for q in range(m)])
             for k, product in enumerate(structure)]
    return (c[0], terms)


def full_grid(m):
    return np.array(list(itertools.product(*[VALUES[n] for n in NAMES[:m]])), dtype=float)


def sparse_points(function, m, extra=3):
    grid = full_grid(m)
    corner = grid.min(axis=0)
    on_line = np.sum(grid != corner, axis=1) <= 1
    cost = grid[:, 0] * evaluate(function, grid)
    others = np.flatnonzero(~on_line)
    cheapest = others[np.argsort(cost[others], kind="stable")[:extra]]
    return grid[np.sort(np.r_[np.flatnonzero(on_line), cheapest])]


def make_case(name, n, rng, exponents):
    kind, m = name.split("-m")
    m = int(m)
    names = NAMES[:m]
    if kind == "eq3":
        functions = [eq3_function(rng, m, exponents) for _ in range(n)]
        predict = np.array([[NEXT[p] for p in names], [FAR[p] for p in names]])
        noise, reps, tolerances = 0.0, 1, (0.001,)
    else:
        functions = [seed002_function(rng, m) for _ in range(n)]
        predict = np.array([[NEXT[p] for p in names]])
        noise, reps, tolerances = 0.05, 4, (0.05, 0.10, 0.20)
    points, values = [], []
    for function in functions:
        X = sparse_points(function, m) if kind == "sparse" else full_grid(m)
        clean = evaluate(function, X)
        noisy = clean[:, None] * (1.0 + rng.uniform(-noise, noise, size=(X.shape[0], reps)))
        points.append(X)
        values.append(noisy)
    truth = np.array([evaluate(f, predict) for f in functions])
    return Case(name, names, points, values, truth, predict, tolerances, [describe(f, names) for f in functions])


# ---------------------------------------------------------------- running
def experiment_of(case: Case) -> extrap_plugins.Experiment:
    """The functions as one Experiment, call paths f000000, f000001, ...

    Built from integer index columns (the dataclass constructor), so that a
    hundred thousand series do not need ten million call-path strings.
    """
    from extrap_plugins.experiment import Callpath, Metric, Parameter

    sizes = np.array([X.shape[0] * V.shape[1] for X, V in zip(case.points, case.values)])
    coordinates = np.concatenate([np.repeat(X, V.shape[1], axis=0) for X, V in zip(case.points, case.values)])
    value = np.concatenate([V.reshape(-1) for V in case.values])
    repetition = np.concatenate([np.tile(np.arange(V.shape[1], dtype=np.int32), X.shape[0])
                                 for X, V in zip(case.points, case.values)])
    return extrap_plugins.Experiment(
        parameters=tuple(Parameter(p) for p in case.parameters),
        callpaths=[Callpath(f"f{k:06d}") for k in range(len(case.points))],
        metrics=[Metric("time")],
        callpath_index=np.repeat(np.arange(len(case.points), dtype=np.int32), sizes),
        metric_index=np.zeros(value.shape[0], dtype=np.int32),
        coordinates=coordinates,
        repetition=repetition,
        value=value,
    )


def run_ours(case: Case, modeler: str, options: dict) -> tuple[np.ndarray, float]:
    experiment = experiment_of(case)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = extrap_plugins.model(experiment, modeler, **options)
    seconds = time.perf_counter() - start
    by_name = {m.callpath: m for m in models}
    predictions = np.array([by_name[f"f{k:06d}"].predict(case.predict) for k in range(len(case.points))])
    return predictions, seconds


def write_text(path, names, X, series):
    """Extra-P text format: one region per series, all at the points X.

    A series' values are one row per point; NaN marks a repetition the point lacks (rows of unequal
    length, as :meth:`extrap_plugins.experiment.SeriesGroup.values` pads them) and is not written.
    """
    lines = [f"PARAMETER {n}" for n in names] + [""]
    lines += ["POINTS " + " ".join("( " + " ".join(f"{v:g}" for v in row) + " )" for row in X), ""]
    for region, V in series:
        lines += [f"REGION {region}", "METRIC time"]
        lines += ["DATA " + " ".join(repr(float(v)) for v in row if not np.isnan(v)) for row in V]
        lines.append("")
    pathlib.Path(path).write_text("\n".join(lines))


def run_extrap(case: Case, python: str, limit: int) -> tuple[np.ndarray, float, int] | None:
    n = min(limit, len(case.points))
    with tempfile.TemporaryDirectory() as folder:
        by_points: dict[bytes, list[int]] = {}
        for k in range(n):
            by_points.setdefault(case.points[k].tobytes(), []).append(k)
        files = []
        for g, members in enumerate(by_points.values()):
            path = os.path.join(folder, f"set{g}.txt")
            write_text(path, case.parameters, case.points[members[0]], [(f"f{k:06d}", case.values[k]) for k in members])
            files.append(path)
        task = os.path.join(folder, "task.json")
        with open(task, "w") as stream:
            json.dump({"files": files, "predict": case.predict.tolist()}, stream)
        runner = ROOT / "benchmarks" / "_extrap_runner.py"
        done = subprocess.run([python, str(runner), task], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"Extra-P failed: {done.stderr[-2000:]}", file=sys.stderr)
            return None
        output = json.loads(done.stdout)
    by_name = {m["callpath"]: m["predictions"] for m in output["models"]}
    predictions = np.array([by_name.get(f"f{k:06d}", [np.nan] * len(case.predict)) for k in range(n)], dtype=float)
    return predictions, output["seconds"], n


def shares(predictions: np.ndarray, truth: np.ndarray, tolerances) -> list[float]:
    with np.errstate(all="ignore"):
        error = np.abs(predictions - truth) / np.abs(truth)
    worst = np.max(np.where(np.isfinite(error), error, np.inf), axis=1)
    return [100.0 * float(np.mean(worst <= t)) for t in tolerances]


def extrap_python(option: str | None) -> str | None:
    candidate = option or os.environ.get("EXTRAP_PYTHON")
    if not candidate:
        return None
    if not pathlib.Path(candidate).exists():
        return None
    check = subprocess.run([candidate, "-c", "import extrap"], capture_output=True)
    return candidate if check.returncode == 0 else None


TARGETS = {
    "eq3-m1": "-",
    "eq3-m2": ">= 99 %",
    "noise-m1": ">= 95 %",
    "noise-m2": ">= 95 %",
    "noise-m3": ">= 93 %",
    "sparse-m3": ">= 74 %",
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=1000, help="functions per scenario (default 1000)")
    parser.add_argument("--extrap-samples", type=int, default=200,
                        help="functions per scenario for Extra-P (default 200)")
    parser.add_argument("--scenarios", default=",".join(TARGETS), help="comma-separated, default all")
    parser.add_argument("--modelers", default="default", help="comma-separated modelers of ours (default: default)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="modeler option")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--extrap-python", default=None, help="Python with extrap 4.2.5 (or EXTRAP_PYTHON)")
    parser.add_argument("--show-misses", type=int, default=0, help="print this many wrong models per scenario")
    args = parser.parse_args(argv)
    options = dict(item.split("=", 1) for item in args.option)
    python = extrap_python(args.extrap_python)
    exponents = parse_exponents(DEFAULT_EXPONENTS)
    rows = []
    for name in args.scenarios.split(","):
        rng = np.random.default_rng([args.seed, sum(map(ord, name))])
        case = make_case(name, args.samples, rng, exponents)
        header = "exact (0.1 %)" if name.startswith("eq3") else "+-5 % / +-10 % / +-20 %"
        for modeler in args.modelers.split(","):
            if modeler == "exhaustive" and name.endswith("m3"):
                continue
            predictions, seconds = run_ours(case, modeler, options)
            score = shares(predictions, case.truth, case.tolerances)
            rows.append((name, f"ours: {modeler}", len(case.points), score, seconds, header))
            if args.show_misses:
                error = np.max(np.abs(predictions - case.truth) / np.abs(case.truth), axis=1)
                for k in np.flatnonzero(error > case.tolerances[0])[: args.show_misses]:
                    print(f"  miss {name} f{k}: true {case.formulas[k]}  error {100 * error[k]:.3g} %")
        if python:
            result = run_extrap(case, python, args.extrap_samples)
            if result:
                predictions, seconds, n = result
                score = shares(predictions, case.truth[:n], case.tolerances)
                rows.append((name, "Extra-P 4.2.5", n, score, seconds, header))
        else:
            rows.append((name, "Extra-P 4.2.5", 0, None, None, header))
    print()
    print(f"{'scenario':<10} {'modeler':<18} {'functions':>9}  {'share of models':<26} {'target':<9} {'seconds':>8}")
    for name, who, n, score, seconds, _ in rows:
        text = "not installed" if score is None else " / ".join(f"{s:5.1f} %" for s in score)
        target = TARGETS[name] if who.startswith("ours") else ""
        time_text = "" if seconds is None else f"{seconds:8.2f}"
        print(f"{name:<10} {who:<18} {n:>9}  {text:<26} {target:<9} {time_text}")
    print("\nshare of models: eq3 = identical to the true function (prediction at (128, 60) and (512, 200)"
          " within 0.1 %); noise/sparse = prediction at the next point within +-5 % / +-10 % / +-20 %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
