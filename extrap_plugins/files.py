"""Atomic file writing: the one way every output (``-o``, plots, the shim's records) reaches the disk.

A file is written to a uniquely named temporary file beside it (``mkstemp``:
two writers never share one), flushed to disk, and renamed over the target
only when the writing has finished; an error or an interrupt removes the
temporary file and leaves the old file as it was.  Replacing a file keeps
what the user had: a symbolic link stays a link (its target is written), and
an existing file's permission bits (and owner, where allowed) carry over to
the new one; a new file gets the permissions the umask allows.  A read-only
file (:func:`is_read_only`: also another user's file this user may not
write) is not replaced unless the caller allows it, a folder never is, and
every error names the file asked for, never the temporary one.  The
temporary file is made with Ctrl-C and SIGTERM held back until its name is
known, so that no interrupt leaves one behind.  What is not a regular file (a
device such as ``/dev/null``, a named pipe) or is this process's own standard
output or error (``/dev/stdout``, also when the shell sent it to a file) is
written in place: replacing it would put a regular file where the device was,
or drop what the command printed there.

:func:`check_destination` is the check a command makes before any work: the
output is not one of the inputs (nor inside an input folder, nor a folder
holding an input), its folder exists and takes new files, it is not
read-only, and a name that says a folder (``results/``) is not taken for a
file, nor ``-`` (the standard output, where a command takes it so) for a
file called ``-``.  :class:`FolderOutput` writes a set of files into a folder that may
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

__all__ = ["atomic_writer", "write_atomically", "check_destination", "FolderOutput", "ReadOnlyOutput", "is_read_only"]


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, binary: bool = False, *, sync: bool = True,
                  allow_read_only: bool = False) -> Iterator[IO]:
    """Open a stream whose content replaces ``path`` when the ``with`` block ends without error.

    A folder is refused with an :class:`InputError`, and so is a read-only
    ``path`` (see :class:`ReadOnlyOutput`) unless ``allow_read_only``; an
    :class:`OSError` names ``path`` whatever file it happened on.

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
    if os.path.isdir(target):  # said before the writing, not as "Is a directory" when the rename fails after it
        raise InputError("is a folder; give a file name", path)
    if not allow_read_only:
        _refuse_read_only(path, target)
    made: list[str] = []
    try:
        handle = _temporary(folder, f".{os.path.basename(target)}.", made)
    except OSError as error:
        raise _named(error, path) from None
    except BaseException:
        _remove(made)
        raise
    temporary = made[0]
    try:
        mode = "wb" if binary else "w"
        with os.fdopen(handle, mode, **({} if binary else {"encoding": "utf-8", "newline": ""})) as stream:
            _take_permissions(stream.fileno(), target)
            yield stream
            stream.flush()
            if sync:
                os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException as error:
        _remove(made)
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


def _temporary(folder: str, prefix: str, made: list[str]) -> int:
    """A new hidden file in ``folder`` (``mkstemp``): its open descriptor, its name appended to ``made``.

    Ctrl-C and SIGTERM are held back until the name is in ``made``: an interrupt as the file was made left it
    behind, its name not yet known to the code that removes it.  On an interrupt raised as the hold ends, the
    descriptor is closed and the caller removes what ``made`` names."""
    handle = None
    try:
        with interrupts_held():
            handle, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
            made.append(name)
    except BaseException:
        if handle is not None:
            os.close(handle)
        raise
    return handle


class ReadOnlyOutput(InputError):
    """A read-only output that is not replaced: one without write permission, or one this user may not write
    (another user's file, which replacing would give to this user).  ``allow`` names the way to replace it all the
    same, where the caller has one (the CLI's ``--overwrite-read-only``): the advice names only options the command
    has."""

    def __init__(self, path: str | os.PathLike, allow: str | None = None):
        self.allow = allow
        remedy = f"make it writable, or {allow}" if allow else "make it writable"
        super().__init__(f"{_read_only(path)}; it is not replaced ({remedy})", path)

    def __reduce__(self):
        return (type(self), (self.path, self.allow))


def _read_only(path) -> str:
    """What makes ``path`` read-only, as the message says it."""
    try:
        status = os.stat(path)
    except OSError:
        return "is read-only"
    if not status.st_mode & 0o222 or not hasattr(os, "geteuid") or status.st_uid == os.geteuid():
        return "is read-only"  # by its mode, or its file system or an access rule allows this user no writing
    try:
        import pwd

        owner = pwd.getpwuid(status.st_uid).pw_name
    except (ImportError, KeyError):
        owner = f"user {status.st_uid}"
    return f"is read-only for this user (it belongs to {owner})"


