"""The fuzz audit as a test: mutants of the real shared files, and the bad inputs the audit found.

Every outcome of ``extrap-plugins model`` on a mutant is a model (exit 0) or one line naming the file
with exit 2 -- never exit 1, a traceback, a hang or a changed input.  The long run is
``benchmarks/fuzz.py`` (the README's table); this is a deterministic slice of it that fits CI.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import zipfile

import pytest

from extrap_plugins import cli

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _fuzz():
    spec = importlib.util.spec_from_file_location("extrap_fuzz", ROOT / "benchmarks" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_mutants_of_every_real_file_are_a_model_or_one_clean_error(shared_data, tmp_path, host):
    fuzz = _fuzz()
    outcomes = []
    for i, case in enumerate(fuzz.cases(300, seed=14, data=shared_data)):  # (benchmarks/fuzz.py runs thousands)
        outcomes.append(fuzz.run_case(case, tmp_path / f"case{i}", timeout=30))
    bad = [f"{o.case.seed.path.name}: {o.case.description}: {o.outcome}: {o.stderr.strip()[-300:]}"
           for o in outcomes if o.outcome not in ("ok", "clean error")]
    assert bad == []
    formats = {o.case.seed.format for o in outcomes}
    assert formats >= {"csv", "cube", "extra-p", "extrap3", "json", "json lines", "talpas", "text"}
    assert {o.outcome for o in outcomes} == {"ok", "clean error"}


def test_real_damage_to_every_text_format_is_a_model_or_one_short_error_naming_its_line(shared_data, tmp_path, host):
    """Every damage of ``benchmarks/fuzz.py``'s DAMAGES on a real file of each text format (the ``--damages`` run
    does two of each): a model, or exit 2 with one line of at most LONGEST characters naming the line."""
    fuzz = _fuzz()
    outcomes = [fuzz.run_case(case, tmp_path / f"case{i}", timeout=60)
                for i, case in enumerate(fuzz.damage_cases(shared_data, per_format=1))]
    bad = [f"{o.case.seed.path.name}: {o.case.description}: {o.outcome}: {o.stderr.strip()[-300:]}"
           for o in outcomes if o.outcome not in ("ok", "clean error") or not fuzz.names_its_line(o)]
    assert bad == []
    assert {o.case.seed.format for o in outcomes} == set(fuzz.TEXT_FORMATS)
    assert {o.case.description for o in outcomes} == set(fuzz.DAMAGES)


def run(capsys, *argv) -> tuple[int, str]:
    status = cli.main(["model", *map(str, argv), "--executor", "serial", "--progress", "off"])
    return status, capsys.readouterr().err


def jsonl(path: pathlib.Path, value_of_p3: str) -> pathlib.Path:
    path.write_text("".join(f'{{"params": {{"p": {p}}}, "value": {value_of_p3 if p == 3 else 1}}}\n'
                            for p in (1, 2, 3, 4, 5)))
    return path


@pytest.mark.parametrize(("value", "message"), [
    ("[" * 10_000 + "]" * 10_000, "nested too deeply to read (more than 200 levels of brackets in a row)"),
    ("9" * 5000, "a number has more than 4,300 digits; no measurement has that many"),
])
def test_malformed_numbers_and_nesting_are_exit_2_naming_file_and_line(tmp_path, capsys, host, value, message):
    path = jsonl(tmp_path / "in.jsonl", value)
    assert run(capsys, path) == (2, f"extrap-plugins: error: {path}:3: {message}\n")


def test_a_measured_value_beyond_the_range_of_a_float_is_missing(tmp_path, capsys, host):
    """As ``1e400`` and ``NaN``: a missing value with one warning (tests/readers/test_missing_values.py), no longer
    exit 2 ("value 1000... is beyond the range of a float")."""
    path = jsonl(tmp_path / "in.jsonl", "1" + "0" * 400)
    status, err = run(capsys, path)
    assert status == 0
    assert (f"extrap-plugins: warning: {path}: 1 value is not a finite number (nan, inf or beyond the range of a "
            "float) and is left out as missing: line 3; series <root> [time]") in err.splitlines()


def test_csv_header_errors_are_exit_2(tmp_path, capsys, host):
    wide = tmp_path / "wide.csv"
    wide.write_text("p," + "x" * 140_000 + "\n1,2\n")
    assert run(capsys, wide) == (2, f"extrap-plugins: error: {wide}:1: the header cannot be read (field larger "
                                    "than field limit (131072))\n")


def test_a_fifo_or_a_device_is_refused_at_once(tmp_path, capsys, host):
    fifo = tmp_path / "pipe.txt"
    import os

    os.mkfifo(fifo)
    assert run(capsys, fifo) == (2, f"extrap-plugins: error: {fifo}: is a FIFO, not a regular file or folder; "
                                    "save the measurements to a file first\n")
    status, err = run(capsys, "/dev/zero", "--reader", "text")
    assert (status, err) == (2, "extrap-plugins: error: /dev/zero: is a character device, not a regular file or "
                                "folder; save the measurements to a file first\n")


def bomb(path: pathlib.Path, size: int) -> pathlib.Path:
    """A .extra-p whose experiment.json inflates to ``size`` bytes of blanks (about size / 1000 on disk)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("experiment.json", "w", force_zip64=True) as stream:
            stream.write(b'{"parameters": ["p"], "measurements": {}, "pad": "')
            block = b" " * (1 << 20)
            for _ in range(size >> 20):
                stream.write(block)
            stream.write(b'"}')
    return path


