"""The checks of a home's files: memory.md (its lines and provenance tags), skills/, the
sessions folders, the state folder, talos's own files its writers refuse, and the agent hooks'
files and log. :func:`talos.doctor.diagnose` runs them in its order.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from pathlib import Path
from typing import Any

from talos import fsutil
from talos.doctor.findings import (
    _GLOBAL,
    Add,
    Finding,
    _captured,
    _count,
    _details,
    _Listed,
    _Places,
    _refusal,
    _sees,
    _visible,
)
from talos.home import Paths
from talos.memory import Memory
from talos.model import Node
from talos.sources.facts import line_warnings, load_facts, parse_fact_line, read_memory
from talos.sources.sessions import RECURSIVE_MARK, session_files, session_folders
from talos.sources.skills import skill_files, skill_scopes
from talos.text import matching_keywords
from talos.view.trust import clock_error, tag_problem, window_problem

__all__ = ["HOOK_RECENT_DAYS"]

#: Days a failed hook stays worth a warning in ``talos doctor``.
HOOK_RECENT_DAYS = 7


def _indexed_facts(mem: Memory, path: Path) -> tuple[list[Node], list[Node]] | None:
    """The fact nodes of memory.md from ``mem``'s index, brought up to date, and those the
    fact filter rejects (``None`` when the index is unavailable). The index keeps a rejected
    line with its credentials masked: those few are read again from the file, so every node
    is what :func:`talos.sources.facts.load_facts` gives (``keep_fact=None``)."""
    if mem.index is None:
        return None
    try:
        with _captured():  # the warnings are line_warnings'; the index's are _check_index's
            mem.index.refresh()
            rows = mem.index.fact_rows()
        data = read_memory(path) if any(not safe for _n, safe in rows) else b""
    except (OSError, sqlite3.Error):
        return None
    blobs = data.split(b"\n")
    facts: list[Node] = []
    flagged: list[Node] = []
    for n, safe in rows:
        if not safe:
            got = _line_node(n, blobs, str(path))
            if got is None:  # the file changed since the refresh: the index check says so
                return None
            flagged.append(got)
            n = got
        facts.append(n)
    return facts, flagged


def _line_node(n: Node, blobs: list[bytes], path: str) -> Node | None:
    """The fact node of line ``n.line`` of memory.md as :func:`load_facts` builds it."""
    try:
        line = blobs[n.line - 1].decode("utf-8")
    except (IndexError, UnicodeDecodeError):
        return None
    parsed = parse_fact_line(line)
    if parsed is None:
        return None
    raw = line.rstrip("\r")
    return Node(
        "fact",
        parsed.text,
        matching_keywords(parsed.text),
        n.order,
        path,
        n.line,
        raw,
        "",
        "",
        parsed.src,
        parsed.born,
        parsed.fields,
    )


def _check_memory(
    paths: Paths, places: _Places, add: Add, seen: frozenset[str] | None, mem: Memory
) -> tuple[list[Any], list[Any] | None]:
    """The memory file and the facts of the ``seen`` scopes (returned for the tags check),
    with the facts the fact filter rejects (for the safety check; ``None``: not known)."""
    mf = paths.memory_file
    name = places.path(mf)
    if not mf.exists() and not mf.is_symlink():
        add(
            Finding(
                "memory",
                "info",
                f"{name} does not exist yet: no facts",
                hint='talos remember "…" or write it by hand',
            )
        )
        return [], []
    try:
        fsutil.check_regular_or_missing(mf)
    except OSError as e:  # a FIFO hung every command (issue 12.3); a link loop failed doctor
        what = (
            e.strerror if isinstance(e, fsutil.NotRegularFile) else f"cannot be read ({e.strerror})"
        )
        add(
            Finding(
                "memory",
                "warn",
                f"{name} {what}: no facts loaded",
                hint="replace it with a regular file, or set memory_file in talos.toml",
            )
        )
        return [], None
    indexed = _indexed_facts(mem, mf)
    flagged: list[Any] | None = None
    if indexed is None:
        with _captured() as warned:
            every = load_facts(mf, keep_fact=None)
    else:
        every, flagged = indexed
        try:
            warned = line_warnings(mf, read_memory(mf))
        except OSError as e:
            warned = [f"{mf}: cannot read ({e.strerror}); no facts loaded"]
    if mem.headings:  # a heading labels the facts beneath it; it is none (design §3.1)
        every = [n for n in every if not n.heading_level]
    facts = every if seen is None else [n for n in every if _visible(n.raw, seen)]
    if warned:
        add(
            Finding(
                "memory",
                "warn",
                f"{name}: {_count(len(facts), 'fact')} loaded; some lines could not be read",
                _details([places.text(w) for w in warned]),
                hint="save the file as UTF-8 text",
            )
        )
    else:
        add(Finding("memory", "ok", f"{name}: {_count(len(facts), 'fact')}"))
    return facts, flagged


def _listable(folder: Path, name: str, check: str, cost: str, add: Add) -> bool:
    """Whether the sources ``folder`` (shown as ``name``) is a folder that can be listed; if
    not, one finding of ``check`` says why (:func:`_missing_folder`) and what it costs."""
    if not folder.is_dir():
        status, what = _missing_folder(folder, f"does not exist: {cost}", cost)
        add(Finding(check, status, f"{name} {what}"))
        return False
    try:
        os.listdir(folder)
    except OSError as e:
        add(Finding(check, "warn", f"{name}: cannot list ({e.strerror})"))
        return False
    return True


def _missing_folder(folder: Path, missing: str, cost: str) -> tuple[str, str]:
    """Status and words for a sources folder that is not a folder: ``info`` when it does not
    exist, else ``warn`` with what it is — a link loop said "does not exist"."""
    try:
        os.stat(folder)
    except FileNotFoundError:
        if not os.path.islink(folder):
            return "info", missing
        return "warn", f"is a link to {os.path.realpath(folder)}, which does not exist: {cost}"
    except OSError as e:
        return "warn", f"cannot be looked at ({e.strerror}): {cost}"
    return "warn", f"is not a folder: {cost}"


def _check_skills(paths: Paths, places: _Places, add: Add, seen: frozenset[str] | None) -> None:
    sd = paths.skills_dir
    name = places.folder(sd)
    if not _listable(sd, name, "skills", "no skills", add):
        return
    # the Agent Skills layout's NAME/SKILL.md counts too, as every model but classic reads it
    folders = str(paths.config.get("model", "evidence")) != "classic"
    count = sum(_sees(skill_scopes(p), seen) for p in skill_files(sd, folders=folders))
    add(Finding("skills", "ok", f"{name}: {_count(count, 'skill file')}"))


def _check_sessions(paths: Paths, places: _Places, add: Add, seen: frozenset[str] | None) -> None:
    """One finding per sessions folder (issue 16.4: ``sessions_dir`` may be a list), in load
    order; a folder given twice counts once (:func:`session_folders`)."""
    for folder in session_folders(paths.sessions_dirs):
        configured = folder.root / RECURSIVE_MARK if folder.recursive else folder.root
        _check_sessions_folder(folder.root, configured, places.folder(configured), add, seen)
    _check_agent_folders(paths, add)


def _check_agent_folders(paths: Paths, add: Add) -> None:
    """One ``info`` finding per agent transcript folder that exists on this machine and that
    the home does not read (design §3.3: :func:`talos.sources.agent_folders.unread`), with the
    command that adds it; a folder of a format talos has no reader for is named as such."""
    from talos.sources.agent_folders import unread

    for f in unread(paths.sessions_dirs):
        if f.readable:
            add(
                Finding(
                    "sessions",
                    "info",
                    f"{f.folder}: {f.label}'s transcripts are not read",
                    hint=f"talos hook install {f.agent} adds it (or add {f.entry!r} to "
                    "sessions_dir in talos.toml)",
                )
            )
        else:
            add(
                Finding(
                    "sessions",
                    "info",
                    f"{f.folder}: {f.label}'s chats are not read (JSON documents talos has "
                    "no reader for yet)",
                )
            )


def _check_sessions_folder(
    root: Path, configured: Path, name: str, add: Add, seen: frozenset[str] | None
) -> None:
    if not _listable(root, name, "sessions", "no episodes", add):
        return
    count = len(session_files(configured)) if _sees(_GLOBAL, seen) else 0  # global's
    add(Finding("sessions", "ok", f"{name}: {_count(count, 'session file')}"))


def _check_state(paths: Paths, places: _Places, add: Add) -> bool:
    """The state folder (index, usage, trace, audit); False stops the checks that need it."""
    sd = paths.state_dir
    name = places.folder(sd)
    if (sd.exists() or sd.is_symlink()) and not sd.is_dir():  # a link loop too
        why = _refusal(sd, "folder", follow=True) or "is not a folder"
        add(Finding("state", "error", f"{name} {why}; talos keeps its state there"))
        return False
    probe = sd if sd.is_dir() else sd.parent
    if not os.access(probe, os.W_OK | os.X_OK):
        add(
            Finding(
                "state",
                "warn",
                f"{name} is not writable: no trace, usage or index",
                hint=f"make {name} writable",
            )
        )
        return True
    add(Finding("state", "ok", f"{name} writable"))
    return True


def _tag_issue(n: Any) -> str | None:
    """What is wrong with a fact's tag: unparsable, a date that is not a date (the record is
    then never valid), or an empty field value (``key=``)."""
    problem = tag_problem(n)
    if problem:
        return problem
    window = window_problem(n)
    if window:
        return f"{window[1]}: the record is never used"
    empty = sorted(k for k, v in n.fields.items() if v == "")
    if empty:
        return f"empty field value: {', '.join(k + '=' for k in empty)}"
    return None


def _check_tags(facts: list[Any], places: _Places, add: Add) -> None:
    bad = _Listed(
        [(n, problem) for n in facts if (problem := _tag_issue(n))],
        lambda x: f"{places.path(x[0].path)}:{x[0].line}: {x[1]}",
    )
    if bad:
        add(
            Finding(
                "tags",
                "warn",
                f"{_count(len(bad), 'line')} with an unreadable provenance tag, used by no one",
                _details(bad),
                hint="fix the tag: <!-- SRC YYYY-MM-DD field=value ... -->",
            )
        )
    else:
        add(Finding("tags", "ok", "every provenance tag parses"))
    future = _Listed(
        [n for n in facts if not _tag_issue(n) and clock_error(n.born)],
        lambda n: f"{places.path(n.path)}:{n.line}: observed {n.born}",
    )
    if future:
        add(
            Finding(
                "tags",
                "warn",
                f"{_count(len(future), 'record')} observed after tomorrow: a clock error; the "
                "date is not used (no validity start, never newer than another value)",
                _details(future),
                hint="fix the date in the tag (the day the evidence was seen), and the clock of "
                "the device that wrote it",
            )
        )


def _check_own_files(paths: Paths, places: _Places, add: Add) -> None:
    """talos's own files that its writers refuse (design §9.5 and the hostile passes: a FIFO
    trace left doctor healthy while report failed on it). One ``warn`` per file, naming what
    it is and what it costs; the index, usage and audit files have their own checks."""
    sd = paths.state_dir
    what = {
        paths.trace_file: "no recall is traced, and talos report cannot read it",
        paths.lock_dir / "memory.lock": "every write to memory.md is refused",
    }
    lock_dir = _refusal(paths.lock_dir, "folder", follow=True)  # the writer's mkdir follows
    if lock_dir:
        name = places.path(paths.lock_dir)
        add(
            Finding(
                "files",
                "warn",
                f"{name} {lock_dir}: every write to memory.md is refused",
                hint=f"remove {name} (talos makes a new one)",
            )
        )
        what.pop(paths.lock_dir / "memory.lock")
    if paths.trace_file.parent != sd and not paths.trace_file.parent.is_dir():
        what.pop(paths.trace_file, None)  # a folder of the person's that is not there yet
    for path, cost in what.items():
        why = _refusal(path)
        if why:
            name = places.path(path)
            add(Finding("files", "warn", f"{name} {why}: {cost}", hint=f"remove or replace {name}"))


def _check_hooks(paths: Paths, places: _Places, add: Add) -> None:
    """The agent hooks' own files and log (issue 16, design §9.5). A log, socket, lock or run
    folder the hook refuses is a ``warn`` each (a FIFO hook.log hung the hook and doctor;
    tests/test_hook_never_blocks.py). Then the log: no finding when no hook ever failed;
    ``warn`` for an error in the last :data:`HOOK_RECENT_DAYS` days, else ``info``
    (timeouts and a server still starting are transient)."""
    from talos.hooks.log import read_tail

    log = paths.state_dir / "hook.log"
    run = paths.state_dir / "run"
    costs = {
        log: ("file", "hooks that fail cannot say why"),
        Path(f"{log}.1"): ("file", "hooks that fail cannot say why"),
        run: ("folder", "every hook recalls in its own process"),
    }
    if not _refusal(run, "folder"):
        costs[run / "hook.sock"] = ("socket", "every hook recalls in its own process")
        costs[run / "hook.lock"] = ("file", "every hook recalls in its own process")
    for path, (want, cost) in costs.items():
        why = _refusal(path, want)
        if not why and want == "file" and path.exists() and not os.access(path, os.R_OK | os.W_OK):
            why = "cannot be read and written by this user"
        if why:
            name = places.path(path)
            add(
                Finding(
                    "hooks",
                    "warn",
                    f"{name} {why}: {cost}",
                    hint=f"remove {name} (talos makes a new one)",
                )
            )
    entries = read_tail(str(log))
    if not entries:
        return
    since = (dt.datetime.now(dt.UTC) - dt.timedelta(days=HOOK_RECENT_DAYS)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    recent = [e for e in entries if e.when >= since]
    # a warning (the hook may have answered) is no hook that gave no context
    failed = [e for e in recent if e.kind != "warning"]
    errors = sum(e.kind == "error" for e in recent)
    warned = len(recent) - len(failed)
    status = "warn" if errors or warned else "info"
    shown = ([e for e in recent if e.kind in ("error", "warning")] or recent or entries)[-5:]
    add(
        Finding(
            "hooks",
            status,
            f"{places.path(log)}: {_count(len(failed), 'hook')} gave no context in the last "
            f"{HOOK_RECENT_DAYS} days ({_count(errors, 'error')})"
            + (f"; {_count(warned, 'warning')} of talos on the hooks' way" if warned else ""),
            tuple(places.text(str(e)) for e in shown),
            hint="fix what the lines say; talos hook status shows the resident server"
            if errors or warned
            else "",
        )
    )
