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
    r"(?![A-Za-z0-9])[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"|(?:密码|口令|密钥|令牌)(?:[ \t]*(?:是|为|[:：=])[ \t]*|[ \t]+(?=[^\s\u3000-\u9fff]*\d)))"
    # a value is no CJK prose: "密码是在设置页面修改的" says where, not what
    r"(?P<value>[^\s\"'`,;，。\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]{4,})",
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


# -- the fourth hostile pass: credentials that were delivered as written ------------------------
#: A password stated with the verb first ("I changed the database password to Tr0ub4dor&3",
#: "set my wifi pin to 4821"), the value as :func:`_statement_secret` takes one.
_VERB_FIRST = _S(
    "stated password",
    ("passw", "passphrase", "passcode", " pin", "\tpin", "\npin"),
    r"\b(?:changed|set|reset|updated|switched|made|chose|picked)\s+(?:(?:the|my|our|his|her"
    r"|their|your|its)\s+)?(?:[\w-]+\s+){0,3}?(?P<name>pass(?:word|wd|phrase|code)s?"
    r"|pin(?:\s+code)?)\s+(?:to|into|as)\s*[:=]?[ \t]*[\"'`“‘]?"
    r"(?P<value>(?<=[\"'`“‘])[^\n\"'`”’]{2,80}(?=[\"'`”’])|[^\s\"'`”’,;]{2,}[^\s\"'`”’,;.!?:])",
    _I,
    accept=_statement_secret,
)

#: A password stated without a copula, as Russian and Ukrainian write it ("мой пароль
#: qwerty123", "пароль от почты Zx9!kLmn"), and the names of a password in the other languages
#: of :mod:`talos.safety.rules.languages` with a colon, a copula or a space: Turkish
#: ``şifrem``, Arabic ``كلمة المرور``, Hindi ``पासवर्ड``, Indonesian ``kata sandi``,
#: Vietnamese ``mật khẩu``, Polish ``hasło``, Italian ``la password è``.
_BARE_FOREIGN = _S(
    "stated password",
    (
        *("пароль", "парол", "şifre", "sifre", "parola", "كلمة المرور", "كلمة السر"),
        *("पासवर्ड", "sandi", "mật khẩu", "mat khau", "hasło", "haslo", "password è"),
        *("password e",),
    ),
    r"(?P<name>(?:пароль|паролем|пароля)(?:\s+(?:от|для|к|до)\s+[^\s,;:.!?]{1,30})?"
    r"|\b(?:[şs]ifre(?:m|miz|si)?|parola(?:m|s[ıi])?)\b|كلمة\s+(?:ال)?(?:مرور|سر)"
    r"|पासवर्ड|\bkata\s+sandi(?:nya)?\b|\bm[aậ]t\s+kh[aẩ]u\b|\bhas[lł]o\b"
    r"|\bpassword\s+[eè](?=\s))"
    r"(?:\s*[:：=—–-]|\s+(?:это|є|is|adalah|l[aà]|to|هي|है|:))?[ \t]+[\"'`“‘«]?"
    r"(?P<value>[^\s\"'`”’»,;]{3,}[^\s\"'`”’»,;.!?:])",
    _I,
    accept=_foreign_password,
)

#: Characters that open a Chinese description of a password rather than the password itself
#: ("密码是在设置页面修改的": where; "密码是多少": a question; "密码：六位数字": a length), and
#: that close one (的 了 吗, 字 码 位).
_ZH_NOT_VALUE_START = set(
    "在要需可不没已被错对正什多怎哪很太都也还就又和跟与从给由到的了吗呢吧啊是为一二三四五六七八九十两几"
)
_ZH_NOT_VALUE_END = set("的了吗呢吧啊么字码位符")
_ZH_NOT_VALUE = frozenset(
    {"生日", "手机号", "手机号码", "身份证号", "默认的", "默认密码", "空的", "一样的", "相同的"}
)


def _chinese_password(m: re.Match[str]) -> bool:
    """A password of Chinese words after 密码是 / 密码： ("我的密码是熊猫吃竹子"), not a
    description of one (:data:`_ZH_NOT_VALUE_START`, :data:`_ZH_NOT_VALUE_END`)."""
    value = m.group("value")
    return (
        value[0] not in _ZH_NOT_VALUE_START
        and value[-1] not in _ZH_NOT_VALUE_END
        and value not in _ZH_NOT_VALUE
    )


