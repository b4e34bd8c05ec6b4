"""An episode belongs to the project its transcript ran in (design §3.3, §7.3).

Built from the measured leaks: atlas's Claude Code transcripts showed in ``--scope
project:orbit`` recalls, and with ``[hooks.scopes]`` mapping two client repositories to
``client:acme`` / ``client:beta`` a hook in beta's repository delivered acme's transcript
while the same text as a ``client:acme`` fact was withheld. One test per route: the CLI, the
Python API with and without the index, MCP, the hook (a whole process) and the report.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click.testing
import pytest
import typer

from talos import Memory
from talos.cli import app
from talos.report import build_report
from talos.view.episode_scopes import WITHHELD, episode_scope

runner = click.testing.CliRunner()
COMMAND = typer.main.get_command(app)

ACME = "the acme merger invoice total is 4.2M; confidential, do not share"
BETA = "draft the beta merger invoice email for the finance team"


def claude_line(cwd: Path | str, said: str, role: str = "user") -> str:
    """One Claude Code transcript line, stamped with ``cwd`` as Claude Code stamps it."""
    content: Any = said if role == "user" else [{"type": "text", "text": said}]
    return json.dumps(
        {
            "type": role,
            "sessionId": "s",
            "cwd": str(cwd),
            "timestamp": "2026-12-01T10:00:00Z",
            "message": {"role": role, "content": content},
        }
    )


def transcript(folder: Path, name: str, cwd: Path | str, request: str, answer: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        claude_line(cwd, request) + "\n" + claude_line(cwd, answer, "assistant") + "\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """Two projects (git roots atlas and orbit), a folder outside any, one Claude Code
    transcript each, and a home reading them."""
    code = tmp_path / "code"
    for name in ("atlas", "orbit"):
        (code / name / ".git").mkdir(parents=True)
    (code / "orbit" / "src").mkdir()
    loose = tmp_path / "scratch"
    loose.mkdir()
    cc = tmp_path / "claude" / "projects"
    transcript(
        cc / "-code-atlas",
        "a.jsonl",
        code / "atlas",
        "fix the stripe webhook timeouts in atlas billing",
        "Raised the webhook timeout to 30 s.",
    )
    transcript(
        cc / "-code-orbit-src",
        "o.jsonl",
        code / "orbit" / "src",
        "check the stripe webhook signatures in orbit",
        "Signatures verified with the rotated secret.",
    )
    transcript(
        cc / "-scratch",
        "g.jsonl",
        loose,
        "try the stripe webhook cli in a scratch folder",
        "The cli replays webhook events.",
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "talos.toml").write_text(
        f'sessions_dir = ["{cc.as_posix()}/**"]\n[hooks]\nserver = false\ntimeout = 30\n',
        encoding="utf-8",
    )
    return {"home": home, "code": code, "loose": loose}


def tasks(rows: list[Any]) -> list[str]:
    """The episodes' texts among ``rows`` (JSON rows or :class:`talos.results.RecallRow`)."""
    return sorted(
        (r["text"] if isinstance(r, dict) else r.text)
        for r in rows
        if (r["kind"] if isinstance(r, dict) else r.kind) == "episode"
    )


ATLAS = "fix the stripe webhook timeouts in atlas billing"
ORBIT = "check the stripe webhook signatures in orbit"
LOOSE = "try the stripe webhook cli in a scratch folder"


def test_the_rule_is_the_hooks_rule(tmp_path: Path) -> None:
    repo = tmp_path / "code" / "My App"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    table = {"hooks": {"scopes": {str(tmp_path / "clients" / "acme"): "client:acme"}}}
    (tmp_path / "clients" / "acme" / "web").mkdir(parents=True)
    home = str(tmp_path)
    assert episode_scope("", {}, home) == "global"
    assert episode_scope(str(repo / "src"), {}, home) == "project:my-app"
    assert episode_scope(str(tmp_path), {}, home) == "global"  # no git root: as a hook there
    assert episode_scope(str(tmp_path / "clients" / "acme" / "web"), table, home) == "client:acme"
    # a folder that is gone: its nearest existing parent's repository, else its own name
    assert episode_scope(str(repo / "old-branch" / "x"), {}, home) == "project:my-app"
    assert episode_scope("/nowhere/at/all/shop", {}, home) == "project:shop"
    # a mapping that is no scope name withholds the folder's episodes from every view
    bad = {"hooks": {"scopes": {str(tmp_path / "clients"): "a b"}}}
    assert episode_scope(str(tmp_path / "clients" / "acme"), bad, home) == WITHHELD


@pytest.mark.parametrize("index", [True, False])
def test_a_project_recall_never_shows_another_projects_episodes(
    world: dict[str, Path], index: bool
) -> None:
    home = world["home"]
    orbit = Memory(home, scopes=["global", "project:orbit"], index=index)
    assert tasks(orbit.recall("stripe webhook", k=10).picked) == [ORBIT, LOOSE]
    atlas = Memory(home, scopes=["global", "project:atlas"], index=index)
    assert tasks(atlas.recall("stripe webhook", k=10).picked) == [ATLAS, LOOSE]
    # outside any project: global alone sees the sessions that ran outside any project, as
    # it sees only global's facts and skills (one rule, design §7.3)
    outside = Memory(home, index=index)
    assert tasks(outside.recall("stripe webhook", k=10).picked) == [LOOSE]
    # a project alone: its own sessions, not global's
    only = Memory(home, scopes=["project:atlas"], index=index)
    assert tasks(only.recall("stripe webhook", k=10).picked) == [ATLAS]


