"""The hostile pass over the write path (issues 12.1, 12.2, 12.5, 12.6, 13.2, 13.7).

Each test is a break found by attacking the fixed writer with real processes, outside
writers and bad values, written from the exact failing input before the fix; the docstring
says what happened before. Families: values on every write path, decisions on a key,
outside writers racing talos, a model's authority over MCP, trust rules a person can
predict.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from typer.testing import CliRunner

from talos import Memory, audit, shared_file, write_txn, writer
from talos.cli import app
from talos.errors import InputError
from talos.home import resolve_paths
from talos.mcp_server import build_server

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and renames")

MINE = "- i wrote this line myself\n"


def cli(home: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, [*args, "--home", str(home)], env={"COLUMNS": "200"})


def log_ops(home: Path) -> list[str]:
    path = home / ".talos" / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(x).get("op") for x in path.read_text().splitlines()]


# -- values: a byte that is not UTF-8 ------------------------------------------------------------


def test_a_non_utf8_byte_in_the_text_is_refused_and_later_writes_still_work(make_home) -> None:
    """The failing input: ``talos remember $'caf\\xff au lait please'`` (Python decodes the
    byte as the lone surrogate U+DCFF). Before: "unexpected error UnicodeEncodeError … a bug
    in talos", the audit entry stayed *prepared*, and every later write failed with the same
    error (recovery could not encode the line either) while doctor said the next write would
    settle it. Now the value is refused like a control character; nothing is written."""
    home = make_home(memory=MINE)
    res = cli(home, "remember", "caf\udcff au lait please")
    assert res.exit_code == 1
    assert res.stderr == (
        "talos remember: the text 'caf\\udcff au lait please': contains a byte that is not "
        "UTF-8 (0xFF)\n"
    )
    assert (home / "memory.md").read_text() == MINE
    assert log_ops(home) == []
    assert cli(home, "remember", "editor = vim", "--key", "editor").exit_code == 0


@pytest.mark.parametrize(
    ("option", "value", "shown"),
    [
        ("--ref", "r\udcff1", "--ref 'r\\udcff1': contains a byte that is not UTF-8 (0xFF)"),
        ("--by", "b\udc80", "--by 'b\\udc80': contains a byte that is not UTF-8 (0x80)"),
    ],
)
def test_a_non_utf8_byte_in_an_option_is_refused(make_home, option, value, shown) -> None:
    """Variants: the same byte in ``--ref`` and ``--by`` (both went into the tag unchecked)."""
    home = make_home(memory=MINE)
    res = cli(home, "remember", "editor = vim", "--key", "editor", option, value)
    assert res.exit_code == 1
    assert res.stderr == f"talos remember: {shown}\n"
    assert (home / "memory.md").read_text() == MINE
    assert log_ops(home) == []


def test_mcp_remember_refuses_a_lone_surrogate_from_json(make_home) -> None:
    """Variant over MCP: a JSON ``"\\ud800"`` escape reaches ``remember`` as a lone surrogate;
    it is a tool error with the sentence, and nothing is written."""
    home = make_home(memory=MINE)
    server = build_server(Memory(home))
    with pytest.raises(ToolError) as e:
        asyncio.run(server.call_tool("remember", {"text": "the build uses \ud800 make"}))
    # refused by the tool's schema now that the text is bounded (tests/test_mcp_bounds.py)
    assert str(e.value) == "remember: text: contains a lone surrogate, which is not UTF-8"
    assert (home / "memory.md").read_text() == MINE


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


# -- decisions on a key: keys outside ASCII, ids that are not unique -----------------------------


def test_a_key_outside_ascii_is_superseded_and_resolved_like_any_other(make_home) -> None:
    """The failing input: ``remember "editor = vim" --key édit`` then ``… "editor = emacs"
    --key édit``. The tag stores the key URL-encoded (``key=%C3%A9dit``) and the writer looked
    for the raw bytes of ``édit`` in each line first, so it never found its own records:
    no supersede (``get`` → conflict), and ``resolve`` said "not in memory.md any more"."""
    home = make_home(memory=MINE)
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="édit")
    emacs = mem.remember("editor = emacs", key="édit")
    assert emacs.superseded == [vim.id]
    assert mem.get("édit").value == "emacs"
    # variant: a conflict between two hand-written tags of such a key, one with the key
    # URL-encoded and one with it as typed, can be resolved
    mf = home / "memory.md"
    with mf.open("a", encoding="utf-8") as f:
        f.write("- color = red <!-- user 2026-01-05 id=rred key=c%C3%B6lor -->\n")
        f.write("- color = blue <!-- user 2026-01-05 id=rblue key=cölor -->\n")
    assert mem.get("cölor").reason == "conflict"
    assert mem.resolve("cölor", "rblue") == ["rred"]
    assert mem.get("cölor").value == "blue"


def test_restore_of_a_record_edited_in_place_never_duplicates_its_id(make_home) -> None:
    """The failing input: a record ``editor = vim`` edited by hand to ``editor = nvim`` (its
    id kept; doctor: nothing to do), then ``talos restore ID``. Before: the old line was
    appended beside the edited one, two records with one id, an unresolvable conflict
    (``resolve --keep ID`` said "kept ID; superseded nothing"). Now restore refuses and names
    the line."""
    home = make_home(memory=MINE)
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    mf = home / "memory.md"
    mf.write_text(mf.read_text().replace("= vim", "= nvim"))
    before = mf.read_text()
    with pytest.raises(InputError) as e:
        mem.restore(vim.id)
    assert str(e.value) == (
        f"record {vim.id} is in {resolve_paths(home).memory_file} already (line 2, edited "
        "outside talos): nothing to restore"
    )
    assert mf.read_text() == before
    assert mem.get("editor").value == "nvim"


def test_resolve_refuses_an_id_that_two_lines_carry(make_home) -> None:
    """Variant: a person copied a record's line and changed the value (both lines carry one
    id). ``resolve --keep ID`` cannot tell which to keep: it says so instead of "kept ID;
    superseded nothing" with the conflict left in place."""
    home = make_home(memory=MINE)
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    mf = home / "memory.md"
    mf.write_text(mf.read_text() + vim.line.replace("= vim", "= nano") + "\n")
    assert mem.get("editor").reason == "conflict"
    with pytest.raises(InputError) as e:
        mem.resolve("editor", vim.id)
    assert str(e.value) == (
        f"record id {vim.id} is on lines 2, 3 of {resolve_paths(home).memory_file}: talos "
        "cannot tell which one to keep. Nothing was changed; give one of them another id "
        "(or delete one) by hand"
    )


