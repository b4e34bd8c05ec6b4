#!/usr/bin/env python3
"""Honest baselines and block metrics (issue 15 item 7).

Every method is asked every answerable question of the verdict sets and a set of *unrelated*
queries, and judged on what its block delivers, beside Recall@5 of its ranking:

- methods: ``talos`` (``Memory.recall`` as it ships: its ``picked`` rows are the block, its
  ``explain`` the ranking; ``talos:MODEL``, or ``--model MODEL``, with that model, e.g.
  ``talos:evidence``); ``bm25`` / ``bm25-uni`` (bm25s over the analyzer of
  ``bench/analyzer.py``: NLTK stop words, Snowball stemming, CJK bigrams / + unigrams; (k1, b)
  tuned on dev, ``tune-bm25``); ``bm25-kw`` (the older baseline on design §4 keyword sets);
  ``fts5-porter``, ``fts5-trigram``, ``fts5-bigram`` (SQLite FTS5 ``bm25()``,
  ``bench/baselines.py``). A baseline's block is its top 5 (every matching document counts).
  A method named in :data:`PROTOTYPES` runs on the dev split only, so the test split stays
  clean for a verdict.
- sets: LoCoMo categories 1-4, the Chinese set (MADial zh dialogue + MemoryBank cn), MADial
  en (dialogue) as an extra. Unrelated queries of a pool: the questions of the other pools of
  the same data set and split (other LoCoMo conversations — the issue's definition —; other
  MADial users' dialogues, long unrelated queries; other MemoryBank users' probes), and the
  coding chores of ``bench/chores.py`` (Chinese for the Chinese pools — the issue's
  definition —, English for the English ones).
- block metrics (``bench/delivery.py``): R@5 of the ranking and of the block, ``kept`` (block
  / ranking), non-gold rows per block (answerable questions), the share of empty blocks for
  unrelated queries, the share of blocks with a skill body (talos only; these homes hold no
  skills, see ``body-rate``).

    python3 bench/relevance.py baselines --data ../shared/bench --split both --json rel.json
    python3 bench/relevance.py baselines --split both --model evidence --method talos \
        --method bm25
    python3 bench/relevance.py tune-bm25 --data ../shared/bench         # dev only
    python3 bench/relevance.py body-rate --data ../shared/bench --sessions 1000
    python3 bench/relevance.py block --data ../shared/bench --split dev --budget 2000 \
        --budget 1000 --budget 1500 --budget 3000   # what the block is worth (block_worth.py)

The data is read in place and never copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import block_worth as bw
import numpy as np
from analyzer import Analyzer
from baselines import BM25_PARAMS, BM25Terms, FTS5Ranker
from chores import CHORES_EN, CHORES_ZH
from datasets import DEFAULT_DATA, Dataset, Store, load_all
from delivery import (
    Block,
    CutDelivery,
    Delivery,
    RecallDelivery,
    Scored,
    block_metrics,
    bootstrap,
    summarise,
    top_k,
)
from rankers import BM25Ranker, TalosRanker
from rich import box
from rich.console import Console
from rich.table import Table

import talos.ranking.activation as A
from talos import Memory
from talos.ranking import hybrid

__all__ = [
    "BM25_PARAMS",
    "METHODS",
    "PROTOTYPES",
    "Pool",
    "bootstrap",
    "make_delivery",
    "pools",
    "run",
]

#: The report sets: label → (language, [(dataset, categories)]).
SETS: dict[str, tuple[str, list[tuple[str, list[str] | None]]]] = {
    "LoCoMo 1-4": ("en", [("locomo", None)]),
    "Chinese set": ("zh", [("madial-zh", ["context"]), ("memorybank-cn", ["probe"])]),
    "MADial en": ("en", [("madial-en", ["context"])]),
    # the dense leg's MADial target is the last user turn
    "MADial en last turn": ("en", [("madial-en", ["last-turn"])]),
}

METHODS = ("talos", "bm25", "bm25-uni", "bm25-kw", "fts5-porter", "fts5-trigram", "fts5-bigram")
#: Methods measured on the dev split only (:func:`run` refuses them a test pool): name a new
#: cut or ranker here while it is being chosen, so the test split stays clean for its verdict.
#: The research prototypes of issue 15 (``proto``, ``evidence``, ``contiguity`` and their
#: floors) are archived with the labs (``docs/benchmarks.md``).
PROTOTYPES: tuple[str, ...] = ()


@dataclass(slots=True)
class Pool:
    """One memory pool of a report set and split, with the queries asked of it.

    ``answerable``: ``(order, query, gold)``; ``unrelated``: ``(order, query, kind)`` with
    kind ``other`` (a question of another pool of the same data set and split: another LoCoMo
    conversation, another MADial user's dialogue, another MemoryBank user's probe) or
    ``chores``."""

    set: str
    lang: str
    split: str
    index: int
    store: Store
    dataset: str = ""
    answerable: list[tuple[int, str, list[str]]] = field(default_factory=list)
    unrelated: list[tuple[int, str, str]] = field(default_factory=list)


def pools(datasets: Sequence[Dataset], splits: Sequence[str], limit: int = 0) -> list[Pool]:
    """The pools of every report set found in ``datasets``, in a fixed order (module doc).

    ``limit``: at most this many answerable questions per set and split (0: all)."""
    by = {ds.name: ds for ds in datasets}
    out: list[Pool] = []
    for label, (lang, parts) in SETS.items():
        if not all(d in by for d, _ in parts):
            continue
        for split in splits:
            mine: dict[int, Pool] = {}
            n = 0
            for d, cats in parts:
                ds = by[d]
                want = cats or ds.union
                for store, q in ds.questions(split):
                    if q.category not in want or (limit and n >= limit):
                        continue
                    p = mine.get(id(store.items))
                    if p is None:
                        p = mine[id(store.items)] = Pool(label, lang, split, len(mine), store, d)
                    p.answerable.append((n, q.query, q.gold))
                    n += 1
            group = list(mine.values())
            chores = CHORES_ZH if lang == "zh" else CHORES_EN
            u = 0
            for p in group:
                for other in group:
                    if other is not p and other.dataset == p.dataset:
                        for _o, q, _g in other.answerable:
                            p.unrelated.append((u, q, "other"))
                            u += 1
                for q in chores:
                    p.unrelated.append((u, q, "chores"))
                    u += 1
            out += group
    return out


class _Rows:
    """A rows-only ranker (``rankers.py``) as a scored one (scores = -position)."""

    def __init__(self, ranker: Any) -> None:
        self.ranker = ranker

    def scored(self, query: str) -> Scored:
        rows = self.ranker.ranking(query)
        return Scored(rows, [-float(i) for i in range(len(rows))])


#: Where the ``+dense`` methods keep their vectors across runs and pools: passages keyed as
#: in a home's ``vectors.db`` (float16), query vectors (float32, as a recall uses them).
DENSE_CACHE = Path(tempfile.gettempdir()) / "talos-dense-bench"


class _QueryVectors:
    """The queries of an embedder seen as passages, so a :class:`talos.ranking.vectors.VectorCache`
    keeps them (model id ``…/query``)."""

    def __init__(self, base: Any) -> None:
        self.base = base
        self.dim = base.dim

    @property
    def model_id(self) -> str:
        return self.base.model_id + "/query"

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.base.queries(texts)


def dense_leg(home: Path) -> hybrid.Leg:
    """The dense leg of a bench home: talos's own, but its vectors in :data:`DENSE_CACHE` (one
    cache for every pool and run) and its query vectors cached too (a question is asked of
    every other pool as an unrelated query; a MADial context query takes 1-2 s to embed)."""
    from talos.home import resolve_paths
    from talos.ranking.dense import Embedder
    from talos.ranking.vectors import VectorCache

    class CachedQueries(Embedder):
        def __init__(self) -> None:
            super().__init__()
            self.cache = VectorCache(
                DENSE_CACHE / "queries.db", _QueryVectors(self), dtype="float32"
            )

        def query(self, text: str) -> np.ndarray:
            return self.cache.vectors([text])[0]

    DENSE_CACHE.mkdir(parents=True, exist_ok=True)
    embedder = CachedQueries()
    cache = VectorCache(DENSE_CACHE / "passages.db", embedder)
    return hybrid.Leg(resolve_paths(home), embedder=embedder, cache=cache)


def make_delivery(method: str, store: Store, lang: str, tmp: Path) -> Delivery:
    """The delivery of ``method`` for one pool (module docstring); baselines deliver their
    top 5. ``talos:MODEL+dense``: with the dense leg (:func:`dense_leg`), its vectors embedded
    first."""
    if method == "talos" or method.startswith("talos:"):
        model, plus, _ = (method.partition(":")[2] or A.DEFAULT_MODEL).partition("+dense")
        if model not in A.MODEL_NAMES:
            raise ValueError(f"unknown model {model!r}: choose one of {', '.join(A.MODEL_NAMES)}")
        # the ids of a row come from the home's nodes, whichever model ranks them
        ranker = TalosRanker(store, "evidence", tmp)
        leg: hybrid.Leg | bool = dense_leg(tmp / "home") if plus else False
        memory = Memory(tmp / "home", keep_fact=None, model=model, dense=leg)
        if plus:
            memory.embed()
        return RecallDelivery(memory, ranker._ids)
    if method in ("bm25", "bm25-uni"):
        uni = method == "bm25-uni"
        k1, b = BM25_PARAMS[(lang, uni)]
        return CutDelivery(BM25Terms(store, Analyzer(unigrams=uni), k1, b), top_k(5))
    if method == "bm25-kw":
        return CutDelivery(_Rows(BM25Ranker(store)), top_k(5))
    if method.startswith("fts5-"):
        return CutDelivery(FTS5Ranker(store, method[5:]), top_k(5))
    raise ValueError(f"unknown method {method!r}")


def _task(
    args: tuple[str, Pool],
) -> tuple[str, Pool, list[dict[str, float]], list[dict[str, float]]]:
    method, pool = args
    if os.environ.get("TALOS_BENCH_GATE"):  # the +dense methods' gate, swept on dev
        hybrid.GATE = float(os.environ["TALOS_BENCH_GATE"])
    with tempfile.TemporaryDirectory(prefix="talos-rel-") as tmp:
        d = make_delivery(method, pool.store, pool.lang, Path(tmp))
        ans = [block_metrics(d.block(q), gold) for _o, q, gold in pool.answerable]
        unr = []
        for _o, q, kind in pool.unrelated:
            m = block_metrics(d.block(q), None)
            m["other"] = float(kind == "other")
            unr.append(m)
        memory = getattr(d, "memory", None)
        if memory is not None:
            memory.close()
    return method, pool, ans, unr


def run(
    pool_list: Sequence[Pool], methods: Sequence[str], jobs: int = 1
) -> dict[tuple[str, str, str], tuple[list[dict[str, float]], list[dict[str, float]]]]:
    """``{(set, split, method): (answerable metrics, unrelated metrics)}`` in question order.

    Raises:
        ValueError: a prototype method asked of a test pool (prototypes are dev-only).
    """
    for m in methods:
        if m in PROTOTYPES and any(p.split != "dev" for p in pool_list):
            raise ValueError(f"{m} is a prototype: dev split only (the test split stays clean)")
    tasks = [(m, p) for m in methods for p in pool_list]
    out: dict[tuple[str, str, str], tuple[list[dict[str, float]], list[dict[str, float]]]] = {}
    parts: dict[tuple[str, str, str], list[tuple[Pool, list[Any], list[Any]]]] = {}
    if jobs <= 1:
        results = map(_task, tasks)
    else:
        ex = ProcessPoolExecutor(jobs)
        results = ex.map(_task, tasks)
    for method, pool, ans, unr in results:
        parts.setdefault((pool.set, pool.split, method), []).append((pool, ans, unr))
    for key, got in parts.items():
        a = sorted(
            (
                (o, m)
                for p, ans, _u in got
                for (o, _q, _g), m in zip(p.answerable, ans, strict=True)
            ),
            key=lambda x: x[0],
        )
        u = sorted(
            ((o, m) for p, _a, unr in got for (o, _q, _k), m in zip(p.unrelated, unr, strict=True)),
            key=lambda x: x[0],
        )
        out[key] = ([m for _o, m in a], [m for _o, m in u])
    if jobs > 1:
        ex.shutdown()
    return out


def report(
    res: dict[tuple[str, str, str], tuple[list[dict[str, float]], list[dict[str, float]]]],
    methods: Sequence[str],
    splits: Sequence[str],
    console: Console,
    boot: int = 1000,
    base: str = "bm25",
) -> list[dict[str, Any]]:
    """Print one table per split (module docstring) and return its rows as dicts."""
    rows_out: list[dict[str, Any]] = []
    for split in splits:
        t = Table(
            title=f"Baselines and block metrics — {split} split (R@5 with 95% bootstrap CI; "
            f"Δ = paired difference to {base})",
            box=box.MARKDOWN,
            title_justify="left",
        )
        for c in (
            "set",
            "method",
            "n",
            "R@5",
            f"Δ vs {base}",
            "block R@5",
            "kept",
            "non-gold/block",
            "empty: other pools",
            "empty: chores",
            "body",
        ):
            t.add_column(c, justify="left" if c in ("set", "method") else "right")
        for label in SETS:
            if not any((label, split, m) in res for m in methods):
                continue
            b = res.get((label, split, base))
            for m in methods:
                if (label, split, m) not in res:
                    continue
                ans, unr = res[(label, split, m)]
                s = summarise(ans, unr)
                r5 = np.array([x["R@5"] for x in ans])
                lo, hi = bootstrap(r5, boot)
                other = [x for x in unr if x.get("other")]
                chores = [x for x in unr if not x.get("other")]
                row: dict[str, Any] = {
                    "set": label,
                    "split": split,
                    "method": m,
                    **s,
                    "R@5 ci": (lo, hi),
                }
                row["empty other"] = summarise([], other)["empty unrelated"]
                row["empty chores"] = summarise([], chores)["empty unrelated"]
                delta = ""
                if b is not None and m != base:
                    d = r5 - np.array([x["R@5"] for x in b[0]])
                    dlo, dhi = bootstrap(d, boot)
                    row["delta"] = (float(d.mean()), dlo, dhi)
                    delta = f"{d.mean():+.3f} [{dlo:+.3f}, {dhi:+.3f}]"
                rows_out.append(row)

                def pct(x: float) -> str:
                    return "-" if x != x else f"{100 * x:.0f}%"

                t.add_row(
                    label,
                    m,
                    str(int(s["n"])),
                    f"{s['R@5']:.3f} [{lo:.3f}, {hi:.3f}]",
                    delta,
                    f"{s['block R@5']:.3f}",
                    pct(s["kept"]),
                    f"{s['non-gold/block']:.2f}",
                    pct(row["empty other"]),
                    pct(row["empty chores"]),
                    pct(s["body"]),
                )
            t.add_section()
        console.print(t)
        console.print()
    return rows_out


# -- tune-bm25 -------------------------------------------------------------------------------

K1S = (0.1, 0.25, 0.5, 0.9, 1.2, 1.5, 2.0, 3.0)
BS = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)


def _tune_task(
    args: tuple[Pool, bool, float, float],
) -> tuple[str, bool, float, float, list[float]]:
    pool, uni, k1, b = args
    r = BM25Terms(pool.store, Analyzer(unigrams=uni), k1, b)
    got = [
        block_metrics(Block(r.scored(q).rows, []), gold)["R@5"] for _o, q, gold in pool.answerable
    ]
    return pool.set, uni, k1, b, got


def tune_bm25(pool_list: Sequence[Pool], console: Console, jobs: int = 1) -> dict[Any, Any]:
    """Grid (k1 × b) of dev R@5 per set and analyzer; print it, return the best per language."""
    dev = [p for p in pool_list if p.split == "dev" and p.set in ("LoCoMo 1-4", "Chinese set")]
    tasks = [(p, uni, k1, b) for p in dev for uni in (False, True) for k1 in K1S for b in BS]
    acc: dict[tuple[str, bool, float, float], list[float]] = {}
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as ex:
            results = list(ex.map(_tune_task, tasks, chunksize=4))
    else:
        results = list(map(_tune_task, tasks))
    for s, uni, k1, b, got in results:
        acc.setdefault((s, uni, k1, b), []).extend(got)
    best: dict[tuple[str, bool], tuple[float, float, float]] = {}
    for s in ("LoCoMo 1-4", "Chinese set"):
        for uni in (False, True):
            t = Table(
                title=f"BM25 dev R@5 — {s}, {'bigrams+unigrams' if uni else 'bigrams'} "
                "(rows k1, columns b)",
                box=box.MARKDOWN,
                title_justify="left",
                min_width=90,
            )
            t.add_column("k1 \\ b")
            for b in BS:
                t.add_column(f"{b:g}", justify="right")
            top = max(
                (
                    (sum(v) / len(v), k1, b)
                    for (s2, u2, k1, b), v in acc.items()
                    if s2 == s and u2 == uni
                ),
                key=lambda x: (round(x[0], 12), -abs(x[1] - 1.2), -abs(x[2] - 0.75)),
            )
            best[(s, uni)] = top
            for k1 in K1S:
                cells = []
                for b in BS:
                    v = acc[(s, uni, k1, b)]
                    mark = " ←" if (k1, b) == top[1:] else ""
                    cells.append(f"{sum(v) / len(v):.3f}{mark}")
                t.add_row(f"{k1:g}", *cells)
            console.print(t)
            console.print(f"→ {s}, unigrams={uni}: k1={top[1]:g} b={top[2]:g} (R@5 {top[0]:.3f})\n")
    return best


# -- body-rate -------------------------------------------------------------------------------


def body_rate(
    data: Path,
    sessions: int,
    queries: dict[str, list[str]],
    console: Console,
    extra: dict[str, Callable[[Memory, str], bool]] | None = None,
) -> dict[str, Any]:
    """Share of recalls carrying a skill body on a ``make_home.py`` home of ``sessions``
    sessions (its 60 skills are stitched from unrelated utterances: no query here asks for
    one), per query set; ``extra``: other gates ``(memory, query) -> body?`` measured beside
    today's."""
    out: dict[str, Any] = {"sessions": sessions, "sets": {}}
    with tempfile.TemporaryDirectory(prefix="talos-home-") as tmp:
        home = Path(tmp) / "home"
        subprocess.run(
            [sys.executable, str(data / "make_home.py"), str(home), "--sessions", str(sessions)],
            check=True,
            capture_output=True,
        )
        mem = Memory(home)
        t = Table(
            title=f"Body rate on a make_home.py home ({sessions} sessions, 60 skills)",
            box=box.MARKDOWN,
            title_justify="left",
        )
        for c in ("queries", "n", "talos (today)", *(extra or {})):
            t.add_column(c, justify="left" if c == "queries" else "right")
        for name, qs in queries.items():
            today_ = [mem.recall(q).bodies > 0 for q in qs]
            cells = [f"{100 * sum(today_) / len(qs):.0f}%"]
            row = {"n": len(qs), "talos": sum(today_) / len(qs)}
            for gname, gate in (extra or {}).items():
                got = [gate(mem, q) for q in qs]
                row[gname] = sum(got) / len(qs)
                cells.append(f"{100 * row[gname]:.0f}%")
            out["sets"][name] = row
            t.add_row(name, str(len(qs)), *cells)
        mem.close()
    console.print(t)
    return out


