"""Readers for experiments saved by Extra-P: ``extrap-experiment`` (Extra-P 4, ``*.extra-p``) and ``extrap3``.

``extrap-experiment``: Extra-P 4 saves an experiment as a zip archive with
``experiment.json``::

    {"Extra-P": "4.2.0", "parameters": ["x", "y"],
     "measurements": {"merge": {"time": [{"coordinate": [20.0, 1.0], "mean": 0.99, "median": 1.0,
                                          "minimum": 0.98, "maximum": 1.01, "std": 0.01,
                                          "repetitions": 5, "values": null}, ...]}},
     "modelers": [...]}

and, when it kept the repetitions, ``values: [chunk, index]`` pointing at a
numpy array in ``values/<chunk>.vals`` (located through ``values/<chunk>.indx``).

``extrap3``: Extra-P 3's binary experiment files (a byte-order mark, then
``EXTRAP_EXPERIMENT``, a version and tagged records: parameters, metrics,
regions, call paths, coordinates, model generators, experiment points, models).

Both keep the repetitions only sometimes; without them every point has one
value, the statistic chosen with ``--reader-option value=mean|median|minimum|maximum``
(default ``mean``), and the experiment notes say so.  Saved models are not
read: extrap-plugins models the measurements again.
"""

from __future__ import annotations

import io
import json
import pathlib
import re
import struct
import tokenize
import zipfile
import zlib
from dataclasses import dataclass, field

import numpy as np

from extrap_plugins.errors import InputError
from extrap_plugins.experiment import Experiment, Metric
from extrap_plugins.formatting import format_point
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.registration import ReaderInfo

from ._common import (
    DEFAULT_CALLPATH, DEFAULT_METRIC, EMPTY_FILE, build, check_options, check_parameter_names, check_points_once,
    choice, factorize, head, STATISTICS, inflate_limit_error, json_found, json_to_float, max_inflated, summary_note,
    warn_missing,
)

OPTIONS = {
    "value": "for points saved without their repetitions: the statistic that becomes the value: "
             "mean (default), median, minimum or maximum",
}
ARCHIVE = "extrap-experiment"
EXTRAP3 = "extrap3"
#: How Extra-P 4 saves a statistic that is not a finite number (and reads it back, in any case).
_SAVED_NOT_FINITE = frozenset({"nan", "inf", "-inf"})
_MAGIC3 = b"EXTRAP_EXPERIMENT"
_ZIP_MAGIC = b"PK\x03\x04"


@hookimpl
def extrap_readers() -> list[ReaderInfo]:
    return [
        ReaderInfo(
            name=ARCHIVE,
            read=read_archive,
            description="an experiment saved by Extra-P 4 (*.extra-p zip archive)",
            patterns=("*.extra-p",),
            sniff=sniff_archive,
            options=OPTIONS,
        ),
        ReaderInfo(
            name=EXTRAP3,
            read=read_extrap3,
            description="an experiment saved by Extra-P 3 (binary, starts with EXTRAP_EXPERIMENT)",
            sniff=sniff_extrap3,
            options=OPTIONS,
        ),
    ]


def _statistic(options: dict[str, str], reader: str) -> str:
    return choice(check_options(options, OPTIONS, reader), "value", STATISTICS, "mean")


# ================================================================ Extra-P 4
def sniff_archive(path: pathlib.Path) -> bool:
    """A zip archive holding ``experiment.json``."""
    if not head(path, 4).startswith(_ZIP_MAGIC):
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return "experiment.json" in archive.namelist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return False


def read_archive(path: pathlib.Path, options: dict[str, str]) -> Experiment:
    """Read an Extra-P 4 experiment archive (``*.extra-p``)."""
    statistic = _statistic(options, ARCHIVE)
    try:
        if pathlib.Path(path).stat().st_size == 0:
            raise InputError(EMPTY_FILE, path)
        with zipfile.ZipFile(path) as archive:
            members = _Members(archive, path)
            document = members.read("experiment.json", "no experiment.json in this zip archive; is it an "
                                                        "Extra-P experiment?")
            values = _ValueStore(members, path)
            return _archive_experiment(document, values, path, statistic)
    except zipfile.BadZipFile as error:
        raise _bad_zip(error, path) from None
    except (NotImplementedError, RuntimeError) as error:  # compression method unknown, encrypted member
        raise InputError(f"cannot unpack this zip archive ({error})", path) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", path) from None


