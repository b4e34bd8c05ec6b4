"""Writing a file a person edits too: memory.md (issue 12.1, design §7.5).

A person takes no lock: they append (``echo "- …" >> memory.md``) or save from an editor (a
temp file renamed over memory.md) whenever they like. So a writer must never replace the file
with content derived from an older read (measured: 132 to 232 of 600 person lines lost to a
plain read-modify-replace, ``tests/test_outside_writer.py``):

* :func:`read_snapshot` records what was read — device, inode, size, mtime_ns and the bytes;
* :func:`replace_if_unchanged` swaps new content in only if the file is still exactly that
  (lines appended after it are carried over), on Linux by an atomic exchange that is checked
  once more afterwards, and :meth:`Snapshot.drain` carries over what a process still writing
  to the replaced file adds;
* :func:`append_line` adds one line without rewriting anything.

Files are opened as :mod:`talos.fsutil` opens them: regular files only, non-blocking, bounded.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import filelock

from talos.errors import TalosError
from talos.fsutil import (
    MAX_MEMORY_BYTES,
    FileTooLarge,
    check_regular,
    fsync_folder,
    open_append,
)

__all__ = [
    "DRAIN_SECONDS",
    "HeldOpen",
    "Snapshot",
    "append_line",
    "folder_lock",
    "quiet",
    "read_snapshot",
    "replace_if_unchanged",
]


class HeldOpen(TalosError):
    """Another program holds memory.md open for writing and did not close it within
    :data:`DRAIN_SECONDS`: replacing the file now would send what it writes later to a file
    without a name (the hostile pass: a person typing into ``cat >> memory.md`` lost every
    line typed after a superseding ``remember``). Nothing was changed."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path}: another program holds it open for writing (waited {DRAIN_SECONDS:g} s); "
            "talos changed nothing, so nothing that program writes is lost. Close it (or let "
            "it finish) and try again"
        )


