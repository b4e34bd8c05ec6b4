"""The ``evidence`` model's term index patched after an edit, a new or a removed session
(:mod:`talos.view.termpatch`) equals the index gathered afresh, array for array, and ranks the same,
float for float: random edits, new and removed sessions, merged duplicates, CJK."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import assert_same, assert_term_major
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import talos.view.kept_terms as kept_terms
from talos import Memory
from talos.ranking.analyzer import analyze
from talos.ranking.contiguity import Links, MemoryContexts, links, resized
from talos.ranking.evidence import TermIndex, activate, of_nodes, query_vector
from talos.sources.facts import any_underline
from talos.view.termpatch import composed, patch_index, restacked, spliced
from talos.view.termrows import Source, TermRows, matching_texts

# words, CJK, stop words (a text of these alone is a node without a term)
WORDS = ["kettle", "tea", "deploy", "region", "csv", "cargo", "合并", "表格", "部署", "the", "is"]
TEXT = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
SOURCE: st.SearchStrategy[Source] = st.one_of(TEXT, st.tuples(TEXT, TEXT))  # with headings
QUERIES = ["kettle tea", "deploy region csv", "合并表格", "cargo 部署"]


def same_ranking(got: TermIndex, want: TermIndex) -> None:
    """The model's activation over both indexes, float for float."""
    for q in QUERIES:
        a = activate(got, query_vector(got, analyze(q)))
        b = activate(want, query_vector(want, analyze(q)))
        assert np.array_equal(a.final, b.final) and a.z == b.z, q


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_patched_index_equals_a_fresh_gather(data: st.DataObject) -> None:
    old = data.draw(st.lists(SOURCE, max_size=16), label="old")
    nodes: list[tuple[int, Source]] = list(enumerate(old))  # (old node kept, or -1; source)
    for _ in range(data.draw(st.integers(0, 6))):
        kind = data.draw(st.sampled_from(["drop", "insert", "replace"]))
        if kind == "insert" or not nodes:
            nodes.insert(data.draw(st.integers(0, len(nodes))), (-1, data.draw(SOURCE)))
        else:
            i = data.draw(st.integers(0, len(nodes) - 1))
            if kind == "drop":
                del nodes[i]
            else:
                nodes[i] = (-1, data.draw(SOURCE))
    rows = TermRows.empty()
    before, _used = rows.index(old)
    carry = np.array([c for c, _s in nodes], dtype=np.int64)
    fresh = rows.rows([s for c, s in nodes if c < 0])  # may renumber the rows' terms
    got = patch_index(before, carry, rows, fresh)
    want, _used = TermRows.empty().index([s for _c, s in nodes])
    assert_same(got, want)
    assert_term_major(got)
    same_ranking(got, want)


def test_a_carry_must_keep_old_nodes_in_order() -> None:
    rows = TermRows.empty()
    before, _used = rows.index(["kettle tea", "deploy region", "csv"])
    with pytest.raises(ValueError, match="in order"):
        patch_index(before, np.array([1, 0, 2]), rows, np.zeros(0, dtype=np.int64))
    with pytest.raises(ValueError, match="one row per new node"):
        patch_index(before, np.array([0, -1, 2]), rows, np.zeros(0, dtype=np.int64))


def test_carries_of_a_splice_a_restack_and_both() -> None:
    # records 0..3 then 2 episodes: record 1 deleted, one inserted at 2
    assert spliced(4, 6, [1], [2], 4).tolist() == [0, 2, -1, 3, 4, 5]
    # 3 records, the block's groups: 0 kept, 1 changed, 2 kept, one new
    assert restacked(3, np.array([0, -1, 2, -1])).tolist() == [0, 1, 2, 3, -1, 5, -1]
    a, b = np.array([0, -1, 1, 2]), np.array([0, 2, -1, 3])
    assert composed([a, b]).tolist() == [0, 1, -1, 2]
    with pytest.raises(ValueError, match="add up"):
        spliced(4, 6, [1], [2], 5)


def test_resized_edges_equal_links_over_more_or_fewer_nodes() -> None:
    node_of, ctx = [0, 1, 2, 1], [("a",), ("a",), ("a",), None]
    base = links(node_of, ctx, 5)
    for n in (3, 5, 9):
        same_links(resized(base, n), links(node_of, ctx, n))
    with pytest.raises(ValueError, match="contiguity edge"):
        resized(base, 2)


