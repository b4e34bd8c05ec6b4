"""Contiguity edges: facts written next to each other are associated (issue 15, dev research).

The contiguity effect of free recall: in a dialogue the answer is the turn after the question,
in a person's notes the facts under one heading and of one day belong together. The keyword
graph cannot reach such a neighbour when it shares no specific term with the query; a
contiguity edge reaches it in one hop (``talos.ranking.evidence.spread`` carries activation along
them). Dev: LoCoMo R@5 0.580 → 0.642, Chinese set 0.708 → 0.731 (``bench/README.md``
"Contiguity").

**Context.** The fact lines of ``memory.md`` in file order; a line's *context* is its section
(the texts of the markdown headings above it, outermost first, issue 15 item 4), its
observed date (the provenance tag's date, "" untagged) and its paragraph (a blank line ends
one): :func:`memory_contexts`. An untagged line is in no context. A *context
run* is a maximal run of consecutive fact lines of one context; lines that are no node (too
short, filtered) are skipped, a line in no context ends the run, and consecutive lines of the
same node count once (four identical lines are one line).

**Edges.** In a run, the line at position ``j`` links to ``j + δ`` (``δ = 1 … w``: written after
it) with weight ``FALL^(δ-1)`` and to ``j - δ`` with ``BACK·FALL^(δ-1)``. A node's edge to
another is the largest weight over its lines (a merged node, design §5.1, has a line per member:
it links to the neighbours of each, none counted twice); no node links to itself. An edge's
*share* is its weight over ``W = (1 + BACK)·Σ_δ FALL^(δ-1)``, the weight of a full window (or
over the node's weight sum when a merged node's lines sum to more): a line at a run's end
hands on less and keeps the rest. Built in one pass, O(lines·w).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from talos.sources.facts import Outline, any_underline, setext_headings, strip_tag

__all__ = [
    "BACK",
    "FALL",
    "WINDOW",
    "Links",
    "MemoryContexts",
    "links",
    "memory_contexts",
    "no_links",
    "resized",
]

#: ``w``: lines linked each way (dev: w 1 / 2 / 3 → LoCoMo R@5 0.625 / 0.642 / 0.631).
WINDOW = 2
#: Weight of each further line (``contiguity_lab.py sweep``: the plateau's round centre).
FALL = 0.5
#: Weight of a backward edge: symmetric. Forward only drains a run to its last line (LoCoMo
#: 0.497 at C 0.5, w 2).
BACK = 1.0


@dataclass(frozen=True, slots=True)
class Links:
    """Contiguity edges of ``n`` nodes, sender-major: node ``i`` hands to
    ``dst[ptr[i]:ptr[i+1]]`` (ascending) the parts ``share[...]`` of its contiguity mass;
    ``src`` is each edge's sender, ``out[i]`` = ``σ_i`` (the sum of its shares, ≤ 1);
    ``ahead[e]``: the receiver was written after the sender (a line of it follows a line of
    the sender in a run)."""

    ptr: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    share: np.ndarray
    out: np.ndarray
    ahead: np.ndarray

    @property
    def edges(self) -> int:
        """Number of directed edges."""
        return len(self.dst)

    def share_of(self, i: int, j: int) -> float:
        """The share ``i`` hands to ``j`` (0.0: no edge)."""
        lo, hi = self.ptr[i], self.ptr[i + 1]
        k = lo + int(np.searchsorted(self.dst[lo:hi], j))
        return float(self.share[k]) if k < hi and self.dst[k] == j else 0.0

    def neighbours(self, i: int, after: bool = False) -> list[int]:
        """The nodes ``i`` hands to, ascending (``after``: only those written after it)."""
        lo, hi = self.ptr[i], self.ptr[i + 1]
        if after:
            return self.dst[lo:hi][self.ahead[lo:hi]].tolist()
        return self.dst[lo:hi].tolist()


def no_links(n: int) -> Links:
    """``n`` nodes without a contiguity edge (spreading is then the keyword hop alone)."""
    z = np.zeros(0, dtype=np.intp)
    return Links(np.zeros(n + 1, dtype=np.intp), z, z, np.zeros(0), np.zeros(n), z.astype(bool))


def links(
    node_of: Sequence[int],
    context: Sequence[Hashable],
    n: int,
    window: int = WINDOW,
    back: float = BACK,
    fall: float = FALL,
    positions: str = "all",
) -> Links:
    """The contiguity edges of ``n`` nodes (module docstring).

    Args:
        node_of: per fact line in file order, its node (``-1``: no node).
        context: per line, its context (any hashable: ``(headings, date)``); ``None``: a line
            in no context (linked to nothing).
        window: ``w`` ≥ 1. back: ≥ 0. fall: > 0. positions: ``"all"`` (a merged node's every
            line) or ``"last"`` (its representative's; measured identical on dev).

    Returns:
        :class:`Links` (no edge when every run has one line).

    Raises:
        ValueError: ``node_of`` and ``context`` differ in length, or a bad parameter.
    """
    if len(node_of) != len(context):
        raise ValueError(f"node_of has {len(node_of)} lines, context {len(context)}")
    if window < 1 or back < 0 or fall <= 0 or positions not in ("all", "last"):
        raise ValueError(f"bad contiguity parameters {window=} {back=} {fall=} {positions=}")
    lines = [(int(v), c) for v, c in zip(node_of, context, strict=True) if v >= 0]
    if positions == "last":
        last = {v: j for j, (v, _c) in enumerate(lines)}
        lines = [(v, c) if last[v] == j else (-1, None) for j, (v, c) in enumerate(lines)]
    runs: list[list[int]] = []
    prev: object = object()
    for v, c in lines:
        if v < 0 or c is None:
            prev = object()  # a dropped or context-free line ends the run
            continue
        if c != prev:
            runs.append([])
            prev = c
        if not runs[-1] or runs[-1][-1] != v:
            runs[-1].append(v)
    weight: dict[tuple[int, int], float] = {}
    ahead: set[tuple[int, int]] = set()

    def put(u: int, v: int, w: float) -> None:
        if u != v and w > weight.get((u, v), 0.0):
            weight[(u, v)] = w

    for run in runs:
        for j, u in enumerate(run):
            for d in range(1, window + 1):
                w = fall ** (d - 1)
                if j + d < len(run):
                    put(u, run[j + d], w)
                    if u != run[j + d]:
                        ahead.add((u, run[j + d]))
                if back > 0 and j - d >= 0:
                    put(u, run[j - d], back * w)
    full = (1 + back) * sum(fall ** (d - 1) for d in range(1, window + 1))
    pairs = sorted(weight)
    src = np.array([u for u, _v in pairs], dtype=np.intp)
    dst = np.array([v for _u, v in pairs], dtype=np.intp)
    wt = np.array([weight[p] for p in pairs], dtype=np.float64)
    total = np.bincount(src, weights=wt, minlength=n) if len(src) else np.zeros(n)
    share = wt / np.maximum(full, total[src]) if len(src) else wt
    ptr = np.zeros(n + 1, dtype=np.intp)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    out = np.bincount(src, weights=share, minlength=n) if len(src) else np.zeros(n)
    fwd = np.array([pr in ahead for pr in pairs], dtype=bool)
    return Links(ptr, src, dst, share, out, fwd)


def resized(edges: Links, n: int) -> Links:
    """``edges`` over ``n`` nodes: what :func:`links` gives for the same lines when nodes
    without a line (episodes, after the records) came or went, array for array.

    Raises:
        ValueError: a node ``n`` or above has an edge.
    """
    old = len(edges.out)
    if n < old and (int(edges.ptr[n]) != edges.edges or (edges.edges and edges.dst.max() >= n)):
        raise ValueError(f"a node at or above {n} has a contiguity edge")
    if n <= old:
        return dataclasses.replace(edges, ptr=edges.ptr[: n + 1], out=edges.out[:n])
    more = n - old
    ptr = np.concatenate([edges.ptr, np.full(more, edges.ptr[-1], dtype=edges.ptr.dtype)])
    return dataclasses.replace(edges, ptr=ptr, out=np.concatenate([edges.out, np.zeros(more)]))


Context = tuple[tuple[str, ...], str, int]  #: a line's ``(headings, date, paragraph)``


def memory_contexts(text: str) -> dict[int, Context]:
    """``{line number (1-based): (headings, date, paragraph)}`` of the ``memory.md`` lines that
    are in a context: ``headings`` = the texts of the headings above the line, outermost first (a
    heading ends the sections of its level and deeper, design §3.1; headings as the fact reader
    reads them, :class:`talos.sources.facts.Outline`: closing ``#`` run dropped, none inside a
    code fence), ``date`` = its provenance tag's date (``talos.sources.facts.strip_tag``; ""
    untagged), ``paragraph`` = the number of blank lines and headings above it (a blank line
    ends a run, as it ends a markdown paragraph; a heading ends one too, also between two
    sections of one name: facts on either side of a heading are no neighbours, issue 15 item 4).

    An untagged line is in no context: hand-written notes one a line are independent facts,
    under a heading too, and linking them delivered the next line of the file with no query
    word ("set up a new python project with lint" → "The billing service deploys on fridays";
    "how should I format your answers" → "Deploy region is eu-west-1" under ``# Memory``).
    Dated lines (a session's turns, a day's ``remember``) are what the effect was measured on.
    Heading lines and blank lines are in none. Which lines are facts is the caller's (the
    home's nodes)."""
    return MemoryContexts.of(text).contexts


@dataclass(frozen=True, slots=True)
class MemoryContexts:
    """:func:`memory_contexts` of a text (``contexts``) with what brings it up to date after
    an in-place edit without reading every line again (:meth:`edited`): the text's ``lines``
    and per line (0-based) the ``(headings, paragraph)`` it stands in (``where``)."""

    lines: list[str]
    where: list[tuple[tuple[str, ...], int]]
    contexts: dict[int, Context]
    #: the text holds a line that may be a setext underline (``sources.facts.any_underline``)
    setext: bool = False

    @classmethod
    def of(cls, text: str) -> MemoryContexts:
        """Every line of ``text`` read in file order (:func:`memory_contexts`)."""
        out: dict[int, Context] = {}
        where: list[tuple[tuple[str, ...], int]] = []
        para = 0
        lines = text.splitlines()
        data = text.encode("utf-8", "surrogatepass")
        setext = any_underline(data)
        outline = Outline(None, setext_headings(data, lines) if setext else None)
        for no, line in enumerate(lines, 1):
            level, path = outline.step(line, no - 1)
            where.append((path, para))
            if level or not line.strip():
                para += 1
                continue
            date = strip_tag(line)[2]
            if date:
                out[no] = (path, date, para)
        return cls(lines, where, out, setext)

    def edited(self, text: str, most: int = 16) -> MemoryContexts | None:
        """The contexts of ``text`` when it is this text with at most ``most`` lines changed
        in place, each a *plain* line before and after (not blank, no ``#``, backtick or
        ``~``: no heading, fence or paragraph break moves, so every other line keeps its
        context and the changed ones keep their headings and paragraph); ``None`` otherwise
        (read it with :meth:`of`). Equal to ``MemoryContexts.of(text)`` (an edit of memory.md
        cost 21 ms of contexts at 30,000 sessions, ``tests/test_termpatch.py``)."""
        lines = text.splitlines()
        if self.setext or len(lines) != len(self.lines):
            return None  # an edit of any line may move a setext heading: read it again
        if any_underline(text.encode("utf-8", "surrogatepass")):
            return None
        changed = [i for i, (a, b) in enumerate(zip(self.lines, lines, strict=True)) if a != b]
        if len(changed) > most or not all(
            _plain(self.lines[i]) and _plain(lines[i]) for i in changed
        ):
            return None
        out = dict(self.contexts)
        for i in changed:
            path, para = self.where[i]
            date = strip_tag(lines[i])[2]
            if date:
                out[i + 1] = (path, date, para)
            else:
                out.pop(i + 1, None)
        return MemoryContexts(lines, self.where, out, False)


def _plain(line: str) -> bool:
    """A line that can be no heading, fence or blank line (:meth:`MemoryContexts.edited`)."""
    return bool(line.strip()) and "#" not in line and "`" not in line and "~" not in line
