"""Robustness of the modelers: predictions beyond the data, under noise, beside Extra-P 4.2.5 (issue 19).

A script, not a test::

    python benchmarks/robustness.py                         # default sizes: ~5-10 min on 2 busy cores
    python benchmarks/robustness.py --samples 100 --extrap-samples 10 --scenarios 1p-inside-10,2p-falling-20
    python benchmarks/robustness.py --real                  # also the real-data part
    python benchmarks/robustness.py --real-only
    EXTRAP_PYTHON=../venv-extrap/bin/python python benchmarks/robustness.py

Protocol (see benchmarks/README.md):

* one and two parameters (``p``, and ``n`` for two);
* exponent classes: ``inside`` (i from Extra-P's 20 exponents, j in {0, 1, 2}),
  ``outside`` (i uniform in [0.1, 3], j in {0, 1, 2} or, in 30 %, uniform in
  [0.1, 2]), ``falling`` (p^-i, p^-i log2(p), log2(p)^-j; i from Extra-P's
  exponents 1/4 ... 3/2 or uniform in [0.25, 1.5]; in two parameters multiplied by, or added
  to, a rising factor of ``n`` from I x J: counts divided among ranks,
  ``150 n / p``), ``turning`` (strong scaling with an overhead: a falling term of
  ``falling`` plus a rising one, log2(p), log2(p)^2 or p^a with a in [1/4, 1]
  (times log2(p) in a fifth), ``c1 W(p) + c2 O(p)``; in two parameters the falling
  term carries the work's factor of ``n``, ``c1 n / p + c2 log2(p)``, or ``n`` is a
  term of its own): the time falls, then rises once the overhead wins -- inside
  the data or beyond them, wherever the shares drawn at the largest point put the
  turn; the constant is 0 in 15 % of the functions (40 % for falling and turning);
* two-parameter templates: ``c0 + c1 f(p) + c2 g(n)``, ``c0 + c1 f(p) g(n)``,
  ``c0 + c1 f(p) g(n) + c2 f(p)``;
* coefficients: the function's value at the largest measured point is
  10^U(-2, 4); the constant's share of it U(0.05, 0.95) (or 0), the rest split
  among the terms (Dirichlet) -- the constant may dominate or be small;
* points: 5 to 9 values per parameter (full factorial for two): p = 4, 8, 16, ...
  (50 %), 6, 12, 24, ... (20 %), cubes 8, 27, 64, ... (15 %), 16, 32, 48, ...
  (15 %); n = 10, 20, 30, ... or 32, 64, 128, ...;
* 5 repetitions, each value x (1 + U(-e, e)), e = 0, 2, 5, 10, 20, 40 %;
  the ``-spikes`` rows (``2p-inside-10-spikes``, not in the default set) also give a fifth of the points one
  repetition 10^U(0.5, 1.3) (3 to 20) times off, above in three cases of four (a slow node) and below in one (a
  run cut short), as real repetitions disagree; the ``-spike1`` rows (``1p-inside-10-spike1``) measure each point
  once and put :data:`SPIKE1_SHARE` of the points (at least one, anywhere, the ends too) that far off; the
  ``-partial`` rows (``2p-inside-10-partial``) repeat a random half of the points 3 times and measure the others
  once (:data:`PARTIAL`), as a design grown beyond its repeated base does; the ``-single`` rows
  (``1p-inside-2-single``) measure each point once, without spikes (one run per configuration, as LULESH's Caliper
  profiles and the MPI collectives);
* predictions at 2x, 4x and 8x the largest measured value of every parameter,
  against the noise-free truth.

Columns: ours (every modeler of ``--modelers`` that is registered), Extra-P 4.2.5
``basic`` (its default modeler) and ``refining`` (RefiningModeler, also inside the
multi-parameter modeler) on the same data, and ``true`` -- the least-squares fit
(weights 1/mean, all repetitions) of the true term structure, the limit.
Extra-P runs on the first ``--extrap-samples`` functions of each row; the
"vs best Extra-P" column compares ours on those same functions.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from types import SimpleNamespace

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after the installed package: the layout maps readers/ and instrument/ into it
sys.path.insert(0, str(ROOT / "benchmarks"))

import extrap_plugins  # noqa: E402
from accuracy import evaluate, experiment_of, extrap_python, write_text  # noqa: E402

EXTRAP_I = [float(Fraction(t)) for t in
            "0 1/4 1/3 1/2 2/3 3/4 4/5 1 5/4 4/3 3/2 5/3 7/4 2 9/4 7/3 5/2 8/3 11/4 3".split()]
NOISES = (0.0, 0.02, 0.05, 0.10, 0.20, 0.40)
CLASSES = ("inside", "outside", "falling", "turning")
DISTANCES = (2.0, 4.0, 8.0)
FAR = 100.0  # negative predictions are also counted here
REPS = 5
NAMES = ("p", "n")


# ------------------------------------------------------------- generators
def p_series(rng, k):
    kind = rng.choice(4, p=[0.5, 0.2, 0.15, 0.15])
    if kind == 0:
        return 4.0 * 2.0 ** np.arange(k)
    if kind == 1:
        return 6.0 * 2.0 ** np.arange(k)
    if kind == 2:
        return (np.arange(k) + 2.0) ** 3
    return 16.0 * (np.arange(k) + 1.0)


def n_series(rng, k):
    if rng.random() < 0.5:
        return 10.0 * (np.arange(k) + 1.0)
    return 32.0 * 2.0 ** np.arange(k)


def rising_factor(rng, cls):
    """(i, j) of a growing factor x^i log2(x)^j, not constant."""
    while True:
        if cls == "outside":
            i = float(rng.uniform(0.1, 3.0))
            j = float(rng.choice([0, 1, 2])) if rng.random() < 0.7 else float(rng.uniform(0.1, 2.0))
        else:
            i, j = float(rng.choice(EXTRAP_I)), float(rng.choice([0, 1, 2]))
        if i or j:
            return (i, j)


def falling_factor(rng):
    # strong scaling: p^-1 (work divided among ranks), p^-2/3 (halo surfaces), p^-1/2, ...; steeper is rare
    i = float(rng.choice(EXTRAP_I[1:10])) if rng.random() < 0.5 else float(rng.uniform(0.25, 1.5))
    form = rng.choice(3, p=[0.6, 0.15, 0.25])
    if form == 0:
        return (-i, 0.0)
    if form == 1:
        return (-max(i, 1.0), 1.0)  # log2(p) / p: still falling from p = 4 on
    return (0.0, -float(rng.choice([1, 2])))


def overhead_factor(rng):
    """(i, j) of an overhead that grows with p: a collective's log2(p) or log2(p)^2, or p^a with a in [1/4, 1]."""
    form = rng.choice(3, p=[0.4, 0.15, 0.45])
    if form == 0:
        return (0.0, 1.0)
    if form == 1:
        return (0.0, 2.0)
    a = float(rng.choice(EXTRAP_I[1:8])) if rng.random() < 0.5 else float(rng.uniform(0.25, 1.0))
    return (a, 1.0 if rng.random() < 0.2 else 0.0)