_ZH_WORDS = _S(
    "stated password",
    ("密码", "口令"),
    r"(?P<name>(?:登录|支付|开机|银行卡|wifi|WiFi|邮箱)?(?:密码|口令))(?:是|为|[:：])[ \t]*[\"“「]?"
    r"(?P<value>[\u4e00-\u9fff]{3,16})(?=$|[\s\"”」，。,.!！?？;；、)）])",
    accept=_chinese_password,
)

#: A ``.netrc`` entry: ``machine HOST login USER password VALUE`` (and ``default …``).
_NETRC = _S(
    "netrc password",
    ("machine", "default"),
    r"\b(?:machine\s+\S+|default)(?:\s+(?:login|account)\s+\S+){0,2}\s+password\s+"
    r"(?P<value>\S+)",
)

#: A US social security number after its name, with or without its dashes ("SSN 078051120").
_SSN_NAMED = _S(
    "national id number (US SSN)",
    ("ssn", "social security"),
    r"(?i:\bssn\b|\bsocial\s+security(?:\s+(?:number|no\.?|num|#))?)"
    r"(?i:\s+(?:is|was))?[ \t]*[:=#]?[ \t]*"
    r"(?P<value>(?!000|666|9\d\d)\d{3}[ .-]?(?!00)\d{2}[ .-]?(?!0000)\d{4})(?![\w-])",
)

#: A card's security code after its name ("CVV 123", "the cvc is 4567").
_CVV = _S(
    "card security code",
    ("cvv", "cvc", "cvn", "cid", "csc", "security code", "verification code", "verification value"),
    r"\b(?:cvv2?|cvc2?|cvn|cid|csc|card\s+(?:security|verification)\s+(?:code|value|number)"
    r"|security\s+code)\b(?:\s+(?:code|number|no\.?))?(?:\s+(?:is|was))?[ \t]*[:=#]?[ \t]*"
    r"(?P<value>\d{3,4})(?![\w-])",
    _I,
)

#: National ids after their name, where the number alone is too common a shape to be taken
#: for one: Korea's resident registration number, Brazil's CPF unformatted, India's Aadhaar,
#: Japan's My Number (each also checked by its checksum in :data:`NUMBERS` when written in
#: its own format).
_ID_NAMED = _S(
    "national id number",
    (
        *("주민등록", "주민번호", "resident registration", "rrn", "cpf", "aadhaar", "aadhar"),
        *("आधार", "uidai", "my number", "マイナンバー", "個人番号"),
    ),
    r"(?i:주민\s*등록\s*번호|주민번호|resident\s+registration\s+(?:number|no\.?)|\brrn\b"
    r"|\bcpf\b|\baadhaa?r(?:\s+(?:number|no\.?|card))?|आधार(?:\s*(?:नंबर|संख्या))?"
    r"|\buidai\b|\bmy\s*number\b|マイナンバー|個人番号)(?i:\s+(?:is|was|é|:|番号は|は))?"
    r"[ \t]*[:：=#は]?[ \t]*"
    r"(?P<value>\d{6}[ -]?\d{7}|\d{3}[ .]?\d{3}[ .]?\d{3}[ -]?\d{2}|\d{4}[ -]?\d{4}[ -]?\d{4})"
    r"(?![\w-])",
)

#: A password after a short name and an arrow or a colon ("pw: hunter22x", "password ->
#: Tr0ub4dor&3"), after a name and what it opens ("the password for the wifi: Blue!Fox92"),
#: after a user name ("login admin / pass: hunter22x"), or after its name and a space
#: ("private key passphrase hunter22x"); the value as :func:`_statement_secret` takes one.
_VALUE = (
    r"[\"'`“‘]?(?P<value>(?<=[\"'`“‘])[^\n\"'`”’]{2,80}(?=[\"'`”’])"
    r"|[^\s\"'`”’,;]{2,}[^\s\"'`”’,;.!?:])"
)
_SHORT_NAMED = _S(
    "stated password",
    ("pw", "pass", "pin", "code"),
    r"\b(?P<name>pw|pwd|pass|passwd|password|passcode|passphrase|pin)\s*(?:->|=>|→|:|=)[ \t]*"
    + _VALUE
    + r"|\b(?P<name2>password|passcode|passphrase|pin|code)\s+(?:for|of|to|on)\s+"
    r"[^\n,;:.!?=]{1,40}?\s*[:=][ \t]*"
    + _VALUE.replace("value", "value2")
    + r"|\b(?:user(?:name)?|login)\s*[:=]?\s*\S{1,60}?\s*[/,;|]?\s*(?P<name3>pass(?:word)?|pw|pwd)"
    r"\s*[:=]?[ \t]*"
    + _VALUE.replace("value", "value3")
    + r"|\b(?P<name4>passphrase|passcode|password|passwd|pwd)[ \t]+"
    + _VALUE.replace("value", "value4"),
    _I,
)


