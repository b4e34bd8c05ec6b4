"""Issue 12 item 4, state files: a sentence where a person got a traceback.

The reported inputs: a corrupt ``.talos/usage.db`` (``doctor``, ``dead``, ``report``); a
read-only home with existing state (``doctor``, ``dead``, ``report``, ``index``, ``index
--check``, ``forget --yes``), where ``--json`` printed no envelope at all; a full disk
(``forget --yes``, ``index --rebuild``). Every command now ends with a message that names the
file and what to do, exit 1 (doctor: a finding, exit 5), and the envelope under ``--json``;
what can be read is still served; nothing is half-written.

Lines talos did not write (nested too deeply, NaN scores, a year 9999, counts too large for
a number, a line torn by a full disk or a kill) cost only themselves; another program's
``usage.db`` is named and left as it was, and one held open delays a recall only briefly.

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
from helpers import audit_log, audit_name, envelope, invoke

from talos import Memory
from talos.cli import app

runner = click.testing.CliRunner()
COMMAND = typer.main.get_command(app)

#: Nine recalls of "pelican": the zebra note is then seen 9 times and never hit (dead). It is
#: of another day than the pelican line: lines of one day are contiguity neighbours, which the
#: relevance floor may deliver beside each other (talos.selection.relevance.deliver).
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
            "written by a newer talos (usage schema 7, this one reads 3); upgrade talos, or ",
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

    from talos.mcp.server import build_server

    with pytest.raises(ToolError) as caught:  # the client gets it as an is_error result
        asyncio.run(build_server(Memory(home)).call_tool("dead", {}))
    assert str(caught.value) == f"Error executing tool dead: {want}"


# -- a read-only home ---------------------------------------------------------------------------


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


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
    log = audit_log(home)
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
    log = audit_log(home)
    log.parent.mkdir(parents=True, exist_ok=True)
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


# -- lines talos did not write; another program's usage.db -------------------------------------


#: One JSON line nested 100,000 deep: ``json.loads`` raises ``RecursionError``, which is not the
#: ``ValueError`` every reader skipped an unreadable line for.
DEEP = b"[" * 100_000 + b"]" * 100_000 + b"\n"


def _strict(text: str) -> object:
    """Parse ``text`` as strict JSON (``NaN`` and ``Infinity`` are not JSON: jq refuses them)."""

    def refuse(name: str) -> object:
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_an_audit_line_nested_too_deeply_is_skipped_not_fatal(kettle_home: Path) -> None:
    """The failing input: one such line in ``.talos/audit.jsonl``. ``remember``, ``forget``,
    ``revoke``, ``history`` and doctor ended in "input nested too deeply to read; check the file
    you gave" (no file named): one bad line stopped every write. It is an unreadable entry,
    skipped with a warning that names its line, like a torn one."""
    mem = Memory(kettle_home)
    mem.remember("the kettle is in the right cupboard now", key="kettle.place")
    log = audit_log(kettle_home)
    with log.open("ab") as f:
        f.write(DEEP)
    bad = len(log.read_bytes().splitlines())
    r = invoke(
        "remember",
        "the teapot is on the shelf",
        "--key",
        "teapot.place",
        "--home",
        str(kettle_home),
    )
    assert r.exit_code == 0, (r.output, r.exception)
    assert "the teapot is on the shelf" in (kettle_home / "memory.md").read_text()
    r = invoke("history", "teapot.place", "--home", str(kettle_home), "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    assert [e["op"] for e in json.loads(r.stdout)["data"]] == ["remember"]
    r = invoke("doctor", "--home", str(kettle_home), "--json")
    found = [f for f in json.loads(r.stdout)["data"]["findings"] if f["check"] == "audit"]
    assert found[0]["details"] == [
        f"{audit_name(kettle_home)}:{bad}: unreadable audit entry skipped"
    ]
    # variant: the deep line is the last one, where the next write settles open transactions
    with log.open("ab") as f:
        f.write(DEEP)
    assert (
        Memory(kettle_home).remember("the mugs are by the sink", key="mugs.place").status
        == "active"
    )


def test_trace_lines_that_no_recall_wrote_are_counted_unreadable(kettle_home: Path) -> None:
    """The failing inputs, one trace line each: nested too deeply ("input nested too deeply"
    from report); ``"t": 1e400`` (OverflowError: "unexpected error … a bug in talos");
    ``NaN`` and ``Infinity`` scores (``report --json`` printed ``"mean": NaN``: not JSON).
    Variants: a time before 1970 and one in the year 9999 (a span of 2.9 million days: the
    report took 35 s and 3.9 GB). Each is an unreadable line; the report of the rest is
    strict JSON, and ``--html`` is written."""
    Memory(kettle_home).recall("kettle")
    trace = kettle_home / ".talos" / "recall_trace.jsonl"
    good = trace.read_bytes()
    with trace.open("ab") as f:
        f.write(DEEP)
        f.write(b'{"picked": [], "t": 1e400}\n')
        f.write(b'{"picked": [{"key": "fact:x", "score": NaN, "body": false}], "t": 1780000000}\n')
        f.write(b'{"picked": [{"key": "fact:x", "score": 1e999, "body": false}], "t": 1}\n')
        f.write(b'{"picked": [], "t": -86400}\n')
        f.write(b'{"picked": [], "t": 253402300000}\n')
    r = invoke("report", "--home", str(kettle_home), "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    data = _strict(r.stdout)["data"]  # type: ignore[index]
    assert (data["recalls"], data["malformed_lines"]) == (1, 6)
    assert len(data["per_day"]) == 1 and data["scores"]["count"] == 1
    page = kettle_home / "report.html"
    r = invoke("report", "--home", str(kettle_home), "--html", str(page), "--plain")
    assert r.exit_code == 0, (r.output, r.exception)
    assert "NaN" not in page.read_text() and "Infinity" not in page.read_text()
    assert trace.read_bytes().startswith(good)  # report changes nothing


def test_reference_counts_too_large_for_a_number_are_read_as_zero(make_home) -> None:
    """The failing input: a reference ``recall_hits.json`` with ``1e400`` (infinity once
    read): importing it raised OverflowError, so ``dead``, ``forget``, ``report`` and doctor
    ended in "unexpected error … a bug in talos" on every run (the import never completed).
    Variant: ``1e30``, a finite number SQLite cannot store. Each unusable count is 0; the
    others are kept."""
    home = make_home(memory="- the kettle is in the left cupboard <!-- reflect 2026-01-01 -->\n")
    (home / ".talos").mkdir()
    (home / ".talos" / "recall_hits.json").write_text(
        '{"事实:the kettle is in the left cupboard": [1e400, 3, 20000],'
        ' "事实:an old note": [12, 1e30]}',
        encoding="utf-8",
    )
    for command in ("dead", "report"):
        r = invoke(command, "--home", str(home), "--json")
        assert r.exit_code == 0, (command, r.output, r.exception)
    usage = Memory(home).usage()
    assert tuple(usage["fact:the kettle is in the left cupboard"]) == (0, 3, 20000)
    assert tuple(usage["fact:an old note"]) == (12, 0, 0)


def test_reference_counts_too_large_are_zero_for_talos_compat(tmp_path: Path, monkeypatch) -> None:
    """Variant through ``talos.compat``, which keeps the counts in the reference file itself:
    ``dead()`` raised OverflowError, and every ``recall()`` warned and counted nothing."""
    from talos import compat

    (tmp_path / "memory.md").write_text("- the kettle is in the left cupboard\n")
    hits = tmp_path / "recall_hits.json"
    hits.write_text('{"事实:the kettle is in the left cupboard": [1e400, 2]}', encoding="utf-8")
    for name, value in (
        ("MEMORY_FILE", tmp_path / "memory.md"),
        ("SKILLS_DIR", tmp_path / "skills"),
        ("SESS_DIR", tmp_path / "sessions"),
        ("HITS_FILE", hits),
        ("TRACE_FILE", tmp_path / "trace.jsonl"),
    ):
        monkeypatch.setattr(compat, name, value)
    assert compat.dead(min_seen=0) == []
    assert "kettle" in compat.recall("kettle")
    assert json.loads(hits.read_text(encoding="utf-8")) == {
        "事实:the kettle is in the left cupboard": [1, 3, _today()]
    }


def _today() -> int:
    from talos.usage.counts import today

    return today()


def test_a_trace_line_cut_short_by_a_full_disk_costs_only_itself(
    kettle_home: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The failing input, found on a real full disk (a 1 MiB tmpfs): the kernel wrote part of
    the trace line and said so by a short count; ``write_trace`` did not check it, so a torn
    line was left without a word, and the next recall's line was glued onto it (two recalls
    lost). Now the rest is written or the failure warned about, and the next line starts on a
    line of its own: the torn piece is one unreadable line."""
    from talos.report import read_trace

    mem = Memory(kettle_home)
    mem.recall("kettle")
    trace = kettle_home / ".talos" / "recall_trace.jsonl"
    real_write = os.write
    calls: list[int] = []

    def short_then_full(fd: int, data: bytes) -> int:
        if os.fstat(fd).st_ino != trace.stat().st_ino:
            return real_write(fd, data)
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, bytes(data[: len(data) // 2]))

    capfd.readouterr()
    monkeypatch.setattr(os, "write", short_then_full)
    assert "kettle" in mem.recall("kettle").text  # recall goes on
    assert capfd.readouterr().err == (
        f"talos: warning: {trace}: cannot write the recall trace (No space left on device); "
        "recall goes on\n"
    )
    monkeypatch.undo()
    mem.recall("zebra crossing")
    rounds, bad = read_trace(trace)
    assert (len(rounds), bad) == (2, 1)
    assert trace.read_bytes().endswith(b"\n")


def test_a_trace_line_torn_by_a_kill_is_not_glued_onto(kettle_home: Path) -> None:
    """Variant: a trace whose last line a kill left without its end (``{"picked": [``); the
    next recall's line was appended to it, so both were unreadable."""
    from talos.report import read_trace

    trace = kettle_home / ".talos" / "recall_trace.jsonl"
    trace.parent.mkdir()
    trace.write_bytes(b'{"picked": [], "t": 1780000000}\n{"picked": [')
    Memory(kettle_home).recall("kettle")
    rounds, bad = read_trace(trace)
    assert (len(rounds), bad) == (2, 1)


def test_another_programs_database_at_usage_db_is_left_alone(
    kettle_home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The failing input: a SQLite file of another program at ``.talos/usage.db`` (schema
    version 0): talos created its three tables inside it and counted there. It is named as
    not talos's, left byte for byte as it was; recall goes on without counting (design §6.1)."""
    import sqlite3

    state = kettle_home / ".talos"
    state.mkdir()
    db = state / "usage.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE notes(t)")
    con.execute("INSERT INTO notes VALUES ('precious')")
    con.commit()
    con.close()
    before = db.read_bytes()
    want = (
        f"{db}: not a talos usage database (it holds table notes); move it aside (talos then "
        "starts new counts; recall is not affected) or put back a backup"
    )
    assert envelope(invoke("dead", "--home", str(kettle_home), "--json"), "dead") == want
    capfd.readouterr()
    assert "kettle" in Memory(kettle_home).recall("kettle").text
    assert capfd.readouterr().err == (
        f"talos: warning: cannot update usage counts ({want}); recall goes on\n"
    )
    assert db.read_bytes() == before


def test_another_programs_database_is_not_called_a_newer_talos(kettle_home: Path) -> None:
    """Variant: another program's database with its own application id and schema version 7
    was "written by a newer talos (usage schema 7…); upgrade talos"."""
    import sqlite3

    (kettle_home / ".talos").mkdir()
    db = kettle_home / ".talos" / "usage.db"
    con = sqlite3.connect(db)
    con.executescript("PRAGMA application_id=1234; PRAGMA user_version=7; CREATE TABLE n(t);")
    con.close()
    got = envelope(invoke("report", "--home", str(kettle_home), "--json"), "report")
    assert got.startswith(f"{db}: not a talos usage database (application id 0x4d2); move it")


def test_a_usage_db_held_by_another_program_delays_recall_briefly(
    kettle_home: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The failing input: usage.db held by another program (``BEGIN EXCLUSIVE`` in a SQLite
    browser left open): every recall waited 60 s (61.4 s measured) before it warned and went
    on, longer than an agent's hook allows. A recall waits :data:`talos.usage.store.RECORD_WAIT`
    seconds for the counts, then warns and goes on (design §6.1); the counts it could not write
    are the only loss."""
    import sqlite3

    from talos.usage import store as usage

    mem = Memory(kettle_home)
    mem.recall("kettle")
    mem.close()
    monkeypatch.setattr(usage, "RECORD_WAIT", 0.05)  # seconds; the rule, made quick to test
    holder = sqlite3.connect(kettle_home / ".talos" / "usage.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        capfd.readouterr()
        assert "kettle" in Memory(kettle_home).recall("kettle").text
        err = capfd.readouterr().err
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert err == (
        f"talos: warning: cannot update usage counts ({kettle_home / '.talos' / 'usage.db'}: "
        "cannot "
        "use the usage counts (database is locked); another talos process is using it: try "
        "again); recall goes on\n"
    )
    assert usage.RECORD_WAIT < 60 and usage.RECORD_WAIT == 0.05
