#!/usr/bin/env python3
"""Dev-split research for contiguity edges (``bench/contiguity.py``, issue 15).

Reads only the dev split (``rank_lab.prepare``); nothing here loads a test question. Terms and
seeds are ``rank_lab``'s (the recommended analyzer, the ``evidence`` model); a pool's lines are
its memories in file order, each in the context of its observed date (the bench protocol: a
LoCoMo turn carries its session's date, so a context run is a session; ``--headings`` adds a
``## Session N`` heading per LoCoMo session, which parts the lines the same way and adds the
heading's terms to each turn's matching text, for every method alike).

- ``potential``: where the gold turns the ranking misses sit, against the rows it ranks first
  (how many a contiguity hop could reach).
- ``sweep``: the configurations of a stage, each logged (``bench/contiguity_sweep.jsonl``),
  then the log summarised per family.
- ``table``: the recommended model against tuned BM25 and ``evidence``, paired bootstrap CIs;
  per LoCoMo category; the Chinese set by source.
- ``floor``: block metrics of the relevance floor on the new ranking (a contiguity-reached
  row delivered only beside the row that reached it).
- ``invariants``: ``rank_lab``'s SPEC §10 cases on the contiguity model.
- ``cost``: per-query time on a ``make_home.py`` home, beside ``evidence`` in one run.

    python3 bench/contiguity_lab.py potential --data ../shared/bench
    python3 bench/contiguity_lab.py sweep --stage main --data ../shared/bench
    python3 bench/contiguity_lab.py table --data ../shared/bench
    python3 bench/contiguity_lab.py floor --data ../shared/bench
    python3 bench/contiguity_lab.py invariants
    python3 bench/contiguity_lab.py cost --data ../shared/bench --sessions 30000
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contiguity as C
import numpy as np
import rank_lab as L
import rank_model as M
import relevance as R
from datasets import DEFAULT_DATA, Item, Store, load_all
from delivery import Block, block_metrics, summarise
from relevance import SETS, bootstrap
from rich.console import Console

#: The recommended contiguity constants (README "Contiguity").
RECOMMENDED = C.Params()
#: The sweep log of this lab: one JSON line per configuration tried on dev.
SWEEP_LOG = Path(__file__).resolve().parent / "contiguity_sweep.jsonl"


@dataclass(slots=True)
class Lab:
    """The dev pools (``rank_lab.LabPool``), each with its lines' contexts."""

    pools: list[L.LabPool]
    contexts: list[list[tuple[tuple[str, ...], str]]]
    cache: dict[tuple, C.Links]

    ends: str = "keep"

    def links(self, i: int, p: C.Params) -> C.Links:
        """Pool ``i``'s contiguity edges under ``p`` (cached per edge parameters);
        :attr:`ends` ``"pass"`` (a research variant): every node with an edge hands on all of
        ``C`` (its shares rescaled to sum to 1, a run's end lines included)."""
        key = (i, p.window, p.back, p.fall, p.positions, self.ends)
        got = self.cache.get(key)
        if got is None:
            lp = self.pools[i]
            got = C.links(
                lp.index.node_of,
                self.contexts[i],
                lp.index.n,
                p.window,
                p.back,
                p.fall,
                p.positions,
            )
            if self.ends == "pass" and got.edges:
                share = got.share / got.out[got.src]
                got = replace(got, share=share, out=(got.out > 0).astype(float))
            elif self.ends == "drop" and got.edges:  # a run's end leaks the missing share
                got = replace(got, out=(got.out > 0).astype(float))
            self.cache[key] = got
        return got


def session_of(item_id: str) -> str:
    """A LoCoMo turn's session number (``D3:12`` → ``3``)."""
    return item_id[1:].split(":", 1)[0]


def with_headings(store: Store) -> Store:
    """A LoCoMo store whose turns carry their session's heading in their text (what item 4's
    heading context adds to a turn's matching text, for every method alike)."""
    items = [Item(it.id, f"Session {session_of(it.id)}: {it.text}", it.date) for it in store.items]
    return Store(store.name, store.split, items, store.questions)


def prepare(data: Path, limit: int = 0, headings: bool = False) -> Lab:
    """The dev pools as ``rank_lab.prepare`` makes them, with each line's context
    ``(headings, date)``; ``headings``: a LoCoMo session is a ``## Session N`` section (its
    heading part of each turn's context and matching text, BM25's included)."""
    pools, contexts = [], []
    for p in R.pools(load_all(data), ["dev"], limit):
        loc = headings and p.dataset == "locomo"
        if loc:
            p = replace(p, store=with_headings(p.store))
        idx = L.pool_index(p)
        lp = L.LabPool(p, idx)
        lp.answerable = [(M.query_vector(idx, L.ANALYZER.terms(q)), g) for _o, q, g in p.answerable]
        lp.unrelated = [(M.query_vector(idx, L.ANALYZER.terms(q)), k) for _o, q, k in p.unrelated]
        pools.append(lp)
        contexts.append(
            [((f"Session {session_of(it.id)}",) if loc else (), it.date) for it in p.store.items]
        )
    return Lab(pools, contexts, {})


def evaluate(lab: Lab, p: C.Params) -> dict[str, dict[str, np.ndarray]]:
    """Per-question dev metrics of the contiguity model under ``p``."""
    out: dict[str, dict[str, list[float]]] = {}
    for i, lp in enumerate(lab.pools):
        d = out.setdefault(lp.pool.set, {})
        g = lab.links(i, p)
        for q, gold in lp.answerable:
            ev = C.activate(lp.index, g, q, p)
            rows = [lp.index.ids[j] for j in L.ranked(ev.final, 10)]
            for m, v in L.metrics(rows, gold).items():
                d.setdefault(m, []).append(v)
    return {s: {m: np.array(v) for m, v in d.items()} for s, d in out.items()}


