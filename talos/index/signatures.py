"""Signatures: how the index tells that a file or folder changed without reading it (design §11).

A file's signature is its size, mtime and ctime (:func:`file_sig`), a folder's adds its device
and inode (:func:`dir_sig`). A file changed within a tick of the file system's clock may change
again unseen under the same signature: :func:`settled` gives it a signature that matches
nothing, so it is looked at again on the next call. :data:`READERS` is the signature of the
code that turns files into rows: rows indexed by other code are read again.

The index calls these through the module (``signatures.file_sig(...)``), so a test that patches
``talos.index.signatures.file_sig`` patches every caller.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any

__all__ = [
    "READERS",
    "dir_sig",
    "file_sig",
    "fingerprint",
    "reader_files",
    "settled",
    "size_mtime",
]


def reader_files() -> list[Path]:
    """The files of the code that decides what a file's rows are: the readers of memory.md
    and the sessions (with the transcript formats, ``sources/transcripts.py``), the fact filter
    (every module of the ``safety`` package), masking and
    its patterns (``secrets.py``, ``secret_patterns.py``), keywords, canonical names, the task
    rule that picks a session's task (``tasks.py``), the index's own row makers (a line's
    row: ``index/facts.py``; a session's row: ``index/sessions.py``) and the data files the
    fact filter reads."""
    import talos.safety
    import talos.sources.facts
    import talos.sources.sessions
    import talos.sources.tasks
    import talos.sources.transcripts
    import talos.text
    import talos.view.canon

    def files(*mods: Any) -> list[Path]:
        return [Path(str(mod.__file__)) for mod in mods]

    here = Path(__file__).parent
    safety = sorted(Path(str(talos.safety.__file__)).parent.rglob("*.py"))  # the package
    return [
        *files(talos.sources.facts, talos.sources.sessions, talos.sources.transcripts),
        *safety,
        *files(talos.text, talos.view.canon, talos.sources.tasks),
        here / "facts.py",
        here / "sessions.py",
        *_data("detect_secrets.json", "confusables.txt"),  # what the fact filter reads
    ]


def _data(*names: str) -> list[Path]:
    """The data files of ``talos/data`` the readers use (:mod:`talos.data`)."""
    return [Path(__file__).resolve().parent.parent / "data" / name for name in names]


def fingerprint(files: list[Path]) -> str:
    """A digest of the contents of ``files``, in order (one that cannot be read counts by
    its name): rows indexed by other code are re-read, never trusted."""
    h = hashlib.sha256()
    for path in files:
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(str(path).encode())
    return h.hexdigest()[:16]


#: Fingerprint of the reading code; stored in the index, compared on every refresh.
READERS = fingerprint(reader_files())


def size_mtime(path: str | Path) -> tuple[int, int]:
    """A file's size and mtime (ns), ``(-1, -1)`` when it cannot be looked at (a session
    file's signature in the sessions table). A ``str`` is looked at as it is: the sessions
    still being written are looked at on every call (30,000 ``Path`` objects took 0.25 s of a
    0.48 s refresh of a home whose sessions were all written that week)."""
    try:
        st = os.stat(path)
        return (st.st_size, st.st_mtime_ns)
    except OSError:
        return (-1, -1)


def file_sig(path: Path) -> tuple[int, int, int]:
    """Size, mtime and ctime: a same-size edit whose mtime was put back (``touch -r``,
    ``rsync -t``) still changes the ctime, which no one can set (tests/test_index_attack.py)."""
    try:
        st = path.stat()
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    except OSError:
        return (-1, -1, -1)


def dir_sig(path: Path) -> tuple[int, ...]:
    """A folder's size, mtime, ctime, device and inode: a folder swapped for another (a
    symlink retargeted, a folder moved in) is another inode, whatever its files are called."""
    try:
        st = path.stat()
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino)
    except OSError:
        return (-1, -1, -1, -1, -1)


def settled(sig: tuple[Any, ...]) -> tuple[Any, ...]:
    """``sig``, or a signature that matches nothing when the file changed so recently that
    another change within the same tick of the file system's clock would leave it equal
    (a session renamed into place right after a listing; "racy git"): such a file is looked
    at again on the next call. A tick is a few ms on file systems with sub-second times
    (window 20 ms), up to 2 s on others (``sig`` is ``(size, mtime_ns, ctime_ns, ...)``)."""
    if len(sig) < 3 or sig[1] < 0:
        return sig
    changed = max(sig[1], sig[2])
    window = 20_000_000 if sig[1] % 1_000_000_000 else 2_000_000_000
    now = time.time_ns()
    if now - changed < window:
        return (*sig, "racy", now)  # unequal to any other signature, even the next one
    return sig
