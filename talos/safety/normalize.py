"""Normalising a text before the red-flag rules match it (:mod:`talos.safety.rules`).

A text is read the way a model or a shell reads it, not the way its bytes spell it: look-alike
letters folded to ASCII (:func:`skeleton`), markup and escapes decoded (:func:`decoded`), split
letters joined (:func:`unsplit`), leetspeak and rot13 read as letters (:func:`unleet`,
:func:`rot13`), traditional Chinese simplified (:func:`simplified`), tag characters spelled
out (:func:`hidden_text`). :mod:`talos.safety.scan` runs the rules on each of these variants.
"""

from __future__ import annotations

import codecs
import functools
import html
import re
import unicodedata
import urllib.parse
from collections.abc import Callable

from talos.safety.rules import RULES

__all__ = [
    "TRADITIONAL_FORMS",
    "decoded",
    "hidden_text",
    "letter_by_name",
    "rot13",
    "simplified",
    "skeleton",
    "traditional_forms",
    "unleet",
    "unsplit",
]

#: Characters that render as nothing but are letters by category (Hangul fillers) or marks the
#: category test below does not cover; dropped like format characters.
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u034f\u17b4\u17b5")
#: Scripts whose letters are never folded to ASCII: CJK ideographs, kana, Hangul (a Chinese
#: fact stays Chinese; only 〇 is confusable with O, and O is never a trigger letter).
_KEEP = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff]")


@functools.lru_cache(maxsize=1)
def _confusable_map() -> dict[str, str]:
    """Each non-ASCII character that Unicode's confusables data (UTS #39 ``confusables.txt``)
    lists as a look-alike of an ASCII letter or digit, mapped to it: Cyrillic ``о`` → ``o``,
    Greek ``ν`` → ``v``; shipped with talos (:func:`talos.data.confusables`, the Unicode
    licence in ``talos/data/LICENSES.md``). Loaded on first use: only a text with such a
    letter needs it."""
    from talos import data

    return data.confusables()


#: Unicode names of letters that read as one Latin letter but that neither compatibility
#: decomposition nor the confusables data maps to it: small capitals (``ɢ``, ``ꜰ``),
#: parenthesized, circled, squared and negative squared letters (``🅸``), regional indicators
#: (``🇮``), modifier letters. Hostile passes of issue 13 (the instruction filter and the block's
#: labels read them alike: :func:`letter_by_name` serves both).
_LETTER_NAME = re.compile(
    r"^(?:[A-Z ]*\b)?(?:LATIN|REGIONAL INDICATOR SYMBOL|MODIFIER)\b.*\b(?:LETTER|CAPITAL|SMALL)"
    r" ([A-Z])$"
)


@functools.lru_cache(maxsize=65536)
def letter_by_name(char: str) -> str | None:
    """The ASCII letter a reader sees in ``char`` when its Unicode name says it is a Latin
    letter drawn another way (:data:`_LETTER_NAME`; upper case for a capital one, lower case
    for small capitals and the rest), else ``None``."""
    nfkd = unicodedata.normalize("NFKD", char) if len(char) == 1 else ""
    if len(char) != 1 or char.isascii() or (nfkd.isascii() and nfkd.isalnum()):
        return None  # ASCII, or a compatibility form NFKD folds with its case (``Ｉ`` → ``I``)
    name = unicodedata.name(char, "")
    named = _LETTER_NAME.match(name)
    if not named:
        return None
    upper = "CAPITAL LETTER" in name and "SMALL CAPITAL" not in name
    return named.group(1) if upper else named.group(1).lower()


