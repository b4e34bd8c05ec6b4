"""What a recall leaves out, as ``why_not`` reports it (design §6.2; talos/selection.py).

The rows beyond ``k`` carry their rank in the full ranking, and active nodes at or under the
model's threshold are reported as ``below-threshold`` with their rounded score. Before issue 14
moved it to ``selection.left_out``, no test pinned the rank a ``beyond-k`` row reports.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from helpers import home_of
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app

MEMORY = (
    "- tea is green\n- tea is hot and green\n- tea comes from china\n"
    "- the kettle boils water for tea\n- zebra stripes\n"
)


def _why_not(home: Path, query: str, k: int) -> list[tuple[str, str, float | None, str]]:
    with Memory(home, model="classic", lang="en") as mem:
        return [(w.reason, w.detail, w.score, w.node.text) for w in mem.why_not(query, k=k)]


def test_rows_beyond_k_report_their_rank_in_the_full_ranking(
    make_home: Callable[..., Path],
) -> None:
    home = make_home(memory=MEMORY)
    assert _why_not(home, "green tea", 2) == [
        ("beyond-k", "rank 3", 0.5, "tea comes from china"),
        ("beyond-k", "rank 4", 0.5, "the kettle boils water for tea"),
    ]
    # k = 0 delivers nothing: every ranked row is beyond k, from rank 1
    assert [d for _r, d, _s, _t in _why_not(home, "green tea", 0)] == [
        "rank 1",
        "rank 2",
        "rank 3",
        "rank 4",
    ]


def test_active_nodes_under_the_threshold_are_below_threshold(
    make_home: Callable[..., Path],
) -> None:
    # 23 query keywords: a node holding one of them seeds 1/23 < THRESH (0.05) and is not ranked
    home = make_home(memory=MEMORY)
    query = "green tea zebra " + " ".join(f"word{c}" for c in "abcdefghijklmnopqrst")
    assert _why_not(home, query, 1) == [
        ("beyond-k", "rank 2", 0.17, "tea is hot and green"),
        ("below-threshold", "", 0.04, "tea comes from china"),
        ("below-threshold", "", 0.04, "the kettle boils water for tea"),
        ("below-threshold", "", 0.04, "zebra stripes"),
    ]


# -- why_not uses the analyzer -----------------------------------------------------------------


def test_why_not_uses_the_analyzer(tmp_path: Path) -> None:
    """why_not matched excluded records by design §4 keywords: 'answers' and 'ａｎｓｗｅｒ' named
    nothing of an expired 'answer' fact."""
    home = home_of(
        tmp_path,
        "- Keep each answer short <!-- user 2026-01-01 until=2026-02-01 -->\n"
        "- The cat is called Miso\n",
    )
    mem = Memory(home, model="evidence")
    want = [("expired", "Keep each answer short")]
    assert [(w.reason, w.node.text) for w in mem.why_not("answer")] == want
    assert [(w.reason, w.node.text) for w in mem.why_not("answers")] == want
    assert [(w.reason, w.node.text) for w in mem.why_not("ａｎｓｗｅｒ")] == want


# -- why_not on hostile and degenerate queries -------------------------------------------------


runner = CliRunner()


def test_why_not_rows_never_print_a_control_character(make_home) -> None:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    facts = "".join(
        f"- the {w} cluster deploy region is {w}-west {i}\n" for i, w in enumerate(words)
    )
    evil = "- deploy region \x1b[2J\x1b[Hwiped out <!-- user 2025-01-01 -->\n"
    home = make_home(memory=facts + evil)
    res = runner.invoke(
        app, ["explain", "--home", str(home), "deploy region", "--why-not", "--plain", "-k", "20"]
    )
    assert res.exit_code == 0, res.output
    assert "wiped out" in res.output
    assert "\x1b" not in res.output and "\r" not in res.output


def test_why_not_of_only_stop_words_says_so(make_home) -> None:
    home = make_home(memory="- the deploy region is eu-west\n- it is what it is\n")
    res = runner.invoke(app, ["explain", "--home", str(home), "the of and it is", "--why-not"])
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output


def test_a_huge_query_to_why_not_is_a_clear_error_or_answer(make_home) -> None:
    home = make_home(memory="- the deploy region is eu-west\n")
    q = "deploy " * 200_000
    res = runner.invoke(app, ["explain", "--home", str(home), q, "--why-not"])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
