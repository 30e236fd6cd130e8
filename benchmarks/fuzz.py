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
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import pathlib
import random
import re
import shutil
import signal
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
    case: Case
    outcome: str
    status: int | None
    stderr: str
    seconds: float


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


def table(outcomes: list[Outcome]) -> str:
    """The figures table (Markdown): cases tried and each outcome, per format and in total."""
    formats = sorted({o.case.seed.format for o in outcomes})
    rows = ["| format | cases | " + " | ".join(OUTCOMES) + " |", "|---|" + "---|" * (len(OUTCOMES) + 1)]
    for kind in [*formats, None]:
        chosen = [o for o in outcomes if kind is None or o.case.seed.format == kind]
        counts = [sum(o.outcome == name for o in chosen) for name in OUTCOMES]
        label = kind if kind is not None else "**all**"
        rows.append(f"| {label} | {len(chosen):,} | " + " | ".join(f"{c:,}" for c in counts) + " |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--show", type=int, default=10, help="print this many findings in full")
    parser.add_argument("--format", action="append", help="only this format (repeatable)")
    parser.add_argument("--damages", action="store_true", help="every damage of DAMAGES on real text inputs")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    start = time.perf_counter()
    slowest = []

    def progress(i, outcome):
        slowest.append((outcome.seconds, outcome.case.seed.path.name, outcome.case.description))
        if outcome.outcome not in ("ok", "clean error") or (args.damages and not names_its_line(outcome)):
            print(f"[{i}] {outcome.outcome}: {outcome.case.seed.path.relative_to(DATA)}: "
                  f"{outcome.case.description}: {outcome.stderr.strip()[-400:]}", file=sys.stderr)

    outcomes = run(args.cases, args.seed, args.timeout, tuple(args.format) if args.format else None, progress,
                   damage_cases() if args.damages else None)
    print(f"{len(outcomes)} cases, seed {args.seed}, {time.perf_counter() - start:.0f} s; slowest: "
          f"{max(slowest)[0]:.1f} s ({max(slowest)[1]})")
    print(table(outcomes))
    bad = [o for o in outcomes if o.outcome not in ("ok", "clean error") or (args.damages and not names_its_line(o))]
    if args.damages:
        print(f"{sum(not names_its_line(o) for o in outcomes)} clean errors name no line")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
