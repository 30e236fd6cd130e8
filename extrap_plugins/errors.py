"""Errors and warnings that reach the user.

Everything the user did wrong is an :class:`InputError`: the CLI prints it as
one line (``extrap-plugins: error: FILE:LINE: what is wrong``) and exits 2.
Everything the user should know about a result is an :class:`ExtrapWarning`
naming the call path and metric it concerns.
"""

from __future__ import annotations

import enum
import os


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


def exit_text(error: SystemExit) -> str:
    """``called sys.exit(3)``: what a plugin that raised SystemExit attempted (one line: the code's repr)."""
    return f"called sys.exit({error.code!r})"
