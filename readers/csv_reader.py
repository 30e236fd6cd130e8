"""The ``csv`` reader: a tidy table, one measured value per row.

::

    p,n,callpath,metric,value
    4,100,main->solve,time,1.25
    4,100,main->solve,time,1.31
    8,100,main->solve,time,2.52

Columns (names matched case-insensitively): ``value`` (required),
``callpath`` (optional, default ``<root>``), ``metric`` (optional, default
``time``), ``repetition`` (optional, integers); every other column is a
numeric parameter, in the order of the header.  Rows with the same
parameters, call path and metric are repetitions.  The delimiter is ``,``,
or ``;`` or a tab when the header has no comma.  Quoted fields follow the
usual CSV rules.  Unlike Extra-P's formats, each series may be measured at
its own points.

As tables are written: a value cell that is empty (pandas writes NaN so),
``NA``, ``null`` or not a finite number is a missing value (one warning names
the lines); a line repeating the header (tables joined with ``cat``) is
skipped with a note; a delimiter ending every line makes no column; a
column without a name that holds values (pandas' index) is refused unless
``parameters=`` is given; a gzip-compressed file (``*.csv.gz``) is read.

Options (``--reader-option KEY=VALUE``) read other tables, such as a table of
statistics with name columns::

    mpi,variable,Ranks,N,mean,median,...
    IntelMPI,MPI_Barrier,32,1600,13.26,11.22,...

``value=median`` (or ``value=mean,median``: one metric per column, named
after it) chooses the value columns; ``parameters=Ranks`` the parameter
columns (the other columns are then ignored, and the experiment notes name
them); ``callpath=mpi,variable`` builds call paths from name columns joined
with ``->`` (``IntelMPI->MPI_Barrier``); ``metric=COL`` and
``repetition=COL`` name those columns; ``delimiter=;`` (or ``tab``) fixes the
delimiter; ``decimal=,`` reads decimal commas (``1,25;4``).  A single value
column chosen with ``value=`` names the metric unless a metric column is given.
"""

from __future__ import annotations

import csv
import io
import operator
import pathlib
import re
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from extrap_plugins.errors import InputError
from extrap_plugins.experiment import Experiment, row_codes
from extrap_plugins.formatting import format_point
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.options import is_number
from extrap_plugins.registration import ReaderInfo

from ._common import (
    DEFAULT_CALLPATH, DEFAULT_METRIC, EMPTY_FILE, NOT_FINITE, build, check_callpaths, check_line_ends,
    check_options, choice, head, read_text, some_listed, to_float, warn_missing,
)

NAME = "csv"
OPTIONS = {
    "value": "the value column, or several (comma-separated; each becomes a metric named after it); default: value",
    "parameters": "the parameter columns (comma-separated); default: every column not used otherwise",
    "callpath": "the call path column, or several joined with -> (comma-separated); default: callpath if present",
    "metric": "the metric column; default: metric if present",
    "repetition": "the repetition column (integers); default: repetition if present",
    "delimiter": "the field delimiter: , ; | or tab; default: , (or ; or tab when the header has no comma)",
    "decimal": "the decimal mark of the numbers: . (default) or , (a spreadsheet's CSV in many locales: 1,25;4)",
}
_DELIMITERS = {",": ",", ";": ";", "|": "|", "tab": "\t", "\\t": "\t", "\t": "\t"}


@hookimpl
def extrap_readers() -> list[ReaderInfo]:
    return [
        ReaderInfo(
            name=NAME,
            read=read,
            description="a tidy CSV table: parameter columns, value, optional callpath, metric and repetition",
            patterns=("*.csv", "*.tsv", "*.csv.gz", "*.tsv.gz"),
            sniff=sniff,
            options=OPTIONS,
        )
    ]


def sniff(path: pathlib.Path) -> bool:
    """A header line with a ``value`` column among delimited names."""
    first = head(path).split(b"\n", 1)[0].strip().lstrip(b"\xef\xbb\xbf").decode("utf-8", errors="replace")
    for delimiter in (",", ";", "\t"):
        names = [n.strip().strip('"').lower() for n in first.split(delimiter)]
        if len(names) >= 2 and "value" in names:
            return True
    return False


