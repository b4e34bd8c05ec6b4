"""The reference fusion of the archived dense-leg lab (tag ``labs-2026-12``), nothing else.

The lab that chose the dense leg's runtime, model and RRF constants is archived
(``docs/benchmarks.md``, "Dense leg"; ``git checkout labs-2026-12 -- bench/`` brings it back).
These two functions are the order its (k, w) sweep was computed with, kept because
``tests/test_dense.py`` checks :func:`talos.dense.fuse` against them. No benchmark imports
this module; it goes once that test holds its own reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["ranks_of", "rrf"]


def ranks_of(order: Sequence[int], n: int) -> np.ndarray:
    """1-based rank of each of ``n`` nodes in ``order``; ``inf`` for a node it leaves out."""
    r = np.full(n, np.inf)
    r[np.asarray(order, dtype=np.intp)] = np.arange(1, len(order) + 1)
    return r


def rrf(
    lex_ranks: np.ndarray, dense_ranks: np.ndarray, k: float, w_dense: float = 1.0
) -> np.ndarray:
    """Reciprocal-rank fusion: nodes by ``1/(k + lexical rank) + w_dense/(k + dense rank)``,
    best first; a leg that does not rank a node adds 0 for it; ties keep node order. Nodes
    that neither leg ranks are left out."""
    score = 1.0 / (k + lex_ranks) + w_dense / (k + dense_ranks)
    keep = np.flatnonzero(np.isfinite(lex_ranks) | np.isfinite(dense_ranks))
    return keep[np.lexsort((keep, -score[keep]))]
