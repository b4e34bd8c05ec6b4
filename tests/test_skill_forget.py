"""Issue 3: skills with ``source:`` other than ``user`` can be forgotten — moved to the trash,
audited and restorable — while hand-written skills are never touched (design §6.4, §6.5, §7.6)."""

from __future__ import annotations

from talos import Memory

AGENT = "---\nname: scratch\ndescription: scratch notes\nsource: reflect\n---\nnothing here\n"
MINE = "---\nname: mine\ndescription: my own notes\n---\nnothing here\n"


def test_agent_skill_is_trashed_audited_and_restorable(make_home) -> None:
    home = make_home(
        memory="- unrelated line about tea\n", skills={"scratch.md": AGENT, "mine.md": MINE}
    )
    mem = Memory(home)
    for _ in range(8):
        mem.recall("tea")
    dead = mem.dead()
    assert [(s.kind, s.text, s.src) for s in dead] == [
        ("skill", "scratch — scratch notes", "reflect")
    ]
    assert mem.forget(dead) == 1
    assert not (home / "skills" / "scratch.md").exists()
    assert (home / "skills" / "mine.md").read_text() == MINE
    entry = [e for e in mem.history() if e["op"] == "skill-forget"]
    assert len(entry) == 1 and entry[0]["before"] == str(home / "skills" / "scratch.md")
    assert mem.restore(entry[0]["id"]) == str(home / "skills" / "scratch.md")
    assert (home / "skills" / "scratch.md").read_text() == AGENT


def test_hand_written_skill_is_never_trashed_even_if_suggested(make_home) -> None:
    from talos.memory import Suggestion

    home = make_home(skills={"mine.md": MINE})
    mem = Memory(home)
    forged = Suggestion("skill", "mine — my own notes", "forged", str(home / "skills" / "mine.md"))
    assert mem.forget([forged]) == 0
    assert (home / "skills" / "mine.md").read_text() == MINE


def test_a_skill_folder_loses_only_its_skill_file_and_gets_it_back(make_home) -> None:
    """``skills/NAME/SKILL.md`` (design §3.2): forgetting it moves that file to the trash (named
    by its folder), leaves the folder's other files, which talos never read, and restore puts
    it back; a suggestion that names a file outside the skills is never acted on."""
    from talos.memory import Suggestion

    home = make_home(memory="- unrelated line about tea\n", skills={})
    folder = home / "skills" / "scratch"
    folder.mkdir()
    (folder / "SKILL.md").write_text(AGENT, encoding="utf-8")
    (folder / "notes.md").write_text("kept\n", encoding="utf-8")
    outside = home / "elsewhere.md"
    outside.write_text(AGENT, encoding="utf-8")
    mem = Memory(home)
    forged = Suggestion("skill", "scratch — scratch notes", "forged", str(outside))
    assert mem.forget([forged]) == 0 and outside.read_text() == AGENT
    for _ in range(8):
        mem.recall("tea")
    dead = mem.dead()
    assert [(s.kind, s.text, s.path) for s in dead] == [
        ("skill", "scratch — scratch notes", str(folder / "SKILL.md"))
    ]
    assert mem.forget(dead) == 1
    assert not (folder / "SKILL.md").exists() and (folder / "notes.md").read_text() == "kept\n"
    entry = [e for e in mem.history() if e["op"] == "skill-forget"]
    assert len(entry) == 1 and entry[0]["trash"].endswith("-scratch-SKILL.md")
    assert mem.restore(entry[0]["id"]) == str(folder / "SKILL.md")
    assert (folder / "SKILL.md").read_text() == AGENT
