"""The doctor's sync check (design §12.4): devices seen, changes not yet synced, a cache that
was committed, a sync that stopped on a person's lines, and the copies a sync folder leaves
when two devices changed memory.md at once. Reads only; runs no network step (ahead/behind
are as of the last fetch)."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from pathlib import Path

from talos.doctor.findings import Finding, _count, _details, _Places
from talos.errors import InputError
from talos.fsutil import read_regular
from talos.home import Paths
from talos.sync.device import copies as copied_folders
from talos.sync.device import device_dirs, device_id
from talos.text import cut

__all__ = ["check_sync"]

#: What a device's state folder may hold in git; anything else under the state folder is a
#: cache or this machine's own file (design §12.1).
TRAVELS = {"devices", "sessions", "trash", "audit.jsonl", ".gitignore"}
#: How sync folders name the copy they keep when two devices changed a file at once.
_CONFLICT_COPY = ("sync-conflict", "conflicted copy", "conflict-")


def _last_write(folder: Path) -> float:
    newest = 0.0
    for p in folder.iterdir():
        try:
            newest = max(newest, p.stat().st_mtime)
        except OSError:
            continue
    return newest


def _devices(paths: Paths, places: _Places) -> Finding:
    this = device_id(paths.state_dir, paths.home)
    found = device_dirs(paths.state_dir)
    shown = []
    for d in found:
        when = _last_write(d)
        day = dt.datetime.fromtimestamp(when).strftime("%Y-%m-%d %H:%M") if when else "never"
        shown.append(f"{d.name}{' (this device)' if d.name == this else ''}: last write {day}")
    if not found:
        return Finding("sync", "info", f"this device is {this}; nothing written here yet")
    copied = copied_folders(paths.state_dir, this)
    if copied:
        state = paths.state_dir / "devices"
        return Finding(
            "sync",
            "warn",
            f"{_count(len(copied), 'device folder')} of {len(found)} "
            f"{'is a copy' if len(copied) == 1 else 'are copies'} of another device's, under a "
            "new name: counted once",
            _details(
                [
                    f"{places.path(state / c)}: a copy of {places.path(state / o)}"
                    for c, o in sorted(copied.items())
                ]
            ),
            hint="delete the copy (its lines are all in the other device's folder); a folder "
            "copied by hand or by a sync folder repeats every count and audit entry",
        )
    return Finding(
        "sync", "info", f"{_count(len(found), 'device')} seen; this one is {this}", _details(shown)
    )


def check_sync(paths: Paths, places: _Places, add: Callable[[Finding], object]) -> None:
    """Add the sync findings of the home (see the module docstring)."""
    from talos.sync import git

    root = git.git_root(paths.home)
    if root is not None or len(device_dirs(paths.state_dir)) > 1:
        add(_devices(paths, places))  # a home on one machine and in no repository: nothing to say
    copies = _conflict_copies(paths.memory_file)
    if copies:
        add(
            Finding(
                "sync",
                "warn",
                f"a sync folder kept {_count(len(copies), 'other version')} of "
                f"{paths.memory_file.name}",
                _details([places.path(p) for p in copies]),
                hint="merge the lines you want into memory.md, then delete the copy "
                "(counts and the audit log need nothing: they are kept per device)",
            )
        )
    if root is None:
        return
    marks = _conflict_markers(paths.memory_file)
    if marks:
        add(
            Finding(
                "sync",
                "warn",
                f"{paths.memory_file.name} holds git's conflict markers (a merge made without "
                "talos's rules)",
                _details(marks),
                hint="keep the lines you want and delete the marker lines, then talos sync; "
                "talos init --git registers talos's merge driver on this machine, so a git pull "
                "merges memory.md by talos's rules",
            )
        )
    problems: list[str] = []
    spec = git.relative(paths.home, root) or "."
    state = git.relative(paths.state_dir, root)
    tracked = git.run_git(root, "ls-files", "-z", "--", spec, check=False).stdout.split("\0")
    if state is not None:
        cached = [
            f
            for f in tracked
            if f.startswith(state + "/") and f[len(state) + 1 :].split("/")[0] not in TRAVELS
        ]
        if cached:
            add(
                Finding(
                    "sync",
                    "warn",
                    f"{_count(len(cached), 'cache file')} of this machine committed to git",
                    _details(cached),
                    hint="talos sync takes them out of git (they stay on disk); talos init "
                    "--git writes the ignore file that keeps them out",
                )
            )
    mem = git.relative(paths.memory_file, root)
    said = git.run_git(root, "check-attr", "merge", "--", mem or ".", check=False).stdout
    merge = said.rsplit(": ", 1)[-1].strip() if mem is not None else "talos"
    if merge in ("unspecified", "unset", ""):  # what git does, not what a line says
        problems.append(".gitattributes does not merge memory.md by talos's rules")
    elif merge != "talos":
        how = "git's text merge" if merge == "set" else merge
        problems.append(f".gitattributes merges memory.md by {how}, not by talos's rules")
    elif not git.run_git(root, "config", "merge.talos.driver", check=False).stdout.strip():
        problems.append(  # the driver lives in each clone's own config, not in the files
            "talos's merge driver is not registered in this clone (a git pull would merge "
            "memory.md as plain text)"
        )
    busy = git.in_progress(git.git_dir(root))
    if busy:
        add(
            Finding(
                "sync",
                "warn",
                f"git is in the middle of {busy}: talos sync waits for it",
                hint="finish it (git status says how: fix the files, git add them, git rebase "
                "--continue) or abort it (git rebase --abort), then talos sync",
            )
        )
    pending = git.pending_conflicts(paths)
    if pending:
        add(
            Finding(
                "sync",
                "warn",
                f"{_count(len(pending), 'line')} edited differently on two devices: both "
                "versions are in memory.md",
                _details([f"{p['here']}  |  {p['there']}" for p in pending]),
                hint="keep the version you want (delete the other), then talos sync",
            )
        )
    if problems:
        add(Finding("sync", "warn", "; ".join(problems), hint="talos init --git, then talos sync"))
    dirty = [
        ln[3:]
        for ln in git.run_git(
            root, "status", "--porcelain", "--", spec, check=False
        ).stdout.splitlines()
        if ln.strip()
    ]
    ahead = behind = 0
    upstream = _upstream(root)
    counts = (
        git.run_git(
            root, "rev-list", "--left-right", "--count", f"HEAD...{upstream}", check=False
        ).stdout.split()
        if upstream
        else []
    )
    if len(counts) == 2:
        ahead, behind = int(counts[0]), int(counts[1])
    elif not dirty:  # no upstream: "in step" was said of a home that never travelled
        add(_untracked_branch(root))
        return
    if dirty or ahead:
        what = []
        if dirty:
            what.append(f"{_count(len(dirty), 'file')} changed")
        if ahead:
            what.append(f"{_count(ahead, 'commit')} not pushed")
        add(
            Finding(
                "sync",
                "info",
                "not synced yet: " + ", ".join(what),
                _details(dirty),
                hint="talos sync",
            )
        )
    elif behind:
        add(
            Finding(
                "sync", "info", f"{_count(behind, 'commit')} fetched, not merged", hint="talos sync"
            )
        )
    else:
        add(Finding("sync", "ok", f"in step with {upstream} as last fetched"))


def _upstream(root: Path) -> str:
    """The branch this one syncs with: its upstream, else ``<remote>/<branch>`` as talos sync
    pushes it; "" when there is none (no remote, an unborn branch)."""
    from talos.sync import git

    done = git.run_git(root, "rev-parse", "--abbrev-ref", "@{upstream}", check=False)
    if done.returncode == 0 and done.stdout.strip():
        return done.stdout.strip()
    branch = git.run_git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    name = branch.stdout.strip()
    remotes = git.run_git(root, "remote", check=False).stdout.split()
    remote = "origin" if "origin" in remotes else (remotes[0] if remotes else "")
    if not name or not remote:
        return ""
    ref = f"{remote}/{name}"
    ok = git.run_git(root, "rev-parse", "--verify", "--quiet", f"refs/remotes/{ref}", check=False)
    return ref if ok.returncode == 0 else ""


def _untracked_branch(root: Path) -> Finding:
    """The finding of a branch that tracks no remote branch: no remote at all, or a branch
    never pushed (``talos sync`` pushes it and makes it track)."""
    from talos.sync.repo import remote_of, run_git

    remotes = run_git(root, "remote", check=False).stdout.split()
    if not remotes:
        return Finding(
            "sync",
            "info",
            "no remote: committed here only, nothing travels (git remote add origin URL)",
            hint="talos sync once a remote is added",
        )
    branch = run_git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    name = branch.stdout.strip() or "HEAD"
    remote = remote_of(root, name) if branch.returncode == 0 else remotes[0]
    return Finding(
        "sync",
        "info",
        f"not synced yet: {name} was never pushed to {remote}",
        hint="talos sync",
    )


_MARKER = re.compile(r"(<{7}|>{7})( .*)?|={7}|\|{7}( .*)?")


def _conflict_markers(memory_file: Path) -> list[str]:
    """The lines of git's conflict markers in ``memory_file`` (``line N: <<<<<<< HEAD``), when
    it holds both an opening and a closing one: a git pull where talos's merge driver was
    not registered wrote them, and talos read them as facts (a lone ``=======`` is a
    heading's underline)."""
    try:
        data = read_regular(memory_file, 1 << 30).decode("utf-8", "replace")
    except (OSError, InputError):
        return []
    found = []
    for no, line in enumerate(data.split("\n"), 1):
        line = line.rstrip("\r")
        if _MARKER.fullmatch(line):
            found.append((no, line))
    kinds = {line[0] for _no, line in found}
    if not {"<", ">"} <= kinds:
        return []
    return [f"line {no}: {cut(line, 60)}" for no, line in found]


def _conflict_copies(memory_file: Path) -> list[Path]:
    """The copies of ``memory_file`` a sync folder left beside it (Syncthing's
    ``memory.sync-conflict-….md``, Dropbox's ``memory (… conflicted copy ….md``)."""
    stem = memory_file.stem
    try:
        names = os.listdir(memory_file.parent)
    except OSError:
        return []
    return sorted(
        memory_file.parent / n
        for n in names
        if n != memory_file.name
        and n.startswith(stem)
        and any(mark in n.lower() for mark in _CONFLICT_COPY)
    )
