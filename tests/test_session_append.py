"""A new session costs what it changed (SPEC §11, issue 4).

When sessions only arrive after the newest one (their files sort last: time-stamped names),
the index extends the merged episode block (:meth:`talos.graph.EpisodeBlock.extend`) instead
of merging every episode again, and a kept :class:`talos.Memory` re-stacks its view over the
new block (``KeptState._restack``). A removed session is removed from the block
(tests/test_session_remove.py, issue 12 item 7). Any other change of the sessions (one
sorting before the newest, a rewrite) builds the block again. Every state must answer exactly
like the non-indexed computation.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import session_line as _session

import talos.index
import talos.kept as kept_mod
from talos import Memory
from talos.graph import EpisodeBlock
from talos.home import resolve_paths
from talos.index import Index

WORDS = ["kettle", "tea", "deploy", "region", "csv", "merge", "rust", "cargo", "合并", "表格"]
QUERIES = ["kettle tea", "deploy region csv", "rust cargo", "合并 表格", "merge tea"]


def _text(rng: random.Random) -> str:
    return " ".join(rng.sample(WORDS, rng.randint(1, 3)))  # few keyword sets: many merge


def _rows(mem: Memory) -> dict[str, Any]:
    return {
        q: [(r.score, r.kind, r.text, r.activation, r.seed) for r in mem.explain(q, k=30)]
        for q in QUERIES
    }


def _direct(home: Path) -> dict[str, Any]:
    with Memory(home, index=False) as fresh:
        return _rows(fresh)


#: The folder of the index package: a frame of one of its files is the index at work.
INDEX_DIR = Path(talos.index.__file__).parent


@pytest.fixture
def ways(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``build``, ``extend`` or ``remove`` per episode block the index made (in any Memory
    here)."""
    got: list[str] = []
    build, extend = EpisodeBlock.build.__func__, EpisodeBlock.extend  # type: ignore[attr-defined]
    remove = EpisodeBlock.remove

    def by_index() -> bool:  # the non-indexed route builds its block too: not counted
        code = sys._getframe(2).f_code  # nor Index.check's block to compare with
        in_index = Path(code.co_filename).parent == INDEX_DIR  # a file of talos/index/
        return in_index and code.co_name != "_check_block"

    def spy_build(cls: Any, rows: Any) -> Any:
        if by_index():
            got.append("build")
        return build(cls, rows)

    def spy_extend(self: Any, rows: Any) -> Any:
        if by_index():
            got.append("extend")
        return extend(self, rows)

    def spy_remove(self: Any, episodes: Any) -> Any:
        if by_index() and len(episodes):
            got.append("remove")
        return remove(self, episodes)

    monkeypatch.setattr(EpisodeBlock, "build", classmethod(spy_build))
    monkeypatch.setattr(EpisodeBlock, "extend", spy_extend)
    monkeypatch.setattr(EpisodeBlock, "remove", spy_remove)
    return got


def test_extend_gives_the_block_build_gives() -> None:
    """Built in one go or grown piece by piece, the merged episodes are the same nodes."""
    rng = random.Random(1)
    words = ["a", "b", "c", "d", "e", "zz", "中文"]
    for _trial in range(200):
        rows = [
            (
                f"p{i}",
                rng.choice(["x", "y", f"t{i}"]),
                " ".join(sorted(set(rng.sample(words, rng.randint(1, 3))))),
            )
            for i in range(rng.randint(1, 30))
        ]
        whole = EpisodeBlock.build(rows)
        cut = rng.randint(0, len(rows))
        grown = EpisodeBlock.build(rows[:cut])
        while cut < len(rows):
            step = rng.randint(1, 4)
            grown = grown.extend(rows[cut : cut + step])
            cut += step
        grown._check()

        def nodes(b: EpisodeBlock) -> list[Any]:
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

        assert nodes(grown) == nodes(whole)
        kw_ptr, kw_node = grown.incidence.keyword_major()
        for k, word in enumerate(grown.incidence.vocab):  # holders ascending, as built
            holders = [g for g in range(len(grown)) if word in grown.node(g).keywords]
            assert kw_node[kw_ptr[k] : kw_ptr[k + 1]].tolist() == holders
        # and the grown block survives storing
        again = EpisodeBlock.from_bytes(grown.to_bytes("t"), "t")
        assert nodes(again) == nodes(whole)


