"""design §11 / issue 4: the persistent index gives exactly what reading the files gives, is
refreshed incrementally, and is rebuilt (never trusted) when damaged or foreign; another
program's file at ``index.db`` is moved aside, never deleted, and talos knows its own file
while another process holds it open in WAL mode."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest
from helpers import invoke
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
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


# -- another program's file at index.db; whose file it is in WAL mode --------------------------


def _asides(state: Path) -> list[Path]:
    return sorted(p for p in state.iterdir() if p.name.startswith("index.db.not-talos-"))


def test_another_programs_database_at_index_db_is_moved_aside_not_deleted(
    kettle_home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The failing input: a valid SQLite file of another program at ``.talos/index.db`` (a
    ``state_dir`` pointed at a folder of one's own). talos took it for a damaged index and
    deleted it, with its data. The index is a cache of talos's; a file talos cannot tell is
    its own is moved aside, named in the warning, and the index rebuilt beside it."""
    import sqlite3

    state = kettle_home / ".talos"
    state.mkdir()
    con = sqlite3.connect(state / "index.db")
    con.execute("CREATE TABLE notes(t)")
    con.execute("INSERT INTO notes VALUES ('precious')")
    con.commit()
    con.close()
    assert "kettle" in Memory(kettle_home).recall("kettle").text
    (aside,) = _asides(state)
    con = sqlite3.connect(aside)
    assert con.execute("SELECT t FROM notes").fetchall() == [("precious",)]
    con.close()
    err = capfd.readouterr().err
    assert f"talos: warning: {state / 'index.db'}: not talos's index (" in err
    assert f"moved to {aside}; a new index is built from the files" in err


