"""A new session costs what it changed (design §11, issue 4).

When sessions only arrive after the newest one (their files sort last: time-stamped names),
the index extends the merged episode block (:meth:`talos.graph.EpisodeBlock.extend`) instead
of merging every episode again, and a kept :class:`talos.Memory` re-stacks its view over the
new block (``KeptState._restack``). A removed session is removed from the block
(tests/test_session_remove.py, issue 12 item 7). Any other change of the sessions (one
sorting before the newest, a rewrite) builds the block again. Every state must answer exactly
like the non-indexed computation.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click.testing
import pytest
import typer
from helpers import direct_rows, explain_rows, session_text
from helpers import session_line as _session

import talos.index
import talos.index as index_mod
import talos.view.kept as kept_mod
from talos import Memory
from talos.cli import app
from talos.graph import EpisodeBlock
from talos.home import resolve_paths
from talos.index import Index


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
    sessions = {f"2026-01-{i:02d}.jsonl": _session(session_text(rng)) for i in range(1, 21)}
    home = make_home(memory="- kettle tea fact\n- deploy region fact\n", sessions=sessions)
    folder = home / ".talos" / "sessions"
    kept = Memory(home)
    assert explain_rows(kept) == direct_rows(home)
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
                (folder / f"2026-01-{day:02d}-{j}.jsonl").write_text(_session(session_text(rng)))
            assert explain_rows(kept) == direct_rows(home), day
            with Memory(home) as other:  # a new process: extends the stored block
                assert explain_rows(other) == direct_rows(home), day
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
    sessions = {f"2026-02-{i:02d}.jsonl": _session(session_text(rng)) for i in range(2, 12)}
    sessions["2026-02-99.jsonl"] = ""  # no request yet: pending
    home = make_home(memory="- kettle tea fact\n", sessions=sessions)
    folder = home / ".talos" / "sessions"
    kept = Memory(home)
    assert explain_rows(kept) == direct_rows(home)
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
    assert explain_rows(kept) == direct_rows(home), change
    with Memory(home) as other:
        assert explain_rows(other) == direct_rows(home), change
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
        assert explain_rows(mem) == direct_rows(b)
        texts = {r[2] for rows in explain_rows(mem).values() for r in rows}
    assert "kettle tea" not in texts


def test_many_sessions_at_once_store_the_grown_block(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, ways: list[str]
) -> None:
    monkeypatch.setattr(talos.index.blocks, "STORE_AFTER", 5)
    rng = random.Random(5)
    home = make_home(
        sessions={f"2026-04-{i:02d}.jsonl": _session(session_text(rng)) for i in range(1, 4)}
    )
    folder = home / ".talos" / "sessions"
    Memory(home).explain("kettle")
    for i in range(10, 17):
        (folder / f"2026-04-{i:02d}.jsonl").write_text(_session(session_text(rng)))
    with Memory(home) as mem:
        assert explain_rows(mem) == direct_rows(home)
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
    import talos.usage.store as usage

    rng = random.Random(9)
    memory = "".join(f"- fact {i} about {session_text(rng)}\n" for i in range(40))
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


# -- a kept Memory, a fresh one and the files agree after edits and new sessions ---------------
#
# The contract: a kept ``Memory(home)`` and a fresh one answer like ``Memory(home, index=False)``
# (explain rows with unrounded activations, recall picks, get, conflicts, why-not, usage), and
# ``Index.check()`` finds nothing, after in-place edits of memory.md (``KeptState._patch``) and
# new sessions extending the merged episode block (``SessionRows.refresh``,
# ``EpisodeBlock.extend``, ``KeptState._restack``): names sorting before, between and after the
# others, duplicates, pending files, deletions, more than ``STORE_AFTER`` at once, two kept
# objects and other processes, unicode and malformed files, a switched or recursive folder.
# Three breaks found here are fixed and stay as regressions: a session name that is not UTF-8
# crashed every indexed recall; a session renamed into place within the folder's clock tick, or
# a folder swapped for one with the same names, was never seen.


WORDS = ["kettle", "tea", "deploy", "region", "csv", "rust", "cargo", "helix", "log", "merge"]


QUERIES = [
    "kettle tea",
    "deploy region",
    "rust cargo helix",
    "csv merge log",
    "editor",
    "zq kettle",
]


class Home:
    """A home whose every write gets a distinct mtime (file and sessions folder), so no test
    depends on the clock's granularity."""

    def __init__(self, root: Path, facts: list[str], name: str = "home") -> None:
        self.path = root / name
        self.sessions = self.path / ".talos" / "sessions"
        self.sessions.mkdir(parents=True)
        self.stamp = 1_700_000_000_000_000_000
        self.write(facts)

    def _tick(self, p: Path) -> None:
        self.stamp += 1_000_000_000
        os.utime(p, ns=(self.stamp, self.stamp))

    def write(self, facts: list[str]) -> None:
        p = self.path / "memory.md"
        p.write_text("\n".join(facts) + "\n", encoding="utf-8")
        self._tick(p)

    def add(self, name: str, text: str | None = None, raw: bytes | None = None) -> Path:
        p = self.sessions / name
        p.write_bytes(raw if raw is not None else _session(text or "").encode())
        self._tick(p)
        self._tick(self.sessions)
        return p

    def remove(self, name: str) -> None:
        (self.sessions / name).unlink()
        self._tick(self.sessions)


