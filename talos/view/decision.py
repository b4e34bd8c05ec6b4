"""The one usable value of a key, or the reason there is none (design §7.7, ``talos get``).

A decision to branch on, read from the view (:class:`talos.view.trust.View`): a request-scoped
override first, then each authorized scope in order — a conflict there, or its winner. A key
only expired or not yet valid records hold says so; a record of an unauthorized scope is
indistinguishable from none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from talos.results import Decision
from talos.view.trust import from_model, stated_value

if TYPE_CHECKING:
    from talos.view.trust import View

__all__ = ["decide"]


def decide(view: View, key: str, scopes: Sequence[str]) -> Decision:
    """The :class:`~talos.results.Decision` for canonical ``key`` in ``view``: ``ok`` (its
    ``value`` and ``record``; ``override`` for a request-scoped value, ``inferred`` for a
    ``reflect`` record), ``conflict`` (``competitors`` lists the records), ``expired`` /
    ``not-yet-valid`` (records exist but none is valid at the view's date), or ``unknown``.
    When several of ``scopes`` hold the key, the first in order wins."""
    for n in view.nodes:
        if n.src == "override" and n.fields.get("key") == key:
            return Decision(key, "ok", stated_value(n.text), n, override=True)
    for scope in scopes:
        if (scope, key) in view.conflicts:
            return Decision(
                key, "conflict", None, None, competitors=list(view.conflicts[(scope, key)])
            )
        winner = view.winners.get((scope, key))
        if winner is not None:
            return Decision(
                key,
                "ok",
                stated_value(winner.text),
                winner,
                # a model's record (reflect, or any MCP wrote: by=mcp, whatever source its tag
                # claims), as the block marks it (tests/test_provenance_attack.py)
                inferred=winner.src == "reflect" or from_model(winner.fields),
            )
    reasons = [
        e.reason
        for e in view.excluded
        if e.node.fields.get("key") == key and e.reason in ("expired", "not-yet-valid")
    ]
    if reasons:
        return Decision(key, "expired" if "expired" in reasons else "not-yet-valid", None, None)
    return Decision(key, "unknown", None, None)
