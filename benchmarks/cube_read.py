"""Read time of CUBE sets: extrap-plugins' cube reader beside Extra-P 4.2.5, measured in the same run.

Usage (from the project root; Extra-P lives in its own venv, never beside extrap-plugins)::

    python3 -m venv ../venv-extrap && ../venv-extrap/bin/pip install extrap==4.2.5
    .venv/bin/python benchmarks/cube_read.py [--extrap-python ../venv-extrap/bin/python] [--repeat 3]

For each input it prints our best-of-``repeat`` time with the serial executor and with the default one
(``auto``: worker processes when there are more than a few runs), Extra-P's ``read_experiment`` time for the
same input and scaling (weak, exclusive: both readers' defaults), their ratio, and the target from the issue.

Extra-P cannot read one profile alone (it drops parameters with one value and then finds none), so a single
profile is timed twice: our read of the file (the issue's "< 2 s per profile" target), and a set of two runs
that both link to that profile (``app.s1``, ``app.s2``), read by both tools: the like-for-like comparison.
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

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = (ROOT / ".." / "shared" / "data" / "cube" / "extrap").resolve()

PROFILES = ["cuda_callsite_data/gpu.s64/profile.cubex", "cuda_callsite_data/gpu.s128/profile.cubex"]
CASES = [  # label, input below DATA (or a temporary pair of one profile), target in seconds (None: none)
    ("cuda gpu.s64/profile.cubex (5,955 nodes)", PROFILES[0], 2.0),
    ("cuda gpu.s128/profile.cubex (5,955 nodes)", PROFILES[1], 2.0),
    ("gpu.s64 profile twice (2 runs)", ("pair", PROFILES[0]), None),
    ("gpu.s128 profile twice (2 runs)", ("pair", PROFILES[1]), None),
    ("cuda_callsite_data (2 runs)", "cuda_callsite_data", None),
    ("multi_parameter (27 runs)", "multi_parameter", 5.0),
    ("single_parameter (9 runs)", "single_parameter", None),
    ("simple_threaded (5 runs)", "simple_threaded", None),
]

EXTRAP_SCRIPT = r"""
import json, pathlib, sys, time, warnings
warnings.simplefilter("ignore")
from extrap.fileio.file_reader.cube_file_reader2 import CubeFileReader2
from extrap.entities.scaling_type import ScalingType
path = pathlib.Path(sys.argv[1])
reader = CubeFileReader2()
reader.scaling_type = ScalingType.WEAK
start = time.perf_counter()
experiment = reader.read_experiment(path)
series = len(experiment.measurements)
print(json.dumps({"seconds": time.perf_counter() - start, "series": series}))
"""


def time_ours(path: pathlib.Path, executor: str, repeat: int) -> tuple[float, int]:
    import extrap_plugins

    best, series = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            experiment = extrap_plugins.read(path, reader="cube", executor=executor)
        best = min(best, time.perf_counter() - start)
        series = len(set(zip(experiment.callpath_index.tolist(), experiment.metric_index.tolist())))
    return best, series


def time_extrap(python: str | None, path: pathlib.Path) -> tuple[float | None, int | None]:
    if python is None or path.is_file():  # Extra-P reads folders of runs only
        return None, None
    result = subprocess.run([python, "-c", EXTRAP_SCRIPT, str(path)], capture_output=True, text=True)
    if result.returncode != 0:
        print(f"Extra-P failed on {path}: {result.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None, None
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    return answer["seconds"], answer["series"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_python = os.environ.get("EXTRAP_PYTHON", "../venv-extrap/bin/python")
    parser.add_argument("--extrap-python", default=default_python,
                        help="the Python of a venv with extrap==4.2.5 (default: %(default)s); 'none' to skip")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many reads for ours")
    args = parser.parse_args(argv)
    python = None if args.extrap_python == "none" or not pathlib.Path(args.extrap_python).exists() \
        else args.extrap_python
    if python is None:
        print("Extra-P not found: its columns stay empty (give --extrap-python)", file=sys.stderr)

    from tabulate import tabulate

    rows = []
    scratch = tempfile.TemporaryDirectory(prefix="cube_read_")
    for number, (label, relative, target) in enumerate(CASES):
        if isinstance(relative, tuple):  # two runs of one profile, so that Extra-P can read it
            path = pathlib.Path(scratch.name) / f"pair{number}"
            for value in (1, 2):
                (path / f"app.s{value}").mkdir(parents=True)
                (path / f"app.s{value}" / "profile.cubex").symlink_to(DATA / relative[1])
        else:
            path = DATA / relative
        serial, series = time_ours(path, "serial", args.repeat)
        auto, _ = time_ours(path, "auto", args.repeat)
        theirs, their_series = time_extrap(python, path)
        ours = min(serial, auto)
        rows.append([
            label, series, f"{serial:.3f}", f"{auto:.3f}",
            "n/a" if theirs is None else f"{theirs:.2f}",
            "n/a" if theirs is None else f"{theirs / ours:.0f}x",
            "-" if target is None else f"< {target:g} s: {'met' if ours < target else 'MISSED'}",
            "n/a" if their_series is None else their_series,
        ])
    scratch.cleanup()
    print(tabulate(rows, headers=["input", "series", "ours serial (s)", "ours auto (s)", "Extra-P (s)",
                                  "Extra-P / ours", "target", "Extra-P series"], tablefmt="github"))
    print("\nn/a for Extra-P: it cannot read a single profile (see the profile-twice rows for the same data).")
    print(f"cores: {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()}, "
          f"python {sys.version.split()[0]}, best of {args.repeat} for ours, one run for Extra-P")
    return 0


if __name__ == "__main__":
    sys.exit(main())
