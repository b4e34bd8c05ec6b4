"""The ``evidence`` model's term index from the term rows index.db keeps (issue 15, "Left" item
2; :mod:`talos.view.termrows`): float for float the index :func:`talos.ranking.evidence.of_nodes`
analyses,
on every view and after an incremental refresh; a new text is analysed alone; stored rows of
another analyzer, damaged or inconsistent, are rebuilt, never trusted."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import assert_same, assert_term_major

import talos.index
import talos.view.termrows as TR
from talos import Memory
from talos.graph.stored import BlockError
from talos.ranking.evidence import TermIndex, of_nodes
from talos.view.termrows import TermRows, analyzer_token, text_key

KUBE = (
    "---\nname: kubernetes-rollout\ndescription: roll out a new release to the cluster with "
    "kubectl\n---\nApply the manifest, watch the rollout, roll back on failure.\n"
)
ZH_SKILL = (
    "---\nname: flowchart\ndescription: 画流程图 用于画图;不用于:前端渲染\n---\n用 mermaid 画.\n"
)
MEMORY = (
    "- The billing service deploys on fridays\n"
    "- Deploy region is eu-west-1 <!-- user 2026-01-02 scope=work -->\n"
    "- On fridays the billing service deploys\n"  # the same keywords: one merged node
    "- 部署前先跑测试\n"
    "- it is what it is\n"  # stop words only: a node without a term
    "- ask Bob about the rollout <!-- user 2026-01-02 scope=project:beta -->\n"
)
SESSIONS = {
    "2026-01-01-a.jsonl": "roll out the billing release to the cluster",
    # the same keywords: merged, the last is the node's text (the release counted twice)
    "2026-01-02-b.jsonl": "roll out the billing release to the cluster, the release",
    "2026-01-03-c.jsonl": "画一个流程图 for the deploy",
}


def _session(text: str) -> str:
    return json.dumps({"role": "user", "content": text}, ensure_ascii=False) + "\n"


@pytest.fixture
def home(make_home: Callable[..., Path]) -> Path:
    return make_home(
        memory=MEMORY,
        skills={"kubernetes-rollout.md": KUBE, "flowchart.md": ZH_SKILL},
        sessions={k: _session(v) for k, v in SESSIONS.items()},
    )


def stored_and_analysed(mem: Memory) -> tuple[TermIndex, TermIndex, Any, Any]:
    """The kept state's index and edges of the recall graph, and of_nodes's over its nodes."""
    graph = mem._kept.recall_graph(None, None)
    index, edges = mem._kept.evidence_index(graph)
    text = mem.paths.memory_file.read_text(encoding="utf-8")
    want, want_edges = of_nodes(list(graph.nodes), str(mem.paths.memory_file), text)
    return index, want, edges, want_edges


def same_edges(a: Any, b: Any) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("src", "dst", "share"))


def count_analyses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts talos.view.termrows analyses from now on (of_nodes's own analyses are not seen)."""
    seen: list[str] = []
    real = TR.counts_of

    def counted(text: str, context: str = "") -> Any:
        seen.append(text)
        return real(text, context)

    monkeypatch.setattr(TR, "counts_of", counted)
    return seen


BILLING = "The billing service deploys on mondays"
KETTLE = "descale the kettle before the release"
#: scopes, nodes of the view, texts new after the refresh (an edited line, a new session)
SCOPES = [
    (("global",), 7, [BILLING, KETTLE]),
    (("global", "work"), 8, [BILLING, KETTLE]),
    (("user", "project:beta"), 1, []),  # no episode (global not authorized), no edited line
]


