"""Issue 12.6: trust rules a person can predict (design §7.4–§7.6).

(a) a value for a later window does not supersede the current one; windows that do not
overlap never supersede; ``get --at`` returns each in its time. (b) ``restore`` of a
superseded record makes it current again. (c) ``revoke`` of a ref nothing carries is an error.
(d) ``forget`` names each removed id with its restore command, a skill as a skill. (e) the tag
decides what ``dead`` proposes, and ``dead``/``doctor`` show it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import pytest
from helpers import audit_log
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.doctor import diagnose
from talos.errors import InputError
from talos.home import resolve_paths
from talos.writer import audit

README = Path(__file__).resolve().parent.parent / "README.md"


def day(offset: int) -> str:
    """The local day ``offset`` days from today (ISO), when the test asks for it."""
    return (dt.date.today() + dt.timedelta(days=offset)).isoformat()


def cli(home: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, [*args, "--home", str(home)], env={"COLUMNS": "200"})


def lid(line: str) -> str:
    return "L" + hashlib.sha256(line.encode("utf-8")).hexdigest()[:9]


def value(home: Path, *at: str) -> tuple[int, str]:
    r = cli(home, "get", "editor", *(("--at", at[0]) if at else ()))
    return r.exit_code, r.stdout.strip() or r.stderr.strip()


@pytest.fixture
def vim_record() -> str:
    """The person's editor, ``vim``, observed 30 days before the test runs."""
    return f"- editor = vim <!-- user {day(-30)} key=editor -->"


# -- (a) validity windows ---------------------------------------------------------------------


def test_a_value_for_next_week_leaves_the_current_one_in_force(make_home, vim_record: str) -> None:
    """12.6a, the failing input: ``--from +6d --until +13d`` over an open-ended value. The
    current value stays (get today: vim, not "not-yet-valid"); inside the window the new one
    wins; after it, vim again. (Checked: with "covers" ignored, vim is superseded and get
    today says not-yet-valid.)"""
    home = make_home(memory=vim_record + "\n")
    r = cli(
        home, "remember", "editor = nano", "--key", "editor", "--from", day(6), "--until", day(13)
    )
    assert r.exit_code == 0, r.stderr
    lines = (home / "memory.md").read_text().splitlines()
    assert lines[0] == vim_record
    assert lines[-1].endswith(f"from={day(6)} until={day(13)} supersedes={lid(vim_record)} -->")
    assert value(home) == (0, "vim")
    assert value(home, day(9)) == (0, "nano")
    assert value(home, day(20)) == (0, "vim")
    assert cli(home, "conflicts", "--at", day(9), "--json").stdout.count('"records"') == 0


def test_windows_that_do_not_overlap_never_supersede(make_home, today: dt.date) -> None:
    """12.6a variant: this week's value and next week's value, back to back (``until`` is
    exclusive): both kept, no ``supersedes=``, each returned in its own time."""
    home = make_home(memory="- i like tea\n")
    mem = Memory(home)
    a = mem.remember(
        "editor = vim", key="editor", valid_from=today, until=today + dt.timedelta(days=7)
    )
    b = mem.remember(
        "editor = nano",
        key="editor",
        valid_from=today + dt.timedelta(days=7),
        until=today + dt.timedelta(days=14),
    )
    assert (a.superseded, b.superseded, b.status) == ([], [], "active")
    assert "supersedes=" not in b.line
    assert value(home) == (0, "vim")
    assert value(home, day(7)) == (0, "nano")
    assert value(home, day(14))[0] == 3  # both expired
    assert (home / "memory.md").read_text().splitlines() == ["- i like tea", a.line, b.line]


def test_a_value_that_covers_the_rest_still_supersedes(
    make_home, vim_record: str, today: dt.date
) -> None:
    """12.6a, the other side: an open-ended value from today covers vim's future, so vim is
    superseded as before; a value from a later day without an end takes over only then."""
    home = make_home(memory=vim_record + "\n")
    mem = Memory(home)
    later = mem.remember("editor = nano", key="editor", valid_from=today + dt.timedelta(days=3))
    assert later.superseded == []
    assert (value(home), value(home, day(3))) == ((0, "vim"), (0, "nano"))
    now = mem.remember("editor = helix", key="editor")
    assert now.superseded == [lid(vim_record), later.id]
    assert (home / "memory.md").read_text().splitlines() == [now.line]


