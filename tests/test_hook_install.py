"""``talos hook install|uninstall`` (issue 16.2): settings files that already hold other hooks
keep them; install is idempotent and keeps a backup; uninstall removes exactly what install
added; a file that is not valid JSON (TOML) is refused with its line and left untouched."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from talos.cli import app
from talos.errors import InputError
from talos.hooks import install

#: A user's Claude Code settings with hooks of their own (2-space JSON, as Claude Code writes).
CLAUDE = {
    "permissions": {"allow": ["Bash(npm test:*)"]},
    "hooks": {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "~/bin/prompt-guard.sh", "timeout": 5}]}
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit-bash"}]}
        ],
    },
    "model": "opus",
}
CMD = "talos hook claude-code"


def dump(data: object, indent: int | str = 2) -> str:
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake $HOME; agents' user settings live under it."""
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setattr(install, "_launcher", lambda project: ["talos"])
    (tmp_path / "user").mkdir()
    return tmp_path / "user"


def run(action: str, agent: str, **kw: object) -> install.Plan:
    p = install.plan(action, agent, **kw)  # type: ignore[arg-type]
    install.apply(p)
    return p


def test_install_adds_one_group_per_event_and_keeps_everything_else(user: Path) -> None:
    path = user / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(dump(CLAUDE), encoding="utf-8")
    run("install", "claude-code")
    ours = {"hooks": [{"type": "command", "command": CMD, "timeout": 10}]}
    after = json.loads(path.read_text(encoding="utf-8"))
    assert after == {
        "permissions": {"allow": ["Bash(npm test:*)"]},
        "hooks": {
            "UserPromptSubmit": [CLAUDE["hooks"]["UserPromptSubmit"][0], ours],  # type: ignore[index]
            "PreToolUse": CLAUDE["hooks"]["PreToolUse"],  # type: ignore[index]
            "SessionStart": [ours],
        },
        "model": "opus",
    }
    assert list(after) == ["permissions", "hooks", "model"]  # key order kept
    backup = path.with_name("settings.json.talos-backup")
    assert backup.read_text(encoding="utf-8") == dump(CLAUDE)


def test_install_twice_changes_nothing_and_uninstall_restores_the_file_byte_for_byte(
    user: Path,
) -> None:
    path = user / ".claude" / "settings.json"
    path.parent.mkdir()
    original = dump(CLAUDE)
    path.write_text(original, encoding="utf-8")
    run("install", "claude-code")
    installed = path.read_text(encoding="utf-8")
    backup = path.with_name("settings.json.talos-backup")
    stamp = backup.stat().st_mtime_ns
    again = run("install", "claude-code")
    assert [c.changed for c in again.changes] == [False]
    assert path.read_text(encoding="utf-8") == installed
    assert backup.stat().st_mtime_ns == stamp  # nothing written, not even the backup
    run("uninstall", "claude-code")
    assert path.read_text(encoding="utf-8") == original
    assert [c.changed for c in run("uninstall", "claude-code").changes] == [False]
    # a file formatted by hand that already holds the entry is left byte for byte
    compact = json.dumps(json.loads(installed), separators=(",", ":"))
    path.write_text(compact, encoding="utf-8")
    assert [c.changed for c in run("install", "claude-code").changes] == [False]
    assert path.read_text(encoding="utf-8") == compact


def test_uninstall_removes_only_talos_handlers_even_inside_a_shared_group(user: Path) -> None:
    path = user / ".claude" / "settings.json"
    path.parent.mkdir()
    shared = {
        "hooks": {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {"type": "command", "command": "mine.sh"},
                        {"type": "command", "command": "/opt/venv/bin/talos hook claude-code"},
                    ]
                },
                {"hooks": []},  # someone's empty group: not talos's to remove
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "echo 'talos hook gemini'"}]}],
        }
    }
    path.write_text(dump(shared, indent="\t"), encoding="utf-8")
    run("uninstall", "claude-code")
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[1].startswith("\t")  # the file's own indentation is kept
    assert json.loads(text) == {
        "hooks": {
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": "mine.sh"}]},
                {"hooks": []},
            ]
        }
    }


def test_an_older_talos_entry_is_updated_in_place(user: Path) -> None:
    path = user / ".claude" / "settings.json"
    path.parent.mkdir()
    old = {
        "hooks": {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/old/venv/bin/talos hook claude-code",
                            "timeout": 60,
                            "statusMessage": "memory",
                        }
                    ]
                }
            ]
        }
    }
    path.write_text(dump(old), encoding="utf-8")
    run("install", "claude-code")
    hooks = json.loads(path.read_text(encoding="utf-8"))["hooks"]
    assert hooks["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": CMD, "timeout": 10, "statusMessage": "memory"}]}
    ]
    assert len(hooks["SessionStart"]) == 1


