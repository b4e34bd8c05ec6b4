"""The shapes every module shares: a memory node and its provenance (design §3, §7.1)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, TypedDict

from talos.safety.secrets import mask_known_secrets

__all__ = [
    "KINDS",
    "EpisodeFields",
    "Node",
    "episode_fields",
    "line_id",
    "node_identity",
    "node_key",
    "node_provenance",
]

#: Kinds of memory, in load order (design §3): facts, then skills, then episodes.
KINDS = ("fact", "skill", "episode")


@dataclass(slots=True, eq=False)
class Node:
    """One memory as recall sees it (design §3).

    Attributes:
        kind: ``"fact"``, ``"skill"`` or ``"episode"``.
        text: what is shown: the fact line, the skill label (``name — description``), or the
            first 80 characters of the episode's opening request.
        keywords: the matching keyword set (design §4 over the not-for-stripped matching text).
        order: position in load order (facts, skills, episodes); breaks every tie.
        path: the file the node comes from (memory.md, the skill file, the session file).
        line: 1-based line number in ``path`` (facts only; 0 otherwise).
        raw: the exact line as written (facts), for identity and for forget.
        body: the first 1200 characters of a skill file, and the 1201st when there is one
            (skills only; the block delivers 1200 and marks the cut).
        name: a skill's file base name without ``.md`` (skills only).
        src: provenance source (``user`` when a fact has no tag, design §3.1).
        born: the tag's date ``YYYY-MM-DD`` ("" when untagged).
        fields: the remaining ``field=value`` trust fields of the tag (design §7.1), decoded.
        members: nodes merged into this one (design §5.1), oldest first; empty for most nodes.
        heading_level: facts only: ``1``–``6`` when the line is a markdown heading (design §3.1;
            every model but ``classic`` leaves such a line out: it labels, it is no fact), ``7``
            on a line of memory.md's frontmatter block (no fact either, and it labels nothing:
            :data:`talos.sources.facts.FRONTMATTER`), else 0.
        headings: facts only: the texts of the headings above the line, outermost first (its
            heading path, :class:`talos.sources.facts.Outline`); ``""`` for a heading that
            may not be shown (withheld by the fact filter, or of a scope).
        task: episodes only: the session's real task, its first 80 characters (design §3.3:
            the first request that is not a slash command, its canned text or a
            continuation), "" when it is the opening request ``text`` (the reference's).
        outcome: episodes only: the head of the assistant's last answer in the session
            (:data:`talos.sources.sessions.OUTCOME_CHARS` characters, and one more when it
            goes on: the block marks the cut), secrets masked; "" when it has none.
        cwd: episodes only: the working folder the transcript names ("" when none), which
            decides the episode's scope (:mod:`talos.view.episode_scopes`, design §3.3).
        day, last_day: episodes only: the session's first and last days (``YYYY-MM-DD``,
            UTC; "" when unknown), which an ask's time words are matched against (§7.3).
        parts: episodes only: the session's parts (each request that names a task and its
            last answer) as :mod:`talos.sources.session_parts` stores them; "" for a session
            of one part.
    """

    kind: str
    text: str
    keywords: frozenset[str]
    order: int = 0
    path: str = ""
    line: int = 0
    raw: str = ""
    body: str = ""
    name: str = ""
    src: str = "user"
    born: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    members: list[Node] = field(default_factory=list)
    heading_level: int = 0
    headings: tuple[str, ...] = ()
    task: str = ""
    outcome: str = ""
    cwd: str = ""
    day: str = ""
    last_day: str = ""
    parts: str = ""

    @property
    def identity(self) -> tuple[str, str]:
        """Identity used to de-duplicate merged members: facts and episodes by text, skills by
        text *and* path (two files with the same label are two skills, design §5.1)."""
        return (self.text, self.path if self.kind == "skill" else "")

    @property
    def key(self) -> str:
        """Trace and usage key: ``kind + ":" + text[:80]`` (design §6.3)."""
        return node_key(self.kind, self.text)

    @property
    def scope(self) -> str:
        """Namespace of the record (design §7.1); ``global`` unless the tag says otherwise."""
        return self.fields.get("scope", "global")

    def with_members(self, limit: int = 2) -> str:
        """The text plus up to ``limit`` merged members, each as ``"\\n  · member"`` (design
        §6.2)."""
        return self.text + "".join(f"\n  · {m.text}" for m in self.members[:limit])

    def family(self) -> list[Node]:
        """This node followed by all its merged members (every one is counted, design §5.1)."""
        return [self, *self.members]


def line_id(raw: str) -> str:
    """A short, stable id of a line's exact text (names hand-written records, design §7.1)."""
    return hashlib.sha256(raw.encode("utf-8", errors="surrogatepass")).hexdigest()[:12]


def node_key(kind: str, text: str) -> str:
    """``kind + ":" + text[:80]``: the key of a trace row and of a usage entry (design §6.3),
    credentials masked before the cut (issue 13 item 6: what usage.db and the trace keep
    outlives the line; a fact holding one is withheld anyway, this holds for any filter)."""
    return f"{kind}:{mask_known_secrets(text)[:80]}"


def node_identity(n: Node) -> dict[str, Any]:
    """Where a node comes from: ``{"path", "line"}`` (line only for facts)."""
    return {"path": n.path, "line": n.line} if n.kind == "fact" else {"path": n.path}


class EpisodeFields(TypedDict):
    """:func:`episode_fields`: ``task``, ``outcome``, ``transcript`` (``None`` but for an
    episode)."""

    task: str | None
    outcome: str | None
    transcript: str | None


def episode_fields(n: Node) -> EpisodeFields:
    """What an episode row says beside its text, for the JSON of ``recall``, ``explain`` and
    MCP (design §3.3: an episode is worth reading alone; they gave only the opening request):
    ``task`` (the session's real task, else its opening request: the row's), ``outcome`` (the
    assistant's last answer, its first :data:`~talos.sources.sessions.OUTCOME_CHARS`
    characters and ``…`` when it went on; "" for none), ``transcript`` (the session file's
    path). Each is ``None`` for a fact or a skill."""
    if n.kind != "episode":
        return {"task": None, "outcome": None, "transcript": None}
    from talos.sources.sessions import OUTCOME_CHARS  # sessions builds Nodes: imported late

    more = "…" if len(n.outcome) > OUTCOME_CHARS else ""
    return {
        "task": n.task or n.text,
        "outcome": n.outcome[:OUTCOME_CHARS] + more,
        "transcript": n.path,
    }


def node_provenance(n: Node) -> dict[str, Any]:
    """Provenance fields of a node (design §7.1)."""
    return {"src": n.src, "born": n.born, "scope": n.scope, **n.fields}
