"""The command reference, docs/cli.md, is generated from the CLI's help and kept current.

When this fails, run ``python3 -m talos.cli.docs`` and commit docs/cli.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from talos.cli import COMMANDS
from talos.cli.docs import END, START, WIDTH, main, reference, update

#: The checkout's files: next to tests/, not next to the installed package (CI installs a
#: wheel, so the package lives in site-packages, far from the docs).
ROOT = Path(__file__).resolve().parent.parent
CLI_DOC = ROOT / "docs" / "cli.md"
README = ROOT / "README.md"


def test_the_command_reference_is_current() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    assert text.count(START) == 1 and text.count(END) == 1
    section = text[text.index(START) : text.index(END) + len(END)]
    assert section == reference(), "docs/cli.md is stale: run python3 -m talos.cli.docs"


def test_the_readme_lists_every_command_and_links_the_reference() -> None:
    """The README's commands table names every command, each linked to its entry in
    docs/cli.md, whose anchors are the generated headings."""
    readme = README.read_text(encoding="utf-8")
    ref = reference()
    assert START not in readme  # the reference lives in docs/cli.md only
    for name, _fn in COMMANDS:
        assert f"(docs/cli.md#talos-{name})" in readme, name
        assert f"### `talos {name}`" in ref


def test_reference_covers_every_command_with_its_examples() -> None:
    ref = reference()
    for name, fn in COMMANDS:
        assert f"### `talos {name}`" in ref
        assert f"Usage: talos {name} " in ref or f"Usage: talos {name}\n" in ref
        block = ref.split(f"### `talos {name}`")[1].split("### ")[0]
        assert "  Examples:\n" in block, name
        assert f"    talos {name}" in block, name
        first = (fn.__doc__ or "").strip().splitlines()[0]
        assert first in block, name
    body = [line for line in ref.splitlines() if not line.startswith("<!--")]
    assert max(len(line) for line in body) <= WIDTH


def test_update_rewrites_only_the_marked_section(tmp_path: Path) -> None:
    doc = tmp_path / "cli.md"
    doc.write_text(f"# x\n\nbefore\n\n{START}\nold\n{END}\n\nafter\n", encoding="utf-8")
    assert main(["--check", str(doc)]) == 1
    assert update(doc) is True
    assert doc.read_text(encoding="utf-8") == f"# x\n\nbefore\n\n{reference()}\n\nafter\n"
    assert update(doc) is False
    assert main(["--check", str(doc)]) == 0


def test_update_needs_the_markers(tmp_path: Path) -> None:
    doc = tmp_path / "cli.md"
    doc.write_text(f"{END}\n{START}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs a"):
        update(doc)


def test_every_section_the_code_cites_is_in_the_design_document() -> None:
    """Comments cite the behaviour contract by section ("§6.1"): each number must be a heading
    of docs/design.md, so no citation points at a document the reader cannot open."""
    code = ROOT / "talos"
    cited = {
        m
        for path in code.rglob("*.py")
        for m in re.findall(r"§(\d+(?:\.\d+)*)", path.read_text(encoding="utf-8"))
    }
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^#+ §(\d+(?:\.\d+)*) ", design, flags=re.MULTILINE))
    assert cited, "no citation found: the pattern is wrong"
    assert sorted(cited - headings) == []


def test_the_readme_is_short_and_shows_hooks_and_mcp_on_its_first_screen() -> None:
    """A newcomer with only the README finds how to install hooks and MCP on its first screen
    (40 lines), and the README stays a few hundred lines (the rest is in docs/)."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300
    first = "\n".join(lines[:40])
    assert "talos hook install claude-code" in first
    assert "talos mcp" in first
