"""A refused memory.md (more lines than talos serves, or unreadable) is named on every run that
recalls without it, and costs no more than its first bytes: a 778,845-line file was warned
about on the first run only (later recalls printed "nothing recalled" and exit 0), and each
run read all 69 MB of it (115 MB peak against 49 MB for an empty home)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import talos.sources.facts as facts
from talos import Memory


def _lines(n: int) -> str:
    return "".join(f"- deploy note number {i} about the billing service\n" for i in range(n))


def test_every_recall_names_a_refused_memory_file(
    make_home: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(facts, "MAX_MEMORY_LINES", 50)
    home = make_home(memory=_lines(60))
    for _run in range(3):  # each Memory is a new process's view of an up-to-date index
        with Memory(home) as mem:
            assert mem.recall("billing deploy").picked == []
        err = capsys.readouterr().err
        assert err.count("memory.md: cannot read (60 lines, more than the 50 talos serves") == 1
    (home / "memory.md").write_text(_lines(40), encoding="utf-8")  # back under the limit
    with Memory(home) as mem:
        assert mem.recall("billing deploy").picked
    assert "cannot read" not in capsys.readouterr().err


def test_a_file_with_too_many_lines_is_counted_not_read(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its lines are counted in chunks of COUNT_CHUNK bytes; it is never read whole."""
    monkeypatch.setattr(facts, "MAX_MEMORY_LINES", 50)
    monkeypatch.setattr(facts, "COUNT_CHUNK", 64)
    home = make_home(memory=_lines(60))

    def whole(*_a: object) -> bytes:
        raise AssertionError("read whole")

    monkeypatch.setattr(facts.fsutil, "read_regular", whole)
    with pytest.raises(facts.TooManyLines, match="60 lines"):
        facts.read_memory(home / "memory.md")
