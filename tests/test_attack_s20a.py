"""Attack pass on the writes, doctor --ack, dead's span, hook install --project and why-not
merged on the same day (supersede in place, ack, dead_min_days, project hooks, dense verdicts).

Each strict xfail is a break found: the test asserts the promised behaviour; its reason says
what happens instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import talos.memory
import talos.usage
from talos import Memory, audit
from talos.cli import app
from talos.hooks import install

runner = CliRunner()

VIM = "editor = vim <!-- user 2025-03-01 id=rvim key=editor -->"


def _log(home: Path) -> list[dict]:
    return [json.loads(x) for x in (home / ".talos" / "audit.jsonl").read_text().splitlines()]


def _doctor(home: Path, *extra: str) -> tuple[int, dict]:
    res = runner.invoke(app, ["doctor", "--home", str(home), "--json", *extra])
    return res.exit_code, json.loads(res.stdout)


def _audit(data: dict) -> dict:
    return next(f for f in data["data"]["findings"] if f["check"] == "audit")


# -- writes: a superseding remember puts its line in the old one's place ------------------


def test_a_nested_list_item_keeps_its_indent_when_superseded(make_home) -> None:
    home = make_home(memory=f"# Tools\n- editors\n  - {VIM}\n  - the shell is zsh\n")
    res = Memory(home, index=False).remember("editor = helix", key="editor")
    lines = (home / "memory.md").read_text().splitlines()
    assert lines[2] == "  " + res.line


@pytest.mark.xfail(
    strict=True,
    reason=(
        "the '## ' heading is replaced by a '- ' bullet: the lines under it move into the "
        "previous section"
    ),
)
def test_a_heading_record_superseded_leaves_its_section_a_heading(make_home) -> None:
    home = make_home(memory=f"# Tools\n## {VIM}\n- modal editing everywhere\n# Pets\n- tom\n")
    Memory(home, index=False).remember("editor = helix", key="editor")
    lines = (home / "memory.md").read_text().splitlines()
    assert lines[1].startswith("## ")


def test_restore_over_a_successor_the_person_edited_keeps_the_edit(make_home) -> None:
    home = make_home(memory=f"# Tools\n- {VIM}\n- the shell is zsh\n")
    mem = Memory(home, index=False)
    res = mem.remember("editor = helix", key="editor")
    mf = home / "memory.md"
    mf.write_text(mf.read_text().replace("editor = helix", "editor = helix (my fork)"))
    mem.restore("rvim")
    text = mf.read_text()
    assert f"- {VIM}" in text
    edited = res.line.replace("editor = helix", "editor = helix (my fork)")
    assert any(e.get("before") == edited for e in _log(home))


def test_a_blockquote_record_superseded_stays_in_the_quote(make_home) -> None:
    home = make_home(memory=f"# Tools\n> - {VIM}\n> - the shell is zsh\n")
    res = Memory(home, index=False).remember("editor = helix", key="editor")
    lines = (home / "memory.md").read_text().splitlines()
    assert lines[1] == "> " + res.line


def test_a_bom_file_keeps_its_bom_when_its_first_line_is_superseded(make_home) -> None:
    home = make_home(memory=f"\ufeff- {VIM}\n- the shell is zsh\n")
    Memory(home, index=False).remember("editor = helix", key="editor")
    assert (home / "memory.md").read_bytes().startswith("\ufeff".encode())


def test_a_duplicated_old_line_superseded_is_restorable_as_two(make_home) -> None:
    home = make_home(memory=f"# A\n- {VIM}\n# B\n- {VIM}\n- two\n")
    res = Memory(home, index=False).remember("editor = helix", key="editor")
    text = (home / "memory.md").read_text()
    assert text.count("id=rvim") == 0
    assert res.line in text
    assert audit.verify(home / ".talos" / "audit.jsonl", home / "memory.md") == []


# -- doctor --ack ------------------------------------------------------------------------


def _removed_by_hand(make_home) -> tuple[Path, object]:  # type: ignore[no-untyped-def]
    home = make_home(memory="# notes\n- i wrote this line myself\n")
    mem = Memory(home, index=False)
    printer = mem.remember("the printer is on the second floor")
    mf = home / "memory.md"
    mf.write_text(mf.read_text().replace(f"{printer.line}\n", ""))
    return home, printer


@pytest.mark.xfail(
    strict=True,
    reason=(
        "doctor says 'talos removed it (ack): an editor probably saved an older copy over "
        "talos's write' about the person's own removal"
    ),
)
def test_ack_then_the_person_puts_the_line_back_says_who_removed_it(make_home) -> None:
    home, printer = _removed_by_hand(make_home)
    assert _doctor(home, "--ack")[0] == 0
    mf = home / "memory.md"
    mf.write_text(mf.read_text() + printer.line + "\n")
    code, data = _doctor(home)
    msg = " ".join(_audit(data)["details"])
    assert code == 5  # a new outside edit after the ack: warned again, rightly
    assert "talos removed it" not in msg and "older copy over talos's write" not in msg


def test_ack_twice_writes_once(make_home) -> None:
    home, _printer = _removed_by_hand(make_home)
    _doctor(home, "--ack")
    n = len(_log(home))
    code, _data = _doctor(home, "--ack")
    assert (code, len(_log(home))) == (0, n)


@pytest.mark.xfail(
    strict=True,
    reason=(
        "the ack entry takes the line's new scope (project:b): doctor --scope project:a still"
        " reports the edit after every --ack"
    ),
)
def test_ack_with_scope_then_doctor_with_that_scope_is_quiet_after_a_scope_edit(make_home) -> None:
    home = make_home(memory="# notes\n- i wrote this line myself\n")
    res = runner.invoke(
        app,
        ["remember", "--home", str(home), "--scope", "project:a", "the build uses make targets"],
    )
    assert res.exit_code == 0, res.output
    mf = home / "memory.md"
    mf.write_text(mf.read_text().replace("scope=project:a", "scope=project:b"))
    _code, data = _doctor(home, "--scope", "project:a", "--ack")
    assert [a["kind"] for a in data["data"]["acknowledged"]] == ["changed"]
    _code, data = _doctor(home, "--scope", "project:a")
    assert (_audit(data)["status"], _audit(data)["details"]) == ("ok", [])


@pytest.mark.xfail(
    strict=True,
    reason=(
        "recovery reads only the log's tail: a transaction whose commit line is garbled mid-"
        "log is reported pending forever, though the hint says the next write settles it"
    ),
)
def test_a_garbled_commit_line_does_not_leave_doctor_warning_forever(make_home) -> None:
    home = make_home(memory="# notes\n- i wrote this line myself\n")
    mem = Memory(home, index=False)
    mem.remember("the printer is on the second floor")
    mem.remember("the office plant needs water on fridays")
    log = home / ".talos" / "audit.jsonl"
    lines = log.read_text().splitlines()
    i = next(i for i, x in enumerate(lines) if '"commit"' in x)
    lines[i] = lines[i][:-3] + "\x00zz"
    log.write_text("\n".join(lines) + "\n")
    hint = _audit(_doctor(home)[1])["hint"]
    assert "settled by the next talos write" in hint
    mem.remember("the kettle is descaled every month")  # the next talos write
    _doctor(home, "--ack")
    details = _audit(_doctor(home)[1])["details"]
    assert not [d for d in details if "neither committed nor aborted" in d]


# -- dead's span ---------------------------------------------------------------------------

NOTE = "the staging database is called pelican"
DEAD_MEMORY = (
    f"- {NOTE} <!-- reflect 2026-01-01 -->\n"
    "- the ci runner uses ubuntu <!-- reflect 2026-01-01 -->\n"
)


@pytest.mark.dead_span
@pytest.mark.xfail(
    strict=True,
    reason=(
        "first_day keeps the future day of a clock that ran ahead (never lowered): dead "
        "proposes nothing for ten years"
    ),
)
def test_a_clock_that_ran_ahead_does_not_hide_a_fact_from_dead_for_years(
    make_home, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = talos.usage.today()
    ahead = real + 3650  # the machine's clock said ten years ahead during the first recall
    monkeypatch.setattr(talos.usage, "today", lambda now=None: ahead)
    mem = Memory(make_home(memory=DEAD_MEMORY), index=False)
    mem.recall("which ubuntu version does the ci runner use")
    monkeypatch.setattr(talos.usage, "today", lambda now=None: real)  # the clock is fixed
    for i in range(8):
        mem.recall(f"which ubuntu version does the ci runner use {i}")
    monkeypatch.setattr(talos.memory, "today", lambda: real + 30)  # a month later, truly
    assert [s.text for s in mem.dead()] == [NOTE]


# -- hook install --project ----------------------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason=(
        "only the first talos handler of an event is updated: the second keeps --home "
        "/home/me/notes in the shared settings"
    ),
)
def test_reinstall_over_two_old_entries_with_a_home_leaves_no_home(tmp_path: Path) -> None:
    proj = tmp_path / "repo"
    (proj / ".claude").mkdir(parents=True)
    old = "/usr/bin/python3 -I -m talos hook claude-code --home /home/me/notes"
    groups = [{"hooks": [{"type": "command", "command": old}]}]
    settings = {"hooks": {"UserPromptSubmit": groups + groups, "SessionStart": groups}}
    (proj / ".claude" / "settings.json").write_text(json.dumps(settings))
    p = install.plan("install", "claude-code", project=True, cwd=str(proj))
    install.apply(p)
    assert "/home/me" not in (proj / ".claude" / "settings.json").read_text()


@pytest.mark.xfail(
    strict=True,
    reason=(
        "settings.json.talos-backup beside the shared settings holds the old --home /home/me/notes"
    ),
)
def test_reinstall_keeps_no_home_in_the_projects_folder(tmp_path: Path) -> None:
    """The backup beside the shared settings still holds the old absolute home."""
    proj = tmp_path / "repo"
    (proj / ".claude").mkdir(parents=True)
    old = "talos hook claude-code --home /home/me/notes"
    groups = [{"hooks": [{"type": "command", "command": old}]}]
    (proj / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": groups, "SessionStart": groups}})
    )
    install.apply(install.plan("install", "claude-code", project=True, cwd=str(proj)))
    held = [f.name for f in (proj / ".claude").iterdir() if "/home/me" in f.read_text()]
    assert held == []


def test_reinstall_drops_a_talos_home_env_a_handler_carried(tmp_path: Path) -> None:
    proj = tmp_path / "repo"
    (proj / ".claude").mkdir(parents=True)
    old = "TALOS_HOME=/home/me/notes talos hook claude-code"
    groups = [{"hooks": [{"type": "command", "command": old}]}]
    (proj / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": groups, "SessionStart": groups}})
    )
    install.apply(install.plan("install", "claude-code", project=True, cwd=str(proj)))
    assert "/home/me" not in (proj / ".claude" / "settings.json").read_text()


# -- why-not / explain: stored text is data --------------------------------------------------


def test_why_not_rows_never_print_a_control_character(make_home) -> None:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    facts = "".join(
        f"- the {w} cluster deploy region is {w}-west {i}\n" for i, w in enumerate(words)
    )
    evil = "- deploy region \x1b[2J\x1b[Hwiped out <!-- user 2025-01-01 -->\n"
    home = make_home(memory=facts + evil)
    res = runner.invoke(
        app, ["explain", "--home", str(home), "deploy region", "--why-not", "--plain", "-k", "20"]
    )
    assert res.exit_code == 0, res.output
    assert "wiped out" in res.output
    assert "\x1b" not in res.output and "\r" not in res.output


def test_why_not_of_only_stop_words_says_so(make_home) -> None:
    home = make_home(memory="- the deploy region is eu-west\n- it is what it is\n")
    res = runner.invoke(app, ["explain", "--home", str(home), "the of and it is", "--why-not"])
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output


def test_a_huge_query_to_why_not_is_a_clear_error_or_answer(make_home) -> None:
    home = make_home(memory="- the deploy region is eu-west\n")
    q = "deploy " * 200_000
    res = runner.invoke(app, ["explain", "--home", str(home), q, "--why-not"])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
