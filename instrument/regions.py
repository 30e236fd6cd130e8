"""The timing core: regions, a call-path tree per thread, and per-rank snapshots.

A region is entered and left around a piece of code::

    @region                      # named after the function's qualified name
    def solve(): ...

    @region("halo exchange")     # named explicitly
    def exchange(): ...

    with region("update"):       # a block
        ...

Every thread has a cursor into its own call-path tree; entering a region
moves the cursor to the child of that name (created on first use), leaving
moves it back.  Each node keeps its visits, its inclusive time, the shortest
and longest visit, and, for MPI calls recorded by :mod:`.mpi`, the messages
and bytes sent and received.  Exclusive time and inclusive communication
counts are derived when a snapshot is taken.

Generators and coroutines decorated with :func:`region` are timed while they
run, not while they are suspended: each call is one visit whose time is the
sum of its steps, attributed to the call path where it first ran.  Async
generators are refused with a ``TypeError``.

This module never imports mpi4py: a plain Python program is a run with one
process.  ``EXTRAP_INSTRUMENT=0`` in the environment makes every region free
(decorators return the function itself, ``with region`` does nothing);
:func:`disable` stops recording at run time.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import threading
import warnings
from time import perf_counter
from typing import Any, Callable

SEPARATOR = "->"

# Metric columns of a snapshot row, in order; the output module adds units.
METRICS = (
    "time",
    "time_exclusive",
    "visits",
    "visit_time_min",
    "visit_time_max",
    "bytes_sent",
    "bytes_received",
    "messages_sent",
    "messages_received",
)
COMMUNICATION = METRICS[5:]


def _enabled_by_environment() -> bool:
    return os.environ.get("EXTRAP_INSTRUMENT", "1").strip().lower() not in ("0", "false", "no", "off")


class _State:
    """Process-wide switches, read on the hot path as ``_state.off``."""

    __slots__ = ("off", "environment_off")

    def __init__(self) -> None:
        self.environment_off = not _enabled_by_environment()
        self.off = self.environment_off


_state = _State()


def enabled() -> bool:
    """Whether regions record right now."""
    return not _state.off


def enable() -> None:
    """Record again after :func:`disable` (no effect when ``EXTRAP_INSTRUMENT=0``)."""
    _state.off = _state.environment_off
    if not _state.off:
        Region.__enter__, Region.__exit__ = Region._enter, Region._exit


def disable() -> None:
    """Stop recording.

    Decorated functions then only pay a flag check; ``with region`` blocks
    get the no-op methods of a disabled region (see :class:`_NullRegion`).
    Regions open at this moment stay open and are repaired, with a warning,
    when recording resumes.
    """
    _state.off = True
    Region.__enter__, Region.__exit__ = _NullRegion.__enter__, _NullRegion.__exit__


# ---------------------------------------------------------------------------- tree
class Node:
    """One call path of one thread: its statistics and its children by name."""

    __slots__ = (
        "name", "parent", "children", "visits", "time", "tmin", "tmax", "start",
        "comm", "bytes_sent", "bytes_received", "messages_sent", "messages_received", "counters",
    )

    def __init__(self, name: str, parent: Node | None) -> None:
        self.name = name
        self.parent = parent
        self.children: dict[str, Node] = {}
        self.visits = 0
        self.time = 0.0
        self.tmin = math.inf
        self.tmax = 0.0
        self.start = 0.0
        self.comm = False  # an MPI call: carries message and byte counts
        self.bytes_sent = 0
        self.bytes_received = 0
        self.messages_sent = 0
        self.messages_received = 0
        self.counters: dict[str, float] | None = None  # user counters (count/peak), created on first use

    def add(self, name: str) -> Node:
        child = Node(name, self)
        self.children[name] = child
        return child

    def close(self, elapsed: float) -> None:
        """Record one finished visit of ``elapsed`` seconds."""
        self.visits += 1
        self.time += elapsed
        if elapsed < self.tmin:
            self.tmin = elapsed
        if elapsed > self.tmax:
            self.tmax = elapsed


class Cursor:
    """A thread's position in its own call-path tree."""

    __slots__ = ("node", "root", "thread", "status")

    def __init__(self, thread: str) -> None:
        self.root = Node("", None)
        self.node = self.root
        self.thread = thread
        self.status = None  # an MPI.Status the MPI module reuses in this thread


_local = threading.local()
_cursors: list[Cursor] = []
_cursors_lock = threading.Lock()


