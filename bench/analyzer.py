"""The default model's analyzer (issue 15 item 1, design §4.1) as the bench measures it.

The analyzer itself is ``talos.ranking.analyzer`` (one function for every route); this module is the
bench's view of it: every step switchable, so a run can measure what each buys (the archived
analyzer study: ``docs/benchmarks.md`` "Analyzer"). ``Analyzer(unigrams=True)`` with the other
defaults is ``talos.ranking.analyzer.analyze``. It is also what the honest BM25 baseline tokenises
with (``bench/baselines.py``), so the baseline a user would reach for and talos see the same
terms.

The steps, each switchable:

1. NFKC folding (full-width ``ＡＢＣ１２`` → ``abc12``, ligatures, compatibility ideographs),
   then ``str.lower``.
2. Tokens: runs of letters and digits of any script but CJK (``[^\\W_]``, so ``café`` and
   ``naïve`` are one token each; an apostrophe splits ``caroline's`` → ``caroline``, ``s``),
   and runs of CJK characters (Han, kana, Hangul). A non-CJK token shorter than
   ``min_len`` (default 2, as design §4) is dropped.
3. English stop words (before stemming, as the lists are written): one of :data:`STOP_LISTS`.
4. Snowball (Porter2) English stemming of the non-CJK tokens: PyStemmer, or snowballstemmer
   (the same algorithm; both give identical stems on every word of the bench data).
5. CJK runs: overlapping character bigrams (a run of one: the character), optionally the
   unigrams too; design §4's CJK stop words (的 了 … 一个) removed.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

from talos.ranking import analyzer as A

__all__ = [
    "CJK_STOP",
    "STOP_LISTS",
    "Analyzer",
    "stemmer",
    "stop_list",
]

#: design §4's CJK stop words (``talos.ranking.analyzer.CJK_STOP``).
CJK_STOP = A.CJK_STOP
_TOKEN = A._TOKEN


@cache
def stop_list(name: str) -> frozenset[str]:
    """An English stop-word list a library ships, by name (lower case, unstemmed).

    ``none``; ``spec`` (design §4's nine English words); ``lucene`` (Lucene's 33, as shipped by
    bm25s); ``nltk`` (NLTK's 179, as shipped by bm25s: NLTK itself needs a corpus download);
    ``sklearn`` (scikit-learn's 318, the Glasgow list); ``stop-words`` (the ``stop-words``
    package, 1,333); ``iso`` (``stopwordsiso``, 1,298).

    Raises:
        ValueError: an unknown name. ImportError: the package is not installed.
    """
    if name == "none":
        return frozenset()
    if name == "spec":
        return frozenset(("the", "a", "an", "and", "or", "to", "of", "is", "it"))
    if name == "nltk":
        return A.stop_words()
    if name == "lucene":
        import bm25s.stopwords as s

        return frozenset(s.STOPWORDS_EN)
    if name == "sklearn":
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        return frozenset(ENGLISH_STOP_WORDS)
    if name == "stop-words":
        import stop_words

        return frozenset(w.lower() for w in stop_words.get_stop_words("en"))
    if name == "iso":
        import stopwordsiso

        return frozenset(w.lower() for w in stopwordsiso.stopwords("en"))
    raise ValueError(f"unknown stop list {name!r}: choose one of {', '.join(STOP_LISTS)}")


#: Names :func:`stop_list` knows.
STOP_LISTS = ("none", "spec", "lucene", "nltk", "sklearn", "stop-words", "iso")


@cache
def stemmer(name: str) -> Callable[[str], str]:
    """``word -> stem`` for ``pystemmer``, ``snowball`` (snowballstemmer) or ``none``; both
    stemmers run the Snowball English (Porter2) algorithm."""
    if name == "none":
        return lambda w: w
    if name == "pystemmer":
        return A.stemmer()
    if name == "snowball":
        from snowballstemmer.english_stemmer import EnglishStemmer

        # snowballstemmer.stemmer() returns PyStemmer when that is installed: use the pure one
        sb = EnglishStemmer()
        return cache(sb.stemWord)
    raise ValueError(f"unknown stemmer {name!r}: choose pystemmer, snowball or none")


@dataclass(frozen=True, slots=True)
class Analyzer:
    """Text → terms (module docstring). Frozen and hashable, so term sets can be cached per
    analyzer.

    Attributes:
        stop: a name of :data:`STOP_LISTS`. stem: ``pystemmer``, ``snowball`` or ``none``.
        unigrams: also emit every CJK character of a run of two or more. nfkc: NFKC-fold
        first. min_len: shortest non-CJK token kept. cjk_stop: drop :data:`CJK_STOP`.
    """

    stop: str = "nltk"
    stem: str = "pystemmer"
    unigrams: bool = False
    nfkc: bool = True
    min_len: int = 2
    cjk_stop: bool = True

    @property
    def label(self) -> str:
        """A short name for tables: ``nltk+pystemmer+bi`` and so on."""
        cjk = "bi+uni" if self.unigrams else "bi"
        extra = "" if self.nfkc else "+no-nfkc"
        return f"{self.stop}+{self.stem}+{cjk}{extra}"

    def terms(self, text: str | None) -> list[str]:
        """The terms of ``text`` in order, with repeats (BM25 counts them).

        >>> Analyzer().terms("Restoring the Databases, ＮＯＷ! 恢复数据库")
        ['restor', 'databas', '恢复', '复数', '数据', '据库']
        """
        return A.terms(
            text,
            stop_list(self.stop),
            stemmer(self.stem),
            unigrams=self.unigrams,
            nfkc=self.nfkc,
            min_len=self.min_len,
            cjk_stop=self.cjk_stop,
        )

    def term_set(self, text: str | None) -> frozenset[str]:
        """The set of :meth:`terms` (what the activation models match on)."""
        return frozenset(self.terms(text))

    def __call__(self, text: str | None) -> frozenset[str]:
        return self.term_set(text)


def words(texts: Iterable[str]) -> list[str]:
    """Every lower-cased, NFKC-folded non-CJK token of ``texts`` (for the stemmer check)."""
    out: list[str] = []
    for t in texts:
        low = unicodedata.normalize("NFKC", t).lower()
        out += [w for _c, w in _TOKEN.findall(low) if w]
    return out
