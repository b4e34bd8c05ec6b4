"""``evidence``: the ranking model of issue 15 — BM25 evidence seeds, then two mass-conserving
hops over the node–term graph and the contiguity edges (``bench/README.md`` "Ranking model
for issue 15", "Contiguity"; ``bench/rank_model.py`` and ``bench/contiguity.py`` call this).

Notation: node ``i`` holds term ``t`` ``tf(i,t)`` times (terms of
:func:`talos.ranking.analyzer.analyze`);
``df(t)`` nodes hold ``t``; the query holds ``t`` ``qtf(t)`` times. ``Q``: the query's distinct
terms some node holds; ``U``: those no node holds. The *candidates* ``C`` are the nodes holding
a term of ``Q``, ``n = |C|``.

- query weight ``qw(t) = qtf·(K3 + 1)/(qtf + K3)`` (a term said twice counts 1.33, thrice 1.5:
  long dialogue queries repeat what they are about);
- term weight ``idf(t) = ln(1 + (n − df + 0.5)/(df + 0.5))``: BM25's IDF over the candidates,
  not the home (a term no node holds: ``df = 1``); through ``Memory``, at most the term's idf
  in ordinary English text, ``ln(1/(L·f(t)))`` (the background prior, :data:`PRIOR`,
  :func:`language_idf`): in a small home every word is rare, and "use" was strong evidence;
- ``sat(i,t) = tf·(K1 + 1)/(tf + K)``; ``K = K1`` for a word (a *long record*'s, of more
  than :data:`LONG_WORDS` word terms, ``K1·(1 − B_LONG + B_LONG·ℓ_w(i)/LONG_WORDS)``,
  :func:`long_record_k`); for a CJK term
  ``K = K1·(1 − B_CJK + B_CJK·ℓ(i)/ℓ̄)``, ``ℓ(i)`` the node's count of CJK terms, ``ℓ̄`` its mean
  over the candidates holding any (dev: length normalisation costs English turns, b 0.1 →
  −0.015 LoCoMo, and helps Chinese ones, b 0.75 vs 0.25 → +0.056);
- the query's evidence ``Z = Σ_{t ∈ Q ∪ U} qw(t)·idf(t)`` (idf units);
- seed ``s_i = Σ_{t ∈ Q ∩ i} qw(t)·idf(t)·sat(i,t)/(K1 + 1) / Z`` in ``[0, 1)``: the share of
  the query's evidence node ``i`` holds;
- :data:`HOPS` hops ``a ← (1 − C·σ)∘a/(1 + D) + D/(1 + D)·R·S·a + C/(1 + D)·T·a``: ``S`` hands a
  node's activation to its terms in equal parts, ``R`` splits a term's mass evenly over its
  ``df`` holders (``talos.ranking.activation.bipartite``'s hop); ``T`` holds the contiguity shares
  (:mod:`talos.ranking.contiguity`, column ``i`` sums to ``σ_i``). Both are column-stochastic up to
  ``σ``, so a hop moves activation and never creates it (Σ stays the seeds'). Without an edge
  (or ``C = 0``) it is the keyword hop alone, float for float;
- the *evidence score* of a row, what the relevance floor compares across queries:
  ``v_i = a_i·√Z`` = the geometric mean of its share of the query and the evidence it holds
  in idf units (:mod:`talos.selection.relevance`).

Every statistic is taken over the candidates, so a node that holds no query term changes no
seed: the design §10 invariant (near-copies of a bridge raise no score) holds by construction
(with home-wide statistics 7 and 40 copies raise the csv-clean skill 0.624 → 0.628 / 0.630;
``tests/test_evidence.py``). Ties break by node order; every sum runs over sorted term ids and
ascending postings, so the floats are the same under any ``PYTHONHASHSEED``.

Constants (dev split; ``rank_lab.py sweep``, ``contiguity_lab.py sweep``): ``K1 = 1.2``,
``B_CJK = 0.75`` (BM25's textbook values, the dev surface flat around them), ``K3 = 1``,
``D = 0.1``, contiguity ``C = 0.5`` (with ``w = 2``, ``FALL = 0.5``, symmetric).

How ``Memory`` calls it (``Memory(model="evidence")``)
-----------------------------------------------------
*Kept state, per graph (one per authorized view; :meth:`talos.view.kept.KeptState.evidence_index`;
without the index built in-process by :func:`of_nodes`):* a :class:`TermIndex` over the nodes'
matching texts in node order (a skill's first 1200 characters without its not-for clauses,
design §3.2; a fact's text, and each term of its heading path it lacks at tf 1) and the
:class:`~talos.ranking.contiguity.Links` of its fact lines: ``contiguity.links(node per fact line in
file order — a merged node at each member's line —, contexts from
contiguity.memory_contexts(memory.md), index.n)`` (a heading ends a run; its line is no
node); skills and episodes are in no context.
With the index, the term index is gathered from the analyzed term rows index.db keeps per
matching text and heading path (:class:`talos.view.termrows.TermRows`: node-major ``vocab``,
``cjk``, ``ptr``, ``term``, ``tf``, keyed by their hash; :func:`heading_context`,
:func:`counts_of`) and completed by :meth:`TermIndex.from_arrays`, float for float this one;
a new session, a changed line or heading analyses its own text only. A graph patched after an
edit or restacked after a new or removed session gets its index patched from the last one
(:mod:`talos.view.termpatch`, array for array the gathered one); the edges are linked again when a
record or memory.md changed (:func:`contiguity_of`, over the records alone; an edited plain
line re-reads its own context only, :func:`line_contexts`), else only resized.
*Per query* (:meth:`talos.Memory.recall`, :func:`talos.selection.rows.select_evidence`): ``terms =
analyze(query)``; ``ev = activate(index, query_vector(index, terms), graph=links,
at_least=SMALL_HOME)``; the ranking is ``ev.final`` best first (ties: node order); the
block's rows ``relevance.deliver(ev, top[:k], links)`` (only these are hits, item 6); the
body ``relevance.earns_body(order, is_skill, ev.final, own)`` with ``seeds, scale =
body_evidence(index, terms, at_least=SMALL_HOME)`` and ``own = lambda i: (seeds[i], scale)``.
*explain* shows ``ev.seeds``, ``ev.final``, each row's evidence score ``final × ev.scale``,
where ``deliver`` cut, and ``analyzer.analyze_written(query)`` for the matched terms as
written.
*Cost* (``bench/contiguity_lab.py cost --sessions 30000``: 16,599 nodes, 797,332 node–term
entries, 2,000 edges; 200 queries, load 2.5 on 2 cores): the whole query above, median 7.5 ms
(p90 11.3 ms); ``activate`` alone 5.4 ms with contiguity, 5.1 ms without; the term index from
its stored arrays 65 ms per process, analysing every node instead 2.5 s.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from talos.ranking.analyzer import analyze, frequency, is_cjk, without_unigrams
from talos.ranking.arrays import unique
from talos.ranking.contiguity import Links, MemoryContexts, links
from talos.sources.facts import written_by_talos
from talos.sources.session_parts import matching_extra
from talos.sources.sessions import OUTCOME_CHARS
from talos.sources.skills import frontmatter_as_text
from talos.text import MATCH_MAX, drop_not_for

if TYPE_CHECKING:
    from talos.model import Node

__all__ = [
    "B_LONG",
    "HOPS",
    "LONG_WORDS",
    "PRIOR",
    "SHARE",
    "SMALL_HOME",
    "Evidence",
    "Params",
    "Query",
    "TermIndex",
    "activate",
    "background",
    "body_evidence",
    "collection",
    "contiguity_of",
    "counts_of",
    "heading_context",
    "language_idf",
    "line_contexts",
    "long_record_k",
    "matching_text",
    "of_nodes",
    "query_vector",
    "seeds",
    "spread",
]

HOPS = 2  #: rounds of spreading, as every talos model
#: ``C``: the part of what a node keeps that it hands to its contiguity neighbours (dev, w 2:
#: C 0.4 → LoCoMo R@5 0.628, 0.5 → 0.642, 0.6 → 0.630, 0.7 → 0.600).
SHARE = 0.5


#: A *long record*: one of more word terms (with repeats) than this, whose word terms
#: saturate slower (:func:`long_record_k`). Above every fact, dialogue turn and episode the
#: bench holds (LoCoMo, MADial and the Chinese set: none reaches it, so their R@k are
#: unchanged), below a skill's 1,200 characters (50–90 word terms in
#: ``bench/personal_home``).
LONG_WORDS = 40.0
#: How much slower a long record's word terms saturate (:func:`long_record_k`). On
#: ``bench/personal.py``'s everyday set (its 40 asks and ``chores.py`` in each folder, 295
#: prompts), the share of recalls holding the record delivered most often: 0 → 22%
#: (``engineering-guidelines``, a skill of every topic), **0.5 → 15%** (asks 33/40 → 32/40:
#: "search the repo for every TODO comment" was answered only because that skill, which
#: shares "comment" with it, lifted the block over the floor), 0.75 → 11% (31/40), 1.0 →
#: 10% (31/40); with the pivot at 60 and 0.5, 18% (33/40). bench/README "A personal home".
B_LONG = 0.5


def long_record_k(
    words: np.ndarray, long_words: float = LONG_WORDS, b: float = B_LONG
) -> np.ndarray:
    """The factor of ``K1`` for the word terms of records of ``words`` word terms each (with
    repeats; ``float64``, one per record): 1 up to ``long_words``, above it BM25's length
    normalisation ``1 − b + b·ℓ/ℓ₀`` with the pivot ``ℓ₀ = long_words``. A long record (a
    skill's 1,200 characters) shares a word with almost any task; each word it mentions once
    buys it less, so it no longer turns up in every block (at ℓ = 80, b 0.5: ``K`` ×1.5, a
    term said once 0.45 → 0.36 of its weight). BM25 normalises every length (b 0.75, the
    mean as pivot); on dialogue turns that cost −0.015 LoCoMo R@5 at b 0.1 (module
    docstring), so records up to the pivot keep ``K1``. Constants: :data:`LONG_WORDS`,
    :data:`B_LONG`; ``b`` 0 or ``long_words`` 0: all ones."""
    if b <= 0 or long_words <= 0:
        return np.ones(len(words))
    return 1.0 - b + b * np.maximum(words, long_words) / long_words


@dataclass(frozen=True, slots=True)
class Params:
    """The model's constants (module docstring): ``k1`` (BM25 saturation), ``b_cjk`` (length
    normalisation of CJK terms), ``k3`` (query-term saturation; 0: each distinct term counts
    once), ``decay`` (``D``: the share a node hands to its terms per hop is ``D/(1+D)``),
    ``long_words`` and ``b_long`` (:func:`long_record_k`: a record of more word terms than
    ``long_words`` saturates slower; ``b_long`` 0: never)."""

    k1: float = 1.2
    b_cjk: float = 0.75
    k3: float = 1.0
    decay: float = 0.1
    long_words: float = LONG_WORDS
    b_long: float = B_LONG


class TermIndex:
    """One graph's nodes and their term counts as arrays (what the index stores).

    Node-major: node ``i`` holds the term ids ``term[ptr[i]:ptr[i+1]]`` (ascending) with
    counts ``tf[...]``. Term-major: term ``t`` is held by ``knode[kptr[t]:kptr[t+1]]``
    (ascending), counts ``ktf[...]``. ``df[t]``: holders; ``cjk[t]``: a CJK term;
    ``cjk_len[i]``: node ``i``'s count of CJK terms (with repeats); ``vocab``: the terms,
    sorted (``lookup``: term → id).

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
        self._derive(np.array([is_cjk(t) for t in vocab], dtype=bool))

    @classmethod
    def from_arrays(
        cls,
        vocab: Sequence[str],
        ptr: np.ndarray,
        term: np.ndarray,
        tf: np.ndarray,
        ids: Sequence[list[str]],
        cjk: np.ndarray | None = None,
    ) -> TermIndex:
        """The index from its stored node-major arrays (what an index file keeps, as
        ``talos.graph.episodes`` keeps the keyword incidence): ``vocab`` sorted, ``ptr`` (``n + 1``
        offsets), ``term`` (ascending term ids per node), ``tf`` (their counts), ``cjk`` (per
        term; derived from ``vocab`` when None). Equal to building it from the counts, float
        for float, without re-analysing a text (``tests/test_evidence.py``)."""
        self = cls.__new__(cls)
        self.vocab = list(vocab)
        self.lookup = {t: i for i, t in enumerate(self.vocab)}
        self.ids = list(ids)
        self.n = len(ptr) - 1
        self.node_of = list(range(self.n))
        self.ptr = np.asarray(ptr, dtype=np.intp)
        self.term = np.asarray(term, dtype=np.intp)
        self.tf = np.asarray(tf, dtype=np.float64)
        flags = np.array([is_cjk(t) for t in self.vocab], dtype=bool) if cjk is None else cjk
        self._derive(np.asarray(flags, dtype=bool))
        return self

    @classmethod
    def from_parts(
        cls,
        *,
        vocab: list[str],
        lookup: dict[str, int],
        ptr: np.ndarray,
        term: np.ndarray,
        tf: np.ndarray,
        df: np.ndarray,
        cjk: np.ndarray,
        cjk_len: np.ndarray,
        kptr: np.ndarray,
        knode: np.ndarray,
        ktf: np.ndarray,
    ) -> TermIndex:
        """The index from every one of its arrays, nothing derived (the class docstring says
        what each holds; ``lookup`` is shared, never changed): what :mod:`talos.view.termpatch`
        assembles from a graph's index for the next graph (``tests/test_termpatch.py``)."""
        self = cls.__new__(cls)
        self.vocab, self.lookup = vocab, lookup
        self.n = len(ptr) - 1
        self.ids = [[]] * self.n  # stands for no ids: one empty list, never changed
        self.node_of = list(range(self.n))
        self.ptr, self.term, self.tf = ptr, term, tf
        self.counts = np.diff(ptr)  # ``entry_node``: on first use (no query reads it)
        self.df, self.cjk, self.cjk_len = df, cjk, cjk_len
        self.kptr, self.knode, self.ktf = kptr, knode, ktf
        return self

    @functools.cached_property
    def word_len(self) -> np.ndarray:
        """Per node, its count of word (not CJK) terms, with repeats (``float64[n]``)."""
        total = np.bincount(self.entry_node, weights=self.tf, minlength=self.n)
        return total - self.cjk_len

    @functools.cached_property
    def entry_node(self) -> np.ndarray:
        """Each node-major entry's node (``intp``)."""
        return np.repeat(np.arange(self.n, dtype=np.intp), self.counts)

    def _derive(self, cjk: np.ndarray) -> None:
        """Everything else from ``ptr``, ``term``, ``tf`` and the CJK flags per term."""
        self.counts = np.diff(self.ptr)
        self.entry_node = np.repeat(np.arange(self.n, dtype=np.intp), self.counts)
        self.df = np.bincount(self.term, minlength=len(self.vocab)).astype(np.float64)
        self.cjk = cjk
        self.cjk_len = np.bincount(
            self.entry_node, weights=self.tf * self.cjk[self.term], minlength=self.n
        )
        # stable: holders stay ascending; on 16-bit ids numpy sorts by radix (820,000 entries
        # at 30,000 sessions: 20 ms against 112 ms, the same order)
        key = self.term.astype(np.uint16) if len(self.vocab) <= 1 << 16 else self.term
        order = np.argsort(key, kind="stable")
        self.kptr = np.zeros(len(self.vocab) + 1, dtype=np.intp)
        np.cumsum(self.df.astype(np.intp), out=self.kptr[1:])
        self.knode = self.entry_node[order]
        self.ktf = self.tf[order]

    @classmethod
    def of_texts(
        cls,
        texts: Sequence[str],
        ids: Sequence[list[str]],
        terms: Callable[[str], Iterable[str]] = analyze,
    ) -> TermIndex:
        """One node per text; texts with equal term *sets* are one node (design §5.1: the last
        one represents, its counts are used; the ids of all ride along); texts without a
        term are no node. ``node_of`` of the result: per text, its node (``-1``: none), the
        positions :func:`talos.ranking.contiguity.links` links."""
        tl = [list(terms(t)) for t in texts]
        groups: dict[frozenset[str], list[int]] = {}
        for i, ts in enumerate(tl):
            if ts:
                groups.setdefault(frozenset(ts), []).append(i)
        counts: list[Counter[str]] = []
        node_ids: list[list[str]] = []
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
    ``qtf`` (their counts), ``unknown`` (the counts of the distinct terms no node holds);
    ``common`` and ``unknown_common`` (:func:`background` of each, in the same orders; None:
    all 0, a query built without them)."""

    ids: np.ndarray
    qtf: np.ndarray
    unknown: np.ndarray
    common: np.ndarray | None = None
    unknown_common: np.ndarray | None = None

    @property
    def known(self) -> int:
        """Distinct query terms some node holds."""
        return len(self.ids)


def query_vector(index: TermIndex, terms: Iterable[str]) -> Query:
    """The :class:`Query` of analyzed query terms (with repeats); sums run over sorted terms,
    so every float is the same under any ``PYTHONHASHSEED``."""
    c = Counter(terms)
    known = sorted((index.lookup[t], n) for t, n in c.items() if t in index.lookup)
    unknown = [(t, n) for t, n in sorted(c.items()) if t not in index.lookup]
    return Query(
        np.array([t for t, _n in known], dtype=np.intp),
        np.array([n for _t, n in known], dtype=np.float64),
        np.array([n for _t, n in unknown], dtype=np.float64),
        np.array([background(index.vocab[t]) for t, _n in known], dtype=np.float64),
        np.array([background(t) for t, _n in unknown], dtype=np.float64),
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


def collection(index: TermIndex, postings: np.ndarray) -> tuple[float, float]:
    """The statistics BM25 takes over its collection, here the query's candidates (the nodes
    of the query terms' ``postings``): their number ``n`` and their mean count of CJK terms
    ``ℓ̄`` (over those holding any; 1.0 when none does)."""
    cand = unique(postings)
    cjk_len = index.cjk_len[cand]
    held = cjk_len[cjk_len > 0]
    return float(len(cand)), float(held.mean()) if len(held) else 1.0


#: The small-home rule: BM25's statistics over at least this many candidates, ``(for a word
#: term and every term no node holds, for a CJK term)``; what :class:`talos.Memory` ranks with.
#: ``talos init --example``'s home (13 nodes) found nothing for "how should I format your
#: answers" (one candidate: every IDF ``ln(1 + 0.5/1.5)``, evidence score 0.17 < 0.65) nor for
#: "画一个流程图" (0.30): with few candidates ``Z`` is too small for the relevance floor
#: whatever the match. Dev (``bench/relevance.py baselines --model evidence``), against none:
#: R@5 unchanged on LoCoMo and the Chinese set; LoCoMo empty blocks for other conversations
#: 91% → 86%, chores 100% → 99%; Chinese set 40% → 46%, chores 91% → 95%; MADial en R@5
#: 0.496 → 0.486. One bound for both (``(n, n)``) cost the Chinese pools (18–88 nodes) their
#: empty blocks (40% → 13% at 100); 60 for words leaves the "answers" query empty.
SMALL_HOME = (100.0, 20.0)


#: The background prior ``L``: the words of a document of ordinary text, so that a term of
#: frequency ``f`` (:func:`background`) is held by about ``L·f`` of such documents and its
#: idf there is ``ln(1/(L·f))`` (:func:`language_idf`); a term's idf in a query's evidence is
#: at most that (:func:`seeds`). Dev, through ``Memory`` (``bench/relevance.py baselines
#: --model evidence``, LoCoMo R@5 / block R@5 / non-gold rows / empty for other
#: conversations; MADial en R@5): none 0.642 / 0.453 / 0.93 / 86%, 0.486; 20 → block 0.93 /
#: 86.2% (kept 70.4%); **40 → 0.645 / 0.455 / 0.94 / 87%, 0.496**; 80 → 0.644 / 0.450 / 0.95
#: / 88%, 0.533; 160 → kept 68.6%, 90% empty, and the quickstart's "how should I format your
#: answers" finds nothing ("answer" capped under 4.21). The Chinese set is unchanged (CJK
#: terms weigh 0), as is ``bench/bodies.py`` (98%); the rows but 40 with ``analyzer.RAREST``
#: 1e-5. bench/README "The background prior".
PRIOR = 40.0


def background(term: str) -> float:
    """A term's share of the running words of ordinary English text
    (:func:`talos.ranking.analyzer.frequency`: ``use`` 0.0016, ``answer`` 1.5e-4; 0.0 for a CJK
    term,
    a word no list holds, ``vim``, ``docker``, and one rarer than ``analyzer.RAREST``): what
    the prior of :func:`seeds` weighs."""
    return 0.0 if is_cjk(term) else frequency(term)


def language_idf(common: np.ndarray, words: float) -> np.ndarray:
    """A term's idf in ordinary text, ``ln(1/(L·f))`` (``L`` = ``words`` per document, ``f``
    its :func:`background` frequency; at least 0; ``inf`` for ``f = 0``): ``use`` (f 0.0016)
    2.77 at ``L`` 40, ``new`` 2.64, ``time`` 2.38, ``help`` 3.79, ``answer`` 5.13 — against the
    4.21 of a term one node of a small home holds (``SMALL_HOME``). Per query term,
    ``float64`` like ``common``."""
    with np.errstate(divide="ignore"):
        return np.maximum(-np.log(words * common), 0.0)


def sat_query(qtf: np.ndarray, k3: float) -> np.ndarray:
    """``qw = qtf·(k3+1)/(qtf+k3)``; ``k3 = 0``: 1 per distinct term."""
    return qtf * (k3 + 1) / (qtf + k3) if k3 > 0 else np.ones_like(qtf)


def seeds(
    index: TermIndex,
    q: Query,
    p: Params = Params(),
    statistics: Callable[[TermIndex, np.ndarray], tuple[float, float]] = collection,
    at_least: tuple[float, float] | None = None,
    prior: float = 0.0,
) -> tuple[np.ndarray, float]:
    """``(s, Z)`` (module docstring): ``s`` is ``float64[index.n]``; all zeros and ``Z = 0``
    when no node holds a query term. ``statistics``: ``(n, ℓ̄)`` of the postings
    (:func:`collection`; the tests pass home-wide ones to show what they break).
    ``at_least``: the small-home rule (:data:`SMALL_HOME`), ``n`` at least its first value for
    a word term and every unknown term, its second for a CJK term; None: ``n`` as it is.
    ``prior``: the background prior (:data:`PRIOR`; 0: none): a term's idf is at most its
    idf in ordinary text (:func:`language_idf`), so a word common in the language is weak
    evidence where few nodes hold it; where many do, its idf is already below that."""
    acc: np.ndarray = np.zeros(index.n)
    if not q.known:
        return acc, 0.0
    starts = index.kptr[q.ids]
    lens = index.kptr[q.ids + 1] - starts
    pos = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
    nodes, tf = index.knode[pos], index.ktf[pos]
    n, mean_cjk = statistics(index, nodes)
    df = index.df[q.ids]
    qw = sat_query(q.qtf, p.k3)
    n_unknown = n
    n_t: np.ndarray | float = n
    if at_least is not None:
        words, cjk_n = at_least
        n_t = np.where(index.cjk[q.ids], max(n, cjk_n), max(n, words))
        n_unknown = max(n, words)
    idf = np.log1p((n_t - df + 0.5) / (df + 0.5))
    idf_u = np.full(len(q.unknown), np.log1p((n_unknown - 0.5) / 1.5))
    if prior > 0 and q.common is not None and q.unknown_common is not None:
        idf = np.minimum(idf, language_idf(q.common, prior))
        idf_u = np.minimum(idf_u, language_idf(q.unknown_common, prior))
    w = qw * idf
    z = float(w.sum() + (sat_query(q.unknown, p.k3) * idf_u).sum())
    k = p.k1 * long_record_k(index.word_len[nodes], p.long_words, p.b_long)
    cjk = np.repeat(index.cjk[q.ids], lens)
    k[cjk] = p.k1 * (1 - p.b_cjk + p.b_cjk * index.cjk_len[nodes[cjk]] / mean_cjk)
    contrib = np.repeat(w, lens) * tf / (tf + k)  # sat / (K1 + 1)
    acc = np.bincount(nodes, weights=contrib, minlength=index.n)
    return acc / z, z


def keyword_hops(index: TermIndex, a: np.ndarray, decay: float, hops: int = HOPS) -> np.ndarray:
    """``hops`` mass-conserving hops from ``a`` over the node–term graph alone (keep
    ``a/(1+D)``, hand ``D/(1+D)·a`` to the terms): ``Σ`` of the result = ``Σ a`` up to
    rounding. A hop is two passes over the entries; when few nodes are active only their
    entries are sent (the others would add exactly +0.0: the same floats)."""
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
        a = a * keep + _node_sums(index, each[index.term])
    return a


def _node_sums(index: TermIndex, x: np.ndarray) -> np.ndarray:
    """Per node, the sum of ``x`` (one value per node-major entry). ``np.add.reduceat`` over
    the rows that hold a term (it would give a termless row its neighbour's first entry, and
    fail on a last one); 0.0 for the others. When every row holds a term it is the one
    ``reduceat`` call over ``ptr[:-1]``: the same floats."""
    held = index.counts > 0
    if held.all():
        return np.add.reduceat(x, index.ptr[:-1]) if index.n else np.zeros(0)
    out = np.zeros(index.n)
    if held.any():
        out[held] = np.add.reduceat(x, index.ptr[:-1][held])
    return out


def spread(
    index: TermIndex,
    a: np.ndarray,
    decay: float,
    graph: Links | None = None,
    share: float = SHARE,
    hops: int = HOPS,
) -> np.ndarray:
    """``hops`` mass-conserving hops over the term graph and the contiguity edges ``graph``
    (module docstring): a node hands ``share`` of what it keeps to its neighbours, by share,
    and loses exactly what they receive. ``Σ`` of the result = ``Σ a`` up to rounding.
    Without contiguity (``graph`` None or edgeless, ``share`` 0) it is :func:`keyword_hops`,
    float for float."""
    if graph is None or not graph.edges or share <= 0:
        return keyword_hops(index, a, decay, hops)
    if not hops:
        return a
    keep = 1.0 / (1.0 + decay)
    for _ in range(hops):
        nxt = keyword_hops(index, a, decay, 1) if decay > 0 else a.copy()
        c = a * (share * keep)
        sent = c[graph.src] * graph.share
        if sent.any():
            nxt = nxt - c * graph.out + np.bincount(graph.dst, weights=sent, minlength=len(a))
        a = nxt
    return a


def activate(
    index: TermIndex,
    q: Query,
    p: Params = Params(),
    graph: Links | None = None,
    share: float = SHARE,
    statistics: Callable[[TermIndex, np.ndarray], tuple[float, float]] = collection,
    at_least: tuple[float, float] | None = None,
    prior: float = 0.0,
) -> Evidence:
    """The model (module docstring): :func:`seeds` (``at_least``: the small-home rule,
    ``prior``: the background prior), then :data:`HOPS` hops of :func:`spread` (contiguity
    along ``graph`` when given). Returns :class:`Evidence` (``final`` is ``seeds`` when
    nothing is seeded)."""
    s, z = seeds(index, q, p, statistics, at_least, prior)
    if z <= 0 or not s.any():
        return Evidence(s, s, z)
    return Evidence(spread(index, s, p.decay, graph, share), s, z)


def body_evidence(
    index: TermIndex,
    terms: Iterable[str],
    p: Params = Params(),
    at_least: tuple[float, float] | None = None,
    prior: float = 0.0,
) -> tuple[np.ndarray, float]:
    """``(seeds, √Z)`` over the query's ``terms`` *without CJK unigrams*: what a skill's own
    evidence for the body gate is counted over (``talos.selection.relevance.earns_body``; with
    unigrams,
    shared characters gave 18% of a ``make_home.py`` home's Chinese chores a body).
    ``at_least``, ``prior``: as :func:`seeds`."""
    q = query_vector(index, without_unigrams(terms))
    s, z = seeds(index, q, p, at_least=at_least, prior=prior)
    return s, float(np.sqrt(z))


def matching_text(node: Node) -> str:
    """What ``node`` is matched by (design §3.2, as its keywords): a skill's first
    :data:`~talos.text.MATCH_MAX` characters of its file with its frontmatter read as words
    (:func:`~talos.sources.skills.frontmatter_as_text`: no key names, no provenance), a fact's
    text, an episode's task and outcome (design §3.3: its real task, else its opening request,
    then the head of its last answer as the block shows it,
    :data:`~talos.sources.sessions.OUTCOME_CHARS`, then each of its parts:
    :func:`talos.sources.session_parts.matching_extra`); the not-for clauses dropped first, from
    the text as written: a clause on a frontmatter line of its own (``不用于: 前端渲染``) lost
    its marker with the key and its words matched (tests/test_not_for_frontmatter.py). Models
    that rank over keywords (``classic``) never call this: an episode's keywords are its
    text's."""
    if node.kind == "skill":
        return frontmatter_as_text(drop_not_for(node.body[:MATCH_MAX]))
    if node.kind == "episode" and (node.task or node.outcome):
        text = (node.task or node.text) + "\n" + node.outcome[:OUTCOME_CHARS]
        if node.parts:  # a long session matches on each of its parts (design §3.3)
            text += "\n" + matching_extra(node.parts)
        return drop_not_for(text[:MATCH_MAX])
    return drop_not_for(node.text[:MATCH_MAX])


