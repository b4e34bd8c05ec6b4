"""The analyzer of the default model (design §4.1, issue 15 item 1): text → terms.

``classic`` matches on design §4 keywords (:func:`talos.text.keywords`); every other model
matches on the terms of :func:`analyze`, the one analyzer every route calls (recall, explain,
why-not, the index, MCP, the bench). The steps, as measured on the dev split
(``bench/README.md`` "Analyzer"; ``bench/analyzer.py`` is a caller of this module):

1. NFKC folding (full-width ``ＡＢＣ１２`` → ``abc12``, ligatures), then ``str.lower``, then
   every combining mark left standing is dropped (:func:`folded`: ``İstanbul`` lower-cases to
   ``i`` + U+0307, a mark no letter composes with, and a mark is no word character); a word's
   accents are dropped (:func:`unaccented`: ``résumé`` → ``resume``).
2. Tokens: runs of letters and digits of any script but CJK (``café`` is one token; an
   apostrophe splits ``caroline's`` → ``caroline``, ``s``), and runs of CJK characters (Han,
   kana, Hangul). A non-CJK token shorter than 2 characters is dropped (as design §4).
3. English stop words, before stemming: NLTK's list of 179 words as ``bm25s`` ships it
   (``STOPWORDS_EN_PLUS``), shipped in :mod:`talos.data`. Dev: LoCoMo R@5 0.549 →
   0.582 against no stop list; the longer lists drop content words (``new``, ``work``).
4. Snowball (Porter2) English stemming of the non-CJK tokens, with PyStemmer (identical stems
   to snowballstemmer's pure-Python one, 58× faster). Dev: +0.033 LoCoMo, +0.05 MADial en.
   Words whose derivational suffix Snowball strips onto a different word's stem
   (``production`` → ``product``, ``settings`` → ``set``) keep a term of their own
   (:func:`stem_exceptions`).
5. A CJK run: its overlapping character bigrams (a run of one: the character), then its
   unigrams (dev: Chinese set 0.606 → 0.641); CJK stop words dropped (:func:`cjk_stop_words`:
   design §4's 的 了 … 一个 and the one- and two-character words of NLTK's Chinese list,
   这个 什么 怎么 我们 可以 …); a bigram of two stop characters is dropped too (们的).

Beside the steps, :func:`frequency` tells how common a term is in ordinary English text (per
stem, from ``wordfreq``'s small list as :mod:`talos.data` ships it): what the evidence model's
background prior weighs (:func:`talos.ranking.evidence.language_idf`).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable
from functools import cache

from talos import data

__all__ = [
    "CJK_RUN",
    "CJK_STOP",
    "analyze",
    "analyze_written",
    "cjk_stop_words",
    "common_words",
    "folded",
    "frequency",
    "is_cjk",
    "is_unigram",
    "stem",
    "stem_exceptions",
    "stemmer",
    "stop_words",
    "terms",
    "unaccented",
    "without_unigrams",
]

#: design §4's CJK stop words: they can only match as a single character or as the bigram 一个.
CJK_STOP = frozenset(("的", "了", "和", "是", "在", "我", "你", "它", "也", "就", "都", "一个"))

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")
#: A run of CJK characters (Han, kana, Hangul), as the analyzer's tokens cut them.
CJK_RUN = re.compile(f"[{_CJK}]+")


@cache
def stop_words() -> frozenset[str]:
    """NLTK's English stop list, 179 lower-case unstemmed words, as ``bm25s`` ships it
    (``STOPWORDS_EN_PLUS``): ``talos/data/stopwords_en.txt``."""
    return frozenset(data.lines("stopwords_en.txt"))


@cache
def cjk_stop_words() -> frozenset[str]:
    """The CJK terms that are no evidence: design §4's :data:`CJK_STOP` and the words of one or
    two characters of NLTK's Chinese stop list as ``bm25s`` ships it (``STOPWORDS_CHINESE``,
    ``talos/data/stopwords_zh.txt``: 794 of its 841; a longer word is never one term).
    Without them the bigrams of function words matched: "这个函数为什么很慢" delivered
    "为什么要写测试", and a line of 我们 可以 怎么 什么 … was delivered for 11 of 15 Chinese
    coding chores. Dev (``bench/tune_lab.py``): Chinese set R@5 0.731 (unchanged, BM25 over
    the same analyzer 0.644), block 0.49 → 0.44 non-gold rows, kept 59.5% → 60.0%, unrelated
    pools empty 46% → 62%, chores 95% → 97.5%; the check set (MADial zh last turns) 0.504 →
    0.466."""
    extra = {w for w in data.lines("stopwords_zh.txt") if len(w) <= 2}
    return CJK_STOP | frozenset(extra)


@cache
def stem_exceptions() -> dict[str, str]:
    """``{word: term}``: the words Snowball would stem onto a different word's stem, and the
    term each is analysed as instead (``talos/data/stem_exceptions.txt``: ``production`` →
    ``production``, not ``product``; ``importantly`` → ``important``, not ``import``). Snowball
    strips derivational suffixes (-ion, -ive, -ity, -al, -ment, -er …) and so merged words of
    different senses: "check the production error rate" delivered "Tom Becker is the product
    manager", "set up pnpm" matched a line about editor settings. The list is the split
    groups of ``bench/stem_merges.py``'s candidates (the file says how they were judged);
    :func:`stemmer` also reads a listed word with a plural ``s`` (``customers``)."""
    out: dict[str, str] = {}
    for line in data.lines("stem_exceptions.txt"):
        if not line.strip() or line.startswith("#"):
            continue
        term, _colon, words = line.partition(":")
        for word in words.split():
            out[word] = term.strip()
    return out


@cache
def stemmer() -> Callable[[str], str]:
    """``word -> stem``, made once: PyStemmer's Snowball English ``stemWord``, but a word of
    :func:`stem_exceptions` (or such a word with a plural ``s``) gives its listed term."""
    import Stemmer  # type: ignore[import-not-found]  # no stubs

    snowball = Stemmer.Stemmer("english").stemWord
    own = stem_exceptions()

    def stem_word(word: str) -> str:
        term = own.get(word)
        if term is None and word[-1:] == "s":
            term = own.get(word[:-1])
        return snowball(word) if term is None else term

    return stem_word


def stem(word: str) -> str:
    """The default analyzer's stem of a lower-case word (:func:`stemmer`): Snowball English
    (Porter2, PyStemmer) ``answers`` → ``answer``, ``restoring`` → ``restor``; a word of
    :func:`stem_exceptions` its own term, ``production`` → ``production``."""
    return stemmer()(word)


def unaccented(word: str) -> str:
    """``word`` without its combining marks (NFKD, then every mark dropped): "résumé" →
    "resume", "naïve" → "naive", so a query typed without accents finds a fact written with
    them (the attack pass: "where is my resume" missed "My résumé is in ~/docs"). A word of
    plain ASCII is returned as it is."""
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


#: Text of these characters only holds no combining mark (none of them has a combining class):
#: ASCII to the spacing modifiers, general punctuation, CJK symbols and kana but their marks
#: (U+302A–U+302F, U+3099, U+309A), Han, Hangul, the full-width forms. What :func:`folded`
#: reads without looking at each character (tests/test_analyzer.py checks the ranges).
_UNMARKED = re.compile(
    "[\x00-\u02ff\u2000-\u20cf\u3000-\u3029\u3030-\u3098\u309b-\u30ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]*"
)


def folded(text: str, nfkc: bool = True) -> str:
    """``text`` as the analyzer splits it into words: NFKC-folded (when ``nfkc``), lower case,
    every combining mark (a character of a nonzero combining class, as :func:`unaccented`
    drops) removed. Lower case can leave a mark standing: ``İ`` (U+0130) lower-cases to ``i``
    and U+0307, which no letter composes with, and a mark is no word character, so
    ``İstanbul`` was the terms ``stanbul`` (``i`` a word of one letter) and found no
    ``Istanbul``. A mark NFKC composes with its letter (``é``) is one character here, and its
    word's accents go in :func:`unaccented`. The same holds for a mark NFKC leaves standing
    (``q̃``; Arabic vowel marks, Hebrew points): its word stays one."""
    s = unicodedata.normalize("NFKC", text) if nfkc else text
    s = s.lower()
    if _UNMARKED.fullmatch(s):
        return s
    return "".join([c for c in s if not unicodedata.combining(c)])


def is_cjk(term: str) -> bool:
    """A term of CJK characters (Han, kana, Hangul: the analyzer's CJK runs); ``term`` is not
    empty."""
    c = term[0]
    return (
        "\u3040" <= c <= "\u30ff"
        or "\u3400" <= c <= "\u9fff"
        or "\uac00" <= c <= "\ud7af"
        or ("\uf900" <= c <= "\ufaff")
    )


def is_unigram(term: str) -> bool:
    """A single CJK character (a CJK unigram term, or a CJK run of one)."""
    return len(term) == 1 and is_cjk(term)


def without_unigrams(items: Iterable[str]) -> list[str]:
    """``items`` without single CJK characters: what a skill's own evidence is counted over
    (``talos.selection.relevance.earns_body``: shared characters like 这 个 一 added up to a body
    for
    18% of the Chinese chores on a ``make_home.py`` home)."""
    return [t for t in items if not is_unigram(t)]


def terms(
    text: str | None,
    stop: Collection[str] | None = None,
    stem_word: Callable[[str], str] | None = None,
    *,
    unigrams: bool = True,
    nfkc: bool = True,
    min_len: int = 2,
    cjk_stop: bool = True,
) -> list[str]:
    """The analyzer with its steps switchable (the bench's lab measures what each buys);
    talos itself calls :func:`analyze`, which is this with every default.

    Args:
        text: any text (``None``: no terms). stop: English stop words (default
            :func:`stop_words`). stem_word: ``word -> stem`` (default :func:`stemmer`).
        unigrams: also emit every character of a CJK run of two or more. nfkc: NFKC-fold
            first. min_len: shortest non-CJK token kept. cjk_stop: drop :func:`cjk_stop_words`.

    Returns:
        The terms in text order, with repeats (BM25 counts them); a CJK run gives its
        bigrams, then its unigrams.
    """
    s = folded(text or "", nfkc)
    stops = stop_words() if stop is None else stop
    st = stem_word if stem_word is not None else stemmer()
    out: list[str] = []
    for cjk, word in _TOKEN.findall(s):
        if word:
            word = unaccented(word)
            if len(word) >= min_len and word not in stops:
                out.append(st(word))
        elif len(cjk) == 1:
            out.append(cjk)
        else:
            out.extend(b for b in _bigrams(cjk) if not cjk_stop or not _of_stops(b))
            if unigrams:
                out.extend(cjk)
    if cjk_stop:
        stops_cjk = cjk_stop_words()
        out = [t for t in out if t not in stops_cjk]
    return out


def _bigrams(run: str) -> list[str]:
    """The overlapping character bigrams of a CJK run of two or more characters."""
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _of_stops(bigram: str) -> bool:
    """A bigram of two stop characters (们的 of 我们的 "our"): no evidence, as neither
    character is (the attacker's pass: "我们的" delivered every fact holding 们的)."""
    stops = cjk_stop_words()
    return bigram[0] in stops and bigram[1] in stops


def analyze(text: str | None) -> list[str]:
    """The default model's terms of ``text`` (module docstring), in order, with repeats.

    >>> analyze("Restoring the Databases, ＮＯＷ! 恢复数据")
    ['restor', 'databas', '恢复', '复数', '数据', '恢', '复', '数', '据']
    """
    return terms(text)


def analyze_written(text: str | None) -> list[tuple[str, str]]:
    """``(as written, as analyzed)`` for every term of :func:`analyze`, in the same order (what
    ``explain`` shows: ``("answers", "answer")``). *As written* is the token after NFKC
    folding, lower case and combining marks dropped (:func:`folded`; a CJK term is its own
    characters).

    >>> analyze_written("Restoring the DBs")
    [('restoring', 'restor'), ('dbs', 'dbs')]
    """
    s = folded(text or "")
    stops = stop_words()
    st = stemmer()
    out: list[tuple[str, str]] = []
    for cjk, word in _TOKEN.findall(s):
        if word:
            bare = unaccented(word)
            if len(bare) >= 2 and bare not in stops:
                out.append((word, st(bare)))
        elif len(cjk) == 1:
            out.append((cjk, cjk))
        else:
            out.extend((b, b) for b in _bigrams(cjk) if not _of_stops(b))
            out.extend((c, c) for c in cjk)
    stops_cjk = cjk_stop_words()
    return [(w, t) for w, t in out if t not in stops_cjk]


#: The rarest word :func:`common_words` keeps (a share of the running words of ordinary
#: English text): the list's first 1,111 words (800 stems), read and stemmed in ~9 ms once
#: per process. A rarer word is never capped: its idf in ordinary text at ``evidence.PRIOR``
#: 40 would be over 5.5, the idf of a term one of 370 candidates holds, and a small home's
#: is 4.21. Dev, against 1e-5 (4,534 stems, 45 ms): LoCoMo R@5 0.646 → 0.645, block kept
#: 70.5% → 70.6%, the rest equal.
RAREST = 1e-4


def _frequency_buckets(rarest: float) -> list[list[str]]:
    """``wordfreq``'s small English list as it stores it (``get_frequency_list("en",
    "small")``), down to the words of frequency ``rarest``: bucket ``i`` holds the words of
    frequency ``10^(-i/100)``. ``talos/data/wordfreq_en.txt`` holds its first 401 buckets,
    down to :data:`RAREST`; a rarer ``rarest`` raises ValueError."""
    last = int(-100 * math.log10(rarest))  # the bucket of ``rarest``
    shipped = data.lines("wordfreq_en.txt")
    if last >= len(shipped):
        raise ValueError(
            f"the shipped frequency list stops at 1e-{(len(shipped) - 1) / 100:g}; "
            f"rarest={rarest:g} needs more of wordfreq's list"
        )
    return [line.split() for line in shipped[: last + 1]]


@cache
def common_words() -> dict[str, float]:
    """``{stem: frequency}``: the share of the running words of ordinary English text that
    have this analyzer's term ``stem`` — the frequencies of every surface word it stems from
    summed (``use`` 0.0016: use, used, uses, using; ``answer`` 1.5e-4), from ``wordfreq``'s
    small English list (its data CC-BY-SA 4.0: ``talos/data/LICENSES.md``), words rarer than
    :data:`RAREST` left out (``fix`` alone is 5.6e-5: no form of it counts). Stop words and
    words of one character are no term (as :func:`terms`); built once per process (~9 ms)."""
    words: list[str] = []
    freqs: list[float] = []
    stops = stop_words()
    for i, bucket in enumerate(_frequency_buckets(RAREST)):
        f = 10.0 ** (-i / 100)
        for w in bucket:
            bare = unaccented(w)
            if len(bare) >= 2 and bare.isalnum() and bare.isascii() and bare not in stops:
                words.append(bare)
                freqs.append(f)
    import Stemmer  # no stubs (the ignore is on stemmer()'s import)

    own = stem_exceptions()
    stems = [
        own.get(w) or own.get(w[:-1] if w[-1:] == "s" else "") or s
        for w, s in zip(words, Stemmer.Stemmer("english").stemWords(words), strict=True)
    ]
    out: dict[str, float] = {}
    for s, f in zip(stems, freqs, strict=True):
        out[s] = out.get(s, 0.0) + f
    return out


def frequency(term: str) -> float:
    """The share of ordinary English text's running words that are ``term`` (an analyzer
    term, :func:`common_words`); 0.0 for a CJK term, a term of no English word and one rarer
    than :data:`RAREST`."""
    return common_words().get(term, 0.0)
