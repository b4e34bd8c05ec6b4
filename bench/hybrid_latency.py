#!/usr/bin/env python3
"""What the dense leg adds to a warm recall (issue 17's cost line: target ≤ 15 ms), measured
through ``Memory.recall`` on a real home, paired in one process.

Two ``Memory`` objects on the same home (its vectors embedded by ``talos index``): the
``evidence`` model alone and with the dense leg. After one warm-up pass of every query on
each (the kept state, the matrix, the engine loaded), each round asks every query of each in
turn, so both sides share the machine's load; printed: median / p90 of each side and of the
per-query difference. ``--threads`` sets ``OMP_NUM_THREADS`` before the engine loads (one
process per setting); ``--query-chars`` cuts a query to its first N characters before it is
embedded (the lexical leg still reads it whole). ``--parts`` adds one more round of the
dense side alone, timed inside (perf_counter): the engine's call in the embedder's thread,
the lexical work it overlaps (from ``query_soon`` to the wait for the vector), the wait, and
the leg's work after it (``lexical_evidence``, ``Leg.rank``: scoring and fusion).
Each side is also timed in CPU time (``time.process_time``: the process, every thread), which
the machine's other load stretches far less than wall time: the added CPU time bounds what the
leg adds on an idle core.

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


def parts(hyb, qs):  # type: ignore[no-untyped-def]
    """One round of ``hyb.recall`` over ``qs`` with its parts timed (medians printed)."""
    from talos.ranking import dense as D
    from talos.ranking.rankers.evidence import EvidenceRanker as ER

    at: dict[str, float] = {}
    queries, soon, fused = D.Embedder.queries, ER.start, ER._fused

    def t_queries(self, texts):  # type: ignore[no-untyped-def]
        at["e0"] = time.perf_counter()
        out = queries(self, texts)
        at["e1"] = time.perf_counter()
        return out

    def t_soon(self, *a):  # type: ignore[no-untyped-def]
        out = soon(self, *a)
        at["s1"] = time.perf_counter()
        return out

    def t_fused(self, graph, asked, *a):  # type: ignore[no-untyped-def]
        at["f0"] = time.perf_counter()
        if asked.vector is not None:
            asked.vector.result()
        at["f1"] = time.perf_counter()
        out = fused(self, graph, asked, *a)
        at["f2"] = time.perf_counter()
        return out

    D.Embedder.queries, ER.start, ER._fused = t_queries, t_soon, t_fused
    got: dict[str, list[float]] = {}
    try:
        for q in qs:
            t0 = time.perf_counter()
            hyb.recall(q)
            t1 = time.perf_counter()
            for name, ms in (
                ("recall", t1 - t0),
                ("engine, in its thread", at["e1"] - at["e0"]),
                ("lexical, overlapped", at["f0"] - at["s1"]),
                ("wait for the vector", at["f1"] - at["f0"]),
                ("leg after the wait", at["f2"] - at["f1"]),
            ):
                got.setdefault(name, []).append(ms * 1000)
    finally:
        D.Embedder.queries, ER.start, ER._fused = queries, soon, fused
    for name, xs in got.items():
        print(f"{name:>22}: median {statistics.median(xs):.2f} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--query-chars", type=int, default=0)
    ap.add_argument(
        "--spin",
        type=int,
        default=0,
        help="GOMP_SPINCOUNT for the engine's threads instead of the passive wait",
    )
    ap.add_argument("--parts", action="store_true", help="time the hybrid recall's parts")
    args = ap.parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    if args.spin:
        os.environ["GOMP_SPINCOUNT"] = str(args.spin)
    else:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from datasets import load_all

    from talos import Memory
    from talos.ranking import dense as D

    if D.unavailable():
        print(D.unavailable(), file=sys.stderr)
        return 1
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
    for q in qs:  # warm-up: kept state, matrix, engine
        lex.recall(q)
        hyb.recall(q)
    t_lex: list[float] = []
    t_hyb: list[float] = []
    c_lex: list[float] = []
    c_hyb: list[float] = []
    for _ in range(args.rounds):
        for q in qs:
            t0, c0 = time.perf_counter(), time.process_time()
            lex.recall(q)
            t1, c1 = time.perf_counter(), time.process_time()
            hyb.recall(q)
            t2, c2 = time.perf_counter(), time.process_time()
            t_lex.append((t1 - t0) * 1000)
            t_hyb.append((t2 - t1) * 1000)
            c_lex.append((c1 - c0) * 1000)
            c_hyb.append((c2 - c1) * 1000)
    diff = [b - a for a, b in zip(t_lex, t_hyb, strict=True)]
    c_diff = [b - a for a, b in zip(c_lex, c_hyb, strict=True)]
    t_emb: list[float] = []
    c_emb: list[float] = []
    leg = hyb._ranker.leg
    assert leg is not None
    for _ in range(args.rounds):
        for q in qs:  # the query's embedding alone, for the break-down
            t0, c0 = time.perf_counter(), time.process_time()
            leg.embedder.query(q)
            t_emb.append((time.perf_counter() - t0) * 1000)
            c_emb.append((time.process_time() - c0) * 1000)
    print(
        f"{args.home} · {len(qs)} queries × {args.rounds} rounds · threads {args.threads}"
        f" · load {os.getloadavg()[0]:.1f}"
        + (f" · query cut {args.query_chars}" if args.query_chars else "")
    )
    rows = (("evidence", t_lex), ("evidence + dense", t_hyb), ("added", diff))
    for name, xs in (*rows, ("query embedding", t_emb)):
        print(f"{name:>18}: median {statistics.median(xs):.1f} ms, p90 {pct(xs, 0.9):.1f} ms")
    # CPU time of the process (both threads), which the other processes' load does not
    # stretch the way it stretches wall time: the added CPU time is what the leg costs on an
    # idle core, an upper bound of its added wall time there (the overlap only hides work).
    print("CPU time (process, every thread):")
    rows = (("evidence", c_lex), ("evidence + dense", c_hyb), ("added", c_diff))
    for name, xs in (*rows, ("query embedding", c_emb)):
        print(f"{name:>18}: median {statistics.median(xs):.1f} ms, p90 {pct(xs, 0.9):.1f} ms")
    if args.parts:
        parts(hyb, qs)
    lex.close()
    hyb.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