def _bad_zip(error: zipfile.BadZipFile, path) -> InputError:
    """What is wrong with a file that does not read as a zip archive: none at all, cut short or damaged."""
    if not head(path, 4).startswith(_ZIP_MAGIC):
        return InputError(f"not a valid zip archive ({error}); Extra-P 4 experiments are zip archives", path)
    if str(error) == "File is not a zip file":  # a zip's directory is at its end: none found there
        return InputError("truncated zip archive: it starts as one, but the directory at its end is missing (the "
                          "file was cut short)", path)
    return InputError(f"damaged zip archive: {error}", path)


class _Members:
    """The members of an archive, inflated within :func:`~._common.max_inflated` bytes in all.

    The size a member declares is checked before any byte is inflated (a
    1 MB archive that claims a gigabyte is refused at once); the inflated
    bytes are counted too, in pieces, so a member that lies about its size
    cannot go past the limit either.
    """

    PIECE = 1 << 20

    def __init__(self, archive: zipfile.ZipFile, path):
        self.archive = archive
        self.path = path
        self.limit = max_inflated()
        self.used = 0

    def read(self, name: str, missing: str) -> bytes:
        try:
            info = self.archive.getinfo(name)
        except KeyError:
            raise InputError(missing, self.path) from None
        if self.used + info.file_size > self.limit:
            raise inflate_limit_error(self.used + info.file_size, self.limit, name, self.path)
        pieces = []
        with self.archive.open(info) as stream:
            while True:
                try:
                    piece = stream.read(self.PIECE)
                except zlib.error as error:
                    raise InputError(f"damaged zip archive: {name} cannot be inflated ({error})", self.path) from None
                if not piece:
                    break
                self.used += len(piece)
                if self.used > self.limit:
                    raise inflate_limit_error(self.used, self.limit, name, self.path)
                pieces.append(piece)
        return b"".join(pieces)


def _document_json(document: bytes, where: str, path):
    """The parsed ``experiment.json`` (``where``) of the archive ``path``.

    Raises
    ------
    InputError
        It is not UTF-8 or not valid JSON: the message names the member's line and column (the line of the file
        would be one of a zip archive).
    """
    try:
        text = document.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = document.count(b"\n", 0, error.start) + 1
        raise InputError(f"{where}, line {line}: not UTF-8 text (byte 0x{document[error.start]:02x})", path) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{where}, line {error.lineno}, column {error.colno}: not valid JSON: {error.msg}"
                         f"{json_found(error, document=True)}", path) from None


