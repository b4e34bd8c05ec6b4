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
from delivery import Block, Scored, auc, block_metrics, floor_cut, summarise, top_k
from proto import ProtoRanker
from relevance import SETS, Pool, pools
from rich import box
from rich.console import Console
from rich.table import Table

import talos.graph as G

#: The analyzer the research recommends (``analyzers``): see bench/README "Relevance".
RECOMMENDED = Analyzer(stop="nltk", stem="pystemmer", unigrams=True)

_POOLS: list[Pool] = []


def _init(data: Path, limit: int) -> None:
    _POOLS[:] = pools(load_all(data), ["dev"], limit)


def _score_pools(
    analyzer: Analyzer | None, hub: float = G.HUB_POWER, decay: float = G.SPREAD_DECAY,
    sets: Sequence[str] | None = None,
) -> dict[str, dict[str, list[tuple[Scored, list[str] | None, str]]]]:
    """``{set: {"answerable"|"unrelated": [(scored, gold or None, kind)]}}`` over the dev pools."""
    G.HUB_POWER, G.SPREAD_DECAY = hub, decay
    out: dict[str, dict[str, list[tuple[Scored, list[str] | None, str]]]] = {}
    for p in _POOLS:
        if sets and p.set not in sets:
            continue
        r = ProtoRanker(p.store, analyzer)
        d = out.setdefault(p.set, {"answerable": [], "unrelated": []})
        d["answerable"] += [(r.scored(q), gold, "") for _o, q, gold in p.answerable]
        d["unrelated"] += [(r.scored(q), None, kind) for _o, q, kind in p.unrelated]
    return out


def _r5(args: tuple[str, Analyzer | None, float, float]) -> tuple[str, dict[str, dict[str, float]]]:
    name, analyzer, hub, decay = args
    G.HUB_POWER, G.SPREAD_DECAY = hub, decay
    out: dict[str, list[dict[str, float]]] = {}
    for p in _POOLS:
        r = ProtoRanker(p.store, analyzer)
        for _o, q, gold in p.answerable:
            s = r.scored(q)
            m = block_metrics(Block(s.rows, []), gold)
            rr = next((1 / (i + 1) for i, row in enumerate(s.rows) if set(gold) & set(row)), 0.0)
            r10 = len({i for row in s.rows[:10] for i in row} & set(gold)) / len(gold)
            out.setdefault(p.set, []).append({"R@5": m["R@5"], "R@10": r10, "MRR": rr})
    means = {
        s: {k: sum(x[k] for x in ms) / len(ms) for k in ms[0]} for s, ms in out.items() if ms
    }
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
    from snowballstemmer.english_stemmer import EnglishStemmer
    import Stemmer

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
    t = Table(title=f"Snowball English stemmers on {len(ws):,} words ({len(distinct):,} distinct)",
              box=box.MARKDOWN, title_justify="left")
    for c in ("stemmer", "median over the distinct words", "per word"):
        t.add_column(c, justify="left" if c == "stemmer" else "right")
    for name, ts in times.items():
        m = statistics.median(ts)
        t.add_row(name, f"{1000 * m:.1f} ms", f"{1e9 * m / len(distinct):.0f} ns")
    console.print(t)
    ratio = statistics.median(times["snowballstemmer"]) / statistics.median(times["pystemmer"])
    console.print(f"different stems: {len(diff)} of {len(distinct):,} distinct words "
                  f"{diff[:10]}; snowballstemmer / PyStemmer time: {ratio:.1f}×\n")
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
        ("stop=nltk, snowball, bigrams+unigrams, no CJK stop", Analyzer(unigrams=True,
                                                                         cjk_stop=False)),
        ("stop=nltk, snowball, bigrams, no NFKC", Analyzer(nfkc=False)),
        ("stop=nltk, snowball, bigrams, 1-char tokens", Analyzer(min_len=1)),
        ("stop=sklearn, snowball, bigrams+unigrams", Analyzer(stop="sklearn", unigrams=True)),
    ]
    return out


def cmd_analyzers(console: Console, jobs: int, data: Path, limit: int) -> None:
    """Dev R@5 of ``bipartite`` per analyzer variant, then HUB_POWER × SPREAD_DECAY."""
    vs = variants()
    tasks = [(name, a, G.HUB_POWER, G.SPREAD_DECAY) for name, a in vs]
    with ProcessPoolExecutor(jobs, initializer=_init, initargs=(data, limit)) as ex:
        res = dict(ex.map(_r5, tasks))
        t = Table(title="bipartite on dev, fed each analyzer's terms: R@5 (R@10, MRR)",
                  box=box.MARKDOWN, title_justify="left")
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
        grid = [(f"{h}|{d}", RECOMMENDED, h, d) for h in (0.25, 0.5, 0.75, 1.0)
                for d in (0.0, 0.25, 0.5, 0.75)]
        res2 = dict(ex.map(_r5, grid))
    t = Table(title=f"bipartite on dev with {RECOMMENDED.label}: R@5 LoCoMo / Chinese / MADial en "
              "(rows HUB_POWER, columns SPREAD_DECAY)", box=box.MARKDOWN, title_justify="left")
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


