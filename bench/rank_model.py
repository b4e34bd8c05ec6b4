"""``evidence``: the ranking model researched for issue 15 (``bench/rank_lab.py``, dev only).

Self-contained numpy over CSR-like arrays, written to move into ``talos/`` as one more
activation model (``bench/README.md`` "Ranking model for issue 15 (dev research)"). In the
spirit of ``talos.activation.bipartite``: seeds from the query's analyzed terms, then two decaying,
mass-conserving hops over the node–term bipartite graph. What changes is the seed: a BM25
evidence score instead of the hub-damped share of matched keywords.

Notation: node ``i`` holds term ``t`` ``tf(i,t)`` times; ``df(t)`` nodes hold ``t``; the query
holds term ``t`` ``qtf(t)`` times. ``Q``: the query's distinct terms some node holds; ``U``:
those no node holds. The *candidates* ``C`` are the nodes holding a term of ``Q``, ``n = |C|``.

- query weight ``qw(t) = qtf·(K3 + 1) / (qtf + K3)`` (a term said twice counts 1.33, thrice
  1.5: long dialogue queries repeat what they are about);
- term weight ``idf(t) = ln(1 + (n - df + 0.5) / (df + 0.5))``: BM25's IDF taken over the
  candidates, not the whole home (a term no node holds: ``df = 1``);
- saturated term frequency ``sat(i,t) = tf·(K1 + 1) / (tf + K)``; ``K = K1`` for a word;
  for a CJK term ``K = K1·(1 - B_CJK + B_CJK·ℓ(i)/ℓ̄)``, ``ℓ(i)`` the node's count of CJK
  terms, ``ℓ̄`` its mean over the candidates holding any (length normalisation for CJK
  text only: measured on dev, it costs English turns and helps Chinese ones);
- the query's evidence ``Z = Σ_{t ∈ Q ∪ U} qw(t)·idf(t)`` (idf units);
- seed ``s_i = Σ_{t ∈ Q ∩ i} qw(t)·idf(t)·sat(i,t)/(K1 + 1) / Z`` in ``[0, 1)``: the share of
  the query's evidence node ``i`` holds;
- ``HOPS = 2`` hops ``a ← a/(1+D) + D/(1+D)·R·S·a``: ``S`` hands a node's activation to its
  terms in equal parts, ``R`` splits a term's mass evenly over its ``df`` holders (exactly
  ``talos.activation.bipartite``'s hop). ``R·S`` is column-stochastic: spreading moves activation
  and never creates it;
- the *evidence score* of a row, the one its relevance floor compares across queries:
  ``v_i = a_i·√Z`` = the geometric mean of its share of the query (``a_i``) and the evidence
  it holds in idf units (``a_i·Z``); a row is evidence when ``v_i >= FLOOR`` or its own seed
  ``s_i >= WHOLE`` (it holds about the whole query), :func:`relevance_floor`.

Every statistic is taken over the candidates, so a node that holds no query term changes no
seed: the SPEC §10 invariant (near-copies of a bridge raise no score) holds for the seeds by
construction, and for the spreading as in ``bipartite`` (``rank_lab.py invariants``). A
home-wide IDF or mean length would break it: the copies raise ``N`` or move the mean.

Constants (dev split, ``rank_lab.py sweep``): ``K1 = 1.2``, ``B_CJK = 0.75`` (BM25's usual
values; the dev surface is flat around them), ``K3 = 1``, ``D = 0.1``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "HOPS",
    "Evidence",
    "Params",
    "Query",
    "TermIndex",
    "activate",
    "is_cjk",
    "is_evidence",
    "query_vector",
    "relevance_floor",
]

HOPS = 2  #: rounds of spreading, as every talos model


@dataclass(frozen=True, slots=True)
class Params:
    """The model's constants (module docstring): ``k1`` (BM25 saturation), ``b_cjk`` (length
    normalisation of CJK terms), ``k3`` (query-term saturation; 0: each distinct term counts
    once), ``decay`` (``D``: the share a node hands on per hop is ``D/(1+D)``)."""

    k1: float = 1.2
    b_cjk: float = 0.75
    k3: float = 1.0
    decay: float = 0.1


def is_cjk(term: str) -> bool:
    """A term of CJK characters (Han, kana, Hangul: the analyzer's CJK runs)."""
    c = term[0]
    return (
        "\u3040" <= c <= "\u30ff"
        or "\u3400" <= c <= "\u9fff"
        or "\uac00" <= c <= "\ud7af"
        or ("\uf900" <= c <= "\ufaff")
    )


class TermIndex:
    """One home's nodes and their term counts as arrays (what the index would store).

    Node-major: node ``i`` holds the term ids ``term[ptr[i]:ptr[i+1]]`` (ascending) with
    counts ``tf[...]``. Term-major: term ``t`` is held by ``knode[kptr[t]:kptr[t+1]]``
    (ascending), counts ``ktf[...]``. ``df[t]``: holders; ``cjk[t]``: a CJK term;
    ``cjk_len[i]``: node ``i``'s count of CJK terms (with repeats).

    Args:
        counts: per node, ``{term: count}`` (every node holds a term).
        ids: per node, what its row stands for (e.g. memory ids).
    """

    def __init__(self, counts: Sequence[Counter[str]], ids: Sequence[list[str]]) -> None:
        vocab = sorted(set().union(*counts)) if counts else []
        self.vocab = vocab
        self.lookup = {t: i for i, t in enumerate(vocab)}
        self.ids = list(ids)
        self.n = len(counts)
        self.node_of: list[int] = list(range(self.n))  # of_texts: per text, its node
        rows = [sorted((self.lookup[t], c) for t, c in cnt.items()) for cnt in counts]
        self.ptr = np.zeros(self.n + 1, dtype=np.intp)
        np.cumsum([len(r) for r in rows], out=self.ptr[1:])
        self.term = np.array([t for r in rows for t, _c in r], dtype=np.intp)
        self.tf = np.array([c for r in rows for _t, c in r], dtype=np.float64)
        self.counts = np.diff(self.ptr)
        self.entry_node = np.repeat(np.arange(self.n, dtype=np.intp), self.counts)
        self.df = np.bincount(self.term, minlength=len(vocab)).astype(np.float64)
        self.cjk = np.array([is_cjk(t) for t in vocab], dtype=bool)
        self.cjk_len = np.bincount(
            self.entry_node, weights=self.tf * self.cjk[self.term], minlength=self.n
        )
        order = np.argsort(self.term, kind="stable")  # stable: holders stay ascending
        self.kptr = np.zeros(len(vocab) + 1, dtype=np.intp)
        np.cumsum(self.df.astype(np.intp), out=self.kptr[1:])
        self.knode = self.entry_node[order]
        self.ktf = self.tf[order]

    @classmethod
    def of_texts(
        cls,
        texts: Sequence[str],
        ids: Sequence[list[str]],
        terms: Callable[[str], Iterable[str]],
    ) -> TermIndex:
        """One node per text; texts with equal term *sets* are one node (SPEC §5.1: the last
        one represents, its counts are used; the ids of all ride along); texts without a
        term are no node. ``node_of`` of the result: per text, its node (``-1``: none), the
        positions contiguity links (``bench/contiguity.py``)."""
        tl = [list(terms(t)) for t in texts]
        groups: dict[frozenset[str], list[int]] = {}
        for i, ts in enumerate(tl):
            if ts:
                groups.setdefault(frozenset(ts), []).append(i)
        counts, node_ids = [], []
        node_of = [-1] * len(texts)
        for g in groups.values():
            counts.append(Counter(tl[g[-1]]))
            got: list[str] = []
            for m in g:
                got += [x for x in ids[m] if x not in got]
                node_of[m] = len(node_ids)
            node_ids.append(got)
        out = cls(counts, node_ids)
        out.node_of = node_of
        return out


@dataclass(frozen=True, slots=True)
class Query:
    """A query's analyzed terms against one index: ``ids`` (known distinct terms, ascending),
    ``qtf`` (their counts), ``unknown`` (the counts of the distinct terms no node holds)."""

    ids: np.ndarray
    qtf: np.ndarray
    unknown: np.ndarray

    @property
    def known(self) -> int:
        """Distinct query terms some node holds."""
        return len(self.ids)


def query_vector(index: TermIndex, terms: Iterable[str]) -> Query:
    """The :class:`Query` of analyzed query terms (with repeats); sums run over sorted terms,
    so every float is the same under any ``PYTHONHASHSEED``."""
    c = Counter(terms)
    known = sorted((index.lookup[t], n) for t, n in c.items() if t in index.lookup)
    unknown = [n for t, n in sorted(c.items()) if t not in index.lookup]
    return Query(
        np.array([t for t, _n in known], dtype=np.intp),
        np.array([n for _t, n in known], dtype=np.float64),
        np.array(unknown, dtype=np.float64),
    )


@dataclass(slots=True)
class Evidence:
    """One query's activation: ``final`` and ``seeds`` (``float64[n]``, shares of the query),
    ``z`` (the query's evidence ``Z``, idf units; 0 when nothing is seeded)."""

    final: np.ndarray
    seeds: np.ndarray
    z: float

    @property
    def scale(self) -> float:
        """``√Z``: a row's evidence score is its activation times this."""
        return float(np.sqrt(self.z))


def seeds(index: TermIndex, q: Query, p: Params) -> tuple[np.ndarray, float]:
    """``(s, Z)`` (module docstring); ``s`` is all zeros and ``Z = 0`` when no node holds a
    query term."""
    acc = np.zeros(index.n)
    if not q.known:
        return acc, 0.0
    starts = index.kptr[q.ids]
    lens = index.kptr[q.ids + 1] - starts
    pos = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
    nodes, tf = index.knode[pos], index.ktf[pos]
    n, mean_cjk = collection(index, nodes)
    df = index.df[q.ids]
    qw = sat_query(q.qtf, p.k3)
    w = qw * np.log1p((n - df + 0.5) / (df + 0.5))
    z = float(w.sum() + (sat_query(q.unknown, p.k3) * np.log1p((n - 0.5) / 1.5)).sum())
    k = np.full(len(nodes), p.k1)
    cjk = np.repeat(index.cjk[q.ids], lens)
    k[cjk] = p.k1 * (1 - p.b_cjk + p.b_cjk * index.cjk_len[nodes[cjk]] / mean_cjk)
    contrib = np.repeat(w, lens) * tf / (tf + k)  # sat / (K1 + 1)
    acc = np.bincount(nodes, weights=contrib, minlength=index.n)
    return acc / z, z


def collection(index: TermIndex, postings: np.ndarray) -> tuple[float, float]:
    """The statistics BM25 takes over its collection, here the query's candidates (the nodes
    of the query terms' ``postings``): their number ``n`` and their mean count of CJK terms
    ``ℓ̄`` (over those holding any; 1.0 when none does). Taken over the whole home instead,
    near-copies of a bridge raise every seed (``rank_lab.py invariants``; the test
    ``test_home_wide_statistics_break_the_bridge_invariant`` pins it)."""
    cand = np.unique(postings)
    cjk_len = index.cjk_len[cand]
    held = cjk_len[cjk_len > 0]
    return float(len(cand)), float(held.mean()) if len(held) else 1.0


def sat_query(qtf: np.ndarray, k3: float) -> np.ndarray:
    """``qw = qtf·(k3+1)/(qtf+k3)``; ``k3 = 0``: 1 per distinct term."""
    return qtf * (k3 + 1) / (qtf + k3) if k3 > 0 else np.ones_like(qtf)


def spread(index: TermIndex, a: np.ndarray, decay: float, hops: int = HOPS) -> np.ndarray:
    """``hops`` mass-conserving hops from ``a`` over the node–term bipartite graph (module
    docstring): ``Σ`` of the result = ``Σ a`` up to rounding.

    A hop is two passes over the entries (``numpy.bincount`` per term, ``numpy.add.reduceat``
    per node). When few nodes are active (the first hop of a specific query) only their
    entries are sent: the others would add exactly +0.0, so the floats are the same."""
    if decay <= 0 or not hops:
        return a
    keep = 1.0 / (1.0 + decay)
    give = decay * keep / np.maximum(index.counts, 1)
    words = len(index.df)
    for _ in range(hops):
        x = a * give
        active = np.flatnonzero(a)
        if int(index.counts[active].sum()) * 4 < len(index.term):
            starts = index.ptr[active]
            lens = index.counts[active]
            pos = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
            mass = np.bincount(index.term[pos], weights=np.repeat(x[active], lens), minlength=words)
        else:
            mass = np.bincount(index.term, weights=np.repeat(x, index.counts), minlength=words)
        each = mass / np.maximum(index.df, 1.0)
        a = a * keep + np.add.reduceat(each[index.term], index.ptr[:-1])
    return a


def activate(index: TermIndex, q: Query, p: Params = Params()) -> Evidence:
    """The model (module docstring): seeds, then :data:`HOPS` hops."""
    s, z = seeds(index, q, p)
    if z <= 0 or not s.any():
        return Evidence(s, s, z)
    return Evidence(spread(index, s, p.decay), s, z)


def is_evidence(seed: float, activation: float, scale: float, floor: float, whole: float) -> bool:
    """Whether a row is evidence for the query: its evidence score (``activation × scale``)
    clears ``floor``, or its own seed holds ``whole`` of the query's evidence (it holds about
    the whole query: a full match at tf 1 is ``1/(K1+1)`` = 0.45; with statistics over the
    candidates, a one-term query or a lone candidate has a small ``Z``, so the evidence score
    alone would leave "deploy" empty in a home where three facts say deploy)."""
    return activation * scale >= floor or seed >= whole


def relevance_floor(
    activations: Sequence[float],
    seeds: Sequence[float],
    scale: float,
    floor: float,
    whole: float,
    relative: float,
    k: int = 5,
) -> int:
    """How many of the first ``k`` rows of a ranking (activations and seeds, best first) to
    deliver: none when the best row is no evidence (:func:`is_evidence`); else the rows
    scoring at least ``relative`` × the best (a prefix: the ranking's order is kept)."""
    if not len(activations) or not is_evidence(seeds[0], activations[0], scale, floor, whole):
        return 0
    top = activations[0]
    n = 0
    for x in activations[:k]:
        if x < relative * top:
            break
        n += 1
    return n
