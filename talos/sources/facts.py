"""Facts: the lines of ``memory.md`` with their provenance tags, and its markdown headings
(:class:`Outline`: which lines are headings, the heading path above each line) (design §3.1, §7.1).
The project's one frontmatter parser (:func:`parse_frontmatter`, design §3.2) is here too: it
reads a skill's frontmatter and the block at memory.md's top (:func:`memory_frontmatter`)."""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, islice
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

from talos import fsutil
from talos.model import Node
from talos.safety import secrets
from talos.text import matching_keywords
from talos.view.canon import canonical_name
from talos.warn import audible, warn

__all__ = [
    "FRONTMATTER",
    "HEADING_CHARS",
    "MAX_FACT_BYTES",
    "MIN_FACT_CHARS",
    "TAG",
    "Outline",
    "ParsedFact",
    "any_underline",
    "claimed_scopes",
    "frontmatter_size",
    "heading_label",
    "heading_of",
    "heading_text",
    "load_facts",
    "memory_frontmatter",
    "parse_fact_line",
    "parse_frontmatter",
    "setext_headings",
    "strip_tag",
    "structural",
    "tag_reasons",
    "too_long",
]

#: The reason a line is flagged for a credential in its provenance tag (hostile pass of issue
#: 13: ``ref=https://bob:PW@host`` was printed as provenance by recall, explain and get).
TAG_SECRET = "contains a credential value (in its provenance tag)"

#: Lines whose remaining text is shorter than this are ignored (design §3.1): "ok", "---", "#".
MIN_FACT_CHARS = 4
#: A line longer than this (UTF-8 bytes, 1 MiB) is not a fact: it is not recalled, and every
#: reader warns with its line number (the file is left as it is). One 50 MB line was stored
#: in the index, in every records block and delivered whole in the block (issue 12 item 8);
#: no one writes a fact of a megabyte (a paste gone wrong, a binary), and only its first
#: ``MATCH_MAX`` characters match anyway. Longer lines below it still are facts
#: (tests/test_robustness.py: a 300 kB line).
MAX_FACT_BYTES = 1 << 20

#: The most lines of memory.md talos serves (issue 12 item 8; README "Size limits"). Above it
#: the file is not loaded, with a warning that says what to do; writers still append and
#: nothing in the file changes. Measured by bench/big_memory.py (short facts, CPU time): at
#: 500,000 lines a warm recall takes 12 ms and doctor 29 s, inside the issue's 100 ms and
#: 30 s; at 1,000,000 lines 104 ms and 52 s.
MAX_MEMORY_LINES = 500_000
#: The chunk a too-long memory.md's lines are counted in (bytes held at once).
COUNT_CHUNK = 1 << 20

#: The trailing provenance tag ``<!-- SRC YYYY-MM-DD [field=value ...] -->``; whitespace inside
#: is free. Field values are URL-encoded when they contain spaces (design §7.1).
TAG = re.compile(
    r"\s*<!--\s*(?P<src>\w+)\s+(?P<born>\d{4}-\d{2}-\d{2})"
    r"(?P<fields>(?:\s+[A-Za-z_][\w.\-]*=\S*)*)\s*-->\s*$"
)
_FIELD = re.compile(r"([A-Za-z_][\w.\-]*)=(\S*)")
_COMMENT = re.compile(r"<!--(.*?)(?:-->|$)", re.S)
_SCOPE = re.compile(r"(?<![\w.\-])scope=(\S+?)(?=\s|-->|$)")


#: Most characters of a heading shown before a fact in the block (``(Project: billing) …``,
#: issue 15 item 4: "briefly"); a longer one is cut with ``…``.
HEADING_CHARS = 40

#: A CommonMark ATX heading (after the provenance tag is removed): at most 3 spaces, 1–6 ``#``,
#: then a space, a tab or the line's end; ``#hashtag`` and ``#!`` are no heading.
_ATX = re.compile(r"\ufeff?[ ]{0,3}(#{1,6})(?:[ \t]+(.*))?$", re.S)
#: A closing sequence of ``#``: after a space or tab (or alone), at the end (CommonMark).
_CLOSING = re.compile(r"(?:^|[ \t]+)#+$")
#: A code fence: at most 3 spaces, then 3 or more backticks (no backtick in the info string
#: after them) or tildes (CommonMark).
_FENCE = re.compile(r"\ufeff?[ ]{0,3}(`{3,}(?=[^`]*$)|~{3,})(.*)$", re.S)


