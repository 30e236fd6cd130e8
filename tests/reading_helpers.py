"""An input with a value that reading leaves out with a warning, or with a key the reader notes it does not read,
for the tests that every report says so (the analysis reports, ``efficiency``, ``compare``, ``requirements`` and
``whatif``, as the models' exports do)."""

from __future__ import annotations

import json
import math
import pathlib

MACHINE = '[rates]\nprocessor = { metric = "flop", rate = 1e9 }\n'
"""A machine profile of the input's ``flop`` (``whatif --machine``)."""

SYSTEM = '[system]\nprocesses = 65536\nmemory_per_process = "2 GiB"\n[upgrades]\n"double the racks" = { processes = "2x" }\n'
"""A system with one upgrade, whose memory the input's ``bytes_used`` fills (``requirements --system``)."""


def measured(path: pathlib.Path, nan: bool = True, *, host: bool = False) -> str:
    """Write JSON Lines of one call path, ``main``, at p = 2..32 × n = 10..160: ``time`` (``1e-3·n/p +
    1e-4·log2 p``), ``bytes_used`` and ``flop``; with ``nan`` the time on line 4 (p=2, n=20) is ``NaN``; with
    ``host`` every row also says where it ran (``"host": "node1"``, a key the JSON reader does not read:
    :func:`noted`).  Returns the warning reading that value gives (``''`` without ``nan``)."""
    rows = [{"params": {"p": p, "n": n}, "callpath": "main", "metric": metric, "value": value,
             **({"host": "node1"} if host else {})}
            for p in (2, 4, 8, 16, 32) for n in (10, 20, 40, 80, 160)
            for metric, value in (("time", 1e-3 * n / p + 1e-4 * math.log2(p)), ("bytes_used", 100.0 * n),
                                  ("flop", 50.0 * n))]
    if nan:
        rows[3]["value"] = math.nan
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return (f"{path}: 1 value is not a finite number (nan, inf or beyond the range of a float) and is left out as "
            "missing: line 4; series main [time]") if nan else ""


def noted(path: pathlib.Path, nan: bool = False) -> tuple[str, str]:
    """Write :func:`measured`'s JSON Lines with the key ``host`` on every row, which the JSON reader does not read
    and says so in a note (:attr:`Experiment.notes <extrap_plugins.experiment.Experiment.notes>`; no warning).
    Returns that note and the warning of :func:`measured` (``''`` without ``nan``)."""
    said = measured(path, nan, host=True)
    return "not read: 1 key 'host' (line 1); a row holds params, callpath, metric, value", said
