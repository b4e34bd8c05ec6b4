#!/usr/bin/env python3
"""Tuning the ``evidence`` block and the Chinese ranking through talos's own kept state (issue 15).

Every pool of ``relevance.pools`` is written as a home and opened as ``Memory(model="evidence")``
(``rankers.TalosRanker``); each query is activated once by ``Memory._evidence`` (the same term
index, contiguity edges and small-home rule as ``Memory.recall``) and its :class:`Evidence`
kept, so that many delivery rules (``talos.relevance.deliver`` and variants) are scored in one
process without re-ranking. ``--split dev`` is what is tuned on; ``--split test`` is run once,
for the report.

    python3 bench/tune_lab.py block --data ../shared/bench            # the delivery grid, dev
    python3 bench/tune_lab.py rank --data ../shared/bench             # the Chinese ranking, dev
    python3 bench/tune_lab.py block --data ../shared/bench --split test --only shipped

The data is read in place and never copied into the repository.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import relevance as R
from analyzer import Analyzer
from baselines import BM25Terms
from datasets import DEFAULT_DATA, load_all
from delivery import Block, block_metrics, summarise
from rankers import TalosRanker

from talos import evidence as E
from talos.analyzer import analyze, is_cjk
from talos.contiguity import Links
from talos.evidence import Evidence, TermIndex
from talos.relevance import FLOOR, WHOLE, deliver, is_evidence
from talos.render import Pick, _entry
from talos.selection import evidence_order

#: What a row's date adds to its entry (``(2023-05-08) ``), counted before rows carried it.
DATE_CHARS = 13


@dataclass(frozen=True, slots=True)
class Variant:
    """A ranking variant for the Chinese set: ``p`` (the model's constants), ``unigram`` (the
    weight of a single CJK character's query term, 1 = as shipped), ``k1_cjk`` (``K1`` of CJK
    terms; None: ``p.k1``), ``decay_cjk`` (``D`` when the query holds a CJK term; None:
    ``p.decay``), ``prior`` (the background prior ``L``; None: ``evidence.PRIOR``, 0: none)."""

    p: E.Params = field(default_factory=E.Params)
    unigram: float = 1.0
    k1_cjk: float | None = None
    decay_cjk: float | None = None
    prior: float | None = None


def variant_seeds(index: TermIndex, q: E.Query, v: Variant) -> tuple[np.ndarray, float]:
    """``talos.evidence.seeds`` with the small-home rule, the background prior and
    :class:`Variant`'s switches (the same floats as it at ``Variant()``)."""
    acc = np.zeros(index.n)
    if not q.known:
        return acc, 0.0
    p = v.p
    prior = E.PRIOR if v.prior is None else v.prior
    zero_k, zero_u = np.zeros(len(q.ids)), np.zeros(len(q.unknown))
    common = q.common if q.common is not None and prior > 0 else zero_k
    common_u = q.unknown_common if q.unknown_common is not None and prior > 0 else zero_u
    starts = index.kptr[q.ids]
    lens = index.kptr[q.ids + 1] - starts
    pos = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
    nodes, tf = index.knode[pos], index.ktf[pos]
    n, mean_cjk = E.collection(index, nodes)
    df = index.df[q.ids]
    qw = E.sat_query(q.qtf, p.k3)
    words, cjk_n = E.SMALL_HOME
    n_t = np.where(index.cjk[q.ids], max(n, cjk_n), max(n, words))
    w = qw * np.minimum(np.log1p((n_t - df + 0.5) / (df + 0.5)), E.language_idf(common, prior))
    if v.unigram != 1.0:
        uni = np.array([len(index.vocab[t]) == 1 for t in q.ids]) & index.cjk[q.ids]
        w = np.where(uni, w * v.unigram, w)
    n_unknown = max(n, words)
    idf_u = np.minimum(np.log1p((n_unknown - 0.5) / 1.5), E.language_idf(common_u, prior))
    z = float(w.sum() + (E.sat_query(q.unknown, p.k3) * idf_u).sum())
    k1c = p.k1 if v.k1_cjk is None else v.k1_cjk
    k = np.full(len(nodes), p.k1)
    cjk = np.repeat(index.cjk[q.ids], lens)
    k[cjk] = k1c * (1 - p.b_cjk + p.b_cjk * index.cjk_len[nodes[cjk]] / mean_cjk)
    norm = np.where(cjk, (k1c + 1) / (p.k1 + 1), 1.0)  # sat/(K1+1) of each term's own K1
    contrib = np.repeat(w, lens) * tf / (tf + k) * norm
    acc = np.bincount(nodes, weights=contrib, minlength=index.n)
    return acc / z, z


