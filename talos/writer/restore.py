"""Writes decided from the audit log: ``talos restore`` (design §7.6), the acknowledgement of
outside edits (``talos doctor --ack``, audit log only), and a skill file's way to the trash
and back (design §6.5).

Each takes the home's memory lock and changes memory.md as :mod:`talos.writer.txn` does
(decided on the file as it is now, replaced only if unchanged, audited).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from talos.errors import InputError
from talos.home import Paths
from talos.model import line_id
from talos.sources.facts import TAG, ParsedFact, parse_fact_line
from talos.view.trust import (
    authority_of,
    covers,
    derived_id,
    from_model,
    overlaps,
    person_wrote,
    window_of,
)
from talos.writer import audit
from talos.writer.logs import Log, migrate, where
from talos.writer.txn import (
    Change,
    Record,
    apply_change,
    decode_line,
    dressed,
    keyed,
    line_bytes,
    memory_lock,
    placed,
    settle,
    split_lines,
    supersede_entry,
)

__all__ = ["Restored", "acknowledge", "restore", "skill_id", "trash_skill"]


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
    """Bring a record back (design §7.6): the latest audited line of record ``rid``
    (forgotten, superseded, revoked, resolved away, or sent to history) is appended to
    memory.md — its text exactly as written; a history record becomes active, and the tag
    names in ``supersedes=`` the successors it takes back its place from in part only. A record
    talos wrote that vanished from memory.md by an outside edit (``talos doctor`` names it)
    comes back the same way.

    Undoing a supersede makes the record current again (issue 12.6), as
    :func:`talos.writer.edits.remember` decides: the active records of its key and scope whose
    window overlaps its own and whose authority is not higher — its successors — are
    superseded by it (removed, audited, restorable) when its window covers the rest of
    theirs; one it covers in part (a one-week value restored over an open-ended one) stays in
    force outside that window and stops naming it in ``supersedes=`` (audited), while the
    restored record names it and wins inside. A model-written record never supersedes one
    the person wrote. A forgotten skill file is moved back from the trash instead.

    ``scopes``: when given, only records of these scopes can be restored; any other id reads
    as unknown (design §7.7: no oracle on other scopes).

    Returns:
        A :class:`Restored`.

    Raises:
        InputError: no removed line with that id in the audit log, or it is already present.
    """
    with memory_lock(paths):
        settle(paths)
        removed_line = None
        written_line = None
        op = ""
        trashed: dict[str, object] | None = None
        undoes: list[str] = []  # every forget of it this device knows of (design §12.3)
        for e in audit.settled(paths):
            if scopes is not None and audit.entry_scope(e) not in scopes:
                continue
            if e.get("id") != rid:
                continue
            if e.get("op") in ("forget", "skill-forget") and isinstance(e.get("txn"), str):
                undoes.append(e["txn"])
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
            return Restored(_restore_skill(paths, rid, trashed, undoes))
        if removed_line is not None:
            line = _as_active(removed_line) if op == "history" else removed_line
            reason = f"restore after {op}"
            if op == "ack":  # a removal by hand that talos doctor --ack acknowledged
                reason = "restore after an outside edit removed it"
        elif written_line is not None:
            line, reason = written_line, "restore after an outside edit removed it"
        else:
            raise InputError(f"no removed line with id {rid!r} in {where(paths)}")
        mine = parse_fact_line(line)

        def plan(data: bytes) -> tuple[Change | None, Restored]:
            blobs = split_lines(data)
            current = {(decode_line(b) or "").rstrip("\r") for b in blobs}
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
                "undoes": undoes,
            }
            successors = _successors(blobs, mine, rid) if mine is not None else []
            if not successors:
                return Change([entry], append=line), Restored(line)
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
                supersede_entry(
                    paths, r, r.fact.fields["key"], rid, f"superseded by restored {rid}"
                )
                for r in doomed
            ]
            # where its successor is, under the same heading, and as it stands there, as
            # remember places it (undoing a supersede gives the file back as it was)
            anchor = max(successors, key=lambda r: r.idx)
            now = dressed(line, anchor.raw)
            edits: dict[int, str] = {}
            if partial:
                named = [x for x in mine.fields.get("supersedes", "").split(",") if x]
                now = _with_field(
                    now, "supersedes", ",".join(dict.fromkeys([*named, *(r.id for r in partial)]))
                )
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
            entry["after"] = now
            done = Restored(now, tuple(r.id for r in doomed))
            blobs_now = [line_bytes(edits[i], b) if i in edits else b for i, b in enumerate(blobs)]
            data_now = placed(b"\n".join(blobs_now), {r.idx for r in doomed}, now, anchor.idx)
            return Change([*records, entry], data=data_now), done

        return apply_change(paths, plan)


def acknowledge(paths: Paths, scopes: Collection[str] | None = None) -> list[audit.OutsideEdit]:
    """Record in the audit log that the person reviewed every outside edit of memory.md
    (``talos doctor --ack``): a record talos wrote and someone removed, edited or brought
    back by hand. One committed transaction of ``ack`` entries, one per edit, whose
    ``before``/``after`` are the line as the log had it and as memory.md has it now — so the
    log's replay (:func:`talos.writer.audit.outside_edits`) agrees with the file from here on, and
    only later edits are findings again. Without it doctor warned forever about a line the
    person had deleted on purpose ("nothing, if you meant it"; a newcomer's report). A
    removed record stays restorable (``talos restore ID``). memory.md is not touched.

    Each entry is filed under the scope of the record's last entry, the one the edit was
    reviewed under — not the scope its line names now: an edit of ``scope=project:a`` to
    ``project:b`` acknowledged under ``--scope project:a`` was found again by every later
    doctor of that scope (``tests/test_doctor_ack.py``). Two things no later write would ever
    settle are settled too: a transaction left open in the middle of the log (its commit line
    unreadable) is committed or aborted by what memory.md holds, and the log's unreadable
    lines are acknowledged in an ``ack`` entry of their numbers (``unreadable``) and of the log
    they are in (``log``: a device id or ``legacy``; any device's log, design §9), so they are
    no longer warned about (:func:`talos.writer.audit.entries`). Everything is appended to
    this device's log; only its own transactions are settled.

    Args:
        paths: the home's paths. scopes: only the edits of records of these scopes (a
            request's view, design §7.3); ``None``: every scope's.

    Returns:
        The edits acknowledged, in the log's order, then the unreadable lines (kind
        ``unreadable``); [] when there were none: nothing is written.

    Raises:
        filelock.Timeout: another writer held the lock for :data:`LOCK_TIMEOUT` seconds.
        OSError: the audit log cannot be read or written.
    """
    with memory_lock(paths):
        # every write settles a transaction left open at the log's end only
        migrate(paths, locked=True)
        audit.recover(paths.audit_file, paths.memory_file, everywhere=True)
        edits = audit.outside_edits(paths, paths.memory_file, scopes)
        records: list[dict[str, Any]] = [
            {
                "op": "ack",
                "id": o.id,
                "scope": o.scope,
                "file": str(paths.memory_file),
                "before": o.was,
                "after": o.now,
                "reason": f"outside edit ({o.kind}) acknowledged in talos doctor --ack",
            }
            for o in edits
        ]
        damaged: dict[Log, list[int]] = {}
        for log, no in audit.unreadable(paths, scopes):
            damaged.setdefault(log, []).append(no)
        for log, lines in damaged.items():  # one ack per log, naming it (design §9)
            records.append(
                {
                    "op": "ack",
                    "file": str(log.path),
                    "log": log.name,
                    "unreadable": lines,
                    "reason": "unreadable audit log lines acknowledged in talos doctor --ack",
                }
            )
            edits += [
                audit.OutsideEdit(
                    "unreadable",
                    "",
                    no,
                    f"{log.path}:{no}: unreadable audit entry",
                    log=str(log.path),
                )
                for no in lines
            ]
        if not records:
            return []
        txn = audit.Txn(paths)
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
    records of ``scopes`` when given (a line of another scope is never named, design §7.3)."""
    needle = rid.encode("utf-8", "surrogateescape")
    for no, blob in enumerate(blobs, 1):
        line = decode_line(blob) if needle in blob else None  # an ``L`` id is a hash: never in it
        p = parse_fact_line(line) if line is not None else None
        if (
            line is not None
            and p is not None
            and derived_id(p.fields, line.rstrip("\r")) == rid
            and (scopes is None or p.fields.get("scope", "global") in scopes)
        ):
            return no
    return 0


def _successors(blobs: list[bytes], mine: ParsedFact, rid: str) -> list[Record]:
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
    for r in keyed(blobs, key):
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


def _restore_skill(
    paths: Paths, rid: str, entry: dict[str, object], undoes: list[str] | None = None
) -> str:
    """Move a forgotten skill back from the trash (lock held by the caller); ``undoes``: the
    transactions of the forgets it lifts (:func:`talos.writer.audit.tombstones`)."""
    original, trash = Path(str(entry.get("before"))), Path(str(entry.get("trash")))
    if not (_inside(original, paths.skills_dir) and _inside(trash, paths.state_dir / "trash")):
        # the log travels with the home (design §12.1): another device's entry named a place
        # out of the home and one of its files as the trash copy, and restore moved it out
        raise InputError(
            f"skill {rid}'s audit entry names {original} and {trash}, outside this home's "
            f"skills folder and trash ({paths.skills_dir}, {paths.state_dir / 'trash'}): "
            "not restored"
        )
    if original.exists():
        raise InputError(f"{original} exists already; move it away first to restore {rid}")
    if not trash.is_file():
        raise InputError(f"{trash} is gone; skill {rid} cannot be restored")
    txn = audit.Txn(paths)
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
                "undoes": undoes or [],
            }
        ]
    )
    original.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(trash), original)
    txn.commit()
    return str(original)


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` (its folders' links followed, ``..`` resolved) is inside ``folder``."""
    where = os.path.realpath(path.parent)
    top = os.path.realpath(folder)
    return where == top or where.startswith(top.rstrip(os.sep) + os.sep)


def trash_skill(paths: Paths, skill: Path, reason: str, scope: str = "global") -> Path:
    """Move a skill file to ``<state>/trash/`` (never a plain delete), audited (design §6.5).
    ``scope`` is the skill's (its ``scope:``): the entry is shown, and the file restored, only
    for that scope (design §7.3; without it ``history --scope global`` listed a beta skill).

    Returns:
        The new location (``talos restore ID`` moves it back).
    """
    with memory_lock(paths):
        settle(paths)  # every write settles what a killed writer left before its own
        trash = paths.state_dir / "trash"
        trash.mkdir(parents=True, exist_ok=True)
        rid = skill_id(skill)
        # a NAME/SKILL.md goes as NAME-SKILL.md: the trash tells one skill folder's from another's
        name = f"{skill.parent.name}-{skill.name}" if skill.name == "SKILL.md" else skill.name
        dest = trash / f"{rid}-{name}"
        txn = audit.Txn(paths)
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
