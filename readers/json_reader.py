"""The ``json`` reader: every JSON and JSON Lines input that Extra-P 4 reads.

One reader for both, as Extra-P's own ``--json``: the content tells them
apart, and users name JSON Lines files ``.json`` as often as ``.jsonl``.

JSON Lines, one measured value per line (blank lines are skipped)::

    {"params": {"p": 4, "n": 10}, "callpath": "main->solve", "metric": "time", "value": 1.25}

``callpath`` (default ``<root>``) and ``metric`` (default ``time``) are
optional; ``value`` may be a list of repetitions; lines with the same
parameters, call path and metric are repetitions.  The parameters and their
order are those of the first line.

Extra-P's JSON document, newer schema (``json/new/``)::

    {"parameters": ["x", "y"],
     "measurements": {"sweep": {"time": [{"point": [4, 10], "values": [3.5, 3.6]}]}}}

and the older schema with ids (``json/input_*.JSON``)::

    {"parameters": [{"id": 1, "name": "x"}],
     "callpaths": [{"id": 1, "name": "sweep"}], "metrics": [{"id": 1, "name": "time"}],
     "coordinates": [{"id": 1, "parameter_value_pairs": [{"parameter_id": 1, "parameter_value": 4}]}],
     "measurements": [{"callpath_id": 1, "coordinate_id": 1, "metric_id": 1, "value": 3.5}]}

As in Extra-P, every call path and metric must be measured at every point
(``--reader-option incomplete=allow`` relaxes that).  Numbers are JSON numbers
(``"81"`` is refused, as ``null`` is); in the newer schema ``point`` and
``values`` are lists (a number, as in Extra-P, is a point of one parameter or
one repetition), and a series lists each point once (its ``values`` hold the
repetitions).
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import json
import operator
import pathlib
import re
from typing import Callable, Iterator, Sequence

import numpy as np

from extrap_plugins.errors import InputError
from extrap_plugins.experiment import Experiment
from extrap_plugins.formatting import format_count, format_point
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.registration import ReaderInfo

from ._common import (
    DEFAULT_CALLPATH, DEFAULT_METRIC, EMPTY_FILE, INCOMPLETE_OPTION, LineOf, build, check_callpaths, check_complete,
    check_options, check_parameter_names, check_points_once, choice, factorize, first_content_line, head_readings,
    is_blank, json_error, json_found, json_to_float, json_with_lines, listed_names, read_text, shown,
    universal_newlines,
    warn_missing,
)

NAME = "json"
OPTIONS = dict(INCOMPLETE_OPTION)
_TALPAS_LIKE = re.compile(rb'[}"\d]\s*;\s*"')
_SHIM = re.compile(rb'"format"\s*:\s*"extrap-plugins/instrument"')
_EXTRAP_KEYS = re.compile(rb'"params"\s*:\s*\{|"measurements"\s*:|"parameter_value_pairs"\s*:'
                          rb'|"callpaths"\s*:\s*\[\s*\{|"parameters"\s*:\s*\[')
_NOT_BLANK = re.compile(r"\S")
_MISSING = object()
_UNHASHABLE = object()
_ID_TYPES = (int, float, str)


@hookimpl
def extrap_readers() -> list[ReaderInfo]:
    return [
        ReaderInfo(
            name=NAME,
            read=read,
            description="Extra-P JSON Lines ({\"params\": {...}, \"callpath\", \"metric\", \"value\"}) "
                        "and Extra-P's JSON documents (both schemas)",
            patterns=("*.json", "*.jsonl"),
            sniff=sniff,
            options=OPTIONS,
        )
    ]


def sniff(path: pathlib.Path) -> bool:
    """JSON whose start shows Extra-P's keys (not Talpas' ``;`` records, not the shim's runs); or any JSON, or
    nothing, named ``*.json``/``*.jsonl`` (this reader says what is wrong with it, such as ``no 'params'``, rather
    than no reader recognising it)."""
    ours = pathlib.Path(path).suffix.lower() in (".json", ".jsonl")
    if ours and is_blank(path):
        return True
    return any(_sniff_head(data, ours) for data in head_readings(path, 8192))


def _sniff_head(data: bytes, ours: bool) -> bool:
    """:func:`sniff` on the first bytes of a file (read as :func:`~._common.head_readings` reads them: in UTF-16
    without its byte-order mark too, which the reader then refuses, saying so)."""
    first = first_content_line(data)
    if not first.startswith((b"{", b"[")) or _TALPAS_LIKE.search(first) or _SHIM.search(data):
        return False
    return ours or bool(_EXTRAP_KEYS.search(data))


def read(path: pathlib.Path, options: dict[str, str]) -> Experiment:
    """Read a JSON Lines file or an Extra-P JSON document."""
    settings = check_options(options, OPTIONS, NAME)
    allow_incomplete = choice(settings, "incomplete", ("error", "allow"), "error") == "allow"
    text = universal_newlines(read_text(path))
    if _is_json_lines(text, path):
        lines = JsonLines(text, path)
        columns = read_json_lines(lines, path, params_key="params")
        return finish(columns, path, allow_incomplete, lines.line_of)
    return _read_document(text, path, allow_incomplete)


# ---------------------------------------------------------------- JSON Lines
def _is_json_lines(text: str, path) -> bool:
    """Whether the first non-blank line is a complete JSON Lines row."""
    stripped = text.lstrip()
    if not stripped:
        raise InputError(EMPTY_FILE, path)
    if not stripped.startswith("{"):
        return False
    end = stripped.find("\n")
    end = len(stripped) if end < 0 else end
    try:
        row = json.loads(stripped[:end])
    except json.JSONDecodeError:
        return False
    # A complete object on the first line followed by more lines is JSON Lines whatever its keys
    # (its errors are then reported per line); a file of one line is a row only if it has "params".
    return isinstance(row, dict) and ("params" in row or _NOT_BLANK.search(stripped, end) is not None)


class JsonLines:
    """A file with one JSON object per line, parsed block by block.

    Joining a block's lines into one JSON array parses rows several times
    faster than a ``json.loads`` per line; only when that fails (or gives a
    different number of rows) are the block's lines parsed one by one, to
    name the first bad one.  Blocks of about 4 MB keep the parsed objects
    of only one block in memory at a time.
    """

    BLOCK = 1 << 22  # characters

    def __init__(self, text: str, path, separator: str | None = None):
        self.text = text
        self.path = path
        self.separator = separator
        self._blocks: list[tuple[int, int, int, int]] = []  # start, end, first line number, first row

    def blocks(self) -> Iterator[tuple[list, int]]:
        """Each block's rows (parsed JSON values, one per non-blank line) and the number of its first row."""
        text, start, line, row = self.text, 0, 1, 0
        while start < len(text):
            end = text.find("\n", start + self.BLOCK)
            end = len(text) if end < 0 else end + 1
            piece = text[start:end]
            if self.separator is not None:
                piece = piece.replace(self.separator, ",")  # one C-level pass per block, columns unchanged
            lines = piece.split("\n")
            body = [line for line in lines if line and not line.isspace()]
            self._blocks.append((start, end, line, row))
            if body:
                yield self._parse(body, lines, line), row
            row += len(body)
            line += piece.count("\n")
            start = end

    def _parse(self, body: list[str], lines: list[str], first_line: int) -> list:
        try:
            rows = json.loads("[" + ",".join(body) + "]")
            if len(rows) == len(body):
                return rows
        except json.JSONDecodeError:
            pass
        numbers = [first_line + i for i, line in enumerate(lines) if line and not line.isspace()]
        for number, line in zip(numbers, body):
            try:
                json.loads(line)
            except json.JSONDecodeError as error:
                message = error.msg if self.separator is None else error.msg.replace("','", f"'{self.separator}'")
                raise InputError(f"not valid JSON: {message} (column {error.colno}){json_found(error)}", self.path,
                                 number) from None
        raise InputError("not valid JSON Lines", self.path, first_line)  # pragma: no cover - every line parsed alone

    def line_of(self, row: int) -> int:
        """The 1-based line of the ``row``-th non-blank line (of blocks already parsed)."""
        i = bisect.bisect_right([block[3] for block in self._blocks], row) - 1
        start, end, line, first_row = self._blocks[i]
        lines = self.text[start:end].split("\n")
        return line + [j for j, text in enumerate(lines) if text and not text.isspace()][row - first_row]