def _rows(mem: Memory, q: str, **kw: Any) -> list[tuple[Any, ...]]:
    return [
        (
            r.score,
            r.kind,
            r.text,
            r.activation,
            r.seed,
            r.hops,
            r.edges,
            r.node.path,
            r.node.line,
            r.node.raw,
            r.node.fields,
        )
        for r in mem.explain(q, k=30, **kw)
    ]


def _answers(mem: Memory, queries: list[str] = QUERIES, **kw: Any) -> dict[str, Any]:
    """Everything a caller reads without side effects."""
    at = kw.get("at")
    out: dict[str, Any] = {q: _rows(mem, q, **kw) for q in queries}
    out["get"] = [mem.get(k, **kw).to_json() for k in ("editor", "region", "deploy")]
    out["conflicts"] = [(s, k, [n.text for n in r]) for s, k, r in mem.conflicts(at)]
    out["why_not"] = [
        (w.node.text, w.reason, w.detail, w.score)
        for q in queries
        for w in mem.why_not(q, k=2, **kw)
    ]
    return out


def _picks(mem: Memory, q: str) -> tuple[list[tuple[Any, ...]], str]:
    got = mem.recall(q, k=8)
    return [(p.key, p.kind, p.text, p.score, p.body) for p in got.picked], got.text


