"""Parameters and repetitions from the names of Score-P experiment folders.

Score-P writes one folder per run; by Extra-P's convention its name holds the
application, the parameter values and the repetition::

    <prefix>.<name><value>[.]<name><value>...[.r<repetition>]
    mm.x25y10z1.r1        ->  x=25, y=10, z=1, repetition 1
    lulesh.p64.size25.r2  ->  p=64, size=25, repetition 2
    app.n1e6.ranks8       ->  n=1000000, ranks=8
    mm.x20,5.y20,5.z1,5   ->  x=20.5, y=20.5, z=1.5 (decimal commas)
    p=64_n=1000_rep3      ->  p=64, n=1000, repetition 3

Rules, in order:

* a trailing ``.r<digits>`` or ``.rep<digits>`` is the repetition (so ``.ranks8`` is a parameter), and so is
  ``_r<digits>``, ``-r<digits>``, ``_rep<digits>`` or ``-rep<digits>`` right after a value;
* the prefix is what a ``pattern`` says (a literal prefix, or else a regular
  expression matched at the start), else everything up to the first dot; when
  that leaves no valid pairs, the whole name is tried (``x10y1z1``,
  ``x22.5.y22.5``); a name without dots that is no pairs as a whole is tried
  after its first ``-`` or ``_`` (``scorep-p64-n1000``);
* the rest is a sequence of ``<name><number>`` pairs: a name is letters (then
  letters or underscores), a number has an optional sign, a decimal point or
  comma and an exponent (``1.5``, ``2,5``, ``1e6``, ``-3``), and may follow
  its name after ``=`` (``p=64``); pairs may be separated by ``.``, ``,``,
  ``_`` or ``-``.  A name directly followed by ``e<digits>`` after a number
  reads as an exponent (``n1e6`` is n = 10^6); a value beyond the
  floating-point range (``n1e400``) is an error.

A run folder may hold one folder per repetition instead of the profiles
(``app.p64/r1/profile.cubex``, ``app.p64/scorep-20240101_1200_123/...``):
:func:`repetition_folder` reads their numbers.

Anything else is an :class:`~extrap_plugins.errors.InputError` naming the
folder and what was expected; a mapping file (:func:`read_mapping`) takes the
values from a CSV instead when the folder names follow no convention.
"""

from __future__ import annotations

import csv
import math
import pathlib
import re
from dataclasses import dataclass, field

from extrap_plugins.errors import InputError

from ._common import read_text

CONVENTION = "<prefix>.<name><value>...[.r<repetition>], e.g. app.p64.size25.r1"
MAX_REPETITION = 2**31 - 1  # an Experiment's repetitions are int32
_REPETITION = re.compile(r"(?:\.|(?<=\d)[_-])r(?:ep)?(\d+)$")
_SCOREP_DEFAULT = re.compile(r"scorep-\d{8}_\d{4}_\d+")  # SCOREP_EXPERIMENT_DIRECTORY unset: scorep-YYYYMMDD_HHMM_ticks
_REPETITION_FOLDER = re.compile(r"(?:r|rep|run|repetition)?[_-]?(\d+)", re.IGNORECASE)
_NUMBER = r"[+-]?(?:\d+(?:[.,]\d+)?|[.,]\d+)(?:[eE][+-]?\d+)?"
_PAIR = re.compile(rf"(?P<name>[A-Za-z][A-Za-z_]*)=?(?P<value>{_NUMBER})(?:[.,_-](?=[A-Za-z])|[.,_-]?$|(?=[A-Za-z]))")


@dataclass(frozen=True)
class RunName:
    """What a folder name says about one run.

    Attributes
    ----------
    parameters : tuple of str, length n_params
    values : tuple of float, length n_params
    repetition : int or None
        The ``.r<N>`` number, None when the name has none.
    """

    parameters: tuple[str, ...]
    values: tuple[float, ...]
    repetition: int | None
    prefix: str = field(default="", repr=False, compare=False)
    """What comes before the parameters (``mm`` of ``mm.x25y10z1.r1``): the program, by Extra-P's convention; the
    pattern when one is given, "" when the whole name is parameters."""