@contextlib.contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector: parsing creates millions of containers and no cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_json_lines(lines: JsonLines, path, *, params_key: str, require_names: bool = False) -> dict:
    """Columns of a JSON Lines (or Talpas) file, block by block (see :class:`RowColumns`)."""
    columns = RowColumns(path, lines.line_of, params_key=params_key, require_names=require_names)
    with _gc_paused():
        for rows, first_row in lines.blocks():
            columns.add(rows, first_row)
    return columns.result()


class RowColumns:
    """Columns from rows ``{params_key: {...}, "callpath", "metric", "value"}``, gathered block by block.

    Parameters
    ----------
    line_of : callable(int) -> int
        The line of row i (counted over all blocks).
    params_key : str
        ``"params"`` (Extra-P JSON Lines) or ``"parameters"`` (Talpas).
    require_names : bool
        Whether ``callpath`` and ``metric`` are required (Talpas) or default
        to ``<root>`` and ``time``.

    The parameters and their order are those of the first row.  Each block
    is checked and converted with a few C-level passes (``map``, ``set``,
    numpy); a Python loop runs only to find the row of an error.
    """

    def __init__(self, path, line_of: LineOf, *, params_key: str, require_names: bool = False):
        self.path = path
        self.line_of = line_of
        self.params_key = params_key
        self.require_names = require_names
        self.parameters: list[str] | None = None
        self.known = (params_key, "callpath", "metric", "value")
        self.unread: dict[str, int] = {}  # a key of no meaning here -> the first row that has it
        self.codes: dict[str, dict[str, int]] = {"callpath": {}, "metric": {}}
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in ("coordinates", "value", "callpath", "metric", "row")}

    def add(self, rows: list, first_row: int) -> None:
        """Check and convert one block of rows; ``first_row`` numbers its first row among all rows."""
        path, key = self.path, self.params_key
        line_of: LineOf = lambda i: self.line_of(first_row + i)  # noqa: E731
        if set(map(type, rows)) != {dict}:
            i = next(i for i, r in enumerate(rows) if type(r) is not dict)
            raise InputError(f"expected a JSON object per line, got {_kind(rows[i])}", path, line_of(i))
        others = set().union(*rows).difference(self.known, self.unread)  # (a misspelt "callpath" is no call path)
        first = {other: next(i for i, r in enumerate(rows) if other in r) for other in others}
        for other in sorted(others, key=lambda k: (first[k], list(rows[first[k]]).index(k))):
            self.unread[other] = first_row + first[other]
            meant = [known for known in self.known if known == other.strip().lower()]
            if meant:  # "Callpath", "METRIC": not read, every row's would be <root> or time, series merged unsaid
                raise InputError(f"key {shown(other)} is not read: keys are case-sensitive; write {meant[0]!r}",
                                 path, line_of(first[other]))
        params = list(map(operator.methodcaller("get", key, _MISSING), rows))
        if set(map(type, params)) != {dict}:
            i = next(i for i, p in enumerate(params) if type(p) is not dict)
            what = f"no {key!r}" if params[i] is _MISSING else f"{key!r} is {_kind(params[i])}"
            raise InputError(f"{what}; expected {key!r}: {{parameter: value, ...}}", path, line_of(i))
        if self.parameters is None:
            self.parameters = list(params[0])
            if not self.parameters:
                raise InputError(f"{key!r} is empty; give at least one parameter", path, line_of(0))
            unnamed = [name for name in self.parameters if not name.strip()]
            if unnamed:
                raise InputError(f"parameter {unnamed[0]!r} has no name; give every parameter a name", path,
                                 line_of(0))
        names = self.parameters
        try:
            columns = None
            if set(map(len, params)) == {len(names)}:
                columns = [list(map(operator.itemgetter(name), params)) for name in names]
        except KeyError:
            pass
        if columns is None:
            i = next(i for i, p in enumerate(params) if set(p) != set(names))
            raise InputError(f"parameters {_names(params[i])} differ from {_names(names)} of the first line",
                             path, line_of(i))
        coordinates = np.column_stack([json_to_float(c, path, line_of, f"parameter {name!r}:")
                                       for c, name in zip(columns, names)])

        values = list(map(operator.methodcaller("get", "value", _MISSING), rows))
        kinds = set(map(type, values))
        row = np.arange(first_row, first_row + len(rows))
        if list in kinds:
            counts = np.fromiter((len(v) if type(v) is list else 1 for v in values), dtype=np.int64,
                                 count=len(values))
            if not counts.all():  # a row of no value: not a measurement, and not to be dropped without a word
                raise InputError("'value' is empty", path, line_of(int(np.argmin(counts))))
            local = np.repeat(np.arange(len(values)), counts)
            values = [x for v in values for x in (v if type(v) is list else (v,))]
            value_line: LineOf = lambda i: line_of(int(local[i]))  # noqa: E731
            kinds = set(map(type, values))
        else:
            local = None
            value_line = line_of
        if object in kinds:  # the type of _MISSING
            i = next(i for i, v in enumerate(values) if v is _MISSING)
            raise InputError("no 'value'", path, value_line(i))
        value = json_to_float(values, path, value_line, "value", missing=True)  # "1", true, null: not numbers

        callpath = self._names(rows, "callpath", DEFAULT_CALLPATH, line_of)
        metric = self._names(rows, "metric", DEFAULT_METRIC, line_of)
        if local is not None:
            coordinates, callpath, metric, row = coordinates[local], callpath[local], metric[local], row[local]
        for name, part in zip(("coordinates", "value", "callpath", "metric", "row"),
                              (coordinates, value, callpath, metric, row)):
            self.parts[name].append(part)

    def _names(self, rows: list, key: str, default: str, line_of: LineOf) -> np.ndarray:
        """The block's call path or metric codes, shape (n_rows,), into names shared by all blocks."""
        column = list(map(operator.methodcaller("get", key, _MISSING if self.require_names else default), rows))
        try:
            distinct = dict.fromkeys(column)  # checked instead of the column: a few names, not a value per row
        except TypeError:  # a list or an object as a name
            distinct = {_UNHASHABLE: None}
        if any(type(name) is not str or not name for name in distinct):
            i = next(i for i, c in enumerate(column) if not (type(c) is str and c))
            if column[i] is _MISSING:
                raise InputError(f"no {key!r}", self.path, line_of(i))
            got = "an empty string" if column[i] == "" else _kind(column[i])
            raise InputError(f"{key!r} must be a non-empty string, got {got}", self.path, line_of(i))
        if key == "callpath":
            check_callpaths(distinct, self.path, lambda name: line_of(column.index(name)))
        index = self.codes[key]
        for name in distinct:
            index.setdefault(name, len(index))
        return np.fromiter(map(index.__getitem__, column), dtype=np.int32, count=len(column))

    def result(self) -> dict:
        """The columns: ``parameters`` (list of str), ``callpath`` and ``metric`` ((names, codes)),
        ``coordinates`` (n_values, n_params), ``value`` (n_values,) and ``row_of`` (n_values,), the row
        of every value (a row whose value is a list gives several)."""
        if self.parameters is None:
            raise InputError("no measurements in this file", self.path)
        parts = {name: np.concatenate(arrays) for name, arrays in self.parts.items()}
        return dict(parameters=self.parameters, coordinates=parts["coordinates"], value=parts["value"],
                    callpath=(list(self.codes["callpath"]), parts["callpath"]),
                    metric=(list(self.codes["metric"]), parts["metric"]), row_of=parts["row"],
                    unread=self.unread, known=self.known)


