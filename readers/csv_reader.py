"""The ``csv`` reader: a tidy table, one measured value per row.

::

    p,n,callpath,metric,value
    4,100,main->solve,time,1.25
    4,100,main->solve,time,1.31
    8,100,main->solve,time,2.52

Columns (names matched case-insensitively): ``value`` (required),
``callpath`` (optional, default ``<root>``), ``metric`` (optional, default
``time``), ``repetition`` (optional, integers; or ``rep``, ``run``,
``trial``, with a note); every other column is a numeric parameter, in the
order of the header.  Rows with the same parameters, call path and metric
are repetitions.  The delimiter is ``,``, or ``;`` or a tab where the header
has more of them outside quotes.  Quoted fields follow the usual CSV rules.
Unlike Extra-P's formats, each series may be measured at its own points.

As tables are written: a value cell that is empty (pandas writes NaN so),
``NA``, ``null`` or not a finite number is a missing value (one warning names
the lines); a line repeating the header (tables joined with ``cat``) is
skipped with a note; a delimiter ending every line makes no column; a
column without a name that holds values (pandas' index) is refused unless
``parameters=`` is given; a gzip-compressed file (``*.csv.gz``) is read.
A line starting with ``#`` is a comment (numpy's ``savetxt`` header, ``# p,value``
above the numbers, is the header); a line of empty cells (``;;``) is blank; an
Excel ``sep=;`` line above the header sets the delimiter.

One column per repetition (``p,time_rep1,time_rep2``): without a ``value``
column, or among the columns ``value=`` names, two or more columns of one name
and a number are the repetitions of one metric named after them
(``time_rep1``, ``time_r2``, ``time run 3``, ``time.1``, ``time_1``; pandas'
``time,time.1``; ``run1,run2`` name none, so ``time`` or the metric column);
``L1,L2`` and ``timer1,timer2`` (no separator before the number) stay apart.

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
    DEFAULT_CALLPATH, DEFAULT_METRIC, EMPTY_FILE, NOT_FINITE, build, check_callpaths,
    check_options, choice, first_content_line, head, listed_names, read_text, shown, some_listed, to_float,
    universal_newlines,
    warn_missing,
)

NAME = "csv"
OPTIONS = {
    "value": "the value column, or several (comma-separated; each becomes a metric named after it, repetition "
             "columns such as time_rep1,time_rep2 one metric); default: value, else the repetition columns",
    "parameters": "the parameter columns (comma-separated); default: every column not used otherwise",
    "callpath": "the call path column, or several joined with -> (comma-separated); default: callpath if present",
    "metric": "the metric column; default: metric if present",
    "repetition": "the repetition column (integers); default: repetition if present",
    "delimiter": "the field delimiter: , ; | or tab; default: the one of , ; tab the header has most of",
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
    """A header line with a ``value`` column among delimited names (below any comment lines)."""
    first = first_content_line(head(path), b"#").decode("utf-8", errors="replace")
    for delimiter in (",", ";", "\t"):
        names = [n.strip().strip('"').lower() for n in first.split(delimiter)]
        if len(names) >= 2 and "value" in names:
            return True
    return False


def read(path: pathlib.Path, options: dict[str, str]) -> Experiment:
    """Read a CSV table."""
    settings = check_options(options, OPTIONS, NAME)
    text = universal_newlines(read_text(path, hint="save the table as UTF-8 (a spreadsheet's \"CSV UTF-8\")"))
    if not text.strip():
        raise InputError(EMPTY_FILE, path)
    header_text, line, body, first, declared = _locate_header(text, path)
    if declared and "delimiter" not in settings:
        settings["delimiter"] = declared
    delimiter = _delimiter(settings, header_text, path)
    decimal = choice(settings, "decimal", (".", ","), ".")
    if decimal == delimiter and '"' not in body:  # quoted, a decimal comma is no delimiter (Google Sheets)
        raise InputError(f"option decimal={decimal}: the delimiter is {decimal!r} too; choose another with "
                         "--reader-option delimiter=", path)
    header = _header(header_text, delimiter, path, line)
    roles = _roles(header, settings, path, line)
    columns = _Columns(roles, path, delimiter)
    again = {header_text.strip()} | ({f"sep={declared}".strip()} if declared else set())  # (and Excel's sep= line)
    for block in _blocks(body, header, again, delimiter, path, first):
        written = _decimal_points(block, roles, path) if decimal == "," else None
        try:
            columns.add(block)
        except InputError:
            if written is None:
                raise
            columns.add(_as_written(block, written))  # the same error, quoting the cell as the file has it
            raise
    return columns.experiment()


# ------------------------------------------------------------------ header
#: A comment line: ``#`` first (``# generated by ...`` above a table, a job script's notes between its rows).
_COMMENT = re.compile(r"^[ \t]*#[^\n]*", re.MULTILINE)
_BLANK_LINES = re.compile(r"(?:[ \t\r\f\v]*\n)*")
#: The first line of a table for Excel that declares its delimiter: ``sep=;``.
_EXCEL_SEP = re.compile(r"\s*sep=([,;|\t])\s*")


def _locate_header(text: str, path) -> tuple[str, int, str, int, str | None]:
    """The header line's text and number, the text below it and the number of its first line, and the delimiter
    an Excel ``sep=;`` line above the header declares (or None).

    Comment lines (:data:`_COMMENT`) become blank lines, so that every line keeps its number; the header is the
    first line that is not blank.  numpy's ``savetxt`` writes the header as a comment (``# p,value``): a comment
    line just above a first line of numbers is the header.
    """
    blanked = _COMMENT.sub("", text) if "#" in text else text
    start = _BLANK_LINES.match(blanked).end()
    declared = _EXCEL_SEP.fullmatch(blanked[start:].partition("\n")[0])
    if declared:  # the header is below it
        end = blanked.find("\n", start)
        start = len(blanked) if end < 0 else _BLANK_LINES.match(blanked, end + 1).end()
    if start == len(blanked):
        raise InputError("no header: every line is a comment or blank", path)
    line = blanked.count("\n", 0, start) + 1
    header, _, body = blanked[start:].partition("\n")
    delimiter = declared[1] if declared else None
    above = [(number, content.strip()) for number, content in enumerate(text.split("\n", line - 1)[:line - 1], 1)
             if content.strip()]  # the lines above that are not blank: comments, or sep=
    numbers = [cell for cell in re.split("[,;\t]", header) if cell.strip()]
    if above and above[-1][1].startswith("#") and numbers and all(map(is_number, numbers)):
        return above[-1][1][1:].strip(), above[-1][0], blanked[start:], line, delimiter
    return header, line, body, line + 1, delimiter


def _delimiter(settings: dict[str, str], header: str, path) -> str:
    """The option's delimiter, else the one of ``,``, ``;`` and tab the header has most of outside its quotes (a
    comma on a tie, and where it has none): a comma in a name (``p<tab>n, ranks``, ``p;"time, s"``) is no
    delimiter."""
    if "delimiter" in settings:
        given = settings["delimiter"]
        if given.lower() not in _DELIMITERS and given not in _DELIMITERS:
            raise InputError(f"option delimiter={given!r}: expected one of , ; | tab", path)
        return _DELIMITERS.get(given, _DELIMITERS.get(given.lower()))
    unquoted = re.sub(r'"[^"]*"', "", header)
    return max((",", ";", "\t"), key=unquoted.count)


def _header(text: str, delimiter: str, path, line: int) -> list[str]:
    """The column names of the header ``text`` (on file line ``line``)."""
    try:
        names = [name.strip() for name in next(csv.reader([text], delimiter=delimiter))]
    except csv.Error as error:
        raise InputError(f"the header cannot be read ({error})", path, line) from None
    names = [name or unnamed(i) for i, name in enumerate(names)]
    lowered = [n.lower() for n in names]
    for name in names:
        if lowered.count(name.lower()) > 1:
            raise InputError(f"column {name!r} appears twice in the header", path, line)
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
    metric_of: list[str]  # the metric of each value column: its name, or the one its repetition columns share
    notes: list[str]  # which columns are repetitions of one metric


#: A column of one repetition in a wide table: ``time_rep1``, ``time.r2``, ``runtime [s] run 3``, ``Run1`` (no
#: metric named), ``time.1`` or ``time_1`` (pandas numbers a header's second ``time`` so).  Without a separator
#: the number is part of the name (``L1``, ``timer2``).
_REPETITION_COLUMN = re.compile(r"(?:(?P<stem>.+?)[ ._-]+)?(?:rep|repetition|run|r|trial)[ ._-]*[0-9]+"
                                r"|(?P<name>.+?)[._][0-9]+", re.IGNORECASE)


#: The names of a repetition column besides ``repetition``, as the repetition columns of a wide table are named.
_REPETITION_NAMES = ("rep", "run", "trial")


def _repetition_by_name(named: list[str], settings: dict[str, str], taken: list) -> tuple[str | None, list[str]]:
    """A column named as :data:`_REPETITION_NAMES` says, and a note on it; none where the parameters are chosen or
    it is ``taken`` otherwise."""
    found = [h for name in _REPETITION_NAMES for h in named if h.lower() == name and h not in taken]
    if not found or "parameters" in settings:
        return None, []
    return found[0], [f"column {found[0]!r} numbers the repetitions; to model it as a parameter, name the parameters "
                      "with --reader-option parameters=COL[,COL...]"]


def _example(named: list[str], roles: list) -> str:
    """The options for a table without a ``value`` column, for the message: of its own columns where it has few
    (the last the value, the rest parameters), else those of Extra-P's ``mpi_data.csv``."""
    others = [h for h in named[:-1] if h not in roles]
    if len(named) <= 4 and others:
        return f"for example: value={named[-1]} parameters={','.join(others)}"
    return "Extra-P's mpi_data.csv, for example, is read with value=median parameters=Ranks callpath=mpi,variable"


