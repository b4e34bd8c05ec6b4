"""The default model's analyzer (design §4.1, issue 15 item 1): ``talos.ranking.analyzer``.

Each test pins one step of the analyzer with exact terms; each fails when its step is removed
(checked once by hand: stemming, the stop list, unigrams, the CJK stop words, NFKC).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from talos.ranking.analyzer import (
    CJK_STOP,
    analyze,
    analyze_written,
    cjk_stop_words,
    is_unigram,
    stem,
    stop_words,
    terms,
    without_unigrams,
)


def test_answers_is_analyzed_as_answer() -> None:
    """Issue 15: "how should I format your answers" recalled nothing of a fact about
    "answer" (design §4 keywords have no stemming)."""
    assert analyze("how should I format your answers") == ["format", "answer"]
    assert analyze("Keep each answer short") == ["keep", "answer", "short"]
    assert analyze("restoring databases") == ["restor", "databas"]
    assert analyze("Restore a Postgres database") == ["restor", "postgr", "databas"]
    assert stem("answers") == "answer"


def test_stop_words_carry_no_match() -> None:
    """Issue 15: "are", "in" carried matches. NLTK's 179 words as bm25s ships them; "new"
    is a content word there (the long lists drop it and lose LoCoMo on dev)."""
    assert analyze("what are they in the") == []
    assert analyze("are new in") == ["new"]
    words = stop_words()
    assert len(words) == 179
    assert {"are", "in", "the", "what", "your", "should"} <= words
    assert "new" not in words


def test_cjk_bigrams_then_unigrams() -> None:
    assert analyze("恢复数据库") == [  # 据 ("according to") is a stop character
        *("恢复", "复数", "数据", "据库"),
        *("恢", "复", "数", "库"),
    ]
    assert analyze("数 库") == ["数", "库"]  # a run of one: the character
    assert terms("恢复数据", unigrams=False) == ["恢复", "复数", "数据"]


def test_cjk_stop_words_are_dropped() -> None:
    """design §4's CJK stop words (的 我, the bigram 一个) and bm25s's Chinese list of one and two
    characters (我的 这个 什么 怎么 …): the attack's "这个函数为什么很慢" matched "为什么要写测试"
    by 什么."""
    assert analyze("我的数据") == ["的数", "数据", "数"]
    assert analyze("一个") == []
    assert "一个" in CJK_STOP and {"这个", "什么", "怎么", "我们", "可以"} <= cjk_stop_words()
    assert not {"部署", "流程", "函数", "数据"} & cjk_stop_words()
    assert "什么" not in analyze("这个函数为什么很慢")
    assert analyze("我们的") == []  # 们的: a bigram of two stop characters


def test_nfkc_folds_full_width_and_ligatures() -> None:
    assert analyze("ＡＮＳＷＥＲＳ") == ["answer"]
    assert analyze("ﬁles") == ["file"]
    assert analyze("ＡＢＣ１２") == ["abc12"]


def test_tokens_of_other_scripts_and_short_tokens() -> None:
    assert analyze("café naïve") == ["cafe", "naiv"]  # accents dropped (unaccented)
    assert analyze("Résumé") == analyze("resume") == ["resum"]
    assert analyze_written("résumé") == [("résumé", "resum")]  # as written keeps them
    assert analyze("caroline's x y") == ["carolin"]  # 's' and one-letter tokens are dropped
    assert analyze(None) == [] and analyze("") == []


@pytest.mark.parametrize(
    "text",
    ["Restoring the DBs", "我的数据库 and answers", "ＡＮＳＷＥＲＳ, ﬁles; 一个 数", "the a"],
)
def test_as_written_lines_up_with_the_terms(text: str) -> None:
    """``explain`` shows each matched term as written and as analyzed: one pair per term."""
    pairs = analyze_written(text)
    assert [t for _w, t in pairs] == analyze(text)


def test_as_written_pairs() -> None:
    assert analyze_written("Restoring the DBs 数据") == [
        ("restoring", "restor"),
        ("dbs", "dbs"),
        ("数据", "数据"),
        ("数", "数"),
    ]


def test_without_unigrams() -> None:
    assert without_unigrams(analyze("把这个函数改成异步的")) == [
        *("个函", "函数", "数改", "改成", "成异", "异步", "步的"),  # 这个: a stop word, 把这: two
    ]
    assert is_unigram("数") and not is_unigram("数据") and not is_unigram("a")


def test_the_bench_analyzer_is_a_caller() -> None:
    """The bench measures talos's analyzer, not a copy of it (``bench/analyzer.py``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    try:
        from analyzer import Analyzer
    finally:
        sys.path.pop(0)
    text = "Restoring the Databases, ＮＯＷ! 恢复数据库 我的 answers"
    assert Analyzer(unigrams=True).terms(text) == analyze(text)
    assert Analyzer().terms(text) == terms(text, unigrams=False)


def test_the_frequency_list_is_read_as_wordfreq_reads_it() -> None:
    """The list shipped in talos/data is wordfreq's own down to ``RAREST``, bucket by bucket
    (where wordfreq is installed: talos does not need it); and a stem sums its forms."""
    wordfreq = pytest.importorskip("wordfreq")
    from talos.ranking.analyzer import RAREST, _frequency_buckets, common_words

    got = _frequency_buckets(RAREST)
    assert len(got) == 401  # 10^(-i/100) down to 1e-4
    assert got == wordfreq.get_frequency_list("en", "small")[:401]
    uses = sum(wordfreq.word_frequency(w, "en", "small") for w in ("use", "used", "uses", "using"))
    assert common_words()["use"] == pytest.approx(uses, rel=0.05)