def bm25_contiguity(lab: Lab, p: C.Params) -> dict[str, dict[str, np.ndarray]]:
    """Per-question dev metrics of the tuned BM25 (``bm25-uni``) with the same contiguity hops
    (its scores as seeds, no keyword hop): how much of the gain the structure gives any
    lexical ranker."""
    from baselines import BM25Terms

    out: dict[str, dict[str, list[float]]] = {}
    for i, lp in enumerate(lab.pools):
        d = out.setdefault(lp.pool.set, {})
        k1, b = R.BM25_PARAMS[(lp.pool.lang, True)]
        bm = BM25Terms(lp.pool.store, L.ANALYZER, k1, b)
        g = lab.links(i, p)
        node = {it.id: lp.index.node_of[j] for j, it in enumerate(lp.pool.store.items)}
        for (_o, query, gold), _qg in zip(lp.pool.answerable, lp.answerable, strict=True):
            sc = bm.scored(query)
            s = np.zeros(lp.index.n)
            for row, x in zip(sc.rows, sc.scores, strict=True):
                n = node[row[0]]
                if n >= 0:
                    s[n] = max(s[n], x)
            a = C.spread(lp.index, g, s, 0.0, p.share) if s.any() else s
            rows = [lp.index.ids[j] for j in L.ranked(a, 10)]
            for m, v in L.metrics(rows, gold).items():
                d.setdefault(m, []).append(v)
    return {s: {m: np.array(v) for m, v in d.items()} for s, d in out.items()}


def categories(lab: Lab, s: str) -> np.ndarray:
    """Each answerable question's category (LoCoMo) or source (the Chinese set), in
    :func:`evaluate`'s order."""
    out = []
    for lp in lab.pools:
        if lp.pool.set != s:
            continue
        cat = {(q.query, tuple(q.gold)): q.category for q in lp.pool.store.questions}
        for _o, q, g in lp.pool.answerable:
            out.append(cat[(q, tuple(g))] if lp.pool.dataset == "locomo" else lp.pool.dataset)
    return np.array(out)


def params_dict(p: C.Params) -> dict[str, Any]:
    """``p`` as a JSON-able dict (the ``evidence`` constants under ``base``)."""
    return asdict(p)


def log_row(name: str, p: C.Params, res: dict[str, dict[str, np.ndarray]], extra: str = "") -> dict:
    """One sweep-log row: a configuration and its dev means."""
    row = L.log_row(name, params_dict(p), res)
    if extra:
        row["prep"] = extra
    return row


def append_log(rows: Iterable[dict]) -> None:
    """Add rows to :data:`SWEEP_LOG` unless one of the same name, params and prep is there."""
    have = set()
    if SWEEP_LOG.exists():
        for line in SWEEP_LOG.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            have.add((r["name"], json.dumps(r["params"], sort_keys=True), r.get("prep", "")))
    with SWEEP_LOG.open("a", encoding="utf-8") as f:
        for r in rows:
            key = (r["name"], json.dumps(r["params"], sort_keys=True), r.get("prep", ""))
            if key not in have:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
                have.add(key)


def fmt(res: dict[str, dict[str, np.ndarray]]) -> str:
    """``R@5 LoCoMo / Chinese / MADial en``."""
    return " / ".join(f"{res[s]['R@5'].mean():.3f}" for s in SETS if s in res)


# -- potential ------------------------------------------------------------------------------


def cmd_potential(console: Console, lab: Lab) -> None:
    """How many gold memories outside ``evidence``'s top 5 sit next to (same context run,
    within ``w`` lines, before / after) a row of its top 1 / top 5."""
    for s in SETS:
        tally: dict[str, int] = {}
        for i, lp in enumerate(lab.pools):
            if lp.pool.set != s:
                continue
            items = lp.pool.store.items
            ctx = lab.contexts[i]
            pos = {it.id: j for j, it in enumerate(items)}
            node_of = lp.index.node_of
            for q, gold in lp.answerable:
                ev = M.activate(lp.index, q, L.RECOMMENDED)
                order = [int(x) for x in L.ranked(ev.final)]
                rank = {n: r for r, n in enumerate(order)}
                tops = {"top 1": set(order[:1]), "top 5": set(order[:5])}
                for g in gold:
                    tally["gold"] = tally.get("gold", 0) + 1
                    j = pos[g]
                    r = rank.get(node_of[j], 10**9)
                    band = (
                        "in top 5" if r < 5 else "6-10" if r < 10 else "11-30" if r < 30 else "> 30"
                    )
                    tally[band] = tally.get(band, 0) + 1
                    if r < 5:
                        continue
                    for w in (1, 2, 3):
                        for side, sign in (("after", -1), ("before", 1)):
                            near = {
                                node_of[x]
                                for x in range(j - w, j + w + 1)
                                if 0 <= x < len(items) and ctx[x] == ctx[j] and (x - j) * sign > 0
                            }
                            for t, S in tops.items():
                                if near & S:
                                    key = f"w {w}: right {side} a row of the {t}"
                                    tally[key] = tally.get(key, 0) + 1
        console.print(f"[bold]{s}[/]")
        for k in sorted(tally, key=lambda k: (not k.startswith(("gold", "in", "6", "11", ">")), k)):
            console.print(f"  {k}: {tally[k]}")


# -- sweep ----------------------------------------------------------------------------------

BASE = M.Params()