def _repetition_columns(names: list[str]) -> dict[str, list[str]]:
    """The columns among ``names`` that hold repetitions of one metric, by the metric's name ("" when they name
    none, as ``run1,run2``): two or more of one name, numbered as :data:`_REPETITION_COLUMN` says, and the
    column pandas leaves unnumbered before its ``time.1``: ``time``."""
    groups: dict[str, list[str]] = {}
    for name in names:
        match = _REPETITION_COLUMN.fullmatch(name)
        if match:
            groups.setdefault(match["stem"] or match["name"] or "", []).append(name)
    for stem, columns in groups.items():
        if stem in names and all(c.startswith(stem + ".") for c in columns):
            columns.insert(0, stem)
    return {stem: columns for stem, columns in groups.items() if len(columns) > 1}


def _repetitions(groups: dict[str, list[str]], metric: str | None, repetition: str | None, path, line: int):
    """For the repetition columns of :func:`_repetition_columns`: the metric of each (by column), and a note on
    each group.  A repetition column besides them is refused: a value would have two repetition numbers."""
    metric_of = {column: stem or DEFAULT_METRIC for stem, columns in groups.items() for column in columns}
    notes = [f"columns {', '.join(columns)} are repetitions of "
             + (stem or DEFAULT_METRIC if metric is None else f"the metric in column {metric!r}")
             for stem, columns in groups.items()]
    if groups and repetition:
        raise InputError(f"{notes[0]}, and column {repetition!r} numbers the repetitions too: keep one of the two",
                         path, line)
    return metric_of, notes


