"""Where usage counts live (design §6.3, §9): every device's usage log merged, this device's
cached in ``.talos/usage.db`` (:class:`SqliteUsage`), or the reference's ``recall_hits.json``
for :mod:`talos.compat` (:class:`JsonUsage`), behind one protocol (:class:`UsageStore`); and
the fingerprint of a key set, by which a store notices cheaply that memories appeared or
vanished. What is counted, and when, is :mod:`talos.usage.counts`'s; the logs are
:mod:`talos.usage.log`'s, usage.db's tables :mod:`talos.usage.tables`'.

Writing usage must not cost O(number of memories) per recall. :class:`SqliteUsage` keeps one
counter of recalls per scope and, per memory, the counter value from which it has been present
(``since``): ``seen = base_seen + (counter - since)`` while present. A recall therefore writes
the counter, one row per picked memory, and rows only for memories that appeared or vanished
since the previous recall (detected by a fingerprint of the key set, :func:`fingerprint`), and
appends one line of the same changes to this device's log. All of it happens in one ``BEGIN
IMMEDIATE`` transaction, so concurrent recalls from several processes lose nothing, and the
log's lines are in the order of the transactions.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import ClassVar, NamedTuple, Protocol

from talos.errors import StateError, state_error
from talos.fsutil import (
    MAX_STATE_BYTES,
    atomic_write_text,
    check_regular_or_missing,
    json_value,
    lock,
    read_regular,
    use_wal,
)
from talos.sync.device import copies, device_dirs, own_dir
from talos.text import json_dumps
from talos.usage import log, tables
from talos.usage.tables import REFERENCE_KINDS as _REFERENCE_KINDS
from talos.usage.tables import count as _count

__all__ = [
    "HOOK_IMPORT_BYTES",
    "RECORD_WAIT",
    "JsonUsage",
    "SqliteUsage",
    "Stat",
    "UsageStore",
    "fingerprint",
    "fingerprint_from",
    "merge",
    "remember_fingerprint",
]

#: Largest reference ``recall_hits.json`` a hook imports (:attr:`SqliteUsage.import_limit`):
#: ``json.loads`` holds the GIL, so the hook's deadline watchdog cannot run; a 240 MB file
#: held a 0.5 s hook ~5 s, every turn (tests/test_hook_never_blocks.py).
HOOK_IMPORT_BYTES = 4 << 20

_OUR_KINDS = {v: k for k, v in _REFERENCE_KINDS.items()}


class _Counts(NamedTuple):
    seen: int
    hits: int
    last_hit_day: int


class Stat(_Counts):
    """Usage of one memory: the tuple ``(seen, hits, last_hit_day)`` (recalls, picks, day of
    the last pick, 0 = never) that :meth:`talos.Memory.usage` has always returned, and beside
    it ``first_day``: the day of the first recall that counted it (0 = not known). An
    attribute, not a fourth item, so the tuple compares and unpacks as before."""

    first_day: int = 0

    def __new__(cls, seen: int, hits: int, last_hit_day: int, first_day: int = 0) -> Stat:
        stat = super().__new__(cls, seen, hits, last_hit_day)
        if first_day:
            stat.first_day = first_day
        return stat


_FP_MEMO: dict[int, tuple[frozenset[str], str]] = {}


def fingerprint(keys: Iterable[str]) -> str:
    """A short digest of a key set, to notice cheaply that memories appeared or vanished.

    Memoized for the same ``frozenset`` object (a cached graph passes the same one each
    recall), so an unchanged home costs no hashing per recall.
    """
    if isinstance(keys, frozenset):
        memo = _FP_MEMO.get(id(keys))
        if memo is not None and memo[0] is keys:
            return memo[1]
        fp = _digest(keys)
        if len(_FP_MEMO) > 16:
            _FP_MEMO.clear()
        _FP_MEMO[id(keys)] = (keys, fp)
        return fp
    return _digest(keys)


_KEY_HASH: dict[str, int] = {}


def _key_hash(k: str) -> int:
    h = _KEY_HASH.get(k)
    if h is None:
        h = _KEY_HASH[k] = int.from_bytes(
            hashlib.blake2b(k.encode("utf-8", errors="surrogatepass"), digest_size=8).digest(),
            "big",
        )
    return h


def remember_fingerprint(keys: frozenset[str], fp: str) -> None:
    """Take ``fp`` as the fingerprint of ``keys`` (a stored records block carries its own:
    a new process would otherwise hash 3,000 keys on its one recall, ~15 ms; design §11)."""
    if len(_FP_MEMO) > 16:
        _FP_MEMO.clear()
    _FP_MEMO[id(keys)] = (keys, fp)


def fingerprint_from(old: frozenset[str], new: frozenset[str]) -> None:
    """Derive ``new``'s fingerprint from ``old``'s (memoized) by the keys that differ: a set
    that changed by one key after an edit costs two hashes, not 3,000 (design §11)."""
    memo = _FP_MEMO.get(id(old))
    if memo is None or memo[0] is not old:
        return
    acc = int(memo[1][1:17], 16)
    for k in old.symmetric_difference(new):
        acc ^= _key_hash(k)
    if len(_FP_MEMO) > 16:
        _FP_MEMO.clear()
    _FP_MEMO[id(new)] = (new, f"x{acc:016x}.{len(new)}")


def _digest(keys: Iterable[str]) -> str:
    """XOR of a 64-bit BLAKE2b digest per key, and the count: independent of order, and the
    digest of each key is kept, so a set that changed by one key costs lookups, not a sort
    and a hash of every key (an edit of memory.md, design §11)."""
    if len(_KEY_HASH) > 200_000:
        _KEY_HASH.clear()
    acc = n = 0
    for k in keys:
        acc ^= _key_hash(k)
        n += 1
    return f"x{acc:016x}.{n}"


#: Seconds a recall waits to count usage while another connection holds usage.db's write
#: lock. Talos's own transactions last milliseconds; a lock held longer is another program's
#: (a SQLite browser left in a transaction): every recall waited 60 s (61.4 s measured) before
#: it warned and went on — longer than an agent's hook allows (design §6.1, hostile pass).
RECORD_WAIT = 5.0


def _rollback(con: sqlite3.Connection) -> None:
    """Roll back what is left of a transaction: SQLite may have rolled it back itself (a
    full disk), and a second ROLLBACK then hid the cause ("cannot rollback - no transaction
    is active" was all a recall on a full disk said)."""
    if con.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            con.execute("ROLLBACK")


class UsageStore(Protocol):
    """Where usage counts live. ``present``/``hits`` map a scope to memory keys."""

    def record(
        self,
        present: Mapping[str, frozenset[str]],
        hits: Mapping[str, set[str]],
        day: int,
    ) -> None:
        """Count one recall: every present key is seen, every hit key is hit on ``day``."""
        ...

    def stats(self, scope: str) -> dict[str, Stat]:
        """All known usage of ``scope``: key → :class:`Stat`."""
        ...


class SqliteUsage:
    """Usage counts of every device, merged (design §6.3, §9); this device's are counted in
    its own log (:mod:`talos.usage.log`) and kept up to date in ``.talos/usage.db`` (SQLite,
    WAL, :mod:`talos.usage.tables`), safe across processes.

    A recall appends one line to this device's log and updates usage.db in one ``BEGIN
    IMMEDIATE`` transaction. usage.db is a cache: it says which device's log it caches and how
    far into it (``device``); one of another device (a sync folder or a ``cp -r`` copied it),
    or behind its log (a kill between the append and the commit), is rebuilt from the log.

    Args:
        path: the database file (created with its folder when missing).
        import_hits: a reference ``recall_hits.json`` to import the first time (design §6.3).
        home: the home whose state folder holds ``path`` (default: the folder above it); with
            it the state folder names this device (:func:`talos.sync.device.device_id`).
    """

    #: 1: the counts; 2: ``usage.first_day`` (rows counted before it keep 0, "not known");
    #: 3: the ``device`` table (usage.db caches one device's log, design §9).
    SCHEMA = 3
    INDEXES = tables.INDEXES
    #: Every table of the schema, and the schema that added one later than 1.
    TABLES = ("counters", "fingerprints", "usage", "device", "replays")
    _ADDED: ClassVar[dict[str, int]] = {"device": 3, "replays": 3}

    def __init__(self, path: Path, import_hits: Path | None = None, home: Path | None = None):
        self.path = path
        self.import_hits = import_hits
        self.home = path.parent.parent if home is None else home
        #: Largest recall_hits.json imported (bytes); a larger one leaves usage.db uncreated,
        #: with a warning, for a later command to import (the hook sets
        #: :data:`HOOK_IMPORT_BYTES`).
        self.import_limit = MAX_STATE_BYTES
        self._ready = False
        self._local = threading.local()
        self._synced: dict[str, tuple[str, frozenset[str]]] = {}  # scope -> (fp, keys) written
        self._log: Path | None = None

    @property
    def log(self) -> Path:
        """This device's usage log, ``<state_dir>/devices/<id>/usage.jsonl`` (design §9).

        Raises:
            InputError: ``TALOS_DEVICE`` cannot name a device.
        """
        if self._log is None:
            self._log = own_dir(self.path.parent, self.home) / "usage.jsonl"
        return self._log

    def close(self) -> None:
        """Close this thread's connection (it reopens on demand)."""
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

    #: What to do with a usage.db that is damaged or not talos's (issue 12 item 4).
    DAMAGED = (
        "move it aside (talos then starts new counts; recall is not affected) or put back a backup"
    )

    def _fail(self, e: BaseException) -> StateError:
        """``e`` (an OSError or a SQLite error on usage.db or the log) as a sentence naming the
        file."""
        if isinstance(e, OSError) and self._log is not None and e.filename == str(self._log):
            return state_error(self._log, e, "the usage log", self.DAMAGED)
        return state_error(self.path, e, "the usage counts", self.DAMAGED)

    def _connect(self, wait: float = 60.0) -> sqlite3.Connection:
        """This thread's connection, opened (and the schema migrated) on first use.

        Args:
            wait: seconds to wait for a lock another connection holds while migrating.

        Raises:
            StateError: usage.db cannot be opened for writing, is damaged, is newer, or is
                another program's; or the log cannot be written while migrating.
        """
        con: sqlite3.Connection | None = getattr(self._local, "con", None)
        if con is not None:
            return con
        check_regular_or_missing(self.path)  # SQLite would take a FIFO or a device (12.3)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            try:
                con.execute(f"PRAGMA busy_timeout={int(wait * 1000)}")
                if not self._ready:
                    self._migrate(con)
                    self._ready = True
                con.execute("PRAGMA busy_timeout=60000")
            except BaseException:
                con.close()
                raise
        except (OSError, sqlite3.Error) as e:
            raise self._fail(e) from e
        self._local.con = con
        return con

    def _reader(self) -> sqlite3.Connection | None:
        """A connection to read the counts from: :meth:`_connect`'s, or a read-only one when
        usage.db cannot be written (a read-only home, a full disk: reading still works,
        issue 12 item 4); ``None`` when there is no usage.db to read.

        Raises:
            StateError: usage.db is damaged or newer, or cannot be read either.
        """
        if (
            getattr(self._local, "con", None) is None
            and not self.path.exists()
            and not (self.import_hits is not None and self.import_hits.exists())
        ):
            return None  # nothing counted yet: reading creates no file (doctor, report)
        try:
            return self._connect()
        except StateError as e:
            if not isinstance(e.__cause__, (OSError, sqlite3.OperationalError)):
                raise  # damaged or newer: reading it read-only would not help
            if not self.path.is_file():
                return None  # nothing counted yet, and nowhere to count
            for mode in ("mode=ro", "immutable=1"):  # immutable: no -shm on a read-only disk
                try:
                    con = sqlite3.connect(
                        f"{self.path.absolute().as_uri()}?{mode}", uri=True, timeout=60
                    )
                    version = con.execute("PRAGMA user_version").fetchone()[0]
                except sqlite3.Error:
                    continue
                try:
                    if version == 0:
                        con.close()
                        return None
                    self._check_schema(con, version)
                except BaseException:
                    con.close()
                    raise
                self._local.con = con  # record() then fails on it, with a warning
                return con
            raise

    def _foreign(self, con: sqlite3.Connection, tables: bool = True) -> None:
        """Raise :class:`StateError` when ``con`` is another program's database: an application
        id (talos's usage.db has none) or a table that is not talos's. talos created its
        tables inside such a file, and one with a schema version was "written by a newer
        talos" (hostile pass). Checked before anything is written, WAL mode included."""
        app = con.execute("PRAGMA application_id").fetchone()[0]
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        other = sorted(n for n in names if n not in self.TABLES and not n.startswith("sqlite_"))
        why = f"application id {app:#x}" if app else ""
        why = why or (f"it holds table {', '.join(other)}" if other and tables else "")
        if why:
            raise StateError(
                f"{self.path}: not a talos usage database ({why}); {self.DAMAGED}", self.path
            )

    def _check_schema(self, con: sqlite3.Connection, version: int) -> None:
        """Raise :class:`StateError` unless ``con`` holds talos's usage tables of a schema
        this talos reads (a newer talos's file is left alone: upgrade talos)."""
        self._foreign(con, tables=False)  # another program's id: not "a newer talos"
        if version > self.SCHEMA:
            raise StateError(
                f"{self.path}: written by a newer talos (usage schema {version}, this one "
                f"reads {self.SCHEMA}); upgrade talos, or {self.DAMAGED}",
                self.path,
            )
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in self.TABLES if t not in names and self._ADDED.get(t, 1) <= version]
        if missing:
            raise StateError(
                f"{self.path}: not a talos usage database (no table {', '.join(missing)}); "
                f"{self.DAMAGED}",
                self.path,
            )

    def _migrate(self, con: sqlite3.Connection) -> None:
        """Make or migrate the schema (numbered steps). Counts that are in no log yet (a
        usage.db of schema 1 or 2, a reference ``recall_hits.json``) go into this device's log
        as one base line in the same transaction that marks the file migrated: a kill between
        the two leaves a base line that the next try writes again, and a base line replaces
        the state before it, so nothing is counted twice (:mod:`talos.usage.log`)."""
        version = con.execute("PRAGMA user_version").fetchone()[0]
        if version:  # someone else's file, or a newer talos's, is left as it is
            self._check_schema(con, version)
        else:
            self._foreign(con)
        use_wal(con)  # fails at once while another process opens the new file: waits
        con.execute("BEGIN IMMEDIATE")
        fd = size = -1
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]
            based = False  # whether counts must be written as a base line
            if version == 0:
                for stmt in tables.CREATE:
                    con.execute(stmt)
                con.execute("INSERT INTO device(id) VALUES (?)", (self._device(),))
                hits = self.import_hits
                # another device's log holds them already when it imported the same file
                if hits is not None and hits.exists() and not self._logged():
                    based = bool(tables.import_reference(con, hits, self.import_limit))
            else:
                self._check_schema(con, version)
                if version == 1:  # schema 2: the day each memory was first counted
                    con.execute("ALTER TABLE usage ADD COLUMN first_day INTEGER NOT NULL DEFAULT 0")
                if version < 3:  # schema 3: usage.db caches this device's log
                    con.execute(tables.DEVICE)
                    con.execute(tables.REPLAYS)
                    con.execute("INSERT INTO device(id) VALUES (?)", (self._device(),))
                    based = True
            if based and (state := tables.state(con)):
                fd = log.open_log(self.log, self.home)
                size = os.fstat(fd).st_size
                self._write(con, fd, log.base_line(state))
            if version < self.SCHEMA:
                con.execute(f"PRAGMA user_version={self.SCHEMA}")
            for stmt in self.INDEXES:
                con.execute(stmt)
            con.execute("COMMIT")
        except BaseException:
            _take_back(fd, size)
            _rollback(con)
            raise
        finally:
            if fd >= 0:
                os.close(fd)

    def _logged(self) -> bool:
        """Whether any device has a usage log."""
        return any((d / LOG).exists() for d in device_dirs(self.path.parent))

    def _device(self) -> str:
        """This device's id (the name of its folder)."""
        return self.log.parent.name

    def _write(self, con: sqlite3.Connection, fd: int, data: bytes) -> None:
        """Append ``data`` to this device's log (open as ``fd``) and note in usage.db how far
        the log now is. Whether to fsync: see :data:`SYNC`."""
        end = log.write_line(fd, self.log, data, sync=SYNC)
        con.execute("UPDATE device SET log_ino = ?, log_size = ?", (os.fstat(fd).st_ino, end))

    def _catch_up(self, con: sqlite3.Connection, fd: int) -> None:
        """Make the tables this device's log replayed (open as ``fd``) unless they are already:
        usage.db of another device, or behind its log (a kill between a line's append and the
        commit), or a log replaced, is rebuilt from the log, its presence included: else the
        next line's diff would be taken against a state the log does not have."""
        st = os.fstat(fd)
        row = con.execute("SELECT id, log_ino, log_size FROM device").fetchone()
        own = self._device()
        if row is not None and row[0] == own and _same(row[1], row[2], st):
            return
        with log.locked():
            tables.load(con, log.replayed(self.log))
        con.execute("DELETE FROM device")
        con.execute(
            "INSERT INTO device(id, log_ino, log_size) VALUES (?, ?, ?)",
            (own, st.st_ino, st.st_size),
        )
        self._synced.clear()

    def record(
        self,
        present: Mapping[str, frozenset[str]],
        hits: Mapping[str, set[str]],
        day: int,
    ) -> None:
        """Count one recall in one transaction (see the module docstring for the cost).

        Waits at most :data:`RECORD_WAIT` seconds for a lock another program holds.

        Raises:
            StateError: usage.db or this device's log cannot be written (nothing of this
                recall is counted).
        """
        con = self._connect(RECORD_WAIT)
        try:
            con.execute(f"PRAGMA busy_timeout={int(RECORD_WAIT * 1000)}")
            try:
                self._record(con, present, hits, day)
            finally:
                with contextlib.suppress(sqlite3.Error):
                    con.execute("PRAGMA busy_timeout=60000")
        except (OSError, sqlite3.Error) as e:
            raise self._fail(e) from e

    def _record(
        self,
        con: sqlite3.Connection,
        present: Mapping[str, frozenset[str]],
        hits: Mapping[str, set[str]],
        day: int,
    ) -> None:
        con.execute("BEGIN IMMEDIATE")
        fd = size = -1
        try:
            fd = log.open_log(self.log, self.home)
            self._catch_up(con, fd)
            changes: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
            for scope, keys in present.items():
                row = con.execute("SELECT n FROM counters WHERE scope=?", (scope,)).fetchone()
                n = row[0] if row else 0
                fp = fingerprint(keys)
                old = con.execute("SELECT fp FROM fingerprints WHERE scope=?", (scope,)).fetchone()
                changes[scope] = (frozenset(), frozenset())
                if not old or old[0] != fp:
                    # The stored set is the one this object synced last when the stored
                    # fingerprint is still its own: then no need to read it back.
                    mine = self._synced.get(scope)
                    known = mine[1] if mine and old and old[0] == mine[0] else None
                    changes[scope] = tables.sync_presence(con, scope, keys, n, day, known)
                    con.execute(
                        "INSERT OR REPLACE INTO fingerprints(scope, fp) VALUES (?, ?)",
                        (scope, fp),
                    )
                self._synced[scope] = (fp, keys)
                con.execute(
                    "INSERT INTO counters(scope, n) VALUES (?, 1) "
                    "ON CONFLICT(scope) DO UPDATE SET n = n + 1",
                    (scope,),
                )
                tables.no_day_after(con, scope, day)
            for scope, hit_keys in hits.items():
                con.executemany(
                    "UPDATE usage SET hits = hits + 1, last_hit_day = ? "
                    "WHERE scope = ? AND key = ?",
                    [(day, scope, k) for k in hit_keys],
                )
            # the line after the changes are known and before COMMIT: the log's order is the
            # transactions' order
            size = os.fstat(fd).st_size
            self._write(con, fd, log.recall_line(day, changes, hits))
            con.execute("COMMIT")
        except BaseException:
            _take_back(fd, size)  # a failed COMMIT: the line must not count either
            _rollback(con)
            # what this object remembers of the presence it wrote was not written after all
            self._synced.clear()
            raise
        finally:
            if fd >= 0:
                os.close(fd)

    def stats(self, scope: str) -> dict[str, Stat]:
        """Usage of every key ever counted in ``scope`` by any device: every device's log under
        ``<state_dir>/devices/`` merged (:func:`merge`; a folder that is a copy of another's
        is left out, :func:`talos.sync.device.copies`), this device's read from usage.db when
        it is up to date with the log (read-only when usage.db cannot be written).

        Raises:
            StateError: usage.db is damaged, newer, or cannot be read.
            InputError: ``TALOS_DEVICE`` cannot name a device.
        """
        own = self._device()
        parts = [self._own(scope)]
        copied = copies(self.path.parent, own)  # a folder copied under a new name counts once
        for folder in device_dirs(self.path.parent):
            if folder.name != own and folder.name not in copied:
                parts.append(self._other(folder.name, folder / LOG, scope))
        return merge(parts)

    def _other(self, device: str, path: Path, scope: str) -> dict[str, tuple[int, int, int, int]]:
        """Another device's counts of ``scope``: its log replayed, from the snapshot kept in
        usage.db when this process has not read it yet; a snapshot kept anew when the replay
        went far past it (:func:`talos.usage.log.snapshot`). The snapshot is a cache: one that
        cannot be read or written is left aside."""
        with log.locked():
            con = getattr(self._local, "con", None)
            if not log.known(path) and con is not None:
                with contextlib.suppress(sqlite3.Error):
                    row = con.execute("SELECT state FROM replays WHERE device=?", (device,))
                    got = row.fetchone()
                    if got is not None:
                        log.seed(path, got[0])
            replay = log.replayed(path)
            scoped = replay.scopes.get(scope) if replay is not None else None
            counts = scoped.counts() if scoped is not None else {}
            snap = log.snapshot(path)
        if snap is not None and con is not None and self._keep(con, device, snap[1]):
            log.kept(path, snap[0])
        return counts

    @staticmethod
    def _keep(con: sqlite3.Connection, device: str, state: str) -> bool:
        """Keep ``state`` as the snapshot of ``device``'s log, unless usage.db is busy or
        read-only (waits for no one: it is only a cache)."""
        try:
            con.execute("PRAGMA busy_timeout=0")
            try:
                con.execute("BEGIN IMMEDIATE")
                con.execute(
                    "INSERT OR REPLACE INTO replays(device, state) VALUES (?, ?)", (device, state)
                )
                con.execute("COMMIT")
            finally:
                _rollback(con)
                con.execute("PRAGMA busy_timeout=60000")
        except sqlite3.Error:
            return False
        return True

    def _own(self, scope: str) -> dict[str, tuple[int, int, int, int]]:
        """This device's counts of ``scope``: usage.db's when it caches this device's log up
        to its end (or, not migrated yet on a read-only disk, when there is no log), else the
        log replayed."""
        con = self._reader()
        if con is not None:
            try:
                con.execute("BEGIN")  # one snapshot of the counts and of how far they are
                try:
                    version = con.execute("PRAGMA user_version").fetchone()[0]
                    row = None
                    if version >= 3:
                        row = con.execute("SELECT id, log_ino, log_size FROM device").fetchone()
                    counts = tables.scope_counts(con, scope)
                finally:
                    con.execute("COMMIT")
            except sqlite3.Error as e:
                raise self._fail(e) from e
            try:
                st: os.stat_result | None = os.lstat(self.log)
            except OSError:
                st = None
            if st is not None and not stat.S_ISREG(st.st_mode):  # the log is refused: warn
                log.replayed(self.log)  # and show what usage.db has
                fresh = version < 3 or (row is not None and row[0] == self._device())
            elif version < 3:  # not migrated (a read-only disk): this device's unless it has a log
                fresh = st is None or not st.st_size
            else:
                fresh = row is not None and row[0] == self._device() and _same(row[1], row[2], st)
            if fresh:
                return counts
        with log.locked():
            replay = log.replayed(self.log)
            got = replay.scopes.get(scope) if replay is not None else None
            return got.counts() if got is not None else {}