def columns_from_rows(rows: Sequence, path, line_of: LineOf, *, params_key: str, require_names: bool = False):
    """Columns from rows already parsed (a JSON array of rows; see :class:`RowColumns`)."""
    columns = RowColumns(path, line_of, params_key=params_key, require_names=require_names)
    if rows:
        columns.add(list(rows), 0)
    return columns.result()


def finish(columns: dict, path, allow_incomplete: bool, line_of: LineOf, declared: np.ndarray | None = None,
           reader: str = NAME, warn: bool = True) -> Experiment:
    """The Experiment from :class:`RowColumns`-style columns, after Extra-P's completeness rule (unless allowed).

    ``line_of(row)`` gives the line of a row; ``declared`` (n_declared, n_params) are points the file
    declares besides those measured.  Values that are not finite numbers are missing, said in one warning
    (:func:`~._common.warn_missing`; not with ``warn=False``, for a caller that reads again to find the lines).
    """
    row_line: LineOf = lambda i: line_of(int(columns["row_of"][i]))  # noqa: E731
    if not allow_incomplete:
        check_complete(columns["parameters"], columns["callpath"], columns["metric"], columns["coordinates"],
                       path, row_line, declared=declared)
    experiment = build(columns["parameters"], _single(columns["callpath"]), _single(columns["metric"]),
                       columns["coordinates"], columns["value"], path, reader, notes=_unread_notes(columns, line_of))
    if warn:
        warn_missing(experiment, path, row_line)
    return experiment


