"""Co-design: requirements under system upgrades (Wolf's Extra-P slides: "Lightweight requirements engineering
for co-design").

Each application's per-process requirements -- memory footprint, computation,
communication, memory access, or any other metric -- are PMNF models of the
process count ``p`` and the problem size per process ``n``.  A system has
``p`` processes with ``M`` bytes of memory each; an upgrade changes them.
Wolf's Extra-P slides' rule: the problem size per process fills the memory, so ``n``
solves ``memory(p, n) = M``; the overall problem size is ``p · n``.  For each
application and upgrade the result is the ratio new/old of the problem size
per process, the overall problem size and every requirement, per process and
in total (per process times ``p``)::

    result = extrap_plugins.requirements(
        {"kripke": "runs/kripke/", "lulesh": "runs/lulesh.jsonl"},
        "system.toml",                      # [system] and [upgrades]; or a System
        roles={"computation": "PAPI_FP_OPS"})
    print(result.text())

The system file (TOML)::

    [system]
    processes = 65536
    memory_per_process = "2 GiB"            # or bytes: 2147483648
    [upgrades]
    "double the racks"   = { processes = "2x" }
    "double the sockets" = { processes = "2x", memory_per_process = "0.5x" }
    "double the memory"  = { memory_per_process = "2x" }

Instead of ``processes`` a system may give its structure -- ``racks``,
``nodes_per_rack``, ``sockets_per_node``, ``cores_per_socket``,
``processes_per_core`` (their product is ``p``) -- and instead of
``memory_per_process`` the memory of a node, socket or core
(``memory_per_node`` ...), divided among the processes there; an upgrade
then changes those (``sockets_per_node = "2x"``).
"""

from __future__ import annotations

import contextlib
import difflib
import math
import os
import pathlib
import re
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .codesign_output import is_size as _is_size, size_text as _size_text
from .errors import ExtrapWarning, InputError
from .experiment import Experiment, matching
from .formatting import format_value, json_plain
from .models import ModelSet

__all__ = ["System", "Upgrade", "Requirements", "RequirementRow", "requirements", "load_system",
           "parse_roles", "parse_upgrade", "default_roles", "requirement_function"]

FORMAT = "extrap-plugins/requirements"
VERSION = 1

STRUCTURE = ("racks", "nodes_per_rack", "sockets_per_node", "cores_per_socket", "processes_per_core")
"""Keys whose product is the process count, outermost first."""
MEMORY_OF = {"memory_per_node": 2, "memory_per_socket": 3, "memory_per_core": 4}
"""Memory of a node, socket or core: divided by the product of the STRUCTURE keys from this index on."""
SYSTEM_KEYS = ("processes", "memory_per_process", *STRUCTURE, *MEMORY_OF)
WHOLE = ("processes", *STRUCTURE[:-1])
"""Counts given as values are whole numbers; processes_per_core may be a fraction (a process on several cores)."""

# Default metrics per role: the first alternative whose metrics all exist (case-insensitive) wins;
# an alternative of several metrics plays the role with their sum.
ROLE_DEFAULTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "memory": (("bytes_used",), ("memory",), ("memory_footprint",), ("footprint",), ("resident_memory",),
               ("rss",), ("maxrss",), ("max_rss",), ("mem",)),
    "computation": (("flop",), ("flops",), ("fp_ops",), ("PAPI_FP_OPS",), ("PAPI_DP_OPS",), ("PAPI_SP_OPS",),
                    ("operations",), ("ops",), ("PAPI_TOT_INS",)),
    "communication": (("bytes_sent", "bytes_received"), ("bytes_sent",), ("bytes_transferred",), ("bytes",),
                      ("communication",)),
    "memory_access": (("loads_stores",), ("loads", "stores"), ("PAPI_LST_INS",), ("PAPI_LD_INS", "PAPI_SR_INS"),
                      ("memory_accesses",), ("memory_access",)),
}
ROLE_ORDER = ("memory", "computation", "communication", "memory_access")

