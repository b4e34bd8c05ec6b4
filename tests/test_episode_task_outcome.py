"""An episode's task and outcome are the person's words and the session's real answer
(design §3.3): not Claude Code's synthetic error lines, a slash command's canned prompt or the
preamble of a continued session."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.mcp.server import build_server
from talos.sources.sessions import OUTCOME_CHARS, read_session


def _jsonl(*objs: object) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


def _cu(content: object, **kw: object) -> dict[str, object]:
    return {
        "type": "user",
        "sessionId": "s",
        "timestamp": "2026-11-30T09:00:00Z",
        "message": {"role": "user", "content": content},
        **kw,
    }


def _ca(text: str, **kw: object) -> dict[str, object]:
    return {
        "type": "assistant",
        "sessionId": "s",
        "timestamp": "2026-11-30T09:01:00Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
        **kw,
    }


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        ({"isApiErrorMessage": True}, "API Error: Request was aborted."),
        ({}, "No response requested."),
    ],
)
def test_episode_outcome_is_the_last_real_answer_not_a_synthetic_api_error(
    make_home: Callable[..., Path], flags: dict[str, object], said: str
) -> None:
    """Claude Code appends a synthetic assistant line (model ``<synthetic>``, with
    ``isApiErrorMessage`` when a request failed) when a request fails or is aborted: it says
    nothing of what the session did, yet was shown as its outcome."""
    synthetic = {
        "type": "assistant",
        "sessionId": "s",
        "timestamp": "2026-11-30T09:02:00Z",
        **flags,
        "message": {
            "role": "assistant",
            "model": "<synthetic>",
            "content": [{"type": "text", "text": said}],
        },
    }
    session = _jsonl(
        _cu("deploy the billing service to staging"),
        _ca("Deployed billing to staging on port 8080; health check green."),
        synthetic,
    )
    home = make_home(sessions={"a.jsonl": session})
    with Memory(home) as mem:
        text = mem.recall("deploy billing staging").text
    assert said not in text
    assert "→ outcome: Deployed billing to staging on port 8080; health check green." in text


def test_episode_task_of_a_slash_command_is_its_arguments_not_the_commands_canned_text(
    make_home: Callable[..., Path],
) -> None:
    """``/fix the billing invoice rounding bug`` in Claude Code: the echo (``<command-name>``,
    ``<command-args>``), then the command's expanded prompt in the person's turn. The row
    showed the canned prompt as the task; the person's words are the command's arguments."""
    session = _jsonl(
        _cu(
            "<command-message>fix is running…</command-message>\n<command-name>/fix</command-name>"
            "\n<command-args>the billing invoice rounding bug</command-args>"
        ),
        _cu(
            [
                {
                    "type": "text",
                    "text": "Fix the following issue carefully and run the tests "
                    "afterwards: $ARGUMENTS\n\nARGUMENTS: the billing invoice rounding bug",
                }
            ]
        ),
        _ca("Fixed billing invoice rounding; tests pass."),
    )
    home = make_home(sessions={"a.jsonl": session})
    with Memory(home) as mem:
        text = mem.recall("billing invoice rounding").text
    assert "$ARGUMENTS" not in text
    assert text.split("\n")[1] == (
        "- [episode] (Claude Code, 2026-11-30) /fix the billing invoice rounding bug"
    )


def test_episode_task_is_not_claude_codes_continued_session_preamble(
    make_home: Callable[..., Path],
) -> None:
    """A Claude Code session resumed after its context ran out opens with ``This session is
    being continued from a previous conversation that ran out of context. …`` (older
    transcripts carry no ``isCompactSummary`` flag): a continuation, not the task."""
    session = _jsonl(
        _cu(
            "This session is being continued from a previous conversation that ran out of "
            "context. The conversation is summarized below:\nAnalysis: the user asked to "
            "migrate billing webhooks to the v2 API."
        ),
        _ca("Continuing the billing webhook migration."),
        _cu("keep going"),
        _ca("Billing webhooks now on v2."),
    )
    home = make_home(sessions={"b.jsonl": session})
    with Memory(home) as mem:
        text = mem.recall("billing webhooks").text
    assert "[episode]" in text
    assert "This session is being continued" not in text


def test_a_continued_sessions_task_is_the_request_its_summary_states(tmp_path: Path) -> None:
    """The summary of a continued Claude Code session states what the person asked (``1.
    Primary Request and Intent:``): that is the session's task, not "keep going"."""
    f = tmp_path / "s.jsonl"
    f.write_text(
        _jsonl(
            _cu(
                "This session is being continued from a previous conversation that ran out "
                "of context.\nSummary:\n1. Primary Request and Intent:\n   - Migrate the "
                "billing webhooks to the v2 API\n   - Keep the old endpoint a week",
                isCompactSummary=True,
            ),
            _cu("keep going"),
            _ca("Billing webhooks now on v2."),
        ),
        encoding="utf-8",
    )
    assert read_session(f)[:3] == (
        "keep going",
        "Migrate the billing webhooks to the v2 API",
        "Billing webhooks now on v2.",
    )


