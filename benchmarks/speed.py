"""Modeling throughput and peak memory, beside Extra-P 4.2.5 on the same file.

A script, not a test::

    python benchmarks/speed.py                                   # 1,000 / 10,000 / 100,000 series
    python benchmarks/speed.py --sizes 1000,10000 --extrap-series 100
    python benchmarks/speed.py --sizes 10000 --executor serial --repeat 5 --extrap-series 0   # one core, CPU time
    EXTRAP_PYTHON=../venv-extrap/bin/python python benchmarks/speed.py

Input: synthetic series after Ritter et al.'s (2020) protocol (one factor ``x^i log2^j(x)``
per parameter, i in {0..3}, j in {0, 1, 2}, random additive/multiplicative
combination, 4 repetitions with +-5 % noise); one parameter on 5 points, two
parameters on a 5 x 5 grid.  Each case runs in a fresh child process pinned
to one thread (OPENBLAS/OMP/MKL_NUM_THREADS=1), so its peak memory (maximum
resident set size, including building the input) is its own.

``models/s`` is end to end through ``extrap_plugins.model`` (grouping the
series, fitting, building Model objects), by wall-clock and by CPU time
(CPU time is what one core delivers even when the machine is shared).

Extra-P (from ``--extrap-python`` or ``EXTRAP_PYTHON``; "not installed"
otherwise) models the first ``--extrap-series`` series, written as an Extra-P
text file; ours reads the same file with the text reader and models it.  Both
are scored on those series: prediction at the next point within +-5 %.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

CHILD = textwrap.dedent(
    """
    import json, resource, sys, time, warnings
    sys.path.append({root!r}); sys.path.insert(0, {bench!r})
    import numpy as np
    import extrap_plugins
    import accuracy as A
    warnings.simplefilter("ignore")
    m, n, seed, path = {m}, {n}, {seed}, {path!r}
    started = time.perf_counter()
    if path:
        experiment = extrap_plugins.read(path)
    else:
        rng = np.random.default_rng(seed)
        case = A.make_case(f"noise-m{{m}}", n, rng, None)
        experiment = A.experiment_of(case)
    build = time.perf_counter() - started
    extrap_plugins.model(experiment.select(callpaths=[experiment.callpaths[0].name]), executor={executor!r})
    best = None
    for _ in range({repeat}):  # the best of several runs: the machine may be shared
        wall, cpu = time.perf_counter(), time.process_time()
        models = extrap_plugins.model(experiment, executor={executor!r})
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        best = (wall, cpu) if best is None or cpu < best[1] else best
    wall, cpu = best
    out = dict(models=len(models), build=build, wall=wall, cpu=cpu,
               peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if path:
        out["predictions"] = {{mo.callpath: mo.predict({predict}) for mo in models}}
    print(json.dumps(out))
    """
)


def run_child(m: int, n: int, seed: int, path: str = "", predict=None, executor: str = "auto",
              repeat: int = 1) -> dict:
    code = CHILD.format(root=str(ROOT), bench=str(ROOT / "benchmarks"), m=m, n=n, seed=seed, path=path,
                        predict=repr(predict), executor=executor, repeat=repeat)
    env = {**os.environ, **ONE_THREAD, "EXTRAP_PLUGINS_NO_AUTOLOAD": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare_with_extrap(m: int, n: int, seed: int, python: str) -> dict:
    """Ours and Extra-P on the same text file of ``n`` series; throughput and accuracy."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import numpy as np

    import accuracy as A

    rng = np.random.default_rng(seed)
    case = A.make_case(f"noise-m{m}", n, rng, None)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"speed_m{m}.txt")
        A.write_text(path, case.parameters, case.points[0], [(f"f{k:06d}", case.values[k]) for k in range(n)])
        ours = run_child(m, n, seed, path, predict=case.predict[0].tolist())
        task = os.path.join(folder, "task.json")
        with open(task, "w") as stream:
            json.dump({"files": [path], "predict": case.predict.tolist()}, stream)
        env = {**os.environ, **ONE_THREAD}
        done = subprocess.run([python, str(ROOT / "benchmarks" / "_extrap_runner.py"), task],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-3000:])
        extrap = json.loads(done.stdout)
    truth = case.truth[:, 0]
    ours_pred = np.array([ours["predictions"][f"f{k:06d}"] for k in range(n)])
    extrap_pred = {r["callpath"]: r["predictions"][0] for r in extrap["models"]}
    extrap_pred = np.array([extrap_pred[f"f{k:06d}"] for k in range(n)])
    within = lambda p: 100.0 * float(np.mean(np.abs(p - truth) <= 0.05 * np.abs(truth)))  # noqa: E731
    return {
        "ours_rate": n / ours["wall"], "ours_cpu_rate": n / ours["cpu"],
        "extrap_rate": n / extrap["seconds"],
        "ours_accuracy": within(ours_pred), "extrap_accuracy": within(extrap_pred),
    }


def extrap_python(option: str | None) -> str | None:
    candidate = option or os.environ.get("EXTRAP_PYTHON")
    if not candidate or not pathlib.Path(candidate).exists():
        return None
    check = subprocess.run([candidate, "-c", "import extrap"], capture_output=True)
    return candidate if check.returncode == 0 else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="numbers of series (comma-separated)")
    parser.add_argument("--parameters", default="1,2", help="numbers of parameters (comma-separated)")
    parser.add_argument("--extrap-series", type=int, default=200, help="series for the Extra-P comparison")
    parser.add_argument("--extrap-python", default=None, help="Python with extrap 4.2.5 (or EXTRAP_PYTHON)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--executor", default="auto",
                        help="where the series are fitted (auto, serial, process); with serial, CPU s is all of it")
    parser.add_argument("--repeat", type=int, default=1, help="model each input this many times, report the best")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    params = [int(m) for m in args.parameters.split(",")]
    print(f"{'params':>6} {'series':>8} {'build s':>8} {'model s':>8} {'CPU s':>7} {'models/s':>9} "
          f"{'models/s CPU':>12} {'peak MB':>8}")
    for m in params:
        for n in sizes:
            r = run_child(m, n, args.seed, executor=args.executor, repeat=args.repeat)
            print(f"{m:>6} {n:>8} {r['build']:>8.2f} {r['wall']:>8.2f} {r['cpu']:>7.2f} "
                  f"{r['models'] / r['wall']:>9.0f} {r['models'] / r['cpu']:>12.0f} {r['peak_mb']:>8.0f}", flush=True)
    python = extrap_python(args.extrap_python)
    if args.extrap_series <= 0:
        return 0
    print()
    print(f"same text file, {args.extrap_series} series: ours vs Extra-P 4.2.5 (one thread each)")
    print(f"{'params':>6} {'ours models/s':>14} {'Extra-P models/s':>17} {'ratio':>7} "
          f"{'ours +-5 %':>11} {'Extra-P +-5 %':>14}")
    for m in params:
        if python is None:
            print(f"{m:>6} {'':>14} {'not installed':>17}")
            continue
        r = compare_with_extrap(m, args.extrap_series, args.seed, python)
        print(f"{m:>6} {r['ours_rate']:>14.0f} {r['extrap_rate']:>17.1f} {r['ours_rate'] / r['extrap_rate']:>6.0f}x "
              f"{r['ours_accuracy']:>10.1f}% {r['extrap_accuracy']:>13.1f}%", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
