"""Opening the files of a home safely: regular files only, bounded reads, atomic writes.

Every file talos reads or writes goes through this module (issue 12.3, 13.5):

* **Reading** — :func:`open_regular` / :func:`read_regular`: only a regular file. A FIFO, a
  device, a socket or a folder is refused with :class:`NotRegularFile` (an ``OSError`` and an
  :class:`~talos.errors.InputError`) that names the path, *before* it is opened (opening a
  device can act: rewind a tape, arm a watchdog); the descriptor is opened non-blocking (a
  FIFO swapped in meanwhile cannot hang the open) and checked again with ``fstat``, so what
  was checked is what is read. Reads are bounded (:class:`FileTooLarge`): a FIFO as
  memory.md hung every command, and ``/dev/zero`` as a source raised ``MemoryError``.
* **Writing** — :func:`atomic_write_bytes` replaces only a regular file, or creates a missing
  one: temp file in the same folder, fsync, ``os.replace``, fsync the folder, so a kill at any
  moment leaves the old file or the new one. A device, FIFO, socket, folder or symbolic link at
  the path is refused, never replaced (``memory_file = "/dev/null"`` replaced the device node
  with a regular file, as root). :func:`open_append` appends to a regular file only, without
  following a symbolic link.
* **Kernel file systems** — files of ``/proc``, ``/sys`` and ``/dev`` look regular to
  ``stat`` but are the system's, not the person's (``/proc/self/environ`` holds the process's
  secrets): refused as if they were devices (:func:`kernel_fs`).
* **Containment** — :func:`outside` tells whether an entry of a folder (a skill, a session)
  resolves outside it, through a symbolic link (``ln -s /etc/passwd skills/passwd.md``
  delivered ``/etc/passwd`` as a skill body). A path the person configured is trusted (see
  README "Your memory files"); an entry inside skills/ or sessions/ that escapes is not.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import sqlite3
import stat
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from talos.errors import InputError

if TYPE_CHECKING:
    import filelock

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_MEMORY_BYTES",
    "MAX_STATE_BYTES",
    "FileTooLarge",
    "NotRegularFile",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_regular",
    "check_regular_or_missing",
    "check_write_target",
    "entry_refusal",
    "file_kind",
    "fsync_folder",
    "json_value",
    "kernel_fs",
    "kernel_root",
    "lock",
    "lock_open_file",
    "open_append",
    "open_entry",
    "open_regular",
    "outside",
    "read_regular",
    "sqlite_application_id",
    "too_long",
    "use_wal",
]

#: Largest memory.md talos reads: 2.5 times the 1,000,000-line file of issue 12.8 (about
#: 100 MB). Above it the file is not loaded (a warning names it) and writers refuse it.
MAX_MEMORY_BYTES = 256 << 20
#: Largest talos.toml: a handful of ``key = value`` lines.
MAX_CONFIG_BYTES = 1 << 20
#: Largest state file read whole (a reference ``recall_hits.json``).
MAX_STATE_BYTES = 256 << 20

#: Longest file name (one path component) and whole path, in bytes, that Linux and macOS take
#: (``NAME_MAX``; ``PATH_MAX`` counts the final NUL).
NAME_MAX = 255
PATH_MAX = 4096

#: Roots of kernel file systems whose files look regular but are the system's.
KERNEL_ROOTS = ("/proc", "/sys", "/dev")

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(InputError, OSError):
    """``path`` exists but is not a regular file: a FIFO, a device, a socket, a folder, a
    symbolic link where one is not followed, or a file of a kernel file system.

    It is an ``OSError`` (``strerror`` says what it is, ``filename`` is the path), so readers
    that warn and go on for an unreadable file do so here too, and an
    :class:`~talos.errors.InputError`, so a command stops with a message that names the path.
    """

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        OSError.__init__(self, errno.EINVAL, f"is {kind}, not a regular file", os.fspath(path))
        self.kind = kind

    def __str__(self) -> str:
        return (
            f"{self.filename}: is {self.kind}, not a regular file; talos reads and writes "
            "only regular files (replace it with one, or point talos at another path)"
        )


class FileTooLarge(InputError, OSError):
    """``path`` is larger than the bound its reader sets (``limit`` bytes)."""

    def __init__(self, path: str | os.PathLike[str], limit: int) -> None:
        OSError.__init__(self, errno.EFBIG, f"larger than {limit} bytes, not read", os.fspath(path))
        self.limit = limit

    def __str__(self) -> str:
        return f"{self.filename}: larger than {self.limit} bytes; talos does not read it"


@functools.cache
def _kernel_devices() -> dict[int, str]:
    """Device number → root of the kernel file systems mounted at :data:`KERNEL_ROOTS` (a
    root on the same device as ``/`` is a plain folder, as in a chroot, and is not counted)."""
    try:
        top = os.stat("/").st_dev
    except OSError:
        return {}
    devs: dict[int, str] = {}
    for root in KERNEL_ROOTS:
        with contextlib.suppress(OSError):
            dev = os.stat(root).st_dev
            if dev != top:
                devs.setdefault(dev, root)
    return devs


def kernel_fs(st: os.stat_result) -> bool:
    """Whether ``st`` is of a file on a kernel file system (``/proc``, ``/sys``, ``/dev``),
    by device number: a symbolic link or a bind mount into one is caught too."""
    return st.st_dev in _kernel_devices()


def kernel_root(path: str | os.PathLike[str]) -> str | None:
    """The kernel file system root (``/proc``, ``/sys``, ``/dev``) that ``path`` lies in,
    judged by the device of its nearest existing folder (links followed), or ``None``
    (``state_dir = "/proc"`` crashed ``talos index``, issue 12.4)."""
    p = os.path.abspath(path)
    while True:
        try:
            dev = os.stat(p).st_dev
            break
        except (OSError, ValueError):
            parent = os.path.dirname(p)
            if parent == p:
                return None
            p = parent
    return _kernel_devices().get(dev)


def too_long(path: str | os.PathLike[str]) -> bool:
    """Whether the file system would refuse ``path`` with ``ENAMETOOLONG``: a component longer
    than :data:`NAME_MAX` bytes or a path of :data:`PATH_MAX` bytes or more (``--home`` of 300
    letters ended in a traceback, issue 12.4). Judged on the name alone: the kernel says
    "does not exist" first when an earlier folder is missing."""
    raw = os.fsencode(path)
    return len(raw) >= PATH_MAX or any(len(part) > NAME_MAX for part in raw.split(b"/"))


def file_kind(st: os.stat_result) -> str | None:
    """What ``st`` is when it is not a regular file talos may use ("a FIFO", "a character
    device", …), or ``None`` for a regular file."""
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return "a file of a kernel file system (/proc, /sys, /dev)" if kernel_fs(st) else None
    for test, kind in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return kind
    return "not a file"


def check_regular(path: str | os.PathLike[str], st: os.stat_result) -> None:
    """Raise :class:`NotRegularFile` unless ``st`` (of ``path``) is a regular file."""
    kind = file_kind(st)
    if kind is not None:
        raise NotRegularFile(path, kind)


def _check_followed(path: str | os.PathLike[str], st: os.stat_result) -> None:
    """:func:`check_regular` for a path whose links were followed: the message then says
    where the link leads (``memory.md: is a link to a character device (/dev/null)``)."""
    kind = file_kind(st)
    if kind is not None:
        if os.path.islink(path):
            kind = f"a link to {kind} ({os.path.realpath(path)})"
        raise NotRegularFile(path, kind)


def open_regular(path: str | os.PathLike[str], listed: bool = False) -> BinaryIO:
    """Open ``path`` for reading in binary mode, only if it is a regular file.

    Symbolic links are followed (containment is the caller's rule, :func:`outside`). The file
    is ``stat``-ed before it is opened and ``fstat``-ed after, non-blocking. ``listed``: the
    caller's folder listing already said it is a regular file (the session reader: 30,000 of
    them), so only the ``fstat`` after the open checks it again.

    Raises:
        FileNotFoundError: ``path`` does not exist. NotRegularFile: it is not a regular file.
        OSError: it cannot be opened (permissions, …).
    """
    if not listed:
        _check_followed(path, os.stat(path))
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | _NOCTTY | _CLOEXEC)
    try:
        _check_followed(path, os.fstat(fd))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def check_regular_or_missing(path: str | os.PathLike[str]) -> None:
    """Raise :class:`NotRegularFile` when ``path`` exists (links followed) and is not a
    regular file: for files another library opens (SQLite), checked before it does."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    _check_followed(path, st)


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises:
        FileNotFoundError: missing. NotRegularFile: not a regular file. FileTooLarge: more
        than ``limit`` bytes. OSError: unreadable.
    """
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise FileTooLarge(path, limit)
        data = f.read(size + 1)  # one allocation of the right size; more only if it grew
        if len(data) > size:
            data += f.read(limit + 1 - len(data))
    if len(data) > limit:
        raise FileTooLarge(path, limit)
    return data


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def json_value(text: str | bytes) -> Any:
    """The JSON value of one line or file talos reads but may not have written (the audit
    log, the trace, a reference ``recall_hits.json``): its only failure is ``ValueError``.

    A value nested 100,000 deep raised ``RecursionError`` past every reader's ``except
    ValueError`` (one such line in audit.jsonl stopped every write), and ``NaN`` /
    ``Infinity``, which are not JSON and which talos never writes, came out of ``report
    --json`` as invalid JSON (issue 12, hostile pass): both are refused here.
    """
    try:
        return json.loads(text, parse_constant=_not_json)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def check_write_target(path: str | os.PathLike[str], create_folders: bool = True) -> None:
    """Check that ``path`` may be written by :func:`atomic_write_bytes`: missing, or a regular
    file (not followed when it is a symbolic link).

    Raises:
        NotRegularFile: something else is there. InputError: ``create_folders`` is false and
        the folder of ``path`` does not exist.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create_folders and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            folder = os.path.dirname(os.path.abspath(path))
            raise InputError(
                f"{path}: the folder {folder} does not exist; create it first "
                "(talos does not create folders for this file)"
            ) from None
        return
    check_regular(path, st)


def atomic_write_bytes(path: Path, data: bytes, create_folders: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its permission bits; only over a
    regular file or nothing (:func:`check_write_target`).

    Args:
        path: the file; a symbolic link is refused, not followed (a writer that means to
            write through one resolves it first, as :mod:`talos.writer.edits` does for memory.md).
        data: the new content.
        create_folders: create missing parent folders (``False``: refuse, naming the folder).

    Raises:
        NotRegularFile: ``path`` is a device, FIFO, socket, folder or symbolic link (it is left
            as it is). InputError: a missing folder with ``create_folders=False``.
        OSError: the folder is not writable or the disk is full (``path`` is then unchanged).
    """
    check_write_target(path, create_folders)
    if create_folders:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.lstat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        check_write_target(path)  # once more right before the replace: the window is tiny
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and not e.filename:  # a full disk: name the file
            e.filename = str(path)
        raise
    fsync_folder(path)


