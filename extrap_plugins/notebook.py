"""Models in pandas, Jupyter and ``print``: :meth:`ModelSet.to_dataframe`, the ``_repr_html_`` of models and
``str(ModelSet)``.

pandas is imported only by :func:`to_dataframe`; the HTML needs nothing but
the standard library (the curve of a one-parameter model is inline SVG), so
a notebook shows a :class:`~extrap_plugins.models.ModelSet` or a
:class:`~extrap_plugins.models.Model` as soon as it is the value of a cell.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, Mapping

import numpy as np

from .formatting import format_count, format_number

if TYPE_CHECKING:
    import pandas

    from .models import Model, ModelSet

#: Rows shown by ``ModelSet._repr_html_`` before "... N more".
HTML_ROWS = 60


def to_dataframe(model_set: ModelSet, target: str | Mapping[str, float] | None = None) -> pandas.DataFrame:
    """One row per call path and metric, in the model set's order.

    Columns: ``callpath``, ``metric``, ``unit`` (the metric's, :meth:`ModelSet.metric
    <extrap_plugins.models.ModelSet.metric>`, streamed or not: ``sec``, ``bytes``; empty when unknown),
    ``formula`` (human), ``function`` (machine-readable), ``growth`` (big-O class), ``rss``, ``ar2``, ``smape``,
    ``re``, ``points``, ``modeler``, ``largest`` (the value at the largest measured value of every parameter,
    ``frame.attrs["largest_point"]``: in a design that does not measure every combination, such as a cross, a
    point not measured itself), ``share_largest`` (of the root there); and given a ``target`` (``"p=4096"`` or
    ``{"p": 4096}``): ``target``, ``lower``, ``upper`` (the prediction interval) and ``share_target``; for models
    made with ``model(..., validate=True)``, ``validation_error`` (:attr:`Model.validation
    <extrap_plugins.models.Model.validation>`, as the csv exporter's column).

    Raises
    ------
    ImportError
        pandas is not installed (``pip install pandas``).
    InputError
        A target that does not name every parameter.
    """
    try:
        import pandas as pd
    except ImportError as error:  # pragma: no cover - exercised only without pandas
        raise ImportError("ModelSet.to_dataframe needs pandas: pip install pandas") from error
    from .extrapolation import extrapolate

    result = extrapolate(model_set, target)
    units = {m.name: m.unit for m in model_set.known_metrics}
    rows = []
    for model, row in zip(model_set.models, result.rows):
        entry = {
            "callpath": model.callpath, "metric": model.metric, "unit": units.get(model.metric, ""),
            "formula": model.formula,
            "function": model.function, "growth": row.growth,
            "rss": model.quality.rss, "ar2": model.quality.ar2, "smape": model.quality.smape,
            "re": model.quality.re, "points": model.points, "modeler": model.modeler,
            "largest": row.value_largest, "share_largest": row.share_root_largest,
        }
        if result.target is not None:
            entry.update(target=row.value_target, lower=row.interval[0], upper=row.interval[1],
                         share_target=row.share_root_target)
        entry.update(validation_error=model.validation)
        rows.append(entry)
    columns = ["callpath", "metric", "unit", "formula", "function", "growth", "rss", "ar2", "smape", "re", "points",
               "modeler", "largest", "share_largest"]
    if result.target is not None:
        columns += ["target", "lower", "upper", "share_target"]
    if any(math.isfinite(m.validation) for m in model_set.models):  # (as the csv exporter's)
        columns.append("validation_error")
    frame = pd.DataFrame(rows, columns=columns)
    frame.attrs.update(parameters=list(model_set.parameters), largest_point=result.largest,
                       target_point=result.target, source=model_set.source)
    return frame


# ---------------------------------------------------------------------- text
def model_set_text(model_set: ModelSet, options: dict[str, str] | None = None) -> str:
    """What ``print(models)`` shows: the table of the ``text`` exporter (``extrap-plugins model``'s output);
    ``options`` as the exporter's (``target``, ``sort``, ``level``: what ``print(extrapolate(...))`` shows).  A
    warning of many series points to their ``Model.warnings``, not to the command line's ``--export json``."""
    import io

    from .engine import KEPT
    from .exporters.text_exporter import export_text

    out = io.StringIO()
    export_text(model_set, out, dict(options or {}), listed=KEPT)
    return out.getvalue()


# ---------------------------------------------------------------------- HTML
def _cell(value) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else html.escape(format_number(value, False))
    return html.escape(str(value))


def model_set_html(model_set: ModelSet) -> str:
    """A table of the models (call path, metric, formula, growth, adj. R², SMAPE)."""
    from .extrapolation import growth_class

    head = ("<tr><th>call path</th><th>metric</th><th>model</th><th>growth</th>"
            "<th>adj. R²</th><th>SMAPE</th></tr>")
    body = []
    for model in model_set.models[:HTML_ROWS]:
        smape = "" if math.isnan(model.quality.smape) else f"{model.quality.smape:.2f}%"
        body.append(
            f"<tr><td style='text-align:left'>{_cell(model.callpath)}</td><td>{_cell(model.metric)}</td>"
            f"<td style='text-align:left'><code>{_cell(model.formula)}</code></td>"
            f"<td>{_cell(growth_class(model) or '')}</td><td>{_cell(model.quality.ar2)}</td><td>{smape}</td></tr>")
    more = len(model_set.models) - HTML_ROWS
    if more > 0:
        body.append(f"<tr><td colspan='6'>… {more} more (ModelSet.to_dataframe() has them all)</td></tr>")
    parameters = ", ".join(model_set.parameters) or "no parameter"
    caption = (f"{format_count(len(model_set.models), 'model')} of {html.escape(parameters)}"
               + (f" by {html.escape(model_set.modeler)}" if model_set.modeler else "")
               + (f" from {html.escape(model_set.source)}" if model_set.source else ""))
    return (f"<table class='extrap-plugins-models'><caption>{caption}</caption>"
            f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table>")


def model_html(model: Model, experiment=None, points=None, values=None) -> str:
    """The model's formula and quality, with its curve and measurements for one parameter (inline SVG).

    The measurements come from ``experiment`` (``ModelSet.experiment``; a model taken from a ModelSet shows its
    set's by itself) or are given as ``points`` (shape (n,) or (n, 1)) and ``values`` (shape (n,)); without them
    the curve is drawn over the model's measured range (:func:`curve_svg`).
    """
    q = model.quality
    smape = "" if math.isnan(q.smape) else f"{q.smape:.2f}%"
    table = (f"<table class='extrap-plugins-model'><tr><th>call path</th><td style='text-align:left'>"
             f"{_cell(model.callpath)}</td></tr><tr><th>metric</th><td style='text-align:left'>{_cell(model.metric)}"
             f"</td></tr><tr><th>model</th><td style='text-align:left'><code>{_cell(model.formula)}</code></td></tr>"
             f"<tr><th>adj. R²</th><td>{_cell(q.ar2)}</td></tr><tr><th>SMAPE</th><td>{smape}</td></tr>"
             f"<tr><th>RSS</th><td>{_cell(q.rss)}</td></tr></table>")
    if len(model.parameters) != 1:
        return table
    if experiment is not None and points is None:
        try:
            points, values = experiment.values_of(model.callpath, model.metric)
        except Exception:  # the model set's experiment may lack this series (streamed, selected)
            points = values = None
        if points is not None and not len(points):  # (nothing of this series: the model's own range)
            points = values = None
    return f"<div style='display:flex;gap:1em;align-items:flex-start'>{table}{curve_svg(model, points, values)}</div>"


def curve_svg(model: Model, points=None, values=None, width: int = 360, height: int = 220) -> str:
    """Inline SVG: the model from the smallest measured value to 1.5 times the largest, and the measurements.

    Without measurements the range is the model's own (:attr:`~extrap_plugins.models.Model.measured_range`), and
    1 to 1024 when that is unknown too.  For data that are all 0 or more (the measurements, else
    :attr:`~extrap_plugins.models.Model.non_negative`) nothing is drawn below 0: where such a model falls below 0
    it has no meaning, and its curve stops there.
    """
    name = model.parameters[0]
    y_measured = np.zeros(0)
    if points is not None and len(points):
        x_measured = np.asarray(points, dtype=float).reshape(-1)
        y_measured = np.asarray(values, dtype=float).reshape(-1)
        lo, hi = float(np.min(x_measured)), float(np.max(x_measured)) * 1.5
    elif model.measured_range:
        x_measured = np.zeros(0)
        lo, hi = float(model.measured_range[0][0]), float(model.measured_range[0][1]) * 1.5
    else:
        x_measured = np.zeros(0)
        lo, hi = 1.0, 1024.0  # nothing known of the measurements: the first ten powers of two
    if not hi > lo:
        hi = lo + 1.0
    finite_measured = y_measured[np.isfinite(y_measured)]
    non_negative = never_negative(model, y_measured)
    x = np.linspace(lo, hi, 120)
    y = drawn(model, model.predict(x.reshape(-1, 1)), y_measured)
    every = np.concatenate([y[np.isfinite(y)], finite_measured])
    if every.size == 0:
        return ""
    y_lo, y_hi = float(np.min(every)), float(np.max(every))
    if not y_hi > y_lo:
        y_lo, y_hi = y_lo - 1.0, y_hi + 1.0
        if non_negative:
            y_lo = max(y_lo, 0.0)
    left, right, top, bottom = 58, 10, 10, 34

    def sx(v):
        return left + (v - lo) / (hi - lo) * (width - left - right)

    def sy(v):
        return top + (y_hi - v) / (y_hi - y_lo) * (height - top - bottom)

    lines = "".join(f"<polyline points='{' '.join(f'{sx(a):.1f},{sy(b):.1f}' for a, b in piece)}' fill='none' "
                    f"stroke='#1f77b4' stroke-width='2'/>" for piece in _pieces(x, y))
    dots = "".join(f"<circle cx='{sx(a):.1f}' cy='{sy(b):.1f}' r='3' fill='#d62728'/>"
                   for a, b in zip(x_measured, y_measured) if np.isfinite(b))
    labels = (f"<text x='{left}' y='{height - 6}' font-size='11'>{_cell(lo)}</text>"
              f"<text x='{width - right}' y='{height - 6}' font-size='11' text-anchor='end'>{_cell(hi)}</text>"
              f"<text x='{(left + width) / 2:.0f}' y='{height - 6}' font-size='11' text-anchor='middle'>"
              f"{html.escape(name)}</text>"
              f"<text x='{left - 4}' y='{top + 10}' font-size='11' text-anchor='end'>{_cell(y_hi)}</text>"
              f"<text x='{left - 4}' y='{height - bottom}' font-size='11' text-anchor='end'>{_cell(y_lo)}</text>")
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' role='img' "
            f"aria-label='{html.escape(model.callpath)} {html.escape(model.metric)}'>"
            f"<rect x='{left}' y='{top}' width='{width - left - right}' height='{height - top - bottom}' "
            f"fill='none' stroke='#999'/>{lines}{dots}{labels}</svg>")


def never_negative(model: Model, measured=()) -> bool:
    """Whether the values ``model`` stands for are all 0 or more (times, counts): the finite ``measured`` values
    (an array of any shape), else, without them, :attr:`~extrap_plugins.models.Model.non_negative`."""
    finite = np.asarray(measured, dtype=float).reshape(-1)
    finite = finite[np.isfinite(finite)]
    return bool(np.all(finite >= 0)) if finite.size else model.non_negative is True


def drawn(model: Model, y, measured=()) -> np.ndarray:
    """The model's values ``y`` along a curve as a figure draws them: NaN (a gap) where they fall below 0 for values
    that are never negative (:func:`never_negative`), where such a model has no meaning, as its value at a target
    is cut to 0 (:mod:`extrap_plugins.extrapolation`).  The notebook's curves and the ``plot`` exporter's follow it."""
    y = np.asarray(y, dtype=float)
    return np.where(y >= 0, y, np.nan) if never_negative(model, measured) else y


def _pieces(x: np.ndarray, y: np.ndarray) -> list[list[tuple[float, float]]]:
    """The runs of consecutive points where ``y`` is finite: one line each, so that the curve has a gap where the
    model is undefined (or not drawn) rather than a straight line across it."""
    pieces: list[list[tuple[float, float]]] = []
    previous = False
    for a, b in zip(x.tolist(), y.tolist()):
        finite = math.isfinite(b)
        if finite and not previous:
            pieces.append([])
        if finite:
            pieces[-1].append((a, b))
        previous = finite
    return pieces