# -- (b) restore makes the record current ------------------------------------------------------


def test_restore_after_a_supersede_makes_the_record_current(make_home, vim_record: str) -> None:
    """12.6b, the failing input through the API: get returns the restored value (it was a
    conflict, exit 3), and the successor is superseded, audited and restorable."""
    home = make_home(memory=vim_record + "\n")
    mem = Memory(home)
    helix = mem.remember("editor = helix", key="editor")
    done = mem.restore_record(lid(vim_record))
    assert (done.line, done.superseded) == (vim_record, (helix.id,))
    assert value(home) == (0, "vim")
    assert [e["op"] for e in mem.history(helix.id)] == ["remember", "supersede"]
    r = cli(home, "restore", helix.id, "--json")
    assert json.loads(r.stdout)["data"] == {
        "id": helix.id,
        "line": helix.line,
        "superseded": [lid(vim_record)],
    }
    assert value(home) == (0, "helix")


def test_restore_never_supersedes_a_record_of_higher_authority(make_home, vim_record: str) -> None:
    """12.6b variant: restoring a model-inferred record while the person's record holds the
    key leaves the person's record alone: the restored one is shadowed."""
    home = make_home(memory=vim_record + "\n")
    mem = Memory(home)
    guess = mem.remember("editor = emacs", key="editor", source="reflect", ref="chat:3")
    assert guess.status == "shadowed"
    assert mem.revoke("chat:3") == [guess.id]
    assert mem.restore_record(guess.id).superseded == ()
    assert (home / "memory.md").read_text().splitlines() == [vim_record, guess.line]
    assert value(home) == (0, "vim")


# -- (c) revoke of a ref nothing carries --------------------------------------------------------


def test_revoke_of_a_ref_only_another_scope_carries_reads_as_unknown(make_home) -> None:
    """12.6c variant: a ref carried only by a record of an unauthorized scope gets the same
    answer as an unknown ref (no oracle on other scopes, design §7.7), exit 1, JSON envelope."""
    line = "- the vpn is up <!-- tool 2026-01-01 ref=msg:9 scope=work -->"
    home = make_home(memory=line + "\n")
    answers = []
    for ref in ("msg:9", "msg:nothing"):
        r = cli(home, "revoke", "--ref", ref, "--json")
        answers.append((r.exit_code, json.loads(r.stdout)))
    mf = home / "memory.md"
    assert answers == [
        (
            1,
            {
                "ok": False,
                "command": "revoke",
                "data": None,
                "error": f"no record in {mf} carries ref={ref} (scopes: global); nothing revoked",
            },
        )
        for ref in ("msg:9", "msg:nothing")
    ]
    assert mf.read_text() == line + "\n"


# -- (d) forget names what it removed -----------------------------------------------------------

FORGETTABLE = "- the staging db is called pelican <!-- reflect 2026-01-01 -->"
OLD_NOTE = "- old note <!-- import 2026-01-02 -->"
AGENT_SKILL = "---\nname: scratch\ndescription: scratch notes\nsource: reflect\n---\nnothing\n"


def _dead_home(make_home) -> Path:  # type: ignore[no-untyped-def]
    home = make_home(
        memory=f"- i like tea\n{FORGETTABLE}\n{OLD_NOTE}\n",
        skills={"scratch.md": AGENT_SKILL},
    )
    mem = Memory(home)
    for _ in range(8):
        mem.recall("zzzz unrelated")
    return home


