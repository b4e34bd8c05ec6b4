"""``talos hook AGENT``: the process an agent runs on every prompt (design §9.5, issue 16).

It reads the agent's hook event on stdin and writes exactly what the agent expects on stdout
— or nothing. It imports only the standard library on its way to the answer: the resident
server (:mod:`talos.hooks.server`) of the home does the recall, and only when no server can be
reached does this process import talos's recall and answer by itself.

The hook never breaks the agent's turn. Malformed input, a missing home, an unreadable
talos.toml, a locked index, a crash, or no answer within ``[hooks] timeout`` seconds (2.5 by
default, well inside every agent's own limit) all end the same way: exit 0, nothing on stdout
or stderr, and one line in the home's hook log (:mod:`talos.hooks.log`), which
``talos doctor`` shows.

How it reaches the server:

1. connect to ``<state>/run/hook.sock`` — only if that folder is mode 0700 and the socket is
   owned by this user, and only to a server process of this user (peer credentials);
2. none there: when no server holds the home's lock, start one (detached: its own session,
   no inherited stdin/stdout/stderr, so the agent's pipe closes when this hook exits), then
   wait for its socket until the deadline;
3. a server of another talos version or other settings answers ``restart`` and exits: start
   a new one (once);
4. the server cannot be started, or died starting: recall in this process.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from _socket import socket

    from talos.hooks.state import HookState

__all__ = [
    "AGENT_NAMES",
    "MAX_INPUT",
    "MAX_REPLY",
    "OUTPUTS",
    "deliverable",
    "main",
    "ping",
    "stop",
    "whole",
]

#: The agents ``talos hook`` answers (:data:`talos.hooks.agents.AGENTS`, kept here so the
#: client does not import that module; tests/test_hooks.py checks they agree): the events
#: talos answers, the most context delivered whole and its unit (:func:`talos.hooks.agents.
#: measure`). What the hook prints is checked against them (:func:`deliverable`).
OUTPUTS: dict[str, tuple[tuple[str, ...], int, str]] = {
    "claude-code": (("UserPromptSubmit", "SessionStart"), 10_000, "utf16"),
    "codex": (("UserPromptSubmit", "SessionStart"), 10_000, "bytes"),
    "gemini": (("BeforeAgent", "SessionStart"), 10_000, "chars"),
}
AGENT_NAMES = tuple(OUTPUTS)
#: Largest hook input read from stdin.
MAX_INPUT = 4 * 1024 * 1024
#: Largest reply read from the server (an agent takes 10,000 characters of context at most).
MAX_REPLY = 4 * 1024 * 1024


class _StderrToLog:
    """What ``sys.stderr`` is while the hook runs: each line written goes to the hook log as
    a ``warning`` (``talos: warning:`` removed), nothing to the agent — Gemini CLI reads a
    hook's stderr as its output. The catch-all behind :class:`talos.hooks.context.Responder`'s
    own capture (a Python warning, a thread's exception, a library's print)."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if line.strip():
                msg = line.strip().removeprefix("talos: ").removeprefix("warning: ")
                _log(self.run, "warning", msg)
        return len(text)

    def flush(self) -> None:
        if self.pending.strip():
            self.write("\n")
        self.pending = ""

    def isatty(self) -> bool:
        return False


class _Run:
    """One hook run: what the watchdog needs to write its log line, and its two locks
    (``cancel`` is released when the run ends; ``output`` is taken by whoever ends it)."""

    def __init__(self, agent: str) -> None:
        import _thread

        self.agent = agent
        self.event = "-"
        self.log = ""
        #: When the run started and when its watchdog ends it (``time.monotonic()`` seconds),
        #: and the timeout that deadline comes from (0.0: no watchdog armed).
        self.start = time.monotonic()
        self.deadline = self.start
        self.timeout = 0.0
        #: The soft address-space limit is too small to recall in this process (:func:`_main`).
        self.cramped = False
        self.phase = "timeout"  # or "busy" while a server starts
        self.cancel = _thread.allocate_lock()
        self.output = _thread.allocate_lock()


def _log(run: _Run, kind: str, message: str, path: str = "") -> None:
    from talos.hooks import log as hook_log

    hook_log.write(path or run.log or hook_log.fallback_log(), run.agent, run.event, kind, message)