def _agree(home: Path, kept: Memory, step: object, queries: list[str] = QUERIES) -> None:
    """The kept Memory, a fresh one (index on, recall first: it ranks over the stored blocks)
    and the index check all agree with ``Memory(home, index=False)``."""
    ctor: dict[str, Any] = {"scopes": kept.scopes, "model": kept.model}
    with Memory(home, index=False, **ctor) as direct:
        want = _answers(direct, queries)
        want_picks = [_picks(direct, q) for q in queries]
    with Memory(home, **ctor) as fresh:
        assert [_picks(fresh, q) for q in queries] == want_picks, ("fresh recall", step)
        assert _answers(fresh, queries) == want, ("fresh", step)
    assert _answers(kept, queries) == want, ("kept", step)
    assert [_picks(kept, q) for q in queries] == want_picks, ("kept recall", step)
    with Index(resolve_paths(home)) as index:
        assert index.check() == [], step


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often each incremental path ran (so a comparison is not two full builds)."""
    got = {"patch": 0, "restack": 0, "extend": 0}
    patch, restack, extend = (
        kept_mod.KeptState._patch,
        kept_mod.KeptState._restack,
        EpisodeBlock.extend,
    )

    def p(self: Any, *a: Any) -> Any:
        out = patch(self, *a)
        got["patch"] += out is not None
        return out

    def r(self: Any, *a: Any) -> Any:
        out = restack(self, *a)
        got["restack"] += out is not None
        return out

    def e(self: Any, *a: Any) -> Any:
        got["extend"] += 1
        return extend(self, *a)

    monkeypatch.setattr(kept_mod.KeptState, "_patch", p)
    monkeypatch.setattr(kept_mod.KeptState, "_restack", r)
    monkeypatch.setattr(EpisodeBlock, "extend", e)
    return got


FACTS = [
    "- kettle tea is oolong",
    "- the deploy region is eu-west",
    "- editor is helix for rust",
    "- merge the csv log daily",
]


SESSIONS = ["kettle tea deploy", "deploy region csv", "rust cargo helix", "merge csv log"]


def _home(tmp_path: Path, facts: list[str] = FACTS, name: str = "home") -> Home:
    home = Home(tmp_path, facts, name)
    for i, text in enumerate(SESSIONS):
        home.add(f"2026-01-{i:02d}.jsonl", text)
    return home


def test_keyed_fact_handed_between_lines_and_merged_with_plain_twins(
    tmp_path: Path, taken: dict[str, int]
) -> None:
    facts = [
        "- editor = helix <!-- user 2025-01-02 key=editor -->",
        "- plain kettle note",
        "- helix editor",  # the keyed line's keyword set, unkeyed: one merged node
        "- region eu <!-- reflect 2025-01-01 until=2025-06-01 key=region -->",
        "- deploy csv <!-- reflect 2025-01-01 scope=work -->",
        "- rust cargo log",
        "- tea region deploy",
    ]
    home = _home(tmp_path, facts)
    mem = Memory(home.path)
    _agree(home.path, mem, "start")
    edits = [
        (0, "- editor vim plain"),  # the key leaves line 0 ...
        (1, "- editor = vim <!-- user 2025-01-03 key=editor -->"),  # ... and line 1 takes it
        (2, "- vim editor"),  # joins line 1's group (keyed representative's set)
        (2, "- helix editor"),  # and leaves it again
        (3, "- region us <!-- reflect 2025-01-01 until=2025-05-01 key=region -->"),  # expired
        (4, "- deploy csv merged <!-- reflect 2025-01-01 scope=work -->"),  # out of scope
        (5, "- tea region deploy"),  # a duplicate of line 6: line 6 stays representative
        (6, "- deploy tea region"),  # same set, other text: both texts kept
        (5, "- rust cargo log"),
        (1, "- editor = vim <!-- user 2025-01-04 key=editor -->"),  # same key, new tag date
    ]
    for step, (i, text) in enumerate(edits):
        facts[i] = text
        home.write(facts)
        _agree(home.path, mem, (step, text))
    assert taken["patch"] >= 6
    assert mem.get("editor").value == "vim"
    assert mem.get("region").reason == "expired"
    mem.close()


@pytest.mark.parametrize("scopes", [("global",), ("global", "work"), ("work",)])
def test_random_edits_interleaved_with_new_sessions(
    tmp_path: Path, taken: dict[str, int], scopes: tuple[str, ...]
) -> None:
    rnd = random.Random(f"hostile-{scopes}")
    tags = [
        "",
        "",
        " <!-- user 2025-01-01 key=editor -->",
        " <!-- reflect 2025-01-01 key=region -->",
        " <!-- user 2025-01-01 until=2025-06-01 -->",
        " <!-- reflect 2025-01-01 scope=work -->",
        " <!-- user 2025-01-01 status=superseded key=editor -->",
        " <!-- import 2099-01-01 -->",
        " <!-- user 2025-01-01 scope=work key=editor -->",
    ]

    def line() -> str:
        words = " ".join(rnd.sample([*WORDS, "editor"], rnd.randint(1, 3)))
        value = f" = {rnd.choice(['vim', 'helix'])}" if rnd.random() < 0.3 else ""
        return f"- {words}{value}{rnd.choice(tags)}"

    facts = [line() for _ in range(10)]
    home = _home(tmp_path, facts)
    mem = Memory(home.path, scopes=scopes)
    n = 0
    for step in range(20):
        if rnd.random() < 0.6:
            for _ in range(rnd.choice([1, 2])):
                i, r = rnd.randrange(len(facts)), rnd.random()
                if r < 0.25:  # a copy of another line: joins its group
                    facts[i] = facts[rnd.randrange(len(facts))]
                elif r < 0.7:  # other words, same tag: the same standing (patched)
                    _text, mark, tag = facts[i].partition(" <!--")
                    facts[i] = line().split(" <!--")[0] + mark + tag
                else:
                    facts[i] = line()
            home.write(facts)
        else:
            home.add(f"2026-02-{n:03d}.jsonl", " ".join(rnd.sample(WORDS, rnd.randint(2, 3))))
            n += 1
        at = dt.date(2025, 3, 1) if step in (7, 15) else None
        with Memory(home.path, index=False, scopes=scopes) as direct:
            assert _answers(mem, at=at) == _answers(direct, at=at), step
    # with or without the global scope (episodes in the graph or not) edits are patched
    assert taken["patch"] + taken["restack"] >= 4
    assert taken["patch"] >= 3, taken
    mem.close()


def test_usage_counts_of_a_kept_memory_equal_one_shot_processes(tmp_path: Path) -> None:
    rnd = random.Random(11)
    tags = ["", " <!-- reflect 2025-01-01 -->", " <!-- reflect 2025-01-01 key=editor -->"]
    tags += [
        " <!-- reflect 2025-01-01 until=2025-06-01 -->",
        " <!-- reflect 2025-01-01 scope=w -->",
    ]

    def line() -> str:
        return "- " + " ".join(rnd.sample(WORDS, rnd.randint(1, 3))) + rnd.choice(tags)

    facts = [line() for _ in range(10)]
    homes = [_home(tmp_path, facts, name) for name in ("kept", "oneshot", "direct")]
    scopes = ("global", "w")
    kept = Memory(homes[0].path, scopes=scopes)
    for step in range(14):
        if rnd.random() < 0.6:
            i = rnd.randrange(len(facts))
            facts[i] = facts[rnd.randrange(len(facts))] if rnd.random() < 0.3 else line()
            for h in homes:
                h.write(facts)
        else:
            text = " ".join(rnd.sample(WORDS, 3))
            for h in homes:
                h.add(f"2026-03-{step:03d}.jsonl", text)
        q = " ".join(rnd.sample(WORDS, 2))
        got = [(r.key, r.score, r.body) for r in kept.recall(q).picked]
        with Memory(homes[1].path, scopes=scopes) as one:
            assert got == [(r.key, r.score, r.body) for r in one.recall(q).picked], step
        with Memory(homes[2].path, scopes=scopes, index=False) as direct:
            assert got == [(r.key, r.score, r.body) for r in direct.recall(q).picked], step
    with (
        Memory(homes[1].path, scopes=scopes) as one,
        Memory(homes[2].path, scopes=scopes, index=False) as direct,
    ):
        assert kept.usage() == one.usage() == direct.usage()
        assert kept.usage()

        def dead(m: Memory) -> list[tuple[Any, ...]]:
            return [(s.text, s.line, s.scope, s.seen, s.hits) for s in m.dead(min_seen=1)]

        assert dead(kept) == dead(direct)
    kept.close()


def test_sessions_before_between_after_duplicates_pending_and_deleted(
    tmp_path: Path, taken: dict[str, int]
) -> None:
    home = _home(tmp_path)
    mem = Memory(home.path)
    _agree(home.path, mem, "start")
    steps: list[tuple[str, Any]] = [
        ("append", lambda: home.add("2026-02-00.jsonl", "kettle tea oolong brew")),
        ("between", lambda: home.add("2026-01-01b.jsonl", "deploy cargo region")),
        ("before all", lambda: home.add("2025-12-31.jsonl", "kettle region tea")),
        ("same text appended", lambda: home.add("2026-03-00.jsonl", "deploy region csv")),
        ("same set, other text", lambda: home.add("2026-03-01.jsonl", "csv region deploy")),
        ("empty (pending)", lambda: home.add("2026-03-02.jsonl", raw=b"")),
        ("after a pending one", lambda: home.add("2026-03-03.jsonl", "helix log rust")),
        ("pending filled, before last", lambda: home.add("2026-03-02.jsonl", "kettle helix")),
        ("assistant only (pending)", lambda: home.add("2026-03-09.jsonl", raw=b'{"role": "a"}\n')),
        ("pending filled, last", lambda: home.add("2026-03-09.jsonl", "deploy helix tea")),
        ("not json", lambda: home.add("2026-03-10.jsonl", raw=b"{not json\n")),
        ("delete last", lambda: home.remove("2026-03-09.jsonl")),
        ("delete pending", lambda: home.remove("2026-03-10.jsonl")),
        ("append after deletes", lambda: home.add("2026-04-00.jsonl", "merge csv log")),
        ("delete middle", lambda: home.remove("2026-01-01.jsonl")),
        ("append again", lambda: home.add("2026-04-01.jsonl", "region tea cargo")),
    ]
    for name, act in steps:
        act()
        _agree(home.path, mem, name)
    assert taken["extend"] >= 4 and taken["restack"] >= 4
    texts = [r.text for r in mem.explain("csv region deploy", k=30)]
    assert "csv region deploy\n  · deploy region csv" in texts  # merged, both texts kept
    mem.close()


def test_all_sessions_gone_then_new_ones_extend_an_empty_block(
    tmp_path: Path, taken: dict[str, int]
) -> None:
    home = Home(tmp_path, FACTS)
    home.add("a.jsonl", "kettle tea deploy")
    mem = Memory(home.path)
    _agree(home.path, mem, "start")
    home.remove("a.jsonl")
    _agree(home.path, mem, "none left")
    home.add("b.jsonl", "kettle tea deploy region")
    _agree(home.path, mem, "one on an empty block")
    home.add("c.jsonl", "helix rust editor")
    home.add("d.jsonl", "helix rust editor")
    _agree(home.path, mem, "two more, merged")
    shutil.rmtree(home.sessions)
    _agree(home.path, mem, "folder gone")
    home.sessions.mkdir()
    home.add("e.jsonl", "deploy csv region")
    _agree(home.path, mem, "folder back")
    assert taken["extend"] >= 1
    mem.close()


def test_more_sessions_at_once_than_store_after(
    tmp_path: Path, taken: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_mod.blocks, "STORE_AFTER", 3)
    home = _home(tmp_path)
    kept = Memory(home.path)
    _agree(home.path, kept, "start")
    rnd = random.Random(5)
    for batch, count in enumerate([1, 2, 3, 7, 1, 12]):
        for j in range(count):
            home.add(f"2026-05-{batch:02d}-{j:02d}.jsonl", " ".join(rnd.sample(WORDS, 2)))
        _agree(home.path, kept, (batch, count))
    assert taken["extend"] >= 6
    kept.close()


def test_two_kept_memories_take_turns_with_fresh_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, taken: dict[str, int]
) -> None:
    monkeypatch.setattr(index_mod.blocks, "STORE_AFTER", 2)
    rnd = random.Random(3)
    home = _home(tmp_path)
    mems = [Memory(home.path), Memory(home.path)]
    n = 0
    for step in range(16):
        op = rnd.random()
        if op < 0.55:
            for _ in range(rnd.choice([1, 1, 3])):
                home.add(f"s{n:04d}.jsonl", " ".join(rnd.sample(WORDS, rnd.randint(2, 3))))
                n += 1
        elif op < 0.7:  # a name sorting before the newest
            home.add(f"s{rnd.randrange(n + 1):04d}b{n}.jsonl", " ".join(rnd.sample(WORDS, 2)))
            n += 1
        elif op < 0.8:
            home.add(f"s{n:04d}.jsonl", raw=b"")
            n += 1
        else:
            files = sorted(home.sessions.iterdir())
            f = rnd.choice(files)
            if f.stat().st_size == 0:
                home.add(f.name, " ".join(rnd.sample(WORDS, 3)))
            else:
                home.remove(f.name)
        _agree(home.path, mems[step % 2], step, QUERIES[:4])
    assert taken["extend"] >= 3
    for m in mems:
        m.close()


def test_unicode_names_and_malformed_session_files(tmp_path: Path) -> None:
    home = _home(tmp_path)
    mem = Memory(home.path)
    _agree(home.path, mem, "start")
    cases: list[tuple[str, str | None, bytes | None]] = [
        ("日本語-会话.jsonl", "部署 区域 kettle", None),
        ("😀.jsonl", "emoji deploy region", None),
        ("\uff21.jsonl", "fullwidth deploy kettle", None),
        ("zz-nul.jsonl", "deploy\u0000region kettle", None),
        ("zz-sur.jsonl", None, b'{"role":"user","content":"deploy \\ud800 region csv"}\n'),
        ("zz-bom.jsonl", None, b'\xef\xbb\xbf{"role":"user","content":"bom kettle"}\n'),
        ("zz-bytes.jsonl", None, b'{"role":"user","content":"bad \xff\xfe kettle region"}\n'),
        ("zz-deep.jsonl", None, b"[" * 100_000 + b"\n"),
        ("zz-list.jsonl", None, b'{"role":"user","content":["kettle"]}\n'),
        ("zz-seps.jsonl", None, b'{"role":"user","content":"a\\u2028kettle\\u0085deploy"}\n'),
        ("zz-secret.jsonl", "kettle deploy api_key=sk-abcdefghijklmnopqrstuvwxyz0123", None),
        ("zz-stop.jsonl", "的 了 the a", None),
    ]
    for name, text, raw in cases:
        home.add(name, text, raw)
        _agree(home.path, mem, name)
    mem.close()


def test_sessions_dir_switched_in_talos_toml_between_processes(tmp_path: Path) -> None:
    home = _home(tmp_path)
    a, b = home.path / "sa", home.path / "sb"
    a.mkdir()
    b.mkdir()
    for d, texts in ((a, ["kettle tea deploy", "rust cargo helix"]), (b, ["helix vim", "csv log"])):
        for i, text in enumerate(texts):
            (d / f"{i}.jsonl").write_text(_session(text))
    (b / "9.jsonl").write_text(_session("deploy region csv"))
    for step, d in enumerate([a, b, a, b]):
        (home.path / "talos.toml").write_text(f'sessions_dir = "{d.name}"\n')
        if step == 2:  # a new session in a while b was indexed
            (a / "5.jsonl").write_text(_session("kettle helix region"))
        with Memory(home.path) as mem:
            _agree(home.path, mem, (step, d.name))


def test_recursive_sessions_tree(tmp_path: Path, taken: dict[str, int]) -> None:
    home = Home(tmp_path, FACTS)
    (home.path / "talos.toml").write_text('sessions_dir = "tree/**"\n')
    tree = home.path / "tree"

    def put(rel: str, text: str) -> None:
        p = tree / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(_session(text))

    put("2026/01/a.jsonl", "kettle tea deploy")
    put("2026/01/b.jsonl", "rust helix cargo")
    mem = Memory(home.path)
    _agree(home.path, mem, "start")
    put("2026/02/a.jsonl", "deploy csv region")
    _agree(home.path, mem, "new subfolder")
    put("2026/01/a0.jsonl", "kettle helix")
    _agree(home.path, mem, "between")
    put("2026/01/a.jsonl", "editor vim helix")  # rewritten: recursive mode always sweeps
    _agree(home.path, mem, "rewritten")
    shutil.rmtree(tree / "2026" / "01")
    _agree(home.path, mem, "subfolder removed")
    put("2026/03/x.jsonl", "deploy csv region")
    _agree(home.path, mem, "duplicate appended")
    mem.close()


ADDER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from talos import Memory

    home = Path(sys.argv[1])
    sessions = home / ".talos" / "sessions"
    texts = ["kettle helix log", "deploy cargo", "tea csv region", "kettle helix log"]
    for i, text in enumerate(texts):
        line = json.dumps({"role": "user", "content": text}) + "\\n"
        (sessions / f"2026-06-{i:02d}.jsonl").write_text(line)
        with Memory(home) as mem:
            mem.recall("kettle deploy")
    (sessions / "2026-01-01a.jsonl").write_text(json.dumps({"role": "user", "content": "rust"}))
    with Memory(home) as mem:
        mem.recall("rust")
    """
)