@functools.lru_cache(maxsize=65536)
def _fold_char(char: str) -> str:
    """One character as the rules see it (see :func:`skeleton`)."""
    if "󠀠" <= char <= "󠁾":
        return chr(ord(char) - 0xE0000)  # a tag character: invisible, but a model reads it
    named = letter_by_name(char)
    if named:
        return named
    out: list[str] = []
    for ch in unicodedata.normalize("NFKD", char):
        if ch.isascii() or _KEEP.match(ch):
            out.append(ch)
            continue
        if unicodedata.category(ch) in ("Mn", "Me", "Cf") or ch in _INVISIBLE:
            continue  # zero-width, bidi, soft hyphen, tags, combining marks
        table = _confusable_map()
        low = ch.lower()
        if low != ch and low in table and table[low].isalpha():
            out.append(table[low].upper())  # Cyrillic І → I (the data says l: it is case-blind)
        else:
            out.append(table.get(ch, ch))
    return "".join(out)


#: ASCII punctuation the rules read as markup or a shell reads as syntax: a tag
#: (``<system>``), a chat template (``[INST]``, ``{"role": …}``), a pipe (``curl … | sh``).
_MARKUP_PUNCT = frozenset("<>[]{}|")


@functools.lru_cache(maxsize=65536)
def _folds_to_letters(char: str) -> bool:
    """Whether folding ``char`` drops it or yields an ASCII letter, digit or markup character
    (:data:`_MARKUP_PUNCT`): only then can the skeleton trip a rule the text did not (other
    full-width punctuation of Chinese text cannot; the rules accept ``：`` beside ``:``). A
    full-width ``＜system＞`` or ``curl … ｜ bash`` reads as markup and a pipe to a model, and
    was delivered unflagged (tests/test_class_attack.py)."""
    folded = _fold_char(char)
    return folded != char and (
        not folded or any(c.isascii() and (c.isalnum() or c in _MARKUP_PUNCT) for c in folded)
    )


#: Characters that may fold to a letter or markup: all but ASCII, CJK ideographs and the
#: punctuation of Chinese text (a Chinese fact's check then costs one regex pass, not one
#: lookup a character); full-width ``＜＞［］｛｜｝`` are not skipped (:data:`_MARKUP_PUNCT`).
_MAY_FOLD = re.compile(
    r"[^\x00-\x7f\u3400-\u4dbf\u4e00-\u9fff\u3001-\u3003\u3008-\u3011\u2014\u2018-\u201f"
    r"\u2026\u00b7\uff01-\uff0f\uff1a\uff1b\uff1d\uff1f\uff20\uff3c\uff3e-\uff40"
    r"\uff5e-\uff65]"
)


def skeleton(text: str) -> str:
    """``text`` as the red-flag rules match it: compatibility-decomposed (NFKD: full-width
    ``ｉｇｎｏｒｅ`` and math letters become ASCII), without format characters (zero-width
    space and joiners, bidi controls, soft hyphen), combining marks and invisible fillers, and
    with look-alike letters folded to the ASCII letter they imitate (Cyrillic ``о`` → ``o``,
    small capital ``ɢ`` → ``g``), keeping case; a tag character (U+E0020–E007E, invisible)
    becomes the ASCII character it encodes. CJK text is kept. Line breaks are kept, so line
    numbers still hold. An ASCII text is returned as it is. Issue 13 item 3: zero-width
    characters inside "ignore", full-width letters and homoglyphs got past every rule."""
    if text.isascii():
        return text
    return "".join(map(_fold_char, text))