def stage(name: str) -> list[tuple[str, C.Params]]:
    """The configurations of a sweep stage (each a name and its params)."""
    out: list[tuple[str, C.Params]] = []
    if name == "main":  # share × window × direction, the rest at their defaults
        for share, w, back in itertools.product(
            (0.1, 0.2, 0.3, 0.5, 0.7, 0.9), (1, 2, 3), (0.0, 0.5, 1.0)
        ):
            p = C.Params(share=share, window=w, back=back)
            out.append((f"main C={share:g} w={w} back={back:g}", p))
    elif name == "fine":  # around the best of main: fall, back > 1, C between the cells
        for share, w, back, fall in itertools.product(
            (0.4, 0.5, 0.6), (1, 2, 3), (0.75, 1.0, 1.5), (0.5, 1.0)
        ):
            if w == 1 and fall != 0.5:
                continue  # fall weighs the lines beyond the first only
            p = C.Params(share=share, window=w, back=back, fall=fall)
            out.append((f"fine C={share:g} w={w} back={back:g} fall={fall:g}", p))
    elif name == "gate":  # only strong seeds hand on along contiguity
        for share, w, gate in itertools.product((0.3, 0.5, 0.7), (1, 2), (0.2, 0.4, 0.6, 0.8)):
            p = C.Params(share=share, window=w, gate=gate)
            out.append((f"gate C={share:g} w={w} gate={gate:g}", p))
    elif name == "hops":  # contiguity in the first hop only
        for share, w in itertools.product((0.3, 0.5, 0.7, 0.9), (1, 2, 3)):
            p = C.Params(share=share, window=w, hops=1)
            out.append((f"hops C={share:g} w={w} contiguity hops=1", p))
    elif name == "decay":  # contiguity against the keyword hop's weight D
        for share, w, d in itertools.product((0.3, 0.5, 0.7), (1, 2), (0.0, 0.05, 0.25, 0.5, 1.0)):
            p = C.Params(share=share, window=w, base=replace(BASE, decay=d))
            out.append((f"decay C={share:g} w={w} D={d:g}", p))
    elif name == "positions":  # a merged node's lines: all, or its representative's
        for share, w, pos in itertools.product((0.5,), (1, 2), ("all", "last")):
            p = C.Params(share=share, window=w, positions=pos)
            out.append((f"positions C={share:g} w={w} {pos}", p))
    elif name in ("ends", "ends-drop"):  # a run's end lines: hand on all of C (shares
        # rescaled per sender), or lose the share of the line that is not there
        how = "drop" if name == "ends-drop" else "pass"
        for share, w in itertools.product((0.3, 0.5, 0.7, 0.9), (1, 2)):
            p = C.Params(share=share, window=w)
            out.append((f"ends {how} C={share:g} w={w}", p))
    elif name == "undated":  # the recommended edges with no date rule
        for share, w in itertools.product((0.3, 0.5, 0.7), (1, 2)):
            out.append((f"undated C={share:g} w={w}", C.Params(share=share, window=w)))
    elif name == "symmetric":  # the symmetric family on a finer grid of C
        for share, w in itertools.product(
            (0.4, 0.45, 0.55, 0.6, 0.65, 0.75, 0.8, 0.85, 0.95), (1, 2)
        ):
            p = C.Params(share=share, window=w)
            out.append((f"symmetric C={share:g} w={w}", p))
    return out


#: Families of the sweep log by the start of a row's name (what each family tried).
FAMILIES: tuple[tuple[str, str], ...] = (
    ("main", "share C × window w × backward weight (0: forward only), fall 0.5"),
    ("fine", "around the best of main: C 0.4-0.6, w 1-3, back 0.75-1.5, fall 0.5 / 1"),
    ("symmetric", "back 1, w 1 / 2, a finer grid of C"),
    ("gate", "only nodes whose seed ≥ gate × the best seed hand on along contiguity"),
    ("hops", "contiguity in the first hop only"),
    ("decay", "the keyword hop's D against contiguity's C"),
    ("positions", "a merged node's lines: all of them, or its representative's"),
    ("ends pass", "a run's end lines hand on all of C (shares rescaled per sender)"),
    ("ends drop", "a run's end lines lose the share of the missing line (not conserving)"),
    ("undated", "every line of a pool in one context (the date rule removed)"),
    ("table", "the recommended model (table)"),
    ("neighbourhood", "the recommended model, one constant changed at a time (table)"),
)


def family(name: str) -> str:
    """The :data:`FAMILIES` key a sweep-log row belongs to ("other" when none)."""
    got = [k for k, _w in FAMILIES if name.startswith(k)]
    return max(got, key=len) if got else "other"


def params_of(d: dict[str, Any]) -> C.Params:
    """A logged ``params`` dict back as :class:`contiguity.Params`."""
    return C.Params(**{**d, "base": M.Params(**d["base"])})


