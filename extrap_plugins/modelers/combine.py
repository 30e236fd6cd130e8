"""The second stage of the hierarchical search: combine single-parameter models.

Calotoiu et al. 2016, Section IV-B: with the best single-parameter model of every
parameter known, the multi-parameter model is searched only among the
additive and multiplicative combinations of their terms.  A *product term*
takes, for each parameter, one term of that parameter's model or nothing
(``x^2``, ``x^2 * log2(y)``, ...); a hypothesis is a set of product terms
plus the constant.  Parameters whose single-parameter model is constant do
not appear, and every hypothesis may leave parameters out, so parameters
that do not matter drop out.

Series differ in their single-parameter models, hence in their hypotheses.
Series with the same *shape* (number of terms per parameter) share the same
templates, so the work is one batched QR per (shape, hypothesis size) over
every distinct set of single-parameter models, in chunks.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from dataclasses import dataclass

import numpy as np

from extrap_plugins.modelers import evidence, regression
from extrap_plugins.modelers.hypotheses import evaluate_blocks

from .search import SingleFit
from .segmentation import lines_along

BUDGET = 400
"""Most hypotheses per shape before the enumeration is restricted."""

OFFERED_COST = 2.0 * evidence.PENALTY_SCALE
"""IC units a hypothesis pays per parameter it uses whose term its line did not choose (the runner-up offered
where the line chose the constant): one free parameter, AIC's 2 scaled as every complexity cost is
(:data:`~extrap_plugins.modelers.evidence.PENALTY_SCALE`).  Without it the combination takes the offered term at
no cost wherever it fits the noise a little better: the closest of some eighty one-term fits of a flat, noisy line
is a steep term, which its product with another parameter's term then carries far beyond the data.  Charged by
the evidence selection (``selection="evidence"``, the default); ``selection="cv"`` is unchanged."""


FLAT = 1e-12
"""A line whose values differ by at most this share of their largest magnitude is flat to rounding: every
hypothesis fits it equally well (residuals of some 1e-27 relative), and which one-term fit is "best" is decided
by the last bits of the arithmetic -- which depend on how many series were batched with it (a BLAS product of one
row rounds otherwise than one of four).  Far above double rounding, far below any measured effect
(:data:`~extrap_plugins.modelers.evidence.PRECISION`: measurements hold some 7 digits)."""


def withhold_flat_runner_up(single: SingleFit, line_values: np.ndarray) -> None:
    """No runner-up for series whose line is flat to rounding (:data:`FLAT`; in place).

    Where a line chose the constant, the combination is offered the line's best one-term fit
    (:func:`~extrap_plugins.modelers.base.reconsider`): an effect that hides in the noise of the line may show on
    the other points.  A line whose values are equal to rounding has no best one-term fit -- all of them fit
    exactly, with coefficients of 0 -- so the term offered was chosen by rounding, and with it the hypotheses the
    combination judged and the model-choice spread: ``experiment_MP.txt``'s ``met1`` (equal values along ``n`` at
    every ``p``) got the spread (0.399, 1.734, 4.137, 10.96) modelled beside three other call paths and
    (0.467, 1.972, 4.48, 11.56) alone (``--callpath met1``), its 95 % interval at p = n = 40,000 up to 70.2 or
    77.7.  Such a parameter has nothing to offer; a series' model no longer depends on the series beside it.

    Parameters
    ----------
    single : SingleFit
        The line's fit; its ``runner_up`` becomes -1 where the line is flat.
    line_values : ndarray, shape (n_series, n_values)
        The values the line was fitted to (NaN where unknown).

    Examples
    --------
    >>> single = SingleFit(np.zeros((2, 1), dtype=np.int64), np.zeros((2, 2)), np.zeros(2, dtype=np.int64),
    ...                    np.zeros(2), runner_up=np.array([7, 7]))
    >>> withhold_flat_runner_up(single, np.array([[4.068, 4.068, 4.068 * (1 + 1e-16)], [4.0, 4.0, 4.1]]))
    >>> single.runner_up.tolist()
    [-1, 7]
    """
    if single.runner_up is None:
        return
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a line without values
        spread = np.nanmax(line_values, axis=1) - np.nanmin(line_values, axis=1)
        magnitude = np.nanmax(np.abs(line_values), axis=1)
    flat = spread <= FLAT * magnitude
    single.runner_up = np.where(flat, -1, single.runner_up)


@dataclass
class MultiFit:
    """Chosen multi-parameter models of a batch of series.

    Attributes
    ----------
    terms : ndarray of int, shape (n_series, max_terms, n_params)
        ``terms[s, t, l]`` is the building block of parameter ``l`` in
        product term ``t`` of series ``s``; -1 where the parameter is absent
        or the slot unused.
    coefficients : ndarray, shape (n_series, max_terms + 1)
        Constant first, then one per product term.
    n_terms : ndarray of int, shape (n_series,)
    score : ndarray, shape (n_series,)
    """

    terms: np.ndarray
    coefficients: np.ndarray
    n_terms: np.ndarray
    score: np.ndarray
    spread: np.ndarray | None = None
    mixed: np.ndarray | None = None


@functools.lru_cache(maxsize=256)
def templates(shape: tuple[int, ...], max_terms: int) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Product terms and hypotheses for single-parameter models with ``shape`` terms.

    Parameters
    ----------
    shape : tuple of int, length n_params
        Number of terms in each parameter's single-parameter model.
    max_terms : int
        Largest number of product terms in a hypothesis.

    Returns
    -------
    products : ndarray of int, shape (n_products, n_params)
        For each product term and parameter, which of the parameter's terms
        it uses, -1 for none.
    hypotheses : tuple of ndarray, one per size k = 0..max_terms
        ``hypotheses[k]`` has shape (n_hypotheses_k, k): rows of indices into
        ``products``.  Every subset of product terms up to ``max_terms`` is a
        hypothesis; beyond :data:`BUDGET` subsets only those that use all
        terms of each parameter they involve are kept, smallest first.

    Examples
    --------
    >>> products, hypotheses = templates((1, 1), 2)
    >>> products.tolist()
    [[-1, 0], [0, -1], [0, 0]]
    >>> [h.shape[0] for h in hypotheses]
    [1, 3, 3]
    """
    choices = [range(-1, n) for n in shape]
    products = np.asarray(
        [c for c in itertools.product(*choices) if any(v >= 0 for v in c)], dtype=np.int64
    ).reshape(-1, len(shape))
    n_products = products.shape[0]
    total = sum(math.comb(n_products, k) for k in range(1, max_terms + 1))
    by_size = [np.zeros((1, 0), dtype=np.int64)]
    kept = 1
    for k in range(1, max_terms + 1):
        rows = []
        for subset in itertools.combinations(range(n_products), k):
            if total > BUDGET and not _covers(products[list(subset)], shape):
                continue
            rows.append(subset)
            if kept + len(rows) > 4 * BUDGET:
                break
        kept += len(rows)
        by_size.append(np.asarray(rows, dtype=np.int64).reshape(-1, k))
    return products, tuple(by_size)


