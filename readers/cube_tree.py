"""Vectorised inclusive/exclusive conversion over a whole call tree.

A call tree of ``n_nodes`` nodes is stored in depth-first pre-order as a
``parent`` array (``-1`` for a root).  Per-node values are a matrix of shape
(n_nodes, n_locations).  Instead of a recursion per node (what pycubexr does,
and what makes Extra-P slow on large trees), the conversions work on batches
of nodes that can be updated at once:

* inclusive -> exclusive: one batch per sibling rank (every first child, then
  every second child, ...): ``excl[parent] -= incl[child]``;
* exclusive -> inclusive: one batch per (depth, sibling rank), deepest first:
  ``incl[parent] += incl[child]`` (``minimum``/``maximum`` for min/max metrics).

Within a batch no parent repeats, so each batch is one fancy-indexed numpy
operation, and the additions happen in the same order as a recursive
implementation would do them: the results are bit-for-bit equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

AGGREGATIONS = ("weak", "weak_threaded", "strong", "max", "min")
# How a metric combines over the call tree and over locations: CUBE's
# MINDOUBLE/MAXDOUBLE metrics (min_time, max_time) take the minimum/maximum.
SUM, MINIMUM, MAXIMUM = "sum", "min", "max"


@dataclass(frozen=True)
class CallTree:
    """A call tree in depth-first pre-order.

    Attributes
    ----------
    parent : ndarray of int64, shape (n_nodes,)
        Index of each node's parent; ``-1`` for roots.  ``parent[i] < i``.
    depth : ndarray of int64, shape (n_nodes,)
        0 for roots.
    rank : ndarray of int64, shape (n_nodes,)
        Position among the siblings (0 for the first child).
    """

    parent: np.ndarray
    depth: np.ndarray
    rank: np.ndarray
    _by_rank: list = field(default_factory=list, repr=False, compare=False)
    _bottom_up: list = field(default_factory=list, repr=False, compare=False)

    @classmethod
    def from_parents(cls, parent: np.ndarray) -> CallTree:
        """Build the tree from pre-order parent indices.

        Parameters
        ----------
        parent : array_like of int, shape (n_nodes,)

        Examples
        --------
        >>> tree = CallTree.from_parents([-1, 0, 1, 0])
        >>> tree.depth.tolist(), tree.rank.tolist()
        ([0, 1, 2, 1], [0, 0, 0, 1])
        """
        parent = np.asarray(parent, dtype=np.int64).reshape(-1)
        n = parent.shape[0]
        if n and np.any(parent >= np.arange(n)):
            raise ValueError("parent indices must precede their children (depth-first pre-order)")
        depth = np.zeros(n, dtype=np.int64)
        ancestor = parent.copy()
        while True:
            has = ancestor >= 0
            if not has.any():
                break
            depth += has
            ancestor[has] = parent[ancestor[has]]
        # Rank among siblings: children of one parent keep their pre-order order.
        order = np.lexsort((np.arange(n), parent))
        sorted_parent = parent[order]
        starts = np.r_[0, np.flatnonzero(np.diff(sorted_parent)) + 1] if n else np.zeros(0, dtype=np.int64)
        lengths = np.diff(np.r_[starts, n])
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n) - np.repeat(starts, lengths)
        tree = cls(parent, depth, rank)
        tree._prepare()
        return tree

    @property
    def n_nodes(self) -> int:
        return int(self.parent.shape[0])

    def _prepare(self) -> None:
        children = np.flatnonzero(self.parent >= 0)
        if children.size == 0:
            return
        # Batches by sibling rank (for inclusive -> exclusive).
        by_rank = children[np.argsort(self.rank[children], kind="stable")]
        cuts = np.flatnonzero(np.diff(self.rank[by_rank])) + 1
        self._by_rank.extend(np.split(by_rank, cuts))
        # Batches by (depth descending, rank ascending) (for exclusive -> inclusive).
        order = np.lexsort((self.rank[children], -self.depth[children]))
        nodes = children[order]
        key = self.depth[nodes] * (int(self.rank.max()) + 1) + self.rank[nodes]
        cuts = np.flatnonzero(np.diff(key)) + 1
        self._bottom_up.extend(np.split(nodes, cuts))

    def inclusive(self, values: np.ndarray, combine: str = SUM) -> np.ndarray:
        """Inclusive values from exclusive ones: each node plus its whole subtree.

        Parameters
        ----------
        values : ndarray, shape (n_nodes, n_locations) or (n_nodes,)
        combine : {"sum", "min", "max"}

        Returns
        -------
        ndarray, same shape and dtype as ``values`` (a new array)
        """
        ufunc = _UFUNCS[combine]
        result = np.array(values, copy=True)
        for nodes in self._bottom_up:
            parents = self.parent[nodes]
            result[parents] = ufunc(result[parents], result[nodes])
        return result

    def exclusive(self, values: np.ndarray, combine: str = SUM) -> np.ndarray:
        """Exclusive values from inclusive ones: each node minus its children.

        For unsigned integers a difference below zero becomes 0 (as CubeLib
        and pycubexr do for overflowed hardware counters); for floats a
        difference within rounding of the node's inclusive value is 0 (a node
        without time of its own is no -3.5e-17 s).  For min/max metrics the
        stored values are returned unchanged: a minimum has no exclusive part.

        Parameters
        ----------
        values : ndarray, shape (n_nodes, n_locations) or (n_nodes,)
        combine : {"sum", "min", "max"}

        Returns
        -------
        ndarray, same shape and dtype as ``values`` (a new array)
        """
        result = np.array(values, copy=True)
        if combine != SUM:
            return result
        unsigned = np.issubdtype(result.dtype, np.unsignedinteger)
        for nodes in self._by_rank:
            parents = self.parent[nodes]
            remaining, child = result[parents], values[nodes]
            if unsigned:
                result[parents] = np.where(remaining >= child, remaining - child, 0)
            else:
                result[parents] = remaining - child
        if np.issubdtype(result.dtype, np.floating):
            # Each subtraction may be off by half an ulp of the inclusive value: that much is no value of its own.
            n_children = np.bincount(self.parent[self.parent >= 0], minlength=self.n_nodes)
            bound = np.abs(values) * (np.finfo(result.dtype).eps * n_children.reshape((-1,) + (1,) * (result.ndim - 1)))
            result[np.abs(result) <= bound] = 0.0
        return result

    def subtree_any(self, flags: np.ndarray) -> np.ndarray:
        """Whether any node of each subtree is flagged, shape (n_nodes,)."""
        return self.inclusive(np.asarray(flags, dtype=bool), MAXIMUM)


# fmin/fmax skip NaN, which marks a minimum or maximum without a value (a location that never visited the node).
_UFUNCS = {SUM: np.add, MINIMUM: np.fmin, MAXIMUM: np.fmax}


def aggregate_locations(values: np.ndarray, aggregation: str, combine: str = SUM) -> np.ndarray:
    """One value per node from the values of every location (rank, thread, GPU stream).

    Parameters
    ----------
    values : ndarray, shape (n_nodes, n_locations)
    aggregation : {"weak", "weak_threaded", "strong", "max", "min"}
        ``weak``: mean over locations (Extra-P's weak scaling);
        ``weak_threaded``: mean over the locations with a non-zero value
        (0 when all are zero), for threads that do not all run a region;
        ``strong``: sum over locations (Extra-P's strong scaling), or the
        minimum/maximum for min/max metrics; ``max``/``min``: the largest or
        smallest location (the critical path).
    combine : {"sum", "min", "max"}
        How the metric combines (``min`` for min_time, ``max`` for max_time).
        For ``min`` and ``max``, NaN is a location without a value (one that
        never visited the node) and is left out; a node without any is 0.

    Returns
    -------
    ndarray of float64, shape (n_nodes,)
    """
    accumulator = LocationAccumulator(aggregation, combine, np.shape(values)[0])
    accumulator.add(values)
    return accumulator.result()


class LocationAccumulator:
    """:func:`aggregate_locations` over blocks of locations, for profiles too large to convert at once.

    >>> accumulator = LocationAccumulator("weak", "sum", n_nodes=1)
    >>> accumulator.add(np.array([[1.0, 2.0]])); accumulator.add(np.array([[6.0]]))
    >>> accumulator.result()
    array([3.])
    """

    def __init__(self, aggregation: str, combine: str, n_nodes: int):
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {aggregation!r}: expected one of {', '.join(AGGREGATIONS)}")
        if aggregation == "strong" and combine != SUM:
            aggregation = combine  # the sum of minimum times is meaningless: the minimum of them
        self.aggregation = aggregation
        self.skip_nan = combine != SUM
        self.total: np.ndarray | None = None
        self.count = np.zeros(n_nodes, dtype=np.int64)
        self.n_nodes = n_nodes

    def add(self, values: np.ndarray) -> None:
        """Fold in a block of locations, shape (n_nodes, n_block)."""
        values = np.asarray(values, dtype=np.float64)
        if values.shape[1] == 0:
            return
        if self.aggregation in ("max", "min"):
            ufunc = _UFUNCS[MAXIMUM if self.aggregation == "max" else MINIMUM] if self.skip_nan \
                else np.maximum if self.aggregation == "max" else np.minimum
            part = ufunc.reduce(values, axis=1)
            if self.total is not None:
                part = ufunc(self.total, part)
        else:
            n_measured = values.shape[1]
            if self.skip_nan:
                measured = ~np.isnan(values)
                n_measured = np.count_nonzero(measured, axis=1)
                values = np.where(measured, values, 0.0)
            part = values.sum(axis=1) if self.total is None else self.total + values.sum(axis=1)
            if self.aggregation == "weak_threaded":
                self.count += np.count_nonzero(values, axis=1)
            else:
                self.count += n_measured
        self.total = part

    def result(self) -> np.ndarray:
        """The aggregated values, shape (n_nodes,); zeros when no location was added."""
        if self.total is None:
            return np.zeros(self.n_nodes)
        if self.aggregation in ("weak", "weak_threaded"):
            return np.divide(self.total, self.count, out=np.zeros_like(self.total), where=self.count > 0)
        return np.where(np.isnan(self.total), 0.0, self.total) if self.skip_nan else self.total


def merge_duplicates(values: np.ndarray, codes: np.ndarray, n_unique: int, combine: str = SUM) -> np.ndarray:
    """Combine the rows of nodes that share a call path name.

    Parameters
    ----------
    values : ndarray, shape (n_nodes, ...)
    codes : ndarray of int, shape (n_nodes,)
        The call path (0..n_unique-1) of each node.
    combine : {"sum", "min", "max"}

    Returns
    -------
    ndarray, shape (n_unique, ...)
    """
    ufunc = _UFUNCS[combine]
    first = np.full(n_unique, -1, dtype=np.int64)
    # The first node of each name seeds the result, the others are folded in.
    first[codes[::-1]] = np.arange(codes.shape[0])[::-1]
    result = np.array(values[first], copy=True)
    rest = np.ones(codes.shape[0], dtype=bool)
    rest[first] = False
    ufunc.at(result, codes[rest], values[rest])
    return result
