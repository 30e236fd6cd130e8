"""Batched least squares, closed-form leave-one-out, and the selection rules."""

from __future__ import annotations

import numpy as np
import pytest

from extrap_plugins.modelers import regression


def designs():
    x = np.array([1.0, 2, 4, 8, 16, 32])
    stack = np.stack([
        np.stack([np.ones_like(x), x], axis=1),
        np.stack([np.ones_like(x), np.log2(x)], axis=1),
        np.stack([np.ones_like(x), x**2], axis=1),
    ])
    return x, stack


def test_leave_one_out_residuals_equal_explicit_refits():
    x, A = designs()
    rng = np.random.default_rng(3)
    Y = rng.uniform(1, 10, size=(4, x.size))
    f = regression.factorize(A)
    M = regression.loo_operators(f)
    for h in range(A.shape[0]):
        for s in range(Y.shape[0]):
            explicit = []
            for i in range(x.size):
                keep = np.arange(x.size) != i
                c, *_ = np.linalg.lstsq(A[h][keep], Y[s][keep], rcond=None)
                explicit.append(Y[s][i] - A[h][i] @ c)
            np.testing.assert_allclose(M[h] @ Y[s], explicit, rtol=1e-9, atol=1e-12)


def test_scores_of_a_shared_stack_match_the_per_hypothesis_definition():
    x, A = designs()
    Y = np.stack([3 + 2 * x, 1 + np.log2(x) + 0.01 * np.sin(x)])
    f = regression.factorize(A)
    scores = regression.score_shared(Y, f, "press")
    M = regression.loo_operators(f)
    expected = [[np.mean((M[h] @ y) ** 2) / np.mean(y * y) for h in range(3)] for y in Y]
    np.testing.assert_allclose(scores, expected, rtol=1e-9, atol=1e-30)
    index, best, _ = regression.best_shared(Y, f, "press")
    assert index.tolist() == [0, 1]
    assert best[0] < 1e-25


def test_solve_gives_least_squares_coefficients():
    x, A = designs()
    y = 3 + 2 * x
    f = regression.factorize(A[:1].repeat(2, axis=0))
    np.testing.assert_allclose(regression.solve(f, np.stack([y, 2 * y])), [[3, 2], [6, 4]], rtol=1e-12)


def test_rank_deficient_or_self_deciding_designs_are_invalid():
    ones = np.ones(5)
    A = np.stack([
        np.stack([ones, np.arange(5.0)], axis=1),
        np.stack([ones, ones * 2], axis=1),  # duplicate of the constant
        np.stack([ones, np.array([0, 0, 0, 0, 1.0])], axis=1),  # one point decides its own fit
    ])
    assert regression.factorize(A).valid.tolist() == [True, False, False]


def test_more_terms_need_to_be_clearly_better():
    best = np.array([
        [1.0, 0.6, 0.5],  # 0.6 is not below 0.5 * 1.0: constant
        [1.0, 0.4, 0.3],  # one term; two terms not below 0.5 * 0.4
        [1.0, 0.4, 0.1],  # two terms
        [1e-30, 1e-32, 1e-34],  # already exact: stays constant
        [np.inf, 2.0, np.inf],  # the only valid one
    ])
    assert regression.select_by_terms(best, "relative", 0.5).tolist() == [0, 1, 2, 0, 1]


def test_fewest_terms_explained_by_noise_win():
    best = np.array([[1.0, 0.1, 0.001], [1.0, 0.1, 0.001]])
    explained = np.array([[False, True, True], [False, False, False]])
    assert regression.select_by_terms(best, "relative", 0.5, explained).tolist() == [1, 2]


def test_noise_test_accepts_the_true_hypothesis_and_rejects_a_wrong_one():
    rng = np.random.default_rng(7)
    x = np.array([4.0, 8, 16, 32, 64])
    truth = 50 + 3 * x**2
    reps = truth[None, :, None] * (1 + rng.uniform(-0.05, 0.05, size=(200, 5, 4)))
    Y = reps.mean(axis=2)
    V = reps.var(axis=2, ddof=1) / 4
    noise = regression.Noise.estimate(Y, V, np.full(Y.shape, 4))
    assert np.mean(noise.variance) == pytest.approx(0.05**2 / 3 / 4, rel=0.1)  # var of U(-a, a) is a^2 / 3
    A = np.stack([np.stack([np.ones(5), x**2], axis=1), np.stack([np.ones(5), x], axis=1)])
    f = regression.factorize(A)
    _, _, right = regression.best_shared(Y, regression.take(f, np.array([0])), "relative", noise)
    _, _, wrong = regression.best_shared(Y, regression.take(f, np.array([1])), "relative", noise)
    assert right.mean() > 0.98 and wrong.mean() == 0.0


def test_among_explained_hypotheses_the_simplest_exponents_win():
    scores = np.array([[0.1, 0.2, 0.3]])
    explained = np.array([[True, True, False]])
    index, score, any_explained = regression.prefer_explained(scores, explained, np.array([2, 0, 0]))
    assert index.tolist() == [1] and score.tolist() == [0.2] and any_explained.tolist() == [True]