def test_an_archive_that_inflates_past_the_limit_is_refused_before_inflating(tmp_path, capsys, host, monkeypatch):
    import resource
    import time

    path = bomb(tmp_path / "bomb.extra-p", 1 << 30)  # 1 GiB inflated, about 1 MB on disk
    assert path.stat().st_size < 1_100_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    status, err = run(capsys, path)
    assert time.perf_counter() - start < 1.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 * 1024  # KiB: under 200 MB more
    assert (status, err) == (2, f"extrap-plugins: error: {path}: experiment.json inflates to 1.0 GiB, over the "
                                "limit of 256.0 MiB for one archive (EXTRAP_PLUGINS_MAX_INFLATED=BYTES raises it)\n")
    monkeypatch.setenv("EXTRAP_PLUGINS_MAX_INFLATED", str(1 << 20))
    small = bomb(tmp_path / "small.extra-p", 2 << 20)
    assert run(capsys, small)[1] == (f"extrap-plugins: error: {small}: experiment.json inflates to 2.0 MiB, over "
                                     "the limit of 1.0 MiB for one archive (EXTRAP_PLUGINS_MAX_INFLATED=BYTES raises "
                                     "it)\n")


def test_a_corrupt_deflate_stream_is_exit_2(tmp_path, capsys, host):
    path = tmp_path / "broken.extra-p"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("experiment.json", '{"parameters": ["p"], "measurements": {}}' * 50)
    raw = bytearray(path.read_bytes())
    start = raw.find(b"experiment.json") + len("experiment.json")
    for j in range(start + 2, start + 30):
        raw[j] ^= 0xFF
    path.write_bytes(bytes(raw))
    status, err = run(capsys, path)
    assert status == 2 and err.startswith(f"extrap-plugins: error: {path}: ") and err.count("\n") == 1


def test_a_npy_header_claiming_2_to_the_40_values_is_refused_without_allocating(tmp_path, capsys, host):
    from extrap_plugins.readers.extrap_experiment_reader import _npy_array

    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }"
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    data = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\0" * 16
    with pytest.raises(ValueError, match=r"declares 1,099,511,627,776 values of 8 bytes, but only 16 bytes follow"):
        _npy_array(data, 0)


@pytest.mark.parametrize(("change", "message"), [
    ({"values": {"time": {s: ["x"] for s in ("sum", "mean", "min", "max")}}},
     "values['time']['sum'] holds \"x\", not a number"),
    ({"callpaths": [["main"]]}, 'call path 1 must be a non-empty string, got ["main"]'),
    ({"repetition": 2**31}, "repetition 2147483648 must be a whole number from 0 to 2147483647"),
])
def test_malformed_instrument_records_are_exit_2(tmp_path, capsys, host, change, message):
    import json

    record = {"format": "extrap-plugins/instrument", "version": 1, "run": "r", "status": "ok", "errors": [],
              "parameters": {"p": 1}, "repetition": 0, "size": 1, "rank": None, "ranks": 1,
              "callpaths": ["main"], "values": {"time": {s: [1.0] for s in ("sum", "mean", "min", "max")}}}
    record.update(change)
    path = tmp_path / "app.extrap.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert run(capsys, path) == (2, f"extrap-plugins: error: {path}:1: {message}\n")


def test_mistaken_command_lines_of_every_command_are_a_result_or_one_line_naming_the_mistake(shared_data):
    """A seeded sample of ``benchmarks/fuzz.py --arguments`` (two mistakes of each command, run as ``python -m
    extrap_plugins`` on copies of real inputs): exit 0, 2 or (``run``, ``autotune``) 4, never exit 1, a traceback, a
    hang or a changed input; each exit 2 one line naming the option or the value."""
    import random

    fuzz = _fuzz()
    rng = random.Random(14)
    sample = [call for command in fuzz.ARGUMENT_BASES
              for call in rng.sample([c for c in fuzz.argument_calls(command) if c.description != "as given"], 2)]
    outcomes = fuzz.arguments(0, 14, sys.executable, timeout=60, chosen=sample)
    bad = [f"{o.call.command}: {o.call.description}: {o.outcome} (exit {o.status}): {o.stderr.strip()[-300:]}"
           for o in outcomes if o.outcome in ("internal", "hang", "modified") or not fuzz.names_its_option(o)]
    assert bad == []
    assert len(outcomes) == 18 and {o.call.command for o in outcomes} == set(fuzz.ARGUMENT_BASES)
    assert "exit 2" in {o.outcome for o in outcomes}
