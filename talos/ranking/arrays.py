"""Array helpers that keep numpy's optional machinery out of a recall.

numpy 2.x answers ``np.unique(a)`` (no ``return_*`` flag) by first asking ``np.ma.is_masked(a)``,
which imports :mod:`numpy.ma` (three modules, ~6 ms of a ``talos recall`` on a 3,000-session
home, ``python -X importtime``). :func:`unique` gives the same array without it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["unique"]


def unique(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``values`` (flattened), with its dtype: what
    ``np.unique(values)`` returns for an integer or boolean array (NaN is not merged: the
    callers hold node, term and episode positions).

    ``tests/test_import_cost.py`` checks that a recall does not import :mod:`numpy.ma`.
    """
    flat = np.sort(np.asarray(values).ravel())
    if len(flat) < 2:
        return flat
    first = np.empty(len(flat), dtype=bool)
    first[0] = True
    np.not_equal(flat[1:], flat[:-1], out=first[1:])
    return flat[first]