def test_a_file_that_is_not_json_is_refused_with_its_line_and_left_alone(user: Path) -> None:
    path = user / ".claude" / "settings.json"
    path.parent.mkdir()
    broken = '{\n  "model": "opus",\n  // my comment\n  "hooks": {}\n}\n'
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(InputError) as e:
        install.plan("install", "claude-code")
    assert str(e.value).startswith(f"{path}:3:3: not valid JSON (Expecting property name")
    assert path.read_text(encoding="utf-8") == broken
    path.write_text('{"hooks": []}', encoding="utf-8")
    with pytest.raises(InputError, match='"hooks" must be a JSON object'):
        install.plan("install", "claude-code")
    path.write_text('{"hooks": {"SessionStart": {}}}', encoding="utf-8")
    with pytest.raises(InputError, match=r'"hooks\.SessionStart" must be a list'):
        install.plan("install", "claude-code")


def test_a_new_file_is_created_and_uninstall_removes_it_again(user: Path) -> None:
    run("install", "gemini")
    path = user / ".gemini" / "settings.json"
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "hooks": {
            event: [
                {
                    "hooks": [
                        {
                            "name": "talos",
                            "type": "command",
                            "command": "talos hook gemini",
                            "timeout": 10000,
                            "description": "talos: memory recalled for this prompt",
                        }
                    ]
                }
            ]
            for event in ("BeforeAgent", "SessionStart")
        }
    }
    run("uninstall", "gemini")
    assert not path.exists()
    assert not path.with_name("settings.json.talos-backup").exists()


CODEX_TOML = """\
model = "gpt-5-codex"

[features]
web_search = true

[mcp_servers.talos]
command = "talos"
args = ["mcp"]
"""


def test_codex_gets_hooks_json_and_the_hooks_flag_and_loses_both_on_uninstall(
    user: Path,
) -> None:
    codex = user / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(CODEX_TOML, encoding="utf-8")
    hooks_json = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}
    (codex / "hooks.json").write_text(dump(hooks_json), encoding="utf-8")
    p = run("install", "codex")
    assert p.notes == []
    assert (codex / "config.toml").read_text(encoding="utf-8") == CODEX_TOML.replace(
        "[features]\n", "[features]\nhooks = true  # added by talos hook install\n"
    )
    data = json.loads((codex / "hooks.json").read_text(encoding="utf-8"))
    ours = {"hooks": [{"type": "command", "command": "talos hook codex", "timeout": 10}]}
    assert data == {
        "hooks": {
            "Stop": hooks_json["hooks"]["Stop"],
            "UserPromptSubmit": [ours],
            "SessionStart": [ours],
        }
    }
    run("uninstall", "codex")
    assert (codex / "config.toml").read_text(encoding="utf-8") == CODEX_TOML
    assert (codex / "hooks.json").read_text(encoding="utf-8") == dump(hooks_json)


def test_codex_flag_table_is_added_when_missing_and_an_explicit_choice_is_respected(
    user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = user / "elsewhere"
    monkeypatch.setenv("CODEX_HOME", str(codex))
    codex.mkdir()
    (codex / "config.toml").write_text('model = "o3"', encoding="utf-8")  # no final newline
    run("install", "codex")
    assert (codex / "config.toml").read_text(encoding="utf-8") == (
        'model = "o3"\n\n[features]  # added by talos hook install\n'
        "hooks = true  # added by talos hook install\n"
    )
    run("uninstall", "codex")
    assert (codex / "config.toml").read_text(encoding="utf-8") == 'model = "o3"\n'
    (codex / "config.toml").write_text("[features]\ncodex_hooks = false\n", encoding="utf-8")
    p = run("install", "codex")
    assert (codex / "config.toml").read_text(
        encoding="utf-8"
    ) == "[features]\ncodex_hooks = false\n"
    assert p.notes == [
        f"{codex / 'config.toml'}:2: Codex hooks are turned off (codex_hooks = false); talos "
        "leaves your setting alone — set it to true for the hook to run"
    ]
    (codex / "config.toml").write_text("[features\n", encoding="utf-8")
    with pytest.raises(InputError, match="invalid TOML"):
        install.plan("install", "codex")


def test_project_settings_go_under_the_git_root(user: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    run("install", "claude-code", project=True, cwd=str(repo / "src" / "deep"))
    settings = repo / ".claude" / "settings.json"
    assert json.loads(settings.read_text(encoding="utf-8"))["hooks"]["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": "talos hook claude-code", "timeout": 10}]}
    ]
    assert not (user / ".claude").exists()


