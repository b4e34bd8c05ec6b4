"""What every command shares: options, the JSON envelope, errors → exit codes (SPEC §9.1).

Exit codes: 0 ok, 1 usage or input error (the message names the file and line), 3 a refusal
(``get``/verification). Machine output is JSON on stdout; messages and warnings go to stderr.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, TypeVar

import filelock
import typer
from rich.console import Console
from rich.markup import escape

from talos.errors import TalosError
from talos.memory import Memory

__all__ = [
    "AtOpt",
    "HomeOpt",
    "JsonOpt",
    "LangOpt",
    "OverrideOpt",
    "ScopeOpt",
    "emit",
    "err",
    "handle_errors",
    "open_memory",
    "out",
    "parse_date",
    "parse_overrides",
    "scopes_from",
]

# Markup off: memory text is data and may contain [brackets]; styled messages opt in.
out = Console(highlight=False, soft_wrap=True, markup=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)

HomeOpt = Annotated[
    Path | None,
    typer.Option(
        "--home",
        envvar="TALOS_HOME",
        help="Home folder (default: $TALOS_HOME, else the platform's data dir for talos).",
        show_default=False,
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON object {ok, command, data, error} on stdout.")
]
LangOpt = Annotated[
    str | None,
    typer.Option(
        "--lang",
        help="Labels: en or zh (default: lang in talos.toml, else en).",
        show_default=False,
    ),
]

ScopeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--scope",
        help="Authorized scope (namespace); repeat for several. Default: $TALOS_SCOPE "
        "(comma-separated), else global. An unknown scope sees nothing.",
        show_default=False,
    ),
]
AtOpt = Annotated[
    str | None,
    typer.Option(
        "--at",
        help="Business date YYYY-MM-DD at which validity windows are judged (default: today).",
        show_default=False,
    ),
]
OverrideOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--override",
        help="KEY=VALUE known only for this request: wins for this call, never written.",
        show_default=False,
    ),
]

F = TypeVar("F", bound=Callable[..., Any])


def scopes_from(scope: list[str] | None) -> tuple[str, ...]:
    """``--scope`` values, else ``$TALOS_SCOPE`` split on commas, else ``("global",)``."""
    if scope:
        return tuple(s.strip() for s in scope if s.strip())
    env = os.environ.get("TALOS_SCOPE", "")
    parts = tuple(s.strip() for s in env.split(",") if s.strip())
    return parts or ("global",)


def parse_date(value: str | None, option: str = "--at") -> dt.date | None:
    """``YYYY-MM-DD`` (or an ISO timestamp) → date; ``None`` stays ``None``.

    Raises:
        TalosError: the value is not a date.
    """
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        pass
    try:
        return dt.datetime.fromisoformat(value).date()
    except ValueError:
        raise TalosError(f"{option} expects a date YYYY-MM-DD, not {value!r}") from None


def parse_overrides(values: list[str] | None) -> dict[str, str]:
    """``["KEY=VALUE", ...]`` → dict.

    Raises:
        TalosError: an item has no ``=`` or an empty key.
    """
    out: dict[str, str] = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise TalosError(f"--override expects KEY=VALUE, not {item!r}")
        out[key.strip()] = value.strip()
    return out


def open_memory(home: Path | None, lang: str | None = None, **kw: Any) -> Memory:
    """A :class:`Memory` for a command; bad configuration becomes a :class:`TalosError`."""
    if lang is not None and lang not in ("en", "zh"):
        raise TalosError(f"--lang must be en or zh, not {lang!r}")
    try:
        return Memory(home, lang=lang, **kw)
    except ValueError as e:
        raise TalosError(str(e)) from None


def emit(command: str, data: Any, ok: bool = True, error: str | None = None) -> None:
    """Print the JSON envelope ``{"ok", "command", "data", "error"}`` on stdout."""
    sys.stdout.write(
        json.dumps(
            {"ok": ok, "command": command, "data": data, "error": error},
            ensure_ascii=False,
            indent=2,
        )
        + "\n"
    )


def handle_errors(command: str) -> Callable[[F], F]:
    """Turn talos errors into a clear message on stderr (or a JSON envelope) and exit code."""

    def deco(fn: F) -> F:
        @wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except TalosError as e:
                code, msg = e.exit_code, str(e)
            except filelock.Timeout as e:
                code, msg = 1, f"another talos process holds the lock {e.lock_file}; try again"
            except OSError as e:
                where = f"{e.filename}: " if e.filename else ""
                code, msg = 1, f"{where}{e.strerror or e}"
            if kwargs.get("as_json"):
                emit(command, None, ok=False, error=msg)
            else:
                err.print(f"[bold red]talos {command}:[/] {escape(msg)}", markup=True)
            raise typer.Exit(code)

        return wrapper  # type: ignore[return-value]

    return deco
