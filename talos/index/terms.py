"""The ``terms`` table (schema 5): the analyzed term rows of matching texts
(:class:`talos.view.termrows.TermRows`), one blob under the analyzer's fingerprint (design §11: a
cache of the files; a row of another type or token is not used).

Every function takes the index's connection; :class:`talos.index.Index` holds it.
"""

from __future__ import annotations

import sqlite3
from contextlib import suppress

__all__ = ["load_terms", "save_terms"]


def load_terms(con: sqlite3.Connection, token: str, name: str = "rows") -> bytes | None:
    """The blob ``name`` stored under ``token``, or None (none, another token's, or a value
    of another type): ``rows``, the term rows of the analyzer ``token``; ``ranking``, the
    ranking block (:mod:`talos.index.ranking`)."""
    row = con.execute("SELECT token, data FROM terms WHERE name=?", (name,)).fetchone()
    if row is None or row[0] != token or not isinstance(row[1], bytes):
        return None
    return row[1]


def save_terms(con: sqlite3.Connection, token: str, data: bytes, name: str = "rows") -> None:
    """Keep the blob ``name`` (:func:`load_terms`) under ``token`` (one per name: the
    latest), in one write transaction.

    Raises:
        sqlite3.Error: the index is read-only, locked past its timeout, or the disk is full.
    """
    con.execute("BEGIN IMMEDIATE")
    try:
        con.execute(
            "INSERT OR REPLACE INTO terms(name, token, data) VALUES (?, ?, ?)", (name, token, data)
        )
        con.execute("COMMIT")
    except BaseException:
        with suppress(sqlite3.Error):
            con.execute("ROLLBACK")
        raise
