"""Single-parameter hypothesis searches, batched over every series of a group.

Both searches take the values of one parameter ``x`` (shape (n_points,)) and
the series ``Y`` (shape (n_series, n_points)) measured there, and return a
:class:`SingleFit`: for each series the chosen blocks and coefficients.

* :func:`evidence_search` (the default) judges hypotheses by
  :mod:`~extrap_plugins.modelers.evidence`: one stack of QR factorisations per
  number of terms serves the whole group (cached per point set); the shared
  fits rank the constant and the single terms of every series (one GEMM), the
  pairs of each series' best single terms and the best plain fits of the pair
  stack join them, and those ~50 candidates are refitted per series by
  weighted least squares (batched normal equations) and judged.
* :func:`full_search` (``selection=cv``) scores every hypothesis of up to
  ``max_terms`` terms by leave-one-out cross-validation.
* :func:`golden_search` is Calotoiu et al.'s (2016) modified golden-section search: the
  one-term hypotheses sorted by their slope at the largest ``x``, searched
  for the minimum error in logarithmically many steps, all series in
  lock-step; a second term is searched the same way with the first fixed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from extrap_plugins.modelers import evidence, regression
from extrap_plugins.modelers.hypotheses import combinations, evaluate_blocks, exponent_complexity, slope_order

GOLDEN = (1.0 + 5.0**0.5) / 2.0


@dataclass
class SingleFit:
    """Chosen single-parameter models of a batch of series.

    Attributes
    ----------
    blocks : ndarray of int, shape (n_series, max_terms)
        Indices into the building-block array, -1 for unused slots.
    coefficients : ndarray, shape (n_series, max_terms + 1)
        Constant first, then one per block; 0 for unused slots.
    n_terms : ndarray of int, shape (n_series,)
    score : ndarray, shape (n_series,)
        The criterion value of the chosen hypothesis.
    runner_up : ndarray of int, shape (n_series,)
        The block of the best one-term hypothesis (-1 if none): a candidate
        for the multi-parameter combination even where the constant won.
    spread, mixed : optional
        The evidence search's model-choice spread and opposite-sign flags
        (:class:`~extrap_plugins.modelers.evidence.Judgement`).
    misfit, misfit_dof : ndarray, shape (n_series,), optional
        The F statistic of the best plausible hypothesis's lack of fit and its degrees of freedom.
    fallback : ndarray of bool, shape (n_series,), optional
        The series whose model the cross-validation rule chose (:func:`evidence_or_cv`).
    offered : ndarray of bool, shape (n_series,), optional
        The series whose line chose the constant and whose one term is the runner-up
        (:func:`~extrap_plugins.modelers.base.reconsider`): the line did not pay for choosing it.
    trend : ndarray of int, shape (n_series,), optional
        +1 (-1) where the values clearly rise (fall) against the yardstick of the evidence criterion, the
        noise or, where larger, the smallest lack of fit of a plausible hypothesis
        (:func:`~extrap_plugins.modelers.evidence.trend_of`), else 0: a constant model of such values
        does not describe them.
    ruled_at, ruled_kind, ruled_count : ndarray, shapes (n_series, 2), (n_series,), (n_series,), optional
        Where the plausibility rule removed every hypothesis that fits clearly better than the chosen one
        (:attr:`~extrap_plugins.modelers.evidence.Judgement.ruled_out`): the earliest and the median parameter
        value at which those hypotheses predict 0 or less or turn against the data's trend (NaN elsewhere);
        which of the two they do (1: 0 or less, 2: turn, 3: both); how many hypotheses they are.
    """

    blocks: np.ndarray
    coefficients: np.ndarray
    n_terms: np.ndarray
    score: np.ndarray
    runner_up: np.ndarray | None = None
    spread: np.ndarray | None = None
    mixed: np.ndarray | None = None
    misfit: np.ndarray | None = None
    misfit_dof: np.ndarray | None = None
    fallback: np.ndarray | None = None
    offered: np.ndarray | None = None
    trend: np.ndarray | None = None
    ruled_at: np.ndarray | None = None
    ruled_kind: np.ndarray | None = None
    ruled_count: np.ndarray | None = None


def term_limit(n_points: int, max_terms: int) -> int:
    """How many terms the points support: leave-one-out needs spare points.

    Five points allow two terms; four or three allow one; two only the constant.
    """
    supported = n_points - 3 if n_points >= 5 else (1 if n_points >= 3 else 0)
    return int(max(0, min(max_terms, supported)))


def design(columns: np.ndarray, hypotheses: np.ndarray) -> np.ndarray:
    """Design matrices ``[1, column_a, column_b, ...]`` of a stack of hypotheses.

    Parameters
    ----------
    columns : ndarray, shape (n_points, n_blocks)
    hypotheses : ndarray of int, shape (n_hypotheses, k)

    Returns
    -------
    ndarray, shape (n_hypotheses, n_points, k + 1)
    """
    n_points = columns.shape[0]
    ones = np.ones((hypotheses.shape[0], n_points, 1))
    terms = columns[:, hypotheses].transpose(1, 0, 2)
    return np.concatenate([ones, terms], axis=2)


def full_search(
    x: np.ndarray,
    Y: np.ndarray,
    blocks: np.ndarray,
    usable: np.ndarray,
    max_terms: int,
    criterion: str,
    improvement: float,
    noise: regression.Noise | None = None,
) -> SingleFit:
    """Try every hypothesis of up to ``max_terms`` usable blocks; keep the simplest clearly best.

    Parameters
    ----------
    x : ndarray, shape (n_points,)
    Y : ndarray, shape (n_series, n_points)
        Finite values.
    blocks : ndarray, shape (n_blocks, 2)
    usable : ndarray of bool, shape (n_blocks,)
    max_terms : int
    criterion : str
        One of :data:`extrap_plugins.modelers.regression.CRITERIA`.
    improvement : float
        See :func:`extrap_plugins.modelers.regression.select_by_terms`.
    noise : Noise, optional
        Measurement noise from the repetitions: where known, the number of
        terms is the fewest whose best fit is explained by noise.

    Returns
    -------
    SingleFit
    """
    n_series, n_points = Y.shape
    columns = evaluate_blocks(x, blocks)
    usable_ids = np.flatnonzero(usable)
    limit = min(term_limit(n_points, max_terms), usable_ids.size)
    best_score = np.full((n_series, max_terms + 1), np.inf)
    best_index = np.zeros((n_series, max_terms + 1), dtype=np.int64)
    explained = np.zeros((n_series, max_terms + 1), dtype=bool)
    stacks = []
    pending = np.arange(n_series)
    for k in range(limit + 1):
        hypotheses = usable_ids[combinations(usable_ids.size, k)]
        factorization = regression.factorize(design(columns, hypotheses))
        stacks.append((hypotheses, factorization))
        if pending.size == 0:
            continue
        complexity = exponent_complexity(blocks)[hypotheses].sum(axis=1)
        part = None if noise is None else regression.Noise(noise.variance[pending], noise.dof[pending])
        index, score, flags = regression.best_shared(
            Y[pending], factorization, criterion, part, complexity, positive_terms=True
        )
        best_index[pending, k], best_score[pending, k], explained[pending, k] = index, score, flags
        # A series explained by noise (or fitted exactly) never takes more terms: stop searching
        # it, after the one-term level (cheap, and its best is the runner-up for combinations).
        if k >= 1:
            done = explained[pending].any(axis=1) | (best_score[pending] <= regression.EXACT[criterion]).any(axis=1)
            pending = pending[~done]
    chosen = regression.select_by_terms(best_score, criterion, improvement, explained if noise is not None else None)
    fit = SingleFit(
        blocks=np.full((n_series, max_terms), -1, dtype=np.int64),
        coefficients=np.zeros((n_series, max_terms + 1)),
        n_terms=chosen,
        score=best_score[np.arange(n_series), chosen],
        runner_up=stacks[1][0][best_index[:, 1], 0] if len(stacks) > 1 else np.full(n_series, -1),
    )
    for k, (hypotheses, factorization) in enumerate(stacks):
        members = np.flatnonzero(chosen == k)
        if members.size:
            _fill(fit, members, hypotheses[best_index[members, k]], factorization, best_index[members, k], Y)
    return fit


def evidence_search(
    x: np.ndarray,
    Y: np.ndarray,
    blocks: np.ndarray,
    usable: np.ndarray,
    max_terms: int,
    noise: regression.Noise | None = None,
    no_constant: bool = True,
    interior: bool = True,
    own_residuals: bool = False,
) -> SingleFit:
    """Every hypothesis of up to ``max_terms`` usable blocks, judged by :mod:`.evidence`.

    The stacks are: the constant; one term with and (``no_constant``)
    without a constant (counts divided among ranks are ``c / p``, exactly);
    two or more terms with a constant.  Per stack one QR serves the group;
    per chunk of series one GEMM gives every fit, prediction and coefficient.
    Same parameters and result as :func:`full_search`, plus
    :attr:`SingleFit.spread` and :attr:`SingleFit.mixed`.  ``own_residuals``:
    series without repetitions are judged by their own residuals (a model of
    one parameter; the lines of several keep the tightest fit's yardstick,
    :data:`~extrap_plugins.modelers.evidence.EXACT`).
    """
    n_series, n_points = Y.shape
    columns = evaluate_blocks(x, blocks)
    stacks, n_coef, offsets = _evidence_stacks(
        np.asarray(x, dtype=np.float64).tobytes(), blocks.tobytes(), np.asarray(usable).tobytes(), max_terms,
        no_constant,
    )
    n_ref = len(evidence.REFERENCE)
    hi = int(np.argmax(x))
    variance = np.full(n_series, np.nan) if noise is None else noise.variance
    trend = evidence.trend_of(x, Y, variance)
    known_noise = np.isfinite(variance)
    noise_dof = np.zeros(n_series) if noise is None else noise.dof
    point_variance = np.full(Y.shape, np.nan) if noise is None or noise.points is None else noise.points
    residual_op, screens, solvable = _evidence_operators(stacks, n_points)
    index = np.zeros(n_series, dtype=np.int64)
    spread = np.full((n_series, n_ref), np.nan)
    mixed = np.zeros(n_series, dtype=bool)
    misfit = np.full(n_series, np.nan)
    misfit_dof = np.zeros(n_series)
    runner_up = np.full(n_series, -1, dtype=np.int64)
    chosen_coefficients = np.zeros((n_series, max_terms + 1))
    clear_trend = np.zeros(n_series, dtype=np.int64)
    ruled_at = np.full((n_series, 2), np.nan)
    ruled_kind = np.zeros(n_series, dtype=np.int64)
    ruled_count = np.zeros(n_series, dtype=np.int64)
    # the multiples beyond the data (direction, consensus, sign), then (``interior``: a model, not a line of a
    # multi-parameter one, whose terms the combination refits and checks again) the values between the measured ones
    between = evidence.interior(x) if interior else np.zeros(0)
    columns_ref = evaluate_blocks(np.concatenate([np.max(x) * np.asarray(evidence.REFERENCE), between]), blocks)
    penalty = evidence.PENALTY_SCALE * evidence.penalty(n_coef, n_points)
    without_constant = np.concatenate([np.full(h.shape[0], not c) for h, c, _, _ in stacks])
    plain = exponent_complexity(np.abs(blocks))
    cost = evidence.EXPONENT_PRIOR * np.concatenate([plain[h].sum(axis=1) for h, _, _, _ in stacks]).astype(float)
    dof = np.maximum(n_points - n_coef, 1)
    # Stage 1 covers the stacks of at most one term; hypotheses of several terms are the pairs (triples...)
    # of each series' most likely single terms (as the hierarchical search combines the best terms).
    single = int(offsets[min(len(stacks), 3)]) if len(stacks) > 1 else int(offsets[-1])
    multi = [s_index for s_index, (h, _, _, _) in enumerate(stacks) if h.shape[1] >= 2]
    residual_op = residual_op[:, : single * n_points] if multi else residual_op
    lookup = {s_index: _combination_lookup(stacks[s_index][0], blocks.shape[0]) for s_index in multi}
    chunk = max(1, EVIDENCE_CHUNK // max(1, single * n_points))
    for start in range(0, n_series, chunk):
        y = Y[start : start + chunk]
        n_c = y.shape[0]
        # Stage 1, every hypothesis: relative residual sums of squares (one GEMM, one batched mat-vec).
        T = (y @ residual_op).reshape(n_c, -1, n_points)
        np.square(T, out=T)
        magnitude = evidence.magnitudes(y)
        weights = 1.0 / (magnitude * magnitude)
        known = known_noise[start : start + chunk]
        if known.any():
            # Where the repetitions tell the noise: chi-square with each point's own variance
            # (shrunk half-way to the pooled one), so a noisy point counts less.
            pooled = variance[start : start + chunk, None]
            own = point_variance[start : start + chunk]
            own = np.where(np.isfinite(own), own, pooled)
            shrunk = (1.0 - evidence.OWN_VARIANCE) * pooled + evidence.OWN_VARIANCE * own
            weights = np.where(known[:, None], weights / np.maximum(shrunk, evidence.PRECISION), weights)
        rss = np.matmul(T, weights[:, :, None])[:, :, 0]
        width = rss.shape[1]
        rss = np.where(solvable[None, :width] & np.isfinite(rss), rss, np.inf)
        # A term without a constant only where the data clearly fall or rise (the judgement checks the direction).
        rss = np.where(without_constant[None, :width] & (trend[start : start + chunk] == 0)[:, None], np.inf, rss)
        del T
        # Stage 2, the most likely hypotheses (and the constant, always plausible): the full judgement.
        with np.errstate(all="ignore"):
            v = np.fmax(np.where(known, 1.0, np.nan), np.min(rss / dof[:width], axis=1))
            v = np.maximum(np.where(np.isfinite(v), v, evidence.PRECISION), evidence.PRECISION)
            ic = rss / v[:, None] + penalty[:width] + cost[:width]
        # Per stack, so that a few terms always compete with many (the best fits of many terms may all
        # be implausible).
        picks, allowed = [], []
        for s_index, (lo, hi_) in enumerate(zip(offsets[:-1], offsets[1:])):
            size = int(hi_ - lo)
            if s_index in lookup:
                # (a) combinations of the series' best single terms (relative fits) ...
                local, ok = _combinations_of_best(ic[:, offsets[1] : offsets[2]], stacks[1][0], lookup[s_index],
                                                  stacks[s_index][0].shape[1])
                # ... and (b) the best plain least-squares fits of the whole stack (the residual sums of
                # squares as quadratic forms in y, one GEMM): an exact fit of several terms is always among them.
                form, kept = screens[s_index]
                if kept.size <= CANDIDATES:
                    best_plain = np.broadcast_to(kept, (n_c, kept.size))
                else:
                    best_plain = kept[smallest(_products(y) @ form, CANDIDATES)]
                local = np.concatenate([local, best_plain], axis=1)
                ok = np.concatenate([ok, np.ones(best_plain.shape, dtype=bool)], axis=1)
                picks.append(lo + local)
                allowed.append(ok & solvable[lo + local])
                continue
            keep = min(size, CANDIDATES)
            if keep == size:
                pick = np.broadcast_to(np.arange(lo, hi_), (n_c, size))
            else:
                pick = lo + np.argpartition(ic[:, lo:hi_], keep - 1, axis=1)[:, :keep]
            picks.append(pick)
            allowed.append(np.isfinite(np.take_along_axis(rss, pick, axis=1)))
        candidates = np.concatenate(picks, axis=1)
        # Stage 2: the candidates refitted by weighted least squares (each series its own weights:
        # relative, or the noise of each point), so that they are judged by the fit they would get.
        point_weights = np.sqrt(weights)  # (n_c, n_points)
        parts = []
        for s_index, (hypotheses, constant, _, _) in enumerate(stacks):
            local = picks[s_index] - offsets[s_index]
            parts.append(_weighted_candidates(columns, columns_ref, hypotheses[local], constant, y, point_weights,
                                              hi, max_terms + 1))
        chosen_rss, fitted_min, fitted_last, predictions, mix, coefficient_rows = (
            np.concatenate(v, axis=1) for v in zip(*parts))
        # What stage 1 ruled out (invalid, or without a constant where the data do not fall) stays out.
        chosen_rss = np.where(np.concatenate(allowed, axis=1), chosen_rss, np.inf)
        judged = evidence.judge(y, chosen_rss, n_coef[candidates], fitted_min, fitted_last,
                                predictions, mix, np.where(known, 1.0, np.nan), trend[start : start + chunk],
                                cost=cost[candidates],
                                noise_dof=noise_dof[start : start + chunk] if own_residuals else None)
        index[start : start + chunk] = candidates[np.arange(n_c), judged.index]
        chosen_coefficients[start : start + chunk] = coefficient_rows[np.arange(n_c), judged.index]
        spread[start : start + chunk] = judged.spread
        mixed[start : start + chunk] = judged.mixed
        misfit[start : start + chunk] = judged.misfit
        misfit_dof[start : start + chunk] = judged.misfit_dof
        # The trend against the criterion's yardstick: the noise, or where larger the smallest lack of fit
        # (chi-square units where the noise is known, relative variance elsewhere).  Where the repetitions tell the
        # noise, the lack of fit of any hypothesis, plausible or not: values falling in a straight line towards 0
        # (every fit that follows them ruled out) were said to "jump or scatter" against the lack of the mean.
        pooled = np.maximum(np.where(np.isfinite(variance[start : start + chunk]), variance[start : start + chunk],
                                     0.0), evidence.PRECISION)
        with np.errstate(all="ignore"):
            lack = np.where(np.isfinite(judged.lack_any), judged.lack_any, judged.lack)
            yardstick = np.where(known, pooled * np.fmax(lack, 1.0), judged.lack)
        clear_trend[start : start + chunk] = evidence.trend_of(x, y, yardstick)
        # Only where the chosen model misses the measurements beyond the repetitions' noise (the F test of the
        # misfit step): with 1 or 2 repetitions, fits of noise by hypotheses ruled out were clearly better by
        # chance in 1-2 % of the series about a constant or a power.
        beyond = np.zeros(n_c, dtype=bool) if noise is None else evidence.misfitting(
            judged.misfit, judged.misfit_dof, noise.dof[start : start + chunk])
        for s in np.flatnonzero(judged.ruled_out.any(axis=1) & beyond):
            which = np.flatnonzero(judged.ruled_out[s])
            which = which[np.unique(candidates[s, which], return_index=True)[1]]  # each hypothesis once
            found = []
            for k in which:
                h = int(candidates[s, k])
                stack = int(np.searchsorted(offsets, h, side="right") - 1)
                found.append(_where_implausible(x, blocks, stacks[stack][0][h - offsets[stack]],
                                                coefficient_rows[s, k], int(trend[start + s])))
            found = [(at, turn) for at, turn in found if np.isfinite(at)]
            if found:
                at = np.array([a for a, _ in found])
                ruled_at[start + s] = at.min(), np.median(at)
                ruled_kind[start + s] = (1 if any(not t for _, t in found) else 0) + (2 if any(t for _, t in found)
                                                                                      else 0)
                ruled_count[start + s] = len(which)
        if len(stacks) > 1:
            one = rss[:, offsets[1] : offsets[2]]
            best = np.argmin(one, axis=1)
            runner_up[start : start + chunk] = np.where(np.isfinite(one[np.arange(n_c), best]),
                                                       stacks[1][0][best, 0], -1)
    fit = SingleFit(
        blocks=np.full((n_series, max_terms), -1, dtype=np.int64),
        coefficients=np.zeros((n_series, max_terms + 1)),
        n_terms=np.zeros(n_series, dtype=np.int64),
        score=np.zeros(n_series),
        runner_up=runner_up,
        spread=spread,
        mixed=mixed,
        misfit=misfit,
        misfit_dof=misfit_dof,
        trend=clear_trend,
        ruled_at=ruled_at,
        ruled_kind=ruled_kind,
        ruled_count=ruled_count,
    )
    stack_of = np.searchsorted(offsets, index, side="right") - 1
    for s, (hypotheses, _, _, _) in enumerate(stacks):
        members = np.flatnonzero(stack_of == s)
        if members.size == 0:
            continue
        local = index[members] - offsets[s]
        k = hypotheses.shape[1]
        fit.n_terms[members] = k
        fit.blocks[members, :k] = hypotheses[local]
        if k == 0:
            fit.coefficients[members, 0] = Y[members].mean(axis=1)
            continue
        fit.coefficients[members] = chosen_coefficients[members]
    return fit


@functools.lru_cache(maxsize=64)
def _implausible_grid(low: float, high: float) -> np.ndarray:
    """Where :func:`_where_implausible` looks: 200 values from ``low`` to ``high``, 400 from there to 100x it (one
    grid for every hypothesis of every series with those values; read-only)."""
    inside = np.linspace(low, high, 200)
    beyond = np.geomspace(high, high * evidence.REFERENCE[-1], 400) if high > 0 else np.zeros(0)
    grid = np.unique(np.concatenate([inside, beyond]))
    grid.flags.writeable = False
    return grid


def _where_implausible(x: np.ndarray, blocks: np.ndarray, hypothesis: np.ndarray, coefficients: np.ndarray,
                       trend: int) -> tuple[float, bool]:
    """Where a hypothesis ruled implausible goes wrong: the first value of the parameter, from the smallest
    measured one to 100x the largest, at which it predicts 0 or less (``(x, False)``), else the first beyond the
    data where it turns against ``trend`` (``(x, True)``), else ``(nan, False)``.

    ``hypothesis`` holds its block indices, ``coefficients`` the constant (0 without one) and one per block.
    """
    low, high = float(np.min(x)), float(np.max(x))
    grid = _implausible_grid(low, high)
    with np.errstate(all="ignore"):
        columns = evaluate_blocks(grid, blocks[np.asarray(hypothesis, dtype=np.int64)])  # its own blocks only
        values = coefficients[0] + columns @ coefficients[1 : 1 + len(hypothesis)]
    below = np.flatnonzero(~(values > 0))
    if below.size:
        return float(grid[below[0]]), False
    if trend == 0:
        return float("nan"), False
    after = grid >= high
    step = np.diff(values[after]) * trend
    back = np.flatnonzero(step < -1e-9 * np.abs(values[after][:-1]))
    if back.size:
        return float(grid[after][back[0]]), True
    return float("nan"), False


def evidence_or_cv(
    x: np.ndarray,
    Y: np.ndarray,
    blocks: np.ndarray,
    usable: np.ndarray,
    max_terms: int,
    criterion: str,
    improvement: float,
    noise: regression.Noise | None = None,
    interior: bool = True,
    own_residuals: bool = False,
) -> SingleFit:
    """:func:`evidence_search`, and :func:`full_search` for the series that are not PMNF plus noise.

    Where the best plausible hypothesis misses the data by far more than the
    repetitions' noise allows (:func:`evidence.misfitting`), no hypothesis
    describes the data, and the likelihood-based choice follows structure
    that does not extrapolate (a step read as steep growth); the
    noise-tested cross-validation rule, which keeps the constant or the
    simplest exponents there, takes over.  The model-choice spread of those
    series grows by the distance between the two choices' predictions.
    Parameters as :func:`full_search`.
    """
    fit = evidence_search(x, Y, blocks, usable, max_terms, noise, interior=interior, own_residuals=own_residuals)
    if noise is None or fit.misfit is None:
        return fit
    odd = np.flatnonzero(evidence.misfitting(fit.misfit, fit.misfit_dof, noise.dof))
    if odd.size == 0:
        return fit
    part = regression.Noise(noise.variance[odd], noise.dof[odd])
    other = full_search(x, Y[odd], blocks, usable, max_terms, criterion, improvement, part)
    columns_ref = evaluate_blocks(np.max(x) * np.asarray(evidence.REFERENCE), blocks)
    every = np.arange(odd.size)
    after_ref = _predict(other, every, columns_ref)
    # Step 1 holds for the fallback too: positive data never get a model that predicts zero or less.
    inside = evaluate_blocks(np.concatenate([x, evidence.interior(x) if interior else np.zeros(0)]), blocks)
    plausible = ~np.all(Y[odd] > 0, axis=1) | (np.all(after_ref > 0, axis=1)
                                               & np.all(_predict(other, every, inside) > 0, axis=1))
    odd, other_rows, after_ref = odd[plausible], every[plausible], after_ref[plausible]
    with np.errstate(all="ignore"):
        before = np.log(np.abs(_predict(fit, odd, columns_ref)))
        step = np.log(np.abs(after_ref)) - before
        step = np.where(np.isfinite(step), step, 0.0)
    fit.spread[odd] = np.hypot(fit.spread[odd], step)
    for name in ("blocks", "coefficients", "n_terms", "score"):
        getattr(fit, name)[odd] = getattr(other, name)[other_rows]
    fit.mixed[odd] = False  # the cross-validation rule keeps terms of one sign (positive_terms)
    fit.fallback = np.zeros(Y.shape[0], dtype=bool)
    fit.fallback[odd] = True
    return fit


def single_values(fit: SingleFit, columns: np.ndarray) -> np.ndarray:
    """Values of every series' chosen model at the points of ``columns`` (n_points, n_blocks): (n_series, n_points)."""
    return _predict(fit, np.arange(fit.blocks.shape[0]), columns)


