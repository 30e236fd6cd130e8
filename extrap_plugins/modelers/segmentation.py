"""Change-point detection: does one formula describe a series, and if not, where does it change?

The method of Ilyas et al. 2017 (Ilyas et al., "Segmented performance models"):

1. Slide a window of ``window`` (5) consecutive points along a parameter and fit
   a model to every window with a registered modeler.
2. Score each window with the absolute nRSS, ``sqrt(RSS) / |mean(y)|``.  A
   window above ``heterogeneous`` (0.1) mixes behaviours; a series whose
   largest window nRSS exceeds ``threshold`` (0.5) is segmented.  A window
   with ``heterogeneous <= nRSS <= threshold`` also makes the series segmented
   when its nRSS is more than ``ratio`` (4) times its neighbour's (the
   relative nRSS).
3. Read the change point off the pattern of heterogeneous windows (the
   "ones").  A change between points ``c`` and ``c + 1`` makes the windows
   that hold both heterogeneous: ``window - 1`` ones in a row; a point ``s``
   shared by both behaviours gives ``window - 2`` ones.  Each possible change
   predicts its pattern; the one closest to the observed pattern (fewest
   differing windows, then the highest contrast of window nRSS inside versus
   outside the predicted ones) is the change point.  This is the paper's
   "second one" rule where the pattern is clean, and still answers where
   noise flips a window or the pattern is cut off at either end.  Least
   squares then settle the points at the change (:func:`settle_shared`,
   :func:`settle_edges`).
4. Recurse into both sides for further change points (binary segmentation),
   as long as a side has more points than a window.

With several parameters, every line of points along one parameter (the other
parameters fixed) is scanned, and a change is assigned to that parameter when
at least half of its lines agree on it.

Everything is batched: one modeler call per window position fits that window
of every series (and every line) at once.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from extrap_plugins.experiment import Callpath, Metric, Parameter, SeriesGroup
from extrap_plugins.formatting import format_value
from extrap_plugins.models import Model

WINDOW = 5
"""Points per window (Ilyas et al. 2017, Section 3.1: five, as Extra-P recommends per model)."""
HETEROGENEOUS = 0.1
"""A window whose nRSS exceeds this mixes behaviours (Ilyas et al. 2017: 0.1)."""
THRESHOLD = 0.5
"""A series whose largest window nRSS exceeds this is segmented (Ilyas et al. 2017: theta = 0.5)."""
RATIO = 4.0
"""Relative nRSS above which a grey-zone window marks a change (Ilyas et al. 2017: epsilon > 4)."""
ETA = 1e-12
"""Added to denominators so that a perfect fit (nRSS 0) does not divide by zero."""
SHARED_FLOOR = 1e-6
"""A rise of a segment's nRSS below this is no rise (exact data with a truly shared point)."""
MIN_POINTS = 5
"""Points a segment needs for its own model; fewer gets a note naming the points to measure."""
MAX_CHANGES = 3
"""Most change points looked for per parameter and series (by recursion)."""
MAX_PROPOSED = 8
"""Most values a note proposes to measure (a large ``min_points`` would otherwise list thousands)."""

Fit = Callable[[SeriesGroup], Sequence[Model]]
"""A batched modeler call: a group of series at the same points -> one model per series."""


@dataclass(frozen=True)
class Settings:
    """The thresholds of the method, one object so they travel together."""

    window: int = WINDOW
    heterogeneous: float = HETEROGENEOUS
    threshold: float = THRESHOLD
    ratio: float = RATIO
    min_points: int = MIN_POINTS
    max_changes: int = MAX_CHANGES
    min_share: float = 0.5

    def __post_init__(self):
        if int(self.window) != self.window or self.window < 3:
            raise ValueError(f"window: expected a whole number of points >= 3, got {self.window!r}")
        if not 0 < self.heterogeneous <= self.threshold:
            raise ValueError(
                f"heterogeneous and threshold: expected 0 < heterogeneous <= threshold, "
                f"got {self.heterogeneous!r} and {self.threshold!r}"
            )
        if not self.ratio > 1:
            raise ValueError(f"ratio: expected a number > 1, got {self.ratio!r}")
        if int(self.min_points) != self.min_points or self.min_points < 1:
            raise ValueError(f"min_points: expected a whole number >= 1, got {self.min_points!r}")
        if int(self.max_changes) != self.max_changes or self.max_changes < 1:
            raise ValueError(f"max_changes: expected a whole number >= 1, got {self.max_changes!r}")
        if not 0 < self.min_share <= 1:
            raise ValueError(f"min_share: expected a share in (0, 1], got {self.min_share!r}")