#: Whether a recall's log line is fsynced before usage.db commits (usage.db's own commit
#: fsyncs its WAL). Measured in-process, ``record`` on a 3,000-key home (median of 5 x 200
#: recalls, this VM): 0.29 ms before the logs, 0.49 ms with the line, 0.72 ms with its fsync.
#: The 0.2 ms is affordable beside a recall's 1.4-5 ms of writes, and the log, the counts that
#: travel, is then never behind the cache after a power cut.
SYNC = True
#: Name of a device's usage log in its folder.
LOG = "usage.jsonl"


def _same(ino: int, size: int, st: os.stat_result | None) -> bool:
    """Whether a log noted as ``(ino, size)`` is the file ``st`` still (an empty one is any,
    ``None`` a missing one)."""
    if st is None:
        return not size
    return size == st.st_size and (not size or ino == st.st_ino)


def _take_back(fd: int, size: int) -> None:
    """Truncate the log open as ``fd`` back to ``size`` bytes (when both are known): the line
    of a transaction that did not commit is not counted either."""
    if fd >= 0 and size >= 0:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)


def merge(parts: Iterable[Mapping[str, tuple[int, int, int, int]]]) -> dict[str, Stat]:
    """Usage of several devices as one (design §9): ``seen`` and ``hits`` summed per key,
    ``last_hit_day`` the latest, ``first_day`` the earliest known (0: known by none). Sorted
    by key, so every device shows the same counts in the same order."""
    out: dict[str, list[int]] = {}
    for part in parts:
        for key, (seen, hits, last, first) in part.items():
            got = out.get(key)
            if got is None:
                out[key] = [seen, hits, last, first]
                continue
            got[0] += seen
            got[1] += hits
            got[2] = max(got[2], last)
            if first and (not got[3] or first < got[3]):
                got[3] = first
    return {k: Stat(*out[k]) for k in sorted(out)}