def cmd_summary(console: Console, data: Path, rerun: bool) -> None:
    """The sweep log per family (best row by the mean of LoCoMo and Chinese R@5);
    ``rerun``: recompute every row and report the numbers that differ."""
    rows = [json.loads(x) for x in SWEEP_LOG.read_text(encoding="utf-8").splitlines()]
    if rerun:
        labs: dict[str, Lab] = {}
        bad = 0
        for r in rows:
            prep = r.get("prep", "")
            if prep not in labs:
                lab = prepare(data, 0, "headings" in prep)
                if "ends=" in prep:
                    lab.ends = prep.split("ends=", 1)[1].split(",")[0]
                if "contexts=undated" in prep:
                    lab.contexts = [[((), "")] * len(c) for c in lab.contexts]
                labs[prep] = lab
            got = evaluate(labs[prep], params_of(r["params"]))
            for s, ms in r["dev"].items():
                for m, v in ms.items():
                    if abs(float(got[s][m].mean()) - v) > 5e-5:
                        bad += 1
                        console.print(f"differs: {r['name']} {s} {m}: {v} now {got[s][m].mean()}")
        console.print(f"rerun: {len(rows)} rows, {bad} numbers differ\n")

    def mean(r: dict) -> float:
        return (r["dev"]["LoCoMo 1-4"]["R@5"] + r["dev"]["Chinese set"]["R@5"]) / 2

    t = L._table(
        f"Contiguity sweep log ({len(rows)} configurations on dev): per family, the best row "
        "by the mean of LoCoMo and Chinese R@5 (evidence 0.580 / 0.708, tuned BM25 0.580 / "
        "0.691)",
        [
            "family",
            "what",
            "rows",
            "best R@5 LoCoMo / Chinese / MADial en (R@1 LoCoMo)",
            "LoCoMo range",
        ],
    )
    for key, what in FAMILIES:
        got = [r for r in rows if family(r["name"]) == key]
        if not got:
            continue
        best = max(got, key=mean)
        cells = " / ".join(f"{best['dev'][s]['R@5']:.3f}" for s in SETS)
        lo = [r["dev"]["LoCoMo 1-4"]["R@5"] for r in got]
        t.add_row(
            key,
            what,
            str(len(got)),
            f"{cells} ({best['dev']['LoCoMo 1-4']['R@1']:.3f}; {best['name']}"
            + (f", {best['prep']}" if best.get("prep") else "")
            + ")",
            f"{min(lo):.3f} – {max(lo):.3f}",
        )
    console.print(t)


def cmd_sweep(console: Console, lab: Lab, name: str, prep: str) -> None:
    """Run one stage (each configuration logged), print it."""
    rows = []
    if name == "undated":  # every line of a pool in one context: the date rule removed
        lab.contexts = [[((), "")] * len(c) for c in lab.contexts]
        lab.cache.clear()
        prep = ",".join(x for x in (prep, "contexts=undated") if x)
    if name.startswith("ends"):
        lab.ends = "drop" if name == "ends-drop" else "pass"
        prep = ",".join(x for x in (prep, f"ends={lab.ends}") if x)
    for label, p in stage(name):
        t = time.time()
        res = evaluate(lab, p)
        rows.append(log_row(label, p, res, prep))
        r1 = " / ".join(f"{res[s]['R@1'].mean():.3f}" for s in SETS if s in res)
        console.print(f"{label}: R@5 {fmt(res)}, R@1 {r1}  ({time.time() - t:.1f} s)")
    append_log(rows)


# -- table ----------------------------------------------------------------------------------


def ci(v: np.ndarray, boot: int) -> str:
    """``mean [lo, hi]``."""
    lo, hi = bootstrap(v, boot)
    return f"{v.mean():.3f} [{lo:.3f}, {hi:.3f}]"


def dci(a: np.ndarray, b: np.ndarray, boot: int) -> str:
    """The paired difference ``a - b`` with its 95% bootstrap interval."""
    return "{:+.3f} [{:+.3f}, {:+.3f}]".format(*L.delta(a, b, boot))


def cmd_table(console: Console, lab: Lab, boot: int, prep: str) -> None:
    """The recommended model against tuned BM25 and ``evidence`` (paired CIs), per LoCoMo
    category and Chinese source, and the neighbourhood of its constants (logged)."""
    res = {
        "evidence + contiguity": evaluate(lab, RECOMMENDED),
        "evidence": L.evaluate(lab.pools),
        "bm25 (tuned)": L.baseline(lab.pools, "bm25"),
        "bm25 + contiguity (check)": bm25_contiguity(lab, RECOMMENDED),
    }
    rows = [log_row("table recommended", RECOMMENDED, res["evidence + contiguity"], prep)]
    t = L._table(
        "Dev split: R@5 with 95% bootstrap CI; Δ = paired differences",
        ["set", "method", "n", "R@1", "R@5", "Δ vs bm25", "Δ vs evidence", "R@10", "MRR"],
    )
    base, ev = res["bm25 (tuned)"], res["evidence"]
    for s in SETS:
        for name, r in res.items():
            v = r[s]["R@5"]
            t.add_row(
                s,
                name,
                str(len(v)),
                f"{r[s]['R@1'].mean():.3f}",
                ci(v, boot),
                "" if name == "bm25 (tuned)" else dci(v, base[s]["R@5"], boot),
                dci(v, ev[s]["R@5"], boot) if name == "evidence + contiguity" else "",
                f"{r[s]['R@10'].mean():.3f}",
                f"{r[s]['MRR'].mean():.3f}",
            )
        t.add_section()
    console.print(t)
    for s in ("LoCoMo 1-4", "Chinese set"):
        cats = categories(lab, s)
        t = L._table(
            f"{s} by category / source: R@5 (n); Δ paired vs bm25",
            ["part", "n", *res, "Δ contiguity vs bm25"],
        )
        for c in sorted(set(cats)):
            m = cats == c
            t.add_row(
                c,
                str(int(m.sum())),
                *(f"{r[s]['R@5'][m].mean():.3f}" for r in res.values()),
                dci(res["evidence + contiguity"][s]["R@5"][m], base[s]["R@5"][m], boot),
            )
        console.print(t)
    grid = [
        ("share", (0.3, 0.5, 0.6, 0.7, 0.8, 0.9)),
        ("window", (1, 2, 3)),
        ("back", (0.0, 0.5, 0.75, 1.0)),
        ("decay", (0.0, 0.05, 0.1, 0.25)),
    ]
    t = L._table(
        "Neighbourhood of the recommended constants (one changed at a time): dev R@5 LoCoMo / "
        "Chinese / MADial en",
        ["constant", "value", "R@5", "Δ vs bm25 LoCoMo", "Δ vs bm25 Chinese"],
    )
    for name, values in grid:
        for v in values:
            if name == "decay":
                p = replace(RECOMMENDED, base=replace(RECOMMENDED.base, decay=v))
                mark = v == RECOMMENDED.base.decay
            else:
                p = replace(RECOMMENDED, **{name: v})
                mark = v == getattr(RECOMMENDED, name)
            r = evaluate(lab, p)
            rows.append(log_row(f"neighbourhood {name}={v:g}", p, r, prep))
            t.add_row(
                name,
                f"{v:g}{' ←' if mark else ''}",
                fmt(r),
                dci(r["LoCoMo 1-4"]["R@5"], base["LoCoMo 1-4"]["R@5"], boot),
                dci(r["Chinese set"]["R@5"], base["Chinese set"]["R@5"], boot),
            )
    console.print(t)
    append_log(rows)