def read(path: pathlib.Path, options: dict[str, str]) -> Experiment:
    """Read a CSV table."""
    settings = check_options(options, OPTIONS, NAME)
    text = read_text(path)
    header_text, _, body = text.partition("\n")
    if not header_text.strip():
        if not text.strip():
            raise InputError(EMPTY_FILE, path)
        raise InputError("the first line (the header) is empty", path, 1)
    delimiter = _delimiter(settings, header_text, path)
    decimal = choice(settings, "decimal", (".", ","), ".")
    if decimal == delimiter:
        raise InputError(f"option decimal={decimal}: the delimiter is {decimal!r} too; choose another with "
                         "--reader-option delimiter=", path)
    header = _header(header_text, delimiter, path)
    roles = _roles(header, settings, path)
    columns = _Columns(roles, path, delimiter)
    for block in _blocks(body, header, header_text.rstrip(), delimiter, path):
        if decimal == ",":
            _decimal_points(block, roles)
        columns.add(block)
    return columns.experiment()


# ------------------------------------------------------------------ header
def _delimiter(settings: dict[str, str], header: str, path) -> str:
    if "delimiter" in settings:
        given = settings["delimiter"]
        if given.lower() not in _DELIMITERS and given not in _DELIMITERS:
            raise InputError(f"option delimiter={given!r}: expected one of , ; | tab", path)
        return _DELIMITERS.get(given, _DELIMITERS.get(given.lower()))
    if "," not in header:
        for candidate in (";", "\t"):
            if candidate in header:
                return candidate
    return ","


def _header(line: str, delimiter: str, path) -> list[str]:
    check_line_ends(line, path, "table")
    try:
        names = [name.strip() for name in next(csv.reader([line], delimiter=delimiter))]
    except csv.Error as error:
        raise InputError(f"the header cannot be read ({error})", path, 1) from None
    names = [name or unnamed(i) for i, name in enumerate(names)]
    lowered = [n.lower() for n in names]
    for name in names:
        if lowered.count(name.lower()) > 1:
            raise InputError(f"column {name!r} appears twice in the header", path, 1)
    return names


def unnamed(i: int) -> str:
    """The name of column ``i`` (0-based) when the header gives it none: a trailing delimiter (``p,value,``), or the
    index pandas writes (``to_csv`` without ``index=False``)."""
    return f"column {i + 1} (no name)"


def _is_unnamed(name: str) -> bool:
    return name.startswith("column ") and name.endswith(" (no name)")


@dataclass
class _Roles:
    """Which columns hold what."""

    parameters: list[str]
    values: list[str]
    callpath: list[str]
    metric: str | None
    repetition: str | None
    ignored: list[str]
    metric_from_value: bool
    parameters_chosen: bool
    unnamed: list[str]  # columns without a name that must be empty in every row (trailing delimiters)


