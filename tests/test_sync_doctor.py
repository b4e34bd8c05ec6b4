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
    assert _sync_findings(home) == [("ok", "in step with origin/main as last fetched")]


def test_one_device_name_on_two_homes_stops_sync_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TALOS_DEVICE=laptop set on two machines (one dotfile for both): both appended to one
    log and wrote one device.json; sync failed on "git cannot merge
    .talos/devices/laptop/device.json … git pull --rebase", which says nothing of the cause and
    fixing the name did not clear."""
    from talos.errors import InputError

    monkeypatch.setenv("TALOS_DEVICE", "laptop")
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    homes = {}
    for name in ("a", "b"):
        homes[name] = tmp_path / name
        _git(tmp_path, "clone", "-q", str(remote), str(homes[name]))
        _git(homes[name], "config", "user.email", f"{name}@example.invalid")
        _git(homes[name], "config", "user.name", name)
    with Memory(homes["a"]) as mem:
        mem.remember("a fact written on a")
    sync(resolve_paths(homes["a"]))
    with Memory(homes["b"]) as mem:
        mem.remember("a fact written on b")
    with pytest.raises(InputError, match=f"device laptop is also written by .*{homes['a']}"):
        sync(resolve_paths(homes["b"]))
    monkeypatch.setenv("TALOS_DEVICE", "laptop-b")  # what the message says to do
    assert sync(resolve_paths(homes["b"])).pushed
    monkeypatch.setenv("TALOS_DEVICE", "laptop")
    sync(resolve_paths(homes["a"]))
    a, b = ((h / "memory.md").read_text() for h in homes.values())
    assert a == b and "written on a" in a and "written on b" in a


def test_git_conflict_markers_in_memory_md_are_named(tmp_path: Path) -> None:
    """A person's git pull on a clone where talos's merge driver was never registered left
    git's conflict markers in memory.md, committed as they were: talos read them as facts,
    sync carried them to every device, and doctor said nothing."""
    home = _repo(tmp_path)
    sync(resolve_paths(home))  # .gitattributes: the finding is the markers alone
    text = (home / "memory.md").read_text()
    (home / "memory.md").write_text(
        text + "<<<<<<< HEAD\n- b's own line\n=======\n- a adds a fact\n>>>>>>> 3caf05f\n"
    )
    found = [f for f in diagnose(home).findings if f.check == "sync" and f.status == "warn"]
    assert [(f.summary, f.details) for f in found] == [
        (
            "memory.md holds git's conflict markers (a merge made without talos's rules)",
            ("line 2: <<<<<<< HEAD", "line 4: =======", "line 6: >>>>>>> 3caf05f"),
        )
    ]
    assert "talos init --git" in (found[0].hint or "")


def test_a_setext_heading_is_no_conflict_marker(tmp_path: Path) -> None:
    home = _repo(tmp_path)
    sync(resolve_paths(home))
    (home / "memory.md").write_text("Tools\n=======\n- the editor is helix\n")
    assert [f for f in diagnose(home).findings if f.check == "sync" and f.status == "warn"] == []


def test_a_clone_without_the_merge_driver_is_told(tmp_path: Path) -> None:
    """A fresh clone has the home's .gitattributes (memory.md merge=talos) but not the
    driver, which lives in each clone's own config: a git pull there merged memory.md as
    plain text (conflict markers), and doctor said the home was in step."""
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    a = tmp_path / "a"
    _git(tmp_path, "clone", "-q", str(remote), str(a))
    _git(a, "config", "user.email", "a@example.invalid")
    _git(a, "config", "user.name", "a")
    with Memory(a) as mem:
        mem.remember("a fact from the first machine")
    sync(resolve_paths(a))
    b = tmp_path / "b"
    _git(tmp_path, "clone", "-q", str(remote), str(b))
    found = [f.summary for f in diagnose(b).findings if f.check == "sync" and f.status == "warn"]
    assert found == [
        "talos's merge driver is not registered in this clone (a git pull would merge "
        "memory.md as plain text)"
    ]
    assert [
        f.summary for f in diagnose(a).findings if f.status == "warn" and f.check == "sync"
    ] == []


def test_a_later_attribute_that_merges_memory_md_otherwise_is_told(tmp_path: Path) -> None:
    """The person added "memory.md merge=union" after talos's line: git merges memory.md by
    the last rule, and doctor, which looked for "merge=talos" in the file, said nothing."""
    home = _repo(tmp_path)
    sync(resolve_paths(home))
    with (home / ".gitattributes").open("a") as f:
        f.write("memory.md merge=union\n")
    found = [f.summary for f in diagnose(home).findings if f.check == "sync" and f.status == "warn"]
    assert found == [".gitattributes merges memory.md by union, not by talos's rules"]