def _roles(header: list[str], settings: dict[str, str], path, line: int) -> _Roles:
    """The role of each column of ``header`` (the file's line ``line``)."""
    named = [h for h in header if not _is_unnamed(h)]

    def find(name: str, option: str | None) -> str:
        if name in named:
            return name
        matches = [h for h in named if h.lower() == name.lower()]
        if len(matches) == 1:
            return matches[0]
        given = f" (option {option}=)" if option else ""
        raise InputError(f"no column {name!r}{given}; the columns are: {listed_names(named)}", path, line)

    def listed(option: str) -> list[str]:
        names = [n.strip() for n in settings[option].split(",") if n.strip()]
        if not names:
            raise InputError(f"option {option}= names no column", path)
        return [find(n, option) for n in names]

    def default(name: str) -> str | None:
        matches = [h for h in named if h.lower() == name]
        return matches[0] if matches else None

    callpath = listed("callpath") if "callpath" in settings else [c for c in [default("callpath")] if c]
    metric = listed("metric")[0] if "metric" in settings else default("metric")
    if "metric" in settings and len(listed("metric")) > 1:
        raise InputError("option metric= takes one column", path)
    repetition = listed("repetition")[0] if "repetition" in settings else default("repetition")
    if "value" in settings:
        values = listed("value")
        groups = _repetition_columns(values)
    elif default("value"):
        values, groups = [default("value")], {}
    else:
        groups = _repetition_columns([h for h in named if h not in callpath + [metric, repetition]])
        values = [h for h in named if any(h in columns for columns in groups.values())]
    repetition, notes = (repetition, []) if repetition or groups else _repetition_by_name(
        named, settings, values + callpath + [metric])
    if not values:
        raise InputError(
            f"no 'value' column; the columns are: {listed_names(named)}. Name the value column(s) with "
            "--reader-option value=COL[,COL...] and the parameter columns with --reader-option parameters=COL[,...] "
            f"({_example(named, callpath + [metric, repetition])})", path, line)
    metric_of, groups_notes = _repetitions(groups, metric, repetition, path, line)
    notes += groups_notes
    if len({metric_of.get(v, v) for v in values}) > 1 and metric is not None:
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
        raise InputError(f"no parameter column (the columns are: {listed_names(named)}); add one, such as p, "
                         "or choose them with --reader-option parameters=COL[,COL...]", path, line)
    chosen = "parameters" in settings
    ignored = [h for h in header if h not in used and h not in parameters and (chosen or not _is_unnamed(h))]
    return _Roles(parameters, values, callpath, metric, repetition, ignored,
                  metric_from_value=metric is None and (len(values) > 1 or "value" in settings),
                  parameters_chosen=chosen, unnamed=[h for h in header if _is_unnamed(h) and h not in ignored],
                  metric_of=[metric_of.get(v, v) for v in values], notes=notes)


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


