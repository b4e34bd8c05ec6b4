"""``talos sync``: one memory on several machines through git (design §12.2).

One run, under a per-home sync lock:

1. **commit** what talos and the person changed in the home (under the memory lock, so no
   talos write is half in it);
2. **fetch** the remote and, when both sides moved, **merge** with ``git merge-tree`` — memory.md
   by talos's own driver (:mod:`talos.sync.merge`), the per-device logs by union — and make one
   commit on top of the remote's (a rebase of this device's unpushed changes, squashed);
3. **resolve** by talos's rules: a line forgotten on any device is taken out again, and a key
   written on two devices is settled by authority then observed day; two values of equal
   standing stay a conflict that ``talos conflicts`` shows everywhere;
4. **push**, unless a person's lines were edited differently on two devices: then both versions
   stay in memory.md, and sync stops and says which lines to settle.

Every git step writes objects first and moves a ref last, and the working tree is moved with
``git reset --keep`` only after the merged commit exists, so a kill at any point leaves a
repository git continues from and a home that recalls; the next run picks up from there.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from talos.errors import InputError, TalosError
from talos.fsutil import atomic_write_text, json_value, lock, read_regular
from talos.home import Paths
from talos.sync.device import device_dirs, device_id
from talos.sync.incoming import (
    no_new_attributes,
    no_new_links,
    no_new_places,
    other_branch,
    own_logs_kept,
    shared_device,
    specs,
)
from talos.sync.merge import SYNC_DEVICE, Merged, Overlap, merge_text
from talos.sync.repo import (
    GitError,
    blob,
    branch_of,
    git_dir,
    git_init,
    git_root,
    identity,
    in_progress,
    is_ancestor,
    local_remote,
    relative,
    remote_of,
    repair,
    rev,
    run_git,
    unlock,
    words,
)

__all__ = [
    "ATTRIBUTES",
    "GitError",
    "SyncResult",
    "driver_command",
    "git_dir",
    "git_init",
    "git_root",
    "ignore_lines",
    "in_progress",
    "pending_conflicts",
    "relative",
    "run_git",
    "sync",
    "write_git_files",
]

#: Seconds a network step (fetch, push) may take before sync gives up on it.
NETWORK_TIMEOUT = 300.0
#: How many times sync starts over when the remote moved during the run (a push rejected).
ROUNDS = 3
#: Seconds (on average) sync waits before going round again when its push found the remote's
#: branch locked by another device's push (three homes synced at one moment: the push that
#: lost failed with "failed to update ref", ``tests/test_sync_attack.py``).
RACE_PAUSE = 0.5
#: git's words for a push that found the remote's branch locked.
_LOCKED = ("failed to update ref", "cannot lock ref", "Unable to create")
#: The local state of a sync that stopped on a person's lines (never synced).
PENDING = "sync.json"


class Unmerged(TalosError):
    """git cannot merge these files (a skill edited on two devices): ``files``, relative to
    the repository; nothing was changed here."""

    def __init__(self, files: list[str]) -> None:
        super().__init__(", ".join(files) or "(unknown)")
        self.files = files


@dataclass(slots=True)
class SyncResult:
    """What one ``talos sync`` did. ``stopped``: why it stopped before pushing (``None``: it
    went through); ``person_conflicts``: the lines to settle by hand (both versions kept)."""

    device: str
    committed: bool = False
    pulled: int = 0
    merged: bool = False
    pushed: bool = False
    remote: str | None = None
    forgotten_again: list[str] = field(default_factory=list)
    resolved: list[dict[str, Any]] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    person_conflicts: list[dict[str, Any]] = field(default_factory=list)
    kept_edits: list[dict[str, Any]] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    stopped: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The result as the CLI's ``--json`` data."""
        return {
            "device": self.device,
            "committed": self.committed,
            "pulled": self.pulled,
            "merged": self.merged,
            "pushed": self.pushed,
            "remote": self.remote,
            "forgotten_again": self.forgotten_again,
            "resolved": self.resolved,
            "conflicts": self.conflicts,
            "person_conflicts": self.person_conflicts,
            "kept_edits": self.kept_edits,
            "devices": self.devices,
            "stopped": self.stopped,
        }