def test_the_frequency_table_is_pinned() -> None:
    """The background prior's table, float for float as it was read from wordfreq's own data
    file (``talos/data/wordfreq_en.txt`` holds its first 401 buckets): 800 stems from 1,111
    words (803: the words of ``stem_exceptions.txt`` keep terms of their own, ``several`` is
    no ``sever``); a rarer cut needs more of the list than is shipped."""
    from talos.ranking.analyzer import RAREST, _frequency_buckets, common_words, frequency

    table = common_words()
    assert len(table) == 803
    assert table["production"] == 0.00013803842646028852  # its own, not product's
    assert table["product"] == 0.00010964781961431851 and "sever" not in table
    assert table["use"] == 0.0015717324961814871  # use, used, uses, using
    assert table["answer"] == 0.00014791083881682073
    assert frequency("the") == 0.0 and frequency("fix") == 0.0  # a stop word; rarer than 1e-4
    assert frequency("数据") == 0.0
    buckets = _frequency_buckets(RAREST)
    assert len(buckets) == 401 and sum(map(len, buckets)) == 1111
    assert buckets[0] == [] and buckets[-1][:2] == ["ass", "beginning"]
    with pytest.raises(ValueError, match="stops at 1e-4"):
        _frequency_buckets(1e-5)


def test_the_stop_lists_are_bm25s_lists() -> None:
    """The stop lists shipped in talos/data are bm25s's, word for word and in its order (where
    bm25s is installed: the bench extra; talos does not need it)."""
    bm25s_stopwords = pytest.importorskip("bm25s.stopwords")
    from talos import data

    assert data.lines("stopwords_en.txt") == list(bm25s_stopwords.STOPWORDS_EN_PLUS)
    assert data.lines("stopwords_zh.txt") == list(bm25s_stopwords.STOPWORDS_CHINESE)
    assert len(cjk_stop_words()) == 796  # 794 of one or two characters, with design §4's


def test_a_mark_left_standing_splits_no_word() -> None:
    """``İ`` lower-cases to ``i`` and U+0307, a combining mark no letter composes with: the
    word was split there (``İstanbul`` → ``stanbul``). Every mark NFKC leaves standing is
    dropped before words are split (``analyzer.folded``); a composed accent still is
    ``unaccented``'s."""
    assert analyze("İstanbul") == analyze("Istanbul") == analyze("istanbul") == ["istanbul"]
    assert analyze("İZMİR") == analyze("i\u0307zmi\u0307r") == ["izmir"]
    assert analyze_written("İstanbul") == [("istanbul", "istanbul")]
    assert analyze("q\u0303uux x\u0304y") == ["quux", "xy"]  # no composed form: one word
    assert analyze("كَتَبَ") == analyze("كتب") == ["كتب"]  # Arabic vowel marks
    assert analyze("Résumé") == ["resum"] and analyze_written("résumé") == [("résumé", "resum")]


def test_the_unmarked_ranges_hold_no_combining_mark() -> None:
    """``folded`` reads a text of these ranges as it is, without looking for marks."""
    import unicodedata

    from talos.ranking.analyzer import _UNMARKED

    marks = [chr(i) for i in range(sys.maxunicode + 1) if unicodedata.combining(chr(i))]
    assert [c for c in marks if _UNMARKED.fullmatch(c)] == []
    assert _UNMARKED.fullmatch("Deploy région, 恢复数据库 かな カナ 한국어 ＡＢＣ。")


def test_a_derived_word_keeps_its_own_term_where_snowball_merges_a_different_word() -> None:
    """Snowball strips derivational suffixes onto a different word's stem: ``production`` and
    ``productivity`` were ``product``, ``settings`` was ``set``, ``customers`` was
    ``custom``, ``importantly`` was ``import`` (``talos/data/stem_exceptions.txt``); a regular
    derivation stays merged (``connection`` and ``connect``, ``deployment`` and ``deploy``)."""
    from talos.ranking.analyzer import stem, stem_exceptions

    assert analyze("Production productivity productive settings customers importantly") == [
        "production",
        "productivity",
        "productive",
        "setting",
        "customer",
        "important",
    ]
    assert analyze("product products set custom import") == [
        "product",
        "product",
        "set",
        "custom",
        "import",
    ]
    assert analyze("connection connect deployment deploy") == ["connect"] * 2 + ["deploy"] * 2
    assert analyze_written("Productions") == [("productions", "production")]
    assert stem("responsibilities") == "responsible" and stem("several") == "several"
    # every listed word would have been merged by Snowball: the list holds no idle entry
    import Stemmer  # type: ignore[import-not-found]

    snowball = Stemmer.Stemmer("english").stemWord
    assert all(snowball(w) != t for w, t in stem_exceptions().items())
    assert len(stem_exceptions()) == 60


def test_production_no_longer_recalls_the_product_manager(tmp_path: Path) -> None:
    """The personal home's repro (bench/personal.py): "production" was ``product`` and
    delivered "Tom Becker is the product manager" to a question about the error rate."""
    from talos import Memory

    (tmp_path / "memory.md").write_text(
        "# People\n- Tom Becker is the product manager\n"
        "# Monitoring\n- The Grafana dashboard shows the error rate of every service\n"
        "- Production deploys happen on Tuesdays\n",
        encoding="utf-8",
    )
    mem = Memory(tmp_path)
    try:
        got = mem.recall("check the production error rate")
    finally:
        mem.close()
    assert [r.text for r in got.picked] == [
        "The Grafana dashboard shows the error rate of every service",
        "Production deploys happen on Tuesdays",
    ]
