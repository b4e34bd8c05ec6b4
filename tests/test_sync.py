"""One memory on several machines (design §12): memory.md's three-way merge, ``talos sync``
through a bare repository and two or three clones, and the same day through plain file copies
(a sync folder). Every home ends with the same memory.md and view, counts that are the sums,
every device's audit lines, no person's line lost, a forget that stays forgotten and the
equal-standing conflict reported everywhere."""

from __future__ import annotations

import contextlib
import json
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
from talos.sync.device import device_dirs
from talos.sync.git import sync
from talos.sync.merge import merge_lines, merge_text

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

# -- the merge ---------------------------------------------------------------------------------


def test_both_sides_additions_are_kept_once() -> None:
    base = ["a", "b"]
    assert merge_lines(base, ["a", "b", "x"], ["a", "b", "y"]).lines == ["a", "b", "x", "y"]
    assert merge_lines(base, ["a", "b", "x"], ["a", "b", "x"]).lines == ["a", "b", "x"]


def test_a_forget_on_one_side_stays_forgotten_next_to_an_addition() -> None:
    # git's union merge brings "b" back here: the hunks touch, and union keeps both sides
    merged = merge_lines(["a", "b"], ["a"], ["a", "b", "y"])
    assert merged.lines == ["a", "y"]
    assert merged.overlaps == []


def test_an_edit_wins_over_a_removal() -> None:
    assert merge_lines(["a", "b", "c"], ["a", "c"], ["a", "B!", "c"]).lines == ["a", "B!", "c"]


def test_a_persons_line_edited_on_both_sides_keeps_both_and_is_reported() -> None:
    base = ["- my own line about coffee", "- other"]
    merged = merge_lines(
        base,
        ["- my own line about tea", "- other", "- x note"],
        ["- my own line about cocoa", "- other"],
    )
    assert merged.lines == [
        "- my own line about tea",
        "- my own line about cocoa",
        "- other",
        "- x note",
    ]
    [o] = merged.overlaps
    assert (o.was, o.here, o.there) == (
        "- my own line about coffee",
        "- my own line about tea",
        "- my own line about cocoa",
    )


def test_two_versions_of_a_keyed_fact_are_the_trust_rules_to_weigh() -> None:
    old = "- editor is vim <!-- user 2026-12-01 id=r0000000001 key=editor -->"
    tag = "user 2026-12-02 id=r000000000{} key=editor supersedes=r0000000001"
    one = f"- editor is helix <!-- {tag.format(2)} -->"
    two = f"- editor is emacs <!-- {tag.format(3)} -->"
    merged = merge_lines([old], [one], [two])
    assert merged.lines == [one, two]
    assert merged.overlaps == []


def test_bytes_keep_undecodable_bytes_and_end_in_a_newline() -> None:
    data, _ = merge_text(b"a\n\xff\n", b"a\n\xff\nx", b"a\n\xff\n")
    assert data == b"a\n\xff\nx\n"


_LINES = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), max_size=8, unique=True)


@given(_LINES, _LINES, _LINES)
def test_no_added_line_is_lost_and_one_side_unchanged_takes_the_other(
    base: list[str], ours: list[str], theirs: list[str]
) -> None:
    merged = merge_lines(base, ours, theirs).lines
    for line in {*ours, *theirs} - set(base):
        assert line in merged
    for line in set(base) - set(ours) - set(theirs):
        assert line not in merged
    assert merge_lines(base, base, theirs).lines == theirs
    assert merge_lines(base, ours, base).lines == ours


# -- the scripted day --------------------------------------------------------------------------


def _recall(home: Path, query: str, times: int) -> None:
    with Memory(home) as mem:
        for _ in range(times):
            mem.recall(query)


def _day(home: Path, name: str) -> None:
    """One device's day: remember, supersede its own key, a key shared with the others (a
    conflict of equal standing), recalls, a person's edit."""
    with Memory(home) as mem:
        mem.remember(f"device {name} builds the docs with mkdocs")
        mem.remember(f"the {name} runner uses 4 cores", key=f"runner.{name}")
        mem.remember(f"the {name} runner uses 8 cores", key=f"runner.{name}")  # supersede
        mem.remember(f"the team editor is {name}-edit", key="team.editor")
    _recall(home, "how are the docs built", 3)
    _recall(home, "printer badge floor", 3)
    with (home / "memory.md").open("a", encoding="utf-8") as f:
        f.write(f"- a note {name} typed by hand about the coffee machine\n")


def _everything(homes: dict[str, Path]) -> None:
    """Sync round robin until every home has everything (two rounds)."""
    for _ in range(2):
        for home in homes.values():
            res = sync(resolve_paths(home))
            assert res.stopped is None, res.stopped


def _view(home: Path) -> list[str]:
    with Memory(home) as mem:
        return sorted(n.raw for n in mem.nodes() if n.kind == "fact")


