"""What every command shares: options, output streams, the JSON envelope, errors → exit codes
(design §9.1).

Exit codes: 0 ok, 1 usage or input error (the message names the file and line), 3 a refusal
(``get``/verification), 4 ``talos scan`` found something, 5 ``talos doctor`` found something
that needs attention. Machine output is JSON on stdout; messages and warnings go to stderr.

Output rules:

* ``--json`` prints one envelope ``{"ok", "command", "data", "error"}`` on stdout, on every
  command but ``mcp`` (whose stdout is the MCP protocol).
* *Listing* commands (explain, dead, conflicts, history, scan, report, doctor) print a table
  that fits the terminal, and plain text one record a line when stdout is not a terminal (a
  pipe, a file) or with ``--plain`` (:mod:`talos.cli.listing`); JSON only with ``--json``.
  ``recall`` is not a listing: its stdout is the context block an agent pastes.
* Styles and colours only reach a terminal: a stream that is not one gets no ANSI escape,
  whatever ``FORCE_COLOR`` says; ``NO_COLOR`` turns colours off in a terminal (Rich).
* Stored text never drives a terminal (design §6.1 item 7, issue 13): every string printed on
  :data:`out` or :data:`err` — table cells and titles, messages — passes through
  :func:`talos.text.printable` on its way to Rich, so an ESC, a C1 control or a bidi override
  in a memory is shown (``\\x1b``, ``<U+202E>``), never obeyed, also when a sequence is split
  across two cells; commands show each stored text with :func:`talos.render.shown` (one line,
  bounded). JSON is written by :func:`talos.text.json_dumps`.
"""

from __future__ import annotations

import datetime as dt
import inspect
import os
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from talos.errors import TalosError, failure_message
from talos.home import Paths, config_problems, resolve_home, resolve_paths
from talos.text import json_dumps, printable
from talos.view.scopes import request_scopes
from talos.warn import bounded

if TYPE_CHECKING:
    from talos.memory import Memory

__all__ = [
    "AtOpt",
    "HomeOpt",
    "JsonOpt",
    "LangOpt",
    "OverrideOpt",
    "PlainOpt",
    "SafeConsole",
    "ScopeOpt",
    "SessionsDirOpt",
    "Stream",
    "WideOpt",
    "checked_paths",
    "emit",
    "err",
    "handle_errors",
    "help_text",
    "isatty",
    "open_memory",
    "out",
    "parse_date",
    "parse_overrides",
    "scopes_from",
    "wants_json",
]


