"""What the block is worth: how much gold evidence the delivered block holds at a budget.

Recall@k judges a ranking; an agent reads the *block*. This module asks every method for its
block at a budget in characters (design §6.1 rule 6: filled in rank order up to about 2,000
characters, ``k`` only a cap) and measures the block itself, beside the ranking:

- ``talos``: ``Memory.recall(query, k=CAP, budget=B)`` as it ships (its ``picked`` rows, the
  length of its ``text``), and ``Memory.explain(query, k=10)`` for the ranking. Nothing here
  reads selection internals: whatever cut ``talos/`` applies is measured as it ships.
- ``bm25`` (tuned BM25 over the analyzer, ``baselines.BM25_PARAMS``) and ``fts5`` (SQLite FTS5
  ``bm25()``: ``porter`` for English, ``bigram`` for Chinese, the better FTS5 of each language
  in ``docs/benchmarks.md``; ``fts5-porter`` / ``fts5-trigram`` / ``fts5-bigram`` name one): their
  ranking's rows rendered as ``- [fact] TEXT`` lines under talos's own heading line, in rank
  order, until the next line would pass the budget (:func:`fill_to_budget`): the comparison is
  at the same budget, heading included.

Per answerable question (:func:`answer_metrics`): the block's **gold recall** (gold ids in the
block / gold ids), whether it holds **any** gold id, its size in characters and rows, and
Recall@5 / Recall@10 of the ranking. Per unrelated query (another pool's question, a chore of
``bench/chores.py``, as ``relevance.pools`` defines them): whether the block is empty, asked
the way the hooks ask (``Memory.recall(..., automatic=True)``: the query gate rules automatic
injection only; an answerable question is asked as a person asks, design §6.1 rule 5).
:func:`summarise` turns them into the table's numbers; :func:`run` asks every pool in worker
processes with a progress bar; :func:`report` prints the table and the proxy curve (gold
recall against median size over several budgets). The command is ``relevance.py block``.
"""

from __future__ import annotations

import math
import os
import statistics
import tempfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from analyzer import Analyzer
from baselines import BM25_PARAMS, BM25Terms, FTS5Ranker
from datasets import Store
from delivery import ScoredRanker, bootstrap
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from talos import Memory
from talos.render import MIN_ROW, labels

__all__ = [
    "BLOCK_SETS",
    "CAP",
    "CURVE",
    "DEFAULT_BUDGET",
    "METHODS",
    "Asked",
    "FilledBlocks",
    "TalosBlocks",
    "answer_metrics",
    "fact_line",
    "fill_to_budget",
    "make_engine",
    "p90",
    "report",
    "run",
    "summarise",
]

#: The budget an agent can afford on every turn (design §6.1 rule 6: "about 2,000").
DEFAULT_BUDGET = 2000
#: The budgets of the proxy curve (gold recall against the block's median size).
CURVE = (1000, 1500, 2000, 3000)
#: Rows asked of ``Memory.recall``: a cap far above what a budget of 3,000 holds (LoCoMo turns
#: are about 120 characters), so the budget, not ``k``, decides the block.
CAP = 50
#: The report sets of ``relevance.SETS`` this table covers (MADial en by its context query).
BLOCK_SETS = ("LoCoMo 1-4", "Chinese set", "MADial en")
#: Methods of the table (``fts5-*`` name one tokenizer; ``talos:MODEL`` one model).
METHODS = ("talos", "bm25", "fts5")


def fact_line(text: str, lang: str = "en", date: str = "") -> str:
    """A baseline's block line: ``- [fact] TEXT`` (``- [事实] TEXT`` in Chinese), talos's fact
    label (design §6.1 step 3); ``date``: ``- [fact] (DATE) TEXT`` when the rows of talos's block
    show their dates, so both pay the same characters for them."""
    t = labels(lang)
    return f"- [{t['fact']}] " + (f"({date}) " if date else "") + text


