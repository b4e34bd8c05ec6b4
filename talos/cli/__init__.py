"""The ``talos`` command line: a thin Typer layer over :class:`talos.Memory` (design §9.1).

Commands are registered here in the order ``talos --help`` lists them; the help text of each
is its function's docstring, reflowed by :func:`talos.cli.common.help_text`. Output rules and
exit codes are in :mod:`talos.cli.common`; the README's command reference is generated from
this app by :mod:`talos.cli.docs`.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from talos.cli.common import emit, help_text, isatty

__all__ = ["COMMANDS", "app", "app_for", "main", "version"]

#: Click's UsageError (bad or missing option or argument). Typer >= 0.2x vendors Click, older
#: Typer uses click itself; either way BadParameter derives from it.
UsageError: type[Any] = typer.BadParameter.__bases__[0]


class TalosGroup(TyperGroup):
    """The ``talos`` group: usage errors exit 1 (design §9.1; Click uses 2), and with ``--json``
    they are a JSON envelope on stdout too, so a script that asked for JSON always gets it."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta["talos.argv"] = list(args)
        if args and set(args) == {"--version", "--json"}:  # a script asked for JSON: it gets it
            emit("version", {"version": version()})
            ctx.exit(0)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except UsageError as e:
            argv: list[str] = ctx.meta.get("talos.argv", [])
            if "--json" not in argv[: argv.index("--") if "--" in argv else None]:
                raise
            sub = getattr(e.ctx, "info_name", None)
            command = (
                sub
                if sub and e.ctx is not ctx
                else next((a for a in argv if not a.startswith("-")), "")
            )
            emit(command, None, ok=False, error=e.format_message())
            raise typer.Exit(1) from None

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)
        except SystemExit as e:
            if e.code == 2:
                raise SystemExit(1) from None
            raise


#: Settings shared by :data:`app` and the one-command apps of :func:`app_for`.
_SETTINGS: dict[str, Any] = {
    "cls": TalosGroup,
    "name": "talos",
    "no_args_is_help": True,
    "add_completion": True,
    "rich_markup_mode": "rich",
    "context_settings": {"help_option_names": ["-h", "--help"]},
}

_HELP = help_text(
    """Personal long-term memory for AI agents: recall what matters for a task from
    memory.md, skills/ and past sessions, by spreading activation over a keyword graph.

    Every command has --help with examples; all but mcp take --json (one envelope {ok,
    command, data, error} on stdout). Listings print a table that fits the terminal
    (--wide: whole fields) and, piped or with --plain, one record a line with TABs between
    fields; JSON only with --json. Exit codes: 0 ok, 1 usage or input error,
    3 get refused, 4 scan flagged something, 5 doctor found something that needs
    attention, 6 sync stopped before pushing (a person has to act). Shell completion:
    talos --install-completion.

    Examples:
      talos init --example
      talos recall "merge two csv files on the user id column"
      talos doctor
    """
)

#: Every command in ``talos --help`` order: (name, module of talos.cli, function). A module is
#: imported when its command runs (``talos report``'s module alone took 5 ms to import).
_TABLE: list[tuple[str, str, str]] = [
    ("init", "init", "init"),
    ("index", "index", "index"),
    ("recall", "recall", "recall"),
    ("explain", "recall", "explain"),
    ("dead", "forget", "dead"),
    ("forget", "forget", "forget"),
    ("scan", "scan", "scan"),
    ("doctor", "doctor", "doctor"),
    ("mcp", "mcp", "mcp"),
    ("hook", "hook", "hook"),
    ("report", "report", "report"),
    ("sync", "sync", "sync"),
    ("remember", "trust", "remember"),
    ("get", "trust", "get"),
    ("conflicts", "trust", "conflicts"),
    ("resolve", "trust", "resolve"),
    ("history", "trust", "history"),
    ("restore", "trust", "restore"),
    ("revoke", "trust", "revoke"),
]


def version() -> str:
    """The installed version of talos (package metadata of ``talos-memory``; ``__version__``
    in a source tree that is not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("talos-memory")
    except PackageNotFoundError:
        from talos import __version__

        return __version__


def _print_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"talos {version()}\n")
        raise typer.Exit()


def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print talos's version and exit (with --json: as the JSON envelope).",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    """The whole app's own options (``talos --version``, issue 12.7)."""


def _function(name: str) -> Callable[..., Any] | None:
    """The function of command ``name`` (its module imported now), or ``None``."""
    for command, module, attr in _TABLE:
        if command == name:
            fn: Callable[..., Any] = getattr(importlib.import_module(f"talos.cli.{module}"), attr)
            return fn
    return None


def _lazy(name: str) -> Any:
    """``COMMANDS`` or ``app``, built once (see :func:`__getattr__`)."""
    return globals()[name] if name in globals() else __getattr__(name)


def __getattr__(name: str) -> Any:
    """``COMMANDS`` (every command as ``(name, function)``, in ``talos --help`` order) and
    ``app`` (the whole Typer app), built on first use: a ``talos CMD`` process builds neither
    (:func:`app_for`)."""
    if name == "COMMANDS":
        value: Any = [(command, _function(command)) for command, _m, _a in _TABLE]
    elif name == "app":
        value = typer.Typer(help=_HELP, **_SETTINGS)
        value.callback()(_root)
        for command, fn in _lazy("COMMANDS"):
            value.command(command, help=help_text(fn.__doc__))(fn)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def _group() -> None:
    """Keeps a one-command app a group (Typer makes a lone command the root otherwise)."""


def app_for(args: list[str]) -> typer.Typer:
    """The app that runs ``talos ARGS``: when the first argument names a command, an app of
    that command alone (same settings, same group class), else :data:`app`.

    Typer turns every command's signature into Click parameters before it parses anything:
    for 17 commands that is ~25 ms of every call, a tenth of a warm ``talos recall`` (design
    §11 asks for interactive recall). The command runs, helps and fails the same either way
    (``tests/test_cli_polish.py`` compares them); ``talos``, ``talos --help``, completion
    and unknown commands get the whole app."""
    fn = _function(args[0]) if args else None
    if fn is None:
        full: typer.Typer = _lazy("app")
        return full
    one = typer.Typer(**_SETTINGS)
    one.callback()(_group)
    one.command(args[0], help=help_text(fn.__doc__))(fn)
    return one


#: Environment variables with which Typer draws its help and usage errors as for a terminal.
_FORCING = ("FORCE_COLOR", "PY_COLORS", "GITHUB_ACTIONS", "TTY_COMPATIBLE")


def main() -> None:
    """Console entry point (also ``python -m talos``, which would otherwise call itself
    ``python -m talos`` in usage lines and completion scripts).

    No ANSI escape off a terminal (issue 6): talos's own output sees to that per stream
    (:class:`talos.cli.common.Stream`); Typer's help and usage errors obey ``FORCE_COLOR`` and
    friends, so with one of them set and a stream that is not a terminal they are told not
    to style (``_TYPER_FORCE_DISABLE_TERMINAL``, read when Typer first draws).
    """
    if any(os.environ.get(v) for v in _FORCING) and not (isatty(sys.stdout) and isatty(sys.stderr)):
        os.environ["_TYPER_FORCE_DISABLE_TERMINAL"] = "1"
    app_for(sys.argv[1:])(prog_name="talos")