def variant_ev(a: Asked, v: Variant) -> Evidence:
    """``Memory._evidence`` of ``a``'s query under ``v``."""
    q = E.query_vector(a.index, a.terms)
    s, z = variant_seeds(a.index, q, v)
    if z <= 0 or not s.any():
        return Evidence(s, s, z)
    decay = v.p.decay
    if v.decay_cjk is not None and any(is_cjk(t) for t in a.terms):
        decay = v.decay_cjk
    return Evidence(E.spread(a.index, s, decay, a.graph), s, z)


@dataclass(slots=True)
class Asked:
    """One query's activation over one pool: ``kind`` (``answerable``, ``other``, ``chores``),
    ``gold`` (ids; empty for unrelated), the first 10 nodes, and the pool's index and edges."""

    kind: str
    gold: list[str]
    ev: Evidence
    top: list[int]
    index: TermIndex
    graph: Links
    ids: Callable[[int], list[str]]
    terms: list[str] = field(default_factory=list)
    source: str = ""
    bm25: float = float("nan")  # the tuned BM25's R@5 (answerable; ``asked(bm25=True)``)
    order: list[int] = field(default_factory=list)  # the first 50 nodes of the ranking
    size: Callable[[int], int] | None = None  # a node's entry in the block, in characters


def asked(
    data: Path, split: str, limit: int = 0, bm25: bool = False, sets: Sequence[str] = ()
) -> dict[str, list[Asked]]:
    """``{set: [Asked, ...]}`` of every pool of ``split`` (answerable, then unrelated);
    ``bm25``: each answerable query's R@5 under ``relevance.py``'s tuned ``bm25`` too;
    ``sets``: only these report sets (all when empty)."""
    out: dict[str, list[Asked]] = {}
    for pool in R.pools(load_all(data), [split], limit):
        if sets and pool.set not in sets:
            continue
        base = None
        if bm25:
            k1, b = R.BM25_PARAMS[(pool.lang, False)]
            base = BM25Terms(pool.store, Analyzer(unigrams=False), k1, b)
        with tempfile.TemporaryDirectory(prefix="talos-tune-") as tmp:
            ranker = TalosRanker(pool.store, "bipartite", Path(tmp))
            mem = ranker.memory
            mem.model = "evidence"
            graph = mem.view()[1]
            nodes = graph.nodes

            def ids(i: int, nodes=nodes, ranker=ranker) -> list[str]:  # type: ignore[no-untyped-def]
                return ranker._ids(nodes[i])

            def sizer(i: int, nodes=nodes, mem=mem, lang=pool.lang) -> int:  # type: ignore[no-untyped-def]
                pick = Pick(nodes[i], 0.0, False, mem.heading(nodes[i]))
                return len(_entry(pick, lang)) + 1 + DATE_CHARS

            got = out.setdefault(pool.set, [])
            qs = [("answerable", q, g) for _o, q, g in pool.answerable]
            qs += [(kind, q, []) for _o, q, kind in pool.unrelated]
            for kind, q, gold in qs:
                terms = analyze(q)
                index, edges, ev = mem._terms(graph, terms)
                order = evidence_order(ev.final, 50).tolist()
                a = Asked(kind, gold, ev, order[:10], index, edges, ids, terms, pool.dataset)
                a.order, a.size = order, sizer
                if base is not None and kind == "answerable":
                    a.bm25 = recall5(base.scored(q).rows, gold)
                got.append(a)
            mem.close()
    return out


def recall5(rows: Sequence[list[str]], gold: Sequence[str]) -> float:
    """Gold ids in the first 5 rows / gold ids."""
    want = set(gold)
    return len({i for r in rows[:5] for i in r} & want) / len(want)


def ranking_r5(a: Asked, ev: Evidence) -> float:
    """R@5 of the ``evidence`` ranking of ``ev``."""
    return recall5([a.ids(n) for n in evidence_order(ev.final, 5).tolist()], a.gold)


