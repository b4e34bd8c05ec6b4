"""The MCP explain tool carries what ``talos explain --json`` gives under the evidence model
(the default): each row's ``evidence`` score, where the relevance floor ``cut`` it, and the
query ``terms`` it holds as written and as analyzed (issue 15; the note: "The MCP explain tool
does not carry the new cut and terms fields yet")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.mcp.server import build_server

MEMORY = (
    "- Format each answer short, the command first\n"
    "- Deploy region is eu-west-1\n"
    "- Answers in English unless asked otherwise\n"
)
QUERY = "how should I format your answers"


def mcp_rows(home: Path, model: str | None = None) -> list[dict[str, Any]]:
    server = build_server(Memory(home, model=model))
    got = asyncio.run(server.call_tool("explain", {"query": QUERY}))
    return got.structured_content["rows"]  # type: ignore[no-any-return]


def test_mcp_explain_carries_evidence_cut_and_terms(make_home) -> None:  # type: ignore[no-untyped-def]
    home = make_home(memory=MEMORY)
    rows = mcp_rows(home)
    cli = CliRunner().invoke(app, ["explain", "--home", str(home), "--json", QUERY])
    want = json.loads(cli.stdout)["data"]["rows"]
    fields = ("text", "score", "evidence", "cut", "terms")
    assert [{f: r[f] for f in fields} for r in rows] == [{f: r[f] for f in fields} for r in want]
    assert [(r["text"], r["cut"], r["terms"]) for r in rows] == [
        (
            "Format each answer short, the command first",
            "",
            [
                {"written": "format", "analyzed": "format"},
                {"written": "answers", "analyzed": "answer"},
            ],
        ),
        (  # it holds "answers": delivered on its own evidence (the relative floor cut it)
            "Answers in English unless asked otherwise",
            "",
            [{"written": "answers", "analyzed": "answer"}],
        ),
    ]
    assert all(r["score"] == round(r["evidence"], 2) for r in rows)


def test_mcp_explain_of_another_model_has_no_cut(make_home) -> None:  # type: ignore[no-untyped-def]
    rows = mcp_rows(make_home(memory=MEMORY), model="classic")
    assert rows and all((r["evidence"], r["cut"], r["terms"]) == (None, None, []) for r in rows)
