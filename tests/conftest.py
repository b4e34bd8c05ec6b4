"""Shared fixtures: homes are built in tmp_path; a real home is never touched."""

from __future__ import annotations

import datetime as dt
import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

GOLDEN = Path(__file__).parent / "golden"

# Property tests draw the same examples on every run (hypothesis's own "ci" profile:
# derandomized, no example database), so the suite passes or fails the same way each time.
# HYPOTHESIS_PROFILE=default explores new examples instead (it found parse_fact_line's
# "-\r-000" -> "-000": a CR stops the bullet strip of design §3.1).
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _isolate_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may read or write the user's real home or config."""
    monkeypatch.delenv("TALOS_HOME", raising=False)
    monkeypatch.delenv("TALOS_SCOPE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    # the agents' transcript folders talos init and hook install look for (~/.claude, …)
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "dead_span: the test sees talos dead's real span of days (dead_min_days)"
    )


@pytest.fixture(autouse=True)
def _dead_span(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """``talos dead`` waits :data:`talos.config.DEAD_MIN_DAYS` days from a memory's first count
    (``tests/test_dead_span.py``, marked ``dead_span``, tests that rule). Every other test's
    recalls happen within its own second and are about other rules (min_seen, stale days,
    sources, scopes), so for them the span is 0 — as ``dead_min_days = 0`` in talos.toml."""
    if request.node.get_closest_marker("dead_span") is None:
        import talos.config

        monkeypatch.setattr(talos.config, "DEAD_MIN_DAYS", 0)


@pytest.fixture
def today() -> dt.date:
    """The local day the test runs on (the date ``remember`` writes in a tag), taken when the
    test starts: never at import, so a run that crosses midnight dates each test by its own
    day."""
    return dt.date.today()


@pytest.fixture
def golden_home(tmp_path: Path) -> Callable[[str], Path]:
    """Copy a golden fixture home (tests/golden/NAME) into tmp_path and return its path."""

    def make(name: str) -> Path:
        dest = tmp_path / name
        shutil.copytree(GOLDEN / name, dest)
        return dest

    return make


@pytest.fixture
def make_home(tmp_path: Path) -> Callable[..., Path]:
    """Build a home: ``make_home(memory="...", skills={"a.md": "..."}, sessions={...})``."""

    def make(
        memory: str | bytes | None = None,
        skills: dict[str, str | bytes] | None = None,
        sessions: dict[str, str | bytes] | None = None,
        name: str = "home",
    ) -> Path:
        home = tmp_path / name
        home.mkdir()
        if memory is not None:
            data = memory.encode("utf-8") if isinstance(memory, str) else memory
            (home / "memory.md").write_bytes(data)
        if skills is not None:
            (home / "skills").mkdir()
            for fname, text in skills.items():
                data = text.encode("utf-8") if isinstance(text, str) else text
                (home / "skills" / fname).write_bytes(data)
        if sessions is not None:
            sdir = home / ".talos" / "sessions"
            sdir.mkdir(parents=True)
            for fname, text in sessions.items():
                data = text.encode("utf-8") if isinstance(text, str) else text
                (sdir / fname).write_bytes(data)
        return home

    return make


#: Two facts about the kitchen: the home of the tests about files and values talos reads.
KETTLE_MEMORY = "- the kettle is in the left cupboard\n- an old note about the zebra crossing\n"


@pytest.fixture
def kettle_home(make_home: Callable[..., Path]) -> Path:
    """A home of :data:`KETTLE_MEMORY` only (no talos.toml, no state yet)."""
    return make_home(memory=KETTLE_MEMORY)


@pytest.fixture
def ways(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``build``, ``extend`` or ``remove`` per episode block the index made (in any Memory
    here; tests/test_session_append.py, tests/test_session_remove.py)."""
    import talos.index
    from talos.graph import EpisodeBlock

    # the folder of the index package: a frame of one of its files is the index at work
    index_dir = Path(talos.index.__file__).parent
    got: list[str] = []
    build, extend = EpisodeBlock.build.__func__, EpisodeBlock.extend  # type: ignore[attr-defined]
    remove = EpisodeBlock.remove

    def by_index() -> bool:  # the non-indexed route builds its block too: not counted
        code = sys._getframe(2).f_code  # nor Index.check's block to compare with
        in_index = Path(code.co_filename).parent == index_dir  # a file of talos/index/
        return in_index and code.co_name != "_check_block"

    def spy_build(cls: Any, rows: Any) -> Any:
        if by_index():
            got.append("build")
        return build(cls, rows)

    def spy_extend(self: Any, rows: Any) -> Any:
        if by_index():
            got.append("extend")
        return extend(self, rows)

    def spy_remove(self: Any, episodes: Any) -> Any:
        if by_index() and len(episodes):
            got.append("remove")
        return remove(self, episodes)

    monkeypatch.setattr(EpisodeBlock, "build", classmethod(spy_build))
    monkeypatch.setattr(EpisodeBlock, "extend", spy_extend)
    monkeypatch.setattr(EpisodeBlock, "remove", spy_remove)
    return got


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Callable[[Path], Path]]:
    """``read_only(home)``: the same home seen through a read-only bind mount."""
    mounted: list[Path] = []

    def make(src: Path) -> Path:
        dst = tmp_path / f"ro-{src.name}"
        dst.mkdir()
        if subprocess.run(["mount", "--bind", str(src), str(dst)], capture_output=True).returncode:
            pytest.skip("cannot bind-mount here (needs root and mount permission)")
        mounted.append(dst)
        if subprocess.run(
            ["mount", "-o", "remount,bind,ro", str(dst)], capture_output=True
        ).returncode:
            pytest.skip("cannot remount read-only here")
        try:
            (dst / "probe").touch()
        except OSError as e:
            assert e.errno == errno.EROFS
        else:
            pytest.skip("the read-only mount is writable")
        return dst

    yield make
    for d in reversed(mounted):
        subprocess.run(["umount", "-l", str(d)], capture_output=True)  # -l: open handles


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """``terminal(COLUMNS)``: listing commands take the test runner's stdout for a terminal of
    that width and draw their table (off a terminal they print plain lines,
    :mod:`talos.cli.listing`); no ANSI escape reaches the buffer all the same."""
    import talos.cli.listing

    def make(columns: int = 80) -> None:
        monkeypatch.setattr(talos.cli.listing, "isatty", lambda stream: True)
        monkeypatch.setenv("COLUMNS", str(columns))

    return make
