"""Small static line charts as inline SVG text: no matplotlib, no script, nothing fetched.

:func:`chart` draws lines and markers on linear or logarithmic axes, with
labelled horizontal and vertical marks (an efficiency level, a crossover, the
target).  The reports embed its output directly in their HTML.
"""

from __future__ import annotations

import hashlib
import html
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

PALETTE = ("#1f5fa8", "#d1495b", "#2e7d32", "#ef8c00", "#6a3d9a", "#00838f")


@dataclass(frozen=True)
class Series:
    """One curve or set of markers: ``style`` is ``line``, ``dashed`` or ``points``."""

    name: str
    x: Sequence[float]
    y: Sequence[float]
    style: str = "line"
    color: str = PALETTE[0]


@dataclass(frozen=True)
class Mark:
    """A horizontal (``axis="y"``) or vertical (``axis="x"``) line at ``value`` with a label."""

    axis: str
    value: float
    label: str
    color: str = "#555555"
    dashed: bool = True


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        if hi / lo <= 2.0**13:
            base = 2.0
        else:
            base = 10.0
        first, last = math.floor(math.log(lo, base) + 1e-9), math.ceil(math.log(hi, base) - 1e-9)
        values = [base**k for k in range(first, last + 1)]
        values = [v for v in values if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)]
        while len(values) > 9:
            values = values[::2]
        return values or [lo, hi]
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / 6
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start = math.ceil(lo / step - 1e-9) * step
    values = []
    v = start
    while v <= hi + step * 1e-9:
        values.append(0.0 if abs(v) < step * 1e-9 else v)
        v += step
    return values


def tick_text(value: float) -> str:
    """``1024``, ``0.5``, ``1e+06`` → ``1e6``, ``10000`` → ``1e4``."""
    text = f"{value:.4g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}e{int(exponent)}"
    return text


@dataclass(frozen=True)
class _Frame:
    """Where the plot area lies and how values map into it."""

    left: float
    top: float
    width: float
    height: float
    x: tuple[float, float]
    y: tuple[float, float]
    x_log: bool
    y_log: bool

    def fx(self, v: float) -> float:
        return self.left + _unit(v, self.x, self.x_log) * self.width

    def fy(self, v: float) -> float:
        return self.top + (1 - _unit(v, self.y, self.y_log)) * self.height

    def holds(self, axis: str, value: float) -> bool:
        lo, hi = self.x if axis == "x" else self.y
        log = self.x_log if axis == "x" else self.y_log
        return math.isfinite(value) and lo <= value <= hi and not (log and value <= 0)


def _unit(v: float, span: tuple[float, float], log: bool) -> float:
    lo, hi = span
    if log:
        return (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return (v - lo) / (hi - lo)


def _clean(series: Sequence[Series], x_log: bool, y_log: bool) -> list[tuple[Series, np.ndarray, np.ndarray]]:
    cleaned = []
    for s in series:
        x = np.asarray(s.x, dtype=np.float64).reshape(-1)
        y = np.asarray(s.y, dtype=np.float64).reshape(-1)
        keep = np.isfinite(x) & np.isfinite(y)
        if x_log:
            keep &= x > 0
        if y_log:
            keep &= y > 0
        cleaned.append((s, x[keep], y[keep]))
    return cleaned


def _span(values: list[float], log: bool, fallback: tuple[float, float], pad: bool) -> tuple[float, float]:
    lo, hi = (min(values), max(values)) if values else fallback
    if hi - lo <= 1e-9 * max(abs(lo), abs(hi)):  # one value (up to rounding): a range around it
        middle = (lo + hi) / 2
        if log:
            lo, hi = (middle / 2, middle * 2) if middle > 0 else (0.5, 2.0)
        else:
            lo, hi = (middle - 1, middle + 1) if middle == 0 else (middle - abs(middle) / 2, middle + abs(middle) / 2)
    if pad and log:  # (in the log's own measure, so that a point at either end is drawn whole, not half clipped)
        extra = (hi / lo) ** 0.06
        lo, hi = lo / extra, hi * extra
    elif pad:
        extra = (hi - lo) * 0.06
        lo, hi = lo - extra, hi + extra
    return lo, hi


def chart(series: Sequence[Series], *, title: str, x_label: str, y_label: str, x_log: bool = True,
          y_log: bool = False, marks: Sequence[Mark] = (), width: int = 720, height: int = 380,
          y_range: tuple[float, float] | None = None, css_class: str = "chart") -> str:
    """The SVG text of a chart (an ``<svg>`` element, ``role="img"``, with a ``<title>``).

    Points that are not finite, or not positive on a log axis, are left out.
    """
    cleaned = _clean(series, x_log, y_log)
    xs = [float(v) for _, x, _ in cleaned for v in x]
    ys = [float(v) for _, _, y in cleaned for v in y]
    for mark in marks:
        log = x_log if mark.axis == "x" else y_log
        if math.isfinite(mark.value) and not (log and mark.value <= 0):
            (xs if mark.axis == "x" else ys).append(mark.value)
    x_span = _span(xs, x_log, (1.0, 2.0), pad=True)
    y_span = y_range if y_range is not None else _span(ys, y_log, (1.0, 10.0) if y_log else (0.0, 1.0), pad=True)
    frame = _Frame(78, 36, width - 78 - 24, height - 36 - 56, x_span, y_span, x_log, y_log)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" role="img" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f"<title>{html.escape(title)}</title>",
           f'<text x="{frame.left}" y="20" font-size="14" font-weight="bold">{html.escape(title)}</text>']
    out += _axes(frame, x_label, y_label, height)
    clip = "clip-" + hashlib.sha1(repr((title, [s.name for s in series], x_span)).encode()).hexdigest()[:12]
    out.append(f'<clipPath id="{clip}"><rect x="{frame.left}" y="{frame.top}" width="{frame.width}" '
               f'height="{frame.height}"/></clipPath><g clip-path="url(#{clip})">')
    out += _curves(frame, cleaned)
    out.append("</g>")
    out += _marks(frame, marks)
    out += _legend(frame, [s for s, _, _ in cleaned])
    out.append("</svg>")
    return "\n".join(out)


