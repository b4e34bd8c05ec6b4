"""The audit log per device, merged on read (design §7.6, §9).

Two machines share one home through git or a sync folder. Each appends only to its own
``.talos/devices/<id>/audit.jsonl``; every reader merges all of them, another device's paths
made this home's. Here two homes stand for the two machines, and :func:`sync` does what a sync
folder does: the writer's memory.md (and skills, trash) and its own device folder arrive on the
other side.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import audit_log, audit_name
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.doctor import diagnose
from talos.home import resolve_paths
from talos.writer import audit
from talos.writer.logs import LEGACY, Log, logs, merged, migrate
from talos.writer.restore import trash_skill
from talos.writer.txn import memory_lock

runner = CliRunner()
MINE = "# notes\n- i wrote this line myself\n"
SKILL = "---\nname: scratch\ndescription: scratch notes\n---\nscratch body\n"


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each reading of the audit log's clock is one second later: two devices' writes made
    in one second would be ordered by their logs' names (random ids here), not by when."""
    now = [int(time.time())]

    def tick() -> float:
        now[0] += 1
        return float(now[0])

    monkeypatch.setattr(audit, "time", SimpleNamespace(time=tick, strftime=time.strftime))


def two(make_home) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """Device A's and device B's copy of one home (same content, two folders)."""
    a = make_home(memory=MINE, skills={"scratch.md": SKILL}, name="a")
    b = make_home(memory=MINE, skills={"scratch.md": SKILL}, name="b")
    return a, b


def sync(src: Path, dst: Path, files: bool = True) -> None:
    """What a sync folder carries from ``src`` to ``dst``: the device folder ``src`` writes
    and, with ``files``, memory.md, the skills and the trash (never the caches nor the local
    ``device`` file)."""
    own = resolve_paths(src).device_dir
    shutil.copytree(own, dst / ".talos" / "devices" / own.name, dirs_exist_ok=True)
    if files:
        shutil.copy2(src / "memory.md", dst / "memory.md")
        shutil.rmtree(dst / "skills")
        shutil.copytree(src / "skills", dst / "skills")
        if (src / ".talos" / "trash").is_dir():
            shutil.copytree(src / ".talos" / "trash", dst / ".talos" / "trash", dirs_exist_ok=True)


def device(home: Path) -> str:
    return resolve_paths(home).device_dir.name


def _audit(home: Path, *extra: str) -> tuple[int, dict, dict]:
    res = runner.invoke(app, ["doctor", "--home", str(home), "--json", *extra])
    data = json.loads(res.stdout)
    return res.exit_code, data, next(f for f in data["data"]["findings"] if f["check"] == "audit")


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


# -- where each device writes ------------------------------------------------------------------


def test_each_device_writes_its_own_log_and_describes_its_folder(make_home) -> None:
    a, b = two(make_home)
    Memory(a, index=False).remember("the printer is on the second floor")
    Memory(b, index=False).remember("the wifi hint is on the fridge")
    ida, idb = device(a), device(b)
    assert ida != idb
    assert audit_log(a) == a / ".talos" / "devices" / ida / "audit.jsonl"
    assert not (a / ".talos" / "audit.jsonl").exists()
    folder = json.loads((a / ".talos" / "devices" / ida / "device.json").read_text())
    assert (folder["id"], folder["home"]) == (ida, str(a))
    sync(b, a, files=False)
    # A's next write appends to A's log only: B's arrives as it was written
    before = audit_log(b).read_bytes()
    Memory(a, index=False).remember("the kettle is descaled monthly")
    assert (a / ".talos" / "devices" / idb / "audit.jsonl").read_bytes() == before
    assert [e["op"] for e in _lines(audit_log(a))] == ["remember", "commit"] * 2


# -- merged reading: history, doctor, restore --------------------------------------------------


def test_history_shows_both_devices_entries_with_this_homes_paths(make_home) -> None:
    a, b = two(make_home)
    printer = Memory(a, index=False).remember("the printer is on the second floor")
    sync(a, b)
    wifi = Memory(b, index=False).remember("the wifi hint is on the fridge")
    sync(b, a)
    rows = Memory(a, index=False).history()
    assert [(e["op"], e["id"]) for e in rows] == [("remember", printer.id), ("remember", wifi.id)]
    assert {e["file"] for e in rows} == {str(a / "memory.md")}  # B's path made A's
    assert [e["id"] for e in Memory(b, index=False).history()] == [printer.id, wifi.id]


