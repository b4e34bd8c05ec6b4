"""The analyzed term rows of matching texts, keyed by the text's hash and kept in index.db, so
a process never analyses a text analysed before (issue 15, "Left" item 2).

The ``evidence`` model ranks over a :class:`talos.ranking.evidence.TermIndex`: per node the analyzer
terms (:func:`talos.ranking.analyzer.analyze`) of its matching text
(:func:`talos.ranking.evidence.matching_text`),
and a fact's heading path (:func:`talos.ranking.evidence.counts_of`).
Analysing every node's text cost each CLI process 0.21 s at 3,000 sessions and 1.9 s at 30,000
(``bench/evidence_build.py``). :class:`TermRows` holds one row of ``(term, count)`` per distinct
matching text, node-major as :mod:`talos.graph.episodes` keeps the keyword incidence
(``vocab`` sorted, ``cjk`` per term, ``ptr``, ``term`` ascending per row, ``tf``), found by the
BLAKE2b digest of the text. A graph's index is a gather of its nodes' rows
(:meth:`TermRows.index`): float for float the one :func:`talos.ranking.evidence.of_nodes` builds,
for
any view, merge or order of nodes, since the row is that of exactly the text the node is
matched by (``tests/test_termstore.py``). A text not held yet (a new session, an edited line, a
fact's new heading) is analysed alone and added.

Stored (:meth:`talos.index.Index.save_terms`, the ``terms`` table of schema 5) as one blob of
:mod:`talos.graph.stored`'s layout under the analyzer's fingerprint (:func:`analyzer_token`):
rows made by another analyzer, stop list or stemmer are analysed again, never trusted; a blob
that does not decode or is inconsistent is rebuilt (:class:`~talos.graph.stored.BlockError`).
A process that analysed :data:`STORE_AFTER` new texts stores the rows again (until then each
process analyses the few texts the stored blob lacks: one new session costs no rewrite).

Cost (``python3 bench/termstore.py --data ../shared/bench --sessions 3000 30000 --before DIR
--rounds 11``, one run, both sides in turn, load of other work on 2 cores; ``bench/README.md``
"Term rows in index.db"): a fresh-process ``talos recall --model evidence``, median, before →
after, ``--model bipartite`` after in the same run: 1,030 → 489 ms (bipartite 454) at 3,000
sessions, 3,255 → 927 ms (bipartite 620) at 30,000; after a new session 1,478 → 784 ms and
5,222 → 1,531 ms. In-process, the term index and edges of the recall graph: 71 ms from the
rows against 485 ms analysed at 3,000 sessions, 362 ms against 2,352 ms at 30,000 (17,273
nodes, 820,306 entries). ``talos index --rebuild`` 1.83 → 1.94 s and 9.2 → 11.5 s; index.db
3.9 → 4.9 MB and 31.8 → 38.6 MB. The records alone (2,707 texts at 30,000 sessions) cost
0.42 s to analyse: they are stored too.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import inspect
import operator
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from talos.graph.episodes import EpisodeBlock
from talos.graph.graph import StackedNodes
from talos.graph.stored import BlockError, _pack, _unpack
from talos.model import Node
from talos.ranking.analyzer import cjk_stop_words, is_cjk, stem_exceptions, stop_words
from talos.ranking.arrays import unique
from talos.ranking.evidence import TermIndex, counts_of, heading_context, matching_text

__all__ = [
    "STORE_AFTER",
    "Source",
    "TermRows",
    "analyzer_token",
    "matching_texts",
    "matching_texts_at",
    "text_key",
]

#: What a row is counted from (:func:`talos.ranking.evidence.counts_of`): a matching text, or a
#: matching text and the heading path it stands under (a fact under a heading).
Source = str | tuple[str, str]

#: A process that analysed this many texts the stored rows lacked stores them again
#: (:meth:`talos.view.kept.KeptState.evidence_index`); until then each process analyses those few.
STORE_AFTER = 64

_KEY = 16  #: bytes of a text's key (BLAKE2b digest)


def text_key(source: Source) -> bytes:
    """The row key of a :data:`Source`: the 16-byte BLAKE2b digest of the matching text
    (UTF-8, lone surrogates kept); with a heading path, of the path's length, the path and the
    text, in a digest of its own (``person``), so no text alone can take a headed row's key."""
    if isinstance(source, str):
        return hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=_KEY).digest()
    text, context = (x.encode("utf-8", "surrogatepass") for x in source)
    h = hashlib.blake2b(digest_size=_KEY, person=b"talos-headings")
    h.update(len(context).to_bytes(8, "little") + context + text)
    return h.digest()


