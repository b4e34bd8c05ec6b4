"""What ``talos sync`` takes from another device (design §12.2): the part of the repository
that is the home's, and the versions it refuses — a branch beside the remote's, links and
places out of the home, a device name two homes share. Each refusal changes nothing here and
says what to do.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path

from talos.errors import InputError
from talos.home import Paths
from talos.sync.device import DEVICE_ENV, DEVICES
from talos.sync.repo import GitError, blob, relative, run_git

__all__ = [
    "no_new_attributes",
    "no_new_links",
    "no_new_places",
    "other_branch",
    "own_logs_kept",
    "shared_device",
    "specs",
]

#: This device's logs, in its folder: append-only on every route (design §12.1).
OWN_LOGS = ("audit.jsonl", "usage.jsonl")


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
    the state folder, the recall trace, the skills) out of the home, or aims a setting at
    another kind of file than its own (:func:`talos.config.place_problems`: ``memory_file =
    ".git/config"`` had the next remember append to git's config, ``trace_file =
    "memory.md"`` each recall append a JSON line to memory.md, which sync then pushed
    everywhere): the config travels with the home (design §12.1), and this device would write
    where the other one says (``tests/test_sync_attack.py``, ``tests/test_sync_remote.py``).
    A place inside the home that is its setting's own kind, or one this side has already, is
    taken; so is ``sessions_dir``'s place, which names an agent's transcripts wherever they
    are (but not talos's own logs).

    Raises:
        GitError: naming each setting and what is wrong; nothing was changed here.
    """
    import tomllib

    from talos.config import PATH_DEFAULTS, place_problems
    from talos.home import paths_of

    rel = relative(paths.home / "talos.toml", root)
    if rel is None:
        return
    mine, theirs = blob(root, head, rel), blob(root, target, rel)
    if mine == theirs:
        return
    tables = []
    out = []
    for data in (mine, theirs):
        try:
            table = tomllib.loads(data.decode("utf-8-sig"))
        except (ValueError, UnicodeDecodeError) as e:
            table = {}
            if data is theirs:  # every command here would stop on it
                raise GitError(
                    f"the other device's talos.toml cannot be read ({str(e)[:200]}): every "
                    "command here would stop on it, so talos does not take it; nothing was "
                    "changed here. Fix it on the device that wrote it, then run talos sync again"
                ) from None
        tables.append(table)
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
                out.append(f"{key} = {one!r} is out of the home")
    if not out and theirs:
        try:
            placed = paths_of(paths.home, tables[1], checked=False)
        except InputError as e:
            out.append(str(e))
        else:
            for name, other, why in place_problems(placed):
                if other is not None and name not in tables[1]:
                    name = other
                value = tables[1].get(name)
                said = f"{name} = {value!r}" if isinstance(value, str) else name
                out.append(f"{said} {why}")
    if out:
        raise GitError(
            "the other device's talos.toml puts talos's files where they do not belong: "
            f"{'; '.join(out)}. talos does not take such a place from another machine (it "
            "would write there); nothing was changed here. Fix talos.toml on the device that "
            "wrote it (or set it in this home's talos.toml yourself if you mean it), then run "
            "talos sync again"
        )


def own_logs_kept(
    root: Path, paths: Paths, head: str, target: str, device: str, base: str | None = None
) -> None:
    """Refuse a version from another device in which this device's own logs (its audit and
    usage logs) are not an extension of this device's copy: only this device appends to them
    (design §12.1), so a version that deletes, shortens or rewrites one — or a ``state_dir``
    that leaves them behind — is not a version of them at all. Sync fast-forwarded over a
    remote that had deleted this device's audit log: ``history`` said "no history", doctor
    "no writes recorded yet", and talos's lines could no longer be restored
    (``tests/test_sync_remote.py``).

    ``target`` is the version sync would move to; with ``base`` (the merge base), it is the
    remote's version before a merge, which may be behind this device's copy (a prefix of it,
    or without the log when ``base`` has none: not pushed yet), never beside it.

    Raises:
        GitError: naming each log and what the other version did to it; nothing was changed
            here.
    """
    import tomllib

    from talos.home import paths_of

    try:
        config = tomllib.loads(
            blob(root, target, relative(paths.home / "talos.toml", root) or "-").decode("utf-8-sig")
        )
        state_there = paths_of(paths.home, config, checked=False).state_dir
    except (ValueError, UnicodeDecodeError, InputError):
        state_there = paths.state_dir
    out = []
    for name in OWN_LOGS:
        rel_here = relative(paths.state_dir / DEVICES / device / name, root)
        rel_there = relative(state_there / DEVICES / device / name, root)
        if rel_here is None:
            continue
        mine = blob(root, head, rel_here)
        if not mine:
            continue
        theirs = blob(root, target, rel_there) if rel_there is not None else b""
        if base is not None and rel_there == rel_here:
            old = blob(root, base, rel_here) if base else b""
            if mine.startswith(theirs) and theirs.startswith(old):
                continue  # the remote is behind: this device's newer lines are not pushed yet
        missing = _first_missing(mine, theirs)
        if missing is None:
            continue
        if rel_there != rel_here:
            what = f"leaves it behind (state_dir moves to {state_there})"
        elif not theirs:
            what = "deletes it"
        elif mine.startswith(theirs):
            what = f"cuts it short ({len(theirs):,} of its {len(mine):,} bytes)"
        else:
            what = f"rewrites it (its line {missing} is not there)"
        out.append(f"{rel_here} {what}")
    out += _description_kept(root, paths, target, device)
    if out:
        raise GitError(
            f"the other device's version changes this device's own logs: {'; '.join(out)}. "
            "Only this device appends to them (its history, restores and counts are there), "
            "so talos does not take that version; nothing was changed here. Undo that change "
            "on the device that made it (git revert, or restore the file from this device), "
            "then run talos sync again"
        )


