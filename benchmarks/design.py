"""Experiment design: accuracy against cost, Ritter et al.'s (2020) protocol and the GPR case-study protocol.

Usage (from the project root)::

    .venv/bin/python benchmarks/design.py --case seed002 [--functions 200] [--seed 1] [--budget 15%]
    .venv/bin/python benchmarks/design.py --case relearn [--relearn-budgets 10,15,20,30,40,50,60,100]
    .venv/bin/python benchmarks/design.py --case synthetic [--functions 40] [--parameters 1,2,3]
                                          [--synthetic-budgets 5,10,15]

**The GPR case-study protocol** (``--case relearn|data|synthetic``; Extra-P's evaluation of Gaussian-process point
selection, github extra-p/extrap-gpr): per kernel, a strategy chooses single repetitions of grid points until its
budget (a share of that kernel's full-factorial cost, the cost of a run being the kernel's own core-hours there,
p × its value) is spent or it stops; the kernel's model (our ``default`` modeler for every strategy) is compared
with the measurement at an evaluation point that is never used for fitting, and the table gives the share of
kernels within ±5/10/15/20 %, and the cost actually used.  Strategies: ``ours`` (``extrap_plugins.selector``:
the base design that fits, then the repetition of largest expected reduction of the interval at the evaluation
point per unit of cost, until the interval is within ``--selector-tolerance``), ``gpr`` (our re-implementation
of the GPR strategy, ``benchmarks/_gpr.py``), ``cpf`` (cheapest point first: the base lines, then whole points
cheapest first), ``random`` (random designs of the same budget, :func:`run_random`: what any design reaches by
chance, ``--random-draws`` of them).  As in the GPR evaluation every strategy knows the cost of every candidate
before measuring it, and a kernel whose base design alone exceeds the budget counts as a miss.  RELeARN: the 14
kernels of ``relearn_data.txt``, p = 32…512 × n = 5000…9000, two repetitions, evaluation point p = 512, n = 9000.  Data
(``--case data --data PATH [--eval-point p=…,n=…] [--metric time] [--processes p]``): any other application's
measurements the readers read (Extra-P text or JSON, CUBE folders, Caliper, CSV …), one kernel per call path;
the candidates are the measured points, each with as many repetitions as the kernel has there.  Synthetic:
``--functions`` functions of Ritter et al. 2020 per parameter count (below), ±5 % noise, four repetitions available,
evaluation at the next point (p = 128, s = 60, n = 6000).

**Ritter et al. 2020's protocol** (``--case seed002``): the evaluation of Ritter et al. 2020, Section III-B: parameters
``p = 4..64`` (doubling) and ``s = 10..50`` (m = 2),
plus ``n = 1000..5000`` (m = 3); five values each.  Each synthetic function is
``c0 + sum of terms``, every parameter ``x`` appearing as ``x^i * log2(x)^j`` with ``i`` in {0, 1, 2, 3} and
``j`` in {0, 1, 2} (Ritter et al.'s (2020) sets; not both 0), the parameters combined at random additively,
multiplicatively
or (m = 3) mixed; coefficients uniform in (0.01, 1000).  Every measurement is the true value times
``1 + u``, ``u`` uniform in [-5 %, 5 %], four repetitions per point.

Both designs are modelled with the ``default`` modeler.  The full factorial uses all 5^m points.  The
suggested design runs the loop of ``extrap_plugins.design.run_design``: the cheapest lines through a common
corner plus one extra point, then one cheapest point at a time until the hold-out check meets
``--tolerance`` or the next point would exceed ``--budget`` (share of the full factorial's cost under the
default cost model, the product of the process counts ``p``).

Accuracy: the share of functions whose model predicts the next point outside the measured range
(p = 128, s = 60, n = 6000) within +-10 % (and +-5 %) of the true value.  Cost: the true compute cost of the
measured points, ``sum(p * f(point))`` (core-seconds: ``f`` is the run time per process), as a share of the
full factorial's.  Target (issue 6): at <= 15 % of the cost, >= 90 % of the full factorial's within-10 %
accuracy.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import warnings

import numpy as np

from extrap_plugins import selector

VALUES = {"p": [4, 8, 16, 32, 64], "s": [10, 20, 30, 40, 50], "n": [1000, 2000, 3000, 4000, 5000]}
NEXT = {"p": 128.0, "s": 60.0, "n": 6000.0}
EXPONENTS = (0, 1, 2, 3)  # Ritter et al. 2020, Section III-B: I = {0, 1, 2, 3}, J = {0, 1, 2}
NOISE = 0.05
REPETITIONS = 4


class Function:
    """A random multi-parameter PMNF function: ``c0 + sum_k c_k prod_{l in group k} x_l^i_l log2(x_l)^j_l``."""

    def __init__(self, rng: np.random.Generator, names: list[str]):
        pairs = [(i, j) for i in EXPONENTS for j in (0, 1, 2) if (i, j) != (0, 0)]
        self.names = names
        self.factors = [pairs[k] for k in rng.integers(0, len(pairs), len(names))]
        m = len(names)
        shapes = ["additive", "multiplicative"] + (["mixed"] if m == 3 else [])
        shape = shapes[rng.integers(0, len(shapes))]
        if shape == "additive":
            self.groups = [[param] for param in range(m)]
        elif shape == "multiplicative":
            self.groups = [list(range(m))]
        else:
            self.groups = [[0, 1], [2]]
        self.shape = shape
        self.c0 = rng.uniform(0.01, 1000)
        self.coefficients = rng.uniform(0.01, 1000, len(self.groups))

    def formula(self) -> str:
        """The function as text, e.g. ``569.7 + 874.1·p·log2(p)^2·s·log2(s)^2``."""
        terms = [f"{self.c0:.4g}"]
        for c, group in zip(self.coefficients, self.groups):
            factors = [f"{c:.4g}"]
            for param in group:
                i, j = self.factors[param]
                name = self.names[param]
                factors += [name + (f"^{i}" if i > 1 else "")] if i else []
                factors += [f"log2({name})" + (f"^{j}" if j > 1 else "")] if j else []
            terms.append("·".join(factors))
        return " + ".join(terms)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64).reshape(-1, len(self.names))
        value = np.full(X.shape[0], self.c0)
        for c, group in zip(self.coefficients, self.groups):
            term = np.full(X.shape[0], c)
            for param in group:
                i, j = self.factors[param]
                term = term * X[:, param] ** i * np.log2(X[:, param]) ** j
            value = value + term
        return value


def measurements(functions: list[Function], points: np.ndarray, rng: np.random.Generator, names: list[str]):
    """An Experiment with every function (one call path each) at ``points``, 4 noisy repetitions."""
    from extrap_plugins.experiment import Experiment

    points = np.asarray(points, dtype=np.float64).reshape(-1, len(names))
    n_points = points.shape[0]
    values = np.stack([f(points) for f in functions])  # (F, P)
    noisy = values[:, :, None] * (1 + rng.uniform(-NOISE, NOISE, values.shape + (REPETITIONS,)))
    callpath = np.repeat([f"f{k}" for k in range(len(functions))], n_points * REPETITIONS)
    coordinates = np.tile(np.repeat(points, REPETITIONS, axis=0), (len(functions), 1))
    return Experiment.from_columns(names, callpath=callpath, metric="time", coordinates=coordinates,
                                   value=noisy.reshape(-1))


def accuracy(models, functions: list[Function], names: list[str]) -> np.ndarray:
    """Relative error at the next point per function, shape (F,)."""
    point = np.array([[NEXT[n] for n in names]])
    by_name = {m.callpath: m for m in models}
    truth = np.array([f(point)[0] for f in functions])
    predicted = np.array([by_name[f"f{k}"].predict(point)[0] for k in range(len(functions))])
    return np.abs(predicted - truth) / np.abs(truth)


def compute_cost(function: Function, points: np.ndarray, names: list[str]) -> float:
    p = np.asarray(points, dtype=np.float64)[:, names.index("p")]
    return float(np.sum(p * function(points)))


def seed002(args) -> None:
    """The seed-002 benchmark of the cheapest-first heuristic (issue 6)."""

    import extrap_plugins
    from extrap_plugins import design

    tolerance = design.TOLERANCE if args.tolerance is None else args.tolerance
    args.budget = args.budget or "15%"
    print(f"{args.functions} functions per row, noise ±{NOISE:.0%}, {REPETITIONS} repetitions, modeler "
          f"{args.modeler!r}, budget {args.budget}, hold-out tolerance {tolerance:.0%}")
    header = (f"{'m':>2} {'full ±10%':>9} {'±5%':>6} | {'design ±10%':>11} {'±5%':>6} {'ratio':>6} | "
              f"{'points':>6} {'cost mean':>9} {'median':>7} {'max':>6} {'proxy':>6} | "
              f"{'base only ±10%':>14} {'cost':>6} | {'s/design':>8}")
    print(header)
    print("-" * len(header))
    for m in (2, 3):
        names = list(VALUES)[:m]
        rng = np.random.default_rng(args.seed + m)
        functions = [Function(rng, names) for _ in range(args.functions)]
        space = design.Space.of({n: VALUES[n] for n in names})
        grid = space.grid()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = extrap_plugins.model(measurements(functions, grid, rng, names), args.modeler, executor="serial")
        full_error = accuracy(full, functions, names)

        errors, shares, proxies, counts, base_errors, base_shares = [], [], [], [], [], []
        start = time.perf_counter()
        for function in functions:
            def measure(runs, function=function, names=names, rng=rng):
                points = np.array([[run.point[n] for n in names] for run in runs])
                return measurements([function], points, rng, names)

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = design.run_design(space, measure, budget=args.budget, tolerance=tolerance,
                                           repetitions=REPETITIONS, modeler=args.modeler,
                                           strategy=args.seed002_strategy)
                models = extrap_plugins.model(result.experiment, args.modeler, executor="serial")
                # The minimal design: the base lines and one extra point (the first step).
                base_points = np.array([[r.point[n] for n in names] for r in result.steps[0].plan.runs
                                        if r.role != "additional"] + [[r.point[n] for n in names] for r in
                                        result.steps[0].plan.runs if r.role == "additional"][:1])
                base_experiment = measurements([function], base_points, rng, names)
                base_models = extrap_plugins.model(base_experiment, args.modeler, executor="serial")
            points = result.experiment.points()
            errors.append(accuracy(models, [function], names)[0])
            shares.append(compute_cost(function, points, names) / compute_cost(function, grid, names))
            proxies.append(result.steps[-1].measured_cost / result.steps[-1].full_cost)
            counts.append(points.shape[0])
            base_errors.append(accuracy(base_models, [function], names)[0])
            base_shares.append(compute_cost(function, base_points, names) / compute_cost(function, grid, names))
        seconds = (time.perf_counter() - start) / len(functions)
        errors, shares = np.array(errors), np.array(shares)
        full10, design10 = np.mean(full_error <= 0.10), np.mean(errors <= 0.10)
        print(f"{m:>2} {full10:>9.1%} {np.mean(full_error <= 0.05):>6.1%} | {design10:>11.1%} "
              f"{np.mean(errors <= 0.05):>6.1%} {design10 / full10:>6.1%} | {np.mean(counts):>6.1f} "
              f"{shares.mean():>9.1%} {np.median(shares):>7.1%} {shares.max():>6.1%} {np.mean(proxies):>6.1%} | "
              f"{np.mean(np.array(base_errors) <= 0.10):>14.1%} {np.mean(base_shares):>6.1%} | {seconds:>8.2f}",
              flush=True)
    print("ratio: design ±10 % accuracy / full factorial's; cost: true compute cost (p × f) share of the full "
          "factorial's (mean, median, max); proxy: the design's own cost model share (p)")



# ------------------------------------------------------------------ the GPR case-study protocol
RELEARN = "../shared/data/extrap/text/mpa/relearn_data.txt"
RELEARN_EVAL = (512.0, 9000.0)
PUBLISHED = [  # RELeARN, Extra-P's paper on GPR point selection (paper_plot_case_studies_gpr_only_results.txt)
    ("GPR (published)", "71.4 % within ±10 % at 13.6–18.1 % of the cost; 85.7 % at 60 % (max. 85.7 % at 70 %)"),
    ("CPF, cheapest first (published)", "max. 85.7 % at 86 %; 64.3 points below GPR at 17 %"),
    ("full factorial, Extra-P (published)", "78.6 %"),
]
BUCKETS = (0.05, 0.10, 0.15, 0.20)


class Case:
    """Per-kernel measurements on a grid, an evaluation point never measured, and the cost of every run.

    ``values`` and ``cost`` have shape (n_kernels, n_points, n_repetitions), the measured repetitions of a point
    first and NaN after them (a point measured fewer times, or not at all); ``available`` counts them.  A
    kernel's cost of a run is its own core-hours there (the process count ``processes`` × its time), as in the
    GPR evaluation; without that parameter, its value.
    """

    def __init__(self, names, points, kernels, values, truth, eval_point, label, processes: str = "p",
                 notes=None):
        self.names, self.points, self.kernels = list(names), np.asarray(points, float), list(kernels)
        # What each kernel is, for --per-kernel (a synthetic function's formula; empty for measured data).
        self.notes = list(notes) if notes is not None else [""] * len(self.kernels)
        self.values, self.truth = np.asarray(values, float), np.asarray(truth, float)
        self.eval_point, self.label, self.processes = np.asarray(eval_point, float), label, processes
        self.available = np.isfinite(self.values).sum(axis=2)
        p = self.points[:, self.names.index(processes)] if processes in self.names else np.ones(len(self.points))
        self.cost = np.abs(self.values) * p[None, :, None]
        self.total = np.nansum(self.cost, axis=(1, 2))

    def reversed_repetitions(self) -> Case:
        """The same case with the repetitions of every point taken in the opposite order (a second sample of
        the protocol: every strategy's first run at a point is then the other measurement)."""
        R = self.values.shape[2]
        rank = np.arange(R)[None, None, :]
        order = np.where(rank < self.available[:, :, None], self.available[:, :, None] - 1 - rank, rank)
        return Case(self.names, self.points, self.kernels, np.take_along_axis(self.values, order, axis=2),
                    self.truth, self.eval_point, f"{self.label}, repetitions reversed", self.processes, self.notes)

    def next_cost(self, k: int, counts: np.ndarray) -> np.ndarray:
        """The cost of kernel ``k``'s next repetition at every point (inf where none is left)."""
        left = self.available[k] - counts
        at = np.minimum(counts, self.values.shape[2] - 1)[:, None]
        cost = np.take_along_axis(self.cost[k], at, axis=1)[:, 0]
        return np.where(left > 0, cost, np.inf)

    def experiment(self, counts: np.ndarray, kernels=None):
        """The measured repetitions (``counts[k, i]`` per kernel and point) as one Experiment."""
        from extrap_plugins.experiment import Experiment

        kernels = range(len(self.kernels)) if kernels is None else kernels
        callpath, coordinates, value, repetition = [], [], [], []
        for k in kernels:
            for i in np.flatnonzero(counts[k] > 0):
                for r in range(int(counts[k, i])):
                    callpath.append(self.kernels[k])
                    coordinates.append(self.points[i])
                    value.append(self.values[k, i, r])
                    repetition.append(r)
        return Experiment.from_columns(self.names, callpath=np.array(callpath, dtype=object), metric="time",
                                       coordinates=np.array(coordinates), value=np.array(value),
                                       repetition=np.array(repetition))

    def errors(self, counts: np.ndarray, modeler: str = "default") -> np.ndarray:
        """Relative error at the evaluation point per kernel; ``modeler`` "a,b" chooses per kernel
        (``selector.choose_models``: the modeler that best predicted the kernel's own largest values)."""
        import extrap_plugins

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if "," in modeler:
                models, _ = selector.choose_models(self.experiment(counts), modeler.split(","))
            else:
                models = extrap_plugins.model(self.experiment(counts), modeler, executor="serial").models
        by_name = {m.callpath: m for m in models}
        out = np.full(len(self.kernels), np.inf)
        for k, name in enumerate(self.kernels):
            predicted = by_name[name].predict(self.eval_point)
            truth = self.truth[k]
            out[k] = (0.0 if predicted == 0 else np.inf) if truth == 0 else abs(predicted - truth) / abs(truth)
        return out

    def spent(self, counts: np.ndarray) -> np.ndarray:
        """Share of each kernel's full-factorial cost the measured repetitions took."""
        used = np.zeros(len(self.kernels))
        for k in range(len(self.kernels)):
            for i in np.flatnonzero(counts[k] > 0):
                used[k] += np.sum(self.cost[k, i, : int(counts[k, i])])
        with np.errstate(all="ignore"):
            return np.where(self.total > 0, used / self.total, 0.0)

    def space(self):
        from extrap_plugins import design

        return design.Space.of({n: np.unique(self.points[:, k]) for k, n in enumerate(self.names)})

    def grid_index(self):
        """For every grid point of :meth:`space`, its index in ``points`` (-1 for points not in the case)."""
        grid = self.space().grid()
        lookup = {tuple(p): i for i, p in enumerate(self.points.tolist())}
        return np.array([lookup.get(tuple(p), -1) for p in grid.tolist()])


def relearn_case(path: str = RELEARN) -> Case:
    return case_study(path, dict(zip(("p", "n"), RELEARN_EVAL)), label="RELeARN")


def case_study(path: str, eval_point: dict[str, float] | None = None, metric: str | None = None,
               processes: str = "p", label: str | None = None) -> Case:
    """Any measured application as a case of the GPR protocol (``--case data``): every call path of ``metric``
    (default ``time``, or the only metric) measured at the evaluation point is a kernel; the evaluation point
    (default: the largest value of every parameter) is never used for fitting, and the mean of its repetitions
    is the truth.  Raises SystemExit with a one-line reason when the data cannot make a case."""
    import os

    from extrap_plugins import api
    from extrap_plugins.errors import InputError
    from extrap_plugins.experiment import row_codes

    try:
        experiment = api.read(path)
    except InputError as error:
        raise SystemExit(f"design.py: {error}") from None
    names = experiment.parameter_names
    metrics = [m.name for m in experiment.metrics]
    if metric is None:
        if "time" not in metrics and len(metrics) > 1:
            raise SystemExit(f"design.py: {path}: several metrics ({', '.join(metrics)}); choose one with --metric")
        metric = "time" if "time" in metrics else metrics[0]
    if metric not in metrics:
        raise SystemExit(f"design.py: {path}: no metric {metric!r}; the metrics are {', '.join(metrics)}")
    experiment = experiment.select(metrics=[metric])
    grid = experiment.points()
    if eval_point is None:
        target = grid.max(axis=0)
    elif sorted(eval_point) != sorted(names):
        raise SystemExit(f"design.py: --eval-point names {', '.join(eval_point)}; the parameters of {path} are "
                         f"{', '.join(names)}")
    else:
        target = np.array([float(eval_point[n]) for n in names])
    at_eval = np.all(experiment.coordinates == target[None, :], axis=1)
    shown = ", ".join(f"{n}={v:g}" for n, v in zip(names, target))
    if not at_eval.any():
        raise SystemExit(f"design.py: {path}: nothing is measured at the evaluation point {shown}")
    # Kernels: the call paths measured at the evaluation point (one whose mean there is 0 is within every
    # tolerance only when predicted as exactly 0, as in Case.errors).
    truth_sum = np.bincount(experiment.callpath_index[at_eval], experiment.value[at_eval],
                            minlength=len(experiment.callpaths))
    truth_count = np.bincount(experiment.callpath_index[at_eval], minlength=len(experiment.callpaths))
    with np.errstate(all="ignore"):
        truth_all = truth_sum / truth_count
    usable = (truth_count > 0) & np.isfinite(truth_all)
    kernel_of = np.where(usable, np.cumsum(usable) - 1, -1)
    rest = experiment.take(~at_eval)
    points, pid = row_codes(rest.coordinates)  # every measured point but the evaluation point, sorted
    kid = kernel_of[rest.callpath_index]
    keep = kid >= 0
    kid, pid, value, repetition = kid[keep], pid[keep], rest.value[keep], rest.repetition[keep]
    cell = kid * len(points) + pid
    order = np.lexsort((repetition, cell))
    starts = np.r_[0, np.flatnonzero(np.diff(cell[order])) + 1]
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
    values = np.full((int(usable.sum()), len(points), int(rank.max()) + 1 if rank.size else 1), np.nan)
    values[kid, pid, rank] = value
    kernels = [c.name for c, u in zip(experiment.callpaths, usable) if u]
    label = label or os.path.basename(os.path.normpath(path))
    return Case(names, points, kernels, values, truth_all[usable], target, label, processes)


def synthetic_case(m: int, functions: int, seed: int, repetitions: int = REPETITIONS, corner: bool = False) -> Case:
    """The seed-002 functions on the grid of :data:`VALUES`, evaluated at :data:`NEXT` (``corner``: at the grid's
    largest corner instead, left out of the measured points, as RELeARN's protocol; :func:`_corner_left_out`)."""
    names = list(VALUES)[:m]
    rng = np.random.default_rng(seed + 10 * m)
    fs = [Function(rng, names) for _ in range(functions)]
    points = np.stack([g.reshape(-1) for g in np.meshgrid(*[VALUES[n] for n in names], indexing="ij")], axis=1)
    points = points.astype(float)
    values = np.stack([f(points) for f in fs])[:, :, None] * (1 + rng.uniform(-NOISE, NOISE,
                                                                             (functions, len(points), repetitions)))
    eval_point = points.max(axis=0) if corner else np.array([NEXT[n] for n in names])
    truth = [f(eval_point[None, :])[0] for f in fs]
    keep = _corner_left_out(points, corner)
    return Case(names, points[keep], [f"f{k}" for k in range(functions)], values[:, keep], truth, eval_point,
                f"synthetic, {m} parameter{'s' if m > 1 else ''}", notes=[f.formula() for f in fs])


def _corner_left_out(points: np.ndarray, corner: bool) -> np.ndarray:
    """Which grid points a case measures: all, or (``corner``) all but the largest corner, where it is then
    evaluated (``--eval-corner``: the evaluation inside the measured range, as on RELeARN)."""
    return ~np.all(points == points.max(axis=0), axis=1) if corner else np.ones(len(points), dtype=bool)


DRAWN_CLASSES = ("inside", "outside", "falling")
"""The exponent classes of ``benchmarks/robustness.py`` the realistic and far cases draw from: the three it had when
the recorded tables of these cases were measured (its ``turning`` class, added in session 56, is left out so that
``--seed N`` draws the same functions as before)."""


def realistic_case(functions: int, seed: int, repetitions: int = REPETITIONS, corner: bool = False) -> Case:
    """Two-parameter functions drawn as ``benchmarks/robustness.py`` draws them, on the synthetic grid (p = 4…64 ×
    s = 10…50, evaluation at p = 128, s = 60): exponents on Extra-P's grid and off it, falling series (strong
    scaling), constants that dominate or vanish, values from 0.01 to 10⁴; each function with its own noise level
    drawn from 0, 2, 5, 10, 20 and 40 % (every run ``× (1 + U(-e, e))``).  Held out from the selector's rules: the
    seed-002 functions have whole exponents and ±5 % noise on every one.  ``corner``: evaluated at the grid's
    largest corner (p = 64, s = 50), left out of the measured points."""
    import robustness

    names = ["p", "s"]
    rng = np.random.default_rng([seed, 2026, 11, 27])
    points = np.stack([g.reshape(-1) for g in np.meshgrid(VALUES["p"], VALUES["s"], indexing="ij")], axis=1)
    points = points.astype(float)
    eval_point = points.max(axis=0) if corner else np.array([NEXT[n] for n in names])
    values, truth, notes = [], [], []
    for _ in range(functions):
        kind = DRAWN_CLASSES[int(rng.integers(len(DRAWN_CLASSES)))]
        noise = float(rng.choice(robustness.NOISES))
        f = robustness.make_function(rng, 2, kind, points.max(axis=0))
        clean = robustness.evaluate(f, points)
        values.append(clean[:, None] * (1 + rng.uniform(-noise, noise, (len(points), repetitions))))
        truth.append(float(robustness.evaluate(f, eval_point[None, :])[0]))
        notes.append(f"{robustness.describe(f, names)} ({kind}, ±{noise:.0%})")
    keep = _corner_left_out(points, corner)
    return Case(names, points[keep], [f"f{k}" for k in range(functions)], np.stack(values)[:, keep], truth,
                eval_point, "realistic, 2 parameters", notes=notes)


BASE_RULES = ("1", "2", "3", "4", "advised", "noise")
"""How ``ours`` repeats its base design (``--base-repetitions``): a fixed number; ``advised``: the repetitions
``suggest`` plans (:func:`extrap_plugins.design.advise_repetitions`) if the full lines with them fit half the
budget, else single runs; ``noise``: a second run at the three cheapest base points, then as many repetitions of
the full lines as bring the standard error of a point's mean to 1 % (at most the advised number), if they fit
half the budget.  The default, 1, is what the tables in the README show; the others are measured in
design-history.md."""


def grid_costs(case: Case, k: int, repetitions: int = 1) -> np.ndarray:
    """Kernel ``k``'s cost of every point of ``case.space()``'s grid with its first ``repetitions`` runs (those it
    has); 1e30 where the kernel has no run there, so that no design chooses it."""
    index = case.grid_index()
    at = np.maximum(index, 0)
    cost = np.nansum(case.cost[k, at, :repetitions], axis=1)
    return np.where((index >= 0) & (case.available[k, at] > 0), cost, 1e30)


def base_counts(case: Case, k: int, budget: float, rule: str = "1", off_line: bool = True,
                whole: int | None = None) -> np.ndarray:
    """Repetitions per point of kernel ``k``'s base design under ``rule`` (see :data:`BASE_RULES`): the lines
    through a corner that fit and, as ``design.suggest`` plans it (``design.base_points``), with two or more
    parameters the cheapest point off the lines (one run; lines alone cannot tell additive from multiplicative
    effects, and a line where another parameter's factor vanishes, at 1 for a logarithm, looks flat), both within
    the budget (the lines alone when only they fit).
    ``off_line=False``: the lines alone (the base of the tables before 2026-11-27).  ``whole``: every point
    (the one off the lines included) with that many repetitions (at most those it has), costed with them, as
    ``design.suggest`` plans its base (``rule`` is then ignored)."""
    from extrap_plugins import design

    P, R = case.values.shape[1:]
    space, index = case.space(), case.grid_index()
    effective = grid_costs(case, k, whole or 1)
    counts = np.zeros(P, dtype=np.int64)
    grid = space.grid()
    allowed = np.zeros(len(index), dtype=bool)
    allowed[index >= 0] = case.available[k, index[index >= 0]] > 0
    order = np.lexsort((np.prod(np.abs(grid), axis=1), effective))  # cheapest first, as CostModel.order
    if off_line:  # the lines and the point off them within the budget, as design.suggest plans them
        chosen, off, _ = design.base_points(space, effective, budget * case.total[k], order=order, allowed=allowed)
    else:
        (chosen, _, _), off = design.base_design(space, effective, budget * case.total[k]), None
    repetitions = 1
    if whole:
        repetitions = whole
    elif rule.isdigit():
        repetitions = int(rule)
    elif R >= 2:
        wanted = min(design.advise_repetitions(len(case.names))[0], R)
        if rule == "noise":
            probe = sorted((int(index[g]) for g in chosen if index[g] >= 0), key=lambda i: case.cost[k, i, 0])[:3]
            pairs = case.values[k, probe, :2]
            variance = float(np.mean(np.var(pairs, axis=1, ddof=1) / np.mean(pairs, axis=1) ** 2))
            wanted = int(min(wanted, max(1, np.ceil(variance / 0.01**2))))
            counts[probe] = 2
        full, _, _ = design.base_design(space, effective, np.inf)
        on_grid = [int(index[g]) for g in full if index[g] >= 0]
        for r in range(wanted, 1, -1):
            if np.nansum(case.cost[k, on_grid, :r]) <= 0.5 * budget * case.total[k]:
                chosen, repetitions = full, r
                lines_off = design.off_the_lines(grid, full) & allowed  # off the full lines now
                off = next((int(g) for g in order if lines_off[g]), None) if off_line else None
                break
    for g in chosen:
        if index[g] >= 0:
            counts[index[g]] = max(counts[index[g]], repetitions)
    if off_line and off is not None:
        counts[index[off]] = max(counts[index[off]], whole or 1)
    return np.minimum(counts, case.available[k])


POINT_LABELS = {"auto": "", "new": ", new points only", "any": ", repeats too", "new-first": ", new points first",
                "whole": ", whole points", "noise": ", repetitions by noise",
                "auto-full": ", whole points if the base fits",
                "auto-new": ", base as auto, then single runs at new points",
                "auto-wait": ", repetitions only once every point is measured",
                "auto-loose": ", repetitions once no new point fits even if fewer than three are paid",
                "auto-single": ", single runs (no whole points)",
                "auto-whole": ", whole points for an evaluation point inside the range too",
                "auto-noisy": ", repetitions compete with new points for noisy kernels"}
"""What each rule of :data:`POINT_RULES` adds to the label of ``ours``."""

POINT_RULES = tuple(POINT_LABELS)
"""What ``run_ours`` may buy per step: ``new`` only points not yet measured, one run each; ``whole`` new points only,
the base design's included, each with the repetitions ``design.advise_repetitions`` advises (at most those the
point has), costed with all of them; ``auto`` (the default) what ``design.suggest`` plans (so ``suggest`` and
``autotune``): per kernel ``whole`` with as many of those repetitions as its whole base design can have within
:data:`~extrap_plugins.design.BASE_SHARE` (half) of the budget (:func:`whole_base_fits`), else (not even two, or
an evaluation point inside the measured range: ``design.target_inside``) ``new``, and once every point is
measured, or once no new point fits while the kernel's single runs vary by
:data:`~extrap_plugins.design.QUIET_NOISE` or more of the value at the evaluation point
(``Assessment.scaled_run_noise``), single runs that repeat measured points, up to the advised repetitions;
provided the budget left pays for repetitions at the :data:`~extrap_plugins.design.PAIRS` cheapest measured
points; ``auto-loose`` the same without that proviso (the product's rule in session 38); ``auto-wait`` the same
but repetitions only once every point is measured (the product's rule until session 38); ``auto-full`` the same
with the whole budget (the product's rule in commit 4c5b18d); ``auto-new`` the base as ``auto``, then single runs
at new points; ``auto-single`` the same as ``auto`` with single runs throughout (no whole points, base included);
``auto-whole`` the same as ``auto`` but with whole points also where the evaluation point lies inside the measured
range (``auto`` plans single runs there, as ``design.suggest`` since session 40); ``auto-noisy`` the same as
``auto`` but, for a kernel whose single runs vary by :data:`~extrap_plugins.design.QUIET_NOISE` or more of the value
at the evaluation point, repetitions of measured points compete with new points from the first step after the base
(session 43, not adopted); ``any`` a run at any point with
repetitions left, a measured one included (the default until 2026-11-27); ``new-first`` new points while one is
worth its cost, then repetitions of measured points with the budget left; ``noise`` new points with as many
repetitions as the kernel's measured noise asks for (:func:`noise_sized`)."""


@dataclasses.dataclass(frozen=True)
class Ours:
    """How ``ours`` runs (the ``--selector-*`` and ``--base-*`` options; the defaults are the product's).

    ``tolerance``: the stopping rule's half-width at the evaluation point; ``modeler``: the selector's;
    ``base_rule``: how the base design is repeated (:data:`BASE_RULES`; ``points`` decides where it says
    nothing); ``off_line``: the point off the lines, as ``design.suggest`` plans it; ``misfit``: the selector's
    misfit members; ``interaction``: its interaction members (``selector.assess(interaction=True)``);
    ``replicates``: its bootstrap refits (default :data:`~extrap_plugins.selector.REPLICATES`);
    ``calibrated=False`` leaves the ensembles uninflated (``selector.assess(calibrated=False)``); ``floor``: how
    the calibration widens them (``selector.assess(floor=...)``); ``points``: what it may buy
    (:data:`POINT_RULES`); ``visible=False`` also buys runs that narrow no interval as printed (as ``suggest``
    did until session 62; ``selector.plan_runs(visible=...)``)."""

    tolerance: float = 0.05
    modeler: str = "default"
    base_rule: str = "1"
    off_line: bool = True
    misfit: bool = False
    replicates: int | None = None
    calibrated: bool = True
    points: str = "auto"
    interaction: bool = False
    floor: str = selector.FLOOR
    visible: bool = True
    nearest: bool = True

    @classmethod
    def from_args(cls, args) -> Ours:
        return cls(args.selector_tolerance, args.modeler, args.base_repetitions, not args.base_lines_only,
                   args.selector_misfit, args.selector_replicates, not args.selector_uncalibrated,
                   args.selector_points, args.selector_interaction, args.selector_floor,
                   not args.selector_invisible, args.selector_nearest != "none")

    def label(self) -> str:
        """The row label of the tables: ``ours (selector)`` and what differs from the product."""
        label = "ours (selector)"
        label += " + misfit members" if self.misfit else ""
        label += " + interaction members" if self.interaction else ""
        label += f", {self.replicates} replicates" if self.replicates else ""
        label += ", uncalibrated" if not self.calibrated else ""
        label += f", floor in the {self.floor}" if self.calibrated and self.floor != selector.FLOOR else ""
        label += ", lines only" if not self.off_line else ""
        label += ", runs that narrow nothing as printed too" if not self.visible else ""
        label += ", without the point nearest the target first" if not self.nearest else ""
        return label + POINT_LABELS[self.points]


def run_ours(case: Case, budget: float, ours: Ours = Ours(), seed: int = 0, promises: list | None = None):
    """Our selector (as ``ours`` says), per kernel: the base design that fits, then the run of largest expected
    reduction of the interval at the evaluation point per unit of cost, until the interval is within the
    tolerance or nothing fits; ``seed`` sets the signs of the wild bootstrap.  All kernels advance in lock-step
    so that one modeling call serves them all.  ``promises``, if given, receives per kernel and run beyond the
    base the interval's half-width before the run, the one the plan promised after it and the one the next
    assessment measured (``--plan-widths``).

    Returns the repetitions per kernel and point, and per kernel whether it stopped because the rule held (rather
    than because nothing more fitted the budget)."""
    from extrap_plugins import design, selector

    points, base_rule, off_line = ours.points, ours.base_rule, ours.off_line
    K = len(case.kernels)
    advised = min(design.advise_repetitions(len(case.names))[0], case.values.shape[2])
    # Per kernel: the repetitions of every point of its base design (whole points), or 0 for single runs.
    whole = np.full(K, advised if points == "whole" else 0)
    noisy_rule = points == "auto-noisy"
    points = "auto" if noisy_rule else points
    if points in ("auto", "auto-full", "auto-new", "auto-wait", "auto-loose", "auto-single", "auto-whole"):
        share = budget * (1.0 if points == "auto-full" else design.BASE_SHARE)
        # as many of the advised repetitions as the whole base can have within the share (as design.suggest), and
        # single runs for an evaluation point inside the measured range (as design.suggest for such a target)
        inside = design.target_inside(case.space(), dict(zip(case.names, case.eval_point)))
        whole = np.array([next((r for r in range(advised, 1, -1) if whole_base_fits(case, k, share, r)), 0)
                          for k in range(K)])
        if points == "auto-single" or (inside and points == "auto"):
            whole[:] = 0
        points = "auto" if points in ("auto-single", "auto-whole") else points
    if points == "noise":
        counts, whole = noise_sized(case, budget, advised, base_rule, off_line)
    else:
        counts = np.stack([base_counts(case, k, budget, base_rule, off_line, int(whole[k]) or None)
                           for k in range(K)])
    # ... and of every point it buys beyond the base.
    beyond = np.zeros(K, dtype=np.int64) if points == "auto-new" else whole
    active = np.ones(K, dtype=bool)
    held = np.zeros(K, dtype=bool)
    promised = {}  # kernel -> (half-width before its last run, the half-width the plan promised after it)
    while active.any():
        by_name, noise = {}, {}
        for repetitions in np.unique(beyond[active]):  # one modeling call per kind of run
            kernels = np.flatnonzero(active & (beyond == repetitions))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assessment = selector.assess(case.experiment(counts, kernels), case.eval_point, case.points,
                                             modeler=ours.modeler, min_share=0.0, seed=seed, misfit=ours.misfit,
                                             replicates=ours.replicates or selector.REPLICATES,
                                             calibrated=ours.calibrated, floor=ours.floor,
                                             repetitions=max(int(repetitions), 1),
                                             interaction=ours.interaction)
            by_name.update({kern.name: (assessment, kern) for kern in assessment.kernels})
            if points in ("auto", "auto-loose"):  # what the repetitions once no new point fits are gated on
                noise.update(zip([kern.name for kern in assessment.kernels],
                                 assessment.scaled_run_noise(case.points)))
        for k in np.flatnonzero(active):
            assessment, kern = by_name.get(case.kernels[k], (None, None))
            if kern is None or not kern.judged:
                active[k] = False
                continue
            single = selector.Assessment(assessment.parameters, assessment.target, assessment.candidates, [kern])
            width = selector.z_of(single.level) * np.sqrt(kern.variance())
            _measured_promise(promised, promises, k, width)
            spent = case.spent(counts)[k] * case.total[k]
            left = case.available[k] - counts[k]
            new = np.where(counts[k] > 0, 0, np.minimum(left, 1))  # points not yet measured, one run each
            cost = case.next_cost(k, counts[k])
            if beyond[k]:  # a new point with all its repetitions is one run of the plan
                cost = np.where(new > 0, np.nansum(case.cost[k, :, : beyond[k]], axis=1), np.inf)
            runs = []
            options = [left] if points == "any" else [new, left] if points == "new-first" else [new]
            # repetitions of measured points, up to the advised (as design.suggest)
            repeats = np.where(counts[k] > 0, np.clip(np.minimum(left, advised - counts[k]), 0, None), 0)
            repeating = points in ("auto", "auto-full", "auto-wait", "auto-loose") and not new.any() and not beyond[k]
            if repeating:  # every point measured
                options = [repeats]
            elif noisy_rule and not beyond[k] and noise[kern.name] >= design.QUIET_NOISE**2:
                options = [np.where(counts[k] > 0, repeats, new)]
            remaining = budget * case.total[k] - spent
            first = _nearest_first(case, ours, width, new, cost, remaining)
            options = [] if first else options  # the point nearest the target first, while it is new and fits
            runs, after = first, {kern.name: width}
            for available in options:
                runs, after = selector.plan_runs(single, cost, tolerance=ours.tolerance,
                                                 limit=budget * case.total[k] - spent, max_runs=1, available=available,
                                                 visible=ours.visible)  # as suggest: no run that narrows nothing shown
                if runs:
                    break
            # no new point fits: repetitions if the kernel's single runs are noisy and the budget left pays for
            # repetitions at the PAIRS cheapest measured points (as design.suggest)
            gated = (points in ("auto", "auto-loose") and not runs and not repeating and not beyond[k]
                     and noise[kern.name] >= design.QUIET_NOISE**2
                     and (points == "auto-loose" or design.pairs_fit(np.where(repeats > 0, cost, np.inf),
                                                                     budget * case.total[k] - spent)))
            if gated:
                runs, after = selector.plan_runs(single, cost, tolerance=ours.tolerance,
                                                 limit=budget * case.total[k] - spent, max_runs=1, available=repeats,
                                                 visible=ours.visible)
            if (repeating or gated) and runs and not runs[0].gain > 0:  # a repetition that narrows nothing
                runs = []
            if not runs:
                active[k] = False
                held[k] = single.holds(ours.tolerance)
            else:  # the first repetition of a kernel's single runs repeats PAIRS points (as design.suggest)
                chosen = _first_pairs(runs, counts[k], beyond[k], np.where(repeats > 0, cost, np.inf),
                                      budget * case.total[k] - spent) or [runs[0].index]
                counts[k, chosen] += np.minimum(beyond[k], left[chosen]) if beyond[k] else 1
                promised[k] = (width, after[kern.name])
    return counts, held


def _nearest_first(case: Case, ours: Ours, width: float, new: np.ndarray, cost: np.ndarray, remaining: float) -> list:
    """As ``design.suggest`` plans it (``design.nearest_candidate``): for a kernel with an open interval
    (``width``), where two or more parameters vary and the evaluation point lies beyond the candidate values, the
    point nearest it if that is not measured yet (``new`` > 0) and fits ``remaining`` (``cost``: of a run at each
    point); none otherwise, or with ``--selector-nearest none``."""
    from extrap_plugins import design

    if not ours.nearest or not width > ours.tolerance:
        return []
    nearest = design.nearest_candidate(case.space(), case.points, case.eval_point, cost)
    if nearest is None or not new[nearest] > 0 or not cost[nearest] <= remaining + 1e-9 * max(remaining, 1.0):
        return []
    return [selector.PlannedRun(nearest, float(cost[nearest]), 0.0, [])]


def _first_pairs(runs: list, counts: np.ndarray, beyond: int, costs: np.ndarray, remaining: float) -> list[int]:
    """The points a kernel's next run becomes where it is the first repetition of single runs (``counts`` at most
    1 everywhere, no whole points ``beyond`` the base), as ``design.suggest`` plans it: with the cheapest others to
    :data:`~extrap_plugins.design.PAIRS` points, or the PAIRS cheapest where those do not fit the budget
    ``remaining`` (``costs``: of repeating each point, ``inf`` where it cannot be); none otherwise (the run as
    planned), as where not even the PAIRS cheapest fit."""
    from extrap_plugins import design

    planned = runs[0].index if runs else None
    if planned is None or beyond or counts.max() > 1 or counts[planned] == 0 or not design.pairs_fit(costs, remaining):
        return []
    added = design.pairs_added({planned}, costs[planned], costs, remaining)
    return [planned] + added if added is not None else design.cheapest(costs)


def _measured_promise(promised: dict, promises: list | None, k: int, width: float) -> None:
    """Kernel ``k``'s half-width now, beside the one its last run's plan promised (``--plan-widths``)."""
    if promises is not None and k in promised:
        promises.append((*promised.pop(k), width))


NOISE_TARGET = 0.01
"""``--selector-points noise``: the relative standard error a point's mean should reach (the 1 % below which
``design.advise_repetitions`` already halves the repetitions)."""


def noise_sized(case: Case, budget: float, advised: int, base_rule: str = "1", off_line: bool = True):
    """``--selector-points noise``, per kernel: the base design with single runs and a second run at its three
    cheapest points (the probe); from the probe's relative variance σ², the repetitions that bring a mean's
    standard error to :data:`NOISE_TARGET` (``ceil(σ² / 1 %²)``, at most ``advised``); with more than one, the
    base topped up to them if that fits the budget, and every new point bought with them.  Returns the counts
    and the repetitions per kernel (0: single runs)."""
    K = len(case.kernels)
    counts = np.stack([base_counts(case, k, budget, base_rule, off_line) for k in range(K)])
    whole = np.zeros(K, dtype=np.int64)
    for k in range(K):
        measured = np.flatnonzero((counts[k] > 0) & (case.available[k] >= 2))
        probe = measured[np.argsort(case.cost[k, measured, 1], kind="stable")][:3]
        if probe.size == 0:
            continue
        pairs = case.values[k, probe, :2]
        with np.errstate(all="ignore"):
            variance = float(np.mean(np.var(pairs, axis=1, ddof=1) / np.mean(pairs, axis=1) ** 2))
        if not np.isfinite(variance):
            continue
        wanted = int(min(advised, max(1, np.ceil(variance / NOISE_TARGET**2))))
        spent = case.spent(counts)[k]
        if spent + np.sum(case.cost[k, probe, 1]) / case.total[k] <= budget + 1e-12:
            counts[k, probe] = np.maximum(counts[k, probe], 2)
        if wanted > 1:
            whole[k] = wanted
            topped = counts.copy()
            topped[k] = np.where(counts[k] > 0, np.minimum(np.maximum(counts[k], wanted), case.available[k]), 0)
            if case.spent(topped)[k] <= budget + 1e-12:
                counts = topped
    return counts, whole


def whole_base_fits(case: Case, k: int, budget: float, repetitions: int) -> bool:
    """Whether kernel ``k``'s whole base design (``design.base_cost``: lines of five and the point off them) with
    ``repetitions`` runs a point fits ``budget``: the rule by which ``design.suggest`` keeps the advised
    repetitions (``--selector-points auto``)."""
    from extrap_plugins import design

    return design.base_cost(case.space(), grid_costs(case, k, repetitions)) <= budget * case.total[k] * (1 + 1e-9)


def run_gpr(case: Case, budget: float, seed: int = 0):
    """The GPR strategy (benchmarks/_gpr.py), per kernel, until nothing fits the budget; ``seed`` varies the random
    restarts of its hyperparameter fit (seed 0: the tables' runs)."""
    import _gpr

    K, P = case.values.shape[:2]
    counts = np.zeros((K, P), dtype=np.int64)
    for k in range(K):
        base = _gpr.base_lines(case.points, np.where(case.available[k] > 0, case.cost[k, :, 0], np.inf))
        counts[k, base] = np.minimum(1, case.available[k, base])
        if case.spent(counts)[k] > budget:
            continue
        noise = _gpr.mean_noise_percent(case.values[k])
        gp = _gpr.GaussianProcess(noise, restarts=2, seed=k + 1000 * seed)
        while True:
            spent = case.spent(counts)[k] * case.total[k]
            means = np.array([np.mean(case.values[k, i, : counts[k, i]]) if counts[k, i] else np.nan
                              for i in range(P)])
            best = _gpr.select(case.points, counts[k], means, case.next_cost(k, counts[k]),
                               case.available[k] - counts[k],
                               budget * case.total[k] - spent, noise, gp)
            if best is None:
                break
            counts[k, best] += 1
    return counts


def run_cheapest(case: Case, budget: float):
    """Cheapest point first (CPF): the GPR base lines, then whole points (all repetitions) cheapest first."""
    import _gpr

    K, P = case.values.shape[:2]
    counts = np.zeros((K, P), dtype=np.int64)
    for k in range(K):
        base = _gpr.base_lines(case.points, np.where(case.available[k] > 0, case.cost[k, :, 0], np.inf))
        counts[k, base] = case.available[k, base]
        whole = np.nansum(case.cost[k], axis=1)
        for i in np.argsort(whole, kind="stable"):
            if counts[k, i] or not case.available[k, i]:
                continue
            if (case.spent(counts)[k] * case.total[k] + whole[i]) > budget * case.total[k]:
                break
            counts[k, i] = case.available[k, i]
    return counts


def run_product(case: Case, budget: float, tolerance: float = 0.05, max_rounds: int = 500) -> tuple[np.ndarray, float]:
    """What the product plans for an application whose kernels are the case's: ``design.suggest`` over all kernels
    at once (one merged plan, the product's default cost model -- ``p``, or the product of all parameters without a
    resource parameter --, the budget ``budget`` × the cost of every run the case has), driven round by round as
    ``autotune`` drives it (the base design whole, then the plan's first run) until it plans nothing, with the
    case's measurements as the runs' results.  Unlike the protocol's other strategies the kernels share the points
    and the budget.  Returns the repetitions per kernel and point (the same for every kernel) and the share of that
    cost spent."""
    from extrap_plugins import design

    K, P = case.values.shape[:2]
    costs, available, full = _shared_costs(case)
    counts = np.zeros(P, dtype=np.int64)
    index = {tuple(point): i for i, point in enumerate(case.points.tolist())}
    space = case.space()
    absent = [point for point in space.grid().tolist() if tuple(point) not in index]  # the evaluation point
    settings = dict(budget=f"{budget * full!r}u", target=dict(zip(case.names, case.eval_point.tolist())),
                    tolerance=tolerance, exclude=absent)
    for _ in range(max_rounds):
        experiment = case.experiment(np.tile(counts, (K, 1))) if counts.any() else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            suggestion = design.suggest(space, experiment, **settings)
        runs = suggestion.plan.runs if suggestion.status == "base" else suggestion.plan.runs[:1]
        added = 0
        for run in runs:
            i = index[tuple(float(run.point[name]) for name in case.names)]
            more = min(run.repetitions, int(available[i] - counts[i]))
            counts[i] += max(more, 0)
            added += max(more, 0)
        if not added:  # nothing planned, or only runs the case does not have
            break
    return np.tile(counts, (K, 1)), float(np.sum(costs * counts)) / full


def _shared_costs(case: Case) -> tuple[np.ndarray, np.ndarray, float]:
    """For designs shared by all kernels: a run's cost at every point under the product's default cost model, the
    runs every kernel has there, and the cost of all of them."""
    from extrap_plugins import design

    costs = design.CostModel.parse(None, case.names)(case.points)
    available = case.available.min(axis=0)
    return costs, available, float(np.sum(costs * available))


def run_random_shared(case: Case, budget: float, seed: int = 0) -> tuple[np.ndarray, float]:
    """A random design shared by all kernels, the yardstick of ``product``: the first runs of all points in a
    random order, then the repetitions, every run taken whose cost under the product's default cost model fits
    ``budget`` × the cost of every run the case has.  Returns the repetitions per kernel and point (the same for
    every kernel) and the share of that cost spent."""
    K, P = case.values.shape[:2]
    costs, available, full = _shared_costs(case)
    counts, spent, limit = np.zeros(P, dtype=np.int64), 0.0, budget * full * (1 + 1e-12)
    rng = np.random.default_rng([seed, 48])
    for repetition in range(int(available.max(initial=0))):
        for i in rng.permutation(P):
            if available[i] > repetition and counts[i] == repetition and spent + costs[i] <= limit:
                counts[i] += 1
                spent += costs[i]
    return np.tile(counts, (K, 1)), spent / full


RANDOM_DRAWS = 30
"""``--random-draws``: how many random designs the ``random`` strategy draws per budget."""
RANDOM_STRATEGIES = ("random", "shared", "shapes")
"""The strategies that draw ``--random-draws`` designs each."""


def run_random(case: Case, budget: float, seed: int = 0) -> np.ndarray:
    """A random design, per kernel: the first runs of all points in a random order, then the repetitions in a
    random order (a point's second run only after its first, and so on), every run taken that fits the budget
    left.  No knowledge of the values: what any design of that budget reaches by chance, the yardstick that tells
    how much of a strategy's figure its choice of points earns.  ``seed`` draws the orders (one per kernel)."""
    K, P = case.values.shape[:2]
    counts = np.zeros((K, P), dtype=np.int64)
    for k in range(K):
        rng = np.random.default_rng([seed, k])
        limit, spent = budget * case.total[k] * (1 + 1e-12), 0.0
        for repetition in range(int(case.available[k].max(initial=0))):
            for i in rng.permutation(P):
                if case.available[k, i] <= repetition or counts[k, i] < repetition:
                    continue
                cost = case.cost[k, i, repetition]
                if spent + cost <= limit:
                    counts[k, i] += 1
                    spent += cost
    return counts


def run_random_shape(case: Case, budget: float, seed: int = 0) -> np.ndarray:
    """A random design of any shape, per kernel: every point gets a number of runs drawn from none to all its
    repetitions, then runs are taken away at random (a point's last first) until the design fits the budget.
    Where :func:`run_random` measures every point once before any twice, these designs also leave points out and
    repeat others: what the choice of points can change at a budget, and what no choice of them decides (the
    share of such designs with which a kernel lands, ``--per-kernel``)."""
    K, P = case.values.shape[:2]
    counts = np.zeros((K, P), dtype=np.int64)
    for k in range(K):
        rng = np.random.default_rng([seed, k])
        counts[k] = rng.integers(0, case.available[k] + 1)
        spent = case.spent(counts)[k] * case.total[k]
        while spent > budget * case.total[k] * (1 + 1e-12):
            i = rng.choice(np.flatnonzero(counts[k]))
            counts[k, i] -= 1
            spent -= case.cost[k, i, counts[k, i]]  # its last run
    return counts


def protocol(case: Case, budgets, strategies, ours: Ours = Ours(), final: str | None = None, seeds=(0,),
             errors_out: dict | None = None, random_draws: int = RANDOM_DRAWS,
             promises: list | None = None) -> list[list[str]]:
    """Rows: strategy, budget, within ±5/10/15/20 %, mean cost used, kernels over budget, and for ours the kernels
    its stopping rule held for (those of them beyond ±10 % in brackets; summed over the seeds).  ``errors_out``,
    if given, receives every run's errors per kernel: ``(label, budget)`` → one array per seed (inf where the base
    exceeded the budget), and ``("full factorial", None)`` → the full factorial's.

    ``ours.modeler`` is the selector's; ``final`` (default: that one) models every strategy's points for the
    evaluation, the same for all strategies.  ``ours`` and ``gpr`` run once per seed of their randomness
    (``seeds``: ours' bootstrap signs, GPR's hyperparameter restarts); with more than one, the row gives the means
    and the ±10 % column the range over the seeds.  ``random``, ``shared`` and ``shapes`` draw ``random_draws``
    designs each (:func:`run_random`, :func:`run_random_shared`, :func:`run_random_shape`) and gives their means
    and range the same way.  ``promises``: as :func:`run_ours` fills it, over every run of
    ours."""
    rows = []
    final = final or ours.modeler
    full = case.errors(case.available, final)
    if errors_out is not None:
        errors_out[("full factorial", None)] = [full]
    rows.append(["full factorial", "100%"] + [f"{np.mean(full <= b):.1%}" for b in BUCKETS] + ["100.0%", "0", "–"])
    for budget in budgets:
        for name in strategies:
            label = {"ours": ours.label(), "gpr": "GPR re-implementation", "cpf": "cheapest first",
                     "random": "random design", "product": "product: one plan, default cost",
                     "shared": "random design shared by all kernels", "shapes": "random design of any shape"}[name]
            shares, costs, overs, stops, wrong = [], [], [], 0, 0
            draws = (seeds if name in ("ours", "gpr") else range(random_draws) if name in RANDOM_STRATEGIES
                     else (None,))
            for seed in draws:
                start = time.perf_counter()
                held, shared = None, None
                if name == "product":
                    counts, shared = run_product(case, budget)
                elif name == "shared":
                    counts, shared = run_random_shared(case, budget, seed)
                elif name == "ours":
                    counts, held = run_ours(case, budget, ours, seed, promises)
                elif name == "random":
                    counts = run_random(case, budget, seed)
                elif name == "shapes":
                    counts = run_random_shape(case, budget, seed)
                else:
                    counts = run_gpr(case, budget, seed) if name == "gpr" else run_cheapest(case, budget)
                errors = case.errors(counts, final)
                if held is not None:
                    stops, wrong = stops + int(held.sum()), wrong + int(np.sum(held & (errors > 0.10)))
                used = case.spent(counts) if shared is None else np.full(len(case.kernels), shared)
                over = used > budget + 1e-9
                errors = np.where(over, np.inf, errors)  # a base design beyond the budget counts as a miss
                if errors_out is not None:
                    errors_out.setdefault((label, budget), []).append(errors)
                shares.append([np.mean(errors <= b) for b in BUCKETS])
                costs.append(np.mean(used[~over]) if (~over).any() else float("nan"))
                overs.append(int(over.sum()))
                which = f" (seed {seed})" if seed is not None and len(draws) > 1 else ""
                print(f"  {case.label}: {label}{which} at {budget:.0%}: ±10 % {np.mean(errors <= 0.10):.1%}, "
                      f"cost {np.mean(used):.1%} ({time.perf_counter() - start:.1f} s)", flush=True)
            mean = np.mean(shares, axis=0)
            cells = [f"{v:.1%}" for v in mean]
            if len(shares) > 1:
                cells[1] += f" ({min(s[1] for s in shares):.1%}–{max(s[1] for s in shares):.1%})"
                label += f", mean of {len(shares)} {'draws' if name in RANDOM_STRATEGIES else 'seeds'}"
            spent = [c for c in costs if np.isfinite(c)]
            rows.append([label, f"{budget:.0%}"] + cells + [f"{np.mean(spent):.1%}" if spent else "–",
                                                            f"{np.mean(overs):g}",
                                                            f"{stops} ({wrong})" if name == "ours" else "–"])
    return rows


def per_kernel(case: Case, errors: dict, budget: float, misses_only: bool = False) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of the per-kernel table at ``budget`` (``--per-kernel``): every kernel's error at the
    evaluation point with the full factorial and with every strategy (the mean over its seeds, and with several
    seeds how many of them were within ±10 %), the strategies' misses at ±10 % marked with *.  ``misses_only``:
    only the kernels some strategy (with some seed) or the full factorial missed."""
    full = errors[("full factorial", None)][0]
    runs = [(label, np.array(e)) for (label, b), e in errors.items() if b == budget]
    headers = ["kernel", "full factorial"] + [label for label, _ in runs]
    headers += ["formula"] if any(case.notes) else []
    rows = []
    for k, name in enumerate(case.kernels):
        if misses_only and full[k] <= 0.10 and all((e[:, k] <= 0.10).all() for _, e in runs):
            continue
        row = [name, _share(full[k])]
        for _, e in runs:
            cell = _share(float(np.mean(e[:, k])))
            within = int(np.sum(e[:, k] <= 0.10))
            cell += f" ({within}/{len(e)})" if len(e) > 1 else ""
            row.append(cell + (" *" if within < len(e) else ""))
        rows.append(row + ([case.notes[k]] if any(case.notes) else []))
    return headers, rows


def _share(error: float) -> str:
    return "over budget" if error == np.inf else f"{error:.1%}"


def gpr_protocol(args) -> None:
    from tabulate import tabulate

    headers = ["strategy", "budget", "±5 %", "±10 %", "±15 %", "±20 %", "cost used (mean)", "base over budget",
               "rule held (beyond ±10 %)"]
    strategies = args.strategies.split(",")
    seeds = [int(s) for s in args.selector_seeds.split(",")]
    if args.case in ("relearn", "data", "all"):
        if args.case == "data":
            case = case_study(args.data, parse_point(args.eval_point), args.metric, args.processes)
        else:
            case = relearn_case(args.relearn)
        case = case.reversed_repetitions() if args.reverse_repetitions else case
        budgets = [float(b) / 100 for b in args.relearn_budgets.split(",")]
        errors = {}
        promises = [] if args.plan_widths else None
        rows = protocol(case, budgets, strategies, Ours.from_args(args), args.final_modeler, seeds, errors,
                        args.random_draws, promises)
        shown = ", ".join(f"{n}={v:g}" for n, v in zip(case.names, case.eval_point))
        cost = (f"its core-hours ({case.processes} × value)" if case.processes in case.names
                else f"its value (no parameter {case.processes!r})")
        print(f"\n{case.label} ({len(case.kernels)} kernels, evaluation point {shown} never used; per kernel, "
              f"cost = {cost})")
        print(tabulate(rows, headers=headers, tablefmt="github"))
        for label, figure in PUBLISHED if args.case != "data" else ():
            print(f"{label}: {figure}")
        print_draws(errors)
        if args.judged:
            print_judged(case, errors)
        print_per_kernel(case, errors, budgets, args.per_kernel)
        print_promises(promises)
    generated = []  # (case, what its functions are)
    if args.case == "realistic":
        case = realistic_case(args.functions, args.seed, corner=args.eval_corner)
        generated.append((case, f"{len(case.kernels)} functions as benchmarks/robustness.py draws them, noise 0–40 % "
                                "per function"))
    if args.case in ("synthetic", "all"):
        for m in [int(x) for x in args.parameters.split(",")]:
            case = synthetic_case(m, args.functions, args.seed, corner=args.eval_corner)
            generated.append((case, f"{len(case.kernels)} functions of Ritter et al. 2020, ±{NOISE:.0%} noise"))
    budgets = [float(b) / 100 for b in args.synthetic_budgets.split(",")]
    for case, what in generated:
        case = case.reversed_repetitions() if args.reverse_repetitions else case
        errors = {}
        promises = [] if args.plan_widths else None
        rows = protocol(case, budgets, strategies, Ours.from_args(args), args.final_modeler, seeds, errors,
                        args.random_draws, promises)
        where = (", ".join(f"{n}={v:g}" for n, v in zip(case.names, case.eval_point)) + " (left out)"
                 if args.eval_corner else format_next(case.names))
        print(f"\n{case.label}: {what}, {REPETITIONS} repetitions available, evaluation at {where}")
        print(tabulate(rows, headers=headers, tablefmt="github"))
        print_draws(errors)
        if args.judged:
            print_judged(case, errors)
        print_per_kernel(case, errors, budgets, args.per_kernel)
        print_promises(promises)


FAR_VALUE = 256.0
"""``--case far``: the value of p added beyond the measured grid (p = 4…64), and the target beyond it."""
FAR_TARGET = (512.0, 60.0)


def far_promises(functions: int, seed: int, floors: list[str]) -> None:
    """``--case far``: what a run beyond the measured values is promised to do, and what it does.  Two-parameter
    functions drawn as ``benchmarks/robustness.py`` draws them (noise 0–10 % per function), measured twice at
    every point of p = 4…64 × s = 10…50; then p = 256 is a candidate too and the target is p = 512, s = 60 (a
    user who adds larger values after a sweep).  Per floor rule of the selector (``selector.assess(floor=...)``):
    its first planned run (two repetitions), the half-width the plan promised after it, the half-width the next
    assessment gives once it is measured, and the error at the target after it."""
    import robustness
    from tabulate import tabulate

    from extrap_plugins import model as fit
    from extrap_plugins.experiment import Experiment

    rng = np.random.default_rng([seed, 2026, 11, 29])
    points = np.array([(p, q) for p in VALUES["p"] for q in VALUES["s"]], dtype=float)
    candidates = np.array([(p, q) for p in VALUES["p"] + [FAR_VALUE] for q in VALUES["s"]], dtype=float)
    target = np.array(FAR_TARGET)
    drawn = []
    for _ in range(functions):
        kind = DRAWN_CLASSES[int(rng.integers(len(DRAWN_CLASSES)))]
        noise = float(rng.choice([0.0, 0.02, 0.05, 0.1]))
        drawn.append((robustness.make_function(rng, 2, kind, points.max(axis=0)), noise,
                      int(rng.integers(2**31))))

    def measured(f, noise, where, start, draws):
        values = robustness.evaluate(f, where)[:, None] * (1 + draws.uniform(-noise, noise, (len(where), 2)))
        return Experiment.from_columns(["p", "s"], callpath="f", metric="time", coordinates=np.repeat(where, 2, axis=0),
                                       value=values.reshape(-1), repetition=np.tile([start, start + 1], len(where)))

    rows = []
    for floor in floors:
        ratios, far, within, count = [], 0, 0, 0
        for f, noise, salt in drawn:
            draws = np.random.default_rng(salt)  # the same runs for every floor rule
            experiment = measured(f, noise, points, 0, draws)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assessment = selector.assess(experiment, target, candidates, min_share=0.0, floor=floor,
                                             repetitions=2)
                runs, _ = selector.plan_runs(assessment, 2 * candidates[:, 0], tolerance=0.05, max_runs=1)
                if not runs or not runs[0].serves:
                    continue
                chosen = candidates[runs[0].index][None, :]
                experiment = Experiment.concatenate([experiment, measured(f, noise, chosen, 2, draws)])
                after = selector.assess(experiment, target, candidates, min_share=0.0, floor=floor,
                                        repetitions=2).half_widths()["f"]
                predicted = fit(experiment).get("f", "time").predict(dict(zip(("p", "s"), target)))
            truth = float(robustness.evaluate(f, target[None, :])[0])
            count += 1
            ratios.append(runs[0].serves[0][2] / after)
            far += bool(chosen[0, 0] == FAR_VALUE)
            within += bool(abs(predicted - truth) <= 0.1 * abs(truth))
        ratios = np.array(ratios)
        rows.append([floor, count, f"{np.median(ratios):.2f}", f"{np.mean((ratios > 0.5) & (ratios < 2)):.0%}",
                     f"{np.mean(ratios > 2):.0%}", f"{np.mean(ratios < 0.5):.0%}", f"{far / max(count, 1):.0%}",
                     f"{within / max(count, 1):.0%}"])
    print(f"\nfar candidates: {functions} functions as benchmarks/robustness.py draws them (noise 0–10 %), measured "
          f"twice at p = 4…64 × s = 10…50, p = {FAR_VALUE:g} added, target p = {FAR_TARGET[0]:g}, s = "
          f"{FAR_TARGET[1]:g}; the first planned run (two repetitions), measured")
    print(tabulate(rows, headers=["floor", "functions", "promised / after (median)", "within ×2",
                                  "promised wider ×2+", "promised narrower ×2+", f"run at p = {FAR_VALUE:g}",
                                  "within ±10 % after it"], tablefmt="github"))


PROMISE_BANDS = (0.0, 0.1, 0.3, 1.0, np.inf)
"""``--plan-widths``: the bands of the half-width before a run (relative to the prediction at the target)."""


def print_promises(promises: list | None) -> None:
    """``--plan-widths``: how the half-widths our plans promise after a run compare with those the next
    assessment measures, by the half-width before the run (medians as shares of it; the mean narrowing)."""
    if not promises:
        return
    from tabulate import tabulate

    before, promised, measured = np.array(promises, dtype=np.float64).T
    ok = np.isfinite(before) & np.isfinite(promised) & np.isfinite(measured) & (before > 0)
    rows = []
    for low, high in zip(PROMISE_BANDS[:-1], PROMISE_BANDS[1:]):
        band = ok & (before >= low) & (before < high)
        if not band.any():
            continue
        b, p, m = before[band], promised[band], measured[band]
        rows.append([f"±{low:.0%} to ±{high:.0%}" if np.isfinite(high) else f"±{low:.0%} and more", int(band.sum()),
                     f"{np.median(p / b):.3f}", f"{np.median(m / b):.3f}", f"{np.mean(m > p * 1.001):.0%}",
                     f"{np.mean((b - p) / b):+.1%}", f"{np.mean((b - m) / b):+.1%}"])
    print("\nThe half-widths at the evaluation point our plans promise after a run, against those measured after it")
    print(tabulate(rows, headers=["before the run", "runs", "promised / before (median)",
                                  "measured / before (median)", "measured wider than promised",
                                  "narrowing promised (mean)", "narrowing measured (mean)"], tablefmt="github"))


def print_draws(errors: dict) -> None:
    """For the random designs: how many draws reached each share within ±10 % (the distribution that the
    table's mean and range summarise)."""
    for (label, budget), runs in errors.items():
        if label not in ("random design", "random design shared by all kernels"):
            continue
        shares, times = np.unique(np.round([np.mean(e <= 0.10) for e in runs], 3), return_counts=True)
        spread = ", ".join(f"{share:.1%} in {n}" for share, n in zip(shares, times))
        print(f"{label.replace('design', 'designs')} at {budget:.0%}, within ±10 % per draw: {spread} "
              f"(of {len(runs)} draws)")


def print_judged(case: Case, errors: dict) -> None:
    """``--judged``: the table's ±10 % column counted over the kernels an application cares about only, those at
    least ``selector.MIN_SHARE`` (1 %) of the largest true value at the evaluation point (GPR's filter, which
    ``suggest`` applies to the models), beside the count over every kernel.  A plan shared by all kernels serves
    these (``suggest`` judges no other); the protocol's tables count every kernel alike."""
    from tabulate import tabulate

    judged = np.abs(case.truth) >= selector.MIN_SHARE * np.max(np.abs(case.truth))
    rows = []
    for (label, budget), runs in errors.items():
        within = np.array([e <= 0.10 for e in runs])  # (draws, kernels)
        shares = within[:, judged].mean(axis=1)
        spread = f" ({shares.min():.1%}–{shares.max():.1%})" if len(runs) > 1 else ""
        rows.append([label, "100%" if budget is None else f"{budget:.0%}", f"{shares.mean():.1%}{spread}",
                     f"{within.mean():.1%}"])
    print(f"\nWithin ±10 % over the {judged.sum()} of {len(case.kernels)} kernels at least "
          f"{selector.MIN_SHARE:.0%} of the largest true value at the evaluation point (mean over draws or seeds, "
          f"range in brackets)")
    print(tabulate(rows, headers=["strategy", "budget", "judged kernels", "all kernels"], tablefmt="github",
                   disable_numparse=True))


def print_per_kernel(case: Case, errors: dict, budgets, wanted: str | None) -> None:
    """The per-kernel tables of ``--per-kernel`` (``all``: every kernel; ``misses``: the kernels some strategy
    or the full factorial missed at ±10 %)."""
    from tabulate import tabulate

    if not wanted:
        return
    for budget in budgets:
        headers, rows = per_kernel(case, errors, budget, misses_only=wanted == "misses")
        print(f"\nPer kernel at {budget:.0%}: the error at the evaluation point (mean over seeds or random "
              f"draws; in brackets how many of them were within ±10 %; * a miss at ±10 %)")
        print(tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True))


def parse_point(text: str | None) -> dict[str, float] | None:
    """``p=512,n=9000`` as a dict (None stays None); SystemExit with the reason on anything else."""
    if not text:
        return None
    point = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        try:
            point[name.strip()] = float(value)
        except ValueError:
            raise SystemExit(f"design.py: --eval-point {text!r}: {part!r} is not NAME=NUMBER") from None
    return point


def format_next(names) -> str:
    return ", ".join(f"{n}={NEXT[n]:g}" for n in names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=["seed002", "relearn", "data", "synthetic", "realistic", "far", "all"],
                        default="all",
                        help="realistic: two-parameter functions as benchmarks/robustness.py draws them, noise "
                             "0-40 %% per function (not part of all); far: what the selector promises a run "
                             "beyond the measured values and what it does, per --floors (not part of all)")
    parser.add_argument("--floors", default="own,ladder", help="far: the floor rules of the selector to compare")
    parser.add_argument("--functions", type=int, default=None,
                        help="synthetic functions per parameter count (default: 200 for seed002, 40 for synthetic)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", default=None, help="seed002: the budget of the design (default 15%%)")
    parser.add_argument("--tolerance", type=float, default=None, help="seed002: hold-out tolerance")
    parser.add_argument("--modeler", default="default")
    parser.add_argument("--final-modeler", default=None,
                        help="relearn/synthetic: the modeler of every strategy's final models (default: --modeler); "
                             "'default,refining' chooses per kernel the one that best predicted the kernel's "
                             "largest measured values (selector.choose_models)")
    parser.add_argument("--relearn", default=RELEARN)
    parser.add_argument("--relearn-budgets", default="10,15,20,30,40,50,60,100",
                        help="relearn/data: in %% of the cost")
    parser.add_argument("--data", default=None,
                        help="data: any measurements the readers read (a file or folder), as a case of the GPR "
                             "protocol: one kernel per call path of --metric")
    parser.add_argument("--eval-point", default=None,
                        help="data: the evaluation point, e.g. p=512,n=9000 (default: the largest value of every "
                             "parameter); it must be measured, and it is never used for fitting")
    parser.add_argument("--metric", default=None, help="data: the metric (default: time, or the only one)")
    parser.add_argument("--processes", default="p",
                        help="data: the parameter that counts processes; a run costs processes × value "
                             "(default: p; without it, the value)")
    parser.add_argument("--synthetic-budgets", default="5,10,15", help="in %% of the cost")
    parser.add_argument("--eval-corner", action="store_true",
                        help="synthetic/realistic: evaluate at the grid's largest corner, left out of the measured "
                             "points (inside the measured range, as RELeARN's protocol), not at the next point "
                             "beyond")
    parser.add_argument("--parameters", default="1,2,3", help="synthetic: parameter counts")
    parser.add_argument("--selector-tolerance", type=float, default=0.05,
                        help="our stopping rule: relative half-width of the interval at the evaluation point")
    parser.add_argument("--strategies", default="ours,gpr,cpf",
                        help="comma-separated: ours, gpr, cpf, random (random designs of the same budget, "
                             "--random-draws of them: what a design reaches by chance), product (design.suggest's "
                             "one plan for all kernels, its default cost model, driven as autotune drives it; its cost "
                             "used is the share of that cost), shared (random designs shared by all kernels, "
                             "product's yardstick), shapes (random designs of any shape per kernel: points left out, "
                             "others repeated; with --per-kernel, how often each kernel lands by chance)")
    parser.add_argument("--random-draws", type=int, default=RANDOM_DRAWS,
                        help="random, shared, shapes: how many random designs per budget (default %(default)s)")
    parser.add_argument("--selector-seeds", default="0",
                        help="relearn/synthetic: seeds of the selectors' randomness, comma-separated (ours: its "
                             "bootstrap's signs; gpr: its hyperparameter restarts; each runs once per seed and the "
                             "table gives the mean and the range)")
    parser.add_argument("--base-repetitions", default="1", choices=BASE_RULES,
                        help="relearn/synthetic: how ours repeats its base design (see BASE_RULES; default 1)")
    parser.add_argument("--base-lines-only", action="store_true",
                        help="relearn/data/synthetic: ours' base design without the point off the lines that "
                             "design.suggest adds (the base of the tables measured before 2026-11-27)")
    parser.add_argument("--selector-misfit", action="store_true",
                        help="relearn/synthetic: ours with the misfit members (a GP over the model's residuals; "
                             "selector.assess(misfit=True)), measured beside the default")
    parser.add_argument("--selector-interaction", action="store_true",
                        help="relearn/data/synthetic: ours with the interaction members (the largest interaction "
                             "of a parameter with the other terms the measured points cannot rule out; "
                             "selector.assess(interaction=True)), measured beside the default")
    parser.add_argument("--selector-uncalibrated", action="store_true",
                        help="relearn/synthetic: ours without the calibrated floor of its ensembles (the model's "
                             "confidence interval at the evaluation point; selector.assess(calibrated=False)), "
                             "measured beside the default")
    parser.add_argument("--selector-floor", choices=selector.FLOORS, default=selector.FLOOR,
                        help="relearn/synthetic: how the calibrated floor widens ours' ensembles (ladder: members "
                             "that runs beyond the measured values towards the target narrow, the default since "
                             "session 52; own: a member no run narrows, the default from session 43; members: the "
                             "model-choice members scaled up to it, the default before; selector.assess(floor=...))")
    parser.add_argument("--selector-invisible", action="store_true",
                        help="relearn/synthetic: ours also buying runs that narrow no interval at the evaluation point "
                             "as printed (as suggest did until session 62), measured beside the default")
    parser.add_argument("--selector-nearest", choices=("first", "none"), default="first",
                        help="relearn/synthetic: ours first buys the point nearest the evaluation point, once after "
                             "the base while an interval is open, where two or more parameters vary and it lies "
                             "beyond the candidate values (first, the product's rule: design.nearest_candidate); "
                             "none: not, as before session 70")
    parser.add_argument("--selector-replicates", type=int, default=None,
                        help="relearn/synthetic: ours with this many wild-bootstrap refits per step (default: "
                             "selector.REPLICATES), measured beside the default")
    parser.add_argument("--selector-points", choices=POINT_RULES, default="auto",
                        help="relearn/data/synthetic: what ours may buy (see POINT_RULES): as design.suggest plans "
                             "(auto, the default: whole points where the whole base design with the advised "
                             "repetitions fits half the budget and the evaluation point lies beyond the measured "
                             "range, else new points; auto-full: the whole budget; auto-new: the base as auto, "
                             "then single runs at new points; auto-single: single runs throughout; auto-whole: "
                             "whole points inside the range too); new "
                             "points only, one run each; whole points, new ones with the advised repetitions each, "
                             "the base's included; any point with repetitions left (the default until "
                             "2026-11-27); new points first and then repetitions with the budget left; noise: "
                             "repetitions sized by a probe's noise")
    parser.add_argument("--selector-new-points", dest="selector_points", action="store_const", const="new",
                        help="the same as --selector-points new")
    parser.add_argument("--plan-widths", action="store_true",
                        help="ours: compare the half-widths at the evaluation point the plans promise after each "
                             "run with those the next assessment measures")
    parser.add_argument("--reverse-repetitions", action="store_true",
                        help="relearn/synthetic: take every point's repetitions in the opposite order (a second "
                             "sample of the same data: the first run at a point is the other measurement)")
    parser.add_argument("--per-kernel", choices=["all", "misses"], default=None,
                        help="relearn/data/synthetic: after each table, every kernel's error per strategy and "
                             "budget (all), or only the kernels some strategy missed at ±10 %% (misses)")
    parser.add_argument("--judged", action="store_true",
                        help="relearn/data/synthetic/realistic: also the ±10 %% share over the kernels at least 1 %% "
                             "of the largest true value at the evaluation point (those suggest judges), per "
                             "strategy and budget")
    parser.add_argument("--seed002-strategy", default="cheapest", choices=["cheapest", "uncertainty"],
                        help="seed002: the strategy of design.suggest (default: cheapest, issue 6's table)")
    args = parser.parse_args()
    if args.case == "seed002":
        args.functions = args.functions or 200
        seed002(args)
        return
    if args.case == "data" and not args.data:
        parser.error("--case data needs --data FILE")
    args.functions = args.functions or 40
    import sys

    sys.path.insert(0, __import__("os").path.dirname(__file__))
    if args.case == "far":
        far_promises(args.functions, args.seed, args.floors.split(","))
        return
    gpr_protocol(args)


if __name__ == "__main__":
    try:
        main()
    except SystemExit as stop:  # input it cannot use: its one-line reason and exit 2, as the command line does
        if not isinstance(stop.code, str):
            raise
        print(stop.code, file=sys.stderr)
        raise SystemExit(2) from None
