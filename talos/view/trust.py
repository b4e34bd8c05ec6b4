"""Trust: the authorized active view, authority, conflicts, overrides (design §7).

A retrieval hit is not permission to believe. Before ranking, :func:`build_view` decides for
every record whether it is authorized (scope), active (status), valid at the request's business
date, and uncontested (canonical key). Every reader — recall, explain, get, dead, usage counting
and the trace — takes its nodes from here; no command filters on its own ("one route per rule").
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from talos.model import Node, line_id
from talos.sources.facts import TAG, claimed_scopes
from talos.text import fold_whitespace, matching_keywords
from talos.view.canon import canonical_name
from talos.warn import warn

__all__ = [
    "AUTHORITY",
    "DEFAULT_SCOPES",
    "MODEL_BY",
    "Excluded",
    "View",
    "authority",
    "authority_of",
    "authorized",
    "build_view",
    "clock_error",
    "covers",
    "derived_id",
    "from_model",
    "in_view",
    "observed_day",
    "overlaps",
    "parse_day",
    "person_wrote",
    "quoted_value",
    "record_id",
    "standing",
    "stated_value",
    "tag_problem",
    "validity",
    "value_of",
    "window_of",
]

DEFAULT_SCOPES = ("global",)

#: Authority order (design §7.2): the person (``user``) and an authoritative lookup (``tool``,
#: which must carry a ``ref``) outrank an import, which outranks a model's inference
#: (``reflect``). Unknown sources rank with ``reflect``. Confidence never enters this order.
AUTHORITY = {"user": 3, "tool": 3, "import": 2, "reflect": 1}


def authority_of(src: str, fields: Mapping[str, str]) -> int:
    """Authority rank of a source (higher wins, design §7.2); ``tool`` without ``ref`` ranks as
    ``import``: a lookup nobody can check is not authoritative."""
    if src == "tool" and not fields.get("ref"):
        return AUTHORITY["import"]
    return AUTHORITY.get(src, AUTHORITY["reflect"])


#: The ``by=`` value the MCP server writes on every record (design §7.5, issue 13.7): what a
#: model wrote. Such a record never supersedes or shadows a record the person wrote, whatever
#: source or ref it claims: at write time (``talos.writer.edits``) and in every view
#: (:func:`build_view`). The tag is trusted as written: a line carrying ``by=mcp`` is treated
#: as model-written however it got there (fail closed), and the MCP server cannot write a
#: line without it (``remember`` sets it, the tool takes no ``by``, a text may hold no tag).
MODEL_BY = "mcp"


def from_model(fields: Mapping[str, str]) -> bool:
    """Whether a record's tag marks it as written by a model over MCP (:data:`MODEL_BY`)."""
    return fields.get("by") == MODEL_BY


def person_wrote(src: str, fields: Mapping[str, str]) -> bool:
    """Whether a record stands for the person's own word: ``user`` and not model-written."""
    return src == "user" and not from_model(fields)


def clock_error(born: str | dt.date | None, today: dt.date | None = None) -> bool:
    """Whether a record's tag date (when it was observed) is after tomorrow: evidence is not
    seen in the future (``remember`` refuses it), so such a date is a clock error — a device's
    clock 200 years ahead, a typo — not news. It is no validity start and never wins a key
    (design §7.1): a record observed at 2226-12-07 made ``get`` answer ``not-yet-valid`` and
    sent every later value of its key to history (``tests/test_clock_bounds.py``)."""
    day = born if isinstance(born, dt.date) else parse_day(born or "")
    return day is not None and day > (today or dt.date.today()) + dt.timedelta(days=1)


def observed_day(born: str | dt.date | None) -> dt.date | None:
    """The day a record was observed, or ``None`` when its tag has none, an unreadable one,
    or a clock error (:func:`clock_error`): unknown, so it neither starts the record's
    validity nor makes it newer evidence than another."""
    day = born if isinstance(born, dt.date) else parse_day(born or "")
    return None if day is None or clock_error(day) else day


def window_of(
    fields: Mapping[str, str], born: str | dt.date | None
) -> tuple[dt.date | None, dt.date | None]:
    """A record's validity window ``[start, end)`` (design §7.1): ``from`` else the tag date
    (:func:`observed_day`: not a date after tomorrow); ``None`` for an open (or unreadable)
    side."""
    start = parse_day(fields.get("from", "")) or observed_day(born)
    return start, parse_day(fields.get("until", ""))