def _archive_experiment(document: bytes, values: _ValueStore, path, statistic: str) -> Experiment:
    where = "experiment.json"  # what messages name inside the archive: its lines are not lines of the file
    data = _document_json(document, where, path)
    if not isinstance(data, dict) or not isinstance(data.get("measurements"), dict):
        raise InputError("experiment.json has no 'measurements' object", path)
    parameters = data.get("parameters")
    if not isinstance(parameters, list) or not parameters or not all(isinstance(p, str) and p.strip()
                                                                     for p in parameters):
        raise InputError("experiment.json: 'parameters' must be a non-empty list of names", path)
    try:
        check_parameter_names(parameters, path)
    except InputError as error:
        raise InputError(f"experiment.json: {error.message}", path) from None
    entries, callpaths, metrics = [], [], []
    for callpath, by_metric in data["measurements"].items():
        if not isinstance(by_metric, dict):
            raise InputError(f"experiment.json: call path {callpath!r} must map metrics to measurements", path)
        for metric, points in by_metric.items():
            if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
                raise InputError(f"experiment.json: call path {callpath!r}, metric {metric!r} must hold a list of "
                                 "measurements", path)
            entries.extend(points)
            callpaths.extend([callpath] * len(points))
            metrics.extend([metric] * len(points))
    if not entries:
        raise InputError("the experiment has no measurements", path)
    coordinates = [e.get("coordinate") for e in entries]
    if not all(isinstance(c, list) and len(c) == len(parameters) for c in coordinates):
        i = next(i for i, c in enumerate(coordinates) if not (isinstance(c, list) and len(c) == len(parameters)))
        raise InputError(f"experiment.json: measurement {i + 1} of call path {callpaths[i]!r}, metric {metrics[i]!r} "
                         f"has coordinate {json.dumps(coordinates[i])}, expected {len(parameters)} values", path)
    stored = [e.get("values") for e in entries]
    no_line = lambda i: None  # noqa: E731 - positions inside a zip member are not lines of the file

    def place(i: int) -> str:
        """Where entry i is in experiment.json: ``measurements["merge"]["time"][3]``."""
        index = sum(1 for j in range(i) if (callpaths[j], metrics[j]) == (callpaths[i], metrics[i]))
        return f"measurements[{json.dumps(callpaths[i])}][{json.dumps(metrics[i])}][{index}]"

    def measurement(i: int) -> str:
        """Entry i by its call path, metric and point (and its place in the JSON, to find it there)."""
        point = ", ".join(f"{n}={json.dumps(v)}" for n, v in zip(parameters, coordinates[i]))
        return f"{where}: call path {callpaths[i]!r}, metric {metrics[i]!r}, point ({point}) ({place(i)})"

    if any(s is not None for s in stored):
        arrays = [values.read(s, where) if s is not None else np.asarray([_saved(e, statistic)], dtype=object)
                  for s, e in zip(stored, entries)]
        counts = np.fromiter((a.size for a in arrays), dtype=np.int64, count=len(arrays))
        row_of = np.repeat(np.arange(len(entries)), counts)
        first = np.concatenate([[0], np.cumsum(counts)])

        def label(i: int) -> str:
            row = int(row_of[i])
            if stored[row] is None:
                return f"{measurement(row)}, its {statistic}"
            return f"{measurement(row)}, saved repetition {i - int(first[row]) + 1} of {int(counts[row])}"

        value = json_to_float(np.concatenate([np.ravel(a) for a in arrays]).tolist(), path, no_line, "value", label,
                              missing=True)
        notes = [] if all(s is not None for s in stored) else [summary_note(statistic, "part of the experiment")]
    else:
        counts = np.ones(len(entries), dtype=np.int64)
        row_of = np.arange(len(entries))
        value = json_to_float([_saved(e, statistic) for e in entries], path, no_line, statistic, measurement,
                              missing=True)
        notes = [summary_note(statistic, "the experiment")]
    point = np.column_stack([json_to_float(column, path, no_line, f"coordinate of {name!r}", measurement)
                             for column, name in zip(zip(*coordinates), parameters)])
    callpath_names, callpath_codes = factorize(callpaths)
    metric_names, metric_codes = factorize(metrics)
    try:
        check_points_once(parameters, (callpath_names, callpath_codes), (metric_names, metric_codes), point, path,
                          no_line, place)
    except InputError as error:  # one entry holds all the repetitions of its point: a second one is damage
        raise InputError(f"{where}: {error.message}", path) from None
    callpath_names, metric_names = _named(callpath_names, DEFAULT_CALLPATH), _named(metric_names, DEFAULT_METRIC)
    experiment = build(parameters, (callpath_names, callpath_codes[row_of]), (metric_names, metric_codes[row_of]),
                       point[row_of], value, path, ARCHIVE, notes=notes)
    warn_missing(experiment, path,
                 place_of=lambda i: format_point(experiment.coordinates[i], parameters, brackets=True))
    return experiment


def _saved(entry: dict, statistic: str):
    """The entry's statistic: Extra-P writes one that is not finite as the string "nan", "inf" or "-inf", a
    missing value (as every reader reads a value that is not finite)."""
    value = entry.get(statistic)
    return float("nan") if isinstance(value, str) and value.lower() in _SAVED_NOT_FINITE else value


def _named(names: list[str], default: str) -> list[str]:
    """Extra-P names a value without a call path or metric (in its text reader) "": ``default`` here, as in
    every reader, unless the experiment has a call path or metric of that name too."""
    if "" in names and default not in names:
        return [default if name == "" else name for name in names]
    return names


