"""What a recall delivers once the ranker picked its rows (design §6.1, §6.3).

The picks become :class:`~talos.results.RecallRow` objects shown under their headings
(:class:`Headings`), the block is fitted to the budget (:func:`talos.render.fit_block`: a
skill body at its skill's rank, the least relevant rows go first), and only the rows it delivers are
traced and counted (:func:`record`): "only delivered rows are hits". The same for every model.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from talos.errors import InputError
from talos.render import Pick, fit_block
from talos.results import RecallRow
from talos.sources.facts import heading_label
from talos.usage.counts import count_recall, write_trace

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from talos.graph.graph import Graph
    from talos.home import Paths
    from talos.model import Node
    from talos.usage.counts import UsageStore
    from talos.view.kept import KeptState

__all__ = ["Headings", "check_rows", "deliver", "record"]


def check_rows(k: object) -> None:
    """That ``k``, a recall's cap on rows, is ``None`` (the home's) or a whole number 0 or
    more: the CLI, MCP and talos.toml refuse another; -1 gave an empty block ("nothing
    relevant").

    Raises:
        InputError: it is not.
    """
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 0):
        raise InputError(f"k must be a whole number of rows, 0 or more, not {k!r}")


class Headings:
    """The markdown heading each fact is shown under, for one Memory (design §3.1).

    Args:
        kept: the Memory's kept state (whether headings label facts; memory.md's level-1
            headings).
    """

    def __init__(self, kept: KeptState) -> None:
        self._kept = kept
        # _title's, per graph and count of level-1 headings
        self._titled: tuple[Graph, int, str | None] | None = None

    def of(self, node: Node, graph: Graph | None = None) -> str:
        """The heading ``node`` is shown under: a fact's nearest heading as stored
        (:func:`talos.sources.facts.heading_label`); "" for none, and always with
        ``classic``, whose headings are facts. ``graph``: the view ``node`` is in; the file's
        title — its only level-1 heading, above every fact of the view — is shown on none:
        it tells no fact from another (the example home's block said ``(Memory)`` on every
        row). A lone ``## Billing`` section still labels its facts."""
        if not self._kept.headings:
            return ""
        label = heading_label(node)
        if label and graph is not None and node.headings == (self._title(graph),):
            return ""
        return label

    def _title(self, graph: Graph) -> str | None:
        """The heading every fact of ``graph`` stands under first, when it is memory.md's only
        level-1 heading (kept per graph object and count of level-1 headings: a heading with no
        fact under it leaves the graph as it was, and the title stayed hidden when a second
        one was added)."""
        tops = self._kept.top_headings()
        if self._titled is not None and self._titled[0] is graph and self._titled[1] == tops:
            return self._titled[2]
        title = None
        if tops == 1:
            facts = (n for n in graph.nodes[: graph.records] if n.kind == "fact")
            firsts = {n.headings[0] if n.headings else None for n in facts}
            title = next(iter(firsts)) if len(firsts) == 1 else None
        self._titled = (graph, tops, title)
        return title


def deliver(
    graph: Graph,
    picks: Sequence[tuple[float, int, bool]],
    legs: dict[int, dict[str, Any]],
    heading: Callable[[Node, Graph], str],
    lang: str,
    budget: int | None = None,
    unit: str = "chars",
    reference: bool = False,
    weak: bool = False,
) -> tuple[str, list[RecallRow]]:
    """The block of ``picks`` (``(score, node position, body)`` in rank order, from
    :meth:`talos.ranking.rankers.Ranker.select`) within ``budget`` ``unit`` and the rows it
    delivers,
    a prefix of them, each with its ``legs`` when the dense leg ranked it and under its
    ``heading`` (:meth:`Headings.of`); a row's ``body`` is false when the budget left its body
    out. ``reference``: the rows are shown as the reference shows them (``classic``, design
    §6.1 rule 3). ``weak``: the rows are weak matches (the query gate found no evidence for an
    asked query), and the heading says so (design §6.1 rule 5).

    Raises:
        InputError: ``budget`` below :data:`talos.render.MIN_BUDGET`, an unknown ``unit``.
    """
    rows = []
    for s, i, body in picks:
        n = graph.nodes[i]
        rows.append(RecallRow(n.key, n.kind, n.text, s, body, n, heading(n, graph), legs.get(i)))
    text, kept = fit_block(
        [Pick(r.node, r.score, r.body, r.heading, reference) for r in rows],
        lang,
        budget,
        unit,
        weak,
    )
    delivered = {id(p.node): p for p in kept}  # a prefix of the rows, or one of them
    rows = [
        dataclasses.replace(r, body=delivered[id(r.node)].body)
        for r in rows
        if id(r.node) in delivered
    ]
    return text, rows


def record(
    paths: Paths,
    query: str,
    rows: list[RecallRow],
    scopes: Sequence[str],
    usage: UsageStore,
    present: dict[str, frozenset[str]],
) -> None:
    """Trace the recall of ``query`` (one line: a hash of the query and the delivered
    ``rows``, design §6.3) and count it: every fact and skill ``present`` in view (by scope,
    :meth:`talos.view.kept.KeptState.present`) is seen once, every delivered family member hit.
    A failure there warns on stderr and never fails the recall."""
    write_trace(paths.trace_file, query, [r.as_trace() for r in rows], scopes)
    count_recall(usage, present, [r.node for r in rows])
