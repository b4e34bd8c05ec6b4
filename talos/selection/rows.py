"""Which ranked rows a recall delivers (design §6.1), and which it leaves out (design §6.2).

The ranking model (:mod:`talos.ranking.activation`) scores the nodes; this step picks the rows: the
top
``k`` above the model's threshold, and the skill body gate — the best skill of the *full*
ranking earns its body when it leads the second-best skill by the model's ``body_lead``, or,
as the only ranked skill, scores at least ``body_floor``. The relevance floor and the budget go
here too. :func:`left_out` gives :meth:`talos.Memory.why_not` the ranked rows beyond ``k`` and
the active ones below the threshold.

The ``evidence`` model is delivered by :func:`select_evidence`: the relevance floor
(:func:`talos.selection.relevance.deliver`: an unrelated query gets an empty block) and the body
gate
(:func:`talos.selection.relevance.earns_body`: a skill that matches no query word gets no body),
with the
small-home rule :func:`small_home_scale`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from talos.ranking.activation import Activation, Model, rank, rank_arrays
from talos.ranking.analyzer import analyze, without_unigrams
from talos.selection.relevance import BODY_FLOOR, BODY_LEAD, deliver, earns_body

if TYPE_CHECKING:
    from talos.graph.graph import Graph
    from talos.ranking.evidence import Evidence, TermIndex

__all__ = [
    "body_of",
    "body_skill",
    "content_words",
    "evidence_order",
    "left_out",
    "select",
    "select_evidence",
]


def select(graph: Graph, act: Activation, model: Model, k: int) -> list[tuple[float, int, bool]]:
    """The rows a recall delivers, best first: ``[(score, node position, body), ...]``.

    ``score`` is the activation rounded to 2 places (design §6.1); at most ``k`` rows (none for
    ``k <= 0``), each above ``model.thresh``; ``body`` is true for the one skill that earns its
    body (:func:`body_skill`), when it is among them.
    """
    values, order = rank_arrays(act, model.thresh, k=max(k, 0))
    top = [(round(a, 2), i) for a, i in zip(values.tolist(), order.tolist(), strict=True)]
    # the skills in the order of the full ranking (skills are records; a few dozen)
    values, order = rank_arrays(act, model.thresh, among=graph.skill_positions())
    skills = [(round(a, 2), i) for a, i in zip(values.tolist(), order.tolist(), strict=True)]
    best = body_skill(skills, model)
    return [(s, i, i == best) for s, i in top]


def body_skill(skills: list[tuple[float, int]], model: Model) -> int | None:
    """The position of the skill that earns its body (design §6.1 step 2), or ``None``.

    Args:
        skills: ``[(rounded score, position), ...]`` of the ranked skills, best first.
        model: its ``body_lead`` (the best must score at least this times the second) and
            ``body_floor`` (the only ranked skill must score at least this).
    """
    if not skills:
        return None
    lead = (
        skills[0][0] >= model.body_floor
        if len(skills) == 1
        else skills[0][0] >= model.body_lead * skills[1][0]
    )
    return skills[0][1] if lead else None


def left_out(
    act: Activation, model: Model, k: int
) -> tuple[list[tuple[int, int, float]], list[tuple[int, float]]]:
    """What a recall of ``k`` rows leaves out (design §6.2 ``--why-not``).

    Returns:
        ``(beyond, below)``: ``beyond`` the ranked rows after the first ``k`` as ``(position,
        rank from 1, score)``, in rank order; ``below`` the active nodes not ranked (at or under
        ``model.thresh``) as ``(position, score)``, in activation order. Scores are rounded to 2
        places.
    """
    ranked = [i for _a, i in rank(act, model.thresh)]
    top, beyond = set(ranked[: max(k, 0)]), ranked[max(k, 0) :]
    final = act.final
    over = [(i, ranked.index(i) + 1, round(final[i], 2)) for i in beyond]
    under = [(i, round(a, 2)) for i, a in final.items() if i not in top and i not in beyond]
    return over, under


def evidence_order(final: np.ndarray, k: int | None = None) -> np.ndarray:
    """Node positions of the ``evidence`` ranking, best first: every node with a final
    activation above 0, exactly equal ones in node order; ``k``: its first ``k``."""
    idx = np.flatnonzero(final > 0)
    order = idx[np.argsort(-final[idx], kind="stable")]
    return order if k is None else order[: max(k, 0)]


def select_evidence(
    graph: Graph,
    index: TermIndex,
    ev: Evidence,
    body: tuple[np.ndarray, float],
    k: int,
    model: Model | None = None,
    terms: Collection[str] | None = None,
    automatic: bool = True,
) -> tuple[list[tuple[float, int, bool]], bool]:
    """The rows an ``evidence`` recall delivers, in block order, and whether they are weak
    matches: ``([(evidence score rounded to 2 places, node position, body), ...], weak)``;
    ``[]`` is an empty block.

    ``terms``: the query's analyzed terms; a skill whose label (name — description) holds none
    of them (without single CJK characters) earns no body, however its body matches: the
    label says what the skill is for ("what time is it for me now" won a 700-character SQL
    procedure through "time" in its steps).

    The first ``k`` rows of :func:`evidence_order` (``k`` a cap: the budget of
    :func:`talos.render.fit_block` decides how many a block holds) through the relevance floor
    (:func:`talos.selection.relevance.deliver`: absolute, per row, in rank order; the query
    gate empties the block only when ``automatic``, and an asked block the gate would have
    emptied is ``weak``); ``body`` is true for the skill that earns it
    (:func:`talos.selection.relevance.earns_body` with ``body`` =
    :func:`talos.ranking.evidence.body_evidence`'s ``(seeds, √Z)``, and ``model``'s ``body_lead``
    and ``body_floor``; ``None``: :mod:`talos.selection.relevance`'s), when it is delivered.
    """
    if k <= 0 or not index.n:
        return [], False
    order = evidence_order(ev.final)
    top = order[:k].tolist()
    rows = deliver(ev, top, automatic=automatic, words=content_words(body, terms))
    if not rows:
        return [], False
    weak = not automatic and not deliver(ev, top)  # the hooks would have said nothing
    best = body_of(graph, order, k, ev.final, body, model, terms)
    score = ev.final * ev.scale
    return [(round(float(score[i]), 2), i, i == best) for i in rows], weak


def content_words(
    body: tuple[np.ndarray, float], terms: Collection[str] | None
) -> np.ndarray | None:
    """Each node's seed over the query's content words (``body``'s seeds: the query's terms
    without single CJK characters, :func:`talos.ranking.evidence.body_evidence`), what an asked
    recall the query gate found no evidence for shares with the ask
    (:func:`talos.selection.relevance.deliver`'s ``words``); ``None`` (every term counts) when
    ``terms`` is unknown or the query is nothing but single CJK characters ("猫")."""
    if terms is None or not without_unigrams(terms):
        return None
    return body[0]


def body_of(
    graph: Graph,
    order: np.ndarray,
    k: int,
    final: np.ndarray,
    body: tuple[np.ndarray, float],
    model: Model | None = None,
    terms: Collection[str] | None = None,
) -> int | None:
    """The skill of a terms-model ranking that earns its body, or None: the body gate
    (:func:`talos.selection.relevance.earns_body`) over ``order`` (node positions, best first) and
    its
    scores ``final`` (indexed by node), with ``body`` =
    :func:`talos.ranking.evidence.body_evidence`'s
    ``(seeds, √Z)``; ``model``'s ``body_lead`` and ``body_floor`` (``None``:
    :mod:`talos.selection.relevance`'s). ``terms``: the query's analyzed terms; a skill whose label
    (name — description) holds none of them earns no body, however its steps match ("what
    time is it for me now" won a 700-character SQL procedure through "time" in its steps);
    one whose label holds every query term wins a near tie of the lead rule against one whose
    label does not (:func:`talos.selection.relevance.lead_skill`). The lexical and the fused ranking
    (:mod:`talos.ranking.hybrid`) both ask it."""
    n_nodes = len(final)
    skill = np.zeros(n_nodes, dtype=bool)
    skill[: graph.records] = graph.skill_mask()  # episodes follow the records
    top = order[:k].tolist()
    # the ranked skills after the first k are all the body gate reads beyond them
    rest = [int(i) for i in order[k:][skill[order[k:]]]] if len(order) > k else []
    seeds, scale = body
    lead, floor = (BODY_LEAD, BODY_FLOOR) if model is None else (model.body_lead, model.body_floor)
    asked = frozenset(without_unigrams(terms)) if terms is not None else None

    def own(i: int) -> tuple[float, float]:
        if asked is not None and asked.isdisjoint(analyze(graph.nodes[i].text)):
            return 0.0, scale  # its label holds no query term: not what it is for
        return float(seeds[i]), scale

    def holds_all(i: int) -> bool:  # its label holds every query term (a near tie's break)
        return (
            asked is not None and bool(asked) and asked <= frozenset(analyze(graph.nodes[i].text))
        )

    return earns_body(
        top + rest,
        lambda i: bool(skill[i]),
        cast("Sequence[float]", final),  # indexed only
        own,
        k,
        lead,
        floor,
        holds_all=holds_all if asked is not None else None,
    )
