"""The doctor's sync findings (design §12.4), each written from a home where it said the
wrong thing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from talos.doctor import diagnose
from talos.home import resolve_paths
from talos.memory import Memory
from talos.sync.git import sync

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def _sync_findings(home: Path) -> list[tuple[str, str]]:
    report = diagnose(home)
    return [(f.status, f.summary) for f in report.findings if f.check == "sync"][1:]


def _repo(tmp_path: Path) -> Path:
    home = tmp_path / "a"
    _git(tmp_path, "init", "-q", "-b", "main", str(home))
    _git(home, "config", "user.email", "a@example.invalid")
    _git(home, "config", "user.name", "a")
    with Memory(home) as mem:
        mem.remember("a fact never pushed anywhere")
    return home


def test_a_home_with_no_remote_is_not_in_step(tmp_path: Path) -> None:
    """Committed by talos sync, no remote: doctor said "in step with the last fetch"."""
    home = _repo(tmp_path)
    assert sync(resolve_paths(home)).stopped is not None
    assert _sync_findings(home) == [
        ("info", "no remote: committed here only, nothing travels (git remote add origin URL)")
    ]


def test_a_branch_never_pushed_is_not_in_step(tmp_path: Path) -> None:
    home = _repo(tmp_path)
    sync(resolve_paths(home))
    _git(tmp_path, "init", "-q", "--bare", str(tmp_path / "r.git"))
    _git(home, "remote", "add", "origin", str(tmp_path / "r.git"))
    assert _sync_findings(home) == [("info", "not synced yet: main was never pushed to origin")]
    assert sync(resolve_paths(home)).pushed
    assert _sync_findings(home) == [("ok", "in step with the last fetch (a)")]
