"""Trust: the authorized active view, authority, conflicts, overrides (SPEC §7).

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

from talos.model import Node, line_id
from talos.text import fold_whitespace, matching_keywords

__all__ = [
    "AUTHORITY",
    "DEFAULT_SCOPES",
    "Excluded",
    "View",
    "authority",
    "authority_of",
    "build_view",
    "derived_id",
    "in_view",
    "parse_day",
    "record_id",
    "stated_value",
    "validity",
    "value_of",
]

DEFAULT_SCOPES = ("global",)

#: Authority order (SPEC §7.2): the person (``user``) and an authoritative lookup (``tool``,
#: which must carry a ``ref``) outrank an import, which outranks a model's inference
#: (``reflect``). Unknown sources rank with ``reflect``. Confidence never enters this order.
AUTHORITY = {"user": 3, "tool": 3, "import": 2, "reflect": 1}


def authority_of(src: str, fields: Mapping[str, str]) -> int:
    """Authority rank of a source (higher wins, SPEC §7.2); ``tool`` without ``ref`` ranks as
    ``import``: a lookup nobody can check is not authoritative."""
    if src == "tool" and not fields.get("ref"):
        return AUTHORITY["import"]
    return AUTHORITY.get(src, AUTHORITY["reflect"])


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
    records can be named by ``resolve``/``history``/``restore`` too (SPEC §7.1)."""
    return fields.get("id") or "L" + line_id(raw)[:9]


def record_id(node: Node) -> str:
    """The record's stable id (facts: :func:`derived_id`; skills: from the path)."""
    return derived_id(node.fields, node.raw if node.kind == "fact" else node.path)


def validity(node: Node, at: dt.date) -> str | None:
    """``None`` when valid at ``at``; else ``"not-yet-valid"`` or ``"expired"`` (SPEC §7.1:
    ``from <= at < until``; ``from`` defaults to the tag's date, ``until`` to open-ended)."""
    start = parse_day(node.fields.get("from", "")) or parse_day(node.born)
    if start is not None and at < start:
        return "not-yet-valid"
    end = parse_day(node.fields.get("until", ""))
    if end is not None and at >= end:
        return "expired"
    return None


def in_view(node: Node, scopes: Sequence[str], at: dt.date) -> bool:
    """Whether ``node`` is authorized, active and valid at ``at`` (SPEC §7.3)."""
    return (
        node.scope in scopes
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
    (SPEC §7.4)."""
    return stated_value(text).casefold()


@dataclass(slots=True)
class Excluded:
    """An in-scope record kept out of the ranking, with a typed reason (SPEC §6.2 why-not).

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
        conflicts: canonical key → the competing records (SPEC §7.4).
        winners: ``(scope, key)`` → the record that stands for the key.
    """

    nodes: list[Node]
    excluded: list[Excluded] = field(default_factory=list)
    conflicts: dict[tuple[str, str], list[Node]] = field(default_factory=dict)
    winners: dict[tuple[str, str], Node] = field(default_factory=dict)


def _conflict_text(key: str, nodes: Sequence[Node]) -> str:
    parts = [
        f'"{stated_value(n.text)}" ({n.src}{", " + n.born if n.born else ""}, id={record_id(n)})'
        for n in nodes
    ]
    return f"{key}: " + " vs ".join(parts) + " — conflicting records; verify before use"


def build_view(
    nodes: Sequence[Node],
    scopes: Sequence[str],
    at: dt.date,
    overrides: Mapping[str, str] | None = None,
) -> View:
    """Compute the authorized active view (SPEC §7.3, §7.4, §7.5).

    1. Records outside ``scopes`` are dropped silently: they are never ranked, never named.
    2. Inactive (``status`` superseded/deleted) and invalid-at-``at`` records are excluded.
    3. Per ``(scope, key)``: identical values (whitespace and case folded) are one fact; else a
       strictly higher authority wins and the rest are *shadowed*; else it is a *conflict*:
       no value is recalled, one ``conflict`` node names them all. Never the newest, never
       the first.
    4. ``overrides`` (key → value) replace every record of that key for this request only.

    Args:
        nodes: every node of the home in load order. scopes: authorized scopes. at: business
        date. overrides: request-scoped values.

    Returns:
        The :class:`View`.
    """
    overrides = dict(overrides or {})
    view = View([])
    active: list[Node] = []
    for n in nodes:
        if n.scope not in scopes:
            continue
        status = n.fields.get("status", "active")
        if status != "active":
            view.excluded.append(Excluded(n, status, n.fields.get("superseded_by", "")))
            continue
        bad = validity(n, at)
        if bad:
            view.excluded.append(Excluded(n, bad))
            continue
        active.append(n)

    groups: dict[tuple[str, str], list[Node]] = {}
    for n in active:
        key = n.fields.get("key")
        if key and n.kind in ("fact", "skill"):
            groups.setdefault((n.scope, key), []).append(n)

    drop: dict[int, Excluded] = {}
    replace: dict[int, Node] = {}  # id(first record of a group) -> synthetic node
    for (scope, key), recs in groups.items():
        if key in overrides:
            synth = override_node(key, overrides.pop(key), recs, scope)
            for r in recs:
                drop[id(r)] = Excluded(r, "overridden", key)
            replace[id(recs[0])] = synth
            continue
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
    for key, value in overrides.items():  # overrides of keys with no record in view
        view.nodes.append(override_node(key, value, [], scopes[0] if scopes else "global"))
    return view


def override_node(key: str, value: str, replaced: Sequence[Node], scope: str) -> Node:
    """A request-scoped fact ``KEY = VALUE`` (SPEC §7.5): never written, never counted. It
    matches by the key, the value, and the keywords of the records it stands in for."""
    text = f"{key} = {value}"
    kw = matching_keywords(key.replace(".", " ").replace("_", " ") + " " + value)
    kw = kw.union(*(r.keywords for r in replaced)) if replaced else kw
    return Node(
        kind="fact",
        text=text,
        keywords=frozenset(kw),
        order=replaced[0].order if replaced else 1 << 30,
        src="override",
        fields={"key": key, "scope": scope, "override": "1"},
    )
