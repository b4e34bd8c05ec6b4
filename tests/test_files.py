"""Issue 12.3 and 13.5: talos reads and writes only regular files, and only inside their folder.

* A FIFO as memory.md, as talos.toml or as the trace hung every command; a device as
  memory.md, trace or ``report --html`` was replaced by a regular file (as root that destroyed
  ``/dev/null``); ``/dev/zero`` as a source raised ``MemoryError``. Readers now warn and go on,
  writers refuse, and every message names the path (:mod:`talos.fsutil`).
* ``ln -s /etc/passwd skills/passwd.md`` delivered /etc/passwd as a skill body. A skill or a
  session that resolves outside its folder, or that is not a regular file, is refused on every
  route, with one warning and a ``talos scan`` entry.

No test here writes outside ``tmp_path``: devices are only *read* (``/dev/null``), or are a
node made in ``tmp_path`` (skipped when the system does not allow it). A test that hung before
the fix runs under :func:`fifo_guard`, which unblocks a FIFO after a while, so it fails instead
of hanging the suite.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import envelope, invoke, sentence, session_line
from typer.testing import CliRunner

from talos import Memory, fsutil
from talos.cli import app
from talos.sources.sessions import first_user_request
from talos.sources.skills import read_skill

SKILL = (
    "---\nname: rust-upgrade\ndescription: upgrade rust crates with cargo\n---\nRun cargo update.\n"
)
FIFO_KIND = "is a FIFO (named pipe), not a regular file"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


@pytest.fixture(params=[True, False], ids=["indexed", "direct"])
def index(request: pytest.FixtureRequest) -> bool:
    """Through the persistent index or straight from the files: both routes must refuse."""
    return request.param


@contextlib.contextmanager
def fifo_guard(*fifos: Path, after: float = 10.0) -> Iterator[list[bool]]:
    """Run a block that must not block on ``fifos``. If it still runs after ``after`` seconds
    (the bug: an ``open`` waiting for the other end), open the other ends until it returns, so
    the test fails on ``rescued`` instead of hanging. Yields ``rescued`` (a list, true when
    non-empty)."""
    stop = threading.Event()
    rescued: list[bool] = []

    def watch() -> None:
        if stop.wait(after):
            return
        rescued.append(True)
        while not stop.is_set():
            for f in fifos:
                for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
                    with contextlib.suppress(OSError):
                        os.close(os.open(f, flags))
            stop.wait(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield rescued
    finally:
        stop.set()
        thread.join()


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def null_device(where: Path) -> Path:
    """A character device node *in tmp_path* with the numbers of /dev/null: replacing it harms
    nothing but this node. Skips when the system does not allow ``mknod``."""
    try:
        os.mknod(where, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, AttributeError, OSError) as e:
        pytest.skip(f"cannot make a device node here ({e})")
    return where


def warnings(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("talos: warning: ")]


# == 12.3 reading: a FIFO, a device, a kernel file, a huge file ================================


def test_fifo_as_memory_md_warns_and_recall_goes_on(make_home, capfd, index) -> None:
    """The failing input: ``mkfifo memory.md``; every command hung in ``open``."""
    home = make_home(skills={"rust.md": SKILL})
    os.mkfifo(home / "memory.md")
    with fifo_guard(home / "memory.md") as rescued:
        text = Memory(home, index=index).recall("upgrade rust crates").text
    assert not rescued, "recall blocked on the FIFO"
    assert "[skill body · from file" in text and "Run cargo update." in text
    assert warnings(capfd.readouterr().err) == [
        f"talos: warning: {home / 'memory.md'}: cannot read ({FIFO_KIND}); no facts loaded"
    ]
    assert stat.S_ISFIFO(os.lstat(home / "memory.md").st_mode)


def test_device_as_memory_md_is_not_read(make_home, capfd, index) -> None:
    """Variant: memory.md a link to a character device (read only: /dev/null). Before, it was
    read as an empty file (or, for /dev/zero, until ``MemoryError``)."""
    home = make_home(skills={"rust.md": SKILL})
    (home / "memory.md").symlink_to("/dev/null")
    text = Memory(home, index=index).recall("upgrade rust crates").text
    assert "Run cargo update." in text
    assert warnings(capfd.readouterr().err) == [
        f"talos: warning: {home / 'memory.md'}: cannot read (is a link to a character device "
        "(/dev/null), not a regular file); no facts loaded"
    ]


def test_kernel_file_as_memory_md_is_not_read(make_home, capfd, index) -> None:
    """Variant: a file of /proc looks regular to ``stat``; ``/proc/self/environ`` would put the
    process's secrets in the prompt."""
    if not Path("/proc/self/status").exists():
        pytest.skip("no /proc")
    home = make_home()
    (home / "memory.md").symlink_to("/proc/self/status")
    assert Memory(home, index=index).explain("Threads VmRSS SigBlk") == []
    assert warnings(capfd.readouterr().err) == [
        f"talos: warning: {home / 'memory.md'}: cannot read (is a link to a file of a kernel "
        f"file system (/proc, /sys, /dev) ({os.path.realpath('/proc/self/status')}), not a "
        "regular file); no facts loaded"
    ]


