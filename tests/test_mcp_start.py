"""``talos mcp`` answers ``initialize`` before it loads the memory: the Memory (numpy, the
index) opens on the first tool call, on the server's worker thread; the home's settings are
still checked at start (docs/benchmarks.md "talos mcp start-up")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import invoke

pytest.importorskip("mcp")

STARTED = """
import sys
from pathlib import Path
import talos.mcp.server
got = {}
def serve(mem, **kw):
    got["loaded"] = sorted(m for m in ("talos.memory", "numpy", "talos.index") if m in sys.modules)
    got["mem"] = mem
talos.mcp.server.serve = serve
from talos.cli.mcp import mcp
mcp(home=Path(sys.argv[1]), scope=None, lang=None, sessions_dir=None, allow_tool_writes=False)
print(got["loaded"])
print(got["mem"].recall("deploy region").text.splitlines()[1])
print("talos.memory" in sys.modules)
"""


def test_mcp_serves_before_the_memory_is_loaded(make_home) -> None:
    """It imported and opened the Memory before serving: 1.3 s to answer initialize, a third
    of it talos's own imports (numpy, the index) that the handshake does not need."""
    home = make_home(memory="# Memory\n- deploy region is eu-west-1\n")
    r = subprocess.run(
        [sys.executable, "-c", STARTED, str(home)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[]", "- [fact] deploy region is eu-west-1", "True"]
    assert "talos mcp: serving" in r.stderr


def test_mcp_still_refuses_a_broken_home_at_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "talos.toml").write_text('lang = "fr"\n', encoding="utf-8")
    r = invoke("mcp", "--home", str(home))
    assert r.exit_code == 1
    assert r.stderr == f"talos mcp: {home / 'talos.toml'}:1: lang must be one of en, zh, not 'fr'\n"
    r = invoke("mcp", "--home", str(tmp_path), "--lang", "fr")
    assert (r.exit_code, r.stderr) == (1, "talos mcp: --lang must be en or zh, not 'fr'\n")
