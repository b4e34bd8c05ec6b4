"""One row of the block (design §6.1 step 3): a picked record (:class:`Pick`) as its lines, a
fact with its date and heading, a skill by its label or with its body between the header and
the end marker, an episode with its origin, outcome and transcript; every stored text in it
placed by :mod:`talos.render.quote`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from talos.model import Node
from talos.render.labels import BODY_CHARS, TEXT_CHARS, labels
from talos.render.quote import (
    _LPARENS,
    _header_path,
    _quote_html,
    _read,
    _reads_as_date,
    block_body,
    body_by_lines,
    quote_labels,
    shown,
    undated,
)
from talos.sources.facts import HEADING_CHARS
from talos.sources.sessions import EPISODE_CHARS, OUTCOME_CHARS, session_origin
from talos.sources.skills import SKILL_FILE, parse_frontmatter
from talos.text import cut, one_line
from talos.view.trust import clock_error, from_model, person_wrote

__all__ = [
    "Pick",
    "date_shown",
    "folder_path",
    "heading_shown",
    "origin_label",
    "short_path",
    "shown_with_members",
    "skill_shown",
    "source_shown",
    "without_frontmatter",
]


@dataclass(slots=True)
class Pick:
    """One picked row of a recall: the node, its rounded score, whether its body is given,
    the heading it is shown under (a fact's nearest markdown heading, issue 15 item 4;
    "" for none, and always with ``classic``, whose headings are facts), and ``reference``:
    the row is shown as the reference shows it (``classic``, design §6.1 rule 3: a skill by
    its file name, no date, an episode by its opening request alone)."""

    node: Node
    score: float
    body: bool
    heading: str = ""
    reference: bool = False
    #: The source mark the block's heading says for every fact (:func:`source_shown`): the
    #: row does not repeat it.
    said: str = ""


def short_path(path: str, reference: bool = False) -> str:
    """A file path as a block row shows it (design §6.1 rule 6: paths are shown short): under
    the person's home folder, ``~/`` and the rest (``~/.claude/projects/…/a1b2.jsonl``, which
    an agent's file tools expand); else as stored. ``reference``: as stored (the reference's
    block, ``classic`` and ``talos.compat``)."""
    if reference or not path:
        return path
    home = os.path.expanduser("~")
    if home in ("", "~", os.sep):
        return path
    head = home.rstrip("/\\") + os.sep
    return "~" + os.sep + path[len(head) :] if path.startswith(head) else path


def _limits(n: Node) -> tuple[int, bool]:
    """The bound of a node's text and whether it is known to be a head already: an episode's
    text is the first :data:`EPISODE_CHARS` characters of its request (design §3.3), so one that
    long is taken as cut (a request of exactly 80 characters loses its last word to the mark;
    the node does not keep the request's length)."""
    if n.kind == "episode":
        return EPISODE_CHARS, len(n.text) >= EPISODE_CHARS
    return TEXT_CHARS, False


def shown_with_members(n: Node, lang: str = "en", limit: int = 2) -> str:
    """The node's text and up to ``limit`` merged members (``"\\n  · member"`` each, design
    §6.2), each stored text shown by :func:`shown`: the block's lines, explain's table."""
    bound, was_cut = _limits(n)
    lines = [shown(n.text, lang, bound, was_cut)]
    for m in n.members[:limit]:
        bound, was_cut = _limits(m)
        lines.append("  · " + shown(m.text, lang, bound, was_cut))
    return "\n".join(lines)


def origin_label(n: Node, lang: str = "en", reference: bool = False) -> str:
    """The agent and day an episode came from, as its block line starts (issue 16.4):
    ``(Claude Code, 2026-11-30) `` (:func:`talos.sources.sessions.session_origin`); "" when
    neither is known, and for the reference's Chinese rows (``reference``): its block has no
    such field and its parsers get its exact lines (design §6.7)."""
    form = labels(lang, reference)["episode_from"]
    if not form or not n.path:
        return ""
    origin = ", ".join(part for part in session_origin(n.path) if part)
    return form.format(origin=origin) if origin else ""


def heading_shown(heading: str, lang: str = "en", reference: bool = False) -> str:
    """The heading a fact's block line starts with: ``(Project: billing) `` (issue 15 item 4,
    the style of an episode's origin, :func:`origin_label`), the heading as stored text
    (:func:`shown`: one line, labels quoted, control characters visible), cut at
    :data:`~talos.sources.facts.HEADING_CHARS` characters with ``…``; "" for no heading, and
    for the reference's rows (``reference``): its block has no such field (design §6.7). A
    heading that
    reads as a day, ``## 2099-01-01`` (or its full-width form, or in its own parentheses),
    gets a backslash, ``(\\2099-01-01) ``: the row must not show a date its fact's tag does
    not carry (the attacker's pass 22, :func:`undated`)."""
    form = labels(lang, reference)["heading_from"]
    if reference or not form or not heading:
        return ""
    text = cut(shown(heading, lang, 4 * HEADING_CHARS), HEADING_CHARS, "…")
    if _reads_as_date("(" + _read(text).lstrip(_LPARENS + " ") + ")"):
        text = "\\" + text  # "## 2099-01-01" shown "(2099-01-01) ", a tag date's form
    return form.format(heading=text)


#: A day as a block line shows it: ``YYYY-MM-DD`` in ASCII digits (a tag's ``\d`` takes any
#: script's digits; those are not shown).
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def date_shown(n: Node, lang: str = "en") -> str:
    """The date a fact's block line starts with: ``(2023-05-08) ``, its provenance tag's date
    (design §3.1, §6.1 rule 5: "when" questions need it; LoCoMo's facts carry their session's
    date there). "" for a fact without a tag, any other kind (an episode's day is in its
    origin, :func:`origin_label`), a request-scoped override (the reference's rows show no
    date: their callers ask for none). talos writes the date, from the parsed tag, before the
    stored text: a text cannot supply or imitate it in its place. A date after tomorrow is a
    clock error (:func:`talos.view.trust.clock_error`: "the date is not used"), not shown as
    the day the fact was seen: "(2226-12-07)" read as the newest evidence of all
    (tests/test_provenance_attack.py)."""
    form = labels(lang)["date_from"]
    if not form or n.kind != "fact" or n.src == "override" or not _DAY.fullmatch(n.born):
        return ""
    if clock_error(n.born):
        return ""
    return form.format(date=n.born)


def source_shown(n: Node, lang: str = "en", reference: bool = False) -> str:
    """Who says a fact, inside its kind label (design §6.1 rule 3, §7.1 provenance): ""
    for the person's own lines (``src=user``, not written by a model over MCP), else
    `` · from a model`` (``src=reflect``, or any line MCP's ``remember`` wrote: ``by=mcp``,
    whatever source it claims), `` · from a tool``, `` · imported``, `` · from SRC`` — so
    an agent can weigh it; the row's date is the tag's (:func:`date_shown`). "" for any other
    kind, a request-scoped override (its own note says what it is) and the reference's rows.
    A fact a model wrote through MCP read exactly like one the person wrote."""
    if reference or n.kind != "fact" or n.src == "override" or person_wrote(n.src, n.fields):
        return ""
    t = labels(lang)
    if from_model(n.fields) or n.src == "reflect":
        return t["by_model"]
    if n.src in ("tool", "import"):
        return t["by_" + n.src]
    return t["by_other"].format(src=shown(n.src, lang, 40))


def _task(n: Node, reference: bool) -> str:
    """The text an episode is shown by: its real task (design §3.3: not a slash command's text,
    not a continuation), or the opening request the reference shows (``reference``, or a
    session whose opening is its task)."""
    return n.text if reference or not n.task else n.task


def _episode_entry(n: Node, lang: str, reference: bool = False) -> str:
    """An episode's lines: ``- [episode] (AGENT, DAY) TASK`` cut at a word boundary with the
    visible mark, its merged members (each with its own origin), the note that these are a
    previous task's words, then (every model but the reference, design §3.3) what the session
    did — ``  → outcome: …`` (the assistant's last answer, cut at
    :data:`talos.sources.sessions.OUTCOME_CHARS` with the visible mark) — and
    ``  → transcript: PATH`` to open it. Each stored text is placed by :func:`shown` (one
    line, labels and the markers of these lines quoted), so none starts a line of its own or
    names a second transcript, and a task cannot show a date where the session's day goes
    (:func:`undated`)."""
    t = labels(lang, reference)

    def task(e: Node) -> str:
        text = _task(e, reference)  # a head of EPISODE_CHARS, as the request (_limits)
        text = shown(text, lang, EPISODE_CHARS, len(text) >= EPISODE_CHARS)
        return text if reference or not t["date_from"] else undated(text)

    lines = [f"- [{t['episode']}] {origin_label(n, lang, reference)}{task(n)}"]
    lines += [f"  · {origin_label(m, lang, reference)}{task(m)}" for m in n.members[:2]]
    out = "\n".join(lines)
    if reference:  # the reference's note on the row; the product's is the heading's
        return out + t["episode_note"]
    if n.outcome:
        cut_off = len(n.outcome) > OUTCOME_CHARS
        answer = shown(n.outcome[:OUTCOME_CHARS], lang, OUTCOME_CHARS, cut_off)
        out += "\n" + t["outcome"].format(text=answer)
    if n.path:
        where = quote_labels(one_line(short_path(n.path, reference)))
        out += "\n" + t["transcript"].format(path=where)
    return out


def _labelled(n: Node) -> bool:
    """Whether a skill's label comes from its frontmatter (``name``/``description``), not
    from its first 60 characters (design §3.2: a file with neither)."""
    return bool(n.text) and n.text != n.body[:60]


def skill_shown(n: Node, lang: str = "en", reference: bool = False, limit: int = TEXT_CHARS) -> str:
    """A skill's row text without its body (design §6.1 rule 3): its ``name:`` and description
    (the label, bounded by :func:`talos.sources.skills.skill_label`: name 60, description 400,
    each cut visibly) — an agent that calls talos through a hook or MCP has no list of the
    home's skills in its prompt —, or its file name without ``.md`` when it has neither, and
    always with the reference (``classic``, ``talos.compat``: the reference's block, design
    §6.7: ``- [技能] {name}``, which its agents parse). A ``skills/NAME/SKILL.md``
    skill (design §3.2) is followed by its folder, where its other files are. Where rows show
    dates, a label that starts like one is escaped (:func:`undated`)."""
    t = labels(lang, reference)
    extended = not reference and bool(t["date_from"])
    name = n.text if extended and _labelled(n) else n.name or n.text
    text = shown(name, lang, limit)
    if extended:  # a skill has no date: "name: (2099-01-01) deploy" cannot show one
        text = undated(text)
    form = t["skill_folder"]
    if form and not reference and _other_files(n):
        text += form.format(path=quote_labels(one_line(short_path(folder_path(n)))))
    return text


def _in_folder(n: Node) -> bool:
    """Whether a skill is read from the Agent Skills layout (``skills/NAME/SKILL.md``)."""
    return n.kind == "skill" and n.path.replace("\\", "/").rsplit("/", 1)[-1] == SKILL_FILE


def _other_files(n: Node) -> bool:
    """Whether ``n`` is a ``skills/NAME/SKILL.md`` skill whose folder holds anything besides
    SKILL.md (hidden names such as ``.DS_Store`` aside): only then does its row point at the
    folder ("holds its other files" was said of a folder holding SKILL.md alone)."""
    if not _in_folder(n):
        return False
    try:
        with os.scandir(folder_path(n) or ".") as entries:
            return any(e.name != SKILL_FILE and not e.name.startswith(".") for e in entries)
    except OSError:  # gone or unreadable since it was read: nothing to point at
        return False


def folder_path(n: Node) -> str:
    """The folder of a ``skills/NAME/SKILL.md`` skill, with a trailing separator."""
    return n.path[: -len(SKILL_FILE)]


def without_frontmatter(body: str) -> str:
    """A skill body without its frontmatter block (``---`` … ``---``; design §3.2's parser): what
    a body cut for a budget keeps, since the header line names the file and the frontmatter
    repeats its name and description (the newcomer's ``--budget 500`` kept ``name:`` and
    ``description:`` and cut the steps at the second). A body without one is returned as is."""
    fields, rest = parse_frontmatter(body)
    return rest.lstrip("\n") if fields or rest != body else body


def _entry(p: Pick, lang: str, body_chars: int = BODY_CHARS) -> str:
    """The lines of one pick in the block (design §6.1 step 3), ``body_chars`` the body's bound
    (below :data:`BODY_CHARS`, a budget's cut: the frontmatter goes first,
    :func:`without_frontmatter`). talos's own lines hold no HTML: :func:`_quote_html` escapes
    what stored text brought."""
    t = labels(lang, p.reference)
    n = p.node
    if p.body:
        where = _header_path(short_path(n.path, p.reference))
        if p.reference:  # the reference's body: its first 1200 characters, cut in a word
            text = n.body if body_chars >= BODY_CHARS else without_frontmatter(n.body)
            body = block_body(text, lang, was_cut=len(text) > body_chars, limit=body_chars)
        else:  # whole lines, then how many are left and where (body_by_lines)
            more = len(n.body) > BODY_CHARS  # the node holds one character past the head
            text = n.body if len(n.body) <= body_chars else without_frontmatter(n.body)
            body = body_by_lines(text[: BODY_CHARS + more], where, lang, body_chars, more)
        lines = [t["body_open"].format(path=where) + "\n" + body + "\n" + t["body_close"]]
        if t["skill_folder"] and not p.reference and _other_files(n):
            lines[0] += "\n  →" + t["skill_folder"].format(
                path=quote_labels(one_line(short_path(folder_path(n))))
            )
        for m in n.members[:2]:
            text = shown(m.text, lang)
            if not p.reference and t["date_from"]:
                text = undated(text)  # the line shows no date: its text cannot forge one
            line = t["companion"].format(kind=t[m.kind], text=text)
            if m.path and m.kind == "skill":
                path = short_path(m.path, p.reference)
                line += t["companion_path"].format(path=quote_labels(one_line(path)))
            lines.append(line)
        return _quote_html("\n".join(lines))
    if n.kind == "skill":
        return _quote_html(f"- [{t['skill']}] {skill_shown(n, lang, p.reference)}")
    if n.kind == "episode":
        return _quote_html(_episode_entry(n, lang, p.reference))
    if p.reference:
        text = shown_with_members(n, lang)
    else:  # each merged member with its own date
        text = undated(shown(n.text, lang)) + "".join(
            f"\n  · {date_shown(m, lang)}{undated(shown(m.text, lang))}" for m in n.members[:2]
        )
    date = "" if p.reference else date_shown(n, lang)
    who = source_shown(n, lang, p.reference)
    who = "" if who == p.said else who
    line = f"- [{t[n.kind]}{who}] {date}{heading_shown(p.heading, lang, p.reference)}{text}"
    if n.src == "override":
        line += t["override_note"]
    return _quote_html(line)


def _cut_entry(p: Pick, lang: str, chars: int) -> str:
    """The one line of ``p`` with its text cut to ``chars`` characters (with the visible cut
    mark, at a word boundary when one is near) and no merged members: the first row when a
    budget has no room for it whole (:func:`fit_block`)."""
    t = labels(lang, p.reference)
    n = p.node
    if n.kind == "skill":
        return _quote_html(f"- [{t['skill']}] {skill_shown(n, lang, p.reference, chars)}")
    if n.kind == "episode":
        task = _task(n, p.reference)
        was_cut = len(task) >= EPISODE_CHARS or len(task) > chars
        text = shown(task, lang, chars, was_cut)
        if not p.reference and t["date_from"]:
            text = undated(text)
        note = t["episode_note"] if p.reference else ""  # the product's: the heading's
        return _quote_html(f"- [{t['episode']}] {origin_label(n, lang, p.reference)}{text}{note}")
    date = "" if p.reference else date_shown(n, lang)
    text = shown(n.text, lang, chars)
    if not p.reference:
        text = undated(text)
    who = source_shown(n, lang, p.reference)
    who = "" if who == p.said else who
    line = f"- [{t[n.kind]}{who}] {date}{heading_shown(p.heading, lang, p.reference)}{text}"
    return _quote_html(line)
