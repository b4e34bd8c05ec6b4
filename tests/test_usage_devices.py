"""Usage counts that travel (design §6.3, §9): each device appends its recalls to its own
``.talos/devices/<id>/usage.jsonl``; the counts shown are every device's logs merged; usage.db
is this device's cache of its own log.

The failing input: two machines sharing a home through a sync folder both rewrote
``.talos/usage.db``, so one machine's counts replaced the other's (or the sync made a conflict
copy); ``talos dead`` on either saw only its own recalls. Here: the replay of a log equals what
usage.db counted (a property over random recalls), two homes that exchange their device
folders show the same sums, a usage.db of today's layout is carried over without losing a
count, and a kill, a torn or garbled line, a FIFO or a link in a device's folder lose nothing
else and hang nothing.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import talos.usage.log as usage_log
import talos.usage.store as store_module
from talos import Memory
from talos.cli import app
from talos.errors import StateError
from talos.usage import tables
from talos.usage.log import PRESENT, Replay
from talos.usage.store import SqliteUsage, Stat, fingerprint, merge

KETTLE = "fact:the kettle is in the left cupboard"
ZEBRA = "fact:an old note about the zebra crossing"
MEMORY = "- the kettle is in the left cupboard\n- an old note about the zebra crossing\n"
Counts = dict[str, tuple[int, int, int, int]]


# -- today's usage.db, as the code before the logs wrote it ------------------------------------


def _old_db(path: Path, import_hits: Path | None = None) -> sqlite3.Connection:
    """A usage.db of schema 2 made as talos made it before the logs (the reference's counts
    imported when ``import_hits`` is given)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path, isolation_level=None)
    con.executescript(
        "CREATE TABLE counters(scope TEXT PRIMARY KEY, n INTEGER NOT NULL);"
        "CREATE TABLE fingerprints(scope TEXT PRIMARY KEY, fp TEXT);"
        "CREATE TABLE usage(scope TEXT NOT NULL, key TEXT NOT NULL,"
        " base_seen INTEGER NOT NULL DEFAULT 0, since INTEGER NOT NULL DEFAULT 0,"
        " present INTEGER NOT NULL DEFAULT 0, hits INTEGER NOT NULL DEFAULT 0,"
        " last_hit_day INTEGER NOT NULL DEFAULT 0,"
        " first_day INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(scope, key));"
        "CREATE INDEX usage_first_day ON usage(scope, first_day);"
        "CREATE INDEX usage_last_hit_day ON usage(scope, last_hit_day);"
        "PRAGMA user_version=2;"
    )
    if import_hits is not None:
        for key, (seen, hits, last) in json.loads(import_hits.read_text("utf-8")).items():
            kind, _, text = key.partition(":")
            con.execute(
                "INSERT OR IGNORE INTO usage(scope, key, base_seen, hits, last_hit_day) "
                "VALUES ('global', ?, ?, ?, ?)",
                (f"{tables.REFERENCE_KINDS.get(kind, kind)}:{text}", seen, hits, last),
            )
    return con


