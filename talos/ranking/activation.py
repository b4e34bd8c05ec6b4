"""Spreading activation over the keyword graph: the ranking models (design §5.3).

Terms: a *seed node* is a node that shares keywords with the query; its seed activation is
``|kw(node) ∩ kw(query)| / |kw(query)|``. Each *hop* spreads activation along edges, scaled by
the *decay* factor. The models a person may select are in :data:`MODELS`:

- ``classic``: the reference model (:func:`classic`), golden-exact (``../shared/golden``);
- ``evidence`` (the default): BM25 evidence seeds on the analyzer's terms (design §4.1), hops
  over the node–term graph and the contiguity edges (:mod:`talos.ranking.evidence`, issue 15).

The research models that led to ``evidence`` (``damped``, ``bipartite``, ``flow``: hub-damped
seeds, mass-conserving spreading) are retired from the product: :data:`RETIRED` names them,
and selecting one is an error that names the models there are (:func:`model_named`).

A model says what it ranks over (:attr:`Model.over`): :data:`KEYWORDS`, the graph's keyword
incidence, or :data:`TERMS`, the term index and contiguity edges :class:`talos.view.kept.KeptState`
holds per graph; :class:`talos.Memory` asks the model, never its name.

Why they exist, how they were tuned (dev split only) and how they compare with BM25:
``bench/README.md``. The graph they run on is :mod:`talos.graph`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from talos.ranking import constrained
from talos.ranking.evidence import HOPS as HOPS_EVIDENCE
from talos.ranking.evidence import (
    PRIOR,
    SHARE,
    SMALL_HOME,
    Evidence,
    Params,
    TermIndex,
    query_vector,
)
from talos.ranking.evidence import activate as activate_evidence
from talos.ranking.evidence import seeds as evidence_seeds
from talos.selection import relevance

if TYPE_CHECKING:
    from talos.graph.graph import Graph
    from talos.ranking.contiguity import Links

__all__ = [
    "DECAY",
    "DEFAULT_MODEL",
    "HOPS",
    "KEYWORDS",
    "MODELS",
    "MODEL_NAMES",
    "RETIRED",
    "TERMS",
    "THRESH",
    "Activation",
    "DenseActivation",
    "Model",
    "classic",
    "contributions",
    "evidence",
    "model_named",
    "rank",
    "rank_arrays",
    "seed",
]

DECAY = 0.6  #: activation kept per hop
HOPS = 2  #: rounds of spreading
THRESH = 0.05  #: a node must exceed this (unrounded) activation to be ranked


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

    def hop_levels(self) -> list[dict[int, float]]:
        """Activation after each hop, as dicts (for explain)."""
        return self.hops


class DenseActivation(Activation):
    """An activation computed as dense arrays (one value per node, per level).

    ``levels[0]`` holds the seeds, ``levels[h]`` the activation after hop ``h``. The dict views
    (``seeds``, ``hops``, ``final``) are built on first use, in node order; :func:`rank` reads
    the final array directly, so a recall never builds them.
    """

    __slots__ = ("_dicts", "levels")

    def __init__(self, levels: list[Any]) -> None:
        super().__init__({}, [])
        self.levels = levels
        self._dicts: list[dict[int, float]] | None = None

    def _views(self) -> list[dict[int, float]]:
        if self._dicts is None:
            self._dicts = []
            for a in self.levels:
                idx = np.flatnonzero(a)
                self._dicts.append(dict(zip(idx.tolist(), a[idx].tolist(), strict=True)))
        return self._dicts

    @property
    def seeds(self) -> dict[int, float]:
        """Seed activation ``{node: value}`` of seeded nodes, in node order."""
        return self._views()[0]

    @seeds.setter
    def seeds(self, _value: dict[int, float]) -> None:  # Activation.__init__ sets it
        pass

    @property
    def final(self) -> dict[int, float]:
        """Final activation as ``{node: value}`` for active nodes, in node order."""
        return self._views()[-1]

    def hop_levels(self) -> list[dict[int, float]]:
        """Activation after each hop as dicts (for explain)."""
        return self._views()[1:]


def seed(graph: Graph, query_kw: set[str] | frozenset[str]) -> dict[int, float]:
    """Seed activations ``|kw(node) ∩ kw(query)| / |kw(query)|`` in load order (design §5.3)."""
    if not query_kw:
        return {}
    counts: dict[int, int] = {}
    for kw in query_kw:
        for i in graph.holders(kw):
            counts[i] = counts.get(i, 0) + 1
    q = len(query_kw)
    return {i: counts[i] / q for i in sorted(counts)}


def classic(graph: Graph, query_kw: set[str] | frozenset[str]) -> Activation:
    """The reference model (design §5.3): ``a ← a + DECAY·W·a``, :data:`HOPS` times.

    Every active node ``i`` sends ``a_i · DECAY · w_ij`` to every neighbour ``j``. It does not
    conserve activation: N near-copies of a bridge node pull N times as hard (design §10,
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


def evidence(
    index: TermIndex,
    edges: Links,
    terms: Sequence[str],
    at_least: tuple[float, float] | None = SMALL_HOME,
    prior: float | None = None,
    limits: constrained.Limits | None = None,
    exact: bool = False,
) -> Evidence:
    """The ``evidence`` model (issue 15, :mod:`talos.ranking.evidence`): BM25 evidence seeds of the
    analyzed query ``terms`` (:func:`talos.ranking.analyzer.analyze`, with repeats) over ``index``,
    then :data:`talos.ranking.evidence.HOPS` hops over the node–term graph and the contiguity
    ``edges``. ``at_least``: the small-home rule (:data:`talos.ranking.evidence.SMALL_HOME`; without
    it the example home's two queries found nothing). ``prior``: the background prior
    (:data:`talos.ranking.evidence.PRIOR` when None). Returns the
    :class:`~talos.ranking.evidence.Evidence` (``final``, ``seeds``: one value per node; ``z``: the
    query's evidence, idf units). ``limits``: those of the constrained hops
    (:mod:`talos.ranking.constrained`; None: :data:`~talos.ranking.constrained.LIMITS` as it
    is at the call, what ``bench/quality.py --limits`` sets); ``exact``: the exact hops of
    :func:`talos.ranking.evidence.activate` instead (the model before design §5.4)."""
    q = query_vector(index, terms)
    weight = PRIOR if prior is None else prior
    if exact:
        return activate_evidence(index, q, graph=edges, at_least=at_least, prior=weight)
    s, z = evidence_seeds(index, q, at_least=at_least, prior=weight)
    if z <= 0 or not s.any():
        return Evidence(s, s, z)
    held = np.flatnonzero(s)
    seeded = dict(zip(held.tolist(), s[held].tolist(), strict=True))
    got = constrained.spread(
        constrained.ArrayPostings(index), seeded, Params().decay,
        constrained.edges_cached(edges), SHARE, HOPS_EVIDENCE,
        constrained.LIMITS if limits is None else limits, q.ids.tolist(),
    )  # fmt: skip
    final = np.zeros(index.n)
    if got:
        final[np.fromiter(got, dtype=np.intp, count=len(got))] = list(got.values())
    return Evidence(final, s, z)


#: :attr:`Model.over`: the model ranks over the graph's keyword incidence (design §4 keywords):
#: ``activate(graph, keywords(query)) -> Activation``.
KEYWORDS = "keywords"
#: :attr:`Model.over`: the model ranks over the term index and the contiguity edges the kept
#: state holds per graph (:meth:`talos.view.kept.KeptState.evidence_index`), on analyzer terms
#: (design §4.1): ``activate(index, edges, analyze(query), at_least) -> Evidence``, delivered by
#: the relevance floor (:func:`talos.selection.rows.select_evidence`, design §6.1 rule 5).
TERMS = "terms"


@dataclass(frozen=True, slots=True)
class Model:
    """An activation model with the constants its score scale needs.

    Attributes:
        name: the name users select (``--model``).
        activate: what scores the nodes; its arguments and result depend on ``over``
            (:data:`KEYWORDS`: ``(graph, query_keywords) -> Activation``; :data:`TERMS`:
            ``(term_index, contiguity_edges, query_terms, at_least) -> Evidence``, ``at_least``
            the small-home rule).
        thresh: a node must exceed this unrounded activation to be ranked (design §5.3).
        body_lead: the best skill earns its body when it scores at least this times the
            second-best skill (design §6.1).
        body_floor: ... or, as the only ranked skill, when it scores at least this; for a
            :data:`TERMS` model, the floor on the skill's own seed evidence (design §6.1 rule 5).
        over: :data:`KEYWORDS` or :data:`TERMS`.
    """

    name: str
    activate: Callable[..., Any]
    thresh: float = THRESH
    body_lead: float = 1.7
    body_floor: float = 0.35
    over: str = KEYWORDS


#: Activation models by name. ``classic`` is the reference (golden-exact).
MODELS: dict[str, Model] = {
    # Body gate constants of the reference: hits led the second skill by 2x+, noise stayed
    # within 1.1x (BODY_LEAD); as the only ranked skill, six right bodies scored 0.44+ and one
    # wrong one 0.22 (BODY_FLOOR).
    "classic": Model("classic", classic, THRESH, 1.7, 0.35),
    # Every node the query reaches is ranked (thresh 0); the relevance floor decides what is
    # delivered, and the body gate is talos.selection.relevance.earns_body with its dev constants.
    "evidence": Model(
        "evidence", evidence, 0.0, relevance.BODY_LEAD, relevance.BODY_FLOOR, over=TERMS
    ),
}
#: Chosen on the test split (bench/README.md "Ranking model for issue 15"; issue 15): LoCoMo
#: test Recall@5 0.585 against the tuned BM25's 0.539 (Δ +0.046, 95% CI [+0.013, +0.078]);
#: ``bipartite`` lost to that BM25 on held-out conversations (0.493 vs 0.530). Through the
#: relevance floor 95% of LoCoMo test questions about another conversation get an empty block
#: (``bipartite``: 0%, every block filled to ``k``). ``classic`` is the reference
#: (golden-exact).
DEFAULT_MODEL = "evidence"
#: Every model name a person may select (``Memory(model=…)``, ``--model``, ``model =``).
MODEL_NAMES: tuple[str, ...] = tuple(MODELS)
#: Research models no longer selectable (bench/README.md has how they compared).
RETIRED: tuple[str, ...] = ("damped", "bipartite", "flow")


def model_named(name: str) -> Model:
    """The model a person selected by ``name`` (:data:`MODELS`).

    Raises:
        ValueError: ``name`` is no model, or a retired one (:data:`RETIRED`); the message
            names the models there are.
    """
    model = MODELS.get(name)
    if model is not None:
        return model
    choose = f"choose one of: {', '.join(MODELS)}"
    if name in RETIRED:
        raise ValueError(f"model {name!r} is retired (a research model); {choose}")
    raise ValueError(f"unknown model {name!r}; {choose}")


def rank_arrays(
    activation: Activation, thresh: float = THRESH, k: int | None = None, among: Any = None
) -> tuple[Any, Any]:
    """:func:`rank` as two arrays ``(activations, node_indices)``, in rank order, so a caller
    that needs a few rows does not turn thousands of ranked episodes into tuples.

    Args:
        k: only the first ``k`` rows of the ranking (the same rows, in the same order).
            Sorting every active node was a third of a recall over 1,000,000 facts (95 ms;
            issue 12 item 8); the ``k`` best are chosen by a partition first.
        among: only these node positions (ascending), ranked as in the full ranking (the
            skills, for the body gate).
    """
    if isinstance(activation, DenseActivation) and len(activation.levels) > 1:
        a = activation.levels[-1]
        if among is not None:
            idx = np.asarray(among, dtype=np.intp)
            idx = idx[a[idx] > thresh]
        else:
            idx = np.flatnonzero(a > thresh)
        if k is not None and len(idx) > 4 * k + 64:
            # every node scoring at least the k-th best value, ties included: sorted stably
            # (by position among equals) their first k are the ranking's first k
            vals = a[idx]
            kth = np.partition(vals, len(vals) - max(k, 1))[len(vals) - max(k, 1)]
            idx = idx[vals >= kth]
        order = idx[np.argsort(-a[idx], kind="stable")]
        if k is not None:
            order = order[: max(k, 0)]
        return a[order], order
    if among is not None:
        keep = set(np.asarray(among).tolist())
        ranked = [(v, i) for v, i in rank(activation, thresh) if i in keep][:k]
        return (
            np.array([v for v, _i in ranked], dtype=np.float64),
            np.array([i for _v, i in ranked], dtype=np.intp),
        )
    if k is not None:
        values, order = rank_arrays(activation, thresh)
        return values[: max(k, 0)], order[: max(k, 0)]
    ranked = rank(activation, thresh)
    return (
        np.array([v for v, _i in ranked], dtype=np.float64),
        np.array([i for _v, i in ranked], dtype=np.intp),
    )


def rank(activation: Activation, thresh: float = THRESH) -> list[tuple[float, int]]:
    """Rank active nodes (design §5.3).

    Returns:
        ``[(unrounded_activation, node_index), ...]`` for activations ``> thresh``, highest
        first; exactly equal activations keep the order in which nodes first became active.
    """
    if isinstance(activation, DenseActivation) and len(activation.levels) > 1:
        a = activation.levels[-1]
        idx = np.flatnonzero(a > thresh)
        order = idx[np.argsort(-a[idx], kind="stable")]
        return list(zip(a[order].tolist(), order.tolist(), strict=True))
    items = sorted(activation.final.items(), key=lambda x: -x[1])
    return [(a, i) for i, a in items if a > thresh]


def contributions(
    graph: Graph, act: Activation, i: int
) -> tuple[float, list[float], list[dict[str, Any]]]:
    """How node ``i`` got its activation, for explain (design §6.2).

    Returns:
        ``(seed, gains, edges)``: its seed activation (0.0 when not seeded); the gain of each
        hop (after minus before); and, per hop, every design §5.2 edge from a node active before
        that hop, as ``{"hop", "from" (the node's key), "weight", "from_activation"}``, both
        rounded to 4 places.
    """
    levels = [act.seeds, *act.hop_levels()]
    gains = [levels[h].get(i, 0.0) - levels[h - 1].get(i, 0.0) for h in range(1, len(levels))]
    edges = []
    for h in range(1, len(levels)):
        prev = levels[h - 1]
        for j, w in graph.neighbours[i]:
            if j in prev:
                edges.append(
                    {
                        "hop": h,
                        "from": graph.nodes[j].key,
                        "weight": round(w, 4),
                        "from_activation": round(prev[j], 4),
                    }
                )
    return act.seeds.get(i, 0.0), gains, edges