def fill_to_budget(lines: Sequence[str], budget: int | None, lang: str = "en") -> tuple[str, int]:
    """The block of ``lines`` (rank order) within ``budget`` characters: talos's heading line
    (:func:`talos.render.labels`), then one line per row until the next would pass the budget
    (heading and newlines counted, as ``Memory.recall`` counts them). When not even the first
    line fits, it is cut (ending in ``…``) to the longest that fits, as talos cuts its first
    row, or the block is empty when less than :data:`talos.render.MIN_ROW` characters of it
    would be left.

    Args:
        lines: the rows' lines, best first. budget: most characters (``None``: every line).
        lang: ``en`` or ``zh`` (the heading's language).

    Returns:
        ``(text, n)``: the block ("" when empty) and how many of ``lines`` it holds (a cut
        first line counts 1).
    """
    if not lines:
        return "", 0
    heading = labels(lang)["heading"]
    if budget is None:
        return heading + "\n" + "\n".join(lines), len(lines)
    used, n = len(heading), 0
    for line in lines:
        if used + 1 + len(line) > budget:
            break
        used += 1 + len(line)
        n += 1
    if n:
        return heading + "\n" + "\n".join(lines[:n]), n
    room = budget - len(heading) - 1 - 1  # the newline and the cut mark
    if room - len(fact_line("", lang)) < MIN_ROW:
        return "", 0
    return heading + "\n" + lines[0][:room] + "…", 1


@dataclass(slots=True)
class Asked:
    """One query asked of one method: ``ranking`` (its top 10 rows, each the memory ids it
    stands for) and ``blocks`` (budget → ``(rows, size)``: the delivered rows' ids in block
    order and the block's length in characters, 0 when empty)."""

    ranking: list[list[str]]
    blocks: dict[int, tuple[list[list[str]], int]] = field(default_factory=dict)


class TalosBlocks:
    """talos's block for one pool: a home in ``tmp`` (``datasets.write_home``), asked through
    ``Memory.recall(query, k=cap, budget=B)`` and ``Memory.explain(query, k=10)``.

    Args:
        store: the pool. tmp: a folder for the home. lang: the block's language (``en``,
            ``zh``). cap: ``k`` of the recall. model: a talos model name (``None``: the
            default).
    """

    def __init__(
        self, store: Store, tmp: Path, lang: str = "en", cap: int = CAP, model: str | None = None
    ) -> None:
        from rankers import TalosRanker

        # TalosRanker writes the home and maps a node to the ids it stands for (merged members,
        # identical lines); its own Memory is not used to recall
        self._ids = TalosRanker(store, "evidence", tmp)._ids
        extra = {"model": model} if model else {}
        self.memory = Memory(tmp / "home", keep_fact=None, lang=lang, **extra)
        self.cap = cap

    def ask(self, query: str, budgets: Sequence[int], automatic: bool = False) -> Asked:
        """The top 10 of ``explain`` and ``recall``'s block at each budget (each recall writes
        a trace line and usage counts in the home, as every recall does). ``automatic``: the
        hooks' route, where the query gate may empty the block (an unrelated prompt); asked
        (``talos recall``, MCP), an ask sharing a content word is never empty."""
        out = Asked([self._ids(r.node) for r in self.memory.explain(query, k=10)])
        for b in budgets:
            got = self.memory.recall(query, k=self.cap, budget=b, automatic=automatic)
            out.blocks[b] = ([self._ids(r.node) for r in got.picked], len(got.text))
        return out

    def close(self) -> None:
        self.memory.close()


