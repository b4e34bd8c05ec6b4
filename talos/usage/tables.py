"""usage.db's tables (design §6.3, §9): this device's cache of its own usage log.

``counters(scope, n)`` (recalls per scope), ``fingerprints(scope, fp)`` (of the key set counted
last), ``usage(scope, key, base_seen, since, present, hits, last_hit_day, first_day)`` and, from
schema 3, ``device(id, log_ino, log_size)``: which device the file belongs to and how far into
that device's log (:mod:`talos.usage.log`) its counts are. The counts equal the replay of the
log up to ``log_size``: usage.db is the replay kept up to date, so a recall writes what changed
and a reader of this device's counts replays nothing. Also from schema 3, ``replays(device,
state)``: other devices' logs replayed, so a new process does not replay them from their first
line. Here: the statements on these tables, and the exchange with a replayed log
(:func:`state`, :func:`load`).
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from talos.errors import StateError
from talos.fsutil import MAX_STATE_BYTES, json_value, read_regular
from talos.usage.log import BASE, FIRST, HITS, LAST, PRESENT, SINCE, Replay, Scope
from talos.warn import warn

__all__ = [
    "CREATE",
    "DEVICE",
    "INDEXES",
    "MAX_COUNT",
    "REFERENCE_KINDS",
    "REPLAYS",
    "count",
    "import_reference",
    "load",
    "no_day_after",
    "scope_counts",
    "state",
    "sync_presence",
]

#: Kind names of a reference Talos ``recall_hits.json`` → ours.
REFERENCE_KINDS = {"事实": "fact", "技能": "skill", "往事": "episode"}
#: Largest count SQLite stores (a signed 64-bit integer).
MAX_COUNT = (1 << 63) - 1

#: Schema 3's table: which device the file is the cache of, and how far into its log.
DEVICE = (
    "CREATE TABLE IF NOT EXISTS device(id TEXT NOT NULL,"
    " log_ino INTEGER NOT NULL DEFAULT 0, log_size INTEGER NOT NULL DEFAULT 0)"
)
#: Schema 3's cache of other devices' logs replayed (:func:`talos.usage.log.snapshot`).
REPLAYS = "CREATE TABLE IF NOT EXISTS replays(device TEXT PRIMARY KEY, state TEXT NOT NULL)"
#: The tables of the current schema (3), made in a new usage.db.
CREATE = (
    "CREATE TABLE IF NOT EXISTS counters(scope TEXT PRIMARY KEY, n INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS fingerprints(scope TEXT PRIMARY KEY, fp TEXT)",
    "CREATE TABLE IF NOT EXISTS usage(scope TEXT NOT NULL, key TEXT NOT NULL,"
    " base_seen INTEGER NOT NULL DEFAULT 0, since INTEGER NOT NULL DEFAULT 0,"
    " present INTEGER NOT NULL DEFAULT 0, hits INTEGER NOT NULL DEFAULT 0,"
    " last_hit_day INTEGER NOT NULL DEFAULT 0,"
    " first_day INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(scope, key))",
    DEVICE,
    REPLAYS,
)
#: Indexes by day, so a recall finds the days a clock that ran ahead left in the future in
#: one seek (:func:`no_day_after`). Created on any schema (an older talos keeps them up to date
#: as SQLite does, and reads the file as before): not a schema of their own.
INDEXES = (
    "CREATE INDEX IF NOT EXISTS usage_first_day ON usage(scope, first_day)",
    "CREATE INDEX IF NOT EXISTS usage_last_hit_day ON usage(scope, last_hit_day)",
)


def count(value: object) -> int:
    """A count of a reference ``recall_hits.json`` as talos keeps it: a number from 0 to
    :data:`MAX_COUNT`, else 0. ``1e400`` (infinity once read) raised OverflowError on import,
    and ``1e30`` does in SQLite: ``dead``, ``report`` and doctor failed on every run."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    return int(value) if 0 <= value <= MAX_COUNT else 0


def import_reference(con: sqlite3.Connection, path: Path, limit: int) -> int:
    """Import ``{"<kind>:<text80>": [seen, hits(, last_hit_day)]}`` from the reference's
    ``recall_hits.json`` at ``path`` once, so upgrading from the reference never zeroes the
    statistics (design §6.3). Returns the rows imported (0: nothing to import, or unreadable,
    with a warning).

    Raises:
        StateError: the file is larger than ``limit`` bytes (a later command imports it).
    """
    with contextlib.suppress(OSError):
        size = path.stat().st_size
        if size > limit:
            raise StateError(
                f"{path}: {size} bytes, more than the {limit} imported here; not imported by "
                "the hook (talos recall or talos index imports it); usage counts not kept this "
                "time"
            )
    try:
        data = json_value(read_regular(path, MAX_STATE_BYTES).decode("utf-8"))
    except (OSError, ValueError) as e:
        warn(f"{path}: cannot import reference usage counts ({e})")
        return 0
    if not isinstance(data, dict):
        return 0
    rows = []
    for key, entry in data.items():
        if not isinstance(key, str) or not isinstance(entry, list) or len(entry) < 2:
            continue
        kind, _, text = key.partition(":")
        kind = REFERENCE_KINDS.get(kind, kind)
        vals = [count(x) for x in entry[:3]] + [0]
        rows.append(("global", f"{kind}:{text}", vals[0], vals[1], vals[2]))
    before = con.total_changes
    con.executemany(
        "INSERT OR IGNORE INTO usage(scope, key, base_seen, hits, last_hit_day) "
        "VALUES (?, ?, ?, ?, ?)",
        rows,
    )
    return con.total_changes - before


