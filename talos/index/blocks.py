"""The ``blocks`` table: the merged episode block, the records block and the skills scan
(design §11).

* ``episodes``: the merged episode block of the indexed sessions
  (:class:`talos.graph.EpisodeBlock`), per version of the sessions. :func:`episode_block`
  reads it, or brings an older block up to date by the sessions removed and added since
  (:func:`changes`, :func:`caught_up`), or builds it from the rows; a block
  :data:`STORE_AFTER` changes behind the stored one is stored again.
* ``records``: the records block of the last view built (:class:`talos.graph.RecordsBlock`),
  per token of all it depends on (:func:`load_records`, :func:`save_records`).
* ``skills_scan``: the last skills scan (:func:`talos.safety.scan_skills`), per tree signature.

Every function takes the index's connection; :class:`talos.index.Index` holds it.
"""

from __future__ import annotations

import sqlite3
import weakref
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from talos.graph.episodes import EpisodeBlock
from talos.graph.stored import BLOCK_VERSION, BlockError
from talos.index.schema import meta, session_rows
from talos.warn import warn

__all__ = [
    "STORE_AFTER",
    "Change",
    "caught_up",
    "changes",
    "episode_block",
    "load_records",
    "load_scan",
    "save_records",
    "save_scan",
]

#: A block extended by this many episodes since the stored one is stored again
#: (:func:`episode_block`); until then each process extends the stored one.
STORE_AFTER = 256


def episode_block(
    con: sqlite3.Connection, file: Path, prev: EpisodeBlock | None = None
) -> EpisodeBlock:
    """The merged episodes of the indexed sessions as arrays (:mod:`talos.graph.episodes`).

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
        OSError, sqlite3.Error: as :meth:`talos.index.Index.refresh`.
    """
    token, base, block, change, store = _block_snapshot(con, file, prev)
    if change is None:
        assert block is not None
        return block  # the stored block of the current sessions, or prev unchanged
    if block is not None:
        grown = caught_up(block, change)
    else:
        grown = EpisodeBlock.build(change.rows)
        grown.last = change.rows[-1][3] if change.rows else ""
    grown.base = base
    return _store_block(con, file, grown, token) if store else grown


def _block_snapshot(
    con: sqlite3.Connection, file: Path, prev: EpisodeBlock | None = None
) -> tuple[str, str, EpisodeBlock | None, Change | None, bool]:
    """In one read transaction: the block token and base of the current sessions, and
    what to do: ``(block, None)`` use it as it is (stored for these sessions, or
    ``prev`` with no change since); ``(block, change)`` bring it up to date (only
    removals and later sessions since it was built, ``prev`` first); ``(None, change)``
    build from every row. The last item says whether to store the result: always for a
    build, else when the stored block is of another base or :data:`STORE_AFTER` changes
    behind (until then the next process brings the stored block up to date by the
    changes it lacks, and one new or removed session costs no rewrite of the blob)."""
    con.execute("BEGIN")
    try:
        token = f"{meta(con, 'sessions_token')}:{BLOCK_VERSION}"
        base = meta(con, "sessions_base") or ""

        def behind() -> bool:
            """Whether the stored block is of another base or far behind."""
            if meta(con, "block_base") != base:
                return True
            last = meta(con, "block_last") or ""
            n = con.execute(
                "SELECT count(*) FROM sessions WHERE text IS NOT NULL AND sortkey > ?",
                (last,),
            ).fetchone()[0]
            n += con.execute(
                "SELECT count(*) FROM dropped WHERE seq > ?",
                (int(meta(con, "block_seq") or 0),),
            ).fetchone()[0]
            return bool(n >= STORE_AFTER)

        if prev is not None and (change := changes(con, prev, base)) is not None:
            if change.empty(prev):
                return token, base, prev, None, False
            return token, base, prev, change, behind()  # no stored blob to decode
        row = con.execute("SELECT token, data FROM blocks WHERE name='episodes'").fetchone()
        if row is not None and isinstance(row[0], str) and isinstance(row[1], bytes):
            try:  # the blob names its token: a row copied from elsewhere is refused
                stored = EpisodeBlock.from_bytes(row[1], row[0])
            except BlockError as e:
                warn(f"{file}: stored episode block unusable ({e}); rebuilding it")
            else:
                if row[0] == token and stored.base == base:
                    return token, base, stored, None, False
                if (change := changes(con, stored, base)) is not None:
                    return token, base, stored, change, change.size >= STORE_AFTER
        rows = session_rows(
            con.execute(
                "SELECT path, text, kw, sortkey, task, outcome, parts FROM sessions"
                " WHERE text IS NOT NULL"
                " ORDER BY sortkey"
            ).fetchall()
        )
        return token, base, None, Change([], rows, 0), True
    finally:
        con.execute("COMMIT")


