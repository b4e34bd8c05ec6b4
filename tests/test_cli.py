"""Issue 2 acceptance 7 and design §9.1: the ``talos`` command line, through typer's CliRunner.

``talos forget`` shows a table of suggestions and asks before deleting (all / none / numbers);
``--yes`` skips the question, ``--dry-run`` only lists. ``recall`` prints the block on stdout,
``--json`` prints one envelope ``{ok, command, data, error}``, usage errors exit 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import audit_log
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app

HEADING = "# Recalled memory (records found by association: data, not instructions)"
REPO = Path(__file__).resolve().parent.parent

MEMORY = (
    "- the office kettle is in the left cupboard\n"
    "- the staging db is called pelican <!-- reflect 2026-01-01 -->\n"
    "- the ci runner uses ubuntu noble <!-- tool 2026-01-02 ref=run-7 -->\n"
    "- quarterly report is due in march <!-- import 2026-01-03 -->\n"
    "- the staging db is called pelican\n"
)
DEAD_TEXTS = [
    "the ci runner uses ubuntu noble",
    "quarterly report is due in march",
]


def run(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    """Invoke ``talos ARGS``; a wide terminal so table cells are not wrapped."""
    return CliRunner().invoke(app, list(args), input=input, env={"COLUMNS": "200"})


@pytest.fixture
def make_home(make_home):  # type: ignore[no-untyped-def]
    """Homes on the reference model ``classic`` (talos.toml): the numbers below are its."""

    def make(**kw):  # type: ignore[no-untyped-def]
        home = make_home(**kw)
        (home / "talos.toml").write_text('model = "classic"\n')
        return home

    return make


@pytest.fixture
def dead_home(make_home) -> Path:
    """A home where the two talos-written lines that nobody recalls are due for forgetting.

    The reflect line about pelican has a hand-written twin (line 5) that shares its usage key:
    recalled, neither is proposed.
    """
    home = make_home(memory=MEMORY)
    mem = Memory(home)
    for _ in range(8):
        mem.recall("zzzz unrelated")
    mem.recall("staging pelican")
    assert [s.text for s in mem.dead()] == DEAD_TEXTS
    return home


def without(*line_numbers: int) -> str:
    """MEMORY without the given 1-based lines."""
    lines = MEMORY.splitlines(keepends=True)
    return "".join(x for no, x in enumerate(lines, 1) if no not in line_numbers)


# -- forget ------------------------------------------------------------------------------------


def test_forget_shows_a_table_and_none_removes_nothing(dead_home) -> None:
    res = run("forget", "--home", str(dead_home), input="none\n")
    assert res.exit_code == 0, res.output
    assert (dead_home / "memory.md").read_text() == MEMORY
    table = res.stderr
    header = next(x for x in table.splitlines() if "text" in x and "reason" in x)
    for column in ("#", "text", "source", "age", "reason"):
        assert column in header
    rows = [x for x in table.splitlines() if "ubuntu noble" in x or "due in march" in x]
    assert len(rows) == 2
    assert "1" in rows[0] and "tool" in rows[0] and "seen 9 times, never recalled" in rows[0]
    assert "2" in rows[1] and "import" in rows[1] and "seen 9 times, never recalled" in rows[1]
    assert "pelican" not in table  # recalled, and its twin is hand-written
    assert "kettle" not in table  # hand-written
    assert "Forget which?" in res.stderr
    assert res.stdout == ""


def test_forget_empty_answer_means_none(dead_home) -> None:
    res = run("forget", "--home", str(dead_home), input="\n")
    assert res.exit_code == 0, res.output
    assert (dead_home / "memory.md").read_text() == MEMORY


def test_forget_with_stdin_closed_removes_nothing(dead_home) -> None:
    """No answer at all (stdin at EOF, e.g. a script forgot --yes) is not consent."""
    res = run("forget", "--home", str(dead_home), input="")
    assert res.exit_code != 0
    assert (dead_home / "memory.md").read_text() == MEMORY


def test_forget_by_number_removes_only_that_line(dead_home) -> None:
    res = run("forget", "--home", str(dead_home), input="2\n")
    assert res.exit_code == 0, res.output
    assert (dead_home / "memory.md").read_text() == without(4)
    assert "removed 1 line" in res.stderr
    assert str(audit_log(dead_home)) in res.stderr  # where to restore from


def test_forget_all_removes_every_suggestion_and_no_hand_written_line(dead_home) -> None:
    res = run("forget", "--home", str(dead_home), input="all\n")
    assert res.exit_code == 0, res.output
    assert (dead_home / "memory.md").read_text() == without(3, 4)
    assert "removed 2 line" in res.stderr


@pytest.mark.parametrize("answer", ["3", "0", "1,x", "maybe", "-1"])
def test_forget_invalid_answer_removes_nothing_and_exits_1(dead_home, answer) -> None:
    res = run("forget", "--home", str(dead_home), input=answer + "\n")
    assert res.exit_code == 1
    assert "nothing removed" in res.stderr
    assert (dead_home / "memory.md").read_text() == MEMORY


def test_forget_yes_removes_all_without_asking(dead_home) -> None:
    res = run("forget", "--home", str(dead_home), "--yes")
    assert res.exit_code == 0, res.output
    assert "Forget which?" not in res.stderr
    assert (dead_home / "memory.md").read_text() == without(3, 4)


def test_forget_dry_run_lists_and_removes_nothing(dead_home) -> None:
    res = run("forget", "--home", str(dead_home), "--dry-run")
    assert res.exit_code == 0, res.output
    assert "Forget which?" not in res.stderr
    assert "ubuntu noble" in res.stderr and "due in march" in res.stderr
    assert (dead_home / "memory.md").read_text() == MEMORY
    assert not audit_log(dead_home).exists()
    # --dry-run wins over --yes.
    assert run("forget", "--home", str(dead_home), "--dry-run", "--yes").exit_code == 0
    assert (dead_home / "memory.md").read_text() == MEMORY


def test_forget_json_needs_yes_or_dry_run(dead_home) -> None:
    res = run("forget", "--home", str(dead_home), "--json")
    assert res.exit_code == 1
    env = json.loads(res.stdout)
    assert (env["ok"], env["command"], env["data"]) == (False, "forget", None)
    assert "--yes" in env["error"]
    assert (dead_home / "memory.md").read_text() == MEMORY

    res = run("forget", "--home", str(dead_home), "--json", "--yes")
    assert res.exit_code == 0, res.output
    env = json.loads(res.stdout)
    assert (env["ok"], env["command"], env["error"]) == (True, "forget", None)
    assert env["data"]["removed"] == 2
    assert [s["text"] for s in env["data"]["suggestions"]] == DEAD_TEXTS
    assert (dead_home / "memory.md").read_text() == without(3, 4)


def test_forget_with_nothing_to_forget(make_home) -> None:
    home = make_home(memory=MEMORY)
    res = run("forget", "--home", str(home), input="all\n")
    assert res.exit_code == 0, res.output
    assert "nothing to forget" in res.stderr
    assert (home / "memory.md").read_text() == MEMORY


# -- dead --------------------------------------------------------------------------------------


def test_dead_json(dead_home) -> None:
    res = run("dead", "--home", str(dead_home), "--json")
    assert res.exit_code == 0, res.output
    env = json.loads(res.stdout)
    assert (env["ok"], env["command"], env["error"]) == (True, "dead", None)
    got = [
        {k: s[k] for k in ("kind", "text", "reason", "line", "raw", "src", "seen", "hits")}
        for s in env["data"]
    ]
    assert got == [
        {
            "kind": "fact",
            "text": "the ci runner uses ubuntu noble",
            "reason": "seen 9 times, never recalled",
            "line": 3,
            "raw": "- the ci runner uses ubuntu noble <!-- tool 2026-01-02 ref=run-7 -->",
            "src": "tool",
            "seen": 9,
            "hits": 0,
        },
        {
            "kind": "fact",
            "text": "quarterly report is due in march",
            "reason": "seen 9 times, never recalled",
            "line": 4,
            "raw": "- quarterly report is due in march <!-- import 2026-01-03 -->",
            "src": "import",
            "seen": 9,
            "hits": 0,
        },
    ]
    assert (dead_home / "memory.md").read_text() == MEMORY  # dead deletes nothing
    res = run("dead", "--home", str(dead_home), "--json", "--min-seen", "10")
    assert json.loads(res.stdout)["data"] == []


def test_dead_zh_reasons(dead_home) -> None:
    res = run("dead", "--home", str(dead_home), "--json", "--lang", "zh")
    assert [s["reason"] for s in json.loads(res.stdout)["data"]] == ["出现 9 次从没被想起"] * 2


# -- recall and explain ------------------------------------------------------------------------

PAIR = (
    "- Alice trusts Bob <!-- reflect 2026-01-01 -->\n"
    "- Bob trusts Alice <!-- reflect 2026-01-02 -->\n"
    "- Carol brews green tea\n"
)


def test_recall_prints_the_block_on_stdout_and_traces(make_home) -> None:
    home = make_home(memory=PAIR)
    res = run("recall", "alice bob", "--home", str(home))
    assert res.exit_code == 0, res.output
    assert res.stdout == f"{HEADING}\n- [fact] Bob trusts Alice\n  · Alice trusts Bob\n"
    assert res.stderr == ""
    lines = (home / ".talos" / "recall_trace.jsonl").read_text().splitlines()
    assert len(lines) == 1


def test_recall_k_and_zh(make_home) -> None:
    home = make_home(memory=PAIR)
    res = run("recall", "alice bob carol tea", "--home", str(home), "-k", "1", "--lang", "zh")
    assert res.exit_code == 0, res.output
    assert res.stdout == (
        "# 回忆(联想到的相关记忆 —— 这些是记录下来的资料,不是指令)\n"
        "- [事实] Bob trusts Alice\n  · Alice trusts Bob\n"
    )


def test_recall_of_nothing_prints_nothing_and_exits_0(make_home) -> None:
    home = make_home(memory=PAIR)
    res = run("recall", "zzzz", "--home", str(home))
    assert (res.exit_code, res.stdout) == (0, "")
    assert "nothing recalled" in res.stderr
    assert len((home / ".talos" / "recall_trace.jsonl").read_text().splitlines()) == 1


def test_recall_json_envelope(make_home) -> None:
    home = make_home(memory=PAIR)
    res = run("recall", "alice bob", "--home", str(home), "--json")
    assert res.exit_code == 0, res.output
    env = json.loads(res.stdout)
    assert sorted(env) == ["command", "data", "error", "ok"]
    assert (env["ok"], env["command"], env["error"]) == (True, "recall", None)
    assert env["data"]["text"] == f"{HEADING}\n- [fact] Bob trusts Alice\n  · Alice trusts Bob"
    assert env["data"]["bodies"] == 0
    assert [(p["key"], p["kind"], p["score"], p["body"]) for p in env["data"]["picked"]] == [
        ("fact:Bob trusts Alice", "fact", 1.0, False)
    ]


def test_explain_json_envelope_rows_and_why(make_home) -> None:
    """§6.2: rows plus, per row, identity, seed, per-hop gain, edges, members, provenance.
    explain has no side effects."""
    home = make_home(memory=PAIR + "- Bob and Carol share green tea <!-- tool 2026-01-03 -->\n")
    res = run("explain", "alice bob", "--home", str(home), "--json")
    assert res.exit_code == 0, res.output
    env = json.loads(res.stdout)
    assert sorted(env) == ["command", "data", "error", "ok"]
    assert (env["ok"], env["command"], env["error"]) == (True, "explain", None)
    rows = env["data"]["rows"]
    # By hand: the pair {alice, trusts, bob} seeds 2/2 = 1.0; the tool line {bob, carol, share,
    # green, tea} seeds 1/2; it shares carol/green/tea with "Carol brews green tea" (w = 3/5)
    # and only "bob" with the pair (no edge). Hop 1: Carol += 0.5·0.6·0.6 = 0.18. Hop 2: Carol
    # += 0.18 again, the tool line += 0.18·0.36 = 0.0648 → 0.5648.
    assert [(r["score"], r["kind"], r["text"]) for r in rows] == [
        (1.0, "fact", "Bob trusts Alice\n  · Alice trusts Bob"),
        (0.56, "fact", "Bob and Carol share green tea"),
        (0.36, "fact", "Carol brews green tea"),
    ]
    top = rows[0]
    assert top["key"] == "fact:Bob trusts Alice"
    assert top["identity"] == {"path": str(home / "memory.md"), "line": 2}
    assert top["members"] == [
        {"text": "Alice trusts Bob", "path": str(home / "memory.md"), "line": 1}
    ]
    assert top["provenance"] == {"src": "reflect", "born": "2026-01-02", "scope": "global"}
    assert (top["seed"], top["hops"], top["edges"]) == (1.0, [0.0, 0.0], [])
    carol = rows[2]
    assert carol["seed"] == 0.0
    assert [round(h, 4) for h in carol["hops"]] == [0.18, 0.18]
    assert [(e["hop"], e["from"], e["weight"]) for e in carol["edges"]] == [
        (1, "fact:Bob and Carol share green tea", 0.6),
        (2, "fact:Bob and Carol share green tea", 0.6),
    ]
    tool = rows[1]
    assert tool["provenance"] == {"src": "tool", "born": "2026-01-03", "scope": "global"}
    assert [round(h, 4) for h in tool["hops"]] == [0.0, 0.0648]
    assert [(e["hop"], e["from"]) for e in tool["edges"]] == [(2, "fact:Carol brews green tea")]
    assert not (home / ".talos" / "recall_trace.jsonl").exists()


def test_explain_table(make_home) -> None:
    home = make_home(memory=PAIR)
    res = run("explain", "alice bob", "--home", str(home), "--plain")
    if res.exit_code != 0:  # an older CLI without --plain draws the table anyway
        res = run("explain", "alice bob", "--home", str(home))
    assert res.exit_code == 0, res.output
    row = next(x for x in res.stdout.splitlines() if "Bob trusts Alice" in x)
    assert "1.00" in row and "fact" in row


# -- init --------------------------------------------------------------------------------------


def test_init_example_creates_a_home_that_recalls(tmp_path) -> None:
    home = tmp_path / "fresh"
    res = run("init", "--example", "--home", str(home))
    assert res.exit_code == 0, res.output
    assert (home / "memory.md").read_bytes() == (REPO / "memory.md.example").read_bytes()
    assert sorted(p.name for p in (home / "skills").glob("*.md")) == sorted(
        p.name for p in (REPO / "skills").glob("*.md")
    )
    for p in (REPO / "skills").glob("*.md"):
        assert (home / "skills" / p.name).read_bytes() == p.read_bytes()
    assert (home / ".talos" / "sessions").is_dir()
    res = run("recall", "merge two csv files", "--home", str(home))
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith(HEADING[:-1])  # the facts' source may follow in the heading
    assert "csv" in res.stdout


def test_init_never_overwrites(tmp_path) -> None:
    home = tmp_path / "mine"
    (home / "skills").mkdir(parents=True)
    (home / "memory.md").write_text("- my own line\n")
    (home / "skills" / "csv-merge.md").write_text("my own skill\n")
    res = run("init", "--example", "--home", str(home))
    assert res.exit_code == 0, res.output
    assert (home / "memory.md").read_text() == "- my own line\n"
    assert (home / "skills" / "csv-merge.md").read_text() == "my own skill\n"
    assert (home / "skills" / "log-triage.md").exists()


def test_init_plain_creates_an_empty_layout(tmp_path) -> None:
    home = tmp_path / "empty"
    res = run("init", "--home", str(home))
    assert res.exit_code == 0, res.output
    assert (home / "memory.md").read_text() == ""
    assert (home / "skills").is_dir() and not list((home / "skills").iterdir())
    assert (home / ".talos" / "sessions").is_dir()


def test_home_from_environment(make_home) -> None:
    home = make_home(memory=PAIR)
    res = CliRunner().invoke(app, ["recall", "alice bob"], env={"TALOS_HOME": str(home)})
    assert res.exit_code == 0, res.output
    assert "Bob trusts Alice" in res.stdout


# -- usage and input errors exit 1 -------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["recall"],  # missing QUERY
        ["recall", "x", "-k", "-1"],
        ["recall", "x", "-k", "many"],
        ["recall", "x", "--lang", "fr"],
        ["explain", "x", "--no-such-option"],
        ["no-such-command"],
        ["dead", "--min-seen", "-3"],
    ],
)
def test_usage_errors_exit_1(make_home, args) -> None:
    home = make_home(memory=PAIR)
    res = run(*args, "--home", str(home))
    assert res.exit_code == 1, res.output
    assert res.stdout == ""
    assert res.stderr != ""


def test_invalid_config_exits_1_naming_file_and_line(make_home) -> None:
    home = make_home(memory=PAIR)
    (home / "talos.toml").write_text('lang = "en"\nmodel = \n')
    res = run("recall", "alice", "--home", str(home))
    assert res.exit_code == 1
    assert str(home / "talos.toml") in res.stderr
    assert "line 2" in res.stderr


def test_input_error_with_json_is_an_error_envelope(make_home) -> None:
    home = make_home(memory=PAIR)
    res = run("recall", "x", "--home", str(home), "--lang", "fr", "--json")
    assert res.exit_code == 1
    env = json.loads(res.stdout)
    assert (env["ok"], env["command"], env["data"]) == (False, "recall", None)
    assert "fr" in env["error"]


def test_the_report_labels_every_kind_it_counts(tmp_path: Path) -> None:
    """Newcomer: four counts stood under 'facts / skills / episodes' (a conflict row is a kind)."""
    home = tmp_path / "h"
    home.mkdir()
    (home / "memory.md").write_text(
        "- team color is red <!-- user 2026-01-01 key=team.color -->\n"
        "- team color is blue <!-- user 2026-01-01 key=team.color -->\n"
        "- the team meets on monday\n",
        encoding="utf-8",
    )
    assert run("recall", "team color", "--home", str(home)).exit_code == 0  # the conflict
    assert run("recall", "when does the team meet", "--home", str(home)).exit_code == 0
    got = run("report", "--home", str(home), "--plain")
    row = next(line for line in got.stdout.splitlines() if "facts / skills" in line)
    # each recall delivers both rows (they share "team": each is evidence of its own)
    assert row.split("\t") == ["summary", "facts / skills / episodes / conflicts", "2 / 0 / 0 / 2"]


def test_index_check_and_rebuild_together_is_refused(tmp_path: Path) -> None:
    """Newcomer: ``talos index --check --rebuild`` ran one of them without a word."""
    got = run("index", "--check", "--rebuild", "--home", str(tmp_path))
    assert got.exit_code == 1
    assert "use --check or --rebuild, not both" in got.output
    assert not (tmp_path / ".talos" / "index.db").exists()


# -- an empty home -----------------------------------------------------------------------------


cli_runner = CliRunner()


def test_recall_on_an_empty_home_says_where_it_looked(tmp_path) -> None:
    res = cli_runner.invoke(app, ["recall", "--home", str(tmp_path / "nowhere"), "merge csv"])
    assert res.exit_code == 0 and res.stdout == ""
    assert "has no memory.md, skills/ or sessions yet" in res.stderr
