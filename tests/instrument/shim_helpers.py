"""Helpers for the instrument tests: run programs with a clean environment, read their output."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time
from typing import Callable

from extrap_plugins.experiment import Experiment

PROGRAMS = pathlib.Path(__file__).parent / "programs"


def clean_environment(**extra: str) -> dict[str, str]:
    """This environment without EXTRAP_* variables, plus ``extra``."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("EXTRAP_")}
    environment.update(extra)
    return environment


def run_program(command: list[str], folder: pathlib.Path, timeout: float = 90, **environment: str):
    """Run ``command`` in ``folder`` with output to ``folder/out.extrap.jsonl``."""
    env = clean_environment(**{"EXTRAP_OUTPUT": str(folder / "out.extrap.jsonl"), **environment})
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)


def mpi_program(mpiexec: list[str], name: str, processes: int, folder: pathlib.Path, *args: str, **environment: str):
    """Run ``tests/instrument/programs/<name>.py`` on ``processes`` ranks."""
    command = [*mpiexec[:1], "-n", str(processes), *mpiexec[1:], sys.executable, str(PROGRAMS / f"{name}.py"), *args]
    return run_program(command, folder, **environment)


def when_said(monkeypatch, words: str, action: Callable[[], object]) -> None:
    """Make the sweep call ``action`` once it has said a line holding ``words`` (its progress lines, such as
    ``still running after 1 s``): a test acts at a point of the launch's own clock, or holds that clock (the next
    line and ``--timeout`` come no earlier than ``action`` returns) until the program has got somewhere."""
    from extrap_plugins.instrument import sweep

    say = sweep._say

    def saying(message: str) -> None:
        say(message)
        if words in message:
            action()

    monkeypatch.setattr(sweep, "_say", saying)


def wait_for(condition: Callable[[], bool], seconds: float = 60) -> bool:
    """Wait until ``condition()`` holds, at most ``seconds``; whether it does (inside the sweep, a wait that ends
    without raising lets the sweep end its launch, and the test's assertions say what went wrong)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def records(path: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def series(record: dict, metric: str, statistic: str = "sum") -> dict[str, float]:
    """``{callpath: value}`` of one metric and statistic in a record."""
    values = record["values"].get(metric, {}).get(statistic, [None] * len(record["callpaths"]))
    return {c: v for c, v in zip(record["callpaths"], values) if v is not None}


def line_of(experiment: Experiment, fixed: str, value: float) -> Experiment:
    """The one-parameter experiment where ``fixed`` has ``value`` (a line of a cross design)."""
    keep_column = [k for k, name in enumerate(experiment.parameter_names) if name != fixed]
    rows = experiment.coordinates[:, experiment.parameter_names.index(fixed)] == value
    return Experiment.from_columns(
        [experiment.parameter_names[k] for k in keep_column],
        callpath=([c.name for c in experiment.callpaths], experiment.callpath_index[rows]),
        metric=([m.name for m in experiment.metrics], experiment.metric_index[rows]),
        coordinates=experiment.coordinates[rows][:, keep_column],
        value=experiment.value[rows],
        repetition=experiment.repetition[rows],
        metrics=experiment.metrics,
    )
