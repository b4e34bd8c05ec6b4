"""The block within a budget (design §6.1 rule 6): the rows in rank order, a skill body cut
first, then the least relevant rows left out, with a line saying so (:func:`fit_block`)."""

from __future__ import annotations

from collections.abc import Sequence

from talos.errors import InputError
from talos.render.labels import BODY_CHARS, TEXT_CHARS, labels
from talos.render.labels import heading as heading_line
from talos.render.rows import Pick, _cut_entry, _entry

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
#: heading line (100 characters in English, 85 UTF-8 bytes in Chinese) and a short row. A
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
    """The line saying what a budget left out: ``(3 more recalled rows left out to stay
    within 2,000 characters)``, ``(a skill body and 1 more recalled row left out …)``."""
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

    Over budget, in this order: the skill body is cut (at a word boundary, with the visible
    cut mark) to the longest that fits, down to :data:`MIN_BODY` characters, else the skill
    is shown by name; then the least relevant rows (the last in rank order) are left out. A
    last line then says what was left out, and it counts towards the budget. When not even
    the first row fits, it is delivered alone with its text cut (visible mark, no merged
    members) to the longest that fits beside that line, down to :data:`MIN_ROW` characters;
    below that the block is empty. A lower row is never delivered in the first one's place
    (issue 15 item 5: the least relevant rows go first).

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
    heading = heading_line(lang, weak)
    entries = [_entry(p, lang) for p in rows]
    if budget is None:
        return heading + "\n" + "\n".join(entries), rows
    sizes = [size("\n" + e, unit) for e in entries]
    room = budget - size(heading, unit)
    if sum(sizes) <= room:
        return heading + "\n" + "\n".join(entries), rows
    body = next((i for i, p in enumerate(rows) if p.body), None)
    if body is not None:
        # 1. the body is cut before any row is left out: the longest bound that fits
        others = sum(sizes) - sizes[body]
        lo, hi, best = MIN_BODY, BODY_CHARS - 1, None
        while lo <= hi:
            mid = (lo + hi) // 2
            entry = _entry(rows[body], lang, mid)
            if others + size("\n" + entry, unit) <= room:
                best, lo = entry, mid + 1
            else:
                hi = mid - 1
        if best is not None:
            entries[body] = best
            return heading + "\n" + "\n".join(entries), rows
        p = rows[body]
        rows[body] = Pick(p.node, p.score, False, p.heading, p.reference)
        entries[body] = _entry(rows[body], lang)
        sizes[body] = size("\n" + entries[body], unit)
    # 2. then the least relevant rows go, until they and the line saying so fit
    kept = sum(sizes)
    for n in range(len(rows), 0, -1):
        note = ""
        if n < len(rows) or body is not None:
            note = "\n" + _left_out(len(rows) - n, body is not None, budget, unit, lang)
        if kept + size(note, unit) <= room:
            return heading + "\n" + "\n".join(entries[:n]) + note, rows[:n]
        kept -= sizes[n - 1]
    # 3. not even the first row fits: it is cut to the longest text that fits beside the line,
    # and a lower row never stands in its place (the attacker's pass: "deploy" at --budget 300
    # delivered the less relevant fact alone, the most relevant left out first)
    # A budget that has room for the heading and MIN_ROW characters of the row but not for the
    # left-out line too delivers the row without the line (its cut mark says it was cut): 40
    # matching facts at --budget 200, the least a block is promised, gave an empty block.
    notes = [""]  # a lone row cut: its cut mark says so
    if len(rows) > 1 or body is not None:
        notes.insert(0, "\n" + _left_out(len(rows) - 1, body is not None, budget, unit, lang))
    for note in notes:
        lo, hi, best = MIN_ROW, TEXT_CHARS - 1, None
        while lo <= hi:
            mid = (lo + hi) // 2
            entry = _cut_entry(rows[0], lang, mid)
            if size("\n" + entry, unit) + size(note, unit) <= room:
                best, lo = entry, mid + 1
            else:
                hi = mid - 1
        if best is not None:
            return heading + "\n" + best + note, rows[:1]
    return "", []


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
