#!/usr/bin/env python3
"""Retrieval quality of every talos activation model against BM25 and keyword overlap.

One harness for every dataset under ``--data`` (a folder laid out like ``../shared/bench``):
LoCoMo (English), MADial zh / en and MemoryBank cn, read with the protocol of
``../shared/bench/README.md`` (``bench/datasets.py``). Each memory pool becomes a talos home
in a temporary folder (one fact line per memory, tagged ``import`` with its date and
``ref=<id>``); every question with gold evidence is asked of every method:

- every activation model in ``talos.ranking.activation.MODELS`` (``classic``, the reference; the
others
  are hub-damped and mass-conserving, see ``docs/benchmarks.md``);
- ``bm25``: bm25s (Lucene BM25, k1=1.5, b=0.75) on design §4 keywords, one document per memory;
- ``overlap``: plain keyword overlap, the seed score ``|q ∩ d| / |q|`` with no spreading.

Metrics: Recall@1/5/10 of the gold ids (a merged talos node stands for all its members' ids)
and MRR over the full ranking, per category and for the union of the reported categories,
with bootstrap 95% confidence intervals (questions resampled; the same resamples for every
method, so differences are paired). The *Chinese set* is MADial zh (dialogue before the test
turn) and MemoryBank cn pooled.

Split: every dataset is cut into a *dev* half (tune on it, and only on it)
and a *test* half (used for the verdict), by position in the source file (``bench/datasets.py``
lists which conversations, dialogues and users are which). The verdict table compares each
model with BM25 and classic at Recall@5 on the test split.

    python3 bench/quality.py --data ../shared/bench --json quality.json
    python3 bench/quality.py --model classic --model bm25 --split dev --limit 100

The data is read in place and never copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from datasets import DEFAULT_DATA, Dataset, load_all
from rankers import BASELINES, Result, evaluate
from rich import box
from rich.console import Console
from rich.table import Table

from talos.ranking.activation import DEFAULT_MODEL, MODELS

METRICS = ("R@1", "R@5", "R@10", "MRR")
#: Datasets pooled into "the Chinese set" of the verdict: (dataset, category).
CHINESE = (("madial-zh", "context"), ("memorybank-cn", "probe"))
#: The two verdict rows: (label, [(dataset, categories or None for the union)]).
VERDICT = (
    ("LoCoMo 1-4", [("locomo", None)]),
    ("Chinese set", [(d, [c]) for d, c in CHINESE]),
)


def bootstrap(values: np.ndarray, n: int, seed: int) -> tuple[float, float]:
    """95% percentile interval of the mean of ``values`` (questions resampled ``n`` times).

    The resamples depend only on ``seed`` and ``len(values)``, so every method asked the same
    questions is resampled identically (paired).
    """
    if len(values) == 0 or n <= 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng([seed, len(values)])
    idx = rng.integers(0, len(values), size=(n, len(values)))
    means = values[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (float(lo), float(hi))


def select(
    res: dict[tuple[str, str], list[Result]],
    method: str,
    split: str,
    parts: Sequence[tuple[str, Sequence[str] | None]],
    unions: dict[str, list[str]],
) -> list[Result]:
    """The results of ``method`` on ``split`` for ``[(dataset, categories), ...]`` (``None``:
    the dataset's union of reported categories), concatenated in question order."""
    out: list[Result] = []
    for ds, cats in parts:
        want = unions[ds] if cats is None else cats
        out += [r for r in res.get((ds, method), []) if r.split == split and r.category in want]
    return out


def cell(results: list[Result], boot: int, seed: int) -> dict[str, Any]:
    """Mean and CI of every metric over ``results``."""
    out: dict[str, Any] = {"n": len(results)}
    for m in METRICS:
        v = np.array([r.values[m] for r in results], dtype=float)
        out[m] = float(v.mean()) if len(v) else float("nan")
        out[f"{m} ci"] = bootstrap(v, boot, seed)
    return out


def diff_ci(a: list[Result], b: list[Result], metric: str, boot: int, seed: int):
    """Mean of ``a - b`` per question (same questions, same order) and its paired 95% CI."""
    va = np.array([r.values[metric] for r in a], dtype=float)
    vb = np.array([r.values[metric] for r in b], dtype=float)
    d = va - vb
    return float(d.mean()) if len(d) else float("nan"), bootstrap(d, boot, seed)


def groups(ds: Dataset) -> list[tuple[str, list[str]]]:
    """Reporting rows of a dataset: each category of the union, the union, the extras."""
    rows = [(c, [c]) for c in ds.union] if len(ds.union) > 1 else []
    rows.append((f"{'+'.join(c.split()[0] for c in ds.union)} (union)", list(ds.union)))
    rows += [(c, [c]) for c in ds.extra]
    return rows


def fmt(c: dict[str, Any], m: str) -> str:
    lo, hi = c[f"{m} ci"]
    return f"{c[m]:.3f} [{lo:.3f}, {hi:.3f}]" if c["n"] else "-"


def main(argv: list[str] | None = None) -> int:
    all_methods = [*MODELS, *BASELINES]
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder laid out like ../shared/bench"
    )
    ap.add_argument(
        "--model",
        action="append",
        choices=all_methods,
        help=f"method to run, repeatable (default: all of {', '.join(all_methods)})",
    )
    ap.add_argument(
        "--dataset",
        action="append",
        help="dataset to run, repeatable (locomo, madial-zh, memorybank-cn, madial-en)",
    )
    ap.add_argument("--split", choices=["dev", "test", "both"], default="both")
    ap.add_argument(
        "--limit", type=int, default=0, help="at most N questions per dataset and split"
    )
    ap.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per CPU)")
    ap.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (0: no CIs)")
    ap.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    ap.add_argument("--json", type=Path, help="write every number here as JSON")
    ap.add_argument(
        "--limits",
        help="FIRE,FRONTIER,FANOUT: the evidence model's constrained hops "
        "(talos.ranking.constrained; 0,0,0: every node fires through every term)",
    )
    args = ap.parse_args(argv)
    if args.limits:
        from talos.ranking import constrained

        fire, frontier, fanout = args.limits.split(",")
        constrained.LIMITS = constrained.Limits(float(fire), int(frontier), int(fanout))

    methods = args.model or all_methods
    splits = ["dev", "test"] if args.split == "both" else [args.split]
    datasets = load_all(args.data, args.dataset)
    if not datasets:
        print(f"no datasets under {args.data}", file=sys.stderr)
        return 1
    start = time.time()
    res = evaluate(datasets, methods, jobs=args.jobs, limit=args.limit, splits=splits)
    elapsed = time.time() - start
    unions = {ds.name: list(ds.union) for ds in datasets}
    boot, seed = args.bootstrap, args.seed
    console = Console(width=max(Console().width, 200))
    report: dict[str, Any] = {
        "data": str(args.data),
        "methods": methods,
        "splits": splits,
        "limit": args.limit,
        "bootstrap": boot,
        "seconds": round(elapsed, 1),
        "default_model": DEFAULT_MODEL,
        "constants": {
            n: {"thresh": m.thresh, "body_lead": m.body_lead, "body_floor": m.body_floor}
            for n, m in MODELS.items()
        },
        "cells": [],
        "verdict": [],
    }

    for ds in datasets:
        for split in splits:
            t = Table(
                title=f"{ds.name} — {split}", box=box.MARKDOWN, title_justify="left", min_width=60
            )
            t.add_column("questions")
            t.add_column("n", justify="right")
            t.add_column("method")
            for m in METRICS:
                t.add_column(m, justify="right")
            for label, cats in groups(ds):
                for method in methods:
                    rs = select(res, method, split, [(ds.name, cats)], unions)
                    c = cell(rs, boot, seed)
                    report["cells"].append(
                        {"dataset": ds.name, "split": split, "group": label, "method": method, **c}
                    )
                    t.add_row(label, str(c["n"]), method, *(fmt(c, m) for m in METRICS))
                t.add_section()
            console.print(t)
            console.print()

    names = {ds.name for ds in datasets}
    summary_rows: list[tuple[str, list[tuple[str, Sequence[str] | None]]]] = []
    for ds in datasets:
        summary_rows.append(
            (f"{ds.name} {'+'.join(c.split()[0] for c in ds.union)}", [(ds.name, None)])
        )
        summary_rows += [(f"{ds.name} {c}", [(ds.name, [c])]) for c in ds.extra]
        if ds.name == CHINESE[-1][0] and all(d in names for d, _ in CHINESE):
            summary_rows.append(("Chinese set (pooled)", [(d, [c]) for d, c in CHINESE]))
    for split in splits:
        t = Table(
            title=f"Summary — {split} split (mean [95% bootstrap CI])",
            box=box.MARKDOWN,
            title_justify="left",
        )
        for c in ("set", "n", "method", *METRICS):
            t.add_column(c, justify="left" if c in ("set", "method") else "right")
        for label, parts in summary_rows:
            for method in methods:
                c = cell(select(res, method, split, parts, unions), boot, seed)
                t.add_row(label, str(c["n"]), method, *(fmt(c, m) for m in METRICS))
            t.add_section()
        console.print(t)
        console.print()

    for split in splits:
        t = Table(
            title=f"Verdict rows — {split} split, Recall@5 (95% CI); Δ = paired difference",
            box=box.MARKDOWN,
            title_justify="left",
        )
        t.add_column("set")
        t.add_column("n", justify="right")
        t.add_column("method")
        t.add_column("R@5", justify="right")
        t.add_column("Δ vs bm25", justify="right")
        t.add_column("Δ vs classic", justify="right")
        for label, parts in VERDICT:
            if not all(d in names for d, _ in parts):
                continue
            base = {b: select(res, b, split, parts, unions) for b in ("bm25", "classic")}
            for method in methods:
                rs = select(res, method, split, parts, unions)
                c = cell(rs, boot, seed)
                row: dict[str, Any] = {"set": label, "split": split, "method": method, **c}
                cells = [label, str(c["n"]), method, fmt(c, "R@5")]
                for b in ("bm25", "classic"):
                    if method == b or not base[b] or not rs:
                        cells.append("")
                        continue
                    d, (lo, hi) = diff_ci(rs, base[b], "R@5", boot, seed)
                    row[f"delta_{b}"] = {"mean": d, "ci": (lo, hi)}
                    cells.append(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]")
                report["verdict"].append(row)
                t.add_row(*cells)
            t.add_section()
        console.print(t)
        console.print()

    n = sum(len(v) for v in res.values())
    console.print(
        f"{n} rankings in {elapsed:.0f} s ({args.jobs or 'all'} jobs); data: {args.data}; "
        f"default model: {DEFAULT_MODEL}; bootstrap: {boot} resamples, seed {seed}."
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
        console.print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
