"""The red flags of a text that tries to act, as data (design §8.1, §8.2).

Shell commands and their kin that download and run, decode and run, read credentials, send
data out, persist, delete en masse or disable security tools: one tuple of
:class:`talos.safety.prefilter.Pat` per rule, named after it; :data:`talos.safety.rules.RULES` gives
each its reason and order. The fragments below are shared by several patterns.
"""

from __future__ import annotations

import re

from talos.safety.prefilter import P, Pat

__all__ = [
    "DECODE_AND_RUN",
    "DISABLES_SECURITY_TOOLS",
    "DOWNLOAD_AND_RUN",
    "MASS_DELETE",
    "PERSISTENCE",
    "READS_CREDENTIALS",
    "SENDS_DATA_OUT",
    "reads_a_credential",
]

_I = re.IGNORECASE

#: What a download or a decoded blob is piped into to run it: a shell (with any arguments:
#: ``| sh -s -- --yes``), or a bare interpreter reading its program from stdin — ``| python3 -m
#: json.tool`` only pretty-prints and is not flagged.
_RUNNER = (
    r"(?:sudo\s+(?:-\S+\s+){0,3})?"
    # a wrapper that runs the next word (hostile pass of issue 13: "| env bash", "| xargs bash
    # -c", "| busybox sh", "| command bash")
    r"(?:(?:\S{0,40}/)?(?:env|command|exec|nohup|busybox|time|nice|stdbuf|xargs|doas)"
    r"(?:[ \t]+-\S+)*[ \t]+)*(?:\S{0,40}/)?(?:(?:ba|z|k|da|fi|c|tc)?sh\b"
    r"|(?:python[0-9.]*|perl|ruby|node|php)(?:[ \t]+-)?(?=[ \t]*(?:$|\n|[;&|)\"'`]))"
    r"|(?:source|\.)[ \t]+(?:/dev/stdin|/dev/fd/0|/proc/self/fd/0)\b)"
)
_FETCH = r"(?:curl|wget|fetch|aria2c|iwr|irm|invoke-webrequest|invoke-restmethod)"
_FETCH_T = "curl wget fetch aria2c iwr irm invoke-"
#: One pipe (not ``||``; ``|&`` pipes stderr too).
_PIPE = r"(?<!\|)\|&?(?!\|)"
#: What runs the text of a command substitution: ``eval``, ``source``/``.``, ``exec``, a shell
#: (``bash -c``, ``bash <(…)``), an interpreter's one-liner flag (``python3 -c``, ``perl -e``).
_SUBST_RUNNER = (
    r"(?:\beval|\bsource|\bexec|(?<![\w./-])\.|\b(?:ba|z|k|da|fi)?sh\b(?:\s+-\w+)*"
    r"|\b(?:python[0-9.]*|perl|ruby|node|php|pwsh|powershell)(?:\s+-\w+)*)"
    r"(?:\s+(?:/dev/stdin|/dev/fd/0))?"
)
#: A download written to a file (group ``f``): ``curl -o F``/``--output F``, ``wget -O F``,
#: ``… > F``, ``… | tee F`` (a later attack: ``curl … | tee a.sh`` then ``./a.sh`` was not
#: caught), ``curl -O URL``/``wget URL`` (the URL's last segment), ``iwr … -OutFile F``.
_SAVED_TO = (
    r"(?:\b(?:curl|wget|aria2c|fetch)\b[^\n|;&]{0,300}?(?:\s-o[ \t]*|\s--output(?:-document)?"
    r"[= \t][ \t]*|\s-O[ \t]+(?!-|https?:)|[ \t]>[ \t]*|[ \t]*\|[ \t]*(?:sudo[ \t]+)?tee"
    r"(?:[ \t]+-a)?[ \t]+)[\"']?(?P<f>[\w~$./{}\\-]{2,200})"
    r"|\b(?:curl\b(?=[^\n|;&]{0,300}\s-[a-zA-Z]*O\b)|wget\b)[^\n|;&]{0,300}?"
    r"https?://[^\s\"'`]*/(?P<f2>[\w.-]{2,100})(?=[\s\"'`;&|)]|$)"
    r"|\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|;&]{0,300}?-OutFile\s+[\"']?"
    r"(?P<f3>[\w~$./\\:-]{2,200}))"
)
#: That file run: by a shell or interpreter, as ``./F`` (or ``.\\F``), or by its path.
_RUN_SAVED = (
    r"(?:(?<![\w./-])(?:sudo[ \t]+)?(?:(?:ba|z|k|da|fi)?sh|python[0-9.]*|perl|ruby|node|php|pwsh"
    r"|powershell(?:\.exe)?)(?:[ \t]+-\S+){0,3}[ \t]+[\"']?(?:\./)?(?:(?P=f)|(?P=f2)|(?P=f3))"
    r"|(?:^|[;&|(`{]|\$\()[ \t]*(?:source|\.|exec)[ \t]+[\"']?(?:\./)?(?:(?P=f)|(?P=f2)|(?P=f3))"
    r"|(?:^|[\s;&|(`\"'])(?:\./|\.\\|&[ \t]*)(?:(?P=f)|(?P=f2)|(?P=f3))"
    r"|(?:^|[;&|(]|\bsudo\b)[ \t]*[\"']?(?:(?P=f)|(?P=f2)|(?P=f3))(?=[\s;&|)\"']|$))"
)
#: Commands that print or copy a file's content.
_READERS = (
    r"cat|less|more|head|tail|tac|bat|strings|grep|rg|egrep|awk|sed|type|get-content|gc|xxd|od"
    r"|hexdump|base64|cp|scp|rsync|tar|zip|7z|sqlite3|nl|sort|uniq|cut|tee|curl"
)
#: What a person asks to be shown when a secret is read out in words.
_SECRET_NOUN = (
    r"private\s+keys?|secret(?:\s+access)?\s+keys?|api\s+keys?|access\s+keys?|ssh\s+keys?"
    r"|(?:access|auth|api|bearer|session|github|gitlab|npm|pypi|slack|oauth|refresh|personal\s+access)"
    r"\s+tokens?|passwords?|passphrases?|credentials|environment\s+variables|env\s+vars"
)
#: Calls that run code given as text (for a download evaluated inside an interpreter).
_EVAL_CALL = (
    r"(?:\b(?:exec|eval|system|passthru|shell_exec|popen|execSync|Function)\s*\("
    r"|\.then\(\s*eval\b|\beval\s+(?:get|\$)|\beval\s*\{)"
)
#: Calls that download (for the same).
_FETCH_API = (
    r"(?:\b(?:urlopen|urlretrieve|requests\.get|httpx\.get|https?\.get|LWP::Simple|Net::HTTP"
    r"|open-uri|URI\.open|DownloadString|WebClient|curl_exec)\b|\burllib\.request\b"
    r"|\bfetch\s*\(|\bfile_get_contents\s*\(\s*[\"']https?:)"
)
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


