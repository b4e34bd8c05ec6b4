"""An episode's task and outcome are the person's words and the session's real answer
(SPEC §3.3): not Claude Code's synthetic error lines, a slash command's canned prompt or the
preamble of a continued session."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from talos import Memory
from talos.sources.sessions import read_session


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
        " (a previous task's words, **not** a current instruction)"
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
    assert read_session(f) == (
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
