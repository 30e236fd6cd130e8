"""Segmentation detection on synthetic data (Ilyas et al. 2017, Section 4.1), beside Extra-P 4.2.5's segmented modeler.

Usage (from the project root; Extra-P lives in its own venv, never beside extrap-plugins)::

    python3 -m venv ../venv-extrap && ../venv-extrap/bin/pip install extrap==4.2.5
    .venv/bin/python benchmarks/segmented.py [--sets 1000] [--extrap-sets 200]
                                             [--extrap-python ../venv-extrap/bin/python] [--seed 1]

The protocol of Ilyas et al. 2017, Section 4.1: ten points ``p = 1..10``, one value per point; half of the data
sets come from one function ``c0 + c1 * p^i * log2(p)^j`` (not segmented), half from two such functions,
five points each (segmented, the change between p = 5 and p = 6).  Coefficients are uniform in
(0.01, 1000).  Two categories: exponents from the modelers' search space (``i`` one of the 20 default
exponents 0..3, ``j`` in {0, 1, 2}, not both 0), and exponents outside it (``i`` uniform in [0, 3]).
Noise: every value is multiplied by ``1 + u``, ``u`` uniform in [-x, x], for x = 0, 1, 2, 5, 10, 15 %.

Printed per category and noise level: the share of data sets classified correctly, the false-positive rate
(one function called segmented), the false-negative rate, the share of segmented data sets whose change
point was found exactly (between 5 and 6; of all segmented sets, and of those found segmented), and the
time per data set (our full segmented models; Extra-P's ``SegmentedModeler.create_model``).
Extra-P's segmented modeler runs on
the first ``--extrap-sets`` data sets of each in-space row (it takes about half a second per data set),
measured in the same run.  Targets (issue 6): at noise <= 5 %, >= 95 % correct with <= 1 % false
positives, and the change point exact in >= 90 % of the segmented cases inside the search space.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
X = np.arange(1, 11, dtype=np.float64)
SPLIT = 5  # points from the first function in a segmented data set
EXPONENTS = (0, 1 / 4, 1 / 3, 1 / 2, 2 / 3, 3 / 4, 4 / 5, 1, 5 / 4, 4 / 3, 3 / 2, 5 / 3, 7 / 4, 2, 9 / 4, 7 / 3,
             5 / 2, 8 / 3, 11 / 4, 3)
LOG_EXPONENTS = (0, 1, 2)
NOISE = (0.0, 0.01, 0.02, 0.05, 0.10, 0.15)

EXTRAP_SCRIPT = r"""
import json, logging, sys, time, warnings
warnings.simplefilter("ignore")
logging.disable(logging.CRITICAL)
from extrap.entities.callpath import Callpath
from extrap.entities.coordinate import Coordinate
from extrap.entities.measurement import Measurement
from extrap.entities.metric import Metric
from extrap.entities.model import SegmentedModel
from extrap.modelers.single_parameter.segmented import SegmentedModeler
job = json.load(open(sys.argv[1]))
modeler = SegmentedModeler()
callpath, metric = Callpath("f"), Metric("time")
answers = []
start = time.perf_counter()
for values in job["sets"]:
    measurements = [Measurement(Coordinate(x), callpath, metric, [y]) for x, y in zip(job["x"], values)]
    model = modeler.create_model(measurements)
    if isinstance(model, SegmentedModel):
        answers.append([m.coordinate[0] for m in model.changing_points])
    else:
        answers.append(None)
print(json.dumps({"seconds": time.perf_counter() - start, "answers": answers}))
"""


def functions(rng: np.random.Generator, n: int, inside: bool) -> np.ndarray:
    """Values at ``X`` of ``n`` random one-term PMNF functions, shape (n, 10)."""
    c0 = rng.uniform(0.01, 1000, n)
    c1 = rng.uniform(0.01, 1000, n)
    if inside:
        pairs = np.array([(i, j) for i in EXPONENTS for j in LOG_EXPONENTS if (i, j) != (0, 0)])
        i, j = pairs[rng.integers(0, len(pairs), n)].T
    else:
        i = rng.uniform(0, 3, n)
        j = rng.integers(0, 3, n).astype(np.float64)
        j[(i < 0.05) & (j == 0)] = 1  # keep every function non-constant
    return c0[:, None] + c1[:, None] * X[None, :] ** i[:, None] * np.log2(X)[None, :] ** j[:, None]


def data_sets(rng: np.random.Generator, n_sets: int, noise: float, inside: bool) -> tuple[np.ndarray, np.ndarray]:
    """``n_sets`` data sets, the second half segmented; values shape (n_sets, 10), truth shape (n_sets,)."""
    half = n_sets // 2
    single = functions(rng, half, inside)
    first, second = functions(rng, n_sets - half, inside), functions(rng, n_sets - half, inside)
    two = np.concatenate([first[:, :SPLIT], second[:, SPLIT:]], axis=1)
    values = np.concatenate([single, two])
    values = values * (1 + rng.uniform(-noise, noise, values.shape))
    truth = np.r_[np.zeros(half, dtype=bool), np.ones(n_sets - half, dtype=bool)]
    return values, truth


def run_ours(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Segmented flag and exact-change flag per data set, and seconds per data set (full models)."""
    from extrap_plugins.experiment import Callpath, Metric, Parameter, SeriesGroup
    from extrap_plugins.plugins import PluginHost

    keys = [(Callpath(f"set{k}"), Metric("time")) for k in range(values.shape[0])]
    group = SeriesGroup((Parameter("p"),), X[:, None], keys, values[:, :, None])
    modeler = PluginHost(autoload=False).build_modeler("segmented", {}, ("p",))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = modeler.fit_group(group)
    seconds = (time.perf_counter() - start) / values.shape[0]
    segmented = np.array([m.segments is not None for m in models])
    exact = np.array([
        m.segments is not None and len(m.segments) == 2
        and m.segments[0].range["p"][1] == X[SPLIT - 1] and m.segments[1].range["p"][0] == X[SPLIT]
        for m in models
    ])
    return segmented, exact, seconds