def _unread_notes(columns: dict, line_of: LineOf) -> list[str]:
    """A note naming the keys of rows that are not read (with the first line of each), if any."""
    unread = sorted(columns.get("unread", {}).items(), key=operator.itemgetter(1))
    if not unread:
        return []
    keys = ", ".join(f"{key!r} (line {line_of(row)})" for key, row in unread)
    return [f"not read: {format_count(len(unread), 'key')} {keys}; a row holds {', '.join(columns['known'])}"]


def _single(column: tuple[list[str], np.ndarray]):
    """One name for every row as a plain str (cheaper to build), else (names, codes)."""
    return column[0][0] if len(column[0]) == 1 else column


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "a list", str: f"the string {shown(value)}"}.get(type(value),
                                                                                   f"the number {value}")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _names(names) -> str:
    return "{" + listed_names(map(str, names)) + "}"


# ------------------------------------------------------------ JSON documents
def _read_document(text: str, path, allow_incomplete: bool) -> Experiment:
    """An Extra-P JSON document; an error found is explained again with the line of the object at fault."""
    try:
        with _gc_paused():
            data = json.loads(text)
            experiment = _document(data, path, allow_incomplete, lambda obj: None, warn=False)
        if not np.isnan(experiment.value).any():
            return experiment
        # missing values: read again, with the lines to name in the warning
    except json.JSONDecodeError as error:
        problem = json_error(error, path)
        if _TALPAS_LIKE.search(text.lstrip().partition("\n")[0].encode()):
            problem = InputError(f"{problem.message}; the fields are separated by ';' as in a Talpas file: "
                                 "--reader talpas reads it", path, problem.line)
        raise problem from None
    except InputError as error:
        if error.line is not None:
            raise
    data, lines = json_with_lines(text)
    return _document(data, path, allow_incomplete, lambda obj: lines.get(id(obj)))


