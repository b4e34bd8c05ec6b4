"""Attacks on one memory on several machines (design §12): each test is a break found by
interleaving writes, hand edits and syncs on clones of one repository, by odd git states, by
hostile content from a remote, or by kills, written from the input that broke it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import git as _git
from helpers import git_clones as _clones
from hypothesis import given
from hypothesis import strategies as st

from talos.home import resolve_paths
from talos.memory import Memory
from talos.sync.git import sync
from talos.sync.merge import merge_lines, merge_text

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

OLD = "- reflected 6 on mu <!-- reflect 2026-12-02 id=r07df4df748 -->"
NEW_A = "- reflected 19 on alpha <!-- reflect 2026-12-02 id=r85c7a702ee -->"
NEW_B = "- reflected 35 on kappa <!-- reflect 2026-12-02 id=r4a03a96de5 -->"


# -- the merge: what is "a person's line edited on both sides" ---------------------------------


def test_a_talos_line_forgotten_on_both_sides_next_to_new_ones_is_no_persons_edit() -> None:
    """Both devices forgot the same line (the dead list is the same everywhere: counts are
    merged) and each wrote a new fact after it: the new records are not edits of the old one
    (other ids), so sync must not stop for a person."""
    merged = merge_lines([OLD], [NEW_A], [NEW_B])
    assert merged.lines == [NEW_A, NEW_B]
    assert merged.overlaps == []


def test_a_persons_line_is_not_edited_into_a_talos_record() -> None:
    mine = "- reflected 19 on alpha, my own note"
    merged = merge_lines([mine], [NEW_A], ["- reflected 19 on alpha, my own notes"])
    assert merged.overlaps == []


def test_a_talos_line_edited_by_hand_on_both_sides_keeps_its_id_and_is_reported() -> None:
    here = OLD.replace("on mu", "on mu and nu")
    there = OLD.replace("on mu", "on mu only")
    merged = merge_lines([OLD], [here], [there])
    assert merged.lines == [here, there]
    [o] = merged.overlaps
    assert (o.was, o.here, o.there) == (OLD, here, there)


def test_both_devices_forget_the_dead_line_and_write_on_then_sync_goes_through(
    tmp_path: Path,
) -> None:
    homes = _clones(tmp_path, ["a", "b"])
    with Memory(homes["a"]) as mem:
        mem.remember("the nightly job cleans the tmp folder", source="reflect")
    for name in ("a", "b"):
        assert sync(resolve_paths(homes[name])).stopped is None
    for name, home in homes.items():
        with Memory(home) as mem:
            assert mem.forget([("fact", "the nightly job cleans the tmp folder")]) == 1
            mem.remember(f"device {name} reflected on the build cache", source="reflect")
    for name in ("a", "b", "a"):
        res = sync(resolve_paths(homes[name]))
        assert (res.stopped, res.person_conflicts) == (None, [])
    a, b = ((h / "memory.md").read_text() for h in homes.values())
    assert a == b and "nightly job" not in a
    assert "device a reflected" in a and "device b reflected" in a


# -- line endings --------------------------------------------------------------------------------

NIGHTLY = "- the nightly job cleans the tmp folder <!-- reflect 2026-12-02 id=r77a3a94887 -->"


def test_a_file_turned_to_crlf_on_one_side_is_no_change_of_its_lines() -> None:
    """A Windows editor saved memory.md with CRLF on one device while the other forgot a line
    and wrote one: the forgotten line came back (every line of the CRLF side looked new)."""
    base = f"{NIGHTLY}\n- my own line\n".encode()
    ours = f"{NIGHTLY}\r\n- my own line\r\n- b wrote this\r\n".encode()
    theirs = b"- my own line\n- a wrote this\n"
    data, merged = merge_text(base, ours, theirs)
    assert data == b"- my own line\r\n- b wrote this\r\n- a wrote this\r\n"
    assert merged.overlaps == []
    data, _ = merge_text(base, theirs, ours)  # the other way round: the change of ending wins
    assert data == b"- my own line\r\n- a wrote this\r\n- b wrote this\r\n"


def test_a_crlf_file_stays_crlf_when_neither_side_changed_the_ending() -> None:
    base = b"- one\r\n- two\r\n"
    data, _ = merge_text(base, b"- one\r\n- two\r\n- x\r\n", b"- zero\r\n- one\r\n- two\r\n")
    assert data == b"- zero\r\n- one\r\n- two\r\n- x\r\n"


# -- writes during a sync ----------------------------------------------------------------------


def test_a_remember_while_sync_fetches_is_committed_in_a_next_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's remember landed between sync's commit and its move of the work tree (during
    the fetch): git reset --keep refused ("Entry 'memory.md' not uptodate") and sync failed
    with git's words. It must commit the new line and merge again."""
    from talos.sync import git

    homes = _clones(tmp_path, ["a", "b"])
    for name in ("a", "b"):
        with Memory(homes[name]) as mem:
            mem.remember(f"device {name} wrote a fact about the cache")
        sync(resolve_paths(homes[name]))
    with Memory(homes["a"]) as mem:
        mem.remember("device a wrote again")
    sync(resolve_paths(homes["a"]))
    real, writes = git.run_git, []

    def fetch_then_write(repo: Path, *args: str, **kw: object) -> subprocess.CompletedProcess:
        done = real(repo, *args, **kw)  # type: ignore[arg-type]
        if args[0] == "fetch" and not writes:
            with Memory(homes["b"]) as mem:
                writes.append(mem.remember("device b wrote during the fetch"))
        return done

    monkeypatch.setattr(git, "run_git", fetch_then_write)
    res = sync(resolve_paths(homes["b"]))
    assert (res.stopped, res.pushed) == (None, True)
    monkeypatch.setattr(git, "run_git", real)
    sync(resolve_paths(homes["a"]))
    a, b = ((h / "memory.md").read_text() for h in homes.values())
    assert a == b
    assert "device b wrote during the fetch" in a and "device a wrote again" in a