def _old_record(
    con: sqlite3.Connection,
    present: Mapping[str, frozenset[str]],
    hits: Mapping[str, set[str]],
    day: int,
) -> None:
    """One recall counted as the code before the logs counted it, statement for statement."""
    con.execute("BEGIN IMMEDIATE")
    for scope, keys in present.items():
        row = con.execute("SELECT n FROM counters WHERE scope=?", (scope,)).fetchone()
        n = row[0] if row else 0
        fp = fingerprint(keys)
        old = con.execute("SELECT fp FROM fingerprints WHERE scope=?", (scope,)).fetchone()
        if not old or old[0] != fp:
            stored = {
                r[0]
                for r in con.execute("SELECT key FROM usage WHERE scope=? AND present=1", (scope,))
            }
            con.executemany(
                "UPDATE usage SET base_seen = base_seen + (? - since), present = 0 "
                "WHERE scope = ? AND key = ?",
                [(n, scope, k) for k in stored - keys],
            )
            con.executemany(
                "INSERT INTO usage(scope, key, since, present, first_day) VALUES (?, ?, ?, 1, ?) "
                "ON CONFLICT(scope, key) DO UPDATE SET since = excluded.since, present = 1",
                [(scope, k, n, day) for k in keys - stored],
            )
            con.execute("INSERT OR REPLACE INTO fingerprints(scope, fp) VALUES (?, ?)", (scope, fp))
        con.execute(
            "INSERT INTO counters(scope, n) VALUES (?, 1) "
            "ON CONFLICT(scope) DO UPDATE SET n = n + 1",
            (scope,),
        )
        for column in ("first_day", "last_hit_day"):
            where = f"WHERE scope = ? AND {column} > ?"
            if con.execute(f"SELECT 1 FROM usage {where} LIMIT 1", (scope, day)).fetchone():
                con.execute(f"UPDATE usage SET {column} = ? {where}", (day, scope, day))
    for scope, hit_keys in hits.items():
        con.executemany(
            "UPDATE usage SET hits = hits + 1, last_hit_day = ? WHERE scope = ? AND key = ?",
            [(day, scope, k) for k in hit_keys],
        )
    con.execute("COMMIT")


def _old_stats(con: sqlite3.Connection, scope: str) -> Counts:
    """``SqliteUsage.stats`` of the code before the logs."""
    row = con.execute("SELECT n FROM counters WHERE scope=?", (scope,)).fetchone()
    n = row[0] if row else 0
    return {
        key: (base + (n - since if present else 0), hits, day, first)
        for key, base, since, present, hits, day, first in con.execute(
            "SELECT key, base_seen, since, present, hits, last_hit_day, first_day "
            "FROM usage WHERE scope=?",
            (scope,),
        )
    }


def _replay(path: Path) -> Replay:
    """``path`` replayed from its first line, without the per-process memo."""
    replay = Replay()
    for line in path.read_bytes().splitlines():
        replay.apply(json.loads(line))
    return replay


def _counts(replay: Replay, scope: str) -> Counts:
    got = replay.scopes.get(scope)
    return got.counts() if got is not None else {}


def _present(replay: Replay, scope: str) -> set[str]:
    got = replay.scopes.get(scope)
    return {k for k, r in got.keys.items() if r[PRESENT]} if got is not None else set()


def _as_counts(stats: Mapping[str, Stat]) -> Counts:
    return {k: (s.seen, s.hits, s.last_hit_day, s.first_day) for k, s in stats.items()}


# -- the replay of a log is what usage.db counted ------------------------------------------------

KEYS = ["fact:a", "fact:b", "fact:c", "skill:d", "fact:\u4e2d \u2028 \u00e9 \\"]
SCOPES = ["global", "work"]
RECALLS = st.lists(
    st.tuples(
        st.dictionaries(st.sampled_from(SCOPES), st.frozensets(st.sampled_from(KEYS)), max_size=2),
        st.dictionaries(st.sampled_from(SCOPES), st.sets(st.sampled_from(KEYS)), max_size=2),
        st.integers(100, 105),  # the clock goes back too (a day a clock ahead wrote is lowered)
        st.integers(0, 1),  # which of two stores (processes) counts it
    ),
    max_size=14,
)


@settings(max_examples=150, deadline=None)
@given(RECALLS)
def test_replaying_a_devices_log_gives_the_counts_usage_db_kept(recalls: list) -> None:
    """Random recalls (scopes, keys appearing and vanishing, hits of present and absent keys,
    days going back) counted by today's statements in a usage.db of the old layout, and by
    SqliteUsage (two objects, as two processes): replaying the device's log gives exactly the
    old counts, per scope and key, and the same keys present; and SqliteUsage shows them."""
    with tempfile.TemporaryDirectory() as d:
        old = _old_db(Path(d) / "old" / "usage.db")
        db = Path(d) / "home" / ".talos" / "usage.db"
        stores = [SqliteUsage(db), SqliteUsage(db)]
        for present, hits, day, who in recalls:
            _old_record(old, present, hits, day)
            stores[who].record(present, hits, day)
        replay = _replay(stores[0].log) if recalls else Replay()
        for scope in SCOPES:
            want = _old_stats(old, scope)
            assert _counts(replay, scope) == want
            kept = {
                r[0]
                for r in old.execute("SELECT key FROM usage WHERE scope=? AND present=1", (scope,))
            }
            assert _present(replay, scope) == kept
            assert _as_counts(stores[1].stats(scope)) == want
        for s in stores:
            s.close()
        old.close()


