"""Attacks on this session's relevance, headings, hook and patch work (lane attack, session 20),
with the default ``evidence`` model: setext headings beside frontmatter and expiry, the
analyzer on names a person writes, the hook's task rule in other languages, a long-lived
Memory against a fresh one after edits. Each test is one input found to break a promise
(issue 15, SPEC §3.1, the hook's rule, COMMON's "stored text is data"), written as the
behaviour promised; those failing today are marked ``xfail(strict=True)`` with what happens
instead, so the lead removes the mark with the fix. None repeats a case of
tests/test_attack15.py or tests/test_attack_final.py; writes, doctor and dead are another
attacker's (tests/test_attack_s20a.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_attack15 import HOOKS, facts, home_of
from test_attack_final import block_rows, prompt

from talos.memory import Memory

#: Two facts every home below holds beside the one under attack (a person's small home).
BASE = facts("The billing service deploys on fridays", "I use vim for editing")


def labels(home: Path) -> list[tuple[str, tuple[str, ...]]]:
    """Each fact of ``home`` with the heading path above it."""
    with Memory(home, model="evidence") as mem:
        return [(n.text, n.headings) for n in mem.nodes()]


# -- 1. setext headings ------------------------------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="a setext heading tagged until=2020-01-01 still labels the fact beneath it "
    "('- [fact] (Release freeze) Deploy region …') and 'release freeze' recalls that fact; "
    "the same heading written '## Release freeze <!-- … -->' labels and matches nothing",
)
def test_an_expired_setext_heading_labels_and_matches_nothing(tmp_path: Path) -> None:
    """An expired heading labels nothing (kept_sources.SourceState.out_of_window), in either
    form."""
    tag = "<!-- user 2026-01-01 until=2020-01-01 -->"
    rows = "- Deploy region is eu-west-1\n"
    atx = home_of(tmp_path, f"# Notes\n## Release freeze {tag}\n" + rows, name="atx")
    assert block_rows(atx, "release freeze") == []  # the control: held for ATX
    assert block_rows(atx, "deploy region") == ["- [fact] Deploy region is eu-west-1"]
    setext = home_of(tmp_path, f"# Notes\nRelease freeze {tag}\n---\n" + rows, name="setext")
    assert block_rows(setext, "release freeze") == []
    assert block_rows(setext, "deploy region") == ["- [fact] Deploy region is eu-west-1"]


@pytest.mark.xfail(
    strict=True,
    reason="a memory.md opening with YAML frontmatter (---, title:, tags:, ---) reads as a "
    "thematic break, a fact 'title: notes' and a setext heading 'tags: ops' that labels every "
    "fact of the file ('- [fact] (tags: ops) Deploy region …'); 'title notes' recalls the key",
)
def test_frontmatter_at_the_top_of_memory_is_neither_fact_nor_heading(tmp_path: Path) -> None:
    """Notes apps write a frontmatter block at a markdown file's top, and every viewer shows it
    as metadata, not as a heading; talos reads skills' frontmatter the same way (SPEC §3.2)."""
    home = home_of(tmp_path, "---\ntitle: notes\ntags: ops\n---\n- Deploy region is eu-west-1\n")
    assert labels(home) == [("Deploy region is eu-west-1", ())]
    assert block_rows(home, "deploy region") == ["- [fact] Deploy region is eu-west-1"]
    assert block_rows(home, "title notes") == []


# -- 2. the analyzer on words a person writes ------------------------------------------------


def texts(home: Path, query: str) -> list[str]:
    with Memory(home, model="evidence") as mem:
        return [r.text for r in mem.recall(query).picked]


@pytest.mark.xfail(
    strict=True,
    reason="'İstanbul' analyzes to 'stanbul' (str.lower() gives i + U+0307, and the word is "
    "split at the combining dot): 'istanbul' recalls nothing of 'Our second office is in "
    "İstanbul', nor 'İstanbul' of '… in Istanbul'",
)
def test_a_dotted_capital_i_keeps_its_word(tmp_path: Path) -> None:
    dotted = home_of(tmp_path, facts("Our second office is in İstanbul") + BASE, name="dotted")
    plain = home_of(tmp_path, facts("Our second office is in Istanbul") + BASE, name="plain")
    assert texts(dotted, "istanbul") == ["Our second office is in İstanbul"]
    assert texts(plain, "İstanbul") == ["Our second office is in Istanbul"]


@pytest.mark.xfail(
    strict=True,
    reason="'c++', 'C#' and 'F#' analyze to no term (one letter, its sign dropped): the "
    "one-word queries 'c++' and 'c#' recall nothing of the facts naming the language",
)
def test_a_language_named_with_signs_is_a_term(tmp_path: Path) -> None:
    home = home_of(
        tmp_path, facts("The engine is written in C++", "The build tools are in C#") + BASE
    )
    assert texts(home, "c++") == ["The engine is written in C++"]
    assert texts(home, "C#") == ["The build tools are in C#"]


@pytest.mark.xfail(
    strict=True,
    reason="a hyphen splits a word into two terms: 'Wi-Fi' is wi + fi, 'e-mail' mail, so "
    "'wifi' recalls nothing of 'The Wi-Fi password is on the fridge', nor 'email' of 'Send "
    "invoices by e-mail'",
)
def test_a_hyphenated_word_finds_its_closed_spelling(tmp_path: Path) -> None:
    home = home_of(
        tmp_path,
        facts("The Wi-Fi password is on the fridge", "Send invoices by e-mail") + BASE,
    )
    assert texts(home, "wifi") == ["The Wi-Fi password is on the fridge"]
    assert texts(home, "email") == ["Send invoices by e-mail"]


@pytest.mark.xfail(
    strict=True,
    reason="the analyzer lower-cases and does not case-fold: 'Hauptstraße' stays straße, "
    "'hauptstrasse' is hauptstrass, and the query recalls nothing",
)
def test_sharp_s_folds_to_ss(tmp_path: Path) -> None:
    home = home_of(tmp_path, facts("Our office is on Hauptstraße 5") + BASE)
    assert texts(home, "hauptstrasse") == ["Our office is on Hauptstraße 5"]
    assert texts(home, "Hauptstraße") == ["Our office is on Hauptstraße 5"]


# -- 3. the hook's task rule -----------------------------------------------------------------


def context(home: Path, text: str) -> str:
    """The context the hook gives claude-code for ``text`` (``""`` when none)."""
    out = prompt("claude-code", home, text)
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


@pytest.mark.xfail(
    strict=True,
    reason="'please go on' in Japanese, Spanish and German passes the two-words rule "
    "(続け てく ださ; sigu favor; weiter bitt) and each home delivers its fact holding "
    "'please' (ください, por favor, bitte)",
)
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
def test_please_go_on_in_other_languages_gets_no_context(
    tmp_path: Path, memory: str, go_on: str, task: str, fact: str
) -> None:
    home = home_of(tmp_path, memory, config=HOOKS)
    assert fact in context(home, task)  # the control: a task in that language is answered
    assert context(home, go_on) == ""


def test_a_short_chinese_task_gets_its_context(tmp_path: Path) -> None:
    home = home_of(
        tmp_path, facts("查日志用 journalctl -u app", "跑测试前先启动数据库"), config=HOOKS
    )
    assert texts(home, "怎么查日志") == ["查日志用 journalctl -u app"]  # recall finds it
    assert "journalctl" in context(home, "怎么查日志")
    assert "启动数据库" in context(home, "怎么跑测试")
