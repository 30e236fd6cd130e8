"""``-o`` never destroys what the user has: inputs, permissions, owners, links, read-only files, the files
beside a folder of figures, old figures."""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import stat
from typing import Iterator, Sequence

import pytest

from extrap_plugins import cli
from extrap_plugins.errors import InputError
from extrap_plugins.files import FolderOutput, atomic_writer

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


def plot(capsys, *argv) -> tuple[int, str]:
    """``model stencil --export plot --metric time`` with more arguments: (exit status, stderr)."""
    pytest.importorskip("matplotlib", reason="the plot exporter needs the 'plot' extra (matplotlib)")
    return run(capsys, EXAMPLE, "--export", "plot", "--metric", "time", *argv)


def users_files(folder: pathlib.Path) -> dict[str, bytes]:
    folder.mkdir(exist_ok=True)
    mine = {"holiday_photo.png": b"\x89PNG my holiday", "logo.svg": b"<svg>my logo</svg>"}
    for name, content in mine.items():
        (folder / name).write_bytes(content)
    return mine


FIVE = ["main-allreduce.time.png", "main-compute.time.png", "main-halo_exchange.time.png", "main-setup.time.png",
        "main.time.png"]


def test_a_plot_folder_keeps_the_users_own_images(tmp_path, capsys, host):
    # every .png/.svg/.pdf counted as an earlier figure: the folder was replaced whole and both files were gone
    folder = tmp_path / "pics"
    mine = users_files(folder)
    assert plot(capsys, "--callpath", "main", "-o", f"{folder}/") == (0, "")
    assert {name: (folder / name).read_bytes() for name in mine} == mine
    assert sorted(p.name for p in folder.iterdir()) == [".extrap-plugins-files.json", *mine, "main.time.png"]


def test_the_api_keeps_the_users_own_images_in_a_plot_folder(tmp_path, host, monkeypatch):
    pytest.importorskip("matplotlib", reason="the plot exporter needs the 'plot' extra (matplotlib)")
    import extrap_plugins

    monkeypatch.chdir(tmp_path)
    mine = users_files(tmp_path / "apipics")
    models = extrap_plugins.model(extrap_plugins.read(EXAMPLE), callpaths=["main"], metrics=["time"])
    extrap_plugins.export(models, "plot", "apipics")
    assert {name: (tmp_path / "apipics" / name).read_bytes() for name in mine} == mine
    assert (tmp_path / "apipics" / "main.time.png").read_bytes().startswith(b"\x89PNG\r\n")


def test_o_dot_writes_the_figures_beside_the_other_files_of_the_current_folder(tmp_path, capsys, host,
                                                                                monkeypatch):
    # the current folder itself was swapped for a new one (a thesis.pdf in it deleted)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "thesis.pdf").write_bytes(b"%PDF- my thesis")
    inode = tmp_path.stat().st_ino
    assert plot(capsys, "-o", ".") == (0, "")
    assert (tmp_path / "thesis.pdf").read_bytes() == b"%PDF- my thesis"
    assert tmp_path.stat().st_ino == inode and pathlib.Path.cwd().samefile(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".extrap-plugins-files.json", *FIVE, "thesis.pdf"]


def test_exporting_again_replaces_our_earlier_figures_and_removes_those_not_drawn_again(tmp_path, capsys, host):
    folder = tmp_path / "pics"
    mine = users_files(folder)
    record = [".extrap-plugins-files.json"]
    assert plot(capsys, "-o", folder) == (0, "")
    assert sorted(p.name for p in folder.iterdir()) == sorted([*record, *mine, *FIVE])
    (folder / "main.time.png").chmod(0o640)
    first = (folder / "main.time.png").read_bytes()
    assert plot(capsys, "--callpath", "main", "--target", "p=4096,n=16384", "-o", folder) == (0, "")
    assert sorted(p.name for p in folder.iterdir()) == sorted([*record, *mine, "main.time.png"])
    assert (folder / "main.time.png").read_bytes() != first  # replaced: now with the target
    assert stat.S_IMODE((folder / "main.time.png").stat().st_mode) == 0o640
    assert plot(capsys, "--callpath", "main", "-o", folder, "--export-option", "format=svg") == (0, "")
    assert sorted(p.name for p in folder.iterdir()) == sorted([*record, *mine, "main.time.svg"])
    assert {name: (folder / name).read_bytes() for name in mine} == mine


