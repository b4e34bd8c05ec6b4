"""Drop-in replacement for the reference Talos ``recall.py`` (design §9.3).

An existing agent swaps ``import recall`` for ``from talos import compat as recall`` and keeps
working: the module-level path variables are read at every call (callers and tests may reassign
them), kinds and labels are the reference's Chinese ones (§6.7), and usage counts are kept in
``HITS_FILE`` in the reference's JSON shape so an agent's own reports keep working.

The ranking is that of :class:`talos.Memory` (its model: ``model`` in talos.toml beside
``MEMORY_FILE``, else the default). Under ``classic`` (and every keyword model) everything is
``Memory``'s. A model that ranks terms (the default ``evidence``) scores and selects on another
scale than the reference, so this module pins the reference's rules on top of its ranking —
the rules the reference project's own tests hold an agent to (``tests/test_compat_reference.py``
runs them against this module):

- *spreading*: over shared words only, as the reference's edges — the model's keyword hops
  without its contiguity edges (:func:`_reference_ranking`);
- *score* (:func:`explain`, the trace): the row's activation, the share of the query's evidence
  it holds after spreading (mass-conserving: near-copies and merged lines never add up), rounded
  to 2 places — the reference's scale, where a row's score is the share of the query's keywords
  it holds plus what spreading brings; not the evidence score (× √Z: 2.66 for a line that holds
  the whole query, and the reference test asks for a score in [0, 1]);
- *rows* (:func:`explain` and :func:`recall`): the first ``k`` of that ranking whose score shows
  above 0.00 (:data:`SHOWN_MIN`; the reference ranks every node above its ``THRESH``) — no
  relevance floor and no budget: a lone skill that shares a few words is named, without its
  body, so the agent decides whether to read it;
- *body*: the model's own body gate (:func:`talos.selection.rows.body_of`), stricter than the
  reference's 0.35 floor on its scale, and only for a delivered row.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from talos.graph.graph import Graph
from talos.memory import Memory, Recall
from talos.ranking.activation import TERMS
from talos.ranking.analyzer import analyze
from talos.ranking.contiguity import no_links
from talos.ranking.evidence import PRIOR, SMALL_HOME, body_evidence
from talos.render import LABELS, shown_with_members
from talos.selection import delivery
from talos.selection.rows import body_of, evidence_order
from talos.sources.facts import strip_tag
from talos.sources.skills import DESC_MAX, NAME_MAX
from talos.sources.skills import skill_label as _skill_label
from talos.usage.counts import JsonUsage

__all__ = [
    "DESC_MAX",
    "HITS_FILE",
    "MEMORY_FILE",
    "NAME_MAX",
    "SESS_DIR",
    "SHOWN_MIN",
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


#: A row of a terms model is ranked when its score (activation, see the module docstring)
#: shows above 0.00 to 2 places, as the reference ranks a node above its ``THRESH``. For
#: "怎么让 run_bash 更安全" the line "用户喜欢图文并茂的可视化解释", which shares no word with it,
#: was listed at 0.0 (activation 0.000007, two hops through the one character 文 it shares
#: with the "Docker …网络和文件访问" line), while that line (0.0078, through the matched line's
#: words) must stay (the reference test ``test_recall_spreading_activation``).
SHOWN_MIN = 0.005

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
    ``keep_fact=None`` applies talos's default safety filter (design §3.1, §8.2). Rows and scores
    of a terms model follow the reference's rules (module docstring; :func:`_reference_recall`);
    writes one trace line and counts usage, as the reference does (design §6.3).
    """
    mem = _memory(blocked, keep_fact)
    if mem.ranking.over == TERMS:
        result = _reference_recall(mem, query, k)
    else:
        result = mem.recall(query, k=k)
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
    since an agent prints these rows; a conflict row is ``冲突`` (it raised ``KeyError``).
    With a terms model, the rows and scores of :func:`_reference_ranking` (the reference's
    rules, module docstring)."""
    mem = _memory(blocked, keep_fact)
    if mem.ranking.over != TERMS:
        rows = mem.explain(query, k=k)
        return [(r.score, _TO_ZH[r.kind], shown_with_members(r.node, "zh")) for r in rows]
    graph, ranked, _body = _reference_ranking(mem, query, k)
    return [
        (s, _TO_ZH[graph.nodes[i].kind], shown_with_members(graph.nodes[i], "zh"))
        for s, i in ranked
    ]


def _reference_ranking(
    mem: Memory, query: str, k: int
) -> tuple[Graph, list[tuple[float, int]], int | None]:
    """A terms model's ranking under the reference's rules (module docstring):
    ``(graph, [(score, node position), ...], body)`` — the first ``k`` nodes (none for
    ``k <= 0``) by the model's activation of ``query`` with the keyword hops alone, each with
    activation ≥ :data:`SHOWN_MIN`, scored by it rounded to 2 places; ``body`` the position of
    the skill that earns its body by the model's gate (:func:`talos.selection.rows.body_of`) when
    it is among them, else None. The lexical ranking only: talos.toml's dense leg is not fused.

    No contiguity: the reference spreads over shared words only, and a talos-written line next
    to the matched one was recalled (activation 0.08) for "GLM 免费 api 怎么配", which it shares
    no word with, so it was never proposed for forgetting (the reference test
    ``test_recall_usage_forgetting``)."""
    graph = mem._kept.recall_graph(None, None)
    terms = analyze(query)
    index, _edges = mem._kept.evidence_index(graph)
    ev = mem.ranking.activate(index, no_links(index.n), terms, SMALL_HOME)
    order = evidence_order(ev.final)
    final = ev.final
    top = [i for i in order[: max(k, 0)].tolist() if final[i] >= SHOWN_MIN]
    if not top:
        return graph, [], None
    seeds = body_evidence(index, terms, at_least=SMALL_HOME, prior=PRIOR)
    best = body_of(graph, order, k, final, seeds, mem.ranking, terms)
    return graph, [(round(float(final[i]), 2), i) for i in top], best if best in top else None


def _reference_recall(mem: Memory, query: str, k: int) -> Recall:
    """:meth:`Memory.recall` for a terms model with the reference's rules: the rows of
    :func:`_reference_ranking` in its order, the body to its skill; no relevance floor and no
    budget (the reference has neither). Writes the trace line and counts usage for the
    delivered rows, as :meth:`Memory.recall` does (design §6.3)."""
    graph, ranked, best = _reference_ranking(mem, query, k)
    picks = [(score, i, i == best) for score, i in ranked]
    # the reference's rows and labels (design §6.7): its agents parse exactly these lines
    text, rows = delivery.deliver(graph, picks, {}, mem.heading, mem.lang, reference=True)
    delivery.record(mem.paths, query, rows, mem.scopes, mem.usage_store, mem._kept.present(graph))
    return Recall(text, rows)


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
