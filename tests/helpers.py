"""Small helpers shared by test modules (pytest puts this folder on ``sys.path``)."""

from __future__ import annotations

import json


def session_line(text: str) -> str:
    """One session file's content: a single user request ``text`` (SPEC §3.3)."""
    return json.dumps({"role": "user", "content": text}) + "\n"
