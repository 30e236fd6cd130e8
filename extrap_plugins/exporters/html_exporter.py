"""The ``html`` exporter: one self-contained report that ranks scalability risks.

The file needs no network when opened: the script and the style sheet
(``html_report.js``, ``html_report.css``, shipped as package data) are
inlined, the data is one JSON document inside the page, and the plots of the
first ``plot_top`` models (default 50) in the ranking are static SVGs drawn by
the ``plot`` exporter's code.  The page shows

* the experiment summary: parameters, points, repetitions, metrics, reader,
  modeler, options, tool version, target;
* a table of every call path and metric (model, growth class, quality, value
  at the largest measured point and at the target with its interval, share of
  the root now and at the target, warnings), sortable by a click on a column
  header and filterable; rows are rendered lazily (only those in view), so
  10,000 call paths stay responsive;
* the call tree, collapsible, each node coloured by its growth class;
* the plot of the row (or tree node) last clicked.

Without a ``sort`` option, rows are ranked by value at the target when a
target is given, else by growth class.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from importlib import resources
from typing import IO, Any

import numpy as np

from extrap_plugins.errors import InputError
from extrap_plugins.extrapolation import Extrapolations, rank
from extrap_plugins.formatting import (format_percent, format_point, format_value, json_number, note_items,
                                      reading_items)
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.models import ModelSet
from extrap_plugins.quality import validation_line
from extrap_plugins.registration import ExporterInfo

from ._options import describe, from_options, option_int

PLOT_TOP = 50
OWN_OPTIONS = {
    "plot_top": f"static plots for the first N rows of the ranking (default {PLOT_TOP}; 0: none)",
    "plot_style": "two parameters: lines (default) or heatmap",
    "title": "the report's title (default: the input's name)",
}
GROWTH_CATEGORIES = (
    # name, colour: from harmless to alarming
    ("constant", "#2e7d32"),
    ("logarithmic", "#7cb342"),
    ("sublinear", "#c0a000"),
    ("linear", "#ef8c00"),
    ("superlinear", "#e64a19"),
    ("quadratic or worse", "#b71c1c"),
    ("unknown", "#757575"),
    ("falling", "#1565c0"),
)


@hookimpl
def extrap_exporters() -> list[ExporterInfo]:
    return [
        ExporterInfo("html", export_html, "a self-contained HTML report: summary, ranked table, call tree, plots",
                     extension=".html", options=OWN_OPTIONS),
    ]


def growth_category(degree: tuple[float, float]) -> int:
    """Index into :data:`GROWTH_CATEGORIES` for a growth degree (total exponent, total log exponent)."""
    exponent, log_exponent = degree
    if math.isnan(exponent):
        return 6
    if exponent < 0 or (exponent == 0 and log_exponent < 0):
        return 7
    if exponent <= 0:
        return 0 if log_exponent <= 0 else 1
    if exponent < 1:
        return 2
    if exponent == 1 and log_exponent <= 0:
        return 3
    if exponent < 2:
        return 4
    return 5


def export_html(model_set: ModelSet, out: IO[str], options: dict[str, str]) -> None:
    """Write the report (see the module docstring)."""
    ranked, own = from_options(model_set, options, "html", OWN_OPTIONS, intervals=True)
    if ranked.sort is None:
        ranked.sort = "target" if ranked.target is not None else "growth"
        ranked.order = rank(ranked, ranked.sort)
    top = option_int(own, "plot_top", PLOT_TOP, minimum=0)
    style = own.get("plot_style", "lines")
    plots = _plots(ranked, top, style)
    document = report_data(ranked, plots, title=own.get("title"))
    out.write(render_page(document))


def _plots(ranked: Extrapolations, top: int, style: str) -> dict[int, str]:
    """SVG text of the first ``top`` models in the ranking, by model position."""
    from .plot_exporter import STYLES, plot_data, render_all

    if style not in STYLES:
        raise InputError(f"unknown plot style {style!r}; expected one of {', '.join(STYLES)}")
    if top == 0 or ranked.model_set.experiment is None or not _have_matplotlib():
        return {}
    items = plot_data(ranked, top)
    position = {id(m): i for i, m in enumerate(ranked.model_set.models)}
    rendered = render_all(items, style, "svg")
    return {position[id(d.model)]: _inline_svg(svg) for d, svg in zip(items, rendered)}


def _have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _plot_note(ranked: Extrapolations) -> str | None:
    """Why the report has no static plots where it is not the user's ``plot_top``; None otherwise."""
    if ranked.model_set.experiment is None:
        return ("the models came without their measurements (streamed, or read as models): nothing to plot; "
                "the page draws the model curves itself")
    if not _have_matplotlib():
        return ("matplotlib is not installed, so the report has no static plots "
                "(pip install 'extrap-plugins[plot]'); the page draws the model curves itself")
    return None


