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
build and O(edges) per hop; written to move into ``talos/`` beside ``rank_model``.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np
import rank_model as M

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

    share: float = 0.5
    window: int = 2
    back: float = 1.0
    fall: float = 0.5
    gate: float = 0.0
    hops: int = M.HOPS
    positions: str = "all"
    base: M.Params = field(default_factory=M.Params)


@dataclass(frozen=True, slots=True)
class Links:
    """Contiguity edges of one index, sender-major: node ``i`` hands to ``dst[ptr[i]:ptr[i+1]]``
    (ascending) the parts ``share[...]`` of its contiguity mass; ``src`` is each edge's sender,
    ``out[i]`` = ``σ_i`` (the sum of its shares, ≤ 1); ``ahead[e]``: the receiver was written
    after the sender (a line of it follows a line of the sender in a run)."""

    ptr: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    share: np.ndarray
    out: np.ndarray
    ahead: np.ndarray

    @property
    def edges(self) -> int:
        """Number of directed edges."""
        return len(self.dst)

    def share_of(self, i: int, j: int) -> float:
        """The share ``i`` hands to ``j`` (0.0: no edge)."""
        lo, hi = self.ptr[i], self.ptr[i + 1]
        k = lo + int(np.searchsorted(self.dst[lo:hi], j))
        return float(self.share[k]) if k < hi and self.dst[k] == j else 0.0

    def neighbours(self, i: int, after: bool = False) -> list[int]:
        """The nodes ``i`` hands to, ascending (``after``: only those written after it)."""
        lo, hi = self.ptr[i], self.ptr[i + 1]
        if after:
            return self.dst[lo:hi][self.ahead[lo:hi]].tolist()
        return self.dst[lo:hi].tolist()


def links(
    node_of: Sequence[int],
    context: Sequence[Hashable],
    n: int,
    window: int = 1,
    back: float = 1.0,
    fall: float = 0.5,
    positions: str = "all",
) -> Links:
    """The contiguity edges of ``n`` nodes (module docstring).

    Args:
        node_of: per fact line in file order, its node (``-1``: no node).
        context: per line, its context (any hashable: ``(headings, date)``); ``None``: a line
            in no context (linked to nothing).
        window: ``w`` ≥ 1. back: ≥ 0. fall: > 0. positions: ``"all"`` or ``"last"``.

    Returns:
        :class:`Links` (no edge when every run has one line).

    Raises:
        ValueError: ``node_of`` and ``context`` differ in length, or a bad parameter.
    """
    if len(node_of) != len(context):
        raise ValueError(f"node_of has {len(node_of)} lines, context {len(context)}")
    if window < 1 or back < 0 or fall <= 0 or positions not in ("all", "last"):
        raise ValueError(f"bad contiguity parameters {window=} {back=} {fall=} {positions=}")
    lines = [(int(v), c) for v, c in zip(node_of, context, strict=True) if v >= 0]
    if positions == "last":
        last = {v: j for j, (v, _c) in enumerate(lines)}
        lines = [(v, c) if last[v] == j else (-1, None) for j, (v, c) in enumerate(lines)]
    runs: list[list[int]] = []
    prev: object = object()
    for v, c in lines:
        if v < 0 or c is None:
            prev = object()  # a dropped or context-free line ends the run
            continue
        if c != prev:
            runs.append([])
            prev = c
        if not runs[-1] or runs[-1][-1] != v:
            runs[-1].append(v)
    weight: dict[tuple[int, int], float] = {}
    ahead: set[tuple[int, int]] = set()

    def put(u: int, v: int, w: float) -> None:
        if u != v and w > weight.get((u, v), 0.0):
            weight[(u, v)] = w

    for run in runs:
        for j, u in enumerate(run):
            for d in range(1, window + 1):
                w = fall ** (d - 1)
                if j + d < len(run):
                    put(u, run[j + d], w)
                    if u != run[j + d]:
                        ahead.add((u, run[j + d]))
                if back > 0 and j - d >= 0:
                    put(u, run[j - d], back * w)
    full = (1 + back) * sum(fall ** (d - 1) for d in range(1, window + 1))
    pairs = sorted(weight)
    src = np.array([u for u, _v in pairs], dtype=np.intp)
    dst = np.array([v for _u, v in pairs], dtype=np.intp)
    w = np.array([weight[p] for p in pairs], dtype=np.float64)
    total = np.bincount(src, weights=w, minlength=n) if len(src) else np.zeros(n)
    share = w / np.maximum(full, total[src]) if len(src) else w
    ptr = np.zeros(n + 1, dtype=np.intp)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    out = np.bincount(src, weights=share, minlength=n) if len(src) else np.zeros(n)
    fwd = np.array([pr in ahead for pr in pairs], dtype=bool)
    return Links(ptr, src, dst, share, out, fwd)


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

    Without contiguity (``share`` 0, no edge, or no sender) each hop is
    ``rank_model.spread``'s, float for float."""
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