def test_another_process_adds_sessions_and_stores_blocks(tmp_path: Path) -> None:
    home = _home(tmp_path)
    kept = Memory(home.path)
    _agree(home.path, kept, "start")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    subprocess.run([sys.executable, "-c", ADDER, str(home.path)], check=True, env=env)
    home._tick(home.sessions)  # a distinct folder mtime for this process, whatever the clock
    _agree(home.path, kept, "after the other process")
    home.add("2026-07-00.jsonl", "kettle deploy region")
    _agree(home.path, kept, "and one more here")
    kept.close()


def test_index_rebuilt_by_another_process_under_a_kept_memory(tmp_path: Path) -> None:
    home = _home(tmp_path)
    mem = Memory(home.path)
    _agree(home.path, mem, "start")
    with Index(resolve_paths(home.path)) as other:
        other.rebuild()
    _agree(home.path, mem, "rebuilt")
    home.add("2026-02-00.jsonl", "kettle helix region")
    _agree(home.path, mem, "append after rebuild")
    home.add("2026-01-01b.jsonl", "kettle csv merge")
    _agree(home.path, mem, "between after rebuild")
    with Index(resolve_paths(home.path)) as other:
        other.rebuild()
    home.write([*FACTS[:3], "- merge the csv log weekly"])
    _agree(home.path, mem, "edit after a second rebuild")
    mem.close()