def isatty(stream: IO[str] | Any) -> bool:
    """Whether ``stream`` is a terminal (``False`` for a closed or fake stream)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class SafeConsole(Console):
    """A Rich console that shows every string it renders through :func:`talos.text.printable`
    (LF kept: a cell or a message of several lines is ours). Rich's own styles are added after,
    so they still reach a terminal; a control character inside the text never does."""

    def render_str(self, text: str, **kwargs: Any) -> Any:
        return super().render_str(printable(text), **kwargs)


class Stream:
    """A Rich console on ``sys.stdout`` (or ``sys.stderr``) *as it is when written to*.

    Rich decides once, when a Console is built, whether it talks to a terminal; these consoles
    live from import on, and the stream may be swapped after (a test runner, a redirect). So
    the Console is rebuilt whenever the stream changes, and a stream that is not a terminal
    always gets ``force_terminal=False``: no ANSI escape in a pipe or a file, even with
    ``FORCE_COLOR`` set. ``NO_COLOR`` is honoured by Rich itself. Markup is off: memory text
    is data and may contain ``[brackets]`` (or ``:emoji:`` codes, also off); styled messages opt
    in with ``markup=True``. Every string goes through :class:`SafeConsole`.
    """

    def __init__(self, stderr: bool = False) -> None:
        self._stderr = stderr
        self._stream: object = None
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        """The Console for the current stream (for Rich APIs that take one: prompts, bars)."""
        stream = sys.stderr if self._stderr else sys.stdout
        if self._console is None or stream is not self._stream:
            self._stream = stream
            self._console = SafeConsole(
                file=stream,
                highlight=False,
                soft_wrap=True,
                markup=False,
                emoji=False,  # a memory's ":warning:" is text, not an emoji code
                force_terminal=None if isatty(stream) else False,
            )
        return self._console

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """:meth:`rich.console.Console.print` on the current stream."""
        self.console.print(*objects, **kwargs)

    def out(self, *objects: Any, **kwargs: Any) -> None:
        """:meth:`rich.console.Console.out` (no wrapping, no markup) on the current stream."""
        self.console.out(*objects, **kwargs)


out = Stream()
err = Stream(stderr=True)


def _home_is_a_folder(value: Path | None) -> Path | None:
    """``--home`` (or ``TALOS_HOME``) checked before the command runs: a usage error, with
    the envelope under ``--json``, for a file, a ``~user`` that does not exist or a name too
    long (both ended in a traceback from here: this check runs outside ``handle_errors``)."""
    if value is None or not str(value):
        return value
    try:
        is_file = resolve_home(value).is_file()
    except TalosError as e:
        raise typer.BadParameter(str(e)) from None
    except (OSError, ValueError) as e:
        raise typer.BadParameter(failure_message(e)) from None
    if is_file:
        raise typer.BadParameter(f"{value} is a file; a home is a folder (see talos init)")
    return value


def _home_arg(text: str) -> Path:
    """``--home`` as typed (or ``TALOS_HOME``): an empty one is refused before it becomes
    ``Path("")``, the working folder (:func:`talos.hooks.state.blank_home`)."""
    from talos.hooks.state import blank_home

    blank = blank_home(text)
    if blank:
        raise typer.BadParameter(blank)
    return Path(text)


HomeOpt = Annotated[
    Path | None,
    typer.Option(
        "--home",
        metavar="PATH",
        envvar="TALOS_HOME",
        parser=_home_arg,
        help="Home folder (default: $TALOS_HOME, else the platform's data dir for talos).",
        show_default=False,
        callback=_home_is_a_folder,
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON object {ok, command, data, error} on stdout.")
]
PlainOpt = Annotated[
    bool,
    typer.Option(
        "--plain",
        help="One record a line, fields separated by a TAB, no header (the default when "
        "stdout is not a terminal), also on a terminal.",
    ),
]
WideOpt = Annotated[
    bool,
    typer.Option(
        "--wide",
        help="Show every field whole: the table may be wider than the terminal.",
    ),
]
LangOpt = Annotated[
    str | None,
    typer.Option(
        "--lang",
        metavar="LANG",
        help="Labels: en or zh (default: lang in talos.toml, else en).",
        show_default=False,
    ),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="MODEL",
        help="Ranking model: evidence or classic (the reference's; default: model in "
        "talos.toml, else evidence).",
        show_default=False,
    ),
]
DenseOpt = Annotated[
    bool | None,
    typer.Option(
        "--dense/--no-dense",
        help="Fuse the dense leg (a local embedding model, pip install 'talos-memory\\[dense]') "
        "with the evidence model's ranking (default: dense in talos.toml, else off).",
        show_default=False,
    ),
]
SessionsDirOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--sessions-dir",
        metavar="DIR",
        help="Read past sessions from this folder (Talos, Claude Code or Codex CLI .jsonl "
        "transcripts; quote 'DIR/**' to include its subfolders; relative to the home); repeat "
        "it to read several, in that order. Default: sessions_dir in talos.toml, else "
        ".talos/sessions.",
        show_default=False,
    ),
]
ScopeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--scope",
        metavar="SCOPE",
        help="Authorized scope (namespace); repeat for several. Default: $TALOS_SCOPE "
        "(comma-separated), else global. An unknown scope sees nothing.",
        show_default=False,
    ),
]
AtOpt = Annotated[
    str | None,
    typer.Option(
        "--at",
        metavar="DATE",
        help="Business date YYYY-MM-DD at which validity windows are judged (default: today).",
        show_default=False,
    ),
]
OverrideOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--override",
        metavar="KEY=VALUE",
        help="KEY=VALUE known only for this request: wins for this call, never written.",
        show_default=False,
    ),
]

F = TypeVar("F", bound=Callable[..., Any])


def help_text(doc: str | None) -> str:
    """A command's docstring as its ``--help`` text.

    Typer's rich help joins the lines of the first paragraph but prints later paragraphs with
    their source line breaks, so a docstring wrapped at 100 columns came out ragged in an
    80-column terminal. Here every prose paragraph becomes one line (the terminal wraps it);
    a paragraph with indented lines (``Examples:`` and its commands) keeps its lines.
    """
    paragraphs = inspect.cleandoc(doc or "").split("\n\n")
    kept = []
    for para in paragraphs:
        lines = para.split("\n")
        if any(line[:1].isspace() for line in lines[1:]):
            kept.append(para)
        else:
            kept.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(kept)


def scopes_from(scope: list[str] | None) -> tuple[str, ...]:
    """``--scope`` values, else ``$TALOS_SCOPE`` split on commas, else ``("global",)``, each
    checked by the one scope rule (:func:`talos.view.scopes.request_scopes`).

    Raises:
        InputError: a value is not a scope name (``--scope "a b"``, ``--scope ""``).
    """
    return request_scopes(scope)


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


def checked_paths(home: Path | None, check_lang: bool = True) -> Paths:
    """The home's paths, refused with a :class:`TalosError` naming the file and line when
    ``talos.toml`` holds a value talos cannot use — the same check for every command (``talos
    index`` crashed on a ``lang`` that every other command refused, issue 12.4)."""
    paths = resolve_paths(home)
    problems = config_problems(paths, check_lang=check_lang)
    if problems:
        raise TalosError(problems[0])
    return paths


def open_memory(home: Path | None, lang: str | None = None, **kw: Any) -> Memory:
    """A :class:`Memory` for a command; bad configuration becomes a :class:`TalosError` that
    names the file and line (``talos.toml:3: lang must be en or zh, not 'fr'``)."""
    if lang is not None and lang not in ("en", "zh"):
        raise TalosError(f"--lang must be en or zh, not {lang!r}")
    from talos.memory import Memory  # imported on use: init, hook and mcp do not open one here

    checked_paths(home, check_lang=lang is None)
    if "sessions_dir" in kw:  # --sessions-dir, repeatable (issue 16.4): not given is []
        kw["sessions_dir"] = kw["sessions_dir"] or None
    try:
        return Memory(home, lang=lang, **kw)
    except ValueError as e:
        raise TalosError(str(e)) from None


def wants_json(as_json: bool, plain: bool) -> bool:
    """Whether a listing command prints JSON: ``--json`` only. A pipe gets plain lines
    (:mod:`talos.cli.listing`), as from ``gh`` or ``kubectl``: JSON by itself when stdout was
    not a terminal surprised a person piping to ``grep``.

    Raises:
        TalosError: both ``--json`` and ``--plain``.
    """
    if as_json and plain:
        raise TalosError("--json and --plain exclude each other; give one")
    return as_json


def emit(command: str, data: Any, ok: bool = True, error: str | None = None) -> None:
    """Print the JSON envelope ``{"ok", "command", "data", "error"}`` on stdout."""
    sys.stdout.write(
        json_dumps({"ok": ok, "command": command, "data": data, "error": error}, indent=2) + "\n"
    )


def _passed_through() -> tuple[type[BaseException], ...]:
    """The exceptions :func:`handle_errors` lets Typer report: an exit code, an aborted
    prompt, a usage error. Typer 0.28 raises its own (``typer.Exit``, ``typer.Abort``); an
    older Typer raises Click's. Click is not imported for this (5 ms of every command): an
    exception of Click's exists only once something has imported Click."""
    click = sys.modules.get("click")
    if click is None:
        return (typer.Exit, typer.Abort)
    return (
        typer.Exit,
        typer.Abort,
        click.exceptions.Exit,
        click.exceptions.Abort,
        click.ClickException,
    )