# -- floor ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Ranked:
    """One query's ranking: its evidence, first ``k`` nodes, the pool's index and links."""

    ev: M.Evidence
    top: np.ndarray
    index: M.TermIndex
    graph: C.Links

    def rows(self, nodes: Iterable[int]) -> list[list[str]]:
        """The memory ids of ``nodes``."""
        return [self.index.ids[n] for n in nodes]


def ranked_sets(lab: Lab, p: C.Params, k: int = 10) -> dict[str, dict[str, list]]:
    """``{set: {"answerable": [(Ranked, gold)], "unrelated": [(Ranked, kind)]}}``."""
    out: dict[str, dict[str, list]] = {}
    for i, lp in enumerate(lab.pools):
        d = out.setdefault(lp.pool.set, {"answerable": [], "unrelated": []})
        g = lab.links(i, p)
        for key, qs in (("answerable", lp.answerable), ("unrelated", lp.unrelated)):
            for q, x in qs:
                ev = C.activate(lp.index, g, q, p)
                d[key].append((Ranked(ev, L.ranked(ev.final, k), lp.index, g), x))
    return out


#: A cut on a :class:`Ranked`: the delivered nodes.
RankedCut = Callable[[Ranked], list[int]]


def seed_cut(
    floor: float, relative: float, beside: bool, whole: float = 0.4, after: bool = True
) -> RankedCut:
    """:func:`contiguity.deliver` over the first 5 rows, without the neighbour rule this lab
    predates (``talos.relevance.NEIGHBOUR``, ``bench/tune_lab.py``)."""
    return lambda r: C.deliver(
        r.ev, r.top[:5], r.graph, floor, whole, relative, beside, after, neighbour=0.0
    )


def final_cut(floor: float, relative: float, whole: float = 0.4) -> RankedCut:
    """``rank_model.relevance_floor`` on the final activations (``evidence``'s floor)."""

    def cut(r: Ranked) -> list[int]:
        top = r.top[:5]
        n = M.relevance_floor(
            r.ev.final[top].tolist(), r.ev.seeds[top].tolist(), r.ev.scale, floor, whole, relative
        )
        return [int(x) for x in top[:n]]

    return cut


def summary(d: dict[str, list], cut: RankedCut) -> dict[str, float]:
    """``delivery.summarise`` of a cut, with ``other`` / ``chores``: the shares of empty
    blocks for the two kinds of unrelated queries."""

    def blk(r: Ranked) -> Block:
        return Block(r.rows(r.top), r.rows(cut(r)))

    out = summarise([block_metrics(blk(r), g) for r, g in d["answerable"]], [])
    for kind in ("other", "chores"):
        ms = [block_metrics(blk(r), None) for r, k in d["unrelated"] if k == kind]
        out[kind] = summarise([], ms)["empty unrelated"]
    return out


def cell(x: dict[str, float]) -> str:
    """``non-gold / block R@5 (kept) / empty other · chores``."""
    return (
        f"{x['non-gold/block']:.2f} / {x['block R@5']:.3f} ({100 * x['kept']:.0f}%) / "
        f"{100 * x['other']:.0f}% · {100 * x['chores']:.0f}%"
    )


def gate_floor(S: dict[str, dict[str, list]], whole: float = 0.4, on: str = "seed") -> float:
    """The smallest seed-evidence floor (0.01 steps) giving ≥ 90% empty blocks for LoCoMo's
    other conversations and for the Chinese chores (the issue's definitions of unrelated);
    ``on="final"``: the same for ``evidence``'s floor on the final activation."""
    for f in np.arange(0.30, 1.001, 0.01):
        cut = seed_cut(float(f), 0.0, False, whole) if on == "seed" else final_cut(float(f), 0.0)
        ok = all(
            np.mean([not cut(r) for r, k in S[s]["unrelated"] if k == kind]) >= 0.9
            for s, kind in (("LoCoMo 1-4", "other"), ("Chinese set", "chores"))
            if s in S
        )
        if ok:
            return round(float(f), 2)
    return 1.0


#: The recommended floor on the contiguity ranking: ``(floor, whole, relative)`` of
#: :func:`contiguity.deliver` (``beside=True``); ``floor`` from :func:`gate_floor`.
RECOMMENDED_FLOOR = (0.65, 0.4, 0.8)


