"""Episodes: the opening request of each past session (SPEC §3.3)."""

from __future__ import annotations

import json
from pathlib import Path

from talos.model import Node
from talos.text import matching_keywords

__all__ = ["EPISODE_CHARS", "first_user_request", "load_episodes"]

#: An episode's text is the first 80 characters of the session's first user request.
EPISODE_CHARS = 80


def first_user_request(path: Path) -> str:
    """The first ``{"role": "user", "content": "<string>"}`` message of a ``.jsonl`` session.

    Lines that are JSON but not objects, or whose ``content`` is not a string (a list of parts),
    are skipped. A line that is not JSON at all ends the read: the file is treated as damaged
    from there on. That is the reference's behaviour, and the golden fixture
    ``home-basic/.talos/sessions/2026-07-07T09.jsonl`` pins it (its request follows a garbled
    line and must not become an episode); SPEC §3.3's "skipped" is narrowed accordingly.

    Returns:
        The request text, or "" when there is none (or the file cannot be read).
    """
    try:
        with path.open("rb") as f:
            for blob in f:
                try:
                    msg = json.loads(blob.decode("utf-8", errors="replace"))
                except ValueError:
                    return ""
                if (
                    isinstance(msg, dict)
                    and msg.get("role") == "user"
                    and isinstance(msg.get("content"), str)
                ):
                    return msg["content"]
    except OSError:
        return ""
    return ""


def session_files(sessions_dir: Path) -> list[Path]:
    """The ``*.jsonl`` files of ``sessions_dir`` sorted by name (time order); [] when missing."""
    try:
        return sorted(
            (p for p in sessions_dir.glob("*.jsonl") if p.is_file()), key=lambda p: p.name
        )
    except OSError:
        return []


def load_episodes(sessions_dir: Path, start: int = 0) -> list[Node]:
    """Read each session file's opening request into an episode node (SPEC §3.3).

    Returns:
        Episode nodes in file-name order; text = first 80 characters of the request.
    """
    nodes: list[Node] = []
    for path in session_files(sessions_dir):
        request = first_user_request(path)
        if not request:
            continue
        text = request[:EPISODE_CHARS]
        kw = matching_keywords(text)
        if not kw:
            continue
        nodes.append(
            Node(kind="episode", text=text, keywords=kw, order=start + len(nodes), path=str(path))
        )
    return nodes
