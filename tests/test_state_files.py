"""Issue 12 item 4, state files: a sentence where a person got a traceback.

The reported inputs: a corrupt ``.talos/usage.db`` (``doctor``, ``dead``, ``report``); a
read-only home with existing state (``doctor``, ``dead``, ``report``, ``index``, ``index
--check``, ``forget --yes``), where ``--json`` printed no envelope at all; a full disk
(``forget --yes``, ``index --rebuild``). Every command now ends with a message that names the
file and what to do, exit 1 (doctor: a finding, exit 5), and the envelope under ``--json``;
what can be read is still served; nothing is half-written.

A real read-only home is a read-only bind mount and a real full disk a small tmpfs (root can
mount them here; the tests skip cleanly where it cannot). The same failures are also made by
monkeypatching, so every command is covered without mounts.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import click.testing
import pytest
import typer

from talos import Memory
from talos.cli import app

runner = click.testing.CliRunner()
COMMAND = typer.main.get_command(app)

#: Nine recalls of "pelican": the zebra note is then seen 9 times and never hit (dead). It is
#: of another day than the pelican line: lines of one day are contiguity neighbours, which the
#: relevance floor may deliver beside each other (talos.relevance.deliver).
MEMORY = (
    "- the staging db is called pelican <!-- reflect 2026-01-01 -->\n"
    "- an old note about the zebra crossing <!-- reflect 2026-01-02 -->\n"
    "- i wrote this line by hand about the harbour\n"
)


def cli(home: Path, *args: str) -> click.testing.Result:
    """``talos ARGS --home HOME`` in-process; stdout and stderr are kept apart."""
    return runner.invoke(COMMAND, [*args, "--home", str(home)])


def failed(result: click.testing.Result, command: str) -> str:
    """The error of a failed ``--json`` run: exit 1, one envelope, nothing else on stdout."""
    assert result.exit_code == 1, result.output
    env = json.loads(result.stdout)
    assert (env["ok"], env["command"], env["data"]) == (False, command, None)
    assert "Traceback" not in result.output
    return str(env["error"])


def said(result: click.testing.Result, command: str) -> str:
    """The message of a failed run without ``--json``: exit 1, one line on stderr."""
    assert result.exit_code == 1, result.output
    assert result.stderr.endswith("\n") and "Traceback" not in result.output
    last = result.stderr.splitlines()[-1]
    assert last.startswith(f"talos {command}: "), result.stderr
    return last.removeprefix(f"talos {command}: ")


@pytest.fixture
def home(make_home) -> Path:  # type: ignore[no-untyped-def]
    home = make_home(memory=MEMORY)
    mem = Memory(home)
    for _ in range(9):
        mem.recall("pelican")
    mem.close()
    return home


# -- a corrupt usage.db -----------------------------------------------------------------------

DAMAGED = (
    "move it aside (talos then starts new counts; recall is not affected) or put back a backup"
)


def _corrupt(home: Path) -> Path:
    db = home / ".talos" / "usage.db"
    for extra in ("-wal", "-shm"):
        Path(str(db) + extra).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database, it is a note\n" * 200)
    return db


def test_a_corrupt_usage_db_is_named_by_doctor_dead_and_report(home: Path) -> None:
    """The reported input: random bytes in ``.talos/usage.db``. ``dead`` and ``report`` end
    with the sentence and exit 1 (an envelope under --json); doctor reports it as a finding
    (exit 5); recall still serves the memory and warns once. (Checked: without the
    ``_fail`` wrapping in ``SqliteUsage`` the sentence is "a database in the state folder
    cannot be used", which names no file.)"""
    db = _corrupt(home)
    want = f"{db}: the usage counts cannot be read (file is not a database); {DAMAGED}"
    for command in ("dead", "report"):
        assert failed(cli(home, command, "--json"), command) == want
        assert said(cli(home, command, "--plain"), command) == want
    r = cli(home, "doctor", "--json")
    assert r.exit_code == 5, r.output
    usage = [f for f in json.loads(r.stdout)["data"]["findings"] if f["check"] in ("usage", "dead")]
    assert usage == [
        {
            "check": "usage",
            "status": "warn",
            "summary": ".talos/usage.db cannot be read: recall goes on without counting; no "
            "forgetting suggestions",
            "details": ["file is not a database"],
            "hint": "move .talos/usage.db aside (talos then starts new counts) or put back a "
            "backup",
        },
        {
            "check": "dead",
            "status": "info",
            "summary": "no forgetting suggestions: the usage counts cannot be read",
            "details": [],
            "hint": "",
        },
    ]
    r = cli(home, "recall", "pelican")
    assert (r.exit_code, r.stdout.splitlines()[1:]) == (
        0,
        ["- [fact] (2026-01-01) the staging db is called pelican"],
    )
    assert r.stderr == f"talos: warning: cannot update usage counts ({want}); recall goes on\n"
    assert db.read_bytes() == b"this is not a database, it is a note\n" * 200  # left alone


@pytest.mark.parametrize(
    ("make", "cause"),
    [
        (
            lambda con: con.execute("PRAGMA user_version=7"),
            "written by a newer talos (usage schema 7, this one reads 2); upgrade talos, or ",
        ),
        (
            lambda con: con.executescript("CREATE TABLE notes(x); PRAGMA user_version=1;"),
            "not a talos usage database (no table counters, fingerprints, usage); ",
        ),
    ],
    ids=["newer", "foreign"],
)
def test_a_newer_or_foreign_usage_db_says_what_it_is(
    make_home, make: Callable[[sqlite3.Connection], object], cause: str
) -> None:
    """Variant: a valid SQLite file that is not ours to read — written by a newer talos, or
    another program's database — is left alone and named, on every command that reads it and
    over MCP."""
    home = make_home(memory=MEMORY)
    db = home / ".talos" / "usage.db"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    make(con)
    con.commit()
    con.close()
    before = db.read_bytes()
    want = f"{db}: {cause}{DAMAGED}"
    for command in ("dead", "report", "forget"):
        extra = ["--yes"] if command == "forget" else []
        assert failed(cli(home, command, *extra, "--json"), command) == want
    assert cli(home, "doctor", "--json").exit_code == 5
    assert db.read_bytes() == before

    import asyncio

    from mcp.server.mcpserver.exceptions import ToolError

    from talos.mcp_server import build_server

    with pytest.raises(ToolError) as caught:  # the client gets it as an is_error result
        asyncio.run(build_server(Memory(home)).call_tool("dead", {}))
    assert str(caught.value) == f"Error executing tool dead: {want}"


# -- a read-only home ---------------------------------------------------------------------------


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Callable[[Path], Path]]:
    """``read_only(home)``: the same home seen through a read-only bind mount."""
    mounted: list[Path] = []

    def make(src: Path) -> Path:
        dst = tmp_path / f"ro-{src.name}"
        dst.mkdir()
        if not _mount("--bind", str(src), str(dst)):
            pytest.skip("cannot bind-mount here (needs root and mount permission)")
        mounted.append(dst)
        if not _mount("-o", "remount,bind,ro", str(dst)):
            pytest.skip("cannot remount read-only here")
        try:
            (dst / "probe").touch()
        except OSError as e:
            assert e.errno == errno.EROFS
        else:
            pytest.skip("the read-only mount is writable")
        return dst

    yield make
    for d in reversed(mounted):
        subprocess.run(["umount", "-l", str(d)], capture_output=True)  # -l: open handles