def _with_headings(counts: Counter[str], node: Node) -> Counter[str]:
    """A fact's term counts with its heading path as context (design §3.1, issue 15 item 4):
    each term of the headings above it that the fact does not hold joins at tf 1; the fact's
    own terms keep their counts. tf 1, not a tuned weight: no bench set has headings (LoCoMo
    and the Chinese set are dialogue turns), so there is nothing to tune it on. ``classic``
    never reaches this (it ranks over keywords); the headings' own lines are no node here."""
    return _in_context(counts, heading_context(node))


def heading_context(node: Node) -> str:
    """The text whose terms :func:`_with_headings` adds to ``node``'s: a fact's heading path
    joined by spaces, "" for any other node, a fact under no heading, or a line talos wrote
    (:func:`~talos.sources.facts.written_by_talos`)."""
    if node.kind != "fact" or not node.headings or written_by_talos(node):
        return ""
    return " ".join(h for h in node.headings if h)


def counts_of(text: str, context: str = "") -> Counter[str]:
    """The term counts of a node matched by ``text`` under the heading path ``context``
    (:func:`matching_text`, :func:`heading_context`): what :func:`of_nodes` counts, from the
    two strings alone (what :mod:`talos.view.termrows` stores a row of)."""
    return _in_context(Counter(analyze(text)), context)


