"""talos's activation models fed with the terms of another analyzer: the prototype of issue 15
item 1, built from ``talos.graph`` read-only (no change to ``talos/``).

:class:`ProtoRanker` makes one fact node per memory with the analyzer's term set as its
keywords, merges nodes with equal sets (SPEC §5.1: a row then stands for every id of its
group), builds :class:`talos.graph.Graph` over :class:`talos.graph.Incidence` and runs a model
of :data:`talos.activation.MODELS` on the query's term set. With ``analyzer=None`` the terms are
SPEC §4 keywords, and the ranking is the one ``Memory`` gives for the same home
(``tests/test_bench_relevance.py``), so any difference comes from the analyzer alone.

``scored(query)`` also reports what a relevance floor or a body gate may look at: per row its
seed (:func:`talos.activation.hub_seed`, the node's own evidence before spreading), and per query
``mass`` — the best seed any node could reach, ``Σ hub(k)`` over the query terms some node
holds / ``Σ hub(k)`` over all of them (terms no node holds weigh 1.0, as in ``hub_seed``) —
``top_matched`` (query terms the best row holds), ``inv_mass`` (the inverse of ``mass``),
``qmass`` (``Σ hub(k)`` over all query terms: a score times it is the matched hub weight
itself, not a fraction of the query), ``top_seed``, ``terms`` and ``known`` (query terms, and
those some node holds).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from analyzer import Analyzer
from datasets import Store
from delivery import Scored

import talos.activation as A
import talos.graph as G
from talos import keywords
from talos.model import Node

__all__ = ["ProtoRanker", "proto_graph"]


def proto_graph(
    texts: Sequence[str],
    ids: Sequence[list[str]],
    terms: Callable[[str], Iterable[str]],
    kinds: Sequence[str] | None = None,
) -> tuple[G.Graph, list[list[str]]]:
    """A graph of one node per text (kind ``kinds[i]``, default ``fact``) keyed by
    ``terms(text)``, equal ``(kind, terms)`` merged; and each node's ids (its group's, in
    order). Texts with no term are no node (SPEC §4)."""
    kinds = kinds or ["fact"] * len(texts)
    sets = [frozenset(terms(t)) for t in texts]
    keep = [i for i, s in enumerate(sets) if s]
    groups = G.merge_groups([(kinds[i], sets[i]) for i in keep])
    nodes: list[Node] = []
    node_ids: list[list[str]] = []
    for g in groups:
        members = [keep[j] for j in g]
        rep = members[-1]
        nodes.append(Node(kinds[rep], texts[rep], sets[rep], order=members[0]))
        got: list[str] = []
        for m in members:
            got += [i for i in ids[m] if i not in got]
        node_ids.append(got)
    graph = G.Graph(nodes, len(nodes), G.Incidence.of([n.keywords for n in nodes]))
    return graph, node_ids


class ProtoRanker:
    """A model of ``talos.graph`` over the analyzer's terms of one pool (module docstring).

    Args:
        store: the pool. analyzer: the terms (``None``: SPEC §4 keywords). model: a name of
            ``talos.activation.MODELS``. thresh: rows must score above it (0: the full ranking).
    """

    def __init__(
        self,
        store: Store,
        analyzer: Analyzer | None,
        model: str = "bipartite",
        thresh: float = 0.0,
    ) -> None:
        self.terms: Callable[[str], Iterable[str]] = analyzer or keywords
        by_text: dict[str, list[str]] = {}
        for it in store.items:
            by_text.setdefault(it.text, []).append(it.id)
        texts = [it.text for it in store.items]
        self.graph, self.ids = proto_graph(texts, [by_text[t] for t in texts], self.terms)
        self.model = A.MODELS[model]
        self.thresh = thresh

    def query_terms(self, query: str) -> frozenset[str]:
        """The query's terms under this ranker's analyzer."""
        return frozenset(self.terms(query))

    def scored(self, query: str) -> Scored:
        """The ranking with scores, per-row seeds and the query-level ``info``."""
        q = self.query_terms(query)
        info = query_info(self.graph, q)
        if not q:
            return Scored([], [], info)
        act = self.model.activate(self.graph, q)
        ranked = A.rank(act, self.thresh)
        seeds = act.seeds
        info["top_seed"] = max(seeds.values()) if seeds else 0.0
        if ranked:
            info["top_matched"] = float(len(q.intersection(self.graph.keywords_of(ranked[0][1]))))
        return Scored(
            [self.ids[i] for _a, i in ranked],
            [a for a, _i in ranked],
            info,
            [seeds.get(i, 0.0) for _a, i in ranked],
        )

    def ranking(self, query: str) -> list[list[str]]:
        return self.scored(query).rows

    def top(self, query: str, k: int) -> list[list[str]]:
        return self.ranking(query)[:k]


def query_info(graph: G.Graph, q: frozenset[str]) -> dict[str, float]:
    """``terms``, ``known`` (terms some node holds) and ``mass`` (module docstring)."""
    if not q:
        return {
            "terms": 0.0,
            "known": 0.0,
            "mass": 0.0,
            "inv_mass": 0.0,
            "qmass": 0.0,
            "top_seed": 0.0,
        }
    # sums over sorted terms: the same floats under every PYTHONHASHSEED
    order = sorted(q)
    weights = {k: A.hub_weight(graph, k) for k in order}
    known = [k for k in order if graph.df(k)]
    total = sum(weights[k] for k in order)
    mass = sum(weights[k] for k in known) / total if total else 0.0
    return {
        "terms": float(len(q)),
        "known": float(len(known)),
        "mass": mass,
        "inv_mass": 1.0 / mass if mass else 0.0,
        "qmass": total,
        "top_seed": 0.0,
    }