#: A setext heading's underline (CommonMark): at most 3 spaces, a run of ``=`` (level 1) or
#: of ``-`` (level 2), trailing spaces or tabs. Under a paragraph it makes that paragraph a
#: heading; elsewhere a ``---`` is a thematic break and a ``===`` is text.
_UNDERLINE = re.compile(r"[ ]{0,3}(=+|-+)[ \t]*$")
#: A thematic break (CommonMark): 3 or more ``-``, ``*`` or ``_``, spaces and tabs between.
_BREAK = re.compile(r"[ ]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
#: The start of a list item or a block quote (CommonMark): a paragraph that starts on it is
#: inside that container, and an underline below it is no setext underline ("- x" then
#: "---" is a list and a thematic break; "- x" then "===" is the item's text "x ===").
_CONTAINER = re.compile(r"[ ]{0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)|[ ]{0,3}>")


#: The ``heading_level`` of a line of memory.md's frontmatter block (:func:`memory_frontmatter`):
#: like a heading's line, no fact for every model but ``classic``, but it labels nothing.
FRONTMATTER = 7


def frontmatter_size(lines: Iterable[str]) -> int:
    """How many of a file's first ``lines`` (without line ends) its frontmatter block takes,
    both ``---`` lines in (design §3.2): the first line starts with ``---`` and the block ends at
    the next line that is ``---``; 0 when there is none (a block that never closes is none).
    Reads the lines up to the block's end only."""
    for i, line in enumerate(lines):
        if i == 0 and not line.startswith("---"):
            return 0
        if i and line.strip() == "---":
            return i + 1
    return 0


def parse_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """Split a markdown file into frontmatter fields and the rest (design §3.2).

    The file must start with ``---``; the block ends at the next line that is ``---``
    (:func:`frontmatter_size`). Each line with a ``:`` splits at the first colon; key
    (lower-cased) and value are stripped, so indented keys work. Only the first block is
    frontmatter: a second one is body text. A file whose block never closes has no
    frontmatter. This is the project's only frontmatter parser; everything that reads skills
    uses it, and memory.md's reader (:func:`memory_frontmatter`).

    Returns:
        ``(fields, body)`` — ``fields`` is empty when there is no frontmatter, and ``body`` is
        then the whole text.
    """
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    size = frontmatter_size(lines)
    if not size:
        return {}, text
    fields: dict[str, str] = {}
    for line in lines[1 : size - 1]:
        if ":" in line:
            key, _, value = line.partition(":")
            fields.setdefault(key.strip().lower(), value.strip())
    return fields, "\n".join(lines[size:])


def memory_frontmatter(data: bytes, lines: Sequence[str] | Sequence[bytes]) -> int:
    """How many lines at the top of memory.md are a frontmatter block, read by
    :func:`parse_frontmatter` (design §3.1): ``---`` on the first line (after a byte order mark),
    the block closed by a line that is ``---``, and at least one of its lines a field
    (``title: notes``); 0 otherwise. Notes apps write one (Obsidian's properties, Jekyll's
    and Hugo's front matter) and every viewer shows it as the file's metadata: for every model
    but ``classic`` its lines are no facts and no heading (read as markdown, the closing
    ``---`` made the line above it a setext heading that labelled every fact of the file).
    A block of no field (``---`` over a few bullets and ``---``) is none: its lines are read as
    any others (facts, a thematic break). ``data`` is the file's bytes,
    split into ``lines`` (bytes or text); only the block's lines are read."""
    if not data.startswith((b"---", b"\xef\xbb\xbf---")):
        return 0
    first = lines_text(lines[0]).removeprefix("\ufeff") if lines else ""
    rest: Iterable[str | bytes] = islice(lines, 1, None)
    size = frontmatter_size(chain([first], (lines_text(raw) for raw in rest)))
    if not size:
        return 0
    block = [first, *(lines_text(raw) for raw in lines[1:size])]
    return size if parse_frontmatter("\n".join(block))[0] else 0


def setext_headings(
    data: bytes, lines: Sequence[str] | Sequence[bytes]
) -> dict[int, tuple[int, str | None, bool]]:
    """The setext headings of memory.md (design §3.1; CommonMark, the form ``Title`` over a line
    of ``===`` or ``---``): ``{index: (level, text, own)}`` for every line they take, 0-based;
    ``level`` 1 for ``=``, 2 for ``-``. The heading's line carries its ``text`` (tag removed)
    and ``own`` (of no scope but ``global``, :func:`claimed_scopes`); the underline carries
    ``(None, True)``. The heading is the one line above the underline: where CommonMark makes
    a paragraph of several lines one heading, the lines above it stay facts, as every line of
    memory.md is one (design §3.1): a file of plain lines with one ``===`` would otherwise lose
    every fact above it to a heading. A paragraph starts after a blank line, a heading, a
    thematic break, a code fence or the file's start, on a line that is no list item, block
    quote, indented code or HTML comment; inside a code fence there is none. ``data`` is the
    file's bytes, split into ``lines`` (bytes or text).

    Only the lines from each underline back to the line above it that decides the state
    (:func:`_resets`: a blank line, a list item …) are read: ``{}`` at once for a file
    without an underline, and a file of 500,000 bullets with one ``---`` costs one line.

    A frontmatter block at the file's top (:func:`memory_frontmatter`) is read before: each
    of its lines carries ``(FRONTMATTER, None, True)`` (:data:`FRONTMATTER`), and the outline
    starts after it, as at the file's start.

    The newcomer's failure in the other heading form: "Project billing" over "=====" was a
    fact and ranked first for "project billing" (the attacker's pass)."""
    front = memory_frontmatter(data, lines)
    if not front and not any_underline(data):
        return {}
    first = lines_text(data.split(b"\n", 1)[0])
    unders = [0] if _UNDERLINE.match(first) else []
    fences = [0] if _FENCE.match(first.rstrip()) else []
    for found, pattern in ((unders, _UNDER_AT), (fences, _FENCE_AT)):
        no, last = 0, 0
        for m in pattern.finditer(data):
            no += data.count(b"\n", last, m.start() + 1)
            last = m.start() + 1
            found.append(no)
    fenced = _fenced([f for f in fences if f >= front], lines)
    out: dict[int, tuple[int, str | None, bool]] = dict.fromkeys(
        range(front), (FRONTMATTER, None, True)
    )
    for u in unders:
        if u < front or u >= len(lines) or u in fenced:
            continue
        start = u - 1
        while start >= front and start not in fenced and not _resets(lines[start]):
            start -= 1
        if start < front or start in fenced:  # the file's start or a fence line: no state
            start += 1
        texts = [lines_text(lines[x]) for x in range(start, u + 1)]
        for at, got in _scan(texts).items():
            out[start + at] = got
    return out


#: A line that may be a setext underline or a code fence, after a line end (the first line
#: is looked at on its own).
_UNDER_AT = re.compile(rb"\n[ ]{0,3}(?:=+|-+)[ \t]*\r?(?=\n|\Z)")
_FENCE_AT = re.compile(rb"\n[ ]{0,3}(?:`{3}|~{3})")


def _fenced(fences: list[int], lines: Sequence[str] | Sequence[bytes]) -> set[int]:
    """The 0-based lines inside a code fence or on one, given the candidate fence lines
    (CommonMark: closed by a fence of the same character at least as long, with no info
    string, or by the file's end)."""
    out: set[int] = set()
    fence: tuple[str, int, int] | None = None  # char, width, the opening line
    for at in fences:
        f = _FENCE.match(lines_text(lines[at]).rstrip()) if at < len(lines) else None
        if f is None:
            continue
        if fence is None:
            fence = (f.group(1)[0], len(f.group(1)), at)
        elif f.group(1)[0] == fence[0] and len(f.group(1)) >= fence[1] and not f.group(2).strip():
            out.update(range(fence[2], at + 1))
            fence = None
    if fence is not None:
        out.update(range(fence[2], len(lines)))
    return out


#: The first characters (after indentation) of every line :func:`_resets` may be true of, and
#: of every line that may end a paragraph in :func:`_scan`: any other line is paragraph text.
_MARKERS = frozenset("-*+>#_<=0123456789")


def _plain(raw: str | bytes) -> bool:
    """Whether a line surely is paragraph text (not blank, no block marker first): the walk of
    :func:`setext_headings` passes 400,000 plain lines without a regex."""
    text = lines_text(raw) if isinstance(raw, bytes) else raw
    head = text.lstrip(" \t")[:1]
    return bool(head) and head not in _MARKERS and not head.isspace()


def _resets(raw: str | bytes) -> bool:
    """Whether the outline's paragraph state after a line depends on that line alone: a blank
    line, a list item or block quote, an ATX heading, a thematic break."""
    if _plain(raw):
        return False
    line = lines_text(raw)
    return (
        not line.strip()
        or _CONTAINER.match(line) is not None
        or _BREAK.match(line) is not None
        or heading_of(line) is not None
    )


def _scan(texts: list[str]) -> dict[int, tuple[int, str | None, bool]]:
    """:func:`setext_headings` over ``texts``, lines read in order from a state of no open
    paragraph (the first line :func:`_resets` it, or the file's start, or after a fence)."""
    out: dict[int, tuple[int, str | None, bool]] = {}
    para: int | None = None  # the first line of the open paragraph
    held = False  # the open paragraph is inside a list item or a block quote
    comment = False  # inside an HTML comment block
    for i, line in enumerate(texts):
        if comment:
            comment = "-->" not in line
            continue
        if para is not None and _plain(line):
            continue  # the paragraph goes on
        if not line.strip():
            para, held = None, False
            continue
        under = _UNDERLINE.match(line)
        if under is not None and para is not None and not held:
            # the line above is the heading; the paragraph's lines above it stay facts
            level, text = 1 if under.group(1)[0] == "=" else 2, texts[i - 1]
            out[i - 1] = (level, strip_tag(text)[0], claimed_scopes(text) == {"global"})
            out[i] = (level, None, True)
            para, held = None, False
            continue
        if (
            para is not None
            and (under is None or under.group(1)[0] == "=")
            and heading_of(line) is None
            and not _BREAK.match(line)
            and not _CONTAINER.match(line)
            and not line.lstrip().startswith("<!--")
        ):
            continue  # the paragraph goes on (a lazy line of a held one too)
        para, held = None, False
        if heading_of(line) is not None or _BREAK.match(line):
            pass
        elif line.lstrip().startswith("<!--") and len(line) - len(line.lstrip()) < 4:
            comment = "-->" not in line
        elif len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip()) >= 4:
            pass  # indented code
        else:
            para, held = i, _CONTAINER.match(line) is not None
    return out