# -- outside writers: a line still being written, a file held open, a link, two homes ------------

#: A person's process that appends to memory.md through one descriptor held open: ``argv[2]``
#: is written first, then (after ``argv[4]`` seconds) ``argv[3]``, in pieces of a line or
#: whole lines every 0.1 s (``argv[5]`` lines), like ``{ printf …; sleep …; } >> memory.md``
#: or ``cat >> memory.md``. It touches ``argv[6]`` once the first write is in the file.
HOLDER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    mf, first, rest, pause, lines, ready = sys.argv[1:7]
    fd = os.open(mf, os.O_WRONLY | os.O_APPEND)
    os.write(fd, first.encode())
    Path(ready).touch()
    time.sleep(float(pause))
    os.write(fd, rest.encode())
    for i in range(int(lines)):
        time.sleep(0.1)
        os.write(fd, f"- typed line {i}\\n".encode())
    os.close(fd)
    """
)


def hold(mf: Path, first: str, rest: str, pause: float, lines: int = 0) -> subprocess.Popen:
    ready = mf.with_name("ready")
    ready.unlink(missing_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(mf), first, rest, str(pause), str(lines), str(ready)]
    )
    deadline = time.monotonic() + 10
    while not ready.exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.005)
    return proc


def test_a_line_being_written_is_never_split_by_an_append(make_home) -> None:
    """The failing input: a person's process writes ``- half a line`` to memory.md, and
    `` and its other half`` a moment later (one line in two writes, as a long ``echo`` or
    ``{ printf …; printf …; } >> memory.md`` does), while ``talos remember`` appends. Before:
    talos ended the unfinished line with a newline and appended, so the person's line came
    out as ``- half a line`` / talos's line / `` and its other half``. Now talos waits for a
    line someone is still writing."""
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    person = hold(mf, "- half a line", " and its other half\n", 0.3)
    res = Memory(home, index=False).remember("the office plant needs water on fridays")
    assert person.wait(10) == 0
    assert mf.read_text() == f"{MINE}- half a line and its other half\n{res.line}\n"


def test_a_line_being_written_is_never_split_by_a_supersede(make_home) -> None:
    """Variant on the replace path: a superseding ``remember`` while the person's line is
    half-written. Before: the bytes appended after talos read the file were carried after
    its edit, splitting the line the same way."""
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    person = hold(mf, "- half a line", " and its other half\n", 0.3)
    helix = mem.remember("editor = helix", key="editor")
    assert person.wait(10) == 0
    assert helix.superseded == [vim.id]
    assert mf.read_text() == f"{MINE}{helix.line}\n- half a line and its other half\n"


def test_a_file_held_open_for_writing_is_not_replaced_under_its_writer(
    make_home, monkeypatch
) -> None:
    """The failing input: a person typing into ``cat >> memory.md`` (one descriptor held
    open, a line every 0.1 s) while ``talos remember … --key editor`` supersedes. Before:
    talos replaced the file, carried the writer's lines for one second, warned, and every
    line typed after that went to the replaced file, which has no name: lost, while doctor
    said the home was healthy. Now talos waits for the writer and, when it stays, changes
    nothing and says so; the plain appends of other writes still work meanwhile."""
    monkeypatch.setattr(shared_file, "DRAIN_SECONDS", 0.2)
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    person = hold(mf, "- typed first\n", "", 0.0, lines=8)
    with pytest.raises(shared_file.HeldOpen) as e:
        mem.remember("editor = helix", key="editor")
    assert str(e.value) == (
        f"{mf}: another program holds it open for writing (waited 0.2 s); talos changed "
        "nothing, so nothing that program writes is lost. Close it (or let it finish) and "
        "try again"
    )
    note = mem.remember("the office plant needs water on fridays")  # an append is safe
    assert person.wait(10) == 0
    lines = mf.read_text().splitlines()
    assert [ln for ln in lines if ln.startswith("- typed")] == ["- typed first"] + [
        f"- typed line {i}" for i in range(8)
    ]
    assert vim.line in lines and note.line in lines
    assert log_ops(home) == ["remember", "commit", "remember", "commit"]  # nothing else tried
    assert audit.verify(home / ".talos" / "audit.jsonl", mf) == []
    assert mem.remember("editor = helix", key="editor").superseded == [vim.id]


EDITOR = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    mf, ready = sys.argv[1:3]
    fd = os.open(mf, os.O_RDWR)  # an editor that keeps its file open and saves in place
    text = os.pread(fd, 1 << 20, 0)
    Path(ready).touch()
    time.sleep(0.8)
    os.ftruncate(fd, 0)
    os.pwrite(fd, text + b"- saved by my editor\\n", 0)
    os.close(fd)
    """
)


