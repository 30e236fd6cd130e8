"""Helpers shared by the readers of Extra-P's formats and CSV.

Reading a file, checking reader options, converting columns of parsed
values to float arrays with an error that names the line of the first bad
value, coding names, Extra-P's completeness rule, building the
:class:`~extrap_plugins.experiment.Experiment`, and finding the line of a
JSON object for error messages.  Everything here works on
whole columns; Python loops over rows run only to explain an error.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import pathlib
import re
from typing import Callable, Mapping, Sequence

import numpy as np

from extrap_plugins.errors import InputError
from extrap_plugins.experiment import Experiment, Metric, row_codes
from extrap_plugins.formatting import format_point, shortened_repr

#: The call path of measurements whose input names none.
DEFAULT_CALLPATH = "<root>"
#: The metric of measurements whose input names none.
DEFAULT_METRIC = "time"

#: Reader option shared by the readers of Extra-P's formats.
INCOMPLETE_OPTION = {
    "incomplete": "error (default, as Extra-P): every call path and metric must be measured at every point; "
                  "allow: keep series measured at fewer points",
}

LineOf = Callable[[int], "int | None"]

#: What ``extrap-plugins run`` and ``autotune`` write beside the measurements in their folder: readers of a folder
#: of runs pass these by without a word (``tests/readers/test_cube_reader.py`` checks the names against theirs).
RUN_FOLDER_EXTRAS = frozenset({"logs", "autotune.json", "autotune.html", "models.html"})


# ------------------------------------------------------------------ options
def check_options(options: Mapping[str, object], known: Mapping[str, str], reader: str) -> dict[str, str]:
    """The reader options as strings, or an InputError naming the unknown keys and listing the known ones."""
    given = dict(options)
    unknown = sorted(set(given) - set(known))
    if unknown:
        listed = ", ".join(sorted(known)) or "none"
        raise InputError(f"the {reader} reader has no option {', '.join(map(repr, unknown))}; "
                         f"its options are: {listed}")
    return {k: str(v) for k, v in given.items()}


def choice(options: Mapping[str, str], key: str, allowed: Sequence[str], default: str) -> str:
    """``options[key]`` (case-insensitive) if it is one of ``allowed``, else an InputError listing them."""
    value = options.get(key, default).strip().lower()
    if value not in allowed:
        raise InputError(f"option {key}={options.get(key)!r}: expected one of {', '.join(allowed)}")
    return value


# --------------------------------------------------------------------- files
def read_text(path: pathlib.Path, hint: str = "is this the right reader?") -> str:
    """The whole file as text (UTF-8, a byte-order mark dropped, or UTF-16 or UTF-32 with its byte-order mark; a
    gzip-compressed file decompressed, up to :func:`max_inflated` bytes).

    ``hint`` ends the message for a file that is not UTF-8 (a mapping file is not read by a reader).

    Raises
    ------
    InputError
        The file cannot be opened, is not UTF-8 text (naming the line), or holds a NUL byte anywhere (naming its
        line and column: no text file holds one, and a name or a number read with it would be another).
    """
    try:
        data = pathlib.Path(path).read_bytes()
    except IsADirectoryError:
        raise InputError("is a folder; this reader reads one file", path) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", path) from None
    if data.startswith(GZIP_MAGIC):
        data = gunzip(data, path)
    marked = _marked_encoding(data)
    if marked:  # Windows PowerShell's "> file", Excel's "Unicode Text": marked, so certain
        try:
            text = data.decode(marked)
        except UnicodeDecodeError as error:
            raise InputError(f"not {marked.upper()} text past its byte-order mark (byte {error.start}); {hint}",
                             path) from None
        if "\0" in text:
            raise _nul_error(text.encode("utf-8"), path)
        return text
    if b"\x00" in data:  # (valid UTF-8, yet no text file holds it)
        raise _nul_error(data, path, hint)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError(f"not UTF-8 text (byte 0x{data[error.start]:02x}); {hint}", path, line) from None


#: The byte-order marks of UTF-32 and UTF-16 text, and the codec that reads each (UTF-32's first: UTF-16's
#: little-endian mark begins UTF-32's).
_MARKS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"),
          (b"\xfe\xff", "utf-16"))


def _marked_encoding(data: bytes) -> str:
    """The codec of text that starts with a UTF-16 or UTF-32 byte-order mark, else ""."""
    return next((codec for mark, codec in _MARKS if data.startswith(mark)), "")


def _nul_error(data: bytes, path, hint: str = "") -> InputError:
    """The error for ``data`` holding a NUL byte, at the line of the first one.

    Text in UTF-16 without its byte-order mark has a NUL beside every character of the ASCII range: said so.  A
    NUL in text that is UTF-8 without it is damage (a crash while the file was written, a disk error): its column
    is named.
    """
    nul = data.find(b"\x00")
    line = data.count(b"\n", 0, nul) + 1
    start = data.rfind(b"\n", 0, nul) + 1
    import codecs

    sample = data[:4096]
    try:  # (a character cut at the sample's end is no error)
        codecs.getincrementaldecoder("utf-8")().decode(sample.replace(b"\x00", b""), final=False)
        text_besides = sample.count(b"\x00") * 4 < len(sample)
    except UnicodeDecodeError:
        text_besides = False
    if text_besides:
        column = len(data[start:nul].decode("utf-8", errors="replace")) + 1
        return InputError(f"a NUL byte at column {column}: no text holds one (the file is damaged here?)", path, line)
    return InputError(f"not UTF-8 text (NUL bytes: UTF-16 without its byte-order mark?); {hint}".rstrip("; "),
                      path, line)


#: The first bytes of a gzip file.
GZIP_MAGIC = b"\x1f\x8b"


def gunzip(data: bytes, path) -> bytes:
    """The decompressed bytes of a gzip file (of several members, as ``cat a.gz b.gz`` makes), at most
    :func:`max_inflated` of them.

    Raises
    ------
    InputError
        The stream is corrupt or cut short, or inflates past the limit.
    """
    import zlib

    limit, out, size = max_inflated(), [], 0
    try:
        while data:
            stream = zlib.decompressobj(wbits=31)
            piece = stream.decompress(data, limit + 1 - size)
            size += len(piece)
            out.append(piece)
            if size > limit:
                raise InputError(f"decompresses to more than {_size(limit)}, the limit for one input "
                                 "(EXTRAP_PLUGINS_MAX_INFLATED=BYTES raises it)", path)
            if not stream.eof:
                raise InputError("the gzip stream is cut short (the file is truncated)", path)
            data = stream.unused_data.lstrip(b"\0")
    except zlib.error as error:
        raise InputError(f"a compressed stream is corrupt ({error})", path) from None
    return b"".join(out)


#: The message for a file with nothing in it, the same from every reader.
EMPTY_FILE = "the file is empty"


def is_blank(path: pathlib.Path, limit: int = 1 << 16) -> bool:
    """Whether a file holds nothing but white space (for sniffers: an empty file of a reader's own pattern is
    that reader's to reject, with :data:`EMPTY_FILE`, rather than no reader's).  False when it cannot be read."""
    path = pathlib.Path(path)
    try:
        if not path.is_file() or path.stat().st_size > limit:
            return False
    except OSError:
        return False
    data = head(path, limit)
    return not data.lstrip(b"\xef\xbb\xbf").strip()


def head(path: pathlib.Path, size: int = 4096) -> bytes:
    """The first ``size`` bytes of a file, or b"" when it cannot be read (for sniffers); those of UTF-16 or UTF-32
    text (with its byte-order mark, as :func:`read_text` reads it) as UTF-8."""
    try:
        with open(path, "rb") as stream:
            data = stream.read(size)
    except OSError:
        return b""
    marked = _marked_encoding(data)
    if marked:
        width = 4 if marked == "utf-32" else 2
        return data[: len(data) // width * width].decode(marked, errors="ignore").encode("utf-8")
    return data


def head_readings(path: pathlib.Path, size: int = 4096) -> tuple[bytes, ...]:
    """The first bytes of a file as :func:`head` gives them, or, where they hold NUL bytes, as UTF-8 text damaged
    by a stray NUL and as UTF-16 without a byte-order mark would read in either byte order (for sniffers: a reader
    then refuses the file, naming the NUL's line, where no reader recognising it would leave the user guessing)."""
    data = head(path, size)
    if b"\0" not in data:
        return (data,)
    even = data[: len(data) // 2 * 2]
    return (data.replace(b"\0", b""),
            *(even.decode(encoding, errors="ignore").encode("utf-8") for encoding in ("utf-16-le", "utf-16-be")))


def first_content_line(data: bytes, comment: bytes | None = None) -> bytes:
    """The first line of ``data`` that is not blank (nor a comment), stripped."""
    for line in data.splitlines():
        line = line.strip()
        if line and not (comment and line.startswith(comment)):
            return line.lstrip(b"\xef\xbb\xbf")
    return b""


def line_at(text: str, index: int) -> int:
    """The 1-based line number of character ``index`` in ``text``."""
    return text.count("\n", 0, index) + 1


def universal_newlines(text: str) -> str:
    """``text`` with lines ended by a carriage return alone (old Mac editors) ended by ``\\n``, as Extra-P reads
    its files (Python's universal newlines); text whose first line ends with ``\\n`` or ``\\r\\n`` is returned as
    it is (converting those would cost a pass over a large file for nothing)."""
    end = text.find("\n")
    if "\r" not in (text if end < 0 else text[:end]).rstrip("\r"):
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


#: The message for two names of one file among the files of an input (a symbolic or hard link).
SAME_FILE = "the same file as {}: its measurements would count twice"
SAME_BYTES = "the same bytes as {}: its measurements count twice, as repetitions never run (a copy given by mistake?)"


def same_bytes(a, b) -> bool:
    """Whether files ``a`` and ``b`` hold the same bytes (compared until the first that differs); False where one
    cannot be read (its reader says why)."""
    import filecmp

    try:
        return filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False


def same_file(files: Sequence) -> tuple[int, int] | None:
    """The first two of ``files`` that are one file on disk (a symbolic or hard link to another, or one named
    twice), as (index of the name to blame, index of the other), or None.  The name to blame is the one reached
    through a link, else the later one.  Files that cannot be read are left to the reader to name."""
    import os

    seen: dict[tuple[int, int], int] = {}
    for j, name in enumerate(files):
        try:
            status = os.stat(name)
        except OSError:
            continue
        i = seen.setdefault((status.st_dev, status.st_ino), j)
        if i != j:
            linked = [os.path.realpath(files[k]) != os.path.abspath(files[k]) for k in (i, j)]
            return (i, j) if linked == [True, False] else (j, i)
    return None


def check_distinct_files(files: Sequence) -> None:
    """The files listed in the folders of an input are distinct files: a link to a sibling would read one run twice,
    as repetitions the program never ran.

    Raises
    ------
    InputError
        Naming both names (:data:`SAME_FILE`).
    """
    pair = same_file(files)
    if pair is not None:
        raise InputError(SAME_FILE.format(files[pair[1]]), files[pair[0]])


# ---------------------------------------------------------- stored statistics
#: The statistics a file that keeps no repetitions may store per point (Extra-P's experiments), as ``--measure``
#: names them.
STATISTICS = ("mean", "median", "minimum", "maximum")
_SUMMARY = re.compile(r"^(?P<what>.+) keeps one (?P<statistic>mean|median|minimum|maximum) per point, not the "
                      r"repetitions")


def summary_note(statistic: str, what: str) -> str:
    """The experiment's note that ``what`` (``the experiment``, ``part of the experiment``) keeps one ``statistic``
    per point instead of the repetitions: :func:`measure_warning` reads it."""
    return (f"{what} keeps one {statistic} per point, not the repetitions: every point has one value "
            f"(--reader-option value=mean|median|minimum|maximum chooses the statistic)")


def measure_warning(experiment: Experiment, measure: str) -> str:
    """What to warn when ``measure`` (``--measure``) asks for a statistic of repetitions the file does not keep, or
    "" when it does not.

    A file that keeps one value per point (a :func:`summary_note` says which statistic) has no repetitions for
    ``--measure median`` to take the median of: the stored means would be modelled as if they were medians.  The
    measure does not reach the reader (it reads before anything is modelled), so the warning names the reader
    option that reads the stored statistic.  The default measure, the mean, and the statistic the file was read
    with, say nothing.

    >>> e = Experiment.from_columns(["p"], callpath="f", metric="time", coordinates=[[1]], value=[1.0], source="e3")
    >>> e.notes.append(summary_note("mean", "the experiment"))
    >>> measure_warning(e, "median")[:64]
    'e3: the experiment keeps one mean per point, not the repetitions'
    """
    if measure == "mean":
        return ""
    for note in experiment.notes:
        found = _SUMMARY.match(note)
        if found is None or found["statistic"] == measure:
            continue
        what, statistic = found["what"], found["statistic"]
        where = f"{experiment.source}: " if experiment.source else ""
        there = " there" if what.startswith("part") else ""
        return (f"{where}{what} keeps one {statistic} per point, not the repetitions: --measure {measure} has no "
                f"repetitions to act on{there} and the stored {statistic}s are modelled; --reader-option "
                f"value={measure} reads the stored {_plural(measure)}")
    return ""


def _plural(statistic: str) -> str:
    return {"maximum": "maxima", "minimum": "minima"}.get(statistic, statistic + "s")


# ---------------------------------------------------------------- conversion
def to_float(column: Sequence, path, line_of: LineOf, what: str,
             label_of: Callable[[int], str] | None = None, *, missing: bool = False) -> np.ndarray:
    """Convert a column of parsed values to float64, every value finite (or missing).

    Parameters
    ----------
    column : sequence, length n
        Numbers (or numeric strings) as parsed.
    line_of : callable(int) -> int or None
        The line of the i-th entry, for the error message.
    what : str
        How to name the column in a message ("value", "parameter 'p'",
        "column 'p':"; a trailing colon is dropped before "is empty").
    label_of : callable(int) -> str, optional
        Where the i-th entry is, in words, for inputs without lines (a zip
        member's JSON): put before ``what`` in the message.
    missing : bool
        For measured values: a number that is not finite (``nan``, ``inf``,
        one beyond the range of a float such as ``1e400``) is a missing value,
        NaN, not an error (:func:`warn_missing` says so).  Coordinates keep
        the default, False.

    Returns
    -------
    ndarray of float64, shape (n,)

    Raises
    ------
    InputError
        At the first entry that is not a (finite) number, naming its line.
    """
    try:
        array = np.asarray(column, dtype=np.float64)
        if array.ndim == 1:
            finite = np.isfinite(array)
            if finite.all():
                return array + 0.0  # -0 is 0 (a point written "-0" is printed "-0" otherwise)
            if missing:
                return np.where(finite, array, np.nan)
    except (TypeError, ValueError, OverflowError):
        pass
    for i, entry in enumerate(column):
        problem = _number_problem(entry, missing)
        if problem:
            prefix = what.rstrip(":") if problem == "is empty" else what
            if label_of is not None:
                prefix = f"{label_of(i)}: {prefix}"
            raise InputError(f"{prefix} {problem}", path, line_of(i))
    if missing:  # numbers all, some beyond the range of a float (a JSON integer of 400 digits): missing
        return np.fromiter(map(_float_or_nan, column), dtype=np.float64, count=len(column))
    raise InputError(f"{what}: expected numbers", path)  # pragma: no cover - unreachable


def _float_or_nan(entry) -> float:
    try:
        number = float(entry)
    except OverflowError:
        return np.nan
    return number if np.isfinite(number) else np.nan


#: Why a value is missing, as :func:`warn_missing` says it.
NOT_FINITE = "nan, inf or beyond the range of a float"


def warn_missing(experiment: Experiment, path, line_of: LineOf | None = None,
                 place_of: Callable[[int], str] | None = None, shown: int = 5, why: str = NOT_FINITE) -> None:
    """One warning for the values of a file that were not finite numbers and are left out as missing.

    The readers read ``nan``, ``inf`` and numbers beyond the range of a float as missing values (NaN, see
    :func:`to_float` with ``missing=True``): a failed repetition must not cost the other series their models.  The
    modeler leaves them out (a point with no finite value is left out with a quality warning of its series).

    Parameters
    ----------
    experiment : Experiment
        As the reader built it, rows in the order ``line_of`` numbers them.
    line_of : callable(int) -> int or None, optional
        The line of row i.
    place_of : callable(int) -> str, optional
        Where row i is, in words, for inputs without lines (``(p=8)``); said after its series.
    why : str
        What the missing values were written as, in the brackets (a CSV table adds its empty and ``NA`` cells).

    The message names the file, the first ``shown`` lines and how many there are, and the series
    (``main [time]``)::

        nan2.txt: 1 value is not a finite number (nan, inf or beyond the range of a float) and is left out as
        missing: line 7; series main [time]
    """
    rows = np.flatnonzero(np.isnan(experiment.value))
    if rows.shape[0] == 0:
        return
    import warnings

    from extrap_plugins.errors import ExtrapWarning

    n = int(rows.shape[0])
    names = [f"{experiment.callpaths[c].name} [{experiment.metrics[m].name}]"
             for c, m in zip(experiment.callpath_index[rows].tolist(), experiment.metric_index[rows].tolist())]
    lines = sorted({line for line in map(line_of, rows.tolist()) if line is not None}) if line_of else []
    if place_of is not None and not lines:
        where = some_listed(list(dict.fromkeys(f"{name} {place_of(row)}" for name, row in zip(names, rows.tolist()))),
                        "measurement", shown)
    else:
        where = some_listed(list(dict.fromkeys(names)), "series", shown, plural="series")
        if lines:
            where = f"{some_listed(lines, 'line', shown)}; {where}"
    count = "1 value is not a finite number" if n == 1 else f"{n:,} values are not finite numbers"
    warnings.warn(ExtrapWarning(f"{path}: {count} ({why}) and {'is' if n == 1 else 'are'} left out as "
                                f"missing: {where}"), stacklevel=3)


def some_listed(items: Sequence, noun: str, shown: int, plural: str = "") -> str:
    """``line 7``, ``lines 7, 9``, ``lines 7, 9, 12, 15, 20 and 3 more (8 lines)``."""
    plural = plural or noun + "s"
    listed = ", ".join(map(str, items[:shown]))
    if len(items) <= shown:
        return f"{noun if len(items) == 1 else plural} {listed}"
    return f"{plural} {listed} and {len(items) - shown:,} more ({len(items):,} {plural})"


def json_to_float(column: Sequence, path, line_of: LineOf, what: str,
                  label_of: Callable[[int], str] | None = None, *, missing: bool = False) -> np.ndarray:
    """:func:`to_float` for parsed JSON, where a number is a JSON number: a string is refused even when it reads as
    one (``"81"``: "'81' is a string, not a number (write it without quotes)"), as are lists, objects, booleans
    and null.

    Returns
    -------
    ndarray of float64, shape (n,)
    """
    if not set(map(type, column)) <= _JSON_NUMBER_TYPES:
        i = next(i for i, entry in enumerate(column) if type(entry) not in _JSON_NUMBER_TYPES)
        prefix = f"{label_of(i)}: {what}" if label_of is not None else what
        raise InputError(f"{prefix} {json_number_problem(column[i])}", path, line_of(i))
    return to_float(column, path, line_of, what, label_of, missing=missing)


_JSON_NUMBER_TYPES = frozenset({int, float})  # as json.loads gives numbers (bool is neither)


def json_number_problem(entry) -> str:
    """What is wrong with a parsed JSON value as a measured number: ``is a list, not a number``, ``'1' is a
    string, not a number (write it without quotes)``, ``null is not a number``; "" when nothing is."""
    if isinstance(entry, (dict, list)):
        return f"is {'an object' if isinstance(entry, dict) else 'a list'}, not a number"
    if isinstance(entry, str):
        shown = repr(entry[:40]) + ("..." if len(entry) > 40 else "")
        try:
            float(entry)
        except ValueError:
            return f"{shown} is not a number"
        return f"{shown} is a string, not a number (write it without quotes)"
    return _number_problem(entry)


def _number_problem(entry, missing: bool = False) -> str:
    """What is wrong with ``entry`` as a measured number, or "" when nothing is (nor, with ``missing``, when it is
    a number that is not finite: a missing value)."""
    if isinstance(entry, str) and not entry.strip():
        return "is empty"
    if isinstance(entry, bool) or entry is None or isinstance(entry, (list, dict)):
        return f"{_show(entry)} is not a number"
    try:
        number = float(entry)
    except OverflowError:
        if missing:
            return ""
        return f"{_show(entry)[:40]}{'...' if len(_show(entry)) > 40 else ''} is beyond the range of a float"
    except (TypeError, ValueError):
        return f"{_show(entry)[:40]} is not a number"
    return "" if missing or np.isfinite(number) else f"{_show(entry)} is not a finite number"


def _show(entry) -> str:
    """A value as the user wrote it: JSON for parsed JSON values, quoted for text; cut to :data:`SHOWN` characters
    (a damaged file's "number" may be a line of megabytes)."""
    if isinstance(entry, str):
        return shown(entry)
    try:
        text = json.dumps(entry)
    except (TypeError, ValueError):
        text = repr(entry)
    return cut(text)


#: How many characters of the file's own text a message quotes at most.
SHOWN = 60


def shown(text: str) -> str:
    """``text`` from the file quoted for a message, cut to :data:`SHOWN` characters: a line of a damaged file may
    be megabytes long, and the message is one line for a person to read."""
    return shortened_repr(text, SHOWN)


def cut(text: str) -> str:
    """``text`` from the file, unquoted, cut to :data:`SHOWN` characters (as :func:`shown`)."""
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def listed_names(names, room: int = 400) -> str:
    """Names from the file for a message, ``a, b, c``: each :func:`cut`, as many as fit in ``room`` characters, then
    how many more (a header of a damaged file may hold thousands of names, or one of megabytes)."""
    names = [cut(name) for name in names]
    shown_names, used = [], 0
    for name in names:
        if shown_names and used + len(name) + 2 > room:
            break
        shown_names.append(name)
        used += len(name) + 2
    more = len(names) - len(shown_names)
    return ", ".join(shown_names) + (f" and {more:,} more" if more else "")


def factorize(names: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Names in first-seen order and an int32 code per entry.

    Returns
    -------
    distinct : list of str
    codes : ndarray of int32, shape (n,)
    """
    seen: dict[str, int] = {}
    codes = np.fromiter((seen.setdefault(name, len(seen)) for name in names), dtype=np.int32, count=len(names))
    return list(seen), codes


# ------------------------------------------------------------- completeness
def check_complete(
    parameters: Sequence[str],
    callpath: tuple[list[str], np.ndarray],
    metric: tuple[list[str], np.ndarray],
    coordinates: np.ndarray,
    path,
    line_of: LineOf,
    declared: np.ndarray | None = None,
) -> None:
    """Extra-P's rule: every (call path, metric) series is measured at every point of the experiment.

    Parameters
    ----------
    callpath, metric : (names, codes)
        Factorised columns, codes of shape (n_rows,).
    coordinates : ndarray, shape (n_rows, n_params)
    line_of : callable(int) -> int or None
        The line of row i.
    declared : ndarray, shape (n_declared, n_params), optional
        Points the file declares besides those measured (Extra-P's
        ``POINTS`` and JSON ``coordinates``); they count as points of the
        experiment.

    Raises
    ------
    InputError
        For the first incomplete series (in file order): how many points it
        has, which are missing, at the line of its first value.
    """
    n_rows = coordinates.shape[0]
    if n_rows == 0:
        return
    if declared is not None and declared.shape[0]:
        points, point = row_codes(np.concatenate([coordinates, declared]))
        point = point[:n_rows]
    else:
        points, point = row_codes(coordinates)
    n_points = points.shape[0]
    n_metrics = len(metric[0])
    series = callpath[1].astype(np.int64) * n_metrics + metric[1]
    series_ids, first_row, series_of_row = np.unique(series, return_index=True, return_inverse=True)
    present = np.zeros((series_ids.shape[0], n_points), dtype=bool)
    present[series_of_row.reshape(-1), point] = True
    counts = present.sum(axis=1)
    incomplete = np.flatnonzero(counts < n_points)
    if incomplete.shape[0] == 0:
        return
    worst = incomplete[np.argmin(first_row[incomplete])]
    row = int(first_row[worst])
    missing = points[~present[worst]]
    points = ", ".join(format_point(p, parameters, brackets=True) for p in missing[:5])
    more = f" and {missing.shape[0] - 5} more" if missing.shape[0] > 5 else ""
    name_c = callpath[0][callpath[1][row]]
    name_m = metric[0][metric[1][row]]
    raise InputError(
        f"call path {shown(name_c)}, metric {shown(name_m)} is measured at {int(counts[worst])} of the "
        f"{n_points} points; missing: {points}{more} (Extra-P needs every series at every point; "
        f"--reader-option incomplete=allow reads it anyway)",
        path, line_of(row),
    )


# ------------------------------------------------------------------- names
def check_parameter_names(parameters: Sequence[str], path, line: int | None = None) -> None:
    """Each parameter is named once.

    Raises
    ------
    InputError
        ``parameter 'x' is declared twice``.
    """
    if len(set(parameters)) != len(parameters):
        duplicated = sorted({p for p in parameters if list(parameters).count(p) > 1})
        raise InputError(f"parameter {', '.join(map(repr, duplicated))} is declared twice", path, line)


def check_callpaths(names, path, line_of_name: Callable[[str], int | None], what: str = "'callpath'") -> None:
    """Every region name of every call path is non-empty (``main->->solve`` is not a call path).

    Parameters
    ----------
    names : iterable of str
        The distinct call paths (a few names, not one per row).
    line_of_name : callable(str) -> int or None
        The line where a call path first occurs.
    what : str
        How the input names a call path: ``'callpath'`` (a key or column), ``REGION``.

    Raises
    ------
    InputError
        For the first broken name in file order (the smallest line).
    """
    from extrap_plugins.experiment import CALLPATH_SEPARATOR

    broken = [name for name in names if "" in name.split(CALLPATH_SEPARATOR)]
    if broken:
        lines = [line_of_name(name) for name in broken]
        name, line = min(zip(broken, lines), key=lambda pair: (pair[1] is None, pair[1] or 0))
        raise InputError(f"{what} {shown(name)} has an empty region name (a call path is region names joined with "
                         f"{CALLPATH_SEPARATOR!r}, each non-empty)", path, line)


def check_points_once(
    parameters: Sequence[str],
    callpath: tuple[list[str], np.ndarray],
    metric: tuple[list[str], np.ndarray],
    coordinates: np.ndarray,
    path,
    line_of: LineOf,
    place_of: Callable[[int], str] | None = None,
) -> None:
    """Each series lists a point once, in formats where one entry holds all the repetitions of its point (Extra-P's
    JSON documents and experiments): a second entry is damage, not more repetitions.

    Parameters
    ----------
    callpath, metric : (names, codes)
        Codes of shape (n_entries,).
    coordinates : ndarray, shape (n_entries, n_params)
    line_of : callable(int) -> int or None
        The line of entry i.
    place_of : callable(int) -> str, optional
        Where entry i is, in words, for inputs without lines (a zip member's JSON).

    Raises
    ------
    InputError
        At the second entry of the first point listed twice, naming the first.
    """
    if coordinates.shape[0] < 2:
        return
    keys = np.column_stack([callpath[1], metric[1], coordinates.reshape(coordinates.shape[0], -1)])
    _, cell = row_codes(keys.astype(np.float64))
    _, first_of_cell = np.unique(cell, return_index=True)
    repeated = np.flatnonzero(first_of_cell[cell] != np.arange(cell.shape[0]))
    if repeated.shape[0] == 0:
        return
    second = int(repeated[0])
    first = int(first_of_cell[cell[second]])
    where = (f"at {place_of(first)} and {place_of(second)}" if place_of is not None
             else f"first on line {line_of(first)}" if line_of(first) is not None else "")
    name_c, name_m = callpath[0][callpath[1][second]], metric[0][metric[1][second]]
    raise InputError(f"call path {shown(name_c)}, metric {shown(name_m)}: point "
                     f"{format_point(coordinates[second], parameters, brackets=True)} is listed twice"
                     + (f" ({where})" if where else ""), path, line_of(second))


# ------------------------------------------------------------------- build
def build(
    parameters: Sequence[str],
    callpath: str | tuple[list[str], np.ndarray],
    metric: str | tuple[list[str], np.ndarray],
    coordinates: np.ndarray,
    value: np.ndarray,
    path,
    reader: str,
    *,
    repetition: np.ndarray | None = None,
    metrics: Sequence[Metric] = (),
    notes: Sequence[str] = (),
) -> Experiment:
    """The Experiment of one file, from factorised columns.

    Parameters
    ----------
    parameters : sequence of str, length n_params
    callpath, metric : str for every row, or (names, codes) with codes of shape (n_rows,)
    coordinates : ndarray, shape (n_rows, n_params)
    value : ndarray, shape (n_rows,)
    repetition : ndarray of int, shape (n_rows,), optional
        Default: rows with the same call path, metric and point are
        repetitions 0, 1, 2, ... in file order.
    """
    check_parameter_names(parameters, path)
    if value.shape[0] == 0:
        raise InputError("no measurements in this file", path)
    experiment = Experiment.from_columns(
        list(parameters), callpath=callpath, metric=metric, coordinates=coordinates, value=value,
        repetition=repetition, metrics=metrics, source=str(path), reader=reader,
    )
    experiment.notes.extend(notes)
    return experiment


# --------------------------------------------------------- JSON positions
def json_error(error: json.JSONDecodeError, path, line_offset: int = 0) -> InputError:
    """An InputError for invalid JSON (a whole document) at the decoder's line and column, saying what is there
    where the eye sees nothing (:func:`json_found`)."""
    return InputError(f"not valid JSON: {error.msg} (column {error.colno}){json_found(error, document=True)}", path,
                      error.lineno + line_offset)


def json_found(error: json.JSONDecodeError, document: bool = False) -> str:
    """What the JSON decoder stopped at, where a person reading the line would see nothing wrong, else "".

    A character that is not ASCII (a no-break space, a zero-width space, typographic quotes) or a control
    character: named, with its code point.  The end of a ``document`` (a whole file): said to be where the
    text ends, as a file cut short ends.
    """
    import unicodedata

    doc, pos = error.doc, error.pos
    if pos >= len(doc.rstrip()):
        return "; the text ends there (the file cut short?)" if document and doc.strip() else ""
    char = doc[pos]
    if char.isascii() and (char.isprintable() or char in "\t\n\r"):
        return ""
    return f"; there: {unicodedata.name(char, 'a control character')} (U+{ord(char):04X})"


def json_with_lines(text: str) -> tuple[object, dict[int, int]]:
    """Parse a JSON document recording the line where each object and array starts.

    Slow (pure Python); readers call it only to name the line of an error
    they found in the fast parse.

    Returns
    -------
    value : the parsed document
    lines : dict mapping ``id(obj)`` of every dict and list in ``value`` to its 1-based line
    """
    starts: dict[int, int] = {}
    decoder = json.JSONDecoder()

    def parse_object(s_and_end, *args):
        result = json.decoder.JSONObject(s_and_end, *args)
        starts[id(result[0])] = s_and_end[1] - 1
        return result

    def parse_array(s_and_end, scan_once):
        result = json.decoder.JSONArray(s_and_end, scan_once)
        starts[id(result[0])] = s_and_end[1] - 1
        return result

    decoder.parse_object = parse_object
    decoder.parse_array = parse_array
    scan = json.scanner.py_make_scanner(decoder)
    start = len(text) - len(text.lstrip())
    value, _ = scan(text, start)
    # One pass over the text turns character offsets into line numbers.
    offsets = np.array(sorted(set(starts.values())), dtype=np.int64)
    newlines = np.flatnonzero(np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32) == 10)
    line_of_offset = dict(zip(offsets.tolist(), (np.searchsorted(newlines, offsets) + 1).tolist()))
    return value, {key: line_of_offset[offset] for key, offset in starts.items()}


# ------------------------------------------------------------------- limits
#: Default for ``EXTRAP_PLUGINS_MAX_INFLATED``: what the members of one archive may inflate to, together.
MAX_INFLATED = 256 * 1024 * 1024
#: A run of this many opening brackets in a row is "nested too deeply" (Python's JSON decoder stops near 1,000).
DEEP_NESTING = 200


def max_inflated() -> int:
    """The limit on the decompressed size of one archive in bytes (``EXTRAP_PLUGINS_MAX_INFLATED``)."""
    import os

    from extrap_plugins.options import parse_int

    text = os.environ.get("EXTRAP_PLUGINS_MAX_INFLATED", "").strip()
    if not text:
        return MAX_INFLATED
    try:
        return parse_int(text, "EXTRAP_PLUGINS_MAX_INFLATED", 1)
    except ValueError as error:
        raise InputError(str(error)) from None


def inflate_limit_error(size: int, limit: int, member: str, path) -> InputError:
    return InputError(f"{member} inflates to {_size(size)}, over the limit of {_size(limit)} for one archive "
                      f"(EXTRAP_PLUGINS_MAX_INFLATED=BYTES raises it)", path)


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)  # pragma: no cover


def check_input_file(path) -> None:
    """A regular file or a folder; anything else (a device, a FIFO, a socket) would block or never end.

    Raises
    ------
    InputError
        Naming the path and what it is.
    """
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", path) from None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file")
    raise InputError(f"is {kind}, not a regular file or folder; save the measurements to a file first", path)


def guarded_read(function: Callable, path, *args, reader: str = ""):
    """Call a reader's ``function(*args)``; failures of the data (not of the reader) become an InputError.

    The one entry every read goes through (:mod:`extrap_plugins.engine`): whatever the format, input
    that is nested too deeply, holds a number with more digits than Python converts, a number beyond
    the floating-point range, a corrupt compressed stream, a malformed CSV header or binary structure,
    or that needs more memory than there is, is exit 2 with one line naming the file (and the line
    where one can be found), never an internal error.  :class:`InputError` passes through; any other
    exception is the reader's own failure and is raised unchanged for the caller to attribute.

    ``path`` is what the messages name: a path, or a list of them (a reader's ``parts`` given several
    inputs, named together as ``a, b``; no line is looked for then, the file being unknown).
    """
    import csv
    import struct
    import zlib

    several = isinstance(path, (list, tuple))
    where = ", ".join(map(str, path)) if several else path
    file = None if several else path  # the one file to look for a line in
    try:
        return function(*args)
    except InputError:
        raise
    except RecursionError:
        raise InputError(f"nested too deeply to read (more than {DEEP_NESTING} levels of brackets in a row)",
                         where, _line_of(file, rb"[\[{](?:\s*[\[{]){%d,}" % (DEEP_NESTING - 1))) from None
    except MemoryError:
        raise InputError("too large to read: it declares or holds more data than fits in memory", where) from None
    except UnicodeDecodeError as error:  # before ValueError, its base class
        raise InputError(f"not {_codec_name(error.encoding)} text (byte 0x{bytes(error.object)[error.start]:02x})",
                         where, _undecodable_line(file, error)) from None
    except ValueError as error:
        if "integer string conversion" not in str(error) and "int_max_str_digits" not in str(error):
            raise
        limit = sys_int_digits()
        raise InputError(f"a number has more than {limit:,} digits; no measurement has that many",
                         where, _line_of(file, rb"\d{%d,}" % (limit + 1))) from None
    except OverflowError as error:
        raise InputError(f"a number is out of range ({error})", where) from None
    except (zlib.error, EOFError) as error:
        raise InputError(f"a compressed stream is corrupt ({error})", where) from None
    except csv.Error as error:
        raise InputError(f"not a readable CSV table ({error})", where) from None
    except struct.error as error:
        raise InputError(f"a binary record is cut short or malformed ({error})", where) from None


def _codec_name(encoding: str) -> str:
    """``UTF-8`` for the codecs of UTF-8 (``utf-8``, ``utf_8``, ``utf-8-sig``), else the codec's own name."""
    import codecs

    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return encoding
    return "UTF-8" if name in ("utf-8", "utf-8-sig") else name


def _undecodable_line(path, error: UnicodeDecodeError) -> int | None:
    """The line of the file ``path`` where ``error`` stopped decoding, where that can be told (None otherwise).

    As :func:`read_text` counts it: from the bytes the reader decoded when they are the whole file
    (``read_bytes().decode()``, ``read_text()``, ``open().read()``).  A reader that decodes in pieces
    (``for line in open(path)``) gives one piece: its bytes up to the bad one, found in the file, tell
    where it was.  Bytes that are not the file's (decompressed, or another file's) give no line.
    """
    import mmap
    import os

    data = bytes(error.object)
    if path is None:
        return None
    try:
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            return None
        with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as content:
            if len(content) == len(data) and content[:] == data:
                offset = error.start
            else:
                before = data[max(0, error.start - 256):error.start]
                piece = before + data[error.start:error.end]
                found = content.find(piece)
                if found < 0 or not before:  # no bytes before the bad one to place it by
                    return None
                offset = found + len(before)
            return content[:offset].count(b"\n") + 1
    except (OSError, ValueError, TypeError):
        return None


def sys_int_digits() -> int:
    import sys

    getter = getattr(sys, "get_int_max_str_digits", None)
    return getter() if getter else 4300


def _line_of(path, pattern: bytes) -> int | None:
    """The line of the first match of ``pattern`` in the file (for messages; None when unknown)."""
    import os
    import re

    if path is None:
        return None
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > 1 << 30:
            return None
        data = pathlib.Path(path).read_bytes()
    except OSError:
        return None
    found = re.search(pattern, data)
    return data.count(b"\n", 0, found.start()) + 1 if found else None
