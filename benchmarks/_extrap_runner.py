"""Run Extra-P on text-format files and print its predictions and timing as JSON.

This script runs inside Extra-P's own Python (a separate venv with
``extrap==4.2.5``), never inside ours:

    ../venv-extrap/bin/python benchmarks/_extrap_runner.py task.json

``task.json``: ``{"files": [path, ...], "predict": [[x1, x2, ...], ...]}``.
Output (stdout, one JSON object): ``{"models": [{"file", "callpath", "metric",
"function", "predictions": [...]}, ...], "seconds": modeling time}``.
The benchmarks call it through ``benchmarks/accuracy.py`` and ``speed.py``.
"""

import json
import sys
import time
import warnings

import numpy as np


def main(path):
    warnings.simplefilter("ignore")
    from extrap.fileio.file_reader.text_file_reader import TextFileReader
    from extrap.modelers.model_generator import ModelGenerator
    from extrap.util.progress_bar import DUMMY_PROGRESS

    with open(path) as stream:
        task = json.load(stream)
    predict = np.asarray(task["predict"], dtype=float)
    results, seconds = [], 0.0
    for file in task["files"]:
        experiment = TextFileReader().read_experiment(file, DUMMY_PROGRESS)
        start = time.perf_counter()
        generator = ModelGenerator(experiment)
        generator.model_all(DUMMY_PROGRESS)
        seconds += time.perf_counter() - start
        for (callpath, metric), model in generator.models.items():
            function = model.hypothesis.function
            if predict.shape[1] == 1:
                values = [float(function.evaluate(p[0])) for p in predict]
            else:
                values = [float(np.ravel(function.evaluate(p[:, None]))[0]) for p in predict]
            results.append(
                {
                    "file": file,
                    "callpath": callpath.name,
                    "metric": metric.name,
                    "function": function.to_string(*experiment.parameters),
                    "predictions": values,
                }
            )
    json.dump({"models": results, "seconds": seconds}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