def test_a_read_only_home_reads_and_refuses_writes_with_a_sentence(
    home: Path, read_only: Callable[[Path], Path]
) -> None:
    """The reported input: a home with existing state on a read-only file system. Before,
    each of these commands ended in ``OperationalError: unable to open database file`` (and
    under --json printed nothing). Now what only reads works — doctor (exit 5: the state
    folder is not writable), dead and report (the counts are read read-only) — and what must
    write ends with a sentence naming the file, the envelope, exit 1; memory.md is untouched.
    (Checked: without ``SqliteUsage._reader``'s read-only fallback dead and report fail.)"""
    ro = read_only(home)
    before = (home / "memory.md").read_bytes()
    state = ro / ".talos"

    r = cli(ro, "doctor", "--json")
    assert r.exit_code == 5, r.output
    findings = {f["check"]: f for f in json.loads(r.stdout)["data"]["findings"]}
    assert (findings["state"]["status"], findings["state"]["summary"]) == (
        "warn",
        ".talos/ is not writable: no trace, usage or index",
    )
    assert "usage" not in findings  # read read-only: nothing to say

    r = cli(ro, "dead", "--json")
    assert r.exit_code == 0, r.output
    assert [(s["text"], s["reason"]) for s in json.loads(r.stdout)["data"]] == [
        ("an old note about the zebra crossing", "seen 9 times, never recalled")
    ]
    r = cli(ro, "report", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["data"]["recalls"] == 9

    not_writable = (
        f"{state} is not writable (a read-only disk or folder): make it writable and try again"
    )
    index_error = (
        f"{state / 'index.db'}: cannot use the index (unable to open database file); {not_writable}"
    )
    assert failed(cli(ro, "index", "--json"), "index") == index_error
    assert said(cli(ro, "index"), "index") == index_error
    r = cli(ro, "index", "--check", "--json")  # --check only reads: it checks a read-only home
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["data"]["problems"] == []
    locks = (
        f"{state / 'locks'}: the file system is read-only: remount it writable, or use a home "
        "on a writable disk, and try again"
    )
    assert failed(cli(ro, "forget", "--yes", "--json"), "forget") == locks
    assert said(cli(ro, "forget", "--yes"), "forget") == locks
    r = cli(ro, "recall", "pelican")  # memory that can be read is served
    assert r.stdout.splitlines()[1:] == ["- [fact] (2026-01-01) the staging db is called pelican"]
    assert (home / "memory.md").read_bytes() == before


def test_read_only_state_by_monkeypatch(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Variant without a mount: every write under the home fails with EROFS (os.open for
    writing), and SQLite opens nothing read-write ("unable to open database file", as on a
    read-only disk). dead and report still read the counts (read-only); forget and index
    name the file they could not write; memory.md unchanged."""
    state = home / ".talos"
    real_open, real_connect = os.open, sqlite3.connect
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def ro_open(path, flags, *a, **kw):  # type: ignore[no-untyped-def]
        if flags & writing and str(path).startswith(str(home)):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *a, **kw)

    def ro_connect(path, *a, **kw):  # type: ignore[no-untyped-def]
        if not kw.get("uri"):  # talos's read-write connections; its read-only ones use a URI
            raise sqlite3.OperationalError("unable to open database file")
        return real_connect(path, *a, **kw)

    monkeypatch.setattr(os, "open", ro_open)
    monkeypatch.setattr(sqlite3, "connect", ro_connect)
    before = (home / "memory.md").read_bytes()
    r = cli(home, "dead", "--json")
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.stdout)["data"]) == 1
    assert cli(home, "report", "--json").exit_code == 0
    assert failed(cli(home, "forget", "--yes", "--json"), "forget") == (
        f"{state / 'locks' / 'memory.lock'}: the file system is read-only: remount it "
        "writable, or use a home on a writable disk, and try again"
    )
    err = failed(cli(home, "index", "--rebuild", "--json"), "index")
    assert err.startswith(f"{state / 'index.db'}: cannot use the index (")
    assert (home / "memory.md").read_bytes() == before


# -- a full disk --------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs, unmounted afterwards."""
    where = tmp_path / "disk"
    where.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)):
        pytest.skip("cannot mount a tmpfs here (needs root and mount permission)")
    yield where
    subprocess.run(["umount", "-l", str(where)], capture_output=True)  # -l: open handles


