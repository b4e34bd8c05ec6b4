"""One home, one index, however its path is spelled (issue 12 item 7, talos/home.py).

Found: alternating ``--home h`` and ``--home /abs/h`` on a home of 30,000 sessions re-read
every session on each switch (3.4 s and 200 MB instead of 0.3 s): the index keys its rows
and signatures by path, and the two spellings were two strings. Every path now leaves
:func:`talos.home.resolve_paths` canonical, so no spelling costs a refresh.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import session_line

from talos import Memory
from talos.errors import InputError
from talos.home import canonical, resolve_paths
from talos.index import Index

SESSIONS = {f"2026-01-{i:02d}.jsonl": session_line(f"kettle tea brew {i}") for i in range(1, 9)}


def _refresh(home: str | Path, **paths: str) -> tuple[int, bool]:
    """``(sessions read, memory.md re-parsed)`` of one new process's refresh of ``home``."""
    with Index(resolve_paths(home, **paths)) as index:
        stats = index.refresh()
    return stats.sessions_read, stats.facts_reparsed


@pytest.fixture
def home(make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    h = make_home(memory="- kettle fact\n", sessions=SESSIONS)
    monkeypatch.chdir(h.parent)
    assert _refresh(h) == (8, True)  # built once, under the absolute spelling
    return h


def test_relative_and_absolute_spellings_share_the_index(home: Path) -> None:
    """The reported input: the relative and the absolute spelling, alternating."""
    for spelling in ["home", str(home), "home", str(home)]:
        assert _refresh(spelling) == (0, False), spelling


@pytest.mark.parametrize("spelling", ["home/", "./home", "home/.", "./home//", "x/../home"])
def test_every_spelling_of_the_home_is_one_home(home: Path, spelling: str) -> None:
    (home.parent / "x").mkdir(exist_ok=True)
    assert _refresh(spelling) == (0, False)
    assert resolve_paths(spelling) == resolve_paths(home)


def test_a_symlinked_home_is_the_home_it_points_to(home: Path) -> None:
    """Decided: a symlink to a home is that home (its index, its keys), not a second one."""
    (home.parent / "link").symlink_to(home)
    assert _refresh("link") == (0, False)
    assert _refresh(home.parent / "link" / ".." / "link") == (0, False)
    assert resolve_paths("link").memory_file == home / "memory.md"


def test_configured_paths_are_canonical_too(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Variant: the paths of talos.toml and of the API, relative, with ``./``, ``..`` or a
    trailing slash, name the same files as their plain spelling."""
    home = make_home(memory="- kettle fact\n", sessions=SESSIONS)
    (home / "notes").mkdir()
    (home / "notes" / "mem.md").write_text("- kettle note\n")
    (home / "talos.toml").write_text('memory_file = "./notes/../notes/mem.md"\n')
    monkeypatch.chdir(home)
    assert _refresh(home, sessions_dir=".talos/sessions/") == (8, True)
    assert _refresh(home, sessions_dir=str(home / ".talos" / "sessions")) == (0, False)
    assert _refresh(".", sessions_dir="./.talos/./sessions") == (0, False)
    (home / "talos.toml").write_text(f'memory_file = "{home}/notes/mem.md"\n')
    assert _refresh(home, sessions_dir="x/../.talos/sessions") == (0, False)
    paths = resolve_paths(".", sessions_dir=".talos/sessions/")
    assert paths.memory_file == home / "notes" / "mem.md"
    assert paths.sessions_dir == home / ".talos" / "sessions"


def test_the_last_name_of_a_path_stays_as_named(tmp_path: Path) -> None:
    """A symlinked memory.md or sessions folder is not replaced by its target: writes go
    through the link (tests/test_trust.py) and a retargeted folder link is seen
    (tests/test_session_append.py); the folders above it are resolved."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "file.md").write_text("x")
    (tmp_path / "dir-link").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "file-link.md").symlink_to(tmp_path / "real" / "file.md")
    assert canonical(tmp_path / "dir-link" / "file-link.md") == tmp_path / "real" / "file-link.md"
    assert canonical(tmp_path / "dir-link") == tmp_path / "dir-link"
    assert canonical(tmp_path / "dir-link", follow=True) == tmp_path / "real"
    assert canonical(tmp_path / "dir-link" / "..") == tmp_path


def test_a_home_spelled_two_ways_recalls_the_same(home: Path) -> None:
    with Memory("home") as a, Memory(str(home) + os.sep) as b:
        assert a.paths == b.paths
        assert [r.text for r in a.explain("kettle")] == [r.text for r in b.explain("kettle")]
        assert a.explain("kettle")[0].node.path.startswith(str(home) + os.sep)


def test_a_nul_in_a_path_is_a_clear_error(make_home: Callable[..., Path]) -> None:
    """No spelling of a path with a NUL byte reaches a key: canonical refuses it (and
    resolve_paths names the setting, tests/test_config.py)."""
    with pytest.raises(InputError, match="NUL byte"):
        canonical(Path("home\0x"))
    with pytest.raises(InputError, match="NUL byte"):
        resolve_paths("home\0x")
    home = make_home()
    (home / "talos.toml").write_text('sessions_dir = "a\\u0000b"\n')
    with pytest.raises(InputError, match=r"talos\.toml.*sessions_dir.*NUL byte"):
        resolve_paths(home)


def test_a_relative_home_recalled_then_checked_by_doctor_is_up_to_date(home: Path) -> None:
    """Reported: ``talos recall --home h`` then ``talos doctor --home h`` said index.db
    differs from the files (the index held ``h/...`` rows, the check read ``/abs/h/...``)."""
    import json

    from typer.testing import CliRunner

    from talos.cli import app

    runner = CliRunner()
    got = runner.invoke(app, ["recall", "kettle", "--home", "home"])
    assert got.exit_code == 0, got.output
    got = runner.invoke(app, ["doctor", "--home", "home", "--json"])
    index = [f for f in json.loads(got.stdout)["data"]["findings"] if f["check"] == "index"]
    assert [f["status"] for f in index] == ["ok"], index
    assert "up to date" in index[0]["summary"]
