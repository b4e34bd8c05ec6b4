"""Every command answers a home in a bad state with a finding a person can act on, never a
failure or a traceback (design §9.1: "message names the file"; doctor's contract: it never
raises for a problem of the home itself).

Each test starts from the input that broke a command (found by driving every command over a
home whose files were made hostile one at a time), then the siblings the fix must also catch.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import click.testing
import pytest
import typer
from typer.testing import CliRunner

from talos.cli import app
from talos.errors import InputError
from talos.hooks import scope as hook_scope

runner = click.testing.CliRunner()
COMMAND = typer.main.get_command(app)

MEMORY = """\
- Staging deploys of alpha go through make deploy ENV=staging
- The alpha service listens on port 8080 in staging
- Coffee tastes best brewed at 92 degrees
"""
ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}


def cli(*args: str) -> click.testing.Result:
    """``talos ARGS`` in-process; stdout and stderr apart."""
    return runner.invoke(COMMAND, list(args))


def no_traceback(r: click.testing.Result) -> None:
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception


def findings(home: Path) -> list[dict[str, object]]:
    """The findings of ``talos doctor --json`` that need attention (exit 5)."""
    r = cli("doctor", "--home", str(home), "--json")
    no_traceback(r)
    assert r.exit_code == 5, (r.output, r.exception)
    env = json.loads(r.stdout)
    return [f for f in env["data"]["findings"] if f["status"] in ("warn", "error")]


def summaries(home: Path) -> list[str]:
    return [f"{f['check']}: {f['summary']}" for f in findings(home)]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home that has been recalled from once (index, trace and usage exist)."""
    h = tmp_path / "home"
    h.mkdir()
    (h / "memory.md").write_text(MEMORY, encoding="utf-8")
    r = cli("recall", "deploy alpha staging", "--home", str(h))
    assert r.exit_code == 0, r.output
    return h


LOOP = "cannot be looked at (Too many levels of symbolic links)"


