"""One recall, step after step: time window → rank → select → block → trace and counts.

:meth:`talos.memory.Memory.recall` hands its arguments here (design §6.1; the pipeline of
docs/architecture.md). An ask's time words narrow the rows to their window and are no query
terms (design §7.3); a long session shows the part the ask matched (design §3.3).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING

from talos.results import Recall
from talos.selection import delivery
from talos.sources.session_parts import shown_graph
from talos.view.time_window import WIDE, narrow
from talos.view.timewords import find_window

if TYPE_CHECKING:
    from talos.memory import Memory

__all__ = ["recall"]


def recall(
    mem: Memory,
    query: str,
    k: int,
    at: dt.date | None,
    overrides: Mapping[str, str] | None,
    budget: int | None,
    unit: str,
    dense: bool,
    automatic: bool,
) -> Recall:
    """The block of ``mem`` for ``query`` (arguments checked and defaulted by
    :meth:`Memory.recall`, whose docstring says what each is); writes one trace line and
    updates usage counts (design §6.3), also when nothing is recalled."""
    ranker, kept = mem._ranker, mem._kept
    reference = mem.model == "classic"  # the reference's rows (design §6.1 rule 3)
    window = None if reference else find_window(query, at or dt.date.today())
    ranked = query if window is None else window.rest
    # the query's vector first: its embedding overlaps the look at the files too
    asked = ranker.start(ranked, dense)
    graph = kept.recall_graph(at, overrides)
    picks, legs, weak = ranker.select(
        graph, asked, k if window is None else max(k, WIDE), automatic
    )
    narrowed = narrow(graph, picks, window, kept.episode_dates, k, mem.lang, budget, unit)
    budget, weak = narrowed.budget, weak and narrowed.how != "listed"
    picks = narrowed.picks
    if narrowed.how == "fell back":  # the undated ranking: the ask as written (§7.3)
        asked = ranker.start(query, dense)
        picks, legs, weak = ranker.select(graph, asked, k, automatic)
    shown = graph if reference else shown_graph(graph, picks, ranked)
    text, rows = delivery.deliver(
        shown, picks, legs, lambda n, _g: mem._headings.of(n, graph), mem.lang, budget,
        unit, reference, weak,
    )  # fmt: skip
    text = narrowed.noted(text)
    seen = kept.present(graph)  # only delivered rows are hits (design §6.3)
    delivery.record(mem.paths, query, rows, mem.scopes, mem.usage_store, seen)
    return Recall(text, rows, weak=weak and bool(rows))
