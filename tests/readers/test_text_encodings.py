"""The encodings every text reader reads (``readers._common.read_text`` and ``head``, for the sniffers)."""

from __future__ import annotations

import codecs
import pathlib

import pytest

from extrap_plugins.cli import ExitStatus, main


@pytest.mark.parametrize("name, text, model", [
    ("table.csv", "p,value\r\n2,1\r\n4,2\r\n8,3\r\n16,4\r\n32,5\r\n", "1 · log2(p)"),
    ("extrap.txt", "PARAMETER p\nPOINTS 2 4 8 16 32\nREGION main\n" + "".join(f"DATA {2 * p}\n" for p in (2, 4, 8, 16, 32)),
     "2 · p"),
])
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_utf16_with_its_byte_order_mark_is_read(host, tmp_path, capsys, name, text, model, encoding):
    # Windows PowerShell's "> file" and Excel's "Unicode Text" write UTF-16: "not UTF-8 text (byte 0xff)", and a
    # .txt was "no reader recognises this input" (the sniffers saw the bytes)
    path = tmp_path / name
    path.write_bytes(text.encode("utf-16") if encoding == "utf-16" else codecs.BOM_UTF16_BE + text.encode(encoding))
    assert main(["model", str(path)]) == ExitStatus.OK
    assert model in capsys.readouterr().out


def test_utf16_without_its_mark_is_said_to_be_no_utf8(host, tmp_path, capsys):
    # NUL is valid UTF-8: the table was read as names with NULs in them ("no 'value' column; the columns are ...")
    path = tmp_path / "table.csv"
    path.write_bytes("p,value\n2,1\n".encode("utf-16-le"))
    assert main(["model", str(path)]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins: error: {path}:1: not UTF-8 text (NUL bytes: UTF-16 without "
                                       "its byte-order mark?); save the table as UTF-8 (a spreadsheet's \"CSV UTF-8\")\n")


@pytest.mark.parametrize("text", [
    "PARAMETER p\nPOINTS 2 4\nDATA 1\nDATA 2\n",
    '{"parameters":{"p":2};"metric":"time";"callpath":"main";"value":1}\n',
])
@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_its_mark_named_txt_is_said_to_be_no_utf8(host, tmp_path, capsys, text, encoding):
    # a .txt was "no reader recognises this input; choose one with --reader" (neither sniffer saw a keyword)
    path = tmp_path / "extrap.txt"
    path.write_bytes(text.encode(encoding))
    assert main(["model", str(path)]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins: error: {path}:1: not UTF-8 text (NUL bytes: UTF-16 "
                                       "without its byte-order mark?); is this the right reader?\n")


MPI_OPTIONS = ["--reader-option", "value=median", "--reader-option", "parameters=Ranks", "--reader-option",
               "callpath=mpi,variable"]


@pytest.mark.parametrize("relative, line, column, options", [
    ("text/one_parameter_1.txt", 13, 9, []),  # was "no reader recognises this input" (its sniffer saw UTF-16)
    ("talpas/talpas_1.txt", 16, 9, []),  # (the same)
    ("jsonlines/complete_matrix_2p.jsonl", 76, 9, []),
    ("mpi_data.csv", 41, 11, MPI_OPTIONS),  # was read: 'MP\x00I_Barrier' a call path of its own, 4 KiB into the file
])
def test_a_nul_byte_in_utf8_text_is_exit_2_naming_its_line_and_column(shared_data, tmp_path, capsys, host,
                                                                      relative, line, column, options):
    lines = (shared_data / "extrap" / relative).read_bytes().split(b"\n")
    lines[line - 1] = lines[line - 1][:column - 1] + b"\0" + lines[line - 1][column - 1:]
    path = tmp_path / pathlib.PurePath(relative).name
    path.write_bytes(b"\n".join(lines))
    assert main(["model", str(path), *options]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins: error: {path}:{line}: a NUL byte at column {column}: no text "
                                       "holds one (the file is damaged here?)\n")


def test_utf32_with_its_byte_order_mark_is_read_as_the_utf8_file(shared_data, tmp_path, capsys, host):
    # read as UTF-16 (its mark begins UTF-32's): "unknown keyword '\x00P\x00A...'"
    original = shared_data / "extrap" / "text" / "one_parameter_1.txt"
    path = tmp_path / "one_parameter_1.txt"
    path.write_bytes(original.read_text(encoding="utf-8").encode("utf-32"))
    assert main(["model", str(path)]) == ExitStatus.OK
    marked = capsys.readouterr().out
    assert main(["model", str(original)]) == ExitStatus.OK
    assert marked == capsys.readouterr().out and "0.2015 · x^2" in marked


def test_json_lines_in_utf16_big_endian_without_its_mark_is_said_to_be_no_utf8(shared_data, tmp_path, capsys, host):
    # "no reader recognises this input" (the json sniffer saw b"\x00{")
    original = shared_data / "extrap" / "jsonlines" / "complete_matrix_2p.jsonl"
    path = tmp_path / "complete_matrix_2p.jsonl"
    path.write_bytes(original.read_text(encoding="utf-8").encode("utf-16-be"))
    assert main(["model", str(path)]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins: error: {path}:1: not UTF-8 text (NUL bytes: UTF-16 without "
                                       "its byte-order mark?); is this the right reader?\n")
