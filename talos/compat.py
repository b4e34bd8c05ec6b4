"""Drop-in replacement for the reference Talos ``recall.py`` (SPEC §9.3).

An existing agent swaps ``import recall`` for ``from talos import compat as recall`` and keeps
working: the module-level path variables are read at every call (callers and tests may reassign
them), kinds and labels are the reference's Chinese ones (§6.7), and usage counts are kept in
``HITS_FILE`` in the reference's JSON shape so an agent's own reports keep working. Behaviour is
that of :class:`talos.Memory`; this module only adapts names and shapes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from talos.memory import Memory
from talos.render import LABELS, shown_with_members
from talos.sources.facts import strip_tag
from talos.sources.skills import DESC_MAX, NAME_MAX
from talos.sources.skills import skill_label as _skill_label
from talos.usage import JsonUsage

__all__ = [
    "DESC_MAX",
    "HITS_FILE",
    "MEMORY_FILE",
    "NAME_MAX",
    "SESS_DIR",
    "SKILLS_DIR",
    "TRACE_FILE",
    "dead",
    "explain",
    "forget",
    "recall",
    "skill_label",
    "strip_tag",
]

HOME = os.path.realpath(os.environ.get("TALOS_HOME") or os.getcwd())
MEMORY_FILE = os.path.join(HOME, "memory.md")
SKILLS_DIR = os.path.join(HOME, "skills")
SESS_DIR = os.path.join(HOME, ".talos", "sessions")
HITS_FILE = os.path.join(HOME, ".talos", "recall_hits.json")
TRACE_FILE = os.path.join(HOME, ".talos", "recall_trace.jsonl")

_ZH = LABELS["zh"]
_TO_ZH = {k: _ZH[k] for k in ("fact", "skill", "episode", "conflict")}
_FROM_ZH = {v: k for k, v in _TO_ZH.items()}


_CACHED: tuple[tuple[Any, ...], Memory] | None = None


def _memory(
    blocked: Iterable[str] | None = None, keep_fact: Callable[[str], bool] | None = None
) -> Memory:
    """The :class:`Memory` for the current module paths, reused while the paths and filters
    are the same (a new one per call would reopen its index and usage files every time)."""
    global _CACHED
    hits = os.path.abspath(HITS_FILE)
    key = (
        os.path.abspath(MEMORY_FILE),
        os.path.abspath(SKILLS_DIR),
        os.path.abspath(SESS_DIR),
        hits,
        os.path.abspath(TRACE_FILE),
        tuple(sorted(map(str, blocked or ()))),
        keep_fact,
    )
    if _CACHED is not None and _CACHED[0] == key:
        return _CACHED[1]
    if _CACHED is not None:
        _CACHED[1].close()
    mem = _new_memory(hits, blocked, keep_fact)
    _CACHED = (key, mem)
    return mem


def _new_memory(
    hits: str, blocked: Iterable[str] | None, keep_fact: Callable[[str], bool] | None
) -> Memory:
    extra: dict[str, Any] = {} if keep_fact is None else {"keep_fact": keep_fact}
    return Memory(
        os.path.dirname(os.path.abspath(MEMORY_FILE)),
        memory_file=os.path.abspath(MEMORY_FILE),
        skills_dir=os.path.abspath(SKILLS_DIR),
        sessions_dir=os.path.abspath(SESS_DIR),
        state_dir=os.path.dirname(hits),
        trace_file=os.path.abspath(TRACE_FILE),
        blocked=blocked,
        lang="zh",
        usage=JsonUsage(Path(hits)),
        **extra,
    )


def skill_label(name: str, desc: str) -> str:
    """``name — description`` with the reference's limits and Chinese truncation note."""
    return _skill_label(name, desc, "zh")


def recall(
    query: str,
    k: int = 5,
    blocked: Iterable[str] | None = None,
    keep_fact: Callable[[str], bool] | None = None,
    sink: dict[str, Any] | None = None,
) -> str:
    """The Chinese context block for ``query`` ("" when nothing is recalled).

    ``sink``: a dict filled with ``bodies`` (skill bodies injected) and ``picked`` (rows).
    ``keep_fact=None`` applies talos's default safety filter (SPEC §3.1, §8.2).
    """
    result = _memory(blocked, keep_fact).recall(query, k=k)
    if sink is not None:
        sink["bodies"] = result.bodies
        sink["picked"] = len(result.picked)
    return result.text


def explain(
    query: str,
    k: int = 8,
    blocked: Iterable[str] | None = None,
    keep_fact: Callable[[str], bool] | None = None,
) -> list[tuple[float, str, str]]:
    """``[(score, kind, text), ...]`` with Chinese kinds; no side effects.

    ``text`` is shown as the block shows it (:func:`talos.render.shown_with_members`: each
    stored text on its own line, control characters visible, bounded with the visible cut),
    since an agent prints these rows; a conflict row is ``冲突`` (it raised ``KeyError``)."""
    rows = _memory(blocked, keep_fact).explain(query, k=k)
    return [(r.score, _TO_ZH[r.kind], shown_with_members(r.node, "zh")) for r in rows]


def dead(min_seen: int = 8, stale_days: int = 90) -> list[tuple[str, str, str]]:
    """``[(kind, text, reason), ...]``: forgetting suggestions with Chinese kinds and reasons.
    The reference's rule: ``min_seen`` recalls are enough, with no span of days
    (``min_days=0``; :meth:`talos.Memory.dead` waits ``dead_min_days``)."""
    found = _memory().dead(min_seen, stale_days, min_days=0)
    return [(_TO_ZH[s.kind], s.text, s.reason) for s in found]


def forget(items: Iterable[tuple[str, ...]]) -> int:
    """Forget suggested facts (``(kind, text, ...)``, kinds Chinese or English).

    Only lines talos wrote are removed, never a hand-written one; returns how many.
    """
    converted = [(_FROM_ZH.get(it[0], it[0]), it[1], *(it[2:3] or ("forget",))) for it in items]
    return _memory().forget(converted)
