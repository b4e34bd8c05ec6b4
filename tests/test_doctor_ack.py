"""``talos doctor --ack``: an outside edit a person reviewed is no longer warned about.

The failing input (a newcomer): after a few writes, a line talos wrote deleted by hand on
purpose and another edited in place, ``talos doctor`` warned "audit.jsonl and memory.md
disagree" (exit 5) and said "nothing, if you meant it" — and kept warning on every run, with
no way to say "I meant it" short of restoring the line. ``--ack`` records the reviewed state
in the audit log itself; later doctors warn only about edits made after it.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import audit_log, audit_name
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.doctor import diagnose

runner = CliRunner()


def _doctor(home: Path, *extra: str) -> tuple[int, dict]:
    res = runner.invoke(app, ["doctor", "--home", str(home), "--json", *extra])
    return res.exit_code, json.loads(res.stdout)


def _audit(data: dict) -> dict:
    return next(f for f in data["data"]["findings"] if f["check"] == "audit")


def _edited_home(make_home) -> tuple[Path, Memory, list]:  # type: ignore[no-untyped-def]
    home = make_home(memory="# notes\n- i wrote this line myself\n")
    mem = Memory(home, index=False)
    printer = mem.remember("the printer is on the second floor")
    wifi = mem.remember("the wifi password hint is on the fridge")
    plant = mem.remember("the office plant needs water on fridays")
    mf = home / "memory.md"
    text = mf.read_text().replace(f"{printer.line}\n", "")  # deleted on purpose
    mf.write_text(text.replace("on the fridge", "on the freezer"))  # edited in place
    return home, mem, [printer, wifi, plant]


def test_ack_records_the_reviewed_edits_and_doctor_is_quiet_after(make_home) -> None:
    home, mem, (printer, wifi, plant) = _edited_home(make_home)
    code, before = _doctor(home)
    assert (code, _audit(before)["status"]) == (5, "warn")

    code, acked = _doctor(home, "--ack")
    assert code == 0
    assert acked["data"]["acknowledged"] == [
        {"id": printer.id, "kind": "missing", "line": 0},
        {"id": wifi.id, "kind": "changed", "line": 3},
    ]
    assert _audit(acked) == {
        "check": "audit",
        "status": "ok",
        "summary": f"{audit_name(home)} agrees with memory.md",
        "details": [],
        "hint": "",
    }
    # recorded in the audit log itself, as a committed transaction, shown by history
    assert [(e["op"], e["before"], e["after"]) for e in mem.history(printer.id)][-1] == (
        "ack",
        printer.line,
        None,
    )
    assert mem.history(wifi.id)[-1]["after"] == wifi.line.replace("fridge", "freezer")
    code, again = _doctor(home)
    assert (code, _audit(again)["status"]) == (0, "ok")

    # only what comes after the acknowledgement is warned about
    mf = home / "memory.md"
    mf.write_text(mf.read_text().replace(f"{plant.line}\n", ""))
    code, later = _doctor(home)
    assert code == 5
    assert _audit(later)["details"] == [
        f"record {plant.id} 'the office plant needs water on fridays' is not in memory.md: it "
        "was removed outside talos (by hand, or an editor saved an older copy over it); talos "
        f"restore {plant.id} brings it back (talos doctor --ack if you meant it)"
    ]


def test_an_acknowledged_removal_can_still_be_restored(make_home) -> None:
    home, mem, (printer, _wifi, _plant) = _edited_home(make_home)
    assert _doctor(home, "--ack")[0] == 0
    assert mem.restore(printer.id) == printer.line
    assert printer.line in (home / "memory.md").read_text().splitlines()
    assert mem.history(printer.id)[-1]["reason"] == "restore after an outside edit removed it"
    assert diagnose(home).healthy


def test_ack_with_nothing_to_acknowledge_writes_nothing(make_home) -> None:
    home = make_home(memory="- mine\n")
    Memory(home, index=False).remember("the printer is on the second floor")
    log = audit_log(home)
    size = log.stat().st_size
    code, data = _doctor(home, "--ack")
    assert (code, data["data"]["acknowledged"]) == (0, [])
    assert log.stat().st_size == size
    res = runner.invoke(app, ["doctor", "--home", str(home), "--ack", "--plain"])
    assert res.exit_code == 0
    assert "nothing to acknowledge: the audit log agrees with memory.md" in res.stderr


def test_ack_in_a_scope_acknowledges_that_scope_only(make_home) -> None:
    """``--scope`` is a request's view: another scope's edit is neither named nor acked."""
    home = make_home(memory="- mine\n")
    mem = Memory(home, index=False, scopes=["global", "project:beta"])
    alpha = mem.remember("the alpha deploy runs on fridays", scope="global")
    beta = mem.remember("the beta deploy runs on mondays", scope="project:beta")
    mf = home / "memory.md"
    mf.write_text("- mine\n")
    code, data = _doctor(home, "--ack", "--scope", "global")
    assert data["data"]["acknowledged"] == [{"id": alpha.id, "kind": "missing", "line": 0}]
    code, whole = _doctor(home)
    assert code == 5
    assert [d.split(" ")[1] for d in _audit(whole)["details"]] == [beta.id]


def test_plain_ack_says_what_it_recorded(make_home) -> None:
    home, _mem, (printer, wifi, _plant) = _edited_home(make_home)
    res = runner.invoke(app, ["doctor", "--home", str(home), "--ack", "--plain"])
    assert res.exit_code == 0
    said = " ".join(res.stderr.split())
    assert (
        f"acknowledged 2 outside edits of memory.md in {audit_name(home)} ({printer.id} "
        f"missing, {wifi.id} changed); talos doctor warns only about edits made after this"
    ) in said


# -- a removal acknowledged, then the line back; a garbled commit line -------------------------


def _log(home: Path) -> list[dict]:
    return [json.loads(x) for x in audit_log(home).read_text().splitlines()]


def _removed_by_hand(make_home) -> tuple[Path, object]:  # type: ignore[no-untyped-def]
    home = make_home(memory="# notes\n- i wrote this line myself\n")
    mem = Memory(home, index=False)
    printer = mem.remember("the printer is on the second floor")
    mf = home / "memory.md"
    mf.write_text(mf.read_text().replace(f"{printer.line}\n", ""))
    return home, printer


def test_ack_then_the_person_puts_the_line_back_says_who_removed_it(make_home) -> None:
    home, printer = _removed_by_hand(make_home)
    assert _doctor(home, "--ack")[0] == 0
    mf = home / "memory.md"
    mf.write_text(mf.read_text() + printer.line + "\n")
    code, data = _doctor(home)
    msg = " ".join(_audit(data)["details"])
    assert code == 5  # a new outside edit after the ack: warned again, rightly
    assert "talos removed it" not in msg and "older copy over talos's write" not in msg
    assert msg == (
        f"memory.md:3: record {printer.id} is back although its removal outside talos was "
        "acknowledged (talos doctor --ack): it was put back by hand, or an editor saved an older "
        "copy over the file; if you did not mean to bring it back: delete line 3 (talos doctor "
        "--ack if you did)"
    )
    assert _doctor(home, "--ack")[1]["data"]["acknowledged"] == [
        {"id": printer.id, "kind": "back", "line": 3}
    ]
    assert _doctor(home)[0] == 0


def test_a_line_talos_removed_and_put_back_by_hand_still_names_the_lost_write(make_home) -> None:
    """The other side of the rule above: a line talos itself removed that is back."""
    home = make_home(memory="# notes\n- i wrote this line myself\n")
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    mem.remember("editor = helix", key="editor")
    mf = home / "memory.md"
    mf.write_text(mf.read_text() + vim.line + "\n")
    msg = " ".join(_audit(_doctor(home)[1])["details"])
    assert "although talos removed it (supersede): an editor probably saved an older copy" in msg


def test_ack_twice_writes_once(make_home) -> None:
    home, _printer = _removed_by_hand(make_home)
    _doctor(home, "--ack")
    n = len(_log(home))
    code, _data = _doctor(home, "--ack")
    assert (code, len(_log(home))) == (0, n)


def test_ack_with_scope_then_doctor_with_that_scope_is_quiet_after_a_scope_edit(make_home) -> None:
    home = make_home(memory="# notes\n- i wrote this line myself\n")
    res = runner.invoke(
        app,
        ["remember", "--home", str(home), "--scope", "project:a", "the build uses make targets"],
    )
    assert res.exit_code == 0, res.output
    mf = home / "memory.md"
    mf.write_text(mf.read_text().replace("scope=project:a", "scope=project:b"))
    _code, data = _doctor(home, "--scope", "project:a", "--ack")
    assert [a["kind"] for a in data["data"]["acknowledged"]] == ["changed"]
    _code, data = _doctor(home, "--scope", "project:a")
    assert (_audit(data)["status"], _audit(data)["details"]) == ("ok", [])
    for view in ((), ("--scope", "project:b")):  # the whole home, and the line's new scope
        _code, data = _doctor(home, *view)
        assert (_audit(data)["status"], _audit(data)["details"]) == ("ok", []), view
    ack = [e for e in _log(home) if e.get("op") == "ack"]
    assert [e["scope"] for e in ack] == ["project:a"]


def test_an_acknowledged_scope_edit_removed_later_is_warned_in_the_reviewed_scope(
    make_home,
) -> None:
    """The acknowledged line is the one in force: removing it afterwards is a new edit."""
    home = make_home(memory="# notes\n- i wrote this line myself\n")
    mem = Memory(home, index=False, scopes=["global", "project:a"])
    rec = mem.remember("the build uses make targets", scope="project:a")
    mf = home / "memory.md"
    mf.write_text(mf.read_text().replace("scope=project:a", "scope=project:b"))
    assert _doctor(home, "--scope", "project:a", "--ack")[0] == 0
    mf.write_text("# notes\n- i wrote this line myself\n")
    code, data = _doctor(home, "--scope", "project:a")
    assert code == 5
    assert [d.split(" ")[1] for d in _audit(data)["details"]] == [rec.id]


def test_a_garbled_commit_line_does_not_leave_doctor_warning_forever(make_home) -> None:
    home = make_home(memory="# notes\n- i wrote this line myself\n")
    mem = Memory(home, index=False)
    printer = mem.remember("the printer is on the second floor")
    mem.remember("the office plant needs water on fridays")
    log = audit_log(home)
    lines = log.read_text().splitlines()
    i = next(i for i, x in enumerate(lines) if '"commit"' in x)
    lines[i] = lines[i][:-3] + "\x00zz"
    log.write_text("\n".join(lines) + "\n")
    hint = _audit(_doctor(home)[1])["hint"]
    assert "settled by the next talos write" in hint
    mem.remember("the kettle is descaled every month")  # the next talos write
    details = _audit(_doctor(home)[1])["details"]
    assert [d for d in details if "neither committed nor aborted" in d] == [
        f"transaction {json.loads(lines[i - 1])['txn']} is neither committed nor aborted and "
        "talos wrote on after it (its commit line is lost or unreadable): talos doctor --ack "
        "settles it by what memory.md holds"
    ]
    code, acked = _doctor(home, "--ack")
    assert acked["data"]["acknowledged"] == [
        {"id": "", "kind": "unreadable", "line": i + 1, "log": audit_name(home)}
    ]
    details = _audit(_doctor(home)[1])["details"]
    assert not [d for d in details if "neither committed nor aborted" in d]
    # the line talos cannot read, once acknowledged, is not warned about on every run either
    code, data = _doctor(home)
    assert (code, _audit(data)["status"], _audit(data)["details"]) == (0, "ok", [])
    assert [e["op"] for e in mem.history(printer.id)] == ["remember"]  # committed: in the file


def test_a_garbled_commit_of_a_line_superseded_since_is_settled_as_committed(make_home) -> None:
    """The line is no longer in memory.md, but a later committed write took it out: it was
    written, and its history keeps the write."""
    home = make_home(memory="# notes\n- i wrote this line myself\n")
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    helix = mem.remember("editor = helix", key="editor")
    log = audit_log(home)
    lines = log.read_text().splitlines()
    lines[1] = lines[1][:-3] + "\x00zz"  # the first write's commit line
    log.write_text("\n".join(lines) + "\n")
    res = runner.invoke(app, ["doctor", "--home", str(home), "--ack", "--plain"])
    said = " ".join(res.stderr.split())
    assert f"acknowledged 1 unreadable line of {audit_name(home)} (line 2)" in said
    assert res.exit_code == 0
    assert [e["op"] for e in mem.history(vim.id)] == ["remember", "supersede"]
    assert mem.restore(vim.id) == vim.line
    assert helix.id not in (home / "memory.md").read_text()