def _quiet_stdout() -> None:
    """Point stdout at the null device once its reader has gone (a pipe closed early), so the
    interpreter's last flush raises nothing either (the Python documentation's recipe for
    SIGPIPE; exit code 1, no message)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (a test runner's)
        pass


def handle_errors(command: str, listing: bool = False) -> Callable[[F], F]:
    """Turn every failure into a clear message on stderr (or a JSON envelope) and exit code.

    With ``listing``, ``--json`` and ``--plain`` are checked by :func:`wants_json` before the
    command runs. An error is an envelope on stdout with ``--json``, else a message on
    stderr. The message is :func:`talos.errors.failure_message`:
    a talos error's own, or for an OSError, a SQLite error or a held lock a sentence naming
    the file and what to do; nothing else reaches a person as a traceback (issue 12 item 4:
    a corrupt usage.db, a read-only home, a full disk) unless ``TALOS_DEBUG`` is set. Exit
    code: the error's own (:attr:`TalosError.exit_code`), else 1.
    """

    def deco(fn: F) -> F:
        @wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            asked = bool(kwargs.get("as_json"))
            try:
                if listing:
                    kwargs["as_json"] = wants_json(asked, bool(kwargs.get("plain")))
                return fn(*args, **kwargs)
            except _passed_through():
                raise  # an exit code, a prompt aborted, a usage error: typer reports them
            except BrokenPipeError:  # `talos history | head -3`: the reader has had enough
                _quiet_stdout()
                raise typer.Exit(1) from None
            except Exception as e:
                if os.environ.get("TALOS_DEBUG") and not isinstance(e, TalosError):
                    raise
                code = e.exit_code if isinstance(e, TalosError) else 1
                msg = bounded(failure_message(e))  # it may quote stored text
            if asked:
                emit(command, None, ok=False, error=msg)
            else:
                err.print(f"[bold red]talos {command}:[/] {escape(msg)}", markup=True)
            raise typer.Exit(code)

        return wrapper  # type: ignore[return-value]

    return deco