# -- floor -----------------------------------------------------------------------------------

#: Score scales the floor may compare: name → function of (scored, row) → float.
SCALES = {
    "activation": lambda s, i: s.scores[i],
    "seed": lambda s, i: s.seeds[i] if s.seeds else 0.0,
    "activation / mass": lambda s, i: s.scores[i] / s.info["mass"] if s.info.get("mass") else 0.0,
}


def _quantiles(xs: list[float]) -> str:
    if not xs:
        return "-"
    qs = statistics.quantiles(xs, n=20, method="inclusive")
    return " / ".join(f"{v:.3f}" for v in (qs[0], qs[4], qs[9], qs[14], qs[18]))


def cmd_floor(console: Console, data: Path, limit: int, analyzer: Analyzer | None) -> None:
    """Top-score distributions, AUC, and the block metrics of a floor grid (dev)."""
    _init(data, limit)
    label = analyzer.label if analyzer else "SPEC §4 keywords"
    res = _score_pools(analyzer)
    t = Table(title=f"Top score of answerable vs unrelated dev queries ({label}); quantiles "
              "5 / 25 / 50 / 75 / 95 %", box=box.MARKDOWN, title_justify="left")
    for c in ("set", "scale", "answerable", "unrelated", "AUC"):
        t.add_column(c, justify="left" if c in ("set", "scale") else "right")

    def top(s: Scored, scale: str) -> float:
        if not s.rows:
            return 0.0
        if scale == "seed":
            return max(s.seeds) if s.seeds else 0.0
        return SCALES[scale](s, 0)

    for name, d in res.items():
        for scale in SCALES:
            pos = [top(s, scale) for s, _g, _k in d["answerable"]]
            neg = [top(s, scale) for s, _g, _k in d["unrelated"]]
            t.add_row(name, scale, _quantiles(pos), _quantiles(neg), f"{auc(pos, neg):.3f}")
        t.add_section()
    console.print(t)

    today = {name: summarise([block_metrics(_blk(s, top_k(5, 0.005)), g) for s, g, _ in d["answerable"]],
                             [block_metrics(_blk(s, top_k(5, 0.005)), None) for s, _g, _ in d["unrelated"]])
             for name, d in res.items()}
    for norm in (None, "mass"):
        t = Table(title=f"Floors on dev ({label}, scale: activation{' / mass' if norm else ''}): "
                  "non-gold rows per block / block kept of ranking R@5 / empty unrelated — "
                  "LoCoMo | Chinese", box=box.MARKDOWN, title_justify="left")
        t.add_column("absolute \\ relative")
        rels = (0.0, 0.3, 0.5, 0.7)
        for r in rels:
            t.add_column(f"{r:g}", justify="right")
        for a in (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5):
            cells = []
            for r in rels:
                cut = floor_cut(5, a, r, norm)
                parts = []
                for name in ("LoCoMo 1-4", "Chinese set"):
                    d = res.get(name)
                    if d is None:
                        continue
                    s = summarise([block_metrics(_blk(x, cut), g) for x, g, _ in d["answerable"]],
                                  [block_metrics(_blk(x, cut), None) for x, _g, _ in d["unrelated"]])
                    parts.append(f"{s['non-gold/block']:.2f} / {100 * s['kept']:.0f}% / "
                                 f"{100 * s['empty unrelated']:.0f}%")
                cells.append(" | ".join(parts))
            t.add_row(f"{a:g}", *cells)
        console.print(t)
    console.print("today's cut (top 5 above 0.005): " + "; ".join(
        f"{n}: {s['non-gold/block']:.2f} non-gold, kept {100 * s['kept']:.0f}%, empty unrelated "
        f"{100 * s['empty unrelated']:.0f}%" for n, s in today.items()))


def _blk(s: Scored, cut: Any) -> Block:
    return Block(s.rows, [s.rows[i] for i in cut(s)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("command", choices=["stemmers", "analyzers", "floor", "bodies"])
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
    elif args.command == "floor":
        cmd_floor(console, args.data, args.limit, None if args.keywords else RECOMMENDED)
    else:
        import bodies

        bodies.main([])
    console.print(f"{time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