@pytest.mark.parametrize("changed", ["a file of the user's", "a figure of ours the user changed"])
def test_a_users_file_with_the_name_of_a_figure_is_refused(tmp_path, capsys, host, changed):
    folder = tmp_path / "pics"
    mine = users_files(folder)
    if changed == "a figure of ours the user changed":
        assert plot(capsys, "-o", folder) == (0, "")
    (folder / "main.time.png").write_bytes(b"my own main.time.png")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert plot(capsys, "-o", folder) == (
        2, f"extrap-plugins: error: {folder}/main.time.png: is not a figure an earlier export wrote here; it is not "
           "replaced (move it away, or give another folder)\n")
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert {name: before[name] for name in mine} == mine


def test_a_figure_of_ours_the_user_changed_is_theirs_and_kept(tmp_path, capsys, host):
    folder = tmp_path / "pics"
    assert plot(capsys, "-o", folder) == (0, "")
    (folder / "main-setup.time.png").write_bytes(b"annotated by hand")
    assert plot(capsys, "--callpath", "main", "-o", folder) == (0, "")
    assert (folder / "main-setup.time.png").read_bytes() == b"annotated by hand"  # not drawn again, not removed
    assert sorted(p.name for p in folder.iterdir()) == [".extrap-plugins-files.json", "main-setup.time.png",
                                                        "main.time.png"]


def test_a_record_we_did_not_write_is_refused(tmp_path, capsys, host):
    folder = tmp_path / "pics"
    folder.mkdir()
    (folder / ".extrap-plugins-files.json").write_text('{"files": {"thesis.pdf": []}}')
    assert plot(capsys, "-o", folder) == (
        2, f"extrap-plugins: error: {folder}/.extrap-plugins-files.json: is not the record of an earlier export; it "
           "is not replaced (move it away, or give another folder)\n")
    assert [p.name for p in folder.iterdir()] == [".extrap-plugins-files.json"]


@pytest.mark.parametrize("when", ["staging the second figure", "staging the record"])
def test_an_interrupted_folder_export_leaves_the_old_figures(tmp_path, monkeypatch, when):
    folder = tmp_path / "figures"
    mine = users_files(folder)
    FolderOutput(folder, ["a.png", "b.png"]).write([b"old a", b"old b"])
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    real = FolderOutput._stage
    calls = []

    def stage(self, name, content, *args, **kwargs):
        calls.append(name)
        if (when == "staging the second figure" and name == "b.png") or (when == "staging the record"
                                                                         and name.startswith(".extrap")):
            raise KeyboardInterrupt
        return real(self, name, content, *args, **kwargs)

    monkeypatch.setattr(FolderOutput, "_stage", stage)
    with pytest.raises(KeyboardInterrupt):
        FolderOutput(folder, ["a.png", "b.png", "c.png"]).write([b"new a", b"new b", b"new c"])
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # no temporary file left either
    assert {name: before[name] for name in mine} == mine
    monkeypatch.setattr(FolderOutput, "_stage", real)
    FolderOutput(folder, ["a.png"]).write([b"new a"])
    assert sorted(p.name for p in folder.iterdir()) == [".extrap-plugins-files.json", "a.png", *mine]
    assert [p.name for p in tmp_path.iterdir()] == ["figures"]


def test_an_interrupt_among_the_renames_waits_until_they_are_done(tmp_path, monkeypatch):
    import signal

    folder = tmp_path / "figures"
    FolderOutput(folder, ["a.png", "b.png"]).write([b"old a", b"old b"])
    real = os.replace
    renamed = []

    def replace(source, target):
        if not renamed:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C after the first rename
        renamed.append(os.path.basename(target))
        real(source, target)

    monkeypatch.setattr(os, "replace", replace)
    # Ctrl-C as an interactive Python has it: a background job (`pytest &`) starts with SIGINT ignored
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            FolderOutput(folder, ["a.png", "b.png"]).write([b"new a", b"new b"])
    finally:
        signal.signal(signal.SIGINT, previous)
    assert renamed == [".extrap-plugins-files.json", "a.png", "b.png", ".extrap-plugins-files.json"]
    assert [(folder / n).read_bytes() for n in ("a.png", "b.png")] == [b"new a", b"new b"]


