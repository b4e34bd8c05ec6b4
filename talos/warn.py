"""Warnings for people: one line on stderr, never an exception (SPEC §3.1, §6.1)."""

from __future__ import annotations

import contextlib
import sys

from talos.text import one_line

__all__ = ["warn"]


def warn(message: str) -> None:
    """Print ``talos: warning: MESSAGE`` on stderr, on one line. Never raises (a closed stderr is
    ignored). A warning often quotes stored text (a file name, a line): it is shown through
    :func:`talos.text.one_line`, so it cannot move the terminal's cursor (SPEC §6.1 item 7)."""
    with contextlib.suppress(OSError, ValueError):
        print(f"talos: warning: {one_line(message)}", file=sys.stderr)