class _ValueStore:
    """The repetitions Extra-P 4 stores beside experiment.json: numpy arrays in ``values/<chunk>.vals``."""

    INDEX_MAGIC = b"Extra-P INDEX\0\0\0"
    VALUES_MAGIC = b"Extra-P VALUES\0\0"

    def __init__(self, archive: _Members, path):
        self.archive = archive
        self.path = path
        self.chunks: dict[int, tuple[np.ndarray, bytes]] = {}

    def read(self, reference, where: str) -> np.ndarray:
        """The array at ``[chunk, index]``, flattened."""
        if not (isinstance(reference, list) and len(reference) == 2 and all(isinstance(r, int) for r in reference)):
            raise InputError(f"{where}: 'values' must be [chunk, index], got {json.dumps(reference)}", self.path)
        chunk, index = reference
        offsets, data = self._chunk(chunk)
        if not 0 <= index < offsets.shape[0]:
            raise InputError(f"values/{chunk}.indx has {offsets.shape[0]} entries; no entry {index}", self.path)
        try:
            array = _npy_array(data, int(offsets[index]))
        except (ValueError, OSError, TypeError) as error:
            raise InputError(f"values/{chunk}.vals: entry {index} is not a numpy array ({error})", self.path) from None
        return np.ravel(np.asarray(array))

    def _chunk(self, chunk: int) -> tuple[np.ndarray, bytes]:
        if chunk not in self.chunks:
            names = f"values/{chunk}.indx", f"values/{chunk}.vals"
            index, data = (self.archive.read(n, f"the archive lacks {n}, which holds saved repetitions")
                           for n in names)
            if not index.startswith(self.INDEX_MAGIC) or not data.startswith(self.VALUES_MAGIC) or len(index) < 24:
                raise InputError(f"values/{chunk}.indx or .vals is not an Extra-P value file", self.path)
            (count,) = struct.unpack_from("<Q", index, 16)
            if len(index) < 24 + 8 * count:
                raise InputError(f"values/{chunk}.indx is truncated", self.path)
            self.chunks[chunk] = (np.frombuffer(index, dtype="<u8", count=count, offset=24), data)
        return self.chunks[chunk]


def _npy_array(data: bytes, offset: int) -> np.ndarray:
    """The numpy array stored at ``offset``, its declared size checked against the bytes there before anything
    is allocated (a header claiming 2**40 values is an error, not an attempt to allocate 8 TiB)."""
    stream = io.BytesIO(data)
    stream.seek(offset)
    version = np.lib.format.read_magic(stream)
    if version not in ((1, 0), (2, 0), (3, 0)):
        raise ValueError(f"unknown format version {version}")
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    try:
        shape, fortran, dtype = read_header(stream)
    except (SyntaxError, tokenize.TokenError):  # numpy tokenizes the header: an unbalanced bracket
        raise ValueError("its header cannot be read") from None
    if dtype.hasobject:
        raise ValueError("it holds Python objects")
    count = int(np.prod(shape, dtype=object)) if shape else 1
    start = stream.tell()
    if count * dtype.itemsize > len(data) - start:
        raise ValueError(f"its header declares {count:,} values of {dtype.itemsize} bytes, "
                         f"but only {len(data) - start:,} bytes follow")
    array = np.frombuffer(data, dtype=dtype, count=count, offset=start)
    return array.reshape(shape, order="F" if fortran else "C")


# ================================================================ Extra-P 3
def sniff_extrap3(path: pathlib.Path) -> bool:
    """Starts with a byte-order mark and the string ``EXTRAP_EXPERIMENT``."""
    data = head(path, 2 + 4 + len(_MAGIC3))
    return data[6:] == _MAGIC3 and data[:2] in (b"\x01\x00", b"\x00\x01")


