"""Other devices' folders as this home reads them (design §12.1): a folder copied under a new
name counts once and doctor names it; another device's damaged log costs bounded time and one
warning. Each test is a break of the fourth hostile pass, written from its input."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from talos import Memory
from talos.doctor import diagnose
from talos.home import resolve_paths

#: Unreadable lines after which another device's log is read no further
#: (``talos.writer.logs.MAX_DAMAGED``, checked in the test that uses it).
MAX_DAMAGED = 1000


def _home(tmp_path: Path) -> Path:
    """A home with two facts written, recalled three times (one of them hit)."""
    home = tmp_path / "home"
    home.mkdir()
    with Memory(home) as mem:
        mem.remember("the kettle is descaled every month")
        mem.remember("the deploy region is eu-west-1", key="deploy.region")
        for _ in range(3):
            mem.recall("kettle descaled")
    return home


def _counts(home: Path) -> dict[str, tuple[int, int]]:
    with Memory(home) as mem:
        return {k: (s.seen, s.hits) for k, s in mem.usage().items()}


def _history(home: Path) -> list[str]:
    with Memory(home) as mem:
        return [str(e.get("txn")) for e in mem.history()]


def _sync_finding(home: Path) -> dict:
    found = [f.to_json() for f in diagnose(home).findings if f.check == "sync"]
    return found[0] if found else {}


@pytest.mark.parametrize("describe", ["kept", "renamed"])
def test_a_device_folder_copied_under_a_new_name_counts_once_and_doctor_names_it(
    tmp_path: Path, describe: str
) -> None:
    """The failing input: ``cp -r .talos/devices/<id> .talos/devices/<id>-copy`` (a sync
    folder's rename does the same): every count doubled, history listed each write twice, and
    doctor said nothing. Also when the copy's ``device.json`` was made to name the copy."""
    home = _home(tmp_path)
    paths = resolve_paths(home)
    counts, history = _counts(home), _history(home)
    assert max(s for s, _h in counts.values()) == 3
    copy = paths.device_dir.with_name(paths.device_dir.name + "-copy")
    shutil.copytree(paths.device_dir, copy)
    if describe == "renamed":
        data = json.loads((copy / "device.json").read_text())
        (copy / "device.json").write_text(json.dumps({**data, "id": copy.name}))
    assert _counts(home) == counts
    assert _history(home) == history
    found = _sync_finding(home)
    assert found["status"] == "warn"
    assert (
        found["summary"]
        == "1 device folder of 2 is a copy of another device's, under a new name: counted once"
    )
    own = paths.device_dir.relative_to(home).as_posix()
    assert found["details"] == [f"{own}-copy: a copy of {own}"]
    from talos.sync.device import copies

    assert copies(paths.state_dir, paths.device_dir.name) == {copy.name: paths.device_dir.name}


def test_another_devices_folder_is_no_copy(tmp_path: Path) -> None:
    """A real other device (its own lines, its own name in device.json) is read: only a copy
    is left out."""
    home = _home(tmp_path)
    paths = resolve_paths(home)
    other = paths.state_dir / "devices" / "laptop-000001"
    other.mkdir()
    (other / "device.json").write_text(json.dumps({"id": other.name, "home": str(home)}))
    line = "- the laptop's charger is in the drawer <!-- user 2026-12-01 id=r0000000001 -->"
    entry = {"t": 1, "txn": "x1", "op": "remember", "id": "r0000000001", "scope": "global"}
    entry |= {"file": str(paths.memory_file), "before": None, "after": line}
    (other / "audit.jsonl").write_text(
        json.dumps({**entry, "state": "prepared"})
        + "\n"
        + json.dumps({"t": 1, "txn": "x1", "op": "commit"})
        + "\n"
    )
    assert _sync_finding(home)["status"] == "info"
    assert _history(home)[0] == "x1"


def test_another_devices_garbage_log_costs_one_warning_and_bounded_time(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The failing input: another device's audit log of 50 MB of garbage lines made
    ``history`` take 65 s with 50,001 warnings, and doctor 129 s (a warning per line, each
    looked up in a list of all of them). Here 20,000 lines: one warning, read no further than
    :data:`MAX_DAMAGED` unreadable lines, in well under a second of reading."""
    from talos.writer import logs

    assert logs.MAX_DAMAGED == MAX_DAMAGED
    home = _home(tmp_path)
    paths = resolve_paths(home)
    evil = paths.state_dir / "devices" / "evil-000001"
    evil.mkdir()
    (evil / "audit.jsonl").write_bytes((b"x" * 1000 + b"\n") * 20_000)
    capfd.readouterr()
    start = time.perf_counter()
    history = _history(home)
    took = time.perf_counter() - start
    err = capfd.readouterr().err
    assert len(history) == 2  # this device's two writes
    assert err.splitlines() == [
        f"talos: warning: {evil / 'audit.jsonl'}: {MAX_DAMAGED:,} unreadable audit entries of "
        f"device evil-000001's log skipped (line 1, 2, 3, and {MAX_DAMAGED - 3:,} more); not "
        f"read past line {MAX_DAMAGED:,}: {MAX_DAMAGED:,} unreadable lines make it no history"
    ]
    assert took < 5.0
    audit = next(f.to_json() for f in diagnose(home).findings if f.check == "audit")
    assert audit["status"] == "warn" and len(audit["details"]) == 1


def test_a_log_of_json_that_is_no_entry_is_unreadable_too(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Sibling: lines of valid JSON that are no entry (``[]``, ``1``) were skipped without a
    word and read to the end whatever their number; they are unreadable lines like any."""
    home = _home(tmp_path)
    evil = resolve_paths(home).state_dir / "devices" / "evil-000002"
    evil.mkdir()
    (evil / "audit.jsonl").write_bytes(b"[]\n" * 5000)
    capfd.readouterr()
    assert len(_history(home)) == 2
    err = capfd.readouterr().err
    assert f"{MAX_DAMAGED:,} unreadable audit entries of device evil-000002's log" in err


def test_a_copy_of_this_devices_folder_with_lines_added_is_still_a_copy(tmp_path: Path) -> None:
    """Sibling: this device's folder copied under a new name, its device.json made to name the
    copy and a line added to each log (so neither test of a copy held): every count and entry
    was read twice. Only this device writes its first line: a log that starts with it is a
    copy of it."""
    home = _home(tmp_path)
    paths = resolve_paths(home)
    counts, history = _counts(home), _history(home)
    copy = paths.device_dir.with_name("elsewhere-000001")
    shutil.copytree(paths.device_dir, copy)
    data = json.loads((copy / "device.json").read_text())
    (copy / "device.json").write_text(json.dumps({**data, "id": copy.name}))
    with (copy / "audit.jsonl").open("a") as f:
        f.write(json.dumps({"t": 2, "txn": "zz", "op": "commit"}) + "\n")
    with (copy / "usage.jsonl").open("a") as f:
        f.write(json.dumps({"d": 20000, "s": {}}) + "\n")
    assert _counts(home) == counts
    assert _history(home) == history
    assert _sync_finding(home)["status"] == "warn"


@pytest.mark.parametrize("how", ["cut", "replaced", "gone"])
def test_this_devices_log_put_back_older_by_a_sync_folder_is_named_by_doctor(
    tmp_path: Path, how: str
) -> None:
    """The append-only rule on the route talos cannot refuse: a sync folder (or a copy of the
    home) put back an older version of this device's audit log: doctor said "agrees", and the
    history of the lost lines was gone without a word."""
    home = _home(tmp_path)
    log = resolve_paths(home).audit_file
    data = log.read_bytes()
    if how == "cut":
        log.write_bytes(data[: data.index(b"\n") + 1])
    elif how == "replaced":
        log.write_bytes(data.replace(b'"remember"', b'"rememberx"', 1))
    else:
        log.unlink()
    audit = [f.to_json() for f in diagnose(home).findings if f.check == "audit"]
    said = {"cut": "was cut short", "replaced": "was replaced", "gone": "is gone"}[how]
    assert audit[0]["status"] == "warn"
    assert audit[0]["summary"].startswith(f"{log.relative_to(home).as_posix()}: this device's")
    assert said in audit[0]["summary"]


def test_this_devices_log_that_grew_is_as_talos_left_it(tmp_path: Path) -> None:
    home = _home(tmp_path)
    with Memory(home) as mem:
        mem.recall("kettle")
    assert all(f.status == "ok" for f in diagnose(home).findings if f.check == "audit")
