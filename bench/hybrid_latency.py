#!/usr/bin/env python3
"""What the dense leg adds to a warm recall (issue 17's cost line: target ≤ 15 ms), measured
through ``Memory.recall`` on a real home, paired in one process.

Two ``Memory`` objects on the same home (its vectors embedded by ``talos index``): the
``evidence`` model alone and with the dense leg. After one warm-up pass of every query on
each (the kept state, the matrix, the engine loaded), each round asks every query of each in
turn, so both sides share the machine's load; printed: median / p90 of each side and of the
per-query difference. ``--threads`` sets ``OMP_NUM_THREADS`` before the engine loads (one
process per setting); ``--query-chars`` cuts a query to its first N characters before it is
embedded (the lexical leg still reads it whole). ``--before`` adds a third side, paired in
the same rounds: the dense leg with the query handed to the embedder's thread by a plain
``submit`` (no start handshake: ``Embedder.query_soon`` before issue 17's latency fix), the
three sides taking turns in a rotating order.

    python3 ../shared/bench/make_home.py /tmp/h3k --sessions 3000
    printf 'model = "evidence"\\ndense = true\\n' > /tmp/h3k/talos.toml
    talos index --home /tmp/h3k
    python3 bench/hybrid_latency.py --data ../shared/bench --home /tmp/h3k --threads 1
    python3 bench/hybrid_latency.py --data ../shared/bench --home /tmp/h3k --threads 2

Queries: the first ``--queries`` / 2 LoCoMo dev questions and MemoryBank cn dev probes
(short, as an agent's task text is). The data is read in place.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def pct(xs: list[float], p: float) -> float:
    return sorted(xs)[min(len(xs) - 1, int(p * len(xs)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--query-chars", type=int, default=0)
    ap.add_argument("--before", action="store_true", help="add the plain-submit side")
    args = ap.parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from datasets import load_all

    from talos import Memory
    from talos import dense as D
    from talos import hybrid as H
    from talos.home import resolve_paths

    if args.query_chars:
        base = D.Embedder.queries

        def cut(self, texts):  # type: ignore[no-untyped-def]
            return base(self, [t[: args.query_chars] for t in texts])

        D.Embedder.queries = cut  # type: ignore[method-assign]
    by = {ds.name: ds for ds in load_all(args.data)}
    half = args.queries // 2
    qs = [q.query for _s, q in by["locomo"].questions("dev")][:half]
    qs += [q.query for _s, q in by["memorybank-cn"].questions("dev")][: args.queries - half]
    lex = Memory(args.home, model="evidence", dense=False)
    hyb = Memory(args.home, model="evidence", dense=True)
    sides = {"evidence": lex, "evidence + dense": hyb}
    if args.before:
        emb = D.Embedder()

        def submit(text):  # type: ignore[no-untyped-def]
            emb.load()
            if emb._pool is None:
                emb._pool = D.ThreadPoolExecutor(1, thread_name_prefix="talos-dense")
            return emb._pool.submit(emb.query, text)

        emb.query_soon = submit  # type: ignore[method-assign]
        plain = H.Leg(resolve_paths(args.home), embedder=emb)
        sides["dense, plain submit"] = Memory(args.home, model="evidence", dense=plain)
    for q in qs:  # warm-up: kept state, matrix, engine
        for mem in sides.values():
            mem.recall(q)
    times: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for r in range(args.rounds):
        for j, q in enumerate(qs):
            turn = (r + j) % len(names)
            for name in names[turn:] + names[:turn]:
                t0 = time.perf_counter()
                sides[name].recall(q)
                times[name].append((time.perf_counter() - t0) * 1000)
    t_lex = times["evidence"]
    diff = [b - a for a, b in zip(t_lex, times["evidence + dense"], strict=True)]
    t_emb: list[float] = []
    leg = hyb._leg
    assert leg is not None
    for _ in range(args.rounds):
        for q in qs:  # the query's embedding alone, for the break-down
            t0 = time.perf_counter()
            leg.embedder.query(q)
            t_emb.append((time.perf_counter() - t0) * 1000)
    print(
        f"{args.home} · {len(qs)} queries × {args.rounds} rounds · threads {args.threads}"
        f" · load {os.getloadavg()[0]:.1f}"
        + (f" · query cut {args.query_chars}" if args.query_chars else "")
    )
    rows: list[tuple[str, list[float]]] = [(name, times[name]) for name in names]
    rows.append(("added", diff))
    if args.before:
        before = [b - a for a, b in zip(t_lex, times["dense, plain submit"], strict=True)]
        rows.append(("added, plain submit", before))
    for name, xs in (*rows, ("query embedding", t_emb)):
        print(f"{name:>20}: median {statistics.median(xs):.1f} ms, p90 {pct(xs, 0.9):.1f} ms")
    for mem in sides.values():
        mem.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
