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
from helpers import audit_log, log_ops
from mcp.server.mcpserver.exceptions import ToolError
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.errors import InputError
from talos.mcp.server import build_server

MINE = "- i wrote this line myself\n"


def cli(home: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, [*args, "--home", str(home)], env={"COLUMNS": "200"})


def untouched(home: Path) -> None:
    assert (home / "memory.md").read_text() == MINE
    assert not audit_log(home).exists()


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
        # the argument, not a CLI option (design §9.4)
        "Error executing tool remember: key 'color\\n': contains a line feed (U+000A)",
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


# -- bytes that are not UTF-8, a lone surrogate, a very long key -------------------------------


def test_a_non_utf8_byte_in_the_text_is_refused_and_later_writes_still_work(make_home) -> None:
    """The failing input: ``talos remember $'caf\\xff au lait please'`` (Python decodes the
    byte as the lone surrogate U+DCFF). Before: "unexpected error UnicodeEncodeError … a bug
    in talos", the audit entry stayed *prepared*, and every later write failed with the same
    error (recovery could not encode the line either) while doctor said the next write would
    settle it. Now the value is refused like a control character; nothing is written."""
    home = make_home(memory=MINE)
    res = cli(home, "remember", "caf\udcff au lait please")
    assert res.exit_code == 1
    assert res.stderr == (
        "talos remember: the text 'caf\\udcff au lait please': contains a byte that is not "
        "UTF-8 (0xFF)\n"
    )
    assert (home / "memory.md").read_text() == MINE
    assert log_ops(home) == []
    assert cli(home, "remember", "editor = vim", "--key", "editor").exit_code == 0


@pytest.mark.parametrize(
    ("option", "value", "shown"),
    [
        ("--ref", "r\udcff1", "--ref 'r\\udcff1': contains a byte that is not UTF-8 (0xFF)"),
        ("--by", "b\udc80", "--by 'b\\udc80': contains a byte that is not UTF-8 (0x80)"),
    ],
)
def test_a_non_utf8_byte_in_an_option_is_refused(make_home, option, value, shown) -> None:
    """Variants: the same byte in ``--ref`` and ``--by`` (both went into the tag unchecked)."""
    home = make_home(memory=MINE)
    res = cli(home, "remember", "editor = vim", "--key", "editor", option, value)
    assert res.exit_code == 1
    assert res.stderr == f"talos remember: {shown}\n"
    assert (home / "memory.md").read_text() == MINE
    assert log_ops(home) == []


def test_mcp_remember_refuses_a_lone_surrogate_from_json(make_home) -> None:
    """Variant over MCP: a JSON ``"\\ud800"`` escape reaches ``remember`` as a lone surrogate;
    it is a tool error with the sentence, and nothing is written."""
    home = make_home(memory=MINE)
    server = build_server(Memory(home))
    with pytest.raises(ToolError) as e:
        asyncio.run(server.call_tool("remember", {"text": "the build uses \ud800 make"}))
    # refused by the tool's schema now that the text is bounded (tests/test_mcp_bounds.py)
    assert str(e.value) == "remember: text: contains a lone surrogate, which is not UTF-8"
    assert (home / "memory.md").read_text() == MINE


def test_a_very_long_key_is_refused_with_its_length_not_its_value(make_home) -> None:
    """Variant: a 20,000-character ``--key`` (or ``--ref``) was stored in the tag; now it is
    refused, and the message gives its length instead of printing it."""
    home = make_home(memory=MINE)
    res = cli(home, "remember", "editor = vim", "--key", "k" * 20_000)
    assert res.exit_code == 1
    assert res.stderr == (
        "talos remember: --key is 20,000 characters long; a value holds at most 1,000\n"
    )
    res = cli(home, "remember", "editor = vim", "--ref", "r" * 1_001, "--source", "tool")
    assert (
        res.stderr
        == "talos remember: --ref is 1,001 characters long; a value holds at most 1,000\n"
    )
    assert (home / "memory.md").read_text() == MINE
