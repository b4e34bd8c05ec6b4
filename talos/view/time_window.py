"""An ask's time words narrow what a recall delivers to their window (design §7.3).

:func:`talos.view.timewords.find_window` gives the days ("last week", "上周", "in November") and
the ask without them; the ranking runs on the ask without them (time words are no query
terms). Then, over the view the recall ranks (its scopes and date: nothing outside the view is
ever a candidate):

- **in the window**: an episode whose session's days (first to last time stamp, UTC) meet
  it; a fact or skill whose tag date is in it, or whose explicit validity (``from`` /
  ``until``) meets it. A merged node is in when one of its members is. Nothing else is (an
  untagged fact has no date).
- **an ask of time words alone** ("what did I do yesterday", "上周做了什么": no word left
  that names a subject, :data:`GENERIC` aside), or one whose other words reach no memory at
  all, delivers the window's rows newest first.
- **any other ask** delivers its ranked rows that are in the window, in rank order.
- **nothing in the window** (no row dated in it, or none the ask's words reach) falls back
  to the ranking without the window — of the ask as written, time words and all: a fact
  may hold them ("the billing freeze is in the last week") — and the line below the block's
  heading says so (:func:`note`), so the agent knows the rows are not from the days asked
  about. :meth:`talos.Memory.recall` ranks the ask again for it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from talos.graph.graph import Graph, StackedNodes
from talos.model import Node
from talos.sources.tasks import task_words
from talos.view.timewords import Window

__all__ = ["GENERIC", "WIDE", "Narrowed", "in_window", "narrow", "note"]

#: How many ranked rows a recall with a window looks at before it keeps those in the window.
WIDE = 200

#: Words that name no subject in an ask about a time ("what happened yesterday", "what did
#: I work on last week", "上周做了哪些事"): the ask lists the window rather than searches it.
GENERIC = frozenset(
    ("happen", "work", "done", "everyth", "anyth", "someth", "thing", "stuff", "task",
     "session", "day", "week", "month", "做事", "事情", "工作", "发生", "干活", "事")
)  # fmt: skip

Pick = tuple[float, int, bool]
Dated = Mapping[str, tuple[str, str]]


def in_window(n: Node, window: Window, dated: Dated) -> bool:
    """Whether node ``n`` (or one of its merged members) is in ``window`` (module docstring);
    ``dated``: the episodes whose sessions meet the window, by path
    (:meth:`talos.view.kept.KeptState.episode_dates`)."""
    for m in n.family():
        if m.kind == "episode":
            if m.path in dated:
                return True
            continue
        if window.holds(m.born):
            return True
        start, until = m.fields.get("from", ""), m.fields.get("until", "")
        if start or until:
            first = start or m.born or "0001-01-01"
            last = ""
            if until:
                try:  # until is exclusive: the last valid day is the one before
                    last = (dt.date.fromisoformat(until[:10]) - dt.timedelta(days=1)).isoformat()
                except ValueError:
                    last = ""
            if window.overlaps(first, last or "9999-12-31"):
                return True
    return False


def _newest(graph: Graph, window: Window, dated: Dated, k: int) -> list[Pick]:
    """The rows of ``graph`` in the window, newest first (a fact by its tag date, an episode
    by its session's last day), at most ``k``; score 0 (not ranked by the ask)."""
    got: list[tuple[str, int]] = []
    for i, n in enumerate(graph.nodes[: graph.records]):
        if n.kind != "episode" and in_window(n, window, dated):
            got.append((n.born or n.fields.get("from", ""), i))
    nodes = graph.nodes
    if isinstance(nodes, StackedNodes) and dated:
        block, seen = nodes.block, set()
        for path, (day, last) in dated.items():
            pos = block.positions([path])  # only episodes of the view: in scope
            if pos:
                g = int(block.group_of[pos[0]])
                if g not in seen:
                    seen.add(g)
                    got.append((last or day, graph.records + g))
    got.sort(key=lambda x: (x[0], -x[1]), reverse=True)
    return [(0.0, i, False) for _d, i in got[:k]]


@dataclass(frozen=True, slots=True)
class Narrowed:
    """What :func:`narrow` decided: the ``picks`` to deliver, ``how`` they were chosen
    (``ranked``: the ask's ranked rows in the window; ``listed``: the window's rows, newest
    first; ``fell back``: the ranking without the window; ``asked``: no window), the
    ``budget`` left for the rows and the ``line`` the block gets below its heading ("" for
    none)."""

    picks: list[Pick]
    how: str
    budget: int | None
    line: str = ""

    def noted(self, text: str) -> str:
        """The block ``text`` with :attr:`line` below its heading (nothing when empty)."""
        if not self.line or not text:
            return text
        head, _, rest = text.partition("\n")
        return f"{head}\n{self.line}\n{rest}"


def narrow(
    graph: Graph,
    picks: Sequence[Pick],
    window: Window | None,
    dates: Callable[[str, str], Dated],
    k: int,
    lang: str = "en",
    budget: int | None = None,
    unit: str = "chars",
) -> Narrowed:
    """The picks of a recall whose ask named ``window`` (module docstring), at most ``k``;
    with no window, ``picks`` as they are.

    Args:
        graph: the view's graph. picks: the ranking of the ask without its time words, in
            rank order, up to :data:`WIDE` rows. window: :func:`talos.view.timewords.find_window`'s.
        dates: ``dates(start, end)``, the episodes whose sessions meet those days
            (:meth:`talos.view.kept.KeptState.episode_dates`). k: most rows. lang: the
            block's language (its note's). budget, unit: the block's; the note's line counts
            towards it.
    """
    if window is None:
        return Narrowed(list(picks), "asked", budget)
    chosen, how = _narrowed(graph, picks, window, dates, k)
    line = note(window, lang) if how == "fell back" else ""  # shown when rows are
    if line and budget is not None:
        from talos.render import MIN_BUDGET, size

        budget = max(budget - size("\n" + line, unit), MIN_BUDGET)
    return Narrowed(chosen, how, budget, line)


def _narrowed(
    graph: Graph,
    picks: Sequence[Pick],
    window: Window,
    dates: Callable[[str, str], Dated],
    k: int,
) -> tuple[list[Pick], str]:
    """:func:`narrow`'s picks and how they were chosen."""
    dated = dates(window.start.isoformat(), window.end.isoformat())
    if not picks or not (task_words(window.rest) - GENERIC):
        listed = _newest(graph, window, dated, k)
        if listed:
            return listed, "listed"
        return list(picks[:k]), "fell back"
    kept = [p for p in picks if in_window(graph.nodes[p[1]], window, dated)]
    if kept:
        return kept[:k], "ranked"
    return list(picks[:k]), "fell back"


def note(window: Window, lang: str) -> str:
    """The block's line saying the rows are not from the window asked about."""
    if lang == "zh":
        return f"（talos：{window.said}（{window.label()}）没有匹配的记录；以下不限时间）"
    return (
        f"(talos: nothing from {window.said} ({window.label()}) matches; these rows are from "
        "any time)"
    )
