"""One change of memory.md under its lock (design §7.5): the lock, the lines as bytes, the keyed
records as they are now, and :func:`apply_change`, which reads, checks and changes the file.

Every write of :mod:`talos.writer.edits` and :mod:`talos.writer.restore` takes the home's memory
lock
(:func:`memory_lock`, ``filelock``, flock-based: a dead holder releases it), settles any
transaction a killed writer left (:func:`settle`, :func:`talos.writer.audit.recover`), and hands a
*plan* to :func:`apply_change`: the plan decides from the bytes of memory.md as they are
*now* (never from a view taken before the lock, issue 12.2) and returns a :class:`Change`.
Its entries go to the audit log as *prepared*, memory.md is changed, then they are committed.

A person edits memory.md too, without taking the lock. So a change that adds one line only
appends it (:func:`talos.writer.shared_file.append_line`), and one that removes or replaces lines
replaces the file only if it is still the file the plan read
(:func:`talos.writer.shared_file.replace_if_unchanged`); otherwise the transaction is aborted and
the
plan runs again on the new content, up to :data:`MAX_ATTEMPTS` times (issue 12.1). Lines that
are not valid UTF-8 are carried over byte for byte.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import filelock

from talos import fsutil
from talos.errors import InputError, TalosError
from talos.fsutil import check_regular_or_missing, lock
from talos.home import Paths
from talos.model import Node
from talos.sources.facts import ParsedFact, parse_fact_line
from talos.view.trust import derived_id
from talos.warn import warn
from talos.writer import audit
from talos.writer.logs import migrate
from talos.writer.shared_file import (
    HeldOpen,
    append_line,
    folder_lock,
    quiet,
    read_snapshot,
    replace_if_unchanged,
)

__all__ = [
    "LOCK_TIMEOUT",
    "MAX_ATTEMPTS",
    "Change",
    "Record",
    "apply_change",
    "decode_line",
    "dressed",
    "joined",
    "keyed",
    "line_bytes",
    "memory_lock",
    "placed",
    "settle",
    "split_lines",
    "supersede_entry",
]

#: Seconds to wait for another process's write before giving up with an error.
LOCK_TIMEOUT = 60.0
#: How often a write is redone when memory.md changed under it (a person editing it) before
#: it gives up with an error (nothing is lost then: memory.md stays as the person left it).
MAX_ATTEMPTS = 20


def memory_lock(paths: Paths) -> filelock.FileLock:
    """The inter-process lock around every read-modify-write of memory.md."""
    paths.lock_dir.mkdir(parents=True, exist_ok=True)
    return lock(paths.lock_dir / "memory.lock", LOCK_TIMEOUT)  # a regular file only


@dataclass(slots=True)
class Change:
    """A planned write: the audit ``records``; memory.md then gets the one line ``append``
    (nothing rewritten), or is replaced by ``data``, or is left alone (both ``None``: an
    audit-only write such as late evidence)."""

    records: list[dict[str, Any]]
    data: bytes | None = None
    append: str | None = None


T = TypeVar("T")


def apply_change(paths: Paths, plan: Callable[[bytes], tuple[Change | None, T]]) -> T:
    """Run one write under the memory lock (the caller holds it).

    ``plan`` gets the bytes of memory.md as they are now and decides; it may raise
    :class:`InputError` (nothing is written then). A replace happens only if memory.md is
    still the file ``plan`` saw; when a person changed it meanwhile, the prepared
    transaction (if any) is aborted and ``plan`` runs again on the new content.

    Raises:
        TalosError: memory.md changed under every one of :data:`MAX_ATTEMPTS` attempts.
        NotRegularFile, FileTooLarge: memory.md (or what its link leads to) is not a regular
            file, or is too large (:mod:`talos.fsutil`).
    """
    for _attempt in range(MAX_ATTEMPTS):
        # Through a symlinked memory.md (a dotfiles repo) — but never onto a device or a
        # FIFO: the message names memory.md and where its link leads (issue 12.3). Resolved
        # on every attempt: a link put in place of the file meanwhile is followed, not
        # replaced by a regular file (the hostile pass).
        check_regular_or_missing(paths.memory_file)
        mf = paths.memory_file.resolve()
        with folder_lock(mf.parent, LOCK_TIMEOUT) as held:
            if held:  # else another home's writer may be using its temp file right now
                _sweep_temps(mf)
            done, result = _attempt_write(paths, mf, plan)
        if done:
            return result
    raise TalosError(
        f"{paths.memory_file} kept changing while talos tried to write it ({MAX_ATTEMPTS} "
        "tries): another program is editing it. Nothing was changed; try again when it is done"
    )


def _attempt_write(
    paths: Paths, mf: Path, plan: Callable[[bytes], tuple[Change | None, T]]
) -> tuple[bool, T]:
    """One attempt of :func:`apply_change`: ``(False, _)`` when memory.md changed under it."""
    with read_snapshot(mf) as snap:
        change, result = plan(snap.data)
        if change is None:
            return True, result
        _check_size(paths.memory_file, snap.data, change)
        txn = audit.Txn(paths)
        prepared = False

        def prepare(records: list[dict[str, Any]]) -> None:
            nonlocal prepared
            txn.prepare(records)
            prepared = True

        try:
            if change.data is None:
                records = change.records
                if change.append is not None and not quiet(snap):
                    return False, result  # a writer was at work: decide on what it wrote
                if change.append is not None:
                    # Where the line will start at the earliest: recovery completes a torn
                    # append only past this point, never a person's unfinished last line.
                    at = os.stat(mf).st_size if snap.ident is not None else 0
                    records = [
                        {**r, "offset": at} if r.get("after") == change.append else r
                        for r in records
                    ]
                prepare(records)
                if change.append is not None and not append_line(mf, change.append.encode("utf-8")):
                    txn.abort(f"{paths.memory_file}: another program was writing its last line")
                    raise HeldOpen(paths.memory_file)
            else:
                records = change.records
                if not replace_if_unchanged(snap, change.data, lambda: prepare(records)):
                    if prepared:
                        txn.abort(f"{paths.memory_file} changed outside talos meanwhile; redone")
                    return False, result
        except OSError:
            if prepared:  # memory.md is unchanged (append_line, replace_if_unchanged)
                with contextlib.suppress(OSError):  # the disk may be full for the log too
                    txn.abort("memory.md could not be written")
            raise
        except Exception:
            # Anything else (a bug): settle the transaction from what memory.md
            # holds now, so the log never keeps an entry the next write trips over (the
            # hostile pass: a line that could not be encoded left one that failed every
            # later write).
            if prepared:
                with contextlib.suppress(Exception):
                    audit.recover(paths.audit_file, paths.memory_file)
            raise
        txn.commit()
        if not snap.drain():  # a person's append that opened the old file before the swap
            warn(
                f"{paths.memory_file}: another program keeps the file open for writing; "
                "what it writes to it from now on does not reach the new memory.md"
            )
        return True, result


def _check_size(name: Path, data: bytes, change: Change) -> None:
    """Refuse a write that would make memory.md larger than talos reads
    (:data:`talos.fsutil.MAX_MEMORY_BYTES`): every reader would then skip the whole file,
    and every writer refuse it (the hostile pass: one 300 KB ``remember`` over a 200 KB
    bound left recall with no facts at all, and every later write refused).

    Raises:
        InputError: the message names the file and what to do; nothing is written.
    """
    limit = fsutil.MAX_MEMORY_BYTES
    if change.append is not None:
        size = len(data) + len(change.append.encode("utf-8")) + 2
    elif change.data is not None and len(change.data) > len(data):
        size = len(change.data)
    else:
        return
    if size > limit:
        raise InputError(
            f"{name}: this write would make it {size:,} bytes long, more than the "
            f"{limit:,} talos reads; nothing was changed (remove lines you no longer need)"
        )


def split_lines(data: bytes) -> list[bytes]:
    return data.split(b"\n") if data else []


def decode_line(blob: bytes) -> str | None:
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError:
        return None


def joined(data: bytes, gone: AbstractSet[int]) -> bytes:
    """memory.md ``data`` without the lines at the 0-based indexes ``gone``. A last line
    without a newline stays so (a line someone is still writing never gets here: the file
    then changes, or is held open, before the replace, see :mod:`talos.writer.shared_file`)."""
    blobs = split_lines(data)
    tail = b""
    if data and not data.endswith(b"\n"):
        tail = b"" if len(blobs) - 1 in gone else blobs[-1]
    kept = [b for i, b in enumerate(blobs[:-1]) if i not in gone]
    return b"".join(b + b"\n" for b in kept) + tail


def line_bytes(line: str, like: bytes) -> bytes:
    """``line`` as bytes of memory.md, ending in ``\\r`` as the line ``like`` it replaces does."""
    return line.encode("utf-8") + (b"\r" if like.endswith(b"\r") else b"")


def placed(data: bytes, gone: AbstractSet[int], line: str, at: int) -> bytes:
    """memory.md ``data`` without the lines at the 0-based indexes ``gone``, with ``line``
    where the line at index ``at`` is: in its place when ``at`` is in ``gone`` (a supersede),
    right after it otherwise (a record that stays in force outside the new one's window).

    The point of the rule: the new value of a key stays under the heading its old line stood
    under, instead of at the end of the file (a newcomer's superseded ``editor`` fact left
    ``## Tools`` for the last heading, ``tests/test_supersede_place.py``). ``line`` is written
    as given: dress it first (:func:`dressed`) in the line at ``at``. It ends as that line
    does (CR LF in a CRLF file); as the last line it gets a newline.
    """
    bom = data.startswith(_BOM)
    blobs = split_lines(data[len(_BOM) :] if bom else data)
    new = line_bytes(line, blobs[at])
    out: list[bytes] = []
    for i, blob in enumerate(blobs):
        if i == at:
            out += [new] if i in gone else [blob, new]
        elif i not in gone:
            out.append(blob)
    if at == len(blobs) - 1:  # the anchor was a last line without a newline
        out.append(b"")
    return (_BOM if bom else b"") + b"\n".join(out)


def dressed(line: str, like: str) -> str:
    """``line`` as it is written in the place of the memory.md line ``like``, or beside it
    (:func:`placed`): inside ``like``'s container (the indent of a nested item, the ``> `` of a
    quote) instead of its own, and with ``like``'s marker (a heading's ``##``, a ``*`` or
    ``+`` bullet, an item's ``3.``) instead of its own, so the file keeps its structure: a
    ``## `` heading superseded by a ``- `` bullet ended its section, and the lines under it
    moved into the one before (``tests/test_supersede_place.py``). A ``like`` without a marker
    (a plain line) leaves ``line`` its own: its text as a plain line could read as a heading
    or an item. The result is what the audit log records as written, so a later check finds
    it in the file.

    ``line`` is a line talos wrote or is restoring (``- TEXT <!-- tag -->``, or a line as
    memory.md had it, container and all); ``like`` is a line of memory.md. A BOM is part of
    neither (:func:`placed` keeps the file's), nor is a CR at ``like``'s end.
    """
    line, like = line.removeprefix("\ufeff"), like.removeprefix("\ufeff").rstrip("\r")
    into = _CONTAINER.match(like).group(0)  # type: ignore[union-attr]
    outer = _CONTAINER.match(line).group(0)  # type: ignore[union-attr]
    marker = _MARKER.match(like, len(into))
    own = _MARKER.match(line, len(outer))
    if marker is None or own is None:
        return into + line[len(outer) :]
    return into + marker.group(0) + line[own.end() :]


#: The byte-order mark some editors put first in a UTF-8 file; a rewrite keeps it.
_BOM = b"\xef\xbb\xbf"
#: What a line stands inside: its indent and block-quote markers (``  `` of a nested item,
#: ``> `` of a quote). A line placed in an old line's stead or beside it takes them, so it
#: stays in the same list or quote (``tests/test_supersede_place.py``).
_CONTAINER = re.compile(r"(?:[ \t]*>[ \t]?)*[ \t]*")
#: What a line is, after its container: an ATX heading's ``#`` run, a bullet or an ordered
#: item's number (CommonMark), and the spaces after it.
_MARKER = re.compile(r"(?:#{1,6}|[-*+]|\d{1,9}[.)])[ \t]+")


def settle(paths: Paths) -> None:
    """Settle the audit transaction a killed writer left in this device's log (call with the
    memory lock held), after moving a legacy log there (:func:`talos.writer.logs.migrate`):
    the start of every write."""
    migrate(paths, locked=True)
    audit.recover(paths.audit_file, paths.memory_file)


def _sweep_temps(mf: Path) -> None:
    """Delete the temp files a killed writer left beside memory.md ``mf`` (call with the
    folder lock held: no talos writer of that folder is active, whatever its home, so every
    ``.memory.md.*.tmp`` is stale; 50 SIGKILLs left 11 of them in a person's home —
    ``tests/test_crash.py``)."""
    try:
        stale = list(mf.parent.glob(f".{glob.escape(mf.name)}.*.tmp"))
    except OSError:
        return
    for tmp in stale:
        with contextlib.suppress(OSError):
            tmp.unlink()


@dataclass(slots=True)
class Record:
    """An active keyed record as it is in memory.md now."""

    idx: int  # 0-based line index
    id: str
    raw: str
    fact: ParsedFact

    @property
    def scope(self) -> str:
        return self.fact.fields.get("scope", "global")

    def node(self) -> Node:
        f = self.fact
        return Node(
            "fact", f.text, frozenset(), raw=self.raw, src=f.src, born=f.born, fields=f.fields
        )


def keyed(blobs: list[bytes], key: str) -> list[Record]:
    """The active (``status`` active) records of ``key`` in the lines ``blobs``, any scope."""
    out = []
    for idx, blob in enumerate(blobs):
        if b"key=" not in blob:  # the key itself may be URL-encoded in the tag (%C3%A9dit)
            continue
        line = decode_line(blob)
        p = parse_fact_line(line) if line is not None else None
        if (
            line is None
            or p is None
            or p.fields.get("key") != key
            or p.fields.get("status", "active") != "active"
        ):
            continue
        raw = line.rstrip("\r")
        out.append(Record(idx, derived_id(p.fields, raw), raw, p))
    return out


def supersede_entry(paths: Paths, r: Record, key: str, by: str, reason: str) -> dict[str, Any]:
    return {
        "op": "supersede",
        "id": r.id,
        "key": key,
        "scope": r.scope,
        "file": str(paths.memory_file),
        "line": r.idx + 1,
        "before": r.raw,
        "after": None,
        "superseded_by": by,
        "reason": reason,
    }
