"""Vectorised inclusive/exclusive conversion and location aggregation."""

from __future__ import annotations

import numpy as np
import pytest

from extrap_plugins.readers.cube_tree import CallTree, LocationAccumulator, aggregate_locations, merge_duplicates

#      0 main
#      ├── 1 init
#      │   └── 2 alloc
#      └── 3 solve
#          ├── 4 MPI_Send
#          └── 5 MPI_Recv
PARENT = [-1, 0, 1, 0, 3, 3]
EXCLUSIVE = np.array([[1.0, 2.0], [10.0, 20.0], [100.0, 200.0], [1000.0, 2000.0], [0.5, 0.25], [0.125, 4.0]])
INCLUSIVE = np.array([[1111.625, 2226.25], [110.0, 220.0], [100.0, 200.0], [1000.625, 2004.25],
                      [0.5, 0.25], [0.125, 4.0]])


def test_tree_shape():
    tree = CallTree.from_parents(PARENT)
    assert tree.depth.tolist() == [0, 1, 2, 1, 2, 2]
    assert tree.rank.tolist() == [0, 0, 0, 1, 0, 1]


def test_inclusive_and_exclusive_are_inverse_on_a_known_tree():
    tree = CallTree.from_parents(PARENT)
    np.testing.assert_array_equal(tree.inclusive(EXCLUSIVE), INCLUSIVE)
    np.testing.assert_array_equal(tree.exclusive(INCLUSIVE), EXCLUSIVE)
    np.testing.assert_array_equal(tree.inclusive(EXCLUSIVE[:, 0]), INCLUSIVE[:, 0])  # one location


def test_a_forest_with_several_roots():
    tree = CallTree.from_parents([-1, 0, -1, 2])
    np.testing.assert_array_equal(tree.inclusive(np.array([1, 2, 3, 4])), [3, 2, 7, 4])


def test_parents_must_come_first():
    with pytest.raises(ValueError, match="pre-order"):
        CallTree.from_parents([1, -1])


def _recursive_inclusive(parent, values, node):
    """The per-node recursion pycubexr does: own value, then each child's subtree in order."""
    total = values[node].copy()
    for child in np.flatnonzero(parent == node):
        total += _recursive_inclusive(parent, values, child)
    return total


def _random_preorder_tree(rng, n):
    parent = [-1]
    for i in range(1, n):
        parent.append(int(rng.integers(-1, i)) if rng.random() < 0.05 else int(rng.integers(max(0, i - 8), i)))
    return np.array(parent)


def test_bit_for_bit_equal_to_the_recursion_on_random_trees():
    rng = np.random.default_rng(7)
    for _ in range(5):
        parent = _random_preorder_tree(rng, 300)
        values = rng.lognormal(size=(300, 4))
        tree = CallTree.from_parents(parent)
        inclusive = tree.inclusive(values)
        expected = np.array([_recursive_inclusive(parent, values, i) for i in range(300)])
        np.testing.assert_array_equal(inclusive, expected)
        # exclusive: own inclusive value minus each child's, in child order
        expected_exclusive = inclusive.copy()
        for node in range(300):
            for child in np.flatnonzero(parent == node):
                expected_exclusive[node] = expected_exclusive[node] - inclusive[child]
        np.testing.assert_array_equal(tree.exclusive(inclusive), expected_exclusive)


def test_unsigned_counters_do_not_wrap_below_zero():
    tree = CallTree.from_parents([-1, 0, 0])
    inclusive = np.array([[10, 5], [4, 1], [8, 1]], dtype=np.uint64)  # children exceed the parent's 10 at location 0
    result = tree.exclusive(inclusive)
    assert result.dtype == np.uint64
    assert result.tolist() == [[0, 3], [4, 1], [8, 1]]
    signed = tree.exclusive(inclusive.astype(np.int64))
    assert signed.tolist() == [[-2, 3], [4, 1], [8, 1]]