def test_a_symlinked_settings_file_keeps_its_link(user: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    real.write_text(dump({"model": "opus"}), encoding="utf-8")
    (user / ".claude").mkdir()
    link = user / ".claude" / "settings.json"
    link.symlink_to(real)
    run("install", "claude-code")
    assert link.is_symlink()
    assert "talos hook claude-code" in real.read_text(encoding="utf-8")


def test_the_command_names_this_interpreter_for_the_user_and_talos_for_a_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    py = tmp_path / "my venv" / "bin" / "python3"
    monkeypatch.setattr("sys.executable", str(py))
    home = tmp_path / "notes"
    user_cmd = install.hook_command("codex", project=False, home=str(home))
    assert user_cmd == f"'{py}' -I -m talos hook codex --home {home}"
    assert install.hook_command("codex", project=True) == "talos hook codex"
    assert install.is_talos_handler({"command": user_cmd})
    assert install.is_talos_handler({"command": "/usr/local/bin/talos hook gemini --home x"})
    assert not install.is_talos_handler({"command": "mytalos hook codex"})
    assert not install.is_talos_handler({"command": "talos recall x"})


def test_cli_dry_run_prints_the_diff_and_writes_nothing(user: Path) -> None:
    path = user / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(dump({"model": "opus"}), encoding="utf-8")
    res = CliRunner().invoke(app, ["hook", "install", "claude-code", "--dry-run"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith(f"--- {path}\n+++ {path}\n@@ ")
    assert '+  "hooks": {\n' in res.stdout
    assert "dry run: nothing written" in res.stderr
    assert path.read_text(encoding="utf-8") == dump({"model": "opus"})
    assert not path.with_name("settings.json.talos-backup").exists()


def test_cli_refuses_a_bad_file_with_exit_1_and_an_envelope(user: Path) -> None:
    path = user / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text("{,}", encoding="utf-8")
    res = CliRunner().invoke(app, ["hook", "install", "gemini", "--json"])
    assert res.exit_code == 1
    env = json.loads(res.stdout)
    assert (env["ok"], env["command"]) == (False, "hook")
    assert env["error"].startswith(f"{path}:1:2: not valid JSON")
    res = CliRunner().invoke(app, ["hook", "install", "cursor"])
    assert res.exit_code == 1 and "unknown agent 'cursor'" in res.stderr
    res = CliRunner().invoke(app, ["hook", "install", "codex", "--project", "--user"])
    assert res.exit_code == 1 and "choose --project or --user" in res.stderr
    assert os.listdir(user / ".gemini") == ["settings.json"]


def test_uninstall_dry_run_shows_the_removal_it_does(user: Path) -> None:
    """Newcomer: for a settings.json talos had created, ``--dry-run`` showed ``+{}`` while the
    real uninstall removed the file (and said it kept a backup it had just removed)."""
    path = user / ".claude" / "settings.json"
    run("install", "claude-code")
    dry = install.plan("uninstall", "claude-code")
    assert [c.after for c in dry.changes] == [None]
    assert dry.changes[0].diff().splitlines()[:2] == [f"--- {path}", "+++ /dev/null"]
    got = CliRunner().invoke(app, ["hook", "uninstall", "claude-code"])
    assert got.exit_code == 0, got.output
    assert f"removed {path} (talos had created it; nothing else was in it)" in got.output
    assert not path.exists() and not path.with_name("settings.json.talos-backup").exists()
    # a file that held something before talos: uninstall gives back {} , not a removal
    path.write_text("{}\n", encoding="utf-8")
    run("install", "claude-code")
    assert [c.after for c in install.plan("uninstall", "claude-code").changes] != [None]


# -- a project's settings are shared: no one's home path in them (newcomer's report) ---------


def _repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.chdir(repo)
    return repo


def test_a_project_install_writes_no_home_from_talos_home(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failing input: ``TALOS_HOME=~/notes talos hook install claude-code --project``
    wrote ``talos hook claude-code --home /home/me/notes`` into ``.claude/settings.json``,
    a file committed for everyone. Now the command has no ``--home``: the hook of each person
    finds their own home ($TALOS_HOME, else the platform's data dir), and install says so."""
    repo = _repo(tmp_path, monkeypatch)
    notes = tmp_path / "notes"
    notes.mkdir()
    monkeypatch.setenv("TALOS_HOME", str(notes))
    res = CliRunner().invoke(app, ["hook", "install", "claude-code", "--project"])
    assert res.exit_code == 0, res.output
    settings = json.loads((repo / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert [h["command"] for g in settings["hooks"].values() for x in g for h in x["hooks"]] == [
        "talos hook claude-code",
        "talos hook claude-code",
    ]
    assert (
        f"$TALOS_HOME ({notes}) is not written into the project's settings: the hook finds "
        "each person's home as talos does ($TALOS_HOME, else the platform's data dir)"
    ) in " ".join(res.stderr.split())
    res = CliRunner().invoke(app, ["hook", "install", "gemini", "--project", "--json"])
    assert res.exit_code == 0, res.output
    assert "--home" not in json.loads(res.stdout)["data"]["files"][0]["diff"]


def test_a_project_install_refuses_an_explicit_home(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--home PATH --project``: refused (exit 1), nothing written — the path is one
    person's; the message says what to do instead."""
    repo = _repo(tmp_path, monkeypatch)
    monkeypatch.delenv("TALOS_HOME", raising=False)
    notes = tmp_path / "notes"
    notes.mkdir()
    res = CliRunner().invoke(app, ["hook", "install", "codex", "--project", "--home", str(notes)])
    assert res.exit_code == 1
    assert " ".join(res.stderr.split()) == (
        "talos hook: --home with --project would write your own path into settings the "
        "repository shares; leave --home out (each person's hook finds their home: "
        "$TALOS_HOME, else the platform's data dir), or install with --user"
    )
    assert not (repo / ".codex").exists()
    with pytest.raises(InputError, match="--home with --project"):
        install.plan("install", "codex", project=True, home=str(notes), cwd=str(repo))
    # the user's own settings may name a home: one person, one machine
    p = install.plan("install", "codex", home=str(notes))
    assert f"hook codex --home {notes}" in (p.changes[0].after or "")


# -- reinstall over entries that carried a home ------------------------------------------------


def test_reinstall_over_two_old_entries_with_a_home_leaves_no_home(tmp_path: Path) -> None:
    """design §9.5 (install edits the settings idempotently; a project's shared settings carry
    no one's home): every talos handler of an event is updated, not only the first."""
    proj = tmp_path / "repo"
    (proj / ".claude").mkdir(parents=True)
    old = "/usr/bin/python3 -I -m talos hook claude-code --home /home/me/notes"
    groups = [{"hooks": [{"type": "command", "command": old}]}]
    settings = {"hooks": {"UserPromptSubmit": groups + groups, "SessionStart": groups}}
    (proj / ".claude" / "settings.json").write_text(json.dumps(settings))
    p = install.plan("install", "claude-code", project=True, cwd=str(proj))
    install.apply(p)
    assert "/home/me" not in (proj / ".claude" / "settings.json").read_text()


def test_reinstall_updates_every_talos_handler_and_leaves_the_persons_alone(
    user: Path,
) -> None:
    """Two old talos handlers in one group beside the person's, a third in a group with a
    matcher: all three get the current command and timeout (a key the person added stays),
    the person's handler and the matcher stay, and a second install changes nothing."""
    path = user / ".claude" / "settings.json"
    path.parent.mkdir()
    old = "/opt/old/bin/talos hook claude-code --home /home/me/notes"
    mine = {"type": "command", "command": "~/bin/prompt-guard.sh", "timeout": 5}
    settings = {
        "hooks": {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {"type": "command", "command": old, "timeout": 3},
                        mine,
                        {"type": "command", "command": old, "statusMessage": "recalling"},
                    ]
                }
            ],
            "SessionStart": [
                {"matcher": "startup", "hooks": [{"type": "command", "command": old}]}
            ],
        }
    }
    path.write_text(dump(settings), encoding="utf-8")
    run("install", "claude-code")
    ours = {"type": "command", "command": CMD, "timeout": 10}
    after = json.loads(path.read_text(encoding="utf-8"))
    assert after == {
        "hooks": {
            "UserPromptSubmit": [{"hooks": [ours, mine, {**ours, "statusMessage": "recalling"}]}],
            "SessionStart": [{"matcher": "startup", "hooks": [ours]}],
        }
    }
    text = path.read_text(encoding="utf-8")
    assert not run("install", "claude-code").changes[0].changed
    assert path.read_text(encoding="utf-8") == text


def test_reinstall_keeps_the_old_settings_with_their_home_in_the_backup_only(
    tmp_path: Path,
) -> None:
    """The backup beside the shared settings still holds the old absolute home. Decided: the
    backup is the file as it was (README, hooks: "the file as it was is kept as
    NAME.talos-backup"), so it holds what the old settings held; the settings hold no home."""
    proj = tmp_path / "repo"
    (proj / ".claude").mkdir(parents=True)
    old = "talos hook claude-code --home /home/me/notes"
    groups = [{"hooks": [{"type": "command", "command": old}]}]
    (proj / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": groups, "SessionStart": groups}})
    )
    install.apply(install.plan("install", "claude-code", project=True, cwd=str(proj)))
    held = [f.name for f in (proj / ".claude").iterdir() if "/home/me" in f.read_text()]
    assert held == ["settings.json.talos-backup"]


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
