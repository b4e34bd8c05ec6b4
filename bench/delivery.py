"""What a block *delivers*, and the block metrics of issue 15 (item 7), for any ranker.

Recall@k measures the ranking; a person pastes the block. A *delivery* is a ranking plus a cut
rule: the rows the block holds. The metrics here only need that, so a baseline's top-k, a
prototype cut on any ranker, ``Memory.recall`` itself (:class:`RecallDelivery`: the floor as
it ships) or a fused ranking are all measured by one function.

- :class:`Scored`: a ranking with scores (``rows[i]`` = the memory ids row ``i`` stands for)
  and query-level numbers a cut may use (``info``, e.g. the query's best possible seed mass).
- A *cut* is ``Scored -> list[int]`` (the delivered row positions, in block order):
  :func:`top_k` (today's rule: the top k above a threshold) and :func:`floor_cut` (an absolute
  floor on the best row, a relative floor against it, on raw or normalised scores).
- :func:`block_metrics`: per answerable question, Recall@5 of the ranking and of the block,
  the block's non-gold rows, whether it is empty; per unrelated query, whether it is empty.
  :func:`summarise` turns lists of those into the table numbers; :func:`bootstrap` gives a
  mean's 95% interval (paired when two methods' values are subtracted first).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

__all__ = [
    "Block",
    "Cut",
    "Delivery",
    "RecallDelivery",
    "Scored",
    "ScoredRanker",
    "auc",
    "block_metrics",
    "bootstrap",
    "floor_cut",
    "summarise",
    "top_k",
    "two_part_floor",
]


@dataclass(slots=True)
class Scored:
    """A ranking with its scores, best first; ``info`` holds query-level numbers (optional).

    ``rows`` may be the full ranking or a long prefix of it (at least the k a cut looks at).
    ``seeds``: each row's own evidence before spreading, when the ranker knows it.
    """

    rows: list[list[str]]
    scores: list[float]
    info: dict[str, float] = field(default_factory=dict)
    seeds: list[float] = field(default_factory=list)


class ScoredRanker(Protocol):
    """A ranker built for one memory pool: ``scored(query)`` gives its :class:`Scored`."""

    def scored(self, query: str) -> Scored: ...


#: A cut rule: the positions of the delivered rows.
Cut = Callable[[Scored], list[int]]


def top_k(k: int = 5, thresh: float | None = None) -> Cut:
    """Today's rule: the first ``k`` rows scoring above ``thresh`` (every row when ``None``)."""

    def cut(s: Scored) -> list[int]:
        n = min(k, len(s.rows))
        if thresh is not None:
            n = sum(1 for x in s.scores[:n] if x > thresh)
        return list(range(n))

    return cut


def floor_cut(
    k: int = 5,
    absolute: float = 0.0,
    relative: float = 0.0,
    factor: str | Callable[[Scored], float] | None = None,
) -> Cut:
    """A relevance floor (issue 15 item 2): of the first ``k`` rows, those scoring at least
    ``absolute`` and at least ``relative`` × the best row (nothing when no row clears the
    absolute floor: the block is empty).

    ``factor``: multiply every score by ``info[factor]`` (or by ``factor(scored)``) first: a
    query-level scale, e.g. a power of the number of query terms, so that one absolute floor
    means the same for short and long queries; a missing factor counts 0.
    """

    def cut(s: Scored) -> list[int]:
        if not s.rows:
            return []
        if factor is None:
            f = 1.0
        elif callable(factor):
            f = factor(s)
        else:
            f = s.info.get(factor, 0.0)
        best = s.scores[0] * f
        if best <= 0:
            return []
        out = []
        for i, x in enumerate(s.scores[:k]):
            if x * f >= absolute and x * f >= relative * best:
                out.append(i)
            else:
                break
        return out

    return cut


def two_part_floor(
    k: int = 5, fraction: float = 0.2, equivalents: float = 1.7, relative: float = 0.0
) -> Cut:
    """A floor for short and long queries at once (``docs/benchmarks.md``, "Tried and
    dropped"): a row is evidence when its score (a fraction of the query's hub weight) is at
    least ``fraction``, *or* its score × ``info["known"]`` (the query terms some node holds:
    about how many average query terms the row matches) is at least ``equivalents``; and it
    scores at least ``relative`` × the best row. The first part serves short questions, the second
    whole dialogues, whose every row holds a small fraction of a long query."""

    def cut(s: Scored) -> list[int]:
        if not s.rows or s.scores[0] <= 0:
            return []
        known = s.info.get("known", 0.0)
        best = s.scores[0]
        out = []
        for i, x in enumerate(s.scores[:k]):
            if (x >= fraction or x * known >= equivalents) and x >= relative * best:
                out.append(i)
            else:
                break
        return out

    return cut


@dataclass(slots=True)
class Block:
    """One delivered block: ``ranking`` (the ranking's rows, at least the top 5), ``rows``
    (the delivered rows, in block order), ``body`` (a skill body was delivered; ``None``
    when the source cannot tell)."""

    ranking: list[list[str]]
    rows: list[list[str]]
    body: bool | None = None


class Delivery(Protocol):
    """Anything that turns a query into a :class:`Block`."""

    def block(self, query: str) -> Block: ...