def dev_questions(datasets: Sequence[Dataset], label: str, limit: int = 0) -> list[str]:
    """The dev questions of a report set (for ``body-rate``)."""
    _lang, parts = SETS[label]
    by = {ds.name: ds for ds in datasets}
    out = []
    for d, cats in parts:
        if d not in by:
            continue
        want = cats or by[d].union
        out += [q.query for _s, q in by[d].questions("dev") if q.category in want]
    return out[:limit] if limit else out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("command", choices=["baselines", "tune-bm25", "body-rate", "block"])
    ap.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder laid out like ../shared/bench"
    )
    ap.add_argument(
        "--method",
        action="append",
        help=f"repeatable (default: {', '.join(METHODS)}; talos:MODEL, talos:MODEL+dense; "
        "block: talos, bm25, fts5)",
    )
    ap.add_argument(
        "--model",
        choices=A.MODEL_NAMES,
        help="the talos method's model (its label becomes talos:MODEL; default: the default)",
    )
    ap.add_argument("--split", choices=["dev", "test", "both"], default="dev")
    ap.add_argument("--limit", type=int, default=0, help="at most N questions per set and split")
    ap.add_argument("--jobs", type=int, help="worker processes (default 1; block: one per CPU)")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--sessions", type=int, default=1000, help="body-rate: sessions of the home")
    ap.add_argument("--json", type=Path, help="write the numbers here as JSON")
    ap.add_argument(
        "--budget",
        type=int,
        action="append",
        help="block: the budget in characters, repeatable (the first is the table's, several "
        "print the proxy curve; default 2000)",
    )
    ap.add_argument("--cap", type=int, default=50, help="block: k of talos's recall (default 50)")
    ap.add_argument(
        "--baseline-dates",
        action="store_true",
        help="block: baseline lines carry their date, '- [fact] (DATE) TEXT' (when talos's "
        "rows show theirs)",
    )
    args = ap.parse_args(argv)
    if args.command == "block":
        for b in args.budget or []:
            if b < 200:
                ap.error(f"--budget {b} is too small: a block needs at least 200 characters")
        if args.cap < 1:
            ap.error("--cap must be at least 1")
    jobs = args.jobs if args.jobs is not None else (0 if args.command == "block" else 1)
    console = Console(width=max(Console().width, 200))
    datasets = load_all(args.data)
    if not datasets:
        print(f"no datasets under {args.data}", file=sys.stderr)
        return 1
    start = time.time()
    splits = ["dev", "test"] if args.split == "both" else [args.split]
    payload: Any
    if args.command == "tune-bm25":
        best = tune_bm25(pools(datasets, ["dev"], args.limit), console, jobs)
        payload = {f"{s}|{u}": v for (s, u), v in best.items()}
    elif args.command == "body-rate":
        queries = {
            "English chores": list(CHORES_EN),
            "Chinese chores": list(CHORES_ZH),
            "LoCoMo dev questions": dev_questions(datasets, "LoCoMo 1-4", args.limit),
            "Chinese set dev questions": dev_questions(datasets, "Chinese set", args.limit),
        }
        payload = body_rate(args.data, args.sessions, queries, console)
    elif args.command == "block":
        methods = args.method or list(bw.METHODS)
        if args.model:
            methods = [f"talos:{args.model}" if m == "talos" else m for m in methods]
        budgets = args.budget or [bw.DEFAULT_BUDGET]
        chosen = [p for p in pools(datasets, splits, args.limit) if p.set in bw.BLOCK_SETS]
        try:
            res = bw.run(
                chosen, methods, budgets, jobs=jobs, cap=args.cap, dated=args.baseline_dates
            )
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        payload = bw.report(res, methods, splits, budgets, console, args.bootstrap)
    else:
        methods = args.method or list(METHODS)
        if args.model:
            methods = [f"talos:{args.model}" if m == "talos" else m for m in methods]
        res = run(pools(datasets, splits, args.limit), methods, jobs)
        payload = report(res, methods, splits, console, args.bootstrap)
    console.print(f"{time.time() - start:.0f} s; data: {args.data}; jobs: {jobs or os.cpu_count()}")
    if args.json:
        args.json.write_text(
            json.dumps(payload, indent=1, ensure_ascii=False, default=str), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