def make_function(rng, m, cls, Xmax):
    """``(c0, [(c, [(i, j) per parameter]), ...])`` with the coefficients drawn at the largest point Xmax."""
    zero = (0.0, 0.0)
    if cls == "turning":
        f, h = falling_factor(rng), overhead_factor(rng)
        if m == 1:
            structure = [[f], [h]]
        elif rng.random() < 0.6:
            structure = [[f, rising_factor(rng, "inside")], [h, zero]]
        else:
            structure = [[f, zero], [h, zero], [zero, rising_factor(rng, "inside")]]
    elif m == 1:
        structure = [[falling_factor(rng) if cls == "falling" else rising_factor(rng, cls)]]
    else:
        f = falling_factor(rng) if cls == "falling" else rising_factor(rng, cls)
        g = rising_factor(rng, "inside" if cls == "falling" else cls)
        u = rng.random()
        if cls == "falling":
            structure = [[f, g]] if u < 0.6 else [[f, zero], [zero, g]]
        elif u < 0.4:
            structure = [[f, zero], [zero, g]]
        elif u < 0.8:
            structure = [[f, g]]
        else:
            structure = [[f, g], [f, zero]]
    total = 10.0 ** rng.uniform(-2, 4)
    w0 = 0.0 if rng.random() < (0.4 if cls in ("falling", "turning") else 0.15) else rng.uniform(0.05, 0.95)
    split = rng.dirichlet(np.ones(len(structure))) * (1.0 - w0)
    terms = []
    for share, factors in zip(split, structure):
        unit = evaluate((0.0, [(1.0, factors)]), Xmax[None, :])[0]
        terms.append((float(total * share / unit), factors))
    return (float(total * w0), terms)


