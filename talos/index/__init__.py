"""The persistent index: what talos has already read, so recall does not read it again (design §11).

Files stay the source of truth; the index (SQLite, WAL, ``<state>/index.db``) is a cache derived
from them and can always be rebuilt. It holds the parsed facts of memory.md (with the fact
filter's verdict), the episode of every session file, with the size and mtime of what they
came from, and in ``blocks``: the merged episode block (:class:`talos.graph.EpisodeBlock`, per
version of the sessions), the records block of the last view built
(:class:`talos.graph.RecordsBlock`, per token of all it depends on) and the last skills scan
(:func:`talos.safety.scan_skills`, per tree signature); in ``terms``: the analyzed term rows
of the ``evidence`` model's matching texts (:class:`talos.view.termrows.TermRows`, per analyzer
fingerprint). Skills themselves (a few dozen small
files) are read directly. Schema changes are migrations (:data:`MIGRATIONS`); an index of
unknown schema, application id or columns is rebuilt.

Refresh is incremental and cheap when nothing changed (two ``stat`` calls in a process that
refreshed before; one read transaction, no write, in a new one):

* memory.md: one ``stat``; when it changed, the file is split into lines and only lines not seen
  before are parsed (a one-line edit parses one line).
* sessions: one ``stat`` of the folder. Adding, removing or renaming a file changes the folder's
  mtime; then the folder is listed and only new files are read. Files without a request yet
  (a session just started) and files written within a week (a session going on: its outcome
  changes, :data:`talos.index.sessions.LIVE_NS`) are re-checked on every refresh. An old file
  rewritten in place under the same name is picked up by ``talos index`` (a full sweep of sizes
  and mtimes), and at once in recursive mode (``DIR/**``), which always sweeps. When the
  episodes only grew after the newest one ever seen (time-stamped names) or lost some, the
  episode block loses the removed episodes (logged in ``dropped``) and is extended by the
  new rows (:meth:`Index.episode_block`, ``sessions_base``, ``sessions_high``) instead of
  merged again.
* paths: rows and signatures are keyed by path, so paths arrive canonical
  (:func:`talos.home.canonical`): two spellings of one home are one index.
* a file changed within a tick of the file system's clock may change again unseen under the
  same signature: it is looked at again on the next call (:func:`signatures.settled`).
  Another process's changes show in the change tokens, read on every call (one query).

A damaged or foreign index file is detected (``sqlite3.DatabaseError``, a wrong application
id or schema) and rebuilt, never trusted; a file that is not talos's by its header (another
program's database) is moved aside to ``index.db.not-talos-STAMP``, never deleted. A kill
during a refresh rolls back its transaction.

The package, one module per concern (this module: :class:`Index`, the refresh in one
transaction, the change tokens and generations, and the reads :class:`talos.memory.Memory`
makes):

* ``schema.py``: SCHEMA, MIGRATIONS, COLUMNS; open, create, migrate, discard a damaged or
  foreign file;
* ``signatures.py``: file and folder signatures, the racy-signature rule, READERS;
* ``facts.py``: memory.md in the facts table (:class:`FactRows`, a line's row, masking);
* ``sessions.py``: the sessions folder in the sessions table (:class:`SessionRows`);
* ``blocks.py``: the stored episode block, records block and skills scan;
* ``terms.py``: the analyzed term rows of the ``evidence`` model (:mod:`talos.view.termrows`);
* ``check.py``: the index against the files (``talos doctor``, ``talos index --check``).

A name a test patches is set in the module that reads it (``talos.index.blocks.STORE_AFTER``);
setting it on this package fails.
"""

from __future__ import annotations

import importlib
import json
import os
import sqlite3
import sys
import types
from collections.abc import Collection
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from talos.graph.episodes import EpisodeBlock
from talos.home import Paths
from talos.index import blocks, schema, signatures, terms
from talos.index.facts import FactRows, fields_of, indexed_fact
from talos.index.schema import APP_ID, COLUMNS, MIGRATIONS, SCHEMA, meta
from talos.index.sessions import Progress, SessionRows, watched_rows
from talos.index.signatures import READERS, size_mtime
from talos.model import Node
from talos.sources.sessions import session_folders
from talos.warn import warn

__all__ = [
    "APP_ID",
    "COLUMNS",
    "MIGRATIONS",
    "READERS",
    "SCHEMA",
    "Index",
    "Progress",
    "RefreshStats",
    "indexed_fact",
]


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


