"""Issue 13.7: a model cannot claim the person's authority over MCP (design §7.5).

The MCP ``remember`` tool accepted ``source: "tool"`` with any made-up ``ref`` and superseded
the person's own record: ``talos get editor`` then returned the model's value. Now what an MCP
client writes is marked ``by=mcp`` and never supersedes or shadows a ``user`` record, whatever
source or ref it claims — at write time and in every view — and ``tool`` writes are accepted
only when the person started the server with ``--allow-tool-writes``. Driven through the real
tool functions of :func:`talos.mcp.server.build_server` (and one stdio session for the flag).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server.mcpserver.exceptions import ToolError

from talos import Memory
from talos.mcp.server import build_server

VIM = "- editor = vim <!-- user 2026-01-01 key=editor -->"


def call(server: Any, tool: str, args: dict[str, Any]) -> Any:
    return asyncio.run(server.call_tool(tool, args))


def test_a_made_up_tool_ref_is_refused_without_the_flag(make_home) -> None:
    """13.7, the failing input: source tool with a made-up ref, on a server started without
    --allow-tool-writes: refused with a sentence that says what to do; nothing written."""
    home = make_home(memory=VIM + "\n")
    server = build_server(Memory(home))
    with pytest.raises(ToolError) as e:
        call(
            server,
            "remember",
            {"text": "editor = emacs", "key": "editor", "source": "tool", "ref": "made-up:1"},
        )
    assert str(e.value) == (
        "Error executing tool remember: source tool is refused: this server was started "
        "without --allow-tool-writes, so the user has not allowed tool writes; store it with "
        "source reflect, or ask the user to restart talos mcp with --allow-tool-writes"
    )
    assert (home / "memory.md").read_text() == VIM + "\n"
    assert Memory(home).get("editor").value == "vim"


def test_an_allowed_tool_write_never_supersedes_the_persons_record(make_home) -> None:
    """13.7 with the person's permission for tool writes: the write is stored, shadowed — it
    supersedes nothing — and ``get`` (CLI API and the MCP tool) still answers vim. (Checked:
    without the by=mcp rule at write time it superseded vim and get returned emacs.)"""
    home = make_home(memory=VIM + "\n")
    server = build_server(Memory(home), allow_tool_writes=True)
    result = call(
        server,
        "remember",
        {"text": "editor = emacs", "key": "editor", "source": "tool", "ref": "made-up:1"},
    )
    written = result.structured_content
    assert (written["status"], written["superseded"]) == ("shadowed", [])
    assert written["line"].endswith(f"id={written['id']} key=editor ref=made-up:1 by=mcp -->")
    assert (home / "memory.md").read_text().splitlines() == [VIM, written["line"]]
    got = call(server, "get", {"key": "editor"}).structured_content
    assert (got["reason"], got["value"]) == ("ok", "vim")
    decision = Memory(home).get("editor")
    assert (decision.reason, decision.value) == ("ok", "vim")


def test_a_hand_copied_model_tag_does_not_outrank_the_person(make_home) -> None:
    """13.7 variant, view time: a line carrying ``by=mcp`` (pasted from a model's record, or
    written before the rule) is model-written wherever it came from: it is shadowed by the
    person's record instead of contesting it (a conflict would have hidden vim too). (Checked:
    without the rule in build_view get says conflict.)"""
    forged = "- editor = emacs <!-- tool 2026-06-01 key=editor ref=run:1 by=mcp -->"
    home = make_home(memory=f"{VIM}\n{forged}\n")
    mem = Memory(home)
    assert (mem.get("editor").reason, mem.get("editor").value) == ("ok", "vim")
    view, _graph = mem.view()
    assert [(e.reason, e.node.raw) for e in view.excluded] == [("shadowed", forged)]


def test_the_person_still_supersedes_a_model_record(make_home) -> None:
    """Variant: the rule is one-way — the person's own remember replaces a model's record."""
    home = make_home(memory="- i like tea\n")
    server = build_server(Memory(home), allow_tool_writes=True)
    model = call(
        server,
        "remember",
        {"text": "editor = emacs", "key": "editor", "source": "tool", "ref": "r"},
    ).structured_content
    assert model["status"] == "active"
    mine = Memory(home).remember("editor = helix", key="editor")
    assert mine.superseded == [model["id"]]
    assert Memory(home).get("editor").value == "helix"


def test_the_tool_description_says_what_holds(make_home) -> None:
    """13.7: the description the model reads matches the server's rule, with and without the
    flag, and says that a user record is never superseded or shadowed."""

    texts = {}
    for allow in (False, True):
        server = build_server(Memory(make_home(name=f"home-{allow}")), allow_tool_writes=allow)
        tools = asyncio.run(server.list_tools())
        texts[allow] = next(t.description for t in tools if t.name == "remember")
    assert (
        "source tool is refused: this server was started without --allow-tool-writes"
        in (texts[False])
    )
    assert "or tool (a tool's output said so: give ref)" in texts[True]
    for text in texts.values():
        assert "it never supersedes or shadows a record the user wrote, whatever source or ref" in (
            " ".join(text.split())
        )
        assert "(by=mcp)" in text


def test_allow_tool_writes_flag_over_stdio(tmp_path: Path) -> None:
    """The flag is the person's, on the command line: ``talos mcp --allow-tool-writes``
    accepts a tool write (shadowed under the person's record), over the real protocol."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "memory.md").write_text(VIM + "\n", encoding="utf-8")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "talos", "mcp", "--home", str(home), "--allow-tool-writes"],
        env={"PYTHONPATH": os.pathsep.join(sys.path)},
    )

    async def run() -> Any:
        with (tmp_path / "stderr.log").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):  # noqa: SIM117
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await session.call_tool(
                        "remember",
                        {"text": "editor = emacs", "key": "editor", "source": "tool", "ref": "x"},
                    )

    result = asyncio.run(asyncio.wait_for(run(), timeout=60))
    assert not result.is_error
    assert result.structured_content["status"] == "shadowed"
    assert Memory(home).get("editor").value == "vim"