def fsync_folder(path: Path) -> None:
    """Make the rename of ``path`` durable: fsync its folder (a file system that cannot is
    left as it is; the rename itself has happened)."""
    with contextlib.suppress(OSError):
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def atomic_write_text(path: Path, text: str, create_folders: bool = True) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"), create_folders)


def open_append(path: str | os.PathLike[str], readable: bool = False) -> int:
    """A descriptor that appends to ``path`` (created ``0o644`` when missing), only if it is a
    regular file; a symbolic link is not followed. The caller writes and closes it.

    Args:
        readable: open read-write (``O_RDWR``), for a writer that looks at what is there.

    Raises:
        NotRegularFile: something other than a regular file is at ``path`` (not opened).
        OSError: the file cannot be opened or created.
    """
    with contextlib.suppress(FileNotFoundError):
        check_regular(path, os.lstat(path))
    access = os.O_RDWR if readable else os.O_WRONLY
    flags = access | os.O_APPEND | os.O_CREAT | _NONBLOCK | _NOFOLLOW | _NOCTTY | _CLOEXEC
    fd = os.open(path, flags, 0o644)
    try:
        check_regular(path, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return fd


def lock(path: str | os.PathLike[str], timeout: float) -> filelock.FileLock:
    """An inter-process lock on the file ``path`` (created when missing), only if it is a
    regular file or missing; a symbolic link is not followed.

    filelock opens what is there: a FIFO or a device node as ``memory.lock`` was opened and
    written through, a socket said "No such device or address", and before filelock 3.20.1
    (CVE-2025-68146) a link had its target truncated (hostile pass, issue 12.3).

    Raises:
        NotRegularFile: something else is at ``path`` (checked when the lock is made).
    """
    import filelock  # imported on use: most commands take no lock

    with contextlib.suppress(FileNotFoundError):
        check_regular(path, os.lstat(path))
    return filelock.FileLock(os.fspath(path), timeout=timeout)


def lock_open_file(fd: int) -> bool:
    """Lock the open file ``fd`` exclusively until it is closed, waiting for another holder:
    :func:`lock` for a file talos appends to in place (the recall trace), with the same
    primitive (POSIX ``flock``, so the two exclude each other on one file). It takes no lock
    file beside the file and no ``filelock`` import: a recall writes the trace every time,
    and importing ``filelock`` after talos's recall modules took 11-15 ms (a loaded 2-core
    machine).

    Returns:
        Whether the lock is held: ``False`` where there is no ``flock``, or the file system
        refuses it (the caller goes on without the lock).
    """
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX)
    except (ImportError, OSError):
        return False
    return True