def cmd_floor(console: Console, lab: Lab) -> None:
    """The gate's floor, the rules × relative frontier, the recommended floor (dev)."""
    S = ranked_sets(lab, RECOMMENDED)
    E = ranked_sets(lab, replace(RECOMMENDED, share=0.0))  # evidence, the same code path
    need = gate_floor(S)
    console.print(
        f"seed-evidence floor giving >= 90% empty blocks (LoCoMo other, Chinese chores): {need}"
    )
    t = L._table(
        "The gate's curve (relative 0, top 5 when the best seed is evidence): block R@5 kept / "
        "empty blocks, LoCoMo other conversations; the same, Chinese chores",
        ["floor", "LoCoMo kept", "LoCoMo other empty", "Chinese kept", "Chinese chores empty"],
    )
    for fl in np.arange(0.40, 0.801, 0.04):
        lo = summary(S["LoCoMo 1-4"], seed_cut(float(fl), 0.0, False))
        zh = summary(S["Chinese set"], seed_cut(float(fl), 0.0, False))
        t.add_row(
            f"{fl:.2f}",
            f"{100 * lo['kept']:.0f}%",
            f"{100 * lo['other']:.0f}%",
            f"{100 * zh['kept']:.0f}%",
            f"{100 * zh['chores']:.0f}%",
        )
    console.print(t)
    t = L._table(
        "Block metrics: non-gold rows per block / block R@5 (kept: of the ranking's R@5) / "
        "empty blocks for unrelated queries (other pools · chores)",
        ["ranking", "rule", "relative", *S],
    )
    fl = need
    rules: list[tuple[str, str, float, dict[str, dict[str, list]], RankedCut]] = []
    for rel in (0.0, 0.7, 0.8, 0.9):
        rules.append(
            (
                "evidence",
                "evidence's floor (final activation ≥ rel × best)",
                rel,
                E,
                final_cut(0.59, rel),
            )
        )
    fin = gate_floor(S, on="final")
    console.print(f"the same on the final activation (evidence's floor): {fin}")
    for rel in (0.0, 0.5, 0.7, 0.8, 0.9):
        rules.append(
            (
                "contiguity",
                f"evidence's floor, gate {fin:g} on the final",
                rel,
                S,
                final_cut(fin, rel),
            )
        )
    for rel in (0.5, 0.7, 0.8, 0.9):
        rules.append(("contiguity", "own seed ≥ rel × best seed", rel, S, seed_cut(fl, rel, False)))
    for rel in (0.5, 0.7, 0.8, 0.9, 0.95):
        rules.append(
            (
                "contiguity",
                "… + the rows it reaches by contiguity, beside it",
                rel,
                S,
                seed_cut(fl, rel, True, after=False),
            )
        )
    for rel in (0.5, 0.7, 0.8, 0.9, 0.95):
        rules.append(
            (
                "contiguity",
                "… + the rows it reaches written after it, beside it",
                rel,
                S,
                seed_cut(fl, rel, True),
            )
        )
    for name, rule, rel, data, cut in rules:
        mark = " ←" if "after it" in rule and rel == RECOMMENDED_FLOOR[2] else ""
        t.add_row(name, rule, f"{rel:g}{mark}", *(cell(summary(d, cut)) for d in data.values()))
    console.print(t)

    def oracle(r: Ranked, gold: Sequence[str]) -> int:
        rows = r.rows(r.top[:5])
        hit = [i for i, row in enumerate(rows) if set(row) & set(gold)]
        return sum(1 for row in rows[: hit[-1] + 1] if not set(row) & set(gold)) if hit else 0

    console.print(
        "oracle cut (each block ends at its last gold row of the top 5), non-gold rows per "
        "block: "
        + ", ".join(
            f"{s} {np.mean([oracle(r, g) for r, g in d['answerable']]):.2f} (evidence "
            f"{np.mean([oracle(r, g) for r, g in E[s]['answerable']]):.2f})"
            for s, d in S.items()
        )
    )


class ContiguityDelivery:
    """The contiguity model for one memory pool as a ``delivery.Delivery`` (``relevance.py``'s
    ``contiguity`` and ``contiguity-floor`` prototypes, dev only): its lines are the store's
    items in order, each in the context of its date.

    Args:
        store: a ``datasets.Store``. floor: deliver with :data:`RECOMMENDED_FLOOR` (else the
            top 5). p: the constants."""

    def __init__(self, store: Store, floor: bool = False, p: C.Params = RECOMMENDED) -> None:
        self.index = L.pool_index(R.Pool("", "", "dev", 0, store))
        self.graph = C.links(
            self.index.node_of,
            [((), it.date) for it in store.items],
            self.index.n,
            p.window,
            p.back,
            p.fall,
            p.positions,
        )
        self.floor = floor
        self.p = p

    def block(self, query: str) -> Block:
        """The first 10 rows and the delivered ones."""
        ev = C.activate(
            self.index, self.graph, M.query_vector(self.index, L.ANALYZER.terms(query)), self.p
        )
        top = L.ranked(ev.final, 10)
        if self.floor:
            fl, whole, rel = RECOMMENDED_FLOOR
            got = C.deliver(ev, top[:5], self.graph, fl, whole, rel, neighbour=0.0)
        else:
            got = [int(n) for n in top[:5]]
        ids = self.index.ids
        return Block([ids[n] for n in top], [ids[n] for n in got])


# -- invariants -----------------------------------------------------------------------------


def home_model(
    home: Path, p: C.Params = RECOMMENDED
) -> tuple[M.TermIndex, list[str], list[str], C.Links]:
    """A home's facts and skills as ``rank_lab.home_index`` makes them, with the contiguity
    edges of its ``memory.md`` (each fact node at the lines of it and of its merged
    members, each line in its context, :func:`contiguity.memory_contexts`; skills are in no
    context)."""
    from talos import Memory
    from talos.text import drop_not_for

    with Memory(home) as mem:
        nodes = [n for n in mem.nodes() if n.kind in ("fact", "skill")]
    texts = [drop_not_for(n.body) if n.kind == "skill" else n.text for n in nodes]
    keyed = [[f"{n.kind}\x00{n.name or n.text}"] for n in nodes]
    idx = M.TermIndex.of_texts(texts, keyed, L.ANALYZER.terms)
    md = home / "memory.md"
    ctx = C.memory_contexts(md.read_text(encoding="utf-8")) if md.is_file() else {}
    lines = sorted(
        (line, idx.node_of[k])
        for k, n in enumerate(nodes)
        if n.kind == "fact"
        for line in [n.line, *(m.line for m in n.members)]
    )
    graph = C.links(
        [v for _l, v in lines],
        [ctx.get(ln) for ln, _v in lines],
        idx.n,
        p.window,
        p.back,
        p.fall,
        p.positions,
    )
    pairs = [idx.ids[i][0].split("\x00", 1) for i in range(idx.n)]
    return idx, [k for k, _l in pairs], [lab for _k, lab in pairs], graph