#: Tools that use a key without printing or copying it, and commands that read one: in the
#: segment of a command line before a key's path, the last of them says which it is.
_KEY_TOOL = re.compile(
    r"(?<![\w./~$-])(?:(?P<use>ssh-keygen|ssh-add|ssh-copy-id|ssh|sftp|mosh|autossh|git|gh\s+ssh-key"
    r"|IdentityFile|chmod|chown|mkdir|ls|touch|ssh-keyscan)|(?P<read>cat|less|more|head|tail"
    r"|tac|bat|strings|grep|rg|awk|sed|type|get-content|gc|xxd|od|hexdump|base64|cp|mv|scp"
    r"|rsync|tar|zip|7z|curl|wget|nc|echo|printf|print|read|send|upload|copy|paste|show))"
    r"(?![\w./-])",
    re.IGNORECASE,
)
#: Files under ~/.ssh that hold no secret.
_NOT_SECRET_SSH = re.compile(r"/?(?:config|known_hosts\w*|authorized_keys\w*|[\w.-]*\.pub)\b")
#: Where a command segment starts: a line, a command separator, a backtick, a substitution.
_SEGMENT_START = re.compile(r"[\n;&|`(]|\$\(")


def _uses_a_key(m: re.Match[str]) -> bool:
    """Whether a match of an ``~/.ssh`` or ``id_rsa`` pattern names a key that is *used*, not
    read: a public key (``.pub``), ``~/.ssh/config`` or ``known_hosts``, or a path whose
    command segment names last a tool that makes, loads, installs or connects with a key
    (:data:`_KEY_TOOL`: ``ssh-keygen -f``, ``ssh-add``, ``ssh -i``, ``IdentityFile``). Hostile
    pass of issue 13: a skill about rotating SSH keys was withheld as "reads credentials"."""
    found = m.group(0)
    if ".ssh" not in found and not found.lower().startswith("id_"):
        return False
    text, end = m.string, m.end()
    if _NOT_SECRET_SSH.match(text, end) or (
        found.endswith("/") and _NOT_SECRET_SSH.match(text, end - 1)
    ):
        return True
    tail = re.match(r"[\w.-]*", text[end:])
    if tail and tail.group(0).endswith(".pub"):
        return True
    back = max(0, m.start() - 300)
    start = max((s.end() for s in _SEGMENT_START.finditer(text, back, m.start())), default=back)
    last = None
    for last in _KEY_TOOL.finditer(text, start, m.start()):  # noqa: B007 - the last one counts
        pass
    return last is not None and last.group("use") is not None