@dataclass(frozen=True)
class ChangePoint:
    """Where a series changes behaviour along one parameter.

    ``before`` is the last measured value of the parameter that still belongs
    to the left behaviour, ``after`` the first that belongs to the right one;
    they are equal when one point is shared by both behaviours.  ``lines`` of
    the ``of_lines`` scanned lines along ``parameter`` showed this change.
    """

    parameter: str
    before: float
    after: float
    lines: int = 1
    of_lines: int = 1

    @property
    def shared(self) -> bool:
        return self.before == self.after

    def __str__(self) -> str:
        where = (
            f"at {self.parameter} = {format_value(self.before)}"
            if self.shared
            else f"between {self.parameter} = {format_value(self.before)} and {format_value(self.after)}"
        )
        seen = f" (on {self.lines} of {self.of_lines} lines)" if self.of_lines > 1 else ""
        return f"change {where}{seen}"


@dataclass
class Detection:
    """The outcome for one series: its change points, by parameter, in ascending order."""

    callpath: str
    metric: str
    changes: tuple[ChangePoint, ...] = ()
    notes: list[str] = field(default_factory=list)

    @property
    def segmented(self) -> bool:
        return bool(self.changes)


@dataclass
class LineScan:
    """Window scores of many series along one line of points.

    Attributes
    ----------
    nrss : ndarray, shape (n_series, n_windows)
    segmented : ndarray of bool, shape (n_series,)
    tags : ndarray of bool, shape (n_series, n_windows)
        The heterogeneous windows (the "ones").
    left_end, right_start : ndarray of int, shape (n_series,)
        Index of the last point of the left behaviour and of the first point
        of the right one (equal for a shared point); -1 where not segmented.
    """

    nrss: np.ndarray
    segmented: np.ndarray
    tags: np.ndarray
    left_end: np.ndarray
    right_start: np.ndarray


# ---------------------------------------------------------------- windows
def window_nrss(x: np.ndarray, values: np.ndarray, fit: Fit, parameter: Parameter,
                window: int = WINDOW, measure: str = "mean") -> np.ndarray:
    """Absolute nRSS of a model fitted to every window of consecutive points.

    Parameters
    ----------
    x : ndarray, shape (n_points,)
        The parameter's values along the line, ascending.
    values : ndarray, shape (n_series, n_points, n_reps)
        Repetitions, NaN-padded.
    fit : callable
        Batched modeler call (see :data:`Fit`).
    parameter : Parameter
    window : int
    measure : str
        How repetitions are reduced for the nRSS denominator (the modeler reduces the same way).

    Returns
    -------
    ndarray, shape (n_series, n_points - window + 1)
        ``sqrt(RSS) / |mean(y)|`` per window; 0 for an all-zero window fitted exactly.

    Examples
    --------
    Data of Ilyas et al. 2017, Fig. 1 (``p^2`` up to 6, then ``30 + p``) give high nRSS
    in the three windows that mix both.
    """
    x = np.asarray(x, dtype=np.float64)
    n_series, n_points = values.shape[:2]
    n_windows = n_points - window + 1
    if n_windows < 1:
        raise ValueError(f"expected at least {window} points for a window, got {n_points}")
    Y = _reduce(values, measure)
    keys = _keys(n_series)
    E = np.empty((n_series, n_windows))
    for i in range(n_windows):
        group = SeriesGroup((parameter,), x[i:i + window, None], keys, values[:, i:i + window])
        rss = model_rss(fit(group), x[i:i + window, None], Y[:, i:i + window])
        E[:, i] = normalised(rss, Y[:, i:i + window])
    return E


