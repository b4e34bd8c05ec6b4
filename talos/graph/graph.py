"""The keyword graph (design §5): the nodes and the edges between them.

:class:`Graph` joins the records' run and the episodes' run (each an :class:`Incidence`, in
:mod:`talos.graph.incidence`) and gives the design §5.2 edges (:class:`LazyNeighbours`);
:func:`build_graph` merges duplicates first (:mod:`talos.graph.merge`). The ranking models that
spread activation over it are in :mod:`talos.ranking.activation`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from talos.graph.incidence import Incidence, Segment
from talos.graph.merge import merge_duplicates
from talos.model import Node

if TYPE_CHECKING:
    from talos.graph.episodes import EpisodeBlock

__all__ = ["EDGE_MIN", "Graph", "LazyNeighbours", "StackedNodes", "build_graph"]

EDGE_MIN = 2  #: two nodes are linked when they share at least this many keywords


@dataclass(slots=True)
class Graph:
    """Merged nodes and the keyword incidence every model spreads over (design §5.1, §5.2).

    The nodes are two runs: ``nodes[:records]`` the records of the view (facts, skills,
    conflict and override lines), ``nodes[records:]`` the merged episodes, which at scale are
    most of the graph and come from the persistent index as arrays (:mod:`talos.graph.episodes`);
    ``nodes`` may then be a lazy sequence that builds a :class:`Node` only when asked.

    Attributes:
        nodes: representatives in load order. records: how many come before the episodes.
        head, tail: the incidence of the records and of the episodes (``tail`` may be
            ``None``); node ``i >= records`` is ``tail``'s node ``i - records``.
        neighbours: for node ``i``, its design §5.2 edges ``[(j, w_ij), ...]`` in ascending
            ``j``, computed on first use (:class:`LazyNeighbours`).
        cache: values a model derives from the graph once (arrays, IDF), reused by every
            query while the graph is cached.
    """

    nodes: Sequence[Node]
    records: int
    head: Incidence
    tail: Incidence | None = None
    neighbours: Sequence[list[tuple[int, float]]] = field(default=(), repr=False)
    cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.neighbours:
            self.neighbours = LazyNeighbours(self, EDGE_MIN)

    def holders(self, kw: str) -> list[int]:
        """Ascending positions of the nodes holding ``kw`` (the posting list)."""
        out = self.head.holders(kw).tolist()
        if self.tail is not None:
            t = self.tail.holders(kw)
            if len(t):
                out += (t + self.records).tolist()
        return out

    def df(self, kw: str) -> int:
        """How many nodes hold ``kw``."""
        n = len(self.head.holders(kw))
        return n + (len(self.tail.holders(kw)) if self.tail is not None else 0)

    def keywords_of(self, i: int) -> list[str]:
        """Node ``i``'s keywords, sorted."""
        if i < self.records or self.tail is None:
            return self.head.keywords_of(i)
        return self.tail.keywords_of(i - self.records)

    def kind(self, i: int) -> str:
        """Node ``i``'s kind without building the node (episodes are never built for this)."""
        if i >= self.records:
            return "episode"
        kinds = self.cache.get("kinds")
        return kinds[i] if kinds is not None else self.nodes[i].kind

    def skill_mask(self) -> Any:
        """``bool[records]``: which records are skills (kept with the graph)."""
        got = self.cache.get("skill_mask")
        if got is None:
            got = self.cache["skill_mask"] = np.fromiter(
                (self.kind(i) == "skill" for i in range(self.records)),
                dtype=bool,
                count=self.records,
            )
        return got

    def skill_positions(self) -> Any:
        """Ascending positions of the skills among the records (``intp``, kept)."""
        got = self.cache.get("skill_positions")
        if got is None:
            got = self.cache["skill_positions"] = np.flatnonzero(self.skill_mask())
        return got

    def arrays(self) -> dict[str, Any]:
        """The incidence as arrays over one keyword numbering, built once per graph.

        ``segments``: ``[(first node, Segment), ...]``, the records' run then the episodes'
        (node-major entries, each node's keywords in string order). ``degree[i]``: keywords
        of node ``i`` (``float64[n]``); ``counts[i]``: the same as ``intp``; ``df[k]``: nodes
        holding keyword ``k`` (``float64[words]``); ``entries``: all entries.

        The episodes' segment is kept on the episode block's incidence, so a new graph after
        an edit of memory.md builds only the records' segment: no copy of half a million
        entries, and a hop reads the same episode arrays as before the edit (fresh copies
        made the next recall 40% slower at 30,000 sessions, bench/README "Scale"). When the
        head's ids extend the tail's (a :class:`Vocabulary` over the episode block) they are
        used as they are; otherwise they are mapped onto the tail's.
        """
        got = self.cache.get("arrays")
        if got is not None:
            return got
        head, tail = self.head, self.tail
        if tail is None:
            words = len(head.vocab)
            segments = [(0, Segment.of(head.node_ptr, head.entry_node(), head.node_kw))]
            degree, df = head.degree(), head.df(words)
        else:
            if head.base is tail:
                head_kw = head.node_kw
                words = len(head.vocab)
            else:
                lookup = tail.lookup
                extra: dict[str, int] = {}
                base = len(tail.vocab)
                remap = np.fromiter(
                    (
                        lookup[k] if k in lookup else extra.setdefault(k, base + len(extra))
                        for k in head.vocab
                    ),
                    dtype=np.int32,
                    count=len(head.vocab),
                )
                head_kw = remap[head.node_kw]
                words = base + len(extra)
            rest = tail._cached.get("segment")
            if rest is None:
                rest = tail._cached["segment"] = Segment.of(
                    tail.node_ptr, tail.entry_node(), tail.node_kw
                )
            segments = [
                (0, Segment.of(head.node_ptr, head.entry_node(), head_kw)),
                (self.records, rest),
            ]
            degree = np.concatenate([head.degree(), tail.degree()])
            df = tail.df(words) + np.bincount(head_kw, minlength=words)
        got = self.cache["arrays"] = {
            "segments": segments,
            "degree": degree,
            "df": df,
            "counts": np.concatenate([s.counts for _start, s in segments]),
            "entries": sum(len(s.kw) for _start, s in segments),
        }
        return got

    def entries(self) -> tuple[Any, Any]:
        """``(entry_node, entry_kw)`` over all nodes, node-major, the segments joined (a copy,
        for inspection and tests; the models read :meth:`arrays`)."""
        segments = self.arrays()["segments"]
        return (
            np.concatenate([s.node + start for start, s in segments]),
            np.concatenate([s.kw for _start, s in segments]),
        )


