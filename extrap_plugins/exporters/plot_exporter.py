"""The ``plot`` exporter: one figure per call path and metric (matplotlib, extra ``plot``).

Each figure shows the measured points with the spread of their repetitions
(min–max bars), the model curve through and beyond the measured range up to
the target (dashed beyond the measurements), the prediction interval as a
band, and the segments of segmented models shaded with their change points
marked.  With two or more parameters the first one is the x axis and there
is one curve per measured value of the second (``plot_style=lines``, the
default; further parameters are held at their largest measured value), or a
heat map of the model over the first two (``plot_style=heatmap``).

The output format follows the extension of ``-o`` (``.png``, ``.svg``,
``.pdf``; several models in one ``.pdf`` become one page each).  A folder
(an existing one, or a path without extension) gets one file per call path
and metric, with safe file names, in ``format`` (default ``png``), through
:class:`extrap_plugins.files.FolderOutput`: the user's own files there are
left alone (one with the name of a figure to write is refused), and the
figures of an earlier export into the folder are replaced, or removed when
this export does not draw them again.

matplotlib is imported only inside the functions that draw, and only
through its object-oriented API with the Agg canvas: no pyplot, no global
backend switch, no display needed.
"""

from __future__ import annotations

import hashlib
import io
import math
import pathlib
import re
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from extrap_plugins.errors import InputError
from extrap_plugins.extrapolation import Extrapolations, Uncertainty
from extrap_plugins.files import FolderOutput, atomic_writer, write_atomically
from extrap_plugins.formatting import format_percent, format_point
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.models import Model, ModelSet
from extrap_plugins.notebook import drawn
from extrap_plugins.registration import ExporterInfo

from ._options import from_options, option_int

FORMATS = ("png", "svg", "pdf")
STYLES = ("lines", "heatmap")
OWN_OPTIONS = {
    "plot_style": "two parameters: lines (one curve per value of the second, default) or heatmap",
    "plot_top": "plot only the first N models in the sort order (default: all)",
    "format": "png (default), svg or pdf: the file format when -o is a folder",
}
CURVE_POINTS = 160
HEATMAP_CELLS = 80
MAX_NAME = 100
FIGURE_SIZE = (6.4, 4.4)
DPI = 110


@hookimpl
def extrap_exporters() -> list[ExporterInfo]:
    return [
        ExporterInfo("plot", export_plot, "one figure per call path and metric: measurements, model, interval "
                     "(.png, .svg, .pdf or a folder; needs the 'plot' extra)", kind="path", extension=".png",
                     extensions=(".svg", ".pdf"), options=OWN_OPTIONS),
    ]


# ---------------------------------------------------------------------- data
@dataclass(frozen=True)
class PlotData:
    """Everything one figure needs, picklable (figures are drawn in worker processes).

    Attributes
    ----------
    points : ndarray, shape (n_points, n_params)
        The measured coordinates of the series.
    center, low, high : ndarray, shape (n_points,)
        The reduced value (the model set's measure), minimum and maximum of
        the repetitions at each point.
    target : dict or None
        The target point; ``value_target`` and ``interval`` hold the model
        value there and its prediction interval.
    """

    model: Model
    parameters: tuple[str, ...]
    points: np.ndarray
    center: np.ndarray
    low: np.ndarray
    high: np.ndarray
    unit: str
    measure: str
    target: dict[str, float] | None
    value_target: float
    interval: tuple[float, float]
    uncertainty: Uncertainty | None
    level: float
    growth: str | None


