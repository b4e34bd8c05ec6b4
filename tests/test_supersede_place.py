"""A superseding ``remember`` puts its line where the old one was (design §7.5).

The failure a newcomer saw: ``talos remember "editor = helix" --key editor`` removed the old
line from under its heading (``## Tools``) and appended the new one at the end of memory.md,
under whatever heading came last — where it then carried the wrong heading as its context.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers import PERSON_WRITER, audit_log

from talos import Memory
from talos.writer import audit, shared_file
from talos.writer import txn as write_txn

VIM = "- editor = vim <!-- user 2025-03-01 id=rvim key=editor -->"
EMACS = "- editor = emacs <!-- user 2025-02-01 id=remacs key=editor -->"
PERSON_SAVE = "- saved by my editor in the last instant"

NOTES = f"# Tools\n{VIM}\n- the shell is zsh\n# Pets\n- the cat is called tom\n"


def _log(home: Path) -> list[dict]:
    return [json.loads(x) for x in audit_log(home).read_text().splitlines()]


def test_the_new_line_takes_the_old_lines_place_under_its_heading(make_home) -> None:
    home = make_home(memory=NOTES)
    res = Memory(home, index=False).remember("editor = helix", key="editor")
    assert res.superseded == ["rvim"]
    mf = home / "memory.md"
    assert mf.read_text() == (
        f"# Tools\n{res.line}\n- the shell is zsh\n# Pets\n- the cat is called tom\n"
    )
    assert [e["op"] for e in _log(home)] == ["supersede", "remember", "commit"]
    assert audit.verify(audit_log(home), mf) == []


def test_the_new_line_stands_under_the_old_lines_heading(make_home) -> None:
    """In the outline it is under ``# Tools``; the block still shows no heading on a line
    talos wrote (``talos.sources.facts.written_by_talos``: a model's write may land there)."""
    home = make_home(memory=NOTES)
    mem = Memory(home, index=False)
    mem.remember("editor = helix", key="editor")
    picked = mem.recall("which editor helix").picked
    assert [(r.text, r.node.headings, r.heading) for r in picked] == [
        ("editor = helix", ("Tools",), "")
    ]
    assert mem.get("editor").value == "helix"


def test_two_superseded_lines_leave_one_new_line_at_the_last_of_them(make_home) -> None:
    """Both old lines go; the new one sits where the later (in the file) of them was."""
    home = make_home(memory=f"# A\n{EMACS}\n- one\n# B\n{VIM}\n- two\n")
    res = Memory(home, index=False).remember("editor = helix", key="editor")
    assert sorted(res.superseded) == ["remacs", "rvim"]
    assert (home / "memory.md").read_text() == f"# A\n- one\n# B\n{res.line}\n- two\n"


def test_a_partial_supersede_goes_right_after_the_line_it_names(make_home) -> None:
    """A value for one week (the old record stays in force after it) sits right after it."""
    home = make_home(memory=NOTES)
    res = Memory(home, index=False).remember(
        "editor = nano this week", key="editor", until=dt.date(2099, 1, 8)
    )
    assert res.superseded == []
    assert "supersedes=rvim" in res.line
    assert (home / "memory.md").read_text() == (
        f"# Tools\n{VIM}\n{res.line}\n- the shell is zsh\n# Pets\n- the cat is called tom\n"
    )


def test_a_last_line_without_newline_and_crlf_lines_keep_their_shape(make_home) -> None:
    home = make_home(memory=f"# Tools\r\n- mine\r\n{VIM}")
    res = Memory(home, index=False).remember("editor = helix", key="editor")
    assert (home / "memory.md").read_bytes() == f"# Tools\r\n- mine\r\n{res.line}\n".encode()
    home2 = make_home(memory=f"# Tools\r\n{VIM}\r\n- mine\r\n", name="home2")
    res2 = Memory(home2, index=False).remember("editor = helix", key="editor")
    assert (home2 / "memory.md").read_bytes() == f"# Tools\r\n{res2.line}\r\n- mine\r\n".encode()


def test_a_save_after_the_read_is_kept_and_the_line_still_lands_in_place(
    make_home, monkeypatch
) -> None:
    """A person saves from an editor between talos's read and its replace: the write is
    redone on the saved file; the person's line is kept, the new line is still in place."""
    home = make_home(memory=NOTES)
    mf = home / "memory.md"
    real = write_txn.read_snapshot
    saves: list[int] = []

    def read_then_person_saves(path: Path) -> shared_file.Snapshot:
        snap = real(path)
        if not saves:
            saves.append(1)
            tmp = mf.with_name(".memory.md.swp")
            saved = mf.read_bytes().replace(b"# Pets", f"{PERSON_SAVE}\n# Pets".encode())
            tmp.write_bytes(saved)
            tmp.replace(mf)
        return snap

    monkeypatch.setattr(write_txn, "read_snapshot", read_then_person_saves)
    res = Memory(home, index=False).remember("editor = helix", key="editor")
    assert mf.read_text() == (
        f"# Tools\n{res.line}\n- the shell is zsh\n{PERSON_SAVE}\n# Pets\n- the cat is called tom\n"
    )
    assert [e["op"] for e in _log(home)] == ["supersede", "remember", "commit"]
    assert audit.verify(audit_log(home), mf) == []


# -- the race: a person writing while talos supersedes ---------------------------------------

SUPERSEDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from talos import Memory
    from talos.errors import TalosError

    home, go, rounds = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    mem = Memory(home, index=False)
    while not go.exists():
        time.sleep(0.001)
    ok = 0
    for i in range(1, rounds + 1):
        time.sleep(0.02)
        try:
            mem.remember(f"editor = helix{i}", key="editor")
            ok += 1
        except TalosError:
            pass  # an editor save put an older copy back: refused, nothing lost
    (home / "busy-supersede").unlink()
    print(ok)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX rename semantics")
def test_a_person_writing_during_superseding_remembers_loses_nothing(make_home) -> None:
    """300+ person lines (appends and editor saves, ``tests/test_outside_writer.py``'s person)
    while talos supersedes ``editor`` 15 times: every person line is kept, and the one editor
    line left is still right under ``# Tools`` (which one: an editor save may put an older copy
    back, the person's own lost update of talos's line, as in that file's race)."""
    home = make_home(memory=f"# Tools\n{VIM}\n# Notes\n- i wrote this line myself\n")
    go, done = home / "go", home / "done"
    (home / "busy-supersede").touch()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    mf = home / "memory.md"
    talos = subprocess.Popen(
        [sys.executable, "-c", SUPERSEDER, str(home), str(go), "15"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    person = subprocess.Popen(
        [sys.executable, "-c", PERSON_WRITER, str(mf), str(go), str(done), "300"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)  # let talos import and open the home
    go.touch()
    written, perr = person.communicate(timeout=120)
    assert person.returncode == 0, perr
    out, terr = talos.communicate(timeout=120)
    assert talos.returncode == 0, terr
    assert int(out) >= 2  # talos really superseded meanwhile
    lines = mf.read_text(encoding="utf-8").splitlines()
    wanted = {f"- person {'edit' if i % 4 == 3 else 'append'} {i} zqp" for i in range(int(written))}
    assert wanted - set(lines) == set()
    editors = [ln for ln in lines if ln.startswith("- editor = ")]
    assert len(editors) == 1
    assert lines[:2] == ["# Tools", editors[0]]
    assert lines[2:4] == ["# Notes", "- i wrote this line myself"]


# -- nested, quoted, BOM and duplicated lines superseded ---------------------------------------


VIM_RECORD = "editor = vim <!-- user 2025-03-01 id=rvim key=editor -->"


def test_a_nested_list_item_keeps_its_indent_when_superseded(make_home) -> None:
    home = make_home(memory=f"# Tools\n- editors\n  - {VIM_RECORD}\n  - the shell is zsh\n")
    res = Memory(home, index=False).remember("editor = helix", key="editor")
    lines = (home / "memory.md").read_text().splitlines()
    assert lines[2] == res.line
    assert res.line.startswith("  - editor = helix <!-- ")


def test_a_heading_record_superseded_leaves_its_section_a_heading(make_home) -> None:
    home = make_home(
        memory=f"# Tools\n## {VIM_RECORD}\n- modal editing everywhere\n# Pets\n- tom\n"
    )
    res = Memory(home, index=False).remember("editor = helix", key="editor")
    lines = (home / "memory.md").read_text().splitlines()
    assert lines[1] == res.line
    assert res.line.startswith("## editor = helix <!-- ")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (f"* {VIM_RECORD}", "* editor = helix"),  # another bullet starts another list
        (f"3. {VIM_RECORD}", "3. editor = helix"),
        (f"  > ### {VIM_RECORD}", "  > ### editor = helix"),
        (VIM_RECORD, "- editor = helix"),  # a plain line: the bullet talos writes
    ],
)
def test_a_superseding_line_takes_the_old_lines_marker(make_home, old: str, new: str) -> None:
    home = make_home(memory=f"# Tools\n{old}\n- the shell is zsh\n")
    mem = Memory(home, index=False)
    res = mem.remember("editor = helix", key="editor")
    lines = (home / "memory.md").read_text().splitlines()
    assert lines[1] == res.line and res.line.startswith(new + " <!-- ")
    # the log has the line as written: nothing was edited outside talos
    assert audit.outside_edits(audit_log(home), home / "memory.md") == []
    # and restoring the old record gives the file back as it was
    mem.restore("rvim")
    assert (home / "memory.md").read_text().splitlines()[1] == old


def test_restore_over_a_nested_successor_is_not_indented_twice(make_home) -> None:
    home = make_home(memory=f"# Tools\n- editors\n  - {VIM_RECORD}\n  - the shell is zsh\n")
    mem = Memory(home, index=False)
    mem.remember("editor = helix", key="editor")
    assert mem.restore("rvim") == f"  - {VIM_RECORD}"
    text = (home / "memory.md").read_text()
    assert text == f"# Tools\n- editors\n  - {VIM_RECORD}\n  - the shell is zsh\n"
    assert audit.verify(audit_log(home), home / "memory.md") == []
    assert audit.outside_edits(audit_log(home), home / "memory.md") == []


def test_restore_over_a_successor_the_person_edited_keeps_the_edit(make_home) -> None:
    home = make_home(memory=f"# Tools\n- {VIM_RECORD}\n- the shell is zsh\n")
    mem = Memory(home, index=False)
    res = mem.remember("editor = helix", key="editor")
    mf = home / "memory.md"
    mf.write_text(mf.read_text().replace("editor = helix", "editor = helix (my fork)"))
    mem.restore("rvim")
    text = mf.read_text()
    assert f"- {VIM_RECORD}" in text
    edited = res.line.replace("editor = helix", "editor = helix (my fork)")
    assert any(e.get("before") == edited for e in _log(home))


def test_a_blockquote_record_superseded_stays_in_the_quote(make_home) -> None:
    home = make_home(memory=f"# Tools\n> - {VIM_RECORD}\n> - the shell is zsh\n")
    res = Memory(home, index=False).remember("editor = helix", key="editor")
    lines = (home / "memory.md").read_text().splitlines()
    assert lines[1] == res.line
    assert res.line.startswith("> - editor = helix <!-- ")


def test_a_bom_file_keeps_its_bom_when_its_first_line_is_superseded(make_home) -> None:
    home = make_home(memory=f"\ufeff- {VIM_RECORD}\n- the shell is zsh\n")
    mem = Memory(home, index=False)
    mem.remember("editor = helix", key="editor")
    assert (home / "memory.md").read_bytes().startswith("\ufeff".encode())
    mem.restore("rvim")  # one BOM, not one of the file's and one of the line's
    assert (home / "memory.md").read_text() == f"\ufeff- {VIM_RECORD}\n- the shell is zsh\n"


def test_a_duplicated_old_line_superseded_is_restorable_as_two(make_home) -> None:
    home = make_home(memory=f"# A\n- {VIM_RECORD}\n# B\n- {VIM_RECORD}\n- two\n")
    res = Memory(home, index=False).remember("editor = helix", key="editor")
    text = (home / "memory.md").read_text()
    assert text.count("id=rvim") == 0
    assert res.line in text
    assert audit.verify(audit_log(home), home / "memory.md") == []