_HEADING = re.compile(r"^\s{0,3}(#{1,6})(?:\s+|$)(.*)$")
_TAG_DATE = re.compile(r"<!--\s*[\w-]+\s+(\d{4}-\d{2}-\d{2})\b[^>]*-->\s*$")


def memory_contexts(text: str) -> dict[int, tuple[tuple[str, ...], str]]:
    """``{line number (1-based): (headings, date)}`` of every non-heading, non-blank line of a
    ``memory.md`` text: ``headings`` = the texts of the headings above it, outermost first (a
    heading ends the sections of its level and deeper, SPEC §3.1), ``date`` = its provenance
    tag's date ("" untagged). Which lines are facts is the caller's (the home's nodes)."""
    out: dict[int, tuple[tuple[str, ...], str]] = {}
    path: list[tuple[int, str]] = []
    for no, line in enumerate(text.splitlines(), 1):
        m = _HEADING.match(line)
        if m:
            level = len(m.group(1))
            path = [(lv, t) for lv, t in path if lv < level] + [(level, m.group(2).strip())]
            continue
        if not line.strip():
            continue
        d = _TAG_DATE.search(line)
        out[no] = (tuple(t for _lv, t in path), d.group(1) if d else "")
    return out


def deliver(
    ev: M.Evidence,
    top: Sequence[int],
    graph: Links,
    floor: float,
    whole: float,
    relative: float,
    beside: bool = True,
    after: bool = True,
) -> list[int]:
    """The rows of a block (issue 15 item 2) on the contiguity ranking: nodes of ``top`` (the
    ranking's first ``k``, best first), in block order.

    - The block is empty unless the query has evidence: its best *seed* is evidence
      (``rank_model.is_evidence`` on the seed, before spreading: seeds are the same with or
      without contiguity, so the floor means the same in every home).
    - A row is evidence by itself when its own seed is at least ``relative`` × the best seed.
    - ``beside``: a row of ``top`` that is not is delivered when a row that is evidence by
      itself hands to it along contiguity (it is evidence only through that neighbour), right
      after the one that hands it the largest share (the nearest; ties: the better ranked);
      otherwise it is not delivered. ``after``: only a row written after
      that neighbour (the answer follows the question: measured on dev, such rows are gold
      13-21% of the time, rows written before it 1-7%).
    """
    if ev.z <= 0 or not len(top):
        return []
    best = float(ev.seeds.max())
    if not M.is_evidence(best, best, ev.scale, floor, whole):
        return []
    own = [int(n) for n in top if ev.seeds[n] >= relative * best]
    if not beside:
        return own
    mine = set(own)
    by: dict[int, list[int]] = {n: [] for n in own}
    for m in (int(x) for x in top):
        if m in mine:
            continue
        hands = [
            (graph.share_of(n, m), -i, n)
            for i, n in enumerate(own)
            if m in graph.neighbours(n, after)
        ]
        if hands:
            by[max(hands)[2]].append(m)  # beside the row that hands it the most (the nearest)
    return [x for n in own for x in (n, *by[n])]
