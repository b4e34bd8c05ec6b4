"""Every device's audit log, read as one (design §7.6, §9).

A device appends only to its own log, ``<state_dir>/devices/<id>/audit.jsonl``
(:attr:`talos.home.Paths.audit_file`): two machines that share a home through git or a sync
folder never write one file. A reader merges them all: the legacy ``<state_dir>/audit.jsonl``
when it is there, then each device's log (:func:`logs`). Entries are ordered by time, then by
log, each log keeping its own order (:func:`merged`); a transaction's ``commit``/``abort`` is in
the log of its prepared entries, so a transaction is settled within its log.

Another device's entries name files by that device's absolute paths; the prefix of its home
(its ``device.json``, :func:`talos.sync.device.device_home`) is replaced by this home, so its
forget can be restored here and its write is not taken for an outside edit. A path outside
that home (a ``memory_file`` set elsewhere) is left as written.

The log of a home made before devices existed is moved into this device's log by one
``os.rename`` (:func:`migrate`), under the memory lock, when this device has no log yet: the
history, restore and undo go on. When both exist (an older talos wrote again), the legacy log
stays and is read as one more log.

An ``ack`` of unreadable lines (``talos doctor --ack``) names the log whose lines it
acknowledges in its ``log`` field (a device id, or ``legacy``); an ack without one means the
log it is in.
"""

from __future__ import annotations

import heapq
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from talos.errors import InputError
from talos.fsutil import json_value, open_regular
from talos.home import Paths
from talos.sources.facts import claimed_scopes
from talos.sync.device import DEVICES, copies, describe, device_dirs, device_home
from talos.warn import warn

__all__ = [
    "LEGACY",
    "LOG_NAME",
    "Log",
    "Read",
    "logs",
    "merged",
    "migrate",
    "note_written",
    "read",
    "single",
    "unacknowledged",
    "where",
    "written_since",
]

#: This machine's note of how far talos wrote its own audit log (``<state_dir>/audit.seen``,
#: never synced: the ignore lines leave the state folder's loose files out).
SEEN = "audit.seen"
#: Bytes of the log's end the note keeps a hash of.
_SEEN_TAIL = 256

#: The name of every audit log file, the legacy one and each device's.
LOG_NAME = "audit.jsonl"
#: What an ack's ``log`` field names the legacy ``<state_dir>/audit.jsonl`` by.
LEGACY = "legacy"


@dataclass(frozen=True, slots=True)
class Log:
    """One audit log. ``name``: the device id, or :data:`LEGACY`; ``own``: this device's (the
    only one it writes); ``moved``: ``(their home, this home)`` when its entries name files by
    another home's paths, else ``None``."""

    path: Path
    name: str
    own: bool = True
    moved: tuple[str, str] | None = None


def single(path: Path) -> Log:
    """``path`` read alone, as this device's log (a caller that names one file: a writer's own
    log, a test). Its name is its device folder's, or :data:`LEGACY` outside ``devices/``."""
    parent = path.parent
    return Log(path, parent.name if parent.parent.name == DEVICES else LEGACY)


def logs(paths: Paths, migrating: bool = True) -> list[Log]:
    """Every audit log of the home, in read order: the legacy log when present, then each
    device's (sorted by id; this device's always, even before its first write), but a
    device folder that is a copy of another's (:func:`talos.sync.device.copies`).

    ``migrating``: first move the legacy log into this device's (:func:`migrate`) when the
    memory lock is free at once — reading never waits for a writer.

    Raises:
        InputError: ``TALOS_DEVICE`` cannot name a device.
    """
    own_dir = paths.device_dir
    if migrating:
        migrate(paths)
    out: list[Log] = []
    legacy = paths.state_dir / LOG_NAME
    if os.path.lexists(legacy):
        out.append(Log(legacy, LEGACY, own=False))
    here = str(paths.home)
    copied = copies(paths.state_dir, own_dir.name)  # read once (design §12.1; doctor names them)
    folders = [f for f in device_dirs(paths.state_dir) if f.name not in copied]
    if own_dir not in folders:
        folders = sorted([*folders, own_dir], key=lambda p: p.name)
    for folder in folders:
        path = folder / LOG_NAME
        if folder == own_dir:
            out.append(Log(path, folder.name))
        elif os.path.lexists(path):
            theirs = device_home(folder)
            moved = (theirs.rstrip("/"), here) if theirs and theirs.rstrip("/") != here else None
            out.append(Log(path, folder.name, own=False, moved=moved))
    return out