def _description_kept(root: Path, paths: Paths, target: str, device: str) -> list[str]:
    """This device's ``device.json`` in ``target`` when it names another device: every
    reader then takes this device's folder for a copy of that one's
    (:func:`talos.sync.device.copies`) and leaves its history and counts out. Another
    clone rewrote it so, keeping the host and home (:func:`shared_device` saw no other home),
    and sync took it (``tests/test_remote_attack.py``)."""
    rel = relative(paths.state_dir / DEVICES / device / "device.json", root)
    theirs = blob(root, target, rel) if rel is not None else b""
    try:
        data = json.loads(theirs) if theirs else None
    except ValueError:
        data = None
    said = data.get("id") if isinstance(data, dict) else None
    if said is None or said == device:
        return []
    return [f"{rel} names device {said} instead of {device}"]


def _first_missing(mine: bytes, theirs: bytes) -> int | None:
    """The 1-based number of the first line of ``mine`` that ``theirs`` does not keep, in
    order (``None``: every line is kept). Lines may come between them: git's union merge of a
    log two machines wrote under one name (``shared_device``) interleaves their lines."""
    rest = iter(theirs.splitlines())
    for no, line in enumerate(mine.splitlines(), 1):
        if not any(other == line for other in rest):
            return no
    return None


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


#: Git attributes that change the bytes git writes of a file, reads into a commit, or merges
#: (gitattributes(5)): a version from another device may not set them on talos's files.
BYTE_ATTRIBUTES = ("merge", "working-tree-encoding", "filter", "ident", "eol", "text", "crlf")


def _attributes(root: Path, tree: str, rels: list[str]) -> dict[tuple[str, str], str]:
    """``{(path, attribute): value}`` of :data:`BYTE_ATTRIBUTES` for ``rels`` as the
    ``.gitattributes`` files of ``tree`` (every folder's) set them, read from a scratch index
    (``git check-attr --cached``; this clone's own attribute files count on both sides)."""
    with tempfile.TemporaryDirectory(prefix="talos-attr-") as tmp:
        index = Path(tmp) / "index"
        run_git(root, "read-tree", tree, index=index)
        out = run_git(
            root, "check-attr", "--cached", "-z", *BYTE_ATTRIBUTES, "--", *rels, index=index
        ).stdout.split("\0")
    return {(out[i], out[i + 1]): out[i + 2] for i in range(0, len(out) - 2, 3)}


def no_new_attributes(root: Path, paths: Paths, head: str, target: str, device: str) -> None:
    """Refuse a version from another device whose ``.gitattributes`` (the home's or a
    folder's) changes how git treats talos's files — memory.md and this device's logs — from
    how it treats them here: a merge other than talos's, an encoding, a filter, line-ending
    conversion. ``memory.md working-tree-encoding=UTF-16LE`` from another clone was taken,
    and every later sync of this device failed on "git add failed: failed to encode
    'memory.md'", naming neither the file that did it nor the fix
    (``tests/test_remote_attack.py``). An attribute this side sets already travels as it is.

    Raises:
        GitError: naming each file, attribute and value; nothing was changed here.
    """
    rels = [
        r
        for r in (
            relative(paths.memory_file, root),
            *(relative(paths.state_dir / DEVICES / device / n, root) for n in OWN_LOGS),
        )
        if r is not None
    ]
    if not rels:
        return
    mine, theirs = _attributes(root, head, rels), _attributes(root, target, rels)
    changed = [
        f"{path} {attr}: {value} (here: {mine.get((path, attr), 'unspecified')})"
        for (path, attr), value in theirs.items()
        if value != "unspecified" and mine.get((path, attr), "unspecified") != value
    ]  # a version without talos's lines (a clone that never synced) gets them back here
    if changed:
        raise GitError(
            "the other device's .gitattributes changes how git treats talos's files: "
            f"{'; '.join(changed)}. talos merges and writes these files itself, so it does not "
            "take that from another machine; nothing was changed here. Remove those lines on "
            "the device that wrote them (or set them in this home yourself if you mean it), "
            "then run talos sync again"
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