def normalised(rss: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``sqrt(rss) / |mean(Y)|`` per series; rss shape (n_series,), Y shape (n_series, n_points)."""
    mean = np.abs(Y.mean(axis=1))
    root = np.sqrt(np.maximum(rss, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(mean > 0, root / np.where(mean > 0, mean, 1.0), np.where(root > 0, np.inf, 0.0))


def model_rss(models: Sequence[Model], X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """RSS of each model at ``X`` (n_points, n_params) against ``Y`` (n_series, n_points).

    Uses the modeler's own figure when it reports one and evaluates the model otherwise.
    """
    rss = np.array([m.quality.rss for m in models], dtype=np.float64)
    missing = ~np.isfinite(rss)
    for s in np.flatnonzero(missing):  # only for modelers that report no RSS
        rss[s] = float(np.sum((models[s].predict(X) - Y[s]) ** 2))
    return rss


# ---------------------------------------------------------- classification
def classify(E: np.ndarray, settings: Settings = Settings()) -> tuple[np.ndarray, np.ndarray]:
    """Decide which series are segmented and which windows are heterogeneous.

    Parameters
    ----------
    E : ndarray, shape (n_series, n_windows)
        Window nRSS values.

    Returns
    -------
    segmented : ndarray of bool, shape (n_series,)
        Largest nRSS above ``threshold``, or a grey-zone window
        (``heterogeneous <= nRSS <= threshold``) more than ``ratio`` times
        the nRSS of a neighbouring window.
    tags : ndarray of bool, shape (n_series, n_windows)
        Windows above ``threshold``, or above ``heterogeneous`` and more than
        ``ratio`` times the series' best window (so that noise lifting every
        window above 0.1 does not tag them all).
    """
    E = np.where(np.isnan(E), np.inf, E)
    grey = (E >= settings.heterogeneous) & (E <= settings.threshold)
    jump = np.zeros_like(grey)
    if E.shape[1] > 1:
        jump[:, 1:] |= E[:, 1:] > settings.ratio * (E[:, :-1] + ETA)
        jump[:, :-1] |= E[:, :-1] > settings.ratio * (E[:, 1:] + ETA)
    segmented = (E.max(axis=1) > settings.threshold) | (grey & jump).any(axis=1)
    floor = E.min(axis=1, keepdims=True)
    tags = (E > settings.threshold) | ((E > settings.heterogeneous) & (E > settings.ratio * (floor + ETA)))
    return segmented, tags


def expected_patterns(n_points: int, window: int = WINDOW) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The heterogeneous windows every possible single change would produce.

    A change between points ``c`` and ``c + 1`` puts both in windows
    ``c - window + 2 .. c``; a point ``s`` shared by both behaviours makes
    windows ``s - window + 2 .. s - 1`` heterogeneous (they hold ``s - 1``
    and ``s + 1``).

    Returns
    -------
    left_end, right_start : ndarray of int, shape (n_hypotheses,)
    patterns : ndarray of bool, shape (n_hypotheses, n_points - window + 1)

    Examples
    --------
    >>> left, right, P = expected_patterns(10)
    >>> int(left[4]), int(right[4]), P[4].astype(int).tolist()   # between points 4 and 5
    (4, 5, [0, 1, 1, 1, 1, 0])
    """
    n_windows = n_points - window + 1
    start = np.arange(n_windows)
    c = np.arange(n_points - 1)  # split after c
    s = np.arange(1, n_points - 1)  # shared point s
    split = (start[None, :] >= c[:, None] - window + 2) & (start[None, :] <= c[:, None])
    shared = (start[None, :] >= s[:, None] - window + 2) & (start[None, :] <= s[:, None] - 1)
    left_end = np.concatenate([c, s])
    right_start = np.concatenate([c + 1, s])
    return left_end, right_start, np.concatenate([split, shared])


