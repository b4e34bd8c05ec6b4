"""The ranking block (:mod:`talos.index.ranking`, issue 24): a process that only recalls reads
the ``evidence`` model's term index and contiguity edges ready to use, array for array what it
would have gathered from the term rows, without deriving one node's matching text; a block of
another view, damaged or inconsistent, is never used."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import talos.view.kept
import talos.view.kept_terms
from talos import Memory
from talos.graph.stored import BlockError
from talos.index import ranking
from talos.ranking.contiguity import Links
from talos.ranking.evidence import TermIndex, of_nodes

MEMORY = (
    "# Ops\n"
    "## Billing\n"
    "- The billing service deploys on fridays <!-- user 2026-01-02 -->\n"
    "- Deploy region is eu-west-1 <!-- user 2026-01-02 -->\n"
    "- Rollbacks go through the release manager <!-- user 2026-01-02 -->\n"
    "## 部署\n"
    "- 部署前先跑测试\n"
    "- ask Bob about the rollout <!-- user 2026-01-02 scope=project:beta -->\n"
)
SKILL = (
    "---\nname: kubernetes-rollout\ndescription: roll out a new release to the cluster with "
    "kubectl\n---\nApply the manifest, watch the rollout, roll back on failure.\n"
)
SESSIONS = {
    "2026-01-01-a.jsonl": "roll out the billing release to the cluster",
    "2026-01-03-c.jsonl": "画一个流程图 for the deploy",
}
QUERIES = ["when does billing deploy", "roll back the release", "部署 测试", "flowchart 流程图"]


@pytest.fixture
def home(make_home: Callable[..., Path]) -> Path:
    sessions = {
        k: json.dumps({"role": "user", "content": v}, ensure_ascii=False) + "\n"
        for k, v in SESSIONS.items()
    }
    return make_home(memory=MEMORY, skills={"kubernetes-rollout.md": SKILL}, sessions=sessions)


def assert_same(got: TermIndex, want: TermIndex) -> None:
    """Two term indexes equal array by array: values, dtypes, vocabulary and size."""
    assert (got.n, got.vocab, got.lookup) == (want.n, want.vocab, want.lookup)
    for name in ("ptr", "term", "tf", "counts", "entry_node", "df", "cjk", "cjk_len", "kptr"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    for name in ("knode", "ktf"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name


def _block(home: Path) -> tuple[str, bytes] | None:
    con = sqlite3.connect(home / ".talos" / "index.db")
    try:
        row = con.execute("SELECT token, data FROM terms WHERE name='ranking'").fetchone()
    finally:
        con.close()
    return None if row is None else (row[0], row[1])


def _assert_links(got: Links, want: Links) -> None:
    for name in ("ptr", "src", "dst", "share", "out", "ahead"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype, name
        assert np.array_equal(a, b), name


def test_a_second_process_reads_the_index_from_the_block_and_derives_no_text(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = Memory(home)
    texts = [first.recall(q).text for q in QUERIES]
    assert _block(home) is not None  # stored by the process that gathered it
    graph = first._kept.recall_graph(None, None)
    want_index, want_links = first._kept.evidence_index(graph)

    def no(*_a: object, **_k: object) -> None:
        raise AssertionError("a matching text was derived")

    monkeypatch.setattr(talos.view.kept_terms, "matching_texts", no)
    second = Memory(home)
    assert [second.recall(q).text for q in QUERIES] == texts
    graph2 = second._kept.recall_graph(None, None)
    got_index, got_links = second._kept.evidence_index(graph2)
    assert_same(got_index, want_index)
    _assert_links(got_links, want_links)
    # and both are what analysing every node gives (the reference route)
    memory = (home / "memory.md").read_text()
    ref_index, ref_links = of_nodes(graph2.nodes, str(home / "memory.md"), memory)
    assert_same(got_index, ref_index)
    _assert_links(got_links, ref_links)
    assert got_links.edges > 0  # the headed facts are linked: the edges were stored too


def test_an_edit_makes_another_token_and_the_new_view_is_ranked(home: Path) -> None:
    Memory(home).recall("billing")
    before = _block(home)
    with (home / "memory.md").open("a") as f:
        f.write("- the billing dashboard lives at grafana <!-- user 2026-01-03 -->\n")
    got = Memory(home).recall("billing dashboard grafana")
    assert "grafana" in got.text
    after = _block(home)
    assert before is not None and after is not None and before[0] != after[0]


@pytest.mark.parametrize("where", ["header", "body"])
def test_a_damaged_block_is_warned_about_rebuilt_and_never_used(
    home: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    want = [Memory(home).recall(q).text for q in QUERIES]
    stored = _block(home)
    assert stored is not None
    token, data = stored
    at = 40 if where == "header" else len(data) - 3
    bad = data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
    con = sqlite3.connect(home / ".talos" / "index.db")
    con.execute("UPDATE terms SET data=? WHERE name='ranking'", (bad,))
    con.commit()
    con.close()
    capsys.readouterr()
    assert [Memory(home).recall(q).text for q in QUERIES] == want
    assert "ranking block unusable" in capsys.readouterr().err
    assert _block(home) == (token, data)  # stored anew, the same bytes


def test_from_bytes_refuses_another_token_and_arrays_that_do_not_fit(home: Path) -> None:
    m = Memory(home)
    m.recall("billing")
    graph = m._kept.recall_graph(None, None)
    index, links = m._kept.evidence_index(graph)
    data = ranking.to_bytes(index, links, "t")
    assert_same(ranking.from_bytes(data, "t")[0], index)
    with pytest.raises(BlockError, match="another view"):
        ranking.from_bytes(data, "u")
    index.term = index.term.copy()
    index.term[0] = len(index.vocab)  # a term id out of range, under a valid checksum
    with pytest.raises(BlockError, match="inconsistent"):
        ranking.from_bytes(ranking.to_bytes(index, links, "t"), "t")


def test_rows_read_with_the_block_are_not_used_once_the_term_rows_were_renumbered(
    home: Path,
) -> None:
    """The block keeps each node's term row, the base of a patch after a new session; another
    process that stores the term rows anew renumbers them: the kept rows are then not used
    (their serial differs), the index is gathered again, equal to analysing every node, and
    each node's row is its text's row in the term rows as stored now."""
    from talos.view.termrows import TermRows, analyzer_token, matching_texts

    Memory(home).recall("billing")
    with Memory(home) as mem:
        mem.recall("billing")
        assert mem._kept.rows_serial  # the rows came with the block
        # another process keeps a renumbered subset of the rows under a new serial
        con = sqlite3.connect(home / ".talos" / "index.db")
        (data,) = con.execute("SELECT data FROM terms WHERE name='rows'").fetchone()
        token = analyzer_token()
        rows = TermRows.from_bytes(data, token)
        fewer = rows.kept(np.arange(1, len(rows)))
        con.execute("UPDATE terms SET data=? WHERE name='rows'", (fewer.to_bytes(token),))
        con.commit()
        con.close()
        session = json.dumps({"role": "user", "content": "deploy the billing hotfix"}) + "\n"
        (home / ".talos" / "sessions" / "2026-01-09-z.jsonl").write_text(session)
        mem.recall("billing hotfix")
        graph = mem._kept.recall_graph(None, None)
        got, edges = mem._kept.evidence_index(graph)
        want, want_edges = of_nodes(graph.nodes, str(home / "memory.md"), MEMORY)
        assert_same(got, want)
        _assert_links(edges, want_edges)
        held = mem._kept.term_rows
        carried = mem._kept.evidence
        assert held is not None and carried is not None and carried.rows is not None
        assert carried.rows.tolist() == held[1].rows(matching_texts(graph.nodes)).tolist()


@pytest.mark.parametrize("settle", [True, False])
def test_a_settled_memory_patches_an_edit_in_instead_of_building_the_view(
    home: Path, monkeypatch: pytest.MonkeyPatch, settle: bool
) -> None:
    """A long-lived Memory that warmed up from the stored records (the hook server) builds
    its own view when idle (``settle``): the first edit of memory.md is then patched in. Without
    it that edit built the whole view inside a hook's deadline (2.8 s at 100,000 sessions).
    (An edit in place is patched; a line added builds the view again either way.)"""
    Memory(home).prepare()
    with Memory(home) as mem:
        mem.recall("billing")
        assert mem._kept.built is None  # read from the stored records
        if settle:

            def no(*_a: object, **_k: object) -> None:
                raise AssertionError("every node's matching text was derived")

            monkeypatch.setattr(talos.view.kept_terms, "matching_texts", no)
            mem.settle()  # the view built again for the stored key: the same term index
            graph = mem._kept.recall_graph(None, None)
            assert mem._kept.built is not None and graph is mem._kept.built.graph
            got, edges = mem._kept.evidence_index(graph)
            want, want_edges = of_nodes(graph.nodes, str(home / "memory.md"), MEMORY)
            assert_same(got, want)
            _assert_links(edges, want_edges)
        builds: list[int] = []
        real = talos.view.kept.build_view

        def counted(*a: object, **k: object) -> object:
            builds.append(1)
            return real(*a, **k)  # type: ignore[arg-type]

        monkeypatch.setattr(talos.view.kept, "build_view", counted)
        text = (home / "memory.md").read_text()
        (home / "memory.md").write_text(text.replace("eu-west-1", "us-east-2"))
        assert "us-east-2" in mem.recall("deploy region").text
        assert builds == ([] if settle else [1])


def test_a_line_added_builds_the_view_again_but_patches_the_term_index(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line added to memory.md builds the records' view again (a patch takes edits in
    place only); the term index then follows the nodes that stayed, the skills made again
    with the same texts among them: only the new line is analysed, and the index equals
    analysing every node. It was gathered anew: 0.92 s of a 1.27 s recall at 100,000
    sessions."""
    Memory(home).prepare()
    with Memory(home) as mem:
        mem.recall("billing")
        mem.settle()
        looked: list[int] = []
        real = talos.view.kept_terms.matching_texts_at

        def at(nodes: object, positions: list[int]) -> object:
            looked.extend(positions)
            return real(nodes, positions)  # type: ignore[arg-type]

        def no(*_a: object, **_k: object) -> None:
            raise AssertionError("every node's matching text was derived")

        monkeypatch.setattr(talos.view.kept_terms, "matching_texts", no)
        monkeypatch.setattr(talos.view.kept_terms, "matching_texts_at", at)
        line = "- the billing dashboard lives at grafana <!-- user 2026-01-03 -->\n"
        with (home / "memory.md").open("a") as f:
            f.write(line)
        assert "grafana" in mem.recall("billing dashboard grafana").text
        graph = mem._kept.recall_graph(None, None)
        assert [graph.nodes[i].text for i in looked] == [line[2:].split(" <!--")[0]]
        got, edges = mem._kept.evidence_index(graph)
        memory = (home / "memory.md").read_text()
        want, want_edges = of_nodes(graph.nodes, str(home / "memory.md"), memory)
        assert_same(got, want)
        _assert_links(edges, want_edges)