def _document(data, path, allow_incomplete: bool, line_of_object: Callable[[object], int | None],
              warn: bool = True) -> Experiment:
    if isinstance(data, list):
        if not all(isinstance(row, dict) for row in data):
            i = next(i for i, row in enumerate(data) if not isinstance(row, dict))
            raise InputError(f"the file is a JSON list, not an Extra-P experiment object ('parameters' and "
                             f"'measurements'); a list must hold JSON Lines rows ({{\"params\": {{...}}, "
                             f"\"value\": ...}}), but item {i + 1} is {_kind(data[i])}", path, line_of_object(data))
        columns = columns_from_rows(data, path, lambda i: line_of_object(data[i]), params_key="params")
        return finish(columns, path, allow_incomplete, lambda i: line_of_object(data[i]), warn=warn)
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {_kind(data)}", path, 1)
    if "params" in data:  # a JSON Lines file of one line
        columns = columns_from_rows([data], path, lambda i: 1, params_key="params")
        return finish(columns, path, allow_incomplete, lambda i: 1, warn=warn)
    if "callpaths" in data:
        columns, objects, declared = _legacy_columns(data, path, line_of_object)
    elif "measurements" in data and "parameters" in data:
        columns, objects = _new_columns(data, path, line_of_object)
        declared = None
    elif {"data", "columns", "nodes"} <= set(data):  # Caliper's json-split export (cali-query -O json-split)
        raise InputError("a Caliper JSON export, not an Extra-P document: read it with Hatchet or Thicket "
                         "(hatchet.GraphFrame.from_caliper, thicket.Thicket.from_caliper) and model that with "
                         "extrap_plugins.from_graphframes or from_thicket, or give the .cali files themselves",
                         path, 1)
    else:
        keys = (", ".join(map(shown, list(data)[:10])) + (f" and {len(data) - 10} more" if len(data) > 10 else "")
                or "none")
        raise InputError("neither an Extra-P JSON document ('parameters' and 'measurements') nor a JSON Lines row "
                         f"('params'); its keys are: {keys}", path, 1)
    return finish(columns, path, allow_incomplete, lambda i: line_of_object(objects[i]), declared=declared,
                  warn=warn)


