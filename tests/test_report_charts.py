"""The SVG charts of the efficiency and comparison reports (``extrap_plugins.reports.svg``)."""

from __future__ import annotations

import re

from extrap_plugins.reports.svg import Series, chart


def test_points_at_the_ends_of_log_axes_are_drawn_whole():
    # (log axes had no margin: the smallest p and the largest value sat on the frame, half clipped)
    svg = chart([Series("measured", [2.0, 32.0, 1024.0], [1e4, 300.0, 12.0], "points", "#000")],
                title="t", x_label="p", y_label="n", x_log=True, y_log=True, width=720, height=380)
    left, top, width, height = 78, 36, 720 - 78 - 24, 380 - 36 - 56
    points = [(float(x), float(y)) for x, y in re.findall(r'class="point[^"]*" cx="([0-9.]+)" cy="([0-9.]+)"', svg)]
    assert len(points) == 3
    for x, y in points:
        assert left + 3.5 <= x <= left + width - 3.5 and top + 3.5 <= y <= top + height - 3.5