def overlaps(
    a: tuple[dt.date | None, dt.date | None], b: tuple[dt.date | None, dt.date | None]
) -> bool:
    """Whether two windows ``[start, end)`` share a day (issue 12.6: windows that do not
    overlap never supersede)."""
    (a0, a1), (b0, b1) = a, b
    return (a1 is None or b0 is None or b0 < a1) and (b1 is None or a0 is None or a0 < b1)


def covers(
    new: tuple[dt.date | None, dt.date | None],
    old: tuple[dt.date | None, dt.date | None],
    today: dt.date,
) -> bool:
    """Whether ``new`` covers all of ``old`` that is still to come (from ``today`` on).

    Only then does a new record remove the old one when it supersedes it (design §7.5): a value
    for next week only (``--from 2026-12-07 --until 2026-12-14``) leaves the current value in
    force until then and after (issue 12.6); the new record then names it in ``supersedes=``
    and wins only where both are valid (:func:`build_view`).
    """
    (n0, n1), (o0, o1) = new, old
    rest = max(o0, today) if o0 is not None else today
    starts_in_time = n0 is None or n0 <= rest
    lasts = n1 is None or (o1 is not None and n1 >= o1)
    return starts_in_time and lasts


def authority(node: Node) -> int:
    """Authority rank of a record (see :func:`authority_of`)."""
    return authority_of(node.src, node.fields)


def parse_day(value: str) -> dt.date | None:
    """``YYYY-MM-DD`` (or a longer ISO timestamp) → date; ``None`` when empty or malformed."""
    try:
        return dt.date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def derived_id(fields: Mapping[str, str], raw: str) -> str:
    """A record's id: its ``id`` field, else ``L`` + a hash of its exact line, so hand-written
    records can be named by ``resolve``/``history``/``restore`` too (design §7.1)."""
    return fields.get("id") or "L" + line_id(raw)[:9]


def record_id(node: Node) -> str:
    """The record's stable id (facts: :func:`derived_id`; skills: from the path)."""
    return derived_id(node.fields, node.raw if node.kind == "fact" else node.path)


def window_problem(node: Node) -> tuple[str, str] | None:
    """A validity date that is present but not a date: ``(reason, detail)``, else ``None``.

    Fail closed (design §7.2: an expired record is not used however trusted its source): an
    unreadable ``until`` counts as ``expired`` — before, ``until=2025-02-30`` meant "valid
    forever" —, an unreadable ``from`` or tag date as ``not-yet-valid``.
    """
    until = node.fields.get("until")
    if until is not None and parse_day(until) is None:
        return "expired", f"until={until} is not a date"
    start = node.fields.get("from")
    if start is not None and parse_day(start) is None:
        return "not-yet-valid", f"from={start} is not a date"
    if node.born and parse_day(node.born) is None:
        return "not-yet-valid", f"the tag date {node.born} is not a date"
    return None


def validity(node: Node, at: dt.date) -> str | None:
    """``None`` when valid at ``at``; else ``"not-yet-valid"`` or ``"expired"`` (design §7.1:
    ``from <= at < until``; ``from`` defaults to the tag's date unless that is a clock error
    (:func:`observed_day`), ``until`` to open-ended; an unreadable date is never valid, see
    :func:`window_problem`)."""
    bad = window_problem(node)
    if bad:
        return bad[0]
    start = parse_day(node.fields.get("from", "")) or observed_day(node.born)
    if start is not None and at < start:
        return "not-yet-valid"
    end = parse_day(node.fields.get("until", ""))
    if end is not None and at >= end:
        return "expired"
    return None


#: A comment inside a fact's text that was meant as a provenance tag: it starts with a source
#: word, or with a word and a date-like token, or it holds a ``field=value`` pair.
_COMMENT = re.compile(r"<!--(?P<body>.*?)(?:-->|$)", re.S)
_TAG_LIKE = re.compile(
    r"^\s*(?:(?:user|tool|reflect|import)\b|\w+\s+\d{2,4}[-/.]\d)|[A-Za-z_][\w.\-]*=", re.S
)
_TAG_FIELD = re.compile(r"([A-Za-z_][\w.\-]*)=(\S*)")