def outside(path: str | os.PathLike[str], folder_real: str) -> bool:
    """Whether ``path`` resolves (through symbolic links) outside the folder whose resolved
    path is ``folder_real`` (``os.path.realpath`` of the folder)."""
    real = os.path.realpath(path)
    base = folder_real.rstrip(os.sep) or os.sep
    return real != base and not real.startswith(base if base == os.sep else base + os.sep)


#: Reason of a refused entry whose symbolic link leads outside its folder (issue 13.5).
OUTSIDE = "outside its folder"
#: Reason of a refused entry that is not a regular file (issue 12.3).
NOT_REGULAR = "not a regular file"
#: Reason of a refused entry that is a hard link: the same file has other names, and talos
#: cannot tell whether they lie outside the folder (``ln /etc/passwd skills/p.md`` delivered
#: /etc/passwd as a skill body: hostile pass of issue 13).
HARD_LINK = "hard link"


class RefusedEntry(InputError, OSError):
    """An entry of a skills or sessions folder talos refuses to read: ``reason`` is
    :data:`OUTSIDE`, :data:`NOT_REGULAR` or :data:`HARD_LINK`, ``evidence`` says what it is
    (``symbolic link to /etc/passwd``). An ``OSError`` (``strerror`` holds both), so readers
    that warn and go on for an unreadable file do so here too."""

    def __init__(self, path: str | os.PathLike[str], reason: str, evidence: str) -> None:
        OSError.__init__(self, errno.EPERM, f"{reason} ({evidence})", os.fspath(path))
        self.reason, self.evidence = reason, evidence

    def __str__(self) -> str:
        return f"{self.filename}: not read: {self.reason} ({self.evidence}); see talos scan"