@functools.cache
def analyzer_token() -> str:
    """A digest of what decides a row's terms: the analyzer's code, its English and CJK stop
    lists, the stemmer's version, and how a heading path's terms join a fact's. Stored rows of
    another token are analysed again."""
    import Stemmer  # type: ignore[import-not-found]  # no stubs

    import talos.ranking.analyzer
    import talos.ranking.evidence

    h = hashlib.sha256(Path(str(talos.ranking.analyzer.__file__)).read_bytes())
    for rule in (
        talos.ranking.evidence.counts_of,
        talos.ranking.evidence._in_context,
    ):  # a heading's terms
        h.update(inspect.getsource(rule).encode())
    for words in (stop_words(), cjk_stop_words()):  # data of bm25s: its version may change it
        h.update("\n".join(sorted(words)).encode() + b"\0")
    h.update(repr(sorted(stem_exceptions().items())).encode())  # a word's own term
    h.update(str(getattr(Stemmer, "__version__", "")).encode())
    return h.hexdigest()[:16]


class _Episode:
    """An episode as :func:`talos.ranking.evidence.matching_text` reads it (kind, text, task and
    outcome), without building its :class:`Node` (members, keyword set) from the block."""

    __slots__ = ("outcome", "parts", "task", "text")
    kind = "episode"

    def __init__(self, block: EpisodeBlock, e: int) -> None:
        self.text = block.texts[e]
        self.task = block.tasks[e]
        self.outcome = block.outcomes[e]
        self.parts = block.parts[e]


def matching_texts(nodes: Sequence[Node]) -> list[Source]:
    """The :data:`Source` of each of a graph's ``nodes``, in node order: its
    :func:`talos.ranking.evidence.matching_text`, with its
    :func:`talos.ranking.evidence.heading_context` when
    it has one. The episodes of a :class:`~talos.graph.graph.StackedNodes` are read from their
    block (the text of each merged node's representative) without building their nodes."""
    records = nodes.records if isinstance(nodes, StackedNodes) else nodes
    out: list[Source] = []
    for n in records:
        text, context = matching_text(n), heading_context(n)
        out.append((text, context) if context else text)
    if isinstance(nodes, StackedNodes):
        block = nodes.block
        out += [matching_text(_Episode(block, r)) for r in block.rep.tolist()]  # type: ignore[arg-type]
    return out


def matching_texts_at(nodes: Sequence[Node], positions: Sequence[int]) -> list[Source]:
    """:func:`matching_texts` of the nodes at ``positions`` only (an episode of a
    :class:`~talos.graph.graph.StackedNodes` read from its block, not built)."""
    if not isinstance(nodes, StackedNodes):
        return matching_texts([nodes[p] for p in positions])
    records, block = nodes.records, nodes.block
    start = len(records)
    out: list[Source] = []
    for p in positions:
        if p < start:
            out += matching_texts([records[p]])
        else:
            out.append(matching_text(_Episode(block, int(block.rep[p - start]))))  # type: ignore[arg-type]
    return out


