"""The parts of a long session, and the one a recall shows (design §3.3: an episode worth
reading).

A session that did several things ("fix the lint errors", then "add retries to the stripe
webhook", then "update the changelog") is one episode, but its row used to pair its first task
with its last answer, whatever the ask matched. Each *part* is a request that names a task
(:func:`talos.sources.tasks.names_a_task`, not a slash command nor the canned text after one)
with the assistant's last answer before the next such request. An episode keeps its parts when
it has two or more (:data:`MAX_PARTS` at most: the first half and the last half of a longer
session), each task cut to :data:`~talos.sources.sessions.EPISODE_CHARS` characters and each
outcome to :data:`~talos.sources.sessions.OUTCOME_CHARS` and one more (the block marks the
cut). The episode matches on every part (:func:`matching_extra`), and a recall shows the part
that shares the most analyzer terms with the ask (:func:`shown_part`); a tie, or no shared
term, keeps the session's own task and outcome.

Parts are stored as one string (the index's column, the episode block's array): the parts
joined by :data:`_PART`, each its task and outcome joined by :data:`_FIELD` — separators no
transcript text holds (they are replaced in the text).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from talos.model import Node

__all__ = ["MAX_PARTS", "decode", "encode", "matching_extra", "shown_graph", "shown_part"]

#: Most parts an episode keeps: a session of 40 requests keeps its first 4 and its last 4.
MAX_PARTS = 8
#: Characters of each part's outcome that are matched (the head, as the block shows it).
MATCH_OUTCOME = 120

_PART = "\x1e"
_FIELD = "\x1f"


def _clean(text: str) -> str:
    return text.replace(_PART, " ").replace(_FIELD, " ")


def encode(parts: Sequence[tuple[str, str]]) -> str:
    """The stored form of ``parts`` (``[(task, outcome), …]``); "" for fewer than two."""
    if len(parts) < 2:
        return ""
    if len(parts) > MAX_PARTS:
        half = MAX_PARTS // 2
        parts = [*parts[:half], *parts[len(parts) - (MAX_PARTS - half) :]]
    return _PART.join(_clean(t) + _FIELD + _clean(o) for t, o in parts)


def decode(stored: str) -> list[tuple[str, str]]:
    """:func:`encode`'s parts back (``[]`` for "" or a damaged value)."""
    if not stored:
        return []
    out = []
    for part in stored.split(_PART):
        task, sep, outcome = part.partition(_FIELD)
        if not sep:
            return []
        out.append((task, outcome))
    return out


def matching_extra(stored: str) -> str:
    """What an episode's parts add to its matching text: each part's task and the head of
    its outcome (:data:`MATCH_OUTCOME` characters), one part a line."""
    return "\n".join(f"{t} {o[:MATCH_OUTCOME]}" for t, o in decode(stored))


def shown_part(node: Node, query: str) -> Node:
    """``node`` as a recall of ``query`` shows it: an episode with parts gets the task and
    outcome of the part sharing the most analyzer terms with ``query`` (the first such part
    on a tie with the session's own; module docstring); any other node is returned as is."""
    parts = decode(node.parts) if node.kind == "episode" else []
    if not parts:
        return node
    from talos.ranking.analyzer import analyze  # the analyzer the evidence model matches with

    asked = set(analyze(query))
    if not asked:
        return node

    def shared(task: str, outcome: str) -> int:
        return len(asked & set(analyze(f"{task}\n{outcome}")))

    own = shared(node.task or node.text, node.outcome)
    best, score = -1, own
    for i, (task, outcome) in enumerate(parts):
        s = shared(task, outcome)
        if s > score:
            best, score = i, s
    if best < 0:
        return node
    task, outcome = parts[best]
    return dataclasses.replace(node, task="" if task == node.text else task, outcome=outcome)


class _Nodes(Sequence[Node]):
    """A graph's nodes with some shown otherwise (:func:`shown_graph`)."""

    def __init__(self, nodes: Sequence[Node], swaps: dict[int, Node]) -> None:
        self._nodes, self._swaps = nodes, swaps

    def __len__(self) -> int:
        return len(self._nodes)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, int) and i in self._swaps:
            return self._swaps[i]
        return self._nodes[i]


class _Shown:
    """A graph whose picked episodes show the part the ask matched; everything else is the
    graph's own (read only: the block is rendered from it, nothing is ranked on it)."""

    def __init__(self, graph: Any, swaps: dict[int, Node]) -> None:
        self._graph = graph
        self.nodes = _Nodes(graph.nodes, swaps)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)


def shown_graph(graph: Any, picks: Sequence[tuple[float, int, bool]], query: str) -> Any:
    """``graph`` as a recall of ``query`` renders its ``picks``: each picked episode with
    parts shows the part the ask matched (:func:`shown_part`); ``graph`` itself when none
    changes."""
    swaps: dict[int, Node] = {}
    for _score, i, _body in picks:
        n = graph.nodes[i]
        if n.kind == "episode" and n.parts:
            shown = shown_part(n, query)
            if shown is not n:
                swaps[i] = shown
    return _Shown(graph, swaps) if swaps else graph