def _blocks(body: str, header: list[str], again: set[str], delimiter: str, path, line: int) -> Iterator[_Block]:
    """The rows below the header (``body``, from file line ``line``) in blocks of about 4 MB, so that only one
    block's strings live at a time.

    Split on the delimiter when nothing is quoted (fast); otherwise read with the csv module.  Blank lines, lines
    of empty cells (a spreadsheet's ``;;``) and lines that repeat the header (tables of several runs joined with
    ``cat``: the lines ``again`` holds, stripped, the header's and the Excel ``sep=;`` line's above it) are not rows.
    """
    if '"' in body:
        yield from _quoted_blocks(body, header, again, delimiter, path, line)
        return
    expected, start = len(header) - 1, 0
    empty = delimiter * expected  # how a line of empty cells starts

    def is_row(text: str) -> bool:
        return bool(text.replace(delimiter, "").strip())

    while start < len(body):
        end = body.find("\n", start + BLOCK)
        end = len(body) if end < 0 else end + 1
        piece = body[start:end]
        if "\r" in piece:  # \r\n line ends: the \r is not part of the last cell
            piece = piece.replace("\r\n", "\n")
        lines = piece.split("\n")
        rows = list(filter(None, lines))
        if any(map(str.isspace, rows)) or piece.startswith(empty) or "\n" + empty in piece:
            rows = list(filter(is_row, rows))
        if len(rows) == piece.count("\n") + (not piece.endswith("\n")):  # no blank lines
            numbers = np.arange(line, line + len(rows), dtype=np.int64)
        else:
            numbers = np.asarray([line + i for i, text in enumerate(lines) if is_row(text)], dtype=np.int64)
        headers = []
        if any(text in piece for text in again):  # a header again (tables joined with cat): look row by row
            rows, numbers, headers = _without_headers(rows, numbers, again)
        if rows and set(map(operator.methodcaller("count", delimiter), rows)) != {expected}:
            i = next(i for i, text in enumerate(rows) if text.count(delimiter) != expected)
            raise _fields_error(rows[i].split(delimiter), header, delimiter, path, int(numbers[i]))
        if rows or headers:
            flat = delimiter.join(rows).split(delimiter) if rows else []
            yield _Block({name: flat[j::len(header)] for j, name in enumerate(header)}, numbers, headers)
        line += piece.count("\n")
        start = end