def lines_text(raw: str | bytes) -> str:
    """One line of :func:`setext_headings`'s ``lines`` as text."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return text.rstrip("\r")


def heading_of(line: str) -> tuple[int, str] | None:
    """``(level, text)`` when ``line`` (one memory.md line) is a markdown ATX heading, else
    ``None`` (design §3.1; CommonMark, fences aside: :class:`Outline`). The provenance tag is
    removed first, then the closing ``#`` run and surrounding whitespace: ``## Project: billing
    ##`` → ``(2, "Project: billing")``; ``#`` alone → ``(1, "")``."""
    m = TAG.search(line)
    body = (line[: m.start()] if m else line).rstrip()
    h = _ATX.match(body)
    if h is None:
        return None
    text = _CLOSING.sub("", (h.group(2) or "").strip()).strip()
    return len(h.group(1)), text


def heading_text(n: Node) -> str | None:
    """The text of the heading a row of memory.md is (:func:`load_facts`: ``heading_level``
    set), in either form, as :class:`Outline` reads it: an ATX heading's (:func:`heading_of`),
    a setext heading's line without its tag (:func:`setext_headings`); ``None`` for a row that
    is no heading's text (a fact, a setext underline, a frontmatter line)."""
    if not n.heading_level or n.heading_level == FRONTMATTER:
        return None
    got = heading_of(n.raw)
    if got is not None:
        return got[1]
    if _UNDERLINE.match(n.raw):
        return None
    return strip_tag(lines_text(n.raw))[0]


