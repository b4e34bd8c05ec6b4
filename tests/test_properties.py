"""Property-based tests (hypothesis) of the parsers every route shares, and the regressions
found by ``bench/fuzz_readers.py`` (issue 7).

Properties: the tag parser, the frontmatter parser, ``keywords``, the not-for clause,
``mask_secrets`` and the safety scan never crash on any text; they round-trip where a writer
exists (``format_fact_line``; a frontmatter block built the way skills are written) and are
idempotent where that is the contract. Example counts are modest so the suite stays fast.
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from talos import Memory, safety
from talos.errors import InputError
from talos.home import resolve_paths
from talos.sources import first_user_request, load_episodes, parse_fact_line, strip_tag
from talos.sources.facts import MIN_FACT_CHARS, NAMED_FIELDS, TAG
from talos.sources.skills import parse_frontmatter
from talos.text import STOPWORDS, drop_not_for, keywords
from talos.view.canon import canonical_name
from talos.writer.edits import format_fact_line

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Text biased towards what the parsers look for, mixed with arbitrary Unicode.
TOKENS = [
    *("<!--", "-->", " ", "\t", "\n", "-", "*", "#", "---", ":", "：", "=", "_", ".", ","),
    *("reflect", "user", "2026-01-01", "scope=a%20b", "key=x", "不用于", "not for:", "NOT FOR："),
    *("field_", "name:", "description:", "的", "一个", "the", "CSV", "合并表格", "rust", "x1"),
    *("ı", "İ", "ſ", "K", "ß", "\u2028", "\r", "\x00", "\ufeff", "ghp_", "sk-", "AKIA", "eyJ"),
    *("curl", " | sh", "base64 -d", ".env", "API_KEY", "sort_key", "password: ", "TOKEN=", "@"),
]
soup = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=6)), max_size=40).map("".join)
any_text = st.one_of(st.text(), soup)


# -- the tag parser (design §3.1) ----------------------------------------------------------------


@FAST
@given(any_text)
def test_parse_fact_line_never_crashes_and_cleans_the_text(line: str) -> None:
    parsed = parse_fact_line(line)
    _text, src, born = strip_tag(line)
    if parsed is None:
        return
    assert (parsed.src, parsed.born) == (src, born)
    assert len(parsed.text) >= MIN_FACT_CHARS
    assert parsed.text == parsed.text.strip()
    assert not parsed.text.startswith(("-", "*", "#"))
    assert re.fullmatch(r"\w+", parsed.src)
    assert parsed.born == "" or re.fullmatch(r"\d{4}-\d{2}-\d{2}", parsed.born)
    assert (parsed.src == "user" and parsed.born == "") or TAG.search(line.strip())


field_key = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,8}", fullmatch=True)
fact_text = (
    any_text.map(lambda s: " ".join(s.split()))
    .filter(lambda s: "<!--" not in s and "-->" not in s)
    .filter(lambda s: not s.startswith(("-", "*", "#")))
    .filter(lambda s: len(s) >= MIN_FACT_CHARS)
)


@FAST
@given(
    fact_text,
    st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True),
    st.dates().map(lambda d: d.isoformat()),
    st.dictionaries(field_key, st.text(max_size=12), max_size=4),
)
def test_fact_line_round_trips_through_the_writer(
    text: str, src: str, born: str, fields: dict[str, str]
) -> None:
    line = format_fact_line(text, src, born, fields)
    parsed = parse_fact_line(line)
    assert parsed is not None
    # names come back in their canonical spelling (talos.view.canon, tests/test_key_authority.py)
    assert (parsed.text, parsed.src, parsed.born, parsed.fields) == (
        text,
        canonical_name(src),
        born,
        {k: canonical_name(v) if k in NAMED_FIELDS else v for k, v in fields.items() if v != ""},
    )


# -- the frontmatter parser (design §3.2) --------------------------------------------------------


@FAST
@given(any_text)
def test_parse_frontmatter_never_crashes_and_returns_a_suffix(text: str) -> None:
    fields, body = parse_frontmatter(text)
    assert text.endswith(body)
    if not text.startswith("---"):
        assert (fields, body) == ({}, text)
    for key, value in fields.items():
        assert ":" not in key
        assert key == key.strip() and key == key.lower()
        assert value == value.strip()


fm_key = st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True)
fm_value = st.text(max_size=30).map(lambda s: " ".join(s.split()))


@FAST
@given(st.dictionaries(fm_key, fm_value, max_size=5), any_text)
def test_frontmatter_round_trips(fields: dict[str, str], body: str) -> None:
    text = "---\n" + "".join(f"{k}: {v}\n" for k, v in fields.items()) + "---\n" + body
    assert parse_frontmatter(text) == (fields, body)


def test_frontmatter_indented_keys_and_a_second_block_is_body() -> None:
    text = "---\n  Name:  a \n---\nbody\n---\nname: b\n---\n"
    assert parse_frontmatter(text) == ({"name": "a"}, "body\n---\nname: b\n---\n")


# -- keywords (design §4) ------------------------------------------------------------------------

_CJK = re.compile(r"[\u4e00-\u9fff]{1,2}")


@FAST
@given(any_text)
def test_keywords_are_lower_case_and_never_stopwords(text: str) -> None:
    kw = keywords(text)
    for k in kw:
        assert re.fullmatch(r"[a-z0-9]{2,}", k) or _CJK.fullmatch(k)
        assert k == k.lower()
    assert not kw & STOPWORDS


@FAST
@given(any_text)
def test_keywords_are_idempotent(text: str) -> None:
    kw = keywords(text)
    assert keywords(" ".join(sorted(kw))) == kw


@FAST
@given(any_text, any_text)
def test_keywords_of_separated_texts_are_the_union(a: str, b: str) -> None:
    assert keywords(a + " " + b) == keywords(a) | keywords(b)


# -- the not-for clause (design §3.2) ------------------------------------------------------------


@FAST
@given(any_text)
def test_drop_not_for_is_idempotent_and_only_removes(text: str) -> None:
    once = drop_not_for(text)
    assert drop_not_for(once) == once
    assert len(once) <= len(text)
    if "不用于" not in text and "not for" not in text.lower():
        assert once == text


@FAST
@given(st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=8), any_text)
def test_a_clause_glued_to_a_word_is_not_a_clause(word: str, rest: str) -> None:
    text = word + "_不用于" + rest.split("\n")[0]
    assert drop_not_for(text).startswith(word + "_不用于")


# -- secrets and the scan ----------------------------------------------------------------------

secretish = st.lists(
    st.one_of(
        st.sampled_from(TOKENS),
        st.text(alphabet=string.ascii_letters + string.digits + "_-.", max_size=40),
    ),
    max_size=20,
).map("".join)


@FAST
@given(st.one_of(any_text, secretish))
def test_mask_secrets_is_idempotent_and_leaves_no_token(text: str) -> None:
    masked = safety.mask_secrets(text)
    assert safety.mask_secrets(masked) == masked
    for pat in safety._TOKEN_SHAPES:
        assert not pat.regex.search(masked)


@FAST
@given(st.one_of(any_text, secretish))
def test_trigger_prefilter_never_hides_a_match(text: str) -> None:
    """A pattern whose triggers are absent is skipped; that must never skip a real match."""
    present = safety.triggers_in(text)
    for rule in safety.RULES:
        for pat in rule.patterns:
            if pat.regex.search(text):
                assert pat.may_match(present), (rule.reason, pat.triggers)


def test_trigger_prefilter_knows_every_case_insensitive_letter() -> None:
    """``re.IGNORECASE`` matches these non-ASCII letters to ASCII ones (ı, İ → i; ſ → s;
    K → k): folding must map them too, or ``ſetenforce 0`` would dodge the prefilter."""
    assert safety.fold("İı ſ K") == "ii s k"
    assert safety.instruction_reasons("ſetenforce 0") == ["disables security tools: ſetenforce 0"]


@FAST
@given(any_text)
def test_scan_text_never_crashes(text: str) -> None:
    for f in safety.scan_text(text, lines=True):
        assert 1 <= f.line <= text.count("\n") + 1
        f_str = str(f)
        assert f_str.startswith(f.reason)


@FAST
@given(
    st.from_regex(r"[a-z][a-z0-9]{0,8}_(key|token|secret|password)", fullmatch=True),
    st.sampled_from(["use {} here", "pass {} as a field", "{} = row.id", "the {} column"]),
)
def test_lower_case_identifiers_are_never_credentials(name: str, template: str) -> None:
    assert [r for r in safety.instruction_reasons(template.format(name)) if "credential" in r] == []


# -- regressions found by bench/fuzz_readers.py ------------------------------------------------


def test_deeply_nested_json_line_does_not_crash_the_session_reader(tmp_path: Path) -> None:
    """fuzz: RecursionError from json.loads on ``[[[…`` (sessions.py first_user_request)."""
    sess = tmp_path / "s.jsonl"
    sess.write_bytes(b'{"role": "user", "content": "deep", "x": ' + b"[" * 100_000 + b"\n")
    assert first_user_request(sess) == ""
    sess.write_bytes(
        b"[" * 100_000 + b"\n" + json.dumps({"role": "user", "content": "after"}).encode()
    )
    assert first_user_request(sess) == ""  # a line that cannot be parsed ends the read


def test_lone_surrogate_escape_in_a_session_is_printable(tmp_path: Path) -> None:
    """fuzz: ``"\\ud800"`` in a request became an unprintable episode text; the CLI crashed
    with UnicodeEncodeError writing recall, explain and --json output."""
    sdir = tmp_path / "home" / ".talos" / "sessions"
    sdir.mkdir(parents=True)
    (sdir / "s.jsonl").write_bytes(b'{"role": "user", "content": "deploy the \\ud800 service"}\n')
    (node,) = load_episodes(sdir)
    assert node.text == "deploy the \ufffd service"
    result = Memory(tmp_path / "home").recall("deploy service")
    result.text.encode("utf-8")


def test_non_utf8_config_is_an_input_error(tmp_path: Path) -> None:
    """fuzz: a talos.toml that is not UTF-8 raised UnicodeDecodeError, not InputError."""
    (tmp_path / "talos.toml").write_bytes(b"\x80")
    with pytest.raises(InputError, match=r"talos\.toml: not valid UTF-8"):
        resolve_paths(tmp_path)


def test_config_value_of_the_wrong_type_is_an_input_error(tmp_path: Path) -> None:
    """fuzz: ``memory_file = 1`` in talos.toml raised TypeError in resolve_paths."""
    (tmp_path / "talos.toml").write_text("memory_file = 1\n", encoding="utf-8")
    wrong = r"talos\.toml:1: memory_file must be a path string, not 1"  # names its line
    with pytest.raises(InputError, match=wrong):
        resolve_paths(tmp_path)