def _inline_svg(svg: bytes) -> str:
    """Matplotlib's SVG file without the XML prologue, the DOCTYPE (which names a remote DTD) and the metadata."""
    text = svg.decode("utf-8")
    start = text.find("<svg")
    text = text[start:] if start >= 0 else text
    return re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.S)


def report_data(ranked: Extrapolations, plots: dict[int, str], title: str | None = None) -> dict[str, Any]:
    """The JSON document the page's script renders.

    ``rows`` is one list per model, in the ranking's order, with the fields
    named in ``columns`` (compact for 10,000 call paths).
    """
    model_set = ranked.model_set
    metrics = list(dict.fromkeys(m.metric for m in model_set.models))
    metric_index = {name: i for i, name in enumerate(metrics)}
    rows = []
    for i in ranked.order:
        m, x = model_set.models[i], ranked.rows[i]
        rows.append([
            m.callpath, metric_index[m.metric], m.formula, x.growth or "n/a", growth_category(x.degree),
            json_number(m.quality.ar2), json_number(m.quality.smape),
            json_number(x.value_largest), json_number(x.value_target),
            json_number(x.interval[0]), json_number(x.interval[1]),
            json_number(x.share_parent_largest), json_number(x.share_root_largest),
            json_number(x.share_parent_target), json_number(x.share_root_target),
            "; ".join([*(x.inconsistencies(m.metric, ranked.target) if ranked.target else []), *m.warnings]),
            i in plots,
            json_number(x.degree[0] * 1000 + x.degree[1]), _function(m), json_number(m.validation),
        ])
    order_position = {i: k for k, i in enumerate(ranked.order)}
    return {
        "title": title or _default_title(model_set),
        "summary": summary(ranked),
        "plot_note": _plot_note(ranked),
        "parameters": list(model_set.parameters),
        "metrics": metrics,
        "categories": [list(c) for c in GROWTH_CATEGORIES],
        "settings": describe(ranked),
        "level": format_percent(ranked.level),  # as the text export says it: 97.5% (not rounded to 98%)
        "columns": ["callpath", "metric", "model", "growth", "category", "ar2", "smape", "now", "target",
                    "low", "high", "parent_now", "root_now", "parent_target", "root_target", "warnings", "plot",
                    "degree", "function", "validation"],
        "ranges": _ranges(model_set),
        "rows": rows,
        "plots": {str(order_position[i]): svg for i, svg in plots.items()},
    }


def _function(model) -> list | None:
    """``[constant, [[coefficient, [e_1, j_1, e_2, j_2, ...]], ...], floor]`` in parameter order, for the page to
    draw a model curve when there is no static plot (``floor``: 0 for a model of values never below 0, which is not
    drawn below it, else None); None for models that are not plain PMNF."""
    if model.predictor is not None or model.function_text is not None or model.segments:
        return None
    terms = []
    for t in model.terms:
        powers = []
        for name in model.parameters:
            factor = t.factors.get(name)
            powers += [float(factor.exponent), float(factor.log_exponent)] if factor else [0.0, 0.0]
        terms.append([json_number(t.coefficient), powers])
    return [json_number(model.constant), terms, 0.0 if model.non_negative else None]


def _ranges(model_set: ModelSet) -> dict[str, list[float]] | None:
    """Smallest and largest measured value of every parameter (of the measured points of streamed models)."""
    experiment = model_set.experiment
    if experiment is not None and len(experiment):
        points, names = experiment.coordinates, experiment.parameter_names
    else:
        points, names = model_set.measured_points, model_set.parameters
    if points is None or len(points) == 0:
        return None
    low, high = points.min(axis=0), points.max(axis=0)
    return {name: [float(a), float(b)] for name, a, b in zip(names, low, high)}



def _default_title(model_set: ModelSet) -> str:
    source = model_set.source or (model_set.experiment.source if model_set.experiment is not None else "")
    name = os.path.basename(str(source).split(",")[0].strip().rstrip("/")) if source else ""
    return f"Performance models: {name}" if name else "Performance models"


