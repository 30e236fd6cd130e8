"""Write what Extra-P 4.2.5 reads from its own input files, as the reference for the exactness tests.

Run with Extra-P's own interpreter (never installed beside extrap-plugins)::

    python3 -m venv ../venv-extrap && ../venv-extrap/bin/pip install extrap==4.2.5
    ../venv-extrap/bin/python tests/readers/data/make_extrap_inputs_reference.py ../shared/data/extrap

Output ``extrap_inputs_reference.csv.gz``, one row per (file, call path,
metric, point): the file (relative to the folder), Extra-P's reader, the
parameters, the call path, the metric, the coordinate, and either every
repetition's value (``values``, space-separated ``repr``; readers that keep
them) or the saved mean, median, minimum and maximum (saved experiments).
A file Extra-P rejects gives one row with the error in ``error``.
"""

from __future__ import annotations

import csv
import gzip
import pathlib
import sys
import warnings

import numpy as np
from extrap.fileio.experiment_io import ExperimentReader
from extrap.fileio.file_reader.extrap3_experiment_reader import Extrap3ExperimentFileReader
from extrap.fileio.file_reader.json_file_reader import JsonFileReader
from extrap.fileio.file_reader.talpas_file_reader import TalpasFileReader
from extrap.fileio.file_reader.text_file_reader import TextFileReader

FIELDS = ["file", "reader", "parameters", "callpath", "metric", "point", "values", "mean", "median", "minimum",
          "maximum", "error"]


def reader_for(path: pathlib.Path):
    """Extra-P's reader for a file of its test data, by the folder's convention."""
    if path.suffix == ".extra-p":
        return "experiment", ExperimentReader()
    if path.name.startswith("experiment_3"):
        return "extrap3", Extrap3ExperimentFileReader()
    if path.parent.name == "talpas":
        reader = TalpasFileReader()
    elif path.suffix.lower() in (".json", ".jsonl"):
        reader = JsonFileReader()
    else:
        reader = TextFileReader()
    reader.keep_values = True
    return reader.NAME, reader


def rows(root: pathlib.Path):
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix not in (".md", ".csv")):
        name, reader = reader_for(path)
        base = {"file": path.relative_to(root).as_posix(), "reader": name}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                experiment = reader.read_experiment(path)
        except Exception as error:  # every rejection, whatever its type, is what we compare with
            yield {**base, "error": f"{type(error).__name__}: {error}"}
            continue
        parameters = " ".join(p.name for p in experiment.parameters)
        for (callpath, metric), measurements in experiment.measurements.items():
            for m in measurements:
                row = {**base, "parameters": parameters, "callpath": callpath.name, "metric": metric.name,
                       "point": " ".join(repr(float(v)) for v in m.coordinate)}
                if m.values is not None:
                    row["values"] = " ".join(repr(float(v)) for v in np.ravel(np.ma.compressed(m.values)))
                else:
                    row.update(mean=repr(float(m.mean)), median=repr(float(m.median)),
                               minimum=repr(float(m.minimum)), maximum=repr(float(m.maximum)))
                yield row


def main(root: pathlib.Path, out: pathlib.Path) -> None:
    with gzip.open(out, "wt", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, FIELDS)
        writer.writeheader()
        writer.writerows(rows(root))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(__file__).with_name("extrap_inputs_reference.csv.gz"))
