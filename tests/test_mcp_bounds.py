"""What a model may send over MCP is bounded (design §9.4, §7.5): every argument of every tool,
and the CLI's ``remember``, has a limit, and a value past it is refused with one line that
names the argument and the limit — never stored, never echoed whole.

The failing input: MCP ``remember`` took a 2,000,000-character fact; memory.md then held a
line longer than the readers take (1 MiB), and every later command warned about it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.mcp.server import build_server

MINE = "- editor = vim <!-- user 2026-01-01 key=editor -->\n"


def call(server: Any, tool: str, args: dict[str, Any]) -> Any:
    return asyncio.run(server.call_tool(tool, args))


def refused(server: Any, tool: str, args: dict[str, Any]) -> str:
    with pytest.raises(ToolError) as e:
        call(server, tool, args)
    return str(e.value)


def test_a_two_million_character_fact_is_refused_and_nothing_is_written(make_home, capsys) -> None:
    """The failing input, as the model sent it. Before: stored, and every later recall
    warned "line 2 is longer than 1,048,576 bytes". Now refused by the tool's schema with
    the length, not the text; memory.md is unchanged and recall is quiet."""
    home = make_home(memory=MINE)
    server = build_server(Memory(home))
    message = refused(server, "remember", {"text": "x" * 2_000_000})
    assert message == "remember: text: at most 10,000 characters (got 2,000,000)"
    assert (home / "memory.md").read_text() == MINE
    capsys.readouterr()
    assert Memory(home).recall("editor").text.endswith("- [fact] (2026-01-01) editor = vim")
    assert capsys.readouterr().err == ""


def test_the_writer_bounds_the_text_on_every_route(make_home) -> None:
    """The bound is the writer's (one route per rule): the Python API refuses what MCP
    refuses, so a caller that skips the schema cannot store it either."""
    from talos.errors import InputError

    home = make_home(memory=MINE)
    with pytest.raises(InputError) as e:
        Memory(home).remember("y" * 10_001)
    assert str(e.value) == (
        "the text is 10,001 characters long; a fact holds at most 10,000 (store a long "
        "document as a skill, or split it into facts)"
    )
    assert (home / "memory.md").read_text() == MINE
    ok = Memory(home).remember("z" * 10_000)  # the bound itself is accepted
    assert ok.status == "active"


def test_the_cli_remember_refuses_a_long_text_with_one_line(make_home) -> None:
    home = make_home(memory=MINE)
    res = CliRunner().invoke(app, ["remember", "w" * 50_000, "--home", str(home)])
    assert res.exit_code == 1
    assert res.stderr == (
        "talos remember: the text is 50,000 characters long; a fact holds at most 10,000 "
        "(store a long document as a skill, or split it into facts)\n"
    )
    assert (home / "memory.md").read_text() == MINE


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("recall", {"query": "q" * 8_001}, "recall: query: at most 8,000 characters (got 8,001)"),
        (
            "explain",
            {"query": "q" * 100_000},
            "explain: query: at most 8,000 characters (got 100,000)",
        ),
        ("get", {"key": "k" * 1_001}, "get: key: at most 1,000 characters (got 1,001)"),
        (
            "remember",
            {"text": "editor = emacs", "key": "k" * 5_000},
            "remember: key: at most 1,000 characters (got 5,000)",
        ),
        (
            "remember",
            {"text": "editor = emacs", "ref": "r" * 1_001},
            "remember: ref: at most 1,000 characters (got 1,001)",
        ),
        (
            "recall",
            {"query": "editor", "budget": 10**30},
            "recall: budget: at most 1,000,000 (got a number of 31 digits)",
        ),
        ("dead", {"stale_days": 36_501}, "dead: stale_days: at most 36,500 (got 36501)"),
        ("dead", {"min_days": 10**6}, "dead: min_days: at most 36,500 (got 1000000)"),
        (
            "dead",
            {"min_seen": 10**10},
            "dead: min_seen: at most 1,000,000,000 (got 10000000000)",
        ),
    ],
)
def test_every_argument_of_every_tool_is_bounded(
    make_home, tool: str, args: dict[str, Any], message: str
) -> None:
    """Each tool argument past its bound: one line naming it and the bound; nothing
    written. (Before, each of these was accepted: a 3,000,000-character key was echoed
    back whole by get.)"""
    home = make_home(memory=MINE)
    assert refused(build_server(Memory(home)), tool, args) == message
    assert (home / "memory.md").read_text() == MINE


def test_the_bounds_are_in_the_schema_the_model_reads(make_home) -> None:
    """The model can see every limit before it calls: each string argument has maxLength,
    each number a maximum."""
    server = build_server(Memory(make_home(memory=MINE)))
    tools = {t.name: t.input_schema for t in asyncio.run(server.list_tools())}

    def bound(schema: dict[str, Any]) -> bool:
        options = schema.get("anyOf", [schema])
        kinds = [o for o in options if o.get("type") in ("string", "integer")]
        return bool(kinds) and all(
            ("maxLength" in o) if o["type"] == "string" else ("maximum" in o) for o in kinds
        )

    unbounded = [
        f"{name}.{arg}"
        for name, schema in tools.items()
        for arg, prop in schema["properties"].items()
        if not bound(prop) and "enum" not in prop and prop.get("type") != "boolean"
    ]
    assert unbounded == []
    assert tools["remember"]["properties"]["text"]["maxLength"] == 10_000


def test_a_bounded_write_at_the_limit_still_reads_back(make_home, tmp_path: Path) -> None:
    """The bound is below what the readers take: a fact of 10,000 four-byte characters is
    one line every reader loads, without a warning."""
    home = make_home(memory=MINE)
    server = build_server(Memory(home))
    text = "𝒳" * 9_990 + " editor"
    written = call(server, "remember", {"text": text})
    assert written.structured_content["status"] == "active"
    lines = (home / "memory.md").read_text().splitlines()
    assert len(lines) == 2 and len(lines[1].encode()) < 1 << 20