def test_doctor_on_one_device_reports_nothing_for_the_others_writes(make_home) -> None:
    """B forgets a line A wrote, and supersedes another: memory.md arrives without them. A's
    log alone says they should be there; with B's log merged (its paths made A's) doctor on A
    finds the home consistent."""
    a, b = two(make_home)
    mem = Memory(a, index=False)
    kettle = mem.remember("the kettle is broken", source="reflect")
    vim = mem.remember("editor = vim", key="editor")
    sync(a, b)
    other = Memory(b, index=False)
    assert other.forget([("fact", "the kettle is broken")]) == 1
    helix = other.remember("editor = helix", key="editor")
    sync(b, a)
    assert kettle.line not in (a / "memory.md").read_text()
    paths = resolve_paths(a)
    assert audit.verify(paths, paths.memory_file) == []
    assert audit.outside_edits(paths, paths.memory_file) == []
    code, _data, found = _audit(a)
    assert (code, found["status"], found["details"]) == (0, "ok", [])
    assert found["summary"] == "the 2 audit logs under .talos/ agree with memory.md"
    # A's own log read alone is what doctor said before the logs were merged
    alone = audit.outside_edits(audit_log(a), paths.memory_file)
    assert [(o.kind, o.id) for o in alone] == [("missing", kettle.id), ("missing", vim.id)]
    assert helix.line in (a / "memory.md").read_text()


def test_restore_on_one_device_of_a_line_the_other_forgot(make_home) -> None:
    a, b = two(make_home)
    kettle = Memory(a, index=False).remember("the kettle is broken", source="reflect")
    sync(a, b)
    assert Memory(b, index=False).forget([("fact", "the kettle is broken")]) == 1
    sync(b, a)
    mem = Memory(a, index=False)
    assert mem.restore(kettle.id) == kettle.line
    assert (a / "memory.md").read_text() == f"{MINE}{kettle.line}\n"
    assert [e["op"] for e in mem.history(kettle.id)] == ["remember", "forget", "restore"]
    assert _lines(audit_log(a))[-2]["op"] == "restore"  # written to A's own log
    assert diagnose(a).healthy


def test_restore_of_a_skill_the_other_device_moved_to_the_trash(make_home) -> None:
    a, b = two(make_home)
    paths_b = resolve_paths(b)
    trash_skill(paths_b, b / "skills" / "scratch.md", "not used")
    sync(b, a)
    assert not (a / "skills" / "scratch.md").exists()
    rid = Memory(a, index=False).history()[0]["id"]
    assert Memory(a, index=False).restore(rid) == str(a / "skills" / "scratch.md")
    assert (a / "skills" / "scratch.md").read_text() == SKILL
    assert (b / "skills" / "scratch.md").exists() is False  # B's own files untouched


def test_another_devices_open_transaction_is_its_own_business(make_home) -> None:
    """Decision: a transaction left open in another device's log (a sync carried its
    prepared entries before its commit, or that device was killed) is neither settled here
    (this device never writes that log) nor a problem doctor asks this device to act on;
    until it is committed, its entries count for nothing here. This device's own open
    transaction still is a problem."""
    a, b = two(make_home)
    Memory(b, index=False).remember("the wifi hint is on the fridge")
    log_b = audit_log(b)
    with log_b.open("a") as f:
        f.write(
            json.dumps(
                {
                    "t": 2,
                    "txn": "open-on-b",
                    "op": "remember",
                    "id": "rb",
                    "file": str(b / "memory.md"),
                    "before": None,
                    "after": "- half done <!-- reflect 2026-01-01 id=rb -->",
                    "state": "prepared",
                }
            )
            + "\n"
        )
    sync(b, a)
    theirs = a / ".talos" / "devices" / device(b) / "audit.jsonl"
    before = theirs.read_bytes()
    paths = resolve_paths(a)
    assert audit.verify(paths, paths.memory_file) == []
    assert _audit(a)[2]["status"] == "ok"
    Memory(a, index=False).remember("the printer is on the second floor")  # a write on A
    assert theirs.read_bytes() == before  # not settled by A
    assert "rb" not in [e["id"] for e in Memory(a, index=False).history()]
    # the same entry open in A's own log is A's problem
    with audit_log(a).open("a") as f:
        f.write(json.dumps({"t": 3, "txn": "open-on-a", "op": "remember", "state": "prepared"}))
        f.write("\n")
    assert audit.verify(paths, paths.memory_file) == [
        "transaction open-on-a is neither committed nor aborted"
    ]


# -- the legacy log ---------------------------------------------------------------------------


def _legacy_home(make_home) -> tuple[Path, object, bytes]:  # type: ignore[no-untyped-def]
    """A home as today's talos left it: its log in ``.talos/audit.jsonl``, a line forgotten."""
    home = make_home(memory=MINE)
    mem = Memory(home, index=False)
    kettle = mem.remember("the kettle is broken", source="reflect")
    mem.remember("editor = vim", key="editor")
    mem.remember("editor = helix", key="editor")
    assert mem.forget([("fact", "the kettle is broken")]) == 1
    mem.close()
    legacy = home / ".talos" / "audit.jsonl"
    audit_log(home).rename(legacy)
    shutil.rmtree(home / ".talos" / "devices")
    return home, kettle, legacy.read_bytes()


