"""Constrained spreading activation (design §5.4, :mod:`talos.ranking.constrained`): each of
its three limits, the wide term's share to what fired, and the exact hop when every limit is
off."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from talos.ranking import constrained as K
from talos.ranking import contiguity as C
from talos.ranking import evidence as E

D = 0.1
KEEP = 1 / (1 + D)


def _index(*rows: str) -> K.ArrayPostings:
    """Postings of nodes whose terms are the space-separated words of ``rows``."""
    return K.ArrayPostings(E.TermIndex([Counter(r.split()) for r in rows], [[] for _ in rows]))


def _hop(postings: K.ArrayPostings, a: dict[int, float], limits: K.Limits) -> dict[int, float]:
    return K.spread(postings, a, D, None, 0.0, 1, limits)


def test_every_limit_off_is_the_exact_hop() -> None:
    rng = random.Random(7)
    for _ in range(60):
        n = rng.randint(1, 30)
        vocab = [f"w{i}" for i in range(rng.randint(2, 20))]
        counts = [Counter(rng.choices(vocab, k=rng.randint(1, 6))) for _ in range(n)]
        idx = E.TermIndex(counts, [[] for _ in counts])
        s = np.array([rng.random() if rng.random() < 0.4 else 0.0 for _ in range(n)])
        lines = [rng.randrange(n) for _ in range(rng.randint(0, 2 * n))]
        links = C.links(lines, [((), "d")] * len(lines), n)
        exact = E.spread(idx, s, D, links)
        seeded = {int(i): float(s[i]) for i in np.flatnonzero(s)}
        got = K.spread(K.ArrayPostings(idx), seeded, D, K.edges_of(links), E.SHARE, 2, K.Limits())
        dense = np.zeros(n)
        dense[list(got)] = list(got.values())
        assert np.abs(dense - exact).max() <= 1e-12


def test_a_term_above_the_fan_out_reaches_no_new_node_but_gives_back_to_what_fired() -> None:
    ix = _index("q c", "c", "c")
    g = 1.0 * D * KEEP / 2  # node 0 hands this to each of its two terms
    wide = _hop(ix, {0: 1.0}, K.Limits(fanout=2))  # c is held by 3 nodes
    assert wide == pytest.approx({0: KEEP + g + g / 3})
    assert set(wide) == {0}
    within = _hop(ix, {0: 1.0}, K.Limits(fanout=3))
    assert within == pytest.approx({0: KEEP + g + g / 3, 1: g / 3, 2: g / 3})


def test_a_node_below_the_firing_threshold_keeps_what_it_has_and_reaches_no_one() -> None:
    ix = _index("p", "r", "r")
    quiet = _hop(ix, {0: 1.0, 1: 0.1}, K.Limits(fire=0.2))
    assert quiet == pytest.approx({0: KEEP + D * KEEP, 1: 0.1})
    fired = _hop(ix, {0: 1.0, 1: 0.1}, K.Limits(fire=0.1))
    each = 0.1 * D * KEEP / 2
    assert fired == pytest.approx({0: KEEP + D * KEEP, 1: 0.1 * KEEP + each, 2: each})


def test_every_active_node_exchanges_through_the_query_terms_fired_or_not() -> None:
    """Node 1 is below the threshold: it still hands its part to the query term ``q`` (whose
    holders the seeds were read from) and keeps the part of its other term; here that is the
    exact hop."""
    ix = _index("q a", "q b")
    q = 2  # vocab: a, b, q
    g0, g1 = 1.0 * D * KEEP / 2, 0.1 * D * KEEP / 2
    got = K.spread(ix, {0: 1.0, 1: 0.1}, D, None, 0.0, 1, K.Limits(fire=0.5), [q])
    assert got == pytest.approx({0: KEEP + g0 + (g0 + g1) / 2, 1: 0.1 * KEEP + g1 + (g0 + g1) / 2})
    assert got == pytest.approx(_hop(ix, {0: 1.0, 1: 0.1}, K.Limits()))
    alone = _hop(ix, {0: 1.0, 1: 0.1}, K.Limits(fire=0.5))  # q not named: node 1 keeps all
    assert alone[1] == pytest.approx(0.1 + g0 / 2)


def test_the_frontier_fires_the_most_active_first_ties_in_node_order() -> None:
    ix = _index("a", "b", "c", "a", "b", "c")
    a = {0: 0.5, 1: 0.5, 2: 0.4}
    one = _hop(ix, a, K.Limits(frontier=1))
    assert set(one) == {0, 1, 2, 3}  # only node 0 fired: its neighbour 3 is reached
    assert one[3] == pytest.approx(0.5 * D * KEEP / 2)
    two = _hop(ix, a, K.Limits(frontier=2))
    assert set(two) == {0, 1, 2, 3, 4}


def test_the_default_limits_are_the_documented_ones() -> None:
    assert K.Limits(fire=0.05, frontier=50, fanout=10) == K.LIMITS


def test_a_query_term_reaches_every_holder_whatever_its_fan_out() -> None:
    """The query terms' holders were read for the seeds: the fan-out limit does not cut them."""
    ix = _index("q x", "q", "q")
    g = 1.0 * D * KEEP / 2
    got = K.spread(ix, {0: 1.0}, D, None, 0.0, 1, K.Limits(fanout=1), [0])  # vocab: q, x
    assert got == pytest.approx({0: KEEP + g + g / 3, 1: g / 3, 2: g / 3})
