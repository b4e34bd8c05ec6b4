"""The relevance harness (bench/): analyzer, baselines, block metrics, bodies set.

Runs on tiny stores and homes written here; the one test that reads the third-party data
(``../shared/bench``, research use only, never copied) skips when it is absent.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import bodies  # noqa: E402
import chores  # noqa: E402
import datasets as bd  # noqa: E402
import delivery as dl  # noqa: E402
import relevance  # noqa: E402
from analyzer import Analyzer, stemmer, stop_list  # noqa: E402
from baselines import BM25Terms, FTS5Ranker, bigram_text, fts5_query  # noqa: E402

#: The analyzer needs PyStemmer, the stop lists and BM25 need bm25s: the ``bench`` extra. CI
#: installs ``.[test]`` only, so these tests skip there (the others need nothing more).
needs_bench = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("Stemmer", "snowballstemmer", "bm25s")),
    reason="the bench extra is not installed (pip install -e '.[bench]': bm25s, PyStemmer, "
    "snowballstemmer)",
)

# -- analyzer ---------------------------------------------------------------------------------


@needs_bench
def test_analyzer_nfkc_stop_words_stemming_and_cjk_bigrams() -> None:
    a = Analyzer()
    assert a.terms("Restoring the Databases, ＮＯＷ ＡＰＩ! 恢复数据库") == [
        "restor",
        "databas",
        "api",
        "恢复",
        "复数",
        "数据",
        "据库",
    ]
    # issue 15: "how should I format your answers" must find a fact about "answer"
    assert a.term_set("how should I format your answers") == {"format", "answer"}
    assert a.term_set("restoring databases") <= a.term_set("Restore a Postgres database")
    assert Analyzer(stem="none").term_set("restoring databases") == {"restoring", "databases"}


@needs_bench
def test_analyzer_cjk_unigrams_and_cjk_stop_words() -> None:
    assert Analyzer(unigrams=True).terms("部署了服务") == [
        "部署",
        "署了",
        "了服",
        "服务",
        "部",
        "署",
        "服",
        "务",
    ]  # 了 is a design §4 stop word: as a unigram it goes, inside bigrams it stays
    assert "了" in Analyzer(unigrams=True, cjk_stop=False).terms("部署了服务")
    assert Analyzer().terms("的") == []
    assert Analyzer().terms("café naïve") == ["cafe", "naiv"]  # a word of any script, unaccented


@needs_bench
def test_stop_lists_and_stemmers() -> None:
    assert len(stop_list("lucene")) == 33 and len(stop_list("nltk")) == 179
    assert {"new", "are", "in"} & stop_list("nltk") == {"are", "in"}
    with pytest.raises(ValueError, match="unknown stop list"):
        stop_list("nope")
    words = ["running", "databases", "generously", "answers", "restoring", "caresses"]
    assert [stemmer("pystemmer")(w) for w in words] == [stemmer("snowball")(w) for w in words]
    assert stemmer("pystemmer")("answers") == "answer"


# -- cuts and block metrics -------------------------------------------------------------------


def scored() -> dl.Scored:
    return dl.Scored(
        [["a"], ["b", "c"], ["d"], ["e"], ["f"], ["g"]],
        [0.9, 0.6, 0.3, 0.2, 0.01, 0.005],
        {"known": 4.0, "qmass": 2.0},
        [0.8, 0.0, 0.3, 0.1, 0.0, 0.0],
    )


def test_top_k_and_floor_cuts() -> None:
    s = scored()
    assert dl.top_k(5)(s) == [0, 1, 2, 3, 4]
    assert dl.top_k(5, 0.05)(s) == [0, 1, 2, 3]
    assert dl.floor_cut(5, 0.25, 0.0)(s) == [0, 1, 2]  # every row clears the absolute floor
    assert dl.floor_cut(5, 0.0, 0.5)(s) == [0, 1]  # and the relative one (0.5 × 0.9)
    assert dl.floor_cut(5, 0.95, 0.0)(s) == []  # nothing clears it: an empty block
    assert dl.floor_cut(5, 1.5, 0.0, "qmass")(s) == [0]  # 0.9 × 2 clears 1.5, 0.6 × 2 not
    assert dl.floor_cut(5, 0.5, 0.0, lambda x: 0.5)(s) == []
    assert dl.floor_cut(5, 0.1, 0.0, "missing")(s) == []
    # two-part: a fraction >= 0.5, or fraction × known >= 1.0 (0.3 × 4 = 1.2; 0.2 × 4 = 0.8)
    assert dl.two_part_floor(5, 0.5, 1.0, 0.0)(s) == [0, 1, 2]
    assert dl.two_part_floor(5, 0.5, 1.0, 0.5)(s) == [0, 1]
    assert dl.two_part_floor(5, 0.5, 1.0)(dl.Scored([], [])) == []


def test_block_metrics_and_summary() -> None:
    block = dl.Block(ranking=[["a"], ["x"], ["b"], ["y"], ["c"]], rows=[["a"], ["x"]], body=True)
    m = dl.block_metrics(block, ["a", "b", "z"])
    assert m == {
        "rows": 2.0,
        "empty": 0.0,
        "body": 1.0,
        "R@5": 2 / 3,
        "block R@5": 1 / 3,
        "non-gold": 1.0,
    }
    u = dl.block_metrics(dl.Block([["a"]], []), None)
    assert u == {"rows": 0.0, "empty": 1.0}
    s = dl.summarise([m, dl.block_metrics(dl.Block([], []), ["q"])], [u, {"rows": 1, "empty": 0}])
    assert s["n"] == 2 and s["R@5"] == pytest.approx(1 / 3)
    assert s["block R@5"] == pytest.approx(1 / 6) and s["kept"] == pytest.approx(0.5)
    assert s["non-gold/block"] == 0.5 and s["empty unrelated"] == 0.5 and s["body"] == 1.0
    assert math.isnan(dl.summarise([], [])["kept"])


def test_auc_counts_ties_half() -> None:
    assert dl.auc([3, 4], [1, 2]) == 1.0
    assert dl.auc([1, 2], [3, 4]) == 0.0
    assert dl.auc([1, 2], [1, 2]) == 0.5
    assert dl.auc([2, 2], [1, 2]) == 0.75
    assert math.isnan(dl.auc([], [1]))


# -- baselines --------------------------------------------------------------------------------


def store(texts: list[str], questions: list[tuple[str, list[str]]] = ()) -> bd.Store:  # type: ignore[assignment]
    items = [bd.Item(f"D1:{i + 1}", t, "2023-05-08") for i, t in enumerate(texts)]
    qs = [bd.Question(q, g, "4 single-hop") for q, g in questions]
    return bd.Store("conv-x", "dev", items, qs)


POOL = [
    "Ann: I restored the postgres databases yesterday",
    "Bo: the grey cat is called Miso",
    "Ann: 我们明天把服务部署到生产环境",
    'Bo: he said "hello" and left',
]


def test_fts5_porter_stems_trigram_and_bigram_match_chinese() -> None:
    s = store(POOL)
    assert FTS5Ranker(s, "porter").scored("restoring database").rows == [["D1:1"]]
    assert FTS5Ranker(s, "porter").scored("帮我部署服务").rows == []  # a CJK run is one token
    assert FTS5Ranker(s, "trigram").scored("帮我部署到生产").rows == [["D1:3"]]
    assert FTS5Ranker(s, "bigram").scored("帮我部署一下服务").rows == [["D1:3"]]
    assert FTS5Ranker(s, "porter").scored('"hello"').rows == [["D1:4"]]  # quotes are data
    assert FTS5Ranker(s, "porter").scored("!!!").rows == []
    with pytest.raises(ValueError, match="unknown FTS5 tokenizer"):
        FTS5Ranker(s, "jieba")


def test_fts5_query_and_bigram_text() -> None:
    assert fts5_query('帮我部署 restoring "x', "trigram") == '"帮我部" OR "我部署" OR "restoring"'
    assert fts5_query('say "hi" hi', "porter") == '"say" OR "hi"'
    assert fts5_query("部署服务 ok", "bigram") == '"部署" OR "署服" OR "服务" OR "ok"'
    assert bigram_text("ＡＰＩ 部署 了") == "api 部署 了"


@needs_bench
def test_bm25_terms_uses_the_analyzer() -> None:
    s = store(POOL)
    r = BM25Terms(s, Analyzer(), 0.5, 0.0)
    got = r.scored("restoring databases")
    assert got.rows == [["D1:1"]] and got.scores[0] > 0
    assert r.scored("the and of").rows == []  # only stop words: nothing is ranked
    assert BM25Terms(s, Analyzer(unigrams=True)).scored("部署").rows == [["D1:3"]]


# -- pools, unrelated queries, the runner ------------------------------------------------------


def locomo_like(root: Path) -> list[bd.Dataset]:
    a = store(POOL, [("Where did Ann restore the databases?", ["D1:1"])])
    b = bd.Store(
        "conv-y",
        "dev",
        [bd.Item("D1:1", "Cy: my bike broke on the bridge", "2023-01-01")],
        [bd.Question("What broke on the bridge?", ["D1:1"], "1 multi-hop")],
    )
    t = bd.Store("conv-z", "test", b.items, b.questions)
    return [bd.Dataset("locomo", "en", [a, b, t], ["1 multi-hop", "4 single-hop"])]


def test_pools_ask_other_conversations_and_chores(tmp_path: Path) -> None:
    ps = relevance.pools(locomo_like(tmp_path), ["dev"])
    assert [(p.set, p.split, len(p.answerable)) for p in ps] == [
        ("LoCoMo 1-4", "dev", 1),
        ("LoCoMo 1-4", "dev", 1),
    ]
    assert ps[0].unrelated[0][1:] == ("What broke on the bridge?", "other")
    assert ps[1].unrelated[0][1:] == ("Where did Ann restore the databases?", "other")
    assert [q for _o, q, k in ps[0].unrelated if k == "chores"] == list(chores.CHORES_EN)


def test_other_pools_come_from_the_same_data_set() -> None:
    def st(name: str, text: str, q: str, cat: str) -> bd.Store:
        return bd.Store(
            name, "dev", [bd.Item("m1", text, "2024-01-01")], [bd.Question(q, ["m1"], cat)]
        )

    mz = [st(f"madial-zh/{i}", f"记忆{i}", f"对话{i}", "context") for i in (1, 2)]
    mb = [st("memorybank/甲", "日记", "问题甲", "probe")]
    ds = [
        bd.Dataset("madial-zh", "zh", mz, ["context"]),
        bd.Dataset("memorybank-cn", "zh", mb, ["probe"]),
    ]
    ps = relevance.pools(ds, ["dev"])
    other = {p.store.name: [q for _o, q, k in p.unrelated if k == "other"] for p in ps}
    assert other == {"madial-zh/1": ["对话2"], "madial-zh/2": ["对话1"], "memorybank/甲": []}
    assert [q for _o, q, k in ps[2].unrelated if k == "chores"] == list(chores.CHORES_ZH)


@needs_bench
def test_run_measures_blocks_and_keeps_prototypes_off_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = locomo_like(tmp_path)
    res = relevance.run(relevance.pools(ds, ["dev"]), ["bm25", "talos"])
    ans, unr = res[("LoCoMo 1-4", "dev", "bm25")]
    assert [a["R@5"] for a in ans] == [1.0, 1.0]
    assert ans[0]["rows"] == 2.0 and ans[0]["non-gold"] == 1.0  # "ann" also matches D1:3
    assert len(unr) == 2 + 2 * len(chores.CHORES_EN)
    t_ans, _t_unr = res[("LoCoMo 1-4", "dev", "talos")]
    assert t_ans[0]["R@5"] == 1.0 and t_ans[0]["body"] == 0.0  # recall's own block
    monkeypatch.setattr(relevance, "PROTOTYPES", ("bm25",))  # a method being chosen
    with pytest.raises(ValueError, match="dev split only"):
        relevance.run(relevance.pools(ds, ["test"]), ["bm25"])
    assert relevance.run(relevance.pools(ds, ["dev"]), ["bm25"])  # dev: measured


def test_bootstrap_resamples_are_paired() -> None:
    """Two methods' values of one question set get the same resamples (``delivery.bootstrap``,
    which ``relevance`` and ``block_worth`` share): a constant shift moves the interval by it."""
    import numpy as np

    v = np.array([0.0, 1.0, 0.5, 1.0, 0.0, 1.0])
    lo, hi = dl.bootstrap(v)
    lo2, hi2 = relevance.bootstrap(v + 0.25)
    assert lo <= v.mean() <= hi
    assert (lo2, hi2) == pytest.approx((lo + 0.25, hi + 0.25))
    assert all(math.isnan(x) for x in dl.bootstrap(np.array([])))


def test_chores_are_chinese_and_distinct() -> None:
    assert len(chores.CHORES_ZH) >= 40 and len(set(chores.CHORES_ZH)) == len(chores.CHORES_ZH)
    assert all(re.search(r"[\u4e00-\u9fff]{4}", c) for c in chores.CHORES_ZH)
    assert len(set(chores.CHORES_EN)) == len(chores.CHORES_EN) >= 40


# -- the bodies set ---------------------------------------------------------------------------


def test_bodies_labels_are_balanced_and_name_real_skills() -> None:
    labels = bodies.LABELS
    assert len(labels) >= 30
    want = [w for _q, w in labels]
    assert sum(w is None for w in want) == sum(w is not None for w in want)
    names = {p.stem for p in (bodies.HOME / "skills").glob("*.md")}
    assert {w for w in want if w} <= names
    for h in ("tune", "check"):
        idx = [i for i in range(len(labels)) if bodies.half(i) == h]
        assert sum(labels[i][1] is None for i in idx) == len(idx) // 2


def test_bodies_score_counts_right_decisions() -> None:
    labels = (("a", "s1"), ("b", None), ("c", "s2"), ("d", None))
    answers = {"a": "s1", "b": "s1", "c": None, "d": None}
    s = bodies.score(answers.get, labels)
    assert s == {
        "all": 0.5,
        "tune": 0.5,
        "check": 0.5,
        "want body": 0.5,
        "want none": 0.5,
        "n": 4.0,
    }


def test_today_gate_reads_the_block_recall_delivers(tmp_path: Path) -> None:
    home = bodies.copy_home(tmp_path)
    from talos import Memory

    with Memory(home) as mem:
        gate = bodies.today_gate(mem)
        assert gate("restore the postgres backup into a staging database") == "postgres-restore"


def test_the_evidence_body_floor_holds_with_the_small_home_rule(tmp_path: Path) -> None:
    """The measured failure: through ``Memory.recall`` (small-home rule on) the old body floor
    0.59 decided 35 of the 40 labelled queries right; "explain what a python decorator is"
    got the python-project-setup body ("python" alone). ``relevance.BODY_FLOOR`` 0.9: 39."""
    home = bodies.copy_home(tmp_path)
    from talos import Memory

    with Memory(home, model="evidence") as mem:
        gate = bodies.today_gate(mem)
        assert gate("explain what a python decorator is") is None
        assert gate("the new intern starts on monday") is None  # "new" and a weekday
        assert gate("set up a new python project with lint") == "python-project-setup"
        assert bodies.score(gate)["all"] == 39 / 40