def locate(E: np.ndarray, tags: np.ndarray, window: int = WINDOW) -> tuple[np.ndarray, np.ndarray]:
    """The change point whose expected pattern best matches the observed one.

    Parameters
    ----------
    E : ndarray, shape (n_series, n_windows)
    tags : ndarray of bool, shape (n_series, n_windows)

    Returns
    -------
    left_end, right_start : ndarray of int, shape (n_series,)
        Fewest windows that differ from the expected pattern first; among
        those, the largest contrast between the mean log nRSS of the windows
        expected heterogeneous and of the others.
    """
    n_windows = E.shape[1]
    left, right, P = expected_patterns(n_windows + window - 1, window)
    distance = np.sum(tags[:, None, :] != P[None, :, :], axis=2)  # (S, H)
    logs = np.log(np.where(np.isfinite(E), E, 1e300) + ETA)
    ones = P.sum(axis=1)
    zeros = n_windows - ones
    inside = logs @ P.T.astype(np.float64) / np.maximum(ones, 1)
    outside = logs @ (~P).T.astype(np.float64) / np.maximum(zeros, 1)
    contrast = inside - np.where(zeros > 0, outside, inside.min(axis=1, keepdims=True) - 1.0)
    # Lexicographic choice: distance first, contrast second.
    span = np.ptp(contrast, axis=1, keepdims=True) + 1.0
    score = distance - (contrast - contrast.min(axis=1, keepdims=True)) / (span * 2.0)
    best = np.argmin(score, axis=1)
    return left[best], right[best]


def scan(x: np.ndarray, values: np.ndarray, fit: Fit, parameter: Parameter,
         settings: Settings = Settings(), measure: str = "mean") -> LineScan:
    """Window scores, classification and change point of many series along one line.

    Parameters
    ----------
    x : ndarray, shape (n_points,), ascending, n_points >= settings.window
    values : ndarray, shape (n_series, n_points, n_reps)

    Returns
    -------
    LineScan
    """
    E = window_nrss(x, values, fit, parameter, settings.window, measure)
    segmented, tags = classify(E, settings)
    left, right = np.full(E.shape[0], -1), np.full(E.shape[0], -1)
    if E.shape[1] < 2:  # one window says "mixed" at most, not where
        segmented = np.zeros_like(segmented)
    elif segmented.any():
        left[segmented], right[segmented] = locate(E[segmented], tags[segmented], settings.window)
        left, right = settle_shared(x, values, fit, parameter, left, right, settings, measure)
        left, right = settle_edges(x, values, fit, parameter, left, right, measure)
    return LineScan(E, segmented, tags, left, right)


def settle_shared(x: np.ndarray, values: np.ndarray, fit: Fit, parameter: Parameter, left: np.ndarray,
                  right: np.ndarray, settings: Settings = Settings(),
                  measure: str = "mean") -> tuple[np.ndarray, np.ndarray]:
    """Check that a point the pattern calls shared fits both behaviours.

    A window with one foreign point at its edge can look homogeneous, so a
    change between ``s - 1`` and ``s`` (or ``s`` and ``s + 1``) may show the
    pattern of a point ``s`` shared by both sides.  Least squares decides:
    adding ``s`` to the left segment raises its RSS by ``dl``, adding it to
    the right one by ``dr``; ``s`` joins the side with the smaller rise, and
    stays shared only when both rises are negligible (below
    ``SHARED_FLOOR`` in nRSS terms: exact data with a truly common point).

    Parameters
    ----------
    x : ndarray, shape (n_points,)
    values : ndarray, shape (n_series, n_points, n_reps)
    left, right : ndarray of int, shape (n_series,)
        Located changes (-1: none); shared where ``left == right``.

    Returns
    -------
    left, right : new arrays, shared points settled.
    """
    left, right = left.copy(), right.copy()
    Y = _reduce(values, measure)
    shared = np.flatnonzero((left == right) & (left > 0))
    for s in np.unique(left[shared]):
        members = shared[left[shared] == s]
        dl, dr = _rises(x, values, Y, fit, parameter, members, s)
        negligible = normalised(np.maximum(dl, dr), Y[members]) <= SHARED_FLOOR
        to_left = ~negligible & (dl <= dr)
        to_right = ~negligible & (dl > dr)
        right[members[to_left]] = s + 1
        left[members[to_right]] = s - 1
    return left, right


