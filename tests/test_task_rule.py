"""The hooks' task rule (talos.sources.tasks, design §9.5): which prompts are worth a recall. A
prompt
names a task with two content words, or one and a question word; continuations and chit-chat
name none. Inputs from the attacker's pass on the budgeted block."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import HOOKS, ZH, example_home, facts, home_of, texts

from talos import Memory
from talos.hooks.context import Responder
from talos.sources.tasks import names_a_task, task_words

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


# -- continuation prompts ----------------------------------------------------------------------


#: Prompts a person types to an agent mid-task: they name no task, so no memory is about them.
CONTINUE = (
    "yes",
    "continue",
    "try again",
    "fix it",
    "run it",
    "now the tests",
    "and the other file?",
)


def test_a_hook_gives_no_context_for_a_continuation_prompt(tmp_path: Path) -> None:
    """The hook answered every prompt: 7 of 28 continuation prompts got context on the
    quickstart home, 4 a whole skill body. Held since a hook asks only a prompt that holds
    two distinct terms (hooks.context.MIN_PROMPT_TERMS); a prompt naming a task still gets
    its block."""
    home = example_home(tmp_path, HOOKS)
    r = Responder(str(home))
    try:
        got = {
            q: r.answer("claude-code", {"hook_event_name": "UserPromptSubmit", "prompt": q})
            for q in CONTINUE
        }
        named = {"hook_event_name": "UserPromptSubmit", "prompt": "upgrade rust dependencies"}
        assert "rust-upgrade" in r.answer("claude-code", named)
    finally:
        r.close()
    assert got == {q: "" for q in CONTINUE}


# -- continuation prompts in Chinese, steering words -------------------------------------------


def prompt(agent: str, home: Path, text: str) -> str:
    """What the hook gives ``agent`` for a UserPromptSubmit of ``text`` (in-process)."""
    r = Responder(str(home))
    try:
        return r.answer(agent, {"hook_event_name": "UserPromptSubmit", "prompt": text})
    finally:
        r.close()


#: The continuation prompts of CONTINUE above, as a Chinese speaker types them:
#: 'fix it', 'run it', 'and the other file?'. Each is one word and a particle or pronoun, but
#: its overlapping bigrams count as two terms (修复 复它; 运行 行它; 有另 另一 个文 文件 件呢).
ZH_CONTINUE = ("修复它", "运行它", "还有另一个文件呢")


def test_a_chinese_continuation_prompt_gets_no_context(tmp_path: Path) -> None:
    """Held since a CJK run counts its words, not its overlapping bigrams
    (hooks.context.task_words)."""
    more = facts(
        "运行测试前先启动数据库", "修复 bug 时先写一个失败的测试", "配置文件放在 ~/.config/app"
    )
    home = home_of(tmp_path, ZH + more, config=HOOKS)
    assert "8080" in prompt("claude-code", home, "测试环境的端口是多少")
    got = {q: prompt("claude-code", home, q) for q in ZH_CONTINUE}
    assert got == {q: "" for q in ZH_CONTINUE}


def test_keep_going_gets_no_context_on_the_quickstart_home(tmp_path: Path) -> None:
    """Held since words that steer the conversation name no task
    (hooks.context.CONVERSATIONAL)."""
    home = example_home(tmp_path, HOOKS)
    got = {q: prompt("claude-code", home, q) for q in ("keep going", "continue please")}
    assert got == {"keep going": "", "continue please": ""}


# -- continuation prompts in other languages ---------------------------------------------------


def context(home: Path, text: str) -> str:
    """The context the hook gives claude-code for ``text`` (``""`` when none)."""
    out = prompt("claude-code", home, text)
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


@pytest.mark.parametrize(
    ("memory", "go_on", "task", "fact"),
    [
        (
            facts("コミットの前にテストを実行してください", "金曜日の本番デプロイは禁止です"),
            "続けてください",
            "テストを実行する方法",
            "テストを実行",
        ),
        (
            facts(
                "Por favor ejecuta los tests antes de cada commit",
                "El despliegue a producción es los viernes",
            ),
            "sigue, por favor",
            "¿cuándo es el despliegue a producción?",
            "viernes",
        ),
        (
            facts(
                "Bitte immer die Tests vor jedem Commit ausführen", "Das Deployment ist freitags"
            ),
            "weiter bitte",
            "wann ist das Deployment",
            "freitags",
        ),
    ],
    ids=["ja", "es", "de"],
)
def test_please_go_on_in_other_languages_recalls_the_fact_that_says_please(
    tmp_path: Path, memory: str, go_on: str, task: str, fact: str
) -> None:
    """'please go on' in Japanese, Spanish and German passes the two-words rule (続け てく
    ださ; sigu favor; weiter bitt) and each home delivers its fact holding 'please' (ください,
    por favor, bitte). Decided: the task rule knows the steering words of the languages talos
    is measured on, English and Chinese (design §4.1); in another language the relevance floor
    decides, and a fact that says 'please' is evidence for a prompt that says it."""
    home = home_of(tmp_path, memory, config=HOOKS)
    assert fact in context(home, task)  # the control: a task in that language is answered
    please = memory.splitlines()[0].removeprefix("- ")  # the fact that says "please"
    assert context(home, go_on).splitlines()[1:] == [f"- [fact] {please}"]


def test_a_short_chinese_task_gets_its_context(tmp_path: Path) -> None:
    home = home_of(
        tmp_path, facts("查日志用 journalctl -u app", "跑测试前先启动数据库"), config=HOOKS
    )
    assert texts(home, "怎么查日志") == ["查日志用 journalctl -u app"]  # recall finds it
    assert "journalctl" in context(home, "怎么查日志")
    assert "启动数据库" in context(home, "怎么跑测试")
