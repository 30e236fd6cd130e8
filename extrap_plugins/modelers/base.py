"""What the built-in PMNF modelers share: options, input checks, models.

:class:`PMNFModeler` implements the batched modeler interface
(``fit_group(group, *, measure) -> list[Model]``, see
:class:`~extrap_plugins.registration.ModelerInfo`).  It validates the data of
a group, splits off series with missing values, finds the active parameters
and then hands the numerical work to two swappable stages:

* :meth:`PMNFModeler._single` models one parameter (all series at once);
* :meth:`PMNFModeler._multi` models several parameters, by default with the
  hierarchical search (lines -> single-parameter models -> combinations).

Subclasses replace one stage: ``golden`` the single-parameter search,
``exhaustive`` the multi-parameter one.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from extrap_plugins.modelers import eq3, evidence, regression
from extrap_plugins.errors import QualityWarning
from extrap_plugins.experiment import MEASURES, OUTLYING_FACTOR, OUTLYING_SPREAD, SeriesGroup
from extrap_plugins.formatting import format_point, format_share, format_value
from extrap_plugins.modelers.hypotheses import (
    DEFAULT_EXPONENTS,
    DEFAULT_LOG_EXPONENTS,
    building_blocks,
    evaluate_blocks,
    parse_exponents,
    usable_blocks,
)
from extrap_plugins.models import Factor, Model, Quality, Term
from extrap_plugins.options import parse_bool, parse_fraction, parse_int
from extrap_plugins.modelers.projection import parameter_line
from extrap_plugins.quality import quality_figures

from .combine import (
    MultiFit,
    additive_parameters,
    combine,
    combined_spread,
    multi_values,
    withhold_flat_runner_up,
)
from .search import SingleFit, evidence_or_cv, full_search, single_values

MIN_VALUES = 5
"""Distinct values a parameter needs for a trustworthy model (Calotoiu et al. 2016, Section II-B)."""

SPARE_TERM = 1
"""Product terms the evidence selection's combination of parameters may hold beyond ``max_terms``: an
exponent between the grid's values takes two terms of its parameter (``p^(2/3) + p^(3/4)`` for ``p^0.71``)
and the other parameters still need theirs (Extra-P's combination also uses every term of the
single-parameter models).  Measured (``benchmarks/robustness.py``, 200 functions per row, 4x): 2p outside
0 % within 10 % 77.0 -> 95.5 %, median error 4.74 -> 1.23 %; outside 2 / 5 % 60 -> 63 / 47 -> 50 %;
inside and falling rows within 1.5 points; two-parameter speed 4,697 -> 4,422 models/s."""

OPTIONS = {
    "exponents": "polynomial exponents I, e.g. '0,1/4,1/3,1/2,2/3,3/4,1,4/3,3/2,2,3' (default: Extra-P's 20)",
    "log_exponents": "logarithm exponents J, e.g. '0,1,2' (default)",
    "max_terms": "most terms besides the constant in a single-parameter model (default 2); "
    "multi-parameter models get max(max_terms, number of parameters)",
    "negative_exponents": "also try the falling factors of strong scaling: p^-i, log2(p)/p, 1/log2(p) "
    "(default true)",
    "selection": "how the model is chosen: evidence (default: plausibility, an information criterion using the "
    "repetitions' variance, and the consensus of the hypotheses the data cannot tell apart) or cv (leave-one-out "
    "cross-validation with the noise test and the simplest-exponent preference, as before version 0.5)",
    "criterion": "how hypotheses are compared: " + ", ".join(regression.CRITERIA) + " (default relative: "
    "leave-one-out error relative to the measured value)",
    "improvement": "how much lower (as a fraction) a model with more terms must score to be preferred "
    "to a simpler one (default 0.5)",
    "weighting": "least squares of the multi-parameter combination: relative (default; weights 1/|y|, for noise "
    "proportional to the value and values spanning orders of magnitude) or none",
    "measure": "which repetition statistic to fit: " + ", ".join(MEASURES) + " (default: the host's, mean)",
    "outlying_points": "leave out of the fit a point of one or two runs that lies 3x or more off its neighbours "
    "and off the model of the other points (a slow node, a timer glitch), with a warning naming it (default true)",
}


EXACT = 1e-6
"""Relative variance of a value (a standard deviation of 0.1 %) at or below which data count as exact:
their model-choice spread is floored by a second opinion (:meth:`PMNFModeler._second_opinion`,
:meth:`PMNFModeler._joint_opinion`)."""

AGREE = 1e4
"""The second opinion counts where its relative misfit of the points (mean square per degree of freedom) is at
most this multiple of the chosen model's, an rms misfit 100 times larger: on exact data both are tiny (1e-14 to
1e-6), and a one-term fit of a function the grid describes with two terms is off by far more.  Measured
(robustness benchmark, 0 % noise, 4x, 200 functions per row): at 100 the floor held back where the chosen
model's misfit was below ~1e-12 and coverage was 89.1 %; at 1e4 90.2 % (the lines' opinions alone; with the
joint opinion of multi-parameter models, :meth:`PMNFModeler._joint_opinion`, 94.0 %)."""


@dataclass(frozen=True)
class Config:
    """Validated options."""

    blocks: np.ndarray
    max_terms: int
    criterion: str
    improvement: float
    weighting: str
    measure: str | None
    selection: str = "evidence"
    outlying_points: bool = True
    interior: bool = True
    """Whether the search is of a model of one parameter, not of a line of a multi-parameter one.  A model keeps
    positive data positive between the measured values too (:func:`~extrap_plugins.modelers.evidence.interior`),
    and judges single runs by their own residuals (:data:`~extrap_plugins.modelers.evidence.EXACT`).  A line does
    neither: the combination refits its terms and checks between the points itself (a noise kernel of RELeARN lost
    its line's term there: 8.7 → 49.5 % off at the evaluation point)."""


@dataclass
class Result:
    """A batch of fitted series in product-term form (see :class:`MultiFit`)."""

    terms: np.ndarray  # (n_series, n_slots, n_params) block index or -1
    coefficients: np.ndarray  # (n_series, n_slots + 1)
    n_terms: np.ndarray  # (n_series,)
    spread: np.ndarray | None = None  # (n_series, len(evidence.REFERENCE)): model-choice spread, log scale
    lines: list | None = None  # multi-parameter: (param, Line, projected values, SingleFit) of each parameter








class PMNFModeler:
    """Base of the built-in modelers: PMNF hypotheses, least squares, cross-validation.

    Parameters
    ----------
    exponents : str or sequence of numbers
        The polynomial exponent set I (``"0,1/3,1/2,1,2"`` or ``[0, 0.5, 1]``).
    log_exponents : str or sequence of numbers
        The logarithm exponent set J.
    max_terms : int
        Most terms besides the constant in single-parameter models (1..4).
    negative_exponents : bool
        Add the falling factors of strong scaling (default; see
        :func:`~extrap_plugins.modelers.hypotheses.building_blocks`).
    criterion : str
        One of :data:`extrap_plugins.modelers.regression.CRITERIA`.
    improvement : float
        In [0, 1): a model with more terms must score below ``1 - improvement``
        times the simpler one's to replace it.
    weighting : {"relative", "none"}
        Least squares of the multi-parameter combination step: relative
        errors (weights ``1 / |y|``) or plain.
    measure : str, optional
        Fit this statistic of the repetitions instead of the one the host asks for.
    selection : {"evidence", "cv"}
        How single-parameter models are chosen: :mod:`~extrap_plugins.modelers.evidence`
        (default) or leave-one-out cross-validation (``criterion``, ``improvement``).
    """

    name = "pmnf"
    second_opinion = True
    """Exact data get the refined one-term fit as a second opinion on the spread (:meth:`_second_opinion`)."""
    whole_search = True
    """Whether a poor two-parameter model that leaves a parameter out gets the whole search (:meth:`_whole_search`)."""

    def __init__(
        self,
        exponents=DEFAULT_EXPONENTS,
        log_exponents=DEFAULT_LOG_EXPONENTS,
        max_terms=2,
        negative_exponents=True,
        criterion="relative",
        improvement=0.5,
        weighting="relative",
        measure=None,
        selection="evidence",
        outlying_points=True,
    ):
        self.exponents = exponents
        self.log_exponents = log_exponents
        self.max_terms = max_terms
        self.negative_exponents = negative_exponents
        self.criterion = criterion
        self.improvement = improvement
        self.weighting = weighting
        self.measure = measure
        self.selection = selection
        self.outlying_points = outlying_points
        self._config()  # validate now, so bad options fail before any work

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(exponents={self.exponents!r}, log_exponents={self.log_exponents!r}, "
            f"max_terms={self.max_terms!r}, negative_exponents={self.negative_exponents!r}, "
            f"criterion={self.criterion!r}, improvement={self.improvement!r}, weighting={self.weighting!r}, "
            f"measure={self.measure!r}, selection={self.selection!r}, outlying_points={self.outlying_points!r})"
        )

    def _config(self) -> Config:
        exponents = parse_exponents(self.exponents, "exponents")
        log_exponents = parse_exponents(self.log_exponents, "log_exponents")
        negative = parse_bool(self.negative_exponents, "negative_exponents")
        blocks = building_blocks(exponents, log_exponents, negative)
        if blocks.shape[0] == 0:
            raise ValueError(
                f"exponents and log_exponents: expected at least one non-zero exponent, "
                f"got {self.exponents!r} and {self.log_exponents!r}"
            )
        criterion = str(self.criterion).strip().lower()
        if criterion not in regression.CRITERIA:
            raise ValueError(
                f"criterion: expected one of {', '.join(regression.CRITERIA)}, got {self.criterion!r}"
            )
        weighting = str(self.weighting).strip().lower()
        if weighting not in ("relative", "none"):
            raise ValueError(f"weighting: expected relative or none, got {self.weighting!r}")
        selection = str(self.selection).strip().lower()
        if selection not in ("evidence", "cv"):
            raise ValueError(f"selection: expected evidence or cv, got {self.selection!r}")
        measure = None
        if self.measure not in (None, ""):
            measure = str(self.measure).strip().lower()
            if measure not in MEASURES:
                raise ValueError(f"measure: expected one of {', '.join(MEASURES)}, got {self.measure!r}")
        return Config(
            blocks=blocks,
            max_terms=parse_int(self.max_terms, "max_terms", 1, 4),
            criterion=criterion,
            improvement=parse_fraction(self.improvement, "improvement"),
            weighting=weighting,
            measure=measure,
            selection=selection,
            outlying_points=parse_bool(self.outlying_points, "outlying_points"),
        )

    # ------------------------------------------------------------------ API
    def fit_group(self, group: SeriesGroup, *, measure: str = "mean") -> list[Model]:
        """One model per series of ``group``, in order.

        Parameters
        ----------
        group : SeriesGroup
            Series sharing the same points; values of shape (n_series, n_points, n_reps).
        measure : str
            Statistic of the repetitions to fit (overridden by the ``measure`` option).

        Returns
        -------
        list of Model, length n_series
        """
        config = self._config()
        measure = config.measure or measure
        names = tuple(p.name for p in group.parameters)
        if len(group) == 0:
            return []
        X = np.asarray(group.points, dtype=np.float64).reshape(-1, len(names))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            Y = group.reduce(measure)
            scale = binary_scale(Y)
            values = group.kept(measure)  # (the mean's outlying repetitions left out, as from Y)
            if (scale != 1.0).any():  # exact: a power of two scales the values and their statistic alike
                values, Y = values / scale[:, None, None], Y / scale[:, None]
            V = repetition_variance(values, measure)
            counts = np.sum(~np.isnan(values), axis=2)
        keys = [(c.name, m.name) for c, m in group.keys]
        models = self._fit_patterns(X, Y, V, counts, keys, names, config)
        if config.outlying_points:
            self._leave_out_points(models, X, Y, V, counts, keys, names, config)
        models = [model if scale[s] == 1.0 else model.scaled(float(scale[s])) for s, model in enumerate(models)]
        for model in models:
            for note in model.warnings:
                warnings.warn(QualityWarning(note, model.callpath, model.metric), stacklevel=2)
        return models  # type: ignore[return-value]

    def _fit_patterns(self, X, Y, V, counts, keys, names, config: Config, left_out=None) -> list[Model]:
        """A model of each series of ``Y`` (n_series, n_points) on its points with a finite value, the series
        with the same such points together; ``left_out`` (the shape of ``Y``): points NaN in ``Y`` that
        :meth:`_leave_out_points` left out, not said to have no value."""
        finite = np.isfinite(Y)
        left_out = np.zeros(Y.shape, dtype=bool) if left_out is None else left_out
        models: list[Model | None] = [None] * len(keys)
        patterns, pattern_of = np.unique(np.hstack([finite, left_out]), axis=0, return_inverse=True)
        pattern_of = pattern_of.reshape(-1)
        for which, row in enumerate(patterns):
            pattern, left = row[:Y.shape[1]], row[Y.shape[1]:]
            members = np.flatnonzero(pattern_of == which)
            member_keys = [keys[s] for s in members]
            notes: list[str] = []
            n_missing = int((~pattern & ~left).sum())
            if n_missing:
                notes.append(
                    f"{n_missing} of {pattern.size} points have no finite value (NaN or infinite) "
                    f"and were left out"
                )
            if not pattern.any():  # (the note of points left out would say the same)
                for s, key in zip(members, member_keys):
                    models[s] = Model.missing(*key, names, self.name)
                continue
            fitted = self._fit_points(
                X[pattern], Y[members][:, pattern], V[members][:, pattern], counts[members][:, pattern],
                member_keys, names, config, notes,
            )
            for s, model in zip(members, fitted):
                models[s] = model
        return models  # type: ignore[return-value]

    def _leave_out_points(self, models: list[Model], X, Y, V, counts, keys, names, config: Config) -> None:
        """Refit without the points of one or two runs that lie far off their neighbours (:func:`off_neighbours`),
        and keep the refit (in place in ``models``, with a note naming the points) where each point left out is
        far off its model too (:func:`off_the_model`); elsewhere the first model stays.

        The rule that leaves a repetition out of the mean (:func:`~extrap_plugins.experiment.outlying`) needs three
        of them; a single run that is off bends the model: in Extra-P's ``talpas_3.txt`` (truth
        ``x^3·y^2 + z``, 5 × 5 × 5 points, one run each) two values at ``x=16, y=10`` are 10x low, and the model
        was ``4164 − 79.34·x^3 + …`` (SMAPE 18 %), with them left out ``1·z + 1·x^3·y^2``.  The first model is too
        bent to tell them (its residuals are up to 19x at other points), so the candidates come from the values
        themselves, the refit confirms them."""
        off = off_neighbours(X, Y, counts)
        who = np.flatnonzero(off.any(axis=1))
        if who.size == 0:
            return
        left = off[who]
        refit = self._fit_patterns(X, np.where(left, np.nan, Y[who]), V[who], counts[who], [keys[s] for s in who],
                                   names, config, left)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            predicted = np.array([model.predict(X) for model in refit]).reshape(left.shape)
        for s, model, points, sure in zip(who, refit, left, off_the_model(Y[who], predicted, left)):
            if sure:
                model.warnings = (*model.warnings, left_out_note(X[points], names))
                models[s] = model

    # ------------------------------------------------------------- pipeline
    def _fit_points(self, X, Y, V, counts, keys, names, config: Config, notes: list[str]) -> list[Model]:
        """Model series with finite values at the same points ``X``."""
        n_series, n_points = Y.shape
        n_params = X.shape[1]
        notes = list(notes)
        active, usable, few = [], [], []
        for param, name in enumerate(names):
            values = np.unique(X[:, param])
            if values.size == 1:
                notes.append(
                    SINGLE_VALUE.format(name=name, value=format_value(values[0])) + " it cannot appear in the model"
                )
                usable.append(np.zeros(config.blocks.shape[0], dtype=bool))
                continue
            active.append(param)
            if values.size < MIN_VALUES:  # one note for all of them, where the first one's was
                few.append((name, values.size, len(notes)))
            mask = usable_blocks(values, config.blocks)
            has_logs = config.blocks[:, 1] != 0
            if values.min() < 1 and has_logs.any():
                notes.append(
                    f"parameter {name} has values below 1 (smallest {values.min():g}): "
                    f"no logarithmic terms for it"
                )
            lost = _powers_lost(values, config.blocks)
            if lost:
                notes.append(f"parameter {name} has {lost}")
            usable.append(mask)
        _add_few_values_note(notes, few)
        for a, b in confounded(X, active):
            active.remove(b)
            notes.append(
                f"parameters {names[a]} and {names[b]} change together at every point (each value of one "
                f"comes with a single value of the other): their effects cannot be told apart, so "
                f"{names[b]} is left out and {names[a]} stands for both"
            )
        per_series = [list() for _ in range(n_series)]
        all_zero = np.all(Y == 0, axis=1)
        for s in np.flatnonzero(all_zero):
            per_series[s].append("all values are zero")
        single = None
        if not active:
            result = self._constant(Y)
        elif len(active) == 1:
            param = active[0]
            noise = regression.Noise.estimate(Y, V, counts)
            single = self._single(X[:, param], Y, noise, config.blocks, usable[param], config)
            self._second_opinion(single, X[:, param], Y, noise, config)
            result = _from_single(single, param, n_params)
        else:
            result = self._multi(X, Y, (V, counts), active, usable, config, notes, names)
        constant, predicted = self._finish(result, X, Y, config)
        if self.whole_search and len(active) == 2 and result.terms.shape[1] >= 2:
            constant, predicted = self._whole_search(result, X, Y, V, counts, active, usable, config, constant,
                                                     predicted)
        worse = _worse_than_the_mean(Y, predicted, result.n_terms)
        # values of one parameter that clearly trend are said to (_selection_notes), not to jump or scatter: a line
        # falling towards 0, all of whose fits are ruled out, was said to "jump or scatter"
        trending = _trends(single, result, X, active, Y) if worse.any() else np.zeros(n_series, dtype=bool)
        if worse.any():
            for s in np.flatnonzero(worse & ~trending):
                per_series[s].append(WORSE_THAN_THE_MEAN)
            result.coefficients[worse] = 0.0
            result.coefficients[worse, 0] = Y[worse].mean(axis=1)
            result.n_terms[worse] = 0
            result.terms[worse] = -1
            constant, predicted = self._finish(result, X, Y, config)
        figures = quality_figures(Y, predicted, result.n_terms)
        if single is not None:
            _selection_notes(single, X[:, active[0]], Y, result.n_terms, figures["smape"], names[active[0]],
                             per_series, (worse & ~trending) | all_zero)
        if result.lines:
            _line_trend_notes(result, X, names, per_series, (worse & ~trending) | all_zero)
        slots = result.coefficients.shape[1] - 1
        if slots >= 2:
            used = np.arange(slots)[None, :] < result.n_terms[:, None]
            c = result.coefficients[:, 1:]
            mixed = np.any(used & (c > 0), axis=1) & np.any(used & (c < 0), axis=1)
            for s in np.flatnonzero(mixed & ~all_zero):
                per_series[s].append(
                    "terms of opposite sign: they cancel where measured and the data demand them, but the "
                    "extrapolation depends on which one wins beyond the measurements"
                )
        return self._build(keys, names, result, constant, figures, n_points, config, notes, per_series)

    # (the spread of the hypotheses' predictions travels with each model: Model.choice_spread)

    def _whole_search(self, result: Result, X, Y, V, counts, active, usable, config: Config, constant,
                      predicted):
        """Where a two-parameter model leaves a parameter out and explains less than :data:`WHOLE_SEARCH_R2` of
        the measured variation (adjusted R²), the whole search space of Eq. 3 on every point
        (:func:`~extrap_plugins.modelers.eq3.search`, the ``exhaustive`` modeler's).  The hierarchical search sees
        each parameter on its line only, and a term that vanishes there is lost: ``n·log2(p)`` or ``8·n − 8·n/p``
        (the bytes a broadcast receives) whose line of ``n`` lies at p = 1 became a constant or the mean, 36x too
        low at p = 32.

        Its model replaces the hierarchical one where it explains at least :data:`WHOLE_SEARCH_R2` and leaves at
        most :data:`WHOLE_SEARCH_GAIN` of what that one left unexplained, and is not below 0 at the points of
        data never below 0, there or at 2, 4, 10 and 100 times the largest measured point (all parameters scaled
        and each alone, as :mod:`~extrap_plugins.modelers.evidence` judges).  Where the hierarchical model is the
        mean, the gain alone decides (the model must explain three quarters of the variation): the mean says
        nothing varies beyond the noise, and a model that explains most of the variation refutes it.  A step of
        single runs is such a case: RELeARN's ``Update global tree`` rises 8x between p = 64 and 128 and stays
        there; each line's terms combine into nothing plausible, and the mean of both plateaus was 40 % off at
        p = 512 where the whole search's saturating model (77–88 % explained) is within 6 %.  On noise about a
        constant the whole search explains at most 57 % (200 series of 24 points, 5–60 % noise), so the mean
        stays.  Returns the constants and the predictions at the points."""
        a, b = active
        if int(usable[a].sum()) * int(usable[b].sum()) > WHOLE_SEARCH_PAIRS or X.shape[0] > WHOLE_SEARCH_POINTS:
            return constant, predicted  # refining's thousands of exponents, or a search too large to hold
        ar2 = quality_figures(Y, predicted, result.n_terms)["ar2"]
        slot_used = np.arange(result.terms.shape[1])[None, :] < result.n_terms[:, None]
        takes_both = np.all(np.any((result.terms[:, :, active] >= 0) & slot_used[:, :, None], axis=1), axis=1)
        who = np.flatnonzero(np.isfinite(ar2) & (ar2 < WHOLE_SEARCH_R2) & ~takes_both)
        if who.size == 0:
            return constant, predicted
        noise = regression.Noise.estimate(Y[who], V[who], counts[who])
        found = Result(*eq3.search(X, Y[who], noise, active, usable, config.blocks, result.terms.shape[1],
                                   config.criterion, config.improvement))  # as many slots: the caller has 2 or more
        values = multi_values(found, X, config.blocks)
        theirs = quality_figures(Y[who], values, found.n_terms)["ar2"]
        sign = np.all(values > 0, axis=1) | ~np.all(Y[who] > 0, axis=1)
        least = -1e-9 * np.max(np.abs(Y[who]), axis=1)
        sign &= np.all(values >= least[:, None], axis=1) | ~np.all(Y[who] >= 0, axis=1)
        # nor below 0 beyond them, where the hierarchical search's models are judged too (evidence.REFERENCE)
        top = X.max(axis=0)
        beyond = [top * d for d in evidence.REFERENCE]
        for param in active:
            for d in evidence.REFERENCE:
                point = top.copy()
                point[param] *= d
                beyond.append(point)
        ahead = multi_values(found, np.asarray(beyond), config.blocks)
        sign &= np.all(ahead > 0, axis=1) | ~np.all(Y[who] > 0, axis=1)
        flat = result.n_terms[who] == 0  # the mean says nothing varies: a model that explains most of it refutes it
        good = ((theirs >= WHOLE_SEARCH_R2) | flat) & (1.0 - theirs <= WHOLE_SEARCH_GAIN * (1.0 - ar2[who])) & sign
        if not good.any():
            return constant, predicted
        taken = who[good]
        result.terms[taken] = found.terms[good]
        result.coefficients[taken] = found.coefficients[good]
        result.n_terms[taken] = found.n_terms[good]
        return self._finish(result, X, Y, config)

    def _build(self, keys, names, result: Result, constant, figures, n_points, config, notes,
               per_series) -> list[Model]:
        """Model objects; the Python loop over series is kept to object creation only."""
        n_params = len(names)
        factors = [Factor(float(i), float(j)) for i, j in config.blocks]
        # One factor mapping per distinct product term, shared by the (frozen) Terms that use it;
        # plain dicts so that models pickle and deep-copy.
        shared: dict[tuple, dict] = {}

        def factor_map(row: tuple) -> dict:
            mapping = shared.get(row)
            if mapping is None:
                mapping = shared[row] = {names[param]: factors[b] for param, b in enumerate(row) if b >= 0}
            return mapping

        slots = result.terms.shape[1]
        term_rows = [tuple(map(tuple, rows)) for rows in result.terms.reshape(len(keys), slots, n_params).tolist()]
        coefficients = result.coefficients.tolist()
        n_terms = result.n_terms.tolist()
        qualities = zip(figures["rss"].tolist(), figures["ar2"].tolist(), figures["smape"].tolist(),
                        figures["re"].tolist())
        common = tuple(notes)
        spreads = [()] * len(keys)
        if result.spread is not None:
            spreads = [tuple(row) for row in np.where(np.isfinite(result.spread), result.spread, np.nan).tolist()]
        models = []
        for s, ((callpath, metric), quality) in enumerate(zip(keys, qualities)):
            model_terms = tuple(
                Term(coefficients[s][1 + t], factor_map(term_rows[s][t])) for t in range(n_terms[s])
            )
            models.append(
                Model(
                    callpath=callpath,
                    metric=metric,
                    parameters=names,
                    constant=float(constant[s]),
                    terms=model_terms,
                    quality=Quality(*quality),
                    points=int(n_points),
                    modeler=self.name,
                    warnings=common + tuple(per_series[s]) if per_series[s] else common,
                    choice_spread=spreads[s],
                )
            )
        return models

    def _constant(self, Y) -> Result:
        n_series = Y.shape[0]
        return Result(
            terms=np.zeros((n_series, 0, 0), dtype=np.int64),
            coefficients=np.mean(Y, axis=1, keepdims=True),
            n_terms=np.zeros(n_series, dtype=np.int64),
        )

    def _single(self, x, Y, noise, blocks, usable, config: Config) -> SingleFit:
        """Stage 1: model one parameter for every series (swappable).

        ``x`` (n_points,), ``Y`` (n_series, n_points), ``noise`` a :class:`regression.Noise`.
        """
        if config.selection == "evidence":
            # a model of one parameter (interior): single runs are judged by their own residuals
            return evidence_or_cv(x, Y, blocks, usable, config.max_terms, config.criterion, config.improvement,
                                  noise, interior=config.interior, own_residuals=config.interior)
        return full_search(x, Y, blocks, usable, config.max_terms, config.criterion, config.improvement, noise)

    def _second_opinion(self, single: SingleFit, x, Y, noise, config: Config) -> None:
        """Floor the model-choice spread of exact data by the refined one-term fit's disagreement.

        Where the data carry no noise (:data:`EXACT`) and the chosen model does not reproduce them
        (its relative misfit is above rounding, :data:`~.evidence.PRECISION`), its terms approximate
        something else -- typically one term whose exponent lies between the grid's, approximated by
        two; every hypothesis near the best then bends the same way, and their spread understates
        the error beyond the data (the interval was a half to a third of it).  The ``refining``
        modeler's fit on continuous exponents (one term) is a second opinion: where it describes the
        points nearly as well (misfit at most :data:`AGREE` times the chosen model's), the distance
        between the two predictions at each multiple of :data:`~.evidence.REFERENCE` floors the
        spread.  Where the chosen model reproduces the data (the right terms, on the grid or two real
        terms) nothing changes; noisy data are left to the spread of the hypotheses.
        """
        if single.spread is None or config.selection != "evidence" or not self.second_opinion or Y.shape[1] < 4:
            return
        chosen, lack = _exact_misfits(Y, lambda: single_values(single, evaluate_blocks(x, config.blocks)),
                                      single.n_terms, single.coefficients[:, 0] != 0, noise)
        if chosen.size == 0:
            return
        from .slices import refine, refined_blocks

        blocks = refined_blocks()
        part = None if noise is None else noise.take(chosen)
        other = refine(x, Y[chosen], part, blocks, np.ones(blocks.shape[0], dtype=bool), config.criterion,
                       config.improvement, own_residuals=config.interior)
        other_lack = _relative_misfit(Y[chosen], single_values(other, evaluate_blocks(x, blocks)),
                                      other.n_terms + (other.coefficients[:, 0] != 0))
        multiples = np.max(x) * np.asarray(evidence.REFERENCE)
        ours = single_values(single, evaluate_blocks(multiples, config.blocks))[chosen]
        theirs = single_values(other, evaluate_blocks(multiples, blocks))
        _floor_spread(single.spread, chosen, lack, other_lack, other.n_terms, ours, theirs)

    def _multi(self, X, Y, variance, active, usable, config: Config, notes: list[str], names,
               single_search=None) -> Result:
        """Stage 2: the hierarchical search of Calotoiu et al. 2016, Section IV-B (swappable).

        ``single_search`` replaces :meth:`_single` (and turns the second opinions off): the refined
        search of the joint second opinion (:meth:`_joint_opinion`).
        """
        opinion = single_search is None
        single_search = self._single if single_search is None else single_search
        n_params = X.shape[1]
        singles, lines, seen = [], [], []
        for param in active:
            line = parameter_line(X[:, active], active.index(param))
            lines.append(line)
            note = line_note(line, X[:, param], names[param])
            if note:
                notes.append(note)
            projected = line.project(Y)
            noise = regression.Noise.estimate(projected, *project_variance(line, *variance))
            singles.append(single_search(line.values, projected, noise, config.blocks, usable[param],
                                         replace(config, interior=False)))
            seen.append((param, line, projected, singles[-1]))
            withhold_flat_runner_up(singles[-1], projected)  # its best one term is chosen by rounding
            if opinion:
                self._second_opinion(singles[-1], line.values, projected, noise, replace(config, interior=False))
        max_terms = max(config.max_terms, len(active)) + (SPARE_TERM if config.selection == "evidence" else 0)
        noise = regression.Noise.estimate(Y, *variance)
        for single in singles:
            reconsider(single, np.isfinite(noise.variance))
        fit = combine(
            X[:, active], Y, singles, config.blocks, max_terms, config.criterion, config.improvement, noise,
            weighted=config.weighting == "relative", selection=config.selection,
        )
        if fit.spread is not None:
            # The choice of each parameter's terms adds to the choice of their combination.
            multiples = np.asarray(evidence.REFERENCE)
            top = X[:, active].max(axis=0)
            joint = multi_values(fit, top[None, :] * multiples[:, None], config.blocks)
            spreads, values = [], []
            for single, line in zip(singles, lines):
                spreads.append(single.spread if single.spread is not None else np.full(fit.spread.shape, np.nan))
                values.append(single_values(single, evaluate_blocks(line.values.max() * multiples, config.blocks)))
            fit.spread = combined_spread(fit.spread, spreads, values, joint, additive_parameters(fit))
            if opinion:
                self._joint_opinion(fit, X, Y, variance, noise, active, config, names)
        result = _from_multi(fit, active, n_params)
        result.lines = seen
        return result

    def _joint_opinion(self, fit: MultiFit, X, Y, variance, noise, active, config: Config, names) -> None:
        """:meth:`_second_opinion` for a multi-parameter model: the ``refining`` search of every parameter,
        combined the same way, against the chosen combination (the lines' opinions do not see a
        combination that is off while each line is right)."""
        if fit.spread is None or config.selection != "evidence" or not self.second_opinion:
            return
        points = X[:, active]
        mine = multi_values(fit, points, config.blocks)
        chosen, lack = _exact_misfits(Y, lambda: mine, fit.n_terms, fit.coefficients[:, 0] != 0, noise)
        if chosen.size == 0:
            return
        from .slices import refine, refined_blocks

        blocks = refined_blocks()
        refined = replace(config, blocks=blocks)
        usable = [usable_blocks(np.unique(X[:, param]), blocks) for param in range(X.shape[1])]
        part = tuple(None if v is None else np.asarray(v)[chosen] for v in variance)

        def search(x, Y_, noise_, blocks_, usable_, config_):
            return refine(x, Y_, noise_, blocks_, usable_, config_.criterion, config_.improvement, config_.max_terms,
                          own_residuals=config_.interior)

        other = self._multi(X, Y[chosen], part, active, usable, refined, [], names, single_search=search)
        other_fit = MultiFit(other.terms[:, :, active], other.coefficients, other.n_terms, np.zeros(chosen.size))
        other_lack = _relative_misfit(Y[chosen], multi_values(other_fit, points, blocks),
                                      other.n_terms + (other.coefficients[:, 0] != 0))
        targets = points.max(axis=0)[None, :] * np.asarray(evidence.REFERENCE)[:, None]
        ours = multi_values(fit, targets, config.blocks)[chosen]
        theirs = multi_values(other_fit, targets, blocks)
        _floor_spread(fit.spread, chosen, lack, other_lack, other.n_terms, ours, theirs)

    def _finish(self, result: Result, X, Y, config: Config):
        """The constant (an exact zero snapped to 0) and the predictions at the points, per series."""
        predicted = multi_values(result, X, config.blocks)
        constant = result.coefficients[:, 0].copy()
        # An exactly fitted constant that is zero up to rounding at every point is zero (against the
        # smallest value: 200 + p^3 at p = 10 ... 1e5 keeps its 200).
        magnitude = np.abs(Y)
        scale = np.min(np.where(magnitude > 0, magnitude, np.inf), axis=1)
        scale = np.where(np.isfinite(scale), scale, 0.0)
        tiny = (np.abs(constant) <= 1e-9 * scale) & (result.n_terms > 0)
        predicted = predicted - np.where(tiny, constant, 0.0)[:, None]
        constant[tiny] = 0.0
        return constant, predicted


POINTS_PER_OUTLIER = MIN_VALUES + 1
"""A series gets one point left out of its fit (:func:`off_neighbours`) per this many points, none below it: the
rest keeps the :data:`MIN_VALUES` values a trustworthy model needs (talpas_3's 125 points may lose 20)."""

STEP_MARGIN = 1.5
"""How many times farther off its neighbours' line (in logs) a point must be than each of its neighbours is off
theirs to be left out (:func:`off_neighbours`): a spike between straight neighbours is twice as far off as they
are (its neighbours' lines go through it), each side of a step equally far."""


def neighbours(X: np.ndarray) -> np.ndarray:
    """Each point's nearest neighbour below and above along each parameter, the other parameters the same:
    indices of shape (2, n_params, n_points), -1 where there is none.

    >>> neighbours(np.array([[1.0, 1], [2, 1], [1, 2], [4, 1]]))[:, 0].tolist()
    [[-1, 0, -1, 1], [1, 3, -1, -1]]
    """
    n_points, n_params = X.shape
    found = np.full((2, n_params, n_points), -1, dtype=np.int64)
    for k in range(n_params):
        others = np.delete(X, k, axis=1)
        order = np.lexsort((X[:, k], *others.T[::-1]))
        same = np.all(others[order[1:]] == others[order[:-1]], axis=1)
        lower, upper = order[:-1][same], order[1:][same]
        found[0, k, upper], found[1, k, lower] = lower, upper
    return found


def off_neighbours(X: np.ndarray, Y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The points of one or two runs (``counts``) that lie :data:`~extrap_plugins.experiment.OUTLYING_FACTOR`
    times or more off the line (in logs) through their two neighbours along some parameter and
    :data:`STEP_MARGIN` times farther off it than those neighbours are off theirs, in series of positive values,
    at most one per :data:`POINTS_PER_OUTLIER` points (else none), shape of ``Y`` (n_series, n_points; NaN where a
    point has no value).

    Only a point with two neighbours on either side can be judged: a step (each side as far off), a change of
    regime at the ends (the last point 10x the others may be the first of a new regime: RELeARN's ``Update
    global tree`` rises 10x between p = 64 and 128) and a run of points off together are never left out.

    >>> p = np.array([[4.0], [8], [16], [32], [64], [128]])
    >>> off_neighbours(p, np.array([[4.0, 8, 160, 32, 64, 128], [1, 1, 1, 10, 10, 10]]), np.ones((2, 6))).tolist()
    [[False, False, True, False, False, False], [False, False, False, False, False, False]]
    """
    n_points = X.shape[0]
    found = np.zeros(Y.shape, dtype=bool)
    if n_points < POINTS_PER_OUTLIER:
        return found
    near = neighbours(X)
    with np.errstate(all="ignore"):
        logY = np.log(np.where(np.isfinite(Y) & (Y > 0), Y, np.nan))  # (a point without a value judges none)
        for k in np.flatnonzero(np.all(X > 0, axis=0)):
            lower, upper = near[:, k]
            inner = np.flatnonzero((lower >= 0) & (upper >= 0))
            if inner.size == 0:
                continue
            x, below, above = np.log(X[:, k]), lower[inner], upper[inner]
            share = (x[inner] - x[below]) / (x[above] - x[below])
            off = np.full(Y.shape, np.nan)
            off[:, inner] = np.abs(logY[:, inner] - logY[:, below] - share * (logY[:, above] - logY[:, below]))
            theirs = np.maximum(off[:, np.maximum(lower, 0)], off[:, np.maximum(upper, 0)])  # NaN where not judged
            found |= (off >= np.log(OUTLYING_FACTOR)) & (off >= STEP_MARGIN * theirs)
    found &= (counts < 3) & ~np.any(Y <= 0, axis=1)[:, None]
    return found & (found.sum(axis=1) <= n_points // POINTS_PER_OUTLIER)[:, None]


def off_the_model(Y: np.ndarray, predicted: np.ndarray, left: np.ndarray) -> np.ndarray:
    """Which series' points ``left`` out (n_series, n_points) all lie far off the model of the others
    (``predicted``): :data:`~extrap_plugins.experiment.OUTLYING_FACTOR` times or more above or below it, and
    farther from the median relative residual (in logs) of the other points than
    :data:`~extrap_plugins.experiment.OUTLYING_SPREAD` median absolute deviations of theirs, shape (n_series,)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        residual = np.log(Y / predicted)  # NaN where the model is 0 or below: not confirmed
        others = np.where(left, np.nan, residual)
        middle = np.nanmedian(others, axis=1, keepdims=True)
        spread = np.nanmedian(np.abs(others - middle), axis=1, keepdims=True)
        far = (np.abs(residual) >= np.log(OUTLYING_FACTOR)) & (np.abs(residual - middle) > OUTLYING_SPREAD * spread)
    return np.all(far | ~left, axis=1)


def left_out_note(points: np.ndarray, names, shown: int = 4) -> str:
    """The warning of a model fitted without ``points`` (:meth:`PMNFModeler._leave_out_points`).

    >>> left_out_note(np.array([[16.0, 10, 400]]), ("x", "y", "z"))  # doctest: +NORMALIZE_WHITESPACE
    'a point 3x or more off its neighbours and the model of the others is left out of the fit (a slow node, a timer
    glitch? --option outlying_points=false keeps it): x=16, y=10, z=400'
    """
    one = len(points) == 1
    listed = "; ".join(format_point(point, names) for point in points[:shown])
    more = f"; and {len(points) - shown} more" if len(points) > shown else ""
    return (f"{'a point' if one else f'{len(points)} points'} {format_value(OUTLYING_FACTOR)}x or more off "
            f"{'its' if one else 'their'} neighbours and the model of the others {'is' if one else 'are'} left out "
            f"of the fit (a slow node, a timer glitch? --option outlying_points=false keeps "
            f"{'it' if one else 'them'}): {listed}{more}")


SINGLE_VALUE = "parameter {name} has the single value {value}:"
"""How the note of a parameter that cannot appear in a model begins (``api.model`` says it once for all series
where no parameter varies, and leaves these notes out of its warnings)."""

WHOLE_SEARCH_R2 = 0.9
"""The adjusted R² below which a two-parameter model that leaves a parameter out gets the whole search space
(:meth:`PMNFModeler._whole_search`), and which that search's model must reach to replace it: values that jump or
scatter (what the mean is for) are fitted by some of its 40,000 hypotheses too, but loosely.  Not asked of a
search that replaces the mean: there :data:`WHOLE_SEARCH_GAIN` alone decides."""

WHOLE_SEARCH_PAIRS = 10_000
"""The most pairs of building blocks (one per parameter) the whole search takes: the default modeler's 83 × 83
(some 40,000 hypotheses); refining's continuous exponents would be millions."""

WHOLE_SEARCH_POINTS = 200
"""The most measured points the whole search takes: its designs hold some 27,000 two-term hypotheses × points × 3
numbers, with their factorizations some 300 MB at 200 points (a 5 × 5 grid has 25)."""

WHOLE_SEARCH_GAIN = 0.25
"""The share of the hierarchical model's unexplained variation (1 − adjusted R²) the whole search's model may leave
at most to replace it: a clear gain, not a closer fit of the noise."""

def few_values_note(few: list[tuple[str, int]]) -> str:
    """The note for parameters with fewer than :data:`MIN_VALUES` distinct values: one line for all of them (three
    parameters of 3 values gave three lines for the same series).

    >>> few_values_note([("p", 4)])
    'parameter p has only 4 distinct values; at least 5 are needed for a trustworthy model'
    >>> few_values_note([("x", 3), ("y", 3), ("z", 4)])
    'parameters x, y and z have only 3, 3 and 4 distinct values; at least 5 are needed for a trustworthy model'
    """
    need = f"at least {MIN_VALUES} are needed for a trustworthy model"
    if len(few) == 1:
        (name, count), = few
        return f"parameter {name} has only {count} distinct values; {need}"
    names = ", ".join(name for name, _ in few[:-1]) + f" and {few[-1][0]}"
    counts = ", ".join(str(count) for _, count in few[:-1]) + f" and {few[-1][1]}"
    return f"parameters {names} have only {counts} distinct values; {need}"


def _add_few_values_note(notes: list[str], few: list[tuple[str, int, int]]) -> None:
    """Insert :func:`few_values_note` for ``few`` (name, count, where its note went) where the first one's went."""
    if few:
        notes.insert(few[0][2], few_values_note([(name, count) for name, count, _ in few]))


WORSE_THAN_THE_MEAN = ("no hypothesis describes the measurements better than their mean (they jump or scatter, "
                       "as a step does): the model is the mean")


def unexplained_trend_note(x: np.ndarray, y: np.ndarray, name: str, where: str = "", constant: bool = True) -> str:
    """The warning for a constant model of values that clearly rise or fall (``x``, ``y`` of one series, shape
    (n_points,)): how they change, and, where one jump between neighbouring values makes most of the change
    and leaves :data:`SEGMENT_POINTS` on either side, that the segmented modeler fits each side.

    For a parameter of several (:func:`_line_trend_notes`): ``y`` is its line, ``where`` says where it lies (after
    the values), and a model that is not ``constant`` leaves the parameter out; no step is suggested (the segmented
    modeler takes one parameter).

    >>> unexplained_trend_note(np.array([20.0, 40, 60]), np.array([112.0, 443, 993]), "x", " at y=3", False)
    'the values rise 8.87-fold from x=20 to x=60 (112 to 993 at y=3), but the model leaves x out: no hypothesis that \
describes them is plausible'

    >>> p = np.arange(4.0, 44.0, 4.0)
    >>> unexplained_trend_note(p, np.where(p <= 20, np.log2(p), p ** 2), "p")  # doctest: +NORMALIZE_WHITESPACE
    'the values rise 800-fold from p=4 to p=40 (2 to 1600), but the model is the constant: no hypothesis that
    describes them is plausible; they jump between p=20 and p=24 (a step?): try --modeler segmented'
    """
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    ratio = ys[-1] / ys[0]
    factor = ratio if ratio >= 1 else 1.0 / ratio
    model = "is the constant" if constant else f"leaves {name} out"
    note = (f"the values {'rise' if ratio >= 1 else 'fall'} {factor:.3g}-fold from {name}={format_value(xs[0])} to "
            f"{name}={format_value(xs[-1])} ({ys[0]:.4g} to {ys[-1]:.4g}{where}), but the model {model}: no "
            f"hypothesis that describes them is plausible")
    if where:
        return note
    with np.errstate(all="ignore"):
        steps = np.abs(np.diff(np.log(ys)))
    jump = int(np.argmax(steps))
    if (steps[jump] > STEP_SHARE * abs(np.log(ratio)) and jump + 1 >= SEGMENT_POINTS
            and xs.size - jump - 1 >= SEGMENT_POINTS):
        note += (f"; they jump between {name}={format_value(xs[jump])} and {name}={format_value(xs[jump + 1])} "
                 f"(a step?): try --modeler segmented")
    return note


RULED_OUT_SMAPE = 1.0
"""The SMAPE (in percent) from which a model chosen over ruled-out better fits is said to miss the measurements
(:func:`ruled_out_note`): below it the model describes them as closely as timings repeat, whatever fits closer
(a model of exact data missing by 0.0 % was said to miss them)."""


def ruled_out_note(at: tuple[float, float], kind: int, count: int, smape: float, name: str) -> str:
    """The warning for a model chosen because the plausibility rule removed every hypothesis that fits clearly
    better (:attr:`~extrap_plugins.modelers.evidence.Judgement.ruled_out`): ``at`` the earliest and the median
    parameter value where they go wrong, ``kind`` what they do there (1: predict 0 or less, 2: turn against the
    data's trend, 3: some the one, some the other), ``count`` how many they are, ``smape`` the model's SMAPE in
    percent.

    >>> ruled_out_note((67.3, 72.2), 3, 28, 24.97, "x")  # doctest: +NORMALIZE_WHITESPACE
    "the 28 hypotheses that fit the measurements clearly better predict 0 or less or turn against the data's
    trend at about x=72 (from x=67 on), so they are ruled out; the model shown is the best plausible one and
    misses the measurements by 25.0% (SMAPE)"
    """
    low, middle = (format_value(float(f"{value:.2g}")) for value in at)
    what = {1: "predict 0 or less", 2: "turn against the data's trend",
            3: "predict 0 or less or turn against the data's trend"}[kind]
    where = f"at about {name}={middle}" + ("" if low == middle else f" (from {name}={low} on)")
    if count == 1:
        what = what.replace("predict ", "predicts ").replace("turn ", "turns ")
    who = "the hypothesis that fits" if count == 1 else f"the {count} hypotheses that fit"
    return (f"{who} the measurements clearly better {what} {where}, so {'it is' if count == 1 else 'they are'} "
            f"ruled out; the model shown is the best plausible one and misses the measurements by "
            f"{format_share(smape / 100.0)} (SMAPE)")


def _selection_notes(single: SingleFit, x, Y, n_terms, smape, name: str, per_series, skip) -> None:
    """Add to ``per_series`` what the evidence selection of one parameter should tell the user: a constant for
    values that clearly trend (:attr:`SingleFit.trend`), a model chosen because every clearly better fit was ruled
    implausible (:attr:`SingleFit.ruled_at`).  ``skip``: series that have their note already."""
    if single.trend is not None:
        flat = (n_terms == 0) & _trending(single, x, Y) & ~skip
        for s in np.flatnonzero(flat):
            per_series[s].append(unexplained_trend_note(x, Y[s], name))
    if single.ruled_at is not None:
        misses = np.isfinite(smape) & (smape >= RULED_OUT_SMAPE)
        for s in np.flatnonzero(np.isfinite(single.ruled_at[:, 0]) & ~skip & misses):
            per_series[s].append(ruled_out_note(tuple(single.ruled_at[s]), int(single.ruled_kind[s]),
                                                int(single.ruled_count[s]), float(smape[s]), name))


def _trends(single: SingleFit | None, result: Result, X: np.ndarray, active: list[int], Y: np.ndarray) -> np.ndarray:
    """Which series clearly rise or fall (:func:`_trending`) with their one parameter (``single``) or along some
    parameter's line (:attr:`Result.lines`), shape (n_series,)."""
    if single is not None:
        return _trending(single, X[:, active[0]], Y)
    found = [_line_trending(fit, line, projected) for _, line, projected, fit in result.lines or ()]
    return np.any(found, axis=0) if found else np.zeros(Y.shape[0], dtype=bool)


def _line_trending(single: SingleFit, line, projected: np.ndarray) -> np.ndarray:
    """:func:`_trending` of a parameter's line, only where the repetitions tell the noise: without them a line's
    trend is judged against its own closest plausible fit, and on noise about a constant (6 × 6 points, 20 or 40 %,
    one repetition, 100 series each) 6 and 7 lines trended whose combination of all 36 points rightly took the
    constant (with 2 or 5 repetitions none)."""
    known = np.zeros(projected.shape[0], dtype=bool) if single.misfit is None else np.isfinite(single.misfit)
    return _trending(single, line.values, projected) & known


def _line_trend_notes(result: Result, X: np.ndarray, names, per_series, skip) -> None:
    """:func:`_selection_notes`' first note for a model of several parameters (in ``per_series``): where the values
    clearly rise or fall along a parameter's line (its own selection, :func:`_line_trending`) and the model leaves
    that parameter out.  Extra-P's ``strong_scaling/two_parameter_1.txt`` (x = 20 … 60 × y = 1 … 5, the values
    rising with x and falling to 1 at y = 5) got the mean, SMAPE 91 %, without a word.  Not for a line that
    averages every point of a value (``Line.n_lines == 0``): it mixes in the other parameters' effects."""
    used = np.arange(result.terms.shape[1])[None, :] < result.n_terms[:, None]
    for param, line, projected, single in result.lines:
        if line.n_lines == 0:
            continue
        if line.n_lines > 1:
            where = f", the mean of {line.n_lines} lines along {names[param]}"
        else:  # one line: the other parameters' values on it
            point = X[np.flatnonzero(line.weights[0])[0]]
            where = " at " + ", ".join(f"{names[other]}={format_value(point[other])}"
                                       for other, _, _, _ in result.lines if other != param)
        left_out = ~np.any((result.terms[:, :, param] >= 0) & used, axis=1)
        for s in np.flatnonzero(_line_trending(single, line, projected) & left_out & ~skip):
            per_series[s].append(unexplained_trend_note(line.values, projected[s], names[param], where,
                                                        result.n_terms[s] == 0))


def _trending(single: SingleFit, x: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Which series of positive values clearly rise or fall with their one parameter (:attr:`SingleFit.trend`,
    and a rank correlation of at least :data:`MONOTONE`), shape (n_series,)."""
    if single.trend is None:
        return np.zeros(Y.shape[0], dtype=bool)
    return (single.trend != 0) & np.all(Y > 0, axis=1) & (np.abs(kendall_tau(x, Y)) >= MONOTONE)


def kendall_tau(x: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Kendall's rank correlation (tau-a) of every series of ``Y`` (n_series, n_points) with ``x`` (n_points,).

    >>> kendall_tau(np.array([1.0, 2, 3, 4]), np.array([[1.0, 2, 3, 4], [4.0, 3, 2, 1], [1.0, 3, 2, 4]])).tolist()
    [1.0, -1.0, 0.6666666666666666]
    """
    upper = np.triu_indices(x.size, 1)
    dx = np.sign(x[:, None] - x[None, :])[upper]
    dy = np.sign(Y[:, :, None] - Y[:, None, :])[:, upper[0], upper[1]]
    return (dy * dx).sum(axis=1) / max(len(upper[0]), 1)


MONOTONE = 0.6
"""The rank correlation of values with their parameter (:func:`kendall_tau`) from which values that clearly change
from the smallest to the largest parameter value (:attr:`SingleFit.trend`) are taken to trend, not to scatter: on
noise about a constant (2-40 %, 1 or 2 repetitions, 6 points) the change alone was clear in 1-2 % of the series;
a change in steps (a step or a saturation) keeps a rank correlation of 1."""


STEP_SHARE = 0.5
"""A jump between neighbouring values that makes more than this share of the whole change (in logs) is taken for a
step in :func:`unexplained_trend_note`: smooth growth spreads its change over the steps (``p^2`` on p = 4 ... 40
makes 30 % in its first step, ``log2(p)`` on p = 2 ... 6 makes 48 %)."""

SEGMENT_POINTS = 5
"""Points on either side of a step for the segmented modeler to fit each side (its window, Ilyas et al. 2017)."""


def _worse_than_the_mean(Y: np.ndarray, predicted: np.ndarray, n_terms: np.ndarray) -> np.ndarray:
    """Which series of positive values got a model with terms that misses their measured points by more than their
    mean does, counting the coefficients it spends (adjusted R² below 0).

    The hypotheses are judged by relative residuals, which on values that jump (LULESH's MPI_Waitall under Caliper:
    0.018 s at 27 ranks, then 3.0, 4.7, 1.4, 2.2) follow the smallest value: a model of adjusted R² -1.97 took
    0.11 s at 64 ranks and 221 s at 4,096.  The mean is what such data say (``benchmarks/real.py``: 50.9 → 51.3 % of
    468 held-out points within ±10 %, LULESH's median error 14.2 → 12.8 %; the synthetic rows of
    ``benchmarks/robustness.py`` the same)."""
    n_points = Y.shape[1]
    dof = n_points - n_terms - 1  # the model's residual degrees of freedom (the mean's: n_points - 1)
    with np.errstate(all="ignore"):
        tss = np.sum((Y - Y.mean(axis=1, keepdims=True)) ** 2, axis=1)
        rss = np.sum((Y - predicted) ** 2, axis=1)
        worse = rss / np.maximum(dof, 1) > tss / max(n_points - 1, 1)  # adjusted R² below 0
    return (n_terms > 0) & (dof > 0) & np.all(Y > 0, axis=1) & (tss > 0) & worse


SAFE_MAGNITUDE = 1e30
"""Series whose largest magnitude lies outside [1 / SAFE_MAGNITUDE, SAFE_MAGNITUDE] are fitted scaled by a power of
two (:func:`binary_scale`): the squares of least squares overflow near 1e154 (values of 1e100 gave a model with
SMAPE 133 %, of 1e160 '0 · p').  Counters and times stay far inside, and are fitted as they are."""


def binary_scale(Y: np.ndarray) -> np.ndarray:
    """Per series, the power of two to divide it by before fitting: 1 inside :data:`SAFE_MAGNITUDE`, else the one
    nearest its largest finite magnitude (a power of two scales every value exactly, without rounding).

    Parameters
    ----------
    Y : ndarray, shape (n_series, n_points)

    Returns
    -------
    ndarray, shape (n_series,)
    """
    with np.errstate(all="ignore"):
        largest = np.max(np.where(np.isfinite(Y), np.abs(Y), 0.0), axis=1, initial=0.0)
    outside = (largest > SAFE_MAGNITUDE) | ((largest > 0) & (largest < 1.0 / SAFE_MAGNITUDE))
    exponents = np.round(np.log2(np.where(outside, largest, 1.0)))
    return np.ldexp(1.0, exponents.astype(np.int64))


def repetition_variance(values: np.ndarray, measure: str = "mean") -> np.ndarray:
    """Variance of each point's statistic of its repetitions: of their mean, or of their median.

    The median's is taken robustly, as the median is: ``(π/2) (1.4826 MAD)² / n`` from the median absolute
    deviation of three or more repetitions (of two, the median is their mean).  One repetition 3x off at every
    point gave the variance of the mean to the medians, which then explained every term as noise: the medians of
    exactly ``100/p + 0.1 p`` were modelled as their mean, 33.9.

    Parameters
    ----------
    values : ndarray, shape (n_series, n_points, n_reps), NaN-padded
    measure : str
        ``"median"`` for the median's variance; any other measure gets the mean's.

    Returns
    -------
    ndarray, shape (n_series, n_points)
        NaN where a point has fewer than two finite repetitions.
    """
    finite = np.isfinite(values)
    count = finite.sum(axis=2)
    clean = np.where(finite, values, np.nan)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        variance = np.nanvar(clean, axis=2, ddof=1) / count
        if measure == "median":
            deviation = np.nanmedian(np.abs(clean - np.nanmedian(clean, axis=2, keepdims=True)), axis=2)
            robust = 0.5 * np.pi * (MAD_TO_SIGMA * deviation) ** 2 / count
            variance = np.where(count >= 3, robust, variance)
    return np.where(count >= 2, variance, np.nan)


MAD_TO_SIGMA = 1.4826
"""The median absolute deviation of normal values times this is their standard deviation."""


def reconsider(single: SingleFit, where: np.ndarray) -> None:
    """Offer the best one-term model where a line chose the constant (in place).

    A parameter's effect can hide in the noise of its line (the cheap corner
    of a sparse design) yet show on the other points.  Where the noise is
    known, the combination step tests against it with every point and drops
    the parameter again if it does not matter; the term was chosen from the data
    without its line paying for the choice, so the combination charges for it
    (:attr:`SingleFit.offered`, :func:`~extrap_plugins.modelers.combine.combine`).
    """
    if single.runner_up is None:
        return
    offer = where & (single.n_terms == 0) & (single.runner_up >= 0)
    single.blocks[offer, 0] = single.runner_up[offer]
    single.n_terms = np.where(offer, 1, single.n_terms)
    single.offered = offer


def project_variance(line, V: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Variances and repetition counts of a line's projected values.

    The projected value averages points, so its variance is the weighted sum
    of theirs (unknown where one of them has no repetitions); its "count" carries their pooled degrees of
    freedom plus one.  Points off the value's lines do not count: a single run elsewhere made every projected
    variance unknown (NaN × 0 is NaN), and with it the line's noise, in every design that repeats some points
    only.

    >>> from types import SimpleNamespace
    >>> line = SimpleNamespace(weights=np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]]))
    >>> V, counts = np.array([[0.04, 0.04, np.nan]]), np.array([[2, 2, 1]])
    >>> [a.tolist() for a in project_variance(line, V, counts)]
    [[[0.02, nan]], [[3.0, 1.0]]]
    """
    contributing = (line.weights > 0).astype(float)
    unknown = np.isnan(V).astype(float) @ contributing.T > 0
    with np.errstate(all="ignore"):
        projected = np.where(unknown, np.nan, np.where(np.isnan(V), 0.0, V) @ (line.weights**2).T)
    pooled = np.maximum(counts - 1, 0) @ contributing.T
    return projected, pooled + 1


def confounded(X: np.ndarray, active: list[int]) -> list[tuple[int, int]]:
    """Pairs of parameters whose values determine each other at every point.

    Returns ``(kept, dropped)`` pairs: for each group of such parameters the
    first is kept.  ``X`` has shape (n_points, n_params).
    """
    pairs, dropped = [], set()
    for i, a in enumerate(active):
        if a in dropped:
            continue
        n_a = np.unique(X[:, a]).size
        for b in active[i + 1 :]:
            if b in dropped:
                continue
            n_pairs = np.unique(X[:, [a, b]], axis=0).shape[0]
            if n_pairs == n_a == np.unique(X[:, b]).size:
                pairs.append((a, b))
                dropped.add(b)
    return pairs


def line_note(line, x, name: str) -> str:
    """A warning when a parameter's line is too short for a trustworthy single-parameter model."""
    distinct = np.unique(x).size
    if line.n_lines == 0:
        return (
            f"parameter {name}: no line of at least 3 values with the other parameters fixed; its "
            f"single-parameter model averages all points with the same value of {name}, which mixes "
            f"in the other parameters' effects"
        )
    if line.values.size < MIN_VALUES <= distinct:
        return (
            f"parameter {name}: the longest line with the other parameters fixed has only "
            f"{line.values.size} values; at least {MIN_VALUES} are needed for a trustworthy model"
        )
    return ""


def _exact_misfits(Y, model_values, n_terms, constant, noise) -> tuple[np.ndarray, np.ndarray]:
    """The series whose data carry no noise (:data:`EXACT`) and whose model does not reproduce them.

    ``model_values()`` gives the model's values at the points, (n_series, n_points); it is called only
    where some series may be exact.  Returns their indices and their :func:`_relative_misfit`.
    """
    none = np.zeros(0, dtype=np.int64), np.zeros(0)
    variance = np.full(Y.shape[0], np.nan) if noise is None else noise.variance
    if noise is not None and noise.points is not None:
        # Repetitions that agree exactly (Noise.estimate leaves their variance unknown): no noise.
        agree = np.all(np.isfinite(noise.points), axis=1) & np.all(noise.points <= EXACT, axis=1)
        variance = np.where(agree, 0.0, variance)
    maybe = ~(variance > EXACT) & (n_terms >= 1) & np.all(Y > 0, axis=1)  # noisy data: nothing to do
    if not maybe.any():
        return none
    lack = np.full(Y.shape[0], np.inf)
    lack[maybe] = _relative_misfit(Y[maybe], model_values()[maybe], n_terms[maybe] + constant[maybe])
    exact = np.where(np.isfinite(variance), variance, lack) <= EXACT
    chosen = np.flatnonzero(maybe & exact & np.isfinite(lack) & (lack > evidence.PRECISION))
    return chosen, lack[chosen]


def _relative_misfit(Y: np.ndarray, fitted: np.ndarray, n_coefficients: np.ndarray) -> np.ndarray:
    """Mean squared relative residual per degree of freedom of each series, shape (n_series,)."""
    with np.errstate(all="ignore"):
        relative = (Y - fitted) / Y
        return np.sum(relative * relative, axis=1) / np.maximum(Y.shape[1] - n_coefficients, 1)


def _floor_spread(spread, chosen, lack, other_lack, other_terms, ours, theirs) -> None:
    """Floor ``spread[chosen]`` (n_series, n_ref) by the log distance of ``theirs`` from ``ours`` (the second
    opinion's and the model's predictions at the reference multiples, one row per chosen series), where the
    second opinion fits the points nearly as well (:data:`AGREE`)."""
    with np.errstate(all="ignore"):
        gap = np.abs(np.log(theirs / ours))
    fits = (other_lack <= AGREE * lack) & np.all(np.isfinite(gap), axis=1) & (other_terms > 0)
    rows = chosen[fits]
    spread[rows] = np.fmax(np.where(np.isfinite(spread[rows]), spread[rows], 0.0), gap[fits])


def _from_single(single: SingleFit, param: int, n_params: int) -> Result:
    n_series, slots = single.blocks.shape
    terms = np.full((n_series, slots, n_params), -1, dtype=np.int64)
    terms[:, :, param] = single.blocks
    return Result(terms, single.coefficients, single.n_terms, single.spread)


def _from_multi(fit: MultiFit, active: list[int], n_params: int) -> Result:
    n_series, slots, _ = fit.terms.shape
    terms = np.full((n_series, slots, n_params), -1, dtype=np.int64)
    terms[:, :, active] = fit.terms
    return Result(terms, fit.coefficients, fit.n_terms, fit.spread)


def _powers_lost(values: np.ndarray, blocks: np.ndarray) -> str:
    """What values of zero or below take from a parameter's powers, as the end of a note ('' if nothing).

    Zero leaves out the negative powers (1/0); a negative value the fractional ones ((-1)^(1/2)); logarithms
    have their own note (values below 1)."""
    exponents = blocks[:, 0]
    fractional = (exponents != np.round(exponents)).any()
    negative = (exponents < 0).any()
    smallest = format_value(values.min())
    if values.min() < 0 and fractional:
        also = ", nor negative ones" if negative and (values == 0).any() else ""
        return f"negative values (smallest {smallest}): no fractional powers are tried for it{also}"
    if (values == 0).any() and negative:
        return "the value 0: no negative powers are tried for it"
    return ""
