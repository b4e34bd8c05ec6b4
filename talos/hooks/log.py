"""The hook's log: one line per hook run that gave no context because something failed.

A hook never breaks the agent's turn (SPEC §9.5): whatever goes wrong, it exits 0 with no
output and says why here, in ``<state>/hook.log``, which ``talos doctor`` shows. Lines are

    2026-05-04T09:12:33Z claude-code UserPromptSubmit timeout: no answer within 2.5 s

(time in UTC, agent, event, a kind — ``error``, ``timeout``, ``busy`` — and a message on one
line, control characters removed). The prompt is never written. The log is bounded: past
:data:`MAX_BYTES` it moves to ``hook.log.1`` (replacing the one before) and starts afresh.
Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import dataclass

__all__ = ["KINDS", "MAX_BYTES", "Entry", "fallback_log", "read_tail", "write"]

#: Size at which the log is rotated (two files at most: ~128 KiB).
MAX_BYTES = 64 * 1024
#: ``error``: the hook failed (bad input, unreadable home, a crash); ``timeout``: no answer
#: within the hook's own deadline; ``busy``: the resident server is still starting.
KINDS = ("error", "timeout", "busy")

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
_LINE = re.compile(r"^(\S+) (\S+) (\S+) (error|timeout|busy): (.*)$")


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
    return the path written, or "" when nothing could be written. Never raises."""
    line = "{} {} {} {}: {}\n".format(
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        _one_line(agent, 40) or "-",
        _one_line(event, 60).replace(" ", "_") or "-",
        kind if kind in KINDS else "error",
        _one_line(message),
    )
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with contextlib.suppress(OSError):
            if os.path.getsize(path) > MAX_BYTES:
                os.replace(path, path + ".1")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
        return path
    except OSError:
        return ""


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
    before them), oldest first; [] when there is no log."""
    lines: list[str] = []
    for p in (path + ".1", path):
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                lines.extend(f.read().splitlines())
        except OSError:
            continue
    out = []
    for line in lines[-limit:]:
        m = _LINE.match(line)
        if m:
            out.append(Entry(*m.groups()))
    return out