def activations(home: Path, query: str, p: C.Params = RECOMMENDED) -> dict[str, float]:
    """``kind:label -> final activation`` of every node the query activates (the contiguity
    model; ``rank_lab.check_invariants``'s ``model``)."""
    idx, kinds, labels, graph = home_model(home, p)
    ev = C.activate(idx, graph, M.query_vector(idx, L.ANALYZER.terms(query)), p)
    return {f"{kinds[i]}:{labels[i]}": float(ev.final[i]) for i in L.ranked(ev.final)}


def cmd_invariants(console: Console) -> None:
    """Every failed SPEC §10 / issue 5 invariant of the recommended contiguity model."""
    golden = Path(__file__).resolve().parent.parent / "tests" / "golden"
    with tempfile.TemporaryDirectory(prefix="talos-inv-") as tmp:
        fails = L.check_invariants(golden, Path(tmp), RECOMMENDED, activations)
        work = Path(tmp)
        for n in (1, 7, 40):
            idx, _k, _l, graph = home_model(L.english_bridge(work, n))
            console.print(f"en-bridge-{n}: {idx.n} nodes, {graph.edges} contiguity edges")
    console.print(f"evidence + contiguity, recommended constants: {len(fails)} failed")
    for f in fails:
        console.print(f"  {f}")


# -- bodies ---------------------------------------------------------------------------------


def body_gate(
    home: Path | tuple[M.TermIndex, list[str], list[str], C.Links],
    evidence_floor: float = L.RECOMMENDED_BODY,
    lead: float = 1.2,
    k: int = 5,
    p: C.Params = RECOMMENDED,
    whole: float = L.RECOMMENDED_FLOOR[1],
) -> Callable[[str], str | None]:
    """``rank_lab.body_gate`` on the contiguity ranking: the best skill among the first ``k``
    rows earns its body when it leads the second skill by ``lead``× and its own seed evidence
    (seeds over the query without CJK unigrams) clears the floor. Skills are in no context,
    so only the first condition can change: the facts they compete with are ranked anew."""
    idx, kinds, labels, graph = home_model(home, p) if isinstance(home, Path) else home

    def gate(query: str) -> str | None:
        terms = L.ANALYZER.terms(query)
        ev = C.activate(idx, graph, M.query_vector(idx, terms), p)
        order = L.ranked(ev.final)
        skills = [i for i in order if kinds[i] == "skill"]
        if not skills or skills[0] not in order[:k]:
            return None
        best = skills[0]
        if len(skills) > 1 and ev.final[best] < lead * ev.final[skills[1]]:
            return None
        q = M.query_vector(idx, [t for t in terms if not L.is_unigram(t)])
        seeds, z = M.seeds(idx, q, p.base)
        s = float(seeds[best])
        return (
            labels[best] if M.is_evidence(s, s, float(np.sqrt(z)), evidence_floor, whole) else None
        )

    return gate


def cmd_bodies(console: Console, data: Path, sessions: int) -> None:
    """The body gate on ``bench/bodies_home`` (its memory.md has headings: contexts) and the
    body rate on a ``make_home.py`` home, ``evidence``'s ranking beside the contiguity one."""
    import subprocess

    import bodies
    from chores import CHORES_EN, CHORES_ZH

    with tempfile.TemporaryDirectory(prefix="talos-bodies-") as tmp:
        home = bodies.copy_home(Path(tmp))
        built = home_model(home)
        off = home_model(home, replace(RECOMMENDED, share=0.0))
        console.print(f"bodies_home: {built[0].n} nodes, {built[3].edges} contiguity edges")
        rows = [
            ("evidence (rank_lab gate)", bodies.score(L.body_gate(home, L.RECOMMENDED_BODY))),
            (
                "evidence, this code (share 0)",
                bodies.score(body_gate(off, p=replace(RECOMMENDED, share=0.0))),
            ),
            ("evidence + contiguity", bodies.score(body_gate(built))),
        ]
        console.print(bodies.table("Body gate, bench/bodies_home (40 queries)", rows))
        if not sessions:
            return
        mh = Path(tmp) / "mh"
        subprocess.run(
            [sys.executable, str(data / "make_home.py"), str(mh), "--sessions", str(sessions)],
            check=True,
            capture_output=True,
        )
        gates = {
            "evidence": body_gate(
                home_model(mh, replace(RECOMMENDED, share=0.0)), p=replace(RECOMMENDED, share=0.0)
            ),
            "evidence + contiguity": body_gate(home_model(mh)),
        }
        qs = L._dev_questions(data)
        sets = {
            "English chores": list(CHORES_EN),
            "Chinese chores": list(CHORES_ZH),
            "LoCoMo dev questions": [q for s, q in qs if s == "LoCoMo 1-4"],
            "Chinese set dev questions": [q for s, q in qs if s == "Chinese set"],
        }
        t = L._table(
            f"Body rate on a make_home.py home ({sessions} sessions; facts + skills)",
            ["queries", "", "n", *gates],
        )
        for name, got in sets.items():
            rates = [sum(g(q) is not None for q in got) / len(got) for g in gates.values()]
            t.add_row(name, "", str(len(got)), *(f"{100 * r:.0f}%" for r in rates))
        console.print(t)


# -- cost -----------------------------------------------------------------------------------


