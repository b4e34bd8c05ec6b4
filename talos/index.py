"""The persistent index: what talos has already read, so recall does not read it again (SPEC §11).

Files stay the source of truth; the index (SQLite, WAL, ``<state>/index.db``) is a cache derived
from them and can always be rebuilt. It holds the parsed facts of memory.md (with the fact
filter's verdict), the episode of every session file, with the size and mtime of what they
came from, and in ``blocks``: the merged episode block (:class:`talos.block.EpisodeBlock`, per
version of the sessions), the records block of the last view built
(:class:`talos.block.RecordsBlock`, per token of all it depends on) and the last skills scan
(:func:`talos.safety.scan_skills`, per tree signature). Skills themselves (a few dozen small
files) are read directly. Schema changes are migrations (:data:`MIGRATIONS`); an index of
unknown schema, application id or columns is rebuilt.

Refresh is incremental and cheap when nothing changed (two ``stat`` calls in a process that
refreshed before; one read transaction, no write, in a new one):

* memory.md: one ``stat``; when it changed, the file is split into lines and only lines not seen
  before are parsed (a one-line edit parses one line).
* sessions: one ``stat`` of the folder. Adding, removing or renaming a file changes the folder's
  mtime; then the folder is listed and only new files are read. Files without a request yet
  (a session just started) are re-checked on every refresh. An old file rewritten in place
  under the same name is picked up by ``talos index`` (a full sweep of sizes and mtimes), and at
  once in recursive mode (``DIR/**``), which always sweeps. When the episodes only grew after
  the newest one ever seen (time-stamped names) or lost some, the episode block loses the
  removed episodes (logged in ``dropped``) and is extended by the new rows
  (:meth:`Index.episode_block`, ``sessions_base``, ``sessions_high``) instead of merged again.
* paths: rows and signatures are keyed by path, so paths arrive canonical
  (:func:`talos.home.canonical`): two spellings of one home are one index.
* a file changed within a tick of the file system's clock may change again unseen under the
  same signature: it is looked at again on the next call (:func:`_settled`). Another process's
  changes show in the change tokens, read on every call (one query).

A damaged or foreign index file is detected (``sqlite3.DatabaseError``, a wrong application
id or schema) and rebuilt, never trusted; a file that is not talos's by its header (another
program's database) is moved aside to ``index.db.not-talos-STAMP``, never deleted. A kill
during a refresh rolls back its transaction.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from talos import fsutil
from talos.graph import BLOCK_VERSION, BlockError, EpisodeBlock
from talos.home import Paths
from talos.model import Node
from talos.safety import keep_fact, mask_secrets
from talos.sources.facts import (
    MAX_FACT_BYTES,
    bad_lines_warning,
    claimed_scopes,
    long_lines_warning,
    masked_fields,
    parse_fact_line,
    read_memory,
    tag_reasons,
)
from talos.sources.sessions import episode_node, session_names, sessions_root
from talos.text import matching_keywords
from talos.warn import audible, warn

__all__ = ["SCHEMA", "Index", "RefreshStats"]

#: :meth:`Index.check` parses every line of a memory.md of at most this many lines again;
#: of a longer one, :data:`CHECK_SAMPLE` rows (and every line without a row).
CHECK_ALL_LINES = 50_000
CHECK_SAMPLE = 2_000

#: A block extended by this many episodes since the stored one is stored again
#: (:meth:`Index.episode_block`); until then each process extends the stored one.
STORE_AFTER = 256

#: Schema version (``PRAGMA user_version``). An older index is migrated (:data:`MIGRATIONS`);
#: a newer or unknown one is rebuilt.
SCHEMA = 3
#: ``PRAGMA application_id``: tells our index from any other SQLite file.
APP_ID = 0x7A105  # "talos"

Progress = Callable[[int, int], None]

#: Statements that bring an index of schema ``v - 1`` to schema ``v`` (run in one transaction).
MIGRATIONS: dict[int, tuple[str, ...]] = {
    # 2: the merged episode block (talos/block.py), stored per version of the sessions.
    # 2: the merged episode block (talos/block.py), stored per version of the sessions; the
    #    fact filter's verdict per line (facts.safe), so a process does not re-scan 3,000 lines;
    #    an index of the sessions still without a request.
    2: (
        "CREATE TABLE IF NOT EXISTS blocks(name TEXT PRIMARY KEY, token TEXT, data BLOB)",
        "ALTER TABLE facts ADD COLUMN safe INTEGER",
        # sessions without a request yet, looked at on every refresh: found without a scan
        "CREATE INDEX IF NOT EXISTS sessions_pending ON sessions(path) WHERE text IS NULL",
        "DELETE FROM facts",
        "DELETE FROM meta WHERE k='memory_sig'",
    ),
    # 3: the log of removed sessions, so the episode block loses their episodes instead of
    #    being merged again (EpisodeBlock.remove; issue 12 item 7).
    3: ("CREATE TABLE IF NOT EXISTS dropped(seq INTEGER PRIMARY KEY, path TEXT, sortkey TEXT)",),
}


#: Every (table, column) of schema :data:`SCHEMA`; an index missing one is rebuilt.
COLUMNS = {
    ("meta", "k"),
    ("meta", "v"),
    *(("facts", c) for c in ("line", "raw", "text", "kw", "src", "born", "fields", "safe")),
    *(("sessions", c) for c in ("path", "sortkey", "size", "mtime_ns", "text", "kw")),
    ("blocks", "name"),
    ("blocks", "token"),
    ("blocks", "data"),
    *(("dropped", c) for c in ("seq", "path", "sortkey")),
}


def _readers_fingerprint() -> str:
    """A digest of the code that decides what a file's rows are (readers, masking, keywords):
    rows indexed by other code are re-read, never trusted."""
    import hashlib

    import talos.prefilter
    import talos.safety
    import talos.secrets
    import talos.sources.facts
    import talos.sources.sessions
    import talos.text

    h = hashlib.sha256()
    mods = (talos.sources.facts, talos.sources.sessions, talos.safety, talos.text)
    for mod in (*mods, talos.secrets, talos.prefilter):
        try:
            h.update(Path(str(mod.__file__)).read_bytes())
        except OSError:
            h.update(str(mod).encode())
    return h.hexdigest()[:16]


#: Fingerprint of the reading code; stored in the index, compared on every refresh.
READERS = _readers_fingerprint()


@dataclass(slots=True)
class RefreshStats:
    """What a refresh did: files read, files dropped, whether memory.md was re-read."""

    sessions_read: int = 0
    sessions_dropped: int = 0
    facts_reparsed: bool = False
    lines_parsed: int = 0
    swept: bool = False

    @property
    def changed(self) -> bool:
        """True when the indexed content may differ from before."""
        return bool(self.sessions_read or self.sessions_dropped or self.facts_reparsed)


def _stat(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
        return (st.st_size, st.st_mtime_ns)
    except OSError:
        return (-1, -1)


def _file_sig(path: Path) -> tuple[int, int, int]:
    """Size, mtime and ctime: a same-size edit whose mtime was put back (``touch -r``,
    ``rsync -t``) still changes the ctime, which no one can set (tests/test_index_attack.py)."""
    try:
        st = path.stat()
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    except OSError:
        return (-1, -1, -1)


def _dir_sig(path: Path) -> tuple[int, ...]:
    """A folder's size, mtime, ctime, device and inode: a folder swapped for another (a
    symlink retargeted, a folder moved in) is another inode, whatever its files are called."""
    try:
        st = path.stat()
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino)
    except OSError:
        return (-1, -1, -1, -1, -1)


def _settled(sig: tuple[Any, ...]) -> tuple[Any, ...]:
    """``sig``, or a signature that matches nothing when the file changed so recently that
    another change within the same tick of the file system's clock would leave it equal
    (a session renamed into place right after a listing; "racy git"): such a file is looked
    at again on the next call. A tick is a few ms on file systems with sub-second times
    (window 20 ms), up to 2 s on others (``sig`` is ``(size, mtime_ns, ctime_ns, ...)``)."""
    if len(sig) < 3 or sig[1] < 0:
        return sig
    changed = max(sig[1], sig[2])
    window = 20_000_000 if sig[1] % 1_000_000_000 else 2_000_000_000
    now = time.time_ns()
    if now - changed < window:
        return (*sig, "racy", now)  # unequal to any other signature, even the next one
    return sig


_UNSEEN: Any = object()


def _damaged(table: str, why: str) -> sqlite3.DatabaseError:
    """The error for a row of ``table`` that talos did not write as it is (hostile pass: a
    ``fields`` of ``{`` ended recall in "unexpected error JSONDecodeError", a NULL keyword
    column in AttributeError, and an episode's keywords of another type dropped it without a
    word). Callers treat it as any damaged index: read the files directly."""
    return sqlite3.DatabaseError(
        f"a row of {table} is not what talos writes ({why}); run talos index --rebuild"
    )


def _fact_rows(rows: list[Any]) -> list[Any]:
    """``rows`` of ``facts`` (line, raw, text, kw, src, born, fields, safe), checked."""
    for line, raw, text, kw, src, born, fields, safe in rows:
        if not (
            isinstance(line, int)
            and all(isinstance(v, str) for v in (raw, text, kw, src, born, fields))
            and (safe is None or isinstance(safe, int))
        ):
            raise _damaged("facts", f"line {line!r}")
    tagged = [r[6] for r in rows if r[6]]
    for value, text in zip(_fields_of(tagged), tagged, strict=True):  # one decode for all
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise _damaged("facts", f"fields {text[:40]!r}")
    return rows


def _session_rows(rows: list[Any]) -> list[Any]:
    """``rows`` of ``sessions`` (path, text, kw[, sortkey]) read for episodes, checked."""
    for row in rows:
        if not all(isinstance(v, str) for v in row):
            raise _damaged("sessions", f"path {row[0]!r}")
    return rows


def _fields_of(texts: list[str]) -> list[dict[str, str]]:
    """The tag fields stored as JSON objects (``facts.fields``), decoded in one call."""
    if not texts:
        return []
    try:
        got = json.loads("[" + ",".join(texts) + "]")
    except (ValueError, RecursionError):
        got = None
    if not isinstance(got, list) or len(got) != len(texts):  # a damaged row: each on its own
        return [_field(t) for t in texts]
    return got


def _field(text: str) -> Any:
    """One row's tag fields, or ``None`` when they do not decode (a damaged row)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _parse_line(line: str) -> tuple[str, str, str, str, str, int] | None:
    """What a memory.md line is in the facts table: ``(text, keywords, src, born, fields,
    safe)``, or ``None`` when it is no fact (SPEC §3.1, §8.2). A line the fact filter
    withholds is kept with its credentials masked (:func:`indexed_fact`)."""
    parsed = parse_fact_line(line)
    if parsed is None:
        return None
    safe = keep_fact(parsed.text) and not (parsed.fields and tag_reasons(line))
    text, kw = indexed_fact(parsed.text, safe)
    if not kw:
        return None
    kept = parsed.fields if safe else masked_fields(parsed.fields)
    fields = json.dumps(kept, ensure_ascii=False) if kept else ""
    return (text, " ".join(sorted(kw)), parsed.src, parsed.born, fields, int(safe))


def indexed_fact(text: str, safe: bool) -> tuple[str, frozenset[str]]:
    """A fact's text and keywords as the index keeps them: a line the fact filter withholds
    (``safe`` false: it may hold a credential) with every credential masked, so index.db never
    holds one (hostile pass of issue 13 item 6: it kept "hunter2024x" as a keyword)."""
    if not safe:
        text = mask_secrets(text)
    return text, matching_keywords(text)


def _stored_line(line: str, entry: tuple[Any, ...]) -> str:
    """The raw line a facts row keeps: masked when the line is withheld (``entry[-1]``)."""
    raw = line.rstrip("\r")
    return raw if entry[-1] else mask_secrets(raw)


class Index:
    """The index of one home.

    Args:
        paths: the home's paths; the index lives in ``paths.state_dir / "index.db"``.

    The object keeps the last seen file signatures in memory, so a refresh that finds nothing
    changed costs two ``stat`` calls and no SQL. ``generation`` increases whenever the indexed
    content changed, so callers can cache what they derive from it.
    """

    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self.file = paths.state_dir / "index.db"
        self.generation = 0
        self.facts_generation = 0
        self.sessions_generation = 0
        self._con: sqlite3.Connection | None = None
        self._memory_sig: tuple[Any, ...] | None = None
        self._dir_sig: tuple[Any, ...] | None = None
        self._pending: dict[str, tuple[int, int]] = {}
        self._line_cache: dict[str, tuple[str, str, str, str, str, int] | None] = {}
        self._rows: list[tuple[Any, ...]] | None = None  # fact rows as of _rows_token
        self._rows_token: str | None = None
        self._fact_nodes: dict[tuple[Any, ...], Node] = {}
        self._blobs: list[bytes] | None = None  # memory.md's lines as of _rows
        self._row_at: dict[int, int] = {}  # line number -> index in _rows
        self._fact_out: tuple[list[Any], list[tuple[Node, bool]]] | None = None
        self._patched_from: list[Any] | None = None  # the rows _patch_facts last edited
        self._tokens: tuple[str | None, str | None] = (None, None)
        # the sort keys of the session rows as of a sessions token (read once per process)
        self._keys: tuple[str | None, set[str]] | None = None
        self._keys_next: set[str] | None = None  # this refresh's keys, before its token
        self._warned: tuple[bytes, list[int]] | None = None  # memory.md bytes warned about
        self._unreadable: str | None = None  # why memory.md could not be read, warned about
        self._memory_bytes: bytes | None = None  # memory.md as last read, while its sig is racy

    # -- connection and schema -------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._con is not None:
            return self._con
        self.file.parent.mkdir(parents=True, exist_ok=True)
        try:
            con = self._open()
        except sqlite3.OperationalError:
            # Locked, busy, unreadable: not damage. Discarding here deleted the index another
            # process was making (tests/test_index_reliability.py, 3 processes on a new home).
            raise
        except sqlite3.DatabaseError as e:
            aside = self._discard()
            if aside is None:
                warn(f"{self.file}: damaged or foreign index ({e}); rebuilding it from the files")
            else:
                warn(
                    f"{self.file}: not talos's index ({e}); moved to {aside}; a new index is "
                    "built from the files"
                )
            con = self._open()
        self._con = con
        return con

    def _open(self) -> sqlite3.Connection:
        fsutil.check_regular_or_missing(self.file)  # SQLite would take a FIFO (issue 12.3)
        con = sqlite3.connect(self.file, timeout=60, isolation_level=None)
        try:
            con.execute("PRAGMA busy_timeout=60000")
            # A cache of the files: in WAL mode NORMAL never corrupts the file, and a commit
            # lost to a power cut is re-read from the files. FULL spent an fsync per refresh.
            con.execute("PRAGMA synchronous=NORMAL")
            # One snapshot: read apart, a concurrent _create could commit between the reads,
            # and the half-made index was taken for a foreign one and deleted
            # (tests/test_concurrency.py, 4 processes on a fresh home).
            app, version, tables = con.execute(
                "SELECT (SELECT application_id FROM pragma_application_id),"
                " (SELECT user_version FROM pragma_user_version),"
                " (SELECT count(*) FROM sqlite_master)"
            ).fetchone()
            if tables and (app != APP_ID or not 1 <= version <= SCHEMA):
                raise sqlite3.DatabaseError(
                    f"application id {app:#x}, schema {version}; expected {APP_ID:#x}, {SCHEMA}"
                )
            # Switching to WAL fails at once with "database is locked" (no busy handler) while
            # another connection has the new file open: wait for it, as busy_timeout would
            # (tests/test_index_reliability.py, 3 processes opening a new home at once).
            for wait in range(6000):
                try:
                    con.execute("PRAGMA journal_mode=WAL")
                    break
                except sqlite3.OperationalError as e:
                    if wait == 5999 or "locked" not in str(e):
                        raise
                    time.sleep(0.01)
            if not tables:
                self._create(con)
            elif version < SCHEMA:
                self._migrate(con)
            if version == SCHEMA or not tables:
                columns = {
                    (t, c)
                    for t, c in con.execute(
                        "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p"
                        " WHERE m.type = 'table'"
                    )
                }
                if not columns >= COLUMNS:  # right number, wrong tables: not our index
                    missing = ", ".join(sorted(f"{t}.{c}" for t, c in COLUMNS - columns))
                    raise sqlite3.DatabaseError(f"schema {version} without {missing}")
            return con
        except BaseException:
            con.close()
            raise

    def _create(self, con: sqlite3.Connection) -> None:
        """Create the schema of version 1 and migrate it to :data:`SCHEMA`, under the write
        lock; a process that finds another one did it first changes nothing (3 processes
        opening a new home at once, tests/test_index_reliability.py)."""
        con.execute("BEGIN IMMEDIATE")
        try:
            (tables,) = con.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if not tables:
                for stmt in (
                    "CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT)",
                    "CREATE TABLE facts(line INTEGER PRIMARY KEY, raw TEXT, text TEXT,"
                    " kw TEXT, src TEXT, born TEXT, fields TEXT)",
                    "CREATE TABLE sessions(path TEXT PRIMARY KEY, sortkey TEXT,"
                    " size INTEGER, mtime_ns INTEGER, text TEXT, kw TEXT)",
                    "CREATE INDEX sessions_order ON sessions(sortkey)",
                ):
                    con.execute(stmt)
                con.execute(f"PRAGMA application_id={APP_ID}")
                con.execute("PRAGMA user_version=1")
            self._upgrade(con)
            con.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            raise

    def _upgrade(self, con: sqlite3.Connection) -> None:
        """Run the :data:`MIGRATIONS` from the stored schema up to :data:`SCHEMA` (inside
        the caller's write transaction)."""
        (version,) = con.execute("PRAGMA user_version").fetchone()
        for v in range(version + 1, SCHEMA + 1):
            for stmt in MIGRATIONS[v]:
                con.execute(stmt)
            con.execute(f"PRAGMA user_version={v}")

    def _migrate(self, con: sqlite3.Connection) -> None:
        """Run the :data:`MIGRATIONS` from the stored schema up to :data:`SCHEMA`."""
        con.execute("BEGIN IMMEDIATE")
        try:
            self._upgrade(con)  # reads the version under the lock: another may have done it
            con.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            raise

    def _ours(self) -> bool:
        """Whether ``index.db`` is talos's by its header: a SQLite file whose application id
        (bytes 68-71) is :data:`APP_ID`. What else it is (another program's database, bytes
        that are no database) may be someone's data."""
        try:
            with fsutil.open_regular(self.file) as f:
                head = f.read(72)
        except OSError:
            return True  # gone, or unreadable: nothing to keep
        return head[:16] == b"SQLite format 3\x00" and head[68:72] == APP_ID.to_bytes(4, "big")

    def _discard(self) -> Path | None:
        """Remove a damaged ``index.db`` (and its ``-wal``, ``-shm``) to rebuild it; a file that
        is not talos's by its header is moved aside instead, never deleted (a valid SQLite
        file of another program at index.db was deleted with its data, hostile pass).

        Returns:
            Where the file was moved, or ``None`` when it was removed.
        """
        aside = None
        if not self._ours():
            stamp = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"
            aside = self.file.with_name(f"{self.file.name}.not-talos-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            with suppress(OSError):
                if aside is None:
                    os.unlink(str(self.file) + suffix)
                else:
                    os.rename(str(self.file) + suffix, str(aside) + suffix)
        return aside if aside is not None and aside.exists() else None

    def close(self) -> None:
        """Close the connection (it reopens on demand)."""
        if self._con is not None:
            self._con.close()
            self._con = None

    def _meta(self, con: sqlite3.Connection, key: str) -> str | None:
        row = con.execute("SELECT v FROM meta WHERE k=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    # -- refresh ---------------------------------------------------------------------------

    def refresh(self, full: bool = False, progress: Progress | None = None) -> RefreshStats:
        """Bring the index up to date with the files (see the module docstring for the cost).

        Args:
            full: sweep every session file's size and mtime (``talos index``).
            progress: called as ``progress(done, total)`` while session files are read.

        Returns:
            What changed. ``generation`` is increased when anything did.

        Raises:
            OSError, sqlite3.Error: the state folder is not writable or the disk is full.
        """
        stats = RefreshStats()
        raw_sig = _file_sig(self.paths.memory_file)
        memory_sig = _settled(raw_sig)
        known = self._memory_sig
        if known is not None and known[:3] == raw_sig != known and memory_sig == raw_sig:
            # Read within its last tick, settled since: the same bytes mean nothing changed
            # in that tick, and the signature can be trusted from now on (no write needed).
            with suppress(OSError):
                if read_memory(self.paths.memory_file) == self._memory_bytes:
                    self._memory_sig = memory_sig
        root, recursive = sessions_root(self.paths.sessions_dir)
        dir_sig = _settled(_dir_sig(root))
        quick = (
            not full
            and not recursive
            and memory_sig == self._memory_sig
            and dir_sig == self._dir_sig
            and all(_stat(Path(p)) == sig for p, sig in self._pending.items())
        )
        con = self._connect()
        if quick:
            # The files look unchanged to this process; another one may still have changed
            # the index (`talos index` after a session was rewritten in place): its tokens say.
            seen = (self._meta(con, "facts_token"), self._meta(con, "sessions_token"))
            if seen == self._tokens:
                return stats
        if not full and not recursive:
            tokens = self._unchanged(con, memory_sig, dir_sig)
            if tokens is not None:  # a new process on an up-to-date index: no write at all
                self._settle(stats, memory_sig, dir_sig, tokens)
                return stats
        con.execute("BEGIN IMMEDIATE")
        try:
            if self._meta(con, "readers") != READERS:
                # The code that turns files into rows changed (a reader, masking, keywords):
                # what was indexed before may differ from what it reads now. Start over.
                for table in ("facts", "sessions", "meta", "blocks", "dropped"):
                    con.execute(f"DELETE FROM {table}")
                con.execute("INSERT INTO meta(k, v) VALUES ('readers', ?)", (READERS,))
                self._line_cache = {}
                self._rows = self._blobs = self._patched_from = None
            if self._meta(con, "memory_sig") != json.dumps(
                [str(self.paths.memory_file), *memory_sig]
            ):
                self._refresh_facts(con, memory_sig, stats)
            stored_dir = self._meta(con, "sessions_sig")
            dir_key = json.dumps([str(self.paths.sessions_dir), *dir_sig])
            self._refresh_sessions(
                con,
                root,
                full or recursive or stored_dir != dir_key,
                full or recursive,
                stats,
                progress,
            )
            con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('sessions_sig', ?)", (dir_key,))
            # Another process may have refreshed the shared index first: this one then found
            # nothing to read and kept serving the rows it had loaded before, forever (two
            # Memory objects on one home, the second refreshing after an edit;
            # tests/test_index_reliability.py). Each change writes a fresh token; a token
            # this object has not seen means its rows are stale.
            for key, changed in (
                ("facts_token", stats.facts_reparsed),
                ("sessions_token", bool(stats.sessions_read or stats.sessions_dropped)),
            ):
                if changed:
                    con.execute(
                        "INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)",
                        (key, os.urandom(8).hex()),
                    )
            tokens = (self._meta(con, "facts_token"), self._meta(con, "sessions_token"))
            con.execute("COMMIT")
            if self._keys_next is not None:
                self._keys, self._keys_next = (tokens[1], self._keys_next), None
        except BaseException:
            with suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            # What this object remembers of the rows was set for the rolled-back transaction:
            # kept, the next refresh found "no change" and stored the new signature over the
            # old rows, so every other process missed the edit (tests/test_patch_attack.py).
            self._forget_rows()
            raise
        self._settle(stats, memory_sig, dir_sig, tokens)
        return stats

    def _forget_rows(self) -> None:
        """Drop every in-memory copy of the fact rows, line parses and session keys (re-read
        next time)."""
        self._keys = self._keys_next = None
        self._memory_bytes = None
        self._rows = self._blobs = self._patched_from = None
        self._rows_token = None
        self._line_cache = {}
        self._row_at = {}
        self._fact_out = None
        self._memory_sig = self._dir_sig = None

    def _unchanged(
        self, con: sqlite3.Connection, memory_sig: tuple[Any, ...], dir_sig: tuple[Any, ...]
    ) -> tuple[str | None, str | None] | None:
        """In one read transaction: the change tokens when the index already holds these
        files (same reader code, memory.md and sessions-folder signatures, no pending session
        grown since), else ``None`` (a write refresh is needed)."""
        con.execute("BEGIN")
        try:
            meta = dict(
                con.execute(
                    "SELECT k, v FROM meta WHERE k IN ('readers', 'memory_sig', 'sessions_sig',"
                    " 'facts_token', 'sessions_token')"
                ).fetchall()
            )
            pending = con.execute(
                "SELECT path, size, mtime_ns FROM sessions WHERE text IS NULL"
            ).fetchall()
        finally:
            con.execute("COMMIT")
        if (
            meta.get("readers") != READERS
            or meta.get("memory_sig") != json.dumps([str(self.paths.memory_file), *memory_sig])
            or meta.get("sessions_sig") != json.dumps([str(self.paths.sessions_dir), *dir_sig])
            or any(_stat(Path(p)) != (size, mtime) for p, size, mtime in pending)
        ):
            return None
        self._pending = {p: (size, mtime) for p, size, mtime in pending}
        return meta.get("facts_token"), meta.get("sessions_token")

    def _settle(
        self,
        stats: RefreshStats,
        memory_sig: tuple[Any, ...],
        dir_sig: tuple[Any, ...],
        tokens: tuple[str | None, str | None],
    ) -> None:
        """Record what this refresh saw; bump the generations whose tokens changed."""
        self._memory_sig, self._dir_sig = memory_sig, dir_sig
        first = self.generation == 0
        facts_new = tokens[0] != self._tokens[0]
        sessions_new = tokens[1] != self._tokens[1]
        self._tokens = tokens
        if stats.facts_reparsed:
            self._rows_token = tokens[0]
        if facts_new or sessions_new or first:
            self.generation += 1
        if facts_new or first:
            self.facts_generation += 1
        if sessions_new or first:
            self.sessions_generation += 1

    def _refresh_facts(
        self, con: sqlite3.Connection, sig: tuple[Any, ...], stats: RefreshStats
    ) -> None:
        """Re-read memory.md; only lines not seen before are parsed."""
        try:
            data = read_memory(self.paths.memory_file)
        except FileNotFoundError:
            data = b""
        except OSError as e:
            if self._unreadable != e.strerror:  # once, not on every racy re-read
                self._unreadable = e.strerror
                warn(f"{self.paths.memory_file}: cannot read ({e.strerror}); no facts loaded")
            data = b""
        blobs = data.split(b"\n") if data else []
        self._memory_bytes = data if len(sig) > 3 else None  # kept only while racy
        if self._patch_facts(con, blobs, sig, stats):
            return
        rows = []
        bad: list[int] = []
        long: list[int] = []
        token = self._meta(con, "facts_token")
        old = self._rows if self._rows_token == token else None
        stored = None
        if old is None:
            stored = _fact_rows(
                con.execute(
                    "SELECT line, raw, text, kw, src, born, fields, safe FROM facts ORDER BY line"
                ).fetchall()
            )
        if not self._line_cache:
            # This object has parsed nothing yet (the index was built by another process):
            # the stored rows say what each known line parses to, so an edit still parses
            # only the edited line, not 3,000 (SPEC §11).
            old_rows = self._rows or stored or []
            # (a withheld line's row keeps its line masked: it is no key, it is parsed again)
            self._line_cache = {r[1]: tuple(r[2:]) for r in old_rows if r[7]}
        cache = self._line_cache
        fresh: dict[str, tuple[str, str, str, str, str, int] | None] = {}
        for no, blob in enumerate(blobs, 1):
            if len(blob) > MAX_FACT_BYTES:
                long.append(no)  # not a fact (parse_fact_line); never decoded, never stored
                continue
            try:
                line = blob.decode("utf-8")
            except UnicodeDecodeError:
                bad.append(no)
                continue
            if line in fresh:
                entry = fresh[line]
            elif line in cache:
                entry = fresh[line] = cache[line]
            else:
                stats.lines_parsed += 1
                entry = fresh[line] = _parse_line(line)
            if entry is not None:
                rows.append((no, _stored_line(line, entry), *entry))
        self._line_cache = fresh
        heard = [no for no in bad if audible(claimed_scopes(blobs[no - 1]))]  # §7.3
        loud = [no for no in long if audible(claimed_scopes(blobs[no - 1]))]
        if (heard or loud) and self._warned != (data, bad + long):  # once per content
            self._warned = (data, bad + long)
            if heard:
                warn(bad_lines_warning(self.paths.memory_file, heard))
            if loud:
                warn(long_lines_warning(self.paths.memory_file, loud))
        if old is None and token is not None and stored == rows:
            # Read again by a process that had not read it (a change within its tick looked
            # at again, _settled): the same rows. No new token, so the stored records block
            # stays valid for every process.
            self._rows, self._rows_token, self._patched_from = rows, token, None
            self._blobs = blobs if not bad and not long else None
            self._row_at = {r[0]: i for i, r in enumerate(rows)}
            self._set_memory_sig(con, sig, stats, reparsed=False)
            return
        if old is None:
            con.execute("DELETE FROM facts")
            con.executemany("INSERT INTO facts VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        else:  # an edit writes the rows it changed, not the file
            before = {r[0]: r for r in old}
            after = {r[0]: r for r in rows}
            con.executemany(
                "DELETE FROM facts WHERE line=?",
                [(no,) for no in before.keys() - after.keys()],
            )
            con.executemany(
                "INSERT OR REPLACE INTO facts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [r for no, r in after.items() if before.get(no) != r],
            )
        self._rows, self._patched_from = rows, None
        self._blobs = blobs if not bad and not long else None
        self._row_at = {r[0]: i for i, r in enumerate(rows)}
        self._set_memory_sig(con, sig, stats)

    def _set_memory_sig(
        self,
        con: sqlite3.Connection,
        sig: tuple[Any, ...],
        stats: RefreshStats,
        reparsed: bool = True,
    ) -> None:
        con.execute(
            "INSERT OR REPLACE INTO meta(k, v) VALUES ('memory_sig', ?)",
            (json.dumps([str(self.paths.memory_file), *sig]),),
        )
        stats.facts_reparsed = stats.facts_reparsed or reparsed

    def _patch_facts(
        self,
        con: sqlite3.Connection,
        blobs: list[bytes],
        sig: tuple[Any, ...],
        stats: RefreshStats,
    ) -> bool:
        """Apply an edit that changed lines in place (same line count, each line a fact
        before and after, or neither) to the rows this object wrote last: compare the raw
        lines, parse and write only the changed ones; unchanged rows keep their objects.
        ``False`` when a full re-read is needed (SPEC §11: a one-line edit costs one line)."""
        prev, rows = self._blobs, self._rows
        if (
            prev is None
            or rows is None
            or len(prev) != len(blobs)
            or self._rows_token != self._meta(con, "facts_token")
        ):
            return False
        changed = [i for i, (a, b) in enumerate(zip(prev, blobs, strict=True)) if a != b]
        if len(changed) > 64:
            return False
        if not changed:  # looked at again (a recent change, _settled): same lines, no news
            self._blobs = blobs
            self._set_memory_sig(con, sig, stats, reparsed=False)
            return True
        new_rows = list(rows)
        writes: list[tuple[Any, ...]] = []
        for i in changed:
            try:
                line = blobs[i].decode("utf-8")
            except UnicodeDecodeError:
                return False
            entry = self._line_cache.get(line, _UNSEEN)
            if entry is _UNSEEN:
                stats.lines_parsed += 1
                entry = self._line_cache[line] = _parse_line(line)
            at = self._row_at.get(i + 1)
            if (at is None) != (entry is None):
                return False  # a line became a fact or stopped being one: rows shift
            if at is not None and entry is not None:
                new_rows[at] = row = (i + 1, _stored_line(line, entry), *entry)
                writes.append(row)
        con.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?, ?, ?, ?, ?, ?, ?)", writes)
        self._patched_from = rows
        self._rows, self._blobs = new_rows, blobs
        self._set_memory_sig(con, sig, stats)
        return True

    def _refresh_sessions(
        self,
        con: sqlite3.Connection,
        root: Path,
        listed: bool,
        sweep: bool,
        stats: RefreshStats,
        progress: Progress | None,
    ) -> None:
        # Rows are keyed by sort key (the path relative to the folder). Unlisted (the folder
        # is unchanged), only files without a request yet are looked at. Listed, a sweep or
        # a moved folder compares every row; otherwise only the sort keys are read (from
        # their index: no row is loaded) and only new, gone and pending files are looked at:
        # the listing of 30,000 files is the cost of a new session (SPEC §11).
        pending = {
            key: (path, size, mtime)
            for key, path, size, mtime in con.execute(
                "SELECT sortkey, path, size, mtime_ns FROM sessions WHERE text IS NULL"
            )
        }
        todo: list[tuple[str, str]] = []  # (path relative to the folder, full path)
        episodes_reread: set[str] = set()  # rows with a request that are read again
        # Whether the episodes only grew after the newest one ever seen (sessions arrive in
        # time order) or lost some: then the episode block is extended and loses the removed
        # episodes (logged in `dropped`), it is not merged again (episode_block; SPEC §11).
        appended = True
        # The newest sort key of an episode since the base was drawn (removed ones too): an
        # episode sorting before it is no append, even when the newest are gone.
        newest = con.execute("SELECT max(sortkey) FROM sessions WHERE text IS NOT NULL").fetchone()[
            0
        ]
        last = max(self._meta(con, "sessions_high") or "", newest or "") or None
        if listed:
            files = session_names(self.paths.sessions_dir, ordered=False)
            names = dict(files)
            here = json.dumps([str(root), *_dir_sig(root)[3:]])  # path, device, inode
            moved = sweep or self._meta(con, "sessions_root") != here
            if moved:
                stored = {
                    key: (path, size, mtime, bool(has))
                    for key, path, size, mtime, has in con.execute(
                        "SELECT sortkey, path, size, mtime_ns, text IS NOT NULL FROM sessions"
                    )
                }
                keys = set(stored)
            elif self._keys is not None and self._keys[0] == self._meta(con, "sessions_token"):
                keys = self._keys[1]  # no other process changed the sessions since
            else:
                keys = {k for (k,) in con.execute("SELECT sortkey FROM sessions")}
            gone = keys - names.keys()
            if gone:
                order = sorted(gone)
                rows = []
                for i in range(0, len(order), 500):  # SQLite allows 999 parameters (< 3.32)
                    part = order[i : i + 500]
                    rows += con.execute(
                        "SELECT path, text IS NOT NULL, sortkey FROM sessions WHERE sortkey IN "
                        f"({','.join('?' * len(part))})",
                        part,
                    ).fetchall()
                con.executemany("DELETE FROM sessions WHERE path=?", [(r[0],) for r in rows])
                con.executemany(
                    "INSERT INTO dropped(path, sortkey) VALUES (?, ?)",
                    [(r[0], r[2]) for r in rows if r[1]],
                )
                stats.sessions_dropped = len(rows)
            for rel, full in files:
                if rel not in keys:
                    todo.append((rel, full))
                elif moved:
                    path, size, mtime, has = stored[rel]
                    if path != full:  # the folder moved: its rows name the old paths
                        con.execute("DELETE FROM sessions WHERE path=?", (path,))
                    if path != full or _stat(Path(full)) != (size, mtime):
                        todo.append((rel, full))
                        if has:
                            episodes_reread.add(rel)
                elif rel in pending and _stat(Path(full)) != pending[rel][1:]:
                    todo.append((rel, full))
            todo.sort()
            con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('sessions_root', ?)", (here,))
            self._keys_next = (keys - gone) | {rel for rel, _full in todo}
            stats.swept = sweep
        else:
            todo.extend(
                (key, path)
                for key, (path, size, mtime) in pending.items()
                if _stat(Path(path)) != (size, mtime)
            )
        total = len(todo)
        for done, (rel, full) in enumerate(todo, 1):
            p = Path(full)
            size, mtime = _stat(p)
            node = episode_node(p, folder=root)
            if rel in episodes_reread:
                appended = False  # an episode was re-read: changed, or gone
            elif node is not None and last is not None and rel <= last:
                appended = False  # a new episode before the newest one
            con.execute(
                "INSERT OR REPLACE INTO sessions(path, sortkey, size, mtime_ns, text, kw) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    full,
                    rel,
                    size,
                    mtime,
                    None if node is None else node.text,
                    None if node is None else " ".join(sorted(node.keywords)),
                ),
            )
            if progress is not None and (done % 200 == 0 or done == total):
                progress(done, total)
        stats.sessions_read = total
        if (total or stats.sessions_dropped) and (
            not appended or self._meta(con, "sessions_base") is None
        ):
            # The episodes before the newest changed: a block built before cannot be brought
            # up to date. (Random per change and per home, so a block copied from elsewhere
            # never fits.) The log of removals starts again with the base.
            con.execute(
                "INSERT OR REPLACE INTO meta(k, v) VALUES ('sessions_base', ?)",
                (os.urandom(8).hex(),),
            )
            con.execute("DELETE FROM dropped")
            last = con.execute(
                "SELECT max(sortkey) FROM sessions WHERE text IS NOT NULL"
            ).fetchone()[0]
        elif total:
            now = con.execute("SELECT max(sortkey) FROM sessions WHERE text IS NOT NULL")
            last = max(last or "", now.fetchone()[0] or "") or None
        if total or stats.sessions_dropped:
            con.execute(
                "INSERT OR REPLACE INTO meta(k, v) VALUES ('sessions_high', ?)", (last or "",)
            )
        self._pending = {
            path: (size, mtime)
            for path, size, mtime in con.execute(
                "SELECT path, size, mtime_ns FROM sessions WHERE text IS NULL"
            )
        }

    # -- reading ---------------------------------------------------------------------------

    def facts(self) -> list[Node]:
        """Fact nodes in file order (unfiltered: ``keep_fact`` is the caller's)."""
        return [n for n, _safe in self.fact_rows()]

    def fact_rows(self) -> list[tuple[Node, bool]]:
        """Fact nodes in file order, each with :func:`talos.safety.keep_fact`'s verdict.

        The rows this object wrote at its last refresh are used as they are, and a node whose
        row and position are unchanged is the node built before: after a one-line edit only
        that line's node is new (SPEC §11).
        """
        rows = self._rows if self._rows_token == self._tokens[0] else None
        if rows is None:
            con = self._connect()
            con.execute("BEGIN")
            try:  # the rows and the token they belong to, from one snapshot
                token = self._meta(con, "facts_token")
                rows = _fact_rows(
                    con.execute(
                        "SELECT line, raw, text, kw, src, born, fields, safe FROM facts"
                        " ORDER BY line"
                    ).fetchall()
                )
            finally:
                con.execute("COMMIT")
            self._rows, self._rows_token, self._blobs = rows, token, None
            self._patched_from = None
        prev = self._fact_out
        if (
            prev is not None
            and prev[0] is self._patched_from
            and rows is self._rows
            and len(rows) == len(prev[0])
        ):
            # rows patched in place (_patch_facts): unchanged rows are the same objects
            src, before = prev
            out = [
                before[i] if rows[i] is src[i] else self._fact_node(i, rows[i])
                for i in range(len(rows))
            ]
            self._fact_out = (rows, out)
            return out
        if prev is not None and prev[0] is rows:
            return prev[1]
        path = str(self.paths.memory_file)
        old = self._fact_nodes
        # A row is known by its line and exact text: the rest is parsed from them by the
        # same readers (READERS). Each new row's tag fields are decoded in one call: a
        # json.loads per row was a third of building 1,000,000 nodes (issue 12 item 8).
        nodes: list[Node | None] = (
            [
                n if (n := old.get((row[0], row[1]))) is not None and n.order == i else None
                for i, row in enumerate(rows)
            ]
            if old
            else [None] * len(rows)
        )
        fields = _fields_of([r[6] for r, n in zip(rows, nodes, strict=True) if n is None and r[6]])
        at = 0
        for i, row in enumerate(rows):
            if nodes[i] is None:
                line, raw, text, kw, src, born, tag, _safe = row
                if tag:
                    got, at = fields[at], at + 1
                else:
                    got = {}
                kws = frozenset(kw.split())
                nodes[i] = Node("fact", text, kws, i, path, line, raw, "", "", src, born, got)
        built = cast(list[Node], nodes)  # every one is set above
        self._fact_nodes = {(r[0], r[1]): n for r, n in zip(rows, built, strict=True)}
        out = [(n, bool(r[7])) for n, r in zip(built, rows, strict=True)]
        self._fact_out = (rows, out)
        return out

    def _fact_node(self, i: int, row: tuple[Any, ...]) -> tuple[Node, bool]:
        line, raw, text, kw, src, born, fields, safe = row
        node = Node(
            kind="fact",
            text=text,
            keywords=frozenset(kw.split()),
            order=i,
            path=str(self.paths.memory_file),
            line=line,
            raw=raw,
            src=src,
            born=born,
            fields=json.loads(fields) if fields else {},
        )
        return node, bool(safe)

    def episodes(self, start: int = 0) -> list[Node]:
        """Episode nodes in load order (sorted by path relative to the sessions folder)."""
        con = self._connect()
        return [
            Node(
                kind="episode",
                text=text,
                keywords=frozenset(kw.split()),
                order=start + i,
                path=path,
            )
            for i, (path, text, kw) in enumerate(
                _session_rows(
                    con.execute(
                        "SELECT path, text, kw FROM sessions WHERE text IS NOT NULL"
                        " ORDER BY sortkey"
                    ).fetchall()
                )
            )
        ]

    def episode_block(self, prev: EpisodeBlock | None = None) -> EpisodeBlock:
        """The merged episodes of the indexed sessions as arrays (:mod:`talos.block`).

        Read from the index when it holds the block of the current sessions (one blob, no
        per-row work). When, since a block was built (``prev``, the caller's, or the stored
        one), sessions only arrived after the newest one or were removed, that block loses
        the removed episodes (:meth:`EpisodeBlock.remove`, from the log ``dropped``) and is
        extended by the new rows; otherwise the block is built from the session rows of one
        snapshot. Either way it is stored for the next process, unless the sessions changed
        meanwhile. A stored block that does not decode is rebuilt, never trusted.

        Args:
            prev: a block the caller holds (a long-lived :class:`talos.memory.Memory`).

        Raises:
            OSError, sqlite3.Error: as :meth:`refresh`.
        """
        token, base, block, change, store = self._block_snapshot(prev)
        if change is None:
            assert block is not None
            return block  # the stored block of the current sessions, or prev unchanged
        if block is not None:
            grown = _caught_up(block, change)
        else:
            grown = EpisodeBlock.build(change.rows)
            grown.last = change.rows[-1][3] if change.rows else ""
        grown.base = base
        return self._store_block(grown, token) if store else grown

    def _block_snapshot(
        self, prev: EpisodeBlock | None = None
    ) -> tuple[str, str, EpisodeBlock | None, _Change | None, bool]:
        """In one read transaction: the block token and base of the current sessions, and
        what to do: ``(block, None)`` use it as it is (stored for these sessions, or
        ``prev`` with no change since); ``(block, change)`` bring it up to date (only
        removals and later sessions since it was built, ``prev`` first); ``(None, change)``
        build from every row. The last item says whether to store the result: always for a
        build, else when the stored block is of another base or :data:`STORE_AFTER` changes
        behind (until then the next process brings the stored block up to date by the
        changes it lacks, and one new or removed session costs no rewrite of the blob)."""
        con = self._connect()
        con.execute("BEGIN")
        try:
            token = f"{self._meta(con, 'sessions_token')}:{BLOCK_VERSION}"
            base = self._meta(con, "sessions_base") or ""

            def behind() -> bool:
                """Whether the stored block is of another base or far behind."""
                if self._meta(con, "block_base") != base:
                    return True
                last = self._meta(con, "block_last") or ""
                n = con.execute(
                    "SELECT count(*) FROM sessions WHERE text IS NOT NULL AND sortkey > ?",
                    (last,),
                ).fetchone()[0]
                n += con.execute(
                    "SELECT count(*) FROM dropped WHERE seq > ?",
                    (int(self._meta(con, "block_seq") or 0),),
                ).fetchone()[0]
                return bool(n >= STORE_AFTER)

            if prev is not None and (change := self._changes(con, prev, base)) is not None:
                if change.empty(prev):
                    return token, base, prev, None, False
                return token, base, prev, change, behind()  # no stored blob to decode
            row = con.execute("SELECT token, data FROM blocks WHERE name='episodes'").fetchone()
            if row is not None and isinstance(row[0], str) and isinstance(row[1], bytes):
                try:  # the blob names its token: a row copied from elsewhere is refused
                    stored = EpisodeBlock.from_bytes(row[1], row[0])
                except BlockError as e:
                    warn(f"{self.file}: stored episode block unusable ({e}); rebuilding it")
                else:
                    if row[0] == token and stored.base == base:
                        return token, base, stored, None, False
                    if (change := self._changes(con, stored, base)) is not None:
                        return token, base, stored, change, change.size >= STORE_AFTER
            rows = _session_rows(
                con.execute(
                    "SELECT path, text, kw, sortkey FROM sessions WHERE text IS NOT NULL"
                    " ORDER BY sortkey"
                ).fetchall()
            )
            return token, base, None, _Change([], rows, 0), True
        finally:
            con.execute("COMMIT")

    def _changes(self, con: sqlite3.Connection, old: EpisodeBlock, base: str) -> _Change | None:
        """What happened to the sessions since ``old`` was built, inside the caller's read
        transaction: its episodes removed since (the log entries after ``old.seq``) and the
        rows after its last episode, when nothing else changed (same base); else ``None``.
        A logged removal that ``old`` does not hold where it should is ``None`` too: the
        block is built again, never trusted."""
        if not base or old.base != base or old.last is None:
            return None
        if old.seq < int(self._meta(con, "dropped_floor") or 0):
            return None  # log entries it lacks were pruned (_store_block)
        gone = con.execute(
            "SELECT seq, path, sortkey FROM dropped WHERE seq > ? ORDER BY seq", (old.seq,)
        ).fetchall()
        wanted = [path for _seq, path, key in gone if key <= old.last]  # later ones: not in it
        positions = old.positions(wanted)
        if positions is None:
            return None
        rows = _session_rows(
            con.execute(
                "SELECT path, text, kw, sortkey FROM sessions WHERE text IS NOT NULL"
                " AND sortkey > ? ORDER BY sortkey",
                (old.last,),
            ).fetchall()
        )
        return _Change(positions, rows, gone[-1][0] if gone else old.seq)

    def _store_block(self, block: EpisodeBlock, token: str) -> EpisodeBlock:
        """Store ``block`` as the block of ``token`` unless the sessions changed since it was
        built (another process refreshed). A read-only index just does not store it."""
        con = self._connect()
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                now = f"{self._meta(con, 'sessions_token')}:{BLOCK_VERSION}"
                if token == now:
                    con.execute(
                        "INSERT OR REPLACE INTO blocks(name, token, data) "
                        "VALUES ('episodes', ?, ?)",
                        (now, block.to_bytes(now)),
                    )
                    con.executemany(
                        "INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)",
                        [
                            ("block_base", block.base or ""),
                            ("block_last", block.last or ""),
                            ("block_seq", str(block.seq)),
                        ],
                    )
                    if block.seq > int(self._meta(con, "dropped_floor") or 0):
                        # the stored block holds every removal up to its seq: a block older
                        # than that (another process's) starts from the stored one
                        con.execute("DELETE FROM dropped WHERE seq <= ?", (block.seq,))
                        con.execute(
                            "INSERT OR REPLACE INTO meta(k, v) VALUES ('dropped_floor', ?)",
                            (str(block.seq),),
                        )
                con.execute("COMMIT")
            except BaseException:
                with suppress(sqlite3.Error):
                    con.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as e:
            warn(f"{self.file}: cannot store the episode block ({e}); recall goes on")
        return block

    @property
    def facts_token(self) -> str | None:
        """The version of the indexed facts seen by the last refresh (random per change)."""
        return self._tokens[0]

    def load_records(self, token: str) -> bytes | None:
        """The records block stored under ``token`` (:class:`talos.block.RecordsBlock`)."""
        row = (
            self._connect()
            .execute("SELECT data FROM blocks WHERE name='records' AND token=?", (token,))
            .fetchone()
        )
        return row[0] if row is not None and isinstance(row[0], bytes) else None

    def save_records(self, token: str, data: bytes) -> None:
        """Keep a records block under ``token`` (one is kept: the latest)."""
        self._connect().execute(
            "INSERT OR REPLACE INTO blocks(name, token, data) VALUES ('records', ?, ?)",
            (token, data),
        )

    def load_scan(self, key: str) -> str | None:
        """The skills scan stored under ``key`` (:func:`talos.safety.scan_skills`), or None."""
        row = (
            self._connect()
            .execute("SELECT data FROM blocks WHERE name='skills_scan' AND token=?", (key,))
            .fetchone()
        )
        if row is None or not isinstance(row[0], bytes):
            return None
        return row[0].decode("utf-8", "replace")

    def save_scan(self, key: str, value: str) -> None:
        """Keep a skills scan under ``key`` (one is kept: the latest)."""
        self._connect().execute(
            "INSERT OR REPLACE INTO blocks(name, token, data) VALUES ('skills_scan', ?, ?)",
            (key, value.encode()),
        )

    def flagged_facts(self) -> list[tuple[int, str]]:
        """``(line, text)`` of the facts :func:`talos.safety.keep_fact` rejected when their
        lines were parsed, in file order (what ``talos doctor`` reports, without a scan)."""
        return (
            self._connect()
            .execute("SELECT line, text FROM facts WHERE safe = 0 ORDER BY line")
            .fetchall()
        )

    def counts(self) -> tuple[int, int]:
        """``(facts, episodes)`` indexed, counted by the index (no row is read)."""
        con = self._connect()
        return con.execute(
            "SELECT (SELECT count(*) FROM facts),"
            " (SELECT count(*) FROM sessions WHERE text IS NOT NULL)"
        ).fetchone()

    def check(self, full: bool | None = None) -> list[str]:
        """Compare the index with the files without changing it; returns differences.

        Args:
            full: parse every line of memory.md again and compare (``None``: when it has at
                most :data:`CHECK_ALL_LINES` lines). Otherwise every line's exact text and
                position are compared with its row, lines without a row are parsed (they
                must be no facts), and :data:`CHECK_SAMPLE` rows spread over the file are
                parsed again: a memory.md of 1,000,000 lines took 126 s in ``talos doctor``
                (issue 12 item 8).
        """
        from talos.sources.sessions import load_episodes

        problems = self._check_facts(full)
        want_e = {(n.path, n.text) for n in load_episodes(self.paths.sessions_dir)}
        have_e = {(n.path, n.text) for n in self.episodes()}
        for path, text in sorted(want_e - have_e)[:20]:
            problems.append(f"{path}: episode {text!r} is not indexed")
        for path, text in sorted(have_e - want_e)[:20]:
            problems.append(f"{path}: indexed episode {text!r} is not in the files")
        problems += self._check_block()
        return problems

    def _check_facts(self, full: bool | None) -> list[str]:
        """The memory.md half of :meth:`check`."""
        from talos.sources.facts import load_facts

        path = self.paths.memory_file
        con = self._connect()
        if self._rows is not None and self._rows_token == self._meta(con, "facts_token"):
            rows = self._rows  # what the index holds: this object wrote or read it last
        else:
            rows = con.execute(
                "SELECT line, raw, text, kw, src, born, fields, safe FROM facts ORDER BY line"
            ).fetchall()
        try:
            data = read_memory(path)
        except OSError:
            data = b""  # missing or unreadable: load_facts says which, below
            full = True
        blobs = data.split(b"\n") if data else []
        if full or (full is None and len(blobs) <= CHECK_ALL_LINES):
            want = [
                (n.line, *indexed_fact(n.text, keep_fact(n.text) and not tag_reasons(n.raw)))
                for n in load_facts(path)
            ]
            want = [w for w in want if w[2]]
            have = [(r[0], r[2], frozenset(r[3].split())) for r in rows]
            if want == have:
                return []
            return [f"facts differ from {path}: {len(have)} indexed, {len(want)} in the file"]
        at = {r[0]: r for r in rows}
        step = max(1, len(rows) // CHECK_SAMPLE)
        seen = 0
        for no, blob in enumerate(blobs, 1):
            row = at.pop(no, None)
            try:
                line = blob.decode("utf-8") if len(blob) <= MAX_FACT_BYTES else None
            except UnicodeDecodeError:
                line = None
            if row is None:
                if line is not None and _parse_line(line) is not None:
                    return [f"facts differ from {path}: line {no} is a fact, not indexed"]
                continue
            if line is None or _stored_line(line, row) != row[1]:  # masked when withheld
                return [f"facts differ from {path}: line {no} is not the indexed line"]
            seen += 1
            if seen % step == 0:
                entry = _parse_line(line)
                if entry is None or (entry[0], entry[1]) != (row[2], row[3]):
                    return [f"facts differ from {path}: line {no} is indexed as another fact"]
        if at:
            return [f"facts differ from {path}: line {min(at)} is indexed, not in the file"]
        return []

    def _check_block(self) -> list[str]:
        """The stored episode block (built, or extended session by session) against a block
        merged afresh from the indexed rows: the same merged nodes, in the same order."""
        con = self._connect()
        con.execute("BEGIN")
        try:
            row = con.execute("SELECT token, data FROM blocks WHERE name='episodes'").fetchone()
            token = f"{self._meta(con, 'sessions_token')}:{BLOCK_VERSION}"
            base = self._meta(con, "sessions_base") or ""
            rows = con.execute(
                "SELECT path, text, kw, sortkey FROM sessions WHERE text IS NOT NULL"
                " ORDER BY sortkey"
            ).fetchall()
            if row is None or row[0] is None:
                return []
            try:
                stored = EpisodeBlock.from_bytes(row[1], row[0])
            except BlockError as e:
                return [f"{self.file}: stored episode block unusable ({e})"]
            change = None if row[0] == token else self._changes(con, stored, base)
        finally:
            con.execute("COMMIT")
        if row[0] == token:
            have = stored
        elif change is not None:
            have = _caught_up(stored, change)
        else:
            return []  # of another base: the next recall builds one

        def nodes(b: EpisodeBlock) -> list[Any]:
            return [
                (n.path, n.text, sorted(n.keywords), n.order, [m.path for m in n.members])
                for n in (b.node(g) for g in range(len(b)))
            ]

        if nodes(have) != nodes(EpisodeBlock.build(rows)):
            return [f"{self.file}: the episode block differs from the indexed sessions"]
        return []

    def rebuild(self, progress: Progress | None = None) -> RefreshStats:
        """Throw the index away and build it again from the files."""
        self.close()
        aside = self._discard()
        if aside is not None:
            warn(f"{self.file}: not talos's index; moved to {aside}")
        self._memory_sig = self._dir_sig = None
        self._pending = {}
        self._line_cache = {}
        self._rows = self._blobs = self._patched_from = None
        self._tokens = (None, None)
        self._keys = self._keys_next = None
        return self.refresh(full=True, progress=progress)

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(slots=True)
class _Change:
    """What to do to an episode block to bring it up to date (:meth:`Index._changes`):
    remove the episodes at ``positions``, then extend it by ``rows`` (``(path, text, kw,
    sortkey)``, sorted); ``seq`` is the last log entry of removed sessions this covers."""

    positions: list[int]
    rows: list[Any]
    seq: int

    @property
    def size(self) -> int:
        """Episodes removed and added."""
        return len(self.positions) + len(self.rows)

    def empty(self, block: EpisodeBlock) -> bool:
        """Whether ``block`` is already what this change makes of it."""
        return not self.positions and not self.rows and self.seq == block.seq


def _caught_up(block: EpisodeBlock, change: _Change) -> EpisodeBlock:
    """``block`` after ``change``: removed episodes gone, new rows appended (as a build of
    the rows would merge them, tests/test_session_remove.py)."""
    out = block.remove(change.positions)
    out = out.extend(change.rows) if change.rows else out.copy()
    out.last = change.rows[-1][3] if change.rows else block.last
    out.seq = change.seq
    return out