def test_an_editor_that_holds_the_file_and_saves_late_keeps_its_save(
    make_home, monkeypatch
) -> None:
    """Variant: an editor that opened memory.md read-write and saves in place 0.8 s later.
    Before: talos replaced the file meanwhile, so the save went to the replaced file and the
    person's whole save was lost. Now the replace waits, then refuses; the save lands."""
    monkeypatch.setattr(shared_file, "DRAIN_SECONDS", 0.2)
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    ready = home / "ready"
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(mf), str(ready)])
    while not ready.exists():
        time.sleep(0.005)
    with pytest.raises(shared_file.HeldOpen):
        mem.remember("editor = helix", key="editor")
    assert editor.wait(10) == 0
    assert mf.read_text() == f"{MINE}{vim.line}\n- saved by my editor\n"


def test_memory_md_turned_into_a_link_meanwhile_stays_a_link(make_home, monkeypatch) -> None:
    """The failing input: while ``remember … --key editor`` supersedes, the person moves
    memory.md into a dotfiles folder and links it back (``mv memory.md dot/real.md; ln -s
    dot/real.md memory.md``). Before: talos's identity checks followed the new link to the
    same inode and its swap replaced the *link* with a regular file: dot/real.md kept the old
    content, and the person's later edits of it never reached memory.md. Now a link put in
    place of the file is a change: the edit is redone through the link."""
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    real = audit.Txn.prepare

    def prepare_then_person_links(self: audit.Txn, records: list[dict[str, Any]]) -> None:
        real(self, records)
        if not (home / "dot").exists():
            (home / "dot").mkdir()
            os.replace(mf, home / "dot" / "real.md")
            os.symlink("dot/real.md", mf)

    monkeypatch.setattr(audit.Txn, "prepare", prepare_then_person_links)
    helix = mem.remember("editor = helix", key="editor")
    monkeypatch.undo()
    assert mf.is_symlink()
    assert (home / "dot" / "real.md").read_text() == f"{MINE}{helix.line}\n"
    assert helix.superseded == [vim.id]
    assert audit.verify(home / ".talos" / "audit.jsonl", resolve_paths(home).memory_file) == []