class JsonUsage:
    """The reference's ``recall_hits.json`` shape, for :mod:`talos.compat` (design §9.3).

    ``{"事实:<text80>": [seen, hits, last_hit_day], ...}`` with Chinese kind names. Every recall
    rewrites the whole file (that is the reference format's cost), atomically and under a lock.
    Only the ``global`` scope exists in this shape.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, list[int]]:
        try:
            data = json_value(read_regular(self.path, MAX_STATE_BYTES).decode("utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    @staticmethod
    def _ref_key(key: str) -> str:
        kind, _, text = key.partition(":")
        return f"{_OUR_KINDS.get(kind, kind)}:{text}"

    def record(
        self,
        present: Mapping[str, frozenset[str]],
        hits: Mapping[str, set[str]],
        day: int,
    ) -> None:
        """Add one ``seen`` to every present key and one hit to every hit key."""
        keys = present.get("global", frozenset())
        hit = {self._ref_key(k) for k in hits.get("global", set())}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with lock(f"{self.path}.lock", 60):  # only this reference format needs a lock file
            data = self._load()
            for key in keys:
                ref = self._ref_key(key)
                old = data.get(ref)
                entry = list(old)[:3] if isinstance(old, list) else []
                entry += [0] * (3 - len(entry))
                seen, hits_n, last = (_count(x) for x in entry)
                if ref in hit:
                    data[ref] = [seen + 1, hits_n + 1, day]
                else:
                    data[ref] = [seen + 1, hits_n, last]
            atomic_write_text(self.path, json_dumps(data))

    def stats(self, scope: str) -> dict[str, Stat]:
        """Usage by our key (``fact:<text80>``); only the ``global`` scope has any."""
        if scope != "global":
            return {}
        out: dict[str, Stat] = {}
        for key, entry in self._load().items():
            if not isinstance(entry, list) or len(entry) < 2:
                continue
            kind, _, text = key.partition(":")
            vals = [_count(x) for x in entry[:3]] + [0]
            out[f"{_REFERENCE_KINDS.get(kind, kind)}:{text}"] = Stat(vals[0], vals[1], vals[2])
        return out
