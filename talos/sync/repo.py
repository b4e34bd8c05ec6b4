"""The home's git repository as ``talos sync`` uses it (design §12.2): running git with its
words quoted on failure, finding the work tree and the git folder, what git is in the middle
of, the branch and its remote, and the lock files a killed git left behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from talos.errors import TalosError

__all__ = [
    "GitError",
    "blob",
    "branch_of",
    "git_dir",
    "git_init",
    "git_root",
    "git_working",
    "held",
    "identity",
    "in_progress",
    "is_ancestor",
    "local_remote",
    "relative",
    "remote_of",
    "repair",
    "rev",
    "run_git",
    "unlock",
    "words",
]


class GitError(TalosError):
    """A git command failed; the message names it and quotes git's own words."""


def _env() -> dict[str, str]:
    """git's environment: no prompts, C messages (sync reads them), and a ``PYTHONPATH`` that
    finds this talos first, every entry absolute: git runs the merge driver
    (:mod:`talos.sync.merge`) in the repository, where a relative entry (``PYTHONPATH=.``)
    found another talos, or none, and memory.md was merged by other rules than the ones sync
    checks the result with."""
    env = dict(os.environ)
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_EDITOR="true", GIT_MERGE_AUTOEDIT="no")
    ours = str(Path(__file__).resolve().parents[2])
    entries = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([ours, *entries]))
    return env