def driver_command() -> str:
    """The merge driver git runs for memory.md: this Python with :mod:`talos.sync.merge`."""
    return f"{shlex.quote(sys.executable)} -m talos.sync.merge %O %A %B %P"


def _driver_config() -> list[str]:
    return ["merge.talos.name=talos memory.md merge", f"merge.talos.driver={driver_command()}"]


def ignore_lines(paths: Paths) -> list[str]:
    """The ``.gitignore`` lines of a home (design §12.1): the state folder's caches and this
    machine's own files stay local; its per-device logs, talos's sessions and the trash of
    forgotten skills travel."""
    state = relative(paths.state_dir, paths.home)
    if state is None:
        return []
    mem = relative(paths.memory_file, paths.home)
    return [
        "# talos: caches and this machine's own files stay here; the rest travels (talos sync)",
        f"/{state}/*",
        f"!/{state}/devices/",
        f"!/{state}/sessions/",
        f"!/{state}/trash/",
        f"!/{state}/audit.jsonl",
        # what travels, whatever a rule before or a global ignore file says (*.md, *.jsonl)
        f"!/{state}/devices/**",
        f"!/{state}/sessions/**",
        f"!/{state}/trash/**",
        *([f"!/{_escape(mem)}"] if mem is not None else []),
    ]


#: ``.gitattributes`` lines besides memory.md's (design §12.1): append-only logs merge by union.
ATTRIBUTES = ["devices/**/*.jsonl merge=union"]


def attribute_lines(paths: Paths) -> list[str]:
    """The ``.gitattributes`` lines of a home: memory.md by talos's driver, the per-device
    logs by union (one device writes each, so union is exact)."""
    out = ["# talos: memory.md merges by talos's rules (talos sync), append-only logs by union"]
    mem = relative(paths.memory_file, paths.home)
    if mem is not None:
        out.append(f"/{_escape(mem)} merge=talos")
    state = relative(paths.state_dir, paths.home)
    if state is not None:
        out.append(f"/{_escape(state)}/devices/**/*.jsonl merge=union")
        out.append(f"/{_escape(state)}/devices/*/device.json merge=talos")
        out.append(f"/{_escape(state)}/audit.jsonl merge=union")  # the log before devices
    return out


def _escape(rel: str) -> str:
    return rel.replace(" ", "[ ]")


def write_git_files(paths: Paths) -> tuple[list[str], list[str]]:
    """Add talos's lines to the home's ``.gitignore`` and ``.gitattributes`` (the person's own
    lines are kept; a line already there is not added twice), and register the merge driver in
    the repository's config when there is one.

    Returns:
        (files changed, files already complete), as paths.

    Raises:
        OSError, InputError: a file cannot be read or written (it is then unchanged).
    """
    changed: list[str] = []
    kept: list[str] = []
    for name, lines in (
        (".gitignore", ignore_lines(paths)),
        (".gitattributes", attribute_lines(paths)),
    ):
        target = paths.home / name
        try:
            old = read_regular(target, 1 << 20).decode("utf-8", "surrogateescape")
        except FileNotFoundError:
            old = ""
        have = {ln.strip() for ln in old.splitlines()}
        missing = [ln for ln in lines if ln.strip() not in have]
        if not missing or all(ln.startswith("#") for ln in missing):
            kept.append(str(target))
            continue
        sep = "" if not old or old.endswith("\n") else "\n"
        blank = "\n" if old else ""
        atomic_write_text(target, old + sep + blank + "\n".join(missing) + "\n")
        changed.append(str(target))
    root = git_root(paths.home)
    if root is not None:
        for c in _driver_config():
            key, _, value = c.partition("=")
            run_git(root, "config", key, value)
        _info_attributes(root, paths)
    return changed, kept