def loop(path: Path) -> None:
    """Replace ``path`` by a symbolic link to itself."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(path)


# -- the trace ---------------------------------------------------------------------------------


def test_a_fifo_trace_is_named_by_doctor_and_by_report(home: Path) -> None:
    """Found: a FIFO at .talos/recall_trace.jsonl left doctor "healthy" while report exited
    1 on it. Now doctor has a finding and report says which file and what it is."""
    trace = home / ".talos" / "recall_trace.jsonl"
    trace.unlink()
    os.mkfifo(trace)
    assert summaries(home) == [
        "files: .talos/recall_trace.jsonl is a FIFO (named pipe), not a regular file: no recall "
        "is traced, and talos report cannot read it"
    ]
    said = f"{trace}: is a FIFO (named pipe), not a regular file; talos reads and writes only "
    said += "regular files (replace it with one, or point talos at another path)"
    r = cli("report", "--home", str(home))
    no_traceback(r)
    assert r.exit_code == 1
    assert r.stderr.splitlines()[-1] == f"talos report: {said}"
    r = cli("report", "--home", str(home), "--json")
    no_traceback(r)
    assert (r.exit_code, json.loads(r.stdout)["error"]) == (1, said)
    r = cli("recall", "deploy alpha", "--home", str(home))  # recall is never failed by it
    assert r.exit_code == 0 and "Staging deploys of alpha" in r.stdout


@pytest.mark.parametrize("kind", ["folder", "link-loop", "link-to-dev-zero"])
def test_every_bad_trace_is_a_finding_and_a_clear_report_error(home: Path, kind: str) -> None:
    trace = home / ".talos" / "recall_trace.jsonl"
    trace.unlink()
    if kind == "folder":
        trace.mkdir()
        what, said = "is a folder, not a regular file", "is a folder, not a regular file"
    elif kind == "link-loop":
        trace.symlink_to(trace)  # the trace's writer follows no link: judged as a link
        what = f"is a symbolic link (to {trace}), not a regular file"
        said = "Too many levels of symbolic links"
    else:
        trace.symlink_to("/dev/zero")
        what = "is a symbolic link (to /dev/zero), not a regular file"
        said = "is a link to a character device (/dev/zero), not a regular file"
    assert summaries(home) == [
        f"files: .talos/recall_trace.jsonl {what}: no recall is traced, and talos report "
        "cannot read it"
    ]
    r = cli("report", "--home", str(home))
    no_traceback(r)
    assert r.exit_code == 1
    assert r.stderr.splitlines()[-1].startswith(f"talos report: {trace}: {said}")


def test_a_fifo_memory_lock_is_a_finding_before_a_write_fails(home: Path) -> None:
    """Sibling: a FIFO at .talos/locks/memory.lock refused every remember while doctor said
    the home was healthy."""
    locks = home / ".talos" / "locks"
    locks.mkdir(exist_ok=True)
    os.mkfifo(locks / "memory.lock")
    assert summaries(home) == [
        "files: .talos/locks/memory.lock is a FIFO (named pipe), not a regular file: every "
        "write to memory.md is refused"
    ]
    r = cli("remember", "the deploy window is friday", "--home", str(home))
    no_traceback(r)
    assert r.exit_code == 1
    assert "memory.lock: is a FIFO (named pipe), not a regular file" in r.stderr


# -- link loops --------------------------------------------------------------------------------


def test_a_memory_md_link_loop_is_a_doctor_finding(home: Path) -> None:
    """Found: memory.md a symbolic link to itself made ``doctor --json`` fail ("Too many
    levels of symbolic links") instead of answering."""
    loop(home / "memory.md")
    got = summaries(home)
    assert got[0] == (
        "memory: memory.md cannot be read (Too many levels of symbolic links): no facts loaded"
    )


@pytest.mark.parametrize(
    ("path", "summary"),
    [
        ("skills", f"skills: skills/ {LOOP}: no skills"),
        (".talos/sessions", f"sessions: .talos/sessions/ {LOOP}: no episodes"),
        (
            ".talos/usage.db",
            f"usage: .talos/usage.db {LOOP}: recall goes on without counting; "
            "no forgetting suggestions",
        ),
        (".talos/locks", f"files: .talos/locks {LOOP}: every write to memory.md is refused"),
        (".talos", f"state: .talos/ {LOOP}; talos keeps its state there"),
    ],
)
def test_a_link_loop_anywhere_in_the_home_is_a_finding(home: Path, path: str, summary: str) -> None:
    """Siblings: a loop at a folder said "does not exist" (skills, sessions) or nothing at all
    (usage.db, the state folder: "writable")."""
    (home / ".talos" / "locks").mkdir(exist_ok=True)
    loop(home / path)
    assert summary in summaries(home)


# -- index --check -----------------------------------------------------------------------------


def _without_write_permission() -> list[str]:
    """A command prefix under which the folder modes hold: as root, the capabilities that
    skip them are dropped (root writes a read-only folder anyway)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("needs setpriv to drop root's override of folder modes")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]


def _read_only(path: Path) -> None:
    """Folders and talos's files read-only; memory.md keeps its mode (a chmod changes its
    ctime, which the index's signature holds: it would be "changed since indexed")."""
    for p in [path, *path.rglob("*")]:
        if not p.is_symlink() and p.name != "memory.md":
            os.chmod(p, 0o555 if p.is_dir() else 0o444)


def test_index_check_on_a_read_only_home_checks_without_writing(home: Path) -> None:
    """Found: ``talos index --check`` failed on a read-only home ("attempt to write a
    readonly database"): it opened the index for writing, to check it."""
    before = sorted(p.name for p in (home / ".talos").iterdir())
    command = [sys.executable, "-m", "talos", "index", "--check", "--home", str(home)]
    _read_only(home)
    try:
        got = subprocess.run(
            [*_without_write_permission(), *command],
            capture_output=True,
            timeout=120,
            env=ENV,
        )
    finally:
        for p in [home, *home.rglob("*")]:
            if not p.is_symlink():
                os.chmod(p, 0o755 if p.is_dir() else 0o644)
    assert b"Traceback" not in got.stderr
    assert (got.returncode, got.stderr.decode()) == (0, "index matches the files\n")
    assert sorted(p.name for p in (home / ".talos").iterdir()) == before


def test_index_check_changes_nothing_and_a_missing_index_is_no_difference(tmp_path: Path) -> None:
    """Sibling: ``--check`` on a home never recalled created .talos/index.db to compare."""
    h = tmp_path / "home"
    h.mkdir()
    (h / "memory.md").write_text(MEMORY, encoding="utf-8")
    r = cli("index", "--check", "--home", str(h), "--json")
    no_traceback(r)
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)["data"]
    assert data == {
        "check": True,
        "problems": [],
        "behind": [
            f"{h / '.talos' / 'index.db'}: no index yet; the next recall or talos index builds it"
        ],
    }
    assert not (h / ".talos").exists()


def test_index_check_right_after_a_supersede_says_behind_not_differs(home: Path) -> None:
    """Found: right after a ``remember`` that supersedes a value, ``index --check`` said
    "facts differ: 10 indexed, 10 in the file" and exited 1: the index, a cache, had only not
    been refreshed yet. Behind is not different: it says so and exits 0."""
    for text in ("editor is vim", "editor is helix"):
        r = cli("remember", text, "--key", "editor", "--home", str(home))
        assert r.exit_code == 0, r.output
        if text == "editor is vim":
            assert cli("recall", "editor", "--home", str(home)).exit_code == 0
    r = cli("index", "--check", "--home", str(home))
    no_traceback(r)
    assert (r.exit_code, r.stderr) == (
        0,
        f"index is behind: {home / 'memory.md'} changed since it was indexed; the next recall "
        "or talos index brings it up to date\n",
    )
    assert cli("recall", "editor", "--home", str(home)).exit_code == 0
    assert cli("index", "--check", "--home", str(home)).stderr == "index matches the files\n"


