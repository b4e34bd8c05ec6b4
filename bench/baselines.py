"""The baselines a user would reach for (issue 15 item 7), as scored rankers.

- :class:`BM25Terms`: ``bm25s`` (Lucene BM25) over the terms of an :class:`analyzer.Analyzer`
  (English stop words, Snowball stemming, CJK bigrams, optionally + unigrams), with term
  repeats counted and ``(k1, b)`` given (``bench/relevance.py tune-bm25`` picks them on the dev
  split only). The older ``bm25`` of ``rankers.py`` ranks design §4 keyword *sets*: no stop
  words, no stemming, no term frequency — not what anyone would deploy.
- :class:`FTS5Ranker`: SQLite FTS5 and its ``bm25()`` ranking (k1 = 1.2, b = 0.75, fixed by
  SQLite), with the ``porter`` tokenizer (``porter unicode61``: Porter stemming, no stop
  words), the ``trigram`` tokenizer (substring matching; for Chinese the query's CJK runs are
  cut into their trigrams) or ``bigram``: CJK runs pre-tokenised into space-separated
  character bigrams (other words kept) under ``unicode61``, the usual way to index Chinese
  with FTS5 without a segmenter. A query is the OR of its distinct tokens, each quoted.

Each is built once per memory pool, one document per memory, and ranks only documents that
match; ties break by memory order. ``scored(query)`` gives a :class:`delivery.Scored`.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from typing import ClassVar

from analyzer import Analyzer
from datasets import Store
from delivery import Scored

__all__ = ["BM25_PARAMS", "BM25Terms", "FTS5Ranker", "fts5_query"]

#: (k1, b) of the analyzed BM25 baselines per ``(language, with CJK unigrams)``, tuned on the
#: dev split by ``python3 bench/relevance.py tune-bm25`` (LoCoMo dev for English, the Chinese
#: set's dev half for Chinese).
BM25_PARAMS: dict[tuple[str, bool], tuple[float, float]] = {
    # LoCoMo dev R@5 0.580 (English has no CJK: unigrams change nothing); k1=1.2 b=0.75: 0.544
    ("en", False): (0.5, 0.0),
    ("en", True): (0.5, 0.0),
    # Chinese set dev R@5: bigrams 0.640 (a flat surface, 0.61-0.64), bigrams+unigrams 0.691
    ("zh", False): (3.0, 0.1),
    ("zh", True): (2.0, 0.5),
}


class BM25Terms:
    """BM25 over analyzer terms (module docstring), one document per memory.

    Args:
        store: the pool. analyzer: the terms of memories and queries. k1, b: BM25's
            saturation and length normalisation.
    """

    def __init__(self, store: Store, analyzer: Analyzer, k1: float = 1.5, b: float = 0.75) -> None:
        import bm25s

        self.ids = [it.id for it in store.items]
        self.analyzer = analyzer
        docs = [analyzer.terms(it.text) or ["\x00empty"] for it in store.items]
        self.bm25 = bm25s.BM25(k1=k1, b=b)
        self.bm25.index(docs, show_progress=False)
        self.vocab = set(self.bm25.vocab_dict)

    def scored(self, query: str) -> Scored:
        """Memories scoring > 0 for the query's distinct terms, best first."""
        q = [t for t in dict.fromkeys(self.analyzer.terms(query)) if t in self.vocab]
        if not q:
            return Scored([], [])
        scores = self.bm25.get_scores(q)
        order = sorted(range(len(self.ids)), key=lambda i: -scores[i])
        keep = [i for i in order if scores[i] > 0]
        return Scored([[self.ids[i]] for i in keep], [float(scores[i]) for i in keep])

    def ranking(self, query: str) -> list[list[str]]:
        return self.scored(query).rows

    def top(self, query: str, k: int) -> list[list[str]]:
        return self.ranking(query)[:k]


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_PARTS = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")


def bigram_text(text: str) -> str:
    """``text`` with every CJK run replaced by its space-separated character bigrams (a run
    of one stays), other words kept: what the ``bigram`` variant indexes and queries."""
    out: list[str] = []
    for cjk, word in _PARTS.findall(unicodedata.normalize("NFKC", text).lower()):
        if word:
            out.append(word)
        elif len(cjk) == 1:
            out.append(cjk)
        else:
            out += [cjk[i : i + 2] for i in range(len(cjk) - 1)]
    return " ".join(out)


def fts5_query(text: str, tokenizer: str) -> str:
    """The FTS5 MATCH expression for ``text``: the OR of its distinct tokens, each a quoted
    string ("" when it has none). ``trigram``: words of 3+ characters and the trigrams of
    CJK runs (shorter strings match nothing under that tokenizer); ``bigram``: the tokens of
    :func:`bigram_text`; ``porter``: the words (FTS5 stems them)."""
    if tokenizer == "bigram":
        toks = bigram_text(text).split()
    else:
        toks = []
        for cjk, word in _PARTS.findall(unicodedata.normalize("NFKC", text).lower()):
            if word:
                toks.append(word)
            elif tokenizer == "trigram":
                toks += [cjk[i : i + 3] for i in range(len(cjk) - 2)]
            else:
                toks.append(cjk)
        if tokenizer == "trigram":
            toks = [t for t in toks if len(t) >= 3]
    uniq = dict.fromkeys(toks)
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in uniq)


class FTS5Ranker:
    """SQLite FTS5 ``bm25()`` over one pool (module docstring).

    Args:
        store: the pool. tokenizer: ``porter``, ``trigram`` or ``bigram``.
    """

    TOKENIZE: ClassVar[dict[str, str]] = {
        "porter": "porter unicode61",
        "trigram": "trigram",
        "bigram": "unicode61",
    }

    def __init__(self, store: Store, tokenizer: str) -> None:
        if tokenizer not in self.TOKENIZE:
            raise ValueError(f"unknown FTS5 tokenizer {tokenizer!r}: porter, trigram or bigram")
        self.tokenizer = tokenizer
        self.ids = [it.id for it in store.items]
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            f"CREATE VIRTUAL TABLE m USING fts5(text, tokenize='{self.TOKENIZE[tokenizer]}')"
        )
        prep = bigram_text if tokenizer == "bigram" else (lambda t: t)
        self.db.executemany(
            "INSERT INTO m(rowid, text) VALUES (?, ?)",
            [(i, prep(it.text)) for i, it in enumerate(store.items)],
        )

    def scored(self, query: str) -> Scored:
        """The matching memories by ``bm25()`` (negated: higher is better), ties by order."""
        expr = fts5_query(query, self.tokenizer)
        if not expr:
            return Scored([], [])
        got = self.db.execute(
            "SELECT rowid, bm25(m) FROM m WHERE m MATCH ? ORDER BY bm25(m), rowid", (expr,)
        ).fetchall()
        return Scored([[self.ids[r]] for r, _s in got], [-s for _r, s in got])

    def ranking(self, query: str) -> list[list[str]]:
        return self.scored(query).rows

    def top(self, query: str, k: int) -> list[list[str]]:
        return self.ranking(query)[:k]