def test_bytes_that_are_not_a_database_at_index_db_are_moved_aside(kettle_home: Path) -> None:
    """Variant: a file that is not SQLite at all (it may be anyone's) is moved aside byte for
    byte; talos's own damaged index (its application id in the header) is rebuilt in place,
    leaving nothing beside it."""
    state = kettle_home / ".talos"
    state.mkdir()
    junk = b"my shopping list, not a database\n" * 50
    (state / "index.db").write_bytes(junk)
    Memory(kettle_home).recall("kettle")
    (aside,) = _asides(state)
    assert aside.read_bytes() == junk
    aside.unlink()
    ours = (state / "index.db").read_bytes()
    for extra in ("-wal", "-shm"):
        Path(f"{state / 'index.db'}{extra}").unlink(missing_ok=True)
    (state / "index.db").write_bytes(ours[:100] + b"\xff" * 3000)  # header kept, pages gone
    assert "kettle" in Memory(kettle_home).recall("kettle").text
    assert _asides(state) == []


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE facts SET fields = '{' WHERE fields != ''",  # the failing input
        "UPDATE facts SET kw = NULL",  # variant: a column SQLite gives back as NULL
        "UPDATE sessions SET kw = x'ff'",  # variant: an episode row of the wrong type
    ],
    ids=["fields", "keywords", "episode"],
)
def test_an_index_whose_rows_do_not_decode_is_not_trusted(make_home, damage: str) -> None:
    """The failing input: an index.db whose schema is right but whose rows are not what talos
    writes (a bit flipped in a page, an edit with a SQLite browser): ``recall`` and ``get``
    ended in "unexpected error JSONDecodeError … a bug in talos". The index is a cache: recall
    reads the files directly and warns, naming index.db and what to do."""
    import sqlite3

    home = make_home(
        memory="- the kettle is in the left cupboard <!-- user 2026-01-01 key=kettle.place -->\n",
        sessions={"a.jsonl": json.dumps({"role": "user", "content": "descale the kettle"}) + "\n"},
    )
    Memory(home).recall("kettle")
    con = sqlite3.connect(home / ".talos" / "index.db")
    con.execute(damage)
    con.execute("DELETE FROM blocks")  # the stored blocks hid the rows from this recall
    con.commit()
    con.close()
    r = invoke("recall", "kettle", "--home", str(home))
    assert r.exit_code == 0, (r.output, r.exception)
    assert "- [fact] (2026-01-01) the kettle is in the left cupboard" in r.stdout.splitlines()
    assert "- [episode] (talos) descale the kettle" in r.stdout  # no dated name: no day
    index = home / ".talos" / "index.db"
    assert f"talos: warning: {index}: index unavailable (" in r.stderr
    assert "run talos index --rebuild); reading the files directly" in r.stderr
    r = invoke("get", "kettle.place", "--home", str(home), "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    assert json.loads(r.stdout)["data"]["value"] == "the kettle is in the left cupboard"
    r = invoke("index", "--rebuild", "--home", str(home), "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    assert "warning" not in invoke("recall", "kettle", "--home", str(home)).stderr


def _held_in_wal(path: Path, app_id: int) -> object:
    """A connection that made a WAL database of ``app_id`` at ``path`` and holds it open: the
    id lives only in the -wal file, the header still says 0 (no checkpoint yet)."""
    import sqlite3

    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute(f"PRAGMA application_id={app_id}")
    con.execute("CREATE TABLE t(x)")
    assert path.read_bytes()[68:72] == b"\0\0\0\0"  # what the header alone says
    return con


def test_talos_knows_its_own_index_while_another_process_holds_it_in_wal(tmp_path: Path) -> None:
    """Found: ``talos index --rebuild`` while the hook server held index.db open moved talos's
    own index aside as "not talos's index": the application id was read from the header.
    Read as SQLite reads it (-wal included), it is talos's; another program's WAL database
    is not; and a FIFO at the -wal name never hangs the check (the header decides)."""
    import threading

    from talos import fsutil
    from talos.index import schema

    fifo = tmp_path / "fifo.db"
    ours = tmp_path / "index.db"
    con = _held_in_wal(ours, schema.APP_ID)
    other = tmp_path / "other.db"
    con2 = _held_in_wal(other, 0x1234)
    try:
        assert fsutil.sqlite_application_id(ours) == schema.APP_ID
        assert schema.ours(ours)
        assert fsutil.sqlite_application_id(other) == 0x1234
        assert not schema.ours(other)
    finally:
        con.close()  # type: ignore[attr-defined]
        con2.close()  # type: ignore[attr-defined]
    _held_in_wal(tmp_path / "fifo.db", schema.APP_ID).close()  # type: ignore[attr-defined]
    os.mkfifo(tmp_path / "fifo.db-wal")  # a WAL database: SQLite would open its -wal
    got: list[int | None] = []
    t = threading.Thread(target=lambda: got.append(fsutil.sqlite_application_id(fifo)))
    t.start()
    t.join(10)
    if t.is_alive():  # release the open that hangs, then fail
        os.close(os.open(tmp_path / "fifo.db-wal", os.O_WRONLY | os.O_NONBLOCK))
        t.join(10)
        pytest.fail("a FIFO at the -wal name hung the check")
    assert got == [schema.APP_ID]  # the header's, checkpointed when the writer closed
    text = tmp_path / "notes.txt"
    text.write_text("no database " * 10, encoding="utf-8")
    assert fsutil.sqlite_application_id(text) is None


def test_the_vector_cache_knows_its_own_file_in_wal_too(tmp_path: Path) -> None:
    """The sibling: the vector cache told its own file from another program's by the header
    too (a damaged cache of its own was named "not talos's" while its id was in the -wal)."""
    from talos.ranking import vectors

    path = tmp_path / "vectors.db"
    con = _held_in_wal(path, vectors.APP_ID)
    try:
        cache = vectors.VectorCache(path, embedder=None)  # type: ignore[arg-type]
        assert cache._ours()
    finally:
        con.close()  # type: ignore[attr-defined]


# -- index --check is read-only ----------------------------------------------------------------


cli_runner = CliRunner()


def test_index_check_is_read_only_and_reports_drift(make_home) -> None:
    home = make_home(memory="- tea is brewed at 80 degrees\n")
    assert cli_runner.invoke(app, ["index", "--home", str(home), "--json"]).exit_code == 0
    with (home / "memory.md").open("a") as f:
        f.write("- coffee is brewed at 92 degrees\n")
    res = cli_runner.invoke(app, ["index", "--home", str(home), "--check", "--json"])
    # an edit the index has not caught up with yet is "behind", not a difference (exit 0;
    # tests/test_bad_state_findings.py: right after a remember, --check said "differ")
    assert res.exit_code == 0
    data = json.loads(res.stdout)["data"]
    assert (data["problems"], data["behind"]) == (
        [],
        [f"{home / 'memory.md'} changed since it was indexed"],
    )
    # --check changed nothing: still behind on a second look
    res = cli_runner.invoke(app, ["index", "--home", str(home), "--check", "--json"])
    assert json.loads(res.stdout)["data"]["behind"] == data["behind"]