def _hard_link(st: os.stat_result) -> str | None:
    """The evidence of :data:`HARD_LINK` for a regular file with other names, else ``None``."""
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        return f"{st.st_nlink} names; the others may lie outside the folder"
    return None


def _opened_inside(fd: int, folder_real: str) -> bool:
    """Whether the open file ``fd`` is reached inside ``folder_real``, as the kernel names it
    (``/proc/self/fd``): a folder on the way swapped for a link after the check is caught.
    ``True`` where the kernel does not say (no ``/proc``)."""
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return True
    base = folder_real.rstrip(os.sep) or os.sep
    return real.startswith(base if base == os.sep else base + os.sep)


def open_entry(path: str | os.PathLike[str], folder_real: str) -> BinaryIO:
    """Open an entry of a skills or sessions folder for reading, binary, only if it is a
    regular file that resolves inside the folder and has no other name.

    The entry is opened without following a link (``O_NOFOLLOW``), non-blocking; a link is
    resolved once, checked, and its resolved name opened the same way. The descriptor is then
    checked (``fstat``: a regular file with one name; on Linux, for a link or a nested entry,
    ``/proc/self/fd``: inside the folder). So a file swapped for a link between a listing and
    this read is refused, not followed (hostile pass of issue 13). A plain entry costs what
    :func:`open_regular` with ``listed=True`` does: one open and one ``fstat``.

    Args:
        path: the entry. folder_real: the folder's ``os.path.realpath``.

    Raises:
        FileNotFoundError: missing (a dangling link too). RefusedEntry: outside the folder, not
        a regular file, or a hard link. OSError: it cannot be opened (permissions, …).
    """
    flags = os.O_RDONLY | _NONBLOCK | _NOCTTY | _CLOEXEC | _NOFOLLOW
    name = os.fspath(path)
    linked = False
    try:
        fd = os.open(name, flags)
    except OSError as e:
        if e.errno != errno.ELOOP or not os.path.islink(name):
            raise
        target = os.path.realpath(name)  # a link: resolved once, checked, then opened
        if outside(target, folder_real):
            raise RefusedEntry(path, OUTSIDE, f"symbolic link to {target}") from None
        linked = True
        try:
            fd = os.open(target, flags)
        except OSError as e2:
            if e2.errno == errno.ELOOP:  # swapped again after the check
                raise RefusedEntry(path, OUTSIDE, "replaced by a symbolic link") from None
            raise
    try:
        st = os.fstat(fd)
        kind = file_kind(st)
        if kind is not None:
            raise RefusedEntry(path, NOT_REGULAR, kind)
        many = _hard_link(st)
        if many:
            raise RefusedEntry(path, HARD_LINK, many)
        nested = os.path.dirname(os.path.abspath(name)) != folder_real
        if (linked or nested) and not _opened_inside(fd, folder_real):
            raise RefusedEntry(path, OUTSIDE, f"opened as {os.readlink(f'/proc/self/fd/{fd}')}")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def entry_refusal(path: str, lst: os.stat_result, folder_real: str) -> tuple[str, str] | None:
    """Why talos refuses an entry of a skills or sessions folder, or ``None`` when it may read
    it (a regular file inside the folder, or a dangling link, which is a missing file).

    Args:
        path: the entry's path. lst: its ``os.lstat``. folder_real: the folder's
            ``os.path.realpath``.

    Returns:
        ``(OUTSIDE, "symbolic link to TARGET")``, ``(NOT_REGULAR, "a FIFO (named pipe)")``,
        ``(HARD_LINK, "2 names; …")`` (a regular file with other names: hostile pass of
        issue 13)…
    """
    st = lst
    if stat.S_ISLNK(lst.st_mode):
        if outside(path, folder_real):
            return OUTSIDE, f"symbolic link to {os.path.realpath(path)}"
        try:
            st = os.stat(path)
        except OSError:
            return None
    kind = file_kind(st)
    if kind:
        return NOT_REGULAR, kind
    linked = _hard_link(st)
    return (HARD_LINK, linked) if linked else None


