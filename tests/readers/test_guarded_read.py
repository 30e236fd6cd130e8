"""``guarded_read``, the one entry of every read: a file a reader decodes that is not UTF-8 is bad input.

It was blamed on the reader (exit 3): ``except ValueError`` came before ``except UnicodeError``, and
``UnicodeDecodeError`` is a ``ValueError``.  Now it is exit 2, ``FILE:LINE: not UTF-8 text (byte 0x..)``, the
line counted as :func:`read_text` counts it wherever the bytes the reader decoded tell it.
"""

from __future__ import annotations

import gzip
import pathlib

import pytest

from extrap_plugins.errors import InputError
from extrap_plugins.readers._common import guarded_read
from plugin_helpers import cli, fake_distribution, installed  # noqa: F401 - installed: a fixture

LINE_READER = """
    from extrap_plugins import Experiment, ReaderInfo, hookimpl

    def read(path, options):
        points, values = [], []
        with open(path, encoding="utf-8") as lines:  # decoded piece by piece, as most readers do
            for line in lines:
                p, value = line.split()
                points.append([float(p)])
                values.append(float(value))
        return Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=points, value=values,
                                       source=str(path))

    @hookimpl
    def extrap_readers():
        return [ReaderInfo("ptab", read, "p and a value per line", patterns=("*.ptab",))]
    """


def table(bad_line: int, lines: int = 5) -> bytes:
    """``lines`` lines of ``p value``, the one numbered ``bad_line`` with a Latin-1 byte in it."""
    rows = [f"{2 ** (i % 12)} {3 + i}".encode() for i in range(lines)]
    rows[bad_line - 1] += b" \xff\xfe"
    return b"\n".join(rows) + b"\n"


@pytest.mark.usefixtures("installed")
@pytest.mark.parametrize("bad_line, lines", [(3, 5), (3001, 3010)], ids=["small", "beyond-the-first-piece"])
def test_a_plugin_reader_given_a_file_that_is_not_utf8_is_bad_input_naming_the_file_and_line(
        tmp_path, monkeypatch, capsys, bad_line, lines):
    fake_distribution(tmp_path / "site", monkeypatch, "hunt-plug", {"hunt_reader": "hunt_line_reader"},
                      {"hunt_line_reader": LINE_READER})
    path = tmp_path / "latin1.ptab"
    path.write_bytes(table(bad_line, lines))
    assert cli(capsys, "model", path, "--progress", "off") == (
        2, "", f"extrap-plugins: error: {path}:{bad_line}: not UTF-8 text (byte 0xff)\n")


@pytest.mark.parametrize("decode", [
    lambda path: path.read_text(encoding="utf-8"),
    lambda path: path.read_bytes().decode(),
    lambda path: list(open(path, encoding="utf-8")),
    lambda path: list(open(path, encoding="utf_8_sig")),
], ids=["read_text", "decode", "lines", "utf-8-sig"])
def test_the_line_is_counted_however_the_reader_decodes(tmp_path, decode):
    path = tmp_path / "in.txt"
    path.write_bytes(table(2000, 2500))
    with pytest.raises(InputError) as error:
        guarded_read(decode, path, path)
    assert str(error.value) == f"{path}:2000: not UTF-8 text (byte 0xff)"


def test_bytes_that_are_not_the_file_give_no_line(tmp_path):
    path = tmp_path / "in.gz"
    path.write_bytes(gzip.compress(table(2)))
    with pytest.raises(InputError) as error:
        guarded_read(lambda: gzip.decompress(path.read_bytes()).decode(), path)
    assert str(error.value) == f"{path}: not UTF-8 text (byte 0xff)"


def test_a_decode_with_another_codec_names_that_codec(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(table(4))
    with pytest.raises(InputError) as error:
        guarded_read(lambda: path.read_bytes().decode("ascii"), path)
    assert str(error.value) == f"{path}:4: not ascii text (byte 0xff)"


def test_a_decode_of_bytes_for_no_file_names_what_is_read():
    with pytest.raises(InputError) as error:
        guarded_read(lambda: b"\xff".decode(), "x")
    assert str(error.value) == "x: not UTF-8 text (byte 0xff)"


@pytest.mark.parametrize("function, raised", [
    (lambda: "é".encode("ascii"), UnicodeEncodeError),  # encoding is the reader's own doing, not the input's
    (lambda: int("seven"), ValueError),
])
def test_other_value_errors_stay_the_readers_own(function, raised):
    with pytest.raises(raised):
        guarded_read(function, pathlib.Path("x"))


def test_several_inputs_are_named_together_when_the_file_is_not_known(tmp_path):
    """A reader's ``parts`` given several inputs gets them as a list; building the message raised TypeError."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    for path in (a, b):
        path.write_bytes(table(2))
    with pytest.raises(InputError) as error:
        guarded_read(lambda: b.read_bytes().decode(), [a, b])
    assert (str(error.value), error.value.line) == (f"{a}, {b}: not UTF-8 text (byte 0xff)", None)
    with pytest.raises(InputError) as error:
        guarded_read(lambda: int("1" * 5000), [a, b])
    assert str(error.value) == f"{a}, {b}: a number has more than 4,300 digits; no measurement has that many"


LISTING_READER = """
    import pathlib

    from extrap_plugins import ReaderInfo, hookimpl

    def parts(path, options):  # a listing per input, decoded here: one that is not UTF-8 is bad input
        paths = path if isinstance(path, list) else [path]
        return [line for p in paths for line in pathlib.Path(p).read_bytes().decode().split()]

    def read_part(part, options):
        raise AssertionError("not reached")

    @hookimpl
    def extrap_readers():
        return [ReaderInfo("listing", None, patterns=("*.list",), parts=parts, read_part=read_part)]
    """


@pytest.mark.usefixtures("installed")
def test_a_plugin_reader_given_several_inputs_that_are_not_utf8_is_bad_input_naming_them(tmp_path, monkeypatch,
                                                                                          capsys):
    """It was exit 3, 'reader 'listing' (...) failed on a.list, b.list: TypeError: expected str, bytes or
    os.PathLike object, not list'."""
    fake_distribution(tmp_path / "site", monkeypatch, "hunt-listing", {"hunt_listing": "hunt_listing_reader"},
                      {"hunt_listing_reader": LISTING_READER})
    a, b = tmp_path / "a.list", tmp_path / "b.list"
    a.write_text("run1\n")
    b.write_bytes(b"run2 \xff\n")
    assert cli(capsys, "model", a, b, "--progress", "off") == (
        2, "", f"extrap-plugins: error: {a}, {b}: not UTF-8 text (byte 0xff)\n")
