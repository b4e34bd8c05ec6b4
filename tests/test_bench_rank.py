"""The ``evidence`` ranking model of issue 15's research (``bench/rank_model.py``) and its lab.

Data-free: tiny term counts built here, the golden bridge homes, the bodies home of
``bench/``; the tests that need the analyzer (PyStemmer, bm25s: the ``bench`` extra) skip
without it. The third-party data is never read here.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
GOLDEN = Path(__file__).resolve().parent / "golden"
sys.path.insert(0, str(BENCH))

import rank_model as M  # noqa: E402

needs_bench = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("Stemmer", "bm25s", "rich")),
    reason="the bench extra is not installed (pip install -e '.[bench]')",
)


def index(*texts: str) -> M.TermIndex:
    """Nodes of whitespace-separated terms (no analyzer needed)."""
    return M.TermIndex.of_texts(list(texts), [[t] for t in texts], str.split)


def q(idx: M.TermIndex, text: str) -> M.Query:
    return M.query_vector(idx, text.split())


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
    p = M.Params(decay=0.0)
    s, z = M.seeds(idx, q(idx, "x z"), p)
    # candidates: the two nodes holding x or z (n = 2); w's node is not one of them
    idf_x, idf_z = math.log1p(0.5 / 2.5), math.log1p(1.5 / 1.5)
    assert z == pytest.approx(idf_x + idf_z, rel=1e-12)
    assert s[0] == pytest.approx(idf_x * 1 / 2.2 / z, rel=1e-12)
    assert s[1] == pytest.approx((idf_x * 2 / 3.2 + idf_z * 1 / 2.2) / z, rel=1e-12)
    assert s[2] == 0.0
    # a term no node holds weighs as a term one candidate holds, and lowers every share
    s2, z2 = M.seeds(idx, q(idx, "x z nope"), p)
    assert z2 == pytest.approx(z + math.log1p(1.5 / 1.5), rel=1e-12)
    assert s2[1] < s[1]
    # a term said twice weighs qw(2) = 2·2/3 (K3 = 1); K3 = 0: once
    _s3, z3 = M.seeds(idx, q(idx, "z z"), p)
    assert z3 == pytest.approx(4 / 3 * math.log1p(0.5 / 1.5), rel=1e-12)
    assert M.seeds(idx, q(idx, "z z"), M.Params(k3=0.0))[1] == pytest.approx(
        math.log1p(0.5 / 1.5), rel=1e-12
    )
    assert M.seeds(idx, q(idx, "nope"), p)[1] == 0.0


def test_only_cjk_terms_are_length_normalised() -> None:
    # one short and one long holder, English words vs CJK terms
    words = index("deploy", "deploy a b c d e f g h")
    cjk = index("部署", "部署 甲乙 丙丁 戊己 庚辛 壬癸 子丑 寅卯 辰巳")
    sw, _ = M.seeds(words, q(words, "deploy"), M.Params())
    sc, _ = M.seeds(cjk, q(cjk, "部署"), M.Params())
    assert sw[0] == sw[1]  # a long English turn is not penalised (measured: it costs LoCoMo)
    assert sc[0] > sc[1]  # a long CJK text is (measured: it helps the Chinese set)
    flat, _ = M.seeds(cjk, q(cjk, "部署"), M.Params(b_cjk=0.0))
    assert flat[0] == flat[1]


# -- spreading --------------------------------------------------------------------------------


def test_spreading_conserves_activation_and_sparse_hops_give_the_same_floats() -> None:
    idx = index("a b", "b c", "c d", "d e", "e f", "x y")
    s, _ = M.seeds(idx, q(idx, "a"), M.Params())
    got = M.spread(idx, s, 0.1)
    assert got.sum() == pytest.approx(s.sum(), rel=1e-12)
    assert got[1] > 0 and got[2] > 0 and got[3] == 0.0 and got[5] == 0.0  # two hops: b, then c
    assert got[0] < s[0]  # the seed handed some on
    assert (M.spread(idx, s, 0.0) == s).all()
    # dense hops from the same activation: the same floats as the sparse first hop
    dense = s.copy()
    dense[5] = 1e-300  # one more active node, on its own: forces the dense path
    a = M.spread(idx, dense, 0.1)
    assert a[:5].tolist() == got[:5].tolist()


def test_activate_and_the_evidence_score() -> None:
    idx = index("vault token rotates", "deploy needs vault token", "lunch menu")
    ev = M.activate(idx, q(idx, "deploy"))
    assert ev.seeds[0] == 0.0 and ev.final[0] > 0  # reached through the bridge (vault, token)
    assert ev.final[2] == 0.0
    assert ev.scale == pytest.approx(math.sqrt(ev.z))
    empty = M.activate(idx, q(idx, "nothing here"))
    assert empty.z == 0.0 and not empty.final.any()


# -- the floor --------------------------------------------------------------------------------


def test_relevance_floor() -> None:
    acts = [0.5, 0.4, 0.34, 0.2, 0.1, 0.05]
    seeds = [0.3, 0.3, 0.3, 0.1, 0.1, 0.0]
    assert M.relevance_floor(acts, seeds, 2.0, 0.59, 0.4, 0.7) == 2  # 1.0 clears; 0.34 < 0.35
    assert M.relevance_floor(acts, seeds, 1.0, 0.59, 0.4, 0.7) == 0  # 0.5 does not, seed 0.3
    assert M.relevance_floor(acts, [0.45, *seeds[1:]], 1.0, 0.59, 0.4, 0.7) == 2  # whole query
    assert M.relevance_floor(acts, seeds, 2.0, 0.59, 0.4, 0.0) == 5  # no relative floor
    assert M.relevance_floor(acts, seeds, 2.0, 0.59, 0.4, 0.0, k=3) == 3
    assert M.relevance_floor([], [], 2.0, 0.0, 0.4, 0.0) == 0
    assert M.relevance_floor([0.5, 0.1, 0.45], seeds, 2.0, 0.0, 0.4, 0.7) == 1  # a prefix


def test_a_one_term_query_matched_whole_is_evidence() -> None:
    """Statistics over the candidates give a one-term query a small Z (every candidate holds
    the term): its evidence score alone would leave "deploy" empty."""
    idx = index("deploy the api on friday", "deploy needs the vault token", "deploy with helm")
    idx2 = index(*[f"lunch note {i}" for i in range(20)], "deploy with helm")
    for home in (idx, idx2):
        ev = M.activate(home, q(home, "deploy"))
        top = np.argsort(-ev.final, kind="stable")[:5]
        acts, seeds = ev.final[top].tolist(), ev.seeds[top].tolist()
        assert acts[0] * ev.scale < 0.59  # the evidence score alone: an empty block
        assert seeds[0] == pytest.approx(1 / 2.2)  # the row holds the whole query (tf 1)
        assert M.relevance_floor(acts, seeds, ev.scale, 0.59, 0.4, 0.7) >= 1


# -- invariants (SPEC §10) and the lab ----------------------------------------------------------


@needs_bench
def test_invariants_hold_on_the_golden_bridge_homes(tmp_path: Path) -> None:
    import rank_lab as lab

    assert lab.check_invariants(GOLDEN, tmp_path) == []


@needs_bench
def test_home_wide_statistics_break_the_bridge_invariant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule the candidate statistics exist for: with BM25's N and mean length taken over
    the whole home, 7 and 40 near-copies of the bridge raise the skill and the fact."""
    import rank_lab as lab

    def home_wide(idx: M.TermIndex, _postings: np.ndarray) -> tuple[float, float]:
        held = idx.cjk_len[idx.cjk_len > 0]
        return float(idx.n), float(held.mean()) if len(held) else 1.0

    monkeypatch.setattr(M, "collection", home_wide)
    fails = lab.check_invariants(GOLDEN, tmp_path)
    assert [f.rsplit(": ", 1)[0] for f in fails] == [  # "row: before -> after"
        "(a) en-bridge-7: skill:csv-clean",
        "(a) en-bridge-7: fact:csv cleanup pipeline schedule retry",
        "(a) en-bridge-40: skill:csv-clean",
        "(a) en-bridge-40: fact:csv cleanup pipeline schedule retry",
    ]


