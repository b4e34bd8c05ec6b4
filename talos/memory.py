"""The Python API: :class:`Memory` (SPEC §9.2). The CLI, compat layer and benches sit on it."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from talos import forgetting, safety, why_not, write_checks
from talos.activation import DEFAULT_MODEL, Activation, Model, model_named
from talos.canon import canonical_name
from talos.errors import InputError
from talos.graph.graph import Graph
from talos.home import Paths, block_limits, dead_min_days, resolve_paths
from talos.index import Index
from talos.kept import KeptState
from talos.model import Node
from talos.rankers import Ranker, dense_asked, is_leg, ranker_for
from talos.render import Pick, check_budget, fit_block, labels
from talos.results import Decision, Recall, RecallRow, Row, Suggestion, WhyNot
from talos.scopes import check_scope
from talos.sources.facts import heading_label
from talos.trust import DEFAULT_SCOPES, View, stated_value
from talos.usage import SqliteUsage, Stat, UsageStore, count_recall, today, write_trace
from talos.warn import audience

if TYPE_CHECKING:
    from talos import hybrid
    from talos.writer import Forgotten, RememberResult, Restored

__all__ = ["Decision", "Memory", "Recall", "RecallRow", "Row", "Suggestion", "WhyNot"]

_DEFAULT: Any = object()
#: The rows a recall delivers by default (``Memory.recall``'s ``k``; explain marks its cut).
RECALL_K = 5


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
            ``sessions_dir`` may be a list of folders, read in its order (issue 16.4).
        scopes: authorized scopes of every request (SPEC §7.3), default ``("global",)``; each
            read in its canonical spelling (``ＧＬＯＢＡＬ`` is ``global``, talos.scopes).
        keep_fact: filter on fact texts; default :func:`talos.safety.keep_fact` (§8.2);
            ``None`` keeps every line.
        blocked: skill file paths excluded on every route (in addition to the safety scan).
        lang: ``en`` or ``zh`` labels (default: ``lang`` in talos.toml, else ``en``).
        model: ranking model name in :data:`talos.activation.MODELS` (default: ``model`` in
            talos.toml, else :data:`talos.activation.DEFAULT_MODEL`, chosen on the test split
            in bench/README.md; ``classic`` reproduces the reference rankings exactly).
        usage: where usage counts live (default: SQLite in the state folder).
        index: keep a persistent index in the state folder so recall reads nothing it has
            read before (SPEC §11); ``False`` reads every file on every call.
        dense: the dense leg (issue 17, :mod:`talos.hybrid`) on the ``evidence`` model:
            ``None`` as ``dense`` in talos.toml (default off), ``True`` / ``False``, or a
            :class:`talos.hybrid.Leg` (its embedder and vector cache). Asked for where it
            cannot run: one warning naming the install command, and the lexical recall.

    Raises:
        InputError: ``talos.toml`` is invalid, or a scope is no scope name. ValueError:
        unknown ``lang``, or ``model`` unknown or retired (:data:`talos.activation.RETIRED`).
    """

    def __init__(
        self,
        home: str | os.PathLike[str] | None = None,
        *,
        memory_file: str | os.PathLike[str] | None = None,
        skills_dir: str | os.PathLike[str] | None = None,
        sessions_dir: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
        state_dir: str | os.PathLike[str] | None = None,
        trace_file: str | os.PathLike[str] | None = None,
        scopes: Sequence[str] = DEFAULT_SCOPES,
        keep_fact: Callable[[str], bool] | None = _DEFAULT,
        blocked: Iterable[str | os.PathLike[str]] | None = None,
        lang: str | None = None,
        model: str | None = None,
        usage: UsageStore | None = None,
        index: bool = True,
        dense: bool | hybrid.Leg | None = None,
    ) -> None:
        self.paths: Paths = resolve_paths(
            home,
            memory_file=memory_file,
            skills_dir=skills_dir,
            sessions_dir=sessions_dir,
            state_dir=state_dir,
            trace_file=trace_file,
        )
        lang = lang or str(self.paths.config.get("lang", "en"))
        labels(lang)
        self.model = model or str(self.paths.config.get("model", DEFAULT_MODEL))
        ranking = model_named(self.model)  # before anything is opened
        # one scope rule on every route (talos.scopes): ｇlobal is global, "a b" is refused
        folded = tuple(check_scope(s, "scope", "give a list of scopes") for s in scopes)
        self._kept = KeptState(
            self.paths,
            folded,
            safety.keep_fact if keep_fact is _DEFAULT else keep_fact,
            {str(Path(p).resolve()) for p in (blocked or ())},
            lang,
            index,
            headings=self.model != "classic",  # classic: a heading is a fact (SPEC §3.1)
            folders=self.model != "classic",  # classic: top-level skills only (SPEC §3.2)
        )
        self.usage_store: UsageStore = usage or SqliteUsage(
            self.paths.usage_db, import_hits=self.paths.hits_file
        )
        #: Whether recall and explain fuse the dense leg by default (per call: ``dense=``).
        self.dense: bool = dense_asked(self.paths) if dense is None else dense is not False
        #: How this Memory ranks (:mod:`talos.rankers`), chosen once with its model.
        self._ranker: Ranker = ranker_for(
            ranking, self._kept, self.paths, dense if is_leg(dense) else None
        )
        self._titled: tuple[Graph, str | None] | None = None  # Memory._title's, per graph
        budget, cap = block_limits(self.paths)
        #: A recall's default budget in characters and cap on rows (``budget`` and ``k`` of
        #: talos.toml, SPEC §6.1 rule 6); ``classic`` keeps the reference's 5 rows, unbounded.
        self.budget: int | None = None if self.model == "classic" else budget
        self.k: int = RECALL_K if self.model == "classic" else cap

    @property
    def scopes(self) -> tuple[str, ...]:
        """The authorized scopes, in order (SPEC §7.3); fixed for the life of the object."""
        return self._kept.scopes

    @property
    def keep_fact(self) -> Callable[[str], bool] | None:
        """The fact filter (default :func:`talos.safety.keep_fact`); fixed for the object."""
        return self._kept.keep_fact

    @property
    def blocked(self) -> set[str]:
        """Resolved paths of skills never loaded; fixed for the life of the object."""
        return self._kept.blocked

    @property
    def lang(self) -> str:
        """The language of labels and skill bodies; fixed for the life of the object."""
        return self._kept.lang

    @property
    def headings(self) -> bool:
        """Whether a markdown heading of memory.md labels the facts beneath it and is no record
        (every model but ``classic``, SPEC §3.1); fixed for the life of the object."""
        return self._kept.headings

    @property
    def index(self) -> Index | None:
        """The persistent index, or ``None`` without it or after it failed (SPEC §11)."""
        return self._kept.index

    def close(self) -> None:
        """Close the index and usage connections now (they reopen on demand). A sqlite3
        connection is otherwise freed only by the cycle collector, holding its file open."""
        self._kept.close()
        self._ranker.close()
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

    def nodes(self) -> list[Node]:
        """All nodes of the home in load order (facts, skills, episodes), before the view."""
        return self._kept.nodes()

    @_heard
    def view(
        self, at: dt.date | None = None, overrides: Mapping[str, str] | None = None
    ) -> tuple[View, Graph]:
        """The authorized active view at ``at`` (default today) and its graph (SPEC §7.3).

        The view's ``nodes`` are its records (facts, skills, conflict and override lines);
        episodes carry no provenance tag (scope ``global``, always valid), so they join the
        graph as the block :mod:`talos.graph.episodes` merged once, after the records, when
        ``global`` is an authorized scope. Cached while the files, the date and the overrides are
        unchanged.
        """
        return self._kept.view(at, overrides)

    @_heard
    def prepare(self, at: dt.date | None = None) -> None:
        """Build and store what a recall at ``at`` (default today) reads, so the next recall
        process starts warm: the episode block and the records block of the default view
        (SPEC §11). No usage is counted and no trace is written. ``talos index`` calls it;
        without it the first recall after a build pays for both (1.2 s and 183 MB at
        30,000 sessions, against 0.45 s and 88 MB warm). With a model over terms
        (``evidence``), also the analyzed term rows of the graph's texts
        (:mod:`talos.termrows`); with the dense leg on, it also loads the model and the
        graph's vector matrix (the hook server's warm-up), embedding at most
        :data:`talos.hybrid.INLINE` missing texts."""
        self._ranker.prepare(self._kept.recall_graph(at, None), self.dense)

    @_heard
    def settle(self) -> None:
        """Build this object's own default view and its ranking state, when a long-lived
        process is idle (the hook server, :func:`talos.hooks.server.serve`). A recall that
        read the stored records (:meth:`prepare`) has no view of its own to patch: the first
        edit of memory.md then built the whole view again (2.3–2.8 s at 30,000–100,000
        sessions, past the hook's deadline: issue 24). After this an edit or a new session is
        patched in. No usage is counted and no trace is written."""
        self._ranker.settle(self.view()[1])

    @_heard
    def graph(self, at: dt.date | None = None) -> Graph:
        """The graph of the authorized active view at ``at`` (default: today)."""
        return self.view(at)[1]

    @property
    def ranking(self) -> Model:
        """The ranking model in use (:data:`talos.activation.MODELS`), with its constants."""
        return self._ranker.model

    @_heard
    def activation(
        self, query: str, at: dt.date | None = None, overrides: Mapping[str, str] | None = None
    ) -> tuple[Graph, Activation]:
        """The model's activation of ``query`` over the graph of the view at ``at`` (and that
        graph), as :func:`talos.activation.rank` ranks it with ``self.ranking.thresh``. A
        :data:`~talos.activation.TERMS` model's is its seeds and final levels
        (:class:`~talos.activation.DenseActivation`); no side effects."""
        graph = self.view(at, overrides)[1]
        return graph, self._ranker.activation(graph, query)

    @_heard
    def embed(self, progress: Callable[[int, int], None] | None = None) -> int | None:
        """Embed every record and episode of the home that has no vector yet (``talos
        index`` with the dense leg on): only new or changed texts, all of them after a model
        change. Returns how many were embedded, or None when the leg is off or cannot run
        (warned). ``progress(done, total)`` after each batch of 32."""
        return self._ranker.embed(self.nodes, progress, self.dense)

    # -- reading ---------------------------------------------------------------------------

    @_heard
    def recall(
        self,
        query: str,
        k: int | None = None,
        at: dt.date | None = None,
        overrides: dict[str, str] | None = None,
        budget: int | None = None,
        unit: str = "chars",
        dense: bool | None = None,
    ) -> Recall:
        """Recall the memories relevant to ``query`` as a context block (SPEC §6.1).

        The ranked rows that are evidence for the query (the relevance floor, per row), in
        rank order, up to ``k`` and within ``budget``; the best skill of the *full* ranking
        gets its body when it passes the gate (§6.1 step 2) and is among them. Writes one
        trace line and updates usage counts, also when nothing is recalled; a failure there
        warns on stderr and never fails the recall.

        Args:
            query: the task text. k: most rows (>= 0; ``None``: :attr:`k`, talos.toml's
                ``k``, 30 by default; 5 with ``classic``). at: business date (default today).
            overrides: request-scoped values ``{key: value}`` (SPEC §7.5): they replace the
                records of that key for this call only, are marked as overrides in the block,
                and are never written or counted.
            budget: most ``unit`` (``chars``, ``utf16``, ``bytes``) the block may take (SPEC
                §6.1 rule 6, :func:`talos.render.fit_block`); ``None``: :attr:`budget`
                (talos.toml's ``budget``, 2,000 by default; no bound with ``classic``). The
                trace and usage count only the rows delivered within it.
            dense: fuse the dense leg for this call (``None``: :attr:`dense`); the rows are
                then cut from the fused ranking (:func:`talos.hybrid.select`), their score the
                fused one.

        Returns:
            A :class:`Recall` (``.text`` is "" when nothing was recalled).

        Raises:
            InputError: ``budget`` not a whole number or below
                :data:`talos.render.MIN_BUDGET`, an unknown ``unit``, ``k`` not a whole
                number 0 or more.
        """
        check_budget(budget, unit)  # a bad budget fails before anything is written
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 0):
            # the CLI, MCP and talos.toml refuse it; -1 gave an empty block ("nothing relevant")
            raise InputError(f"k must be a whole number of rows, 0 or more, not {k!r}")
        k = self.k if k is None else k
        budget = self.budget if budget is None else budget
        # the query's vector first: its embedding overlaps the look at the files too
        asked = self._ranker.start(query, self.dense if dense is None else dense)
        graph = self._kept.recall_graph(at, overrides)
        picks, legs = self._ranker.select(graph, asked, k)
        rows = [
            RecallRow(
                graph.nodes[i].key,
                graph.nodes[i].kind,
                graph.nodes[i].text,
                s,
                body,
                graph.nodes[i],
                self.heading(graph.nodes[i], graph),
                legs.get(i),
            )
            for s, i, body in picks
        ]
        reference = self.model == "classic"  # the reference's rows (SPEC §6.1 rule 3)
        text, kept = fit_block(
            [Pick(r.node, r.score, r.body, r.heading, reference) for r in rows],
            self.lang,
            budget,
            unit,
        )
        # only delivered rows are hits (SPEC §6.3)
        delivered = {id(p.node): p for p in kept}  # a prefix of the rows, or one of them
        rows = [
            dataclasses.replace(r, body=delivered[id(r.node)].body)
            for r in rows
            if id(r.node) in delivered
        ]
        write_trace(self.paths.trace_file, query, [r.as_trace() for r in rows], self.scopes)
        self._count(graph, rows)
        return Recall(text, rows)

    def heading(self, node: Node, graph: Graph | None = None) -> str:
        """The markdown heading ``node`` is shown under: a fact's nearest heading as stored
        (SPEC §3.1, :func:`talos.sources.facts.heading_label`); "" for none, and always with
        ``classic``, whose headings are facts. ``graph``: the view ``node`` is in; the file's
        title — its only level-1 heading, above every fact of the view — is shown on none:
        it tells no fact from another (the example home's block said ``(Memory)`` on every
        row). A lone ``## Billing`` section still labels its facts."""
        if not self.headings:
            return ""
        label = heading_label(node)
        if label and graph is not None and node.headings == (self._title(graph),):
            return ""
        return label

    def _title(self, graph: Graph) -> str | None:
        """The heading every fact of ``graph`` stands under first, when it is memory.md's only
        level-1 heading (kept per graph object)."""
        if self._titled is not None and self._titled[0] is graph:
            return self._titled[1]
        title = None
        if self._kept.top_headings() == 1:
            facts = (n for n in graph.nodes[: graph.records] if n.kind == "fact")
            firsts = {n.headings[0] if n.headings else None for n in facts}
            title = next(iter(firsts)) if len(firsts) == 1 else None
        self._titled = (graph, title)
        return title

    def _count(self, graph: Graph, rows: list[RecallRow]) -> None:
        """Usage: every fact/skill in view is seen once, every picked family member is hit."""
        count_recall(self.usage_store, self._kept.present(graph), [r.node for r in rows])

    @_heard
    def explain(
        self,
        query: str,
        k: int = 8,
        at: dt.date | None = None,
        overrides: Mapping[str, str] | None = None,
        dense: bool | None = None,
    ) -> list[Row]:
        """The top ``k`` ranked rows with how each was reached (SPEC §6.2). No side effects.
        ``dense``: fuse the dense leg (``None``: :attr:`dense`); each row then shows both
        legs' rank and score (:attr:`Row.legs`).

        Returns:
            :class:`Row` objects; each unpacks as ``(score, kind, text)``.
        """
        asked = self._ranker.start(query, self.dense if dense is None else dense)
        graph = self.view(at, overrides)[1]
        rows = self._ranker.explain(graph, asked, k, self.k)
        for r in rows:
            r.heading = self.heading(r.node, graph)
        return rows

    @_heard
    def usage(self) -> dict[str, Stat]:
        """Usage counts of the authorized scopes: ``kind:text80`` → :class:`Stat` (SPEC §6.3)."""
        out: dict[str, Stat] = {}
        for s in self.scopes:
            out.update(self.usage_store.stats(s))
        return out

    @_heard
    def dead(
        self,
        min_seen: int = 8,
        stale_days: int = 90,
        at: dt.date | None = None,
        min_days: int | None = None,
    ) -> list[Suggestion]:
        """Forgetting suggestions (SPEC §6.4): memories whose tag says talos or an agent
        wrote them (``src != user``), seen at least ``min_seen`` times and never recalled or
        not for ``stale_days`` days, once counted for ``min_days`` days (``None``:
        ``dead_min_days`` of talos.toml, else :data:`talos.home.DEAD_MIN_DAYS`). The policy:
        :func:`talos.forgetting.suggestions`."""
        span = dead_min_days(self.paths) if min_days is None else min_days
        stats = {s: self.usage_store.stats(s) for s in self.scopes}
        words = labels(self.lang)
        return forgetting.suggestions(
            self.graph(at), stats, words, min_seen, stale_days, span, today()
        )

    # -- writing ---------------------------------------------------------------------------

    @_heard
    def forget(self, suggestions: Iterable[Suggestion | Sequence[str]]) -> int:
        """Remove the memory.md lines the suggestions stand for (SPEC §6.5); returns how many
        records were forgotten (lines and skill files; see :meth:`forget_records`)."""
        return len(self.forget_records(suggestions))

    @_heard
    def forget_records(self, suggestions: Iterable[Suggestion | Sequence[str]]) -> list[Forgotten]:
        """Remove the memory.md lines the suggestions stand for (SPEC §6.5) — only lines
        talos or an agent wrote — and move suggested skill files to the trash; returns what
        was forgotten, with the ids ``talos restore`` takes (:func:`talos.forgetting.forget`:
        the rules, the arguments, the errors)."""
        done = forgetting.forget(self.paths, self.scopes, self._kept.folders, suggestions)
        self._kept.wrote()
        return done

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
        A value from a ``reflect`` record has ``inferred=True``. ``key`` is read in its
        canonical spelling (:func:`talos.canon.canonical_name`: ``Editor`` is ``editor``).
        """
        key = canonical_name(key)
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
        ``k`` rows, each with a typed reason (SPEC §6.2 ``--why-not``): ``below-floor`` (a
        :data:`~talos.activation.TERMS` model's relevance floor cut it: "evidence 0.60"; such a
        model matches by the analyzer's terms, and names only rows holding one),
        ``below-threshold``, ``beyond-k``, ``shadowed``, ``conflict``, ``superseded``,
        ``deleted``, ``expired``, ``not-yet-valid``, ``overridden``, ``unsafe``. Records of other
        scopes never appear.

        With the dense leg on (issue 17), the rows are the fused ranking's: a row left out of
        its first 5 is ``below-floor`` also when no query term reaches it (the dense leg
        ranked it there), a row beyond them ``beyond-k`` when it holds a term; each carries
        :attr:`WhyNot.legs` (explain's, with ``cut_by``: ``floor`` and ``gate`` or
        ``margin``, or ``k``), and ``detail`` says it in words: "the lexical floor (evidence
        0.41) and the dense gate (cosine 0.801 < 0.850)".
        """
        view, graph = self.view(at, overrides)
        shares = self._ranker.shares(query)
        ranked = self._ranker.left_out(graph, query, k, self.k, self.dense)
        return why_not.reasons(
            ranked, shares, view, self.paths.memory_file, self.scopes, self.keep_fact, self.headings
        )

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
        fields = {"key": key, "ref": ref, "by": by}
        scope = write_checks.check_remember(text, scope, self.scopes, self.keep_fact, fields)
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
        self._kept.wrote()
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
        key = canonical_name(key)
        view, _graph = self.view(at)
        write_checks.check_keep(view, key, keep)
        from talos import writer  # imported on use: recall never writes memory.md

        removed = writer.resolve(self.paths, key, keep, self.scopes, at or dt.date.today())
        self._kept.wrote()
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
        self._kept.wrote()
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
        self._kept.wrote()
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
            name = canonical_name(target) or None
            rows = [
                e
                for e in rows
                if target == e.get("id") or name == canonical_name(str(e.get("key") or ""))
            ]
        return rows


def _masked_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """The text fields of an audit entry with credentials masked (what history shows)."""
    return {
        k: safety.mask_secrets(v)
        for k in ("before", "after", "reason")
        if isinstance(v := entry.get(k), str)
    }