def _new_columns(data: dict, path, line_of: Callable[[object], int | None]):
    """The newer schema: {"parameters": [names], "measurements": {callpath: {metric: [{"point", "values"}]}}}."""
    parameters = data["parameters"]
    if not isinstance(parameters, list) or not parameters or not all(isinstance(p, str) and p.strip()
                                                                     for p in parameters):
        raise InputError("'parameters' must be a non-empty list of parameter names", path, line_of(parameters))
    check_parameter_names(parameters, path, line_of(parameters))
    measurements = data["measurements"]
    if not isinstance(measurements, dict):
        raise InputError("'measurements' must be an object {call path: {metric: [...]}}, "
                         f"got {_kind(measurements)}",
                         path, line_of(measurements))
    entries, callpaths, metrics = [], [], []
    for callpath, by_metric in measurements.items():
        if not callpath.strip():
            raise InputError("a call path has an empty name", path, line_of(measurements))
        if not isinstance(by_metric, dict):
            raise InputError(f"call path {callpath!r}: expected an object {{metric: [...]}}, got {_kind(by_metric)}",
                             path, line_of(measurements))
        for metric, points in by_metric.items():
            if not metric.strip():
                raise InputError(f"call path {callpath!r}: a metric has an empty name", path, line_of(by_metric))
            if not isinstance(points, list):
                raise InputError(f"call path {callpath!r}, metric {metric!r}: expected a list of "
                                 f"{{\"point\": [...], \"values\": [...]}}, got {_kind(points)}",
                                 path, line_of(by_metric))
            entries.extend(points)
            callpaths.extend([callpath] * len(points))
            metrics.extend([metric] * len(points))
    if not entries:
        raise InputError("no measurements in this file", path, line_of(measurements))
    check_callpaths(measurements, path, lambda name: line_of(measurements), what="call path")
    n_params = len(parameters)
    for entry in entries:
        if not isinstance(entry, dict) or "point" not in entry or "values" not in entry:
            raise InputError("expected {\"point\": [...], \"values\": [...]} for every measurement", path,
                             line_of(entry) if isinstance(entry, (dict, list)) else line_of(measurements))
        # As in Extra-P, a number is the point of one parameter, or one repetition.
        entry["point"] = _listed(entry["point"], n_params == 1)
        entry["values"] = _listed(entry["values"], True)
        for key, what in (("point", "one number per parameter"), ("values", "numbers, one per repetition")):
            if not isinstance(entry[key], list):
                raise InputError(f"{key!r} must be a list of {what}, got {_kind(entry[key])}", path, line_of(entry))
    points = [e["point"] for e in entries]
    if not all(len(p) == n_params for p in points):
        i = next(i for i, p in enumerate(points) if len(p) != n_params)
        raise InputError(f"point {json.dumps(entries[i]['point'])} has {_count(len(points[i]), 'value')}, "
                         f"expected {n_params} "
                         f"({', '.join(parameters)})", path, line_of(entries[i]))
    values = [e["values"] for e in entries]
    counts = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    if (counts == 0).any():
        i = int(np.argmin(counts))
        raise InputError("'values' is empty", path, line_of(entries[i]))
    row_of = np.repeat(np.arange(len(entries)), counts)
    flat = [v for vs in values for v in vs]
    entry_line: LineOf = lambda i: line_of(entries[int(row_of[i])])  # noqa: E731
    value = json_to_float(flat, path, entry_line, "value", missing=True)
    point_columns = list(zip(*points))
    points = np.column_stack([
        json_to_float(column, path, lambda i: line_of(entries[i]), f"parameter {name!r}:")
        for column, name in zip(point_columns, parameters)
    ])
    callpath = factorize(callpaths)
    metric = factorize(metrics)
    check_points_once(parameters, callpath, metric, points, path, lambda i: line_of(entries[i]))
    coordinates = points[row_of]
    columns = dict(parameters=parameters, callpath=(callpath[0], callpath[1][row_of]),
                   metric=(metric[0], metric[1][row_of]), coordinates=coordinates, value=value,
                   row_of=np.arange(value.shape[0]))
    return columns, [entries[i] for i in row_of.tolist()]


