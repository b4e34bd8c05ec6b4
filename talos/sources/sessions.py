"""Episodes: the opening request of each past session (design §3.3).

A session file is a ``.jsonl`` transcript of talos's own format, Claude Code's or Codex's,
detected per file (:mod:`talos.sources.transcripts`, which knows what a line of each says).
Each reader yields "the first thing the user asked", never the agents' own injections.

Every model but ``classic`` also reads what the session was about and what it did (design §3.3,
:func:`read_session`): its *task*, the first request that is no bare slash command
(``/review``, a Claude Code ``<command-name>`` echo; one with arguments that name a task is the
person's words, ``/fix the billing bug``), nor the command's canned text that follows it
before any answer, nor a continuation ("keep going", "继续":
:func:`talos.sources.tasks.names_a_task`,
the hooks' rule; Claude Code's summary of a continued session, whose stated request is the
task); and its *outcome*, the assistant's last answer (read from the file's tail:
:data:`OUTCOME_SCAN_BYTES`, growing to :data:`SESSION_SCAN_BYTES`), never a line Claude Code
wrote itself (``API Error: …``, ``No response requested.``).

Another agent's folder is read by pointing ``sessions_dir`` at it. A folder path whose last
part is ``**`` (e.g. ``~/.claude/projects/**``) is read recursively, for agents that keep one
subfolder per project or per day; files load sorted by their path relative to the folder, which
is time order for Talos and Codex names. ``sessions_dir`` may list several folders (issue 16.4):
they load one after the other in the list's order (:func:`session_folders`, :class:`Folder`); a
folder given twice counts once and a file reached through two of them is read once.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from talos import fsutil
from talos.model import Node
from talos.safety.episodes import episode_field, name_withheld, read_together
from talos.sources.session_parts import encode
from talos.sources.tasks import names_a_task
from talos.sources.transcripts import (
    AGENT_NAMES,
    FORMATS,
    answer,
    claude_mark,
    claude_typed,
    detect,
    session_cwd,
    summary_task,
)
from talos.text import matching_keywords
from talos.warn import warn

__all__ = [
    "AGENT_NAMES",
    "EPISODE_CHARS",
    "FORMATS",
    "OUTCOME_CHARS",
    "RECURSIVE_MARK",
    "Folder",
    "Origin",
    "Sessions",
    "Summary",
    "detect",
    "first_user_request",
    "folder_of",
    "load_episodes",
    "read_session",
    "refused_sessions",
    "session_files",
    "session_folders",
    "session_names",
    "session_origin",
    "sessions_root",
]

#: An episode's text is the first 80 characters of the session's first user request.
EPISODE_CHARS = 80

#: Most characters of a session's outcome (its assistant's last answer) that are kept, shown
#: and matched (design §3.3: bounded, a visible cut; matching sees only what can be shown, as
#: a skill's 1200). 240: three lines of a terminal, a summary's length; a long answer's
#: head says what was done, its tail is detail.
OUTCOME_CHARS = 240

#: Bytes of a session's tail first read for its last answer; the window grows eightfold up
#: to :data:`SESSION_SCAN_BYTES` while no answer is in it (a Claude Code tool result can be
#: a line of hundreds of kilobytes).
OUTCOME_SCAN_BYTES = 256 << 10

#: A slash command as a person types it: ``/review``, ``/compact keep it short``; not a path
#: (``/etc/hosts is gone``: the name goes on with ``/``).
_SLASH = re.compile(r"/[A-Za-z][\w:.-]*(?:\s|$)")

#: A session is read until its first request, but never more than this many bytes: a
#: transcript of junk (``/dev/zero``-like, one endless line) cannot exhaust memory.
SESSION_SCAN_BYTES = 64 << 20

#: A lone surrogate (a ``"\ud800"`` escape in the JSON): no output can print it as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")

#: Last part of a sessions path that asks for a recursive read (``DIR/**``).
RECURSIVE_MARK = "**"


def first_user_request(path: Path, folder: Path | str | None = None) -> str:
    """The first real user request of a ``.jsonl`` session, in whichever format it is written.

    The format is decided by the first line :func:`detect` recognises; lines before that are
    skipped. Talos format keeps the reference's rules exactly: lines that are JSON but not
    objects, or whose ``content`` is not a string (a list of parts), are skipped, and a line that
    is not JSON at all ends the read — the file is treated as damaged from there on. The golden
    fixture ``home-basic/.talos/sessions/2026-07-07T09.jsonl`` pins it (its request follows a
    garbled line and must not become an episode); design §3.3's "skipped" is narrowed accordingly.
    A non-JSON line also ends the read before any format is known (that is the same fixture). In
    Claude Code and Codex files, which are append-only logs, a non-JSON line (a torn write) is
    skipped.

    At most :data:`SESSION_SCAN_BYTES` are read, line by line. The file is opened only inside
    ``folder`` (default: its own folder), as a regular file with one name
    (:func:`talos.fsutil.open_entry`): a session swapped for a link out of the folder after
    the listing, or a hard link, is refused with one warning (hostile pass of issue 13).

    Returns:
        The request text, or "" when there is none (or the file cannot be read).
    """
    return _read(path, folder, outcome=False).request


class Summary(NamedTuple):
    """What a session file says (:func:`read_session`): ``request``, the first user request
    (the reference's episode, :func:`first_user_request`); ``task``, the first real request
    ("" when none is: the request stands for it); ``outcome``, the assistant's last answer
    ("" when none); ``cwd``, the working folder the transcript names up to its task
    (:func:`talos.sources.transcripts.session_cwd`; "" when none: talos's own format), which
    decides the episode's scope (design §3.3); ``day`` and ``last_day``, the UTC days of the
    first time stamp up to the request and of the last one in the tail read for the outcome
    ("" when none), the session's dates an ask's time words are matched against (§7.3);
    ``parts``, each request that names a task with the last answer before the next one
    (:func:`_parts`; design §3.3: a long session shows the part an ask matched)."""

    request: str
    task: str
    outcome: str
    cwd: str = ""
    day: str = ""
    last_day: str = ""
    parts: tuple[tuple[str, str], ...] = ()


def read_session(path: Path, folder: Path | str | None = None) -> Summary:
    """The opening request, the real task and the outcome of a ``.jsonl`` session (design §3.3).

    The request is :func:`first_user_request`'s. The task is the first request after it (or
    it) that names a task (:func:`talos.sources.tasks.names_a_task`, the hooks' rule: two words, not
    "keep going" / "继续") and is neither a slash command (``/review``, a Claude Code
    ``<command-name>`` echo) nor the text a command put in the person's turn (the next user
    turn before any answer; a local command's output ends that). A command whose arguments
    name a task is the task as typed (``/fix the billing bug``, a Claude Code echo's
    ``<command-args>``); a Claude Code compaction summary (continued session) is no request,
    and the request it states is the task. The outcome is the text of the last assistant
    message (Claude Code's text parts but its synthetic lines, Codex ``output_text`` and
    ``agent_message``, talos's ``content``), from the file's tail. Same limits as
    :func:`first_user_request` (bytes read, the file opened only inside ``folder``).

    Returns:
        The :class:`Summary`; every field "" when the file has no request or cannot be read.
    """
    return _read(path, folder, outcome=True)


def _read(path: Path, folder: Path | str | None, outcome: bool) -> Summary:
    """:func:`read_session`, without the outcome unless asked."""
    real = os.path.realpath(path.parent if folder is None else folder)
    try:
        with fsutil.open_entry(path, real) as f:  # never a FIFO (issue 12.3), nor outside
            where: dict[str, Any] = {}
            fmt, request, task = _opening(f, outcome, where)
            answer = _last_answer(f, fmt, where) if outcome and request else ""
            parts = _parts(f, fmt) if outcome and request else ()
            first = where.get("day", "")
            return Summary(
                request, task, answer, where.get("cwd", ""), first, where.get("last", first), parts
            )
    except fsutil.RefusedEntry as e:
        key = (str(path), e.evidence)
        if key not in _WARNED and warn(f"{e}", scopes={"global"}):  # episodes are global's
            _WARNED.add(key)
    except OSError:
        pass
    return Summary("", "", "")


def _opening(f: BinaryIO, task: bool, where: dict[str, Any] | None = None) -> tuple[str, str, str]:
    """``(format, request, task)`` of an open session, read from its start: the request by
    the reference's rules (:func:`first_user_request`), then, when ``task``, on to the first
    real request (:func:`read_session`); the task is "" when none is found or the request
    is it. A task may come before the request: a Claude Code command echo with arguments
    (:func:`~talos.sources.transcripts.claude_typed`) or a compaction summary's stated
    request; the read then goes on to the request. The first working folder a line names
    (:func:`~talos.sources.transcripts.session_cwd`) and the day of the first time stamp up
    to the request (:func:`_day_of`) go to ``where`` (``cwd``, ``day``)."""
    reader: Callable[[Any], str | None] | None = None
    fmt, request, canned, early = "", "", False, ""
    for obj in _json_lines(f, SESSION_SCAN_BYTES):
        if where is not None:
            if "cwd" not in where and (cwd := session_cwd(obj)):
                where["cwd"] = cwd
            if "day" not in where and not request and (day := _day_of(_stamp(obj))):
                where["day"] = day
        if obj is _TORN:
            if reader is None or fmt == "talos":
                return fmt, request, early if request else ""
            continue
        if reader is None:
            fmt = detect(obj) or ""
            if not fmt:
                continue
            reader = FORMATS[fmt]
        said = reader(obj)
        if said:
            first = not request
            request = request or said
            if not task:
                return fmt, request, ""
            if early:
                return fmt, request, early
            if canned:
                canned = False  # a command's text in the person's turn
            elif m := _SLASH.match(said.lstrip()):
                if names_a_task(said.lstrip()[m.end() :]):  # its arguments: the person's words
                    return fmt, request, "" if first else said.strip()
                canned = True
            elif names_a_task(said):
                return fmt, request, "" if first else said
        elif answer(fmt, obj) is not None:
            canned = False
        elif fmt == "claude":
            mark = claude_mark(obj)
            if mark:
                canned = mark == "command"
            if task and not early and mark in ("command", "summary"):
                early = (
                    claude_typed(obj) if mark == "command" else summary_task(obj, 4 * EPISODE_CHARS)
                )
    return fmt, request, early if request else ""


def _last_answer(f: BinaryIO, fmt: str, where: dict[str, Any] | None = None) -> str:
    """The last non-empty assistant text of an open session in ``fmt`` (:func:`answer`),
    read from its tail (:data:`OUTCOME_SCAN_BYTES`, growing eightfold to
    :data:`SESSION_SCAN_BYTES`); "" when none. The day of the last time stamp read goes to
    ``where["last"]``."""
    try:
        size = os.fstat(f.fileno()).st_size
    except OSError:
        return ""
    window = OUTCOME_SCAN_BYTES
    while True:
        start = max(0, size - window)
        f.seek(start)
        if start:
            f.readline(SESSION_SCAN_BYTES)  # the rest of a line cut by the window
        last = ""
        for obj in _json_lines(f, size - start + 1):
            if obj is not _TORN:
                said = answer(fmt, obj)
                if said:
                    last = said
                if where is not None and (day := _day_of(_stamp(obj))):
                    where["last"] = day
        if last or not start or window >= SESSION_SCAN_BYTES:
            return last
        window *= 8


#: Bytes of a session read from its start for its parts (:func:`_parts`): a long Claude Code
#: session is mostly tool output; its requests are spread over it.
PARTS_SCAN_BYTES = 16 << 20

#: Lines that hold neither a request nor an answer: tool results (Claude Code) and tool
#: output (Codex), most of a long session's bytes; not parsed for its parts (a 6 MB session
#: of tool output: 53 → 19 ms a file; without parts 0.6 ms: docs/benchmarks.md §10).
_NO_PART = (b'"tool_result"', b'"function_call_output"', b'"custom_tool_call_output"')


def _parts(f: BinaryIO, fmt: str) -> tuple[tuple[str, str], ...]:
    """Each request of an open session that names a task — not a slash command, nor the
    canned text a command put in the person's turn, nor a continuation ("keep going":
    :func:`~talos.sources.tasks.names_a_task`) — with the last assistant answer before the
    next one ("" when none), in order; read from the start, at most
    :data:`PARTS_SCAN_BYTES` (:mod:`talos.sources.session_parts` keeps them)."""
    f.seek(0)
    reader = FORMATS.get(fmt)
    if reader is None:
        return ()
    parts: list[list[str]] = []
    canned = False
    for obj in _json_lines(f, PARTS_SCAN_BYTES, _NO_PART):
        if obj is _TORN:
            continue
        said = reader(obj)
        if said:
            text = said.strip()
            if canned:
                canned = False
            elif m := _SLASH.match(text):
                if names_a_task(text[m.end() :]):
                    parts.append([text, ""])
                else:
                    canned = True
            elif names_a_task(text):
                parts.append([text, ""])
            continue
        got = answer(fmt, obj)
        if got is not None:
            canned = False
            if got and parts:
                parts[-1][1] = got
        elif fmt == "claude" and claude_mark(obj) == "command":
            canned = True
    return tuple((t, o) for t, o in parts)


#: What :func:`_json_lines` yields for a line that is not JSON (a torn write).
_TORN: Any = object()


def _json_lines(f: BinaryIO, budget: int, skip: tuple[bytes, ...] = ()) -> Iterator[Any]:
    """The JSON value of each line of ``f``, reading at most ``budget`` bytes; :data:`_TORN`
    for a line that does not parse (or nests too deep: ``bench/fuzz_readers.py``). A line
    holding one of ``skip`` is passed over unparsed."""
    while budget > 0:
        blob = f.readline(budget)
        if not blob:
            return
        budget -= len(blob)
        if skip and any(s in blob for s in skip):
            continue
        try:
            yield json.loads(blob.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            yield _TORN


#: Bytes of a session read for its origin: its format and first time stamp are on its first
#: lines (a Codex ``session_meta``, a Claude Code ``user`` line), not megabytes in.
ORIGIN_SCAN_BYTES = 1 << 20

#: A day ``YYYY-MM-DD`` in a file name (``2026-07-07T09.jsonl``,
#: ``rollout-2025-05-07T17-24-21-….jsonl``), not inside a longer run of digits.
_NAME_DAY = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


class Origin(NamedTuple):
    """Where an episode came from: ``agent`` (:data:`AGENT_NAMES`, "" when the format is not
    known) and ``day`` (``YYYY-MM-DD``, UTC; "" when no day can be told)."""

    agent: str
    day: str


def _day_of(stamp: Any) -> str:
    """The UTC day of a transcript's time stamp: an ISO 8601 string (``2026-11-30T09:12:33Z``,
    an offset converted to UTC, none taken as UTC) or Unix seconds (milliseconds above 1e11);
    "" when it is neither, or a day after tomorrow (:func:`_ahead`)."""
    try:
        if isinstance(stamp, str) and len(stamp) <= 64:
            t = dt.datetime.fromisoformat(stamp.strip())
            if t.tzinfo is not None:
                t = t.astimezone(dt.UTC)
        elif isinstance(stamp, int | float) and not isinstance(stamp, bool):
            t = dt.datetime.fromtimestamp(stamp / 1000 if stamp > 1e11 else stamp, dt.UTC)
        else:
            return ""
    except (ValueError, OverflowError, OSError):
        return ""
    return t.date().isoformat() if t.year >= 1970 and not _ahead(t.date()) else ""


def _ahead(day: dt.date) -> bool:
    """Whether ``day`` is after tomorrow (UTC): a clock error, not the day of a session (the
    rule of a tag's date, :func:`talos.view.trust.clock_error`); a session stamped 2226-12-07
    was shown as the most recent of all (tests/test_clock_attack.py)."""
    return day > dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)


def _stamp(obj: Any) -> Any:
    """The time stamp of one transcript line: ``timestamp`` on the line (Claude Code, Codex
    envelopes and the old Codex header) or in a Codex ``session_meta`` payload."""
    if not isinstance(obj, dict):
        return None
    if "timestamp" in obj:
        return obj["timestamp"]
    payload = obj.get("payload")
    return payload.get("timestamp") if isinstance(payload, dict) else None


def _name_day(name: str) -> str:
    """The day a file name spells (:data:`_NAME_DAY`, a real date not after tomorrow), or ""."""
    m = _NAME_DAY.search(name)
    if m is None:
        return ""
    try:
        day = dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return ""
    return "" if _ahead(day) else day.isoformat()


def session_origin(path: str | os.PathLike[str]) -> Origin:
    """The agent and the day of a session file, for its episode line (issue 16.4).

    The agent is the transcript's format (:func:`detect`: ``talos``, ``Claude Code``,
    ``Codex``). The day is the session's own: the first time stamp in the file up to its first
    request (Claude Code and Codex stamp every line; talos's own format has none); else a date
    in the file's name (talos and Codex name sessions by their start); else none — the day a
    file was last written (its mtime: a copy, a checkout, a sync) is no date of the session,
    and a row shows only dates its data carries (design §6.1 rule 5). All in UTC. Reads at
    most :data:`ORIGIN_SCAN_BYTES`, only a regular file inside its own folder
    (:func:`talos.fsutil.open_entry`); cached per path, size and mtime.

    Returns:
        The :class:`Origin`; ``Origin("", "")`` when the file is gone.
    """
    name = os.fspath(path)
    try:
        st = os.stat(name, follow_symlinks=False)
    except (OSError, ValueError):
        return Origin("", "")
    return _origin(name, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _origin(name: str, size: int, mtime_ns: int) -> Origin:
    """:func:`session_origin` of a file of this ``size`` and ``mtime_ns``."""
    fmt, stamp = "", None
    try:
        with fsutil.open_entry(name, os.path.realpath(os.path.dirname(name) or ".")) as f:
            for obj in _json_lines(f, ORIGIN_SCAN_BYTES):
                if fmt and stamp is not None:
                    break
                if obj is _TORN:
                    continue
                fmt = fmt or detect(obj) or ""
                if stamp is None and _day_of(_stamp(obj)):
                    stamp = _stamp(obj)
                if fmt and FORMATS[fmt](obj):
                    break  # the first request: a later stamp is not the session's start
    except OSError:  # gone, unreadable, or refused (fsutil.RefusedEntry): the name tells
        pass
    day = _day_of(stamp) if stamp is not None else ""
    if not day:
        day = _name_day(os.path.basename(name))
    return Origin(AGENT_NAMES.get(fmt, ""), day)


def sessions_root(sessions_dir: Path) -> tuple[Path, bool]:
    """Split a sessions path into ``(folder, recursive)``: ``DIR/**`` reads DIR recursively."""
    if sessions_dir.name == RECURSIVE_MARK:
        return sessions_dir.parent, True
    return sessions_dir, False


#: The sessions setting: one path, or a list of them (issue 16.4).
Sessions = Path | Sequence[Path]


class Folder(NamedTuple):
    """One sessions folder as listed: ``root`` (as configured, ``/**`` split off),
    ``recursive``, ``real`` (its resolved path, which tells two spellings apart) and
    ``prefix`` of its files' sort keys: "" when it is the only folder, else its place in
    the list as three digits and ``/`` (``000/``, ``001/``…; at most
    :data:`talos.home.MAX_SESSIONS_DIRS` folders), so the folders load one after
    the other in the list's order and no two folders' keys can be equal. One folder's keys
    are its relative paths, exactly as before lists (issue 16.4)."""

    root: Path
    recursive: bool
    real: str
    prefix: str


def session_folders(sessions: Sessions) -> list[Folder]:
    """The sessions folders in load order, a folder given twice (two spellings, a link and
    its target, with the same ``/**``) kept once, at its first place (issue 16.4)."""
    entries = [sessions] if isinstance(sessions, Path) else list(sessions)
    out: list[Folder] = []
    seen: set[tuple[str, bool]] = set()
    for entry in entries:
        root, recursive = sessions_root(entry)
        real = os.path.realpath(root)
        if (real, recursive) in seen:
            continue
        seen.add((real, recursive))
        out.append(Folder(root, recursive, real, f"{len(out):03d}/"))
    if len(out) == 1:
        out[0] = out[0]._replace(prefix="")
    return out


def folder_of(key: str, folders: Sequence[Folder]) -> Folder:
    """The folder (of :func:`session_folders`) a session's sort key belongs to."""
    return folders[int(key[:3])] if len(folders) > 1 else folders[0]


def session_files(sessions_dir: Sessions) -> list[Path]:
    """The ``*.jsonl`` files of ``sessions_dir``, sorted by path relative to the folder (for
    flat folders: by name, which is time order); [] when missing. ``DIR/**`` also reads every
    subfolder of DIR. Several folders: one after the other, in the list's order."""
    return [Path(full) for _key, full in session_names(sessions_dir)]


def session_names(sessions_dir: Sessions, ordered: bool = True) -> list[tuple[str, str]]:
    """:func:`session_files` as ``(sort key, full path)`` strings, in the same order (in
    the folders' order with ``ordered=False``: sorting 30,000 names that share long prefixes
    takes 10 ms, and the index keeps each file's sort key).

    The sort key is the path relative to the folder; with several folders it starts with
    the folder's place in the list (:class:`Folder`). A file reached through two
    folders (``DIR`` and ``DIR/**``, a folder and a link into it) is listed once, from the
    first (issue 16.4).

    A flat folder is listed with ``os.scandir`` (the file type comes with the listing) and
    paths are joined as strings: at 30,000 sessions pathlib's glob, a stat per file and a
    sort key built per path took about a second of every refresh that found the folder
    changed (design §11)."""
    folders = session_folders(sessions_dir)
    if len(folders) == 1:
        return _folder_names(folders[0].root, folders[0].recursive, ordered)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for folder in folders:
        names = _folder_names(folder.root, folder.recursive, ordered)
        if not any(_overlap(folder, other) for other in folders if other is not folder):
            out += [(folder.prefix + rel, full) for rel, full in names]  # the common case
            continue
        base = folder.real if folder.real.endswith(os.sep) else folder.real + os.sep
        for rel, full in names:
            real = base + rel
            if real not in seen:
                seen.add(real)
                out.append((folder.prefix + rel, full))
    return out


def _overlap(a: Folder, b: Folder) -> bool:
    """Whether one file can be listed from both folders: the same folder, or one inside the
    other that is read with ``/**``. (Only then are the files told apart by their real path,
    a set lookup per file: 14 ms a refresh at 3,000 sessions.)"""
    if a.real == b.real:
        return True
    inside = os.path.commonpath([a.real, b.real])
    return (inside == a.real and a.recursive) or (inside == b.real and b.recursive)


def _folder_names(root: Path, recursive: bool, ordered: bool) -> list[tuple[str, str]]:
    """:func:`session_names` of one folder: ``(path relative to it, full path)``."""
    try:
        if recursive:
            found = [(p.relative_to(root).as_posix(), str(p)) for p in root.rglob("*.jsonl")]
            return sorted(
                (rel, full)
                for rel, full in found
                if _readable(root, rel) and not _refused(root, full) and os.path.isfile(full)
            )
        base = str(root)
        with os.scandir(base) as it:
            names = [
                e.name
                for e in it
                if _is_jsonl(e.name)
                and (e.is_file(follow_symlinks=False) or _linked_file(root, e.path, e))
            ]
    except OSError:
        return []
    names = [n for n in names if n.isascii() or _readable(root, n)]
    if ordered:
        names.sort()
    prefix = "" if base == "." else base if base.endswith(os.sep) else base + os.sep
    return [(name, prefix + name) for name in names]  # as str(Path(base) / name) spells it


_WARNED: set[tuple[str, str]] = set()


def _linked_file(root: Path, path: str, entry: os.DirEntry[str]) -> bool:
    """Whether a listed entry that is not a plain regular file is a session to read: a link
    to a regular file inside the folder. Anything else that would be read as a session (a
    link out of the folder, a FIFO, a device) is refused with one warning (issue 13.5)."""
    if entry.is_dir():  # a folder named like a session (or a link to one): not a file
        return False
    return not _refused(root, path) and entry.is_file()


def _refused(root: Path, path: str) -> bool:
    """Whether the session file ``path`` of the folder ``root`` is refused
    (:func:`talos.fsutil.entry_refusal`); warned once per process and reason."""
    try:
        lst = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISDIR(lst.st_mode) or (stat.S_ISREG(lst.st_mode) and not fsutil.kernel_fs(lst)):
        return False
    refusal = fsutil.entry_refusal(path, lst, os.path.realpath(root))
    if refusal is None:
        return False
    key = (path, refusal[1])
    if key not in _WARNED and warn(  # episodes are global's (design §7.3)
        f"{path}: not read: {refusal[0]} ({refusal[1]}); see talos scan", scopes={"global"}
    ):
        _WARNED.add(key)
    return True


def refused_sessions(sessions_dir: Sessions) -> list[tuple[str, str, str]]:
    """The files of the sessions folders that talos refuses to read, as ``(path, reason,
    evidence)`` sorted by path: links that lead outside their folder, ``.jsonl`` entries that
    are not regular files (issue 13.5; ``talos scan`` lists them). A file reached through two
    folders is listed once."""
    out: set[tuple[str, str, str]] = set()
    for folder in session_folders(sessions_dir):
        out.update(_refused_in(folder.root, folder.recursive))
    return sorted(out)


def _refused_in(root: Path, recursive: bool) -> list[tuple[str, str, str]]:
    """:func:`refused_sessions` of one folder."""
    real = os.path.realpath(root)
    out: list[tuple[str, str, str]] = []
    try:
        if recursive:
            paths = [str(p) for p in root.rglob("*.jsonl")]
        else:
            with os.scandir(root) as it:
                paths = [e.path for e in it if _is_jsonl(e.name)]
    except OSError:
        return []
    for path in paths:
        try:
            lst = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(lst.st_mode):
            continue
        refusal = fsutil.entry_refusal(path, lst, real)
        if refusal is not None:
            out.append((path, *refusal))
    return out


def _readable(root: Path, name: str) -> bool:
    """Whether a file name is text (UTF-8); a name of other bytes is skipped on every route
    with a warning that names it: the index stores names as text, and the file is left as
    it is (tests/test_hostile_incremental.py)."""
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        warn(  # episodes are global's: a request without global is not told (design §7.3)
            f"{root}: session file {os.fsencode(name)!r} has a name that is not UTF-8; skipped",
            scopes={"global"},
        )
        return False


def _is_jsonl(name: str) -> bool:
    """Whether ``name`` matches ``*.jsonl`` as pathlib's glob does (case as the OS folds)."""
    return (_FOLD(name) if _FOLD else name).endswith(".jsonl")


_FOLD = os.path.normcase if os.name == "nt" else None


def load_episodes(sessions_dir: Sessions, start: int = 0) -> list[Node]:
    """Read each session file's opening request into an episode node (design §3.3).

    Args:
        sessions_dir: a sessions folder or a list of them (issue 16.4).

    Returns:
        Episode nodes in load order (:func:`session_files`: folder by folder, in the list's
        order, each sorted by path); text = first 80 characters of the request.
    """
    nodes: list[Node] = []
    folders = session_folders(sessions_dir)
    for key, full in session_names(sessions_dir):
        node = episode_node(Path(full), start + len(nodes), folder_of(key, folders).root)
        if node is not None:
            nodes.append(node)
    return nodes


def episode_node(path: Path, order: int = 0, folder: Path | str | None = None) -> Node | None:
    """The episode of one session file, or ``None`` when it has no request with keywords.

    The text is the first 80 characters of the request, secrets masked before the cut
    (design §8.3); the keywords are the text's (the reference's, which merge episodes, §5.1).
    ``task`` is the real task's first 80 characters when it is not the request, ``outcome``
    the first :data:`OUTCOME_CHARS` characters of the last answer and one more when it goes
    on (the block marks the cut), both masked alike (:func:`read_session`, design §3.3). Used by
    :func:`load_episodes` and by the persistent index, so both paths read a file the same
    way; ``folder``: the sessions folder the file must lie in (default: its own).
    """
    summary = read_session(path, folder)
    if not summary.request or name_withheld(_name(path, folder)):
        return None  # no request, or a file name that addresses the model or holds a secret
    text = _stored(summary.request, EPISODE_CHARS)  # "" when it addresses the model (§8)
    kw = matching_keywords(text)
    if not kw:
        return None
    task = _stored(summary.task, EPISODE_CHARS)
    outcome = _stored(summary.outcome, OUTCOME_CHARS + 1)
    if read_together(text, "" if task == text else task, outcome):
        return None  # the fields read as the block shows them address the model (§8.4)
    return Node(
        kind="episode",
        text=text,
        keywords=kw,
        order=order,
        path=str(path),
        task="" if task == text else task,
        outcome=outcome,
        cwd=summary.cwd,
        day=summary.day or _name_day(path.name),
        last_day=summary.last_day or summary.day or _name_day(path.name),
        parts=_parts_stored(summary.parts, text),
    )


def _parts_stored(parts: Sequence[tuple[str, str]], text: str) -> str:
    """A session's parts as an episode keeps them (:func:`talos.sources.session_parts.encode`),
    each task and outcome as :func:`_stored` keeps it; a part whose task addresses the model
    is left out, an outcome that does is "" (design §8), and a part whose task and outcome,
    shown under the episode's ``text``, address the model read together is left out
    (:func:`talos.safety.episodes.read_together`)."""
    kept = [(_stored(t, EPISODE_CHARS), _stored(o, OUTCOME_CHARS + 1)) for t, o in parts]
    return encode([(t, o) for t, o in kept if t and not read_together(text, t, o)])


def _stored(said: str, limit: int) -> str:
    """A session's text as an episode keeps it: lone surrogates replaced (``"\\ud800"`` in
    JSON: not printable), then :func:`talos.safety.episodes.episode_field`: secrets masked
    before the cut (design §8.3), ``limit`` characters, "" when it addresses the model
    (transcripts are untrusted input, design §3.3, §8)."""
    return episode_field(_SURROGATE.sub("\ufffd", said), limit) if said else ""


def _name(path: Path, folder: Path | str | None) -> str:
    """The part of a session's path that is the transcript's own (shown in the block): its
    path under its sessions folder (subfolders of ``DIR/**`` too), or its file name."""
    if folder is not None:
        try:
            return path.relative_to(folder).as_posix()
        except ValueError:
            pass
    return path.name