def _short_named(m: re.Match[str]) -> bool:
    """A value of :data:`_SHORT_NAMED`: no placeholder, not a plain word (a digit, a symbol,
    or upper case after its first letter), four characters or more."""
    value = next(v for v in m.group("value", "value2", "value3", "value4") if v)
    if _PLACEHOLDER.match(value) or value.lower() in _NOT_A_PASSWORD or len(value) < 4:
        return False
    return any(not c.isalpha() for c in value) or any(c.isupper() for c in value[1:])


_SHORT_NAMED.accept = _short_named

#: A PIN after its owner ("my bank PIN 4821"), and the codes that open a door or a network
#: ("the wifi code is Blue!Fox92").
_PIN_CODE = _S(
    "stated pin",
    ("pin", "code"),
    r"\b(?:my|the|our|his|her|your|their)\s+(?:[\w-]+\s+){0,2}?pin(?:\s+(?:code|number))?"
    r"(?:\s+(?:is|was))?[ \t]*[:=#]?[ \t]*(?P<value>\d{4,8})(?![\w-])"
    r"|\b(?:wifi|wi-fi|wlan|network|entry|access|lock|garage|keypad|locker|building|gate)\s+"
    r"(?:code|passcode|key)\s+(?:is|was)\s*[:=]?[ \t]*" + _VALUE.replace("value", "value2"),
    _I,
)


def _pin_code(m: re.Match[str]) -> bool:
    if m.group("value"):
        return True
    value = m.group("value2")
    return len(value) >= 4 and any(not c.isalpha() for c in value)


_PIN_CODE.accept = _pin_code

#: A bank account after its bank's routing number or sort code ("sort code 12-34-56 account
#: 12345678", "routing number 021000021 account 123456789"): both masked.
_BANK = _S(
    "bank account number",
    ("routing", "sort code", "aba", "bsb", "ifsc", "account", "acct"),
    r"\b(?:routing(?:\s+(?:number|no\.?|#))?|aba|sort\s+code|bsb)\s*[:#]?\s*"
    r"(?P<value>\d{2}-\d{2}-\d{2}|\d{6}|\d{9}|\d{3}-\d{3})(?![\w-])"
    r"|\b(?:account|acct)(?:\s+(?:number|no\.?|#))?\s*[:#]?\s*(?P<value2>\d{6,17})(?![\w-])",
    _I,
)


def _bank(m: re.Match[str]) -> bool:
    """A routing number or sort code; an account number only beside one (or a bank)."""
    if m.group("value"):
        return True
    near = m.string[max(0, m.start() - 80) : m.end() + 80].lower()
    return any(w in near for w in ("routing", "sort code", "aba", "bsb", "ifsc", "bank", "iban"))


_BANK.accept = _bank

STATEMENTS += (_VERB_FIRST, _BARE_FOREIGN, _ZH_WORDS, _NETRC, _SSN_NAMED, _CVV, _ID_NAMED)
STATEMENTS += (_SHORT_NAMED, _PIN_CODE, _BANK)


def _kr_rrn(m: re.Match[str]) -> bool:
    """A Korean resident registration number (``YYMMDD-GNNNNNC``): a real birth date and
    the check digit of numbers issued before October 2020 (weights 2–9, 2–5, mod 11)."""
    d = m.group("value").replace("-", "")
    century = {"1": 1900, "2": 1900, "5": 1900, "6": 1900, "3": 2000, "4": 2000, "7": 2000}
    year = century.get(d[6], 1800 if d[6] in "90" else 0)
    try:
        dt.date(year + int(d[:2]), int(d[2:4]), int(d[4:6]))
    except ValueError:
        return False
    total = sum(
        int(c) * w for c, w in zip(d[:12], (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5), strict=True)
    )
    return (11 - total % 11) % 10 == int(d[12])


def _br_cpf(m: re.Match[str]) -> bool:
    """A Brazilian CPF (``ddd.ddd.ddd-dd``): not one digit repeated, both mod-11 check
    digits right."""
    d = [int(c) for c in m.group("value") if c.isdigit()]
    if len(set(d)) == 1:
        return False
    for n in (9, 10):
        check = sum(v * w for v, w in zip(d[:n], range(n + 1, 1, -1), strict=True)) * 10 % 11
        if check % 10 != d[n]:
            return False
    return True