# -- git states ----------------------------------------------------------------------------------


def test_a_home_in_a_bigger_repository_commits_only_the_home(tmp_path: Path) -> None:
    """The home is a folder of the person's code repository, where the person had staged a
    change of their own: talos sync committed and pushed it as "talos sync from …"."""
    [repo] = _clones(tmp_path, ["repo"]).values()
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("code\n")
    _git(repo, "add", "src")
    _git(repo, "commit", "-qm", "code")
    (repo / "src" / "app.py").write_text("code\nmore code, not ready\n")
    _git(repo, "add", "src/app.py")
    home = repo / "notes"
    home.mkdir()
    with Memory(home) as mem:
        mem.remember("the notes folder holds the team's memory")
    assert sync(resolve_paths(home)).pushed
    committed = _git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert "src/app.py" not in committed and "notes/memory.md" in committed
    assert _git(repo, "diff", "--cached", "--name-only").split() == ["src/app.py"]


def test_a_memory_file_outside_the_repository_is_refused_not_left_behind(tmp_path: Path) -> None:
    """talos.toml puts memory.md outside the home's repository: sync said it pushed, and the
    memory never travelled."""
    from talos.errors import InputError

    [home] = _clones(tmp_path, ["a"]).values()
    (tmp_path / "elsewhere").mkdir()
    (home / "talos.toml").write_text(f'memory_file = "{tmp_path / "elsewhere" / "memory.md"}"\n')
    with Memory(home) as mem:
        mem.remember("a fact that must travel")
    with pytest.raises(InputError, match=r"memory\.md .*outside the repository"):
        sync(resolve_paths(home))