def build_graph(nodes: Sequence[Node], edge_min: int = EDGE_MIN) -> Graph:
    """Merge duplicates and index who holds which keyword (design §5.1, §5.2).

    Edges (``w = shared / max(|A|, |B|)`` for nodes sharing ``>= edge_min`` keywords) are
    computed from the incidence when a model asks (:class:`LazyNeighbours`), never by
    comparing all pairs. All nodes go into one run (``records = len(nodes)``).
    """
    merged = merge_duplicates(nodes)
    g = Graph(merged, len(merged), Incidence.of([n.keywords for n in merged]))
    if edge_min != EDGE_MIN:
        g.neighbours = LazyNeighbours(g, edge_min)
    return g


class LazyNeighbours(Sequence[list[tuple[int, float]]]):
    """The design §5.2 edges of each node, computed from the incidence the first time a model
    asks for them, then kept.

    Real conversation makes the keyword graph dense (about 400 neighbours a node at 3,000
    sessions, bench/README.md), so linking every pair up front costs more than most queries:
    models that spread over the incidence (``bipartite``) never ask, and ``classic`` asks only
    for the nodes it activates. Each list holds ``(j, w)`` in ascending ``j`` with
    ``w = shared / max(|A|, |B|)`` — the same values, in the same order, as linking all pairs.
    """

    def __init__(self, graph: Graph, edge_min: int) -> None:
        self._graph = graph
        self._edge_min = edge_min
        self._lists: dict[int, list[tuple[int, float]]] = {}

    def __len__(self) -> int:
        return len(self._graph.nodes)

    def __getitem__(self, i: int) -> list[tuple[int, float]]:  # type: ignore[override]
        got = self._lists.get(i)
        if got is None:
            got = self._lists[i] = self._link(i)
        return got

    def _link(self, i: int) -> list[tuple[int, float]]:
        g = self._graph
        degree = g.arrays()["degree"]
        shared: dict[int, int] = {}
        kws = g.keywords_of(i)
        for kw in kws:
            plist = g.holders(kw)
            if len(plist) == 1:
                continue
            for j in plist:
                shared[j] = shared.get(j, 0) + 1
        shared.pop(i, None)
        size_i = len(kws)
        m = self._edge_min
        return [(j, c / max(size_i, int(degree[j]))) for j, c in sorted(shared.items()) if c >= m]


class StackedNodes(Sequence[Node]):
    """The graph's nodes: the records (a list) followed by the block's merged episodes, each
    built on first access and then kept (:class:`talos.graph.Graph`)."""

    __slots__ = ("_built", "block", "records", "start")

    def __init__(self, records: Sequence[Node], block: EpisodeBlock, start: int) -> None:
        self.records = records
        self.block = block
        self.start = start
        self._built: dict[int, Node] = {}

    def __len__(self) -> int:
        return len(self.records) + len(self.block)

    @overload
    def __getitem__(self, i: int) -> Node: ...
    @overload
    def __getitem__(self, i: slice) -> list[Node]: ...
    def __getitem__(self, i: int | slice) -> Node | list[Node]:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step == 1 and stop <= len(self.records):  # the records: no episode built
                return list(self.records[start:stop])
            return [self[j] for j in range(start, stop, step)]
        n = len(self.records)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        if i < n:
            return self.records[i]
        got = self._built.get(i)
        if got is None:
            got = self._built[i] = self.block.node(i - n, self.start)
        return got

    def __iter__(self) -> Iterator[Node]:
        yield from self.records
        for i in range(len(self.records), len(self)):
            yield self[i]
