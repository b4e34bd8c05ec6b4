"""The keyword graph (SPEC §5) and the stored arrays it is built from: the face of the package.

- :mod:`talos.graph.graph`: :class:`Graph`, :class:`LazyNeighbours` (the SPEC §5.2 edges),
  :func:`build_graph`, :data:`EDGE_MIN`;
- :mod:`talos.graph.incidence`: :class:`Incidence`, :class:`Vocabulary`, :class:`Segment`,
  who holds which keyword, as arrays;
- :mod:`talos.graph.merge`: merging duplicates (SPEC §5.1).

Nothing is defined here; code in ``talos`` imports the submodules, tests and benches may use
these names. The ranking models are :mod:`talos.activation`.
"""

from talos.graph.graph import EDGE_MIN, Graph, LazyNeighbours, build_graph
from talos.graph.incidence import Incidence, Segment, Vocabulary
from talos.graph.merge import merge_duplicates, merge_group, merge_groups, merge_members

__all__ = [
    "EDGE_MIN",
    "Graph",
    "Incidence",
    "LazyNeighbours",
    "Segment",
    "Vocabulary",
    "build_graph",
    "merge_duplicates",
    "merge_group",
    "merge_groups",
    "merge_members",
]
