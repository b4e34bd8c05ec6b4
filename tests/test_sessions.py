"""Session readers (design §3.3, issue 6): Talos chat lines, Claude Code transcripts and Codex CLI
rollouts, each detected per file and yielding the first real user request.

The fixtures in ``tests/fixtures/sessions/`` are small hand-written files in each agent's shape.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.sources.sessions import detect, first_user_request, load_episodes, session_files

FIX = Path(__file__).parent / "fixtures" / "sessions"


@pytest.mark.parametrize(
    ("rel", "request_text"),
    [
        # Talos: list content skipped, the string message wins (the reference rule).
        ("talos/2026-07-01T10.jsonl", "plan the garden watering schedule"),
        # Talos: a non-JSON line ends the read (pinned by the golden fixtures too).
        ("talos/2026-07-02T10.jsonl", ""),
        # Claude Code: command echo, its stdout, the isMeta caveat and a system-reminder part
        # come before the request.
        (
            "claude/-home-ana-shop/0b1c-session.jsonl",
            "fix the monthly sales report: totals are off by one day in UTC",
        ),
        # Claude Code: a tool result, a side-chain prompt, an interruption and a ! command come
        # first; the reminder glued to the request is cut off.
        (
            "claude/-home-ana-shop/7e2f-session.jsonl",
            "migrate the payments module to the new stripe client",
        ),
        # Claude Code: an image-only turn is no request.
        ("claude/-home-ana-blog/c3d4-session.jsonl", ""),
        # Codex: user_instructions and environment_context preambles are skipped.
        (
            "codex/2025/10/02/rollout-2025-10-02T10-00-00-5973b6c0.jsonl",
            "speed up the csv import: it reads the whole file into memory",
        ),
        # Codex: the AGENTS.md preamble and a non-plain user_message event are skipped.
        (
            "codex/2025/10/02/rollout-2025-10-02T11-30-00-8a1d2e3f.jsonl",
            "publish the draft about sourdough starters",
        ),
        # Codex, older rollouts: a header line, state records and bare items.
        (
            "codex-legacy/rollout-2025-06-01T09-00-00-1f2e.jsonl",
            "add a --dry-run flag to the deploy script",
        ),
    ],
)
def test_first_user_request_per_format(rel: str, request_text: str) -> None:
    assert first_user_request(FIX / rel) == request_text


@pytest.mark.parametrize(
    ("line", "fmt"),
    [
        ({"role": "user", "content": "x"}, "talos"),
        ({"type": "user", "message": {"role": "user", "content": "x"}}, "claude"),
        ({"type": "summary", "summary": "s", "leafUuid": "a"}, "claude"),
        ({"type": "some-new-kind", "sessionId": "0b1c", "uuid": "u"}, "claude"),
        ({"type": "session_meta", "payload": {"id": "1"}}, "codex"),
        ({"type": "message", "role": "user", "content": []}, "codex"),
        ({"id": "1", "timestamp": "t", "instructions": None}, "codex"),
        ({"record_type": "state"}, "codex"),
        ({"something": "else"}, None),
        ([1, 2], None),
    ],
)
def test_detect(line: object, fmt: str | None) -> None:
    assert detect(line) == fmt


def _write(path: Path, lines: list[object | str]) -> Path:
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return path


def test_torn_line_is_skipped_in_agent_logs_but_ends_a_talos_read(tmp_path: Path) -> None:
    claude = {"type": "user", "message": {"role": "user", "content": "rotate the api keys"}}
    summary = {"type": "summary", "summary": "s", "leafUuid": "a"}
    assert first_user_request(_write(tmp_path / "c.jsonl", [summary, "{torn", claude])) == (
        "rotate the api keys"
    )
    talos = {"role": "user", "content": "rotate the api keys"}
    system = {"role": "system", "content": "sys"}
    assert first_user_request(_write(tmp_path / "t.jsonl", [system, "{torn", talos])) == ""


def test_format_is_decided_once_per_file(tmp_path: Path) -> None:
    """A Talos file is read with the reference rule only: a Claude-shaped line later in it is
    not a Talos message."""
    lines = [
        {"role": "system", "content": "sys"},
        {"type": "user", "message": {"role": "user", "content": "not a talos message"}},
        {"role": "user", "content": "the talos request"},
    ]
    assert first_user_request(_write(tmp_path / "s.jsonl", lines)) == "the talos request"


def test_unreadable_file_has_no_request(tmp_path: Path) -> None:
    assert first_user_request(tmp_path / "missing.jsonl") == ""


def test_recursive_glob_sorted_by_relative_path(tmp_path: Path) -> None:
    root = tmp_path / "claude"
    shutil.copytree(FIX / "claude", root)
    (root / "top.jsonl").write_text("", encoding="utf-8")
    (root / "notes.txt").write_text("not a session", encoding="utf-8")
    assert [p.name for p in session_files(root)] == ["top.jsonl"]
    rel = [p.relative_to(root).as_posix() for p in session_files(root / "**")]
    assert rel == [
        "-home-ana-blog/c3d4-session.jsonl",
        "-home-ana-shop/0b1c-session.jsonl",
        "-home-ana-shop/7e2f-session.jsonl",
        "top.jsonl",
    ]
    assert session_files(tmp_path / "nowhere" / "**") == []


def test_load_episodes_from_a_codex_tree() -> None:
    nodes = load_episodes(FIX / "codex" / "**", start=3)
    assert [(n.kind, n.text, n.order) for n in nodes] == [
        ("episode", "speed up the csv import: it reads the whole file into memory", 3),
        ("episode", "publish the draft about sourdough starters", 4),
    ]


def test_memory_reads_another_agents_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "talos.toml").write_text(
        f'sessions_dir = "{(FIX / "claude").as_posix()}/**"\n', encoding="utf-8"
    )
    rows = Memory(home).explain("stripe payments module", k=3)
    assert [(r.kind, r.text) for r in rows] == [
        ("episode", "migrate the payments module to the new stripe client")
    ]


def test_cli_sessions_dir_option(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    runner = CliRunner()
    args = ["--home", str(home), "--json", "--sessions-dir", str(FIX / "codex" / "**")]
    # the rollout ran in /home/ana/shop (gone here): project shop's episode (design §3.3)
    args += ["--scope", "global", "--scope", "project:shop"]
    res = runner.invoke(app, ["explain", "csv import memory", *args])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)["data"]["rows"]
    assert [(r["kind"], r["text"]) for r in data] == [
        ("episode", "speed up the csv import: it reads the whole file into memory")
    ]
    res = runner.invoke(app, ["recall", "csv import memory", *args])
    assert res.exit_code == 0, res.output
    picked = json.loads(res.stdout)["data"]["picked"]
    assert [r["key"] for r in picked] == [
        "episode:speed up the csv import: it reads the whole file into memory"
    ]