@pytest.mark.parametrize(("scopes", "nodes", "new"), SCOPES)
def test_stored_rows_give_of_nodes_index_before_and_after_a_refresh(
    home: Path,
    scopes: tuple[str, ...],
    nodes: int,
    new: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with Memory(home, model="evidence", scopes=scopes) as mem:  # analyses and stores the rows
        got, want, edges, want_edges = stored_and_analysed(mem)
    assert_same(got, want)
    assert same_edges(edges, want_edges)
    assert_term_major(got)
    assert got.n == nodes
    seen = count_analyses(monkeypatch)
    with Memory(home, model="evidence", scopes=scopes) as mem:  # a new process: no analysis
        got, want, edges, _e = stored_and_analysed(mem)
    assert_same(got, want)
    assert seen == []
    # an incremental refresh: one new session, one edited line
    (home / ".talos" / "sessions" / "2026-01-05-e.jsonl").write_text(_session(KETTLE))
    (home / "memory.md").write_text(MEMORY.replace("on fridays\n", "on mondays\n", 1))
    seen.clear()
    with Memory(home, model="evidence", scopes=scopes) as mem:
        got, want, edges, want_edges = stored_and_analysed(mem)
    assert_same(got, want)
    assert same_edges(edges, want_edges)
    assert got.n == nodes + len(new)
    assert sorted(seen) == sorted(new)  # those texts alone


def test_a_long_lived_memory_adds_a_new_session_alone(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Variant: one Memory (an agent loop) across a new session: its rows grow by that text."""
    with Memory(home, model="evidence") as mem:
        mem.recall("billing release")
        seen = count_analyses(monkeypatch)
        (home / ".talos" / "sessions" / "2026-01-05-e.jsonl").write_text(
            _session("restore the postgres dump")
        )
        rows = [r.text for r in mem.recall("restore the postgres dump").picked]
        assert seen == ["restore the postgres dump"]
        got, want, _e, _w = stored_and_analysed(mem)
    assert_same(got, want)
    assert rows[0] == "restore the postgres dump"


def test_rows_are_stored_again_after_store_after_new_texts(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below :data:`STORE_AFTER` new texts each process analyses them; at it they are stored."""
    monkeypatch.setattr(TR, "STORE_AFTER", 2)
    monkeypatch.setattr("talos.view.kept_terms.STORE_AFTER", 2)
    Memory(home, model="evidence").prepare()
    sessions = home / ".talos" / "sessions"
    (sessions / "2026-01-05-e.jsonl").write_text(_session("one new session"))
    seen = count_analyses(monkeypatch)
    for _ in range(2):
        drop_ranking(home)
        Memory(home, model="evidence").prepare()
    assert seen == ["one new session", "one new session"]  # not stored: analysed again
    (sessions / "2026-01-06-f.jsonl").write_text(_session("another new session"))
    seen.clear()
    Memory(home, model="evidence").prepare()  # two texts the stored rows lack: stored
    drop_ranking(home)
    Memory(home, model="evidence").prepare()
    assert seen == ["one new session", "another new session"]


def test_rows_no_node_holds_any_more_are_dropped_when_stored(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Most stored rows gone from the home (memory.md rewritten, sessions removed): the rows
    stored next hold the current texts alone, and a new process analyses nothing."""
    Memory(home, model="evidence").prepare()
    for f in (home / ".talos" / "sessions").iterdir():
        f.unlink()
    (home / "memory.md").write_text("- tea is brewed at 80 degrees\n- 茶要用八十度的水\n")
    monkeypatch.setattr("talos.view.kept_terms.STORE_AFTER", 2)
    Memory(home, model="evidence").prepare()
    token, data = _row(home)  # type: ignore[misc]
    rows = TermRows.from_bytes(data, token)
    assert len(rows) == 4  # two facts, two skills
    assert "billing" not in rows.vocab and "brew" in rows.vocab
    seen = count_analyses(monkeypatch)
    with Memory(home, model="evidence") as mem:
        got, want, _e, _w = stored_and_analysed(mem)
    assert_same(got, want)
    assert seen == []


def test_index_command_stores_the_rows_for_the_evidence_model(home: Path) -> None:
    (home / "talos.toml").write_text('model = "evidence"\n')
    from typer.testing import CliRunner

    from talos.cli import app

    assert CliRunner().invoke(app, ["index", "--home", str(home)]).exit_code == 0
    data = _row(home)
    assert data is not None and data[0] == analyzer_token()
    rows = TermRows.from_bytes(data[1], analyzer_token())
    assert len(rows) == 7  # 3 facts (a merged one), 2 skills, 2 episodes (a merged one)


def _db(home: Path) -> Path:
    return home / ".talos" / "index.db"


def _row(home: Path) -> tuple[Any, Any] | None:
    con = sqlite3.connect(_db(home))
    try:
        return con.execute("SELECT token, data FROM terms WHERE name='rows'").fetchone()
    finally:
        con.close()


def _put(home: Path, token: Any, data: Any) -> None:
    """Replace the stored term rows, and drop the ranking block (:func:`drop_ranking`)."""
    con = sqlite3.connect(_db(home))
    con.execute("UPDATE terms SET token=?, data=? WHERE name='rows'", (token, data))
    con.commit()
    con.close()
    drop_ranking(home)


def drop_ranking(home: Path) -> None:
    """Drop the ranking block (talos.index.ranking): a process that finds one reads the term
    index from it and reads no term row; these tests are about the rows."""
    con = sqlite3.connect(_db(home))
    con.execute("DELETE FROM terms WHERE name='ranking'")
    con.commit()
    con.close()


def _forged(rows: TermRows, token: str, **arrays: Any) -> bytes:
    """The rows' blob with some arrays replaced (a consistent checksum, an inconsistent body)."""
    bad = TermRows(
        arrays.get("vocab", list(rows.vocab)),
        arrays.get("cjk", rows.cjk),
        arrays.get("ptr", rows.ptr),
        arrays.get("term", rows.term),
        arrays.get("tf", rows.tf),
        dict(rows.keys),
    )
    return bad.to_bytes(token)


def _hostile(home: Path, rows: TermRows, token: str) -> dict[str, bytes | str]:
    b = rows.to_bytes(token)
    con = sqlite3.connect(_db(home))
    (episodes,) = con.execute("SELECT data FROM blocks WHERE name='episodes'").fetchone()
    con.close()
    flipped = bytearray(b)
    flipped[-3] ^= 0xFF
    term = rows.term.copy()
    term[[0, 1]] = term[[1, 0]]  # a row out of order
    return {
        "flipped byte": bytes(flipped),
        "truncated": b[: len(b) // 2],
        "row out of order": _forged(rows, token, term=term),
        "term id out of range": _forged(rows, token, term=rows.term + len(rows.vocab)),
        "count of zero": _forged(rows, token, tf=rows.tf * 0),
        "vocabulary not sorted": _forged(rows, token, vocab=list(reversed(rows.vocab))),
        "episode block blob": episodes,  # a valid blob of another kind
    }


@pytest.mark.parametrize(
    "case",
    [
        "flipped byte",
        "truncated",
        "row out of order",
        "term id out of range",
        "count of zero",
        "vocabulary not sorted",
        "episode block blob",
    ],
)
def test_damaged_term_rows_are_rebuilt_never_trusted(
    home: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Memory(home, model="evidence").prepare()
    token, data = _row(home)  # type: ignore[misc]
    rows = TermRows.from_bytes(data, token)
    _put(home, token, _hostile(home, rows, token)[case])
    capsys.readouterr()
    with Memory(home, model="evidence") as mem:
        got, want, _e, _w = stored_and_analysed(mem)
    assert_same(got, want)
    err = capsys.readouterr().err
    assert err.startswith("talos: warning: ") and "stored term rows unusable" in err
    assert "rebuilding them" in err
    token2, data2 = _row(home)  # type: ignore[misc]
    assert token2 == token and len(TermRows.from_bytes(data2, token)) == 7  # stored anew


@pytest.mark.parametrize("token", ["0123456789abcdef", None, 7])
def test_rows_of_another_analyzer_or_type_are_analysed_again(
    home: Path, token: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows made by another analyzer (its stop list, stemmer or code), or a row of another
    type, are not used: every text is analysed again, silently (no damage)."""
    Memory(home, model="evidence").prepare()
    _tok, data = _row(home)  # type: ignore[misc]
    _put(home, token, data)
    seen = count_analyses(monkeypatch)
    capsys.readouterr()
    with Memory(home, model="evidence") as mem:
        got, want, _e, _w = stored_and_analysed(mem)
    assert_same(got, want)
    assert len(seen) == 7 == want.n
    assert capsys.readouterr().err == ""


def test_a_blob_names_its_analyzer(home: Path) -> None:
    """A blob decoded under another token is refused (a row copied under the right token)."""
    Memory(home, model="evidence").prepare()
    token, data = _row(home)  # type: ignore[misc]
    with pytest.raises(BlockError, match="another analyzer"):
        TermRows.from_bytes(data, "0" * 16)
    assert len(TermRows.from_bytes(data, token)) == 7


def test_schema_four_index_gains_the_terms_table(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An index of schema 4 (before the term rows) is migrated, not discarded: its tables are
    kept and the rows stored in the new table."""
    Memory(home).prepare()
    con = sqlite3.connect(_db(home))
    con.execute("DROP TABLE terms")
    con.execute("PRAGMA user_version=4")
    con.commit()
    con.close()
    capsys.readouterr()
    with Memory(home, model="evidence") as mem:
        got, want, _e, _w = stored_and_analysed(mem)
    assert_same(got, want)
    assert capsys.readouterr().err == ""
    con = sqlite3.connect(_db(home))
    assert con.execute("PRAGMA user_version").fetchone()[0] == talos.index.SCHEMA == 8
    con.close()
    assert _row(home) is not None


def test_text_key_and_rows_of_a_text(home: Path) -> None:
    """A row is found by its text's digest: equal texts share one row; CJK flags per term."""
    rows = TermRows.empty()
    got = rows.rows(["画流程图 flows", "the and", "画流程图 flows", "flow"])
    assert got.tolist() == [0, 1, 0, 2]
    assert rows.vocab == ["flow", "图", "流", "流程", "画", "画流", "程", "程图"]  # code points
    assert rows.cjk.tolist() == [False, True, True, True, True, True, True, True]
    assert rows.ptr.tolist() == [0, 8, 8, 9]
    assert rows.keys[text_key("flow")] == 2
    index, used = rows.index(["流程", "flow", "the and"])  # 流程 is new: analysed, added
    assert used.tolist() == [3, 2, 1]
    assert index.vocab == ["flow", "流", "流程", "程"]  # the terms held, renumbered
    assert index.term.tolist() == [1, 2, 3, 0] and index.ptr.tolist() == [0, 3, 4, 4]
    # a new term sorting first: every held row renumbered, its terms the same strings
    assert rows.rows(["apples"]).tolist() == [4]
    assert rows.vocab[:2] == ["appl", "flow"] and rows.cjk[:2].tolist() == [False, False]
    assert [rows.vocab[t] for t in rows.term[: rows.ptr[1]]] == [
        "flow",
        "图",
        "流",
        "流程",
        "画",
        "画流",
        "程",
        "程图",
    ]


def test_a_view_of_a_few_stored_rows(home: Path) -> None:
    """Variant: rows stored by a wider view, read by the default one (a row, and its terms
    "ask" and "bob", no node's here)."""
    Memory(home, model="evidence", scopes=("global", "project:beta")).prepare()
    with Memory(home, model="evidence") as mem:
        got, want, _e, _w = stored_and_analysed(mem)
        rows = mem._kept.term_rows[1]  # type: ignore[index]
    assert_same(got, want)
    assert got.n == 7 and len(rows) == 8 and rows.added == 0
    assert "bob" in rows.vocab and "bob" not in got.vocab


def test_a_foreign_terms_table_rebuilds_the_index(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``terms`` table of other columns (and a forged row in it) is not talos's: the index is
    rebuilt from the files, with a warning naming the missing column, and the row never used."""
    Memory(home, model="evidence").prepare()
    con = sqlite3.connect(_db(home))
    con.execute("DROP TABLE terms")
    con.execute("CREATE TABLE terms(name TEXT PRIMARY KEY, data BLOB)")
    con.execute("INSERT INTO terms VALUES ('rows', x'00')")
    con.commit()
    con.close()
    capsys.readouterr()
    with Memory(home, model="evidence") as mem:
        got, want, _e, _w = stored_and_analysed(mem)
    assert_same(got, want)
    err = capsys.readouterr().err
    assert err.startswith("talos: warning: ") and "terms.token" in err and "rebuild" in err
    token, data = _row(home)  # type: ignore[misc]
    assert token == analyzer_token() and len(TermRows.from_bytes(data, token)) == 7


def test_the_analyzer_token_follows_the_stop_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stop lists are bm25s's data, not talos's code: another list is another token (rows
    made with the old list are analysed again)."""
    import talos.ranking.analyzer

    before = analyzer_token()
    analyzer_token.cache_clear()
    monkeypatch.setattr(
        TR, "cjk_stop_words", lambda: talos.ranking.analyzer.cjk_stop_words() - {"这个"}
    )
    changed = analyzer_token()
    analyzer_token.cache_clear()
    monkeypatch.setattr(TR, "cjk_stop_words", talos.ranking.analyzer.cjk_stop_words)
    monkeypatch.setattr(TR, "stop_words", lambda: talos.ranking.analyzer.stop_words() - {"the"})
    english = analyzer_token()
    analyzer_token.cache_clear()
    assert len({before, changed, english}) == 3
    monkeypatch.undo()
    assert analyzer_token() == before


def test_a_heading_is_part_of_a_fact_row(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fact's row holds its heading path's terms (issue 15 item 4): keyed by text and path,
    so a renamed heading analyses the facts under it again, and only those."""
    memory = (
        "# Billing service\n- deploys on fridays\n- needs the vault token\n"
        "# Search\n- the index rebuilds nightly\n"
    )
    home = make_home(memory=memory)
    with Memory(home, model="evidence") as mem:
        got, want, _e, _w = stored_and_analysed(mem)
    assert_same(got, want)
    assert "bill" in got.vocab and "search" in got.vocab
    seen = count_analyses(monkeypatch)
    (home / "memory.md").write_text(memory.replace("# Billing", "# Payments"))
    with Memory(home, model="evidence") as mem:
        got, want, _e, _w = stored_and_analysed(mem)
    assert_same(got, want)
    assert "payment" in got.vocab and "bill" not in got.vocab
    assert sorted(seen) == ["deploys on fridays", "needs the vault token"]
    assert text_key(("deploys on fridays", "Billing service")) != text_key(
        "deploys on fridays Billing service"
    )