def test_a_link_swapped_in_right_before_the_exchange_is_put_back(make_home, monkeypatch) -> None:
    """Variant: the link appears after talos's last look, in the instant before its atomic
    exchange. The file swapped out is then the link, not the file read: it is swapped back,
    and the edit redone through it."""
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    real = shared_file._exchange

    def link_then_exchange(a: Path, b: Path) -> bool:
        if b == mf and not (home / "dot").exists():
            (home / "dot").mkdir()
            os.replace(mf, home / "dot" / "real.md")
            os.symlink("dot/real.md", mf)
        return real(a, b)

    monkeypatch.setattr(shared_file, "_exchange", link_then_exchange)
    a, b = home / "probe-a", home / "probe-b"
    a.write_text("a")
    b.write_text("b")
    if not real(a, b):
        pytest.skip("no atomic exchange on this file system")
    helix = mem.remember("editor = helix", key="editor")
    assert mf.is_symlink()
    assert (home / "dot" / "real.md").read_text() == f"{MINE}{helix.line}\n"
    assert helix.superseded == [vim.id]


def test_two_homes_sharing_a_memory_file_never_sweep_each_others_temp_file(
    make_home, monkeypatch, tmp_path
) -> None:
    """The failing input: two homes whose talos.toml name one ``memory_file``, writing at once
    (a 4-second race of superseding remembers in each). Before: each home's write swept the
    ``.memory.md.*.tmp`` files beside memory.md as stale — its own lock said no writer was
    active — and so deleted the other home's temp file mid-write: ``FileNotFoundError`` out
    of ``remember``. Here the interleaving is forced: home B writes while home A's temp file
    exists. Now every writer of a file in that folder holds one lock on the folder."""
    a = make_home(memory=MINE, name="a")
    b = tmp_path / "b"
    b.mkdir()
    (b / "talos.toml").write_text(f'memory_file = "{a / "memory.md"}"\n')
    mem_a = Memory(a, index=False)
    vim = mem_a.remember("editor = vim", key="editor")
    other = textwrap.dedent(
        """
        import sys
        from talos import Memory
        print(Memory(sys.argv[1], index=False).remember("beta note from home b zz").id)
        """
    )
    procs: list[subprocess.Popen] = []
    real = shared_file._unchanged

    def home_b_writes_meanwhile(snap: shared_file.Snapshot) -> bool:
        if not procs:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", other, str(b)], stdout=subprocess.PIPE, text=True
                )
            )
            # before the fix it is done at once; now it waits for home A's write
            with contextlib.suppress(subprocess.TimeoutExpired):
                procs[0].wait(2.0)
        return real(snap)

    monkeypatch.setattr(shared_file, "_unchanged", home_b_writes_meanwhile)
    helix = mem_a.remember("editor = helix", key="editor")
    monkeypatch.undo()
    out, _ = procs[0].communicate(timeout=60)
    assert procs[0].returncode == 0
    lines = (a / "memory.md").read_text().splitlines()
    assert helix.superseded == [vim.id]
    assert helix.line in lines and any(f"id={out.strip()}" in ln for ln in lines)
    assert MINE.strip() in lines


# -- a model's authority over MCP ----------------------------------------------------------------


def test_a_model_record_in_another_scope_never_stands_in_for_the_persons(make_home) -> None:
    """The failing input: the person's ``editor = vim`` (global); an MCP server started with
    ``--scope project:alpha,global``; the model remembers ``editor = emacs`` with key editor
    (written to the first scope, alpha). Before: stored "active", and ``get editor`` in that
    server returned the model's emacs — the first scope wins — over the person's own value.
    Now a model-written record is shadowed by the person's record of its key in any
    authorized scope: the write says so, and get and recall give the person's value."""
    home = make_home(memory="- editor = vim <!-- user 2026-01-01 id=rvim key=editor -->\n")
    mem = Memory(home, scopes=["project:alpha", "global"], index=False)
    server = build_server(mem)
    res = asyncio.run(server.call_tool("remember", {"text": "editor = emacs", "key": "editor"}))
    written = res.structured_content if hasattr(res, "structured_content") else res[1]
    assert written["status"] == "shadowed"
    got = asyncio.run(server.call_tool("get", {"key": "editor"}))
    got = got.structured_content if hasattr(got, "structured_content") else got[1]
    assert (got["reason"], got["value"], got["inferred"]) == ("ok", "vim", False)
    text = mem.recall("which editor do i use").text
    assert "editor = vim" in text and "emacs" not in text
    why = {w.node.text: (w.reason, w.detail) for w in mem.why_not("which editor emacs")}
    assert why["editor = emacs"] == ("shadowed", "rvim")


