"""The context a hook delivers: recall for a prompt, a short block when a session starts.

This is the heavy side of the hook (it imports :class:`talos.Memory`): the resident server
(:mod:`talos.hooks.server`) runs it, and the hook client runs it in its own process when no
server can be reached (:mod:`talos.hooks.client`).

* **Prompt** (``UserPromptSubmit``, ``BeforeAgent``): the prompt is the query of
  :meth:`Memory.recall` (``k`` rows, ``[hooks] k``) in the event's scopes
  (:func:`talos.hooks.scope.scopes_for`), as *automatic* injection: nobody asked, so the
  query gate rules (design §6.1 rule 5). Nothing relevant → no context at all.
* **Session start**: no prompt yet, so no recall. The block lists the project's own records —
  active facts of the project scope in file order, at most ``session_facts`` — then the
  records recalled most often (usage hits, design §6.3), at most ``session_hits``, most hits
  first. A project with neither gets no context. No trace line, no usage count: nothing was
  asked.

Either block is cut to the budget (the agent's limit, or ``[hooks] budget`` when smaller, in
the agent's own unit) by the renderer (:func:`talos.render.fit_block`): the prompt's by
``Memory.recall(..., budget=N)``, so the trace and usage count only the rows delivered, the
session's by :func:`budget`. Both carry the recall block's own heading, which says the rows
are recorded data, not instructions.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from talos.errors import StateError
from talos.hooks import agents, scope
from talos.hooks.state import DEFAULTS, MAX_QUERY
from talos.memory import Memory, Recall
from talos.model import Node
from talos.render import Pick, render_block
from talos.sources.tasks import CONVERSATIONAL, MIN_PROMPT_TERMS, names_a_task, task_words
from talos.usage.counts import HOOK_IMPORT_BYTES, SqliteUsage

#: The task rule lives in :mod:`talos.sources.tasks` (sessions use it too); named here as before.
__all__ = [
    "CONVERSATIONAL",
    "MAX_QUERY",
    "MIN_PROMPT_TERMS",
    "DeferredUsage",
    "Responder",
    "budget",
    "names_a_task",
    "reply",
    "session_picks",
    "task_words",
]

#: Memories kept open per scope list in one server (one per project worked in lately).
_OPEN = 4


def budget(picks: Sequence[Pick], lang: str, limit: int, unit: str) -> str:
    """The block of ``picks`` within ``limit`` (in ``unit``, see :data:`talos.render.UNITS`):
    :func:`talos.render.fit_block` — a skill body at its skill's rank, the least relevant
    rows first, one last line saying what was left out; "" when not even one row fits.

    Raises:
        InputError: ``limit`` below :data:`talos.render.MIN_BUDGET` (a ``[hooks] budget``
            that small: the hook logs it and gives no context).
    """
    return render_block(picks, lang, budget=limit, unit=unit)


def session_picks(mem: Memory, project: str | None, facts: int, hits: int) -> list[Pick]:
    """The rows of the SessionStart block (see the module docstring): the project scope's
    active facts in file order (at most ``facts``), then the most-hit records in view (at most
    ``hits``, ties in load order)."""
    view, _graph = mem.view()
    records = [n for n in view.nodes if n.kind in ("fact", "skill", "conflict")]
    own = [n for n in records if project and n.scope == project and n.kind != "skill"][:facts]
    taken = {id(n) for n in own}
    usage = mem.usage()

    def hit_count(n: Node) -> int:
        st = usage.get(n.key)
        return st.hits if st else 0

    often = sorted(
        (n for n in records if id(n) not in taken and hit_count(n) > 0),
        key=lambda n: (-hit_count(n), n.order),
    )[:hits]
    graph = mem.graph()
    reference = mem.model == "classic"  # the reference's rows (design §6.1 rule 3)
    return [Pick(n, 0.0, False, mem.heading(n, graph), reference) for n in own + often]


class DeferredUsage:
    """A usage store (:class:`talos.usage.counts.UsageStore`) that counts a recall only when told
    to: the server answers the agent first and writes usage after (one SQLite transaction
    with fsync is ~13 ms of a 25 ms recall at 3,000 sessions). Reading counts writes the
    pending ones first, so nothing reads a stale count; a server killed between its reply
    and :meth:`flush` loses that one recall's counts."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.pending: list[tuple[Any, Any, int]] = []

    def record(self, present: Any, hits: Any, day: int) -> None:
        """Queue one recall's counts (design §6.3)."""
        self.pending.append((dict(present), {s: set(k) for s, k in hits.items()}, day))

    def flush(self) -> None:
        """Write the queued counts, oldest first."""
        while self.pending:
            try:
                self.store.record(*self.pending.pop(0))
            except StateError as e:  # the counts of this answer are lost, not the answer
                print(f"talos: warning: {e}", file=sys.stderr)
                self.pending.clear()

    def stats(self, scope: str) -> Any:
        """The store's counts of ``scope``, after writing the queued ones."""
        self.flush()
        try:
            return self.store.stats(scope)
        except StateError as e:  # usage.db not made yet (a recall_hits.json too big here)
            print(f"talos: warning: {e}", file=sys.stderr)
            return {}

    def close(self) -> None:
        """Write the queued counts and close the store."""
        self.flush()
        closer = getattr(self.store, "close", None)
        if callable(closer):
            closer()


