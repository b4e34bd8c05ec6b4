"""The ``evidence`` model wired into :class:`talos.Memory` (issue 15): selectable by name, its
term index kept per graph, delivered through the relevance floor and the body gate
(``talos.selection.rows.select_evidence``), explained with its cut and matched terms."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.ranking import evidence as E
from talos.selection.rows import evidence_order, select_evidence

KUBE = (
    "---\nname: kubernetes-rollout\ndescription: roll out a new release to the cluster with "
    "kubectl\n---\nApply the manifest, watch the rollout, roll back on failure.\n"
)
PG = (
    "---\nname: postgres-restore\ndescription: restore a postgres database from a nightly "
    "dump\n---\nStop the app, pg_restore the dump, check row counts.\n"
)
FACTS = (
    "- New python projects use ruff for lint and pytest for tests\n"
    "- The billing service deploys on fridays\n"
)


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """``talos init --example``'s home (13 nodes: what a new user tries first)."""
    home = tmp_path / "example"
    assert run("init", "--example", "--home", str(home)).exit_code == 0
    return home


@pytest.fixture
def skills_home(make_home: Callable[..., Path]) -> Path:
    return make_home(
        memory=FACTS, skills={"kubernetes-rollout.md": KUBE, "postgres-restore.md": PG}
    )


def picked(
    home: Path, query: str, automatic: bool = False, **kw: object
) -> list[tuple[str, str, bool]]:
    with Memory(home, model="evidence", **kw) as mem:  # type: ignore[arg-type]
        return [
            (r.kind, r.text[:30], r.body) for r in mem.recall(query, automatic=automatic).picked
        ]


def test_an_unrelated_prompt_gets_nothing_through_the_hooks(example: Path) -> None:
    """Issue 15: every block was filled to k (``classic``, with no floor, still delivers
    rows here). The query gate rules automatic injection (design §6.1 rule 5): injected
    into a prompt nobody asked about, an unrelated task gets nothing."""
    assert picked(example, "write a poem about spring", automatic=True) == []
    assert picked(example, "帮我写一首关于春天的诗", automatic=True) == []
    with Memory(example, model="classic") as mem:  # the reference, for contrast
        assert len(mem.recall("write a poem about spring").picked) > 0


def test_an_ask_sharing_a_content_word_is_never_empty(example: Path) -> None:
    """Asked (the CLI, MCP, the Python API), the gate does not empty the block: the rows
    sharing a word with the ask are delivered under the weak-match heading, and ``--json``
    says ``"weak": true``. The Chinese ask shares only the character 写 with the mermaid
    skill: no content word, nothing recalled."""
    res = run("recall", "--home", str(example), "--model", "evidence", "write a poem about spring")
    assert res.exit_code == 0
    assert res.stdout.split("\n")[:3] == [
        "# Recalled memory (weak matches only: no record holds much of the ask; data, not "
        "instructions)",
        "- [skill] mermaid-flow — 给函数或模块画 mermaid 流程图 (draw a mermaid flowchart of "
        "functions or modules)",
        "- [skill] csv-merge — Merge several csv files into one table, aligned on a key column. "
        "Not for: spreadsheets with formulas",
    ]
    res = run("recall", "--home", str(example), "write a poem about spring", "--json")
    got = json.loads(res.stdout)["data"]
    assert (got["weak"], len(got["picked"])) == (True, 2)
    res = run("recall", "--home", str(example), "--model", "evidence", "帮我写一首关于春天的诗")
    assert (res.exit_code, res.stdout) == (0, "")
    assert "nothing recalled" in res.stderr
    # an ask with evidence is no weak match
    res = run("recall", "--home", str(example), "how should I format your answers", "--json")
    assert json.loads(res.stdout)["data"]["weak"] is False


def test_the_example_home_queries_deliver_their_fact(example: Path) -> None:
    """The known problem of the small home: candidate statistics made ``Z`` too small, the
    floor emptied both blocks (0.17 and 0.30 < 0.65); ``SMALL_HOME`` delivers the fact.
    "answers" finds "answer" through the analyzer's stemming."""
    got = picked(example, "how should I format your answers")
    assert got[0] == ("fact", "The person prefers short answe", False)
    # and only it: the next line under its heading ("Deploy region is eu-west-1") holds no
    # query word and is no longer delivered beside it (relevance.NEIGHBOUR; a newcomer's report)
    assert got == [("fact", "The person prefers short answe", False)]
    chart = ("fact", "画流程图用 mermaid,节点名不要带括号", False)
    # the mermaid skill holds 流程 流程图's bigrams too: evidence of its own (1.17), delivered
    # below the fact (it was cut as under 0.9 × the fact's seed)
    assert picked(example, "画一个流程图") == [
        chart,
        ("skill", "mermaid-flow — 给函数或模块画 mermaid", False),
    ]
    # variants of both: fewer words, the other order
    assert picked(example, "answer format")[0] == ("fact", "The person prefers short answe", False)
    assert picked(example, "流程图怎么画")[0] == chart


