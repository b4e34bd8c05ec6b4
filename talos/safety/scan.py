"""The scan engine: the red flags of one text (design §8.1, §8.2).

:func:`scan_text` runs every rule of :data:`talos.safety.rules.RULES` on a text and on its
variants (:mod:`talos.safety.normalize`: the text as a model or a shell reads it), and on the
sentences hidden in it as base64, hex or rot13; :func:`keep_fact` is the fact filter built on
it. A skills tree is scanned file by file in :mod:`talos.safety.skills`.
"""

from __future__ import annotations

import base64
import bisect
import codecs
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from talos.safety import secrets
from talos.safety.normalize import (
    _HAN,
    _MAY_FOLD,
    _folds_to_letters,
    decoded,
    hidden_text,
    rot13,
    simplified,
    skeleton,
    unleet,
    unsplit,
)
from talos.safety.prefilter import runnable_patterns, triggers_in
from talos.safety.rules import RULES

__all__ = [
    "EVIDENCE_MAX",
    "EVIDENCE_PER_RULE",
    "Finding",
    "encoded_texts",
    "instruction_reasons",
    "keep_fact",
    "prose_findings",
    "scan_text",
    "text_reasons",
]

#: Evidence quoted in a reason is cut to this many characters (after masking), and at most
#: this many distinct matches are quoted per rule.
EVIDENCE_MAX, EVIDENCE_PER_RULE = 60, 3


@dataclass(frozen=True, slots=True)
class Finding:
    """One red flag found: ``reason`` (a :data:`RULES` reason or a file-level one such as
    ``oversized``), ``evidence`` (what matched, whitespace-folded, secrets masked, cut to
    :data:`EVIDENCE_MAX`), ``line`` (1-based; 0 when not tied to a line)."""

    reason: str
    evidence: str = ""
    line: int = 0

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.reason}{where}: {self.evidence}" if self.evidence else self.reason + where


def _evidence(text: str, regions: list[tuple[int, int]], start: int, end: int) -> str:
    """``text[start:end]`` as a reason quotes it: credentials masked *in the whole text* (a
    window cut before a URL's ``@`` still loses its password: issue 13 item 6), whitespace
    folded, cut to :data:`EVIDENCE_MAX`."""
    s = " ".join(secrets.mask_window(text, regions, start, end).split())
    return s if len(s) <= EVIDENCE_MAX else s[:EVIDENCE_MAX] + "…"


def _scan(
    text: str,
    lines: bool,
    line_of: Callable[[int], int] | None = None,
    only: frozenset[str] | None = None,
    masked: bool = False,
    squeezed: bool = False,
) -> dict[str, Finding]:
    """:func:`scan_text` over ``text`` as it is: reason → finding. ``line_of`` maps an offset
    of ``text`` to its 1-based line when ``text`` is a variant of another text; ``only``: the
    reasons of the rules to run (default: all); ``masked``: ``text``'s credentials are masked
    already and ``only`` has no credential rule (the secret detectors are not run);
    ``squeezed``: ``text`` is :func:`_squeezed`, and only the rules' ``squeezed`` patterns
    run."""
    out: dict[str, Finding] = {}
    present = triggers_in(text)
    # the secret detectors: for the credential rule, and to mask evidence (a caller that runs
    # only the rules about words gives a text whose credentials are masked: prose_findings)
    found = [] if masked else secrets.find_secrets(text, present)
    regions = secrets.secret_regions(found)
    runnable = runnable_patterns(present)
    for rule in RULES:
        if only is not None and rule.reason not in only:
            continue
        hits: list[tuple[int, int]] = []
        if rule.secrets and not squeezed:
            hits = [(f.start, f.end) for f in found]
        for pat in rule.squeezed if squeezed else rule.patterns:
            if pat not in runnable:
                continue
            hits += [
                m.span() for m in pat.regex.finditer(text) if rule.accept is None or rule.accept(m)
            ]
        if not hits:
            continue
        hits.sort(key=lambda h: (h[0], -h[1]))  # of windows starting at one place, the longest
        hits = [h for i, h in enumerate(hits) if i == 0 or h[0] != hits[i - 1][0]]
        shown = list(dict.fromkeys(_evidence(text, regions, a, b) for a, b in hits))
        at = hits[0][0]
        line = (line_of(at) if line_of else text.count("\n", 0, at) + 1) if lines else 0
        out[rule.reason] = Finding(rule.reason, ", ".join(shown[:EVIDENCE_PER_RULE]), line)
    return out


