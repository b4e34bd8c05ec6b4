"""The personal home bench (bench/personal.py): its loader on the committed home and labels.

The home and its labels are written for the bench (no third-party data); these checks keep the
labels honest: every expected record is really in the home, each project has its transcripts,
and talos reads the home as a person's home is read (facts with their scopes, both skill
layouts, Claude Code sessions).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import personal  # noqa: E402

from talos import Memory  # noqa: E402


def home_text() -> str:
    """Every text of the home a record can come from: memory.md, the skills, the transcripts'
    requests and answers."""
    parts = [(personal.HOME / "memory.md").read_text(encoding="utf-8")]
    skills = sorted((personal.HOME / "skills").rglob("*.md"))
    parts += [p.read_text(encoding="utf-8") for p in skills]
    for p in sorted(personal.HOME.rglob("*.jsonl")):
        for line in p.read_text(encoding="utf-8").splitlines():
            msg = json.loads(line).get("message", {})
            content = msg.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts += [c.get("text", "") for c in content if c.get("type") == "text"]
    return "\n".join(parts)


def test_labels_load_with_enough_asks_and_unrelated_prompts_in_both_languages() -> None:
    asks, unrelated = personal.load_labels()
    assert len(asks) >= 30 and len(unrelated) >= 12
    assert len({a.prompt for a in asks}) == len(asks)
    cjk = [u for u in unrelated if any("\u4e00" <= c <= "\u9fff" for c in u.prompt)]
    assert 0 < len(cjk) < len(unrelated)
    assert {a.project for a in asks} == {"", "orbit", "atlas"}
    # the repros are among the asks, with the records they must deliver
    by_prompt = {a.prompt: a for a in asks}
    assert by_prompt["set up pnpm workspaces for orbit"].expect == (
        "Use pnpm, never npm or yarn, in JavaScript projects"
    )
    assert by_prompt["roll back the atlas release"].expect == "helm rollback atlas"
    assert "deploy the webhook fix to staging" in by_prompt


def test_every_expected_record_is_in_the_home_and_no_unrelated_prompt_is() -> None:
    asks, unrelated = personal.load_labels()
    text = home_text()
    missing = [a.expect for a in asks if not personal.carries(text, a.expect)]
    assert missing == []
    assert [a.absent for a in asks if a.absent and not personal.carries(text, a.absent)] == []
    assert not any(personal.carries(text, u.prompt) for u in unrelated)


def test_a_bad_label_is_refused_with_its_place(tmp_path: Path) -> None:
    bad = tmp_path / "labels.toml"
    bad.write_text('[[ask]]\nprompt = "deploy it"\nproject = "mars"\nexpect = "x"\n')
    with pytest.raises(ValueError, match=r"\[\[ask\]\] #1: project 'mars'"):
        personal.load_labels(bad)
    bad.write_text('[[unrelated]]\nprompt = "hi"\nexpected = "x"\n')
    with pytest.raises(ValueError, match="unknown keys"):
        personal.load_labels(bad)


def test_talos_reads_the_copied_home_as_written(tmp_path: Path) -> None:
    home = personal.copy_home(tmp_path)
    assert (home / "code" / "orbit").is_dir() and (home / "code" / "atlas").is_dir()
    mem = Memory(home, scopes=("global", "project:orbit", "project:atlas"))
    try:
        _view, graph = mem.view()
        kinds = Counter(n.kind for n in graph.nodes)
        scopes = Counter(n.scope for n in graph.nodes if n.kind == "fact")
        skills = {n.text.split(" — ")[0] for n in graph.nodes if n.kind == "skill"}
        episodes = [n for n in graph.nodes if n.kind == "episode"]
    finally:
        mem.close()
    assert kinds["fact"] >= 50 and scopes["project:orbit"] == 7 and scopes["project:atlas"] == 7
    assert {"deploy", "engineering-guidelines", "release-notes", "weekly-report"} <= skills
    assert len(episodes) == 7
    folders = Counter(Path(n.path).parent.name for n in episodes)
    assert folders == {"-home-jonas-code-orbit": 3, "-home-jonas-code-atlas": 4}
    # the deploy skill's rollback step lies past what a skill is matched by (design §3.2)
    body = (personal.HOME / "skills" / "deploy" / "SKILL.md").read_text(encoding="utf-8")
    assert body.index("helm rollback atlas") > 1200


def test_the_hook_route_maps_each_project_folder_to_its_scope(tmp_path: Path) -> None:
    from talos.hooks.scope import scopes_for
    from talos.hooks.state import hook_state

    home = personal.copy_home(tmp_path)
    state = hook_state(str(home))
    config = __import__("tomllib").loads(state.config.decode())
    for project in personal.PROJECTS:
        cwd = home / "code" / project if project else home
        assert scopes_for(str(cwd), config, str(home)) == personal.scopes_of(project)