_SIZE_UNITS = {"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "pb": 1e15,
               "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "pib": 2**50}
_QUANTITY = re.compile(r"^\s*([0-9.eE+-]+)\s*([A-Za-z]*)\s*$")
_FACTOR = re.compile(r"^\s*([0-9.eE+-]+)\s*[x×]\s*$")


# ---------------------------------------------------------------------------- values
def _number(value: Any, what: str, where: str | None, *, factor: bool, size: bool = True,
            whole: bool = False) -> tuple[str, float]:
    """``("value", 2147483648.0)`` or ``("factor", 2.0)`` from a TOML or command-line value.

    Numbers, where ``size`` sizes with a unit (``"2 GiB"``, ``"512MB"``; a count, such as the processes, takes
    none; where ``whole``, it is a whole number) and, where ``factor``, factors (``"2x"``, ``"0.5x"``).  Every
    value must be positive and finite.
    """
    kind, number = "value", None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        match = _FACTOR.match(value)
        if match and factor:
            kind, number = "factor", _float(match.group(1))
        else:
            match = _QUANTITY.match(value)
            if match and match.group(2).lower() in _SIZE_UNITS and (size or not match.group(2)):
                base = _float(match.group(1))
                number = None if base is None else base * _SIZE_UNITS[match.group(2).lower()]
    if number is None or not math.isfinite(number) or number <= 0:
        expected = ("a positive number" + (", a size such as \"2 GiB\"" if size else " (a count, without a unit)")
                    + (", or a factor such as \"2x\"" if factor else ""))
        raise InputError(f"{what}: expected {expected}, got {value!r}", where)
    if whole and kind == "value" and not number.is_integer():  # 2.5 processes: meant 2.5x?
        hint = f" (a factor is written \"{number:g}x\")" if factor else ""
        raise InputError(f"{what}: a count is a whole number, got {value!r}{hint}", where)
    return kind, number


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


# ---------------------------------------------------------------------------- system
@dataclass(frozen=True)
class System:
    """A machine's size: what it gives (``values``), and its process count and memory per process.

    ``values`` maps keys of :data:`SYSTEM_KEYS` to positive numbers;
    ``processes`` is ``values["processes"]`` or the product of the
    structure keys given, ``memory_per_process`` is given or derived from
    the memory of a node, socket or core.
    """

    values: Mapping[str, float]
    source: str | None = None

    def __post_init__(self) -> None:
        unknown = [k for k in self.values if k not in SYSTEM_KEYS]
        if unknown:
            raise InputError(f"[system] has no key {', '.join(map(repr, unknown))}; "
                             f"the keys are {', '.join(SYSTEM_KEYS)}", self.source)
        structure = [k for k in STRUCTURE if k in self.values]
        if "processes" in self.values and structure:
            raise InputError(f"[system] gives processes and {', '.join(structure)}: give the process count "
                             f"or the structure, not both", self.source)
        if "processes" not in self.values and not structure:
            raise InputError("[system] needs processes (or racks, nodes_per_rack, sockets_per_node, "
                             "cores_per_socket, processes_per_core)", self.source)
        memories = [k for k in ("memory_per_process", *MEMORY_OF) if k in self.values]
        if len(memories) != 1:
            what = "no memory" if not memories else f"{len(memories)} memories ({', '.join(memories)})"
            raise InputError(f"[system] gives {what}; give one of memory_per_process, memory_per_node, "
                             f"memory_per_socket, memory_per_core", self.source)

    @classmethod
    def of(cls, processes: float, memory_per_process: float | str) -> System:
        """``System.of(65536, "2 GiB")``: a system by its process count and memory per process."""
        return cls({"processes": _number(processes, "processes", None, factor=False, size=False, whole=True)[1],
                    "memory_per_process": _number(memory_per_process, "memory_per_process", None,
                                                  factor=False)[1]})

    @property
    def processes(self) -> float:
        if "processes" in self.values:
            return float(self.values["processes"])
        return float(math.prod(self.values.get(k, 1.0) for k in STRUCTURE))

    @property
    def memory_per_process(self) -> float:
        if "memory_per_process" in self.values:
            return float(self.values["memory_per_process"])
        for key, start in MEMORY_OF.items():
            if key in self.values:
                if "processes" in self.values:
                    raise InputError(f"[system] gives {key} with processes: the processes per "
                                     f"{key.split('_')[-1]} are unknown; give memory_per_process", self.source)
                share = math.prod(self.values.get(k, 1.0) for k in STRUCTURE[start:])
                return float(self.values[key]) / share
        raise AssertionError("checked in __post_init__")

    def describe(self) -> dict[str, Any]:
        """The JSON form: what was given, and the process count and memory per process."""
        return {**{k: json_plain(v) for k, v in self.values.items()},
                "processes": json_plain(self.processes), "memory_per_process": json_plain(self.memory_per_process)}


@dataclass(frozen=True)
class Upgrade:
    """A change of a system: per key, ``("factor", 2.0)`` or ``("value", 131072.0)``."""

    name: str
    changes: Mapping[str, tuple[str, float]]
    source: str | None = None
    line: int | None = None
    """Where the system file names it (for errors: FILE:LINE)."""

    def apply(self, system: System) -> System:
        """The upgraded system.

        Keys the system gives are changed in place; ``processes`` and
        ``memory_per_process`` may change any system (they override what the
        structure gives).

        Raises
        ------
        InputError
            A key the system does not give, or an upgrade that changes nothing.
        """
        values = dict(system.values)
        overrides: dict[str, float] = {}
        for key, (kind, number) in self.changes.items():
            if key in ("processes", "memory_per_process") and key not in values:
                old = system.processes if key == "processes" else system.memory_per_process
                overrides[key] = old * number if kind == "factor" else number
                continue
            if key not in values:
                raise InputError(f"upgrade {self.name!r} changes {key}, which the system does not give; "
                                 f"the system gives {', '.join(system.values)}", self.source, self.line)
            values[key] = values[key] * number if kind == "factor" else number
        new = System(values, system.source)
        if overrides:
            base = {"processes": new.processes, "memory_per_process": new.memory_per_process, **overrides}
            new = System(base, system.source)
        if math.isclose(new.processes, system.processes, rel_tol=1e-12) and math.isclose(
                new.memory_per_process, system.memory_per_process, rel_tol=1e-12):
            raise InputError(f"upgrade {self.name!r} changes nothing: the system keeps "
                             f"{system.processes:g} processes and {_size_text(system.memory_per_process)} "
                             f"per process", self.source, self.line)
        return new


def parse_upgrade(text: str) -> Upgrade:
    """``"bigger=processes:2x,memory_per_process:0.5x"`` (the ``--upgrade`` syntax) -> Upgrade."""
    name, sep, body = text.partition("=")
    name = name.strip()
    if not sep or not name or not body.strip():
        raise InputError(f"--upgrade {text!r}: expected NAME=KEY:VALUE,..., such as "
                         f"'double the racks=processes:2x'")
    changes = {}
    for item in body.split(","):
        key, sep, value = item.partition(":")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"--upgrade {text!r}: {item.strip()!r} is not KEY:VALUE (such as processes:2x)")
        changes[key] = value.strip()
    return _upgrade(name, changes, f"--upgrade {name}")