_ORDER = {rule.reason: i for i, rule in enumerate(RULES)}

#: What a reader joins that a line-local rule would not: a shell's line continuation (``curl …
#: | \\`` then ``sudo bash`` on the next line: the fourth hostile pass), a soft line break of
#: Markdown (one newline inside a paragraph renders as a space), a run of spaces padding words
#: apart, and emphasis inside a word (``ig**no**re`` renders as "ignore").
_JOIN = re.compile(
    r"[ \t]*\\[ \t]*\r?\n[ \t]*|[ \t]*(?<!\n)\n(?!\n)[ \t]*|[ \t]{2,}|(?<=\w)(?:\*{1,3}|~~)(?=\w)"
)


#: :data:`_JOIN` across paragraphs too: a body split by a blank line ("ignore all\n\nprevious
#: instructions") still reads as one sentence to a model.
_JOIN_ALL = re.compile(r"[ \t]*\n\s*|[ \t]{2,}|(?<=\w)(?:\*{1,3}|~~)(?=\w)")


def _joined(text: str, pattern: re.Pattern[str] = _JOIN) -> tuple[str, Callable[[int], int]] | None:
    """``text`` with ``pattern``'s runs (:data:`_JOIN`) as one space (emphasis removed), and a
    map from its offsets to ``text``'s lines; ``None`` when nothing joins."""
    if not pattern.search(text):
        return None
    parts: list[str] = []
    marks: list[tuple[int, int]] = []  # (offset in the joined text, offset in text) after a run
    at = size = 0
    for m in pattern.finditer(text):
        gap = "" if m.group(0)[:1] in "*~" else " "  # emphasis inside a word: no gap
        parts += (text[at : m.start()], gap)
        size += m.start() - at + len(gap)
        at = m.end()
        marks.append((size, at))
    parts.append(text[at:])
    starts = [v for v, _o in marks]

    def line_of(offset: int) -> int:
        i = bisect.bisect_right(starts, offset) - 1
        orig = offset if i < 0 else marks[i][1] + offset - marks[i][0]
        return text.count("\n", 0, orig) + 1

    return "".join(parts), line_of


#: The rules about words, not commands: only they run on :func:`unsplit` text.
_PROSE = frozenset({"addresses the model", "claims authority"})

_Variant = tuple[str, Callable[[int], int] | None, frozenset[str] | None]


def _variants(text: str) -> list[_Variant]:
    """The texts besides ``text`` that the rules also run on, each with a map from its offsets
    to ``text``'s lines (``None``: its line breaks are ``text``'s) and the rules that run on it
    (``None``: all): the :func:`skeleton`, that :func:`decoded`, that :func:`simplified`; the
    last one joined as a reader sees it (:data:`_JOIN`, and :data:`_JOIN_ALL` across
    paragraphs); that :func:`unsplit`, for the rules about words only (:data:`_PROSE`); what
    tag characters spell (:func:`hidden_text`)."""
    out: list[_Variant] = []
    base = text
    if not text.isascii() and any(_folds_to_letters(c) for c in _MAY_FOLD.findall(text)):
        base = skeleton(text)
        if base != text:
            out.append((base, None, None))
    for step in (decoded, simplified):
        nxt = step(base)
        if nxt != base:
            base = nxt
            out.append((base, None, None))
    joined = _joined(base)
    if joined is not None:
        out.append((*joined, None))
    if "\n\n" in base.strip() and (across := _joined(base, _JOIN_ALL)) is not None:
        out.append((*across, None))
    words = unsplit(joined[0] if joined else base)
    # split letters with wider gaps between the words ("i g n o r e   p r e v i o u s"),
    # first: joined first, the gaps were one space and every word ran into one (attack
    # pass 23)
    spaced = unsplit(base) if joined is not None else base
    if spaced != base and (rejoined := _joined(spaced)) is not None and rejoined[0] != words:
        out.append((*rejoined, _PROSE))
    if words != (joined[0] if joined else base):
        out.append((words, joined[1] if joined else None, _PROSE))
    leet = unleet(words)
    if leet != words:
        out.append((leet, joined[1] if joined else None, _PROSE))
    hidden = hidden_text(text)
    if hidden.strip():
        first = text.count("\n", 0, next(i for i, c in enumerate(text) if c >= "\U000e0020"))
        out.append((hidden, lambda _offset: first + 1, None))
    return out


