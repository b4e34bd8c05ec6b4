"""The stored layout of the graph's blocks (design §11): a checked header, named arrays, strings
as one buffer and offsets, nodes as JSON lists. Both :class:`~talos.graph.episodes.EpisodeBlock`
and :class:`~talos.graph.records.RecordsBlock` are written and read with it; a change of layout
bumps :data:`BLOCK_VERSION`, which is part of every stored block's token."""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from talos.model import Node

__all__ = ["BLOCK_VERSION", "BlockError", "node_from_json", "node_to_json"]


#: Version of the stored layout; part of the index's block token, so another layout is rebuilt.
BLOCK_VERSION = 7  # 6: an episode's task and outcome (design §3.3); 7: its parts
_MAGIC = b"TALOSBLK"


class BlockError(ValueError):
    """A stored block that cannot be decoded (truncated, foreign, another layout)."""


class _Strings(Sequence[str]):
    """Strings stored as one UTF-8 buffer and offsets; each is decoded when asked for."""

    __slots__ = ("buf", "off")

    def __init__(self, buf: bytes, off: Any) -> None:
        self.buf = buf
        self.off = off

    @classmethod
    def of(cls, values: Sequence[str]) -> _Strings:
        encoded = [v.encode("utf-8", "surrogatepass") for v in values]
        off = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=off[1:])
        return cls(b"".join(encoded), off)

    def take(self, keep: Any) -> _Strings:
        """The strings where ``keep`` (``bool[len]``) is true, without decoding any."""
        lengths = np.diff(self.off)
        dropped = np.flatnonzero(~keep)
        cuts = [0, *(x for d in dropped.tolist() for x in (int(self.off[d]), int(self.off[d + 1])))]
        cuts.append(len(self.buf))
        buf = b"".join(self.buf[cuts[i] : cuts[i + 1]] for i in range(0, len(cuts), 2))
        off = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
        np.cumsum(lengths[keep], out=off[1:])
        return _Strings(buf, off)

    def __len__(self) -> int:
        return len(self.off) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        a, b = int(self.off[i]), int(self.off[i + 1])
        return self.buf[a:b].decode("utf-8", "surrogatepass")


def _pack(kind: str, parts: list[tuple[str, str, bytes]], meta: Any = None) -> bytes:
    """A blob of named parts (``bytes`` or a numpy dtype), 8-byte aligned, after a JSON
    header naming the layout version, the block ``kind`` and ``meta``."""
    body: list[bytes] = []
    pos = 0
    for _n, _d, b in parts:  # offsets from the body's start; the body starts 8-aligned
        pad = -pos % 8
        body.append(b"\0" * pad + b)
        pos += pad + len(b)
    data = b"".join(body)
    header = json.dumps(
        {
            "version": BLOCK_VERSION,
            "kind": kind,
            "meta": meta,
            "parts": [[n, d, len(b)] for n, d, b in parts],
            "crc": zlib.crc32(data),  # a flipped byte in the body is never served
        }
    ).encode()
    header += b" " * (-(len(_MAGIC) + 4 + 8 + len(header)) % 8)
    digest = hashlib.blake2b(header, digest_size=8).digest()
    return b"".join([_MAGIC, struct.pack("<I", len(header)), digest, header, data])


#: Each kind of block's parts and their types; any other header is not trusted.
_LAYOUT: dict[str, dict[str, str]] = {
    "episodes": {
        "vocab": "bytes",
        "paths": "bytes",
        "paths_off": "int64",
        "texts": "bytes",
        "texts_off": "int64",
        "tasks": "bytes",
        "tasks_off": "int64",
        "outcomes": "bytes",
        "outcomes_off": "int64",
        "parts": "bytes",
        "parts_off": "int64",
        "group_of": "int32",
        "rep": "int32",
        "first": "int32",
        "mem_ptr": "int64",
        "mem": "int32",
        "node_ptr": "int64",
        "node_kw": "int32",
        "kw_ptr": "int64",
        "kw_node": "int32",
    },
    "terms": {  # talos.view.termrows.TermRows: the analyzed term rows of matching texts
        "vocab": "bytes",
        "cjk": "uint8",
        "keys": "bytes",
        "ptr": "int64",
        "term": "int32",
        "tf": "int32",
    },
    "ranking": {  # talos.index.ranking: the evidence model's term index and contiguity edges
        "vocab": "bytes",
        "cjk": "uint8",
        "ptr": "int64",
        "term": "int32",
        "tf": "int32",
        "kptr": "int64",
        "knode": "int32",
        "ktf": "int32",
        "cjk_len": "float64",
        "links_ptr": "int64",
        "links_src": "int32",
        "links_dst": "int32",
        "links_share": "float64",
        "links_out": "float64",
        "links_ahead": "uint8",
        "rows": "int64",
    },
    "records": {
        "texts": "bytes",
        "texts_off": "int64",
        "kinds": "bytes",
        "node_ptr": "int64",
        "node_kw": "int32",
        "kw_ptr": "int64",
        "kw_node": "int32",
    },
}


