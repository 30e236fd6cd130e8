"""SIGTERM (a batch job's wall-clock limit) ends every command as Ctrl-C does, and every handler is put back.

The signals go to processes of their own: a SIGTERM must never reach pytest."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

from extrap_plugins import cli, interrupts
from extrap_plugins.files import FolderOutput
from extrap_plugins.instrument import sweep

P = (4, 8, 16, 32, 64)


def tidy_csv(path: pathlib.Path) -> str:
    path.write_text("p,callpath,metric,value\n" + "".join(f"{p},main,time,{1 + 0.5 * p}\n" for p in P))
    return str(path)


def run_script(script: str, *args: str, timeout: float = 30) -> tuple[subprocess.CompletedProcess, list[int]]:
    """The script's outcome in a session of its own, and the processes of that session still alive after it."""
    ended = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=timeout,
                           start_new_session=True, env={**os.environ, "EXTRAP_PLUGINS_NO_AUTOLOAD": "1"})
    return ended, session_processes(ended)


def session_processes(ended: subprocess.CompletedProcess) -> list[int]:
    """The processes left in the session the script led (its session id is its process id)."""
    pid = int(ended.stdout.split()[0]) if ended.stdout.split() else -1
    left = []
    for entry in pathlib.Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == pid and fields[0] != "Z":  # the session, without the zombies not reaped yet
            left.append(int(entry.name))
    return left


TERMINATED_IN_A_WORKER = """
import os, signal, sys, time
from extrap_plugins import cli, engine

def terminated(task):  # in a worker process: the batch job's limit reaches the command; this worker would go on
    os.kill(os.getppid(), signal.SIGTERM)
    time.sleep(60)

print(os.getpid(), flush=True)
engine.fit_block = terminated
sys.exit(cli.main(sys.argv[1:]))
"""


def test_sigterm_ends_model_as_ctrl_c_does_with_its_workers_stopped_and_the_output_kept(tmp_path):
    # it ended the command at once: status -15, no word, and the worker processes went on without it
    data, output = tidy_csv(tmp_path / "runs.csv"), tmp_path / "models.json"
    output.write_text("kept\n")
    ended, left = run_script(TERMINATED_IN_A_WORKER, "model", data, "--stream", "off", "--executor", "process",
                             "--jobs", "1", "--export", "json", "-o", str(output))
    assert (ended.returncode, ended.stderr) == (130, "extrap-plugins: interrupted\n")
    assert left == []
    assert output.read_text() == "kept\n"
    assert sorted(os.listdir(tmp_path)) == ["models.json", "runs.csv"]


CUT_SHORT = """
import os, signal, struct, sys
from extrap_plugins import executors
from extrap_plugins.interrupts import terminate_as_interrupt

def cut_short(item):  # a worker ended while it sends its result: half a message in the pipe of results
    frame = sys._getframe()
    while "result_queue" not in frame.f_locals:
        frame = frame.f_back
    os.write(frame.f_locals["result_queue"]._writer.fileno(), struct.pack("!i", 1000) + b"x")
    os.kill(os.getppid(), signal.SIGTERM)  # the batch job's limit, to the command and to this worker
    os.kill(os.getpid(), signal.SIGKILL)

print(os.getpid(), flush=True)
try:
    with terminate_as_interrupt(), executors.create_executor("process", 1) as pool:
        list(executors.map_ordered(pool, cut_short, [1]))
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_a_worker_ended_while_it_sent_a_result_does_not_keep_the_command_from_ending():
    # SIGTERM to a whole batch job ends the workers too, one of them maybe in the middle of sending a result: the
    # pool's thread then waited for the rest of it forever, and the command for that thread as it exited
    ended, left = run_script(CUT_SHORT, timeout=20)
    assert (ended.returncode, ended.stderr) == (130, "")
    assert left == []


TERMINATED_AMONG_THE_RENAMES = """
import os, signal, sys
from extrap_plugins.files import FolderOutput
from extrap_plugins.interrupts import terminate_as_interrupt

folder = sys.argv[1]
FolderOutput(folder, ["a.png", "b.png"]).write([b"old a", b"old b"])
replace = os.replace

def terminated(source, target):  # the batch job's limit after the first rename
    replace(source, target)
    os.replace = replace
    os.kill(os.getpid(), signal.SIGTERM)

print(os.getpid(), flush=True)
os.replace = terminated
try:
    with terminate_as_interrupt():
        FolderOutput(folder, ["a.png", "b.png"]).write([b"new a", b"new b"])
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_sigterm_among_the_renames_of_an_export_waits_until_they_are_done(tmp_path):
    # Ctrl-C was held back there, SIGTERM (which every command now ends as Ctrl-C) not: half the figures were new
    folder = tmp_path / "figures"
    ended, left = run_script(TERMINATED_AMONG_THE_RENAMES, str(folder))
    assert (ended.returncode, ended.stderr) == (130, "")
    assert [(folder / name).read_bytes() for name in ("a.png", "b.png")] == [b"new a", b"new b"]
    assert sorted(p.name for p in folder.iterdir()) == [".extrap-plugins-files.json", "a.png", "b.png"]


