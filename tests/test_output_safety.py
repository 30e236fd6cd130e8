"""``-o`` never destroys what the user has: inputs, permissions, owners, links, read-only files, old figures."""

from __future__ import annotations

import os
import pathlib
import shutil
import stat

import pytest

from extrap_plugins import cli
from extrap_plugins.files import atomic_folder, atomic_writer

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "stencil.jsonl"


def run(capsys, *argv) -> tuple[int, str]:
    status = cli.main(["model", *map(str, argv), "--executor", "serial", "--progress", "off"])
    return status, capsys.readouterr().err


@pytest.fixture
def measurements(tmp_path) -> pathlib.Path:
    path = tmp_path / "in.jsonl"
    shutil.copy(EXAMPLE, path)
    return path


@pytest.mark.parametrize("exporter", ["json", "csv", "text", "html", "extrap-jsonl"])
def test_o_naming_the_input_is_refused_before_any_work(measurements, capsys, host, exporter):
    before = measurements.read_bytes()
    assert run(capsys, measurements, "--export", exporter, "-o", measurements) == (
        2, f"extrap-plugins: error: {measurements}: the output (-o) is an input: writing there would destroy the "
           "measurements; choose another file\n")
    assert measurements.read_bytes() == before


def test_o_through_a_link_to_the_input_is_refused(measurements, capsys, host):
    link = measurements.parent / "link.jsonl"
    link.symlink_to(measurements)
    status, err = run(capsys, measurements, "--export", "json", "-o", link)
    assert status == 2 and "the output (-o) is an input" in err


def test_o_inside_an_input_folder_or_holding_an_input_is_refused(tmp_path, capsys, host, shared_data):
    run_folder = tmp_path / "runs"
    shutil.copytree(shared_data / "cube" / "extrap" / "single_parameter", run_folder)
    profile = next(run_folder.rglob("profile.cubex"))
    before = profile.read_bytes()
    assert run(capsys, run_folder, "--export", "json", "-o", profile) == (
        2, f"extrap-plugins: error: {profile}: the output (-o) is inside the input folder {run_folder}: writing there "
           "would change the input; choose an output outside it\n")
    assert profile.read_bytes() == before
    status, err = run(capsys, profile, "--export", "plot", "-o", run_folder)
    assert status == 2 and "the output (-o) holds the input" in err


def test_a_missing_or_unwritable_output_folder_is_found_before_reading(tmp_path, capsys, host):
    assert run(capsys, tmp_path / "does-not-exist.jsonl", "-o", tmp_path / "no" / "out.txt") == (
        2, f"extrap-plugins: error: {tmp_path / 'no' / 'out.txt'}: the folder for the output does not exist\n")


def test_a_read_only_output_is_kept_unless_allowed(measurements, tmp_path, capsys, host):
    out = tmp_path / "out.txt"
    out.write_text("keep me")
    out.chmod(0o444)
    assert run(capsys, measurements, "-o", out) == (
        2, f"extrap-plugins: error: {out}: is read-only; it is not replaced (make it writable, or "
           "--overwrite-read-only)\n")
    assert out.read_text() == "keep me"
    assert run(capsys, measurements, "-o", out, "--overwrite-read-only")[0] == 0
    assert out.read_text().startswith("call path") and stat.S_IMODE(out.stat().st_mode) == 0o444


def test_replacing_keeps_mode_and_link_and_new_files_follow_the_umask(measurements, tmp_path, capsys, host):
    out = tmp_path / "out.json"
    out.write_text("{}")
    out.chmod(0o664)
    assert run(capsys, measurements, "--export", "json", "-o", out)[0] == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o664
    target = tmp_path / "real.json"
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert run(capsys, measurements, "--export", "json", "-o", link)[0] == 0
    assert link.is_symlink() and target.read_text().startswith("{")
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.json"
        assert run(capsys, measurements, "--export", "json", "-o", fresh)[0] == 0
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
    finally:
        os.umask(old)