def new_cursor() -> Cursor:
    """The calling thread's cursor, created and registered on its first region."""
    cursor = Cursor(threading.current_thread().name)
    with _cursors_lock:
        _cursors.append(cursor)
    _local.cursor = cursor
    return cursor


def cursor() -> Cursor:
    try:
        return _local.cursor
    except AttributeError:
        return new_cursor()


def reset() -> None:
    """Forget everything measured so far, in every thread (for tests and notebooks)."""
    with _cursors_lock:
        for c in _cursors:
            c.root.children.clear()
            c.node = c.root
    _counters.clear()
    _warned_outside.clear()


# -------------------------------------------------------------------------- regions
class Region:
    """A named region: a context manager and a decorator.

    Region objects hold no timing state (that lives in each thread's tree), so
    one object may be entered by several threads and recursively.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = _check_name(name)

    def __repr__(self) -> str:
        return f"region({self.name!r})"

    def __enter__(self) -> Region:
        if _state.off:
            return self
        try:
            c = _local.cursor
        except AttributeError:
            c = new_cursor()
        parent = c.node
        node = parent.children.get(self.name)
        if node is None:
            node = parent.add(self.name)
        c.node = node
        node.start = perf_counter()
        return self

    def __exit__(self, kind, value, traceback) -> bool:
        now = perf_counter()
        if _state.off:
            return False
        try:
            c = _local.cursor
        except AttributeError:  # a thread that never recorded: entered in another thread, or while disabled
            _close_in_another_thread(None, self.name, now)
            return False
        node = c.node
        if node.name != self.name or node.parent is None:
            _mismatch(c, self.name, now)
            return False
        node.close(now - node.start)
        c.node = node.parent
        return False

    def __call__(self, function: Callable) -> Callable:
        return _decorate(function, self.name)

    _enter, _exit = __enter__, __exit__  # the recording methods, restored by enable()


class _NullRegion:
    """What :func:`region` returns when ``EXTRAP_INSTRUMENT=0``: costs (almost) nothing.

    ``__enter__`` and ``__exit__`` are the bound C method ``"".format``: the
    ``with`` statement calls it without arguments and with the three
    exception values, it returns ``""`` (false: exceptions propagate), and
    no Python frame is created, which halves the cost of a disabled region
    (about 90 ns instead of 150 ns on CPython 3.11).
    """

    __slots__ = ()
    __enter__ = "".format
    __exit__ = "".format

    def __call__(self, function: Callable) -> Callable:
        return function


_NULL = _NullRegion()
_regions: dict[str, Region] = {}
_on_new_region: list[Callable[[], None]] = []
"""Called once per new region name (the MPI module uses it to find MPI early)."""


def region(name_or_function: str | Callable | None = None, /):
    """A region, as decorator or context manager.

    ``@region`` names the region after the function's qualified name,
    ``@region("name")`` and ``with region("name"):`` name it explicitly.

    Raises
    ------
    ValueError
        The name is empty or contains ``->`` (the call-path separator).
    TypeError
        The decorated object is not a function, or is an async generator
        function (time its body with ``with region(...)`` instead).
    """
    if callable(name_or_function) and not isinstance(name_or_function, str):
        function = name_or_function
        if _state.environment_off:
            return function
        return _decorate(function, _function_name(function))
    if name_or_function is None:
        raise TypeError("region() needs a name or a function: @region, @region('name') or with region('name')")
    if not isinstance(name_or_function, str):
        raise TypeError(f"region name must be a str, got {type(name_or_function).__name__}")
    if _state.environment_off:
        return _NULL
    found = _regions.get(name_or_function)
    if found is None:
        found = _regions[name_or_function] = Region(name_or_function)
        for hook in _on_new_region:
            hook()
    return found


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a region name must be a non-empty str, got {name!r}")
    if SEPARATOR in name:
        raise ValueError(f"a region name must not contain {SEPARATOR!r} (the call-path separator): {name!r}")
    if not name.isprintable():  # a line break or a tab would break every table and line that names the call path
        raise ValueError(f"a region name must be printable text (no line breaks, tabs or other control "
                         f"characters): {name!r}")
    return name


def _function_name(function: Callable) -> str:
    target = function.__func__ if isinstance(function, (staticmethod, classmethod)) else function
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
    return name.replace(".<locals>", "")


def _mismatch(c: Cursor, name: str, now: float) -> None:
    """``name`` closes but is not the innermost open region: repair the cursor and say so.

    If ``name`` is open further up, the regions still open inside it (a
    ``with region`` left open across a yield or await) are closed with it;
    otherwise the closing region was already closed that way and is ignored.
    """
    inner = []
    node = c.node
    while node.parent is not None and node.name != name:
        inner.append(node)
        node = node.parent
    if node.parent is None:
        if _close_in_another_thread(c, name, now):
            return
        what = f"region {name!r} closed but is not open (it was closed early because a region around it ended)"
    else:
        for open_node in inner + [node]:
            open_node.close(now - open_node.start)
        c.node = node.parent
        names = ", ".join(repr(n.name) for n in inner)
        verb = "was" if len(inner) == 1 else "were"
        what = f"region {name!r} closed while {names} inside it {verb} still open; closed them too"
    warnings.warn(
        f"{what} (regions must nest: a 'with region' must not span a yield or await; "
        f"decorate the generator or coroutine instead)",
        RuntimeWarning,
        stacklevel=3,
    )


def _close_in_another_thread(c: Cursor | None, name: str, now: float) -> bool:
    """Close ``name`` where another thread entered it (``__enter__`` and ``__exit__`` called in two threads, as
    around a lock's hold or a task handed over): in the one thread whose innermost open region it is, else
    nowhere (False).  That thread's later regions are then no longer recorded below it."""
    with _cursors_lock:
        entered = [o for o in _cursors if o is not c and o.node.name == name and o.node.parent is not None]
    if len(entered) != 1:
        return False
    node = entered[0].node
    node.close(now - node.start)
    entered[0].node = node.parent
    return True


# ------------------------------------------------------------------------ decorate
def _decorate(function: Callable, name: str) -> Callable:
    _check_name(name)
    if _state.environment_off:
        return function
    if isinstance(function, (staticmethod, classmethod)):
        return type(function)(_decorate(function.__func__, name))
    if isinstance(function, type):
        raise TypeError(f"region cannot decorate the class {_function_name(function)}; decorate its methods")
    if not callable(function):
        raise TypeError(f"region can only decorate functions, got {type(function).__name__}")
    if name not in _regions:
        _regions[name] = Region(name)
        for hook in _on_new_region:
            hook()
    if inspect.isasyncgenfunction(function):
        raise TypeError(
            f"region cannot time the async generator function {_function_name(function)!r} (not supported); "
            f"put 'with region(...)' around the work inside it, between its yields"
        )
    if inspect.isgeneratorfunction(function):
        return _time_generator(function, name)
    if inspect.iscoroutinefunction(function):
        return _time_coroutine(function, name)
    return _time_function(function, name)


def _time_function(function: Callable, name: str) -> Callable:
    local, perf, state = _local, perf_counter, _state

    @functools.wraps(function)
    def timed(*args, **kwargs):
        if state.off:
            return function(*args, **kwargs)
        try:
            c = local.cursor
        except AttributeError:
            c = new_cursor()
        parent = c.node
        node = parent.children.get(name)
        if node is None:
            node = parent.add(name)
        c.node = node
        node.start = start = perf()
        try:
            return function(*args, **kwargs)
        finally:
            # Inlined (also in mpi.py's wrappers) rather than a shared helper: one call less per region
            # keeps enter+exit under the 1 µs target.
            elapsed = perf() - start
            node.visits += 1
            node.time += elapsed
            if elapsed < node.tmin:
                node.tmin = elapsed
            if elapsed > node.tmax:
                node.tmax = elapsed
            c.node = parent

    return timed


class _Steps:
    """Times the steps of one generator or coroutine call as one visit.

    The call's node is fixed where its first step runs; every step moves the
    running thread's cursor there and back, so suspended calls never hold the
    cursor and interleaved calls (asyncio tasks) cannot corrupt the tree.
    """

    __slots__ = ("name", "node", "owner", "active", "started")

    def __init__(self, name: str) -> None:
        self.name = name
        self.node: Node | None = None
        self.owner: Cursor | None = None
        self.active = 0.0
        self.started = False

    def step(self, advance: Callable[[], Any]) -> Any:
        if _state.off:
            return advance()
        c = cursor()
        saved = c.node
        node = self.node
        if node is None or c is not self.owner:  # first step, or resumed in another thread
            node = saved.children.get(self.name) or saved.add(self.name)
            if self.node is None:
                self.node, self.owner = node, c
        c.node = node
        node.start = start = perf_counter()
        self.started = True
        try:
            return advance()
        finally:
            self.active += perf_counter() - start
            c.node = saved

    def finish(self) -> None:
        if self.node is not None and self.started:
            self.node.close(self.active)
            self.started = False


def _time_generator(function: Callable, name: str) -> Callable:
    @functools.wraps(function)
    def timed(*args, **kwargs):
        steps = _Steps(name)
        generator = function(*args, **kwargs)
        try:
            value = None
            error: BaseException | None = None
            while True:
                try:
                    if error is None:
                        item = steps.step(functools.partial(generator.send, value))
                    else:
                        pending, error = error, None
                        item = steps.step(functools.partial(generator.throw, pending))
                except StopIteration as stop:
                    return stop.value
                try:
                    value = yield item
                except GeneratorExit:
                    steps.step(generator.close)
                    raise
                except BaseException as thrown:  # delivered into the wrapped generator
                    error, value = thrown, None
        finally:
            steps.finish()

    return timed


def _time_coroutine(function: Callable, name: str) -> Callable:
    import types

    @types.coroutine
    def drive(coroutine, steps: _Steps):
        value = None
        error: BaseException | None = None
        while True:
            try:
                if error is None:
                    future = steps.step(functools.partial(coroutine.send, value))
                else:
                    pending, error = error, None
                    future = steps.step(functools.partial(coroutine.throw, pending))
            except StopIteration as stop:
                return stop.value
            try:
                value = yield future
            except GeneratorExit:
                steps.step(coroutine.close)
                raise
            except BaseException as thrown:  # cancellation and friends go into the coroutine
                error, value = thrown, None

    @functools.wraps(function)
    async def timed(*args, **kwargs):
        steps = _Steps(name)
        coroutine = function(*args, **kwargs)
        try:
            return await drive(coroutine, steps)
        finally:
            steps.finish()

    return timed


# ------------------------------------------------------------------------ counters
COUNTER_KINDS = ("count", "peak")
_counters: dict[str, tuple[str, str]] = {}
"""Every user counter recorded so far: name -> (kind, unit), kind ``count`` (summed) or ``peak`` (maximum)."""
_warned_outside: set[str] = set()


def record_counter(name: str, value: float, kind: str, unit: str) -> None:
    """Add ``value`` to (``count``) or raise to it (``peak``) the counter ``name`` of the innermost open region.

    Counters are inclusive, like time and bytes: a call path's count is its
    own plus its descendants', its peak the largest of its own and theirs.
    Over threads counts add and peaks take the maximum.

    Raises
    ------
    ValueError
        The name is empty, is a built-in metric (:data:`METRICS`), was used
        before as the other kind, or the value is not a finite number.
    """
    if _state.off:
        return
    known = _counters.get(name)
    if known is None:
        if not isinstance(name, str) or not name.strip() or name != name.strip() or SEPARATOR in name:
            raise ValueError(f"a counter name must be a non-empty str without surrounding spaces or "
                             f"{SEPARATOR!r}, got {name!r}")
        if name in METRICS:
            raise ValueError(f"{name!r} is a metric the shim measures itself; choose another counter name")
        if not isinstance(unit, str):
            raise TypeError(f"unit must be a str, got {type(unit).__name__}")
        _counters[name] = (kind, unit)
    elif known != (kind, unit):
        if known[0] != kind:
            raise ValueError(f"counter {name!r} is a {known[0]} counter; it cannot also be a {kind} counter")
        raise ValueError(f"counter {name!r} has the unit {known[1]!r}; it cannot also have {unit!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)  # numpy scalars
        except (TypeError, ValueError):
            raise TypeError(f"counter {name!r}: the value must be a number, got {type(value).__name__}") from None
    if not math.isfinite(value):
        raise ValueError(f"counter {name!r}: the value must be finite, got {value!r}")
    try:
        c = _local.cursor
    except AttributeError:
        c = new_cursor()
    node = c.node
    if node.parent is None:
        if name not in _warned_outside:
            _warned_outside.add(name)
            warnings.warn(f"counter {name!r} recorded outside any region: ignored (record it inside a region)",
                          RuntimeWarning, stacklevel=3)
        return
    counters = node.counters
    if counters is None:
        counters = node.counters = {}
    if kind == "count":
        counters[name] = counters.get(name, 0.0) + value
    elif value > counters.get(name, -math.inf):
        counters[name] = float(value)


# ------------------------------------------------------------------------ snapshot
def snapshot(now: float | None = None, counters: dict[str, dict[str, float]] | None = None,
             ) -> tuple[list[str], list[list[float]]]:
    """Every thread's tree merged by call path, with open regions closed at ``now``.

    Open regions (a decorated ``main`` that calls ``MPI.Finalize()`` inside
    it, a thread still running) count one visit lasting until ``now``; the
    live trees are not changed.

    Returns
    -------
    callpaths : list of str, length n_paths
        ``->``-joined region names, parents before their children.
    rows : list of list of float, shape (n_paths, len(METRICS))
        The metrics of :data:`METRICS` per call path, summed over threads
        (shortest and longest visit: over threads).  The communication
        metrics are inclusive (own MPI calls plus descendants) and NaN where
        no MPI call happened below the path; the visit times are NaN for a
        path never visited.  Exclusive time is inclusive time minus the
        children's inclusive time, never below 0.

    When ``counters`` is a dict, it receives the user counters
    (:func:`record_counter`), inclusive: ``{callpath: {name: value}}``,
    only for paths where a counter was recorded at or below.
    """
    now = perf_counter() if now is None else now
    merged: dict[str, list[float]] = {}
    with _cursors_lock:
        cursors = list(_cursors)
    for c in cursors:
        _flatten(c, now, merged, counters)
    rows = list(merged.values())
    for row in rows:
        if math.isinf(row[3]):
            row[3] = row[4] = math.nan
    return list(merged), rows


def _add_counters(node: Node, user: dict[int, dict[str, float] | None], counters: dict[str, dict[str, float]],
                  path: str) -> None:
    """A node's user counters, its children's included (taken from ``user``), added to ``counters[path]``."""
    own = dict(node.counters) if node.counters else None
    for child in node.children.values():
        below = user.pop(id(child), None)
        if below:
            own = _merge_counters(own or {}, below)
    user[id(node)] = own
    if not own:
        return
    target = counters.setdefault(path, {})
    for name, value in own.items():
        if name not in target:
            target[name] = value
        elif _counters[name][0] == "peak":
            target[name] = max(target[name], value)
        else:
            target[name] += value


def _flatten(c: Cursor, now: float, merged: dict[str, list[float]],
             counters: dict[str, dict[str, float]] | None = None) -> None:
    """Add one thread's tree to ``merged`` (iteratively: recursion may be deep)."""
    open_nodes = set()
    node = c.node
    while node is not None and node.parent is not None:
        open_nodes.add(id(node))
        node = node.parent
    order: list[tuple[Node, list[float]]] = []
    paths: dict[int, str] = {}
    stack = [(child, child.name) for child in reversed(list(c.root.children.values()))]
    while stack:  # parents first: rows appear in tree order
        node, path = stack.pop()
        row = merged.get(path)
        if row is None:
            row = merged[path] = [0.0, 0.0, 0.0, math.inf, 0.0, math.nan, math.nan, math.nan, math.nan]
        order.append((node, row))
        paths[id(node)] = path
        for child in reversed(list(node.children.values())):
            stack.append((child, path + SEPARATOR + child.name))
    inclusive: dict[int, float] = {}
    comm: dict[int, list | None] = {}
    user: dict[int, dict[str, float] | None] = {}
    for node, row in reversed(order):  # children before their parents
        if counters is not None:
            _add_counters(node, user, counters, paths[id(node)])
        visits, total, tmin, tmax = node.visits, node.time, node.tmin, node.tmax
        if id(node) in open_nodes:
            elapsed = max(now - node.start, 0.0)
            visits, total = visits + 1, total + elapsed
            tmin, tmax = min(tmin, elapsed), max(tmax, elapsed)
        counts = None
        if node.comm:
            counts = [node.bytes_sent, node.bytes_received, node.messages_sent, node.messages_received]
        children_time = 0.0
        for child in list(node.children.values()):
            children_time += inclusive.pop(id(child), 0.0)
            child_counts = comm.pop(id(child), None)
            if child_counts is not None:
                counts = child_counts if counts is None else [a + b for a, b in zip(counts, child_counts)]
        inclusive[id(node)] = total
        comm[id(node)] = counts
        row[0] += total
        row[1] += max(total - children_time, 0.0)
        row[2] += visits
        if visits:
            row[3] = min(row[3], tmin)
            row[4] = max(row[4], tmax)
        if counts is not None:
            for k, value in enumerate(counts):
                row[5 + k] = value if math.isnan(row[5 + k]) else row[5 + k] + value


def _merge_counters(into: dict[str, float], other: dict[str, float]) -> dict[str, float]:
    """Counts add, peaks take the maximum."""
    for name, value in other.items():
        if name not in into:
            into[name] = value
        elif _counters[name][0] == "peak":
            into[name] = max(into[name], value)
        else:
            into[name] += value
    return into
