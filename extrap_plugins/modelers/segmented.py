"""The ``segmented`` modeler: one model per behaviour where a series changes behaviour.

It wraps another registered modeler (``base=default`` unless told
otherwise).  Every series is first modelled whole; then the change-point
detection of :mod:`extrap_plugins.modelers.segmentation` (Ilyas et al. 2017) runs over sliding
windows, fitted with the same modeler.  A segmented series gets a model per
segment (``Model.segments``); its ``constant`` and ``terms`` are those of the
last segment (the one that extrapolates to larger values).  A segment with
fewer than ``min_points`` values gets a note naming the values to measure,
and is fitted only if it has at least three points (else it is the mean of
its values).

Options (``--option KEY=VALUE``): ``base``, ``window``, ``heterogeneous``,
``threshold``, ``ratio``, ``min_points``, ``max_changes``, ``min_share``; any
other option goes to the wrapped modeler, and an option prefixed ``window_``
(``window_max_terms=2``) to the wrapped modeler for the window fits only.
Windows are fitted with one-term models (``max_terms=1``) when the wrapped
modeler has that option, as in Ilyas et al. 2017; a falling window also tries
the falling factors (``p^-1``), so that strong scaling is not cut.
"""

from __future__ import annotations

import inspect
import itertools
import warnings
from functools import partial
from typing import Any, Sequence

import numpy as np

from extrap_plugins.engine import fit_any
from extrap_plugins.errors import InputError, QualityWarning
from extrap_plugins.experiment import SeriesGroup
from extrap_plugins.formatting import format_value
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.models import Model, Quality, Segment
from extrap_plugins.quality import quality_figures
from extrap_plugins.plugins import PluginHost, get_host
from extrap_plugins.registration import ModelerInfo
from .segmentation import (
    HETEROGENEOUS,
    MAX_CHANGES,
    MIN_POINTS,
    RATIO,
    THRESHOLD,
    WINDOW,
    ChangePoint,
    Detection,
    Settings,
    detect,
    model_rss,
    segment_ranges,
    too_few_points_note,
)

NAME = "segmented"
MIN_FIT_POINTS = 3
"""Fewer points than this in a segment: its model is the mean of its values."""

OPTIONS = {
    "base": "the modeler for the windows and the segments (default: default)",
    "window": f"points per sliding window (default {WINDOW})",
    "heterogeneous": f"window nRSS above which a window mixes behaviours (default {HETEROGENEOUS})",
    "threshold": f"largest window nRSS above which a series is segmented (default {THRESHOLD})",
    "ratio": f"relative nRSS of neighbouring windows that marks a change (default {RATIO:g})",
    "min_points": f"points a segment needs for a model of its own (default {MIN_POINTS})",
    "max_changes": f"most change points per parameter and series (default {MAX_CHANGES})",
    "min_share": "share of the lines along a parameter that must show a change (default 0.5)",
    "window_*": "an option for the wrapped modeler in the window fits only "
                "(default window_max_terms=1 where the modeler has max_terms)",
}


@hookimpl
def extrap_modelers() -> list[ModelerInfo]:
    return [
        ModelerInfo(
            name=NAME,
            factory=SegmentedModeler,
            description="finds where behaviour changes (sliding-window nRSS, Ilyas et al. 2017) and models "
            "each segment with another modeler",
            options=OPTIONS,
        )
    ]


