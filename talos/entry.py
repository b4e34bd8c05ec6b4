"""The ``talos`` console script: ``talos hook AGENT`` answers before anything heavy loads.

An agent runs ``talos hook claude-code`` (``codex``, ``gemini``) on every prompt. The Typer
app imports typer, rich and numpy (~0.3 s) before it parses a word, so this entry point
recognises that one command line first and hands it to :mod:`talos.hooks.client`, which
imports only the standard library on its way to the resident server (issue 16.3). Everything
else — ``talos hook --help`` and ``talos hook install`` included — goes to
:func:`talos.cli.main`.
"""

from __future__ import annotations

import sys

__all__ = ["main"]

_FAST = ("claude-code", "codex", "gemini")


def main() -> None:
    """Console entry point (also ``python -m talos``)."""
    args = sys.argv[1:]
    if (
        len(args) >= 2
        and args[0] == "hook"
        and args[1] in _FAST
        and not {"-h", "--help"}.intersection(args)
    ):
        from talos.hooks.client import main as hook

        raise SystemExit(hook(args[1:]))
    from talos.cli import main as cli

    cli()
