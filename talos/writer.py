"""Writes to a home: remember, forget, resolve, revoke, restore (SPEC §6.5, §7.5, §7.6).

Every write takes the home's memory lock (``filelock``, flock-based: a dead holder releases
it), settles any transaction a killed writer left (:func:`talos.audit.recover`), appends its
entries to the audit log as *prepared*, replaces memory.md atomically (:mod:`talos.fsutil`),
then commits. Lines that are not valid UTF-8 are carried over byte for byte: no line a person
wrote is ever lost.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import filelock

from talos import audit
from talos.errors import InputError
from talos.fsutil import atomic_write_bytes, lock
from talos.home import Paths
from talos.model import line_id
from talos.sources.facts import MIN_FACT_CHARS, ParsedFact, parse_fact_line, read_memory
from talos.trust import authority_of, derived_id, parse_day

__all__ = [
    "FIELD_ORDER",
    "LOCK_TIMEOUT",
    "RememberResult",
    "RemovedLine",
    "format_fact_line",
    "format_tag",
    "line_id",
    "memory_lock",
    "remember",
    "remove_fact_lines",
    "restore",
]

#: Seconds to wait for another process's write before giving up with an error.
LOCK_TIMEOUT = 60.0
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
_SRC = re.compile(r"^\w+$")
_KEY = re.compile(r"^[\w.\-:/]+$")


@dataclass(frozen=True, slots=True)
class RemovedLine:
    """A line taken out of memory.md: its 1-based number, exact text and record id."""

    line: int
    raw: str
    id: str


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


def _split(data: bytes) -> list[bytes]:
    return data.split(b"\n") if data else []


def _decode(blob: bytes) -> str | None:
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _rewrite(paths: Paths, kept: list[bytes], append_lines: Iterable[str] = ()) -> None:
    extra = [ln.encode("utf-8") for ln in append_lines]
    if extra:
        while kept and kept[-1].strip() == b"":
            kept.pop()
        kept = [*kept, *extra, b""]
    # Write through a symlinked memory.md (a dotfiles repo): replacing the link itself would
    # leave the person's real file behind (tests/test_trust.py, symlink test).
    atomic_write_bytes(paths.memory_file.resolve(), b"\n".join(kept))


def _settle(paths: Paths) -> None:
    """Clean up after a writer that was killed (call with the memory lock held): settle its
    audit transaction and delete the temp files it left beside memory.md (under the lock no
    other writer is active, so every ``.memory.md.*.tmp`` is stale; 50 SIGKILLs left 11 of
    them in a person's home — ``tests/test_crash.py``)."""
    audit.recover(paths.audit_file, paths.memory_file)
    mf = paths.memory_file.resolve()
    try:
        stale = list(mf.parent.glob(f".{glob.escape(mf.name)}.*.tmp"))
    except OSError:
        return
    for tmp in stale:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _read(paths: Paths) -> bytes:
    try:
        return read_memory(paths.memory_file)  # a regular file only, bounded (issue 12.3)
    except FileNotFoundError:
        return b""


def remove_fact_lines(
    paths: Paths,
    doomed: Callable[[ParsedFact, str], bool],
    op: str,
    reason: str,
) -> list[RemovedLine]:
    """Remove every memory.md line whose parsed fact satisfies ``doomed``, audited.

    Args:
        paths: the home's paths.
        doomed: decides per ``(parsed line, exact line)``; undecodable and non-fact lines are
            always kept.
        op: the audit operation (``forget``, ``revoke``, ``resolve``).
        reason: why, for the audit log.

    Returns:
        The removed lines in file order ([] when none matched; the file is then untouched).

    Raises:
        filelock.Timeout: another writer held the lock for :data:`LOCK_TIMEOUT` seconds.
        OSError: the audit log or memory.md cannot be written (memory.md is then unchanged).
    """
    with memory_lock(paths):
        _settle(paths)
        kept: list[bytes] = []
        removed: list[tuple[RemovedLine, ParsedFact]] = []
        for no, blob in enumerate(_split(_read(paths)), 1):
            line = _decode(blob)
            parsed = parse_fact_line(line) if line is not None else None
            raw = line.rstrip("\r") if line is not None else ""
            if parsed is not None and doomed(parsed, raw):
                removed.append((RemovedLine(no, raw, derived_id(parsed.fields, raw)), parsed))
            else:
                kept.append(blob)
        if not removed:
            return []
        txn = audit.Txn(paths.audit_file)
        txn.prepare(
            [
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
        )
        _rewrite(paths, kept)
        txn.commit()
        return [r for r, _ in removed]


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
) -> RememberResult:
    """Append a tagged fact, atomically and under the lock (SPEC §7.5).

    With a ``key``, the new record supersedes the active records of the same key and scope
    whose authority is not higher *and* whose observed date is not newer: they are removed
    from memory.md (audited, restorable) and the new line records ``supersedes=``. Evidence
    that arrives late (observed before an active record of equal authority) never replaces it:
    it goes straight to history (the audit log). A lower-authority write (``reflect`` over
    ``user``/``tool``) is stored, shadowed.

    Args:
        text: the fact, one line. key: canonical key (e.g. ``deploy.region``). source: ``user``,
        ``tool`` (requires ``ref``), ``import``, ``reflect`` or another word. ref: source id.
        scope: namespace. observed: when the evidence was observed (the tag date; default
        today). valid_from/until: validity window. conf: confidence 0–1. by: the producer.

    Returns:
        A :class:`RememberResult`.

    Raises:
        InputError: empty text (newlines and other whitespace runs fold to one space, so
            the fact stays one line), a tag inside the text, a bad source/key/scope,
            ``observed`` after tomorrow (evidence is not seen in the future),
            ``tool`` without ``ref``, ``conf`` outside 0–1, ``until`` not after ``from``.
        filelock.Timeout, OSError: the write could not happen (memory.md is unchanged).
    """
    text = " ".join(text.split())
    if len(text.lstrip("-*# ").strip()) < MIN_FACT_CHARS:
        raise InputError(f"a fact needs at least {MIN_FACT_CHARS} characters of text: {text!r}")
    if "<!--" in text or "-->" in text:
        raise InputError("the text must not contain '<!--' or '-->' (it would break the tag)")
    if not _SRC.match(source):
        raise InputError(f"--source must be one word (user, tool, reflect, import): {source!r}")
    if source == "tool" and not ref:
        raise InputError("--source tool requires --ref (the lookup that confirmed it)")
    for name, value in (("key", key), ("scope", scope)):
        if value is not None and not _KEY.match(value):
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

    with memory_lock(paths):
        _settle(paths)
        blobs = _split(_read(paths))
        doomed: dict[int, tuple[str, str]] = {}  # line index -> (id, raw)
        status = "active"
        late_vs = ""
        if key:
            for idx, blob in enumerate(blobs):
                line = _decode(blob)
                p = parse_fact_line(line) if line is not None else None
                if (
                    line is None
                    or p is None
                    or p.fields.get("key") != key
                    or p.fields.get("scope", "global") != scope
                    or p.fields.get("status", "active") != "active"
                ):
                    continue
                theirs = authority_of(p.src, p.fields)
                their_day = parse_day(p.born)
                rid = derived_id(p.fields, line.rstrip("\r"))
                if theirs > mine:
                    status = "shadowed"
                elif their_day is not None and their_day > observed:
                    if theirs == mine:
                        late_vs = rid
                else:
                    doomed[idx] = (rid, line.rstrip("\r"))
        if late_vs:
            fields["status"] = "superseded"
            fields["superseded_by"] = late_vs
            new_line = format_fact_line(text, source, observed.isoformat(), fields)
            txn = audit.Txn(paths.audit_file)
            txn.prepare(
                [
                    {
                        "op": "history",
                        "id": fields["id"],
                        "key": key,
                        "scope": scope,
                        "file": str(paths.memory_file),
                        "before": None,
                        "after": None,
                        "line": new_line,
                        "reason": f"late evidence: observed {observed}, before {late_vs}",
                    }
                ]
            )
            txn.commit()
            return RememberResult(fields["id"], new_line, "history")
        if doomed:
            fields["supersedes"] = ",".join(rid for rid, _ in doomed.values())
        new_line = format_fact_line(text, source, observed.isoformat(), fields)
        txn = audit.Txn(paths.audit_file)
        records = [
            {
                "op": "supersede",
                "id": rid,
                "key": key,
                "scope": scope,
                "file": str(paths.memory_file),
                "line": idx + 1,
                "before": raw,
                "after": None,
                "superseded_by": fields["id"],
                "reason": f"superseded by {fields['id']}",
            }
            for idx, (rid, raw) in doomed.items()
        ]
        records.append(
            {
                "op": "remember",
                "id": fields["id"],
                "key": key,
                "scope": scope,
                "file": str(paths.memory_file),
                "before": None,
                "after": new_line,
                "reason": f"remember ({source})",
            }
        )
        txn.prepare(records)
        kept = [b for i, b in enumerate(blobs) if i not in doomed]
        _rewrite(paths, kept, [new_line])
        txn.commit()
        return RememberResult(fields["id"], new_line, status, [rid for rid, _ in doomed.values()])


def restore(paths: Paths, rid: str, scopes: Sequence[str] | None = None) -> str:
    """Bring a removed line back (SPEC §7.6): the latest audited line of record ``rid``
    (forgotten, superseded, revoked, resolved away, or sent to history) is appended to
    memory.md — as written, except that a history record becomes active.

    A forgotten skill file is moved back from the trash instead.

    ``scopes``: when given, only records of these scopes can be restored; any other id reads
    as unknown (SPEC §7.7: no oracle on other scopes).

    Returns:
        The restored line (for a skill: its path).

    Raises:
        InputError: no removed line with that id in the audit log, or it is already present.
    """
    with memory_lock(paths):
        _settle(paths)
        line = None
        op = ""
        trashed: dict[str, object] | None = None
        for e in audit.settled(paths.audit_file):
            if scopes is not None and audit.entry_scope(e) not in scopes:
                continue
            if e.get("id") == rid and e.get("op") != "restore":
                candidate = e.get("before") or e.get("line")
                if candidate and not e.get("after"):
                    line, op = candidate, str(e.get("op"))
                    trashed = e if op == "skill-forget" else None
        if trashed is not None:
            return _restore_skill(paths, rid, trashed)
        if line is None:
            raise InputError(f"no removed line with id {rid!r} in {paths.audit_file}")
        if op == "history":
            line = line.replace(" status=superseded", "")
            line = re.sub(r" superseded_by=\S+", "", line)
        current = {(_decode(b) or "").rstrip("\r") for b in _split(_read(paths))}
        if line in current:
            raise InputError(f"record {rid} is already in {paths.memory_file}")
        txn = audit.Txn(paths.audit_file)
        txn.prepare(
            [
                {
                    "op": "restore",
                    "id": rid,
                    "scope": audit.entry_scope({"after": line}),
                    "file": str(paths.memory_file),
                    "before": None,
                    "after": line,
                    "reason": f"restore after {op}",
                }
            ]
        )
        _rewrite(paths, _split(_read(paths)), [line])
        txn.commit()
        return line


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
        rid = "S" + line_id(str(skill))[:9]
        dest = trash / f"{rid}-{skill.name}"
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
