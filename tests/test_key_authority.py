"""A model can never shadow or outrank the person's value by spelling a key, a source or a
producer differently (design §7.2, §7.4, §7.5; :func:`talos.view.canon.canonical_name`).

The failing inputs: keys were compared as written, so a model's ``Editor`` (over MCP) sat
beside the person's ``editor`` instead of being shadowed by it, and the hook's SessionStart
block listed the model's value first; ``talos remember --source USER`` wrote an upper-case
tag that no rule read as the person's. Every reader and writer now compares names in one
canonical spelling: NFKC, format characters dropped, look-alike letters folded, case-folded,
whitespace folded.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.hooks.context import session_picks
from talos.mcp.server import build_server
from talos.view.canon import canonical_name

VIM = "- editor = vim <!-- user 2026-01-01 key=editor -->"

#: Spellings a reader takes for "editor": case, full width, spaces around it, a zero-width
#: space inside, Cyrillic е, a small capital ᴇ, mathematical bold letters.
LOOK_ALIKES = [
    "Editor",
    "EDITOR",
    "Ｅｄｉｔｏｒ",
    " editor ",
    "\u0435ditor",
    "\u1d07ditor",
    "𝐞𝐝𝐢𝐭𝐨𝐫",
]


def call(server: Any, tool: str, args: dict[str, Any]) -> Any:
    return asyncio.run(server.call_tool(tool, args))


def test_the_canonical_spelling_of_each_look_alike_is_the_persons_key() -> None:
    assert {canonical_name(k) for k in [*LOOK_ALIKES, "edi\u200btor"]} == {"editor"}
    assert canonical_name("USER") == canonical_name("ｕｓｅｒ") == "user"
    assert canonical_name("deploy.Region") == "deploy.region"
    assert canonical_name("部署.区域") == "部署.区域"  # CJK keys stay as they are


@pytest.mark.parametrize("key", LOOK_ALIKES)
def test_a_model_cannot_dodge_the_persons_key_over_mcp(make_home, key: str) -> None:
    """The failing input: MCP ``remember`` with key ``Editor`` beside the person's
    ``editor``. Before: stored *active* under its own key; ``get Editor`` answered emacs.
    Now it is the same key: stored shadowed, and every spelling of ``get`` answers vim."""
    home = make_home(memory=VIM + "\n")
    server = build_server(Memory(home))
    written = call(server, "remember", {"text": "editor = emacs", "key": key})
    assert written.structured_content["status"] == "shadowed"
    assert " key=editor by=mcp -->" in written.structured_content["line"]
    for spelling in (key, "editor"):
        got = call(server, "get", {"key": spelling}).structured_content
        assert (got["reason"], got["value"], got["inferred"]) == ("ok", "vim", False)
    assert "emacs" not in Memory(home).recall("which editor").text


@pytest.mark.parametrize("key", ["Editor", "ＥＤＩＴＯＲ", "\u0435ditor"])
def test_a_hand_written_look_alike_key_is_shadowed_in_every_view(make_home, key: str) -> None:
    """Variant at read time: a model-written line whose tag spells the key another way (a
    tag from before this rule, or one written into memory.md by hand) is read as the same
    key, and shadowed by the person's record."""
    from urllib.parse import quote

    forged = f"- editor = emacs <!-- reflect 2026-06-01 key={quote(key)} by=mcp -->"
    home = make_home(memory=f"{VIM}\n{forged}\n")
    mem = Memory(home)
    assert (mem.get("editor").reason, mem.get("editor").value) == ("ok", "vim")
    view, _graph = mem.view()
    assert [(e.reason, e.node.raw) for e in view.excluded] == [("shadowed", forged)]


def test_session_start_never_lists_the_models_look_alike_first(make_home) -> None:
    """The failing input in the hook: the model's ``Editor`` in the project's scope was one
    of the project's own facts, so SessionStart listed it first (before the person's
    ``editor`` of the global scope). Now it is shadowed there, and not listed at all."""
    model = "- editor = emacs <!-- reflect 2026-06-01 key=Editor scope=project:alpha by=mcp -->"
    mine = "- the build uses make <!-- user 2026-01-01 scope=project:alpha -->"
    home = make_home(memory=f"{VIM}\n{model}\n{mine}\n")
    mem = Memory(home, scopes=("project:alpha", "global"))
    picks = session_picks(mem, "project:alpha", facts=5, hits=5)
    assert [p.node.text for p in picks] == ["the build uses make"]
    assert (mem.get("editor").value, mem.get("Editor").value) == ("vim", "vim")


