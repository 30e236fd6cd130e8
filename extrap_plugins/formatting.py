"""Numbers, exponents, points and call paths as text and JSON: one set of rules for every output.

========================  ==========================================================
:func:`format_number`     a coefficient: exact for machines, 4 digits for people
:func:`format_value`      a coordinate or option value: ``4``, ``0.5``, ``1e+20``
:func:`format_exponent`   ``2``, ``(1/2)``, ``1.37``: exponents in formulas and big-O
:func:`format_point`      ``p=4, n=100`` (``(p=4, n=100)`` with ``brackets=True``)
:func:`format_count`      ``1 run``, ``3 runs``: a count with its noun
:func:`did_you_mean`      the end of an unknown name's message: ``did you mean 'time'?``
:func:`describe_inputs`   the inputs of a command as one string: ``a, b`` for a list
:func:`format_percent`    a share the user gave (a tolerance): ``5%``, ``2.5%``, ``0.1%``
:func:`format_bytes`      a size: ``2 GiB``, ``1 PiB``, ``1.5e+09 bytes``
:func:`format_warned`     one warning of many series: ``a [t] and b [t]``, ``a [t] and 9 more series``
:func:`warning_texts`     what models warn of: one text per cause naming its series
:func:`warning_lines`     the same in a text report: ``warnings:`` and a line each
:func:`reading_lines`     what reading warned of, in a text report: ``warnings on reading:`` and a line each
:func:`reading_items`     the same as one row of an HTML report's summary
:func:`note_lines`        what the reader noted, in a text report: ``notes on reading:`` and a line each
:func:`note_items`        the same as one row of an HTML report's summary
:func:`format_callpath`   a long call path for people: ``main->…->solve->MPI_Wait [time]``
:func:`format_callpaths`  many call paths for people, each told from the others
:func:`callpath_labels`   the same as a mapping: whole name -> what people read
:func:`json_number`       NaN and infinity become ``null`` (JSON has neither)
:func:`json_plain`        whole numbers as JSON integers, others as floats
:func:`printable`         control characters as escapes: ``a\\tb`` (one line, nothing sent to the terminal)
:func:`text_table`        an aligned table for people (wide characters take two columns)
:func:`described`         a value as a message names it: ``the int 42``, ``an Experiment``
========================  ==========================================================

Every module that writes numbers for people or machines calls these, so the
same exponent or point never reads two ways in two outputs.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Mapping, Sequence

__all__ = ["format_number", "format_value", "format_share", "format_percent", "format_bytes", "format_exponent",
           "format_point", "did_you_mean", "format_count", "describe_inputs", "format_warned", "warning_texts",
           "warning_lines", "WARNINGS_LISTED", "format_callpath", "format_callpaths", "callpath_labels",
           "reading_lines", "reading_items", "note_lines", "note_items", "json_number", "json_plain", "printable",
           "text_table", "described", "shortened_repr"]

CALLPATH_SEPARATOR = "->"
"""Between the regions of a call path written as text (``main->solve``)."""
CALLPATH_WIDTH = 100
"""A call path (with its `` [metric]``) longer than this is shortened in what people read (:func:`format_callpath`):
a C++ template's region names run to thousands of characters."""

WARNED_NAMED = 3
"""A warning of this many series or fewer names every one (:func:`format_warned`); of more, the first and a count."""

REGION_WIDTH = 40
"""A region that :func:`format_callpaths` keeps to tell call paths apart is shortened to this, and their last region
at most to this."""

EXACT_INTEGERS = 2**53
"""Whole floats below this are exact integers; above, a float's text keeps its rounding visible."""


def format_number(value: float, machine: bool) -> str:
    """Shortest exact text for machines, four significant digits for people.

    >>> format_number(0.000123456, False), format_number(0.1, True)
    ('0.0001235', '0.1')
    """
    if machine:
        return repr(float(value))
    text = f"{value:.4g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}e{int(exponent)}"
    return text


