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
  same signature: it is looked at again on the next call (:func:`signatures.settled`).
  Another process's changes show in the change tokens, read on every call (one query).

A damaged or foreign index file is detected (``sqlite3.DatabaseError``, a wrong application
id or schema) and rebuilt, never trusted; a file that is not talos's by its header (another
program's database) is moved aside to ``index.db.not-talos-STAMP``, never deleted. A kill
during a refresh rolls back its transaction.
"""

from __future__ import annotations

import importlib
import json
import os
import sqlite3
import sys
import types
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from talos.block import EpisodeBlock
from talos.home import Paths
from talos.index import blocks, schema, signatures
from talos.index.schema import APP_ID, COLUMNS, MIGRATIONS, SCHEMA, damaged, meta, session_rows
from talos.index.signatures import READERS, size_mtime
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

__all__ = [
    "APP_ID",
    "COLUMNS",
    "MIGRATIONS",
    "READERS",
    "SCHEMA",
    "Index",
    "RefreshStats",
]


Progress = Callable[[int, int], None]


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


_UNSEEN: Any = object()


def _fact_rows(rows: list[Any]) -> list[Any]:
    """``rows`` of ``facts`` (line, raw, text, kw, src, born, fields, safe), checked."""
    for line, raw, text, kw, src, born, fields, safe in rows:
        if not (
            isinstance(line, int)
            and all(isinstance(v, str) for v in (raw, text, kw, src, born, fields))
            and (safe is None or isinstance(safe, int))
        ):
            raise damaged("facts", f"line {line!r}")
    tagged = [r[6] for r in rows if r[6]]
    for value, text in zip(_fields_of(tagged), tagged, strict=True):  # one decode for all
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise damaged("facts", f"fields {text[:40]!r}")
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

    # -- connection ------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._con is None:
            self._con = schema.connect(self.file)
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
        raw_sig = signatures.file_sig(self.paths.memory_file)
        memory_sig = signatures.settled(raw_sig)
        known = self._memory_sig
        if known is not None and known[:3] == raw_sig != known and memory_sig == raw_sig:
            # Read within its last tick, settled since: the same bytes mean nothing changed
            # in that tick, and the signature can be trusted from now on (no write needed).
            with suppress(OSError):
                if read_memory(self.paths.memory_file) == self._memory_bytes:
                    self._memory_sig = memory_sig
        root, recursive = sessions_root(self.paths.sessions_dir)
        dir_sig = signatures.settled(signatures.dir_sig(root))
        quick = (
            not full
            and not recursive
            and memory_sig == self._memory_sig
            and dir_sig == self._dir_sig
            and all(size_mtime(Path(p)) == sig for p, sig in self._pending.items())
        )
        con = self._connect()
        if quick:
            # The files look unchanged to this process; another one may still have changed
            # the index (`talos index` after a session was rewritten in place): its tokens say.
            seen = (meta(con, "facts_token"), meta(con, "sessions_token"))
            if seen == self._tokens:
                return stats
        if not full and not recursive:
            tokens = self._unchanged(con, memory_sig, dir_sig)
            if tokens is not None:  # a new process on an up-to-date index: no write at all
                self._settle(stats, memory_sig, dir_sig, tokens)
                return stats
        con.execute("BEGIN IMMEDIATE")
        try:
            if meta(con, "readers") != READERS:
                # The code that turns files into rows changed (a reader, masking, keywords):
                # what was indexed before may differ from what it reads now. Start over.
                for table in ("facts", "sessions", "meta", "blocks", "dropped"):
                    con.execute(f"DELETE FROM {table}")
                con.execute("INSERT INTO meta(k, v) VALUES ('readers', ?)", (READERS,))
                self._line_cache = {}
                self._rows = self._blobs = self._patched_from = None
            if meta(con, "memory_sig") != json.dumps([str(self.paths.memory_file), *memory_sig]):
                self._refresh_facts(con, memory_sig, stats)
            stored_dir = meta(con, "sessions_sig")
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
            tokens = (meta(con, "facts_token"), meta(con, "sessions_token"))
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
            or any(size_mtime(Path(p)) != (size, mtime) for p, size, mtime in pending)
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
        token = meta(con, "facts_token")
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
            # at again, signatures.settled): the same rows. No new token, so the stored records
            # block stays valid for every process.
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
            or self._rows_token != meta(con, "facts_token")
        ):
            return False
        changed = [i for i, (a, b) in enumerate(zip(prev, blobs, strict=True)) if a != b]
        if len(changed) > 64:
            return False
        if not changed:  # looked at again (a recent change, settled): same lines, no news
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
        last = max(meta(con, "sessions_high") or "", newest or "") or None
        if listed:
            files = session_names(self.paths.sessions_dir, ordered=False)
            names = dict(files)
            here = json.dumps([str(root), *signatures.dir_sig(root)[3:]])  # path, device, inode
            moved = sweep or meta(con, "sessions_root") != here
            if moved:
                stored = {
                    key: (path, size, mtime, bool(has))
                    for key, path, size, mtime, has in con.execute(
                        "SELECT sortkey, path, size, mtime_ns, text IS NOT NULL FROM sessions"
                    )
                }
                keys = set(stored)
            elif self._keys is not None and self._keys[0] == meta(con, "sessions_token"):
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
                    if path != full or size_mtime(Path(full)) != (size, mtime):
                        todo.append((rel, full))
                        if has:
                            episodes_reread.add(rel)
                elif rel in pending and size_mtime(Path(full)) != pending[rel][1:]:
                    todo.append((rel, full))
            todo.sort()
            con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('sessions_root', ?)", (here,))
            self._keys_next = (keys - gone) | {rel for rel, _full in todo}
            stats.swept = sweep
        else:
            todo.extend(
                (key, path)
                for key, (path, size, mtime) in pending.items()
                if size_mtime(Path(path)) != (size, mtime)
            )
        total = len(todo)
        for done, (rel, full) in enumerate(todo, 1):
            p = Path(full)
            size, mtime = size_mtime(p)
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
            not appended or meta(con, "sessions_base") is None
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
                token = meta(con, "facts_token")
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
                session_rows(
                    con.execute(
                        "SELECT path, text, kw FROM sessions WHERE text IS NOT NULL"
                        " ORDER BY sortkey"
                    ).fetchall()
                )
            )
        ]

    def episode_block(self, prev: EpisodeBlock | None = None) -> EpisodeBlock:
        """The merged episodes of the indexed sessions as arrays (:mod:`talos.block`): the
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
        """The records block stored under ``token`` (:class:`talos.block.RecordsBlock`)."""
        return blocks.load_records(self._connect(), token)

    def save_records(self, token: str, data: bytes) -> None:
        """Keep a records block under ``token`` (one is kept: the latest)."""
        blocks.save_records(self._connect(), token, data)

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

    def counts(self) -> tuple[int, int]:
        """``(facts, episodes)`` indexed, counted by the index (no row is read)."""
        con = self._connect()
        return con.execute(
            "SELECT (SELECT count(*) FROM facts),"
            " (SELECT count(*) FROM sessions WHERE text IS NOT NULL)"
        ).fetchone()

    def check(self, full: bool | None = None) -> list[str]:
        """Compare the index with the files without changing it; returns differences
        (:func:`talos.index.check.check`: ``full`` parses every line of memory.md again, else
        only up to :data:`talos.index.check.CHECK_ALL_LINES` lines)."""
        from talos.index.check import check

        return check(self, full)

    def rebuild(self, progress: Progress | None = None) -> RefreshStats:
        """Throw the index away and build it again from the files."""
        self.close()
        aside = schema.discard(self.file)
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
