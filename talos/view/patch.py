"""An in-place edit of memory.md, applied to the last view and graph (design §11).

A one-line edit must cost what it changed, not a pass over every memory: at 30,000 sessions
rebuilding the records' part of the graph took 3.4× a warm recall (bench/README "Scale").
:class:`Built` keeps what :meth:`talos.memory.Memory.view` built last; :func:`patch_view`
applies the changed records to its view and merge, and :func:`splice_incidence` and
:func:`splice_cache` apply the resulting change of the merged nodes (a :class:`Splice`) to
the incidence and the values kept per graph.

The patch runs only where the outcome of every rule elsewhere is provably untouched, and
returns ``None`` (a full build) otherwise:

* each changed position is a fact before and after, with the same standing (design §7.3): both
  active, both excluded, or both outside the authorized scopes, never unreadable;
* a canonical key (design §7.4) of an active record is held by no other record, before and
  after, so no winner, shadow or conflict elsewhere moves; no request overrides (§7.5);
* merging (design §5.1) is redone for the groups the edit touched, with
  :func:`talos.graph.merge_group`, the function the full build uses.

The result is the same view and graph, float for float, as a full build
(``tests/test_edit_patch.py`` compares them over random edits).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from talos.graph.episodes import EpisodeBlock
from talos.graph.graph import Graph
from talos.graph.incidence import Incidence, Vocabulary
from talos.graph.merge import merge_group, merge_groups
from talos.model import Node
from talos.view.trust import Excluded, View

__all__ = ["MAX_CHANGED", "Built", "Splice", "patch_view", "splice_cache", "splice_incidence"]

#: More changed records than this take the full build (a rewrite, not an edit).
MAX_CHANGED = 16

Standing = tuple[str, str, str]
GroupKey = tuple[str, frozenset[str]]


class Built:
    """What :meth:`talos.memory.Memory.view` built last: the records and episode block it came
    from, the date and overrides (``when``), the view, the merged nodes (``head``), their
    incidence and the graph. The tables a patch needs are derived on first use and then
    carried from patch to patch:

    * ``at_view``: ``id(node) → position`` of each view node;
    * ``groups``: ``(kind, keywords) → ascending view positions`` (the merge groups), and
      ``first``: each head node's first view position (ascending, so a group's head position
      is a bisection);
    * ``keys``: ``(scope, key) → how many records carry that canonical key`` (any standing).
    """

    __slots__ = (
        "_at_view",
        "_first",
        "_groups",
        "_keys",
        "block",
        "graph",
        "head",
        "incidence",
        "records",
        "view",
        "when",
    )

    def __init__(
        self,
        records: list[Node],
        block: EpisodeBlock,
        when: tuple[Any, ...],
        view: View,
        head: list[Node],
        incidence: Incidence,
        graph: Graph,
        tables: Built | None = None,
    ) -> None:
        self.records, self.block, self.when = records, block, when
        self.view, self.head, self.incidence, self.graph = view, head, incidence, graph
        self._at_view: dict[int, int] | None = None
        self._groups: dict[GroupKey, list[int]] | None = None
        self._first: list[int] | None = None
        self._keys: dict[tuple[str, str], int] | None = None
        if tables is not None:  # carried over (they describe this view too): see patch_view
            self._at_view, self._groups = tables._at_view, tables._groups
            self._first, self._keys = tables._first, tables._keys

    @property
    def at_view(self) -> dict[int, int]:
        """``id(node) → view position``."""
        if self._at_view is None:
            self._at_view = {id(n): i for i, n in enumerate(self.view.nodes)}
        return self._at_view

    @property
    def groups(self) -> dict[GroupKey, list[int]]:
        """``(kind, keywords) → ascending view positions``, one entry per head node."""
        if self._groups is None:
            nodes = self.view.nodes
            found = merge_groups([(n.kind, n.keywords) for n in nodes])
            self._groups = {(nodes[g[0]].kind, nodes[g[0]].keywords): g for g in found}
            self._first = [g[0] for g in found]
        return self._groups

    @property
    def first(self) -> list[int]:
        """Each head node's first view position, ascending."""
        if self._first is None:
            _ = self.groups
        assert self._first is not None
        return self._first

    @property
    def keys(self) -> dict[tuple[str, str], int]:
        """``(scope, canonical key) → records carrying it``, whatever their standing."""
        if self._keys is None:
            keys: dict[tuple[str, str], int] = {}
            for n in self.records:
                k = n.fields.get("key")
                if k:
                    keys[(n.scope, k)] = keys.get((n.scope, k), 0) + 1
            self._keys = keys
        return self._keys


