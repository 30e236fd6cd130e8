"""Write what Extra-P 4.2.5 reads from the CUBE fixtures, as reference files for the exactness tests.

Run with Extra-P's own interpreter (never installed beside extrap-plugins)::

    python3 -m venv /tmp/venv-extrap && /tmp/venv-extrap/bin/pip install extrap==4.2.5
    /tmp/venv-extrap/bin/python tests/readers/data/make_cube_reference.py ../shared/data/cube/extrap

Each output ``extrap_<fixture>_<scaling>_<values>.csv.gz`` has one row per
(call path, metric, point): the call path (or, for the large CUDA set, the
first 16 hex digits of its SHA-1, for every 20th call path), the metric, the
coordinate, and Extra-P's mean, median, minimum and maximum, printed exactly
(``repr``).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import pathlib
import sys
import warnings

from extrap.fileio.file_reader.cube_file_reader2 import CubeFileReader2

CASES = [
    ("single_parameter", "weak", False),
    ("single_parameter", "weak", True),
    ("single_parameter", "strong", False),
    ("multi_parameter", "weak", False),
    ("simple_threaded", "weak", False),
    ("simple_threaded", "weak_threaded", False),
    ("simple_threaded", "strong", False),
    ("simple_threaded", "strong", True),
    ("allowed_formats", "weak", False),
    ("cuda_callsite_data", "weak", False),
]
HASHED = {"cuda_callsite_data": 20}  # fixture -> keep every n-th call path, names hashed


def callpath_key(name: str) -> str:
    return hashlib.sha1(name.encode()).hexdigest()[:16]


def main(root: pathlib.Path, out: pathlib.Path) -> None:
    for fixture, scaling, inclusive in CASES:
        reader = CubeFileReader2()
        reader.scaling_type = scaling
        reader.use_inclusive_measurements = inclusive
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            experiment = reader.read_experiment(root / fixture)
        every = HASHED.get(fixture)
        callpaths = experiment.callpaths[::every] if every else experiment.callpaths
        wanted = {c.name for c in callpaths}
        name = f"extrap_{fixture}_{scaling}_{'inclusive' if inclusive else 'exclusive'}.csv.gz"
        with gzip.open(out / name, "wt", newline="") as stream:
            writer = csv.writer(stream)
            writer.writerow(["callpath", "metric", *[p.name for p in experiment.parameters],
                             "mean", "median", "minimum", "maximum"])
            rows = []
            for (callpath, metric), measurements in experiment.measurements.items():
                if callpath.name not in wanted:
                    continue
                label = callpath_key(callpath.name) if every else callpath.name
                for m in measurements:
                    rows.append([label, metric.name, *map(repr, m.coordinate.as_tuple()),
                                 *(repr(float(v)) for v in (m.mean, m.median, m.minimum, m.maximum))])
            writer.writerows(sorted(rows))
        print(name, len(rows))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(__file__).resolve().parent)