def where(paths: Paths) -> str:
    """How a message names the audit log: the path of the only log there is, else ``the
    audit logs under STATE_DIR`` (none yet, or several devices')."""
    found = [log for log in logs(paths, migrating=False) if os.path.lexists(log.path)]
    if len(found) == 1:
        return str(found[0].path)
    return f"the audit logs under {paths.state_dir}"


def migrate(paths: Paths, locked: bool = False) -> bool:
    """Move the legacy ``<state_dir>/audit.jsonl`` into this device's log, by one atomic
    ``os.rename``, when this device has no log yet (design §9: a home made before devices
    existed keeps its history, restore and undo). Done under the memory lock, which every
    writer of either log holds: with ``locked`` the caller holds it; else it is taken only if
    it is free at once (a reader never waits) — otherwise, or when the home cannot be written,
    nothing moves and the legacy log is read as one more log.

    Returns:
        Whether the log was moved.
    """
    legacy, own = paths.state_dir / LOG_NAME, paths.audit_file
    if not _regular(legacy) or os.path.lexists(own):
        return False
    if locked:
        return _move(paths, legacy, own)
    import filelock

    from talos.writer.txn import memory_lock  # imported on use: the writer imports this module

    try:
        held = memory_lock(paths)
        held.acquire(timeout=0)
    except (OSError, InputError, filelock.Timeout):
        return False
    try:
        return _move(paths, legacy, own)
    finally:
        held.release()


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _move(paths: Paths, legacy: Path, own: Path) -> bool:
    """The rename itself (the memory lock held): ``False`` when another process moved it
    first, or it cannot be moved."""
    if not _regular(legacy) or os.path.lexists(own):
        return False
    try:
        own.parent.mkdir(parents=True, exist_ok=True)
        describe(own.parent, paths.home)
        os.rename(legacy, own)
    except OSError:
        return False
    return True


@dataclass(slots=True)
class Read:
    """One log as read: its entries with their 1-based line numbers (paths already mapped to
    this home), and its lines that cannot be read (``damaged``: number and the scopes they
    name), a torn last line left out. ``stopped``: the line at which reading another device's
    log stopped after :data:`MAX_DAMAGED` unreadable lines (0: read whole)."""

    log: Log
    entries: list[tuple[int, dict[str, Any]]]
    damaged: list[tuple[int, frozenset[str]]]
    stopped: int = 0


#: Unreadable lines of another device's log after which it is read no further: a 50 MB log
#: of garbage from another machine made ``history`` take 65 s and ``doctor`` 129 s with
#: 50,001 warnings (``tests/test_audit_devices.py``); a log that damaged is not a history.
MAX_DAMAGED = 1000
#: Unreadable lines of one log warned about one by one; more are said in one warning.
EACH_WARNED = 3


def read(sources: Iterable[Log], warning: bool = True) -> list[Read]:
    """Read every log of ``sources``; with ``warning``, each unreadable line that no ``ack``
    of any log acknowledged is warned about, naming its file and line (to those who may see
    its scope, design §7.3): talos never rewrites a log, so an acknowledged line would
    otherwise be warned about on every read.

    Raises:
        OSError: a log cannot be read (a missing one reads as empty).
    """
    done = [_read_one(log) for log in sources]
    if warning:
        per_log: dict[int, list[int]] = {}
        for r, no in unacknowledged(done):
            per_log.setdefault(id(r), []).append(no)
        for r in done:
            lines = per_log.get(id(r), [])
            scopes = dict(r.damaged)
            if len(lines) <= EACH_WARNED and not r.stopped:
                for no in lines:
                    warn(f"{r.log.path}:{no}: unreadable audit entry skipped", scopes=scopes[no])
            elif lines:
                warn(_summary(r, lines), scopes=frozenset().union(*(scopes[n] for n in lines)))
    return done


