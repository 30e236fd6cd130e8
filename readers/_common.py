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
from typing import Callable, Mapping, Sequence

import numpy as np

from extrap_plugins.errors import InputError
from extrap_plugins.experiment import Experiment, Metric, row_codes
from extrap_plugins.formatting import format_point

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
def read_text(path: pathlib.Path) -> str:
    """The whole file as text (UTF-8, a byte-order mark dropped).

    Raises
    ------
    InputError
        The file cannot be opened, or is not UTF-8 text (naming the line).
    """
    try:
        data = pathlib.Path(path).read_bytes()
    except IsADirectoryError:
        raise InputError("is a folder; this reader reads one file", path) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", path) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError(f"not UTF-8 text (byte 0x{data[error.start]:02x}); is this the right reader?",
                         path, line) from None


def head(path: pathlib.Path, size: int = 4096) -> bytes:
    """The first ``size`` bytes of a file, or b"" when it cannot be read (for sniffers)."""
    try:
        with open(path, "rb") as stream:
            return stream.read(size)
    except OSError:
        return b""


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


# ---------------------------------------------------------------- conversion
def to_float(column: Sequence, path, line_of: LineOf, what: str) -> np.ndarray:
    """Convert a column of parsed values to float64, every value finite.

    Parameters
    ----------
    column : sequence, length n
        Numbers (or numeric strings) as parsed.
    line_of : callable(int) -> int or None
        The line of the i-th entry, for the error message.
    what : str
        How to name the column in a message ("value", "parameter 'p'",
        "column 'p':"; a trailing colon is dropped before "is empty").

    Returns
    -------
    ndarray of float64, shape (n,)

    Raises
    ------
    InputError
        At the first entry that is not a finite number, naming its line.
    """
    try:
        array = np.asarray(column, dtype=np.float64)
        if array.ndim == 1 and np.isfinite(array).all():
            return array
    except (TypeError, ValueError):
        pass
    for i, entry in enumerate(column):
        problem = _number_problem(entry)
        if problem:
            prefix = what.rstrip(":") if problem == "is empty" else what
            raise InputError(f"{prefix} {problem}", path, line_of(i))
    raise InputError(f"{what}: expected numbers", path)  # pragma: no cover - unreachable


def _number_problem(entry) -> str:
    """What is wrong with ``entry`` as a measured number, or "" when nothing is."""
    if isinstance(entry, str) and not entry.strip():
        return "is empty"
    if isinstance(entry, bool) or entry is None or isinstance(entry, (list, dict)):
        return f"{_show(entry)} is not a number"
    try:
        number = float(entry)
    except (TypeError, ValueError):
        return f"{_show(entry)} is not a number"
    return "" if np.isfinite(number) else f"{_show(entry)} is not a finite number"


def _show(entry) -> str:
    """A value as the user wrote it: JSON for parsed JSON values, quoted for text."""
    if isinstance(entry, str):
        return repr(entry)
    try:
        return json.dumps(entry)
    except (TypeError, ValueError):
        return repr(entry)


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
    shown = ", ".join(format_point(p, parameters, brackets=True) for p in missing[:5])
    more = f" and {missing.shape[0] - 5} more" if missing.shape[0] > 5 else ""
    name_c = callpath[0][callpath[1][row]]
    name_m = metric[0][metric[1][row]]
    raise InputError(
        f"call path {name_c!r}, metric {name_m!r} is measured at {int(counts[worst])} of the "
        f"{n_points} points; missing: {shown}{more} (Extra-P needs every series at every point; "
        f"--reader-option incomplete=allow reads it anyway)",
        path, line_of(row),
    )






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
    if len(set(parameters)) != len(parameters):
        duplicated = sorted({p for p in parameters if list(parameters).count(p) > 1})
        raise InputError(f"parameter {', '.join(map(repr, duplicated))} is declared twice", path)
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
    """An InputError for invalid JSON at the decoder's line and column."""
    return InputError(f"not valid JSON: {error.msg} (column {error.colno})", path, error.lineno + line_offset)


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
