"""The audit log as ``talos history`` shows it to a person of some scopes (design §7.6).

The log (:mod:`talos.writer.audit`; every device's, merged, design §9) holds every scope's
committed writes, each line exactly as it was (``restore`` brings it back as it was). What is
shown is the entries of the authorized scopes only (design §7.3), with every credential in
``before``, ``after`` and ``reason`` masked (design §8.3: a revoked tool record holding a token
was printed whole by ``talos history``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from talos import safety
from talos.view.canon import canonical_name

if TYPE_CHECKING:
    from pathlib import Path

    from talos.home import Paths

__all__ = ["history"]


def history(
    source: Paths | Path, scopes: Sequence[str], target: str | None = None
) -> list[dict[str, Any]]:
    """The committed entries of ``source`` (a home's :class:`Paths`: every device's log,
    merged by time, their paths made this home's; or one log file) of ``scopes``, oldest
    first, each with ``"state": "committed"`` and its credentials masked; only those whose
    record id or key (in its canonical spelling) is ``target`` when given."""
    from talos.writer import audit  # imported on use: recall never reads the log

    rows = [
        {**e, **_masked(e), "state": "committed"}  # settled(): committed only
        for e in audit.settled(source)
        if audit.entry_scope(e) in scopes
    ]
    if target:
        name = canonical_name(target) or None
        rows = [
            e
            for e in rows
            if target == e.get("id") or name == canonical_name(str(e.get("key") or ""))
        ]
    return rows


def _masked(entry: dict[str, Any]) -> dict[str, Any]:
    """The text fields of an audit entry with credentials masked (what history shows)."""
    return {
        k: safety.mask_secrets(v)
        for k in ("before", "after", "reason")
        if isinstance(v := entry.get(k), str)
    }
