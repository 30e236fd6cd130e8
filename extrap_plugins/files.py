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
read-only.  :class:`FolderOutput` writes a set of files into a folder that may
hold the user's own files too: it replaces or removes only files it can show
this package wrote there (named in the folder's record, :data:`FOLDER_RECORD`,
with the digest they had then), and never replaces the folder itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from typing import IO, Iterable, Iterator, Sequence

from .errors import InputError
from .interrupts import interrupts_held

__all__ = ["atomic_writer", "write_atomically", "check_destination", "FolderOutput", "ReadOnlyOutput"]


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


class ReadOnlyOutput(InputError):
    """A read-only output that is not replaced.  ``allow`` names the way to replace it all the same, where the
    caller has one (the CLI's ``--overwrite-read-only``): the advice names only options the command has."""

    def __init__(self, path: str | os.PathLike, allow: str | None = None):
        self.allow = allow
        remedy = f"make it writable, or {allow}" if allow else "make it writable"
        super().__init__(f"is read-only; it is not replaced ({remedy})", path)

    def __reduce__(self):
        return (type(self), (self.path, self.allow))


def _refuse_read_only(path, target: str) -> None:
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) and not mode & 0o222:
        raise ReadOnlyOutput(path)


def check_destination(path: str | os.PathLike, *,
                      inputs: Iterable[str | os.PathLike | tuple[str | os.PathLike, str]] = (), folder: bool = False,
                      allow_read_only: bool = False, option: str = "-o", writes: str = "the export's files") -> None:
    """Check, before any work, that ``path`` can take an output without destroying anything.

    Parameters
    ----------
    path : the ``-o`` path
    inputs : the input files and folders of the command: measurements, or ``(path, what)`` for an input that is
        not, with what it is as the messages name it (``(path, "the machine file (--machine)")``)
    folder : whether the output may be a folder of files (path exporters)
    allow_read_only : replace a read-only file all the same
    option : the option that gave ``path``, as the messages name it
    writes : what goes into a folder output, as the messages name it (``"the plot exporter's files"``)

    Raises
    ------
    InputError
        ``path`` is empty; it is an input, lies inside an input folder, or
        (for a folder output) holds an input; it is a folder where one file
        is written; its folder is missing or takes no new files; it is
        read-only (:class:`ReadOnlyOutput`).
    """
    if not os.fspath(path):
        raise InputError(f"{option} '': expected a file {'or folder ' if folder else ''}name")
    target = os.path.realpath(os.fspath(path))
    for given in inputs:
        given, what = given if isinstance(given, tuple) else (given, None)
        source = os.path.realpath(os.fspath(given))
        if target == source:
            loses = f", {what}: writing there would replace it" if what else \
                ": writing there would destroy the measurements"
            raise InputError(f"the output ({option}) is an input{loses}; choose another file", path)
        if os.path.isdir(source) and _inside(target, source):
            raise InputError(f"the output ({option}) is inside the input folder {os.fspath(given)}: writing there "
                             "would change the input; choose an output outside it", path)
        if folder and _inside(source, target):
            raise InputError(f"the output ({option}) holds the input {os.fspath(given)}: writing {writes} there "
                             "would mix them with the measurements; choose another folder", path)
    if _in_place(path) is not None and not os.path.isdir(target):
        return  # a device, a pipe or the standard output: written as it is (atomic_writer), by any exporter
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


FOLDER_RECORD = ".extrap-plugins-files.json"
"""The file in a folder output that names the files this package wrote there, with their SHA-256 digests."""
RECORD_FORMAT = "extrap-plugins/files"


