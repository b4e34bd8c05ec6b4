"""The ``terms`` table (schema 5): the analyzed term rows of matching texts
(:class:`talos.termrows.TermRows`), one blob under the analyzer's fingerprint (SPEC §11: a
cache of the files; a row of another type or token is not used).

Every function takes the index's connection; :class:`talos.index.Index` holds it.
"""

from __future__ import annotations

import sqlite3
from contextlib import suppress

__all__ = ["load_terms", "save_terms"]


def load_terms(con: sqlite3.Connection, token: str) -> bytes | None:
    """The term rows stored under the analyzer ``token``, or None (none, another analyzer's,
    or a value of another type)."""
    row = con.execute("SELECT token, data FROM terms WHERE name='rows'").fetchone()
    if row is None or row[0] != token or not isinstance(row[1], bytes):
        return None
    return row[1]


def save_terms(con: sqlite3.Connection, token: str, data: bytes) -> None:
    """Keep the term rows ``data`` made by the analyzer ``token`` (one blob: the latest), in
    one write transaction.

    Raises:
        sqlite3.Error: the index is read-only, locked past its timeout, or the disk is full.
    """
    con.execute("BEGIN IMMEDIATE")
    try:
        con.execute(
            "INSERT OR REPLACE INTO terms(name, token, data) VALUES ('rows', ?, ?)", (token, data)
        )
        con.execute("COMMIT")
    except BaseException:
        with suppress(sqlite3.Error):
            con.execute("ROLLBACK")
        raise
