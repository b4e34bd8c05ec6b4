"""Stale locks (issue 7): a lock left by a dead process blocks neither recall nor writes.

talos's inter-process locks are ``filelock.FileLock`` — on Unix an ``flock`` on the lock file —
and SQLite's own locks on ``usage.db`` and ``index.db``. Both are held by the *process*, so the
kernel releases them when it dies, however it dies; the lock *file* stays behind and means
nothing. Each test makes a child process take a lock for real (the parent checks it is held),
SIGKILLs it, and then runs the operation that needs the lock under a short alarm, so a lock that
survived its holder fails the test in seconds instead of hanging for the 60 s lock timeout.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import filelock
import pytest

from talos import Memory, compat
from talos.home import resolve_paths
from talos.writer.edits import memory_lock

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or not hasattr(os, "fork"), reason="needs fork and SIGKILL"
)


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging) when the block takes longer than ``seconds``."""

    def boom(_sig: int, _frame: object) -> None:
        raise TimeoutError(f"blocked for more than {seconds}s: a stale lock was honoured")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def spawn(take: Callable[[], object]) -> int:
    """Fork a child that takes a lock with ``take()`` and then sleeps; return its pid once the
    lock is held."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            held = take()  # noqa: F841 (the lock object must stay alive)
            os.write(w, b"ready")
            time.sleep(60)
        finally:
            os._exit(0)
    os.close(w)
    try:
        with deadline(10):
            assert os.read(r, 5) == b"ready"
    finally:
        os.close(r)
    return pid


@pytest.fixture
def home(make_home) -> Path:
    return make_home(
        memory="- deploy region is eu-west-1 <!-- reflect 2026-01-01 -->\n",
        skills={"csv-merge.md": "---\nname: csv-merge\ndescription: merge csv files\n---\n"},
    )


def test_memory_lock_of_a_killed_writer_blocks_nothing(home: Path) -> None:
    paths = resolve_paths(home)

    def take() -> filelock.FileLock:
        lock = memory_lock(paths)
        lock.acquire()
        return lock

    pid = spawn(take)
    with pytest.raises(filelock.Timeout):  # really held while the holder lives
        filelock.FileLock(str(paths.lock_dir / "memory.lock"), timeout=0.2).acquire()
    kill(pid)
    assert (paths.lock_dir / "memory.lock").exists()  # the file stays; the lock died
    with deadline(10):
        mem = Memory(home, model="classic")
        mem.remember("deploy region is us-east-2 since the move", source="reflect")
        assert [r.text for r in mem.recall("deploy region").picked] == [
            "deploy region is eu-west-1",
            "deploy region is us-east-2 since the move",
        ]


def test_usage_lock_of_a_killed_compat_recall_blocks_nothing(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hits = home / ".talos" / "recall_hits.json"
    hits.parent.mkdir(parents=True, exist_ok=True)
    for name, value in {
        "MEMORY_FILE": home / "memory.md",
        "SKILLS_DIR": home / "skills",
        "SESS_DIR": home / ".talos" / "sessions",
        "HITS_FILE": hits,
        "TRACE_FILE": home / ".talos" / "recall_trace.jsonl",
    }.items():
        monkeypatch.setattr(compat, name, str(value))

    def take() -> filelock.FileLock:
        lock = filelock.FileLock(str(hits) + ".lock")
        lock.acquire()
        return lock

    pid = spawn(take)
    with pytest.raises(filelock.Timeout):
        filelock.FileLock(str(hits) + ".lock", timeout=0.2).acquire()
    kill(pid)
    with deadline(10):
        assert compat.recall("merge csv files").endswith("\n---\n\n[技能正文结束]")
    assert "csv-merge" in hits.read_text(encoding="utf-8")


@pytest.mark.parametrize("db", ["usage.db", "index.db"])
def test_sqlite_write_transaction_of_a_killed_process_blocks_nothing(home: Path, db: str) -> None:
    mem = Memory(home, model="classic")
    mem.recall("merge csv files")  # creates usage.db and index.db
    path = home / ".talos" / db
    assert path.exists()

    def take() -> sqlite3.Connection:
        con = sqlite3.connect(path, isolation_level=None)
        con.execute("BEGIN IMMEDIATE")
        con.execute("CREATE TABLE IF NOT EXISTS scratch (x)")
        con.execute("INSERT INTO scratch VALUES (1)")
        return con

    pid = spawn(take)
    probe = sqlite3.connect(path, timeout=0.2, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        probe.execute("BEGIN IMMEDIATE")
    probe.close()
    kill(pid)
    with deadline(10):
        fresh = Memory(home, model="classic")
        assert [r.kind for r in fresh.recall("merge csv files").picked] == ["skill"]
        assert fresh.usage()["skill:csv-merge — merge csv files"].hits == 2
    con = sqlite3.connect(path)
    assert con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'scratch'").fetchone() == (
        0,
    )  # the killed transaction was rolled back
    con.close()


def test_a_leftover_lock_file_with_content_blocks_nothing(home: Path) -> None:
    """A lock file from an old version, another host or a crash, with any content."""
    paths = resolve_paths(home)
    paths.lock_dir.mkdir(parents=True, exist_ok=True)
    (paths.lock_dir / "memory.lock").write_text("4194304\nother-host\n", encoding="utf-8")
    with deadline(10):
        Memory(home).remember("the staging port is 8080", source="reflect")
    assert "the staging port is 8080" in (home / "memory.md").read_text(encoding="utf-8")