def tag_problem(node: Node) -> str | None:
    """Why a fact's provenance cannot be read, or ``None`` when it can (design §7.1).

    A tag that does not parse leaves the line looking untagged — ``src=user``, scope
    ``global`` — so ``- x <!-- reflect 2025-1-5 scope=project:beta -->`` would reach every
    global caller as a hand-written fact. Such a record has no trustworthy scope or source,
    so it is used by no one (fail closed) until the person fixes the line:
    a tag-like comment left in the text (malformed, misplaced, or a second tag), or a field
    given twice with different values (``scope=project:beta scope=global``).
    """
    if node.kind != "fact" or "<!--" not in node.raw:
        return None
    for m in _COMMENT.finditer(node.text):
        if _TAG_LIKE.search(m.group("body")):
            return "a comment in the text looks like a provenance tag but does not parse"
    if node.born:
        tag = TAG.search(node.raw.strip())
        seen: dict[str, str] = {}
        for name, value in _TAG_FIELD.findall(tag.group("fields") if tag else ""):
            if seen.setdefault(name, value) != value:
                return f"field {name} is given twice with different values"
    return None


def authorized(node: Node, scopes: Sequence[str]) -> bool:
    """Whether ``node`` belongs to one of ``scopes`` and its provenance can be read."""
    return node.scope in scopes and tag_problem(node) is None


def in_view(node: Node, scopes: Sequence[str], at: dt.date) -> bool:
    """Whether ``node`` is authorized, active and valid at ``at`` (design §7.3)."""
    return (
        authorized(node, scopes)
        and node.fields.get("status", "active") == "active"
        and validity(node, at) is None
    )


_ASSIGN = re.compile(r"^[^=:：]{1,80}?\s*(?:=|:|：)\s*(?P<value>.+)$")


def stated_value(text: str) -> str:
    """The value a keyed record states: the part after the first ``=``/``:`` when the text
    reads ``name = value``, else the whole text (whitespace folded)."""
    m = _ASSIGN.match(text)
    return fold_whitespace(m.group("value") if m else text)


def value_of(text: str) -> str:
    """:func:`stated_value`, case-folded: records whose values compare equal are one fact
    (design §7.4)."""
    return stated_value(text).casefold()


@dataclass(slots=True)
class Excluded:
    """An in-scope record kept out of the ranking, with a typed reason (design §6.2 why-not).

    ``reason`` is one of ``superseded``, ``deleted``, ``expired``, ``not-yet-valid``,
    ``shadowed``, ``conflict``, ``overridden``; ``by`` names what won (an id or a key).
    """

    node: Node
    reason: str
    by: str = ""


@dataclass(slots=True)
class View:
    """The authorized active view of one request.

    Attributes:
        nodes: what may be ranked, in load order: active, valid, uncontested records, plus a
            synthetic ``conflict`` node per contested key and a synthetic ``fact`` node per
            request-scoped override.
        excluded: in-scope records kept out, with reasons (never records of other scopes).
        conflicts: canonical key → the competing records (design §7.4).
        winners: ``(scope, key)`` → the record that stands for the key.
    """

    nodes: list[Node]
    excluded: list[Excluded] = field(default_factory=list)
    conflicts: dict[tuple[str, str], list[Node]] = field(default_factory=dict)
    winners: dict[tuple[str, str], Node] = field(default_factory=dict)


def quoted_value(text: str) -> str:
    """:func:`stated_value` in double quotes, its own ``\\`` and ``"`` escaped: a value that
    holds ``" (user, …, id=…) vs "`` cannot close its quotes and add a competitor to the
    line it is shown in (issue 13 hostile pass)."""
    value = stated_value(text).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{value}"'


def _conflict_text(key: str, nodes: Sequence[Node]) -> str:
    parts = [
        f"{quoted_value(n.text)} ({n.src}{', ' + n.born if n.born else ''}, id={record_id(n)})"
        for n in nodes
    ]
    return f"{key}: " + " vs ".join(parts) + " — conflicting records; verify before use"


def standing(n: Node, scopes: Sequence[str], at: dt.date) -> tuple[str, str, str]:
    """One record's standing before keys are compared: ``("active", "", "")``,
    ``("excluded", reason, by)``, ``("unreadable", problem, "")`` or ``("out", "", "")``
    (another scope: dropped silently)."""
    problem = tag_problem(n)
    if problem:
        return ("unreadable", problem, "")
    if n.scope not in scopes:
        return ("out", "", "")
    status = n.fields.get("status", "active")
    if status != "active":
        return ("excluded", status, n.fields.get("superseded_by", ""))
    bad = validity(n, at)
    if bad:
        detail = window_problem(n)
        return ("excluded", bad, detail[1] if detail else "")
    return ("active", "", "")