def test_a_memory_file_elsewhere_in_the_repository_travels(tmp_path: Path) -> None:
    homes = _clones(tmp_path, ["a", "b"])
    for repo in homes.values():
        (repo / "notes").mkdir()
        (repo / "notes" / "talos.toml").write_text('memory_file = "../memory.md"\n')
    with Memory(homes["a"] / "notes") as mem:
        mem.remember("a fact kept at the top of the repository")
    sync(resolve_paths(homes["a"] / "notes"))
    sync(resolve_paths(homes["b"] / "notes"))
    assert "kept at the top" in (homes["b"] / "memory.md").read_text()
    for name, home in homes.items():  # both sides change it: merged by talos's rules
        with Memory(home / "notes") as mem:
            mem.remember(f"device {name} wrote next to the other")
    for name in ("a", "b", "a"):
        assert sync(resolve_paths(homes[name] / "notes")).stopped is None
    a, b = ((h / "memory.md").read_text() for h in homes.values())
    assert a == b and "device a wrote" in a and "device b wrote" in a


def test_a_persons_change_outside_the_home_in_the_way_of_the_merge_is_named(
    tmp_path: Path,
) -> None:
    """The other clone changed a file of the bigger repository that the person is editing
    here: git cannot move the work tree. Sync went round three times and blamed memory.md."""
    from talos.sync.git import GitError

    homes = _clones(tmp_path, ["a", "b"])
    (homes["a"] / "app.py").write_text("code\n")
    _git(homes["a"], "add", "app.py")
    _git(homes["a"], "commit", "-qm", "code")
    _git(homes["a"], "push", "-q", "origin", "HEAD:main")
    _git(homes["b"], "pull", "-q", "origin", "main")
    (homes["a"] / "app.py").write_text("code\nchanged on a\n")
    _git(homes["a"], "commit", "-qam", "change")
    _git(homes["a"], "push", "-q", "origin", "HEAD:main")
    (homes["b"] / "app.py").write_text("code\nbeing edited on b\n")
    with Memory(homes["b"] / "notes") as mem:
        mem.remember("a fact written on b")
    with pytest.raises(GitError, match=r"app\.py") as e:
        sync(resolve_paths(homes["b"] / "notes"))
    assert "memory.md" not in str(e.value)
    assert (homes["b"] / "app.py").read_text() == "code\nbeing edited on b\n"


def test_a_new_home_on_another_branch_name_than_the_remote_is_told_not_split(
    tmp_path: Path,
) -> None:
    """git init made "master" on a new machine while the remote's branch is "main": sync
    pushed a second branch, and the two machines never saw each other's memory."""
    from talos.sync.git import GitError

    [a] = _clones(tmp_path, ["a"]).values()
    with Memory(a) as mem:
        mem.remember("a fact from the first machine")
    sync(resolve_paths(a))
    new = tmp_path / "new"
    _git(tmp_path, "init", "-q", "-b", "master", str(new))
    _git(new, "remote", "add", "origin", str(tmp_path / "remote.git"))
    with Memory(new) as mem:
        mem.remember("a fact from the new machine")
    with pytest.raises(GitError, match="git branch -m main"):
        sync(resolve_paths(new))
    assert _git(tmp_path / "remote.git", "branch", "--format=%(refname:short)").split() == ["main"]
    _git(new, "branch", "-m", "main")
    assert sync(resolve_paths(new)).pushed
    assert "from the first machine" in (new / "memory.md").read_text()


