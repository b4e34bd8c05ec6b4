"""A big memory.md (issue 12 item 8): long lines, and the paths that must not cost O(lines).

Found: one 50 MB line of memory.md was stored in the index, copied into every records block
and delivered whole in the block. A line longer than ``MAX_FACT_BYTES`` is now no fact on
every route, with a warning that names it; the file is left untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from talos import Memory
from talos.home import resolve_paths
from talos.index import Index
from talos.sources.facts import MAX_FACT_BYTES, load_facts, parse_fact_line, too_long

FACTS = "- the kettle is in the garage\n- alice owns the blue bicycle\n"


def _texts(mem: Memory, query: str) -> list[str]:
    return [r.text for r in mem.explain(query, k=20)]


@pytest.mark.parametrize("index", [True, False])
def test_a_line_longer_than_a_fact_is_not_recalled_and_is_named(
    make_home: Callable[..., Path], capsys: pytest.CaptureFixture[str], index: bool
) -> None:
    """The reported input, scaled down: one huge line among facts (kettle words in it)."""
    huge = "- kettle " + "garage kettle words " * (MAX_FACT_BYTES // 10)
    home = make_home(memory=FACTS + huge + "\n- bob keeps the spare kettle key\n")
    with Memory(home, index=index) as mem:
        texts = _texts(mem, "kettle garage")
        assert texts == ["the kettle is in the garage", "bob keeps the spare kettle key"]
        err = capsys.readouterr().err
        assert f"memory.md: line 3 is longer than {MAX_FACT_BYTES:,} bytes: not a fact" in err
        assert len(mem.recall("kettle garage").text) < 400
    assert (home / "memory.md").read_text().count("garage kettle words") == MAX_FACT_BYTES // 10


def test_the_limit_counts_bytes_not_characters(make_home: Callable[..., Path]) -> None:
    """Variant: a Chinese line under the limit in characters but over it in UTF-8 bytes."""
    at_limit = "- " + "k" * (MAX_FACT_BYTES - 2)
    zh = "- 水壶" + "在车库里" * (MAX_FACT_BYTES // 10)  # 3 bytes a character
    assert not too_long(at_limit) and parse_fact_line(at_limit) is not None
    assert len(zh) < MAX_FACT_BYTES < len(zh.encode())
    assert too_long(zh) and too_long(zh.encode()) and parse_fact_line(zh) is None
    home = make_home(memory=f"{at_limit}\n{zh}\n- 水壶在厨房\n")
    assert [n.line for n in load_facts(home / "memory.md")] == [1, 3]
    with Index(resolve_paths(home)) as index:
        index.refresh()
        assert [n.line for n in index.facts()] == [1, 3]
        assert index.check() == []


def test_a_line_edited_past_the_limit_leaves_the_facts(
    make_home: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Variant: an in-place edit (the patched path) that makes a fact line too long."""
    home = make_home(memory=FACTS + "- bob keeps the spare kettle key\n")
    mem = Memory(home)
    assert "alice owns the blue bicycle" in _texts(mem, "alice bicycle")
    lines = (home / "memory.md").read_text().splitlines()
    lines[1] = "- alice owns the blue bicycle " + "x" * MAX_FACT_BYTES
    (home / "memory.md").write_text("\n".join(lines) + "\n")
    assert _texts(mem, "alice bicycle") == []
    assert "line 2 is longer than" in capsys.readouterr().err
    with Memory(home, index=False) as direct:
        assert _texts(direct, "alice bicycle kettle") == _texts(mem, "alice bicycle kettle")