def run_extrap(python: str, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    with tempfile.TemporaryDirectory() as folder:
        job = pathlib.Path(folder) / "job.json"
        job.write_text(json.dumps({"x": X.tolist(), "sets": values.tolist()}))
        result = subprocess.run([python, "-c", EXTRAP_SCRIPT, str(job)], capture_output=True, text=True)
    if result.returncode != 0:
        print(f"Extra-P failed: {result.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    changes = answer["answers"]
    segmented = np.array([c is not None for c in changes])
    exact = np.array([c is not None and sorted(c) == [X[SPLIT - 1], X[SPLIT]] for c in changes])
    return segmented, exact, answer["seconds"] / values.shape[0]


def scores(segmented: np.ndarray, exact: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    return {
        "correct": float(np.mean(segmented == truth)),
        "fp": float(np.mean(segmented[~truth])),
        "fn": float(np.mean(~segmented[truth])),
        "exact": float(np.mean(exact[truth])),
        "exact_found": float(np.mean(exact[truth & segmented])) if (truth & segmented).any() else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=int, default=1000, help="data sets per row (half segmented)")
    parser.add_argument("--extrap-sets", type=int, default=200, help="of those, how many Extra-P models (0: none)")
    parser.add_argument("--extrap-noise", default="0,0.05", help="noise levels at which Extra-P runs")
    default_python = ROOT.parent / "venv-extrap" / "bin" / "python"
    parser.add_argument("--extrap-python", default=os.environ.get("EXTRAP_PYTHON", str(default_python)))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    extrap_noise = {float(v) for v in args.extrap_noise.split(",") if v}
    have_extrap = args.extrap_sets > 0 and pathlib.Path(args.extrap_python).exists()
    rng = np.random.default_rng(args.seed)

    header = (f"{'category':<13} {'noise':>5} | {'correct':>7} {'FP':>6} {'FN':>6} {'exact':>6} {'of found':>8} "
              f"{'ms/set':>7} |"
              f" {'Extra-P: correct':>16} {'FP':>6} {'FN':>6} {'exact':>6} {'ms/set':>7} {'time ratio':>10}")
    print(f"{args.sets} data sets per row (half segmented); Extra-P on the first {args.extrap_sets} "
          f"(half segmented) at noise {', '.join(f'{v:.0%}' for v in sorted(extrap_noise))}, in-space rows")
    print(header)
    print("-" * len(header))
    for inside in (True, False):
        for noise in NOISE:
            values, truth = data_sets(rng, args.sets, noise, inside)
            segmented, exact, seconds = run_ours(values)
            ours = scores(segmented, exact, truth)
            line = (f"{'in space' if inside else 'outside':<13} {noise:>5.0%} | {ours['correct']:>7.1%} "
                    f"{ours['fp']:>6.1%} {ours['fn']:>6.1%} {ours['exact']:>6.1%} {ours['exact_found']:>8.1%} "
                    f"{seconds * 1e3:>7.2f} |")
            if have_extrap and inside and noise in extrap_noise:
                half = args.extrap_sets // 2
                rows = np.r_[np.arange(half), args.sets // 2 + np.arange(args.extrap_sets - half)]
                theirs = run_extrap(args.extrap_python, values[rows])
                if theirs is not None:
                    s = scores(theirs[0], theirs[1], truth[rows])
                    mine = scores(segmented[rows], exact[rows], truth[rows])
                    line += (f" {s['correct']:>16.1%} {s['fp']:>6.1%} {s['fn']:>6.1%} {s['exact']:>6.1%} "
                             f"{theirs[2] * 1e3:>7.1f} {theirs[2] / seconds:>9.0f}x"
                             f"   (ours on the same {len(rows)}: {mine['correct']:.1%} correct, "
                             f"{mine['fp']:.1%} FP, {mine['exact']:.1%} exact)")
            print(line, flush=True)


if __name__ == "__main__":
    main()
