"""One CUBE file (``profile.cubex``): call tree, metrics and per-location values.

pycubexr parses the archive (the ``anchor.xml`` and each metric's index and
data); everything after that is vectorised here: the call tree becomes
pre-order arrays, each metric one dense (n_nodes, n_locations) matrix, and
inclusive/exclusive conversion runs over the whole tree at once
(:mod:`extrap_plugins.readers.cube_tree`).

pycubexr is imported only inside :func:`open_profile`, so this module loads
without the ``cube`` extra.
"""

from __future__ import annotations

import collections
import os
import pathlib
import struct
import warnings
import zlib
from dataclasses import dataclass, field

import numpy as np

from extrap_plugins.errors import ExtrapWarning, InputError
from extrap_plugins.experiment import CALLPATH_SEPARATOR, Metric

from ._common import EMPTY_FILE
from .cube_tree import MAXIMUM, MINIMUM, SUM, CallTree, LocationAccumulator, merge_duplicates

INSTALL_HINT = "reading CUBE files needs pycubexr: pip install 'extrap-plugins[cube]'"
TIME_UNITS = {"sec", "s", "seconds", "second", "usec", "msec", "nsec", "ms", "us", "ns"}
_COMBINE = {"MINDOUBLE": MINIMUM, "MAXDOUBLE": MAXIMUM}
VISITS = "visits"  # Score-P's count of a node's visits per location
BLOCK_SIZE = 1 << 23  # values (nodes x locations) converted at once: 64 MiB of float64


class UnsupportedMetricType(InputError):
    """A metric whose values are not plain numbers (histograms, rates, complex values...)."""


@dataclass(frozen=True)
class CubeMetric:
    """A metric as the CUBE file declares it."""

    name: str
    unit: str
    data_type: str
    stored: str  # "INCLUSIVE" or "EXCLUSIVE"
    handle: object = field(repr=False, compare=False, default=None)

    @property
    def combine(self) -> str:
        """How values combine over the call tree and locations: sum, min or max."""
        return _COMBINE.get(self.data_type.upper(), SUM)

    @property
    def kind(self) -> str:
        """``time`` for seconds, ``count`` for integer counters, else ``""``."""
        if self.unit.strip().lower() in TIME_UNITS:
            return "time"
        if _is_integer_type(self.data_type):
            return "count"
        return ""

    def values(self, inclusive: bool) -> str:
        """Whether a call path's value, read as asked, includes its children's (:attr:`Metric.values`).

        A minimum or maximum is inclusive either way: Score-P's ``min_time`` is the shortest visit, children
        included, and has no exclusive part (:meth:`CallTree.exclusive`); shares must not sum it over a subtree.
        """
        return "inclusive" if inclusive or self.combine != SUM else "exclusive"

    def as_metric(self, inclusive: bool) -> Metric:
        """The metric as the experiment holds it, its values read inclusive or exclusive."""
        return Metric(self.name, self.unit, self.kind, self.values(inclusive))


