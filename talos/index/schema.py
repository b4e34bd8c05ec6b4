"""The index file: its schema, migrations and the checks that tell talos's index from any other
file (design §11).

:func:`connect` opens ``index.db``, creating the schema of version 1 and running the
:data:`MIGRATIONS` up to :data:`SCHEMA`. A file of an unknown schema, application id or columns,
or one SQLite cannot read, is damaged or foreign: it is removed and built again from the files,
or, when its header says it is not talos's (another program's database), moved aside to
``index.db.not-talos-STAMP``, never deleted (:func:`discard`).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

from talos import fsutil
from talos.warn import warn

__all__ = [
    "APP_ID",
    "COLUMNS",
    "MIGRATIONS",
    "SCHEMA",
    "TABLES",
    "clear",
    "connect",
    "damaged",
    "discard",
    "meta",
    "session_rows",
]

#: Schema version (``PRAGMA user_version``). An older index is migrated (:data:`MIGRATIONS`);
#: a newer or unknown one is rebuilt.
SCHEMA = 8
#: ``PRAGMA application_id``: tells our index from any other SQLite file.
APP_ID = 0x7A105  # "talos"

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
    # 4: each fact row's heading level and heading path (design §3.1, issue 15 item 4): which
    #    lines are markdown headings and which headings stand above each line depend on the
    #    lines before it, so a row cannot be parsed from its line alone; the rows are re-read.
    4: (
        "ALTER TABLE facts ADD COLUMN level INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE facts ADD COLUMN headings TEXT NOT NULL DEFAULT ''",
        "DELETE FROM facts",
        "DELETE FROM meta WHERE k='memory_sig'",
    ),
    # 5: the analyzed term rows of the ``evidence`` model's matching texts
    #    (talos.view.termrows.TermRows), so a process never analyses a text analysed before
    #    (issue 15: 1.9 s per process at 30,000 sessions).
    5: ("CREATE TABLE IF NOT EXISTS terms(name TEXT PRIMARY KEY, token TEXT, data BLOB)",),
    # 6: each session's real task and outcome (design §3.3: an episode is worth reading alone),
    #    and an index of the rows by mtime, for the sessions still being written
    #    (talos.index.sessions.LIVE_NS: a grown one is read again). The rows are re-read (their
    #    reader changed: signatures.READERS), which fills the columns.
    #    The table is made again: its rows are re-read anyway, and a table that has either
    #    column already (a copy of a newer index given an older version) migrates too.
    6: (
        "DROP TABLE sessions",
        "CREATE TABLE sessions(path TEXT PRIMARY KEY, sortkey TEXT, size INTEGER,"
        " mtime_ns INTEGER, text TEXT, kw TEXT, task TEXT NOT NULL DEFAULT '',"
        " outcome TEXT NOT NULL DEFAULT '')",
        "CREATE INDEX sessions_order ON sessions(sortkey)",
        "CREATE INDEX sessions_pending ON sessions(path) WHERE text IS NULL",
        "CREATE INDEX sessions_recent ON sessions(mtime_ns)",
        "DELETE FROM dropped",
        "DELETE FROM blocks WHERE name='episodes'",
        "DELETE FROM meta WHERE k IN ('sessions_sig', 'sessions_base', 'sessions_high')",
    ),
    # 7: each session's working folder (design §3.3: an episode belongs to the project its
    #    transcript ran in). The rows are re-read to fill it.
    7: (
        "ALTER TABLE sessions ADD COLUMN cwd TEXT NOT NULL DEFAULT ''",
        "DELETE FROM sessions",
        "DELETE FROM dropped",
        "DELETE FROM blocks WHERE name='episodes'",
        "DELETE FROM meta WHERE k IN ('sessions_sig', 'sessions_base', 'sessions_high')",
    ),
    # 8: each session's first and last days (design §7.3: an ask's time words narrow the
    #    episodes by their session's dates) and its parts (design §3.3: a long session shows
    #    the part an ask matched). The rows are re-read to fill them.
    8: (
        "ALTER TABLE sessions ADD COLUMN day TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE sessions ADD COLUMN last_day TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE sessions ADD COLUMN parts TEXT NOT NULL DEFAULT ''",
        "DELETE FROM sessions",
        "DELETE FROM dropped",
        "DELETE FROM blocks WHERE name='episodes'",
        "DELETE FROM meta WHERE k IN ('sessions_sig', 'sessions_base', 'sessions_high')",
    ),
}


#: Every (table, column) of schema :data:`SCHEMA`; an index missing one is rebuilt.
COLUMNS = {
    ("meta", "k"),
    ("meta", "v"),
    *(
        ("facts", c)
        for c in ("line", "raw", "text", "kw", "src", "born", "fields", "safe", "level", "headings")
    ),
    *(
        ("sessions", c)
        for c in (
            *("path", "sortkey", "size", "mtime_ns", "text", "kw", "task", "outcome"),
            *("cwd", "day", "last_day", "parts"),
        )
    ),
    ("blocks", "name"),
    ("blocks", "token"),
    ("blocks", "data"),
    *(("dropped", c) for c in ("seq", "path", "sortkey")),
    *(("terms", c) for c in ("name", "token", "data")),
}


def connect(file: Path) -> sqlite3.Connection:
    """Open the index at ``file`` (made, migrated or checked: :func:`open_index`); a damaged
    or foreign file is discarded (:func:`discard`) and a new index made in its place.

    Raises:
        sqlite3.OperationalError: locked, busy or unreadable (no damage: nothing is
            discarded).
    """
    file.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = open_index(file)
    except sqlite3.OperationalError:
        # Locked, busy, unreadable: not damage. Discarding here deleted the index another
        # process was making (tests/test_index_reliability.py, 3 processes on a new home).
        raise
    except sqlite3.DatabaseError as e:
        aside = discard(file)
        if aside is None:
            warn(f"{file}: damaged or foreign index ({e}); rebuilding it from the files")
        else:
            warn(
                f"{file}: not talos's index ({e}); moved to {aside}; a new index is "
                "built from the files"
            )
        con = open_index(file)
    return con


def open_index(file: Path) -> sqlite3.Connection:
    """A connection to the index at ``file``: WAL, its schema created (:func:`create`) or
    migrated (:func:`migrate`) to :data:`SCHEMA`.

    Raises:
        sqlite3.DatabaseError: a file of another application id, schema or columns.
    """
    fsutil.check_regular_or_missing(file)  # SQLite would take a FIFO (issue 12.3)
    con = sqlite3.connect(file, timeout=60, isolation_level=None)
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
        fsutil.use_wal(con)
        if not tables:
            create(con)
        elif version < SCHEMA:
            migrate(con)
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


def open_read_only(file: Path) -> sqlite3.Connection:
    """A connection that only reads the index at ``file`` (``talos index --check``): nothing
    is created, migrated or switched to WAL, so a read-only home is checked too (it failed
    with "attempt to write a readonly database"; tests/test_bad_state_findings.py).
    ``mode=ro`` first, then ``immutable=1`` (a WAL file on a read-only folder cannot get its
    -shm file; nothing can write there either), as the usage counts are read.

    Raises:
        FileNotFoundError: there is no index yet. NotRegularFile: not a regular file.
        sqlite3.DatabaseError: not talos's index, or of another schema.
        sqlite3.OperationalError: it cannot be read at all.
    """
    fsutil.check_regular_or_missing(file)
    if not file.exists():
        raise FileNotFoundError(errno.ENOENT, "no index yet", str(file))
    error: sqlite3.Error | None = None
    for mode in ("mode=ro", "immutable=1"):
        con = sqlite3.connect(f"{file.absolute().as_uri()}?{mode}", uri=True, timeout=60)
        try:
            con.isolation_level = None
            con.execute("PRAGMA busy_timeout=60000")
            app, version = con.execute(
                "SELECT (SELECT application_id FROM pragma_application_id),"
                " (SELECT user_version FROM pragma_user_version)"
            ).fetchone()
        except sqlite3.OperationalError as e:
            con.close()
            error = e
            continue
        if app != APP_ID or version != SCHEMA:
            con.close()
            raise sqlite3.DatabaseError(
                f"application id {app:#x}, schema {version}; expected {APP_ID:#x}, {SCHEMA}"
            )
        return con
    assert error is not None
    raise error


def create(con: sqlite3.Connection) -> None:
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
        upgrade(con)
        con.execute("COMMIT")
    except BaseException:
        with suppress(sqlite3.Error):
            con.execute("ROLLBACK")
        raise


def upgrade(con: sqlite3.Connection) -> None:
    """Run the :data:`MIGRATIONS` from the stored schema up to :data:`SCHEMA` (inside
    the caller's write transaction)."""
    (version,) = con.execute("PRAGMA user_version").fetchone()
    for v in range(version + 1, SCHEMA + 1):
        for stmt in MIGRATIONS[v]:
            con.execute(stmt)
        con.execute(f"PRAGMA user_version={v}")


def migrate(con: sqlite3.Connection) -> None:
    """Run the :data:`MIGRATIONS` from the stored schema up to :data:`SCHEMA`."""
    con.execute("BEGIN IMMEDIATE")
    try:
        upgrade(con)  # reads the version under the lock: another may have done it
        con.execute("COMMIT")
    except BaseException:
        with suppress(sqlite3.Error):
            con.execute("ROLLBACK")
        raise


#: The tables of schema :data:`SCHEMA` (every table of :data:`COLUMNS`).
TABLES = ("meta", "facts", "sessions", "blocks", "dropped", "terms")


def clear(con: sqlite3.Connection) -> None:
    """Empty every table of the index in one transaction (``talos index --rebuild``): the
    file stays, so a process holding it open (the hook server) reads the rebuilt index.
    Deleting the file under it left the server refreshing a deleted copy, and SQLite's
    close of such a connection removes the ``-wal`` and ``-shm`` names, by then the new
    index's (tests/test_hook_never_blocks.py).

    Raises:
        sqlite3.DatabaseError: a page cannot be read (the caller discards the file).
    """
    con.execute("BEGIN IMMEDIATE")
    try:
        for table in TABLES:
            con.execute(f"DELETE FROM {table}")
        con.execute("COMMIT")
    except BaseException:
        with suppress(sqlite3.Error):
            con.execute("ROLLBACK")
        raise


def ours(file: Path) -> bool:
    """Whether ``index.db`` is talos's: a SQLite file whose application id is :data:`APP_ID`
    as SQLite sees it, its ``-wal`` file included (:func:`talos.fsutil.sqlite_application_id`:
    the header alone said "not talos's" of the index the hook server held open). What else it
    is (another program's database, bytes that are no database) may be someone's data."""
    try:
        return fsutil.sqlite_application_id(file) == APP_ID
    except OSError:
        return True  # gone, or unreadable: nothing to keep


def discard(file: Path) -> Path | None:
    """Remove a damaged ``index.db`` (and its ``-wal``, ``-shm``) to rebuild it; a file that
    is not talos's by its header is moved aside instead, never deleted (a valid SQLite
    file of another program at index.db was deleted with its data, hostile pass).

    Returns:
        Where the file was moved, or ``None`` when it was removed.
    """
    aside = None
    if not ours(file):
        stamp = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"
        aside = file.with_name(f"{file.name}.not-talos-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        with suppress(OSError):
            if aside is None:
                os.unlink(str(file) + suffix)
            else:
                os.rename(str(file) + suffix, str(aside) + suffix)
    return aside if aside is not None and aside.exists() else None


def meta(con: sqlite3.Connection, key: str) -> str | None:
    """The value of ``key`` in the ``meta`` table, or ``None``."""
    row = con.execute("SELECT v FROM meta WHERE k=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def damaged(table: str, why: str) -> sqlite3.DatabaseError:
    """The error for a row of ``table`` that talos did not write as it is (hostile pass: a
    ``fields`` of ``{`` ended recall in "unexpected error JSONDecodeError", a NULL keyword
    column in AttributeError, and an episode's keywords of another type dropped it without a
    word). Callers treat it as any damaged index: read the files directly."""
    return sqlite3.DatabaseError(
        f"a row of {table} is not what talos writes ({why}); run talos index --rebuild"
    )


def session_rows(rows: list[Any]) -> list[Any]:
    """``rows`` of ``sessions`` (path, text, kw[, sortkey]) read for episodes, checked."""
    for row in rows:
        if not all(isinstance(v, str) for v in row):
            raise damaged("sessions", f"path {row[0]!r}")
    return rows