def cmd_cost(
    console: Console, data: Path, sessions: int, reps: int, one_context: bool = False
) -> None:
    """Per-query time of ``evidence`` and of ``evidence`` + contiguity on one ``make_home.py``
    home (facts, skills, episodes; the facts' contexts from its ``memory.md``, or all in one
    context: ``one_context``), timed in turns query by query (medians); the edges' build
    time."""
    import subprocess

    from chores import CHORES_EN, CHORES_ZH

    from talos import Memory
    from talos import evidence as E
    from talos.analyzer import analyze
    from talos.relevance import deliver
    from talos.text import drop_not_for

    with tempfile.TemporaryDirectory(prefix="talos-cost-") as tmp:
        home = Path(tmp) / "home"
        subprocess.run(
            [sys.executable, str(data / "make_home.py"), str(home), "--sessions", str(sessions)],
            check=True,
            capture_output=True,
        )
        with Memory(home) as mem:
            nodes = mem.nodes()
        texts = [drop_not_for(n.body) if n.kind == "skill" else n.text for n in nodes]
        t0 = time.perf_counter()
        idx = M.TermIndex.of_texts(texts, [[str(i)] for i in range(len(texts))], L.ANALYZER.terms)
        analysed = time.perf_counter() - t0
        t0 = time.perf_counter()  # what an index file would hold: the node-major arrays
        E.TermIndex.from_arrays(idx.vocab, idx.ptr, idx.term, idx.tf, idx.ids, idx.cjk)
        arrays = time.perf_counter() - t0
        ctx = C.memory_contexts((home / "memory.md").read_text(encoding="utf-8"))
        t0 = time.perf_counter()
        lines = sorted(
            (line, idx.node_of[k])
            for k, n in enumerate(nodes)
            if n.kind == "fact"
            for line in [n.line, *(m.line for m in n.members)]
        )
        where = [ctx.get(ln) for ln, _v in lines]
        if one_context:  # the most edges a home of these facts can have
            where = [((), "") for _ in where]
        graph = C.links(
            [v for _l, v in lines],
            where,
            idx.n,
            RECOMMENDED.window,
            RECOMMENDED.back,
            RECOMMENDED.fall,
            RECOMMENDED.positions,
        )
        build = time.perf_counter() - t0
        lo = [q for s, q in L._dev_questions(data) if s == "LoCoMo 1-4"]
        chores = [*CHORES_EN, *CHORES_ZH]
        qs = [*lo[: max(0, reps - len(chores))], *chores][:reps]
        whole = (
            "talos, whole query (analyze, activate with contiguity, rank, deliver, body evidence)"
        )
        times: dict[str, list[float]] = {"evidence": [], "evidence + contiguity": [], whole: []}
        for q in qs:
            qv = M.query_vector(idx, L.ANALYZER.terms(q))
            t = time.perf_counter()
            M.activate(idx, qv, RECOMMENDED.base)
            times["evidence"].append(time.perf_counter() - t)
            t = time.perf_counter()
            C.activate(idx, graph, qv, RECOMMENDED)
            times["evidence + contiguity"].append(time.perf_counter() - t)
            t = time.perf_counter()
            terms = analyze(q)
            ev = E.activate(idx, E.query_vector(idx, terms), graph=graph)
            deliver(ev, L.ranked(ev.final, 10)[:5], graph)
            E.body_evidence(idx, terms)
            times[whole].append(time.perf_counter() - t)
    facts = sum(1 for n in nodes if n.kind == "fact")
    console.print(
        f"make_home.py --sessions {sessions}: {idx.n:,} nodes ({facts:,} facts), "
        f"{len(idx.term):,} node-term entries, {graph.edges:,} contiguity edges (built in "
        f"{1000 * build:.0f} ms); {len(qs)} queries (LoCoMo dev questions and the chores)"
    )
    console.print(
        f"  term index: analysing every node {analysed:.1f} s; from its stored arrays "
        f"(TermIndex.from_arrays) {1000 * arrays:.0f} ms"
    )
    med = {k: 1000 * statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        console.print(
            f"  {k}: median {med[k]:.2f} ms, p90 {1000 * float(np.quantile(v, 0.9)):.2f} ms"
        )
    console.print(f"  ratio: {med['evidence + contiguity'] / med['evidence']:.2f}×")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "command", choices=["potential", "sweep", "table", "floor", "bodies", "invariants", "cost"]
    )
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--stage", default="main")
    ap.add_argument("--headings", action="store_true")
    ap.add_argument("--rerun", action="store_true", help="sweep --stage summary: recompute")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--sessions", type=int, default=30000)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--one-context", action="store_true", help="cost: every fact in one context")
    args = ap.parse_args(argv)
    console = Console(width=max(Console().width, 200))
    start = time.time()
    if args.command == "invariants":
        cmd_invariants(console)
    elif args.command == "sweep" and args.stage == "summary":
        cmd_summary(console, args.data, args.rerun)
    elif args.command == "bodies":
        cmd_bodies(console, args.data, args.sessions if args.sessions != 30000 else 0)
    elif args.command == "cost":
        cmd_cost(console, args.data, args.sessions, args.reps, args.one_context)
    elif args.command in ("potential", "sweep", "table", "floor"):
        lab = prepare(args.data, args.limit, args.headings)
        if not lab.pools:
            print(f"no datasets under {args.data}", file=sys.stderr)
            return 1
        if args.command == "potential":
            cmd_potential(console, lab)
        elif args.command == "sweep":
            cmd_sweep(console, lab, args.stage, "headings" if args.headings else "")
        elif args.command == "table":
            cmd_table(console, lab, args.bootstrap, "headings" if args.headings else "")
        else:
            cmd_floor(console, lab)
    console.print(f"{time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