# coordinate, samples, mean, mean CI (2), std, median, median CI (2), minimum, maximum, metric, call path
_POINT = "qqdddddddddqq"
_STAT_FIELD = {"mean": 2, "median": 6, "minimum": 9, "maximum": 10}
_SINGLE_STRATEGIES = ("FIRST_POINTS_FOUND", "MAX_NUMBER_POINTS", "CHEAPEST_POINTS")
_MULTI_STRATEGIES = ("INCREASING_COST", "DECREASING_COST")
#: A string at least this long, or a list of at least this many items, that the file cannot hold is corrupt (a
#: swapped or overwritten byte in its length makes it 256 times larger), not cut short by the end of the file.
_SHORT_STRING, _SHORT_LIST = 4096, 256
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]")


class _Damaged(Exception):
    """What the bytes cannot be: ``truncated`` when the file ends inside a field of fixed size, inside a string
    (a short one, and what is left of it is text) or a short list; otherwise the record is corrupt (a length or
    count no file holds: bytes swapped or overwritten, not a file cut short), or holds a value no record has."""

    def __init__(self, detail: str, truncated: bool = False):
        super().__init__(detail)
        self.detail = detail
        self.truncated = truncated


@dataclass
class _Binary:
    """A cursor over Extra-P 3's binary stream."""

    data: bytes
    order: str = "<"
    position: int = 0

    def unpack(self, pattern: str) -> tuple:
        fmt = struct.Struct(self.order + pattern)
        if self.position + fmt.size > len(self.data):
            raise _Damaged(f"a {fmt.size}-byte field at byte {self.position} runs past the end of the file",
                           truncated=True)
        result = fmt.unpack_from(self.data, self.position)
        self.position += fmt.size
        return result

    def int(self) -> int:
        return self.unpack("q")[0]

    def count(self, item_size: int) -> int:
        """A number of items that follow, each at least ``item_size`` bytes: what the rest of the file can hold."""
        at = self.position
        n = self.int()
        left = len(self.data) - self.position
        if n < 0 or n * item_size > left:
            raise _Damaged(f"the count at byte {at} is {n:,}, " + ("a negative number" if n < 0 else
                           f"more items than the {left:,} bytes after it can hold"),
                           truncated=0 <= n < _SHORT_LIST)
        return n

    def double(self) -> float:
        return self.unpack("d")[0]

    def string(self) -> str | None:
        """A length-prefixed UTF-8 string; None at the end of the data."""
        if self.position == len(self.data):
            return None
        at = self.position
        (size,) = self.unpack("I")
        left = len(self.data) - self.position
        if size > left:
            rest = self.data[self.position:].decode("utf-8", errors="replace")
            raise _Damaged(f"the string at byte {at} declares {size:,} bytes, but only {left:,} follow",
                           truncated=size < _SHORT_STRING and not _CONTROL.search(rest))
        text = self.data[self.position:self.position + size].decode("utf-8", errors="replace")
        self.position += size
        return text


@dataclass
class _Extrap3:
    """What an Extra-P 3 file holds that an Experiment needs."""

    parameters: list[str] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    regions: dict[int, str] = field(default_factory=dict)
    region_names: dict[str, int] = field(default_factory=dict)
    callpaths: dict[int, str] = field(default_factory=dict)
    coordinates: dict[int, list[float]] = field(default_factory=dict)
    points: list[tuple] = field(default_factory=list)
    sparse: bool = False


