"""The resident hook server: one per home, answering hooks over a Unix socket (issue 16.3).

A ``talos recall`` process spends most of its time importing numpy, typer and rich before it
reads a byte; a recall inside a warm process takes milliseconds. So the first hook of a home
starts this server (``python -m talos.hooks.server --home HOME``, detached in its own
session) and every hook after it asks the server over ``<state>/run/hook.sock``:

* **One per home.** The server holds an exclusive lock on ``run/hook.lock`` for its life
  (its pid is written there); a second server started by a racing hook finds it taken and
  exits at once.
* **Owner only.** ``run/`` is mode 0700, the socket mode 0600, and every connection's peer
  uid is checked (``SO_PEERCRED`` on Linux, ``LOCAL_PEERCRED`` on macOS): a request from
  another user is closed unanswered.
* **Warm before it listens.** It builds the default view first, so a hook that finds the
  socket gets an answer in milliseconds; while it warms up hooks see no socket and give no
  context (logged as ``busy``).
* **Idle exit.** After ``[hooks] idle`` seconds without a request (default 600) it exits,
  removing its socket.
* **Restart on upgrade or new settings.** Each request names the client's talos (version and
  code stamp, :func:`talos.hooks.state.code_stamp`) and a digest of talos.toml; when either
  differs from the server's, the server answers ``restart`` and exits, and the client starts
  a new one.

The wire format is deliberately not JSON, so the client needs neither ``json`` nor the event's
schema: a request is ``talos-hook/1`` and three header lines (``OP AGENT``, the code stamp,
the config digest) followed by the raw hook input; the reply's first line is ``ok LENGTH``
(then the exact stdout, LENGTH bytes: a reply cut short is never printed), ``restart``,
``stopped``, or ``error KIND EVENT`` (then a message line); ``ping`` answers ``ok`` and a line.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
import sys
import time
from typing import Any

from talos.hooks import log as hook_log
from talos.hooks.state import (
    FILE_KINDS,
    HookState,
    code_stamp,
    ensure_private_dir,
    hook_state,
    peer_uid,
    regular_fd,
)

__all__ = ["MAGIC", "MAX_REQUEST", "main", "serve"]

#: First line of every request.
MAGIC = b"talos-hook/1"
#: Largest request read (a hook input is a prompt and a few fields; a pasted file fits).
MAX_REQUEST = 4 * 1024 * 1024
#: Seconds a connection may take to send its request.
_READ_TIMEOUT = 5.0
#: Seconds without a request after which the server builds its own view
#: (:meth:`talos.hooks.context.Responder.settle`), once: it warmed up from the stored records,
#: and the first edit of memory.md would otherwise build the whole view inside a hook's
#: deadline (2.8 s at 100,000 sessions: no context; issue 24).
SETTLE_AFTER = 1.0


def _read_request(conn: socket.socket) -> bytes:
    conn.settimeout(_READ_TIMEOUT)
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_REQUEST:
            raise ValueError(f"hook input larger than {MAX_REQUEST} bytes")
        chunks.append(chunk)


class _Server:
    def __init__(self, state: HookState) -> None:
        self.state = state
        self.stamp = code_stamp()
        self.digest = state.config_digest
        self._responder: Any = None

    def warned(self, message: str) -> None:
        """A warning of talos while the server answers, counts usage, warms up or closes:
        to the hook log (its stderr is /dev/null: they were lost)."""
        hook_log.write(self.state.log, "-", "server", "warning", message)

    def queued(self) -> dict[int, int]:
        """How many recalls' usage counts wait in each open :class:`Memory` (by its id)."""
        if self._responder is None:
            return {}
        return self._responder.queued()

    def unqueue(self, before: dict[int, int]) -> None:
        """Drop the usage counts queued since :meth:`queued` gave ``before``."""
        if self._responder is not None:
            self._responder.unqueue(before)

    @property
    def responder(self) -> Any:
        if self._responder is None:
            from talos.hooks.context import Responder  # the heavy imports, once

            self._responder = Responder(self.state.home, self.state.settings, self.warned)
        return self._responder

    def handle(self, data: bytes) -> tuple[bytes, bool]:
        """The reply to one request and whether the server should exit after it."""
        head = data.split(b"\n", 4)
        if len(head) < 4 or head[0] != MAGIC:
            return b"error error -\nnot a talos hook request\n", False
        op_agent, stamp, digest = head[1].split(b" ", 1), head[2], head[3]
        body = head[4] if len(head) > 4 else b""
        op = op_agent[0].decode("ascii", "replace")
        agent = op_agent[1].decode("utf-8", "replace") if len(op_agent) > 1 else ""
        if op == "stop":
            return b"stopped\n", True
        if op == "ping":
            return f"ok\n{os.getpid()} {self.stamp} {self.digest}\n".encode(), False
        if stamp.decode("utf-8", "replace") != self.stamp or (
            digest.decode("ascii", "replace") != self.digest
        ):
            return b"restart\n", True
        from talos.hooks.context import reply

        return reply(self.responder, agent, body), False


#: Seconds a new server waits for the home's lock: a server that answered ``restart`` still
#: holds it while it closes (a hook that started the new one a moment later found the lock
#: taken, and the home was left with no server; tests/test_hook_server.py on a loaded machine).
LOCK_WAIT = 3.0