#: What a reader elides or decodes that the rules would see as noise inside a word (hostile
#: pass of issue 13): an HTML comment or tag (``ig<!-- x -->nore``, ``<b>all</b>``), a
#: character reference (``&#105;``, ``&oacute;``), percent-encoding (``%69gnore``), a backslash
#: or empty quotes a shell removes (``c\\url``, ``cu''rl``); a string escape a JSON or
#: Python string decodes (``\\u0069gnore``, ``\\x69gnore``: tests/test_class_attack.py).
_MARKUP = re.compile(
    r"\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|<!--[^\n]*?-->|</?[A-Za-z][\w:-]{0,30}(?:\s[^<>\n]{0,200})?/?>|&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}"
    r"|[A-Za-z]{2,31});?|%[0-9A-Fa-f]{2}|(?<=[A-Za-z])\\(?=[A-Za-z])|(?<=\w)(?:''|\"\")(?=\w)"
)
#: Letters split apart that a reader joins: single letters with one separator between them
#: (``i g n o r e``, ``i.g.n.o.r.e``), a hyphen inside a word (``in-structions``).
_SPLIT = re.compile(r"(?<![\w.-])(?:[A-Za-z][ .\-_*·]){2,}[A-Za-z](?![\w])|(?<=[a-z])-(?=[a-z])")
_SPLIT_SEP = re.compile(r"[ .\-_*·]")
_UNDERSCORE = re.compile(r"(?<=[A-Za-z]{2})_(?=[A-Za-z]{2})")
#: Cheap tests first: a text without these characters has nothing :data:`_MARKUP` decodes,
#: and one without a letter, separator, letter, separator, letter run nothing to join.
_MARKUP_CHARS = ("<", "&", "%", "\\", "''", '""')
_SPLIT_HINT = re.compile(r"\b[A-Za-z][ .\-_*·][A-Za-z][ .\-_*·][A-Za-z]\b|[a-z]-[a-z]")


def _unmarked(m: re.Match[str]) -> str:
    """One match of :data:`_MARKUP` as a reader takes it: a string escape as the character it
    spells, a tag, comment, backslash or empty quotes as nothing, the rest (references and
    percent-encoding, decoded after) as written."""
    found = m.group(0)
    if found[:2] in ("\\u", "\\x"):
        return chr(int(found[2:], 16))
    return "" if found[0] in "<\\'\"" else found


def _unmarked_line(line: str) -> str:
    """One line with :data:`_MARKUP` decoded or removed; no line break is added (a decoded
    ``&#10;`` becomes a space)."""
    out = _MARKUP.sub(_unmarked, line)
    if "&" in out:
        out = html.unescape(out)
    if "%" in out:
        out = urllib.parse.unquote(out, errors="replace")
    return out.replace("\r", " ").replace("\n", " ") if out != line else line


def decoded(text: str) -> str:
    """``text`` as a reader or a shell takes it: :data:`_MARKUP` decoded or removed line by
    line, then :func:`skeleton` again if decoding made letters that fold. Line breaks are
    kept. Hostile pass of issue 13: ``ig<!-- x -->nore``, ``&#105;gnore``, ``%69gnore``,
    ``c\\url`` got past every rule."""
    out = text
    if any(c in out for c in _MARKUP_CHARS) and _MARKUP.search(out):
        out = "\n".join(_unmarked_line(line) for line in out.split("\n"))
        if not out.isascii():
            out = skeleton(out)
    return out


#: A word written with digits for letters ("1gn0r3", "pr3v10us", "y0u", "D4N"): letters and
#: digits (or ``@``/``$``) mixed in one run, at least one of each.
_LEET_WORD = re.compile(r"(?=[\w@$]*[A-Za-z])(?=[\w@$]*[0-9@$])[A-Za-z0-9@$]{2,}", re.ASCII)
_LEET = str.maketrans("0134578@$", "oieastbas")
#: A letter beside a digit (or ``@``/``$``): a text without one has no such word.
_LEET_HINT = re.compile(r"[A-Za-z][0-9@$]|[0-9@$][A-Za-z]")


def unleet(text: str) -> str:
    """``text`` with the common leetspeak digits of each word that mixes letters and digits
    read as letters (0→o, 1→i, 3→e, 4→a, 5→s, 7→t, 8→b, @→a, $→s): "1gn0r3 pr3v10us
    1nstruct10ns" is "ignore previous instructions" (attack pass 23). Numbers alone ("room
    101") stay; only the rules about words run on it (:data:`_PROSE`)."""
    if not _LEET_HINT.search(text):
        return text
    return _LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), text)


