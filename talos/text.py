"""Text rules shared by every route: keywords (SPEC §4) and the not-for clause (SPEC §3.2).

There is exactly one implementation of each rule here; readers, the graph, the benchmarks and
the compat layer all import it, so a rule can never be fixed on one route and missed on another.
"""

from __future__ import annotations

import re

__all__ = [
    "MATCH_MAX",
    "STOPWORDS",
    "drop_not_for",
    "fold_whitespace",
    "keywords",
    "matching_keywords",
]

#: Stopwords removed from every keyword set (SPEC §4). CJK entries can only ever match as a
#: single-character run (的) or as a bigram (一个); English ones shorter than 2 characters can
#: never be keywords anyway but are listed to mirror the specification.
STOPWORDS = frozenset(
    [
        *("的", "了", "和", "是", "在", "我", "你", "它", "也", "就", "都", "一个"),
        *("the", "a", "an", "and", "or", "to", "of", "is", "it"),
    ]
)

#: Only the first MATCH_MAX characters of a node's source text take part in matching: that is
#: exactly what a skill body delivers (SPEC §3.2), so a long skill cannot buy rank with text
#: that is never shown.
MATCH_MAX = 1200

_WORD = re.compile(r"[a-z0-9]{2,}")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")

# A "not for" clause: starts at a line start or right after a non-word character (`\W` is
# Unicode-aware, so all ASCII/full-width punctuation and whitespace, but not `_` and not CJK),
# then optional spaces/tabs, then 不用于 with an optional colon, or English `not for:` (colon
# required, any case — plain prose like "not for long" must stay matchable), to end of line.
_NOT_FOR = re.compile(r"(?:^|\W)[ \t]*(?:不用于[:：]?|(?i:not for)[:：])[^\n]*", re.MULTILINE)
_WS = re.compile(r"\s+")


def keywords(text: str | None) -> set[str]:
    """Return the keyword set of ``text`` (SPEC §4).

    Lower-cases the text; every run of ``[a-z0-9]`` of length >= 2 is a keyword; every run of
    CJK ideographs (U+4E00–U+9FFF) yields its overlapping character bigrams, or the character
    itself for a run of one; then :data:`STOPWORDS` are removed.

    Args:
        text: any string (``None`` is treated as empty).

    Returns:
        A new ``set`` of keyword strings (empty for empty or keyword-less text).
    """
    low = (text or "").lower()
    kw = set(_WORD.findall(low))
    for run in _CJK_RUN.findall(low):
        if len(run) == 1:
            kw.add(run)
        else:
            kw.update(run[i : i + 2] for i in range(len(run) - 1))
    kw -= STOPWORDS
    return kw


def drop_not_for(text: str) -> str:
    """Remove "not for" clauses (``不用于…`` / ``not for: …``) from a matching text (SPEC §3.2).

    A clause that says "don't use me for X" must not make its node match X: measured in the
    reference, a skill described ``用于…;不用于:前端渲染`` scored 0.55 for the query 前端渲染
    until this rule existed (pinned by the golden case ``前端渲染`` and ``tests/test_text.py``).

    Args:
        text: the matching text (the first :data:`MATCH_MAX` characters of the source).

    Returns:
        The text with each clause removed up to (not including) its line end.
    """
    return _NOT_FOR.sub("", text)


def fold_whitespace(text: str) -> str:
    """Fold every whitespace run (spaces, tabs, newlines) to one space and strip the ends."""
    return _WS.sub(" ", text).strip()


def matching_keywords(source: str) -> frozenset[str]:
    """Keywords a node is matched by: its first :data:`MATCH_MAX` characters, clauses dropped."""
    return frozenset(keywords(drop_not_for(source[:MATCH_MAX])))
