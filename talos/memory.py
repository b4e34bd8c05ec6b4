"""The Python API: :class:`Memory` (design §9.2). The CLI, compat layer and benches sit on it."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import importlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from talos import safety
from talos.errors import InputError
from talos.graph.graph import Graph
from talos.home import Paths, block_limits, dead_min_days, resolve_paths
from talos.index import Index
from talos.model import Node
from talos.ranking.activation import DEFAULT_MODEL, Activation, Model, model_named
from talos.ranking.rankers import Ranker, dense_asked, ranker_for
from talos.render import check_budget, labels
from talos.results import Decision, Recall, RecallRow, Row, Suggestion, WhyNot
from talos.selection import asked, delivery, expected, why_not
from talos.usage import forgetting
from talos.usage.counts import SqliteUsage, Stat, UsageStore, today
from talos.view.canon import canonical_name
from talos.view.decision import decide
from talos.view.kept import KeptState
from talos.view.scopes import check_scope
from talos.view.trust import DEFAULT_SCOPES, View
from talos.warn import audience
from talos.writer import checks as write_checks
from talos.writer.history import history

if TYPE_CHECKING:
    from talos.ranking import hybrid
    from talos.selection.expected import Expected
    from talos.selection.relevance import Gate
    from talos.writer.edits import Forgotten, RememberResult, Restored

__all__ = ["Decision", "Memory", "Recall", "RecallRow", "Row", "Suggestion", "WhyNot"]

_DEFAULT: Any = object()
#: The rows a recall delivers by default (``Memory.recall``'s ``k``; explain marks its cut).
RECALL_K = 5


_M = TypeVar("_M", bound=Callable[..., Any])


def _heard(method: _M) -> _M:
    """Run a :class:`Memory` method with its scopes as the warnings' audience: a warning about
    a record of another scope (an unreadable tag, a skill left out) is not printed
    (:mod:`talos.warn`, design §7.3, issue 13 item 8)."""

    @functools.wraps(method)
    def run(self: Memory, *args: Any, **kwargs: Any) -> Any:
        with audience(self.scopes):
            return method(self, *args, **kwargs)

    return cast(_M, run)


class _OnUse:
    """A module imported when one of its names is first read (a recall never writes memory.md,
    so it never imports :mod:`talos.writer.edits`: ``tests/test_import_cost.py``)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


if TYPE_CHECKING:
    from talos.writer import edits as writer
else:
    writer = _OnUse("talos.writer.edits")