def _covers(chosen: np.ndarray, shape: tuple[int, ...]) -> bool:
    """Every parameter used by ``chosen`` product terms appears with all its terms."""
    for param, n in enumerate(shape):
        used = set(int(v) for v in chosen[:, param] if v >= 0)
        if used and len(used) != n:
            return False
    return True


def product_values(columns: list[np.ndarray], signatures: list[np.ndarray], products: np.ndarray) -> np.ndarray:
    """Evaluate product terms for a batch of single-parameter model sets.

    Parameters
    ----------
    columns : list of ndarray, one per parameter, shape (n_points, n_blocks)
        Every block evaluated at the points (see :func:`evaluate_blocks`).
    signatures : list of ndarray, one per parameter, shape (n_sets, n_terms_l)
        The blocks of each parameter's model in each set.
    products : ndarray of int, shape (n_products, n_params)

    Returns
    -------
    ndarray, shape (n_sets, n_products, n_points)
    """
    n_sets = signatures[0].shape[0]
    n_points = columns[0].shape[0]
    result = np.ones((n_sets, products.shape[0], n_points))
    for param, (cols, blocks) in enumerate(zip(columns, signatures)):
        values = np.concatenate(
            [cols[:, blocks].transpose(1, 2, 0), np.ones((n_sets, 1, n_points))], axis=1
        )  # (n_sets, n_terms_l + 1, n_points); the last row is "absent"
        choice = np.where(products[:, param] >= 0, products[:, param], blocks.shape[1])
        result *= values[:, choice, :]
    return result