def plot_data(ranked: Extrapolations, limit: int | None = None) -> list[PlotData]:
    """The data of the first ``limit`` models in the ranked order (all when None).

    Models without measurements in ``ranked.model_set.experiment`` are left out.
    """
    model_set = ranked.model_set
    experiment = model_set.experiment
    if experiment is None:
        return []
    chosen = [(i, model_set.models[i]) for i in ranked.order]
    if limit is not None:
        chosen = chosen[:limit]
    wanted = {(m.callpath, m.metric): i for i, m in chosen}
    found: dict[int, tuple] = {}
    units = {m.name: m.unit for m in model_set.known_metrics}
    for group in experiment.series_groups():
        rows = [(r, wanted[(c.name, m.name)]) for r, (c, m) in enumerate(group.keys) if (c.name, m.name) in wanted]
        if not rows:
            continue
        index = np.array([r for r, _ in rows])
        values = group.values[index]
        reduced = group.reduce(model_set.measure)[index]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells
            low, high = np.nanmin(values, axis=2), np.nanmax(values, axis=2)
        for k, (_, i) in enumerate(rows):
            found[i] = (group.points, reduced[k], low[k], high[k])
    result = []
    for i, model in chosen:
        if i not in found:
            continue
        points, center, low, high = found[i]
        x = ranked.rows[i]
        result.append(PlotData(
            model=model, parameters=tuple(model_set.parameters), points=points, center=center, low=low, high=high,
            unit=units.get(model.metric, ""), measure=model_set.measure, target=ranked.target,
            value_target=x.value_target, interval=x.interval, uncertainty=ranked.uncertainty[i]
            if i < len(ranked.uncertainty) else None, level=ranked.level, growth=x.growth,
        ))
    return result


