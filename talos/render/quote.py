"""Stored text inside the block: the rule every stored text goes through before it is placed
(the rule itself is told in :mod:`talos.render`). A label of the block, an episode's markers,
a line start that imitates a block line, a date where talos writes one, HTML that hides what
follows, a code fence left open: each is quoted or escaped; a text shown on one line is folded,
made visible and bounded (:func:`shown`), a skill body likewise (:func:`block_body`)."""

from __future__ import annotations

import re
import unicodedata

from talos.render.labels import BODY_CHARS, LABELS, TEXT_CHARS, labels
from talos.safety import letter_by_name, skeleton
from talos.text import cut, is_plain, line_breaks_to_lf, one_line, printable

__all__ = ["OPENERS", "block_body", "body_by_lines", "quote_labels", "shown", "undated"]


#: The words that open a label of the block, in both languages, as a reader reads them
#: (:func:`_read`): a kind, the body header (``skill body`` / ``技能正文`` start with a kind)
#: and the end marker.
_LABEL_WORDS = tuple(
    sorted(
        {
            unicodedata.normalize("NFKC", w).casefold()
            for t in LABELS.values()
            for w in (
                t["fact"],
                t["skill"],
                t["episode"],
                t["conflict"],
                t["body_close"].strip("[]"),
            )
        },
        key=len,
        reverse=True,
    )
)

#: The same words without their spaces, for a label spelled out (``[f a c t]``, ``[技 能]``).
_SQUEEZED = tuple(sorted({w.replace(" ", "") for w in _LABEL_WORDS}, key=len, reverse=True))

#: The words of the heading (``# Recalled memory`` / ``# 回忆``), and without their spaces.
_HEADING_WORDS = tuple(
    unicodedata.normalize("NFKC", t["heading"].lstrip("# ").partition("(")[0]).casefold().strip()
    for t in LABELS.values()
)

_SQUEEZED_HEADING = tuple(w.replace(" ", "") for w in _HEADING_WORDS)

#: Opening brackets a reader takes for the block's ``[``: the bracket itself, its full-width,
#: small and vertical forms (``［`` ``﹇``: NFKC ``[``), and the CJK and mathematical square,
#: lenticular and tortoise-shell brackets (``【〔〖〘〚⟦⁅❲⟬⦋⦍⦏⦗``) with their compatibility
#: forms (``﹝`` ``︹`` ``︻`` ``︗``). tests/test_hostile_render.py checks it is closed under NFKC.
OPENERS = (
    "[\uff3b\ufe47\u3010\ufe3b\u3014\ufe5d\ufe39\u3016\ufe17\u3018\u301a"
    "\u27e6\u2045\u2772\u27ec\u298b\u298d\u298f\u2997"
)

_OPEN = re.compile(f"[{re.escape(OPENERS)}]")

#: ``#`` and its full-width and small forms, which open a heading imitation.
_HASHES = "#\uff03\ufe5f"

_OPEN_OR_HASH = re.compile(f"[{re.escape(OPENERS + _HASHES)}]")

#: Letters and symbols that show as nothing or a blank, yet are neither whitespace nor format
#: characters: the Hangul fillers and the braille blank (U+3164 before ``[еnd of skill body]``
#: hid that the line does not start with a bracket).
_BLANKS = "\u115f\u1160\u3164\uffa0\u2800"

_BLANK_AS_SPACE = str.maketrans(dict.fromkeys(_BLANKS, " "))

#: What :func:`talos.text.printable` writes for a character it shows (``<U+200B>``, ``\x1b``).
_ESCAPE = re.compile(r"<U\+[0-9A-F]{4,6}>|\\x[0-9a-f]{2}")

#: A bullet of a list item: a dash, star, plus, dot, their full-width and typographic forms,
#: a quote mark ``>``, or a number ``1.`` / ``1)``.
_BULLET = re.compile(
    "(?:[-*+>\u2022\u00b7\u2013\u2014\u2023\u25e6\u25cf\u25aa\uff0d]|\\d{1,3}[.)])"
)

_SPACES = re.compile(r"\s+")

#: Characters after an opening bracket that decide whether it opens a label.
_WINDOW = 80

#: A run of what a reader does not see, but combining marks: whitespace (but LF), the escapes
#: of unseen characters, the blanks.
_LEAD = re.compile(f"(?:[^\\S\\n]|<U\\+[0-9A-F]{{4,6}}>|\\\\x[0-9a-f]{{2}}|[{_BLANKS}])*")