def test_cli_recall_and_explain_keep_to_the_scopes(world: dict[str, Path]) -> None:
    home = str(world["home"])
    res = runner.invoke(
        COMMAND, ["explain", "stripe webhook atlas", "--json", "--home", home, "--scope",
                  "global", "--scope", "project:orbit"]
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["data"]["rows"]
    assert ATLAS not in tasks(rows) and ORBIT in tasks(rows)
    res = runner.invoke(COMMAND, ["recall", "stripe webhook atlas", "--home", home])
    assert res.exit_code == 0, res.output
    assert "atlas billing" not in res.stdout and "orbit" not in res.stdout


def test_mcp_recall_keeps_to_the_servers_scopes(world: dict[str, Path]) -> None:
    from talos.mcp.server import build_server

    server = build_server(Memory(world["home"], scopes=["global", "project:orbit"]))
    result = asyncio.run(server.call_tool("recall", {"query": "stripe webhook atlas", "k": 10}))
    text = json.dumps(result.structured_content)
    assert "signatures in orbit" in text
    assert "atlas billing" not in text


def run_hook(home: Path, cwd: Path, prompt: str) -> str:
    event = {"hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": str(cwd)}
    done = subprocess.run(
        [sys.executable, "-m", "talos", "hook", "claude-code", "--home", str(home)],
        input=json.dumps(event).encode(),
        capture_output=True,
        timeout=120,
        env={**os.environ, "TALOS_SCOPE": ""},
    )
    assert done.returncode == 0 and done.stderr == b""
    return done.stdout.decode("utf-8")


def test_a_hook_in_one_clients_repository_never_delivers_anothers_transcript(
    tmp_path: Path,
) -> None:
    """The hostile pass's repro: ``[hooks.scopes]`` maps two client repositories; a hook in
    beta's delivers beta's transcript, never acme's; the same text as an acme fact was already
    withheld."""
    acme, beta = tmp_path / "work" / "acme", tmp_path / "work" / "beta"
    for repo in (acme, beta):
        (repo / ".git").mkdir(parents=True)
    cc = tmp_path / "claude" / "projects"
    transcript(cc / "-work-acme", "a.jsonl", acme, ACME, "Filed the acme merger invoice.")
    transcript(cc / "-work-beta", "b.jsonl", beta, BETA, "Drafted the beta merger invoice mail.")
    home = tmp_path / "home"
    home.mkdir()
    (home / "memory.md").write_text(
        f"- {ACME} <!-- user 2026-12-01 scope=client:acme -->\n", encoding="utf-8"
    )
    (home / "talos.toml").write_text(
        f'sessions_dir = ["{cc.as_posix()}/**"]\n[hooks]\nserver = false\ntimeout = 30\n'
        f'[hooks.scopes]\n"{acme.as_posix()}" = "client:acme"\n'
        f'"{beta.as_posix()}" = "client:beta"\n',
        encoding="utf-8",
    )
    out = run_hook(home, beta, "what was the merger invoice total")
    assert "beta merger invoice" in out
    assert "4.2M" not in out and "acme" not in out
    assert "acme merger invoice total" in run_hook(home, acme, "what was the merger invoice total")


def test_the_report_names_no_episode_of_another_project(world: dict[str, Path]) -> None:
    home = world["home"]
    for scopes in (["global"], ["global", "project:orbit"]):
        Memory(home, scopes=scopes).recall("stripe webhook atlas billing", k=10)
    report = build_report(Memory(home, scopes=["global", "project:orbit"]))
    keys = [r["key"] for r in report["most_recalled"]]
    assert f"episode:{ORBIT}" in keys
    assert not any("atlas" in k for k in keys)


def test_the_transcripts_name_their_folder() -> None:
    from talos.sources.sessions import load_episodes

    fix = Path(__file__).parent / "fixtures" / "sessions"
    assert [n.cwd for n in load_episodes(fix / "codex" / "**")] == [
        "/home/ana/shop",
        "/home/ana/blog",
    ]  # a Codex rollout's session_meta
    claude = {Path(n.path).name: n.cwd for n in load_episodes(fix / "claude" / "**")}
    assert claude["0b1c-session.jsonl"] == "/home/ana/shop"  # Claude Code's lines


def test_a_new_scopes_table_moves_the_episodes_at_once(world: dict[str, Path]) -> None:
    """The scope is worked out when the view is built, not stored with the row: an edit of
    ``[hooks.scopes]`` takes effect on the next recall (the stored blocks' key holds it)."""
    home = world["home"]
    mem = Memory(home, scopes=["global", "project:atlas"])
    assert ATLAS in tasks(mem.recall("stripe webhook", k=10).picked)
    toml = home / "talos.toml"
    atlas = (world["code"] / "atlas").as_posix()
    toml.write_text(toml.read_text() + f'[hooks.scopes]\n"{atlas}" = "client:acme"\n')
    assert ATLAS not in tasks(
        Memory(home, scopes=["global", "project:atlas"]).recall("stripe webhook", k=10).picked
    )
    acme = Memory(home, scopes=["global", "client:acme"]).recall("stripe webhook", k=10)
    assert tasks(acme.picked) == [ATLAS, LOOSE]