def format_value(value: float) -> str:
    """A measured or requested value: whole numbers without a point, others as short as exact.

    >>> format_value(4.0), format_value(0.5), format_value(1e6), format_value(0.1 + 0.2)
    ('4', '0.5', '1000000', '0.30000000000000004')
    """
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def format_share(share: float) -> str:
    """A relative width or error as a percentage: one decimal, or three significant digits from 10,000 % on
    (an interval around a prediction near zero), so that the digits stay readable.

    >>> format_share(0.0512), format_share(10.627), format_share(3467679230.612)
    ('5.1%', '1062.7%', '3.47e+11%')
    """
    return f"{share:.1%}" if not abs(share) >= 100 else f"{share * 100:.3g}%"


def format_percent(share: float) -> str:
    """A share the user gave, such as a tolerance, as a percentage with the digits it has (``.0%`` made 0.1 % "0%").

    >>> format_percent(0.05), format_percent(0.025), format_percent(0.001)
    ('5%', '2.5%', '0.1%')
    """
    return f"{share * 100:.4g}%"


def format_exponent(exponent: float, machine: bool = False) -> str:
    """``1``, ``0.5`` for machines; whole numbers, ``(1/2)``-style fractions or 3-4 digits for people.

    >>> format_exponent(2.0), format_exponent(0.5), format_exponent(4 / 3), format_exponent(1.37)
    ('2', '(1/2)', '(4/3)', '1.37')
    """
    exponent = float(exponent)
    if exponent.is_integer():
        return str(int(exponent))
    if machine:
        return repr(exponent)
    fraction = Fraction(exponent).limit_denominator(12)
    if abs(float(fraction) - exponent) < 1e-9 and fraction.denominator == 1:  # whole but for rounding: not (2/1)
        return str(fraction.numerator)
    if abs(float(fraction) - exponent) < 1e-9:
        return f"({fraction.numerator}/{fraction.denominator})"
    return f"{exponent:.4g}"


def format_point(point: Mapping[str, float] | None, parameters: Sequence[str] | None = None,
                 *, brackets: bool = False) -> str:
    """``p=65536, n=1000000``: a point as text (empty for None).

    ``point`` is a mapping, or a sequence of values named by ``parameters``.

    >>> format_point({"p": 4.0, "n": 0.5}), format_point([4, 100], ["p", "n"], brackets=True)
    ('p=4, n=0.5', '(p=4, n=100)')
    """
    if point is None or len(point) == 0:
        return "()" if brackets else ""
    pairs = point.items() if isinstance(point, Mapping) else zip(parameters or (), point)
    text = ", ".join(f"{name}={format_value(value)}" for name, value in pairs)
    return f"({text})" if brackets else text


