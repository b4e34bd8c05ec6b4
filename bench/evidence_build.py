#!/usr/bin/env python3
"""What the ``evidence`` model costs in :class:`talos.Memory` (issue 15): the in-process build of
its kept state (the term index over the graph's nodes and the contiguity edges of memory.md,
``talos.evidence.of_nodes``) on a ``make_home.py`` home, and a recall once it is kept, beside
the default model's recall in the same run.

    python3 bench/evidence_build.py --data ../shared/bench --sessions 3000 30000

Homes are generated once into ``--cache`` (default: a folder under the system's temp dir).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datasets import DEFAULT_DATA
from scale import make_home

from talos import Memory

QUERIES = [
    "merge two csv files on the user id column",
    "deploy the billing service to staging",
    "fix the flaky login test",
    "写一个排序函数",
    "restoring databases from a dump",
]


def measure(home: Path, reps: int) -> dict[str, float]:
    """Build time (s, median of ``reps`` fresh builds over one graph), nodes, entries, edges,
    and median recall time (ms) of ``evidence`` once kept and of the default model."""
    mem = Memory(home, model="evidence")
    graph = mem.graph()
    builds = []
    for _ in range(reps):
        mem._kept.evidence = None
        t = time.perf_counter()
        index, edges = mem._kept.evidence_index(graph)
        builds.append(time.perf_counter() - t)
    out = {
        "nodes": index.n,
        "entries": len(index.term),
        "edges": edges.edges,
        "build s": statistics.median(builds),
    }
    base = Memory(home)
    for name, m in (("evidence", mem), ("default", base)):
        m.recall(QUERIES[0])  # warm: graph and kept state
        times = []
        for _ in range(3):
            for q in QUERIES:
                t = time.perf_counter()
                m.recall(q)
                times.append(time.perf_counter() - t)
        out[f"{name} recall ms"] = 1000 * statistics.median(times)
        m.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--sessions", type=int, nargs="+", default=[3000, 30000])
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "talos-evb")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    a.cache.mkdir(parents=True, exist_ok=True)
    for n in a.sessions:
        home = make_home(a.data, a.cache, n)
        got = measure(home, a.reps)
        print(n, "sessions:", ", ".join(f"{k} {v:.3g}" for k, v in got.items()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