class Memory:
    """One person's memory: recall, explain, usage, dead and forget over a home (design §9.2).

    Args:
        home: the home folder (``None``: ``$TALOS_HOME``, else the platform data dir, §2).
        memory_file, skills_dir, sessions_dir, state_dir, trace_file: override single paths
            (relative to the home; default from ``talos.toml`` or §2); ``sessions_dir`` may be
            a list of folders, read in its order.
        scopes: authorized scopes of every request (design §7.3), default ``("global",)``; each
            read in its canonical spelling (``ＧＬＯＢＡＬ`` is ``global``, talos.view.scopes).
        keep_fact: filter on fact texts; default :func:`talos.safety.keep_fact` (§8.2);
            ``None`` keeps every line.
        blocked: skill file paths excluded on every route (in addition to the safety scan).
        lang: ``en`` or ``zh`` labels (default: ``lang`` in talos.toml, else ``en``).
        model: ranking model name in :data:`talos.ranking.activation.MODELS` (default: ``model`` in
            talos.toml, else ``evidence``; ``classic`` reproduces the reference rankings),
            ranked by its ranker (:func:`talos.ranking.rankers.ranker_for`), chosen once here.
        usage: where usage counts live (default: SQLite in the state folder).
        index: keep a persistent index in the state folder so recall reads nothing it has
            read before (design §11); ``False`` reads every file on every call.
        dense: the dense leg (:mod:`talos.ranking.hybrid`) fused with the ``evidence`` ranking:
            ``None`` as ``dense`` in talos.toml (default off), ``True`` / ``False``, or a
            :class:`talos.ranking.hybrid.Leg`. Where it cannot run: one warning, a lexical recall.

    Raises:
        InputError: ``talos.toml`` is invalid, or a scope is no scope name. ValueError:
        unknown ``lang``, or ``model`` unknown or retired
        (:data:`talos.ranking.activation.RETIRED`).
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
        # one scope rule on every route (talos.view.scopes): ｇlobal is global, "a b" is refused
        folded = tuple(check_scope(s, "scope", "give a list of scopes") for s in scopes)
        self._kept = KeptState(
            self.paths,
            folded,
            safety.keep_fact if keep_fact is _DEFAULT else keep_fact,
            {str(Path(p).resolve()) for p in (blocked or ())},
            lang,
            index,
            headings=self.model != "classic",  # classic: a heading is a fact (design §3.1)
            folders=self.model != "classic",  # classic: top-level skills only (design §3.2)
        )
        self.usage_store: UsageStore = usage or SqliteUsage(
            self.paths.usage_db, import_hits=self.paths.hits_file, home=self.paths.home
        )
        #: Whether recall and explain fuse the dense leg by default (per call: ``dense=``).
        self.dense: bool = dense_asked(self.paths) if dense is None else dense is not False
        #: How this Memory ranks (:mod:`talos.ranking.rankers`), chosen once with its model.
        self._ranker: Ranker = ranker_for(ranking, self._kept, self.paths, dense)
        self._headings = delivery.Headings(self._kept)
        budget, cap = block_limits(self.paths)
        #: A recall's default budget in characters and cap on rows (``budget`` and ``k`` of
        #: talos.toml, design §6.1 rule 6); ``classic`` keeps the reference's 5 rows, unbounded.
        self.budget: int | None = None if self.model == "classic" else budget
        self.k: int = RECALL_K if self.model == "classic" else cap

    @property
    def scopes(self) -> tuple[str, ...]:
        """The authorized scopes, in order (design §7.3); fixed for the life of the object."""
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
        """Whether a memory.md heading labels the facts beneath it (not ``classic``, §3.1)."""
        return self._kept.headings

    @property
    def index(self) -> Index | None:
        """The persistent index, or ``None`` without it or after it failed (design §11)."""
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
        """The authorized active view at ``at`` (default today) and its graph (design §7.3):
        the view's ``nodes`` are its records; episodes join the graph after them when
        ``global`` is authorized (:meth:`talos.view.kept.KeptState.view`). Cached while the files,
        the date and the overrides are unchanged."""
        return self._kept.view(at, overrides)

    @_heard
    def prepare(self, at: dt.date | None = None) -> None:
        """Build and store what a recall at ``at`` (default today) reads, so the next recall
        process starts warm (``talos index``, design §11): the episode and records blocks of the
        default view (else the first recall pays for them: 1.2 s and 183 MB at 30,000
        sessions, against 0.45 s and 88 MB warm) and the ranker's state
        (:meth:`talos.ranking.rankers.Ranker.prepare`). No usage is counted, no trace written."""
        self._ranker.prepare(self._kept.recall_graph(at, None), self.dense)

    @_heard
    def settle(self) -> None:
        """Build this object's own default view and its ranking state while a long-lived
        process is idle (the hook server), so an edit or a new session is patched in: with the
        stored records alone the first edit built the whole view again (2.3–2.8 s at
        30,000–100,000 sessions, past the hook's deadline). No usage or trace."""
        self._ranker.settle(self.view()[1])

    @_heard
    def graph(self, at: dt.date | None = None) -> Graph:
        """The graph of the authorized active view at ``at`` (default: today)."""
        return self.view(at)[1]

    @property
    def ranking(self) -> Model:
        """The ranking model in use (:data:`talos.ranking.activation.MODELS`), with its
        constants."""
        return self._ranker.model

    @_heard
    def activation(
        self, query: str, at: dt.date | None = None, overrides: Mapping[str, str] | None = None
    ) -> tuple[Graph, Activation]:
        """The graph of the view at ``at`` and the model's activation of ``query`` over it, as
        :func:`talos.ranking.activation.rank` ranks it with ``self.ranking.thresh``
        (:meth:`talos.ranking.rankers.Ranker.activation`); no side effects."""
        graph = self.view(at, overrides)[1]
        return graph, self._ranker.activation(graph, query)

    @_heard
    def embed(self, progress: Callable[[int, int], None] | None = None) -> int | None:
        """Embed the records and episodes without a vector yet (``talos index`` with the dense
        leg on; all after a model change): how many, or None when the leg is off or cannot
        run (warned). ``progress(done, total)`` after each batch of 32."""
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
        automatic: bool = False,
    ) -> Recall:
        """Recall the memories relevant to ``query`` as a context block (design §6.1).

        The rows the ranker picks (:meth:`talos.ranking.rankers.Ranker.select`), in rank order,
        up to ``k`` and within ``budget`` (:func:`talos.selection.asked.recall`). Writes one
        trace line and updates usage counts, also when nothing is recalled (a failure there
        only warns). Asked (the default), an ask sharing a content word with a record is never
        answered with nothing: without the query gate's evidence the heading says the rows are
        weak matches (:attr:`Recall.weak`). ``automatic`` (the hooks, SessionStart): the query
        gate empties the block instead (design §6.1 rule 5).

        Args:
            query: the task text. k: most rows (>= 0; ``None``: :attr:`k`, talos.toml's
                ``k``, 30 by default; 5 with ``classic``). at: business date (default today).
            overrides: request-scoped values ``{key: value}`` (design §7.5) replacing the
                records of that key for this call only, marked in the block, never written.
            budget: most ``unit`` (``chars``, ``utf16``, ``bytes``) the block may take (design
                §6.1 rule 6, :func:`talos.selection.delivery.deliver`); ``None``: :attr:`budget`
                (talos.toml's ``budget``, 2,000 by default; no bound with ``classic``).
            dense: fuse the dense leg for this call (``None``: :attr:`dense`); the rows are
                then cut from the fused ranking, their score the fused one.

        Returns:
            A :class:`Recall` (``.text`` is "" when nothing was recalled).

        Raises:
            InputError: ``budget`` not a whole number or below :data:`talos.render.MIN_BUDGET`,
                an unknown ``unit``, ``k`` not a whole number 0 or more.
        """
        check_budget(budget, unit)  # a bad budget or k fails before anything is written
        delivery.check_rows(k)
        return asked.recall(
            self, query, self.k if k is None else k, at, overrides,
            self.budget if budget is None else budget, unit,
            self.dense if dense is None else dense, automatic,
        )  # fmt: skip

    @_heard
    def gate(
        self, query: str, at: dt.date | None = None, overrides: Mapping[str, str] | None = None
    ) -> Gate | None:
        """Where the query gate stands for ``query`` (:class:`talos.selection.relevance.Gate`:
        the best row's evidence against the floor, so whether the hooks inject a block and an
        asked one is weak); ``None`` for ``classic``, which has no gate. No side effects."""
        return self._ranker.gate(self.view(at, overrides)[1], query)

    def heading(self, node: Node, graph: Graph | None = None) -> str:
        """The markdown heading ``node`` is shown under in the view whose graph is ``graph``
        ("" for none; design §3.1, :meth:`talos.selection.delivery.Headings.of`)."""
        return self._headings.of(node, graph)

    @_heard
    def explain(
        self,
        query: str,
        k: int = 8,
        at: dt.date | None = None,
        overrides: Mapping[str, str] | None = None,
        dense: bool | None = None,
    ) -> list[Row]:
        """The top ``k`` ranked rows with how each was reached (design §6.2), as :class:`Row`
        objects (each unpacks as ``(score, kind, text)``); no side effects. ``dense``: fuse the
        dense leg (``None``: :attr:`dense`); each row then shows both legs (:attr:`Row.legs`)."""
        asked = self._ranker.start(query, self.dense if dense is None else dense)
        graph = self.view(at, overrides)[1]
        rows = self._ranker.explain(graph, asked, k, self.k)
        for r in rows:
            r.heading = self.heading(r.node, graph)
        return rows

    @_heard
    def usage(self) -> dict[str, Stat]:
        """Usage counts of the authorized scopes: ``kind:text80`` → :class:`Stat` (design §6.3)."""
        return {key: st for s in self.scopes for key, st in self.usage_store.stats(s).items()}

    @_heard
    def dead(
        self,
        min_seen: int = 8,
        stale_days: int = 90,
        at: dt.date | None = None,
        min_days: int | None = None,
    ) -> list[Suggestion]:
        """Forgetting suggestions (design §6.4, :func:`talos.usage.forgetting.suggestions`): what
        talos or an agent wrote (``src != user``), seen ``min_seen`` times and never recalled or
        not for ``stale_days`` days, once counted for ``min_days`` days (``None``: talos.toml's
        ``dead_min_days``, else :data:`talos.home.DEAD_MIN_DAYS`)."""
        span = dead_min_days(self.paths) if min_days is None else min_days
        stats = {s: self.usage_store.stats(s) for s in self.scopes}
        t = labels(self.lang)
        return forgetting.suggestions(self.graph(at), stats, t, min_seen, stale_days, span, today())

    # -- writing ---------------------------------------------------------------------------

    @_heard
    def forget(self, suggestions: Iterable[Suggestion | Sequence[str]]) -> int:
        """Remove the memory.md lines the suggestions stand for (design §6.5); returns how many
        records were forgotten (lines and skill files; see :meth:`forget_records`)."""
        return len(self.forget_records(suggestions))

    @_heard
    def forget_records(self, suggestions: Iterable[Suggestion | Sequence[str]]) -> list[Forgotten]:
        """Remove the memory.md lines (only those talos or an agent wrote) and move the skill
        files the suggestions stand for to the trash (design §6.5); returns what was forgotten,
        with the ids ``talos restore`` takes (:func:`talos.usage.forgetting.forget`)."""
        done = forgetting.forget(self.paths, self.scopes, self._kept.folders, suggestions)
        self._kept.wrote()
        return done

    # -- trust (design §7) -------------------------------------------------------------------

    @_heard
    def get(
        self, key: str, at: dt.date | None = None, overrides: Mapping[str, str] | None = None
    ) -> Decision:
        """The single usable value of ``key`` at ``at`` — a decision to branch on (§7.7):
        ``ok``, ``unknown``, ``expired``, ``not-yet-valid`` or ``conflict``
        (:func:`talos.view.decision.decide`). ``key`` is read in its canonical spelling
        (:func:`talos.view.canon.canonical_name`: ``Editor`` is ``editor``)."""
        return decide(self.view(at, overrides)[0], canonical_name(key), self.scopes)

    @_heard
    def conflicts(self, at: dt.date | None = None) -> list[tuple[str, str, list[Node]]]:
        """Contested keys in view: ``[(scope, key, competing records), ...]`` (design §7.4)."""
        return [(scope, key, list(rs)) for (scope, key), rs in self.view(at)[0].conflicts.items()]

    @_heard
    def why_not(
        self,
        query: str,
        k: int = 8,
        at: dt.date | None = None,
        overrides: Mapping[str, str] | None = None,
    ) -> list[WhyNot]:
        """In-scope records that match ``query`` (its keywords, or with ``evidence`` its
        analyzer terms) but are not among the top ``k`` rows, each with a typed reason (design
        §6.2 ``--why-not``, :func:`talos.selection.why_not.reasons`): ``below-floor`` ("evidence
        0.60"), ``below-threshold``, ``beyond-k``, ``shadowed``, ``conflict``, ``superseded``,
        ``deleted``, ``expired``, ``not-yet-valid``, ``overridden``, ``unsafe``. With the dense
        leg on, each row carries its :attr:`WhyNot.legs` and the rule that cut it in words."""
        view, graph = self.view(at, overrides)
        ranked = self._ranker.left_out(graph, query, k, self.k, self.dense)
        file, shares = self.paths.memory_file, self._ranker.shares(query)
        return why_not.reasons(
            ranked, shares, view, file, self.scopes, self.keep_fact, self.headings
        )

    def expected(self, query: str, text: str, k: int = 8, **when: Any) -> list[Expected]:
        """Where the records ``text`` names stand for ``query`` (:func:`expected.where`)."""
        return expected.where(self, query, text, k, **when)

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
        """Append a tagged fact, superseding per design §7.5 (:func:`talos.writer.edits.remember`),
        in
        ``scope`` (default: the first authorized scope). Raises :class:`InputError` for bad
        input, an unauthorized scope, a text the fact filter keeps out of every route or a
        credential in a field (:func:`talos.writer.checks.check_remember`)."""
        fields = {"key": key, "ref": ref, "by": by}
        scope = write_checks.check_remember(text, scope, self.scopes, self.keep_fact, fields)
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
        """Settle a conflict (design §7.4): keep record ``keep``; the other active records of
        ``key`` in its scope become superseded (removed from memory.md, audited, restorable).
        Returns their ids. Raises :class:`InputError` when ``keep`` is not an active in-scope
        record of ``key`` in the view (:func:`talos.writer.checks.check_keep`) or no longer is
        under the lock on memory.md (:func:`talos.writer.edits.resolve`)."""
        key = canonical_name(key)
        view, _graph = self.view(at)
        write_checks.check_keep(view, key, keep)
        removed = writer.resolve(self.paths, key, keep, self.scopes, at or dt.date.today())
        self._kept.wrote()
        return [r.id for r in removed]

    @_heard
    def revoke(self, ref: str) -> list[str]:
        """Retract every record derived from source ``ref`` in the authorized scopes (§7.6):
        removed from memory.md, audited as ``revoke``, restorable. Returns their ids. Raises
        :class:`InputError` when ``ref`` is empty or no such record is there."""
        if not ref:
            raise InputError("revoke needs a non-empty --ref")

        def derived(p: Any, _raw: str) -> bool:
            return p.fields.get("ref") == ref and p.fields.get("scope", "global") in self.scopes

        removed = writer.remove_fact_lines(self.paths, derived, "revoke", f"source {ref} revoked")
        self._kept.wrote()
        write_checks.check_revoked(removed, self.paths.memory_file, ref, self.scopes)
        return [r.id for r in removed]

    @_heard
    def restore(self, rid: str) -> str:
        """Bring back a removed record of the authorized scopes by id from the audit log
        (design §7.6); returns the line (see :meth:`restore_record`)."""
        return self.restore_record(rid).line

    @_heard
    def restore_record(self, rid: str) -> Restored:
        """:meth:`restore`, telling also which records the restored one superseded: undoing
        a supersede makes it current again (:func:`talos.writer.edits.restore`, issue 12.6).
        Another scope's id reads as unknown (§7.7)."""
        done = writer.restore(self.paths, rid, scopes=self.scopes)
        self._kept.wrote()
        return done

    @_heard
    def history(self, target: str | None = None) -> list[dict[str, Any]]:
        """Audit entries (committed writes) of the authorized scopes, oldest first, their
        credentials masked; only those whose record id or key is ``target`` when given (design
        §7.6, :func:`talos.writer.history.history`)."""
        return history(self.paths, self.scopes, target)
