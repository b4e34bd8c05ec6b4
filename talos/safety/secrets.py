"""Credentials in stored text: find them, mask them (design §8.3; issue 13 item 6).

Two detectors run side by side, and a value either of them finds is masked:

* **Our patterns** (:mod:`talos.safety.secret_patterns`, re-exported here): token shapes with a
  public prefix (``ghp_…``, ``sk-…``, ``AKIA…``, JWTs, private key blocks, URL passwords), the
  places a password sits on a command line (``mysql -pPW``, ``curl -u user:PW``, the
  ``aws configure`` prompt), a value after a secret-sounding name (``API_KEY=…``,
  ``密码是…``), plain statements ("my password is …") and numbers that identify a person or
  an account (card numbers, national ids, IBANs: each checked by its checksum or ranges).
* **detect-secrets** (Yelp, :func:`_vendor_patterns`): the regexes of its vendor-format plugins
  (AWS, Artifactory, Azure storage, Discord, GitHub, GitLab, JWT, Mailchimp, npm, OpenAI, PyPI,
  SendGrid, Slack, Square, Stripe, Telegram, Twilio, basic auth in URLs), shipped as data
  (``talos/data/detect_secrets.json``, Apache-2.0: ``talos/data/LICENSES.md``). Its entropy
  plugins are not used: on prose they flag ordinary words (every word of a LoCoMo turn,
  measured); its keyword plugin duplicates :data:`KEYED`. Its regexes run as one combined pass
  and only on a hit one by one.

What a detector finds is a :class:`SecretMatch`: the window that matched (quoted, masked, in a
scan reason) and the value inside it (masked). Masking replaces each maximal run of value
characters with ``****``; the public prefix of a token shape (``ghp_``, ``AKIA``, ``eyJ``, the
``-----BEGIN … PRIVATE KEY-----`` line) is kept so a person can tell what was there. Nothing a
reason, a report or an output prints is taken from a window without this masking
(:func:`mask_window`), so a reason can never quote the credential it is about.
"""

from __future__ import annotations

import functools
import json
import re

from talos import data
from talos.safety.prefilter import runnable_patterns, triggers_in
from talos.safety.secret_classes import NUMBERS, STATEMENTS
from talos.safety.secret_patterns import (
    _DIGITS,
    COMMAND_LINES,
    KEYED,
    LOOSE_KEYED,
    MASK,
    PEM_LINES,
    SHAPES,
    SecretMatch,
    Shape,
)

__all__ = [
    "MASK",
    "SecretMatch",
    "find_secrets",
    "holds_secret",
    "mask_known_secrets",
    "mask_secrets",
    "mask_window",
    "secret_regions",
]


# ---------------------------------------------------------------------------------------------
# detect-secrets, beside our patterns
# ---------------------------------------------------------------------------------------------

#: Plugins whose first group is the value inside a longer match; in the others a group is the
#: token's own prefix (``(ghp|gho|…)_…``) and the whole match is the secret.
_VALUE_GROUP = frozenset({"AWSKeyDetector", "BasicAuthDetector", "NpmDetector"})


@functools.lru_cache(maxsize=1)
def _vendor_patterns() -> tuple[
    re.Pattern[str] | None, tuple[tuple[str, str, re.Pattern[str]], ...]
]:
    """detect-secrets' vendor regexes as ``(combined, ((kind, plugin, regex), …))``; the
    combined one finds whether any matches in one pass. Read from
    ``talos/data/detect_secrets.json`` on first use (~20 ms, compiling them): the regexes of
    the plugins of vendor formats with a value to mask, by secret type, as detect-secrets 1.5
    defines them. Left out there: the entropy plugins (prose words score high), the keyword
    plugin (our :data:`KEYED`), Cloudant/IBM/SoftLayer (their regexes match the *name* and
    need a verification call), the private-key header (our block pattern masks the body) and
    public IPs (no secret)."""
    found: list[tuple[str, str, re.Pattern[str]]] = []
    parts = []
    for entry in json.loads(data.text("detect_secrets.json")):
        flags = entry["flags"]
        rx = re.compile(
            entry["pattern"], (re.I if "i" in flags else 0) | (re.X if "x" in flags else 0)
        )
        found.append((f"detect-secrets: {entry['kind']}", entry["plugin"], rx))
        body = rx.pattern if not flags else f"(?{flags}:{rx.pattern})"
        parts.append(f"(?:{body})")
    combined = re.compile("|".join(parts)) if parts else None
    return combined, tuple(found)


