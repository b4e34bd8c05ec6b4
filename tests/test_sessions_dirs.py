"""All your transcripts at once: ``sessions_dir`` is a list (issue 16 item 4).

The reported inputs: a second ``--sessions-dir`` silently replaced the first, and a list in
talos.toml was an error. Load order across folders: folder by folder in the list's order,
each sorted by path relative to it (design §3.3); a folder given twice counts once and a file
reached through two entries is one episode. Every reader follows: the index and the direct
route, doctor, scan, init and ``talos index --check``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import session_line
from typer.testing import CliRunner

import talos.index
from talos import Memory
from talos.cli import app
from talos.errors import InputError
from talos.graph import EpisodeBlock
from talos.home import resolve_paths
from talos.index import Index
from talos.sources.sessions import load_episodes, session_files


def run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def write(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(session_line(text))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home with talos's own sessions, a flat 'claude' folder and a nested 'codex' one."""
    h = tmp_path / "home"
    write(h / ".talos" / "sessions", {"2026-07-01T10.jsonl": "water the garden tomatoes"})
    write(tmp_path / "claude", {"b.jsonl": "fix the kettle timer", "a.jsonl": "brew kettle tea"})
    write(tmp_path / "codex", {"2025/10/02/r1.jsonl": "kettle descaling schedule"})
    return h


def texts(nodes: list[Any]) -> list[str]:
    return [n.text for n in nodes]


def indexed(h: Path, **kw: Any) -> list[str]:
    with Index(resolve_paths(h, **kw)) as index:
        index.refresh()
        return texts(index.episodes())