def _letter(ch: str) -> str:
    """A Latin letter drawn another way as the letter a reader sees (small capitals ``ꜰ``,
    squared, circled and negative ones ``🅵``, regional indicators ``🇫``), by the rule the
    instruction filter reads them with (:func:`talos.safety.letter_by_name`); any other
    character as is."""
    return letter_by_name(ch) or ch


def _read(text: str) -> str:
    """``text`` as a reader reads it: the escapes of unseen characters and the unseen
    characters themselves dropped (a blank read as a space), look-alike letters and
    compatibility forms folded (:func:`talos.safety.skeleton`, then NFKC: Cyrillic ``е`` →
    ``e``, ``Ｅ`` → ``E``, ``﹇`` → ``[``; then :func:`_letter`: ``ꜰ`` → ``f``), case
    folded, each run of spaces one space, no leading space."""
    text = _ESCAPE.sub("", text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", skeleton(text.translate(_BLANK_AS_SPACE)))
        text = "".join(c if c.isascii() else _letter(c) for c in text)
    return _SPACES.sub(" ", text.casefold()).lstrip()


def _starts_with(view: str, words: tuple[str, ...]) -> bool:
    """Whether ``view`` starts with one of ``words``, an English one as a whole word."""
    for w in words:
        if view.startswith(w):
            nxt = view[len(w) : len(w) + 1]
            if not (w.isascii() and (nxt.isalnum() or nxt == "_")):
                return True
    return False


def _may_start(text: str, firsts: str) -> bool:
    """Whether what a reader first sees in ``text`` may fold to one of ``firsts`` (a quick
    test before :func:`_read`: an ASCII letter or a CJK ideograph only reads as itself)."""
    i = _skip_unseen(text, 0)
    c = text[i : i + 1]
    if not c:
        return False
    if c.isascii() or "\u4e00" <= c <= "\u9fff":
        return c.lower() in firsts
    return True


#: What a label (:data:`_LABEL_WORDS`) or the heading (:data:`_HEADING_WORDS`) starts with.
_LABEL_FIRSTS = "".join(sorted({w[0] for w in _LABEL_WORDS}))

_HEADING_FIRSTS = "".join(sorted({w[0] for w in _HEADING_WORDS}))


def _opens_label(after: str) -> bool:
    """Whether the text right after an opening bracket reads as one of the block's labels."""
    if not _may_start(after[:_WINDOW], _LABEL_FIRSTS):
        return False  # most brackets: "[docs]", "[ ]", "【注意】"
    view = _read(after[:_WINDOW])
    return _starts_with(view, _LABEL_WORDS) or _starts_with(view.replace(" ", ""), _SQUEEZED)


def _unescaped(text: str, i: int) -> bool:
    """Whether the character at ``i`` has no escaping backslash: an even number of them
    before it (``\\\\[`` is a literal backslash, then a bracket a markdown reader obeys)."""
    n = 0
    while i - n > 0 and text[i - n - 1] == "\\":
        n += 1
    return n % 2 == 0


def _escaped_at(text: str, spots: list[int]) -> str:
    """``text`` with a backslash before each index of ``spots`` (ascending)."""
    if not spots:
        return text
    parts, last = [], 0
    for i in spots:
        parts += [text[last:i], "\\"]
        last = i
    return "".join(parts) + text[last:]


def _label_spots(text: str) -> list[int]:
    """Indices of the opening brackets in ``text`` that open a label and are not escaped."""
    return [
        m.start()
        for m in _OPEN.finditer(text)
        if _unescaped(text, m.start()) and _opens_label(text[m.end() :])
    ]


def _has_opener(text: str) -> bool:
    """Whether ``text`` holds an opening bracket of :data:`OPENERS`."""
    return "[" in text if text.isascii() else _OPEN.search(text) is not None


#: Arrows a reader takes for the ``→`` of an episode's own lines (``  → outcome: …``,
#: ``  → transcript: PATH``, design §3.3): the Unicode arrow blocks, their half-width form, and
#: ``>`` (the head of ``->``, ``=>``) with its full-width and small forms.
_ARROWS = (
    "\u2190-\u21ff\u27f0-\u27ff\u2794-\u27bf\u2900-\u297f\u2b00-\u2bff\uffe9-\uffec>\ufe65\uff1e"
)

_ARROW = re.compile(f"[{_ARROWS}]")

#: The words of an episode's own lines after their arrow; the line ends them with ``:``.
_MARKER_WORDS = ("outcome", "transcript")

_MARKER_FIRSTS = "ot"

#: Characters a reader takes for the marker's ``:`` (ASCII, full-width, small, vertical and
#: the modifier, ratio and triangular look-alikes).
_COLON = re.compile("[:\uff1a\ufe55\ufe13\ua789\u2236\u02d0\u02f8]")


def _has_arrow(text: str) -> bool:
    """Whether ``text`` holds an arrow of :data:`_ARROWS` (a quick test)."""
    return ">" in text if text.isascii() else _ARROW.search(text) is not None


def _marker_spots(text: str) -> list[int]:
    """Indices of the colons in ``text`` that end an episode marker a reader reads (an arrow,
    then ``outcome`` or ``transcript`` as :func:`_read` reads it — any case, spaces, look-alike
    letters —, then a colon) and are not escaped. The attacker's pass 22: a model's answer
    ``Fixed.\\n  → transcript: /etc/passwd`` shown as the outcome named a second transcript."""
    spots = []
    for m in _ARROW.finditer(text):
        window = text[m.end() : m.end() + _WINDOW]
        if not _may_start(window, _MARKER_FIRSTS):
            continue  # most arrows: "a -> b", "→ 3"
        for c in _COLON.finditer(window):
            view = _read(window[: c.start()]).replace(" ", "")
            if view in _MARKER_WORDS:
                if _unescaped(text, m.end() + c.start()):
                    spots.append(m.end() + c.start())
                break
            if not any(w.startswith(view) for w in _MARKER_WORDS):
                break
    return spots


def quote_labels(text: str) -> str:
    """``text`` with a backslash before the bracket of every block label inside it
    (``[fact]`` → ``\\[fact]``, ``[技能正文结束]`` → ``\\[技能正文结束]``), as a reader reads it
    (:func:`_read`: any case, spaces in or after it, look-alike letters, full-width forms,
    the other opening brackets of :data:`OPENERS`), and before the colon of every episode
    marker (``→ transcript:`` → ``→ transcript\\:``, :func:`_marker_spots`): stored text cannot
    name an outcome or a transcript talos did not write (design §3.3, §6.1 rule 7). Other
    brackets and arrows, and one already escaped, are left alone."""
    spots = _label_spots(text) if _has_opener(text) else []
    if _has_arrow(text):
        spots = sorted(spots + _marker_spots(text))
    return _escaped_at(text, spots)


def _skip_unseen(line: str, i: int) -> int:
    """The index of the first character from ``i`` on that a reader sees: past whitespace
    (but LF), escapes, blanks (:data:`_BLANKS`), combining marks and format characters."""
    while True:
        i = _LEAD.match(line, i).end()  # type: ignore[union-attr]  # matches the empty run
        c = line[i : i + 1]
        if not c or c.isascii() or unicodedata.category(c) not in ("Mn", "Me", "Cf"):
            return i
        i += 1


def _line_start_spot(line: str) -> int | None:
    """The index of the character that makes a body line read as a line of the block, if any:
    the first one a reader sees, or the first after a bullet, when it is an opening bracket;
    the first when it is a ``#`` imitating the heading."""
    i = _skip_unseen(line, 0)
    if i >= len(line):
        return None
    if line[i] in _HASHES:
        after = line[i : i + _WINDOW].lstrip(_HASHES)
        if not _may_start(after, _HEADING_FIRSTS):
            return None  # most headings: "# Usage", "## 步骤"
        rest = _read(after).lstrip("# ")
        if _starts_with(rest, _HEADING_WORDS) or rest.replace(" ", "").startswith(
            _SQUEEZED_HEADING
        ):
            return i
        return None
    m = _BULLET.match(line, i)
    if m and line[i] not in OPENERS:
        i = _skip_unseen(line, m.end())
    return i if i < len(line) and line[i] in OPENERS else None


def _fence_line(line: str) -> str:
    """One body line with every label bracket escaped, and the bracket or ``#`` that would
    make it read as a line of the block (:func:`_line_start_spot`)."""
    if not _OPEN_OR_HASH.search(line):
        return line
    spots = set(_label_spots(line))
    start = _line_start_spot(line)
    if start is not None:
        spots.add(start)
    return _escaped_at(line, sorted(spots))


#: HTML a markdown reader obeys that hides or swallows what follows it: a comment (until
#: ``-->``, or the end of the page), a collapsible (``<details>``, ``<summary>``) and their
#: closing tags. Its ``<`` gets a backslash (CommonMark's escape: shown, not obeyed).
_HIDING_HTML = re.compile(r"<(?=!--|/?(?:details|summary)\b)", re.IGNORECASE)


def _quote_html(text: str) -> str:
    """``text`` with the ``<`` of each :data:`_HIDING_HTML` tag escaped (one already
    escaped is left alone)."""
    if "<" not in text:
        return text
    spots = [m.start() for m in _HIDING_HTML.finditer(text) if _unescaped(text, m.start())]
    return _escaped_at(text, spots)


#: A code fence line (CommonMark): up to 3 spaces, then 3 or more backticks or tildes.
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")


def _closed_fence(text: str) -> str:
    """``text`` with a closing fence line appended when it ends inside a code fence (its
    own, or one the cut at :data:`BODY_CHARS` left open): else a markdown reader takes the
    end marker and every later row of the block for code of the body."""
    if "```" not in text and "~~~" not in text:
        return text
    opened = ""
    for line in text.split("\n"):
        m = _FENCE.fullmatch(line)
        if m is None:
            continue
        run, rest = m.groups()
        if not opened:
            if not (run[0] == "`" and "`" in rest):  # a backtick fence's info has no backtick
                opened = run
        elif run[0] == opened[0] and len(run) >= len(opened) and not rest.strip():
            opened = ""
    if not opened:
        return text
    return text + ("" if text.endswith("\n") else "\n") + opened


def _placed_body(body: str) -> str:
    """The head of a skill body (:data:`BODY_CHARS` × 4 characters: placing only shrinks it
    or escapes a few characters) placed by the rule of :func:`block_body`, before its bound."""
    text = printable(line_breaks_to_lf(body[: 4 * BODY_CHARS + 1]), keep="\n\t")
    if _OPEN_OR_HASH.search(text):
        text = "\n".join(map(_fence_line, text.split("\n")))
    if _has_arrow(text):
        text = _escaped_at(text, _marker_spots(text))
    return _quote_html(text)


def block_body(body: str, lang: str = "en", was_cut: bool = False, limit: int = BODY_CHARS) -> str:
    """A skill body as it goes between the header and the end marker: its line breaks as LF,
    control and format characters visible (TAB kept: it is a code block's indentation and
    moves no cursor out of its line), labels quoted, every line that starts like a block line
    or imitates the heading escaped — after whatever a reader does not see at its start —,
    HTML that hides what follows escaped (:data:`_HIDING_HTML`), then bounded at ``limit``
    characters (:data:`BODY_CHARS`, less for a budget) with a visible cut, and a code fence
    left open closed. The reference's body (``classic``, ``talos.compat``); the product's is
    cut at a line boundary (:func:`body_by_lines`)."""
    text = _placed_body(body)
    was_cut = was_cut or len(body) > 4 * BODY_CHARS + 1
    mark = labels(lang)["cut"].format(n=limit)
    return _closed_fence(cut(text, limit, mark, was_cut=was_cut))


def body_by_lines(
    body: str, where: str, lang: str = "en", limit: int = BODY_CHARS, more: bool = False
) -> str:
    """A skill body placed by the rule of :func:`block_body`, bounded at ``limit`` characters
    at a **line boundary** (design §6.1 rule 6): its first whole lines, then one line saying
    how many lines are left and where the file is, ``…(4 more lines in `~/skills/deploy/
    SKILL.md`)`` — a reader knows the steps it holds are whole and where the rest is (a cut
    mid-line lost the deploy skill's rollback step in the middle of its list). ``more``:
    ``body`` is the head of a longer file (the first 1200 characters are delivered, design
    §3.2): its last line is not whole, and the count is a lower bound, ``4+ more lines``. A
    first line longer than the bound is cut inside, at a word boundary. A code fence left
    open is closed. ``where``: the file as the block shows it (one line, labels quoted).

    Returns:
        The body as placed when it fits ``limit`` whole, else its head and the line."""
    text = _placed_body(body)
    more = more or len(body) > 4 * BODY_CHARS + 1
    if not more and len(text) <= limit:
        return _closed_fence(text)
    lines = text.rstrip("\n").split("\n")
    whole = lines[:-1] if more and len(lines) > 1 else lines  # a head's last line goes on
    form = labels(lang)["lines_left"]

    def with_mark(k: int) -> str:
        left = f"{len(lines) - k}+" if more else str(len(lines) - k)
        return "\n".join(whole[:k]) + "\n" + form.format(n=left, path=where)

    lo, hi, best = 1, len(whole), 0
    while lo <= hi:  # the most whole lines that fit beside the line saying what is left
        mid = (lo + hi) // 2
        if len(with_mark(mid)) <= limit:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    if best:
        return _closed_fence(with_mark(best))
    mark = with_mark(1)[len(whole[0]) :]  # the line saying what is left, after the first
    room = max(limit - len(mark), 1)
    return _closed_fence(cut(whole[0], room, "…", was_cut=True) + mark)


def shown(text: str, lang: str = "en", limit: int = TEXT_CHARS, was_cut: bool = False) -> str:
    """A stored text as any output shows it on one line (a block line, a table cell, a page):
    :func:`talos.text.one_line`, its labels quoted (:func:`quote_labels`: a terminal's wrap
    can put one at a line start), bounded at ``limit``
    characters with the visible cut of ``lang`` (``…(cut at 600 characters)``). ``was_cut``:
    the text is already the head of a longer one (an episode), so it is cut at a word
    boundary and marked even when it fits."""
    if (
        not was_cut
        and len(text) <= limit
        and is_plain(text)
        and not _has_opener(text)
        and not _has_arrow(text)
    ):
        return text  # most texts: nothing to fold, show, quote or cut
    head = text[: 4 * limit + 1]  # folding only shrinks, escapes grow: enough to fill limit
    return cut(
        quote_labels(one_line(head)),
        limit,
        labels(lang)["cut"].format(n=limit),
        was_cut=was_cut or len(head) < len(text),
    )


def _header_path(path: str) -> str:
    """A file path inside the body header's brackets: on one line, its labels quoted (the
    header wraps in a terminal), and each ``]`` escaped (it would close the header early and
    leave the rest of the line outside it)."""
    return quote_labels(one_line(path)).replace("]", "\\]").replace("\uff3d", "\\\uff3d")


#: Dashes a reader takes for a date's ``-`` once :func:`_read` folded the full-width and small
#: forms: the hyphens, figure dash, en and em dashes, the minus sign.
_DASHES = "\\-\u2010-\u2015\u2212"

#: Parentheses a reader takes for ``(`` ``)`` once folded: the ornamental, flattened, white
#: and double forms NFKC leaves alone.
_LPARENS = "(\u2768\u276a\u27ee\u2985\u2e28\ufd3e"

_RPARENS = ")\u2769\u276b\u27ef\u2986\u2e29\ufd3f"

#: A day as a reader reads it (any script's digits, :data:`_DASHES`, a space around each).
_DAY_LIKE = f"\\d{{4}} ?[{_DASHES}] ?\\d{{2}} ?[{_DASHES}] ?\\d{{2}}"

#: What reads as a date label at a text's start (:func:`_read`: full-width digits, dashes and
#: brackets folded, spaces dropped around them).
_DATE_LIKE = re.compile(f"[{_LPARENS}] ?{_DAY_LIKE} ?[{_RPARENS}]")

#: Most characters of a text's start that can read as a date label: 16, each perhaps the
#: escape of an unseen character, or one.
_DATE_HEAD = 4 * 16


def _reads_as_date(text: str) -> bool:
    """Whether ``text`` starts, as a reader reads it (:func:`_read`), like the date label
    talos writes (:func:`date_shown`): ``(2099-01-01)``, ``（２０９９－０１－０１）``,
    ``( 2099 – 01 – 01 )``. A quick test first: an ASCII text without ``(`` cannot."""
    head = text[:_DATE_HEAD]
    if head.isascii() and "(" not in head:
        return False
    return _DATE_LIKE.match(_read(head)) is not None


def undated(text: str) -> str:
    """A shown text placed where a row's date goes (a fact's text, a skill's label, an
    episode's task) that cannot pass for the date talos writes there (:func:`date_shown`,
    :func:`origin_label`): one that starts, as a reader reads it, like ``(1999-01-01)`` —
    full-width forms and look-alike dashes folded (the attacker's pass 22:
    ``（２０９９－０１－０１）`` passed a test for an ASCII ``-``) — gets a backslash before it
    (the markdown escape, as :func:`quote_labels` does for a label)."""
    return "\\" + text if _reads_as_date(text) else text
