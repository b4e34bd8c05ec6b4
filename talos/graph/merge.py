"""Merging duplicate nodes (design §5.1): one rule shared by the records, the episode block and
the in-place patch (:mod:`talos.view.patch`), so every route gives the same merged nodes."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from talos.model import Node

__all__ = ["merge_duplicates", "merge_group", "merge_groups", "merge_members"]


def merge_duplicates(
    nodes: Sequence[Node], memo: dict[tuple[Node, ...], Node] | None = None
) -> list[Node]:
    """Merge nodes of the same kind whose keyword sets are equal (design §5.1).

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
    """The node standing for one group of :func:`merge_groups` (design §5.1): the node itself
    when it is alone and carries no members, else a copy of the last one with the others as
    ``members`` and the first one's ``order``. Shared by :func:`merge_duplicates` and the
    edit patch (:mod:`talos.view.patch`), so both merge alike.

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
    """Positions with equal keys (design §5.1: kind and keyword set), grouped in order of first
    occurrence, each group ascending. Shared by :func:`merge_duplicates` and the episode block
    of the index (:mod:`talos.graph.episodes`), so both merge alike."""
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