class Index:
    """The index of one home.

    Args:
        paths: the home's paths; the index lives in ``paths.state_dir / "index.db"``.

    The object keeps the last seen file signatures in memory, so a refresh that finds nothing
    changed costs two ``stat`` calls and no SQL. ``generation`` increases whenever the indexed
    content changed, so callers can cache what they derive from it. What it keeps of the
    tables between calls is two objects, each with its rule for staleness: the fact rows
    (:class:`talos.index.facts.FactRows`) and the session rows
    (:class:`talos.index.sessions.SessionRows`); a refresh that rolls back drops both.
    """

    def __init__(self, paths: Paths, read_only: bool = False) -> None:
        #: Only read the file (:meth:`check` of ``talos index --check``): nothing is created
        #: or migrated, a read-only home is checked too (:func:`schema.open_read_only`).
        self.read_only = read_only
        self.paths = paths
        self.file = paths.state_dir / "index.db"
        self.generation = 0
        self.facts_generation = 0
        self.sessions_generation = 0
        self._con: sqlite3.Connection | None = None
        self._facts = FactRows(paths.memory_file)
        self._sessions = SessionRows(paths)
        self._tokens: tuple[str | None, str | None] = (None, None)

    # -- connection ------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._con is None:
            self._con = (
                schema.open_read_only(self.file) if self.read_only else schema.connect(self.file)
            )
        return self._con

    def close(self) -> None:
        """Close the connection (it reopens on demand)."""
        if self._con is not None:
            self._con.close()
            self._con = None

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
        memory_sig = self._facts.look()
        folders = session_folders(self.paths.sessions_dirs)
        recursive = any(f.recursive for f in folders)
        dir_sig = sum((signatures.settled(signatures.dir_sig(f.root)) for f in folders), ())
        quick = (
            not full
            and not recursive
            and memory_sig == self._facts.sig
            and dir_sig == self._sessions.sig
            and self._sessions.quiet()
        )
        con = self._connect()
        if quick:
            # The files look unchanged to this process; another one may still have changed
            # the index (`talos index` after a session was rewritten in place): its tokens say.
            seen = (meta(con, "facts_token"), meta(con, "sessions_token"))
            if seen == self._tokens:
                self._facts.refused(con)
                return stats
        if not full and not recursive:
            tokens = self._unchanged(con, memory_sig, dir_sig)
            if tokens is not None:  # a new process on an up-to-date index: no write at all
                self._settle(stats, memory_sig, dir_sig, tokens)
                self._facts.refused(con)
                return stats
        con.execute("BEGIN IMMEDIATE")
        try:
            if meta(con, "readers") != READERS:
                # The code that turns files into rows changed (a reader, masking, keywords):
                # what was indexed before may differ from what it reads now. Start over.
                for table in ("facts", "sessions", "meta", "blocks", "dropped"):
                    con.execute(f"DELETE FROM {table}")
                con.execute("INSERT INTO meta(k, v) VALUES ('readers', ?)", (READERS,))
                self._facts.reread()
            if meta(con, "memory_sig") != json.dumps([str(self.paths.memory_file), *memory_sig]):
                self._facts.refresh(con, memory_sig, stats)
            stored_dir = meta(con, "sessions_sig")
            dir_key = self._dir_key(dir_sig)
            self._sessions.refresh(
                con,
                folders,
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
            tokens = (meta(con, "facts_token"), meta(con, "sessions_token"))
            con.execute("COMMIT")
            self._sessions.committed(tokens[1])
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
        self._facts.forget()
        self._sessions.forget()

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
            pending = [(p, size, mtime) for _k, p, size, mtime, _ in watched_rows(con)]
        finally:
            con.execute("COMMIT")
        if (
            meta.get("readers") != READERS
            or meta.get("memory_sig") != json.dumps([str(self.paths.memory_file), *memory_sig])
            or meta.get("sessions_sig") != self._dir_key(dir_sig)
            or any(size_mtime(p) != (size, mtime) for p, size, mtime in pending)
        ):
            return None
        self._sessions.pending = {p: (size, mtime) for p, size, mtime in pending}
        return meta.get("facts_token"), meta.get("sessions_token")

    def _dir_key(self, dir_sig: tuple[Any, ...]) -> str:
        """The stored signature of the sessions folders: the folder and its signature (one
        folder, as before issue 16.4), or the list of folders and their signatures."""
        dirs = self.paths.sessions_dirs
        named: Any = str(dirs[0]) if len(dirs) == 1 else [str(d) for d in dirs]
        return json.dumps([named, *dir_sig])

    def _settle(
        self,
        stats: RefreshStats,
        memory_sig: tuple[Any, ...],
        dir_sig: tuple[Any, ...],
        tokens: tuple[str | None, str | None],
    ) -> None:
        """Record what this refresh saw; bump the generations whose tokens changed."""
        self._facts.settle(memory_sig, tokens[0], stats.facts_reparsed)
        self._sessions.sig = dir_sig
        first = self.generation == 0
        facts_new = tokens[0] != self._tokens[0]
        sessions_new = tokens[1] != self._tokens[1]
        self._tokens = tokens
        if facts_new or sessions_new or first:
            self.generation += 1
        if facts_new or first:
            self.facts_generation += 1
        if sessions_new or first:
            self.sessions_generation += 1

    # -- reading ---------------------------------------------------------------------------

    def facts(self) -> list[Node]:
        """Fact nodes in file order (unfiltered: ``keep_fact`` is the caller's)."""
        return [n for n, _safe in self.fact_rows()]

    def fact_rows(self) -> list[tuple[Node, bool]]:
        """Fact nodes in file order, each with :func:`talos.safety.keep_fact`'s verdict.

        The rows this object wrote at its last refresh are used as they are, and a node whose
        row and position are unchanged is the node built before: after a one-line edit only
        that line's node is new (design §11; :meth:`talos.index.facts.FactRows.nodes`).
        """
        return self._facts.nodes(self._connect, self._tokens[0])

    def episodes(self, start: int = 0) -> list[Node]:
        """Episode nodes in load order (sorted by path relative to the sessions folder)."""
        return self._sessions.episodes(self._connect(), start)

    def episode_folders(self) -> dict[str, list[str]]:
        """The working folders the indexed episodes ran in, each with its episodes' paths
        (:meth:`talos.index.sessions.SessionRows.folders`); the view scopes episodes by them.

        Raises:
            OSError, sqlite3.Error: as :meth:`refresh`.
        """
        return self._sessions.folders(self._connect())

    def episode_dates(self, start: str, end: str) -> dict[str, tuple[str, str]]:
        """The indexed episodes whose session meets the days ``[start, end)``, each with its
        first and last day (:meth:`talos.index.sessions.SessionRows.dated`).

        Raises:
            OSError, sqlite3.Error: as :meth:`refresh`.
        """
        return self._sessions.dated(self._connect(), start, end)

    def episode_block(self, prev: EpisodeBlock | None = None) -> EpisodeBlock:
        """The merged episodes of the indexed sessions as arrays (:mod:`talos.graph.episodes`): the
        stored block, ``prev`` or the stored one brought up to date, or a block built from
        the rows (:func:`talos.index.blocks.episode_block`).

        Args:
            prev: a block the caller holds (a long-lived :class:`talos.memory.Memory`).

        Raises:
            OSError, sqlite3.Error: as :meth:`refresh`.
        """
        return blocks.episode_block(self._connect(), self.file, prev)

    @property
    def facts_token(self) -> str | None:
        """The version of the indexed facts seen by the last refresh (random per change)."""
        return self._tokens[0]

    def load_records(self, token: str) -> bytes | None:
        """The records block stored under ``token`` (:class:`talos.graph.RecordsBlock`)."""
        return blocks.load_records(self._connect(), token)

    def save_records(self, token: str, data: bytes) -> None:
        """Keep a records block under ``token`` (one is kept: the latest)."""
        blocks.save_records(self._connect(), token, data)

    def load_terms(self, token: str, name: str = "rows") -> bytes | None:
        """The term rows stored by the analyzer ``token`` (:class:`talos.view.termrows.TermRows`),
        or with ``name="ranking"`` the ranking block of ``token`` (:mod:`.ranking`)."""
        return terms.load_terms(self._connect(), token, name)

    def save_terms(self, token: str, data: bytes, name: str = "rows") -> None:
        """Keep the blob ``name`` under ``token`` (:meth:`load_terms`; one per name)."""
        terms.save_terms(self._connect(), token, data, name)

    @property
    def sessions_token(self) -> str | None:
        """The version of the indexed sessions seen by the last refresh (random per change)."""
        return self._tokens[1]

    def load_scan(self, key: str) -> str | None:
        """The skills scan stored under ``key`` (:func:`talos.safety.scan_skills`), or None."""
        return blocks.load_scan(self._connect(), key)

    def save_scan(self, key: str, value: str) -> None:
        """Keep a skills scan under ``key`` (one is kept: the latest)."""
        blocks.save_scan(self._connect(), key, value)

    def flagged_facts(self) -> list[tuple[int, str]]:
        """``(line, text)`` of the facts :func:`talos.safety.keep_fact` rejected when their
        lines were parsed, in file order (what ``talos doctor`` reports, without a scan)."""
        return (
            self._connect()
            .execute("SELECT line, text FROM facts WHERE safe = 0 ORDER BY line")
            .fetchall()
        )

    def counts(self, headings: bool = True) -> tuple[int, int]:
        """``(facts, episodes)`` indexed, counted by the index (no row is read). ``headings``:
        a markdown heading's row is no fact (every model but ``classic``, design §3.1)."""
        con = self._connect()
        where = " WHERE level = 0" if headings else ""
        return con.execute(
            f"SELECT (SELECT count(*) FROM facts{where}),"
            " (SELECT count(*) FROM sessions WHERE text IS NOT NULL)"
        ).fetchone()

    def top_headings(self, scopes: Collection[str]) -> int:
        """How many level-1 markdown headings of ``scopes`` memory.md's rows hold (an untagged
        heading is ``global``); what :meth:`talos.Memory.heading` asks to tell a file's title
        from a section. A heading of another scope is not counted: it would tell a caller
        that a hidden section exists (the attacker's pass)."""
        rows = self._connect().execute("SELECT fields FROM facts WHERE level = 1").fetchall()
        texts = [str(f) for (f,) in rows if f]
        tagged = [d.get("scope", "global") if isinstance(d, dict) else "" for d in fields_of(texts)]
        return sum(1 for (f,) in rows if not f) + sum(1 for sc in tagged if sc in scopes)

    def behind(self) -> list[str]:
        """What changed in the files since they were indexed (a cache not yet refreshed: the
        next recall or ``talos index`` catches up), one sentence each; [] when none did.
        ``check(skip_behind=True)`` does not compare those files."""
        from talos.index.check import behind

        return behind(self)

    def check(self, full: bool | None = None, skip_behind: bool = False) -> list[str]:
        """Compare the index with the files without changing it; returns differences
        (:func:`talos.index.check.check`: ``full`` parses every line of memory.md again, else
        only up to :data:`talos.index.check.CHECK_ALL_LINES` lines; ``skip_behind`` leaves out
        the files :meth:`behind` names)."""
        from talos.index.check import check

        return check(self, full, skip_behind)

    def rebuild(self, progress: Progress | None = None) -> RefreshStats:
        """Throw the index's content away and build it again from the files.

        The file itself stays when it is talos's and readable: its tables are emptied in one
        transaction (:func:`schema.clear`), so the hook server that holds it open goes on
        with the rebuilt index; the file was deleted under it before, and the server kept
        refreshing a deleted copy (tests/test_hook_never_blocks.py). A damaged file is
        removed, another program's moved aside (:func:`schema.connect`, :func:`schema.discard`).

        Raises:
            OSError, sqlite3.Error: the state folder is not writable, the disk is full, the
                index is locked.
        """
        self.close()
        try:
            schema.clear(self._connect())
        except sqlite3.OperationalError as e:
            if "locked" in str(e) or "busy" in str(e):
                raise  # another process holds it: never deleted under it
            # a full disk (SQLite: "disk I/O error" growing the -wal): a new file, as before;
            # removing the old one frees its space (tests/test_state_files.py)
            self._start_over()
        except sqlite3.DatabaseError:  # pages that cannot be read: a new file
            self._start_over()
        self._forget_rows()
        self._tokens = (None, None)
        return self.refresh(full=True, progress=progress)

    def _start_over(self) -> None:
        """Close and remove the index file (another program's is moved aside, with a
        warning); the next connection makes a new one."""
        self.close()
        aside = schema.discard(self.file)
        if aside is not None:
            warn(f"{self.file}: not talos's index; moved to {aside}")

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Names of the index's submodules that tests patch, by the module that reads them at call
#: time: set on this package they would change nothing, so setting them here fails.
_HOMES = {"CHECK_ALL_LINES": "check", "CHECK_SAMPLE": "check", "STORE_AFTER": "blocks"}


def __getattr__(name: str) -> Any:
    """``talos.index.STORE_AFTER``, ``CHECK_ALL_LINES``…: read from their module on each use,
    so they are never a stale copy (and the check is imported on use only, never by a
    recall)."""
    home = _HOMES.get(name)
    if home is not None:
        return getattr(importlib.import_module(f"talos.index.{home}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Package(types.ModuleType):
    """The module ``talos.index``: a name read from a submodule cannot be set here (a
    ``monkeypatch.setattr(talos.index, "STORE_AFTER", 2)`` that changes nothing let a test
    pass without testing anything; issue 14)."""

    def __setattr__(self, name: str, value: Any) -> None:
        home = _HOMES.get(name)
        if home is not None:
            raise AttributeError(f"{name} is read from talos.index.{home}: set it there")
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