def structural(line: str) -> bool:
    """Whether ``line`` may change the outline of the lines after it: a heading, a code
    fence line or a setext underline (:func:`setext_headings`), inside a fence or not (an
    edit of one re-labels what follows)."""
    return (
        heading_of(line) is not None
        or _FENCE.match(line.rstrip()) is not None
        or _UNDERLINE.match(line.rstrip("\r")) is not None
    )


def any_underline(data: bytes) -> bool:
    """Whether memory.md's bytes hold a line that may be a setext underline, or start with
    ``---`` (a frontmatter block, :func:`memory_frontmatter`): then an edit of any line may
    change which lines are headings (:func:`setext_headings`)."""
    if data.startswith((b"---", b"\xef\xbb\xbf---")):
        return True
    first = data[: data.find(b"\n")] if b"\n" in data else data
    return _UNDER_AT.search(data) is not None or bool(_UNDERLINE.match(lines_text(first)))


class Outline:
    """memory.md's headings, read line by line in file order (design §3.1, issue 15 item 4).

    :meth:`step` takes every line (each one, also the lines that are no fact) and says whether
    it is a heading and under which headings it stands. A heading ends the sections of its
    level and deeper. Inside a fenced code block (`````` or ``~~~``, closed by a fence of the
    same character at least as long, or by the file's end: CommonMark) a ``#`` line is no
    heading; it stays a line like any other.

    Args:
        shown: whether a heading's text may label the facts beneath it (``None``: every one);
            a heading it rejects (the fact filter's verdict, design §8.2) still ends sections,
            and stands in the path as ``""``. A heading whose tag names a scope other than
            ``global`` stands as ``""`` too: its text is of that scope (§7.3).
    """

    __slots__ = ("_above", "_fence", "_open", "_shown", "path", "setext")

    def __init__(
        self,
        shown: Callable[[str], bool] | None = None,
        setext: dict[int, tuple[int, str | None, bool]] | None = None,
    ) -> None:
        self._shown = shown
        #: The setext headings of the file (:func:`setext_headings`), by 0-based line index:
        #: a caller that steps only the lines holding ``#``, `````` or ``~`` steps these too.
        self.setext = setext or {}
        self._fence: tuple[str, int] | None = None  # the open fence's character and length
        self._open: list[tuple[int, str]] = []  # (level, text) of the headings open now
        self._above: tuple[str, ...] = ()  # the path above the last heading
        #: The texts of the headings open now, outermost first (one tuple per section).
        self.path: tuple[str, ...] = ()

    def step(self, line: str, at: int = -1) -> tuple[int, tuple[str, ...]]:
        """Read the next line, the file's line ``at`` (0-based; needed with :attr:`setext`):
        ``(level, path)``: ``level`` 1–6 when it is a heading or a line of one (a setext
        heading's paragraph lines and underline: 1 or 2), :data:`FRONTMATTER` for a line of
        the frontmatter block (:func:`memory_frontmatter`), 0 otherwise; ``path`` the headings
        above it (for a heading: the ones it stays under)."""
        mark = self.setext.get(at) if self.setext else None
        if mark is not None:
            level, text, own = mark
            if text is None:  # a further line of the heading read last, or its underline
                return level, self._above
            return self._heading(level, text, own)
        fence = _FENCE.match(line.rstrip()) if "`" in line or "~" in line else None
        if self._fence is not None:
            char, width = self._fence
            run = fence.group(1) if fence is not None else ""
            if run[:1] == char and len(run) >= width and fence and not fence.group(2).strip():
                self._fence = None
            return 0, self.path
        if fence:
            self._fence = (fence.group(1)[0], len(fence.group(1)))
            return 0, self.path
        if "#" not in line:
            return 0, self.path
        got = heading_of(line)
        if got is None:
            return 0, self.path
        return self._heading(*got, claimed_scopes(line) == {"global"})

    def _heading(self, level: int, text: str, own: bool) -> tuple[int, tuple[str, ...]]:
        """A heading of ``level`` and ``text`` (``own``: of no scope but ``global``) read."""
        self._open = [(lv, t) for lv, t in self._open if lv < level]
        above = tuple(t for _lv, t in self._open)
        withheld = self._shown is not None and not self._shown(text)
        if text and (withheld or not own):
            text = ""
        self._open.append((level, text))
        self.path = (*above, text)
        self._above = above
        return level, above


