"""Mutation fuzzing of every reader on the real files in ``../shared/data``: nothing lost, nothing misreported.

Usage (from the project root)::

    .venv/bin/python benchmarks/fuzz.py [--cases 2000] [--seed 14] [--timeout 20] [--show 10]

Each case is one real file (or one CUBE profile) with a deterministic mutation applied (bytes flipped,
inserted, deleted or duplicated; a line dropped or repeated; the file cut short; a number replaced by one
that is huge, too long, negative, NaN or not a number; nesting 10,000 deep; a CSV header broken; a member of
a ``.extra-p`` archive mutated and zipped again, or its deflate stream corrupted), written to a fresh
folder and given to ``extrap-plugins model`` through the CLI's ``main()`` in this process.  The outcome
of each case is one of

``ok``           exit 0 (a model);
``clean error``  exit 2 and exactly one line on stderr, ``extrap-plugins: error: ...`` naming the file;
``internal``     anything else: exit 1 or 3, a traceback, several error lines, an exception escaping main;
``hang``         no answer within ``--timeout`` seconds;
``modified``     the input's bytes changed.

The target is 0 internal, hang and modified for any seed.  ``tests/test_fuzz.py`` runs a short
deterministic slice of the same cases in CI; this script prints the figures table of the README.

``--damages`` runs instead every real text input (CSV, Extra-P text, JSON, JSON Lines, Talpas, the
``experiment.json`` of an ``.extra-p``) with each damage of :data:`DAMAGES` in turn, the ways real files get
damaged: cut short mid-line and mid-number, a NUL byte, UTF-16/UTF-32/Latin-1, byte-order marks, CRLF and CR,
a stray tab, a header twice, a decimal comma, ``nan``/``inf``/``1e400``/``-0``, an empty value, a 10 MB line,
a bracket missing, a value of the wrong type at depth, keys in another case, an empty file.  A clean error
there must also name a line (``FILE:LINE:``) where the damage is on one, and no message may run past
:data:`LONGEST` characters.

``--arguments`` fuzzes the command line instead: a new user's mistakes in the options of every command
(:data:`ARGUMENT_BASES`: model, efficiency, compare, suggest, autotune, run, plugins, requirements, whatif), made
by :func:`argument_calls` from each command's own parser (unknown and misspelt options, a value left out, empty,
with a NUL byte or a newline, 100,000 characters long; numbers zero, negative, NaN, infinite or huge; shares such
as ``120%``, ``-5%``, ``%``; parameter specs and targets such as ``p=``, ``p=1,,2``, ``=1``, a name twice; globs
that match nothing; ``-o`` at an input, at a folder that takes no files, at ``/dev/full``; files given as folders
and folders as files; :data:`CONTRADICTIONS`) on copies of real inputs (:data:`ARGUMENT_INPUTS`), each run as
``PYTHON -m extrap_plugins`` (``--python``: a wheel's venv) in a fresh folder with a 60 s limit::

    .venv/bin/python benchmarks/fuzz.py --arguments --python /tmp/venv/bin/python [--cases 300] [--seed 14]

Its table counts ``exit 0``, ``exit 2`` (one error line, the last), ``exit 4`` (``run``/``autotune``: the program
failed), ``internal`` (exit 1, a traceback, or anything else), ``hang`` and ``modified`` (a file the command reads
changed); each line as given (without a mistake) must be ``exit 0``, and an ``exit 2`` that names neither the
option nor the value (:func:`names_its_option`) is listed too.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import pathlib
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = (ROOT / ".." / "shared" / "data").resolve()
OUTCOMES = ("ok", "clean error", "internal", "hang", "modified")
#: Options a seed needs to be read at all (as the README shows for the statistics table).
SEED_ARGUMENTS = {
    "extrap/mpi_data.csv": ("--reader-option", "value=median", "--reader-option", "parameters=Ranks",
                            "--reader-option", "callpath=mpi,variable"),
}


@dataclass(frozen=True)
class Seed:
    """A real input file and the format it is in (for the table)."""

    path: pathlib.Path
    format: str
    arguments: tuple[str, ...] = ()


def seeds(data: pathlib.Path = DATA) -> list[Seed]:
    """Every real input file under ``data`` that a reader reads, with its format, in a stable order."""
    found = []
    for path in sorted(data.rglob("*")):
        if not path.is_file() or path.name.startswith(".") or path.suffix.lower() == ".md":
            continue
        relative = path.relative_to(data).as_posix()
        name = path.name.lower()
        if relative.startswith("caliper/"):
            continue  # no reader for Caliper files (yet)
        if name.endswith(".cubex"):
            kind = "cube"
        elif name.endswith(".extra-p"):
            kind = "extra-p"
        elif name.endswith(".jsonl"):
            kind = "json lines"
        elif name.endswith(".json"):
            kind = "json"
        elif name.endswith(".csv"):
            kind = "csv"
        elif relative.startswith("extrap/talpas/"):
            kind = "talpas"
        elif name.endswith(".txt"):
            kind = "text"
        elif relative.startswith("extrap/input/experiment"):
            kind = "extrap3"
        else:
            continue
        found.append(Seed(path, kind, SEED_ARGUMENTS.get(relative, ())))
    return found


# ------------------------------------------------------------------ mutations
HUGE_NUMBERS = (b"1" + b"0" * 400, b"9" * 5000, b"-1e999", b"1e400", b"NaN", b"-Infinity", b"2147483648",
                b"18446744073709551616", b"-0", b"0x1F", b"1_000", b"\"12\"", b"[]", b"{}", b"null", b"true", b"",
                b"\xff\xfe", b"\x00", b"1" * 20)
TOKENS = (b"\r", b"\n", b"\r\n", b",", b";", b"\t", b"\"", b"{", b"}", b"[", b"]", b"(", b")", b":", b"#",
          b"REGION ", b"METRIC ", b"DATA ", b"POINTS ", b"PARAMETER ", b"->", b"\xc3", b"\xef\xbb\xbf")


def _numbers(data: bytes) -> list[tuple[int, int]]:
    import re

    return [m.span() for m in re.finditer(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", data[:200_000])]


def mutate(data: bytes, rng: random.Random, kind: str) -> tuple[bytes, str]:
    """One mutation of ``data``: the new bytes and a short description."""
    n = len(data)
    choice = rng.randrange(14)
    at = rng.randrange(n + 1) if n else 0
    if choice == 0 and n:
        i = rng.randrange(n)
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:], f"bit flip at {i}"
    if choice == 1:
        token = rng.choice(TOKENS)
        return data[:at] + token + data[at:], f"insert {token!r} at {at}"
    if choice == 2 and n:
        length = rng.randrange(1, min(n, 64) + 1)
        return data[:at] + data[at + length:], f"delete {length} at {at}"
    if choice == 3:
        return data[:at], f"cut at {at}"
    if choice == 4 and n:
        length = rng.randrange(1, min(n - at, 4096) + 1) if at < n else 0
        return data[:at] + data[at:at + length] * 2 + data[at + length:], f"duplicate {length} at {at}"
    if choice in (5, 6, 7):
        spans = _numbers(data)
        if spans:
            start, end = rng.choice(spans)
            number = rng.choice(HUGE_NUMBERS)
            return data[:start] + number + data[end:], f"number at {start} -> {number[:12]!r}"
    if choice == 8:
        lines = data.split(b"\n")
        i = rng.randrange(len(lines))
        if rng.random() < 0.5:
            del lines[i]
            return b"\n".join(lines), f"drop line {i + 1}"
        lines.insert(i, lines[i])
        return b"\n".join(lines), f"repeat line {i + 1}"
    if choice == 9:
        depth = rng.choice((100, 1000, 10_000, 100_000))
        nest = b"[" * depth + b"1" + b"]" * depth
        return data[:at] + nest + data[at:], f"nesting {depth} deep at {at}"
    if choice == 10:
        if kind == "csv":
            return data.replace(b"\n", b"\r"), "CR-only line ends"
        return data.replace(b"\n", b"\r\n"), "CRLF line ends"
    if choice == 11:
        field = b"x" * rng.choice((1000, 140_000))
        return data[:at] + field + data[at:], f"long field of {len(field)} at {at}"
    if choice == 12 and n:
        i = rng.randrange(n)
        length = rng.randrange(1, 256)
        junk = bytes(rng.randrange(256) for _ in range(length))
        return data[:i] + junk + data[i + length:], f"{length} random bytes at {i}"
    lines = data.split(b"\n")
    rng.shuffle(lines)
    return b"\n".join(lines), "lines shuffled"


def mutate_archive(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Mutate a zip archive: a member's content (zipped again), or the raw bytes (corrupt deflate stream)."""
    if rng.random() < 0.3:
        return mutate(data, rng, "extra-p")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = [(info, archive.read(info)) for info in archive.infolist()]
    index = rng.randrange(len(members))
    info, content = members[index]
    if rng.random() < 0.15 and info.compress_type == zipfile.ZIP_DEFLATED and len(content) > 16:
        # keep the header, corrupt the deflate stream itself
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for other, body in members:
                archive.writestr(other.filename, body)
        raw = bytearray(out.getvalue())
        start = raw.find(info.filename.encode()) + len(info.filename) + 4
        for _ in range(8):
            j = rng.randrange(start, min(len(raw), start + max(8, len(content) // 4)))
            raw[j] ^= 0xFF
        return bytes(raw), f"corrupt deflate stream of {info.filename}"
    kind = "json" if info.filename.endswith(".json") else "binary"
    changed, how = mutate(content, rng, kind)
    members[index] = (info, changed)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for other, body in members:
            archive.writestr(other.filename, body)
    return out.getvalue(), f"{info.filename}: {how}"


def mutate_cube(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Mutate a CUBE profile (a tar archive): a member's content re-packed, or the raw bytes."""
    import tarfile

    if rng.random() < 0.4:
        return mutate(data, rng, "cube")
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            members = [(m, archive.extractfile(m).read() if m.isfile() else b"") for m in archive.getmembers()]
    except tarfile.TarError:  # CubeWriter 4.8 wrote bad tar checksums: mutate the raw bytes
        return mutate(data, rng, "cube")
    index = rng.randrange(len(members))
    member, content = members[index]
    changed, how = mutate(content, rng, "cube member")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for i, (other, body) in enumerate(members):
            body = changed if i == index else body
            copy = tarfile.TarInfo(other.name)
            copy.size = len(body)
            archive.addfile(copy, io.BytesIO(body))
    return out.getvalue(), f"{member.name}: {how}"


# --------------------------------------------------------------- real damage
#: The longest error line that is still one line for a person (a 10 MB line of the file must not be quoted whole).
LONGEST = 1000
_FLOAT = re.compile(rb"(?<![\w.])-?\d+\.\d+(?:[eE][-+]?\d+)?")


def _nth(data: bytes, fraction: float = 0.6) -> tuple[int, int] | None:
    """The span of the decimal number ``fraction`` of the way through ``data`` (a measured value, mostly)."""
    spans = [m.span() for m in _FLOAT.finditer(data)]
    return spans[min(len(spans) - 1, int(len(spans) * fraction))] if spans else None


def _at_number(data: bytes, change) -> bytes:
    """``data`` with the number :func:`_nth` finds replaced by ``change(number)``."""
    span = _nth(data)
    if span is None:
        return data
    return data[:span[0]] + change(data[span[0]:span[1]]) + data[span[1]:]


def _in_middle_line(data: bytes, change) -> bytes:
    """``data`` with its line 60 % of the way down replaced by ``change(line)``."""
    lines = data.split(b"\n")
    i = min(len(lines) - 1, int(len(lines) * 0.6))
    lines[i] = change(lines[i])
    return b"\n".join(lines)


def _cut_mid_line(data: bytes) -> bytes:
    lines = data.split(b"\n")
    i = min(len(lines) - 1, int(len(lines) * 0.6))
    return data[:len(b"\n".join(lines[:i])) + 1 + max(1, len(lines[i]) // 2)]


def _cut_mid_number(data: bytes) -> bytes:
    span = _nth(data)
    return data if span is None else data[:(span[0] + span[1]) // 2]


def _inserted(token: bytes):
    """The damage that puts ``token`` in the middle of the line 60 % of the way down."""
    def damage(data: bytes) -> bytes:
        return _in_middle_line(data, lambda line: line[:len(line) // 2] + token + line[len(line) // 2:])
    return damage


def _encoded(codec: str):
    def damage(data: bytes) -> bytes:
        return data.decode("utf-8").encode(codec)
    return damage


#: Damages real files suffer, by name: each a function of the file's bytes.
DAMAGES = {
    "cut mid-line": _cut_mid_line,
    "cut mid-number": _cut_mid_number,
    "a NUL byte": _inserted(b"\0"),
    "UTF-16 with its mark": _encoded("utf-16"),
    "UTF-16 without its mark": _encoded("utf-16-le"),
    "UTF-16 big-endian without its mark": _encoded("utf-16-be"),
    "UTF-32 with its mark": _encoded("utf-32"),
    "a Latin-1 name": _inserted("Größe".encode("latin-1")),
    "a byte-order mark": lambda data: b"\xef\xbb\xbf" + data,
    "CRLF line ends": lambda data: data.replace(b"\n", b"\r\n"),
    "CR line ends": lambda data: data.replace(b"\n", b"\r"),
    "a stray tab": _inserted(b"\t"),
    "the first line twice": lambda data: data.split(b"\n", 1)[0] + b"\n" + data,
    "a decimal comma": lambda data: _at_number(data, lambda number: number.replace(b".", b",", 1)),
    "nan": lambda data: _at_number(data, lambda number: b"nan"),
    "inf": lambda data: _at_number(data, lambda number: b"inf"),
    "1e400": lambda data: _at_number(data, lambda number: b"1e400"),
    "-0": lambda data: _at_number(data, lambda number: b"-0"),
    "an empty value": lambda data: _at_number(data, lambda number: b""),
    "a number in quotes": lambda data: _at_number(data, lambda number: b'"' + number + b'"'),
    "a number in a list": lambda data: _at_number(data, lambda number: b"[" + number + b"]"),
    "a 10 MB line": lambda data: _in_middle_line(data, lambda line: b"x" * (10 << 20) + b"\n" + line),
    "a 10 MB number": lambda data: _at_number(data, lambda number: number + b"7" * (10 << 20)),
    "the last bracket missing": lambda data: data[:max(data.rfind(b"}"), data.rfind(b"]"), data.rfind(b")"))]
    + data[max(data.rfind(b"}"), data.rfind(b"]"), data.rfind(b")")) + 1:],
    "keys in upper case": lambda data: (data.replace(b'"callpath"', b'"Callpath"').replace(b'"metric"', b'"METRIC"')
                                        .replace(b'"value"', b'"Value"')),
    "an empty file": lambda data: b"",
    "a no-break space": lambda data: _in_middle_line(data, lambda line: line.replace(b" ", "\u00a0".encode(), 1)
                                                     if b" " in line else b"\xc2\xa0" + line),
}
#: Damages whose error is of the whole file, naming no line.
WITHOUT_LINE = frozenset({"an empty file"})
#: The formats whose real files :func:`damage_cases` damages (text, or text in an archive).
TEXT_FORMATS = ("csv", "text", "json", "json lines", "talpas", "extra-p")


def damage_cases(data: pathlib.Path = DATA, per_format: int = 2) -> list[Case]:
    """Every damage of :data:`DAMAGES` on the first ``per_format`` of Extra-P's real files of each text format (not
    those it rejects, ``*neg*``; for an ``.extra-p``, on its ``experiment.json``), in a stable order; damages that
    change nothing are left out."""
    by_format: dict[str, list[Seed]] = {}
    for s in seeds(data):
        if s.format in TEXT_FORMATS and "neg" not in s.path.name and s.path.is_relative_to(data / "extrap"):
            by_format.setdefault(s.format, []).append(s)
    made = []
    for kind in TEXT_FORMATS:
        for chosen in by_format.get(kind, [])[:per_format]:
            original = chosen.path.read_bytes()
            for name, damage in DAMAGES.items():
                changed = _damage_member(original, damage) if kind == "extra-p" else damage(original)
                if changed != original or name == "an empty file":
                    made.append(Case(chosen, name, changed))
    return made


def _damage_member(data: bytes, damage) -> bytes:
    """An ``.extra-p`` archive with ``damage`` done to its ``experiment.json``, zipped again."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = [(info.filename, archive.read(info)) for info in archive.infolist()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in members:
            archive.writestr(name, damage(body) if name == "experiment.json" else body)
    return out.getvalue()


@dataclass
class Case:
    """One mutant: which seed, what was done, the bytes."""

    seed: Seed
    description: str
    data: bytes


def cases(count: int, seed: int = 14, data: pathlib.Path = DATA, formats: tuple[str, ...] | None = None) -> list[Case]:
    """``count`` mutants, spread round-robin over the formats, deterministic for a seed."""
    rng = random.Random(seed)
    by_format: dict[str, list[Seed]] = {}
    for s in seeds(data):
        if formats is None or s.format in formats:
            by_format.setdefault(s.format, []).append(s)
    kinds = sorted(by_format)
    made = []
    contents: dict[pathlib.Path, bytes] = {}
    for i in range(count):
        kind = kinds[i % len(kinds)]
        chosen = rng.choice(by_format[kind])
        original = contents.setdefault(chosen.path, chosen.path.read_bytes())
        if kind == "extra-p":
            changed, how = mutate_archive(original, rng)
        elif kind == "cube":
            changed, how = mutate_cube(original, rng)
        else:
            changed, how = mutate(original, rng, kind)
        made.append(Case(chosen, how, changed))
    return made


# ------------------------------------------------------------------- running
class Hang(BaseException):
    """Raised by the alarm: the case took too long."""


@contextlib.contextmanager
def _deadline(seconds: float):
    def ring(signum, frame):
        raise Hang()

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Outcome:
    case: Case | None
    outcome: str
    status: int | None
    stderr: str
    seconds: float
    call: Call | None = None  # (of the --arguments mode, which has no case)


def run_case(case: Case, folder: pathlib.Path, timeout: float = 20.0) -> Outcome:
    """Write the mutant into ``folder`` under its real name and model it through the CLI's main()."""
    from extrap_plugins import cli

    folder.mkdir(parents=True, exist_ok=True)
    target = folder / case.seed.path.name
    target.write_bytes(case.data)
    os.chmod(target, 0o444)
    before = hashlib.sha256(case.data).hexdigest()
    err, out = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    status: int | None = None
    escaped = ""
    try:
        with _deadline(timeout), contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            status = cli.main(["model", str(target), *case.seed.arguments, "--executor", "serial",
                               "--progress", "off"])
    except Hang:
        status = None
    except BaseException as error:  # noqa: BLE001 - anything escaping main() is a finding
        escaped = f"escaped main(): {type(error).__name__}: {error}"
        status = -1
    seconds = time.perf_counter() - start
    text = err.getvalue() + escaped
    after = hashlib.sha256(target.read_bytes()).hexdigest() if target.exists() else ""
    extra = [p.name for p in folder.iterdir() if p.name != target.name]
    if after != before or extra:
        outcome = "modified"
    elif status is None:
        outcome = "hang"
    elif status == 0 and "Traceback" not in text:
        outcome = "ok"
    elif status == 2 and _clean(text, target):
        outcome = "clean error"
    else:
        outcome = "internal"
    os.chmod(target, 0o644)
    return Outcome(case, outcome, status, text, seconds)


def _clean(stderr: str, target: pathlib.Path) -> bool:
    """One error line naming the file (warnings before it are fine), no traceback."""
    errors = [line for line in stderr.splitlines() if line.startswith("extrap-plugins: error:")]
    return (len(errors) == 1 and "Traceback" not in stderr and str(target.name) in errors[0]
            and stderr.rstrip("\n").endswith(errors[0]) and len(errors[0]) <= LONGEST)


def run(count: int, seed: int, timeout: float = 20.0, formats=None, progress=None,
        made: list[Case] | None = None) -> list[Outcome]:
    """Make and run ``count`` cases (or run the cases ``made``); each in a fresh folder, removed afterwards."""
    import warnings

    outcomes = []
    with tempfile.TemporaryDirectory(prefix="extrap-fuzz-") as scratch, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, case in enumerate(cases(count, seed, formats=formats) if made is None else made):
            folder = pathlib.Path(scratch) / f"case{i}"
            outcomes.append(run_case(case, folder, timeout))
            shutil.rmtree(folder, ignore_errors=True)
            if progress:
                progress(i, outcomes[-1])
    return outcomes


def names_its_line(outcome: Outcome) -> bool:
    """Whether a clean error of a damaged file names where the damage is: a line of the file (``FILE:LINE:``), or,
    for an ``.extra-p``, the line or the JSON path in its ``experiment.json``; a damage of the whole file
    (:data:`WITHOUT_LINE`) names none."""
    if outcome.outcome != "clean error" or outcome.case.description in WITHOUT_LINE:
        return True
    line = next(text for text in outcome.stderr.splitlines() if text.startswith("extrap-plugins: error:"))
    where = line.split(outcome.case.seed.path.name, 1)[1]
    return bool(re.match(r":\d+: ", where) or re.match(r": experiment\.json(, line \d+|: measurement|: call path)",
                                                         where))


def table(outcomes: list[Outcome], columns: tuple[str, ...] = OUTCOMES, group: str = "format") -> str:
    """The figures table (Markdown): cases tried and each outcome, per format (or command) and in total."""
    def kind_of(outcome: Outcome) -> str:
        return outcome.call.command if outcome.call else outcome.case.seed.format

    formats = sorted({kind_of(o) for o in outcomes})
    rows = [f"| {group} | cases | " + " | ".join(columns) + " |", "|---|" + "---|" * (len(columns) + 1)]
    for kind in [*formats, None]:
        chosen = [o for o in outcomes if kind is None or kind_of(o) == kind]
        counts = [sum(o.outcome == name for o in chosen) for name in columns]
        label = kind if kind is not None else "**all**"
        rows.append(f"| {label} | {len(chosen):,} | " + " | ".join(f"{c:,}" for c in counts) + " |")
    return "\n".join(rows)


# ------------------------------------------------------------------ arguments
#: The real inputs the ``--arguments`` mode gives the commands, copied into its scratch folder (name: source).
ARGUMENT_INPUTS = {
    "one_parameter_1.txt": DATA / "extrap" / "text" / "one_parameter_1.txt",
    "one_parameter_4.txt": DATA / "extrap" / "text" / "one_parameter_4.txt",
    "single_parameter": DATA / "cube" / "extrap" / "single_parameter",
    "mpi_scaling_cali": DATA / "caliper" / "thicket" / "mpi_scaling_cali",
    "stencil.jsonl": ROOT / "examples" / "stencil.jsonl",
    "synthetic.jsonl": ROOT / "examples" / "codesign" / "synthetic.jsonl",
    "system.toml": ROOT / "examples" / "codesign" / "system.toml",
    "machine.toml": ROOT / "examples" / "codesign" / "machine.toml",
    "jacobi.py": ROOT / "examples" / "jacobi" / "jacobi.py",
}
#: A command line of each command that works (``{name}``: a file of :data:`ARGUMENT_INPUTS`, or a place of
#: :func:`_places`); each mistake is made to one of them.  ``run`` and ``autotune`` keep their program after ``--``.
ARGUMENT_BASES = {
    "model": (("model", "{one_parameter_1.txt}"), ("model", "{single_parameter}"), ("model", "{mpi_scaling_cali}"),
              ("model", "{stencil.jsonl}")),
    "efficiency": (("efficiency", "{stencil.jsonl}", "--size", "n"),),
    "compare": (("compare", "{one_parameter_1.txt}", "{one_parameter_4.txt}"),),
    "suggest": (("suggest", "--param", "p=4,8,16,32,64"), ("suggest", "{stencil.jsonl}")),
    "autotune": (("autotune", "--param", "p=1,2", "--param", "n=16,32", "--budget", "60%", "--max-steps", "1",
                  "--metric", "bytes_sent", "-o", "{runs}", "--", "{python}", "{jacobi.py}", "--iterations", "2",
                  "--check", "1", "--rows", "4"),),
    "run": (("run", "--np", "1,2", "--param", "n=16,32", "-o", "{runs}", "--dry-run", "--", "{python}",
             "{jacobi.py}"),),
    "plugins": (("plugins",), ("plugins", "text")),
    "requirements": (("requirements", "{synthetic.jsonl}", "--system", "{system.toml}", "--role",
                      "memory=loads_stores"),),
    "whatif": (("whatif", "{synthetic.jsonl}", "--machine", "{machine.toml}", "--calibrate", "--target",
                "p=256,n=1.6e5"),),
}
LONG = "x" * 100_000
#: Values any option that takes one may be given by mistake (None: the value left out).
ANY_VALUE = (None, "", "a\0b", "a\nb", LONG, "-5")
INT_VALUES = ("0", "-1", "1.5", "nan", "inf", "1e400", "9" * 30, "ten")
FLOAT_VALUES = ("0", "-1", "nan", "inf", "-inf", "1e400", "1e-320", "ten")
SHARES = ("120%", "-5%", "%", "0", "1", "0%", "100%", "nan", "inf", "5%%", "1e400", "0.5.5")
PARAMETER_SPECS = ("p=", "p=1,,2", "p=a", "=1", "p=1", "p=8,4,2", "p=2,2,4", "p", "p=1e400,2", "p=nan,1,2",
                   "p=-1,-2,-4", "p=0,1,2", "p=1,2,3 n=1,2,3", "p=inf,1")
TARGETS = ("p=", "p", "q=1", "p=nan", "p=-1", "p=0", "p=1e400", "=1", "p=1,p=2", "p=a", "p=4096,q=3", ",")
NAMES = ("nomatch", ".*", "[", "main->*[", "*", "main->", ",", " ", "time,time", "^main$")
KEY_VALUES = ("x", "=1", "bogus=1", "terms=-1", "terms=nan", "reader=text", "metrics=time", "a=b=c")
#: Mistakes of options whose values have a form of their own (beyond their type).
OWN_VALUES = {
    "--budget": (*SHARES, "0u", "-3u", "u", "1.5", "1e9", "2.5"), "--tolerance": SHARES, "--level": SHARES,
    "--param": PARAMETER_SPECS, "--np": ("0", "-1", "1,,2", "a", "2,1", "1,1", "1e9", "1.5", "nan", ","),
    "--target": TARGETS, "--metric": NAMES, "--callpath": NAMES, "--callpath-a": NAMES, "--callpath-b": NAMES,
    "--total": NAMES, "--time-metric": NAMES,
    "--option": KEY_VALUES, "--reader-option": KEY_VALUES, "--export-option": KEY_VALUES,
    "--reader": ("bogus", "cube", "text"), "--modeler": ("bogus",), "--export": ("bogus", "plot", "json"),
    "--label": ("C=x", "A=", "A", "=x"), "--map-rule": ("a", "=b", "[=x", "a=b=c"),
    "--upgrade": ("x", "x=processes:0x", "x=processes:-2x", "x=bogus:2x", "x=processes:nanx", "x=processes"),
    "--role": ("memory=", "bogus=time", "memory=nomatch", "=time", "memory"),
    "--scale": ("bandwidth=0x", "bandwidth=-1x", "bogus=2x", "bandwidth=nanx", "bandwidth", "bandwidth=infx"),
    "--cost": ("q", "p*", "p^nan", "p/0", "p^1e400", "-p", "time*time", "p^-1"),
    "--rank-by": ("bogus", "memory"), "--processes": ("q", "n"), "--size": ("q", "p"), "--along": ("q",),
    "--mpiexec": ("{missing}", "{one_parameter_1.txt}", "{single_parameter}"), "--mpiexec-arg": ("--bogus",),
    "--jobs": ("0", "-1"),
}
#: Paths for an option that names a file to write.
OUTPUTS = ("{one_parameter_1.txt}", "{single_parameter}/mm.x1y1z1.r1/profile.cubex", "{locked}/out.txt",
           "/proc/out.txt", "/dev/full", "{single_parameter}", "{missing}/out.txt", "{empty}/", "{stencil.jsonl}",
           "{jacobi.py}")
#: Paths for an option or an input that names a file to read.
READ_PATHS = ("{missing}", "{empty}", "{single_parameter}", "{one_parameter_1.txt}", "/dev/null", "{system.toml}",
              "{locked}")
WRITTEN = frozenset({"-o", "--save-machine", "--scratch"})
READ = frozenset({"--map", "--system", "--machine", "--plan"})
#: Options given together that contradict each other or what the command does, per command.
CONTRADICTIONS = {
    "model": (("--stream", "on", "--validate"), ("--export", "text", "--plot-top", "3"), ("--json-version", "1"),
              ("--export", "json", "--json-version", "2", "--export-option", "version=1"),
              ("--executor", "serial", "--jobs", "4"), ("--export", "plot"), ("--sort", "target"),
              ("--export", "csv", "-o", "{out}.json"), ("--stream", "on", "--scratch", "{one_parameter_1.txt}"),
              ("--metric", "time", "--metric", "time"), ("-o", "{out}", "-o", "{one_parameter_1.txt}")),
    "run": (("--plan", "{plan}"), ("--np", "1,2", "--np", "4"), ("--repetitions", "0"), ("--timeout", "0")),
    "autotune": (("--param", "p=1,2,3"), ("--budget", "1u"), ("--tolerance", "0.5", "--tolerance", "120%")),
    "whatif": (("--save-machine", "{out}", "-o", "{out}"), ("--save-machine", "{machine.toml}"),
               ("--machine", "{system.toml}")),
    "suggest": (("--export", "{out}.csv"), ("--strategy", "cheapest", "--tolerance", "0"),
                ("--param", "p=4,8", "--param", "p=16,32"), ("--export", "-")),
    "compare": (("--label", "A=x", "--label", "A=y"), ("--map", "{one_parameter_1.txt}"),
                ("--label", "A=x", "--label", "B=x")),
    "plugins": (("bogus",), ("",), (LONG,), ("text", "cube"), ("a\nb",), ("--bogus",)),
    "efficiency": (("--scaling", "weak"), ("--processes", "n", "--size", "n"), ("--export", "text", "--title", "t")),
    "requirements": (("--system", "{machine.toml}"), ("-o", "{system.toml}")),
}


@dataclass(frozen=True)
class Call:
    """One mistaken command line: the command, what is wrong, its words (with ``{name}`` places), and what its error
    should name (one of them: the option the mistake is in, its other names, the value given)."""

    command: str
    description: str
    words: tuple[str, ...]
    named: tuple[str, ...] = ()


def _options(command: str) -> dict[str, argparse.Action]:
    """The options of ``extrap-plugins COMMAND`` by their longest name (not --help, --traceback)."""
    from extrap_plugins import cli

    commands = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {max(a.option_strings, key=len): a for a in commands.choices[command]._actions
            if a.option_strings and a.dest not in ("help", "traceback")}


def _values_of(name: str, action: argparse.Action) -> tuple[str | None, ...]:
    """The mistaken values of one option: any option's, its type's or choices', and those of its form."""
    if action.nargs == 0:
        return ()
    own = OWN_VALUES.get(name, ())
    if name in WRITTEN or (name == "--export" and action.choices is None and "PLAN" in str(action.metavar)):
        own = OUTPUTS
    elif name in READ:
        own = READ_PATHS
    typed = INT_VALUES if action.type is int else FLOAT_VALUES if action.type is float else ()
    chosen = ("bogus", str(action.choices[0]).upper()) if action.choices else ()
    return (*ANY_VALUE, *typed, *chosen, *own)


def _with(base: tuple[str, ...], *words: str) -> tuple[str, ...]:
    """``base`` with ``words`` added: before the program's ``--`` if it has one, else at the end."""
    at = base.index("--") if "--" in base else len(base)
    return (*base[:at], *words, *base[at:])


def argument_calls(command: str) -> list[Call]:
    """Every mistake of :data:`ARGUMENT_BASES`'s lines of ``command``, in a stable order: each option with each of
    its mistaken values (:func:`_values_of`), given twice, misspelt; unknown options; inputs that are not there or
    of the wrong kind; the :data:`CONTRADICTIONS`."""
    bases = ARGUMENT_BASES[command]
    made = [Call(command, "as given", base) for base in bases]  # (each must work: exit 0)
    for name, action in _options(command).items():
        base = bases[len(made) % len(bases)]
        names = tuple(action.option_strings)
        if name == "--reader":  # (a reader of another format: the input's line that it cannot read)
            names += tuple(word for word in base[1:] if word.startswith("{"))
        for value in _values_of(name, action):
            if value is None:  # the value left out: the option last, or just before the program
                made.append(Call(command, f"{name} without its value", _with(base, name), names))
                continue
            shown = value if len(value) < 40 else f"{value[:12]}... ({len(value):,} characters)"
            made.append(Call(command, f"{name} {shown!r}", _with(base, name, value), (*names, value)))
        if action.nargs == 0:
            made.append(Call(command, f"{name} twice", _with(base, name, name), names))
            made.append(Call(command, f"{name}=yes", _with(base, f"{name}=yes"), names))
        misspelt = name[:-1] + name[-1] * 2
        made.append(Call(command, f"{name} misspelt", _with(base, misspelt, "1"), (misspelt, *names)))
    base = bases[0]
    made += [Call(command, "an unknown option", _with(base, "--bogus"), ("--bogus",)),
             Call(command, "an unknown short option", _with(base, "-x", "1"), ("-x",)),
             Call(command, "an option in one dash", _with(base, "-metric", "time"), ("-metric", "-m"))]
    inputs = [i for i, word in enumerate(base) if word.startswith("{") and "--" not in base[:i]
              and (i == 0 or not base[i - 1].startswith("-"))]
    for k, i in enumerate(inputs):
        side = (f"of {'AB'[k]} ",) if command == "compare" else ()  # (compare names its inputs A and B)
        for path in (*READ_PATHS, "", "-"):
            words = (*base[:i], path, *base[i + 1:])
            made.append(Call(command, f"input {path!r} for {base[i]}", words, (path, "INPUT", *side)))
    if command in ("model", "efficiency", "whatif", "requirements"):
        made.append(Call(command, "a reader of files given a folder",
                         (command, "{single_parameter}", "--reader", "text", *base[2:]), ("single_parameter",)))
    for words in CONTRADICTIONS.get(command, ()):
        made.append(Call(command, " ".join(words), _with(base, *words), words))
    return made


def _places(work: pathlib.Path, python: str) -> dict[str, str]:
    """What the ``{name}`` places of a command line stand for in the case folder ``work``."""
    inputs = work.parent / "inputs"
    places = {name: str(inputs / name) for name in ARGUMENT_INPUTS}
    places.update(python=python, runs=str(work / "runs"), out=str(work / "out"), missing=str(work / "missing"),
                  empty=str(work.parent / "empty"), locked=str(work.parent / "locked"),
                  plan=str(work.parent / "plan.json"))
    return places


def _fill(word: str, places: dict[str, str]) -> str:
    return re.sub(r"\{([\w.]+)\}", lambda m: places.get(m.group(1), m.group(0)), word)


def _read_by(call: Call) -> set[str]:
    """The files of :data:`ARGUMENT_INPUTS` that ``call`` reads (those it names, not as a path to write)."""
    written = WRITTEN | {"--export"}
    return {name for i, word in enumerate(call.words) if not (i and call.words[i - 1] in written)
            for name in re.findall(r"\{([\w.]+)\}", word) if name in ARGUMENT_INPUTS}


def _snapshot(folder: pathlib.Path) -> dict[str, tuple[str, int]]:
    """Every file under ``folder`` (and every folder): its SHA-256 and mode."""
    return {path.relative_to(folder).as_posix(): (hashlib.sha256(path.read_bytes()).hexdigest()
                                                  if path.is_file() else "folder", path.stat().st_mode)
            for path in sorted(folder.rglob("*"))}


def prepare_arguments(scratch: pathlib.Path, python: str) -> dict[str, tuple[str, int]]:
    """The inputs, an empty folder, a locked one and a plan file in ``scratch``; returns the inputs' snapshot."""
    inputs = scratch / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    for name, source in ARGUMENT_INPUTS.items():
        if source.is_dir():
            shutil.copytree(source, inputs / name, dirs_exist_ok=True)
        else:
            shutil.copyfile(source, inputs / name)
    (scratch / "empty").mkdir(exist_ok=True)
    (scratch / "locked").mkdir(exist_ok=True)
    os.chmod(scratch / "locked", 0o555)  # (root writes there all the same: /proc/out.txt is refused to root too)
    (scratch / "plan.json").write_text(json.dumps(
        {"format": "extrap-plugins/plan", "version": 1, "parameters": ["p"],
         "runs": [{"point": {"p": p}, "repetitions": 1, "cost": float(p), "why": "line p"} for p in (1, 2)]}))
    return _snapshot(inputs)


def run_call(call: Call, scratch: pathlib.Path, python: str, snapshot: dict, timeout: float = 60.0) -> Outcome:
    """Run one mistaken command line with ``python -m extrap_plugins`` in a fresh folder of ``scratch`` (a line with
    a NUL byte, which no shell can pass, through ``main()`` in that process); an input changed is put back."""
    work = scratch / "case"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    places = _places(work, python)
    words = [_fill(word, places) for word in call.words]
    if any("\0" in word for word in words):
        line = [python, "-c", "import json, sys; from extrap_plugins.cli import main; "
                              "sys.exit(main(json.loads(sys.argv[1])))", json.dumps(words)]
    else:
        line = [python, "-m", "extrap_plugins", *words]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("EXTRAP_")}
    start = time.perf_counter()
    process = subprocess.Popen(line, cwd=work, env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = process.communicate(timeout=timeout)
        status: int | None = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, err = process.communicate()
        status = None
    seconds = time.perf_counter() - start
    text = err.decode("utf-8", "replace")
    now = _snapshot(scratch / "inputs")
    read = _read_by(call)
    changed = {name.split("/")[0] for name in set(now) ^ set(snapshot) | {n for n in now if now[n] != snapshot.get(n)}}
    if changed:  # (a file the command does not read, which -o named, is the user's to replace)
        shutil.rmtree(scratch / "inputs")
        prepare_arguments(scratch, python)
    if changed & read:
        outcome = "modified"
    elif status is None:
        outcome = "hang"
    elif "Traceback" in text:
        outcome = "internal"
    elif status == 0:
        outcome = "exit 0"
    elif call.description == "as given":  # a line without mistakes must work
        outcome = "internal"
    elif status == 2 and _one_error(text):
        outcome = "exit 2"
    elif status == 4 and call.command in ("run", "autotune"):  # the program failed in some runs
        outcome = "exit 4"
    else:
        outcome = "internal"
    return Outcome(None, outcome, status, text, seconds, call)


ERROR_LINE = re.compile(r"^extrap-plugins(?: [\w-]+)?: error: ")


def _one_error(stderr: str) -> bool:
    """One error line, the last (warnings before it are fine)."""
    errors = [line for line in stderr.splitlines() if ERROR_LINE.match(line)]
    return len(errors) == 1 and stderr.rstrip("\n").endswith(errors[0])


def names_its_option(outcome: Outcome) -> bool:
    """Whether an ``exit 2`` of the arguments mode is one short line naming what :attr:`Call.named` lists: the option
    the mistake is in, another of its names, or the value given (as it is, quoted, with its control characters
    escaped, or its key quoted; a ``{name}`` place by its name, as the path it stands for ends)."""
    if outcome.outcome != "exit 2":
        return True
    line = next(text for text in outcome.stderr.splitlines() if ERROR_LINE.match(text))
    if len(line) > LONGEST:
        return False
    for name in outcome.call.named:
        name = re.sub(r"\{([\w.]+)\}", r"\1", name).strip().rstrip("/")
        key = name.partition("=")[0]  # (KEY=VALUE: its key, quoted)
        if (name and (name in line or repr(name)[1:-1] in line or (len(name) > 50 and name[:50] in line))
                or repr(name) in line or (key and repr(key) in line)):
            return True
    return False


def arguments(count: int, seed: int, python: str, timeout: float = 60.0, commands=None, progress=None,
              chosen: list[Call] | None = None) -> list[Outcome]:
    """``count`` of the command lines of :func:`argument_calls` (all of them if ``count`` is larger), spread
    round-robin over the commands, the lines as given first and then mistakes chosen at random for a seed, each run
    by :func:`run_call` (or the lines ``chosen``)."""
    if chosen is None:
        rng = random.Random(seed)
        pools = {command: argument_calls(command) for command in ARGUMENT_BASES if not commands or command in commands}
        for pool in pools.values():
            rng.shuffle(pool)
            pool.sort(key=lambda call: call.description == "as given")  # each command's lines as given come first
        chosen = []
        while len(chosen) < count and any(pools.values()):
            for pool in pools.values():
                if pool and len(chosen) < count:
                    chosen.append(pool.pop())
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="extrap-arguments-") as scratch:
        snapshot = prepare_arguments(pathlib.Path(scratch), python)
        try:
            for i, call in enumerate(chosen):
                outcomes.append(run_call(call, pathlib.Path(scratch), python, snapshot, timeout))
                if progress:
                    progress(i, outcomes[-1])
        finally:
            os.chmod(pathlib.Path(scratch) / "locked", 0o755)
    return outcomes


ARGUMENT_OUTCOMES = ("exit 0", "exit 2", "exit 4", "internal", "hang", "modified")
#: Cases of a default ``--arguments`` run (194 s on the shared 2-core machine, beside other jobs; all 1,789 of
#: :func:`argument_calls`: 20 minutes).
ARGUMENT_CASES = 300


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, help=f"default: 2000 (--arguments: {ARGUMENT_CASES})")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--timeout", type=float, help="seconds a case may take (default: 20; --arguments: 60)")
    parser.add_argument("--show", type=int, default=10, help="print this many findings in full")
    parser.add_argument("--format", action="append", help="only this format (repeatable; --arguments: command)")
    parser.add_argument("--damages", action="store_true", help="every damage of DAMAGES on real text inputs")
    parser.add_argument("--arguments", action="store_true",
                        help="mistaken command lines of every command (argument_calls) instead of mutated files")
    parser.add_argument("--python", default=sys.executable,
                        help="--arguments: the Python whose extrap_plugins runs (a wheel's venv; default: this one)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.arguments:
        return main_arguments(args)
    start = time.perf_counter()
    slowest = []

    def progress(i, outcome):
        slowest.append((outcome.seconds, outcome.case.seed.path.name, outcome.case.description))
        if outcome.outcome not in ("ok", "clean error") or (args.damages and not names_its_line(outcome)):
            print(f"[{i}] {outcome.outcome}: {outcome.case.seed.path.relative_to(DATA)}: "
                  f"{outcome.case.description}: {outcome.stderr.strip()[-400:]}", file=sys.stderr)

    outcomes = run(args.cases or 2000, args.seed, args.timeout or 20.0, tuple(args.format) if args.format else None,
                   progress, damage_cases() if args.damages else None)
    print(f"{len(outcomes)} cases, seed {args.seed}, {time.perf_counter() - start:.0f} s; slowest: "
          f"{max(slowest)[0]:.1f} s ({max(slowest)[1]})")
    print(table(outcomes))
    bad = [o for o in outcomes if o.outcome not in ("ok", "clean error") or (args.damages and not names_its_line(o))]
    if args.damages:
        print(f"{sum(not names_its_line(o) for o in outcomes)} clean errors name no line")
    return 1 if bad else 0


def main_arguments(args: argparse.Namespace) -> int:
    """The ``--arguments`` run: the table per command, and each finding on stderr as it comes."""
    start = time.perf_counter()
    shown = []

    def progress(i, outcome):
        if outcome.outcome in ("internal", "hang", "modified") or not names_its_option(outcome):
            shown.append(outcome)
            if len(shown) <= args.show:
                print(f"[{i}] {outcome.outcome} (exit {outcome.status}): {outcome.call.command}: "
                      f"{outcome.call.description}: {outcome.stderr.strip()[-400:]}", file=sys.stderr)

    outcomes = arguments(args.cases or ARGUMENT_CASES, args.seed, args.python, args.timeout or 60.0,
                         tuple(args.format) if args.format else None, progress)
    slowest = max(outcomes, key=lambda o: o.seconds)
    print(f"{len(outcomes)} cases, seed {args.seed}, {time.perf_counter() - start:.0f} s; slowest: "
          f"{slowest.seconds:.1f} s ({slowest.call.command}: {slowest.call.description})")
    print(table(outcomes, ARGUMENT_OUTCOMES, "command"))
    print(f"{sum(not names_its_option(o) for o in outcomes)} errors name neither the option nor its value, or run "
          f"past {LONGEST} characters")
    return 1 if shown else 0


if __name__ == "__main__":
    sys.exit(main())
