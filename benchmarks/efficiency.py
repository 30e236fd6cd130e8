"""Known answers for ``extrap-plugins efficiency`` and ``compare``: iso-efficiency functions and crossovers.

Synthetic experiments whose iso-efficiency function and crossovers are known in closed form are measured at
small scales (five process counts × five problem sizes), modelled, and analysed; the script prints how far
the solved answers are from the analytic ones.

* iso-efficiency (strong scaling, ``T = n/p + g(p)``): ``C = n + p·g(p)``, ``W = n + p0·g(p0)``, so
  ``E = level`` gives ``n(p) = (level·p·g(p) − p0·g(p0)) / (1 − level)``; (weak scaling, ``T = a·n + g(p)``):
  ``n(p) = (level·g(p) − g(p0)) / (a·(1 − level))``.  Printed: the growth class of the PMNF model of n(p), the
  largest relative error of the solved n(p) on the measured range (p from 2·p0 to the largest measured p) and of
  the model of n(p) at 8× the largest measured p.  Targets: growth class exact, 1 % in range, 5 % at 8×.
* crossovers of two models ``A(p) = B(p)``, solved between the smallest measured p and the target.  Target: 1 %.

Each case is run without noise and with ±1 % uniform noise (3 repetitions), the noise fixed by ``--seed``.

Usage: ``python benchmarks/efficiency.py [--seed 0] [--level 0.8]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import brentq

import extrap_plugins
from extrap_plugins import Experiment

P_STRONG = [4, 8, 16, 32, 64]
N_STRONG = [100, 200, 400, 800, 1600]
"""Problem sizes at which the overhead is a visible part of the time (not buried under 1 % noise)."""

ISO_CASES = [
    # name, scaling, g(p), a (weak only), expected growth, process counts
    ("T = n/p + log2(p)", "strong", lambda p: np.log2(p), None, "O(p·log p)", [1, 2, 4, 8, 16]),
    ("T = n/p + log2(p)", "strong", lambda p: np.log2(p), None, "O(p·log p)", P_STRONG),
    ("T = n/p + 3·p^(1/2)", "strong", lambda p: 3 * np.sqrt(p), None, "O(p^(3/2))", P_STRONG),
    ("T = n/p + 0.01·p", "strong", lambda p: 0.01 * p, None, "O(p^2)", P_STRONG),
    ("T = n/p + 2·log2(p)^2", "strong", lambda p: 2 * np.log2(p) ** 2, None, "O(p·log^2 p)", P_STRONG),
    ("T = 1e-3·n + log2(p)", "weak", lambda p: np.log2(p), 1e-3, "O(log p)", P_STRONG),
]

CROSS_CASES = [
    # name, A(p), B(p), target p
    ("100 + p vs 20 + 2·p", lambda p: 100 + p, lambda p: 20 + 2 * p, 1024),
    ("20·log2(p) vs 3·p", lambda p: 20 * np.log2(p), lambda p: 3 * p, 1024),
    ("50 + 0.5·p^(3/2) vs 10·p", lambda p: 50 + 0.5 * p**1.5, lambda p: 10 * p, 4096),
    ("5·p·log2(p) vs 200 + 2·p^(5/4)", lambda p: 5 * p * np.log2(p), lambda p: 200 + 2 * p**1.25, 4096),
]


def analytic_n(case, p, p0, level):
    _, scaling, g, a, _, _ = case
    if scaling == "strong":
        return (level * p * g(p) - p0 * g(p0)) / (1 - level)
    return (level * g(p) - g(p0)) / (a * (1 - level))


def measure(functions, ps, ns, noise, repetitions, rng):
    rows, values, paths = [], [], []
    for name, f in functions.items():
        for p in ps:
            for n in ns if ns is not None else [None]:
                for _ in range(repetitions):
                    rows.append([p] if n is None else [p, n])
                    values.append(f(p, n) * (1 + noise * rng.uniform(-1, 1)))
                    paths.append(name)
    parameters = ["p"] if ns is None else ["p", "n"]
    return Experiment.from_columns(parameters, callpath=np.array(paths), metric="time",
                                   coordinates=np.array(rows, dtype=float), value=np.array(values))


def iso_row(case, noise, level, rng):
    name, scaling, g, a, expected, ps = case
    if scaling == "strong":
        ns = N_STRONG
        functions = {"main": lambda p, n: n / p + g(p)}
    else:
        ns = [100, 200, 400, 800, 1600]
        functions = {"main": lambda p, n: a * n + g(p)}
    repetitions = 3 if noise else 1
    data = measure(functions, ps, ns, noise, repetitions, rng)
    start = time.perf_counter()
    result = extrap_plugins.efficiency(data, size="n", scaling=scaling, level=level, target=8 * ps[-1])
    seconds = time.perf_counter() - start
    iso = result.isoefficiency
    p0 = ps[0]
    if iso is None or iso.model is None:
        return [name, scaling, f"{ps[0]}–{ps[-1]}", f"±{noise:.0%}", expected, "none", "NO", "–", "–", "–",
                result.isoefficiency_note, f"{seconds:.2f}"]
    solved = np.array([(p, n) for p, n in iso.points if n is not None and 2 * p0 <= p <= ps[-1]])
    in_range = np.max(np.abs(solved[:, 1] / analytic_n(case, solved[:, 0], p0, level) - 1))
    measured = np.array([p for p in ps if p >= 2 * p0], dtype=float)
    model_in_range = np.max(np.abs(iso.model.predict(measured[:, None]) / analytic_n(case, measured, p0, level) - 1))
    beyond = 8.0 * ps[-1]
    at_8x = abs(iso.model.predict([beyond]) / analytic_n(case, beyond, p0, level) - 1)
    return [name, scaling, f"{ps[0]}–{ps[-1]}", f"±{noise:.0%}", expected, iso.growth or "none",
            "yes" if iso.growth == expected else "NO", f"{in_range:.3%}", f"{model_in_range:.3%}", f"{at_8x:.3%}",
            iso.formula, f"{seconds:.2f}"]


def cross_rows(case, noise, rng):
    name, fa, fb, target = case
    repetitions = 3 if noise else 1
    a = measure({"k": lambda p, n: fa(p)}, P_STRONG, None, noise, repetitions, rng)
    b = measure({"k": lambda p, n: fb(p)}, P_STRONG, None, noise, repetitions, rng)
    grid = np.geomspace(P_STRONG[0], target, 20000)
    d = fb(grid) - fa(grid)
    exact = [brentq(lambda p: fb(p) - fa(p), grid[i], grid[i + 1], xtol=1e-12)
             for i in range(len(grid) - 1) if d[i] * d[i + 1] < 0]
    result = extrap_plugins.compare(a, b, target=f"p={target}")
    found = [c.value for c in result.pairs[0].crossovers]
    if len(found) != len(exact):
        return [[name, f"±{noise:.0%}", ", ".join(f"{x:.4g}" for x in exact), ", ".join(f"{x:.4g}" for x in found),
                 "count differs"]]
    errors = [abs(f / e - 1) for f, e in zip(found, exact)]
    return [[name, f"±{noise:.0%}", ", ".join(f"{x:.4g}" for x in exact), ", ".join(f"{x:.4g}" for x in found),
             f"{max(errors):.3%}" if errors else "–"]]


def main() -> None:
    from tabulate import tabulate

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--level", type=float, default=0.8)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = [iso_row(case, noise, args.level, rng) for case in ISO_CASES for noise in (0.0, 0.01)]
    print(f"iso-efficiency at E = {args.level:g} (n(p) solved from the models, then modelled in PMNF)")
    print(tabulate(rows, headers=["case", "scaling", "p measured", "noise", "expected", "got", "growth exact",
                                  "solved n(p), range", "model n(p), range", "model n(p), 8× beyond", "n(p) =",
                                  "s"], tablefmt="github", disable_numparse=True))
    print()
    rows = [row for case in CROSS_CASES for noise in (0.0, 0.01) for row in cross_rows(case, noise, rng)]
    print("crossovers (p where A = B, solved from the two models between p = 4 and the target)")
    print(tabulate(rows, headers=["A vs B", "noise", "exact", "solved", "largest error"], tablefmt="github",
                   disable_numparse=True))


if __name__ == "__main__":
    main()