def _roles(header: list[str], settings: dict[str, str], path) -> _Roles:
    named = [h for h in header if not _is_unnamed(h)]

    def find(name: str, option: str | None) -> str:
        if name in named:
            return name
        matches = [h for h in named if h.lower() == name.lower()]
        if len(matches) == 1:
            return matches[0]
        given = f" (option {option}=)" if option else ""
        raise InputError(f"no column {name!r}{given}; the columns are: {', '.join(named)}", path, 1)

    def listed(option: str) -> list[str]:
        names = [n.strip() for n in settings[option].split(",") if n.strip()]
        if not names:
            raise InputError(f"option {option}= names no column", path)
        return [find(n, option) for n in names]

    def default(name: str) -> str | None:
        matches = [h for h in named if h.lower() == name]
        return matches[0] if matches else None

    if "value" in settings:
        values = listed("value")
    elif default("value"):
        values = [default("value")]
    else:
        raise InputError(
            f"no 'value' column; the columns are: {', '.join(named)}. Name the value column(s) with "
            "--reader-option value=COL[,COL...] and the parameter columns with --reader-option parameters=COL[,...] "
            "(for example: value=median parameters=Ranks callpath=mpi,variable)", path, 1)
    callpath = listed("callpath") if "callpath" in settings else [c for c in [default("callpath")] if c]
    metric = listed("metric")[0] if "metric" in settings else default("metric")
    if "metric" in settings and len(listed("metric")) > 1:
        raise InputError("option metric= takes one column", path)
    repetition = listed("repetition")[0] if "repetition" in settings else default("repetition")
    if len(values) > 1 and metric is not None:
        raise InputError(f"several value columns ({', '.join(values)}) name the metrics themselves; "
                         f"drop the metric column {metric!r} (option metric=) or choose one value column", path)
    used = values + callpath + ([metric] if metric else []) + ([repetition] if repetition else [])
    for name in set(used):
        if used.count(name) > 1:
            raise InputError(f"column {name!r} cannot have two roles (value, callpath, metric, repetition)", path)
    if "parameters" in settings:
        parameters = listed("parameters")
        clash = [p for p in parameters if p in used]
        if clash:
            raise InputError(f"column {clash[0]!r} cannot be a parameter and a value, call path, metric or "
                             "repetition column", path)
    else:
        parameters = [h for h in named if h not in used]
    if not parameters:
        raise InputError(f"no parameter column (the columns are: {', '.join(named)}); add one, such as p, "
                         "or choose them with --reader-option parameters=COL[,COL...]", path, 1)
    chosen = "parameters" in settings
    ignored = [h for h in header if h not in used and h not in parameters and (chosen or not _is_unnamed(h))]
    return _Roles(parameters, values, callpath, metric, repetition, ignored,
                  metric_from_value=metric is None and (len(values) > 1 or "value" in settings),
                  parameters_chosen=chosen, unnamed=[h for h in header if _is_unnamed(h) and h not in ignored])


# ------------------------------------------------------------------ blocks
@dataclass
class _Block:
    """Some consecutive rows: one list of strings per header column, and the file line of every row."""

    columns: dict[str, list[str]]
    lines: np.ndarray  # int64, shape (n_rows,)
    headers: list[int]  # the lines among these that repeat the header (tables joined with cat), skipped

    def line_of(self, row: int) -> int:
        return int(self.lines[row])


BLOCK = 1 << 22  # characters per block on the fast path
QUOTED_BLOCK = 50_000  # rows per block on the quoted path


def _blocks(body: str, header: list[str], header_line: str, delimiter: str, path) -> Iterator[_Block]:
    """The rows below the header in blocks of about 4 MB, so that only one block's strings live at a time.

    Split on the delimiter when nothing is quoted (fast); otherwise read with the csv module.  Blank lines and
    lines that repeat the header (tables of several runs joined with ``cat``) are not rows.
    """
    if '"' in body:
        yield from _quoted_blocks(body, header, delimiter, path)
        return
    expected, start, line = len(header) - 1, 0, 2
    while start < len(body):
        end = body.find("\n", start + BLOCK)
        end = len(body) if end < 0 else end + 1
        piece = body[start:end]
        if "\r" in piece:  # \r\n line ends: the \r is not part of the last cell
            piece = piece.replace("\r\n", "\n")
        lines = piece.split("\n")
        rows = list(filter(None, lines))
        if any(map(str.isspace, rows)):
            rows = [text for text in rows if not text.isspace()]
        if len(rows) == piece.count("\n") + (not piece.endswith("\n")):  # no blank lines
            numbers = np.arange(line, line + len(rows), dtype=np.int64)
        else:
            numbers = np.asarray([line + i for i, text in enumerate(lines) if text and not text.isspace()],
                                 dtype=np.int64)
        headers = []
        if header_line in piece:  # a header again (tables joined with cat): look for it row by row
            rows, numbers, headers = _without_headers(rows, numbers, header_line)
        if rows and set(map(operator.methodcaller("count", delimiter), rows)) != {expected}:
            i = next(i for i, text in enumerate(rows) if text.count(delimiter) != expected)
            raise _fields_error(rows[i].split(delimiter), header, delimiter, path, int(numbers[i]))
        if rows or headers:
            flat = delimiter.join(rows).split(delimiter) if rows else []
            yield _Block({name: flat[j::len(header)] for j, name in enumerate(header)}, numbers, headers)
        line += piece.count("\n")
        start = end