def _take(lock: Any, fcntl: Any) -> bool:
    """Take the home's server lock, waiting up to :data:`LOCK_WAIT` seconds for a server
    that is exiting. Returns whether it was taken.

    A raw flock on the file the server opened itself, not :func:`talos.fsutil.lock`: the
    server holds it for its life and writes its pid into it (``talos hook stop`` reads it),
    which ``filelock`` offers no public handle for, and the hook client probes it with a
    raw flock, importing only the standard library (:mod:`talos.hooks.client`)."""
    end = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() >= end:
                return False
            time.sleep(0.02)


def _unbind(sock: socket.socket | None, bound: int | None) -> None:
    """Close the listening socket and remove ``hook.sock`` if it is still the one bound
    (inode ``bound``; a newer server's socket stays)."""
    if sock is not None:
        sock.close()
    with contextlib.suppress(OSError):
        if bound is not None and os.stat("hook.sock").st_ino == bound:
            os.unlink("hook.sock")


def _clear_socket_path() -> str:
    """Make room for the socket at ``hook.sock`` (in the current folder, ``run/``): remove a
    socket left by a server that died, or an empty regular file of this user; anything else
    there (a folder, a link, a file with content) is left, and what it is returned ("" when
    the name is free). Never follows a link."""
    try:
        st = os.lstat("hook.sock")
    except FileNotFoundError:
        return ""
    fmt = stat.S_IFMT(st.st_mode)
    ours = st.st_uid == os.getuid()
    if ours and (fmt == stat.S_IFSOCK or (fmt == stat.S_IFREG and st.st_size == 0)):
        with contextlib.suppress(FileNotFoundError):
            os.unlink("hook.sock")
        return ""
    kind = FILE_KINDS.get(fmt, "a regular file with content")
    if fmt == stat.S_IFSOCK:
        kind = f"a socket of uid {st.st_uid}"
    return f"{os.path.abspath('hook.sock')} is {kind}, not a socket of this user; remove it"


def serve(home: str | None = None) -> int:
    """Run the server of ``home`` until it is idle, told to stop, or superseded.

    Returns:
        0; 0 at once when another server holds the home's lock. Failures before listening
        (an unusable state folder) are logged to the hook log and return 1.
    """
    import fcntl

    state = hook_state(home)
    try:
        ensure_private_dir(state.run_dir)
        # held for the server's life; a regular file only, no link followed (design §9.5)
        lock = os.fdopen(regular_fd(state.lock, os.O_RDWR | os.O_CREAT), "r+")
    except OSError as e:
        hook_log.write(state.log, "-", "server", "error", f"cannot start the server: {e}")
        return 1
    if not _take(lock, fcntl):
        lock.close()
        return 0  # another server of this home is alive
    server = _Server(state)
    stopping: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        stopping.append(signum)
        raise SystemExit(0)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    sock: socket.socket | None = None
    bound: int | None = None
    try:
        lock.seek(0)
        lock.truncate()
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        os.chdir(state.run_dir)  # bind by a relative name: no socket path length limit
        try:
            server.responder.warm()
        except Exception as e:
            hook_log.write(state.log, "-", "server", "error", f"warm-up failed: {e}")
        problem = _clear_socket_path()
        if problem:
            hook_log.write(state.log, "-", "server", "error", f"cannot listen: {problem}")
            return 1
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind("hook.sock")
        finally:
            os.umask(old)
        os.chmod("hook.sock", 0o600)
        bound = os.stat("hook.sock").st_ino
        sock.listen(16)
        listener = sock
        idle = float(state.settings["idle"])
        last = time.monotonic()
        settled = False
        while True:
            left = idle - (time.monotonic() - last)
            if left <= 0:
                return 0
            listener.settimeout(left if settled else min(left, SETTLE_AFTER))
            try:
                conn, _addr = listener.accept()
            except TimeoutError:
                if settled:
                    return 0
                settled = True
                try:
                    server.responder.settle()
                except Exception as e:
                    hook_log.write(state.log, "-", "server", "error", f"settling failed: {e}")
                continue
            last = time.monotonic()
            with conn:
                uid = peer_uid(conn)
                if uid is not None and uid != os.getuid():
                    continue  # not ours: no answer, not a word
                before = server.queued()
                try:
                    reply, done = server.handle(_read_request(conn))
                except (OSError, ValueError) as e:
                    reply, done = f"error error -\n{e}\n".encode(), False
                if done:  # stop listening before the word goes out: a client that heard
                    _unbind(sock, bound)  # ``restart`` and reconnected at once was reset
                    sock, bound = None, None
                try:
                    conn.settimeout(_READ_TIMEOUT)
                    conn.sendall(reply)
                except OSError:  # the hook gave up (its deadline): it delivered nothing,
                    server.unqueue(before)  # so nothing of this answer is a hit (issue 15.6)
            if server._responder is not None:  # usage counts, once the agent has its answer
                try:
                    server._responder.flush()
                except Exception as e:
                    hook_log.write(state.log, "-", "server", "error", f"usage not counted: {e}")
            if done:
                return 0
    finally:
        _unbind(sock, bound)
        if server._responder is not None:
            with contextlib.suppress(Exception):
                server._responder.close()
        lock.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m talos.hooks.server [--home HOME]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    home = args[args.index("--home") + 1] if "--home" in args[:-1] else None
    return serve(home)


if __name__ == "__main__":
    raise SystemExit(main())
