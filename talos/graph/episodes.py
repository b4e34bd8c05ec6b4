"""The episode block: merged episodes and their keyword incidence as arrays (SPEC §5.1, §11).

At scale episodes are most of the graph (30,000 of 33,000 nodes in ``bench/scale.py``'s largest
home) and they change only when a session arrives, while memory.md changes on every
``remember``. So the graph is built in two runs: the records of the view (facts, skills,
conflict and override lines: rebuilt when they change, cheap) and this block (merged once per
version of the sessions, kept in memory by :class:`talos.memory.Memory` and stored in the
index). A fresh process loads the block's arrays in milliseconds and builds a :class:`Node`
only for the episodes a recall picks; an edit of memory.md never re-merges 30,000 episodes.

Both routes — the index and reading the files directly — build the block with this module
and merge with :func:`talos.graph.merge_groups`, so they give identical nodes and, because
:class:`talos.graph.Incidence` fixes the order of every sum, identical activations
(``tests/test_block.py``).
"""

from __future__ import annotations

import bisect
import struct
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from talos.arrays import unique
from talos.graph.incidence import Incidence
from talos.graph.merge import merge_groups, merge_members
from talos.graph.stored import (
    BlockError,
    _concat,
    _pack,
    _Strings,
    _strings,
    _unpack,
)
from talos.model import Node

__all__ = ["EpisodeBlock"]


