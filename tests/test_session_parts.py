"""A long session shows the part the ask matched (design §3.3, talos/sources/session_parts.py).

The measured failure: a session that fixed lint, then added stripe webhook retries, then
updated the changelog was one row, "fix the lint errors …" with the changelog's outcome; an ask
about the webhook retries did not find it (they were in neither), and an ask about the
changelog showed it under the lint task.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from talos import Memory
from talos.sources.session_parts import MAX_PARTS, decode, encode
from talos.sources.sessions import episode_node

LINT = ("fix the lint errors in the billing module", "Lint is clean: 14 fixes in billing.")
RETRIES = ("add retries to the stripe webhook handler", "Webhook retries use backoff, 3 tries.")
CHANGELOG = ("update the changelog for the 4.2 release", "Changelog has the 4.2 entries.")


def line(role: str, text: str) -> str:
    content = text if role == "user" else [{"type": "text", "text": text}]
    message = {"role": role, "content": content}
    return json.dumps({"type": role, "sessionId": "s", "message": message})


def transcript(path: Path, turns: list[tuple[str, str]], extra: list[str] | None = None) -> Path:
    """A Claude Code transcript of ``turns``; ``extra`` lines go between the first request
    and its answer."""
    lines = []
    for i, (ask, said) in enumerate(turns):
        lines += [line("user", ask), *(extra if i == 0 and extra else []), line("assistant", said)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    extra = [line("assistant", "Fixed the first ten."), line("user", "keep going"),
             line("user", "/compact")]  # fmt: skip
    transcript(tmp_path / "cc" / "-billing" / "s1.jsonl", [LINT, RETRIES, CHANGELOG], extra)
    transcript(
        tmp_path / "cc" / "-other" / "s2.jsonl",
        [("plan the team offsite in march", "Offsite booked for the 12th.")],
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "talos.toml").write_text(f'sessions_dir = ["{(tmp_path / "cc").as_posix()}/**"]\n')
    return home


def test_a_session_keeps_each_request_that_names_a_task_with_its_answer(home: Path) -> None:
    path = home.parent / "cc" / "-billing" / "s1.jsonl"
    node = episode_node(path)
    assert node is not None
    assert decode(node.parts) == [LINT, RETRIES, CHANGELOG]  # not "keep going", not /compact
    single = episode_node(home.parent / "cc" / "-other" / "s2.jsonl")
    assert single is not None and single.parts == ""


@pytest.mark.parametrize("index", [True, False])
def test_the_row_shows_the_part_the_ask_matched(home: Path, index: bool) -> None:
    mem = Memory(home, index=index)
    got = mem.recall("stripe webhook retries", k=3)
    rows = [r for r in got.picked if r.kind == "episode"]
    assert [(r.node.task, r.node.outcome) for r in rows] == [RETRIES]
    assert f"- [episode] (Claude Code) {RETRIES[0]}\n" in got.text
    assert f"→ outcome: {RETRIES[1]}" in got.text
    # the part about the changelog, not the lint task with the changelog's outcome
    row = next(r for r in mem.recall("changelog for the release", k=3).picked)
    assert (row.node.task, row.node.outcome) == CHANGELOG
    # the session's own task when the ask matches it
    row = next(r for r in mem.recall("lint errors billing module", k=3).picked)
    assert (row.node.task or row.node.text, row.node.outcome) == (LINT[0], CHANGELOG[1])


def test_a_long_session_keeps_its_first_and_last_parts() -> None:
    parts = [(f"task number {i} of the long session", f"done {i}") for i in range(12)]
    kept = decode(encode(parts))
    assert len(kept) == MAX_PARTS
    assert kept == parts[:4] + parts[8:]