def test_an_allowed_tool_write_in_another_scope_is_shadowed_too(make_home) -> None:
    """Variant: with ``--allow-tool-writes`` and a ``tool`` source with a ref (rank of the
    person's own), in the other scope order (global first, the model writing to global
    while the person's record is in alpha): still shadowed, in every reader."""
    home = make_home(
        memory="- editor = vim <!-- user 2026-01-01 id=rvim key=editor scope=project:alpha -->\n"
    )
    mem = Memory(home, scopes=["global", "project:alpha"], index=False)
    server = build_server(mem, allow_tool_writes=True)
    res = asyncio.run(
        server.call_tool(
            "remember",
            {"text": "editor = emacs", "key": "editor", "source": "tool", "ref": "run:9"},
        )
    )
    written = res.structured_content if hasattr(res, "structured_content") else res[1]
    assert written["status"] == "shadowed"
    assert mem.get("editor").value == "vim"
    assert Memory(home, scopes=["global"], index=False).get("editor").value == "emacs"


# -- trust rules a person can predict ------------------------------------------------------------


def _day(offset: int) -> str:
    import datetime as dt

    return (dt.date.today() + dt.timedelta(days=offset)).isoformat()


def test_restoring_a_one_week_value_leaves_the_current_one_in_force_outside_it(
    make_home,
) -> None:
    """The failing input (issue 12.6's class, on restore): ``editor = vim``; ``editor = nano
    --from +6d --until +13d`` (next week only); ``editor = helix`` (open-ended, supersedes
    both); ``talos restore NANO``. Before: the restore superseded helix for good, so ``get``
    today said not-yet-valid and after next week expired: no editor at all. Now a restored
    record takes back its place only inside its own window, as ``remember`` decides."""
    home = make_home(memory=MINE)
    mem = Memory(home, index=False)
    import datetime as dt

    today = dt.date.today()
    vim = mem.remember("editor = vim", key="editor")
    nano = mem.remember(
        "editor = nano",
        key="editor",
        valid_from=today + dt.timedelta(days=6),
        until=today + dt.timedelta(days=13),
    )
    helix = mem.remember("editor = helix", key="editor")
    assert nano.id in helix.superseded
    done = mem.restore_record(nano.id)
    assert done.superseded == ()
    at = {n: mem.get("editor", at=today + dt.timedelta(days=n)).value for n in (0, 7, 14)}
    assert at == {0: "helix", 7: "nano", 14: "helix"}
    lines = (home / "memory.md").read_text().splitlines()
    assert done.line in lines and done.line.endswith(f" supersedes={vim.id},{helix.id} -->")
    assert done.line.startswith(nano.line.split(" <!--")[0] + " <!-- ")
    assert audit.verify(home / ".talos" / "audit.jsonl", resolve_paths(home).memory_file) == []
    # helix no longer names nano (both naming each other would be a conflict): audited
    helix_now = next(ln for ln in lines if f"id={helix.id}" in ln)
    assert helix_now == helix.line.replace(f",{nano.id}", "")
    assert [e["op"] for e in mem.history(helix.id)] == ["remember", "restore"]


def test_restores_in_any_order_end_in_a_state_a_person_asked_for(make_home) -> None:
    """Variant: a chain vim → emacs → helix (each superseding the last), then restore emacs,
    restore vim, restore helix: after each, ``get`` gives the record just restored and
    memory.md holds one active line of the key."""
    home = make_home(memory=MINE)
    mem = Memory(home, index=False)
    ids = {v: mem.remember(f"editor = {v}", key="editor").id for v in ("vim", "emacs", "helix")}
    for v in ("emacs", "vim", "helix", "emacs"):
        mem.restore(ids[v])
        assert mem.get("editor").value == v
        keyed = [ln for ln in (home / "memory.md").read_text().splitlines() if "key=editor" in ln]
        assert len(keyed) == 1, keyed


class _Person:
    """A person's ``>>`` writing one line in two pieces through one descriptor: the first
    piece now, the rest ``later`` seconds after, from a thread (what a long ``echo`` or
    ``{ printf '- half'; printf ' rest\\n'; } >> memory.md`` does)."""

    def __init__(self, mf: Path, first: bytes, rest: bytes, later: float = 0.05) -> None:
        self.fd = os.open(mf, os.O_WRONLY | os.O_APPEND)
        os.write(self.fd, first)
        self.thread = threading.Thread(target=self._finish, args=(rest, later))
        self.thread.start()

    def _finish(self, rest: bytes, later: float) -> None:
        time.sleep(later)
        os.write(self.fd, rest)
        os.close(self.fd)