def _event_name(raw: bytes) -> str:
    """``hook_event_name`` read without a JSON parser (for log lines only)."""
    key = raw.find(b'"hook_event_name"')
    if key < 0:
        return "-"
    start = raw.find(b'"', raw.find(b":", key) + 1)
    end = raw.find(b'"', start + 1)
    if start < 0 or end < 0 or end - start > 64:
        return "-"
    return raw[start + 1 : end].decode("utf-8", "replace").replace(" ", "_") or "-"


#: How often the watchdog looks at the run's deadline, which the configured timeout moves
#: after it is armed (seconds): a deadline moved earlier is kept within this much.
_WATCH = 0.05


def _arm(run: _Run, seconds: float) -> None:
    """Stop this process ``seconds`` after the run's start (:attr:`_Run.start`): log one
    line, exit 0, print nothing. Armed first thing with the default timeout; :func:`_move`
    sets the configured one (talos.toml's parse is inside the deadline: a slow one held a
    0.2 s hook for 3 s, tests/test_hook_never_blocks.py).

    A watchdog thread, not ``SIGALRM``: a Python signal handler waits until the main thread
    is back in Python, and SQLite's busy handler (a locked index) sleeps in C for up to a
    minute (tests/test_hooks.py pins it)."""
    import _thread

    def expire() -> None:
        while True:
            left = run.deadline - time.monotonic()
            if left <= 0:
                break
            if run.cancel.acquire(timeout=min(left, _WATCH)):
                return  # answered in time (it keeps the lock: main may release it only once)
        if not run.output.acquire(blocking=False):
            return  # the answer is being written
        if isinstance(sys.stderr, _StderrToLog):
            sys.stderr.flush()  # a warning half written, logged before the exit
        _drain_fd2(run)
        if run.phase == "busy":
            msg = f"the talos server is still starting; no context within {run.timeout:g} s"
            _log(run, "busy", msg)
        else:
            _log(run, "timeout", f"no answer within {run.timeout:g} s")
        os._exit(0)

    _move(run, seconds)
    run.cancel.acquire()
    _thread.start_new_thread(expire, ())


def _move(run: _Run, seconds: float) -> None:
    """Set the run's deadline to ``seconds`` after its start (the armed watchdog follows)."""
    run.timeout = seconds
    run.deadline = run.start + seconds


def _hold_fd2() -> int | None:
    """Point fd 2 away from the agent for the whole run, at the OS level: a C library writes
    there past ``sys.stderr`` (OpenBLAS under a memory limit wrote "Memory allocation still
    failed" and the agent showed it, tests/test_hook_never_blocks.py). fd 2 becomes an
    anonymous in-memory file (Linux; else /dev/null) whose text :func:`_drain_fd2` logs.

    Returns:
        A duplicate of the agent's fd 2 for :func:`_give_fd2`, or ``None`` when it was
        closed. Raises ``OSError`` when no descriptor can be opened.
    """
    try:
        saved: int | None = os.dup(2)
    except OSError:
        saved = None  # fd 2 is closed
    try:
        fd = os.memfd_create("talos-hook-stderr")  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        fd = os.open(os.devnull, os.O_WRONLY)
    if fd != 2:
        os.dup2(fd, 2)
        os.close(fd)
    return saved


def _give_fd2(saved: int | None) -> None:
    """Put back the fd 2 :func:`_hold_fd2` took (close it when it had been closed)."""
    try:
        if saved is None:
            os.close(2)
        else:
            os.dup2(saved, 2)
            os.close(saved)
    except OSError:
        pass


def _drain_fd2(run: _Run) -> None:
    """Log what was written on fd 2 while it was held (at most 4 KiB, as ``warning`` lines)
    and empty it."""
    try:
        if os.lseek(2, 0, os.SEEK_CUR) <= 0:
            return
        text = os.pread(2, 4096, 0)
        os.ftruncate(2, 0)
        os.lseek(2, 0, os.SEEK_SET)
    except (OSError, AttributeError):
        return
    for line in text.decode("utf-8", "replace").splitlines():
        if line.strip():
            _log(run, "warning", line.strip()[:300])


