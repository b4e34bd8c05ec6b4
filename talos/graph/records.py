"""The records block: one view's merged records (facts, skills, conflict and override lines)
with their keyword incidence, stored for a process that only recalls (design §11)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from talos.graph.incidence import Incidence
from talos.graph.stored import (
    BlockError,
    _pack,
    _Strings,
    _unpack,
    node_from_json,
    node_to_json,
)
from talos.model import Node
from talos.usage.counts import fingerprint, remember_fingerprint

__all__ = ["Kinds", "LazyRecords", "RecordsBlock"]


class LazyRecords(Sequence[Node]):
    """Record nodes stored as one JSON text each (without keywords: ``incidence`` has them),
    decoded when asked for, then kept."""

    __slots__ = ("_built", "incidence", "kinds", "texts")

    def __init__(self, texts: Sequence[str], kinds: Sequence[str], incidence: Incidence) -> None:
        self.texts = texts
        self.kinds = kinds
        self.incidence = incidence
        self._built: dict[int, Node] = {}

    def __len__(self) -> int:
        return len(self.texts)

    @overload
    def __getitem__(self, i: int) -> Node: ...
    @overload
    def __getitem__(self, i: slice) -> list[Node]: ...
    def __getitem__(self, i: int | slice) -> Node | list[Node]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        got = self._built.get(i)
        if got is None:
            keywords = frozenset(self.incidence.keywords_of(i))
            got = self._built[i] = node_from_json(json.loads(self.texts[i]), keywords)
        return got


class Kinds(Sequence[str]):
    """Each record's kind as one byte into a table of kind names (a list of 1,000,000
    strings in the block's header took a second to decode; issue 12 item 8)."""

    __slots__ = ("codes", "names")

    def __init__(self, codes: Any, names: Sequence[str]) -> None:
        self.codes = codes
        self.names = list(names)

    @classmethod
    def of(cls, kinds: Sequence[str]) -> Kinds:
        names = sorted(set(kinds))
        code = {k: i for i, k in enumerate(names)}
        return cls(np.fromiter((code[k] for k in kinds), dtype=np.uint8, count=len(kinds)), names)

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self.names[c] for c in self.codes[i].tolist()]
        return self.names[int(self.codes[i])]

    def mask(self, kind: str) -> Any:
        """``bool[len]``: which entries are ``kind``."""
        if kind not in self.names:
            return np.zeros(len(self.codes), dtype=bool)
        return self.codes == self.names.index(kind)


