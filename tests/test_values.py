"""Issue 12.5 and 13.2 (write side): values that would split or hide a record are refused.

A newline in ``--source`` wrote one record as two lines; a trailing newline or tab in
``--key``/``--scope`` was stored URL-encoded, an invisible second key; MCP ``remember``
stored ESC and NUL in memory.md. Every value that goes into a tag, and the fact text, is
checked on every write path (CLI, Python API, MCP) and refused with a message that shows the
bad character; nothing is written. And ``restore`` gives back the exact line.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.errors import InputError
from talos.mcp_server import build_server

MINE = "- i wrote this line myself\n"


def cli(home: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, [*args, "--home", str(home)], env={"COLUMNS": "200"})


def untouched(home: Path) -> None:
    assert (home / "memory.md").read_text() == MINE
    assert not (home / ".talos" / "audit.jsonl").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (  # the failing inputs
            ["--source", "reflect\n"],
            "--source 'reflect\\n': contains a line feed (U+000A)",
        ),
        (["--key", "a\n"], "--key 'a\\n': contains a line feed (U+000A)"),
        (["--key", "team.color\t"], "--key 'team.color\\t': contains a tab (U+0009)"),
        (["--scope", "work\t"], "--scope 'work\\t': contains a tab (U+0009)"),
        (["--scope", "work\n"], "--scope 'work\\n': contains a line feed (U+000A)"),
        # variants of my own: invisible and terminal-acting characters in other values
        (
            ["--key", "team\u200bcolor"],
            "--key 'team\\u200bcolor': contains a zero width space (U+200B)",
        ),
        (["--ref", "msg:1\x1b[2J"], "--ref 'msg:1\\x1b[2J': contains an escape (ESC) (U+001B)"),
        (
            ["--by", "agent\u202egnp.exe"],
            "--by 'agent\\u202egnp.exe': contains a right-to-left override (U+202E)",
        ),
        (["--scope", "a\u2028b"], "--scope 'a\\u2028b': contains a line separator (U+2028)"),
    ],
)
def test_cli_refuses_a_value_with_a_control_character(make_home, args, message) -> None:
    home = make_home(memory=MINE)
    r = cli(home, "remember", "the build uses make", *args)
    assert (r.exit_code, r.stderr) == (1, f"talos remember: {message}\n")
    untouched(home)


def test_json_envelope_carries_the_message(make_home) -> None:
    home = make_home(memory=MINE)
    r = cli(home, "remember", "the build uses make", "--key", "a\n", "--json")
    assert r.exit_code == 1
    assert json.loads(r.stdout) == {
        "ok": False,
        "command": "remember",
        "data": None,
        "error": "--key 'a\\n': contains a line feed (U+000A)",
    }
    untouched(home)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("esc \x1b[2J clears the screen", "contains an escape (ESC) (U+001B)"),
        ("a nul \x00 byte in here", "contains a NUL byte (U+0000)"),
        ("bidi \u202e override inside", "contains a right-to-left override (U+202E)"),
        ("zero\u200dwidth joiner here", "contains a zero width joiner (U+200D)"),
    ],
)
def test_api_refuses_control_and_format_characters_in_the_text(make_home, text, message) -> None:
    """13.2: the fact text too; whitespace (newline, tab, U+2028) still folds to a space, so a
    multi-line paste stays one fact (tests/test_trust.py) — everything else is refused."""
    home = make_home(memory=MINE)
    with pytest.raises(InputError) as e:
        Memory(home).remember(text)
    assert str(e.value) == f"the text {text!r}: {message}"
    untouched(home)


def test_mcp_remember_refuses_esc_nul_and_a_trailing_newline_in_the_key(make_home) -> None:
    """13.2 and 12.5 through the real MCP tool: ESC and NUL never reach memory.md; a key with a
    trailing newline is refused, not stored as an invisible second key."""
    home = make_home(memory=MINE)
    server = build_server(Memory(home))

    async def calls() -> list[str]:
        refused = []
        for args in (
            {"text": "esc \x1b[31m red text here"},
            {"text": "nul \x00 in the middle"},
            {"text": "the color is teal", "key": "color\n"},
        ):
            with pytest.raises(ToolError) as e:
                await server.call_tool("remember", args)
            refused.append(str(e.value))
        return refused

    assert asyncio.run(calls()) == [
        "Error executing tool remember: the text 'esc \\x1b[31m red text here': contains an "
        "escape (ESC) (U+001B)",
        "Error executing tool remember: the text 'nul \\x00 in the middle': contains a NUL "
        "byte (U+0000)",
        "Error executing tool remember: --key 'color\\n': contains a line feed (U+000A)",
    ]
    untouched(home)


def test_a_clean_value_with_spaces_is_still_fine(make_home) -> None:
    """Plain spaces are not control characters: ``--by "my agent"`` is stored (URL-encoded)."""
    home = make_home(memory=MINE)
    res = Memory(home).remember("the build uses make", by="my agent", ref="ticket 42")
    assert res.line.endswith(f"id={res.id} ref=ticket%2042 by=my%20agent -->")


# -- restore gives back the exact line ---------------------------------------------------------


def test_restore_of_history_keeps_the_words_of_the_text(make_home) -> None:
    """12.5, the failing input: a late record whose text says ``status=superseded
    superseded_by=me`` comes back with its text intact; only the tag's own status fields go.
    (Checked: with the old whole-line replace the words were cut out of the text.)"""
    home = make_home(memory="- value = b <!-- user 2026-01-05 key=k1 -->\n")
    mem = Memory(home)
    late = mem.remember(
        "value = c status=superseded superseded_by=me", key="k1", observed=_day("2026-01-02")
    )
    assert late.status == "history"
    line = mem.restore(late.id)
    assert line == (
        f"- value = c status=superseded superseded_by=me <!-- user 2026-01-02 id={late.id} "
        "key=k1 -->"
    )
    assert (home / "memory.md").read_text().splitlines() == [line]


def test_restore_of_history_keeps_other_tag_fields(make_home) -> None:
    """Variant: text with ``status=superseded`` alone, a ``ref`` and a ``by`` — all kept."""
    home = make_home(memory="- mode = b <!-- tool 2026-01-05 key=k2 ref=run:9 -->\n")
    mem = Memory(home)
    late = mem.remember(
        "mode = a, once status=superseded",
        key="k2",
        source="tool",
        ref="run:8",
        by="ci",
        observed=_day("2026-01-02"),
    )
    assert mem.restore(late.id) == (
        f"- mode = a, once status=superseded <!-- tool 2026-01-02 id={late.id} key=k2 "
        "ref=run:8 by=ci -->"
    )


def _day(s: str):  # type: ignore[no-untyped-def]
    import datetime as dt

    return dt.date.fromisoformat(s)
