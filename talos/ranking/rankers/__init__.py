"""The ranker protocol: how :class:`talos.Memory` ranks, picks and explains, one model family
per module, chosen once when the Memory is made (:func:`ranker_for`).

- :mod:`talos.ranking.rankers.classic`: the reference model (``classic``), spreading over the design
  §5.2 keyword edges; golden-exact (``tests/test_golden.py``) and the rows of the reference
  (the top ``k`` above the threshold, the reference's body gate).
- :mod:`talos.ranking.rankers.evidence`: the default model (``evidence``): BM25 evidence seeds on
the
  analyzer's terms, hops over the term graph and the contiguity edges, delivered by the
  relevance floor; the dense leg (:mod:`talos.ranking.hybrid`) is fused behind it when it is on.

A ranker works on the graph of a view (:meth:`talos.Memory.view`); what a recall then does
with its rows (the block, the budget, the trace, usage) is the Memory's, the same for every
model. The dense leg's query vector is embedded while the view is looked at: :meth:`start`
comes first, then the graph, then :meth:`Ranker.select` or :meth:`Ranker.explain`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeGuard

if TYPE_CHECKING:
    from concurrent.futures import Future

    import numpy as np

    from talos.graph.graph import Graph
    from talos.home import Paths
    from talos.model import Node
    from talos.ranking import hybrid
    from talos.ranking.activation import Activation, Model
    from talos.results import Row, WhyNot
    from talos.selection.relevance import Gate
    from talos.view.kept import KeptState

__all__ = ["Asked", "Picked", "Ranker", "dense_asked", "is_leg", "ranker_for"]


class Picked(NamedTuple):
    """What :meth:`Ranker.select` gives: ``rows`` ``[(score, node position, body), ...]`` in
    block order; ``legs``, with the dense leg, each leg's rank and score per node position;
    ``weak``: the query gate found no evidence for the query, so an automatic recall would
    have delivered nothing and these rows (asked for) are weak matches (design §6.1 rule 5)."""

    rows: list[tuple[float, int, bool]]
    legs: dict[int, dict[str, Any]]
    weak: bool = False


@dataclass(slots=True)
class Asked:
    """A query as a ranker received it (:meth:`Ranker.start`): its ``text`` and, when the
    dense leg fuses this call, the query's ``vector`` being embedded (else ``None``)."""

    text: str
    vector: Future[np.ndarray] | None = None


class Ranker(Protocol):
    """One model family's ranking over a view's graph (:func:`ranker_for`).

    Attributes:
        model: the model in use (:data:`talos.ranking.activation.MODELS`), with its constants.
    """

    model: Model

    def activation(self, graph: Graph, query: str) -> Activation:
        """The model's activation of ``query`` over ``graph``, as
        :func:`talos.ranking.activation.rank` ranks it with ``model.thresh``; no side effects."""
        ...

    def start(self, query: str, dense: bool) -> Asked:
        """Begin ``query``: with ``dense`` (fuse the dense leg this call), its vector is
        embedded in the embedder's thread; asked for where the leg cannot run, one warning
        per ranker and the lexical ranking."""
        ...

    def select(self, graph: Graph, asked: Asked, k: int, automatic: bool = False) -> Picked:
        """The rows a recall of at most ``k`` rows delivers, before the budget (design §6.1);
        ``automatic``: memory injected into a prompt nobody asked about (the hooks), where the
        query gate may empty the block; asked (the default), it marks the rows weak."""
        ...

    def gate(self, graph: Graph, query: str) -> Gate | None:
        """Where the query gate stands for ``query`` over ``graph`` (design §6.1 rule 5), or
        ``None`` for a model without it; no side effects."""
        ...

    def explain(self, graph: Graph, asked: Asked, k: int, cap: int) -> list[Row]:
        """The first ``k`` rows of the ranking with how each was reached (design §6.2), without
        their heading; ``cap``: a recall's cap on rows (:attr:`talos.Memory.k`), where a
        model that marks its cut marks ``beyond-k``."""
        ...

    def left_out(self, graph: Graph, query: str, k: int, cap: int, dense: bool) -> list[WhyNot]:
        """The ranked or reached rows a recall leaves out, each with its reason (design §6.2
        ``--why-not``): ``beyond-k``, ``below-threshold`` or ``below-floor``."""
        ...

    def shares(self, query: str) -> Callable[[Node], bool]:
        """Whether a record matches ``query`` the way the model matches (keywords or analyzer
        terms): why-not names only the left-out records that do."""
        ...

    def prepare(self, graph: Graph, dense: bool) -> None:
        """Build what ranking ``graph`` reads (``talos index``), and with ``dense`` load the
        leg's model and the graph's vectors."""
        ...

    def settle(self, graph: Graph) -> None:
        """Build what ranking ``graph`` reads, in an idle long-lived process."""
        ...

    def embed(
        self,
        nodes: Callable[[], list[Node]],
        progress: Callable[[int, int], None] | None,
        dense: bool,
    ) -> int | None:
        """Embed the texts of ``nodes()`` without a vector (``talos index``); how many, or
        None when the leg is off or cannot run."""
        ...

    def close(self) -> None:
        """Close what the ranker holds open (the dense leg's cache)."""
        ...


def ranker_for(
    model: Model, kept: KeptState, paths: Paths, dense: bool | hybrid.Leg | None = None
) -> Ranker:
    """The ranker of ``model``'s family: :class:`~talos.ranking.rankers.evidence.EvidenceRanker` for
    a model over terms (:data:`talos.ranking.activation.TERMS`), else
    :class:`~talos.ranking.rankers.classic.ClassicRanker`. ``kept``: the Memory's kept state (the
    term
    index and contiguity edges per graph); ``paths``: the home (the dense leg's cache);
    ``dense``: Memory's argument, a dense leg given to it (its embedder and vector cache) is
    the ranker's."""
    from talos.ranking.activation import TERMS

    if model.over == TERMS:
        from talos.ranking.rankers.evidence import EvidenceRanker

        return EvidenceRanker(model, kept, paths, dense if is_leg(dense) else None)
    from talos.ranking.rankers.classic import ClassicRanker

    return ClassicRanker(model)


def is_leg(dense: object) -> TypeGuard[hybrid.Leg]:
    """Whether ``dense`` (Memory's argument) is a :class:`talos.ranking.hybrid.Leg`; ``None`` and
    booleans are not, and then :mod:`talos.ranking.hybrid` (with :mod:`talos.ranking.dense`) is not
    imported:
    a lexical recall paid 17 ms for it (``tests/test_import_cost.py``)."""
    if dense is None or isinstance(dense, bool):
        return False
    from talos.ranking import hybrid

    return isinstance(dense, hybrid.Leg)


def dense_asked(paths: Paths) -> bool:
    """:func:`talos.ranking.hybrid.asked` for the home of ``paths``: ``False`` without a ``dense``
    key
    in talos.toml (the leg is off by default) without importing :mod:`talos.ranking.hybrid`.

    Raises:
        InputError: ``dense`` is not true or false (from :func:`talos.ranking.hybrid.asked`).
    """
    if "dense" not in paths.config:
        return False
    from talos.ranking import hybrid

    return hybrid.asked(paths.config, paths.home)