def _fill(disk: Path) -> None:
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 512):
            pass
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)


def test_a_full_disk_ends_forget_and_rebuild_with_a_sentence(small_disk: Path) -> None:
    """The reported input on a real full disk (a 1 MiB tmpfs filled up): ``forget --yes`` and
    ``index --rebuild`` ended in a traceback. Now: the sentence naming the file, exit 1, the
    envelope; memory.md and the audit log are exactly as before (no torn entry); recall still
    serves the memory; once space is freed, forget works."""
    home = small_disk / "home"
    home.mkdir()
    (home / "memory.md").write_text(MEMORY, encoding="utf-8")
    mem = Memory(home)
    for _ in range(9):
        mem.recall("pelican")
    mem.close()
    log = home / ".talos" / "audit.jsonl"
    _fill(small_disk)
    before = (home / "memory.md").read_bytes()

    full = "no space left on the disk: free some space and try again"
    assert failed(cli(home, "forget", "--yes", "--json"), "forget") == f"{log}: {full}"
    assert said(cli(home, "forget", "--yes"), "forget") == f"{log}: {full}"
    assert log.read_bytes() == b""  # the entry that did not fit was taken back
    err = failed(cli(home, "index", "--rebuild", "--json"), "index")
    assert err.startswith(f"{home / '.talos' / 'index.db'}: cannot use the index (")
    assert err.endswith(full)
    r = cli(home, "recall", "pelican")
    assert r.stdout.splitlines()[1:] == ["- [fact] (2026-01-01) the staging db is called pelican"]
    assert (home / "memory.md").read_bytes() == before

    (small_disk / "filler").unlink()
    r = cli(home, "forget", "--yes", "--json")
    assert (r.exit_code, json.loads(r.stdout)["data"]["removed"]) == (0, 1), r.output
    assert b"zebra" not in (home / "memory.md").read_bytes()