def parse_run_name(name: str, pattern: str | None = None, where: str | None = None,
                   what: str = "folder name") -> RunName:
    """Read parameters and repetition from a run folder's name (or a profile's file name without ``.cubex``).

    Parameters
    ----------
    name : str
        The folder name, e.g. ``"mm.x25y10z1.r1"``.
    pattern : str, optional
        Where the parameters start: a literal prefix (``"my.app"``), or a
        regular expression matched at the start of the name.  A separator
        dot after it is skipped.
    where : str, optional
        The path to name in error messages (default: ``name``).
    what : str, optional
        What ``name`` is, for error messages: ``"folder name"`` (default) or
        ``"file name"`` (a ``.cubex`` file named after its run).

    Raises
    ------
    InputError
        The name holds no parameters, a malformed pair, or a name twice.

    Examples
    --------
    >>> parse_run_name("mm.x25y10z1.r1")
    RunName(parameters=('x', 'y', 'z'), values=(25.0, 10.0, 1.0), repetition=1)
    >>> parse_run_name("app.n1e6.ranks8").values
    (1000000.0, 8.0)
    """
    where = where or name
    repetition = None
    body = name
    found = _REPETITION.search(body)
    if found:
        repetition = int(found.group(1))
        body = body[: found.start()]
        if repetition > MAX_REPETITION:
            raise InputError(f"the repetition {found.group(0)} in the {what} {name!r} is not from 0 to "
                             f"{MAX_REPETITION}", where)
    if pattern is not None:
        candidates = [(pattern, _strip_pattern(body, pattern, where, what))]
    elif "." in body:
        candidates = [tuple(body.split(".", 1)), ("", body)]
    else:  # no dot: the whole name, else after a prefix ended by - or _ (scorep-p64-n1000)
        candidates = [("", body)] + [tuple(body.split(separator, 1)) for separator in "-_" if separator in body][:1]
    first_error = None
    for prefix, candidate in candidates:
        try:
            parameters, values = parse_pairs(candidate)
        except ValueError as error:
            first_error = first_error or error
            continue
        return RunName(parameters, values, repetition, prefix)
    note = f" (the trailing {found.group(0)} is read as the repetition)" if found else ""
    if is_scorep_default(name):
        first_error = "it is Score-P's default name, which holds no parameters (name each run's folder with " \
                      "SCOREP_EXPERIMENT_DIRECTORY=app.p64.r1)"
    raise InputError(
        f"cannot read parameters from the {what} {name!r}: {first_error}{note}; expected {CONVENTION} "
        f"(give --reader-option pattern=PREFIX when the prefix contains dots, or mapping=FILE.csv)",
        where,
    )


def is_scorep_default(name: str) -> bool:
    """Whether ``name`` is the folder name Score-P chooses without ``SCOREP_EXPERIMENT_DIRECTORY``.

    >>> is_scorep_default("scorep-20240312_1012_1234567890"), is_scorep_default("app.p64")
    (True, False)
    """
    return _SCOREP_DEFAULT.fullmatch(name) is not None


def repetition_folder(name: str) -> int | None:
    """The number of a folder that holds one repetition of a run (``r1``, ``rep2``, ``run_3``, ``4``), or None when
    its name is no such number (``scorep-20240101_1200_123``: the repetitions are then numbered in order).

    >>> repetition_folder("rep2"), repetition_folder("scorep-20240101_1200_123")
    (2, None)
    """
    found = _REPETITION_FOLDER.fullmatch(name)
    return int(found.group(1)) if found and int(found.group(1)) <= MAX_REPETITION else None


