"""The ``evidence`` model's term index patched into the next graph's, not gathered again
(issue 15, cost; design §11: a change costs what it changed).

An edit of memory.md patches the graph (:mod:`talos.view.patch`), a new or removed session
restacks it over the next episode block (:meth:`talos.graph.episodes.EpisodeBlock.extend`,
``remove``). Gathering the term index again from the stored rows for the new graph cost
14× a warm recall after an edit at 30,000 sessions and 26× after a new session (every
node's matching text hashed, 655,000 entries gathered and sorted term-major). Here each
such change is a *carry*: per node of the new graph, the node of the old one whose matching
text it keeps (the kept ones in the same order), or ``-1`` for a node whose text is new
(:func:`spliced`, :func:`restacked`, several composed by :func:`composed`).
:func:`patch_index` copies the kept rows, adds the new ones from the term rows
(:class:`talos.view.termrows.TermRows`, analysing only a text no row holds), renumbers the
vocabulary when terms came or went, and moves the term-major lists: the result equals the
index a full gather builds array for array (``tests/test_termpatch.py``), so every ranking
is the same float for float.

Cost (``bench/scale.py --sizes 3000 30000 --model evidence --no-direct``, one run before, two
after, load 2–4 on 2 cores; ``bench/README.md`` "Scale"): at 30,000 sessions an edit then a
recall 424 → 31–74 ms (11.8× → 2.7–3.7× its paired warm recall), a new session then a recall
662 → 102–181 ms (26× → 9–11×; ``bipartite`` 16–26× in the same runs).

:class:`Carried` is what :class:`talos.view.kept.KeptState` keeps per graph for the model: the
index, the contiguity edges, each node's row and the memory.md text the edges were linked
in (a new session changes no fact: the edges are only :func:`talos.ranking.contiguity.resized`; an
edited line only its own context, :meth:`talos.ranking.contiguity.MemoryContexts.edited`).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from talos.graph.graph import Graph
from talos.ranking.analyzer import is_cjk
from talos.ranking.contiguity import Links, MemoryContexts
from talos.ranking.evidence import TermIndex
from talos.view.termrows import TermRows, _runs, merged_vocab

__all__ = ["MAX_STEPS", "Carried", "composed", "fresh_limit", "patch_index", "restacked", "spliced"]

#: More changes than this between two term indexes of a graph: gathered again.
MAX_STEPS = 16


def fresh_limit(n: int) -> int:
    """How many new nodes of ``n`` a patch takes (a fresh gather beyond: it is then as
    cheap)."""
    return max(64, n // 4)


@dataclass(slots=True)
class Carried:
    """The ``evidence`` model's state of one graph: its term ``index`` and contiguity
    ``links``, the term row of each node (``rows``: ``int64[n]`` into the object's
    :class:`~talos.view.termrows.TermRows`; ``None`` without the index) and the memory.md ``text``
    the links were made from (``None``: unreadable) with its line ``contexts`` (``None``:
    not kept)."""

    graph: Graph
    index: TermIndex
    links: Links
    rows: np.ndarray | None
    text: str | None
    contexts: MemoryContexts | None = None


def spliced(
    old_records: int, old_n: int, deleted: Sequence[int], inserted: Sequence[int], new_records: int
) -> np.ndarray:
    """The carry of a graph whose records were spliced (:class:`talos.view.patch.Splice`: the old
    records at ``deleted`` gone, new ones at ``inserted``), its episodes the same:
    ``int64[new_records + old_n - old_records]``.

    Raises:
        ValueError: the positions do not add up to ``new_records``.
    """
    if new_records - old_records != len(inserted) - len(deleted):
        raise ValueError("splice positions do not add up")
    keep = np.ones(old_records, dtype=bool)
    keep[list(deleted)] = False
    head = np.full(new_records, -1, dtype=np.int64)
    fresh = np.zeros(new_records, dtype=bool)
    fresh[list(inserted)] = True
    head[~fresh] = np.flatnonzero(keep)
    tail = np.arange(old_records, old_n, dtype=np.int64)
    return np.concatenate([head, tail])


def restacked(records: int, groups: np.ndarray) -> np.ndarray:
    """The carry of a graph of the same ``records`` over another episode block, whose merged
    nodes carry the old block's ``groups`` (:meth:`EpisodeBlock.carried_from`)."""
    tail = np.where(groups >= 0, groups + records, -1)
    return np.concatenate([np.arange(records, dtype=np.int64), tail.astype(np.int64)])


