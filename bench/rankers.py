"""Rankers and metrics shared by ``bench/locomo.py`` and ``bench/quality.py``.

A *ranker* is built once per store (memory pool) and turns a query into a ranking: a list of
rows, each row the list of memory ids it stands for (a talos node merged from duplicates stands
for all its members, design §5.1), best first. Ties break by memory order everywhere.

- :class:`TalosRanker`: a real talos home in a temporary folder (every memory a fact line tagged
  ``import`` with its date and ``ref=<id>``), asked through :class:`talos.Memory`; a row
  stands for the ids of all its merged members (and of lines identical to them). ``explain``
  gives the top k (what a user sees); :meth:`TalosRanker.ranking` gives the full ranking
  through the same graph, model and :func:`talos.ranking.activation.rank` that ``explain`` uses,
  without building the per-row edge detail (``tests/test_bench.py`` checks both agree).
- :class:`BM25Ranker`: ``bm25s`` (Lucene BM25, k1=1.5, b=0.75) over design §4 keywords of each
  memory, one document per memory (no merging). Only documents scoring > 0 are ranked.
- :class:`OverlapRanker`: plain keyword overlap, the seed score ``|q ∩ d| / |q|`` with no
  spreading, one document per memory; only documents sharing a keyword are ranked.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from datasets import Dataset, Store, write_home
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from talos import Memory, keywords
from talos.ranking.activation import MODELS, rank

__all__ = [
    "BASELINES",
    "KS",
    "BM25Ranker",
    "OverlapRanker",
    "Ranker",
    "Result",
    "TalosRanker",
    "evaluate",
    "make_ranker",
    "metrics",
]

#: Baselines that are not talos activation models.
BASELINES = ("bm25", "overlap")
#: Cut-offs of Recall@k.
KS = (1, 5, 10)


class Ranker(Protocol):
    def ranking(self, query: str) -> list[list[str]]: ...

    def top(self, query: str, k: int) -> list[list[str]]: ...


class TalosRanker:
    """A talos home for ``store`` (in ``tmp``), ranked by activation model ``model``.

    The home is built once; :class:`Memory` caches the graph while the file is unchanged, so
    thousands of questions cost one graph build. ``keep_fact=None``: the protocol makes every
    turn a memory (the default §8.2 filter drops none of these data sets' lines anyway).
    """

    def __init__(self, store: Store, model: str, tmp: Path) -> None:
        home = write_home(store, tmp / "home")
        self.memory = Memory(home, keep_fact=None, model=model)
        self.model = MODELS[model]
        # Identical lines are one memory and keep one member (design §5.1: "delivered once"),
        # so a node stands for every id whose text equals a member's (MADial zh has 3 such).
        by_text: dict[str, list[str]] = {}
        for it in store.items:
            by_text.setdefault(it.text, []).append(it.id)
        self._same = {it.id: by_text[it.text] for it in store.items}

    def _ids(self, node) -> list[str]:  # type: ignore[no-untyped-def]
        out: list[str] = []
        for m in node.family():
            ref = m.fields.get("ref", "")
            for i in self._same.get(ref, [ref]):
                if i not in out:
                    out.append(i)
        return out

    def top(self, query: str, k: int) -> list[list[str]]:
        """Rows of ``Memory.explain(query, k)`` as id lists."""
        return [self._ids(r.node) for r in self.memory.explain(query, k=k)]

    def ranked(self, query: str) -> list[tuple[float, int]]:
        """The full ranking as ``(activation, node index)`` pairs, best first (the indices are
        positions in ``self.memory.graph().nodes``)."""
        return rank(self.memory.activation(query)[1], self.model.thresh)

    def ids(self, index: int) -> list[str]:
        """The memory ids node ``index`` of the graph stands for (its family, identical lines)."""
        return self._ids(self.memory.graph().nodes[index])

    def ranking(self, query: str) -> list[list[str]]:
        """The full ranking (every node above the model's threshold) as id lists."""
        graph = self.memory.graph()
        return [self._ids(graph.nodes[i]) for _, i in self.ranked(query)]


class BM25Ranker:
    """BM25 (``bm25s``) on design §4 keywords, one document per memory."""

    def __init__(self, store: Store) -> None:
        import bm25s

        self.ids = [it.id for it in store.items]
        self.bm25 = bm25s.BM25()
        self.bm25.index([sorted(keywords(it.text)) for it in store.items], show_progress=False)

    def ranking(self, query: str) -> list[list[str]]:
        scores = self.bm25.get_scores(sorted(keywords(query)))
        order = sorted(range(len(self.ids)), key=lambda i: -scores[i])
        return [[self.ids[i]] for i in order if scores[i] > 0]

    def top(self, query: str, k: int) -> list[list[str]]:
        return self.ranking(query)[:k]


class OverlapRanker:
    """Seed score only: ``|kw(q) ∩ kw(d)| / |kw(q)|`` (design §5.3 seeds, no spreading)."""

    def __init__(self, store: Store) -> None:
        self.ids = [it.id for it in store.items]
        self.kws = [keywords(it.text) for it in store.items]

    def ranking(self, query: str) -> list[list[str]]:
        q = keywords(query)
        scores = [len(q & d) for d in self.kws]
        order = sorted(range(len(self.ids)), key=lambda i: -scores[i])
        return [[self.ids[i]] for i in order if scores[i] > 0]

    def top(self, query: str, k: int) -> list[list[str]]:
        return self.ranking(query)[:k]


def make_ranker(store: Store, method: str, tmp: Path | None = None) -> Ranker:
    """A ranker for ``method``: ``bm25``, ``overlap``, or a name in
    :data:`talos.ranking.activation.MODELS`."""
    if method == "bm25":
        return BM25Ranker(store)
    if method == "overlap":
        return OverlapRanker(store)
    if method not in MODELS:
        raise ValueError(f"unknown method {method!r}: choose bm25, overlap or {', '.join(MODELS)}")
    return TalosRanker(store, method, tmp or Path(tempfile.mkdtemp(prefix="talos-bench-")))


def metrics(rows: list[list[str]], gold: list[str], ks: tuple[int, ...] = KS) -> dict[str, float]:
    """Recall@k (found gold ids in the top k rows / number of gold ids) and the reciprocal rank
    of the first row holding a gold id (0 when none is ranked)."""
    want = set(gold)
    out: dict[str, float] = {}
    for k in ks:
        found = {i for row in rows[:k] for i in row} & want
        out[f"R@{k}"] = len(found) / len(want)
    rr = 0.0
    for pos, row in enumerate(rows, 1):
        if want.intersection(row):
            rr = 1.0 / pos
            break
    out["MRR"] = rr
    return out


# -- running many questions ------------------------------------------------------------------


@dataclass(slots=True)
class Result:
    """The metrics of one question: its dataset, split, category and ``metrics()`` dict."""

    dataset: str
    split: str
    category: str
    values: dict[str, float]


@dataclass(slots=True)
class _Task:
    dataset: str
    pool: int
    store: Store
    method: str
    questions: list[tuple[int, str, str, list[str], str]]  # (order, split, query, gold, category)
    via_explain: bool


_RANKERS: dict[tuple[str, int, str], Ranker] = {}
_TMP: list[tempfile.TemporaryDirectory[str]] = []


def _run_task(task: _Task) -> list[tuple[int, Result]]:
    """Answer the task's questions in this process, reusing a ranker built for its pool."""
    key = (task.dataset, task.pool, task.method)
    ranker = _RANKERS.get(key)
    if ranker is None:
        tmp = tempfile.TemporaryDirectory(prefix="talos-bench-")
        _TMP.append(tmp)
        ranker = _RANKERS[key] = make_ranker(task.store, task.method, Path(tmp.name))
    out = []
    for order, split, query, gold, cat in task.questions:
        rows = ranker.top(query, max(KS)) if task.via_explain else ranker.ranking(query)
        out.append((order, Result(task.dataset, split, cat, metrics(rows, gold))))
    return out


def evaluate(
    datasets: Sequence[Dataset],
    methods: Sequence[str],
    *,
    jobs: int = 0,
    limit: int = 0,
    splits: Sequence[str] = ("dev", "test"),
    via_explain: bool = False,
    chunk: int = 40,
    label: str = "asking",
) -> dict[tuple[str, str], list[Result]]:
    """Ask every question of ``datasets`` (in ``splits``) with every method.

    Args:
        jobs: worker processes (0: one per CPU). limit: at most this many questions per
            dataset and split (0: all), the first ones in file order. via_explain: rank talos
            models with ``Memory.explain(query, k=10)`` (MRR then only sees the top 10).
        chunk: questions per task; a pool's home is built once per worker process.

    Returns:
        ``{(dataset, method): [Result, ...]}`` in question order (deterministic for any
        ``jobs``).
    """
    tasks: list[_Task] = []
    for ds in datasets:
        pools: dict[int, tuple[int, Store, list[tuple[int, str, str, list[str], str]]]] = {}
        taken: dict[str, int] = {}
        for n, (store, q) in enumerate(ds.questions()):
            if store.split not in splits:
                continue
            if limit and taken.get(store.split, 0) >= limit:
                continue
            taken[store.split] = taken.get(store.split, 0) + 1
            p = pools.setdefault(id(store.items), (len(pools), store, []))
            p[2].append((n, store.split, q.query, q.gold, q.category))
        for method in methods:
            for pool, store, qs in pools.values():
                for i in range(0, len(qs), chunk):
                    tasks.append(
                        _Task(ds.name, pool, store, method, qs[i : i + chunk], via_explain)
                    )
    # Slow tasks (talos models on big pools) first, so the workers finish together.
    tasks.sort(key=lambda t: -(len(t.store.items) * (t.method not in BASELINES) * len(t.questions)))
    total = sum(len(t.questions) for t in tasks)
    results: dict[tuple[str, str], list[tuple[int, Result]]] = {}
    jobs = jobs or os.cpu_count() or 1
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as progress:
        bar = progress.add_task(label, total=total)

        def done(task: _Task, out: list[tuple[int, Result]]) -> None:
            results.setdefault((task.dataset, task.method), []).extend(out)
            progress.advance(bar, len(task.questions))

        if jobs == 1:
            for t in tasks:
                done(t, _run_task(t))
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = {pool.submit(_run_task, t): t for t in tasks}
                for f in as_completed(futures):
                    done(futures[f], f.result())
    return {key: [r for _, r in sorted(rs, key=lambda x: x[0])] for key, rs in results.items()}
