"""Which device this is, and where each device's own state lives (design §12).

State that must travel between machines (usage counts, the audit log with its
acknowledgements and the forgets that act as tombstones) is kept per device, append-only, in
``<state_dir>/devices/<id>/``: a device only ever appends to its own files, so git, Syncthing or
a cloud folder never has two writers of one file, and every reader merges all devices' files.

The id is made once per home per machine and kept in ``<state_dir>/device`` (never synced: the
ignore files leave it out). That file also records which machine and folder made it; a copy
that arrives on another machine or in another folder (a sync folder that copies everything, a
``cp -r`` of the home) is not taken over: a new id is made, so two devices never share one.
``TALOS_DEVICE`` names the device instead (a container whose host name changes each run).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import socket
import time
from pathlib import Path
from typing import Any

from talos.errors import InputError
from talos.fsutil import atomic_write_text, json_value, open_regular, read_regular

__all__ = [
    "DEVICES",
    "DEVICE_ENV",
    "copies",
    "describe",
    "device_dirs",
    "device_home",
    "device_id",
    "own_dir",
]

#: Environment variable that names this device (overrides the id kept in the home).
DEVICE_ENV = "TALOS_DEVICE"
#: Folder of the per-device state, inside the state folder.
DEVICES = "devices"
#: A device id: what a file name can safely hold on every platform.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_LOCAL = "device"  # <state_dir>/device: this machine's id for the home (never synced)
_cache: dict[tuple[str, str], str] = {}


def _machine(home: Path) -> str:
    """A fingerprint of this machine and this home's folder: the host name, the OS's machine
    id when there is one, and the home's absolute path."""
    parts = [socket.gethostname(), str(home.absolute())]
    for name in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        with contextlib.suppress(OSError):
            parts.append(Path(name).read_text("ascii", "replace").strip())
            break
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _new_id() -> str:
    """``<host>-<6 hex>``: readable in a listing, unique by its random part."""
    host = re.sub(r"[^A-Za-z0-9-]+", "-", socket.gethostname()).strip("-")[:24] or "device"
    return f"{host}-{secrets.token_hex(3)}"


def device_id(state_dir: Path, home: Path) -> str:
    """This device's id for the home whose state folder is ``state_dir``.

    ``TALOS_DEVICE`` when set; else the id kept in ``<state_dir>/device`` when that file was
    made on this machine for this folder; else a new id, kept there (a home that cannot be
    written keeps none: the id then lives as long as the process). Memoized per process.

    Returns:
        An id matching ``[A-Za-z0-9][A-Za-z0-9._-]{0,63}``.

    Raises:
        InputError: ``TALOS_DEVICE`` is set to something that cannot name a file.
    """
    named = os.environ.get(DEVICE_ENV)
    if named is not None:
        if not _ID.fullmatch(named):
            raise InputError(
                f"{DEVICE_ENV}={named!r} cannot name a device: use 1-64 letters, digits, "
                "'.', '_' or '-', starting with a letter or digit"
            )
        return named
    key = (str(state_dir), str(home))
    if key in _cache:
        return _cache[key]
    local = state_dir / _LOCAL
    machine = _machine(home)
    found = _read_local(local)
    if found is not None and found.get("machine") == machine:
        _cache[key] = str(found["id"])
        return _cache[key]
    made = _new_id()
    if state_dir.is_dir():  # reading a home creates nothing; the first writer keeps the id
        made = _keep(local, made, machine)
    _cache[key] = made
    return made


def _keep(local: Path, made: str, machine: str) -> str:
    """Keep ``made`` as this machine's id in ``local``; returns the id kept there (another
    process may have raced us: the file read last wins) or ``made`` when it cannot be kept."""
    with contextlib.suppress(OSError, InputError):
        atomic_write_text(
            local, json.dumps({"id": made, "machine": machine}) + "\n", create_folders=False
        )
        found = _read_local(local)
        if found is not None and found.get("machine") == machine:
            return str(found["id"])
    return made


def _read_local(path: Path) -> dict[str, Any] | None:
    """The local id file's ``{"id", "machine"}``, or ``None`` when missing or unusable."""
    try:
        data = json_value(read_regular(path, 4096).decode("utf-8"))
    except (OSError, ValueError, InputError):
        return None
    if isinstance(data, dict) and isinstance(data.get("id"), str) and _ID.fullmatch(data["id"]):
        return data
    return None


def own_dir(state_dir: Path, home: Path) -> Path:
    """``<state_dir>/devices/<this device>/``, with its ``device.json`` written the first time
    (the id, the host, the home's absolute path: readers of another device's log map its paths
    to their own home, :func:`device_home`). Nothing is created here; writers create the
    folder when they first append.

    Raises:
        InputError: ``TALOS_DEVICE`` is invalid (:func:`device_id`).
    """
    return state_dir / DEVICES / device_id(state_dir, home)