def test_every_handler_is_put_back_after_a_command_and_an_export(tmp_path, capsys):
    # SIGTERM is an interrupt while a command runs and held back while an export renames its files; neither
    # change outlives them, also when the command fails (pytest's own handlers are the ones found and kept)
    def handlers():
        return [signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)]

    before = handlers()
    assert cli.main(["model", tidy_csv(tmp_path / "runs.csv"), "--executor", "serial"]) == 0
    assert handlers() == before
    assert cli.main(["model", str(tmp_path / "missing.csv")]) == 2
    assert handlers() == before
    FolderOutput(tmp_path / "figures", ["a.png"]).write([b"a"])
    assert handlers() == before
    with interrupts.terminate_as_interrupt():
        assert signal.getsignal(signal.SIGTERM) is not before[1]
        with interrupts.interrupts_held():
            pass
        assert signal.getsignal(signal.SIGTERM) is not before[1]
    assert handlers() == before
    capsys.readouterr()


def test_the_sweep_still_offers_the_handler_from_its_one_home():
    assert sweep.terminate_as_interrupt is interrupts.terminate_as_interrupt


INTERRUPTED_TWICE_WHILE_STREAMING = """
import os, shutil, signal, sys
from extrap_plugins import cli, streaming

fit, rmtree = streaming.fit_streamed_block, shutil.rmtree

def terminated(task):  # the batch job's limit (or Ctrl-C) as a block is modelled ...
    os.kill(os.getpid(), signal.SIGTERM)
    return fit(task)

def terminated_again(path, **kwargs):  # ... and again as the scratch folder is removed
    os.kill(os.getpid(), signal.SIGINT)
    rmtree(path, **kwargs)

print(os.getpid(), flush=True)
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as a terminal has it (a test may run in the background)
streaming.fit_streamed_block, shutil.rmtree = terminated, terminated_again
sys.exit(cli.main(sys.argv[1:]))
"""


def test_a_second_interrupt_while_the_scratch_folder_is_removed_does_not_leave_it_behind(tmp_path):
    # an impatient second Ctrl-C (or SIGTERM) cut the removal of the scratch folder short: the sweep's values stayed
    data, scratch = tidy_csv(tmp_path / "runs.csv"), tmp_path / "scratch"
    scratch.mkdir()
    ended, left = run_script(INTERRUPTED_TWICE_WHILE_STREAMING, "model", data, "--stream", "on", "--scratch",
                             str(scratch), "--executor", "serial")
    assert (ended.returncode, ended.stderr) == (130, "extrap-plugins: interrupted\n")
    assert os.listdir(scratch) == []


TERMINATED_BEFORE_THE_FIRST_LAUNCH = """
import os, signal, sys
from extrap_plugins.instrument import sweep

planned = sweep._not_measured

def terminated(*args, **kwargs):  # the batch job's limit while the runs measured before are read back
    os.kill(os.getpid(), signal.SIGTERM)
    return planned(*args, **kwargs)

print(os.getpid(), flush=True)
sweep._not_measured = terminated
sys.exit(sweep.main(sys.argv[1:]))
"""


def test_sigterm_to_the_sweep_before_its_first_launch_ends_it_as_ctrl_c_does(tmp_path):
    # python -m extrap_plugins.instrument.sweep took SIGTERM as an interrupt during its launches only
    ended, left = run_script(TERMINATED_BEFORE_THE_FIRST_LAUNCH, "--np", "1", "-o", str(tmp_path / "runs"), "--",
                             sys.executable, "-c", "pass")
    assert (ended.returncode, ended.stderr.splitlines()[-1]) == (130, "extrap-plugins run: interrupted")
    assert left == []


HUNG_UP_AS_THE_OUTPUT_IS_WRITTEN = """
import os, signal, sys
from extrap_plugins import cli, files

# as a terminal's session starts it, or nohup (whatever the test itself runs under: CI may run under nohup)
signal.signal(signal.SIGHUP, signal.SIG_IGN if sys.argv[1] == "nohup" else signal.SIG_DFL)
replace = os.replace

def hung_up(source, target):  # the terminal closed as the export's temporary file was about to become the output
    os.replace = replace
    os.kill(os.getpid(), signal.SIGHUP)
    replace(source, target)

print(os.getpid(), flush=True)
os.replace = hung_up
sys.exit(cli.main(sys.argv[2:]))
"""


def test_sighup_ends_a_command_as_ctrl_c_does_and_nohup_keeps_it_going(tmp_path):
    # a closed terminal or ssh session ended the command by the signal, its temporary file left beside the output
    runs, out = tidy_csv(tmp_path / "runs.csv"), tmp_path / "out.txt"
    ended, left = run_script(HUNG_UP_AS_THE_OUTPUT_IS_WRITTEN, "terminal", "model", runs, "-o", str(out),
                             "--executor", "serial", "--progress", "off")
    assert (ended.returncode, ended.stderr, left) == (130, "extrap-plugins: interrupted\n", [])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.csv"]
    ended, left = run_script(HUNG_UP_AS_THE_OUTPUT_IS_WRITTEN, "nohup", "model", runs, "-o", str(out),
                             "--executor", "serial", "--progress", "off")
    assert (ended.returncode, ended.stderr) == (0, "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt", "runs.csv"]
    assert out.read_text().startswith("call path")