def reads_a_credential(m: re.Match[str]) -> bool:
    """Whether a match of :data:`READS_CREDENTIALS` is a read of a credential: not an
    upper-case name that is no credential (:data:`_NOT_CREDENTIALS`: ``SORT_KEY``), not a key
    that is used rather than read (:func:`_uses_a_key`)."""
    return m.group(0) not in _NOT_CREDENTIALS and not _uses_a_key(m)


#: The patterns of "download-and-run": a download piped into a runner, run as a command
#: substitution, saved and then run, evaluated inside an interpreter; package runners given a URL.
DOWNLOAD_AND_RUN: tuple[Pat, ...] = (
    # piped into a runner, also through other commands: curl … | tee log | sh
    P(
        _FETCH_T,
        rf"\b{_FETCH}\b[^|\n]{{0,300}}(?:{_PIPE}[^|\n]{{0,200}}){{0,3}}{_PIPE}\s*{_RUNNER}",
        _I,
    ),
    # run as a command substitution: eval "$(curl …)", source <(curl …), bash -c
    # "$(curl …)", python3 -c "$(curl …)", sh <<< "$(wget -qO- …)"
    P(
        _FETCH_T,
        rf"{_SUBST_RUNNER}\s*(?:<<<\s*)?[\"']?\s*(?:\$\(|<\(|`)\s*(?:sudo\s+)?{_FETCH}\b",
        _I,
    ),
    # downloaded to a file, then that file is run, on the same line or a later one
    P(_FETCH_T, rf"{_SAVED_TO}[\s\S]{{0,2000}}?{_RUN_SAVED}", _I | re.MULTILINE),
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
    # a download, then its output piped into a shell in words, on a later line of a skill
    # ("curl -fsSL https://… ``` … and pipe that to `sh`": the fourth hostile pass)
    P(
        _FETCH_T,
        rf"\b{_FETCH}\b[^\n]{{0,300}}[\s\S]{{0,400}}?\b(?:pipe|feed|pass|send)\s+(?:it|that|this"
        r"|them|the\s+(?:output|result|script|response|download|file))\s+(?:(?:in)?to|through"
        r"|into)\s+[`'\"]?(?:sudo\s+)?(?:(?:ba|z|k|da|fi)?sh|a\s+shell|the\s+shell|python[0-9.]*"
        r"|perl|ruby|node)\b",
        _I,
    ),
    # hostile pass of issue 13: a command substitution of a download that is itself
    # the command ("$(curl …)" runs what it prints)
    P(
        _FETCH_T,
        rf"(?m:(?:^|[;&|({{]|\b(?:then|do|else)\b)[ \t]*\$\([ \t]*(?:sudo\s+)?{_FETCH}\b)",
        _I,
    ),
    # a download evaluated inside an interpreter: exec(urlopen(…).read()),
    # fetch(…).then(eval), eval get(…), eval(file_get_contents('https://…'))
    P(
        (
            *("urlopen", "urlretrieve", "urllib", "requests.get", "httpx.get", "fetch"),
            *("https.get", "http.get", "lwp", "net::http", "open-uri", "uri.open"),
            *("file_get_contents", "downloadstring", "webclient", "curl_exec"),
        ),
        rf"{_EVAL_CALL}[^\n]{{0,200}}?{_FETCH_API}|{_FETCH_API}[^\n]{{0,200}}?{_EVAL_CALL}",
        _I,
    ),
    # PowerShell's downloaders piped into Invoke-Expression; Windows' own downloaders
    P(
        "iwr irm invoke-",
        r"\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|]{0,300}\|\s*"
        r"invoke-expression\b",
        _I,
    ),
    P(
        "certutil bitsadmin mshta regsvr32 rundll32",
        r"\bcertutil(?:\.exe)?\b[^\n]{0,80}\s[-/]urlcache\b|\bbitsadmin(?:\.exe)?\b[^\n]{0,40}"
        r"\s/transfer\b|\bmshta(?:\.exe)?\s+[\"']?(?:https?|vbscript|javascript):"
        r"|\bregsvr32(?:\.exe)?\b[^\n]{0,60}/i:\s*[\"']?https?:"
        r"|\brundll32(?:\.exe)?\b[^\n]{0,80}(?:https?:|javascript:)",
        _I,
    ),
    # package runners fetching code from a URL, as pip install URL
    P(
        ("npx", "bunx", "pnpx", "dlx", "bun x", "npm", "pnpm", "yarn", "bun"),
        r"\b(?:npx|bunx|pnpx|(?:pnpm|yarn)\s+dlx|bun\s+x)\s+(?:-\S+\s+){0,3}(?:git\+)?https?://"
        r"|\b(?:npm|pnpm|yarn|bun)\s+(?:install|i|add)\s+(?:-\S+\s+){0,3}(?:git\+)?https?://",
        _I,
    ),
    P(
        ("deno", "uvx", "pipx", "uv run", "uv tool"),
        r"\bdeno\s+(?:run|install)\b[^\n]{0,80}?\shttps?://"
        r"|\b(?:uvx|pipx\s+run|uv\s+(?:tool\s+)?run)\b[^\n]{0,80}?\s(?:git\+)?https?://",
        _I,
    ),
)


