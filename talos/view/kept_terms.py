"""The ``evidence`` model's term index and contiguity edges, kept per graph by
:class:`talos.view.kept.KeptState` (design §11): :class:`TermState`.

The term index of a graph is patched from the last one when the graph came from its graph by
edits and sessions (:mod:`talos.view.termpatch`: only the new nodes' texts are looked up), read
from the ranking block stored with the records (:mod:`talos.index.ranking`), or gathered from
the analyzed term rows index.db keeps (:class:`talos.view.termrows.TermRows`); without the index it
is :func:`talos.ranking.evidence.of_nodes` over the nodes, the reference route the others are
compared against.

The parts, each with the rule that says it is stale:

- ``evidence``: the term index and edges of a graph (:class:`talos.view.termpatch.Carried`), by
  graph identity;
- ``steps``: how each graph patched or restacked since ``evidence``'s came from the one
  before (:mod:`talos.view.termpatch`'s carries), while ``evidence`` is kept;
- ``term_rows``: the analyzed term rows of matching texts, read from index.db once, never
  stale (a row is a function of its text);
- ``ranked``: the graph of a one-shot route and its ranking block's token (:meth:`rank_as`);
- ``rows_serial``: the serial of the term rows ``evidence.rows`` index, when they were read
  with the ranking block (None: they index ``term_rows`` as held);
- ``stored_records``: the records' token and the graph last read from them, the base of a
  patched term index after a new session in a process that only recalls.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3

import numpy as np

from talos.graph.graph import Graph, StackedNodes
from talos.graph.stored import BlockError
from talos.home import Paths
from talos.index import Index, ranking
from talos.index.ranking import ranking_token
from talos.model import Node
from talos.ranking.arrays import unique
from talos.ranking.contiguity import Links, MemoryContexts, resized
from talos.ranking.evidence import (
    TermIndex,
    contiguity_of,
    heading_context,
    line_contexts,
    matching_text,
    of_nodes,
)
from talos.sources.facts import read_memory
from talos.view.termpatch import (
    MAX_STEPS,
    Carried,
    composed,
    fresh_limit,
    patch_index,
    restacked,
)
from talos.view.termrows import (
    STORE_AFTER,
    TermRows,
    analyzer_token,
    matching_texts,
    matching_texts_at,
)
from talos.warn import warn

__all__ = ["TermState", "same_nodes"]


def same_nodes(old: Graph, new: Graph) -> np.ndarray | None:
    """The carry (:mod:`talos.view.termpatch`) of a view built again over the same episode block:
    each new record node's position in ``old`` when it is the same object (a line not edited,
    a merge group not touched: the merge memo keeps its node), else -1; the episodes at their
    old positions. None when the episodes differ. A line added to memory.md builds the view
    again (:func:`talos.view.patch.patch_view` takes edits in place only), and the term index was
    then gathered anew: 0.92 s of a 1.27 s recall at 100,000 sessions (issue 24)."""
    o_nodes, n_nodes = old.nodes, new.nodes
    o_stacked, n_stacked = isinstance(o_nodes, StackedNodes), isinstance(n_nodes, StackedNodes)
    if o_stacked != n_stacked or (
        isinstance(o_nodes, StackedNodes)
        and isinstance(n_nodes, StackedNodes)
        and o_nodes.block is not n_nodes.block
    ):
        return None
    o_head, n_head = old.nodes[: old.records], new.nodes[: new.records]
    where = {id(n): i for i, n in enumerate(o_head)}
    got = [where.get(id(n), -1) for n in n_head]
    # a node made again with the same texts (a skill after a line was added: its order
    # moved) holds the same terms: matched by what it is matched by, in order
    taken = set(got)
    spare: dict[tuple[str, str, str], list[int]] = {}
    for i, n in enumerate(o_head):
        if i not in taken:
            spare.setdefault(_terms_key(n), []).append(i)
    last = -1
    for j, i in enumerate(got):
        if i < 0 and spare:
            free = spare.get(_terms_key(n_head[j]))
            if free and free[0] > last:
                i = got[j] = free.pop(0)
        if i >= 0:
            if i <= last:  # kept nodes must stay in order (a patch splices runs)
                got[j] = -1
                continue
            last = i
    carry = np.full(len(new.nodes), -1, dtype=np.int64)
    carry[: new.records] = got
    carry[new.records :] = np.arange(old.records, len(old.nodes), dtype=np.int64)
    return carry


def _terms_key(n: Node) -> tuple[str, str, str]:
    """What decides a node's terms (:func:`talos.view.termrows.matching_texts`): its kind, its
    matching text and its heading context."""
    return (n.kind, matching_text(n), heading_context(n))


class TermState:
    """The ``evidence`` model's term index and edges of the graphs one
    :class:`talos.view.kept.KeptState` hands out, and what they are patched or read from (module
    docstring). ``paths`` is fixed; ``index`` is the kept state's index, ``None`` without it
    or after it failed (the kept state sets it then)."""

    def __init__(self, paths: Paths, index: Index | None) -> None:
        self.paths = paths
        self.index = index
        self.evidence: Carried | None = None
        self.steps: list[tuple[Graph, np.ndarray, bool]] = []  # (graph, carry, records changed)
        self.term_rows: tuple[bool, TermRows] | None = None  # (read from index.db, rows)
        self.ranked: tuple[Graph, str] | None = None
        self.rows_serial: str | None = None
        self.stored_records: tuple[str, Graph] | None = None  # its records' token, the graph

    def evidence_index(self, graph: Graph) -> tuple[TermIndex, Links]:
        """The ``evidence`` model's :class:`~talos.ranking.evidence.TermIndex` and contiguity
        :class:`~talos.ranking.contiguity.Links` of ``graph`` (those of
        :func:`talos.ranking.evidence.of_nodes`
        over its nodes and memory.md as it is now, float for float), kept while the graph is
        the same object. With the index the term index is patched from the last one when
        ``graph`` came from its graph by edits and sessions (:meth:`_patched_terms`), else
        gathered from stored term rows (:meth:`_stored_terms`; in-process 485 → 71 ms at
        3,000 sessions, 2,352 → 362 ms at 30,000 in one run, ``bench/termstore.py``); the
        edges are linked again only when a record or memory.md changed. An unreadable
        memory.md costs the edges only (its facts are not in the graph then)."""
        last = self.evidence
        if last is not None and last.graph is graph:
            return last.index, last.links
        try:
            data = read_memory(self.paths.memory_file)
            text: str | None = data.decode("utf-8", errors="replace")
        except OSError:
            data, text = b"", None
        # the edges hang on memory.md's blank lines and short lines, which no fact row holds
        # (a paragraph split kept the facts' token): the block is of the text as it is
        version = hashlib.blake2b(data, digest_size=16).hexdigest() if text is not None else "-"
        rows: np.ndarray | None = None
        contexts: MemoryContexts | None = None
        got: tuple[TermIndex, np.ndarray] | None = None
        if self.index is None:  # the files read directly: the reference route
            index, edges = of_nodes(graph.nodes, str(self.paths.memory_file), text)
        else:
            got = self._patched_terms(graph)
            ranked = self._ranked_terms(graph, version) if got is None else None
            if ranked is not None:
                index, edges, rows, serial = ranked
                self.evidence = Carried(graph, index, edges, rows, text, None)
                self.steps = []
                self.rows_serial = serial
                return index, edges
            index, rows = got if got is not None else self._stored_terms(graph)
            if last is not None and last.text == text:
                contexts = last.contexts
            elif text is not None:
                contexts = line_contexts(text, last.contexts if last is not None else None)
            if (
                got is not None
                and last is not None
                and last.text == text
                and not any(records for _g, _c, records in self.steps)
            ):
                edges = resized(last.links, len(graph.nodes))  # a session changes no fact
            else:
                head = graph.nodes[: graph.records]
                mf = str(self.paths.memory_file)
                edges = contiguity_of(head, len(graph.nodes), mf, text, contexts)
        self.evidence = Carried(graph, index, edges, rows, text, contexts)
        self.steps = []
        self.rows_serial = None
        gathered = self.index is not None and got is None  # not patched: worth storing
        if gathered and self.ranked is not None and self.ranked[0] is graph:
            assert self.index is not None
            held = self.term_rows
            # the rows are worth keeping when they are all in the stored term rows
            serial = held[1].serial if held and held[0] and not held[1].added else ""
            token = f"{self.ranked[1]}:{version}"
            blob = ranking.to_bytes(index, edges, token, rows if serial else None, serial)
            with contextlib.suppress(OSError, sqlite3.Error):  # a cache: costs speed only
                self.index.save_terms(token, blob, "ranking")
        return index, edges

    def _ranked_terms(
        self, graph: Graph, version: str
    ) -> tuple[TermIndex, Links, np.ndarray | None, str] | None:
        """The term index, edges, term rows and their serial (:func:`ranking.from_bytes`) of
        ``graph`` and memory.md's text of digest ``version``, read from the ranking block
        (:mod:`talos.index.ranking`) when ``graph`` is the view of a one-shot route and the
        block is of its token; None otherwise (a block that does not decode is warned about
        and stored again)."""
        if self.ranked is None or self.ranked[0] is not graph or self.index is None:
            return None
        token = f"{self.ranked[1]}:{version}"
        try:
            data = self.index.load_terms(token, "ranking")
        except (OSError, sqlite3.Error):
            return None
        if data is None:
            return None
        try:
            index, edges, rows, serial = ranking.from_bytes(data, token)
        except BlockError as e:
            warn(f"{self.index.file}: stored ranking block unusable ({e}); rebuilding it")
            return None
        if index.n != len(graph.nodes) or edges.out.shape != (index.n,):
            warn(f"{self.index.file}: stored ranking block of another view; rebuilding it")
            return None
        self.ranked = None  # read: nothing to store again
        return index, edges, rows, serial

    def stepped(self, old: Graph, new: Graph, carry: np.ndarray | None, records: bool) -> None:
        """Note that ``new`` came from ``old`` by ``carry`` (:mod:`talos.view.termpatch`; ``None``:
        unknown), ``records``: whether a record changed. Kept only while it continues from
        the graph of ``evidence``, and only once the model built one."""
        if self.evidence is None:
            return
        tip = self.steps[-1][0] if self.steps else self.evidence.graph
        if carry is None or tip is not old or len(self.steps) >= MAX_STEPS:
            self.steps = []  # the chain is broken: the next index is gathered again
            return
        self.steps.append((new, carry, records))

    def stored_step(self, token: str, graph: Graph) -> None:
        """Note how ``graph``, read from the stored records of ``token``, came from the last
        graph read so (:meth:`stepped`): the same records (the same token) over a block made
        from the last one (a new or removed session in a process that only recalls, as the
        MCP server's)."""
        last, self.stored_records = self.stored_records, (token, graph)
        if last is None or last[0] != token or last[1] is graph:
            return
        old = last[1]
        o_nodes, n_nodes = old.nodes, graph.nodes
        if not isinstance(o_nodes, StackedNodes) or not isinstance(n_nodes, StackedNodes):
            self.stepped(old, graph, None, False)
            return
        groups = n_nodes.block.carried_from(o_nodes.block)
        fits = groups is not None and old.records == graph.records
        carry = restacked(graph.records, groups) if fits and groups is not None else None
        self.stepped(old, graph, carry, False)

    def _patched_terms(self, graph: Graph) -> tuple[TermIndex, np.ndarray] | None:
        """The term index of ``graph`` patched from ``evidence``'s along ``steps``
        (:func:`talos.view.termpatch.patch_index`: only the new nodes' texts are looked up), or
        ``None`` when ``graph`` did not come from it that way or too much changed."""
        last = self.evidence
        if last is None or last.rows is None or not self.steps or self.steps[-1][0] is not graph:
            return None
        # rows read with the ranking block are valid in the term rows of their serial only
        serial = self.rows_serial
        if serial is not None and self.index is not None and self._term_rows().serial != serial:
            return None
        if self.term_rows is None:
            return None
        if len(last.rows) and int(last.rows.max()) >= len(self.term_rows[1]):
            return None  # rows a stored block claims that the term rows do not hold
        carry = composed([c for _g, c, _r in self.steps])
        fresh = np.flatnonzero(carry < 0)
        if len(carry) != len(graph.nodes) or len(fresh) > fresh_limit(len(carry)):
            return None
        rows = self.term_rows[1]
        new_rows = rows.rows(matching_texts_at(graph.nodes, fresh.tolist()))
        index = patch_index(last.index, carry, rows, new_rows)
        used = np.empty(len(carry), dtype=np.int64)
        kept = carry >= 0
        used[kept] = last.rows[carry[kept]]
        used[fresh] = new_rows
        return index, self._store_rows(used)

    def _stored_terms(self, graph: Graph) -> tuple[TermIndex, np.ndarray]:
        """The term index of ``graph`` gathered from the analyzed term rows index.db keeps
        (:class:`talos.view.termrows.TermRows`, read once per object), and each node's row: only
        texts no row holds are analysed (:meth:`_store_rows`)."""
        index, used = self._term_rows().index(matching_texts(graph.nodes))
        return index, self._store_rows(used)

    def _term_rows(self) -> TermRows:
        """The analyzed term rows, read from index.db once per object (empty when none are
        stored or they do not decode: warned, analysed again and stored anew)."""
        assert self.index is not None
        if self.term_rows is None:
            token = analyzer_token()
            rows = None
            with contextlib.suppress(OSError, sqlite3.Error):  # a cache: costs speed only
                data = self.index.load_terms(token)
                if data is not None:
                    try:
                        rows = TermRows.from_bytes(data, token)
                    except BlockError as e:
                        warn(f"{self.index.file}: stored term rows unusable ({e}); rebuilding them")
            self.term_rows = (rows is not None, rows or TermRows.empty())
        return self.term_rows[1]

    def _store_rows(self, used: np.ndarray) -> np.ndarray:
        """Store the term rows again once :data:`talos.view.termrows.STORE_AFTER` texts were
        analysed (or when none were stored), dropping most rows no node's any more (the
        nodes' rows ``used``); returns ``used`` in the rows then held."""
        assert self.index is not None and self.term_rows is not None
        stored, rows = self.term_rows
        if rows.added and (not stored or rows.added >= STORE_AFTER):
            token = analyzer_token()
            held = unique(used)
            out = rows.kept(held) if 2 * len(held) < len(rows) else rows
            with contextlib.suppress(OSError, sqlite3.Error):
                self.index.save_terms(token, out.to_bytes(token))
                self.term_rows = (True, out)
                out.added = 0
                if out is not rows:  # renumbered: row ``held[i]`` is row ``i`` now
                    used = np.searchsorted(held, used)
        return used

    def rank_as(self, graph: Graph, records: str) -> None:
        """Note the ranking block's token of ``graph``, the view of the stored records
        ``records`` (:func:`talos.index.ranking.ranking_token`): :meth:`evidence_index` reads
        its term index from the block, or stores it there."""
        assert self.index is not None
        stacked = isinstance(graph.nodes, StackedNodes)
        self.ranked = (graph, ranking_token(records, self.index.sessions_token, stacked))