def test_a_legacy_log_is_moved_whole_into_this_devices_log_on_the_next_write(make_home) -> None:
    home, kettle, old = _legacy_home(make_home)
    legacy = home / ".talos" / "audit.jsonl"
    Memory(home, index=False).remember("the printer is on the second floor")
    assert not legacy.exists()
    moved = audit_log(home).read_bytes()
    assert moved.startswith(old)  # every line, byte for byte, then the new write
    assert [e["op"] for e in _lines(audit_log(home))[len(old.splitlines()) :]] == [
        "remember",
        "commit",
    ]
    mem = Memory(home, index=False)
    assert [e["op"] for e in mem.history("editor")] == ["remember", "supersede", "remember"]
    assert mem.restore(kettle.id) == kettle.line  # forgotten before the migration
    assert diagnose(home).healthy


def test_a_legacy_log_is_moved_on_the_first_read_when_no_writer_holds_the_lock(
    make_home,
) -> None:
    home, kettle, old = _legacy_home(make_home)
    paths = resolve_paths(home)
    with memory_lock(paths):  # a writer at work: the reader does not wait, it reads both
        assert [log.name for log in logs(paths)] == [LEGACY, device(home)]
        assert [e["id"] for e in Memory(home, index=False).history(kettle.id)] == [kettle.id] * 2
        assert (home / ".talos" / "audit.jsonl").read_bytes() == old
    assert [e["op"] for e in Memory(home, index=False).history(kettle.id)] == [
        "remember",
        "forget",
    ]
    assert not (home / ".talos" / "audit.jsonl").exists()
    assert audit_log(home).read_bytes() == old
    assert [log.name for log in logs(paths)] == [device(home)]


def test_a_legacy_log_written_again_by_an_older_talos_is_read_as_one_more_log(make_home) -> None:
    home, _kettle, _old = _legacy_home(make_home)
    Memory(home, index=False).remember("the printer is on the second floor")  # migrated
    legacy = home / ".talos" / "audit.jsonl"
    line = "- the plant needs water <!-- reflect 2026-01-01 id=rplant -->"
    entry = {"t": 9, "txn": "old", "op": "remember", "id": "rplant", "scope": "global"}
    entry |= {"file": str(resolve_paths(home).memory_file), "before": None, "after": line}
    legacy.write_text(
        json.dumps({**entry, "state": "prepared"})
        + "\n"
        + json.dumps({"t": 9, "txn": "old", "op": "commit"})
        + "\n"
    )
    with (home / "memory.md").open("a") as f:
        f.write(line + "\n")
    paths = resolve_paths(home)
    assert not migrate(paths)  # this device has a log: the legacy one stays
    mem = Memory(home, index=False)
    assert [e["op"] for e in mem.history("rplant")] == ["remember"]
    assert diagnose(home).healthy
    mem.remember("the kettle is descaled monthly")
    assert legacy.exists()
    assert mem.forget([("fact", "the plant needs water")]) == 1
    assert mem.restore("rplant") == line


# -- ordering ---------------------------------------------------------------------------------


def test_logs_merge_by_time_then_log_each_keeping_its_order(tmp_path) -> None:
    x, y = Log(tmp_path / "x", "x"), Log(tmp_path / "y", "y")
    first = [(1, {"t": 10, "n": "x1"}), (2, {"t": 30, "n": "x2"}), (3, {"t": 5, "n": "x3"})]
    second = [(1, {"t": 10, "n": "y1"}), (2, {"t": 20, "n": "y2"})]
    got = [e["n"] for _log, e in merged([(x, first), (y, second)])]
    # a tie goes to the earlier log; x3's clock went back: it still follows x2
    assert got == ["x1", "y1", "y2", "x2", "x3"]


def test_a_transaction_carried_into_two_logs_counts_once(make_home) -> None:
    """Two machines that both had the old shared log each moved it into their own log: the
    history shows each of its transactions once."""
    a, b = two(make_home)
    Memory(a, index=False).remember("the printer is on the second floor")
    sync(a, b)
    mine = audit_log(b)
    mine.parent.mkdir(parents=True)
    shutil.copy2(audit_log(a), mine)  # B's own copy of the same history
    Memory(b, index=False).remember("the wifi hint is on the fridge")
    assert [e["op"] for e in Memory(b, index=False).history()] == ["remember", "remember"]


# -- acknowledgements across logs -------------------------------------------------------------


def _garble_first_commit(log: Path) -> int:
    lines = log.read_text().splitlines()
    i = next(i for i, x in enumerate(lines) if '"commit"' in x)
    lines[i] = lines[i][:-3] + "\x00zz"
    log.write_text("\n".join(lines) + "\n")
    return i + 1