def test_memory_md_larger_than_the_bound_is_not_read(make_home, capfd, monkeypatch, index) -> None:
    """Reads are bounded: the bound is what stands between ``/dev/zero``-like input and
    ``MemoryError``."""
    home = make_home(memory="- the kettle is in the left cupboard\n" * 40)
    monkeypatch.setattr(fsutil, "MAX_MEMORY_BYTES", 1000)
    assert Memory(home, index=index).explain("kettle") == []
    assert warnings(capfd.readouterr().err) == [
        f"talos: warning: {home / 'memory.md'}: cannot read (larger than 1000 bytes, not read); "
        "no facts loaded"
    ]


def test_fifo_as_talos_toml_fails_every_command_with_a_message(make_home) -> None:
    """The failing input: ``mkfifo talos.toml`` hung every command."""
    home = make_home(memory="- the kettle is in the left cupboard\n")
    os.mkfifo(home / "talos.toml")
    message = f"{home / 'talos.toml'}: {FIFO_KIND}"
    with fifo_guard(home / "talos.toml") as rescued:
        results = {
            cmd: run(cmd, *extra, "--home", str(home), "--json")
            for cmd, *extra in (
                ("recall", "kettle"),
                ("index",),
                ("scan",),
                ("dead",),
                ("report",),
                ("remember", "the kettle is blue"),
            )
        }
        doctor = run("doctor", "--home", str(home), "--json")
    assert not rescued, "a command blocked on the FIFO"
    for cmd, res in results.items():
        assert res.exit_code == 1, (cmd, res.output)
        envelope = json.loads(res.stdout)
        assert envelope["ok"] is False and envelope["command"] == cmd
        assert envelope["error"].startswith(message), (cmd, envelope["error"])
    config = [f for f in json.loads(doctor.stdout)["data"]["findings"] if f["check"] == "config"]
    assert config[0]["status"] == "error"
    assert config[0]["summary"].startswith(f"talos.toml: {FIFO_KIND}")


def test_fifo_session_and_skill_are_refused_with_a_warning_and_a_scan_entry(
    make_home, capfd, index
) -> None:
    """A session or a skill that is not a regular file (a FIFO named like one) was skipped
    without a word; it is refused with a warning and listed by ``talos scan``."""
    home = make_home(
        skills={"rust.md": SKILL}, sessions={"2026-01-01.jsonl": session_line("descale kettle")}
    )
    os.mkfifo(home / ".talos" / "sessions" / "2026-01-02.jsonl")
    os.mkfifo(home / "skills" / "pipe.md")
    with fifo_guard(home / ".talos/sessions/2026-01-02.jsonl", home / "skills/pipe.md") as r:
        mem = Memory(home, index=index)
        assert [row.text for row in mem.explain("descale kettle")] == ["descale kettle"]
        mem.explain("descale kettle")
        scan = run("scan", "--home", str(home), "--json")
    assert not r
    assert sorted(warnings(capfd.readouterr().err)) == [
        f"talos: warning: {home / '.talos/sessions/2026-01-02.jsonl'}: not read: not a regular "
        "file (a FIFO (named pipe)); see talos scan",
        f"talos: warning: {home / 'skills/pipe.md'}: not loaded, flagged by the safety scan "
        "(not a regular file); see talos scan",
    ]
    data = json.loads(scan.stdout)["data"]
    assert scan.exit_code == 4
    assert data["skills"] == [
        {
            "path": str(home / "skills/pipe.md"),
            "kind": "skill",
            "reasons": ["not a regular file: a FIFO (named pipe)"],
        }
    ]
    assert data["refused"] == [
        {
            "path": str(home / ".talos/sessions/2026-01-02.jsonl"),
            "kind": "session",
            "reasons": ["not a regular file: a FIFO (named pipe)"],
        }
    ]