def _decimal_points(block: _Block, roles: _Roles) -> None:
    """Decimal commas become points in the number columns (parameters, values, repetition)."""
    numbers = roles.parameters + roles.values + ([roles.repetition] if roles.repetition else [])
    for name in numbers:
        block.columns[name] = list(map(operator.methodcaller("replace", ",", "."), block.columns[name]))


def _without_headers(rows: list[str], numbers: np.ndarray, header_line: str):
    """``rows`` and their ``numbers`` without the lines that repeat the header line, and the lines of those."""
    found = [i for i, text in enumerate(rows) if text.lstrip("\ufeff").rstrip() == header_line]
    if not found:
        return rows, numbers, []
    keep = np.ones(len(rows), dtype=bool)
    keep[found] = False
    return [text for text, k in zip(rows, keep.tolist()) if k], numbers[keep], numbers[found].tolist()


def _is_header(cells: list[str], header: list[str]) -> bool:
    """Whether a row's cells repeat the header's names (unnamed columns empty, a byte-order mark before them)."""
    cells = [cells[0].lstrip("\ufeff").strip('"')] + [c.strip('"') for c in cells[1:]]
    return len(cells) == len(header) and all(c == h or (not c and _is_unnamed(h)) for c, h in zip(cells, header))


def _fields_error(cells: list[str], header: list[str], delimiter: str, path, line: int) -> InputError:
    """A row with another number of fields than the header has names."""
    message = f"{len(cells)} fields, expected {len(header)} ({', '.join(header)})"
    if len(cells) == len(header) + 1 and not cells[-1].strip():
        message += (f"; the line ends with the delimiter {delimiter!r}: end the header line with it too, "
                    "or drop it from the rows")
    return InputError(message, path, line)


def _quoted_blocks(body: str, header: list[str], delimiter: str, path) -> Iterator[_Block]:
    reader = csv.reader(io.StringIO(body), delimiter=delimiter)
    rows: list[list[str]] = []
    numbers: list[int] = []
    headers: list[int] = []
    start = 2  # the line where the next row starts (the header is line 1)
    try:
        for row in reader:
            line, start = start, reader.line_num + 2
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if _is_header([cell.strip() for cell in row], header):
                headers.append(line)
                continue
            if len(row) != len(header):
                raise _fields_error(row, header, delimiter, path, line)
            rows.append(row)
            numbers.append(line)
            if len(rows) == QUOTED_BLOCK:
                yield _Block({name: [r[j] for r in rows] for j, name in enumerate(header)},
                             np.asarray(numbers, dtype=np.int64), headers)
                rows, numbers, headers = [], [], []
    except csv.Error as error:
        raise InputError(f"cannot read the row: {error}", path, start) from None
    if rows or headers:
        yield _Block({name: [r[j] for r in rows] for j, name in enumerate(header)},
                     np.asarray(numbers, dtype=np.int64), headers)


