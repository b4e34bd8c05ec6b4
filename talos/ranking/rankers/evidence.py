"""The ``evidence`` ranker (the default model), with the dense leg fused behind it.

BM25 evidence seeds on the analyzer's terms (design §4.1), then hops over the node–term graph
and the contiguity edges (:mod:`talos.ranking.evidence`), over the term index and edges the kept
state holds per graph (:meth:`talos.view.kept.KeptState.evidence_index`), with the small-home rule
(:data:`talos.ranking.evidence.SMALL_HOME`). Every node the query reaches is ranked; the relevance
floor decides what a recall delivers (:func:`talos.selection.rows.select_evidence`, design §6.1
rule 5), and explain marks where it cuts.

With the dense leg on (:mod:`talos.ranking.hybrid`), the rows are cut from the fused
ranking (:func:`talos.ranking.hybrid.select`), each with both legs' rank and score; the query's
vector is embedded while the view is looked at (:meth:`EvidenceRanker.start`). Where the leg
cannot run (not installed, vectors missing, the model fails to load), one warning per ranker
and the lexical ranking.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from talos.errors import TalosError
from talos.ranking.activation import Activation, DenseActivation, Model
from talos.ranking.analyzer import analyze, analyze_written
from talos.ranking.evidence import (
    PRIOR,
    SMALL_HOME,
    Evidence,
    TermIndex,
    body_evidence,
    matching_text,
)
from talos.ranking.rankers import Asked, Picked
from talos.results import Row, WhyNot
from talos.selection.relevance import Gate, deliver
from talos.selection.relevance import gate as query_gate
from talos.selection.rows import evidence_order, select_evidence
from talos.warn import warn

if TYPE_CHECKING:
    from talos.graph.graph import Graph
    from talos.home import Paths
    from talos.model import Node
    from talos.ranking import hybrid
    from talos.ranking.contiguity import Links
    from talos.ranking.dense import Fusion
    from talos.view.kept import KeptState

__all__ = ["EvidenceRanker"]


class EvidenceRanker:
    """A ranker over analyzer terms (:class:`talos.ranking.rankers.Ranker`): ``model.activate`` is
    ``(term_index, contiguity_edges, query_terms, at_least) -> Evidence``.

    Args:
        model: the model (``evidence``). kept: the Memory's kept state. paths: the home (the
        dense leg's vector cache). leg: a dense leg given to the Memory, else made on first
        use.
    """

    def __init__(
        self, model: Model, kept: KeptState, paths: Paths, leg: hybrid.Leg | None = None
    ) -> None:
        self.model = model
        self._kept = kept
        self._paths = paths
        #: The dense leg, once a call fused it (or as given).
        self.leg = leg
        self._warned = False

    def terms(self, graph: Graph, terms: list[str]) -> tuple[TermIndex, Links, Evidence]:
        """The model's activation of the analyzed query ``terms`` over the term index and
        contiguity edges the kept state holds for ``graph`` (and those two)."""
        index, edges = self._kept.evidence_index(graph)
        return index, edges, self.model.activate(index, edges, terms, SMALL_HOME)

    def activation(self, graph: Graph, query: str) -> Activation:
        """The seeds and final levels of the evidence (a
        :class:`~talos.ranking.activation.DenseActivation`)."""
        ev = self.terms(graph, analyze(query))[2]
        return DenseActivation([ev.seeds, ev.final])

    # -- the dense leg (talos.ranking.hybrid) -----------------------------------------------------

    def _leg(self, dense: bool) -> hybrid.Leg | None:
        """The dense leg when this call fuses it, or None: off, or asked for where it cannot
        run (one warning: the install command), and the ranking is lexical."""
        if not dense:
            return None
        from talos.ranking import hybrid  # imported on use: a lexical recall never loads the leg

        if self.leg is None:
            why = hybrid.available()
            if why:
                self._warn(f"{why}; recalled with the lexical leg only")
                return None
            self.leg = hybrid.Leg(self._paths)
        return self.leg

    def _warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            warn(message)

    def start(self, query: str, dense: bool) -> Asked:
        """``query``, its vector started in the embedder's thread when the leg fuses this
        call (it overlaps the lexical leg); no vector when its model cannot load (warned)."""
        leg = self._leg(dense)
        if leg is None:
            return Asked(query)
        from talos.ranking import hybrid

        try:
            return Asked(query, leg.embedder.query_soon(hybrid.query_text(query)))
        except TalosError as e:
            self._warn(f"{e}; recalled with the lexical leg only")
            return Asked(query)

    def _fused(self, graph: Graph, asked: Asked, ev: Evidence, edges: Links) -> Fusion | None:
        """The fused ranking once the lexical leg is done, or None (lexical)."""
        if self.leg is None or asked.vector is None:
            return None
        from talos.ranking import hybrid

        try:
            sure = hybrid.lexical_evidence(ev, edges)
            return self.leg.rank(graph, asked.vector.result(), ev, sure)
        except TalosError as e:
            self._warn(f"{e}; recalled with the lexical leg only")
            return None

    # -- ranking ---------------------------------------------------------------------------

    def select(self, graph: Graph, asked: Asked, k: int, automatic: bool = False) -> Picked:
        """The first ``k`` rows through the relevance floor and the body gate
        (:func:`talos.selection.rows.select_evidence`); with the leg, cut from the fused ranking
        (:func:`talos.ranking.hybrid.select`), each row's legs beside. ``automatic``: the query
        gate empties the block (the hooks); asked, it marks the rows weak."""
        terms = analyze(asked.text)
        index, edges, ev = self.terms(graph, terms)
        body = body_evidence(index, terms, at_least=SMALL_HOME, prior=PRIOR)
        fusion = self._fused(graph, asked, ev, edges)
        if fusion is None:
            rows, weak = select_evidence(
                graph, index, ev, body, k, self.model, terms, automatic=automatic
            )
            return Picked(rows, {}, weak)
        from talos.ranking import hybrid

        gate = hybrid.gate_for(asked.text)
        rows, weak = hybrid.select(
            graph, index, edges, ev, body, fusion, k, gate, self.model, terms, automatic
        )
        return Picked(rows, {r.node: hybrid.legs_of(r) for r in fusion.rows(k)}, weak)

    def gate(self, graph: Graph, query: str) -> Gate:
        """The query gate's values for ``query`` (:func:`talos.selection.relevance.gate`)."""
        return query_gate(self.terms(graph, analyze(query))[2])

    def explain(self, graph: Graph, asked: Asked, k: int, cap: int) -> list[Row]:
        """The first ``k`` rows of the ranking (the fused one with the leg), each marked where
        a recall of ``cap`` rows cuts it (the relevance floor as an asked recall applies it, or
        beyond ``cap``; the query gate is :meth:`gate`'s), with the
        query's terms it holds (:class:`~talos.results.Row`'s last fields)."""
        terms_q = analyze(asked.text)
        index, edges, ev = self.terms(graph, terms_q)
        fusion = self._fused(graph, asked, ev, edges)
        if fusion is not None:
            return self._explain_fused(graph, asked.text, k, cap, index, edges, ev, fusion)
        order = evidence_order(ev.final)
        shown = order[: max(k, 0)].tolist()
        kept = set(deliver(ev, order[:cap].tolist(), automatic=False))  # as recall asks
        written = analyze_written(asked.text)
        out: list[Row] = []
        for rank_no, i in enumerate(shown):
            n = graph.nodes[i]
            final, seed = float(ev.final[i]), float(ev.seeds[i])
            score = final * ev.scale
            cut = "" if i in kept else ("floor" if rank_no < cap else "beyond-k")
            row = Row(round(score, 2), n.kind, n.with_members(), n, final, seed, [final - seed])
            row.evidence, row.cut, row.terms = score, cut, _held(index, i, written)
            out.append(row)
        return out

    def _explain_fused(
        self,
        graph: Graph,
        query: str,
        k: int,
        cap: int,
        index: TermIndex,
        edges: Links,
        ev: Evidence,
        fusion: Fusion,
    ) -> list[Row]:
        """:meth:`explain` with the dense leg: the fused ranking's first ``k`` rows, each
        with both legs' rank and score, the rules that cut it (:attr:`Row.legs`, from
        :func:`talos.ranking.hybrid.verdicts` for a recall of ``cap`` rows) and its cut."""
        from talos.ranking import hybrid

        gate = hybrid.gate_for(query)
        cut_by, cosine_floor = hybrid.verdicts(index, edges, ev, fusion, cap, k, gate)
        written = analyze_written(query)
        out: list[Row] = []
        for j, leg_row in enumerate(fusion.rows(max(k, 0))):
            i = leg_row.node
            n = graph.nodes[i]
            final, seed = float(ev.final[i]), float(ev.seeds[i])
            fused = round(leg_row.score, 3)
            row = Row(fused, n.kind, n.with_members(), n, final, seed, [final - seed])
            row.evidence, row.cut = final * ev.scale, hybrid.cut_of(cut_by[j])
            row.terms = _held(index, i, written)
            row.legs = hybrid.legs_of(leg_row)
            row.legs["cut_by"] = cut_by[j]
            row.legs["cosine_floor"] = None if "k" in cut_by[j] else cosine_floor
            out.append(row)
        return out

    def left_out(self, graph: Graph, query: str, k: int, cap: int, dense: bool) -> list[WhyNot]:
        """The rows of explain's first ``max(k, cap)`` a recall leaves out that hold a query
        term: ``below-floor`` ("evidence 0.60") or ``beyond-k`` ("rank 7"); a row reached by
        spreading alone shares no term and is not named. With the leg, the fused ranking's
        rows, each with its legs and the rule that cut it in words (:func:`_why_fused`)."""
        out = []
        rows = self.explain(graph, self.start(query, dense), max(k, cap), cap)
        for no, r in enumerate(rows, 1):
            if r.legs is not None:  # the dense leg: a row it ranks among the first 5 too
                from talos.ranking import hybrid

                if r.cut == "floor" or (r.cut and r.seed > 0):
                    out.append(_why_fused(r, no, hybrid.gate_for(query), cap))
            elif r.cut and r.seed > 0:
                floor = r.cut == "floor"
                out.append(WhyNot(r.node, "below-floor" if floor else "beyond-k",
                                  f"evidence {r.evidence:.2f}" if floor else f"rank {no}",
                                  round(r.evidence or 0.0, 2)))  # fmt: skip
        return out

    def shares(self, query: str) -> Callable[[Node], bool]:
        """Whether a node's matching text holds one of the query's analyzed terms."""
        terms = frozenset(analyze(query))
        return lambda n: not terms.isdisjoint(analyze(matching_text(n)))

    def prepare(self, graph: Graph, dense: bool) -> None:
        """The term index and edges of ``graph`` (stored: :mod:`talos.view.termrows`); with
        ``dense``, the leg's model and the graph's vector matrix (embedding at most
        :data:`talos.ranking.hybrid.INLINE` missing texts)."""
        self._kept.evidence_index(graph)
        leg = self._leg(dense)
        if leg is not None:
            try:
                leg.embedder.load()
                leg.kept(graph)
            except TalosError as e:
                self._warn(f"{e}; recalled with the lexical leg only")

    def settle(self, graph: Graph) -> None:
        """The term index and edges of ``graph``."""
        self._kept.evidence_index(graph)

    def embed(
        self,
        nodes: Callable[[], list[Node]],
        progress: Callable[[int, int], None] | None,
        dense: bool,
    ) -> int | None:
        """Embed what has no vector yet with the leg (:meth:`talos.ranking.hybrid.Leg.index`)."""
        leg = self._leg(dense)
        return None if leg is None else leg.index(nodes(), progress)

    def close(self) -> None:
        """Close the leg's vector cache (it reopens on demand)."""
        if self.leg is not None:
            self.leg.close()


