"""The hostile pass over the write path (issues 12.1, 12.2, 12.5, 12.6, 13.2, 13.7).

Each test is a break found by attacking the fixed writer with real processes, outside
writers and bad values, written from the exact failing input before the fix; the docstring
says what happened before. Families: values on every write path, decisions on a key,
outside writers racing talos, a model's authority over MCP, trust rules a person can
predict.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from typer.testing import CliRunner

from talos import Memory, audit, writer
from talos.cli import app
from talos.errors import InputError
from talos.home import resolve_paths
from talos.mcp_server import build_server

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and renames")

MINE = "- i wrote this line myself\n"


def cli(home: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, [*args, "--home", str(home)], env={"COLUMNS": "200"})


def log_ops(home: Path) -> list[str]:
    path = home / ".talos" / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(x).get("op") for x in path.read_text().splitlines()]


# -- values: a byte that is not UTF-8 ------------------------------------------------------------


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
    assert str(e.value) == (
        "Error executing tool remember: the text 'the build uses \\ud800 make': contains a "
        "lone surrogate (U+D800), which is not UTF-8"
    )
    assert (home / "memory.md").read_text() == MINE


def test_a_write_that_fails_after_its_entry_is_prepared_settles_it_at_once(
    make_home, monkeypatch
) -> None:
    """The class behind the failing input: any failure between *prepare* and *commit* (not
    only a full disk) settles the transaction from what memory.md holds, so the log never
    keeps a pending entry that the next write trips over, and doctor is right."""
    home = make_home(memory=MINE)
    paths = resolve_paths(home)

    def broken(path: Path, line: bytes) -> bool:
        raise ValueError("a bug in the append")

    monkeypatch.setattr(writer, "append_line", broken)
    with pytest.raises(ValueError):
        writer.remember(paths, "the build uses make")
    monkeypatch.undo()
    assert log_ops(home) == ["remember", "abort"]
    assert audit.verify(paths.audit_file, paths.memory_file) == []
    assert writer.remember(paths, "the build uses ninja").status == "active"


# -- decisions on a key: keys outside ASCII, ids that are not unique -----------------------------


def test_a_key_outside_ascii_is_superseded_and_resolved_like_any_other(make_home) -> None:
    """The failing input: ``remember "editor = vim" --key édit`` then ``… "editor = emacs"
    --key édit``. The tag stores the key URL-encoded (``key=%C3%A9dit``) and the writer looked
    for the raw bytes of ``édit`` in each line first, so it never found its own records:
    no supersede (``get`` → conflict), and ``resolve`` said "not in memory.md any more"."""
    home = make_home(memory=MINE)
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="édit")
    emacs = mem.remember("editor = emacs", key="édit")
    assert emacs.superseded == [vim.id]
    assert mem.get("édit").value == "emacs"
    # variant: a conflict between two hand-written tags of such a key, one with the key
    # URL-encoded and one with it as typed, can be resolved
    mf = home / "memory.md"
    with mf.open("a", encoding="utf-8") as f:
        f.write("- color = red <!-- user 2026-01-05 id=rred key=c%C3%B6lor -->\n")
        f.write("- color = blue <!-- user 2026-01-05 id=rblue key=cölor -->\n")
    assert mem.get("cölor").reason == "conflict"
    assert mem.resolve("cölor", "rblue") == ["rred"]
    assert mem.get("cölor").value == "blue"


def test_restore_of_a_record_edited_in_place_never_duplicates_its_id(make_home) -> None:
    """The failing input: a record ``editor = vim`` edited by hand to ``editor = nvim`` (its
    id kept; doctor: nothing to do), then ``talos restore ID``. Before: the old line was
    appended beside the edited one, two records with one id, an unresolvable conflict
    (``resolve --keep ID`` said "kept ID; superseded nothing"). Now restore refuses and names
    the line."""
    home = make_home(memory=MINE)
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    mf = home / "memory.md"
    mf.write_text(mf.read_text().replace("= vim", "= nvim"))
    before = mf.read_text()
    with pytest.raises(InputError) as e:
        mem.restore(vim.id)
    assert str(e.value) == (
        f"record {vim.id} is in {resolve_paths(home).memory_file} already (line 2, edited "
        "outside talos): nothing to restore"
    )
    assert mf.read_text() == before
    assert mem.get("editor").value == "nvim"


def test_resolve_refuses_an_id_that_two_lines_carry(make_home) -> None:
    """Variant: a person copied a record's line and changed the value (both lines carry one
    id). ``resolve --keep ID`` cannot tell which to keep: it says so instead of "kept ID;
    superseded nothing" with the conflict left in place."""
    home = make_home(memory=MINE)
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    mf = home / "memory.md"
    mf.write_text(mf.read_text() + vim.line.replace("= vim", "= nano") + "\n")
    assert mem.get("editor").reason == "conflict"
    with pytest.raises(InputError) as e:
        mem.resolve("editor", vim.id)
    assert str(e.value) == (
        f"record id {vim.id} is on lines 2, 3 of {resolve_paths(home).memory_file}: talos "
        "cannot tell which one to keep. Nothing was changed; give one of them another id "
        "(or delete one) by hand"
    )