def written_by_talos(n: Node) -> bool:
    """Whether a fact's line was written by talos (``remember``, MCP, reflection): its tag
    carries the ``id`` talos assigns on write (design §7.1). Such a line is appended at the end of
    memory.md, under whatever heading the person wrote last, or put where the line it
    supersedes was (a model's write too), so no heading labels it: "Run the migrations before
    each deploy" showed as ``(Never do this) …`` (the attacker's pass)."""
    return "id" in n.fields


def heading_label(n: Node) -> str:
    """The heading a fact shows in the block: its nearest heading's text (issue 15 item 4,
    "nearest heading only"), "" when it has none or may not show it (a line talos wrote:
    :func:`written_by_talos`). Not yet sanitised: the block places it as stored text
    (:mod:`talos.render`)."""
    if n.kind != "fact" or not n.headings or written_by_talos(n):
        return ""
    return n.headings[-1]


def claimed_scopes(line: str | bytes) -> frozenset[str]:
    """Every scope a memory.md line names in a ``scope=`` field of any ``<!-- -->`` comment,
    also when its tag does not parse or the line is not UTF-8; ``{"global"}`` when it names
    none (an untagged line is global). Decides who may hear a warning about the line
    (:mod:`talos.warn`, design §7.3)."""
    text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    found = {
        canonical_name(unquote(value))
        for comment in _COMMENT.findall(text)
        for value in _SCOPE.findall(comment)
    }
    return frozenset(found) or frozenset({"global"})


