"""The one home of the commands' signal handling, light enough for every command to import.

A batch system ends a job at its wall-clock limit with SIGTERM: :func:`terminate_as_interrupt` makes it end a
command as Ctrl-C does (``extrap-plugins: interrupted``, status 130, the scratch folder removed, the worker
processes stopped, nothing half-written at ``-o``).  :func:`interrupts_held` keeps both back over the few steps
that must not be cut in half (the renames of an export's files, the removal of the scratch folder).  Both
change the handlers of the main thread only and put back, when their block ends, the handlers they found.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator

HELD = (signal.SIGINT, signal.SIGTERM)
"""The signals that end a command as an interrupt: Ctrl-C, and SIGTERM inside :func:`terminate_as_interrupt`."""


def _interrupt(number, frame):
    raise KeyboardInterrupt


def _settable(number: int) -> bool:
    """Whether this thread may change the handler of ``number`` and put it back after: the main thread, and a
    handler that Python knows (not one set outside it, which :func:`signal.getsignal` gives as None)."""
    return threading.current_thread() is threading.main_thread() and signal.getsignal(number) is not None


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM raises KeyboardInterrupt, as Ctrl-C does; the handler it had is put back
    after (elsewhere than in the main thread, nothing changes)."""
    if not _settable(signal.SIGTERM):
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) and SIGTERM back until the block ends, then deliver them to the handlers they had
    (main thread only; elsewhere no change)."""
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
