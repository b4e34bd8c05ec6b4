"""The records and the episode block of a home as :class:`talos.view.kept.KeptState` last read
them (design §11): :class:`SourceState`, with the labels memory.md's headings give the facts
beneath them.

The parts, each with the rule that says it is stale (the index's generations are taken once
per call, :class:`talos.view.kept.Tokens`):

- ``rows``: the index's fact rows, by its facts generation;
- ``episodes``: the episode block, by its sessions generation; a stale one is handed to
  :meth:`talos.index.Index.episode_block` to be extended or trimmed;
- ``filtered``: the fact filter's verdict per text (the filter is fixed for the object);
- ``skills``: the skill nodes, by the skill files' stats, the scan's verdicts and ``start``;
- ``heading_rows``, ``unlabelled``, ``relabelled``: memory.md's heading lines as last read,
  and the facts beneath a heading out of its window or rejected by the filter, relabelled,
  by node identity.

Without the index ``rows`` and ``episodes`` are not kept: the files are read again whenever
the view is built.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

from talos import safety
from talos.graph.episodes import EpisodeBlock
from talos.home import Paths
from talos.index import Index
from talos.model import Node
from talos.sources import load_episodes, load_facts, load_skills
from talos.sources.facts import heading_text, masked_fields, tag_reasons
from talos.sources.skills import flagged_skills, skill_files
from talos.text import matching_keywords
from talos.view.trust import validity

__all__ = ["IndexedParts", "SourceState", "file_stat"]

#: What :meth:`SourceState.indexed` read: the index's two generations, its fact rows
#: (each with the default filter's verdict) and the episode block.
IndexedParts = tuple[tuple[int, int], list[tuple[Node, bool]], EpisodeBlock]


def file_stat(p: Path) -> tuple[str, int, int, int]:
    """Path, size, mtime and ctime (a rewrite with the mtime put back still moves the ctime)."""
    try:
        s = p.stat()
        return (str(p), s.st_size, s.st_mtime_ns, s.st_ctime_ns)
    except OSError:
        return (str(p), -1, -1, -1)


def _masked_fact(n: Node) -> Node | None:
    """A fact kept by a filter other than :func:`talos.safety.keep_fact` as it may be shown:
    a line that filter would withhold has its credentials masked in ``text`` and ``raw``
    (``None`` when no keyword is left), as the index keeps it (design §8.3; hostile pass of
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


class SourceState:
    """The records (facts, then skills) and the episode block of a home as last read, kept
    while their part of the index is unchanged (module docstring). ``paths``, ``scopes``,
    ``keep_fact``, ``blocked``, ``lang``, ``headings`` and ``folders`` are those of the
    :class:`talos.view.kept.KeptState`, fixed for its life; the index it reads from is passed in
    (``None``: the files are read directly).

    ``headings``: a markdown heading of memory.md labels the facts beneath it and is no node
    on any route (design §3.1, every model but ``classic``; :class:`talos.sources.facts.Outline`).
    ``False`` keeps the reference behaviour: the heading's text is a fact. The index keeps
    every line's row either way (one index for every model); the facts are told apart here.
    Only ``evidence`` matches on the heading path (:func:`talos.ranking.evidence.of_nodes`): the
    keyword
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
        headings: bool,
        folders: bool,
    ) -> None:
        self.paths = paths
        self.scopes = scopes
        self.keep_fact = keep_fact
        self.blocked = blocked
        self.lang = lang
        self.headings = headings
        self.folders = folders
        #: How many level-1 headings memory.md had when it was last read without the index.
        self.tops = 0
        self.rows: tuple[int, list[tuple[Node, bool]]] | None = None
        self.episodes: tuple[int, EpisodeBlock] | None = None
        #: The working folders of the episodes read from the files (``{cwd: [path, …]}``).
        self.read_folders: dict[str, list[str]] = {}
        #: The first and last days of the episodes read from the files (``{path: (d, d)}``).
        self.read_dates: dict[str, tuple[str, str]] = {}
        #: The index's working folders of its episodes, by sessions generation.
        self.cwds: tuple[int, dict[str, list[str]]] | None = None
        self.filtered: dict[str, bool] = {}
        self.skills: tuple[Any, list[Node]] | None = None
        self.relabelled: dict[int, tuple[Node, Node]] = {}
        #: memory.md's heading lines as last read (file order), for :meth:`out_of_window`.
        self.heading_rows: list[Node] = []
        self.unlabelled: dict[tuple[int, tuple[int, ...]], tuple[Node, Node]] = {}

    def episode_block(self, index: Index) -> EpisodeBlock:
        """The episode block of the index's sessions generation: the one kept, or the kept
        one extended or trimmed (:meth:`talos.index.Index.episode_block`). Not kept here.

        Raises:
            OSError, sqlite3.Error: the index cannot be read.
        """
        old = self.episodes
        if old and old[0] == index.sessions_generation:
            return old[1]
        return index.episode_block(old[1] if old else None)

    def episode_folders(self, index: Index) -> dict[str, list[str]]:
        """The working folders the index's episodes ran in, each with its episodes' paths
        (:meth:`talos.index.Index.episode_folders`), kept per sessions generation.

        Raises:
            OSError, sqlite3.Error: the index cannot be read.
        """
        old = self.cwds
        if old and old[0] == index.sessions_generation:
            return old[1]
        got = index.episode_folders()
        self.cwds = (index.sessions_generation, got)
        return got

    def indexed(self, index: Index) -> IndexedParts:
        """The fact rows and the episode block of the index as it is (after a refresh): the
        ones kept while their generation is unchanged. Nothing is kept yet
        (:meth:`records` keeps them).

        Raises:
            OSError, sqlite3.Error: the index cannot be read (the caller drops it and reads
                the files).
        """
        gen = (index.facts_generation, index.sessions_generation)
        old_rows = self.rows
        rows = old_rows[1] if old_rows and old_rows[0] == gen[0] else index.fact_rows()
        return gen, rows, self.episode_block(index)

    def records(
        self, parts: IndexedParts | None, skills: tuple[Any, ...] | None, index: Index | None
    ) -> tuple[list[Node], EpisodeBlock]:
        """The records (facts, then skills, in load order) and the episode block, from the
        ``parts`` read from the index (:meth:`indexed`), or from the files when ``None``.

        With the index, facts and the block are kept while their part of the index is
        unchanged, and the fact filter's verdict is kept per text: an edit of memory.md
        rebuilds the facts only, a new session the block only (design §11). ``skills``: the
        skills' state of this call (:meth:`skills_state`); ``index``: the scan store of the
        skills (``None`` without the index).
        """
        if parts is not None:
            gen, rows, block = parts
            self.rows, self.episodes = (gen[0], rows), (gen[1], block)
            self.heading_rows = [n for n, _safe in rows if n.heading_level] if self.headings else []
            if self.keep_fact is safety.keep_fact and self.headings:  # one pass (design §3.1)
                facts = [n for n, safe in rows if safe and not n.heading_level]
            elif self.keep_fact is safety.keep_fact:  # the index holds its verdicts
                facts = [n for n, safe in rows if safe]
            else:  # a withheld line's row is kept masked (Index.indexed_fact)
                facts = self._headings_kept([n for n, _safe in rows if self.keep(n.text)])
        else:
            facts = load_facts(self.paths.memory_file, self.keep_fact)
            self.heading_rows = [n for n in facts if n.heading_level] if self.headings else []
            if self.keep_fact is not safety.keep_fact:
                facts = [m for n in facts if (m := _masked_fact(n)) is not None]
            episodes = load_episodes(self.paths.sessions_dirs)
            self.read_folders = {}
            for n in episodes:
                if n.cwd:
                    self.read_folders.setdefault(n.cwd, []).append(n.path)
            self.read_dates = {n.path: (n.day, n.last_day) for n in episodes if n.day}
            block = EpisodeBlock.of_nodes(episodes)
        indexed = parts is not None
        if self.headings and not indexed:  # a file of one top heading: its title
            self.tops = sum(1 for n in facts if n.heading_level == 1 and n.scope in self.scopes)
        if self.headings and (not indexed or self.keep_fact is not safety.keep_fact):
            facts = [n for n in facts if not n.heading_level]  # labels, no facts (design §3.1)
        return facts + self._skills(len(facts), skills, index), block

    def out_of_window(self, records: list[Node], day: dt.date) -> list[Node]:
        """``records`` with every heading (either form: :func:`~talos.sources.facts.heading_text`;
        a setext heading labelled the facts beneath it past its ``until=``) whose own line is
        out of the view at ``day`` shown
        as ``""`` in the paths beneath it: expired (``until=``), not yet valid (``from=`` or
        the tag's date) or no longer active (``status=``), as that line would be if it were a
        fact (design §7.1). Such a heading labels nothing and matches for nothing (the
        attacker's pass: "release freeze" delivered "(Release freeze: no deploys) Deploy
        region is eu-west-1" under a heading tagged ``until=2020-01-01``). Its section runs
        from the heading to the first fact no longer under it. A node is the same object
        while its row and the cut are (design §11). A heading shorter than
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
            text = heading_text(h)  # either form (design §3.1)
            if not text:
                continue
            depth = len(h.headings)
            for i in range(bisect.bisect_right(lines, h.line), len(records)):
                n = records[i]
                if n.kind != "fact" or len(n.headings) <= depth or n.headings[depth] != text:
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
        filter's verdicts only). A node is the same object while its row is (design §11)."""
        memo: dict[int, tuple[Node, Node]] = {}
        out: list[Node] = []
        for n in facts:
            if all(not h or self.keep(h) for h in n.headings):
                out.append(n)
                continue
            got = self.relabelled.get(id(n))
            if got is None or got[0] is not n:
                kept = tuple(h if h and self.keep(h) else "" for h in n.headings)
                got = (n, dataclasses.replace(n, headings=kept))
            memo[id(n)] = got
            out.append(got[1])
        self.relabelled = memo
        return out

    def skills_state(self, index: Index | None) -> tuple[Any, ...]:
        """Each skill file's size and mtime, and the names the safety scan flags (a payload
        in a subfolder changes no top-level skill's stat)."""
        return (
            tuple(file_stat(p) for p in skill_files(self.paths.skills_dir, self.folders)),
            flagged_skills(self.paths.skills_dir, index),
        )

    def _skills(self, start: int, state: tuple[Any, ...] | None, index: Index | None) -> list[Node]:
        """The skill nodes, kept while no skill file changed (stat, scan verdicts, ``start``)."""
        key = (start, *(state or self.skills_state(index)))
        if self.skills is None or self.skills[0] != key:
            nodes = load_skills(
                self.paths.skills_dir,
                self.lang,
                self.blocked,
                start,
                scan_store=index,
                folders=self.folders,
            )
            self.skills = (key, nodes)
        return list(self.skills[1])

    def keep(self, text: str) -> bool:
        """``keep_fact(text)``, remembered per text for the life of this object."""
        if self.keep_fact is None:
            return True
        got = self.filtered.get(text)
        if got is None:
            got = self.filtered[text] = self.keep_fact(text)
        return got