class SegmentedModeler:
    """Segmented models around any batched or scikit-learn style modeler.

    Parameters
    ----------
    base : str
        Name of the registered modeler used for windows and segments.
    window, heterogeneous, threshold, ratio, min_points, max_changes, min_share
        See :class:`extrap_plugins.modelers.segmentation.Settings`.
    parameters : tuple of str
        The experiment's parameter names (passed by the host).
    host : PluginHost
        The host this modeler was built by (passed by it): ``base`` is looked up there.
    **options
        Options of the wrapped modeler; ``window_``-prefixed ones only for the window fits.
    """

    def __init__(self, base: str = "default", window: int = WINDOW, heterogeneous: float = HETEROGENEOUS,
                 threshold: float = THRESHOLD, ratio: float = RATIO, min_points: int = MIN_POINTS,
                 max_changes: int = MAX_CHANGES, min_share: float = 0.5, parameters: Sequence[str] = (),
                 host: PluginHost | None = None, **options: Any):
        if base == NAME:
            raise ValueError("base: the segmented modeler cannot wrap itself; choose e.g. base=default")
        self.base = str(base)
        self.settings = Settings(
            window=_number(window, "window", int), heterogeneous=_number(heterogeneous, "heterogeneous"),
            threshold=_number(threshold, "threshold"), ratio=_number(ratio, "ratio"),
            min_points=_number(min_points, "min_points", int), max_changes=_number(max_changes, "max_changes", int),
            min_share=_number(min_share, "min_share"),
        )
        segment_options = {k: v for k, v in options.items() if not k.startswith("window_")}
        if host is None:
            raise TypeError("SegmentedModeler is built by a PluginHost (host.build_modeler('segmented', ...)), "
                            "which passes itself as host")
        known = host.modeler_options(self.base)
        unknown = [k for k in options if k.startswith("window_") and known is not None
                   and k[len("window_"):] not in known]
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: modeler {self.base!r} has no option "
                             f"{', '.join(repr(k[len('window_'):]) for k in unknown)}; its options are: "
                             f"{', '.join(known) or 'none'}")
        window_options = {**segment_options, **window_defaults(host, self.base),
                          **{k[len("window_"):]: v for k, v in options.items() if k.startswith("window_")}}
        self.inner = host.build_modeler(self.base, segment_options, tuple(parameters))
        try:  # the segment options passed above: a value refused now is a window_ option's
            self.window_inner = (host.build_modeler(self.base, window_options, tuple(parameters))
                                 if window_options != segment_options else self.inner)
        except InputError as error:
            given = [k for k in options if k.startswith("window_")]
            if not given:
                raise
            raise ValueError(f"{', '.join(given)}: {error}") from None
        # Falling windows (strong scaling, 5 + 1000/p) have no one-term fit without p^-i: every window would
        # look mixed and a smooth series be cut.  They also try the falling factors, unless the user chose.
        self.falling_inner = None
        if window_options.get("negative_exponents") is False and not any(
                k in options for k in ("negative_exponents", "window_negative_exponents")):
            self.falling_inner = host.build_modeler(self.base, {**window_options, "negative_exponents": True},
                                                    tuple(parameters))

    def __repr__(self) -> str:
        return f"SegmentedModeler(base={self.base!r}, settings={self.settings!r})"

    # ------------------------------------------------------------------ API
    def detect(self, group: SeriesGroup, *, measure: str = "mean") -> list[Detection]:
        """The change points of every series of ``group`` (no segment models)."""
        window_fit = partial(fit_windows, self.window_inner, self.falling_inner, measure=measure, name=self.base)
        return detect(group, window_fit, self.settings, measure)

    def fit_group(self, group: SeriesGroup, *, measure: str = "mean") -> list[Model]:
        """One model per series; segmented series get ``segments``.

        Returns
        -------
        list of Model, one per series of ``group``, in order.
        """
        detections = self.detect(group, measure=measure)
        segmented = [s for s, d in enumerate(detections) if d.segmented]
        plain = np.array([s for s, d in enumerate(detections) if not d.segmented], dtype=np.int64)
        models: list[Model | None] = [None] * len(group)
        if plain.size:  # one behaviour: one model over all points
            part = SeriesGroup(group.parameters, group.points, [group.keys[s] for s in plain], group.values[plain])
            for s, model in zip(plain, fit_any(self.inner, part, measure, self.base)):
                models[s] = model
        by_changes: dict[tuple[ChangePoint, ...], list[int]] = {}
        for s in sorted(segmented):
            by_changes.setdefault(_placement(detections[s].changes), []).append(s)
        for changes, members in by_changes.items():
            for s, model in zip(members, self._fit_segments(group, members, changes, measure)):
                models[s] = model
        for s in plain:
            detection = detections[s]
            if detection.notes:
                models[s].warnings = tuple(models[s].warnings) + tuple(detection.notes)
                for note in detection.notes:
                    warnings.warn(QualityWarning(note, models[s].callpath, models[s].metric), stacklevel=2)
        for model in models:
            model.modeler = NAME
        return models  # type: ignore[return-value]

    # ------------------------------------------------------------- private
    def _fit_segments(self, group: SeriesGroup, members: list[int], changes: tuple[ChangePoint, ...],
                      measure: str) -> list[Model]:
        """Models for series that share the same change points, one segment fit at a time."""
        names = [p.name for p in group.parameters]
        X = np.asarray(group.points, dtype=np.float64)
        sub = SeriesGroup(group.parameters, X, [group.keys[s] for s in members], group.values[members])
        Y = sub.reduce(measure)
        per_parameter = []
        for param, name in enumerate(names):
            own = [c for c in changes if c.parameter == name]
            if own:
                per_parameter.append([(name, span) for span in segment_ranges(X[:, param], own)])
        pieces = list(itertools.product(*per_parameter))
        constants = np.zeros((len(members), len(pieces)))
        terms: list[list[tuple]] = [[() for _ in pieces] for _ in members]
        notes: list[list[str]] = [[] for _ in members]
        spreads: list[list[tuple]] = [[() for _ in pieces] for _ in members]  # the pieces' model-choice spreads
        for k, piece in enumerate(pieces):
            inside = np.ones(X.shape[0], dtype=bool)
            for name, (low, high) in piece:
                column = X[:, names.index(name)]
                inside &= (column >= low) & (column <= high)
            label = _label(piece)
            note = self._size_note(piece, X, names, k, len(pieces), inside)
            if inside.sum() >= MIN_FIT_POINTS:
                part = SeriesGroup(group.parameters, X[inside], sub.keys, sub.values[:, inside])
                with warnings.catch_warnings(record=True):  # its notes travel in model.warnings
                    warnings.simplefilter("always")
                    fitted = fit_any(self.inner, part, measure, self.base)
                for i, model in enumerate(fitted):
                    constants[i, k] = model.constant
                    terms[i][k] = tuple(model.terms)
                    spreads[i][k] = tuple(model.choice_spread)
                    notes[i].extend(f"segment {label}: {text}" for text in model.warnings
                                    if not (note and _says_too_few(text, piece)))
            else:
                constants[:, k] = Y[:, inside].mean(axis=1)
            if note:
                for i in range(len(members)):
                    notes[i].append(note)
        models, predicted = [], np.empty_like(Y)
        for i, s in enumerate(members):
            segments = tuple(
                Segment(range={name: (float(lo), float(hi)) for name, (lo, hi) in piece},
                        constant=float(constants[i, k]), terms=terms[i][k])
                for k, piece in enumerate(pieces)
            )
            callpath, metric = group.keys[s]
            model = Model(
                callpath=callpath.name, metric=metric.name, parameters=tuple(names),
                constant=segments[-1].constant, terms=segments[-1].terms, points=int(X.shape[0]),
                modeler=NAME, segments=segments, warnings=tuple(notes[i]),
                choice_spread=spreads[i][-1],  # the last segment's, the one beyond the measurements
            )
            predicted[i] = model.predict(X)
            for text in notes[i]:
                warnings.warn(QualityWarning(text, callpath.name, metric.name), stacklevel=3)
            models.append(model)
        n_terms = [sum(len(seg.terms) for seg in m.segments) + len(m.segments) - 1 for m in models]
        figures = quality_figures(Y, predicted, np.array(n_terms))
        for i, model in enumerate(models):
            model.quality = Quality(**{key: float(value[i]) for key, value in figures.items()})
        return models

    def _size_note(self, piece, X, names, index, count, inside) -> str:
        """A note when a segment has too few distinct values along a segmented parameter."""
        for name, (low, high) in piece:
            column = X[:, names.index(name)]
            present = np.unique(column[inside])
            if present.size >= self.settings.min_points:
                continue
            line = np.unique(column)
            side = "inside"
            if low == line.min() and high < line.max():
                side = "below"
            elif high == line.max() and low > line.min():
                side = "above"
            return too_few_points_note(name, (low, high), present.tolist(), line, self.settings.min_points, side)
        return ""