def _claim_output(run: _Run) -> None:
    """Take the right to write the answer (or wait here while the watchdog ends the process);
    stops the watchdog."""
    if run.timeout:
        run.output.acquire()
        run.cancel.release()


def _read_stdin() -> bytes:
    if sys.stdin is None:  # closed (``<&-``): no event
        return b""
    data = sys.stdin.buffer.read(MAX_INPUT + 1)
    if len(data) > MAX_INPUT:
        raise ValueError(f"hook input larger than {MAX_INPUT} bytes")
    return data


# -- reaching the server ------------------------------------------------------------------


def _connect(state: HookState) -> socket | None:
    """A socket connected to the home's server, or ``None`` when there is none.

    Raises:
        PermissionError: the socket or the server belongs to another user.
    """
    import _socket  # not socket: its enum and selectors cost the hook ~2 ms

    try:
        st = os.lstat(state.socket)
    except FileNotFoundError:
        return None
    if st.st_mode & 0o170000 == 0o100000 and st.st_uid == os.getuid() and st.st_size == 0:
        # An empty regular file of this user where the socket belongs (a copy, another tool's
        # crash): every hook recalled in its own process, and nothing repaired it. The name
        # is removed (never followed); the next server binds a socket there.
        with _suppress_missing():
            os.unlink(state.socket)
        return None
    if st.st_mode & 0o170000 != 0o140000 or st.st_uid != os.getuid():  # S_ISSOCK, no stat
        from talos.hooks.state import FILE_KINDS

        kind = FILE_KINDS.get(st.st_mode & 0o170000, "a regular file")
        if st.st_mode & 0o170000 == 0o140000:  # a socket of another user
            raise PermissionError(f"{state.socket} is not a socket of this user; not connecting")
        raise PermissionError(f"{state.socket} is {kind}, not a socket; not connecting")
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    here = os.open(".", os.O_RDONLY)
    try:
        os.chdir(state.run_dir)  # a relative name: no socket path length limit
        s.connect("hook.sock")
    except (FileNotFoundError, ConnectionRefusedError):
        s.close()
        return None
    except BaseException:
        s.close()
        raise
    finally:
        os.fchdir(here)
        os.close(here)
    from talos.hooks.state import peer_uid

    uid = peer_uid(s)
    if uid is not None and uid != os.getuid():
        s.close()
        raise PermissionError(f"{state.socket} is served by uid {uid}; not connecting")
    return s