def test_a_push_that_meets_another_devices_push_goes_round_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three homes synced at the same moment to a remote folder: a push that found the
    branch locked by another push failed ("[remote rejected] HEAD -> main (failed to update
    ref)", exit 1) instead of fetching and merging again. The other push is a live process
    holding the lock; here this process holds it until the first push has failed."""
    import os

    from talos.sync import git

    homes = _clones(tmp_path, ["a", "b"])
    with Memory(homes["a"]) as mem:
        mem.remember("device a wrote first")
    sync(resolve_paths(homes["a"]))
    with Memory(homes["b"]) as mem:
        mem.remember("device b wrote meanwhile")
    ref_lock = tmp_path / "remote.git" / "refs" / "heads" / "main.lock"
    fd = os.open(ref_lock, os.O_CREAT | os.O_WRONLY)  # held by a live process: not stale
    real, pushes = git.run_git, []

    def push_meets_lock(repo: Path, *args: str, **kw: object) -> subprocess.CompletedProcess:
        done = real(repo, *args, **kw)  # type: ignore[arg-type]
        if args[0] == "push" and not pushes:
            pushes.append(done.stderr)
            os.close(fd)
            ref_lock.unlink()  # the other push is done
        return done

    monkeypatch.setattr(git, "run_git", push_meets_lock)
    monkeypatch.setattr(git, "RACE_PAUSE", 0.0)
    res = sync(resolve_paths(homes["b"]))
    assert "failed to update ref" in pushes[0] or "cannot lock ref" in pushes[0]
    assert (res.stopped, res.pushed) == (None, True)


def test_a_remote_that_refuses_is_quoted_in_its_own_words(tmp_path: Path) -> None:
    """A pre-receive hook said why it refused; the error showed git's last three lines,
    which left the hook's words out."""
    from talos.sync.git import GitError

    [a] = _clones(tmp_path, ["a"]).values()
    hook = tmp_path / "remote.git" / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'pushes are frozen until Monday' >&2\nexit 1\n")
    hook.chmod(0o755)
    with Memory(a) as mem:
        mem.remember("a fact the remote refuses")
    with pytest.raises(GitError, match="pushes are frozen until Monday"):
        sync(resolve_paths(a))


# -- locks -----------------------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc")
def test_a_persons_git_commit_waiting_in_its_editor_keeps_its_index_lock(tmp_path: Path) -> None:
    """git keeps index.lock while a person's commit waits for its editor, without holding it
    open: sync took it for a lock a killed git left, removed it, and wrote the index under the
    person's commit."""
    import os
    import sys
    import time

    from talos.sync.git import GitError

    [a] = _clones(tmp_path, ["a"]).values()
    with Memory(a) as mem:
        mem.remember("a fact before the person's commit")
    sync(resolve_paths(a))
    (a / "notes.txt").write_text("the person's own file\n")
    _git(a, "add", "notes.txt")
    _git(a, "commit", "-qm", "notes")
    (a / "notes.txt").write_text("the person's own file, edited\n")
    go = tmp_path / "editor-may-finish"
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import pathlib, sys, time\n"
        f"while not pathlib.Path({str(go)!r}).exists(): time.sleep(0.02)\n"
        "pathlib.Path(sys.argv[1]).write_text('the person commits notes\\n')\n"
    )
    env = {**os.environ, "GIT_EDITOR": f"{sys.executable} {editor}"}
    person = subprocess.Popen(["git", "commit", "-qa"], cwd=a, env=env)
    try:
        lock = a / ".git" / "index.lock"
        for _ in range(500):
            if lock.exists():
                break
            time.sleep(0.01)
        assert lock.exists()
        with Memory(a) as mem:
            mem.remember("a fact written while the person commits")
        with pytest.raises(GitError, match=r"index\.lock exists: a commit waiting for its editor"):
            sync(resolve_paths(a))
        assert lock.exists()
    finally:
        go.touch()
        assert person.wait(timeout=30) == 0
    assert _git(a, "log", "-1", "--format=%s").strip() == "the person commits notes"
    assert _git(a, "show", "--name-only", "--format=", "HEAD").split() == ["notes.txt"]
    assert sync(resolve_paths(a)).pushed  # and sync goes on once the person is done