def _info_attributes(root: Path, paths: Paths) -> None:
    """The attribute lines of memory.md and the per-device logs when ``talos.toml`` puts them
    outside the home (elsewhere in its repository), where the home's ``.gitattributes`` cannot
    name them: in the repository's own ``info/attributes`` (this clone's; every device's sync
    writes it). Without them memory.md merged as plain text, and a write on both devices made
    git refuse (``tests/test_sync_attack.py``)."""
    lines = []
    mem, state = relative(paths.memory_file, root), relative(paths.state_dir, root)
    if mem is not None and relative(paths.memory_file, paths.home) is None:
        lines.append(f"/{_escape(mem)} merge=talos")
    if state is not None and relative(paths.state_dir, paths.home) is None:
        lines.append(f"/{_escape(state)}/devices/**/*.jsonl merge=union")
    if not lines:
        return
    target = git_dir(root) / "info" / "attributes"
    try:
        old = read_regular(target, 1 << 20).decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        old = ""
    missing = [ln for ln in lines if ln not in {x.strip() for x in old.splitlines()}]
    if missing:
        sep = "" if not old or old.endswith("\n") else "\n"
        atomic_write_text(target, old + sep + "\n".join(missing) + "\n")


# -- the run -------------------------------------------------------------------------------


def _commit_local(root: Path, paths: Paths, ident: list[str], device: str) -> bool:
    """Stage the home and commit it when anything changed; returns whether it committed.
    A cache that was committed before (no ignore file then) is taken out of git, not off the
    disk (design §12.1: caches never travel). Only the home's paths go into the commit
    (:func:`specs`), built in an index of its own from HEAD: what the person staged elsewhere
    in a bigger repository stays staged, and out of talos's commit."""
    from talos.writer.txn import memory_lock

    spec = specs(root, paths)
    _not_ignored(root, paths)
    with memory_lock(paths):
        cached = run_git(root, "ls-files", "-ci", "--exclude-standard", "-z", "--", *spec).stdout
        files = [f for f in cached.split("\0") if f]
        if files:
            run_git(root, "rm", "--cached", "-q", "--", *files)
        run_git(root, "add", "-A", "--", *[p for p in spec if os.path.lexists(root / p)])
        changed = run_git(root, "diff", "--cached", "--quiet", "--", *spec, check=False)
        if changed.returncode == 0:
            return False
        _commit_paths(root, spec, ident, f"talos sync from {device}")
    return True


def _not_ignored(root: Path, paths: Paths) -> None:
    """Refuse to sync when git ignores memory.md or this device's files: a rule of a bigger
    repository (its folder ignored) or one talos's ignore lines cannot undo, and sync said
    it pushed while the memory never left the machine (``tests/test_sync_attack.py``).

    Raises:
        InputError: naming the file, the rule and where it is.
    """
    names = [paths.memory_file, paths.device_dir / "audit.jsonl", paths.device_dir / "device.json"]
    rels = [r for p in names if p.exists() and (r := relative(p, root)) is not None]
    if not rels:
        return
    done = run_git(root, "check-ignore", "-v", "--no-index", "--", *rels, check=False)
    for line in done.stdout.splitlines():
        rule, _, path = line.partition("\t")
        source, _, rest = rule.partition(":")
        number, _, pattern = rest.partition(":")
        if pattern.startswith("!"):
            continue  # re-included
        raise InputError(
            f"{path} is ignored by git ({source}:{number}: {pattern}), so talos sync cannot "
            f"carry it; remove that rule, or add !{path} after it, then run talos sync again"
        )