#: Characters of a token: a vendor regex of fixed length that matched a prefix of a longer run
#: of them (a Discord token's 38-character third part, where the regex knows 27) masks the
#: whole run, or the rest of the token would be printed after the mask.
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=.")


def _token_run(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` with ``end`` moved to the end of the run of token characters it is in
    (a dot only inside the run: a sentence's full stop after a token stays). The start stays:
    vendor regexes anchor at the token's prefix, and a name before it (``GITHUB_TOKEN=``) is
    kept."""
    while end < len(text) and text[end] in _TOKEN_CHARS:
        if text[end] == "." and (end + 1 >= len(text) or text[end + 1] not in _TOKEN_CHARS):
            break
        end += 1
    return start, end


def _vendor_find(text: str, ours: list[SecretMatch]) -> list[SecretMatch]:
    """detect-secrets' finds in ``text`` that no match in ``ours`` already covers."""
    combined, patterns = _vendor_patterns()
    if combined is None or not combined.search(text):
        return []
    out: list[SecretMatch] = []
    for kind, plugin, rx in patterns:
        for m in rx.finditer(text):
            if plugin in _VALUE_GROUP and rx.groups and m.group(1):
                vs, ve = m.span(1)  # the value inside (AWS's quoted secret, a URL password)
            else:
                vs, ve = m.span()  # the token itself (a group, if any, is its prefix)
            if ve <= vs or MASK in text[vs:ve]:
                continue
            if plugin not in _VALUE_GROUP:
                vs, ve = _token_run(text, vs, ve)
            if not any(o.value_start <= vs and ve <= o.value_end for o in ours):
                out.append(SecretMatch(m.start(), m.end(), vs, ve, kind))
    return out


# ---------------------------------------------------------------------------------------------
# Finding and masking
# ---------------------------------------------------------------------------------------------

_OURS: tuple[Shape, ...] = (*SHAPES, *COMMAND_LINES, KEYED, LOOSE_KEYED, *STATEMENTS)

#: What every vendor token has: a run of 16 token characters, or a URL's "://" (basic auth).
#: Prose rarely has either, so detect-secrets' pass (67 µs a LoCoMo line) is mostly skipped.
_TOKEN_RUN = re.compile(r"[\w+/=.:-]{16}|://", re.ASCII)


def find_secrets(
    text: str, present: frozenset[str] | None = None, vendor: bool = True, hidden: bool = True
) -> list[SecretMatch]:
    """Every credential both detectors find in ``text``, by window start (design §8.3).

    Our patterns run only when their triggers occur (:mod:`talos.safety.prefilter`; ``present``:
    the triggers of ``text`` when the caller has them); detect-secrets' regexes (unless
    ``vendor=False``) run as one combined pass, only on a text with a token-like run. With
    ``hidden``, a credential written in base64 or spaced out is found too
    (:func:`_hidden_secrets`). Never raises on any string.
    """
    out: list[SecretMatch] = []
    present = triggers_in(text) if present is None else present
    if present:
        runnable = runnable_patterns(present)
        for shape in _OURS:
            if shape.pat in runnable:
                shape.find(text, out)
    if any(m.kind == LOOSE_KEYED.kind for m in out):  # "token ghp_…": the shape says it
        out = [m for m in out if m.kind != LOOSE_KEYED.kind or not _covered(m, out)]
    if _DIGITS.search(text):
        for shape in NUMBERS:
            shape.find(text, out)
    if _TOKEN_RUN.search(text):
        for shape in PEM_LINES:
            shape.find(text, out)
        if vendor:
            out += _vendor_find(text, out)
    if hidden:
        out += [m for m in _hidden_secrets(text, vendor) if not _covered(m, out)]
    out.sort(key=lambda s: (s.start, s.value_start))
    return out


#: A run that may be base64 (standard or URL-safe) of a credential; at most
#: :data:`_MAX_ENCODED` runs of a text are decoded, none longer than :data:`_MAX_ENCODED_RUN`.
_B64_TOKEN = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{20,}={0,2}(?![\w+/=-])")
_MAX_ENCODED, _MAX_ENCODED_RUN = 32, 8192
#: A token spaced out letter by letter ("g h p _ a b c …"), or a prefixed token cut into
#: groups ("ghp_abcd efgh ijkl …"): a reader joins them.
_SPACED = re.compile(r"(?<!\S)(?:[A-Za-z0-9_+/=-] ){11,}[A-Za-z0-9_+/=-](?!\S)")
_CHUNKED = re.compile(
    r"(?<![A-Za-z0-9_])(?:gh[pousr]_|github_pat_|sk-|[sr]k_live_|AKIA|ASIA|xox[abposre]-|glpat-"
    r"|AIza|hf_|npm_|eyJ)[A-Za-z0-9_-]{0,8}(?: [A-Za-z0-9_-]{2,8}){3,}(?![A-Za-z0-9_-])"
)


#: The literal prefixes :data:`_CHUNKED` starts with (a text without one skips it).
_CHUNK_PREFIXES = (
    *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "k_live_", "AKIA"),
    *("ASIA", "xox", "glpat-", "AIza", "hf_", "npm_", "eyJ"),
)


def _hidden_secrets(text: str, vendor: bool) -> list[SecretMatch]:
    """Credentials a reader decodes or joins (the fourth hostile pass): a base64 or hex run
    whose text holds one ("Z2hwX2Fi…" is ``ghp_ab…``), a token with zero-width or full-width
    characters (:func:`_folded_secrets`), a token spaced out or cut into groups. A decoded or
    joined run is the value (masked whole: no part of it is a public prefix)."""
    out: list[SecretMatch] = []
    if len(text) >= 20 and _TOKEN_RUN.search(text):
        for i, m in enumerate(_B64_TOKEN.finditer(text)):
            if i >= _MAX_ENCODED:
                break
            plain = _decoded(m.group(0))
            if plain and find_secrets(plain, vendor=vendor, hidden=False):
                out.append(
                    SecretMatch(m.start(), m.end(), m.start(), m.end(), "credential in base64")
                )
    if len(text) >= 40 and _HEX_TOKEN.search(text):
        for i, m in enumerate(_HEX_TOKEN.finditer(text)):
            if i >= _MAX_ENCODED or len(m.group(0)) > _MAX_ENCODED_RUN:
                break
            try:
                plain = bytes.fromhex(m.group(0)).decode("utf-8")
            except ValueError:
                continue
            if plain.isprintable() and find_secrets(plain, vendor=vendor, hidden=False):
                out.append(SecretMatch(m.start(), m.end(), m.start(), m.end(), "credential in hex"))
    if not text.isascii() and _HIDING.search(text):
        out += _folded_secrets(text, vendor)
    if text.count(" ") >= 3:
        spaced = text.count(" ") >= 11
        chunked = any(p in text for p in _CHUNK_PREFIXES)
        for rx in (_SPACED,) * spaced + (_CHUNKED,) * chunked:
            for m in rx.finditer(text):
                if find_secrets(m.group(0).replace(" ", ""), vendor=vendor, hidden=False):
                    out.append(
                        SecretMatch(m.start(), m.end(), m.start(), m.end(), "credential spaced out")
                    )
    return out


#: Characters that hide a token from a pattern but not from a reader: format characters
#: (soft hyphen, zero-width, bidi controls, word joiner, BOM, tag characters), full-width and
#: mathematical letters and digits.
_HIDING = re.compile(
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\uff10-\uff19\uff21-\uff3a"
    "\uff41-\uff5a\U0001d400-\U0001d7ff\U000e0000-\U000e007f]"
)
#: A run of hex digits that may spell a credential (20 bytes or more).
_HEX_TOKEN = re.compile(r"(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{2}){20,}(?![0-9A-Za-z])")


def _folded_secrets(text: str, vendor: bool) -> list[SecretMatch]:
    """Credentials written with characters a reader does not see or reads as ASCII: zero-width
    and other format characters inside a token ("ghp_\u200babc…"), full-width letters
    ("ｇｈｐ＿…"). The text is read with format characters dropped and each character in its
    compatibility form (NFKC), and a credential found there is masked over the characters it
    came from."""
    import unicodedata

    chars: list[str] = []
    origin: list[int] = []
    for i, c in enumerate(text):
        if unicodedata.category(c) == "Cf":
            continue
        folded = unicodedata.normalize("NFKC", c) if not c.isascii() else c
        for f in folded:
            chars.append(f)
            origin.append(i)
    plain = "".join(chars)
    if plain == text:
        return []
    out: list[SecretMatch] = []
    for m in find_secrets(plain, vendor=vendor, hidden=False):
        if m.value_end <= m.value_start:
            continue
        vs, ve = origin[m.value_start], origin[m.value_end - 1] + 1
        ws, we = origin[m.start], origin[max(m.end, m.start + 1) - 1] + 1
        out.append(SecretMatch(min(ws, vs), max(we, ve), vs, ve, m.kind))
    return out


def _decoded(run: str) -> str | None:
    """A base64 run as text: valid base64 (URL-safe when it holds ``-`` or ``_``) of UTF-8
    whose characters are all printable; else ``None``."""
    import base64
    import binascii

    body = run.rstrip("=")
    if len(body) > _MAX_ENCODED_RUN or len(body) % 4 == 1:
        return None
    urlsafe = "-" in body or "_" in body
    if urlsafe and ("+" in body or "/" in body):
        return None
    try:
        raw = base64.b64decode(
            body + "=" * (-len(body) % 4), altchars=b"-_" if urlsafe else None, validate=True
        )
        plain = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return plain if plain.isprintable() and len(plain) >= 8 else None


def _covered(m: SecretMatch, found: list[SecretMatch]) -> bool:
    """Whether another match's value holds ``m``'s value."""
    return any(
        o is not m and o.value_start <= m.value_start and m.value_end <= o.value_end for o in found
    )


def secret_regions(found: list[SecretMatch]) -> list[tuple[int, int]]:
    """The character ranges masking replaces: the union of every value, less the public
    prefixes of token shapes; sorted, disjoint ``(start, end)`` pairs."""
    if not found:
        return []
    marks: list[tuple[int, int]] = sorted((s.value_start + s.prefix, s.value_end) for s in found)
    kept = [(s.value_start, s.value_start + s.prefix) for s in found if s.prefix]
    merged: list[list[int]] = []
    for a, b in marks:
        for ka, kb in kept:  # a value starting inside a kept prefix starts after it
            if ka <= a < kb:
                a = kb
        if b <= a:
            continue
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def mask_window(
    text: str, regions: list[tuple[int, int]], start: int = 0, end: int | None = None
) -> str:
    """``text[start:end]`` with every part of a region replaced by ``****`` (a region cut by
    the window is masked too). The one way evidence is quoted: ``talos scan``, ``doctor`` and
    ``explain --why-not`` reasons never hold a credential (issue 13 item 6)."""
    end = len(text) if end is None else end
    parts: list[str] = []
    at = start
    for a, b in regions:
        if b <= start or a >= end:
            continue
        a, b = max(a, start), min(b, end)
        parts.append(text[at:a])
        parts.append(MASK)
        at = b
    parts.append(text[at:end])
    return "".join(parts)


@functools.lru_cache(maxsize=65536)
def mask_secrets(text: str) -> str:
    """``text`` with every credential-looking value masked (design §8.3).

    Shapes (``ghp_…``, ``github_pat_…``, ``sk-…``, ``AKIA…`` and the secret beside it,
    ``xoxb-…``, ``AIza…``, JWTs, ``Authorization: Bearer …``, URL passwords — also with an
    empty user or an ``@`` inside —, private key blocks, PGP ones too) keep their public prefix
    and lose the rest: ``ghp_****``. Passwords on command lines (``mysql -pPW``, the ``aws
    configure`` prompt), a value after a secret-sounding name (``GITHUB_TOKEN=…``,
    ``password: …``, ``密码是…``), a password stated in prose ("my password is hunter22") and
    whatever detect-secrets' vendor regexes find become ``****``. Everything else is unchanged,
    and masking is idempotent: ``mask_secrets(mask_secrets(s)) == mask_secrets(s)``.
    """
    return _fixpoint(text, vendor=True)


def _fixpoint(text: str, vendor: bool) -> str:
    """Mask until nothing more is found (at most :data:`_MASK_PASSES` passes): masking one
    shape can uncover another (a private key block whose body was masked no longer keeps its
    armour line as a public prefix, so a second pass masked the armour after ``password:``;
    hypothesis found it), and the idempotence of :func:`mask_secrets` must hold by
    construction, not by luck."""
    for _ in range(_MASK_PASSES):
        regions = secret_regions(find_secrets(text, vendor=vendor))
        if not regions:
            return text
        masked = mask_window(text, regions)
        if masked == text:
            return text
        text = masked
    return text


#: Passes of :func:`_fixpoint`; each one masks at least one more value, so the text shrinks.
_MASK_PASSES = 8


@functools.lru_cache(maxsize=65536)
def mask_known_secrets(text: str) -> str:
    """:func:`mask_secrets` with our patterns only: what the usage and trace keys are masked
    with on the recall path, which does not load detect-secrets' regexes (~20 ms to compile,
    design §11). A fact holding a credential either finds is withheld before it can be a key."""
    return _fixpoint(text, vendor=False)


def holds_secret(text: str) -> bool:
    """Whether ``text`` holds a credential value (either detector)."""
    return bool(find_secrets(text))
