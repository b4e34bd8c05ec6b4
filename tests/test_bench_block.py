"""What the block is worth (``bench/block_worth.py``) and the reader protocol (``bench/reader.py``).

Tiny stores written here; no third-party data is read.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import block_worth as bw  # noqa: E402
import datasets as bd  # noqa: E402
import reader  # noqa: E402
from delivery import Scored  # noqa: E402

from talos import Memory  # noqa: E402
from talos.render import labels  # noqa: E402

needs_bench = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("Stemmer", "snowballstemmer", "bm25s")),
    reason="the bench extra is not installed (pip install -e '.[bench]')",
)

HEADING = labels("en")["heading"]  # 100 characters


def store(texts: list[str], questions: list[bd.Question] | None = None) -> bd.Store:
    items = [bd.Item(f"D1:{i + 1}", t, f"2023-05-{i + 1:02d}") for i, t in enumerate(texts)]
    return bd.Store("conv-x", "dev", items, questions or [])


class FixedRanker:
    """A ranker whose ranking is given: the baseline's fill is all that is measured."""

    def __init__(self, rows: list[list[str]]) -> None:
        self.rows = rows

    def scored(self, query: str) -> Scored:
        return Scored(self.rows, [-float(i) for i in range(len(self.rows))])


# -- fill to budget -----------------------------------------------------------------------


def test_fill_to_budget_counts_the_heading_and_every_newline() -> None:
    lines = ["- [fact] " + "a" * 41, "- [fact] " + "b" * 91, "- [fact] " + "c" * 11]  # 50, 100, 20
    assert len(HEADING) == 72
    text, n = bw.fill_to_budget(lines, 72 + 51 + 101)
    assert (n, len(text)) == (2, 224)
    assert text == HEADING + "\n" + lines[0] + "\n" + lines[1]
    assert bw.fill_to_budget(lines, 223) == (HEADING + "\n" + lines[0], 1)  # one short of two
    assert bw.fill_to_budget(lines, 245)[1] == 3  # 224 + 21
    assert bw.fill_to_budget(lines, None) == (HEADING + "\n" + "\n".join(lines), 3)
    assert bw.fill_to_budget([], 2000) == ("", 0)
    # Chinese: talos's Chinese heading and fact label
    zh, n = bw.fill_to_budget([bw.fact_line("我喜欢猫", "zh")], 2000, "zh")
    assert zh == labels("zh")["heading"] + "\n- [事实] 我喜欢猫" and n == 1
    assert bw.fact_line("x", "en", "2023-05-08") == "- [fact] (2023-05-08) x"


def test_fill_to_budget_cuts_a_first_line_too_long_or_delivers_nothing() -> None:
    long = "- [fact] " + "z" * 591
    text, n = bw.fill_to_budget([long, "- [fact] short"], 300)
    assert (n, len(text)) == (1, 300)
    assert text == HEADING + "\n" + long[:226] + "…"
    # 122: 48 characters of room, 39 of text after "- [fact] ": below MIN_ROW (40)
    assert bw.fill_to_budget([long], 122) == ("", 0)
    assert bw.fill_to_budget([long], 123)[1] == 1


def test_a_baseline_is_filled_in_rank_order_to_the_budget() -> None:
    s = store(["x" * 91, "y" * 41, "z" * 191, "w" * 11])  # lines of 100, 50, 200, 20 characters
    eng = bw.FilledBlocks(FixedRanker([["D1:3"], ["D1:1"], ["D1:2"], ["D1:4"]]), s)
    got = eng.ask("anything", [272, 373, 374, 1000])
    assert got.ranking == [["D1:3"], ["D1:1"], ["D1:2"], ["D1:4"]]
    # heading 72 + 201 = 273 > 272: only the best row... which does not fit whole either
    assert got.blocks[272] == ([["D1:3"]], 272)
    assert got.blocks[373] == ([["D1:3"]], 273)
    assert got.blocks[374] == ([["D1:3"], ["D1:1"]], 72 + 201 + 101)
    # the third row (50) fits after 374: 425; then the fourth (20): 446. In rank order, no skip
    assert got.blocks[1000] == ([["D1:3"], ["D1:1"], ["D1:2"], ["D1:4"]], 446)
    dated = bw.FilledBlocks(FixedRanker([["D1:2"]]), s, dated=True).ask("q", [2000])
    assert dated.blocks[2000][1] == 72 + 1 + len("- [fact] (2023-05-02) ") + 41


# -- metrics ----------------------------------------------------------------------------------