def test_a_line_begun_in_the_instant_before_the_exchange_is_not_split(
    make_home, monkeypatch
) -> None:
    """The failing input, from a race (a person writing each line in two pieces 3 ms apart,
    a superseding ``remember`` in a loop: 102 of 826 person lines split or glued in 4 s):
    the first piece lands after talos's last look, right before its atomic exchange; the
    rest went to the replaced file and was carried over only after the person's next line.
    Now a file swapped out in the middle of a line is swapped back and the edit redone."""
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    real = shared_file._exchange
    people: list[_Person] = []

    def person_begins_a_line_then_exchange(a: Path, b: Path) -> bool:
        if b == mf and not people:
            people.append(_Person(mf, b"- half a line", b" and its other half\n"))
        return real(a, b)

    monkeypatch.setattr(shared_file, "_exchange", person_begins_a_line_then_exchange)
    helix = mem.remember("editor = helix", key="editor")
    people[0].thread.join()
    assert helix.superseded == [vim.id]
    assert mf.read_text() == f"{MINE}{helix.line}\n- half a line and its other half\n"


def test_an_append_that_lands_inside_a_line_being_written_is_moved_after_it(
    make_home, monkeypatch
) -> None:
    """Variant on the append path (3 of 927 lines in the same race, after the wait for a
    line in progress): the person's first piece lands in the microseconds between talos's
    last look and its write, so talos's line is glued onto it. Now the append sees where it
    landed and moves its line after the person's, once that is finished."""
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    inode = mf.stat().st_ino
    real = os.write
    people: list[_Person] = []

    def write(fd: int, data: Any) -> int:
        if not people and os.fstat(fd).st_ino == inode and bytes(data).endswith(b"-->\n"):
            people.append(_Person(mf, b"- half a line", b" and its other half\n"))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    res = Memory(home, index=False).remember("the office plant needs water on fridays")
    monkeypatch.undo()
    people[0].thread.join()
    assert mf.read_text() == f"{MINE}- half a line and its other half\n{res.line}\n"
    assert audit.verify(home / ".talos" / "audit.jsonl", mf) == []


def test_a_read_only_memory_md_is_not_rewritten_by_a_supersede(make_home, monkeypatch) -> None:
    """The failing input: ``chmod a-w memory.md``, then ``remember … --key editor`` (as a
    person, not root). The append of a plain remember is refused by the system, but the
    superseding write replaced the read-only file all the same (a rename needs only the
    folder). Now a replace is refused alike: the error names memory.md, nothing changes."""
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    before = mf.read_bytes()
    real = os.access

    def access(path: Any, mode: int, **kw: Any) -> bool:  # what a non-root person gets
        if Path(path) == mf and mode & os.W_OK:
            return False
        return real(path, mode, **kw)

    monkeypatch.setattr(os, "access", access)
    res = cli(home, "remember", "editor = helix", "--key", "editor")
    assert res.exit_code == 1
    assert res.stderr == (
        f"talos remember: {mf}: permission denied: make it (and its folder) readable and "
        "writable for you, and try again\n"
    )
    assert mf.read_bytes() == before
    assert log_ops(home) == ["remember", "commit"]
    monkeypatch.undo()
    assert mem.get("editor").record.fields["id"] == vim.id


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes a read-only file anyway")
def test_a_read_only_memory_md_refuses_every_write(make_home) -> None:
    """Variant with a real ``chmod 444`` (run as a person): append and replace alike."""
    home = make_home(memory=MINE + "- editor = vim <!-- user 2026-01-01 key=editor -->\n")
    mf = home / "memory.md"
    mf.chmod(0o444)
    before = mf.read_bytes()
    for args in (["a plain fact here"], ["editor = helix", "--key", "editor"]):
        res = cli(home, "remember", *args)
        assert res.exit_code == 1 and "permission denied" in res.stderr
    assert mf.read_bytes() == before


def test_memory_md_deleted_right_before_the_exchange_is_a_change(make_home, monkeypatch) -> None:
    """The failing input: the person deletes memory.md in the instant before talos's atomic
    exchange. Before: "memory.md: it does not exist: check the path" (the write failed).
    Now it is a change like any other: the edit is redone on what is there (nothing), and
    the deleted lines are not brought back."""
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    mem = Memory(home, index=False)
    mem.remember("editor = vim", key="editor")
    real = shared_file._exchange
    gone: list[bool] = []

    def delete_then_exchange(a: Path, b: Path) -> bool:
        if b == mf and not gone:
            gone.append(True)
            mf.unlink()
        return real(a, b)

    monkeypatch.setattr(shared_file, "_exchange", delete_then_exchange)
    helix = mem.remember("editor = helix", key="editor")
    assert gone and helix.superseded == []
    assert mf.read_text() == f"{helix.line}\n"
    assert list(home.glob(".memory.md.*")) == []