def _predict(fit: SingleFit, members: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Values of the chosen models of ``members`` at the points of ``columns`` (n_points, n_blocks)."""
    blocks = fit.blocks[members]
    used = blocks >= 0
    values = np.where(used[:, None, :], columns[:, np.maximum(blocks, 0)].transpose(1, 0, 2), 0.0)
    return fit.coefficients[members, :1] + np.einsum("spk,sk->sp", values, fit.coefficients[members, 1:])


def _weighted_candidates(columns, columns_ref, hypotheses, constant: bool, y, w, last: int, width: int):
    """Weighted least squares of each series under each of its candidate hypotheses.

    Parameters
    ----------
    columns : ndarray, shape (n_points, n_blocks)
    columns_ref : ndarray, shape (n_ref, n_blocks)
    hypotheses : ndarray of int, shape (n_s, K, k)
    constant : bool
    y, w : ndarray, shape (n_s, n_points)
        Values and the square roots of their weights.
    last : int
        The point whose fitted value starts the extrapolation.

    Returns
    -------
    rss (n_s, K), fitted_min (n_s, K), fitted_last (n_s, K), predictions (n_s, K, n_ref),
    mixed (n_s, K), coefficients (n_s, K, width) with the constant first (0 without one), zero-padded.
    """
    n_s, K, k = hypotheses.shape
    n_points = columns.shape[0]
    A = columns[:, hypotheses].transpose(1, 2, 0, 3)  # (n_s, K, n_points, k)
    A_ref = columns_ref[:, hypotheses].transpose(1, 2, 0, 3)
    if constant:
        A = np.concatenate([np.ones((n_s, K, n_points, 1)), A], axis=3)
        A_ref = np.concatenate([np.ones(A_ref.shape[:3] + (1,)), A_ref], axis=3)
    q = A.shape[3]
    with np.errstate(all="ignore"):
        Aw = A * w[:, None, :, None]
        scale = _largest_over_points(np.abs(Aw))  # (n_s, K, q)
        scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
        As = Aw / scale[:, :, None, :]
        G = _gram(As)
        b = np.einsum("skpa,sp->ska", As, y * w)
        ok = np.all(np.isfinite(G), axis=(2, 3)) & np.all(np.isfinite(b), axis=2)
        G = np.where(ok[:, :, None, None], G, np.eye(q))
        b = np.where(ok[:, :, None], b, 0.0)
        # A ridge at rounding level keeps near-singular systems solvable.
        G = G + 1e-13 * np.eye(q) * np.trace(G, axis1=2, axis2=3)[:, :, None, None]
        try:
            c = np.linalg.solve(G, b[..., None])[..., 0] / scale  # (n_s, K, q)
        except np.linalg.LinAlgError:  # an exactly singular system among them: the least-squares solution
            c = (np.linalg.pinv(G) @ b[..., None])[..., 0] / scale
        fitted = np.einsum("skpa,ska->skp", A, c)
        residual = (y[:, None, :] - fitted) * w[:, None, :]
        rss = np.einsum("skp,skp->sk", residual, residual)
        predictions = np.einsum("skra,ska->skr", A_ref, c)
    rss = np.where(ok & np.isfinite(rss), rss, np.inf)
    terms = c[:, :, 1:] if constant else c
    mixed = (np.max(terms, axis=2) > 0) & (np.min(terms, axis=2) < 0) if terms.shape[2] >= 2 else \
        np.zeros((n_s, K), dtype=bool)
    coefficients = np.zeros((n_s, K, width))
    if constant:
        coefficients[:, :, : q] = c
    else:
        coefficients[:, :, 1 : 1 + k] = c
    return rss, fitted.min(axis=2), fitted[:, :, last], predictions, mixed, coefficients


def _largest_over_points(values: np.ndarray) -> np.ndarray:
    """``values.max(axis=2)`` for (n_s, K, n_points, q): a loop over the few points is faster."""
    largest = values[:, :, 0].copy()
    for point in range(1, values.shape[2]):
        np.maximum(largest, values[:, :, point], out=largest)
    return largest


def _gram(A: np.ndarray) -> np.ndarray:
    """``A^T A`` of each (n_points, q) matrix of A (n_s, K, n_points, q): loops over the few points and
    coefficients are several times faster than ``einsum`` there, and give the same sums."""
    q = A.shape[3]
    G = np.empty(A.shape[:2] + (q, q))
    for a in range(q):
        for b in range(a, q):
            total = A[:, :, 0, a] * A[:, :, 0, b]
            for point in range(1, A.shape[2]):
                total += A[:, :, point, a] * A[:, :, point, b]
            G[:, :, a, b] = total
            G[:, :, b, a] = total
    return G


STRONG_SCALING_PARTNERS = ((-0.5, 0.0), (-2.0 / 3.0, 0.0), (-1.0, 0.0), (-2.0, 0.0), (0.0, -1.0))
"""The falling factors that share a hypothesis with a rising term (``a / p + b log2(p)``: work divided
among ranks plus communication); falling factors pair freely with each other."""


def _sensible_combinations(blocks: np.ndarray, hypotheses: np.ndarray) -> np.ndarray:
    """Which hypotheses of several terms to keep: every falling factor in them one of
    :data:`STRONG_SCALING_PARTNERS` (a bool mask over the rows of ``hypotheses``)."""
    i, j = blocks[hypotheses, 0], blocks[hypotheses, 1]
    falling = (i < 0) | ((i == 0) & (j < 0))
    partner = np.zeros(hypotheses.shape, dtype=bool)
    for a, b in STRONG_SCALING_PARTNERS:
        partner |= np.isclose(i, a) & (j == b)
    # every factor falling (1/p + 1/p^2 ...), or every falling factor a strong-scaling partner
    return np.all(falling, axis=1) | np.all(~falling | partner, axis=1)


EVIDENCE_CHUNK = 1 << 20
"""Work arrays of the evidence search are cut into pieces of about this many float64 values (8 MB: they
stay in the cache; measured faster than 32 MB pieces)."""

CANDIDATES = 12
"""One-term hypotheses (with, and without, a constant) per series that get the full judgement: the
most likely by the information criterion of the shared fits."""

BEST_SINGLES = 5
"""Hypotheses of several terms judged per series: every combination of its this many most likely
single terms (10 pairs), besides the :data:`CANDIDATES` best plain least-squares fits of the stack."""


def _products(y: np.ndarray) -> np.ndarray:
    """The products ``y_i y_j`` (i <= j) of each series: shape (n_s, n_points (n_points + 1) / 2)."""
    upper = np.triu_indices(y.shape[1])
    return y[:, upper[0]] * y[:, upper[1]]


def _residual_form(Q: np.ndarray) -> np.ndarray:
    """Residual sums of squares of a stack as quadratic forms: ``_products(y) @ result``.

    The residual of a least-squares fit is ``(I - Q Q^T) y``, its sum of squares
    ``y^T (I - Q Q^T) y``: the upper triangle of ``I - Q Q^T`` (off-diagonal doubled)
    weighs the products ``y_i y_j``.

    Parameters
    ----------
    Q : ndarray, shape (n_hyp, n_points, n_coef)

    Returns
    -------
    ndarray, shape (n_points (n_points + 1) / 2, n_hyp)
    """
    n_points = Q.shape[1]
    residual = np.eye(n_points) - Q @ Q.transpose(0, 2, 1)
    upper = np.triu_indices(n_points)
    form = residual[:, upper[0], upper[1]] * np.where(upper[0] == upper[1], 1.0, 2.0)
    return np.ascontiguousarray(form.T)


def smallest(values: np.ndarray, k: int) -> np.ndarray:
    """Column positions of the ``k`` smallest values of each row, in increasing order of value.

    Faster than ``argpartition`` on long rows: the largest of the minima of ``k``
    disjoint groups of columns bounds the ``k``-th smallest value from above, so only
    the few values below it are sorted.

    Parameters
    ----------
    values : ndarray, shape (n_rows, size)
        ``1 <= k <= size``; NaN counts as the largest value.

    Returns
    -------
    ndarray of int, shape (n_rows, k)
    """
    n_rows, size = values.shape
    group = size // k
    bound = values[:, : group * k].reshape(n_rows, group, k).min(axis=1).max(axis=1)
    if np.isnan(bound).any():  # overflowing values: NaN last, as argpartition orders them
        values = np.where(np.isnan(values), np.inf, values)
        bound = np.where(np.isnan(bound), np.inf, bound)
    rows, columns = np.nonzero(values <= bound[:, None])  # at least k per row (the k group minima)
    order = np.lexsort((values[rows, columns], rows))
    counts = np.bincount(rows, minlength=n_rows)
    starts = np.cumsum(counts) - counts
    return columns[order[starts[:, None] + np.arange(k)]]


def _combination_lookup(hypotheses: np.ndarray, n_blocks: int):
    """Position of each hypothesis of a stack by its blocks: a dense table for pairs, a dict beyond."""
    if hypotheses.shape[1] == 2:
        table = np.full((n_blocks, n_blocks), -1, dtype=np.int64)
        table[hypotheses[:, 0], hypotheses[:, 1]] = np.arange(hypotheses.shape[0])
        return table
    return {tuple(row): position for position, row in enumerate(hypotheses.tolist())}


def _combinations_of_best(ic_single: np.ndarray, singles: np.ndarray, lookup: dict, k: int):
    """Every ``k``-combination of each series' :data:`BEST_SINGLES` most likely single blocks.

    Returns positions in the ``k``-term stack (n_s, C(M, k)) and whether each exists there (combinations
    left out of the stack, see :func:`_sensible_combinations`, do not).
    """
    n_s, size = ic_single.shape
    m = min(BEST_SINGLES, size)
    order = np.argsort(ic_single, axis=1)[:, :m]
    best = singles[order, 0]  # (n_s, m) block ids
    rows = combinations(m, k)  # (n_comb, k)
    chosen = np.sort(best[:, rows], axis=2)  # (n_s, n_comb, k)
    if isinstance(lookup, np.ndarray):
        found = lookup[chosen[:, :, 0], chosen[:, :, 1]]
    else:
        flat = chosen.reshape(-1, k).tolist()
        found = np.fromiter((lookup.get(tuple(r), -1) for r in flat), dtype=np.int64, count=len(flat))
        found = found.reshape(n_s, rows.shape[0])
    return np.maximum(found, 0), found >= 0


def _evidence_operators(stacks, n_points: int):
    """What stage 1 of :func:`evidence_search` applies to the series (cached on the stacks' tuple).

    Returns
    -------
    residual_op : ndarray, shape (n_points, n_hyp * n_points)
        ``y @ residual_op`` gives the residuals of every hypothesis.
    screens : dict
        Per stack of several terms: its :func:`_residual_form` over the solvable hypotheses, and their
        positions in the stack.
    solvable : ndarray of bool, shape (n_hyp,)
    """
    key = id(stacks)
    cached = _OPERATORS.get(key)
    if cached is not None and cached[0] is stacks:
        return cached[1]
    residual, solvable, screens = [], [], {}
    for s_index, (hypotheses, _, f, op) in enumerate(stacks):
        ops = op.transpose(1, 2, 0)  # (n_hyp, rows_k, n_points)
        fitted = ops[:, :n_points, :]
        residual.append(np.eye(n_points)[None] - fitted)  # (n_hyp, n_points (out), n_points (in))
        ok = f.solvable & np.all(np.isfinite(ops), axis=(1, 2))
        solvable.append(ok)
        if hypotheses.shape[1] >= 2:
            kept = np.flatnonzero(ok & np.all(np.isfinite(f.Q), axis=(1, 2)))
            screens[s_index] = (_residual_form(f.Q[kept]), kept)
    R = np.concatenate(residual)
    residual_op = np.ascontiguousarray(R.transpose(2, 0, 1).reshape(n_points, -1))
    residual_op[~np.isfinite(residual_op)] = 0.0
    result = (residual_op, screens, np.concatenate(solvable))
    _OPERATORS.clear()
    _OPERATORS[key] = (stacks, result)
    return result


_OPERATORS: dict = {}


@functools.lru_cache(maxsize=32)
def _evidence_stacks(x_bytes: bytes, blocks_bytes: bytes, usable_bytes: bytes, max_terms: int, no_constant: bool):
    """The hypothesis stacks of :func:`evidence_search` for one point set (cached: groups repeat point sets)."""
    x = np.frombuffer(x_bytes, dtype=np.float64)
    blocks = np.frombuffer(blocks_bytes, dtype=np.float64).reshape(-1, 2)
    usable = np.frombuffer(usable_bytes, dtype=bool)
    columns = evaluate_blocks(x, blocks)
    reference = np.max(x) * np.asarray(evidence.REFERENCE)
    columns_ref = evaluate_blocks(reference, blocks)
    usable_ids = np.flatnonzero(usable)
    limit = min(term_limit(x.size, max_terms), usable_ids.size)
    stacks = []  # (hypotheses, has_constant, factorization, op)
    for k in range(limit + 1):
        variants = (True, False) if (k == 1 and no_constant) else (True,)
        for constant in variants:
            hypotheses = usable_ids[combinations(usable_ids.size, k)]
            if k >= 2:
                hypotheses = hypotheses[_sensible_combinations(blocks, hypotheses)]
            if not constant:  # one term without a constant: counts divided among ranks (c / p), or c · p^a
                first = blocks[hypotheses[:, 0]]
                hypotheses = hypotheses[(first[:, 0] != 0) | (first[:, 1] != 0)]
                if hypotheses.shape[0] == 0:
                    continue
            A = design(columns, hypotheses)
            A_ref = design(columns_ref, hypotheses)
            if not constant:
                A, A_ref = A[:, :, 1:], A_ref[:, :, 1:]
            f = regression.factorize(A)
            op = evidence.operators(f.Q, f.R, f.scale, f.solvable, A_ref, constant)
            stacks.append((hypotheses, constant, f, op))
    n_coef = np.concatenate([np.full(h.shape[0], h.shape[1] + int(c)) for h, c, _, _ in stacks])
    offsets = np.cumsum([0] + [h.shape[0] for h, _, _, _ in stacks])
    return stacks, n_coef, offsets


def relative_fit(columns: np.ndarray, hypotheses: np.ndarray, constant: bool, Y: np.ndarray) -> np.ndarray:
    """Coefficients of each series under its own hypothesis by relative least squares (weights ``1 / |y|``).

    Relative errors are the right measure for noise proportional to the value,
    and they keep the fit exact to rounding when values span many orders of
    magnitude (``200 + p^3`` at p = 10 ... 1e5 keeps its 200).

    Parameters
    ----------
    columns : ndarray, shape (n_points, n_blocks)
    hypotheses : ndarray of int, shape (n_series, k)
    constant : bool
    Y : ndarray, shape (n_series, n_points)

    Returns
    -------
    ndarray, shape (n_series, k + constant)
    """
    A = columns[:, hypotheses].transpose(1, 0, 2)  # (n_series, n_points, k)
    if constant:
        A = np.concatenate([np.ones(A.shape[:2] + (1,)), A], axis=2)
    magnitude = np.abs(Y)
    magnitude = np.maximum(magnitude, 1e-3 * np.mean(magnitude, axis=1, keepdims=True))
    w = np.where(magnitude > 0, 1.0 / np.where(magnitude > 0, magnitude, 1.0), 1.0)
    f = regression.factorize(A * w[:, :, None])
    return regression.solve(f, Y * w)


def golden_search(
    x: np.ndarray,
    Y: np.ndarray,
    blocks: np.ndarray,
    usable: np.ndarray,
    max_terms: int,
    criterion: str,
    improvement: float,
    noise: regression.Noise | None = None,
) -> SingleFit:
    """Calotoiu et al. 2016's modified golden-section search over slope-ordered hypotheses.

    Sorting all blocks by slope makes the error unimodal only for pure powers
    (Calotoiu et al. 2016 uses J = {0}); with logarithms the order interleaves families.
    So, as in the Extra-P slides (004, "slices"), the blocks are cut into
    slices along which the error is unimodal: one per log exponent ``j``
    (``x^i log2(x)^j`` for every ``i``) and one of pure logarithms
    (``log2(x)^j``).  Each slice is searched by golden section, sorted by
    slope at ``max(x)``, and the best slice minimum wins.  A second term (if
    ``max_terms >= 2`` and the points allow) is searched the same way with
    the first fixed; terms beyond two are not searched.  Same parameters and
    result as :func:`full_search`.
    """
    n_series, n_points = Y.shape
    columns = evaluate_blocks(x, blocks)
    usable_ids = np.flatnonzero(usable)
    n_usable = usable_ids.size
    limit = min(term_limit(n_points, max_terms), n_usable, 2)
    rows = np.arange(n_series)
    best_score = np.full((n_series, max_terms + 1), np.inf)
    constant = regression.factorize(np.ones((1, n_points, 1)))
    best_score[:, 0] = regression.best_shared(Y, constant, criterion)[1]
    stacks = [(np.zeros((1, 0), dtype=np.int64), constant, np.zeros(n_series, dtype=np.int64))]
    if limit >= 1:
        slices = _slices(float(np.max(x)), blocks[usable_ids])  # positions among the usable blocks
        f1 = regression.factorize(design(columns, usable_ids[:, None]))
        first = np.zeros(n_series, dtype=np.int64)
        first_score = np.full(n_series, np.inf)
        for positions in slices:
            candidates = np.broadcast_to(positions, (n_series, positions.size))
            lengths = np.full(n_series, positions.size)
            found = candidates[rows, _golden_lockstep(Y, f1, candidates, lengths, criterion, noise)]
            score = _objective(Y, f1, found, criterion, noise)
            better = score < first_score
            first, first_score = np.where(better, found, first), np.where(better, score, first_score)
        best_score[:, 1] = _objective(Y, f1, first, criterion, None)
        stacks.append((usable_ids[:, None], f1, first))
    if limit >= 2:
        pairs = combinations(n_usable, 2)
        f2 = regression.factorize(design(columns, usable_ids[pairs]))
        pair_id = np.full((n_usable, n_usable), -1, dtype=np.int64)
        pair_id[pairs[:, 0], pairs[:, 1]] = np.arange(pairs.shape[0])
        pair_id[pairs[:, 1], pairs[:, 0]] = np.arange(pairs.shape[0])
        second = np.zeros(n_series, dtype=np.int64)
        second_score = np.full(n_series, np.inf)
        for positions in slices:
            # Each series searches the slice without its first term.
            keep = positions[None, :] != first[:, None]
            lengths = keep.sum(axis=1)
            order = np.argsort(~keep, axis=1, kind="stable")
            others = np.take_along_axis(np.broadcast_to(positions, keep.shape), order, axis=1)
            others = np.where(np.arange(positions.size)[None, :] < lengths[:, None], others, others[:, :1])
            if positions.size < 2 and not (lengths > 0).any():
                continue
            candidates = pair_id[first[:, None], others]
            found = candidates[rows, _golden_lockstep(Y, f2, candidates, np.maximum(lengths, 1), criterion, noise)]
            score = np.where(lengths > 0, _objective(Y, f2, np.maximum(found, 0), criterion, noise), np.inf)
            score = np.where(found >= 0, score, np.inf)
            better = score < second_score
            second, second_score = np.where(better, found, second), np.where(better, score, second_score)
        best_score[:, 2] = _objective(Y, f2, np.maximum(second, 0), criterion, None)
        stacks.append((usable_ids[pairs], f2, np.maximum(second, 0)))
    explained = None
    if noise is not None:
        explained = np.zeros((n_series, max_terms + 1), dtype=bool)
        for k, (_, factorization, index) in enumerate(stacks):
            residuals = regression.shared_residuals(factorization, index, Y)
            explained[:, k] = regression.explained_by_noise(Y, residuals, factorization.leverage[index], noise)
    chosen = regression.select_by_terms(best_score, criterion, improvement, explained)
    fit = SingleFit(
        blocks=np.full((n_series, max_terms), -1, dtype=np.int64),
        coefficients=np.zeros((n_series, max_terms + 1)),
        n_terms=chosen,
        score=best_score[rows, chosen],
        runner_up=usable_ids[stacks[1][2]] if len(stacks) > 1 else np.full(n_series, -1),
    )
    for k, (hypotheses, factorization, index) in enumerate(stacks):
        members = np.flatnonzero(chosen == k)
        if members.size:
            _fill(fit, members, hypotheses[index[members]], factorization, index[members], Y)
    return fit


def _slices(x_max: float, blocks: np.ndarray) -> list[np.ndarray]:
    """Unimodal slices of the blocks, each sorted by slope at ``x_max`` (positions into ``blocks``)."""
    order = slope_order(x_max, blocks)
    slices = []
    for j in np.unique(blocks[:, 1]):
        members = order[blocks[order, 1] == j]
        if members.size:
            slices.append(members)
    pure_logs = order[blocks[order, 0] == 0]
    if pure_logs.size > 1:
        slices.append(pure_logs)
    return slices


def _golden_lockstep(
    Y: np.ndarray,
    f: regression.Factorization,
    candidates: np.ndarray,
    lengths: np.ndarray,
    criterion: str,
    noise: regression.Noise | None,
) -> np.ndarray:
    """Golden-section search for each series' minimum along its candidate list.

    Parameters
    ----------
    Y : ndarray, shape (n_series, n_points)
    f : Factorization of the hypotheses, Q of shape (n_hypotheses, n_points, n_coef)
    candidates : ndarray of int, shape (n_series, n_candidates)
        Each series' hypotheses in search order.
    lengths : ndarray of int, shape (n_series,)
        How many leading candidates of each row are real (>= 1).

    Returns
    -------
    ndarray of int, shape (n_series,)
        Position in ``candidates`` of the minimum found.  Each step evaluates
        at most one new hypothesis per series; earlier values are reused.
    """
    n_series, n = candidates.shape
    rows = np.arange(n_series)
    cache = np.full((n_series, n), np.nan)

    def value(position):
        missing = np.isnan(cache[rows, position])
        if missing.any():
            who = rows[missing]
            hypothesis = candidates[who, position[missing]]
            part = None if noise is None else regression.Noise(noise.variance[who], noise.dof[who])
            score = _objective(Y[who], f, np.maximum(hypothesis, 0), criterion, part)
            cache[who, position[missing]] = np.where(hypothesis >= 0, score, np.inf)
        return cache[rows, position]

    lo = np.zeros(n_series, dtype=np.int64)
    hi = np.maximum(lengths - 1, 0).astype(np.int64)
    while True:
        open_ = hi - lo > 2
        if not open_.any():
            break
        step = np.rint((hi - lo) / GOLDEN).astype(np.int64)
        a = np.where(open_, hi - step, lo)
        b = np.where(open_, lo + step, hi)
        b = np.where(b <= a, np.minimum(a + 1, hi), b)
        left = value(a) <= value(b)  # the minimum lies in [lo, b]
        hi = np.where(open_ & left, b, hi)
        lo = np.where(open_ & ~left, a, lo)
    # At most three candidates remain: take the best.
    best = lo.copy()
    best_value = value(lo)
    for offset in (1, 2):
        position = np.minimum(lo + offset, hi)
        v = value(position)
        better = v < best_value
        best = np.where(better, position, best)
        best_value = np.where(better, v, best_value)
    return best


def _objective(Y, f: regression.Factorization, index, criterion: str, noise) -> np.ndarray:
    """Score of each series under its own hypothesis ``index[s]``, shape (n_series,).

    With ``noise``, hypotheses not explained by noise get 1e6 added, so any
    explained one ranks first while the order within each class is kept.
    """
    Q = f.Q[index]
    residuals = Y - np.einsum("spk,sk->sp", Q, np.einsum("spk,sp->sk", Q, Y))
    E = residuals.copy()
    if criterion != "rss":
        with np.errstate(divide="ignore", invalid="ignore"):
            E /= 1.0 - f.leverage[index]
    scores = regression.score_residuals(E[:, None, :], Y, criterion)[:, 0]
    scores[~f.valid[index]] = np.inf
    if noise is not None:
        explained = regression.explained_by_noise(Y, residuals, f.leverage[index], noise)
        known = np.isfinite(noise.variance)
        scores = scores + np.where(known & ~explained, 1e6, 0.0)
    return scores


def _fill(fit: SingleFit, members, hypotheses, factorization, index, Y) -> None:
    """Store the coefficients of ``members`` fitted to their chosen hypotheses."""
    k = hypotheses.shape[1]
    chosen = regression.Factorization(
        factorization.Q[index], factorization.R[index], factorization.scale[index],
        factorization.leverage[index], factorization.valid[index],
    )
    # The constant alone is the mean, exactly.
    coefficients = regression.solve(chosen, Y[members]) if k else Y[members].mean(axis=1, keepdims=True)
    fit.blocks[members, :k] = hypotheses
    fit.coefficients[members, : k + 1] = coefficients
