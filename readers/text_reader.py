"""The ``text`` reader: Extra-P's text input format.

One keyword per line, ``#`` starts a comment line::

    PARAMETER p
    PARAMETER n                      # or both at once: PARAMETER p n
    POINTS ( 4 100 ) ( 8 100 )       # one or more points per line
    POINTS ( 16 100 )
    REGION main->solve               # a call path; spaces allowed
    METRIC time
    DATA 1.25 1.31 1.27              # one line per point, in POINTS order; one value per repetition
    DATA 2.51 2.49
    DATA 5.02 5.10 4.98

With one parameter, points may also be written without parentheses
(``POINTS 4 8 16``).  A ``METRIC`` holds until the next one and a ``REGION``
until the next one; each ``REGION``/``METRIC`` line starts a new block of
``DATA`` lines, which must give every point exactly once.  Without a
``METRIC`` line the metric is ``time``; ``DATA`` before any ``REGION`` belongs
to the call path ``<root>``.  On ``PARAMETER``, ``POINTS`` and ``DATA`` lines a
``#`` also starts a comment (region and metric names may contain ``#``).
Lines end in ``\\n``, ``\\r\\n`` or, as Extra-P reads them, ``\\r`` alone.
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass, field

import numpy as np

from extrap_plugins.errors import InputError
from extrap_plugins.experiment import Experiment
from extrap_plugins.formatting import format_point
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.registration import ReaderInfo

from ._common import (
    DEFAULT_CALLPATH, DEFAULT_METRIC, EMPTY_FILE, build, check_callpaths, check_options, cut, factorize,
    first_content_line, head_readings, is_blank, read_text, shown, to_float, universal_newlines, warn_missing,
)

NAME = "text"
OPTIONS: dict[str, str] = {}
KEYWORDS = ("PARAMETER", "POINTS", "REGION", "METRIC", "DATA")
_SNIFF = re.compile(r"^(PARAMETER|POINTS|REGION|METRIC|DATA)(\s|$)")
_GROUPS = re.compile(r"\s*(?:\([^()]*\)\s*)+")
_GROUP = re.compile(r"\(([^()]*)\)")


@hookimpl
def extrap_readers() -> list[ReaderInfo]:
    return [
        ReaderInfo(
            name=NAME,
            read=read,
            description="Extra-P's text format (PARAMETER, POINTS, REGION, METRIC, DATA lines)",
            patterns=("*.txt",),
            sniff=sniff,
            options=OPTIONS,
        )
    ]


def sniff(path: pathlib.Path) -> bool:
    """The first line that is neither blank nor a comment starts with one of the keywords (in UTF-16 without its
    byte-order mark too: :func:`~._common.read_text` then says what the file is); or an empty ``*.txt`` (this
    reader says it is empty, rather than no reader recognising it)."""
    if pathlib.Path(path).suffix.lower() == ".txt" and is_blank(path):
        return True
    return any(_SNIFF.match(first_content_line(data, comment=b"#").decode("utf-8", "replace"))
               for data in head_readings(path))


def read(path: pathlib.Path, options: dict[str, str]) -> Experiment:
    """Read an Extra-P text file."""
    check_options(options, OPTIONS, NAME)
    parser = _Parser(path)
    text = universal_newlines(read_text(path))
    if not text.strip():
        raise InputError(EMPTY_FILE, path)
    for number, line in enumerate(text.split("\n"), start=1):
        parser.feed(number, line)
    return parser.experiment()


@dataclass
class _Block:
    """The DATA lines of one REGION/METRIC pair."""

    callpath: str
    metric: str
    first_line: int
    last_line: int = 0
    count: int = 0


@dataclass
class _Parser:
    """Reads the lines in order; DATA values are kept as text and converted at the end, all at once."""

    path: pathlib.Path
    parameters: list[str] = field(default_factory=list)
    parameter_lines: dict[str, int] = field(default_factory=dict)
    points: list[tuple[str, ...]] = field(default_factory=list)
    point_lines: dict[tuple[float, ...], int] = field(default_factory=dict)
    region: str | None = None
    metric: str | None = None
    block: _Block | None = None
    blocks: list[_Block] = field(default_factory=list)
    seen: dict[tuple[str, str], _Block] = field(default_factory=dict)
    tokens: list[str] = field(default_factory=list)
    data_lines: list[int] = field(default_factory=list)
    data_counts: list[int] = field(default_factory=list)
    data_points: list[int] = field(default_factory=list)
    data_blocks: list[int] = field(default_factory=list)

    def error(self, message: str, line: int) -> InputError:
        return InputError(message, self.path, line)

    # ------------------------------------------------------------- lines
    def feed(self, number: int, line: str) -> None:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            return
        keyword, *more = stripped.split(None, 1)  # any white space, a tab or a no-break space too, as in Extra-P
        rest = more[0] if more else ""
        if keyword not in KEYWORDS:
            raise self.error(f"unknown keyword {shown(keyword)}; a line starts with PARAMETER, POINTS, REGION, METRIC "
                             "or DATA (or # for a comment)", number)
        if keyword in ("PARAMETER", "POINTS", "DATA"):
            rest = rest.split("#", 1)[0]
        getattr(self, "_" + keyword.lower())(number, rest)

    def _parameter(self, number: int, rest: str) -> None:
        names = rest.split()
        if not names:
            raise self.error("PARAMETER without a name", number)
        if self.points:
            raise self.error("PARAMETER after POINTS; declare every parameter before the points", number)
        for name in names:
            if name in self.parameter_lines:
                raise self.error(f"parameter {name!r} is declared twice (first on line {self.parameter_lines[name]})",
                                 number)
            self.parameter_lines[name] = number
            self.parameters.append(name)

    def _points(self, number: int, rest: str) -> None:
        n = len(self.parameters)
        if n == 0:
            raise self.error("POINTS before any PARAMETER line; declare the parameters first (PARAMETER p)", number)
        if self.blocks:
            raise self.error("POINTS after DATA lines; give every point before the data", number)
        if "(" in rest or ")" in rest:
            if not _GROUPS.fullmatch(rest):
                raise self.error(f"cannot read the points {shown(rest.strip())}: write each point as ( v1 ... v{n} )"
                                 if n > 1 else f"cannot read the points {shown(rest.strip())}: write ( v ) ( v ) ...",
                                 number)
            groups = [g.split() for g in _GROUP.findall(rest)]
        else:
            values = rest.split()
            if n > 1 and values:
                raise self.error(f"POINTS without parentheses give one value per point, but there are {n} parameters "
                                 f"({', '.join(self.parameters)}); write each point as ( v1 ... v{n} )", number)
            groups = [[v] for v in values]
        if not groups:
            raise self.error("POINTS without a point", number)
        for group in groups:
            if len(group) != n:
                raise self.error(f"point ( {cut(' '.join(group))} ) has {len(group)} value{'s' * (len(group) != 1)}, "
                                 f"expected {n} ({', '.join(self.parameters)})", number)
        coordinates = to_float([v for g in groups for v in g], self.path, lambda i: number, "POINTS value")
        for point in map(tuple, coordinates.reshape(-1, n).tolist()):
            if point in self.point_lines:
                raise self.error(f"point {format_point(point, self.parameters, brackets=True)} is listed twice "
                                 f"(first on line {self.point_lines[point]})", number)
            self.point_lines[point] = number
            self.points.append(point)

    def _region(self, number: int, rest: str) -> None:
        self.region = self._name("REGION", number, rest)
        check_callpaths([self.region], self.path, lambda name: number, what="REGION")
        self._close()

    def _metric(self, number: int, rest: str) -> None:
        self.metric = self._name("METRIC", number, rest)
        self._close()

    def _name(self, keyword: str, number: int, rest: str) -> str:
        name = " ".join(rest.split())
        if not name:
            raise self.error(f"{keyword} without a name", number)
        return name

    def _data(self, number: int, rest: str) -> None:
        if not self.points:
            raise self.error("DATA before any POINTS line" if self.parameters
                             else "DATA before any PARAMETER and POINTS lines", number)
        values = rest.split()
        if not values:
            raise self.error("DATA line without values", number)
        if self.block is None:
            key = (self.region or DEFAULT_CALLPATH, self.metric or DEFAULT_METRIC)
            if key in self.seen:
                raise self.error(f"call path {key[0]!r}, metric {key[1]!r} already has DATA lines "
                                 f"(from line {self.seen[key].first_line}); give each REGION and METRIC pair once",
                                 number)
            self.block = _Block(key[0], key[1], number)
            self.seen[key] = self.block
            self.blocks.append(self.block)
        block = self.block
        if block.count == len(self.points):
            raise self.error(f"call path {block.callpath!r}, metric {block.metric!r} has more DATA lines than the "
                             f"{len(self.points)} points (its DATA lines start on line {block.first_line})", number)
        self.data_points.append(block.count)
        self.data_blocks.append(len(self.blocks) - 1)
        block.count += 1
        block.last_line = number
        self.tokens.extend(values)
        self.data_lines.append(number)
        self.data_counts.append(len(values))

    def _close(self) -> None:
        """End the current block of DATA lines: it must have one line per point."""
        block, self.block = self.block, None
        if block is not None and block.count < len(self.points):
            lines = (f"{block.count} DATA line (line {block.first_line})" if block.count == 1 else
                     f"{block.count} DATA lines (lines {block.first_line}-{block.last_line})")
            raise self.error(f"call path {block.callpath!r}, metric {block.metric!r} has {lines}, "
                             f"expected {len(self.points)}, one per point", block.first_line)

    # ------------------------------------------------------------ result
    def experiment(self) -> Experiment:
        self._close()
        if not self.parameters:
            raise InputError("no PARAMETER line; is this an Extra-P text file?", self.path)
        if not self.blocks:
            raise InputError("no DATA lines" if self.points else "no POINTS and no DATA lines", self.path)
        counts = np.asarray(self.data_counts, dtype=np.int64)
        token_lines = np.repeat(np.asarray(self.data_lines), counts)
        value = to_float(self.tokens, self.path, lambda i: int(token_lines[i]), "DATA value", missing=True)
        points = np.asarray(self.points, dtype=np.float64).reshape(-1, len(self.parameters))
        coordinates = points[np.repeat(np.asarray(self.data_points), counts)]
        block_of_value = np.repeat(np.asarray(self.data_blocks), counts)
        callpath_names, callpath_of_block = factorize([b.callpath for b in self.blocks])
        metric_names, metric_of_block = factorize([b.metric for b in self.blocks])
        experiment = build(self.parameters, (callpath_names, callpath_of_block[block_of_value]),
                           (metric_names, metric_of_block[block_of_value]), coordinates, value, self.path, NAME)
        warn_missing(experiment, self.path, lambda i: int(token_lines[i]))
        return experiment
