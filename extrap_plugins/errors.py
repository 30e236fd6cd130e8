"""Errors and warnings that reach the user.

Everything the user did wrong is an :class:`InputError`: the CLI prints it as
one line (``extrap-plugins: error: FILE:LINE: what is wrong``) and exits 2.
Everything the user should know about a result is an :class:`ExtrapWarning`
naming the call path and metric it concerns.

Runs of an input that could not be read are said alike by the engine and by
the readers that read a folder themselves: once per cause when some run was
read (:func:`skip_warnings`), else by one error naming the count and the first
cause (:func:`none_read`).
"""

from __future__ import annotations

import contextlib
import enum
import os
import warnings
from typing import Iterator, Sequence


class ExitStatus(enum.IntEnum):
    """The exit status of every command (``extrap-plugins`` and ``python -m extrap_plugins.instrument.sweep``)."""

    OK = 0
    ERROR = 1  # a bug of ours or an unexpected failure
    BAD_INPUT = 2  # the user's files, options or values are wrong
    PLUGIN_ERROR = 3  # a plugin is broken or two plugins collide
    RUNS_FAILED = 4  # the measured program failed in some runs (they are listed; the others' measurements are kept)
    INTERRUPTED = 130


class ExtrapError(Exception):
    """Base class of every error this package raises on purpose."""


class InputError(ExtrapError):
    """Bad input: a file, an option or a value the user gave.

    ``path`` and ``line`` (or row) are added to the message when given, so the
    message alone tells the user where to look.
    """

    def __init__(self, message: str, path: str | os.PathLike | None = None, line: int | None = None):
        self.message = message
        self.path = None if path is None else os.fspath(path)
        self.line = line
        super().__init__(str(self))

    def __reduce__(self):  # survive the trip back from a worker process
        return (type(self), (self.message, self.path, self.line))

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        return where + self.message


class PluginError(ExtrapError):
    """A plugin is broken or two plugins collide."""


class RunsFailed(ExtrapError):
    """The measured program failed in every launch, so there is nothing to go on with (exit status 4)."""


class ExtrapWarning(UserWarning):
    """A warning about one series: names the call path and metric."""

    def __init__(self, message: str, callpath: str = "", metric: str = ""):
        self.callpath = callpath
        self.metric = metric
        self.message = message
        prefix = f"{callpath} [{metric}]: " if callpath or metric else ""
        super().__init__(prefix + message)

    def __reduce__(self):  # survive the trip back from a worker process
        return (type(self), (self.message, self.callpath, self.metric))


class QualityWarning(ExtrapWarning):
    """The data do not support a trustworthy model (too few points, noise...)."""


class SetupWarning(ExtrapWarning):
    """How the command runs, not what it read: more workers asked for than there are cores."""


@contextlib.contextmanager
def kept_warnings(kept: list[str]) -> Iterator[list[str]]:
    """Keep the text of every :class:`ExtrapWarning` the block gives, once each, in ``kept`` (what reading warned
    of, for the machine-readable exports: :attr:`Experiment.reading_warnings
    <extrap_plugins.experiment.Experiment.reading_warnings>`), but a :class:`QualityWarning` (a model's, which the
    model carries) or a :class:`SetupWarning` (of the command, not the data), and pass every warning on as it
    came, at the block's end (an error inside it included), to whatever shows them (the CLI gathers them to its
    end anyway)."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            yield kept
    finally:
        for w in caught:
            reading = issubclass(w.category, ExtrapWarning) and not issubclass(w.category,
                                                                               (QualityWarning, SetupWarning))
            if reading and str(w.message) not in kept:
                kept.append(str(w.message))
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


def unnoted(kept: Sequence[str], notes: Sequence[str]) -> list[str]:
    """What reading warned of (``kept`` by :func:`kept_warnings`) that the reader's notes do not say already (a
    CUBE coverage finding is both): each said once, as a note."""
    return [text for text in kept if text not in notes]


def skip_warnings(errors: Sequence[InputError], n_parts: int) -> list[ExtrapWarning]:
    """One warning per cause of the runs that were skipped, in the order first seen.

    Errors of one cause say the same apart from where (file and line).  A cause of one run is
    ``skipped: <its error>``; one of several runs is ``skipped 3 of the 5 runs for the same reason; the first:
    <its first error>``.
    """
    causes: dict[str, list[InputError]] = {}
    for error in errors:
        causes.setdefault(_cause(error), []).append(error)
    said = []
    for group in causes.values():
        if len(group) == 1:
            said.append(ExtrapWarning(f"skipped: {group[0]}"))
        else:
            said.append(ExtrapWarning(f"skipped {len(group)} of the {n_parts} runs for the same reason; the first: "
                                      f"{group[0]}"))
    return said


def _cause(error: InputError) -> str:
    """What ``error`` says apart from where: its file and line, also where the message repeats the file name."""
    if error.path is None:
        return str(error)
    return error.message.replace(error.path, "<file>")


def none_read(n_parts: int, skipped: Sequence[InputError], source: str) -> InputError:
    """The error when no run of an input could be read, with why the first was not: the warnings that say it may
    not be shown (``autotune`` reads its folder quietly each round), and none is given then (:func:`skip_warnings`
    is for inputs of which some run was read).  One part that could not be read is its own error (one run, or all
    runs in one part: a reader's ``parallel=off``)."""
    if n_parts == 1 and skipped:
        return skipped[0]
    first = f"; the first: {skipped[0]}" if skipped else ""
    return InputError(f"none of the {n_parts} runs could be read{first}", source)


def exit_text(error: SystemExit) -> str:
    """``called sys.exit(3)``: what a plugin that raised SystemExit attempted (one line: the code's repr)."""
    return f"called sys.exit({error.code!r})"