def test_answer_metrics_gold_recall_any_gold_and_the_rankings_recall() -> None:
    ranking = [["a"], ["b"], ["c", "d"], ["e"], ["f"], ["g"], ["x"]]
    asked = bw.Asked(ranking, {1000: ([["a"], ["c", "d"]], 250), 2000: ([], 0)})
    m = bw.answer_metrics(asked, ["d", "x", "z", "a"])
    assert m["R@5"] == 0.5 and m["R@10"] == 0.75
    assert m["blocks"][1000] == {"gold": 0.5, "any": 1.0, "size": 250.0, "rows": 2.0}
    assert m["blocks"][2000] == {"gold": 0.0, "any": 0.0, "size": 0.0, "rows": 0.0}
    u = bw.unrelated_metrics(asked)
    assert u["blocks"] == {1000: {"empty": 0.0, "size": 250.0}, 2000: {"empty": 1.0, "size": 0.0}}


def test_summarise_means_shares_median_and_p90_sizes() -> None:
    def ans(gold: float, size: float, r5: float = 1.0) -> dict:
        rows = 0.0 if size == 0 else 2.0
        return {
            "R@5": r5,
            "R@10": 1.0,
            "blocks": {2000: {"gold": gold, "any": float(gold > 0), "size": size, "rows": rows}},
        }

    answerable = [ans(1.0, 900), ans(0.5, 1500, 0.5), ans(0.0, 0, 0.0), ans(0.0, 300), ans(1, 2000)]
    other = [{"blocks": {2000: {"empty": e, "size": 0.0}}} for e in (1.0, 1.0, 0.0, 1.0)]
    s = bw.summarise(answerable, other, [], 2000)
    assert s["n"] == 5 and s["gold recall"] == 0.5 and s["any gold"] == 0.6
    assert s["R@5"] == 0.7 and s["R@10"] == 1.0
    assert s["median size"] == 900 and s["p90 size"] == 2000 and s["rows/block"] == 1.6
    assert s["n other"] == 4 and s["empty other"] == 0.75
    assert s["n chores"] == 0 and math.isnan(s["empty chores"])
    assert bw.p90(list(range(1, 11))) == 9 and bw.p90([7.0]) == 7.0 and math.isnan(bw.p90([]))
    # an even count: the median is the mean of the middle two
    assert bw.summarise(answerable[:4], [], [], 2000)["median size"] == 600


# -- talos and the runner ---------------------------------------------------------------------

CATS = [
    "Caroline: I adopted a cat named Oscar from the shelter last spring and he sleeps all day.",
    "Melanie: my cat Luna knocks every glass off the kitchen table when she wants her dinner.",
    "Caroline: the cat food I buy comes from the farm shop near the river, Oscar loves it.",
    "Melanie: we took the kids camping at the lake and saw a family of otters at sunrise.",
]


def test_talos_blocks_ask_recall_with_the_budget_and_the_cap(tmp_path: Path) -> None:
    s = store(CATS)
    eng = bw.TalosBlocks(s, tmp_path, cap=50)
    got = eng.ask("what is Oscar the cat like", [250, 2000])
    whole = Memory(tmp_path / "home", keep_fact=None).recall("what is Oscar the cat like", k=50)
    ids = [[r.node.fields["ref"]] for r in whole.picked]
    assert got.blocks[2000] == (ids, len(whole.text)) and len(ids) >= 2
    # the budget is passed on: fewer rows, within 250 characters
    small = Memory(tmp_path / "home", keep_fact=None).recall(
        "what is Oscar the cat like", k=50, budget=250
    )
    assert got.blocks[250] == ([[r.node.fields["ref"]] for r in small.picked], len(small.text))
    assert len(small.text) <= 250 and 1 <= len(small.picked) < len(ids)
    top = Memory(tmp_path / "home", keep_fact=None).explain("what is Oscar the cat like", k=10)
    assert got.ranking == [[r.node.fields["ref"]] for r in top]
    assert sorted(got.ranking[:2]) == [["D1:1"], ["D1:3"]]  # the two turns about Oscar
    eng.close()


@needs_bench
def test_run_asks_every_pool_and_keeps_query_order() -> None:
    import relevance

    s = store(CATS)
    pool = relevance.Pool("LoCoMo 1-4", "en", "dev", 0, s, "locomo")
    pool.answerable = [(0, "Oscar the cat", ["D1:1", "D1:3"]), (1, "otters at the lake", ["D1:4"])]
    pool.unrelated = [(0, "fix the failing test in CI", "chores")]
    res = bw.run([pool], ["bm25", "talos"], [200, 2000], jobs=1, chunk=1)
    bm = res[("LoCoMo 1-4", "dev", "bm25")]
    assert [m["R@5"] for m in bm["answerable"]] == [1.0, 1.0]
    assert bm["answerable"][1]["blocks"][2000]["rows"] == 1.0  # only one turn says "otters"
    assert bm["chores"][0]["blocks"][2000] == {"empty": 1.0, "size": 0.0}
    assert bm["answerable"][0]["blocks"][200]["size"] <= 200
    assert set(res) == {("LoCoMo 1-4", "dev", "bm25"), ("LoCoMo 1-4", "dev", "talos")}
    with pytest.raises(ValueError, match="unknown method"):
        bw.make_engine("bm26", s, "en", Path("."))