def describe(folder: Path, home: Path) -> None:
    """Write ``folder/device.json`` (this device's id, host and home) unless it says so
    already, and keep the id in the home (:func:`device_id`); called by the writers that
    create ``folder``. Errors are left to the caller's own write, which fails the same way."""
    state_dir = folder.parent.parent
    if os.environ.get(DEVICE_ENV) is None:
        local = state_dir / _LOCAL
        found = _read_local(local)
        machine = _machine(home)
        if found is None or found.get("machine") != machine or found.get("id") != folder.name:
            _cache[(str(state_dir), str(home))] = _keep(local, folder.name, machine)
    want = {"id": folder.name, "host": socket.gethostname(), "home": str(home.absolute())}
    have = _read_json(folder / "device.json")
    if have is not None and all(have.get(k) == v for k, v in want.items()):
        return
    with contextlib.suppress(OSError, InputError):
        atomic_write_text(folder / "device.json", json.dumps({**want, "since": int(time.time())}))


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json_value(read_regular(path, 1 << 16).decode("utf-8"))
    except (OSError, ValueError, InputError):
        return None
    return data if isinstance(data, dict) else None


def device_home(folder: Path) -> str | None:
    """The home folder (absolute path, as that device wrote it) of the device whose state is
    ``folder``; ``None`` when its ``device.json`` is missing or unreadable."""
    data = _read_json(folder / "device.json")
    home = data.get("home") if data else None
    return home if isinstance(home, str) else None


def device_dirs(state_dir: Path) -> list[Path]:
    """Every device's folder under ``<state_dir>/devices/``, sorted by name (a name that is
    not a device id, a file, or a symbolic link is left out: a link could point out of the
    home)."""
    root = state_dir / DEVICES
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    out = []
    for name in names:
        p = root / name
        if _ID.fullmatch(name) and p.is_dir() and not p.is_symlink():
            out.append(p)
    return out


#: The logs a device folder holds (design §12.1): what a copy of the folder repeats.
_LOGS = ("audit.jsonl", "usage.jsonl")
_copies_memo: dict[tuple[str, str], tuple[tuple[Any, ...], dict[str, str]]] = {}


def _stamp(folder: Path) -> tuple[Any, ...]:
    """What changes when a folder's description or logs change (sizes and times)."""
    out: list[Any] = [folder.name]
    for name in ("device.json", *_LOGS):
        try:
            st = os.stat(folder / name)
            out += [st.st_size, st.st_mtime_ns, st.st_ino]
        except OSError:
            out.append(None)
    return tuple(out)


def _prefix(short: Path, long: Path) -> bool:
    """Whether the file ``short`` (missing: empty) is a byte prefix of ``long`` (missing:
    empty); read in chunks, regular files only."""
    try:
        with open_regular(short) as a, open_regular(long) as b:
            while True:
                x = a.read(1 << 20)
                if not x:
                    return True
                if b.read(len(x)) != x:
                    return False
    except FileNotFoundError:
        return not os.path.lexists(short)
    except (OSError, InputError):
        return False


def _first_line(path: Path) -> bytes:
    try:
        with open_regular(path) as f:
            return f.readline(1 << 16)
    except (OSError, InputError):
        return b""


def copies(state_dir: Path, own: str | None = None) -> dict[str, str]:
    """Device folders that are another device's folder copied under a new name, as
    ``{copy: original}`` (design §12.1). A folder copied so (``cp -r devices/a devices/b``,
    a sync folder's rename) repeated every audit entry and usage line, and every count was
    doubled while doctor was silent (``tests/test_audit_devices.py``); readers leave a copy out,
    and doctor names it.

    A folder is a copy of another when its ``device.json`` names that other device (a device
    writes its own id there, :func:`describe`), or when its audit log is not empty and its
    audit and usage logs are each the start of the other's (byte for byte: an audit line
    carries its transaction's random id, so two devices never write the same first line), or
    when its audit log starts with this device's first line (only this device wrote it: a
    copy with lines added is still a copy). This device's own folder (``own``) is never a
    copy. Memoized per process by the folders'
    sizes and times.
    """
    folders = device_dirs(state_dir)
    stamp = tuple(_stamp(f) for f in folders)
    key = (str(state_dir), own or "")
    memo = _copies_memo.get(key)
    if memo is not None and memo[0] == stamp:
        return memo[1]
    names = {f.name: f for f in folders}
    mine = _first_line(names[own] / _LOGS[0]) if own in names else b""
    out: dict[str, str] = {}
    for folder in folders:
        if folder.name == own:
            continue
        said = (_read_json(folder / "device.json") or {}).get("id")
        if isinstance(said, str) and said != folder.name and said in names:
            out[folder.name] = said
            continue
        first = _first_line(folder / _LOGS[0])
        if not first.endswith(b"\n"):
            continue
        if own is not None and first == mine:  # only this device wrote that line: a copy of it
            out[folder.name] = own
            continue
        for other in folders:
            if other is folder or out.get(other.name) == folder.name:
                continue
            if _first_line(other / _LOGS[0]) != first:
                continue
            if all(_prefix(folder / n, other / n) for n in _LOGS):
                # two equal folders: the one that is not this device's, else the later name
                if all(_prefix(other / n, folder / n) for n in _LOGS) and (
                    other.name != own and other.name > folder.name
                ):
                    continue
                out[folder.name] = other.name
                break
    _copies_memo[key] = (stamp, out)
    return out