def _commit_paths(root: Path, spec: list[str], ident: list[str], message: str) -> str:
    """Commit the index's version of ``spec`` on top of HEAD, the rest as in HEAD: the tree
    is built in a scratch index, the commit written, then the branch moved (objects first, the
    ref last: a kill leaves HEAD as it was). Returns the new commit."""
    index = git_dir(root) / "talos-sync.index"
    head = rev(root, "HEAD")
    for stale in (index, index.with_name(index.name + ".lock")):  # a sync killed here left them
        with contextlib.suppress(OSError):  # (only talos sync uses them, under its lock)
            stale.unlink()
    try:
        run_git(root, "read-tree", *([head] if head else ["--empty"]), index=index)
        run_git(root, "rm", "-r", "--cached", "-q", "--ignore-unmatch", "--", *spec, index=index)
        staged = run_git(root, "ls-files", "-s", "-z", "--", *spec).stdout
        run_git(root, "update-index", "-z", "--index-info", input=staged, index=index)
        tree = run_git(root, "write-tree", index=index).stdout.strip()
    finally:
        with contextlib.suppress(OSError):
            index.unlink()
    parent = ["-p", head] if head else []
    commit = run_git(root, "commit-tree", tree, *parent, "-m", message, config=ident)
    new = commit.stdout.strip()
    run_git(root, "update-ref", "-m", message, "HEAD", new, head or "0" * 40)
    return new


def _merge(
    root: Path, paths: Paths, head: str, upstream: str, ident: list[str], device: str
) -> tuple[str, Merged]:
    """One commit on top of ``upstream`` with this side's changes merged in; returns it and
    memory.md's merge (:class:`talos.sync.merge.Merged`: the lines edited on both sides).

    Raises:
        Unmerged: git could not merge a file other than memory.md (a skill edited on both
            sides): nothing was changed here. GitError: git failed.
    """
    done = run_git(
        root,
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--allow-unrelated-histories",
        head,
        upstream,
        check=False,
        config=_driver_config(),
        env={SYNC_DEVICE: device},
    )
    out = done.stdout.split("\n")
    if done.returncode not in (0, 1) or not out or not out[0].strip():
        raise GitError(f"git merge-tree failed: {done.stderr.strip() or 'no output'}")
    tree = out[0].strip()
    if done.returncode == 1:
        files = []
        for line in out[1:]:
            if not line.strip():
                break
            files.append(line.strip())
        raise Unmerged(files)
    merged = Merged([])
    mem = relative(paths.memory_file, root)
    if mem is not None:
        base = run_git(root, "merge-base", head, upstream, check=False).stdout.strip()
        old = blob(root, base, mem) if base else b""  # unrelated: two homes joined
        _, merged = merge_text(old, blob(root, head, mem), blob(root, upstream, mem))
    msg = run_git(root, "log", "--format=%s", f"{upstream}..{head}").stdout.strip().splitlines()
    subject = f"talos sync from {device}" + (f" ({len(msg)} commits)" if len(msg) > 1 else "")
    commit = run_git(root, "commit-tree", tree, "-p", upstream, "-m", subject, config=ident)
    return commit.stdout.strip(), merged


def _lines(paths: Paths) -> list[str]:
    """memory.md's lines now ([] when it cannot be read)."""
    try:
        text = read_regular(paths.memory_file, 1 << 30).decode("utf-8", "surrogateescape")
    except (OSError, InputError):
        return []
    return [ln.rstrip("\r") for ln in text.split("\n")]