def describe(function, names):
    c0, terms = function
    text = f"{c0:.4g}"
    for c, factors in terms:
        parts = [f"{c:.4g}"]
        for name, (i, j) in zip(names, factors):
            if i:
                q = Fraction(i).limit_denominator(12)
                parts.append(f"{name}^{q}" if abs(float(q) - i) < 1e-9 else f"{name}^{i:.3g}")
            if j:
                parts.append(f"log2({name})^{j:.3g}" if j != 1 else f"log2({name})")
        text += " + " + "·".join(parts)
    return text


@dataclass
class Row:
    """One scenario: m parameters, exponent class, noise level; its functions and results."""

    name: str
    m: int
    cls: str
    noise: float
    parameters: tuple
    functions: list = field(default_factory=list)
    points: list = field(default_factory=list)  # (n_points, m) per function
    values: list = field(default_factory=list)  # (n_points, REPS)
    targets: list = field(default_factory=list)  # (len(DISTANCES) + 1, m): 2x, 4x, 8x, FARx
    truth: np.ndarray = None  # (n, len(DISTANCES) + 1)
    predictions: dict = field(default_factory=dict)  # who -> (n, len(DISTANCES)+1)
    formulas: dict = field(default_factory=dict)  # who -> list of str
    intervals: dict = field(default_factory=dict)  # who -> (n, len(DISTANCES), 2) prediction; "conf:"+who
    seconds: dict = field(default_factory=dict)


SPIKE_SHARE = 0.2
"""The share of points whose one repetition is 3 to 20 times off in the ``-spikes`` rows."""

SPIKE1_SHARE = 0.1
"""The share of points (at least one) whose only run is 3 to 20 times off in the ``-spike1`` rows."""

PARTIAL = (3, 0.5)
"""Repetitions of the repeated points and the share of points measured once in the ``-partial`` rows
(``2p-inside-10-partial``): a design that repeats some points only, as a design grown beyond its repeated base
does (``suggest`` repeats its lines and measures the points it adds once)."""

FEW = (4, 2)
"""Values per parameter and repetitions of the ``-few`` rows (``1p-inside-10-few``): the thin
designs of real studies (RELeARN's lines: 4 values, 2 repetitions)."""


VARIANTS = ("few", "spikes", "spike1", "partial", "single")
"""The rows' suffixes (``2p-inside-10-spikes``); a row's functions are drawn with its suffix's number (1, 2, ...)."""


