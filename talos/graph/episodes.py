"""The episode block: merged episodes and their keyword incidence as arrays (design §5.1, §11).

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
(``tests/test_block.py``). A session appended or removed makes a new block from this one
without a re-merge (:mod:`talos.graph.episode_edits`).
"""

from __future__ import annotations

import bisect
import struct
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from talos.graph.episode_edits import extend_block, remove_episodes
from talos.graph.incidence import Incidence
from talos.graph.merge import merge_groups, merge_members
from talos.graph.stored import BlockError, _pack, _Strings, _strings, _unpack
from talos.model import Node

__all__ = ["EpisodeBlock"]


class EpisodeBlock:
    """Episodes in load order, merged (design §5.1), with their keyword incidence.

    Attributes:
        paths, texts: of every episode ``e`` (before merging), in load order.
        tasks, outcomes, parts: of every episode, as :class:`~talos.model.Node` holds them (design
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
        "parts",
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
        parts: Sequence[str] | None = None,
    ) -> None:
        self.paths = paths
        self.texts = texts
        self.tasks = tasks if tasks is not None else _Strings.of([""] * len(texts))
        self.outcomes = outcomes if outcomes is not None else _Strings.of([""] * len(texts))
        self.parts = parts if parts is not None else _Strings.of([""] * len(texts))
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
        task and outcome, a seventh its parts (:func:`_extras`; "" when absent).

        Raises:
            ValueError: a row without keywords (episodes always have some, design §3.3).
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
            [
                (n.path, n.text, " ".join(sorted(n.keywords)), "", n.task, n.outcome, n.parts)
                for n in nodes
            ]
        )

    def extend(self, rows: Sequence[Sequence[str]]) -> EpisodeBlock:
        """This block with ``rows`` (as :meth:`build` takes them) appended after its episodes,
        merged as :meth:`build` merges all of them (design §5.1), at the cost of the new rows
        plus a copy of the arrays (:func:`talos.graph.episode_edits.extend_block` has the
        rule). The result is a new block; this one is not changed.

        Raises:
            ValueError: a row without keywords.
        """
        return extend_block(self, rows)

    def remove(self, episodes: Sequence[int]) -> EpisodeBlock:
        """This block without the episodes at positions ``episodes``, merged as :meth:`build`
        merges the others (design §5.1), at the cost of the nodes that lost episodes plus a copy
        of the arrays (:func:`talos.graph.episode_edits.remove_episodes` has the rule). The
        result is a new block (this one when ``episodes`` is empty); this one is not changed.

        Raises:
            IndexError: a position outside the block.
        """
        return remove_episodes(self, episodes)

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
    def extras(self) -> tuple[Sequence[str], Sequence[str], Sequence[str]]:
        """``(tasks, outcomes, parts)``: what an episode carries beside its text (design
        §3.3)."""
        return self.tasks, self.outcomes, self.parts

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
            parts=self.parts[rep],
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
            parts=self.parts[e],
        )

    # -- storing -----------------------------------------------------------------------------

    def to_bytes(self, token: str = "") -> bytes:
        """The block as one blob (:meth:`from_bytes` reads it back exactly), naming the
        ``token`` (the index's version of the sessions) it was built for."""
        inc = self.incidence
        kw_ptr, kw_node = inc.keyword_major()
        vocab = "\n".join(inc.vocab)
        if len(inc.vocab) and vocab.count("\n") != len(inc.vocab) - 1:
            raise ValueError("a keyword holds a newline")  # keywords never do (design §4)
        parts: list[tuple[str, str, bytes]] = [
            ("vocab", "bytes", vocab.encode("utf-8", "surrogatepass"))
        ]
        for name, values in (
            ("paths", self.paths),
            ("texts", self.texts),
            ("tasks", self.tasks),
            ("outcomes", self.outcomes),
            ("parts", self.parts),
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
                _Strings(got["parts"], got["parts_off"]),
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
            and len(self.parts) == episodes
            and all(
                int(s.off[-1]) == len(s.buf)
                for s in map(
                    _strings, (self.paths, self.texts, self.tasks, self.outcomes, self.parts)
                )
            )
        )
        if not ok:
            raise BlockError("inconsistent block")


def _extras(rows: Sequence[Sequence[str]]) -> tuple[_Strings, _Strings, _Strings]:
    """The tasks, outcomes and parts of :meth:`EpisodeBlock.build`'s rows: their fifth, sixth
    and seventh items, "" for a row without them."""
    return (
        _Strings.of([r[4] if len(r) > 5 else "" for r in rows]),
        _Strings.of([r[5] if len(r) > 5 else "" for r in rows]),
        _Strings.of([r[6] if len(r) > 6 else "" for r in rows]),
    )
