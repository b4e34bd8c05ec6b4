"""Warnings for people: one line on stderr, never an exception (SPEC §3.1, §6.1)."""

from __future__ import annotations

import contextlib
import sys

__all__ = ["warn"]


def warn(message: str) -> None:
    """Print ``talos: warning: MESSAGE`` on stderr. Never raises (a closed stderr is ignored)."""
    with contextlib.suppress(OSError, ValueError):
        print(f"talos: warning: {message}", file=sys.stderr)
