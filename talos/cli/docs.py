"""The command reference, ``docs/cli.md``, generated from the command line's own help.

    python3 -m talos.cli.docs            # rewrite the marked section of docs/cli.md
    python3 -m talos.cli.docs --check    # exit 1 when docs/cli.md is not current

The section between :data:`START` and :data:`END` holds, per command, the text ``--help``
shows: usage, the help paragraphs, arguments and options with their help, defaults and
environment variables. It is laid out here as plain text at :data:`WIDTH` columns rather than
captured from Typer's Rich panels, so the reference changes when a command or its help
changes, not when Typer restyles its boxes. The text around the markers (common options, exit
codes) is written by hand. ``tests/test_cli_docs.py`` fails when the section is stale.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import typer

__all__ = ["CLI_DOC", "END", "START", "WIDTH", "command_help", "reference", "update"]

START = "<!-- commands:start -->"
END = "<!-- commands:end -->"
WIDTH = 80
#: The command reference of a source checkout (the generator is a developer tool).
CLI_DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
_COL = 26  # widest first column of an options list before its help moves to the next line


def _paragraphs(text: str) -> list[str]:
    """Help paragraphs at :data:`WIDTH`, indented by 2; indented-line paragraphs verbatim."""
    out = []
    for para in text.split("\n\n"):
        lines = para.split("\n")
        if any(line[:1].isspace() for line in lines[1:]):
            out.append("\n".join(f"  {line}".rstrip() for line in lines))
        else:
            out.append(
                textwrap.fill(
                    " ".join(lines),
                    WIDTH,
                    initial_indent="  ",
                    subsequent_indent="  ",
                    break_on_hyphens=False,
                    break_long_words=False,
                )
            )
    return out


def _dl(rows: list[tuple[str, str]]) -> list[str]:
    """A two-column definition list, the second column wrapped at :data:`WIDTH`."""
    col = min(max((len(a) for a, _ in rows), default=0), _COL)
    indent = " " * (2 + col + 2)
    out: list[str] = []
    for term, text in rows:
        wrapped = textwrap.wrap(
            text, WIDTH - len(indent), break_on_hyphens=False, break_long_words=False
        ) or [""]
        if len(term) > col:
            out.append(f"  {term}")
            out.extend(indent + w for w in wrapped)
        else:
            out.append(f"  {term.ljust(col)}  {wrapped[0]}".rstrip())
            out.extend(indent + w for w in wrapped[1:])
    return out


def _as_shown(text: str | None) -> str:
    """A help text as ``--help`` shows it: Typer reads help as Rich markup (``rich`` mode), so
    ``\\[dense]`` is shown ``[dense]`` and an unescaped ``[dense]`` is not shown at all; the
    reference shows what a person sees."""
    from rich.text import Text

    return Text.from_markup(text or "").plain


def _is_flag(param: Any) -> bool:
    return bool(getattr(param, "is_flag", False))


def _metavar(param: Any) -> str:
    if param.param_type_name == "argument":
        return str(param.metavar or param.name.upper())
    if _is_flag(param):
        return ""
    kind = getattr(getattr(param, "type", None), "name", "value")  # options without metavar
    return str(param.metavar or kind.upper())


def _option_row(param: Any) -> tuple[str, str]:
    names = sorted([*param.opts, *param.secondary_opts], key=lambda o: (o.startswith("--"), o))
    term = ", ".join(names)
    mv = _metavar(param)
    if mv:
        term += f" {mv}"
    extra = []
    envvar = getattr(param, "envvar", None)
    if envvar and getattr(param, "show_envvar", False):
        extra.append(f"env var: {envvar}")
    default = param.default
    if (
        not _is_flag(param)
        and default not in (None, (), [])
        and getattr(param, "show_default", True) is not False
        and not callable(default)
    ):
        extra.append(f"default: {default}")
    if param.required:
        extra.append("required")
    text = _as_shown(param.help).strip()
    if extra:
        text += f" [{'; '.join(extra)}]"
    return term, text


def _usage(path: str, command: Any, ctx: Any) -> str:
    pieces = [path]
    params = command.get_params(ctx)
    if any(p.param_type_name == "option" for p in params):
        pieces.append("[OPTIONS]")
    for p in params:
        if p.param_type_name == "argument":
            mv = _metavar(p) + ("..." if p.nargs == -1 else "")
            pieces.append(mv if p.required else f"[{mv}]")
    if isinstance(command, typer.core.TyperGroup):
        pieces.append("COMMAND [ARGS]...")
    return "Usage: " + " ".join(pieces)


def command_help(command: Any, ctx: Any, path: str) -> str:
    """One command's help as plain text: usage, help paragraphs, arguments, options and (for
    the group) the commands with the first paragraph of their help."""
    parts = [_usage(path, command, ctx)]
    parts.extend(_paragraphs(_as_shown(command.help)))
    params = command.get_params(ctx)
    args = [
        (_metavar(p), f"{_as_shown(p.help).strip()}{' [required]' if p.required else ''}")
        for p in params
        if p.param_type_name == "argument"
    ]
    opts = [_option_row(p) for p in params if p.param_type_name == "option"]
    if args:
        parts.append("\n".join(["Arguments:", *_dl(args)]))
    if opts:
        parts.append("\n".join(["Options:", *_dl(opts)]))
    if isinstance(command, typer.core.TyperGroup):
        rows = []
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            first = (
                _as_shown(getattr(sub, "help", None)).split("\n\n")[0].replace("\n", " ").strip()
            )
            rows.append((name, first))
        parts.append("\n".join(["Commands:", *_dl(rows)]))
    return "\n\n".join(parts) + "\n"


def reference() -> str:
    """The whole marked section, markers included."""
    from talos.cli import app

    group = typer.main.get_command(app)
    root = typer.Context(group, info_name="talos")
    blocks = [
        START,
        "<!-- generated by `python3 -m talos.cli.docs` from each command's --help; "
        "edit the docstrings in talos/cli/, not this section -->",
        "",
        f"### `talos`\n\n```text\n{command_help(group, root, 'talos')}```",
    ]
    assert isinstance(group, typer.core.TyperGroup)
    for name in group.list_commands(root):
        sub = group.get_command(root, name)
        assert sub is not None
        ctx = typer.Context(sub, info_name=name, parent=root)
        text = command_help(sub, ctx, f"talos {name}")
        blocks.append(f"\n### `talos {name}`\n\n```text\n{text}```")
    blocks.append(END)
    return "\n".join(blocks)


def update(doc: Path = CLI_DOC, check: bool = False) -> bool:
    """Put the current :func:`reference` between the markers of ``doc``.

    Args:
        doc: the markdown file holding one :data:`START` line and one :data:`END` line after it
            (default :data:`CLI_DOC`). check: only tell whether it would change.

    Returns:
        Whether the file was (``check``: would be) changed.

    Raises:
        ValueError: the markers are missing or out of order.
    """
    text = doc.read_text(encoding="utf-8")
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{doc}: needs a {START} line followed by a {END} line")
    new = text[:start] + reference() + text[end + len(END) :]
    if new == text:
        return False
    if not check:
        doc.write_text(new, encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    """``python3 -m talos.cli.docs [--check] [FILE]``: 0 current/updated, 1 stale (--check).

    ``FILE`` defaults to :data:`CLI_DOC` (``docs/cli.md``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    doc = Path(paths[0]) if paths else CLI_DOC
    changed = update(doc, check=check)
    if check and changed:
        print(f"{doc}: command reference is stale; run python3 -m talos.cli.docs")
        return 1
    print(f"{doc}: {'updated' if changed else 'current'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
