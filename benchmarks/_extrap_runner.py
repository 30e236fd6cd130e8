"""Run Extra-P on text-format files and print its predictions and timing as JSON.

This script runs inside Extra-P's own Python (a separate venv with
``extrap==4.2.5``), never inside ours:

    ../venv-extrap/bin/python benchmarks/_extrap_runner.py task.json

``task.json``::

    {"files": [path, ...] or [{"path": ..., "predict": [[x1, ...], ...]}, ...],
     "predict": [[x1, x2, ...], ...],          # for files given as plain paths
     "modeler": "basic" | "refining",           # optional, default "basic"
     "negative_exponents": false}               # optional: Basic's allow_negative_exponents

``basic`` is Extra-P's default (``ModelGenerator(experiment)``: the single-parameter
``Basic`` modeler, or the ``Multi-Parameter`` modeler with ``Basic`` inside it);
``refining`` uses ``RefiningModeler`` as the single-parameter modeler, also inside
the multi-parameter modeler.
Output (stdout, one JSON object): ``{"models": [{"file", "callpath", "metric",
"function", "predictions": [...]}, ...], "seconds": modeling time}``.
The benchmarks call it through ``benchmarks/accuracy.py``, ``speed.py`` and ``robustness.py``.
"""

import json
import sys
import time
import warnings

import numpy as np


def make_generator(experiment, modeler, negative):
    from extrap.modelers import single_parameter
    from extrap.modelers.model_generator import ModelGenerator

    if modeler == "basic" and not negative:
        return ModelGenerator(experiment)
    if modeler == "basic":
        single = single_parameter.all_modelers["Basic"]()
        single.allow_negative_exponents = True
    elif modeler == "refining":
        single = single_parameter.all_modelers["Refining"]()
    else:
        raise ValueError(f"unknown Extra-P modeler {modeler!r}")
    if len(experiment.parameters) == 1:
        return ModelGenerator(experiment, single)
    generator = ModelGenerator(experiment)  # Multi-Parameter modeler
    multi = generator.modeler
    single.use_measure = multi.use_measure
    multi._default_single_parameter_modeler = single
    multi.single_parameter_modeler = single
    return generator


def main(path):
    warnings.simplefilter("ignore")
    from extrap.fileio.file_reader.text_file_reader import TextFileReader
    from extrap.util.progress_bar import DUMMY_PROGRESS

    with open(path) as stream:
        task = json.load(stream)
    modeler = task.get("modeler", "basic")
    negative = bool(task.get("negative_exponents", False))
    results, seconds = [], 0.0
    for entry in task["files"]:
        if isinstance(entry, str):
            file, predict = entry, task["predict"]
        else:
            file, predict = entry["path"], entry["predict"]
        predict = np.asarray(predict, dtype=float)
        experiment = TextFileReader().read_experiment(file, DUMMY_PROGRESS)
        start = time.perf_counter()
        generator = make_generator(experiment, modeler, negative)
        generator.model_all(DUMMY_PROGRESS)
        seconds += time.perf_counter() - start
        for (callpath, metric), model in generator.models.items():
            function = model.hypothesis.function
            values = []
            for p in predict:
                try:
                    if predict.shape[1] == 1:
                        values.append(float(function.evaluate(p[0])))
                    else:
                        values.append(float(np.ravel(function.evaluate(p[:, None]))[0]))
                except Exception:  # noqa: BLE001 - a model Extra-P cannot evaluate counts as a miss
                    values.append(float("nan"))
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