def make_row(name, n, seed):
    m, cls, noise, *variant = name.split("-")
    m, noise = int(m[0]), float(noise) / 100.0
    kind = variant[0] if len(variant) == 1 and variant[0] in VARIANTS else ""
    few, spikes, spike1, partial, single = (kind == v for v in VARIANTS)
    rng = np.random.default_rng([seed, m, CLASSES.index(cls), int(round(noise * 1000))]
                                + ([VARIANTS.index(kind) + 1] if kind else []))
    row = Row(name, m, cls, noise, NAMES[:m])
    reps = FEW[1] if few else 1 if spike1 or single else PARTIAL[0] if partial else REPS
    for _ in range(n):
        length = (lambda: FEW[0]) if few else (lambda: int(rng.integers(5, 10)))
        axes = [p_series(rng, length())]
        if m == 2:
            axes.append(n_series(rng, length()))
        X = np.array(list(itertools.product(*axes)), dtype=float)
        Xmax = X.max(axis=0)
        function = make_function(rng, m, cls, Xmax)
        clean = evaluate(function, X)
        noisy = clean[:, None] * (1.0 + rng.uniform(-noise, noise, size=(X.shape[0], reps)))
        if spikes:
            hit = np.flatnonzero(rng.random(X.shape[0]) < SPIKE_SHARE)
            factor = 10.0 ** rng.uniform(0.5, 1.3, size=hit.size)
            factor = np.where(rng.random(hit.size) < 0.75, factor, 1.0 / factor)
            noisy[hit, rng.integers(0, reps, size=hit.size)] *= factor
        if spike1:
            hit = rng.choice(X.shape[0], size=max(1, round(SPIKE1_SHARE * X.shape[0])), replace=False)
            factor = 10.0 ** rng.uniform(0.5, 1.3, size=hit.size)
            noisy[hit, 0] *= np.where(rng.random(hit.size) < 0.75, factor, 1.0 / factor)
        if partial:  # NaN: a repetition the point lacks
            noisy[rng.random(X.shape[0]) < PARTIAL[1], 1:] = np.nan
        targets = np.array([Xmax * d for d in DISTANCES + (FAR,)])
        row.functions.append(function)
        row.points.append(X)
        row.values.append(noisy)
        row.targets.append(targets)
    row.truth = np.array([evaluate(f, t) for f, t in zip(row.functions, row.targets)])
    return row


def scenario_names(spec):
    if spec:
        return spec.split(",")
    return [f"{m}p-{c}-{int(round(100 * e))}" for m in (1, 2) for c in CLASSES for e in NOISES]


# ------------------------------------------------------------------ fitting
def run_true(row):
    """Weighted least squares of the true structure to all repetitions (weights 1/mean)."""
    out = []
    for function, X, V, T in zip(row.functions, row.points, row.values, row.targets):
        c0, terms = function
        columns = ([(1.0, [(0.0, 0.0)] * row.m)] if c0 != 0 else []) + [(1.0, f) for _, f in terms]
        A = np.column_stack([evaluate((0.0, [c]), X) for c in columns])
        At = np.column_stack([evaluate((0.0, [c]), T) for c in columns])
        w = 1.0 / np.abs(np.nanmean(V, axis=1))
        measured = np.isfinite(V).reshape(-1)  # the -partial rows lack repetitions (NaN)
        A_all = np.repeat(A * w[:, None], V.shape[1], axis=0)[measured]
        y_all = (V * w[:, None]).reshape(-1)[measured]
        scale = np.max(np.abs(A_all), axis=0)  # columns span many orders of magnitude in two parameters
        coefficients, *_ = np.linalg.lstsq(A_all / scale, y_all, rcond=None)
        out.append(At @ (coefficients / scale))
    row.predictions["true"] = np.array(out)


def ours_modelers(requested):
    """The requested modelers that are registered (public plugin host), in order."""
    try:
        from extrap_plugins.plugins import get_host

        known = set(get_host().modelers)
    except Exception:  # noqa: BLE001 - modules are being moved around; fall back to trying
        known = None
    chosen = []
    for name in requested:
        if known is None or name in known:
            chosen.append(name)
        else:
            print(f"(modeler {name!r} is not registered: skipped)", file=sys.stderr)
    return chosen