def _listed(value, number_allowed: bool):
    """``[value]`` for a JSON number that stands for a list of one, else ``value``."""
    return [value] if number_allowed and type(value) in (int, float) else value


def _legacy_columns(data: dict, path, line_of: Callable[[object], int | None]):
    """The older schema: parameters, call paths, metrics and coordinates with ids; one value per measurement."""
    parameter_ids, parameters = _id_table(data, "parameters", path, line_of)
    callpath_ids, callpath_names = _id_table(data, "callpaths", path, line_of)
    metric_ids, metric_names = _id_table(data, "metrics", path, line_of)
    position = {pid: i for i, pid in enumerate(parameter_ids)}
    coordinate_list = _list(data, "coordinates", path, line_of)
    coordinate_ids, coordinate_rows = [], []
    for entry in coordinate_list:
        pairs = entry.get("parameter_value_pairs") if isinstance(entry, dict) else None
        if "id" not in (entry if isinstance(entry, dict) else {}) or not isinstance(pairs, list):
            raise InputError("a coordinate needs an 'id' and 'parameter_value_pairs'", path, line_of(entry))
        row = [None] * len(parameters)
        for pair in pairs:
            if not isinstance(pair, dict) or type(pair.get("parameter_id")) not in _ID_TYPES \
                    or pair["parameter_id"] not in position or "parameter_value" not in pair:
                raise InputError("a parameter-value pair needs a known 'parameter_id' and a 'parameter_value'",
                                 path, line_of(pair) if isinstance(pair, dict) else line_of(entry))
            row[position[pair["parameter_id"]]] = pair["parameter_value"]
        if any(v is None for v in row):
            missing = [parameters[i] for i, v in enumerate(row) if v is None]
            raise InputError(f"coordinate {entry['id']} has no value for {', '.join(map(repr, missing))}",
                             path, line_of(entry))
        coordinate_ids.append(entry["id"])
        coordinate_rows.append(row)
    _check_ids(coordinate_ids, coordinate_list, "coordinate", path, line_of)
    if not coordinate_rows:
        raise InputError("no coordinates in this file", path, line_of(coordinate_list))
    declared = np.column_stack([
        json_to_float(column, path, lambda i: line_of(coordinate_list[i]), f"parameter {name!r}:")
        for column, name in zip(zip(*coordinate_rows), parameters)
    ])
    _check_distinct_points(declared, coordinate_ids, parameters, path, lambda i: line_of(coordinate_list[i]))
    measurements = _list(data, "measurements", path, line_of)
    if not all(isinstance(m, dict) for m in measurements):
        raise InputError("every measurement must be an object", path, line_of(measurements))
    row_line: LineOf = lambda i: line_of(measurements[i])  # noqa: E731
    coordinate = _lookup(measurements, "coordinate_id", coordinate_ids, "coordinate", path, row_line)
    callpath = _lookup(measurements, "callpath_id", callpath_ids, "call path", path, row_line)
    metric = _lookup(measurements, "metric_id", metric_ids, "metric", path, row_line)
    values = [m.get("value", _MISSING) for m in measurements]
    if any(v is _MISSING for v in values):
        i = next(i for i, v in enumerate(values) if v is _MISSING)
        raise InputError("a measurement needs a 'value'", path, row_line(i))
    value = json_to_float(values, path, row_line, "value", missing=True)
    columns = dict(parameters=parameters, callpath=_used(callpath_names, callpath),
                   metric=_used(metric_names, metric), coordinates=declared[coordinate], value=value,
                   row_of=np.arange(len(measurements)))
    return columns, measurements, declared


def _list(data: dict, key: str, path, line_of) -> list:
    entries = data.get(key, _MISSING)
    if entries is _MISSING:
        raise InputError(f"no {key!r} list", path, 1)
    if not isinstance(entries, list):
        raise InputError(f"{key!r} must be a list, got {_kind(entries)}", path, line_of(data))
    return entries


