"""The authorized active view (SPEC §7.3): which records a request may see at all.

Every reader — recall, explain, dead, usage counting, the trace — takes its nodes from
:func:`in_view`; no command filters on its own ("one route per rule").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from talos.model import Node

__all__ = ["DEFAULT_SCOPES", "in_view", "parse_day"]

DEFAULT_SCOPES = ("global",)


def parse_day(value: str) -> dt.date | None:
    """``YYYY-MM-DD`` (or a longer ISO timestamp) → date; ``None`` when empty or malformed."""
    try:
        return dt.date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def in_view(node: Node, scopes: Sequence[str], at: dt.date) -> bool:
    """Whether ``node`` is in the authorized active view at business date ``at`` (SPEC §7.3).

    A record is in view when its scope is one of ``scopes``, its ``status`` is ``active`` (the
    default), and it is valid at ``at``: ``from <= at < until``, ``from`` defaulting to the
    tag's date and ``until`` to open-ended.
    """
    if node.scope not in scopes:
        return False
    if node.fields.get("status", "active") != "active":
        return False
    start = parse_day(node.fields.get("from", "")) or parse_day(node.born)
    if start is not None and at < start:
        return False
    end = parse_day(node.fields.get("until", ""))
    return not (end is not None and at >= end)