PARAGRAPHS = (
    "# Ops\n"
    "- rollback cluster beta <!-- user 2026-01-02 -->\n"
    "- alpha kernel disk <!-- user 2026-01-02 -->\n"
    "- alpha disk berlin billing <!-- user 2026-01-02 -->\n"
    "xx\n"
    "- backup invoice <!-- user 2026-01-02 -->\n"
    "- rollback friday <!-- user 2026-01-02 -->\n"
    "- kernel canary deploy <!-- user 2026-01-02 -->\n"
)


def test_a_paragraph_break_that_moved_is_not_served_the_old_edges(
    make_home: Callable[..., Path],
) -> None:
    """The failing input of the hostile pass: a short line that is no fact became a blank
    line, so the facts' rows (and their token) stayed while the paragraphs, and with them
    the contiguity edges, changed. The next process served the block of the old text and put
    'rollback cluster beta' first; the block is now of memory.md's text as it is."""
    home = make_home(memory=PARAGRAPHS)
    Memory(home).recall("rollback billing")  # stores the records and the ranking block
    (home / "memory.md").write_text(PARAGRAPHS.replace("xx\n", "\n"))
    got = Memory(home).recall("rollback billing").text
    want = Memory(home, index=False).recall("rollback billing").text
    assert got == want
    assert got.splitlines()[1].endswith("alpha disk berlin billing")


