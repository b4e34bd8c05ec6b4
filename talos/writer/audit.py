"""The append-only audit log of every write (design §7.6).

Each write is one transaction: its entries are appended with ``"state": "prepared"`` *before*
memory.md is replaced, then one ``{"op": "commit"}`` line after. A kill between the two leaves
a prepared transaction that :func:`recover` settles on the next write (the rename is atomic, so
the file shows either all of it or none of it): it appends ``commit`` or ``abort``. So a line is
never removed without a record from which it can be restored.

Entry fields: ``t`` (Unix seconds), ``txn``, ``op`` (remember, supersede, history, forget,
resolve, revoke, restore, skill-forget; ack: an outside edit the person reviewed, memory.md
unchanged, or with ``unreadable``, the numbers of lines that cannot be read of the log its
``log`` field names — a device id or ``legacy``; without it, the log it is in),
``id`` (record id), ``key``, ``scope``, ``file``,
``before``/``after`` (the full line before/after; ``None`` for none), ``reason``; a
``restore`` has ``undoes``, the transactions of the forgets of the record it lifts; a line
appended without rewriting memory.md has ``offset`` (the file's size when it was prepared). A
transaction that found memory.md changed by someone else before its swap ends in ``abort``.

Each device writes its own log (:attr:`talos.home.Paths.audit_file`, design §9) and settles
only that one; a reader given a home's :class:`Paths` reads every device's log merged, its
paths made this home's (:mod:`talos.writer.logs`); given one file, that file alone.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from talos.fsutil import json_value, open_append, open_regular
from talos.home import Paths
from talos.sources.facts import parse_fact_line, read_memory
from talos.sources.skills import skill_scopes
from talos.sync.device import describe
from talos.text import cut, json_dumps
from talos.view.canon import canonical_name
from talos.writer.logs import (
    Log,
    Read,
    logs,
    merged,
    note_written,
    read,
    single,
    unacknowledged,
)

__all__ = [
    "OutsideEdit",
    "Source",
    "Tombstone",
    "Txn",
    "append",
    "entries",
    "entry_scope",
    "outside_edits",
    "recover",
    "settled",
    "tombstones",
    "unreadable",
    "verify",
]


def append(path: Path, records: list[dict[str, Any]]) -> None:
    """Append records to the log, one JSON line each, in one write, fsynced.

    Raises:
        OSError: the log cannot be written (the caller must then not change memory.md).
    """
    if not records:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    # json_dumps: control/format characters of a line as escapes (and a lone surrogate of a
    # file name cannot make the encode fail)
    data = "".join(json_dumps(r) + "\n" for r in records).encode("utf-8")
    fd = open_append(path, readable=True)  # a regular file only (issue 12.3)
    size = -1
    try:
        # A SIGKILL can cut a write of more than a page short (tests/test_crash.py saw it),
        # leaving a torn last line. Appending right after it would glue our first entry onto
        # the fragment and make it unreadable — a removed line with no record to restore it
        # from. So start on a fresh line, and write until everything is out.
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        rest = memoryview(data)
        while rest:
            rest = rest[os.write(fd, rest) :]
        os.fsync(fd)
    except OSError as e:
        # A full disk: take back what part of the entries was written, so no torn entry is
        # left to glue onto, and name the log (os.write does not; issue 12 item 4).
        if size >= 0:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
        e.filename = e.filename or str(path)
        raise
    finally:
        os.close(fd)


#: Where a reader finds the log: one file (read alone, as this device's log), or a home's
#: :class:`Paths` (every device's log merged, :mod:`talos.writer.logs`).
Source = Path | Paths


def _logs(source: Source) -> list[Log]:
    return logs(source) if isinstance(source, Paths) else [single(source)]


def _read(source: Source) -> list[Read]:
    return read(_logs(source))


def entries(source: Source) -> Iterator[dict[str, Any]]:
    """Every well-formed entry, merged from every log of ``source`` by time, each log in its
    own order (:func:`talos.writer.logs.merged`); another device's paths made this home's. A
    torn last line (a kill mid-append) is skipped.

    Another line that cannot be read is skipped and warned about (``file:line``) — unless
    ``talos doctor --ack`` acknowledged it (an ``ack`` entry's ``unreadable`` line numbers, of
    the log its ``log`` field names, :func:`unreadable`): talos never rewrites a log, so that
    warning came back on every read, with nothing left to do about it.

    Raises:
        OSError: a log cannot be read. InputError: ``TALOS_DEVICE`` is invalid.
    """
    for _log, e in merged((r.log, r.entries) for r in _read(source)):
        yield e


def unreadable(source: Source, scopes: Collection[str] | None = None) -> list[tuple[Log, int]]:
    """The 1-based lines of the logs of ``source`` that cannot be read and were not
    acknowledged yet (a torn last line aside: the next write starts after it), each with its
    log, of the lines a request authorized for ``scopes`` is told of
    (:func:`talos.warn.audible`; ``None``: all)."""
    done = read(_logs(source), warning=False)
    named = {id(r): dict(r.damaged) for r in done}  # per line: a dict per log, not per line
    return [
        (r.log, no)
        for r, no in unacknowledged(done)
        if scopes is None or named[id(r)][no] <= set(scopes)
    ]


class Txn:
    """One audited write: ``prepare`` its entries, change the file, then ``commit``.

    ``target``: a home's :class:`Paths` — the transaction goes to this device's log
    (:attr:`Paths.audit_file`, design §9), whose folder is described (``device.json``,
    :func:`talos.sync.device.describe`) on the first prepare, so other devices can map its
    paths — or one log file (a test's).

    Raises:
        InputError: ``TALOS_DEVICE`` cannot name a device.
    """

    def __init__(self, target: Path | Paths) -> None:
        self.home = target.home if isinstance(target, Paths) else None
        self.paths = target if isinstance(target, Paths) else None
        self.path = target.audit_file if isinstance(target, Paths) else target
        self.id = time.strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)
        self.t = int(time.time())

    def prepare(self, records: list[dict[str, Any]]) -> None:
        """Append the transaction's entries (state ``prepared``).

        Raises:
            OSError: the log cannot be written (nothing of it is left in the log).
        """
        if self.home is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            describe(self.path.parent, self.home)
        append(
            self.path,
            [{"t": self.t, "txn": self.id, **r, "state": "prepared"} for r in records],
        )
        self._noted()

    def commit(self) -> None:
        """Mark the transaction applied."""
        append(self.path, [{"t": int(time.time()), "txn": self.id, "op": "commit"}])
        self._noted()

    def abort(self, reason: str) -> None:
        """Mark the transaction not applied (memory.md was left as it was), with why."""
        append(
            self.path, [{"t": int(time.time()), "txn": self.id, "op": "abort", "reason": reason}]
        )
        self._noted()

    def _noted(self) -> None:
        """This machine's note of how far its log is written (:func:`logs.note_written`)."""
        if self.paths is not None:
            note_written(self.paths, self.path)


def entry_scope(entry: dict[str, Any]) -> str:
    """The scope an entry belongs to: its ``scope`` field, else the scope of the line it
    carries (older ``restore`` entries had none), else — for a skill file forgotten or
    restored before entries carried one — the ``scope:`` in the frontmatter of the file (in
    the trash or back in place), else ``global``. Readers show an entry only to callers
    authorized for its scope (design §7.3: no oracle on other scopes)."""
    scope = entry.get("scope")
    if isinstance(scope, str) and scope:
        return canonical_name(
            scope
        )  # entries written before scopes were folded (talos.view.scopes)
    if entry.get("op") == "skill-forget" or entry.get("reason") == "restore after skill-forget":
        for name in ("trash", "after", "before"):
            where = entry.get(name)
            if isinstance(where, str) and where:
                path = Path(where)
                if path.is_file():
                    return next(iter(skill_scopes(path)))
        return "global"
    for name in ("after", "before", "line"):
        text = entry.get(name)
        parsed = parse_fact_line(text) if isinstance(text, str) else None
        if parsed is not None and parsed.fields.get("scope"):
            return parsed.fields["scope"]
    return "global"


def _line_present(lines: set[str], line: str | None) -> bool:
    return line is not None and line in lines


def settled(source: Source) -> list[dict[str, Any]]:
    """Entries of committed transactions only (aborted and pending ones left out), merged
    from every log of ``source`` in the order of :func:`entries`. A transaction is settled in
    its own log: its ``commit`` is where its prepared entries are (the device that wrote
    them). A transaction found in two logs (one home's legacy log carried into two devices'
    logs by two machines) is read from the first only."""
    return [e for _log, e in _settled(_read(source))]


def _settled(done: list[Read]) -> Iterator[tuple[Log, dict[str, Any]]]:
    seen: set[str] = set()
    per_log = []
    for r in done:
        committed = {str(e.get("txn")) for _no, e in r.entries if e.get("op") == "commit"}
        fresh = committed - seen
        seen |= committed
        per_log.append(
            (
                r.log,
                [
                    (no, e)
                    for no, e in r.entries
                    if e.get("state") == "prepared" and str(e.get("txn")) in fresh
                ],
            )
        )
    return merged(per_log)


#: How much of the log's end :func:`recover` reads before falling back to a full scan.
TAIL_BYTES = 1 << 16


def _open_tail(path: Path) -> dict[str, list[dict[str, Any]]] | None:
    """The transaction left open at the end of the log, read from its last :data:`TAIL_BYTES`.

    Every write settles open transactions before appending its own, under the memory lock, so
    only the last transaction can be open: a log ending in ``commit``/``abort`` has none. This
    keeps a write's cost independent of the log's length. Returns ``{txn: entries}`` (empty
    when nothing is open), or ``None`` when the tail cannot tell (a transaction larger than
    the window): then the caller scans the whole log.
    """
    try:
        size = path.stat().st_size
        with open_regular(path) as f:
            f.seek(max(0, size - TAIL_BYTES))
            chunk = f.read()
    except FileNotFoundError:
        return {}
    blobs = chunk.split(b"\n")
    if size > TAIL_BYTES:
        blobs = blobs[1:]  # the first piece may start mid-line
    parsed: list[dict[str, Any]] = []
    for blob in blobs:
        try:
            rec = json_value(blob.decode("utf-8"))
        except ValueError:
            continue  # a torn line (a kill mid-append) carries nothing usable
        if isinstance(rec, dict):
            parsed.append(rec)
    if not parsed:
        return {} if size <= TAIL_BYTES else None
    last = parsed[-1]
    if last.get("op") in ("commit", "abort") or last.get("state") != "prepared":
        return {}
    txn = str(last.get("txn"))
    group: list[dict[str, Any]] = []
    for rec in reversed(parsed):
        if str(rec.get("txn")) != txn:
            return {txn: list(reversed(group))}
        group.append(rec)
    return {txn: list(reversed(group))} if size <= TAIL_BYTES else None


def recover(path: Path, memory_file: Path, everywhere: bool = False) -> int:
    """Settle transactions left prepared by a killed writer; call under the memory lock.

    A transaction is applied when its added lines are in memory.md, or a later committed
    write took them out again (or, for a pure removal, its removed lines are not in
    memory.md). Appends ``commit`` or ``abort`` for each.

    Only the log's end is read (:func:`_open_tail`), unless ``everywhere``: then a transaction
    left open anywhere in the log is settled too — one whose commit line became unreadable,
    after which later writes went on (no write ever looks back that far; ``talos doctor
    --ack`` does, ``tests/test_doctor_ack.py``).

    Returns:
        How many transactions were settled.
    """
    tail = None if everywhere else _open_tail(path)
    started: dict[str, int] = {}  # where each open transaction starts in the log
    taken_out: dict[str, int] = {}  # a line a committed write took out: where, at the latest
    last = ""  # the transaction the log ends with
    if tail is not None:
        open_txns = tail
        last = next(iter(tail), "")
    else:
        pending: dict[str, list[dict[str, Any]]] = {}
        closed: set[str] = set()
        committed: set[str] = set()
        removals: list[tuple[int, str, str]] = []
        for no, e in enumerate(entries(path)):
            txn = last = str(e.get("txn"))
            if e.get("op") in ("commit", "abort"):
                closed.add(txn)
                if e.get("op") == "commit":
                    committed.add(txn)
            elif e.get("state") == "prepared":
                pending.setdefault(txn, []).append(e)
                started.setdefault(txn, no)
                if isinstance(e.get("before"), str) and e["before"]:
                    removals.append((no, txn, e["before"]))
        open_txns = {t: es for t, es in pending.items() if t not in closed}
        taken_out = {line: no for no, t, line in removals if t in committed}
    if not open_txns:
        return 0
    try:
        text = read_memory(memory_file, serve=False).decode("utf-8", errors="surrogateescape")
    except FileNotFoundError:
        text = ""
    lines = {ln.rstrip("\r") for ln in text.split("\n")}
    out = []
    for txn, es in open_txns.items():
        file_entries = [e for e in es if e.get("file") == str(memory_file)]
        added = [e["after"] for e in file_entries if e.get("after")]
        removed = [e["before"] for e in file_entries if e.get("before") and not e.get("after")]
        moved = [e for e in es if e.get("op") == "skill-forget" and e.get("trash")]
        appended = [e for e in file_entries if e.get("after") and isinstance(e.get("offset"), int)]
        if (  # at the log's end only: after it, later writes changed memory.md's end
            txn == last
            and len(added) == 1
            and not removed
            and appended
            and _complete_torn_append(memory_file, added[0], appended[0]["offset"])
        ):
            lines.add(added[0])
        if added:
            applied = all(
                _line_present(lines, a) or taken_out.get(a, -1) > started.get(txn, 0) for a in added
            )
        elif removed:
            applied = not any(_line_present(lines, r) for r in removed)
        elif moved:  # a forgotten skill: applied when the file reached the trash
            applied = all(Path(str(e["trash"])).exists() for e in moved)
        else:
            applied = True
        out.append(
            {
                "t": int(time.time()),
                "txn": txn,
                "op": "commit" if applied else "abort",
                "reason": "recovered after an interrupted write",
            }
        )
    append(path, out)
    return len(out)


def _complete_torn_append(memory_file: Path, line: str, offset: int) -> bool:
    """A plain append (``talos.writer.shared_file.append_line``) killed mid-write can leave the
    start of
    its line at the very end of memory.md (a write of more than a page is not all-or-nothing).
    Complete it: returns True when the file's last line, starting at or after ``offset`` (the
    file's size when the append was prepared: a person's own unfinished last line starts
    before it), is a strict prefix of ``line`` and the rest was appended."""
    want = line.encode("utf-8")
    try:
        with open_regular(memory_file) as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            start = max(0, size - len(want) - 1)
            f.seek(start)
            tail = f.read()
    except OSError:
        return False
    cut = tail.rfind(b"\n")
    if cut < 0 and start > 0:
        return False  # the last line is longer than ``line``: not a piece of it
    last_at = start + cut + 1
    last = tail[cut + 1 :]
    if last_at < offset or not last or len(last) >= len(want) or not want.startswith(last):
        return False
    fd = open_append(memory_file.resolve())  # through a symlinked memory.md, as writers do
    try:
        rest = memoryview(want[len(last) :] + b"\n")
        while rest:
            rest = rest[os.write(fd, rest) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


@dataclass(frozen=True, slots=True)
class OutsideEdit:
    """A place where memory.md and the audit log disagree because of an edit made outside
    talos (by hand, or an editor saving an older copy over talos's write).

    ``kind``: ``missing`` (a record talos wrote is not in memory.md), ``changed`` (its line
    was edited: the id is there, the text is not what talos wrote), ``back`` (a line talos
    removed — or a removal acknowledged — is in memory.md again); ``unreadable`` (a line of the
    audit log itself, :func:`unreadable`: only an acknowledgement names one, ``id`` empty).
    ``line``: 1-based line in memory.md (0 when absent; of the log for ``unreadable``).
    ``message``: a sentence that says what happened and what to do. ``was``: the line as the
    log last left it (``None``: taken out); ``now``: the line in memory.md (``None``: absent);
    ``scope``: the scope of the log's last entry of the record, the one the edit is reviewed
    under — what an acknowledgement records (:func:`talos.writer.edits.acknowledge`).
    ``log``: for ``unreadable``, the log whose line it is (design §9: any device's).
    """

    kind: str
    id: str
    line: int
    message: str
    was: str | None = None
    now: str | None = None
    scope: str = "global"
    log: str = ""


def outside_edits(
    source: Source, memory_file: Path, scopes: Collection[str] | None = None
) -> list[OutsideEdit]:
    """Records whose state in memory.md is not what the committed log says (issue 12.1).

    Replays the committed entries of ``memory_file`` of every log of ``source`` (each
    device's write, its paths made this home's, design §9: another device's remember or
    forget that reached this memory.md is no outside edit): the last entry of each record id says
    whether talos left it in the file (an ``after`` line) or took it out (a ``before`` line
    with no ``after``). Each disagreement is an :class:`OutsideEdit` whose message a person
    can act on: ``talos restore ID`` for a record that vanished; remove the line again or
    ``talos resolve`` for one that came back; nothing when a change was meant. ``scopes``:
    only entries of these scopes (default: all); a message quotes text with credentials
    masked (hostile pass of issue 13).

    Raises:
        OSError: a log cannot be read. InputError: ``TALOS_DEVICE`` is invalid.
    """
    return _outside_edits(_read(source), memory_file, scopes)


def _outside_edits(
    done: list[Read], memory_file: Path, scopes: Collection[str] | None
) -> list[OutsideEdit]:
    from talos.safety.secrets import mask_secrets  # imported on use: the log is read rarely

    try:
        data = read_memory(memory_file, serve=False)
    except FileNotFoundError:
        data = b""
    text = data.decode("utf-8", errors="surrogateescape")
    lines = [ln.rstrip("\r") for ln in text.split("\n")]
    where: dict[str, int] = {}
    by_id: dict[str, int] = {}
    for no, ln in enumerate(lines, 1):
        where.setdefault(ln, no)
        if "id=" in ln:
            parsed = parse_fact_line(ln)
            if parsed is not None and parsed.fields.get("id"):
                by_id.setdefault(parsed.fields["id"], no)
    last: dict[str, dict[str, Any]] = {}
    per_log: dict[str, dict[str, dict[str, Any]]] = {}  # record → log → its last entry there
    for log, e in _settled(done):
        if (
            e.get("file") == str(memory_file)
            and e.get("id")
            and (e.get("after") or e.get("before"))
            and (scopes is None or entry_scope(e) in scopes)
        ):
            last[str(e["id"])] = e
            per_log.setdefault(str(e["id"]), {})[log.name] = e
    name = memory_file.name
    out: list[OutsideEdit] = []
    standing = {line for skill, line in _dead(done, str(memory_file), scopes) if not skill}
    for rid, e in last.items():
        after, before = e.get("after"), e.get("before")
        if _told_by_another(e, per_log[rid].values(), where, rid in by_id):
            continue
        if after and after not in where and rid not in by_id and after in standing:
            continue  # a forget stands that the write did not know of (:func:`_dead`)
        if after:
            if after in where:
                continue
            if rid in by_id:
                no = by_id[rid]
                out.append(
                    OutsideEdit(
                        "changed",
                        rid,
                        no,
                        f"{name}:{no}: record {rid} was edited outside talos; nothing to do if "
                        f"you meant it (talos history {rid} shows what talos wrote)",
                        str(after),
                        lines[no - 1],
                        entry_scope(e),
                    )
                )
                continue
            parsed = parse_fact_line(after)
            # masked (main: a secret never reaches a reason) and bounded: a 6,000-character
            # fact filled doctor's screen (the hostile pass)
            what = repr(cut(mask_secrets(parsed.text if parsed is not None else str(after)), 80))
            out.append(
                OutsideEdit(
                    "missing",
                    rid,
                    0,
                    f"record {rid} {what} is not in {name}: it was removed outside talos (by "
                    "hand, or an editor saved an older copy over it); talos restore "
                    f"{rid} brings it back (talos doctor --ack if you meant it)",
                    str(after),
                    None,
                    entry_scope(e),
                )
            )
        elif before in where:
            no = where[before]
            parsed = parse_fact_line(before)
            k = parsed.fields.get("key") if parsed is not None else None
            fix = f"talos resolve {k} --keep ID" if k else f"delete line {no}"
            if e.get("op") == "ack":  # the removal was the person's, reviewed: no talos write
                why = (
                    "although its removal outside talos was acknowledged (talos doctor --ack): "
                    "it was put back by hand, or an editor saved an older copy over the file"
                )
            else:
                why = (
                    f"although talos removed it ({e.get('op')}): an editor probably saved an "
                    "older copy over talos's write"
                )
            out.append(
                OutsideEdit(
                    "back",
                    rid,
                    no,
                    f"{name}:{no}: record {rid} is back {why}; if you did not mean to bring it "
                    f"back: {fix} (talos doctor --ack if you did)",
                    None,
                    before,
                    entry_scope(e),
                )
            )
    return out


#: Seconds within which two devices' last entries of one record are taken as written at once:
#: their order by the clock says nothing (entries carry whole seconds, and one second orders
#: by log name). Further apart, the clock's order stands: a forget that arrived from another
#: device while this memory.md kept the line is reported (``tests/test_audit_devices.py``).
SKEW = 1


def _told_by_another(
    last: dict[str, Any], others: Iterable[dict[str, Any]], where: Collection[str], has_id: bool
) -> bool:
    """Whether memory.md holds a record as another device's last entry of it left it,
    written within :data:`SKEW` seconds of the last one: the order of two devices' writes
    of one second is not known, and the clock's order made doctor say
    on every device that a record superseded on one device within the second of its write
    on another "was removed outside talos", and to restore it (``tests/test_sync_attack.py``)."""
    t = last.get("t")
    for e in others:
        if e is last or not isinstance(e.get("t"), int | float) or not isinstance(t, int | float):
            continue
        if abs(e["t"] - t) > SKEW:
            continue
        after, before = e.get("after"), e.get("before")
        if (after and after in where) or (not after and before not in where and not has_id):
            return True
    return False


def verify(source: Source, memory_file: Path, scopes: Collection[str] | None = None) -> list[str]:
    """Check the logs of ``source`` against memory.md; returns problems ([] when consistent).

    Consistent means: no transaction of this device's log is left pending, every record a
    committed transaction left in memory.md is there, and no line it removed is back
    (:func:`outside_edits`; a record edited in place is not a problem: its id is still there).
    ``scopes``: only the entries of these scopes are looked at (a request is never told of
    another scope's records, design §7.3; hostile pass of issue 13 item 8).

    A transaction left open in another device's log (or in a legacy log an older talos still
    writes) is not a problem here (design §9): this device never writes that log, so it
    cannot settle it, and a sync often carries a transaction's prepared entries before its
    commit line; that device's next write settles it. Until then its entries count for
    nothing here (:func:`settled`).

    Raises:
        OSError: a log cannot be read. InputError: ``TALOS_DEVICE`` is invalid.
    """
    done = _read(source)
    problems: list[str] = []
    for r in done:
        if not r.log.own:
            continue
        closed: set[str] = set()
        prepared: set[str] = set()
        last = ""  # the transaction the log ends with: the next write settles it
        for _no, e in r.entries:
            last = str(e.get("txn"))
            if e.get("op") in ("commit", "abort"):
                closed.add(last)
            elif e.get("state") == "prepared" and (scopes is None or entry_scope(e) in scopes):
                prepared.add(last)
        for txn in sorted(prepared - closed):
            problems.append(
                f"transaction {txn} is neither committed nor aborted"
                + (
                    ""
                    if txn == last
                    else " and talos wrote on after it (its commit line is lost or unreadable): "
                    "talos doctor --ack settles it by what memory.md holds"
                )
            )
    problems += [
        o.message for o in _outside_edits(done, memory_file, scopes) if o.kind != "changed"
    ]
    return problems


@dataclass(frozen=True, slots=True)
class Tombstone:
    """A line a committed ``forget`` removed and nothing wrote back since (:func:`tombstones`).

    ``line``: the memory.md line exactly as it was, or for a skill (``skill`` true) the skill
    file's path in this home; ``id``: its record id (``talos restore ID``); ``scope``; ``t``:
    when it was forgotten (Unix seconds); ``device``: the log it is in (a device id, or
    ``legacy``)."""

    line: str
    id: str
    skill: bool
    scope: str
    t: int
    device: str


def tombstones(paths: Paths, scopes: Collection[str] | None = None) -> list[Tombstone]:
    """What a committed ``forget`` on any device removed and no later committed entry of any
    device wrote back (an ``after`` equal to the line: a restore, a remember of the same line,
    an acknowledged edit that kept it; a forget a ``restore`` names in its ``undoes`` is lifted
    whatever the order of the two machines' clocks: a restore on one device within the second
    of the forget on another, or on a clock behind, read as earlier, and the next sync took the
    line out again, ``tests/test_sync_attack.py``): memory.md lines (exact text) and, for
    ``skill-forget``, skill files. A merge of memory.md from two devices must keep these out,
    or a line forgotten on one device comes back from the other's copy (design §9;
    :func:`outside_edits` reports such a line as ``back``).

    Args:
        paths: the home. scopes: only the entries of these scopes (``None``: all).

    Returns:
        One :class:`Tombstone` per line or skill file, oldest forget first.

    Raises:
        OSError: a log cannot be read. InputError: ``TALOS_DEVICE`` is invalid.
    """
    return list(_dead(_read(paths), str(paths.memory_file), scopes).values())


def _dead(
    done: list[Read], memory: str, scopes: Collection[str] | None
) -> dict[tuple[bool, str], Tombstone]:
    """:func:`tombstones` of the logs read, by ``(skill, line)``. A restore that names the
    forgets it lifts (``undoes``) lifts those and no other: a forget made at the same time on
    a device it did not know of stands, as the merge of memory.md lets it (a line taken out
    there and left here is out), so doctor does not call the line's absence an outside
    edit."""
    dead: dict[tuple[bool, str], Tombstone] = {}
    done_ = list(_settled(done))
    lifted = {  # forgets a restore names: lifted whatever the two machines' clocks said
        str(t)
        for _log, e in done_
        if e.get("op") == "restore" and isinstance(e.get("undoes"), list)
        for t in e["undoes"]
    }
    for log, e in done_:
        if scopes is not None and entry_scope(e) not in scopes:
            continue
        op, before, after = e.get("op"), e.get("before"), e.get("after")
        if isinstance(after, str) and after and not isinstance(e.get("undoes"), list):
            dead.pop((False, after), None)
            dead.pop((True, after), None)
        skill = op == "skill-forget"
        if str(e.get("txn")) in lifted:
            continue
        if (
            op in ("forget", "skill-forget")
            and isinstance(before, str)
            and before
            and not after
            and (skill or e.get("file") == memory)
        ):
            t = e.get("t")
            dead.pop((skill, before), None)  # the latest forget of it
            dead[(skill, before)] = Tombstone(
                before,
                str(e.get("id") or ""),
                skill,
                entry_scope(e),
                t if isinstance(t, int) and not isinstance(t, bool) else 0,
                log.name,
            )
    return dead
