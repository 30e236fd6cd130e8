"""Overhead of the instrument shim, beside a plain ``time.perf_counter`` decorator.

Usage (from the project root, with the ``mpi`` extra installed)::

    .venv/bin/python benchmarks/instrument.py [--repeat 7] [--ranks 4]

Prints one row per measurement: our cost per call (best of ``repeat``, in
CPU time of the process, so that other work on the machine counts less),
the plain-decorator or raw-MPI reference measured in the same run, and the
target from the issue:

* region enter + exit (decorator and ``with``), target ≤ 1 µs, beside a
  decorator that only sums ``perf_counter`` differences;
* a wrapped MPI call above the raw call (``Allreduce`` of one double, an
  ``Isend``/``Recv`` pair to self, a lower-case ``allreduce``), target ≤ 2 µs;
* disabled regions (``EXTRAP_INSTRUMENT=0``, and ``instrument.disable()``
  at run time), target ≤ 0.15 µs;
* the exit gather at ``--ranks`` ranks (snapshot, gather, aggregation and
  the append of the line, on the slowest rank), target ≤ 50 ms.

Extra-P has no instrumentation of its own (it reads Score-P's profiles), so
there is no Extra-P column here.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import timeit

ROOT = pathlib.Path(__file__).resolve().parents[1]
CALLS = 200_000


def per_call(statement, repeat: int, number: int = CALLS) -> float:
    """Best-of-``repeat`` CPU seconds per call of a zero-argument callable.

    CPU time of this process, not wall time: on a busy machine the time
    other processes take the core away is not ours.
    """
    return min(timeit.repeat(statement, number=number, repeat=repeat, timer=time.process_time)) / number


def perf_counter_decorator(function):
    """The reference: what a hand-written timing decorator costs."""
    @functools.wraps(function)
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            timed.total += time.perf_counter() - start
    timed.total = 0.0
    return timed


# ------------------------------------------------------------------ workers
def regions_worker(repeat: int) -> dict:
    """Runs in a child process (so EXTRAP_INSTRUMENT applies to a fresh import)."""
    from extrap_plugins import instrument

    instrument.configure(output=None)

    def plain():
        pass

    decorated = instrument.region(plain)
    reference = perf_counter_decorator(plain)
    block = instrument.region("block")

    def with_block():
        with block:
            pass

    def with_lookup():
        with instrument.region("looked up"):
            pass

    result = {
        "call": per_call(plain, repeat),
        "decorated": per_call(decorated, repeat),
        "perf_counter": per_call(reference, repeat),
        "with": per_call(with_block, repeat),
        "with_lookup": per_call(with_lookup, repeat),
        "call_with_nothing": per_call(lambda: None, repeat),
    }
    if os.environ.get("EXTRAP_INSTRUMENT") != "0":
        instrument.disable()
        result["runtime_disabled_decorated"] = per_call(decorated, repeat)
        result["runtime_disabled_with"] = per_call(with_block, repeat)
        instrument.enable()
    return result


def mpi_worker(repeat: int) -> dict:
    """One process, MPI initialised as a singleton: raw against wrapped calls."""
    import numpy as np
    from mpi4py import MPI

    from extrap_plugins import instrument

    instrument.configure(output=None)
    raw = MPI.COMM_WORLD.Dup()
    wrapped = instrument.mpi.wrap(raw)
    send, receive = np.ones(1), np.empty(1)
    outgoing, incoming = np.ones(8), np.empty(8)

    def allreduce(comm):
        return lambda: comm.Allreduce(send, receive)

    def pair(comm):
        def run():
            request = comm.Isend(outgoing, dest=0, tag=7)
            comm.Recv(incoming, source=0, tag=7)
            request.Wait()
        return run

    def objects(comm):
        return lambda: comm.allreduce(3)

    result = {}
    n = CALLS // 4
    for name, make in (("Allreduce", allreduce), ("Isend+Recv", pair), ("allreduce", objects)):
        result[name] = (per_call(make(raw), repeat, n), per_call(make(wrapped), repeat, n))
    return result


GATHER_PROGRAM = r"""
import json, sys, time
import numpy as np
from mpi4py import MPI
from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)
rank = comm.Get_rank()
for phase in range(10):
    with instrument.region(f"phase {phase}"):
        for step in range(10):
            with instrument.region(f"step {step}"):
                comm.Allreduce(np.ones(4), np.empty(4))
                comm.Sendrecv(np.ones(16), dest=(rank + 1) % comm.size, recvbuf=np.empty(16),
                              source=(rank - 1) % comm.size)
comm.Barrier()
start = time.perf_counter()
instrument.finish()
elapsed = time.perf_counter() - start
slowest = comm.allreduce(elapsed, op=MPI.MAX)
if rank == 0:
    print(json.dumps({"seconds": slowest, "callpaths": len(instrument.snapshot())}))
