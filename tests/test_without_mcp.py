"""The default install has no MCP SDK: ``mcp`` and ``pydantic`` are the ``mcp`` extra
(``pip install 'talos-memory[mcp]'``). Without them every command but ``talos mcp``, the hooks
and the Python API work, and ``talos mcp`` says in one line what to install.

Each test runs a fresh interpreter in which the SDK cannot be imported, nor the packages whose
data talos now ships (``talos/data``: bm25s, wordfreq, msgpack, detect-secrets with requests
and yaml): a finder placed first on ``sys.meta_path`` raises ModuleNotFoundError for them, as
an interpreter without them installed does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: The top-level packages the interpreter of these tests cannot import.
ABSENT = (
    "mcp",
    "pydantic",
    "pydantic_core",
    "bm25s",
    "wordfreq",
    "msgpack",
    "detect_secrets",
    "requests",
    "yaml",
)

#: Makes :data:`ABSENT` unimportable, then runs the rest of the ``-c`` program.
PRELUDE = (
    "import importlib.abc, sys\n"
    f"ABSENT = {ABSENT!r}\n"
    "class Absent(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.partition('.')[0] in ABSENT:\n"
    "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
    "        return None\n"
    "sys.meta_path.insert(0, Absent())\n"
)

#: ``python -m talos ARGS`` after the prelude.
TALOS = PRELUDE + (
    "import runpy\n"
    "sys.argv = ['talos', *sys.argv[1:]]\n"
    "runpy.run_module('talos', run_name='__main__', alter_sys=True)\n"
)

MEMORY = (
    "- The billing service deploys from eu-west-1, ask Ana before a Friday deploy\n"
    "- Staging deploys of alpha go through make deploy ENV=staging\n"
    "- 部署前先运行数据库迁移\n"
)


def run(
    program: str, *args: str, stdin: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``program`` (a ``-c`` program) with ``args`` in a fresh interpreter, without
    ``$TALOS_HOME`` and ``$TALOS_SCOPE``."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("TALOS_HOME", "TALOS_SCOPE")}
    return subprocess.run(
        [sys.executable, "-c", program, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home with three facts; the hooks run in process (no resident server)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "memory.md").write_text(MEMORY, encoding="utf-8")
    (home / "talos.toml").write_text("[hooks]\nserver = false\ntimeout = 9\n", encoding="utf-8")
    return home


def test_talos_mcp_says_what_to_install(home: Path) -> None:
    got = run(TALOS, "mcp", "--home", str(home))
    assert got.returncode == 1 and got.stdout == ""
    assert got.stderr == (
        "talos mcp: the MCP SDK is not installed (No module named 'mcp'): "
        "pip install 'talos-memory[mcp]'\n"
    )
    assert not (home / ".talos").exists()  # nothing was opened


def test_talos_mcp_help_needs_no_sdk() -> None:
    got = run(TALOS, "mcp", "--help")
    assert got.returncode == 0 and "--allow-tool-writes" in got.stdout


def test_every_module_but_the_server_imports_without_them() -> None:
    """No talos module imports the SDK (or a package whose data is shipped) when it is
    imported: only ``talos.mcp.server`` needs the SDK, and only ``talos mcp`` imports it."""
    program = PRELUDE + (
        "import importlib, json, pkgutil, talos\n"
        "failed = []\n"
        "for m in pkgutil.walk_packages(talos.__path__, 'talos.'):\n"
        "    if m.name in ('talos.mcp.server', 'talos.__main__'):\n"
        "        continue\n"
        "    try:\n"
        "        importlib.import_module(m.name)\n"
        "    except Exception as e:\n"
        "        failed.append(f'{m.name}: {e!r}')\n"
        "loaded = sorted(n for n in sys.modules if n.partition('.')[0] in ABSENT)\n"
        "count = sum(n.startswith('talos.') for n in sys.modules)\n"
        "print(json.dumps([failed, loaded, count]))\n"
    )
    got = run(program)
    assert got.returncode == 0, got.stderr
    failed, loaded, count = json.loads(got.stdout)
    assert (failed, loaded) == ([], [])
    assert count > 50  # the walk imported the package, not nothing


def test_index_recall_and_explain_without_them(home: Path, tmp_path: Path) -> None:
    got = run(TALOS, "index", "--home", str(home))
    assert got.returncode == 0, got.stderr
    got = run(TALOS, "recall", "--home", str(home), "when does billing deploy")
    assert got.returncode == 0, got.stderr
    assert "eu-west-1, ask Ana" in got.stdout
    got = run(TALOS, "recall", "--home", str(home), "数据库迁移")
    assert "部署前先运行数据库迁移" in got.stdout
    got = run(TALOS, "explain", "--home", str(home), "--json", "billing deploy")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["data"]["rows"][0]["kind"] == "fact"
    # a credential only detect-secrets' regexes know (shipped as data) is found by the scan
    sendgrid = "SG." + "abcdefghijklmnopqrstuv." + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"
    (home / "memory.md").write_text(MEMORY + f"- the mailer key is {sendgrid}\n", "utf-8")
    got = run(TALOS, "scan", "--home", str(home), "--json")
    assert "abcdefghijklmnopqrstuv" not in got.stdout + got.stderr
    assert "credential" in got.stdout


def test_a_hook_without_them(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "work" / "alpha"
    (project / ".git").mkdir(parents=True)
    event = {
        "session_id": "abc123",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Deploy the alpha service to staging",
    }
    got = run(TALOS, "hook", "claude-code", "--home", str(home), stdin=json.dumps(event))
    assert got.returncode == 0 and got.stderr == ""
    context = json.loads(got.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Staging deploys of alpha go through make deploy ENV=staging" in context


def test_the_python_api_without_them(home: Path) -> None:
    program = PRELUDE + (
        "from talos import Memory\n"
        "with Memory(sys.argv[1]) as mem:\n"
        "    print(mem.recall('billing deploy friday').text)\n"
        "print(sorted(n for n in sys.modules if n.partition('.')[0] in ABSENT))\n"
    )
    got = run(program, str(home))
    assert got.returncode == 0, got.stderr
    assert "eu-west-1, ask Ana" in got.stdout
    assert got.stdout.rstrip().endswith("[]")