def _in_context(counts: Counter[str], context: str) -> Counter[str]:
    """``counts`` with each term of ``context`` they lack at tf 1."""
    if context:
        for term in analyze(context):
            if term not in counts:
                counts[term] = 1
    return counts


#: What ``str.splitlines`` breaks a line at besides ``\n``: kept inside a line so that
#: :func:`~talos.ranking.contiguity.memory_contexts` numbers lines as the fact reader does.
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def of_nodes(
    nodes: Sequence[Node], memory_file: str, memory_text: str | None
) -> tuple[TermIndex, Links]:
    """The model's kept state for one graph (module docstring, "How Memory calls it"): the
    :class:`TermIndex` of ``nodes`` (a graph's, in node order: row ``i`` is node ``i``; the
    analyzer terms of :func:`matching_text`, a node without any holds no term) and the
    contiguity :class:`~talos.ranking.contiguity.Links` of the facts read from ``memory_file``, each
    at its line and its merged members' lines, in the contexts of ``memory_text``
    (:func:`~talos.ranking.contiguity.memory_contexts`; ``None``: no edge). Skills, episodes,
    conflict and override lines are in no context.

    Cost (``bench/evidence_build.py``, one run, load of other work on 2 cores): 0.21 s at 3,000
    sessions (2,860 nodes, 119,000 node–term entries, 214 edges), 1.9 s at 30,000 (17,300
    nodes, 820,000 entries, 2,110 edges), once per graph; a recall once it is kept, median
    3.5 ms / 10.4 ms against the default model's 3.9 ms / 8.4 ms in the same run. With the
    index, :class:`talos.view.kept.KeptState` gathers the same index from stored term rows instead
    (:mod:`talos.view.termrows`)."""
    counts = [_with_headings(Counter(analyze(matching_text(n))), n) for n in nodes]
    index = TermIndex(counts, [[] for _ in counts])
    return index, contiguity_of(nodes, len(nodes), memory_file, memory_text)