# -- hostile content from a remote -------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
def test_links_out_of_the_home_from_a_remote_are_refused(tmp_path: Path) -> None:
    """Another clone pushed this device's folder and memory.md as symbolic links out of the
    home: sync moved them in, and this device's next writes went to the link targets (its
    audit log into a folder elsewhere, its facts appended to a file elsewhere)."""
    from talos.sync.git import GitError

    homes = _clones(tmp_path, ["a", "b"])
    with Memory(homes["b"]) as mem:
        mem.remember("a fact written on b before the attack")
    sync(resolve_paths(homes["b"]))
    sync(resolve_paths(homes["a"]))
    own = resolve_paths(homes["b"]).device_dir.name
    a, outside, secret = homes["a"], tmp_path / "outside", tmp_path / "secret.txt"
    outside.mkdir()
    secret.write_text("not talos's\n")
    _git(a, "rm", "-rq", f".talos/devices/{own}", "memory.md")
    (a / ".talos" / "devices").mkdir(parents=True, exist_ok=True)
    os.symlink(outside, a / ".talos" / "devices" / own)
    os.symlink(secret, a / "memory.md")
    _git(a, "add", "-f", f".talos/devices/{own}", "memory.md")
    _git(a, "commit", "-qm", "links")
    _git(a, "push", "-q", "origin", "HEAD:main")
    before = (homes["b"] / "memory.md").read_bytes()
    with pytest.raises(GitError, match=r"symbolic link.*memory\.md") as e:
        sync(resolve_paths(homes["b"]))
    assert f".talos/devices/{own}" in str(e.value)
    assert not (homes["b"] / "memory.md").is_symlink()
    assert (homes["b"] / "memory.md").read_bytes() == before
    assert not (homes["b"] / ".talos" / "devices" / own).is_symlink()
    with Memory(homes["b"]) as mem:
        mem.remember("a fact written on b after the attack")
    assert os.listdir(outside) == [] and secret.read_text() == "not talos's\n"


def test_a_skill_restore_from_another_devices_log_stays_in_the_home(tmp_path: Path) -> None:
    """Another device's audit log (it travels with the home) named a forgotten skill whose
    place is outside the home and whose trash copy is a skill of this home: talos restore
    moved this home's file out to the place the entry named."""
    import json

    from talos.errors import InputError

    home = tmp_path / "home"
    (home / "skills").mkdir(parents=True)
    payload = home / "skills" / "payload.md"
    payload.write_text("---\nname: p\ndescription: a skill\n---\nbody\n")
    escaped = tmp_path / "autostart" / "payload.desktop"
    evil = home / ".talos" / "devices" / "evil-000001"
    evil.mkdir(parents=True)
    (evil / "device.json").write_text(json.dumps({"id": "evil-000001", "home": str(home)}))
    entry = {
        "t": 1,
        "txn": "t1",
        "op": "skill-forget",
        "id": "S000000001",
        "scope": "global",
        "file": str(escaped),
        "before": str(escaped),
        "after": None,
        "trash": str(payload),
        "state": "prepared",
    }
    (evil / "audit.jsonl").write_text(
        json.dumps(entry) + "\n" + json.dumps({"t": 2, "txn": "t1", "op": "commit"}) + "\n"
    )
    with Memory(home) as mem, pytest.raises(InputError, match="outside"):
        mem.restore("S000000001")
    assert payload.exists() and not escaped.exists()


# -- forget, restore and the order of two machines' clocks -------------------------------------


def test_a_restore_on_another_device_is_not_undone_by_the_forget_it_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Device zz-a forgot a line; device aa-b restored it within the same second (or with its
    clock behind): the logs are merged by time, then by log name, so the forget read as the
    later entry, and zz-a's next sync took the restored line out again as a tombstone."""
    line = "the nightly job cleans the tmp folder"
    homes = _clones(tmp_path, ["a", "b"])
    device = {"a": "zz-a", "b": "aa-b"}

    def on(name: str) -> Path:
        monkeypatch.setenv("TALOS_DEVICE", device[name])
        return homes[name]

    with Memory(on("a")) as mem:
        mem.remember(line, source="reflect")
    sync(resolve_paths(on("a")))
    sync(resolve_paths(on("b")))
    with Memory(on("a")) as mem:
        [gone] = mem.forget_records([("fact", line)])
    sync(resolve_paths(on("a")))
    sync(resolve_paths(on("b")))
    with Memory(on("b")) as mem:
        mem.restore(gone.id)
    for name in ("b", "a", "b"):
        assert sync(resolve_paths(on(name))).forgotten_again == []
    for home in homes.values():
        assert line in (home / "memory.md").read_text()
    with Memory(on("a")) as mem:  # forgotten again later: it stays forgotten
        assert mem.forget([("fact", line)]) == 1
    for name in ("a", "b"):
        sync(resolve_paths(on(name)))
    for home in homes.values():
        assert line not in (home / "memory.md").read_text()