def test_sessions_appended_extend_the_block_and_answer_like_the_files(
    make_home: Callable[..., Path], ways: list[str]
) -> None:
    rng = random.Random(2)
    sessions = {f"2026-01-{i:02d}.jsonl": _session(_text(rng)) for i in range(1, 21)}
    home = make_home(memory="- kettle tea fact\n- deploy region fact\n", sessions=sessions)
    folder = home / ".talos" / "sessions"
    kept = Memory(home)
    assert _rows(kept) == _direct(home)
    assert ways == ["build"]
    restacked = 0
    real = kept_mod.KeptState._restack

    def count(self: Any, *a: Any) -> Any:
        nonlocal restacked
        got = real(self, *a)
        restacked += got is not None
        return got

    kept_mod.KeptState._restack = count  # type: ignore[method-assign]
    try:
        for day in range(21, 31):  # later names: appended
            for j in range(rng.randint(1, 3)):
                (folder / f"2026-01-{day:02d}-{j}.jsonl").write_text(_session(_text(rng)))
            assert _rows(kept) == _direct(home), day
            with Memory(home) as other:  # a new process: extends the stored block
                assert _rows(other) == _direct(home), day
    finally:
        kept_mod.KeptState._restack = real  # type: ignore[method-assign]
    assert "build" not in ways[1:]  # never merged all episodes again
    assert ways.count("extend") >= 10
    assert restacked == 10  # the kept Memory kept its view of the facts
    assert Index(resolve_paths(home)).check() == []


@pytest.mark.parametrize(
    "change",
    ["before the newest", "rewritten", "deleted", "renamed", "grown from empty", "touched"],
)
def test_any_other_change_of_the_sessions_builds_the_block_again(
    make_home: Callable[..., Path], ways: list[str], change: str
) -> None:
    rng = random.Random(3)
    sessions = {f"2026-02-{i:02d}.jsonl": _session(_text(rng)) for i in range(2, 12)}
    sessions["2026-02-99.jsonl"] = ""  # no request yet: pending
    home = make_home(memory="- kettle tea fact\n", sessions=sessions)
    folder = home / ".talos" / "sessions"
    kept = Memory(home)
    assert _rows(kept) == _direct(home)
    del ways[:]
    if change == "before the newest":
        (folder / "2026-02-05b.jsonl").write_text(_session("rust cargo kettle"))
    elif change == "rewritten":  # the folder does not change: `talos index` sweeps
        (folder / "2026-02-04.jsonl").write_text(_session("deploy region 表格 rewritten"))
        Index(resolve_paths(home)).refresh(full=True)
    elif change == "deleted":
        (folder / "2026-02-03.jsonl").unlink()
    elif change == "renamed":
        (folder / "2026-02-03.jsonl").rename(folder / "2026-02-77.jsonl")
    elif change == "grown from empty":  # the pending file is the newest: an append
        (folder / "2026-02-99.jsonl").write_text(_session("csv merge kettle"))
    elif change == "touched":  # same bytes, new mtime, swept: read again, and rebuilt
        (folder / "2026-02-04.jsonl").write_text((folder / "2026-02-04.jsonl").read_text())
        Index(resolve_paths(home)).refresh(full=True)
    assert _rows(kept) == _direct(home), change
    with Memory(home) as other:
        assert _rows(other) == _direct(home), change
    # a build is stored for the next process; an extension by one episode is not (each
    # process extends the stored block by the rows it lacks, STORE_AFTER). A removal (issue
    # 12 item 7) removes the episode from the block (tests/test_session_remove.py); a rename
    # to a later name is a removal and an append.
    want = {
        "grown from empty": ["extend", "extend"],
        "deleted": ["remove", "remove"],
        "renamed": ["remove", "extend", "remove", "extend"],
    }.get(change, ["build"])
    assert ways == want, change
    assert Index(resolve_paths(home)).check() == []


def test_a_copied_block_of_another_home_is_never_extended(
    make_home: Callable[..., Path],
) -> None:
    """The base token is random per home and per change: a block row copied from another
    home (same session names, other texts) is rebuilt, not extended."""
    a = make_home(sessions={"2026-03-01.jsonl": _session("kettle tea")}, name="a")
    b = make_home(sessions={"2026-03-01.jsonl": _session("deploy region")}, name="b")
    for home in (a, b):
        Memory(home).explain("kettle")
    import sqlite3

    src = sqlite3.connect(a / ".talos" / "index.db")
    row = src.execute("SELECT token, data FROM blocks WHERE name='episodes'").fetchone()
    src.close()
    (b / ".talos" / "sessions" / "2026-03-02.jsonl").write_text(_session("csv merge"))
    dst = sqlite3.connect(b / ".talos" / "index.db")
    dst.execute("UPDATE blocks SET token=?, data=? WHERE name='episodes'", row)
    dst.commit()
    dst.close()
    with Memory(b) as mem:
        assert _rows(mem) == _direct(b)
        texts = {r[2] for rows in _rows(mem).values() for r in rows}
    assert "kettle tea" not in texts