def run_git(
    repo: Path,
    *args: str,
    check: bool = True,
    timeout: float = 60.0,
    config: Sequence[str] = (),
    input: str | None = None,
    index: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``git -C repo args``; raise :class:`GitError` (git's stderr quoted) when it fails
    and ``check``. ``index``: the index file git uses instead of the repository's; ``env``:
    more environment (for the merge driver git runs)."""
    cmd = ["git", "-C", str(repo)]
    for c in config:
        cmd += ["-c", c]
    cmd += list(args)
    try:
        done = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            env={
                **_env(),
                **({} if index is None else {"GIT_INDEX_FILE": str(index)}),
                **(env or {}),
            },
            timeout=timeout,
            input=input,
            errors="surrogateescape",
        )
    except FileNotFoundError:
        raise GitError("git is not installed (talos sync needs it on the PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took more than {timeout:.0f} s; stopped") from None
    if check and done.returncode != 0:
        raise GitError(f"git {args[0]} failed: {words(done.stderr or done.stdout)}")
    return done


_LOCK_EXISTS = re.compile(r"Unable to create '([^']+\.lock)': File exists")


def words(said: str) -> str:
    """What a person needs of git's stderr, on one line: the lines that say what failed
    (``fatal:``, ``error:``, a remote's ``remote:`` lines and ``!`` refusals — git's last
    three lines left out the ``fatal:`` of a lock and a hook's reason), else the last three.
    A lock another git keeps is named with what to do."""
    lines = [ln.strip() for ln in said.splitlines() if ln.strip()]
    keep = [ln for ln in lines if ln.startswith(("fatal:", "error:", "remote:", "!"))]
    text = " / ".join((keep or lines[-3:])[-6:]) or "no output"
    m = _LOCK_EXISTS.search(said)
    if m:
        text = text.rstrip(".")
        text += (
            f". Another git is working in this repository ({m.group(1)} exists: a commit "
            "waiting for its editor?); let it finish, then run talos sync again"
        )
    return text


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


def relative(path: Path, home: Path) -> str | None:
    """``path`` relative to ``home`` with ``/`` separators, or ``None`` when outside it."""
    try:
        return path.relative_to(home).as_posix()
    except ValueError:
        return None


def identity(root: Path, device: str) -> list[str]:
    """``user.name``/``user.email`` for talos's commits when git has none configured."""
    if run_git(root, "config", "user.email", check=False).stdout.strip():
        return []
    return [f"user.name=talos ({device})", f"user.email=talos@{device}.invalid"]


def held(path: Path) -> bool:
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
    """The absolute git folder of the work tree ``root`` (``.git``, or a worktree's)."""
    out = run_git(root, "rev-parse", "--absolute-git-dir").stdout.strip()
    return Path(out)


def repair(root: Path) -> list[str]:
    """Remove git lock files a killed git left in the repository of ``root``.

    git refuses to run while ``index.lock`` (or a ref's ``.lock``) exists; a kill of talos
    sync and its git leaves them behind. Only called under the sync lock, so no other talos
    sync is running; while any git works in this repository (a person's ``git commit``
    waiting for its editor keeps ``index.lock`` without holding it open) nothing is removed.

    Returns:
        The lock files removed.
    """
    return unlock(git_dir(root), root)


def unlock(gd: Path, *also: Path) -> list[str]:
    """Remove the lock files of the git folder ``gd`` that no live process holds, unless a
    git process works in ``gd`` or in one of ``also`` (the work tree): a lock it keeps is
    not always open (a person's commit in its editor; sync removed that lock and wrote the
    index under the commit, ``tests/test_sync_attack.py``)."""
    removed: list[str] = []
    candidates = [gd / n for n in ("index.lock", "HEAD.lock", "ORIG_HEAD.lock", "packed-refs.lock")]
    candidates += list((gd / "refs").rglob("*.lock"))
    candidates = [p for p in candidates if p.is_file()]
    if not candidates or git_working(gd, *also):
        return removed
    for p in candidates:
        if not held(p):
            with contextlib.suppress(OSError):
                p.unlink()
                removed.append(str(p))
    return removed


def git_working(*places: Path) -> bool:
    """Whether a live git process (``git``, ``git-receive-pack``, …) works in one of
    ``places``: its current folder is one of them or inside one (Linux: /proc; elsewhere
    ``False``, and :func:`held` judges each lock by its age)."""
    proc = Path("/proc")
    if not (proc / "self" / "cwd").exists():
        return False
    roots = [os.path.realpath(p) for p in places]
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        with contextlib.suppress(OSError):
            name = (proc / pid / "comm").read_text("utf-8", "replace").strip()
            if not name.startswith("git"):
                continue
            cwd = os.readlink(proc / pid / "cwd")
            if any(cwd == r or cwd.startswith(r.rstrip("/") + "/") for r in roots):
                return True
    return False


def local_remote(root: Path, remote: str) -> Path | None:
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
    """What git is in the middle of in the git folder ``gd`` (``"a merge"``, ``"a rebase"``,
    …), or ``None``."""
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


def branch_of(root: Path) -> str:
    """The branch checked out in ``root``.

    Raises:
        GitError: HEAD is detached (the message says how to check out a branch).
    """
    done = run_git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    if done.returncode != 0:
        raise GitError(
            "the home's repository is not on a branch (detached HEAD); check out a branch "
            "(git switch main), then run talos sync again"
        )
    return done.stdout.strip()


def remote_of(root: Path, branch: str) -> str | None:
    """The remote ``branch`` tracks, else ``origin``, else the only or first remote, else
    ``None``."""
    done = run_git(root, "config", f"branch.{branch}.remote", check=False)
    if done.stdout.strip():
        return done.stdout.strip()
    remotes = run_git(root, "remote").stdout.split()
    return "origin" if "origin" in remotes else (remotes[0] if remotes else None)


def rev(root: Path, ref: str) -> str | None:
    """The commit ``ref`` names, or ``None`` when it names none (an unborn branch)."""
    done = run_git(root, "rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False)
    return done.stdout.strip() or None


def is_ancestor(root: Path, a: str, b: str) -> bool:
    """Whether commit ``a`` is an ancestor of (or is) commit ``b``."""
    return run_git(root, "merge-base", "--is-ancestor", a, b, check=False).returncode == 0


def blob(root: Path, rev: str, rel: str) -> bytes:
    """The bytes of ``rel`` at commit ``rev`` (``b""`` when it has no such file)."""
    done = subprocess.run(
        ["git", "-C", str(root), "show", f"{rev}:{rel}"], capture_output=True, env=_env()
    )
    return done.stdout if done.returncode == 0 else b""
