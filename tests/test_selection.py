"""What a recall leaves out, as ``why_not`` reports it (SPEC §6.2; talos/selection.py).

The rows beyond ``k`` carry their rank in the full ranking, and active nodes at or under the
model's threshold are reported as ``below-threshold`` with their rounded score. Before issue 14
moved it to ``selection.left_out``, no test pinned the rank a ``beyond-k`` row reports.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from talos import Memory

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