def settle_edges(x: np.ndarray, values: np.ndarray, fit: Fit, parameter: Parameter, left: np.ndarray,
                 right: np.ndarray, measure: str = "mean") -> tuple[np.ndarray, np.ndarray]:
    """Move a point at the edge of a change to the side it fits, as :func:`settle_shared` does.

    A window with one foreign point at its edge can look homogeneous (a steep
    one-term model through four flat values and one jump), so the pattern may
    put a change one point late or early.  The last point of the left segment
    moves to the right one when adding it there raises the RSS less than
    keeping it on the left (the rises of :func:`settle_shared`), and the first
    point of the right segment moves left when it fits there better, until no
    point moves.  A move needs a second opinion: the models of either side,
    fitted without the point, must also miss it less on its new side (the
    rises alone favour the side with the smaller values' noise, and a side of
    three points or fewer, which fits any point well).  Rises below
    ``SHARED_FLOOR`` (a point that fits both sides) move nothing.

    Parameters
    ----------
    left, right : ndarray of int, shape (n_series,)
        Located changes (-1: none); only changes between two points
        (``right == left + 1``) are looked at.

    Returns
    -------
    left, right : new arrays.
    """
    left, right = left.copy(), right.copy()
    Y = _reduce(values, measure)
    last = x.shape[0] - 1
    for _ in range(last):  # a change may be off by more than one point: move until every edge point fits
        before = left.copy()
        for edge, step in (("left", -1), ("right", 1)):
            split = np.flatnonzero((left >= 0) & (right == left + 1))
            points = left[split] if edge == "left" else right[split]
            for s in np.unique(points):
                if (edge == "left" and s < 1) or (edge == "right" and s >= last):
                    continue  # a segment keeps at least one point
                members = split[points == s]
                dl, dr = _rises(x, values, Y, fit, parameter, members, s)
                el, er = _misses(x, values, Y, fit, parameter, members, s)
                better = ((dl > dr) & (el > er)) if edge == "left" else ((dr > dl) & (er > el))
                moved = members[better & (normalised(np.maximum(dl, dr), Y[members]) > SHARED_FLOOR)]
                left[moved] += step
                right[moved] += step
        if np.array_equal(left, before):
            break
    return left, right


def _misses(x, values, Y, fit: Fit, parameter: Parameter, members: np.ndarray, s: int):
    """How far the models of the points left of ``s`` and of those right of it, each fitted without ``s``,
    miss the value at ``s``, for each series of ``members``: ``(el, er)``."""
    misses = []
    for lo, hi in ((0, s), (s + 1, x.shape[0])):
        group = SeriesGroup((parameter,), x[lo:hi, None], _keys(members.size), values[members, lo:hi])
        predicted = np.array([model.predict(x[s:s + 1, None])[0] for model in fit(group)])
        misses.append(np.abs(predicted - Y[members, s]))
    return misses[0], misses[1]


def _rises(x, values, Y, fit: Fit, parameter: Parameter, members: np.ndarray, s: int):
    """How much point ``s`` raises the RSS of the segment left of it (``0 .. s``) and of the one right of
    it (``s .. end``), for each series of ``members``: ``(dl, dr)``."""
    n_points = x.shape[0]
    rise = []
    for with_s, without_s in (((0, s + 1), (0, s)), ((s, n_points), (s + 1, n_points))):
        fits = []
        for lo, hi in (with_s, without_s):
            if hi - lo < 3:  # two points or fewer fit any two-coefficient model exactly
                fits.append(np.zeros(members.size))
                continue
            group = SeriesGroup((parameter,), x[lo:hi, None], _keys(members.size), values[members, lo:hi])
            fits.append(model_rss(fit(group), x[lo:hi, None], Y[members, lo:hi]))
        rise.append(np.maximum(fits[0] - fits[1], 0.0))
    return rise[0], rise[1]