class Responder:
    """Answers hook events for one home; keeps a few :class:`Memory` objects open (one per
    scope list) so that a resident server recalls in milliseconds.

    Nothing it does writes to stderr (Gemini CLI reads a hook's stderr as its output when
    stdout is empty): what talos would print while answering, warming up, writing usage
    counts or closing is kept in :attr:`warnings` (the last call's) and handed, line by line,
    to ``warned`` — the hook log. A bad recall_hits.json printed its warning from
    :meth:`close`, outside the answer (tests/test_hook_never_blocks.py).

    Args:
        home: the home folder. settings: the ``[hooks]`` settings
            (:func:`talos.hooks.state.hook_state`). warned: called with each warning line
            (``talos: warning:`` removed); ``None``: only kept.
    """

    def __init__(
        self,
        home: str,
        settings: dict[str, Any] | None = None,
        warned: Callable[[str], None] | None = None,
    ) -> None:
        self.home = home
        self.settings = {**DEFAULTS, **(settings or {})}
        self._open: OrderedDict[tuple[str, ...], Memory] = OrderedDict()
        self.warnings: list[str] = []
        self.warned = warned

    @contextlib.contextmanager
    def _quiet(self) -> Iterator[None]:
        """Run the block with stderr captured; its lines become :attr:`warnings` and go to
        :attr:`warned` (also when the block raises)."""
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                yield
        finally:
            lines = [w.strip() for w in err.getvalue().splitlines() if w.strip()]
            self.warnings = lines
            for line in lines:
                if self.warned is not None:
                    with contextlib.suppress(Exception):  # the log never fails a turn
                        self.warned(line.removeprefix("talos: ").removeprefix("warning: "))

    def memory(self, scopes: tuple[str, ...]) -> Memory:
        """The :class:`Memory` of ``scopes`` (opened on first use, the least recent closed)."""
        mem = self._open.pop(scopes, None)
        if mem is None:
            mem = Memory(self.home, scopes=scopes)
            if isinstance(mem.usage_store, SqliteUsage):  # json.loads holds the GIL (usage)
                mem.usage_store.import_limit = HOOK_IMPORT_BYTES
            mem.usage_store = DeferredUsage(mem.usage_store)
            while len(self._open) >= _OPEN:
                self._open.popitem(last=False)[1].close()
        self._open[scopes] = mem
        return mem

    def warm(self) -> None:
        """Build what the first recall reads (the default view), so it is fast. The server
        settles it once idle (:meth:`settle`): settling while warming up delayed the first
        context of a session past the hook's deadline at 100,000 sessions."""
        with self._quiet():
            self.memory(("global",)).prepare()

    def settle(self) -> None:
        """Build each open :class:`Memory`'s own view while the server is idle
        (:meth:`talos.Memory.settle`), so an edit or a new session is patched in."""
        with self._quiet():
            for mem in list(self._open.values()):
                mem.settle()

    def flush(self) -> None:
        """Write the usage counts of the answers given (after the reply, :class:`DeferredUsage`)."""
        with self._quiet():
            for mem in self._open.values():
                store = mem.usage_store
                if isinstance(store, DeferredUsage):
                    store.flush()

    def queued(self) -> dict[int, int]:
        """How many recalls' counts wait, per open :class:`Memory` (by ``id``)."""
        return {
            id(mem): len(mem.usage_store.pending)
            for mem in self._open.values()
            if isinstance(mem.usage_store, DeferredUsage)
        }

    def unqueue(self, before: dict[int, int]) -> None:
        """Drop the counts queued since :meth:`queued` gave ``before``: an answer the agent
        never read delivered nothing, so its rows are no hits (a hook past its deadline
        closes the socket, and the reply cannot be sent on a closed Unix socket)."""
        for mem in self._open.values():
            store = mem.usage_store
            if isinstance(store, DeferredUsage):
                del store.pending[before.get(id(mem), 0) :]

    def close(self) -> None:
        """Write pending usage counts and close every open :class:`Memory`."""
        with self._quiet():
            while self._open:
                self._open.popitem()[1].close()

    def answer(self, agent_name: str, event: Any) -> str:
        """The exact stdout of ``talos hook AGENT`` for ``event`` (the parsed stdin JSON):
        "" when nothing is relevant or the event is not one talos answers.

        Warnings talos prints while loading (an unreadable line, a flagged skill) are kept in
        :attr:`warnings` and given to :attr:`warned`, never written to stderr.

        Raises:
            ValueError: the event is malformed. KeyError: unknown agent. TalosError, OSError,
            sqlite3.Error: the home cannot be read.
        """
        agent = agents.AGENTS[agent_name]
        ev = agents.parse_event(agent, event)
        if not ev.kind:
            return ""
        s = self.settings
        with self._quiet():
            mem0 = self.memory(("global",))
            scopes = scope.scopes_for(ev.cwd, mem0.paths.config, str(mem0.paths.home))
            mem = self.memory(scopes)
            # the same budget as `talos recall` (design §6.3): [hooks] budget, else the home's
            own = s["budget"] if s["budget"] is not None else mem.budget
            limit = min(agent.limit, own) if own is not None else agent.limit
            if ev.kind == "prompt":
                query = ev.prompt.strip()[:MAX_QUERY]
                text = ""
                if names_a_task(query):
                    # cut by recall itself: the rows the agent never gets are no hits
                    # automatic: nobody asked, so the query gate may leave it quiet
                    got: Recall = mem.recall(
                        query, k=s["k"], budget=limit, unit=agent.unit, automatic=True
                    )
                    text = got.text
            else:
                project = scopes[1] if len(scopes) > 1 else None
                picks = session_picks(mem, project, s["session_facts"], s["session_hits"])
                text = budget(picks, mem.lang, limit, agent.unit) if picks else ""
        return agents.render(ev, text)


def reply(responder: Responder, agent: str, body: bytes) -> bytes:
    """The wire reply (:mod:`talos.hooks.server`) to the raw hook input ``body``: ``ok LENGTH``
    and the hook's stdout (LENGTH bytes), or ``error error EVENT`` and a one-line message.
    Never raises: a hook never fails the agent's turn (the client logs the message)."""
    event_name = "-"
    try:
        event = json.loads(body.decode("utf-8"))
        if isinstance(event, dict) and isinstance(event.get("hook_event_name"), str):
            event_name = re.sub(r"\s", "_", event["hook_event_name"]) or "-"
        out = responder.answer(agent, event)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        return f"error error {event_name}\nmalformed hook input: {e}\n".encode()
    except Exception as e:
        msg = " ".join(str(e).split()) or type(e).__name__
        return f"error error {event_name}\n{type(e).__name__}: {msg}\n".encode()
    data = out.encode("utf-8")
    return b"ok %d\n" % len(data) + data  # the length: the client knows a reply cut short
