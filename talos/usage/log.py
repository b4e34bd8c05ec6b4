"""Each device's usage log (design §6.3, §9): what travels of the usage counts.

Every device appends one JSON line per recall to its own ``<state_dir>/devices/<id>/usage.jsonl``
and never writes another device's; every reader replays all devices' logs and sums them
(:class:`talos.usage.store.SqliteUsage`). A line holds what changed, never O(memories):

* a **recall**: ``{"d": DAY, "s": {SCOPE: {"+": [KEY, ...], "-": [KEY, ...]}, ...},
  "h": {SCOPE: [KEY, ...]}}`` — the day, every scope counted (``"+"``: keys that appeared
  since this device's previous recall, ``"-"``: keys that vanished; either left out when
  empty), and the keys hit per scope (``"h"`` left out when none);
* a **base**: ``{"base": {SCOPE: {"n": RECALLS, "k": {KEY: [SEEN, HITS, LAST_HIT_DAY,
  FIRST_DAY]}, "p": [PRESENT KEY, ...]}}}`` — the whole state of the device at that point
  (the counts of a usage.db from before the logs, the reference's ``recall_hits.json``).
  It replaces what was replayed before it, so a second copy of it counts nothing twice.

Replaying is what usage.db computed (:meth:`Replay.recall`): per scope a recall counter
``n``; per key ``since`` (the counter from which it is present), ``base_seen``, ``present``,
``hits``, ``last_hit_day`` and ``first_day``; ``seen = base_seen + (n - since)`` while present.
A ``"+"`` of a key already present and a ``"-"`` of one absent change nothing, so a line
repeated after a kill between its append and the cache's commit counts presence once.

Reading is memoized per process and file by ``(inode, size, mtime_ns)``; a file that grew is
read from where the last read stopped (:func:`replayed`): a long-lived process does not re-read
years of log per ``talos dead``, and a new one starts from the replay usage.db keeps
(:func:`snapshot`, :func:`seed`). A torn last line (a kill mid-append) is left for later; an
unreadable line elsewhere is skipped with a warning naming ``file:line``, once per process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from talos.fsutil import file_kind, json_value, open_append, open_regular
from talos.sync.device import describe
from talos.text import json_dumps
from talos.warn import warn

__all__ = [
    "BASE",
    "FIRST",
    "HITS",
    "LAST",
    "PRESENT",
    "SINCE",
    "SNAPSHOT_BYTES",
    "Based",
    "Replay",
    "Scope",
    "base_line",
    "kept",
    "known",
    "locked",
    "open_log",
    "problems",
    "recall_line",
    "replayed",
    "seed",
    "snapshot",
    "write_line",
]

#: Fields of a key's row in a replayed :class:`Scope` (usage.db's ``usage`` columns).
SINCE, BASE, PRESENT, HITS, LAST, FIRST = range(6)
#: Largest count or day a line may hold (SQLite's signed 64-bit integer): a larger one is a
#: damaged line, not a count.
_MAX = (1 << 63) - 1
#: Longest line read (a base line of 100,000 keys is ~10 MB); a longer one is unreadable.
_MAX_LINE = 64 << 20
#: The state a base line holds: ``scope → (n, key → (seen, hits, last_hit_day, first_day),
#: present keys)``.
Based = Mapping[str, tuple[int, Mapping[str, Sequence[int]], Iterable[str]]]


class Scope:
    """The replayed usage of one scope on one device.

    Attributes:
        n: recalls counted in the scope. keys: key → ``[since, base_seen, present, hits,
            last_hit_day, first_day]`` (indexes :data:`SINCE` …). top: no day of a row is later.
    """

    __slots__ = ("keys", "n", "top")

    def __init__(self, n: int = 0) -> None:
        self.n = n
        self.top = 0
        self.keys: dict[str, list[int]] = {}

    def counts(self) -> dict[str, tuple[int, int, int, int]]:
        """``key → (seen, hits, last_hit_day, first_day)`` of every key of the scope."""
        n = self.n
        return {
            k: (r[BASE] + (n - r[SINCE] if r[PRESENT] else 0), r[HITS], r[LAST], r[FIRST])
            for k, r in self.keys.items()
        }

    def no_day_after(self, day: int) -> None:
        """Lower every ``first_day`` and ``last_hit_day`` later than ``day`` to it (usage.db's
        ``_no_day_after``: a day a clock that ran ahead wrote); O(keys) only when the clock
        went back (:attr:`top`)."""
        if self.top <= day:
            return
        for r in self.keys.values():
            if r[FIRST] > day:
                r[FIRST] = day
            if r[LAST] > day:
                r[LAST] = day
        self.top = day


class Replay:
    """The usage state of one device, built by replaying its log line by line."""

    __slots__ = ("scopes",)

    def __init__(self) -> None:
        self.scopes: dict[str, Scope] = {}

    def recall(
        self,
        day: int,
        counted: Iterable[tuple[str, Iterable[str], Iterable[str]]],
        hits: Iterable[tuple[str, Iterable[str]]],
    ) -> None:
        """One recall, as usage.db counts it: per counted ``(scope, appeared, vanished)`` the
        presence changes, the counter, the days a clock ahead left; then the hits of keys the
        scope knows."""
        for scope, plus, minus in counted:
            st = self.scopes.get(scope)
            if st is None:
                st = self.scopes[scope] = Scope()
            n, keys = st.n, st.keys
            for k in minus:
                r = keys.get(k)
                if r is not None and r[PRESENT]:
                    r[BASE] += n - r[SINCE]
                    r[PRESENT] = 0
            for k in plus:
                r = keys.get(k)
                if r is None:  # last_hit_day 0 is a day too, for a clock before 1970
                    keys[k] = [n, 0, 1, 0, 0, day]
                    st.top = max(st.top, day, 0)
                elif not r[PRESENT]:  # a key that comes back keeps its first day
                    r[SINCE] = n
                    r[PRESENT] = 1
            st.n = n + 1
            st.no_day_after(day)
        for scope, hit in hits:
            st = self.scopes.get(scope)
            if st is None:
                continue
            for k in hit:
                r = st.keys.get(k)
                if r is not None:
                    r[HITS] += 1
                    r[LAST] = day
                    st.top = max(st.top, day)

    def base(
        self, scopes: Mapping[str, tuple[int, Mapping[str, list[int]], Iterable[str]]]
    ) -> None:
        """Replace the whole state by a base line's ``scope → (n, key → [seen, hits,
        last_hit_day, first_day], present keys)``."""
        self.scopes = {}
        for scope, (n, rows, present) in scopes.items():
            st = self.scopes[scope] = Scope(n)
            for k, (seen, hits, last, first) in rows.items():
                st.keys[k] = [n, seen, 0, hits, last, first]
            for k in present:
                r = st.keys.get(k)
                if r is None:
                    st.keys[k] = [n, 0, 1, 0, 0, 0]
                else:
                    r[PRESENT] = 1
            if st.keys:
                st.top = max(0, *(max(r[LAST], r[FIRST]) for r in st.keys.values()))

    def apply(self, rec: Any) -> None:
        """Replay one parsed line.

        Raises:
            ValueError: ``rec`` is not a recall line nor a base line (nothing is applied).
        """
        if isinstance(rec, dict) and "base" in rec:
            self.base(_base(rec["base"]))
            return
        if not isinstance(rec, dict):
            raise ValueError("not a JSON object")
        day = _int(rec.get("d"))
        counted = []
        for scope, ch in _dict(rec.get("s", {})).items():
            ch = _dict(ch)
            counted.append((scope, _keys(ch.get("+", [])), _keys(ch.get("-", []))))
        hits = [(s, set(_keys(ks))) for s, ks in _dict(rec.get("h", {})).items()]
        self.recall(day, counted, hits)


def _int(v: Any, low: int = -_MAX) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= _MAX:
        raise ValueError(f"not a count or a day: {v!r}")
    return v


def _dict(v: Any) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ValueError("not an object")
    return v


def _keys(v: Any) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(k, str) for k in v):
        raise ValueError("not a list of keys")
    return v


def _base(v: Any) -> dict[str, tuple[int, dict[str, list[int]], list[str]]]:
    out = {}
    for scope, st in _dict(v).items():
        st = _dict(st)
        rows = {}
        for k, row in _dict(st.get("k", {})).items():
            if not isinstance(row, list) or len(row) != 4:
                raise ValueError("not [seen, hits, last_hit_day, first_day]")
            rows[k] = [_int(row[0], 0), _int(row[1], 0), _int(row[2]), _int(row[3])]
        out[scope] = (_int(st.get("n", 0), 0), rows, _keys(st.get("p", [])))
    return out


# -- writing this device's log -------------------------------------------------------------------


def recall_line(
    day: int,
    changes: Mapping[str, tuple[Iterable[str], Iterable[str]]],
    hits: Mapping[str, Iterable[str]],
) -> bytes:
    """The line of one recall: ``changes`` is ``scope → (appeared, vanished)`` for every
    counted scope, ``hits`` ``scope → keys hit``; keys sorted (same recall, same bytes)."""
    s: dict[str, dict[str, list[str]]] = {}
    for scope, (plus, minus) in changes.items():
        ch = s[scope] = {}
        if plus:
            ch["+"] = sorted(plus)
        if minus:
            ch["-"] = sorted(minus)
    rec: dict[str, Any] = {"d": day, "s": s}
    h = {scope: sorted(ks) for scope, ks in hits.items() if ks}
    if h:
        rec["h"] = h
    return _encode(rec)


def base_line(
    scopes: Mapping[str, tuple[int, Mapping[str, Iterable[int]], Iterable[str]]],
) -> bytes:
    """A base line: ``scope → (n, key → (seen, hits, last_hit_day, first_day), present)``."""
    rec = {
        "base": {
            scope: {"n": n, "k": {k: list(v) for k, v in rows.items()}, "p": sorted(present)}
            for scope, (n, rows, present) in scopes.items()
        }
    }
    return _encode(rec)


def _encode(rec: dict[str, Any]) -> bytes:
    # json_dumps: a key's control or bidi characters as escapes, in a file people may tail
    return (json_dumps(rec) + "\n").encode("utf-8", errors="surrogatepass")


def open_log(path: Path, home: Path) -> int:
    """A descriptor (read-write, appending) on this device's log ``path``, made with its folder
    (and the folder's ``device.json``, :func:`talos.sync.device.describe`) when missing.

    Raises:
        NotRegularFile: a FIFO, a device or a symbolic link is at ``path`` (not opened).
        OSError: it cannot be created or opened.
    """
    if not path.parent.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
        describe(path.parent, home)
    return open_append(path, readable=True)


def write_line(fd: int, path: Path, data: bytes, sync: bool = True) -> int:
    """Append ``data`` (whole lines) to the log open as ``fd``; returns its size after.

    Starts on a fresh line when the file ends mid-line (a kill cut a write short: our line
    glued onto the fragment would be lost with it; the audit log's rule, tests/test_crash.py).
    A failed write takes back what part of it was written.

    Raises:
        OSError: it cannot be written (a full disk), named after ``path``.
    """
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        data = b"\n" + data
    try:
        rest = memoryview(data)
        while rest:
            written = os.write(fd, rest)
            if not written:
                raise OSError(28, os.strerror(28))  # ENOSPC
            rest = rest[written:]
        if sync:
            os.fsync(fd)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
        e.filename = e.filename or str(path)
        raise
    return size + len(data)


# -- reading every device's log ------------------------------------------------------------------


class _Read:
    """What this process replayed of one log: the file's identity when read, where the
    complete lines end and a digest of the bytes before, how many lines, the state, the
    unreadable lines, and how far a snapshot of it is kept (:func:`snapshot`)."""

    __slots__ = (
        "damaged",
        "digest",
        "ino",
        "lines",
        "mtime",
        "offset",
        "replay",
        "saved",
        "seeded",
        "size",
    )

    def __init__(self) -> None:
        self.ino = self.size = self.mtime = -1
        self.offset = self.lines = self.saved = 0
        self.replay = Replay()
        self.damaged: list[int] = []
        self.digest = hashlib.blake2b(digest_size=16)  # of the bytes before offset
        self.seeded: str | None = None  # a snapshot's digest, until the file is checked


_MEMO: dict[str, _Read] = {}
_REFUSED: dict[str, str] = {}  # path → why it is not read (warned once)
#: Unreadable lines of a usage log after which it is read no further, and those warned about
#: one by one (the audit log's bounds, :data:`talos.writer.logs.MAX_DAMAGED`): another
#: device's usage log of 1,000,000 garbage lines made ``talos doctor`` take 106 s with a
#: warning a line (``tests/test_remote_attack.py``). Only a device appends to its log, in
#: whole JSON lines: a log that damaged holds no counts.
MAX_DAMAGED, EACH_WARNED = 1000, 3
_WARNED: set[tuple[str, int]] = set()
_LOCK = threading.RLock()
#: Bytes replayed past the last snapshot after which :func:`snapshot` offers a new one.
SNAPSHOT_BYTES = 256 << 10


def replayed(path: Path) -> Replay | None:
    """The replayed state of the log ``path``, or ``None`` when there is none or it is refused.

    Memoized by ``(inode, size, mtime_ns)``. A file that grew in place is read from where the
    last read stopped; so is one replaced by a copy that begins with what was read (a sync
    tool or ``git pull`` writes a new file: checked by a digest of those bytes, ~10 ms for
    9 MB, where replaying them took 180 ms). A symbolic link, a FIFO or a device at ``path``
    is refused (never followed, never opened: a FIFO would hang the read) and warned about
    once, as is a file that cannot be read. Call it, and use what it returns, under
    :func:`locked` when threads share it.
    """
    key = str(path)
    with _LOCK:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            _MEMO.pop(key, None)
            return None
        except OSError as e:
            _refuse(key, f"cannot be read ({e.strerror or e})")
            return None
        kind = file_kind(st)
        if kind is not None:
            _refuse(key, f"is {kind}, not a regular file: not read")
            return None
        memo = _MEMO.get(key)
        if memo is not None and (memo.ino, memo.size, memo.mtime) == (
            st.st_ino,
            st.st_size,
            st.st_mtime_ns,
        ):
            return memo.replay
        try:
            memo = _read(path, memo)
        except OSError as e:
            _MEMO.pop(key, None)
            _refuse(key, f"cannot be read ({e.strerror or e})")
            return None
        _REFUSED.pop(key, None)
        _MEMO[key] = memo
        return memo.replay


def locked() -> threading.RLock:
    """The lock under which :func:`replayed`'s states are read and changed."""
    return _LOCK


def problems(path: Path) -> list[str]:
    """What is wrong with the log ``path`` (for ``talos doctor``): why it is not read, or its
    unreadable lines as ``path:line``; empty when it reads well or is missing."""
    with _LOCK:
        replayed(path)
        why = _REFUSED.get(str(path))
        if why:
            return [f"{path} {why}"]
        memo = _MEMO.get(str(path))
        if memo is None:
            return []
        out = [f"{path}:{no}: unreadable line" for no in memo.damaged[:EACH_WARNED]]
        if len(memo.damaged) > EACH_WARNED:
            more = len(memo.damaged) - EACH_WARNED
            stop = "; read no further" if len(memo.damaged) >= MAX_DAMAGED else ""
            out.append(f"{path}:{memo.damaged[-1]}: {more:,} more unreadable lines{stop}")
        return out


def _refuse(key: str, why: str) -> None:
    if _REFUSED.get(key) != why:
        warn(f"{key} {why}; the usage counts it holds are left out")
    _REFUSED[key] = why


def _continues(fd: int, st: os.stat_result, memo: _Read) -> bool:
    """Whether the file open as ``fd`` begins with the ``memo.offset`` bytes ``memo`` replayed:
    the same file grown (its inode, a line end where the replay stopped), or bytes of the same
    digest (a copy, a snapshot's)."""
    if st.st_size < memo.offset:
        return False
    if memo.seeded is None and memo.ino == st.st_ino and st.st_size >= memo.size:
        return not memo.offset or os.pread(fd, 1, memo.offset - 1) == b"\n"
    digest = hashlib.blake2b(digest_size=16)
    done = 0
    while done < memo.offset:
        chunk = os.pread(fd, min(1 << 20, memo.offset - done), done)
        if not chunk:
            return False
        digest.update(chunk)
        done += len(chunk)
    if digest.hexdigest() != (memo.seeded or memo.digest.hexdigest()):
        return False
    memo.digest, memo.seeded = digest, None
    return True


def _read(path: Path, memo: _Read | None) -> _Read:
    """Replay ``path`` into ``memo`` from where it stopped when the file begins with what it
    replayed, else anew."""
    with open_regular(path) as f:
        st = os.fstat(f.fileno())  # what is read is what was checked (open_regular)
        if memo is None or not _continues(f.fileno(), st, memo):
            memo = _Read()
        memo.ino, memo.size, memo.mtime = st.st_ino, st.st_size, st.st_mtime_ns
        f.seek(memo.offset)
        while True:
            if len(memo.damaged) >= MAX_DAMAGED:
                break  # read no further (:data:`MAX_DAMAGED`)
            blob = f.readline(_MAX_LINE)
            whole = blob.endswith(b"\n")
            if not whole and len(blob) == _MAX_LINE:  # too long: skipped whole, if it ends
                parts = [blob]
                while parts[-1] and not parts[-1].endswith(b"\n"):
                    parts.append(f.readline(_MAX_LINE))
                if not parts[-1]:
                    break
                blob, whole = b"".join(parts), False
            elif not whole:
                break  # the end, or a torn last line: read again once it is finished
            memo.offset += len(blob)
            memo.lines += 1
            memo.digest.update(blob)
            try:
                if not whole:
                    raise ValueError("too long")
                memo.replay.apply(json_value(blob))
            except ValueError:  # invalid UTF-8 or JSON, a wrong shape
                _damaged(path, memo)
    return memo


def _damaged(path: Path, memo: _Read) -> None:
    """Note an unreadable line: the first :data:`EACH_WARNED` are warned about one by one,
    the :data:`MAX_DAMAGED`-th once for the rest (the log is read no further)."""
    memo.damaged.append(memo.lines)
    many = len(memo.damaged)
    if many > EACH_WARNED and many != MAX_DAMAGED:
        return
    if (str(path), memo.lines) not in _WARNED:
        _WARNED.add((str(path), memo.lines))
        if many == MAX_DAMAGED:
            warn(f"{path}:{memo.lines}: {MAX_DAMAGED:,} unreadable usage lines; read no further")
        else:
            warn(f"{path}:{memo.lines}: unreadable usage line skipped")


# -- snapshots of a replay (kept in usage.db) ----------------------------------------------------


def known(path: Path) -> bool:
    """Whether this process has replayed (or seeded) the log ``path``."""
    return str(path) in _MEMO


def snapshot(path: Path) -> tuple[int, str] | None:
    """``(offset, text)``: the replay of ``path`` to keep (usage.db's ``replays``), when it went
    :data:`SNAPSHOT_BYTES` past the last one kept; else ``None``. A new process then starts
    from it (:func:`seed`): 20,000 lines of another device took 180 ms to replay."""
    memo = _MEMO.get(str(path))
    if memo is None or memo.seeded is not None or memo.offset - memo.saved < SNAPSHOT_BYTES:
        return None
    scopes = {s: [st.n, st.top, st.keys] for s, st in memo.replay.scopes.items()}
    text = json.dumps(
        {
            "offset": memo.offset,
            "lines": memo.lines,
            "digest": memo.digest.hexdigest(),
            "damaged": memo.damaged,
            "scopes": scopes,
        },
        separators=(",", ":"),
    )
    return memo.offset, text


def kept(path: Path, offset: int) -> None:
    """A snapshot of ``path`` up to ``offset`` is kept."""
    memo = _MEMO.get(str(path))
    if memo is not None:
        memo.saved = max(memo.saved, offset)


def seed(path: Path, text: str) -> None:
    """Start this process's replay of ``path`` from a kept snapshot (:func:`snapshot`), to be
    checked against the file by its digest when it is read (a snapshot that does not fit is
    dropped: the file is replayed anew). One that cannot be read is ignored."""
    try:
        data = json_value(text)
        memo = _Read()
        memo.offset, memo.lines = _int(data["offset"], 0), _int(data["lines"], 0)
        memo.seeded = str(data["digest"])
        memo.damaged = [_int(x, 0) for x in data["damaged"]]
        for scope, (n, top, keys) in _dict(data["scopes"]).items():
            st = memo.replay.scopes[scope] = Scope(_int(n, 0))
            st.top = _int(top)
            for k, row in _dict(keys).items():
                if not isinstance(row, list) or len(row) != 6:
                    raise ValueError("not a row")
                st.keys[k] = [_int(v) for v in row]
    except (ValueError, TypeError, KeyError, AttributeError):
        return
    memo.saved = memo.offset
    _MEMO.setdefault(str(path), memo)
