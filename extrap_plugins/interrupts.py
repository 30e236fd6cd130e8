"""The one home of the commands' signal handling, light enough for every command to import.

A batch system ends a job at its wall-clock limit with SIGTERM, and a closed terminal or ssh session sends SIGHUP:
:func:`terminate_as_interrupt` makes them end a command as Ctrl-C does (``extrap-plugins: interrupted``, status
130, the scratch folder removed, the worker processes stopped, nothing half-written at ``-o``).
:func:`interrupts_held` keeps them back over the few steps that must not be cut in half (the renames of an export's
files, the removal of the scratch folder).  Both change the handlers of the main thread only and put back, when
their block ends, the handlers they found; a signal ignored where the command started (SIGHUP under ``nohup``)
stays ignored.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator

ENDING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
"""The signals that end a command as Ctrl-C does inside :func:`terminate_as_interrupt`: a batch job's limit, a closed
terminal (SIGHUP, which Windows has not)."""

HELD = (signal.SIGINT, *ENDING)
"""The signals that end a command as an interrupt: Ctrl-C, and :data:`ENDING` inside :func:`terminate_as_interrupt`."""


def _interrupt(number, frame):
    raise KeyboardInterrupt


def _settable(number: int) -> bool:
    """Whether this thread may change the handler of ``number`` and put it back after: the main thread, and a
    handler that Python knows (not one set outside it, which :func:`signal.getsignal` gives as None) and that does
    not ignore the signal (``nohup`` ignores SIGHUP: the command must go on)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    handler = signal.getsignal(number)
    return handler is not None and handler is not signal.SIG_IGN


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP (:data:`ENDING`) raise KeyboardInterrupt, as Ctrl-C does; the
    handlers they had are put back after (elsewhere than in the main thread, or for a signal ignored, nothing
    changes)."""
    previous = {number: signal.signal(number, _interrupt) for number in ENDING if _settable(number)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT), SIGTERM and SIGHUP back until the block ends, then deliver them to the handlers they had
    (main thread only, and not a signal that is ignored; elsewhere no change)."""
    previous = {number: signal.getsignal(number) for number in HELD if _settable(number)}
    caught: list[int] = []
    try:
        for number in previous:
            signal.signal(number, lambda number, frame: caught.append(number))
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for number in dict.fromkeys(caught):
            signal.raise_signal(number)
