"""Experiment design (seed 002): accuracy and cost of the suggested design against the full factorial.

Usage (from the project root)::

    .venv/bin/python benchmarks/design.py [--functions 200] [--seed 1] [--budget 15%] [--tolerance 0.05]

The evaluation of seed 002, Section III-B: parameters ``p = 4..64`` (doubling) and ``s = 10..50`` (m = 2),
plus ``n = 1000..5000`` (m = 3); five values each.  Each synthetic function is
``c0 + sum of terms``, every parameter ``x`` appearing as ``x^i * log2(x)^j`` with ``i`` in {0, 1, 2, 3} and
``j`` in {0, 1, 2} (seed 002's sets; not both 0), the parameters combined at random additively, multiplicatively
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
import time
import warnings

import numpy as np

VALUES = {"p": [4, 8, 16, 32, 64], "s": [10, 20, 30, 40, 50], "n": [1000, 2000, 3000, 4000, 5000]}
NEXT = {"p": 128.0, "s": 60.0, "n": 6000.0}
EXPONENTS = (0, 1, 2, 3)  # seed 002, Section III-B: I = {0, 1, 2, 3}, J = {0, 1, 2}
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
            self.groups = [[l] for l in range(m)]
        elif shape == "multiplicative":
            self.groups = [list(range(m))]
        else:
            self.groups = [[0, 1], [2]]
        self.shape = shape
        self.c0 = rng.uniform(0.01, 1000)
        self.coefficients = rng.uniform(0.01, 1000, len(self.groups))

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64).reshape(-1, len(self.names))
        value = np.full(X.shape[0], self.c0)
        for c, group in zip(self.coefficients, self.groups):
            term = np.full(X.shape[0], c)
            for l in group:
                i, j = self.factors[l]
                term = term * X[:, l] ** i * np.log2(X[:, l]) ** j
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--functions", type=int, default=200, help="synthetic functions per parameter count")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", default="15%")
    parser.add_argument("--tolerance", type=float, default=None, help="hold-out tolerance (default: design.TOLERANCE)")
    parser.add_argument("--modeler", default="default")
    args = parser.parse_args()

    import extrap_plugins
    from extrap_plugins import design

    tolerance = design.TOLERANCE if args.tolerance is None else args.tolerance
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
        for k, function in enumerate(functions):
            def measure(runs, function=function):
                points = np.array([[run.point[n] for n in names] for run in runs])
                return measurements([function], points, rng, names)

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = design.run_design(space, measure, budget=args.budget, tolerance=tolerance,
                                           repetitions=REPETITIONS, modeler=args.modeler)
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


if __name__ == "__main__":
    main()
