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
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from talos.errors import InputError, TalosError
from talos.fsutil import atomic_write_text, json_value, lock, read_regular
from talos.home import Paths
from talos.sync.device import device_dirs, device_id
from talos.sync.merge import Overlap, merge_text

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
#: The local state of a sync that stopped on a person's lines (never synced).
PENDING = "sync.json"


class GitError(TalosError):
    """A git command failed; the message names it and quotes git's own words."""


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
            "devices": self.devices,
            "stopped": self.stopped,
        }


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_EDITOR="true", GIT_MERGE_AUTOEDIT="no")
    return env


def run_git(
    repo: Path,
    *args: str,
    check: bool = True,
    timeout: float = 60.0,
    config: Sequence[str] = (),
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``git -C repo args``; raise :class:`GitError` (git's stderr quoted) when it fails
    and ``check``."""
    cmd = ["git", "-C", str(repo)]
    for c in config:
        cmd += ["-c", c]
    cmd += list(args)
    try:
        done = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            env=_env(),
            timeout=timeout,
            input=input,
            errors="surrogateescape",
        )
    except FileNotFoundError:
        raise GitError("git is not installed (talos sync needs it on the PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took more than {timeout:.0f} s; stopped") from None
    if check and done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise GitError(f"git {' '.join(args[:2])} failed: {' / '.join(said[-3:]) or 'no output'}")
    return done


def git_root(home: Path) -> Path | None:
    """The top of the git work tree ``home`` is in, or ``None`` (not in one, or no git)."""
    try:
        done = run_git(home, "rev-parse", "--show-toplevel", check=False, timeout=10)
    except GitError:
        return None
    if done.returncode != 0 or not done.stdout.strip():
        return None
    return Path(done.stdout.strip())


def git_init(home: Path) -> bool:
    """``git init`` the home unless it is in a git work tree already; returns whether it did.

    Raises:
        GitError: git is missing or failed.
    """
    if git_root(home) is not None:
        return False
    run_git(home, "init", "-q")
    return True


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
    return [
        "# talos: caches and this machine's own files stay here; the rest travels (talos sync)",
        f"/{state}/*",
        f"!/{state}/devices/",
        f"!/{state}/sessions/",
        f"!/{state}/trash/",
        f"!/{state}/audit.jsonl",
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
        out.append(f"/{_escape(state)}/audit.jsonl merge=union")  # the log before devices
    return out


def _escape(rel: str) -> str:
    return rel.replace(" ", "[ ]")


def relative(path: Path, home: Path) -> str | None:
    """``path`` relative to ``home`` with ``/`` separators, or ``None`` when outside it."""
    try:
        return path.relative_to(home).as_posix()
    except ValueError:
        return None


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
    return changed, kept


# -- the run -------------------------------------------------------------------------------


def _identity(root: Path, device: str) -> list[str]:
    """``user.name``/``user.email`` for talos's commits when git has none configured."""
    if run_git(root, "config", "user.email", check=False).stdout.strip():
        return []
    return [f"user.name=talos ({device})", f"user.email=talos@{device}.invalid"]


def _held(path: Path) -> bool:
    """Whether a live process has ``path`` open (Linux: /proc; elsewhere: younger than 60 s)."""
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        with contextlib.suppress(OSError):
            return time.time() - path.stat().st_mtime < 60
        return False
    target = str(path.resolve())
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in os.listdir(proc / pid / "fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(proc / pid / "fd" / fd) == target:
                        return True
    return False


def git_dir(root: Path) -> Path:
    out = run_git(root, "rev-parse", "--absolute-git-dir").stdout.strip()
    return Path(out)


def repair(root: Path) -> list[str]:
    """Remove git lock files that no live process holds (a sync killed while git wrote).

    git refuses to run while ``index.lock`` (or a ref's ``.lock``) exists; a kill of talos
    sync and its git leaves them behind. Only called under the sync lock, so no other talos
    sync is running; a lock a live process holds (a person's git) is left alone.

    Returns:
        The lock files removed.
    """
    return _unlock(git_dir(root))


def _unlock(gd: Path) -> list[str]:
    """Remove the lock files of the git folder ``gd`` that no live process holds."""
    removed: list[str] = []
    candidates = [gd / n for n in ("index.lock", "HEAD.lock", "ORIG_HEAD.lock", "packed-refs.lock")]
    candidates += list((gd / "refs").rglob("*.lock"))
    for p in candidates:
        if p.is_file() and not _held(p):
            with contextlib.suppress(OSError):
                p.unlink()
                removed.append(str(p))
    return removed


def _local_remote(root: Path, remote: str) -> Path | None:
    """The git folder of ``remote`` when it is a folder on this machine (a path or a
    ``file://`` URL: a USB disk, a NAS mount), else ``None``."""
    url = run_git(root, "remote", "get-url", remote, check=False).stdout.strip()
    if url.startswith("file://"):
        url = url[len("file://") :]
    path = Path(url).expanduser()
    if not url or (not path.is_absolute() and not (root / path).is_dir()):
        return None
    path = path if path.is_absolute() else root / path
    for gd in (path, path / ".git"):
        if (gd / "HEAD").is_file() and (gd / "refs").is_dir():
            return gd
    return None


def in_progress(gd: Path) -> str | None:
    for name, what in (
        ("rebase-merge", "a rebase"),
        ("rebase-apply", "a rebase or am"),
        ("MERGE_HEAD", "a merge"),
        ("CHERRY_PICK_HEAD", "a cherry-pick"),
        ("REVERT_HEAD", "a revert"),
    ):
        if (gd / name).exists():
            return what
    return None


def _branch(root: Path) -> str:
    done = run_git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    if done.returncode != 0:
        raise GitError(
            "the home's repository is not on a branch (detached HEAD); check out a branch "
            "(git switch main), then run talos sync again"
        )
    return done.stdout.strip()


def _remote(root: Path, branch: str) -> str | None:
    done = run_git(root, "config", f"branch.{branch}.remote", check=False)
    if done.stdout.strip():
        return done.stdout.strip()
    remotes = run_git(root, "remote").stdout.split()
    return "origin" if "origin" in remotes else (remotes[0] if remotes else None)


def _rev(root: Path, ref: str) -> str | None:
    done = run_git(root, "rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False)
    return done.stdout.strip() or None


def _ancestor(root: Path, a: str, b: str) -> bool:
    return run_git(root, "merge-base", "--is-ancestor", a, b, check=False).returncode == 0


def _commit_local(root: Path, paths: Paths, ident: list[str], device: str) -> bool:
    """Stage the home and commit it when anything changed; returns whether it committed.
    A cache that was committed before (no ignore file then) is taken out of git, not off the
    disk (design §12.1: caches never travel)."""
    from talos.writer.txn import memory_lock

    spec = relative(paths.home, root) or "."
    with memory_lock(paths):
        cached = run_git(root, "ls-files", "-ci", "--exclude-standard", "-z", "--", spec).stdout
        files = [f for f in cached.split("\0") if f]
        if files:
            run_git(root, "rm", "--cached", "-q", "--", *files)
        run_git(root, "add", "-A", "--", spec)
        staged = run_git(root, "diff", "--cached", "--quiet", check=False).returncode != 0
        if staged:
            run_git(
                root, "commit", "--no-verify", "-q", "-m", f"talos sync from {device}", config=ident
            )
    return staged


def _blob(root: Path, rev: str, rel: str) -> bytes:
    done = subprocess.run(
        ["git", "-C", str(root), "show", f"{rev}:{rel}"], capture_output=True, env=_env()
    )
    return done.stdout if done.returncode == 0 else b""


def _merge(
    root: Path, paths: Paths, head: str, upstream: str, ident: list[str], device: str
) -> tuple[str, list[Overlap]]:
    """One commit on top of ``upstream`` with this side's changes merged in; returns it and the
    places where both sides changed a person's lines.

    Raises:
        GitError: git could not merge a file other than memory.md (a skill edited on both
            sides): nothing was changed here.
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
        raise GitError(
            "these files were changed on this device and on another one and git cannot merge "
            f"them: {', '.join(files) or '(unknown)'}; nothing was changed here. Merge them "
            "with git (git pull --rebase, edit, git rebase --continue), then run talos sync again"
        )
    overlaps: list[Overlap] = []
    mem = relative(paths.memory_file, root)
    if mem is not None:
        base = run_git(root, "merge-base", head, upstream, check=False).stdout.strip()
        old = _blob(root, base, mem) if base else b""  # unrelated: two homes joined
        _, merged = merge_text(old, _blob(root, head, mem), _blob(root, upstream, mem))
        overlaps = merged.overlaps
    msg = run_git(root, "log", "--format=%s", f"{upstream}..{head}").stdout.strip().splitlines()
    subject = f"talos sync from {device}" + (f" ({len(msg)} commits)" if len(msg) > 1 else "")
    commit = run_git(root, "commit-tree", tree, "-p", upstream, "-m", subject, config=ident)
    return commit.stdout.strip(), overlaps


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
    branch = _branch(root)
    ident = _identity(root, result.device)
    remote = result.remote = _remote(root, branch)
    local = _local_remote(root, remote) if remote is not None else None
    if local is not None:
        _unlock(local)  # a push killed there (the remote is a folder here) left a ref locked
    before = _conflict_ids(paths)
    overlaps: list[Overlap] = []
    late = False  # the last round found memory.md changed after its commit
    for _ in range(ROUNDS):
        result.committed |= _commit_local(root, paths, ident, result.device)
        had = set(_lines(paths))
        if remote is None:
            result.stopped = (
                "no remote: committed here; add one (git remote add origin URL) to sync"
            )
            break
        run_git(root, "fetch", "--quiet", remote, timeout=NETWORK_TIMEOUT)
        upstream = _rev(root, f"refs/remotes/{remote}/{branch}")
        head = _rev(root, "HEAD")
        if upstream is not None and head is not None and not _ancestor(root, upstream, head):
            found: list[Overlap] = []
            if _ancestor(root, head, upstream):
                target = upstream
            else:
                target, found = _merge(root, paths, head, upstream, ident, result.device)
            if not _move(root, paths, target):
                late = True  # memory.md changed since the commit: commit it, merge again
                continue
            late = False
            result.pulled += len(run_git(root, "rev-list", f"{head}..{upstream}").stdout.split())
            result.merged |= target != upstream
            overlaps += found
        _resolve(paths, result, before, set(_lines(paths)) - had)
        result.committed |= _commit_local(root, paths, ident, result.device)
        pending = _still_there(paths, _pending(paths) + [o.as_json() for o in overlaps])
        _save_pending(paths, [] if keep_both else pending)
        if pending and not keep_both:
            result.person_conflicts = pending
            result.stopped = (
                "a person's lines were edited differently here and on another device; both "
                "versions are in memory.md. Keep the one you want (delete the other), then run "
                "talos sync again (or talos sync --keep-both)"
            )
            break
        if not push:
            break
        if upstream is not None and _rev(root, "HEAD") == _rev(
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
        local = _local_remote(root, remote)
        if local is not None and _unlock(local):  # a push killed there left its ref locked
            continue
        raise GitError(f"git push failed: {' / '.join(said.splitlines()[-3:])}")
    else:
        result.stopped = (
            "memory.md kept changing while this device synced (talos or a person wrote); run "
            "talos sync again"
            if late
            else "the remote kept moving while this device synced; run talos sync again"
        )
    result.conflicts = _conflicts(paths)


def _move(root: Path, paths: Paths, target: str) -> bool:
    """Move the branch and the work tree to ``target`` with ``git reset --keep``, under the
    memory lock (no talos write runs meanwhile).

    Returns:
        ``False`` when git refused because a file changed since this round's commit (a talos
        write or a person's edit during the fetch: "Entry 'memory.md' not uptodate"; it made
        sync fail, ``tests/test_sync_attack.py``): nothing moved, and the next round commits
        the change first.

    Raises:
        GitError: git refused for another reason.
    """
    from talos.writer.txn import memory_lock

    with memory_lock(paths):
        done = run_git(root, "reset", "--quiet", "--keep", target, check=False)
    if done.returncode == 0:
        return True
    said = done.stderr.strip()
    if "not uptodate" in said or "would be overwritten" in said:
        return False
    raise GitError(f"git reset --keep failed: {' / '.join(said.splitlines()[-3:]) or 'no output'}")


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


def _resolve(
    paths: Paths, result: SyncResult, before: set[tuple[str, str]], arrived: set[str]
) -> None:
    """Apply talos's rules to what the merge brought (design §12.3): a line forgotten on any
    device (:func:`talos.writer.audit.tombstones`) that the merge brought in (``arrived``) is
    taken out again; a key that became contested by the merge is settled when one record
    outranks the other (authority, then observed day); equals stay a conflict."""
    from talos.memory import Memory
    from talos.view.trust import authority
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
            ranked = sorted(nodes, key=lambda n: (authority(n), n.born), reverse=True)
            top = ranked[0]
            rank = (authority(top), top.born)
            if (authority(ranked[1]), ranked[1].born) == rank:
                continue  # equal standing: a conflict, shown on every device
            keep = top.fields.get("id", "")
            with contextlib.suppress(InputError):
                mem.resolve(key, keep)
                result.resolved.append({"scope": scope, "key": key, "kept": keep})
    finally:
        mem.close()