# -- the reader protocol ----------------------------------------------------------------------


def tiny_locomo() -> bd.Dataset:
    q = [
        bd.Question("What is Caroline's cat called?", ["D1:1"], "4 single-hop", "Oscar"),
        bd.Question("Who has a cat named Luna?", ["D1:2"], "4 single-hop", "Melanie"),
        bd.Question("What did they see at the lake?", ["D1:4"], "1 multi-hop", "otters"),
        bd.Question("Trap", ["D1:3"], "5 adversarial", ""),  # not in the union: never sampled
        bd.Question("Luna's colour?", ["D1:2"], "4 single-hop", ""),  # no answer: never sampled
    ]
    dev = store(CATS, q)
    test = bd.Store("conv-y", "test", dev.items, [bd.Question("x", ["D1:1"], "4 single-hop", "y")])
    union = ["1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop"]
    return bd.Dataset("locomo", "en", [dev, test], union)


def test_sample_questions_is_seeded_and_takes_answerable_ones_of_the_split() -> None:
    ds = tiny_locomo()
    every = reader.sample_questions(ds, "dev", 10)
    assert [x.qid for x in every] == ["conv-x#0", "conv-x#1", "conv-x#2"]
    two = [x.qid for x in reader.sample_questions(ds, "dev", 2, seed=3)]
    assert two == [x.qid for x in reader.sample_questions(ds, "dev", 2, seed=3)] and len(two) == 2
    assert [x.qid for x in reader.sample_questions(ds, "both", 10)][-1] == "conv-y#0"


def test_locomo_loader_keeps_the_reference_answer(tmp_path: Path) -> None:
    conv = {
        "sample_id": "conv-t",
        "conversation": {
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I moved to Oslo"}],
        },
        "qa": [
            {"question": "Where?", "answer": "Oslo", "evidence": ["D1:1"], "category": 4},
            {"question": "When?", "answer": 2022, "evidence": ["D1:1"], "category": 2},
            {
                "question": "Trap?",
                "adversarial_answer": "Rome",
                "evidence": ["D1:1"],
                "category": 5,
            },
        ],
    }
    (tmp_path / "locomo").mkdir()
    (tmp_path / "locomo" / "locomo-t.json").write_text(json.dumps([conv]), encoding="utf-8")
    ds = bd.load_locomo(tmp_path)
    assert ds is not None
    assert [q.answer for q in ds.stores[0].questions] == ["Oslo", "2022", ""]