def read_extrap3(path: pathlib.Path, options: dict[str, str]) -> Experiment:
    """Read an experiment saved by Extra-P 3."""
    statistic = _statistic(options, EXTRAP3)
    try:
        data = pathlib.Path(path).read_bytes()
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", path) from None
    if not data:
        raise InputError(EMPTY_FILE, path)
    if data[2:6 + len(_MAGIC3)] not in (struct.pack(o + "I", len(_MAGIC3)) + _MAGIC3 for o in "<>"):
        raise InputError("not an Extra-P 3 experiment (it does not start with EXTRAP_EXPERIMENT)", path)
    order = "<" if data[:2] == b"\x01\x00" else ">" if data[:2] == b"\x00\x01" else None
    if order is None or struct.unpack_from(order + "I", data, 2)[0] != len(_MAGIC3):
        actual = "little" if struct.unpack_from("<I", data, 2)[0] == len(_MAGIC3) else "big"
        said = {"<": "says little-endian", ">": "says big-endian", None: "is neither 01 00 nor 00 01"}[order]
        raise InputError(f"corrupt Extra-P 3 header: the byte-order mark at byte 0 ({data[:2].hex(' ')}) {said}, "
                         f"but the header after it is {actual}-endian", path)
    stream = _Binary(data, order, 2 + 4 + len(_MAGIC3))
    what, start = "the header", 0
    content = _Extrap3()
    try:
        stream.string()  # version
        while True:
            start, what = stream.position, "a record"
            tag = stream.string()
            if tag is None:
                break
            what = f"the {_shown(tag)} record"
            handler = _HANDLERS.get(tag)
            if handler is None:
                raise InputError(f"corrupt Extra-P 3 experiment: unknown record {_shown(tag)} at byte {start}", path)
            handler(stream, content, path)
    except _Damaged as damage:
        if damage.truncated:
            message = (f"truncated Extra-P 3 experiment: {what} at byte {start} is cut off by the end of the file "
                       f"at byte {len(data)}")
        else:
            message = f"corrupt Extra-P 3 experiment: {what} at byte {start}: {damage.detail}"
        raise InputError(message, path) from None
    return _extrap3_experiment(content, path, statistic)


def _shown(text: str) -> str:
    """A name read from the file, quoted and cut to 40 characters (a corrupt one can be any bytes)."""
    return repr(text[:40] + ("..." if len(text) > 40 else ""))


def _extrap3_experiment(content: _Extrap3, path, statistic: str) -> Experiment:
    if not content.parameters:
        raise InputError("the experiment declares no parameters", path)
    if not content.points:
        raise InputError("the experiment has no measurements", path)
    points = content.points
    missing = [p for p in points if p[0] not in content.coordinates or p[12] not in content.callpaths
               or not 0 <= p[11] < len(content.metrics)]
    if missing:
        p = missing[0]
        raise InputError(f"a measurement refers to coordinate {p[0]}, metric {p[11]}, call path {p[12]}, which the "
                         "experiment does not declare", path)
    coordinates = np.asarray([content.coordinates[p[0]] for p in points], dtype=np.float64)
    value = np.asarray([p[_STAT_FIELD[statistic]] for p in points], dtype=np.float64)
    value[~np.isfinite(value)] = np.nan  # missing, as in every reader (warn_missing)
    callpath = factorize([content.callpaths[p[12]] for p in points])
    metric_names = [m.name for m in content.metrics]
    metric = factorize([metric_names[p[11]] for p in points])
    experiment = build(content.parameters, callpath, metric, coordinates, value, path, EXTRAP3,
                       metrics=content.metrics, notes=[summary_note(statistic, "an Extra-P 3 experiment")])
    warn_missing(experiment, path, place_of=lambda i: format_point(coordinates[i], content.parameters, brackets=True))
    return experiment


# Records --------------------------------------------------------------------
def _parameter(stream: _Binary, content: _Extrap3, path) -> None:
    stream.int()
    content.parameters.append(stream.string() or "")


def _metric(stream: _Binary, content: _Extrap3, path) -> None:
    stream.int()
    name, unit = stream.string() or "", stream.string() or ""
    content.metrics.append(Metric(name, "" if unit == "unknown" else unit))


def _region(stream: _Binary, content: _Extrap3, path) -> None:
    identifier = stream.int()
    name = stream.string() or ""
    stream.string()  # source file
    stream.int()  # first line
    if identifier not in content.regions and name in content.region_names:
        content.region_names[name] += 1  # another region of the same name: "name #1", "name #2", ...
        name = f"{name} #{content.region_names[name]}"
    else:
        content.region_names[name] = 0
    content.regions[identifier] = name


def _callpath(stream: _Binary, content: _Extrap3, path) -> None:
    identifier, region, parent = stream.unpack("qqq")
    if region not in content.regions or (parent != -1 and parent not in content.callpaths):
        raise _Damaged(f"call path {identifier} refers to an undeclared region or parent")
    name = content.regions[region]
    content.callpaths[identifier] = name if parent == -1 else content.callpaths[parent] + "->" + name