#: Tag fields that are names compared by authority rules, read in their canonical spelling
#: (:func:`talos.view.canon.canonical_name`): ``key=Editor`` is the key ``editor``, ``by=MCP`` a
#: model's write (``tests/test_key_authority.py``), ``scope=ｇlobal`` the scope ``global``
#: (attack pass 23: a look-alike scope was a scope no request named).
NAMED_FIELDS = ("key", "by", "scope")


class ParsedFact(NamedTuple):
    """A memory.md line taken apart: ``text`` (tag and bullets removed), ``src`` (``user``
    when untagged; canonical, :func:`talos.view.canon.canonical_name`), ``born`` (``YYYY-MM-DD``
    or ""), ``fields`` (decoded ``field=value``; the :data:`NAMED_FIELDS` canonical)."""

    text: str
    src: str
    born: str
    fields: dict[str, str]


def strip_tag(line: str) -> tuple[str, str, str]:
    """Split a trailing provenance tag off ``line`` (design §3.1).

    Returns:
        ``(text, src, born)``: the line without the tag (whitespace-stripped), the tag's source
        word in its canonical spelling (:func:`talos.view.canon.canonical_name`, as
        :func:`parse_fact_line` gives it: ``USER`` is ``user``), and its date. An untagged line
        gives ``(line.strip(), "user", "")``.
    """
    m = TAG.search(line)
    if not m:
        return line.strip(), "user", ""
    return line[: m.start()].strip(), canonical_name(m.group("src")), m.group("born")


def too_long(line: str | bytes) -> bool:
    """Whether a memory.md line is longer than :data:`MAX_FACT_BYTES` UTF-8 bytes."""
    if isinstance(line, bytes) or len(line) > MAX_FACT_BYTES or 4 * len(line) <= MAX_FACT_BYTES:
        return len(line) > MAX_FACT_BYTES
    return len(line.encode("utf-8", "surrogatepass")) > MAX_FACT_BYTES


def _shown(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:10])) + (" …" if len(numbers) > 10 else "")


def bad_lines_warning(path: Path | str, numbers: list[int]) -> str:
    """The warning every reader gives for lines that are not UTF-8 (one message per file)."""
    return (
        f"{path}: line {_shown(numbers)} is not valid UTF-8; skipped (the file is left untouched)"
    )


def long_lines_warning(path: Path | str, numbers: list[int]) -> str:
    """The warning every reader gives for lines :func:`too_long` (one message per file)."""
    return (
        f"{path}: line {_shown(numbers)} is longer than {MAX_FACT_BYTES:,} bytes: not a fact, "
        "not recalled (the file is left untouched; split it into lines, or move it to a skill)"
    )


def line_warnings(path: Path, data: bytes) -> list[str]:
    """The warnings :func:`load_facts` gives about ``data`` (memory.md's bytes): lines that
    are not UTF-8 and lines :func:`too_long`, without parsing a line; a clean file costs one
    decode (``talos doctor`` on a memory.md of 1,000,000 lines, issue 12 item 8)."""
    try:
        data.decode("utf-8")
        clean = True
    except UnicodeDecodeError:
        clean = False
    if clean and len(data) <= MAX_FACT_BYTES:
        return []
    bad: list[int] = []
    long: list[int] = []
    for no, blob in enumerate(data.split(b"\n"), 1):
        if len(blob) > MAX_FACT_BYTES:
            if audible(claimed_scopes(blob)):  # as load_facts: another scope's is not named
                long.append(no)
        elif not clean:
            try:
                blob.decode("utf-8")
            except UnicodeDecodeError:
                if audible(claimed_scopes(blob)):
                    bad.append(no)
    out = [bad_lines_warning(path, bad)] if bad else []
    return out + ([long_lines_warning(path, long)] if long else [])


