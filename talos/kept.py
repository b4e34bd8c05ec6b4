"""The state kept between calls of one :class:`talos.Memory`: the view and graph of the last
call and what they were built from, and the routes that bring them up to date (SPEC §11).

A call takes one look at its inputs (:meth:`KeptState._look` gives the :class:`Tokens`: the
index refreshed, the skills' stats), and a part is reused while what it was made from is
unchanged. Otherwise it is
brought up to date from its old value where a cheaper route is proven — an in-place edit of
memory.md patched in (:meth:`KeptState._patch`, :mod:`talos.patch`), new sessions restacked
under the same records (:meth:`KeptState._restack`), the records read back from the index in a
process that only recalls (:meth:`KeptState._recall_graph`) — or made again
(:meth:`KeptState._view`). Without the index the files are read again whenever the view is
built: the reference route the tests compare the others against.

The parts, each with the rule that says it is stale. :class:`Tokens` is the one look at the
inputs (the index's two generations or the files' stats, and the skills'), taken once per call:

- ``rows``: the index's fact rows, by ``Tokens.facts``;
- ``episodes``: the episode block, by ``Tokens.sessions``; a stale one is handed to
  :meth:`talos.index.Index.episode_block` to be extended or trimmed;
- ``filtered``: the fact filter's verdict per text (the filter is fixed for the object);
- ``skills``: the skill nodes, by ``(Tokens.skills, start)``;
- ``vocab``: keyword ids extending the block's, by identity (``vocab.base is`` the block's
  incidence); rebased on a restack;
- ``merged``: the merged node of each group, by the group's node objects;
- ``standing``: each node's standing, by ``(scopes, day)`` and node identity;
- ``built``: the last build (:class:`talos.patch.Built`), the base of a patch and a restack;
- ``fresh``: the ``(tokens, when)`` that ``built`` answers for; ``None`` after a write through
  :class:`talos.Memory` (:meth:`KeptState.wrote`), so the next call builds (or patches) again;
- ``stored``: the graph read from the stored records, by ``(tokens, day)``, never with
  overrides;
- ``stored_records``: the records' token and the graph last read from them, the base of a
  patched term index after a new session in a process that only recalls;
- ``usage_keys``: the usage keys in view (:class:`talos.usage.PresentKeys`), by graph identity;
- ``evidence``: the ``evidence`` model's term index and contiguity edges of a graph
  (:class:`talos.termpatch.Carried`), by graph identity; the index gathered from
  ``term_rows`` (with the index) or :func:`talos.evidence.of_nodes` (without), or patched
  from the last one along ``steps``;
- ``steps``: how each graph patched or restacked since ``evidence``'s came from the one
  before (:mod:`talos.termpatch`'s carries), while ``evidence`` is kept;
- ``term_rows``: the analyzed term rows of matching texts (:class:`talos.termrows.TermRows`),
  read from index.db once, never stale (a row is a function of its text).

Without the index ``rows`` and ``episodes`` are not kept: the files are read again whenever the
view is built. It never calls back into :mod:`talos.memory`.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import datetime as dt
import functools
import hashlib
import json
import sqlite3
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from talos import safety
from talos.arrays import unique
from talos.contiguity import Links, MemoryContexts, resized
from talos.evidence import (
    TermIndex,
    contiguity_of,
    heading_context,
    line_contexts,
    matching_text,
    of_nodes,
)
from talos.graph.episodes import EpisodeBlock
from talos.graph.graph import Graph, StackedNodes
from talos.graph.incidence import Incidence, Vocabulary
from talos.graph.merge import merge_duplicates
from talos.graph.records import Kinds, RecordsBlock
from talos.graph.stored import BlockError
from talos.home import Paths
from talos.index import Index, ranking
from talos.index.ranking import ranking_token
from talos.model import Node
from talos.patch import Built, patch_view, splice_cache, splice_incidence
from talos.sources import load_episodes, load_facts, load_skills
from talos.sources.facts import heading_of, masked_fields, read_memory, tag_reasons
from talos.sources.sessions import session_files
from talos.sources.skills import flagged_skills, skill_files
from talos.termpatch import (
    MAX_STEPS,
    Carried,
    composed,
    fresh_limit,
    patch_index,
    restacked,
    spliced,
)
from talos.termrows import (
    STORE_AFTER,
    TermRows,
    analyzer_token,
    matching_texts,
    matching_texts_at,
)
from talos.text import matching_keywords
from talos.trust import View, build_view, standing, validity
from talos.usage import PresentKeys
from talos.warn import warn

__all__ = ["KeptState", "Tokens"]


@dataclass(frozen=True, slots=True)
class Tokens:
    """One look at every input of the kept state, taken once per public call
    (:meth:`KeptState._look`); a part is reused while the tokens it was made from are equal.

    Attributes:
        indexed: whether the index answered (else the files are read directly).
        facts: ``("index", Index.facts_generation)``, or the stat of memory.md.
        sessions: ``("index", Index.sessions_generation)``, or the stats of the session files.
        skills: the stat of each skill file and the names the safety scan flags.
    """

    indexed: bool
    facts: Hashable
    sessions: Hashable
    skills: tuple[Any, ...]


def _stat(p: Path) -> tuple[str, int, int, int]:
    """Path, size, mtime and ctime (a rewrite with the mtime put back still moves the ctime)."""
    try:
        s = p.stat()
        return (str(p), s.st_size, s.st_mtime_ns, s.st_ctime_ns)
    except OSError:
        return (str(p), -1, -1, -1)


def _code_files() -> list[str]:
    """The files whose code turns files into a view: POSIX paths relative to ``talos/``, sorted
    (:func:`_code_fingerprint`; ``tests/test_block.py`` checks that each exists)."""
    here = Path(__file__).parent
    return sorted(
        ["kept.py", "memory.py", "model.py", "trust.py", "render.py", "text.py", "usage.py"]
        + ["usage_store.py"]
        + [f"graph/{p.name}" for p in (here / "graph").glob("*.py")]
        + [f"sources/{p.name}" for p in (here / "sources").glob("*.py")]
    )


@functools.cache
def _code_fingerprint() -> str:
    """A digest of the code that turns files into a view (part of a stored block's token)."""
    here = Path(__file__).parent
    h = hashlib.sha256()
    for name in _code_files():
        try:
            h.update(name.encode() + (here / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()[:16]


def _same_nodes(old: Graph, new: Graph) -> np.ndarray | None:
    """The carry (:mod:`talos.termpatch`) of a view built again over the same episode block:
    each new record node's position in ``old`` when it is the same object (a line not edited,
    a merge group not touched: the merge memo keeps its node), else -1; the episodes at their
    old positions. None when the episodes differ. A line added to memory.md builds the view
    again (:func:`talos.patch.patch_view` takes edits in place only), and the term index was
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
    """What decides a node's terms (:func:`talos.termrows.matching_texts`): its kind, its
    matching text and its heading context."""
    return (n.kind, matching_text(n), heading_context(n))


def _masked_fact(n: Node) -> Node | None:
    """A fact kept by a filter other than :func:`talos.safety.keep_fact` as it may be shown:
    a line that filter would withhold has its credentials masked in ``text`` and ``raw``
    (``None`` when no keyword is left), as the index keeps it (SPEC §8.3; hostile pass of
    issue 13: ``keep_fact=…`` delivered a token in the block)."""
    tagged = bool(n.fields) and bool(tag_reasons(n.raw))
    if safety.keep_fact(n.text) and not tagged:
        return n
    text = safety.mask_secrets(n.text)
    if text == n.text and not tagged:
        return n
    kw = matching_keywords(text)
    if not kw:
        return None
    fields = masked_fields(n.fields) if tagged else n.fields
    raw = safety.mask_secrets(n.raw)
    return dataclasses.replace(n, text=text, raw=raw, keywords=kw, fields=fields)


class KeptState:
    """The state one :class:`talos.Memory` keeps between calls, and the routes that bring it up
    to date (module docstring). ``paths``, ``scopes``, ``keep_fact``, ``blocked``, ``lang`` and
    ``headings`` are fixed for the life of the object; ``index`` is ``None`` without the index
    or after it failed (then the files are read directly).

    ``headings``: a markdown heading of memory.md labels the facts beneath it and is no node
    on any route (SPEC §3.1, every model but ``classic``; :class:`talos.sources.facts.Outline`).
    ``False`` keeps the reference behaviour: the heading's text is a fact. The index keeps
    every line's row either way (one index for every model); the facts are told apart here.
    Only ``evidence`` matches on the heading path (:func:`talos.evidence.of_nodes`): the keyword
    models (``bipartite``, ``flow``, …) keep each fact's own keyword set, so for them a heading
    is just left out. Tried: with the heading's keywords joined, every fact under ``# Memory``
    shares ``memory``, a hop reaches all of them, and ``bipartite`` (no relevance floor) filled
    "kettle descales" with "Deploy region is eu-west-1" — a hit, so ``dead`` no longer proposed
    it (``tests/test_headings.py::test_dead_never_lists_a_heading``, issue 15 "filler counts as
    use")."""

    def __init__(
        self,
        paths: Paths,
        scopes: tuple[str, ...],
        keep_fact: Callable[[str], bool] | None,
        blocked: set[str],
        lang: str,
        index: bool = True,
        headings: bool = True,
        folders: bool = True,
    ) -> None:
        self.paths = paths
        self.headings = headings
        #: Whether skills of the Agent Skills layout (``skills/NAME/SKILL.md``) are read
        #: (SPEC §3.2: every model but ``classic``).
        self.folders = folders
        #: How many level-1 headings memory.md had when it was last read without the index.
        self.tops = 0
        self.scopes = scopes
        self.keep_fact = keep_fact
        self.blocked = blocked
        self.lang = lang
        self.index: Index | None = Index(paths) if index else None
        self.rows: tuple[int, list[tuple[Node, bool]]] | None = None
        self.episodes: tuple[int, EpisodeBlock] | None = None
        self.filtered: dict[str, bool] = {}
        self.vocab: Vocabulary | None = None
        self.skills: tuple[Any, list[Node]] | None = None
        self.merged: dict[tuple[Node, ...], Node] = {}
        self.standing: dict[Any, Any] = {}
        self.stored: tuple[Any, Graph] | None = None
        self.stored_records: tuple[str, Graph] | None = None  # its records' token, the graph
        self.built: Built | None = None
        self.fresh: tuple[Any, ...] | None = None
        self.usage_keys = PresentKeys()
        self.evidence: Carried | None = None
        self.steps: list[tuple[Graph, np.ndarray, bool]] = []  # (graph, carry, records changed)
        self.relabelled: dict[int, tuple[Node, Node]] = {}
        #: memory.md's heading lines as last read (file order), for :meth:`_out_of_window`.
        self.heading_rows: list[Node] = []
        self.unlabelled: dict[tuple[int, tuple[int, ...]], tuple[Node, Node]] = {}
        self.term_rows: tuple[bool, TermRows] | None = None  # (read from index.db, rows)
        #: The graph of a one-shot route and its ranking block's token (:meth:`_rank_as`).
        self.ranked: tuple[Graph, str] | None = None
        #: The serial of the term rows ``evidence.rows`` index, when they were read with the
        #: ranking block (None: they index ``term_rows`` as held).
        self.rows_serial: str | None = None

    def view(self, at: dt.date | None, overrides: Mapping[str, str] | None) -> tuple[View, Graph]:
        """The authorized active view at ``at`` (default today) and its graph, after one look
        at the inputs (:meth:`talos.Memory.view`)."""
        return self._view(at, overrides, self._look())

    def nodes(self) -> list[Node]:
        """All nodes of the home in load order (facts, skills, episodes), before the view."""
        records, block = self._sources()
        start = len(records)
        return records + [block.episode(e, start) for e in range(block.episodes)]

    def recall_graph(self, at: dt.date | None, overrides: Mapping[str, str] | None) -> Graph:
        """The graph a recall ranks over (:meth:`_recall_graph`)."""
        return self._recall_graph(at, overrides)

    def present(self, graph: Graph) -> dict[str, frozenset[str]]:
        """The usage keys in view of ``graph``, per scope (:meth:`_present_keys`)."""
        return self._present_keys(graph)

    def evidence_index(self, graph: Graph) -> tuple[TermIndex, Links]:
        """The ``evidence`` model's :class:`~talos.evidence.TermIndex` and contiguity
        :class:`~talos.contiguity.Links` of ``graph`` (those of :func:`talos.evidence.of_nodes`
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
            text = None
        rows: np.ndarray | None = None
        contexts: MemoryContexts | None = None
        got: tuple[TermIndex, np.ndarray] | None = None
        if self.index is None:  # the files read directly: the reference route
            index, edges = of_nodes(graph.nodes, str(self.paths.memory_file), text)
        else:
            got = self._patched_terms(graph)
            ranked = self._ranked_terms(graph) if got is None else None
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
            blob = ranking.to_bytes(index, edges, self.ranked[1], rows if serial else None, serial)
            with contextlib.suppress(OSError, sqlite3.Error):  # a cache: costs speed only
                self.index.save_terms(self.ranked[1], blob, "ranking")
        return index, edges

    def _ranked_terms(self, graph: Graph) -> tuple[TermIndex, Links, np.ndarray | None, str] | None:
        """The term index, edges, term rows and their serial (:func:`ranking.from_bytes`) of
        ``graph`` read from the ranking block
        (:mod:`talos.index.ranking`) when ``graph`` is the view of a one-shot route and the
        block is of its token; None otherwise (a block that does not decode is warned about
        and stored again)."""
        if self.ranked is None or self.ranked[0] is not graph or self.index is None:
            return None
        token = self.ranked[1]
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

    def _stepped(self, old: Graph, new: Graph, carry: np.ndarray | None, records: bool) -> None:
        """Note that ``new`` came from ``old`` by ``carry`` (:mod:`talos.termpatch`; ``None``:
        unknown), ``records``: whether a record changed. Kept only while it continues from
        the graph of ``evidence``, and only once the model built one."""
        if self.evidence is None:
            return
        tip = self.steps[-1][0] if self.steps else self.evidence.graph
        if carry is None or tip is not old or len(self.steps) >= MAX_STEPS:
            self.steps = []  # the chain is broken: the next index is gathered again
            return
        self.steps.append((new, carry, records))

    def _stored_step(self, token: str, graph: Graph) -> None:
        """Note how ``graph``, read from the stored records of ``token``, came from the last
        graph read so (:meth:`_stepped`): the same records (the same token) over a block made
        from the last one (a new or removed session in a process that only recalls, as the
        MCP server's)."""
        last, self.stored_records = self.stored_records, (token, graph)
        if last is None or last[0] != token or last[1] is graph:
            return
        old = last[1]
        o_nodes, n_nodes = old.nodes, graph.nodes
        if not isinstance(o_nodes, StackedNodes) or not isinstance(n_nodes, StackedNodes):
            self._stepped(old, graph, None, False)
            return
        groups = n_nodes.block.carried_from(o_nodes.block)
        fits = groups is not None and old.records == graph.records
        carry = restacked(graph.records, groups) if fits and groups is not None else None
        self._stepped(old, graph, carry, False)

    def _patched_terms(self, graph: Graph) -> tuple[TermIndex, np.ndarray] | None:
        """The term index of ``graph`` patched from ``evidence``'s along ``steps``
        (:func:`talos.termpatch.patch_index`: only the new nodes' texts are looked up), or
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
        (:class:`talos.termrows.TermRows`, read once per object), and each node's row: only
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
        """Store the term rows again once :data:`talos.termrows.STORE_AFTER` texts were
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

    def top_headings(self) -> int:
        """How many level-1 markdown headings memory.md holds: the index's count, else the
        count of the last read of the file (:meth:`talos.Memory.heading`)."""
        if self.index is not None:
            try:
                return self.index.top_headings(self.scopes)
            except (OSError, sqlite3.Error):
                pass
        return self.tops

    def wrote(self) -> None:
        """A write went through :class:`talos.Memory`: the next call builds its view again
        (the last build stays the base of a patch)."""
        self.fresh = None

    def close(self) -> None:
        """Close the index connection now (it reopens on demand)."""
        if self.index is not None:
            self.index.close()

    def _look(self) -> Tokens:
        """What the graph depends on, looked at once: unchanged tokens, unchanged graph.

        With the index: its two generations after an incremental refresh (SPEC §11) plus the
        skills' sizes and mtimes. Without: size and mtime of every source file.
        """
        # Refresh first: the first refresh of a new index (or of new reader code) empties
        # it, and with it a skills scan stored a moment before (tests/test_block.py).
        indexed = self._refresh_index()
        skills = self._skills_state()
        if indexed:
            assert self.index is not None
            return Tokens(
                True,
                ("index", self.index.facts_generation),
                ("index", self.index.sessions_generation),
                skills,
            )
        return Tokens(
            False,
            _stat(self.paths.memory_file),
            tuple(_stat(p) for p in session_files(self.paths.sessions_dirs)),
            skills,
        )

    def _refresh_index(self) -> bool:
        """Refresh the index; on a failure (read-only state folder, disk full) warn once and
        go on reading the files directly. Returns whether the index is in use."""
        if self.index is None:
            return False
        try:
            self.index.refresh()
            return True
        except (OSError, sqlite3.Error) as e:
            self._drop_index(e)
            return False

    def _drop_index(self, e: BaseException) -> None:
        """Stop using the index for this object, warning once why (``e``): recall reads the
        files directly (the index is a cache, SPEC §11)."""
        assert self.index is not None
        warn(f"{self.index.file}: index unavailable ({e}); reading the files directly")
        self.index.close()
        self.index = None

    def _sources(self, skills: tuple[Any, ...] | None = None) -> tuple[list[Node], EpisodeBlock]:
        """The records (facts, then skills, in load order) and the episode block.

        With the index, facts and the block are kept while their part of the index is
        unchanged, and the fact filter's verdict is kept per text: an edit of memory.md
        rebuilds the facts only, a new session the block only (SPEC §11).
        """
        indexed = self._refresh_index()
        if indexed:
            assert self.index is not None
            gen = (self.index.facts_generation, self.index.sessions_generation)
            old_rows, old_block = self.rows, self.episodes
            try:
                rows = old_rows[1] if old_rows and old_rows[0] == gen[0] else self.index.fact_rows()
                block = (
                    old_block[1]
                    if old_block and old_block[0] == gen[1]
                    else self.index.episode_block(old_block[1] if old_block else None)
                )
            except (OSError, sqlite3.Error) as e:  # a cache that cannot be read: the files
                self._drop_index(e)
                indexed = False
        if indexed:
            self.rows, self.episodes = (gen[0], rows), (gen[1], block)
            self.heading_rows = [n for n, _safe in rows if n.heading_level] if self.headings else []
            if self.keep_fact is safety.keep_fact and self.headings:  # one pass (SPEC §3.1)
                facts = [n for n, safe in rows if safe and not n.heading_level]
            elif self.keep_fact is safety.keep_fact:  # the index holds its verdicts
                facts = [n for n, safe in rows if safe]
            else:  # a withheld line's row is kept masked (Index.indexed_fact)
                facts = self._headings_kept([n for n, _safe in rows if self._keep(n.text)])
        else:
            facts = load_facts(self.paths.memory_file, self.keep_fact)
            self.heading_rows = [n for n in facts if n.heading_level] if self.headings else []
            if self.keep_fact is not safety.keep_fact:
                facts = [m for n in facts if (m := _masked_fact(n)) is not None]
            block = EpisodeBlock.of_nodes(load_episodes(self.paths.sessions_dirs))
        if self.headings and not indexed:  # a file of one top heading: its title
            self.tops = sum(1 for n in facts if n.heading_level == 1 and n.scope in self.scopes)
        if self.headings and (not indexed or self.keep_fact is not safety.keep_fact):
            facts = [n for n in facts if not n.heading_level]  # labels, no facts (SPEC §3.1)
        return facts + self._skills(len(facts), skills), block

    def _out_of_window(self, records: list[Node], day: dt.date) -> list[Node]:
        """``records`` with every heading whose own line is out of the view at ``day`` shown
        as ``""`` in the paths beneath it: expired (``until=``), not yet valid (``from=`` or
        the tag's date) or no longer active (``status=``), as that line would be if it were a
        fact (SPEC §7.1). Such a heading labels nothing and matches for nothing (the
        attacker's pass: "release freeze" delivered "(Release freeze: no deploys) Deploy
        region is eu-west-1" under a heading tagged ``until=2020-01-01``). Its section runs
        from the heading to the first fact no longer under it. A node is the same object
        while its row and the cut are (SPEC §11). A heading shorter than
        :data:`~talos.sources.facts.MIN_FACT_CHARS` is no row, so its window is not read."""
        out = [
            h
            for h in self.heading_rows
            if (h.born or h.fields)
            and (h.fields.get("status", "active") != "active" or validity(h, day) is not None)
        ]
        if not out:
            self.unlabelled = {}
            return records
        lines = [n.line if n.kind == "fact" else 1 << 62 for n in records]
        cut: dict[int, set[int]] = {}
        for h in out:
            got = heading_of(h.raw)
            if got is None or not got[1]:
                continue
            depth = len(h.headings)
            for i in range(bisect.bisect_right(lines, h.line), len(records)):
                n = records[i]
                if n.kind != "fact" or len(n.headings) <= depth or n.headings[depth] != got[1]:
                    break
                cut.setdefault(i, set()).add(depth)
        memo: dict[tuple[int, tuple[int, ...]], tuple[Node, Node]] = {}
        new = list(records)
        for i, depths in cut.items():
            n, key = records[i], (id(records[i]), tuple(sorted(depths)))
            got_node = self.unlabelled.get(key)
            if got_node is None or got_node[0] is not n:
                heads = tuple("" if d in depths else t for d, t in enumerate(n.headings))
                got_node = (n, dataclasses.replace(n, headings=heads))
            memo[key] = got_node
            new[i] = got_node[1]
        self.unlabelled = memo
        return new

    def _headings_kept(self, facts: list[Node]) -> list[Node]:
        """``facts`` (the index's rows, read for a fact filter other than the default) with
        each heading of their path that this filter rejects shown as ``""``, as
        :func:`~talos.sources.facts.load_facts` labels them (the index's rows hold the default
        filter's verdicts only). A node is the same object while its row is (SPEC §11)."""
        memo: dict[int, tuple[Node, Node]] = {}
        out: list[Node] = []
        for n in facts:
            if all(not h or self._keep(h) for h in n.headings):
                out.append(n)
                continue
            got = self.relabelled.get(id(n))
            if got is None or got[0] is not n:
                kept = tuple(h if h and self._keep(h) else "" for h in n.headings)
                got = (n, dataclasses.replace(n, headings=kept))
            memo[id(n)] = got
            out.append(got[1])
        self.relabelled = memo
        return out

    def _skills_state(self) -> tuple[Any, ...]:
        """Each skill file's size and mtime, and the names the safety scan flags (a payload
        in a subfolder changes no top-level skill's stat)."""
        return (
            tuple(_stat(p) for p in skill_files(self.paths.skills_dir, self.folders)),
            flagged_skills(self.paths.skills_dir, self.index),
        )

    def _skills(self, start: int, state: tuple[Any, ...] | None = None) -> list[Node]:
        """The skill nodes, kept while no skill file changed (stat, scan verdicts, ``start``)."""
        key = (start, *(state or self._skills_state()))
        if self.skills is None or self.skills[0] != key:
            nodes = load_skills(
                self.paths.skills_dir,
                self.lang,
                self.blocked,
                start,
                scan_store=self.index,
                folders=self.folders,
            )
            self.skills = (key, nodes)
        return list(self.skills[1])

    def _keep(self, text: str) -> bool:
        """``keep_fact(text)``, remembered per text for the life of this object."""
        if self.keep_fact is None:
            return True
        got = self.filtered.get(text)
        if got is None:
            got = self.filtered[text] = self.keep_fact(text)
        return got

    def _view(
        self, at: dt.date | None, overrides: Mapping[str, str] | None, tokens: Tokens
    ) -> tuple[View, Graph]:
        """:meth:`view` for a signature the caller just took (one look at the files)."""
        day = at or dt.date.today()
        key = (tokens, day, tuple(sorted((overrides or {}).items())))
        if self.fresh == key and self.built is not None:
            return self.built.view, self.built.graph
        records, block = self._sources(tokens.skills)
        records = self._out_of_window(records, day)
        patched = self._patch(records, block, key[1:]) or self._restack(records, block, key[1:])
        if patched is not None:
            self.fresh = key
            return patched
        view = build_view(records, self.scopes, day, overrides, self.standing)
        head = merge_duplicates(view.nodes, self.merged)
        base = self._base(block)
        if self.vocab is None or self.vocab.base is not base:
            self.vocab = Vocabulary(base)
        incidence = self.vocab.incidence([n.keywords for n in head])
        graph = self._stack(head, incidence, block, len(records))
        graph.cache["kinds"] = [n.kind for n in head]
        if self.built is not None:  # the term index follows the nodes that stayed
            self._stepped(self.built.graph, graph, _same_nodes(self.built.graph, graph), True)
        self.built = Built(records, block, key[1:], view, head, incidence, graph)
        self.fresh = key
        return view, graph

    def _patch(
        self, records: list[Node], block: EpisodeBlock, when: tuple[Any, ...]
    ) -> tuple[View, Graph] | None:
        """The view and graph after an in-place edit of memory.md, patched into the last
        ones built (:mod:`talos.patch`), or ``None`` when a full build is needed (SPEC §11:
        an edit costs what it changed, not a pass over every memory)."""
        b = self.built
        base = self._base(block)
        if (
            b is None
            or (b.block is not block and base is not None)  # without episodes: no matter
            or b.when != when
            or self.vocab is None
            or self.vocab.base is not base
            or b.incidence.base is not base  # built in the vocabulary's numbering
        ):
            return None
        if all(x is y for x, y in zip(b.records, records, strict=False)) and len(b.records) == len(
            records
        ):
            b.block = block
            return b.view, b.graph  # looked at again, nothing changed
        day = when[0]
        verdicts = self.standing.get((self.scopes, day))
        if verdicts is None:
            return None

        def standing_of(n: Node) -> tuple[str, str, str]:
            got = verdicts.get(n)
            if got is None:
                got = verdicts[n] = standing(n, self.scopes, day)
            return got

        got = patch_view(b, records, self.scopes, standing_of, self.merged)
        if got is None:
            return None
        built, sp = got
        incidence = splice_incidence(b.incidence, sp, built.head, self.vocab)
        built.block = block
        graph = self._stack(built.head, incidence, block, len(records))
        splice_cache(b.graph, graph, sp)
        carry = spliced(b.graph.records, len(b.graph.nodes), sp.deleted, sp.inserted, graph.records)
        self._stepped(b.graph, graph, carry if len(carry) == len(graph.nodes) else None, True)
        if "kinds" not in graph.cache:
            graph.cache["kinds"] = [n.kind for n in built.head]
        self.usage_keys.patched(b.graph, graph, sp.removed, sp.added)
        built.incidence, built.graph = incidence, graph
        self.built = built
        return built.view, graph

    def _base(self, block: EpisodeBlock) -> Incidence | None:
        """The incidence whose keyword ids the records' extend: the episode block's when the
        graph holds episodes (``global`` authorized, SPEC §7.3), else none."""
        return block.incidence if "global" in self.scopes and len(block) else None

    def _restack(
        self, records: list[Node], block: EpisodeBlock, when: tuple[Any, ...]
    ) -> tuple[View, Graph] | None:
        """The last view over a new episode block (sessions arrived, the records did not
        change): the same view and merged records, their incidence renumbered in the new
        block's keyword ids, or ``None`` when anything else changed (SPEC §11: a new
        session costs what it changed)."""
        b = self.built
        if (
            b is None
            or b.block is block
            or b.when != when
            or "global" not in self.scopes
            or not len(block)
            or b.incidence.base is not b.block.incidence  # built without the block
            or len(b.records) != len(records)
            or any(x is not y for x, y in zip(b.records, records, strict=True))
        ):
            return None
        self.vocab = (
            self.vocab.rebase(block.incidence)
            if self.vocab is not None
            else Vocabulary(block.incidence)
        )
        incidence = self.vocab.incidence([n.keywords for n in b.head])
        graph = self._stack(b.head, incidence, block, len(records))
        for name in ("kinds", "skill_mask"):
            if name in b.graph.cache:
                graph.cache[name] = b.graph.cache[name]
        self.usage_keys.carried(b.graph, graph)
        groups = block.carried_from(b.block)
        fits = groups is not None and len(b.graph.nodes) == len(b.head) + len(b.block)
        carry = restacked(len(b.head), groups) if fits and groups is not None else None
        self._stepped(b.graph, graph, carry, False)
        built = Built(records, block, when, b.view, b.head, incidence, graph, tables=b)
        self.built = built
        return b.view, graph

    def _recall_graph(self, at: dt.date | None, overrides: Mapping[str, str] | None) -> Graph:
        """The graph a recall ranks over: :meth:`view`'s, or the same records read back
        from the index (:class:`talos.graph.RecordsBlock`) when this process has not built
        them, so a process that only recalls builds no record node it does not deliver
        (SPEC §11). Only for the default fact filter and without overrides; the block is
        written from the graph :meth:`view` built, under a token of all it depends on."""
        if overrides or self.index is None or self.keep_fact is not safety.keep_fact:
            return self._view(at, overrides, self._look())[1]
        day = at or dt.date.today()
        tokens = self._look()
        key = (tokens, day, ())
        if self.fresh == key and self.built is not None:
            return self.built.graph
        if self.stored and self.stored[0] == key:
            return self.stored[1]
        if not tokens.indexed or self.index is None or self.fresh is not None:
            # no index to read from, or a long-lived Memory that built (and patches) its own
            return self._view(at, None, tokens)[1]
        token = self._records_token(tokens, day)
        try:
            data = self.index.load_records(token)
        except (OSError, sqlite3.Error):
            data = None
        if data is not None:
            try:
                stored = RecordsBlock.from_bytes(data, token)
                old_block = self.episodes
                gen = (self.index.facts_generation, self.index.sessions_generation)
                try:
                    block = (
                        old_block[1]
                        if old_block and old_block[0] == gen[1]
                        else self.index.episode_block(old_block[1] if old_block else None)
                    )
                except (OSError, sqlite3.Error) as e:
                    self._drop_index(e)
                    return self._view(at, None, self._look())[1]
                self.episodes = (gen[1], block)  # the base of the next one (a new session)
                graph = self._stack(stored.nodes, stored.incidence, block, stored.start)
                graph.cache["kinds"] = stored.kinds
                if isinstance(stored.kinds, Kinds):
                    graph.cache["skill_mask"] = stored.kinds.mask("skill")
                self.usage_keys.loaded(graph, stored.present)
                self._stored_step(token, graph)
                self.stored = (key, graph)
                self._rank_as(graph, token)
                return graph
            except BlockError as e:
                warn(f"{self.index.file}: stored records unusable ({e}); rebuilding them")
        first = self.fresh is None
        _view, graph = self._view(at, None, tokens)
        if not first:
            # A long-lived Memory (an agent loop, the MCP server) rebuilt its view after an
            # edit: the next one-shot process stores the block; this one must not pay for it
            # on every edit (SPEC §11: an edit costs what the edit changed).
            return graph
        built = self.built
        assert built is not None  # set by the build just made
        head = graph.nodes[: graph.records]
        records = RecordsBlock(
            head,
            graph.cache.get("kinds") or [n.kind for n in head],
            graph.head,  # its own vocabulary: a loading process maps it onto its block's
            self._present_keys(graph),
            len(built.records),  # where the episodes start: the records before the view
        )
        if self.index is not None:  # None: found unreadable while the view was built
            with contextlib.suppress(OSError, sqlite3.Error):  # a cache: costs speed only
                self.index.save_records(token, records.to_bytes(token))
            self._rank_as(graph, token)
        return graph

    def _rank_as(self, graph: Graph, records: str) -> None:
        """Note the ranking block's token of ``graph``, the view of the stored records
        ``records`` (:func:`talos.index.ranking.ranking_token`): :meth:`evidence_index` reads
        its term index from the block, or stores it there."""
        assert self.index is not None
        stacked = isinstance(graph.nodes, StackedNodes)
        self.ranked = (graph, ranking_token(records, self.index.sessions_token, stacked))

    def _records_token(self, tokens: Tokens, day: dt.date) -> str:
        """What the records of a view depend on: the indexed facts' version, the skills
        (stats, scan verdicts), scopes, date, language, blocked skills, whether headings are
        facts (``classic``) and talos's code."""
        assert self.index is not None
        return hashlib.sha256(
            json.dumps(
                [
                    self.index.facts_token,
                    _code_fingerprint(),
                    [list(s) for s in tokens.skills[0]],
                    sorted(tokens.skills[1]),
                    list(self.scopes),
                    day.isoformat(),
                    self.lang,
                    sorted(self.blocked),
                    self.headings,
                ]
            ).encode("utf-8", "surrogatepass")
        ).hexdigest()

    def _stack(
        self, head: Sequence[Node], incidence: Incidence, block: EpisodeBlock, start: int
    ) -> Graph:
        """A graph of ``head`` records followed by the block's episodes (when ``global`` is
        an authorized scope: episodes carry no tag, SPEC §7.3)."""
        if "global" in self.scopes and len(block):
            stacked = StackedNodes(head, block, start)
            return Graph(stacked, len(head), incidence, block.incidence)
        return Graph(head, len(head), incidence)

    def _present_keys(self, graph: Graph) -> dict[str, frozenset[str]]:
        """The usage keys in view of ``graph``, per scope (:meth:`PresentKeys.of`)."""
        return self.usage_keys.of(graph, self.scopes)
