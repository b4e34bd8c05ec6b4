"""Writes to a home: remember, forget, resolve, revoke, restore (SPEC §6.5, §7.5, §7.6), and
the acknowledgement of outside edits (``talos doctor --ack``, audit log only).

Every write takes the home's memory lock (``filelock``, flock-based: a dead holder releases
it), settles any transaction a killed writer left (:func:`talos.audit.recover`), decides what
to change from what is on disk *now* (never from a view taken before the lock: two concurrent
``resolve`` calls each kept their own record and removed the other's, issue 12.2), appends its
entries to the audit log as *prepared*, changes memory.md, then commits.

A person edits memory.md too, without taking the lock (``echo … >> memory.md``, an editor's
save). So a write that adds one line and supersedes none only appends it
(:func:`talos.shared_file.append_line`, nothing rewritten), and a write that removes lines (or
puts a superseding line in the old one's place) replaces the file only if it is still the
file it read (:func:`talos.shared_file.replace_if_unchanged`); otherwise the transaction is aborted
and the edit redone on the new content, up to :data:`MAX_ATTEMPTS` times (issue 12.1; before,
132 to 232 of 600 person lines were lost in ``tests/test_outside_writer.py``). Lines that are not
valid UTF-8 are carried over byte for byte: no line a person wrote is ever lost.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import os
import re
import secrets
import shutil
import unicodedata
from collections.abc import Callable, Collection, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import filelock

from talos import audit, fsutil
from talos.canon import canonical_name
from talos.errors import InputError, TalosError
from talos.fsutil import check_regular_or_missing, lock
from talos.home import Paths
from talos.model import Node, line_id
from talos.shared_file import (
    HeldOpen,
    append_line,
    folder_lock,
    quiet,
    read_snapshot,
    replace_if_unchanged,
)
from talos.sources.facts import MIN_FACT_CHARS, TAG, ParsedFact, parse_fact_line
from talos.trust import (
    authority_of,
    covers,
    derived_id,
    from_model,
    overlaps,
    parse_day,
    person_wrote,
    tag_problem,
    validity,
    window_of,
)
from talos.warn import warn

__all__ = [
    "FIELD_ORDER",
    "LOCK_TIMEOUT",
    "MAX_ATTEMPTS",
    "MAX_TEXT_CHARS",
    "MAX_VALUE_CHARS",
    "Forgotten",
    "RememberResult",
    "RemovedLine",
    "Restored",
    "acknowledge",
    "check_value",
    "format_fact_line",
    "format_tag",
    "line_id",
    "memory_lock",
    "remember",
    "remove_fact_lines",
    "resolve",
    "restore",
    "skill_id",
    "unsafe_char",
]

#: Seconds to wait for another process's write before giving up with an error.
LOCK_TIMEOUT = 60.0
#: How often a write is redone when memory.md changed under it (a person editing it) before
#: it gives up with an error (nothing is lost then: memory.md stays as the person left it).
MAX_ATTEMPTS = 20
#: Longest value of a tag field (``--key``, ``--scope``, ``--source``, ``--ref``, ``--by``):
#: a 20,000-character key was stored as it came.
MAX_VALUE_CHARS = 1_000
#: Longest text of a fact :func:`remember` writes (any route: CLI, MCP, Python API). A model
#: sent a 2,000,000-character fact over MCP: it was appended, and every later command warned
#: that memory.md holds a line longer than the readers take
#: (``talos.sources.facts.MAX_FACT_BYTES``, 1 MiB, which 10,000 characters of at most 4
#: bytes cannot reach). The block shows 600 characters of a fact, and 1,200 match
#: (``tests/test_mcp_bounds.py``).
MAX_TEXT_CHARS = 10_000
#: Order of ``field=value`` pairs in a tag written by talos (SPEC §7.1).
FIELD_ORDER = (
    "id",
    "key",
    "scope",
    "from",
    "until",
    "verified",
    "ref",
    "conf",
    "by",
    "supersedes",
    "status",
)
_SRC = re.compile(r"\w+")
_KEY = re.compile(r"[\w.\-:/]+")


@dataclass(frozen=True, slots=True)
class RemovedLine:
    """A line taken out of memory.md: its 1-based number, exact text and record id."""

    line: int
    raw: str
    id: str


@dataclass(frozen=True, slots=True)
class Forgotten:
    """A record ``forget`` took away: ``kind`` (``fact`` or ``skill``), its ``id`` (what
    ``talos restore`` takes), its ``text``, and ``where`` it was (``memory.md:LINE``) or,
    for a skill, where the file went (the trash)."""

    kind: str
    id: str
    text: str
    where: str


@dataclass(slots=True)
class RememberResult:
    """What :func:`remember` did.

    ``status``: ``active`` (appended, in force), ``shadowed`` (appended, but a record of higher
    authority holds the key), or ``history`` (late evidence: recorded in the audit log only).
    ``superseded``: ids of the records it replaced (removed from memory.md, restorable).
    """

    id: str
    line: str
    status: str
    superseded: list[str] = field(default_factory=list)


def memory_lock(paths: Paths) -> filelock.FileLock:
    """The inter-process lock around every read-modify-write of memory.md."""
    paths.lock_dir.mkdir(parents=True, exist_ok=True)
    return lock(paths.lock_dir / "memory.lock", LOCK_TIMEOUT)  # a regular file only


def format_tag(src: str, born: str, fields: dict[str, str]) -> str:
    """``<!-- SRC DATE field=value ... -->`` with values URL-encoded (SPEC §7.1)."""
    order = [k for k in FIELD_ORDER if k in fields] + sorted(
        k for k in fields if k not in FIELD_ORDER
    )
    pairs = "".join(
        f" {k}={quote(str(fields[k]), safe=':/.@,+_-')}" for k in order if fields[k] != ""
    )
    return f"<!-- {src} {born}{pairs} -->"


def format_fact_line(text: str, src: str, born: str, fields: dict[str, str]) -> str:
    """A memory.md line ``- TEXT <!-- tag -->`` that :func:`parse_fact_line` reads back."""
    return f"- {text} {format_tag(src, born, fields)}"


# -- values (issue 12.5, 13.2) ----------------------------------------------------------------

#: Names for the invisible characters people actually paste.
_CHAR_NAMES = {
    "\x00": "a NUL byte",
    "\x08": "a backspace",
    "\t": "a tab",
    "\n": "a line feed",
    "\x0b": "a vertical tab",
    "\x0c": "a form feed",
    "\r": "a carriage return",
    "\x1b": "an escape (ESC)",
    "\x7f": "a delete (DEL)",
    "\x85": "a next line (NEL)",
}


def unsafe_char(value: str) -> str | None:
    """The first character of ``value`` that must not be stored: a control or format
    character (Unicode categories Cc, Cf, Zl, Zp) — a line break would split the record, a
    tab or zero-width character would make an invisible second key, ESC or a bidi override
    would act on a terminal (issue 12.5, 13.2) — or a lone surrogate (Cs: a byte of an
    argument that is not UTF-8, ``$'\\xff'``, or a ``\\ud800`` escape in JSON), which cannot
    be written as UTF-8 at all (the hostile pass: a prepared audit entry that could never be
    applied made every later write fail). Plain spaces are fine. ``None`` when clean."""
    for ch in value:
        if ch != " " and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            return ch
    return None


def describe_char(ch: str) -> str:
    """``a line feed (U+000A)``, ``a right-to-left override (U+202E)``: for messages."""
    name = _CHAR_NAMES.get(ch)
    if name is None and "\udc80" <= ch <= "\udcff":  # how Python decodes a non-UTF-8 byte
        return f"a byte that is not UTF-8 (0x{ord(ch) - 0xDC00:02X})"
    if name is None and unicodedata.category(ch) == "Cs":
        return f"a lone surrogate (U+{ord(ch):04X}), which is not UTF-8"
    if name is None:
        uname = unicodedata.name(ch, "")
        name = f"a {uname.lower()}" if uname else "a control character"
    return f"{name} (U+{ord(ch):04X})"


def check_value(option: str, value: str | None) -> None:
    """Refuse a value that holds a control or format character (:func:`unsafe_char`).

    Raises:
        InputError: ``--key 'a\\n': contains a line feed (U+000A)``; a value longer than
            :data:`MAX_VALUE_CHARS`.
    """
    if value is None:
        return
    if len(value) > MAX_VALUE_CHARS:
        raise InputError(
            f"{option} is {len(value):,} characters long; a value holds at most {MAX_VALUE_CHARS:,}"
        )
    ch = unsafe_char(value)
    if ch is not None:
        raise InputError(f"{option} {value!r}: contains {describe_char(ch)}")


# -- one write: read, decide, check, change (issue 12.1, 12.2) -------------------------------


@dataclass(slots=True)
class _Change:
    """A planned write: the audit ``records``; memory.md then gets the one line ``append``
    (nothing rewritten), or is replaced by ``data``, or is left alone (both ``None``: an
    audit-only write such as late evidence)."""

    records: list[dict[str, Any]]
    data: bytes | None = None
    append: str | None = None


T = TypeVar("T")


def _apply(paths: Paths, plan: Callable[[bytes], tuple[_Change | None, T]]) -> T:
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
    paths: Paths, mf: Path, plan: Callable[[bytes], tuple[_Change | None, T]]
) -> tuple[bool, T]:
    """One attempt of :func:`_apply`: ``(False, _)`` when memory.md changed under it."""
    with read_snapshot(mf) as snap:
        change, result = plan(snap.data)
        if change is None:
            return True, result
        _check_size(paths.memory_file, snap.data, change)
        txn = audit.Txn(paths.audit_file)
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


def _check_size(name: Path, data: bytes, change: _Change) -> None:
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


def _split(data: bytes) -> list[bytes]:
    return data.split(b"\n") if data else []


def _decode(blob: bytes) -> str | None:
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _joined(data: bytes, gone: AbstractSet[int]) -> bytes:
    """memory.md ``data`` without the lines at the 0-based indexes ``gone``. A last line
    without a newline stays so (a line someone is still writing never gets here: the file
    then changes, or is held open, before the replace, see :mod:`talos.shared_file`)."""
    blobs = _split(data)
    tail = b""
    if data and not data.endswith(b"\n"):
        tail = b"" if len(blobs) - 1 in gone else blobs[-1]
    kept = [b for i, b in enumerate(blobs[:-1]) if i not in gone]
    return b"".join(b + b"\n" for b in kept) + tail


def _blob(line: str, like: bytes) -> bytes:
    """``line`` as bytes of memory.md, ending in ``\\r`` as the line ``like`` it replaces does."""
    return line.encode("utf-8") + (b"\r" if like.endswith(b"\r") else b"")


def _placed(data: bytes, gone: AbstractSet[int], line: str, at: int) -> bytes:
    """memory.md ``data`` without the lines at the 0-based indexes ``gone``, with ``line``
    where the line at index ``at`` is: in its place when ``at`` is in ``gone`` (a supersede),
    right after it otherwise (a record that stays in force outside the new one's window).

    The point of the rule: the new value of a key stays under the heading its old line stood
    under, instead of at the end of the file (a newcomer's superseded ``editor`` fact left
    ``## Tools`` for the last heading, ``tests/test_supersede_place.py``). The new line ends
    as the line at ``at`` does (CR LF in a CRLF file); as the last line it gets a newline.
    """
    bom = data.startswith(_BOM)
    blobs = _split(data[len(_BOM) :] if bom else data)
    new = _CONTAINER.match(blobs[at]).group(0) + _blob(line, blobs[at])  # type: ignore[union-attr]
    out: list[bytes] = []
    for i, blob in enumerate(blobs):
        if i == at:
            out += [new] if i in gone else [blob, new]
        elif i not in gone:
            out.append(blob)
    if at == len(blobs) - 1:  # the anchor was a last line without a newline
        out.append(b"")
    return (_BOM if bom else b"") + b"\n".join(out)


#: The byte-order mark some editors put first in a UTF-8 file; a rewrite keeps it.
_BOM = b"\xef\xbb\xbf"
#: What a line stands inside: its indent and block-quote markers (``  `` of a nested item,
#: ``> `` of a quote). A line placed in an old line's stead or beside it takes them, so it
#: stays in the same list or quote (``tests/test_attack_s20a.py``).
_CONTAINER = re.compile(rb"(?:[ \t]*>[ \t]?)*[ \t]*")


def _settle(paths: Paths) -> None:
    """Settle the audit transaction a killed writer left (call with the memory lock held)."""
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
class _Record:
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


def _keyed(blobs: list[bytes], key: str) -> list[_Record]:
    """The active (``status`` active) records of ``key`` in the lines ``blobs``, any scope."""
    out = []
    for idx, blob in enumerate(blobs):
        if b"key=" not in blob:  # the key itself may be URL-encoded in the tag (%C3%A9dit)
            continue
        line = _decode(blob)
        p = parse_fact_line(line) if line is not None else None
        if (
            line is None
            or p is None
            or p.fields.get("key") != key
            or p.fields.get("status", "active") != "active"
        ):
            continue
        raw = line.rstrip("\r")
        out.append(_Record(idx, derived_id(p.fields, raw), raw, p))
    return out


def _supersede_entry(paths: Paths, r: _Record, key: str, by: str, reason: str) -> dict[str, Any]:
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


def remove_fact_lines(
    paths: Paths,
    doomed: Callable[[ParsedFact, str], bool],
    op: str,
    reason: str,
) -> list[RemovedLine]:
    """Remove every memory.md line whose parsed fact satisfies ``doomed``, audited.

    The decision is made under the lock on memory.md as it is then (and made again if a
    person edits the file before the replace, see :func:`_apply`).

    Args:
        paths: the home's paths.
        doomed: decides per ``(parsed line, exact line)``; undecodable and non-fact lines are
            always kept. It may be called more than once per line (a redone write).
        op: the audit operation (``forget``, ``revoke``, ``resolve``).
        reason: why, for the audit log.

    Returns:
        The removed lines in file order ([] when none matched; the file is then untouched).

    Raises:
        filelock.Timeout: another writer held the lock for :data:`LOCK_TIMEOUT` seconds.
        TalosError: memory.md kept changing (see :func:`_apply`); it is then unchanged.
        OSError: the audit log or memory.md cannot be written (memory.md is then unchanged).
    """

    def plan(data: bytes) -> tuple[_Change | None, list[RemovedLine]]:
        gone: set[int] = set()
        removed: list[tuple[RemovedLine, ParsedFact]] = []
        for no, blob in enumerate(_split(data), 1):
            line = _decode(blob)
            parsed = parse_fact_line(line) if line is not None else None
            raw = line.rstrip("\r") if line is not None else ""
            if parsed is not None and doomed(parsed, raw):
                removed.append((RemovedLine(no, raw, derived_id(parsed.fields, raw)), parsed))
                gone.add(no - 1)
        if not removed:
            return None, []
        records = [
            {
                "op": op,
                "id": r.id,
                "key": p.fields.get("key"),
                "scope": p.fields.get("scope", "global"),
                "ref": p.fields.get("ref"),
                "file": str(paths.memory_file),
                "line": r.line,
                "before": r.raw,
                "after": None,
                "reason": reason,
            }
            for r, p in removed
        ]
        return _Change(records, data=_joined(data, gone)), [r for r, _ in removed]

    with memory_lock(paths):
        _settle(paths)
        return _apply(paths, plan)


def resolve(
    paths: Paths, key: str, keep: str, scopes: Sequence[str], at: dt.date
) -> list[RemovedLine]:
    """Settle a conflict (SPEC §7.4): keep record ``keep``; every other active record of
    ``key`` in its scope that is readable and valid at ``at`` is superseded (removed,
    audited as ``resolve``, restorable).

    Decided under the lock on memory.md as it is then: two ``resolve`` runs of one conflict
    that each keep a different record end with one of the two kept, never with none (issue
    12.2: both used to succeed on their own stale view and remove each other's record).

    Raises:
        InputError: ``keep`` is no longer an active record of ``key`` in ``scopes`` (another
            write changed the key since the caller looked); nothing is changed.
    """

    key = canonical_name(key)

    def plan(data: bytes) -> tuple[_Change | None, list[RemovedLine]]:
        blobs = _split(data)
        pool = [
            r
            for r in _keyed(blobs, key)
            if r.scope in scopes
            and tag_problem(r.node()) is None
            and validity(r.node(), at) is None
        ]
        kept = [r for r in pool if r.id == keep]
        if len(kept) > 1:  # a copied line: "kept X; superseded nothing" left the conflict
            lines = ", ".join(str(r.idx + 1) for r in kept)
            raise InputError(
                f"record id {keep} is on lines {lines} of {paths.memory_file}: talos cannot "
                "tell which one to keep. Nothing was changed; give one of them another id (or "
                "delete one) by hand"
            )
        if not kept:
            ids = ", ".join(sorted({r.id for r in pool})) or "none"
            raise InputError(
                f"record {keep} of key {key!r} is not in {paths.memory_file} any more: another "
                f"write changed the key since talos looked (ids now: {ids}). Nothing was "
                "changed; see talos conflicts"
            )
        losers = [r for r in pool if r.scope == kept[0].scope and r.id != keep]
        if not losers:
            return None, []
        why = f"conflict on {key} resolved: kept {keep}"
        records = [
            {
                "op": "resolve",
                "id": r.id,
                "key": key,
                "scope": r.scope,
                "ref": r.fact.fields.get("ref"),
                "file": str(paths.memory_file),
                "line": r.idx + 1,
                "before": r.raw,
                "after": None,
                "reason": why,
            }
            for r in losers
        ]
        gone = {r.idx for r in losers}
        data_now = _joined(data, gone)
        return _Change(records, data=data_now), [
            RemovedLine(r.idx + 1, r.raw, r.id) for r in losers
        ]

    with memory_lock(paths):
        _settle(paths)
        return _apply(paths, plan)


def remember(
    paths: Paths,
    text: str,
    *,
    key: str | None = None,
    source: str = "user",
    ref: str | None = None,
    scope: str = "global",
    observed: dt.date | None = None,
    valid_from: dt.date | None = None,
    until: dt.date | None = None,
    conf: float | None = None,
    by: str | None = None,
    authorized: Sequence[str] = (),
) -> RememberResult:
    """Append a tagged fact, atomically and under the lock (SPEC §7.5).

    With a ``key``, the new record supersedes the active records of the same key and scope
    whose validity window overlaps its own, whose authority is not higher *and* whose
    observed date is not newer: they are removed from memory.md (audited, restorable) and
    the new line records ``supersedes=``. A window that leaves part of an old record's future
    uncovered (a value for next week only) keeps the old record: the new one names it in
    ``supersedes=`` and wins only inside its own window (issue 12.6, :func:`talos.trust.covers`).
    Windows that do not overlap never supersede. Evidence that arrives late (observed before
    an active record of equal authority) never replaces it: it goes straight to history (the
    audit log). A lower-authority write (``reflect`` over ``user``/``tool``), and any write
    marked model-written (``by=mcp``) over a record the person wrote, is stored, shadowed.
    Without anything to supersede the line is appended (memory.md is not rewritten); a
    superseding line takes the place of the last (in file order) line it supersedes, and one
    that leaves the old record in force goes right after it — under the same heading, not at
    the end of the file (:func:`_placed`, ``tests/test_supersede_place.py``).

    Args:
        text: the fact, one line. key: canonical key (e.g. ``deploy.region``). source: ``user``,
        ``tool`` (requires ``ref``), ``import``, ``reflect`` or another word. ``key``,
        ``source`` and ``by`` are written in their canonical spelling
        (:func:`talos.canon.canonical_name`: ``USER`` is ``user``). ref: source id.
        scope: namespace. observed: when the evidence was observed (the tag date; default
        today). valid_from/until: validity window. conf: confidence 0–1. by: the producer
        (``mcp``: a model over MCP, :data:`talos.trust.MODEL_BY`). authorized: the scopes
        the writer reads; a model-written record of a key the person holds in one of them
        is stored, shadowed (the view shadows it there, :func:`talos.trust.build_view`).

    Returns:
        A :class:`RememberResult`.

    Raises:
        InputError: empty text (newlines and other whitespace runs fold to one space, so
            the fact stays one line), a text longer than :data:`MAX_TEXT_CHARS`, a tag
            inside the text, a control or format character in the text or any value
            (:func:`check_value`), a bad source/key/scope, ``observed`` after tomorrow
            (evidence is not seen in the future), ``tool`` without ``ref``, ``conf``
            outside 0–1, ``until`` not after ``from``.
        filelock.Timeout, TalosError, OSError: the write could not happen (memory.md is
            unchanged).
    """
    if len(text) > MAX_TEXT_CHARS:  # before any work on it: a model sent 2,000,000
        raise InputError(
            f"the text is {len(text):,} characters long; a fact holds at most "
            f"{MAX_TEXT_CHARS:,} (store a long document as a skill, or split it into facts)"
        )
    text = " ".join(text.split())
    if unsafe_char(text) is not None:
        check_value("the text", text)
    if len(text.lstrip("-*# ").strip()) < MIN_FACT_CHARS:
        raise InputError(f"a fact needs at least {MIN_FACT_CHARS} characters of text: {text!r}")
    if "<!--" in text or "-->" in text:
        raise InputError("the text must not contain '<!--' or '-->' (it would break the tag)")
    for option, value in (
        ("--source", source),
        ("--key", key),
        ("--scope", scope),
        ("--ref", ref),
        ("--by", by),
    ):
        check_value(option, value)
    # one spelling per name (talos.canon): a model's "Editor" is the person's "editor", and
    # "--source USER" writes "user" (tests/test_key_authority.py)
    source = canonical_name(source)
    key = canonical_name(key) if key is not None else None
    by = canonical_name(by) if by is not None else None
    if not any(c.isspace() for c in scope):  # folded as every route folds it (talos.scopes)
        scope = canonical_name(scope)
    if not _SRC.fullmatch(source):
        raise InputError(f"--source must be one word (user, tool, reflect, import): {source!r}")
    if source == "tool" and not ref:
        raise InputError("--source tool requires --ref (the lookup that confirmed it)")
    for name, value in (("key", key), ("scope", scope)):
        if value is not None and not _KEY.fullmatch(value):
            raise InputError(f"--{name} may hold letters, digits and . _ - : / only: {value!r}")
    if conf is not None and not 0.0 <= conf <= 1.0:
        raise InputError(f"--conf must be between 0 and 1: {conf}")
    observed = observed or dt.date.today()
    if observed > dt.date.today() + dt.timedelta(days=1):  # a day of slack for time zones
        raise InputError(
            f"--observed {observed} is in the future; give the date the evidence was seen"
        )
    start = valid_from or observed
    if until is not None and until <= start:
        raise InputError(f"--until {until} must be after the start of validity {start}")
    fields: dict[str, str] = {"id": "r" + secrets.token_hex(5)}
    if key:
        fields["key"] = key
    if scope != "global":
        fields["scope"] = scope
    if valid_from:
        fields["from"] = valid_from.isoformat()
    if until:
        fields["until"] = until.isoformat()
    if ref:
        fields["ref"] = ref
    if conf is not None:
        fields["conf"] = f"{conf:g}"
    if by:
        fields["by"] = by
    mine = authority_of(source, fields)
    window = (start, until)

    def plan(data: bytes) -> tuple[_Change | None, RememberResult]:
        blobs = _split(data)
        doomed: list[_Record] = []
        kept_but_named: list[_Record] = []  # overlapping records in force outside our window
        status = "active"
        late_vs = ""
        for r in _keyed(blobs, key) if key else []:
            p = r.fact
            if not overlaps(window, window_of(p.fields, p.born)):
                continue
            if r.scope != scope:
                if r.scope in authorized and from_model(fields) and person_wrote(p.src, p.fields):
                    status = "shadowed"
                continue
            theirs = authority_of(p.src, p.fields)
            their_day = parse_day(p.born)
            if theirs > mine or (from_model(fields) and person_wrote(p.src, p.fields)):
                status = "shadowed"
            elif their_day is not None and their_day > observed:
                if theirs == mine:
                    late_vs = r.id
            elif covers(window, window_of(p.fields, p.born), dt.date.today()):
                doomed.append(r)
            else:
                kept_but_named.append(r)
        own = dict(fields)
        if late_vs:
            own["status"] = "superseded"
            own["superseded_by"] = late_vs
            new_line = format_fact_line(text, source, observed.isoformat(), own)
            entry = {
                "op": "history",
                "id": own["id"],
                "key": key,
                "scope": scope,
                "file": str(paths.memory_file),
                "before": None,
                "after": None,
                "line": new_line,
                "reason": f"late evidence: observed {observed}, before {late_vs}",
            }
            return _Change([entry]), RememberResult(own["id"], new_line, "history")
        named = doomed + kept_but_named
        if named:
            own["supersedes"] = ",".join(r.id for r in named)
        new_line = format_fact_line(text, source, observed.isoformat(), own)
        records = [
            _supersede_entry(paths, r, key or "", own["id"], f"superseded by {own['id']}")
            for r in doomed
        ]
        records.append(
            {
                "op": "remember",
                "id": own["id"],
                "key": key,
                "scope": scope,
                "file": str(paths.memory_file),
                "before": None,
                "after": new_line,
                "reason": f"remember ({source})",
            }
        )
        result = RememberResult(own["id"], new_line, status, [r.id for r in doomed])
        if not named:
            return _Change(records, append=new_line), result
        # beside the line it supersedes, under the same heading (not at the end of the file)
        at = max(r.idx for r in named)
        return _Change(records, data=_placed(data, {r.idx for r in doomed}, new_line, at)), result

    with memory_lock(paths):
        _settle(paths)
        return _apply(paths, plan)


def _as_active(line: str) -> str:
    """A history record's line as an active one: ``status=superseded`` and
    ``superseded_by=`` taken out of its *tag* only — the text is given back exactly (issue
    12.5: a fact whose text said ``status=superseded superseded_by=me`` lost those words)."""
    m = TAG.search(line)
    if m is None:
        return line
    tag = line[m.start() :]
    tag = tag.replace(" status=superseded", "")
    tag = re.sub(r" superseded_by=\S+", "", tag)
    return line[: m.start()] + tag


@dataclass(frozen=True, slots=True)
class Restored:
    """What :func:`restore` did: the ``line`` put back (for a skill: its path) and the ids of
    the records it ``superseded`` (its successors, issue 12.6)."""

    line: str
    superseded: tuple[str, ...] = ()


def restore(paths: Paths, rid: str, scopes: Sequence[str] | None = None) -> Restored:
    """Bring a record back (SPEC §7.6): the latest audited line of record ``rid``
    (forgotten, superseded, revoked, resolved away, or sent to history) is appended to
    memory.md — its text exactly as written; a history record becomes active, and the tag
    names in ``supersedes=`` the successors it takes back its place from in part only. A record
    talos wrote that vanished from memory.md by an outside edit (``talos doctor`` names it)
    comes back the same way.

    Undoing a supersede makes the record current again (issue 12.6), as :func:`remember`
    decides: the active records of its key and scope whose window overlaps its own and whose
    authority is not higher — its successors — are superseded by it (removed, audited,
    restorable) when its window covers the rest of theirs; one it covers in part (a one-week
    value restored over an open-ended one) stays in force outside that window and stops
    naming it in ``supersedes=`` (audited), while the restored record names it and wins
    inside. A model-written record never supersedes one the person wrote. A forgotten skill
    file is moved back from the trash instead.

    ``scopes``: when given, only records of these scopes can be restored; any other id reads
    as unknown (SPEC §7.7: no oracle on other scopes).

    Returns:
        A :class:`Restored`.

    Raises:
        InputError: no removed line with that id in the audit log, or it is already present.
    """
    with memory_lock(paths):
        _settle(paths)
        removed_line = None
        written_line = None
        op = ""
        trashed: dict[str, object] | None = None
        for e in audit.settled(paths.audit_file):
            if scopes is not None and audit.entry_scope(e) not in scopes:
                continue
            if e.get("id") != rid:
                continue
            if e.get("after"):
                if e.get("file") == str(paths.memory_file):
                    written_line, removed_line, trashed = str(e["after"]), None, None
                else:  # a skill restored back to its file
                    written_line, removed_line, trashed = None, None, None
                continue
            candidate = e.get("before") or e.get("line")
            if candidate and e.get("op") != "restore":
                removed_line, written_line, op = str(candidate), None, str(e.get("op"))
                trashed = e if op == "skill-forget" else None
        if trashed is not None:
            return Restored(_restore_skill(paths, rid, trashed))
        if removed_line is not None:
            line = _as_active(removed_line) if op == "history" else removed_line
            reason = f"restore after {op}"
            if op == "ack":  # a removal by hand that talos doctor --ack acknowledged
                reason = "restore after an outside edit removed it"
        elif written_line is not None:
            line, reason = written_line, "restore after an outside edit removed it"
        else:
            raise InputError(f"no removed line with id {rid!r} in {paths.audit_file}")
        mine = parse_fact_line(line)

        def plan(data: bytes) -> tuple[_Change | None, Restored]:
            blobs = _split(data)
            current = {(_decode(b) or "").rstrip("\r") for b in blobs}
            if line in current:
                raise InputError(f"record {rid} is already in {paths.memory_file}")
            at = _line_of(blobs, rid, scopes)
            if at:  # edited in place: a second line with its id made an unresolvable conflict
                raise InputError(
                    f"record {rid} is in {paths.memory_file} already (line {at}, edited outside "
                    "talos): nothing to restore"
                )
            entry = {
                "op": "restore",
                "id": rid,
                "scope": audit.entry_scope({"after": line}),
                "file": str(paths.memory_file),
                "before": None,
                "after": line,
                "reason": reason,
            }
            successors = _successors(blobs, mine, rid) if mine is not None else []
            if not successors:
                return _Change([entry], append=line), Restored(line)
            # As remember decides (issue 12.6): a successor whose future the restored
            # window covers is superseded; one it covers only in part (a one-week value
            # restored over today's open-ended one) stays in force outside that window, and
            # the restored record names it in supersedes= so that it wins inside (the
            # successor stops naming it back). Before, the one-week record took the
            # open-ended one's place for good: get today said not-yet-valid.
            assert mine is not None
            window = window_of(mine.fields, mine.born)
            today = dt.date.today()
            doomed = [
                r
                for r in successors
                if covers(window, window_of(r.fact.fields, r.fact.born), today)
            ]
            partial = [r for r in successors if r not in doomed]
            records = [
                _supersede_entry(
                    paths, r, r.fact.fields["key"], rid, f"superseded by restored {rid}"
                )
                for r in doomed
            ]
            now = line
            edits: dict[int, str] = {}
            if partial:
                named = [x for x in mine.fields.get("supersedes", "").split(",") if x]
                now = _with_field(
                    line, "supersedes", ",".join(dict.fromkeys([*named, *(r.id for r in partial)]))
                )
                entry["after"] = now
                for r in partial:
                    theirs = [x for x in r.fact.fields.get("supersedes", "").split(",") if x]
                    if rid in theirs:
                        edits[r.idx] = _with_field(
                            r.raw, "supersedes", ",".join(x for x in theirs if x != rid)
                        )
                        records.append(
                            {
                                "op": "restore",
                                "id": r.id,
                                "key": r.fact.fields["key"],
                                "scope": r.scope,
                                "file": str(paths.memory_file),
                                "line": r.idx + 1,
                                "before": r.raw,
                                "after": edits[r.idx],
                                "reason": f"gives way to restored {rid} inside its window",
                            }
                        )
            done = Restored(now, tuple(r.id for r in doomed))
            blobs_now = [_blob(edits[i], b) if i in edits else b for i, b in enumerate(blobs)]
            # where its successor is, under the same heading, as remember places it (undoing a
            # supersede gives the file back as it was)
            at = max(r.idx for r in successors)
            data_now = _placed(b"\n".join(blobs_now), {r.idx for r in doomed}, now, at)
            return _Change([*records, entry], data=data_now), done

        return _apply(paths, plan)


def acknowledge(paths: Paths, scopes: Collection[str] | None = None) -> list[audit.OutsideEdit]:
    """Record in the audit log that the person reviewed every outside edit of memory.md
    (``talos doctor --ack``): a record talos wrote and someone removed, edited or brought
    back by hand. One committed transaction of ``ack`` entries, one per edit, whose
    ``before``/``after`` are the line as the log had it and as memory.md has it now — so the
    log's replay (:func:`talos.audit.outside_edits`) agrees with the file from here on, and
    only later edits are findings again. Without it doctor warned forever about a line the
    person had deleted on purpose ("nothing, if you meant it"; a newcomer's report). A
    removed record stays restorable (``talos restore ID``). memory.md is not touched.

    Args:
        paths: the home's paths. scopes: only the edits of records of these scopes (a
            request's view, SPEC §7.3); ``None``: every scope's.

    Returns:
        The edits acknowledged, in the log's order ([] when there were none: nothing is
        written).

    Raises:
        filelock.Timeout: another writer held the lock for :data:`LOCK_TIMEOUT` seconds.
        OSError: the audit log cannot be read or written.
    """
    with memory_lock(paths):
        _settle(paths)
        edits = audit.outside_edits(paths.audit_file, paths.memory_file, scopes)
        if not edits:
            return []
        records = [
            {
                "op": "ack",
                "id": o.id,
                "scope": audit.entry_scope({"after": o.now, "before": o.was}),
                "file": str(paths.memory_file),
                "before": o.was,
                "after": o.now,
                "reason": f"outside edit ({o.kind}) acknowledged in talos doctor --ack",
            }
            for o in edits
        ]
        txn = audit.Txn(paths.audit_file)
        txn.prepare(records)
        txn.commit()
        return edits


def _with_field(line: str, name: str, value: str) -> str:
    """``line`` with its tag's ``name=`` field set to ``value`` (removed when empty); the
    text and the other fields are left exactly as they are."""
    m = TAG.search(line)
    if m is None:
        return line
    tag = re.sub(rf"\s+{re.escape(name)}=\S*?(?=\s|-->)", "", line[m.start() :])
    if value:
        tag = re.sub(r"\s*-->\s*$", f" {name}={value} -->", tag)
    return line[: m.start()] + tag


def _line_of(blobs: list[bytes], rid: str, scopes: Sequence[str] | None = None) -> int:
    """The 1-based line of the record whose id is ``rid`` (0 when there is none), among the
    records of ``scopes`` when given (a line of another scope is never named, SPEC §7.3)."""
    needle = rid.encode("utf-8", "surrogateescape")
    for no, blob in enumerate(blobs, 1):
        line = _decode(blob) if needle in blob else None  # an ``L`` id is a hash: never in it
        p = parse_fact_line(line) if line is not None else None
        if (
            line is not None
            and p is not None
            and derived_id(p.fields, line.rstrip("\r")) == rid
            and (scopes is None or p.fields.get("scope", "global") in scopes)
        ):
            return no
    return 0


def _successors(blobs: list[bytes], mine: ParsedFact, rid: str) -> list[_Record]:
    """The records a restored record ``mine`` takes back its place from: active, same key and
    scope, an overlapping window, authority not higher (and not the person's own record when
    ``mine`` is model-written)."""
    key = mine.fields.get("key")
    if not key:
        return []
    scope = mine.fields.get("scope", "global")
    rank = authority_of(mine.src, mine.fields)
    window = window_of(mine.fields, mine.born)
    out = []
    for r in _keyed(blobs, key):
        p = r.fact
        if (
            r.id == rid
            or r.scope != scope
            or authority_of(p.src, p.fields) > rank
            or (from_model(mine.fields) and person_wrote(p.src, p.fields))
            or not overlaps(window, window_of(p.fields, p.born))
        ):
            continue
        out.append(r)
    return out


def skill_id(skill: Path) -> str:
    """The record id of a skill file moved to the trash: ``S`` + 9 hex digits of its path."""
    return "S" + line_id(str(skill))[:9]


def _restore_skill(paths: Paths, rid: str, entry: dict[str, object]) -> str:
    """Move a forgotten skill back from the trash (lock held by the caller)."""
    original, trash = Path(str(entry.get("before"))), Path(str(entry.get("trash")))
    if original.exists():
        raise InputError(f"{original} exists already; move it away first to restore {rid}")
    if not trash.is_file():
        raise InputError(f"{trash} is gone; skill {rid} cannot be restored")
    txn = audit.Txn(paths.audit_file)
    txn.prepare(
        [
            {
                "op": "restore",
                "id": rid,
                "scope": audit.entry_scope(entry),
                "file": str(original),
                "before": None,
                "after": str(original),
                "reason": "restore after skill-forget",
            }
        ]
    )
    original.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(trash), original)
    txn.commit()
    return str(original)


def trash_skill(paths: Paths, skill: Path, reason: str, scope: str = "global") -> Path:
    """Move a skill file to ``<state>/trash/`` (never a plain delete), audited (SPEC §6.5).
    ``scope`` is the skill's (its ``scope:``): the entry is shown, and the file restored, only
    for that scope (SPEC §7.3; without it ``history --scope global`` listed a beta skill).

    Returns:
        The new location (``talos restore ID`` moves it back).
    """
    with memory_lock(paths):
        _settle(paths)  # every write settles what a killed writer left before its own
        trash = paths.state_dir / "trash"
        trash.mkdir(parents=True, exist_ok=True)
        rid = skill_id(skill)
        # a NAME/SKILL.md goes as NAME-SKILL.md: the trash tells one skill folder's from another's
        name = f"{skill.parent.name}-{skill.name}" if skill.name == "SKILL.md" else skill.name
        dest = trash / f"{rid}-{name}"
        txn = audit.Txn(paths.audit_file)
        txn.prepare(
            [
                {
                    "op": "skill-forget",
                    "id": rid,
                    "scope": scope,
                    "file": str(skill),
                    "before": str(skill),
                    "after": None,
                    "trash": str(dest),
                    "reason": reason,
                }
            ]
        )
        os.makedirs(dest.parent, exist_ok=True)
        shutil.move(str(skill), dest)
        txn.commit()
        return dest
