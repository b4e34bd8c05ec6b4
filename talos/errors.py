"""Exceptions a caller can act on, and the sentence a person reads for a failure (design §9.1).

The CLI maps them to exit codes. :func:`failure_message` is the one place that turns any
failure — a talos error, an :class:`OSError`, a SQLite error, a held lock — into one sentence
that names the file and says what to do; the CLI (``handle_errors``) and the MCP server print
it instead of a traceback (issue 12 item 4: a corrupt ``usage.db``, a read-only home, a full
disk each ended in a traceback, and under ``--json`` in no envelope at all).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

__all__ = ["InputError", "StateError", "TalosError", "failure_message", "state_error"]


class TalosError(Exception):
    """Base class of talos errors; the message says what is wrong and what to do."""

    exit_code = 1


class InputError(TalosError):
    """Bad input from a person: a file, an option, a value (CLI exit code 1)."""


class StateError(TalosError):
    """A file talos keeps or writes (``usage.db``, ``index.db``, the audit log, memory.md)
    cannot be read or written: a damaged file, a read-only folder, a full disk. ``path`` is
    the file; the message names it and says what to do (CLI exit code 1)."""

    def __init__(self, message: str, path: Path | str | None = None) -> None:
        super().__init__(message)
        self.path = None if path is None else Path(path)


#: What to do, by errno: the part of the sentence after the cause.
_OS_ADVICE = {
    errno.EROFS: "the file system is read-only: remount it writable, or use a home on a "
    "writable disk, and try again",
    errno.EACCES: "permission denied: make it (and its folder) readable and writable for you, "
    "and try again",
    errno.EPERM: "not permitted: make it (and its folder) writable for you, and try again",
    errno.ENOSPC: "no space left on the disk: free some space and try again",
    errno.EDQUOT: "the disk quota is used up: free some space and try again",
    errno.ENOENT: "it does not exist: check the path",
    errno.EISDIR: "it is a folder, not a file: check the path",
    errno.ENOTDIR: "a part of the path is not a folder: check the path",
    errno.EIO: "input/output error: check the disk",
}


def _os_cause(e: OSError) -> str:
    """What went wrong and what to do, for an :class:`OSError` (without its file)."""
    return _OS_ADVICE.get(e.errno or 0) or f"{e.strerror or e}: check the file and try again"


#: What to do, by SQLite result code name (``sqlite3.Error.sqlite_errorname``).
_SQLITE_ADVICE = {
    "SQLITE_FULL": "no space left on the disk: free some space and try again",
    "SQLITE_READONLY": "it cannot be written (read-only file or folder): make the state folder "
    "writable and try again",
    "SQLITE_CANTOPEN": "it cannot be opened (a missing folder, or not a file): check the "
    "state folder and try again",
    "SQLITE_BUSY": "another talos process is using it: try again",
    "SQLITE_LOCKED": "another talos process is using it: try again",
    "SQLITE_IOERR": "input/output error: check the disk (is it full or read-only?) and try again",
    "SQLITE_PERM": "permission denied: make the state folder writable for you and try again",
}


def state_error(path: Path | str, exc: BaseException, what: str, damaged: str) -> StateError:
    """The :class:`StateError` for ``exc``, raised while using the state file ``path``.

    Args:
        path: the file. exc: an :class:`OSError` or a :mod:`sqlite3` error.
        what: what the file holds, for the sentence ("the usage counts", "the index").
        damaged: what to do when the file is damaged or not talos's (SQLite says "not a
            database", "malformed", or a schema check failed).

    Returns:
        An error whose message is ``"PATH: cannot use WHAT (CAUSE); WHAT TO DO"``.
    """
    import sqlite3  # imported on use: most commands never open a database

    if isinstance(exc, StateError):
        return exc
    if isinstance(exc, OSError):
        return StateError(f"{path}: cannot use {what}: {_os_cause(exc)}", path)
    name = getattr(exc, "sqlite_errorname", None) or ""
    base = "_".join(name.split("_")[:2])  # SQLITE_IOERR_WRITE -> SQLITE_IOERR
    if isinstance(exc, sqlite3.OperationalError) or base in _SQLITE_ADVICE:
        advice = _SQLITE_ADVICE.get(base)
        folder = Path(path).parent
        if advice is None or base in ("SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM"):
            if not os.access(folder if folder.is_dir() else folder.parent, os.W_OK | os.X_OK):
                advice = f"{folder} is not writable (a read-only disk or folder): make it "
                advice += "writable and try again"
            elif advice is None:
                advice = "check the disk and try again"
        return StateError(f"{path}: cannot use {what} ({exc}); {advice}", path)
    return StateError(f"{path}: {what} cannot be read ({exc}); {damaged}", path)


def failure_message(exc: BaseException) -> str:
    """One sentence for a failure a person or a model can act on: a talos error's message, an
    :class:`OSError` with its file and what to do, a held lock, a SQLite error. Anything else
    is a bug in talos, and says so."""
    import sqlite3  # imported on use: most commands never open a database

    if isinstance(exc, TalosError):
        return str(exc)
    lock_file = getattr(exc, "lock_file", None)
    if lock_file is not None and type(exc).__name__ == "Timeout":  # filelock.Timeout
        return f"another talos process holds the lock {lock_file}; try again"
    if isinstance(exc, OSError):
        where = exc.filename2 if exc.filename is None else exc.filename
        return f"{where}: {_os_cause(exc)}" if where is not None else _os_cause(exc)
    if isinstance(exc, sqlite3.Error):
        return f"a database in the state folder cannot be used ({exc}); run talos doctor"
    if isinstance(exc, RecursionError):
        return "input nested too deeply to read; check the file you gave"
    if isinstance(exc, MemoryError):
        return "out of memory; check the size of the files you gave"
    return (
        f"unexpected error {type(exc).__name__}: {exc} — a bug in talos; please report it "
        "with the command you ran"
    )