# -- kills ---------------------------------------------------------------------------------------


def test_a_sync_killed_while_it_built_its_commit_leaves_nothing_in_the_way(tmp_path: Path) -> None:
    """A kill while git wrote sync's own scratch index left its lock; every later sync failed
    ("Unable to create …/talos-sync.index.lock: File exists")."""
    [a] = _clones(tmp_path, ["a"]).values()
    with Memory(a) as mem:
        mem.remember("a fact before the kill")
    (a / ".git" / "talos-sync.index.lock").write_bytes(b"DIRC")
    (a / ".git" / "talos-sync.index").write_bytes(b"DIRC half")
    assert sync(resolve_paths(a)).pushed
    assert "before the kill" in _git(tmp_path / "remote.git", "show", "main:memory.md")


def test_a_file_reformatted_on_both_sides_merges_in_linear_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every line of memory.md edited on both devices (bullets changed on one, a note added
    to each line on the other): each removed line was compared with every new one, and 2,000
    lines took 54 s (git gave the driver up at 60). Both versions of each line are kept and
    reported; the comparisons stay a few per line."""
    from difflib import SequenceMatcher

    from talos.sync import merge

    n = 300
    base = [f"- a person's note number {i} about topic {i % 17} and more words" for i in range(n)]
    ours = [line.replace("- ", "* ") for line in base]
    theirs = [line + " (checked)" for line in base]
    calls = [0]
    real = SequenceMatcher.ratio

    def counted(self: SequenceMatcher) -> float:  # type: ignore[type-arg]
        calls[0] += 1
        return real(self)

    monkeypatch.setattr(SequenceMatcher, "ratio", counted)
    merged = merge.merge_lines(base, ours, theirs)
    assert len(merged.lines) == 2 * n and len(merged.overlaps) == n
    assert merged.overlaps[7] == merge.Overlap(base[7], ours[7], theirs[7])
    assert calls[0] <= 2 * n * (2 * merge.NEAR + 1)


def test_a_big_file_of_sections_and_blank_lines_merges_at_once() -> None:
    """A 40,000-line memory.md of sections split by blank lines, one line added on each
    side: difflib over the whole file was quadratic in the repeated blank line (15 s at
    20,000 lines, minutes beyond; git gives the driver 60 s). It takes well under a second."""
    import time

    base: list[str] = []
    for i in range(10_000):
        base += [f"## section {i}", "", f"- fact {i} about things", ""]
    ours = [*base[:10], "- new on this side", *base[10:]]
    theirs = [*base[:-10], "- new on the other side", *base[-10:]]
    started = time.perf_counter()
    merged = merge_lines(base, ours, theirs).lines
    assert time.perf_counter() - started < 5
    added = [*base[:10], "- new on this side", *base[10:-10], "- new on the other side"]
    assert merged == [*added, *base[-10:]]


_SOME = st.lists(st.sampled_from(["", "a", "b", "c", "## h"]), max_size=10)


@given(_SOME, _SOME, _SOME)
def test_repeated_lines_merge_by_the_same_rules(
    base: list[str], ours: list[str], theirs: list[str]
) -> None:
    assert merge_lines(base, base, theirs).lines == theirs
    assert merge_lines(base, ours, base).lines == ours
    assert merge_lines(base, ours, ours).lines == ours
    merged = merge_lines(base, ours, theirs).lines
    for line in {*ours, *theirs} - set(base):
        assert line in merged


# -- a random day on three clones (bench/sync_interleavings.py runs many) -----------------------


def test_a_random_day_of_writes_hand_edits_and_syncs_on_three_clones(tmp_path: Path) -> None:
    """One seed of bench/sync_interleavings.py, hostile hand edits included: every memory.md
    and view the same, no person's line lost, forgets kept, restores kept, every audit log
    everywhere, the same conflicts."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import sync_interleavings

    run = sync_interleavings.one(14, 40, True, tmp_path)  # the seed that stopped at first
    assert run.problems == [], run.log