def find_changes(x: np.ndarray, values: np.ndarray, fit: Fit, parameter: Parameter,
                 settings: Settings = Settings(), measure: str = "mean") -> list[list[tuple[int, int]]]:
    """All change points of each series along one line, by recursion on the segments.

    Parameters
    ----------
    x : ndarray, shape (n_points,), ascending
    values : ndarray, shape (n_series, n_points, n_reps)

    Returns
    -------
    list (one per series) of ``(left_end, right_start)`` index pairs, ascending.
    A range is scanned only when it has more points than a window (one window
    alone cannot say where a change is); at most ``settings.max_changes`` per series.
    """
    n_series, n_points = values.shape[:2]
    found: list[list[tuple[int, int]]] = [[] for _ in range(n_series)]
    pending = {(0, n_points): np.arange(n_series)}
    while pending:
        following: dict[tuple[int, int], list[np.ndarray]] = defaultdict(list)
        for (lo, hi), members in pending.items():
            room = np.array([len(found[s]) < settings.max_changes for s in members], dtype=bool)
            members = members[room]
            if hi - lo <= settings.window or members.size == 0:
                continue
            result = scan(x[lo:hi], values[members, lo:hi], fit, parameter, settings, measure)
            for k in np.flatnonzero(result.segmented):
                s = int(members[k])
                left, right = lo + int(result.left_end[k]), lo + int(result.right_start[k])
                found[s].append((left, right))
                following[(lo, left + 1)].append(np.array([s]))
                following[(right, hi)].append(np.array([s]))
        pending = {span: np.concatenate(parts) for span, parts in following.items()}
    return [sorted(changes) for changes in found]


# ------------------------------------------------------------ several lines
def lines_along(points: np.ndarray, axis: int) -> list[tuple[np.ndarray, list[np.ndarray]]]:
    """Group the points into lines along one parameter, the others fixed.

    Parameters
    ----------
    points : ndarray, shape (n_points, n_params)
    axis : int

    Returns
    -------
    list of ``(x, [indices, ...])``: lines with the same parameter values ``x``
    (ascending) batched together; ``indices`` are rows of ``points`` in the
    order of ``x``, one array per line.
    """
    others = np.delete(points, axis, axis=1)
    _, line_id = np.unique(others, axis=0, return_inverse=True)
    line_id = line_id.reshape(-1)
    by_values: dict[tuple, list[np.ndarray]] = defaultdict(list)
    for line in range(int(line_id.max()) + 1 if line_id.size else 0):
        rows = np.flatnonzero(line_id == line)
        rows = rows[np.argsort(points[rows, axis], kind="stable")]
        by_values[tuple(points[rows, axis])].append(rows)
    return [(np.array(x), rows) for x, rows in by_values.items()]