def test_a_real_difference_names_its_line(home: Path) -> None:
    """What --check is for still fails: a row that is not the file's line names that line (not
    two equal counts)."""
    con = sqlite3.connect(home / ".talos" / "index.db")
    con.execute("UPDATE facts SET text = 'something else', kw = 'else' WHERE line = 2")
    con.commit()
    con.close()
    r = cli("index", "--check", "--home", str(home))
    no_traceback(r)
    assert (r.exit_code, r.stderr) == (
        1,
        f"facts differ from {home / 'memory.md'}: line 2 is indexed as another fact "
        "(3 indexed, 3 in the file)\n",
    )


# -- one scope rule for every command ------------------------------------------------------------


@pytest.mark.parametrize("value", ["a b", "", " ", "x\ty", "alpha,beta", "a(b)"])
@pytest.mark.parametrize(
    "command",
    [
        ["recall", "deploy"],
        ["explain", "deploy"],
        ["remember", "the deploy window is friday"],
        ["dead"],
        ["report"],
        ["get", "editor"],
        ["doctor"],
        ["conflicts"],
        ["history"],
        ["mcp"],  # the MCP server's scopes are fixed at start: its tools take none
    ],
    ids=lambda c: c[0],
)
def test_a_scope_no_record_can_carry_is_refused_by_every_command(
    home: Path, command: list[str], value: str
) -> None:
    """Found: ``recall --scope "a b"`` and ``--scope ""`` were accepted and recalled nothing,
    while ``remember`` refused the same scope (and took "" for the default). One rule now:
    a scope is letters, digits and . _ - : / (what a provenance tag's ``scope=`` holds)."""
    r = cli(*command, "--home", str(home), "--scope", value)
    no_traceback(r)
    assert r.exit_code == 1, r.output
    said = (
        "is not a scope name: use letters, digits and . _ - : / only (repeat --scope for several)"
    )
    if value == "x\ty":
        said = "contains a tab (U+0009)"  # named as remember named it (tests/test_values.py)
    assert (
        r.stderr.splitlines()[-1]
        == f"talos {command[0]}: --scope {value!r}{' ' if said[0] == 'i' else ': '}{said}"
    )