def test_forget_prints_each_id_with_its_restore_command(make_home) -> None:
    """12.6d: "can be restored" now says how: each removed record with ``talos restore ID``;
    the skill is counted as a skill file, not as a line of memory.md. (Checked: the old
    message said "removed 2 line(s) from memory.md" for one line and one skill.)"""
    home = _dead_home(make_home)
    r = cli(home, "forget", "--yes")
    assert r.exit_code == 0, r.stderr
    skill_id = next(e["id"] for e in Memory(home).history() if e["op"] == "skill-forget")
    summary = r.stderr[r.stderr.index("removed ") :]
    assert summary == (
        f"removed 2 lines from {home / 'memory.md'} and moved 1 skill file to the trash; each "
        f"is kept in {audit_log(home)} and can be restored:\n"
        f"  talos restore {skill_id}   (skill: scratch — scratch notes)\n"
        f"  talos restore {lid(FORGETTABLE)}   (fact: the staging db is called pelican)\n"
        f"  talos restore {lid(OLD_NOTE)}   (fact: old note)\n"
    )
    assert cli(home, "restore", lid(FORGETTABLE)).exit_code == 0
    assert cli(home, "restore", skill_id).exit_code == 0
    assert (home / "skills" / "scratch.md").read_text() == AGENT_SKILL


def test_forget_json_lists_the_records(make_home) -> None:
    """12.6d variant: ``--json`` carries the same ids and restore commands."""
    home = _dead_home(make_home)
    data = json.loads(cli(home, "forget", "--yes", "--json").stdout)["data"]
    assert data["removed"] == 3
    skill_id = data["forgotten"][0]["id"]
    assert [(f["kind"], f["id"], f["restore"]) for f in data["forgotten"]] == [
        ("skill", skill_id, f"talos restore {skill_id}"),
        ("fact", lid(FORGETTABLE), f"talos restore {lid(FORGETTABLE)}"),
        ("fact", lid(OLD_NOTE), f"talos restore {lid(OLD_NOTE)}"),
    ]
    assert skill_id.startswith("S")


# -- (e) the tag decides ------------------------------------------------------------------------


def test_a_line_tagged_import_by_hand_is_proposed_and_shows_its_source(make_home, terminal) -> None:
    """12.6e: a line the person tagged ``import`` is proposed — the tag decides, as the README
    now says — and dead and doctor show the tag's source; an untagged line never is."""
    home = _dead_home(make_home)
    mem = Memory(home)
    dead = [(s.kind, s.text, s.src) for s in mem.dead()]
    assert dead == [
        ("fact", "the staging db is called pelican", "reflect"),
        ("fact", "old note", "import"),
        ("skill", "scratch — scratch notes", "reflect"),
    ]
    found = {f.check: f for f in diagnose(home).findings}["dead"]
    assert found.details == (
        "memory.md:2: the staging db is called pelican — seen 8 times, never recalled "
        "(tag says reflect)",
        "memory.md:3: old note — seen 8 times, never recalled (tag says import)",
        "skills/scratch.md: scratch — scratch notes — seen 8 times, never recalled "
        "(frontmatter says source: reflect)",
    )
    assert "\timport\t" in cli(home, "dead").stdout  # a pipe's lines: the tag's source
    terminal(120)
    table = cli(home, "dead").stdout
    assert "source" in table and "import" in table
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert "The tag decides, not who typed the line" in readme
    assert "what you wrote by hand is never proposed" not in readme


# -- keys outside ASCII, ids two lines carry, restores of a window -----------------------------


MINE = "- i wrote this line myself\n"


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
    assert audit.verify(audit_log(home), resolve_paths(home).memory_file) == []
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


# -- forget answered with none -----------------------------------------------------------------


cli_runner = CliRunner()


def test_forget_answering_none_says_nothing_removed(make_home) -> None:
    home = make_home(memory="- the staging db is called pelican <!-- reflect 2026-01-01 -->\n")
    mem = Memory(home)
    for _ in range(8):
        mem.recall("unrelated question about tea")
    res = cli_runner.invoke(app, ["forget", "--home", str(home)], input="none\n")
    assert res.exit_code == 0
    assert "nothing removed" in res.stderr
    assert "pelican" in (home / "memory.md").read_text()
