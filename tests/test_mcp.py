"""``talos mcp`` end to end (design §9.4, issue 6): the SDK's own stdio client starts the server
as a subprocess (``python -m talos mcp``), lists the tools and calls them on a tmp home.

Two server processes in all (each start loads the SDK, about a second), so the checks are
grouped per process.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from talos import Memory
from talos.mcp.server import NOTHING_RECALLED, build_server
from talos.usage.counts import query_hash

MEMORY = (
    "- deploy.region = eu-west-1 <!-- user 2026-01-02 key=deploy.region -->\n"
    "- the staging database runs postgres 16 on port 5433\n"
    "- the work vpn needs a fresh okta token every morning <!-- user 2026-01-02 scope=work -->\n"
)


def _session(
    home: Path,
    args: list[str],
    env: dict[str, str],
    body: Callable[[ClientSession], Awaitable[Any]],
) -> Any:
    """Start ``talos mcp`` with the SDK's stdio client, run ``body`` on the session, and check
    the server said nothing on stderr but its start line (no warning, no traceback)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "talos", "mcp", "--home", str(home), *args],
        env={**env, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    log = home.parent / "server-stderr.log"

    async def run() -> Any:
        with log.open("w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):  # noqa: SIM117
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)

    result = asyncio.run(asyncio.wait_for(run(), timeout=60))
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith(f"talos mcp: serving {home} (scopes: ")
    assert lines[1:] == []
    return result


def _text(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def test_tools_over_stdio(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "memory.md").write_text(MEMORY, encoding="utf-8")

    async def body(s: ClientSession) -> dict[str, Any]:
        tools = (await s.list_tools()).tools
        out: dict[str, Any] = {"tools": {t.name: t for t in tools}}
        out["recall"] = await s.call_tool("recall", {"query": "staging database port", "k": 3})
        out["empty"] = await s.call_tool("recall", {"query": "zebra xylophone"})
        out["explain"] = await s.call_tool("explain", {"query": "staging database port"})
        out["dead"] = await s.call_tool("dead", {"min_seen": 0})
        out["get"] = await s.call_tool("get", {"key": "deploy.region"})
        out["vpn"] = await s.call_tool("recall", {"query": "okta token vpn"})
        out["as_user"] = await s.call_tool("remember", {"text": "x is y", "source": "user"})
        out["no_query"] = await s.call_tool("recall", {})
        out["remember"] = await s.call_tool(
            "remember", {"text": "builds run on the ci runner named kestrel", "key": "ci.runner"}
        )
        out["get2"] = await s.call_tool("get", {"key": "ci.runner"})
        return out

    out = _session(home, ["--scope", "global"], {}, body)

    tools = out["tools"]
    assert sorted(tools) == ["dead", "explain", "get", "recall", "remember"]
    for t in tools.values():
        assert t.description and t.output_schema
        assert "scope" not in t.input_schema["properties"]  # fixed at start, never the model's
    assert tools["recall"].input_schema["required"] == ["query"]
    assert tools["remember"].input_schema["properties"]["source"]["enum"] == ["reflect", "tool"]

    recall = out["recall"]
    assert not recall.is_error
    text = _text(recall)
    assert "- [fact] the staging database runs postgres 16 on port 5433" in text.splitlines()
    picked = recall.structured_content["picked"]
    assert [p["kind"] for p in picked] == ["fact"]
    assert picked[0]["line"] == 2 and picked[0]["path"] == str(home / "memory.md")

    assert _text(out["empty"]) == NOTHING_RECALLED
    assert out["empty"].structured_content == {"text": "", "weak": False, "bodies": 0, "picked": []}
    # Every recall call wrote exactly one trace line (the query itself is never stored).
    trace = (home / ".talos" / "recall_trace.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(t)["q"] for t in trace] == [
        query_hash(q) for q in ("staging database port", "zebra xylophone", "okta token vpn")
    ]

    rows = out["explain"].structured_content["rows"]
    assert rows[0]["kind"] == "fact" and rows[0]["text"].startswith("the staging database")
    assert rows[0]["identity"] == {"path": str(home / "memory.md"), "line": 2}

    # Hand-written facts are never suggested for forgetting; dead only lists.
    assert out["dead"].structured_content == {"suggestions": []}

    got = out["get"].structured_content
    assert (got["ok"], got["reason"], got["value"]) == (True, "ok", "eu-west-1")

    # The work-scoped fact is invisible to a global-scoped server.
    assert _text(out["vpn"]) == NOTHING_RECALLED

    # A model cannot write with the person's authority: the schema refuses it, in one line a
    # model can act on (the SDK's own text was pydantic's dump with a web address).
    assert out["as_user"].is_error
    assert _text(out["as_user"]) == "remember: source: must be 'reflect' or 'tool' (got 'user')"
    assert out["no_query"].is_error and _text(out["no_query"]) == "recall: query: required"

    written = out["remember"].structured_content
    assert written["status"] == "active"
    line = (home / "memory.md").read_text(encoding="utf-8").splitlines()[-1]
    assert line == written["line"]
    assert line.startswith("- builds run on the ci runner named kestrel <!-- reflect ")
    assert "by=mcp" in line and "key=ci.runner" in line
    got2 = out["get2"].structured_content
    assert (got2["ok"], got2["inferred"]) == (True, True)
    assert got2["value"] == "builds run on the ci runner named kestrel"


def test_scope_comes_from_the_environment(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "memory.md").write_text(MEMORY, encoding="utf-8")

    async def body(s: ClientSession) -> list[Any]:
        return [
            await s.call_tool("recall", {"query": "okta token vpn"}),
            await s.call_tool("recall", {"query": "staging database port"}),
            await s.call_tool("remember", {"text": "the work laptop is a thinkpad x1"}),
        ]

    vpn, staging, remembered = _session(home, [], {"TALOS_SCOPE": "work"}, body)
    assert "- [fact] (2026-01-02) the work vpn needs a fresh okta token every morning" in _text(vpn)
    assert _text(staging) == NOTHING_RECALLED  # global facts are not in the work scope
    assert "scope=work" in remembered.structured_content["line"]
    assert json.loads(_text(remembered))["status"] == "active"


def test_memory_calls_stay_on_one_thread(tmp_path: Path) -> None:
    """A Memory and its SQLite connections belong to one thread; the SDK would run plain tool
    functions on any free worker thread (``get`` after ``remember`` then failed at random with
    "SQLite objects created in a thread can only be used in that same thread")."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "memory.md").write_text(MEMORY, encoding="utf-8")
    threads: set[int] = set()

    class Tracked(Memory):
        def recall(self, *a: Any, **kw: Any) -> Any:
            threads.add(threading.get_ident())
            time.sleep(0.01)
            return super().recall(*a, **kw)

    async def run() -> list[Any]:
        server = build_server(Tracked(home))
        return await asyncio.gather(
            *(server.call_tool("recall", {"query": f"staging database {i}"}) for i in range(8))
        )

    results = asyncio.run(run())
    assert len(threads) == 1 and threading.get_ident() not in threads
    assert all(not r.is_error for r in results)