def summary(ranked: Extrapolations) -> list[list[str]]:
    """The experiment summary as (label, text) pairs."""
    from extrap_plugins import __version__

    model_set = ranked.model_set
    experiment = model_set.experiment
    items: list[list[str]] = []
    if model_set.source or (experiment is not None and experiment.source):
        items.append(["source", str(model_set.source or experiment.source)])
    items.append(["parameters", ", ".join(model_set.parameters) or "none"])
    metrics = ["metrics", ", ".join(f"{m.name} [{m.unit}]" if m.unit else m.name for m in model_set.known_metrics)]
    if experiment is not None and len(experiment):
        points = experiment.points()
        values = "; ".join(
            f"{name}: " + ", ".join(format_value(v) for v in np.unique(points[:, k]))
            for k, name in enumerate(experiment.parameter_names))
        items.append(["points", f"{points.shape[0]} ({values})"])
        counts = _repetition_counts(experiment)
        same = counts[0] == counts[1]
        items.append(["repetitions", f"{counts[0]}" if same else f"{counts[0]}–{counts[1]} per point"])
        items.append(metrics)
        items.append(["call paths", str(len({int(c) for c in np.unique(experiment.callpath_index)}))])
        items.append(["reader", experiment.reader or "n/a"])
        items += map(list, note_items(model_set.notes))
    elif model_set.known_metrics:  # streamed: no measurements, but what the source said of its metrics
        items.append(metrics)
    items += map(list, reading_items(model_set.reading_warnings))  # (stderr said them; a report outlives it)
    items.append(["models", str(len(model_set.models))])
    if any(math.isfinite(m.validation) for m in model_set.models):
        items.append(["validation", validation_line([m.validation for m in model_set.models])])
    items.append(["modeler", model_set.modeler or "n/a"])
    options = ", ".join(f"{k}={v}" for k, v in model_set.options.items())
    items.append(["modeler options", options or "none"])
    items.append(["measure", model_set.measure])
    if ranked.largest:
        items.append(["largest measured point", format_point(ranked.largest)])
    items.append(["target", format_point(ranked.target) if ranked.target else "none (give one with --target)"])
    items.append(["intervals",
                  f"{format_percent(ranked.level)} prediction intervals from the least-squares covariance"])
    if ranked.values:
        items.append(["values", ", ".join(f"{k}: {v}" for k, v in ranked.values.items())])
    items.append(["ranking", f"by {ranked.sort}" if ranked.sort else "model order"])
    if note := _plot_note(ranked):
        items.append(["plots", note])
    items.append(["tool", f"extrap-plugins {__version__}"])
    return items


def _repetition_counts(experiment) -> tuple[int, int]:
    """Fewest and most repetitions of any measured (call path, metric, point)."""
    counts = [group.repetitions() for group in experiment.series_groups()]
    flat = np.concatenate([c.ravel() for c in counts]) if counts else np.array([0])
    return int(flat.min()), int(flat.max())



# ---------------------------------------------------------------------- page
def _asset(name: str) -> str:
    return resources.files("extrap_plugins.exporters").joinpath("assets", name).read_text(encoding="utf-8")


def _script_json(data: Any) -> str:
    """JSON that is safe inside a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    text = json.dumps(data, allow_nan=False, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render_page(document: dict[str, Any]) -> str:
    """The whole HTML page for a :func:`report_data` document."""
    title = html.escape(document["title"])
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<link rel="icon" href="data:,">
<title>{title}</title>
<style>
{_asset("html_report.css")}
</style>
</head>
<body>
<header><h1>{title}</h1><p class="sub">made by extrap-plugins</p></header>
<main>
<section id="summary"><h2>Experiment</h2><dl id="summary-list"></dl><div id="legend"></div></section>
<section id="paths">
  <h2>Call paths</h2>
  <div class="controls">
    <input id="filter" type="search" placeholder="filter call paths (text or /regex/)" aria-label="filter call paths">
    <select id="metric-filter" aria-label="metric"></select>
    <select id="growth-filter" aria-label="growth class"></select>
    <span id="count"></span>
  </div>
  <div class="split">
    <div id="scroller" class="scroller" tabindex="0">
      <table id="table"><thead><tr id="header"></tr></thead><tbody id="rows"></tbody></table>
    </div>
    <aside id="detail"><p class="hint">Click a row or a tree node to see its plot.</p></aside>
  </div>
</section>
<section id="tree-section"><h2>Call tree</h2>
  <div class="controls"><select id="tree-metric" aria-label="metric of the call tree"></select>
  <button id="expand-all" type="button">expand all</button>
  <button id="collapse-all" type="button">collapse all</button></div>
  <ul id="tree" class="tree"></ul>
</section>
</main>
<script id="report-data" type="application/json">{_script_json(document)}</script>
<script>
{_asset("html_report.js")}
</script>
</body>
</html>
"""
