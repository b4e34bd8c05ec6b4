"""The contiguity edges the bench measures (``talos.ranking.contiguity``) and the spreading over
them
(``talos.ranking.evidence.spread``): edges of a run, merged nodes, context breaks, conservation, the
answer turn after a matching question, the date rule, memory.md contexts.

These were the research lab's tests (its ``contiguity.py`` wrapper and lab are archived: tag
``labs-2026-12``, ``docs/benchmarks.md`` "Contiguity"); they now call the shipped modules
directly. Data-free: lines, contexts and a dialogue written for this test.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from talos.ranking import contiguity as C
from talos.ranking import evidence as E

STOP = {"a", "the", "at", "to", "and", "was", "did", "do", "what", "how", "your", "we", "i", "it"}


def words(text: str) -> list[str]:
    """A tiny analyzer: lower-case words minus a few stop words (no stemming)."""
    return [w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOP]


def edges(g: C.Links) -> dict[tuple[int, int], tuple[float, bool]]:
    """``{(sender, receiver): (share, ahead)}``."""
    return {
        (int(u), int(v)): (float(s), bool(f))
        for u, v, s, f in zip(g.src, g.dst, g.share, g.ahead, strict=True)
    }


# -- edges ------------------------------------------------------------------------------------


def test_links_of_a_run_window_two() -> None:
    # a line that is no node (-1) is skipped; node 4 is alone in its context
    g = C.links([0, 1, 2, -1, 3, 4], ["a"] * 5 + ["b"], 5, window=2, back=1.0, fall=0.5)
    third, sixth = 1 / 3, 1 / 6  # full window weight (1 + back)·(1 + fall) = 3
    assert edges(g) == {
        (0, 1): (third, True),
        (0, 2): (sixth, True),
        (1, 0): (third, False),
        (1, 2): (third, True),
        (1, 3): (sixth, True),
        (2, 0): (sixth, False),
        (2, 1): (third, False),
        (2, 3): (third, True),
        (3, 1): (sixth, False),
        (3, 2): (third, False),
    }
    assert g.out.tolist() == pytest.approx([0.5, 5 / 6, 5 / 6, 0.5, 0.0])  # ends keep the rest
    assert g.ptr.tolist() == [0, 2, 5, 8, 10, 10]
    assert g.neighbours(1) == [0, 2, 3] and g.neighbours(1, after=True) == [2, 3]
    assert g.neighbours(4) == []


def test_links_forward_only_and_context_breaks() -> None:
    fwd = C.links([0, 1, 2], ["a", "a", "a"], 3, window=1, back=0.0)
    assert edges(fwd) == {(0, 1): (1.0, True), (1, 2): (1.0, True)}
    # a new context (heading or date) and a line in no context (None) end the run
    cut = C.links([0, 1, 2, 3, 4], ["a", "a", "b", None, "b"], 5, window=1)
    assert edges(cut) == {(0, 1): (0.5, True), (1, 0): (0.5, False)}


def test_merged_nodes_link_each_of_their_lines_once() -> None:
    """design §5.1: four identical lines are one node, and one line; a node merged from lines in
    two runs links to the neighbours of each, each counted once, never to itself."""
    one = C.links([0, 1, 2], ["a"] * 3, 3, window=2)
    four = C.links([0, 0, 0, 0, 1, 2], ["a"] * 6, 3, window=2)
    assert edges(four) == edges(one)
    assert four.out.tolist() == one.out.tolist()
    inner = C.links([0, 1, 1, 1, 2], ["a"] * 5, 3, window=2)  # repeats count as one line
    assert edges(inner) == edges(one)
    twice = C.links([0, 1, 0, 1], ["a", "a", "b", "b"], 2, window=1)  # one pair in two runs
    assert edges(twice) == {(0, 1): (0.5, True), (1, 0): (0.5, False)}  # counted once
    split = C.links([0, 1, 2, 3, 0, 4], ["a"] * 3 + ["b"] * 3, 5, window=1)
    got = edges(split)
    assert sorted(v for u, v in got if u == 0) == [1, 3, 4]
    assert got[(0, 1)][0] == got[(0, 4)][0] == pytest.approx(1 / 3)  # weight 3 > full 2
    assert split.out[0] == pytest.approx(1.0)
    assert (0, 0) not in got
    last = C.links([0, 1, 2, 3, 0, 4], ["a"] * 3 + ["b"] * 3, 5, window=1, positions="last")
    assert sorted(v for u, v in edges(last) if u == 0) == [3, 4]  # the representative's line
    assert (1, 0) not in edges(last)
    assert (0, 0) not in edges(C.links([0, 1, 0], ["a"] * 3, 2, window=2))  # no self edge
    assert edges(C.links([0, 1, 0], ["a"] * 3, 2, window=1)) == {
        (0, 1): (0.5, True),
        (1, 0): (0.5, True),  # 1 is followed by a line of 0: ahead both ways
    }


def test_links_refuse_bad_input() -> None:
    with pytest.raises(ValueError, match="node_of has 2 lines, context 1"):
        C.links([0, 1], ["a"], 2)
    with pytest.raises(ValueError, match="bad contiguity parameters"):
        C.links([0, 1], ["a", "a"], 2, window=0)
    with pytest.raises(ValueError, match="bad contiguity parameters"):
        C.links([0, 1], ["a", "a"], 2, positions="first")
    assert C.links([], [], 0).edges == 0


# -- spreading ----------------------------------------------------------------------------------


def small() -> tuple[E.TermIndex, C.Links]:
    texts = ["x y", "y z", "q", "z w", "w v", "u"]
    idx = E.TermIndex.of_texts(texts, [[t] for t in texts], str.split)
    return idx, C.links(idx.node_of, ["d1"] * 4 + ["d2"] * 2, idx.n, window=2)


def test_spreading_conserves_activation() -> None:
    idx, g = small()
    s, _z = E.seeds(idx, E.query_vector(idx, ["x"]), E.Params())
    got = E.spread(idx, s, 0.1, g, 0.5)
    assert got.sum() == pytest.approx(s.sum(), rel=1e-12)
    assert got[2] > 0  # "q" shares no term with anything: reached by contiguity only
    assert got[0] < s[0]
    assert got[5] == 0.0  # another context: not reached


def test_without_contiguity_it_is_evidence_float_for_float() -> None:
    idx, g = small()
    none = C.links(idx.node_of, [None] * idx.n, idx.n)
    for terms in (["x"], ["y", "z", "z"], ["w", "nope"]):
        q = E.query_vector(idx, terms)
        want = E.activate(idx, q)
        for graph, share in ((none, E.SHARE), (g, 0.0)):
            got = E.activate(idx, q, graph=graph, share=share)
            assert got.final.tolist() == want.final.tolist()
            assert got.seeds.tolist() == want.seeds.tolist() and got.z == want.z


# -- the measured failure: the answer turn after a matching question turn ------------------------

EARLIER = [  # an earlier session: Maria, and no picnic
    "Maria: I started a pottery class on Tuesdays.",
    "Maria: My brother visits next month.",
    "Maria: The bakery on the corner closed.",
    "Maria: I painted the kitchen yellow.",
    "Maria: Work has been busy lately.",
]
PICNIC = [
    "Ana: How was your weekend, Maria?",
    "Maria: We went to a picnic by the lake on Saturday.",
    "Ana: That sounds lovely! What did you do at the picnic?",
    "Maria: Mostly board games, and the kids flew kites all afternoon.",
    "Ana: Kites! I loved those as a kid.",
]
QUERY = "What did Maria do at the picnic?"


def dialogue() -> tuple[E.TermIndex, list[str], list[str]]:
    texts = EARLIER + PICNIC
    dates = ["2026-02-22"] * len(EARLIER) + ["2026-03-01"] * len(PICNIC)
    return E.TermIndex.of_texts(texts, [[t] for t in texts], words), texts, dates


def rank_of(ev: E.Evidence, node: int) -> int:
    order = np.argsort(-ev.final, kind="stable")
    return int(np.flatnonzero(order == node)[0]) + 1


def test_the_answer_after_the_question_is_reached_in_one_hop() -> None:
    """The measured failure (LoCoMo dev: 233 of 691 gold turns rank below 30, many of them the
    answer after a matching question): the answer holds only the speaker's name."""
    idx, texts, dates = dialogue()
    node = {t: idx.node_of[i] for i, t in enumerate(texts)}
    q = E.query_vector(idx, words(QUERY))
    ev = E.activate(idx, q)
    assert rank_of(ev, node[PICNIC[3]]) == 6  # the keyword graph: "maria" only, a tie
    g = C.links(idx.node_of, [((), d) for d in dates], idx.n)  # the shipped window
    con = E.activate(idx, q, graph=g)
    assert rank_of(con, node[PICNIC[3]]) == 4  # after the picnic lines and the opening turn
    assert all(rank_of(con, node[t]) > 4 for t in EARLIER)  # another day: not reached
    assert rank_of(con, node[PICNIC[0]]) == 3  # the opening turn, written before the evidence
    assert node[PICNIC[3]] in g.neighbours(node[PICNIC[2]], after=True)