class TermRows:
    """Analyzed term rows, one per distinct matching text, found by :func:`text_key`.

    Node-major: row ``r`` holds the term ids ``term[ptr[r]:ptr[r+1]]`` (strictly ascending)
    with counts ``tf[...]`` (``int32``, at least 1); ``vocab`` is sorted (code points, as
    ``sorted``), ``cjk[t]`` says term ``t`` is CJK (:func:`talos.ranking.analyzer.is_cjk`); ``keys``
    maps a text's key to its row. ``added``: rows analysed since the rows were read (or made).
    """

    __slots__ = ("added", "cjk", "keys", "ptr", "serial", "term", "tf", "vocab")

    def __init__(
        self,
        vocab: list[str],
        cjk: np.ndarray,
        ptr: np.ndarray,
        term: np.ndarray,
        tf: np.ndarray,
        keys: dict[bytes, int],
    ) -> None:
        self.vocab = vocab
        self.cjk = cjk
        self.ptr = ptr
        self.term = term
        self.tf = tf
        self.keys = keys
        self.added = 0
        #: Names the stored blob these rows were read from or written as ("": never
        #: stored): row ids kept elsewhere (the ranking block's, :mod:`talos.index.ranking`)
        #: are valid for these rows only when they name the same serial.
        self.serial = ""

    @classmethod
    def empty(cls) -> TermRows:
        """No row yet."""
        return cls(
            [],
            np.zeros(0, dtype=bool),
            np.zeros(1, dtype=np.int64),
            np.zeros(0, dtype=np.int32),
            np.zeros(0, dtype=np.int32),
            {},
        )

    def __len__(self) -> int:
        """Rows held."""
        return len(self.ptr) - 1

    # -- rows --------------------------------------------------------------------------------

    def rows(self, texts: Sequence[Source]) -> np.ndarray:
        """The row of each of ``texts`` (``int64[len(texts)]``); a text without one is analysed
        (:func:`talos.ranking.evidence.counts_of`) and its row added."""
        keys = [text_key(t) for t in texts]
        get = self.keys.get
        missing: dict[bytes, Source] = {}
        for k, t in zip(keys, texts, strict=True):
            if get(k) is None and k not in missing:
                missing[k] = t
        if missing:
            self._add(missing)
        return np.fromiter((self.keys[k] for k in keys), dtype=np.int64, count=len(keys))

    def _add(self, texts: dict[bytes, Source]) -> None:
        """Analyse ``texts`` (by key) and append their rows; new terms take their place in the
        sorted vocabulary (found by bisection: no map of every term is made), every held row
        renumbered, still ascending."""
        counts = [counts_of(t) if isinstance(t, str) else counts_of(*t) for t in texts.values()]
        vocab = self.vocab
        wanted = sorted({t for c in counts for t in c})
        new = [t for t in wanted if not _holds(vocab, t)]
        if new:
            merged, at, shift = merged_vocab(vocab, new)
            if len(self.term):
                self.term = (self.term + shift[self.term]).astype(np.int32)
            self.cjk = np.insert(self.cjk, at, [is_cjk(t) for t in new])
            self.vocab = vocab = merged
        ids = {t: bisect.bisect_left(vocab, t) for t in wanted}
        rows = [sorted((ids[t], n) for t, n in c.items()) for c in counts]
        lens = np.fromiter((len(r) for r in rows), np.int64, len(rows))
        self.ptr = np.concatenate([self.ptr, self.ptr[-1] + np.cumsum(lens)])
        self.term = np.concatenate(
            [self.term, np.fromiter((t for r in rows for t, _n in r), np.int32)]
        ).astype(np.int32)
        self.tf = np.concatenate(
            [self.tf, np.fromiter((n for r in rows for _t, n in r), np.int32)]
        ).astype(np.int32)
        start = len(self.keys)
        for i, k in enumerate(texts):
            self.keys[k] = start + i
        self.added += len(texts)

    def index(self, texts: Sequence[Source]) -> tuple[TermIndex, np.ndarray]:
        """The :class:`~talos.ranking.evidence.TermIndex` of one node per text in order (row ``i``
        is
        the terms of ``texts[i]``; vocabulary: the terms they hold, sorted), equal array for
        array to ``TermIndex([counts_of(…) for each source], …)``, and the rows used.
        Missing rows are analysed first (:meth:`rows`)."""
        rows = self.rows(texts)
        lens = self.ptr[rows + 1] - self.ptr[rows]
        pos = _runs(self.ptr[rows], lens)
        term, tf = self.term[pos], self.tf[pos]
        used = np.zeros(len(self.vocab), dtype=bool)
        used[term] = True
        new_id = np.cumsum(used, dtype=np.intp) - 1  # monotone: each row stays ascending
        held = np.flatnonzero(used).tolist()
        ptr = np.zeros(len(texts) + 1, dtype=np.intp)
        np.cumsum(lens, out=ptr[1:])
        index = TermIndex.from_arrays(
            [self.vocab[t] for t in held],
            ptr,
            new_id[term],
            tf,
            [[] for _ in texts],
            cjk=self.cjk[used],
        )
        return index, rows

    # -- storing -----------------------------------------------------------------------------

    def kept(self, rows: np.ndarray) -> TermRows:
        """Only ``rows`` (in that order; the vocabulary shrunk to their terms): what is stored
        when most rows held are no node's any more."""
        rows = unique(rows)
        lens = self.ptr[rows + 1] - self.ptr[rows]
        pos = _runs(self.ptr[rows], lens)
        term = self.term[pos]
        used = np.zeros(len(self.vocab), dtype=bool)
        used[term] = True
        new_id = (np.cumsum(used) - 1).astype(np.int32)
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lens, out=ptr[1:])
        by_row = {r: k for k, r in self.keys.items()}
        keys = {by_row[r]: i for i, r in enumerate(rows.tolist())}
        held = np.flatnonzero(used).tolist()
        return TermRows(
            [self.vocab[t] for t in held], self.cjk[used], ptr, new_id[term], self.tf[pos], keys
        )

    def to_bytes(self, token: str) -> bytes:
        """The rows as one blob (:meth:`from_bytes` reads them back exactly), naming the
        analyzer ``token`` they were made by."""
        vocab = "\n".join(self.vocab)
        if any("\n" in t or not t for t in self.vocab):
            raise ValueError("a term is empty or holds a newline")  # terms never do
        keys = sorted(self.keys, key=self.keys.__getitem__)
        parts = [
            ("vocab", "bytes", vocab.encode("utf-8", "surrogatepass")),
            ("cjk", "uint8", self.cjk.astype(np.uint8).tobytes()),
            ("keys", "bytes", b"".join(keys)),
            ("ptr", "int64", self.ptr.astype(np.int64).tobytes()),
            ("term", "int32", self.term.astype(np.int32).tobytes()),
            ("tf", "int32", self.tf.astype(np.int32).tobytes()),
        ]
        self.serial = os.urandom(8).hex()
        return _pack("terms", parts, {"token": token, "serial": self.serial})

    @classmethod
    def from_bytes(cls, data: bytes, token: str) -> TermRows:
        """Decode :meth:`to_bytes`; arrays are views on ``data``.

        Raises:
            BlockError: not a blob of this layout, made by another analyzer ``token``, or
                inconsistent (sizes, ids out of range, a row not ascending, a vocabulary
                not sorted, a count below 1, a key twice).
        """
        meta, got = _unpack(data, "terms")
        if not isinstance(meta, dict) or meta.get("token") != token:
            raise BlockError("term rows of another analyzer")
        try:
            text = got["vocab"].decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as e:
            raise BlockError(f"unreadable term rows ({e})") from e
        vocab = text.split("\n") if text else []
        raw = bytes(got["keys"])
        ptr, term, tf = got["ptr"], got["term"], got["tf"]
        cjk = got["cjk"].astype(bool)
        n = len(ptr) - 1
        if len(raw) != n * _KEY or n < 0:
            raise BlockError("inconsistent term rows (keys)")
        keys = {raw[i : i + _KEY]: r for r, i in enumerate(range(0, len(raw), _KEY))}
        out = cls(vocab, cjk, ptr, term, tf, keys)
        out._check(len(keys) == n)
        serial = meta.get("serial")
        out.serial = serial if isinstance(serial, str) else ""
        return out

    def _check(self, keys_unique: bool) -> None:
        """Cheap consistency checks of decoded rows."""
        ptr, term, tf, v = self.ptr, self.term, self.tf, len(self.vocab)
        steps = np.diff(ptr)
        ok = (
            keys_unique
            and len(self.cjk) == v
            and int(ptr[0]) == 0
            and bool(np.all(steps >= 0))
            and int(ptr[-1]) == len(term) == len(tf)
            and (not len(term) or (int(term.min()) >= 0 and int(term.max()) < v))
            and (not len(tf) or int(tf.min()) >= 1)
            and all(map(operator.lt, self.vocab, self.vocab[1:]))
            and "" not in self.vocab[:1]
        )
        if ok and len(term) > 1:
            first = np.zeros(len(term), dtype=bool)
            first[ptr[:-1][steps > 0]] = True
            ok = bool(np.all((np.diff(term) > 0) | first[1:]))
        if not ok:
            raise BlockError("inconsistent term rows")