BINARY_UNITS = (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
"""The units of :func:`format_bytes`, largest first."""


def format_bytes(value: float) -> str:
    """A size in bytes: a whole number of the largest binary unit it is a whole number of (below 10000 of it), else
    the number of bytes, short where that is exact (:func:`format_value` where it is not).

    >>> format_bytes(2**31), format_bytes(2**50), format_bytes(1536 * 2**40), format_bytes(1.5e9)
    ('2 GiB', '1 PiB', '1536 TiB', '1.5e+09 bytes')
    >>> format_bytes(2**31 + 1)
    '2147483649 bytes'
    """
    for unit, size in BINARY_UNITS:
        if value >= size and (value / size).is_integer() and value / size < 10000:
            return f"{int(value / size)} {unit}"
    short = f"{value:g}"
    return f"{short if float(short) == value else format_value(value)} bytes"


def describe_inputs(path) -> str:
    """The inputs as one string for messages: ``a, b`` for a list (or tuple) of paths, else the path itself.

    >>> describe_inputs(["a.cali", "b.cali"]), describe_inputs("runs")
    ('a.cali, b.cali', 'runs')
    """
    return ", ".join(map(str, path)) if isinstance(path, (list, tuple)) else str(path)


def did_you_mean(name: str, names: Sequence[str], otherwise: str) -> str:
    """The end of an "unknown name" message: up to three close names, else ``otherwise`` (the names there are).

    >>> did_you_mean("tme", ["time", "visits"], "the metrics are time, visits")
    "did you mean 'time'?"
    """
    import difflib

    close = difflib.get_close_matches(str(name), list(names), n=3)
    return f"did you mean {', '.join(map(repr, close))}?" if close else otherwise


def format_count(n: int, noun: str) -> str:
    """``1 run``, ``0 runs``, ``3 runs``: the noun takes an ``s`` unless there is exactly one."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def format_warned(series: Sequence[str], text: str, every: str = "") -> str:
    """One warning said of several series: all of them named while they are at most :data:`WARNED_NAMED` (as
    :func:`format_callpaths` tells them apart), else the first and a count of the others, with ``every`` (where all
    are named) in brackets: ``main->a [time], main->b [time] and main->c [time]: ...``, ``main->a [time] and 86
    more series (--export json lists them all): ...`` (the end of ``model`` and the text export).

    >>> format_warned(["a [t]", "b [t]"], "noisy"), format_warned(["a [t]", "b [t]", "c [t]", "d [t]"], "noisy")
    ('a [t] and b [t]: noisy', 'a [t] and 3 more series: noisy')
    """
    series = list(dict.fromkeys(series))  # a series warned twice of one cause is one series
    if not series:
        return text
    if len(series) <= WARNED_NAMED:
        names = format_callpaths(series)
        return f"{', '.join(names[:-1])} and {names[-1]}: {text}" if len(names) > 1 else f"{names[0]}: {text}"
    where = f" ({every})" if every else ""
    return f"{format_callpath(series[0])} and {len(series) - 1} more series{where}: {text}"


WARNINGS_LISTED = "--export json lists them all"
"""Where a warning of more series than a text report names lists every one (each model's ``warnings`` in JSON)."""


def warning_texts(models: Sequence, every: str = "") -> list[str]:
    """What ``models`` (anything with ``callpath``, ``metric`` and ``warnings``) warn of, one text per cause naming
    its series (:func:`format_warned`, ``every`` as there), in the order first said.

    >>> class M:
    ...     def __init__(self, callpath, warnings): self.callpath, self.metric, self.warnings = callpath, "t", warnings
    >>> warning_texts([M("a", ("noisy",)), M("b", ("noisy", "flat")), M("c", ())])
    ['a [t] and b [t]: noisy', 'b [t]: flat']
    """
    causes: dict[str, list[str]] = {}
    for m in models:
        for text in m.warnings or ():
            causes.setdefault(text, []).append(f"{m.callpath} [{m.metric}]")
    return [format_warned(series, text, every) for text, series in causes.items()]


def warning_lines(models: Sequence, every: str = "") -> list[str]:
    """:func:`warning_texts` as the end of a text report lists them: a blank line, ``warnings:`` and one indented
    line each; nothing where no model warns."""
    texts = warning_texts(models, every)
    return ["", "warnings:", *(f"  {text}" for text in texts)] if texts else []


def _reading_heading(of: str, what: str = "warnings") -> str:
    return f"{what} on reading {of}" if of else f"{what} on reading"


def _reading_section(texts: Sequence[str], of: str, what: str) -> list[str]:
    """A blank line, ``WHAT on reading[ OF]:`` and one indented line per text; nothing where there is none."""
    return ["", f"{_reading_heading(of, what)}:", *(f"  {text}" for text in texts)] if texts else []


def reading_lines(warned: Sequence[str], of: str = "") -> list[str]:
    """What reading warned of (:attr:`Experiment.reading_warnings
    <extrap_plugins.experiment.Experiment.reading_warnings>`) as a section of a text report: a blank line,
    ``warnings on reading:`` (``warnings on reading old:`` where ``of`` names one input of a report of several) and
    one indented line per warning; nothing where reading warned of nothing.  A report saved with ``-o`` keeps them;
    where stderr goes to the same place, the command line leaves them to the report (``cli.read_listed``).

    >>> reading_lines(["a.csv: line 4 left out"], "old"), reading_lines([])
    (['', 'warnings on reading old:', '  a.csv: line 4 left out'], [])
    """
    return _reading_section(warned, of, "warnings")


def reading_items(warned: Sequence[str], of: str = "") -> list[tuple[str, str]]:
    """:func:`reading_lines` as one row of an HTML report's summary, ``("warnings on reading", "a; b")``; none
    where reading warned of nothing."""
    return [(_reading_heading(of), "; ".join(warned))] if warned else []


def note_lines(notes: Sequence[str], of: str = "") -> list[str]:
    """What the reader noted of how it read the measurements (:attr:`Experiment.notes
    <extrap_plugins.experiment.Experiment.notes>`: which metadata became parameters, what was left out and why)
    as a section of a text report, as :func:`reading_lines` writes the warnings: a blank line, ``notes on
    reading:`` (``notes on reading old:`` where ``of`` names one input of a report of several) and one indented
    line per note; nothing where there is none.  A warning a note says is kept only as the note
    (:func:`~extrap_plugins.errors.unnoted`): a report that lists what reading warned of lists the notes too, or
    that warning is lost.

    >>> note_lines(["metrics without data are left out: bytes_put"], "old"), note_lines([])
    (['', 'notes on reading old:', '  metrics without data are left out: bytes_put'], [])
    """
    return _reading_section(notes, of, "notes")


def note_items(notes: Sequence[str], of: str = "") -> list[tuple[str, str]]:
    """:func:`note_lines` as one row of an HTML report's summary, ``("notes on reading", "a; b")``; none where
    the reader noted nothing."""
    return [(_reading_heading(of, "notes"), "; ".join(notes))] if notes else []


def format_callpath(name: str, width: int = CALLPATH_WIDTH) -> str:
    """A call path as people read it in a line: whole while it fits ``width``, else its root, ``…`` for the middle
    and as many of its last regions as fit (a last region longer than that keeps its beginning and end).  Machine
    output keeps the whole name.  Control characters read from a file are escaped (:func:`printable`).

    >>> format_callpath("main->a->b->solve [time]", 21)
    'main->…->solve [time]'
    """
    name = printable(name)
    if len(name) <= width:
        return name
    regions = name.split(CALLPATH_SEPARATOR)
    head = regions[0] + CALLPATH_SEPARATOR + "…" + CALLPATH_SEPARATOR if len(regions) > 1 else ""
    if len(head) > width // 2:  # a root too long to keep
        head = "…" + CALLPATH_SEPARATOR if len(regions) > 1 else ""
    tail = regions[-1]
    for region in reversed(regions[1:-1]):
        longer = region + CALLPATH_SEPARATOR + tail
        if len(head) + len(longer) > width:
            break
        tail = longer
    return head + _elided(tail, width - len(head))  # a last region alone too long: its beginning and its end


def _elided(text: str, room: int) -> str:
    """``text`` whole if it fits ``room`` characters, else its beginning, ``…`` and its end in ``room``."""
    return text if len(text) <= room else text[: room // 2] + "…" + text[len(text) - (room - room // 2 - 1):]


def format_callpaths(names: Sequence[str], width: int = CALLPATH_WIDTH) -> list[str]:
    """:func:`format_callpath` of every name, where different names shortened alike keep the region that tells most
    of them apart (``root->…->AllocateElemPersistent->…->resize``), and any still alike are numbered (``… (2)``):
    two call paths never read the same in one table.

    >>> format_callpath("main->alpha->x->y->solve", 18), format_callpath("main->beta->x->y->solve", 18)
    ('main->…->y->solve', 'main->…->y->solve')
    >>> format_callpaths(["main->alpha->x->y->solve", "main->beta->x->y->solve"], 18)
    ['main->alpha->…->solve', 'main->beta->…->solve']
    """
    unique = list(dict.fromkeys(names))
    shown = {name: format_callpath(name, width) for name in unique}
    for alike in _alike(shown):
        regions = [name.split(CALLPATH_SEPARATOR) for name in alike]
        depth = min(map(len, regions))
        kinds = [len({r[k] for r in regions}) for k in range(1, depth - 1)]  # regions between root and last
        if kinds and max(kinds) > 1:
            differ = 1 + kinds.index(max(kinds))
            shown.update((name, _with_region(r, differ, width)) for name, r in zip(alike, regions))
    shown = {name: printable(text) for name, text in shown.items()}
    for alike in _alike(shown):
        shown.update((name, f"{shown[name]} ({number})") for number, name in enumerate(alike, 1))
    return [shown[name] for name in names]


def callpath_labels(names: Sequence[str], width: int = CALLPATH_WIDTH) -> dict[str, str]:
    """:func:`format_callpaths` as a mapping from each whole name to what people read (a table's rows look their
    call paths up in it)."""
    names = list(names)
    return dict(zip(names, format_callpaths(names, width)))


def _alike(shown: dict[str, str]) -> list[list[str]]:
    """The groups of names shown the same (two or more each)."""
    groups: dict[str, list[str]] = {}
    for name, text in shown.items():
        groups.setdefault(text, []).append(name)
    return [group for group in groups.values() if len(group) > 1]


def _with_region(regions: list[str], k: int, width: int) -> str:
    """The root, region ``k`` and the last region of a call path in about ``width`` characters, ``…`` for what lies
    between them."""
    head = CALLPATH_SEPARATOR.join([regions[0], *(["…"] if k > 1 else []), _elided(regions[k], REGION_WIDTH),
                                    *(["…"] if k < len(regions) - 2 else []), ""])
    return head + _elided(regions[-1], max(width - len(head), REGION_WIDTH))


def json_number(value: float) -> float | None:
    """A float for JSON: NaN and infinity become None (``null``)."""
    value = float(value)
    return value if math.isfinite(value) else None


def json_plain(value: float) -> int | float | None:
    """Whole numbers (below 2**53, where floats are exact) as int, others as float; NaN as None."""
    value = float(value)
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and abs(value) < EXACT_INTEGERS else value


def printable(text: str) -> str:
    """``text`` with its control characters as escapes (``\\t``, ``\\n``, ``\\x1b``): a name read from a file stays on
    its line of a table, and sends nothing to the terminal.

    >>> printable("main->a\\tb")
    'main->a\\\\tb'
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[object]], lines_in_cells: bool = False) -> str:
    """An aligned table for people: tabulate's ``simple`` layout, every cell :func:`printable` and taken as text
    (no number reformatted); with ``wcwidth`` (a dependency) tabulate aligns wide characters, as a terminal shows
    them (a CJK character takes two columns, a combining mark none).  With ``lines_in_cells`` a cell's own line
    breaks stay (the caller wrote them: names in it must be :func:`printable` already)."""
    from tabulate import tabulate

    def cell(value: object) -> str:
        text = str(value)
        return "\n".join(map(printable, text.split("\n"))) if lines_in_cells else printable(text)

    return tabulate([[cell(value) for value in row] for row in rows], headers=[cell(h) for h in headers],
                    tablefmt="simple", disable_numparse=True)


def described(value, width: int = 60) -> str:
    """``value`` as a message names it: ``None``, ``an Experiment``, ``the int 42``, ``the str 'p=4'`` (cut when
    long)."""
    if value is None:
        return "None"
    name = type(value).__name__
    if type(value).__module__.startswith("extrap_plugins."):  # our objects by their kind, not their dump
        return f"{'an' if name[0] in 'AEIOU' else 'a'} {name}"
    return f"the {name} {shortened_repr(value, width)}"


def shortened_repr(value, width: int = 60) -> str:
    """``repr(value)`` on one line (a pandas frame's spans several), cut to ``width`` characters."""
    text = repr(value)
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= width else text[: width - 1] + "…"
