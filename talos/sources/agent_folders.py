"""The agents' own transcript folders: where each agent keeps its sessions, which of them
exist on this machine, and whether a home reads them (design §3.3: found and offered when talos
is set up for that agent, never read silently).

Where each agent writes (its documentation, ``talos/hooks/AGENT_HOOKS.md``):

- **Claude Code**: ``~/.claude/projects/<project>/<session>.jsonl``; with
  ``$CLAUDE_CONFIG_DIR`` set, ``$CLAUDE_CONFIG_DIR/projects``.
- **Codex CLI**: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``; with ``$CODEX_HOME`` set,
  ``$CODEX_HOME/sessions``.
- **Gemini CLI**: ``~/.gemini/tmp/<project hash>/chats/session-*.json``: one JSON document per
  session, not JSON lines, and no working folder in it (only a hash of it), so talos has no
  reader for them yet; the folder is found and named (:attr:`Found.readable` is false), never
  added.

A folder is added as ``DIR/**`` (one subfolder per project or per day), spelled from ``~`` when
it is under the person's home folder, so a talos.toml synced to another machine names the same
folder there. Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AGENTS", "Found", "agent_folders", "found_folders", "is_read", "unread"]

#: The agents, as ``talos hook install`` names them, and how a finding names each.
AGENTS = {"claude-code": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI"}

#: Per agent: (environment variable of its own folder, the folder's default, the transcripts'
#: subfolder, whether talos reads its files).
_WHERE: dict[str, tuple[str, str, str, bool]] = {
    "claude-code": ("CLAUDE_CONFIG_DIR", "~/.claude", "projects", True),
    "codex": ("CODEX_HOME", "~/.codex", "sessions", True),
    "gemini": ("", "~/.gemini", "tmp", False),
}


@dataclass(frozen=True, slots=True)
class Found:
    """One agent's transcript folder that exists: ``agent`` (``claude-code``, ``codex``,
    ``gemini``), ``label`` (``Claude Code``), ``folder`` (absolute), ``entry`` (what
    ``sessions_dir`` gets: ``~/.claude/projects/**``), ``readable`` (talos has a reader for
    its files)."""

    agent: str
    label: str
    folder: Path
    entry: str
    readable: bool


def _spelled(folder: Path, env: Mapping[str, str]) -> str:
    """``folder`` as ``sessions_dir`` names it: from ``~`` when under the person's home."""
    user = env.get("HOME") or os.path.expanduser("~")
    try:
        rel = folder.relative_to(user)
    except ValueError:
        return folder.as_posix()
    return "~/" + rel.as_posix() if rel.parts else "~"


def agent_folders(agent: str, env: Mapping[str, str] | None = None) -> list[Found]:
    """The transcript folders of ``agent`` that exist (its own variable's first, then the
    default's; one folder once), as :class:`Found`.

    Raises:
        KeyError: an agent talos does not know.
    """
    env = os.environ if env is None else env
    var, default, sub, readable = _WHERE[agent]
    user = env.get("HOME") or os.path.expanduser("~")
    bases = [env[var]] if var and env.get(var) else []
    bases.append(default)
    out: list[Found] = []
    seen: set[str] = set()
    for base in bases:
        if base.startswith("~"):
            base = user + base[1:]
        folder = Path(base, sub).absolute()
        real = os.path.realpath(folder)
        if real in seen or not folder.is_dir():
            continue
        seen.add(real)
        entry = _spelled(folder, env) + "/**"
        out.append(Found(agent, AGENTS[agent], folder, entry, readable))
    return out


def found_folders(
    agents: Sequence[str] = tuple(AGENTS), env: Mapping[str, str] | None = None
) -> list[Found]:
    """:func:`agent_folders` of each of ``agents``, in that order."""
    return [f for a in agents for f in agent_folders(a, env)]


def is_read(folder: Path, sessions_dirs: Sequence[Path]) -> bool:
    """Whether a home whose sessions folders are ``sessions_dirs`` reads ``folder``'s
    transcripts: the folder itself read recursively (``DIR/**``), or a folder above it read
    recursively; a folder inside it listed counts too (the person chose part of it). The
    folder itself listed without ``/**`` does not: its transcripts are in its subfolders."""
    from talos.sources.sessions import sessions_root  # standard library at import

    real = os.path.realpath(folder)
    for entry in sessions_dirs:
        root, recursive = sessions_root(entry)
        there = os.path.realpath(root)
        try:
            inside = os.path.commonpath([real, there])
        except ValueError:
            continue
        if (inside == there and recursive) or (inside == real and there != real):
            return True
    return False


def unread(sessions_dirs: Sequence[Path], env: Mapping[str, str] | None = None) -> list[Found]:
    """The agents' transcript folders that exist and that a home reading ``sessions_dirs``
    does not read (:func:`is_read`), for ``talos doctor``."""
    return [f for f in found_folders(env=env) if not is_read(f.folder, sessions_dirs)]
