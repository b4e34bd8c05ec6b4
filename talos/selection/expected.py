"""Where a memory the person expected stands for a query (design §6.2, ``talos explain
--expect TEXT``).

``--why-not`` names the left-out records that share a word with the query; the line a person
expected and did not get most often shares none ("deploy to production" against "Deploy region
is eu-west-1": ``production`` is no word of that line), and was then never mentioned. This
module finds the in-scope records the person means (part of the text, or a record id) and says
for each: ranked (its rank and whether a recall delivers it), left out (the why-not reason),
or that it shares no word with the query — with its words and the query's, as the model reads
them (analyzed terms ``as written → as analyzed``; ``classic``: keywords, design §4). Records
of other scopes are never found (design §7.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from talos.model import node_identity, node_provenance
from talos.view.trust import record_id

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Mapping

    from talos.memory import Memory
    from talos.model import Node
    from talos.results import Row, WhyNot

__all__ = ["MAX_FOUND", "MAX_WORDS", "Expected", "find", "stand", "where", "words_of"]

#: Most records one ``--expect`` text is reported for (the first in load order).
MAX_FOUND = 5
#: Most words listed of a record or a query (a long skill holds hundreds).
MAX_WORDS = 24


@dataclass(frozen=True, slots=True)
class Expected:
    """One record the person expected, and where it stands.

    Attributes:
        node: the record.
        status: ``no-shared-word`` (it holds none of the query's words: the cause, even when
            the graph ranks it through its links), ``ranked`` (among explain's rows),
            ``left-out`` (a why-not reason), ``unranked`` (it holds query words and ranks
            beyond the rows shown).
        rank: 1-based rank among explain's rows, else None.
        reason, detail: the why-not reason and its detail (``left-out``); ``ranked``: the
            cut mark a recall of 5 gives it (``floor``, ``beyond-k``; "" delivered; ``-``
            for a model that marks no cut, ``classic``).
        shared: the query words it holds, as shown (``deploying → deploy``).
        words: its words as the model reads them (``no-shared-word``; at most :data:`MAX_WORDS`).
        query_words: the query's words, as shown.
    """

    node: Node
    status: str
    rank: int | None = None
    reason: str = ""
    detail: str = ""
    shared: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    query_words: list[str] = field(default_factory=list)

    def sentence(self) -> str:
        """What the person reads: ``ranked #1 (a recall delivers it)``, ``left out:
        below-floor (evidence 0.30)``, ``shares no word with the query: its words are …; the
        query's are …`` (and, when it is ranked all the same, "ranked #4 only through its
        links …")."""
        if self.status == "left-out":
            return f"left out: {self.reason}" + (f" ({self.detail})" if self.detail else "")
        if self.status == "unranked":
            return (
                f"holds the query's {_listed(self.shared)} but ranks below the rows shown "
                "(a larger -k shows more)"
            )
        ranked = ""
        if self.rank is not None:
            cut = {
                "": " (a recall delivers it)",
                "floor": " (a recall leaves it out: below the relevance floor)",
                "beyond-k": " (a recall leaves it out: beyond its first rows)",
            }.get(self.reason, "")
            ranked = f"ranked #{self.rank}{cut}"
        if self.status == "ranked":
            return ranked
        linked = f"; {ranked} only through the records it is linked to" if ranked else ""
        return (
            f"shares no word with the query: its words are {_listed(self.words)}; "
            f"the query's are {_listed(self.query_words)}{linked}"
        )

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (``talos explain --expect TEXT --json``: ``"expected"``)."""
        n = self.node
        return {
            "kind": n.kind,
            "text": n.text,
            "id": record_id(n),
            "status": self.status,
            "rank": self.rank,
            "reason": self.reason,
            "detail": self.detail,
            "shared": self.shared,
            "words": self.words,
            "query_words": self.query_words,
            **node_identity(n),
            "provenance": node_provenance(n),
        }


def _listed(words: Sequence[str]) -> str:
    return ", ".join(words) if words else "(none)"


def shown_term(written: str, analyzed: str) -> str:
    """A term as explain shows it: ``deploy``, or ``deploying → deploy`` when the analyzer
    changed it."""
    return written if written == analyzed else f"{written} → {analyzed}"


def words_of(text: str, over_terms: bool) -> list[tuple[str, str]]:
    """``(shown, matched)`` for each distinct word of ``text`` as a model matches it, in
    order: analyzed terms (:func:`talos.ranking.analyzer.analyze_written`) for a model over
    terms, else keywords (design §4; sorted: a keyword set has no order)."""
    if over_terms:
        from talos.ranking.analyzer import analyze_written

        seen: dict[str, str] = {}
        for written, analyzed in analyze_written(text):
            seen.setdefault(analyzed, shown_term(written, analyzed))
        return [(shown, t) for t, shown in seen.items()]
    from talos.text import keywords

    return [(k, k) for k in sorted(keywords(text))]


def find(nodes: Sequence[Node], text: str) -> list[Node]:
    """The records of ``nodes`` (the authorized view's) that ``text`` names: its record id,
    or parts of its text (each word of ``text`` found in it, case aside: "staging port" names
    "the staging service listens on port 8080"), at most :data:`MAX_FOUND`, first found
    first; a record merged into another is found as itself."""
    parts = text.casefold().split()
    if not parts:
        return []
    found: list[Node] = []
    seen: set[tuple[str, Any]] = set()
    for n in nodes:
        for m in (n, *n.members):
            ident = (m.kind, m.identity)
            hay = m.text.casefold()
            if ident not in seen and (record_id(m) == text.strip() or all(p in hay for p in parts)):
                seen.add(ident)
                found.append(m)
                if len(found) == MAX_FOUND:
                    return found
    return found


def stand(
    found: Sequence[Node],
    query: str,
    rows: Sequence[Row],
    missed: Sequence[WhyNot],
    over_terms: bool,
    matching: Any,
) -> list[Expected]:
    """Where each of ``found`` stands among explain's ``rows`` and why-not's ``missed`` for
    ``query``. ``over_terms``: the model matches analyzed terms (else keywords);
    ``matching``: the text a node is matched by (:func:`talos.ranking.evidence.matching_text`
    for a model over terms; a node's keywords otherwise)."""
    query_words = words_of(query, over_terms)
    shown_q = [s for s, _t in query_words][:MAX_WORDS]
    out = []
    for n in found:
        ident = (n.kind, n.identity)
        rank = next((no for no, r in enumerate(rows, 1) if ident in _idents(r.node)), None)
        # the node's own words as its model matches them (classic: its keyword set)
        held = words_of(matching(n), True) if over_terms else [(k, k) for k in sorted(n.keywords)]
        shared = [s for s, t in query_words if t in {h for _x, h in held}]
        cut = "-"
        if rank is not None:
            mark = rows[rank - 1].cut
            cut = "-" if mark is None else mark
        if not shared:  # the cause, whether the graph ranked it or not
            words = [s for s, _t in held][:MAX_WORDS]
            out.append(
                Expected(n, "no-shared-word", rank, cut if rank else "", "", [], words, shown_q)
            )
        elif rank is not None:
            out.append(Expected(n, "ranked", rank, cut, "", shared, [], shown_q))
        elif (why := next((w for w in missed if ident in _idents(w.node)), None)) is not None:
            out.append(Expected(n, "left-out", None, why.reason, why.detail, shared, [], shown_q))
        else:
            out.append(Expected(n, "unranked", None, "", "", shared, [], shown_q))
    return out


def _idents(n: Node) -> set[tuple[str, Any]]:
    """A node's identity and its merged members' (a row stands for all of them)."""
    return {(m.kind, m.identity) for m in (n, *n.members)}


def where(
    mem: Memory,
    query: str,
    text: str,
    k: int = 8,
    at: dt.date | None = None,
    overrides: Mapping[str, str] | None = None,
) -> list[Expected]:
    """Where the records of ``mem``'s authorized view (active and excluded) that ``text``
    names stand for ``query`` among its explain rows and why-not (the first ``k``): [] when
    no in-scope record holds ``text``. No side effects (explain's)."""
    from talos.ranking.activation import TERMS, model_named

    view, graph = mem.view(at, overrides)
    found = find([*graph.nodes, *(e.node for e in view.excluded)], text)
    if not found:
        return []
    rows = mem.explain(query, k=k, at=at, overrides=overrides)
    missed = mem.why_not(query, k=k, at=at, overrides=overrides)
    over_terms = model_named(mem.model).over == TERMS
    return stand(found, query, rows, missed, over_terms, _matching_text)


def _matching_text(n: Node) -> str:
    """:func:`talos.ranking.evidence.matching_text`, imported on use."""
    from talos.ranking.evidence import matching_text

    return matching_text(n)
