"""Whether a request names a task: the rule the hooks ask before recalling for a prompt, and
the rule that tells a session's real task from a continuation (design §3.3, §9.5).

A hook fires on every prompt, and the ones a person types mid-task name no task ("fix it",
"keep going", "继续"); a session that opens with one of them was about what came next. One
rule serves both: :func:`names_a_task`.
"""

from __future__ import annotations

import re
import unicodedata

from talos.ranking.analyzer import CJK_RUN, analyze, cjk_stop_words

__all__ = [
    "CONVERSATIONAL",
    "CUT_CHARACTERS",
    "MIN_PROMPT_TERMS",
    "QUESTION_WORDS",
    "asks",
    "names_a_task",
    "task_words",
]

#: Fewest distinct words a prompt needs to be asked at all (:func:`task_words`): a hook fires
#: on every prompt, and the ones a person types mid-task name no task ("fix it", "try again",
#: "now the tests", "and the other file?" gave 7 of 28 such prompts context on the example
#: home, 4 a whole skill body). ``talos recall`` has no such rule: one word asked on purpose
#: is a query.
MIN_PROMPT_TERMS = 2

#: Words that steer the conversation and name no task (stems of the analyzer, and CJK words):
#: a prompt made of them and stop words ("keep going", "continue please", "go ahead", "接着
#: 做") asks the agent to go on with what it was doing; "keep going" held two terms (keep, go)
#: and the quickstart home delivered a skill for it (the attacker's pass).
CONVERSATIONAL = frozenset(
    (
        "continu", "keep", "go", "carri", "proceed", "resum", "next", "pleas", "ahead",
        "ok", "okay", "yes", "yeah", "yep", "sure", "alright", "right", "fine", "good",
        "great", "cool", "thank", "thx", "nice", "awesom", "perfect", "hello", "hi", "hey",
        "bye",
        "继续", "接着", "然后", "谢谢", "好的", "再来",
    )
)  # fmt: skip


#: The single characters that cut a CJK run into words when words are counted: the
#: reference's stop characters (design §4) and function characters that are never half of a
#: content word. The analyzer's one-character stop list also holds content characters (用 管
#: 则 打 自 归: 用户 管理 正则 打包 自动 递归), and cutting at them left "如何实现用户管理" (how
#: do I implement user management) one word and "怎么用正则" none (the attacker's pass).
CUT_CHARACTERS = frozenset(
    "的了和是在我你它也就都"  # design §4's
    "吗呢吧啊呀嘛哦啦哈嗯么"  # sentence particles
    "一个这那他她您咱哪啥给把被让另还再又"
)  # fmt: skip

#: A question word makes a prompt of one content word a task: "how do I deploy", "什么是递归"
#: (what is recursion), "怎么部署" (how do I deploy) asked something and got no context;
#: "fix it", "now the tests" (no question word) still name no task.
QUESTION_WORDS = frozenset(
    ("how", "what", "why", "where", "when", "which", "who", "怎么", "如何", "什么", "为什么",
     "哪", "多少", "怎样")
)  # fmt: skip


def task_words(prompt: str) -> set[str]:
    """The distinct words of ``prompt`` that may name a task: its analyzer terms
    (:func:`talos.ranking.analyzer.analyze`) that are not :data:`CONVERSATIONAL`, with a CJK run
    counted by its words, not its overlapping bigrams (a word of two characters is one:
    "修复它" (fix it) gave the terms 修复 and 复它, so it passed the two-terms rule). A CJK
    run is cut at its stop words (:func:`talos.ranking.analyzer.cjk_stop_words`: 它, 的, 继续 …) and
    at the conversational words; each stretch left of ``n`` characters holds ``ceil(n / 2)``
    words, its non-overlapping bigrams and, for an odd ``n`` above 2, its last bigram ("查日志"
    in "怎么查日志", how do I check the logs, is two: it gave one, and the task no context).
    The stretches of a single character, no word alone, count together, ``ceil(n / 2)`` for
    ``n`` of them, in pairs (``改`` … ``书`` is one word ``改书``) and the odd one out as a
    word of its own when the prompt holds another word: "有什么好的书可以推荐给我吗" (can you
    recommend a good book?), cut at 有, 什么, 好的, 可以, 给, 我, 吗, left 书 and 推荐 and
    was counted one word, so this ordinary request got no context while ``talos recall``
    found rows (tests/test_hooks.py). A lone character stays no task: "改一下" (change it).

    >>> sorted(task_words("修复它")), sorted(task_words("keep going")), len(task_words("部署区域"))
    (['修复'], [], 2)
    """
    text = unicodedata.normalize("NFKC", prompt).lower()
    got = {t for t in analyze(CJK_RUN.sub(" ", text)) if t not in CONVERSATIONAL}
    stops = {w for w in cjk_stop_words() if len(w) == 2} | CUT_CHARACTERS | CONVERSATIONAL
    singles = ""  # the one-character stretches of every run, in order
    for run in CJK_RUN.findall(text):
        stretch, i = "", 0
        while i <= len(run):
            cut = 2 if run[i : i + 2] in stops else 1 if i == len(run) or run[i] in stops else 0
            if cut:
                if len(stretch) == 1:
                    singles += stretch
                got.update(stretch[j : j + 2] for j in range(0, len(stretch) - 1, 2))
                if len(stretch) > 2 and len(stretch) % 2:
                    got.add(stretch[-2:])  # its last character is part of a word too
                stretch, i = "", i + cut
            else:
                stretch, i = stretch + run[i], i + 1
    got.update(singles[j : j + 2] for j in range(0, len(singles) - 1, 2))
    if len(singles) % 2 and got:
        got.add(singles[-1])  # the odd one out: ceil(n / 2) words, beside another word
    return got


def asks(prompt: str) -> bool:
    """Whether ``prompt`` holds a :data:`QUESTION_WORDS` word (an English word, or a CJK one
    anywhere in the text)."""
    text = unicodedata.normalize("NFKC", prompt).lower()
    words = set(re.findall(r"[a-z]+", text))
    return any(w in words if w.isascii() else w in text for w in QUESTION_WORDS)


def names_a_task(prompt: str) -> bool:
    """Whether ``prompt`` holds :data:`MIN_PROMPT_TERMS` distinct :func:`task_words`, or one
    and a question word (:func:`asks`): a hook's prompt worth a recall (design §9.5), a
    session's opening that is its task (design §3.3)."""
    n = len(task_words(prompt))
    return n >= MIN_PROMPT_TERMS or (n == 1 and asks(prompt))
