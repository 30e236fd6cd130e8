"""The hypothesis space: exponent sets, building blocks, ordering."""

from __future__ import annotations

import numpy as np
import pytest

from extrap_plugins.modelers.hypotheses import (
    DEFAULT_EXPONENTS,
    DEFAULT_LOG_EXPONENTS,
    building_blocks,
    combinations,
    evaluate_blocks,
    exponent_complexity,
    parse_exponents,
    slope_order,
    usable_blocks,
)


def test_default_sets_are_extrap_s():
    exponents = parse_exponents(DEFAULT_EXPONENTS)
    assert len(exponents) == 20 and exponents[:4] == (0.0, 0.25, pytest.approx(1 / 3), 0.5) and exponents[-1] == 3.0
    assert 0.8 in exponents and pytest.approx(11 / 4) == exponents[-2]
    assert parse_exponents(DEFAULT_LOG_EXPONENTS) == (0.0, 1.0, 2.0)
    assert building_blocks(exponents, (0, 1, 2)).shape == (59, 2)


@pytest.mark.parametrize("text, expected", [
    ("0,1/3,1/2,1,2", (0.0, 1 / 3, 0.5, 1.0, 2.0)),
    (" 2 , 1 ; 1 ", (1.0, 2.0)),
    ([0, "1/4", 1.5], (0.0, 0.25, 1.5)),
    (2, (2.0,)),
])
def test_exponents_parse_from_text_or_lists(text, expected):
    assert parse_exponents(text) == pytest.approx(expected)


@pytest.mark.parametrize("bad", ["", "a,b", "1/0", [True], "nan", None, {}])
def test_bad_exponents_say_what_was_expected(bad):
    with pytest.raises(ValueError) as error:
        parse_exponents(bad, "exponents")
    assert str(error.value) == (
        "exponents: expected a comma-separated list of numbers or fractions such as "
        f"'0,1/3,1/2,1,2' (or a list of numbers), got {bad!r}"
    )


def test_negative_exponents_add_the_falling_factors_of_strong_scaling():
    # p^-i for every i, log2(p)/p (i = 1), 1/log2(p) (Extra-P's allow_negative_exponents).
    blocks = building_blocks([0, 0.5, 1], [0, 1], negative=True)
    assert sorted(map(tuple, blocks.tolist())) == sorted(
        [(0, 1), (0.5, 0), (0.5, 1), (1, 0), (1, 1), (-0.5, 0), (-1, 0), (-1, 1), (0, -1)]
    )


def test_negative_log_exponents_combine_with_the_falling_powers():
    # Extra-P's allow_negative_exponents also has p^-i log2(p)^-j: here where J holds negative exponents.
    blocks = building_blocks([0, 0.5, 1], [-1, 0, 1], negative=True)
    products = sorted(tuple(b) for b in blocks.tolist() if b[0] < 0 and b[1] < 0)
    assert products == [(-1, -1), (-0.5, -1)]
    default = building_blocks([0, 0.5, 1], [0, 1, 2], negative=True)
    assert not np.any((default[:, 0] < 0) & (default[:, 1] < 0))


def test_negative_log_exponents_are_allowed():
    blocks = building_blocks([0, 1], [-1, 0])
    assert sorted(map(tuple, blocks.tolist())) == [(0, -1), (1, -1), (1, 0)]


def test_blocks_evaluate_to_powers_and_logarithms():
    x = np.array([2.0, 4.0, 8.0])
    columns = evaluate_blocks(x, np.array([[1.0, 0.0], [0.0, 2.0], [0.5, 1.0]]))
    np.testing.assert_allclose(columns, [[2, 1, 2**0.5], [4, 4, 4], [8, 9, 3 * 8**0.5]])


def test_logarithms_need_values_of_at_least_one():
    blocks = building_blocks([0, 1, 0.5], [0, 1])
    assert usable_blocks(np.array([1.0, 2, 4]), blocks).all()
    below = usable_blocks(np.array([0.5, 1, 2]), blocks)
    assert below.tolist() == (blocks[:, 1] == 0).tolist()
    negative = usable_blocks(np.array([-1.0, 0, 1, 2]), blocks)
    assert [tuple(b) for b in blocks[negative]] == [(1.0, 0.0)]


def test_combinations_enumerate_hypotheses():
    assert combinations(4, 0).shape == (1, 0)
    assert combinations(59, 2).shape == (1711, 2)


def test_slope_order_at_the_largest_value():
    blocks = np.array([[2.0, 0], [1.0, 0], [0.0, 1], [1.0, 1], [0.5, 0]])
    assert slope_order(64.0, blocks).tolist() == [2, 4, 1, 3, 0]


def test_exponent_complexity_prefers_whole_numbers():
    blocks = np.array([[3, 2], [1.5, 0], [0.25, 1], [2 / 3, 0], [0.8, 0], [-1, 0]])
    assert exponent_complexity(blocks).tolist() == [0, 1, 2, 2, 3, 0]