def _audit_lines(home: Path) -> dict[str, list[str]]:
    paths = resolve_paths(home)
    return {
        d.name: (d / "audit.jsonl").read_text("utf-8").splitlines()
        for d in device_dirs(paths.state_dir)
        if (d / "audit.jsonl").exists()
    }


@pytest.mark.parametrize("order", [["a", "b", "c"], ["c", "a", "b"]])
def test_a_scripted_day_on_three_clones_ends_the_same_everywhere(
    tmp_path: Path, order: list[str]
) -> None:
    homes = _clones(tmp_path, ["a", "b", "c"])
    first = homes[order[0]]
    with Memory(first) as mem:
        mem.remember("the team editor is vim", key="team.editor")
        mem.remember("the nightly job cleans the tmp folder", source="reflect")
        mem.remember("the printer on floor two needs a badge")
    sync(resolve_paths(first))
    for name in order[1:]:
        sync(resolve_paths(homes[name]))
    # a forget on one device, synced before the others wrote next to it
    with Memory(homes[order[1]]) as mem:
        assert mem.forget([("fact", "the nightly job cleans the tmp folder")]) == 1
    for name in order:
        _day(homes[name], name)
    written = {name: _audit_lines(homes[name]) for name in order}
    _everything({n: homes[n] for n in order})

    contents = {n: (h / "memory.md").read_bytes() for n, h in homes.items()}
    assert len(set(contents.values())) == 1, contents
    text = contents["a"].decode()
    views = {n: _view(h) for n, h in homes.items()}
    assert views["a"] == views["b"] == views["c"]
    for name in order:  # no person's line lost, every device's facts there
        assert f"- a note {name} typed by hand about the coffee machine\n" in text
        assert f"device {name} builds the docs with mkdocs" in text
        assert f"the {name} runner uses 8 cores" in text
        assert f"the {name} runner uses 4 cores" not in text
    assert "the nightly job cleans the tmp folder" not in text  # stays forgotten
    for home in homes.values():  # the equal-standing conflict is reported everywhere
        with Memory(home) as mem:
            [(scope, key, nodes)] = mem.conflicts()
            assert (scope, key, len(nodes)) == ("global", "team.editor", 3)
    for home in homes.values():  # every audit line of every device, on every device
        have = _audit_lines(home)
        for name in order:
            for device, lines in written[name].items():
                assert have[device][: len(lines)] == lines
    usage = {n: _usage(h) for n, h in homes.items()}
    assert usage["a"] == usage["b"] == usage["c"]
    for name in order:  # counted on its own device only
        assert usage["a"][f"fact:device {name} builds the docs with mkdocs"] == (6, 3)
    # counted on all three: 6 recalls on each saw it, 3 on each picked it: the sums
    assert usage["a"]["fact:the printer on floor two needs a badge"] == (18, 9)


def _usage(home: Path) -> dict[str, tuple[int, int]]:
    with Memory(home) as mem:
        return {k: (s.seen, s.hits) for k, s in mem.usage().items()}


def _copy_devices(src: Path, dst: Path) -> None:
    """What a sync folder does with the per-device files: copy each device's folder over."""
    for d in device_dirs(resolve_paths(src).state_dir):
        target = resolve_paths(dst).state_dir / "devices" / d.name
        shutil.copytree(d, target, dirs_exist_ok=True)


def test_plain_file_copies_keep_every_count_and_audit_line(tmp_path: Path) -> None:
    """The scripted day with a sync folder instead of git: it copies each device's folder to
    the others, and memory.md from the device that wrote last (a sync folder keeps one
    version of a file both changed). Counts and audit lines are all there, everywhere."""
    homes = {n: tmp_path / n for n in ("a", "b", "c")}
    for home in homes.values():
        home.mkdir()
        (home / "memory.md").write_text(
            "- the printer on floor two needs a badge\n- the team editor is vim "
            "<!-- user 2026-11-02 id=r0123456789 key=team.editor -->\n"
        )
    for name, home in homes.items():
        _day(home, name)
    own = {n: _audit_lines(h) for n, h in homes.items()}
    for src in homes.values():
        for dst in homes.values():
            if dst != src:
                _copy_devices(src, dst)
    for dst in (homes["a"], homes["b"]):
        shutil.copy(homes["c"] / "memory.md", dst / "memory.md")
    for home in homes.values():
        have = _audit_lines(home)
        assert sorted(have) == sorted(d for lines in own.values() for d in lines)
        for lines in own.values():
            for device, entries in lines.items():
                assert have[device] == entries
    usage = {n: _usage(h) for n, h in homes.items()}
    assert usage["a"] == usage["b"] == usage["c"]
    assert usage["a"]["fact:the printer on floor two needs a badge"] == (18, 9)
    for name in homes:
        assert usage["a"][f"fact:device {name} builds the docs with mkdocs"] == (6, 3)


