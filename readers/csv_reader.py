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
delimiter.  A single value column chosen with ``value=`` names the metric
unless a metric column is given.
"""

from __future__ import annotations

import csv
import io
import pathlib
from dataclasses import dataclass

import numpy as np

from extrap_plugins.errors import InputError
from extrap_plugins.experiment import Experiment, row_codes
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.registration import ReaderInfo

from ._common import (
    DEFAULT_CALLPATH, DEFAULT_METRIC, build, check_options, factorize, format_point, head, read_text, to_float,
)

NAME = "csv"
OPTIONS = {
    "value": "the value column, or several (comma-separated; each becomes a metric named after it); default: value",
    "parameters": "the parameter columns (comma-separated); default: every column not used otherwise",
    "callpath": "the call path column, or several joined with -> (comma-separated); default: callpath if present",
    "metric": "the metric column; default: metric if present",
    "repetition": "the repetition column (integers); default: repetition if present",
    "delimiter": "the field delimiter: , ; | or tab; default: , (or ; or tab when the header has no comma)",
}
_DELIMITERS = {",": ",", ";": ";", "|": "|", "tab": "\t", "\\t": "\t", "\t": "\t"}


@hookimpl
def extrap_readers() -> list[ReaderInfo]:
    return [
        ReaderInfo(
            name=NAME,
            read=read,
            description="a tidy CSV table: parameter columns, value, optional callpath, metric and repetition",
            patterns=("*.csv", "*.tsv"),
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
        raise InputError("the file is empty" if not text.strip() else "the first line (the header) is empty", path, 1)
    delimiter = _delimiter(settings, header_text, path)
    header = _header(header_text, delimiter, path)
    roles = _roles(header, settings, path)
    table = _Table.parse(body, header, delimiter, path)
    return _experiment(table, roles, path)


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
    names = [name.strip() for name in next(csv.reader([line], delimiter=delimiter))]
    for i, name in enumerate(names):
        if not name:
            raise InputError(f"column {i + 1} has no name in the header", path, 1)
    lowered = [n.lower() for n in names]
    for name in names:
        if lowered.count(name.lower()) > 1:
            raise InputError(f"column {name!r} appears twice in the header", path, 1)
    return names


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


def _roles(header: list[str], settings: dict[str, str], path) -> _Roles:
    def find(name: str, option: str | None) -> str:
        if name in header:
            return name
        matches = [h for h in header if h.lower() == name.lower()]
        if len(matches) == 1:
            return matches[0]
        given = f" (option {option}=)" if option else ""
        raise InputError(f"no column {name!r}{given}; the columns are: {', '.join(header)}", path, 1)

    def listed(option: str) -> list[str]:
        names = [n.strip() for n in settings[option].split(",") if n.strip()]
        if not names:
            raise InputError(f"option {option}= names no column", path)
        return [find(n, option) for n in names]

    def default(name: str) -> str | None:
        matches = [h for h in header if h.lower() == name]
        return matches[0] if matches else None

    if "value" in settings:
        values = listed("value")
    elif default("value"):
        values = [default("value")]
    else:
        raise InputError(
            f"no 'value' column; the columns are: {', '.join(header)}. Name the value column(s) with "
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
        parameters = [h for h in header if h not in used]
    if not parameters:
        raise InputError(f"no parameter column: every column but {', '.join(used)} is a parameter; "
                         "add one (for example p) or choose them with --reader-option parameters=COL[,COL...]", path, 1)
    ignored = [h for h in header if h not in used and h not in parameters]
    return _Roles(parameters, values, callpath, metric, repetition, ignored,
                  metric_from_value=metric is None and (len(values) > 1 or "value" in settings),
                  parameters_chosen="parameters" in settings)


# ------------------------------------------------------------------- table
@dataclass
class _Table:
    """The body as columns of strings, one list per header column, and the line of every row."""

    columns: dict[str, list[str]]
    n_rows: int
    lines: list[str] | None  # the body's lines (fast path), for line numbers on error
    row_lines: list[int] | None  # the line of every row (quoted path)

    @classmethod
    def parse(cls, body: str, header: list[str], delimiter: str, path) -> _Table:
        """Split on the delimiter when nothing is quoted (fast); otherwise with the csv module."""
        if '"' in body:
            return cls._quoted(body, header, delimiter, path)
        lines = body.split("\n")
        rows = [line for line in lines if line and not line.isspace()]
        expected = len(header) - 1
        if not all(line.count(delimiter) == expected for line in rows):
            table = cls({}, len(rows), lines, None)
            i = next(i for i, line in enumerate(rows) if line.count(delimiter) != expected)
            found = rows[i].count(delimiter) + 1
            raise InputError(f"{found} fields, expected {len(header)} ({', '.join(header)})", path, table.line_of(i))
        flat = delimiter.join(rows).split(delimiter)
        columns = {name: flat[j::len(header)] for j, name in enumerate(header)}
        return cls(columns, len(rows), lines, None)

    @classmethod
    def _quoted(cls, body: str, header: list[str], delimiter: str, path) -> _Table:
        reader = csv.reader(io.StringIO(body), delimiter=delimiter)
        rows, row_lines = [], []
        try:
            for row in reader:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) != len(header):
                    raise InputError(f"{len(row)} fields, expected {len(header)} ({', '.join(header)})",
                                     path, reader.line_num + 1)
                rows.append(row)
                row_lines.append(reader.line_num + 1)
        except csv.Error as error:
            raise InputError(f"cannot read the row: {error}", path, reader.line_num + 1) from None
        columns = {name: [row[j] for row in rows] for j, name in enumerate(header)}
        return cls(columns, len(rows), None, row_lines)

    def line_of(self, row: int) -> int:
        """The 1-based file line of data row ``row`` (the header is line 1)."""
        if self.row_lines is None:
            assert self.lines is not None
            self.row_lines = [i + 2 for i, line in enumerate(self.lines) if line and not line.isspace()]
        return self.row_lines[row]


# -------------------------------------------------------------- experiment
def _experiment(table: _Table, roles: _Roles, path) -> Experiment:
    if table.n_rows == 0:
        raise InputError("no rows below the header", path)
    cols = table.columns
    try:
        coordinates = np.column_stack([to_float(cols[p], path, table.line_of, f"column {p!r}:")
                                       for p in roles.parameters])
    except InputError as error:
        if roles.parameters_chosen:
            raise
        used = ", ".join(roles.values + roles.callpath + [c for c in (roles.metric, roles.repetition) if c])
        raise InputError(f"{error.message}; every column but {used} is a numeric parameter: choose the parameter "
                         "columns with --reader-option parameters=COL[,COL...] (and callpath=COL[,COL...] for "
                         "name columns)", error.path, error.line) from None
    values = [to_float(cols[v], path, table.line_of, f"column {v!r}:") for v in roles.values]
    k = len(values)
    callpath = _names(cols, roles.callpath, DEFAULT_CALLPATH, table, path)
    if roles.metric_from_value:
        metric = (list(roles.values), np.repeat(np.arange(k, dtype=np.int32), table.n_rows))
    else:
        metric = _names(cols, [roles.metric] if roles.metric else [], DEFAULT_METRIC, table, path)
        metric = (metric[0], np.tile(metric[1], k))
    repetition = None
    if roles.repetition:
        repetition = to_float(cols[roles.repetition], path, table.line_of, f"column {roles.repetition!r}:")
        if (repetition != np.round(repetition)).any() or (repetition < 0).any():
            i = int(np.flatnonzero((repetition != np.round(repetition)) | (repetition < 0))[0])
            raise InputError(f"column {roles.repetition!r}: {cols[roles.repetition][i].strip()!r} is not a "
                             "repetition number (0, 1, 2, ...)", path, table.line_of(i))
        repetition = np.tile(repetition.astype(np.int64), k)
    coordinates = np.tile(coordinates, (k, 1))
    callpath = (callpath[0], np.tile(callpath[1], k))
    value = np.concatenate(values)
    if repetition is not None:
        _check_repetitions(roles, callpath, metric, coordinates, repetition, table, path)
    notes = [f"ignored columns: {', '.join(roles.ignored)}"] if roles.ignored else []
    return build(roles.parameters, _single(callpath), _single(metric), coordinates, value, path, NAME,
                 repetition=repetition, notes=notes)


def _names(cols: dict[str, list[str]], columns: list[str], default: str, table: _Table, path):
    """A name column (several joined with ``->``), factorised: (names, codes of shape (n_rows,))."""
    if not columns:
        return [default], np.zeros(table.n_rows, dtype=np.int32)
    parts = [[cell.strip() for cell in cols[c]] for c in columns]
    for c, part in zip(columns, parts):
        if not all(part):
            i = part.index("")
            raise InputError(f"column {c!r} is empty", path, table.line_of(i))
    joined = parts[0] if len(parts) == 1 else ["->".join(names) for names in zip(*parts)]
    return factorize(joined)


def _single(column: tuple[list[str], np.ndarray]):
    return column[0][0] if len(column[0]) == 1 else column


def _check_repetitions(roles: _Roles, callpath, metric, coordinates, repetition, table: _Table, path) -> None:
    """No two rows may give the same call path, metric, point and repetition."""
    keys = np.column_stack([callpath[1], metric[1], coordinates, repetition]).astype(np.float64)
    _, cell = row_codes(keys)
    counts = np.bincount(cell)
    if (counts > 1).any():
        rows = np.flatnonzero(counts[cell] > 1)
        first, second = int(rows[0]), int(rows[np.flatnonzero(cell[rows] == cell[rows[0]])[1]])
        n = table.n_rows
        raise InputError(
            f"call path {callpath[0][callpath[1][first]]!r}, metric {metric[0][metric[1][first]]!r}, point "
            f"{format_point(roles.parameters, coordinates[first])} has repetition {int(repetition[first])} twice "
            f"(also on line {table.line_of(first % n)})", path, table.line_of(second % n))