def _upgrade(name: str, changes: Mapping[str, Any], where: str | None) -> Upgrade:
    if not isinstance(changes, Mapping) or not changes:
        raise InputError(f"upgrade {name!r}: expected a table of changes such as {{ processes = \"2x\" }}, "
                         f"got {changes!r}", where)
    parsed = {}
    for key, value in changes.items():
        if key not in SYSTEM_KEYS:
            raise InputError(f"upgrade {name!r}: unknown key {key!r}; the keys are {', '.join(SYSTEM_KEYS)}", where)
        parsed[key] = _number(value, f"upgrade {name!r}, {key}", where, factor=True, size=_is_size(key),
                              whole=key in WHOLE)
    return Upgrade(name, parsed, where)


class _Toml(dict):
    """A TOML document that knows the line of each table and key: an error about one says ``FILE:LINE:``."""

    def __init__(self, document: Mapping[str, Any], text: str):
        super().__init__(document)
        self._lines = text.splitlines()

    def line(self, table: str, key: str | None = None) -> int | None:
        """The line of ``[table]`` (or of ``table = ...``), or of ``key`` in it (or of ``[table.key]``)."""
        inside, top = False, True
        for number, text in enumerate(self._lines, 1):
            header = re.match(r"\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$", text)
            if header:
                name = re.sub(r"\s*\.\s*", ".", header.group(1)).replace('"', "").replace("'", "")
                if name in (table, f"{table}.{key}") and (key is None or name != table):
                    return number
                inside, top = name == table, False
            elif (inside and key is not None and _assigns(text, key)) or (top and _assigns(text, table)):
                return number
        return None

    @contextlib.contextmanager
    def at(self, table: str, key: str | None = None):
        """An InputError about the file raised inside names the line of ``table`` (``key``) where it has none."""
        try:
            yield
        except InputError as error:
            if error.path is not None and error.line is None:
                error.line = self.line(table, key)
            raise


def _assigns(text: str, key: str) -> bool:
    """Whether a TOML line sets ``key`` (bare or quoted; ``key = ...`` or ``key.sub = ...``)."""
    quoted = "|".join(re.escape(form) for form in (key, f'"{key}"', f"'{key}'"))
    return re.match(rf"\s*(?:{quoted})\s*[=.]", text) is not None


def _read_toml(path: str | os.PathLike, name: str) -> _Toml:
    """The TOML file ``path`` that the argument ``name`` (``system``, ``machine``) gave."""
    if not os.fspath(path).strip():  # (pathlib takes '' for '.', the current folder: ".: is a folder")
        from .scaling import argument

        raise InputError(f"{argument(name, os.fspath(path))}: expected the path of a TOML file")
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    from .readers._common import read_text  # UTF-8, a byte-order mark dropped: the readers' rule

    path = pathlib.Path(path)
    if not path.exists():
        raise InputError("no such file", path)
    if path.is_dir():
        raise InputError("is a folder; expected a TOML file", path)
    text = read_text(path, hint="TOML files are UTF-8: save it as UTF-8")
    try:
        return _Toml(tomllib.loads(text), text)
    except tomllib.TOMLDecodeError as error:  # "... (at line 3, column 24)": the line goes where every error's does
        where = re.search(r" \(at line (\d+), (column \d+)\)$", str(error))
        if where is None:
            raise InputError(f"not valid TOML: {error}", path) from None
        raise InputError(f"not valid TOML: {str(error)[:where.start()]} ({where.group(2)})", path,
                         int(where.group(1))) from None


def load_system(path: str | os.PathLike) -> tuple[System, list[Upgrade]]:
    """Read a system file: its ``[system]`` table and the ``[upgrades]`` it names.

    Raises
    ------
    InputError
        Not TOML, no ``[system]``, an unknown key, a value that is not a
        positive number, size or factor (the message names the file).
    """
    document = _read_toml(path, "system")
    where = os.fspath(path)
    unknown = [k for k in document if k not in ("system", "upgrades")]
    if unknown:
        raise InputError(f"unknown table {', '.join(map(repr, unknown))}; a system file has [system] and "
                         f"[upgrades]", where, document.line(unknown[0]))
    table = document.get("system")
    if not isinstance(table, Mapping):
        raise InputError("no [system] table (processes and memory_per_process)", where)
    values = {}
    for key, value in table.items():
        with document.at("system", key):
            if key not in SYSTEM_KEYS:
                raise InputError(f"[system] has no key {key!r}; the keys are {', '.join(SYSTEM_KEYS)}", where)
            values[key] = _number(value, f"[system] {key}", where, factor=False, size=_is_size(key),
                                  whole=key in WHOLE)[1]
    with document.at("system"):
        system = System(values, where)
    upgrades = document.get("upgrades", {})
    if not isinstance(upgrades, Mapping):
        raise InputError("[upgrades] must be a table of NAME = { KEY = VALUE, ... }", where, document.line("upgrades"))
    listed = []
    for name, changes in upgrades.items():
        with document.at("upgrades", name):
            listed.append(replace(_upgrade(name, changes, where), line=document.line("upgrades", name)))
    return system, listed


