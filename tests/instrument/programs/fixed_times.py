"""Stands in for a measured program whose times are fixed: rank 0 appends one run to ``$EXTRAP_OUTPUT`` as the
instrument shim writes it, ``main``'s time a function of the process count, ``n`` and the repetition, the same at
every launch on any machine, so that what the loop plans never depends on the times this machine measures.

The time is ``1 + 0.02 · n · p^(1/2)`` seconds, off by up to ±20 % at each point (as a small program's times are on
a busy machine) and by a spread of a few percent from one repetition to the next.  ``python fixed_times.py``
"""

import json
import os

SPREAD = [1.0, 1.04, 0.97, 1.02]
"""The factor of repetition 0, 1, 2, 3 (then again from the first)."""

rank = int(os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))
size = int(os.environ.get("PMI_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "1")))
if rank == 0:
    n = int(os.environ["EXTRAP_PARAM_N"])
    repetition = int(os.environ["EXTRAP_REPETITION"])
    scatter = 1 + 0.1 * ((7 * size + n) % 5 - 2)
    seconds = (1 + 0.02 * n * size**0.5) * scatter * SPREAD[repetition % len(SPREAD)]
    record = {"format": "extrap-plugins/instrument", "version": 1, "run": os.environ["EXTRAP_RUN_ID"], "status": "ok",
              "errors": [], "program": "fixed_times", "parameters": {"p": size, "n": n}, "repetition": repetition,
              "size": size, "rank": None, "ranks": size, "metrics": {"time": {"unit": "sec", "kind": "time"}},
              "statistics": ["sum", "mean", "min", "max"], "callpaths": ["main"],
              "values": {"time": {"sum": [size * seconds], "mean": [seconds], "min": [seconds], "max": [seconds]}}}
    with open(os.environ["EXTRAP_OUTPUT"], "a", encoding="utf-8") as stream:
        stream.write(json.dumps(record, separators=(",", ":")) + "\n")  # compact, as the shim writes it