# -------------------------------------------------------------- experiment
class _Columns:
    """The experiment's columns, converted block by block; names are coded into dictionaries shared by all blocks."""

    def __init__(self, roles: _Roles, path, delimiter: str = ","):
        self.roles = roles
        self.path = path
        self.delimiter = delimiter
        self.headers: list[int] = []  # lines that repeat the header, skipped
        self.missing_cells = False  # whether a value cell was empty or NA (MISSING_CELLS)
        self.callpaths: dict[str, int] = {}
        self.metrics: dict[str, int] = {}
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in ("coordinates", "values", "callpath", "metric",
                                                                   "repetition", "lines")}

    def add(self, block: _Block) -> None:
        roles, path, cols = self.roles, self.path, block.columns
        self.headers.extend(block.headers)
        if not block.lines.shape[0]:
            return
        for name in roles.unnamed:
            _check_empty(name, cols[name], path, block.line_of)
        try:
            coordinates = np.column_stack([to_float(cols[p], path, block.line_of, f"column {p!r}:")
                                           for p in roles.parameters])
        except InputError as error:
            if roles.parameters_chosen:
                raise
            used = ", ".join(roles.values + roles.callpath + [c for c in (roles.metric, roles.repetition) if c])
            raise InputError(f"{error.message}; every column but {used} is a numeric parameter: choose the "
                             "parameter columns with --reader-option parameters=COL[,COL...] (and "
                             "callpath=COL[,COL...] for name columns)", error.path, error.line) from None
        self.parts["coordinates"].append(coordinates)
        values = [_measured(cols[v], v, path, block.line_of, self.delimiter) for v in roles.values]
        self.parts["values"].append(np.column_stack([value for value, _ in values]))
        self.missing_cells = self.missing_cells or any(marked for _, marked in values)
        self.parts["callpath"].append(self._codes(block, roles.callpath, DEFAULT_CALLPATH, self.callpaths))
        if not roles.metric_from_value:
            self.parts["metric"].append(self._codes(block, [roles.metric] if roles.metric else [], DEFAULT_METRIC,
                                                    self.metrics))
        if roles.repetition:
            repetition = to_float(cols[roles.repetition], path, block.line_of, f"column {roles.repetition!r}:")
            bad = (repetition != np.round(repetition)) | (repetition < 0) | (repetition >= 2**31)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise InputError(f"column {roles.repetition!r}: {cols[roles.repetition][i].strip()!r} is not a "
                                 "repetition number (0, 1, 2, ...)", path, block.line_of(i))
            self.parts["repetition"].append(repetition.astype(np.int64))
        self.parts["lines"].append(block.lines)

    def _codes(self, block: _Block, columns: list[str], default: str, index: dict[str, int]) -> np.ndarray:
        """Codes of a name column (several joined with ``->``), shape (n_rows,)."""
        n = block.lines.shape[0]
        if not columns:
            index.setdefault(default, 0)
            return np.zeros(n, dtype=np.int32)
        parts = [[cell.strip() for cell in block.columns[c]] for c in columns]
        for c, part in zip(columns, parts):
            if "" in part:
                raise InputError(f"column {c!r} is empty", self.path, block.line_of(part.index("")))
        joined = parts[0] if len(parts) == 1 else ["->".join(names) for names in zip(*parts)]
        new = [name for name in dict.fromkeys(joined) if name not in index]
        if index is self.callpaths:
            what = repr(columns[0]) if len(columns) == 1 else "call path"
            check_callpaths(new, self.path, lambda name: block.line_of(joined.index(name)), what)
        for name in new:
            index.setdefault(name, len(index))
        return np.fromiter(map(index.__getitem__, joined), dtype=np.int32, count=n)

    def experiment(self) -> Experiment:
        roles, parts = self.roles, self.parts
        if not parts["lines"]:
            raise InputError("no rows below the header", self.path)
        k = len(roles.values)
        lines = np.concatenate(parts["lines"])
        n = lines.shape[0]
        value = np.concatenate(parts["values"]).T.reshape(-1)  # all rows of value column 1, then column 2, ...
        coordinates = np.tile(np.concatenate(parts["coordinates"]), (k, 1))
        callpath = (list(self.callpaths), np.tile(np.concatenate(parts["callpath"]), k))
        if roles.metric_from_value:
            metric = (list(roles.values), np.repeat(np.arange(k, dtype=np.int32), n))
        else:
            metric = (list(self.metrics), np.tile(np.concatenate(parts["metric"]), k))
        repetition = np.tile(np.concatenate(parts["repetition"]), k) if roles.repetition else None
        if repetition is not None:
            _check_repetitions(roles, callpath, metric, coordinates, repetition, lambda i: int(lines[i % n]),
                               self.path)
        notes = [f"ignored columns: {', '.join(roles.ignored)}"] if roles.ignored else []
        if self.headers:
            notes.append(f"skipped {some_listed(self.headers, 'line', 5)}: the header again")
        experiment = build(roles.parameters, _single(callpath), _single(metric), coordinates, value, self.path,
                           NAME, repetition=repetition, notes=notes)
        warn_missing(experiment, self.path, lambda i: int(lines[i % n]),
                     why=MISSING if self.missing_cells else NOT_FINITE)
        return experiment