def test_a_line_that_repeats_the_previous_diff_counts_presence_once() -> None:
    """A kill between a line's append and usage.db's commit: the next line may say again what
    appeared and vanished. A "+" of a key present and a "-" of one absent change nothing: the
    key present before counts from when it first appeared, not twice."""
    lines = [
        {"d": 100, "s": {"global": {"+": ["fact:a", "fact:b"]}}},
        {
            "d": 100,
            "s": {"global": {"+": ["fact:c"], "-": ["fact:b"]}},
            "h": {"global": ["fact:c"]},
        },
        {"d": 101, "s": {"global": {"+": ["fact:c"], "-": ["fact:b"]}}},  # the same diff again
        {"d": 101, "s": {"global": {}}},
    ]
    replay = Replay()
    for line in lines:
        replay.apply(line)
    assert _counts(replay, "global") == {
        "fact:a": (4, 0, 0, 100),
        "fact:b": (1, 0, 0, 100),
        "fact:c": (3, 1, 100, 100),
    }
    assert _present(replay, "global") == {"fact:a", "fact:c"}


def test_a_base_line_replaces_what_was_replayed_before_it() -> None:
    """A base line is the whole state of the device (a usage.db of the old layout carried
    over, or put back from a backup): what came before it is not added to it."""
    replay = Replay()
    replay.apply({"d": 100, "s": {"work": {"+": ["fact:w"]}, "global": {"+": ["fact:a"]}}})
    base = {"global": {"n": 4, "k": {"fact:b": [6, 1, 90, 80]}, "p": ["fact:b"]}}
    replay.apply({"base": base})
    replay.apply({"base": base})  # written again after a kill: the same state
    replay.apply({"d": 101, "s": {"global": {}}})
    assert set(replay.scopes) == {"global"}
    assert _counts(replay, "global") == {"fact:b": (7, 1, 90, 80)}


def test_merge_sums_counts_and_takes_the_latest_hit_and_the_earliest_known_first_day() -> None:
    laptop = {"fact:a": (5, 2, 120, 100), "fact:b": (3, 0, 0, 0)}
    desk = {"fact:a": (4, 1, 130, 110), "fact:b": (2, 1, 90, 95), "fact:c": (1, 0, 0, 130)}
    got = merge([laptop, desk])
    assert list(got) == ["fact:a", "fact:b", "fact:c"]  # by key: every device, the same order
    assert {k: (*v, v.first_day) for k, v in got.items()} == {
        "fact:a": (9, 3, 130, 100),
        "fact:b": (5, 1, 90, 95),  # 0 is "not known", not the earliest day
        "fact:c": (1, 0, 0, 130),
    }


# -- two devices ---------------------------------------------------------------------------------


def _recall(home: Path, device: str, monkeypatch: pytest.MonkeyPatch, *queries: str) -> dict:
    monkeypatch.setenv("TALOS_DEVICE", device)
    with Memory(home, index=False) as mem:
        for q in queries:
            mem.recall(q)
        return dict(mem.usage())


def _usage(home: Path, device: str, monkeypatch: pytest.MonkeyPatch) -> dict:
    return _recall(home, device, monkeypatch)


