"""The block within a budget (design §6.1 rule 6): the rows in rank order, a skill body at its
skill's rank cut at a line boundary to what the rows above leave, the least relevant rows left
out, with a line saying so (:func:`fit_block`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from talos.errors import InputError
from talos.render.labels import BODY_CHARS, TEXT_CHARS, labels
from talos.render.labels import heading as heading_line
from talos.render.rows import Pick, _cut_entry, _entry, source_shown

__all__ = [
    "MIN_BODY",
    "MIN_BUDGET",
    "MIN_ROW",
    "UNITS",
    "check_budget",
    "fit_block",
    "render_block",
    "size",
]


#: Fewest characters (or bytes, :data:`UNITS`) a recall budget may be (design §6.1 rule 6): the
#: heading line (73 characters in English, 85 UTF-8 bytes in Chinese) and a short row. A
#: block holds the heading and at least one row, or it is empty; a smaller budget could never
#: hold a row, so it is refused rather than silently giving nothing.
MIN_BUDGET = 200

#: Fewest characters a skill body is cut to for a budget: shorter, it says too little to be
#: worth its header and end marker, and the skill is shown by name instead.
MIN_BODY = 200

#: Fewest characters the first row's text is cut to when a budget has no room for it whole
#: (:func:`fit_block`): shorter, it says too little to stand for the most relevant record,
#: and the block is empty instead.
MIN_ROW = 40

#: How a budget is counted: ``chars`` (code points, the default), ``utf16`` (JavaScript's
#: ``String.length``: Claude Code), ``bytes`` (UTF-8: Codex counts ``ceil(bytes / 4)`` tokens).
UNITS = ("chars", "utf16", "bytes")


def size(text: str, unit: str = "chars") -> int:
    """Size of ``text`` counted in ``unit`` (:data:`UNITS`).

    Raises:
        ValueError: an unknown unit.
    """
    if unit == "chars":
        return len(text)
    if unit == "utf16":
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    if unit == "bytes":
        return len(text.encode("utf-8", "surrogatepass"))
    raise ValueError(f"unknown budget unit {unit!r}; choose one of: {', '.join(UNITS)}")


def _left_out(rows: int, body: bool, budget: int, unit: str, lang: str) -> str:
    """The line saying what a budget left out: ``(3 more rows left out: budget 2,000
    characters)``, ``(a skill body and 1 more row left out …)``."""
    t = labels(lang)
    plural = "row" if rows == 1 else "rows"
    key = "left_both" if body and rows else "left_body" if body else "left_rows"
    what = t[key].format(n=rows, rows=plural)
    word = t["bytes"] if unit == "bytes" else t["chars"]
    return t["left_out"].format(what=what, limit=f"{budget:,}", unit=word)


def check_budget(budget: int | None, unit: str = "chars") -> None:
    """Refuse a budget no block fits in (design §6.1 rule 6), before a recall writes anything.

    Raises:
        InputError: ``budget`` not a whole number or below :data:`MIN_BUDGET`, or ``unit``
            not one of :data:`UNITS` (a person's option or a caller's argument: the message
            says what to ask for; ``"300"`` raised a TypeError).
    """
    if unit not in UNITS:
        raise InputError(f"unknown budget unit {unit!r}; choose one of: {', '.join(UNITS)}")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)):
        raise InputError(f"budget must be a whole number of {unit}, not {budget!r}")
    if budget is not None and budget < MIN_BUDGET:
        word = "bytes" if unit == "bytes" else "characters"
        raise InputError(
            f"budget {budget} is too small: a block needs at least {MIN_BUDGET} {word}"
            f" (its heading and one row); ask for {MIN_BUDGET} or more"
        )


def fit_block(
    picks: Sequence[Pick],
    lang: str = "en",
    budget: int | None = None,
    unit: str = "chars",
    weak: bool = False,
) -> tuple[str, list[Pick]]:
    """The context block of ``picks`` within ``budget``, and the picks it delivers (design §6.1
    rule 6): the trace and usage count only these (§6.3 "only delivered rows are hits").

    Over budget, the rows are placed in rank order and a skill body travels with its skill's
    rank: it takes what the rows above it leave (cut at a line boundary, saying how many lines
    are left and where the file is: :func:`talos.render.quote.body_by_lines`, down to
    :data:`MIN_BODY` characters, else the skill is shown by name), and the rows below fill what
    remains. The least relevant rows (the last in rank order) are left out first, with a last
    line saying so, counted towards the budget. (The body was cut first, before any row: the
    deploy skill lost its rollback step while an unrelated episode stayed; the top row's body
    is the most useful thing in the block.) When not even the first row fits, it is
    delivered alone with its text cut (visible mark, no merged members) to the longest that
    fits beside that line, down to :data:`MIN_ROW` characters; below that the block is
    empty. A lower row is never delivered in a higher one's place (issue 15 item 5).

    Args:
        picks: the rows in rank order. lang: ``en`` or ``zh``. budget: most ``unit`` the
            block may take; ``None``: no bound. unit: one of :data:`UNITS`. weak: the rows
            are weak matches, and the heading says so (:func:`talos.render.labels.heading`).

    Returns:
        ``(text, delivered)``: ``delivered`` is a prefix of ``picks``, a pick's ``body`` false
        when its body was left out; ``("", [])`` when nothing was picked or fits.

    Raises:
        InputError: ``budget`` below :data:`MIN_BUDGET`, an unknown ``unit``
            (:func:`check_budget`). ValueError: an unknown language.
    """
    check_budget(budget, unit)
    rows = list(picks)
    if not rows:
        return "", []
    # an episode's note is said once in the heading (the reference says it on each row)
    episodes = [p.node.kind == "episode" and not p.reference for p in rows]
    # a source every fact shares is said once in the heading (an imported history: each of
    # its rows said " · imported")
    sources = {source_shown(p.node, lang, p.reference) for p in rows if p.node.kind == "fact"}
    said = sources.pop() if len(sources) == 1 else ""
    facts = [p.node.kind == "fact" for p in rows]
    rows = [dataclasses.replace(p, said=said) for p in rows] if said else rows
    heading = heading_line(lang, weak, any(episodes), said)
    entries = [_entry(p, lang) for p in rows]
    if budget is None:
        return heading + "\n" + "\n".join(entries), rows
    sizes = [size("\n" + e, unit) for e in entries]
    room = budget - size(heading, unit)
    if sum(sizes) <= room:
        return heading + "\n" + "\n".join(entries), rows
    body_left = False  # a body left out (its skill shown by name), for the last line
    used = 0
    placed: list[str] = []
    for i, p in enumerate(rows):
        rest = len(rows) - i - 1  # rows below this one, left out if it is the last placed

        def note(rows_out: int, body_out: bool) -> int:
            if not rows_out and not body_out:
                return 0
            return size("\n" + _left_out(rows_out, body_out, budget, unit, lang), unit)

        entry = entries[i]
        if used + sizes[i] + note(rest, body_left) > room and p.body:
            # the body takes what the rows above left: the most whole lines that fit
            cut = _fit_body(p, lang, room - used - note(rest, body_left), unit)
            if cut is None:
                p = rows[i] = Pick(p.node, p.score, False, p.heading, p.reference)
                entry, body_left = _entry(p, lang), True
            else:
                entry = cut
        if used + size("\n" + entry, unit) + note(rest, body_left) > room:
            # the first row that does not fit whole is cut to what is left, when that is
            # MIN_ROW characters or more (the budget is filled; the rows below it go)
            if placed and not p.body:
                last = _fit_row(p, lang, room - used - note(rest, body_left), unit)
                if last is not None:
                    placed.append(last)
            break
        placed.append(entry)
        used += size("\n" + entry, unit)
    n = len(placed)
    if n:
        tail = ""
        if n < len(rows) or body_left:
            tail = "\n" + _left_out(len(rows) - n, body_left, budget, unit, lang)
        heading = heading_line(lang, weak, any(episodes[:n]), said if any(facts[:n]) else "")
        return heading + "\n" + "\n".join(placed) + tail, rows[:n]
    # not even the first row fits: it is cut to the longest text that fits beside the line,
    # and a lower row never stands in its place (the attacker's pass: "deploy" at --budget 300
    # delivered the less relevant fact alone, the most relevant left out first)
    # A budget that has room for the heading and MIN_ROW characters of the row but not for the
    # left-out line too delivers the row without the line (its cut mark says it was cut): 40
    # matching facts at --budget 200, the least a block is promised, gave an empty block.
    first = rows[0]
    if first.body:
        first = Pick(first.node, first.score, False, first.heading, first.reference)
    notes = [""]  # a lone row cut: its cut mark says so
    if len(rows) > 1 or rows[0].body:
        notes.insert(0, "\n" + _left_out(len(rows) - 1, rows[0].body, budget, unit, lang))
    for tail in notes:
        lo, hi, best = MIN_ROW, TEXT_CHARS - 1, None
        while lo <= hi:
            mid = (lo + hi) // 2
            entry = _cut_entry(first, lang, mid)
            if size("\n" + entry, unit) + size(tail, unit) <= room:
                best, lo = entry, mid + 1
            else:
                hi = mid - 1
        if best is not None:
            line = heading_line(lang, weak, episodes[0], said if facts[0] else "")
            return line + "\n" + best + tail, [first]
    return "", []


def _fit_row(p: Pick, lang: str, room: int, unit: str) -> str | None:
    """The one line of ``p`` with its text cut (visible mark, no merged members) to the
    longest that takes at most ``room`` ``unit`` with its newline; None below
    :data:`MIN_ROW` characters."""
    return _longest(MIN_ROW, TEXT_CHARS - 1, lambda n: _cut_entry(p, lang, n), room, unit)


def _fit_body(p: Pick, lang: str, room: int, unit: str) -> str | None:
    """The entry of ``p`` with its body cut to the most whole lines whose entry takes at most
    ``room`` ``unit`` (with its newline); None when not even :data:`MIN_BODY` characters fit."""
    return _longest(MIN_BODY, BODY_CHARS - 1, lambda n: _entry(p, lang, n), room, unit)


def _longest(lo: int, hi: int, entry: Callable[[int], str], room: int, unit: str) -> str | None:
    """``entry(n)`` for the largest ``n`` in ``lo..hi`` that takes at most ``room`` ``unit``
    with its newline (a binary search: an entry grows with ``n``); None when none does."""
    best = None
    while lo <= hi:
        mid = (lo + hi) // 2
        got = entry(mid)
        if size("\n" + got, unit) <= room:
            best, lo = got, mid + 1
        else:
            hi = mid - 1
    return best


def render_block(
    picks: Sequence[Pick],
    lang: str = "en",
    budget: int | None = None,
    unit: str = "chars",
    weak: bool = False,
) -> str:
    """The context block an agent pastes into its prompt (design §6.1 step 3–4, rule 6).

    Returns:
        "" when nothing was picked; otherwise the heading line, then one entry per pick in
        rank order: the skill body between header and end marker (plus up to 2 merged
        companions by label and path), ``- [skill] NAME`` for other skills (never the
        description: the agent's system prompt already lists it), ``- [fact] TEXT`` and
        ``- [episode] TEXT`` with up to 2 merged members, episodes marked as past words.
        Every stored text is placed by the rule of :mod:`talos.render`'s docstring (design §6.1 item
        7): it cannot start a block line, close the body or carry a control character.
        With a ``budget`` (in ``unit``), the block is cut to it by :func:`fit_block`.

    Raises:
        InputError, ValueError: see :func:`fit_block`.
    """
    return fit_block(picks, lang, budget, unit, weak)[0]