def changes(con: sqlite3.Connection, old: EpisodeBlock, base: str) -> Change | None:
    """What happened to the sessions since ``old`` was built, inside the caller's read
    transaction: its episodes removed since (the log entries after ``old.seq``) and the
    rows after its last episode, when nothing else changed (same base); else ``None``.
    A logged removal that ``old`` does not hold where it should is ``None`` too: the
    block is built again, never trusted."""
    if not base or old.base != base or old.last is None:
        return None
    if old.seq < int(meta(con, "dropped_floor") or 0):
        return None  # log entries it lacks were pruned (_store_block)
    gone = con.execute(
        "SELECT seq, path, sortkey FROM dropped WHERE seq > ? ORDER BY seq", (old.seq,)
    ).fetchall()
    wanted = [path for _seq, path, key in gone if key <= old.last]  # later ones: not in it
    positions = old.positions(wanted)
    if positions is None:
        return None
    rows = session_rows(
        con.execute(
            "SELECT path, text, kw, sortkey, task, outcome, parts FROM sessions"
            " WHERE text IS NOT NULL"
            " AND sortkey > ? ORDER BY sortkey",
            (old.last,),
        ).fetchall()
    )
    return Change(positions, rows, gone[-1][0] if gone else old.seq)


def _store_block(
    con: sqlite3.Connection, file: Path, block: EpisodeBlock, token: str
) -> EpisodeBlock:
    """Store ``block`` as the block of ``token`` unless the sessions changed since it was
    built (another process refreshed). A read-only index just does not store it."""
    try:
        con.execute("BEGIN IMMEDIATE")
        try:
            now = f"{meta(con, 'sessions_token')}:{BLOCK_VERSION}"
            if token == now:
                con.execute(
                    "INSERT OR REPLACE INTO blocks(name, token, data) VALUES ('episodes', ?, ?)",
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
                if block.seq > int(meta(con, "dropped_floor") or 0):
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
        warn(f"{file}: cannot store the episode block ({e}); recall goes on")
    return block


@dataclass(slots=True)
class Change:
    """What to do to an episode block to bring it up to date (:func:`changes`):
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


def caught_up(block: EpisodeBlock, change: Change) -> EpisodeBlock:
    """``block`` after ``change``: removed episodes gone, new rows appended (as a build of
    the rows would merge them, tests/test_session_remove.py)."""
    mid = block.remove(change.positions)
    out = mid.extend(change.rows) if change.rows else mid.copy()
    out.last = change.rows[-1][3] if change.rows else block.last
    out.seq = change.seq
    # what ``out`` carries of ``block`` itself (``mid`` is gone once this returns)
    first, then = mid.carried_from(block), out.carried_from(mid)
    if first is not None and then is not None:
        carried = np.full(len(then), -1, dtype=np.int64)
        carried[then >= 0] = first[then[then >= 0]]
        out.origin = (weakref.ref(block), carried)
    return out


def load_records(con: sqlite3.Connection, token: str) -> bytes | None:
    """The records block stored under ``token`` (:class:`talos.graph.RecordsBlock`)."""
    row = con.execute(
        "SELECT data FROM blocks WHERE name='records' AND token=?", (token,)
    ).fetchone()
    return row[0] if row is not None and isinstance(row[0], bytes) else None


def save_records(con: sqlite3.Connection, token: str, data: bytes) -> None:
    """Keep a records block under ``token`` (one is kept: the latest)."""
    con.execute(
        "INSERT OR REPLACE INTO blocks(name, token, data) VALUES ('records', ?, ?)",
        (token, data),
    )


def load_scan(con: sqlite3.Connection, key: str) -> str | None:
    """The skills scan stored under ``key`` (:func:`talos.safety.scan_skills`), or None."""
    row = con.execute(
        "SELECT data FROM blocks WHERE name='skills_scan' AND token=?", (key,)
    ).fetchone()
    if row is None or not isinstance(row[0], bytes):
        return None
    return row[0].decode("utf-8", "replace")


def save_scan(con: sqlite3.Connection, key: str, value: str) -> None:
    """Keep a skills scan under ``key`` (one is kept: the latest)."""
    con.execute(
        "INSERT OR REPLACE INTO blocks(name, token, data) VALUES ('skills_scan', ?, ?)",
        (key, value.encode()),
    )
