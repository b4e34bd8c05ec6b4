"""``talos mcp``: serve the memory to MCP clients over stdio (design §9.4).

The server itself lives in :mod:`talos.mcp.server` (not ``talos/mcp.py``, which could shadow
the SDK's ``mcp`` package); it is imported only when the command runs, so other commands do
not pay for loading the SDK. The SDK (``mcp``, ``pydantic``) is the ``mcp`` extra
(``pip install 'talos-memory[mcp]'``): without it every other command, the hooks and the
Python API work, and ``talos mcp`` says what to install (:func:`server`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from talos.cli.common import (
    HomeOpt,
    LangOpt,
    ScopeOpt,
    SessionsDirOpt,
    checked_paths,
    err,
    handle_errors,
    open_memory,
    scopes_from,
)
from talos.errors import TalosError

__all__ = ["INSTALL", "mcp", "server"]

#: What installs the MCP SDK beside talos.
INSTALL = "pip install 'talos-memory[mcp]'"


def server() -> Callable[..., Any]:
    """:func:`talos.mcp.server.serve`, imported now. Raises TalosError (one line: what is
    missing and :data:`INSTALL`) when the MCP SDK or a package it needs is not installed; an
    ImportError of talos's own modules is raised as it is."""
    try:
        from talos.mcp.server import serve
    except ImportError as e:
        missing = (e.name or "").partition(".")[0]
        if not missing or missing == "talos":
            raise
        raise TalosError(f"the MCP SDK is not installed ({e}): {INSTALL}") from None
    return serve


@handle_errors("mcp")
def mcp(
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    lang: LangOpt = None,
    sessions_dir: SessionsDirOpt = None,
    allow_tool_writes: Annotated[
        bool,
        typer.Option(
            "--allow-tool-writes",
            help="Let the model store records as source tool (relayed from a tool, with a "
            "ref). Off: remember stores reflect records only.",
        ),
    ] = False,
) -> None:
    """Serve recall, explain, remember, get and dead as MCP tools over stdio.

    For agents that speak the Model Context Protocol (Claude Code, Codex CLI, editors). The
    scopes the tools may see and write are fixed here, at start (--scope / $TALOS_SCOPE);
    the model cannot choose them. With remember the model stores what it inferred (source
    reflect), or, if you start the server with --allow-tool-writes, what a tool said (source
    tool); never with your authority (user). Each record it writes is marked by=mcp and never
    supersedes or shadows a record you wrote, whatever source or ref the model claims. dead
    only lists; forgetting stays talos forget, reviewed by you.

    No --json: stdout carries the MCP protocol itself (messages go to stderr).

    Examples:
      talos mcp --home ~/notes/talos
      claude mcp add talos -- talos mcp --scope work
      talos mcp --allow-tool-writes
    """
    serve = server()  # before the home is opened: without the SDK nothing is touched
    scopes = scopes_from(scope)
    if lang is not None and lang not in ("en", "zh"):
        raise TalosError(f"--lang must be en or zh, not {lang!r}")
    paths = checked_paths(home, check_lang=lang is None)  # a broken talos.toml stops it here
    mem = OnFirstUse(lambda: open_memory(home, lang, sessions_dir=sessions_dir, scopes=scopes))
    err.print(
        f"talos mcp: serving {paths.home} (scopes: {', '.join(scopes)}) on stdio", markup=False
    )
    serve(mem, allow_tool_writes=allow_tool_writes)


class OnFirstUse:
    """A :class:`talos.Memory` opened when a tool first uses it, on the server's worker
    thread (whose Memory it then is). ``talos mcp`` answered ``initialize`` after 1.3 s, a
    third of it spent importing and opening the Memory (numpy, the index) that the
    handshake does not need; the home's settings are checked at start all the same
    (docs/benchmarks.md "talos mcp")."""

    def __init__(self, opener: Callable[[], Any]) -> None:
        self._opener = opener
        self._memory: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._memory is None:
            self._memory = self._opener()
        return getattr(self._memory, name)