def same_links(a: Links, b: Links) -> None:
    for name in ("ptr", "src", "dst", "share", "out", "ahead"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name


# -- a long-lived Memory across random edits and sessions -----------------------------------

FACTS = [
    "- the kettle needs descaling <!-- user 2026-01-02 -->",
    "- deploy region is eu-west-1 <!-- user 2026-01-02 -->",
    "- 合并两个表格 <!-- user 2026-01-03 -->",
    "- csv files use semicolons",
    "- cargo builds the rust crate <!-- user 2026-01-03 -->",
    "# Work",
    "- deploy on fridays only <!-- user 2026-01-04 -->",
]


def _session(text: str) -> str:
    return json.dumps({"role": "user", "content": text}, ensure_ascii=False) + "\n"


def _check(mem: Memory) -> None:
    """The kept index and edges of the last recall's graph equal a fresh gather's and
    of_nodes's over the same nodes and memory.md."""
    kept = mem._kept
    assert kept.evidence is not None
    graph = kept.evidence.graph
    want, _used = TermRows.empty().index(matching_texts(graph.nodes))
    assert_same(kept.evidence.index, want)
    text = mem.paths.memory_file.read_text(encoding="utf-8")
    ref, ref_links = of_nodes(list(graph.nodes), str(mem.paths.memory_file), text)
    assert_same(kept.evidence.index, ref)
    same_links(kept.evidence.links, ref_links)
    same_ranking(kept.evidence.index, ref)


STEP = st.one_of(
    st.tuples(st.just("edit"), st.integers(0, 99), TEXT),
    st.tuples(st.just("session"), st.integers(0, 99), TEXT),
    st.tuples(st.just("again"), st.integers(0, 99), st.just("")),  # a session's duplicate
    st.tuples(st.just("remove"), st.integers(0, 99), st.just("")),
)


def _home(root: Path) -> tuple[Path, list[str], list[str], list[str]]:
    """A home of :data:`FACTS` and three sessions: ``(home, lines, session texts, names)``."""
    home = root / "home"
    folder = home / ".talos" / "sessions"
    folder.mkdir(parents=True)
    lines = list(FACTS)
    (home / "memory.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    texts = ["roll out the billing release", "画一个流程图 for the deploy", "kettle tea"]
    names = [f"2026-01-0{i + 1}-s.jsonl" for i in range(len(texts))]
    for name, t in zip(names, texts, strict=True):
        (folder / name).write_text(_session(t), encoding="utf-8")
    return home, lines, texts, names


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each term index since was patched (else gathered)."""
    taken: list[bool] = []
    real = kept_terms.TermState._patched_terms

    def counted(self: Any, graph: Any) -> Any:
        got = real(self, graph)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(kept_terms.TermState, "_patched_terms", counted)
    return taken


def _step(home: Path, lines: list[str], texts: list[str], names: list[str], step: Any) -> None:
    """Apply one random step: an edited line, a new session, a duplicate, a removal."""
    n, (kind, at, text) = step
    folder = home / ".talos" / "sessions"
    if kind == "edit":
        lines[at % len(lines)] = f"- {text} fact {n} <!-- user 2026-01-0{1 + at % 3} -->"
        (home / "memory.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    elif kind in ("session", "again"):
        said = text or "kettle"
        if kind == "again":  # the same keywords in another text: merged, its representative
            words = texts[at % len(texts)].split()  # changes
            said = " ".join([*reversed(words), words[0]])
        names.append(f"2026-02-{n:02d}-s.jsonl")
        texts.append(said)
        (folder / names[-1]).write_text(_session(said), encoding="utf-8")
    elif names:
        (folder / names.pop(at % len(names))).unlink()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(STEP, min_size=1, max_size=7))
def test_patched_term_index_equals_a_fresh_one_across_edits_and_sessions(
    steps: Sequence[tuple[str, int, str]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, lines, texts, names = _home(Path(tmp))
        with Memory(home, model="evidence") as mem:
            mem.recall("kettle")
            _check(mem)
            for n, step in enumerate(steps):
                _step(home, lines, texts, names, (n, step))
                mem.recall(QUERIES[n % len(QUERIES)])
                _check(mem)


def test_edits_and_sessions_are_patched_not_gathered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison above is not vacuous: a plain edit, a new session, a duplicate and a
    removal each patch the last index."""
    home, lines, texts, names = _home(tmp_path)
    taken = _counted(monkeypatch)
    with Memory(home, model="evidence") as mem:
        mem.recall("kettle")
        mem.recall("kettle")  # the first recall may read the stored records: a full build next
        steps = [("edit", 0, "tea"), ("session", 0, "cargo 部署"), ("again", 0, "")]
        for n, step in enumerate([*steps, ("remove", 1, ""), ("edit", 1, "csv")]):
            _step(home, lines, texts, names, (n, step))
            mem.recall(QUERIES[n % len(QUERIES)])
            _check(mem)
    assert taken[-5:] == [True] * 5, taken


LINE = st.sampled_from(
    [
        "- kettle tea <!-- user 2026-01-02 -->",
        "- deploy region <!-- user 2026-01-03 -->",
        "- 合并表格 <!-- user 2026-01-03 -->",
        "- csv files, untagged",
        "Billing notes <!-- user 2026-01-04 -->",
        "=====",
        "---",
        "# Work",
        "## Deploys",
        "```",
        "~~~",
        "",
        "   ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, max_size=14), st.lists(st.tuples(st.integers(0, 99), LINE), max_size=4))
def test_contexts_after_an_in_place_edit_equal_a_fresh_read(
    lines: list[str], edits: list[tuple[int, str]]
) -> None:
    before = MemoryContexts.of("\n".join(lines))
    for at, line in edits:
        if lines:
            lines[at % len(lines)] = line
    text = "\n".join(lines)
    got, want = before.edited(text), MemoryContexts.of(text)
    if got is not None:  # None: a heading, fence or blank line changed; read again
        assert (got.lines, got.where, got.contexts) == (want.lines, want.where, want.contexts)
    plain = all(MemoryContexts.of(x).lines == [x] and "#" not in x for x in lines)
    plain = plain and not any_underline("\n".join(lines).encode())
    if not edits and plain:
        assert got is not None


def test_a_process_that_only_recalls_patches_after_new_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Variant: the graph read from the stored records (a new process, the MCP server), then
    sessions arrive: the same records over the next block, the term index patched."""
    home, lines, texts, names = _home(tmp_path)
    with Memory(home, model="evidence") as mem:  # builds and stores the records block
        mem.recall("kettle")
    taken = _counted(monkeypatch)
    with Memory(home, model="evidence") as mem:
        mem.recall("kettle")
        assert mem._kept.built is None  # read from the stored records, not built
        steps = [("session", 0, "cargo 部署"), ("again", 0, ""), ("remove", 0, "")]
        for n, step in enumerate(steps):
            _step(home, lines, texts, names, (n, step))
            mem.recall(QUERIES[n % len(QUERIES)])
            _check(mem)
        assert mem._kept.built is None
    assert taken[-3:] == [True] * 3, taken
