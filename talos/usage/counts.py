"""Trace and usage counts (design §6.3): the trace line of a recall, and what a recall counts
(the usage keys in view, :class:`PresentKeys`; the picks, :func:`count_recall`). Where the
counts are kept is :mod:`talos.usage.store`; its names are importable from here too.

The trace is one JSON line per recall. Usage is, for every fact and skill (merged members
included), ``seen`` (recalls that happened while it existed), ``hits`` (times it was picked),
``last_hit_day`` (days since 1970-01-01 UTC of the last hit; 0 = never) and ``first_day`` (the
day of the first recall that counted it; 0 = not known: counted before talos kept that day, or
imported from the reference's counts). ``talos dead`` needs ``first_day`` (a fact seen by 8
recalls in a new home's first ten minutes is not "never used", :meth:`talos.Memory.dead`).
Neither day is ever later than a recall's: a day a clock that ran ahead left in the future is
lowered by the next recall.

Writing usage must not cost O(number of memories) per recall: the keys in view are kept per
graph and patched with it, and the store writes only what changed (:mod:`talos.usage.store`).
"""

from __future__ import annotations

import errno
import hashlib
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from talos.fsutil import lock_open_file, open_append
from talos.text import json_dumps
from talos.usage.store import (
    HOOK_IMPORT_BYTES,
    JsonUsage,
    SqliteUsage,
    Stat,
    UsageStore,
    fingerprint,
    fingerprint_from,
    remember_fingerprint,
)
from talos.warn import warn

if TYPE_CHECKING:
    from talos.graph.graph import Graph
    from talos.model import Node

__all__ = [
    "HOOK_IMPORT_BYTES",
    "JsonUsage",
    "PresentKeys",
    "SqliteUsage",
    "Stat",
    "UsageStore",
    "count_recall",
    "counted",
    "fingerprint",
    "fingerprint_from",
    "query_hash",
    "remember_fingerprint",
    "today",
    "trace_scopes",
    "write_trace",
]


