"""The state kept between calls of one :class:`talos.Memory`: the view and graph of the last
call and what they were built from, and the routes that bring them up to date (design §11).

A call takes one look at its inputs (:meth:`KeptState._look` gives the :class:`Tokens`: the
index refreshed, the skills' stats), and a part is reused while what it was made from is
unchanged. Otherwise it is
brought up to date from its old value where a cheaper route is proven — an in-place edit of
memory.md patched in (:meth:`KeptState._patch`, :mod:`talos.view.patch`), new sessions restacked
under the same records (:meth:`KeptState._restack`), the records read back from the index in a
process that only recalls (:meth:`KeptState._recall_graph`) — or made again
(:meth:`KeptState._view`). Without the index the files are read again whenever the view is
built: the reference route the tests compare the others against.

The parts, each with the rule that says it is stale. :class:`Tokens` is the one look at the
inputs (the index's two generations or the files' stats, and the skills'), taken once per call:

- ``sources``: the records and the episode block as last read, the index's fact rows by
  ``Tokens.facts``, the block by ``Tokens.sessions``, the skills by ``Tokens.skills``
  (:class:`talos.view.kept_sources.SourceState`, which holds the rules of its parts);
- ``vocab``: keyword ids extending the block's, by identity (``vocab.base is`` the block's
  incidence); rebased on a restack;
- ``merged``: the merged node of each group, by the group's node objects;
- ``standing``: each node's standing, by ``(scopes, day)`` and node identity;
- ``built``: the last build (:class:`talos.view.patch.Built`), the base of a patch and a restack;
- ``fresh``: the ``(tokens, when)`` that ``built`` answers for; ``None`` after a write through
  :class:`talos.Memory` (:meth:`KeptState.wrote`), so the next call builds (or patches) again;
- ``stored``: the graph read from the stored records, by ``(tokens, day)``, never with
  overrides;
- ``usage_keys``: the usage keys in view (:class:`talos.usage.counts.PresentKeys`), by graph
identity;
- ``terms``: the ``evidence`` model's term index and contiguity edges of a graph, by graph
  identity, patched from the last one along the steps each graph came by, or read from the
  index (:class:`talos.view.kept_terms.TermState`, which holds the rules of its parts).

Without the index the records and the episode block are not kept: the files are read again
whenever the view is built. It never calls back into :mod:`talos.memory`.
"""

from __future__ import annotations

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

from talos import safety
from talos.graph.episodes import EpisodeBlock
from talos.graph.graph import Graph, StackedNodes
from talos.graph.incidence import Incidence, Vocabulary
from talos.graph.merge import merge_duplicates
from talos.graph.records import Kinds, RecordsBlock
from talos.graph.stored import BlockError
from talos.home import Paths
from talos.index import Index
from talos.model import Node
from talos.ranking.contiguity import Links
from talos.ranking.evidence import TermIndex
from talos.sources.sessions import session_files
from talos.usage.counts import PresentKeys
from talos.view.episode_scopes import scope_digest, scoped_block
from talos.view.kept_sources import SourceState, file_stat
from talos.view.kept_terms import TermState, same_nodes
from talos.view.patch import Built, patch_view, splice_cache, splice_incidence
from talos.view.termpatch import Carried, restacked, spliced
from talos.view.termrows import TermRows
from talos.view.trust import View, build_view, standing
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


def _code_files() -> list[str]:
    """The files whose code turns files into a view: POSIX paths relative to ``talos/``, sorted
    (:func:`_code_fingerprint`; ``tests/test_block.py`` checks that each exists)."""
    here = Path(__file__).resolve().parent.parent
    return sorted(
        ["memory.py", "model.py", "text.py"]
        + ["view/kept.py", "view/kept_sources.py", "view/kept_terms.py", "view/trust.py"]
        + ["usage/counts.py", "usage/store.py"]
        + [f"graph/{p.name}" for p in (here / "graph").glob("*.py")]
        + [f"render/{p.name}" for p in (here / "render").glob("*.py")]
        + [f"sources/{p.name}" for p in (here / "sources").glob("*.py")]
    )