# -- values: very long ---------------------------------------------------------------------------


def test_one_huge_write_cannot_make_memory_md_unreadable(make_home, monkeypatch) -> None:
    """The failing input (scaled down: the bound made 8 KB, under the 10,000 characters a
    fact may hold, tests/test_mcp_bounds.py; it was 300,000 characters): one ``remember``
    over MCP. Before: appended, memory.md passed the size talos
    reads, and from then on recall had no facts at all and every write was refused
    (``FileTooLarge``) — one model call took the person's whole memory away. Now no write
    takes memory.md past the bound; the facts stay readable."""
    from talos import fsutil

    monkeypatch.setattr(fsutil, "MAX_MEMORY_BYTES", 8_000)
    home = make_home(memory=MINE + "- the build uses make\n")
    mf = resolve_paths(home).memory_file
    mem = Memory(home, index=False)
    server = build_server(mem)
    with pytest.raises(ToolError) as e:
        asyncio.run(server.call_tool("remember", {"text": "x " * 4_500}))
    assert str(e.value) == (
        f"Error executing tool remember: {mf}: this write would make it 9,102 bytes long, "
        "more than the 8,000 talos reads; nothing was changed (remove lines you no longer "
        "need)"
    )
    assert (home / "memory.md").read_text() == MINE + "- the build uses make\n"
    assert "the build uses make" in mem.recall("build make").text
    # variant: a superseding write (a replace) that would grow past the bound
    vim = mem.remember("editor = vim", key="editor")
    with pytest.raises(InputError):
        mem.remember("editor = " + "x" * 9_000, key="editor")
    assert mem.get("editor").record.fields["id"] == vim.id


def test_a_very_long_key_is_refused_with_its_length_not_its_value(make_home) -> None:
    """Variant: a 20,000-character ``--key`` (or ``--ref``) was stored in the tag; now it is
    refused, and the message gives its length instead of printing it."""
    home = make_home(memory=MINE)
    res = cli(home, "remember", "editor = vim", "--key", "k" * 20_000)
    assert res.exit_code == 1
    assert res.stderr == (
        "talos remember: --key is 20,000 characters long; a value holds at most 1,000\n"
    )
    res = cli(home, "remember", "editor = vim", "--ref", "r" * 1_001, "--source", "tool")
    assert (
        res.stderr
        == "talos remember: --ref is 1,001 characters long; a value holds at most 1,000\n"
    )
    assert (home / "memory.md").read_text() == MINE


def test_doctor_names_a_long_record_lost_to_an_outside_edit_in_one_short_line(make_home) -> None:
    """Found in the SIGKILL race: a person's editor saved an older copy over a 6,000-
    character record talos had just appended; doctor said what to do, correctly, but printed
    the whole text in the sentence. The text is cut at 80 characters."""
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    res = Memory(home, index=False).remember("talos note " + "w " * 3000)
    mf.write_text(MINE)  # the editor's older copy
    found = [
        o.message
        for o in audit.outside_edits(
            home / ".talos" / "audit.jsonl", resolve_paths(home).memory_file
        )
    ]
    assert found == [
        f"record {res.id} 'talos note{' w' * 35}…' is not in memory.md: it was removed "
        "outside talos (by hand, or an editor saved an older copy over it); talos restore "
        f"{res.id} brings it back (talos doctor --ack if you meant it)"
    ]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_replace_keeps_memory_md_owned_by_its_person(make_home) -> None:
    """The failing input: a person's 0600 memory.md, and ``sudo talos remember … --key
    editor`` (a superseding write as root). Before: the new file was root's, 0600 — its
    owner could no longer read their own memory. Now the owner and group are kept."""
    import pwd

    nobody = pwd.getpwnam("nobody")
    home = make_home(memory=MINE + "- editor = vim <!-- user 2026-01-01 key=editor -->\n")
    mf = home / "memory.md"
    os.chown(mf, nobody.pw_uid, nobody.pw_gid)
    mf.chmod(0o600)
    Memory(home, index=False).remember("editor = helix", key="editor")
    st = mf.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (nobody.pw_uid, nobody.pw_gid, 0o600)
    assert "editor = helix" in mf.read_text()