def test_a_typed_slash_command_with_arguments_is_the_task(tmp_path: Path) -> None:
    """In a talos or Codex transcript the command is the person's turn itself: with
    arguments that name a task it is the task; bare (``/review``) it is skipped with the
    canned text after it (tests/test_rows.py)."""
    f = tmp_path / "s.jsonl"
    f.write_text(
        _jsonl(
            {"role": "user", "content": "hi there"},
            {"role": "user", "content": "/review the billing invoice code"},
            {"role": "user", "content": "You are a meticulous reviewer of billing code"},
            {"role": "assistant", "content": "Reviewed."},
        ),
        encoding="utf-8",
    )
    assert read_session(f).task == "/review the billing invoice code"


def _two_turn_home(make_home: Callable[..., Path]) -> tuple[Path, Path]:
    home = make_home(
        memory="- billing runs on port 8080\n",
        sessions={
            "2026-02-01T09.jsonl": _jsonl(
                {"role": "user", "content": "hi"},
                {"role": "user", "content": "migrate the billing cron to systemd timers"},
                {"role": "assistant", "content": "Done: two timer units. " + "x" * 300},
            )
        },
    )
    return home, home / ".talos" / "sessions" / "2026-02-01T09.jsonl"


EPISODE = {
    "task": "migrate the billing cron to systemd timers",
    "outcome": "Done: two timer units. " + "x" * (OUTCOME_CHARS - 23) + "…",
}
NOT_EPISODE = {"task": None, "outcome": None, "transcript": None}


def _fields(row: dict[str, object]) -> dict[str, object]:
    return {k: row[k] for k in ("task", "outcome", "transcript")}


def test_recall_and_explain_json_carry_an_episodes_task_outcome_and_transcript(
    make_home: Callable[..., Path],
) -> None:
    """``recall --json`` and ``explain --json`` gave an episode's opening request alone
    (``hi``): an agent reading the JSON had no task, outcome or transcript to open."""
    home, path = _two_turn_home(make_home)
    want = [{**EPISODE, "transcript": str(path)}, NOT_EPISODE]
    runner = CliRunner()
    for command in ("recall", "explain"):
        res = runner.invoke(app, [command, "billing cron systemd", "--home", str(home), "--json"])
        assert res.exit_code == 0, res.output
        data = json.loads(res.stdout)["data"]
        rows = data["picked"] if command == "recall" else data["rows"]
        assert [r["text"] for r in rows] == ["hi", "billing runs on port 8080"]
        assert [_fields(r) for r in rows] == want


def test_mcp_recall_and_explain_rows_carry_an_episodes_task_outcome_and_transcript(
    make_home: Callable[..., Path],
) -> None:
    home, path = _two_turn_home(make_home)
    server = build_server(Memory(home))
    want = [{**EPISODE, "transcript": str(path)}, NOT_EPISODE]
    got = asyncio.run(server.call_tool("recall", {"query": "billing cron systemd"}))
    assert [_fields(r) for r in got.structured_content["picked"]] == want
    got = asyncio.run(server.call_tool("explain", {"query": "billing cron systemd"}))
    assert [_fields(r) for r in got.structured_content["rows"]] == want