def test_kept_memory_after_talos_index_picked_up_a_rewritten_session(tmp_path: Path) -> None:
    """A session rewritten in place is picked up by `talos index` (a sweep) only; a kept
    Memory whose own file signatures are unchanged must still see it (this file found it
    serving the old episode; fixed in 38cfa90: the quick refresh checks the change tokens)."""
    home = _home(tmp_path)
    mem = Memory(home.path)
    _agree(home.path, mem, "start")
    p = home.sessions / "2026-01-02.jsonl"
    before = home.sessions.stat()
    p.write_text(_session("completely different words here"))  # in place: folder unchanged
    assert home.sessions.stat().st_mtime_ns == before.st_mtime_ns
    result = click.testing.CliRunner().invoke(
        typer.main.get_command(app), ["index", "--home", str(home.path)]
    )
    assert result.exit_code == 0, result.output
    with Memory(home.path) as fresh, Memory(home.path, index=False) as direct:
        want = _answers(direct)
        assert _answers(fresh) == want  # the sweep fixed the index for new processes
    assert _answers(mem) == want


def test_session_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    home = _home(tmp_path)
    mem = Memory(home.path)
    _agree(home.path, mem, "start")
    name = os.fsdecode(b"2026-02-\xff\xfe.jsonl")
    try:
        home.add(name, "bad name kettle region")
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    # Skipped on every route, with a warning naming it (the index stores names as text; it
    # crashed every indexed recall before), and the file is left as it is.
    with Memory(home.path, index=False) as direct:
        assert all(r.text != "bad name kettle region" for r in direct.explain("kettle", k=30))
    _agree(home.path, mem, "name not UTF-8")
    assert (home.sessions / name).exists()


