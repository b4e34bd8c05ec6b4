"""The ``evidence`` ranking model the bench measures (``talos.ranking.evidence``), checked by hand
on
tiny term counts: the index arrays, BM25 seeds over the candidates, CJK-only length
normalisation, mass-conserving hops, the evidence score and the whole-query rule.

These were the research lab's tests (its ``rank_model.py`` wrapper and lab are archived: tag
``labs-2026-12``, ``docs/benchmarks.md``); they now call the shipped module directly.
Data-free: no analyzer needed (whitespace terms), the third-party data is never read.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from talos.ranking import evidence as E
from talos.selection.relevance import FLOOR, WHOLE, is_evidence


def index(*texts: str) -> E.TermIndex:
    """Nodes of whitespace-separated terms (no analyzer needed)."""
    return E.TermIndex.of_texts(list(texts), [[t] for t in texts], str.split)


def q(idx: E.TermIndex, text: str) -> E.Query:
    return E.query_vector(idx, text.split())


# -- the index --------------------------------------------------------------------------------


def test_term_index_arrays_and_merging() -> None:
    idx = index("x y", "x x z", "y x", "数据 数据 备份")  # "y x" has the set of "x y": merged
    assert idx.vocab == ["x", "y", "z", "备份", "数据"]
    assert idx.ids == [["x y", "y x"], ["x x z"], ["数据 数据 备份"]]
    assert idx.ptr.tolist() == [0, 2, 4, 6]
    assert idx.term.tolist() == [0, 1, 0, 2, 3, 4]
    assert idx.tf.tolist() == [1.0, 1.0, 2.0, 1.0, 1.0, 2.0]
    assert idx.df.tolist() == [2.0, 1.0, 1.0, 1.0, 1.0]
    assert idx.cjk.tolist() == [False, False, False, True, True]
    assert idx.cjk_len.tolist() == [0.0, 0.0, 3.0]
    assert idx.knode.tolist() == [0, 1, 0, 1, 2, 2]  # term-major, holders ascending
    got = q(idx, "x x q q q")
    assert got.ids.tolist() == [0] and got.qtf.tolist() == [2.0] and got.unknown.tolist() == [3.0]
    assert index().n == 0 and index("", "a").ids == [["a"]]  # a text without terms is no node


# -- seeds ------------------------------------------------------------------------------------


def test_seeds_are_bm25_over_the_candidates() -> None:
    idx = index("x y", "x x z", "w")
    p = E.Params(decay=0.0)
    s, z = E.seeds(idx, q(idx, "x z"), p)
    # candidates: the two nodes holding x or z (n = 2); w's node is not one of them
    idf_x, idf_z = math.log1p(0.5 / 2.5), math.log1p(1.5 / 1.5)
    assert z == pytest.approx(idf_x + idf_z, rel=1e-12)
    assert s[0] == pytest.approx(idf_x * 1 / 2.2 / z, rel=1e-12)
    assert s[1] == pytest.approx((idf_x * 2 / 3.2 + idf_z * 1 / 2.2) / z, rel=1e-12)
    assert s[2] == 0.0
    # a term no node holds weighs as a term one candidate holds, and lowers every share
    s2, z2 = E.seeds(idx, q(idx, "x z nope"), p)
    assert z2 == pytest.approx(z + math.log1p(1.5 / 1.5), rel=1e-12)
    assert s2[1] < s[1]
    # a term said twice weighs qw(2) = 2·2/3 (K3 = 1); K3 = 0: once
    _s3, z3 = E.seeds(idx, q(idx, "z z"), p)
    assert z3 == pytest.approx(4 / 3 * math.log1p(0.5 / 1.5), rel=1e-12)
    assert E.seeds(idx, q(idx, "z z"), E.Params(k3=0.0))[1] == pytest.approx(
        math.log1p(0.5 / 1.5), rel=1e-12
    )
    assert E.seeds(idx, q(idx, "nope"), p)[1] == 0.0


def test_only_cjk_terms_are_length_normalised() -> None:
    # one short and one long holder, English words vs CJK terms
    words = index("deploy", "deploy a b c d e f g h")
    cjk = index("部署", "部署 甲乙 丙丁 戊己 庚辛 壬癸 子丑 寅卯 辰巳")
    sw, _ = E.seeds(words, q(words, "deploy"), E.Params())
    sc, _ = E.seeds(cjk, q(cjk, "部署"), E.Params())
    assert sw[0] == sw[1]  # a long English turn is not penalised (measured: it costs LoCoMo)
    assert sc[0] > sc[1]  # a long CJK text is (measured: it helps the Chinese set)
    flat, _ = E.seeds(cjk, q(cjk, "部署"), E.Params(b_cjk=0.0))
    assert flat[0] == flat[1]


# -- spreading --------------------------------------------------------------------------------


def test_spreading_conserves_activation_and_sparse_hops_give_the_same_floats() -> None:
    idx = index("a b", "b c", "c d", "d e", "e f", "x y")
    s, _ = E.seeds(idx, q(idx, "a"), E.Params())
    got = E.keyword_hops(idx, s, 0.1)
    assert got.sum() == pytest.approx(s.sum(), rel=1e-12)
    assert got[1] > 0 and got[2] > 0 and got[3] == 0.0 and got[5] == 0.0  # two hops: b, then c
    assert got[0] < s[0]  # the seed handed some on
    assert (E.keyword_hops(idx, s, 0.0) == s).all()
    # dense hops from the same activation: the same floats as the sparse first hop
    dense = s.copy()
    dense[5] = 1e-300  # one more active node, on its own: forces the dense path
    a = E.keyword_hops(idx, dense, 0.1)
    assert a[:5].tolist() == got[:5].tolist()


def test_activate_and_the_evidence_score() -> None:
    idx = index("vault token rotates", "deploy needs vault token", "lunch menu")
    ev = E.activate(idx, q(idx, "deploy"))
    assert ev.seeds[0] == 0.0 and ev.final[0] > 0  # reached through the bridge (vault, token)
    assert ev.final[2] == 0.0
    assert ev.scale == pytest.approx(math.sqrt(ev.z))
    empty = E.activate(idx, q(idx, "nothing here"))
    assert empty.z == 0.0 and not empty.final.any()


# -- the whole-query rule ----------------------------------------------------------------


def test_a_one_term_query_matched_whole_is_evidence() -> None:
    """Statistics over the candidates give a one-term query a small Z (every candidate holds
    the term): its evidence score alone would leave "deploy" empty."""
    idx = index("deploy the api on friday", "deploy needs the vault token", "deploy with helm")
    idx2 = index(*[f"lunch note {i}" for i in range(20)], "deploy with helm")
    for home in (idx, idx2):
        ev = E.activate(home, q(home, "deploy"))
        top = np.argsort(-ev.final, kind="stable")[:5]
        acts, seeds = ev.final[top].tolist(), ev.seeds[top].tolist()
        assert acts[0] * ev.scale < FLOOR  # the evidence score alone: an empty block
        assert seeds[0] == pytest.approx(1 / 2.2)  # the row holds the whole query (tf 1)
        assert seeds[0] >= WHOLE and is_evidence(seeds[0], acts[0], ev.scale, FLOOR, WHOLE)


# -- input ----------------------------------------------------------------------------------


def test_counter_input_is_accepted_as_is() -> None:
    idx = E.TermIndex([Counter({"b": 2, "a": 1})], [["n"]])
    assert idx.vocab == ["a", "b"] and idx.tf.tolist() == [1.0, 2.0]