def is_read_only(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a regular file that is not replaced unless asked: one without write permission, or one
    this user may not write (another user's file: ``> file`` in the shell is refused, where the rename of a new
    file over it would replace it all the same, and give it to this user)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) and (not mode & 0o222 or not os.access(path, os.W_OK))


def _refuse_read_only(path, target: str) -> None:
    if is_read_only(target):
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
        ``path`` is empty or ``-``; it is an input, lies inside an input
        folder, or (for a folder output) holds an input; it is a folder, or
        ends with ``/``, where one file is written; it ends with ``/`` and is
        a file; its folder is missing or takes no new files; it is read-only
        (:class:`ReadOnlyOutput`).
    """
    name = os.fspath(path)
    if not name:
        raise InputError(f"{option} '': expected a file {'or folder ' if folder else ''}name")
    if name == "-":  # where '-' is the standard output, the command has made it None before this check
        raise InputError(f"{option} - would be a file called '-' (the standard output is not an output of this "
                         "option); give a file name (./- for a file called '-')", path)
    target = os.path.realpath(name)
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
        if _names_folder(name):  # 'results/': as the shell's '> results/', never a file called results
            if not folder:
                raise InputError(f"ends with /, so it names a folder, and {option} writes one file; give a file "
                                 "name", path)
            if os.path.lexists(target):
                raise InputError("is not a folder, though the / at its end names one; it is not replaced", path)
        parent = os.path.dirname(target) or "."
        if not os.path.isdir(parent):
            raise InputError("the folder for the output does not exist", path)
        if not allow_read_only:
            _refuse_read_only(path, target)
    probe: list[str] = []
    try:
        os.close(_temporary(parent, ".extrap-plugins-probe.", probe))
    except OSError as error:
        raise InputError(f"cannot write here: {error.strerror or error}", path) from None
    finally:
        _remove(probe)


def _inside(child: str, parent: str) -> bool:
    return child != parent and child.startswith(parent.rstrip(os.sep) + os.sep)


def _names_folder(path: str) -> bool:
    """Whether ``path`` ends with a separator (``results/``): a folder, whether it exists or not."""
    return path.endswith(os.sep) or bool(os.altsep) and path.endswith(os.altsep)


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
                self._stage(name, content, staged, sync=False)
                digests[name] = hashlib.sha256(content).hexdigest()
            during = {name: {digest} for name, digest in self.ours.items()}  # old and new: ours whatever happens
            for name, digest in digests.items():
                during.setdefault(name, set()).add(digest)
            self._stage(self.record, _record_text(during), staged, sync=True, key=".during")
            self._stage(self.record, _record_text({n: {d} for n, d in digests.items()}), staged, sync=True)
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

    def _stage(self, name: str, content: bytes | str, staged: list[str], *, sync: bool, key: str = "") -> None:
        """A temporary file beside ``name`` with ``content`` and the permissions ``name`` has (or the umask's),
        named in ``staged`` as soon as it exists (the caller removes what ``staged`` names if anything fails)."""
        handle = _temporary(self.target, f".{name}{key}.", staged)
        with os.fdopen(handle, "wb") as stream:
            _take_permissions(stream.fileno(), os.path.join(self.target, name))
            stream.write(content.encode() if isinstance(content, str) else content)
            if sync:
                stream.flush()
                os.fsync(stream.fileno())


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
    """Give the temporary file the mode, owner and group of the file it replaces, or the umask's mode if new.

    A user other than root cannot give a file away: a file of another user that this one may write (a shared
    folder's ``rw-rw-r--`` report) becomes this user's, but keeps its group where this user is in it, so that the
    group may still write it (it took this user's own group, and the others lost it)."""
    try:
        old = os.stat(target)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(handle, 0o666 & ~umask)
        return
    if not hasattr(os, "fchown"):  # Windows: no owners to keep
        os.fchmod(handle, stat.S_IMODE(old.st_mode))
        return
    try:
        os.fchown(handle, old.st_uid, old.st_gid)
    except OSError:
        with contextlib.suppress(OSError):
            os.fchown(handle, -1, old.st_gid)
    os.fchmod(handle, stat.S_IMODE(old.st_mode))  # after: a change of owner clears the set-user and set-group bits