@dataclass(slots=True)
class Snapshot:
    """What a writer read of a file: its bytes and identity, and an open descriptor.

    ``ident`` is ``(st_dev, st_ino, st_size, st_mtime_ns)``, ``None`` when the file did not
    exist. The descriptor keeps the inode alive while the writer works, so its number cannot
    be reused by a new file that would then pass for the old one; after
    :func:`replace_if_unchanged` it is the replaced file, still open, so that bytes a person
    appended to it late can be carried over (:meth:`carry_late`). Close it (``with``).
    """

    path: Path
    data: bytes
    ident: tuple[int, int, int, int] | None
    fd: int | None
    carried: int = 0  # bytes of the old file accounted for (read, or carried to the new one)
    replaced: bool = False

    def carry_late(self, whole_lines: bool = False) -> bytes:
        """After a replace: append to the new file whatever was appended to the old one since
        (a person's ``>>`` that opened the old file just before the swap); returns it.
        ``whole_lines``: only up to the last newline (the writer is still at work: the rest
        of its line follows)."""
        if not self.replaced:
            return b""
        return self._carry_to(self.path, whole_lines=whole_lines)

    def _carry_to(self, dest: Path, sync: bool = True, whole_lines: bool = False) -> bytes:
        """Append to ``dest`` what the file read has gained beyond :attr:`carried`."""
        if self.fd is None:
            return b""
        tail = _read_fd(self.fd, self.carried)
        if whole_lines:
            tail = tail[: tail.rfind(b"\n") + 1]
        if tail:
            _append_bytes(dest, tail, sync)
            self.carried += len(tail)
        return tail

    def mid_line(self) -> bool:
        """Whether the file read has grown since and now ends inside a line: someone is
        writing a line to it in pieces right now (a long ``echo``, ``printf`` then more)."""
        if self.fd is None:
            return False
        size = os.fstat(self.fd).st_size
        return size > len(self.data) and os.pread(self.fd, 1, size - 1) != b"\n"

    def drain(self) -> bool:
        """After a replace: carry late appends over until no process holds the old file open
        for writing any more (:func:`_writers_gone`), at most :data:`DRAIN_SECONDS`. A
        person's ``echo >>`` that opened memory.md just before the swap is a writer of the
        old file until it closes it; once none is left, nothing more can arrive there (the
        old file has no name any more). Returns False when a writer still held it at the end
        (what it writes later is not carried), True otherwise."""
        if not self.replaced or self.fd is None:
            return True
        return _drain(self.fd, lambda final: self.carry_late(whole_lines=not final))

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ident(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _read_fd(fd: int, offset: int = 0) -> bytes:
    """Everything behind ``fd`` from byte ``offset`` on."""
    chunks: list[bytes] = []
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _read_prefix(fd: int, n: int) -> bytes:
    """The first ``n`` bytes behind ``fd`` (fewer at end of file)."""
    chunks: list[bytes] = []
    offset = 0
    while offset < n:
        chunk = os.pread(fd, min(1 << 20, n - offset), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _append_bytes(path: Path, data: bytes, sync: bool = True) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        rest = memoryview(data)
        while rest:
            rest = rest[os.write(fd, rest) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_READ_TRIES = 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def read_snapshot(path: Path) -> Snapshot:
    """Read ``path`` with its identity (a missing file reads as empty, ``ident=None``).

    A write that lands while the file is read is seen (the identity changed) and the file is
    read again, so ``data`` is the content of one moment.

    Raises:
        NotRegularFile: it is a FIFO, a device, … (:mod:`talos.fsutil`). FileTooLarge: it is
            larger than :data:`talos.fsutil.MAX_MEMORY_BYTES`. OSError: it cannot be read.
    """
    for attempt in range(_READ_TRIES):
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return Snapshot(path, b"", None, None)
        check_regular(path, st)  # before opening: opening a device can act
        if st.st_size > MAX_MEMORY_BYTES:
            raise FileTooLarge(path, MAX_MEMORY_BYTES)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO swapped in cannot hang it
        except FileNotFoundError:
            return Snapshot(path, b"", None, None)
        try:
            check_regular(path, os.fstat(fd))
            before = _ident(os.fstat(fd))
            data = _read_fd(fd)
            after = os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        if (_ident(after) == before and len(data) == after.st_size) or attempt == _READ_TRIES - 1:
            # After many tries (a file written without pause) the bytes read stand for
            # themselves: the check before the swap compares them with the file's first bytes.
            ident = (after.st_dev, after.st_ino, len(data), after.st_mtime_ns)
            return Snapshot(path, data, ident, fd, carried=len(data))
        os.close(fd)
    raise AssertionError("unreachable")


def _same(snap: Snapshot) -> bool:
    """The cheap look: ``snap.path`` is still the inode ``snap`` read, not shorter. The
    path itself is looked at (``lstat``): a symbolic link put in its place (a person moving
    memory.md into a dotfiles folder and linking it back) is a change, never followed."""
    try:
        st = os.lstat(snap.path)
    except FileNotFoundError:
        return snap.ident is None
    return snap.ident is not None and _grown_only(snap, st)


def quiet(snap: Snapshot) -> bool:
    """Before an append: wait for a process that holds the file open for writing (at most
    :data:`DRAIN_SECONDS`), and tell whether the file is still what ``snap`` read. ``cp``
    over memory.md or an editor's in-place save writes at its own offset: a line appended
    meanwhile is overwritten, and the read the append was decided on was half the file
    (the hostile pass). False: read again and decide again. A writer that stays (``cat >>
    memory.md``) appends too, alongside which an append is safe: True."""
    if snap.fd is None or _writers(snap.fd) is not True:
        return True
    if not _wait_for_writers(snap.fd):
        return True
    return _identical(snap)


def _identical(snap: Snapshot) -> bool:
    """``snap.path`` is exactly what ``snap`` read: same inode, size and mtime."""
    try:
        return _ident(os.lstat(snap.path)) == snap.ident
    except FileNotFoundError:
        return snap.ident is None


def _grown_only(snap: Snapshot, st: os.stat_result) -> bool:
    """Same inode as read, and at most grown by appends after a complete last line: bytes
    added after an unfinished line (no newline: someone was writing it) complete *that*
    line, so carrying them after talos's edit would split it (the hostile pass); the edit is
    redone on the new content instead."""
    assert snap.ident is not None
    if _ident(st) == snap.ident:
        return True
    if (st.st_dev, st.st_ino) != snap.ident[:2]:
        return False
    if snap.data and not snap.data.endswith(b"\n"):
        return st.st_size == len(snap.data)
    return st.st_size >= len(snap.data)


def _unchanged(snap: Snapshot) -> bool:
    """Whether ``snap.path`` is still the file ``snap`` read: same device and inode, and the
    bytes it read still its first bytes. Lines appended after them (a person's ``>>``) are no
    change to redo the edit for: they are carried over to the new file after the swap, which
    is what redoing the edit on the new content would give."""
    try:
        fd = os.open(snap.path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW)
    except FileNotFoundError:
        return snap.ident is None
    except OSError as e:
        if e.errno == errno.ELOOP:  # a symbolic link swapped in: a change (see _same)
            return False
        raise
    try:
        st = os.fstat(fd)
        if snap.ident is None or not _grown_only(snap, st):
            return False
        if _read_prefix(fd, len(snap.data)) != snap.data:
            return False
    finally:
        os.close(fd)
    return _same(snap)  # the last look, a few microseconds before the swap


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_exchange_ok = sys.platform.startswith("linux")
_renameat2: Callable[..., int] | None = None  # looked up once: the swap follows the last check


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` atomically (Linux ``renameat2(RENAME_EXCHANGE)``).

    Returns:
        False when the platform or file system cannot (then nothing happened).

    Raises:
        OSError: any other failure.
    """
    global _exchange_ok, _renameat2
    if not _exchange_ok:
        return False
    if _renameat2 is None:
        try:
            _renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
        except (AttributeError, OSError):
            _exchange_ok = False
            return False
    src, dst = os.fsencode(a), os.fsencode(b)
    if _renameat2(_AT_FDCWD, src, _AT_FDCWD, dst, _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        _exchange_ok = False
        return False
    raise OSError(err, os.strerror(err), str(b))


class _Gone(Exception):
    """memory.md was deleted in the instant before the exchange."""


def _exchanged(tmp: Path, path: Path) -> bool:
    """:func:`_exchange`; raises :class:`_Gone` when ``path`` vanished just before (a person
    deleting memory.md: a change like any other, the edit is redone on what is there)."""
    try:
        return _exchange(tmp, path)
    except FileNotFoundError:
        if os.path.lexists(path):
            raise
        raise _Gone from None


def replace_if_unchanged(
    snap: Snapshot, data: bytes, before_swap: Callable[[], None] | None = None
) -> bool:
    """Replace ``snap.path`` with ``data`` atomically, only if it is still the file ``snap``
    read (device, inode, size, mtime_ns and bytes); keep its permission bits.

    Lines appended after what ``snap`` read are no change: they are carried over to the new
    file right after the swap (what redoing the edit on the new content would give).

    First a cheap look (the file changed already: nothing else happens); then
    ``before_swap`` runs (the caller's audit entry, so a full disk names the log first); then
    ``data`` goes to a temp file (fsynced), then the full check, then at once the swap. Where
    the kernel can (Linux ``renameat2``), the swap is an atomic *exchange*, and the file
    swapped out is checked once more: a person's editor save or in-place edit that slipped in
    between the check and the swap is swapped back (the call returns False). Bytes appended
    to the old file are carried over to the new one, now and by :meth:`Snapshot.drain`.

    The window that stays: the caller's :meth:`Snapshot.drain` carries appends over until no
    process holds the old file open for writing (Linux read leases; elsewhere, and for a file
    the caller does not own, once, right after the swap), so what is lost is only what a
    program that keeps memory.md open for writing for more than :data:`DRAIN_SECONDS` writes
    after that (``talos.writer.edits`` warns then); without ``renameat2``, also an editor save in
    the microseconds between the last ``stat`` and ``os.replace`` (median 4.5 µs, max 34 µs
    over 200 superseding writes of a 1000-line file). A writer that does not take the memory
    lock cannot be excluded entirely.

    Returns:
        True when replaced; False when the file changed since ``snap`` (nothing replaced:
        read again and redo the edit).

    Raises:
        OSError: the folder is not writable or the disk is full (the file is then unchanged).
    """
    path = snap.path
    mode, owner = 0o644, None
    if snap.fd is not None:
        st = os.fstat(snap.fd)
        mode, owner = st.st_mode & 0o7777, (st.st_uid, st.st_gid)
    if not _same(snap):
        return False
    if snap.ident is not None and not os.access(path, os.W_OK):
        # A read-only memory.md (chmod a-w: "do not change it"): an append is refused by the
        # system, but a rename replaces a read-only file all the same. Refused alike.
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
    if snap.fd is not None and _writers(snap.fd) is True:
        # Someone holds memory.md open for writing (a long ``echo``, ``cat >>``, an editor's
        # in-place save): wait for them; if they stay, replacing it would lose what they
        # write next, so nothing is changed.
        if not _wait_for_writers(snap.fd):
            raise HeldOpen(path)
        if not _identical(snap):
            # What a writer added while talos waited is not "lines appended after the read":
            # ``cp`` over the file writes it in pieces, and its second half held the record
            # to supersede (the hostile pass: a conflict nobody asked for). Read it again.
            return False
    if before_swap is not None:
        before_swap()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    swapped = False  # once exchanged, ``tmp`` holds the previous file: never delete it blindly
    try:
        with os.fdopen(fd, "wb") as f:
            if owner is not None and owner != (os.geteuid(), os.getegid()):
                # Keep the person's file theirs: ``sudo talos remember`` replaced a 0600
                # memory.md with one owned by root, which its owner could no longer read.
                with contextlib.suppress(OSError):
                    os.fchown(f.fileno(), *owner)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if snap.fd is not None and _writers(snap.fd) is True:  # opened meanwhile: as above
            if not _wait_for_writers(snap.fd):
                raise HeldOpen(path)
            if not _identical(snap):
                tmp.unlink()
                return False
        if not _unchanged(snap) or snap.mid_line():
            tmp.unlink()
            return False
        # Lines appended since the read go into the new file *before* it becomes visible: a
        # person who reads memory.md right after the swap (an editor about to save) must
        # find them there. Only what lands in the microseconds until the swap is carried after.
        carried = snap._carry_to(tmp, sync=False)
        if carried and not carried.endswith(b"\n"):
            # Half a line landed since the last look: its rest would go to the old file.
            tmp.unlink()
            return False
        ours = len(data) + len(carried)
        if snap.ident is None:
            try:
                os.link(tmp, path)  # create, but never over a file that appeared meanwhile
            except FileExistsError:
                tmp.unlink()
                return False
            except OSError:  # a file system without hard links
                os.replace(tmp, path)
            else:
                tmp.unlink()
        elif _exchanged(tmp, path):
            swapped = True
            late = snap._carry_to(path)  # first: the old file's last bytes
            ours += len(late)
            if (
                not _swapped_out_is_ours(snap, tmp)
                or (late and not late.endswith(b"\n"))
                or snap.mid_line()
            ):
                # An editor's save or in-place edit slipped in, or a line is being written
                # in pieces (its rest would go to the old file, then be carried only after
                # the next line: the hostile pass split 102 of 826 such lines): put the file
                # back, its writer keeps writing where it was.
                _swap_back(snap, tmp, ours)
                return False
            tmp.unlink()
            snap.replaced = True
        else:
            os.replace(tmp, path)
            snap.replaced = True
            snap.carry_late()
        _fsync_path(path)
    except _Gone:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False
    except BaseException as e:
        if not swapped:
            with contextlib.suppress(OSError):
                tmp.unlink()
        if isinstance(e, OSError) and not e.filename:  # a full disk: name the file
            e.filename = str(path)
        raise
    fsync_folder(path)
    return True


def _swapped_out_is_ours(snap: Snapshot, old: Path) -> bool:
    """After an exchange, ``old`` holds what was at ``snap.path`` at the swap: is it the file
    ``snap`` read, grown at most by appends?"""
    if snap.fd is None or snap.ident is None:
        return False
    st = os.lstat(old)  # a symbolic link swapped in is not the file read
    if (st.st_dev, st.st_ino) != snap.ident[:2]:
        return False  # an editor's rename slipped in
    return _read_prefix(snap.fd, len(snap.data)) == snap.data  # else an in-place edit did


def _swap_back(snap: Snapshot, old: Path, ours: int) -> None:
    """Put the person's file (now at ``old``) back at ``snap.path``; bytes appended to our
    file (``ours`` bytes long) meanwhile belong to theirs (carried until no writer holds ours
    open)."""
    _exchange(old, snap.path)
    fd = os.open(old, os.O_RDONLY)
    carried = ours

    def carry(final: bool) -> None:
        nonlocal carried
        got = _read_fd(fd, carried)
        if not final:
            got = got[: got.rfind(b"\n") + 1]
        if got:
            _append_bytes(snap.path, got)
            carried += len(got)

    try:
        old.unlink()  # no name: no new writer can open it while we drain
        _drain(fd, carry)
    finally:
        os.close(fd)


#: How long a replace waits for a process still writing to the replaced file (seconds).
DRAIN_SECONDS = 1.0


def _writers(fd: int) -> bool | None:
    """Whether a process holds the file behind ``fd`` (opened read-only) open for writing:
    a read lease (``F_SETLEASE``, Linux) is granted only when none does. ``None`` when the
    system cannot tell (no leases, not the file's owner, a network file system).

    While the lease is held (microseconds), a process that opens the file for writing
    breaks it, and the kernel signals the holder: SIGIO by default, which would end the
    process. So the lease is taken with ``F_SETSIG`` set to SIGURG, which is ignored unless
    a handler is installed (then the question is not asked), and the opener waits only
    until the lease is dropped."""
    set_lease = getattr(fcntl, "F_SETLEASE", None)
    set_sig = getattr(fcntl, "F_SETSIG", None)
    if set_lease is None or set_sig is None:
        return None
    if signal.getsignal(signal.SIGURG) not in (signal.SIG_DFL, signal.SIG_IGN):
        return None
    try:
        fcntl.fcntl(fd, set_sig, signal.SIGURG)
        fcntl.fcntl(fd, set_lease, fcntl.F_RDLCK)
    except OSError as e:
        return True if e.errno in (errno.EAGAIN, errno.EWOULDBLOCK) else None
    fcntl.fcntl(fd, set_lease, fcntl.F_UNLCK)
    return False


def _writers_gone(fd: int) -> bool | None:
    """:func:`_writers`, the other way round: True when no process holds the file open for
    writing (``None``: cannot tell)."""
    held = _writers(fd)
    return None if held is None else not held


def _wait_for_writers(fd: int) -> bool:
    """Wait until no process holds the file behind ``fd`` open for writing, at most
    :data:`DRAIN_SECONDS`. Returns False when one still does."""
    deadline = time.monotonic() + DRAIN_SECONDS
    while _writers(fd) is True:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def _drain(fd: int, carry: Callable[[bool], object]) -> bool:
    """Call ``carry(False)`` until no writer holds the file behind ``fd`` open, then
    ``carry(True)`` once more; at most :data:`DRAIN_SECONDS`. ``carry(final)`` may keep the
    unfinished end of a line back until ``final``. Returns False when a writer was still
    there."""
    deadline = time.monotonic() + DRAIN_SECONDS
    while True:
        carry(False)
        gone = _writers_gone(fd)
        if gone is not False:
            carry(True)
            return True
        if time.monotonic() > deadline:
            carry(True)
            return False
        time.sleep(0.001)


@contextlib.contextmanager
def folder_lock(folder: Path, timeout: float) -> Iterator[bool]:
    """Hold an exclusive ``flock`` on ``folder`` (the folder of memory.md) while talos
    rewrites a file in it.

    The memory lock belongs to a home, but two homes can share one memory file
    (``memory_file = "~/notes/memory.md"`` in both): each then swept the other's temp file
    away as stale mid-write (the hostile pass: ``FileNotFoundError`` out of a remember). Every
    talos writer of a file in ``folder`` holds this lock, whatever its home; it leaves no
    file behind. Where the folder cannot be locked (it does not exist yet, a network file
    system without ``flock``), nothing is held. Yields whether the lock is held.

    Raises:
        filelock.Timeout: another talos process held it for ``timeout`` seconds.
    """
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    except OSError:
        yield False
        return
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                    held = False  # cannot be locked here: go on as before
                    break
                if time.monotonic() > deadline:
                    raise filelock.Timeout(str(folder)) from None
                time.sleep(0.005)
        yield held
    finally:
        os.close(fd)  # releases the lock


def append_line(path: Path, line: bytes) -> bool:
    """Append one line to ``path`` without rewriting it (``O_APPEND``, one write, fsync).

    A last line without a newline that a process is still writing (it holds the file open
    for writing: a long ``echo`` written in pieces, ``{ printf '- half'; …; } >> memory.md``)
    is waited for, at most :data:`DRAIN_SECONDS`: a line appended after its first part would
    split it in two (the hostile pass). If it is still being written then, nothing is
    written and the call returns False. A last line without a newline that no one is writing
    is finished: it gets its newline first, so nothing is glued onto it. A person's
    concurrent appends interleave whole (the kernel appends each ``write`` at the end),
    nothing is replaced, so nothing of theirs can be lost.

    Returns:
        True when the line was appended; False when another program was writing the file's
        last line all along (nothing written).

    Raises:
        OSError: the file cannot be written, naming it (a full disk: what part of the line was
            written is taken back when nothing was appended after it; a kill mid-write leaves
            at most a partial last line, which :func:`talos.writer.audit.recover` completes).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    for _look in range(_READ_TRIES):
        seen = _settled_size(path)
        if seen is None:
            return False
        fd = open_append(path, readable=True)  # a regular file only, links not followed
        size = os.fstat(fd).st_size
        if size in (0, seen) or os.pread(fd, 1, size - 1) == b"\n":
            break
        os.close(fd)  # half a line landed since the look: look again (and wait for it)
    else:
        return False
    data = b""
    try:
        data = line.rstrip(b"\n") + b"\n"
        if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        rest = memoryview(data)
        while rest:
            rest = rest[os.write(fd, rest) :]
        os.fsync(fd)
        start = os.lseek(fd, 0, os.SEEK_CUR) - len(data)  # O_APPEND: where it landed
    except OSError as e:
        if size >= 0:
            with contextlib.suppress(OSError):
                now = os.fstat(fd).st_size
                if (
                    size < now <= size + len(data)
                    and _read_prefix_at(fd, size, now) == data[: now - size]
                ):
                    os.ftruncate(fd, size)  # only our own partial line, nothing after it
        e.filename = e.filename or str(path)
        raise
    finally:
        os.close(fd)
    if start > max(size, 0) and _read_at(path, start - 1, 1) not in (b"\n", None):
        # Half a line landed in the microseconds between the last look and the write: ours
        # sits inside it. Move ours after it once it is finished.
        _move_after(path, start, data)
    return True


def _read_at(path: Path, offset: int, n: int) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW)
    except OSError:
        return None
    try:
        return os.pread(fd, n, offset)
    finally:
        os.close(fd)


def _move_after(path: Path, start: int, ours: bytes) -> None:
    """Take the bytes ``ours`` at ``start`` out of the line someone was writing around them,
    and append them after it, by a checked replace (the hostile pass: 3 of 927 lines written
    in two pieces were split or glued by an append that landed between the pieces). Given
    up, leaving the file as it is, when the file was rewritten meanwhile, is still being
    written, or keeps changing."""
    line = ours.lstrip(b"\n")
    for _try in range(_READ_TRIES):
        with read_snapshot(path) as snap:
            if snap.fd is None or snap.data[start : start + len(ours)] != ours:
                return  # rewritten meanwhile (an editor's save): it decided the content
            if _writers(snap.fd) is True and not _wait_for_writers(snap.fd):
                return
            if snap.mid_line() or _grown_since(snap):
                continue  # read again: their line may be finished now
            rest = snap.data[:start] + snap.data[start + len(ours) :]
            if rest and not rest.endswith(b"\n"):
                rest += b"\n"
            try:
                if replace_if_unchanged(snap, rest + line):
                    snap.drain()
                    return
            except (OSError, HeldOpen):
                return


def _grown_since(snap: Snapshot) -> bool:
    return snap.fd is not None and os.fstat(snap.fd).st_size != len(snap.data)


def _settled_size(path: Path) -> int | None:
    """The size of ``path`` once its last line is not being written: it ends with a
    newline, or no process holds the file open for writing (a line left without one is
    finished). Waits for a line in progress at most :data:`DRAIN_SECONDS`; ``None`` when it
    is still being written then; -1 when the file is missing or not a regular file (the
    append creates it, or names what is wrong)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW)
    except OSError:
        return -1
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return -1
        deadline = time.monotonic() + DRAIN_SECONDS
        while True:
            size = os.fstat(fd).st_size
            if not size or os.pread(fd, 1, size - 1) == b"\n" or _writers(fd) is not True:
                return size
            if time.monotonic() > deadline:
                return None
            time.sleep(0.002)
    finally:
        os.close(fd)


def _read_prefix_at(fd: int, start: int, end: int) -> bytes:
    return os.pread(fd, end - start, start)