def _decimal_points(block: _Block, roles: _Roles, path) -> dict[str, list[str]]:
    """Decimal commas become points in the number columns (parameters, values, repetition); returns those columns'
    cells as written.  A cell whose points group thousands is refused: where the decimal mark is a comma,
    ``1.000`` is one thousand, not 1.0."""
    numbers = roles.parameters + roles.values + ([roles.repetition] if roles.repetition else [])
    written = {name: block.columns[name] for name in numbers}
    for name, cells in written.items():
        if "." in "".join(cells):
            for i, cell in enumerate(cells):
                if _THOUSANDS_POINT.fullmatch(cell):
                    raise InputError(f"column {name!r}: {cell!r} is not a number where the decimal mark is a comma "
                                     "(a thousands separator? write numbers without them)", path, block.line_of(i))
        block.columns[name] = list(map(operator.methodcaller("replace", ",", "."), cells))
    return written


def _as_written(block: _Block, written: dict[str, list[str]]) -> _Block:
    """``block`` with the cells that are no numbers, even with a decimal point, as ``written`` (for the message)."""
    for name, cells in written.items():
        block.columns[name] = [point if is_number(point) else cell for point, cell in zip(block.columns[name], cells)]
    return block


def _without_headers(rows: list[str], numbers: np.ndarray, again: set[str]):
    """``rows`` and their ``numbers`` without the lines that repeat the header (``again``), and the lines of those."""
    found = [i for i, text in enumerate(rows) if text.lstrip("\ufeff").strip() in again]
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
    message = f"{len(cells)} fields, expected {len(header)} ({listed_names(header)})"
    if len(cells) == len(header) + 1 and not cells[-1].strip():
        message += (f"; the line ends with the delimiter {delimiter!r}: end the header line with it too, "
                    "or drop it from the rows")
    return InputError(message, path, line)


