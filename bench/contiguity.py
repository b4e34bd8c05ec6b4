"""Contiguity: a second kind of edge for the ``evidence`` model (issue 15, dev research).

Memories written next to each other are associated (the contiguity effect of free recall,
temporal context models): in a dialogue the answer is the turn after the question, in a
person's notes the facts under one heading and of one day belong together. The keyword graph
cannot reach such a neighbour when it shares no specific term with the query (the answer
"Some fun ones like charades and a scavenger hunt" to "What kind of activities did Maria do at
the picnic?"); a contiguity edge reaches it in one hop. ``bench/contiguity_lab.py`` measures it,
``bench/README.md`` "Contiguity (issue 15, dev research)" has the numbers.

**Context.** The fact lines of ``memory.md`` in file order; a line's *context* is its section
(the path of markdown headings above it, issue 15 item 4) and its observed date (the
provenance tag's date, "" untagged). A *context run* is a maximal run of consecutive fact lines
of one context; lines that are no node (too short, filtered) are skipped, and consecutive lines
of the same node count once (four identical lines are one line). In a LoCoMo home every turn is
tagged with its session's date, so the runs are the sessions.

**Edges.** In a run, the line at position ``j`` links to the line at ``j + δ`` (``δ = 1 … w``,
forward: what was written after it) with weight ``FALL^(δ-1)``, and to ``j - δ`` (backward)
with ``BACK·FALL^(δ-1)``. A node's edge to another is the largest weight over its lines (a
merged node, SPEC §5.1, has a line per member: it links to the neighbours of each, none
counted twice); a node has no edge to itself. An edge's *share* is its weight over ``W = (1 +
BACK)·Σ_δ FALL^(δ-1)``, the weight of a full window (or over the node's weight sum, when a
merged node's lines sum to more): a line at a run's end hands on less, and keeps the rest.

**Spreading.** ``evidence``'s hop (``rank_model.spread``: keep ``a/(1+D)``, hand
``D/(1+D)·a`` to the terms), where a node with edges hands ``C`` of what it keeps to its
neighbours, by share::

    a ← (1 - C·σ)∘a/(1+D) + D/(1+D)·R·S·a + C/(1+D)·T·a,   σ_i = Σ_j T_ji ≤ 1

``T`` holds the shares; every column of ``R·S`` sums to 1 and column ``i`` of ``T`` to ``σ_i``,
so a hop moves activation and never creates it. A home with no context run of two lines is
exactly ``evidence`` (same floats); so is ``C = 0``. ``GATE``: a node hands activation along
contiguity only when its own seed is at least ``GATE`` × the best seed (0: every node).

Everything is numpy over CSR arrays (edges sorted by sender, then receiver), O(lines·w) to
build and O(edges) per hop. The edges now live in ``talos.contiguity``, the spreading in
``talos.evidence.spread`` and the block's rows in ``talos.relevance.deliver``: this module is
the lab's thin caller, with the research switches (``gate``, ``hops``) the shipped model does
not have.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np
import rank_model as M

from talos import contiguity as T
from talos import evidence as E
from talos.contiguity import Links, memory_contexts
from talos.relevance import deliver

__all__ = [
    "Links",
    "Params",
    "activate",
    "deliver",
    "links",
    "memory_contexts",
    "spread",
]


@dataclass(frozen=True, slots=True)
class Params:
    """Contiguity's constants (module docstring): ``share`` (``C``: the part of what a node
    keeps that it hands to its neighbours), ``window`` (``w`` lines each way), ``back``
    (weight of a backward edge; 0: forward only), ``fall`` (weight of each further line),
    ``gate`` (seed gate; 0: none), ``hops`` (contiguity carries in the first this many hops),
    ``positions`` (``"all"``: a merged node's every line; ``"last"``: its representative's),
    ``base`` (the ``evidence`` constants)."""

    share: float = E.SHARE
    window: int = 2
    back: float = 1.0
    fall: float = 0.5
    gate: float = 0.0
    hops: int = M.HOPS
    positions: str = "all"
    base: M.Params = field(default_factory=M.Params)


def links(
    node_of: Sequence[int],
    context: Sequence[Hashable],
    n: int,
    window: int = 1,
    back: float = 1.0,
    fall: float = 0.5,
    positions: str = "all",
) -> Links:
    """``talos.contiguity.links`` with the lab's old default window (1; the shipped one is
    :data:`talos.contiguity.WINDOW`, 2, which the lab passes as ``Params().window``)."""
    return T.links(node_of, context, n, window, back, fall, positions)


def spread(
    index: M.TermIndex,
    graph: Links,
    a: np.ndarray,
    decay: float,
    share: float,
    hops: int = M.HOPS,
    senders: np.ndarray | None = None,
    contiguity_hops: int = M.HOPS,
) -> np.ndarray:
    """``hops`` mass-conserving hops over both kinds of edge (module docstring); ``Σ`` of the
    result = ``Σ a`` up to rounding. ``senders``: a boolean mask of the nodes that may hand on
    along contiguity (``None``: all); contiguity carries in the first ``contiguity_hops``.
    Without those two research switches this is ``talos.evidence.spread``.

    Without contiguity (``share`` 0, no edge, or no sender) each hop is
    ``rank_model.spread``'s, float for float."""
    if senders is None and contiguity_hops >= hops:
        return E.spread(index, a, decay, graph, share, hops)
    if not hops:
        return a
    keep = 1.0 / (1.0 + decay)
    out = graph.out if senders is None else graph.out * senders
    for h in range(hops):
        nxt = M.spread(index, a, decay, 1) if decay > 0 else a.copy()
        if share > 0 and graph.edges and h < contiguity_hops:
            c = a * (share * keep)
            sent = c[graph.src] * graph.share
            if senders is not None:
                sent = sent * senders[graph.src]
            if sent.any():
                nxt = nxt - c * out + np.bincount(graph.dst, weights=sent, minlength=len(a))
        a = nxt
    return a


def activate(index: M.TermIndex, graph: Links, q: M.Query, p: Params = Params()) -> M.Evidence:
    """``evidence`` with contiguity: ``rank_model``'s seeds, then :data:`rank_model.HOPS`
    hops of :func:`spread`."""
    s, z = M.seeds(index, q, p.base)
    if z <= 0 or not s.any():
        return M.Evidence(s, s, z)
    senders = s >= p.gate * s.max() if p.gate > 0 else None
    final = spread(index, graph, s, p.base.decay, p.share, M.HOPS, senders, p.hops)
    return M.Evidence(final, s, z)
