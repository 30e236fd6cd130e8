"""The ``caliper`` reader: Caliper ``.cali`` profiles become an Experiment.

Input is one ``.cali`` file, a list of them, or a folder searched
recursively for them; each file is one run.  The files are read with LLNL's
``caliper-reader`` package (the ``caliper`` extra: ``pip install
'extrap-plugins[caliper]'``), imported only when a file is read: its metadata
tree holds the attributes and regions and expands records as it does, but the
records are split here, as it splits them, and read a layout at a time (the
records with the same nodes and attributes, :class:`Layout`: one per region
and metric set, however many ranks), their values a column at a time.

* **Call paths** come from the region nesting of each record (Caliper's
  ``path`` attribute, which merges ``region``, ``function``, ``loop`` and
  ``mpi.function``), joined with ``->``: ``main->lulesh.cycle->MPI_Allreduce``.
  The record outside any region (Caliper's root totals) is left out, as
  Hatchet and Thicket do.  A region whose name contains ``->`` is refused
  (:func:`callpath_of`).
* **Metrics** are every numeric value attribute but those that say where a
  record was measured (``mpi.rank``, thread ids: :data:`_NOT_METRICS`), named by their alias when
  Caliper gives one (``Avg time/rank`` for ``avg#inclusive#sum#time.duration``)
  with their unit (``sec``) and, where the attribute's name says it, whether
  the values include the children's (:func:`values_of_attribute`: inclusive
  for ``#inclusive#``).  Values are read exactly as caliper-reader parses them
  (``float`` of the recorded text).
* **Parameters** come from each run's metadata (Caliper globals and Adiak
  values): the keys named with ``parameters=jobsize[,problem_size]``, or by
  default the integer-valued numeric keys whose value varies across the runs,
  dates excluded and keys that vary together kept once (a rank count before
  others, then the one with the largest values: ``mpi.world.size`` rather than
  ``numhosts``, which follows it; :func:`choose_parameters`).  The experiment
  notes say which keys were taken and which ignored; a key that would be a
  parameter but is missing in some runs is a warning naming those runs.  Runs
  with equal parameters are repetitions; records of one call path repeated
  within a run (per rank or thread) are repetitions too, but the snapshots of
  Caliper's timeseries service (``timeseries.snapshot``) add up to the run's
  total (:func:`snapshot_total`), and records of the spot controller's
  ``timeseries`` channel are left out, as Hatchet does.

Options (``--reader-option KEY=VALUE``):

``parameters``  metadata keys to use as parameters (comma-separated)
``metrics``, ``callpaths``  names and globs (the host passes ``--metric`` and
                ``--callpath`` here)

A file that is not Caliper's format, is truncated, holds a damaged record, a
metric value that is not a finite number or a metadata value that is not of
the number type Caliper gives it (``jobsize=sixtyfour`` typed ``uint``), or
lacks a named key is an error naming it and, where there is one, the line;
when several runs are read, that run is skipped (one warning per cause) and
the others are read, or, when none can be, one error names the count and the
first.  A folder holding one file under two names (a link to a sibling) is
refused: that run would count twice.  A UTF-8 byte-order mark is dropped.
A ``metrics`` name or glob no run has, or ``callpaths`` that match nothing,
is an error naming the metrics there are.

:func:`join` looks at the runs' metadata, metrics and points, never at their
values: streaming calls it with stand-ins of the runs that hold no values
(:func:`extrap_plugins.streaming.follow_join`) and gets the same parameters,
metrics and warnings.
"""

from __future__ import annotations

import ast
import datetime
import fnmatch
import math
import os
import pathlib
import re
import warnings
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from extrap_plugins.errors import ExtrapWarning, InputError, none_read, skip_warnings
from extrap_plugins.experiment import CALLPATH_SEPARATOR, RESOURCE_NAMES, Experiment, Metric, merged_metrics
from extrap_plugins.formatting import describe_inputs, format_count
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.joining import with_rows
from extrap_plugins.registration import ReaderInfo

from ._common import EMPTY_FILE, check_distinct_files, first_content_line, head, read_text

NAME = "caliper"
OPTIONS = {
    "parameters": "metadata keys to use as parameters (comma-separated, e.g. jobsize,problem_size); "
                  "default: the integer-valued numeric keys that vary across the runs",
    "metrics": "only these metrics (comma-separated names or globs)",
    "callpaths": "only call paths matching these globs (comma-separated)",
}
_NUMERIC_TYPES = {"int", "uint", "double", "float", "long", "u64", "i64"}
_INTEGER_TYPES = {"int", "uint", "long", "u64", "i64"}
_UNSIGNED_TYPES = {"uint", "u64"}
#: Metadata that describes when a run happened, never what it computed.
_TIME_WORDS = ("date", "day", "time", "timestamp")
_RUN_NOTE = "caliper-run: "  # carries a run's metadata from read_part to join
#: Numeric value attributes that say where a record was measured, never how much: the rank and thread of a per-rank
#: or per-thread profile (Caliper's hatchet-region-profile groups by ``mpi.rank``), the aggregation slot, the first
#: loop iteration, the snapshot of Caliper's timeseries service and its start time.  As Hatchet, they are not
#: metrics (``mpi.rank`` would be modelled as growing with the ranks).
_NOT_METRICS = ("mpi.rank", "omp.thread.id", "pthread.id", "aggregate.slot", "loop.start_iteration",
                "timeseries.snapshot", "timeseries.starttime")
#: The attribute numbering the snapshots of Caliper's ``timeseries`` service.  Each snapshot's records are the profile
#: of one interval of the run (the service flushes and clears its profile at every snapshot), so the snapshots of a
#: call path add up to the run's total, as Hatchet's ``from_caliperreader`` sums them.
_SNAPSHOT = "timeseries.snapshot"
#: The spot controller writes its region profile as ``spot.channel=regionprofile``; its ``timeseries`` option adds
#: records of the channel ``timeseries`` (one per block of a loop's iterations), which Hatchet and Thicket leave out.
_SPOT_CHANNEL, _REGION_PROFILE = "spot.channel", "regionprofile"
#: What tells the records of one call path in a run apart besides the snapshot: they stay repetitions.
_WHERE = ("mpi.rank", "omp.thread.id", "pthread.id")


@hookimpl
def extrap_readers() -> list[ReaderInfo]:
    return [
        ReaderInfo(
            name=NAME,
            read=read,
            description="Caliper .cali profiles (a file, several, or a folder of runs); parameters from run metadata "
                        "(needs the caliper extra)",
            patterns=("*.cali",),
            sniff=sniff,
            directories=True,
            options=OPTIONS,
            parts=parts,
            read_part=read_part,
            join=join,
            filters=True,
        )
    ]


# ------------------------------------------------------------------ sniff
def sniff(path: pathlib.Path) -> bool:
    """A file whose first line is a Caliper record, or a folder holding ``.cali`` files."""
    path = pathlib.Path(path)
    if path.is_dir():
        return next(iter(path.rglob("*.cali")), None) is not None
    return first_content_line(head(path, 64)).startswith(b"__rec=")


# ---------------------------------------------------------------- options
@dataclass(frozen=True)
class Settings:
    parameters: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    callpaths: tuple[str, ...] = ()