_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def _es_dni(m: re.Match[str]) -> bool:
    """A Spanish DNI or NIE: 8 digits (an NIE: X, Y or Z for 0, 1, 2, then 7) and the letter
    of their remainder mod 23."""
    v = m.group("value").upper().replace("-", "")
    digits = str("XYZ".index(v[0])) + v[1:-1] if v[0] in "XYZ" else v[:-1]
    return _DNI_LETTERS[int(digits) % 23] == v[-1]


#: The values of the odd places of a codice fiscale (0–9, then A–Z), from the decree.
_CF_ODD_VALUES: tuple[int, ...] = (1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15)
_CF_ODD_VALUES += (17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23)
_CF_ODD = dict(zip("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", _CF_ODD_VALUES, strict=True))


def _it_codice_fiscale(m: re.Match[str]) -> bool:
    """An Italian codice fiscale: 16 characters whose last is the check character of the
    first 15 (odd places by the table of the decree, even places by their value)."""
    v = m.group("value").upper()
    total = 0
    for i, c in enumerate(v[:15]):
        total += _CF_ODD[c] if i % 2 == 0 else (int(c) if c.isdigit() else ord(c) - 65)
    return chr(65 + total % 26) == v[15]


_VERHOEFF_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 0, 6, 7, 8, 9, 5), (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7), (4, 0, 1, 2, 3, 9, 5, 6, 7, 8), (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2), (7, 6, 5, 9, 8, 2, 1, 0, 4, 3), (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)  # fmt: skip
_VERHOEFF_P = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 5, 7, 6, 2, 8, 3, 0, 9, 4), (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
    (8, 9, 1, 6, 0, 4, 3, 5, 2, 7), (9, 4, 5, 3, 1, 2, 6, 8, 7, 0), (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
    (2, 7, 9, 3, 8, 0, 6, 4, 1, 5), (7, 0, 4, 6, 9, 1, 3, 2, 5, 8),
)  # fmt: skip


def _verhoeff(digits: str) -> bool:
    """Whether ``digits`` pass the Verhoeff check (India's Aadhaar numbers)."""
    c = 0
    for i, ch in enumerate(reversed(digits)):
        c = _VERHOEFF_D[c][_VERHOEFF_P[i % 8][int(ch)]]
    return c == 0


def _jp_my_number(digits: str) -> bool:
    """Whether 12 ``digits`` are a Japanese My Number: the check digit of the first 11
    (weights 6 5 4 3 2 7 6 5 4 3 2, mod 11)."""
    total = sum(
        int(c) * w for c, w in zip(digits[:11], (6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2), strict=True)
    )
    r = total % 11
    return (0 if r <= 1 else 11 - r) == int(digits[11])


def _named_id(m: re.Match[str]) -> bool:
    """A number after a national id's name (:data:`_ID_NAMED`) that the id's own check
    accepts: 13 digits a Korean number, 11 a CPF, 12 an Aadhaar (Verhoeff) or a My Number."""
    digits = "".join(c for c in m.group("value") if c.isdigit())
    if len(digits) == 13:
        return True  # a Korean number issued since October 2020 has no check digit
    if len(digits) == 11:
        return _br_cpf(m)
    return len(digits) == 12 and (_verhoeff(digits) or _jp_my_number(digits))


_ID_NAMED.accept = _named_id

NUMBERS += (
    Shape(
        "national id number (Korea)",
        Pat(
            (),
            r"(?<![\w-])(?P<value>\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])-[1-8]\d{6})(?![\w-])",
        ),
        accept=_kr_rrn,
    ),
    Shape(
        "national id number (Brazil CPF)",
        Pat((), r"(?<![\w.-])(?P<value>\d{3}\.\d{3}\.\d{3}-\d{2})(?![\w-]|\.\d)"),
        accept=_br_cpf,
    ),
    Shape(
        "national id number (Spain DNI/NIE)",
        Pat((), r"(?<![\w-])(?P<value>(?:\d{8}|[XYZ]-?\d{7})-?[A-HJ-NP-TV-Z])(?![\w-])"),
        accept=_es_dni,
    ),
    Shape(
        "national id number (Italy codice fiscale)",
        Pat(
            (),
            r"(?<![\w-])(?P<value>[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z])(?![\w-])",
            re.IGNORECASE,
        ),
        accept=_it_codice_fiscale,
    ),
    Shape(
        "national id number (India PAN)",
        Pat((), r"(?<![\w-])(?P<value>[A-Z]{3}[PCHFATBLJG][A-Z]\d{4}[A-Z])(?![\w-])"),
    ),
)