class RecordsBlock:
    """The merged records of one view, for a process that only recalls (design §11).

    What :meth:`talos.memory.Memory.view` derives from memory.md and the skills for one set of
    scopes and one date — the records in view, merged, with their keyword incidence and the
    usage keys they count — stored in the index under a token of everything it depends on
    (the facts' version, the skills' stats and scan, scopes, date, language, the code). A new
    process that finds it builds a :class:`Node` only for the rows it delivers. It is a cache
    of the one route, never a second one: it is written from the graph that route built.

    Attributes:
        nodes: the record nodes (lazily decoded). kinds: their kinds. incidence: their keyword
        incidence (vocabulary sorted). present: scope → usage keys counted by a recall
        (``Memory._count``). start: the load position of the first episode.
    """

    __slots__ = ("incidence", "kinds", "nodes", "present", "start")

    def __init__(
        self,
        nodes: Sequence[Node],
        kinds: Sequence[str],
        incidence: Incidence,
        present: dict[str, frozenset[str]],
        start: int,
    ) -> None:
        self.nodes = nodes
        self.kinds = kinds
        self.incidence = incidence
        self.present = present
        self.start = start

    def to_bytes(self, token: str = "") -> bytes:
        """The block as one blob (:meth:`from_bytes` reads it back exactly), naming the
        ``token`` it was built for. The incidence is stored both ways, so a loading process
        sorts nothing (an argsort of 6,000,000 entries, 1 s, at 1,000,000 facts)."""
        texts = _Strings.of([json.dumps(node_to_json(n, keywords=False)) for n in self.nodes])
        kinds = self.kinds if isinstance(self.kinds, Kinds) else Kinds.of(self.kinds)
        inc = self.incidence
        kw_ptr, kw_node = inc.keyword_major()
        if len(kw_ptr) < len(inc.vocab) + 1:  # ids after the highest one held: no holders
            kw_ptr = np.concatenate([kw_ptr, np.full(len(inc.vocab) + 1 - len(kw_ptr), kw_ptr[-1])])
        meta = {
            "kinds": kinds.names,
            "vocab": list(inc.vocab),
            "present": {s: sorted(v) for s, v in self.present.items()},
            "present_fp": {s: fingerprint(v) for s, v in self.present.items()},
            "start": self.start,
            "token": token,
        }
        parts = [
            ("texts", "bytes", texts.buf),
            ("texts_off", "int64", texts.off.astype(np.int64).tobytes()),
            ("kinds", "bytes", np.ascontiguousarray(kinds.codes, dtype=np.uint8).tobytes()),
            ("node_ptr", "int64", np.ascontiguousarray(inc.node_ptr, dtype=np.int64).tobytes()),
            ("node_kw", "int32", np.ascontiguousarray(inc.node_kw, dtype=np.int32).tobytes()),
            ("kw_ptr", "int64", np.ascontiguousarray(kw_ptr, dtype=np.int64).tobytes()),
            ("kw_node", "int32", np.ascontiguousarray(kw_node, dtype=np.int32).tobytes()),
        ]
        return _pack("records", parts, meta)

    @classmethod
    def from_bytes(cls, data: bytes, token: str | None = None) -> RecordsBlock:
        """Decode :meth:`to_bytes`.

        Raises:
            BlockError: not a records block of this layout, inconsistent, or built for another
                ``token`` than the one given (another scope set, day or home).
        """
        meta, got = _unpack(data, "records")
        if token is not None and (not isinstance(meta, dict) or meta.get("token") != token):
            raise BlockError("records of another view")
        try:
            texts = _Strings(got["texts"], got["texts_off"])
            names = [str(k) for k in meta["kinds"]]
            kinds = Kinds(np.frombuffer(got["kinds"], dtype=np.uint8), names)
            vocab = meta["vocab"]
            present = {str(s): frozenset(v) for s, v in meta["present"].items()}
            if not all(type(k) is str for k in vocab) or not all(
                type(k) is str for v in present.values() for k in v
            ):
                raise BlockError("records block with a keyword or key that is not a string")
            inc = Incidence(vocab, got["node_ptr"], got["node_kw"], got["kw_ptr"], got["kw_node"])
            start = int(meta["start"])
            for s, fp in dict(meta.get("present_fp") or {}).items():
                if s in present and isinstance(fp, str):
                    remember_fingerprint(present[s], fp)
        except (KeyError, ValueError, TypeError, AttributeError) as e:
            raise BlockError(f"unreadable records block ({e})") from e
        n = len(kinds)
        kw_ptr, kw_node = got["kw_ptr"], got["kw_node"]
        if not (
            len(texts) == n
            and int(texts.off[-1]) == len(texts.buf)
            and (not n or int(kinds.codes.max()) < len(names))
            and len(inc.node_ptr) == n + 1
            and int(inc.node_ptr[-1]) == len(inc.node_kw)
            and (not len(inc.node_kw) or int(inc.node_kw.min()) >= 0)
            and (not len(inc.node_kw) or int(inc.node_kw.max()) < len(vocab))
            and len(kw_ptr) == len(vocab) + 1
            and int(kw_ptr[-1]) == len(kw_node) == len(inc.node_kw)
            and (not len(kw_node) or 0 <= int(kw_node.min()) <= int(kw_node.max()) < n)
        ):
            raise BlockError("inconsistent records block")
        return cls(LazyRecords(texts, kinds, inc), kinds, inc, present, start)