def no_day_after(con: sqlite3.Connection, scope: str, day: int) -> None:
    """Lower every ``first_day`` and ``last_hit_day`` of ``scope`` later than ``day``, the day
    of a recall being counted, to ``day``. A later day was written by a clock that ran ahead:
    a memory first counted "ten years from now" was never proposed by ``dead`` (design §6.4)
    for ten years, and one hit then was never stale (tests/test_dead_span.py). ``day`` is the
    latest day either can truly be. One index seek per day column (:data:`INDEXES`); nothing
    is written unless the clock went back."""
    for column in ("first_day", "last_hit_day"):
        where = f"WHERE scope = ? AND {column} > ?"
        if con.execute(f"SELECT 1 FROM usage {where} LIMIT 1", (scope, day)).fetchone():
            con.execute(f"UPDATE usage SET {column} = ? {where}", (day, scope, day))


def sync_presence(
    con: sqlite3.Connection,
    scope: str,
    keys: frozenset[str],
    n: int,
    day: int,
    known: frozenset[str] | None = None,
) -> tuple[frozenset[str], frozenset[str]]:
    """Mark present exactly ``keys`` of ``scope`` at recall counter ``n`` (``known``: the keys
    present now, when the caller knows them). Returns ``(appeared, vanished)``, what the
    device's log line says of the scope."""
    stored = (
        known
        if known is not None
        else frozenset(
            r[0] for r in con.execute("SELECT key FROM usage WHERE scope=? AND present=1", (scope,))
        )
    )
    gone = stored - keys
    if gone:
        con.executemany(
            "UPDATE usage SET base_seen = base_seen + (? - since), present = 0 "
            "WHERE scope = ? AND key = ?",
            [(n, scope, k) for k in gone],
        )
    new = keys - stored
    if new:
        con.executemany(  # a key that comes back keeps the day it was first counted
            "INSERT INTO usage(scope, key, since, present, first_day) VALUES (?, ?, ?, 1, ?) "
            "ON CONFLICT(scope, key) DO UPDATE SET since = excluded.since, present = 1",
            [(scope, k, n, day) for k in new],
        )
    return new, gone


def scope_counts(con: sqlite3.Connection, scope: str) -> dict[str, tuple[int, int, int, int]]:
    """``key → (seen, hits, last_hit_day, first_day)`` of ``scope`` (first_day 0 in a schema-1
    file opened read-only: it is migrated only when it can be written)."""
    row = con.execute("SELECT n FROM counters WHERE scope=?", (scope,)).fetchone()
    n = row[0] if row else 0
    first = "first_day" if _has_column(con, "usage", "first_day") else "0"
    return {
        key: (base + (n - since if present else 0), hits, day, first_day)
        for key, base, since, present, hits, day, first_day in con.execute(
            f"SELECT key, base_seen, since, present, hits, last_hit_day, {first} "
            "FROM usage WHERE scope=?",
            (scope,),
        )
    }


def _has_column(con: sqlite3.Connection, table: str, column: str) -> bool:
    return any(r[1] == column for r in con.execute(f"PRAGMA table_info({table})"))


def state(
    con: sqlite3.Connection,
) -> dict[str, tuple[int, dict[str, tuple[int, int, int, int]], list[str]]]:
    """The whole state of the tables as a base line holds it (:func:`talos.usage.log.base_line`):
    ``scope → (n, key → (seen, hits, last_hit_day, first_day), present keys)``."""
    ns = dict(con.execute("SELECT scope, n FROM counters").fetchall())
    out: dict[str, tuple[int, dict[str, tuple[int, int, int, int]], list[str]]] = {}
    for scope, key, base, since, present, hits, last, first in con.execute(
        "SELECT scope, key, base_seen, since, present, hits, last_hit_day, first_day FROM usage"
    ):
        n = ns.get(scope, 0)
        entry = out.get(scope)
        if entry is None:
            entry = out[scope] = (n, {}, [])
        entry[1][key] = (base + (n - since if present else 0), hits, last, first)
        if present:
            entry[2].append(key)
    for scope, n in ns.items():
        out.setdefault(scope, (n, {}, []))
    return out


def load(con: sqlite3.Connection, replay: Replay | None) -> None:
    """Replace the counts by ``replay``'s (the device's log replayed; ``None``: no log), and
    forget the fingerprints, so the next recall compares its keys with the rows present."""
    for table in ("usage", "counters", "fingerprints"):
        con.execute(f"DELETE FROM {table}")
    if replay is None:
        return
    con.executemany(
        "INSERT INTO counters(scope, n) VALUES (?, ?)",
        [(scope, st.n) for scope, st in replay.scopes.items()],
    )
    con.executemany(
        "INSERT INTO usage(scope, key, base_seen, since, present, hits, last_hit_day, "
        "first_day) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        _rows(replay.scopes.items()),
    )


def _rows(scopes: Iterable[tuple[str, Scope]]) -> Iterable[tuple[object, ...]]:
    for scope, st in scopes:
        for key, r in st.keys.items():
            yield (scope, key, r[BASE], r[SINCE], r[PRESENT], r[HITS], r[LAST], r[FIRST])