def use_wal(con: sqlite3.Connection, seconds: float = 60.0) -> None:
    """Switch ``con`` to WAL, waiting up to ``seconds`` while another connection holds the new
    file: the switch fails at once with "database is locked" (no busy handler applies), so
    it is retried as busy_timeout would (tests/test_index_reliability.py, 3 processes opening
    a new home at once; usage.db: 4 processes recalling at once, tests/test_concurrency.py,
    warned 'database is locked' and lost their counts; the vectors cache opens the same way).

    Raises:
        sqlite3.OperationalError: still locked after ``seconds``, or any other failure.
    """
    tries = max(1, int(seconds / 0.01))
    for wait in range(tries):
        try:
            con.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if wait == tries - 1 or "locked" not in str(e):
                raise
            time.sleep(0.01)


def sqlite_application_id(path: str | os.PathLike[str]) -> int | None:
    """The ``PRAGMA application_id`` of the SQLite file at ``path`` as SQLite sees it, or
    ``None`` when ``path`` is no SQLite file (its first 16 bytes are not SQLite's).

    In WAL mode a new database's header (bytes 68-71) stays 0 until a checkpoint: while a
    process holds it open, the id lives only in the ``-wal`` file. Read from the header
    alone, talos's own index under the running hook server was "not talos's index" and
    moved aside by ``talos index --rebuild`` (tests/test_hook_never_blocks.py). So when a
    non-empty ``-wal`` regular file is beside it, the id is read through a read-only
    connection (which writes nothing and never checkpoints); the header's when that fails.

    Raises:
        OSError: ``path`` cannot be read (missing, not a regular file: :func:`open_regular`).
    """
    with open_regular(path) as f:
        head = f.read(72)
    if len(head) < 72 or head[:16] != b"SQLite format 3\x00":
        return None
    header = int.from_bytes(head[68:72], "big")
    try:
        wal = os.lstat(f"{os.fspath(path)}-wal")
    except OSError:
        return header
    if not stat.S_ISREG(wal.st_mode) or wal.st_size == 0:
        # SQLite is never handed what is not a regular file (a FIFO at index.db hung it,
        # issue 12.3); at the -wal name it did not hang, the check stays (tests pin no hang)
        return header
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(os.lstat(f"{os.fspath(path)}-shm").st_mode):
            return header
    try:
        uri = f"{Path(path).absolute().as_uri()}?mode=ro"
        con = sqlite3.connect(uri, uri=True, timeout=1.0)
        try:
            return int(con.execute("PRAGMA application_id").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return header