def test_sync_outside_a_repository_says_what_to_do(tmp_path: Path) -> None:
    from talos.errors import InputError

    (tmp_path / "memory.md").write_text("")
    with pytest.raises(InputError, match="talos init --git"):
        sync(resolve_paths(tmp_path))


def test_init_git_keeps_caches_out_and_sync_takes_a_committed_cache_out(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from talos.cli import app

    home = _clones(tmp_path, ["a"])["a"]
    res = CliRunner().invoke(app, ["init", "--git", "--home", str(home), "--json"])
    assert res.exit_code == 0, res.output
    ignore = (home / ".gitignore").read_text()
    assert "/.talos/*\n!/.talos/devices/\n" in ignore
    assert "/memory.md merge=talos" in (home / ".gitattributes").read_text()
    assert "talos.sync.merge" in _git(home, "config", "merge.talos.driver")
    _recall(home, "anything", 1)
    _git(home, "add", "-f", ".talos/index.db")
    _git(home, "commit", "-qm", "oops")
    sync(resolve_paths(home))
    tracked = _git(home, "ls-files").split()
    assert ".talos/index.db" not in tracked and (home / ".talos/index.db").exists()
    assert any(t.startswith(".talos/devices/") and t.endswith("/usage.jsonl") for t in tracked)


def test_a_persons_line_edited_on_two_devices_stops_sync_until_settled(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from talos.cli import app

    homes = _clones(tmp_path, ["a", "b"])
    (homes["a"] / "memory.md").write_text("- my own line about coffee\n")
    sync(resolve_paths(homes["a"]))
    sync(resolve_paths(homes["b"]))
    for name, drink in (("a", "tea"), ("b", "cocoa")):
        (homes[name] / "memory.md").write_text(f"- my own line about {drink}\n")
    sync(resolve_paths(homes["a"]))
    res = CliRunner().invoke(app, ["sync", "--home", str(homes["b"]), "--json"])
    assert res.exit_code == 6, res.output
    text = (homes["b"] / "memory.md").read_text()
    assert "about tea" in text and "about cocoa" in text  # both versions visible
    res = CliRunner().invoke(app, ["sync", "--home", str(homes["b"])])
    assert res.exit_code == 6  # still both there: still stopped
    (homes["b"] / "memory.md").write_text("- my own line about cocoa\n")
    assert sync(resolve_paths(homes["b"])).pushed
    sync(resolve_paths(homes["a"]))
    assert (homes["a"] / "memory.md").read_text() == "- my own line about cocoa\n"


def test_a_later_observation_on_another_device_supersedes(tmp_path: Path) -> None:
    import datetime as dt

    homes = _clones(tmp_path, ["a", "b"])
    with Memory(homes["a"]) as mem:
        mem.remember("the region is eu-west-1", key="region", observed=dt.date(2026, 11, 1))
    sync(resolve_paths(homes["a"]))
    sync(resolve_paths(homes["b"]))
    with Memory(homes["a"]) as mem:
        mem.remember("the region is us-east-1", key="region", observed=dt.date(2026, 11, 20))
    with Memory(homes["b"]) as mem:
        mem.remember("the region is ap-south-1", key="region", observed=dt.date(2026, 11, 10))
    sync(resolve_paths(homes["a"]))
    res = sync(resolve_paths(homes["b"]))
    assert [r["key"] for r in res.resolved] == ["region"]
    sync(resolve_paths(homes["a"]))
    for home in homes.values():
        with Memory(home) as mem:
            assert mem.conflicts() == []
            assert "us-east-1" in mem.get("region").value  # type: ignore[union-attr]


@pytest.mark.skipif(os.name != "posix", reason="kills a process group")
def test_killing_sync_never_breaks_recall_or_git(tmp_path: Path) -> None:
    """A few kills here; bench/sync_kills.py runs the 100 of the acceptance."""
    import random
    import signal
    import sys
    import time

    homes = _clones(tmp_path, ["a", "b"])
    for home in homes.values():
        sync(resolve_paths(home))
    rng = random.Random(7)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for i in range(6):
        for name, home in homes.items():
            with Memory(home) as mem:
                mem.remember(f"fact {i} from {name} about the build cache")
        home = homes["a" if i % 2 else "b"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "talos", "sync", "--home", str(home)],
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.05, 1.0))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        with Memory(home) as mem:  # recalls
            assert mem.recall("build cache").picked
        _git(home, "status")  # git works
    _everything(homes)
    a, b = ((h / "memory.md").read_text() for h in homes.values())
    assert a == b
    for i in range(6):
        for name in homes:
            assert f"fact {i} from {name} about the build cache" in a