#: A delivery rule: the delivered nodes of one query, in block order.
Rule = Callable[[Asked], list[int]]


def shipped(a: Asked) -> list[int]:
    """``talos.relevance.deliver`` as it ships, over the first 5 rows (no budget)."""
    return deliver(a.ev, a.top[:5])


def gated(floor: float) -> Rule:
    """The top 5 when the best seed is evidence at ``floor``, else nothing (the gate alone)."""

    def cut(a: Asked) -> list[int]:
        best = float(a.ev.seeds.max()) if a.ev.z > 0 else 0.0
        return a.top[:5] if a.top and is_evidence(best, best, a.ev.scale, floor, WHOLE) else []

    return cut


def halves(qs: Sequence[Asked]) -> tuple[list[Asked], list[Asked]]:
    """The queries of the even and of the odd pools (the pools in ``relevance.pools`` order)."""
    out: tuple[list[Asked], list[Asked]] = ([], [])
    seen: list[int] = []
    for a in qs:
        if not seen or seen[-1] != id(a.index):
            seen.append(id(a.index))
        out[(len(seen) - 1) % 2].append(a)
    return out


def score(qs: Sequence[Asked], rule: Rule) -> dict[str, float]:
    """``delivery.summarise`` of ``rule`` with ``other`` / ``chores`` (empty-block shares)."""

    def blk(a: Asked) -> Block:
        return Block([a.ids(n) for n in a.top], [a.ids(n) for n in rule(a)])

    out = summarise([block_metrics(blk(a), a.gold) for a in qs if a.kind == "answerable"], [])
    for kind in ("other", "chores"):
        ms = [block_metrics(blk(a), None) for a in qs if a.kind == kind]
        out[kind] = summarise([], ms)["empty unrelated"]
    return out


def cell(x: dict[str, float]) -> str:
    """``non-gold / kept / empty other · chores``."""
    return (
        f"{x['non-gold/block']:.2f} / {100 * x['kept']:.1f}% / "
        f"{100 * x['other']:.1f}% · {100 * x['chores']:.1f}%"
    )


def report(S: dict[str, list[Asked]], rules: Iterable[tuple[str, Rule]]) -> None:
    """One line per rule: each set's cell."""
    for name, rule in rules:
        print(f"{name:48s} " + " | ".join(f"{s[:7]} {cell(score(q, rule))}" for s, q in S.items()))


#: The Chinese set's dev queries of MADial zh's other category (the dialogue's last turn only):
#: no constant was chosen on them, so they check a variant off the tuned set.
CHECK_SET = ("Chinese last-turn", ("zh", [("madial-zh", ["last-turn"])]))


def rank_variants() -> list[tuple[str, Variant]]:
    """The one-constant-at-a-time neighbourhood of the shipped ranking, for CJK queries."""
    p = E.Params()
    out = [("shipped (K1 1.2, B_CJK 0.75, K3 1, D 0.1, unigram 1)", Variant())]
    out += [(f"unigram weight {u:g}", Variant(unigram=u)) for u in (0.0, 0.25, 0.5, 0.75)]
    out += [(f"K1 of CJK terms {k:g}", Variant(k1_cjk=k)) for k in (0.6, 0.9, 1.5, 2.0, 3.0)]
    out += [(f"B_CJK {b:g}", Variant(replace(p, b_cjk=b))) for b in (0.5, 0.6, 0.9, 1.0)]
    out += [(f"K3 {k:g}", Variant(replace(p, k3=k))) for k in (0.0, 0.5, 2.0, 5.0)]
    out += [(f"D for CJK queries {d:g}", Variant(decay_cjk=d)) for d in (0.0, 0.05, 0.2, 0.3)]
    return out


