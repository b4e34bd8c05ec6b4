"""What :class:`talos.Memory` returns, each with its own JSON: :class:`Recall` (and its
:class:`RecallRow`), explain's :class:`Row`, :class:`WhyNot`, :class:`Suggestion` and
:class:`Decision`. The CLI's ``--json``, the MCP tools and the hooks print these forms, so the
three shells give the same fields in the same order."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from talos.model import Node, episode_fields, node_identity, node_provenance
from talos.view.trust import record_id, stated_value

__all__ = ["Decision", "Recall", "RecallRow", "Row", "Suggestion", "WhyNot"]


@dataclass(slots=True)
class RecallRow:
    """A picked row: ``key`` (``kind:text80``), ``kind``, ``text``, rounded ``score``,
    ``body`` (whether the skill body was delivered), the ``node`` itself, and ``heading``: the
    nearest markdown heading a fact stands under, as stored ("" for none, and always with
    ``classic``; design §3.1, the block shows it cut, :func:`talos.render.heading_shown`)."""

    key: str
    kind: str
    text: str
    score: float
    body: bool
    node: Node = field(repr=False)
    heading: str = ""
    #: With the dense leg (issue 17): each leg's rank and score
    #: (:func:`talos.ranking.hybrid.legs_of`);
    #: ``score`` is then the fused one. ``None`` for a lexical recall. Not traced.
    legs: dict[str, Any] | None = None

    def as_trace(self) -> dict[str, object]:
        """The row as a trace entry ``{"key", "score", "body"}`` (design §6.3). A request-scoped
        override is traced as ``override:KEY``: its value is never written to disk (§7.5)."""
        key = self.key
        if self.node.src == "override":
            key = "override:" + self.node.fields.get("key", "")
        return {"key": key, "score": self.score, "body": self.body}

    def to_json(self) -> dict[str, Any]:
        """The row as ``recall --json`` and MCP's ``recall`` give it: ``key``, ``kind``,
        ``text``, ``score``, ``body``, ``heading`` (null for none), an episode's ``task``,
        ``outcome`` and ``transcript``, the node's ``path`` (and ``line`` for a fact), its
        ``provenance``, and ``legs`` only with the dense leg."""
        n = self.node
        return {
            "key": self.key,
            "kind": self.kind,
            "text": self.text,
            "score": self.score,
            "body": self.body,
            "heading": self.heading or None,
            **episode_fields(n),
            **node_identity(n),
            "provenance": node_provenance(n),
            **({} if self.legs is None else {"legs": self.legs}),
        }


@dataclass(slots=True)
class Recall:
    """The result of :meth:`Memory.recall`: ``text`` (the context block, "" when nothing),
    ``picked`` rows in rank order, ``bodies`` (how many skill bodies were delivered) and
    ``weak``: the rows are weak matches — the query gate found no evidence for the ask, so
    the hooks would have injected nothing (design §6.1 rule 5); the heading says so."""

    text: str
    picked: list[RecallRow]
    weak: bool = False

    @property
    def bodies(self) -> int:
        """Number of skill bodies in the block (0 or 1)."""
        return sum(1 for r in self.picked if r.body)

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> dict[str, Any]:
        """``{"text", "weak", "bodies", "picked"}``: the block, whether its rows are weak
        matches, how many skill bodies it carries, and each picked row's
        :meth:`RecallRow.to_json`."""
        return {
            "text": self.text,
            "weak": self.weak,
            "bodies": self.bodies,
            "picked": [r.to_json() for r in self.picked],
        }


@dataclass(slots=True)
class Row:
    """One explain row; unpacks as ``(score, kind, text)`` (design §6.2).

    ``text`` includes up to 2 merged members. ``seed`` is the node's seed activation,
    ``hops`` its activation gained in each hop, ``edges`` the contributions that carried it
    (``[{"hop", "from", "weight", "from_activation"}]``: each neighbour active before that
    hop), ``node`` the node with its provenance.

    The ``evidence`` model only (``None`` / empty otherwise): ``score`` is the row's evidence
    score (activation × √Z, :mod:`talos.ranking.evidence`), ``evidence`` the same unrounded, ``cut``
    where a recall of the default ``k`` = 5 leaves it out ("" delivered, ``floor`` cut by the
    relevance floor, ``beyond-k``), ``terms`` the query's terms the node holds as
    ``{"written", "analyzed"}`` (:func:`talos.ranking.analyzer.analyze_written`; ``answers`` →
    ``answer``), ``hops`` one gain for both hops.

    With the dense leg on (issue 17), ``score`` is the fused RRF score and ``legs`` holds
    ``{"fused": score, "lexical": {"rank", "score"}, "dense": {"rank", "score"}, "cut_by",
    "cosine_floor"}`` (1-based ranks; the lexical score is the evidence score, the dense one
    the cosine; ``None`` where that leg does not rank the row); ``cut_by`` the rules that
    leave the row out of a recall of 5 (:func:`talos.ranking.hybrid.verdicts`: ``[]``, ``["k"]``,
    ``["floor", "gate"]``, ``["floor", "margin"]``, ``["floor"]``), ``cosine_floor`` the
    cosine a row the lexical floor leaves needed among those 5 (None beyond them).

    ``heading``: the nearest markdown heading a fact stands under (:meth:`Memory.heading`).
    An episode's JSON also carries its ``task``, ``outcome`` and ``transcript``
    (:func:`talos.model.episode_fields`).
    """

    score: float
    kind: str
    text: str
    node: Node = field(repr=False)
    activation: float = 0.0
    seed: float = 0.0
    hops: list[float] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    evidence: float | None = None
    cut: str | None = None
    terms: list[dict[str, str]] = field(default_factory=list)
    legs: dict[str, Any] | None = None
    heading: str = ""

    def __iter__(self) -> Iterator[Any]:
        return iter((self.score, self.kind, self.text))

    def __getitem__(self, i: int) -> Any:
        return (self.score, self.kind, self.text)[i]

    def __len__(self) -> int:
        return 3

    def to_json(self) -> dict[str, Any]:
        """The row with identity, activation detail, merged members and provenance."""
        n = self.node
        out: dict[str, Any] = {
            "score": self.score,
            "kind": self.kind,
            "text": self.text,
            "key": n.key,
            "identity": node_identity(n),
            "activation": self.activation,
            "seed": self.seed,
            "hops": self.hops,
            "edges": self.edges,
            "members": [{"text": m.text, **node_identity(m)} for m in n.members],
            "provenance": node_provenance(n),
            "heading": self.heading or None,
            **episode_fields(n),
        }
        if self.evidence is not None:
            out.update(evidence=self.evidence, cut=self.cut, terms=self.terms)
        if self.legs is not None:
            out["legs"] = self.legs
        return out


@dataclass(slots=True)
class Suggestion:
    """A forgetting suggestion (design §6.4); unpacks as ``(kind, text, reason)``.

    ``path``/``line``/``raw`` identify the exact line it came from; ``scope`` its namespace.
    """

    kind: str
    text: str
    reason: str
    path: str = ""
    line: int = 0
    raw: str = ""
    scope: str = "global"
    src: str = ""
    born: str = ""
    seen: int = 0
    hits: int = 0
    last_hit_day: int = 0

    def __iter__(self) -> Iterator[Any]:
        return iter((self.kind, self.text, self.reason))

    def __getitem__(self, i: int) -> Any:
        return (self.kind, self.text, self.reason)[i]

    def __len__(self) -> int:
        return 3

    def to_json(self) -> dict[str, Any]:
        """All fields as a JSON-ready dict."""
        return {
            "kind": self.kind,
            "text": self.text,
            "reason": self.reason,
            "path": self.path,
            "line": self.line,
            "raw": self.raw,
            "scope": self.scope,
            "src": self.src,
            "born": self.born,
            "seen": self.seen,
            "hits": self.hits,
            "last_hit_day": self.last_hit_day,
        }


@dataclass(slots=True)
class Decision:
    """The answer of :meth:`Memory.get` (design §7.7): ``reason`` ``ok``/``unknown``/
    ``expired``/``not-yet-valid``/``conflict``; ``value`` and ``record`` when ok."""

    key: str
    reason: str
    value: str | None
    record: Node | None
    competitors: list[Node] = field(default_factory=list)
    inferred: bool = False
    override: bool = False

    @property
    def ok(self) -> bool:
        """True when there is one usable value."""
        return self.reason == "ok"

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form with provenance."""
        rec = self.record
        return {
            "key": self.key,
            "ok": self.ok,
            "reason": self.reason,
            "value": self.value,
            "inferred": self.inferred,
            "override": self.override,
            "record": None
            if rec is None
            else {
                "id": record_id(rec),
                "text": rec.text,
                **node_identity(rec),
                "provenance": node_provenance(rec),
            },
            "competitors": [
                {
                    "id": record_id(n),
                    "text": n.text,
                    "value": stated_value(n.text),
                    **node_identity(n),
                    "provenance": node_provenance(n),
                }
                for n in self.competitors
            ],
        }


@dataclass(slots=True)
class WhyNot:
    """An in-scope record left out of explain's rows, and why (design §6.2). ``legs``: with
    the dense leg, the row's :attr:`Row.legs` (each leg's rank and score, ``cut_by``)."""

    node: Node
    reason: str
    detail: str = ""
    score: float | None = None
    legs: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        n = self.node
        return {
            "kind": n.kind,
            "text": n.text,
            "id": record_id(n),
            "reason": self.reason,
            "detail": self.detail,
            "score": self.score,
            **node_identity(n),
            "provenance": node_provenance(n),
            **({} if self.legs is None else {"legs": self.legs}),
        }
