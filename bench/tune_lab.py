#!/usr/bin/env python3
"""Tuning the ``evidence`` block and the Chinese ranking through talos's own kept state (issue 15).

Every pool of ``relevance.pools`` is written as a home and opened as ``Memory(model="evidence")``
(``rankers.TalosRanker``); each query is activated once by ``Memory._evidence`` (the same term
index, contiguity edges and small-home rule as ``Memory.recall``) and its :class:`Evidence`
kept, so that many delivery rules (``talos.relevance.deliver`` and variants) are scored in one
process without re-ranking. ``--split dev`` is what is tuned on; ``--split test`` is run once,
for the report.

    python3 bench/tune_lab.py block --data ../shared/bench            # the delivery grid, dev
    python3 bench/tune_lab.py rank --data ../shared/bench             # Chinese ranking grid, dev
    python3 bench/tune_lab.py block --data ../shared/bench --split test --only shipped

The data is read in place and never copied into the repository.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import relevance as R
from datasets import DEFAULT_DATA, load_all
from delivery import Block, block_metrics, summarise
from rankers import TalosRanker

from talos.analyzer import analyze
from talos.contiguity import Links
from talos.evidence import Evidence, TermIndex
from talos.relevance import FLOOR, NEIGHBOUR, RELATIVE, WHOLE, deliver, is_evidence
from talos.selection import evidence_order


@dataclass(slots=True)
class Asked:
    """One query's activation over one pool: ``kind`` (``answerable``, ``other``, ``chores``),
    ``gold`` (ids; empty for unrelated), the first 10 nodes, and the pool's index and edges."""

    kind: str
    gold: list[str]
    ev: Evidence
    top: list[int]
    index: TermIndex
    graph: Links
    ids: Callable[[int], list[str]]
    terms: list[str] = field(default_factory=list)


def asked(data: Path, split: str, limit: int = 0) -> dict[str, list[Asked]]:
    """``{set: [Asked, ...]}`` of every pool of ``split`` (answerable, then unrelated)."""
    out: dict[str, list[Asked]] = {}
    for pool in R.pools(load_all(data), [split], limit):
        with tempfile.TemporaryDirectory(prefix="talos-tune-") as tmp:
            ranker = TalosRanker(pool.store, "bipartite", Path(tmp))
            mem = ranker.memory
            mem.model = "evidence"
            graph = mem.view()[1]
            nodes = graph.nodes

            def ids(i: int, nodes=nodes, ranker=ranker) -> list[str]:  # type: ignore[no-untyped-def]
                return ranker._ids(nodes[i])

            got = out.setdefault(pool.set, [])
            qs = [("answerable", q, g) for _o, q, g in pool.answerable]
            qs += [(kind, q, []) for _o, q, kind in pool.unrelated]
            for kind, q, gold in qs:
                terms = analyze(q)
                index, edges, ev = mem._evidence(graph, terms)
                top = evidence_order(ev.final, 10).tolist()
                got.append(Asked(kind, gold, ev, top, index, edges, ids, terms))
            mem.close()
    return out


#: A delivery rule: the delivered nodes of one query, in block order.
Rule = Callable[[Asked], list[int]]


def shipped(a: Asked) -> list[int]:
    """``talos.relevance.deliver`` as it ships, over the first 5 rows."""
    return deliver(a.ev, a.top[:5], a.graph)


def rule(
    floor: float = FLOOR, relative: float = RELATIVE, neighbour: float = NEIGHBOUR, k: int = 5
) -> Rule:
    """``deliver`` over the first ``k`` rows with these constants (``neighbour`` > 1: no row
    reached by contiguity)."""
    return lambda a: deliver(a.ev, a.top[:k], a.graph, floor, WHOLE, relative, neighbour=neighbour)


def gated(floor: float) -> Rule:
    """The top 5 when the best seed is evidence at ``floor``, else nothing (the gate alone)."""

    def cut(a: Asked) -> list[int]:
        best = float(a.ev.seeds.max()) if a.ev.z > 0 else 0.0
        return a.top[:5] if a.top and is_evidence(best, best, a.ev.scale, floor, WHOLE) else []

    return cut


def halves(qs: Sequence[Asked]) -> tuple[list[Asked], list[Asked]]:
    """The queries of the even and of the odd pools (the pools in ``relevance.pools`` order)."""
    out: tuple[list[Asked], list[Asked]] = ([], [])
    seen: list[int] = []
    for a in qs:
        if not seen or seen[-1] != id(a.index):
            seen.append(id(a.index))
        out[(len(seen) - 1) % 2].append(a)
    return out


def score(qs: Sequence[Asked], rule: Rule) -> dict[str, float]:
    """``delivery.summarise`` of ``rule`` with ``other`` / ``chores`` (empty-block shares)."""

    def blk(a: Asked) -> Block:
        return Block([a.ids(n) for n in a.top], [a.ids(n) for n in rule(a)])

    out = summarise([block_metrics(blk(a), a.gold) for a in qs if a.kind == "answerable"], [])
    for kind in ("other", "chores"):
        ms = [block_metrics(blk(a), None) for a in qs if a.kind == kind]
        out[kind] = summarise([], ms)["empty unrelated"]
    return out


def cell(x: dict[str, float]) -> str:
    """``non-gold / kept / empty other · chores``."""
    return (
        f"{x['non-gold/block']:.2f} / {100 * x['kept']:.1f}% / "
        f"{100 * x['other']:.1f}% · {100 * x['chores']:.1f}%"
    )


def report(S: dict[str, list[Asked]], rules: Iterable[tuple[str, Rule]]) -> None:
    """One line per rule: each set's cell."""
    for name, rule in rules:
        print(f"{name:48s} " + " | ".join(f"{s[:7]} {cell(score(q, rule))}" for s, q in S.items()))


def main(argv: list[str] | None = None) -> int:
    """Entry point (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("command", choices=["block"])
    ap.add_argument("--only", choices=["shipped"], help="only the shipped rule (the test split)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--split", default="dev")
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args(argv)
    S = asked(args.data, args.split, args.limit)
    print("set: non-gold rows per block / block keeps of the ranking's R@5 / empty blocks for")
    print("unrelated queries: other pools · chores")
    report(S, [("shipped", shipped)])
    if args.only:
        return 0
    print("\n-- gate: the top 5 when the best seed is evidence at F")
    report(S, [(f"F {f:.2f}", gated(float(f))) for f in np.arange(0.60, 0.801, 0.01)])
    need = next(
        round(float(f), 2)
        for f in np.arange(0.30, 1.001, 0.01)
        if all(
            score(S[s], gated(float(f)))[kind] >= 0.9
            for s, kind in (("LoCoMo 1-4", "other"), ("Chinese set", "chores"))
            if s in S
        )
    )
    print(f"smallest F giving >= 90% empty blocks (LoCoMo other, Chinese chores): {need}")
    print("\n-- frontier: relative x neighbour (neighbour 9: no row reached by contiguity)")
    grid = [("old: F 0.65, relative 0.8, neighbour 0", rule(0.65, 0.8, 0.0))]
    for rel in (0.7, 0.8, 0.9, 0.95, 1.0):
        for nb in (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 9.0):
            grid.append((f"F {FLOOR:g}, relative {rel:g}, neighbour {nb:g}", rule(FLOOR, rel, nb)))
    report(S, grid)
    print("\n-- the shipped rule on each half of the dev pools (even / odd pools)")
    for s, qs in S.items():
        for h, part in zip(("even", "odd"), halves(qs), strict=True):
            print(f"{s} {h}: {cell(score(part, shipped))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
