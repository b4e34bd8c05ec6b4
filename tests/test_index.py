"""SPEC §11 / issue 4: the persistent index gives exactly what reading the files gives, is
refreshed incrementally, and is rebuilt (never trusted) when damaged or foreign."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from talos import Memory
from talos.home import resolve_paths
from talos.index import Index

WORDS = [
    "deploy",
    "region",
    "port",
    "csv",
    "merge",
    "rust",
    "cargo",
    "build",
    "log",
    "error",
    "triage",
    "mermaid",
    "flow",
    "chart",
    "tea",
    "coffee",
    "editor",
    "helix",
    "vim",
    "python",
    "import",
    "graph",
    "合并",
    "表格",
    "部署",
    "区域",
    "日志",
    "错误",
    "流程",
    "图表",
]


def _random_home(root: Path, rnd: random.Random) -> Path:
    home = root / f"home{rnd.randrange(10**6)}"
    (home / "skills").mkdir(parents=True)
    sessions = home / ".talos" / "sessions"
    sessions.mkdir(parents=True)

    def sentence() -> str:
        return " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(2, 7)))

    lines = []
    for _ in range(rnd.randint(5, 40)):
        tag = " <!-- reflect 2026-01-02 -->" if rnd.random() < 0.3 else ""
        lines.append(f"- {sentence()}{tag}")
    (home / "memory.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for i in range(rnd.randint(0, 6)):
        (home / "skills" / f"s{i}.md").write_text(
            f"---\nname: s{i}\ndescription: {sentence()}\n---\n{sentence()}\n", encoding="utf-8"
        )
    for i in range(rnd.randint(0, 30)):
        msg = {"role": "user", "content": sentence()}
        (sessions / f"2026-07-{i:02d}.jsonl").write_text(json.dumps(msg) + "\n", encoding="utf-8")
    return home


@pytest.mark.parametrize("seed", range(12))
def test_indexed_and_direct_paths_agree_row_for_row(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    home = _random_home(tmp_path, rnd)
    indexed, direct = Memory(home), Memory(home, index=False)
    for _ in range(8):
        query = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 4)))
        assert [tuple(r) for r in indexed.explain(query, k=50)] == [
            tuple(r) for r in direct.explain(query, k=50)
        ]


def test_incremental_refresh_sees_every_kind_of_change(make_home) -> None:
    home = make_home(
        memory="- tea is brewed at 80 degrees\n",
        sessions={"a.jsonl": json.dumps({"role": "user", "content": "brew green tea"}) + "\n"},
    )
    mem = Memory(home)
    assert [r.text for r in mem.explain("tea")] == ["tea is brewed at 80 degrees", "brew green tea"]
    sessions = home / ".talos" / "sessions"
    # a new session, a session that has no request yet, a fact line edited
    (sessions / "b.jsonl").write_text(json.dumps({"role": "user", "content": "oolong tea"}) + "\n")
    (sessions / "c.jsonl").write_text(json.dumps({"role": "system", "content": "x"}) + "\n")
    (home / "memory.md").write_text("- tea is brewed at 85 degrees\n")
    assert [r.text for r in mem.explain("tea")] == [
        "tea is brewed at 85 degrees",
        "brew green tea",
        "oolong tea",
    ]
    stats = mem.index.refresh()  # nothing changed since: no work
    assert not stats.changed
    # the pending session gets its request appended in place: picked up without a sweep
    with (sessions / "c.jsonl").open("a") as f:
        f.write(json.dumps({"role": "user", "content": "jasmine tea please"}) + "\n")
    assert "jasmine tea please" in [r.text for r in mem.explain("tea")]
    (sessions / "a.jsonl").unlink()
    assert "brew green tea" not in [r.text for r in mem.explain("tea")]


def test_one_line_edit_parses_one_line(make_home) -> None:
    lines = [f"- fact number {i} about topic{i}" for i in range(200)]
    home = make_home(memory="\n".join(lines) + "\n")
    idx = Index(resolve_paths(home))
    first = idx.refresh()
    assert first.lines_parsed == 201  # 200 facts and the empty last line
    lines[50] = "- fact number 50 about something new"
    (home / "memory.md").write_text("\n".join(lines) + "\n")
    assert idx.refresh().lines_parsed == 1
    idx.close()


@pytest.mark.parametrize("junk", [b"not a database at all" * 100, b""])
def test_damaged_index_is_rebuilt_never_trusted(make_home, junk: bytes, capfd) -> None:
    home = make_home(memory="- the kettle is in the left cupboard\n")
    Memory(home).explain("kettle")
    db = home / ".talos" / "index.db"
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(junk)
    assert [r.text for r in Memory(home).explain("kettle")] == [
        "the kettle is in the left cupboard"
    ]


def test_foreign_sqlite_file_is_not_trusted(make_home) -> None:
    import sqlite3

    home = make_home(memory="- the kettle is in the left cupboard\n")
    (home / ".talos").mkdir()
    con = sqlite3.connect(home / ".talos" / "index.db")
    con.execute("CREATE TABLE facts(line, raw, text, kw, src, born, fields)")
    con.execute(
        "INSERT INTO facts VALUES (1, 'x', 'poisoned kettle fact', 'kettle', 'user', '', '{}')"
    )
    con.commit()
    con.close()
    assert [r.text for r in Memory(home).explain("kettle")] == [
        "the kettle is in the left cupboard"
    ]


def test_deleting_the_state_folder_index_loses_only_speed(golden_home) -> None:
    home = golden_home("home-basic")
    before = [tuple(r) for r in Memory(home).explain("画流程图", k=50)]
    shutil.rmtree(home / ".talos" / "index.db", ignore_errors=True)
    (home / ".talos" / "index.db").unlink(missing_ok=True)
    assert [tuple(r) for r in Memory(home).explain("画流程图", k=50)] == before


def test_cli_index_builds_and_checks(make_home) -> None:
    from typer.testing import CliRunner

    from talos.cli import app

    home = make_home(
        memory="- tea is brewed at 80 degrees\n",
        sessions={"a.jsonl": json.dumps({"role": "user", "content": "brew green tea"}) + "\n"},
    )
    runner = CliRunner()
    res = runner.invoke(app, ["index", "--home", str(home), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)["data"]
    assert (data["facts"], data["episodes"], data["sessions_read"]) == (1, 1, 1)
    res = runner.invoke(app, ["index", "--home", str(home), "--check", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["data"]["problems"] == []


def test_rows_indexed_by_other_reader_code_are_reread(make_home, monkeypatch) -> None:
    """An index built by different reading code (say, before a masking fix) is re-read, never
    trusted: the reader fingerprint is compared on every refresh."""
    import talos.index

    home = make_home(
        sessions={"a.jsonl": json.dumps({"role": "user", "content": "brew green tea"}) + "\n"}
    )
    Memory(home).explain("tea")
    db = home / ".talos" / "index.db"
    import sqlite3

    con = sqlite3.connect(db)
    con.execute("UPDATE sessions SET text='stale text from old code', kw='tea'")
    con.execute("UPDATE meta SET v='old-readers' WHERE k='readers'")
    con.commit()
    con.close()
    assert talos.index.READERS != "old-readers"
    assert [r.text for r in Memory(home).explain("tea")] == ["brew green tea"]
