"""The Python API: :class:`Memory` (SPEC §9.2). The CLI, compat layer and benches sit on it."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from talos import safety
from talos.graph import DEFAULT_MODEL, MODELS, Activation, Graph, build_graph, rank
from talos.home import Paths, resolve_paths
from talos.model import Node
from talos.render import Pick, labels, render_block
from talos.sources import load_episodes, load_facts, load_skills
from talos.sources.sessions import session_files
from talos.sources.skills import skill_files
from talos.text import keywords
from talos.trust import DEFAULT_SCOPES, in_view
from talos.usage import SqliteUsage, Stat, UsageStore, today, write_trace
from talos.warn import warn
from talos.writer import remove_fact_lines

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
        """The row as a trace entry ``{"key", "score", "body"}`` (SPEC §6.3)."""
        return {"key": self.key, "score": self.score, "body": self.body}


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

    def __iter__(self):  # type: ignore[no-untyped-def]
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

    def __iter__(self):  # type: ignore[no-untyped-def]
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


def node_identity(n: Node) -> dict[str, Any]:
    """Where a node comes from: ``{"path", "line"}`` (line only for facts)."""
    return {"path": n.path, "line": n.line} if n.kind == "fact" else {"path": n.path}


def node_provenance(n: Node) -> dict[str, Any]:
    """Provenance fields of a node (SPEC §7.1)."""
    return {"src": n.src, "born": n.born, "scope": n.scope, **n.fields}


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
        model: activation model name in :data:`talos.graph.MODELS` (default ``classic``).
        usage: where usage counts live (default: SQLite in the state folder).

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
        self.usage_store: UsageStore = usage or SqliteUsage(
            self.paths.usage_db, import_hits=self.paths.hits_file
        )
        self._cache: tuple[Any, dt.date, Graph] | None = None

    # -- loading ---------------------------------------------------------------------------

    def _signature(self) -> tuple[Any, ...]:
        """Size and mtime of every source file: unchanged signature, unchanged graph."""

        def stat(p: Path) -> tuple[str, int, int]:
            try:
                s = p.stat()
                return (str(p), s.st_size, s.st_mtime_ns)
            except OSError:
                return (str(p), -1, -1)

        return (
            stat(self.paths.memory_file),
            tuple(stat(p) for p in skill_files(self.paths.skills_dir)),
            tuple(stat(p) for p in session_files(self.paths.sessions_dir)),
        )

    def nodes(self) -> list[Node]:
        """All nodes of the home in load order (facts, skills, episodes), before the view."""
        facts = load_facts(self.paths.memory_file, self.keep_fact)
        skills = load_skills(self.paths.skills_dir, self.lang, self.blocked, start=len(facts))
        episodes = load_episodes(self.paths.sessions_dir, start=len(facts) + len(skills))
        return facts + skills + episodes

    def graph(self, at: dt.date | None = None) -> Graph:
        """The graph of the authorized active view at ``at`` (default: today), cached while
        the files are unchanged."""
        day = at or dt.date.today()
        sig = self._signature()
        if self._cache and self._cache[0] == sig and self._cache[1] == day:
            return self._cache[2]
        view = [n for n in self.nodes() if in_view(n, self.scopes, day)]
        graph = build_graph(view)
        self._cache = (sig, day, graph)
        return graph

    def _activate(self, query: str, at: dt.date | None) -> tuple[Graph, Activation]:
        graph = self.graph(at)
        return graph, MODELS[self.model].activate(graph, keywords(query))

    # -- reading ---------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        k: int = 5,
        at: dt.date | None = None,
        overrides: dict[str, str] | None = None,
    ) -> Recall:
        """Recall the memories relevant to ``query`` as a context block (SPEC §6.1).

        Takes the top ``k`` ranked rows; the best skill of the *full* ranking gets its body
        when it passes the gate (§6.1 step 2) and is among the top ``k``. Writes one trace
        line and updates usage counts, also when nothing is recalled; a failure there warns on
        stderr and never fails the recall.

        Args:
            query: the task text. k: rows to deliver (>= 0). at: business date (default today).
            overrides: reserved for request-scoped values (SPEC §7.5).

        Returns:
            A :class:`Recall` (``.text`` is "" when nothing was recalled).
        """
        graph, act = self._activate(query, at)
        spec = MODELS[self.model]
        ranked = [(round(a, 2), i) for a, i in rank(act, spec.thresh)]
        top = ranked[: max(k, 0)]
        skills = [(s, i) for s, i in ranked if graph.nodes[i].kind == "skill"]
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
        text = render_block([Pick(r.node, r.score, r.body) for r in rows], self.lang)
        write_trace(self.paths.trace_file, query, [r.as_trace() for r in rows])
        self._count(graph, rows)
        return Recall(text, rows)

    def _count(self, graph: Graph, rows: list[RecallRow]) -> None:
        """Usage: every fact/skill in view is seen once, every picked family member is hit."""
        present: dict[str, set[str]] = {s: set() for s in self.scopes}
        for n in graph.nodes:
            if n.kind != "episode":
                for m in n.family():
                    present.setdefault(m.scope, set()).add(m.key)
        hits: dict[str, set[str]] = {}
        for r in rows:
            if r.kind != "episode":
                for m in r.node.family():
                    hits.setdefault(m.scope, set()).add(m.key)
        try:
            self.usage_store.record(
                {s: frozenset(keys) for s, keys in present.items()}, hits, today()
            )
        except Exception as e:
            warn(f"cannot update usage counts ({e}); recall goes on")

    def explain(self, query: str, k: int = 8, at: dt.date | None = None) -> list[Row]:
        """The top ``k`` ranked rows with how each was reached (SPEC §6.2). No side effects.

        Returns:
            :class:`Row` objects; each unpacks as ``(score, kind, text)``.
        """
        graph, act = self._activate(query, at)
        out: list[Row] = []
        for a, i in rank(act, MODELS[self.model].thresh)[: max(k, 0)]:
            n = graph.nodes[i]
            levels = [act.seeds, *act.hops]
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

    def usage(self) -> dict[str, Stat]:
        """Usage counts of the authorized scopes: ``kind:text80`` → :class:`Stat` (SPEC §6.3)."""
        out: dict[str, Stat] = {}
        for s in self.scopes:
            out.update(self.usage_store.stats(s))
        return out

    def dead(
        self, min_seen: int = 8, stale_days: int = 90, at: dt.date | None = None
    ) -> list[Suggestion]:
        """Forgetting suggestions (SPEC §6.4): facts talos wrote itself (``src != user``).

        A fact qualifies when ``seen >= min_seen`` and it was never hit ("seen N times, never
        recalled") or its last hit is ``>= stale_days`` days ago. Merged members count too;
        hand-written facts and skills are never proposed. A fact with hits but no recorded
        hit day (imported ``[seen, hits]``) is not judged stale.
        """
        graph = self.graph(at)
        stats = {s: self.usage_store.stats(s) for s in self.scopes}
        t = labels(self.lang)
        now = today()
        out: list[Suggestion] = []
        seen_ids: set[tuple[str, int]] = set()
        for rep in graph.nodes:
            for n in rep.family():
                if n.kind != "fact" or n.src == "user" or (n.path, n.line) in seen_ids:
                    continue
                seen_ids.add((n.path, n.line))
                st = stats.get(n.scope, {}).get(n.key)
                if st is None or st.seen < min_seen:
                    continue
                if st.hits == 0:
                    reason = t["never"].format(seen=st.seen)
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

    def forget(self, suggestions: Iterable[Suggestion | Sequence[str]]) -> int:
        """Remove the memory.md lines the suggestions stand for (SPEC §6.5).

        Removes lines *not* written by the person (``src != user``) whose text equals a
        suggestion's text, in the suggestion's scope — never a hand-written line with the same
        text. Removed lines go to the audit log with the reason. A suggestion that matches no
        line (the file changed since) removes nothing and is reported on stderr.

        Args:
            suggestions: :class:`Suggestion` objects or ``(kind, text[, reason])`` tuples
                (scope ``global``); only ``fact`` suggestions remove lines.

        Returns:
            The number of lines removed.

        Raises:
            filelock.Timeout, OSError: the file could not be rewritten (it is then unchanged).
        """
        wanted: dict[tuple[str, str], str] = {}
        for s in suggestions:
            kind, text = s[0], s[1]
            if kind != "fact":
                continue
            scope = s.scope if isinstance(s, Suggestion) else "global"
            reason = s[2] if len(s) > 2 else "forget"
            wanted.setdefault((scope, text), reason)
        if not wanted:
            return 0
        matched: set[tuple[str, str]] = set()

        def doomed(p: Any) -> bool:
            key = (p.fields.get("scope", "global"), p.text)
            if p.src != "user" and key in wanted:
                matched.add(key)
                return True
            return False

        reasons = sorted(set(wanted.values()))
        removed = remove_fact_lines(self.paths, doomed, "forget", "; ".join(reasons))
        for scope, text in wanted.keys() - matched:
            warn(f"nothing to forget for {text!r} (scope {scope}): no such line written by talos")
        self._cache = None
        return len(removed)
