"""The ranking block: the ``evidence`` model's term index and contiguity edges of the view a
recall ranks over, stored ready to use (design §11: a cache of the files).

A process that only recalls read the view's records and episodes back from the index, then
re-derived every node's matching text, hashed it, gathered its analyzed terms and sorted the
postings (:meth:`talos.view.kept.KeptState._stored_terms`): 0.36 s of a 0.58 s ``talos recall``
at 30,000 sessions, 0.85 s of 1.3 s at 100,000 (issue 24's profiles). The block keeps the
assembled arrays of :class:`talos.ranking.evidence.TermIndex` (both orientations, the per-node CJK
lengths) and :class:`talos.ranking.contiguity.Links` under a token of all they depend on (the
records' token, the sessions' version, the code that ranks); a process reads them with one
query and no per-node Python work, float for float what it would have gathered
(``tests/test_ranking_block.py``).

One block is kept (the latest) in the ``terms`` table under the name ``ranking``
(:func:`talos.index.terms.load_terms`). A blob that
does not decode, or whose arrays do not fit together, is never used (:class:`BlockError`): the
index is gathered again and the block stored anew.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from pathlib import Path

import numpy as np

from talos.graph.stored import BlockError, _pack, _unpack
from talos.ranking.contiguity import Links
from talos.ranking.evidence import TermIndex
from talos.view.termrows import analyzer_token

__all__ = ["from_bytes", "ranking_token", "to_bytes"]

#: The code that turns a view into the stored arrays (relative to ``talos/``): a change of
#: any of them is another token.
_CODE = ("ranking/evidence.py", "ranking/contiguity.py", "view/termrows.py", "index/ranking.py")


@functools.cache
def _code() -> str:
    """A digest of :data:`_CODE` and the analyzer (:func:`talos.view.termrows.analyzer_token`)."""
    here = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(analyzer_token().encode())
    for name in _CODE:
        try:
            h.update(name.encode() + (here / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()[:16]


def ranking_token(records: str, sessions: str | None, stacked: bool) -> str:
    """The token of the ranking block of a view: its records' token
    (:meth:`talos.view.kept.KeptState._records_token`: facts, skills, scopes, day, code), the
    sessions' version (``None``: none indexed), whether the episodes are in the view
    (``stacked``) and the ranking code (:func:`_code`)."""
    return hashlib.sha256(
        f"{records}\0{sessions}\0{int(stacked)}\0{_code()}".encode("utf-8", "surrogatepass")
    ).hexdigest()


def to_bytes(
    index: TermIndex, links: Links, token: str, rows: np.ndarray | None = None, serial: str = ""
) -> bytes:
    """The term index and edges as one blob (:func:`from_bytes` reads them back exactly),
    with each node's term row (``rows``, ``int64[n]``) in the stored term rows named
    ``serial`` (:attr:`talos.view.termrows.TermRows.serial`; None: not kept), the base of a term
    index patched after an edit or a new session (:mod:`talos.view.termpatch`).

    Raises:
        ValueError: a term is empty or holds a newline, or a count is not a whole number
            (the analyzer never makes either).
    """
    if any("\n" in t or not t for t in index.vocab):
        raise ValueError("a term is empty or holds a newline")

    def arr(a: np.ndarray, dtype: str) -> bytes:
        return np.ascontiguousarray(a, dtype=dtype).tobytes()

    def counts(tf: np.ndarray) -> bytes:
        whole = np.asarray(tf).astype(np.int32)
        if not np.array_equal(whole, tf):
            raise ValueError("a term count that is not a whole number")  # counts never are
        return whole.tobytes()

    parts = [
        ("vocab", "bytes", "\n".join(index.vocab).encode("utf-8", "surrogatepass")),
        ("cjk", "uint8", arr(index.cjk, "uint8")),
        ("ptr", "int64", arr(index.ptr, "int64")),
        ("term", "int32", arr(index.term, "int32")),
        ("tf", "int32", counts(index.tf)),
        ("kptr", "int64", arr(index.kptr, "int64")),
        ("knode", "int32", arr(index.knode, "int32")),
        ("ktf", "int32", counts(index.ktf)),
        ("cjk_len", "float64", arr(index.cjk_len, "float64")),
        ("links_ptr", "int64", arr(links.ptr, "int64")),
        ("links_src", "int32", arr(links.src, "int32")),
        ("links_dst", "int32", arr(links.dst, "int32")),
        ("links_share", "float64", arr(links.share, "float64")),
        ("links_out", "float64", arr(links.out, "float64")),
        ("links_ahead", "uint8", arr(links.ahead, "uint8")),
        ("rows", "int64", b"" if rows is None else arr(rows, "int64")),
    ]
    meta = {"token": token, "serial": serial if rows is not None else ""}
    return _pack("ranking", parts, meta)


def _agree(
    vocab: list[str],
    ptr: np.ndarray,
    term: np.ndarray,
    tf: np.ndarray,
    kptr: np.ndarray,
    knode: np.ndarray,
    ktf: np.ndarray,
    cjk_len: np.ndarray,
) -> bool:
    """Whether the two orientations of a stored term index tell one story: the vocabulary
    sorted and distinct, counts of at least 1, each term's holders as many as the node-major
    entries that name it, each node's entries as many as the term-major entries that name
    it, the same total count, and finite CJK lengths (a blob whose checksum was made to fit
    lied in any of these and was used: the hostile pass of this block). Sizes and ranges are
    checked before this. Cost: about 25 ms of a 58 ms decode at 100,000 sessions (3.2 M
    entries; a recall process 0.75 s)."""
    n, v = len(ptr) - 1, len(vocab)
    return (
        all(a < b for a, b in itertools.pairwise(vocab))
        and (not len(tf) or (int(tf.min()) >= 1 and int(ktf.min()) >= 1))
        and int(tf.sum(dtype=np.int64)) == int(ktf.sum(dtype=np.int64))
        and np.array_equal(np.bincount(term, minlength=v), np.diff(kptr))
        and np.array_equal(np.bincount(knode, minlength=n), np.diff(ptr))
        and bool(np.all(np.isfinite(cjk_len)))
        and bool(np.all(cjk_len >= 0))
    )


def _links_agree(
    lptr: np.ndarray, src: np.ndarray, dst: np.ndarray, share: np.ndarray, out: np.ndarray
) -> bool:
    """Whether stored contiguity edges are edges: each sender the owner of its row, no node
    its own neighbour, shares in (0, 1], and each node's ``out`` the sum of its shares, at
    most 1 (:class:`talos.ranking.contiguity.Links`)."""
    n = len(lptr) - 1
    owner = np.repeat(np.arange(n), np.diff(lptr).astype(np.intp))
    return (
        np.array_equal(owner, src)
        and not bool(np.any(src == dst))
        and bool(np.all(np.isfinite(share)))
        and bool(np.all((share > 0) & (share <= 1)))
        and bool(np.all(np.isfinite(out)))
        and bool(np.all((out >= 0) & (out <= 1 + 1e-9)))
        and np.allclose(np.bincount(src, weights=share, minlength=n), out, rtol=0, atol=1e-9)
    )


def from_bytes(data: bytes, token: str) -> tuple[TermIndex, Links, np.ndarray | None, str]:
    """Decode :func:`to_bytes`: a :class:`~talos.ranking.evidence.TermIndex` (no ids: one empty list
    per node, as the gathered one), its :class:`~talos.ranking.contiguity.Links`, the nodes' term
    rows (None: not kept) and the serial of the term rows they are in.

    Raises:
        BlockError: not a ranking blob of this layout, stored under another ``token``, or
            arrays that do not fit together (sizes, ids out of range, offsets not ascending).
    """
    meta, got = _unpack(data, "ranking")
    if not isinstance(meta, dict) or meta.get("token") != token:
        raise BlockError("ranking block of another view")
    try:
        text = bytes(got["vocab"]).decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as e:
        raise BlockError(f"unreadable ranking block ({e})") from e
    vocab = text.split("\n") if text else []
    v = len(vocab)
    ptr = got["ptr"].astype(np.intp)
    kptr = got["kptr"].astype(np.intp)
    term = got["term"].astype(np.intp)
    knode = got["knode"].astype(np.intp)
    n = len(ptr) - 1
    lptr, src, dst = got["links_ptr"], got["links_src"], got["links_dst"]
    edges = len(dst)
    rows = got["rows"]
    serial = meta.get("serial")

    def ranged(a: np.ndarray, top: int) -> bool:
        return not len(a) or (int(a.min()) >= 0 and int(a.max()) < top)

    def offsets(a: np.ndarray, total: int) -> bool:
        return (
            len(a) >= 1 and int(a[0]) == 0 and int(a[-1]) == total and bool(np.all(a[1:] >= a[:-1]))
        )

    tf, ktf, cjk_len = got["tf"], got["ktf"], got["cjk_len"]
    share, out = got["links_share"], got["links_out"]
    if not (
        n >= 0
        and len(got["cjk"]) == v
        and offsets(ptr, len(term))
        and len(got["tf"]) == len(term)
        and len(kptr) == v + 1
        and offsets(kptr, len(knode))
        and len(knode) == len(term)
        and len(got["ktf"]) == len(term)
        and len(got["cjk_len"]) == n
        and ranged(term, v)
        and ranged(knode, n)
        and len(lptr) == n + 1
        and offsets(lptr, edges)
        and len(src) == edges
        and len(got["links_share"]) == edges
        and len(got["links_out"]) == n
        and len(got["links_ahead"]) == edges
        and ranged(src, n)
        and ranged(dst, n)
        and len(rows) in (0, n)
        and isinstance(serial, str)
        and (not len(rows) or int(rows.min()) >= 0)
    ) or not _agree(vocab, ptr, term, tf, kptr, knode, ktf, cjk_len):
        raise BlockError("inconsistent ranking block")
    if not _links_agree(lptr, src, dst, share, out):
        raise BlockError("inconsistent ranking block (edges)")
    index = TermIndex.from_parts(
        vocab=vocab,
        lookup={t: i for i, t in enumerate(vocab)},
        ptr=ptr,
        term=term,
        tf=got["tf"].astype(np.float64),
        df=np.diff(kptr).astype(np.float64),
        cjk=got["cjk"].astype(bool),
        cjk_len=got["cjk_len"],
        kptr=kptr,
        knode=knode,
        ktf=got["ktf"].astype(np.float64),
    )
    links = Links(
        lptr.astype(np.intp),
        src.astype(np.intp),
        dst.astype(np.intp),
        got["links_share"],
        got["links_out"],
        got["links_ahead"].astype(bool),
    )
    kept = rows if len(rows) == n and serial and n else None
    return index, links, kept, serial if kept is not None else ""
