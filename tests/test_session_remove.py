"""A removed session costs what it changed (issue 12 item 7, design §11).

Found: after sessions were removed, the next recall merged every episode again (1.4 s at
30,000 sessions, 10.9 s and 529 MB at 100,000). Now the index logs each removed session
(table ``dropped``) and the episode block loses its episodes
(:meth:`talos.graph.EpisodeBlock.remove`), as :meth:`~talos.graph.EpisodeBlock.extend` adds
new ones. Determinism: a block brought up to date by any mix of removals and appends is the
block a build of the remaining rows gives — the same merged nodes, holders and activations.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import SESSION_QUERIES, direct_rows, explain_rows, session_text
from helpers import session_line as _session

import talos.index
from talos import Memory
from talos.graph import EpisodeBlock, Graph, Incidence, StackedNodes
from talos.home import resolve_paths
from talos.index import Index
from talos.ranking.activation import MODELS

WORDS = ["a", "b", "c", "d", "e", "zz", "中文"]


def _nodes(b: EpisodeBlock) -> list[Any]:
    return [
        (
            n.text,
            n.path,
            sorted(n.keywords),
            n.order,
            [(m.text, m.path, m.order) for m in n.members],
        )
        for n in (b.node(g) for g in range(len(b)))
    ]


def _holders(b: EpisodeBlock) -> dict[str, list[int]]:
    """Each keyword some node holds → its nodes, as the keyword-major arrays list them."""
    kw_ptr, kw_node = b.incidence.keyword_major()
    got = {w: kw_node[kw_ptr[k] : kw_ptr[k + 1]].tolist() for k, w in enumerate(b.incidence.vocab)}
    return {w: g for w, g in got.items() if g}


def _activations(b: EpisodeBlock, query: frozenset[str]) -> list[Any]:
    graph = Graph(StackedNodes([], b, 0), 0, Incidence.of([]), b.incidence)
    out = []
    for name in ("classic",):  # the keyword model: it ranks over the block's keywords
        act = MODELS[name].activate(graph, query)
        out.append(sorted(act.final.items()))
    return out


def _same(got: EpisodeBlock, rows: list[Any]) -> None:
    want = EpisodeBlock.build(rows)
    got._check()
    assert _nodes(got) == _nodes(want)
    assert _holders(got) == _holders(want)
    for q in (frozenset({"a"}), frozenset({"b", "中文"}), frozenset({"c", "d", "zz"})):
        assert _activations(got, q) == _activations(want, q)  # the same floats, bit for bit
    assert _nodes(EpisodeBlock.from_bytes(got.to_bytes("t"), "t")) == _nodes(want)


def _row(rng: random.Random, i: int) -> tuple[str, str, str]:
    kw = " ".join(sorted(set(rng.sample(WORDS, rng.randint(1, 3)))))
    return (f"p{i:04d}", rng.choice(["x", "y", f"t{i}"]), kw)  # few sets, few texts: merges


def test_remove_gives_the_block_build_gives() -> None:
    """Removed in one go or piece by piece — representatives, firsts, whole nodes — the
    merged episodes are those of a build of what is left."""
    rng = random.Random(11)
    for _trial in range(150):
        rows = [_row(rng, i) for i in range(rng.randint(1, 30))]
        block, left = EpisodeBlock.build(rows), list(range(len(rows)))
        while left:
            k = rng.randint(1, max(1, len(left) // 2)) if rng.random() < 0.9 else len(left)
            cut = sorted(rng.sample(range(len(left)), k))
            block = block.remove(cut)
            left = [e for i, e in enumerate(left) if i not in set(cut)]
            _same(block, [rows[e] for e in left])


def test_removals_and_appends_in_any_mix_give_the_block_build_gives() -> None:
    rng = random.Random(12)
    for _trial in range(120):
        made = rng.randint(1, 20)
        current = [_row(rng, i) for i in range(made)]
        block = EpisodeBlock.build(current)
        for _step in range(6):
            if current and rng.random() < 0.5:
                cut = sorted(rng.sample(range(len(current)), rng.randint(1, len(current))))
                block = block.remove(cut)
                current = [r for i, r in enumerate(current) if i not in set(cut)]
            else:
                new = [_row(rng, made + j) for j in range(rng.randint(1, 4))]
                made += len(new)
                block = block.extend(new)
                current += new
            _same(block, current)


def test_unheld_keywords_keep_their_ids_until_they_are_most() -> None:
    """A vocabulary over the block stays valid after a small removal (the ids do not move);
    a removal that leaves most ids unheld renumbers them."""
    rows = [(f"p{i}", f"t{i}", f"w{i:02d} common") for i in range(10)]
    block = EpisodeBlock.build(rows)
    small = block.remove([3])
    assert list(small.incidence.vocab) == list(block.incidence.vocab)
    assert _holders(small)["common"] == list(range(9))
    most = block.remove(list(range(8)))
    assert list(most.incidence.vocab) == ["common", "w08", "w09"]
    _same(most, rows[8:])
    with pytest.raises(IndexError):
        block.remove([10])


def test_the_reported_input_removal_does_not_merge_every_episode_again(
    make_home: Callable[..., Path], ways: list[str]
) -> None:
    """Sessions removed (the oldest, some in the middle, the newest): the kept Memory and a
    new process remove them from the block — no build — and answer like the files."""
    rng = random.Random(13)
    sessions = {f"2026-01-{i:02d}.jsonl": _session(session_text(rng)) for i in range(1, 29)}
    home = make_home(memory="- kettle tea fact\n- deploy region fact\n", sessions=sessions)
    folder = home / ".talos" / "sessions"
    kept = Memory(home)
    assert explain_rows(kept) == direct_rows(home)
    del ways[:]
    for gone in (["01", "02"], ["10", "14", "15"], ["28"], ["27", "26"]):
        for day in gone:
            (folder / f"2026-01-{day}.jsonl").unlink()
        assert explain_rows(kept) == direct_rows(home), gone
        with Memory(home) as other:
            assert explain_rows(other) == direct_rows(home), gone
        made = len(ways)
        assert Index(resolve_paths(home)).check() == []
        del ways[made:]  # the check brings the stored block up to date too
    # each change: removed once in the kept Memory, once in a new process
    assert ways == ["remove"] * 8


def test_a_session_between_the_newest_left_and_a_removed_newer_one_builds(
    make_home: Callable[..., Path], ways: list[str]
) -> None:
    """Variant: the newest session is removed, then one sorts between the newest left and
    the removed one. A block made before does not hold the removed one's place as its end,
    so that is no append: the block is built again (an extension would have missed it)."""
    home = make_home(sessions={f"2026-02-{i:02d}.jsonl": _session(f"kettle {i}") for i in (1, 9)})
    folder = home / ".talos" / "sessions"
    kept = Memory(home)
    assert explain_rows(kept) == direct_rows(home)
    (folder / "2026-02-09.jsonl").unlink()
    assert explain_rows(kept) == direct_rows(home)
    del ways[:]
    (folder / "2026-02-05.jsonl").write_text(_session("kettle tea new"))
    assert explain_rows(kept) == direct_rows(home)
    with Memory(home) as other:
        assert explain_rows(other) == direct_rows(home)
    assert ways == ["build"]


def test_every_session_removed_and_new_ones_after(
    make_home: Callable[..., Path], ways: list[str]
) -> None:
    home = make_home(
        sessions={
            f"2026-03-{i:02d}.jsonl": _session(session_text(random.Random(i))) for i in range(1, 6)
        }
    )
    folder = home / ".talos" / "sessions"
    kept = Memory(home)
    assert explain_rows(kept) == direct_rows(home)
    for f in folder.iterdir():
        f.unlink()
    assert explain_rows(kept) == direct_rows(home) == {q: [] for q in SESSION_QUERIES}
    (folder / "2026-03-20.jsonl").write_text(_session("kettle tea"))
    assert explain_rows(kept) == direct_rows(home)
    assert "build" not in ways[1:]


def test_a_pruned_log_brings_an_old_block_up_from_the_stored_one(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, ways: list[str]
) -> None:
    """Once a block holding the removals is stored, their log entries are pruned; a kept
    Memory whose block is older than that starts from the stored block, never from a log
    that misses entries."""
    monkeypatch.setattr(talos.index.blocks, "STORE_AFTER", 2)
    rng = random.Random(14)
    home = make_home(
        sessions={f"2026-04-{i:02d}.jsonl": _session(session_text(rng)) for i in range(1, 13)}
    )
    folder = home / ".talos" / "sessions"
    kept = Memory(home)
    assert explain_rows(kept) == direct_rows(home)
    for day in ("03", "05", "07"):
        (folder / f"2026-04-{day}.jsonl").unlink()
    with Memory(home) as other:  # 3 removals >= STORE_AFTER: stored, log pruned
        assert explain_rows(other) == direct_rows(home)
    con = sqlite3.connect(home / ".talos" / "index.db")
    assert con.execute("SELECT count(*) FROM dropped").fetchone() == (0,)
    floor = con.execute("SELECT v FROM meta WHERE k='dropped_floor'").fetchone()
    con.close()
    assert floor == ("3",)
    assert explain_rows(kept) == direct_rows(home)  # its block has seq 0 < 3: from the stored one
    assert "build" not in ways[1:]
    assert Index(resolve_paths(home)).check() == []


def test_a_logged_removal_the_block_does_not_hold_builds_it_again(
    make_home: Callable[..., Path], ways: list[str]
) -> None:
    """A log entry naming a session the block should hold but does not (a damaged or
    foreign log) is not trusted: the block is built from the rows."""
    home = make_home(
        sessions={f"2026-05-{i:02d}.jsonl": _session(f"kettle {i}") for i in (1, 2, 3)}
    )
    Memory(home).explain("kettle")
    (home / ".talos" / "sessions" / "2026-05-02.jsonl").unlink()
    with Index(resolve_paths(home)) as index:
        assert index.refresh().sessions_dropped == 1  # logged
    con = sqlite3.connect(home / ".talos" / "index.db")
    assert con.execute("UPDATE dropped SET path = path || 'x'").rowcount == 1
    con.commit()
    con.close()
    del ways[:]
    with Memory(home) as mem:
        assert explain_rows(mem) == direct_rows(home)
    assert ways == ["build"]


def test_positions_are_found_by_path() -> None:
    rows = [(f"/h/s/2026-{i:02d}.jsonl", f"t{i}", "a") for i in range(20)]
    block = EpisodeBlock.build(rows)
    assert block.positions(["/h/s/2026-07.jsonl", "/h/s/2026-00.jsonl"]) == [0, 7]
    assert block.positions(["/h/s/missing.jsonl"]) is None
    unsorted = EpisodeBlock.build([("b", "x", "a"), ("a", "y", "a")])  # a scan finds it
    assert unsorted.positions(["a"]) == [1]
    assert np.array_equal(block.remove([]).rep, block.rep)