@needs_bench
def test_reader_files_round_trip_to_accuracy_per_condition(tmp_path: Path, capsys) -> None:
    qs = reader.sample_questions(tiny_locomo(), "dev", 3)
    items, key = reader.make_items(qs, ["gold", "bm25-top5"], budget=2000, seed=0)
    assert len(items) == len(key) == 6
    assert [k["condition"] for k in key] == ["gold", "bm25-top5"] * 3
    gold_rows = [k for k in key if k["condition"] == "gold"]
    assert [k["records"] for k in gold_rows] == [1, 1, 1] and {k["proxy"] for k in gold_rows} == {
        1.0
    }
    # blind: an item says nothing of its condition; ids are opaque and distinct
    for it in items:
        assert set(it) == {"id", "records", "question", "prompt"}
        assert "gold" not in json.dumps(it) and "bm25" not in json.dumps(it)
    assert len({it["id"] for it in items}) == 6 and {it["id"] for it in items} == {
        k["id"] for k in key
    }
    assert [it["id"] for it in items] != [k["id"] for k in key]  # shuffled, not by condition
    first = next(it for it in items if it["id"] == gold_rows[0]["id"])
    assert first["records"] == ["- (2023-05-01) " + CATS[0]]
    assert first["prompt"].startswith(reader.READER_INSTRUCTIONS)
    assert "- (2023-05-01) " + CATS[0] in first["prompt"] and "Question: What is" in first["prompt"]

    out = tmp_path / "reader"
    paths = reader.write_batches(items, out / "prompts", "reader", 4)
    assert [p.name for p in paths] == ["reader-001.jsonl", "reader-002.jsonl"]
    back = [obj for _f, _n, obj in reader.read_jsonl(out / "prompts")]
    assert back == items
    reader.write_jsonl(out / "key.jsonl", key)

    # a reader that knows the answer under "gold" and says unknown otherwise
    answers = {k["id"]: (k["answer"] if k["condition"] == "gold" else "Unknown.") for k in key}
    answers[gold_rows[2]["id"]] = "dolphins"  # one wrong gold-condition answer
    (out / "answers").mkdir()
    reader.write_jsonl(
        out / "answers" / "a.jsonl", [{"id": i, "answer": a} for i, a in answers.items()]
    )
    assert (
        reader.main(
            [
                "judge-prompts",
                "--key",
                str(out / "key.jsonl"),
                "--answers",
                str(out / "answers"),
                "--out",
                str(out / "judge"),
                "--batch",
                "5",
            ]
        )
        == 0
    )
    judge = [obj for _f, _n, obj in reader.read_jsonl(out / "judge")]
    assert len(judge) == 6 and len(list((out / "judge").glob("judge-*.jsonl"))) == 2
    assert set(judge[0]) == {"id", "question", "reference", "candidate", "prompt"}
    # a judge that compares exactly
    verdicts = [
        {"id": j["id"], "verdict": "CORRECT" if j["candidate"] == j["reference"] else "wrong"}
        for j in judge
    ]
    reader.write_jsonl(out / "verdicts.jsonl", verdicts)
    key_back = reader.load_key(out / "key.jsonl")
    got = reader.score(key_back, answers, {v["id"]: v["verdict"] for v in verdicts})
    by = {r["condition"]: r for r in got}
    assert by["gold"]["accuracy"] == pytest.approx(2 / 3) and by["gold"]["judged"] == 3
    assert by["gold"]["unknown"] == 0.0 and by["gold"]["proxy"] == 1.0
    assert by["bm25-top5"]["accuracy"] == 0.0 and by["bm25-top5"]["ci"] == (0.0, 0.0)
    assert by["bm25-top5"]["unknown"] == 1.0
    bm = [k for k in key if k["condition"] == "bm25-top5"]
    assert by["bm25-top5"]["proxy"] == sum(k["proxy"] for k in bm) / 3
    lo, hi = by["gold"]["ci"]
    assert 0.0 <= lo < 2 / 3 < hi <= 1.0
    assert (
        reader.main(
            [
                "score",
                "--key",
                str(out / "key.jsonl"),
                "--answers",
                str(out / "answers"),
                "--verdicts",
                str(out / "verdicts.jsonl"),
                "--json",
                str(out / "score.json"),
            ]
        )
        == 0
    )
    assert json.loads((out / "score.json").read_text())[0]["accuracy"] == pytest.approx(2 / 3)
    assert "gold" in capsys.readouterr().out


def test_reader_bad_input_is_a_clear_error_not_a_traceback(tmp_path: Path, capsys) -> None:
    key = [
        {
            "id": "abc",
            "condition": "gold",
            "qid": "c#0",
            "question": "q",
            "answer": "a",
            "proxy": 1.0,
        }
    ]
    reader.write_jsonl(tmp_path / "key.jsonl", key)
    (tmp_path / "answers.jsonl").write_text('{"id": "abc", "answer": "a"}\n', encoding="utf-8")
    (tmp_path / "v.jsonl").write_text('{"id": "abc", "verdict": "MAYBE"}\n', encoding="utf-8")
    args = [
        "score",
        "--key",
        str(tmp_path / "key.jsonl"),
        "--answers",
        str(tmp_path / "answers.jsonl"),
        "--verdicts",
        str(tmp_path / "v.jsonl"),
    ]
    assert reader.main(args) == 2
    assert "verdict 'MAYBE' is neither CORRECT nor WRONG" in capsys.readouterr().err
    (tmp_path / "v.jsonl").write_text('{"id": "zzz", "verdict": "WRONG"}\n', encoding="utf-8")
    assert reader.main(args) == 2
    assert "v.jsonl:1: id 'zzz' is not in the key file" in capsys.readouterr().err
    (tmp_path / "v.jsonl").write_text("{not json\n", encoding="utf-8")
    assert reader.main(args) == 2
    assert "v.jsonl:1: not a JSON line" in capsys.readouterr().err
    with pytest.raises(reader.ReaderError, match="unknown condition 'bm26'"):
        reader.make_items([], ["bm26"])
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "reader-001.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(reader.ReaderError, match=r"already holds reader-001\.jsonl"):
        reader.write_batches([{"id": "x"}], tmp_path / "p", "reader", 20)
