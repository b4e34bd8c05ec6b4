"""The keyword graph (design §5) and the stored arrays it is built from: the face of the package.

- :mod:`talos.graph.graph`: :class:`Graph`, :class:`LazyNeighbours` (the design §5.2 edges),
  :func:`build_graph`, :data:`EDGE_MIN`;
- :mod:`talos.graph.incidence`: :class:`Incidence`, :class:`Vocabulary`, :class:`Segment`,
  who holds which keyword, as arrays;
- :mod:`talos.graph.merge`: merging duplicates (design §5.1);
- :mod:`talos.graph.episodes`: :class:`EpisodeBlock`, the episodes' run, merged once per
  version of the sessions, extended and trimmed;
- :mod:`talos.graph.records`: :class:`RecordsBlock`, :class:`LazyRecords`, :class:`Kinds`, one
  view's records, stored for a process that only recalls;
- :mod:`talos.graph.stored`: the stored layout both use (:data:`BLOCK_VERSION`,
  :class:`BlockError`, :func:`node_to_json`, :func:`node_from_json`);
- :class:`StackedNodes` (in :mod:`talos.graph.graph`): the records followed by the block's
  episodes, each built on first access.

Nothing is defined here; code in ``talos`` imports the submodules, tests and benches may use
these names. The ranking models are :mod:`talos.ranking.activation`.
"""

from talos.graph.episodes import EpisodeBlock
from talos.graph.graph import EDGE_MIN, Graph, LazyNeighbours, StackedNodes, build_graph
from talos.graph.incidence import Incidence, Segment, Vocabulary
from talos.graph.merge import merge_duplicates, merge_group, merge_groups, merge_members
from talos.graph.records import Kinds, LazyRecords, RecordsBlock
from talos.graph.stored import BLOCK_VERSION, BlockError, node_from_json, node_to_json

__all__ = [
    "BLOCK_VERSION",
    "EDGE_MIN",
    "BlockError",
    "EpisodeBlock",
    "Graph",
    "Incidence",
    "Kinds",
    "LazyNeighbours",
    "LazyRecords",
    "RecordsBlock",
    "Segment",
    "StackedNodes",
    "Vocabulary",
    "build_graph",
    "merge_duplicates",
    "merge_group",
    "merge_groups",
    "merge_members",
    "node_from_json",
    "node_to_json",
]
