#!/usr/bin/env python3
"""Dev-split research for issue 15 items 1-3: analyzer, relevance floor, skill body gate.

Reads only the dev split (``bench/datasets.py``); nothing here loads a test question, so the
test split stays clean for the final verdict. Prototypes are built from ``talos.graph``
read-only (``bench/proto.py``): no change to ``talos/``.

- ``stemmers``: PyStemmer vs snowballstemmer on every word of the data: identical output?
  speed (median of 5 passes over the distinct words, cache-free).
- ``analyzers``: ``bipartite`` fed the terms of each analyzer variant (stop list, stemming,
  CJK unigrams, NFKC, CJK stop words) vs SPEC §4 keywords: dev Recall@5 on LoCoMo 1-4, the
  Chinese set and MADial en; then ``HUB_POWER`` × ``SPREAD_DECAY`` for the chosen analyzer.
- ``ranking``: seed variants under ``bipartite``'s spreading (hub seeds ÷ a pivoted node
  length; BM25 scores as seeds) — where the gap to the tuned BM25 comes from.
- ``floor``: the top score of answerable vs unrelated dev queries (quantiles, AUC) for several
  score scales (raw activation, seed, divided by the query's best possible seed mass), and
  the block metrics of absolute × relative floors (``bench/delivery.py``).
- ``bodies``: the body gate on the labelled set of ``bench/bodies.py``: today's rule, and
  seed-evidence floors for the best skill.

    python3 bench/relevance_lab.py stemmers  --data ../shared/bench
    python3 bench/relevance_lab.py analyzers --data ../shared/bench --jobs 2
    python3 bench/relevance_lab.py floor     --data ../shared/bench
    python3 bench/relevance_lab.py bodies
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from analyzer import STOP_LISTS, Analyzer, stemmer, words
from datasets import DEFAULT_DATA, load_all
from delivery import (
    Block,
    Scored,
    auc,
    block_metrics,
    floor_cut,
    summarise,
    top_k,
    two_part_floor,
)
from proto import ProtoRanker
from relevance import SETS, Pool, pools
from rich import box
from rich.console import Console
from rich.table import Table

import talos.activation as A
import talos.graph as G

#: The analyzer the research recommends (``analyzers``): see bench/README "Relevance".
RECOMMENDED = Analyzer(stop="nltk", stem="pystemmer", unigrams=True)

#: The relevance floor the research recommends (``floor``): ``two_part_floor(5, fraction,
#: equivalents, relative)``; see bench/README "Relevance".
RECOMMENDED_FLOOR = (0.2, 1.7, 0.6)

_POOLS: list[Pool] = []


def _init(data: Path, limit: int) -> None:
    _POOLS[:] = pools(load_all(data), ["dev"], limit)


def _score_pools(
    analyzer: Analyzer | None,
    hub: float = A.HUB_POWER,
    decay: float = A.SPREAD_DECAY,
    sets: Sequence[str] | None = None,
) -> dict[str, dict[str, list[tuple[Scored, list[str] | None, str]]]]:
    """``{set: {"answerable"|"unrelated": [(scored, gold or None, kind)]}}`` over the dev pools."""
    A.HUB_POWER, A.SPREAD_DECAY = hub, decay
    out: dict[str, dict[str, list[tuple[Scored, list[str] | None, str]]]] = {}
    for p in _POOLS:
        if sets and p.set not in sets:
            continue
        r = ProtoRanker(p.store, analyzer)
        d = out.setdefault(p.set, {"answerable": [], "unrelated": []})
        d["answerable"] += [(r.scored(q), gold, p.dataset) for _o, q, gold in p.answerable]
        for _o, q, kind in p.unrelated:
            got = r.scored(q)
            got.info["madial pool"] = float(p.dataset.startswith("madial"))
            d["unrelated"].append((got, None, kind))
    return out


def _r5(args: tuple[str, Analyzer | None, float, float]) -> tuple[str, dict[str, dict[str, float]]]:
    name, analyzer, hub, decay = args
    A.HUB_POWER, A.SPREAD_DECAY = hub, decay
    out: dict[str, list[dict[str, float]]] = {}
    for p in _POOLS:
        r = ProtoRanker(p.store, analyzer)
        for _o, q, gold in p.answerable:
            s = r.scored(q)
            m = block_metrics(Block(s.rows, []), gold)
            rr = next((1 / (i + 1) for i, row in enumerate(s.rows) if set(gold) & set(row)), 0.0)
            r10 = len({i for row in s.rows[:10] for i in row} & set(gold)) / len(gold)
            out.setdefault(p.set, []).append({"R@5": m["R@5"], "R@10": r10, "MRR": rr})
    means = {s: {k: sum(x[k] for x in ms) / len(ms) for k in ms[0]} for s, ms in out.items() if ms}
    return name, means


def cmd_stemmers(data: Path, console: Console) -> None:
    """PyStemmer vs snowballstemmer: identical output and speed on every word of the data."""
    texts: list[str] = []
    for ds in load_all(data):
        for s in ds.stores:
            texts += [it.text for it in s.items]
            texts += [q.query for q in s.questions]
    ws = words(texts)
    distinct = sorted(set(ws))
    import Stemmer
    from snowballstemmer.english_stemmer import EnglishStemmer

    py = Stemmer.Stemmer("english")
    py.maxCacheSize = 0
    # snowballstemmer.stemmer() hands out PyStemmer when it is installed: take its own
    # pure-Python class instead
    sb = EnglishStemmer()
    diff = [w for w in distinct if py.stemWord(w) != sb.stemWord(w)]
    times: dict[str, list[float]] = {"pystemmer": [], "snowballstemmer": []}
    for _ in range(5):
        t = time.perf_counter()
        py.stemWords(distinct)
        times["pystemmer"].append(time.perf_counter() - t)
        t = time.perf_counter()
        sb.stemWords(distinct)
        times["snowballstemmer"].append(time.perf_counter() - t)
    t = Table(
        title=f"Snowball English stemmers on {len(ws):,} words ({len(distinct):,} distinct)",
        box=box.MARKDOWN,
        title_justify="left",
    )
    for c in ("stemmer", "median over the distinct words", "per word"):
        t.add_column(c, justify="left" if c == "stemmer" else "right")
    for name, ts in times.items():
        m = statistics.median(ts)
        t.add_row(name, f"{1000 * m:.1f} ms", f"{1e9 * m / len(distinct):.0f} ns")
    console.print(t)
    ratio = statistics.median(times["snowballstemmer"]) / statistics.median(times["pystemmer"])
    console.print(
        f"different stems: {len(diff)} of {len(distinct):,} distinct words "
        f"{diff[:10]}; snowballstemmer / PyStemmer time: {ratio:.1f}×\n"
    )
    if "stemmer" in sys.modules:  # keep the cached wrapper honest
        stemmer.cache_clear()


def variants() -> list[tuple[str, Analyzer | None]]:
    """The analyzer variants ``analyzers`` compares (SPEC §4 keywords first)."""
    out: list[tuple[str, Analyzer | None]] = [("SPEC §4 keywords (today)", None)]
    for s in STOP_LISTS:
        out.append((f"stop={s}, snowball, bigrams", Analyzer(stop=s)))
    out += [
        ("stop=nltk, no stemming, bigrams", Analyzer(stem="none")),
        ("stop=nltk, snowball, bigrams+unigrams", Analyzer(unigrams=True)),
        (
            "stop=nltk, snowball, bigrams+unigrams, no CJK stop",
            Analyzer(unigrams=True, cjk_stop=False),
        ),
        ("stop=nltk, snowball, bigrams, no NFKC", Analyzer(nfkc=False)),
        ("stop=nltk, snowball, bigrams, 1-char tokens", Analyzer(min_len=1)),
        ("stop=sklearn, snowball, bigrams+unigrams", Analyzer(stop="sklearn", unigrams=True)),
    ]
    return out


def cmd_analyzers(console: Console, jobs: int, data: Path, limit: int) -> None:
    """Dev R@5 of ``bipartite`` per analyzer variant, then HUB_POWER × SPREAD_DECAY."""
    vs = variants()
    tasks = [(name, a, A.HUB_POWER, A.SPREAD_DECAY) for name, a in vs]
    with ProcessPoolExecutor(jobs, initializer=_init, initargs=(data, limit)) as ex:
        res = dict(ex.map(_r5, tasks))
        t = Table(
            title="bipartite on dev, fed each analyzer's terms: R@5 (R@10, MRR)",
            box=box.MARKDOWN,
            title_justify="left",
        )
        t.add_column("terms")
        for s in SETS:
            t.add_column(s, justify="right")
        t.add_column("mean LoCoMo, Chinese", justify="right")
        for name, _a in vs:
            m = res[name]
            cells = [f"{m[s]['R@5']:.3f} ({m[s]['R@10']:.3f}, {m[s]['MRR']:.3f})" for s in SETS]
            obj = (m["LoCoMo 1-4"]["R@5"] + m["Chinese set"]["R@5"]) / 2
            t.add_row(name, *cells, f"{obj:.3f}")
        console.print(t)
        grid = [
            (f"{h}|{d}", RECOMMENDED, h, d)
            for h in (0.25, 0.5, 0.75, 1.0)
            for d in (0.0, 0.25, 0.5, 0.75)
        ]
        res2 = dict(ex.map(_r5, grid))
    t = Table(
        title=f"bipartite on dev with {RECOMMENDED.label}: R@5 LoCoMo / Chinese / MADial en "
        "(rows HUB_POWER, columns SPREAD_DECAY)",
        box=box.MARKDOWN,
        title_justify="left",
    )
    t.add_column("HUB_POWER \\ SPREAD_DECAY")
    for d in (0.0, 0.25, 0.5, 0.75):
        t.add_column(f"{d:g}", justify="right")
    for h in (0.25, 0.5, 0.75, 1.0):
        cells = []
        for d in (0.0, 0.25, 0.5, 0.75):
            m = res2[f"{h}|{d}"]
            cells.append(" / ".join(f"{m[s]['R@5']:.3f}" for s in SETS))
        t.add_row(f"{h:g}", *cells)
    console.print(t)


# -- ranking: seed variants -------------------------------------------------------------------

_HUB_SEEDS = A._hub_seed_array


def pivot_seeds(b: float) -> Any:
    """Hub seeds divided by a pivoted node length ``1 - b + b · degree / mean degree`` (BM25's
    length normalisation, on the node's term count)."""

    def seeds(graph: G.Graph, q: frozenset[str]) -> Any:
        a = _HUB_SEEDS(graph, q)
        if a is None or b == 0:
            return a
        deg = graph.arrays()["degree"]
        return a / (1 - b + b * deg / deg.mean())

    return seeds


def bm25_seeds(analyzer: Analyzer, k1: float, b: float, tf: bool = True, idf: str = "log") -> Any:
    """BM25 scores of the nodes (term counts of each node's text under ``analyzer``, Lucene
    IDF) as the seeds, scaled so the best is 1.0; spreading then runs as in ``bipartite``.
    ``tf=False``: every count is 1; ``idf="hub"``: ``df ** -0.5`` instead of the log IDF (the
    ablations that show which part of BM25 the hub seeds lack)."""
    import numpy as np

    def seeds(graph: G.Graph, q: frozenset[str]) -> Any:
        st = graph.cache.get("bm25")
        if st is None:
            from collections import Counter

            counts = [Counter(analyzer.terms(n.text)) for n in graph.nodes]
            lens = np.array([sum(c.values()) for c in counts], dtype=float)
            post: dict[str, list[tuple[int, int]]] = {}
            for i, c in enumerate(counts):
                for t, f in c.items():
                    post.setdefault(t, []).append((i, f))
            arrays = {
                t: (np.array([i for i, _f in v]), np.array([f for _i, f in v], dtype=float))
                for t, v in post.items()
            }
            st = graph.cache["bm25"] = (lens, float(lens.mean()), arrays)
        lens, avg, arrays = st
        n = len(lens)
        acc = np.zeros(n)
        for t in sorted(q):
            got = arrays.get(t)
            if got is None:
                continue
            idx, f = got
            if not tf:
                f = np.ones_like(f)
            df = len(idx)
            w = np.log(1 + (n - df + 0.5) / (df + 0.5)) if idf == "log" else df**-0.5
            acc[idx] += w * f * (k1 + 1) / (f + k1 * (1 - b + b * lens[idx] / avg))
        top = acc.max() if n else 0.0
        return acc / top if top > 0 else None

    return seeds


def _ranking_variant(args: tuple[str, str, float, float]) -> tuple[str, dict[str, float]]:
    name, seeds, p1, decay = args
    flags = dict(x.split("=") for x in seeds.split(",")[1:])
    from relevance import BM25_PARAMS

    A.SPREAD_DECAY = decay
    out: dict[str, list[float]] = {}
    for p in _POOLS:
        if seeds == "hub":
            A._hub_seed_array = pivot_seeds(p1)
        else:
            k1, b = BM25_PARAMS[(p.lang, True)]
            b = float(flags.get("b", b))
            A._hub_seed_array = bm25_seeds(
                RECOMMENDED, k1, b, flags.get("tf") != "0", flags.get("idf", "log")
            )
        r = ProtoRanker(p.store, RECOMMENDED)
        for _o, q, gold in p.answerable:
            m = block_metrics(Block(r.scored(q).rows, []), gold)
            out.setdefault(p.set, []).append(m["R@5"])
    A._hub_seed_array = _HUB_SEEDS
    return name, {s: sum(v) / len(v) for s, v in out.items()}


def cmd_ranking(console: Console, jobs: int, data: Path, limit: int) -> None:
    """Dev R@5 of seed variants under ``bipartite``'s spreading (recommended analyzer)."""
    grid = [
        ("hub seeds (today's), SPREAD_DECAY 0.5", "hub", 0.0, 0.5),
        ("hub seeds, no spreading", "hub", 0.0, 0.0),
        ("hub seeds ÷ pivoted length, b 0.25", "hub", 0.25, 0.5),
        ("hub seeds ÷ pivoted length, b 0.5", "hub", 0.5, 0.5),
        ("hub seeds ÷ pivoted length, b 0.5, no spreading", "hub", 0.5, 0.0),
        ("BM25 seeds (tuned k1, b), no spreading", "bm25", 0.0, 0.0),
        ("BM25 seeds, SPREAD_DECAY 0.1", "bm25", 0.0, 0.1),
        ("BM25 seeds, SPREAD_DECAY 0.25", "bm25", 0.0, 0.25),
        ("BM25 seeds, SPREAD_DECAY 0.5", "bm25", 0.0, 0.5),
        ("BM25 seeds, binary tf, no spreading", "bm25,tf=0", 0.0, 0.0),
        ("BM25 seeds, b = 0, no spreading", "bm25,b=0", 0.0, 0.0),
        ("BM25 seeds, IDF = df^-0.5, no spreading", "bm25,idf=hub", 0.0, 0.0),
        (
            "BM25 seeds, binary tf, b = 0, df^-0.5 (= hub seeds), no spreading",
            "bm25,tf=0,b=0,idf=hub",
            0.0,
            0.0,
        ),
    ]
    with ProcessPoolExecutor(jobs, initializer=_init, initargs=(data, limit)) as ex:
        res = dict(ex.map(_ranking_variant, grid))
    t = Table(
        title=f"Seeds and spreading on dev ({RECOMMENDED.label}): R@5",
        box=box.MARKDOWN,
        title_justify="left",
    )
    t.add_column("seeds")
    for s in SETS:
        t.add_column(s, justify="right")
    for name, *_rest in grid:
        t.add_row(name, *(f"{res[name][s]:.3f}" for s in SETS))
    console.print(t)


# -- floor -----------------------------------------------------------------------------------


def _top(s: Scored, feature: str) -> float:
    """A query-level feature of a ranking for the floor (0 when nothing is ranked)."""
    if not s.rows:
        return 0.0
    q = s.info.get("qmass", 0.0)
    if feature == "activation":
        return s.scores[0]
    if feature == "seed":
        return max(s.seeds) if s.seeds else 0.0
    if feature == "evidence = seed × qmass":
        return (max(s.seeds) if s.seeds else 0.0) * q
    if feature == "activation × qmass":
        return s.scores[0] * q
    if feature == "activation / mass":
        return s.scores[0] * s.info.get("inv_mass", 0.0)
    if feature == "activation × known":
        return s.scores[0] * s.info.get("known", 0.0)
    if feature == "lead top1 / top5":
        return s.scores[0] / s.scores[min(4, len(s.scores) - 1)]
    raise ValueError(feature)


FEATURES = (
    "activation",
    "seed",
    "activation / mass",
    "evidence = seed × qmass",
    "activation × qmass",
    "activation × known",
    "lead top1 / top5",
)


def _quantiles(xs: list[float]) -> str:
    if len(xs) < 2:
        return "-"
    qs = statistics.quantiles(xs, n=20, method="inclusive")
    return " / ".join(f"{v:.3f}" for v in (qs[0], qs[4], qs[9], qs[14], qs[18]))


def oracle(answerable: list[tuple[Scored, list[str] | None, str]]) -> float:
    """Non-gold rows per block of the best prefix cut that keeps all of the ranking's R@5:
    each block ends at its last gold row of the top 5 (no gold there: an empty block)."""
    total = 0
    for s, gold, _k in answerable:
        want = set(gold or [])
        last = max((i + 1 for i, row in enumerate(s.rows[:5]) if want & set(row)), default=0)
        total += sum(1 for row in s.rows[:last] if not want & set(row))
    return total / len(answerable) if answerable else float("nan")


def cmd_floor(console: Console, data: Path, limit: int, analyzer: Analyzer | None) -> None:
    """Top-score distributions, AUC, and the block metrics of a floor grid (dev)."""
    _init(data, limit)
    label = analyzer.label if analyzer else "SPEC §4 keywords"
    res = _score_pools(analyzer)
    from baselines import BM25Terms
    from relevance import BM25_PARAMS

    bm: dict[str, tuple[list[float], list[float]]] = {}
    for p in _POOLS:
        k1, b = BM25_PARAMS[(p.lang, p.lang == "zh")]
        r = BM25Terms(p.store, Analyzer(unigrams=p.lang == "zh"), k1, b)
        got = bm.setdefault(p.set, ([], []))
        got[0].extend((r.scored(q).scores or [0.0])[0] for _o, q, _g in p.answerable)
        got[1].extend((r.scored(q).scores or [0.0])[0] for _o, q, _k in p.unrelated)
    t = Table(
        title=f"Top-row features of answerable vs unrelated dev queries ({label}); "
        "quantiles 5 / 25 / 50 / 75 / 95 %; pooled = LoCoMo + Chinese set (one floor "
        "for both)",
        box=box.MARKDOWN,
        title_justify="left",
    )
    for c in ("set", "feature", "answerable", "unrelated", "AUC"):
        t.add_column(c, justify="left" if c in ("set", "feature") else "right")
    pooled: dict[str, tuple[list[float], list[float]]] = {}
    for name, d in res.items():
        for f in FEATURES:
            pos = [_top(s, f) for s, _g, _k in d["answerable"]]
            neg = [_top(s, f) for s, _g, _k in d["unrelated"]]
            if name in ("LoCoMo 1-4", "Chinese set"):
                pp = pooled.setdefault(f, ([], []))
                pp[0].extend(pos)
                pp[1].extend(neg)
            t.add_row(name, f, _quantiles(pos), _quantiles(neg), f"{auc(pos, neg):.3f}")
        pos, neg = bm.get(name, ([], []))
        t.add_row(
            name, "tuned BM25 top score", _quantiles(pos), _quantiles(neg), f"{auc(pos, neg):.3f}"
        )
        t.add_section()
    for f, (pos, neg) in pooled.items():
        t.add_row("pooled", f, _quantiles(pos), _quantiles(neg), f"{auc(pos, neg):.3f}")
    console.print(t)
    console.print(
        "Oracle (best prefix cut keeping all of the ranking's R@5): non-gold rows per "
        "block " + ", ".join(f"{n} {oracle(d['answerable']):.2f}" for n, d in res.items()) + "\n"
    )

    def summ(d: dict[str, Any], cut: Any) -> dict[str, float]:
        out = summarise(
            [block_metrics(_blk(x, cut), g) for x, g, _ in d["answerable"]],
            [block_metrics(_blk(x, cut), None) for x, _g, _ in d["unrelated"]],
        )
        for kind in ("other", "chores"):
            ms = [block_metrics(_blk(x, cut), None) for x, _g, k in d["unrelated"] if k == kind]
            out[kind] = summarise([], ms)["empty unrelated"]
        return out

    def cell(x: dict[str, float]) -> str:
        return (
            f"{x['non-gold/block']:.2f} / {100 * x['kept']:.0f}% / "
            f"{100 * x['other']:.0f}% · {100 * x['chores']:.0f}%"
        )

    # γ-scan: which power of the query's term count makes one floor fit every set
    t = Table(
        title="AUC of the top row's activation × n^γ (n = query terms some node holds, "
        "or all query terms), answerable vs unrelated",
        box=box.MARKDOWN,
        title_justify="left",
    )
    for c in ("n", "γ", *res, "pooled LoCoMo + Chinese"):
        t.add_column(c, justify="left" if c == "n" else "right")
    for key in ("known", "terms"):
        for g in (0.0, 0.25, 0.5, 0.6, 0.75, 1.0):
            cells, pp, nn = [], [], []
            for name, d in res.items():
                pos = [
                    (s.scores[0] * s.info[key] ** g) if s.rows else 0.0
                    for s, _g, _k in d["answerable"]
                ]
                neg = [
                    (s.scores[0] * s.info[key] ** g) if s.rows else 0.0
                    for s, _g, _k in d["unrelated"]
                ]
                cells.append(f"{auc(pos, neg):.3f}")
                if name != "MADial en":
                    pp += pos
                    nn += neg
            t.add_row(key, f"{g:g}", *cells, f"{auc(pp, nn):.3f}")
    console.print(t)

    # long queries: MADial's whole dialogues, answerable vs another user's dialogue
    t = Table(
        title="Whole-dialogue queries (MADial): AUC of top-row features, answerable vs "
        "another user's dialogue asked of the same pool",
        box=box.MARKDOWN,
        title_justify="left",
    )
    for c in (
        "set",
        "n answerable",
        "n unrelated",
        "activation",
        "activation × known",
        "matched terms",
    ):
        t.add_column(c, justify="left" if c == "set" else "right")
    for name, d in res.items():
        pos = [s for s, _g, ds in d["answerable"] if s.rows and ds.startswith("madial")]
        neg = [
            s for s, _g, k in d["unrelated"] if s.rows and k == "other" and s.info["madial pool"]
        ]
        if not pos or not neg:
            continue
        cells = [
            f"{auc([f(s) for s in pos], [f(s) for s in neg]):.3f}"
            for f in (
                lambda s: s.scores[0],
                lambda s: s.scores[0] * s.info["known"],
                lambda s: s.info.get("top_matched", 0.0),
            )
        ]
        t.add_row(name, str(len(pos)), str(len(neg)), *cells)
    console.print(t)

    def known_pow(g: float) -> Any:
        return lambda s: s.info.get("known", 0.0) ** g

    scales: list[tuple[str, Any, tuple[float, ...]]] = [
        ("activation", None, (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)),
        ("activation × known^0.75", known_pow(0.75), (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2)),
    ]
    names = list(res)
    for title, factor, absolutes in scales:
        t = Table(
            title=f"Floor on {title} ({label}; every delivered row clears it, relative 0 "
            "and 0.7 × the best): non-gold rows per block / block R@5 kept of the "
            "ranking's / empty blocks for unrelated queries (other pools · chores)",
            box=box.MARKDOWN,
            title_justify="left",
        )
        t.add_column("absolute")
        for r in (0.0, 0.7):
            for n in names:
                t.add_column(f"{n}, rel {r:g}", justify="right")
        for a in absolutes:
            cut0, cut7 = floor_cut(5, a, 0.0, factor), floor_cut(5, a, 0.7, factor)
            t.add_row(f"{a:g}", *(cell(summ(res[n], c)) for c in (cut0, cut7) for n in names))
        console.print(t)

    t = Table(
        title=f"Two-part floor ({label}): a row is evidence when activation >= fraction "
        "OR activation × known >= equivalents, and >= relative × the best",
        box=box.MARKDOWN,
        title_justify="left",
    )
    for c in ("fraction", "equivalents", "relative", *names):
        t.add_column(c, justify="right")
    for fr in (0.2, 0.25, 0.3):
        for eq in (1.5, 1.7, 2.0, 2.5):
            for r in (0.0, 0.6, 0.8):
                cut = two_part_floor(5, fr, eq, r)
                t.add_row(f"{fr:g}", f"{eq:g}", f"{r:g}", *(cell(summ(res[n], cut)) for n in names))
    console.print(t)
    today = {name: summ(d, top_k(5, 0.005)) for name, d in res.items()}
    console.print(
        "today's cut (top 5 above 0.005): " + "; ".join(f"{n}: {cell(s)}" for n, s in today.items())
    )


def _blk(s: Scored, cut: Any) -> Block:
    return Block(s.rows, [s.rows[i] for i in cut(s)])


# -- bodies ----------------------------------------------------------------------------------


class ProtoHome:
    """The labelled bodies home as a prototype graph: facts and skills (the records of
    ``Memory.nodes()``) keyed by the analyzer's terms of their matching text (a skill's first
    1200 characters, not-for clauses dropped, SPEC §3.2), ranked by ``bipartite``."""

    def __init__(self, home: Path, analyzer: Analyzer | None) -> None:
        from proto import proto_graph, query_info

        from talos import Memory, keywords
        from talos.text import drop_not_for

        with Memory(home) as mem:
            nodes = [n for n in mem.nodes() if n.kind in ("fact", "skill")]
        texts = [drop_not_for(n.body) if n.kind == "skill" else n.text for n in nodes]
        names = [[n.name or n.text] for n in nodes]
        self.terms = analyzer or keywords
        self.graph, self.ids = proto_graph(texts, names, self.terms, [n.kind for n in nodes])
        self.info = query_info

    def ranked(
        self, query: str
    ) -> tuple[list[tuple[float, int]], dict[int, float], dict[str, float]]:
        """``(ranking, seeds, query info)`` of ``query``."""
        q = frozenset(self.terms(query))
        info = self.info(self.graph, q)
        if not q:
            return [], {}, info
        act = A.bipartite(self.graph, q)
        return A.rank(act, 0.0), act.seeds, info


def proto_gate(
    home: ProtoHome,
    lead: float = 1.2,
    floor: float = 0.225,
    seed_floor: float = 0.0,
    equivalents: float = 0.0,
    k: int = 5,
    evidence: ProtoHome | None = None,
) -> Any:
    """The body gate on the prototype's ranking: today's rule (the best skill leads the
    second by ``lead``×, or alone scores ``floor``; both on rounded scores; it is among the top
    ``k``), and the best skill's *own* seed evidence: seed >= ``seed_floor`` (a fraction of the
    query's hub weight) and seed × known query terms >= ``equivalents``.

    ``evidence``: take the seed and the known-term count from this home's terms instead (the
    same files under another analyzer, e.g. CJK bigrams only, so that single shared characters
    are no evidence), for the skill the ranking chose."""

    def gate(query: str) -> str | None:
        ranked, seeds, info = home.ranked(query)
        skills = [(round(a, 2), i) for a, i in ranked if home.graph.nodes[i].kind == "skill"]
        if not skills:
            return None
        best = skills[0][1]
        ok = skills[0][0] >= floor if len(skills) == 1 else skills[0][0] >= lead * skills[1][0]
        seed = seeds.get(best, 0.0)
        if evidence is not None:
            _r, ev_seeds, info = evidence.ranked(query)
            name = home.ids[best][0]
            at = next((j for j, ids in enumerate(evidence.ids) if name in ids), None)
            seed = ev_seeds.get(at, 0.0) if at is not None else 0.0
        ok = ok and seed >= seed_floor and seed * info["known"] >= equivalents
        ok = ok and best in [i for _a, i in ranked[:k]]
        return home.ids[best][0] if ok else None

    return gate


def cmd_bodies(console: Console) -> None:
    """Today's gate, and the prototype gates on the labelled set (``bench/bodies.py``)."""
    import tempfile

    import bodies

    from talos import Memory

    rows = []
    with tempfile.TemporaryDirectory(prefix="talos-bodies-") as tmp:
        home = bodies.copy_home(Path(tmp))
        with Memory(home) as mem:
            rows.append(
                ("today (bipartite, SPEC §4 keywords)", bodies.score(bodies.today_gate(mem)))
            )
        for label, analyzer in (("SPEC §4 keywords", None), (RECOMMENDED.label, RECOMMENDED)):
            ph = ProtoHome(home, analyzer)
            rows.append((f"prototype, {label}, today's rule", bodies.score(proto_gate(ph))))
            tune = [x for i, x in enumerate(bodies.LABELS) if bodies.half(i) == "tune"]
            for name, key, grid in (
                ("seed >=", "seed_floor", [round(0.05 * i, 2) for i in range(13)]),
                ("seed × known >=", "equivalents", [round(0.25 * i, 2) for i in range(13)]),
            ):
                scored = [
                    (bodies.score(proto_gate(ph, **{key: v}), tune)["all"], -v, v) for v in grid
                ]
                best = max(scored)[2]
                console.print(
                    f"{label}, {name}: tune-half decided right "
                    + ", ".join(f"{v:g} {100 * x:.0f}%" for x, _m, v in scored)
                )
                rows.append(
                    (
                        f"prototype, {label}, + {name} {best:g} (chosen on tune)",
                        bodies.score(proto_gate(ph, **{key: best})),
                    )
                )
        ph = ProtoHome(home, RECOMMENDED)
        ev = ProtoHome(home, EVIDENCE)
        tune = [x for i, x in enumerate(bodies.LABELS) if bodies.half(i) == "tune"]
        grid = [round(0.25 * i, 2) for i in range(13)]
        scored = [
            (bodies.score(proto_gate(ph, equivalents=v, evidence=ev), tune)["all"], -v, v)
            for v in grid
        ]
        best = max(scored)[2]
        console.print(
            f"{RECOMMENDED.label}, seed × known over {EVIDENCE.label} terms >=: "
            "tune-half decided right " + ", ".join(f"{v:g} {100 * x:.0f}%" for x, _m, v in scored)
        )
        rows.append(
            (
                f"prototype, {RECOMMENDED.label}, + seed × known over CJK bigrams only "
                f">= {best:g} (chosen on tune)",
                bodies.score(proto_gate(ph, equivalents=best, evidence=ev)),
            )
        )
        rows.append(
            (
                f"recommended: + seed × known over CJK bigrams only >= {RECOMMENDED_EQUIVALENTS:g}",
                bodies.score(proto_gate(ph, equivalents=RECOMMENDED_EQUIVALENTS, evidence=ev)),
            )
        )
        misses = [
            f"{q!r}: got {g}, want {w}"
            for q, w in bodies.LABELS
            if (g := proto_gate(ph, equivalents=RECOMMENDED_EQUIVALENTS, evidence=ev)(q)) != w
        ]
    console.print(bodies.table("Body gate on bench/bodies_home (40 labelled queries)", rows))
    console.print(
        f"wrong with {RECOMMENDED.label}, seed × known over {EVIDENCE.label} >= "
        f"{RECOMMENDED_EQUIVALENTS:g}:"
    )
    for m in misses:
        console.print(f"  {m}")


#: The body gate's seed-evidence floor the research recommends (``bodies``): the best
#: skill's own seed × the known query terms, computed over :data:`EVIDENCE`'s terms (CJK
#: bigrams only: with unigrams, shared single characters 这 个 一 把 added up to a body for
#: 31% of the Chinese chores on a make_home.py home). The tune half is right at every value
#: from 0.5 to 3.0; 0.5 gave 20% of the English chores a body on that home, 1.0 missed two
#: right bodies ("帮我整理一下本周的周报": 3 of 10 bigrams, 0.84).
RECOMMENDED_EQUIVALENTS = 0.75
#: The analyzer the body gate's evidence is computed with.
EVIDENCE = Analyzer(stop="nltk", stem="pystemmer", unigrams=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("command", choices=["stemmers", "analyzers", "ranking", "floor", "bodies"])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--keywords", action="store_true", help="floor: SPEC §4 keywords instead")
    args = ap.parse_args(argv)
    console = Console(width=max(Console().width, 220))
    start = time.time()
    if args.command == "stemmers":
        cmd_stemmers(args.data, console)
    elif args.command == "analyzers":
        cmd_analyzers(console, args.jobs, args.data, args.limit)
    elif args.command == "ranking":
        cmd_ranking(console, args.jobs, args.data, args.limit)
    elif args.command == "floor":
        cmd_floor(console, args.data, args.limit, None if args.keywords else RECOMMENDED)
    else:
        cmd_bodies(console)
    console.print(f"{time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