def parse_fact_line(line: str) -> ParsedFact | None:
    """Parse one memory.md line (design §3.1).

    The tag is parsed and removed first, so it never takes part in matching or display; then
    surrounding whitespace, leading ``-``/``*``/``#``/spaces (bullets, headings) and whitespace
    again are stripped.

    Returns:
        The parsed fact, or ``None`` when the remaining text is shorter than
        :data:`MIN_FACT_CHARS` characters or the line is longer than :data:`MAX_FACT_BYTES`
        (the line is not a fact).
    """
    if too_long(line):
        return None
    s = line.strip()
    m = TAG.search(s)
    src, born, fields = "user", "", {}
    if m:
        src, born = canonical_name(m.group("src")), m.group("born")
        fields = {k: unquote(v) for k, v in _FIELD.findall(m.group("fields"))}
        fields.update({k: canonical_name(fields[k]) for k in NAMED_FIELDS if k in fields})
        s = s[: m.start()]
    text = s.strip().lstrip("-*# ").strip()
    if len(text) < MIN_FACT_CHARS:
        return None
    return ParsedFact(text, src, born, fields)


def tag_reasons(line: str) -> tuple[str, ...]:
    """``(TAG_SECRET + ": ref=https://bob:****@",)`` when a field of the line's trailing
    provenance tag holds a credential (:func:`talos.safety.secrets.find_secrets` on the decoded
    values; the evidence is masked), else ``()``. The tag is part of the line: such a line is
    withheld and listed by ``talos scan`` like a credential in the text (design §8.3)."""
    m = TAG.search(line.strip())
    if not m or not m.group("fields").strip():
        return ()
    pairs = [(k, unquote(v)) for k, v in _FIELD.findall(m.group("fields"))]
    if not secrets.find_secrets("\n".join(v for _k, v in pairs)):  # one value a line
        return ()
    shown: list[str] = []
    for k, v in pairs:
        found = secrets.find_secrets(v)
        if found:
            regions = secrets.secret_regions(found)
            window = secrets.mask_window(v, regions, found[0].start, found[0].end)
            shown.append(f"{k}={' '.join(window.split())}"[:60])
    return (f"{TAG_SECRET}: {', '.join(shown[:3])}",) if shown else ()


def masked_fields(fields: dict[str, str]) -> dict[str, str]:
    """``fields`` with every credential in their values masked."""
    return {k: secrets.mask_secrets(v) for k, v in fields.items()}


class TooManyLines(fsutil.FileTooLarge):
    """memory.md holds more than :data:`MAX_MEMORY_LINES` lines (``lines`` of them)."""

    def __init__(self, path: str | os.PathLike[str], lines: int) -> None:
        OSError.__init__(
            self,
            errno.EFBIG,
            f"{lines:,} lines, more than the {MAX_MEMORY_LINES:,} talos serves; move old lines "
            "to another file",
            os.fspath(path),
        )
        self.limit, self.lines = MAX_MEMORY_LINES, lines

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def read_memory(path: Path, serve: bool = True) -> bytes:
    """The bytes of the memory file ``path``: a regular file of at most
    :data:`talos.fsutil.MAX_MEMORY_BYTES` (:func:`talos.fsutil.read_regular`) and, when the
    facts are to be served (``serve``; the audit's checks read any size), of at most
    :data:`MAX_MEMORY_LINES` lines.

    Raises:
        FileNotFoundError: missing. OSError: unreadable, not a regular file (a FIFO hung every
            command, issue 12.3) or larger than the bound (``/dev/zero``: ``MemoryError``).
            TooManyLines (an OSError): more lines than talos serves.
    """
    if serve:
        with fsutil.open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            if MAX_MEMORY_LINES < size <= fsutil.MAX_MEMORY_BYTES:  # shorter: fewer lines
                # counted in chunks before the file is read whole: a refused file costs its
                # first bytes, not its size (a 69 MB file cost 115 MB on every recall)
                lines, last = 0, b"\n"
                for chunk in iter(lambda: f.read(COUNT_CHUNK), b""):
                    lines += chunk.count(b"\n")
                    last = chunk[-1:]
                lines += last != b"\n"
                if lines > MAX_MEMORY_LINES:
                    raise TooManyLines(path, lines)
    data = fsutil.read_regular(path, fsutil.MAX_MEMORY_BYTES)
    if serve and len(data) > MAX_MEMORY_LINES:  # it may have grown since it was counted
        lines = data.count(b"\n") + (not data.endswith(b"\n"))
        if lines > MAX_MEMORY_LINES:
            raise TooManyLines(path, lines)
    return data