def merged_vocab(
    vocab: Sequence[str], new: Sequence[str]
) -> tuple[list[str], list[int], np.ndarray]:
    """Two sorted vocabularies, ``new`` holding no term of ``vocab``, as one:
    ``(merged, at, shift)``: ``at[j]`` the position in ``vocab`` before which ``new[j]`` goes,
    ``shift[i]`` how many new terms go before ``vocab[i]`` (its id moves up by that)."""
    at = [bisect.bisect_left(vocab, t) for t in new]  # ascending: ``new`` is sorted
    shift = np.searchsorted(np.asarray(at, dtype=np.intp), np.arange(len(vocab)), side="right")
    merged: list[str] = []
    last = 0
    for i, t in zip(at, new, strict=True):
        merged += vocab[last:i]
        merged.append(t)
        last = i
    merged += vocab[last:]
    return merged, at, shift


def _holds(vocab: list[str], term: str) -> bool:
    """Whether the sorted ``vocab`` holds ``term`` (bisection)."""
    i = bisect.bisect_left(vocab, term)
    return i < len(vocab) and vocab[i] == term


def _runs(starts: Any, lengths: Any) -> np.ndarray:
    """The positions ``starts[i] .. starts[i] + lengths[i] - 1`` of every run, run after run."""
    lengths = np.asarray(lengths, dtype=np.int64)
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if len(ends) else 0
    return np.repeat(np.asarray(starts, dtype=np.int64) - (ends - lengths), lengths) + np.arange(
        total, dtype=np.int64
    )
