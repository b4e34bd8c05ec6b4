"""The research variants behind ``bench/rank_sweep.jsonl`` (issue 15, dev split only).

Every configuration of the sweep log was computed with this module, a superset of
``bench/rank_model.py``'s model with switches for the ideas measured and dropped: IDF over the
home (``bm25``), a fixed reference size (``n0``), over the query's candidates (``local``) or
hub weights (``hub``, ``df ** -N0``); fixed, home-mean or candidate-mean length pivots;
query-term saturation ``k3``; spreading with weighted sends/receives or from the top ``m``
nodes only; IDF powers; a coordination factor; a CJK-unigram weight; dropping common query
terms; adjacent-word pairs and query-recency weights (prepared queries, :func:`prepare`).
``rank_lab.py sweep --rerun`` recomputes every logged row with :func:`rerun`.

Kept as written when measured (a record, not a model): the recommended model is
``bench/rank_model.py``.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

__all__ = ["Params", "TermIndex", "activate", "query_vector"]


@dataclass(frozen=True, slots=True)
class Params:
    """The model's constants (module docstring). ``idf``: ``"n0"`` (``ln(1 + N0/df)``),
    ``"bm25"`` (Lucene's ``ln(1 + (N - df + .5)/(df + .5))`` with the home's N: not
    invariant, for comparison), ``"hub"`` (``df ** -N0``). ``L``: reference length (``0``: the
    home's mean length, not invariant). ``df_cap``: query terms held by more than this share
    of the nodes are dropped (1.0: none). ``send``: a node hands on in equal parts per term
    (``equal``) or in proportion to the term's count (``tf``)."""

    k1: float = 1.2
    b: float = 0.5
    L: float = 10.0
    N0: float = 1000.0
    idf: str = "n0"
    k3: float = 0.0
    decay: float = 0.0
    hops: int = 2
    df_cap: float = 1.0
    send: str = "equal"
    recv: str = "equal"
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def with_(self, **kw: Any) -> Params:
        """A copy with some fields changed."""
        return replace(self, **kw)


class TermIndex:
    """One pool's nodes and their term counts as arrays.

    Node-major: node ``i`` holds terms ``term[ptr[i]:ptr[i+1]]`` (ids ascending) with counts
    ``tf[...]``. Term-major: term ``t`` is held by ``knode[kptr[t]:kptr[t+1]]`` (ascending)
    with counts ``ktf[...]``. ``length[i]`` = ``Σ tf`` of node ``i``; ``df[t]`` = holders.

    Args:
        counts: per node, ``{term: count}`` (no empty node).
        ids: per node, what the row stands for (memory ids).
    """

    def __init__(self, counts: Sequence[Counter[str]], ids: Sequence[list[str]]) -> None:
        vocab = sorted(set().union(*counts)) if counts else []
        self.vocab = vocab
        self.lookup = {t: i for i, t in enumerate(vocab)}
        self.ids = list(ids)
        rows = [sorted((self.lookup[t], c) for t, c in cnt.items()) for cnt in counts]
        self.ptr = np.zeros(len(rows) + 1, dtype=np.intp)
        np.cumsum([len(r) for r in rows], out=self.ptr[1:])
        self.term = np.array([t for r in rows for t, _c in r], dtype=np.intp)
        self.tf = np.array([c for r in rows for _t, c in r], dtype=np.float64)
        self.n = len(rows)
        self.counts = np.diff(self.ptr)
        self.length = np.add.reduceat(self.tf, self.ptr[:-1]) if self.n else np.zeros(0)
        self.df = np.bincount(self.term, minlength=len(vocab)).astype(np.float64)
        order = np.argsort(self.term, kind="stable")
        self.kptr = np.zeros(len(vocab) + 1, dtype=np.intp)
        np.cumsum(self.df.astype(np.intp), out=self.kptr[1:])
        self.entry_node = np.repeat(np.arange(self.n, dtype=np.intp), self.counts)
        self.knode = self.entry_node[order]
        self.ktf = self.tf[order]
        self.kind = np.array([term_kind(t) for t in vocab], dtype=np.intp)

    @classmethod
    def of_texts(
        cls,
        texts: Sequence[str],
        ids: Sequence[list[str]],
        terms: Callable[[str], Iterable[str]],
    ) -> TermIndex:
        """One node per text, texts with equal term *sets* merged (SPEC §5.1; the last one
        represents, its counts are used), texts without terms dropped."""
        groups: dict[frozenset[str], list[int]] = {}
        tl = [list(terms(t)) for t in texts]
        for i, ts in enumerate(tl):
            if ts:
                groups.setdefault(frozenset(ts), []).append(i)
        counts, node_ids = [], []
        for g in groups.values():
            counts.append(Counter(tl[g[-1]]))
            got: list[str] = []
            for m in g:
                got += [x for x in ids[m] if x not in got]
            node_ids.append(got)
        return cls(counts, node_ids)


#: Term kinds: a word (stemmed), a CJK character bigram, a CJK unigram, a word pair.
WORD, CJK2, CJK1, PAIR = 0, 1, 2, 3


def term_kind(t: str) -> int:
    """The kind of an analyzed term (:data:`WORD` …)."""
    if " " in t:
        return PAIR
    if "\u3040" <= t[0] <= "\ufaff" or "\uac00" <= t[0] <= "\ud7af":
        return CJK1 if len(t) == 1 else CJK2
    return WORD


def query_vector(index: TermIndex, terms: Sequence[str]) -> tuple[Any, Any, int]:
    """``(term ids, query counts, unknown)`` of a query's terms (with repeats): the known
    terms, ascending by id, and how many distinct terms no node holds."""
    c = Counter(terms)
    known = sorted((index.lookup[t], n) for t, n in c.items() if t in index.lookup)
    ids = np.array([t for t, _n in known], dtype=np.intp)
    qtf = np.array([n for _t, n in known], dtype=np.float64)
    return ids, qtf, len(c) - len(known)


def idf_of(index: TermIndex, df: Any, p: Params, nq: float = 0.0) -> Any:
    """The term weight of holders-count ``df`` (module docstring); ``nq``: the query's
    candidates (nodes holding a query term)."""
    if p.idf == "local":
        return np.log1p((nq - df + 0.5) / (df + 0.5))
    if p.idf == "n0":
        return np.log1p(p.N0 / np.maximum(df, 1.0))
    if p.idf == "bm25":
        return np.log1p((index.n - df + 0.5) / (df + 0.5))
    if p.idf == "hub":
        return np.maximum(df, 1.0) ** -p.N0
    raise ValueError(p.idf)


def seeds(index: TermIndex, q: tuple[Any, Any, int], p: Params) -> tuple[Any, float]:
    """``(seed array, normaliser Z)`` (module docstring); ``Z = 0`` when the query is empty."""
    ids, qtf, unknown = q
    n = index.n
    if p.df_cap < 1.0 and len(ids):
        keep = index.df[ids] <= p.df_cap * n
        ids, qtf = ids[keep], qtf[keep]
    qw = qtf * (p.k3 + 1) / (qtf + p.k3) if p.k3 > 0 else np.ones_like(qtf)
    acc = np.zeros(n)
    if not len(ids):
        return acc, 0.0
    starts, ends = index.kptr[ids], index.kptr[ids + 1]
    lens = ends - starts
    pos = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
    nodes = index.knode[pos]
    tf = index.ktf[pos]
    cand = np.unique(nodes)
    nq = float(len(cand))
    w = qw * idf_of(index, index.df[ids], p, nq)
    if p.extra.get("idfpow", 1.0) != 1.0:
        w = w ** p.extra["idfpow"] * qw ** (1 - p.extra["idfpow"])
    beta = p.extra.get("beta")
    if beta:
        beta = {int(k): v for k, v in beta.items()}  # JSON keys are strings
        w = w * np.array([beta.get(int(k), 1.0) for k in index.kind[ids]])
    z = float(w.sum() + unknown * idf_of(index, np.array([1.0]), p, nq)[0]) * (p.k1 + 1)
    if z <= 0:
        return acc, z
    if p.L > 0:
        L = p.L
    elif p.L < 0:  # the candidates' mean length
        L = float(index.length[cand].mean())
    else:
        L = float(index.length.mean())
    norm = p.k1 * (1 - p.b + p.b * index.length[nodes] / L)
    contrib = np.repeat(w, lens) * tf * (p.k1 + 1) / (tf + norm)
    acc = np.bincount(nodes, weights=contrib, minlength=n)
    coord = p.extra.get("coord", 0.0)
    if coord:
        matched = np.bincount(nodes, minlength=n)
        acc = acc * (matched / len(ids)) ** coord
    return acc / z, z


def spread(index: TermIndex, a: Any, p: Params, q: tuple[Any, Any, int] | None = None) -> list[Any]:
    """The levels of ``p.hops`` mass-conserving hops from ``a`` (module docstring)."""
    levels = [a]
    if p.decay <= 0 or p.hops <= 0:
        return levels
    keep = 1.0 / (1.0 + p.decay)
    give = p.decay * keep
    x = p.extra
    # send weights per entry, normalised per node
    wt = np.ones(len(index.term))
    if p.send == "tf":
        wt = wt * index.tf
    if x.get("alpha", 0):
        wt = wt * index.tf ** x["alpha"]
    if x.get("gamma", 0):
        wt = wt * np.log1p(x.get("n0s", 1000.0) / index.df[index.term]) ** x["gamma"]
    if x.get("dfpow", 0):
        wt = wt * index.df[index.term] ** -x["dfpow"]
    if x.get("noquery") and q is not None and len(q[0]):
        wt = wt * ~np.isin(index.term, q[0])
    if x.get("dfmax"):
        wt = wt * (index.df[index.term] <= x["dfmax"])
    tot = np.add.reduceat(wt, index.ptr[:-1])
    if x.get("absolute"):
        share = wt / np.repeat(index.counts, index.counts)
    else:
        share = wt / np.repeat(np.maximum(tot, 1e-300), index.counts)
    # receive weights per entry, normalised per term
    if p.recv == "equal":
        rw = 1.0 / index.df[index.term]
    elif p.recv == "sat":
        k1, b, L = x.get("rk1", 1.2), x.get("rb", 0.0), x.get("rL", 10.0)
        tf = index.tf
        r = tf * (k1 + 1) / (tf + k1 * (1 - b + b * np.repeat(index.length, index.counts) / L))
        rt = np.bincount(index.term, weights=r, minlength=len(index.df))
        rw = r / rt[index.term]
    else:
        raise ValueError(p.recv)
    top = x.get("top", 0)
    for _h in range(p.hops):
        src = a
        if top:
            src = np.zeros_like(a)
            sel = np.argsort(-a, kind="stable")[:top]
            src[sel] = a[sel]
        sent = src[index.entry_node] * share * give
        mass = np.bincount(index.term, weights=sent, minlength=len(index.df))
        got = np.add.reduceat(mass[index.term] * rw, index.ptr[:-1])
        a = a - src * give + got if top else a * keep + got
        levels.append(a)
    return levels


def activate(index: TermIndex, q: tuple[Any, Any, int], p: Params) -> tuple[Any, Any, float]:
    """``(final activation, seeds, Z)`` of one query (module docstring)."""
    s, z = seeds(index, q, p)
    if z <= 0 or not s.any():
        return s, s, z
    return spread(index, s, p, q)[-1], s, z


# -- the sweep log's preparations and its rerun -----------------------------------------------


def pair_terms(analyzer: Any, text: str) -> list[str]:
    """The analyzer's terms plus every pair of adjacent word terms (``"boot camp"``)."""
    ts = analyzer.terms(text)
    words = [t for t in ts if term_kind(t) == WORD]
    return [*ts, *(a + " " + b for a, b in itertools.pairwise(words))]


def recency_vector(index: TermIndex, analyzer: Any, text: str, half: float) -> tuple[Any, Any, int]:
    """A query vector whose counts are recency weights: each occurrence of a term counts
    ``2 ** (-d / half)``, ``d`` = characters from its token's end to the query's end."""
    import unicodedata

    import analyzer as az

    s = unicodedata.normalize("NFKC", text or "").lower()
    acc: dict[str, float] = {}
    for m in az._TOKEN.finditer(s):
        for t in analyzer.terms(m.group(0)):
            acc[t] = acc.get(t, 0.0) + 2.0 ** (-(len(s) - m.end()) / half)
    known = sorted((index.lookup[t], v) for t, v in acc.items() if t in index.lookup)
    ids = np.array([t for t, _v in known], dtype=np.intp)
    return ids, np.array([v for _t, v in known]), len(acc) - len(known)


def prepare(data: Any, prep: str = "plain") -> list[Any]:
    """The dev pools with this module's index: ``plain``, ``pairs`` (adjacent-word pairs as
    extra terms) or ``recency:H`` (recency-weighted query counts, half-life ``H`` chars)."""
    from datasets import load_all
    from rank_lab import ANALYZER, LabPool
    from relevance import pools

    terms = (lambda t: pair_terms(ANALYZER, t)) if prep == "pairs" else ANALYZER.terms
    out = []
    for p in pools(load_all(data), ["dev"]):
        by_text: dict[str, list[str]] = {}
        for it in p.store.items:
            by_text.setdefault(it.text, []).append(it.id)
        texts = [it.text for it in p.store.items]
        idx = TermIndex.of_texts(texts, [by_text[t] for t in texts], terms)
        lp = LabPool(p, idx)  # type: ignore[arg-type]
        if prep.startswith("recency:"):
            h = float(prep.split(":")[1])
            lp.answerable = [(recency_vector(idx, ANALYZER, q, h), g) for _o, q, g in p.answerable]
        else:
            lp.answerable = [(query_vector(idx, terms(q)), g) for _o, q, g in p.answerable]
        out.append(lp)
    return out


def evaluate(lab: Sequence[Any], params: dict[str, Params]) -> dict[str, dict[str, Any]]:
    """Per-question dev metrics with the params of each pool's language (pools of a language
    without params are skipped)."""
    from rank_lab import metrics, ranked

    out: dict[str, dict[str, list[float]]] = {}
    for lp in lab:
        p = params.get(lp.pool.lang)
        if p is None:
            continue
        d = out.setdefault(lp.pool.set, {})
        for q, gold in lp.answerable:
            act, _s, _z = activate(lp.index, q, p)
            rows = [lp.index.ids[i] for i in ranked(act, 10)]
            for m, v in metrics(rows, gold).items():
                d.setdefault(m, []).append(v)
    return {s: {m: np.array(v) for m, v in d.items()} for s, d in out.items()}


def rm3(index: Any, q: Any, fb: int, terms: int, lam: float) -> Any:
    """RM3-style pseudo-relevance feedback on ``rank_model.py``'s evidence model: the ``terms``
    best non-query terms of the ``fb`` best rows (weight Σ activation · tf/len · ln(1 + N/df)),
    scored as a second query with linear weights, mixed ``(1 - lam)·a + lam·a₂``."""
    from dataclasses import replace as _replace

    import rank_model as rm
    from rank_lab import RECOMMENDED, ranked

    ev = rm.activate(index, q, RECOMMENDED)
    top = ranked(ev.final, fb)
    w: dict[int, float] = {}
    for i in top.tolist():
        a, b = index.ptr[i], index.ptr[i + 1]
        length = index.tf[a:b].sum()
        for t, f in zip(index.term[a:b].tolist(), index.tf[a:b].tolist(), strict=True):
            w[t] = w.get(t, 0.0) + ev.final[i] * f / length * np.log1p(index.n / index.df[t])
    have = set(q.ids.tolist())
    exp = sorted(((v, t) for t, v in w.items() if t not in have), reverse=True)[:terms]
    if not exp:
        return ev.final
    tot = sum(v for v, _t in exp)
    pairs = sorted((t, v / tot) for v, t in exp)
    q2 = rm.Query(
        np.array([t for t, _v in pairs], dtype=np.intp),
        np.array([v for _t, v in pairs]),
        np.zeros(0),
    )
    ev2 = rm.activate(index, q2, _replace(RECOMMENDED, k3=1e9))  # k3 → ∞: linear weights
    return (1 - lam) * ev.final + lam * ev2.final


def rerun_rm3(row: dict[str, Any], data: Any, cache: dict[str, Any]) -> dict[str, Any]:
    """A logged ``RM3 fb=… terms=… lam=…`` row, recomputed."""
    from rank_lab import collect, ranked
    from rank_lab import prepare as lab_prepare

    if "evidence" not in cache:
        cache["evidence"] = lab_prepare(data)
    x = row["params"]
    res = collect(
        cache["evidence"],
        lambda lp, q, _i: [
            lp.index.ids[j] for j in ranked(rm3(lp.index, q, x["fb"], x["terms"], x["lam"]), 10)
        ],
    )
    return {s: {m: float(v.mean()) for m, v in d.items()} for s, d in res.items()}


def rerun(
    row: dict[str, Any], data: Any, cache: dict[str, Any]
) -> dict[str, dict[str, float]] | None:
    """The dev means of a logged row, recomputed (``None``: a row of ``rank_model.py``, whose
    neighbourhood ``rank_lab.py table`` recomputes)."""
    if row["name"].startswith("evidence"):
        return None
    if row["name"].startswith("RM3"):
        return rerun_rm3(row, data, cache)
    prep = row.get("prep", "plain")
    if prep not in cache:
        cache[prep] = prepare(data, prep)
    params = {lang: Params(**p) for lang, p in row["params"].items()}
    res = evaluate(cache[prep], params)
    return {s: {m: float(v.mean()) for m, v in d.items()} for s, d in res.items()}