def multi_values(fit: MultiFit, points: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """Values of each series' chosen model at ``points`` (the first ``n_terms`` product terms).

    Parameters
    ----------
    fit : MultiFit
        Or anything with its ``terms``, ``coefficients`` and ``n_terms`` (a modeler's ``Result``).
    points : ndarray, shape (n, n_params)
    blocks : ndarray, shape (n_blocks, 2)

    Returns
    -------
    ndarray, shape (n_series, n)
    """
    n_series, slots, n_params = fit.terms.shape
    value = np.repeat(fit.coefficients[:, :1], points.shape[0], axis=1)
    if not slots:
        return value
    products = np.ones((n_series, slots, points.shape[0]))
    for param in range(n_params):
        columns = evaluate_blocks(points[:, param], blocks)  # (n, n_blocks)
        ids = fit.terms[:, :, param]
        products = products * np.where((ids >= 0)[..., None], columns.T[np.maximum(ids, 0)], 1.0)
    used = np.arange(slots)[None, :] < fit.n_terms[:, None]
    with np.errstate(all="ignore"):
        contribution = np.where(used[..., None], fit.coefficients[:, 1:, None] * products, 0.0)
    return value + contribution.sum(axis=1)


def additive_parameters(fit: MultiFit) -> np.ndarray:
    """Which parameters each model has in a term of their own, or in no term at all.

    Returns
    -------
    ndarray of bool, shape (n_series, n_params)
        False where the parameter appears only in products with other parameters.
    """
    n_series, slots, n_params = fit.terms.shape
    used = (fit.terms >= 0) & (np.arange(slots)[None, :, None] < fit.n_terms[:, None, None])
    alone = used & (used.sum(axis=2, keepdims=True) == 1)
    return alone.any(axis=1) | ~used.any(axis=1)


def combined_spread(combination: np.ndarray, lines: list[np.ndarray], line_values: list[np.ndarray],
                    joint_values: np.ndarray, additive: np.ndarray) -> np.ndarray:
    """The model-choice spread of a multi-parameter model: the combination's and each parameter's.

    Each parameter's spread (log scale) is about its own line's level.  Where the
    model has the parameter only in products with others (``c f(p) g(n)``), it carries
    over to the model as it is.  Where the parameter has a term of its own
    (``c0 + f(p) + g(n)``), or none at all (a term the line could not tell from noise
    would add to the others), the same absolute uncertainty, ``spread * line value``,
    is a share ``line value / model value`` of the model's prediction -- larger where
    the model falls along another parameter (a rising term of ``n`` dominates once
    ``c / p`` has fallen); the larger of the two readings counts there.  The parts
    add in quadrature.

    Parameters
    ----------
    combination : ndarray, shape (n_series, n_ref)
        The spread of the combination's hypotheses (NaN where unknown).
    lines : list of ndarray, one per parameter, shape (n_series, n_ref)
        Each parameter's single-parameter spread at the reference multiples of its line.
    line_values : list of ndarray, one per parameter, shape (n_series, n_ref)
        Each parameter's line model at those multiples.
    joint_values : ndarray, shape (n_series, n_ref)
        The model at the reference multiples of every parameter at once.
    additive : ndarray of bool, shape (n_series, n_params)
        Which parameters the model has in a term of their own, or not at all (:func:`additive_parameters`).

    Returns
    -------
    ndarray, shape (n_series, n_ref)
    """
    total = combination * combination
    for param, (spread, values) in enumerate(zip(lines, line_values)):
        with np.errstate(all="ignore"):
            ratio = np.abs(values) / np.abs(joint_values)
        ratio = np.where(np.isfinite(ratio) & additive[:, param : param + 1], np.maximum(ratio, 1.0), 1.0)
        part = np.where(np.isfinite(spread), spread, 0.0) * ratio
        total = total + part * part
    return np.sqrt(total)


def combine(
    X: np.ndarray,
    Y: np.ndarray,
    singles: list[SingleFit],
    blocks: np.ndarray,
    max_terms: int,
    criterion: str,
    improvement: float,
    noise: regression.Noise | None = None,
    weighted: bool = False,
    selection: str = "cv",
) -> MultiFit:
    """Choose each series' best combination of its single-parameter models' terms.

    Parameters
    ----------
    X : ndarray, shape (n_points, n_params)
        Every measurement point (the hypotheses are fitted to all of them).
    Y : ndarray, shape (n_series, n_points)
    singles : list of SingleFit, one per parameter
        The single-parameter models (from the parameter's line).
    blocks : ndarray, shape (n_blocks, 2)
    max_terms : int
        Largest number of product terms in a hypothesis.
    criterion, improvement
        As for :func:`extrap_plugins.modelers.regression.select_by_terms`.
    noise : Noise, optional
        Measurement noise from the repetitions (see :func:`full_search`).
    weighted : bool
        Fit relative errors (weighted least squares, weights ``1 / |y|``):
        right for noise proportional to the value, and it keeps points of
        small value from being ignored when values span orders of magnitude.
    selection : {"cv", "evidence"}
        ``evidence``: every hypothesis of the series judged at once by
        :func:`extrap_plugins.modelers.evidence.judge` (predictions at the
        multiples of the largest point, all parameters scaled and each alone).

    Returns
    -------
    MultiFit
    """
    n_series, n_points = Y.shape
    n_params = X.shape[1]
    # Only the blocks some line's model uses are evaluated, under their places in ``used``: the table can hold
    # thousands (with negative exponents), and all of them at every reference point would cost gigabytes.
    used = np.unique(np.concatenate([s.blocks[s.blocks >= 0] for s in singles]))
    blocks = blocks[used]
    columns = [evaluate_blocks(X[:, param], blocks) for param in range(n_params)]
    shapes = np.stack([s.n_terms for s in singles], axis=1)
    limit = int(min(max_terms, max(0, n_points - 2)))
    fit = MultiFit(
        terms=np.full((n_series, max_terms, n_params), -1, dtype=np.int64),
        coefficients=np.zeros((n_series, max_terms + 1)),
        n_terms=np.zeros(n_series, dtype=np.int64),
        score=np.full(n_series, np.inf),
    )
    reference = None
    if selection == "evidence":
        top = X.max(axis=0)
        rows = [top * d for d in evidence.REFERENCE]
        for param in range(n_params):
            for d in evidence.REFERENCE:
                point = top.copy()
                point[param] *= d
                rows.append(point)
        # then the points between the measured ones (checked for sign only)
        reference = np.concatenate([np.asarray(rows), evidence.interior_points(X)])
        fit.spread = np.full((n_series, len(evidence.REFERENCE)), np.nan)
        fit.mixed = np.zeros(n_series, dtype=bool)
    unique_shapes, shape_of = np.unique(shapes, axis=0, return_inverse=True)
    for which, shape in enumerate(unique_shapes):
        members = np.flatnonzero(shape_of.reshape(-1) == which)
        shape = tuple(int(n) for n in shape)
        signature = np.concatenate([singles[param].blocks[members, : shape[param]] for param in range(n_params)],
                                   axis=1)
        signature = np.searchsorted(used, signature)
        sets, set_of = np.unique(signature, axis=0, return_inverse=True)
        set_of = set_of.reshape(-1)
        split = np.cumsum((0,) + shape)
        set_blocks = [sets[:, split[param] : split[param + 1]] for param in range(n_params)]
        products, hypotheses = templates(shape, limit)
        part = None if noise is None else regression.Noise(noise.variance[members], noise.dof[members])
        weights = None if not weighted else relative_weights(Y[members])
        if reference is not None:
            offered = np.stack([np.zeros(members.size, dtype=bool) if s.offered is None else s.offered[members]
                                for s in singles], axis=1)
            _judge_shape(fit, members, X, Y[members], weights, part, set_of, set_blocks, columns, blocks,
                         reference, products, hypotheses, offered)
        else:
            _fit_shape(fit, members, Y[members], weights, part, set_of, set_blocks, columns, products, hypotheses,
                       criterion, improvement)
    if used.size:  # the places in ``used`` back to the table's
        fit.terms = np.where(fit.terms >= 0, used[np.maximum(fit.terms, 0)], -1)
    return fit


def _judge_shape(fit, members, X, Y, weights, noise, set_of, set_blocks, columns, blocks, reference, products,
                 hypotheses, offered):
    """:func:`combine` with ``selection="evidence"`` for the series of one shape.

    ``offered`` (n_members, n_params): the parameters whose line chose the constant and which are offered
    their runner-up (:func:`~extrap_plugins.modelers.base.reconsider`).  A hypothesis using such a parameter
    pays for the choice of its term as for a coefficient (``OFFERED_COST``): the line did not.
    """
    n_members, n_points = Y.shape
    n_params = X.shape[1]
    columns_ref = [evaluate_blocks(reference[:, param], blocks) for param in range(n_params)]
    # Every hypothesis with a constant, and those of at least one term also without one (counts divided
    # among ranks: 150 n / p) where some term falls.
    variants = [(k, True) for k in range(len(hypotheses))] + [(k, False) for k in range(1, len(hypotheses))]
    variants = [(k, c) for k, c in variants if hypotheses[k].shape[0]]
    n_coef = np.concatenate([np.full(hypotheses[k].shape[0], k + int(c)) for k, c in variants])
    # Which parameters each hypothesis uses (n_hyp, n_params); the charge is made per chunk of series.
    uses = np.concatenate([(products[hypotheses[k]] >= 0).any(axis=1) for k, _ in variants]).astype(float)
    offsets = np.cumsum([0] + [hypotheses[k].shape[0] for k, _ in variants])
    total = int(offsets[-1])
    if weights is None:
        weights = np.ones((n_members, n_points))
    high = np.flatnonzero(np.all(X == X.max(axis=0), axis=1))
    last = int(high[0]) if high.size else int(np.argmax(np.sum(np.log(np.maximum(X, 1e-300)), axis=1)))
    variance = np.full(n_members, np.nan) if noise is None else noise.variance
    trend = diagonal_trend(X, Y, variance)
    falling_block = (blocks[:, 0] < 0) | ((blocks[:, 0] == 0) & (blocks[:, 1] < 0))
    width = max(h.shape[1] for h in hypotheses) + 1
    chunk = max(1, regression.CHUNK_ELEMENTS // max(1, total * n_points * width * 2))
    chosen = np.zeros(n_members, dtype=np.int64)
    for start in range(0, n_members, chunk):
        who = np.arange(start, min(n_members, start + chunk))
        values = product_values(columns, [b[set_of[who]] for b in set_blocks], products)
        values_ref = product_values(columns_ref, [b[set_of[who]] for b in set_blocks], products)
        falls = np.zeros((who.size, products.shape[0]), dtype=bool)
        for param, b in enumerate(set_blocks):
            if b.shape[1] == 0:
                continue
            ids = b[set_of[who]][:, np.maximum(products[:, param], 0)]  # (n_who, n_products)
            falls |= (products[:, param] >= 0)[None, :] & falling_block[ids]
        w = weights[who]
        y = Y[who]
        parts = []
        for k, constant in variants:
            hyp = hypotheses[k]
            A = _designs(values, hyp) * w[:, None, :, None]
            A_ref = _designs(values_ref, hyp)
            if not constant:
                A, A_ref = A[..., 1:], A_ref[..., 1:]
            f = regression.factorize(A)
            part = _measure_individual(f, A_ref, y, w, last, constant)
            if not constant:
                has_falling = falls[:, hyp].any(axis=2) if k else np.zeros((who.size, hyp.shape[0]), dtype=bool)
                part = (np.where(has_falling, part[0], np.inf),) + part[1:]
            parts.append(part)
        rss, fitted_min, fitted_last, predictions, mixed = (np.concatenate(v, axis=1) for v in zip(*parts))
        judged = evidence.judge(y, rss, n_coef, fitted_min, fitted_last, predictions, mixed, variance[who],
                                trend[who], cost=OFFERED_COST * (offered[who].astype(float) @ uses.T))
        chosen[who] = judged.index
        fit.spread[members[who]] = judged.spread
        fit.mixed[members[who]] = judged.mixed
    variant_of = np.searchsorted(offsets, chosen, side="right") - 1
    for v, (k, constant) in enumerate(variants):
        who = np.flatnonzero(variant_of == v)
        if who.size == 0:
            continue
        hypothesis = hypotheses[k][chosen[who] - offsets[v]]
        sets = set_of[who]
        values = product_values(columns, [b[sets] for b in set_blocks], products)
        chosen_values = np.take_along_axis(values, hypothesis[:, :, None], axis=1) if k else values[:, :0]
        A = np.concatenate([np.ones((who.size, n_points, 1)), chosen_values.transpose(0, 2, 1)], axis=2)
        if not constant:
            A = A[:, :, 1:]
        if k:
            coefficients = regression.solve(regression.factorize(A * weights[who][:, :, None]), Y[who] * weights[who])
        else:
            coefficients = Y[who].mean(axis=1, keepdims=True)
        fit.n_terms[members[who]] = k
        fit.score[members[who]] = 0.0
        fit.coefficients[members[who]] = 0.0
        if constant:
            fit.coefficients[members[who], : k + 1] = coefficients
        else:
            fit.coefficients[members[who], 1 : k + 1] = coefficients
        for t in range(k):
            choice = products[hypothesis[:, t]]
            for param, b in enumerate(set_blocks):
                picked = b[sets, np.maximum(choice[:, param], 0)] if b.shape[1] else -1
                block = np.where(choice[:, param] >= 0, picked, -1)
                fit.terms[members[who], t, param] = block


def diagonal_trend(X: np.ndarray, Y: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """Per series, the direction the evidence's plausibility rule holds the predictions to along the diagonal
    (every parameter scaled): +1 or -1 where the values clearly rise or fall from the smallest corner of the
    design to the largest (if both were measured), 0 where they do neither -- or where some parameter alone
    clearly goes the other way on one of its measured lines (from its smallest to its largest value, the others
    fixed).  Then the parameters pull against each other (work divided among ranks, ``n / p``) and the corners
    say nothing about the diagonal beyond them: ``c·s/p·log2(p)`` falls from (4, 10) to (64, 50) and rises
    beyond, and holding it to falling ruled out the true model and dropped ``s``.  A line where another term
    dominates hides a parameter's direction (``1.7/log2(p)² + c·s^(8/3)`` rises along s by 6 % at p = 4 and by
    54 % at p = 64), so every line counts, not only the one through the corner.

    Examples
    --------
    >>> X = np.array([[4.0, 10], [4, 50], [64, 10], [64, 50]])
    >>> Y = np.array([[1.0, 5, 0.15, 0.75], [1.0, 2, 3, 6], [1.0, 1.01, 0.1, 0.16]])
    >>> diagonal_trend(X, Y, np.full(3, 1e-6)).tolist()
    [0, 1, 0]
    """
    low = np.flatnonzero(np.all(X == X.min(axis=0), axis=1))
    high = np.flatnonzero(np.all(X == X.max(axis=0), axis=1))
    if not (low.size and high.size):
        return np.zeros(Y.shape[0], dtype=np.int64)
    steps = np.array([0.0, 1.0])
    trend = evidence.trend_of(steps, Y[:, [int(low[0]), int(high[0])]], variance)
    for param in range(X.shape[1]):
        for _, lines in lines_along(X, param):
            for rows in lines:
                if rows.size > 1:  # from the line's smallest value of the parameter to its largest
                    own = evidence.trend_of(steps, Y[:, [int(rows[0]), int(rows[-1])]], variance)
                    trend = np.where(own == -trend, 0, trend)
    return trend


def _measure_individual(f: regression.Factorization, A_ref: np.ndarray, y: np.ndarray, w: np.ndarray, last: int,
                        constant: bool = True):
    """:func:`evidence.measure` for per-series stacks: Q of shape (n_s, n_hyp, n_points, n_coef)."""
    n_s, n_hyp, n_points, n_coef = f.Q.shape
    ok = f.solvable
    R = np.where(ok[..., None, None], f.R, np.eye(n_coef))
    yw = y * w
    projected = np.einsum("shpk,sp->shk", f.Q, yw)
    with np.errstate(all="ignore"):
        coefficients = np.linalg.solve(R, projected[..., None])[..., 0] / f.scale
        fitted_w = np.einsum("shpk,shk->shp", f.Q, projected)
        residual = yw[:, None, :] - fitted_w
        rss = np.einsum("shp,shp->sh", residual, residual)
        fitted = fitted_w / w[:, None, :]
        predictions = np.einsum("shrk,shk->shr", A_ref, coefficients)
    terms = coefficients[:, :, 1:] if constant else coefficients
    if terms.shape[2] >= 2:
        mixed = (np.max(terms, axis=2) > 0) & (np.min(terms, axis=2) < 0)
    else:
        mixed = np.zeros((n_s, n_hyp), dtype=bool)
    rss = np.where(ok, rss, np.inf)
    return rss, fitted.min(axis=2), fitted[:, :, last], predictions, mixed


def _fit_shape(fit, members, Y, weights, noise, set_of, set_blocks, columns, products, hypotheses, criterion,
               improvement):
    n_members, n_points = Y.shape
    n_sets = set_blocks[0].shape[0]
    max_k = len(hypotheses) - 1
    # Occam among hypotheses explained by noise: fewest factors (parameters per term) first.
    factors = (products >= 0).sum(axis=1)
    complexity = [factors[h].sum(axis=1) for h in hypotheses]
    best_score = np.full((n_members, fit.coefficients.shape[1]), np.inf)
    best_index = np.zeros((n_members, fit.coefficients.shape[1]), dtype=np.int64)
    explained = np.zeros((n_members, fit.coefficients.shape[1]), dtype=bool)
    settled = np.zeros(n_members, dtype=bool)
    if weights is None:
        # Unweighted: one factorisation per distinct set of single-parameter models.
        order = np.argsort(set_of, kind="stable")
        bounds = np.searchsorted(set_of[order], np.arange(n_sets + 1))
    for k in range(max_k + 1):
        n_hyp = hypotheses[k].shape[0]
        if n_hyp == 0:
            continue
        chunk = max(1, regression.CHUNK_ELEMENTS // (n_hyp * n_points * (k + 1)))
        if weights is None:
            batches = [
                (order[bounds[start] : bounds[min(n_sets, start + chunk)]],
                 np.arange(start, min(n_sets, start + chunk)))
                for start in range(0, n_sets, chunk)
            ]
        else:
            pending = np.flatnonzero(~settled)
            batches = [(pending[start : start + chunk], None) for start in range(0, pending.size, chunk)]
        for who, sets in batches:
            who = who[~settled[who]]
            if who.size == 0:
                continue
            if sets is None:  # weighted: one design per series
                values = product_values(columns, [b[set_of[who]] for b in set_blocks], products)
                A = _designs(values, hypotheses[k]) * weights[who][:, None, :, None]
                gathered = regression.factorize(A)
                y = Y[who] * weights[who]
            else:
                values = product_values(columns, [b[sets] for b in set_blocks], products)
                f = regression.factorize(_designs(values, hypotheses[k]))
                gathered = regression.take(f, set_of[who] - sets[0])
                y = Y[who]
            part = None if noise is None else regression.Noise(noise.variance[who], noise.dof[who])
            scores, flags = regression.score_individual(y, gathered, criterion, part)
            index, score, any_explained = regression.prefer_explained(scores, flags, complexity[k])
            best_index[who, k], best_score[who, k], explained[who, k] = index, score, any_explained
        # A series explained by noise (or fitted exactly) never takes more terms.
        settled |= explained[:, k] | (best_score[:, k] <= regression.EXACT[criterion])
    chosen = regression.select_by_terms(
        best_score[:, : max_k + 1], criterion, improvement, explained[:, : max_k + 1] if noise is not None else None
    )
    rows = np.arange(n_members)
    fit.n_terms[members] = chosen
    fit.score[members] = best_score[rows, chosen]
    for k in range(max_k + 1):
        who = np.flatnonzero(chosen == k)
        if who.size == 0:
            continue
        hypothesis = hypotheses[k][best_index[who, k]]  # (n_who, k) product indices
        sets = set_of[who]
        values = product_values(columns, [b[sets] for b in set_blocks], products)  # (n_who, n_products, P)
        chosen_values = np.take_along_axis(values, hypothesis[:, :, None], axis=1) if k else values[:, :0]
        A = np.concatenate([np.ones((who.size, n_points, 1)), chosen_values.transpose(0, 2, 1)], axis=2)
        w = np.ones((who.size, n_points)) if weights is None else weights[who]
        if k:
            coefficients = regression.solve(regression.factorize(A * w[:, :, None]), Y[who] * w)
        else:  # the constant alone is the mean, exactly
            coefficients = Y[who].mean(axis=1, keepdims=True)
        fit.coefficients[members[who], : k + 1] = coefficients
        for t in range(k):
            choice = products[hypothesis[:, t]]  # (n_who, n_params)
            for param, b in enumerate(set_blocks):
                picked = b[sets, np.maximum(choice[:, param], 0)] if b.shape[1] else -1
                block = np.where(choice[:, param] >= 0, picked, -1)
                fit.terms[members[who], t, param] = block


def relative_weights(Y: np.ndarray) -> np.ndarray:
    """Weights ``1 / |y|`` for relative least squares, shape (n_series, n_points).

    The magnitudes are :func:`~extrap_plugins.modelers.evidence.magnitudes`, the selection's own: a zero
    counts as the series' mean magnitude, so that zeros among counts (noise that is additive there) do
    not outweigh every other point.
    """
    return 1.0 / evidence.magnitudes(Y)


def _designs(values: np.ndarray, hypotheses: np.ndarray) -> np.ndarray:
    """``[1, product terms...]`` for every set and hypothesis: shape (n_sets, n_hyp, n_points, k + 1)."""
    n_sets, _, n_points = values.shape
    n_hyp, k = hypotheses.shape
    chosen = values[:, hypotheses, :]  # (n_sets, n_hyp, k, n_points)
    ones = np.ones((n_sets, n_hyp, n_points, 1))
    return np.concatenate([ones, chosen.transpose(0, 1, 3, 2)], axis=3)