#: The patterns of "decode-and-run": a blob decoded (base64, hex, an encoded PowerShell
#: command) and run, or saved and then run.
DECODE_AND_RUN: tuple[Pat, ...] = (
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
        "exec eval compile system popen subprocess",
        r"\b(?:exec|eval|compile|system|popen|subprocess\.\w+)\s*\(\s*"
        r"(?:__import__\(\s*['\"]base64['\"]\s*\)\."
        r"|base64\.|codecs\.|zlib\.|marshal\.|bytes\.fromhex)",
        _I,
    ),
    P("atob", r"\b(?:eval|Function)\s*\(\s*atob\s*\(", _I),
    # decoded to a file, then that file run (as a download is: hostile pass, issue 13)
    P(
        "base64 xxd openssl",
        r"\b(?:base64|xxd|openssl)\b[^\n|;&]{0,60}?(?:\s-d\b|\s-D\b|\s--decode\b|\s-r\b)"
        r"[^\n;&]{0,200}?(?:>|\s-o|\s-out)[ \t]*[\"']?(?P<f>[\w~$./{}\\-]{2,200})"
        r"[\s\S]{0,2000}?" + _RUN_SAVED.replace("(?:(?P=f)|(?P=f2)|(?P=f3))", "(?P=f)"),
        _I | re.MULTILINE,
    ),
    P(
        "powershell pwsh",
        r"\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]{0,80}\s-(?:e|ec|enc|encodedcommand)"
        r"\s+[A-Za-z0-9+/=]{20,}",
        _I,
    ),
    P("frombase64string", r"frombase64string[^\n]{0,200}\b(?:iex|invoke-expression)\b", _I),
)