#: The words the ``squeezed`` patterns start with (:data:`talos.safety.rules.Rule.squeezed`):
#: a text without one, once squeezed, is not scanned so.
_SQUEEZE_WORDS = ("ignore", "disregard", "forget", "override", "bypass")
#: The words of those patterns: a squeezed text is scanned when taking the gaps out made one
#: of them ("ignore all prev ious rules": "previous" was split, "ignore" was not).
_SQUEEZE_PARTS = (
    *_SQUEEZE_WORDS,
    *("previous", "prior", "above", "earlier", "preceding", "system", "original"),
    *("instruction", "prompt", "rules", "guideline", "directive", "message", "context"),
)
#: What a squeezed text leaves out: spaces, tabs and the marks a word is cut with
#: ("ig.nore", "in-struc-tions", "ig_nore", "ig*nore", "ig·nore").
_SQUEEZE = str.maketrans("", "", " \t.-_*·")


def _squeezed(text: str) -> str | None:
    """``text`` without spaces, tabs and the marks of :data:`_SQUEEZE` (line breaks kept, so
    lines still hold), when that makes a word of :data:`_SQUEEZE_PARTS` the text did not hold
    whole ("ign ore" → "ignore") and holds a word of :data:`_SQUEEZE_WORDS`; else ``None``.
    Words split anywhere read as words to a model ("ign ore all prev ious instr uctions":
    the fourth hostile pass)."""
    squeezed = text.translate(_SQUEEZE)
    if len(squeezed) == len(text):
        return None
    squeezed_low = squeezed.lower()
    if not any(w in squeezed_low for w in _SQUEEZE_WORDS):
        return None
    low = text.lower()
    for w in _SQUEEZE_PARTS:
        if w in squeezed_low and squeezed_low.count(w) > low.count(w):
            return squeezed
    return None


#: A run that may be base64 (standard or URL-safe alphabet) of a sentence, or hex of one: a
#: text may carry an instruction a model decodes ("aWdub3JlIGFsbCBwcmV2aW91cy…" is "ignore
#: all previous instructions", delivered unflagged: the hostile-text pass).
_B64_RUN = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{16,}={0,2}(?![\w+/=-])")
_HEX_RUN = re.compile(r"(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{2}){12,}(?![0-9A-Za-z])")
#: Most encoded runs decoded per text, and the longest run decoded (characters): bounds the
#: work a hostile text can ask for.
_MAX_RUNS, _MAX_RUN = 32, 65_536
#: How deep encodings are decoded (base64 of base64 of a sentence).
_MAX_DEPTH = 2


