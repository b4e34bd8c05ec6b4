"""The hook's log: one line per hook run that gave no context because something failed, and
the warnings of talos on the hook's way.

A hook never breaks the agent's turn (design §9.5): whatever goes wrong, it exits 0 with no
output and says why here, in ``<state>/hook.log``, which ``talos doctor`` shows. Lines are

    2026-05-04T09:12:33Z claude-code UserPromptSubmit timeout: no answer within 2.5 s

(time in UTC, agent, event, a kind — ``error``, ``timeout``, ``busy``, or ``warning`` for what
talos would have printed on the hook's stderr, which an agent may read as output — and a
message on one line, control characters removed). The prompt is never written. The log is
bounded: past :data:`MAX_BYTES` it moves to ``hook.log.1`` (replacing the one before) and
starts afresh. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import dataclass

from talos.hooks.state import _S_IFREG, FILE_KINDS, regular_fd

__all__ = [
    "KINDS",
    "MAX_BYTES",
    "MAX_READ",
    "Entry",
    "fallback_log",
    "read_tail",
    "refusal",
    "write",
]

#: Size at which the log is rotated (two files at most: ~128 KiB).
MAX_BYTES = 64 * 1024
#: ``error``: the hook failed (bad input, unreadable home, a crash); ``timeout``: no answer
#: within the hook's own deadline; ``busy``: the resident server is still starting;
#: ``warning``: a warning of talos on the hook's way (the hook may have answered): never on
#: stderr, which Gemini CLI reads as the hook's output (tests/test_hook_never_blocks.py).
KINDS = ("error", "timeout", "busy", "warning")

#: Most bytes read of each log file (twice :data:`MAX_BYTES`: a log another program grew).
MAX_READ = 2 * MAX_BYTES

_REGULAR = _S_IFREG  # without importing stat
#: What a file's type bits say it is (as :func:`talos.fsutil.file_kind` words it).
_KINDS = {_S_IFREG: "regular", **FILE_KINDS}

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
_LINE = re.compile(r"^(\S+) (\S+) (\S+) (error|timeout|busy|warning): (.*)$")


def fallback_log() -> str:
    """Where the log goes when the home has no usable state folder (a missing home: talos
    never creates a home by itself): ``$XDG_STATE_HOME/talos/hook.log``, default
    ``~/.local/state/talos/hook.log``."""
    base = os.environ.get("XDG_STATE_HOME", "").strip() or os.path.expanduser("~/.local/state")
    return os.path.join(base, "talos", "hook.log")


def _one_line(text: str, limit: int = 400) -> str:
    text = _UNPRINTABLE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def write(path: str, agent: str, event: str, kind: str, message: str) -> str:
    """Append one line to the log at ``path`` (its folder is created when missing) and
    return the path written, or "" when nothing could be written. Never raises, never blocks.

    Only onto a regular file, opened non-blocking without following a link (design §9.5): a
    FIFO at hook.log hung the hook and its deadline's watchdog, which logs before it exits
    (tests/test_hook_never_blocks.py); a link to /dev/full or elsewhere is not written
    through. Such a log is left as it is and named by ``talos doctor`` (:func:`refusal`)."""
    line = "{} {} {} {}: {}\n".format(
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        _one_line(agent, 40) or "-",
        _one_line(event, 60).replace(" ", "_") or "-",
        kind if kind in KINDS else "error",
        _one_line(message),
    )
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _rotate(path)
        fd = regular_fd(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
        return path
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return ""


def _rotate(path: str) -> None:
    """Move a log past :data:`MAX_BYTES` to ``path + ".1"``: only a regular file, and only
    over a regular file or nothing (a link, a FIFO, a folder there stays, and so does the log)."""
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        if st.st_mode & 0o170000 != _REGULAR or st.st_size <= MAX_BYTES:
            return
        with contextlib.suppress(FileNotFoundError):
            if os.lstat(path + ".1").st_mode & 0o170000 != _REGULAR:
                return
        os.replace(path, path + ".1")


def refusal(path: str) -> str:
    """Why the log file at ``path`` cannot be used, as "is a FIFO (named pipe)", or "" when it
    is a regular file or missing. Judged without following a link (the writer does not)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return ""
    except (OSError, ValueError) as e:
        return f"cannot be looked at ({getattr(e, 'strerror', None) or e})"
    kind = _KINDS.get(mode & 0o170000, "not a file")
    return "" if kind == "regular" else f"is {kind}"


def _read_bounded(path: str) -> bytes:
    """The last :data:`MAX_READ` bytes of the regular file ``path`` (non-blocking, no link
    followed); b"" for anything else."""
    try:
        fd = regular_fd(path, os.O_RDONLY)
    except OSError:
        return b""
    try:
        st = os.fstat(fd)
        start = max(0, st.st_size - MAX_READ)
        return os.pread(fd, MAX_READ, start)
    except OSError:
        return b""
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class Entry:
    """One parsed log line: ``when`` (ISO UTC), ``agent``, ``event``, ``kind``, ``message``."""

    when: str
    agent: str
    event: str
    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.when} {self.agent} {self.event} {self.kind}: {self.message}"


def read_tail(path: str, limit: int = 200) -> list[Entry]:
    """The last ``limit`` well-formed lines of the log at ``path`` (and of ``path + ".1"``
    before them), oldest first; [] when there is no log. Reads at most :data:`MAX_READ` bytes
    of each, only of a regular file, non-blocking (a FIFO hook.log hung ``talos doctor``)."""
    lines: list[str] = []
    for p in (path + ".1", path):
        lines.extend(_read_bounded(p).decode("utf-8", "replace").splitlines())
    out = []
    for line in lines[-limit:]:
        m = _LINE.match(line)
        if m:
            out.append(Entry(*m.groups()))
    return out