@dataclass(slots=True)
class CutDelivery:
    """A :class:`ScoredRanker` and a cut: the block is the cut's rows of the ranking."""

    ranker: ScoredRanker
    cut: Cut

    def block(self, query: str) -> Block:
        """The ranking's rows and the rows the cut keeps."""
        s = self.ranker.scored(query)
        return Block(s.rows, [s.rows[i] for i in self.cut(s)])


class RecallDelivery:
    """The block ``Memory.recall`` itself delivers (its ``picked`` rows and body flag),
    beside the ranking ``Memory.explain`` shows: whatever cut ``talos/`` applies (today's
    top k above THRESH, tomorrow's relevance floor) is measured as it ships.

    Args:
        memory: a :class:`talos.Memory`. ids: ``node -> [memory ids]`` (what a row stands
            for; :meth:`rankers.TalosRanker._ids` for the bench homes). k: rows asked for.
    """

    def __init__(self, memory: Any, ids: Callable[[Any], list[str]], k: int = 5) -> None:
        self.memory = memory
        self.ids = ids
        self.k = k

    def block(self, query: str) -> Block:
        """``Memory.recall(query, k)``'s rows (this writes a trace line and usage counts in
        the home, as every recall does) and the top 10 of ``explain``."""
        got = self.memory.recall(query, k=self.k)
        ranking = [self.ids(r.node) for r in self.memory.explain(query, k=10)]
        return Block(ranking, [self.ids(r.node) for r in got.picked], got.bodies > 0)


def block_metrics(block: Block, gold: Sequence[str] | None, k: int = 5) -> dict[str, float]:
    """The block numbers of one query.

    Answerable (``gold`` given): ``R@k`` of the ranking, ``block R@k`` (gold ids in the
    delivered rows / gold ids; delivered rows beyond the ranking's top k count too, a cut may
    reorder), ``non-gold`` (delivered rows holding no gold id), ``rows``, ``empty`` (0/1).
    Unrelated (``gold`` is ``None``): ``rows`` and ``empty``. ``body`` (0/1) when known.
    """
    out: dict[str, float] = {"rows": float(len(block.rows)), "empty": float(not block.rows)}
    if block.body is not None:
        out["body"] = float(block.body)
    if gold is None:
        return out
    want = set(gold)
    ranked = {i for row in block.ranking[:k] for i in row} & want
    got = {i for row in block.rows for i in row} & want
    out[f"R@{k}"] = len(ranked) / len(want)
    out[f"block R@{k}"] = len(got) / len(want)
    out["non-gold"] = float(sum(1 for row in block.rows if not want.intersection(row)))
    return out


def summarise(
    answerable: Sequence[dict[str, float]], unrelated: Sequence[dict[str, float]], k: int = 5
) -> dict[str, float]:
    """Table numbers: ``n``, ``R@k`` and ``block R@k`` (means), ``kept`` (block R@k / R@k),
    ``non-gold/block`` (mean over answerable questions, empty blocks count 0), ``empty
    answerable`` (share), ``n unrelated``, ``empty unrelated`` (share), ``body`` (share of
    all queries with a known body flag). NaN where there is nothing to average."""

    def mean(xs: Sequence[float]) -> float:
        return sum(xs) / len(xs) if xs else math.nan

    r = mean([m[f"R@{k}"] for m in answerable])
    br = mean([m[f"block R@{k}"] for m in answerable])
    bodies = [m["body"] for m in (*answerable, *unrelated) if "body" in m]
    return {
        "n": float(len(answerable)),
        f"R@{k}": r,
        f"block R@{k}": br,
        "kept": br / r if r and not math.isnan(r) else math.nan,
        "non-gold/block": mean([m["non-gold"] for m in answerable]),
        "rows/block": mean([m["rows"] for m in answerable]),
        "empty answerable": mean([m["empty"] for m in answerable]),
        "n unrelated": float(len(unrelated)),
        "empty unrelated": mean([m["empty"] for m in unrelated]),
        "body": mean(bodies),
    }


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """Area under the ROC curve of a score separating ``positive`` from ``negative``
    (the probability that a random positive scores above a random negative; ties count ½)."""
    if not positive or not negative:
        return math.nan
    pairs = sorted([(x, 1) for x in positive] + [(x, 0) for x in negative])
    # rank-sum (Mann-Whitney U) with average ranks for ties
    rank_sum, i, n = 0.0, 0, len(pairs)
    while i < n:
        j = i
        while j < n and pairs[j][0] == pairs[i][0]:
            j += 1
        avg = (i + j + 1) / 2  # ranks i+1 … j
        rank_sum += avg * sum(1 for _x, p in pairs[i:j] if p)
        i = j
    npos, nneg = len(positive), len(negative)
    return (rank_sum - npos * (npos + 1) / 2) / (npos * nneg)


def bootstrap(values: np.ndarray, n: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of the mean of ``values`` over ``n`` resamples (seeded by
    ``seed`` and the length, so two methods' values of one question set get the same
    resamples: their difference is a paired one). ``(nan, nan)`` when empty or ``n <= 0``."""
    if len(values) == 0 or n <= 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng([seed, len(values)])
    idx = rng.integers(0, len(values), size=(n, len(values)))
    lo, hi = np.percentile(values[idx].mean(axis=1), [2.5, 97.5])
    return (float(lo), float(hi))