def _pending(paths: Paths) -> list[dict[str, Any]]:
    try:
        data = json_value(read_regular(paths.state_dir / PENDING, 1 << 20).decode("utf-8"))
    except (OSError, ValueError, InputError):
        return []
    items = data.get("person_conflicts") if isinstance(data, dict) else None
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _still_there(paths: Paths, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pending person conflicts whose two versions are both still in memory.md."""
    try:
        text = read_regular(paths.memory_file, 1 << 30).decode("utf-8", "surrogateescape")
    except (OSError, InputError):
        return items
    lines = {ln.rstrip("\r") for ln in text.split("\n")}
    out: list[dict[str, Any]] = []
    for i in items:
        if i.get("here") in lines and i.get("there") in lines and i not in out:
            out.append(i)
    return out


def pending_conflicts(paths: Paths) -> list[dict[str, str]]:
    """The person's lines a sync stopped on (``{"was", "here", "there"}``) whose two versions
    are both still in memory.md (kept in the local ``sync.json``)."""
    return _still_there(paths, _pending(paths))


def _save_pending(paths: Paths, items: list[dict[str, Any]]) -> None:
    target = paths.state_dir / PENDING
    if not items:
        with contextlib.suppress(OSError):
            target.unlink()
        return
    with contextlib.suppress(OSError, InputError):
        atomic_write_text(target, json.dumps({"person_conflicts": items}, ensure_ascii=False))


def sync(paths: Paths, push: bool = True, keep_both: bool = False) -> SyncResult:
    """Commit, pull (merging by talos's rules), resolve, and push the home (design §12.2).

    Args:
        paths: the home; it must be in a git work tree.
        push: push at the end (``False``: only commit, pull and resolve).
        keep_both: go on although a person's lines were edited differently on two devices
            (both versions stay in memory.md).

    Returns:
        :class:`SyncResult`; ``stopped`` says why it did not push.

    Raises:
        InputError: the home is not in a git repository, or another talos sync of this home
            is running. GitError: a git step failed (its words quoted); what was committed
            stays committed, and the next run continues.
    """
    root = git_root(paths.home)
    if root is None:
        raise InputError(
            f"{paths.home} is not in a git repository: run talos init --git there, add a remote "
            "(git remote add origin URL), then talos sync. A sync folder (Syncthing, a cloud "
            "folder) needs no command: every device's counts and audit log are merged on read"
        )
    device = device_id(paths.state_dir, paths.home)
    result = SyncResult(device)
    run = paths.state_dir / "run"
    run.mkdir(parents=True, exist_ok=True)
    import filelock

    try:
        held = lock(run / "sync.lock", 0)
        held.acquire()
    except filelock.Timeout:
        raise InputError(f"another talos sync of {paths.home} is running; wait for it") from None
    try:
        _run(root, paths, result, push, keep_both)
    finally:
        held.release()
    result.devices = [d.name for d in device_dirs(paths.state_dir)]
    return result


def _run(root: Path, paths: Paths, result: SyncResult, push: bool, keep_both: bool) -> None:
    repair(root)
    write_git_files(paths)
    gd = git_dir(root)
    busy = in_progress(gd)
    if busy:
        raise GitError(
            f"git is in the middle of {busy} in {root}; finish it (or abort it) with git, then "
            "run talos sync again"
        )
    branch = branch_of(root)
    ident = identity(root, result.device)
    remote = result.remote = remote_of(root, branch)
    local = local_remote(root, remote) if remote is not None else None
    if local is not None:
        unlock(local)  # a push killed there (the remote is a folder here) left a ref locked
    before = _conflict_ids(paths)
    overlaps: list[Overlap] = []
    late = False  # the last round found memory.md changed after its commit
    locked = ""  # git's words when the last push found the remote's branch locked
    for _ in range(ROUNDS):
        result.committed |= _commit_local(root, paths, ident, result.device)
        had = set(_lines(paths))
        if remote is None:
            result.stopped = (
                "no remote: committed here; add one (git remote add origin URL) to sync"
            )
            break
        run_git(root, "fetch", "--quiet", remote, timeout=NETWORK_TIMEOUT)
        upstream = rev(root, f"refs/remotes/{remote}/{branch}")
        if upstream is None:
            other_branch(root, remote, branch)
        elif not run_git(root, "config", f"branch.{branch}.merge", check=False).stdout.strip():
            # a clone of an empty remote tracks nothing: the git pull a message names would fail
            run_git(root, "branch", "--quiet", f"--set-upstream-to={remote}/{branch}", check=False)
        head = rev(root, "HEAD")
        if upstream is not None and head is not None and not is_ancestor(root, upstream, head):
            shared_device(root, paths, head, upstream, result.device)
            # what the remote says, named before a merge could fail on it
            no_new_links(root, paths, head, upstream)
            no_new_places(root, paths, head, upstream)
            no_new_attributes(root, paths, head, upstream, result.device)
            base = run_git(root, "merge-base", head, upstream, check=False).stdout.strip()
            own_logs_kept(root, paths, head, upstream, result.device, base)
            merged = Merged([])
            if is_ancestor(root, head, upstream):
                target = upstream
            else:
                try:
                    target, merged = _merge(root, paths, head, upstream, ident, result.device)
                except Unmerged as e:
                    result.stopped = (
                        f"git cannot merge {e}: changed here and on another device; nothing was "
                        f"changed here. Merge with git (git pull --rebase {remote} {branch}, fix "
                        "the files, git add them, git rebase --continue), then run talos sync"
                    )
                    break
            no_new_links(root, paths, head, target)
            no_new_places(root, paths, head, target)
            no_new_attributes(root, paths, head, target, result.device)
            own_logs_kept(root, paths, head, target, result.device)
            if not _move(root, paths, target):
                late = True  # memory.md changed since the commit: commit it, merge again
                continue
            late = False
            result.pulled += len(run_git(root, "rev-list", f"{head}..{upstream}").stdout.split())
            result.merged |= target != upstream
            overlaps += merged.overlaps
            result.kept_edits += [o.as_json() for o in merged.kept_edits]
        _resolve(paths, result, before, set(_lines(paths)) - had)
        result.committed |= _commit_local(root, paths, ident, result.device)
        pending = _still_there(paths, _pending(paths) + [o.as_json() for o in overlaps])
        _save_pending(paths, [] if keep_both else pending)
        result.person_conflicts = pending
        if pending and not keep_both:
            result.stopped = (
                "a person's lines were edited differently here and on another device; both "
                "versions are in memory.md. Keep the one you want (delete the other), then run "
                "talos sync again (or talos sync --keep-both)"
            )
            break
        if not push:
            break
        if upstream is not None and rev(root, "HEAD") == rev(
            root, f"refs/remotes/{remote}/{branch}"
        ):
            break  # the remote has all of it already
        args = ["push", "--quiet", remote, f"HEAD:refs/heads/{branch}"]
        if upstream is None:
            args.insert(1, "--set-upstream")
        done = run_git(root, *args, check=False, timeout=NETWORK_TIMEOUT)
        if done.returncode == 0:
            result.pushed = True
            break
        said = done.stderr.strip()
        if "fetch first" in said or "non-fast-forward" in said:
            continue  # the remote moved since the fetch: merge again
        local = local_remote(root, remote)
        if local is not None and unlock(local):  # a push killed there left its ref locked
            continue
        if any(m in said for m in _LOCKED):  # another device's push holds the branch
            locked = words(said)
            time.sleep(RACE_PAUSE * random.uniform(0.5, 1.5))  # not in step with it again
            continue
        raise GitError(f"git push failed: {words(said)}")
    else:
        result.stopped = (
            "memory.md kept changing while this device synced (talos or a person wrote); run "
            "talos sync again"
            if late
            else f"the remote's branch stayed locked ({locked}); run talos sync again"
            if locked
            else "the remote kept moving while this device synced; run talos sync again"
        )
    result.conflicts = _conflicts(paths)


def _move(root: Path, paths: Paths, target: str) -> bool:
    """Move the branch and the work tree to ``target`` with ``git reset --keep``, under the
    memory lock (no talos write runs meanwhile).

    Returns:
        ``False`` when git refused because a file of the home changed since this round's
        commit (a talos write or a person's edit during the fetch: "Entry 'memory.md' not
        uptodate"; it made sync fail, ``tests/test_sync_attack.py``): nothing moved, and the
        next round commits the change first.

    Raises:
        GitError: git refused for another reason, or for a change outside the home (a file
            of a bigger repository the person is editing, which sync never commits): the
            message names the files.
    """
    from talos.writer.txn import memory_lock

    with memory_lock(paths):
        done = run_git(root, "reset", "--quiet", "--keep", target, check=False)
    if done.returncode == 0:
        return True
    said = done.stderr.strip()
    named = re.findall(r"'([^']+)' (?:not uptodate|would be overwritten)", said)
    spec = specs(root, paths)
    outside = [f for f in named if not any(_under(f, p) for p in spec)]
    if named and not outside:
        return False
    if outside:
        raise GitError(
            f"the other device changed {', '.join(outside)}, which has changes here that are "
            "not committed (outside the home: talos sync does not commit them); commit or "
            "stash them with git, then run talos sync again"
        )
    raise GitError(f"git reset --keep failed: {words(said)}")


def _under(path: str, spec: str) -> bool:
    """Whether the repository path ``path`` is ``spec`` or inside it (``.``: everything)."""
    return spec == "." or path == spec or path.startswith(spec.rstrip("/") + "/")


def _conflict_ids(paths: Paths) -> set[tuple[str, str]]:
    from talos.memory import Memory

    with contextlib.suppress(TalosError, OSError):
        mem = Memory(paths.home, scopes=_all_scopes(paths))
        try:
            return {(scope, key) for scope, key, _nodes in mem.conflicts()}
        finally:
            mem.close()
    return set()


def _all_scopes(paths: Paths) -> list[str]:
    """Every scope memory.md's lines name (sync works for the whole home, not one agent)."""
    from talos.sources.facts import parse_fact_line

    scopes = {"global"}
    with contextlib.suppress(OSError, InputError):
        text = read_regular(paths.memory_file, 1 << 30).decode("utf-8", "replace")
        for line in text.split("\n"):
            if "scope=" in line:
                parsed = parse_fact_line(line)
                if parsed is not None and parsed.fields.get("scope"):
                    scopes.add(parsed.fields["scope"])
    return sorted(scopes)


def _conflicts(paths: Paths) -> list[dict[str, Any]]:
    from talos.memory import Memory

    with contextlib.suppress(TalosError, OSError):
        mem = Memory(paths.home, scopes=_all_scopes(paths))
        try:
            return [
                {"scope": scope, "key": key, "ids": [n.fields.get("id", "") for n in nodes]}
                for scope, key, nodes in mem.conflicts()
            ]
        finally:
            mem.close()
    return []


def _standing(node: Any) -> tuple[int, str]:
    """How a record of a contested key ranks after a merge (design §12.3): authority, then
    the later observed day — a day after tomorrow is a clock error that ranks below every
    day (:func:`talos.view.trust.observed_day`: it never wins a key)."""
    from talos.view.trust import authority, observed_day

    day = observed_day(node.born)
    return authority(node), day.isoformat() if day else ""


def _resolve(
    paths: Paths, result: SyncResult, before: set[tuple[str, str]], arrived: set[str]
) -> None:
    """Apply talos's rules to what the merge brought (design §12.3): a line forgotten on any
    device (:func:`talos.writer.audit.tombstones`) that the merge brought in (``arrived``) is
    taken out again; a key that became contested by the merge is settled when one record
    outranks the other (authority, then observed day); equals stay a conflict."""
    from talos.memory import Memory
    from talos.writer.audit import tombstones
    from talos.writer.edits import remove_fact_lines

    dead = {t.line: t for t in tombstones(paths) if not t.skill} if arrived else {}
    dead = {line: t for line, t in dead.items() if line in arrived}
    if dead:  # only a line the merge brought: one a person typed again here stays
        devices = sorted({t.device for t in dead.values()})
        gone = remove_fact_lines(
            paths,
            lambda _p, raw: raw in dead,
            "forget",
            f"forgotten on {', '.join(devices)}; brought back by a merge",
        )
        result.forgotten_again += [r.id for r in gone]
    mem = Memory(paths.home, scopes=_all_scopes(paths))
    try:
        for scope, key, nodes in mem.conflicts():
            if (scope, key) in before:
                continue  # contested before this sync: the person's to settle, not the merge's
            ranked = sorted(nodes, key=_standing, reverse=True)
            top = ranked[0]
            if _standing(ranked[1]) == _standing(top):
                continue  # equal standing: a conflict, shown on every device
            keep = top.fields.get("id", "")
            with contextlib.suppress(InputError):
                mem.resolve(key, keep)
                result.resolved.append({"scope": scope, "key": key, "kept": keep})
    finally:
        mem.close()
