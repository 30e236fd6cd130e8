"""Atomic file writing: the one way every output (``-o``, plots, the shim's records) reaches the disk.

A file is written to a uniquely named temporary file beside it (``mkstemp``:
two writers never share one), flushed to disk, and renamed over the target
only when the writing has finished; an error or an interrupt removes the
temporary file and leaves the old file as it was.  Replacing a file keeps
what the user had: a symbolic link stays a link (its target is written), and
an existing file's permission bits (and owner, where allowed) carry over to
the new one; a new file gets the permissions the umask allows.  A read-only
file is not replaced unless the caller allows it, and every error names the
file asked for, never the temporary one.  What is not a regular file (a
device such as ``/dev/null``, a named pipe) or is this process's own standard
output or error (``/dev/stdout``, also when the shell sent it to a file) is
written in place: replacing it would put a regular file where the device was,
or drop what the command printed there.

:func:`check_destination` is the check a command makes before any work: the
output is not one of the inputs (nor inside an input folder, nor a folder
holding an input), its folder exists and takes new files, and it is not
read-only.  :func:`atomic_folder` does for a folder of files what
:func:`atomic_writer` does for one file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from typing import IO, Iterable, Iterator

from .errors import InputError

__all__ = ["atomic_writer", "write_atomically", "check_destination", "atomic_folder"]


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, binary: bool = False, *, sync: bool = True,
                  allow_read_only: bool = False) -> Iterator[IO]:
    """Open a stream whose content replaces ``path`` when the ``with`` block ends without error.

    A read-only ``path`` (no write permission bit) is refused with an
    :class:`InputError` unless ``allow_read_only``; an :class:`OSError`
    names ``path`` whatever file it happened on.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_writer(target) as stream:
    ...     _ = stream.write("done\\n")
    >>> target.read_text()
    'done\\n'
    """
    stream_number = _in_place(path)
    if stream_number is not None:
        with _written_in_place(path, stream_number, binary) as stream:
            yield stream
        return
    target = os.path.realpath(os.fspath(path))  # a link stays a link: write where it points
    folder = os.path.dirname(target) or "."
    if not allow_read_only:
        _refuse_read_only(path, target)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder)
    except OSError as error:
        raise _named(error, path) from None
    try:
        _take_permissions(handle, target)
        mode = "wb" if binary else "w"
        with os.fdopen(handle, mode, **({} if binary else {"encoding": "utf-8", "newline": ""})) as stream:
            yield stream
            stream.flush()
            if sync:
                os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError) and error.filename in (temporary, target, None):
            raise _named(error, path) from None
        raise


def _in_place(path) -> int | None:
    """-1 for a ``path`` that is no regular file (a device, a named pipe, a socket), 1 or 2 for this process's
    standard output or error (the same file, whatever the name), else None: a regular file, or none yet."""
    try:
        status = os.stat(path)  # through links, /dev/stdout's included
    except OSError:
        return None
    for number in (1, 2):
        with contextlib.suppress(OSError):
            standard = os.fstat(number)
            if (standard.st_dev, standard.st_ino) == (status.st_dev, status.st_ino):
                return number
    return None if stat.S_ISREG(status.st_mode) or stat.S_ISDIR(status.st_mode) else -1


@contextlib.contextmanager
def _written_in_place(path, number: int, binary: bool) -> Iterator[IO]:
    """The stream that writes to a device or pipe as it is, or to this process's standard output or error after
    what it printed there (a copy of the descriptor shares its position)."""
    import sys

    mode = "wb" if binary else "w"
    text = {} if binary else {"encoding": "utf-8", "newline": ""}
    try:
        if number == -1:
            stream = open(path, mode, **text)
        else:
            for printed in (sys.stdout, sys.stderr):
                with contextlib.suppress(AttributeError, OSError, ValueError):
                    printed.flush()
            stream = os.fdopen(os.dup(number), mode, **text)
    except OSError as error:
        raise _named(error, path) from None
    try:
        with stream:
            yield stream
    except OSError as error:
        raise _named(error, path) from None


def _named(error: OSError, path) -> OSError:
    """The same error, naming the file the user asked for (never the hidden temporary file)."""
    return OSError(error.errno, error.strerror or str(error), os.fspath(path))


def _refuse_read_only(path, target: str) -> None:
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) and not mode & 0o222:
        raise InputError("is read-only; it is not replaced (make it writable, or --overwrite-read-only)", path)


def check_destination(path: str | os.PathLike, *, inputs: Iterable[str | os.PathLike] = (), folder: bool = False,
                      allow_read_only: bool = False) -> None:
    """Check, before any work, that ``path`` can take an output without destroying anything.

    Parameters
    ----------
    path : the ``-o`` path
    inputs : the input files and folders of the command
    folder : whether the output may be a folder of files (path exporters)
    allow_read_only : replace a read-only file all the same

    Raises
    ------
    InputError
        ``path`` is an input, lies inside an input folder, or (for a folder
        output) holds an input; it is a folder where one file is written;
        its folder is missing or takes no new files; it is read-only.
    """
    target = os.path.realpath(os.fspath(path))
    for given in inputs:
        source = os.path.realpath(os.fspath(given))
        if target == source:
            raise InputError("the output (-o) is an input: writing there would destroy the measurements; "
                             "choose another file", path)
        if os.path.isdir(source) and _inside(target, source):
            raise InputError(f"the output (-o) is inside the input folder {os.fspath(given)}: writing there would "
                             "change the input; choose an output outside it", path)
        if folder and _inside(source, target):
            raise InputError(f"the output (-o) holds the input {os.fspath(given)}: writing figures there would "
                             "mix them with the measurements; choose another folder", path)
    if not folder and _in_place(path) is not None:
        return  # a device, a pipe or the standard output: written as it is (atomic_writer)
    if os.path.isdir(target):
        if not folder:
            raise InputError("is a folder; this exporter writes one file", path)
        parent = target
    else:
        parent = os.path.dirname(target) or "."
        if not os.path.isdir(parent):
            raise InputError("the folder for the output does not exist", path)
        if not allow_read_only:
            _refuse_read_only(path, target)
    try:
        handle, probe = tempfile.mkstemp(prefix=".extrap-plugins-probe.", dir=parent)
    except OSError as error:
        raise InputError(f"cannot write here: {error.strerror or error}", path) from None
    os.close(handle)
    with contextlib.suppress(OSError):
        os.unlink(probe)


def _inside(child: str, parent: str) -> bool:
    return child != parent and child.startswith(parent.rstrip(os.sep) + os.sep)


FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike, replaceable: tuple[str, ...] = FIGURE_SUFFIXES) -> Iterator[str]:
    """A staging folder whose files replace the folder ``path`` when the ``with`` block ends without error.

    An error or an interrupt leaves ``path`` as it was (never old and new
    files mixed).  An existing ``path`` is replaced only when it holds
    nothing but files ending in ``replaceable`` (earlier figures); its
    permissions carry over.

    Raises
    ------
    InputError
        ``path`` exists and holds other files or folders.
    """
    target = os.path.realpath(os.fspath(path))
    parent = os.path.dirname(target) or "."
    old_mode = None
    if os.path.isdir(target):
        others = sorted(name for name in os.listdir(target)
                        if not (name.lower().endswith(replaceable) and os.path.isfile(os.path.join(target, name))))
        if others:
            shown = ", ".join(others[:3]) + (" ..." if len(others) > 3 else "")
            raise InputError(f"holds files that are not figures ({shown}); give a new or empty folder, "
                             "or one with earlier figures only", path)
        old_mode = stat.S_IMODE(os.stat(target).st_mode)
    try:
        staging = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=parent)
    except OSError as error:
        raise _named(error, path) from None
    try:
        yield staging
        if old_mode is not None:
            os.chmod(staging, old_mode)
            retired = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.", suffix=".old", dir=parent)
            os.replace(target, os.path.join(retired, "old"))
            try:
                os.replace(staging, target)
            except BaseException:
                os.replace(os.path.join(retired, "old"), target)
                raise
            shutil.rmtree(retired, ignore_errors=True)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(staging, 0o777 & ~umask)
            os.replace(staging, target)
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(error, OSError):
            raise _named(error, path) from None
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
