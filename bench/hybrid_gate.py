#!/usr/bin/env python3
"""The dense leg's fusion constants and absolute gate (issue 17: ``talos.hybrid.K``, ``W``,
``GATE``), swept on the dev split.

``fusion``: each leg's first 50 nodes per question (the ``evidence`` ranking by final
activation, the dense one by cosine) are taken once, then RRF ``1/(k + lexical rank) + w/(k
+ dense rank)`` is scored for every (k, w) of the grid: R@5 of the fused ranking per set, and
the objective fixed before the run — the mean R@5 of issue 17's targets (LoCoMo 1-4, the
Chinese set, MADial en's last turn; :data:`TARGETS`) among settings that keep LoCoMo ≥ the
lexical leg.

``gate`` (at ``talos.hybrid``'s K and W):

For every pool of ``bench/relevance.py`` (the same questions and unrelated queries) the
hybrid recall is taken apart once per query, through talos's own modules: the fused ranking
(``Leg.rank``), its first 5 rows, which of them the lexical floor delivers
(``relevance.deliver``), and their cosines. A gate ``g`` then delivers a row when the floor
does or its cosine is ≥ ``g`` — what ``talos.hybrid.select`` does — so every gate of the grid
is judged on the same data without asking again. Printed per set and gate: block R@5,
non-gold rows per block, the share of empty blocks for the other pools' questions and for
the chores.

    python3 bench/hybrid_gate.py fusion --data ../shared/bench                 # dev only
    python3 bench/hybrid_gate.py gate --data ../shared/bench --json gate.json  # dev only
    python3 bench/hybrid_gate.py paired --data ../shared/bench --split test

``paired``: R@5 of ``talos:evidence+dense`` minus ``talos:evidence`` per question, through
``Memory.recall`` / ``explain`` (``relevance.run``), with its paired 95% bootstrap interval.

The vectors come from ``relevance.DENSE_CACHE`` (embedded on first use). The data is read in
place and never copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from datasets import DEFAULT_DATA, load_all
from delivery import Block, block_metrics
from relevance import make_delivery, pools

from talos import hybrid
from talos.analyzer import analyze
from talos.relevance import deliver

GRID = [round(x, 3) for x in np.arange(0.80, 0.951, 0.005)]
#: ``gate --z``: the gate on the cosine's z-score over the view instead.
Z = False
Z_GRID = [round(x, 2) for x in np.arange(2.0, 6.01, 0.25)]


def parts(memory: Any, ids: Any, query: str) -> tuple[list[list[str]], list[bool], list[float]]:
    """The fused ranking's first 10 rows as id lists, and for its first 5: whether the
    lexical floor delivers each, and its cosine standing (``z``: in standard deviations
    above the mean cosine of the view's nodes, when ``GATE_Z`` is set)."""
    graph = memory._kept.recall_graph(None, None)
    index, edges, ev = memory._terms(graph, analyze(query))
    leg = memory._leg
    sure = hybrid.lexical_evidence(ev, edges)
    fusion = leg.rank(graph, leg.embedder.query(hybrid.query_text(query)), ev, sure)
    top = fusion.order[:5].tolist()
    lexical = set(deliver(ev, top, edges)) if index.n else set()
    ranking = [ids(graph.nodes[i]) for i in fusion.order[:10].tolist()]
    cos = [float(c) for c in fusion.dense_score[:5]]
    if Z:
        every = fusion.dense_score[np.isfinite(fusion.dense_score)]
        mu, sd = float(every.mean()), float(every.std()) or 1.0
        cos = [(c - mu) / sd for c in cos]
    return ranking, [n in lexical for n in top], cos


def legs(memory: Any, ids: Any, query: str, n: int = 50) -> tuple[list[Any], list[Any], bool]:
    """Each leg's first ``n`` nodes for ``query`` as id lists (lexical, dense), and whether
    the lexical floor delivers a row of the lexical top 5 (the lexical leg has evidence)."""
    from talos.dense import score
    from talos.selection import evidence_order

    graph = memory._kept.recall_graph(None, None)
    index, edges, ev = memory._terms(graph, analyze(query))
    leg = memory._leg
    kept = leg.kept(graph)
    d = score(leg.embedder.query(hybrid.query_text(query)), kept.matrix, kept.candidates)
    dense = d.nodes[np.lexsort((d.nodes, -d.scores))][:n].tolist()
    lexical = evidence_order(ev.final)[:n].tolist()
    sure = bool(deliver(ev, lexical[:5], edges)) if index.n else False
    return [ids(graph.nodes[i]) for i in lexical], [ids(graph.nodes[i]) for i in dense], sure


def fused_top(lex: list[Any], dense: list[Any], k: float, w: float, top: int = 5) -> list[Any]:
    """The first ``top`` rows of RRF over two id-list rankings (a row is its id tuple)."""
    score: dict[tuple[str, ...], float] = {}
    first: dict[tuple[str, ...], int] = {}
    for r, row in enumerate(lex, 1):
        t = tuple(row)
        score[t] = score.get(t, 0.0) + 1.0 / (k + r)
        first.setdefault(t, len(first))
    for r, row in enumerate(dense, 1):
        t = tuple(row)
        score[t] = score.get(t, 0.0) + w / (k + r)
        first.setdefault(t, len(first))
    return [list(t) for t in sorted(score, key=lambda t: (-score[t], first[t]))[:top]]


def recall_at(ranking: list[Any], gold: Any, k: int = 5) -> float:
    want = set(gold)
    return len({i for row in ranking[:k] for i in row} & want) / len(want)


#: The objective's sets: issue 17's three targets (the dense lab's: MADial en's last turn).
TARGETS = ("LoCoMo 1-4", "Chinese set", "MADial en last turn")
#: ``fusion --weak W ...``: also sweep the dense weight of the queries for which the lexical
#: floor delivers nothing (its ranks are then no evidence).
WEAK: list[float] = []


def sweep_fusion(data: Path, limit: int) -> int:
    start = time.time()
    got: dict[str, list[Any]] = {}
    for pool in pools(load_all(data), ["dev"], limit):
        with tempfile.TemporaryDirectory(prefix="talos-fuse-") as tmp:
            d: Any = make_delivery("talos:evidence+dense", pool.store, pool.lang, Path(tmp))
            for _o, q, gold in pool.answerable:
                got.setdefault(pool.set, []).append((gold, *legs(d.memory, d.ids, q)))
            d.memory.close()
    ks = [1, 3, 5, 10, 20, 30, 60]
    ws = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0]
    base = {s: float(np.mean([recall_at(v[1], v[0]) for v in vs])) for s, vs in got.items()}
    alone = {s: float(np.mean([recall_at(v[2], v[0]) for v in vs])) for s, vs in got.items()}
    sure = {s: float(np.mean([v[3] for v in vs])) for s, vs in got.items()}
    print("lexical alone:", {s: round(x, 3) for s, x in base.items()})
    print("dense alone:", {s: round(x, 3) for s, x in alone.items()})
    print("lexical floor delivers:", {s: round(x, 3) for s, x in sure.items()})
    grid = [(k, w, w) for k in ks for w in ws]
    if WEAK:
        grid = [(k, w, ww) for k in (3, 5, 10) for w in (0.5, 0.75) for ww in WEAK]
    best: tuple[float, float, float, float] | None = None
    print("k | w | w without lexical evidence | " + " | ".join(got) + " | mean")
    for k, w, ww in grid:
        r = {
            s: float(
                np.mean(
                    [recall_at(fused_top(lx, dn, k, w if ok else ww), g) for g, lx, dn, ok in vs]
                )
            )
            for s, vs in got.items()
        }
        mean = float(np.mean([r[s] for s in TARGETS if s in r]))
        ok = r.get("LoCoMo 1-4", 1.0) >= base.get("LoCoMo 1-4", 0.0)
        cells = " | ".join(f"{x:.3f}" for x in r.values())
        print(f"{k} | {w} | {ww} | {cells} | {mean:.3f}" + ("" if ok else " *"))
        if ok and (best is None or mean > best[0]):
            best = (mean, k, w, ww)
    print(f"best admissible (mean, k, w, w weak): {best}; {time.time() - start:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["fusion", "gate", "paired"])
    ap.add_argument("--split", choices=["dev", "test"], default="dev", help="paired only")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--z", action="store_true", help="gate: on the z-score of the cosine")
    ap.add_argument("--weak", type=float, nargs="*", help="fusion: see WEAK")
    ap.add_argument(
        "--relative",
        type=float,
        nargs=2,
        metavar=("GATE_EN", "GATE_ZH"),
        help="gate: at these gates (the Chinese set takes the second), sweep the margin a "
        "dense-only row may fall below the block's best cosine",
    )
    args = ap.parse_args(argv)
    if os.environ.get("TALOS_BENCH_QUERY_CHARS"):  # e.g. "256" (last 256) or "-256" (first)
        n = int(os.environ["TALOS_BENCH_QUERY_CHARS"])
        hybrid.QUERY_CHARS, hybrid.QUERY_END = abs(n), n > 0
    if args.command == "paired":
        from relevance import bootstrap, run

        methods = ["talos:evidence+dense", "talos:evidence"]
        res = run(pools(load_all(args.data), [args.split], args.limit), methods)
        for label in dict.fromkeys(k[0] for k in res):
            a = np.array([m["R@5"] for m in res[(label, args.split, methods[0])][0]])
            b = np.array([m["R@5"] for m in res[(label, args.split, methods[1])][0]])
            lo, hi = bootstrap(a - b)
            print(
                f"{label} ({args.split}, n {len(a)}): {a.mean():.3f} - {b.mean():.3f} = "
                f"{(a - b).mean():+.3f} [{lo:+.3f}, {hi:+.3f}]"
            )
        return 0
    if args.command == "fusion":
        WEAK.extend(args.weak or [])
        return sweep_fusion(args.data, args.limit)
    global Z
    Z = args.z
    start = time.time()
    rows: dict[str, dict[str, list[Any]]] = {}
    for pool in pools(load_all(args.data), ["dev"], args.limit):
        got = rows.setdefault(pool.set, {"answerable": [], "unrelated": []})
        with tempfile.TemporaryDirectory(prefix="talos-gate-") as tmp:
            d: Any = make_delivery("talos:evidence+dense", pool.store, pool.lang, Path(tmp))
            for _o, q, gold in pool.answerable:
                got["answerable"].append((gold, *parts(d.memory, d.ids, q)))
            for _o, q, kind in pool.unrelated:
                got["unrelated"].append((kind, *parts(d.memory, d.ids, q)))
            d.memory.close()
    out: dict[str, Any] = {}
    print("set | gate | block R@5 | non-gold/block | empty: other pools | empty: chores")
    for label, got in rows.items():
        grid = [0.0, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1] if args.relative else GRID
        for gate in [*(Z_GRID if Z else grid), 99.0]:  # 99: no dense-only row (the floor alone)

            def block(
                ranking: list[Any],
                lex: list[bool],
                cos: list[float],
                g: float = gate,
                label: str = label,
            ) -> Block:
                if args.relative:  # g is the margin; the gate is the set's language's
                    zh = label == "Chinese set"
                    a = args.relative[1] if zh else args.relative[0]
                    top = max(cos) if cos else 0.0
                    picked = [
                        ranking[j]
                        for j in range(len(lex))
                        if lex[j] or (cos[j] >= a and cos[j] >= top - g)
                    ]
                    return Block(ranking, picked, False)
                picked = [ranking[j] for j in range(len(lex)) if lex[j] or cos[j] >= g]
                return Block(ranking, picked, False)

            ans = [block_metrics(block(*r[1:]), r[0]) for r in got["answerable"]]
            unr = [(r[0], block_metrics(block(*r[1:]), None)) for r in got["unrelated"]]
            m = {
                "block R@5": float(np.mean([a["block R@5"] for a in ans])),
                "non-gold": float(np.mean([a["non-gold"] for a in ans])),
                "empty other": float(np.mean([u["empty"] for k, u in unr if k == "other"] or [1])),
                "empty chores": float(np.mean([u["empty"] for k, u in unr if k == "chores"])),
            }
            out[f"{label}|{gate}"] = m
            print(
                f"{label} | {gate} | {m['block R@5']:.3f} | {m['non-gold']:.2f} | "
                f"{m['empty other']:.0%} | {m['empty chores']:.0%}"
            )
    print(f"{time.time() - start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
