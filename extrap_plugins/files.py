"""Atomic file writing: the one way every output (``-o``, plots, the shim's records) reaches the disk.

A file is written to a uniquely named temporary file beside it (``mkstemp``:
two writers never share one), flushed to disk, and renamed over the target
only when the writing has finished; an error or an interrupt removes the
temporary file and leaves the old file as it was.  Replacing a file keeps
what the user had: a symbolic link stays a link (its target is written), and
an existing file's permission bits (and owner, where allowed) carry over to
the new one; a new file gets the permissions the umask allows.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from typing import IO, Iterator

__all__ = ["atomic_writer", "write_atomically"]


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, binary: bool = False, *, sync: bool = True) -> Iterator[IO]:
    """Open a stream whose content replaces ``path`` when the ``with`` block ends without error.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_writer(target) as stream:
    ...     _ = stream.write("done\\n")
    >>> target.read_text()
    'done\\n'
    """
    target = os.path.realpath(os.fspath(path))  # a link stays a link: write where it points
    folder = os.path.dirname(target) or "."
    handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder)
    try:
        _take_permissions(handle, target)
        mode = "wb" if binary else "w"
        with os.fdopen(handle, mode, **({} if binary else {"encoding": "utf-8", "newline": ""})) as stream:
            yield stream
            stream.flush()
            if sync:
                os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_atomically(path: str | os.PathLike, data: bytes, *, sync: bool = True) -> None:
    """Write ``data`` to ``path`` through :func:`atomic_writer`."""
    with atomic_writer(path, binary=True, sync=sync) as stream:
        stream.write(data)


def _take_permissions(handle: int, target: str) -> None:
    """Give the temporary file the mode (and owner) of the file it replaces, or the umask's mode if new."""
    try:
        old = os.stat(target)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(handle, 0o666 & ~umask)
        return
    os.fchmod(handle, stat.S_IMODE(old.st_mode))
    with contextlib.suppress(OSError, AttributeError):
        os.fchown(handle, old.st_uid, old.st_gid)