def detect(group: SeriesGroup, fit: Fit, settings: Settings = Settings(),
           measure: str = "mean") -> list[Detection]:
    """Change points of every series of a group, along each of its parameters.

    Each parameter's lines (see :func:`lines_along`) with more points than a
    window are scanned; all lines with the same values are scanned together
    with all series.  A change is kept for a parameter when at least
    ``settings.min_share`` of the scanned lines show exactly that change
    (same points on either side); overlapping candidates keep the most
    frequent.

    Parameters
    ----------
    group : SeriesGroup
    fit : callable, see :data:`Fit`

    Returns
    -------
    list of Detection, one per series of the group, in order.
    """
    n_series = len(group)
    points = np.asarray(group.points, dtype=np.float64)
    detections = [Detection(c.name, m.name) for c, m in group.keys]
    changes: list[list[ChangePoint]] = [[] for _ in range(n_series)]
    for axis, parameter in enumerate(group.parameters):
        votes: list[Counter] = [Counter() for _ in range(n_series)]
        scanned = 0
        short = np.zeros(n_series)  # lines of exactly one window that do not fit one model
        short_lines, short_values = 0, []
        for x, lines in lines_along(points, axis):
            if x.size == settings.window:
                stacked = np.concatenate([group.values[:, rows] for rows in lines])
                E = window_nrss(x, stacked, fit, parameter, settings.window, measure)[:, 0]
                short += (E > settings.threshold).reshape(len(lines), n_series).sum(axis=0)
                short_lines += len(lines)
                short_values.append(x)
            if x.size <= settings.window:
                continue
            scanned += len(lines)
            stacked = np.concatenate([group.values[:, rows] for rows in lines])  # (L*S, n, R)
            found = find_changes(x, stacked, fit, parameter, settings, measure)
            for position, pairs in enumerate(found):
                s = position % n_series
                for left, right in pairs:
                    votes[s][(float(x[left]), float(x[right]))] += 1
        if short_lines and not scanned:
            x = short_values[0]
            proposal = points_to_measure(x, x, 1, "below") + points_to_measure(x, x, 1, "above")
            for s in np.flatnonzero(short >= max(1, math.ceil(settings.min_share * short_lines - 1e-9))):
                detections[s].notes.append(
                    f"the {settings.window} values of {parameter.name} do not fit one model (window nRSS above "
                    f"{settings.threshold:g}): the behaviour may change, but {settings.window} points cannot "
                    f"say where; measure {parameter.name} = {' or '.join(f'{v:g}' for v in proposal)} "
                    f"(or between the measured values) to locate the change"
                )
        if scanned == 0:
            continue
        needed = max(1, math.ceil(settings.min_share * scanned - 1e-9))
        for s, counted in enumerate(votes):
            if counted:
                kept = _agreeing(counted, needed)
                changes[s].extend(ChangePoint(parameter.name, b, a, n, scanned) for (b, a), n in kept)
    for detection, found in zip(detections, changes):
        detection.changes = tuple(found)
    return detections


def _agreeing(votes: Counter, needed: int) -> list[tuple[tuple[float, float], int]]:
    """Changes seen on at least ``needed`` lines, ascending.

    Two candidates whose intervals ``[before, after]`` touch or overlap are the
    same change placed differently on different lines: the more frequent one
    (then the lower one) is kept.
    """
    kept: list[tuple[tuple[float, float], int]] = []
    for (before, after), count in sorted(votes.items(), key=lambda item: (-item[1], item[0])):
        if count < needed:
            break
        if any(max(before, b) <= min(after, a) for (b, a), _ in kept):
            continue
        kept.append(((before, after), count))
    return sorted(kept)


# ----------------------------------------------------------------- segments
def segment_ranges(values: np.ndarray, changes: Sequence[ChangePoint]) -> list[tuple[float, float]]:
    """Cut the measured values of one parameter into segments at its change points.

    Parameters
    ----------
    values : ndarray, shape (n_values,)
        The parameter's distinct measured values.
    changes : change points of this parameter, ascending

    Returns
    -------
    list of (low, high): the measured extent of each segment; a shared point
    ends one segment and starts the next.

    Examples
    --------
    >>> segment_ranges(np.array([1., 2, 3, 4, 5, 6, 7]), [ChangePoint("p", 3, 4)])
    [(1.0, 3.0), (4.0, 7.0)]
    """
    values = np.unique(np.asarray(values, dtype=np.float64))
    ranges, low = [], float(values[0])
    for change in changes:
        ranges.append((low, float(change.before)))
        low = float(change.after)
    ranges.append((low, float(values[-1])))
    return ranges


