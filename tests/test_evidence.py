"""The ``evidence`` ranking model (``talos.ranking.evidence``) and its contiguity edges
(``talos.ranking.contiguity``), on small homes with values worked out by hand.

BM25 over the candidates: one candidate holding the query's one term at tf 1 has
``idf = ln(1 + 0.5/1.5) = ln(4/3)`` and seed ``sat/(K1+1) = 1/(1+1.2)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from talos.ranking import contiguity as C
from talos.ranking import evidence as E
from talos.ranking.analyzer import analyze

FACTS = [
    "Keep each answer short and in English",
    "The billing service deploys on fridays",
    "Alice reviews the deploy scripts",
    "The new office opens in March",
]


def index(*texts: str) -> E.TermIndex:
    return E.TermIndex.of_texts(list(texts), [[t] for t in texts])


def test_answers_finds_answer() -> None:
    """Issue 15: "answers" recalled nothing of a fact about "answer" (no stemming)."""
    idx = index(*FACTS)
    ev = E.activate(idx, E.query_vector(idx, analyze("your answers")))
    assert ev.z == pytest.approx(math.log(4 / 3))
    assert ev.seeds.tolist() == pytest.approx([1 / 2.2, 0.0, 0.0, 0.0])
    assert int(np.argmax(ev.final)) == 0


def test_seeds_by_hand() -> None:
    """Two candidates of "deploy" (df 2 of n 2): idf ln(1 + 0.5/2.5); "friday" only in one."""
    idx = index(*FACTS)
    ev = E.activate(idx, E.query_vector(idx, analyze("deploy on friday")))
    idf_deploy, idf_friday = math.log(1.2), math.log(1 + 1.5 / 1.5)
    z = idf_deploy + idf_friday
    assert ev.z == pytest.approx(z)
    assert ev.seeds[1] == pytest.approx((idf_deploy + idf_friday) / 2.2 / z)
    assert ev.seeds[2] == pytest.approx(idf_deploy / 2.2 / z)
    assert ev.scale == pytest.approx(math.sqrt(z))


def test_a_term_said_twice_counts_four_thirds() -> None:
    idx = index("x y", "x")
    s1, z1 = E.seeds(idx, E.query_vector(idx, ["y"]))
    s2, z2 = E.seeds(idx, E.query_vector(idx, ["y", "y"]))
    assert z2 == pytest.approx(z1 * 4 / 3)
    assert s2.tolist() == pytest.approx(s1.tolist())  # a share of the query: unchanged


def test_cjk_length_normalisation() -> None:
    """A long Chinese text matching one bigram by chance seeds less than a short one."""
    idx = index("部署服务", "部署" + "天气很好今天出去散步" * 3)
    s, _z = E.seeds(idx, E.query_vector(idx, ["部署"]))
    assert s[0] > s[1]
    flat, _ = E.seeds(idx, E.query_vector(idx, ["部署"]), E.Params(b_cjk=0.0))
    assert flat[0] == pytest.approx(flat[1])


def test_a_long_record_saturates_slower_by_hand() -> None:
    """A record of more than LONG_WORDS word terms (a skill of every topic) that mentions a
    task's word once seeds less than a short fact holding it once: K = K1·(1 − b + b·ℓ/ℓ₀)
    (``long_record_k``); up to ℓ₀ nothing changes, so dialogue turns keep BM25 as it was."""
    assert E.long_record_k(np.array([10.0, 40.0, 80.0]), 40.0, 0.5).tolist() == [1.0, 1.0, 1.5]
    assert E.long_record_k(np.array([80.0]), 40.0, 0.0).tolist() == [1.0]
    long = "tests " + " ".join(f"word{i}" for i in range(79))  # 80 word terms
    idx = index("Every bug fix comes with a test", long)
    assert idx.word_len.tolist() == [5.0, 80.0]
    s, z = E.seeds(idx, E.query_vector(idx, ["test"]))
    idf = math.log(1 + 0.5 / 2.5)
    assert z == pytest.approx(idf)
    assert s.tolist() == pytest.approx([1 / 2.2, 1 / (1 + 1.2 * 1.5)])
    flat, _ = E.seeds(idx, E.query_vector(idx, ["test"]), E.Params(b_long=0.0))
    assert flat.tolist() == pytest.approx([1 / 2.2, 1 / 2.2])


def test_nothing_matches() -> None:
    idx = index(*FACTS)
    ev = E.activate(idx, E.query_vector(idx, analyze("book a table at an italian restaurant")))
    assert ev.z == 0.0 and not ev.final.any() and ev.scale == 0.0


def test_unrelated_nodes_change_no_seed() -> None:
    """design §10: statistics over the candidates, so nodes without a query term (here 30
    near-copies of a bridge) change no seed; with home-wide statistics they do."""
    base = index(*FACTS)
    grown = index(*FACTS, *(f"vault token rotates every monday {i:02d}" for i in range(30)))
    q = analyze("deploy on friday")
    a, _ = E.seeds(base, E.query_vector(base, q))
    b, _ = E.seeds(grown, E.query_vector(grown, q))
    assert b[:4].tolist() == a.tolist()

    def home_wide(idx: E.TermIndex, _postings: np.ndarray) -> tuple[float, float]:
        return float(idx.n), 1.0

    c, _ = E.seeds(base, E.query_vector(base, q), statistics=home_wide)
    d, _ = E.seeds(grown, E.query_vector(grown, q), statistics=home_wide)
    assert d[2] != pytest.approx(c[2])


def test_spreading_conserves_activation() -> None:
    idx = index(*FACTS, "deploy the office printer", "english office hours")
    graph = C.links([0, 1, 2, 3, 4, 5], [((), "d")] * 6, idx.n)
    ev = E.activate(idx, E.query_vector(idx, analyze("deploy")), graph=graph)
    assert ev.final.sum() == pytest.approx(ev.seeds.sum())
    assert ev.final[3] > 0  # reached only along contiguity and the terms of its neighbours
    assert (
        E.spread(idx, ev.seeds, 0.1, C.no_links(idx.n)) == E.keyword_hops(idx, ev.seeds, 0.1)
    ).all()
    assert (
        E.spread(idx, ev.seeds, 0.1, graph, share=0.0) == E.keyword_hops(idx, ev.seeds, 0.1)
    ).all()


def test_the_answer_after_the_question_is_reached() -> None:
    """LoCoMo dev: many missed gold turns are the answer after a matching question; the answer
    holds no query term but is written next to it (contiguity, one context)."""
    lines = [
        "Ana: What did you do at the picnic, Maria?",
        "Kim: Mostly board games, and the kids flew kites.",
        "Bob: The bakery on the corner closed.",
    ]
    idx = index(*lines)
    q = E.query_vector(idx, analyze("picnic"))
    alone = E.activate(idx, q)
    assert alone.final[1] == 0.0
    graph = C.links(idx.node_of, [(("Weekend",), "2026-03-01")] * 2 + [((), "2026-02-01")], idx.n)
    ev = E.activate(idx, q, graph=graph)
    assert ev.final[1] > 0.0 and ev.final[2] == 0.0  # another context: not reached


def test_links_by_hand() -> None:
    """w 2, FALL 0.5, symmetric: a full window weighs (1 + 1)·(1 + 0.5) = 3."""
    g = C.links([0, 1, 2], [((), "")] * 3, 3)
    assert g.share_of(0, 1) == pytest.approx(1 / 3)
    assert g.share_of(0, 2) == pytest.approx(0.5 / 3)
    assert g.share_of(2, 0) == pytest.approx(0.5 / 3)
    assert g.neighbours(1, after=True) == [2]
    assert g.neighbours(1) == [0, 2]
    assert g.out[0] == pytest.approx(0.5)  # a run's end keeps the rest
    assert C.links([0, 1], [((), "a"), ((), "b")], 2).edges == 0  # two contexts
    assert C.links([0, 1], [((), ""), None], 2).edges == 0  # a line in no context
    assert C.links([0, 0, 0, 1], [((), "")] * 4, 2).share_of(0, 1) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="node_of has 2 lines, context 1"):
        C.links([0, 1], [((), "")], 2)


def test_memory_contexts() -> None:
    text = (
        "# Work\n"
        "- deploy on fridays <!-- user 2026-03-01 -->\n"
        "## Billing\n"
        "- invoices go out monthly\n"
        "\n"
        "# Home\n"
        "- water the plants\n"
    )
    assert C.memory_contexts(text) == {
        2: (("Work",), "2026-03-01", 1),  # the untagged lines 4 and 7 are in no context
    }


def test_the_index_from_its_stored_arrays() -> None:
    """What an index file keeps (node-major arrays) rebuilds the same model without
    re-analysing a text."""
    idx = index(*FACTS, "部署服务 deploy")
    again = E.TermIndex.from_arrays(idx.vocab, idx.ptr.copy(), idx.term.copy(), idx.tf, idx.ids)
    for name in ("df", "cjk", "cjk_len", "kptr", "knode", "ktf", "counts"):
        assert getattr(again, name).tolist() == getattr(idx, name).tolist(), name
    q = analyze("deploy 部署 friday")
    a = E.activate(idx, E.query_vector(idx, q))
    b = E.activate(again, E.query_vector(again, q))
    assert b.final.tolist() == a.final.tolist() and b.z == a.z


# -- the background prior (issue 15: common words in a small home) -------------------------


def test_background_frequencies_are_of_the_stem_and_of_english_words_only() -> None:
    """``use`` sums use/used/uses/using; a word no list holds, and a CJK term, weigh 0."""
    assert E.background("use") == pytest.approx(0.0016, rel=0.05)
    assert E.background("use") > E.background("help") > E.background("answer") > 0
    assert E.background("vim") == E.background("docker") == 0.0
    assert E.background("deploy") == 0.0  # 1.1e-5 < analyzer.RAREST: never capped
    assert E.background("部署") == E.background("部") == 0.0


def test_language_idf_by_hand() -> None:
    """``ln(1/(L·f))``, at least 0, infinite for a word of no list."""
    got = E.language_idf(np.array([0.0017, 2e-4, 0.0, 0.5]), 40.0)
    assert got[:2].tolist() == pytest.approx([math.log(1 / 0.068), math.log(1 / 0.008)])
    assert got[2] == math.inf
    assert got[3] == 0.0


def test_a_common_word_held_by_one_node_of_a_small_home_weighs_its_language_idf() -> None:
    """ "how do I use docker" in a home of three facts: "use" (df 1, small-home ``n`` 100)
    weighs ``ln(1 + 99.5/1.5)`` = 4.21 alone, its language idf with the prior (2.77 at
    ``L`` 40); "docker" (no node) keeps 4.21. The vim fact's evidence score falls from
    0.66 (over the floor 0.65) to 0.48."""
    idx = index("I use vim for editing", "The billing service deploys on fridays", "Alice")
    q = E.query_vector(idx, analyze("how do I use docker"))
    home = math.log1p(99.5 / 1.5)
    lang = math.log(1 / (40.0 * E.background("use")))
    s0, z0 = E.seeds(idx, q, at_least=E.SMALL_HOME)
    s1, z1 = E.seeds(idx, q, at_least=E.SMALL_HOME, prior=40.0)
    assert z0 == pytest.approx(2 * home)
    assert z1 == pytest.approx(lang + home)
    assert s1[0] == pytest.approx(lang / 2.2 / (lang + home))
    assert s0[0] * math.sqrt(z0) == pytest.approx(0.66, abs=0.005)
    assert s1[0] * math.sqrt(z1) == pytest.approx(0.48, abs=0.01)


def test_the_prior_vanishes_where_the_home_holds_a_common_word_often() -> None:
    """300 nodes, 60 hold "use": its idf over the home (1.60) is below its language idf
    (2.77), so the prior changes no float; a rare word is never capped."""
    texts = [f"we use tool{i}" if i < 60 else f"note{i} kept" for i in range(300)]
    idx = index(*texts)
    for query in ("use", "use tool7", "note12"):
        q = E.query_vector(idx, analyze(query))
        s0, z0 = E.seeds(idx, q, at_least=E.SMALL_HOME)
        s1, z1 = E.seeds(idx, q, at_least=E.SMALL_HOME, prior=40.0)
        assert z1 == z0, query
        assert s1.tolist() == s0.tolist(), query
