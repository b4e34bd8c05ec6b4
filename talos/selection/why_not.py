"""Why a record is left out of a query's rows (design §6.2 ``talos explain --why-not``).

Three sources of reasons, in this order: the ranking (what the ranker reached or ranked but a
recall leaves out: ``below-floor``, ``below-threshold``, ``beyond-k``; :meth:`talos.ranking.rankers.
Ranker.left_out`), the view (records it excluded: ``shadowed``, ``conflict``, ``superseded``,
``deleted``, ``expired``, ``not-yet-valid``, ``overridden``), and the fact filter (lines of
memory.md it never lets through: ``unsafe``, their text withheld). Only records that match the
query the way the model matches, and only of the authorized scopes, are named.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from talos import safety
from talos.results import WhyNot
from talos.sources import load_facts
from talos.sources.facts import tag_reasons
from talos.view.trust import authorized

if TYPE_CHECKING:
    from pathlib import Path

    from talos.model import Node
    from talos.view.trust import View

__all__ = ["reasons"]


def reasons(
    ranked: list[WhyNot],
    shares: Callable[[Node], bool],
    view: View,
    memory_file: Path,
    scopes: Sequence[str],
    keep_fact: Callable[[str], bool] | None,
    headings: bool,
) -> list[WhyNot]:
    """Every left-out record, with its typed reason: ``ranked`` (the ranker's), then the
    view's excluded records that ``shares`` (match the query), then the memory.md lines the
    fact filter ``keep_fact`` drops (design §8.2) that match it and are of ``scopes``.

    An unsafe line's text is withheld ("(line 7 withheld: it looks like an instruction)";
    "it holds a credential" when every reason is one, and the reason is masked): why-not
    output reaches agents too (MCP), and the point of the filter is that this line never
    reaches a prompt. ``headings``: a markdown heading is no record (design
    §3.1, every model but ``classic``)."""
    out = list(ranked)
    for e in view.excluded:
        if shares(e.node):
            out.append(WhyNot(e.node, e.reason, e.by))
    if keep_fact is None:
        return out
    default = keep_fact is safety.keep_fact
    for n in load_facts(memory_file, None):
        if n.heading_level and headings:
            continue  # a heading is no record (design §3.1)
        tag = tag_reasons(n.raw) if default and n.fields else ()
        if authorized(n, scopes) and shares(n) and (tag or not keep_fact(n.text)):
            found = [*safety.instruction_reasons(n.text), *tag]
            why = "; ".join(found) or "filtered"
            what = (
                "it holds a credential"
                if found and all(r.startswith("contains a credential") for r in found)
                else "it looks like an instruction"
            )
            hidden = dataclasses.replace(n, text=f"(line {n.line} withheld: {what})", raw="")
            out.append(WhyNot(hidden, "unsafe", f"{why} (design §8.2)"))
    return out
