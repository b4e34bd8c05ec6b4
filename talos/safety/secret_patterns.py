"""Our credential patterns: what :mod:`talos.safety.secrets` takes for a credential (design §8.3).

Each pattern is a :class:`Shape`: a prefiltered regular expression
(:class:`talos.safety.prefilter.Pat`)
whose ``value`` group is the secret, with an optional check of the match (a checksum, a
placeholder test). The tables, in the order :func:`talos.safety.secrets.find_secrets` runs them:

* :data:`SHAPES`: tokens with a public prefix (``ghp_…``, ``sk-…``, ``AKIA…``, JWTs, private
  key blocks, URL passwords), the prefix kept when masking;
* :data:`COMMAND_LINES`: where a password sits on a command line (``mysql -pPW``,
  ``curl -u user:PW``);
* :data:`KEYED` and :data:`LOOSE_KEYED`: a value after a secret-sounding name (``API_KEY=…``,
  ``密码是…``, ``secret wJalr…``);
* :data:`STATEMENTS`: plain statements ("my password is …", "la contraseña es …", a seed
  phrase, a passport number);
* :data:`NUMBERS`: numbers that identify a person or an account (payment cards, national ids,
  IBANs), each validated by its checksum or ranges;
* :data:`PEM_LINES`: a private key's body line alone.

Finding, masking and detect-secrets' vendor regexes beside these are :mod:`talos.safety.secrets`.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from talos.safety.prefilter import P, Pat

__all__ = [
    "COMMAND_LINES",
    "KEYED",
    "LOOSE_KEYED",
    "MASK",
    "NUMBERS",
    "PEM_LINES",
    "SHAPES",
    "STATEMENTS",
    "SecretMatch",
    "Shape",
]

#: What a masked value becomes.
MASK = "****"

_I = re.IGNORECASE


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """One credential found in a text: ``start``/``end`` of the matched window (what a scan
    reason quotes, after masking), ``value_start``/``value_end`` of the value itself (what is
    masked), ``kind`` (the detector: ``github token``, ``url password``, ``detect-secrets: AWS
    Access Key`` …) and ``prefix``: the value starts with a public prefix of that many
    characters, which masking keeps (``ghp_``). Offsets index the text searched."""

    start: int
    end: int
    value_start: int
    value_end: int
    kind: str
    prefix: int = 0


class Shape:
    """A secret pattern: a :class:`~talos.safety.prefilter.Pat` whose ``value`` group (or, without
    one, the text after the ``keep`` group) is the secret; ``prefix=True`` when the ``keep``
    group is the token's own public prefix (``ghp_``), kept when masking."""

    __slots__ = ("accept", "kind", "pat", "prefix")

    def __init__(
        self,
        kind: str,
        pat: Pat,
        prefix: bool = False,
        accept: object = None,
    ) -> None:
        self.kind, self.pat, self.prefix = kind, pat, prefix
        self.accept = accept

    def find(self, text: str, out: list[SecretMatch]) -> None:
        """Append every accepted match in ``text`` to ``out``."""
        groups = self.pat.regex.groupindex
        regex, pos = self.pat.regex, 0
        while (m := regex.search(text, pos)) is not None:
            if "value" in groups:
                # a pattern of alternatives names its value in each (value, value2, …)
                vs, ve = next(
                    (m.span(g) for g in groups if g.startswith("value") and m.start(g) >= 0),
                    (-1, -1),
                )
            else:
                vs, ve = m.end("keep"), m.end()
            # the next search starts inside this match's value, not after it: in "my password
            # is Secret: aws_secret_access_key = wJalr…" the first match takes the name as its
            # value, and a search from its end never saw the real secret (hypothesis found it)
            pos = max(vs, m.start() + 1) if vs < m.end() else max(m.end(), m.start() + 1)
            if self.accept is not None and not self.accept(m):  # type: ignore[operator]
                continue
            if ve <= vs or (not self.prefix and MASK in text[vs:ve]):
                continue  # nothing, or masked before: masking is idempotent
            if self.prefix:
                ks = m.start("keep")
                out.append(SecretMatch(m.start(), m.end(), ks, ve, self.kind, vs - ks))
            else:
                out.append(SecretMatch(m.start(), m.end(), vs, ve, self.kind))


def _S(
    kind: str, triggers: str | tuple[str, ...], pattern: str, flags: int = 0, **kw: object
) -> Shape:
    return Shape(kind, P(triggers, pattern, flags), **kw)  # type: ignore[arg-type]