@dataclass(slots=True)
class Splice:
    """How the head (merged nodes) changed: ``deleted`` old positions and ``inserted`` new
    positions, both ascending, and the nodes that left (``removed``) and came (``added``);
    every other head node kept its relative order."""

    deleted: list[int]
    inserted: list[int]
    removed: list[Node]
    added: list[Node]


def _key(n: Node) -> str:
    return n.fields.get("key", "") if n.kind in ("fact", "skill") else ""


def patch_view(
    b: Built,
    records: list[Node],
    scopes: Sequence[str],
    standing_of: Callable[[Node], Standing],
    merged_memo: dict[tuple[Node, ...], Node],
) -> tuple[Built, Splice] | None:
    """Apply the records that differ from ``b.records`` (by identity, same positions) to the
    view and the merge, or ``None`` when a full build is needed (see the module docstring).

    Args:
        b: the last build; its tables are updated in place and handed to the result, so it
            must not be used again when a result is returned (nothing is changed on ``None``).
        records: the new records (facts, then skills), as many as ``b.records``.
        scopes: the authorized scopes. standing_of: a record's design §7.3 standing at the
            build's date (:func:`talos.view.trust.standing`, memoized by the caller).
        merged_memo: merged nodes by group (:func:`talos.graph.merge_duplicates`'s memo);
            the groups the edit touched are replaced in it.

    Returns:
        ``(built, splice)``: the new :class:`Built` (its graph and incidence still ``b``'s:
        the caller sets them) and how its head differs from ``b.head``.
    """
    old = b.records
    if len(old) != len(records) or b.when[1]:  # overrides: §7.5 rewrites keyed records
        return None
    changed = [i for i, (o, n) in enumerate(zip(old, records, strict=True)) if o is not n]
    if not changed or len(changed) > MAX_CHANGED:
        return None
    keys, at_view = b.keys, b.at_view
    key_delta: dict[tuple[str, str], int] = {}
    plan: list[tuple[Node, Node, Standing]] = []
    for i in changed:
        o, n = old[i], records[i]
        if o.kind != "fact" or n.kind != "fact":
            return None
        was, now = standing_of(o), standing_of(n)
        if was[0] != now[0] or was[0] == "unreadable":
            return None  # the view grows or shrinks, or a warning is due: full build
        for node, d in ((o, -1), (n, 1)):
            k = _key(node)
            if k:
                sk = (node.scope, k)
                held = keys.get(sk, 0) + key_delta.get(sk, 0)
                # active: the only record of its key before, and of its new key after
                if was[0] == "active" and held != (1 if d < 0 else 0):
                    return None
                key_delta[sk] = key_delta.get(sk, 0) + d
        if was[0] == "active" and id(o) not in at_view:
            return None
        if was[0] == "excluded" and not any(e.node is o for e in b.view.excluded):
            return None
        plan.append((o, n, now))

    # -- nothing below returns None: b's tables become the new build's -----------------------
    for sk, d in key_delta.items():
        if keys.get(sk, 0) + d:
            keys[sk] = keys.get(sk, 0) + d
        else:
            keys.pop(sk, None)
    v0 = b.view
    view = View(v0.nodes, v0.excluded, v0.conflicts, v0.winners)
    groups, first = b.groups, b.first
    touched: dict[GroupKey, tuple[int, tuple[Node, ...]] | None] = {}  # group → (first, nodes)
    for o, n, now in plan:
        if now[0] == "excluded":
            if view.excluded is v0.excluded:
                view.excluded = list(v0.excluded)
            at = next(j for j, e in enumerate(view.excluded) if e.node is o)
            view.excluded[at] = Excluded(n, now[1], now[2])
            continue
        if now[0] != "active":
            continue  # outside the authorized scopes: in no view
        if view.nodes is v0.nodes:
            view.nodes = list(v0.nodes)
        if (_key(o) or _key(n)) and view.winners is v0.winners:
            view.winners = dict(v0.winners)
        if _key(o):
            view.winners.pop((o.scope, _key(o)), None)
        if _key(n):
            view.winners[(n.scope, _key(n))] = n
        v = at_view.pop(id(o))
        view.nodes[v] = n
        at_view[id(n)] = v
        for g in ((o.kind, o.keywords), (n.kind, n.keywords)):
            if g not in touched:
                pos = groups.get(g)
                touched[g] = (pos[0], tuple(v0.nodes[p] for p in pos)) if pos else None
        gone = groups[(o.kind, o.keywords)]
        gone.remove(v)
        if not gone:
            del groups[(o.kind, o.keywords)]
        bisect.insort(groups.setdefault((n.kind, n.keywords), []), v)

    head = list(b.head)
    deleted: list[int] = []
    for before in touched.values():
        if before is not None:
            h = bisect.bisect_left(first, before[0])
            assert first[h] == before[0], "merge groups out of step with the head"
            deleted.append(h)
            merged_memo.pop(before[1], None)
    deleted.sort()
    removed = [head[h] for h in deleted]
    first = list(first)
    for h in reversed(deleted):
        del head[h], first[h]
    fresh: dict[tuple[Node, ...], Node] = {}
    coming = sorted(
        (pos[0], merge_group(view.nodes, pos, merged_memo, fresh))
        for g in touched
        if (pos := groups.get(g))
    )
    for p, node in coming:
        h = bisect.bisect_left(first, p)
        first.insert(h, p)
        head.insert(h, node)
    merged_memo.update(fresh)
    inserted = [bisect.bisect_left(first, p) for p, _node in coming]

    b._first = first  # the other tables were updated in place
    built = Built(records, b.block, b.when, view, head, b.incidence, b.graph, tables=b)
    return built, Splice(deleted, inserted, removed, [node for _p, node in coming])