def test_the_date_rule_keeps_days_apart() -> None:
    idx, texts, dates = dialogue()
    node = {t: idx.node_of[i] for i, t in enumerate(texts)}
    dated = C.links(idx.node_of, [((), d) for d in dates], idx.n)
    undated = C.links(idx.node_of, [((), "")] * len(dates), idx.n)
    assert node[PICNIC[0]] not in dated.neighbours(node[EARLIER[-1]])
    assert node[PICNIC[0]] in undated.neighbours(node[EARLIER[-1]])
    q = E.query_vector(idx, words(QUERY))
    assert (
        E.activate(idx, q, graph=undated).final[node[EARLIER[-1]]]
        > E.activate(idx, q, graph=dated).final[node[EARLIER[-1]]]
    )


# -- memory.md contexts ---------------------------------------------------------------------------


def test_memory_contexts_are_section_and_date() -> None:
    text = (
        "# Memory\n"
        "- untagged fact\n"
        "\n"
        "## Project: billing\n"
        "- deploy on fridays <!-- reflect 2026-01-02 -->\n"
        "- ask Bob first <!-- user 2026-01-02 scope=work -->\n"
        "### Notes\n"
        "- a deeper note\n"
        "## Home\n"
        "- water the plants\n"
        "#hashtag is not a heading but a line <!-- user 2026-01-03 -->\n"
    )
    assert C.memory_contexts(text) == {  # untagged lines are in no context
        5: (("Memory", "Project: billing"), "2026-01-02", 3),
        6: (("Memory", "Project: billing"), "2026-01-02", 3),
        11: (("Memory", "Home"), "2026-01-03", 5),
    }