@dataclass
class CubeProfile:
    """An open CUBE file: the call tree in pre-order and the metrics.

    Attributes
    ----------
    path : pathlib.Path
    tree : CallTree
        ``n_nodes`` call-tree nodes (CUBE's cnodes) in depth-first pre-order.
    cnode_ids : ndarray of int64, shape (n_nodes,)
        CUBE's id of each node.
    callpaths : list of str
        The distinct ``->``-joined call paths, in pre-order of first appearance.
    callpath_of_node : ndarray of int64, shape (n_nodes,)
        Index into ``callpaths``; two nodes share one when the same regions
        are called along the same path from different call sites.
    metrics : list of CubeMetric
        Every metric declared in the file (with data or not).
    n_locations : int
    """

    path: pathlib.Path
    tree: CallTree
    cnode_ids: np.ndarray
    callpaths: list[str]
    callpath_of_node: np.ndarray
    metrics: list[CubeMetric]
    n_locations: int
    _parser: object = field(repr=False, default=None)
    _visits_stored: tuple | None = field(repr=False, default=None)

    @property
    def has_duplicate_callpaths(self) -> bool:
        return len(self.callpaths) < self.tree.n_nodes

    def location_values(self, metric: CubeMetric, inclusive: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
        """One metric's values per node and location, inclusive or exclusive.

        Parameters
        ----------
        metric : CubeMetric
        inclusive : bool
            Inclusive values (node and subtree) instead of exclusive ones.

        Returns
        -------
        values : ndarray, shape (n_nodes, n_locations)
            float64, int64 or uint64, after the metric's own type.
        has_data : ndarray of bool, shape (n_nodes,)
            Whether the file holds data for the node (nodes missing from a
            metric's index are zero by CUBE's convention).
        Or None when the file has no data for the metric.

        Raises
        ------
        InputError
            The metric's data are corrupt, or of a type that holds no plain
            numbers (histograms, rates, complex values, ...).
        """
        stored = self._stored_values(metric)
        if stored is None:
            return None
        return self._convert(metric, stored, slice(None), inclusive), self._has_data(metric, stored, inclusive)

    def callpath_values(self, metric: CubeMetric, inclusive: bool, aggregation: str,
                        block_size: int = BLOCK_SIZE) -> tuple[np.ndarray, np.ndarray] | None:
        """One value per call path: converted, merged over duplicate call paths, aggregated over locations.

        Locations are handled in blocks of about ``block_size`` values
        (nodes x locations), so that a run with many ranks needs memory for
        its raw data plus one block, not several copies of all of it.

        A minimum or maximum (min_time, max_time) comes from the locations
        that visited the node (``visits`` > 0): elsewhere Score-P leaves its
        start value (2^64 timer ticks as seconds, or 0), which is no visit's
        time.  A node that no location visited is 0.

        Returns
        -------
        values : ndarray of float64, shape (n_callpaths,)
        has_data : ndarray of bool, shape (n_callpaths,)
        Or None when the file has no data for the metric.
        """
        stored = self._stored_values(metric)
        if stored is None:
            return None
        n = len(self.callpaths)
        width = max(1, block_size // max(self.tree.n_nodes, 1))
        accumulator = LocationAccumulator(aggregation, metric.combine, n)
        visits = self._visits() if metric.combine != SUM else None
        for start in range(0, self.n_locations, width):
            locations = slice(start, start + width)
            unvisited = None if visits is None else self._convert(self._visits_metric, visits, locations, False) == 0
            values = self._convert(metric, stored, locations, inclusive, unvisited)
            if self.has_duplicate_callpaths:
                values = merge_duplicates(values, self.callpath_of_node, n, metric.combine)
            accumulator.add(values)
        has_data = self._has_data(metric, stored, inclusive)
        if self.has_duplicate_callpaths:
            has_data = merge_duplicates(has_data, self.callpath_of_node, n, MAXIMUM)
        return accumulator.result(), has_data

    def _convert(self, metric: CubeMetric, stored, locations: slice, inclusive: bool,
                 no_value: np.ndarray | None = None) -> np.ndarray:
        """Dense values of some locations, shape (n_nodes, n_selected), converted as asked; where ``no_value``
        (same shape, for a float minimum or maximum) is set, NaN, which the conversion and aggregation skip."""
        raw, positions, _ = stored
        block = raw[:, locations]
        # Widest type of the kind, so that sums over the tree cannot overflow an INT8 or UINT16.
        dtype = np.float64 if raw.dtype.kind == "f" else np.int64 if raw.dtype.kind == "i" else np.uint64
        dense = np.zeros((self.tree.n_nodes, block.shape[1]), dtype=dtype)
        dense[positions] = block
        if no_value is not None and dtype == np.float64:
            dense[no_value] = np.nan
        if metric.stored == "INCLUSIVE" and not inclusive:
            return self.tree.exclusive(dense, metric.combine)
        if metric.stored == "EXCLUSIVE" and inclusive:
            return self.tree.inclusive(dense, metric.combine)
        return dense

    @property
    def _visits_metric(self) -> CubeMetric | None:
        return next((m for m in self.metrics if m.name == VISITS), None)

    def _visits(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The stored values of the ``visits`` metric (read once), or None when the file has none."""
        if self._visits_stored is None and self._visits_metric is not None:
            self._visits_stored = self._stored_values(self._visits_metric) or ()
        return self._visits_stored or None

    def _has_data(self, metric: CubeMetric, stored, inclusive: bool) -> np.ndarray:
        present = stored[2]
        return self.tree.subtree_any(present) if metric.stored == "EXCLUSIVE" and inclusive else present

    def _stored_values(self, metric: CubeMetric) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The metric's stored values, shape (n_indexed, n_locations), their nodes' positions, and a presence mask."""
        from pycubexr.utils.exceptions import MissingMetricError, UnsupportedMetricFormatError

        try:
            metric_values = self._parser.get_metric_values(metric.handle, cache=False)
        except MissingMetricError:
            return None
        except UnsupportedMetricFormatError:
            raise UnsupportedMetricType(f"metric {metric.name!r} holds {metric.data_type} values, not plain numbers",
                                        self.path) from None
        except Exception as error:  # pycubexr raises assorted errors for damaged archives
            problem = self._damaged_member(metric, error) or _describe(error)
            raise InputError(f"cannot read the data of metric {metric.name!r}: {problem}", self.path) from None
        raw = getattr(metric_values, "values", None)
        raw = getattr(raw, "_values", raw)  # MinValues/MaxValues wrap a plain array
        if not isinstance(raw, np.ndarray) or raw.dtype.fields is not None or raw.ndim != 1 \
                or not (np.issubdtype(raw.dtype, np.integer) or np.issubdtype(raw.dtype, np.floating)):
            raise UnsupportedMetricType(f"metric {metric.name!r} holds {metric.data_type} values, not plain numbers",
                                        self.path)
        cnode_ids = np.fromiter(metric_values.cnode_indices.keys(), dtype=np.int64,
                                count=len(metric_values.cnode_indices))
        n_locations = self.n_locations
        if cnode_ids.size == 0 or raw.size != cnode_ids.size * n_locations:
            raise InputError(f"metric {metric.name!r} has {raw.size} values for {cnode_ids.size} call-tree nodes "
                             f"and {n_locations} locations; the file is damaged", self.path)
        positions = _positions(self.cnode_ids, cnode_ids)
        if np.any(positions < 0):
            raise InputError(f"metric {metric.name!r} has values for call-tree nodes the file does not define",
                             self.path)
        present = np.zeros(self.tree.n_nodes, dtype=bool)
        present[positions] = True
        return raw.reshape(cnode_ids.size, n_locations), positions, present

    def _damaged_member(self, metric: CubeMetric, error: Exception) -> str:
        """What is wrong with the metric's index and data members of the archive, after pycubexr failed on them
        (a bare ``AssertionError`` for a missing header, a ``struct.error`` for a member cut short); "" when
        nothing shows."""
        archive = getattr(self._parser, "_cubex_file", None)
        identifier = getattr(metric.handle, "id", None)
        if archive is None or identifier is None:
            return ""
        for kind, headers in (("index", (b"CUBEX.INDEX",)), ("data", (b"CUBEX.DATA", b"ZCUBEX.DATA"))):
            name = f"{identifier}.{kind}"
            try:
                member = archive.getmember(name)
                stream = archive.extractfile(member)
                start = stream.read(16) if stream is not None else b""
            except KeyError:
                return f"the archive has no {name}"
            except Exception:  # noqa: BLE001 - only explaining an error already found
                return ""
            if member.size == 0:
                return f"its {kind} file {name} in the archive is empty (cut short or damaged)"
            if not start.startswith(headers):
                return f"its {kind} file {name} in the archive does not start with {headers[0].decode()} (damaged)"
        if isinstance(error, (struct.error, EOFError, zlib.error)):
            return (f"its files {identifier}.index and {identifier}.data in the archive hold fewer bytes than they "
                    f"declare (cut short or damaged: {_describe(error)})")
        return ""

    def close(self) -> None:
        if self._parser is not None:
            self._parser.__exit__(None, None, None)
            self._parser = None

    def __enter__(self) -> CubeProfile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_profile(path: str | os.PathLike) -> CubeProfile:
    """Open a ``.cubex`` file and read its call tree and metric list.

    Raises
    ------
    InputError
        pycubexr is missing, or the file is not a readable CUBE archive
        (truncated, corrupt, not a CUBE file at all), naming the file.
    """
    path = pathlib.Path(path)
    try:
        from pycubexr import CubexParser
    except ImportError:
        raise InputError(INSTALL_HINT, path) from None
    try:
        size = path.stat().st_size
    except OSError as error:
        raise InputError(f"cannot read the file: {error.strerror or error}", path) from None
    if size == 0:
        raise InputError(EMPTY_FILE, path)
    parser = CubexParser(str(path))
    problem = None
    with warnings.catch_warnings():
        # CubeWriter 4.8 wrote bad tar checksums; pycubexr repairs them and warns.
        warnings.filterwarnings("ignore", message=".*invalid checksum.*")
        try:
            parser.__enter__()
        except Exception as error:
            problem = _describe(error)
        if problem is not None:
            _close_quietly(parser)
    if problem is not None:
        raise _unreadable(problem, path)
    try:
        cnodes, parent = _preorder(parser.get_root_cnodes())
        if not cnodes:
            raise InputError("the CUBE file has an empty call tree", path)
        tree = CallTree.from_parents(parent)
        callpaths, callpath_of_node = _callpath_names(cnodes, parent)
        metrics = [
            CubeMetric(m.name, (m.units or "").strip(), (m.data_type or "").strip(), m.metric_type, m)
            for m in parser.all_metrics()
        ]
        # pycubexr finds a metric's data and a node's values by id: one defined twice reads another's
        for what, ids in (("metric", [m.handle.id for m in metrics]), ("call-tree node", [c.id for c in cnodes])):
            twice = next((i for i, n in collections.Counter(ids).items() if n > 1), None)
            if twice is not None:
                raise _unreadable(f"the file defines {what} id {twice} twice", path)
        n_locations = len(parser.get_locations())
    except InputError:
        _close_quietly(parser)
        raise
    except Exception as error:
        _close_quietly(parser)
        raise _unreadable(_describe(error), path) from None
    cnode_ids = np.fromiter((c.id for c in cnodes), dtype=np.int64, count=len(cnodes))
    return CubeProfile(path, tree, cnode_ids, callpaths, callpath_of_node, metrics, n_locations, parser)


def _unreadable(problem: str, path: pathlib.Path) -> InputError:
    return InputError(f"not a readable CUBE file ({problem}); is it truncated or corrupt?", path)


def _close_quietly(parser) -> None:
    """Close the archive pycubexr may have opened before it failed."""
    archive = getattr(parser, "_cubex_file", None)
    if archive is not None:
        try:
            archive.close()
        except Exception:
            pass


def _preorder(roots) -> tuple[list, list[int]]:
    """Every cnode in depth-first pre-order, with the pre-order index of its parent."""
    nodes, parents = [], []
    stack = [(root, -1) for root in reversed(roots)]
    while stack:
        node, parent = stack.pop()
        index = len(nodes)
        nodes.append(node)
        parents.append(parent)
        stack.extend((child, index) for child in reversed(node.get_children()))
    return nodes, parents


SEPARATOR_SHOWN = "-›"
"""How a ``->`` inside a region name (C++'s ``operator->``) is shown: as the separator it would make the call
tree's parent of ``main->Ptr::operator->()`` ``main->Ptr::operator``."""


def _callpath_names(cnodes, parent: list[int]) -> tuple[list[str], np.ndarray]:
    """``->``-joined region names per node, and the distinct names."""
    full: list[str] = []
    for node, p in zip(cnodes, parent):
        name = node.region.name if node.region is not None else f"cnode {node.id}"
        if CALLPATH_SEPARATOR in name:
            shown = name.replace(CALLPATH_SEPARATOR, SEPARATOR_SHOWN)
            warnings.warn(ExtrapWarning(f"region {name!r} contains the call-path separator {CALLPATH_SEPARATOR!r}: "
                                        f"it is called {shown!r}"), stacklevel=2)
            name = shown
        full.append(name if p < 0 else full[p] + CALLPATH_SEPARATOR + name)
    codes: dict[str, int] = {}
    of_node = np.fromiter((codes.setdefault(name, len(codes)) for name in full), dtype=np.int64, count=len(full))
    return list(codes), of_node


def _positions(known_ids: np.ndarray, wanted_ids: np.ndarray) -> np.ndarray:
    """Pre-order position of each wanted cnode id; -1 for an unknown id."""
    order = np.argsort(known_ids, kind="stable")
    sorted_ids = known_ids[order]
    slot = np.clip(np.searchsorted(sorted_ids, wanted_ids), 0, max(sorted_ids.size - 1, 0))
    found = sorted_ids[slot] == wanted_ids
    return np.where(found, order[slot], -1)


def _is_integer_type(data_type: str) -> bool:
    upper = data_type.upper()
    return upper.startswith(("INT", "UINT", "SIGNED", "UNSIGNED", "SHORT", "CHAR"))


def _describe(error: BaseException) -> str:
    """A one-line description of an error raised while parsing."""
    import tarfile

    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if isinstance(error, tarfile.ReadError):
        return "not a tar archive" if text.startswith("file could not be opened") else f"damaged archive: {text}"
    if isinstance(error, KeyError) and "anchor.xml" in text:
        return "no anchor.xml in the archive"
    if len(text) > 200:
        text = text[:200] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


__all__ = ["CubeMetric", "CubeProfile", "UnsupportedMetricType", "open_profile", "INSTALL_HINT"]