# ------------------------------------------------------------------------------ roles
def parse_roles(spec: str | Iterable[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``"memory=bytes_used,computation=PAPI_FP_OPS"`` (or a list of such, or a mapping) -> dict.

    A role may be the sum of metrics: ``communication=bytes_sent+bytes_received``.  A role other than those of
    :data:`ROLE_ORDER` is a requirement of its own (any metric may be one); one whose name is close to a known
    role (``mem``) is an :class:`~extrap_plugins.errors.ExtrapWarning` with a did-you-mean.
    """
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        items = [(str(k), str(v)) for k, v in spec.items()]
    else:
        texts = [spec] if isinstance(spec, str) else list(spec)
        items = []
        for text in texts:
            for pair in text.split(","):
                role, sep, metric = pair.partition("=")
                if not sep or not role.strip() or not metric.strip():
                    raise InputError(f"--role {pair.strip()!r}: expected ROLE=METRIC, such as "
                                     f"memory=bytes_used or communication=bytes_sent+bytes_received")
                items.append((role.strip(), metric.strip()))
    roles: dict[str, str] = {}
    for role, metric in items:
        if role in roles:
            raise InputError(f"--role {role} is given twice")
        _check_sum(tuple(part.strip() for part in metric.split("+")), f"--role {role}={metric}", None)
        roles[role] = metric
        _warn_near_role(role, metric)
    return roles


def _check_sum(metrics: Sequence[str], what: str, where: str | None) -> None:
    """A role's or a machine resource's metrics, summed into its amount: each a name, each once (``flop+flop``
    would count it twice)."""
    if not all(metrics):
        raise InputError(f"{what}: metric must be a metric name (or names joined by +), got {'+'.join(metrics)!r}",
                         where)
    twice = list(dict.fromkeys(m for m in metrics if metrics.count(m) > 1))
    if twice:
        raise InputError(f"{what}: metric {', '.join(map(repr, twice))} is named twice in {'+'.join(metrics)!r}, "
                         f"so its amount would count twice; name each metric once", where)


def _warn_near_role(role: str, metric: str) -> None:
    """Warn when a new role's name is close to a known one (a typo would add a role, not set the known one)."""
    if role in ROLE_ORDER:
        return
    lower = role.lower()
    if lower in ROLE_ORDER:  # Memory
        near = [lower]
    else:  # mem, comm, compute, memory_accesses
        near = [known for known in ROLE_ORDER if len(lower) >= 3 and known.startswith(lower)]
        near += [known for known in difflib.get_close_matches(lower, ROLE_ORDER) if known not in near]
    if near:
        guess = " or ".join(repr(known) for known in near)
        warnings.warn(ExtrapWarning(f"--role {role}={metric}: {role!r} is not a known role "
                                    f"({', '.join(ROLE_ORDER)}), so it is added as a role of its own; did you mean "
                                    f"{guess}?"), stacklevel=4)


def default_roles(metrics: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The roles the metric names suggest: ``{"memory": ("bytes_used",), ...}`` (only those found)."""
    by_lower = {m.lower(): m for m in metrics}
    found = {}
    for role, alternatives in ROLE_DEFAULTS.items():
        for alternative in alternatives:
            if all(a.lower() in by_lower for a in alternative):
                found[role] = tuple(by_lower[a.lower()] for a in alternative)
                break
    return found


def resolve_roles(application: str, metrics: Sequence[str], roles: Mapping[str, str],
                  required: Sequence[str] = ("memory",)) -> dict[str, tuple[str, ...]]:
    """The metrics of every role for one application: given roles, then defaults for the rest.

    Raises
    ------
    InputError
        A role names a metric the application does not have, or a required
        role has neither a given metric nor a default.
    """
    resolved = {role: found for role, found in default_roles(metrics).items() if role not in roles}
    for role, text in roles.items():
        names = tuple(part.strip() for part in text.split("+"))
        missing = [n for n in names if n not in metrics]
        if missing or not all(names):
            raise InputError(f"--role {role}={text}: application {application!r} has no metric "
                             f"{', '.join(map(repr, missing or [text]))}; its metrics are {', '.join(metrics)}")
        resolved[role] = names
    for role in required:
        if role not in resolved:
            raise InputError(f"application {application!r}: no metric plays the role {role!r}; name one with "
                             f"--role {role}=METRIC (its metrics are {', '.join(metrics) or 'none'})")
    order = [r for r in ROLE_ORDER if r in resolved] + [r for r in resolved if r not in ROLE_ORDER]
    return {r: resolved[r] for r in order}


def requirement_function(models: ModelSet, metrics: Sequence[str], callpaths: Sequence[str] | None = None,
                         kinds: Mapping[str, str] | None = None, units: Mapping[str, float] | None = None
                         ) -> Callable[[Mapping[str, float]], float]:
    """``f(point) -> float``: the sum of the models of ``metrics`` over the chosen call paths.

    ``callpaths`` None takes the whole program: for a metric of inclusive
    values (the instrument shim's, or CUBE read with ``values=inclusive``)
    the root call paths (no ``->``), for one of exclusive values (``kinds``:
    metric -> ``"inclusive"`` or ``"exclusive"``, inclusive where not given)
    every call path.  ``units`` (metric -> factor) converts a metric's values, such as KiB to bytes
    (:func:`_bytes_per_unit`); the function's ``units`` attribute keeps them.
    """
    units = dict(units or {})
    chosen = []
    for metric in metrics:
        of_metric = [m for m in models if m.metric == metric]
        if callpaths is None and (kinds or {}).get(metric) == "exclusive":
            picked = of_metric
        elif callpaths is None:
            picked = [m for m in of_metric if "->" not in m.callpath]
        else:
            kept = set(matching(callpaths, [m.callpath for m in of_metric]))
            picked = [m for m in of_metric if m.callpath in kept]
        if not picked:
            where = "root call path" if callpaths is None else f"call path matching {', '.join(callpaths)}"
            raise InputError(f"{models.source or 'models'}: metric {metric!r} has no model at a {where}")
        chosen.extend(picked)

    def evaluate(point: Mapping[str, Any]) -> Any:
        """The requirement at ``point``: floats give a float, arrays (broadcast together) an array."""
        columns = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in point.values()))
        named = dict(zip(point, columns))
        shape = columns[0].shape if columns else ()
        total = np.zeros(shape)
        for m in chosen:
            X = np.stack([named[p].reshape(-1) for p in m.parameters], axis=1) if m.parameters else \
                np.zeros((int(np.prod(shape)) or 1, 0))
            total = total + np.asarray(m.predict(X), dtype=np.float64).reshape(shape) * units.get(m.metric, 1.0)
        return float(total) if not shape else total

    evaluate.models = chosen  # type: ignore[attr-defined]
    evaluate.units = units  # type: ignore[attr-defined]
    return evaluate


# --------------------------------------------------------------------- problem size
def fill_memory(memory: Callable[[float], float], target: float, application: str, size: str = "n",
                lowest: float = 1.0, where: str = "the system has") -> float:
    """The smallest problem size per process ``n >= lowest`` with ``memory(n) = target``.

    ``memory`` takes a float or an array of sizes; ``where`` says whose memory ``target`` is (an upgrade's).

    Scans ``n`` on a logarithmic grid up to 1e300 for the first value at or
    above ``target``, then refines by Brent's method to machine precision.

    Raises
    ------
    InputError
        The memory exceeds ``target`` already at ``n = lowest``, or no ``n``
        reaches it (the model does not grow with ``n``).
    """
    def f(log_n: float) -> float:
        return float(memory(10.0 ** log_n)) - target

    grid = np.arange(math.log10(lowest), 300.0 + 1e-9, 0.125)
    with np.errstate(all="ignore"):
        values = np.asarray(memory(10.0 ** grid), dtype=np.float64) - target
    if values[0] > 0:
        raise InputError(f"application {application!r}: the memory model needs {memory(lowest):.4g} bytes per "
                         f"process already at {size} = {lowest:g}, more than the {_size_text(target)} per process "
                         f"{where}")
    if values[0] == 0:
        return lowest
    above = np.flatnonzero(np.isfinite(values) & (values >= 0))
    if not above.size:
        raise InputError(f"application {application!r}: the memory model never reaches the {_size_text(target)} per "
                         f"process {where} (no problem size {size} fills the memory); is the memory metric right? "
                         f"(--role memory=METRIC)")
    from scipy.optimize import brentq

    k = int(above[0])
    if values[k] == 0:
        return float(10.0 ** grid[k])
    log_n = brentq(f, grid[k - 1], grid[k], xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    return float(10.0 ** log_n)


# --------------------------------------------------------------------------- result
@dataclass
class RequirementRow:
    """One application under one upgrade: ratios new/old.

    ``requirements`` are per process, ``requirements_total`` over all
    processes (per process times ``p``).  ``old`` and ``new`` hold the
    absolute figures (``processes``, ``memory_per_process``,
    ``problem_size_per_process``, ``problem_size`` and every role, per process).
    """

    application: str
    upgrade: str
    problem_size_per_process: float
    problem_size: float
    requirements: dict[str, float]
    requirements_total: dict[str, float]
    old: dict[str, float] = field(default_factory=dict)
    new: dict[str, float] = field(default_factory=dict)
    best: bool = False
    worst: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"application": self.application, "upgrade": self.upgrade,
                "problem_size_per_process": self.problem_size_per_process, "problem_size": self.problem_size,
                "requirements": dict(self.requirements), "requirements_total": dict(self.requirements_total),
                "best": self.best, "worst": self.worst,
                "old": {k: json_plain(v) for k, v in self.old.items()},
                "new": {k: json_plain(v) for k, v in self.new.items()}}


@dataclass
class Requirements:
    """The table of Wolf's Extra-P slides: every application under every upgrade.

    Attributes
    ----------
    system : System
    upgrades : list of Upgrade
    roles : dict application -> dict role -> tuple of metric names
    models : dict application -> dict role -> list of formulas (per call path summed)
    rows : list of RequirementRow, application-major, upgrades in the order given
    rank_by : str
        What marks the best and worst upgrade of each application.
    reading_warnings : dict application -> list of str
        What reading its measurements warned of (a value left out, a run skipped: its models'
        :attr:`~extrap_plugins.models.ModelSet.reading_warnings`), every application, an empty list where none.
    reading_notes : dict application -> list of str
        What its reader noted of how it read the measurements (which metadata became parameters, what was left
        out and why; a warning a note says is kept only here: its models'
        :attr:`~extrap_plugins.models.ModelSet.notes`), every application, an empty list where none.
    model_warnings : dict application -> list of str
        What its models warn of (:attr:`~extrap_plugins.models.Model.warnings`, as stderr says them), one
        ``"call path [metric]: warning"`` each, every application, an empty list where none.
    """

    system: System
    upgrades: list[Upgrade]
    roles: dict[str, dict[str, tuple[str, ...]]]
    models: dict[str, dict[str, list[str]]]
    rows: list[RequirementRow]
    rank_by: str = "problem_size"
    parameters: tuple[str, str] = ("p", "n")
    reading_warnings: dict[str, list[str]] = field(default_factory=dict)
    reading_notes: dict[str, list[str]] = field(default_factory=dict)
    model_warnings: dict[str, list[str]] = field(default_factory=dict)

    @property
    def applications(self) -> list[str]:
        return list(dict.fromkeys(r.application for r in self.rows))

    @property
    def role_names(self) -> list[str]:
        names = [r for app in self.roles.values() for r in app]
        return list(dict.fromkeys([r for r in ROLE_ORDER if r in names] + names))

    def row(self, application: str, upgrade: str) -> RequirementRow:
        for r in self.rows:
            if r.application == application and r.upgrade == upgrade:
                return r
        raise KeyError(f"no row for application {application!r} and upgrade {upgrade!r}")

    def as_json(self) -> dict[str, Any]:
        """The machine interface: ``{"format": "extrap-plugins/requirements", "version": 1, "system", "upgrades",
        "parameters", "rank_by", "roles", "models", "model_warnings", "reading_notes", "reading_warnings",
        "rows"}``; ``roles``, ``models``, ``model_warnings``, ``reading_notes`` and ``reading_warnings`` (lists of
        str, empty where no model warned, the reader noted nothing and reading warned of nothing) per
        application."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "system": self.system.describe(),
            "upgrades": {u.name: {k: (f"{v:g}x" if kind == "factor" else json_plain(v))
                                  for k, (kind, v) in u.changes.items()} for u in self.upgrades},
            "parameters": {"processes": self.parameters[0], "size": self.parameters[1]},
            "rank_by": self.rank_by,
            "roles": {app: {role: "+".join(metrics) for role, metrics in roles.items()}
                      for app, roles in self.roles.items()},
            "models": self.models,
            "model_warnings": {app: list(warned) for app, warned in self.model_warnings.items()},
            "reading_notes": {app: list(noted) for app, noted in self.reading_notes.items()},
            "reading_warnings": {app: list(warned) for app, warned in self.reading_warnings.items()},
            "rows": [r.as_json() for r in self.rows],
        }

    # The renderers live in codesign_output (text, csv, json, html).
    def render(self, kind: str = "text") -> str:
        from . import codesign_output

        return codesign_output.render_requirements(self, kind)

    def text(self) -> str:
        return self.render("text")


# ------------------------------------------------------------------------------ API
ApplicationInput = "str | os.PathLike | Experiment | ModelSet"


def requirements(
    applications: Mapping[str, Any] | Sequence[Any],
    system: System | str | os.PathLike,
    upgrades: Upgrade | str | Iterable[Upgrade | str] | None = None,
    *,
    roles: Mapping[str, str] | str | Iterable[str] | None = None,
    processes: str = "p",
    size: str = "n",
    callpaths: str | Sequence[str] | None = None,
    rank_by: str = "problem_size",
    reader: str | None = None,
    modeler: str = "default",
    reader_options: Mapping[str, Any] | None = None,
    **model_options: Any,
) -> Requirements:
    """Wolf's Extra-P slides' table: how each application responds to each upgrade of ``system``.

    Parameters
    ----------
    applications : mapping name -> input, or sequence of inputs
        An input is a file or folder of measurements (any reader), an
        :class:`Experiment`, or a :class:`ModelSet` of per-process
        requirement models.  A sequence names applications after their files.
    system : System or path
        A :class:`System`, or a TOML file with ``[system]`` and ``[upgrades]``.
    upgrades : Upgrade, ``"NAME=KEY:VALUE,..."`` text, or an iterable of them, optional
        Added to the file's upgrades; one str is one upgrade.
    roles : ``{"memory": "bytes_used", "communication": "bytes_sent+bytes_received"}``
        Which metric plays which role; the rest come from the metric names
        (:data:`ROLE_DEFAULTS`).  ``memory`` is required.
    processes, size : str
        The names of the process count and of the problem size per process.
    callpaths : glob or sequence of globs, optional
        Whose models are summed per metric (default: the root call paths); one str is one glob.
    rank_by : str
        ``problem_size`` (default: the largest overall problem size is best,
        ties go to the smaller computation per process) or a role (the
        smallest ratio per process is best).

    Raises
    ------
    InputError
        A role names a missing metric, no ``n`` fills the memory, an upgrade
        changes nothing, a model depends on another parameter, ...
    """
    from .api import names_argument

    callpaths = list(names_argument(callpaths, "callpaths")) or None  # one str is one glob, not its letters
    if isinstance(upgrades, (str, Upgrade)):
        upgrades = [upgrades]  # one str is one upgrade, not its letters
    if isinstance(system, System):
        base, listed = system, []
    elif isinstance(system, (str, os.PathLike)):
        base, listed = load_system(system)
    else:
        from .formatting import described

        raise InputError(f"requirements: expected a System or the path of a system file (TOML), got "
                         f"{described(system)}")
    all_upgrades = list(listed)
    for upgrade in upgrades or ():
        all_upgrades.append(parse_upgrade(upgrade) if isinstance(upgrade, str) else upgrade)
    if not all_upgrades:
        raise InputError("no upgrade to compare: add [upgrades] to the system file or give --upgrade "
                         "NAME=KEY:VALUE,...", base.source)
    names = [u.name for u in all_upgrades]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"upgrade {', '.join(map(repr, twice))} is defined twice")
    upgraded = [(u, u.apply(base)) for u in all_upgrades]
    given_roles = parse_roles(roles)
    if rank_by != "problem_size" and rank_by not in ROLE_DEFAULTS and rank_by not in given_roles:
        raise InputError(f"rank_by {rank_by!r}: expected problem_size or a role "
                         f"({', '.join(dict.fromkeys([*ROLE_ORDER, *given_roles]))})")
    named = _named_inputs(applications)
    rows: list[RequirementRow] = []
    all_roles: dict[str, dict[str, tuple[str, ...]]] = {}
    formulas: dict[str, dict[str, list[str]]] = {}
    cautions: dict[str, list[str]] = {}
    warned: dict[str, list[str]] = {}
    noted: dict[str, list[str]] = {}
    for name, source in named.items():
        models, app_roles, kinds = _models_of(name, source, given_roles, callpaths, reader, modeler,
                                              reader_options or {}, model_options)
        if rank_by not in ("problem_size",) and rank_by not in app_roles:
            raise InputError(f"rank_by {rank_by!r}: application {name!r} has no such role")
        in_bytes = _bytes_per_unit(name, models, app_roles["memory"])  # the system's memory is in bytes
        functions = {role: requirement_function(models, metrics, callpaths, kinds,
                                                in_bytes if role == "memory" else None)
                     for role, metrics in app_roles.items()}
        _check_parameters(name, functions, processes, size)
        all_roles[name] = app_roles
        formulas[name] = {role: [f"{m.callpath} [{m.metric}]: {m.formula}" for m in f.models]
                          for role, f in functions.items()}
        cautions[name] = list(dict.fromkeys(f"{m.callpath} [{m.metric}]: {text}" for f in functions.values()
                                            for m in f.models for text in m.warnings))
        warned[name], noted[name] = list(models.reading_warnings), list(models.notes)
        rows.extend(_rows_of(name, functions, base, upgraded, processes, size))
    _mark(rows, rank_by)
    return Requirements(base, all_upgrades, all_roles, formulas, rows, rank_by, (processes, size), warned, noted,
                        cautions)


def _named_inputs(applications) -> dict[str, Any]:
    if isinstance(applications, Mapping):
        if not applications:
            raise InputError("no application given")
        return dict(applications)
    if isinstance(applications, (str, os.PathLike, Experiment, ModelSet)):
        applications = [applications]
    named: dict[str, Any] = {}
    for item in applications:
        if isinstance(item, (str, os.PathLike)):
            text = os.fspath(item)
            name, sep, path = text.partition("=")
            if sep and name and "/" not in name and not pathlib.Path(text).exists():
                named_as, item = name, path
            else:
                path = pathlib.Path(text)
                named_as = path.name.split(".")[0] if path.name else text
        else:
            named_as = getattr(item, "source", "") or f"application {len(named) + 1}"
            named_as = pathlib.Path(named_as).name.split(".")[0] or named_as
        if named_as in named:
            raise InputError(f"two applications are named {named_as!r}; name them with NAME=PATH")
        named[named_as] = item
    if not named:
        raise InputError("no application given")
    return named


def _models_of(name: str, source, given_roles: Mapping[str, str], callpaths: Sequence[str] | None, reader,
               modeler, reader_options, model_options
               ) -> tuple[ModelSet, dict[str, tuple[str, ...]], dict[str, str]]:
    """The application's models, roles, and whether each role's metric has inclusive or exclusive values;
    measurements are modelled only where a role needs them (of exclusive values, every call path: their sum is the
    whole program)."""
    from . import api
    from .extrapolation import value_kinds

    if isinstance(source, ModelSet):
        metrics = list(dict.fromkeys(m.metric for m in source))
        return source, resolve_roles(name, metrics, given_roles), value_kinds(source)
    if not isinstance(source, Experiment):
        source = api.read(source, reader, **reader_options)
    metrics = [m.name for m in source.metrics]
    if not metrics or not len(source):
        raise InputError(f"application {name!r} has no measurements", source.source or None)
    roles = resolve_roles(name, metrics, given_roles)
    needed = list(dict.fromkeys(m for names in roles.values() for m in names))
    kinds = _value_kinds(source, needed)
    import glob

    roots = [glob.escape(c.name) for c in source.roots()]
    inclusive = [m for m in needed if kinds[m] != "exclusive"]
    exclusive = [m for m in needed if kinds[m] == "exclusive"]
    parts = [api.model(source, modeler, metrics=chosen, callpaths=list(callpaths) if callpaths else globs,
                       **model_options)
             for chosen, globs in ((inclusive, roots), (exclusive, ())) if chosen]
    models = parts[0] if len(parts) == 1 else replace(parts[0], models=[*parts[0].models, *parts[1].models])
    return models, roles, kinds


def _value_kinds(experiment: Experiment, metrics: Sequence[str]) -> dict[str, str]:
    """Per metric, ``"exclusive"`` or ``"inclusive"``, by the rule of :func:`~extrap_plugins.extrapolate`'s
    ``values="auto"``: the metric's own hint (the reader knew it), else exclusive where the parents fall short of
    their children by more than :data:`~extrap_plugins.extrapolation.AUTO_SHORTFALL`."""
    from .extrapolation import shortfall, value_kind

    hints = {m.name: m.values for m in experiment.metrics}
    guessed = [m for m in metrics if not hints.get(m)]
    found = shortfall(experiment, guessed) if guessed else {}
    return {m: value_kind(hints.get(m), found.get(m, 0.0)) for m in metrics}


def _bytes_per_unit(application: str, models: ModelSet, metrics: Sequence[str]) -> dict[str, float]:
    """Per memory metric, the bytes of one unit of its values (``KiB``: 1024), from the unit it was recorded with;
    1 where none is known.

    Raises
    ------
    InputError
        A unit that is no size (``sec``): such a metric cannot fill the memory.
    """
    recorded = {m.name: m.unit for m in models.experiment.metrics} if models.experiment is not None else {}
    factors = {}
    for metric in metrics:
        unit = recorded.get(metric) or ""
        factor = _SIZE_UNITS.get(re.sub(r"bytes?$", "b", unit.strip().lower()))  # bytes, kB, KiB, Mbytes, ...
        if factor is None:
            raise InputError(f"application {application!r}: the memory metric {metric!r} is in {unit!r}, not in "
                             f"bytes (or KiB, MB, ...), so it cannot fill the memory per process; name a metric of "
                             f"bytes with --role memory=METRIC")
        factors[metric] = float(factor)
    return factors


def _check_parameters(name: str, functions: Mapping[str, Callable], processes: str, size: str) -> None:
    for role, f in functions.items():
        for m in f.models:  # type: ignore[attr-defined]
            other = [p for p in m.parameters if p not in (processes, size)]
            if other:
                raise InputError(f"application {name!r}: the {role} model ({m.callpath} [{m.metric}]) depends on "
                                 f"{', '.join(other)}, which is neither the process count ({processes}) nor the "
                                 f"problem size per process ({size}); name them with --processes and --size")
    memory = functions["memory"].models  # type: ignore[attr-defined]
    if not any(size in m.parameters and m.terms and any(size in t.factors for t in m.terms) for m in memory) and \
            not any(m.predictor is not None for m in memory):
        raise InputError(f"application {name!r}: the memory model does not depend on the problem size per "
                         f"process {size!r} (no {size} fills the memory); is the memory metric right? "
                         f"(--role memory=METRIC, --size NAME)")


def _rows_of(name: str, functions: Mapping[str, Callable], base: System,
             upgraded: Sequence[tuple[Upgrade, System]], processes: str, size: str) -> list[RequirementRow]:
    below: dict[tuple[str, str, str], list[tuple[str, float, dict[str, float]]]] = {}  # where a model is below 0

    def state(system: System, label: str) -> tuple[dict[str, float], set[str]]:
        p, memory = system.processes, system.memory_per_process
        where = "the system has" if label == "the system" else f"of {label} ({format_value(p)} processes)"
        n = fill_memory(lambda x: functions["memory"]({processes: p, size: x}), memory, name, size, where=where)
        figures = {"processes": p, "memory_per_process": memory, "problem_size_per_process": n,
                   "problem_size": p * n}
        cut = set()
        for role, f in functions.items():
            point = {processes: p, size: n}
            figures[role] = 0.0
            for m in f.models:  # type: ignore[attr-defined]
                value = _predict_at(m, point) * f.units.get(m.metric, 1.0)  # type: ignore[attr-defined]
                if value < 0:  # an amount never is: cut at 0, and the role's ratios are not given
                    below.setdefault((role, m.callpath, m.metric), []).append((label, value, point))
                    cut.add(role)
                figures[role] += max(value, 0.0) if not math.isnan(value) else value
        return figures, cut

    old, old_cut = state(base, "the system")
    rows = []
    for upgrade, system in upgraded:
        new, new_cut = state(system, f"upgrade {upgrade.name!r}")
        grow = new["processes"] / old["processes"]
        per_process = {role: math.nan if role in old_cut | new_cut else _ratio(new[role], old[role])
                       for role in functions}
        rows.append(RequirementRow(
            application=name, upgrade=upgrade.name,
            problem_size_per_process=_ratio(new["problem_size_per_process"], old["problem_size_per_process"]),
            problem_size=_ratio(new["problem_size"], old["problem_size"]),
            requirements=per_process,
            requirements_total={role: ratio * grow for role, ratio in per_process.items()},
            old=old, new=new))
    _warn_below_zero(below)
    return rows


def _predict_at(model, point: Mapping[str, float]) -> float:
    """The model's value at one point (a mapping of its parameters' values)."""
    X = np.array([[point[q] for q in model.parameters]], dtype=np.float64).reshape(1, len(model.parameters))
    return float(np.asarray(model.predict(X), dtype=np.float64).reshape(-1)[0])


def _warn_below_zero(below: Mapping[tuple[str, str, str], list[tuple[str, float, dict[str, float]]]]) -> None:
    """One warning per model (role, call path, metric) that lies below 0 where a system or an upgrade puts the
    application, naming the first such place and how many others there are."""
    from .formatting import format_number

    for (role, callpath, metric), places in below.items():
        label, value, point = places[0]
        where = ", ".join(f"{name}={format_value(x) if float(x).is_integer() else format_number(x, False)}"
                          for name, x in point.items())  # n is solved: 1.342e8, not 134217721.75000022
        more = f", and {len(places) - 1} more" if len(places) > 1 else ""
        warnings.warn(ExtrapWarning(
            f"the model is {format_number(value, False)} at {where} ({label}{more}), below 0, which "
            f"a requirement never is: it is taken as 0 there, and the ratios of {_role_text(role)} are not given "
            f"(–) for the upgrades it touches (do not trust the model there)", callpath, metric),
            stacklevel=4)


def _role_text(role: str) -> str:
    return role.replace("_", " ")


def _ratio(new: float, old: float) -> float:
    if old == 0:
        return 1.0 if new == 0 else math.inf
    return new / old


def _mark(rows: list[RequirementRow], rank_by: str) -> None:
    """Mark the best and worst upgrade per application (none when there is only one upgrade or all tie)."""
    for application in dict.fromkeys(r.application for r in rows):
        if rank_by == "problem_size":
            def key(r):  # larger overall problem first; then less computation per process (unknown: the most)
                computation = r.requirements.get("computation", 1.0)
                return (-round(r.problem_size, 9), round(computation, 9) if math.isfinite(computation) else math.inf)
        else:
            def key(r):
                return (round(r.requirements[rank_by], 9), -round(r.problem_size, 9))
        # an upgrade whose ranking ratio is not known (a model below 0: "–") is neither best nor worst
        mine = [r for r in rows if r.application == application and not math.isnan(key(r)[0])]
        if len(mine) < 2:
            continue
        ordered = sorted(mine, key=key)
        if key(ordered[0]) == key(ordered[-1]):
            continue
        ordered[0].best = True
        ordered[-1].worst = True