def test_many_sessions_at_once_store_the_grown_block(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, ways: list[str]
) -> None:
    monkeypatch.setattr(talos.index.blocks, "STORE_AFTER", 5)
    rng = random.Random(5)
    home = make_home(sessions={f"2026-04-{i:02d}.jsonl": _session(_text(rng)) for i in range(1, 4)})
    folder = home / ".talos" / "sessions"
    Memory(home).explain("kettle")
    for i in range(10, 17):
        (folder / f"2026-04-{i:02d}.jsonl").write_text(_session(_text(rng)))
    with Memory(home) as mem:
        assert _rows(mem) == _direct(home)
    import sqlite3

    con = sqlite3.connect(home / ".talos" / "index.db")
    blob = con.execute("SELECT data FROM blocks WHERE name='episodes'").fetchone()[0]
    con.close()
    assert EpisodeBlock.from_bytes(blob).episodes == 10  # 7 new >= STORE_AFTER: stored
    assert ways == ["build", "extend"]


# -- a change within the file system's clock tick (signatures.settled) ----------------------


@pytest.mark.parametrize("what", ["memory.md", "sessions"])
def test_a_change_within_the_same_clock_tick_is_seen_on_a_later_call(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    """A coarse clock gives two writes within one tick the same mtime: the signature taken
    after the first matches the second. A file read within its tick is looked at again
    after the tick, by content; pinned with a clock and signatures held still."""
    home = make_home(
        memory="- kettle tea fact one\n",
        sessions={"2026-05-01.jsonl": _session("deploy region csv")},
    )
    tick = 1_800_000_000_123_456_789  # the file system's time of both writes
    now = [tick + 1_000_000]  # 1 ms after: within the tick
    monkeypatch.setattr(talos.index.signatures.time, "time_ns", lambda: now[0])
    monkeypatch.setattr(
        talos.index.signatures,
        "file_sig",
        lambda p: (p.stat().st_size, tick, tick) if p.exists() else (-1, -1, -1),
    )
    monkeypatch.setattr(talos.index.signatures, "dir_sig", lambda p: (4096, tick, tick, 1, 2))
    kept = Memory(home)
    kept.explain("kettle")
    if what == "memory.md":  # same size, same (held) signature
        (home / "memory.md").write_text("- kettle tea fact two\n", encoding="utf-8")
        want = "kettle tea fact two"
    else:
        (home / ".talos" / "sessions" / "2026-05-02.jsonl").write_text(_session("kettle brew"))
        want = "kettle brew"
    now[0] = tick + 3_000_000_000  # later: the tick is over
    texts = [r.text for r in kept.explain("kettle", k=10)]
    assert want in texts
    with Memory(home) as other:
        assert want in [r.text for r in other.explain("kettle", k=10)]
    # and once settled, a call trusts the signature again: no write to the index
    kept.explain("kettle")
    before = (home / ".talos" / "index.db-wal").stat().st_mtime_ns
    kept.explain("kettle")
    assert (home / ".talos" / "index.db-wal").stat().st_mtime_ns == before


def test_a_stored_records_block_carries_the_usage_fingerprint(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new process that recalls from the stored records block takes the usage fingerprint
    of the keys in view from the block (hashing 3,000 keys cost ~15 ms of every `talos
    recall`), and it is the fingerprint of those keys."""
    import talos.usage_store as usage

    rng = random.Random(9)
    memory = "".join(f"- fact {i} about {_text(rng)}\n" for i in range(40))
    home = make_home(memory=memory, sessions={"2026-06-01.jsonl": _session("kettle tea")})
    with Memory(home) as first:
        first.recall("kettle")  # builds the view and stores the records block
    usage._FP_MEMO.clear()
    usage._KEY_HASH.clear()
    digests: list[int] = []
    real = usage._digest
    monkeypatch.setattr(usage, "_digest", lambda keys: digests.append(1) or real(keys))
    with Memory(home) as second:
        second.recall("kettle tea")
        present = second._kept.present(second._kept.recall_graph(None, None))
    assert digests == []  # nothing hashed: the block said it
    assert {s: usage.fingerprint(v) for s, v in present.items()} == {
        s: real(v) for s, v in present.items()
    }
    assert len(present["global"]) == 40