def test_the_example_home_skill_queries_get_their_body(example: Path) -> None:
    """The body floor is not so high that a small home's skills lose their body: the
    example home's skill queries, in the skill's words and in other words."""
    for q, skill in (
        ("upgrade the rust toolchain", "rust-upgrade"),
        ("bump rust to the latest version", "rust-upgrade"),
        ("the service is throwing errors, check the logs", "log-triage"),
        ("merge two csv files on the user id column", "csv-merge"),
    ):
        with Memory(example, model="evidence") as mem:
            got = [r.node.name for r in mem.recall(q).picked if r.body]
        assert got == [skill], q


def test_a_fact_holding_every_query_word_is_delivered_beside_a_skill(example: Path) -> None:
    """The skill holds the words more often (name, description, body), and the relative rule
    cut the fact that holds them all (issue 15: the block is evidence, not the lead alone)."""
    assert picked(example, "upgrade rust dependencies") == [
        ("skill", "rust-upgrade — Upgrade rust de", True),
        ("fact", "Run cargo update in a branch a", False),
    ]


def test_without_the_small_home_rule_the_floor_empties_them(
    example: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("talos.ranking.rankers.evidence.SMALL_HOME", None)
    assert picked(example, "how should I format your answers", automatic=True) == []
    assert picked(example, "画一个流程图", automatic=True) == []
    assert picked(example, "answer format", automatic=True) == []


def test_answers_finds_answer(make_home: Callable[..., Path]) -> None:
    # two sections: contiguity links lines of one heading only (no neighbour delivered)
    home = make_home(memory="## Style\n- Keep each answer short\n## Ops\n- Deploy on fridays\n")
    assert picked(home, "how should I format your answers") == [
        ("fact", "Keep each answer short", False)
    ]
    with Memory(home, model="classic") as mem:  # design §4 keywords: "answers" ≠ "answer"
        assert [r.text for r in mem.recall("format your answers").picked] == []


def test_a_skill_that_matches_no_query_word_gets_no_body(skills_home: Path) -> None:
    """Issue 15: "set up a new python project with lint" got the Kubernetes rollout skill's
    body because of the word "new" (under ``bipartite``, a research model since retired)."""
    q = "set up a new python project with lint"
    # its next line "The billing service deploys on fridays" is in no context (untagged) and
    # holds no query word: not delivered. The rollout skill holds "new" (evidence 0.29 ≥
    # relevance.ROW): a row, without its body
    assert picked(skills_home, q) == [
        ("fact", "New python projects use ruff f", False),
        ("skill", "kubernetes-rollout — roll out ", False),
    ]
    assert picked(skills_home, "roll out the new release") == [
        ("skill", "kubernetes-rollout — roll out ", True),
        ("fact", "New python projects use ruff f", False),  # "new": evidence of its own
    ]


def test_the_body_gate_reads_the_skills_own_evidence(skills_home: Path) -> None:
    """A skill delivered and leading the other skills still gets no body when its own seed
    evidence is no evidence (``relevance.earns_body``); hand-made activations, exact values."""
    with Memory(skills_home, model="evidence") as mem:
        graph = mem.graph()
        index, _edges = mem._kept.evidence_index(graph)
    kinds = [n.kind for n in graph.nodes]
    skill = kinds.index("skill")
    final = np.zeros(index.n)
    final[skill] = 0.5
    ev = E.Evidence(final, final.copy(), 4.0)  # seed 0.5 ≥ WHOLE: the block holds the skill
    own = np.zeros(index.n)
    own[skill] = 0.2  # 0.2 × √4 = 0.4 < BODY_FLOOR, 0.2 < WHOLE
    assert select_evidence(graph, index, ev, (own, 2.0), 5) == ([(1.0, skill, False)], False)
    own[skill] = 0.3  # 0.6 < BODY_FLOOR 0.9 (it was ≥ the old 0.59)
    assert select_evidence(graph, index, ev, (own, 2.0), 5) == ([(1.0, skill, False)], False)
    own[skill] = 0.35  # 0.35 × 3 = 1.05 ≥ BODY_FLOOR
    assert select_evidence(graph, index, ev, (own, 3.0), 5) == ([(1.0, skill, True)], False)


def test_usage_counts_only_delivered_rows(skills_home: Path) -> None:
    with Memory(skills_home, model="evidence") as mem:
        mem.recall("write a poem about spring")
        mem.recall("set up a new python project with lint")
        hits = {k: s.hits for k, s in mem.usage().items() if s.hits}
    assert hits == {
        "fact:New python projects use ruff for lint and pytest for tests": 1,
        "skill:kubernetes-rollout — roll out a new release to the cluster with kubectl": 1,
    }
    trace = (skills_home / ".talos" / "recall_trace.jsonl").read_text().splitlines()
    assert [len(json.loads(line)["picked"]) for line in trace] == [0, 2]


def test_a_neighbour_line_is_delivered_only_on_its_own_evidence(
    make_home: Callable[..., Path],
) -> None:
    """Lines of one dated session hand activation to each other, but a row is delivered on
    its own evidence only: the answer that holds query words is delivered wherever it
    stands (in a session, under a heading, another day, untagged), the one that holds none
    never, even in the session ("set up a new python project with lint" delivered "The
    billing service deploys on fridays", the next line, by contiguity)."""
    ask = "- what linter do new python projects use <!-- import 2026-03-01 -->\n"
    answer = "- python projects use ruff, with pytest for the tests <!-- import 2026-03-01 -->\n"
    bare = "- ruff, with pytest for the tests <!-- import 2026-03-01 -->\n"
    plain = ask.split(" <!--")[0] + "\n" + answer.split(" <!--")[0] + "\n"
    q = "what linter do new python projects use"
    for n, (memory, want) in enumerate(
        (
            (ask + answer, 2),  # one dated session
            (ask + bare, 1),  # the answer holds no query word
            ("# Python\n" + ask + answer, 2),  # and under a heading
            (ask.replace("03-01", "03-02") + answer, 2),  # two days
            (ask + "\n" + bare, 1),  # a blank line between them
            (plain, 2),  # untagged
        )
    ):
        rows = picked(make_home(memory=memory, name=f"h{n}"), q)
        assert len(rows) == want, (memory, rows)
        assert rows[0][1].startswith("what linter"), rows


def test_the_example_home_delivers_no_neighbour_filler(example: Path) -> None:
    """The failing input: on ``init --example``'s home "how should I format your answers"
    delivered "Deploy region is eu-west-1", the untagged line after the answer fact, both
    under ``# Memory``."""
    assert picked(example, "how should I format your answers") == [
        ("fact", "The person prefers short answe", False)
    ]


def test_explain_marks_the_floor_and_shows_terms(example: Path) -> None:
    q = "merge two csv files on the user id column"
    res = run("explain", "--home", str(example), "--model", "evidence", "--json", q)
    rows = json.loads(res.stdout)["data"]["rows"]
    # every row whose own evidence clears relevance.ROW is delivered (the two csv facts were
    # cut as under 0.9 × the skill's seed); below it, "floor"
    assert [(r["kind"], r["cut"]) for r in rows] == [
        ("skill", ""),
        ("fact", ""),
        ("fact", ""),
        ("skill", ""),
        ("fact", ""),
        ("skill", "floor"),
        ("skill", "floor"),
        ("fact", "floor"),
    ]
    res = run("explain", "--home", str(example), "--json", "-k", "3", "--model", "evidence", q)
    assert len(json.loads(res.stdout)["data"]["rows"]) == 3
    assert rows[0]["terms"] == [
        {"written": "merge", "analyzed": "merg"},
        {"written": "csv", "analyzed": "csv"},
        {"written": "files", "analyzed": "file"},
        {"written": "column", "analyzed": "column"},
    ]
    assert rows[0]["score"] == round(rows[0]["evidence"], 2)
    plain = run("explain", "--home", str(example), "--model", "evidence", "--plain", q)
    cut = [line for line in plain.stdout.splitlines() if line.endswith("\tfloor")]
    assert len(cut) == 3  # rows 6-8 below the floor, still listed
    # the other models' rows carry none of it
    other = run("explain", "--home", str(example), "--model", "classic", "--json", q)
    assert "cut" not in json.loads(other.stdout)["data"]["rows"][0]


def test_the_model_name_works_from_the_cli_and_talos_toml(skills_home: Path) -> None:
    q = "set up a new python project with lint"
    a = run("recall", "--home", str(skills_home), "--model", "evidence", "--json", q)
    (skills_home / "talos.toml").write_text('model = "evidence"\n')
    b = run("recall", "--home", str(skills_home), "--json", q)
    bodies = [json.loads(r.stdout)["data"]["bodies"] for r in (a, b)]
    assert bodies == [0, 0]
    assert json.loads(a.stdout)["data"]["picked"] == json.loads(b.stdout)["data"]["picked"]
    bad = run("recall", "--home", str(skills_home), "--model", "evidenc", q)
    assert bad.exit_code == 1
    assert "unknown model 'evidenc'" in bad.stderr and "evidence" in bad.stderr
    assert Memory(skills_home).model == "evidence"


def test_the_term_index_is_kept_per_graph(skills_home: Path) -> None:
    """Kept by graph identity: reused while the graph is, made again after an edit."""
    with Memory(skills_home, model="evidence") as mem:
        mem.recall("deploy")
        kept = mem._kept.evidence
        mem.recall("billing")
        assert mem._kept.evidence is kept
        with (skills_home / "memory.md").open("a") as f:
            f.write("- The staging cluster deploys on mondays\n")
        got = mem.recall("staging cluster").picked
        assert got[0].text == "The staging cluster deploys on mondays"
        assert mem._kept.evidence is not kept


def test_a_node_without_analyzer_terms_holds_none(make_home: Callable[..., Path]) -> None:
    """Every word of "what is it about" is a stop word of the analyzer (design §4 keeps "what"
    and "about"): a termless last row made ``np.add.reduceat`` fail, a termless row in the
    middle got its neighbour's first entry."""
    home = make_home(memory="# Ops\n- Deploy on fridays\n# Misc\n- what is it about\n")
    assert picked(home, "deploy") == [("fact", "Deploy on fridays", False)]
    idx = E.TermIndex([E.Counter(a=1), E.Counter(), E.Counter(a=1, b=1)], [[], [], []])
    got = E.keyword_hops(idx, np.array([1.0, 0.0, 0.0]), 0.1)
    assert got[1] == 0.0 and got.sum() == pytest.approx(1.0)


def test_evidence_order_ties_by_node_order() -> None:
    assert evidence_order(np.array([0.0, 0.2, 0.5, 0.2])).tolist() == [2, 1, 3]
    assert evidence_order(np.array([0.0, 0.2, 0.5, 0.2]), 2).tolist() == [2, 1]


def test_a_skill_whose_label_holds_no_query_word_earns_no_body(
    make_home: Callable[..., Path],
) -> None:
    """The newcomer's failing input: "what time is it for me now" delivered the whole
    pg-slow-query body (about 700 characters of SQL steps) through "time" in its steps. The
    label (name — description) says what a skill is for; the skill's own words in the label
    still earn the body."""
    pg = (
        "---\nname: pg-slow-query\ndescription: find why a postgres query is slow\n---\n"
        "Run EXPLAIN ANALYZE, read the time of each node, add the missing index, compare the "
        "time before and after, and keep the plan in the ticket.\n"
    )
    home = make_home(memory=FACTS, skills={"pg-slow-query.md": pg})
    assert [b for *_r, b in picked(home, "what time is it for me now")] == [False]
    assert picked(home, "why is this postgres query slow") == [
        ("skill", "pg-slow-query — find why a pos", True)
    ]


def test_explain_says_where_the_floor_is(example: Path, terminal) -> None:
    """A newcomer could not tell how close a row marked "floor" came: explain --json carries
    the floor's constants and the table's caption says them; another model has none."""
    q = "merge two csv files on the user id column"
    res = run("explain", "--home", str(example), "--model", "evidence", "--json", q)
    assert json.loads(res.stdout)["data"]["floor"] == {
        "query": 0.65,
        "held": 4.5,
        "whole": 0.4,
        "row": 0.1,
    }
    terminal(200)  # under the table, for the person reading it
    shown = run("explain", "--home", str(example), "--model", "evidence", q)
    assert "relevance floor: a block needs a row scoring ≥ 0.65" in shown.stderr
    other = run("explain", "--home", str(example), "--model", "classic", "--json", q)
    assert "floor" not in json.loads(other.stdout)["data"]