@needs_bench
def test_body_gate_needs_the_skills_own_evidence(tmp_path: Path) -> None:
    import bodies
    import rank_lab as lab

    home = bodies.copy_home(tmp_path)
    gate = lab.body_gate(home, lab.RECOMMENDED_BODY)
    assert gate("restoring databases from last night's dump") == "postgres-restore"
    assert gate("set up a new python project with lint") == "python-project-setup"
    assert gate("the cat knocked my coffee over") is None  # "over": the best skill, no body
    assert lab.body_gate(home, 0.0)("the cat knocked my coffee over") is not None
    assert gate("write a new poem about spring") is None


@needs_bench
def test_body_evidence_leaves_out_single_cjk_characters(tmp_path: Path) -> None:
    """Measured on a make_home.py home: with CJK unigrams, 18% of the Chinese chores earned a
    body through shared single characters (这 个 一 成 步)."""
    import rank_lab as lab

    facts = ("今天天气不错", "周末去爬山", "晚饭吃面条", "买了一本书", "这家店很好", "那个人很高")
    facts += ("改天再说吧", "异地的朋友", "把门关上", "的确如此", "成都很远", "步行上班")
    # (这个 and 个 are stop words of the analyzer now: the case shares 那段 instead)
    skill = "---\nname: tidy\ndescription: 成长步骤改良\n---\n\n那段函数逐步改成。\n"
    home = lab.write_home(tmp_path / "h", "".join(f"- {f}\n" for f in facts), {"tidy.md": skill})
    query = "把那段函数改成异步的"  # the skill leads; it shares 那段 函数 改成 and 7 characters
    assert lab.body_gate(home, 0.59, unigrams=True)(query) == "tidy"
    assert lab.body_gate(home, 0.59)(query) is None  # over its bigrams


