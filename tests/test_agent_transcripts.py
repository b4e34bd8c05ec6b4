"""The agents' own transcripts are found and offered (design §3.3).

Built from the measured failure: a new user who ran ``talos hook install claude-code`` got
``nothing recalled`` for "what did I do about the stripe webhook timeouts" until they set
``sessions_dir`` by hand. Every test runs under a fake ``$HOME`` (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click.testing
import pytest
import typer

from talos.cli import app
from talos.doctor import diagnose
from talos.errors import InputError
from talos.home import resolve_paths
from talos.sources.add_folders import add_sessions_dirs
from talos.sources.agent_folders import found_folders

runner = click.testing.CliRunner()
COMMAND = typer.main.get_command(app)
REQUEST = "fix the stripe webhook timeouts in the billing service"


def user_home() -> Path:
    return Path(os.environ["HOME"])


def claude_session(projects: Path, repo: Path) -> Path:
    """One Claude Code transcript of a session run in ``repo`` (a git root)."""
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    folder = projects / ("-" + repo.name)
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        {"type": "user", "sessionId": "s", "cwd": str(repo), "timestamp": "2026-12-01T09:00:00Z",
         "message": {"role": "user", "content": REQUEST}},
        {"type": "assistant", "sessionId": "s", "cwd": str(repo),
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Raised it."}]}},
    ]  # fmt: skip
    path = folder / "s1.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def cli(*args: str) -> click.testing.Result:
    return runner.invoke(COMMAND, list(args))


def test_a_new_user_gets_past_sessions_recalled_with_no_hand_edit(tmp_path: Path) -> None:
    repo = user_home() / "code" / "atlas"
    claude_session(user_home() / ".claude" / "projects", repo)
    home = tmp_path / "home"
    res = cli("hook", "install", "claude-code", "--home", str(home))
    assert res.exit_code == 0, res.output
    assert (home / "talos.toml").read_text(encoding="utf-8") == (
        "# added by talos hook install claude-code: the agents' transcripts (remove an entry "
        "to stop reading it)\n"
        'sessions_dir = [".talos/sessions", "~/.claude/projects/**"]\n'
    )
    assert "sessions_dir now also reads Claude Code's transcripts (~/.claude/projects/**); " \
        "to stop, remove that entry" in res.stderr  # fmt: skip
    event = {"hook_event_name": "UserPromptSubmit", "cwd": str(repo),
             "prompt": "what did I do about the stripe webhook timeouts"}  # fmt: skip
    (home / "talos.toml").write_text(
        (home / "talos.toml").read_text() + "[hooks]\nserver = false\ntimeout = 30\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "talos", "hook", "claude-code", "--home", str(home)],
        input=json.dumps(event).encode(),
        capture_output=True,
        timeout=120,
    )
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"[episode] (Claude Code, 2026-12-01) {REQUEST}" in context
    # a second install finds the folder read already and changes nothing
    before = (home / "talos.toml").read_text()
    res = cli("hook", "install", "claude-code", "--home", str(home))
    assert res.exit_code == 0 and (home / "talos.toml").read_text() == before
    assert "transcripts (" in res.stderr and "are read already" in res.stderr


def test_the_agents_own_variables_name_their_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "cc-config"
    (elsewhere / "projects").mkdir(parents=True)
    (user_home() / ".codex" / "sessions").mkdir(parents=True)
    codex_home = tmp_path / "codex-home"
    (codex_home / "sessions").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(elsewhere))
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    assert [(f.agent, f.entry) for f in found_folders()] == [
        ("claude-code", f"{elsewhere.as_posix()}/projects/**"),  # outside $HOME: as it is
        ("codex", f"{codex_home.as_posix()}/sessions/**"),
        ("codex", "~/.codex/sessions/**"),
    ]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            '# my settings\nlang = "en"  # English\n\n[hooks]\ntimeout = 2\n',
            '# my settings\nlang = "en"  # English\n\n# NOTE\nsessions_dir = '
            '[".talos/sessions", "~/.claude/projects/**"]\n\n[hooks]\ntimeout = 2\n',
        ),
        (
            'sessions_dir = "~/chats"  # mine\n',
            'sessions_dir = ["~/chats", "~/.claude/projects/**"]  # mine\n',
        ),
        (
            'sessions_dir = [\n  ".talos/sessions",  # ours\n  "~/notes/chats" # old\n]\n',
            'sessions_dir = [\n  ".talos/sessions",  # ours\n  "~/notes/chats", '
            '"~/.claude/projects/**" # old\n]\n',
        ),
    ],
)
def test_the_persons_lines_are_kept(tmp_path: Path, before: str, after: str) -> None:
    (user_home() / ".claude" / "projects").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    (home / "talos.toml").write_text(before, encoding="utf-8")
    got = add_sessions_dirs(resolve_paths(home), found_folders(["claude-code"]), "NOTE")
    assert [f.entry for f in got.added] == ["~/.claude/projects/**"]
    assert (home / "talos.toml").read_text(encoding="utf-8") == after


@pytest.mark.parametrize(
    "text",
    [
        'note = """\nsessions_dir = "inside a string"\n"""\nsessions_dir = "~/chats"\n',
        'note = """\nsessions_dir = "inside a string"\n"""\n',
    ],
)
def test_a_talos_toml_it_cannot_edit_safely_is_left_as_it_is(tmp_path: Path, text: str) -> None:
    (user_home() / ".claude" / "projects").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    (home / "talos.toml").write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as e:
        add_sessions_dirs(resolve_paths(home), found_folders(), "NOTE")
    assert "add them yourself: sessions_dir = " in str(e.value)
    assert (home / "talos.toml").read_text(encoding="utf-8") == text


def test_no_transcripts_and_dry_run_write_nothing(tmp_path: Path) -> None:
    claude_session(user_home() / ".claude" / "projects", user_home() / "code" / "atlas")
    home = tmp_path / "home"
    res = cli("hook", "install", "claude-code", "--no-transcripts", "--home", str(home))
    assert res.exit_code == 0 and not (home / "talos.toml").exists()
    res = cli("hook", "install", "claude-code", "--dry-run", "--json", "--home", str(home))
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["data"]["transcripts"]["added"] == ["~/.claude/projects/**"]
    assert not (home / "talos.toml").exists()


def test_init_adds_every_agents_folder_and_doctor_names_one_not_read(tmp_path: Path) -> None:
    claude_session(user_home() / ".claude" / "projects", user_home() / "code" / "atlas")
    (user_home() / ".codex" / "sessions").mkdir(parents=True)
    (user_home() / ".gemini" / "tmp").mkdir(parents=True)
    home = tmp_path / "home"
    res = cli("init", "--no-transcripts", "--home", str(home))
    assert res.exit_code == 0, res.output
    found = [f.summary for f in diagnose(home).findings if "not read" in f.summary]
    user = user_home()
    assert found == [
        f"{user}/.claude/projects: Claude Code's transcripts are not read",
        f"{user}/.codex/sessions: Codex CLI's transcripts are not read",
        f"{user}/.gemini/tmp: Gemini CLI's chats are not read (JSON documents talos has no "
        "reader for yet)",
    ]
    res = cli("init", "--json", "--home", str(home))
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)["data"]["transcripts"]
    assert got["added"] == ["~/.claude/projects/**", "~/.codex/sessions/**"]
    assert got["sessions_read"] == 1
    found = [f.summary for f in diagnose(home).findings if "not read" in f.summary]
    assert found == [found[0]] and "Gemini" in found[0]
