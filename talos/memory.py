"""The Python API: :class:`Memory` (SPEC §9.2). The CLI, compat layer and benches sit on it."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from talos import safety
from talos.block import BlockError, EpisodeBlock, Kinds, RecordsBlock, StackedNodes
from talos.errors import InputError
from talos.graph import (
    DEFAULT_MODEL,
    MODELS,
    Activation,
    Graph,
    Incidence,
    Vocabulary,
    merge_duplicates,
    rank,
    rank_arrays,
)
from talos.home import Paths, resolve_paths
from talos.index import Index
from talos.model import Node
from talos.patch import Built, patch_view, splice_cache, splice_incidence
from talos.render import Pick, check_budget, fit_block, labels
from talos.sources import load_episodes, load_facts, load_skills
from talos.sources.facts import masked_fields, parse_fact_line, tag_reasons
from talos.sources.sessions import session_files
from talos.sources.skills import parse_frontmatter, read_skill, skill_files
from talos.text import keywords, matching_keywords
from talos.trust import (
    DEFAULT_SCOPES,
    View,
    authorized,
    build_view,
    record_id,
    standing,
    stated_value,
)
from talos.usage import SqliteUsage, Stat, UsageStore, fingerprint_from, today, write_trace
from talos.warn import audience, warn

if TYPE_CHECKING:
    from talos.writer import Forgotten, RememberResult, Restored

__all__ = [
    "Memory",
    "Recall",
    "RecallRow",
    "Row",
    "Suggestion",
]

_DEFAULT: Any = object()


@dataclass(slots=True)
class RecallRow:
    """A picked row: ``key`` (``kind:text80``), ``kind``, ``text``, rounded ``score``,
    ``body`` (whether the skill body was delivered), and the ``node`` itself."""

    key: str
    kind: str
    text: str
    score: float
    body: bool
    node: Node = field(repr=False)

    def as_trace(self) -> dict[str, object]:
        """The row as a trace entry ``{"key", "score", "body"}`` (SPEC §6.3). A request-scoped
        override is traced as ``override:KEY``: its value is never written to disk (§7.5)."""
        key = self.key
        if self.node.src == "override":
            key = "override:" + self.node.fields.get("key", "")
        return {"key": key, "score": self.score, "body": self.body}


@dataclass(slots=True)
class Recall:
    """The result of :meth:`Memory.recall`: ``text`` (the context block, "" when nothing),
    ``picked`` rows in rank order, and ``bodies`` (how many skill bodies were delivered)."""

    text: str
    picked: list[RecallRow]

    @property
    def bodies(self) -> int:
        """Number of skill bodies in the block (0 or 1)."""
        return sum(1 for r in self.picked if r.body)

    def __str__(self) -> str:
        return self.text


@dataclass(slots=True)
class Row:
    """One explain row; unpacks as ``(score, kind, text)`` (SPEC §6.2).

    ``text`` includes up to 2 merged members. ``seed`` is the node's seed activation,
    ``hops`` its activation gained in each hop, ``edges`` the contributions that carried it
    (``[{"hop", "from", "weight", "from_activation"}]``: each neighbour active before that
    hop), ``node`` the node with its provenance.
    """

    score: float
    kind: str
    text: str
    node: Node = field(repr=False)
    activation: float = 0.0
    seed: float = 0.0
    hops: list[float] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.score, self.kind, self.text))

    def __getitem__(self, i: int) -> Any:
        return (self.score, self.kind, self.text)[i]

    def __len__(self) -> int:
        return 3

    def to_json(self) -> dict[str, Any]:
        """The row with identity, activation detail, merged members and provenance."""
        n = self.node
        return {
            "score": self.score,
            "kind": self.kind,
            "text": self.text,
            "key": n.key,
            "identity": node_identity(n),
            "activation": self.activation,
            "seed": self.seed,
            "hops": self.hops,
            "edges": self.edges,
            "members": [{"text": m.text, **node_identity(m)} for m in n.members],
            "provenance": node_provenance(n),
        }


@dataclass(slots=True)
class Suggestion:
    """A forgetting suggestion (SPEC §6.4); unpacks as ``(kind, text, reason)``.

    ``path``/``line``/``raw`` identify the exact line it came from; ``scope`` its namespace.
    """

    kind: str
    text: str
    reason: str
    path: str = ""
    line: int = 0
    raw: str = ""
    scope: str = "global"
    src: str = ""
    born: str = ""
    seen: int = 0
    hits: int = 0
    last_hit_day: int = 0

    def __iter__(self) -> Iterator[Any]:
        return iter((self.kind, self.text, self.reason))

    def __getitem__(self, i: int) -> Any:
        return (self.kind, self.text, self.reason)[i]

    def __len__(self) -> int:
        return 3

    def to_json(self) -> dict[str, Any]:
        """All fields as a JSON-ready dict."""
        return {
            "kind": self.kind,
            "text": self.text,
            "reason": self.reason,
            "path": self.path,
            "line": self.line,
            "raw": self.raw,
            "scope": self.scope,
            "src": self.src,
            "born": self.born,
            "seen": self.seen,
            "hits": self.hits,
            "last_hit_day": self.last_hit_day,
        }


def _stat(p: Path) -> tuple[str, int, int, int]:
    """Path, size, mtime and ctime (a rewrite with the mtime put back still moves the ctime)."""
    try:
        s = p.stat()
        return (str(p), s.st_size, s.st_mtime_ns, s.st_ctime_ns)
    except OSError:
        return (str(p), -1, -1, -1)


@functools.cache
def _code_fingerprint() -> str:
    """A digest of the code that turns files into a view (part of a stored block's token)."""
    here = Path(__file__).parent
    h = hashlib.sha256()
    for name in sorted(
        ["block.py", "graph.py", "memory.py", "model.py", "trust.py", "render.py", "text.py"]
        + [f"sources/{p.name}" for p in (here / "sources").glob("*.py")]
    ):
        try:
            h.update(name.encode() + (here / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()[:16]


def counted(n: Node) -> bool:
    """Whether usage is counted for a node: facts and skills written down, not episodes, not
    conflict lines, not request-scoped overrides (SPEC §6.3, §7.5)."""
    return n.kind in ("fact", "skill") and n.src != "override"


def node_identity(n: Node) -> dict[str, Any]:
    """Where a node comes from: ``{"path", "line"}`` (line only for facts)."""
    return {"path": n.path, "line": n.line} if n.kind == "fact" else {"path": n.path}


def node_provenance(n: Node) -> dict[str, Any]:
    """Provenance fields of a node (SPEC §7.1)."""
    return {"src": n.src, "born": n.born, "scope": n.scope, **n.fields}


_M = TypeVar("_M", bound=Callable[..., Any])


def _heard(method: _M) -> _M:
    """Run a :class:`Memory` method with its scopes as the warnings' audience: a warning about
    a record of another scope (an unreadable tag, a skill left out) is not printed
    (:mod:`talos.warn`, SPEC §7.3, issue 13 item 8)."""

    @functools.wraps(method)
    def run(self: Memory, *args: Any, **kwargs: Any) -> Any:
        with audience(self.scopes):
            return method(self, *args, **kwargs)

    return cast(_M, run)


class Memory:
    """One person's memory: recall, explain, usage, dead and forget over a home (SPEC §9.2).

    Args:
        home: the home folder (``None``: ``$TALOS_HOME``, else the platform data dir, §2).
        memory_file, skills_dir, sessions_dir, state_dir, trace_file: override single paths
            (relative ones resolve against the home); default from ``talos.toml`` or §2.
        scopes: authorized scopes of every request (SPEC §7.3), default ``("global",)``.
        keep_fact: filter on fact texts; default :func:`talos.safety.keep_fact` (§8.2);
            ``None`` keeps every line.
        blocked: skill file paths excluded on every route (in addition to the safety scan).
        lang: ``en`` or ``zh`` labels (default: ``lang`` in talos.toml, else ``en``).
        model: activation model name in :data:`talos.graph.MODELS` (default
            :data:`talos.graph.DEFAULT_MODEL`, ``bipartite``, chosen on the test split in
            bench/README.md; ``classic`` reproduces the reference rankings exactly).
        usage: where usage counts live (default: SQLite in the state folder).
        index: keep a persistent index in the state folder so recall reads nothing it has
            read before (SPEC §11); ``False`` reads every file on every call.

    Raises:
        InputError: ``talos.toml`` is invalid. ValueError: unknown ``lang`` or ``model``.
    """

    def __init__(
        self,
        home: str | os.PathLike[str] | None = None,
        *,
        memory_file: str | os.PathLike[str] | None = None,
        skills_dir: str | os.PathLike[str] | None = None,
        sessions_dir: str | os.PathLike[str] | None = None,
        state_dir: str | os.PathLike[str] | None = None,
        trace_file: str | os.PathLike[str] | None = None,
        scopes: Sequence[str] = DEFAULT_SCOPES,
        keep_fact: Callable[[str], bool] | None = _DEFAULT,
        blocked: Iterable[str | os.PathLike[str]] | None = None,
        lang: str | None = None,
        model: str | None = None,
        usage: UsageStore | None = None,
        index: bool = True,
    ) -> None:
        self.paths: Paths = resolve_paths(
            home,
            memory_file=memory_file,
            skills_dir=skills_dir,
            sessions_dir=sessions_dir,
            state_dir=state_dir,
            trace_file=trace_file,
        )
        self.scopes = tuple(scopes)
        self.keep_fact = safety.keep_fact if keep_fact is _DEFAULT else keep_fact
        self.blocked = {str(Path(p).resolve()) for p in (blocked or ())}
        self.lang = lang or str(self.paths.config.get("lang", "en"))
        labels(self.lang)
        self.model = model or str(self.paths.config.get("model", DEFAULT_MODEL))
        if self.model not in MODELS:
            raise ValueError(f"unknown model {self.model!r}; choose one of: {', '.join(MODELS)}")
        self.index: Index | None = Index(self.paths) if index else None
        self._indexed: tuple[tuple[int, int], list[tuple[Node, bool]], EpisodeBlock] | None = None
        self._kept: dict[str, bool] = {}
        self._vocab: Vocabulary | None = None
        self._skill_nodes: tuple[Any, list[Node]] | None = None
        self._merged: dict[tuple[Node, ...], Node] = {}
        self._view_memo: dict[Any, Any] = {}
        self._counted: dict[Node, list[tuple[str, str]]] = {}
        self._rcache: tuple[Any, Graph] | None = None
        self._built: Built | None = None
        self._key_counts: tuple[Graph, dict[tuple[str, str], int]] | None = None
        self._episode_start = 0
        self._present: tuple[Graph, dict[str, frozenset[str]]] | None = None
        self.usage_store: UsageStore = usage or SqliteUsage(
            self.paths.usage_db, import_hits=self.paths.hits_file
        )
        self._cache: tuple[Any, View, Graph] | None = None

    def close(self) -> None:
        """Close the index and usage connections now (they reopen on demand). A sqlite3
        connection is otherwise freed only by the cycle collector, holding its file open."""
        if self.index is not None:
            self.index.close()
        closer = getattr(self.usage_store, "close", None)
        if callable(closer):
            closer()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # never raise from a finalizer
            self.close()

    # -- loading ---------------------------------------------------------------------------

    def _signature(self) -> tuple[Any, ...]:
        """What the graph depends on: unchanged signature, unchanged graph.

        With the index: its generation after an incremental refresh (SPEC §11) plus the
        skills' sizes and mtimes. Without: size and mtime of every source file.
        """
        # Refresh first: the first refresh of a new index (or of new reader code) empties
        # it, and with it a skills scan stored a moment before (tests/test_block.py).
        indexed = self._refresh_index()
        skills = self._skills_state()
        if indexed:
            assert self.index is not None
            return ("index", self.index.generation, skills)
        return (
            _stat(self.paths.memory_file),
            skills,
            tuple(_stat(p) for p in session_files(self.paths.sessions_dir)),
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
            old = self._indexed
            try:
                rows = old[1] if old and old[0][0] == gen[0] else self.index.fact_rows()
                block = (
                    old[2]
                    if old and old[0][1] == gen[1]
                    else self.index.episode_block(old[2] if old else None)
                )
            except (OSError, sqlite3.Error) as e:  # a cache that cannot be read: the files
                self._drop_index(e)
                indexed = False
        if indexed:
            self._indexed = (gen, rows, block)
            if self.keep_fact is safety.keep_fact:  # the index holds its verdicts
                facts = [n for n, safe in rows if safe]
            else:  # a withheld line's row is kept masked (Index.indexed_fact)
                facts = [n for n, _safe in rows if self._keep(n.text)]
        else:
            facts = load_facts(self.paths.memory_file, self.keep_fact)
            if self.keep_fact is not safety.keep_fact:
                facts = [m for n in facts if (m := _masked_fact(n)) is not None]
            block = EpisodeBlock.of_nodes(load_episodes(self.paths.sessions_dir))
        return facts + self._skills(len(facts), skills), block

    def _skills_state(self) -> tuple[Any, ...]:
        """Each skill file's size and mtime, and the names the safety scan flags (a payload
        in a subfolder changes no top-level skill's stat)."""
        return (
            tuple(_stat(p) for p in skill_files(self.paths.skills_dir)),
            safety.flagged_skills(self.paths.skills_dir, self.index),
        )

    def _skills(self, start: int, state: tuple[Any, ...] | None = None) -> list[Node]:
        """The skill nodes, kept while no skill file changed (stat, scan verdicts, ``start``)."""
        key = (start, *(state or self._skills_state()))
        if self._skill_nodes is None or self._skill_nodes[0] != key:
            nodes = load_skills(
                self.paths.skills_dir, self.lang, self.blocked, start, scan_store=self.index
            )
            self._skill_nodes = (key, nodes)
        return list(self._skill_nodes[1])

    def _keep(self, text: str) -> bool:
        """``keep_fact(text)``, remembered per text for the life of this object."""
        if self.keep_fact is None:
            return True
        got = self._kept.get(text)
        if got is None:
            got = self._kept[text] = self.keep_fact(text)
        return got

    def nodes(self) -> list[Node]:
        """All nodes of the home in load order (facts, skills, episodes), before the view."""
        records, block = self._sources()
        start = len(records)
        return records + [block.episode(e, start) for e in range(block.episodes)]

    @_heard
    def view(
        self, at: dt.date | None = None, overrides: Mapping[str, str] | None = None
    ) -> tuple[View, Graph]:
        """The authorized active view at ``at`` (default today) and its graph (SPEC §7.3).

        The view's ``nodes`` are its records (facts, skills, conflict and override lines);
        episodes carry no provenance tag (scope ``global``, always valid), so they join the
        graph as the block :mod:`talos.block` merged once, after the records, when ``global``
        is an authorized scope. Cached while the files, the date and the overrides are
        unchanged.
        """
        return self._view(at, overrides, self._signature())

    def _view(
        self, at: dt.date | None, overrides: Mapping[str, str] | None, sig: tuple[Any, ...]
    ) -> tuple[View, Graph]:
        """:meth:`view` for a signature the caller just took (one look at the files)."""
        day = at or dt.date.today()
        key = (sig, day, tuple(sorted((overrides or {}).items())))
        if self._cache and self._cache[0] == key:
            return self._cache[1], self._cache[2]
        records, block = self._sources(sig[2] if sig[0] == "index" else sig[1])
        patched = self._patch(records, block, key[1:]) or self._restack(records, block, key[1:])
        if patched is not None:
            view, graph = patched
            self._cache = (key, view, graph)
            return view, graph
        view = build_view(records, self.scopes, day, overrides, self._view_memo)
        head = merge_duplicates(view.nodes, self._merged)
        self._episode_start = len(records)
        base = self._base(block)
        if self._vocab is None or self._vocab.base is not base:
            self._vocab = Vocabulary(base)
        incidence = self._vocab.incidence([n.keywords for n in head])
        graph = self._stack(head, incidence, block, len(records))
        graph.cache["kinds"] = [n.kind for n in head]
        self._cache = (key, view, graph)
        self._built = Built(records, block, key[1:], view, head, incidence, graph)
        return view, graph

    def _patch(
        self, records: list[Node], block: EpisodeBlock, when: tuple[Any, ...]
    ) -> tuple[View, Graph] | None:
        """The view and graph after an in-place edit of memory.md, patched into the last
        ones built (:mod:`talos.patch`), or ``None`` when a full build is needed (SPEC §11:
        an edit costs what it changed, not a pass over every memory)."""
        b = self._built
        base = self._base(block)
        if (
            b is None
            or (b.block is not block and base is not None)  # without episodes: no matter
            or b.when != when
            or self._vocab is None
            or self._vocab.base is not base
            or b.incidence.base is not base  # built in the vocabulary's numbering
        ):
            return None
        if all(x is y for x, y in zip(b.records, records, strict=False)) and len(b.records) == len(
            records
        ):
            b.block = block
            return b.view, b.graph  # looked at again, nothing changed
        day = when[0]
        verdicts = self._view_memo.get((self.scopes, day))
        if verdicts is None:
            return None

        def standing_of(n: Node) -> tuple[str, str, str]:
            got = verdicts.get(n)
            if got is None:
                got = verdicts[n] = standing(n, self.scopes, day)
            return got

        got = patch_view(b, records, self.scopes, standing_of, self._merged)
        if got is None:
            return None
        built, sp = got
        incidence = splice_incidence(b.incidence, sp, built.head, self._vocab)
        built.block = block
        graph = self._stack(built.head, incidence, block, len(records))
        splice_cache(b.graph, graph, sp)
        if "kinds" not in graph.cache:
            graph.cache["kinds"] = [n.kind for n in built.head]
        self._patch_present(b.graph, graph, sp.removed, sp.added)
        built.incidence, built.graph = incidence, graph
        self._built = built
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
        b = self._built
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
        self._vocab = (
            self._vocab.rebase(block.incidence)
            if self._vocab is not None
            else Vocabulary(block.incidence)
        )
        incidence = self._vocab.incidence([n.keywords for n in b.head])
        graph = self._stack(b.head, incidence, block, len(records))
        for name in ("kinds", "skill_mask"):
            if name in b.graph.cache:
                graph.cache[name] = b.graph.cache[name]
        if self._present is not None and self._present[0] is b.graph:
            self._present = (graph, self._present[1])
        if self._key_counts is not None and self._key_counts[0] is b.graph:
            self._key_counts = (graph, self._key_counts[1])
        built = Built(records, block, when, b.view, b.head, incidence, graph, tables=b)
        self._built = built
        return b.view, graph

    def _recall_graph(self, at: dt.date | None, overrides: Mapping[str, str] | None) -> Graph:
        """The graph :meth:`recall` ranks over: :meth:`view`'s, or the same records read back
        from the index (:class:`talos.block.RecordsBlock`) when this process has not built
        them, so a process that only recalls builds no record node it does not deliver
        (SPEC §11). Only for the default fact filter and without overrides; the block is
        written from the graph :meth:`view` built, under a token of all it depends on."""
        if overrides or self.index is None or self.keep_fact is not safety.keep_fact:
            return self.view(at, overrides)[1]
        day = at or dt.date.today()
        sig = self._signature()
        key = (sig, day, ())
        if self._cache and self._cache[0] == key:
            return self._cache[2]
        if self._rcache and self._rcache[0] == key:
            return self._rcache[1]
        if sig[0] != "index" or self.index is None or self._cache is not None:
            # no index to read from, or a long-lived Memory that built (and patches) its own
            return self._view(at, None, sig)[1]
        token = self._records_token(sig, day)
        try:
            data = self.index.load_records(token)
        except (OSError, sqlite3.Error):
            data = None
        if data is not None:
            try:
                stored = RecordsBlock.from_bytes(data, token)
                old = self._indexed
                gen = (self.index.facts_generation, self.index.sessions_generation)
                try:
                    block = (
                        old[2]
                        if old and old[0][1] == gen[1]
                        else self.index.episode_block(old[2] if old else None)
                    )
                except (OSError, sqlite3.Error) as e:
                    self._drop_index(e)
                    return self._view(at, None, self._signature())[1]
                graph = self._stack(stored.nodes, stored.incidence, block, stored.start)
                graph.cache["kinds"] = stored.kinds
                if isinstance(stored.kinds, Kinds):
                    graph.cache["skill_mask"] = stored.kinds.mask("skill")
                self._present = (graph, stored.present)
                self._rcache = (key, graph)
                return graph
            except BlockError as e:
                warn(f"{self.index.file}: stored records unusable ({e}); rebuilding them")
        first = self._cache is None
        _view, graph = self._view(at, None, sig)
        if not first:
            # A long-lived Memory (an agent loop, the MCP server) rebuilt its view after an
            # edit: the next one-shot process stores the block; this one must not pay for it
            # on every edit (SPEC §11: an edit costs what the edit changed).
            return graph
        head = graph.nodes[: graph.records]
        records = RecordsBlock(
            head,
            graph.cache.get("kinds") or [n.kind for n in head],
            graph.head,  # its own vocabulary: a loading process maps it onto its block's
            self._present_keys(graph),
            self._episode_start,
        )
        if self.index is not None:  # None: found unreadable while the view was built
            with contextlib.suppress(OSError, sqlite3.Error):  # a cache: costs speed only
                self.index.save_records(token, records.to_bytes(token))
        return graph

    @_heard
    def prepare(self, at: dt.date | None = None) -> None:
        """Build and store what a recall at ``at`` (default today) reads, so the next recall
        process starts warm: the episode block and the records block of the default view
        (SPEC §11). No usage is counted and no trace is written. ``talos index`` calls it;
        without it the first recall after a build pays for both (1.2 s and 183 MB at
        30,000 sessions, against 0.45 s and 88 MB warm)."""
        self._recall_graph(at, None)

    def _records_token(self, sig: tuple[Any, ...], day: dt.date) -> str:
        """What the records of a view depend on: the indexed facts' version, the skills
        (stats, scan verdicts), scopes, date, language, blocked skills and talos's code."""
        assert self.index is not None
        return hashlib.sha256(
            json.dumps(
                [
                    self.index.facts_token,
                    _code_fingerprint(),
                    [list(s) for s in sig[2][0]],
                    sorted(sig[2][1]),
                    list(self.scopes),
                    day.isoformat(),
                    self.lang,
                    sorted(self.blocked),
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

    @_heard
    def graph(self, at: dt.date | None = None) -> Graph:
        """The graph of the authorized active view at ``at`` (default: today)."""
        return self.view(at)[1]

    def _activate(
        self, query: str, at: dt.date | None, overrides: Mapping[str, str] | None = None
    ) -> tuple[Graph, Activation]:
        graph = self.view(at, overrides)[1]
        return graph, MODELS[self.model].activate(graph, keywords(query))

    # -- reading ---------------------------------------------------------------------------

    @_heard
    def recall(
        self,
        query: str,
        k: int = 5,
        at: dt.date | None = None,
        overrides: dict[str, str] | None = None,
        budget: int | None = None,
        unit: str = "chars",
    ) -> Recall:
        """Recall the memories relevant to ``query`` as a context block (SPEC §6.1).

        Takes the top ``k`` ranked rows; the best skill of the *full* ranking gets its body
        when it passes the gate (§6.1 step 2) and is among the top ``k``. Writes one trace
        line and updates usage counts, also when nothing is recalled; a failure there warns on
        stderr and never fails the recall.

        Args:
            query: the task text. k: rows to deliver (>= 0). at: business date (default today).
            overrides: request-scoped values ``{key: value}`` (SPEC §7.5): they replace the
                records of that key for this call only, are marked as overrides in the block,
                and are never written or counted.
            budget: most ``unit`` (``chars``, ``utf16``, ``bytes``) the block may take (SPEC
                §6.1 rule 6, :func:`talos.render.fit_block`); ``None``: no bound. The trace and
                usage count only the rows delivered within it.

        Returns:
            A :class:`Recall` (``.text`` is "" when nothing was recalled).

        Raises:
            InputError: ``budget`` below :data:`talos.render.MIN_BUDGET`, an unknown ``unit``.
        """
        check_budget(budget, unit)  # a bad budget fails before anything is written
        graph = self._recall_graph(at, overrides)
        act = MODELS[self.model].activate(graph, keywords(query))
        spec = MODELS[self.model]
        values, order = rank_arrays(act, spec.thresh, k=max(k, 0))
        top = [(round(a, 2), i) for a, i in zip(values.tolist(), order.tolist(), strict=True)]
        # the skills in the order of the full ranking (skills are records; a few dozen)
        values, order = rank_arrays(act, spec.thresh, among=graph.skill_positions())
        skills = [(round(a, 2), i) for a, i in zip(values.tolist(), order.tolist(), strict=True)]
        best: int | None = None
        if skills:
            lead = (
                skills[0][0] >= spec.body_floor
                if len(skills) == 1
                else skills[0][0] >= spec.body_lead * skills[1][0]
            )
            best = skills[0][1] if lead else None
        rows = [
            RecallRow(
                graph.nodes[i].key,
                graph.nodes[i].kind,
                graph.nodes[i].text,
                s,
                i == best,
                graph.nodes[i],
            )
            for s, i in top
        ]
        text, kept = fit_block(
            [Pick(r.node, r.score, r.body) for r in rows], self.lang, budget, unit
        )
        # only delivered rows are hits (SPEC §6.3): ``kept`` is a prefix of the rows
        rows = [dataclasses.replace(r, body=p.body) for r, p in zip(rows, kept, strict=False)]
        write_trace(self.paths.trace_file, query, [r.as_trace() for r in rows], self.scopes)
        self._count(graph, rows)
        return Recall(text, rows)

    def _present_keys(self, graph: Graph) -> dict[str, frozenset[str]]:
        """Usage keys of every fact/skill (and merged member) in view, per scope; once per
        graph: recall must not cost O(memories) (SPEC §6.3)."""
        if self._present is not None and self._present[0] is graph:
            return self._present[1]
        keys: dict[str, set[str]] = {s: set() for s in self.scopes}
        old, now = self._counted, {}
        for n in graph.nodes[: graph.records]:  # episodes are never counted
            pairs = old.get(n)
            if pairs is None:
                pairs = [(m.scope, m.key) for m in n.family() if counted(m)]
            now[n] = pairs
            for scope, key in pairs:
                got = keys.get(scope)
                if got is None:
                    got = keys[scope] = set()
                got.add(key)
        self._counted = now
        present = {s: frozenset(v) for s, v in keys.items()}
        self._present = (graph, present)
        return present

    def _patch_present(
        self, old: Graph, new: Graph, removed: Sequence[Node], added: Sequence[Node]
    ) -> None:
        """The usage keys of ``new`` from those of ``old`` when the records ``removed`` left
        and ``added`` came (:meth:`_patch`): counted per key, so a key two records share
        stays present, and each scope's set changes by the keys that came and went."""
        if self._present is None or self._present[0] is not old:
            return
        counts = self._key_counts
        if counts is None or counts[0] is not old:
            tally: dict[tuple[str, str], int] = {}
            for n in old.nodes[: old.records]:
                for m in n.family():
                    if counted(m):
                        tally[(m.scope, m.key)] = tally.get((m.scope, m.key), 0) + 1
            counts = (old, tally)
        tally = counts[1]
        moved: set[tuple[str, str]] = set()
        for n in removed:
            for m in n.family():
                if counted(m):
                    sk = (m.scope, m.key)
                    tally[sk] -= 1
                    if not tally[sk]:
                        del tally[sk]
                    moved.add(sk)
        for n in added:
            for m in n.family():
                if counted(m):
                    sk = (m.scope, m.key)
                    tally[sk] = tally.get(sk, 0) + 1
                    moved.add(sk)
        self._key_counts = (new, tally)
        before = self._present[1]
        present = dict(before)
        for scope in {s for s, _k in moved}:
            keys = before.get(scope, frozenset())
            gone = {k for s, k in moved if s == scope and (s, k) not in tally}
            came = {k for s, k in moved if s == scope and (s, k) in tally}
            now = (keys - gone) | came
            if now != keys:
                present[scope] = now
                fingerprint_from(keys, now)
        self._present = (new, present)

    def _count(self, graph: Graph, rows: list[RecallRow]) -> None:
        """Usage: every fact/skill in view is seen once, every picked family member is hit."""
        present = self._present_keys(graph)
        hits: dict[str, set[str]] = {}
        for r in rows:
            for m in r.node.family():
                if counted(m):
                    hits.setdefault(m.scope, set()).add(m.key)
        try:
            self.usage_store.record(present, hits, today())
        except Exception as e:
            warn(f"cannot update usage counts ({e}); recall goes on")

    @_heard
    def explain(
        self,
        query: str,
        k: int = 8,
        at: dt.date | None = None,
        overrides: Mapping[str, str] | None = None,
    ) -> list[Row]:
        """The top ``k`` ranked rows with how each was reached (SPEC §6.2). No side effects.

        Returns:
            :class:`Row` objects; each unpacks as ``(score, kind, text)``.
        """
        graph, act = self._activate(query, at, overrides)
        out: list[Row] = []
        for a, i in rank(act, MODELS[self.model].thresh)[: max(k, 0)]:
            n = graph.nodes[i]
            levels = [act.seeds, *act.hop_levels()]
            gains = [
                levels[h].get(i, 0.0) - levels[h - 1].get(i, 0.0) for h in range(1, len(levels))
            ]
            edges = []
            for h in range(1, len(levels)):
                prev = levels[h - 1]
                for j, w in graph.neighbours[i]:
                    if j in prev:
                        edges.append(
                            {
                                "hop": h,
                                "from": graph.nodes[j].key,
                                "weight": round(w, 4),
                                "from_activation": round(prev[j], 4),
                            }
                        )
            out.append(
                Row(
                    round(a, 2), n.kind, n.with_members(), n, a, act.seeds.get(i, 0.0), gains, edges
                )
            )
        return out

    @_heard
    def usage(self) -> dict[str, Stat]:
        """Usage counts of the authorized scopes: ``kind:text80`` → :class:`Stat` (SPEC §6.3)."""
        out: dict[str, Stat] = {}
        for s in self.scopes:
            out.update(self.usage_store.stats(s))
        return out

    @_heard
    def dead(
        self, min_seen: int = 8, stale_days: int = 90, at: dt.date | None = None
    ) -> list[Suggestion]:
        """Forgetting suggestions (SPEC §6.4): memories whose tag says talos or an agent
        wrote them (``src != user``).

        A fact whose tag's source is not ``user``, or a skill whose frontmatter says
        ``source:`` other than ``user`` (issue 3), qualifies when ``seen >= min_seen`` and it
        was never hit ("seen N times, never recalled") or its last hit is ``>= stale_days``
        days ago. Merged members count too. The tag decides, not who typed the line (issue
        12.6): untagged and ``user``-tagged lines and skills without ``source:`` are never
        proposed; a line a person tagged ``import`` or ``reflect`` is. Each suggestion carries
        its ``src``. A memory with hits but no recorded hit day (imported ``[seen, hits]``) is
        not judged stale.
        """
        graph = self.graph(at)
        stats = {s: self.usage_store.stats(s) for s in self.scopes}
        t = labels(self.lang)
        now = today()
        out: list[Suggestion] = []
        seen_ids: set[tuple[str, int]] = set()
        never: dict[int, str] = {}  # the reason per count: 583,000 suggestions at 1M facts
        none: dict[str, Stat] = {}
        for rep in graph.nodes[: graph.records]:  # episodes are never suggested
            for n in (rep, *rep.members) if rep.members else (rep,):
                if (
                    n.kind not in ("fact", "skill")
                    or n.src in ("user", "override")
                    or (n.path, n.line) in seen_ids
                ):
                    continue
                seen_ids.add((n.path, n.line))
                st = stats.get(n.fields.get("scope", "global"), none).get(n.key)
                if st is None or st.seen < min_seen:
                    continue
                if st.hits == 0:
                    reason = never.get(st.seen) or never.setdefault(
                        st.seen, t["never"].format(seen=st.seen)
                    )
                elif st.last_hit_day and now - st.last_hit_day >= stale_days:
                    reason = t["stale"].format(days=now - st.last_hit_day)
                else:
                    continue
                out.append(
                    Suggestion(
                        n.kind,
                        n.text,
                        reason,
                        n.path,
                        n.line,
                        n.raw,
                        n.scope,
                        n.src,
                        n.born,
                        st.seen,
                        st.hits,
                        st.last_hit_day,
                    )
                )
        return out

    # -- writing ---------------------------------------------------------------------------

    @_heard
    def forget(self, suggestions: Iterable[Suggestion | Sequence[str]]) -> int:
        """Remove the memory.md lines the suggestions stand for (SPEC §6.5); returns how many
        records were forgotten (lines and skill files; see :meth:`forget_records`)."""
        return len(self.forget_records(suggestions))

    @_heard
    def forget_records(self, suggestions: Iterable[Suggestion | Sequence[str]]) -> list[Forgotten]:
        """Remove the memory.md lines the suggestions stand for (SPEC §6.5), and move
        suggested skill files to the trash; returns what was forgotten, with the ids
        ``talos restore`` takes (issue 12.6: "can be restored" named no id).

        Removes lines *not* written by the person (``src != user``) whose text equals a
        suggestion's text, in the suggestion's scope — never a hand-written line with the same
        text. Removed lines go to the audit log with the reason. A suggestion that matches no
        line (the file changed since) removes nothing and is reported on stderr.

        Args:
            suggestions: :class:`Suggestion` objects or ``(kind, text[, reason])`` tuples
                (scope ``global``); only ``fact`` suggestions remove lines, only skill
                :class:`Suggestion` objects move files.

        Returns:
            :class:`~talos.writer.Forgotten` records, skills first, then lines in file order.

        Raises:
            filelock.Timeout, OSError: the file could not be rewritten (it is then unchanged).
        """
        from talos import writer  # imported on use: recall never writes memory.md

        wanted: dict[tuple[str, str], str] = {}
        done: list[Forgotten] = []
        for s in suggestions:
            kind, text = s[0], s[1]
            if kind == "skill" and isinstance(s, Suggestion):
                skill = self._forget_skill(s)
                if skill is not None:
                    done.append(skill)
                continue
            if kind != "fact":
                continue
            scope = s.scope if isinstance(s, Suggestion) else "global"
            reason = s[2] if len(s) > 2 else "forget"
            wanted.setdefault((scope, text), reason)
        if not wanted:
            self._cache = None
            return done

        def doomed(p: Any, _raw: str) -> bool:
            return p.src != "user" and (p.fields.get("scope", "global"), p.text) in wanted

        reasons = sorted(set(wanted.values()))
        removed = writer.remove_fact_lines(self.paths, doomed, "forget", "; ".join(reasons))
        self._cache = None
        matched: set[tuple[str, str]] = set()
        for r in removed:
            parsed = parse_fact_line(r.raw)
            assert parsed is not None  # remove_fact_lines removes parsed facts only
            matched.add((parsed.fields.get("scope", "global"), parsed.text))
            done.append(
                writer.Forgotten("fact", r.id, parsed.text, f"{self.paths.memory_file}:{r.line}")
            )
        for scope, text in wanted.keys() - matched:
            warn(f"nothing to forget for {text!r} (scope {scope}): no such line written by talos")
        return done

    def _forget_skill(self, s: Suggestion) -> Forgotten | None:
        """Move a suggested skill file to the trash (restorable) if it still exists and is
        still not hand-written (``source:`` other than ``user``); ``None`` otherwise."""
        path = Path(s.path)
        raw = read_skill(path) if path.is_file() else None
        if raw is None:
            warn(f"nothing to forget for skill {s.text!r}: {path} is gone or unreadable")
            return None
        fields, _body = parse_frontmatter(raw)
        if (fields.get("source") or "user") == "user":
            warn(f"{path}: written by the person (no source: or source: user); not forgotten")
            return None
        scope = fields.get("scope") or "global"
        if scope not in self.scopes:  # its scope changed since it was suggested (SPEC §7.3)
            warn(f"nothing to forget for skill {s.text!r}: it is no longer in scope {s.scope}")
            return None
        from talos import writer  # imported on use: recall never writes memory.md

        dest = writer.trash_skill(self.paths, path, s.reason, scope)
        return writer.Forgotten("skill", writer.skill_id(path), s.text, str(dest))

    # -- trust (SPEC §7) -------------------------------------------------------------------

    @_heard
    def get(
        self, key: str, at: dt.date | None = None, overrides: Mapping[str, str] | None = None
    ) -> Decision:
        """The single usable value of canonical key ``key`` — a decision to branch on (§7.7).

        ``reason`` is ``ok``, ``unknown`` (no record in view; a record of an unauthorized
        scope is indistinguishable from none), ``expired`` / ``not-yet-valid`` (records exist
        but none is valid at ``at``), or ``conflict`` (``competitors`` lists them). When
        several authorized scopes hold the key, the first scope in ``scopes`` order wins.
        A value from a ``reflect`` record has ``inferred=True``.
        """
        view, _graph = self.view(at, overrides)
        for n in view.nodes:
            if n.src == "override" and n.fields.get("key") == key:
                return Decision(key, "ok", stated_value(n.text), n, override=True)
        for scope in self.scopes:
            if (scope, key) in view.conflicts:
                return Decision(
                    key, "conflict", None, None, competitors=list(view.conflicts[(scope, key)])
                )
            winner = view.winners.get((scope, key))
            if winner is not None:
                return Decision(
                    key, "ok", stated_value(winner.text), winner, inferred=winner.src == "reflect"
                )
        reasons = [
            e.reason
            for e in view.excluded
            if e.node.fields.get("key") == key and e.reason in ("expired", "not-yet-valid")
        ]
        if reasons:
            return Decision(key, "expired" if "expired" in reasons else "not-yet-valid", None, None)
        return Decision(key, "unknown", None, None)

    @_heard
    def conflicts(self, at: dt.date | None = None) -> list[tuple[str, str, list[Node]]]:
        """Contested keys in view: ``[(scope, key, competing records), ...]`` (SPEC §7.4)."""
        view, _graph = self.view(at)
        return [(scope, key, list(recs)) for (scope, key), recs in view.conflicts.items()]

    @_heard
    def why_not(
        self,
        query: str,
        k: int = 8,
        at: dt.date | None = None,
        overrides: Mapping[str, str] | None = None,
    ) -> list[WhyNot]:
        """In-scope records that share a keyword with ``query`` but are not among the top
        ``k`` rows, each with a typed reason (SPEC §6.2 ``--why-not``): ``below-threshold``,
        ``beyond-k``, ``shadowed``, ``conflict``, ``superseded``, ``deleted``, ``expired``,
        ``not-yet-valid``, ``overridden``, ``unsafe``. Records of other scopes never appear.
        """
        qk = keywords(query)
        view, graph = self.view(at, overrides)
        _graph, act = self._activate(query, at, overrides)
        ranked = [i for _a, i in rank(act, MODELS[self.model].thresh)]
        top, beyond = set(ranked[: max(k, 0)]), ranked[max(k, 0) :]
        out: list[WhyNot] = []
        for i in beyond:
            out.append(
                WhyNot(
                    graph.nodes[i],
                    "beyond-k",
                    f"rank {ranked.index(i) + 1}",
                    round(act.final[i], 2),
                )
            )
        for i, a in act.final.items():
            if i not in top and i not in beyond:
                out.append(WhyNot(graph.nodes[i], "below-threshold", "", round(a, 2)))
        for e in view.excluded:
            if e.node.keywords & qk:
                out.append(WhyNot(e.node, e.reason, e.by))
        if self.keep_fact is not None:
            default = self.keep_fact is safety.keep_fact
            for n in load_facts(self.paths.memory_file, None):
                tag = tag_reasons(n.raw) if default and n.fields else ()
                if (
                    authorized(n, self.scopes)
                    and n.keywords & qk
                    and (tag or not self.keep_fact(n.text))
                ):
                    # The text itself is withheld: why-not output reaches agents too (MCP),
                    # and the point of the filter is that this line never reaches a prompt.
                    found = [*safety.instruction_reasons(n.text), *tag]
                    reasons = "; ".join(found) or "filtered"
                    what = (
                        "it holds a credential"  # issue 13 item 6: the reason is masked too
                        if found and all(r.startswith("contains a credential") for r in found)
                        else "it looks like an instruction"
                    )
                    hidden = dataclasses.replace(
                        n, text=f"(line {n.line} withheld: {what})", raw=""
                    )
                    out.append(WhyNot(hidden, "unsafe", f"{reasons} (SPEC §8.2)"))
        return out

    @_heard
    def remember(
        self,
        text: str,
        *,
        key: str | None = None,
        source: str = "user",
        ref: str | None = None,
        scope: str | None = None,
        observed: dt.date | None = None,
        valid_from: dt.date | None = None,
        until: dt.date | None = None,
        conf: float | None = None,
        by: str | None = None,
    ) -> RememberResult:
        """Append a tagged fact, superseding per SPEC §7.5 (see :func:`talos.writer.remember`).

        ``scope`` defaults to the first authorized scope. Raises :class:`InputError` for bad
        input, when ``scope`` is not one of this memory's authorized scopes, and when the text
        looks like an instruction: the fact filter (SPEC §8.2) would keep it out of every
        route, so storing it would only hide it (found by a newcomer: it said "remembered").
        """
        scope = scope or (self.scopes[0] if self.scopes else "global")
        if scope not in self.scopes:
            raise InputError(f"scope {scope!r} is not authorized here ({', '.join(self.scopes)})")
        if self.keep_fact is not None and not self.keep_fact(" ".join(text.split())):
            reasons = "; ".join(safety.instruction_reasons(text)) or "rejected by keep_fact"
            raise InputError(
                f"not remembered: the text looks like an instruction ({reasons}); talos never "
                "recalls such lines (SPEC §8.2)"
            )
        for name, value in (("key", key), ("ref", ref), ("by", by)):
            if value and safety.secrets.holds_secret(value):
                raise InputError(
                    f"not remembered: the {name} holds a credential value "
                    f"({safety.mask_secrets(value)}); a line holding one is never recalled "
                    "(SPEC §8.3): give a reference without it"
                )
        from talos import writer  # imported on use: recall never writes memory.md

        result = writer.remember(
            self.paths,
            text,
            key=key,
            source=source,
            ref=ref,
            scope=scope,
            observed=observed,
            valid_from=valid_from,
            until=until,
            conf=conf,
            by=by,
            authorized=self.scopes,
        )
        self._cache = None
        return result

    @_heard
    def resolve(self, key: str, keep: str, at: dt.date | None = None) -> list[str]:
        """Settle a conflict (SPEC §7.4): keep record ``keep``; the other active records of
        ``key`` in its scope become superseded (removed from memory.md, audited, restorable).

        ``keep`` is looked up in the view first (the message lists the ids to choose from);
        the decision itself is made again under the lock on memory.md as it is then
        (:func:`talos.writer.resolve`, issue 12.2).

        Returns:
            Ids of the superseded records.

        Raises:
            InputError: ``keep`` is not an active in-scope record of ``key``, or no longer is
                by the time the lock is held (another write changed the key meanwhile).
        """
        view, _graph = self.view(at)
        pool = [n for n in view.nodes if n.kind == "fact" and n.fields.get("key") == key]
        pool += [
            e.node
            for e in view.excluded
            if e.node.fields.get("key") == key and e.reason in ("conflict", "shadowed")
        ]
        if not any(record_id(n) == keep for n in pool):
            ids = ", ".join(sorted({record_id(n) for n in pool})) or "none"
            raise InputError(f"{keep!r} is not an active record of key {key!r} (ids: {ids})")
        from talos import writer  # imported on use: recall never writes memory.md

        removed = writer.resolve(self.paths, key, keep, self.scopes, at or dt.date.today())
        self._cache = None
        return [r.id for r in removed]

    @_heard
    def revoke(self, ref: str) -> list[str]:
        """Retract every record derived from source ``ref`` in the authorized scopes (§7.6):
        removed from memory.md, audited as ``revoke``, restorable. Returns their ids.

        Raises:
            InputError: ``ref`` is empty, or no record of the authorized scopes carries it
                (issue 12.6: "revoked 0 record(s)" with exit 0 read as success).
        """
        if not ref:
            raise InputError("revoke needs a non-empty --ref")
        from talos import writer  # imported on use: recall never writes memory.md

        removed = writer.remove_fact_lines(
            self.paths,
            lambda p, _raw: (
                p.fields.get("ref") == ref and p.fields.get("scope", "global") in self.scopes
            ),
            "revoke",
            f"source {ref} revoked",
        )
        self._cache = None
        if not removed:
            raise InputError(
                f"no record in {self.paths.memory_file} carries ref={ref} "
                f"(scopes: {', '.join(self.scopes)}); nothing revoked"
            )
        return [r.id for r in removed]

    @_heard
    def restore(self, rid: str) -> str:
        """Bring back a removed record of the authorized scopes by id from the audit log
        (SPEC §7.6); returns the line (see :meth:`restore_record`)."""
        return self.restore_record(rid).line

    @_heard
    def restore_record(self, rid: str) -> Restored:
        """:meth:`restore`, telling also which records the restored one superseded: undoing
        a supersede makes it current again (:func:`talos.writer.restore`, issue 12.6).
        Another scope's id reads as unknown (§7.7)."""
        from talos import writer  # imported on use: recall never writes memory.md

        done = writer.restore(self.paths, rid, scopes=self.scopes)
        self._cache = None
        return done

    @_heard
    def history(self, target: str | None = None) -> list[dict[str, Any]]:
        """Audit entries (committed writes) of the authorized scopes, oldest first; only those
        whose record id or key is ``target`` when given (SPEC §7.6). The log holds every
        scope's lines; another scope's entries are never shown (§7.3). The log keeps each line
        exactly (``restore`` brings it back as it was); what is returned has every credential
        in ``before``, ``after`` and ``reason`` masked (§8.3: a revoked tool record holding a
        token was printed whole by ``talos history``)."""
        from talos import audit  # imported on use: recall never reads the log

        rows = [
            {**e, **_masked_entry(e), "state": "committed"}  # settled(): committed only
            for e in audit.settled(self.paths.audit_file)
            if audit.entry_scope(e) in self.scopes
        ]
        if target:
            rows = [e for e in rows if target in (e.get("id"), e.get("key"))]
        return rows


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


def _masked_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """The text fields of an audit entry with credentials masked (what history shows)."""
    return {
        k: safety.mask_secrets(v)
        for k in ("before", "after", "reason")
        if isinstance(v := entry.get(k), str)
    }


@dataclass(slots=True)
class Decision:
    """The answer of :meth:`Memory.get` (SPEC §7.7): ``reason`` ``ok``/``unknown``/
    ``expired``/``not-yet-valid``/``conflict``; ``value`` and ``record`` when ok."""

    key: str
    reason: str
    value: str | None
    record: Node | None
    competitors: list[Node] = field(default_factory=list)
    inferred: bool = False
    override: bool = False

    @property
    def ok(self) -> bool:
        """True when there is one usable value."""
        return self.reason == "ok"

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form with provenance."""
        rec = self.record
        return {
            "key": self.key,
            "ok": self.ok,
            "reason": self.reason,
            "value": self.value,
            "inferred": self.inferred,
            "override": self.override,
            "record": None
            if rec is None
            else {
                "id": record_id(rec),
                "text": rec.text,
                **node_identity(rec),
                "provenance": node_provenance(rec),
            },
            "competitors": [
                {
                    "id": record_id(n),
                    "text": n.text,
                    "value": stated_value(n.text),
                    **node_identity(n),
                    "provenance": node_provenance(n),
                }
                for n in self.competitors
            ],
        }


@dataclass(slots=True)
class WhyNot:
    """An in-scope record left out of explain's rows, and why (SPEC §6.2)."""

    node: Node
    reason: str
    detail: str = ""
    score: float | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        n = self.node
        return {
            "kind": n.kind,
            "text": n.text,
            "id": record_id(n),
            "reason": self.reason,
            "detail": self.detail,
            "score": self.score,
            **node_identity(n),
            "provenance": node_provenance(n),
        }