def _readable(raw: bytes) -> str | None:
    """``raw`` as text when it reads as words: valid UTF-8, at least 8 characters, every one
    printable or a line break or tab, with a space or a CJK character, or itself one
    encoded run (base64 of base64); a key, a hash, a picture decodes to bytes that are none
    of that. Else ``None``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 8 or not all(c.isprintable() or c in "\n\r\t" for c in text):
        return None
    words = " " in text or _HAN.search(text)
    return text if words or _B64_RUN.fullmatch(text) or _HEX_RUN.fullmatch(text) else None


def encoded_texts(text: str) -> list[tuple[int, str, str]]:
    """The sentences hidden in ``text`` as base64 (standard or URL-safe, padding optional)
    or hex: ``[(offset of the run, "base64" or "hex", decoded text)]`` for each run that
    decodes to readable text (:func:`_readable`), at most :data:`_MAX_RUNS`. A run that
    decodes to bytes (a hash, a key, a picture) is no sentence and is left out."""
    out: list[tuple[int, str, str]] = []
    if len(text) < 16:
        return out
    for m in _B64_RUN.finditer(text):
        run = m.group(0).rstrip("=")
        urlsafe = "-" in run or "_" in run
        if len(run) > _MAX_RUN or len(run) % 4 == 1 or (urlsafe and ("+" in run or "/" in run)):
            continue
        alt = b"-_" if urlsafe else None
        try:
            raw = base64.b64decode(run + "=" * (-len(run) % 4), altchars=alt, validate=True)
        except ValueError:
            continue
        plain = _readable(raw)
        if plain is not None:
            out.append((m.start(), "base64", plain))
        if len(out) >= _MAX_RUNS:
            return out
    for m in _HEX_RUN.finditer(text):
        if len(m.group(0)) <= _MAX_RUN and (plain := _readable(bytes.fromhex(m.group(0)))):
            out.append((m.start(), "hex", plain))
        if len(out) >= _MAX_RUNS:
            break
    return out


def scan_text(text: str, lines: bool = False) -> list[Finding]:
    """The red flags of ``text``: one :class:`Finding` per rule that matches, in :data:`RULES`
    order, quoting up to :data:`EVIDENCE_PER_RULE` distinct matches in text order
    (``reads credentials: .env, GITHUB_TOKEN``), every credential in them masked.
    ``lines=True`` records the 1-based line of the first match. Never raises on any string.

    The rules run on the text and on its variants (:func:`_variants`): format characters
    dropped and look-alike letters folded (:func:`skeleton`), markup and split letters a
    reader joins decoded (:func:`decoded`), traditional characters simplified, the text joined
    as a reader sees it (soft line breaks, padding, emphasis inside words, paragraphs), and
    what tag characters spell; and base64 or hex runs that decode to a sentence
    (:func:`encoded_texts`, scanned as texts of their own, two encodings deep). A rule that
    only a variant trips quotes the variant; one that only a decoded run trips quotes it as
    ``decoded from base64: …``."""
    return _scan_all(text, lines, 0)


def prose_findings(masked: str) -> list[Finding]:
    """:func:`scan_text` with the rules about words only ("addresses the model", "claims
    authority": :data:`_PROSE`), on a text whose credentials are masked already
    (:func:`talos.safety.secrets.mask_secrets`): the secret detectors are not run, which is
    most of a scan's cost on prose (an episode's outcome: :mod:`talos.safety.episodes`)."""
    return _scan_all(masked, False, 0, _PROSE)


#: A text worth rotating: one that holds, rotated, a word the rules about words are made of
#: (measured: rotating and scanning every LoCoMo line doubled the fact filter's cost; a
#: text without such a word has no rule hit once rotated).
_ROT13_WORDS = frozenset(
    codecs.encode(w, "rot13")
    for w in (
        *("ignore", "disregard", "forget", "override", "bypass", "skip", "drop", "pretend"),
        *("act", "behave", "play", "roleplay", "obey", "follow", "reveal", "secretly"),
        *("quietly", "without", "mention", "tell", "you", "your", "youre", "instruction"),
        *("instructions", "rule", "rules", "prompt", "prompts", "guidelines", "directives"),
        *("user", "assistant", "system", "model", "human", "dan", "henceforth", "now"),
        *("previous", "prior", "above", "earlier", "developer", "admin", "authorized"),
        *("note", "dear", "hey", "hello", "attention", "mode", "jailbreak", "character", "ai"),
        *("claude", "gpt", "chatgpt", "gemini", "llm", "agent", "owner", "all", "any"),
    )
)
_WORD = re.compile(r"[a-z]+")


def _rot13_hint(text: str) -> bool:
    """Whether ``text`` holds a word of :data:`_ROT13_WORDS` rotated (one set lookup a
    word: a regex of these words cost as much as the scan it saves)."""
    return not _ROT13_WORDS.isdisjoint(_WORD.findall(text.lower()))


def _scan_all(
    text: str, lines: bool, depth: int, rules: frozenset[str] | None = None
) -> list[Finding]:
    """:func:`scan_text` at encoding depth ``depth``; ``rules``: the reasons of the rules to
    run (default: all)."""
    masked = rules is not None and not any(r.secrets and r.reason in rules for r in RULES)
    found = _scan(text, lines, only=rules, masked=masked)
    for variant, line_of, only in _variants(text):
        if rules is not None:
            only = rules if only is None else only & rules
        for reason, finding in _scan(variant, lines, line_of, only, masked).items():
            found.setdefault(reason, finding)
    if rules is None or not _PROSE.isdisjoint(rules):
        for base in dict.fromkeys((text, skeleton(text))):
            squeezed = _squeezed(base)
            if squeezed is None:
                continue
            for reason, finding in _scan(squeezed, lines, None, _PROSE, True, True).items():
                found.setdefault(reason, finding)
    if depth == 0 and _rot13_hint(text):
        # rot13, tried for a hit of the rules about words only (attack pass 23)
        rotated = rot13(skeleton(text))
        hits: dict[str, Finding] = {}
        for variant, line_of, only in [(rotated, None, _PROSE), *_variants(rotated)]:
            for reason, f in _scan(variant, lines, line_of, only or _PROSE).items():
                hits.setdefault(reason, f)
        for reason, f in hits.items():
            quoted = f"decoded from rot13: {f.evidence}"
            quoted = quoted if len(quoted) <= EVIDENCE_MAX else quoted[:EVIDENCE_MAX] + "…"
            found.setdefault(reason, Finding(reason, quoted, f.line))
    if depth < _MAX_DEPTH:
        for at, kind, plain in encoded_texts(text):
            line = text.count("\n", 0, at) + 1 if lines else 0
            for f in _scan_all(plain, False, depth + 1, rules):
                quoted = f"decoded from {kind}: {f.evidence}"
                quoted = quoted if len(quoted) <= EVIDENCE_MAX else quoted[:EVIDENCE_MAX] + "…"
                found.setdefault(f.reason, Finding(f.reason, quoted, line))
    return sorted(found.values(), key=lambda f: _ORDER[f.reason])


@functools.lru_cache(maxsize=65536)
def text_reasons(text: str) -> tuple[str, ...]:
    """The reasons :func:`scan_text` finds in ``text``, as strings (cached per text)."""
    return tuple(str(f) for f in scan_text(text))


def instruction_reasons(text: str) -> list[str]:
    """The reasons the fact ``text`` is a command rather than a record ([] when benign,
    design §8.2): the red flags of :data:`RULES`, each as ``"reason: evidence"``."""
    return list(text_reasons(text))


def keep_fact(text: str) -> bool:
    """Default ``keep_fact`` filter (design §3.1, §8.2): ``False`` for a line with a red flag.

    A line holding a credential ("contains a credential value") is *withheld*, not delivered
    masked, and ``talos scan`` lists it (issue 13 item 6). Withholding fails closed: a
    detector that finds half a secret (the key id, not the secret access key beside it, as
    the issue found) would leak the other half through a masked line, a withheld line leaks
    nothing; a fact reduced to "the db password is ****" tells an agent nothing it can use,
    while the scan tells the person to move the value to a secret store and keep a pointer
    ("the db password is in the team vault"). Episodes are not records a person curates:
    they are delivered masked (design §8.3, :func:`talos.safety.secrets.mask_secrets`).
    """
    return not text_reasons(text)
