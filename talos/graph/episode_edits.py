"""Changing an episode block without merging it again (design §5.1, §11): sessions appended
(:func:`extend_block`) and removed (:func:`remove_episodes`).

A new session at 30,000 cost a 0.5 s rebuild of the block, and so did a removal; both now cost
the episodes they touch plus a copy of the arrays. The result merges exactly as
:meth:`EpisodeBlock.build <talos.graph.episodes.EpisodeBlock.build>` merges the same episodes,
and its keyword ids keep the order a built block's sums run in (``tests/test_block.py``,
``tests/test_session_append.py``). Each result remembers the block it was made from
(``origin``), so a term index over it is patched, not gathered again
(:meth:`~talos.graph.episodes.EpisodeBlock.carried_from`).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from talos.graph.incidence import Incidence
from talos.graph.merge import merge_members
from talos.graph.stored import _concat, _strings
from talos.ranking.arrays import unique

if TYPE_CHECKING:
    from talos.graph.episodes import EpisodeBlock

__all__ = ["extend_block", "remove_episodes"]


def extend_block(block: EpisodeBlock, rows: Sequence[Sequence[str]]) -> EpisodeBlock:
    """``block`` with ``rows`` (as :meth:`~talos.graph.episodes.EpisodeBlock.build` takes
    them) appended after its episodes, merged as ``build`` merges all of them (design §5.1): a
    new episode whose keyword set a merged node holds becomes that node's representative, the
    old one a member; any other becomes a new node at the end. Keywords seen for the first
    time get the next ids; every node's ids stay in the order of the keyword strings, so sums
    run in the same order as in a built block (tests/test_block.py).

    The cost is the new rows plus a copy of the arrays: no re-merge of the old episodes, no
    sort (a new session at 30,000 cost a 0.5 s rebuild; design §11). The result is a new block;
    ``block`` is not changed.

    Raises:
        ValueError: a row without keywords.
    """
    inc = block.incidence
    kw_ptr, kw_node = inc.keyword_major()
    words = list(inc.vocab)
    lookup = dict(inc.lookup)
    n_eps, n_groups, known = len(block.texts), len(block.rep), len(words)
    node_ptr = inc.node_ptr
    degree = np.diff(node_ptr)
    texts_new = [r[1] for r in rows]

    def text(e: int) -> str:
        return block.texts[e] if e < n_eps else texts_new[e - n_eps]

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
            positions[g] = np.flatnonzero(block.group_of == g).tolist() if g < n_groups else []
        positions[g].append(e)
        if g >= n_groups:
            rep_new[g - n_groups] = e

    rep = np.concatenate([block.rep, np.asarray(rep_new, dtype=np.int32)]).astype(np.int32)
    members: dict[int, list[int]] = {}
    for g, group in positions.items():
        rep[g] = group[-1]
        members[g] = merge_members(group, {e: text(e) for e in group}) if len(group) > 1 else []
    old_counts = np.diff(block.mem_ptr)
    counts = np.concatenate([old_counts, np.zeros(len(new_rows), dtype=old_counts.dtype)])
    for g, m in members.items():
        counts[g] = len(m)
    mem_ptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=mem_ptr[1:])
    parts, last = [], 0
    for g in sorted(g for g in members if g < n_groups):
        parts += [block.mem[block.mem_ptr[last] : block.mem_ptr[g]], np.asarray(members[g])]
        last = g + 1
    parts.append(block.mem[block.mem_ptr[last] :])
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
    out = type(block)(
        _concat(_strings(block.paths), [r[0] for r in rows]),
        _concat(_strings(block.texts), texts_new),
        np.concatenate([block.group_of, np.asarray(group_of, dtype=np.int32)]),
        rep,
        np.concatenate([block.first, np.asarray(first_new, dtype=np.int32)]).astype(np.int32),
        mem_ptr,
        mem,
        Incidence(words, ptr, node_kw, kw_ptr2, kw_node2, lookup=lookup),
        _concat(_strings(block.tasks), [r[4] if len(r) > 5 else "" for r in rows]),
        _concat(_strings(block.outcomes), [r[5] if len(r) > 5 else "" for r in rows]),
        _concat(_strings(block.parts), [r[6] if len(r) > 6 else "" for r in rows]),
    )
    out.base, out.last, out.seq = block.base, block.last, block.seq
    carried = np.arange(len(rep), dtype=np.int64)
    carried[n_groups:] = -1
    carried[[g for g in positions if g < n_groups]] = -1  # a new representative
    out.origin = (weakref.ref(block), carried)
    return out


def remove_episodes(block: EpisodeBlock, episodes: Sequence[int]) -> EpisodeBlock:
    """``block`` without the episodes at positions ``episodes``, merged as
    :meth:`~talos.graph.episodes.EpisodeBlock.build` merges the others (design §5.1): a merged
    node that lost its representative gets the last episode left, one that lost its first
    moves to the position of the next (and among the nodes, to where that position sorts), one
    that lost every episode is gone; members are chosen again for the nodes that lost any.
    Keywords no node holds any more keep their ids (so a vocabulary over this block stays
    valid, :meth:`talos.graph.Vocabulary.rebase`) until they are half of all; then the ids are
    renumbered in their order.

    The cost is the nodes that lost episodes plus a copy of the arrays: no re-merge of the
    others (a removal at 30,000 sessions re-merged every episode, 0.5 s; issue 12 item 7). The
    result is a new block (``block`` itself when ``episodes`` is empty); ``block`` is not
    changed.

    Raises:
        IndexError: a position outside the block.
    """
    drop = unique(np.asarray(episodes, dtype=np.int64))
    if not len(drop):
        return block
    n_eps, n_groups = len(block.texts), len(block.rep)
    if drop[0] < 0 or drop[-1] >= n_eps:
        raise IndexError(f"episode {int(drop[-1] if drop[-1] >= n_eps else drop[0])}")
    keep = np.ones(n_eps, dtype=bool)
    keep[drop] = False
    new_pos = np.cumsum(keep) - 1  # each kept episode's position after the removal
    hit = unique(block.group_of[drop])  # the merged nodes that lost episodes
    eps = np.flatnonzero(np.isin(block.group_of, hit))
    eps = eps[np.argsort(block.group_of[eps], kind="stable")]  # by node, ascending
    bounds = np.searchsorted(block.group_of[eps], np.append(hit, n_groups))
    first, rep = block.first.copy(), block.rep.copy()
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
            members[g] = merge_members(left, {e: block.texts[e] for e in left})
        else:
            members[g] = []
    # the nodes in the order of their first episode, as build() numbers them
    survivors = np.flatnonzero(alive)
    order = survivors[np.argsort(first[survivors], kind="stable")]
    new_id = np.full(n_groups, -1, dtype=np.int64)
    new_id[order] = np.arange(len(order))
    # only a node whose first episode went can move among the others
    moved = np.zeros(n_groups, dtype=bool)
    moved[hit] = alive[hit] & (first[hit] != block.first[hit])

    # members: the kept runs of the other nodes, the new lists of the nodes hit
    old_counts = np.diff(block.mem_ptr)
    m_start, m_len = block.mem_ptr[:-1].copy(), old_counts.copy()
    extra: list[int] = []
    for g, m in members.items():
        m_start[g], m_len[g] = len(block.mem) + len(extra), len(m)
        extra += m
    pool = np.concatenate([block.mem, np.asarray(extra, dtype=block.mem.dtype)])
    mem = new_pos[pool[_runs(m_start[order], m_len[order])]].astype(np.int32)
    mem_ptr = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(m_len[order], out=mem_ptr[1:])

    # node-major incidence in the new order
    inc = block.incidence
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
    out = type(block)(
        _strings(block.paths).take(keep),
        _strings(block.texts).take(keep),
        new_id[block.group_of[keep]].astype(np.int32),
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
        *(_strings(values).take(keep) for values in block.extras),
    )
    out.base, out.last, out.seq = block.base, block.last, block.seq
    carried = order.astype(np.int64)
    carried[np.isin(order, hit)] = -1  # lost episodes: maybe its representative, its place
    out.origin = (weakref.ref(block), carried)
    return out


def _runs(starts: Any, lengths: Any) -> Any:
    """The positions ``starts[i] .. starts[i] + lengths[i] - 1`` of every run ``i``, run after
    run (``int64``): a gather of whole runs in any order, without a Python loop."""
    lengths = np.asarray(lengths, dtype=np.int64)
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if len(ends) else 0
    return np.repeat(np.asarray(starts, dtype=np.int64) - (ends - lengths), lengths) + np.arange(
        total, dtype=np.int64
    )
