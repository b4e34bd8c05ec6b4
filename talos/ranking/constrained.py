"""Constrained spreading activation (Crestani 1997) of the ``evidence`` model, in pure Python.

The exact model (:func:`talos.ranking.evidence.spread`) hands every active node's activation
to every term it holds and every term's mass to every node holding it, twice: at 30,000
sessions a Chinese query's second hop reads the postings of ~10,000 terms, the whole home.
Spreading activation in its constrained form (Crestani, "Application of spreading activation
techniques in information retrieval", AI Review 11, 1997) bounds that work by three rules, and
a recall's cost then follows its query, not the home:

- **firing threshold** (:attr:`Limits.fire`): a node fires in a hop only when its
  activation is at least ``fire`` times the hop's best (relative, so that the rule reads the
  same for a one-word and a ten-word query);
- **bounded frontier** (:attr:`Limits.frontier`): at most that many nodes fire per hop, the
  most active ones (ties: node order);
- **fan-out** (:attr:`Limits.fanout`): a firing node's activation reaches other nodes only
  through a term held by at most ``fanout`` nodes. A term above the limit (a wide term) hands
  its share (``mass/df``, what every holder gets in the exact hop) only to the firing nodes
  that hold it, whose rows are read anyway: what is lost is at most ``mass/df`` per holder
  never read, the smallest share a hop gives.

What stays exact: the seeds (:func:`talos.ranking.evidence.seeds`, every statistic over the
candidates, so a change of the evidence weights carries over); the exchange through the
query's own terms, whose holders were read for the seeds: every active node, fired or not,
hands them its part and receives theirs (so that nodes alike in the query stay alike however
the frontier cuts them); and the contiguity edges (:mod:`talos.ranking.contiguity`, a few per
fact line) of every active node. A node that does not fire keeps the part it would have handed
to its other terms. With every limit off (``fire`` 0, no frontier or fan-out bound)
:func:`spread` is the exact hop, float for float up to summation order
(``tests/test_constrained.py``).

The limits were chosen on the dev split (docs/design.md, "Constrained spreading").

Reading: the model asks a :class:`Postings` for a node's term ids (:meth:`Postings.row`) and
their number (:meth:`Postings.sizes`), a term's holders (:meth:`Postings.holders`) and its
fan-out (:meth:`Postings.dfs`), never the whole index; :class:`ArrayPostings` serves them from
a :class:`~talos.ranking.evidence.TermIndex`.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from talos.ranking.contiguity import Links
    from talos.ranking.evidence import TermIndex

__all__ = ["LIMITS", "Limits", "Postings", "spread"]


@dataclass(frozen=True, slots=True)
class Limits:
    """The three limits of constrained spreading (module docstring).

    Attributes:
        fire: a node fires when its activation is at least ``fire`` × the hop's best
            (0: every active node).
        frontier: at most this many nodes fire per hop (0: no bound).
        fanout: a term reaches nodes that did not fire only when at most this many nodes
            hold it (0: no bound).
    """

    fire: float = 0.0
    frontier: int = 0
    fanout: int = 0


#: The default model's limits (dev split; docs/design.md "Constrained spreading").
LIMITS = Limits(fire=0.05, frontier=50, fanout=10)


class Postings(Protocol):
    """What constrained spreading reads: per node its term ids, per term its holders."""

    def row(self, node: int) -> Sequence[int]:
        """The distinct term ids ``node`` holds (any order)."""
        ...

    def holders(self, term: int) -> Sequence[int]:
        """The nodes holding ``term``, ascending."""
        ...

    def dfs(self, terms: Sequence[int]) -> list[int]:
        """How many nodes hold each of ``terms``, in their order."""
        ...

    def holders_of(self, terms: Sequence[int]) -> list[int]:
        """The holders of each of ``terms`` one after the other (each ascending): what
        :meth:`holders` gives for each, concatenated, in one read."""
        ...

    def sizes(self, nodes: Sequence[int]) -> list[int]:
        """How many distinct terms each of ``nodes`` holds, in their order."""
        ...


class ArrayPostings:
    """:class:`Postings` over a :class:`~talos.ranking.evidence.TermIndex`'s arrays
    (``ptr``/``term`` node-major, ``kptr``/``knode`` term-major, ``df``)."""

    def __init__(self, index: TermIndex) -> None:
        self._ix = index

    def dfs(self, terms: Sequence[int]) -> list[int]:
        return self._ix.df[list(terms)].astype(int).tolist()

    def sizes(self, nodes: Sequence[int]) -> list[int]:
        return self._ix.counts[list(nodes)].tolist()

    def row(self, node: int) -> Sequence[int]:
        ix = self._ix
        lo, hi = int(ix.ptr[node]), int(ix.ptr[node + 1])
        return ix.term[lo:hi].tolist()

    def holders(self, term: int) -> Sequence[int]:
        ix = self._ix
        lo, hi = int(ix.kptr[term]), int(ix.kptr[term + 1])
        return ix.knode[lo:hi].tolist()

    def holders_of(self, terms: Sequence[int]) -> list[int]:
        if not terms:
            return []
        ix = self._ix
        ids = list(terms)
        starts, ends = ix.kptr[ids], ix.kptr[[t + 1 for t in ids]]
        lens = ends - starts
        # one gather: each run's positions start..end, runs laid end to end
        first = starts - (lens.cumsum() - lens)
        pos = first.repeat(lens) + range(int(lens.sum()))
        return ix.knode[pos].tolist()


#: Contiguity edges as Python lists: per sender, ``[(receiver, share), ...]``; ``out``: per
#: sender, the sum of its shares (``σ``).
Edges = tuple[Mapping[int, Sequence[tuple[int, float]]], Mapping[int, float]]


def spread(
    postings: Postings,
    a: dict[int, float],
    decay: float,
    edges: Edges | None,
    share: float,
    hops: int,
    limits: Limits = LIMITS,
    query: Sequence[int] = (),
) -> dict[int, float]:
    """``hops`` constrained hops from the activation ``a`` (node → value, the seeds), as
    :func:`talos.ranking.evidence.spread` with ``decay`` (``D``), contiguity ``edges``
    (:data:`Edges`; None: none) and ``share`` (``C``), under ``limits``; ``query``: the
    query's term ids, whose holders the seeds were read from: every active node exchanges
    through them exactly, fired or not. Returns node → activation for every node reached
    (values above 0)."""
    if decay <= 0 and (edges is None or share <= 0):
        return dict(a)
    keep = 1.0 / (1.0 + decay)
    to, out = edges if edges is not None and share > 0 else ({}, {})
    asked = {t: postings.holders(t) for t in sorted(set(query))}
    df_asked = {t: len(nodes) for t, nodes in asked.items()}
    # the candidates grouped by the query terms they hold: alike nodes send and receive
    # alike through those terms, so a hop costs one step per candidate, not per posting
    held: dict[int, list[int]] = {}
    for t, nodes in asked.items():
        for j in nodes:
            held.setdefault(j, []).append(t)
    sig_of = {j: tuple(ts) for j, ts in held.items()}
    groups: dict[tuple[int, ...], list[int]] = {}
    for j in sorted(sig_of):
        groups.setdefault(sig_of[j], []).append(j)
    fanout = limits.fanout
    for _ in range(hops):
        if not a:
            break
        firing = _firing(a, limits)
        nxt: defaultdict[int, float] = defaultdict(float)
        mass: dict[int, float] = {}
        sent_by: dict[tuple[int, ...], float] = {}
        wide: dict[int, float] = {}
        fired_wide: dict[int, list[int]] = {}
        df_wide: dict[int, int] = {}
        sizes = postings.sizes(list(a)) if decay > 0 else [0] * len(a)
        for (i, v), size in zip(a.items(), sizes, strict=True):
            if not size:
                nxt[i] = v * keep
                continue
            g = v * decay * keep / size
            kept = 0.0
            if i in firing:
                row = postings.row(i)
                for t, df in zip(row, postings.dfs(row), strict=True):
                    if t in asked or not fanout or df <= fanout:
                        mass[t] = mass.get(t, 0.0) + g
                    else:
                        wide[t] = wide.get(t, 0.0) + g
                        df_wide[t] = df
                        fired_wide.setdefault(t, []).append(i)
            else:
                sig = sig_of.get(i, ())
                if sig:
                    sent_by[sig] = sent_by.get(sig, 0.0) + g
                kept = g * (size - len(sig))  # a node that does not fire keeps the rest
            nxt[i] = v * keep + kept
        for sig in sorted(sent_by):
            for t in sig:
                mass[t] = mass.get(t, 0.0) + sent_by[sig]
        for t in sorted(wide):
            each = wide[t] / max(df_wide[t], 1)
            for j in fired_wide[t]:
                nxt[j] += each
        each_asked = {t: mass.pop(t) / df_asked[t] for t in sorted(asked) if t in mass}
        if each_asked:
            for sig, nodes in groups.items():
                got = sum(each_asked.get(t, 0.0) for t in sig)
                if got:
                    for j in nodes:
                        nxt[j] += got
        spread_to = sorted(mass)
        flat = postings.holders_of(spread_to)
        at = 0
        for t, df in zip(spread_to, postings.dfs(spread_to), strict=True):
            each = mass[t] / df
            for j in flat[at : at + df]:
                nxt[j] += each
            at += df
        if to:
            ck = share * keep
            for i in a:
                sent = to.get(i)
                if not sent:
                    continue
                c = a[i] * ck
                nxt[i] -= c * out[i]
                for j, sh in sent:
                    nxt[j] += c * sh
        a = {i: v for i, v in nxt.items() if v > 0}
    return a


def _firing(a: dict[int, float], limits: Limits) -> set[int]:
    """The nodes of ``a`` that fire this hop (:class:`Limits`)."""
    if limits.fire > 0:
        bar = limits.fire * max(a.values())
        nodes = [i for i, v in a.items() if v >= bar]
    else:
        nodes = list(a)
    if limits.frontier and len(nodes) > limits.frontier:
        nodes = heapq.nsmallest(limits.frontier, nodes, key=lambda i: (-a[i], i))
    return set(nodes)


def edges_of(links: Links) -> Edges:
    """The contiguity :class:`~talos.ranking.contiguity.Links` as :data:`Edges`."""
    src = links.src.tolist()
    dst = links.dst.tolist()
    shares = links.share.tolist()
    to: dict[int, list[tuple[int, float]]] = {}
    for i, j, s in zip(src, dst, shares, strict=True):
        to.setdefault(i, []).append((j, s))
    out_all = links.out
    return to, {i: float(out_all[i]) for i in to}


_EDGES: list[tuple[Links, Edges]] = []


def edges_cached(links: Links) -> Edges:
    """:func:`edges_of`, kept for the last ``links`` object (a kept graph's edges are one
    object for the graph's life)."""
    if _EDGES and _EDGES[0][0] is links:
        return _EDGES[0][1]
    got = edges_of(links)
    _EDGES[:] = [(links, got)]
    return got