@pytest.mark.parametrize("call", ["write", "fsync"])
def test_a_full_disk_by_monkeypatch_leaves_memory_and_the_log_as_they_were(
    home: Path, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    """Variant without a mount: ``os.write`` (after half the entry) or ``os.fsync`` of the
    audit log fails with ENOSPC. forget says so naming the log, exit 1, envelope; memory.md
    and the log are byte-identical to before; remember and restore say the same."""
    log = home / ".talos" / "audit.jsonl"
    log.write_text('{"t": 1, "txn": "a", "op": "commit"}\n', encoding="utf-8")
    real_write, real_fsync = os.write, os.fsync
    nospace = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def half_write(fd: int, data: bytes) -> int:
        if os.fstat(fd).st_ino == log.stat().st_ino:
            real_write(fd, bytes(data[: len(data) // 2]))
            raise nospace
        return real_write(fd, data)

    def no_fsync(fd: int) -> None:
        if os.fstat(fd).st_ino == log.stat().st_ino:
            raise nospace
        real_fsync(fd)

    if call == "write":
        monkeypatch.setattr(os, "write", half_write)
    else:
        monkeypatch.setattr(os, "fsync", no_fsync)
    before, logged = (home / "memory.md").read_bytes(), log.read_bytes()
    full = f"{log}: no space left on the disk: free some space and try again"
    assert failed(cli(home, "forget", "--yes", "--json"), "forget") == full
    assert said(cli(home, "remember", "the cache lives in /var/cache"), "remember") == full
    assert failed(cli(home, "restore", "Lnothing00", "--json"), "restore").startswith(
        "no removed line with id"
    )
    assert ((home / "memory.md").read_bytes(), log.read_bytes()) == (before, logged)


def test_a_full_disk_while_rebuilding_the_index_by_monkeypatch(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Variant without a mount: SQLite reports SQLITE_FULL during ``index --rebuild``; the
    sentence names index.db; the index is a cache, so recall still serves the files."""
    from talos.index import Index

    def full(self: Index, *a: object, **kw: object) -> None:
        e = sqlite3.OperationalError("database or disk is full")
        e.sqlite_errorname = "SQLITE_FULL"  # type: ignore[attr-defined]
        raise e

    monkeypatch.setattr(Index, "refresh", full)
    want = (
        f"{home / '.talos' / 'index.db'}: cannot use the index (database or disk is full); no "
        "space left on the disk: free some space and try again"
    )
    assert failed(cli(home, "index", "--rebuild", "--json"), "index") == want
    assert said(cli(home, "index", "--rebuild"), "index") == want
    monkeypatch.undo()
    assert cli(home, "recall", "pelican").exit_code == 0


def test_an_unexpected_error_is_a_sentence_and_an_envelope(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The class: whatever escapes a command (here a bug planted in report) is one sentence
    that says it is a bug, exit 1, and the envelope under --json — never a traceback, which
    ``TALOS_DEBUG=1`` still shows for whoever debugs."""
    import talos.cli.report

    def broken(*a: object, **kw: object) -> None:
        raise KeyError("picked")

    monkeypatch.setattr(talos.cli.report, "build_report", broken)
    want = (
        "unexpected error KeyError: 'picked' — a bug in talos; please report it with the "
        "command you ran"
    )
    assert failed(cli(home, "report", "--json"), "report") == want
    assert said(cli(home, "report", "--plain"), "report") == want
    monkeypatch.setenv("TALOS_DEBUG", "1")
    r = cli(home, "report", "--plain")
    assert isinstance(r.exception, KeyError)