#: The patterns of "reads credentials": credential files and stores read by path, commands
#: that print a stored credential, a secret asked for in words, credential names in capitals
#: (vetoed by :func:`reads_a_credential`).
READS_CREDENTIALS: tuple[Pat, ...] = (
    P(".env", r"(?<![\w$.-])\.env(?:\.[\w-]+)?(?![\w-])"),
    P("id_", r"\bid_(?:rsa|dsa|ecdsa|ed25519)\b"),
    P(".ssh", r"~/\.ssh\b|\$HOME/\.ssh\b|\.ssh/(?:id_|authorized|known|config)"),
    P(
        ".aws/ /.aws .netrc .pgpass .git-credentials .pypirc .docker/ .kube/ .gnupg /etc/shadow",
        r"\.aws/credentials\b|(?:~|\$HOME)/\.aws\b(?!/credentials)|\.netrc\b|\.pgpass\b|\.git-credentials\b"
        r"|\.pypirc\b"
        r"|\.docker/config\.json\b|\.kube/config\b|\.gnupg\b|/etc/shadow\b",
    ),
    # where CLIs keep their tokens (gh, npm, yarn, gcloud, azure, aws sso, cargo,
    # terraform, vault, mysql, gem, composer, hub): issue 13 item 4
    P(
        ".config/gh .npmrc .yarnrc .config/gcloud application_default_credentials "
        ".azure/ .aws/ .cargo/ .terraform.d/ .vault-token .my.cnf .gem/ .composer/ "
        ".config/hub",
        r"\.config/gh\b(?:/hosts\.ya?ml\b)?|\.npmrc\b|\.yarnrc(?:\.yml)?\b"
        r"|\.config/gcloud\b|\bapplication_default_credentials\.json\b|\.azure/"
        r"|\.aws/(?:sso|cli)/cache\b|\.cargo/credentials(?:\.toml)?\b"
        r"|\.terraform\.d/credentials|\.vault-token\b|\.my\.cnf\b|\.gem/credentials\b"
        r"|\.composer/auth\.json\b|\.config/hub\b",
    ),
    # a process's environment, and environment dumps filtered for secrets
    P(
        "environ",
        r"/proc/(?:self|thread-self|\d+|\$\$|\*|\$\{?\w+\}?)/(?:task/\d+/)?environ\b",
    ),
    P(
        "printenv env set export declare compgen",
        rf"(?<![\w.-])(?:printenv|env|set|export\s+-p|declare\s+-x|compgen\s+-e"
        rf"|(?:get-childitem|gci|dir|ls)\s+env:)\s*(?:{_PIPE}[^|\n]{{0,60}})?{_PIPE}\s*"
        r"(?:grep|egrep|rg|ag|findstr|select-string|sls|awk|sed|where-object|where|\?)"
        r"(?![\w-])[^\n|]{0,60}?(?:key|token|secret|pass|pwd|cred|auth)",
        _I,
    ),
    # commands that print a stored credential
    P(
        "auth config get-access-token credential get-session-token",
        r"\bgh\s+auth\s+(?:token|status\s+(?:-t|--show-token))\b"
        r"|\bgcloud\s+(?:auth\s+(?:application-default\s+)?print-(?:access|identity)-token"
        r"|config\s+config-helper)\b|\baz\s+account\s+get-access-token\b"
        r"|\bgit\s+credential\s+fill\b|\bkubectl\s+config\s+view\b[^\n]{0,40}--raw\b"
        r"|\baws\s+(?:configure\s+(?:get\s+[\w.]*(?:secret|key|token)\w*"
        r"|export-credentials)|sts\s+get-session-token)\b",
        _I,
    ),
    P(
        "find- dump-keychain login.keychain .keychain-db keychains/",
        # the keychain's files and the commands that print from it; the word keychain
        # alone is no read ("I use the macOS keychain", "my keychain has the office key")
        r"\bsecurity\s+(?:find-(?:generic|internet)-password|dump-keychain)\b"
        r"|\blogin\.keychain\b|\.keychain-db\b|Keychains/",
        _I,
    ),
    # hostile pass of issue 13: more credential stores, read by path
    P(
        (
            *(
                "/var/run/secrets",
                "/run/secrets",
                "kubernetes/admin.conf",
                "github-copilot",
            ),
            *("logins.json", "key4.db", "login data", "login\\ data", "cookies", ".s3cfg"),
            *(".boto", "rclone.conf", ".git-credentials"),
        ),
        r"(?:/var)?/run/secrets/kubernetes\.io\b|/etc/kubernetes/admin\.conf\b"
        r"|\.config/github-copilot\b|(?:firefox|mozilla)\S{0,80}/(?:logins\.json|key4\.db)\b"
        r"|(?:chrom(?:e|ium)|brave|edge)\S{0,80}/(?:Login(?:\\?\s|%20)Data|Cookies)\b"
        r"|\.s3cfg\b|(?<![\w.])\.boto\b|\brclone\.conf\b",
        _I,
    ),
    # what a reading command prints: shell history (typed secrets), $KUBECONFIG
    P(
        ("_history", "consolehost_history", "kubeconfig"),
        rf"(?<![\w.-])(?:{_READERS})\b[^\n|;&]{{0,80}}?(?:\.(?:bash|zsh|sh|ksh|fish|python"
        r"|psql|mysql|node_repl|sqlite|rediscli|lesshst)_?history\b|ConsoleHost_history\.txt"
        r"|\$\{?KUBECONFIG\b)",
        _I,
    ),
    # password managers and secret stores that print a secret
    P(
        ("secret-tool", "op read", "op item", "bw get", "pass show", "export-secret"),
        r"\bsecret-tool\s+lookup\b|\bop\s+(?:read\s+[\"']?op://|item\s+get\b)"
        r"|\bbw\s+get\s+(?:password|item|totp|notes)\b|\bpass\s+show\s+\S"
        r"|\bgpg2?\b[^\n]{0,40}--export-secret-(?:sub)?keys\b",
        _I,
    ),
    P(
        ("vault kv", "vault read", "cmdkey", "hklm", "mimikatz", "sekurlsa", "lsass"),
        r"\bvault\s+(?:kv\s+get|read)\s+\S|\bcmdkey(?:\.exe)?\s+/list\b"
        r"|\breg(?:\.exe)?\s+(?:save|export)\s+HKLM\\(?:SAM|SECURITY|SYSTEM)\b"
        r"|\bmimikatz\b|\bsekurlsa::|\bprocdump\b[^\n]{0,40}\blsass\b",
        _I,
    ),
    P(
        ("npm config", "yarn config", "_auth"),
        r"\b(?:npm|yarn|pnpm)\s+config\s+(?:get|list|ls)\b[^\n]{0,80}?_auth(?:token)?\b",
        _I,
    ),
    # asked in words: "print the AWS secret key", "paste the ssh private key here"
    P(
        # the nouns are rarer than the verbs: they are the triggers
        (
            *("private key", "secret key", "secret access", "api key", "access key"),
            *("ssh key", "token", "password", "passphrase", "credentials"),
            *("environment variables", "env vars"),
        ),
        rf"\b(?:read|print|show|display|output|dump|paste|reveal|leak|send|give|tell|share"
        rf"|email|copy)\s+(?:me\s+|us\s+)?(?:out\s+)?(?:the\s+|my\s+|your\s+|all\s+(?:the\s+)?)?"
        rf"(?:(?:full\s+)?contents?\s+of\s+(?:the\s+|my\s+|your\s+)?)?(?:[\w.-]+\s+){{0,3}}?"
        rf"(?:{_SECRET_NOUN})(?=\s*(?:$|[.,;:!?)]|\b(?:and|here|from|to\s+me|in\s+(?:the|your)"
        r"\s+(?:reply|answer|chat|response)|please|now)\b))",
        _I,
    ),
    P(
        (
            "读取",
            "读一下",
            "打印",
            "输出",
            "显示",
            "发给我",
            "告诉我",
            "贴出",
            "粘贴",
            "复制",
        ),
        r"(?:读取|读一下|打印|输出|显示|发给我|告诉我|贴出|粘贴|复制)[^\n]{0,20}?"
        r"(?:私钥|密钥|令牌|token|密码|凭据|凭证|环境变量)(?=\s*(?:$|[，。；！,.;!]|并|然后|给我|发"
        r"|到))",
        _I,
    ),
    # Case is the signal: API_KEY, AWS_SECRET_ACCESS_KEY, DB_PASSWORD — never sort_key.
    P(
        "_key _pat _pwd _credential password passwd token secret apikey",
        r"(?<![A-Za-z0-9])(?:[A-Z][A-Z0-9]{0,30}_){1,6}(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD"
        r"|PWD|PAT|CREDENTIALS?)(?![A-Za-z0-9_])"
        r"|(?<![A-Za-z0-9_])(?:PASSWORD|PASSWD|TOKEN|SECRET|APIKEY)(?=\s*=)",
    ),
)