def detect_changes(experiment, base: str = "default", *, measure: str = "mean", metrics=(), callpaths=(),
                   host: PluginHost | None = None, **options) -> list[Detection]:
    """The change points of every series of an experiment, found with windows fitted by ``base``.

    ``options`` are the segmented modeler's (``threshold=...``) and ``base``'s;
    ``base`` is looked up in ``host`` (default: the process-wide host).
    Returns one :class:`~extrap_plugins.modelers.segmentation.Detection` per series, in
    the experiment's call path then metric order.

    Examples
    --------
    >>> import numpy as np, extrap_plugins
    >>> p = np.arange(1.0, 11.0)
    >>> e = extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time",
    ...     coordinates=p[:, None], value=np.where(p <= 6, p**2, 30 + p))
    >>> [str(c) for c in detect_changes(e)[0].changes]
    ['change at p = 6']
    """
    host = host or get_host()
    modeler = host.build_modeler(NAME, {"base": base, **options}, tuple(experiment.parameter_names))
    selected = experiment.select(metrics=metrics, callpaths=callpaths)
    found = {}
    for group in selected.series_groups():
        for detection in modeler.detect(group, measure=measure):
            found[(detection.callpath, detection.metric)] = detection
    return [found[(c.name, m.name)] for c in experiment.callpaths for m in experiment.metrics
            if (c.name, m.name) in found]