def test_a_line_finished_right_after_the_exchange_is_not_split(make_home, monkeypatch) -> None:
    """Variant (the same race, 2 to 4 of ~1300 lines split after the first fix): the first
    piece lands before the exchange and is carried over right after it, and the rest
    arrives in the old file a moment later, before talos's last look — so the old file
    looked complete, the rest was carried only later, after the person's next line. Now
    half a line carried over right after the exchange swaps the file back."""
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    real_exchange, real_carry = shared_file._exchange, shared_file.Snapshot._carry_to
    fds: list[int] = []

    def person_begins_then_exchange(a: Path, b: Path) -> bool:
        if b == mf and not fds:
            fds.append(os.open(mf, os.O_WRONLY | os.O_APPEND))
            os.write(fds[0], b"- half a line")
        return real_exchange(a, b)

    def carry_then_person_finishes(snap: Any, dest: Path, *args: Any, **kw: Any) -> bytes:
        got = real_carry(snap, dest, *args, **kw)
        if dest == mf and fds and got.endswith(b"half a line"):
            os.write(fds[0], b" and its other half\n")  # to the file swapped out
            os.close(fds[0])
            with open(mf, "ab") as f:  # and the person's next line, to what is there now
                f.write(b"- my next line\n")
        return got

    monkeypatch.setattr(shared_file, "_exchange", person_begins_then_exchange)
    monkeypatch.setattr(shared_file.Snapshot, "_carry_to", carry_then_person_finishes)
    helix = mem.remember("editor = helix", key="editor")
    assert helix.superseded == [vim.id]
    assert mf.read_text() == (
        f"{MINE}{helix.line}\n- half a line and its other half\n- my next line\n"
    )


COPY = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    mf, src, ready = sys.argv[1:4]
    data = Path(src).read_bytes()
    cut = data.index(b"\\n", len(data) // 2) + 1  # a buffer boundary that falls on a newline
    fd = os.open(mf, os.O_WRONLY | os.O_TRUNC)  # what cp does to an existing file
    os.write(fd, data[:cut])
    Path(ready).touch()
    time.sleep(0.3)
    os.write(fd, data[cut:])
    os.close(fd)
    """
)


def test_a_supersede_while_cp_writes_the_file_decides_on_all_of_it(make_home) -> None:
    """The failing input: ``cp backup.md memory.md`` (truncate, then the content in pieces)
    while ``remember … --key editor`` supersedes; the backup's ``editor`` record is in its
    second half. Before: talos read the first half, waited for cp, took the second half for
    lines appended meanwhile, and appended its new record without superseding the old one:
    a conflict nobody asked for. Now, after waiting for a writer, the edit is redone on the
    whole file."""
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    backup = home / "backup.md"
    backup.write_text("".join(f"- an old note number {i}\n" for i in range(40)) + vim.line + "\n")
    ready = home / "ready"
    cp = subprocess.Popen([sys.executable, "-c", COPY, str(mf), str(backup), str(ready)])
    while not ready.exists():
        time.sleep(0.005)
    helix = mem.remember("editor = helix", key="editor")
    assert cp.wait(10) == 0
    assert helix.superseded == [vim.id]
    assert mem.get("editor").value == "helix"
    assert mf.read_text() == backup.read_text().replace(vim.line + "\n", "") + helix.line + "\n"


def test_a_rewrite_while_cp_writes_the_file_decides_on_all_of_it(make_home) -> None:
    """Variant on the replace path: the backup cp writes holds one record of the key in its
    first half (so talos plans a rewrite) and another in its second. Before, the second half
    was carried over as appended lines and its record survived the supersede: helix against
    nano, a conflict. Now the rewrite is redone on the whole file."""
    home = make_home(memory=MINE)
    mf = home / "memory.md"
    mem = Memory(home, index=False)
    vim = mem.remember("editor = vim", key="editor")
    nano = "- editor = nano <!-- user 2026-01-02 id=rnano key=editor -->"
    notes = "".join(f"- an old note number {i}\n" for i in range(40))
    (home / "backup.md").write_text(f"{vim.line}\n{notes}{nano}\n")
    mf.write_text(f"{vim.line}\n")
    ready = home / "ready"
    cp = subprocess.Popen(
        [sys.executable, "-c", COPY, str(mf), str(home / "backup.md"), str(ready)]
    )
    while not ready.exists():
        time.sleep(0.005)
    helix = mem.remember("editor = helix", key="editor")
    assert cp.wait(10) == 0
    assert sorted(helix.superseded) == sorted([vim.id, "rnano"])
    assert mem.get("editor").value == "helix"
    assert mf.read_text() == f"{notes}{helix.line}\n"