def test_two_devices_that_exchange_their_folders_show_the_same_sums(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two homes (two machines) whose ``.talos/devices/`` folders are copied into each other,
    as a sync folder does: each shows the sum of both devices' counts, the same on both, and
    a recall on one never writes the other device's log."""
    a = make_home(memory=MEMORY, name="a")
    b = make_home(memory=MEMORY, name="b")
    alone_a = _recall(a, "laptop", monkeypatch, "where is the kettle", "where is the kettle", "x")
    alone_b = _recall(b, "desk", monkeypatch, "zebra crossing", "where is the kettle")
    assert (alone_a[KETTLE][:2], alone_a[ZEBRA][:2]) == ((3, 2), (3, 0))
    assert (alone_b[KETTLE][:2], alone_b[ZEBRA][:2]) == ((2, 1), (2, 1))
    for src, dst, device in ((a, b, "laptop"), (b, a, "desk")):
        shutil.copytree(src / ".talos/devices" / device, dst / ".talos/devices" / device)
    on_a = _usage(a, "laptop", monkeypatch)
    on_b = _usage(b, "desk", monkeypatch)
    today = alone_a[KETTLE].last_hit_day
    assert on_a == {KETTLE: (5, 3, today), ZEBRA: (5, 1, today)}
    assert list(on_a.items()) == list(on_b.items())
    assert on_a[KETTLE].first_day == on_b[KETTLE].first_day == today
    desk_log = (a / ".talos/devices/desk/usage.jsonl").read_bytes()
    assert _recall(a, "laptop", monkeypatch, "where is the kettle")[KETTLE] == (6, 4, today)
    assert (a / ".talos/devices/desk/usage.jsonl").read_bytes() == desk_log


def test_a_copied_home_does_not_count_the_other_devices_counts_twice(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cp -r`` of a home (usage.db with it) onto another device: its usage.db is the first
    device's cache, not trusted: the first device's counts come from its log only, once; the
    copy's first recall rebuilds usage.db as its own."""
    a = make_home(memory=MEMORY, name="a")
    alone = _recall(a, "laptop", monkeypatch, "where is the kettle", "x", "y")
    b = a.parent / "b"
    shutil.copytree(a, b)
    assert _usage(b, "desk", monkeypatch) == alone
    got = _recall(b, "desk", monkeypatch, "where is the kettle")
    assert (got[KETTLE][:2], got[ZEBRA][:2]) == ((4, 2), (4, 0))
    con = sqlite3.connect(b / ".talos/usage.db")
    assert con.execute("SELECT id FROM device").fetchall() == [("desk",)]
    assert con.execute("SELECT SUM(hits) FROM usage").fetchone() == (1,)  # desk's own only
    con.close()
    assert _usage(a, "laptop", monkeypatch) == alone  # a knows nothing of b


# -- carrying over a usage.db of the old layout ------------------------------------------------


def test_a_usage_db_of_the_old_layout_is_carried_over_without_losing_a_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counts of a usage.db made by the code before the logs (recalls on several days, a key
    that vanished and came back, the reference's recall_hits.json imported): the first open
    writes one base line to this device's log; seen, hits, last_hit_day and first_day of
    every key are as before, and stay equal to the old code's as recalls go on. A kill between
    the base line and the mark (usage.db still of schema 2, the line written) writes the line
    again: nothing is counted twice."""
    monkeypatch.setenv("TALOS_DEVICE", "laptop")
    state = tmp_path / "home" / ".talos"
    hits_file = state / "recall_hits.json"
    state.mkdir(parents=True)
    hits_file.write_text(json.dumps({"事实:old fact": [7, 2, 90], "技能:a skill": [3, 0, 0]}))
    db = state / "usage.db"
    con = _old_db(db, hits_file)
    recalls = [
        ({"global": frozenset({"fact:a", "fact:b", "fact:old fact"})}, {"global": {"fact:a"}}, 100),
        ({"global": frozenset({"fact:a"}), "work": frozenset({"fact:w"})}, {}, 101),
        (
            {"global": frozenset({"fact:a", "fact:b"})},
            {"global": {"fact:b"}, "work": {"fact:w"}},
            99,
        ),
    ]
    for present, hits, day in recalls:
        _old_record(con, present, hits, day)
    want = {s: _old_stats(con, s) for s in SCOPES}
    con.close()
    before = db.read_bytes()

    store = SqliteUsage(db, import_hits=hits_file)
    assert {s: _as_counts(store.stats(s)) for s in SCOPES} == want
    assert want["global"]["fact:old fact"] == (8, 2, 90, 0)  # imported, then seen once
    assert want["global"]["fact:b"] == (2, 1, 99, 99)  # came back; the clock went back
    lines = store.log.read_text("utf-8").splitlines()
    assert len(lines) == 1 and set(json.loads(lines[0])) == {"base"}
    assert {s: _counts(_replay(store.log), s) for s in SCOPES} == want
    store.close()

    # killed after the base line, before usage.db was marked: the file is of schema 2 again
    for extra in ("-wal", "-shm"):
        Path(f"{db}{extra}").unlink(missing_ok=True)
    db.write_bytes(before)
    store = SqliteUsage(db, import_hits=hits_file)
    assert {s: _as_counts(store.stats(s)) for s in SCOPES} == want
    assert [set(json.loads(x)) for x in store.log.read_text("utf-8").splitlines()] == [{"base"}] * 2

    # and recalls go on as the old code would have counted them
    (tmp_path / "old-again.db").write_bytes(before)
    old = sqlite3.connect(tmp_path / "old-again.db", isolation_level=None)
    more = [
        ({"global": frozenset({"fact:b", "fact:c"})}, {"global": {"fact:c", "fact:a"}}, 102),
        ({"global": frozenset({"fact:b", "fact:c"}), "work": frozenset()}, {}, 103),
    ]
    for present, hits, day in more:
        _old_record(old, present, hits, day)
        store.record(present, hits, day)
    for s in SCOPES:
        assert _as_counts(store.stats(s)) == _old_stats(old, s)
        assert _counts(_replay(store.log), s) == _old_stats(old, s)
    old.close()
    store.close()
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone() == (3,)


def test_the_reference_counts_are_imported_once_over_all_devices(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reference recall_hits.json in a new home goes into the first device's log as a base
    line; a second device that finds a device's log does not import the same file again."""
    a = make_home(memory=MEMORY, name="a")
    (a / ".talos").mkdir()
    (a / ".talos/recall_hits.json").write_text(
        json.dumps({"事实:the kettle is in the left cupboard": [9, 4, 50]})
    )
    got = _recall(a, "laptop", monkeypatch, "where is the kettle")
    today = got[KETTLE].last_hit_day
    assert got[KETTLE] == (10, 5, today)
    (a / ".talos/usage.db").unlink()  # a second device: no usage.db of its own
    got = _recall(a, "desk", monkeypatch, "where is the kettle")
    assert got[KETTLE] == (11, 6, today)


# -- a kill, a failed write ------------------------------------------------------------------------


class _DiesAtCommit:
    """A connection whose COMMIT fails, after the recall's line was appended."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql == "COMMIT":
            raise sqlite3.OperationalError("disk I/O error")
        return self.con.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self.con, name)


def _dies_at_commit(store: SqliteUsage) -> sqlite3.Connection:
    con = store._connect()
    store._local.con = _DiesAtCommit(con)
    return con


def test_a_recall_whose_commit_fails_is_not_counted_in_the_log_either(tmp_path: Path) -> None:
    store = SqliteUsage(tmp_path / ".talos/usage.db")
    store.record({"global": frozenset({"fact:a"})}, {}, 100)
    size = store.log.stat().st_size
    real = _dies_at_commit(store)
    with pytest.raises(StateError, match="disk I/O error"):
        store.record({"global": frozenset({"fact:a", "fact:b"})}, {"global": {"fact:a"}}, 100)
    store._local.con = real
    assert store.log.stat().st_size == size  # the line was taken back
    assert _as_counts(store.stats("global")) == {"fact:a": (1, 0, 0, 100)}


def test_a_kill_between_the_line_and_the_commit_counts_that_recall_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the line, before COMMIT (nothing took the line back): the log holds the
    recall, usage.db does not. The next recall (another process) finds usage.db behind its log,
    rebuilds it from the log, and its line says what vanished since the killed recall: the
    killed recall counts once, the key it added is present from then until it vanished."""
    db = tmp_path / ".talos/usage.db"
    store = SqliteUsage(db)
    store.record({"global": frozenset({"fact:a"})}, {}, 100)
    real = _dies_at_commit(store)
    monkeypatch.setattr(store_module, "_take_back", lambda fd, size: None)  # killed: no cleanup
    with pytest.raises(StateError):
        store.record({"global": frozenset({"fact:a", "fact:b"})}, {"global": {"fact:a"}}, 100)
    monkeypatch.undo()
    real.close()
    after = SqliteUsage(db)
    after.record({"global": frozenset({"fact:a"})}, {"global": {"fact:a"}}, 101)
    want = {"fact:a": (3, 2, 101, 100), "fact:b": (1, 0, 0, 100)}
    assert _as_counts(after.stats("global")) == want
    assert _counts(_replay(after.log), "global") == want
    assert json.loads(after.log.read_text("utf-8").splitlines()[-1])["s"] == {
        "global": {"-": ["fact:b"]}
    }
    con = sqlite3.connect(db)
    assert _old_stats(con, "global") == want  # usage.db caught up with the log
    con.close()


def test_a_torn_line_of_this_device_is_not_glued_to_the_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Killed mid-append, this device's log ends mid-line: the next recall's line starts on
    a fresh line (glued to the fragment it would be lost with it), and usage.db, behind the
    log, is rebuilt from the lines that are whole."""
    store = SqliteUsage(tmp_path / ".talos/usage.db")
    store.record({"global": frozenset({"fact:a"})}, {"global": {"fact:a"}}, 100)
    with store.log.open("a") as f:
        f.write('{"d": 100, "s": {"glob')
    store.close()
    after = SqliteUsage(tmp_path / ".talos/usage.db")
    after.record({"global": frozenset({"fact:a"})}, {"global": {"fact:a"}}, 101)
    assert _as_counts(after.stats("global")) == {"fact:a": (2, 2, 101, 100)}
    lines = after.log.read_text("utf-8").splitlines()
    assert (len(lines), lines[1], json.loads(lines[2])["d"]) == (3, '{"d": 100, "s": {"glob', 101)
    assert capsys.readouterr().err == ""  # the fragment was the last line when usage.db was rebuilt


@pytest.mark.parametrize("what", ["fifo", "link", "full disk"])
def test_a_log_that_cannot_be_appended_to_counts_nothing_of_the_recall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    """This device's log is a FIFO, a symbolic link, or on a full disk: the recall's count
    fails as a failure of usage.db does (StateError naming the log), usage.db is rolled back,
    and nothing is written through a link or into a FIFO (no hang)."""
    store = SqliteUsage(tmp_path / ".talos/usage.db")
    store.record({"global": frozenset({"fact:a"})}, {}, 100)
    log = store.log
    kept = log.read_bytes()
    if what == "fifo":
        log.unlink()
        os.mkfifo(log)
    elif what == "link":
        log.rename(tmp_path / "elsewhere.jsonl")
        log.symlink_to(tmp_path / "elsewhere.jsonl")
    else:
        real_write = os.write

        def full(fd: int, data: bytes) -> int:
            if fd > 2 and b'"d": 101' in bytes(data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_write(fd, data)

        monkeypatch.setattr(os, "write", full)
    with pytest.raises(StateError, match=str(log).replace(".", r"\.")):
        store.record({"global": frozenset({"fact:a"})}, {"global": {"fact:a"}}, 101)
    monkeypatch.undo()
    con = sqlite3.connect(tmp_path / ".talos/usage.db")
    assert _old_stats(con, "global") == {"fact:a": (1, 0, 0, 100)}
    con.close()
    if what == "link":
        assert (tmp_path / "elsewhere.jsonl").read_bytes() == kept
    elif what == "full disk":
        assert log.read_bytes() == kept


# -- reading other devices' logs -------------------------------------------------------------------


def _device_log(state: Path, device: str, text: str | bytes) -> Path:
    folder = state / "devices" / device
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "usage.jsonl"
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def test_a_torn_last_line_waits_and_a_garbled_line_is_skipped_with_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another device's log with a garbled line (named once, file:line) and a torn last line
    (a kill mid-append; not named, not counted): the rest is counted. When the torn line is
    finished, a long-lived reader reads only what was appended, the line with it."""
    state = tmp_path / ".talos"
    lines = [
        '{"d": 100, "s": {"global": {"+": ["fact:x"]}}}\n',
        "{this is not json\n",
        '{"d": "a day", "s": {}}\n',  # JSON, but not a usage line
        '{"d": 100, "s": {"global": {}}, "h": {"global": ["fact:x"]}}\n',
        '{"d": 101, "s": {"glo',
    ]
    path = _device_log(state, "desk", "".join(lines))
    store = SqliteUsage(state / "usage.db", home=tmp_path)
    assert _as_counts(store.stats("global")) == {"fact:x": (2, 1, 100, 100)}
    assert capsys.readouterr().err == (
        f"talos: warning: {path}:2: unreadable usage line skipped\n"
        f"talos: warning: {path}:3: unreadable usage line skipped\n"
    )
    assert _as_counts(store.stats("global")) == {"fact:x": (2, 1, 100, 100)}
    assert capsys.readouterr().err == ""  # once
    parsed: list[bytes] = []
    real = usage_log.json_value
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(usage_log, "json_value", lambda b: parsed.append(b) or real(b))
        with path.open("a") as f:
            f.write('bal": {}}, "h": {"global": ["fact:x"]}}\n')
        assert _as_counts(store.stats("global")) == {"fact:x": (3, 2, 101, 100)}
    assert len(parsed) == 1  # the finished line only
    assert capsys.readouterr().err == ""


@contextlib.contextmanager
def _no_hang(*fifos: Path) -> Iterator[None]:
    """Fail instead of hanging when the block opens one of ``fifos`` for reading: after 10 s,
    a writer opens it so the read returns."""
    stop = threading.Event()

    def rescue() -> None:
        if not stop.wait(10):
            for f in fifos:
                with contextlib.suppress(OSError):
                    os.close(os.open(f, os.O_WRONLY | os.O_NONBLOCK))
            raise AssertionError("a FIFO was opened")

    t = threading.Thread(target=rescue, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


def test_a_fifo_or_a_link_as_a_devices_log_is_refused_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_home: Callable[..., Path]
) -> None:
    """A FIFO as a device's usage.jsonl hung a reader that opened it; a link could lead out of
    the home. Both are left out with a warning naming them; the other devices are counted, and
    doctor names them too."""
    home = make_home(memory=MEMORY)
    state = home / ".talos"
    _device_log(state, "desk", '{"d": 100, "s": {"global": {"+": ["fact:x"]}}}\n')
    (state / "devices/fifo").mkdir()
    os.mkfifo(state / "devices/fifo/usage.jsonl")
    (state / "devices/link").mkdir()
    secret = tmp_path / "outside.jsonl"
    secret.write_text('{"d": 100, "s": {"global": {"+": ["fact:secret"]}}}\n')
    (state / "devices/link/usage.jsonl").symlink_to(secret)
    store = SqliteUsage(state / "usage.db", home=home)
    with _no_hang(state / "devices/fifo/usage.jsonl"):
        assert _as_counts(store.stats("global")) == {"fact:x": (1, 0, 0, 100)}
    err = capsys.readouterr().err
    fifo, link = state / "devices/fifo/usage.jsonl", state / "devices/link/usage.jsonl"
    assert f"{fifo} is a FIFO (named pipe), not a regular file: not read" in err
    assert f"{link} is a symbolic link, not a regular file: not read" in err
    with _no_hang(fifo):
        r = CliRunner().invoke(app, ["doctor", "--json", "--home", str(home)])
    findings = [f for f in json.loads(r.stdout)["data"]["findings"] if f["check"] == "usage"]
    assert findings == [
        {
            "check": "usage",
            "status": "warn",
            "summary": "a device's usage log cannot be read whole: what cannot be read is not "
            "counted",
            "details": [
                ".talos/devices/fifo/usage.jsonl is a FIFO (named pipe), not a regular file: "
                "not read",
                ".talos/devices/link/usage.jsonl is a symbolic link, not a regular file: not read",
            ],
            "hint": "put back that device's usage.jsonl (only that device writes it)",
        }
    ]


def test_this_devices_counts_come_from_usage_db_while_it_is_up_to_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived Memory must not replay years of its own log per ``talos dead``: while
    usage.db is as far as the log, this device's counts are read from it (no line parsed)."""
    store = SqliteUsage(tmp_path / ".talos/usage.db")
    for day in range(100, 110):
        store.record({"global": frozenset({"fact:a", "fact:b"})}, {"global": {"fact:a"}}, day)
    parsed: list[bytes] = []
    monkeypatch.setattr(usage_log, "json_value", lambda b: parsed.append(b) or {})
    assert _as_counts(store.stats("global")) == {
        "fact:a": (10, 10, 109, 100),
        "fact:b": (10, 0, 0, 100),
    }
    assert parsed == []


def test_a_new_process_starts_from_the_replay_usage_db_keeps_of_another_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another device's log replayed is kept in usage.db: a new process (the memo empty)
    parses only the lines after it, also when a sync replaced the file by a longer copy; a
    file that does not begin with what was kept (rewritten) is replayed anew."""
    monkeypatch.setenv("TALOS_DEVICE", "laptop")
    monkeypatch.setattr(usage_log, "SNAPSHOT_BYTES", 0)
    state = tmp_path / ".talos"
    lines = [
        '{"d": 100, "s": {"global": {"+": ["fact:x", "fact:y"]}}}\n',
        "garbled\n",
        '{"d": 101, "s": {"global": {}}, "h": {"global": ["fact:x"]}}\n',
    ]
    path = _device_log(state, "desk", "".join(lines))
    store = SqliteUsage(state / "usage.db", home=tmp_path)
    store.record({"global": frozenset({"fact:x"})}, {}, 102)
    want = {"fact:x": (3, 1, 101, 100), "fact:y": (2, 0, 0, 100)}
    assert _as_counts(store.stats("global")) == want
    store.close()
    parsed: list[bytes] = []
    real = usage_log.json_value
    monkeypatch.setattr(usage_log, "json_value", lambda b: parsed.append(b) or real(b))

    def new_process() -> dict:
        usage_log._MEMO.clear()
        parsed.clear()
        fresh = SqliteUsage(state / "usage.db", home=tmp_path)
        try:
            return _as_counts(fresh.stats("global"))
        finally:
            fresh.close()

    assert new_process() == want
    assert len(parsed) == 1  # the snapshot, no line
    assert usage_log.problems(path) == [f"{path}:2: unreadable line"]  # kept with it
    copy = path.with_name("copy")
    copy.write_bytes(path.read_bytes() + b'{"d": 103, "s": {"global": {"-": ["fact:y"]}}}\n')
    os.replace(copy, path)  # a sync tool's way: a new file
    want = {"fact:x": (4, 1, 101, 100), "fact:y": (2, 0, 0, 100)}
    assert new_process() == want
    assert len(parsed) == 2  # the snapshot and the line appended
    path.write_bytes(path.read_bytes().replace(b'"d": 101', b'"d": 109'))  # rewritten
    # day 109 then a recall on day 103: a clock that ran ahead, lowered
    assert new_process() == {"fact:x": (4, 1, 103, 100), "fact:y": (2, 0, 0, 100)}
    assert len(parsed) == 5  # the snapshot, then every line (one garbled)


# -- a read-only home ----------------------------------------------------------------------------


def test_a_read_only_home_of_the_old_layout_shows_every_devices_counts(
    tmp_path: Path, read_only: Callable[[Path], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only home whose usage.db is of the old layout (it cannot be carried over: no
    base line can be written) and another device's log: the counts are both, summed."""
    monkeypatch.setenv("TALOS_DEVICE", "laptop")
    home = tmp_path / "home"
    con = _old_db(home / ".talos/usage.db")
    _old_record(con, {"global": frozenset({"fact:x"})}, {"global": {"fact:x"}}, 100)
    con.close()
    _device_log(home / ".talos", "desk", '{"d": 101, "s": {"global": {"+": ["fact:x"]}}}\n')
    ro = read_only(home)
    store = SqliteUsage(ro / ".talos/usage.db", home=ro)
    assert _as_counts(store.stats("global")) == {"fact:x": (2, 1, 100, 100)}
    store.close()
    assert not (ro / ".talos/devices/laptop").exists()