def cmd_rank(data: Path, split: str, limit: int) -> int:
    """R@5 of each :func:`rank_variants` on the Chinese set against the tuned BM25 (paired
    bootstrap CI), by source, by half of the pools, and on :data:`CHECK_SET`."""
    sets = {"Chinese set": R.SETS["Chinese set"], CHECK_SET[0]: CHECK_SET[1]}
    old = dict(R.SETS)
    R.SETS.clear()
    R.SETS.update(sets)
    try:
        S = asked(data, split, limit, bm25=True)
    finally:
        R.SETS.clear()
        R.SETS.update(old)
    main_q = [a for a in S["Chinese set"] if a.kind == "answerable"]
    check = [a for a in S.get(CHECK_SET[0], []) if a.kind == "answerable"]
    part = np.zeros(len(main_q), dtype=int)
    seen: list[int] = []
    for i, a in enumerate(main_q):
        if not seen or seen[-1] != id(a.index):
            seen.append(id(a.index))
        part[i] = (len(seen) - 1) % 2
    src = np.array([a.source for a in main_q])
    bm = np.array([a.bm25 for a in main_q])
    bc = np.array([a.bm25 for a in check])
    print(
        f"Chinese set {split}: {len(main_q)} questions, tuned BM25 {bm.mean():.3f} (halves "
        f"{bm[part == 0].mean():.3f} / {bm[part == 1].mean():.3f}); {CHECK_SET[0]}: "
        f"{len(check)}, BM25 {bc.mean():.3f}"
    )
    for name, v in rank_variants():
        r = np.array([ranking_r5(a, variant_ev(a, v)) for a in main_q])
        c = np.array([ranking_r5(a, variant_ev(a, v)) for a in check])
        lo, hi = R.bootstrap(r - bm)
        clo, chi = R.bootstrap(c - bc)
        print(
            f"{name:52s} R@5 {r.mean():.3f} Δ {(r - bm).mean():+.3f} [{lo:+.3f}, {hi:+.3f}] · "
            f"halves {r[part == 0].mean():.3f} / {r[part == 1].mean():.3f} · MADial zh "
            f"{r[src == 'madial-zh'].mean():.3f} · MemoryBank "
            f"{r[src == 'memorybank-cn'].mean():.3f}"
            f" · last-turn {c.mean():.3f} Δ {(c - bc).mean():+.3f} [{clo:+.3f}, {chi:+.3f}]"
        )
    return 0


HEADING_CHARS = 90  # the block's heading line and its newline


@dataclass(frozen=True, slots=True)
class Fill:
    """A budget rule: the block is empty unless the best seed is evidence at ``gate``
    (:func:`talos.relevance.is_evidence` with :data:`WHOLE`); then the ranking's rows, in
    rank order up to ``cap``, whose own evidence clears ``row`` — ``by`` ``"v"``: the
    evidence score ``final × √Z``; ``"idf"``: ``final × Z`` (idf units held); ``"none"``:
    every ranked row — fill ``budget`` characters (a prefix: the first row that does not fit
    ends the block)."""

    gate: float = FLOOR
    row: float = 0.0
    by: str = "v"
    budget: int = 2000
    cap: int = 50
    held: float = float("inf")  # or the best seed holds this much evidence (idf units)


def fill(a: Asked, f: Fill) -> list[int]:
    """The delivered nodes of ``a`` under ``f``."""
    ev = a.ev
    if ev.z <= 0 or not a.order:
        return []
    best = float(ev.seeds.max())
    if not is_evidence(best, best, ev.scale, f.gate, WHOLE) and best * ev.z < f.held:
        return []
    mult = ev.scale if f.by == "v" else ev.z if f.by == "idf" else 0.0
    room, out = f.budget - HEADING_CHARS, []
    assert a.size is not None
    for n in a.order[: f.cap]:
        if f.by != "none" and float(ev.final[n]) * mult < f.row and ev.seeds[n] < WHOLE:
            continue
        room -= a.size(n)
        if room < 0:
            break
        out.append(n)
    return out


