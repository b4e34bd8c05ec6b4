"""Every ranking model is an entry of :data:`talos.ranking.activation.MODELS` (issue 15's note:
"evidence is a special case outside MODELS; it needs a Model interface"): a model says what it
ranks over (``Model.over``: the graph's keyword incidence or the kept term index) and
:class:`talos.Memory` asks the model, never its name."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from talos import Memory
from talos.ranking import activation as A
from talos.selection import relevance

KUBE = (
    "---\nname: kubernetes-rollout\ndescription: roll out a new release to the cluster with "
    "kubectl\n---\nApply the manifest, watch the rollout, roll back on failure.\n"
)
PG = (
    "---\nname: postgres-restore\ndescription: restore a postgres database from a nightly "
    "dump\n---\nStop the app, pg_restore the dump, check row counts.\n"
)
PG_ROW = "postgres-restore — restore a postgres database from a nightly dump"
FACTS = "- Deploy region is eu-west-1\n- The person prefers short answers\n"


@pytest.fixture
def home(make_home: Callable[..., Path]) -> Path:
    return make_home(
        memory=FACTS, skills={"kubernetes-rollout.md": KUBE, "postgres-restore.md": PG}
    )


def rows(mem: Memory, query: str) -> list[tuple[str, str, float, bool]]:
    return [(r.kind, r.text, r.score, r.body) for r in mem.recall(query).picked]


def test_the_registry_holds_every_model_with_what_it_ranks_over() -> None:
    assert list(A.MODELS) == ["classic", "evidence"]
    assert tuple(A.MODELS) == A.MODEL_NAMES
    assert {n: m.over for n, m in A.MODELS.items()} == {
        "classic": A.KEYWORDS,
        "evidence": A.TERMS,
    }
    ev = A.MODELS["evidence"]
    assert (ev.name, ev.activate, ev.thresh) == ("evidence", A.evidence, 0.0)
    assert (ev.body_lead, ev.body_floor) == (relevance.BODY_LEAD, relevance.BODY_FLOOR)


def test_memory_asks_the_model_not_its_name(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A term model registered under another name recalls what ``evidence`` recalls (through
    the relevance floor: an unrelated query gets nothing), and a keyword model under another
    name ranks what ``classic`` ranks (its delivery rules, k = 5 and no budget, are the
    reference's: named ``classic``)."""
    monkeypatch.setitem(
        A.MODELS, "terms-copy", dataclasses.replace(A.MODELS["evidence"], name="terms-copy")
    )
    monkeypatch.setitem(
        A.MODELS, "kw-copy", dataclasses.replace(A.MODELS["classic"], name="kw-copy")
    )
    query = "restore the postgres database"
    with Memory(home, model="evidence") as ev, Memory(home, model="terms-copy") as copy:
        want = rows(ev, query)
        assert (want[0][:2], want[0][3]) == (
            ("skill", PG_ROW),
            True,
        )  # the score is the tuned constants'
        assert rows(copy, query) == want
        assert rows(copy, "write a poem about spring") == []
        assert [r.cut for r in copy.explain(query)] == [r.cut for r in ev.explain(query)]
    with Memory(home, model="classic") as cl, Memory(home, model="kw-copy") as copy:
        for q in ("write a poem about spring", query):
            assert [tuple(r) for r in copy.explain(q)] == [tuple(r) for r in cl.explain(q)]
        assert rows(copy, query) == rows(cl, query)


def test_a_term_models_body_gate_reads_the_models_constants(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the skill's own seed (0.39) is under relevance.WHOLE: its evidence score decides
    query = "restore the postgres dump then deploy the region"
    with Memory(home, model="evidence") as mem:
        assert rows(mem, query)[0][:2] == ("skill", PG_ROW)
        assert rows(mem, query)[0][3] is True
    strict = dataclasses.replace(A.MODELS["evidence"], body_floor=50.0)
    monkeypatch.setitem(A.MODELS, "evidence", strict)
    with Memory(home, model="evidence") as mem:
        assert rows(mem, query)[0][3] is False


def test_an_unknown_model_names_every_registered_one(home: Path) -> None:
    with pytest.raises(ValueError) as err:
        Memory(home, model="bm25")
    assert str(err.value) == "unknown model 'bm25'; choose one of: classic, evidence"


@pytest.mark.parametrize("name", ["damped", "bipartite", "flow"])
def test_a_retired_model_is_refused_naming_the_models_there_are(home: Path, name: str) -> None:
    """The research models that led to ``evidence`` are no product option any more."""
    assert name in A.RETIRED and name not in A.MODELS and not hasattr(A, name)
    with pytest.raises(ValueError) as err:
        Memory(home, model=name)
    assert str(err.value) == (
        f"model '{name}' is retired (a research model); choose one of: classic, evidence"
    )
    (home / "talos.toml").write_text(f'model = "{name}"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="is retired"):
        Memory(home)
