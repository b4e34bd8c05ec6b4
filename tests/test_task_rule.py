"""The hooks' task rule (talos.tasks, SPEC §9.5): which prompts are worth a recall. A prompt
names a task with two content words, or one and a question word; continuations and chit-chat
name none. Inputs from the attacker's pass on the budgeted block."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from talos import Memory
from talos.hooks.context import Responder
from talos.tasks import names_a_task, task_words

ZH_MEMORY = (
    "- 用户管理模块用 RBAC 实现,角色表在 auth 库\n"
    "- 正则表达式统一用 re2 语法,不要用回溯\n"
    "- 自动打包用 GitHub Actions 的 release 工作流\n"
)


def hook(home: Path, prompt: str) -> str:
    r = Responder(str(home))
    try:
        out = r.answer("claude-code", {"hook_event_name": "UserPromptSubmit", "prompt": prompt})
    finally:
        r.close()
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


@pytest.mark.parametrize(
    ("prompt", "words"),
    [
        ("如何实现用户管理", {"用户", "管理"}),  # how do I implement user management
        ("怎么用正则", {"用正", "正则"}),  # how do I use regex
        ("实现自动打包", {"自动", "打包"}),  # implement automatic packaging
    ],
)
def test_an_ordinary_chinese_request_gets_the_context_talos_recall_finds(
    make_home: Callable[..., Path], prompt: str, words: set[str]
) -> None:
    """The analyzer's one-character stop list holds content characters (用 管 则 自 打), and
    cutting a run at them left "如何实现用户管理" one word (户理) and "怎么用正则" none, so the
    hook gave nothing while ``talos recall`` delivered the fact (tasks.CUT_CHARACTERS)."""
    assert task_words(prompt) == words
    home = make_home(memory=ZH_MEMORY)
    with Memory(home) as mem:
        assert mem.recall(prompt).picked
    assert hook(home, prompt) != ""


@pytest.mark.parametrize(
    "prompt", ["how do I deploy", "怎么部署", "什么是递归", "where are the logs"]
)
def test_a_question_of_one_content_word_names_a_task(prompt: str) -> None:
    assert len(task_words(prompt)) == 1
    assert names_a_task(prompt)


@pytest.mark.parametrize(
    "prompt",
    ["fix it", "now the tests", "try again", "nice work!", "have a nice day", "great job",
     "thanks", "keep going", "继续", "好的", "谢谢", "修复它", "改一下", "hi there"],
)  # fmt: skip
def test_continuations_and_chit_chat_name_no_task(prompt: str) -> None:
    assert not names_a_task(prompt)


def test_chit_chat_gets_no_hook_context(make_home: Callable[..., Path]) -> None:
    """ "nice work!" (nice, work) and "have a nice day" (nice, day) held two words: the hook
    delivered "My work laptop is a ThinkPad, nice keyboard" and the weather fact."""
    home = make_home(
        memory="- My work laptop is a ThinkPad, nice keyboard\n"
        "- Weather station data arrives every day at 6am\n"
    )
    for prompt in ("nice work!", "have a nice day"):
        assert hook(home, prompt) == ""
