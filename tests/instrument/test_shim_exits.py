"""How a measured program ends: Ctrl-C keeps its exit status."""

from __future__ import annotations

import ctypes
import signal
import sys

import pytest

from shim_helpers import records, run_program


def _flag_exported() -> bool:
    try:
        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt")
        return True
    except ValueError:
        return False


@pytest.mark.skipif(not _flag_exported(), reason="this Python keeps the Ctrl-C exit status elsewhere")
def test_a_program_ended_by_ctrl_c_still_ends_by_sigint(tmp_path):
    # writing the measurements imported dataclasses and numpy at exit, whose exec cleared CPython's note of the
    # unhandled KeyboardInterrupt: the program ended with status 1 instead of by SIGINT (130 in a shell)
    # (Ctrl-C raises as in a terminal, also where this test runs with SIGINT ignored, as a background job's is)
    program = ("import os, signal, time\nfrom extrap_plugins import instrument\n"
               "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
               "with instrument.region('work'):\n    os.kill(os.getpid(), signal.SIGINT)\n    time.sleep(10)\n")
    result = run_program([sys.executable, "-c", program], tmp_path)
    assert result.returncode == -signal.SIGINT, result.stderr
    said = result.stderr.splitlines()[-1]
    assert said.startswith("extrap-plugins instrument: the program failed: KeyboardInterrupt; each rank wrote")
    [fragment] = tmp_path.glob("out.*.rank0.extrap.jsonl")
    [record] = records(fragment)
    assert record["status"] == "failed" and record["errors"] == ["the program failed: KeyboardInterrupt"]
    assert record["callpaths"] == ["work"]