class EpisodeBlock:
    """Episodes in load order, merged (SPEC §5.1), with their keyword incidence.

    Attributes:
        paths, texts: of every episode ``e`` (before merging), in load order.
        tasks, outcomes: of every episode, as :class:`~talos.model.Node` holds them (SPEC
            §3.3: its real task when not its text, the head of its last answer; "" for none).
            They ride with the episode: merging looks at the keywords only.
        group_of: ``int32[episodes]``, the merged node each episode belongs to.
        rep: ``int32[groups]``, the representative (last) episode of each merged node.
        first: ``int32[groups]``, its first episode (the merged node's position).
        mem_ptr, mem: members of merged node ``g`` are ``mem[mem_ptr[g]:mem_ptr[g+1]]``.
        incidence: the keywords of each merged node (vocabulary sorted when built; an
            extended block's new keywords follow the old ones).
        base, last: where the block stands in the index's sessions (see ``__init__``).
    """

    __slots__ = (
        "__weakref__",
        "base",
        "first",
        "group_of",
        "incidence",
        "last",
        "mem",
        "mem_ptr",
        "origin",
        "outcomes",
        "paths",
        "rep",
        "seq",
        "tasks",
        "texts",
    )

    def __init__(
        self,
        paths: Sequence[str],
        texts: Sequence[str],
        group_of: Any,
        rep: Any,
        first: Any,
        mem_ptr: Any,
        mem: Any,
        incidence: Incidence,
        tasks: Sequence[str] | None = None,
        outcomes: Sequence[str] | None = None,
    ) -> None:
        self.paths = paths
        self.texts = texts
        self.tasks = tasks if tasks is not None else _Strings.of([""] * len(texts))
        self.outcomes = outcomes if outcomes is not None else _Strings.of([""] * len(texts))
        self.group_of = group_of
        self.rep = rep
        self.first = first
        self.mem_ptr = mem_ptr
        self.mem = mem
        self.incidence = incidence
        #: The index's ``sessions_base`` this block's episodes belong to ("" for none yet),
        #: or ``None`` when unknown: a block of the same base is extended, not rebuilt.
        self.base: str | None = None
        #: The index's sort key of the last episode ("" for none), when known: sessions sorting
        #: after it are new to the block.
        self.last: str | None = None
        #: The last entry of the index's log of removed sessions (``dropped``) this block
        #: has applied (0: none); later entries are removed from it (:meth:`remove`).
        self.seq = 0
        #: The block this one was made from (:meth:`extend`, :meth:`remove`, :meth:`copy`),
        #: held weakly, and per merged node the node of that block it carries unchanged (the
        #: same representative episode, the others in the same order), ``-1`` for a node that
        #: is new or changed; ``None`` for a block built or read. What lets a term index be
        #: patched, not gathered again, after a new session (:meth:`carried_from`).
        self.origin: tuple[weakref.ref[EpisodeBlock], np.ndarray] | None = None

    # -- building ----------------------------------------------------------------------------

    @classmethod
    def build(cls, rows: Sequence[Sequence[str]]) -> EpisodeBlock:
        """Merge episodes given as ``(path, text, keywords)`` rows in load order, where
        ``keywords`` is the sorted keyword set joined by single spaces (the index's form);
        a fourth item (the index's sort key) is ignored, a fifth and sixth are the episode's
        task and outcome (:func:`_extras`; "" when absent).

        Raises:
            ValueError: a row without keywords (episodes always have some, SPEC §3.3).
        """
        kw_of = [r[2] for r in rows]
        if any(not k for k in kw_of):
            raise ValueError("an episode without keywords cannot be a node")
        groups = merge_groups(kw_of)
        texts = [r[1] for r in rows]
        group_of = np.zeros(len(rows), dtype=np.int32)
        rep = np.zeros(len(groups), dtype=np.int32)
        first = np.zeros(len(groups), dtype=np.int32)
        mem_ptr = np.zeros(len(groups) + 1, dtype=np.int64)
        members: list[int] = []
        sets: list[frozenset[str]] = []
        for g, group in enumerate(groups):
            group_of[group] = g
            rep[g] = group[-1]
            first[g] = group[0]
            if len(group) > 1:
                members += merge_members(group, texts)  # an episode's identity is its text
            mem_ptr[g + 1] = len(members)
            sets.append(frozenset(kw_of[group[-1]].split(" ")))
        inc = Incidence.of(sets)
        inc.keyword_major()  # stored with the block: a loading process need not sort
        return cls(
            _Strings.of([r[0] for r in rows]),
            _Strings.of(texts),
            group_of,
            rep,
            first,
            mem_ptr,
            np.asarray(members, dtype=np.int32),
            inc,
            *_extras(rows),
        )

    @classmethod
    def of_nodes(cls, nodes: Sequence[Node]) -> EpisodeBlock:
        """The block of episode nodes read from the files (:func:`talos.sources.load_episodes`)."""
        return cls.build(
            [(n.path, n.text, " ".join(sorted(n.keywords)), "", n.task, n.outcome) for n in nodes]
        )

    def extend(self, rows: Sequence[Sequence[str]]) -> EpisodeBlock:
        """This block with ``rows`` (as :meth:`build` takes them) appended after its episodes,
        merged as :meth:`build` merges all of them (SPEC §5.1): a new episode whose keyword
        set a merged node holds becomes that node's representative, the old one a member;
        any other becomes a new node at the end. Keywords seen for the first time get the
        next ids; every node's ids stay in the order of the keyword strings, so sums run in
        the same order as in a built block (tests/test_block.py).

        The cost is the new rows plus a copy of the arrays: no re-merge of the old episodes,
        no sort (a new session at 30,000 cost a 0.5 s rebuild; SPEC §11). The result is a
        new block; this one is not changed.

        Raises:
            ValueError: a row without keywords.
        """
        inc = self.incidence
        kw_ptr, kw_node = inc.keyword_major()
        words = list(inc.vocab)
        lookup = dict(inc.lookup)
        n_eps, n_groups, known = len(self.texts), len(self.rep), len(words)
        node_ptr = inc.node_ptr
        degree = np.diff(node_ptr)
        texts_new = [r[1] for r in rows]

        def text(e: int) -> str:
            return self.texts[e] if e < n_eps else texts_new[e - n_eps]

        def existing(kw: str) -> int:
            """The merged node holding exactly these keywords, or -1."""
            ids = [lookup.get(k, -1) for k in kw.split(" ")]
            if min(ids) < 0 or max(ids) >= known:  # a keyword no old node holds
                return -1
            rarest = min(ids, key=lambda k: int(kw_ptr[k + 1] - kw_ptr[k]))
            want = set(ids)
            for g in kw_node[kw_ptr[rarest] : kw_ptr[rarest + 1]].tolist():
                if (
                    degree[g] == len(ids)
                    and set(inc.node_kw[node_ptr[g] : node_ptr[g + 1]].tolist()) == want
                ):
                    return int(g)
            return -1

        group_of: list[int] = []
        new_rows: list[list[int]] = []  # keyword ids of each new node
        first_new: list[int] = []
        rep_new: list[int] = []
        seen: dict[str, int] = {}
        positions: dict[int, list[int]] = {}  # every node that got an episode: its episodes
        for j, row in enumerate(rows):
            kw = row[2]
            if not kw:
                raise ValueError("an episode without keywords cannot be a node")
            e = n_eps + j
            g = seen.get(kw)
            if g is None:
                g = existing(kw)
                if g < 0:
                    g = n_groups + len(new_rows)
                    ids = []
                    for k in kw.split(" "):  # sorted: the index's form
                        i = lookup.get(k)
                        if i is None:
                            i = lookup[k] = len(words)
                            words.append(k)
                        ids.append(i)
                    new_rows.append(ids)
                    first_new.append(e)
                    rep_new.append(e)
                seen[kw] = g
            group_of.append(g)
            if g not in positions:
                positions[g] = np.flatnonzero(self.group_of == g).tolist() if g < n_groups else []
            positions[g].append(e)
            if g >= n_groups:
                rep_new[g - n_groups] = e

        rep = np.concatenate([self.rep, np.asarray(rep_new, dtype=np.int32)]).astype(np.int32)
        members: dict[int, list[int]] = {}
        for g, group in positions.items():
            rep[g] = group[-1]
            members[g] = merge_members(group, {e: text(e) for e in group}) if len(group) > 1 else []
        old_counts = np.diff(self.mem_ptr)
        counts = np.concatenate([old_counts, np.zeros(len(new_rows), dtype=old_counts.dtype)])
        for g, m in members.items():
            counts[g] = len(m)
        mem_ptr = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=mem_ptr[1:])
        parts, last = [], 0
        for g in sorted(g for g in members if g < n_groups):
            parts += [self.mem[self.mem_ptr[last] : self.mem_ptr[g]], np.asarray(members[g])]
            last = g + 1
        parts.append(self.mem[self.mem_ptr[last] :])
        parts += [np.asarray(members[g]) for g in range(n_groups, n_groups + len(new_rows))]
        mem = np.concatenate([np.asarray(p, dtype=np.int32) for p in parts])

        flat = [i for r in new_rows for i in r]
        ptr = np.concatenate(
            [node_ptr, node_ptr[-1] + np.cumsum([len(r) for r in new_rows], dtype=np.int64)]
        )
        node_kw = np.concatenate([inc.node_kw, np.asarray(flat, dtype=np.int32)])
        # keyword-major: each new node goes at the end of its keywords' lists (it is the
        # highest node id), new keywords after the old ones
        ks = np.asarray(flat, dtype=np.int64)
        gs = np.repeat(np.arange(n_groups, n_groups + len(new_rows)), [len(r) for r in new_rows])
        order = np.lexsort((gs, ks))
        ends = np.concatenate([kw_ptr[1:], np.full(len(words) - len(kw_ptr) + 1, len(kw_node))])
        kw_node2 = np.insert(kw_node, ends[ks[order]], gs[order]).astype(np.int32)
        kw_counts = np.diff(kw_ptr)
        kw_counts = np.concatenate([kw_counts, np.zeros(len(words) - len(kw_counts), np.int64)])
        kw_counts = kw_counts + np.bincount(ks, minlength=len(words))
        kw_ptr2 = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(kw_counts, out=kw_ptr2[1:])
        out = EpisodeBlock(
            _concat(_strings(self.paths), [r[0] for r in rows]),
            _concat(_strings(self.texts), texts_new),
            np.concatenate([self.group_of, np.asarray(group_of, dtype=np.int32)]),
            rep,
            np.concatenate([self.first, np.asarray(first_new, dtype=np.int32)]).astype(np.int32),
            mem_ptr,
            mem,
            Incidence(words, ptr, node_kw, kw_ptr2, kw_node2, lookup=lookup),
            _concat(_strings(self.tasks), [r[4] if len(r) > 5 else "" for r in rows]),
            _concat(_strings(self.outcomes), [r[5] if len(r) > 5 else "" for r in rows]),
        )
        out.base, out.last, out.seq = self.base, self.last, self.seq
        carried = np.arange(len(rep), dtype=np.int64)
        carried[n_groups:] = -1
        carried[[g for g in positions if g < n_groups]] = -1  # a new representative
        out.origin = (weakref.ref(self), carried)
        return out

    def remove(self, episodes: Sequence[int]) -> EpisodeBlock:
        """This block without the episodes at positions ``episodes``, merged as :meth:`build`
        merges the others (SPEC §5.1): a merged node that lost its representative gets the
        last episode left, one that lost its first moves to the position of the next (and
        among the nodes, to where that position sorts), one that lost every episode is gone;
        members are chosen again for the nodes that lost any. Keywords no node holds any more
        keep their ids (so a vocabulary over this block stays valid,
        :meth:`talos.graph.Vocabulary.rebase`) until they are half of all; then the ids are
        renumbered in their order.

        The cost is the nodes that lost episodes plus a copy of the arrays: no re-merge of
        the others (a removal at 30,000 sessions re-merged every episode, 0.5 s; issue 12
        item 7). The result is a new block; this one is not changed.

        Raises:
            IndexError: a position outside the block.
        """
        drop = unique(np.asarray(episodes, dtype=np.int64))
        if not len(drop):
            return self
        n_eps, n_groups = len(self.texts), len(self.rep)
        if drop[0] < 0 or drop[-1] >= n_eps:
            raise IndexError(f"episode {int(drop[-1] if drop[-1] >= n_eps else drop[0])}")
        keep = np.ones(n_eps, dtype=bool)
        keep[drop] = False
        new_pos = np.cumsum(keep) - 1  # each kept episode's position after the removal
        hit = unique(self.group_of[drop])  # the merged nodes that lost episodes
        eps = np.flatnonzero(np.isin(self.group_of, hit))
        eps = eps[np.argsort(self.group_of[eps], kind="stable")]  # by node, ascending
        bounds = np.searchsorted(self.group_of[eps], np.append(hit, n_groups))
        first, rep = self.first.copy(), self.rep.copy()
        alive = np.ones(n_groups, dtype=bool)
        members: dict[int, list[int]] = {}  # old episode positions, of the nodes hit
        for j, g in enumerate(hit.tolist()):
            group = eps[bounds[j] : bounds[j + 1]]
            left = group[keep[group]].tolist()
            if not left:
                alive[g] = False
                continue
            first[g], rep[g] = left[0], left[-1]
            if len(left) > 1:  # an episode's identity is its text, as in build()
                members[g] = merge_members(left, {e: self.texts[e] for e in left})
            else:
                members[g] = []
        # the nodes in the order of their first episode, as build() numbers them
        survivors = np.flatnonzero(alive)
        order = survivors[np.argsort(first[survivors], kind="stable")]
        new_id = np.full(n_groups, -1, dtype=np.int64)
        new_id[order] = np.arange(len(order))
        # only a node whose first episode went can move among the others
        moved = np.zeros(n_groups, dtype=bool)
        moved[hit] = alive[hit] & (first[hit] != self.first[hit])

        # members: the kept runs of the other nodes, the new lists of the nodes hit
        old_counts = np.diff(self.mem_ptr)
        m_start, m_len = self.mem_ptr[:-1].copy(), old_counts.copy()
        extra: list[int] = []
        for g, m in members.items():
            m_start[g], m_len[g] = len(self.mem) + len(extra), len(m)
            extra += m
        pool = np.concatenate([self.mem, np.asarray(extra, dtype=self.mem.dtype)])
        mem = new_pos[pool[_runs(m_start[order], m_len[order])]].astype(np.int32)
        mem_ptr = np.zeros(len(order) + 1, dtype=np.int64)
        np.cumsum(m_len[order], out=mem_ptr[1:])

        # node-major incidence in the new order
        inc = self.incidence
        node_ptr = inc.node_ptr
        degree = np.diff(node_ptr)
        ptr = np.zeros(len(order) + 1, dtype=np.int64)
        np.cumsum(degree[order], out=ptr[1:])
        node_kw = inc.node_kw[_runs(node_ptr[:-1][order], degree[order])]
        # keyword-major: every holder list loses the gone nodes and is renumbered (ascending
        # still: the nodes that did not move keep their order); the moved nodes are put back
        # where their new ids sort
        kw_ptr, kw_node = inc.keyword_major()
        words = len(inc.vocab)
        entry_kw = np.repeat(np.arange(words, dtype=np.int64), np.diff(kw_ptr))
        stays = (new_id[kw_node] >= 0) & ~moved[kw_node]
        held = new_id[kw_node[stays]]
        held_kw = entry_kw[stays]
        counts = np.bincount(held_kw, minlength=words)
        base_ptr = np.zeros(words + 1, dtype=np.int64)
        np.cumsum(counts, out=base_ptr[1:])
        spots: list[int] = []
        ids: list[int] = []
        kws: list[int] = []
        for g in np.flatnonzero(moved).tolist():
            gid = int(new_id[g])
            for k in inc.node_kw[node_ptr[g] : node_ptr[g + 1]].tolist():
                lo, hi = int(base_ptr[k]), int(base_ptr[k + 1])
                spots.append(lo + int(np.searchsorted(held[lo:hi], gid)))
                ids.append(gid)
                kws.append(k)
                counts[k] += 1
        if spots:
            # one place can be the end of keyword k's list and the start of k+1's
            put = np.lexsort((ids, kws, spots))
            held = np.insert(held, np.asarray(spots)[put], np.asarray(ids)[put])
        kw_ptr2 = np.zeros(words + 1, dtype=np.int64)
        np.cumsum(counts, out=kw_ptr2[1:])
        vocab: Sequence[str] = inc.vocab
        lookup: dict[str, int] | None = inc.lookup
        if 2 * int(np.count_nonzero(counts == 0)) > words:  # mostly unheld ids: renumber
            used = counts > 0
            renumber = np.cumsum(used) - 1
            node_kw = renumber[node_kw]
            vocab = [w for w, u in zip(inc.vocab, used.tolist(), strict=True) if u]
            lookup = None
            kw_ptr2 = np.zeros(len(vocab) + 1, dtype=np.int64)
            np.cumsum(counts[used], out=kw_ptr2[1:])
        out = EpisodeBlock(
            _strings(self.paths).take(keep),
            _strings(self.texts).take(keep),
            new_id[self.group_of[keep]].astype(np.int32),
            new_pos[rep[order]].astype(np.int32),
            new_pos[first[order]].astype(np.int32),
            mem_ptr,
            mem,
            Incidence(
                vocab,
                ptr,
                np.asarray(node_kw, dtype=np.int32),
                kw_ptr2,
                held.astype(np.int32),
                lookup=lookup,
            ),
            *(_strings(values).take(keep) for values in self.extras),
        )
        out.base, out.last, out.seq = self.base, self.last, self.seq
        carried = order.astype(np.int64)
        carried[np.isin(order, hit)] = -1  # lost episodes: maybe its representative, its place
        out.origin = (weakref.ref(self), carried)
        return out

    def carried_from(self, other: EpisodeBlock) -> np.ndarray | None:
        """Per merged node of this block, the node of ``other`` it carries unchanged (same
        representative, the carried ones in the same order; ``-1``: new or changed), when this
        block is ``other`` or was made from it by one :meth:`extend`, :meth:`remove` or
        :meth:`copy` (``int64[len(self)]``); ``None`` otherwise."""
        if other is self:
            return np.arange(len(self), dtype=np.int64)
        if self.origin is None or self.origin[0]() is not other:
            return None
        return self.origin[1]

    def positions(self, paths: Sequence[str]) -> list[int] | None:
        """The positions of the episodes read from ``paths``, ascending, or ``None`` when one
        is not in the block. Episodes are in the order of the index's sort keys, which is the
        order of their paths within one folder: each is found by bisection (no decoding of
        30,000 paths), else by a scan (several sessions folders, whose paths do not sort in
        load order: issue 16.4)."""
        out: list[int] = []
        known: dict[str, int] | None = None
        for path in paths:
            i = bisect.bisect_left(self.paths, path)
            if i >= len(self.paths) or self.paths[i] != path:
                if known is None:
                    known = {p: j for j, p in enumerate(self.paths)}
                i = known.get(path, -1)
                if i < 0:
                    return None
            out.append(i)
        return sorted(set(out))

    def copy(self) -> EpisodeBlock:
        """A new block sharing this one's (never changed) arrays, with its own ``base``,
        ``last`` and ``seq``."""
        out = EpisodeBlock(
            self.paths,
            self.texts,
            self.group_of,
            self.rep,
            self.first,
            self.mem_ptr,
            self.mem,
            self.incidence,
            *self.extras,
        )
        out.base, out.last, out.seq = self.base, self.last, self.seq
        out.origin = (weakref.ref(self), np.arange(len(self), dtype=np.int64))
        return out

    # -- reading -----------------------------------------------------------------------------

    @property
    def extras(self) -> tuple[Sequence[str], Sequence[str]]:
        """``(tasks, outcomes)``: what an episode carries beside its text (SPEC §3.3)."""
        return self.tasks, self.outcomes

    def __len__(self) -> int:
        """Number of merged nodes."""
        return len(self.rep)

    @property
    def episodes(self) -> int:
        """Number of episodes before merging."""
        return len(self.texts)

    def node(self, g: int, start: int = 0) -> Node:
        """Merged node ``g`` as :func:`talos.graph.merge_duplicates` makes it: the last
        episode of the group, at the position of its first, with the others as members.
        ``start`` is the load position of the first episode (after facts and skills)."""
        keywords = frozenset(self.incidence.keywords_of(g))
        rep = int(self.rep[g])
        members = [
            self._episode(int(m), keywords, start)
            for m in self.mem[self.mem_ptr[g] : self.mem_ptr[g + 1]].tolist()
        ]
        return Node(
            kind="episode",
            text=self.texts[rep],
            keywords=keywords,
            order=start + int(self.first[g]),
            path=self.paths[rep],
            members=members,
            task=self.tasks[rep],
            outcome=self.outcomes[rep],
        )

    def episode(self, e: int, start: int = 0) -> Node:
        """Episode ``e`` before merging."""
        g = int(self.group_of[e])
        return self._episode(e, frozenset(self.incidence.keywords_of(g)), start)

    def _episode(self, e: int, keywords: frozenset[str], start: int) -> Node:
        return Node(
            kind="episode",
            text=self.texts[e],
            keywords=keywords,
            order=start + e,
            path=self.paths[e],
            task=self.tasks[e],
            outcome=self.outcomes[e],
        )

    # -- storing -----------------------------------------------------------------------------

    def to_bytes(self, token: str = "") -> bytes:
        """The block as one blob (:meth:`from_bytes` reads it back exactly), naming the
        ``token`` (the index's version of the sessions) it was built for."""
        inc = self.incidence
        kw_ptr, kw_node = inc.keyword_major()
        vocab = "\n".join(inc.vocab)
        if len(inc.vocab) and vocab.count("\n") != len(inc.vocab) - 1:
            raise ValueError("a keyword holds a newline")  # keywords never do (SPEC §4)
        parts: list[tuple[str, str, bytes]] = [
            ("vocab", "bytes", vocab.encode("utf-8", "surrogatepass"))
        ]
        for name, values in (
            ("paths", self.paths),
            ("texts", self.texts),
            ("tasks", self.tasks),
            ("outcomes", self.outcomes),
        ):
            stored = _strings(values)
            parts.append((name, "bytes", stored.buf))
            parts.append((f"{name}_off", "int64", stored.off.astype(np.int64).tobytes()))
        for name, arr, dtype in (
            ("group_of", self.group_of, "int32"),
            ("rep", self.rep, "int32"),
            ("first", self.first, "int32"),
            ("mem_ptr", self.mem_ptr, "int64"),
            ("mem", self.mem, "int32"),
            ("node_ptr", inc.node_ptr, "int64"),
            ("node_kw", inc.node_kw, "int32"),
            ("kw_ptr", kw_ptr, "int64"),
            ("kw_node", kw_node, "int32"),
        ):
            parts.append((name, dtype, np.ascontiguousarray(arr, dtype=dtype).tobytes()))
        meta: dict[str, Any] = {"token": token}
        if self.base is not None and self.last is not None:
            meta["base"], meta["last"], meta["seq"] = self.base, self.last, self.seq
        return _pack("episodes", parts, meta)

    @classmethod
    def from_bytes(cls, data: bytes, token: str | None = None) -> EpisodeBlock:
        """Decode :meth:`to_bytes`; arrays are views on ``data`` (no copy).

        Raises:
            BlockError: the blob is not a block of this layout, is inconsistent, or was built
                for another ``token`` than the one given (a row copied from another home).
        """
        meta, got = _unpack(data, "episodes")
        if token is not None and (not isinstance(meta, dict) or meta.get("token") != token):
            raise BlockError("block of another version of the sessions")
        try:
            text = got["vocab"].decode("utf-8", "surrogatepass")
            vocab = text.split("\n") if text else []
            inc = Incidence(vocab, got["node_ptr"], got["node_kw"], got["kw_ptr"], got["kw_node"])
            block = cls(
                _Strings(got["paths"], got["paths_off"]),
                _Strings(got["texts"], got["texts_off"]),
                got["group_of"],
                got["rep"],
                got["first"],
                got["mem_ptr"],
                got["mem"],
                inc,
                _Strings(got["tasks"], got["tasks_off"]),
                _Strings(got["outcomes"], got["outcomes_off"]),
            )
        except BlockError:
            raise
        except (KeyError, ValueError, TypeError, struct.error, UnicodeDecodeError) as e:
            raise BlockError(f"unreadable block ({e})") from e
        block._check()
        base, last = (meta.get("base"), meta.get("last")) if isinstance(meta, dict) else (0, 0)
        if isinstance(base, str) and isinstance(last, str):
            block.base, block.last = base, last
            seq = meta.get("seq", 0)
            block.seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else 0
        return block

    def _check(self) -> None:
        """Cheap consistency checks of a decoded block (sizes agree, ids in range)."""
        inc = self.incidence
        groups, episodes, words = len(self.rep), len(self.texts), len(inc.vocab)
        ok = (
            len(self.paths) == episodes
            and len(self.group_of) == episodes
            and len(self.first) == groups
            and len(self.mem_ptr) == groups + 1
            and len(inc.node_ptr) == groups + 1
            and int(inc.node_ptr[-1]) == len(inc.node_kw)
            and int(self.mem_ptr[-1]) == len(self.mem)
            and (
                not len(inc.node_kw)
                or 0 <= int(inc.node_kw.min()) <= int(inc.node_kw.max()) < words
            )
            and (not groups or int(self.rep.min()) >= 0)
            and (not groups or (int(self.first.min()) >= 0 and int(self.first.max()) < episodes))
            and bool(np.all(self.first <= self.rep))
            and (not len(self.mem) or int(self.mem.min()) >= 0)
            and (not episodes or 0 <= int(self.group_of.min()) <= int(self.group_of.max()) < groups)
            and inc._kw_ptr is not None
            and len(inc._kw_ptr) == words + 1
            and int(inc._kw_ptr[-1]) == len(inc._kw_node)
            and (
                not len(inc._kw_node)
                or 0 <= int(inc._kw_node.min()) <= int(inc._kw_node.max()) < groups
            )
            and (not groups or int(self.rep.max()) < episodes)
            and (not len(self.mem) or int(self.mem.max()) < episodes)
            and len(self.tasks) == episodes
            and len(self.outcomes) == episodes
            and all(
                int(s.off[-1]) == len(s.buf)
                for s in map(_strings, (self.paths, self.texts, self.tasks, self.outcomes))
            )
        )
        if not ok:
            raise BlockError("inconsistent block")


def _extras(rows: Sequence[Sequence[str]]) -> tuple[_Strings, _Strings]:
    """The tasks and outcomes of :meth:`EpisodeBlock.build`'s rows: their fifth and sixth
    items, "" for a row without them."""
    return (
        _Strings.of([r[4] if len(r) > 5 else "" for r in rows]),
        _Strings.of([r[5] if len(r) > 5 else "" for r in rows]),
    )


def _runs(starts: Any, lengths: Any) -> Any:
    """The positions ``starts[i] .. starts[i] + lengths[i] - 1`` of every run ``i``, run after
    run (``int64``): a gather of whole runs in any order, without a Python loop."""
    lengths = np.asarray(lengths, dtype=np.int64)
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if len(ends) else 0
    return np.repeat(np.asarray(starts, dtype=np.int64) - (ends - lengths), lengths) + np.arange(
        total, dtype=np.int64
    )
