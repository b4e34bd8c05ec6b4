"""The keyword graph (SPEC §5): nodes, the keywords they hold, and the edges between them.

:class:`Incidence` and :class:`Vocabulary` say which node holds which keyword, as arrays;
:class:`Graph` joins the records' run and the episodes' run and gives the SPEC §5.2 edges
(:class:`LazyNeighbours`); merging duplicates (SPEC §5.1) is here too. The ranking models that
spread activation over it are in :mod:`talos.activation`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from talos.model import Node

__all__ = [
    "EDGE_MIN",
    "Graph",
    "Incidence",
    "Segment",
    "Vocabulary",
    "build_graph",
    "merge_duplicates",
    "merge_group",
    "merge_groups",
    "merge_members",
]

EDGE_MIN = 2  #: two nodes are linked when they share at least this many keywords


def merge_duplicates(
    nodes: Sequence[Node], memo: dict[tuple[Node, ...], Node] | None = None
) -> list[Node]:
    """Merge nodes of the same kind whose keyword sets are equal (SPEC §5.1).

    Equal keyword sets mean edge weight 1.0 both ways: left apart, N copies of one retried
    session pull ``(1 + DECAY·(N-1))^HOPS`` times as hard (the reference measured four copies
    of one stale session filling the top 5). The representative is the **last** node in load
    order (the newest session, the one that finished); the group keeps the position of its
    first node. The others ride along as ``members``, oldest first, de-duplicated by identity;
    a member identical to the representative is not kept — merging must not lose content
    (``Alice trusts Bob`` / ``Bob trusts Alice``, pinned by ``tests/test_semantics.py``).

    Args:
        nodes: in load order. memo: merged nodes of earlier calls by their group (the same
            node objects, in order); a caller that keeps its nodes between calls (an edit
            reuses every unchanged fact's node) passes one, and gets the same merged nodes.

    Returns:
        New representative nodes (copies; the input is not modified) in group order.
    """
    out: list[Node] = []
    fresh: dict[tuple[Node, ...], Node] = {}
    # a fact's key is its keyword set, any other's (kind, keywords): never equal to a fact's,
    # and no tuple per fact (1,000,000 of them in a big memory.md)
    keys = [n.keywords if n.kind == "fact" else (n.kind, n.keywords) for n in nodes]
    for group in merge_groups(keys):
        out.append(merge_group(nodes, group, memo, fresh))
    if memo is not None:
        memo.clear()
        memo.update(fresh)
    return out


def merge_group(
    nodes: Sequence[Node],
    group: Sequence[int],
    memo: Mapping[tuple[Node, ...], Node] | None = None,
    fresh: dict[tuple[Node, ...], Node] | None = None,
) -> Node:
    """The node standing for one group of :func:`merge_groups` (SPEC §5.1): the node itself
    when it is alone and carries no members, else a copy of the last one with the others as
    ``members`` and the first one's ``order``. Shared by :func:`merge_duplicates` and the
    edit patch (:mod:`talos.patch`), so both merge alike.

    Args:
        nodes: the nodes ``group`` indexes. group: ascending positions of equal
            ``(kind, keywords)``. memo: merged nodes by their group's node tuple, reused when
            found. fresh: receives ``{node tuple: merged node}`` for every merged group.
    """
    rep = nodes[group[-1]]
    if len(group) == 1 and not rep.members:
        return rep
    key = tuple(nodes[i] for i in group)
    merged = memo.get(key) if memo is not None else None
    if merged is None:
        merged = _copy(rep)
        identity = {i: nodes[i].identity for i in group}  # only the group's: not 3,000
        merged.members = [nodes[m] for m in merge_members(group, identity)]
        merged.order = nodes[group[0]].order
    if fresh is not None:
        fresh[key] = merged
    return merged


def _copy(n: Node) -> Node:
    return Node(
        n.kind,
        n.text,
        n.keywords,
        n.order,
        n.path,
        n.line,
        n.raw,
        n.body,
        n.name,
        n.src,
        n.born,
        n.fields,
        n.members,
    )


def merge_groups(keys: Sequence[Hashable]) -> list[list[int]]:
    """Positions with equal keys (SPEC §5.1: kind and keyword set), grouped in order of first
    occurrence, each group ascending. Shared by :func:`merge_duplicates` and the episode block
    of the index (:mod:`talos.block`), so both merge alike."""
    groups: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys):
        got = groups.get(key)
        if got is None:
            groups[key] = [i]
        else:
            got.append(i)
    return list(groups.values())


def merge_members(
    group: Sequence[int], identity: Sequence[Hashable] | Mapping[int, Hashable]
) -> list[int]:
    """The members of a merged group (its last position is the representative): the others,
    oldest first, without repeats of an identity and without the representative's own."""
    seen = {identity[group[-1]]}
    out: list[int] = []
    for m in group[:-1]:
        if identity[m] not in seen:
            seen.add(identity[m])
            out.append(m)
    return out


class Incidence:
    """Which node holds which keyword, as arrays: the inverted index of SPEC §5.2, both ways.

    Node-major: node ``i`` holds the keyword ids ``node_kw[node_ptr[i]:node_ptr[i+1]]``, listed
    in the order of the keyword *strings*. Keyword-major (built on first use): keyword ``k`` is
    held by the nodes ``kw_node[kw_ptr[k]:kw_ptr[k+1]]``, ascending. Every sum a model takes
    over these arrays therefore runs in one fixed order — a node's keywords alphabetically, a
    keyword's nodes by position — whatever the ids are and however the arrays were assembled
    (from nodes, from the index, or stacked), so all routes give bit-identical activations
    (``tests/test_block.py``).

    Args:
        vocab: keyword id → keyword. node_ptr: ``int64[n + 1]``. node_kw: ``int32[entries]``.
        kw_ptr, kw_node: the keyword-major arrays when already known (else derived).
        lookup: keyword → id when already known. base: the incidence whose keyword ids these
            extend (:class:`Vocabulary`), if any.
    """

    __slots__ = (
        "_cached",
        "_kw_node",
        "_kw_ptr",
        "_lookup",
        "base",
        "node_kw",
        "node_ptr",
        "vocab",
    )

    def __init__(
        self,
        vocab: Sequence[str],
        node_ptr: Any,
        node_kw: Any,
        kw_ptr: Any = None,
        kw_node: Any = None,
        lookup: dict[str, int] | None = None,
        base: Incidence | None = None,
    ) -> None:
        self.vocab = vocab
        self.node_ptr = node_ptr
        self.node_kw = node_kw
        self._kw_ptr = kw_ptr
        self._kw_node = kw_node
        self._lookup = lookup
        self.base = base
        self._cached: dict[str, Any] = {}

    @classmethod
    def of(cls, keyword_sets: Sequence[frozenset[str]]) -> Incidence:
        """The incidence of nodes with these keyword sets (vocabulary sorted)."""
        return Vocabulary(None).incidence(keyword_sets, sort=True)

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return len(self.node_ptr) - 1

    @property
    def lookup(self) -> dict[str, int]:
        """Keyword → id (built on first use)."""
        if self._lookup is None:
            self._lookup = dict(zip(self.vocab, range(len(self.vocab)), strict=True))
        return self._lookup

    def keyword_major(self) -> tuple[Any, Any]:
        """``(kw_ptr, kw_node)``: the nodes of keyword ``k`` are ``kw_node[kw_ptr[k]:kw_ptr[k+1]]``,
        ascending (derived from the node-major arrays on first use, then kept)."""
        if self._kw_ptr is None or self._kw_node is None:
            words = int(self.node_kw.max()) + 1 if len(self.node_kw) else 0
            counts = np.bincount(self.node_kw, minlength=words)
            ptr = np.zeros(words + 1, dtype=np.int64)
            np.cumsum(counts, out=ptr[1:])
            order = np.argsort(self.node_kw, kind="stable")  # stable: nodes stay ascending
            self._kw_ptr = ptr
            self._kw_node = self.entry_node()[order].astype(np.int32)
        return self._kw_ptr, self._kw_node

    def entry_node(self) -> Any:
        """The node of each entry of ``node_kw`` (``int64[entries]``, kept)."""
        got = self._cached.get("entry_node")
        if got is None:
            got = self._cached["entry_node"] = np.repeat(
                np.arange(self.n_nodes, dtype=np.int64), np.diff(self.node_ptr)
            )
        return got

    def degree(self) -> Any:
        """Keywords per node (``float64[n]``, kept)."""
        got = self._cached.get("degree")
        if got is None:
            got = self._cached["degree"] = np.diff(self.node_ptr).astype(np.float64)
        return got

    def df(self, words: int) -> Any:
        """Nodes per keyword id (``float64[words]``; ``words`` >= the ids used)."""
        got = self._cached.get("df")
        if got is None:
            got = self._cached["df"] = np.bincount(self.node_kw, minlength=len(self.vocab))
        out = np.zeros(words, dtype=np.float64)
        out[: len(got)] = got
        return out

    def holders(self, kw: str) -> Any:
        """Ascending positions of the nodes holding ``kw`` (empty array when none).

        A small incidence (the records of a view, rebuilt after every edit) is scanned rather
        than sorted into keyword-major arrays: a query has a handful of keywords."""
        k = self.lookup.get(kw)
        if k is None:
            return _EMPTY
        if self._kw_ptr is None and len(self.node_kw) <= _SCAN_MAX:
            entries = np.flatnonzero(self.node_kw == k)
            return (np.searchsorted(self.node_ptr, entries, side="right") - 1).astype(np.int32)
        ptr, nodes = self.keyword_major()
        if k + 1 >= len(ptr):
            return _EMPTY
        return nodes[ptr[k] : ptr[k + 1]]

    def keywords_of(self, i: int) -> list[str]:
        """Node ``i``'s keywords, sorted."""
        v = self.vocab
        return [v[k] for k in self.node_kw[self.node_ptr[i] : self.node_ptr[i + 1]].tolist()]


_EMPTY = np.zeros(0, dtype=np.int32)
#: Up to this many entries, :meth:`Incidence.holders` scans instead of sorting.
_SCAN_MAX = 400_000


class Vocabulary:
    """Keyword ids for the records of a view, extending a base incidence's ids (the episode
    block's), so the two runs of a graph share one numbering and stacking them is a copy.

    Each keyword set's id row (ids in the order of the keyword strings) is kept between
    builds: after a one-line edit of memory.md only the edited line's row is new (SPEC §11).
    """

    __slots__ = ("_rows", "base", "ids", "words")

    def __init__(self, base: Incidence | None) -> None:
        self.base = base
        self.words: list[str] = list(base.vocab) if base is not None else []
        self.ids: dict[str, int] = dict(base.lookup) if base is not None else {}
        self._rows: dict[frozenset[str], Any] = {}

    def row(self, keywords: frozenset[str]) -> Any:
        """The ids of ``keywords`` in the order of the strings (``int32``; kept while used)."""
        got = self._rows.get(keywords)
        if got is None:
            got = self._rows[keywords] = self._row(keywords)
        return got

    def _row(self, keywords: frozenset[str]) -> Any:
        new = [k for k in keywords if k not in self.ids]
        if new:
            self._grow(new)
        ids = self.ids
        return np.array([ids[k] for k in sorted(keywords)], dtype=np.int32)

    def _grow(self, new: Iterable[str]) -> None:
        """Number ``new`` keywords next, in sorted order. Copy on write: graphs built before
        share the old table and must not see it grow (a graph the caller holds stays as it
        was, tests/test_patch_attack.py); so a build adds all its new keywords at once (one
        copy per row that brought one made a fresh build of 3,000 facts 100 ms slower)."""
        add = sorted(new)
        self.words = [*self.words, *add]
        self.ids = {**self.ids, **{k: len(self.ids) + j for j, k in enumerate(add)}}

    def rebase(self, base: Incidence) -> Vocabulary:
        """A vocabulary over ``base`` that keeps this one's rows where ``base`` numbers their
        keywords alike: when ``base``'s keywords begin with this one's base's (an episode
        block extended by new sessions, :meth:`talos.block.EpisodeBlock.extend`), every row
        of the old base's keywords only. Else a fresh vocabulary."""
        out = Vocabulary(base)
        old = self.base
        n = len(old.vocab) if old is not None else 0
        if old is not None and len(base.vocab) >= n and list(base.vocab[:n]) == list(old.vocab):
            extra = set(self.words[n:])  # numbered after the old base: maybe not alike now
            out._rows = {s: r for s, r in self._rows.items() if extra.isdisjoint(s)}
        return out

    def incidence(self, keyword_sets: Sequence[frozenset[str]], sort: bool = False) -> Incidence:
        """The incidence of nodes with these keyword sets, in this vocabulary's ids.

        ``sort``: number a fresh vocabulary's keywords in sorted order (:meth:`Incidence.of`).
        """
        if sort and not self.words:  # a fresh, sorted numbering: one flat pass, no id rows
            words = sorted(set().union(*keyword_sets)) if keyword_sets else []
            ids = dict(zip(words, range(len(words)), strict=True))
            self.words.extend(words)
            self.ids.update(ids)
            ptr = np.zeros(len(keyword_sets) + 1, dtype=np.int64)
            np.cumsum([len(s) for s in keyword_sets], out=ptr[1:])
            flat = np.fromiter(
                (ids[k] for s in keyword_sets for k in sorted(s)),
                dtype=np.int32,
                count=int(ptr[-1]),
            )
            return Incidence(self.words, ptr, flat, lookup=self.ids, base=self.base)
        old = self._rows
        rows: dict[frozenset[str], Any] = dict.fromkeys(keyword_sets)
        new = [s for s in rows if s not in old]
        if new:
            missing = set().union(*new).difference(self.ids)
            if missing:
                self._grow(missing)
            # the new rows in one array, each a view of it: an array per row was half the
            # cost of numbering 1,000,000 facts (issue 12 item 8)
            ids = self.ids
            sizes = [len(s) for s in new]
            flat = np.fromiter(
                (ids[k] for s in new for k in sorted(s)), dtype=np.int32, count=sum(sizes)
            )
            at = 0
            for s, n in zip(new, sizes, strict=True):
                rows[s] = flat[at : at + n]
                at += n
        for s in rows:
            if rows[s] is None:
                rows[s] = old[s]
        self._rows = rows
        lengths = np.fromiter(
            (len(s) for s in keyword_sets), dtype=np.int64, count=len(keyword_sets)
        )
        ptr = np.zeros(len(keyword_sets) + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        kw = (
            np.concatenate([rows[s] for s in keyword_sets])
            if keyword_sets
            else np.zeros(0, dtype=np.int32)
        )
        return Incidence(self.words, ptr, kw, lookup=self.ids, base=self.base)


@dataclass(slots=True)
class Graph:
    """Merged nodes and the keyword incidence every model spreads over (SPEC §5.1, §5.2).

    The nodes are two runs: ``nodes[:records]`` the records of the view (facts, skills,
    conflict and override lines), ``nodes[records:]`` the merged episodes, which at scale are
    most of the graph and come from the persistent index as arrays (:mod:`talos.block`);
    ``nodes`` may then be a lazy sequence that builds a :class:`Node` only when asked.

    Attributes:
        nodes: representatives in load order. records: how many come before the episodes.
        head, tail: the incidence of the records and of the episodes (``tail`` may be
            ``None``); node ``i >= records`` is ``tail``'s node ``i - records``.
        neighbours: for node ``i``, its SPEC §5.2 edges ``[(j, w_ij), ...]`` in ascending
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


@dataclass(frozen=True, slots=True)
class Segment:
    """One run of nodes' incidence entries, node-major, as the activation models read it.

    Attributes:
        ptr: ``intp[n + 1]``: the run's node ``i`` holds entries ``ptr[i]:ptr[i+1]``.
        node: ``intp[entries]``: the (run-local) node of each entry.
        kw: ``intp[entries]``: the keyword id of each entry. intp, because numpy converts
            any other index type on every gather and bincount, which doubled the cost of a
            hop at 30,000 sessions (bench/scale.py).
        counts: ``intp[n]``: entries per node.
    """

    ptr: Any
    node: Any
    kw: Any
    counts: Any
    held: Any = None
    starts: Any = None

    @classmethod
    def of(cls, ptr: Any, node: Any, kw: Any) -> Segment:
        """A segment from node-major arrays of any integer type."""
        p = np.asarray(ptr, dtype=np.intp)
        counts = np.diff(p)
        held = None if counts.all() else np.flatnonzero(counts)
        starts = p[:-1] if held is None else p[:-1][held]
        return cls(
            p, np.asarray(node, dtype=np.intp), np.asarray(kw, dtype=np.intp), counts, held, starts
        )

    def node_sums(self, values: Any) -> Any:
        """``float64[n]``: each node's sum of ``values`` (one per entry), over its entries.

        ``numpy.add.reduceat`` over the node-major runs: a third of ``bincount``'s time at
        30,000 sessions, as it reads no node index. A run is summed pairwise, so a node's sum
        depends on its own entries only, and is the same on every route
        (``tests/test_block.py``). Nodes without entries get 0.0."""
        if not len(values):
            return np.zeros(self.n)
        if self.held is None:
            return np.add.reduceat(values, self.starts)
        out = np.zeros(self.n)
        if len(self.starts):
            out[self.held] = np.add.reduceat(values, self.starts)
        return out

    @property
    def n(self) -> int:
        """Number of nodes."""
        return len(self.ptr) - 1


def build_graph(nodes: Sequence[Node], edge_min: int = EDGE_MIN) -> Graph:
    """Merge duplicates and index who holds which keyword (SPEC §5.1, §5.2).

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
    """The SPEC §5.2 edges of each node, computed from the incidence the first time a model
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