def build_view(
    nodes: Sequence[Node],
    scopes: Sequence[str],
    at: dt.date,
    overrides: Mapping[str, str] | None = None,
    memo: dict[Any, Any] | None = None,
) -> View:
    """Compute the authorized active view (design §7.3, §7.4, §7.5).

    1. Records outside ``scopes`` are dropped silently: they are never ranked, never named.
    2. Inactive (``status`` superseded/deleted) and invalid-at-``at`` records are excluded.
    3. Per ``(scope, key)``: a model-written record (``by=mcp``) is *shadowed* by any record
       the person wrote of its key, in any authorized scope (issue 13.7); a record named in
       the ``supersedes=`` of another valid record of no lower authority is *superseded*
       there (a value written for a window that leaves the other's future uncovered, issue
       12.6); then identical values (whitespace and case folded) are one fact; else a
       strictly higher authority wins and the rest are *shadowed*; else it is a *conflict*:
       no value is recalled, one ``conflict`` node names them all. Never the newest, never
       the first.
    4. ``overrides`` (key → value) replace every record of that key for this request only.

    Keys are compared in their canonical spelling (:func:`talos.view.canon.canonical_name`, as the
    reader of tags gives them): a model's ``Editor`` is shadowed by the person's ``editor``.

    Args:
        nodes: every node of the home in load order. scopes: authorized scopes. at: business
        date. overrides: request-scoped values. memo: a dict the caller keeps between calls:
        each record's standing (tag, scope, status, validity) is kept per node object for the
        same scopes and date, so a caller that reuses unchanged nodes (the index after a
        one-line edit) re-checks only the new ones.

    Returns:
        The :class:`View`.
    """
    overrides = {
        canonical_name(key): fold_whitespace(value) for key, value in (overrides or {}).items()
    }
    unused = dict(overrides)
    view = View([])
    active: list[Node] = []
    plain_ok = "global" in scopes
    old = memo.pop((tuple(scopes), at), {}) if memo is not None else {}
    memo_now: dict[Node, tuple[str, str, str]] = {}
    for n in nodes:
        if (n.kind == "episode" or (n.kind == "fact" and "<!--" not in n.raw)) and not (
            n.fields or n.born
        ):
            # An episode or an untagged fact has no tag: scope global, active, valid at any
            # date (what standing() finds). The common case by far (30,000 of 33,000 nodes at
            # scale; a memory.md of 1,000,000 hand-written lines), so it skips the checks.
            if plain_ok:
                active.append(n)
            continue
        verdict = old.get(n)
        if verdict is None:
            verdict = standing(n, scopes, at)
        memo_now[n] = verdict
        what, reason, by = verdict
        if what == "active":
            active.append(n)
        elif what == "excluded":
            view.excluded.append(Excluded(n, reason, by))
            if n.kind == "fact" and window_problem(n):  # a typo that hides the record for good
                warn(
                    f"{n.path}:{n.line}: {by}: the record is never used; fix the date in its "
                    "tag (YYYY-MM-DD)",
                    scopes=claimed_scopes(n.raw),
                )
        elif what == "unreadable":  # its scope is unknown: never named, not even by why-not
            warn(
                f"{n.path}:{n.line}: unreadable provenance tag ({reason}); line not used",
                scopes=claimed_scopes(n.raw),  # only for those who may see the line (§7.3)
            )
    if memo is not None:
        memo.clear()
        memo[(tuple(scopes), at)] = memo_now

    groups: dict[tuple[str, str], list[Node]] = {}
    for n in active:
        key = n.fields.get("key")
        if key and n.kind in ("fact", "skill"):
            groups.setdefault((n.scope, key), []).append(n)

    # The person's word on a key, in any authorized scope: a model-written record of that
    # key in another scope must not stand in for it either (the hostile pass: a model over
    # an MCP server started with --scope project:alpha,global wrote editor in alpha, and
    # get editor returned the model's value, the first scope winning, over the person's).
    persons: dict[str, Node] = {}
    for (_scope, key), recs in groups.items():
        for r in recs:
            if person_wrote(r.src, r.fields):
                persons.setdefault(key, r)
    drop: dict[int, Excluded] = {}
    replace: dict[int, Node] = {}  # id(first record of a group) -> synthetic node
    for (scope, key), recs in groups.items():
        if key in overrides:  # in every authorized scope that holds the key
            unused.pop(key, None)
            synth = override_node(key, overrides[key], recs, scope)
            for r in recs:
                drop[id(r)] = Excluded(r, "overridden", key)
            replace[id(recs[0])] = synth
            continue
        recs = _model_rule(recs, drop, persons.get(key))
        if not recs:
            continue
        recs = _supersedes_rule(recs, drop)
        top = max(authority(r) for r in recs)
        best = [r for r in recs if authority(r) == top]
        for r in recs:
            if authority(r) < top:
                drop[id(r)] = Excluded(r, "shadowed", record_id(best[0]))
        if len({value_of(r.text) for r in best}) == 1:
            view.winners[(scope, key)] = best[-1]
            continue
        view.conflicts[(scope, key)] = best
        for r in best:
            drop[id(r)] = Excluded(r, "conflict", key)
        kw = frozenset().union(*(r.keywords for r in best))
        replace[id(best[0])] = Node(
            kind="conflict",
            text=_conflict_text(key, best),
            keywords=kw,
            order=best[0].order,
            src="talos",
            fields={"key": key, "scope": scope},
        )

    for n in active:
        if id(n) in replace:
            view.nodes.append(replace[id(n)])
        if id(n) in drop:
            view.excluded.append(drop[id(n)])
        else:
            view.nodes.append(n)
    for key, value in unused.items():  # overrides of keys with no record in view
        view.nodes.append(override_node(key, value, [], scopes[0] if scopes else "global"))
    return view