def test_session_scan_is_bounded(make_home, monkeypatch) -> None:
    """A session is read line by line up to a bound: a transcript without a request in its
    first SESSION_SCAN_BYTES (a giant line of ``/dev/zero``-like junk) yields no episode."""
    from talos.sources import sessions

    junk = json.dumps({"role": "assistant", "content": "x" * 3000}) + "\n"
    home = make_home(sessions={"a.jsonl": junk + session_line("descale the kettle")})
    monkeypatch.setattr(sessions, "SESSION_SCAN_BYTES", 2000)
    assert sessions.first_user_request(home / ".talos/sessions/a.jsonl") == ""
    monkeypatch.setattr(sessions, "SESSION_SCAN_BYTES", 4000)
    assert sessions.first_user_request(home / ".talos/sessions/a.jsonl") == "descale the kettle"


# == 12.3 writing: never over something that is not a regular file ===========================


def test_fifo_as_trace_file_warns_and_recall_goes_on(make_home, capfd) -> None:
    """The failing input: ``trace_file`` a FIFO; recall hung opening it for writing."""
    home = make_home(memory="- the kettle is in the left cupboard\n")
    (home / ".talos").mkdir(exist_ok=True)
    fifo = home / ".talos" / "trace.jsonl"  # the trace's place is the state folder
    os.mkfifo(fifo)
    (home / "talos.toml").write_text('trace_file = ".talos/trace.jsonl"\n')
    with fifo_guard(fifo) as rescued:
        text = Memory(home).recall("kettle").text
    assert not rescued, "recall blocked on the FIFO"
    assert "- [fact] the kettle is in the left cupboard" in text
    assert warnings(capfd.readouterr().err) == [
        f"talos: warning: {fifo}: cannot write the recall trace ({FIFO_KIND}); recall goes on"
    ]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_device_as_trace_file_is_never_opened(make_home, capfd, tmp_path) -> None:
    """Variant: the trace a device node (made in tmp_path): warned, not written, still a
    device."""
    dev = null_device(tmp_path / "null")
    home = make_home(memory="- the kettle is in the left cupboard\n")
    Memory(home, trace_file=dev).recall("kettle")
    assert warnings(capfd.readouterr().err) == [
        f"talos: warning: {dev}: cannot write the recall trace (is a character device, not a "
        "regular file); recall goes on"
    ]
    assert stat.S_ISCHR(os.lstat(dev).st_mode)


def test_remember_into_a_fifo_memory_md_is_refused(make_home) -> None:
    home = make_home()
    os.mkfifo(home / "memory.md")
    with fifo_guard(home / "memory.md") as rescued:
        res = run("remember", "the kettle is blue", "--home", str(home))
    assert not rescued
    assert res.exit_code == 1
    assert f"{home / 'memory.md'}: {FIFO_KIND}" in " ".join(res.stderr.split())
    assert stat.S_ISFIFO(os.lstat(home / "memory.md").st_mode)


def test_remember_through_a_link_to_a_device_is_refused(make_home, tmp_path) -> None:
    """The failing input, made safe: memory.md a link to a device; ``remember`` resolved the
    link and replaced the device node with a regular file."""
    dev = null_device(tmp_path / "null")
    home = make_home()
    (home / "memory.md").symlink_to(dev)
    res = run("remember", "the kettle is blue", "--home", str(home))
    assert res.exit_code == 1
    message = f"{home / 'memory.md'}: is a link to a character device ({dev}), not a regular"
    assert message in " ".join(res.stderr.split())
    assert stat.S_ISCHR(os.lstat(dev).st_mode)
    assert (home / "memory.md").is_symlink()