#: A URL's host after the ``@`` of its user info: a name or address, then the end of the URL's
#: authority (port, path, query, end of text) — so ``p@ss@db`` masks ``p@ss``, not ``p``.
_HOST_END = r"(?=[A-Za-z0-9\[][A-Za-z0-9.\-\[\]]*(?::\d{1,5})?(?:[/?#\s\"'`<>)\],;]|$))"

#: Tokens recognisable by their shape, with a public prefix (group ``keep``, kept).
SHAPES: tuple[Shape, ...] = (
    _S(
        "github token",
        "ghp_ gho_ ghu_ ghs_ ghr_",
        r"(?<![A-Za-z0-9_])(?P<keep>gh[pousr]_)[A-Za-z0-9]{20,}",
        prefix=True,
    ),
    _S(
        "github token",
        "github_pat_",
        r"(?<![A-Za-z0-9_])(?P<keep>github_pat_)[A-Za-z0-9_]{20,}",
        prefix=True,
    ),
    _S(
        "api key (sk-)",
        "sk-",
        r"(?<![A-Za-z0-9_-])(?P<keep>sk-)(?=[A-Za-z0-9_-]{0,200}\d)[A-Za-z0-9_-]{20,}",
        prefix=True,
    ),
    _S(
        "stripe key",
        "_live_ _test_",
        r"(?<![A-Za-z0-9_])(?P<keep>(?:sk|rk|pk)_(?:live|test)_)[A-Za-z0-9]{10,}",
        prefix=True,
    ),
    _S(
        "aws access key id",
        "akia asia abia acca",
        r"(?<![A-Za-z0-9])(?P<keep>A(?:KIA|SIA|BIA|CCA))[A-Z0-9]{16}(?![A-Za-z0-9])",
        prefix=True,
    ),
    # The secret access key printed or pasted beside its key id (issue 13: "AKIA****
    # wJalrXUtnFEMI/…" — the key id was masked, the secret was not). Also after a masked id.
    _S(
        "aws secret access key",
        "akia asia abia acca",
        r"(?<![A-Za-z0-9])A(?:KIA|SIA|BIA|CCA)(?:[A-Z0-9]{16}|\*{4})(?![A-Za-z0-9])"
        r"[\s\"',:;=|]{1,8}(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
    ),
    # What `aws configure` prints and the person types after it.
    _S(
        "aws configure prompt",
        "aws",
        r"\bAWS\s+(?:Secret\s+Access\s+Key|Access\s+Key\s+ID|Session\s+Token)\s*"
        r"\[[^\]\n]{0,60}\]\s*:[ \t]*(?P<value>[^\s\"'`]{8,})",
        _I,
    ),
    _S(
        "slack token",
        "xox xapp-",
        r"(?<![A-Za-z0-9_])(?P<keep>xapp-|xoxe\.xox[bp]-|xox[abposre]-)[A-Za-z0-9-]{10,}",
        prefix=True,
    ),
    _S("google api key", "aiza", r"(?<![A-Za-z0-9_])(?P<keep>AIza)[A-Za-z0-9_-]{30,}", prefix=True),
    _S(
        "gitlab token",
        "glpat-",
        r"(?<![A-Za-z0-9_])(?P<keep>glpat-)[A-Za-z0-9_-]{20,}",
        prefix=True,
    ),
    _S("npm token", "npm_", r"(?<![A-Za-z0-9_])(?P<keep>npm_)[A-Za-z0-9]{30,}", prefix=True),
    # Vendor prefixes detect-secrets does not know (hostile pass of issue 13): Stripe webhook
    # secrets, Shopify, DigitalOcean, Doppler, age, Linear, Atlassian, Notion, Grafana, Google
    # OAuth access tokens, Mailgun.
    _S(
        "vendor token",
        "whsec_ shpat_ shpss_ shpca_ shppa_ _v1_ dp.st. dp.ct. dp.sa. dp.scim. dp.audit. "
        "age-secret-key-1 lin_api_ lin_oauth_ atatt ntn_ glsa_ ya29.",
        r"(?<![A-Za-z0-9_])(?P<keep>whsec_|shp(?:at|ss|ca|pa)_|do[opr]_v1_"
        r"|dp\.(?:st|ct|sa|scim|audit)\.|AGE-SECRET-KEY-1|lin_(?:api|oauth)_|ATATT|ntn_|glsa_"
        r"|ya29\.)[A-Za-z0-9_.=+/-]{16,}",
        prefix=True,
    ),
    _S(
        "vendor token",
        "secret_",
        r"(?<![A-Za-z0-9_])(?P<keep>secret_)[A-Za-z0-9]{43}(?![A-Za-z0-9_])",
        prefix=True,
    ),
    _S(
        "vendor token",
        "key-",
        r"(?<![A-Za-z0-9_-])(?P<keep>key-)(?=[A-Za-z0-9]{0,60}\d)[A-Za-z0-9]{32,}(?![A-Za-z0-9])",
        prefix=True,
    ),
    # A Telegram bot token: the bot's number, a colon, "AA" and 33 more characters.
    _S(
        "telegram bot token",
        ":aa",
        r"(?<![\w:])(?P<value>\d{8,10}:AA[A-Za-z0-9_-]{30,40})(?![\w-])",
    ),
    _S("hugging face token", "hf_", r"(?<![A-Za-z0-9_])(?P<keep>hf_)[A-Za-z0-9]{30,}", prefix=True),
    # A JWT (header.payload.signature), or its header, or header.payload.
    _S(
        "json web token",
        "eyj",
        r"(?<![A-Za-z0-9_-])(?P<keep>eyJ)[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]+){0,2}",
        prefix=True,
    ),
    _S(
        "authorization header",
        "authorization",
        r"(?P<keep>\bauthorization\s*:\s*(?:bearer|basic|token)\s+)[^\s\"'`]{8,}",
        _I,
    ),
    # A Cookie header: every cookie after it is a session credential.
    _S(
        "cookie header",
        "cookie",
        r"(?P<keep>\b(?:set-)?cookie\s*:[ \t]*)(?=[^\n]{0,200}?[\w.-]+=[^\s;]{8,})"
        r"[^\n]*[^\s]",
        _I,
    ),
    _S(
        "bearer token",
        "bearer",
        r"(?P<keep>\bbearer\s+)(?=[A-Za-z0-9._~+/=-]{0,500}\d)[A-Za-z0-9._~+/=-]{16,}",
        _I,
    ),
    # user:password@host in a URL. The user may be empty (redis://:pw@host); the password may
    # hold "@" and "/" (issue 13): it runs to the *last* "@" followed by a host, so a path
    # after that host may be masked too — more, never less. A port ("host:8080/x@y") is no
    # password.
    _S(
        "url password",
        "://",
        r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.-]{0,20}://[^\s:/@]{0,100}:)(?!\*{4}@)(?!\d{1,5}[/@])"
        rf"(?P<value>[^\s\"'`<>]{{1,200}})@{_HOST_END}",
    ),
    _S(
        "private key block",
        "private",
        # the armour as a reader takes it: any case, words split by any whitespace (a line
        # break inside "PRIVATE KEY" hid the block from a pattern of single spaces)
        r"(?P<keep>-----[ \t]*BEGIN[A-Z\s]{0,40}?PRIVATE\s+KEY(?:\s+BLOCK)?[ \t]*-----)"
        r"(?!\*{4})(?:[\s\S]{0,20000}?-----[ \t]*END[A-Z\s]{0,40}?PRIVATE\s+KEY(?:\s+BLOCK)?"
        r"[ \t]*-----|[\s\S]{1,20000})",
        _I,
        prefix=True,
    ),
    # A private key's body without its armour line (a key pasted one line per memory.md line):
    # the base64 of the DER structures that open every private key (PKCS#1 RSA/DSA, PKCS#8
    # plain and encrypted, SEC1 EC, OpenSSH), then a PEM body line alone (64 base64 characters
    # with upper case, lower case and digits, the whole line).
    _S(
        "private key body",
        "mii mhc mhq migh migk mc4c b3blbnnzac1rzxktdje",
        r"(?<![A-Za-z0-9+/])(?P<value>(?:MII[A-Za-z0-9+/]{2}[AQgw]IB(?:ADANBgkqhkiG9w0BAQ"
        r"|AAK[BC])|MII[A-Za-z0-9+/]{2}[AQgw]?[A-Za-z0-9+/]{0,4}BgkqhkiG9w0BBQ0w|MHcCAQEE"
        r"|MHQCAQEE|MIGHAgEAMBMGByqGSM49|MIGkAgEBBDA|MC4CAQAwBQYDK2Vw|b3BlbnNzaC1rZXktdjE)"
        r"[A-Za-z0-9+/=]{8,})",
    ),
    _S(
        "putty private key",
        "private-lines",
        r"(?P<keep>Private-Lines:\s*\d+\s)(?!\*{4})[A-Za-z0-9+/=\s]{16,20000}",
        _I,
        prefix=True,
    ),
)

