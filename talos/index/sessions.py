"""The sessions folder in the sessions table: one row per session file (design §11).

:class:`SessionRows` is what the index keeps of it in memory: the folder's signature, the files
without a request yet (looked at on every refresh) and the sort keys of the rows, so a new
session costs a listing of the folder, not a read of every row.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from talos.home import Paths
from talos.index import signatures
from talos.index.schema import meta, session_rows
from talos.index.signatures import size_mtime
from talos.model import Node
from talos.sources.sessions import Folder, episode_node, folder_of, session_names

if TYPE_CHECKING:
    from talos.index import RefreshStats

__all__ = ["LIVE_NS", "Progress", "SessionRows", "watched_rows"]

Progress = Callable[[int, int], None]

#: A session written within this many nanoseconds of a refresh (its row's mtime) may still be
#: going on: its file is looked at on every refresh like one without a request, and read again
#: when it grew, for its outcome (design §3.3: the assistant's last answer changes with every
#: turn). An older session continued is read again by ``talos index`` (a full sweep), as a
#: file rewritten in place. A week: the sessions of a week are tens, each one ``stat``.
LIVE_NS = 7 * 86_400 * 10**9


def watched_rows(con: sqlite3.Connection) -> list[tuple[str, str, int, int, bool]]:
    """The rows whose files every refresh looks at, as ``(sortkey, path, size, mtime_ns,
    has_request)``: sessions without a request yet, and those written within :data:`LIVE_NS`
    (found by the index ``sessions_recent``, not a scan of 30,000 rows)."""
    since = time.time_ns() - LIVE_NS
    return [
        (key, path, size, mtime, bool(has))
        for key, path, size, mtime, has in con.execute(
            "SELECT sortkey, path, size, mtime_ns, text IS NOT NULL FROM sessions"
            " WHERE text IS NULL OR mtime_ns > ?",
            (since,),
        )
    ]


class SessionRows:
    """What the index keeps of the sessions table between refreshes.

    Staleness: ``sig`` is the folder's signature as last settled (the folder is listed again
    when it differs); ``pending`` the files without a request yet and those still being
    written (:func:`watched_rows`), each with its size and mtime (looked at when either
    changed); the sort keys of the rows are those of a sessions change
    token (``_keys``), used only while it is the index's token, else read again.

    Args:
        paths: the home's paths (the sessions folder).
    """

    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self.sig: tuple[Any, ...] | None = None  # the folder's signature, as last settled
        self.pending: dict[str, tuple[int, int]] = {}
        # the sort keys of the session rows as of a sessions token (read once per process)
        self._keys: tuple[str | None, set[str]] | None = None
        self._keys_next: set[str] | None = None  # this refresh's keys, before its token

    def quiet(self) -> bool:
        """Whether no file without a request changed since it was looked at."""
        return all(size_mtime(p) == sig for p, sig in self.pending.items())

    def refresh(
        self,
        con: sqlite3.Connection,
        folders: list[Folder],
        listed: bool,
        sweep: bool,
        stats: RefreshStats,
        progress: Progress | None,
    ) -> None:
        """Bring the sessions table up to date inside the caller's write transaction:
        ``folders`` are the sessions folders (:func:`talos.sources.sessions.session_folders`),
        ``listed`` lists them (one changed), ``sweep`` compares every row's size and
        mtime (``talos index``, recursive mode); ``progress(done, total)`` while files are
        read. Counts go to ``stats``."""
        # Rows are keyed by sort key (the path relative to the folder). Unlisted (the folder
        # is unchanged), only files without a request yet are looked at. Listed, a sweep or
        # a moved folder compares every row; otherwise only the sort keys are read (from
        # their index: no row is loaded) and only new, gone and pending files are looked at:
        # the listing of 30,000 files is the cost of a new session (design §11).
        pending = {key: (path, size, mtime) for key, path, size, mtime, _ in watched_rows(con)}
        # a watched row with a request: read again when it grew (its outcome), so the
        # episode changed and the block is built again (as a re-read of a sweep)
        live = {key for key, _p, _s, _m, has in watched_rows(con) if has}
        todo: list[tuple[str, str]] = []  # (path relative to the folder, full path)
        episodes_reread: set[str] = set()  # rows with a request that are read again
        # Whether the episodes only grew after the newest one ever seen (sessions arrive in
        # time order) or lost some: then the episode block is extended and loses the removed
        # episodes (logged in `dropped`), it is not merged again (episode_block; design §11).
        appended = True
        # The newest sort key of an episode since the base was drawn (removed ones too): an
        # episode sorting before it is no append, even when the newest are gone.
        newest = con.execute("SELECT max(sortkey) FROM sessions WHERE text IS NOT NULL").fetchone()[
            0
        ]
        last = max(meta(con, "sessions_high") or "", newest or "") or None
        if listed:
            files = session_names(self.paths.sessions_dirs, ordered=False)
            names = dict(files)
            places = [[str(f.root), *signatures.dir_sig(f.root)[3:]] for f in folders]
            # path, device, inode (of one folder as before issue 16.4, else a list of them)
            here = json.dumps(places[0] if len(places) == 1 else places)
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
                    if path != full or size_mtime(full) != (size, mtime):
                        todo.append((rel, full))
                        if has:
                            episodes_reread.add(rel)
                elif rel in pending and size_mtime(full) != pending[rel][1:]:
                    todo.append((rel, full))
                    if rel in live:
                        episodes_reread.add(rel)
            todo.sort()
            con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('sessions_root', ?)", (here,))
            self._keys_next = (keys - gone) | {rel for rel, _full in todo}
            stats.swept = sweep
        else:
            for key, (path, size, mtime) in pending.items():
                if size_mtime(path) != (size, mtime):
                    todo.append((key, path))
                    if key in live:
                        episodes_reread.add(key)
        total = len(todo)
        for done, (rel, full) in enumerate(todo, 1):
            p = Path(full)
            size, mtime = size_mtime(p)
            node = episode_node(p, folder=folder_of(rel, folders).root)
            if rel in episodes_reread:
                appended = False  # an episode was re-read: changed, or gone
            elif node is not None and last is not None and rel <= last:
                appended = False  # a new episode before the newest one
            con.execute(
                "INSERT OR REPLACE INTO sessions(path, sortkey, size, mtime_ns, text, kw,"
                " task, outcome, cwd, day, last_day, parts)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    full,
                    rel,
                    size,
                    mtime,
                    None if node is None else node.text,
                    None if node is None else " ".join(sorted(node.keywords)),
                    "" if node is None else node.task,
                    "" if node is None else node.outcome,
                    "" if node is None else node.cwd,
                    "" if node is None else node.day,
                    "" if node is None else node.last_day,
                    "" if node is None else node.parts,
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
        self.pending = {path: (size, mtime) for _k, path, size, mtime, _ in watched_rows(con)}

    def committed(self, token: str | None) -> None:
        """The refresh's transaction committed: the sort keys it saw are those of ``token``."""
        if self._keys_next is not None:
            self._keys, self._keys_next = (token, self._keys_next), None

    def forget(self) -> None:
        """Drop the sort keys, the pending files and the signature (re-read next time)."""
        self._keys = self._keys_next = None
        self.pending = {}
        self.sig = None

    def episodes(self, con: sqlite3.Connection, start: int = 0) -> list[Node]:
        """Episode nodes in load order (sorted by sort key: folder by folder, each by path
        relative to it; :func:`talos.sources.sessions.session_names`)."""
        return [
            Node(
                kind="episode",
                text=text,
                keywords=frozenset(kw.split()),
                order=start + i,
                path=path,
                task=task,
                outcome=outcome,
                cwd=cwd,
                day=day,
                last_day=last_day,
                parts=parts,
            )
            for i, (path, text, kw, task, outcome, cwd, day, last_day, parts) in enumerate(
                session_rows(
                    con.execute(
                        "SELECT path, text, kw, task, outcome, cwd, day, last_day, parts"
                        " FROM sessions"
                        " WHERE text IS NOT NULL ORDER BY sortkey"
                    ).fetchall()
                )
            )
        ]

    @staticmethod
    def folders(con: sqlite3.Connection) -> dict[str, list[str]]:
        """The working folders the episodes' transcripts name (design §3.3), each with the
        paths of its episodes: ``{cwd: [path, …]}``; episodes without one are left out (they
        are ``global``'s). Read through no episode text."""
        out: dict[str, list[str]] = {}
        for path, cwd in session_rows(
            con.execute(
                "SELECT path, cwd FROM sessions WHERE text IS NOT NULL AND cwd != ''"
            ).fetchall()
        ):
            out.setdefault(cwd, []).append(path)
        return out

    @staticmethod
    def dated(con: sqlite3.Connection, start: str, end: str) -> dict[str, tuple[str, str]]:
        """The episodes whose session's days meet ``[start, end)`` (``YYYY-MM-DD``): ``{path:
        (day, last_day)}`` (design §7.3: an ask's time words). Episodes without a day are
        never in a window."""
        rows = con.execute(
            "SELECT path, day, last_day FROM sessions WHERE text IS NOT NULL AND day != ''"
            " AND day < ? AND (CASE WHEN last_day != '' THEN last_day ELSE day END) >= ?",
            (end, start),
        ).fetchall()
        return {path: (day, last) for path, day, last in session_rows(rows)}