#: What a value cell may hold for a value not measured (lower case, stripped), besides what is not a finite number:
#: empty (pandas' ``to_csv`` writes NaN so; a loop's ``echo "$p,$t"`` when the run failed), NA (R), null, None.
MISSING_CELLS = frozenset({"", "na", "n/a", "#n/a", "null", "none"})
#: How :func:`~._common.warn_missing` names the missing values of a table.
MISSING = f"empty, NA, {NOT_FINITE}"
_DECIMAL_COMMA = re.compile(r"\s*[-+]?[0-9]+,[0-9]+(?:[eE][-+]?[0-9]+)?\s*")


def _measured(cells: list[str], name: str, path, line_of, delimiter: str) -> tuple[np.ndarray, bool]:
    """A value column as float64: the :data:`MISSING_CELLS` and numbers that are not finite are NaN (missing); and
    whether there was a missing cell."""
    what = f"column {name!r}:"
    try:
        return to_float(cells, path, line_of, what, missing=True), False
    except InputError:
        pass
    marked = ["nan" if cell.strip().lower() in MISSING_CELLS else cell for cell in cells]
    try:
        return to_float(marked, path, line_of, what, missing=True), True
    except InputError as error:
        bad = next(cell for cell, mark in zip(cells, marked) if mark != "nan" and not is_number(cell))
        raise InputError(f"{error.message}{_number_hint(bad, delimiter)}", error.path, error.line) from None


def _number_hint(cell: str, delimiter: str) -> str:
    """How to write what a value cell meant: a decimal comma, a thousands separator, a mark for a missing value."""
    if _DECIMAL_COMMA.fullmatch(cell) and delimiter != ",":
        return " (a decimal comma? --reader-option decimal=, reads it)"
    if _DECIMAL_COMMA.fullmatch(cell):
        return " (a thousands separator? write numbers without them)"
    if not any(map(str.isdigit, cell)):  # a mark such as -, ?, failed
        return " (a value not measured is written empty, NA or nan: it is left out as missing)"
    return ""


def _check_empty(name: str, cells: list[str], path, line_of) -> None:
    """A column without a name holds nothing (a delimiter at the end of every line); else it is refused."""
    if not "".join(cells).strip():
        return
    i = next(i for i, cell in enumerate(cells) if cell.strip())
    number = name.split()[1]
    pandas = " (pandas' to_csv writes its index so: index=False leaves it out)" if number == "1" else ""
    raise InputError(f"column {number} has no name in the header, yet holds {cells[i].strip()!r}{pandas}: name it "
                     "in the header, or choose the parameter columns with --reader-option parameters=COL[,COL...] "
                     "(the other columns are then ignored)", path, line_of(i))


def _single(column: tuple[list[str], np.ndarray]):
    return column[0][0] if len(column[0]) == 1 else column


def _check_repetitions(roles: _Roles, callpath, metric, coordinates, repetition, line_of, path) -> None:
    """No two rows may give the same call path, metric, point and repetition."""
    keys = np.column_stack([callpath[1], metric[1], coordinates, repetition]).astype(np.float64)
    _, cell = row_codes(keys)
    counts = np.bincount(cell)
    if (counts > 1).any():
        rows = np.flatnonzero(counts[cell] > 1)
        first, second = int(rows[0]), int(rows[np.flatnonzero(cell[rows] == cell[rows[0]])[1]])
        raise InputError(
            f"call path {callpath[0][callpath[1][first]]!r}, metric {metric[0][metric[1][first]]!r}, point "
            f"{format_point(coordinates[first], roles.parameters, brackets=True)} "
            f"has repetition {int(repetition[first])} twice "
            f"(also on line {line_of(first)})", path, line_of(second))
