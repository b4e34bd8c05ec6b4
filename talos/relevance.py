"""The relevance floor and the skill body gate (SPEC §6.1 rules 2 and 5, issue 15 items 2–3):
pure functions over one query's :class:`talos.evidence.Evidence`, every constant derived on the
dev split (``bench/README.md`` "Relevance floor on the contiguity ranking", "The block's
trade-off and the Chinese ranking", "Body gate on the evidence score").

A row is *evidence* for a query when its evidence score (activation × √Z, comparable across
query lengths) clears a floor, or when its own seed holds about the whole query. The block is
empty when the best seed is no evidence; it holds the rows whose own seed is near the best
one's and, beside them, contiguity neighbours that hold a part of the query themselves. A
skill earns its body only when it leads the other skills **and** matches the query itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from talos.contiguity import Links
from talos.evidence import Evidence

__all__ = [
    "BODY_FLOOR",
    "BODY_LEAD",
    "FLOOR",
    "NEIGHBOUR",
    "RELATIVE",
    "WHOLE",
    "deliver",
    "earns_body",
    "is_evidence",
    "lead_skill",
    "relevance_floor",
]

#: The absolute floor on the best *seed*'s evidence score (seed × √Z): the smallest value giving
#: ≥ 90% empty blocks for LoCoMo's other conversations and for the Chinese chores on dev
#: (0.65: LoCoMo kept 93% / other conversations empty 90%, Chinese kept 86% / chores 90%;
#: through ``Memory``, small-home rule on: 85.0% / 94.9%). 0.71 would give 90.3% through
#: ``Memory``, but ``talos init --example``'s "how should I format your answers" scores 0.659
#: and would get an empty block (``tune_lab.py block``, "gate").
FLOOR = 0.65
#: A seed that holds this share of the query's evidence is evidence whatever ``Z`` (a full
#: match at tf 1 is ``1/(K1+1)`` = 0.45): "deploy" in a home of three deploy facts has a tiny
#: ``Z`` over its candidates and would find nothing by the score alone.
WHOLE = 0.4
#: A row is evidence by itself when its own seed is ≥ this × the best seed. With
#: :data:`NEIGHBOUR` 0.5 on dev (LoCoMo non-gold rows per block / block keeps of the ranking's
#: R@5): 0.8 → 1.10 / 73.6%, **0.9 → 0.90 / 69.9%**, 0.95 → 0.82 / 67.5%, 1 → 0.72 / 65.7%
#: (``python3 bench/tune_lab.py block --data ../shared/bench``, "frontier"; bench/README "The
#: block's trade-off"). Issue 15's ≤ 1.0 non-gold rows and ≥ 90% kept are not both reachable
#: on dev (the frontier keeps 86% at 1.9 non-gold rows); this is the frontier's point under
#: 1.0 with the most kept and a margin (dev halves 0.97 and 0.74). The old 0.8 without the
#: neighbour rule: 1.68 / 84.4%.
RELATIVE = 0.9
#: A row reached by contiguity is delivered beside its evidence row only when its own seed is
#: ≥ this × the best seed: it holds a part of the query itself. Dev, at :data:`RELATIVE` 0.9:
#: no such rule (0) → LoCoMo 1.44 non-gold rows / 80.1% kept, 0.3 → 1.06 / 72.5%, 0.4 → 0.98 /
#: 71.5%, **0.5 → 0.90 / 69.9%**, 0.6 → 0.81 / 67.6%, no row reached by contiguity → 0.71 /
#: 64.4%.
NEIGHBOUR = 0.5
#: The body gate's lead rule: the best skill's score ≥ 1.2 × the second skill's.
BODY_LEAD = 1.2
#: The floor on the best skill's own seed evidence (without CJK unigrams), with the small-home
#: rule ``Memory`` applies (``evidence.SMALL_HOME``). The old 0.59 (``evidence``'s row floor,
#: fitted without that rule) decided 87.5% of ``bench/bodies_home``'s 40 labelled queries
#: right through ``Memory.recall``: the rule raises ``Z`` in a small home, and "explain what a
#: python decorator is" got the python-project-setup body. On the *tune* half every floor from
#: 0.8 to 1.2 is 100% right; ``talos init --example``'s six skill queries ("upgrade the rust
#: toolchain", "bump rust to the latest version", …) keep their body up to 1.0; **0.9** is the
#: centre of both: tune 100%, *check* half 95%, all 97.5% (0.59: 95% / 80%; 0.8: 100% / 90%;
#: 1.0: 100% / 95%; 1.2: 100% / 90%, 4 of the 6 example bodies). Command: ``python3
#: bench/bodies.py`` (the ``evidence`` row); bench/README "The body floor with the small-home
#: rule".
BODY_FLOOR = 0.9


def is_evidence(seed: float, activation: float, scale: float, floor: float, whole: float) -> bool:
    """Whether a row is evidence for the query: its evidence score ``activation × scale``
    clears ``floor``, or its own ``seed`` holds ``whole`` of the query's evidence (see
    :data:`WHOLE`). ``scale`` is ``Evidence.scale`` (√Z)."""
    return activation * scale >= floor or seed >= whole


def relevance_floor(
    activations: Sequence[float],
    seeds: Sequence[float],
    scale: float,
    floor: float = 0.59,
    whole: float = WHOLE,
    relative: float = 0.7,
    k: int = 5,
) -> int:
    """``evidence``'s floor without contiguity: how many of the first ``k`` rows of a ranking
    (activations and seeds, best first) to deliver — none when the best row is no evidence
    (:func:`is_evidence` on its final activation), else the prefix scoring ≥ ``relative`` ×
    the best. Dev (``rank_lab.py floor``): 0.59 / 0.7 → LoCoMo 1.49 non-gold rows, 78% kept,
    91% empty for other conversations."""
    if not len(activations) or not is_evidence(seeds[0], activations[0], scale, floor, whole):
        return 0
    top = activations[0]
    n = 0
    for x in activations[:k]:
        if x < relative * top:
            break
        n += 1
    return n


def deliver(
    ev: Evidence,
    top: Sequence[int],
    graph: Links,
    floor: float = FLOOR,
    whole: float = WHOLE,
    relative: float = RELATIVE,
    beside: bool = True,
    after: bool = True,
    neighbour: float = NEIGHBOUR,
) -> list[int]:
    """The rows of a block (issue 15 item 2): nodes of ``top`` (the ranking's first ``k``,
    best first), in block order; ``[]`` is an empty block.

    - The block is empty unless the best *seed* is evidence (:func:`is_evidence` on the seed,
      before spreading: seeds are the same with or without contiguity, so the floor means the
      same in every home; :data:`FLOOR`).
    - A row is evidence by itself when its own seed ≥ ``relative`` × the best seed, or holds
      ``whole`` of the query's evidence (:data:`WHOLE`): a fact that holds every word of a
      short query is not cut because a skill holds them more often ("upgrade rust
      dependencies": the cargo fact, seed 0.455, under the rust-upgrade skill's 0.568). Such
      a row joins a block that has a row near the best seed, hands to no contiguity
      neighbour, and takes its place in rank order (dev LoCoMo 0.90 / 69.9% → 0.93 / 70.6%;
      in a block of its own too 0.97 / 70.6%, with its neighbours 0.97 / 70.6%).
    - ``beside``: a row of ``top`` that is not is delivered when a row that is evidence by
      itself hands to it along contiguity and its own seed ≥ ``neighbour`` × the best seed
      (:data:`NEIGHBOUR`), right after the one that hands it the largest share (ties: the
      better ranked); otherwise it is not delivered. ``after``: only a row written after that
      neighbour (dev: such rows are gold 13-21% of the time, rows written before it 1-7%).

    Dev, through ``Memory`` (``tune_lab.py block``): LoCoMo 0.93 non-gold rows / 70.6% kept /
    86.2% empty for other conversations, 99.2% for chores; Chinese set 0.49 / 59.5% / chores
    94.9% (the old relative 0.8 without the neighbour rule: 1.68 / 84.4%, 0.95 / 74.7%).
    """
    if ev.z <= 0 or not len(top):
        return []
    best = float(ev.seeds.max())
    if not is_evidence(best, best, ev.scale, floor, whole):
        return []
    own = [int(n) for n in top if ev.seeds[n] >= relative * best]
    if not own:  # the best seed spread below the first k: no row near it
        return []
    held = {int(n) for n in top if ev.seeds[n] >= whole}  # hands to no neighbour (see above)
    if not beside:
        return [int(n) for n in top if int(n) in held or int(n) in set(own)]
    mine = set(own) | held
    by: dict[int, list[int]] = {n: [] for n in own}
    for m in (int(x) for x in top):
        if m in mine or ev.seeds[m] < neighbour * best:
            continue
        hands = [
            (graph.share_of(n, m), -i, n)
            for i, n in enumerate(own)
            if m in graph.neighbours(n, after)
        ]
        if hands:
            by[max(hands)[2]].append(m)  # beside the row that hands it the most (the nearest)
    return [x for n in (int(t) for t in top) if n in mine for x in (n, *by.get(n, ()))]


def lead_skill(
    order: Sequence[int],
    is_skill: Callable[[int], bool],
    final: Sequence[float],
    k: int = 5,
    lead: float | None = BODY_LEAD,
    holds_all: Callable[[int], bool] | None = None,
) -> int | None:
    """The lead rule of SPEC §6.1 rule 2 on this ranking: the best skill of ``order`` (the whole
    ranking, best first), when it is among the first ``k`` rows and scores ≥ ``lead`` × the
    second skill (a lone skill needs no lead; ``lead`` None: no lead rule); else None.

    ``holds_all(node)``: whether a skill holds every term of the query (its label, in
    :func:`talos.selection.body_of`); a near tie is the best skill's when it does and the
    second does not. Two skills whose descriptions differ in one word tied on their shared
    words: the exact description of ``deploy-staging`` led ``deploy-production`` 1.17 to 1,
    below the lead, and got no body (the attacker's pass)."""
    skills = [i for i in order if is_skill(i)]
    if not skills or skills[0] not in order[:k]:
        return None
    best = skills[0]
    near = lead is not None and len(skills) > 1 and final[best] < lead * final[skills[1]]
    if near and (holds_all is None or not holds_all(best) or holds_all(skills[1])):
        return None
    return best


def earns_body(
    order: Sequence[int],
    is_skill: Callable[[int], bool],
    final: Sequence[float],
    own_evidence: Callable[[int], tuple[float, float]],
    k: int = 5,
    lead: float | None = BODY_LEAD,
    floor: float = BODY_FLOOR,
    whole: float = WHOLE,
    holds_all: Callable[[int], bool] | None = None,
) -> int | None:
    """The skill that earns its body, or None (issue 15 item 3): :func:`lead_skill`, and the
    skill matches the query itself — ``own_evidence(node)`` = ``(its seed, √Z)`` over the
    query's terms *without CJK unigrams* is evidence (:func:`is_evidence` with ``floor``,
    ``whole``). Without that second rule the best of several unrelated skills won its body
    ("set up a new python project with lint" → the Kubernetes rollout skill, via "new"); with
    CJK unigrams, shared characters (这 个 函 数) gave 18% of the Chinese chores a body.
    Dev: 95% of ``bench/bodies_home``'s 40 labelled queries decided right (lead alone: 72%).
    ``holds_all``: breaks a near tie of the lead rule (:func:`lead_skill`)."""
    best = lead_skill(order, is_skill, final, k, lead, holds_all)
    if best is None:
        return None
    seed, scale = own_evidence(best)
    return best if is_evidence(seed, seed, scale, floor, whole) else None
