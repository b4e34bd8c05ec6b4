"""Writes to ``memory.md``: atomic, locked across processes, audited (SPEC §6.5, §7.6).

Every write takes the home's memory lock, appends its before/after to the audit log *first*
(so a kill after the audit line but before the rename leaves a recoverable record, never a
line lost without one), then replaces the file atomically (:mod:`talos.fsutil`). Lines that
are not valid UTF-8 are carried over byte for byte: no line a person wrote is ever lost.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import filelock

from talos.fsutil import atomic_write_bytes
from talos.home import Paths
from talos.sources.facts import ParsedFact, parse_fact_line

__all__ = ["LOCK_TIMEOUT", "RemovedLine", "append_audit", "memory_lock", "remove_fact_lines"]

#: Seconds to wait for another process's write before giving up with an error.
LOCK_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class RemovedLine:
    """A line taken out of memory.md: its 1-based number, exact text and audit id."""

    line: int
    raw: str
    id: str


def memory_lock(paths: Paths) -> filelock.FileLock:
    """The inter-process lock around every read-modify-write of memory.md."""
    paths.lock_dir.mkdir(parents=True, exist_ok=True)
    return filelock.FileLock(str(paths.lock_dir / "memory.lock"), timeout=LOCK_TIMEOUT)


def line_id(raw: str) -> str:
    """A short, stable id of a line's exact text (used to restore it from the audit log)."""
    return hashlib.sha256(raw.encode("utf-8", errors="surrogatepass")).hexdigest()[:12]


def append_audit(paths: Paths, records: list[dict[str, object]]) -> None:
    """Append records to the audit log, one JSON line each, flushed and fsynced.

    Raises:
        OSError: the log cannot be written; the caller must then not change memory.md.
    """
    if not records:
        return
    paths.audit_file.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
    fd = os.open(paths.audit_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_fact_lines(
    paths: Paths, doomed: Callable[[ParsedFact], bool], op: str, reason: str
) -> list[RemovedLine]:
    """Remove every memory.md line whose parsed fact satisfies ``doomed``.

    Args:
        paths: the home's paths.
        doomed: decides per parsed line; undecodable and non-fact lines are always kept.
        op: the audit operation name (``forget``, ``revoke``, ...).
        reason: why, for the audit log.

    Returns:
        The removed lines, in file order ([] when none matched or the file is missing; the
        file is then not rewritten).

    Raises:
        filelock.Timeout: another writer held the lock for :data:`LOCK_TIMEOUT` seconds.
        OSError: the audit log or memory.md cannot be written (memory.md is then unchanged).
    """
    with memory_lock(paths):
        try:
            data = paths.memory_file.read_bytes()
        except FileNotFoundError:
            return []
        kept: list[bytes] = []
        removed: list[RemovedLine] = []
        for no, blob in enumerate(data.split(b"\n"), 1):
            try:
                line = blob.decode("utf-8")
            except UnicodeDecodeError:
                kept.append(blob)
                continue
            parsed = parse_fact_line(line)
            if parsed is not None and doomed(parsed):
                raw = line.rstrip("\r")
                removed.append(RemovedLine(no, raw, line_id(raw)))
            else:
                kept.append(blob)
        if not removed:
            return []
        now = int(time.time())
        append_audit(
            paths,
            [
                {
                    "t": now,
                    "op": op,
                    "id": r.id,
                    "file": str(paths.memory_file),
                    "line": r.line,
                    "before": r.raw,
                    "after": None,
                    "reason": reason,
                }
                for r in removed
            ],
        )
        atomic_write_bytes(paths.memory_file, b"\n".join(kept))
        return removed