def parse_options(options: dict) -> Settings:
    """Check the reader options; an unknown key is an InputError listing the known ones."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise InputError(f"the {NAME} reader has no option {', '.join(map(repr, unknown))}; "
                         f"its options are: {', '.join(OPTIONS)}")
    parameters = _names(options.get("parameters", ()))
    if "parameters" in options and not parameters:
        raise InputError("option parameters is empty; name metadata keys, e.g. parameters=jobsize")
    twice = [k for i, k in enumerate(parameters) if k in parameters[:i]]
    if twice:
        raise InputError(f"option parameters names {', '.join(dict.fromkeys(twice))} twice; "
                         f"name each metadata key once")
    return Settings(parameters=parameters, metrics=_names(options.get("metrics", ())),
                    callpaths=_names(options.get("callpaths", ())))


def _names(value) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return tuple(str(v) for v in value)


# ------------------------------------------------------------------- runs
def parts(path, options: dict) -> list[str]:
    """Every ``.cali`` file of the input, in order (a folder is searched recursively, sorted)."""
    parse_options(options)
    _require_caliper_reader(path)
    paths = [pathlib.Path(path)] if isinstance(path, (str, pathlib.PurePath)) else [pathlib.Path(p) for p in path]
    files: list[str] = []
    for one in paths:
        if one.is_dir():
            found = sorted(one.rglob("*.cali"))
            if not found:
                raise InputError("no .cali files in this folder", one)
            files.extend(str(f) for f in found)
        elif one.is_file():
            files.append(str(one))
        else:
            raise InputError("no such file or folder", one)
    check_distinct_files(files)
    if len(files) == 1:
        # One run: its error is the error of the input, not a skipped run among good ones.
        read_part(files[0], options)
    return files


def read(path: pathlib.Path, options: dict) -> Experiment:
    """Read one input in this process (the host normally reads runs through ``parts``)."""
    files = parts(path, options)
    experiments, errors = [], []
    for file in files:
        try:
            experiments.append(read_part(file, options))
        except InputError as error:
            errors.append(error)
    if not experiments:  # one error, as the host's: the count and the first cause, no warning repeating it
        raise none_read(len(files), errors, describe_inputs(path))
    for message in skip_warnings(errors, len(files)):
        warnings.warn(message, stacklevel=2)
    return join(experiments, path, options)


@dataclass
class Layout:
    """The ctx records of a file that share one layout: the same ``ref`` nodes and ``attr`` ids, so the same
    expansion (:meth:`full`) but their own values.

    ``base`` is what the ``ref`` nodes expand to (caliper-reader's record before the values), ``names`` the
    attribute of each value (None where hidden), ``index`` the number of each record in the file, ``data`` each
    record's values as written (``v1=v2=...``, no escapes) or, for a record with escapes, ``values`` its values.
    """

    base: dict
    names: list
    attributes: tuple[str, ...]  # the attr ids as written
    index: list[int] = field(default_factory=list)
    data: list[str] = field(default_factory=list)
    values: list[list[str]] | None = None

    @property
    def columns(self) -> dict[str, int]:
        """Attribute name -> its column (the last one, as a record's dict keeps the last)."""
        return {name: j for j, name in enumerate(self.names) if name is not None}

    def flat(self) -> list[str]:
        """Every record's values end to end (record after record: the ``j``-th value of every record is
        ``flat()[j::len(names)]``)."""
        if self.values is not None:
            return [value for row in self.values for value in row]
        return "=".join(self.data).split("=")

    def rows(self) -> list[list[str]]:
        """Every record's values, one list per record."""
        if self.values is not None:
            return self.values
        flat, width = self.flat(), len(self.names)
        return [flat[i:i + width] for i in range(0, len(flat), width)]

    def full(self, row: list[str]) -> dict:
        """One record as caliper-reader's ``_expand_record`` gives it."""
        record = dict(self.base)
        for name, value in zip(self.names, row):
            if name is not None:
                record[name] = value
        return record


@dataclass
class Run:
    """What one ``.cali`` file holds, as caliper-reader gives it: its records grouped by layout."""

    path: str
    globals: dict
    layouts: list[Layout]
    metrics: dict[str, Metric]  # attribute name -> Metric named by its alias
    types: dict[str, str]  # global name -> Caliper type
    adiak_types: dict[str, str]
    lines: list[int] = field(default_factory=list)  # the line of each record


def _require_caliper_reader(path):
    """The caliperreader module, or an InputError saying how to install it."""
    try:
        import caliperreader
    except ImportError:
        where = path if isinstance(path, (str, pathlib.PurePath)) else None
        raise InputError("reading .cali files needs caliper-reader: pip install 'extrap-plugins[caliper]'",
                         where) from None
    return caliperreader


def load(path: str) -> Run:
    """Parse one file, every line checked first (:class:`RecordCheck`), into caliper-reader's metadata tree and
    records.

    Node records go into caliper-reader's ``MetadataDB`` as its stream reader puts them; a globals record and each
    layout of ctx records (:class:`Layout`: the text before ``,data=``, nearly every line of a large file) are
    checked and expanded once, as caliper-reader expands a record; of the other records of a layout only the count
    of values is checked.  Records with escapes (``\\``) or another order of fields are read one by one, split
    character by character as caliper-reader splits them.

    Raises
    ------
    InputError
        caliper-reader is missing, the file is not Caliper's format (naming
        the first line that is not a record), a record is malformed or refers
        to a node or attribute that is not defined (naming its line), the
        file is truncated, or has no records.
    """
    _require_caliper_reader(path)
    from caliperreader.metadatadb import MetadataDB, Node

    lines = _lines(path)
    check = RecordCheck(path)
    db = MetadataDB()
    run_globals: dict = {}
    layouts: list[Layout] = []
    by_head: dict[str, tuple[Layout, int]] = {}  # the text before ",data=" -> its layout, its count of values
    by_key: dict[tuple, Layout] = {}  # (ref ids, attr ids) -> layout
    names: dict[tuple, list] = {}  # attr ids -> their names (None: hidden)
    record_lines: list[int] = []
    try:
        for check.line, line in enumerate(lines[:-1], 1):
            text = line.strip()
            if not text:
                continue
            head, found, data = text.rpartition(",data=")
            # the usual record: ctx, its values last, no escapes, the last value not empty (caliper-reader drops
            # the values of a record that ends in "=")
            plain = found and text.startswith("__rec=ctx,") and "\\" not in text and "," not in data \
                and not data.endswith("=") and data != ""
            known = by_head.get(head) if plain else None
            if known is not None and data.count("=") + 1 == known[1]:
                known[0].index.append(len(record_lines))
                known[0].data.append(data)
                record_lines.append(check.line)
                continue
            fields = check.record(text)
            if plain and fields["__rec"] == ["ctx"]:
                key = (tuple(fields.get("ref", ())), tuple(fields["attr"]))
                layout = by_key.get(key)
                if layout is None:
                    layout = by_key[key] = _layout(db, *key, names)
                    layouts.append(layout)
                by_head[head] = (layout, len(key[1]))
                layout.index.append(len(record_lines))
                layout.data.append(data)
                record_lines.append(check.line)
                continue
            if text.endswith("=") and "\\" not in text:  # split as caliper-reader splits it (with escapes, it was)
                fields = _split_record(text, escapes=True)
            kind = fields["__rec"][0]
            if kind == "node":  # as caliper-reader's CaliperStreamReader._process_node_record
                db.import_node(int(fields["id"][0]), int(fields["attr"][0]), fields.get("data", [""])[0],
                               int(fields["parent"][0]) if "parent" in fields else Node.CALI_INV_ID)
                continue
            has_values = "attr" in fields and "data" in fields
            layout = _layout(db, tuple(fields.get("ref", ())), tuple(fields["attr"]) if has_values else (), names)
            layout.values = [fields["data"] if has_values else []]
            if kind == "globals":  # the last one counts, as in caliper-reader
                run_globals = layout.full(layout.values[0])
                continue
            # a ctx record of its own
            layout.index.append(len(record_lines))
            layouts.append(layout)
            record_lines.append(check.line)
    except InputError:
        raise
    except Exception as error:  # noqa: BLE001 - whatever caliper-reader fails on, the line is the user's
        raise InputError(f"caliper-reader cannot parse this record ({type(error).__name__}: {error})",
                         path, check.line) from None
    if not run_globals:
        raise InputError("no run metadata (globals) in this file; it is truncated or not a complete profile", path)
    return Run(path, run_globals, layouts, *_attributes(db, run_globals), record_lines)


def _layout(db, refs: tuple[str, ...], attributes: tuple[str, ...], names: dict[tuple, list]) -> Layout:
    """The layout of ctx records with these ``ref`` nodes and ``attr`` ids, expanded as caliper-reader's
    ``CaliperStreamReader._expand_record`` expands a record; ``names`` keeps the names of each tuple of ``attr``
    ids (an attribute, once defined, stays as it is)."""
    base: dict = {}
    for node in refs:
        base.update(db.nodes[int(node)].expand())
    if attributes not in names:
        found = [db.attributes_by_id[int(attribute)] for attribute in attributes]
        names[attributes] = [None if attribute.is_hidden() else attribute.name() for attribute in found]
    return Layout(base, names[attributes], attributes)


def _lines(path: str) -> list[str]:
    """The file's lines (the last one empty), each a Caliper record or blank; a byte-order mark is dropped, as by
    every reader.

    Raises
    ------
    InputError
        Not UTF-8, a line that is not a record, no records, or a last line without its end.
    """
    text = read_text(path)
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if line.strip() and not line.startswith("__rec="):
            if number == len(lines) and "__rec=".startswith(line):  # cut within the first characters of a record
                break
            raise InputError("not a Caliper .cali record (lines start with __rec=); is this the right reader?",
                             path, number)
    if not text.strip():
        raise InputError(EMPTY_FILE, path)
    if not text.endswith("\n"):
        raise InputError("truncated: the last line is incomplete", path, len(lines))
    return lines


def _attributes(db, run_globals: dict) -> tuple[dict[str, Metric], dict[str, str], dict[str, str]]:
    """The metrics (numeric value attributes), and the Caliper and Adiak types of the globals, of a file read
    (caliper-reader's ``MetadataDB`` and the run's globals)."""
    metrics: dict[str, Metric] = {}
    types: dict[str, str] = {}
    adiak_types: dict[str, str] = {}
    for name, attribute in db.attributes.items():
        if attribute.is_hidden():
            continue
        kind = str(attribute.attribute_type())
        if attribute.is_global():
            types[name] = kind
            adiak_types[name] = str(attribute.get("adiak.type") or "")
        elif attribute.is_value() and kind in _NUMERIC_TYPES and not _is_identifier(name) \
                and str(attribute.get("class.iteration")) != "true":  # a loop's iteration number: iteration#mainloop
            alias = attribute.get("attribute.alias")
            unit = attribute.get("attribute.unit")
            metrics[name] = Metric(str(alias) if alias else name, str(unit) if unit else "",
                                   "time" if "time" in name else "", values_of_attribute(name))
    for name in run_globals:
        types.setdefault(name, "string")
    return metrics, types, adiak_types


def _is_identifier(name: str) -> bool:
    """Whether the attribute ``name`` is one of :data:`_NOT_METRICS`, or an aggregate of one
    (``min#min#aggregate.slot``)."""
    return name.rsplit("#", 1)[-1] in _NOT_METRICS


SPOT_ALIASES = {
    "min#inclusive#sum#time.duration": "Min time/rank",
    "max#inclusive#sum#time.duration": "Max time/rank",
    "avg#inclusive#sum#time.duration": "Avg time/rank",
    "sum#inclusive#sum#time.duration": "Total time",
}
"""The names Caliper's spot controller gives the attributes it lists in a profile's ``spot.metrics`` metadata (its
cross-process query: ``avg(inclusive#sum#time.duration) as "Avg time/rank"``).  A ``.cali`` file holds the alias
of every attribute, but Hatchet and Thicket keep only the alias and the metadata: this says which attribute a
frame's ``Avg time/rank`` is, where ``spot.metrics`` shows it came from the spot controller (other Caliper
configurations give the same alias to an exclusive time)."""

_INCLUSIVE = re.compile(r"(?:^|[#.])inclusive[#.]")
_DURATION = re.compile(r"(?:^|#)time\.duration(?:\.ns)?$")


def values_of_attribute(name: str) -> str:
    """Whether the values of the Caliper attribute ``name`` include the children's, as its name says.

    ``"inclusive"`` for an aggregate Caliper made inclusive: an ``inclusive`` step in the name
    (``avg#inclusive#sum#time.duration``, the spot controller's ``Avg time/rank``; ``inclusive#sum#time.duration``;
    the timer's ``time.inclusive.duration``).  ``"exclusive"`` for other aggregates of ``time.duration``: Caliper
    books a snapshot's duration to the innermost region open, so ``sum#time.duration`` holds a region's own time,
    as Hatchet takes it (``time``, not ``time (inc)``).  ``""`` for
    anything else (a counter, an annotation copied into records as RAJAPerf's ``any#any#max#Bytes/Rep``): the
    name does not say, and the shares follow the measurements.

    >>> values_of_attribute("avg#inclusive#sum#time.duration"), values_of_attribute("sum#time.duration")
    ('inclusive', 'exclusive')
    """
    if _INCLUSIVE.search(name):
        return "inclusive"
    if _DURATION.search(name):
        return "exclusive"
    return ""


class RecordCheck:
    """Checks each line of a ``.cali`` file before caliper-reader sees it, so that damage is an error naming
    the line rather than a ``TypeError`` later.

    caliper-reader trusts its input: a record naming a node that is not
    defined, a node whose parent is missing, an attribute without a type or
    a count of attribute ids and values that differ passes it silently or
    fails far from its cause.  The check holds what the lines so far define
    (node ids, which of them are attributes, which have a Caliper type) and
    refuses a line that uses anything else.  It splits a record the way
    caliper-reader does (``key=v1=v2,...``, ``\\`` escapes the next
    character); the values themselves are still read by caliper-reader.
    """

    #: Caliper's bootstrap nodes (caliper-reader's ``MetadataDB``): types 0-7 and 11, attributes 8-10.
    _TYPES = frozenset({0, 1, 2, 3, 4, 5, 6, 7, 11})
    _ATTRIBUTES = frozenset({8, 9, 10})
    _NAME, _TYPE, _PROPERTIES = 8, 9, 10
    _NO_PARENT = 0xFFFFFFFFFFFFFFFF

    def __init__(self, path):
        self.path = path
        self.line = 0
        self.defined: dict[int, int] = {}  # node id -> line
        self.parent: dict[int, int | None] = {8: 3, 9: 7, 10: 1}
        self.attribute_of: dict[int, int] = {}  # node id -> the attribute its data belong to
        self.attributes = set(self._ATTRIBUTES)

    def fail(self, message: str) -> InputError:
        return InputError(message, self.path, self.line)

    def record(self, line: str) -> dict[str, list[str]]:
        """Check one line; its fields (:func:`_split_record`)."""
        fields = _split_record(line.strip())
        if fields is None:
            raise self.fail("the record ends in a lone escape character (\\)")
        kind = fields.get("__rec", [""])[0] if fields.get("__rec") else ""
        if kind == "node":
            self._node(fields)
        elif kind in ("ctx", "globals"):
            self._snapshot(kind, fields)
        else:
            raise self.fail(f"unknown record kind {kind[:40]!r} (Caliper writes node, ctx and globals records)")
        return fields

    def _ids(self, fields: dict, key: str, kind: str) -> list[int]:
        texts = fields.get(key, [])
        try:
            return list(map(int, texts))
        except ValueError:
            for text in texts:
                try:
                    int(text)
                except ValueError:
                    raise self.fail(f"{kind} record: {key} {text[:40]!r} is not a node number") from None
            raise  # pragma: no cover - one of the texts failed above

    def _one(self, fields: dict, key: str) -> int | None:
        texts = fields.get(key)
        if texts is None:
            return None
        if len(texts) == 1 and texts[0].isdigit() and texts[0].isascii():  # the usual: one decimal number
            return int(texts[0])
        ids = self._ids(fields, key, "node")
        if len(ids) != 1:
            raise self.fail(f"node record: {key} must be one node number, got {len(ids)}")
        return ids[0]

    def _node(self, fields: dict) -> None:
        node, attribute, parent = self._one(fields, "id"), self._one(fields, "attr"), self._one(fields, "parent")
        if node is None or attribute is None:
            raise self.fail(f"node record without {'id' if node is None else 'attr'}")
        if node in self.defined or node in self._TYPES or node in self._ATTRIBUTES:
            first = f" (first on line {self.defined[node]})" if node in self.defined else " (a Caliper built-in)"
            raise self.fail(f"node {node} is defined twice{first}")
        if attribute not in self.attributes:
            raise self.fail(f"node {node} refers to attribute {attribute}, which is "
                            f"{'not an attribute' if attribute in self.defined else 'not defined'}")
        if attribute == self._TYPE:
            raise self.fail(f"node {node} defines a Caliper type (attribute {self._TYPE}); the types are built in")
        if "data" in fields and not fields["data"]:
            raise self.fail(f"node {node}: data without a value")
        if parent == self._NO_PARENT:
            parent = None
        if parent is not None and parent not in self.defined and parent not in self._TYPES \
                and parent not in self._ATTRIBUTES:
            raise self.fail(f"node {node} refers to parent node {parent}, which is not defined")
        data = fields.get("data", [""])[0] if fields.get("data") else ""
        if attribute == self._PROPERTIES:
            try:
                int(data)
            except ValueError:
                raise self.fail(f"node {node}: attribute properties {data[:40]!r} are not a number") from None
        self.defined[node] = self.line
        self.parent[node] = parent
        self.attribute_of[node] = attribute
        if attribute == self._NAME:
            if not self._typed(parent):
                raise self.fail(f"attribute {data[:40]!r} (node {node}) has no Caliper type: no node above it "
                                f"names one")
            self.attributes.add(node)

    def _typed(self, node: int | None) -> bool:
        """Whether a Caliper type is among ``node`` and the nodes above it."""
        seen = 0
        while node is not None and seen <= len(self.defined) + 1:
            if node in self._TYPES:
                return True
            node, seen = self.parent.get(node), seen + 1
        return False

    def _snapshot(self, kind: str, fields: dict) -> None:
        for node in self._ids(fields, "ref", kind):
            if node not in self.defined and node not in self._TYPES and node not in self._ATTRIBUTES:
                raise self.fail(f"{kind} record refers to node {node}, which is not defined")
        attributes = self._ids(fields, "attr", kind)
        for attribute in attributes:
            if attribute not in self.attributes:
                raise self.fail(f"{kind} record refers to attribute {attribute}, which is "
                                f"{'not an attribute' if attribute in self.defined else 'not defined'}")
        values = fields.get("data", [])
        if len(attributes) != len(values):
            raise self.fail(f"{kind} record has {len(attributes)} attribute ids but {len(values)} values")


def _split_record(line: str, escapes: bool = False) -> dict[str, list[str]] | None:
    """``"__rec=ctx,ref=42,attr=1=2,data=a=b"`` as ``{"__rec": ["ctx"], "ref": ["42"], ...}``, split as
    caliper-reader splits it; None when the line ends in an escape character.

    A line without escapes is split with ``str.split``, unless ``escapes``: then character by character, exactly as
    caliper-reader, which also drops a last field that ends in ``=`` (``data=1=`` gives no ``data``)."""
    if "\\" not in line and not escapes:
        result = {}
        for entry in line.split(","):
            key, *values = entry.split("=")
            result[key] = values
        return result
    result, entry, text = {}, [], ""
    for token in _TOKENS.findall(line):  # runs of plain characters, separators, escapes: caliper-reader's loop
        if token[0] == "\\":
            if len(token) == 1:
                return None
            text += "\n" if token[1] == "n" else token[1]
        elif token == ",":
            entry.append(text)
            result[entry[0]] = entry[1:]
            text, entry = "", []
        elif token == "=":
            entry.append(text)
            text = ""
        else:
            text += token
    if text:
        entry.append(text)
        result[entry[0]] = entry[1:]
    return result


_TOKENS = re.compile(r"\\.?|[,=]|[^\\,=]+", re.S)


def callpath_of(record: dict, source: str | None = None) -> str | None:
    """The ``->``-joined region path of a record, or None outside any region.

    A region whose name contains the separator ``->`` (C++'s ``operator->``, an annotation such as ``"a->b"``) is
    refused.  A call path is the text of its regions joined with ``->``, and everything downstream reads the tree
    from that text (parents and shares, the call tree of the report, ``--callpath`` globs), so such a name would
    be read as nested regions: a root region ``main->MPI_Irecv`` and ``main``'s child ``MPI_Irecv`` became one
    series, their values averaged.  Renaming it (``->`` replaced by another mark) would give the user a region
    that is not in the program and still collide with one that is; an escape would have to be understood by
    every reader, exporter and glob.  So the run is refused, naming the region and where it is defined, as the
    instrument shim refuses such a name when the region is opened.

    Raises
    ------
    InputError
        A region name containing ``->``: ``source`` (the file) and the line of the record that defines the name.
    """
    path = record.get("path")
    if path is None:
        return None
    regions = [path] if isinstance(path, str) else list(map(str, path))
    joined = CALLPATH_SEPARATOR.join(regions)
    if joined.count(CALLPATH_SEPARATOR) == len(regions) - 1:  # no region has the separator in its name
        return joined
    for region in regions:
        if CALLPATH_SEPARATOR in region:
            raise InputError(f"region {region!r} contains the call-path separator {CALLPATH_SEPARATOR!r}: its call "
                             f"path would read as nested regions and could merge with a nested call path; rename the "
                             f"region in the program", source, _node_line(source, region))
    return joined  # pragma: no cover - the count above saw a separator, which is in a region


def _node_line(path: str | None, data: str) -> int | None:
    """The line of the first node record whose value is ``data`` (for messages; None when not found)."""
    if path is None:
        return None
    try:
        lines = read_text(path).split("\n")
    except InputError:
        return None
    for number, line in enumerate(lines, 1):
        if line.startswith("__rec=node,"):  # the name as written may be escaped (a comma as \,)
            fields = _split_record(line.strip()) or {}
            if (fields.get("data") or [""])[0] == data:
                return number
    return None


def numeric_metadata(run: Run) -> dict[str, float]:
    """The run's metadata values that are numbers (numeric types and numeric text), dates left out.

    Raises
    ------
    InputError
        A value that is not of the number type Caliper gives it (``jobsize=sixtyfour`` or ``1e999`` typed ``uint``):
        the file is damaged, and the key must not silently drop out of this run (another key would become the
        parameter, and the run would still be read).
    """
    values = {}
    for key, raw in run.globals.items():
        if isinstance(raw, (list, tuple)):
            continue
        problem = _typed_problem(run.types.get(key, ""), raw)
        if problem:
            raise InputError(f"metadata {key}={str(raw)[:60]!r} {problem}, though the file types it {run.types[key]}",
                             run.path, _metadata_line(run.path, key))
        if run.adiak_types.get(key) == "date":
            continue
        try:
            number = float(raw)
        except (TypeError, ValueError):
            continue
        if math.isfinite(number):
            values[key] = number
    return values


def _typed_problem(kind: str, raw) -> str:
    """What is wrong with a metadata value of the Caliper type ``kind`` (a number type), or ""."""
    if kind not in _NUMERIC_TYPES:
        return ""
    try:
        number = float(raw)
    except (TypeError, ValueError):
        return "is not a number"
    if kind in _INTEGER_TYPES and not (math.isfinite(number) and number == int(number)):
        return "is not a whole number"
    if kind in _UNSIGNED_TYPES and number < 0:
        return "is negative"
    return ""


def _not_a_parameter(run: Run, key: str) -> str:
    """Why the metadata ``key``, named as a parameter, has no numeric value in this run."""
    raw = run.globals[key]
    if isinstance(raw, (list, tuple)):
        return (f"metadata {key} has {len(raw)} conflicting values in this run ({', '.join(map(str, raw))}); "
                f"a parameter needs one")
    if run.adiak_types.get(key) == "date":
        try:
            when = datetime.datetime.fromtimestamp(float(raw), datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        except (TypeError, ValueError, OverflowError, OSError):
            when = str(raw)
        return f"metadata {key}={str(raw)!r} is a date (Adiak type date: {when}), not a parameter"
    try:
        number = float(raw)
    except (TypeError, ValueError):
        return f"metadata {key}={str(raw)[:60]!r} is not a number; a parameter needs a numeric value"
    return f"metadata {key}={str(raw)!r} is {number}, not a finite number; a parameter needs a finite value"


def _metadata_line(path: str, key: str) -> int | None:
    """The line of the record that holds the value of the metadata ``key`` (for messages; None when not found)."""
    try:
        lines = read_text(path).split("\n")
    except InputError:
        return None
    attribute = None
    for number, line in enumerate(lines, 1):
        fields = _split_record(line.strip()) or {}
        kind, attr = (fields.get("__rec") or [""])[0], fields.get("attr") or []
        if kind == "node" and attr == [str(RecordCheck._NAME)] and (fields.get("data") or [""])[0] == key:
            attribute = (fields.get("id") or [None])[0]
        elif attribute is not None and attribute in attr and kind in ("node", "globals"):
            return number
    return None


def read_part(part, options: dict) -> Experiment:
    """Read one run; its parameters are provisional (every numeric metadata key) until :func:`join`.

    Raises
    ------
    InputError
        Bad file (see :func:`load`), a named parameter key missing from the
        run's metadata or not a number (or a date), a metadata value that
        Caliper types as a number but is not one, a non-numeric metric value.
    """
    settings = parse_options(options)
    run = load(str(part))
    metadata = numeric_metadata(run)
    if settings.parameters:
        missing = [k for k in settings.parameters if k not in run.globals]
        if missing:
            known = ", ".join(sorted(metadata)) or "none"
            raise InputError(f"no metadata key {', '.join(map(repr, missing))} in this run "
                             f"(its numeric keys: {known})", part)
        bad = [k for k in settings.parameters if k not in metadata]
        if bad:
            raise InputError(_not_a_parameter(run, bad[0]), part, _metadata_line(str(part), bad[0]))
        keys = list(settings.parameters)
    else:
        keys = sorted(metadata)
    point = np.array([metadata[k] for k in keys], dtype=np.float64)
    wanted_metrics = {n: m for n, m in run.metrics.items() if _selected(m.name, settings.metrics)}
    rows = _Rows(run, str(part), list(wanted_metrics.items()), settings.callpaths)
    callpaths, metrics, values = rows.columns()
    if not len(values) and not (settings.metrics or settings.callpaths):
        raise InputError("no region records with numeric metrics in this file", part)
    notes = [_RUN_NOTE + repr({"keys": keys, "metadata": metadata, "outside": rows.outside,
                               "snapshots": rows.snapshots, "other_channel": rows.other_channel,
                               "metrics": [m.name for m in run.metrics.values()]})]
    experiment = Experiment.from_columns(
        keys, callpath=callpaths if len(values) else "", metric=metrics if len(values) else "",
        coordinates=np.tile(point, (len(values), 1)).reshape(len(values), len(keys)),
        value=values, metrics=list(wanted_metrics.values()), source=str(part), reader=NAME,
    )
    experiment.notes.extend(notes)
    return experiment


class _Rows:
    """The measured values of one run's records, in the order of the records (and within a record, of the
    metrics), as a loop over caliper-reader's records gives them, but one step per layout (:class:`Layout`) and
    metric: a layout's call path is found once and its values converted a column at a time.

    Records outside any region, of another spot channel, or whose call path matches none of ``globs`` give no
    values; snapshots of Caliper's timeseries service are summed per call path, metric and location
    (:func:`snapshot_total`) and come after the other values, in the order first seen.  Of the records that cannot
    be read (a region named with ``->``, a value that is not a finite number), the first in the file is the error.
    """

    def __init__(self, run: Run, source: str, wanted: list[tuple[str, Metric]], globs: Sequence[str]):
        self.run, self.source, self.wanted, self.globs = run, source, wanted, globs
        self.outside = self.other_channel = self.snapshots = 0
        self.codes: dict[str, int] = {}  # call path -> its number
        self.parts: list[tuple[np.ndarray, int, int, np.ndarray]] = []  # record numbers, metric, call path, values
        self.one: list[tuple[int, int, int, float]] = []  # the same, for records read one by one
        self.slices: list[tuple[int, int, tuple, float, object]] = []  # record, metric, slice key, value, count
        self.errors: list[tuple[int, int, InputError]] = []  # record, metric (-1: the call path), error
        shapes: dict[tuple, list[Layout]] = {}  # attr ids -> the layouts with them
        special = {_SNAPSHOT, _SPOT_CHANNEL, "path"}  # what a record's values must not hold to be read a layout at once
        for layout in run.layouts:
            if layout.values is not None or _SNAPSHOT in layout.base or not special.isdisjoint(layout.names):
                self._one_by_one(layout)
            else:
                shapes.setdefault(layout.attributes, []).append(layout)
        for layouts in shapes.values():
            self._shape(layouts)

    def _callpath(self, record: dict, index: int, count: int = 1) -> str | None:
        """The call path of ``record`` (number ``index``; of ``count`` records alike, a layout's), None where it
        gives no values (counted), or an error kept (:attr:`errors`)."""
        if record.get(_SPOT_CHANNEL, _REGION_PROFILE) != _REGION_PROFILE:
            self.other_channel += count
            return None
        try:
            callpath = callpath_of(record, self.source)
        except InputError as error:
            self.errors.append((index, -1, error))
            return None
        if callpath is None:
            self.outside += count
        return callpath

    def _selected(self, callpath: str) -> bool:
        return not self.globs or any(fnmatch.fnmatchcase(callpath, g) for g in self.globs)

    def _bad(self, callpath: str, metric: Metric, raw, number: float | None, index: int) -> InputError:
        shown = repr(raw) if isinstance(raw, str) else repr(raw)[:60]
        return InputError(f"call path {callpath!r}: metric {metric.name!r} value {shown[:60]} is not a "
                          f"{'number' if number is None else 'finite number'}", self.source, self.run.lines[index])

    def _shape(self, layouts: list[Layout]) -> None:
        """The records of layouts with the same attributes (no snapshots): each layout's call path once, the
        values of all a column at a time."""
        kept, codes = [], []
        for layout in layouts:
            callpath = self._callpath(layout.base, layout.index[0], len(layout.index))
            if callpath is not None and self._selected(callpath):
                kept.append(layout)
                codes.append(self.codes.setdefault(callpath, len(self.codes)))
        if not kept:
            return
        counts = [len(layout.index) for layout in kept]
        index = np.fromiter((i for layout in kept for i in layout.index), dtype=np.int64, count=sum(counts))
        code = np.repeat(np.asarray(codes, dtype=np.int64), counts)
        first = kept[0]
        columns, width = first.columns, len(first.names)
        flat = None
        for position, (attribute, _) in enumerate(self.wanted):
            column = columns.get(attribute)
            if column is None:  # a value of the ref nodes: the same in every record of a layout
                for layout, callpath in zip(kept, codes):
                    raw = layout.base.get(attribute)
                    if raw is not None:
                        self._values(np.asarray(layout.index), position, callpath, [raw] * len(layout.index))
                continue
            if flat is None:
                flat = "=".join(data for layout in kept for data in layout.data).split("=")
            self._values(index, position, code, flat[column::width])

    def _values(self, index: np.ndarray, position: int, code, texts: list) -> None:
        """The values of one metric (``position`` in :attr:`wanted`) in the records ``index``, as ``float`` reads
        ``texts``; the first record whose value is not a finite number is an error (:attr:`errors`)."""
        try:
            numbers = np.fromiter(map(float, texts), dtype=np.float64, count=len(texts))
        except (TypeError, ValueError):
            numbers = np.array([_number(text) for text in texts], dtype=np.float64)  # None: nan
        bad = np.flatnonzero(~np.isfinite(numbers))
        if bad.size:
            first = int(bad[np.argmin(index[bad])])
            callpath = list(self.codes)[int(np.broadcast_to(code, index.shape)[first])]
            record = int(index[first])
            self.errors.append((record, position, self._bad(callpath, self.wanted[position][1], texts[first],
                                                            _number(texts[first]), record)))
            return
        self.parts.append((index, position, code, numbers))

    def _one_by_one(self, layout: Layout) -> None:
        """Every record of a layout as caliper-reader gives it, one by one (snapshots, and the rare layouts whose
        call path or channel is a value)."""
        for index, row in zip(layout.index, layout.rows()):
            record = layout.full(row)
            errors = len(self.errors)
            callpath = self._callpath(record, index)
            if len(self.errors) > errors:
                return
            if callpath is None:
                continue
            snapshot = _SNAPSHOT in record
            if snapshot:
                self.snapshots += 1
                where = tuple(str(record.get(key)) for key in _WHERE)
            if not self._selected(callpath):
                continue
            code = self.codes.setdefault(callpath, len(self.codes))
            for position, (attribute, metric) in enumerate(self.wanted):
                raw = record.get(attribute)
                if raw is None:
                    continue
                number = _number(raw)
                if number is None or not math.isfinite(number):  # as every reader: measurements are finite numbers
                    self.errors.append((index, position, self._bad(callpath, metric, raw, number, index)))
                    return
                if snapshot:
                    self.slices.append((index, position, (callpath, metric.name, attribute, where), number,
                                        record.get("count")))
                else:
                    self.one.append((index, position, code, number))

    def columns(self) -> tuple[tuple[list[str], np.ndarray], tuple[list[str], np.ndarray], np.ndarray]:
        """The call path and metric of every value (each as names in order of first appearance and a code per
        value) and the values.

        Raises
        ------
        InputError
            The first record in the file that cannot be read.
        """
        if self.errors:
            raise min(self.errors, key=lambda error: error[:2])[2]
        names = list(dict.fromkeys(metric.name for _, metric in self.wanted))
        metric_code = np.array([names.index(metric.name) for _, metric in self.wanted] or [0], dtype=np.int64)
        none = (np.zeros(0, np.int64), 0, np.zeros(0, np.int64), np.zeros(0))  # a run of no values: one empty part
        parts = self.parts + [(np.array([i]), position, code, np.array([value]))
                              for i, position, code, value in self.one] or [none]
        record = np.concatenate([p[0] for p in parts])
        position = np.concatenate([np.full(len(p[0]), p[1], dtype=np.int64) for p in parts])
        callpath = np.concatenate([np.broadcast_to(np.asarray(p[2], dtype=np.int64), len(p[0])) for p in parts])
        values = np.concatenate([p[3] for p in parts])
        order = np.lexsort((position, record))
        callpath, metric, values = callpath[order], metric_code[position[order]], values[order]
        totals: dict[tuple, list[tuple[float, object]]] = {}
        for _, _, key, value, count in sorted(self.slices, key=lambda s: s[:2]):
            totals.setdefault(key, []).append((value, count))
        if totals:
            callpath = np.concatenate([callpath, [self.codes[key[0]] for key in totals]])
            metric = np.concatenate([metric, [names.index(key[1]) for key in totals]])
            values = np.concatenate([values, [snapshot_total(key[2], slices) for key, slices in totals.items()]])
        return (_first_seen(list(self.codes), callpath), _first_seen(names, metric),
                np.asarray(values, dtype=np.float64))


def _number(raw) -> float | None:
    """``float(raw)``, or None where it is not a number."""
    try:
        return float(raw)
    except (TypeError, ValueError):
        return None


def _first_seen(names: list[str], codes: np.ndarray) -> tuple[list[str], np.ndarray]:
    """``(names, codes)`` with only the names the codes use, numbered in order of first appearance."""
    codes = np.asarray(codes, dtype=np.int64)
    used, first = np.unique(codes, return_index=True)
    used = used[np.argsort(first, kind="stable")]
    renumber = np.zeros(len(names), dtype=np.int32)
    renumber[used] = np.arange(len(used), dtype=np.int32)
    return [names[i] for i in used], renumber[codes]


def snapshot_total(attribute: str, parts: Sequence[tuple[float, object]]) -> float:
    """A run's value of the metric ``attribute`` from its snapshots of one call path (Caliper's timeseries service:
    the profile of each interval of the run), each a value and the snapshot's ``count`` (None when it has none).

    The snapshots are added up, as Hatchet sums them: ``sum#`` aggregates, ``count`` and plain values.  Caliper's
    other aggregates keep their meaning over the whole run: ``min#`` the smallest, ``max#`` and a high-water mark
    (``alloc.region.highwatermark``: memory's peak in the interval) the largest, ``avg#`` the mean weighted by each
    snapshot's ``count`` (the plain mean of the snapshots where one has no count).

    >>> snapshot_total("sum#time.duration", [(2.0, 1), (3.0, 3)]), snapshot_total("avg#time.duration", [(2.0, 1),
    ...                                                                                                   (1.0, 3)])
    (5.0, 1.25)
    """
    numbers = [value for value, _ in parts]
    operation = attribute.split("#", 1)[0] if "#" in attribute else ""
    if operation == "max" or attribute.endswith("highwatermark"):
        return max(numbers)
    if operation == "min":
        return min(numbers)
    if operation == "avg":
        counts = [float(count) if count is not None else math.nan for _, count in parts]
        if all(count > 0 for count in counts):
            return math.fsum(v * c for v, c in zip(numbers, counts)) / math.fsum(counts)
        return math.fsum(numbers) / len(numbers)
    return math.fsum(numbers)


def _selected(name: str, patterns: Sequence[str]) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)


# ------------------------------------------------------------------- join
def choose_parameters(metadata: Sequence[dict[str, float]]) -> tuple[list[str], list[str]]:
    """The metadata keys that vary across runs and are parameters, and notes about the others.

    A key is taken when every run has it, its values are integers, it is
    not a date or time, and it takes at least two values.  Keys that vary
    together (each determines the other over these runs: ``jobsize``,
    ``mpi.world.size``, ``numhosts``) are kept once: a resource count
    (:data:`~extrap_plugins.experiment.RESOURCE_NAMES`: ``jobsize``,
    ``mpi.world.size``, ``nodes``...) before other keys, as ``efficiency`` and
    the cost of a run need the process count; then the one with the largest
    values (the rank count ``mpi.world.size`` rather than the node count
    ``numhosts`` when a run lacks ``jobsize``); at equal values a key without a
    dot (user metadata: ``jobsize``) before Caliper's own (``mpi.world.size``).

    Returns
    -------
    taken : list of str
    notes : list of str
    """
    if not metadata:
        return [], []
    common = [k for k in metadata[0] if all(k in m for m in metadata)]
    notes: list[str] = []
    candidates = []
    for key in sorted(common):
        column = [m[key] for m in metadata]
        if len(set(column)) < 2:
            continue
        if _is_time(key):
            notes.append(f"metadata {key} varies but is a date or time, not a parameter")
            continue
        if any(v != int(v) for v in column):
            notes.append(f"metadata {key} varies but is not integer-valued (a result such as a time), "
                         f"not a parameter")
            continue
        candidates.append(key)
    partial = sorted({k for m in metadata for k in m} - set(common))
    if partial:
        notes.append(f"metadata {', '.join(partial)} missing in some runs, not a parameter")
    taken: list[str] = []
    groups: dict[tuple, list[str]] = {}
    for key in candidates:
        column = [m[key] for m in metadata]
        signature = tuple(np.unique(column, return_inverse=True)[1].tolist())
        groups.setdefault(signature, []).append(key)
    for keys in groups.values():
        best = max(keys, key=lambda k: (k.lower() in RESOURCE_NAMES, max(m[k] for m in metadata), "." not in k,
                                        -len(k)))
        taken.append(best)
        others = [k for k in keys if k != best]
        if others:
            notes.append(f"metadata {', '.join(others)} vary with {best}: left out")
    taken.sort(key=candidates.index)
    return taken, notes


def _is_time(key: str) -> bool:
    return any(word in key.lower() for word in _TIME_WORDS)


def missing_keys(metadata: Sequence[dict[str, float]], runs: Sequence[str], noun: str = "run",
                 hint: str = "--reader-option parameters={keys} models the {noun}s that have {them}",
                 shown: int = 3) -> list[str]:
    """What to warn of the metadata keys some runs lack that would be parameters: one message per set of runs
    lacking keys (one cause), naming those runs.

    A key counts when the runs that have it give it at least two integer values and it is not a date or time
    (:func:`choose_parameters` would take it if every run had it): without it another key may become the parameter
    (the node count ``numhosts`` for a run without ``jobsize``), so the user must hear which runs lack it.  Keys
    that could not be parameters anyway stay in the notes only.

    Parameters
    ----------
    metadata : sequence of dict, one per run
        Each run's numeric metadata.
    runs : sequence of str, the same length
        What names each run for the user (its file).
    noun : str
        What a run is called (``profile`` for a Thicket).
    hint : str
        How to model the runs that have the keys; ``{keys}`` (comma-separated), ``{first}`` (the first key),
        ``{noun}`` and ``{them}`` are filled in.

    >>> print(*missing_keys([{"jobsize": 27.0}, {}, {"jobsize": 125.0}], ["27.cali", "64.cali", "125.cali"],
    ...                     hint="name it"))
    64.cali: metadata key jobsize missing (present in the other 2 runs), so it is not a parameter; name it
    """
    lacking: dict[tuple[int, ...], list[str]] = {}
    for key in sorted({k for m in metadata for k in m}):
        having = [m[key] for m in metadata if key in m]
        if len(having) == len(metadata) or len(set(having)) < 2 or _is_time(key) or any(v != int(v) for v in having):
            continue
        lacking.setdefault(tuple(i for i, m in enumerate(metadata) if key not in m), []).append(key)
    said = []
    for members, keys in lacking.items():
        names = [str(runs[i]) for i in members]
        where = ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")
        others = format_count(len(metadata) - len(members), noun)
        one = len(keys) == 1
        what = f"metadata key {keys[0]}" if one else f"metadata keys {', '.join(keys)}"
        fix = hint.format(keys=",".join(keys), first=keys[0], noun=noun, them="it" if one else "them")
        said.append(f"{where}: {what} missing (present in the other {others}), so "
                    f"{'it is not a parameter' if one else 'they are not parameters'}; {fix}")
    return said


def join(experiments: list[Experiment], path, options: dict) -> Experiment:
    """Choose the parameters across the runs and put the runs together, row for row.

    Only the runs' metadata (their notes), metrics and coordinates decide anything here, never their values, so
    that streaming, which calls this with stand-ins of the runs (:func:`extrap_plugins.streaming.stand_in`), gets
    the same parameters, metrics and warnings as the in-memory read.

    Raises
    ------
    InputError
        What ``metrics`` and ``callpaths`` selected matches nothing (:func:`check_selection`); no metadata key
        varies across the runs and none was named; runs of different programs; a metric inclusive in one run and
        exclusive in another.
    """
    settings = parse_options(options)
    infos = [_run_info(e) for e in experiments]
    source = experiments[0].source if len(experiments) == 1 else describe_inputs(path)
    check_selection(settings, experiments, [info.get("metrics", []) for info in infos], source)
    notes: list[str] = []
    if settings.parameters:
        taken = list(settings.parameters)
        notes.append(f"parameters from run metadata: {', '.join(taken)} (named with parameters=)")
    else:
        taken, why = choose_parameters([info["metadata"] for info in infos])
        if not taken:
            if len(experiments) == 1:
                raise InputError("one run: nothing varies to model; give several runs (files or a folder)",
                                 experiments[0].source)
            sets = metadata_sets([e.source for e in experiments], [info["metadata"] for info in infos])
            if len(sets) > 1:
                raise InputError(f"no numeric metadata key varies across all {len(experiments)} runs: they fall "
                                 f"into {len(sets)} sets with different metadata keys, as runs of different "
                                 f"programs do: {'; '.join(sets)}; read each set on its own, or name the "
                                 f"parameters with --reader-option parameters=KEY[,KEY]", source)
            raise InputError(f"no numeric metadata key varies across the {len(experiments)} runs; "
                             f"name the parameters with --reader-option parameters=KEY[,KEY]", source)
        notes.append(f"parameters from run metadata: {', '.join(taken)} (keys that vary across the "
                     f"{len(experiments)} runs; name others with --reader-option parameters=KEY)")
        notes.extend(why)
        for message in missing_keys([info["metadata"] for info in infos], [e.source for e in experiments]):
            warnings.warn(ExtrapWarning(message), stacklevel=2)
    parts = []
    for experiment, info in zip(experiments, infos):
        keys = info["keys"]
        columns = [keys.index(k) for k in taken]
        parts.append(Experiment(
            parameters=tuple(experiment.parameters[i] for i in columns) if columns else (),
            callpaths=experiment.callpaths, metrics=experiment.metrics,
            callpath_index=experiment.callpath_index, metric_index=experiment.metric_index,
            coordinates=experiment.coordinates[:, columns], repetition=experiment.repetition,
            value=experiment.value, source=experiment.source, reader=NAME,
        ))
    outside = sum(info["outside"] for info in infos)
    joined = _concatenate(parts, source)
    joined.notes.extend(notes)
    if outside:
        joined.notes.append(f"{outside} record(s) outside any region (Caliper's root totals) left out, "
                            f"as Hatchet and Thicket do")
    snapshots = sum(info.get("snapshots", 0) for info in infos)
    if snapshots:
        joined.notes.append(f"{snapshots} record(s) of Caliper's timeseries snapshots summed per call path into each "
                            f"run's total (min# the smallest, max# the largest, avg# weighted by count), as Hatchet "
                            f"sums them")
    other_channel = sum(info.get("other_channel", 0) for info in infos)
    if other_channel:
        joined.notes.append(f"{other_channel} record(s) of Caliper's spot timeseries channel left out, as Hatchet and "
                            f"Thicket do")
    return joined


def check_selection(settings: Settings, experiments: Sequence[Experiment], declared: Sequence[Sequence[str]],
                    source: str) -> None:
    """Check what ``metrics`` and ``callpaths`` selected once every run is read, as the host does for readers that
    do not select themselves (:func:`extrap_plugins.joining.check_selection`), names and globs alike.

    Parameters
    ----------
    declared : sequence of sequences of str, one per run
        Every metric the run names, selected or not.

    Raises
    ------
    InputError
        A metric (or glob) that no run names, listing those they do; one no run has values of; call path globs
        that match no value.
    """
    if not settings.metrics and not settings.callpaths:
        return
    names = list(dict.fromkeys(name for run in declared for name in run))
    with_values = {m.name for e in experiments for m in with_rows(e.metrics, e.metric_index)}
    unknown = [p for p in settings.metrics if not any(fnmatch.fnmatchcase(n, p) for n in names)]
    if unknown:
        listed = f"; the metrics are {', '.join(names)}" if names else " in any run"
        raise InputError(f"no metric {', '.join(map(repr, unknown))}{listed}", source)
    empty = [p for p in settings.metrics if not any(fnmatch.fnmatchcase(n, p) for n in with_values)]
    if empty:
        raise InputError(f"metric {', '.join(map(repr, empty))} has no data in any run", source)
    if settings.callpaths and not any(len(e) for e in experiments):
        raise InputError(f"no call path matches {', '.join(map(repr, settings.callpaths))}", source)


def metadata_sets(runs: Sequence[str], metadata: Sequence[dict[str, float]], noun: str = "run",
                  shown: int = 4) -> list[str]:
    """The runs grouped by their numeric metadata keys, each set described by where its files are, how many
    runs it has and what varies within it: ``mpi_scaling_cali (5 runs): jobsize varies``.

    Parameters
    ----------
    runs : sequence of str
        Each run's file (a path).
    metadata : sequence of dict, the same length
        Each run's numeric metadata.
    noun : str
        What a run is called (``profile`` for a Thicket).
    """
    groups: dict[frozenset, list[int]] = {}
    for i, values in enumerate(metadata):
        groups.setdefault(frozenset(values), []).append(i)
    files = [pathlib.Path(run) for run in runs]
    base = pathlib.Path(os.path.commonpath([str(f.parent) for f in files]))
    described = []
    for members in list(groups.values())[:shown]:
        folder = pathlib.Path(os.path.commonpath([str(files[i].parent) for i in members]))
        if folder != base:
            where = str(folder.relative_to(base))
        else:
            names = [files[i].name for i in members]
            where = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        if len(members) == 1:
            described.append(f"{where} (1 {noun})")
            continue
        taken, _ = choose_parameters([metadata[i] for i in members])
        varies = f"{', '.join(taken)} {'varies' if len(taken) == 1 else 'vary'}" if taken else "no key varies"
        described.append(f"{where} ({format_count(len(members), noun)}): {varies}")
    if len(groups) > shown:
        described.append(f"and {len(groups) - shown} more sets")
    return described


def _concatenate(parts: list[Experiment], source: str) -> Experiment:
    """Runs joined; rows of a series at the same point are numbered as repetitions in run order.

    Raises
    ------
    InputError
        A metric whose values are inclusive in one run and exclusive in another (Caliper configured differently:
        the spot controller's ``Avg time/rank`` is inclusive, the same alias of ``sum#time.duration`` exclusive).
    """
    callpaths = list(dict.fromkeys(c.name for e in parts for c in e.callpaths))
    kinds: dict[tuple[str, str], str] = {}
    for e in parts:
        for m in e.metrics:
            if m.values:
                kinds.setdefault((m.name, m.values), e.source)
    for (name, values), where in kinds.items():
        if values == "inclusive" and (name, "exclusive") in kinds:
            raise InputError(f"metric {name!r} holds inclusive values in {where} but exclusive ones in "
                             f"{kinds[name, 'exclusive']}: the runs were measured with different Caliper "
                             f"configurations; read them apart", source)
    metric_objects = {m.name: m for m in merged_metrics(m for e in parts for m in e.metrics)}
    cp_code = {name: i for i, name in enumerate(callpaths)}
    mt_names = list(metric_objects)
    mt_code = {name: i for i, name in enumerate(mt_names)}
    cp = np.concatenate([np.array([cp_code[c.name] for c in e.callpaths], dtype=np.int32)[e.callpath_index]
                         if len(e) else np.zeros(0, np.int32) for e in parts])
    mt = np.concatenate([np.array([mt_code[m.name] for m in e.metrics], dtype=np.int32)[e.metric_index]
                         if len(e) else np.zeros(0, np.int32) for e in parts])
    n_params = len(parts[0].parameters)
    coordinates = np.concatenate([e.coordinates.reshape(-1, n_params) for e in parts])
    value = np.concatenate([e.value for e in parts])
    if value.shape[0] == 0:
        raise InputError("no values selected in these runs", source)
    return Experiment.from_columns(
        [p.name for p in parts[0].parameters], callpath=(callpaths, cp), metric=(mt_names, mt),
        coordinates=coordinates, value=value, metrics=list(metric_objects.values()), source=source, reader=NAME,
    )


def _run_info(experiment: Experiment) -> dict:
    for note in experiment.notes:
        if note.startswith(_RUN_NOTE):
            return ast.literal_eval(note[len(_RUN_NOTE):])
    raise InputError("a run was not read by the caliper reader", experiment.source)  # pragma: no cover