"""


def gather_benchmark(ranks: int, repeat: int) -> tuple[float, int] | None:
    from extrap_plugins.instrument.sweep import find_launcher

    launcher = find_launcher()
    if launcher is None:
        return None
    best, paths = float("inf"), 0
    with tempfile.TemporaryDirectory() as folder:
        program = pathlib.Path(folder) / "gather.py"
        program.write_text(GATHER_PROGRAM)
        environment = dict(os.environ, EXTRAP_OUTPUT=str(pathlib.Path(folder) / "out.extrap.jsonl"), EXTRAP_QUIET="1")
        for _ in range(repeat):
            done = subprocess.run(launcher.command(ranks, [sys.executable, str(program)]), env=environment,
                                  capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                raise RuntimeError(done.stderr)
            measured = json.loads(done.stdout.strip().splitlines()[-1])
            best, paths = min(best, measured["seconds"]), measured["callpaths"]
    return best, paths


def import_cost(repeat: int) -> float:
    """CPU seconds ``from extrap_plugins import instrument`` adds to a fresh interpreter (best of ``repeat``).

    CPU time of the child (user + system), so that a busy machine does not count the wait for a core.
    """
    import resource

    def best(code: str) -> float:
        times = []
        for _ in range(repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", code], check=True, cwd="/")
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        return min(times)

    return best("from extrap_plugins import instrument") - best("pass")


def child(kind: str, repeat: int, **environment: str) -> dict:
    command = [sys.executable, __file__, "--worker", kind, "--repeat", str(repeat)]
    done = subprocess.run(command, env=dict(os.environ, **environment), capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return json.loads(done.stdout)


# --------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--worker", choices=("regions", "mpi"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker == "regions":
        print(json.dumps(regions_worker(args.repeat)))
        return
    if args.worker == "mpi":
        print(json.dumps(mpi_worker(args.repeat)))
        return

    from tabulate import tabulate

    us = 1e6
    rows = []
    on = child("regions", args.repeat)
    off = child("regions", args.repeat, EXTRAP_INSTRUMENT="0")
    reference = on["perf_counter"] - on["call"]
    rows.append(["region enter+exit, @region", (on["decorated"] - on["call"]) * us, reference * us,
                 (on["decorated"] - on["call"]) / reference, "≤ 1 µs"])
    rows.append(["region enter+exit, with region (object kept)", (on["with"] - on["call"]) * us, reference * us,
                 (on["with"] - on["call"]) / reference, "≤ 1 µs"])
    rows.append(["region enter+exit, with region('name')", (on["with_lookup"] - on["call"]) * us, reference * us,
                 (on["with_lookup"] - on["call"]) / reference, "≤ 1 µs"])
    rows.append(["disabled (EXTRAP_INSTRUMENT=0), @region", (off["decorated"] - off["call"]) * us, reference * us,
                 (off["decorated"] - off["call"]) / reference, "≤ 0.15 µs"])
    rows.append(["disabled (EXTRAP_INSTRUMENT=0), with region", (off["with"] - off["call"]) * us, reference * us,
                 (off["with"] - off["call"]) / reference, "≤ 0.15 µs"])
    rows.append(["disabled (instrument.disable()), @region", (on["runtime_disabled_decorated"] - on["call"]) * us,
                 reference * us, (on["runtime_disabled_decorated"] - on["call"]) / reference, "≤ 0.15 µs"])
    rows.append(["disabled (instrument.disable()), with region", (on["runtime_disabled_with"] - on["call"]) * us,
                 reference * us, (on["runtime_disabled_with"] - on["call"]) / reference, "≤ 0.15 µs"])
    import importlib.util

    if importlib.util.find_spec("mpi4py") is None:
        print("mpi4py is not installed: MPI rows skipped (pip install -e '.[mpi]')", file=sys.stderr)
    else:
        mpi = child("mpi", args.repeat)
        for name, (raw, wrapped) in mpi.items():
            calls = name.count("+") + 1  # Isend+Recv: two wrapped calls per pair
            extra = (wrapped - raw) / calls
            label = f"wrapped {name}, above the raw call" + (" (per call)" if calls > 1 else "")
            rows.append([f"{label} (raw {raw / calls * us:.2f} µs)", extra * us, reference * us, extra / reference,
                         "≤ 2 µs"])
        gathered = gather_benchmark(args.ranks, max(1, min(args.repeat, 5)))
        if gathered is not None:
            seconds, paths = gathered
            rows.append([f"exit gather, {args.ranks} ranks, {paths} call paths", seconds * 1e6, None, None, "≤ 50 ms"])
    rows.append(["import of the shim (from extrap_plugins import instrument)", import_cost(args.repeat) * 1e6, None,
                 None, "≤ 0.1 s"])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load:.1f}; "
          f"CPU time per call in µs (best of {args.repeat}); exit gather: wall time of the slowest rank")
    print(tabulate(rows, headers=["measurement", "ours (µs)", "perf_counter decorator (µs)", "ratio", "target"],
                   floatfmt=".3f", tablefmt="github", missingval="–"))


if __name__ == "__main__":
    main()
