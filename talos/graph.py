"""The keyword graph and spreading activation (SPEC §5).

Terms: a *seed node* is a node that shares keywords with the query; its seed activation is
``|kw(node) ∩ kw(query)| / |kw(query)|``. Each *hop* spreads activation along edges, scaled by
the *decay* factor. The ``classic`` model is the reference one and stays golden-exact
(``../shared/golden``); other models register themselves in :data:`MODELS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from talos.model import Node

__all__ = [
    "DECAY",
    "EDGE_MIN",
    "HOPS",
    "MODELS",
    "THRESH",
    "Activation",
    "Graph",
    "Model",
    "build_graph",
    "merge_duplicates",
    "rank",
]

DECAY = 0.6  #: activation kept per hop
HOPS = 2  #: rounds of spreading
THRESH = 0.05  #: a node must exceed this (unrounded) activation to be ranked
EDGE_MIN = 2  #: two nodes are linked when they share at least this many keywords


def merge_duplicates(nodes: Sequence[Node]) -> list[Node]:
    """Merge nodes of the same kind whose keyword sets are equal (SPEC §5.1).

    Equal keyword sets mean edge weight 1.0 both ways: left apart, N copies of one retried
    session pull ``(1 + DECAY·(N-1))^HOPS`` times as hard (the reference measured four copies
    of one stale session filling the top 5). The representative is the **last** node in load
    order (the newest session, the one that finished); the group keeps the position of its
    first node. The others ride along as ``members``, oldest first, de-duplicated by identity;
    a member identical to the representative is not kept — merging must not lose content
    (``Alice trusts Bob`` / ``Bob trusts Alice``, pinned by ``tests/test_semantics.py``).

    Returns:
        New representative nodes (copies; the input is not modified) in group order.
    """
    groups: dict[tuple[str, frozenset[str]], list[Node]] = {}
    for n in nodes:
        groups.setdefault((n.kind, n.keywords), []).append(n)
    out: list[Node] = []
    for group in groups.values():
        rep = group[-1]
        if len(group) == 1 and not rep.members:
            out.append(rep)
            continue
        seen = {rep.identity}
        members: list[Node] = []
        for m in group[:-1]:
            if m.identity not in seen:
                seen.add(m.identity)
                members.append(m)
        merged = Node(**{f: getattr(rep, f) for f in rep.__dataclass_fields__})
        merged.members = members
        merged.order = group[0].order
        out.append(merged)
    return out


@dataclass(slots=True)
class Graph:
    """Merged nodes and their weighted, symmetric edges (SPEC §5.2).

    Attributes:
        nodes: representatives in load order.
        neighbours: for node ``i``, ``[(j, w_ij), ...]`` in ascending ``j`` (so floating-point
            sums are reproducible).
        postings: keyword → ascending node indices (the inverted index).
    """

    nodes: list[Node]
    neighbours: list[list[tuple[int, float]]]
    postings: dict[str, list[int]] = field(default_factory=dict)


def build_graph(nodes: Sequence[Node], edge_min: int = EDGE_MIN) -> Graph:
    """Merge duplicates and link nodes sharing ``>= edge_min`` keywords (SPEC §5.1, §5.2).

    Weight ``w = shared / max(|A|, |B|)``. Built from the inverted index (keyword → nodes), never
    by comparing all pairs: the cost is the number of co-occurring pairs, not ``n²``.
    """
    merged = merge_duplicates(nodes)
    postings: dict[str, list[int]] = {}
    for i, n in enumerate(merged):
        for kw in n.keywords:
            postings.setdefault(kw, []).append(i)
    neighbours: list[list[tuple[int, float]]] = [[] for _ in merged]
    for i, n in enumerate(merged):
        shared: dict[int, int] = {}
        for kw in n.keywords:
            plist = postings[kw]
            if len(plist) == 1:
                continue
            for j in plist:
                if j > i:
                    shared[j] = shared.get(j, 0) + 1
        size_i = len(n.keywords)
        for j in sorted(shared):
            c = shared[j]
            if c >= edge_min:
                w = c / max(size_i, len(merged[j].keywords))
                neighbours[i].append((j, w))
                neighbours[j].append((i, w))
    # Pairs (i, j>i) are appended to i in ascending j, and to j in ascending i — all i < j come
    # before j's own pass, so every list is already ascending.
    return Graph(merged, neighbours, postings)


@dataclass(slots=True)
class Activation:
    """The result of spreading: activations in the order nodes first became active.

    Attributes:
        seeds: node index → seed activation, in load order.
        hops: activation after each hop (``hops[-1]`` is final), node index → value, each in the
            order nodes first became active.
    """

    seeds: dict[int, float]
    hops: list[dict[int, float]]

    @property
    def final(self) -> dict[int, float]:
        """Final activation (after the last hop), or the seeds when there were no hops."""
        return self.hops[-1] if self.hops else self.seeds


def seed(graph: Graph, query_kw: set[str] | frozenset[str]) -> dict[int, float]:
    """Seed activations ``|kw(node) ∩ kw(query)| / |kw(query)|`` in load order (SPEC §5.3)."""
    if not query_kw:
        return {}
    counts: dict[int, int] = {}
    for kw in query_kw:
        for i in graph.postings.get(kw, ()):
            counts[i] = counts.get(i, 0) + 1
    q = len(query_kw)
    return {i: counts[i] / q for i in sorted(counts)}


def classic(graph: Graph, query_kw: set[str] | frozenset[str]) -> Activation:
    """The reference model (SPEC §5.3): ``a ← a + DECAY·W·a``, :data:`HOPS` times.

    Every active node ``i`` sends ``a_i · DECAY · w_ij`` to every neighbour ``j``. It does not
    conserve activation: N near-copies of a bridge node pull N times as hard (SPEC §10,
    ``golden/home-bridge-*``). Kept exact for the golden rankings.
    """
    act = seed(graph, query_kw)
    hops: list[dict[int, float]] = []
    if not act:
        return Activation({}, [])
    seeds = dict(act)
    nbrs = graph.neighbours
    for _ in range(HOPS):
        nxt = dict(act)
        for i, a in act.items():
            for j, w in nbrs[i]:
                nxt[j] = nxt.get(j, 0.0) + a * DECAY * w
        act = nxt
        hops.append(act)
    return Activation(seeds, hops)


@dataclass(frozen=True, slots=True)
class Model:
    """An activation model with the constants its score scale needs.

    Attributes:
        name: the name users select (``--model``).
        activate: ``(graph, query_keywords) -> Activation``.
        thresh: a node must exceed this unrounded activation to be ranked (SPEC §5.3).
        body_lead: the best skill earns its body when it scores at least this times the
            second-best skill (SPEC §6.1).
        body_floor: ... or, as the only ranked skill, when it scores at least this.
    """

    name: str
    activate: Callable[[Graph, set[str] | frozenset[str]], Activation]
    thresh: float = THRESH
    body_lead: float = 1.7
    body_floor: float = 0.35


#: Activation models by name. ``classic`` is the reference (golden-exact).
MODELS: dict[str, Model] = {
    # Body gate constants of the reference: hits led the second skill by 2x+, noise stayed
    # within 1.1x (BODY_LEAD); as the only ranked skill, six right bodies scored 0.44+ and one
    # wrong one 0.22 (BODY_FLOOR).
    "classic": Model("classic", classic, THRESH, 1.7, 0.35),
}
DEFAULT_MODEL = "classic"


def rank(activation: Activation, thresh: float = THRESH) -> list[tuple[float, int]]:
    """Rank active nodes (SPEC §5.3).

    Returns:
        ``[(unrounded_activation, node_index), ...]`` for activations ``> thresh``, highest
        first; exactly equal activations keep the order in which nodes first became active.
    """
    items = sorted(activation.final.items(), key=lambda x: -x[1])
    return [(a, i) for i, a in items if a > thresh]
