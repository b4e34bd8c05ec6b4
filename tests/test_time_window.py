"""An ask's time words narrow what a recall delivers to their window (design §7.3).

Built from the measured failure: "what did I do about the stripe webhook timeouts last week"
brought a November-10 lint episode and a November-18 stripe one beside the December-1 fix; time
words were words. Each route gets one test: the API, the CLI with ``--at``, the hook.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import click.testing
import pytest
import typer

from talos import Memory
from talos.cli import app

runner = click.testing.CliRunner()
COMMAND = typer.main.get_command(app)
TODAY = dt.date(2026, 12, 7)  # a Monday

TIMEOUTS = "fix the stripe webhook timeouts in the billing service"
SIGNATURES = "verify the stripe webhook signatures"
LINT = "lint the billing module with ruff"
CREDS = "rotate the staging database credentials"
FREEZE = "Deploys to eu-west-1 are frozen for the audit"
STANDUP = "Yesterday's standup notes live in the team wiki"


def session(folder: Path, name: str, cwd: Path, day: str, request: str) -> None:
    base = {"sessionId": name, "cwd": str(cwd), "timestamp": f"{day}T10:00:00Z"}
    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": request}},
        {**base, "type": "assistant",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}},
    ]  # fmt: skip
    (folder / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def make(tmp_path: Path, days: dict[str, str]) -> tuple[Path, Path]:
    """A home reading Claude Code sessions of project atlas (``{request: day}``) and facts."""
    repo = tmp_path / "code" / "atlas"
    (repo / ".git").mkdir(parents=True)
    folder = tmp_path / "claude" / "projects" / "-code-atlas"
    folder.mkdir(parents=True)
    for i, (request, day) in enumerate(days.items()):
        session(folder, f"s{i}", repo, day, request)
    home = tmp_path / "home"
    home.mkdir()
    (home / "memory.md").write_text(
        f"- {FREEZE} <!-- user 2026-12-03 from=2026-12-03 until=2026-12-10 -->\n"
        "- The billing service moved to the new stripe account <!-- user 2026-10-20 -->\n"
        f"- {STANDUP}\n",
        encoding="utf-8",
    )
    (home / "talos.toml").write_text(
        f'sessions_dir = ["{(tmp_path / "claude" / "projects").as_posix()}/**"]\n'
        "[hooks]\nserver = false\ntimeout = 30\n",
        encoding="utf-8",
    )
    return home, repo


DAYS = {TIMEOUTS: "2026-12-01", SIGNATURES: "2026-11-18", LINT: "2026-11-10", CREDS: "2026-12-06"}


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    home, _repo = make(tmp_path, DAYS)
    return Memory(home, scopes=["global", "project:atlas"])


def texts(mem: Memory, ask: str) -> list[str]:
    return [r.text for r in mem.recall(ask, at=TODAY, k=10).picked]


def test_a_window_keeps_the_ranked_rows_of_its_days(mem: Memory) -> None:
    assert texts(mem, "what did I do about the stripe webhook timeouts last week") == [TIMEOUTS]
    assert texts(mem, "stripe webhook in November") == [SIGNATURES]
    # the mixed ask ranks nothing over the floor: the week is listed, the fix among its rows
    zh = texts(mem, "上周那个 stripe webhook 超时怎么修的")
    assert TIMEOUTS in zh and set(zh) <= {TIMEOUTS, CREDS, FREEZE}  # last week's only
    # a fact by its validity (from 12-03 until 12-10 meets last week), not the untagged one
    assert texts(mem, "which deploys were frozen last week") == [FREEZE]


def test_an_ask_of_time_words_alone_lists_its_days_newest_first(mem: Memory) -> None:
    # "yesterday" is no query term: the untagged fact that holds the word is not delivered;
    # the freeze is (valid from 12-03 until 12-10), after the session of that day
    got = mem.recall("what did I do yesterday", at=TODAY, k=10)
    assert [r.text for r in got.picked] == [CREDS, FREEZE]
    assert "nothing from" not in got.text
    assert texts(mem, "上周做了什么") == [CREDS, FREEZE, TIMEOUTS]


def test_an_empty_window_falls_back_and_says_so(mem: Memory) -> None:
    got = mem.recall("stripe webhook in August", at=TODAY, k=10)
    assert got.text.split("\n")[1] == (
        "(talos: nothing from in August (2026-08-01 – 2026-08-31) matches; these rows are "
        "from any time)"
    )
    assert {TIMEOUTS, SIGNATURES} <= {r.text for r in got.picked}
    zh = Memory(mem.paths.home, scopes=mem.scopes, lang="zh").recall(
        "八月的 stripe webhook", at=TODAY, k=10
    )  # the note is in the block's language (design §6.7)
    note = "（talos：八月（2026-08-01 – 2026-08-31）没有匹配的记录；以下不限时间）"
    assert zh.text.split("\n")[1] == note


def test_the_cli_counts_from_at(tmp_path: Path) -> None:
    home, _repo = make(tmp_path, DAYS)
    args = ["--home", str(home), "--scope", "global", "--scope", "project:atlas", "--json"]
    res = runner.invoke(COMMAND, ["recall", "what did I do yesterday", "--at", "2026-12-02", *args])
    assert res.exit_code == 0, res.output
    picked = json.loads(res.stdout)["data"]["picked"]
    assert [p["key"] for p in picked] == [f"episode:{TIMEOUTS}"]


def test_a_hook_prompt_about_yesterday_gets_yesterdays_session(tmp_path: Path) -> None:
    today = dt.date.today()
    days = {CREDS: (today - dt.timedelta(days=1)).isoformat(),
            LINT: (today - dt.timedelta(days=9)).isoformat()}  # fmt: skip
    home, repo = make(tmp_path, days)
    event = {"hook_event_name": "UserPromptSubmit", "cwd": str(repo),
             "prompt": "what did we do yesterday in this repo"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "talos", "hook", "claude-code", "--home", str(home)],
        input=json.dumps(event).encode(),
        capture_output=True,
        timeout=120,
        env={**os.environ, "TALOS_SCOPE": ""},
    )
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert CREDS in context and LINT not in context


def test_the_labelled_time_asks() -> None:
    """bench/time_asks.py: 50 asks, English and Chinese, relative and absolute."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import time_asks

    got = time_asks.run()
    assert got["asks"] == 50
    assert got["rate"] >= 0.95, [r for r in got["results"] if not r["ok"]]