class _suppress_missing:
    """``contextlib.suppress(FileNotFoundError)`` without importing contextlib."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, *_rest: object) -> bool:
        return kind is FileNotFoundError


def _lock_free(state: HookState) -> bool:
    """Whether no server holds the home's lock (none runs or starts).

    Raises:
        OSError: the lock is not a regular file (a FIFO, a folder, a link: not followed,
            never created through) or cannot be opened.
    """
    import fcntl

    from talos.hooks.state import regular_fd

    fd = regular_fd(state.lock, os.O_RDWR | os.O_CREAT)
    try:
        # A raw flock, not talos.fsutil.lock: this process imports only the standard library
        # on its way to the answer (filelock and talos.fsutil are not), and the server's
        # lifetime lock it probes is a raw flock of the same file (talos.hooks.server).
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases the lock
    return True


def _spawn(state: HookState) -> subprocess.Popen[bytes]:
    """Start the home's server detached from this hook and from the agent.

    Raises:
        OSError: it cannot be started.
    """
    import subprocess

    import talos

    # The server runs the code this hook runs: the talos this process imported comes first
    # on the server's path. A hook run from a source checkout next to an installed copy
    # otherwise started the installed one, whose code stamp never matched (CI ran into it).
    code = os.path.dirname(os.path.dirname(os.path.abspath(talos.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (code, env.get("PYTHONPATH", "")) if p)
    return subprocess.Popen(
        [sys.executable, "-m", "talos.hooks.server", "--home", state.home],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=state.run_dir,
        start_new_session=True,
        close_fds=True,
    )


def _reach(run: _Run, state: HookState) -> socket | None:
    """Connect to the server, starting it when no one else does; wait for it (the deadline
    bounds the wait). ``None``: the server this hook started died before it listened."""
    from talos.hooks.state import ensure_private_dir

    ensure_private_dir(state.run_dir)
    spawned = None
    while True:
        s = _connect(state)
        if s is not None:
            return s
        if run.cramped:
            return None  # a server started here would inherit the limit and die the same way
        if _lock_free(state):
            if spawned is not None and spawned.poll() is not None:
                return None
            if spawned is None:
                spawned = _spawn(state)
        run.phase = "busy"  # a server is starting (this hook's or another's)
        time.sleep(0.01)


def _exchange(s: socket, request: bytes, seconds: float) -> bytes:
    """Send ``request``, read the reply until the server closes, at most :data:`MAX_REPLY`
    bytes (a listener at the socket that never stops sending is cut there: the reply is then
    not whole, :func:`whole`)."""
    import _socket

    s.settimeout(max(seconds, 0.01))
    try:
        s.sendall(request)
        s.shutdown(_socket.SHUT_WR)
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_REPLY:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        s.close()


def _request(op: str, agent: str, state: HookState, body: bytes = b"") -> bytes:
    from talos.hooks.state import code_stamp

    head = f"talos-hook/1\n{op} {agent}\n{code_stamp()}\n{state.config_digest}\n"
    return head.encode("utf-8") + body


def _ask(run: _Run, state: HookState, raw: bytes, deadline: float) -> bytes | None:
    """The server's reply to the hook input, or ``None`` when no server can answer."""
    request = _request("answer", run.agent, state, raw)
    for _attempt in range(2):
        s = _reach(run, state)
        if s is None:
            return None
        reply = _exchange(s, request, deadline - time.monotonic())
        if not reply.startswith(b"restart\n"):
            return reply
        run.phase = "busy"  # the old server exits; the next _reach starts a new one
    return None