def test_session_renamed_into_place_with_the_folder_mtime_unchanged(tmp_path: Path) -> None:
    home = _home(tmp_path)
    temp = home.sessions / "x2026-02-0.jsonx"  # same name length: same folder size everywhere
    temp.write_text(_session("helix editor rust vim"))
    home._tick(home.sessions)
    mem = Memory(home.path)
    _agree(home.path, mem, "temp file present")
    before = home.sessions.stat()
    os.rename(temp, home.sessions / "2026-02-00.jsonl")
    os.utime(home.sessions, ns=(before.st_atime_ns, before.st_mtime_ns))
    if home.sessions.stat().st_size != before.st_size:
        pytest.skip("this file system changes a folder's size on a rename")
    _agree(home.path, mem, "renamed in the same tick")


def test_sessions_folder_swapped_for_one_with_the_same_names(tmp_path: Path) -> None:
    home = Home(tmp_path, FACTS)
    a, b = home.path / "sa", home.path / "sb"
    for d, texts in ((a, ["kettle tea deploy", "rust cargo"]), (b, ["helix vim", "csv log"])):
        d.mkdir()
        for i, text in enumerate(texts):
            (d / f"{i}.jsonl").write_text(_session(text))
    shutil.rmtree(home.sessions)
    home.sessions.symlink_to(a)
    mem = Memory(home.path)
    _agree(home.path, mem, "a")
    home.sessions.unlink()
    home.sessions.symlink_to(b)
    _agree(home.path, mem, "b")