def test_an_unreadable_line_of_another_devices_log_is_warned_and_acknowledged(make_home) -> None:
    a, b = two(make_home)
    other = Memory(b, index=False)
    other.remember("the wifi hint is on the fridge")
    other.remember("the kettle is descaled monthly")
    bad = _garble_first_commit(audit_log(b))
    sync(b, a)
    theirs = f".talos/devices/{device(b)}/audit.jsonl"
    code, _data, found = _audit(a)
    assert (code, found["status"]) == (5, "warn")
    assert f"{theirs}:{bad}: unreadable audit entry skipped" in found["details"]
    code, data, found = _audit(a, "--ack")
    assert data["data"]["acknowledged"] == [
        {"id": "", "kind": "unreadable", "line": bad, "log": theirs}
    ]
    ack = _lines(audit_log(a))[-2]
    assert (ack["op"], ack["log"], ack["unreadable"]) == ("ack", device(b), [bad])
    assert (found["status"], found["details"]) == ("ok", [])
    res = runner.invoke(app, ["doctor", "--home", str(a), "--plain"])
    assert res.exit_code == 0 and "unreadable" not in res.stderr
    # the ack travels: B's own doctor no longer warns about its line either
    sync(a, b, files=False)
    assert f"{audit_name(b)}:{bad}" not in " ".join(_audit(b)[2]["details"])


def test_an_old_ack_without_a_log_means_the_log_it_is_in(make_home) -> None:
    """An ack written before acks named their log acknowledges lines of its own log only: the
    same line number in another device's log is still warned about."""
    a, b = two(make_home)
    Memory(b, index=False).remember("the wifi hint is on the fridge")
    Memory(b, index=False).remember("the kettle is descaled monthly")
    bad = _garble_first_commit(audit_log(b))
    sync(b, a)
    mine = audit_log(a)
    mine.parent.mkdir(parents=True)
    mine.write_text(
        '{"t": 1, "txn": "a", "op": "commit"}\n'
        + "garbled\n" * (bad - 1)
        + json.dumps({"t": 1, "txn": "k", "op": "ack", "unreadable": list(range(2, bad + 1))})
        + "\n"
    )
    details = _audit(a)[2]["details"]
    assert [d for d in details if "unreadable" in d] == [
        f".talos/devices/{device(b)}/audit.jsonl:{bad}: unreadable audit entry skipped"
    ]


# -- tombstones -------------------------------------------------------------------------------


def test_tombstones_are_the_lines_forgotten_on_any_device_and_not_written_back(
    make_home,
) -> None:
    a, b = two(make_home)
    mem = Memory(a, index=False)
    kettle = mem.remember("the kettle is broken", source="reflect")
    mem.remember("the mug is chipped", source="reflect")
    sync(a, b)
    assert Memory(b, index=False).forget([("fact", "the kettle is broken")]) == 1
    trash_skill(resolve_paths(b), b / "skills" / "scratch.md", "not used", scope="project:x")
    sync(b, a)
    assert Memory(a, index=False).forget([("fact", "the mug is chipped")]) == 1
    paths = resolve_paths(a)
    dead = audit.tombstones(paths)
    assert [(t.line, t.skill, t.device) for t in dead] == [
        (kettle.line, False, device(b)),
        (str(a / "skills" / "scratch.md"), True, device(b)),
        (
            next(
                e["before"] for e in mem.history() if e["op"] == "forget" and "mug" in e["before"]
            ),
            False,
            device(a),
        ),
    ]
    assert [t.line for t in audit.tombstones(paths, ["project:x"])] == [
        str(a / "skills" / "scratch.md")
    ]
    Memory(a, index=False).restore(kettle.id)  # written back: no longer a tombstone
    assert [t.line for t in audit.tombstones(paths)] == [
        str(a / "skills" / "scratch.md"),
        dead[2].line,
    ]


def test_a_line_forgotten_on_another_device_and_merged_back_is_reported(make_home) -> None:
    """B forgets a line; A's memory.md still has it (a merge kept A's copy): doctor on A
    says it is back although talos removed it, and a tombstone names it."""
    a, b = two(make_home)
    kettle = Memory(a, index=False).remember("the kettle is broken", source="reflect")
    sync(a, b)
    assert Memory(b, index=False).forget([("fact", "the kettle is broken")]) == 1
    sync(b, a, files=False)  # the log arrives; memory.md keeps the line
    code, _data, found = _audit(a)
    assert (code, found["status"]) == (5, "warn")
    assert found["details"] == [
        f"memory.md:3: record {kettle.id} is back although talos removed it (forget): an "
        "editor probably saved an older copy over talos's write; if you did not mean to bring "
        "it back: delete line 3 (talos doctor --ack if you did)"
    ]
    assert [t.line for t in audit.tombstones(resolve_paths(a))] == [kettle.line]
