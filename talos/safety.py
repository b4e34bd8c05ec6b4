"""Safety on the road into an agent's prompt (SPEC §8): skill scan, fact filter, secret masking.

Memory is a second road into an agent's prompt; it must carry data, never commands. Three rules,
each applied in exactly one place that every route passes:

* **Skill scan** (§8.1) — :func:`flagged_skills`, called by
  :func:`talos.sources.skills.load_skills`: a skill that tries to *act* (download-and-run,
  decode-and-run, read credentials, send data out, persist, mass-delete, disable security tools,
  address the model), that cannot be read, that is oversized, that is an executable payload, or
  that points at a flagged file of the skills tree, is not a node on any route (recall, explain,
  usage, dead). Results are cached per file by ``(path, size, mtime, mode)``.
* **Fact filter** (§8.2) — :func:`keep_fact`, the default ``keep_fact`` of
  :class:`talos.Memory`: a memory.md line with the same red flags is not a node on any route.
* **Secret masking** (§8.3) — :func:`mask_secrets`, applied where an episode's text is built
  (:func:`talos.sources.sessions.episode_node`): a credential-looking value in a past request
  is masked (``ghp_****``) before anything — block, explain, ``--json``, trace keys — sees it.

``talos scan`` (:func:`scan_home`) lists every flagged skill, file and fact with its reasons.
The rules are heuristics over text: they catch the shapes listed in SPEC §8.1 and the tests in
``tests/test_safety.py`` pin; they are not a sandbox.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from talos.warn import warn

__all__ = [
    "MAX_SKILL_BYTES",
    "RULES",
    "FactReport",
    "FileReport",
    "Finding",
    "ScanReport",
    "flagged_skills",
    "instruction_reasons",
    "keep_fact",
    "mask_secrets",
    "scan_facts",
    "scan_home",
    "scan_skills",
    "scan_text",
]

#: A skill file larger than this is not read; it is flagged as oversized (SPEC §8.1). It also
#: bounds the scan's work on one file.
MAX_SKILL_BYTES = 1 << 20

#: Evidence quoted in a reason is cut to this many characters (after masking), and at most
#: this many distinct matches are quoted per rule.
EVIDENCE_MAX, EVIDENCE_PER_RULE = 60, 3

# ---------------------------------------------------------------------------------------------
# Patterns with a cheap prefilter
# ---------------------------------------------------------------------------------------------

#: The only non-ASCII characters Python's ``re.IGNORECASE`` matches to an ASCII letter, mapped
#: to it (``ı``/``İ`` → i, ``ſ`` → s; ``K`` lower-cases to k anyway), so that the folded text
#: contains a trigger whenever a case-insensitive pattern matches (``tests/test_properties.py``
#: checks prefiltered and unfiltered scans agree).
_FOLD = str.maketrans({"ı": "i", "İ": "i", "ſ": "s"})


def fold(text: str) -> str:
    """``text`` lower-cased for the trigger prefilter of :class:`Pat`."""
    return text.translate(_FOLD).lower()


class Pat:
    """A pattern and its ``triggers``: lower-case substrings, one of which the folded text
    must contain for the pattern to match at all. Patterns whose triggers are absent are not
    run; ``tests/test_properties.py`` checks that no match is ever skipped that way.

    The regex is compiled on first use: a recall whose skills and facts were scanned before
    (the verdicts are kept in the index) compiles none of them (SPEC §11, 25 ms a process).
    """

    __slots__ = ("_regex", "flags", "pattern", "triggers")

    def __init__(self, triggers: tuple[str, ...], pattern: str, flags: int = 0) -> None:
        self.triggers = triggers
        self.pattern = pattern
        self.flags = flags
        self._regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        """The compiled pattern."""
        if self._regex is None:
            self._regex = re.compile(self.pattern, self.flags)
        return self._regex

    def may_match(self, present: frozenset[str]) -> bool:
        """Whether the regex can match a text whose triggers (:func:`triggers_in`) are
        ``present``; when not, it is not run."""
        return not present.isdisjoint(self.triggers)


_I = re.IGNORECASE


class _TriggerIndex:
    """All triggers in one trie-shaped regex, so one pass over a text finds which are present.

    The regex is a lookahead, so it reports, at every position, the longest trigger starting
    there; the shorter ones starting there are its prefixes (``_also``). Measured on the 3,000
    facts of ``make_home.py --sessions 30000``: the whole fact filter took 230 µs a line with
    every regex run, 47 µs with this prefilter (169 ``in`` checks alone cost 70 µs).
    """

    def __init__(self) -> None:
        self.words: set[str] = set()
        self._regex: re.Pattern[str] | None = None
        self._also: dict[str, frozenset[str]] = {}

    def add(self, triggers: tuple[str, ...]) -> None:
        self.words.update(triggers)
        self._regex = None

    def _build(self) -> re.Pattern[str]:
        trie: dict[str, Any] = {}
        for w in self.words:
            node = trie
            for ch in w:
                node = node.setdefault(ch, {})
            node[""] = {}

        def emit(node: dict[str, Any]) -> str:
            alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
            if not alts:
                return ""
            body = "(?:" + "|".join(alts) + ")"
            return body + "?" if "" in node else body

        self._also = {t: frozenset(u for u in self.words if t.startswith(u)) for t in self.words}
        return re.compile("(?=(" + emit(trie) + "))")

    def present(self, low: str) -> frozenset[str]:
        """The triggers occurring in ``low`` (a :func:`fold`-ed text)."""
        if self._regex is None:
            self._regex = self._build()
        found: set[str] = set()
        for t in set(self._regex.findall(low)):
            found |= self._also[t]
        return frozenset(found)


_TRIGGERS = _TriggerIndex()


def triggers_in(text: str) -> frozenset[str]:
    """Which pattern triggers occur in ``text`` (case-folded, see :func:`fold`)."""
    return _TRIGGERS.present(fold(text))


def P(triggers: str, pattern: str, flags: int = 0) -> Pat:
    """A :class:`Pat` from space-separated ``triggers`` and a regular expression."""
    pat = Pat(tuple(triggers.split()), pattern, flags)
    _TRIGGERS.add(pat.triggers)
    return pat


# ---------------------------------------------------------------------------------------------
# Secret masking (SPEC §8.3)
# ---------------------------------------------------------------------------------------------

#: Tokens recognisable by their shape: the public prefix (group ``keep``) is kept, the rest
#: becomes ``****``.
_TOKEN_SHAPES: tuple[Pat, ...] = (
    P("ghp_ gho_ ghu_ ghs_ ghr_", r"(?<![A-Za-z0-9_])(?P<keep>gh[pousr]_)[A-Za-z0-9]{20,}"),
    P("github_pat_", r"(?<![A-Za-z0-9_])(?P<keep>github_pat_)[A-Za-z0-9_]{20,}"),
    P("sk-", r"(?<![A-Za-z0-9_-])(?P<keep>sk-)(?=[A-Za-z0-9_-]{0,200}\d)[A-Za-z0-9_-]{20,}"),
    P("_live_ _test_", r"(?<![A-Za-z0-9_])(?P<keep>(?:sk|rk|pk)_(?:live|test)_)[A-Za-z0-9]{10,}"),
    P("akia asia", r"(?<![A-Za-z0-9])(?P<keep>A(?:KIA|SIA))[A-Z0-9]{16}(?![A-Za-z0-9])"),
    P("xox", r"(?<![A-Za-z0-9_])(?P<keep>xox[abposr]-)[A-Za-z0-9-]{10,}"),
    P("aiza", r"(?<![A-Za-z0-9_])(?P<keep>AIza)[A-Za-z0-9_-]{30,}"),
    P("glpat-", r"(?<![A-Za-z0-9_])(?P<keep>glpat-)[A-Za-z0-9_-]{20,}"),
    P("npm_", r"(?<![A-Za-z0-9_])(?P<keep>npm_)[A-Za-z0-9]{30,}"),
    P("hf_", r"(?<![A-Za-z0-9_])(?P<keep>hf_)[A-Za-z0-9]{30,}"),
    # A JWT (header.payload.signature), or its header, or header.payload.
    P("eyj", r"(?<![A-Za-z0-9_-])(?P<keep>eyJ)[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]+){0,2}"),
    P(
        "authorization",
        r"(?P<keep>\bauthorization\s*:\s*(?:bearer|basic|token)\s+)[^\s\"'`]{8,}",
        _I,
    ),
    P("bearer", r"(?P<keep>\bbearer\s+)(?=[A-Za-z0-9._~+/=-]{0,500}\d)[A-Za-z0-9._~+/=-]{16,}", _I),
    # user:password@host in a URL
    P("://", r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.-]{0,20}://[^\s:/@]{1,100}:)(?!\*{4}@)[^\s@/]+(?=@)"),
    P(
        "private",
        r"(?P<keep>-----BEGIN[A-Z ]{0,40}PRIVATE KEY-----)(?!\*{4})"
        r"(?:[\s\S]{0,20000}?-----END[A-Z ]{0,40}PRIVATE KEY-----|[\s\S]{1,20000})",
    ),
)

#: ``NAME = value`` / ``name: value`` where NAME says "secret". The value is masked when it looks
#: like one (see :func:`_looks_secret`); the name, separator and quote are kept.
_KEYED = P(
    "token secret passw pwd key credential 密码 口令 密钥 令牌",
    r"(?P<keep>(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z0-9_.-]{0,60}?"
    r"(?:token|secret|passw(?:or)?d|passwd|pwd|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|credentials?))(?![A-Za-z0-9])[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"|(?:密码|口令|密钥|令牌)[ \t]*(?:是|为|[:：=])[ \t]*)"
    r"(?P<value>[^\s\"'`,;，。]{4,})",
    _I,
)
#: Values that are not secrets: variables, placeholders, and code (``row.id``, ``get_pw()``).
_PLACEHOLDER = re.compile(
    r"^(?:[$<{%*\[(]|x{3,}|\.{3}|…|null|none|true|false|changeme$"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$|[\w.]+\()",
    _I,
)


def _looks_secret(name: str, value: str) -> bool:
    """A value after a secret-sounding name is masked when it is no placeholder and is long
    enough to be a credential: 6+ characters after a password name, else 8+ with a digit or
    16+ characters (``TOKEN: expired`` stays readable)."""
    if _PLACEHOLDER.match(value):
        return False
    low = name.lower()
    if any(w in low for w in ("passw", "pwd")) or name in ("密码", "口令"):
        return len(value) >= 6
    return len(value) >= 16 or (len(value) >= 8 and any(c.isdigit() for c in value))


def _mask_keyed(m: re.Match[str]) -> str:
    name = m.group("name") or m.group("keep")
    if not _looks_secret(name.strip(" \t:=：是为\"'"), m.group("value")):
        return m.group(0)
    return m.group("keep") + "****"


def _is_secret_value(m: re.Match[str]) -> bool:
    """A match of a :data:`_TOKEN_SHAPES` pattern, or of :data:`_KEYED` whose value would be
    masked: the text holds a credential value."""
    if "value" not in m.re.groupindex:
        return True
    return _mask_keyed(m) != m.group(0)


def mask_secrets(text: str) -> str:
    """``text`` with every credential-looking value masked (SPEC §8.3).

    Shapes (``ghp_…``, ``github_pat_…``, ``sk-…``, ``AKIA…``, ``xoxb-…``, ``AIza…``, JWTs,
    ``Authorization: Bearer …``, ``user:password@`` in URLs, private key blocks) keep their
    public prefix and lose the rest: ``ghp_****``. A value after a secret-sounding name
    (``GITHUB_TOKEN=…``, ``password: …``, ``api_key = "…"``, ``密码是…``) becomes ``****``
    when it looks like a credential, not a word. Everything else is unchanged, and masking is
    idempotent: ``mask_secrets(mask_secrets(s)) == mask_secrets(s)``.
    """
    present = triggers_in(text)
    for pat in _TOKEN_SHAPES:
        if pat.may_match(present):
            text = pat.regex.sub(lambda m: m.group("keep") + "****", text)
    if _KEYED.may_match(present):
        text = _KEYED.regex.sub(_mask_keyed, text)
    return text


# ---------------------------------------------------------------------------------------------
# Red flags shared by skills and facts (SPEC §8.1, §8.2)
# ---------------------------------------------------------------------------------------------

#: What a download or a decoded blob is piped into to run it: a shell (with any arguments:
#: ``| sh -s -- --yes``), or a bare interpreter reading its program from stdin — ``| python3 -m
#: json.tool`` only pretty-prints and is not flagged.
_RUNNER = (
    r"(?:sudo\s+(?:-\S+\s+){0,3})?(?:\S{0,40}/)?(?:(?:ba|z|k|da|fi|c|tc)?sh\b"
    r"|(?:python[0-9.]*|perl|ruby|node|php)(?:[ \t]+-)?(?=[ \t]*(?:$|\n|[;&|)\"'`])))"
)
_FETCH = r"(?:curl|wget|fetch|aria2c|iwr|irm|invoke-webrequest|invoke-restmethod)"
_FETCH_T = "curl wget fetch aria2c iwr irm invoke-"
_RC = r"(?:bashrc|bash_profile|bash_login|zshrc|zprofile|zshenv|zlogin|profile|cshrc|tcshrc|kshrc)"

#: Upper-case credential names that are not credentials (database keys, tokenizer tokens,
#: pagination cursors). Lower-case identifiers (``sort_key``) never match in the first place.
_NOT_CREDENTIALS = frozenset(
    {
        *(f"{w}_KEY" for w in ("PRIMARY", "FOREIGN", "SORT", "PARTITION", "NATURAL", "UNIQUE")),
        *(f"{w}_KEY" for w in ("COMPOSITE", "SURROGATE", "CACHE", "HASH", "RANGE", "ROW")),
        *(f"{w}_KEY" for w in ("SHARD", "LOOKUP", "PUBLIC", "IDEMPOTENCY", "GROUP", "JOIN")),
        *(f"{w}_TOKEN" for w in ("EOS", "BOS", "PAD", "UNK", "SEP", "CLS", "MASK", "NEXT")),
        *(f"{w}_TOKEN" for w in ("PAGE", "CONTINUATION", "CANCELLATION", "START", "END")),
    }
)


@dataclass(frozen=True, slots=True)
class Rule:
    """One red flag: its ``reason`` (shown to people) and the patterns that raise it.

    ``accept`` may veto a match (e.g. ``SORT_KEY`` is a database term, not a credential).
    Patterns are line-local and bounded (no unbounded ``.*``) so that a hostile 1 MB line
    cannot make the scan quadratic.
    """

    reason: str
    patterns: tuple[Pat, ...]
    accept: Callable[[re.Match[str]], bool] | None = None


#: Every red flag, in the order reasons are listed (SPEC §8.1).
#: A digest of this module's code: a scan stored by other rules is never reused.
RULES_FINGERPRINT = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]

RULES: tuple[Rule, ...] = (
    Rule(
        "download-and-run",
        (
            P(_FETCH_T, rf"\b{_FETCH}\b[^|\n]{{0,300}}\|\s*{_RUNNER}", _I),
            P(_FETCH_T, rf"\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?(?:<\(|\$\()\s*{_FETCH}\b", _I),
            P(
                _FETCH_T,
                rf"\b{_FETCH}\b[^\n;|]{{0,300}}(?:&&|;)\s*(?:sudo\s+)?"
                r"(?:chmod\s+\+x|(?:ba|z)?sh\s|\./)",
                _I,
            ),
            P(
                "iex invoke-expression",
                r"\b(?:iex|invoke-expression)\b[^\n]{0,80}"
                r"\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring)\b",
                _I,
            ),
            P(
                "iwr irm invoke-",
                r"\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|]{0,300}\|\s*iex\b",
                _I,
            ),
            P("pip", r"\bpip3?\s+install\s+(?:--\S+\s+){0,3}(?:git\+)?https?://", _I),
        ),
    ),
    Rule(
        "decode-and-run",
        (
            P(
                "base64 xxd openssl",
                r"\b(?:base64|xxd|openssl)\b[^\n|]{0,40}(?:-d\b|-D\b|--decode|-r\b)"
                rf"[^|\n]{{0,300}}\|\s*{_RUNNER}",
                _I,
            ),
            P(
                "eval",
                r"\beval\b[^\n]{0,120}\b(?:base64\s+(?:-d|-D|--decode)|atob|b64decode)\b",
                _I,
            ),
            P(
                "exec eval compile",
                r"\b(?:exec|eval|compile)\s*\(\s*(?:__import__\(\s*['\"]base64['\"]\s*\)\."
                r"|base64\.|codecs\.|zlib\.|marshal\.|bytes\.fromhex)",
                _I,
            ),
            P("atob", r"\b(?:eval|Function)\s*\(\s*atob\s*\(", _I),
            P(
                "powershell pwsh",
                r"\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]{0,80}\s-(?:e|ec|enc|encodedcommand)"
                r"\s+[A-Za-z0-9+/=]{20,}",
                _I,
            ),
            P("frombase64string", r"frombase64string[^\n]{0,200}\b(?:iex|invoke-expression)\b", _I),
        ),
    ),
    Rule(
        "reads credentials",
        (
            P(".env", r"(?<![\w$.-])\.env(?:\.[\w-]+)?(?![\w-])"),
            P("id_", r"\bid_(?:rsa|dsa|ecdsa|ed25519)\b"),
            P(".ssh", r"~/\.ssh\b|\$HOME/\.ssh\b|\.ssh/(?:id_|authorized|known|config)"),
            P(
                ".aws/ .netrc .pgpass .git-credentials .pypirc .docker/ .kube/ .gnupg /etc/shadow",
                r"\.aws/credentials\b|\.netrc\b|\.pgpass\b|\.git-credentials\b|\.pypirc\b"
                r"|\.docker/config\.json\b|\.kube/config\b|\.gnupg\b|/etc/shadow\b",
            ),
            P(
                "find- keychain",
                r"\bsecurity\s+find-(?:generic|internet)-password\b|\bkeychain\b",
                _I,
            ),
            # Case is the signal: API_KEY, AWS_SECRET_ACCESS_KEY, DB_PASSWORD — never sort_key.
            P(
                "_key _pat _pwd _credential password passwd token secret apikey",
                r"(?<![A-Za-z0-9])(?:[A-Z][A-Z0-9]{0,30}_){1,6}(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD"
                r"|PWD|PAT|CREDENTIALS?)(?![A-Za-z0-9_])"
                r"|(?<![A-Za-z0-9_])(?:PASSWORD|PASSWD|TOKEN|SECRET|APIKEY)(?=\s*=)",
            ),
        ),
        accept=lambda m: m.group(0) not in _NOT_CREDENTIALS,
    ),
    Rule("contains a credential value", (*_TOKEN_SHAPES, _KEYED), accept=_is_secret_value),
    Rule(
        "sends data out",
        (
            P(
                "curl",
                r"\bcurl\b[^\n]{0,300}\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form)\s*"
                r"[\"']?(?:[\w.-]{1,40}=)?(?:@|[^\"'\n]{0,40}\$\(\s*(?:cat|env|printenv|tar|base64)\b)",
                _I,
            ),
            P("curl", r"\bcurl\b[^\n]{0,300}\s(?:-T|--upload-file)\s+\S", _I),
            P("wget", r"\bwget\b[^\n]{0,300}--post-(?:file|data)\b", _I),
            P("nc netcat socat telnet", r"\|\s*(?:nc|ncat|netcat|socat|telnet)\s+\S+", _I),
            P("nc netcat", r"\b(?:nc|ncat|netcat)\s+(?:-\w+\s+){0,4}[\w.-]+\s+\d{1,5}\s*<", _I),
            P("/dev/tcp/ /dev/udp/", r"/dev/(?:tcp|udp)/", _I),
            P("exfiltrat", r"\bexfiltrat\w*", _I),
            P(
                "send upload post forward transmit leak",
                r"\b(?:send|upload|post|forward|transmit|leak)\w*\b"
                r"(?=[^\n]{0,160}?(?:\b(?:secrets?|tokens?|passwords?|credentials?|api\s*keys?"
                r"|cookies?|ssh\s+keys?|private\s+keys?|env(?:ironment)?\s+variables?)\b|\.env\b))"
                r"(?=[^\n]{0,160}?(?:https?://|\bwebhook\b|\b[\w.-]+@[\w-]+\.\w))[^\n]{0,60}",
                _I,
            ),
            P(
                "发送 上传 发到 传到 提交到",
                r"(?:发送|上传|发到|传到|提交到)[^\n]{0,40}(?:密钥|令牌|密码|凭据|凭证|\.env|token)"
                r"|(?:密钥|令牌|密码|凭据|凭证|\.env|token)[^\n]{0,40}(?:发送|上传|发到|传到)",
                _I,
            ),
        ),
    ),
    Rule(
        "persistence",
        (
            P("cron", r"\bcrontab\b|/etc/cron|/var/spool/cron", _I),
            P(
                "bash zsh zlogin profile cshrc kshrc config.fish",
                rf"(?:~|\$HOME|/etc)/\.?{_RC}\b|(?<![\w.])\.{_RC}\b|\bconfig\.fish\b",
            ),
            P("systemctl", r"\bsystemctl\s+(?:--user\s+)?(?:enable|link)\b", _I),
            P(
                "systemd/ /etc/init.d/ /etc/rc.local",
                r"/etc/systemd/|\.config/systemd/|/etc/init\.d/|/etc/rc\.local\b",
            ),
            P(
                "launchctl launchagents launchdaemons",
                r"\blaunchctl\s+(?:load|bootstrap|submit)\b|\bLaunch(?:Agents|Daemons)\b",
            ),
            P(
                "authorized_keys .git/hooks/ schtasks",
                r"\bauthorized_keys\b|\.git/hooks/|\bschtasks\s+/create\b",
                _I,
            ),
            P("\\currentversion\\run", r"\\CurrentVersion\\Run\b", _I),
            P("开机自启 开机启动", r"开机自启|开机启动"),
        ),
    ),
    Rule(
        "mass delete",
        (
            P(
                "rm",
                r"\brm(?:\s+-{1,2}[\w-]+){0,5}?\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)"
                r"(?:\s+-{1,2}[\w-]+){0,5}\s+[\"']?(?:/\*?|~/?\*?|\$\{?HOME\}?/?\*?)[\"']?"
                r"(?=$|[\s;&|)])",
            ),
            P("--no-preserve-root", r"--no-preserve-root\b"),
            P(
                "mkfs of=/dev/",
                r"\bmkfs(?:\.\w+)?\s+[^\n]{0,40}/dev/"
                r"|\bdd\b[^\n]{0,80}\bof=/dev/(?:sd|hd|nvme|disk|mmcblk)",
            ),
            P("-delete", r"\bfind\s+(?:/|~|\$HOME)\s[^\n]{0,80}-delete\b"),
            P(
                "remove-item",
                r"\bRemove-Item\b[^\n]{0,40}-Recurse[^\n]{0,40}\b[A-Z]:\\(?:\s|$|\*)",
                _I,
            ),
            P("format del", r"\bformat\s+[a-z]:(?:\s|$)|\bdel\s+/[sq]\s+/[sq]\s+[a-z]:\\", _I),
        ),
    ),
    Rule(
        "disables security tools",
        (
            P(
                "setenforce selinux=disabled ufw",
                r"\bsetenforce\s+0\b|\bSELINUX=disabled\b|\bufw\s+disable\b",
                _I,
            ),
            P(
                "systemctl",
                r"\bsystemctl\s+(?:stop|disable|mask)\s+(?:firewalld|ufw|apparmor|auditd|clamav\S*"
                r"|falcon-sensor|osqueryd|wazuh\S*|crowdstrike\S*|selinux)\b",
                _I,
            ),
            P(
                "iptables netsh",
                r"\biptables\s+(?:-F|--flush)\b|\bnetsh\s+advfirewall\s+set\s+\w+\s+state\s+off\b",
                _I,
            ),
            P(
                "set-mppreference disablerealtimemonitoring",
                r"\bSet-MpPreference\s+-Disable\w+|\bDisableRealtimeMonitoring\b",
                _I,
            ),
            P("spctl csrutil", r"\bspctl\s+--master-disable\b|\bcsrutil\s+disable\b", _I),
            P("histfile history histsize", r"\bunset\s+HISTFILE\b|\bhistory\s+-c\b|\bHISTSIZE=0\b"),
            P(
                "sslverify strict-ssl node_tls_reject_unauthorized pythonhttpsverify",
                r"\bsslVerify\s+false\b|\bstrict-ssl\s+false\b"
                r"|\bNODE_TLS_REJECT_UNAUTHORIZED\s*=\s*[\"']?0|\bPYTHONHTTPSVERIFY\s*=\s*[\"']?0",
                _I,
            ),
            P(
                "disable turn stop kill bypass uninstall",
                r"\b(?:disable|turn\s+off|stop|kill|bypass|uninstall)\b[^\n]{0,30}"
                r"\b(?:anti-?virus|firewall|defender|selinux|apparmor|edr|auditd|audit\s+log\w*"
                r"|security\s+(?:tools?|software|scan\w*|monitor\w*)|endpoint\s+protection)\b",
                _I,
            ),
            P(
                "关闭 禁用 停用 绕过 卸载",
                r"(?:关闭|禁用|停用|绕过|卸载)[^\n]{0,10}(?:防火墙|杀毒|安全软件|SELinux|审计|防病毒)",
                _I,
            ),
        ),
    ),
    Rule(
        "addresses the model",
        (
            P(
                "ignore disregard forget override",
                r"\b(?:ignore|disregard|forget|override)\b[^\n]{0,40}"
                r"\b(?:previous|prior|above|earlier|all|any|your|system|preceding)\b[^\n]{0,20}"
                r"\b(?:instructions?|prompts?|rules|messages?|guidelines|directions|context)\b",
                _I,
            ),
            P(
                "user human owner person",
                r"\b(?:don['’]?t|do\s+not|never|without)\s+(?:tell(?:ing)?|inform(?:ing)?"
                r"|show(?:ing)?|mention(?:ing)?|notify(?:ing)?|alert(?:ing)?|let(?:ting)?"
                r"|warn(?:ing)?)\b[^\n]{0,20}\b(?:the\s+)?(?:user|human|owner|person)s?\b",
                _I,
            ),
            P(
                "user human",
                r"\b(?:hide|conceal|keep)\b[^\n]{0,30}\b(?:from|secret\s+from)\s+the\s+(?:user|human)\b"
                r"|\bthe\s+user\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|find\s+out)\b",
                _I,
            ),
            P("instruction", r"\bnew\s+(?:system\s+)?instructions?\s*:", _I),
            P("<| inst] sys>>", r"<\|im_start\|>|<\|system\|>|\[/?INST\]|<</?SYS>>"),
            P(
                "忽略 无视 忘记 忘掉 不要理会",
                r"(?:忽略|无视|忘记|忘掉|不要理会)[^\n]{0,6}(?:之前|以上|上面|先前|前面|所有|全部)"
                r"[^\n]{0,6}(?:指令|指示|提示|规则|要求)",
            ),
            P(
                "用户 使用者",
                r"(?:不要|别|不许|不准|切勿|禁止|不得)(?:告诉|告知|通知|让)(?:用户|使用者)",
            ),
            P("瞒着用户 对用户保密", r"瞒着用户|对用户保密"),
        ),
    ),
)


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


def _evidence(text: str) -> str:
    s = mask_secrets(" ".join(text.split()))
    return s if len(s) <= EVIDENCE_MAX else s[:EVIDENCE_MAX] + "…"


def scan_text(text: str, lines: bool = False) -> list[Finding]:
    """The red flags of ``text``: one :class:`Finding` per rule that matches, in :data:`RULES`
    order, quoting up to :data:`EVIDENCE_PER_RULE` distinct matches in text order
    (``reads credentials: .env, GITHUB_TOKEN``). ``lines=True`` records the 1-based line of
    the first match. Never raises on any string."""
    out: list[Finding] = []
    present = triggers_in(text)
    for rule in RULES:
        hits: list[tuple[int, str]] = []
        for pat in rule.patterns:
            if not pat.may_match(present):
                continue
            hits += [
                (m.start(), m.group(0))
                for m in pat.regex.finditer(text)
                if rule.accept is None or rule.accept(m)
            ]
        if not hits:
            continue
        hits.sort(key=lambda h: h[0])
        shown = list(dict.fromkeys(_evidence(h[1]) for h in hits))[:EVIDENCE_PER_RULE]
        line = text.count("\n", 0, hits[0][0]) + 1 if lines else 0
        out.append(Finding(rule.reason, ", ".join(shown), line))
    return out


@functools.lru_cache(maxsize=65536)
def _text_reasons(text: str) -> tuple[str, ...]:
    return tuple(str(f) for f in scan_text(text))


def instruction_reasons(text: str) -> list[str]:
    """The reasons the fact ``text`` is a command rather than a record ([] when benign,
    SPEC §8.2): the red flags of :data:`RULES`, each as ``"reason: evidence"``."""
    return list(_text_reasons(text))


def keep_fact(text: str) -> bool:
    """Default ``keep_fact`` filter (SPEC §3.1, §8.2): ``False`` for a line with a red flag."""
    return not _text_reasons(text)


# ---------------------------------------------------------------------------------------------
# Skill scan (SPEC §8.1)
# ---------------------------------------------------------------------------------------------

#: File name endings of scripts and executables: a payload wherever it sits in the skills tree.
SCRIPT_SUFFIXES = frozenset(
    {
        *(".sh", ".bash", ".zsh", ".ksh", ".fish", ".csh", ".command", ".py", ".pyw", ".pyc"),
        *(".pl", ".rb", ".php", ".js", ".mjs", ".cjs", ".ts", ".ps1", ".psm1", ".bat", ".cmd"),
        *(".vbs", ".lua", ".tcl", ".applescript", ".scpt", ".jar", ".exe", ".dll", ".so"),
        *(".dylib", ".bin", ".run", ".msi", ".deb", ".rpm", ".apk", ".elf", ".appimage"),
    }
)
#: Magic numbers of native executables (ELF, PE, Mach-O, universal binaries).
_EXEC_MAGIC: tuple[bytes, ...] = (b"\x7fELF", b"MZ", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf")
_EXEC_MAGIC += (b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")
#: Version-control metadata is not part of the skills (git's hook samples are executable).
_SKIP_DIRS = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True, slots=True)
class _FileScan:
    findings: tuple[Finding, ...]
    text: str | None  # decoded text of a readable .md (to find what it points at)


def _payload_kind(path: str, mode: int) -> str:
    """Why a non-.md file is an executable payload ("" when it is plain data)."""
    if mode & 0o111:
        return "executable bit set"
    suffix = os.path.splitext(path)[1].lower()
    if suffix in SCRIPT_SUFFIXES:
        return f"script ({suffix})"
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return ""
    if head.startswith(b"#!"):
        return "script (#! line)"
    if head.startswith(_EXEC_MAGIC):
        return "native executable"
    return ""


@functools.lru_cache(maxsize=8192)
def _scan_file(path: str, size: int, stamp: tuple[int, int, int], mode: int) -> _FileScan:
    """Scan one regular file; cached by ``(path, size, (mtime, ctime, inode), mode)`` so
    recall does not re-read unchanged skills (``mode`` because ``chmod +x`` keeps the mtime;
    ctime and inode because a rewrite can put the mtime back)."""
    del stamp  # part of the cache key only
    if not path.lower().endswith(".md"):
        kind = _payload_kind(path, mode)
        return _FileScan((Finding("executable payload", kind),) if kind else (), None)
    if size > MAX_SKILL_BYTES:
        return _FileScan((Finding("oversized", f"{size} bytes > {MAX_SKILL_BYTES}"),), None)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SKILL_BYTES + 1)
    except OSError as e:
        return _FileScan((Finding("unreadable", e.strerror or str(e)),), None)
    if len(data) > MAX_SKILL_BYTES:
        return _FileScan((Finding("oversized", f"more than {MAX_SKILL_BYTES} bytes"),), None)
    if b"\0" in data:
        return _FileScan((Finding("unreadable", "binary content (NUL bytes)"),), None)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return _FileScan((Finding("unreadable", f"not valid UTF-8 at byte {e.start}"),), None)
    return _FileScan(tuple(scan_text(text, lines=True)), text)


@dataclass(frozen=True, slots=True)
class FileReport:
    """A flagged file of the skills tree: ``path``, ``kind`` (``skill`` for a top-level
    ``.md``, else ``file``) and its ``findings``."""

    path: str
    kind: str
    findings: tuple[Finding, ...]

    @property
    def reasons(self) -> tuple[str, ...]:
        """Each finding as ``"reason (line N): evidence"``."""
        return tuple(str(f) for f in self.findings)

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "kind": self.kind, "reasons": list(self.reasons)}

    def to_store(self) -> list[object]:
        """The report as JSON-able lists (read back by :func:`scan_skills`)."""
        return [self.path, self.kind, [[f.reason, f.evidence, f.line] for f in self.findings]]


def _tree(skills_dir: Path) -> list[tuple[str, str, os.stat_result | None]]:
    """Every regular file of the skills tree as ``(path, relative posix path, stat)``, sorted
    by relative path; symlinked folders are not followed, VCS metadata is skipped. A ``.md``
    whose stat fails (a dangling link where a skill should be) comes with ``None``."""
    root = str(skills_dir)
    found: list[tuple[str, str, os.stat_result | None]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            try:
                st: os.stat_result | None = os.stat(path)
            except OSError:
                st = None
            if st is None and name.lower().endswith(".md"):
                found.append((path, rel, None))
            elif st is not None and stat.S_ISREG(st.st_mode):
                found.append((path, rel, st))
    return sorted(found, key=lambda t: t[1])


@functools.lru_cache(maxsize=1024)
def _path_pattern(needle: str) -> re.Pattern[str]:
    """``needle`` as a path mention: not inside a longer name, optionally ``./``-prefixed. A
    bare word (``run``: no ``/``, no ``.``) only counts as ``./run``, or prose would match."""
    dot = r"(?:\./)?" if "/" in needle or "." in needle.strip(".") else r"\./"
    return re.compile(r"(?<![\w.-])" + dot + re.escape(needle) + r"(?![\w-])")


def _needles(flagged: list[str], here: str) -> list[tuple[str, str]]:
    """How a ``.md`` in folder ``here`` may name each flagged file: ``(needle, file)``."""
    out: list[tuple[str, str]] = []
    for f in flagged:
        out.append((f, f))
        if here and f.startswith(here + "/"):
            out.append((f[len(here) + 1 :], f))
        base = f.rsplit("/", 1)[-1]
        if "." in base.strip("."):
            out.append((base, f))
    return out


class ScanStore(Protocol):
    """Where a skills-tree scan can be kept between processes (the index implements it):
    ``load_scan(key)`` returns what ``save_scan(key, value)`` stored, or ``None``."""

    def load_scan(self, key: str) -> str | None: ...

    def save_scan(self, key: str, value: str) -> None: ...


_LAST_SCAN: tuple[str, list[FileReport]] | None = None


def scan_skills(skills_dir: Path, store: ScanStore | None = None) -> list[FileReport]:
    """Scan the whole skills tree (SPEC §8.1): every flagged file with its reasons, sorted by
    path relative to ``skills_dir``.

    A top-level ``.md`` (a skill) or nested ``.md`` is flagged for red flags in its text, for
    being unreadable (binary, not UTF-8, permissions) or larger than :data:`MAX_SKILL_BYTES`;
    any other file is flagged when it is an executable payload (executable bit, script suffix,
    ``#!`` line, native executable). Then a ``.md`` that points at a flagged file (by its
    path from the skills folder, from the ``.md``'s folder, or — for names with a suffix — by
    its file name) is flagged too, repeatedly, so ``a.md → b.md → run.sh`` flags both.
    A missing folder has no findings. Never raises.

    The result is kept per tree signature (every file's relative path, size, mtime and
    mode): in this process, and in ``store`` when given, so a recall in a new process does
    not re-read 60 unchanged skills (SPEC §11). Another version of this module's rules
    never reuses it (the key holds :data:`RULES_FINGERPRINT`).
    """
    global _LAST_SCAN
    try:
        entries = _tree(skills_dir)
    except OSError:
        return []
    key = hashlib.sha256(
        json.dumps(
            [
                RULES_FINGERPRINT,
                str(skills_dir),
                *[
                    # ctime and inode too: a same-size rewrite with its mtime put back
                    # (tar, rsync -t) must be scanned again (tests/test_index_attack.py)
                    [rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode]
                    if st
                    else [rel]
                    for _p, rel, st in entries
                ],
            ]
        ).encode("utf-8", "surrogatepass")
    ).hexdigest()
    if _LAST_SCAN is not None and _LAST_SCAN[0] == key:
        return list(_LAST_SCAN[1])
    if store is not None:
        try:
            stored = _decode_reports(store.load_scan(key))
        except Exception:  # an unreadable cache costs speed only
            stored = None
        if stored is not None:
            _LAST_SCAN = (key, stored)
            return list(stored)
    reports = _scan_entries(entries)
    _LAST_SCAN = (key, reports)
    if store is not None:
        with contextlib.suppress(Exception):  # a cache that cannot be written costs speed only
            store.save_scan(key, json.dumps([r.to_store() for r in reports]))
    return list(reports)


def _decode_reports(value: str | None) -> list[FileReport] | None:
    """Reports stored by :func:`scan_skills` (``None`` when absent or unreadable)."""
    if value is None:
        return None
    try:
        return [
            FileReport(p, k, tuple(Finding(str(r), str(e), int(n)) for r, e, n in found))
            for p, k, found in json.loads(value)
        ]
    except (ValueError, TypeError):
        return None


def _scan_entries(entries: list[tuple[str, str, os.stat_result | None]]) -> list[FileReport]:
    """:func:`scan_skills` over a listed tree, without caches."""
    scans: dict[str, _FileScan] = {}
    for path, rel, st in entries:
        if st is None:
            scans[rel] = _FileScan((Finding("unreadable", "dangling symbolic link"),), None)
        else:
            scans[rel] = _scan_file(
                path, st.st_size, (st.st_mtime_ns, st.st_ctime_ns, st.st_ino), st.st_mode
            )
    found: dict[str, tuple[Finding, ...]] = {rel: s.findings for rel, s in scans.items()}
    changed = True
    while changed:  # a .md pointing at a flagged file is flagged; repeat until nothing changes
        changed = False
        flagged = [rel for rel, r in found.items() if r]
        for rel, s in scans.items():
            if found[rel] or s.text is None:
                continue
            for needle, target in _needles(flagged, os.path.dirname(rel)):
                if _path_pattern(needle).search(s.text):
                    found[rel] = (Finding("points at flagged file", target),)
                    changed = True
                    break
    out: list[FileReport] = []
    for path, rel, _st in entries:
        if found[rel]:
            kind = "skill" if "/" not in rel and rel.lower().endswith(".md") else "file"
            out.append(FileReport(path, kind, found[rel]))
    return out


_WARNED: set[tuple[str, tuple[str, ...]]] = set()


def flagged_skills(skills_dir: Path, store: ScanStore | None = None) -> frozenset[str]:
    """File names of the top-level skills (``skills_dir/NAME.md``) the scan flags; each new
    finding is reported once per process on stderr. This is the hook every route passes
    (:func:`talos.sources.skills.load_skills`), so a flagged skill is never a node."""
    out: set[str] = set()
    for rep in scan_skills(skills_dir, store):
        if rep.kind != "skill":
            continue
        out.add(os.path.basename(rep.path))
        key = (rep.path, rep.reasons)
        if key not in _WARNED:
            from talos.sources.skills import skill_scopes  # imported on use: skills imports us

            rules = ", ".join(dict.fromkeys(f.reason for f in rep.findings))
            if warn(  # only for a request that may see the skill (SPEC §7.3)
                f"{rep.path}: not loaded, flagged by the safety scan ({rules}); see talos scan",
                scopes=skill_scopes(Path(rep.path)),
            ):
                _WARNED.add(key)
    return frozenset(out)


# ---------------------------------------------------------------------------------------------
# Fact report and the whole home (talos scan)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FactReport:
    """A memory.md line the fact filter excludes: ``path``, 1-based ``line``, ``text``
    (secrets masked) and its ``reasons``."""

    path: str
    line: int
    text: str
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "text": self.text,
            "reasons": list(self.reasons),
        }


def scan_facts(memory_file: Path) -> list[FactReport]:
    """The lines of ``memory_file`` that :func:`keep_fact` rejects, in file order (SPEC §8.2)."""
    from talos.sources.facts import load_facts  # here: talos.sources imports this module

    return [
        FactReport(n.path, n.line, mask_secrets(n.text), _text_reasons(n.text))
        for n in load_facts(memory_file, keep_fact=None)
        if _text_reasons(n.text)
    ]


@dataclass(frozen=True, slots=True)
class ScanReport:
    """Everything ``talos scan`` found: flagged ``skills`` (files of the skills tree) and
    ``facts``. ``clean`` when both are empty."""

    skills: list[FileReport] = field(default_factory=list)
    facts: list[FactReport] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.skills and not self.facts

    def to_json(self) -> dict[str, object]:
        return {
            "clean": self.clean,
            "skills": [s.to_json() for s in self.skills],
            "facts": [f.to_json() for f in self.facts],
        }


def scan_home(memory_file: Path, skills_dir: Path) -> ScanReport:
    """Scan a home's skills tree and memory file (``talos scan``, SPEC §8.1, §8.2)."""
    return ScanReport(scan_skills(skills_dir), scan_facts(memory_file))
