"""What ``talos sync`` takes from another device (design §12.2): the part of the repository
that is the home's, and the versions it refuses — a branch beside the remote's, links and
places out of the home, a device name two homes share. Each refusal changes nothing here and
says what to do.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from talos.errors import InputError
from talos.home import Paths
from talos.sync.device import DEVICE_ENV, DEVICES
from talos.sync.repo import GitError, blob, relative, run_git

__all__ = ["no_new_links", "no_new_places", "other_branch", "shared_device", "specs"]


def specs(root: Path, paths: Paths) -> list[str]:
    """What of the repository ``talos sync`` commits, as pathspecs relative to ``root``: the
    home, and memory.md and the state folder's travelling part (design §12.1) when
    ``talos.toml`` puts them elsewhere in the repository. Never the rest of a bigger
    repository the home is a folder of (a person's staged code went out as "talos sync from
    …": ``tests/test_sync_attack.py``).

    Raises:
        InputError: memory.md or the state folder is outside the repository: it would never
            travel, while sync said it pushed.
    """
    home = relative(paths.home, root)
    if home is None:
        raise InputError(f"the home {paths.home} is outside its repository {root}")
    out = [home]
    for what, path, parts in (
        ("memory.md", paths.memory_file, [""]),
        ("the state folder", paths.state_dir, ["/devices", "/sessions", "/trash"]),
    ):
        rel = relative(path, root)
        if rel is None:
            raise InputError(
                f"{what} ({path}) is outside the repository {root}, so talos sync cannot carry "
                f"it; set it inside the home in {paths.home / 'talos.toml'} (or leave it out "
                "to use the default)"
            )
        if relative(path, paths.home) is None:
            out += [rel + p for p in parts]
    return out


def no_new_places(root: Path, paths: Paths, head: str, target: str) -> None:
    """Refuse a ``talos.toml`` from another device that puts a file talos writes (memory.md,
    the state folder, the recall trace, the skills) out of the home: the config travels
    with the home (design §12.1), and a remote that set ``trace_file`` or ``memory_file`` to
    a file elsewhere had this device's next recall or remember write there
    (``tests/test_sync_attack.py``). A place inside the home, or one this side has already,
    is taken; so is ``sessions_dir``, which names an agent's transcripts wherever they are.

    Raises:
        GitError: naming each setting and place; nothing was changed here.
    """
    import tomllib

    from talos.config import PATH_DEFAULTS

    rel = relative(paths.home / "talos.toml", root)
    if rel is None:
        return
    mine, theirs = blob(root, head, rel), blob(root, target, rel)
    if mine == theirs:
        return
    tables = []
    for data in (mine, theirs):
        try:
            table = tomllib.loads(data.decode("utf-8-sig"))
        except (ValueError, UnicodeDecodeError):
            table = {}
        tables.append(table)
    out = []
    for key in PATH_DEFAULTS:
        value = tables[1].get(key)
        if key == "sessions_dir":
            continue
        if value == tables[0].get(key):
            continue
        for one in value if isinstance(value, list) else [value]:
            if not isinstance(one, str):
                continue
            place = Path(os.path.normpath(paths.home / os.path.expanduser(one)))
            if relative(place, paths.home) is None:
                out.append(f"{key} = {one!r}")
    if out:
        raise GitError(
            "the other device's talos.toml puts talos's files out of the home: "
            f"{'; '.join(out)}. talos does not take a place out of the home from another "
            "machine (it would write there); nothing was changed here. Set it in this "
            "home's talos.toml yourself if you mean it, then run talos sync again"
        )


def shared_device(root: Path, paths: Paths, head: str, upstream: str, device: str) -> None:
    """Stop when another home wrote this device's description (``device.json``) since the
    last sync: two machines run under one name (one ``TALOS_DEVICE`` for both), appending to
    one log whose entries each reads as its own. Sync failed on "git cannot merge
    …/device.json" instead, which named neither cause nor fix (``tests/test_sync_doctor.py``).
    A description this side pushed itself (the home moved, the same name kept) is no sign.

    Raises:
        InputError: naming the other home and what to do; nothing was changed here.
    """
    rel = relative(paths.state_dir / DEVICES / device / "device.json", root)
    if rel is None:
        return
    theirs = blob(root, upstream, rel)
    base = run_git(root, "merge-base", head, upstream, check=False).stdout.strip()
    if not theirs or (base and blob(root, base, rel) == theirs):
        return
    try:
        data = json.loads(theirs)
    except ValueError:
        return
    if not isinstance(data, dict):
        return
    host, home = data.get("host"), data.get("home")
    if home == str(paths.home) and host == socket.gethostname():
        return
    raise InputError(
        f"device {device} is also written by another home ({host}:{home}): two machines "
        f"under one name ({DEVICE_ENV}={device} on both?) mix their logs. Give this one its "
        f"own name ({DEVICE_ENV}=another-name), then run talos sync again; nothing was "
        "changed here"
    )


def no_new_links(root: Path, paths: Paths, head: str, target: str) -> None:
    """Refuse a version of the home from another device that makes a path of it a symbolic
    link this side does not have: talos writes through memory.md and into its device folder,
    so a link from the remote sent this device's facts and audit log out of the home (to any
    file the link names, ``tests/test_sync_attack.py``). A link the person has here already
    travels as it is.

    Raises:
        GitError: naming each new link and its target; nothing was changed here.
    """
    spec = specs(root, paths)
    mine = set(run_git(root, "ls-tree", "-r", "-z", head, "--", *spec).stdout.split("\0"))
    new = []
    for entry in run_git(root, "ls-tree", "-r", "-z", target, "--", *spec).stdout.split("\0"):
        meta, _, name = entry.partition("\t")
        if meta.startswith("120000 ") and entry not in mine:
            link = run_git(root, "cat-file", "blob", meta.split()[2]).stdout
            new.append(f"{name} -> {link}")
    if new:
        raise GitError(
            "the other device's version makes these paths symbolic links: "
            f"{'; '.join(new)}. talos does not take a link from another machine (it can "
            "point out of the home, and talos writes through it); nothing was changed here. "
            "Replace them with the files or folders on the device that made them, then run "
            "talos sync again"
        )


def other_branch(root: Path, remote: str, branch: str) -> None:
    """Refuse to start a second branch on a remote that has others when this branch tracks
    none: a new machine's ``git init`` made ``master`` while the remote's is ``main``, and
    sync pushed ``master`` beside it, so the two machines never met
    (``tests/test_sync_attack.py``). A branch set to track one (``git push -u``) is the
    person's choice and goes on.

    Raises:
        GitError: naming the remote's branches and the command that renames this one.
    """
    if run_git(root, "config", f"branch.{branch}.merge", check=False).stdout.strip():
        return
    refs = run_git(
        root, "for-each-ref", "--format=%(refname)", f"refs/remotes/{remote}/"
    ).stdout.split()
    names = [r.removeprefix(f"refs/remotes/{remote}/") for r in refs]
    names = [n for n in names if n != "HEAD"]
    if not names:
        return  # an empty remote: this push makes its first branch
    want = "main" if "main" in names else "master" if "master" in names else names[0]
    raise GitError(
        f"{remote} has no branch {branch} (it has {', '.join(names)}), and pushing it would "
        f"keep this machine's memory apart; sync on {want} instead: git branch -m {want}, "
        "then talos sync again (or git push -u to make the new branch on purpose)"
    )