def _held(index: TermIndex, i: int, written: list[tuple[str, str]]) -> list[dict[str, str]]:
    """The query's terms node ``i`` holds, each once, as ``{"written", "analyzed"}``
    (:func:`talos.ranking.analyzer.analyze_written`; ``answers`` → ``answer``), in query order."""
    held = {index.vocab[t] for t in index.term[index.ptr[i] : index.ptr[i + 1]]}
    return list({(w, t): {"written": w, "analyzed": t} for w, t in written if t in held}.values())


def _why_fused(row: Row, rank_no: int, gate: float, k: int) -> WhyNot:
    """why-not's entry for a row of the fused ranking (``rank_no``: 1-based) that a recall
    leaves out, saying which rule cut it (:func:`talos.ranking.hybrid.verdicts`; ``gate``: the
    query's dense gate, :func:`talos.ranking.hybrid.gate_for`; ``k``: the recall's cap on rows)."""
    from talos.ranking import hybrid

    legs = row.legs or {}
    score = round(row.evidence or 0.0, 2) if row.seed > 0 else None  # None: no query term
    cut_by = legs.get("cut_by") or []
    if "k" in cut_by:
        detail = f"fused rank {rank_no}: a recall delivers at most {k} rows"
        return WhyNot(row.node, "beyond-k", detail, score, legs)
    cosine = (legs.get("dense") or {}).get("score")
    if "gate" in cut_by and cosine is not None:
        dense = f"the dense gate (cosine {cosine:.3f} < {gate:.3f})"
    elif "margin" in cut_by and cosine is not None:
        floor = float(legs.get("cosine_floor") or 0.0)
        dense = (
            f"the dense margin (cosine {cosine:.3f} < {floor:.3f}, {hybrid.MARGIN} below "
            f"the best {floor + hybrid.MARGIN:.3f})"
        )
    else:
        dense = ""
    lexical = f"evidence {row.evidence:.2f}" if row.seed > 0 else "no query term"
    detail = f"fused rank {rank_no}: the lexical floor ({lexical})"
    detail += f" and {dense}" if dense else "; the dense leg does not rank it"
    return WhyNot(row.node, "below-floor", detail, score, legs)