def contiguity_of(
    records: Sequence[Node],
    size: int,
    memory_file: str,
    memory_text: str | None,
    contexts: MemoryContexts | None = None,
) -> Links:
    """The contiguity :class:`~talos.ranking.contiguity.Links` of :func:`of_nodes` alone, over
    ``size``
    nodes whose facts are all among the first ones, ``records`` (a graph's records: episodes
    are never facts, so none is built); what a process builds beside a term index read from
    stored rows (:mod:`talos.view.termrows`). ``contexts``: those of :func:`line_contexts` of
    ``memory_text``, when the caller holds them (None: read here)."""
    nodes = records
    if memory_text is None:
        return links([], [], size)
    ctx = (contexts or line_contexts(memory_text)).contexts
    lines = sorted(
        (line, i)
        for i, n in enumerate(nodes)
        for line in {m.line for m in n.family() if m.kind == "fact" and m.path == memory_file}
        if line > 0
    )
    return links([i for _ln, i in lines], [ctx.get(ln) for ln, _i in lines], size)


def line_contexts(memory_text: str, last: MemoryContexts | None = None) -> MemoryContexts:
    """The :class:`~talos.ranking.contiguity.MemoryContexts` of memory.md's text, each line
    numbered as
    the fact reader numbers it (the other line breaks kept inside a line): brought up to date
    from ``last`` (an earlier text's) when only plain lines changed in place
    (:meth:`~talos.ranking.contiguity.MemoryContexts.edited`), else read line by line."""
    # one pass of the pattern, not a translation per line: 29 ms → under 1 ms at 30,000
    # sessions' memory.md (470 kB), the same text
    text = _OTHER_BREAKS.sub(" ", memory_text)
    got = last.edited(text) if last is not None else None
    return got if got is not None else MemoryContexts.of(text)