def read_lines(path: Path) -> list[bytes] | None:
    """The raw lines of ``path`` without line ends, or ``None`` when the file does not exist.

    Raises:
        OSError: the file exists but cannot be read (permissions, a directory, ...), is not a
            regular file or is too large (:func:`read_memory`).
    """
    try:
        data = read_memory(path)
    except FileNotFoundError:
        return None
    return data.split(b"\n")


def load_facts(
    path: Path, keep_fact: Callable[[str], bool] | None = None, start: int = 0
) -> list[Node]:
    """Read ``memory.md`` into fact nodes, in file order (design §3.1).

    A line that does not decode as UTF-8, or is longer than :data:`MAX_FACT_BYTES`, is
    skipped; one warning on stderr names the file and the line numbers, and the rest of the
    file still loads. A missing file means no facts.

    Args:
        path: the memory file.
        keep_fact: optional filter on the fact text; rejected lines are not nodes at all.
        start: load order of the first node.

    Returns:
        Fact nodes with ``line`` (1-based) and ``raw`` (the exact line) as identity; nodes
        whose keyword set is empty are dropped (design §4). Each carries its heading level and
        heading path (:class:`Outline`; a heading labels when the default fact filter and
        ``keep_fact`` keep its text, else it stands as ``""``): a
        heading line, and a line of a frontmatter block at the top (:data:`FRONTMATTER`), is a
        node here, with its text as ``classic`` reads it; every other model leaves it out
        (:class:`talos.view.kept.KeptState`).
    """
    try:
        lines = read_lines(path)
    except OSError as e:
        warn(f"{path}: cannot read ({e.strerror}); no facts loaded")
        return []
    if lines is None:
        return []
    nodes: list[Node] = []
    bad: list[int] = []
    long: list[int] = []
    outline = Outline(_labels(keep_fact), setext_headings(b"\n".join(lines), lines))
    marks = outline.setext
    for no, blob in enumerate(lines, 1):
        if len(blob) > MAX_FACT_BYTES:
            if audible(claimed_scopes(blob)):  # another scope's line is not named (§7.3)
                long.append(no)
            continue
        try:
            line = blob.decode("utf-8")
        except UnicodeDecodeError:
            if audible(claimed_scopes(blob)):  # another scope's line is not named (§7.3)
                bad.append(no)
            continue
        if "#" in line or "`" in line or "~" in line or (marks and no - 1 in marks):
            level, headings = outline.step(line, no - 1)  # no other line changes the outline
        else:
            level, headings = 0, outline.path
        parsed = parse_fact_line(line)
        if parsed is None or (keep_fact is not None and not keep_fact(parsed.text)):
            continue
        if keep_fact is not None and parsed.fields and _default(keep_fact) and tag_reasons(line):
            continue  # the default filter withholds a credential in the tag too
        kw = matching_keywords(parsed.text)
        if not kw:
            continue
        nodes.append(
            Node(
                kind="fact",
                text=parsed.text,
                keywords=kw,
                order=start + len(nodes),
                path=str(path),
                line=no,
                raw=line.rstrip("\r"),
                src=parsed.src,
                born=parsed.born,
                fields=parsed.fields,
                heading_level=level,
                headings=headings,
            )
        )
    if bad:
        warn(bad_lines_warning(path, bad))
    if long:
        warn(long_lines_warning(path, long))
    return nodes


def _labels(keep_fact: Callable[[str], bool] | None) -> Callable[[str], bool]:
    """Which headings may label the facts beneath them: those the default fact filter keeps
    (:func:`talos.safety.keep_fact`; a label is stored text in the block, and the index keeps
    that filter's verdicts) and ``keep_fact`` keeps too."""
    from talos import safety  # imported on use: safety reads facts for talos scan

    if keep_fact is None or keep_fact is safety.keep_fact:
        return safety.keep_fact
    return lambda text: safety.keep_fact(text) and keep_fact(text)


def _default(keep_fact: Callable[[str], bool]) -> bool:
    """Whether ``keep_fact`` is talos's default fact filter (:func:`talos.safety.keep_fact`)."""
    from talos import safety  # imported on use: safety reads facts for talos scan

    return keep_fact is safety.keep_fact