def run_ours(row, modeler, options):
    case = SimpleNamespace(points=row.points, values=row.values, parameters=row.parameters)
    experiment = experiment_of(case)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = extrap_plugins.model(experiment, modeler, **options)
    row.seconds[modeler] = time.perf_counter() - start
    index = {m.callpath: i for i, m in enumerate(models.models)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        extrapolations = extrap_plugins.extrapolate(models, None, intervals=True)
    uncertainty = extrapolations.uncertainty
    predictions, prediction_iv, confidence_iv, formulas = [], [], [], []
    for k, T in enumerate(row.targets):
        i = index[f"f{k:06d}"]
        model = models.models[i]
        value = np.asarray(model.predict(T), dtype=float)
        predictions.append(value)
        formulas.append(model.formula)
        u = uncertainty[i] if i < len(uncertainty) else None
        if u is None:
            prediction_iv.append(np.full((len(DISTANCES), 2), np.nan))
            confidence_iv.append(np.full((len(DISTANCES), 2), np.nan))
            continue
        for kind, store in (("prediction", prediction_iv), ("confidence", confidence_iv)):
            h = u.half_width(T[: len(DISTANCES)], kind=kind)
            v = value[: len(DISTANCES)]
            store.append(np.column_stack([v - h, v + h]))
    row.predictions[modeler] = np.array(predictions)
    row.formulas[modeler] = formulas
    row.intervals[modeler] = np.array(prediction_iv)
    row.intervals["conf:" + modeler] = np.array(confidence_iv)


def run_extrap_all(rows, python, limit, modelers, negative=False):
    """One Extra-P process per modeler over every row (files grouped by point set), run side by side."""
    folder = tempfile.mkdtemp(prefix="robustness-")
    files = []
    for r, row in enumerate(rows):
        groups: dict[bytes, list[int]] = {}
        for k in range(min(limit, len(row.points))):
            groups.setdefault(row.points[k].tobytes(), []).append(k)
        for g, members in enumerate(groups.values()):
            path = os.path.join(folder, f"r{r}_g{g}.txt")
            write_text(path, row.parameters, row.points[members[0]],
                       [(f"r{r}f{k:06d}", row.values[k]) for k in members])
            files.append({"path": path, "predict": row.targets[members[0]].tolist()})
        # functions of one group share their points, hence their targets

    def one(modeler):
        task = os.path.join(folder, f"task-{modeler}.json")
        with open(task, "w") as stream:
            json.dump({"files": files, "modeler": modeler, "negative_exponents": negative}, stream)
        start = time.perf_counter()
        done = subprocess.run([python, str(ROOT / "benchmarks" / "_extrap_runner.py"), task],
                              capture_output=True, text=True)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            print(f"Extra-P ({modeler}) failed: {done.stderr[-2000:]}", file=sys.stderr)
            return modeler, None, wall
        return modeler, json.loads(done.stdout), wall

    with ThreadPoolExecutor(max_workers=len(modelers)) as pool:
        results = list(pool.map(one, modelers))
    for modeler, output, wall in results:
        who = f"Extra-P {modeler}"
        if output is None:
            continue
        by_name = {m["callpath"]: m for m in output["models"]}
        for r, row in enumerate(rows):
            n = min(limit, len(row.points))
            width = len(DISTANCES) + 1
            found = [by_name.get(f"r{r}f{k:06d}") for k in range(n)]
            row.predictions[who] = np.array([f["predictions"] if f else [np.nan] * width for f in found], dtype=float)
            row.formulas[who] = [f["function"] if f else "(none)" for f in found]
        print(f"Extra-P {modeler}: {output['seconds']:.1f} s modeling, {wall:.1f} s wall", file=sys.stderr)
    for f in files:
        os.unlink(f["path"])
    return {m: w for m, _, w in results}


# ------------------------------------------------------------------ scoring
def errors(row, who, d, n=None):
    prediction = row.predictions[who][:, d]
    truth = row.truth[: len(prediction), d]
    if n is not None:
        prediction, truth = prediction[:n], truth[:n]
    with np.errstate(all="ignore"):
        e = np.abs(prediction - truth) / np.abs(truth)
    return np.where(np.isfinite(e), e, np.inf)


def score(e):
    if e.size == 0:
        return (np.nan, np.nan, np.nan)
    return (100.0 * np.mean(e <= 0.10), 100.0 * np.mean(e <= 0.25), 100.0 * np.median(e))


def fmt(v, digits=1, suffix=" %"):
    return "–" if v is None or not np.isfinite(v) else f"{v:.{digits}f}{suffix}"


def print_tables(rows, ours, extrap, distances_shown):
    whos = list(ours) + [f"Extra-P {m}" for m in extrap] + ["true"]
    for d_index, d in enumerate(DISTANCES):
        if d not in distances_shown:
            continue
        for metric, label in ((0, "share within 10 %"), (1, "share within 25 %"), (2, "median relative error")):
            if d != 4.0 and metric == 1:
                continue
            print(f"\n### {label} at {d:g}x beyond the largest measured values\n")
            head = ["scenario", "n (ours / EP)"] + whos
            if extrap and ours:
                head.append(f"{ours[0]} − best EP (same functions)" if metric < 2
                            else f"{ours[0]} / best EP (same functions)")
            print("| " + " | ".join(head) + " |")
            print("|" + "---|" * len(head))
            sums = {w: [] for w in whos + ["delta"]}
            for row in rows:
                n_ep = len(row.predictions.get(f"Extra-P {extrap[0]}", [])) if extrap else 0
                cells = [row.name.replace("-", " ") + " %", f"{len(row.points)} / {n_ep}"]
                for w in whos:
                    if w not in row.predictions:
                        cells.append("–")
                        continue
                    v = score(errors(row, w, d_index))[metric]
                    cells.append(fmt(v, 1 if metric < 2 else 2))
                    if row.noise > 0:
                        sums[w].append(v)
                if extrap and ours and n_ep:
                    mine = score(errors(row, ours[0], d_index, n_ep))[metric]
                    theirs = [score(errors(row, f"Extra-P {m}", d_index))[metric]
                              for m in extrap if f"Extra-P {m}" in row.predictions]
                    if metric < 2:
                        best = max(theirs)
                        delta = mine - best
                        cells.append(f"{delta:+.1f}")
                    else:
                        best = min(theirs)
                        delta = mine / best if best > 0 else np.nan
                        cells.append(f"{delta:.2f}×")
                    if row.noise > 0:
                        sums["delta"].append(delta)
                elif extrap and ours:
                    cells.append("–")
                print("| " + " | ".join(cells) + " |")
            cells = ["**average, noise 2–40 %**", ""]
            for w in whos:
                cells.append(fmt(np.mean(sums[w]) if sums[w] else np.nan, 1 if metric < 2 else 2))
            if extrap and ours:
                vals = [v for v in sums["delta"] if np.isfinite(v)]
                if metric < 2:
                    cells.append(f"{np.mean(vals):+.1f}" if vals else "–")
                else:
                    cells.append(f"{np.exp(np.mean(np.log(vals))):.2f}× (geo. mean)" if vals else "–")
            print("| " + " | ".join(cells) + " |")


def print_coverage(rows, ours, extrap):
    print("\n### 95 % interval of ours at the targets: coverage of the noise-free truth, per noise level\n")
    print("prediction interval (`Extrapolation.interval`) / confidence interval (`Extrapolation.confidence`),"
          " all rows of that noise level pooled; models without an interval count as misses\n")
    head = ["noise"] + [f"{w} at {d:g}x" for w in ours for d in DISTANCES]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for noise in sorted({r.noise for r in rows}):
        cells = [f"{100 * noise:g} %"]
        for w in ours:
            for d_index in range(len(DISTANCES)):
                hit_p, hit_c, total = 0, 0, 0
                for row in rows:
                    if row.noise != noise or w not in row.intervals:
                        continue
                    t = row.truth[:, d_index]
                    for key, counter in (("", "p"), ("conf:", "c")):
                        iv = row.intervals[key + w][:, d_index]
                        inside = (iv[:, 0] <= t) & (t <= iv[:, 1])
                        if counter == "p":
                            hit_p += int(np.sum(inside))
                        else:
                            hit_c += int(np.sum(inside))
                    total += len(t)
                cells.append(f"{100 * hit_p / total:.1f} / {100 * hit_c / total:.1f} %" if total else "–")
        print("| " + " | ".join(cells) + " |")

    print("\n### Negative predictions of positive data (functions with a negative value at 2x, 4x, 8x or 100x)\n")
    whos = list(ours) + [f"Extra-P {m}" for m in extrap] + ["true"]
    head = ["scenario"] + whos
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    totals = {w: [0, 0] for w in whos}
    for row in rows:
        cells = [row.name.replace("-", " ") + " %"]
        for w in whos:
            if w not in row.predictions:
                cells.append("–")
                continue
            P = row.predictions[w]
            neg = int(np.sum(np.any(P < 0, axis=1)))
            totals[w][0] += neg
            totals[w][1] += len(P)
            cells.append(f"{neg} / {len(P)}")
        print("| " + " | ".join(cells) + " |")
    print("| **total** | " + " | ".join(f"{a} / {b}" for a, b in totals.values()) + " |")


def print_diagnosis(rows, ours, extrap, misses):
    """What kind of model the modelers chose, and a few concrete misses."""
    print("\n### What was chosen (share of functions, at 4x)\n")
    print("constant = same prediction at 2x, 4x, 8x (the truth never is constant); "
          "wrong direction = prediction at 8x on the other side of the 2x prediction than the truth's\n")
    whos = list(ours) + [f"Extra-P {m}" for m in extrap]
    head = ["scenario"] + [f"{w}: constant / wrong direction / > 25 % off" for w in whos]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        cells = [row.name.replace("-", " ") + " %"]
        for w in whos:
            if w not in row.predictions:
                cells.append("–")
                continue
            P = row.predictions[w]
            T = row.truth[: len(P)]
            with np.errstate(all="ignore"):
                constant = np.abs(P[:, 2] - P[:, 0]) <= 1e-9 * np.abs(P[:, 0]) + 1e-300
                wrong = np.sign(P[:, 2] - P[:, 0]) != np.sign(T[:, 2] - T[:, 0])
            off = errors(row, w, 1) > 0.25
            cells.append(f"{100 * np.mean(constant):.0f} / {100 * np.mean(wrong & ~constant):.0f} / "
                         f"{100 * np.mean(off):.0f} %")
        print("| " + " | ".join(cells) + " |")
    if not misses:
        return
    print("\n### Misses of ours (error at 4x > 25 %), with Extra-P's model of the same data\n")
    for row in rows:
        if row.noise == 0 and misses < 5:
            continue
        w = ours[0]
        e = errors(row, w, 1)
        n_ep = len(row.predictions.get(f"Extra-P {extrap[0]}", [])) if extrap else 0
        shown = 0
        for k in np.argsort(-e):
            if e[k] <= 0.25 or shown >= misses:
                break
            if n_ep and k >= n_ep and shown < misses // 2:
                continue
            shown += 1
            print(f"- {row.name} f{k}: true `{describe(row.functions[k], row.parameters)}`")
            print(f"  - {w}: `{row.formulas[w][k]}` ({100 * e[k]:.3g} % off at 4x)")
            for m in extrap:
                who = f"Extra-P {m}"
                if who in row.predictions and k < len(row.predictions[who]):
                    print(f"  - {who}: `{row.formulas[who][k]}` ({100 * errors(row, who, 1)[k]:.3g} %)")


# ---------------------------------------------------------------- real data
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=200, help="functions per scenario row for ours (default 200)")
    parser.add_argument("--extrap-samples", type=int, default=40,
                        help="functions per row for Extra-P, the first of ours (default 40; ~0.1-0.5 s per model)")
    parser.add_argument("--scenarios", default="", help="comma-separated rows like 1p-inside-10,2p-falling-20"
                        " (default: 1p, 2p x inside, outside, falling, turning x noise 0, 2, 5, 10, 20, 40)")
    parser.add_argument("--modelers", default="default,golden,refining",
                        help="ours, comma-separated; unregistered ones are skipped")
    parser.add_argument("--extrap-modelers", default="basic,refining", help="Extra-P's: basic, refining")
    parser.add_argument("--extrap-negative", action="store_true",
                        help="Extra-P basic with allow_negative_exponents (not its default)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="option of our modelers")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--extrap-python", default=None, help="Python with extrap 4.2.5 (or EXTRAP_PYTHON)")
    parser.add_argument("--distances", default="2,4,8", help="which of 2, 4, 8 to print tables for")
    parser.add_argument("--show-misses", type=int, default=3, help="misses of ours to print per row")
    parser.add_argument("--keep-outlying", action="store_true",
                        help="ours without the rule that leaves repetitions 3x off the others out of the mean "
                             "(extrap_plugins.experiment.OUTLYING_FACTOR set to infinity), to measure what it does")
    parser.add_argument("--real", action="store_true", help="also the real-data part (benchmarks/real.py)")
    parser.add_argument("--real-only", action="store_true", help="only the real-data part")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    python = extrap_python(args.extrap_python or os.environ.get("EXTRAP_PYTHON")
                           or str(ROOT.parent / "venv-extrap" / "bin" / "python"))
    options = dict(item.split("=", 1) for item in args.option)
    if args.keep_outlying:
        import extrap_plugins.experiment

        extrap_plugins.experiment.OUTLYING_FACTOR = math.inf
    ours = ours_modelers(args.modelers.split(","))
    extrap = [m for m in args.extrap_modelers.split(",") if m] if python else []
    if not python:
        print("(Extra-P 4.2.5 not installed: its columns are empty)", file=sys.stderr)
    if not args.real_only:
        rows = [make_row(name, args.samples, args.seed) for name in scenario_names(args.scenarios)]
        print(f"generated {len(rows)} rows x {args.samples} functions in {time.perf_counter() - started:.1f} s",
              file=sys.stderr)
        with ThreadPoolExecutor(max_workers=1) as pool:  # Extra-P's processes run while ours model
            pending = (pool.submit(run_extrap_all, rows, python, args.extrap_samples, extrap, args.extrap_negative)
                       if extrap and args.extrap_samples > 0 else None)
            for row in rows:
                run_true(row)
                for modeler in ours:
                    run_ours(row, modeler, options)
            print(f"ours done at {time.perf_counter() - started:.1f} s: " + ", ".join(
                f"{m} {sum(r.seconds[m] for r in rows):.1f} s" for m in ours), file=sys.stderr)
            if pending is not None:
                pending.result()
        print(f"Extra-P done at {time.perf_counter() - started:.1f} s", file=sys.stderr)
        print(f"\n## Robustness: seed {args.seed}, {args.samples} functions per row for ours, "
              f"the first {args.extrap_samples} for Extra-P\n")
        print_tables(rows, ours, extrap, {float(d) for d in args.distances.split(",")})
        print_coverage(rows, ours, extrap)
        print_diagnosis(rows, ours, extrap, args.show_misses)
    if args.real or args.real_only:
        import real

        real.run(python, ours, extrap, options)
    print(f"\n(total run time {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