def test_a_new_folder_is_made_and_left_out_when_the_export_fails(tmp_path, monkeypatch):
    def stage(self, name, content, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(FolderOutput, "_stage", stage)
    with pytest.raises(OSError) as caught:
        FolderOutput(tmp_path / "new", ["a.png"]).write([b"a"])
    assert caught.value.filename == str(tmp_path / "new") and list(tmp_path.iterdir()) == []


def test_a_file_where_a_folder_of_figures_goes_is_refused(tmp_path):
    (tmp_path / "results").write_text("mine")
    with pytest.raises(InputError) as caught:
        FolderOutput(tmp_path / "results", ["a.png"], what="figure")
    assert str(caught.value) == (f"{tmp_path}/results: is not a folder; it is not replaced by a folder of figures "
                                 "(give a folder, or a file name with an extension)")
    assert (tmp_path / "results").read_text() == "mine"


def test_a_read_only_single_figure_is_replaced_with_the_flag(tmp_path, capsys, host):
    # the flag was checked, then the exporter refused the file all the same, advising the flag that was given
    out = tmp_path / "main.png"
    out.write_bytes(b"old")
    out.chmod(0o444)
    assert plot(capsys, "--callpath", "main", "-o", out) == (
        2, f"extrap-plugins: error: {out}: is read-only; it is not replaced (make it writable, or "
           "--overwrite-read-only)\n")
    assert plot(capsys, "--callpath", "main", "-o", out, "--overwrite-read-only") == (0, "")
    assert out.read_bytes().startswith(b"\x89PNG") and stat.S_IMODE(out.stat().st_mode) == 0o444


@pytest.mark.parametrize("command", [
    ["efficiency", str(ROOT / "examples" / "isoefficiency.csv"), "--size", "n", "-o", "{out}"],
    ["compare", str(EXAMPLE), str(EXAMPLE), "-o", "{out}"],
    ["suggest", "--param", "p=2,4,8,16,32", "--export", "{out}"],
])
def test_the_read_only_advice_names_only_options_the_command_has(tmp_path, capsys, host, command):
    # it said '(make it writable, or --overwrite-read-only)', a flag these commands do not have
    out = tmp_path / "ro.txt"
    out.write_text("keep me")
    out.chmod(0o444)
    assert cli.main([part.format(out=out) for part in command]) == 2
    assert capsys.readouterr().err == (f"extrap-plugins: error: {out}: is read-only; it is not replaced (make it "
                                       "writable)\n")
    assert out.read_text() == "keep me"


def test_a_path_exporter_onto_its_input_folder_names_what_it_writes(tmp_path, capsys, host):
    # it said 'writing figures there' for an exporter that writes no figures
    import types

    from extrap_plugins import ExporterInfo, hookimpl

    plugin = types.ModuleType("tables")
    plugin.extrap_exporters = hookimpl(lambda: [ExporterInfo("tables", lambda m, p, o: None, kind="path")])
    host.register(plugin, "tables")
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(EXAMPLE, folder / "stencil.jsonl")
    assert run(capsys, folder / "stencil.jsonl", "--export", "tables", "-o", folder) == (
        2, f"extrap-plugins: error: {folder}: the output (-o) holds the input {folder / 'stencil.jsonl'}: writing the "
           "tables exporter's files there would mix them with the measurements; choose another folder\n")


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


def as_nobody(*argv: str, groups: Sequence[int] = ()) -> tuple[int, str]:
    """``extrap-plugins model ARGV`` run by the user nobody, also in ``groups`` (a child process that gave up
    root): (status, stderr).

    The child is forked, not started, with the modules the command needs imported first: a Python installed in a
    folder of root's alone (a pyenv in root's home) cannot be started, nor its modules imported, by nobody."""
    import io
    import json
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as warm:
        assert cli.main(["model", *argv[:1], "-o", os.path.join(warm, "out.txt"), "--executor", "serial",
                         "--progress", "off"]) == 0
    readable, writable = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.close(readable)
            os.setgroups(list(groups))
            os.setgid(65534)
            os.setuid(65534)
            sys.stderr = io.StringIO()
            status = cli.main(["model", *argv, "--executor", "serial", "--progress", "off"])
            os.write(writable, json.dumps([status, sys.stderr.getvalue()]).encode())
        except BaseException as error:
            os.write(writable, json.dumps([-1, repr(error)]).encode())
        finally:
            os._exit(0)
    os.close(writable)
    with os.fdopen(readable, "rb") as stream:
        answer = stream.read()
    os.waitpid(child, 0)
    return tuple(json.loads(answer))


def test_a_file_of_another_user_that_this_one_cannot_write_is_refused(measurements, host):
    """A file of root's (mode 644) in a folder everyone writes to was replaced by nobody's export: its owner
    became nobody, though the shell refuses ``> file`` there and the README says an output keeps its owner."""
    import tempfile

    if os.geteuid() != 0:
        pytest.skip("making a file of another user needs root")
    shared = pathlib.Path(tempfile.mkdtemp(prefix="extrap-shared-"))  # pytest's own folders are root's alone
    try:
        shared.chmod(0o777)
        theirs = shared / "report.txt"
        theirs.write_text("root's report")
        theirs.chmod(0o644)
        source = shared / "in.jsonl"
        shutil.copy(measurements, source)
        assert as_nobody(str(source), "-o", str(theirs)) == (
            2, f"extrap-plugins: error: {theirs}: is read-only for this user (it belongs to root); it is not replaced "
               "(make it writable, or --overwrite-read-only)\n")
        assert (theirs.read_text(), theirs.stat().st_uid) == ("root's report", 0)
        assert sorted(p.name for p in shared.iterdir()) == ["in.jsonl", "report.txt"]
        assert as_nobody(str(source), "-o", str(theirs), "--overwrite-read-only") == (0, "")  # asked for: replaced
        assert theirs.read_text().startswith("call path")
        assert (theirs.stat().st_uid, stat.S_IMODE(theirs.stat().st_mode)) == (65534, 0o644)
    finally:
        shutil.rmtree(shared)


def test_a_shared_file_this_user_may_write_keeps_its_group(measurements, host):
    """A report of root's, ``rw-rw-r--`` for the group 100 the user is in too, was replaced by a file of the user's
    own group: the others of group 100 could no longer write it."""
    import tempfile

    if os.geteuid() != 0:
        pytest.skip("making a file of another user needs root")
    shared = pathlib.Path(tempfile.mkdtemp(prefix="extrap-shared-"))
    try:
        shared.chmod(0o777)
        report = shared / "report.txt"
        report.write_text("the group's report")
        os.chown(report, 0, 100)
        report.chmod(0o664)
        source = shared / "in.jsonl"
        shutil.copy(measurements, source)
        assert as_nobody(str(source), "-o", str(report), groups=[100]) == (0, "")
        assert report.read_text().startswith("call path")
        status = report.stat()
        assert (status.st_uid, status.st_gid, stat.S_IMODE(status.st_mode)) == (65534, 100, 0o664)
    finally:
        shutil.rmtree(shared)


@pytest.mark.parametrize("exporter", ["text", "json", "html"])
def test_o_ending_with_a_slash_names_a_folder_and_never_writes_a_file_there(measurements, tmp_path, capsys, host,
                                                                            exporter):
    """``-o results/`` wrote a file called ``results``, and ``-o report.txt/`` replaced the file report.txt: the
    shell refuses both (``> results/``), and so does every exporter that writes one file."""
    report = tmp_path / "report.txt"
    report.write_text("my report")
    for given in (f"{tmp_path}/results/", f"{report}/"):
        assert run(capsys, measurements, "--export", exporter, "-o", given) == (
            2, f"extrap-plugins: error: {given}: ends with /, so it names a folder, and -o writes one file; give a "
               "file name\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "report.txt"]
    assert report.read_text() == "my report"


@pytest.mark.parametrize("command", [
    ["suggest", "--param", "p=2,4,8,16,32", "--export", "{out}"],
    ["whatif", str(ROOT / "examples" / "codesign" / "synthetic.jsonl"), "--calibrate", "--target", "p=64,n=1e5",
     "--save-machine", "{out}"],
])
def test_an_option_of_one_file_ending_with_a_slash_writes_no_file(tmp_path, capsys, host, command):
    out = f"{tmp_path}/plan/"
    assert cli.main([part.format(out=out) for part in command]) == 2
    assert capsys.readouterr().err == (f"extrap-plugins: error: {out}: ends with /, so it names a folder, and "
                                       f"{command[-2]} writes one file; give a file name\n")
    assert list(tmp_path.iterdir()) == []


def test_an_extra_p_archive_onto_a_folder_is_refused_before_anything_is_read(tmp_path, capsys, host, monkeypatch):
    # it was written whole beside the folder, then said as "adir: Is a directory" when the rename failed; then it
    # was refused after modelling (the extra-p exporter, of kind "path", was taken for one that writes a folder),
    # and "new/" was written as a file called "new"
    folder = tmp_path / "adir"
    folder.mkdir()
    (folder / "mine.txt").write_text("mine")
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "not-read.jsonl"  # the output is refused first: this input is never looked at
    for output, said in [("adir", "adir: is a folder; this exporter writes one file"),
                         (".", ".: is a folder; this exporter writes one file"),
                         ("new/", "new/: ends with /, so it names a folder, and -o writes one file; give a file name")]:
        assert run(capsys, missing, "--export", "extra-p", "-o", output) == (2, f"extrap-plugins: error: {said}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]
    assert [p.name for p in folder.iterdir()] == ["mine.txt"]


def test_a_file_given_with_a_slash_as_a_folder_of_figures_is_refused(tmp_path, capsys, host):
    # it said "unknown plot format '.txt'", as if a file were asked for
    report = tmp_path / "report.txt"
    report.write_text("my report")
    assert plot(capsys, "-o", f"{report}/") == (
        2, f"extrap-plugins: error: {report}/: is not a folder, though the / at its end names one; it is not "
           "replaced\n")
    assert report.read_text() == "my report"


@pytest.mark.parametrize("command", [
    ["suggest", "--param", "p=2,4,8,16,32", "--export", "-"],
    ["whatif", str(ROOT / "examples" / "codesign" / "synthetic.jsonl"), "--calibrate", "--target", "p=64,n=1e5",
     "--save-machine", "-"],
])
def test_a_dash_is_no_file_name_for_an_option_that_does_not_print(tmp_path, capsys, host, monkeypatch, command):
    """``suggest --export -`` wrote the plan to a file called ``-`` in the current folder, where ``-`` is the
    standard output for ``-o``: said, before any work, with the way to name such a file."""
    monkeypatch.chdir(tmp_path)
    option = command[-2]
    assert cli.main(command) == 2
    assert capsys.readouterr().err == (f"extrap-plugins: error: -: {option} - would be a file called '-' (the "
                                       "standard output is not an output of this option); give a file name (./- "
                                       "for a file called '-')\n")
    assert list(tmp_path.iterdir()) == []


@contextlib.contextmanager
def ctrl_c_as_a_temporary_file_is_made(monkeypatch, skip: int = 0) -> Iterator[None]:
    """Ctrl-C as the hidden temporary file number ``skip + 1`` is made (``O_EXCL``), when ``open`` has made it and
    before its name is returned."""
    import signal

    real = os.open
    made = []

    def opened(path, flags, *args, **kwargs):
        handle = real(path, flags, *args, **kwargs)
        if flags & os.O_EXCL:
            made.append(path)
            if len(made) == skip + 1:
                signal.raise_signal(signal.SIGINT)
        return handle

    monkeypatch.setattr(os, "open", opened)
    # Ctrl-C as an interactive Python has it: a background job (`pytest &`) starts with SIGINT ignored
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        monkeypatch.setattr(os, "open", real)


@pytest.mark.parametrize("where", ["atomic_writer", "check_destination", "the first figure", "the record"])
def test_ctrl_c_as_a_temporary_file_is_made_leaves_no_file(tmp_path, monkeypatch, where):
    """The hidden file ``.out.txt.x4udnqy6.tmp`` stayed when Ctrl-C came as it was made: its name was not yet
    known to the code that removes it."""
    from extrap_plugins.files import check_destination

    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "old.txt").write_text("old")
    with ctrl_c_as_a_temporary_file_is_made(monkeypatch, skip={"the record": 2}.get(where, 0)), \
            pytest.raises(KeyboardInterrupt):
        if where == "atomic_writer":
            with atomic_writer(folder / "old.txt") as stream:
                stream.write("new")
        elif where == "check_destination":
            check_destination(folder / "old.txt")
        else:
            FolderOutput(folder, ["a.png", "b.png"]).write([b"a", b"b"])
    assert [(p.name, p.read_text()) for p in folder.iterdir()] == [("old.txt", "old")]
