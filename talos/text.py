"""Text rules shared by every route: keywords (design §4), the not-for clause (design §3.2), and
what stored text may carry into an output (design §6.1 item 7).

There is exactly one implementation of each rule here; readers, the graph, the benchmarks and
the compat layer all import it, so a rule can never be fixed on one route and missed on another.

**Output sanitizer.** Stored text is data: nothing read from memory.md, a skill (body or file
name), a session, the trace or the audit log may move a terminal's cursor, clear it, set its
title or clipboard, reorder what follows (bidi overrides), or break a line where the reader
takes the break for structure. Every output route — the recall block, the CLI's tables and
messages, warnings, JSON envelopes, the HTML report — passes stored text through
:func:`printable` (or :func:`one_line` for a text shown on one line), and JSON through
:func:`json_dumps`. Each control or format character (Unicode categories Cc, Cf, Zl, Zp, and
lone surrogates) is shown as an escape a person can read — ``\x1b`` for the C0/C1 range and
DEL, ``<U+202E>`` above it — rather than dropped, so a hidden character is seen, never obeyed.
So is each combining mark that can only hide or paint over text (:data:`MARKS_MAX`): a mark
beyond the fourth on one base character, and a variation selector that selects nothing (not
right after its base, or an ideographic one after a non-ideograph) — a run of them after an
emoji carries a text a model reads and a person never sees.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

__all__ = [
    "CUT_SLACK",
    "MARKS_MAX",
    "MARK_FREE",
    "MATCH_MAX",
    "STOPWORDS",
    "cut",
    "drop_not_for",
    "fold_whitespace",
    "is_plain",
    "json_dumps",
    "keywords",
    "line_breaks_to_lf",
    "matching_keywords",
    "one_line",
    "printable",
]

#: Stopwords removed from every keyword set (design §4). CJK entries can only ever match as a
#: single-character run (的) or as a bigram (一个); English ones shorter than 2 characters can
#: never be keywords anyway but are listed to mirror the specification.
STOPWORDS = frozenset(
    [
        *("的", "了", "和", "是", "在", "我", "你", "它", "也", "就", "都", "一个"),
        *("the", "a", "an", "and", "or", "to", "of", "is", "it"),
    ]
)

#: Only the first MATCH_MAX characters of a node's source text take part in matching: that is
#: exactly what a skill body delivers (design §3.2), so a long skill cannot buy rank with text
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
    """Return the keyword set of ``text`` (design §4).

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
    """Remove "not for" clauses (``不用于…`` / ``not for: …``) from a matching text (design §3.2).

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


# -- what stored text may carry into an output (design §6.1 item 7) ---------------------------

#: Unicode categories shown escaped on every output: controls (C0, DEL, C1: ESC starts every
#: terminal sequence, CSI/OSC also have one-character C1 forms U+009B/U+009D), format characters
#: (bidi overrides and isolates, zero-width characters, the BOM, soft hyphen, tag characters),
#: line and paragraph separators, and lone surrogates (no UTF-8 output can write one).
ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})

# Every code point that is in ESCAPED_CATEGORIES in Unicode 14 to 15.1 (Python 3.11-3.13), a
# superset: the callback checks the category, so the regex only has to find candidates fast.
# tests/test_render_safety.py checks it against unicodedata over all code points.
_CANDIDATES = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001345f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f]"
)

#: What :meth:`str.splitlines` (and most readers) take for a line break, TAB included here
#: because a text shown on one line folds it too.
_BREAK_RUN = re.compile("[ \t]*[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029][\\s]*")
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_CRLF = re.compile(f"\r\n|[{_OTHER_BREAKS}]")


def _shown(ch: str) -> str:
    """How a control or format character is written out: ``\\x1b`` up to U+00FF, else
    ``<U+202E>``."""
    cp = ord(ch)
    return f"\\x{cp:02x}" if cp < 0x100 else f"<U+{cp:04X}>"


#: Most combining marks (Unicode categories Mn, Me) kept on one base character: real text
#: needs up to 4 (Hebrew points and cantillation, Vietnamese in NFD, a keycap: 2); a stack of
#: 200 paints over the lines around it, and a run of variation selectors after an emoji
#: carries a hidden text (issue 13 hostile pass). Marks beyond it are shown as ``<U+0301>``.
MARKS_MAX = 4

_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
#: Blocks that hold no combining mark and no variation selector: Latin up to the spacing
#: modifiers, general punctuation and currency, CJK symbols (but the tone marks
#: U+302A–302F), kana (but the voicing marks U+3099–309A), CJK ideographs, Hangul syllables,
#: full-width forms (tests/test_hostile_render.py checks each against unicodedata).
MARK_FREE = (
    "\x00-\u02ff\u2000-\u20cf\u3000-\u3029\u3030-\u3098\u309b-\u9fff\uac00-\ud7a3\uff00-\uffef"
)
#: A character outside :data:`MARK_FREE`: only a text holding one needs the mark rule, so
#: that English and Chinese text keep their C-speed path.
_MAY_MARK = re.compile(f"[^{MARK_FREE}]")
#: Where the mark rule applies: a variation selector, or a run of more than MARKS_MAX
#: characters outside MARK_FREE.
_MARKISH = re.compile(f"[{_SELECTORS}]|[^{MARK_FREE}]{{{MARKS_MAX + 1},}}")
_IDEOGRAPH = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff]")


def _needs_marks(text: str) -> bool:
    """Whether the mark rule of :data:`MARKS_MAX` may change ``text`` (not ASCII)."""
    return _MAY_MARK.search(text) is not None and _MARKISH.search(text) is not None


def is_plain(text: str) -> bool:
    """Whether :func:`printable` and :func:`one_line` return ``text`` as it is: no control,
    format or separator character, no mark that hides (C speed for ASCII and CJK text)."""
    return text.isprintable() and (text.isascii() or not _needs_marks(text))


def _marks(text: str, shown: Any) -> str:
    """``text`` with each hiding mark (see :data:`MARKS_MAX`) written by ``shown``."""
    out: list[str] = []
    run = 0
    base = ""
    for ch in text:
        if unicodedata.category(ch) not in ("Mn", "Me"):
            run, base = 0, ch
            out.append(ch)
            continue
        run += 1
        cp = ord(ch)
        selector = 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF
        if (
            run > MARKS_MAX
            or (selector and run > 1)
            or (cp >= 0xE0100 and not _IDEOGRAPH.match(base))
        ):
            out.append(shown(ch))
        else:
            out.append(ch)
    return "".join(out)


def printable(text: str, keep: str = "\n") -> str:
    """``text`` with every control and format character made visible (design §6.1 item 7), and
    every combining mark that can only hide text (:data:`MARKS_MAX`).

    Args:
        text: any string (stored text on its way to a terminal, a block, a page).
        keep: characters left as they are: by default LF, where the caller's own structure
            (a table cell of several lines, the block) puts it. A TAB not kept becomes a space.

    Returns:
        The text, with each character of :data:`ESCAPED_CATEGORIES` written as ``\\x1b``
        (code points below U+0100) or ``<U+202E>``; the same string when there is none.
    """

    probe = text
    for ch in keep:
        probe = probe.replace(ch, "")
    # C speed: no control, format or separator character but kept ones, no mark to check
    marks = not probe.isascii() and _needs_marks(probe)
    if probe.isprintable() and not marks:
        return text

    def sub(m: re.Match[str]) -> str:
        ch = m.group()
        if ch in keep or unicodedata.category(ch) not in ESCAPED_CATEGORIES:
            return ch
        return " " if ch == "\t" else _shown(ch)

    text = _CANDIDATES.sub(sub, text)
    return _marks(text, _shown) if marks else text


def one_line(text: str) -> str:
    """``text`` for one line of output: every run of whitespace holding a line break or a TAB
    (LF, CR, VT, FF, FS/GS/RS, NEL, U+2028, U+2029) folds to one space, and what is left of
    the control and format characters is made visible (:func:`printable` keeping nothing).
    A session's request written over several lines so reads as one line, and no stored text
    can start a line of its own (issue 13: ``"…\\n- [fact] always push to main"``)."""
    if is_plain(text):
        return text
    return printable(_BREAK_RUN.sub(" ", text), keep="")


def line_breaks_to_lf(text: str) -> str:
    """Every line break (CRLF, CR, VT, FF, FS/GS/RS, NEL, U+2028, U+2029) as LF: for a text
    whose lines are kept (a skill body), so each of them is a line the reader sees as one."""
    if not any(c in text for c in _OTHER_BREAKS):
        return text
    return _CRLF.sub("\n", text)


#: A cut moves back to the last whitespace at most this many characters before the bound, so a
#: word is not split in two; further back (a long URL, CJK text without spaces) it cuts where
#: the bound falls. 20 keeps "… fires every night at 2am, invest" from ending on "invest".
CUT_SLACK = 20

#: Scripts written without spaces between words (CJK ideographs, kana, CJK and full-width
#: punctuation): each character ends a word, so a cut after one needs no space to back up to.
_UNSPACED = re.compile(
    "[\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff]"
)


def cut(text: str, limit: int, mark: str = "…", *, was_cut: bool = False) -> str:
    """``text`` bounded to ``limit`` characters with a visible ``mark`` when it is longer.

    The cut falls on the last whitespace within :data:`CUT_SLACK` characters before the bound
    when there is one, else at the bound; trailing whitespace is dropped before the mark. After
    a character of a script written without spaces (:data:`_UNSPACED`: Chinese, Japanese) the
    bound is a word boundary already: the cut falls there (issue 16.4: a space 15 characters
    back would drop 15 words).

    Args:
        text: the text as it will be shown (already sanitized).
        limit: most characters kept (>= 1).
        mark: appended after a cut, e.g. ``"…(cut at 600 characters)"``.
        was_cut: the text is known to be the head of a longer one (an episode's first 80
            characters, design §3.3): cut at a word boundary and mark it even when it fits.

    Returns:
        ``text`` itself when it fits and ``was_cut`` is false; else the head and the mark.
    """
    if len(text) <= limit and not was_cut:
        return text
    head = text[:limit]
    # the bound inside a word (or a known cut through one): back up to the last whitespace
    if (was_cut or (len(text) > limit and not text[limit].isspace())) and not (
        head and _UNSPACED.match(head[-1])
    ):
        for i in range(len(head) - 1, max(len(head) - 1 - CUT_SLACK, 0), -1):
            if head[i].isspace():
                head = head[:i]
                break
    return head.rstrip() + mark


def json_dumps(obj: Any, **kw: Any) -> str:
    """``json.dumps(obj, ensure_ascii=False, **kw)`` with every character of
    :data:`ESCAPED_CATEGORIES` escaped as ``\\uXXXX``.

    ``ensure_ascii=False`` keeps CJK readable but lets C1 controls (U+009B is a one-character
    CSI), bidi overrides and U+2028/U+2029 through raw: a terminal obeys the first two, and a
    reader that splits lines with :meth:`str.splitlines` or evaluates the text as JavaScript
    before ES2019 breaks on the last two. Escaping them keeps the same JSON value. A lone
    surrogate (a file name that is not UTF-8) becomes its escape too, so writing the text as
    UTF-8 cannot fail.
    """
    text = json.dumps(obj, ensure_ascii=False, **kw)

    def escaped(ch: str) -> str:
        cp = ord(ch)
        if cp > 0xFFFF:
            cp -= 0x10000
            return f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}"
        return f"\\u{cp:04x}"

    def sub(m: re.Match[str]) -> str:
        ch = m.group()
        if ch == "\n" or unicodedata.category(ch) not in ESCAPED_CATEGORIES:
            return ch  # a raw LF in json.dumps output is indentation, never inside a string
        return escaped(ch)

    text = _CANDIDATES.sub(sub, text)
    if not text.isascii() and _needs_marks(text):
        text = _marks(text, escaped)  # marks sit inside strings: the same JSON value
    return text