def test_a_forget_comes_back_through_a_merge_and_is_taken_out_again(tmp_path: Path) -> None:
    """Two homes started apart, joined in one repository: the join (no common version) unites
    both files, so a line forgotten in one comes back from the other; its forget (a tombstone
    in that device's audit log) takes it out again, on both."""
    line = "the nightly job cleans the tmp folder"
    homes = _clones(tmp_path, ["a", "b"])
    for home in homes.values():  # one file copied by hand to both (cp -r of the home)
        (home / "memory.md").write_text(f"- {line} <!-- reflect 2026-11-02 id=r0123456789 -->\n")
        with Memory(home) as mem:
            mem.remember(f"{home.name} has its own fact about the build cache")
    with Memory(homes["a"]) as mem:
        assert mem.forget([("fact", line)]) == 1
    for name in ("a", "b", "a", "b"):
        assert sync(resolve_paths(homes[name])).stopped is None
    for home in homes.values():
        text = (home / "memory.md").read_text()
        assert line not in text
        assert "a has its own fact" in text and "b has its own fact" in text


def test_a_keyed_line_edited_by_hand_on_two_devices_stops_like_a_persons_line() -> None:
    tag = "<!-- user 2026-11-02 id=r0123456789 key=staging.db.port -->"
    merged = merge_lines(
        [f"- staging db port is 5432 {tag}"],
        [f"- staging db port is 5433 {tag}"],
        [f"- staging db port is 6543 {tag}"],
    )
    [o] = merged.overlaps  # one record id on two lines: resolve could not tell them apart
    assert (o.here, o.there) == (
        f"- staging db port is 5433 {tag}",
        f"- staging db port is 6543 {tag}",
    )


def test_a_line_deleted_here_and_edited_there_keeps_the_edit_and_says_so() -> None:
    merged = merge_lines(
        ["- a", "- the printer code is 1234", "- b"],
        ["- a", "- b"],
        ["- a", "- the printer code is 4321", "- b"],
    )
    assert merged.lines == ["- a", "- the printer code is 4321", "- b"]
    [k] = merged.kept_edits
    assert (k.was, k.here, k.there) == (
        "- the printer code is 1234",
        "",
        "- the printer code is 4321",
    )


def test_a_new_heading_on_one_side_does_not_label_the_other_sides_lines() -> None:
    merged = merge_lines(["- a"], ["- a", "## Desktop notes", "- d"], ["- a", "- from the laptop"])
    assert merged.lines == ["- a", "- from the laptop", "## Desktop notes", "- d"]


def test_a_skill_edited_on_two_devices_stops_with_the_git_commands(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from talos.cli import app

    homes = _clones(tmp_path, ["a", "b"])
    (homes["a"] / "skills").mkdir()
    (homes["a"] / "skills" / "deploy.md").write_text("---\nname: deploy\n---\n1. build\n")
    sync(resolve_paths(homes["a"]))
    sync(resolve_paths(homes["b"]))
    for name in homes:
        (homes[name] / "skills" / "deploy.md").write_text(f"---\nname: deploy\n---\n1. {name}\n")
    sync(resolve_paths(homes["a"]))
    before = (homes["b"] / "skills" / "deploy.md").read_text()
    res = CliRunner().invoke(app, ["sync", "--home", str(homes["b"]), "--json"])
    assert res.exit_code == 6
    env = json.loads(res.stdout)
    assert env["ok"] is False and "git pull --rebase origin main" in env["error"]
    assert "skills/deploy.md" in env["error"]
    assert (homes["b"] / "skills" / "deploy.md").read_text() == before  # nothing changed here


def test_doctor_reports_sync_health(tmp_path: Path) -> None:
    from talos.doctor import diagnose

    homes = _clones(tmp_path, ["a", "b"])
    for home in homes.values():
        _recall(home, "anything", 1)
        sync(resolve_paths(home))
    sync(resolve_paths(homes["a"]))

    def found(home: Path) -> list[tuple[str, str]]:
        return [(f.status, f.summary) for f in diagnose(home).findings if f.check == "sync"]

    a = found(homes["a"])
    assert a[0][0] == "info" and a[0][1].startswith("2 devices seen; this one is ")
    assert a[-1] == ("ok", "in step with origin/main as last fetched")
    with Memory(homes["a"]) as mem:
        mem.remember("the printer on floor two needs a badge")
    _git(homes["a"], "add", "-f", ".talos/index.db")
    _git(homes["a"], "commit", "-qm", "oops")
    (homes["a"] / "memory.sync-conflict-20261202-laptop.md").write_text("- x\n")
    a = found(homes["a"])
    assert ("warn", "1 cache file of this machine committed to git") in a
    assert ("warn", "a sync folder kept 1 other version of memory.md") in a
    assert ("info", "not synced yet: 3 files changed, 1 commit not pushed") in a