def test_talos_scope_from_the_environment_is_checked_the_same_way(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TALOS_SCOPE", "global,project:my app")
    r = cli("recall", "deploy", "--home", str(home))
    no_traceback(r)
    assert r.exit_code == 1
    assert r.stderr.splitlines()[-1] == (
        "talos recall: $TALOS_SCOPE 'project:my app' is not a scope name: use letters, digits "
        "and . _ - : / only (separate several with commas)"
    )


def test_a_hook_in_a_project_whose_folder_name_is_no_scope_gets_one_that_is(tmp_path: Path) -> None:
    """Sibling (hooks): a git root named "my app (old)" gave ``project:my-app-(old)``, a scope
    ``remember`` refuses, so nothing could ever be written for it; a [hooks.scopes] value with
    a space recalled nothing, silently."""
    project = tmp_path / "my app (old)"
    (project / ".git").mkdir(parents=True)
    assert hook_scope.scopes_for(str(project), {}, str(tmp_path)) == (
        "global",
        "project:my-app-old-",
    )
    table = {"hooks": {"scopes": {str(project): "client acme"}}}
    with pytest.raises(InputError) as got:
        hook_scope.scopes_for(str(project), table, str(tmp_path))
    assert str(got.value) == (
        f"talos.toml [hooks.scopes] {str(project)!r} = 'client acme' is not a scope name: use "
        "letters, digits and . _ - : / only (one scope per folder)"
    )


# -- attack pass 23: the hook reads $TALOS_SCOPE, look-alike scope names are one name ----------


def _hook_home(tmp_path: Path) -> Path:
    h = tmp_path / "hookhome"
    (h / ".talos").mkdir(parents=True)
    (h / "memory.md").write_text(MEMORY, encoding="utf-8")
    (h / "talos.toml").write_text("[hooks]\nserver = false\n", encoding="utf-8")
    return h


def _hook(home: Path, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    event = {"hook_event_name": "UserPromptSubmit", "prompt": "deploy alpha to staging", "cwd": "/"}
    return subprocess.run(
        [sys.executable, "-m", "talos", "hook", "claude-code", "--home", str(home)],
        input=json.dumps(event).encode(),
        capture_output=True,
        timeout=60,
        env=env,
        cwd=str(home.parent),
    )


def test_a_bad_talos_scope_is_refused_by_the_hook_as_by_every_command(tmp_path: Path) -> None:
    """Found: with ``TALOS_SCOPE="a b"`` recall and mcp refused to start while the hook
    ignored the variable and delivered global context. Now the hook refuses it the same
    way: no context, exit 0, a hook.log line quoting the same message."""
    home = _hook_home(tmp_path)
    ok = _hook(home, {**ENV, "TALOS_SCOPE": "global"})
    assert b"Staging deploys of alpha" in ok.stdout
    got = _hook(home, {**ENV, "TALOS_SCOPE": "a b"})
    assert (got.returncode, got.stdout, got.stderr) == (0, b"", b"")
    log = (home / ".talos" / "hook.log").read_text(encoding="utf-8")
    assert "$TALOS_SCOPE 'a b' is not a scope name" in log


LOOK_ALIKES = ["\uff47lobal", "gl\u043ebal", "GLOBAL", "Gl\u043eBAL"]


@pytest.mark.parametrize("scope", LOOK_ALIKES, ids=["fullwidth", "cyrillic-o", "upper", "mixed"])
def test_a_look_alike_scope_is_the_scope_it_imitates(home: Path, scope: str) -> None:
    """Found: ``--scope ｇlobal`` (full-width g) and ``--scope glоbal`` (Cyrillic о) were
    accepted as scopes of their own: recall said "nothing recalled" over a home of global
    facts and remember wrote where no default request looks. Scope names are folded as keys
    are (talos.view.canon: NFKC, look-alike letters, case) on every route."""
    r = cli("recall", "deploy alpha staging", "--home", str(home), "--scope", scope)
    no_traceback(r)
    assert r.exit_code == 0 and "Staging deploys of alpha" in r.stdout, r.output
    w = cli("remember", "the alpha window is friday", "--home", str(home), "--scope", scope)
    assert w.exit_code == 0, w.output
    assert "scope=" not in (home / "memory.md").read_text(encoding="utf-8").splitlines()[-1]


def test_a_look_alike_scope_is_folded_in_tags_env_and_hook_tables(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Siblings: a memory.md tag ``scope=Client:ＡＣＭＥ``, $TALOS_SCOPE and a
    [hooks.scopes] value name the same scope as ``client:acme``."""
    with (home / "memory.md").open("a", encoding="utf-8") as f:
        f.write("- acme deploys on thursdays <!-- user 2026-01-05 scope=Client:%EF%BC%A1CME -->\n")
    r = cli("recall", "acme deploys", "--home", str(home), "--scope", "client:acme")
    assert "acme deploys on thursdays" in r.stdout, r.output
    monkeypatch.setenv("TALOS_SCOPE", "CLIENT:\uff41cme")
    r = cli("recall", "acme deploys", "--home", str(home))
    assert "acme deploys on thursdays" in r.stdout, r.output
    project = tmp_path / "acme"
    project.mkdir()
    table = {"hooks": {"scopes": {str(project): "Client:\uff21CME"}}}
    assert hook_scope.scopes_for(str(project), table, str(tmp_path)) == ("global", "client:acme")
    (tmp_path / "My App" / ".git").mkdir(parents=True)
    assert hook_scope.scopes_for(str(tmp_path / "My App"), {}, str(tmp_path)) == (
        "global",
        "project:my-app",
    )


def test_the_python_api_folds_and_checks_scopes_as_the_cli_does(home: Path) -> None:
    """Sibling (Python API): ``Memory(scopes=...)`` took any string, and ``remember(scope=)``
    compared it as written."""
    from talos import Memory

    mem = Memory(home, scopes=["\uff27LOBAL", "Client:ACME"])
    assert mem.scopes == ("global", "client:acme")
    got = mem.remember("the acme window is friday", scope="CLIENT:\uff41cme")
    assert "scope=client:acme" in (home / "memory.md").read_text(encoding="utf-8")
    assert got is not None
    with pytest.raises(InputError, match="is not a scope name"):
        Memory(home, scopes=["a b"])


# -- a tag whose date is not a date ------------------------------------------------------------


cli_runner = CliRunner()


def test_doctor_names_a_tag_whose_date_is_not_a_date(make_home) -> None:
    home = make_home(memory="- fine line here\n- broken tag here <!-- user 2026-13-45 key=x -->\n")
    res = cli_runner.invoke(app, ["doctor", "--home", str(home), "--json"])
    assert res.exit_code == 5
    tags = [f for f in json.loads(res.stdout)["data"]["findings"] if f["check"] == "tags"]
    assert tags[0]["status"] == "warn"
    assert any("memory.md:2" in d and "2026-13-45" in d for d in tags[0]["details"])