def _model_rule(recs: list[Node], drop: dict[int, Excluded], person: Node | None) -> list[Node]:
    """design §7.5, issue 13.7: when the person wrote a record of the key — in this group, or
    (``person``) in another authorized scope — every model-written record (``by=mcp``) of
    the group is shadowed by it, whatever source or ref it claims. Returns the rest (empty
    when only model-written records were left)."""
    mine = [r for r in recs if person_wrote(r.src, r.fields)]
    winner = mine[-1] if mine else person
    if winner is None or len(mine) == len(recs):
        return recs
    kept = []
    for r in recs:
        if from_model(r.fields):
            drop[id(r)] = Excluded(r, "shadowed", record_id(winner))
        else:
            kept.append(r)
    return kept


def _supersedes_rule(recs: list[Node], drop: dict[int, Excluded]) -> list[Node]:
    """Issue 12.6: a record that names another valid record of its key in ``supersedes=``
    (written for a window that did not cover the other's future, :func:`covers`) wins over it
    where both are valid — when its authority is not lower."""
    if len(recs) < 2 or not any("supersedes" in r.fields for r in recs):
        return recs
    by_id = {record_id(r): r for r in recs}
    out: dict[int, str] = {}
    for r in recs:
        for rid in filter(None, r.fields.get("supersedes", "").split(",")):
            old = by_id.get(rid)
            if old is not None and old is not r and authority(r) >= authority(old):
                out.setdefault(id(old), record_id(r))
    kept = []
    for r in recs:
        if id(r) in out and len(out) < len(recs):
            drop[id(r)] = Excluded(r, "superseded", out[id(r)])
        else:
            kept.append(r)
    return kept or recs


def override_node(key: str, value: str, replaced: Sequence[Node], scope: str) -> Node:
    """A request-scoped fact ``KEY = VALUE`` (design §7.5): never written, never counted. It
    matches by the key, the value, and the keywords of the records it stands in for.

    Its keyword set also holds ``override:KEY``, which no text can produce (keywords are
    ``[a-z0-9]`` runs and CJK): it never matches a query, but it keeps §5.1 from merging the
    override into a fact with the same keywords, where it showed as an unmarked member line.
    """
    key, value = fold_whitespace(key), fold_whitespace(value)
    text = f"{key} = {value}"
    kw = matching_keywords(key.replace(".", " ").replace("_", " ") + " " + value)
    kw = kw.union(*(r.keywords for r in replaced)) if replaced else kw
    kw = kw | {f"override:{key}"}
    return Node(
        kind="fact",
        text=text,
        keywords=frozenset(kw),
        order=replaced[0].order if replaced else 1 << 30,
        src="override",
        fields={"key": key, "scope": scope, "override": "1"},
    )