def _summary(r: Read, lines: list[int]) -> str:
    """One warning for many unreadable lines of the log of ``r`` (their numbers ``lines``)."""
    shown = ", ".join(str(n) for n in lines[:EACH_WARNED])
    more = f", and {len(lines) - EACH_WARNED:,} more" if len(lines) > EACH_WARNED else ""
    whose = "this device's" if r.log.own else f"device {r.log.name}'s"
    stop = (
        f"; not read past line {r.stopped:,}: {MAX_DAMAGED:,} unreadable lines make it no history"
        if r.stopped
        else "; talos doctor --ack acknowledges them"
    )
    return (
        f"{r.log.path}: {len(lines):,} unreadable audit entries of {whose} log skipped (line "
        f"{shown}{more}){stop}"
    )


def unacknowledged(done: list[Read]) -> Iterator[tuple[Read, int]]:
    """The unreadable lines of ``done`` that no ``ack`` entry acknowledged, log by log."""
    reviewed: dict[str, set[int]] = {}
    for r in done:
        for _no, rec in r.entries:
            for name, lines in _reviewed(rec, r.log):
                reviewed.setdefault(name, set()).update(lines)
    for r in done:
        for no, _scopes in r.damaged:
            if no not in reviewed.get(r.log.name, ()):
                yield r, no


def _read_one(log: Log) -> Read:
    out = Read(log, [], [])
    try:
        f = open_regular(log.path)
    except FileNotFoundError:
        return out
    with f:
        for no, blob in enumerate(f, 1):
            try:
                rec = json_value(blob.decode("utf-8"))
            except ValueError:  # invalid UTF-8 or JSON, nested too deeply, NaN
                if blob.endswith(b"\n"):  # else a torn last line: the next write starts after it
                    out.damaged.append((no, _blob_scopes(blob)))
                    if not log.own and len(out.damaged) >= MAX_DAMAGED:
                        out.stopped = no
                        break
                continue
            if isinstance(rec, dict):
                out.entries.append((no, _mapped(rec, log.moved) if log.moved else rec))
            elif blob.endswith(b"\n"):  # JSON, but no entry: 50 MB of "[]" is no history
                out.damaged.append((no, _blob_scopes(blob)))
                if not log.own and len(out.damaged) >= MAX_DAMAGED:
                    out.stopped = no
                    break
    return out


def _reviewed(rec: dict[str, Any], log: Log) -> list[tuple[str, list[int]]]:
    """The unreadable lines an ``ack`` entry acknowledges (its ``unreadable`` field), with the
    name of the log they are lines of: its ``log`` field, else the log it is in."""
    lines = rec.get("unreadable") if rec.get("op") == "ack" else None
    if not isinstance(lines, list):
        return []
    name = rec.get("log")
    return [
        (
            name if isinstance(name, str) and name else log.name,
            [n for n in lines if isinstance(n, int) and not isinstance(n, bool)],
        )
    ]


def _mapped(rec: dict[str, Any], moved: tuple[str, str]) -> dict[str, Any]:
    """``rec`` with the paths it names (``file``, ``trash``, and ``before``/``after`` when
    they are the entry's file: a skill's path) moved from another device's home to this one."""
    theirs, here = moved
    out = dict(rec)
    file = rec.get("file")
    for name in ("file", "trash", "before", "after"):
        value = rec.get(name)
        if not isinstance(value, str) or (name in ("before", "after") and value != file):
            continue
        if value == theirs or value.startswith(theirs + "/"):
            out[name] = here + value[len(theirs) :]
    return out