def test_source_user_in_capitals_is_written_and_read_as_user(make_home) -> None:
    """The failing input: ``talos remember --source USER`` wrote ``<!-- USER …``. Now the
    tag says ``user``; and a hand-written ``USER`` tag is read as the person's too, so it
    shadows a model's inference of the key instead of conflicting with it."""
    home = make_home(memory="- i like tea\n")
    res = CliRunner().invoke(
        app,
        ["remember", "editor = helix", "--key", "EDITOR", "--source", "USER", "--home", str(home)],
    )
    assert res.exit_code == 0, res.stderr
    last = (home / "memory.md").read_text().splitlines()[-1]
    assert last.startswith("- editor = helix <!-- user ") and " key=editor" in last

    hand = "- editor = vim <!-- ＵＳＥＲ 2026-01-01 key=Editor -->"
    guess = "- editor = emacs <!-- reflect 2026-06-01 key=editor -->"
    home2 = make_home(memory=f"{hand}\n{guess}\n", name="home2")
    decision = Memory(home2).get("editor")
    assert (decision.reason, decision.value) == ("ok", "vim")


def test_a_look_alike_producer_is_still_a_model(make_home) -> None:
    """Fail closed: ``by=MCP`` (or full-width) marks a model's record as ``by=mcp`` does;
    it never stands for the person."""
    forged = "- editor = emacs <!-- user 2026-06-01 key=editor by=%EF%BC%AD%EF%BC%A3%EF%BC%B0 -->"
    home = make_home(memory=f"{VIM}\n{forged}\n")
    decision = Memory(home).get("editor")
    assert (decision.reason, decision.value) == ("ok", "vim")


def test_resolve_history_and_override_take_any_spelling(make_home) -> None:
    """The lookups read the key as the records hold it: ``resolve EDITOR`` settles the
    conflict on ``editor``, ``history Editor`` lists its entries, ``--override EDITOR=nano``
    overrides it."""
    a = "- editor = vim <!-- user 2026-01-01 id=ra key=editor -->"
    b = "- editor = emacs <!-- user 2026-01-02 id=rb key=Editor -->"
    home = make_home(memory=f"{a}\n{b}\n")
    mem = Memory(home)
    assert mem.get("EDITOR").reason == "conflict"
    assert mem.get("editor", overrides={"EDITOR": "nano"}).value == "nano"
    assert mem.resolve("ＥＤＩＴＯＲ", "ra") == ["rb"]
    assert Memory(home).get("editor").value == "vim"
    assert [e["id"] for e in Memory(home).history("Editor")] == ["rb"]


# -- a model's record in another scope ---------------------------------------------------------


def test_a_model_record_in_another_scope_never_stands_in_for_the_persons(make_home) -> None:
    """The failing input: the person's ``editor = vim`` (global); an MCP server started with
    ``--scope project:alpha,global``; the model remembers ``editor = emacs`` with key editor
    (written to the first scope, alpha). Before: stored "active", and ``get editor`` in that
    server returned the model's emacs — the first scope wins — over the person's own value.
    Now a model-written record is shadowed by the person's record of its key in any
    authorized scope: the write says so, and get and recall give the person's value."""
    home = make_home(memory="- editor = vim <!-- user 2026-01-01 id=rvim key=editor -->\n")
    mem = Memory(home, scopes=["project:alpha", "global"], index=False)
    server = build_server(mem)
    res = asyncio.run(server.call_tool("remember", {"text": "editor = emacs", "key": "editor"}))
    written = res.structured_content if hasattr(res, "structured_content") else res[1]
    assert written["status"] == "shadowed"
    got = asyncio.run(server.call_tool("get", {"key": "editor"}))
    got = got.structured_content if hasattr(got, "structured_content") else got[1]
    assert (got["reason"], got["value"], got["inferred"]) == ("ok", "vim", False)
    text = mem.recall("which editor do i use").text
    assert "editor = vim" in text and "emacs" not in text
    why = {w.node.text: (w.reason, w.detail) for w in mem.why_not("which editor emacs")}
    assert why["editor = emacs"] == ("shadowed", "rvim")


def test_an_allowed_tool_write_in_another_scope_is_shadowed_too(make_home) -> None:
    """Variant: with ``--allow-tool-writes`` and a ``tool`` source with a ref (rank of the
    person's own), in the other scope order (global first, the model writing to global
    while the person's record is in alpha): still shadowed, in every reader."""
    home = make_home(
        memory="- editor = vim <!-- user 2026-01-01 id=rvim key=editor scope=project:alpha -->\n"
    )
    mem = Memory(home, scopes=["global", "project:alpha"], index=False)
    server = build_server(mem, allow_tool_writes=True)
    res = asyncio.run(
        server.call_tool(
            "remember",
            {"text": "editor = emacs", "key": "editor", "source": "tool", "ref": "run:9"},
        )
    )
    written = res.structured_content if hasattr(res, "structured_content") else res[1]
    assert written["status"] == "shadowed"
    assert mem.get("editor").value == "vim"
    assert Memory(home, scopes=["global"], index=False).get("editor").value == "emacs"