class FolderOutput:
    """Files written into a folder that may hold the user's own files too (the ``plot`` exporter's folders).

    Only files this package can show it wrote are ever replaced or removed:
    the folder's record (:data:`FOLDER_RECORD`) names the files the last
    export wrote there, with their SHA-256 digests, and a file counts as ours
    only while its content still has that digest (a figure the user changed
    since is theirs).  Ours that this export does not write again are removed;
    everything else in the folder is left alone, and the folder itself is
    never replaced (the current folder included).  A missing folder is
    created.

    The check is made when the object is made, before the work:
    :meth:`write` then stages every file beside its name and renames them in
    only when all are written, so an error or an interrupt while writing
    leaves the folder as it was.  The renames (and the removal of our old
    files) are made with Ctrl-C held back until they are done; the record is
    renamed in first, naming the old and the new digests, so that even a
    crash among the renames leaves every file of ours recognised as ours.

    Parameters
    ----------
    path : the folder
    names : the file names to write (plain names, no folders)
    what : what a file is, as the messages name it (``"figure"``)

    Raises
    ------
    InputError
        ``path`` exists and is no folder; a file of the user's (one the
        record does not show as ours) has the name of a file to write; the
        record is not one this package wrote.
    """

    def __init__(self, path: str | os.PathLike, names: Sequence[str], *, what: str = "file",
                 record: str = FOLDER_RECORD):
        self.path = path
        self.target = os.path.realpath(os.fspath(path))
        self.names = list(names)
        self.record = record
        self.what = what
        if len(set(self.names)) != len(self.names) or not all(_plain_name(n) and n != record for n in self.names):
            raise ValueError(f"file names must be distinct plain names other than {record}: {self.names}")
        self.exists = os.path.lexists(self.target)
        if self.exists and not os.path.isdir(self.target):
            raise InputError(f"is not a folder; it is not replaced by a folder of {what}s (give a folder, or a file "
                             "name with an extension)", path)
        self.ours = self._ours() if self.exists else {}
        self._refuse_others()
        self.stale = sorted(set(self.ours) - set(self.names))

    def _ours(self) -> dict[str, str]:
        """The files the record names whose content still has the recorded digest: name -> digest."""
        where = os.path.join(self.target, self.record)
        if not os.path.lexists(where):
            return {}
        refused = InputError("is not the record of an earlier export; it is not replaced (move it away, or give "
                             "another folder)", os.path.join(os.fspath(self.path), self.record))
        if not os.path.isfile(where) or os.path.islink(where):
            raise refused
        try:
            with open(where, encoding="utf-8") as stream:
                document = json.load(stream)
            files = document["files"]
            if document.get("format") != RECORD_FORMAT or not isinstance(files, dict):
                raise ValueError
            recorded = {name: set(digests) for name, digests in files.items() if _plain_name(name)
                        and name != self.record and isinstance(digests, list) and all(isinstance(d, str)
                                                                                    for d in digests)}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            raise refused from None
        ours = {}
        for name, digests in recorded.items():
            digest = _digest_of(os.path.join(self.target, name))
            if digest is not None and digest in digests:
                ours[name] = digest
        return ours

    def write(self, contents: Sequence[bytes]) -> None:
        """Write ``contents`` (one per name, in order) into the folder, replacing ours and removing ours not written
        again; all or nothing up to the renames (see the class)."""
        contents = list(contents)
        if len(contents) != len(self.names):
            raise ValueError(f"{len(self.names)} names but {len(contents)} contents")
        self._refuse_others()  # again: a file may have appeared while the contents were made
        created = False
        if not os.path.isdir(self.target):
            try:
                os.mkdir(self.target)
            except OSError as error:
                raise _named(error, self.path) from None
            created = True
        staged: list[str] = []
        try:
            digests = {}
            for name, content in zip(self.names, contents):
                staged.append(self._stage(name, content, sync=False))
                digests[name] = hashlib.sha256(content).hexdigest()
            during = {name: {digest} for name, digest in self.ours.items()}  # old and new: ours whatever happens
            for name, digest in digests.items():
                during.setdefault(name, set()).add(digest)
            staged.append(self._stage(self.record, _record_text(during), sync=True, key=".during"))
            staged.append(self._stage(self.record, _record_text({n: {d} for n, d in digests.items()}), sync=True))
        except BaseException as error:
            _remove(staged)
            if created:
                with contextlib.suppress(OSError):
                    os.rmdir(self.target)
            if isinstance(error, OSError):
                raise _named(error, self.path) from None
            raise
        *figures, during_record, final_record = staged
        record = os.path.join(self.target, self.record)
        with interrupts_held():
            try:
                os.replace(during_record, record)
                for name, temporary in zip(self.names, figures):
                    os.replace(temporary, os.path.join(self.target, name))
                for name in self.stale:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(os.path.join(self.target, name))
                os.replace(final_record, record)
            except OSError as error:  # a rename failed (the disk went read-only): what is left is still ours
                _remove(staged)
                raise _named(error, self.path) from None

    def _refuse_others(self) -> None:
        for name in self.names:
            if name not in self.ours and os.path.lexists(os.path.join(self.target, name)):
                raise InputError(f"is not a {self.what} an earlier export wrote here; it is not replaced (move it "
                                 "away, or give another folder)", os.path.join(os.fspath(self.path), name))

    def _stage(self, name: str, content: bytes | str, *, sync: bool, key: str = "") -> str:
        """A temporary file beside ``name`` with ``content`` and the permissions ``name`` has (or the umask's)."""
        handle, temporary = tempfile.mkstemp(prefix=f".{name}{key}.", suffix=".tmp", dir=self.target)
        try:
            _take_permissions(handle, os.path.join(self.target, name))
            with os.fdopen(handle, "wb") as stream:
                stream.write(content.encode() if isinstance(content, str) else content)
                if sync:
                    stream.flush()
                    os.fsync(stream.fileno())
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return temporary


def _plain_name(name) -> bool:
    """A file name without folders (``a.png``; not ``../a.png``, ``.`` or ``..``)."""
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and os.sep not in name


def _remove(paths: Iterable[str]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _digest_of(path: str) -> str | None:
    """The SHA-256 of a regular file (not through a link), or None for anything else or an unreadable file."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        digest = hashlib.sha256()
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _record_text(files: dict[str, set[str]]) -> str:
    return json.dumps({"format": RECORD_FORMAT,
                       "about": "the files extrap-plugins wrote here: it replaces or removes them only while their "
                                "SHA-256 is one of these",
                       "files": {name: sorted(files[name]) for name in sorted(files)}}, indent=1) + "\n"


def write_atomically(path: str | os.PathLike, data: bytes, *, sync: bool = True, allow_read_only: bool = False) -> None:
    """Write ``data`` to ``path`` through :func:`atomic_writer`."""
    with atomic_writer(path, binary=True, sync=sync, allow_read_only=allow_read_only) as stream:
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