@functools.cache
def _code_fingerprint() -> str:
    """A digest of the code that turns files into a view (part of a stored block's token)."""
    here = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for name in _code_files():
        try:
            h.update(name.encode() + (here / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()[:16]


class KeptState:
    """The state one :class:`talos.Memory` keeps between calls, and the routes that bring it up
    to date (module docstring). ``paths``, ``scopes``, ``keep_fact``, ``blocked``, ``lang`` and
    ``headings`` are fixed for the life of the object; ``index`` is ``None`` without the index
    or after it failed (then the files are read directly). ``headings``: whether a markdown
    heading of memory.md labels the facts beneath it and is no node
    (:class:`talos.view.kept_sources.SourceState`); ``folders``: whether skills of the Agent
    Skills layout (``skills/NAME/SKILL.md``) are read (design §3.2)."""

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
        self.folders = folders
        self.scopes = scopes
        self.keep_fact = keep_fact
        self.blocked = blocked
        self.lang = lang
        self.index: Index | None = Index(paths) if index else None
        #: The records and the episode block as last read (:meth:`_sources`).
        self.sources = SourceState(paths, scopes, keep_fact, blocked, lang, headings, folders)
        self.vocab: Vocabulary | None = None
        self.merged: dict[tuple[Node, ...], Node] = {}
        self.standing: dict[Any, Any] = {}
        self.stored: tuple[Any, Graph] | None = None
        self.built: Built | None = None
        self.fresh: tuple[Any, ...] | None = None
        self.usage_keys = PresentKeys()
        #: The ``evidence`` model's term index and edges per graph (:meth:`evidence_index`).
        self.terms = TermState(paths, self.index)
        #: The last episode block and the one this view may see of it (:meth:`_in_scope`).
        self.scoped: tuple[EpisodeBlock, EpisodeBlock] | None = None

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
        """The ``evidence`` model's :class:`~talos.ranking.evidence.TermIndex` and contiguity
        :class:`~talos.ranking.contiguity.Links` of ``graph`` (those of
        :func:`talos.ranking.evidence.of_nodes`
        over its nodes and memory.md as it is now, float for float), kept while the graph is
        the same object, patched from the last ones or read from index.db
        (:meth:`talos.view.kept_terms.TermState.evidence_index`)."""
        last = self.terms.evidence
        if last is not None and last.graph is not graph and self._rebuilt_as_stored(last, graph):
            # the view built again for the key the stored records were read for: the same
            # nodes in the same order, so the same index (the hook server settling: 0.9 s of
            # gathering at 100,000 sessions, and a hook arriving meanwhile waited for it)
            self.terms.evidence = dataclasses.replace(last, graph=graph)
        return self.terms.evidence_index(graph)

    def _rebuilt_as_stored(self, last: Carried, graph: Graph) -> bool:
        """Whether ``graph`` is the view this object built for the key whose stored records
        gave ``last``'s graph (:meth:`_recall_graph`): a view is a function of its key, so the
        two hold the same nodes in the same order."""
        stored = last.graph
        return (
            self.stored is not None
            and self.stored[1] is stored
            and self.built is not None
            and self.built.graph is graph
            and self.fresh == self.stored[0]
            and len(graph.nodes) == len(stored.nodes)
            and graph.records == stored.records
        )

    @property
    def evidence(self) -> Carried | None:
        """The term index and edges of the last graph asked about (:class:`TermState`)."""
        return self.terms.evidence

    @evidence.setter
    def evidence(self, value: Carried | None) -> None:
        self.terms.evidence = value

    @property
    def term_rows(self) -> tuple[bool, TermRows] | None:
        """The analyzed term rows as held: (read from index.db, rows) (:class:`TermState`)."""
        return self.terms.term_rows

    @property
    def rows_serial(self) -> str | None:
        """The serial of the term rows ``evidence.rows`` index, when they were read with the
        ranking block (:class:`TermState`)."""
        return self.terms.rows_serial

    def top_headings(self) -> int:
        """How many level-1 markdown headings memory.md holds: the index's count, else the
        count of the last read of the file (:meth:`talos.Memory.heading`)."""
        if self.index is not None:
            try:
                return self.index.top_headings(self.scopes)
            except (OSError, sqlite3.Error):
                pass
        return self.sources.tops

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

        With the index: its two generations after an incremental refresh (design §11) plus the
        skills' sizes and mtimes. Without: size and mtime of every source file.
        """
        # Refresh first: the first refresh of a new index (or of new reader code) empties
        # it, and with it a skills scan stored a moment before (tests/test_block.py).
        indexed = self._refresh_index()
        skills = self.sources.skills_state(self.index)
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
            file_stat(self.paths.memory_file),
            tuple(file_stat(p) for p in session_files(self.paths.sessions_dirs)),
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
        files directly (the index is a cache, design §11)."""
        assert self.index is not None
        warn(f"{self.index.file}: index unavailable ({e}); reading the files directly")
        self.index.close()
        self.index = self.terms.index = None

    def _sources(self, skills: tuple[Any, ...] | None = None) -> tuple[list[Node], EpisodeBlock]:
        """The records (facts, then skills, in load order) and the episode block
        (:meth:`talos.view.kept_sources.SourceState.records`): from the index while it can be read,
        else from the files."""
        parts = None
        if self._refresh_index():
            assert self.index is not None
            try:
                parts = self.sources.indexed(self.index)
            except (OSError, sqlite3.Error) as e:  # a cache that cannot be read: the files
                self._drop_index(e)
        return self.sources.records(parts, skills, self.index)

    def _view(
        self, at: dt.date | None, overrides: Mapping[str, str] | None, tokens: Tokens
    ) -> tuple[View, Graph]:
        """:meth:`view` for a signature the caller just took (one look at the files)."""
        day = at or dt.date.today()
        key = (tokens, day, tuple(sorted((overrides or {}).items())))
        if self.fresh == key and self.built is not None:
            return self.built.view, self.built.graph
        records, block = self._sources(tokens.skills)
        block = self._in_scope(block)
        records = self.sources.out_of_window(records, day)
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
            self.terms.stepped(self.built.graph, graph, same_nodes(self.built.graph, graph), True)
        self.built = Built(records, block, key[1:], view, head, incidence, graph)
        self.fresh = key
        return view, graph

    def _patch(
        self, records: list[Node], block: EpisodeBlock, when: tuple[Any, ...]
    ) -> tuple[View, Graph] | None:
        """The view and graph after an in-place edit of memory.md, patched into the last
        ones built (:mod:`talos.view.patch`), or ``None`` when a full build is needed (design §11:
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
        self.terms.stepped(b.graph, graph, carry if len(carry) == len(graph.nodes) else None, True)
        if "kinds" not in graph.cache:
            graph.cache["kinds"] = [n.kind for n in built.head]
        self.usage_keys.patched(b.graph, graph, sp.removed, sp.added)
        built.incidence, built.graph = incidence, graph
        self.built = built
        return built.view, graph

    def _base(self, block: EpisodeBlock) -> Incidence | None:
        """The incidence whose keyword ids the records' extend: the episode block's when the
        graph holds episodes (some in an authorized scope, design §7.3), else none."""
        return block.incidence if len(block) else None

    def _in_scope(self, block: EpisodeBlock) -> EpisodeBlock:
        """The episodes of ``block`` this object's scopes may see (design §3.3, §7.3:
        :func:`talos.view.episode_scopes.scoped_block`), kept while ``block`` is the same
        object; ``block`` itself when every episode is in scope."""
        kept = self.scoped
        if kept is not None and kept[0] is block:
            return kept[1]
        folders = self._episode_folders()
        scoped = scoped_block(block, folders, self.scopes, self.paths.config, str(self.paths.home))
        self.scoped = (block, scoped)
        return scoped

    def episode_dates(self, start: str, end: str) -> dict[str, tuple[str, str]]:
        """The episodes whose session meets the days ``[start, end)`` (``YYYY-MM-DD``), each
        with its first and last day (design §7.3: an ask's time words): from the index while
        it is in use, else as the files were last read."""
        if self.index is not None:
            try:
                return self.index.episode_dates(start, end)
            except (OSError, sqlite3.Error) as e:
                self._drop_index(e)
        return {
            p: (d, last)
            for p, (d, last) in self.sources.read_dates.items()
            if d < end and (last or d) >= start
        }

    def _episode_folders(self) -> dict[str, list[str]]:
        """The working folders of the episodes, each with its episodes' paths: from the index
        while it is in use, else as the files were last read."""
        if self.index is not None:
            try:
                return self.sources.episode_folders(self.index)
            except (OSError, sqlite3.Error) as e:
                self._drop_index(e)
        return self.sources.read_folders

    def _restack(
        self, records: list[Node], block: EpisodeBlock, when: tuple[Any, ...]
    ) -> tuple[View, Graph] | None:
        """The last view over a new episode block (sessions arrived, the records did not
        change): the same view and merged records, their incidence renumbered in the new
        block's keyword ids, or ``None`` when anything else changed (design §11: a new
        session costs what it changed)."""
        b = self.built
        if (
            b is None
            or b.block is block
            or b.when != when
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
        self.terms.stepped(b.graph, graph, carry, False)
        built = Built(records, block, when, b.view, b.head, incidence, graph, tables=b)
        self.built = built
        return b.view, graph

    def _recall_graph(self, at: dt.date | None, overrides: Mapping[str, str] | None) -> Graph:
        """The graph a recall ranks over: :meth:`view`'s, or the same records read back
        from the index (:class:`talos.graph.RecordsBlock`) when this process has not built
        them, so a process that only recalls builds no record node it does not deliver
        (design §11). Only for the default fact filter and without overrides; the block is
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
                try:
                    block = self.sources.episode_block(self.index)
                except (OSError, sqlite3.Error) as e:
                    self._drop_index(e)
                    return self._view(at, None, self._look())[1]
                # the base of the next one (a new session)
                self.sources.episodes = (self.index.sessions_generation, block)
                block = self._in_scope(block)
                graph = self._stack(stored.nodes, stored.incidence, block, stored.start)
                graph.cache["kinds"] = stored.kinds
                if isinstance(stored.kinds, Kinds):
                    graph.cache["skill_mask"] = stored.kinds.mask("skill")
                self.usage_keys.loaded(graph, stored.present)
                self.terms.stored_step(token, graph)
                self.stored = (key, graph)
                self.terms.rank_as(graph, token)
                return graph
            except BlockError as e:
                warn(f"{self.index.file}: stored records unusable ({e}); rebuilding them")
        first = self.fresh is None
        _view, graph = self._view(at, None, tokens)
        if not first:
            # A long-lived Memory (an agent loop, the MCP server) rebuilt its view after an
            # edit: the next one-shot process stores the block; this one must not pay for it
            # on every edit (design §11: an edit costs what the edit changed).
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
            self.terms.rank_as(graph, token)
        return graph

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
                    scope_digest(self._episode_folders(), self.paths.config, str(self.paths.home)),
                ]
            ).encode("utf-8", "surrogatepass")
        ).hexdigest()

    def _stack(
        self, head: Sequence[Node], incidence: Incidence, block: EpisodeBlock, start: int
    ) -> Graph:
        """A graph of ``head`` records followed by the block's episodes (those of the
        authorized scopes: :meth:`_in_scope`, design §7.3)."""
        if len(block):
            stacked = StackedNodes(head, block, start)
            return Graph(stacked, len(head), incidence, block.incidence)
        return Graph(head, len(head), incidence)

    def _present_keys(self, graph: Graph) -> dict[str, frozenset[str]]:
        """The usage keys in view of ``graph``, per scope (:meth:`PresentKeys.of`)."""
        return self.usage_keys.of(graph, self.scopes)