def test_an_exclusive_time_within_rounding_of_zero_is_zero():
    """0.3 s inclusive with children of 0.1 s and 0.2 s left -2.8e-17 s: a negative time where the node has none of
    its own (CUDA's KERNELS, in both GPU profiles of the Extra-P fixtures)."""
    tree = CallTree.from_parents([-1, 0, 0])
    assert tree.exclusive(np.array([[0.3], [0.1], [0.2]])).ravel().tolist() == [0.0, 0.1, 0.2]
    assert tree.exclusive(np.array([[0.3 + 1e-12], [0.1], [0.2]]))[0, 0] == pytest.approx(1e-12, rel=1e-3)


def test_minimum_and_maximum_metrics():
    tree = CallTree.from_parents(PARENT)
    stored = np.array([[5.0], [3.0], [0.0], [7.0], [2.0], [9.0]])
    assert tree.inclusive(stored, "min").ravel().tolist() == [0.0, 0.0, 0.0, 2.0, 2.0, 9.0]
    assert tree.inclusive(stored, "max").ravel().tolist() == [9.0, 3.0, 0.0, 9.0, 2.0, 9.0]
    np.testing.assert_array_equal(tree.exclusive(stored, "min"), stored)  # a minimum has no exclusive part


def test_subtree_any():
    tree = CallTree.from_parents(PARENT)
    assert tree.subtree_any([False, False, True, False, False, False]).tolist() == [True, True, True, False, False,
                                                                                   False]


def test_merge_duplicates():
    values = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 0.0], [7.0, 8.0]])
    codes = np.array([0, 1, 0, 1])
    assert merge_duplicates(values, codes, 2).tolist() == [[6.0, 2.0], [10.0, 12.0]]
    assert merge_duplicates(values, codes, 2, "min").tolist() == [[1.0, 0.0], [3.0, 4.0]]
    assert merge_duplicates(np.array([True, False, False, False]), codes, 2, "max").tolist() == [True, False]


@pytest.mark.parametrize("aggregation, combine, expected", [
    ("weak", "sum", [2.0, 0.0, 1.0]),
    ("weak_threaded", "sum", [3.0, 0.0, 1.0]),
    ("strong", "sum", [6.0, 0.0, 3.0]),
    ("strong", "min", [0.0, 0.0, 1.0]),
    ("strong", "max", [4.0, 0.0, 1.0]),
    ("max", "sum", [4.0, 0.0, 1.0]),
    ("min", "sum", [0.0, 0.0, 1.0]),
])
def test_aggregation_over_locations(aggregation, combine, expected):
    values = np.array([[2, 0, 4], [0, 0, 0], [1, 1, 1]], dtype=np.uint64)
    assert aggregate_locations(values, aggregation, combine).tolist() == expected


@pytest.mark.parametrize("aggregation, expected", [
    ("weak", [2.0, 0.0, 3.0]), ("weak_threaded", [2.0, 0.0, 3.0]), ("strong", [1.0, 0.0, 3.0]),
    ("min", [1.0, 0.0, 3.0]), ("max", [3.0, 0.0, 3.0]),
])
def test_a_minimum_leaves_out_locations_without_a_value(aggregation, expected):
    """NaN: a location that never visited the node; a node that no location visited is 0."""
    values = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [np.nan, 3.0, np.nan]])
    accumulator = LocationAccumulator(aggregation, "min", 3)
    accumulator.add(values[:, :1])
    accumulator.add(values[:, 1:])
    assert accumulator.result().tolist() == expected
    tree = CallTree.from_parents([-1, 0, 0])
    np.testing.assert_array_equal(tree.inclusive(values, "min"), [[1.0, 3.0, 3.0], values[1], values[2]])


def test_unknown_aggregation():
    with pytest.raises(ValueError, match="unknown aggregation 'median'"):
        aggregate_locations(np.zeros((1, 1)), "median")