def composed(carries: Sequence[np.ndarray]) -> np.ndarray:
    """One carry doing ``carries`` one after the other (the first from the oldest graph)."""
    out = carries[0]
    for nxt in carries[1:]:
        step = np.full(len(nxt), -1, dtype=np.int64)
        held = nxt >= 0
        step[held] = out[nxt[held]]
        out = step
    return out


def patch_index(old: TermIndex, carry: np.ndarray, rows: TermRows, fresh: np.ndarray) -> TermIndex:
    """The term index of the new graph of ``carry``, from ``old`` (its old graph's) without
    gathering the kept rows again: equal array for array to the one
    :meth:`talos.view.termrows.TermRows.index` gathers for the new graph's texts.

    Args:
        old: the old graph's index (not changed).
        carry: ``int64[n]``, per new node the old node it keeps, or ``-1``; the kept ones
            strictly ascending (a splice, an extended or trimmed block).
        rows: the term rows ``fresh`` points into.
        fresh: the row of each node whose carry is ``-1``, in node order.

    Raises:
        ValueError: ``carry`` out of range or not ascending, or ``fresh`` of another length.
    """
    carry = np.asarray(carry, dtype=np.int64)
    n = len(carry)
    new_at = np.flatnonzero(carry < 0)
    kept_new = np.flatnonzero(carry >= 0)
    kept_old = carry[kept_new]
    if len(fresh) != len(new_at) or (
        len(kept_old) and (int(kept_old[-1]) >= old.n or bool(np.any(np.diff(kept_old) <= 0)))
    ):
        raise ValueError("a carry must keep old nodes in order, one row per new node")
    new_of_old = np.full(old.n, -1, dtype=np.intp)
    new_of_old[kept_old] = kept_new
    words = len(old.vocab)

    # the new rows' terms, as words: the term rows number them their own way
    fresh = np.asarray(fresh, dtype=np.int64)
    f_len = rows.ptr[fresh + 1] - rows.ptr[fresh]
    f_pos = _runs(rows.ptr[fresh], f_len)
    f_words = [rows.vocab[t] for t in rows.term[f_pos].tolist()]
    f_tf = rows.tf[f_pos].astype(np.float64)
    f_node = np.repeat(new_at, f_len)

    # holders per term once the old nodes that went are gone
    dropped = np.flatnonzero(new_of_old < 0)
    gone = old.term[_runs(old.ptr[dropped], old.counts[dropped])]
    df_kept = old.df - np.bincount(gone, minlength=words)
    lookup = old.lookup
    f_old = np.fromiter((lookup.get(w, -1) for w in f_words), dtype=np.intp, count=len(f_words))
    held = df_kept > 0
    held[f_old[f_old >= 0]] = True
    coming = sorted({w for w, t in zip(f_words, f_old.tolist(), strict=True) if t < 0})
    if held.all() and not coming:  # the same vocabulary
        vocab, cjk, term_of = old.vocab, old.cjk, None
        f_term, df = f_old, df_kept
    else:
        kept_terms = np.flatnonzero(held)
        kept_words = [old.vocab[t] for t in kept_terms.tolist()]
        vocab, at, shift = merged_vocab(kept_words, coming)
        term_of = np.full(words, -1, dtype=np.intp)
        term_of[kept_terms] = np.arange(len(kept_terms)) + shift
        lookup = dict(zip(vocab, range(len(vocab)), strict=True))
        cjk = np.zeros(len(vocab), dtype=bool)
        cjk[term_of[kept_terms]] = old.cjk[kept_terms]
        cjk[[i + j for j, i in enumerate(at)]] = [is_cjk(w) for w in coming]
        f_term = np.fromiter((lookup[w] for w in f_words), dtype=np.intp, count=len(f_words))
        df = np.zeros(len(vocab))
        df[term_of[kept_terms]] = df_kept[kept_terms]
    df = df + np.bincount(f_term, minlength=len(vocab))

    # node-major: runs of kept rows copied, the new rows in their places
    counts = np.empty(n, dtype=np.intp)
    counts[kept_new] = old.counts[kept_old]
    counts[new_at] = f_len
    ptr = np.zeros(n + 1, dtype=np.intp)
    np.cumsum(counts, out=ptr[1:])
    f_ptr = np.zeros(len(new_at) + 1, dtype=np.intp)
    np.cumsum(f_len, out=f_ptr[1:])
    pieces: list[tuple[int, int, int, int]] = []  # (new position, source, start, stop)
    if len(kept_new):
        brk = np.flatnonzero((np.diff(kept_new) != 1) | (np.diff(kept_old) != 1)) + 1
        starts = np.concatenate([[0], brk])
        stops = np.concatenate([brk, [len(kept_new)]])
        for a, b in zip(starts.tolist(), stops.tolist(), strict=True):
            lo, hi = int(kept_old[a]), int(kept_old[b - 1]) + 1
            pieces.append((int(kept_new[a]), 0, int(old.ptr[lo]), int(old.ptr[hi])))
    for j, p in enumerate(new_at.tolist()):
        pieces.append((p, 1, int(f_ptr[j]), int(f_ptr[j + 1])))
    pieces.sort()
    # each piece written once into its place (renumbered on the way when terms came or went)
    term = np.empty(int(ptr[-1]), dtype=np.intp)
    tf = np.empty(int(ptr[-1]), dtype=np.float64)
    for p, source, a, b in pieces:
        into = slice(int(ptr[p]), int(ptr[p]) + b - a)
        if source:
            term[into], tf[into] = f_term[a:b], f_tf[a:b]
        else:
            if term_of is None:
                term[into] = old.term[a:b]
            else:
                np.take(term_of, old.term[a:b], out=term[into])
            tf[into] = old.tf[a:b]

    if len(term):
        cjk_len: np.ndarray = np.empty(n)
        cjk_len[kept_new] = old.cjk_len[kept_old]
        local = np.repeat(np.arange(len(new_at)), f_len)
        cjk_len[new_at] = np.bincount(local, weights=f_tf * cjk[f_term], minlength=len(new_at))
    else:  # no entry: numpy's count of nothing is int64, weighted or not (as the gather)
        cjk_len = np.bincount(np.zeros(0, dtype=np.intp), weights=np.zeros(0), minlength=n)

    # term-major, in the old lists' places: the entries of the nodes that went cut out, the
    # new rows' entries put in where their node sorts among the kept ones (which keep their
    # order, renumbered only when the nodes before them changed in number)
    holder = old.knode
    if not np.array_equal(kept_new, kept_old):
        holder = new_of_old[holder]
    kptr_old = old.kptr
    cut = [
        int(kptr_old[t]) + int(np.searchsorted(old.knode[kptr_old[t] : kptr_old[t + 1]], d))
        for t, d in zip(
            gone.tolist(), np.repeat(dropped, old.counts[dropped]).tolist(), strict=True
        )
    ]
    # a new node goes before the first kept node after it, found among the old ids
    after = np.searchsorted(kept_new, new_at)
    before_old = np.append(kept_old, old.n)[after]
    spot_of = dict(zip(new_at.tolist(), before_old.tolist(), strict=True))
    vocab_old = old.vocab
    places = []
    for w, t, j, p in zip(f_words, f_old.tolist(), f_term.tolist(), f_node.tolist(), strict=True):
        if t >= 0:
            lo, hi = int(kptr_old[t]), int(kptr_old[t + 1])
            x = lo + int(np.searchsorted(old.knode[lo:hi], spot_of[p]))
        else:  # a term the old index lacks: where its list would start
            x = int(kptr_old[bisect.bisect_left(vocab_old, w)])
        places.append((x, j, p))
    order = sorted(range(len(places)), key=places.__getitem__)
    at = [places[i][0] for i in order]
    knode = _spliced(holder, cut, at, f_node[order]).astype(np.intp, copy=False)
    ktf = _spliced(old.ktf, cut, at, f_tf[order])
    kptr = np.zeros(len(vocab) + 1, dtype=np.intp)
    np.cumsum(df.astype(np.intp), out=kptr[1:])
    return TermIndex.from_parts(
        vocab=vocab,
        lookup=lookup,
        ptr=ptr,
        term=term,
        tf=tf,
        df=df,
        cjk=cjk,
        cjk_len=cjk_len,
        kptr=kptr,
        knode=knode,
        ktf=ktf,
    )


def _spliced(
    arr: np.ndarray, cut: Sequence[int], at: Sequence[int], values: np.ndarray
) -> np.ndarray:
    """``arr`` without the elements at the positions ``cut`` and with ``values[i]`` put in
    before position ``at[i]`` (``at`` ascending; ``len(arr)``: at the end), in one copy."""
    if not len(cut) and not len(at):
        return arr
    events = sorted([(x, 0, i) for i, x in enumerate(at)] + [(x, 1, 0) for x in cut])
    parts = []
    last = 0
    for x, kind, i in events:
        if x > last:
            parts.append(arr[last:x])
            last = x
        if kind == 0:
            parts.append(values[i : i + 1])
        else:
            last = x + 1
    parts.append(arr[last:])
    return np.concatenate(parts)