@needs_bench
def test_the_sweep_log_is_complete() -> None:
    import rank_lab as lab

    rows = [json.loads(x) for x in lab.SWEEP_LOG.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 237
    assert all(lab.family(r["name"]) != "other" for r in rows)
    assert all(set(r["dev"]) <= {"LoCoMo 1-4", "Chinese set", "MADial en"} for r in rows)
    base = next(r for r in rows if r["name"] == "bm25 exact en")
    assert base["dev"]["LoCoMo 1-4"]["R@5"] == 0.58 and base["dev"]["Chinese set"]["R@5"] == 0.6906


def test_counter_input_is_accepted_as_is() -> None:
    idx = M.TermIndex([Counter({"b": 2, "a": 1})], [["n"]])
    assert idx.vocab == ["a", "b"] and idx.tf.tolist() == [1.0, 2.0]


@needs_bench
def test_evidence_prototypes_deliver_through_the_harness_and_stay_off_test() -> None:
    import datasets as bd
    import relevance

    store = bd.Store(
        "s",
        "dev",
        [
            bd.Item("a", "Alice restores the postgres database every friday", "2026-01-01"),
            bd.Item("b", "Bob likes pasta", "2026-01-01"),
        ],
        [],
    )
    top5 = relevance.make_delivery("evidence", store, "en", Path("."))
    assert top5.block("restoring the database").rows == [["a"]]
    floor = relevance.make_delivery("evidence-floor", store, "en", Path("."))
    assert floor.block("restoring the database").rows == [["a"]]  # evidence score ≥ 0.59
    assert floor.block("pasta recipes for a party tonight please").rows == []
    test_pool = relevance.Pool("LoCoMo 1-4", "en", "test", 0, store)
    with pytest.raises(ValueError, match="prototype: dev split only"):
        relevance.run([test_pool], ["evidence-floor"])
