"""More credential classes (design §8.3; the fourth hostile pass): a password stated with the
verb first, without a copula or in other languages, a Chinese password of Chinese words, a
``.netrc`` entry, a password's short spellings, a PIN, a door or wifi code, a bank account
beside its routing number, a card's CVV, and national ids checked by their checksum (Korea,
Brazil, Spain, Italy, India, Japan; a US SSN without dashes after its name).
:data:`STATEMENTS` and :data:`NUMBERS` are those of :mod:`talos.safety.secret_patterns` with
these; :mod:`talos.safety.secrets` runs them.
"""

from __future__ import annotations

import datetime as dt
import re

from talos.safety import secret_patterns as patterns
from talos.safety.prefilter import Pat
from talos.safety.secret_patterns import (
    _NOT_A_PASSWORD,
    _PLACEHOLDER,
    _S,
    Shape,
    _foreign_password,
    _statement_secret,
)

__all__ = ["NUMBERS", "STATEMENTS"]

_I = re.IGNORECASE

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
        # the Nordic, Central European, Greek, Hebrew, Thai, Persian and Swahili names (a
        # later attack: "lösenord: Sommar2024" was delivered as written)
        *("lösenord", "losenord", "passord", "adgangskode", "salasana", "heslo", "jelsz"),
        *("κωδικ", "סיסמ", "รหัสผ่าน", "رمز عبور", "nenosiri"),
    ),
    r"(?P<name>(?:пароль|паролем|пароля)(?:\s+(?:от|для|к|до)\s+[^\s,;:.!?]{1,30})?"
    r"|\b(?:[şs]ifre(?:m|miz|si)?|parola(?:m|s[ıi])?)\b|كلمة\s+(?:ال)?(?:مرور|سر)"
    r"|पासवर्ड|\bkata\s+sandi(?:nya)?\b|\bm[aậ]t\s+kh[aẩ]u\b|\bhas[lł]o\b"
    r"|\bpassword\s+[eè](?=\s)|\bl(?:ö|o)senord(?:et)?\b|\bpassord(?:et)?\b"
    r"|\badgangskode(?:n)?\b|\bsalasana(?:ni|si)?\b|\bhesl(?:o|a)\b|\bjelsz(?:ó|o)(?:m|t)?\b"
    r"|κωδικ(?:ό|ο)ς(?:\s+πρόσβασης)?|סיסמ(?:ה|א)|รหัสผ่าน|رمز\s+عبور|\bnenosiri\b)"
    r"(?:\s*[:：=—–-]|\s+(?:это|є|is|adalah|l[aà]|to|هي|है|är|er|on|je|είναι|:))?[ \t]+[\"'`“‘«]?"
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

#: :data:`talos.safety.secret_patterns.STATEMENTS` and these.
STATEMENTS: tuple[Shape, ...] = (
    *patterns.STATEMENTS,
    *(_VERB_FIRST, _BARE_FOREIGN, _ZH_WORDS, _NETRC, _SSN_NAMED, _CVV, _ID_NAMED),
    *(_SHORT_NAMED, _PIN_CODE, _BANK),
)


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

#: :data:`talos.safety.secret_patterns.NUMBERS` and these, each checked by its checksum.
NUMBERS: tuple[Shape, ...] = (
    *patterns.NUMBERS,
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