def test_a_second_sessions_dir_option_adds_a_folder(home: Path, tmp_path: Path) -> None:
    """The failing input: ``--sessions-dir A --sessions-dir B`` read only B."""
    r = run(
        "explain", "kettle", "--home", str(home), "--json",
        "--sessions-dir", str(tmp_path / "claude"), "--sessions-dir", str(tmp_path / "codex/**"),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["data"]["rows"]
    assert sorted(row["text"] for row in rows if row["kind"] == "episode") == [
        "brew kettle tea",
        "fix the kettle timer",
        "kettle descaling schedule",
    ]


def test_one_sessions_dir_option_reads_only_that_folder(home: Path, tmp_path: Path) -> None:
    r = run(
        "explain", "kettle", "--home", str(home), "--json",
        "--sessions-dir", str(tmp_path / "codex/**"),
    )  # fmt: skip
    rows = json.loads(r.stdout)["data"]["rows"]
    assert [row["text"] for row in rows if row["kind"] == "episode"] == [
        "kettle descaling schedule"
    ]


def test_a_list_in_talos_toml_loads_folder_by_folder(home: Path) -> None:
    """The failing input: ``sessions_dir = [...]`` in talos.toml was an error. Load order:
    the list's order, each folder sorted by relative path; the index agrees with the files."""
    (home / "talos.toml").write_text(
        'sessions_dir = [".talos/sessions", "../claude", "../codex/**"]\n'
    )
    want = [
        "water the garden tomatoes",
        "brew kettle tea",
        "fix the kettle timer",
        "kettle descaling schedule",
    ]
    assert texts(load_episodes(resolve_paths(home).sessions_dirs)) == want
    assert indexed(home) == want
    (home / "talos.toml").write_text('sessions_dir = ["../codex/**", "../claude"]\n')
    assert indexed(home) == [want[3], want[1], want[2]]
    r = run("index", "--check", "--home", str(home))
    assert r.exit_code == 0, r.output


def test_the_api_takes_a_path_or_a_list(home: Path, tmp_path: Path) -> None:
    with Memory(home, sessions_dir=[tmp_path / "codex/**", str(tmp_path / "claude")]) as mem:
        assert [r.text for r in mem.explain("kettle", k=9) if r.kind == "episode"] == [
            "kettle descaling schedule",
            "brew kettle tea",
            "fix the kettle timer",
        ]
    with Memory(home, sessions_dir=tmp_path / "claude", index=False) as mem:
        assert len([r for r in mem.explain("kettle", k=9) if r.kind == "episode"]) == 2


def test_a_missing_folder_in_the_list_reads_the_others(home: Path, tmp_path: Path) -> None:
    dirs = [str(tmp_path / "nowhere"), str(tmp_path / "claude")]
    assert indexed(home, sessions_dir=dirs) == ["brew kettle tea", "fix the kettle timer"]
    (home / "talos.toml").write_text(f"sessions_dir = {json.dumps(dirs)}\n")
    r = run("doctor", "--home", str(home), "--json")
    found = [f["summary"] for f in json.loads(r.stdout)["data"]["findings"]]
    sessions = [m for m in found if "nowhere" in m or "claude" in m]
    assert sessions == [
        f"{tmp_path / 'nowhere'}/ does not exist: no episodes",
        f"{tmp_path / 'claude'}/: 2 session files",
    ]


def test_one_file_reached_through_two_entries_is_one_episode(home: Path, tmp_path: Path) -> None:
    """``DIR`` and ``DIR/**``, a link to DIR and two spellings of it: one episode per file,
    from the first entry that reaches it."""
    (tmp_path / "link").symlink_to(tmp_path / "claude")
    dirs = [
        str(tmp_path / "claude"),
        str(tmp_path / "claude/**"),
        str(tmp_path / "link"),
        str(tmp_path / "claude") + "/./",
    ]
    want = ["brew kettle tea", "fix the kettle timer"]
    assert texts(load_episodes([Path(d) for d in dirs])) == want
    assert indexed(home, sessions_dir=dirs) == want
    # a nested folder and its parent's `/**`: the nested one keeps its files, once
    nested = [str(tmp_path / "codex/2025/10/02"), str(tmp_path / "codex/**")]
    assert indexed(home, sessions_dir=nested) == ["kettle descaling schedule"]
    assert session_files(resolve_paths(home, sessions_dir=nested).sessions_dirs) == [
        tmp_path / "codex/2025/10/02/r1.jsonl"
    ]


def test_a_folder_given_twice_is_one_folder(home: Path, tmp_path: Path) -> None:
    """Two spellings of one folder, and a link to it (doctor lists it once, its files count
    once)."""
    (tmp_path / "link").symlink_to(tmp_path / "claude")
    (home / "talos.toml").write_text(
        f'sessions_dir = ["{tmp_path}/claude", "../claude/", "{tmp_path}/x/../claude", "../link"]\n'
    )
    assert resolve_paths(home).sessions_dirs == (tmp_path / "claude", tmp_path / "link")
    r = run("doctor", "--home", str(home), "--json")
    found = [f["summary"] for f in json.loads(r.stdout)["data"]["findings"]]
    assert [m for m in found if "session file" in m] == [f"{tmp_path / 'claude'}/: 2 session files"]


def test_removal_from_one_folder_leaves_the_others(home: Path, tmp_path: Path) -> None:
    dirs = [str(home / ".talos/sessions"), str(tmp_path / "claude"), str(tmp_path / "codex/**")]
    with Memory(home, sessions_dir=dirs) as mem:
        assert len([r for r in mem.explain("kettle tomatoes", k=9) if r.kind == "episode"]) == 4
        (tmp_path / "claude" / "a.jsonl").unlink()
        got = [r.text for r in mem.explain("kettle tomatoes", k=9) if r.kind == "episode"]
    assert sorted(got) == [
        "fix the kettle timer",
        "kettle descaling schedule",
        "water the garden tomatoes",
    ]
    assert indexed(home, sessions_dir=dirs) == [
        "water the garden tomatoes",
        "fix the kettle timer",
        "kettle descaling schedule",
    ]


def test_a_new_session_in_the_last_folder_extends_the_block(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast path (design §11): a session sorting after every other, here in the last
    folder, extends the episode block; one sorting before (the first folder) builds it."""
    ways: list[str] = []
    build, extend = EpisodeBlock.build.__func__, EpisodeBlock.extend  # type: ignore[attr-defined]
    here = Path(talos.index.__file__).parent

    def in_index() -> bool:
        code = sys._getframe(2).f_code
        return Path(code.co_filename).parent == here and code.co_name != "_check_block"

    def spy_build(cls: Any, rows: Any) -> Any:
        ways.append("build") if in_index() else None
        return build(cls, rows)

    def spy_extend(self: Any, rows: Any) -> Any:
        ways.append("extend") if in_index() else None
        return extend(self, rows)

    monkeypatch.setattr(EpisodeBlock, "build", classmethod(spy_build))
    monkeypatch.setattr(EpisodeBlock, "extend", spy_extend)
    dirs = [str(home / ".talos/sessions"), str(tmp_path / "claude")]
    with Memory(home, sessions_dir=dirs) as mem:
        mem.recall("kettle")
        assert ways == ["build"]
        write(tmp_path / "claude", {"c.jsonl": "kettle whistle repair"})
        mem.recall("kettle")
        assert ways == ["build", "extend"]
        write(home / ".talos/sessions", {"2026-07-02T10.jsonl": "kettle shopping list"})
        got = [r.text for r in mem.explain("kettle", k=9) if r.kind == "episode"]
        assert ways == ["build", "extend", "build"]
    with Memory(home, sessions_dir=dirs, index=False) as direct:
        assert [r.text for r in direct.explain("kettle", k=9) if r.kind == "episode"] == got


def test_scan_lists_refused_sessions_of_every_folder(home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.jsonl"
    outside.write_text(session_line("not yours"))
    (tmp_path / "claude" / "evil.jsonl").symlink_to(outside)
    (home / "talos.toml").write_text(f'sessions_dir = [".talos/sessions", "{tmp_path}/claude"]\n')
    r = run("scan", "--home", str(home), "--json")
    assert r.exit_code == 4, r.output
    refused = json.loads(r.stdout)["data"]["refused"]
    assert [x["path"] for x in refused] == [str(tmp_path / "claude" / "evil.jsonl")]


def test_init_creates_each_folder_of_the_list_inside_the_home(tmp_path: Path) -> None:
    """init makes each folder of the list inside the home (``deep/**``: ``deep``), never one
    named like a pattern nor one outside."""
    h = tmp_path / "h"
    h.mkdir()
    (h / "talos.toml").write_text(
        f'sessions_dir = [".talos/sessions", "logs", "deep/**", "{tmp_path}/elsewhere"]\n'
    )
    r = run("init", "--home", str(h), "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)["data"]
    assert (h / ".talos/sessions").is_dir() and (h / "logs").is_dir()
    assert sorted(p.name for p in (h / "deep").iterdir()) == []  # the folder, never "**"
    assert not (tmp_path / "elsewhere").exists()
    assert [s["path"] for s in data["not_created"]] == [str(tmp_path / "elsewhere")]


@pytest.mark.parametrize(
    ("config", "error"),
    [
        ("sessions_dir = []\n", "talos.toml:1: sessions_dir is an empty list; name at least one"),
        ('sessions_dir = ["a", 3]\n', "talos.toml:1: sessions_dir must be a path string, not 3"),
        ("sessions_dir = 3\n", "talos.toml:1: sessions_dir must be a path string, not 3"),
    ],
)
def test_a_bad_list_is_a_clear_error(tmp_path: Path, config: str, error: str) -> None:
    h = tmp_path / "h"
    h.mkdir()
    (h / "talos.toml").write_text(config)
    r = run("recall", "kettle", "--home", str(h), "--json")
    assert r.exit_code == 1
    envelope = json.loads(r.stdout)
    assert envelope["ok"] is False
    assert error in envelope["error"]
    assert "Traceback" not in r.output


def test_one_string_keeps_its_stored_signature(home: Path) -> None:
    """One folder (a string, or a list of one) is stored as before the list existed: an
    index built by the previous version is not re-listed."""
    with Index(resolve_paths(home)) as index:
        index.refresh()
        key = index._dir_key(())
    assert json.loads(key) == [str(home / ".talos" / "sessions")]
    assert resolve_paths(home, sessions_dir=[".talos/sessions"]).sessions_dirs == (
        home / ".talos" / "sessions",
    )
    assert os.path.isdir(home / ".talos" / "sessions")


def test_keys_of_two_folders_never_collide(home: Path, tmp_path: Path) -> None:
    """A subfolder named like a folder number (``001/``) in the first folder and a file of
    the second folder: two episodes. Going from one folder to two and back, the index agrees
    with the files each time."""
    write(tmp_path / "a", {"001/x.jsonl": "kettle in a numbered folder"})
    write(tmp_path / "b", {"x.jsonl": "kettle in the second folder"})
    two = [str(tmp_path / "a/**"), str(tmp_path / "b")]
    want = ["kettle in a numbered folder", "kettle in the second folder"]
    assert indexed(home, sessions_dir=two) == want
    assert indexed(home, sessions_dir=two[:1]) == want[:1]
    assert indexed(home, sessions_dir=two[1:]) == want[1:]
    assert indexed(home, sessions_dir=two) == want
    (home / "talos.toml").write_text(f"sessions_dir = {json.dumps(two)}\n")
    r = run("index", "--check", "--home", str(home))
    assert r.exit_code == 0, r.output


def test_more_folders_than_a_key_can_number_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^sessions_dir lists 1000 folders, more than 999; "):
        resolve_paths(tmp_path, sessions_dir=[f"s{i}" for i in range(1000)])