def _quoted_blocks(body: str, header: list[str], again: set[str], delimiter: str, path,
                   first: int) -> Iterator[_Block]:
    reader = csv.reader(io.StringIO(body), delimiter=delimiter)
    rows: list[list[str]] = []
    numbers: list[int] = []
    headers: list[int] = []
    start = first  # the line where the next row starts
    try:
        for row in reader:
            line, start = start, reader.line_num + first
            if not "".join(row).strip():  # a blank line, or one of empty cells
                continue
            cells = [cell.strip() for cell in row]
            if _is_header(cells, header) or delimiter.join(cells).lstrip("\ufeff").strip() in again:
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
        coordinates = np.column_stack([self._parameter(block, p) for p in roles.parameters])
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
                raise InputError(f"column {roles.repetition!r}: {shown(cols[roles.repetition][i].strip())} is not a "
                                 "repetition number (0, 1, 2, ...)", path, block.line_of(i))
            self.parts["repetition"].append(repetition.astype(np.int64))
        self.parts["lines"].append(block.lines)

    def _parameter(self, block: _Block, name: str) -> np.ndarray:
        """A parameter column as float64.  A cell that is no number gets the hint that fits it: how to write a
        number (a decimal comma), or, for a name, how to choose the parameter columns."""
        roles, cells = self.roles, block.columns[name]
        try:
            return to_float(cells, self.path, block.line_of, f"column {name!r}:")
        except InputError as error:
            cell = cells[int(np.flatnonzero(block.lines == error.line)[0])]
            hint = _number_hint(cell, self.delimiter) if any(map(str.isdigit, cell)) else ""
            if roles.parameters_chosen or hint:
                raise InputError(f"{error.message}{hint}", error.path, error.line) from None
            used = ", ".join(roles.values + roles.callpath + [c for c in (roles.metric, roles.repetition) if c])
            raise InputError(f"{error.message}; every column but {used} is a numeric parameter: choose the "
                             "parameter columns with --reader-option parameters=COL[,COL...] (and "
                             "callpath=COL[,COL...] for name columns)", error.path, error.line) from None

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
            names = list(dict.fromkeys(roles.metric_of))
            metric = (names, np.repeat(np.asarray([names.index(m) for m in roles.metric_of], dtype=np.int32), n))
        else:
            metric = (list(self.metrics), np.tile(np.concatenate(parts["metric"]), k))
        repetition = np.tile(np.concatenate(parts["repetition"]), k) if roles.repetition else None
        if repetition is not None:
            _check_repetitions(roles, callpath, metric, coordinates, repetition, lambda i: int(lines[i % n]),
                               self.path)
        notes = roles.notes + ([f"ignored columns: {', '.join(roles.ignored)}"] if roles.ignored else [])
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
_THOUSANDS = re.compile(r"\s*[-+]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?\s*")
#: A number whose points group thousands, where the decimal mark is a comma: ``1.000``, ``1.234,5``.
_THOUSANDS_POINT = re.compile(r"\s*[-+]?[1-9][0-9]{0,2}(?:\.[0-9]{3})+(?:,[0-9]*)?\s*")  # (0.125 groups nothing)


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
    """How to write what a value cell meant: a decimal comma, a thousands separator, a mark for a missing value.

    ``1,500`` is either in a comma-delimited table (Google Sheets quotes a decimal comma there); with ``;`` or a tab
    as the delimiter, a decimal comma (the spreadsheets of those locales).
    """
    decimal = _DECIMAL_COMMA.fullmatch(cell)
    if _THOUSANDS.fullmatch(cell) and decimal and delimiter == ",":
        return (" (a thousands separator, or a decimal comma? write numbers without thousands separators; "
                "--reader-option decimal=, reads decimal commas)")
    if _THOUSANDS.fullmatch(cell) and not decimal:
        return " (a thousands separator? write numbers without them)"
    if decimal:
        return " (a decimal comma? --reader-option decimal=, reads it)"
    if not any(map(str.isdigit, cell)):  # a mark such as -, ?, failed
        return " (a value not measured is written empty, NA or nan: it is left out as missing)"
    return ""


def _check_empty(name: str, cells: list[str], path, line_of) -> None:
    """A column without a name holds nothing (a delimiter at the end of every line); else it is refused."""
    if not "".join(cells).strip():
        return
    i = next(i for i, cell in enumerate(cells) if cell.strip())
    number = name.split()[1]
    pandas = (" (pandas' to_csv writes its index so: index=False leaves it out; R's write.csv its row names: "
              "row.names=FALSE)" if number == "1" else "")
    raise InputError(f"column {number} has no name in the header, yet holds {shown(cells[i].strip())}{pandas}: name it "
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
