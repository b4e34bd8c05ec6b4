#!/usr/bin/env python3
"""Dev-split research for issue 15's ranking: the model of ``bench/rank_model.py`` against the
tuned BM25 baseline, its relevance floor, its invariants and its cost.

Reads only the dev split (``bench/datasets.py``); nothing here loads a test question.

- ``table``: dev Recall@5 (and R@1, R@10, MRR) of the recommended configuration, tuned BM25
  and today's ``bipartite`` prototype on LoCoMo 1-4, the Chinese set and MADial en, with the
  paired bootstrap CI of the difference to tuned BM25.
- ``sweep``: the configurations tried (every one is appended to the sweep log).
- ``floor``: block metrics of relevance floors on the recommended model's scores.
- ``invariants``: SPEC §10's bridge invariant and the other issue-5 invariants on the homes
  of ``tests/golden/home-bridge-*`` and the homes of ``tests/test_quality_invariants.py``.
- ``cost``: per-query time on a ``make_home.py`` home.

    python3 bench/rank_lab.py table --data ../shared/bench
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from analyzer import Analyzer
from datasets import DEFAULT_DATA, load_all
from delivery import Scored
from rank_model import Params, TermIndex, activate, query_vector
from relevance import BM25_PARAMS, SETS, Pool, bootstrap, pools

#: The analyzer of the ranking (bench/README "Relevance"): NLTK stop words, Snowball, CJK
#: bigrams + unigrams.
ANALYZER = Analyzer(stop="nltk", stem="pystemmer", unigrams=True)


@dataclass(slots=True)
class LabPool:
    """A dev pool prepared for fast evaluation: its index and its analyzed queries."""

    pool: Pool
    index: TermIndex
    answerable: list[tuple[tuple[Any, Any, int], list[str]]] = field(default_factory=list)
    unrelated: list[tuple[tuple[Any, Any, int], str]] = field(default_factory=list)


def prepare(data: Path, limit: int = 0, analyzer: Analyzer = ANALYZER) -> list[LabPool]:
    """The dev pools of every report set, indexed and with their queries analyzed."""
    out = []
    for p in pools(load_all(data), ["dev"], limit):
        by_text: dict[str, list[str]] = {}
        for it in p.store.items:
            by_text.setdefault(it.text, []).append(it.id)
        texts = [it.text for it in p.store.items]
        idx = TermIndex.of_texts(texts, [by_text[t] for t in texts], analyzer.terms)
        lp = LabPool(p, idx)
        lp.answerable = [(query_vector(idx, analyzer.terms(q)), g) for _o, q, g in p.answerable]
        lp.unrelated = [(query_vector(idx, analyzer.terms(q)), k) for _o, q, k in p.unrelated]
        out.append(lp)
    return out


def ranked(index: TermIndex, act: Any, k: int = 0) -> Any:
    """Node positions with activation > 0, best first, ties by node order (the top ``k``)."""
    idx = np.flatnonzero(act > 0)
    order = idx[np.argsort(-act[idx], kind="stable")]
    return order[:k] if k else order


def recall_at(rows: Sequence[list[str]], gold: Sequence[str], k: int) -> float:
    """Gold ids in the first ``k`` rows / gold ids."""
    want = set(gold)
    return len({i for r in rows[:k] for i in r} & want) / len(want)


def model_scored(lp: LabPool, q: tuple[Any, Any, int], p: Params, k: int = 10) -> Scored:
    """The model's ranking (top ``k``) of one query as a :class:`delivery.Scored`;
    ``info``: ``z`` (the query's best possible evidence), ``known`` (distinct known query
    terms), ``terms`` (distinct query terms); ``seeds``: each row's seed."""
    act, s, z = activate(lp.index, q, p)
    top = ranked(lp.index, act, k)
    info = {"z": z, "known": float(len(q[0])), "terms": float(len(q[0]) + q[2])}
    return Scored([lp.index.ids[i] for i in top], act[top].tolist(), info, s[top].tolist())


def evaluate(
    lab: Sequence[LabPool], params: dict[str, Params], k: int = 10
) -> dict[str, dict[str, Any]]:
    """``{set: {"R@5": array per question, "R@1", "R@10", "MRR", "scored": [...]}}`` with the
    params of each pool's language (``params["en"]``, ``params["zh"]``)."""
    out: dict[str, dict[str, Any]] = {}
    for lp in lab:
        p = params[lp.pool.lang]
        d = out.setdefault(lp.pool.set, {"R@1": [], "R@5": [], "R@10": [], "MRR": []})
        for q, gold in lp.answerable:
            s = model_scored(lp, q, p, k)
            d["R@1"].append(recall_at(s.rows, gold, 1))
            d["R@5"].append(recall_at(s.rows, gold, 5))
            d["R@10"].append(recall_at(s.rows, gold, 10))
            want = set(gold)
            d["MRR"].append(next((1 / (i + 1) for i, r in enumerate(s.rows) if want & set(r)), 0.0))
    return {s: {m: np.array(v) for m, v in d.items()} for s, d in out.items()}


def bm25_r5(lab: Sequence[LabPool]) -> dict[str, Any]:
    """Per-question dev R@5 of the tuned BM25 baseline (``bm25-uni`` of ``relevance.py``:
    bm25s over the same analyzer's terms, (k1, b) of :data:`relevance.BM25_PARAMS`)."""
    from baselines import BM25Terms

    out: dict[str, list[float]] = {}
    for lp in lab:
        k1, b = BM25_PARAMS[(lp.pool.lang, True)]
        r = BM25Terms(lp.pool.store, Analyzer(unigrams=True), k1, b)
        for _o, q, gold in lp.pool.answerable:
            out.setdefault(lp.pool.set, []).append(recall_at(r.ranking(q), gold, 5))
    return {s: np.array(v) for s, v in out.items()}


def delta(a: Any, b: Any, boot: int = 1000) -> tuple[float, float, float]:
    """Paired difference of per-question values and its 95% bootstrap interval."""
    d = a - b
    lo, hi = bootstrap(d, boot)
    return float(d.mean()), lo, hi


def log_run(path: Path | None, name: str, params: dict[str, Params], res: dict[str, Any]) -> None:
    """Append one configuration and its dev means to the sweep log (JSON lines)."""
    if path is None:
        return
    row = {
        "name": name,
        "params": {lang: asdict(p) for lang, p in params.items()},
        "dev": {s: {m: round(float(v.mean()), 4) for m, v in d.items()} for s, d in res.items()},
    }
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["table"])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = ap.parse_args(argv)
    start = time.time()
    lab = prepare(args.data)
    base = bm25_r5(lab)
    res = evaluate(lab, {"en": Params(), "zh": Params()})
    for s in SETS:
        print(s, res[s]["R@5"].mean(), base[s].mean(), delta(res[s]["R@5"], base[s]))
    print(f"{time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