def _unpack(data: bytes, kind: str) -> tuple[Any, dict[str, Any]]:
    """``(meta, parts)`` of a :func:`_pack` blob; arrays are views on ``data``.

    Raises:
        BlockError: not a block of this layout and kind, or truncated.
    """
    try:
        if data[: len(_MAGIC)] != _MAGIC:
            raise BlockError("not a talos block")
        (size,) = struct.unpack_from("<I", data, len(_MAGIC))
        pos = len(_MAGIC) + 4
        digest = bytes(data[pos : pos + 8])
        raw = bytes(data[pos + 8 : pos + 8 + size])
        # The header says where every part is: a flipped length would shift a part onto its
        # padding (a keyword ending in NUL), so the header carries its own digest.
        if len(raw) != size or hashlib.blake2b(raw, digest_size=8).digest() != digest:
            raise BlockError("damaged block header")
        header = json.loads(raw)
        if not isinstance(header, dict):
            raise BlockError("block header is not an object")
        if header.get("version") != BLOCK_VERSION or header.get("kind") != kind:
            raise BlockError(
                f"{header.get('kind')} block of layout {header.get('version')},"
                f" not {kind} {BLOCK_VERSION}"
            )
        pos += 8 + size
        if zlib.crc32(memoryview(data)[pos:]) != header.get("crc"):
            raise BlockError("damaged block body (checksum)")
        got: dict[str, Any] = {}
        for part in header["parts"]:
            name, dtype, length = part
            if (
                not isinstance(name, str)
                or _LAYOUT[kind].get(name) != dtype
                or not isinstance(length, int)
                or isinstance(length, bool)
            ):
                raise BlockError(f"unexpected part {part!r}")
            pos += -pos % 8
            if length < 0 or pos + length > len(data):
                raise BlockError("truncated block")
            if dtype == "bytes":
                got[name] = data[pos : pos + length]
            else:
                width = np.dtype(dtype).itemsize
                got[name] = np.frombuffer(data, dtype=dtype, count=length // width, offset=pos)
            pos += length
        if set(got) != set(_LAYOUT[kind]):
            raise BlockError(f"parts {sorted(set(_LAYOUT[kind]) ^ set(got))} missing or extra")
        return header.get("meta"), got
    except BlockError:
        raise
    except (KeyError, ValueError, TypeError, struct.error, UnicodeDecodeError) as e:
        raise BlockError(f"unreadable block ({e})") from e


def _strings(values: Sequence[str]) -> _Strings:
    return values if isinstance(values, _Strings) else _Strings.of(values)


def _concat(old: _Strings, values: Sequence[str]) -> _Strings:
    """``old`` followed by ``values``, without decoding ``old``."""
    more = _Strings.of(values)
    off = np.concatenate([old.off, more.off[1:] + int(old.off[-1])])
    return _Strings(bytes(old.buf) + more.buf, off)


def node_to_json(n: Node, keywords: bool = True) -> list[Any]:
    """A node (with its merged members) as JSON-able lists; :func:`node_from_json` inverts it.
    ``keywords=False`` leaves the keyword sets out (``None``): a records block has them in its
    incidence, and a merged node's members hold its keyword set by definition (design §5.1).
    A fact's heading level and path (design §3.1) follow only when it has one."""
    out = [
        n.kind,
        n.text,
        sorted(n.keywords) if keywords else None,
        n.order,
        n.path,
        n.line,
        n.raw,
        n.body,
        n.name,
        n.src,
        n.born,
        n.fields,
        [node_to_json(m, keywords) for m in n.members],
    ]
    if n.heading_level or n.headings:
        out += [n.heading_level, list(n.headings)]
    return out


def node_from_json(v: list[Any], keywords: frozenset[str] | None = None) -> Node:
    """The node :func:`node_to_json` wrote; ``keywords`` for one written without them."""
    kind, text, kw, order, path, line, raw, body, name, src, born, fields, members = v[:13]
    level, headings = v[13:] if len(v) == 15 else (0, ())
    return Node(
        str(kind),
        str(text),
        frozenset(kw) if kw is not None or keywords is None else keywords,
        int(order),
        str(path),
        int(line),
        str(raw),
        str(body),
        str(name),
        str(src),
        str(born),
        {str(k): str(x) for k, x in fields.items()},
        [node_from_json(m, keywords) for m in members],
        int(level),
        tuple(str(h) for h in headings),
    )