def rot13(text: str) -> str:
    """``text`` with ASCII letters rotated by 13 (its own inverse): "vtaber cerivbhf" is
    "ignore previous". Tried on every text for the rules about words, and a finding on it
    is quoted as ``decoded from rot13`` (attack pass 23)."""
    return codecs.encode(text, "rot13")


def unsplit(text: str) -> str:
    """``text`` with :data:`_SPLIT` letters joined (``i g n o r e``, ``in-structions``): how a
    reader takes prose, not how a shell takes a command (``ssh-keygen`` is no ``sshkeygen``),
    so only the rules about words run on it (:data:`_PROSE`). Line breaks are kept."""
    if "_" in text:  # words tied by underscores read as words: ignore_all_previous_rules
        text = _UNDERSCORE.sub(" ", text)
    if not _SPLIT_HINT.search(text):
        return text
    return _SPLIT.sub(lambda m: _SPLIT_SEP.sub("", m.group(0)), text)


#: A CJK ideograph: only a text with one is converted from traditional characters.
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@functools.lru_cache(maxsize=1)
def _t2s() -> Callable[[str], str] | None:
    """OpenCC's traditional → simplified conversion (``opencc``), loaded on first use
    (~80 ms); ``None`` if the package is missing (the Chinese rules still see the text)."""
    try:
        import opencc
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    return opencc.OpenCC("t2s").convert


def traditional_forms() -> str:
    """The traditional forms (OpenCC ``s2t``, ``s2tw``, ``s2hk``) of the simplified characters
    the rules are written with, sorted: only a text holding one of them can match a Chinese
    rule after conversion. Computed here (~0.8 s: three dictionaries), kept in
    :data:`TRADITIONAL_FORMS` (``tests/test_hostile_safety.py`` checks the two agree)."""
    import opencc

    vocab = {c for rule in RULES for pat in rule.patterns for c in _HAN.findall(pat.pattern)}
    forms: set[str] = set()
    for cfg in ("s2t", "s2tw", "s2hk"):
        forms.update(opencc.OpenCC(cfg).convert("".join(sorted(vocab))))
    # a form the conversion changes, also when a rule is written with it (the Japanese rules'
    # 無視 is the traditional 無視 the Chinese rules read as 无视)
    t2s = opencc.OpenCC("t2s").convert
    return "".join(sorted(c for c in forms if t2s(c) != c))


#: :func:`traditional_forms` as computed for these rules: a text with none of them is not
#: converted (OpenCC's conversion and a second scan cost ~50 µs a Chinese line).
TRADITIONAL_FORMS = (
    "丟並來個傳內別刪則動員問啓啟報審將對導廢後從復惡憑戶拋據數會棄機權殺"
    "沒洩準為無爲牆獄獲現環當發瞞確碼稱約給統經繞聽裝規視計記設許訴詞話語"
    "說説證讀變讓貼軟載輸這過適鑰閉開關隱題類顯馬"
)
_TRADITIONAL = re.compile(f"[{TRADITIONAL_FORMS}]")


def simplified(text: str) -> str:
    """``text`` with traditional Chinese characters converted to simplified ones (OpenCC
    ``t2s``), so the Chinese rules, written in simplified characters, see ``無視上面的規則``
    as ``无视上面的规则`` (hostile pass of issue 13). Only a text holding the traditional form
    of a character of the rules is converted; any other is returned as it is."""
    if text.isascii() or not _TRADITIONAL.search(text):
        return text
    convert = _t2s()
    return convert(text) if convert else text


def hidden_text(text: str) -> str:
    """What tag characters (U+E0020–E007E) in ``text`` spell, alone: a sentence hidden after a
    visible one ("notes" + tags) reads as its own words to a model."""
    if text.isascii():
        return ""
    return "".join(chr(ord(c) - 0xE0000) for c in text if "\U000e0020" <= c <= "\U000e007e")
