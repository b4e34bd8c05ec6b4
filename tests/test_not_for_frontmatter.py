"""design §3.2: a skill's "not for" clause is removed from its matching text *before* anything
else reads that text — also when the clause is a frontmatter line of its own.

Failing input (the reference project's not-for test, run against ``talos.compat``): a
description continued on the next line, ``不用于:前端渲染 页面布局``, is a frontmatter line
whose key is ``不用于``. The default model read the frontmatter as words first (key names
dropped: :func:`talos.sources.skills.frontmatter_as_text`) and removed the clauses after, so
the clause had lost its marker and ``前端渲染 页面布局`` became words of the skill:
"帮我做前端渲染的页面布局" ranked it at 2.06. The same for ``not for: ...``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from talos.memory import Memory
from talos.model import Node
from talos.ranking.evidence import matching_text

CSV_MERGE = "用于:把几个 csv 合并成一张表"


def skill(clause_line: str) -> str:
    body = "把多个 csv 按主键合并。\n"
    return f"---\nname: merge\ndescription: {CSV_MERGE}\n{clause_line}\n---\n{body}"


@pytest.mark.parametrize(
    ("clause_line", "asked", "gone"),
    [
        ("不用于:前端渲染 页面布局", "帮我做前端渲染的页面布局", "前端渲染"),
        ("不用于：前端渲染 页面布局", "帮我做前端渲染的页面布局", "前端渲染"),
        ("  不用于 前端渲染 页面布局", "帮我做前端渲染的页面布局", "前端渲染"),
        ("not for: frontend rendering", "help me with frontend rendering", "frontend"),
        ("Not For: frontend rendering", "help me with frontend rendering", "frontend"),
    ],
)
def test_a_clause_on_its_own_frontmatter_line_does_not_pull_the_skill_in(
    tmp_path: Path, clause_line: str, asked: str, gone: str
) -> None:
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "merge.md").write_text(skill(clause_line), encoding="utf-8")
    (tmp_path / "talos.toml").write_text('model = "evidence"\n', encoding="utf-8")
    with Memory(tmp_path) as mem:
        assert mem.explain(asked) == []
        assert mem.recall(asked).text == ""
        assert [r.kind for r in mem.explain("把几个 csv 合并成一张表")] == ["skill"]
        node = next(n for n in mem.nodes() if n.kind == "skill")
    assert gone not in matching_text(node)
    assert "csv" in matching_text(node)  # the rest of the frontmatter is still read


def test_an_underscore_key_is_no_clause() -> None:
    """``field_不用于`` is one word (design §3.2): its line's value stays matchable."""
    raw = "---\nname: m\nfield_不用于: 生产环境\n---\nbody\n"
    node = Node(kind="skill", text="m", keywords=frozenset({"m"}), body=raw, path="m.md")
    assert "生产环境" in matching_text(node)
