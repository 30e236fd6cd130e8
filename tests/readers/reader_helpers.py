"""What the reader tests share: calling a reader as the host does, and the values read, cell by cell."""

from __future__ import annotations


def reading(reader_module):
    """``read(path, **options)`` for a reader module: options as the text the host passes."""
    def read(path, **options):
        return reader_module.read(path, {k: str(v) for k, v in options.items()})

    return read


def cells(experiment) -> dict[tuple, list[float]]:
    """(call path, metric, point) -> values in file order."""
    out: dict[tuple, list[float]] = {}
    for c, m, point, value in zip(experiment.callpath_index, experiment.metric_index,
                                  map(tuple, experiment.coordinates.tolist()), experiment.value.tolist()):
        out.setdefault((experiment.callpaths[c].name, experiment.metrics[m].name, point), []).append(value)
    return out