def test_a_talos_toml_from_a_remote_that_moves_files_out_of_the_home_is_refused(
    tmp_path: Path,
) -> None:
    """talos.toml travels with the home; another clone set trace_file and memory_file to
    files out of the home, and this device's next recall and remember wrote there."""
    from talos.sync.git import GitError

    homes = _clones(tmp_path, ["a", "b"])
    with Memory(homes["b"]) as mem:
        mem.remember("a fact about the release checklist")
    sync(resolve_paths(homes["b"]))
    sync(resolve_paths(homes["a"]))
    outside = tmp_path / "outside"
    outside.mkdir()
    (homes["a"] / "talos.toml").write_text(
        f'trace_file = "{outside / "trace.jsonl"}"\nmemory_file = "../outside/memory.md"\n'
        'skills_dir = "skills/team"\nsessions_dir = "~/.claude/projects"\n'
    )
    _git(homes["a"], "add", "talos.toml")
    _git(homes["a"], "commit", "-qm", "places")
    _git(homes["a"], "push", "-q", "origin", "HEAD:main")
    with pytest.raises(GitError, match="trace_file") as e:
        sync(resolve_paths(homes["b"]))
    assert "memory_file" in str(e.value)
    assert "skills_dir" not in str(e.value) and "sessions_dir" not in str(e.value)
    assert not (homes["b"] / "talos.toml").exists()
    with Memory(homes["b"]) as mem:
        mem.recall("release checklist")
    assert os.listdir(outside) == []


