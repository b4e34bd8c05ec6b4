"""The ``classic`` ranker: the reference model (design §5.3), golden-exact.

Seeds are the share of the query's keywords (design §4) a node holds;
:data:`~talos.ranking.activation.HOPS`
hops spread them along the design §5.2 edges (:func:`talos.ranking.activation.classic`). A recall
delivers the top ``k`` above the threshold, and the best skill of the full ranking its body
by the reference's gate (:func:`talos.selection.rows.select`). The dense leg fuses with the
``evidence`` ranking only: asked for here, it warns once and the recall is this one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from talos.ranking.activation import Activation, Model, contributions, rank
from talos.ranking.rankers import Asked, Picked
from talos.results import Row, WhyNot
from talos.selection.rows import left_out, select
from talos.text import keywords
from talos.warn import warn

if TYPE_CHECKING:
    from talos.graph.graph import Graph
    from talos.model import Node

__all__ = ["ClassicRanker"]


class ClassicRanker:
    """A ranker over the graph's keywords (:class:`talos.ranking.rankers.Ranker`):
    ``model.activate``
    is ``(graph, keywords(query)) -> Activation``."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._warned = False

    def activation(self, graph: Graph, query: str) -> Activation:
        """The model's activation of ``keywords(query)`` over ``graph``."""
        return self.model.activate(graph, keywords(query))

    def start(self, query: str, dense: bool) -> Asked:
        """``query``, lexical: the dense leg asked for warns once what to do."""
        self._no_leg(dense)
        return Asked(query)

    def _no_leg(self, dense: bool) -> None:
        if dense and not self._warned:
            from talos.ranking import hybrid  # the message only

            self._warned = True
            needs, todo = hybrid.model_problem(self.model.name)
            warn(f"{needs}: {todo}; recalled with {self.model.name}, without the leg")

    def select(self, graph: Graph, asked: Asked, k: int, automatic: bool = False) -> Picked:
        """The top ``k`` rows above the threshold and the body gate (design §6.1); the
        reference has no query gate, so ``automatic`` changes nothing."""
        return Picked(select(graph, self.activation(graph, asked.text), self.model, k), {})

    def gate(self, graph: Graph, query: str) -> None:
        """None: the reference has no query gate."""
        return None

    def explain(self, graph: Graph, asked: Asked, k: int, cap: int) -> list[Row]:
        """The first ``k`` ranked rows, each with its seed, the gain of each hop and the edges
        that carried it (:func:`talos.ranking.activation.contributions`); ``cap`` is not marked."""
        act = self.activation(graph, asked.text)
        out: list[Row] = []
        for a, i in rank(act, self.model.thresh)[: max(k, 0)]:
            n = graph.nodes[i]
            seed, gains, edges = contributions(graph, act, i)
            out.append(Row(round(a, 2), n.kind, n.with_members(), n, a, seed, gains, edges))
        return out

    def left_out(self, graph: Graph, query: str, k: int, cap: int, dense: bool) -> list[WhyNot]:
        """The ranked rows after the first ``k`` (``beyond-k``, "rank N") and the active ones
        at or under the threshold (``below-threshold``) (:func:`talos.selection.rows.left_out`)."""
        beyond, below = left_out(self.activation(graph, query), self.model, k)
        out = [WhyNot(graph.nodes[i], "beyond-k", f"rank {r}", a) for i, r, a in beyond]
        out += [WhyNot(graph.nodes[i], "below-threshold", "", a) for i, a in below]
        return out

    def shares(self, query: str) -> Callable[[Node], bool]:
        """Whether a node holds one of the query's keywords (design §4)."""
        qk = keywords(query)
        return lambda n: bool(n.keywords & qk)

    def prepare(self, graph: Graph, dense: bool) -> None:
        """Nothing beyond the graph itself."""

    def settle(self, graph: Graph) -> None:
        """Nothing beyond the graph itself."""

    def embed(
        self,
        nodes: Callable[[], list[Node]],
        progress: Callable[[int, int], None] | None,
        dense: bool,
    ) -> int | None:
        """None: the leg does not run with this model (warned once when asked for)."""
        self._no_leg(dense)
        return None

    def close(self) -> None:
        """Nothing held open."""