def _runs(
    deleted: Sequence[int], inserted: Sequence[int], n_old: int, n_new: int
) -> list[tuple[int, int] | int]:
    """The new sequence as pieces: ``(start, stop)`` runs of kept old positions, and the new
    positions of inserted items, in order."""
    out: list[tuple[int, int] | int] = []
    o = j = di = ii = 0
    while j < n_new or o < n_old:
        if ii < len(inserted) and inserted[ii] == j:
            out.append(j)
            j += 1
            ii += 1
        elif di < len(deleted) and deleted[di] == o:
            o += 1
            di += 1
        else:
            run = min(
                (inserted[ii] if ii < len(inserted) else n_new) - j,
                (deleted[di] if di < len(deleted) else n_old) - o,
            )
            if run <= 0:
                raise AssertionError("splice positions do not add up")
            out.append((o, o + run))
            o += run
            j += run
    return out


def _splice_entries(
    ptr: Any, entries: Any, runs: list[tuple[int, int] | int], rows: Mapping[int, Any]
) -> Any:
    """Node-major entries after a splice: kept runs copied, inserted rows in place."""
    parts = [entries[ptr[r[0]] : ptr[r[1]]] if isinstance(r, tuple) else rows[r] for r in runs]
    return np.concatenate(parts) if parts else entries[:0]


def splice_incidence(
    inc: Incidence, sp: Splice, head: Sequence[Node], vocab: Vocabulary
) -> Incidence:
    """``inc`` with the head rows ``sp`` deleted and inserted (ids from ``vocab``). Rows keep
    the order of the keyword strings, as :meth:`Vocabulary.incidence` lays them out."""
    rows = {j: vocab.row(head[j].keywords) for j in sp.inserted}
    n_old, n_new = inc.n_nodes, len(head)
    lengths = np.diff(inc.node_ptr)
    keep = np.ones(n_old, dtype=bool)
    keep[sp.deleted] = False
    new_lengths = np.empty(n_new, dtype=np.int64)
    fresh = np.zeros(n_new, dtype=bool)
    fresh[sp.inserted] = True
    new_lengths[~fresh] = lengths[keep]
    new_lengths[sp.inserted] = [len(rows[j]) for j in sp.inserted]
    ptr = np.zeros(n_new + 1, dtype=np.int64)
    np.cumsum(new_lengths, out=ptr[1:])
    runs = _runs(sp.deleted, sp.inserted, n_old, n_new)
    kw = _splice_entries(inc.node_ptr, inc.node_kw, runs, rows)
    return Incidence(vocab.words, ptr, kw, lookup=vocab.ids, base=inc.base)


def splice_cache(old: Graph, new: Graph, sp: Splice) -> None:
    """Carry ``old``'s per-record values to ``new`` after a splice of its records: the kinds
    and the skill mask, as a fresh build computes them. (The incidence arrays need no carrying:
    :meth:`Graph.arrays` builds only the records' segment and reuses the episodes'.)"""
    n_old, n_new = old.records, new.records
    runs = _runs(sp.deleted, sp.inserted, n_old, n_new)
    kinds = old.cache.get("kinds")
    if kinds is not None:
        now = dict(zip(sp.inserted, [n.kind for n in sp.added], strict=True))
        new.cache["kinds"] = [
            x for r in runs for x in (kinds[r[0] : r[1]] if isinstance(r, tuple) else [now[r]])
        ]
    mask = old.cache.get("skill_mask")
    if mask is not None:
        skill = {
            j: np.array([n.kind == "skill"]) for j, n in zip(sp.inserted, sp.added, strict=True)
        }
        new.cache["skill_mask"] = _splice_entries(np.arange(n_old + 1), mask, runs, skill)
