"""``evidence``: the ranking model researched for issue 15 (``bench/rank_lab.py``, dev only).

The model now lives in ``talos.evidence`` (and its floor in ``talos.relevance``); this module
is the lab's name for it, a thin caller whose names the lab and its tests use (``collection``
stays patchable here: ``test_home_wide_statistics_break_the_bridge_invariant``). The
research notes follow (``bench/README.md`` "Ranking model for issue 15 (dev research)"). In the
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

from collections.abc import Sequence

import numpy as np

from talos import evidence as E
from talos.analyzer import is_cjk
from talos.evidence import HOPS, Evidence, Params, Query, TermIndex, query_vector, sat_query
from talos.relevance import WHOLE, is_evidence

__all__ = [
    "HOPS",
    "Evidence",
    "Params",
    "Query",
    "TermIndex",
    "activate",
    "collection",
    "is_cjk",
    "is_evidence",
    "query_vector",
    "relevance_floor",
    "sat_query",
    "seeds",
    "spread",
]

collection = E.collection  #: the candidates' statistics (a test patches this name)


def seeds(index: TermIndex, q: Query, p: Params) -> tuple[np.ndarray, float]:
    """``talos.evidence.seeds`` with this module's :data:`collection`."""
    return E.seeds(index, q, p, collection)


def spread(index: TermIndex, a: np.ndarray, decay: float, hops: int = HOPS) -> np.ndarray:
    """``talos.evidence.keyword_hops``: ``hops`` mass-conserving hops over the term graph."""
    return E.keyword_hops(index, a, decay, hops)


def activate(index: TermIndex, q: Query, p: Params = E.Params()) -> Evidence:  # noqa: B008
    """The model (``talos.evidence.activate`` without contiguity), with :data:`collection`."""
    return E.activate(index, q, p, statistics=collection)


def relevance_floor(
    activations: Sequence[float],
    seeds: Sequence[float],
    scale: float,
    floor: float = 0.59,
    whole: float = WHOLE,
    relative: float = 0.7,
    k: int = 5,
) -> int:
    """The research floor without contiguity (the product fills a budget instead,
    ``talos.relevance.deliver``): how many of the first ``k`` rows of a ranking
    (activations and seeds, best first) to deliver — none when the best row is no evidence
    (:func:`is_evidence` on its final activation), else the prefix scoring ≥ ``relative`` ×
    the best. Dev (``rank_lab.py floor``): 0.59 / 0.7 → LoCoMo 1.49 non-gold rows, 78% kept,
    91% empty for other conversations."""
    if not len(activations) or not is_evidence(seeds[0], activations[0], scale, floor, whole):
        return 0
    top = activations[0]
    n = 0
    for x in activations[:k]:
        if x < relative * top:
            break
        n += 1
    return n
