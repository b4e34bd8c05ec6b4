"""Where the hook's files are, read with the standard library only (issue 16.3).

The hook client must find the resident server's socket before it may import anything heavy,
so the lookup of the home folder lives here (:func:`home_dir`, without ``platformdirs`` on Linux
and macOS; elsewhere it asks ``platformdirs``; :func:`talos.home.resolve_home` checks and
canonicalizes what it finds) and this module reads ``talos.toml`` only when it holds a key
the client needs (``state_dir`` or a ``[hooks]`` table): ``tomllib`` alone costs ~7 ms.

Files, all in the home's state folder (``.talos`` unless ``state_dir`` says otherwise):

* ``hook.log`` — one line per hook that gave no context because something failed
  (:mod:`talos.hooks.log`);
* ``run/`` — mode 0700: ``hook.sock`` (the server's Unix socket, mode 0600) and
  ``hook.lock`` (held by the one server of the home; holds its pid).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs the hook ~3 ms at start-up; type checkers read it as True
if TYPE_CHECKING:
    from _socket import socket
    from collections.abc import Callable
    from typing import Any

__all__ = [
    "DEFAULTS",
    "FILE_KINDS",
    "MAX_QUERY",
    "HookState",
    "blank_home",
    "code_stamp",
    "ensure_private_dir",
    "home_dir",
    "hook_state",
    "peer_uid",
    "read_config",
    "regular_fd",
]

#: ``[hooks]`` settings of talos.toml and their defaults. ``timeout``: seconds the hook may take
#: in all (well inside every agent's own: Claude Code stops a UserPromptSubmit hook at 30 s,
#: Gemini CLI any hook at 60 s, Codex at 600 s); ``server``: use the resident process;
#: ``idle``: seconds an idle server lives; ``k``: rows per prompt; ``budget``: most context
#: per event, in the agent's unit (the agent's own limit applies on top); ``session_facts``,
#: ``session_hits``: rows of the SessionStart block (:mod:`talos.hooks.context`).
#: The least ``budget``: :data:`talos.render.MIN_BUDGET` (a block's heading and one row), which
#: this standard-library module cannot import; tests/test_hooks.py checks they are equal.
MIN_BUDGET = 200

#: Seconds the agent gives talos's hook handler before it stops it: the ``timeout`` that
#: ``talos hook install`` writes (:mod:`talos.hooks.install`; Gemini CLI's in milliseconds).
HANDLER_TIMEOUT_S = 10
#: Seconds kept between the hook's own deadline and the handler's limit: the interpreter
#: starts before the deadline is armed, and the hook must end on its own, not be killed.
HANDLER_MARGIN_S = 1.0

#: The range each number of ``[hooks]`` is clamped to (``talos.home.HOOK_RANGES`` says the same
#: to ``talos doctor``; tests/test_config.py checks they are equal). ``timeout`` never reaches
#: the handler's limit, whatever talos.toml (or one synced from another device) says:
#: ``timeout = 30`` ran the hook 30 s while the agent stopped it at 10 s
#: (tests/test_clock_bounds.py).
RANGES: dict[str, tuple[float, float]] = {
    "timeout": (0.2, HANDLER_TIMEOUT_S - HANDLER_MARGIN_S),
    "idle": (1.0, 86_400.0),
    "k": (0, 1_000_000),
    "budget": (MIN_BUDGET, 1_000_000),
    "session_facts": (0, 1_000_000),
    "session_hits": (0, 1_000_000),
}

#: Characters of a prompt used as the query: a pasted log of a megabyte would otherwise cost
#: seconds of keyword extraction for nothing the first lines do not say (also the bound of
#: MCP's ``query``; here, in a module that imports nothing of talos's, so ``talos mcp`` can
#: build its tools' schemas before it loads the index, docs/benchmarks.md "talos mcp").
MAX_QUERY = 8_000

DEFAULTS: dict[str, Any] = {
    "timeout": 2.5,
    "server": True,
    "idle": 600.0,
    "k": None,  # None: the home's (talos.toml's k, else 30), as `talos recall`
    "budget": None,  # None: the home's (talos.toml's budget, else 2,000 characters)
    "session_facts": 10,
    "session_hits": 5,
}


def _visible(text: str) -> bool:
    """Whether ``text`` holds a character that shows: not only spaces and format characters
    (a zero-width space, a byte-order mark, a word joiner: ``--home "\u200b"`` made a home
    folder whose name shows as nothing, tests/test_clock_attack.py)."""
    import unicodedata

    return any(not c.isspace() and unicodedata.category(c) != "Cf" for c in text)


def blank_home(home: str | None = None) -> str | None:
    """Why the home named cannot be used when it is an empty path: ``home`` (``--home``, the
    API's argument) given as ``""``, spaces or invisible format characters, or — with no
    ``home`` — ``TALOS_HOME`` set so.
    An unset variable (``--home "$NOTES"``) made the CLI write memory.md into the working
    folder while the hook looked in the default home (tests/test_clock_bounds.py); every route
    (CLI, hook, MCP, Python API) refuses it with this one message. ``None``: not blank."""
    if home is not None:
        if _visible(str(home)):
            return None
        what = "the home"
    else:
        env = os.environ.get("TALOS_HOME")
        if env is None or _visible(env):
            return None
        what = "TALOS_HOME"
    return (
        f"{what} is an empty path (an unset variable?); name the home folder, or leave it out "
        "to use the default home"
    )


def home_dir(home: str | None = None) -> str:
    """The home folder, ``~`` expanded: ``home``, else ``$TALOS_HOME``, else the platform data
    dir (``platformdirs.user_data_dir("talos")``, read here with the standard library on Linux
    and macOS). The one lookup of the home: :func:`talos.home.resolve_home` reads it and
    checks and canonicalizes the result."""
    if home:
        return os.path.expanduser(home)
    env = os.environ.get("TALOS_HOME")
    if env:
        return os.path.expanduser(env)
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Application Support/talos")
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        base = os.environ.get("XDG_DATA_HOME", "")
        if not base.strip():
            base = os.path.expanduser("~/.local/share")
        return os.path.join(base, "talos")
    import platformdirs  # Windows and the rest: the library knows

    return str(platformdirs.user_data_dir("talos"))


class HookState:
    """One home as the hook sees it.

    Attributes:
        home: the home folder (absolute). state_dir: its state folder. config: the bytes of
        talos.toml (``b""`` when absent). settings: ``[hooks]`` merged over :data:`DEFAULTS`.
        problem: why talos.toml could not be read ("" when it could).
    """

    __slots__ = ("config", "config_digest", "home", "problem", "settings", "state_dir")

    def __init__(self, home: str, state_dir: str, config: bytes, config_digest: str = "-") -> None:
        self.home = home
        self.state_dir = state_dir
        self.config = config
        #: talos.toml's size and modification time: a server started on other settings
        #: must restart (a stat, not a hash: zlib alone costs the hook 0.4 ms to import).
        self.config_digest = config_digest
        self.settings: dict[str, Any] = dict(DEFAULTS)
        self.problem = ""

    @property
    def run_dir(self) -> str:
        """The private folder of the server's socket and lock."""
        return os.path.join(self.state_dir, "run")

    @property
    def socket(self) -> str:
        """The server's Unix socket (connect with a path relative to :attr:`run_dir`: a
        socket path is limited to ~104 bytes, a state folder is not)."""
        return os.path.join(self.run_dir, "hook.sock")

    @property
    def lock(self) -> str:
        """The lock file the one server of the home holds."""
        return os.path.join(self.run_dir, "hook.lock")

    @property
    def log(self) -> str:
        """The hook's log (:mod:`talos.hooks.log`)."""
        return os.path.join(self.state_dir, "hook.log")


def _number(value: Any, default: float, low: float, high: float) -> float:
    """``value`` clamped to ``[low, high]``; ``default`` when it is not a number, or not a
    finite one: ``min(max(nan, low), high)`` is nan, and ``timeout = nan`` (valid TOML)
    killed the deadline's watchdog (tests/test_hook_never_blocks.py); ``inf`` is no setting
    either."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    try:
        number = float(value)
    except OverflowError:  # an integer past a float's range (TOML allows them)
        return high if value > 0 else low
    if number - number != 0.0:  # nan or ±inf (math.isfinite without importing math)
        return default
    return min(max(number, low), high)


#: Largest talos.toml the hook reads (:data:`talos.fsutil.MAX_CONFIG_BYTES`).
MAX_CONFIG_BYTES = 1 << 20
_S_IFMT, _S_IFREG = 0o170000, 0o100000
#: File types by their ``st_mode`` bits, worded as :func:`talos.fsutil.file_kind` words them.
FILE_KINDS = {
    0o040000: "a folder",
    0o010000: "a FIFO (named pipe)",
    0o020000: "a character device",
    0o060000: "a block device",
    0o140000: "a socket",
    0o120000: "a symbolic link",
}


def _kind(path: str, mode: int) -> str:
    """What a file that is not regular is, as "a FIFO (named pipe)"; through a link, "a link
    to a character device (/dev/zero)"."""
    kind = FILE_KINDS.get(mode & _S_IFMT, "not a file")
    if os.path.islink(path):
        kind = f"a link to {kind} ({os.path.realpath(path)})"
    return kind


def read_config(path: str) -> tuple[bytes, str, str]:
    """talos.toml as the hook reads it: ``(bytes, digest, problem)``; ``(b"", "-", "")`` when
    it is missing or unreadable (recall says so; the hook uses the defaults).

    Only a regular file (links followed), looked at before it is opened and opened
    non-blocking, at most :data:`MAX_CONFIG_BYTES`: it is read before the hook's deadline is
    armed, and a FIFO there hung the turn forever, a link to /dev/zero read without end
    (tests/test_hook_never_blocks.py). ``problem`` names such a file; the hook then logs it
    and gives no context."""
    try:
        st = os.stat(path)
        if st.st_mode & _S_IFMT != _S_IFREG:
            return b"", "-", f"{path}: is {_kind(path, st.st_mode)}, not a regular file"
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        return b"", "-", ""
    try:
        st = os.fstat(fd)
        if st.st_mode & _S_IFMT != _S_IFREG:  # swapped after the look
            return b"", "-", f"{path}: is {_kind(path, st.st_mode)}, not a regular file"
        if st.st_size > MAX_CONFIG_BYTES:
            return b"", "-", f"{path}: larger than {MAX_CONFIG_BYTES} bytes; not read"
        data = os.read(fd, MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            return b"", "-", f"{path}: larger than {MAX_CONFIG_BYTES} bytes; not read"
        return data, f"{st.st_size}-{st.st_mtime_ns}-{st.st_ino}", ""
    except OSError:
        return b"", "-", ""
    finally:
        os.close(fd)


def regular_fd(path: str, flags: int, mode: int = 0o600) -> int:
    """A descriptor of ``path`` opened with ``flags`` plus non-blocking, no link followed, no
    controlling terminal, close-on-exec; only if it is a regular file (else ``OSError``
    naming what it is, the descriptor closed). For the hook's own state files: a FIFO or a
    link to a device at ``run/hook.lock`` was opened as it was (design §9.5)."""
    extra = 0
    for name in ("O_NONBLOCK", "O_NOFOLLOW", "O_NOCTTY", "O_CLOEXEC"):
        extra |= getattr(os, name, 0)
    fd = os.open(path, flags | extra, mode)
    st = os.fstat(fd)
    if st.st_mode & _S_IFMT != _S_IFREG:
        os.close(fd)
        kind = FILE_KINDS.get(st.st_mode & _S_IFMT, "not a file")
        raise OSError(22, f"is {kind}, not a regular file", path)
    return fd


def _scan_timeout(config: bytes) -> float | None:
    """``[hooks] timeout`` as a plain line ``timeout = NUMBER`` of the ``[hooks]`` table, found
    without parsing TOML (clamped as :func:`hook_state` does); ``None`` when not written so.
    A hint only: the parse that follows has the last word."""
    table = b""
    for line in config.splitlines():
        line = line.strip()
        if line.startswith(b"["):
            table = line.split(b"#", 1)[0].strip()
        elif table == b"[hooks]" and line.startswith(b"timeout"):
            key, eq, value = line.partition(b"=")
            if eq and key.strip() == b"timeout":
                try:
                    number = float(value.split(b"#", 1)[0].strip().replace(b"_", b""))
                except ValueError:
                    return None
                return _number(number, DEFAULTS["timeout"], *RANGES["timeout"])
    return None


def hook_state(
    home: str | None = None, early_timeout: Callable[[float], None] | None = None
) -> HookState:
    """The :class:`HookState` of ``home`` (see :func:`home_dir`). Never raises for a bad
    talos.toml: the problem is kept in :attr:`HookState.problem` and defaults are used.

    Settings out of range are clamped (``timeout`` 0.2–9 s, inside the agent handler's 10 s;
    ``idle`` 1 s–1 day; ``budget`` at least :data:`MIN_BUDGET`); a value of the wrong type, or
    not finite, falls back to its default. ``early_timeout`` is called with ``[hooks]
    timeout`` found by a line scan (:func:`_scan_timeout`) before talos.toml is parsed: the
    hook's deadline follows it while a slow parse runs (tests/test_hook_never_blocks.py)."""
    root = os.path.abspath(home_dir(home))
    config_path = os.path.join(root, "talos.toml")
    config, digest, problem = read_config(config_path)
    state = HookState(root, os.path.join(root, ".talos"), config, digest)
    state.problem = problem
    if problem or (b"state_dir" not in config and b"hooks" not in config):
        return state
    if early_timeout is not None and b"timeout" in config:
        early = _scan_timeout(config)
        if early is not None:
            early_timeout(early)
    import tomllib

    try:
        data = tomllib.loads(config.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        state.problem = f"{config_path}: invalid TOML: {e}"
        return state
    sd = data.get("state_dir")
    if isinstance(sd, str) and sd:
        state.state_dir = os.path.join(root, os.path.expanduser(sd))
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        s = state.settings
        s["timeout"] = _number(hooks.get("timeout"), DEFAULTS["timeout"], *RANGES["timeout"])
        s["idle"] = _number(hooks.get("idle"), DEFAULTS["idle"], *RANGES["idle"])
        if isinstance(hooks.get("server"), bool):
            s["server"] = hooks["server"]
        for key in ("k", "budget", "session_facts", "session_hits"):
            value = hooks.get(key)
            if DEFAULTS[key] is None and (isinstance(value, bool) or not isinstance(value, int)):
                continue  # absent or of the wrong type: the home's
            s[key] = int(_number(value, DEFAULTS[key], *RANGES[key]))
    return state


def code_stamp() -> str:
    """The installed talos as the server's handshake names it: version, count and newest
    modification time of its ``.py`` files (an upgrade, or an edit of an editable install,
    changes it; ~0.3 ms)."""
    from talos import __version__

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    count, newest = 0, 0
    stack = [here]
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                elif entry.name.endswith(".py"):
                    count += 1
                    newest = max(newest, entry.stat().st_mtime_ns)
    return f"{__version__}+{count}.{newest}"


def ensure_private_dir(path: str) -> None:
    """Create ``path`` with mode 0700, or check an existing one: a folder owned by this user
    (its mode is then set to 0700).

    Raises:
        PermissionError: it is owned by another user, or is not a folder.
    """
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except FileExistsError:
        raise PermissionError(f"{path} is not a folder") from None
    st = os.lstat(path)
    if not os.path.isdir(path) or os.path.islink(path):
        raise PermissionError(f"{path} is not a folder")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise PermissionError(f"{path} belongs to another user (uid {st.st_uid})")
    if st.st_mode & 0o777 != 0o700:
        os.chmod(path, 0o700)


def peer_uid(conn: socket) -> int | None:
    """The uid of the process at the other end of a connected Unix socket, or ``None`` when
    the platform cannot tell (then the 0700 folder and 0600 socket are the only guard).

    Reads the C structs by hand (``_socket``, no ``struct``): the hook imports this."""
    import _socket

    if hasattr(_socket, "SO_PEERCRED"):  # Linux: struct ucred {pid_t pid; uid_t uid; gid_t gid}
        raw = conn.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
        return int.from_bytes(raw[4:8], sys.byteorder)
    if hasattr(_socket, "LOCAL_PEERCRED"):  # macOS: struct xucred {u_int version; uid_t uid}
        raw = conn.getsockopt(0, _socket.LOCAL_PEERCRED, 76)
        return int.from_bytes(raw[4:8], sys.byteorder)
    return None