#: A PEM body line alone (a private key pasted one line per memory.md line): 64 base64
#: characters with upper case, lower case and digits, the whole line. No substring is common to
#: them, so this runs without a trigger, on a text with a 16-character token-like run.
PEM_LINES: tuple[Shape, ...] = (
    Shape(
        "private key body",
        Pat(
            (),
            r"(?m)^[ \t>]*(?P<value>(?=[A-Za-z0-9+/]{0,63}[A-Z])(?=[A-Za-z0-9+/]{0,63}[a-z])"
            r"(?=[A-Za-z0-9+/]{0,63}[0-9])[A-Za-z0-9+/]{64})[ \t]*$",
        ),
    ),
)

# -- numbers that identify a person or an account (the hostile-text pass): each is validated
# by its own checksum or ranges, so ordinary numbers (order ids, phone numbers, timestamps)
# are not taken for one


def _luhn(digits: str) -> bool:
    """Whether ``digits`` pass the Luhn check (payment card numbers, ISO/IEC 7812)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


#: Issuer prefixes of the card networks and the lengths each issues, most specific first:
#: Amex (34, 37) is the only network with 15-digit numbers, so a Luhn-valid 15-digit number
#: starting with 4 (an IMEI: "IMEI 490154203237518" was masked as a card, attack pass 23) is
#: no card. Visa, Mastercard (51-55, 2221-2720), Amex, Diners, Discover, JCB, UnionPay,
#: Maestro.
_CARD_ISSUERS: tuple[tuple[re.Pattern[str], frozenset[int]], ...] = tuple(
    (re.compile(prefix), frozenset(lengths))
    for prefix, lengths in (
        (r"4", (13, 16, 19)),
        (r"5[1-5]|2(?:2[2-9][1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)", (16,)),
        (r"3[47]", (15,)),
        (r"3(?:0[0-5]|[689])", range(14, 20)),
        (r"6011|64[4-9]|65", range(16, 20)),
        (r"35(?:2[89]|[3-8])", range(16, 20)),
        (r"62", range(16, 20)),
        (r"5[06-9]|6\d", range(13, 20)),
    )
)
#: A word that names the number as a device's (an IMEI is 15 digits with a Luhn check digit,
#: as a card number has).
_DEVICE_NUMBER = re.compile(r"\b(?:imei(?:sv)?|meid)\b[^\d\n]{0,16}$", re.IGNORECASE)


def _card_number(m: re.Match[str]) -> bool:
    """A payment card number: 13–19 digits written whole or in groups of 4 (Amex 4-6-5) with
    one kind of separator (space, hyphen or dot: "4111.1111.1111.1111", the fourth hostile
    pass), an issuer prefix with a length that issuer gives
    (:data:`_CARD_ISSUERS`), a valid Luhn check, and no IMEI named just before it."""
    value = m.group("value")
    digits = value.replace(" ", "").replace("-", "").replace(".", "")
    seps = {c for c in value if not c.isdigit()}
    if len(seps) > 1 or not 13 <= len(digits) <= 19:
        return False
    if seps:
        sizes = [len(g) for g in value.split(seps.pop())]
        if sizes != [4, 6, 5] and not (all(n == 4 for n in sizes[:-1]) and 1 <= sizes[-1] <= 4):
            return False
    issuer = next((n for rx, n in _CARD_ISSUERS if rx.match(digits)), None)
    if issuer is None or len(digits) not in issuer or not _luhn(digits):
        return False
    return not (len(digits) == 15 and _DEVICE_NUMBER.search(m.string, 0, m.start()))


_CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def _cn_resident_id(m: re.Match[str]) -> bool:
    """A Chinese resident identity number (GB 11643): a region code, a real birth date and
    the ISO 7064 MOD 11-2 check character."""
    value = m.group("value").upper()
    try:
        dt.date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    check = "10X98765432"[sum(int(c) * w for c, w in zip(value, _CN_ID_WEIGHTS, strict=False)) % 11]
    return value[17] == check


def _iban(m: re.Match[str]) -> bool:
    """An IBAN (ISO 13616): 15–34 characters, at least 10 of them digits, whose MOD 97-10
    check gives 1."""
    value = m.group("value").replace(" ", "")
    if not 15 <= len(value) <= 34 or sum(c.isdigit() for c in value) < 10:
        return False
    moved = value[4:] + value[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


#: Numbers that identify a person or an account; run only on a text with a run of digits
#: (:data:`_DIGITS`). Masked whole: no part of one is public.
NUMBERS: tuple[Shape, ...] = (
    Shape(
        "payment card number",
        Pat((), r"(?<![\w.+-])(?P<value>\d{4}(?:[ .-]?\d){9,15})(?![\w-]|\.\d)"),
        accept=_card_number,
    ),
    Shape(
        "national id number (China)",
        Pat(
            (),
            r"(?<![0-9A-Za-z])(?P<value>[1-8]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])"
            r"(?:0[1-9]|[12]\d|3[01])\d{3}[0-9Xx])(?![0-9A-Za-z])",
        ),
        accept=_cn_resident_id,
    ),
    # a US social security number as written, ddd-dd-dddd, without the ranges never issued
    # (area 000, 666, 900-999; group 00; serial 0000)
    Shape(
        "national id number (US SSN)",
        Pat(
            (),
            r"(?<![\w-])(?P<value>(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4})(?![\w-])",
        ),
    ),
    Shape(
        "bank account number (IBAN)",
        Pat(
            (),
            r"(?<![0-9A-Za-z])(?P<value>[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?)"
            r"(?![0-9A-Za-z])",
        ),
        accept=_iban,
    ),
)
#: A UK National Insurance number as the rules of its prefixes allow (attack pass 23): the
#: first letter not D F I Q U V, the second not D F I O Q U V, not BG GB KN NK NT TN ZZ, six
#: digits, a suffix A-D. Without its name only the unspaced form in capitals is taken.
_NINO = r"(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
NUMBERS += (
    Shape(
        "national insurance number (UK)",
        Pat((), rf"(?<![0-9A-Za-z])(?P<value>{_NINO}\d{{6}}[A-D])(?![0-9A-Za-z])"),
    ),
)
#: Every number of :data:`NUMBERS` holds this: a text without it skips them.
_DIGITS = re.compile(
    r"\d{3}[ .-]?\d{2}|\d{4}\.\d|\d{2}[A-EHLMPR-Ta-ehlmpr-t]\d{2}[A-Za-z]\d{3}|[A-Z]{5}\d{4}[A-Z]"
)

#: Passwords on command lines: ``mysql -pPW`` (the password glued to ``-p``), ``sshpass -p PW``,
#: ``redis-cli -a PW``, ``curl -u user:PW``, ``--password PW``.
COMMAND_LINES: tuple[Shape, ...] = (
    _S(
        "command-line password",
        "mysql mariadb",
        r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb)\b"
        r"[^\n|;&]{0,200}?\s-p(?P<value>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"`]+)",
    ),
    _S(
        "command-line password",
        "sshpass redis-cli",
        r"\b(?:sshpass\s+-p|redis-cli\b[^\n|;&]{0,200}?\s-a)\s*"
        r"(?P<value>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"`-][^\s'\"`]*)",
    ),
    _S(
        "command-line password",
        "curl",
        r"\bcurl\b[^\n|;&]{0,300}?\s(?:-u|--user)[ \t=]*[\"']?[^\s:\"'@]{1,100}:"
        r"(?P<value>[^\s\"'`]+)",
    ),
    _S(
        "command-line password",
        "--password --passwd",
        r"(?<![\w-])--(?:password|passwd)[ \t]+"
        r"(?P<value>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"`-][^\s'\"`]*)",
    ),
)

#: ``NAME = value`` / ``name: value`` where NAME says "secret". The value is masked when it looks
#: like one (see :func:`_looks_secret`); the name, separator and quote are kept.
_KEYED = P(
    (
        *("token", "secret", "passw", "pwd", "key", "credential", "sig=", "sig:", "sig ", 'sig"'),
        *("sig'", "signature", "密码", "口令", "密钥", "令牌", "passphrase", "passcode"),
    ),
    r"(?P<keep>(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z0-9_.-]{0,60}?"
    # passphrase, passcode: the hostile-text pass ("gpg passphrase: …" was not masked)
    r"(?:token|secret|passw(?:or)?d|passwd|pwd|passphrase|passcode"
    r"|(?:api|access|private|secret|auth|signing"
    r"|encryption|master|account|shared[_-]?access)[_-]?key|credentials?|sig|signature))"
    # a markup element named so, "<password>…</password>", the value up to the next tag
    r"(?:(?![A-Za-z0-9])[\"']?[ \t]*[:=][ \t]*[\"']?|(?<=[A-Za-z])>(?=[^<\s]{4,}</))"
    r"|(?:密码|口令|密钥|令牌)(?:[ \t]*(?:是|为|[:：=])[ \t]*|[ \t]+(?=[^\s\u3000-\u9fff]*\d)))"
    # a value is no CJK prose: "密码是在设置页面修改的" says where, not what
    r"(?P<value>(?<=>)[^<\s]{4,}(?=</)|[^\s\"'`,;，。\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]{4,})",
    _I,
)
#: Values that are not secrets: variables, placeholders, and code (``row.id``, ``get_pw()``).
_PLACEHOLDER = re.compile(
    r"^(?:[$<{%*\[(]|x{3,}|\.{3}|…|null|none|true|false|changeme$"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$|[\w.]+\()",
    _I,
)
_PASSWORD_NAMES = ("passw", "pwd", "passphrase", "passcode")


def _looks_secret(name: str, value: str) -> bool:
    """A value after a secret-sounding name is masked when it is no placeholder and is long
    enough to be a credential: 6+ characters after a password name, else 8+ with a digit or
    16+ characters (``TOKEN: expired`` stays readable)."""
    if _PLACEHOLDER.match(value):
        return False
    low = name.lower()
    if any(w in low for w in _PASSWORD_NAMES) or name in ("密码", "口令"):
        return len(value) >= 6
    return len(value) >= 16 or (len(value) >= 8 and any(c.isdigit() for c in value))


def _keyed_secret(m: re.Match[str]) -> bool:
    name = m.group("name") or m.group("keep")
    return _looks_secret(name.strip(" \t:=：是为\"'"), m.group("value"))


KEYED = Shape("value after a secret name", _KEYED, accept=_keyed_secret)

#: A secret name, a space, then a value that looks generated: 16+ token characters with a
#: letter and a digit and no word breaks ("secret wJalrXUtnFEMI/K7MDENG/…", "API key 9f8e…");
#: the name may carry a prefix tied to it ("client_secret 3f9a…", the fourth hostile pass).
#: Prose after such a name ("the secret sauce", "token bucket") has no such run.
LOOSE_KEYED = _S(
    "value after a secret name and a space",
    "secret token key passw pwd passphrase",
    r"(?P<keep>(?<![A-Za-z0-9])(?:[A-Za-z0-9]{1,20}[_-]){0,3}(?:secret|token|(?:api|access"
    r"|secret|private)[\s_-]?key|passw(?:or)?d|pwd|passphrase)s?[ \t]+)"
    r"(?=[A-Za-z0-9/+=_]{0,200}\d)(?=[A-Za-z0-9/+=_]{0,200}[A-Za-z])"
    r"[A-Za-z0-9/+=_]{16,}(?![A-Za-z0-9/+=_.-])",
    _I,
)

#: Words that follow "password is" in prose and are no password.
_NOT_A_PASSWORD = frozenset(
    "expired wrong invalid incorrect required missing correct right weak strong long short"  # noqa: SIM905
    " empty blank stored saved kept changed reset set ready new old same different secure"
    " unsafe encrypted hashed hidden visible unknown written there here fine ok okay".split()
)


def _statement_secret(m: re.Match[str]) -> bool:
    """A value stated in prose ("my password is …") is a password when it is no placeholder
    and not a plain word: it has a digit or a symbol, or upper case after its first letter
    (``hunter22``, ``Tr0ub4dor&3``, ``PIN is 4821``; not "is expired", "is Secret")."""
    value = m.group("value")
    if _PLACEHOLDER.match(value) or value.lower() in _NOT_A_PASSWORD:
        return False
    name = m.group("name").lower()
    if not any(w in name for w in (*_PASSWORD_NAMES, "pw", "pin", "code")):  # tokens, keys
        return _looks_secret(name, value)
    return any(not c.isalpha() for c in value) or any(c.isupper() for c in value[1:])


#: A word of a passphrase: letters (any script) or digits, with inner hyphens or
#: apostrophes, not a function word (a passphrase's words are drawn at random; "is in the
#: vault" and "required for every login" say where or what, not what it is).
_FUNCTION_WORDS = (
    r"(?:a|an|the|in|on|at|of|for|to|from|by|with|without|and|or|but|not|no|is|are|was|were|be"
    r"|been|it|its|this|that|these|those|my|your|our|their|his|her|we|you|they|he|she|i|me|us"
    r"|them|so|too|very|also|still|just|only|now|then|than|as|if|when|where|which|who|what|how"
    r"|can|could|should|would|will|shall|must|may|might|do|does|did|has|have|had|into|onto"
    r"|under|over|after|before|every|each|all|any|some|same|different|stored|saved|kept"
    r"|written|set|changed|reset|required|needed|used)"
)
_PLAIN_WORD = rf"(?!{_FUNCTION_WORDS}\b)[^\W_][\w'’-]{{0,30}}(?<![-'’])"


def _passphrase(m: re.Match[str]) -> bool:
    """Words after a passphrase's name are a passphrase: three or more, none a placeholder,
    and not an adverb's description ("stored securely offline"); three of them not opened by
    a word that says what the passphrase is ("correct", "stored": :data:`_NOT_A_PASSWORD`)."""
    words = m.group("value").split()
    if _PLACEHOLDER.match(words[0]):
        return False
    if any(w.lower().endswith("ly") for w in words):
        return False
    return len(words) >= 4 or words[0].lower() not in _NOT_A_PASSWORD


def _foreign_password(m: re.Match[str]) -> bool:
    """A value stated after a password's name in another language is a password when it is no
    placeholder and not a plain word (as :func:`_statement_secret`: a digit, a symbol, or upper
    case after its first letter)."""
    value = m.group("value")
    if _PLACEHOLDER.match(value):
        return False
    return any(not c.isalpha() for c in value) or any(c.isupper() for c in value[1:])


#: Plain statements: "my password is …", "the wifi password for the office is …",
#: "pw = …", "API key is …" (the issue's "my password is …").
STATEMENTS: tuple[Shape, ...] = (
    _S(
        "stated password",
        "passw pwd pw pin passphrase passcode token api key secret code",
        # "the secret is …" and the codes that open things (the hostile-text pass): a
        # secret that reads as a word ("the secret is patience") is no credential
        r"\b(?P<name>pass(?:word|wd|phrase|code)s?|pwd|pw|pin(?:\s+code)?|(?:api|access|secret)"
        r"[\s_-]?key|(?:access\s+|api\s+|auth\s+)?token|secret(?:\s+(?:code|word|phrase))?"
        r"|(?:recovery|backup|unlock|door|alarm|safe|gate|security|verification|2fa|otp)\s+codes?"
        r")(?:\s+(?:for|of|to|on|at)\s+"
        r"[^\n,;:.!?]{1,40}?)?\s+(?:(?:is|was|has\s+been)\s+(?:changed|set|reset)\s+to"
        r"|changed\s+to|is\s+now|is|was|reads)\s*[:=]?[ \t]*[\"'`“‘]?"
        # quoted: to the closing quote; bare: not the sentence's last stop
        r"(?P<value>(?<=[\"'`“‘])[^\n\"'`”’]{2,80}(?=[\"'`”’])|[^\s\"'`”’,;]{2,}[^\s\"'`”’,;.!?:])",
        _I,
        accept=_statement_secret,
    ),
    # a passphrase of plain words ("my passphrase is correct horse battery staple"; attack
    # pass 23): the words up to a function word or the clause's end, three or more of them
    _S(
        "stated passphrase",
        "passphrase pass phrase password seed recovery mnemonic secret phrase",
        r"\b(?P<name>pass\s?phrases?|passwords?|secret\s+phrases?)(?:\s+(?:for|of|to|on)\s+"
        r"[^\n,;:.!?]{1,40}?)?(?:\s+(?:is|was|is\s+now|reads)\b\s*[:=]?|\s*[:=])[ \t]*"
        rf"[\"'`“‘]?(?P<value>{_PLAIN_WORD}(?:[ \t]+{_PLAIN_WORD}){{2,23}})",
        _I,
        accept=_passphrase,
    ),
    # a wallet's seed (recovery, mnemonic) phrase: 12 to 24 words of a fixed list, any words,
    # apart by spaces, commas or numbers ("1. abandon 2. ability …": the fourth hostile pass)
    _S(
        "stated passphrase",
        ("seed", "recovery", "mnemonic", "wallet", "word phrase", "words phrase"),
        r"\b(?P<name>(?:seed|recovery|mnemonic|wallet)\s+(?:phrase|words)s?|mnemonic|seed"
        r"|(?:12|18|24)[\s-]words?(?:\s+(?:seed|recovery))?\s+phrase)"
        r"(?:\s+(?:is|was|reads)\b\s*[:=]?|\s*[:=])[ \t]*[\"'`“‘]?"
        r"(?P<value>(?:\d{1,2}[.)][ \t]*)?[^\W\d_]{2,12}(?:[ \t,;]+(?:\d{1,2}[.)][ \t]*)?"
        r"[^\W\d_]{2,12}){11,23})(?![\w-])",
        _I,
    ),
    # a password stated in another language (attack pass 23: "la contraseña es …",
    # "パスワードは … です" were delivered as written): the name, its copula or a colon, a value
    _S(
        "stated password",
        (
            *("contrase", "clave", "passe", "passwort", "kennwort", "пароль", "парол"),
            *("パスワード", "暗証番号", "비밀번호", "암호", "senha", "wachtwoord", "密码", "口令"),
        ),
        r"(?P<name>\b(?:contrase(?:ñ|n)as?|claves?|mots?\s+de\s+passe|passw(?:o|ö)rt|kennwort"
        r"|senhas?|wachtwoord)\b|пароль|паролем|パスワード|暗証番号|비밀번호|암호|密码|口令)"
        r"(?:\s+(?:del?|de\s+la|du|de|für\s+(?:das|den|die)|от|для|do|da)\s+"
        r"[^\n,;:.!?，。]{1,30}?)?"
        r"(?:\s*[:：=—–]|\s+(?:es|era|est|ist|lautet|é|e|is|это|—)(?=\s)|は|는|은|是|为|為)"
        r"[ \t]*[\"'`“‘«「]?"
        r"(?P<value>[^\s\"'`”’»」,;，。、\u3000-\u30ff\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]{2,}"
        r"[^\s\"'`”’»」,;.!?:，。、\u3000-\u30ff\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef])",
        _I,
        accept=_foreign_password,
    ),
    # a UK National Insurance number after its name, in any spacing; a specimen prefix
    # ("QQ123456C") named as one is masked too (attack pass 23)
    _S(
        "national insurance number (UK)",
        ("insurance", "ni number", "ni no", "nino"),
        r"(?:(?i:\bnational\s+insurance(?:\s+(?:number|no\.?|num))?|\bNI number|\bNI no\.?"
        r"|\bnino)(?:\s+(?i:is|was))?[ \t]*[:=#]?[ \t]*)"
        r"(?P<value>[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D])(?![0-9A-Za-z])",
    ),
    # a passport number after the word, in the common languages (attack pass 23)
    _S(
        "passport number",
        (
            *("passport", "pasaporte", "passeport", "reisepass", "passnummer", "паспорт"),
            *("パスポート", "护照", "護照", "여권", "passaporto", "passaporte", "paspoort"),
        ),
        r"(?i:\bpassports?|\bpasaportes?|\bpasseports?|\breisepass(?:nummer)?|\bpassnummer"
        r"|паспорт\w*|パスポート|护照|護照|여권|\bpassaport[oe]s?|\bpaspoort)"
        r"(?i:[ \t]*-?(?:number|no\.?|num\.?|nr\.?|#|n[uú]mero|num[eé]ro|nummer|номер|番号|号码"
        r"|号|號碼|번호))?(?i:[ \t]+(?:is|was|es|est|ist|это))?[ \t]*[:：=#]?[ \t]*"
        r"(?P<value>[A-Z0-9]{6,9})(?![\w-])",
        accept=lambda m: sum(c.isdigit() for c in m.group("value")) >= 5,
    ),
    # a PIN after its name ("PIN: 4821", "pin code = 0000"): digits only, 4 to 8 of them
    _S(
        "stated pin",
        "pin",
        r"(?P<keep>\bpin(?:[ \t]*code)?[ \t]*[:=：][ \t]*)(?P<value>\d{4,8})(?![\w-])",
        _I,
    ),
)