# -------------------------------------------------------------------- figure
def figure(data: PlotData, style: str = "lines"):
    """Draw one model: a :class:`matplotlib.figure.Figure` on an Agg canvas.

    Parameters
    ----------
    data : PlotData
    style : {"lines", "heatmap"}
        Only matters with two or more parameters.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if style not in STYLES:
        raise InputError(f"unknown plot style {style!r}; expected one of {', '.join(STYLES)}")
    fig = Figure(figsize=FIGURE_SIZE, dpi=DPI)
    fig.subplots_adjust(left=0.13, right=0.97, bottom=0.12, top=0.86)  # fixed: layout engines cost half the time
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if len(data.parameters) >= 2 and style == "heatmap":
        _draw_heatmap(fig, ax, data)
    else:
        _draw_lines(ax, data)
    model = data.model
    title = f"{model.callpath} [{model.metric}]"
    formula = _shorten(model.formula, 95)
    subtitle = formula + (f"   {data.growth}" if data.growth else "")
    ax.set_title(f"{_shorten(title, 80)}\n{subtitle}", fontsize=9, loc="left")
    _plain_ticks(ax)
    return fig


def _plain_ticks(ax) -> None:
    """Log axes: plain tick labels (``65536``, ``1e+06``; readable and far cheaper than mathtext), no minor ticks."""
    from matplotlib.ticker import FuncFormatter, NullLocator

    plain = FuncFormatter(lambda value, _: f"{value:g}")
    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() == "log":
            axis.set_major_formatter(plain)
            axis.set_minor_locator(NullLocator())  # minor ticks of log axes cost a third of the drawing time


def _draw_lines(ax, data: PlotData) -> None:
    """Measurements, model curve(s), interval band, target and segments over the first parameter."""
    params = data.parameters
    n_params = len(params)
    x_measured = data.points[:, 0] if n_params else np.zeros(len(data.center))
    target = data.target
    x_target = target[params[0]] if target and n_params else None
    x_lo_measured, x_hi_measured = float(np.min(x_measured)), float(np.max(x_measured))
    # from the measurements to the target, on whichever side of them it lies
    x_lo = min(x_lo_measured, x_target if x_target is not None else math.inf)
    x_hi = max(x_hi_measured, x_target if x_target is not None else -math.inf)
    positive_x = x_lo > 0
    if positive_x and x_hi > x_lo:
        xs = np.geomspace(x_lo, x_hi, CURVE_POINTS)
    else:
        xs = np.linspace(x_lo, max(x_hi, x_lo + 1), CURVE_POINTS)
    xs = np.unique(np.concatenate([xs, [x_lo_measured, x_hi_measured]]))
    # One curve per measured value of the second parameter (others at their largest measured value).
    fixed = {p: float(np.max(data.points[:, k])) for k, p in enumerate(params) if k >= 2}
    if target:
        fixed = {p: target[p] for p in fixed}
    if n_params >= 2:
        seconds = sorted(set(np.unique(data.points[:, 1]).tolist()) | ({target[params[1]]} if target else set()))
    else:
        seconds = [None]
    colors = _colors(len(seconds))
    banded = (target[params[1]] if target else max(seconds)) if n_params >= 2 else None
    shown_values = [data.center, data.low, data.high]
    measured = []
    for color, second in zip(colors, seconds):
        X = _curve_points(xs, params, second, fixed)
        y = data.model.predict(X) if n_params else np.full(len(xs), data.model.predict([]))
        y = drawn(data.model, y, data.low)
        inside = (xs >= x_lo_measured) & (xs <= x_hi_measured)
        label = "model" if second is None else f"model, {params[1]}={second:g}"
        ax.plot(xs[inside], y[inside], color=color, lw=1.6, label=label)
        for beyond in (xs <= x_lo_measured, xs >= x_hi_measured):  # dashed outside the measurements
            if np.count_nonzero(beyond) > 1:
                ax.plot(xs[beyond], y[beyond], color=color, lw=1.6, ls="--")
        if data.uncertainty is not None and second == banded:
            low, high = data.uncertainty.bounds(y, data.uncertainty.half_width(X, data.level, "prediction"))
            ax.fill_between(xs, low, high, color=color, alpha=0.18, lw=0,
                            label=f"{format_percent(data.level)} prediction interval")
        rows = _rows_matching(data.points, params, second, fixed) if n_params else np.ones(len(data.center), bool)
        measured.append((rows, color))
    # All measured points in two artists (one errorbar call per curve costs more than the rest of the figure).
    shown = np.zeros(len(data.center), dtype=bool)
    point_colors = [None] * len(data.center)
    for rows, color in measured:
        for k in np.flatnonzero(rows & ~shown):
            point_colors[k] = color
        shown |= rows
    if shown.any():
        where = np.flatnonzero(shown)
        ax.vlines(x_measured[where], data.low[where], data.high[where], colors=[point_colors[k] for k in where], lw=1.2)
        ax.scatter(x_measured[where], data.center[where], s=18, c=[point_colors[k] for k in where], zorder=3,
                   label=f"measured ({data.measure}; bars: min–max)")
    if target and math.isfinite(data.value_target):
        lo, hi = data.interval
        yerr = None
        if math.isfinite(lo) and math.isfinite(hi):
            yerr = [[max(data.value_target - lo, 0)], [max(hi - data.value_target, 0)]]
            shown_values.append(np.array([lo, hi]))
        ax.errorbar([x_target], [data.value_target], yerr=yerr, fmt="*", ms=11, color="crimson", capsize=4,
                    label=f"target {format_point(target)}: {data.value_target:.4g}")
        shown_values.append(np.array([data.value_target]))
    _draw_segments(ax, data, params)
    if positive_x:
        ax.set_xscale("log", base=2)
    values = np.concatenate([np.asarray(v, dtype=float).ravel() for v in shown_values])
    values = values[np.isfinite(values)]
    if values.size and np.all(values > 0) and values.max() / values.min() > 50:
        ax.set_yscale("log")
    ax.set_xlabel(params[0] if n_params else "")
    ax.set_ylabel(data.model.metric + (f" [{data.unit}]" if data.unit else ""))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")  # "best" searches every position: a third of the drawing time


def _curve_points(xs: np.ndarray, params: Sequence[str], second: float | None, fixed: dict) -> np.ndarray:
    X = np.empty((len(xs), len(params)))
    if len(params):
        X[:, 0] = xs
    if len(params) >= 2:
        X[:, 1] = second
    for k, p in enumerate(params[2:], start=2):
        X[:, k] = fixed[p]
    return X


def _rows_matching(points: np.ndarray, params: Sequence[str], second: float | None, fixed: dict) -> np.ndarray:
    rows = np.ones(points.shape[0], dtype=bool)
    if second is not None:
        rows &= points[:, 1] == second
    for k, p in enumerate(params[2:], start=2):
        rows &= points[:, k] == fixed[p]
    return rows


def _draw_segments(ax, data: PlotData, params: Sequence[str]) -> None:
    segments = data.model.segments
    if not segments or not params:
        return
    spans = sorted({s.range[params[0]] for s in segments if params[0] in s.range})
    shades = ("#4c72b0", "#dd8452")
    for k, (lo, hi) in enumerate(spans):
        ax.axvspan(lo, hi, color=shades[k % 2], alpha=0.08, lw=0, label="segments" if k == 0 else None)
    for k, (_, hi) in enumerate(spans[:-1]):
        ax.axvline(hi, color="0.3", ls=":", lw=1.2, label="change point" if k == 0 else None)


def _draw_heatmap(fig, ax, data: PlotData) -> None:
    """The model over the first two parameters as colour, measured points and target on top."""
    from matplotlib.colors import LogNorm

    params = data.parameters
    target = data.target
    ranges = []
    for k in (0, 1):
        lo, hi = float(np.min(data.points[:, k])), float(np.max(data.points[:, k]))
        if target:
            lo, hi = min(lo, target[params[k]]), max(hi, target[params[k]])
        if lo > 0 and hi > lo:  # a margin of a quarter octave, so that points on the edge show whole
            ranges.append(np.geomspace(lo / 2**0.25, hi * 2**0.25, HEATMAP_CELLS))
        else:
            ranges.append(np.linspace(lo - 0.5, hi + 0.5, HEATMAP_CELLS))
    gx, gy = np.meshgrid(ranges[0], ranges[1])
    X = np.zeros((gx.size, len(params)))
    X[:, 0], X[:, 1] = gx.ravel(), gy.ravel()
    for k in range(2, len(params)):
        X[:, k] = target[params[k]] if target else np.max(data.points[:, k])
    Z = drawn(data.model, data.model.predict(X), data.low).reshape(gx.shape)
    finite = Z[np.isfinite(Z)]
    norm = None
    if finite.size and 0 < finite.min() < finite.max():
        norm = LogNorm(vmin=finite.min(), vmax=finite.max())
    mesh = ax.pcolormesh(gx, gy, Z, shading="auto", cmap="viridis", norm=norm)
    bar = fig.colorbar(mesh, ax=ax, label=data.model.metric + (f" [{data.unit}]" if data.unit else ""))
    _plain_ticks(bar.ax)
    ax.scatter(data.points[:, 0], data.points[:, 1], s=14, c="white", edgecolors="black", lw=0.6,
               label="measured points", zorder=3)
    if target:
        ax.scatter([target[params[0]]], [target[params[1]]], marker="*", s=140, c="crimson", edgecolors="white",
                   label=f"target: {data.value_target:.4g}", zorder=4)
    if np.all(ranges[0] > 0):
        ax.set_xscale("log", base=2)
    if np.all(ranges[1] > 0):
        ax.set_yscale("log", base=2)
    ax.set_xlabel(params[0])
    ax.set_ylabel(params[1])
    ax.legend(fontsize=7, loc="upper left")


def _colors(n: int) -> list:
    from matplotlib import colormaps

    if n == 1:
        return ["#1f77b4"]
    cmap = colormaps["plasma"]
    return [cmap(0.8 * k / max(n - 1, 1)) for k in range(n)]



def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# -------------------------------------------------------------------- render
def render(data: PlotData, style: str = "lines", fmt: str = "png") -> bytes:
    """One figure as the bytes of a PNG, SVG (text kept as text) or PDF file."""
    import matplotlib

    if fmt not in FORMATS:
        raise InputError(f"unknown plot format {fmt!r}; expected one of {', '.join(FORMATS)}")
    fig = figure(data, style)
    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "extrap-plugins"}):
        fig.savefig(buffer, format=fmt, metadata=_metadata(fmt))
    return buffer.getvalue()


def _metadata(fmt: str) -> dict[str, Any]:
    """Reproducible files: no creation dates."""
    if fmt == "svg":
        return {"Date": None}
    if fmt == "pdf":
        return {"CreationDate": None, "ModDate": None}
    return {"Software": None}


def _render_task(task) -> bytes:
    data, style, fmt = task
    return render(data, style, fmt)


def render_all(items: Sequence[PlotData], style: str, fmt: str) -> list[bytes]:
    """Render many figures on the executor chosen for this export (:func:`extrap_plugins.executors.current`)."""
    from extrap_plugins import executors

    chosen, jobs = executors.current()
    kind = executors.resolve(chosen, len(items))
    with executors.create_executor(kind, jobs) as pool:
        return list(executors.map_ordered(pool, _render_task, ((d, style, fmt) for d in items)))


# -------------------------------------------------------------------- export
def export_plot(model_set: ModelSet, path: pathlib.Path, options: dict[str, str]) -> None:
    """Write the figures to ``path``: one file, a multi-page PDF, or a folder of files."""
    _require_matplotlib()
    ranked, own = from_options(model_set, options, "plot", OWN_OPTIONS, intervals=True)
    style = own.get("plot_style", "lines")
    if style not in STYLES:
        raise InputError(f"unknown plot style {style!r}; expected one of {', '.join(STYLES)}")
    limit = option_int(own, "plot_top", 0, minimum=1) if "plot_top" in own else None
    if model_set.experiment is None:
        raise InputError("the plot exporter draws the measurements: give it models made by extrap_plugins.model()")
    items = plot_data(ranked, limit)
    if not items:
        raise InputError("nothing to plot: no model has measurements")
    path = pathlib.Path(path)
    suffix = path.suffix.lower().lstrip(".")
    if path.is_dir() or not suffix:
        fmt = own.get("format", "png").lower()
        if fmt not in FORMATS:
            raise InputError(f"unknown plot format {fmt!r}; expected one of {', '.join(FORMATS)}")
        if not path.is_dir() and not path.parent.is_dir():
            raise InputError("the folder for the output does not exist", path)
        names = [f"{name}.{fmt}" for name in safe_names([(d.model.callpath, d.model.metric) for d in items])]
        folder = FolderOutput(path, names, what="figure")  # a file of the user's in the way: said before drawing
        folder.write(render_all(items, style, fmt))  # all new figures, or the folder as it was
        return
    if suffix not in FORMATS:
        raise InputError(f"unknown plot format '.{suffix}'; expected .png, .svg or .pdf, or a folder", path)
    if "format" in own and own["format"].lower() != suffix:
        raise InputError(f"format={own['format']} contradicts the file extension .{suffix}", path)
    if not path.parent.is_dir():
        raise InputError("the folder for the output does not exist", path)
    # Read-only files were refused before any work (files.check_destination), unless --overwrite-read-only:
    # the exporter is not told, so it does not ask again.
    if suffix == "pdf":
        _write_pdf(path, items, style)
        return
    if len(items) > 1:
        raise InputError(
            f"{len(items)} models to plot but one .{suffix} file: select one with --callpath and --metric, "
            "or give a folder (one file each) or a .pdf (one page each)", path)
    write_atomically(path, render(items[0], style, suffix), allow_read_only=True)


def _write_pdf(path: pathlib.Path, items: Sequence[PlotData], style: str) -> None:
    from matplotlib.backends.backend_pdf import PdfPages

    with atomic_writer(path, binary=True, allow_read_only=True) as stream, \
            PdfPages(stream, metadata=_metadata("pdf")) as pages:
        for data in items:
            pages.savefig(figure(data, style))




def safe_names(keys: Sequence[tuple[str, str]]) -> list[str]:
    """File names (without extension) for (call path, metric) pairs: safe, short and distinct.

    ``main->solve`` and ``time`` -> ``main-solve.time``.  Characters other
    than letters, digits, ``.``, ``_`` and ``-`` become ``_``; names that
    were cut short or that would collide get a hash of the full key.

    >>> safe_names([("main->solve", "time"), ("main->MPI_Send(1)", "time")])
    ['main-solve.time', 'main-MPI_Send_1_.time']
    """
    def clean(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]", "_", text.replace("->", "-")).strip(".") or "_"

    names = []
    for callpath, metric in keys:
        name = f"{clean(callpath)}.{clean(metric)}"
        if len(name) > MAX_NAME:
            name = name[:MAX_NAME] + "-" + _digest(callpath, metric)
        names.append(name)
    seen: dict[str, int] = {}
    for name in names:
        seen[name.lower()] = seen.get(name.lower(), 0) + 1
    return [
        f"{name}-{_digest(c, m)}" if seen[name.lower()] > 1 else name
        for name, (c, m) in zip(names, keys)
    ]


def _digest(callpath: str, metric: str) -> str:
    return hashlib.sha1(f"{callpath}\0{metric}".encode()).hexdigest()[:8]


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError("the plot exporter needs matplotlib: pip install 'extrap-plugins[plot]'") from None