def _t(item: tuple[int, int, dict[str, Any]]) -> tuple[float, int]:
    t = item[2].get("t")
    return (t if isinstance(t, int | float) and not isinstance(t, bool) else 0.0, item[0])


def merged(
    per_log: Iterable[tuple[Log, Iterable[tuple[int, dict[str, Any]]]]],
) -> Iterator[tuple[Log, dict[str, Any]]]:
    """The entries of several logs as one sequence: by time (``t``), then by log (read order),
    each log keeping its own order (a clock set back on one machine never reorders its own
    log: its later write still replays after its earlier one)."""
    runs = []
    which: list[Log] = []
    for i, (log, items) in enumerate(per_log):
        which.append(log)
        runs.append([(i, no, e) for no, e in items])
    for i, _no, e in heapq.merge(*runs, key=_t):
        yield which[i], e


_SCOPE_FIELD = re.compile(rb'"scope":\s*"((?:[^"\\]|\\.)*)"')


def _blob_scopes(blob: bytes) -> frozenset[str]:
    """The scopes an unreadable log line names: its ``"scope"`` field, else the ``scope=``
    of the line it carries, else ``global`` (:func:`talos.warn.audible`)."""
    m = _SCOPE_FIELD.search(blob)
    if m:
        try:
            return frozenset({json.loads(b'"' + m.group(1) + b'"')})
        except ValueError:
            pass
    return claimed_scopes(blob)


def _tail_hash(fd: int, size: int) -> str:
    import hashlib

    start = max(0, size - _SEEN_TAIL)
    return hashlib.sha256(os.pread(fd, size - start, start)).hexdigest()[:32]


def note_written(paths: Paths, log: Path) -> None:
    """Note, on this machine only (:data:`SEEN`), the size of this device's audit log and a
    hash of its end, after talos appended to it: :func:`written_since` tells later whether the
    log is still what talos wrote (design §12.1: this device's logs are append-only on every
    route — a sync folder or a copy that puts back an older or another version is not one
    talos can refuse, so doctor names it). A note that cannot be written is skipped."""
    try:
        fd = os.open(log, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return
    try:
        size = os.fstat(fd).st_size
        note = {"log": log.parent.name, "size": size, "tail": _tail_hash(fd, size)}
        (paths.state_dir / SEEN).write_text(json.dumps(note) + "\n", encoding="utf-8")
    except OSError:
        return
    finally:
        os.close(fd)


def written_since(paths: Paths) -> str | None:
    """What happened to this device's audit log since talos last wrote it, as a sentence,
    or ``None`` when it is as talos left it, longer, or nothing was noted
    (:func:`note_written`): ``cut short`` (it is smaller than talos left it: lines of its
    history are gone) or ``replaced`` (its bytes up to where talos left it changed)."""
    try:
        note = json_value((paths.state_dir / SEEN).read_text(encoding="utf-8"))
        log = paths.audit_file
    except (OSError, ValueError, InputError):
        return None
    if not isinstance(note, dict) or note.get("log") != log.parent.name:
        return None
    size, tail = note.get("size"), note.get("tail")
    if not isinstance(size, int) or isinstance(size, bool) or not isinstance(tail, str):
        return None
    try:
        fd = os.open(log, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return f"{log}: this device's audit log is gone ({size:,} bytes when talos last wrote it)"
    except OSError:
        return None
    try:
        now = os.fstat(fd).st_size
        if now < size:
            return (
                f"{log}: this device's audit log was cut short: {now:,} bytes, {size:,} when "
                "talos last wrote it"
            )
        if _tail_hash(fd, size) != tail:
            return (
                f"{log}: this device's audit log was replaced: its first {size:,} bytes are not "
                "what talos wrote"
            )
    except OSError:
        return None
    finally:
        os.close(fd)
    return None