# ------------------------------------------------------------------ helpers
def window_defaults(host: PluginHost, name: str) -> dict:
    """One-term window models where the modeler offers ``max_terms`` (Ilyas et al. score windows with
    Extra-P's one-term hypotheses; the nRSS thresholds assume them): no falling factors, and the
    best cross-validated fit rather than the evidence criterion's consensus, where the modeler offers
    those options."""
    try:
        signature = inspect.signature(host.modeler(name).factory)
    except (TypeError, ValueError):
        return {}
    defaults = {"max_terms": 1, "negative_exponents": False, "selection": "cv"}
    return {k: v for k, v in defaults.items() if k in signature.parameters}


def fit_quietly(instance, group: SeriesGroup, *, measure: str, name: str) -> list[Model]:
    """:func:`fit_any` without warnings: notes about window fits are of no use to the user."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit_any(instance, group, measure, name)


def fit_windows(instance, falling, group: SeriesGroup, *, measure: str, name: str) -> list[Model]:
    """Window models: :func:`fit_quietly` with ``instance``; where the window falls (its last value below
    its first) and ``falling`` is given, also with ``falling`` (the falling factors), keeping the better fit."""
    models = list(fit_quietly(instance, group, measure=measure, name=name))
    if falling is None:
        return models
    Y = group.reduce(measure)
    down = np.flatnonzero(Y[:, -1] < Y[:, 0])
    if down.size == 0:
        return models
    part = SeriesGroup(group.parameters, group.points, [group.keys[s] for s in down], group.values[down])
    X = np.asarray(group.points, dtype=np.float64)
    before = model_rss([models[s] for s in down], X, Y[down])
    refitted = fit_quietly(falling, part, measure=measure, name=name)
    after = model_rss(refitted, X, Y[down])
    for s, model, old, new in zip(down, refitted, before, after):
        if new < old:
            models[s] = model
    return models


def _placement(changes: Sequence[ChangePoint]) -> tuple[ChangePoint, ...]:
    """The change points without their line counts, so that series with the same cuts group together."""
    return tuple(ChangePoint(c.parameter, c.before, c.after) for c in changes)


def _says_too_few(text: str, piece) -> bool:
    """Whether a wrapped modeler's note says that a segmented parameter has too few values in the piece,
    which the segment's own note (naming the values to measure) already says."""
    return any(text.startswith(f"parameter {name} has only ") for name, _ in piece)


def _label(piece) -> str:
    return ", ".join(f"{format_value(lo)} ≤ {name} ≤ {format_value(hi)}" if lo != hi else f"{name} = {format_value(lo)}"
                     for name, (lo, hi) in piece)


def _number(value, name: str, kind=float):
    """Option values arrive as int, float or text; convert with a message that says what was expected."""
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError):  # int(float("inf")) overflows
        raise ValueError(f"{name}: expected a {'whole ' if kind is int else ''}number, got {value!r}") from None
    if kind is int and number != float(value):
        raise ValueError(f"{name}: expected a whole number, got {value!r}")
    return number