def parse_pairs(text: str) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Split ``"x25y10.z1,5"`` into names and values.

    Returns
    -------
    names : tuple of str
    values : tuple of float

    Raises
    ------
    ValueError
        With a message saying where the text stops making sense.
    """
    if not text:
        raise ValueError("no parameters after the prefix")
    names: list[str] = []
    values: list[float] = []
    position = 0
    while position < len(text):
        match = _PAIR.match(text, position)
        if match is None:
            rest = text[position:]
            raise ValueError(f"{rest!r} is not a <name><number> pair")
        name = match.group("name")
        if name in names:
            raise ValueError(f"the parameter {name!r} appears twice")
        value = float(match.group("value").replace(",", "."))
        if not math.isfinite(value):
            raise ValueError(f"the value {match.group('value')} of {name!r} is beyond the floating-point range")
        names.append(name)
        values.append(value)
        position = match.end()
    return tuple(names), tuple(values)


def _strip_pattern(body: str, pattern: str, where: str, what: str = "folder name") -> str:
    if body.startswith(pattern):
        rest = body[len(pattern):]
    else:
        try:
            match = re.match(pattern, body)
        except re.error as error:
            raise InputError(f"the pattern '{pattern}' is neither a prefix of {body!r} "
                             f"nor a valid regular expression ({error})", where) from None
        if match is None:
            raise InputError(f"the {what} {body!r} does not start with the pattern '{pattern}'", where)
        rest = body[match.end():]
    return rest[1:] if rest[:1] in (".", "_", "-") else rest


# ------------------------------------------------------------------ mapping
@dataclass(frozen=True)
class MappedRun:
    """One row of a mapping file: a profile and its parameter values."""

    path: pathlib.Path
    values: tuple[float, ...]
    repetition: int | None
    line: int


def read_mapping(mapping: pathlib.Path) -> tuple[tuple[str, ...], list[MappedRun]]:
    """Read a CSV that gives each run's parameters when folder names cannot.

    The header is ``path`` then one column per parameter, and optionally
    ``repetition``::

        path,p,n,repetition
        run_a/profile.cubex,4,1000,1
        run_b,8,1000,1

    A path is a ``.cubex`` file or a folder holding them, relative to the
    mapping file's folder.  Blank lines and lines starting with ``#`` are
    skipped.

    Returns
    -------
    parameters : tuple of str
    runs : list of MappedRun

    Raises
    ------
    InputError
        Naming the mapping file and line: a file that cannot be read or is not
        UTF-8, a missing ``path`` column, a value that is not a number, a row
        with the wrong number of fields.
    """
    text = read_text(mapping, hint="save the mapping file as UTF-8")
    rows = [(number, row) for number, row in enumerate(csv.reader(text.splitlines()), start=1)
            if row and any(cell.strip() for cell in row) and not row[0].lstrip().startswith("#")]
    if not rows:
        raise InputError("the mapping file is empty; expected a header such as path,p,n,repetition", mapping)
    header_line, header = rows[0]
    header = [cell.strip() for cell in header]
    if header[0].lower() != "path":
        raise InputError(f"the first column must be 'path', got {header[0]!r}; "
                         f"expected a header such as path,p,n,repetition", mapping, header_line)
    columns = header[1:]
    repetition_column = next((i for i, c in enumerate(columns) if c.lower() == "repetition"), None)
    parameters = tuple(c for i, c in enumerate(columns) if i != repetition_column)
    if not parameters:
        raise InputError("the mapping file names no parameter column after 'path'", mapping, header_line)
    duplicates = sorted({c for c in parameters if parameters.count(c) > 1})
    if duplicates:
        raise InputError(f"the parameter column {duplicates[0]!r} appears twice", mapping, header_line)
    runs = []
    for line, row in rows[1:]:
        cells = [cell.strip() for cell in row]
        if len(cells) != len(header):
            raise InputError(f"expected {len(header)} fields ({','.join(header)}), got {len(cells)}", mapping, line)
        numbers = []
        for column, cell in zip(columns, cells[1:]):
            number = _number(cell)
            if number is None or not math.isfinite(number):
                raise InputError(f"the {column} value {cell!r} is not a {'' if number is None else 'finite '}number",
                                 mapping, line)
            numbers.append(number)
        repetition = None
        if repetition_column is not None:
            value, cell = numbers.pop(repetition_column), cells[1 + repetition_column]
            if value != int(value):
                raise InputError(f"the repetition {cell!r} is not a whole number", mapping, line)
            if not 0 <= value <= MAX_REPETITION:
                raise InputError(f"the repetition {cell!r} is not from 0 to {MAX_REPETITION}", mapping, line)
            repetition = int(value)
        target = pathlib.Path(cells[0])
        if not target.is_absolute():
            target = mapping.parent / target
        runs.append(MappedRun(target, tuple(numbers), repetition, line))
    return parameters, runs


def _number(cell: str) -> float | None:
    """``"1.5"``, ``"1,5"`` (decimal comma) or ``"1e6"`` as a float; None if it is none of these."""
    for text in (cell, cell.replace(",", ".") if cell.count(",") == 1 and "." not in cell else None):
        if text is None:
            continue
        try:
            return float(text)
        except ValueError:
            pass
    return None