def _forged(home: Path, **arrays: object) -> None:
    """The stored ranking block with some arrays replaced, under a valid checksum."""
    from talos.graph.stored import _LAYOUT, _pack, _unpack

    con = sqlite3.connect(home / ".talos" / "index.db")
    (data,) = con.execute("SELECT data FROM terms WHERE name='ranking'").fetchone()
    meta, got = _unpack(data, "ranking")
    layout = list(_LAYOUT["ranking"].items())
    parts = []
    for name, dtype in layout:
        value = arrays.get(name, got[name])
        raw = value if isinstance(value, bytes) else np.asarray(value, dtype=dtype).tobytes()
        parts.append((name, dtype, raw))
    con.execute("UPDATE terms SET data=? WHERE name='ranking'", (_pack("ranking", parts, meta),))
    con.commit()
    con.close()


@pytest.mark.parametrize(
    "lie",
    [
        "counts of zero",
        "holders of another term",
        "a node's entries moved",
        "a share of NaN",
        "an edge to itself",
        "a row out of range",
    ],
)
def test_a_block_whose_arrays_contradict_each_other_is_refused(
    home: Path, lie: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hostile pass re-packed blocks with a valid checksum whose two orientations told
    different stories; each was used and changed the answer. Now each is refused (warned,
    rebuilt) and the recall is that of a process that analysed every node."""
    want = [Memory(home, index=False).recall(q).text for q in QUERIES]
    Memory(home).recall(QUERIES[0])
    from talos.graph.stored import _unpack

    con = sqlite3.connect(home / ".talos" / "index.db")
    (data,) = con.execute("SELECT data FROM terms WHERE name='ranking'").fetchone()
    con.close()
    _meta, got = _unpack(data, "ranking")
    lies = {
        "counts of zero": {"tf": np.zeros_like(got["tf"]), "ktf": np.zeros_like(got["ktf"])},
        "holders of another term": {"knode": np.zeros_like(got["knode"])},
        "a node's entries moved": {"ptr": np.concatenate([[0, 0], got["ptr"][2:]])},
        "a share of NaN": {"links_share": np.full_like(got["links_share"], np.nan)},
        "an edge to itself": {"links_dst": got["links_src"]},
        "a row out of range": {"rows": np.full_like(got["rows"], -7)},
    }
    _forged(home, **lies[lie])
    capsys.readouterr()
    assert [Memory(home).recall(q).text for q in QUERIES] == want
    assert "ranking block unusable" in capsys.readouterr().err


def test_a_title_heading_added_without_facts_labels_the_facts_again(
    make_home: Callable[..., Path],
) -> None:
    """The hostile pass: a level-1 heading with no fact under it changes which heading is
    the file's title but not the graph, and a long-lived Memory kept hiding ``(Memory)``."""
    home = make_home(memory="# Memory\n- alpha service deploys on fridays\n")
    with Memory(home) as mem:
        assert "(Memory)" not in mem.recall("alpha deploys").text  # the file's title
        (home / "memory.md").write_text("# Memory\n- alpha service deploys on fridays\n# Other\n")
        got = mem.recall("alpha deploys").text
    assert got == Memory(home).recall("alpha deploys").text
    assert "(Memory) alpha service deploys on fridays" in got