#: The patterns of "sends data out": uploads by curl or wget, pipes into netcat, a secret
#: sent to a URL, a webhook or an address.
SENDS_DATA_OUT: tuple[Pat, ...] = (
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
)


#: The patterns of "persistence": cron, shell start-up files, services, launch agents, a
#: key planted in authorized_keys, git hooks, Windows run keys.
PERSISTENCE: tuple[Pat, ...] = (
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
        # a key planted in authorized_keys (written, appended, added to it); a how-to
        # that removes an old key from it or runs ssh-copy-id plants nothing of a
        # stranger's (hostile pass of issue 13: a key rotation skill was withheld)
        r"(?:>>?|\btee\b[^\n|;&]{0,40})[ \t]*[\"']?[^\s\"'|;&]{0,200}authorized_keys\b"
        r"|\b(?:add|append|put|write|insert|paste|echo)\b[^\n]{0,60}?\b(?:to|into|in)\s+"
        r"(?:the\s+|your\s+|my\s+)?[~\w./${}-]*authorized_keys\b"
        r"|\.git/hooks/|\bschtasks\s+/create\b",
        _I,
    ),
    P("\\currentversion\\run", r"\\CurrentVersion\\Run\b", _I),
    P("开机自启 开机启动", r"开机自启|开机启动"),
)