def test_a_supersede_on_another_device_in_the_same_second_is_no_outside_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Device zz-a remembered a key; device aa-b superseded it within the same second. The
    logs merge by time, then by log name, so the remember read as the last word on the
    record: doctor on every device said it "was removed outside talos" and told the person
    to restore the old value."""
    from talos.doctor import diagnose

    homes = _clones(tmp_path, ["a", "b"])
    device = {"a": "zz-a", "b": "aa-b"}

    def on(name: str) -> Path:
        monkeypatch.setenv("TALOS_DEVICE", device[name])
        return homes[name]

    with Memory(on("a")) as mem:
        mem.remember("the region is eu-west-1", key="region")
    sync(resolve_paths(on("a")))
    sync(resolve_paths(on("b")))
    with Memory(on("b")) as mem:
        mem.remember("the region is us-east-1", key="region")
    sync(resolve_paths(on("b")))
    sync(resolve_paths(on("a")))
    for name in ("a", "b"):
        report = diagnose(on(name))
        assert [f.status for f in report.findings if f.check == "audit"] == ["ok"]


OLD_K1 = "- k1 value 39 delta <!-- user 2026-01-02 id=r9feba78221 key=k1 -->"
NEW_K1 = "- k1 value 59 eta <!-- user 2026-01-02 id=re393be709b key=k1 supersedes=r9feba78221 -->"


def test_a_talos_line_moved_on_one_side_and_superseded_on_the_other_stays_out() -> None:
    """A person moved lines on one device (a talos line among them) while the other
    superseded that line: the moved copy read as a line added, and the old value came back
    beside its successor (found by bench/sync_interleavings.py; doctor then said the record
    was back although talos removed it)."""
    base = ["- a", "- b", OLD_K1, "- c"]
    merged = merge_lines(base, ["- a", "- b", NEW_K1, "- c"], [OLD_K1, "- a", "- b", "- c"])
    assert merged.lines == ["- a", "- b", NEW_K1, "- c"]
    merged = merge_lines(base, [OLD_K1, "- a", "- b", "- c"], ["- a", "- b", "- c"])
    assert merged.lines == ["- a", "- b", "- c"]  # forgotten there, moved here: out


def test_a_persons_line_moved_on_one_side_is_kept_when_the_other_left_it() -> None:
    base = ["- a", "- mine", "- b"]
    merged = merge_lines(base, ["- mine", "- a", "- b"], ["- a", "- mine", "- b", "- c"])
    assert merged.lines == ["- mine", "- a", "- b", "- c"]


def test_a_forget_the_restore_did_not_know_of_stands_and_doctor_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Device b forgot a line while device a forgot and restored it, seconds later: the
    merge keeps b's forget (a's restore lifted only its own), and doctor then said on every
    device that the restored record "was removed outside talos" (found by
    bench/sync_interleavings.py). A restore made knowing both forgets brings it back for
    good."""
    import time
    from types import SimpleNamespace

    from talos.doctor import diagnose
    from talos.writer import audit

    now = [int(time.time())]

    def tick() -> float:  # each write of the log five seconds after the last
        now[0] += 5
        return float(now[0])

    monkeypatch.setattr(audit, "time", SimpleNamespace(time=tick, strftime=time.strftime))

    line = "the nightly job cleans the tmp folder"
    homes = _clones(tmp_path, ["a", "b"])
    with Memory(homes["a"]) as mem:
        mem.remember(line, source="reflect")
    for name in ("a", "b"):
        sync(resolve_paths(homes[name]))
    with Memory(homes["b"]) as mem:
        assert mem.forget([("fact", line)]) == 1
    with Memory(homes["a"]) as mem:
        [gone] = mem.forget_records([("fact", line)])
        mem.restore(gone.id)
    for name in ("a", "b", "a"):
        sync(resolve_paths(homes[name]))
    for home in homes.values():
        assert line not in (home / "memory.md").read_text()
        assert [f.status for f in diagnose(home).findings if f.check == "audit"] == ["ok"]
    with Memory(homes["a"]) as mem:
        mem.restore(gone.id)
    for name in ("a", "b", "a"):
        sync(resolve_paths(homes[name]))
    for home in homes.values():
        assert line in (home / "memory.md").read_text()


def test_a_global_ignore_of_md_and_jsonl_files_does_not_keep_the_memory_home(
    tmp_path: Path,
) -> None:
    """The person's global git ignore file lists *.md and *.jsonl: sync said it pushed, and
    neither memory.md nor the audit log ever left the machine."""
    [a] = _clones(tmp_path, ["a"]).values()
    ignore = tmp_path / "global-ignore"
    ignore.write_text("*.md\n*.jsonl\n")
    _git(a, "config", "core.excludesFile", str(ignore))
    with Memory(a) as mem:
        mem.remember("a fact that must travel")
    assert sync(resolve_paths(a)).pushed
    tracked = _git(a, "ls-files").split()
    assert "memory.md" in tracked
    assert any(t.endswith("/audit.jsonl") for t in tracked)


def test_a_home_its_bigger_repository_ignores_is_refused(tmp_path: Path) -> None:
    """The bigger repository ignores the home's folder: nothing of it could be committed, and
    sync said it pushed."""
    from talos.errors import InputError

    [repo] = _clones(tmp_path, ["repo"]).values()
    (repo / ".gitignore").write_text("notes/\n")
    with Memory(repo / "notes") as mem:
        mem.remember("a fact that must travel")
    with pytest.raises(InputError, match=r"ignored by git \(\.gitignore:1: notes/\)"):
        sync(resolve_paths(repo / "notes"))