def _in_process(run: _Run, state: HookState, raw: bytes) -> bytes:
    """Answer without a server (the fallback): import talos's recall here. Its warnings
    (answering, writing usage counts, closing) go to the hook log. BLAS runs one thread:
    each thread's buffers cost address space, and an agent's sandbox may limit it."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ.setdefault(name, "1")  # before numpy loads (nothing here loaded it yet)
    from talos.hooks.context import Responder, reply

    responder = Responder(state.home, state.settings, lambda w: _log(run, "warning", w))
    try:
        return reply(responder, run.agent, raw)
    finally:
        responder.close()


# -- the command --------------------------------------------------------------------------


def whole(status: bytes, out: bytes) -> bool:
    """Whether ``out`` is the whole answer its status line ``ok LENGTH`` announced, and looks
    like what an agent may be given: nothing, or one ASCII line from ``{`` to ``}`` (the
    server sends ``json.dumps`` output, :func:`talos.hooks.agents.render`). A server killed
    mid-reply, or any listener at the socket, made the hook print truncated JSON
    (tests/test_hook_never_blocks.py). What the line says is :func:`deliverable`'s check.
    """
    words = status.split(b" ")
    if len(words) != 2 or words[0] != b"ok" or not words[1].isdigit() or int(words[1]) != len(out):
        return False
    return not out or (
        out.startswith(b"{") and out.endswith(b"}\n") and out.count(b"\n") == 1 and out.isascii()
    )


#: What :func:`talos.hooks.agents.clean` replaces: no context holds them.
_CONTROL = "[\x00-\x08\x0b-\x1f\x7f-\x9f]"


#: Unicode categories talos never writes as they are (:data:`talos.text.ESCAPED_CATEGORIES`,
#: which this module does not import; tests/test_hook_never_blocks.py checks they agree).
_ESCAPED = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def deliverable(agent: str, raw: bytes, out: bytes) -> str:
    """Why ``out`` is not what ``agent`` may be given for its hook input ``raw``; "" when it
    is. Only the agent's own context may leave the hook (design §9.5): nothing, or exactly what
    :func:`talos.hooks.agents.render` writes — ``{"hookSpecificOutput": {"hookEventName":
    EVENT, "additionalContext": TEXT}}`` and a newline, byte for byte as ``json.dumps`` with
    ASCII escapes writes it, ``EVENT`` the input's own event and one the agent's table
    (:data:`OUTPUTS`) names, ``TEXT`` not empty, without terminal control characters nor any
    other character talos escapes (Cf, Cs, Zl, Zp: a bidi override, U+2028, a lone
    surrogate), within the agent's limit. A listener of this user at the socket had ``{abc}``
    printed, and a well-framed ``{"decision": "block"}`` that blocks Claude Code's prompt
    (tests/test_hook_never_blocks.py).

    ``json`` is imported here, only when there is something to print: ~1.3 ms to import
    (``re``, which it needs, is loaded already by the settings' TOML reader); a served hook
    went from 37.4 to 39.5 ms median (80 runs interleaved with the code before, one fact).
    """
    if not out:
        return ""
    import json
    import re

    events, limit, unit = OUTPUTS.get(agent, ((), 0, "chars"))
    try:
        got = json.loads(out)
    except (ValueError, RecursionError) as e:
        return f"not JSON ({e})"
    inner = got.get("hookSpecificOutput") if isinstance(got, dict) else None
    if not isinstance(inner, dict) or list(got) != ["hookSpecificOutput"]:
        return "not one hookSpecificOutput object"
    if list(inner) != ["hookEventName", "additionalContext"]:
        return f"hookSpecificOutput holds {sorted(inner)!r}, not the event and the context"
    event, text = inner["hookEventName"], inner["additionalContext"]
    if not isinstance(event, str) or not isinstance(text, str) or not text:
        return "the event or the context is not a string, or the context is empty"
    try:
        asked = json.loads(raw).get("hook_event_name")
    except (ValueError, AttributeError, RecursionError):
        asked = None
    if event not in events:
        return f"context for event {event[:40]!r}, which {agent} has not"
    if event != asked:
        return f"context for event {event[:40]!r}, not for {str(asked)[:40]!r}"
    if re.search(_CONTROL, text):
        return "the context holds terminal control characters"
    if not text.isascii():
        import unicodedata

        for ch in text:
            if ch > "\x7f" and unicodedata.category(ch) in _ESCAPED:  # ASCII: _CONTROL's
                return f"the context holds U+{ord(ch):04X}, which talos writes as <U+{ord(ch):04X}>"
    size = len(text)  # chars; utf16: an astral character is two units (no codec imported)
    if unit == "utf16":
        size += len(re.findall("[\U00010000-\U0010ffff]", text))
    elif unit == "bytes":
        size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        return f"the context is {size} {unit} long; {agent} takes {limit} whole"
    if json.dumps(got, ensure_ascii=True).encode() + b"\n" != out:
        return "not written as talos writes it (spacing, escapes, a repeated key)"
    return ""


def _options(argv: list[str]) -> tuple[str, str | None]:
    agent, home = argv[0], None
    rest = argv[1:]
    for i, arg in enumerate(rest):
        if arg == "--home" and i + 1 < len(rest):
            home = rest[i + 1]
        elif arg.startswith("--home="):
            home = arg.split("=", 1)[1]
    return agent, home


def main(argv: list[str]) -> int:
    """Run ``talos hook AGENT [--home HOME]`` (``argv`` starts with AGENT). Always 0.

    Run by a person at a terminal (stdin a terminal) it prints a hint on stderr, never on
    stdout; with stdin closed, or stderr, it prints nothing (Claude Code takes stdout as
    context, Gemini CLI stderr, tests/test_hook_never_blocks.py). Otherwise, from its first
    step: the watchdog is armed with the default timeout, fd 2 is held (:func:`_hold_fd2`),
    and any failure, a ``MemoryError`` too, ends in exit 0 with at most a log line.
    """
    agent, home = _options(argv)
    run = _Run(agent)
    if os.isatty(0):  # a person, not an agent
        if sys.stderr is not None:
            print(
                f"talos hook {agent} reads the agent's hook event as JSON on stdin; the agent "
                f"runs it (talos hook install {agent}).",
                file=sys.stderr,
            )
        return 0
    from talos.hooks.state import DEFAULTS

    stderr = sys.stderr
    saved: int | None = None
    held = False
    try:
        _arm(run, DEFAULTS["timeout"])
        saved, held = _hold_fd2(), True
        return _main(run, home)
    except Exception as e:  # never break the agent's turn (MemoryError included)
        try:  # noqa: SIM105 (contextlib costs the hook its import)
            _log(run, "error", f"{type(e).__name__}: {e}")
        except Exception:  # the log line is lost, not the turn (a MemoryError again)
            pass
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        if run.timeout and run.cancel.locked():
            run.cancel.release()  # the watchdog ends without a word
        try:
            if isinstance(sys.stderr, _StderrToLog):
                sys.stderr.flush()
            if held:
                _drain_fd2(run)
        except Exception:
            pass
        sys.stderr = stderr
        if held:
            _give_fd2(saved)


#: Below this soft RLIMIT_AS (bytes) the hook does not recall in its own process: numpy's
#: OpenBLAS then fails to allocate, writes on fd 2 and calls exit(1) (seen at 128 MiB). Measured
#: on a one-fact home (python 3.11, one BLAS thread, ``ulimit -v``): answered at 128 and 192 MiB,
#: died silently at 160 MiB; a real home's index needs more, hence the margin.
MIN_ADDRESS_SPACE = 512 << 20


def _cramped() -> bool:
    """Whether the soft address-space limit is below :data:`MIN_ADDRESS_SPACE`."""
    try:
        import resource
    except ImportError:  # not POSIX
        return False
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    return soft != resource.RLIM_INFINITY and soft < MIN_ADDRESS_SPACE


def _main(run: _Run, home: str | None) -> int:
    from talos.hooks.state import DEFAULTS, blank_home, home_dir, hook_state

    blank = blank_home(home)  # an unset variable: not the default home, not the working folder
    if blank:
        _log(run, "error", blank)
        return 0

    # the log of the usual state folder until talos.toml (maybe slow to parse) names another
    state_dir = os.path.join(os.path.abspath(home_dir(home)), ".talos")
    run.log = os.path.join(state_dir, "hook.log") if os.path.isdir(state_dir) else ""
    # talos.toml's own timeout, found by a line scan before the parse, may only bring the
    # deadline nearer while tomllib runs (a 32 KB dotted key costs it seconds)
    state = hook_state(home, lambda t: _move(run, min(t, DEFAULTS["timeout"])))
    run.log = state.log if os.path.isdir(state.home) else ""
    sys.stderr = _StderrToLog(run)  # from here on, nothing reaches the agent's stderr
    _move(run, state.settings["timeout"])
    if sys.stdin is None:
        _log(run, "error", "no hook input on stdin (stdin is closed)")
        return 0
    raw = _read_stdin()
    run.event = _event_name(raw)
    if not raw.strip():
        _log(run, "error", "no hook input on stdin")
        return 0
    if not run.log:
        _log(run, "error", f"home {state.home} does not exist (talos init, or --home in the hook)")
        return 0
    if state.problem:
        _log(run, "error", state.problem)
        return 0
    if os.environ.get("TALOS_SCOPE", "").strip(", "):
        # checked as every command checks it (talos.view.scopes): a scope no record can carry is
        # refused, not ignored (attack pass 23: "a b" was ignored and global context given)
        from talos.errors import InputError
        from talos.view.scopes import request_scopes

        try:
            request_scopes(None)
        except InputError as e:
            _log(run, "error", str(e))
            return 0
    deadline = run.deadline
    run.cramped = _cramped()
    reply: bytes | None = None
    if state.settings["server"] and hasattr(os, "getuid"):
        try:
            reply = _ask(run, state, raw, deadline)
        except PermissionError as e:
            _log(run, "error", f"{e}; recalling in the hook's own process")
        except OSError as e:  # the server cannot be started or spoke no sense: recall here
            _log(run, "error", f"talos server unreachable ({e}); recalling in process")
    status, _, rest = (reply or b"").partition(b"\n")
    if reply is not None and not whole(status, rest) and not status.startswith(b"error "):
        # A server killed mid-reply, or another program listening at the socket: what came
        # is not a whole answer, and the agent got broken JSON. Recall here instead.
        _log(
            run,
            "error",
            f"the talos server's answer was cut short or is not one ({len(reply)} bytes, "
            f"first line {status[:40]!r}); recalling in process",
        )
        reply = None
    elif reply is not None and status.startswith(b"ok"):
        why = deliverable(run.agent, raw, rest)
        if why:  # whole, but not the agent's context: another program's, never printed
            msg = f"the talos server's answer is not {run.agent}'s context ({why})"
            _log(run, "error", f"{msg}; recalling in process")
            reply = None
    if reply is None and run.cramped:
        msg = "the address space limit (ulimit -v) is too small to recall in the hook's process"
        _log(run, "error", f"{msg} (at least {MIN_ADDRESS_SPACE >> 20} MiB); no context")
        return 0
    if reply is None:
        run.phase = "timeout"
        status, _, rest = _in_process(run, state, raw).partition(b"\n")
    if status.startswith(b"ok") and whole(status, rest):
        why = deliverable(run.agent, raw, rest)
        if why:
            _log(run, "error", f"talos's answer is not {run.agent}'s context ({why}); none given")
            return 0
        _claim_output(run)
        sys.stdout.buffer.write(rest)
        sys.stdout.buffer.flush()
        return 0
    words = status.decode("utf-8", "replace").split(" ")
    if len(words) >= 3 and words[0] == "error":
        if words[2] != "-":
            run.event = words[2]
        _log(run, words[1], rest.decode("utf-8", "replace").strip() or "failed")
    else:
        _log(run, "error", f"unexpected reply from the talos server: {status[:80]!r}")
    return 0


# -- for people: status and stop ----------------------------------------------------------


def ping(home: str | None = None) -> dict[str, str] | None:
    """The running server of ``home`` as ``{"pid", "stamp", "config", "current"}``
    (``current``: ``"yes"`` when it runs this talos on these settings), or ``None``."""
    from talos.hooks.state import code_stamp, hook_state

    state = hook_state(home)
    s = _connect(state)
    if s is None:
        return None
    reply = _exchange(s, _request("ping", "-", state), 5.0)
    status, _, rest = reply.partition(b"\n")
    words = rest.decode("utf-8", "replace").split()
    if status != b"ok" or len(words) < 3:
        return None
    current = words[1] == code_stamp() and words[2] == state.config_digest
    return {"pid": words[0], "stamp": words[1], "config": words[2], "current": str(current)}


def stop(home: str | None = None, wait: float = 5.0) -> bool:
    """Ask the server of ``home`` to exit and wait (up to ``wait`` seconds) until its lock is
    released and its process has exited (reaped or not, :func:`_running`). Returns whether a
    server was running."""
    from talos.hooks.state import hook_state

    state = hook_state(home)
    try:
        s = _connect(state)
    except PermissionError:
        return False
    if s is None:
        return False
    try:
        from talos.hooks.state import regular_fd

        fd = regular_fd(state.lock, os.O_RDONLY)  # a FIFO or /dev/zero there hung this read
        try:
            pid = int(os.read(fd, 32).strip() or 0)
        finally:
            os.close(fd)
    except (OSError, ValueError):
        pid = 0
    _exchange(s, _request("stop", "-", state), wait)
    end = time.monotonic() + wait
    while time.monotonic() < end and (not _lock_free(state) or _running(pid)):
        time.sleep(0.01)
    return True


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs. One that has exited has ended even while no one has
    reaped it yet (a zombie: signal 0 still reaches it): ``stop`` waited on a server that had
    exited until its reaper came, about 2 s on a machine whose init reaps late, or all of
    ``wait`` when the reaper was the caller itself."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _exited(pid)


def _exited(pid: int) -> bool:
    """Whether ``pid`` has exited and waits to be reaped: its state in ``/proc/PID/stat`` is
    ``Z`` (zombie) or ``X`` (being removed). Read, never reaped: the process may be another's
    child, whose exit status is its parent's to collect. ``False`` without ``/proc`` (macOS:
    signal 0 is all there is)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read(4096)
    except OSError:
        return False
    # "PID (COMM) STATE ...": COMM may hold spaces and parentheses; the state follows the last ")"
    _, paren, rest = stat.rpartition(b")")
    return bool(paren) and rest[1:2] in (b"Z", b"X")