def _axes(frame: _Frame, x_label: str, y_label: str, height: int) -> list[str]:
    left, top, w, h = frame.left, frame.top, frame.width, frame.height
    out = [f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="#fff" stroke="#999"/>']
    for v in _ticks(*frame.x, frame.x_log):
        x = frame.fx(v)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + h}" stroke="#eee"/>')
        out.append(f'<text x="{x:.1f}" y="{top + h + 16}" text-anchor="middle">{tick_text(v)}</text>')
    for v in _ticks(*frame.y, frame.y_log):
        y = frame.fy(v)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + w}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick_text(v)}</text>')
    out.append(f'<text x="{left + w / 2}" y="{height - 12}" text-anchor="middle">{html.escape(x_label)}</text>')
    out.append(f'<text transform="translate(16,{top + h / 2}) rotate(-90)" text-anchor="middle">'
               f"{html.escape(y_label)}</text>")
    return out


def _curves(frame: _Frame, cleaned) -> list[str]:
    out = []
    for s, x, y in cleaned:
        if not len(x):
            continue
        cls = html.escape(s.name.split(":")[0].replace(" ", "-").lower(), quote=True)
        if s.style == "points":
            out += [f'<circle class="point series-{cls}" cx="{frame.fx(a):.1f}" cy="{frame.fy(b):.1f}" r="3.5" '
                    f'fill="{s.color}"/>' for a, b in zip(x, y)]
            continue
        d = " ".join(f"{'M' if i == 0 else 'L'}{frame.fx(a):.1f},{frame.fy(b):.1f}"
                     for i, (a, b) in enumerate(zip(x, y)))
        dash = ' stroke-dasharray="6 4"' if s.style == "dashed" else ""
        out.append(f'<path class="curve series-{cls}" d="{d}" fill="none" stroke="{s.color}" stroke-width="2"{dash}/>')
    return out


def _marks(frame: _Frame, marks: Sequence[Mark]) -> list[str]:
    out = []
    shown_x = 0
    for mark in marks:
        if not frame.holds(mark.axis, mark.value):
            continue
        dash = ' stroke-dasharray="4 3"' if mark.dashed else ""
        label = html.escape(mark.label)
        right = frame.left + frame.width
        if mark.axis == "y":
            y = frame.fy(mark.value)
            out.append(f'<line class="mark mark-y" x1="{frame.left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" '
                       f'stroke="{mark.color}"{dash}/>')
            out.append(f'<text x="{right - 4}" y="{y - 4:.1f}" text-anchor="end" fill="{mark.color}">{label}</text>')
            continue
        x = frame.fx(mark.value)
        out.append(f'<line class="mark mark-x" x1="{x:.1f}" y1="{frame.top}" x2="{x:.1f}" '
                   f'y2="{frame.top + frame.height}" stroke="{mark.color}"{dash}/>')
        flip = x > frame.left + frame.width * 0.7
        y = frame.top + 14 + 14 * shown_x  # labels of several vertical marks one below the other
        shown_x += 1
        out.append(f'<text x="{x - 4 if flip else x + 4:.1f}" y="{y}" fill="{mark.color}" '
                   f'text-anchor="{"end" if flip else "start"}">{label}</text>')
    return out


def _legend(frame: _Frame, series: Sequence[Series]) -> list[str]:
    out = []
    lx, ly = frame.left + 10, frame.top + 30
    for s in series:
        if s.style == "points":
            out.append(f'<circle cx="{lx + 10}" cy="{ly - 4}" r="3.5" fill="{s.color}"/>')
        else:
            dash = ' stroke-dasharray="6 4"' if s.style == "dashed" else ""
            out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 20}" y2="{ly - 4}" stroke="{s.color}" '
                       f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{lx + 26}" y="{ly}">{html.escape(s.name)}</text>')
        ly += 16
    return out