def _id_table(data: dict, key: str, path, line_of) -> tuple[list, list[str]]:
    """[{"id": 1, "name": "x"}, ...] sorted by id: (ids, names)."""
    entries = _list(data, key, path, line_of)
    for entry in entries:
        if not isinstance(entry, dict) or "id" not in entry or not isinstance(entry.get("name"), str):
            raise InputError(f"every entry of {key!r} needs an 'id' and a 'name'", path,
                             line_of(entry) if isinstance(entry, dict) else line_of(entries))
    ids = [e["id"] for e in entries]
    what = key.rstrip("s").replace("callpath", "call path")
    _check_ids(ids, entries, what, path, line_of)
    try:
        order = sorted(range(len(entries)), key=lambda i: ids[i])
    except TypeError:
        raise InputError(f"the ids of {key!r} must be numbers", path, line_of(entries)) from None
    first: dict[str, object] = {}  # name -> its first id
    for i in order:
        name = entries[i]["name"]
        if not name.strip():
            raise InputError(f"{what} {ids[i]} has an empty name", path, line_of(entries[i]))
        if name in first:  # (Extra-P 4.2.5 fails with an IndexError)
            raise InputError(f"{what}s {first[name]} and {ids[i]} have the same name {name!r}", path,
                             line_of(entries[i]))
        first[name] = ids[i]
    if key == "callpaths":
        check_callpaths(first, path, lambda name: line_of(entries[ids.index(first[name])]), what="call path")
    return [ids[i] for i in order], [entries[i]["name"] for i in order]


def _check_distinct_points(declared: np.ndarray, ids: list, parameters: list[str], path, line_of: LineOf) -> None:
    """No two coordinates are the same point (Extra-P 4.2.5 fails with an IndexError; read, the measurements of
    the second would be repetitions at the first)."""
    _, first, inverse = np.unique(declared, axis=0, return_index=True, return_inverse=True)
    repeated = np.flatnonzero(first[inverse.reshape(-1)] != np.arange(declared.shape[0]))
    if repeated.size:
        i = int(repeated[0])
        j = int(first[inverse.reshape(-1)[i]])
        raise InputError(f"coordinates {ids[j]} and {ids[i]} are the same point "
                         f"{format_point(declared[i].tolist(), parameters, brackets=True)}", path, line_of(i))


def _check_ids(ids: list, entries: list, what: str, path, line_of) -> None:
    """Ids are numbers or strings, each used once."""
    for identifier, entry in zip(ids, entries):
        if type(identifier) not in _ID_TYPES:
            raise InputError(f"{what} id {json.dumps(identifier)} must be a number", path, line_of(entry))
    if len(set(map(repr, ids))) != len(ids):
        seen = set()
        for identifier, entry in zip(ids, entries):
            if repr(identifier) in seen:
                raise InputError(f"{what} id {identifier!r} is used twice", path, line_of(entry))
            seen.add(repr(identifier))


def _lookup(measurements: list[dict], key: str, ids: list, what: str, path, line_of: LineOf) -> np.ndarray:
    """Each measurement's ``key`` as an index into ``ids``, shape (n_measurements,)."""
    index = {identifier: i for i, identifier in enumerate(ids)}
    codes = [index.get(v, -1) if type(v) in _ID_TYPES else -1
             for v in map(operator.methodcaller("get", key), measurements)]
    codes = np.asarray(codes, dtype=np.int64)
    if (codes < 0).any():
        i = int(np.flatnonzero(codes < 0)[0])
        got = measurements[i].get(key, _MISSING)
        if got is _MISSING:
            raise InputError(f"a measurement needs a {key!r}", path, line_of(i))
        raise InputError(f"{key} {json.dumps(got)} names no {what}", path, line_of(i))
    return codes


def _used(names: list[str], codes: np.ndarray) -> tuple[list[str], np.ndarray]:
    """(names, codes) keeping only the names that occur, in the order of ``names``."""
    used = np.unique(codes)
    remap = np.full(len(names), -1, dtype=np.int32)
    remap[used] = np.arange(used.shape[0], dtype=np.int32)
    return [names[i] for i in used.tolist()], remap[codes]