#: The patterns of "mass delete": a recursive delete of the root or the home folder,
#: formatting or overwriting a disk.
MASS_DELETE: tuple[Pat, ...] = (
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
)


#: The patterns of "disables security tools": SELinux, firewalls, antivirus, history,
#: TLS verification switched off.
DISABLES_SECURITY_TOOLS: tuple[Pat, ...] = (
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
    # an agent's own permission checks turned off (the fourth hostile pass): Claude Code's
    # --dangerously-skip-permissions and bypassPermissions mode, a Bash(*) allow rule that
    # approves every command, Codex's bypass flag, never-ask approval and full-access
    # sandbox, Gemini CLI's --yolo
    P(
        (
            *("dangerously", "bypasspermissions", "bash(*", "bash(:*", "--yolo", "tools"),
            *("allow",),
            *("approval_policy", "ask-for-approval", "danger-full-access"),
            *("dangerouslydisablesandbox",),
        ),
        r"--dangerously-(?:skip-permissions|bypass-approvals-and-sandbox)\b"
        r"|\bbypassPermissions\b|\bdangerouslyDisableSandbox\b"
        r"|\bBash\(\s*:?\*\s*\)|(?<![\w-])--yolo\b"
        r"|--allowed-?tools[= \t]+[\"']?[^\n]{0,80}?\bBash\b(?!\()"
        r"|[\"']allow[\"']\s*:\s*\[[^\]\n]{0,200}?[\"']Bash[\"']"
        r"|\bapproval_policy\s*=\s*[\"']?never\b|--ask-for-approval[ \t=]+never\b"
        r"|\bdanger-full-access\b",
        _I,
    ),
)
