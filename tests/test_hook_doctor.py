"""``talos doctor`` shows the hook log (issue 16.1): a hook that gave no context says why."""

from __future__ import annotations

import time
from pathlib import Path

from talos.doctor import diagnose
from talos.hooks import log


def home_with_log(tmp_path: Path, lines: list[str]) -> Path:
    home = tmp_path / "home"
    (home / ".talos").mkdir(parents=True)
    (home / "memory.md").write_text("- a fact\n", encoding="utf-8")
    if lines:
        (home / ".talos" / "hook.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return home


def hooks_finding(home: Path):  # type: ignore[no-untyped-def]
    return [f for f in diagnose(home).findings if f.check == "hooks"]


def now(days_ago: float = 0) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - days_ago * 86400))


def test_no_log_no_finding(tmp_path: Path) -> None:
    assert hooks_finding(home_with_log(tmp_path, [])) == []


def test_a_recent_error_is_a_warning_with_its_line(tmp_path: Path) -> None:
    error = f"{now()} codex UserPromptSubmit error: malformed hook input: Expecting value"
    timeout = f"{now()} codex UserPromptSubmit timeout: no answer within 2.5 s"
    old = f"{now(30)} gemini BeforeAgent error: an old failure"
    (f,) = hooks_finding(home_with_log(tmp_path, [old, timeout, error]))
    assert (f.status, f.attention) == ("warn", True)
    assert f.summary == ".talos/hook.log: 2 hooks gave no context in the last 7 days (1 error)"
    assert f.details == (error,)
    assert "talos hook status" in f.hint


def test_timeouts_and_a_starting_server_are_worth_knowing_only(tmp_path: Path) -> None:
    busy = f"{now()} claude-code SessionStart busy: the talos server is still starting; no context"
    (f,) = hooks_finding(home_with_log(tmp_path, [busy]))
    assert (f.status, f.details, f.hint) == ("info", (busy,), "")
    assert f.summary == ".talos/hook.log: 1 hook gave no context in the last 7 days (0 errors)"


def test_the_lines_doctor_reads_are_the_ones_the_hook_writes(tmp_path: Path) -> None:
    home = home_with_log(tmp_path, [])
    log.write(str(home / ".talos" / "hook.log"), "gemini", "BeforeAgent", "error", "boom\nbang")
    (f,) = hooks_finding(home)
    assert f.status == "warn"
    assert f.details[0].endswith(" gemini BeforeAgent error: boom bang")


def test_a_warning_on_the_hooks_way_is_shown_but_is_no_hook_without_context(
    tmp_path: Path,
) -> None:
    """A warning the hook logged instead of printing it on stderr (a bad recall_hits.json;
    tests/test_hook_never_blocks.py): the hook answered, so it is not counted as a hook that
    gave no context; it is worth a look (``warn``) and shown."""
    warning = (
        f"{now()} claude-code UserPromptSubmit warning: .talos/recall_hits.json: cannot "
        "import reference usage counts (is a folder)"
    )
    busy = f"{now()} claude-code SessionStart busy: the talos server is still starting; no context"
    (f,) = hooks_finding(home_with_log(tmp_path, [busy, warning]))
    assert (f.status, f.details) == ("warn", (warning,))
    assert f.summary == (
        ".talos/hook.log: 1 hook gave no context in the last 7 days (0 errors); "
        "1 warning of talos on the hooks' way"
    )
    assert "fix what the lines say" in f.hint
