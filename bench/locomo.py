#!/usr/bin/env python3
"""Recall@5 / Recall@10 of gold evidence on real conversations: talos vs a BM25 baseline.

Turns every LoCoMo conversation in ``--data`` into a talos home (each dialog turn a fact line
``<speaker>: <text>`` tagged ``import`` with its session date and ``ref=<dia_id>``, in a
temporary folder), asks every question that has gold evidence through ``Memory.explain(query,
k=10)``, maps the rows back to dialog ids (a merged node stands for all its members' ids) and
prints Recall@5 and Recall@10 per category (1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop), their union, and category 5 (adversarial) apart — for ``classic`` (the
reference model), the default model (when it is another one) and BM25 (``bm25s`` on design §4
keywords, one document per turn). Then the same for the Chinese sets
(MADial zh: the dialogue before the test turn, and its last user turn; MemoryBank cn).
The protocol is ``../shared/bench/README.md``'s; see ``bench/datasets.py``.

    python3 bench/locomo.py --data ../shared/bench          # everything, both splits
    python3 bench/locomo.py --limit 50                      # a quick look

The data is read in place and never copied into the repository. ``bench/quality.py`` is the
full harness (all models, MRR, confidence intervals, the dev/test split).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datasets import DEFAULT_DATA, load_all
from rankers import Result, evaluate
from rich import box
from rich.console import Console
from rich.table import Table

from talos.ranking.activation import DEFAULT_MODEL

#: classic (the reference), the default model when it is another one, and the BM25 baseline.
METHODS = tuple(dict.fromkeys(("classic", DEFAULT_MODEL, "bm25")))


def mean(results: list[Result], key: str) -> float:
    return statistics.fmean(r.values[key] for r in results) if results else float("nan")


def table(title: str, groups: list[tuple[str, dict[str, list[Result]]]]) -> Table:
    """A markdown-shaped table: one row per group, R@5 / R@10 per method."""
    t = Table(title=title, box=box.MARKDOWN, title_justify="left")
    t.add_column("questions")
    t.add_column("n", justify="right")
    for m in METHODS:
        t.add_column(f"{m} R@5", justify="right")
        t.add_column(f"{m} R@10", justify="right")
    for name, per in groups:
        n = len(per[METHODS[0]])
        cells = [f"{mean(per[m], k):.3f}" for m in METHODS for k in ("R@5", "R@10")]
        t.add_row(name, str(n), *cells)
    return t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder laid out like ../shared/bench"
    )
    ap.add_argument("--limit", type=int, default=0, help="at most N questions per split (quick)")
    ap.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per CPU)")
    args = ap.parse_args(argv)

    data = args.data
    datasets = load_all(data, ["locomo", "madial-zh", "memorybank-cn"])
    if not datasets:
        print(
            f"no data under {data} (expected locomo/, madial/zh/, memorybank/cn/)", file=sys.stderr
        )
        return 1
    start = time.time()
    res = evaluate(datasets, METHODS, jobs=args.jobs, limit=args.limit, via_explain=True)
    console = Console(width=max(Console().width, 160))
    by_name = {ds.name: ds for ds in datasets}

    def pick(ds: str, cats: list[str]) -> dict[str, list[Result]]:
        return {m: [r for r in res.get((ds, m), []) if r.category in cats] for m in METHODS}

    if "locomo" in by_name:
        ds = by_name["locomo"]
        rows = [(c, pick("locomo", [c])) for c in ds.union]
        rows.append(("1-4 (union)", pick("locomo", ds.union)))
        rows += [(c, pick("locomo", [c])) for c in ds.extra]
        console.print(table("LoCoMo (English), Recall of evidence dialog ids", rows))
        console.print()
    zh: list[tuple[str, dict[str, list[Result]]]] = []
    if "madial-zh" in by_name:
        zh.append(("MADial zh: dialogue before test turn", pick("madial-zh", ["context"])))
        zh.append(("MADial zh: last user turn only", pick("madial-zh", ["last-turn"])))
    if "memorybank-cn" in by_name:
        zh.append(("MemoryBank cn", pick("memorybank-cn", ["probe"])))
    if "madial-zh" in by_name and "memorybank-cn" in by_name:
        pooled = {
            m: pick("madial-zh", ["context"])[m] + pick("memorybank-cn", ["probe"])[m]
            for m in METHODS
        }
        zh.append(("Chinese set (MADial zh dialogue + MemoryBank cn)", pooled))
    if zh:
        console.print(table("Chinese sets, Recall of evidence memory ids", zh))
    console.print(
        f"\n{sum(len(v) for v in res.values())} rankings in {time.time() - start:.0f} s; "
        f"data: {data}; talos via Memory.explain(query, k=10)."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
