#!/usr/bin/env python3
"""Tune the hub-damped models on the *dev* split only, and derive their gate constants.

Reads only dev questions (``bench/datasets.py``: even positions in each source file); the test
split is never loaded here, so nothing tuned here has seen a test question.

1. **Parameters.** For ``bipartite`` (and ``damped`` = no spreading, ``SPREAD_DECAY = 0``) a
   grid of ``HUB_POWER`` (a query keyword held by ``df`` nodes weighs ``df ** -HUB_POWER``;
   0 = classic seeds) × ``SPREAD_DECAY``; then ``flow`` over ``SPREAD_DECAY`` at the chosen
   ``HUB_POWER``. Objective: the mean of dev Recall@5 on LoCoMo (categories 1-4) and on the
   Chinese set (MADial zh dialogue + MemoryBank cn pooled) — the two verdict numbers.
2. **THRESH** (a node must exceed it to be ranked): the largest value of a grid whose dev
   Recall@10 is at most 0.005 below the unthresholded one on every dev set: the cut removes
   dust, never a memory that would have been in the top 10.
3. **BODY_LEAD / BODY_FLOOR** (SPEC §6.1: the best skill gets its body when it leads the
   second by ``BODY_LEAD``×, or, alone, scores ≥ ``BODY_FLOOR``). The dev sets hold no
   skills, so the gate is calibrated on the same decision for the best memory: "is the top
   row right?" (it holds gold evidence). ``BODY_LEAD`` is the ratio top1/top2 and
   ``BODY_FLOOR`` the top-1 score (2-decimal rounded, as the gate compares them) that
   maximise Youden's J = TPR − FPR over dev questions of the verdict sets.

    python3 bench/sweep.py --data ../shared/bench            # ~4 min on 2 cores

Prints markdown tables (pasted into bench/README.md). The constants are then set by hand in
``talos/activation.py``; this script does not edit code.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datasets import DEFAULT_DATA, load_all, write_home
from rankers import metrics
from rich import box
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

import talos.activation as A
from talos import Memory, keywords

#: (dataset, categories) of the two verdict sets.
SETS = {
    "LoCoMo 1-4": [("locomo", None)],
    "Chinese": [("madial-zh", ["context"]), ("memorybank-cn", ["probe"])],
}
HUB_POWERS = (0.0, 0.25, 0.5, 0.75, 1.0)
DECAYS = (0.0, 0.25, 0.5, 0.75, 1.0)
THRESHES = (0.0, 0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05)
LEADS = tuple(round(1.0 + 0.05 * i, 2) for i in range(41))  # 1.00 … 3.00
FLOORS = tuple(round(0.025 * i, 3) for i in range(61))  # 0.000 … 1.500

_DEV: list[tuple[str, Any, list[tuple[str, list[str], str]]]] = []


def load_dev(data: Path, limit: int) -> list[tuple[str, Any, list[tuple[str, list[str], str]]]]:
    """``[(set name, graph, [(query, gold, category)])]`` for every dev pool of the verdict sets."""
    out = []
    tmp = Path(tempfile.mkdtemp(prefix="talos-sweep-"))
    names = {d for parts in SETS.values() for d, _ in parts}
    for ds in load_all(data, sorted(names)):
        set_name = next(s for s, parts in SETS.items() if any(d == ds.name for d, _ in parts))
        cats = next(c for parts in SETS.values() for d, c in parts if d == ds.name) or ds.union
        pools: dict[int, tuple[Any, list[tuple[str, list[str], str]]]] = {}
        taken = 0
        for store, q in ds.questions("dev"):
            if q.category not in cats or (limit and taken >= limit):
                continue
            taken += 1
            if id(store.items) not in pools:
                home = write_home(store, tmp / f"{ds.name}-{len(pools)}")
                pools[id(store.items)] = (Memory(home, keep_fact=None).graph(), [])
            pools[id(store.items)][1].append((q.query, q.gold, q.category))
        out += [(set_name, g, qs) for g, qs in pools.values()]
    return out


def _init(data: Path, limit: int) -> None:
    _DEV[:] = load_dev(data, limit)


#: Which module constant is a model's spreading decay.
DECAY_OF = {"bipartite": "SPREAD_DECAY", "flow": "FLOW_DECAY", "damped": None}


def run(model: str, hub: float, decay: float) -> dict[str, Any]:
    """Dev metrics of ``model`` with the given constants, at every threshold of
    :data:`THRESHES`: per set the mean metrics, and per question the rounded top-2 scores and
    whether the top row is right (for the gate)."""
    A.HUB_POWER = hub
    if DECAY_OF[model]:
        setattr(A, DECAY_OF[model], decay)
    fn = A.MODELS[model].activate
    per: dict[float, dict[str, list[dict[str, float]]]] = {th: {} for th in THRESHES}
    gate: dict[float, list[tuple[float, float | None, bool]]] = {th: [] for th in THRESHES}
    for set_name, graph, qs in _DEV:
        for q, gold, _ in qs:
            ranked = A.rank(fn(graph, keywords(q)), 0.0)
            rows = [[m.fields.get("ref", "") for m in graph.nodes[i].family()] for _, i in ranked]
            for th in THRESHES:
                n = sum(1 for a, _ in ranked if a > th)
                per[th].setdefault(set_name, []).append(metrics(rows[:n], gold))
                if n:
                    s2 = round(ranked[1][0], 2) if n > 1 else None
                    ok = bool(set(gold) & set(rows[0]))
                    gate[th].append((round(ranked[0][0], 2), s2, ok))
    means = {
        th: {s: {k: sum(m[k] for m in ms) / len(ms) for k in ms[0]} for s, ms in sets.items()}
        for th, sets in per.items()
    }
    return {"model": model, "hub": hub, "decay": decay, "means": means, "gate": gate}


def objective(r: dict[str, Any]) -> float:
    """Mean of dev R@5 on the verdict sets, unthresholded."""
    return sum(r["means"][0.0][s]["R@5"] for s in SETS) / len(SETS)


def youden(gate: list[tuple[float, float | None, bool]], fires) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    """(J, precision, recall) of a gate ``fires(s1, s2)`` against "the top row is right"."""
    pos = sum(1 for g in gate if g[2])
    neg = len(gate) - pos
    tp = sum(1 for s1, s2, ok in gate if ok and fires(s1, s2))
    fp = sum(1 for s1, s2, ok in gate if not ok and fires(s1, s2))
    j = (tp / pos if pos else 0.0) - (fp / neg if neg else 0.0)
    return j, (tp / (tp + fp) if tp + fp else float("nan")), (tp / pos if pos else 0.0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder laid out like ../shared/bench"
    )
    ap.add_argument("--limit", type=int, default=0, help="at most N dev questions per dataset")
    ap.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per CPU)")
    args = ap.parse_args(argv)
    console = Console(width=max(Console().width, 140))
    start = time.time()

    init = (args.data, args.limit)
    grid = [("bipartite", h, d) for h in HUB_POWERS for d in DECAYS]
    with (
        ProcessPoolExecutor(args.jobs or None, initializer=_init, initargs=init) as pool,
        Progress(console=Console(stderr=True), transient=True) as bar,
    ):
        task = bar.add_task("bipartite grid (dev)", total=len(grid))
        results = []
        for r in pool.map(run, *zip(*grid, strict=True)):
            results.append(r)
            bar.advance(task)
        best = max(results, key=objective)
        hub = best["hub"]
        flows = [("flow", hub, d) for d in DECAYS if d > 0]
        task = bar.add_task("flow (dev)", total=len(flows))
        for r in pool.map(run, *zip(*flows, strict=True)):
            results.append(r)
            bar.advance(task)
    best_flow = max((r for r in results if r["model"] == "flow"), key=objective)
    damped = next(r for r in results if r["hub"] == hub and r["decay"] == 0.0)

    t = Table(
        title="bipartite on dev: R@5 LoCoMo 1-4 / Chinese (objective = their mean); "
        "SPREAD_DECAY 0 = damped",
        box=box.MARKDOWN,
        title_justify="left",
    )
    t.add_column("HUB_POWER \\ SPREAD_DECAY")
    for d in DECAYS:
        t.add_column(f"{d:g}", justify="right")
    for h in HUB_POWERS:
        cells = []
        for d in DECAYS:
            r = next(x for x in grid_results(results) if x["hub"] == h and x["decay"] == d)
            m = r["means"][0.0]
            mark = " ←" if r is best else ""
            cells.append(f"{m['LoCoMo 1-4']['R@5']:.3f} / {m['Chinese']['R@5']:.3f}{mark}")
        t.add_row(f"{h:g}", *cells)
    console.print(t)
    console.print(
        f"\nbipartite: HUB_POWER={hub:g} SPREAD_DECAY={best['decay']:g} "
        f"(objective {objective(best):.4f})\n"
    )
    t = Table(title=f"flow on dev at HUB_POWER={hub:g}", box=box.MARKDOWN, title_justify="left")
    for c in ("FLOW_DECAY", "R@5 LoCoMo 1-4", "R@5 Chinese", "objective"):
        t.add_column(c, justify="right")
    for r in results:
        if r["model"] == "flow":
            m = r["means"][0.0]
            t.add_row(
                f"{r['decay']:g}" + (" ←" if r is best_flow else ""),
                f"{m['LoCoMo 1-4']['R@5']:.3f}",
                f"{m['Chinese']['R@5']:.3f}",
                f"{objective(r):.4f}",
            )
    console.print(t)
    console.print()

    summary = []
    for name, r in (("damped", damped), ("bipartite", best), ("flow", best_flow)):
        summary.append((name, r["decay"], *derive(console, name, r)))
    t = Table(title="Derived constants (dev)", box=box.MARKDOWN, title_justify="left")
    for c in ("model", "decay", "THRESH", "BODY_LEAD", "BODY_FLOOR"):
        t.add_column(c, justify="right")
    for name, decay, th, lead, floor in summary:
        t.add_row(name, f"{decay:g}", f"{th:g}", f"{lead:g}", f"{floor:g}")
    console.print(t)
    console.print(f"HUB_POWER={hub:g}; {time.time() - start:.0f} s")
    return 0


def grid_results(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in results if r["model"] == "bipartite"]


def derive(console: Console, model: str, r: dict[str, Any]) -> tuple[float, float, float]:
    """Print and return ``(THRESH, BODY_LEAD, BODY_FLOOR)`` of one dev run (module docstring)."""
    base = r["means"][0.0]
    t = Table(title=f"{model}: THRESH on dev", box=box.MARKDOWN, title_justify="left")
    t.add_column("THRESH")
    for s in SETS:
        t.add_column(f"R@10 {s}", justify="right")
    t.add_column("max loss", justify="right")
    chosen = 0.0
    for th in THRESHES:
        m = r["means"][th]
        loss = max(base[s]["R@10"] - m[s]["R@10"] for s in SETS)
        if loss <= 0.005 + 1e-12:
            chosen = max(chosen, th)
        t.add_row(f"{th:g}", *(f"{m[s]['R@10']:.3f}" for s in SETS), f"{loss:.3f}")
    console.print(t)
    gate = r["gate"][chosen]
    leads = [(x, *youden(gate, lambda s1, s2, x=x: s2 is not None and s1 >= x * s2)) for x in LEADS]
    floors = [(x, *youden(gate, lambda s1, s2, x=x: s1 >= x)) for x in FLOORS]
    lead = max(leads, key=lambda x: (round(x[1], 12), -x[0]))[0]
    floor = max(floors, key=lambda x: (round(x[1], 12), -x[0]))[0]
    for name, rows, pick, shown in (
        ("BODY_LEAD", leads, lead, (1.2, 1.5, 1.7, 2.0, 2.5, 3.0)),
        ("BODY_FLOOR", floors, floor, (0.1, 0.2, 0.35, 0.5, 0.75, 1.0)),
    ):
        right = sum(g[2] for g in gate)
        t = Table(
            title=f"{model}: {name} on dev ({len(gate)} questions, top row right in {right})",
            box=box.MARKDOWN,
            title_justify="left",
        )
        for c in (name, "J", "precision", "recall"):
            t.add_column(c, justify="right")
        for x, j, p, rec in rows:
            if x in shown or x == pick:
                mark = " ←" if x == pick else ""
                t.add_row(f"{x:g}{mark}", f"{j:.3f}", f"{p:.3f}", f"{rec:.3f}")
        console.print(t)
    console.print()
    return chosen, lead, floor


if __name__ == "__main__":
    raise SystemExit(main())