def test_atomic_write_refuses_what_is_not_a_regular_file(tmp_path) -> None:
    """The one writer every replace goes through: a FIFO, a folder or a symbolic link at the
    path is left as it is; a regular file or nothing is written."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    (tmp_path / "target").write_text("mine\n")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    for name, kind in (("fifo", "a FIFO (named pipe)"), ("folder", "a folder")):
        with pytest.raises(fsutil.NotRegularFile, match=re.escape(f"is {kind}, not a regular")):
            fsutil.atomic_write_text(tmp_path / name, "x")
    with pytest.raises(fsutil.NotRegularFile, match="is a symbolic link"):
        fsutil.atomic_write_text(tmp_path / "link", "x")
    assert (tmp_path / "target").read_text() == "mine\n"
    fsutil.atomic_write_text(tmp_path / "target", "new\n")
    fsutil.atomic_write_text(tmp_path / "fresh", "new\n")
    assert (tmp_path / "target").read_text() == (tmp_path / "fresh").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "fifo",
        "folder",
        "fresh",
        "link",
        "target",
    ]


@pytest.fixture
def report_home(make_home) -> Path:
    home = make_home(memory="- the kettle is in the left cupboard\n")
    Memory(home).recall("kettle")
    return home


def test_report_html_onto_a_fifo_or_a_link_is_refused(report_home, tmp_path) -> None:
    """``report --html`` onto a device replaced it; onto a FIFO, a link: left as they are."""
    fifo, target, link = tmp_path / "r.fifo", tmp_path / "t.html", tmp_path / "l.html"
    os.mkfifo(fifo)
    target.write_text("mine")
    link.symlink_to(target)
    for where, kind in ((fifo, FIFO_KIND), (link, "is a symbolic link, not a regular file")):
        res = run("report", "--home", str(report_home), "--html", str(where), "--plain")
        assert res.exit_code == 1
        assert f"{where}: {kind}" in " ".join(res.stderr.split())
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink()
    assert target.read_text() == "mine"


def test_report_html_into_a_missing_folder_is_refused(report_home, tmp_path) -> None:
    """The failing input: ``report --html /no/such/dir/x.html`` created the folders silently.
    Decision: refuse, naming the folder; nothing is created."""
    where = tmp_path / "no" / "such" / "x.html"
    res = run("report", "--home", str(report_home), "--html", str(where), "--json")
    assert res.exit_code == 1
    envelope = json.loads(res.stdout)
    assert envelope["ok"] is False
    assert envelope["error"] == (
        f"{where}: the folder {where.parent} does not exist; create it first "
        "(talos does not create folders for this file)"
    )
    assert not (tmp_path / "no").exists()
    ok = run("report", "--home", str(report_home), "--html", str(tmp_path / "r.html"), "--json")
    assert ok.exit_code == 0 and (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")


# == 13.5 containment: a skill or a session that resolves outside its folder ==================


PASSWD_SKILL = "passwd.md"


@pytest.fixture
def escaping_home(make_home, tmp_path) -> Path:
    """skills/passwd.md → a copy of /etc/passwd-like text outside the home (a real file
    outside, so the test does not depend on the system's /etc/passwd)."""
    outside = tmp_path / "etc-passwd"
    outside.write_text(
        "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
    )
    home = make_home(skills={"rust.md": SKILL})
    (home / "skills" / PASSWD_SKILL).symlink_to(outside)
    return home


def test_skill_linked_outside_its_folder_is_refused_on_every_route(
    escaping_home, capfd, index
) -> None:
    """The failing input: ``ln -s /etc/passwd skills/passwd.md`` delivered it as a skill body."""
    home = escaping_home
    mem = Memory(home, index=index)
    query = "root bash daemon nologin"
    assert mem.recall(query).text == ""
    assert mem.explain(query) == []
    assert [r.text for r in mem.explain("upgrade rust crates")] == [
        "rust-upgrade — upgrade rust crates with cargo"
    ]
    assert all(s.path != str(home / "skills" / PASSWD_SKILL) for s in mem.dead(min_seen=0))
    assert warnings(capfd.readouterr().err) == [
        f"talos: warning: {home / 'skills' / PASSWD_SKILL}: not loaded, flagged by the safety "
        "scan (outside its folder); see talos scan"
    ]
    scan = run("scan", "--home", str(home), "--json")
    assert scan.exit_code == 4
    assert json.loads(scan.stdout)["data"]["skills"] == [
        {
            "path": str(home / "skills" / PASSWD_SKILL),
            "kind": "skill",
            "reasons": [f"outside its folder: symbolic link to {home.parent / 'etc-passwd'}"],
        }
    ]
    doctor = json.loads(run("doctor", "--home", str(home), "--json").stdout)["data"]
    safety = next(f for f in doctor["findings"] if f["check"] == "safety")
    assert safety["status"] == "warn"
    assert safety["details"] == [
        f"skills/{PASSWD_SKILL}: outside its folder: symbolic link to {home.parent / 'etc-passwd'}"
    ]


def test_skill_linked_outside_is_refused_over_mcp_and_compat(escaping_home) -> None:
    import asyncio

    from talos import compat
    from talos.mcp.server import build_server

    home = escaping_home

    async def call() -> str:
        result = await build_server(Memory(home)).call_tool("recall", {"query": "root bash"})
        content = result.content if hasattr(result, "content") else result[0]
        return "".join(getattr(c, "text", "") for c in content)

    assert "root:x:0:0" not in asyncio.run(call())
    old = (compat.MEMORY_FILE, compat.SKILLS_DIR, compat.SESS_DIR, compat.HITS_FILE)
    old_trace = compat.TRACE_FILE
    try:
        compat.MEMORY_FILE = str(home / "memory.md")
        compat.SKILLS_DIR = str(home / "skills")
        compat.SESS_DIR = str(home / "sessions")
        compat.HITS_FILE = str(home / ".talos" / "recall_hits.json")
        compat.TRACE_FILE = str(home / ".talos" / "recall_trace.jsonl")
        assert compat.recall("root bash daemon nologin") == ""
    finally:
        compat.MEMORY_FILE, compat.SKILLS_DIR, compat.SESS_DIR, compat.HITS_FILE = old
        compat.TRACE_FILE = old_trace


def test_skill_linked_into_proc_is_refused(make_home, capfd) -> None:
    """Variant from the issue: ``/proc/self/status`` as a skill."""
    if not Path("/proc/self/status").exists():
        pytest.skip("no /proc")
    home = make_home(skills={"rust.md": SKILL})
    (home / "skills" / "status.md").symlink_to("/proc/self/status")
    assert Memory(home).explain("Threads VmRSS SigBlk") == []
    assert "status.md: not loaded, flagged by the safety scan (outside its folder)" in (
        capfd.readouterr().err
    )


def test_links_that_stay_inside_their_folder_still_load(make_home, tmp_path, index) -> None:
    """A link inside the folder is fine, and a folder the person configured may itself be a
    link anywhere (a dotfiles repo): only entries that escape are refused."""
    dotfiles = tmp_path / "dotfiles" / "skills"
    (dotfiles / "archive").mkdir(parents=True)
    (dotfiles / "archive" / "rust.md").write_text(SKILL)
    (dotfiles / "rust.md").symlink_to("archive/rust.md")
    home = make_home(sessions={"2026-01-01.jsonl": session_line("descale the kettle")})
    (home / "skills").symlink_to(dotfiles)
    sessions = home / ".talos" / "sessions"
    (sessions / "old").mkdir()
    os.rename(sessions / "2026-01-01.jsonl", sessions / "old" / "2026-01-01.jsonl")
    (sessions / "2026-01-01.jsonl").symlink_to("old/2026-01-01.jsonl")
    texts = [r.text for r in Memory(home, index=index).explain("upgrade rust crates kettle")]
    assert texts == ["rust-upgrade — upgrade rust crates with cargo", "descale the kettle"]
    assert run("scan", "--home", str(home), "--json").exit_code == 0


def test_session_linked_outside_its_folder_is_refused(make_home, tmp_path, capfd, index) -> None:
    """Variant: a session file that is a link to a transcript outside the sessions folder."""
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text(session_line("deploy the secret payroll service"))
    home = make_home(sessions={"2026-01-01.jsonl": session_line("descale the kettle")})
    link = home / ".talos" / "sessions" / "2026-01-02.jsonl"
    link.symlink_to(elsewhere)
    mem = Memory(home, index=index)
    assert mem.explain("deploy payroll service") == []
    assert [r.text for r in mem.explain("descale kettle")] == ["descale the kettle"]
    assert warnings(capfd.readouterr().err) == [
        f"talos: warning: {link}: not read: outside its folder (symbolic link to {elsewhere}); "
        "see talos scan"
    ]
    scan = json.loads(run("scan", "--home", str(home), "--json").stdout)["data"]
    assert scan["refused"] == [
        {
            "path": str(link),
            "kind": "session",
            "reasons": [f"outside its folder: symbolic link to {elsewhere}"],
        }
    ]


def test_recursive_sessions_refuse_links_that_escape(make_home, tmp_path, capfd) -> None:
    """Variant: ``sessions_dir = "DIR/**"`` reads subfolders; a link there that escapes DIR is
    refused too, a link that stays inside is read."""
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text(session_line("deploy the secret payroll service"))
    root = tmp_path / "projects"
    (root / "p1").mkdir(parents=True)
    (root / "p1" / "a.jsonl").write_text(session_line("descale the kettle"))
    (root / "p1" / "b.jsonl").symlink_to(elsewhere)
    (root / "p1" / "c.jsonl").symlink_to("a.jsonl")
    home = make_home()
    mem = Memory(home, sessions_dir=f"{root}/**")
    episodes = [n for n in mem.nodes() if n.kind == "episode"]
    assert [(n.path, n.text) for n in episodes] == [
        (str(root / "p1/a.jsonl"), "descale the kettle"),
        (str(root / "p1/c.jsonl"), "descale the kettle"),
    ]
    assert warnings(capfd.readouterr().err) == [
        f"talos: warning: {root / 'p1/b.jsonl'}: not read: outside its folder (symbolic link "
        f"to {elsewhere}); see talos scan"
    ]


def test_fifo_as_usage_db_is_refused_and_recall_goes_on(make_home, capfd) -> None:
    """Variant for talos's own state: SQLite opened a FIFO as usage.db and failed deep inside
    (``OperationalError: disk I/O error`` from ``doctor``); it is refused by name, and recall
    goes on without usage counts."""
    home = make_home(memory="- the kettle is in the left cupboard\n")
    (home / ".talos").mkdir()
    os.mkfifo(home / ".talos" / "usage.db")
    with fifo_guard(home / ".talos" / "usage.db") as rescued:
        text = Memory(home).recall("kettle").text
        res = run("report", "--home", str(home), "--json")
    assert not rescued
    assert "- [fact] the kettle is in the left cupboard" in text
    message = f"{home / '.talos/usage.db'}: {FIFO_KIND}"
    assert warnings(capfd.readouterr().err) == [
        f"talos: warning: cannot update usage counts ({message}; talos reads and writes only "
        "regular files (replace it with one, or point talos at another path)); recall goes on"
    ]
    assert res.exit_code == 1 and json.loads(res.stdout)["error"].startswith(message)


def test_fifo_as_the_compat_hits_file_never_hangs(make_home, monkeypatch) -> None:
    """Variant: ``talos.compat`` reads ``recall_hits.json`` on every recall; a FIFO there hung."""
    from talos import compat

    home = make_home(memory="- the kettle is in the left cupboard\n")
    (home / ".talos").mkdir()
    hits = home / ".talos" / "recall_hits.json"
    os.mkfifo(hits)
    for name, value in (
        ("MEMORY_FILE", home / "memory.md"),
        ("SKILLS_DIR", home / "skills"),
        ("SESS_DIR", home / "sessions"),
        ("HITS_FILE", hits),
        ("TRACE_FILE", home / ".talos" / "recall_trace.jsonl"),
    ):
        monkeypatch.setattr(compat, name, str(value))
    monkeypatch.setattr(compat, "_CACHED", None)
    with fifo_guard(hits) as rescued:
        text = compat.recall("kettle")
    assert not rescued, "compat.recall blocked on the FIFO"
    assert "the kettle is in the left cupboard" in text
    assert stat.S_ISFIFO(os.lstat(hits).st_mode)


def test_doctor_names_a_fifo_memory_md_and_says_what_to_do(make_home) -> None:
    """``doctor`` on the failing input: before, it hung; then it said "some lines could not be
    read" and "save the file as UTF-8 text", which does not help with a FIFO."""
    home = make_home()
    os.mkfifo(home / "memory.md")
    with fifo_guard(home / "memory.md") as rescued:
        res = run("doctor", "--home", str(home), "--json")
    assert not rescued
    assert res.exit_code == 5
    findings = {f["check"]: f for f in json.loads(res.stdout)["data"]["findings"]}
    assert findings["memory"] == {
        "check": "memory",
        "status": "warn",
        "summary": f"memory.md {FIFO_KIND}: no facts loaded",
        "details": [],
        "hint": "replace it with a regular file, or set memory_file in talos.toml",
    }
    assert findings["safety"]["details"] == ["memory.md: not a regular file: a FIFO (named pipe)"]


# -- hard links and links swapped in after the listing -----------------------------------------


OUTER_SKILL = "---\nname: outer\ndescription: kestrel deploy notes\n---\nOUTSIDE BODY kestrel\n"


def test_a_hard_linked_skill_is_refused_on_every_route(make_home, tmp_path: Path) -> None:
    """The reported input: ``ln /tmp/outside/o.md skills/hard.md`` delivered the outside
    file as a skill body (a hard link has no target to check: the same file has two names).
    Now a skill with more than one name is refused, with a warning and a scan entry."""
    outside = tmp_path / "outside.md"
    outside.write_text(OUTER_SKILL, encoding="utf-8")
    home = make_home(memory="- kestrel deploy uses the blue pipeline\n", skills={})
    os.link(outside, home / "skills" / "hard.md")
    res = run("recall", "kestrel deploy notes", "--home", str(home), "--json")
    assert "OUTSIDE BODY" not in res.stdout
    assert "skills/hard.md: not loaded, flagged by the safety scan (hard link)" in res.stderr
    scan = json.loads(run("scan", "--home", str(home), "--json").stdout)["data"]
    assert [(s["path"].rsplit("/", 1)[-1], s["reasons"]) for s in scan["skills"]] == [
        ("hard.md", ["hard link: 2 names; the others may lie outside the folder"])
    ]


def test_a_hard_linked_session_is_refused_and_listed(make_home, tmp_path: Path) -> None:
    """Variant: a session hard-linked to a transcript elsewhere was read as an episode."""
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(json.dumps({"role": "user", "content": "kestrel secret plans"}) + "\n")
    home = make_home(memory="- kestrel deploy uses the blue pipeline\n", sessions={})
    os.link(outside, home / ".talos" / "sessions" / "a.jsonl")
    res = run("recall", "kestrel secret plans", "--home", str(home), "--json")
    assert "secret plans" not in res.stdout
    assert "a.jsonl: not read: hard link (2 names" in res.stderr
    scan = json.loads(run("scan", "--home", str(home), "--json").stdout)["data"]
    assert [(r["kind"], r["reasons"]) for r in scan["refused"]] == [
        ("session", ["hard link: 2 names; the others may lie outside the folder"])
    ]


def test_a_skill_swapped_for_a_link_after_the_listing_is_not_followed(make_home) -> None:
    """TOCTOU: the skill was listed (and scanned) as a regular file, then replaced by a link
    to /etc/passwd before it was read; the reader followed the link. Now the file is opened
    without following a link and checked on the descriptor."""
    home = make_home(skills={"notes.md": OUTER_SKILL.replace("OUTSIDE BODY", "inside body")})
    skill = home / "skills" / "notes.md"
    skill.unlink()
    skill.symlink_to("/etc/passwd")
    assert read_skill(skill) is None
    assert first_user_request(skill) == ""


def test_a_session_swapped_for_a_link_after_the_listing_is_not_followed(make_home) -> None:
    """Variant: the session reader trusted the listing and followed whatever was there."""
    secret = make_home(name="other", sessions={"s.jsonl": session_line("kestrel elsewhere")})
    home = make_home(sessions={"a.jsonl": session_line("kestrel here")})
    path = home / ".talos" / "sessions" / "a.jsonl"
    assert first_user_request(path) == "kestrel here"
    path.unlink()
    path.symlink_to(secret / ".talos" / "sessions" / "s.jsonl")
    assert first_user_request(path) == ""
    assert [n.text for n in Memory(home).nodes()] == []


# -- lock files that are not regular files -----------------------------------------------------


def test_a_lock_file_that_is_not_a_regular_file_is_refused_by_name(kettle_home: Path) -> None:
    """The failing input: ``.talos/locks/memory.lock`` a FIFO (or a device node): ``remember``
    opened it and went on, writing through whatever was there; a socket said only "No such
    device or address: check the file and try again". Every write names the lock file and
    what it is, exit 1, the envelope; memory.md is unchanged."""
    locks = kettle_home / ".talos" / "locks"
    locks.mkdir(parents=True)
    os.mkfifo(locks / "memory.lock")
    before = (kettle_home / "memory.md").read_bytes()
    want = (
        f"{locks / 'memory.lock'}: is a FIFO (named pipe), not a regular file; talos reads and "
        "writes only regular files (replace it with one, or point talos at another path)"
    )
    r = invoke("remember", "the kettle is blue", "--home", str(kettle_home), "--json")
    assert envelope(r, "remember") == want
    assert (
        sentence(invoke("revoke", "--ref", "msg-1", "--home", str(kettle_home)), "revoke") == want
    )
    assert (kettle_home / "memory.md").read_bytes() == before


def test_a_lock_file_linked_elsewhere_is_refused_and_its_target_untouched(
    kettle_home: Path, tmp_path: Path
) -> None:
    """Variant: the lock a symbolic link to a file of the person's. filelock before 3.20.1
    (CVE-2025-68146; pyproject allowed 3.12) truncated the target; newer ones say only "Too
    many levels of symbolic links". Refused by name before the lock is taken; the target is
    as it was."""
    victim = tmp_path / "notes.txt"
    victim.write_text("my notes\n")
    locks = kettle_home / ".talos" / "locks"
    locks.mkdir(parents=True)
    (locks / "memory.lock").symlink_to(victim)
    got = envelope(
        invoke("remember", "the kettle is blue", "--home", str(kettle_home), "--json"), "remember"
    )
    assert got.startswith(f"{locks / 'memory.lock'}: is a symbolic link, not a regular file")
    assert victim.read_text() == "my notes\n"


def test_a_fifo_as_the_compat_hits_lock_never_fails_a_recall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Variant: the lock of talos.compat's ``recall_hits.json`` a FIFO: the usage write is
    refused with a warning naming it, and the recall goes on (design §6.1)."""
    from talos import compat

    (tmp_path / "memory.md").write_text("- the kettle is in the left cupboard\n")
    hits = tmp_path / "recall_hits.json"
    os.mkfifo(tmp_path / "recall_hits.json.lock")
    for name, value in (
        ("MEMORY_FILE", tmp_path / "memory.md"),
        ("SKILLS_DIR", tmp_path / "skills"),
        ("SESS_DIR", tmp_path / "sessions"),
        ("HITS_FILE", hits),
        ("TRACE_FILE", tmp_path / "trace.jsonl"),
    ):
        monkeypatch.setattr(compat, name, value)
    assert "kettle" in compat.recall("kettle")
    assert f"{hits}.lock: is a FIFO (named pipe), not a regular file" in capfd.readouterr().err
    assert not hits.exists()
