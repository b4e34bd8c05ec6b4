"""usage.db's first use waits for another connection instead of failing (design §6.3: no lost
update). Found in CI: 4 processes recalling at once on a new home warned "cannot update usage
counts (database is locked)" — switching a new file to WAL fails at once while another
connection holds it, and no busy handler applies to that switch."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from talos import Memory


def test_the_first_recall_waits_for_a_connection_holding_a_new_usage_db(
    make_home, capsys: pytest.CaptureFixture[str]
) -> None:
    home: Path = make_home(memory="- the staging db is called pelican\n")
    db = home / ".talos" / "usage.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE IF NOT EXISTS t(x)")  # a talos process creating it, say
    other.execute("DROP TABLE t")
    other.execute("BEGIN IMMEDIATE")  # holds the write lock of the new file
    release = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    release.start()
    try:
        with Memory(home, model="classic") as mem:
            assert "pelican" in mem.recall("staging db").text
    finally:
        release.join()
        other.close()
    assert capsys.readouterr().err == ""
    with Memory(home, model="classic") as mem:
        assert mem.usage()["fact:the staging db is called pelican"].seen == 1
