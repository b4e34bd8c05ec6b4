"""Who holds which keyword, as arrays: :class:`Incidence` (node-major postings),
:class:`Vocabulary` (keyword ids shared by the records and the episode block) and
:class:`Segment` (one run of the graph's arrays)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Incidence", "Segment", "Vocabulary"]


class Incidence:
    """Which node holds which keyword, as arrays: the inverted index of design §5.2, both ways.

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
    builds: after a one-line edit of memory.md only the edited line's row is new (design §11).
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
        block extended by new sessions, :meth:`talos.graph.EpisodeBlock.extend`), every row
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
