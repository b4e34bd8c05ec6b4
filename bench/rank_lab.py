#!/usr/bin/env python3
"""Dev-split research for issue 15's ranking: the ``evidence`` model of ``bench/rank_model.py``
against the tuned BM25 baseline, its relevance floor, body gate, invariants and cost.

Reads only the dev split (``bench/datasets.py``); nothing here loads a test question, so the
test split stays clean for the final verdict. Terms: the recommended analyzer of
``bench/relevance_lab.py`` (NLTK stop words, Snowball, CJK bigrams + unigrams).

- ``table``: dev R@1 / R@5 / R@10 / MRR of ``evidence``, tuned BM25 (``bm25-uni`` of
  ``relevance.py``) and ``bipartite`` on the same terms, with the paired bootstrap CI of the
  R@5 difference to tuned BM25; then the constants' neighbourhood (every cell logged).
- ``sweep``: the sweep log (``bench/rank_sweep.jsonl``, every configuration tried, with its dev
  means) summarised per family; ``--rerun`` recomputes every logged configuration with
  ``bench/rank_variants.py`` and checks the logged digits.
- ``floor``: top-row features of answerable vs unrelated queries (AUC; R@5 kept when 90% of the
  unrelated queries get an empty block), the gate × relative frontier, the recommended floor.
- ``bodies``: the body gate on ``bench/bodies_home`` (40 labelled queries).
- ``invariants``: SPEC §10 (bridge copies raise no score) and issue 5's (b)-(d) on the homes of
  ``tests/golden/home-bridge-*`` and ``tests/test_quality_invariants.py``.
- ``cost``: per-query time on a ``make_home.py`` home, beside ``bipartite`` in one run.

    python3 bench/rank_lab.py table      --data ../shared/bench
    python3 bench/rank_lab.py sweep      --data ../shared/bench [--rerun]
    python3 bench/rank_lab.py floor      --data ../shared/bench
    python3 bench/rank_lab.py bodies
    python3 bench/rank_lab.py invariants
    python3 bench/rank_lab.py cost       --data ../shared/bench --sessions 30000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from analyzer import Analyzer
from datasets import DEFAULT_DATA, load_all
from delivery import Block, Scored, auc, block_metrics, summarise
from rank_model import (
    Params,
    Query,
    TermIndex,
    activate,
    is_cjk,
    is_evidence,
    query_vector,
    relevance_floor,
)
from relevance import BM25_PARAMS, SETS, Pool, bootstrap, pools
from rich import box
from rich.console import Console
from rich.table import Table

#: The analyzer of the ranking (bench/README "Relevance").
ANALYZER = Analyzer(stop="nltk", stem="pystemmer", unigrams=True)
#: The recommended constants (bench/README "Ranking model for issue 15").
RECOMMENDED = Params()
#: The recommended relevance floor: ``(floor, whole, relative)`` of
#: :func:`rank_model.relevance_floor` (``floor``).
RECOMMENDED_FLOOR = (0.59, 0.4, 0.7)
#: The sweep log: one JSON line per configuration tried on dev.
SWEEP_LOG = Path(__file__).resolve().parent / "rank_sweep.jsonl"


@dataclass(slots=True)
class LabPool:
    """A dev pool prepared for fast evaluation: its index and its analyzed queries."""

    pool: Pool
    index: TermIndex
    answerable: list[tuple[Query, list[str]]] = field(default_factory=list)
    unrelated: list[tuple[Query, str]] = field(default_factory=list)


def pool_index(pool: Pool, analyzer: Analyzer = ANALYZER) -> TermIndex:
    """The :class:`TermIndex` of a pool (identical lines are one node, standing for all ids)."""
    by_text: dict[str, list[str]] = {}
    for it in pool.store.items:
        by_text.setdefault(it.text, []).append(it.id)
    texts = [it.text for it in pool.store.items]
    return TermIndex.of_texts(texts, [by_text[t] for t in texts], analyzer.terms)


def prepare(data: Path, limit: int = 0, analyzer: Analyzer = ANALYZER) -> list[LabPool]:
    """The dev pools of every report set, indexed, with their queries analyzed."""
    out = []
    for p in pools(load_all(data), ["dev"], limit):
        idx = pool_index(p, analyzer)
        lp = LabPool(p, idx)
        lp.answerable = [(query_vector(idx, analyzer.terms(q)), g) for _o, q, g in p.answerable]
        lp.unrelated = [(query_vector(idx, analyzer.terms(q)), k) for _o, q, k in p.unrelated]
        out.append(lp)
    return out


def ranked(act: np.ndarray, k: int = 0) -> np.ndarray:
    """Node positions with activation > 0, best first, ties by node order (the first ``k``)."""
    idx = np.flatnonzero(act > 0)
    order = idx[np.argsort(-act[idx], kind="stable")]
    return order[:k] if k else order


def recall_at(rows: Sequence[list[str]], gold: Sequence[str], k: int) -> float:
    """Gold ids in the first ``k`` rows / gold ids."""
    want = set(gold)
    return len({i for r in rows[:k] for i in r} & want) / len(want)


def scored(index: TermIndex, q: Query, p: Params = RECOMMENDED, k: int = 10) -> Scored:
    """The model's first ``k`` rows as a :class:`delivery.Scored`: ``info["scale"]`` = ``√Z``
    (activation × scale = evidence score), ``info["known"]``; ``seeds`` per row."""
    ev = activate(index, q, p)
    top = ranked(ev.final, k)
    return Scored(
        [index.ids[i] for i in top],
        ev.final[top].tolist(),
        {"scale": ev.scale, "z": ev.z, "known": float(q.known)},
        ev.seeds[top].tolist(),
    )


class EvidenceRanker:
    """``evidence`` for one memory pool, as a ``delivery.ScoredRanker`` (``relevance.py``'s
    ``evidence`` and ``evidence-floor`` prototypes, dev only)."""

    def __init__(self, store: Any) -> None:
        from relevance import Pool as _Pool

        self.index = pool_index(_Pool("", "", "dev", 0, store))

    def scored(self, query: str) -> Scored:
        """The first 10 rows, with ``info["scale"]``."""
        return scored(self.index, query_vector(self.index, ANALYZER.terms(query)))


def metrics(rows: Sequence[list[str]], gold: Sequence[str]) -> dict[str, float]:
    """R@1, R@5, R@10 and the reciprocal rank of the first gold row (0 when none)."""
    want = set(gold)
    rr = next((1 / (i + 1) for i, r in enumerate(rows) if want & set(r)), 0.0)
    return {
        "R@1": recall_at(rows, gold, 1),
        "R@5": recall_at(rows, gold, 5),
        "R@10": recall_at(rows, gold, 10),
        "MRR": rr,
    }


def collect(
    lab: Sequence[LabPool], rank: Callable[[LabPool, Query, int], list[list[str]]]
) -> dict[str, dict[str, np.ndarray]]:
    """``{set: {metric: per-question array}}`` of a ranker ``(pool, query, i) -> rows``
    (``i``: the question's position in its pool)."""
    out: dict[str, dict[str, list[float]]] = {}
    for lp in lab:
        d = out.setdefault(lp.pool.set, {})
        for i, (q, gold) in enumerate(lp.answerable):
            for m, v in metrics(rank(lp, q, i), gold).items():
                d.setdefault(m, []).append(v)
    return {s: {m: np.array(v) for m, v in d.items()} for s, d in out.items()}


def evaluate(lab: Sequence[LabPool], p: Params = RECOMMENDED) -> dict[str, dict[str, np.ndarray]]:
    """Per-question dev metrics of ``evidence`` with constants ``p``."""
    return collect(lab, lambda lp, q, _i: scored(lp.index, q, p).rows)


def baseline(lab: Sequence[LabPool], method: str) -> dict[str, dict[str, np.ndarray]]:
    """Per-question dev metrics of ``bm25`` (the tuned ``bm25-uni``: bm25s over the same
    terms, (k1, b) of :data:`relevance.BM25_PARAMS`) or ``bipartite`` (``talos.graph``'s
    default model on the same terms, ``bench/proto.py``)."""
    from baselines import BM25Terms
    from proto import ProtoRanker

    made: dict[int, Any] = {}

    def rank(lp: LabPool, _q: Query, i: int) -> list[list[str]]:
        r = made.get(id(lp))
        if r is None:
            if method == "bm25":
                k1, b = BM25_PARAMS[(lp.pool.lang, True)]
                r = BM25Terms(lp.pool.store, ANALYZER, k1, b)
            else:
                r = ProtoRanker(lp.pool.store, ANALYZER)
            made[id(lp)] = r
        return r.ranking(lp.pool.answerable[i][1])[:10]

    return collect(lab, rank)


def delta(a: np.ndarray, b: np.ndarray, boot: int = 1000) -> tuple[float, float, float]:
    """Paired difference of per-question values and its 95% bootstrap interval
    (``relevance.bootstrap``: the resamples of ``bench/quality.py``)."""
    d = a - b
    lo, hi = bootstrap(d, boot)
    return float(d.mean()), lo, hi


def log_row(name: str, params: dict[str, Any], res: dict[str, dict[str, np.ndarray]]) -> dict:
    """One sweep-log row: a configuration and its dev means."""
    return {
        "name": name,
        "params": params,
        "dev": {s: {m: round(float(v.mean()), 4) for m, v in d.items()} for s, d in res.items()},
    }


def _table(title: str, cols: Sequence[str]) -> Table:
    t = Table(title=title, box=box.MARKDOWN, title_justify="left")
    for i, c in enumerate(cols):
        t.add_column(c, justify="left" if i < 2 else "right")
    return t


# -- table -----------------------------------------------------------------------------------


def cmd_table(console: Console, lab: Sequence[LabPool], boot: int) -> None:
    """The dev table against tuned BM25 and the constants' neighbourhood (logged)."""
    res = {
        "evidence": evaluate(lab),
        "bm25 (tuned)": baseline(lab, "bm25"),
        "bipartite": baseline(lab, "bipartite"),
    }
    t = _table(
        "Dev split, recommended analyzer: R@5 with 95% bootstrap CI; Δ = paired difference "
        "to tuned BM25",
        ["set", "method", "n", "R@1", "R@5", "Δ R@5 vs bm25", "R@10", "MRR"],
    )
    base = res["bm25 (tuned)"]
    for s in SETS:
        for name, r in res.items():
            v = r[s]["R@5"]
            lo, hi = bootstrap(v, boot)
            d = (
                ""
                if name.startswith("bm25")
                else "{:+.3f} [{:+.3f}, {:+.3f}]".format(*delta(v, base[s]["R@5"], boot))
            )
            t.add_row(
                s,
                name,
                str(len(v)),
                f"{r[s]['R@1'].mean():.3f}",
                f"{v.mean():.3f} [{lo:.3f}, {hi:.3f}]",
                d,
                f"{r[s]['R@10'].mean():.3f}",
                f"{r[s]['MRR'].mean():.3f}",
            )
        t.add_section()
    console.print(t)
    # the Chinese set by source
    src = np.array(
        [lp.pool.dataset for lp in lab if lp.pool.set == "Chinese set" for _ in lp.answerable]
    )
    cells = []
    for ds in ("madial-zh", "memorybank-cn"):
        m = src == ds
        cells.append(
            f"{ds} ({int(m.sum())}): "
            + ", ".join(f"{n} {r['Chinese set']['R@5'][m].mean():.3f}" for n, r in res.items())
        )
    console.print("Chinese set by source, R@5: " + "; ".join(cells) + "\n")
    # the neighbourhood of the constants
    grid = [
        ("k1", (0.5, 0.9, 1.2, 1.5, 2.0)),
        ("b_cjk", (0.25, 0.5, 0.75, 1.0)),
        ("k3", (0.0, 0.5, 1.0, 2.0, 5.0)),
        ("decay", (0.0, 0.05, 0.1, 0.25, 0.5, 1.0)),
    ]
    t = _table(
        "Neighbourhood of the recommended constants (one changed at a time): dev R@5 "
        "LoCoMo / Chinese / MADial en",
        ["constant", "value", "R@5", "Δ vs bm25 LoCoMo", "Δ vs bm25 Chinese"],
    )
    rows = []
    for name, values in grid:
        for v in values:
            p = Params(**{**asdict(RECOMMENDED), name: v})
            r = evaluate(lab, p)
            rows.append(log_row(f"evidence neighbourhood {name}={v:g}", asdict(p), r))
            mark = " ←" if v == getattr(RECOMMENDED, name) else ""
            t.add_row(
                name,
                f"{v:g}{mark}",
                " / ".join(f"{r[s]['R@5'].mean():.3f}" for s in SETS),
                "{:+.3f} [{:+.3f}, {:+.3f}]".format(
                    *delta(r["LoCoMo 1-4"]["R@5"], base["LoCoMo 1-4"]["R@5"], boot)
                ),
                "{:+.3f} [{:+.3f}, {:+.3f}]".format(
                    *delta(r["Chinese set"]["R@5"], base["Chinese set"]["R@5"], boot)
                ),
            )
    console.print(t)
    append_log(rows)


def append_log(rows: Sequence[dict]) -> None:
    """Add rows to :data:`SWEEP_LOG` unless a row of the same name and params is there."""
    have = set()
    if SWEEP_LOG.exists():
        for line in SWEEP_LOG.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            have.add((r["name"], json.dumps(r["params"], sort_keys=True)))
    with SWEEP_LOG.open("a", encoding="utf-8") as f:
        for r in rows:
            key = (r["name"], json.dumps(r["params"], sort_keys=True))
            if key not in have:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
                have.add(key)


# -- sweep -----------------------------------------------------------------------------------

#: Families of the sweep log by the start of a row's name (what each family tried).
FAMILIES: tuple[tuple[str, str], ...] = (
    ("bm25 exact", "home-wide BM25 (Lucene IDF over N, mean length) as seeds: the baseline"),
    ("bm25 local", "BM25 over the query's candidates (the per-category look)"),
    ("en n0", "IDF ln(1 + N0/df), fixed N0, English"),
    ("zh n0", "IDF ln(1 + N0/df) × fixed length pivot L, Chinese"),
    ("local idf", "IDF and length pivot over the query's candidates (k1, b)"),
    ("local seeds + bipartite spread", "candidate BM25 seeds + bipartite spreading (decay)"),
    ("local seeds + spread send=tf", "spreading with sends in proportion to tf"),
    ("local seeds k3", "query-term saturation k3"),
    ("send idf", "spreading with sends weighted by idf^γ (and without query terms)"),
    ("zh unigram weight", "CJK unigram weight β × idf"),
    ("idf", "IDF power (idf^p) and home-wide IDF powers"),
    ("df cap", "dropping query terms held by more than a share of the nodes"),
    ("english word pairs", "adjacent-word pairs as extra terms (weight)"),
    ("query recency", "query terms weighted by recency in the query (half-life H chars)"),
    ("zh grid", "Chinese k1 × b × k3"),
    ("PRF top", "spreading from the top m nodes only (pseudo-relevance feedback)"),
    ("en grid", "English k1 × b"),
    ("both d", "decay × k3, both languages"),
    ("cand", "the first candidate"),
    ("hub-like", "today's bipartite reproduced (binary tf, df^-0.5, decay 0.5)"),
    ("coord", "coordination factor (matched / query terms)^γ"),
    ("shared", "one (k1, b) for both languages"),
    ("k1=", "one k1, b per language"),
    ("en negative b", "a long-node prior (b < 0), English"),
    ("RM3", "RM3 pseudo-relevance feedback on evidence (feedback rows, terms, mix λ)"),
    ("evidence neighbourhood", "the final model, one constant changed at a time"),
    ("check", "harness check"),
)


def family(name: str) -> str:
    """The family (a :data:`FAMILIES` key) a sweep-log row belongs to."""
    best = ""
    for key, _what in FAMILIES:
        if name.startswith(key) and len(key) > len(best):
            best = key
    return best or "other"


def cmd_sweep(console: Console, data: Path, rerun: bool) -> None:
    """Summarise the sweep log per family; ``rerun``: recompute and compare every row."""
    rows = [json.loads(x) for x in SWEEP_LOG.read_text(encoding="utf-8").splitlines()]
    if rerun:
        import rank_variants as V

        bad = 0
        cache: dict[str, Any] = {}
        for r in rows:
            got = V.rerun(r, data, cache)
            if got is None:
                continue
            for s, ms in r["dev"].items():
                for m, v in ms.items():
                    if s in got and abs(got[s][m] - v) > 5e-4:
                        bad += 1
                        console.print(f"differs: {r['name']} {s} {m}: logged {v}, now {got[s][m]}")
        console.print(f"rerun: {len(rows)} rows, {bad} numbers differ\n")
    t = _table(
        f"Sweep log ({len(rows)} configurations on dev): per family, the best row by the mean "
        "of LoCoMo and Chinese R@5 (tuned BM25: 0.580 / 0.691)",
        ["family", "what", "rows", "best LoCoMo / Chinese / MADial en", "range of the mean"],
    )
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(family(r["name"]), []).append(r)

    def mean(r: dict) -> float:
        d = r["dev"]
        return sum(d[s]["R@5"] for s in ("LoCoMo 1-4", "Chinese set") if s in d) / len(
            [s for s in ("LoCoMo 1-4", "Chinese set") if s in d]
        )

    for key, what in FAMILIES:
        got = by.get(key, [])
        if not got:
            continue
        best = max(got, key=mean)
        cells = " / ".join(
            f"{best['dev'][s]['R@5']:.3f}" if s in best["dev"] else "-" for s in SETS
        )
        t.add_row(
            key,
            what,
            str(len(got)),
            f"{cells} ({best['name']})",
            f"{min(map(mean, got)):.3f} – {max(map(mean, got)):.3f}",
        )
    console.print(t)


# -- floor -----------------------------------------------------------------------------------


def evidence_cut(
    floor: float, relative: float, whole: float = RECOMMENDED_FLOOR[1], k: int = 5
) -> Callable[[Scored], list[int]]:
    """:func:`rank_model.relevance_floor` as a :mod:`delivery` cut."""

    def cut(s: Scored) -> list[int]:
        scale = s.info.get("scale", 0.0)
        return list(range(relevance_floor(s.scores, s.seeds, scale, floor, whole, relative, k)))

    return cut


def scored_sets(lab: Sequence[LabPool], p: Params = RECOMMENDED) -> dict[str, dict[str, list]]:
    """``{set: {"answerable": [(scored, gold)], "unrelated": [(scored, kind)]}}``."""
    out: dict[str, dict[str, list]] = {}
    for lp in lab:
        d = out.setdefault(lp.pool.set, {"answerable": [], "unrelated": []})
        d["answerable"] += [(scored(lp.index, q, p), g) for q, g in lp.answerable]
        d["unrelated"] += [(scored(lp.index, q, p), k) for q, k in lp.unrelated]
    return out


def block_summary(d: dict[str, list], cut: Callable[[Scored], list[int]]) -> dict[str, float]:
    """``delivery.summarise`` of a cut, with ``other`` and ``chores``: the shares of empty
    blocks for the two kinds of unrelated queries."""

    def blk(s: Scored) -> Block:
        return Block(s.rows, [s.rows[i] for i in cut(s)])

    out = summarise([block_metrics(blk(s), g) for s, g in d["answerable"]], [])
    for kind in ("other", "chores"):
        ms = [block_metrics(blk(s), None) for s, k in d["unrelated"] if k == kind]
        out[kind] = summarise([], ms)["empty unrelated"]
    return out


def cell(x: dict[str, float]) -> str:
    """``non-gold / kept / empty other · empty chores``."""
    return (
        f"{x['non-gold/block']:.2f} / {100 * x['kept']:.0f}% / "
        f"{100 * x['other']:.0f}% · {100 * x['chores']:.0f}%"
    )


def _top(s: Scored) -> float:
    return s.scores[0] if s.rows else 0.0


#: Top-row features the floor could compare across queries.
FEATURES: dict[str, Callable[[Scored], float]] = {
    "activation (share of the query)": _top,
    "activation × Z (evidence, idf units)": lambda s: _top(s) * s.info["z"],
    "activation × √Z (evidence score)": lambda s: _top(s) * s.info["scale"],
    "activation × known": lambda s: _top(s) * s.info["known"],
    "activation × √known": lambda s: _top(s) * s.info["known"] ** 0.5,
    "top1 / top2": lambda s: (
        (s.scores[0] / s.scores[1] if len(s.scores) > 1 else 10.0) if s.rows else 0.0
    ),
}


def kept_at(d: dict[str, list], f: Callable[[Scored], float], kind: str, q: float = 0.9) -> float:
    """The share of the ranking's R@5 kept when the block is empty below the ``q`` quantile
    of ``f`` over the unrelated queries of ``kind`` (a query-level gate only)."""
    neg = [f(s) for s, k in d["unrelated"] if k == kind]
    tau = float(np.quantile(neg, q, method="higher"))
    pos = np.array([f(s) for s, _g in d["answerable"]])
    r5 = np.array([recall_at(s.rows, g, 5) for s, g in d["answerable"]])
    return float(r5[pos > tau].sum() / r5.sum())


def cmd_floor(console: Console, lab: Sequence[LabPool]) -> None:
    """Floor features, the gate × relative frontier and the recommended floor (dev)."""
    S = scored_sets(lab)
    t = _table(
        "Top-row features, answerable vs unrelated dev queries: AUC vs other pools · chores; "
        "R@5 kept at 90% empty blocks (other · chores)",
        ["feature", "set", "AUC", "kept at 90% empty"],
    )
    for name, f in FEATURES.items():
        for s, d in S.items():
            pos = [f(x) for x, _g in d["answerable"]]
            cells = []
            for kind in ("other", "chores"):
                neg = [f(x) for x, k in d["unrelated"] if k == kind]
                cells.append(f"{auc(pos, neg):.3f}")
            t.add_row(
                name,
                s,
                " · ".join(cells),
                " · ".join(f"{100 * kept_at(d, f, k):.0f}%" for k in ("other", "chores")),
            )
        t.add_section()
    console.print(t)
    # one floor for every set: the smallest giving 90% empty blocks for LoCoMo's other
    # conversations and for the Chinese chores (the definitions of unrelated)
    f = FEATURES["activation × √Z (evidence score)"]
    need = max(
        float(np.quantile([f(x) for x, k in S[s]["unrelated"] if k == kind], 0.9, method="higher"))
        for s, kind in (("LoCoMo 1-4", "other"), ("Chinese set", "chores"))
    )
    console.print(f"evidence score giving 90% empty blocks on both: {need:.3f}\n")
    t = _table(
        "The floor's curve (relative 0): R@5 kept / empty blocks for LoCoMo's other "
        "conversations; the same for the Chinese chores",
        ["floor", "LoCoMo kept", "LoCoMo other empty", "Chinese kept", "Chinese chores empty"],
    )
    for fl in np.arange(0.4, 0.801, 0.02):
        lo = block_summary(S["LoCoMo 1-4"], evidence_cut(float(fl), 0.0))
        zh = block_summary(S["Chinese set"], evidence_cut(float(fl), 0.0))
        t.add_row(
            f"{fl:.2f}",
            f"{100 * lo['kept']:.0f}%",
            f"{100 * lo['other']:.0f}%",
            f"{100 * zh['kept']:.0f}%",
            f"{100 * zh['chores']:.0f}%",
        )
    console.print(t)
    t = _table(
        "Floor on the evidence score (block empty when the best row is below `floor`), rows "
        ">= `relative` × the best: non-gold rows per block / R@5 kept / empty blocks for "
        "unrelated queries (other pools · chores)",
        ["floor", "relative", *S],
    )
    for fl in (0.0, 0.5, RECOMMENDED_FLOOR[0], 0.7, 0.8):
        for rel in (0.0, 0.5, 0.6, 0.7, 0.8, 0.9):
            cut = evidence_cut(fl, rel)
            mark = " ←" if (fl, rel) == RECOMMENDED_FLOOR[::2] else ""
            t.add_row(
                f"{fl:g}{mark}", f"{rel:g}", *(cell(block_summary(d, cut)) for d in S.values())
            )
    console.print(t)
    from relevance_lab import oracle

    console.print(
        "oracle cut (ends at the last gold row of the top 5), non-gold rows per block: "
        + ", ".join(
            f"{s} {oracle([(x, g, '') for x, g in d['answerable']]):.2f}" for s, d in S.items()
        )
    )


# -- bodies ----------------------------------------------------------------------------------


def home_texts(
    home: Path, kinds: Sequence[str] = ("fact", "skill")
) -> tuple[list[str], list[str], list[str]]:
    """A home's nodes of ``kinds`` (``Memory.nodes()``): their matching texts (a skill's body
    with its not-for clauses dropped, SPEC §3.2), kinds and labels (a skill's name, else
    its text)."""
    from talos import Memory
    from talos.text import drop_not_for

    with Memory(home) as mem:
        nodes = [n for n in mem.nodes() if n.kind in kinds]
    texts = [drop_not_for(n.body) if n.kind == "skill" else n.text for n in nodes]
    return texts, [n.kind for n in nodes], [n.name or n.text for n in nodes]


def home_index(
    home: Path, analyzer: Analyzer = ANALYZER, kinds: Sequence[str] = ("fact", "skill")
) -> tuple[TermIndex, list[str], list[str]]:
    """:func:`home_texts` as a :class:`TermIndex`, with each node's kind and label."""
    texts, kinds_, labels = home_texts(home, kinds)
    keyed = [f"{k}\x00{lab}" for k, lab in zip(kinds_, labels, strict=True)]
    idx = TermIndex.of_texts(texts, [[k] for k in keyed], analyzer.terms)
    pairs = [idx.ids[i][0].split("\x00", 1) for i in range(idx.n)]
    return idx, [k for k, _l in pairs], [lab for _k, lab in pairs]


def body_gate(
    home: Path | tuple[TermIndex, list[str], list[str]],
    evidence_floor: float,
    lead: float | None = 1.2,
    k: int = 5,
    p: Params = RECOMMENDED,
    unigrams: bool = False,
    whole: float = RECOMMENDED_FLOOR[1],
) -> Callable[[str], str | None]:
    """The skill body gate on ``evidence``: the best skill among the first ``k`` rows earns its
    body when it leads the second skill by ``lead``× (today's rule; a lone skill needs no
    lead; ``None``: no lead rule) *and* its own seed evidence score (seed × √Z, before
    spreading) clears ``evidence_floor``, or its seed holds ``whole`` of the query (it matches
    the query itself, :func:`rank_model.is_evidence`; issue 15 item 3).
    That evidence is taken without CJK unigrams (``unigrams=False``): shared single
    characters (这 个 一) added up to a body for 18% of the Chinese chores on a
    ``make_home.py`` home.

    ``home``: a home folder (its facts and skills) or :func:`home_index`'s triple."""
    idx, kinds, labels = home_index(home) if isinstance(home, Path) else home

    def gate(query: str) -> str | None:
        terms = ANALYZER.terms(query)
        ev = activate(idx, query_vector(idx, terms), p)
        order = ranked(ev.final)
        skills = [i for i in order if kinds[i] == "skill"]
        if not skills or skills[0] not in order[:k]:
            return None
        best = skills[0]
        if lead is not None and len(skills) > 1 and ev.final[best] < lead * ev.final[skills[1]]:
            return None
        if not unigrams:  # the skill's own evidence without single CJK characters
            ev = activate(idx, query_vector(idx, [t for t in terms if not is_unigram(t)]), p)
        s = float(ev.seeds[best])
        return labels[best] if is_evidence(s, s, ev.scale, evidence_floor, whole) else None

    return gate


def is_unigram(term: str) -> bool:
    """A single CJK character (a CJK unigram term)."""
    return len(term) == 1 and is_cjk(term)


def cmd_bodies(console: Console, data: Path, sessions: int) -> None:
    """The body gate on the labelled set (the evidence floor chosen on the tune half), then
    the body rate on a ``make_home.py`` home (``sessions``; 0: skip)."""
    import bodies

    with tempfile.TemporaryDirectory(prefix="talos-bodies-") as tmp:
        home = bodies.copy_home(Path(tmp))
        tune = [x for i, x in enumerate(bodies.LABELS) if bodies.half(i) == "tune"]
        grid = [round(0.1 * i, 2) for i in range(0, 16)]
        got = [(bodies.score(body_gate(home, v), tune)["all"], -v, v) for v in grid]
        console.print(
            "evidence floor of the best skill's seed: tune-half decided right "
            + ", ".join(f"{v:g} {100 * x:.0f}%" for x, _m, v in got)
        )
        best = max(got)[2]
        rows = [
            ("lead 1.2 only (no evidence floor)", bodies.score(body_gate(home, 0.0))),
            (f"+ seed evidence >= {best:g} (chosen on tune)", bodies.score(body_gate(home, best))),
            (
                f"+ seed evidence >= {RECOMMENDED_BODY:g} (the relevance floor; recommended)",
                bodies.score(body_gate(home, RECOMMENDED_BODY)),
            ),
            (
                f"seed evidence >= {RECOMMENDED_BODY:g}, no lead rule",
                bodies.score(body_gate(home, RECOMMENDED_BODY, lead=None)),
            ),
            (
                f"+ seed evidence >= {RECOMMENDED_BODY:g} with CJK unigrams",
                bodies.score(body_gate(home, RECOMMENDED_BODY, unigrams=True)),
            ),
        ]
        gate = body_gate(home, RECOMMENDED_BODY)
        wrong = [(q, gate(q), w) for q, w in bodies.LABELS if gate(q) != w]
    console.print(bodies.table("Body gate on evidence, bench/bodies_home (40 queries)", rows))
    for q, g, w in wrong:
        console.print(f"  wrong: {q!r}: got {g}, want {w}")
    if sessions:
        body_rate(console, data, sessions)


def body_rate(console: Console, data: Path, sessions: int) -> None:
    """Share of queries whose block would carry a skill body on a ``make_home.py`` home
    (facts + skills, as ``relevance.py body-rate``'s prototype column; its 60 skills are
    stitched from utterances, none a how-to)."""
    import subprocess

    from chores import CHORES_EN, CHORES_ZH

    with tempfile.TemporaryDirectory(prefix="talos-home-") as tmp:
        home = Path(tmp) / "home"
        subprocess.run(
            [sys.executable, str(data / "make_home.py"), str(home), "--sessions", str(sessions)],
            check=True,
            capture_output=True,
        )
        built = home_index(home)
        gates = {
            "recommended gate": body_gate(built, RECOMMENDED_BODY),
            "evidence with CJK unigrams": body_gate(built, RECOMMENDED_BODY, unigrams=True),
        }
        qs = _dev_questions(data)
        sets = {
            "English chores": list(CHORES_EN),
            "Chinese chores": list(CHORES_ZH),
            "LoCoMo dev questions": [q for s, q in qs if s == "LoCoMo 1-4"],
            "Chinese set dev questions": [q for s, q in qs if s == "Chinese set"],
        }
        t = _table(
            f"Body rate on a make_home.py home ({sessions} sessions; facts + skills)",
            ["queries", "", "n", *gates],
        )
        for name, got in sets.items():
            rates = [sum(g(q) is not None for q in got) / len(got) for g in gates.values()]
            t.add_row(name, "", str(len(got)), *(f"{100 * r:.0f}%" for r in rates))
    console.print(t)


#: The body gate's floor on the best skill's seed evidence score (``bodies``): the relevance
#: floor itself (the tune half is right at 0.6-0.7, and 95% at 0.2-0.5).
RECOMMENDED_BODY = RECOMMENDED_FLOOR[0]


# -- invariants ------------------------------------------------------------------------------


def activations(home: Path, query: str, p: Params = RECOMMENDED) -> dict[str, float]:
    """``kind:label -> final activation`` of every node the query activates."""
    idx, kinds, labels = home_index(home)
    ev = activate(idx, query_vector(idx, ANALYZER.terms(query)), p)
    return {f"{kinds[i]}:{labels[i]}": float(ev.final[i]) for i in ranked(ev.final)}


def rises(base: dict[str, float], now: dict[str, float], copy: str) -> list[str]:
    """Rows of ``now`` above their value in ``base`` (a copy of the bridge: above the single
    bridge's value) — SPEC §10 says there must be none."""
    bridge = next((v for t, v in base.items() if copy in t), 0.0)
    out = []
    for t, v in now.items():
        ref = base.get(t, bridge if copy in t else None)
        if ref is None or v > ref + 1e-12:
            out.append(f"{t}: {ref} -> {v}")
    return out


def check_invariants(
    golden: Path,
    work: Path,
    p: Any = RECOMMENDED,
    model: Callable[[Path, str, Any], dict[str, float]] | None = None,
) -> list[str]:
    """Every failed invariant (empty: all hold) on copies of the golden bridge homes and on
    homes built in ``work`` (the cases of ``tests/test_quality_invariants.py``).

    ``model``: ``(home, query, p) -> {kind:label: activation}`` (default :func:`activations`,
    ``evidence``; ``contiguity_lab.activations`` checks the contiguity model)."""
    import shutil

    activations = model or globals()["activations"]

    fails: list[str] = []
    bridge = "流水线 调度 重试 告警 值班"
    for n in (1, 20, 60):  # read copies: an indexed read writes the home's state folder
        if not (work / f"home-bridge-{n}").exists():
            shutil.copytree(golden / f"home-bridge-{n}", work / f"home-bridge-{n}")
    golden = work
    for query in ("数据清洗", "数据清洗 脚本"):
        base = activations(golden / "home-bridge-1", query, p)
        for n in (20, 60):
            now = activations(golden / f"home-bridge-{n}", query, p)
            fails += [f"(a) bridge-{n} {query}: {r}" for r in rises(base, now, bridge)]
            top = list(now)[:5]
            if "skill:etl" not in top:
                fails.append(f"(a) bridge-{n} {query}: etl not in the top 5 {top}")
    for query in ("csv cleanup", "csv cleanup script"):
        base = activations(english_bridge(work, 1), query, p)
        for n in (7, 40):
            now = activations(english_bridge(work, n), query, p)
            fails += [f"(a) en-bridge-{n}: {r}" for r in rises(base, now, "pipeline schedule")]
            skills = [t for t in now if t.startswith("skill:")]
            if not skills or skills[0] != "skill:csv-clean":
                fails.append(f"(a) en-bridge-{n} {query}: first skill {skills[:1]}")
    one = write_home(work / "dup-1", "- deploy region is eu-west-1\n" + DUP_REST)
    four = write_home(work / "dup-4", "- deploy region is eu-west-1\n" * 4 + DUP_REST)
    for query in ("Alice Bob", "deploy region", "deploy Alice"):
        if activations(one, query, p) != activations(four, query, p):
            fails.append(f"(b) duplicates change scores for {query!r}")
    got = activations(write_home(work / "bridged", BRIDGED), "deploy billing service", p)
    if f"fact:{TARGET}" not in list(got)[:5]:
        fails.append(f"(c) the bridged fact is not recalled: {list(got)[:5]}")
    rows = list(activations(chores_home(work), "帮我部署一下服务", p))
    on_topic = [i for i, r in enumerate(rows) if "部署" in r or "服务" in r or r == "skill:deploy"]
    weekly = [i for i, r in enumerate(rows) if r == "skill:weekly"]
    if weekly and weekly[0] < max(on_topic):
        fails.append(f"(d) the weekly skill ranks above the topic: {rows[:8]}")
    if "skill:deploy" not in rows[:5]:
        fails.append(f"(d) the deploy skill is not in the top 5: {rows[:8]}")
    return fails


DUP_REST = "- Alice trusts Bob\n- Bob trusts Alice\n- Alice reviews the deploy scripts\n"
BRIDGED = (
    "- billing service deploy needs the vault token\n"
    "- vault token rotates every monday at noon\n"
    "- lunch menu has pasta on friday\n"
    "- printer on floor three jams often\n"
)
TARGET = "vault token rotates every monday at noon"


def write_home(home: Path, memory: str, skills: dict[str, str] | None = None) -> Path:
    """A home with this memory.md and skills (created, or left as it is)."""
    if not home.exists():
        (home / "skills").mkdir(parents=True)
        (home / "memory.md").write_text(memory, encoding="utf-8")
        for name, text in (skills or {}).items():
            (home / "skills" / name).write_text(text, encoding="utf-8")
    return home


def english_bridge(work: Path, n: int) -> Path:
    """``tests/test_quality_invariants.english_bridge_home`` with ``n`` bridge copies."""
    copies = "".join(
        f"- pipeline schedule retry alert oncall nonce{i:03d} <!-- reflect 2026-07-01 -->\n"
        for i in range(n)
    )
    return write_home(
        work / f"en-bridge-{n}",
        "- csv cleanup pipeline schedule retry\n" + copies,
        {
            "csv-clean.md": "---\nname: csv-clean\ndescription: csv cleanup script\n---\n\n"
            "Cleanup of csv files, a script.\n",
            "oncall.md": "---\nname: oncall\ndescription: alert oncall escalation process\n"
            "---\n\nAlert, oncall, escalation, phone.\n",
        },
    )


def chores_home(work: Path) -> Path:
    """``tests/test_quality_invariants.chores_home`` (the common-bigram case (d))."""
    chores = "".join(
        f"- 整理一下 {t} <!-- reflect 2026-01-{i + 1:02d} -->\n" for i, t in enumerate(THINGS)
    )
    return write_home(
        work / "chores",
        chores + "".join(f"- {t}\n" for t in TOPIC),
        {
            "deploy.md": "---\nname: deploy\ndescription: 部署服务到生产环境的步骤\n---\n\n"
            "先备份, 再蓝绿发布, 最后检查健康接口。\n",
            "weekly.md": "---\nname: weekly\ndescription: 整理一下本周周报\n---\n\n"
            "把本周做的事整理一下, 写成周报。\n",
        },
    )


#: The chores and the topic lines of ``tests/test_quality_invariants.py`` (case (d)).
THINGS = (
    *("书架 旧书", "邮箱 附件", "手机 照片", "衣柜 冬衣", "桌面 文件", "厨房 调料", "发票 报销"),
    *("相册 备份", "抽屉 杂物", "浏览器 书签", "购物 清单", "读书 笔记", "药箱 过期药"),
    *("鞋柜 旧鞋", "冰箱 剩菜", "账单 明细", "书包 文具", "工具箱 螺丝", "车里 杂物", "阳台 花盆"),
)
TOPIC = (
    "部署服务前先备份数据库",
    "生产环境部署用蓝绿发布",
    "服务部署后检查健康接口",
    "部署脚本放在 ops 仓库",
    "回滚服务用上一个镜像标签",
)


def cmd_invariants(console: Console) -> None:
    """Print every failed invariant of the recommended model (and of a home-wide-IDF
    variant, which must fail (a): the rule the candidate statistics exist for)."""
    golden = Path(__file__).resolve().parent.parent / "tests" / "golden"
    with tempfile.TemporaryDirectory(prefix="talos-inv-") as tmp:
        fails = check_invariants(golden, Path(tmp))
    console.print(f"evidence, recommended constants: {len(fails)} failed")
    for f in fails:
        console.print(f"  {f}")


# -- cost ------------------------------------------------------------------------------------


def cmd_cost(console: Console, data: Path, sessions: int, reps: int) -> None:
    """Per-query time of ``evidence``, of ``bipartite`` over the same terms
    (``bench/proto.py``) and of talos's ``bipartite`` (its own graph, SPEC §4 keywords) on
    one ``make_home.py`` home; the three timed in turns, query by query (medians)."""
    import subprocess

    from chores import CHORES_EN, CHORES_ZH
    from proto import proto_graph

    import talos.activation as A
    from talos import Memory, keywords

    with tempfile.TemporaryDirectory(prefix="talos-cost-") as tmp:
        home = Path(tmp) / "home"
        subprocess.run(
            [sys.executable, str(data / "make_home.py"), str(home), "--sessions", str(sessions)],
            check=True,
            capture_output=True,
        )
        texts, _k, _l = home_texts(home, ("fact", "skill", "episode"))
        t0 = time.perf_counter()
        idx = TermIndex.of_texts(texts, [[str(i)] for i in range(len(texts))], ANALYZER.terms)
        build = time.perf_counter() - t0
        proto, _ids = proto_graph(texts, [[str(i)] for i in range(len(texts))], ANALYZER)
        mem = Memory(home)
        graph = mem.graph()
        lo = [q for s, q in _dev_questions(data) if s == "LoCoMo 1-4"]
        chores = [*CHORES_EN, *CHORES_ZH]
        qs = [*lo[: max(0, reps - len(chores))], *chores][:reps]
        times: dict[str, list[float]] = {
            "evidence": [],
            "bipartite, same terms": [],
            "bipartite in talos": [],
            "query analysis": [],
        }
        for q in qs:
            t = time.perf_counter()
            terms = ANALYZER.terms(q)
            qv = query_vector(idx, terms)
            times["query analysis"].append(time.perf_counter() - t)
            t = time.perf_counter()
            activate(idx, qv)
            times["evidence"].append(time.perf_counter() - t)
            ts = frozenset(terms)
            t = time.perf_counter()
            if ts:
                A.bipartite(proto, ts)
            times["bipartite, same terms"].append(time.perf_counter() - t)
            kw = keywords(q)
            t = time.perf_counter()
            if kw:
                A.bipartite(graph, kw)
            times["bipartite in talos"].append(time.perf_counter() - t)
        mem.close()
    med = {k: 1000 * statistics.median(v) for k, v in times.items()}
    p90 = {k: 1000 * float(np.quantile(v, 0.9)) for k, v in times.items()}
    console.print(
        f"make_home.py --sessions {sessions}: {idx.n:,} nodes, {len(idx.term):,} entries "
        f"(index built in {build:.1f} s, the analyzer over every text); {len(qs)} queries "
        f"(LoCoMo dev questions and the chores)"
    )
    for k in times:
        console.print(f"  {k}: median {med[k]:.2f} ms, p90 {p90[k]:.2f} ms")
    console.print(
        f"  ratio evidence / bipartite on the same terms: "
        f"{med['evidence'] / med['bipartite, same terms']:.2f}×"
    )


def _dev_questions(data: Path) -> list[tuple[str, str]]:
    out = []
    for p in pools(load_all(data), ["dev"]):
        out += [(p.set, q) for _o, q, _g in p.answerable]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("command", choices=["table", "sweep", "floor", "bodies", "invariants", "cost"])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--rerun", action="store_true", help="sweep: recompute every logged row")
    ap.add_argument("--sessions", type=int, default=30000, help="cost: sessions of the home")
    ap.add_argument("--reps", type=int, default=200, help="cost: queries timed")
    args = ap.parse_args(argv)
    console = Console(width=max(Console().width, 200))
    start = time.time()
    if args.command in ("table", "floor"):
        lab = prepare(args.data, args.limit)
        if not lab:
            print(f"no datasets under {args.data}", file=sys.stderr)
            return 1
        if args.command == "table":
            cmd_table(console, lab, args.bootstrap)
        else:
            cmd_floor(console, lab)
    elif args.command == "sweep":
        cmd_sweep(console, args.data, args.rerun)
    elif args.command == "bodies":
        cmd_bodies(console, args.data, args.sessions if args.sessions != 30000 else 0)
    elif args.command == "invariants":
        cmd_invariants(console)
    else:
        cmd_cost(console, args.data, args.sessions, args.reps)
    console.print(f"{time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