def test_write_errors_name_the_o_path_not_the_temporary_file(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as root: permissions do not stop writes")
        with pytest.raises(OSError) as caught, atomic_writer(folder / "out.txt") as stream:
            stream.write("x")
        assert caught.value.filename == str(folder / "out.txt")
    finally:
        folder.chmod(0o700)


def test_an_interrupted_folder_export_leaves_the_old_figures(tmp_path):
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "old.png").write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt), atomic_folder(figures) as staging:
        (pathlib.Path(staging) / "new.png").write_bytes(b"new")
        raise KeyboardInterrupt
    assert sorted(p.name for p in figures.iterdir()) == ["old.png"]
    assert [p.name for p in tmp_path.iterdir()] == ["figures"]  # no staging folder left behind
    with atomic_folder(figures) as staging:
        (pathlib.Path(staging) / "new.png").write_bytes(b"new")
    assert sorted(p.name for p in figures.iterdir()) == ["new.png"]


def test_a_folder_with_other_files_is_not_replaced_by_figures(tmp_path):
    from extrap_plugins.errors import InputError

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match=r"holds files that are not figures \(notes.txt\)"):
        with atomic_folder(folder):
            pass
    assert (folder / "notes.txt").read_text() == "mine"


def test_concurrent_writers_of_one_file_never_collide(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from extrap_plugins.files import write_atomically

    target = tmp_path / "plot.pdf"
    with ThreadPoolExecutor(6) as pool:
        list(pool.map(lambda i: write_atomically(target, bytes([i]) * 100_000, sync=False), range(6)))
    assert len(set(target.read_bytes())) == 1 and [p.name for p in tmp_path.iterdir()] == ["plot.pdf"]


def test_a_named_pipe_is_written_in_place_not_replaced_by_a_file(measurements, tmp_path, capsys, host):
    import threading

    pipe = tmp_path / "models.pipe"
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text()), daemon=True)
    reader.start()
    assert run(capsys, measurements, "--export", "csv", "-o", pipe) == (0, "")
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    assert received and received[0].startswith("callpath,metric,")
    assert [path.name for path in tmp_path.iterdir()] == sorted(["in.jsonl", "models.pipe"])  # no temporary left


def test_o_dev_stdout_sent_to_a_file_keeps_what_was_printed_before(measurements, tmp_path):
    """``suggest --export /dev/stdout > out.txt``: the plan was written by renaming over out.txt, and the report
    printed into the file the shell had opened was lost; now both reach the file."""
    import subprocess
    import sys

    out = tmp_path / "out.txt"
    with open(out, "w") as stream:
        done = subprocess.run([sys.executable, "-m", "extrap_plugins", "suggest", "--param", "p=2,4,8,16,32",
                               "--export", "/dev/stdout"], stdout=stream, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "EXTRAP_PLUGINS_NO_AUTOLOAD": "1"}, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    text = out.read_text()
    assert text.startswith('{\n "format": "extrap-plugins/plan",\n')
    assert "\ndesign space: p (5 values) = 5 points; " in text


@pytest.mark.parametrize("command", [
    ["suggest", "{input}", "--export", "{input}"],
    ["compare", "{input}", "{input}", "-o", "{input}"],
    ["efficiency", "{input}", "-o", "{input}"],
    ["whatif", "{input}", "--calibrate", "--target", "p=64", "--save-machine", "{input}"],
    ["requirements", "{input}", "--system", "{input}", "-o", "{input}"],
])
def test_no_command_writes_over_its_input(measurements, capsys, host, command):
    before = measurements.read_bytes()
    option = command[-2]
    assert cli.main([part.format(input=measurements) for part in command]) == 2
    assert capsys.readouterr().err == (f"extrap-plugins: error: {measurements}: the output ({option}) is an input: "
                                       "writing there would destroy the measurements; choose another file\n")
    assert measurements.read_bytes() == before


def test_two_outputs_on_one_file_are_refused(measurements, tmp_path, capsys, host):
    out = tmp_path / "out.txt"
    assert cli.main(["whatif", str(measurements), "--calibrate", "--target", "p=64", "-o", str(out),
                     "--save-machine", str(out)]) == 2
    assert capsys.readouterr().err == (f"extrap-plugins: error: {out}: --save-machine and -o name the same file: the "
                                       "second would replace the first\n")
    assert not out.exists()