def points_to_measure(segment: Sequence[float], line: Sequence[float], count: int,
                      side: str) -> list[float]:
    """Values to measure so that a segment gets ``count`` more points.

    The spacing of the line (ratio for geometric values such as powers of two,
    step for even ones) is continued away from the change: downwards for the
    first segment (``side="below"``), upwards for the last (``"above"``);
    where that runs out (values of 1 or less below) or for a middle segment
    (``"inside"``) the gaps inside the segment are halved.

    Parameters
    ----------
    segment : the segment's measured values
    line : all measured values of the parameter
    count : how many values are wanted
    side : {"below", "above", "inside"}

    Returns
    -------
    list of float, ``count`` values not measured yet (fewer if none can be found)

    Examples
    --------
    >>> points_to_measure([256, 512], [32, 64, 128, 256, 512], 3, "above")
    [1024.0, 2048.0, 4096.0]
    >>> points_to_measure([32, 64], [32, 64, 128, 256, 512], 3, "below")
    [16.0, 8.0, 4.0]
    """
    segment = sorted(float(v) for v in segment)
    line = np.unique(np.asarray(line, dtype=np.float64))
    integral = bool(np.all(line == np.round(line)))
    geometric = _is_geometric(line)
    if geometric:
        step = float(np.exp(np.median(np.diff(np.log(line)))))
    else:
        step = float(np.median(np.diff(line))) if line.size > 1 else 1.0
    taken = set(map(float, line))
    wanted: list[float] = []

    def offer(value: float) -> bool:
        value = float(round(value)) if integral else value
        if value in taken or not math.isfinite(value):
            return False
        taken.add(value)
        wanted.append(value)
        return True

    if side in ("below", "above"):
        value = segment[0] if side == "below" else segment[-1]
        for _ in range(count * 4):
            if len(wanted) >= count:
                break
            value = (value / step if side == "below" else value * step) if geometric else (
                value - step if side == "below" else value + step)
            if side == "below" and value < (2 if integral and geometric else 1 if integral else 0):
                break
            offer(value)
    grid = sorted(segment)
    for _ in range(6):  # halve the gaps inside the segment until enough
        if len(wanted) >= count or len(grid) < 2:
            break
        middles = [math.sqrt(a * b) if geometric else (a + b) / 2 for a, b in zip(grid, grid[1:])]
        for value in middles:
            if len(wanted) >= count:
                break
            offer(value)
        grid = sorted(set(grid) | set(wanted) | set(middles))
    return wanted[:count]


def _is_geometric(values: np.ndarray) -> bool:
    """Whether positive values grow by a nearly constant ratio (more than by a constant step)."""
    if values.size < 3 or values.min() <= 0:
        return False
    ratios = np.diff(np.log(values))
    steps = np.diff(values)
    return bool(np.ptp(ratios) / max(abs(ratios.mean()), 1e-12) < np.ptp(steps) / max(abs(steps.mean()), 1e-12))


def too_few_points_note(parameter: str, segment: tuple[float, float], present: Sequence[float],
                        line: Sequence[float], needed: int, side: str) -> str:
    """A note for a segment with fewer points than a model needs, naming the values to measure."""
    low, high = segment
    where = f"{parameter} = {low:g}" if low == high else f"{low:g} ≤ {parameter} ≤ {high:g}"
    missing = needed - len(present)
    proposal = points_to_measure(present, line, min(missing, MAX_PROPOSED), side)
    measured = ", ".join(f"{v:g}" for v in present)
    text = (
        f"segment {where} has only {len(present)} point{'s' if len(present) != 1 else ''} "
        f"({parameter} = {measured}); {needed} are needed for a model of its own"
    )
    if proposal:
        text += f": measure {parameter} = {', '.join(f'{v:g}' for v in proposal)}"
        text += ", …" if missing > MAX_PROPOSED else ""
    return text


# ---------------------------------------------------------------- helpers
def _reduce(values: np.ndarray, measure: str) -> np.ndarray:
    functions = {"mean": np.nanmean, "median": np.nanmedian, "minimum": np.nanmin, "maximum": np.nanmax}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return functions[measure](values, axis=2)


_KEYS: dict[int, list[tuple[Callpath, Metric]]] = {}


def _keys(n_series: int) -> list[tuple[Callpath, Metric]]:
    """Placeholder keys for anonymous series (the window fits are not reported)."""
    if n_series not in _KEYS:
        metric = Metric("window")
        _KEYS[n_series] = [(Callpath(f"s{i}"), metric) for i in range(n_series)]
        if len(_KEYS) > 64:
            _KEYS.pop(next(iter(_KEYS)))
    return _KEYS[n_series]