def today(now: float | None = None) -> int:
    """Days since 1970-01-01 UTC for ``now`` (Unix seconds; default: the current time)."""
    return int((time.time() if now is None else now) // 86400)


def query_hash(query: str) -> str:
    """First 12 hex digits of the SHA-256 of the UTF-8 query: all the trace keeps of it."""
    return hashlib.sha256(query.encode("utf-8", errors="surrogatepass")).hexdigest()[:12]


def write_trace(
    path: Path,
    query: str,
    picked: list[dict[str, object]],
    scopes: Sequence[str] = ("global",),
) -> None:
    """Append exactly one trace line ``{"picked": [...], "q": HASH, "t": SECONDS, "scopes":
    [...]}`` (design §6.3). ``scopes`` are the request's authorized scopes: a reader of the trace
    shows the line only to a request authorized for all of them (:func:`trace_scopes`).

    One ``write`` on an ``O_APPEND`` descriptor, so lines from concurrent processes never
    interleave (a short write on a full disk is finished or warned about, and a torn last line
    is not appended to: it stays one unreadable line); only onto a regular file
    (:func:`talos.fsutil.open_append`: a FIFO there hung recall, a device was written to). A
    failure warns on stderr and never raises, whatever it is (a NUL byte in the path raised
    ``ValueError`` out of recall): observing must not break recall (design §6.1).
    """
    rec = {
        "picked": picked,
        "q": query_hash(query),
        "t": int(time.time()),
        "scopes": list(scopes),
    }
    # json_dumps: a key's bidi override or U+2028 is an escape, not raw, in a file people tail
    data = (json_dumps(rec) + "\n").encode("utf-8", errors="replace")
    try:
        if path.parts[:1] and path.parts[0].startswith("~"):  # a ~user that does not exist
            raise ValueError("its ~ cannot be expanded; write the path in full")  # (home.py)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_append(path, readable=True)
        try:
            # A full disk writes part of a line and says so only by the count (a 1 MiB
            # tmpfs, hostile pass): write the rest or fail. A line left torn that way, or by
            # a kill, would glue the next recall's line onto it: start on a fresh line. The
            # look at the last byte and the write happen under the file's lock: another
            # process's write in progress read as a torn line, and a blank line was written
            # (121 trace lines for 120 recalls, tests/test_index_reliability.py under load).
            lock_open_file(fd)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data
            rest = memoryview(data)
            while rest:
                written = os.write(fd, rest)
                if not written:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                rest = rest[written:]
        finally:
            os.close(fd)
    except OSError as e:
        warn(f"{path}: cannot write the recall trace ({e.strerror or e}); recall goes on")
    except Exception as e:  # ValueError (a NUL byte in the path), anything else: never fail
        shown = str(path).replace("\0", "\\0")
        warn(f"{shown}: cannot write the recall trace ({e}); recall goes on")


def trace_scopes(rec: Mapping[str, object]) -> frozenset[str] | None:
    """The scopes of the request that wrote trace line ``rec`` (design §6.3): its ``scopes``
    field; a line written before the field existed (or by the reference ``recall.py``) is
    ``global``'s only: its picks may belong to any scope, so no other scope is shown them; so
    is a line with an empty list (a request with no scope at all recalls nothing of any).
    ``None`` when the field is there but is not a list of scope names (a malformed line)."""
    scopes = rec.get("scopes", ["global"])
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        return None
    return frozenset(scopes or ["global"])


# -- the usage keys in view (design §6.3) --------------------------------------------------------


def counted(n: Node) -> bool:
    """Whether usage is counted for a node: facts and skills written down, not episodes, not
    conflict lines, not request-scoped overrides (design §6.3, §7.5)."""
    return n.kind in ("fact", "skill") and n.src != "override"


class PresentKeys:
    """The usage keys of every fact and skill (merged members included) in a graph's view, per
    scope, kept per graph: recall must not cost O(memories) (design §6.3).

    Attributes:
        keys: ``(graph, {scope: frozenset of keys})`` of the last graph asked about, or None.
            The frozensets stay the same objects from graph to graph while unchanged: the
            fingerprint memo (:func:`fingerprint_from`) is keyed by their identity.
        tally: ``(graph, {(scope, key): records holding it})``, made on the first patch.
        pairs: ``{record node: [(scope, key), ...]}`` of the last full count, by identity.
    """

    __slots__ = ("keys", "pairs", "tally")

    def __init__(self) -> None:
        self.keys: tuple[Graph, dict[str, frozenset[str]]] | None = None
        self.tally: tuple[Graph, dict[tuple[str, str], int]] | None = None
        self.pairs: dict[Node, list[tuple[str, str]]] = {}

    def of(self, graph: Graph, scopes: Sequence[str]) -> dict[str, frozenset[str]]:
        """Usage keys of every fact/skill (and merged member) in ``graph``, per scope (every
        one of ``scopes`` present, maybe empty); counted once per graph."""
        if self.keys is not None and self.keys[0] is graph:
            return self.keys[1]
        keys: dict[str, set[str]] = {s: set() for s in scopes}
        old, now = self.pairs, {}
        for n in graph.nodes[: graph.records]:  # episodes are never counted
            pairs = old.get(n)
            if pairs is None:
                pairs = [(m.scope, m.key) for m in n.family() if counted(m)]
            now[n] = pairs
            for scope, key in pairs:
                got = keys.get(scope)
                if got is None:
                    got = keys[scope] = set()
                got.add(key)
        self.pairs = now
        present = {s: frozenset(v) for s, v in keys.items()}
        self.keys = (graph, present)
        return present

    def patched(
        self, old: Graph, new: Graph, removed: Sequence[Node], added: Sequence[Node]
    ) -> None:
        """The usage keys of ``new`` from those of ``old`` when the records ``removed`` left
        and ``added`` came (an in-place edit, :mod:`talos.view.patch`): counted per key, so a key
        two records share stays present, and each scope's set changes by the keys that came
        and went."""
        if self.keys is None or self.keys[0] is not old:
            return
        counts = self.tally
        if counts is None or counts[0] is not old:
            tally: dict[tuple[str, str], int] = {}
            for n in old.nodes[: old.records]:
                for m in n.family():
                    if counted(m):
                        tally[(m.scope, m.key)] = tally.get((m.scope, m.key), 0) + 1
            counts = (old, tally)
        tally = counts[1]
        moved: set[tuple[str, str]] = set()
        for n in removed:
            for m in n.family():
                if counted(m):
                    sk = (m.scope, m.key)
                    tally[sk] -= 1
                    if not tally[sk]:
                        del tally[sk]
                    moved.add(sk)
        for n in added:
            for m in n.family():
                if counted(m):
                    sk = (m.scope, m.key)
                    tally[sk] = tally.get(sk, 0) + 1
                    moved.add(sk)
        self.tally = (new, tally)
        before = self.keys[1]
        present = dict(before)
        for scope in {s for s, _k in moved}:
            keys = before.get(scope, frozenset())
            gone = {k for s, k in moved if s == scope and (s, k) not in tally}
            came = {k for s, k in moved if s == scope and (s, k) in tally}
            now = (keys - gone) | came
            if now != keys:
                present[scope] = now
                fingerprint_from(keys, now)
        self.keys = (new, present)

    def carried(self, old: Graph, new: Graph) -> None:
        """``new`` has the records of ``old`` (new sessions restacked under them): it keeps
        their keys and tally."""
        if self.keys is not None and self.keys[0] is old:
            self.keys = (new, self.keys[1])
        if self.tally is not None and self.tally[0] is old:
            self.tally = (new, self.tally[1])

    def loaded(self, graph: Graph, present: dict[str, frozenset[str]]) -> None:
        """The keys of ``graph``, read back with its records from the index."""
        self.keys = (graph, present)


def count_recall(
    store: UsageStore, present: Mapping[str, frozenset[str]], nodes: Iterable[Node]
) -> None:
    """Usage of one recall: every fact/skill in view (``present``) is seen once, every counted
    family member of the delivered ``nodes`` is hit. A failure warns on stderr and never fails
    the recall (design §6.3)."""
    hits: dict[str, set[str]] = {}
    for n in nodes:
        for m in n.family():
            if counted(m):
                hits.setdefault(m.scope, set()).add(m.key)
    try:
        store.record(present, hits, today())
    except Exception as e:
        warn(f"cannot update usage counts ({e}); recall goes on")