class FilledBlocks:
    """A baseline's block for one pool: its ranking's rows as :func:`fact_line` lines, filled
    to each budget by :func:`fill_to_budget`.

    Args:
        ranker: a :class:`delivery.ScoredRanker` of the pool (one document per memory).
        store: the pool (the rows' texts and dates). lang: the heading's language. dated:
            lines carry the memory's date (:func:`fact_line`).
    """

    def __init__(
        self, ranker: ScoredRanker, store: Store, lang: str = "en", dated: bool = False
    ) -> None:
        self.ranker = ranker
        self.lang = lang
        self.line = {
            it.id: fact_line(it.text, lang, it.date if dated else "") for it in store.items
        }

    def ask(self, query: str, budgets: Sequence[int], automatic: bool = False) -> Asked:
        """The ranking's top 10 and the block at each budget (``automatic``: no gate here)."""
        rows = self.ranker.scored(query).rows
        out = Asked(rows[:10])
        # a budget of B characters holds fewer than B / 2 lines (each is "\n- [x] " and text)
        lines = [self.line[r[0]] for r in rows[: max(budgets, default=0) // 2 + 1]]
        for b in budgets:
            text, n = fill_to_budget(lines, b, self.lang)
            out.blocks[b] = (rows[:n], len(text))
        return out

    def close(self) -> None:
        pass


def make_engine(
    method: str, store: Store, lang: str, tmp: Path, cap: int = CAP, dated: bool = False
) -> TalosBlocks | FilledBlocks:
    """The block source of ``method`` (module docstring) for one pool.

    Raises:
        ValueError: an unknown method.
    """
    if method == "talos" or method.startswith("talos:"):
        return TalosBlocks(store, tmp, lang, cap, method.partition(":")[2] or None)
    if method == "bm25":
        k1, b = BM25_PARAMS[(lang, False)]
        return FilledBlocks(BM25Terms(store, Analyzer(), k1, b), store, lang, dated)
    if method == "fts5":
        method = "fts5-bigram" if lang == "zh" else "fts5-porter"
    if method in ("fts5-porter", "fts5-trigram", "fts5-bigram"):
        return FilledBlocks(FTS5Ranker(store, method[5:]), store, lang, dated)
    raise ValueError(
        f"unknown method {method!r}: talos, talos:MODEL, bm25, fts5, fts5-porter, "
        "fts5-trigram or fts5-bigram"
    )


# -- metrics -------------------------------------------------------------------------------


def answer_metrics(asked: Asked, gold: Sequence[str]) -> dict[str, Any]:
    """One answerable question: ``R@5`` and ``R@10`` of the ranking (gold ids in its top k /
    gold ids) and per budget ``{"gold": gold ids in the block / gold ids, "any": 0/1, "size":
    characters, "rows": rows}`` under ``"blocks"``."""
    want = set(gold)

    def found(rows: Sequence[list[str]]) -> float:
        return len({i for r in rows for i in r} & want) / len(want)

    out: dict[str, Any] = {"R@5": found(asked.ranking[:5]), "R@10": found(asked.ranking[:10])}
    out["blocks"] = {
        b: {
            "gold": found(rows),
            "any": float(found(rows) > 0),
            "size": float(size),
            "rows": float(len(rows)),
        }
        for b, (rows, size) in asked.blocks.items()
    }
    return out


def unrelated_metrics(asked: Asked) -> dict[str, Any]:
    """One unrelated query: per budget ``{"empty": 0/1, "size": characters}``."""
    return {
        "blocks": {
            b: {"empty": float(not rows), "size": float(size)}
            for b, (rows, size) in asked.blocks.items()
        }
    }


def p90(values: Sequence[float]) -> float:
    """The 90th percentile by nearest rank (the smallest value at least 90% of ``values`` are
    at or below; NaN for none): a size a reader can find in the data."""
    if not values:
        return math.nan
    s = sorted(values)
    return s[math.ceil(0.9 * len(s)) - 1]


def summarise(
    answerable: Sequence[dict[str, Any]],
    other: Sequence[dict[str, Any]],
    chores: Sequence[dict[str, Any]],
    budget: int,
) -> dict[str, float]:
    """The table's numbers at ``budget``: ``n``, ``gold recall`` (mean block gold recall over
    the answerable questions), ``R@5``, ``R@10`` (the ranking's), ``any gold`` (share of
    answerable questions whose block holds a gold id), ``median size`` and ``p90 size``
    (characters, over the answerable questions' blocks, an empty block counting 0),
    ``rows/block``, ``rows/2k`` (rows per 2,000 characters of a non-empty block: what its
    boilerplate costs), ``n other`` / ``empty other`` and ``n chores`` / ``empty chores`` (share
    of empty blocks for unrelated queries). NaN where there is nothing to average."""

    def mean(xs: Sequence[float]) -> float:
        return sum(xs) / len(xs) if xs else math.nan

    blocks = [m["blocks"][budget] for m in answerable]
    sizes = [x["size"] for x in blocks]
    return {
        "n": float(len(answerable)),
        "gold recall": mean([x["gold"] for x in blocks]),
        "R@5": mean([m["R@5"] for m in answerable]),
        "R@10": mean([m["R@10"] for m in answerable]),
        "any gold": mean([x["any"] for x in blocks]),
        "median size": statistics.median(sizes) if sizes else math.nan,
        "p90 size": p90(sizes),
        "rows/block": mean([x["rows"] for x in blocks]),
        "rows/2k": mean([2000 * x["rows"] / x["size"] for x in blocks if x["size"]]),
        "n other": float(len(other)),
        "empty other": mean([m["blocks"][budget]["empty"] for m in other]),
        "n chores": float(len(chores)),
        "empty chores": mean([m["blocks"][budget]["empty"] for m in chores]),
    }


# -- running -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Job:
    """Queries of one pool for one method: ``(kind, order, query, gold)``, kind ``answerable``,
    ``other`` or ``chores`` (gold ``None`` for the unrelated)."""

    method: str
    key: tuple[str, str, int]  # (set, split, pool index)
    store: Store
    lang: str
    budgets: tuple[int, ...]
    cap: int
    dated: bool
    queries: list[tuple[str, int, str, list[str] | None]]


_ENGINES: dict[tuple[str, tuple[str, str, int]], TalosBlocks | FilledBlocks] = {}
_TMP: list[tempfile.TemporaryDirectory[str]] = []


def _run_job(job: _Job) -> list[tuple[str, int, dict[str, Any]]]:
    """Ask a job's queries in this process, reusing the engine built for its pool."""
    engine = _ENGINES.get((job.method, job.key))
    if engine is None:
        tmp = tempfile.TemporaryDirectory(prefix="talos-block-")
        _TMP.append(tmp)
        engine = make_engine(job.method, job.store, job.lang, Path(tmp.name), job.cap, job.dated)
        _ENGINES[(job.method, job.key)] = engine
    out = []
    for kind, order, query, gold in job.queries:
        # an unrelated query is measured where the gate rules: injected by the hooks
        asked = engine.ask(query, job.budgets, automatic=gold is None)
        m = answer_metrics(asked, gold) if gold is not None else unrelated_metrics(asked)
        out.append((kind, order, m))
    return out


Results = dict[tuple[str, str, str], dict[str, list[dict[str, Any]]]]


def run(
    pool_list: Sequence[Any],
    methods: Sequence[str],
    budgets: Sequence[int],
    *,
    jobs: int = 0,
    cap: int = CAP,
    dated: bool = False,
    chunk: int = 60,
) -> Results:
    """Ask every pool's queries (``relevance.Pool``: answerable and unrelated) of every method
    at every budget.

    Args:
        jobs: worker processes (0: one per CPU; 1: this process). cap: ``k`` of talos's
            recall. dated: baseline lines carry dates (:func:`fact_line`). chunk: queries per
            task (a pool's engine is built once per worker process).

    Returns:
        ``{(set, split, method): {"answerable": [...], "other": [...], "chores": [...]}}``,
        per-query metric dicts (:func:`answer_metrics`, :func:`unrelated_metrics`) in query
        order, the same for any ``jobs``.
    """
    bs = tuple(dict.fromkeys(budgets))
    tasks: list[_Job] = []
    for method in methods:
        for p in pool_list:
            qs: list[tuple[str, int, str, list[str] | None]] = [
                ("answerable", o, q, g) for o, q, g in p.answerable
            ]
            qs += [(kind, o, q, None) for o, q, kind in p.unrelated]
            key = (p.set, p.split, p.index)
            for i in range(0, len(qs), chunk):
                tasks.append(_Job(method, key, p.store, p.lang, bs, cap, dated, qs[i : i + chunk]))
    # talos on the longest queries first, so the workers finish together
    tasks.sort(key=lambda t: -(t.method.startswith("talos") * len(t.store.items)))
    got: dict[tuple[str, str, str], dict[str, list[tuple[int, dict[str, Any]]]]] = {}
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
        bar = progress.add_task("blocks", total=sum(len(t.queries) for t in tasks))

        def done(job: _Job, out: list[tuple[str, int, dict[str, Any]]]) -> None:
            slot = got.setdefault((job.key[0], job.key[1], job.method), {})
            for kind, order, m in out:
                slot.setdefault(kind, []).append((order, m))
            progress.advance(bar, len(job.queries))

        if jobs == 1:
            for t in tasks:
                done(t, _run_job(t))
        else:
            with ProcessPoolExecutor(max_workers=jobs) as ex:
                futures = {ex.submit(_run_job, t): t for t in tasks}
                for f in as_completed(futures):
                    done(futures[f], f.result())
    return {
        key: {
            kind: [m for _o, m in sorted(slot.get(kind, []), key=lambda x: x[0])]
            for kind in ("answerable", "other", "chores")
        }
        for key, slot in got.items()
    }


# -- the table -------------------------------------------------------------------------------


def report(
    res: Results,
    methods: Sequence[str],
    splits: Sequence[str],
    budgets: Sequence[int],
    console: Console,
    boot: int = 1000,
) -> dict[str, Any]:
    """Print the block table per split at the first budget, then the proxy curve (gold recall /
    median size at every budget) when several are given; return ``{"rows": [...], "curve":
    [...]}`` (one dict per set, split, method and budget; the curve's points)."""

    def pct(x: float) -> str:
        return "-" if x != x else f"{100 * x:.0f}%"

    rows: list[dict[str, Any]] = []
    for split in splits:
        for budget in budgets:
            for label in BLOCK_SETS:
                for m in methods:
                    got = res.get((label, split, m))
                    if got is None:
                        continue
                    s = summarise(got["answerable"], got["other"], got["chores"], budget)
                    g = np.array([x["blocks"][budget]["gold"] for x in got["answerable"]])
                    rows.append(
                        {
                            "set": label,
                            "split": split,
                            "method": m,
                            "budget": budget,
                            **s,
                            "gold recall ci": bootstrap(g, boot),
                        }
                    )
    first = budgets[0]
    for split in splits:
        t = Table(
            title=f"What the block is worth — {split} split, budget {first:,} characters "
            "(gold recall = gold ids in the block / gold ids, 95% bootstrap CI; sizes over "
            "answerable questions; empty = share of empty blocks for unrelated queries)",
            box=box.MARKDOWN,
            title_justify="left",
        )
        for c in (
            "set",
            "method",
            "n",
            "gold recall",
            "R@5",
            "R@10",
            "any gold",
            "median size",
            "p90 size",
            "rows",
            "rows/2k",
            "empty: other pools",
            "empty: chores",
        ):
            t.add_column(c, justify="left" if c in ("set", "method") else "right")
        for label in BLOCK_SETS:
            mine = [r for r in rows if r["split"] == split and r["set"] == label]
            for r in mine:
                if r["budget"] != first:
                    continue
                lo, hi = r["gold recall ci"]
                t.add_row(
                    label,
                    r["method"],
                    str(int(r["n"])),
                    f"{r['gold recall']:.3f} [{lo:.3f}, {hi:.3f}]",
                    f"{r['R@5']:.3f}",
                    f"{r['R@10']:.3f}",
                    pct(r["any gold"]),
                    f"{r['median size']:,.0f}",
                    f"{r['p90 size']:,.0f}",
                    f"{r['rows/block']:.1f}",
                    f"{r['rows/2k']:.1f}",
                    pct(r["empty other"]),
                    pct(r["empty chores"]),
                )
            if mine:
                t.add_section()
        console.print(t)
        console.print()
    curve = [
        {k: r[k] for k in ("set", "split", "method", "budget", "gold recall", "median size")}
        for r in rows
    ]
    if len(budgets) > 1:
        ascending = sorted(set(budgets))
        for split in splits:
            t = Table(
                title=f"Proxy curve — {split} split: block gold recall / median size in "
                "characters, per budget",
                box=box.MARKDOWN,
                title_justify="left",
            )
            t.add_column("set")
            t.add_column("method")
            for b in ascending:
                t.add_column(f"{b:,}", justify="right")
            for label in BLOCK_SETS:
                for m in methods:
                    pts = {
                        r["budget"]: r
                        for r in curve
                        if (r["set"], r["split"], r["method"]) == (label, split, m)
                    }
                    if not pts:
                        continue
                    t.add_row(
                        label,
                        m,
                        *(
                            f"{pts[b]['gold recall']:.3f} / {pts[b]['median size']:,.0f}"
                            for b in ascending
                        ),
                    )
                t.add_section()
            console.print(t)
            console.print()
    return {"rows": rows, "curve": curve}