def _coordinate(stream: _Binary, content: _Extrap3, path) -> None:
    identifier = stream.int()
    values = [0.0] * len(content.parameters)
    for _ in range(stream.count(4 + 8)):
        name, value = stream.string(), stream.double()
        if name not in content.parameters:
            raise _Damaged(f"coordinate {identifier} names the undeclared parameter {_shown(str(name))}")
        values[content.parameters.index(name)] = value
    content.coordinates[identifier] = values


def _comment(stream: _Binary, content: _Extrap3, path) -> None:
    stream.int()
    stream.string()


def _point(stream: _Binary, content: _Extrap3, path) -> None:
    content.points.append(stream.unpack(_POINT))


def _strategies(stream: _Binary, content: _Extrap3) -> None:
    """Optional newer generator options; absent in older files (then the stream rewinds)."""
    start = stream.position
    try:
        stream.int()
        single = stream.string()
        stream.unpack("qq")
        multi = stream.string()
    except _Damaged:
        single = multi = None
    if single in _SINGLE_STRATEGIES and multi in _MULTI_STRATEGIES:
        content.sparse = True
    else:
        stream.position = start


def _single_generator(stream: _Binary, content: _Extrap3, path) -> None:
    stream.string()  # user name
    stream.string()  # cross-validation method
    stream.double()  # epsilon
    stream.string()  # mean or median
    _strategies(stream, content)


def _single_simple_generator(stream: _Binary, content: _Extrap3, path) -> None:
    _single_generator(stream, content, path)
    for _ in range(stream.count(4)):
        _expect(stream, "CompoundTerm", path)
        _compound_term(stream, path)
    stream.int()  # maximum term count


def _multi_generator(stream: _Binary, content: _Extrap3, path) -> None:
    stream.string()  # user name
    stream.string()  # mean or median
    _strategies(stream, content)


def _model(stream: _Binary, content: _Extrap3, path) -> None:
    stream.unpack("qqq")  # metric, call path, generator
    _function(stream, path)
    for _ in range(3):  # confidence, error cone and noise intervals: upper and lower functions
        _function(stream, path)
        _function(stream, path)
    stream.unpack("dddd" if content.sparse else "ddd")  # RSS, adjusted R^2, SMAPE[, RE]
    for _ in range(stream.count(8)):
        stream.int()  # comment id
    for _ in range(stream.count(4)):
        stream.string()
        for _ in range(stream.count(16)):
            stream.unpack("dd")


def _function(stream: _Binary, path) -> None:
    kind = stream.string()
    if kind == "SingleParameterFunction":
        stream.double()
        for _ in range(stream.count(4)):
            _expect(stream, "CompoundTerm", path)
            _compound_term(stream, path)
    elif kind == "MultiParameterFunction":
        stream.double()
        for _ in range(stream.count(8)):
            stream.double()
            for _ in range(stream.count(4)):
                stream.string()
                _expect(stream, "CompoundTerm", path)
                _compound_term(stream, path)
    elif kind == "SimpleTerm":
        stream.string()
        stream.double()
    elif kind == "CompoundTerm":
        _compound_term(stream, path)
    elif kind != "Function":
        raise _Damaged(f"unknown function type {_shown(str(kind))} in a saved model")


def _compound_term(stream: _Binary, path) -> None:
    stream.double()
    for _ in range(stream.count(4)):
        _expect(stream, "SimpleTerm", path)
        stream.string()
        stream.double()


def _expect(stream: _Binary, tag: str, path) -> None:
    at = stream.position
    found = stream.string()
    if found != tag:
        raise _Damaged(f"expected {tag} at byte {at} in a saved model, found {_shown(str(found))}")


_HANDLERS = {
    "Parameter": _parameter,
    "Metric": _metric,
    "Region": _region,
    "Callpath": _callpath,
    "Coordinate": _coordinate,
    "ModelComment": _comment,
    "SingleParameterSimpleModelGenerator": _single_simple_generator,
    "SingleParameterRefiningModelGenerator": _single_generator,
    "MultiParameterSimpleModelGenerator": _multi_generator,
    "MultiParameterSparseModelGenerator": _multi_generator,
    "ExperimentPoint": _point,
    "Model": _model,
}