def fill_score(qs: Sequence[Asked], f: Fill) -> dict[str, float]:
    """Block gold recall, R@5 and R@10 of the ranking, any gold, median and p90 size (chars),
    empty shares for ``other`` and ``chores``."""
    gold, any_, r5, r10, sizes = [], [], [], [], []
    empty: dict[str, list[bool]] = {"other": [], "chores": []}
    for a in qs:
        rows = fill(a, f)
        size = (HEADING_CHARS + sum(a.size(n) for n in rows)) if rows and a.size else 0
        if a.kind != "answerable":
            empty[a.kind].append(not rows)
            continue
        want = set(a.gold)
        got = {i for n in rows for i in a.ids(n)} & want
        gold.append(len(got) / len(want))
        any_.append(bool(got))
        ranked = [a.ids(n) for n in a.order]
        r5.append(recall5(ranked, a.gold))
        r10.append(len({i for r in ranked[:10] for i in r} & want) / len(want))
        sizes.append(size)
    return {
        "block": float(np.mean(gold)),
        "R@5": float(np.mean(r5)),
        "R@10": float(np.mean(r10)),
        "any": float(np.mean(any_)),
        "median": float(np.median(sizes)),
        "p90": float(np.percentile(sizes, 90)),
        "empty answerable": float(np.mean([s == 0 for s in sizes])),
        "other": float(np.mean(empty["other"])) if empty["other"] else float("nan"),
        "chores": float(np.mean(empty["chores"])) if empty["chores"] else float("nan"),
    }


def fill_report(S: dict[str, list[Asked]], rules: Iterable[tuple[str, Fill]]) -> None:
    """One line per set and rule."""
    for name, f in rules:
        for s, qs in S.items():
            x = fill_score(qs, f)
            print(
                f"{name:34s} {s[:11]:11s} block {x['block']:.3f} (R@5 {x['R@5']:.3f} R@10 "
                f"{x['R@10']:.3f}) any {x['any']:.2f} size {x['median']:.0f}/{x['p90']:.0f} "
                f"emptyA {x['empty answerable']:.2f} other {x['other']:.2f} "
                f"chores {x['chores']:.2f}",
                flush=True,
            )


def cmd_budget(S: dict[str, list[Asked]], budgets: Sequence[int]) -> int:
    """The budget grid (dev): the gate alone, then row floors by ``v`` and ``idf``."""
    rules: list[tuple[str, Fill]] = []
    if budgets[0] < 0:  # the second grid: the long-query gate and small row floors
        for h in (4.0, 4.5, 5.0):
            rules.append((f"F.65 H{h} none", Fill(held=h, by="none")))
            for r in (0.05, 0.1, 0.2):
                rules.append((f"F.65 H{h} v>={r}", Fill(held=h, row=r)))
            for r in (0.25, 0.5):
                rules.append((f"F.65 H{h} idf>={r}", Fill(held=h, row=r, by="idf")))
        rules.append(("F.7 H4.5 none", Fill(gate=0.7, held=4.5, by="none")))
        for b in (1500, 2500, 3000):
            rules.append((f"F.65 H4.5 none B{b}", Fill(held=4.5, by="none", budget=b)))
        fill_report(S, rules)
        return 0
    for b in budgets:
        rules.append((f"B{b} gate only", Fill(budget=b, by="none")))
        for r in (0.3, 0.5, 0.65, 0.8):
            rules.append((f"B{b} row v>={r}", Fill(row=r, budget=b)))
        for r in (1.0, 2.0, 3.0):
            rules.append((f"B{b} row idf>={r}", Fill(row=r, by="idf", budget=b)))
    for g in (0.4, 0.5, 0.55, 0.6, 0.65, 0.7):
        rules.append((f"B2000 gate {g} only", Fill(gate=g, by="none")))
    fill_report(S, rules)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("command", choices=["block", "rank", "budget"])
    ap.add_argument("--budget", type=int, action="append", help="budget (repeatable)")
    ap.add_argument(
        "--only", choices=["shipped"], help="only the shipped rule and the old one (the test split)"
    )
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--split", default="dev")
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args(argv)
    if args.command == "rank":
        return cmd_rank(args.data, args.split, args.limit)
    S = asked(args.data, args.split, args.limit)
    if args.command == "budget":
        return cmd_budget(S, args.budget or [2000])
    print("set: non-gold rows per block / block keeps of the ranking's R@5 / empty blocks for")
    print("unrelated queries: other pools · chores")
    report(S, [("shipped (first 5 rows)", shipped)])
    if args.only:
        return 0
    print("\n-- gate: the top 5 when the best seed is evidence at F")
    report(S, [(f"F {f:.2f}", gated(float(f))) for f in np.arange(0.60, 0.801, 0.01)])
    print("\n-- the shipped rule on each half of the dev pools (even / odd pools)")
    for s, qs in S.items():
        for h, part in zip(("even", "odd"), halves(qs), strict=True):
            print(f"{s} {h}: {cell(score(part, shipped))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
