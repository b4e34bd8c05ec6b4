"""What another device may change (design §2, §12.1): a path setting names only its own kind
of file in its own place, and this device's own logs are append-only on every route. Each
test is a break of the fourth hostile pass, written from the input that broke it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers import git as _git
from helpers import git_clones as _clones

from talos.errors import InputError
from talos.home import resolve_paths
from talos.memory import Memory
from talos.sync.git import GitError, sync

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _synced_pair(tmp_path: Path) -> dict[str, Path]:
    """Clones a and b of one remote, each with a fact written (b's recalled twice) and synced
    both ways."""
    homes = _clones(tmp_path, ["a", "b"])
    with Memory(homes["b"]) as mem:
        mem.remember("the release checklist lives in the wiki")
        mem.recall("release checklist")
        mem.recall("the wiki")
    sync(resolve_paths(homes["b"]))
    with Memory(homes["a"]) as mem:
        mem.remember("the deploy region is eu-west-1")
    sync(resolve_paths(homes["a"]))
    sync(resolve_paths(homes["b"]))
    return homes


def _push_from(home: Path, message: str) -> None:
    _git(home, "add", "-A", ".")
    _git(home, "commit", "-qm", message)
    _git(home, "push", "-q", "origin", "HEAD:main")


# -- a path setting names its own kind of file, in its own place ------------------------------


@needs_git
@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ('memory_file = ".git/config"', "memory_file = '.git/config' is inside a .git folder"),
        ('trace_file = "memory.md"', "trace_file = 'memory.md' names "),
        ('memory_file = "talos.toml"', "memory_file = 'talos.toml' is not a markdown file"),
        ('memory_file = ".gitattributes"', "memory_file = '.gitattributes' is not a markdown"),
        ('trace_file = ".gitignore"', "trace_file = '.gitignore' names "),
        ('trace_file = ".talos/devices/DEVICE/audit.jsonl"', "which holds talos's own files"),
        ('state_dir = "skills"', "state_dir = 'skills' overlaps another folder"),
        ('sessions_dir = ".talos/devices"', "its logs would be read as transcripts"),
    ],
)
def test_a_remote_talos_toml_aiming_a_setting_at_another_file_of_the_home_is_refused(
    tmp_path: Path, setting: str, said: str
) -> None:
    """The failing inputs: a talos.toml pushed by another clone with ``memory_file =
    ".git/config"`` (the next remember appended to git's config), ``trace_file = "memory.md"``
    (each recall appended a JSON line to memory.md, which sync pushed everywhere),
    ``memory_file = "talos.toml"``, ``.gitattributes``, ``.gitignore``, this device's own
    audit log: sync took each, since each is inside the home."""
    homes = _synced_pair(tmp_path)
    b = resolve_paths(homes["b"])
    setting = setting.replace("DEVICE", b.device_dir.name)
    (homes["a"] / "talos.toml").write_text(f"{setting}\n")
    _push_from(homes["a"], "aim a setting")
    before = {p: p.read_bytes() for p in (b.memory_file, b.audit_file, homes["b"] / ".git/config")}
    with pytest.raises(GitError, match=r"talos\.toml puts talos's files where they do not") as e:
        sync(b)
    assert said in str(e.value)
    assert "nothing was changed here" in str(e.value)
    assert not (homes["b"] / "talos.toml").exists()
    assert {p: p.read_bytes() for p in before} == before


@needs_git
def test_a_remote_talos_toml_with_a_setting_of_its_own_kind_is_taken(tmp_path: Path) -> None:
    """The rule refuses only what names another kind of file: a memory file of another name
    inside the home travels (its first sync finds no memory there and makes none)."""
    homes = _synced_pair(tmp_path)
    (homes["a"] / "talos.toml").write_text(
        'memory_file = "notes/memory.md"\ntrace_file = ".talos/trace.jsonl"\n'
    )
    _push_from(homes["a"], "a memory file of another name")
    sync(resolve_paths(homes["b"]))
    assert resolve_paths(homes["b"]).memory_file == homes["b"] / "notes" / "memory.md"


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ('memory_file = ".git/config"', "memory_file = '.git/config' is inside a .git folder"),
        ('trace_file = "memory.md"', "trace_file = 'memory.md' names "),
        ('memory_file = "talos.toml"', "memory_file = 'talos.toml' is not a markdown file"),
        ('state_dir = "."', "state_dir = '.' is the home"),
        ('skills_dir = "."', "skills_dir = '.' is the home"),
        ('skills_dir = ".talos/skills"', "skills_dir = '.talos/skills' overlaps another folder"),
        ('memory_file = "skills/notes.md"', "puts memory.md"),
        ('trace_file = "../trace.jsonl"', "must be a file inside the state folder"),
        ('trace_file = ".talos/audit.jsonl"', "names 'audit.jsonl', a log of talos's"),
        ('trace_file = ".talos/trace.md"', "the trace is a JSON lines file"),
        ('sessions_dir = ".talos/**"', "its logs would be read as transcripts"),
        ('sessions_dir = ["logs", "../**"]', "which takes in the state folder"),
    ],
)
def test_a_local_talos_toml_aiming_a_setting_at_another_kind_of_file_is_an_error_with_its_line(
    tmp_path: Path, setting: str, said: str
) -> None:
    """The same rule where talos.toml is read: every command refuses the home with the file
    and line, before anything is written (``memory_file = ".git/config"`` made ``talos
    remember`` append a fact to git's config)."""
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    (home / ".git" / "config").write_text("[core]\n")
    (home / "memory.md").write_text("- a fact\n")
    (home / "talos.toml").write_text(f'lang = "en"\n{setting}\n')
    with pytest.raises(InputError) as e:
        resolve_paths(home)
    assert str(e.value).startswith(f"{home / 'talos.toml'}:2: ")
    assert said in str(e.value)
    assert (home / ".git" / "config").read_text() == "[core]\n"
    assert (home / "memory.md").read_text() == "- a fact\n"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
def test_a_trace_file_through_a_linked_folder_is_judged_where_it_lands(tmp_path: Path) -> None:
    """Sibling: ``trace_file = ".talos/logs/trace.jsonl"`` with ``.talos/logs`` a link to
    ``.git``: the name looks like the state folder's, the file would land in git's folder."""
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    (home / ".talos").mkdir()
    os.symlink(home / ".git", home / ".talos" / "logs")
    (home / "talos.toml").write_text('trace_file = ".talos/logs/trace.jsonl"\n')
    with pytest.raises(InputError, match=r"talos\.toml:1: trace_file = .* is inside a \.git"):
        resolve_paths(home)


def test_api_arguments_keep_their_places(tmp_path: Path) -> None:
    """The reference module passes its own paths (``recall_hits.json`` beside memory.md makes
    the state folder the home): an argument is the caller's choice, not held to the rule."""
    paths = resolve_paths(tmp_path, state_dir=tmp_path, trace_file=tmp_path / "trace.log")
    assert paths.state_dir == tmp_path and paths.trace_file == tmp_path / "trace.log"


# -- this device's logs are append-only ------------------------------------------------------


@needs_git
@pytest.mark.parametrize("log", ["audit.jsonl", "usage.jsonl"])
@pytest.mark.parametrize("how", ["delete", "rewrite", "shorten"])
def test_a_remote_that_deletes_or_rewrites_this_devices_audit_log_is_refused(
    tmp_path: Path, how: str, log: str
) -> None:
    """The failing input: another clone deleted (or rewrote) b's audit log and pushed; b's
    sync fast-forwarded over it: history said "no history", doctor "no writes recorded yet",
    and b's talos-written lines could no longer be restored. Sibling: its usage log (its
    counts)."""
    homes = _synced_pair(tmp_path)
    b = resolve_paths(homes["b"])
    own = (b.device_dir / log).relative_to(homes["b"])
    theirs = homes["a"] / own
    lines = theirs.read_bytes().splitlines(keepends=True)
    if how == "delete":
        _git(homes["a"], "rm", "-q", str(own))
    elif how == "rewrite":
        theirs.write_bytes(b'{"t": 1, "op": "forged"}\n' + b"".join(lines[1:]))
    else:
        theirs.write_bytes(b"".join(lines[:-1]))
    _push_from(homes["a"], f"{how} b's log")
    kept = (homes["b"] / own).read_bytes()
    with pytest.raises(GitError, match="changes this device's own logs") as e:
        sync(b)
    assert str(own) in str(e.value)
    assert {"delete": "deletes it", "rewrite": "rewrites it (its line 1 is not there)"}.get(
        how, "cuts it short"
    ) in str(e.value)
    assert (homes["b"] / own).read_bytes() == kept
    with Memory(homes["b"]) as mem:
        assert [h["op"] for h in mem.history()] != []


@needs_git
def test_a_remote_that_deletes_this_devices_log_while_it_wrote_on_is_named(
    tmp_path: Path,
) -> None:
    """Variant: both sides moved (b wrote on, a deleted b's log): the merge is refused with
    the log named, not as a file "git cannot merge"."""
    homes = _synced_pair(tmp_path)
    b = resolve_paths(homes["b"])
    own = b.audit_file.relative_to(homes["b"])
    _git(homes["a"], "rm", "-q", str(own))
    _push_from(homes["a"], "delete b's log")
    with Memory(homes["b"]) as mem:
        mem.remember("a fact written on b meanwhile")
    with pytest.raises(GitError, match=f"{own} deletes it"):
        sync(b)
    assert b.audit_file.exists()


@needs_git
def test_a_remote_state_dir_that_leaves_this_devices_logs_behind_is_refused(
    tmp_path: Path,
) -> None:
    """Sibling: a talos.toml that moves the state folder inside the home (a place of its own
    kind) leaves this device's logs behind: history would be empty here. Refused."""
    homes = _synced_pair(tmp_path)
    (homes["a"] / "talos.toml").write_text('state_dir = ".state"\n')
    _push_from(homes["a"], "move the state folder")
    with pytest.raises(GitError, match=r"leaves it behind \(state_dir moves to"):
        sync(resolve_paths(homes["b"]))
    assert not (homes["b"] / "talos.toml").exists()


@needs_git
def test_a_remote_behind_this_devices_log_is_no_rewrite(tmp_path: Path) -> None:
    """The remote's copy of this device's log is older when this device wrote since its last
    push: that is no change of the log, and sync goes through both ways."""
    homes = _synced_pair(tmp_path)
    with Memory(homes["b"]) as mem:
        mem.remember("another fact written on b")
    with Memory(homes["a"]) as mem:
        mem.remember("another fact written on a")
    sync(resolve_paths(homes["a"]))
    assert sync(resolve_paths(homes["b"])).pushed
    assert sync(resolve_paths(homes["a"])).stopped is None


@needs_git
def test_a_remote_talos_toml_that_does_not_parse_is_refused(tmp_path: Path) -> None:
    """Sibling: a talos.toml that is not TOML from another clone was taken, and every command
    on this device then stopped on it."""
    homes = _synced_pair(tmp_path)
    (homes["a"] / "talos.toml").write_text('memory_file = "memory.md\n')
    _push_from(homes["a"], "a broken talos.toml")
    with pytest.raises(GitError, match=r"talos\.toml cannot be read \("):
        sync(resolve_paths(homes["b"]))
    assert not (homes["b"] / "talos.toml").exists()
