"""A write settles a killed writer's transaction by reading only the end of the audit log, so
its cost does not grow with the log (design §11); a killed skill-forget is settled by where the
file is (design §7.6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import log_ops

from talos.home import resolve_paths
from talos.writer import audit
from talos.writer import edits as writer
from talos.writer import txn as write_txn


def _log(path, records) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def test_open_transaction_at_the_end_is_settled_from_the_tail(tmp_path, monkeypatch) -> None:
    paths = resolve_paths(tmp_path)
    paths.memory_file.write_text("- kept line\n- new line <!-- reflect 2026-01-01 id=r1 -->\n")
    history = []
    for i in range(3000):  # a long history of settled writes (well over TAIL_BYTES)
        history.append(
            {
                "txn": f"t{i}",
                "op": "remember",
                "id": f"x{i}",
                "before": None,
                "after": f"- old {i}",
                "file": str(paths.memory_file),
                "state": "prepared",
            }
        )
        history.append({"txn": f"t{i}", "op": "commit"})
    history.append(
        {
            "txn": "open",
            "op": "remember",
            "id": "r1",
            "before": None,
            "after": "- new line <!-- reflect 2026-01-01 id=r1 -->",
            "file": str(paths.memory_file),
            "state": "prepared",
        }
    )
    _log(paths.audit_file, history)
    assert paths.audit_file.stat().st_size > 4 * audit.TAIL_BYTES

    def no_full_scan(path):  # type: ignore[no-untyped-def]
        raise AssertionError("recover read the whole log")

    monkeypatch.setattr(audit, "entries", no_full_scan)
    assert audit.recover(paths.audit_file, paths.memory_file) == 1
    last = json.loads(paths.audit_file.read_text().splitlines()[-1])
    assert (last["txn"], last["op"]) == ("open", "commit")
    assert audit.recover(paths.audit_file, paths.memory_file) == 0


@pytest.mark.parametrize(("moved", "outcome"), [(True, "commit"), (False, "abort")])
def test_killed_skill_forget_is_settled_by_where_the_file_is(tmp_path, moved, outcome) -> None:
    paths = resolve_paths(tmp_path)
    skill = tmp_path / "skills" / "scratch.md"
    trash = paths.state_dir / "trash" / "S1-scratch.md"
    (trash if moved else skill).parent.mkdir(parents=True, exist_ok=True)
    (trash if moved else skill).write_text("---\nname: scratch\n---\nx\n")
    _log(
        paths.audit_file,
        [
            {
                "txn": "k",
                "op": "skill-forget",
                "id": "S1",
                "file": str(skill),
                "before": str(skill),
                "after": None,
                "trash": str(trash),
                "state": "prepared",
            }
        ],
    )
    assert audit.recover(paths.audit_file, paths.memory_file) == 1
    last = json.loads(paths.audit_file.read_text().splitlines()[-1])
    assert last["op"] == outcome


# -- a write that fails after its entry is prepared --------------------------------------------


MINE = "- i wrote this line myself\n"


def test_a_write_that_fails_after_its_entry_is_prepared_settles_it_at_once(
    make_home, monkeypatch
) -> None:
    """The class behind the failing input: any failure between *prepare* and *commit* (not
    only a full disk) settles the transaction from what memory.md holds, so the log never
    keeps a pending entry that the next write trips over, and doctor is right."""
    home = make_home(memory=MINE)
    paths = resolve_paths(home)

    def broken(path: Path, line: bytes) -> bool:
        raise ValueError("a bug in the append")

    monkeypatch.setattr(write_txn, "append_line", broken)
    with pytest.raises(ValueError):
        writer.remember(paths, "the build uses make")
    monkeypatch.undo()
    assert log_ops(home) == ["remember", "abort"]
    assert audit.verify(paths.audit_file, paths.memory_file) == []
    assert writer.remember(paths, "the build uses ninja").status == "active"
