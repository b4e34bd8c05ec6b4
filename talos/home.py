"""Where a home is and where its files are (design §2).

Resolution: ``--home PATH`` > ``TALOS_HOME`` > ``platformdirs.user_data_dir("talos")``. Each
path can be set on its own (API argument > ``talos.toml`` in the home > default); relative
paths resolve against the home.

Every path leaves here in one canonical spelling (:func:`canonical`), so the persistent index
never takes two spellings of one file for two files: alternating ``--home h`` and ``--home
/abs/h`` re-read all 30,000 sessions on each switch (3.4 s instead of 0.3 s, issue 12 item 7;
``tests/test_home_spelling.py``). The home is resolved fully: a symlinked home is the same home
as its target (same index, same keys). A path in it keeps its own last name unresolved, so a
symlinked ``memory.md`` is still written through and a sessions folder that is a symlink is
followed anew on every look (a retargeted link is seen).

Reading ``talos.toml`` and checking its values is :mod:`talos.config`'s (its names are
importable from here too).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from talos import fsutil
from talos.config import (
    BUDGET,
    CAP,
    CONFIG_FILE,
    DEAD_MIN_DAYS,
    HOOK_KEYS,
    HOOK_RANGES,
    KNOWN_KEYS,
    PATH_DEFAULTS,
    block_limits,
    config_line,
    config_place,
    config_problems,
    dead_min_days,
    load_config,
    place_problems,
    unknown_keys,
)
from talos.errors import InputError
from talos.sync.device import own_dir
from talos.warn import warn

__all__ = [
    "BUDGET",
    "CAP",
    "CONFIG_FILE",
    "DEAD_MIN_DAYS",
    "HOOK_KEYS",
    "HOOK_RANGES",
    "KNOWN_KEYS",
    "MAX_SESSIONS_DIRS",
    "Paths",
    "block_limits",
    "canonical",
    "config_line",
    "config_problems",
    "dead_min_days",
    "load_config",
    "paths_of",
    "resolve_home",
    "resolve_paths",
    "unknown_keys",
]

#: Most folders ``sessions_dir`` may list: a session's sort key numbers its folder with three
#: digits (:class:`talos.sources.sessions.Folder`).
MAX_SESSIONS_DIRS = 999


def canonical(path: Path, follow: bool = False) -> Path:
    """The one spelling of ``path`` that every token and stored key is made of: absolute,
    without ``.``, ``..``, repeated or trailing separators, and with every folder on the way
    resolved (symlinks followed). ``follow`` resolves the last name too (the home); otherwise
    it is kept as named, unless it is ``..`` (issue 12 item 7).

    Raises:
        InputError: the path holds a NUL byte (no file can be named so), or it is relative
            and the current folder is gone.
    """
    if "\0" in str(path):
        raise InputError(f"{str(path)!r}: not a usable path (it holds a NUL byte)")
    try:
        if not path.is_absolute():
            path = Path.cwd() / path
        if follow or path.name in ("", ".", ".."):
            return Path(os.path.realpath(path))
        return Path(os.path.realpath(path.parent)) / path.name
    except OSError as e:  # a relative path while the current folder is gone
        raise InputError(f"{str(path)!r}: cannot be made absolute ({e.strerror})") from None


def _tilde_problem(text: str) -> str | None:
    """Why the leading ``~`` or ``~user`` of ``text`` cannot be expanded, or ``None`` (no
    tilde, or it expands). ``Path.expanduser`` raised ``RuntimeError`` for ``~nosuchuser``:
    "unexpected error … a bug in talos" on every command (issue 12.4, hostile pass)."""
    if not text.startswith("~"):
        return None
    head = text.split("/", 1)[0]
    if os.path.expanduser(head) != head:
        return None
    if head == "~":
        return "~ cannot be expanded (no HOME is set); write the path in full"
    return f"there is no user {head[1:]!r}, so {head} cannot be expanded; write the path in full"


#: What to do about a path the file system would refuse as too long (:func:`fsutil.too_long`).
TOO_LONG = "the name is too long for the file system; use a shorter path"


def _long(value: str) -> str:
    """``value`` quoted for a message about its length: its first 60 characters and how many
    there are (a sentence cut at 1,000 characters lost what was wrong with a 6,000-one)."""
    return repr(value) if len(value) <= 80 else f"{value[:60]!r}… ({len(value)} characters)"


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The home folder, canonical (:func:`canonical`, symlinks resolved): ``home`` if given,
    else ``$TALOS_HOME``, else the platform data dir as :func:`talos.hooks.state.home_dir`
    finds it (one lookup for every command and the hook client, which finds the home with the
    standard library only).

    Raises:
        InputError: ``home`` (or ``$TALOS_HOME``) is an empty path (an unset variable:
            :func:`talos.hooks.state.blank_home`), holds a NUL byte, a ``~user`` that does not
            exist, or a name too long for the file system.
    """
    from talos.hooks.state import blank_home  # the standard library only

    blank = blank_home(None if home is None else os.fspath(home))
    if blank:
        raise InputError(blank)
    if home is not None:
        text = os.fspath(home)
        if "\0" in text:
            raise InputError(f"the home {text!r} contains a NUL byte; remove it")
    else:
        text = os.environ.get("TALOS_HOME", "")
        if not text:
            from talos.hooks.state import home_dir  # the standard library only

            return canonical(Path(home_dir()), follow=True)
    problem = _tilde_problem(text)
    if problem:
        raise InputError(f"the home {text!r}: {problem}")
    path = Path(text).expanduser()
    if fsutil.too_long(path.absolute()):
        raise InputError(f"the home {_long(text)}: {TOO_LONG}")
    return canonical(path, follow=True)


@dataclass(frozen=True, slots=True)
class Paths:
    """Every file talos reads or writes in one home (design §2)."""

    home: Path
    memory_file: Path
    skills_dir: Path
    sessions_dir: Path
    state_dir: Path
    trace_file: Path
    config: dict[str, Any]
    #: Every sessions folder, in load order (issue 16.4: ``sessions_dir`` may be a list);
    #: ``sessions_dir`` is the first. Empty when constructed by hand: then ``(sessions_dir,)``.
    sessions_dirs: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        if not self.sessions_dirs:
            object.__setattr__(self, "sessions_dirs", (self.sessions_dir,))

    @property
    def usage_db(self) -> Path:
        """SQLite file with usage counts (design §6.3)."""
        return self.state_dir / "usage.db"

    @property
    def audit_file(self) -> Path:
        """This device's append-only audit log of every write (design §7.6, §9):
        ``<state_dir>/devices/<id>/audit.jsonl``. Writers append only here; readers merge every
        device's log and a legacy ``<state_dir>/audit.jsonl`` (:mod:`talos.writer.logs`).

        Raises:
            InputError: ``TALOS_DEVICE`` cannot name a device.
        """
        return self.device_dir / "audit.jsonl"

    @property
    def device_dir(self) -> Path:
        """This device's own state folder, ``<state_dir>/devices/<id>/`` (design §12,
        :mod:`talos.sync.device`): its audit log and usage log; never written by another device.

        Raises:
            InputError: ``TALOS_DEVICE`` cannot name a device.
        """
        return own_dir(self.state_dir, self.home)

    @property
    def usage_log(self) -> Path:
        """This device's append-only usage log (design §12); every device's is read."""
        return self.device_dir / "usage.jsonl"

    @property
    def hits_file(self) -> Path:
        """A reference Talos ``recall_hits.json``, imported once (design §6.3)."""
        return self.state_dir / "recall_hits.json"

    @property
    def lock_dir(self) -> Path:
        """Folder of inter-process lock files."""
        return self.state_dir / "locks"


_WARNED_KEYS: set[str] = set()


def _path_problem(name: str, value: str, p: Path) -> str | None:
    """Why the path setting ``name`` (``value``, resolved to ``p``) cannot be used: a name too
    long for the file system, or a place on a kernel file system (``state_dir = "/proc"``,
    issue 12.4). (A NUL byte and a ``~user`` are refused before ``p`` is made.)"""
    if fsutil.too_long(p):
        return f"{name} {_long(value)}: {TOO_LONG}"
    root = fsutil.kernel_root(p)
    if root is not None:
        return (
            f"{name} {value!r} is inside {root}, a kernel file system, not a place for "
            "files; point it at a file or folder of your own"
        )
    return None


def _joined(root: Path, text: str) -> Path:
    """``text`` with its ``~`` expanded (checked before), relative to the home ``root``."""
    p = Path(text).expanduser()
    return p if p.is_absolute() else root / p


def resolve_paths(home: str | os.PathLike[str] | None = None, **overrides: Any) -> Paths:
    """Resolve every path of a home.

    Args:
        home: the home folder or ``None`` (see :func:`resolve_home`).
        **overrides: ``memory_file``, ``skills_dir``, ``sessions_dir``, ``state_dir``,
            ``trace_file``; ``None`` means "use talos.toml or the default". ``sessions_dir``
            (here or in talos.toml) may also be a list of folders (issue 16.4): they load in
            the list's order, a folder given twice (two spellings) counts once.

    Returns:
        :class:`Paths`, every one canonical (:func:`canonical`) but an overriding
        ``trace_file`` that cannot be a path (below).

    Unknown keys of ``talos.toml`` are warned about once per process (:func:`unknown_keys`).

    Raises:
        InputError: ``talos.toml`` is invalid, or a path (from it or from ``overrides``)
            holds a NUL byte or a ``~user`` that does not exist, is too long for the file
            system, or lies on a kernel file system. An overriding ``trace_file``
            (an API argument, ``talos.compat.TRACE_FILE``) is left to the trace writer, which
            warns: the trace must never fail a recall (design §6.1, issue 12.4).
    """
    root = resolve_home(home)
    config = load_config(root)
    for message in unknown_keys(root, config):
        if message not in _WARNED_KEYS:
            _WARNED_KEYS.add(message)
            warn(message)
    return paths_of(root, config, **overrides)


def paths_of(root: Path, config: dict[str, Any], checked: bool = True, **overrides: Any) -> Paths:
    """The paths of the home ``root`` (canonical) under the settings ``config`` (a parsed
    talos.toml: this home's, or the one another device's version of it holds, which
    ``talos sync`` checks before taking it) and ``overrides``, as :func:`resolve_paths`.

    Raises:
        InputError: as :func:`resolve_paths`; a place problem (:func:`talos.config.place_problems`)
            names the setting the person wrote, with its ``talos.toml:LINE`` (not looked
            for unless ``checked``).
    """
    source: dict[str, str] = {}  # setting -> "toml", "argument" (absent: the default)

    def pick(name: str, value: Any = None, configured: bool | None = None) -> Path | None:
        if configured is None:
            value = overrides.get(name)
            configured = value is None
            if configured:
                value = config.get(name)
        if value is not None:
            source[name] = "toml" if configured else "argument"
        if value is None:
            value = PATH_DEFAULTS[name]
            if value is None:
                return None
            return canonical(root / value)  # a default: its files are the readers' to check
        if not isinstance(value, str | os.PathLike):  # memory_file = 1: bench/fuzz_readers.py
            bad = f"{name} must be a path string, not {value!r}"
            raise InputError(f"{config_place(root, name)}: {bad}" if configured else bad)
        text = os.fspath(value)
        if "\0" in text:
            problem: str | None = (
                f"{name} contains a NUL byte ({text!r}); a path cannot hold one, remove it"
            )
        else:
            problem = _tilde_problem(text)
            problem = problem and f"{name} {text!r}: {problem}"
        if not configured and name == "trace_file":
            # a NUL, a ~user, /dev/null: write_trace warns on every recall; recall goes on
            return Path(text) if problem else canonical(_joined(root, text))
        if not problem:
            p = _joined(root, text)
            problem = _path_problem(name, text, p if fsutil.too_long(p) else canonical(p))
        if problem:
            raise InputError(f"{config_place(root, name)}: {problem}" if configured else problem)
        return canonical(p)

    state = pick("state_dir")
    assert state is not None
    trace = pick("trace_file") or state / "recall_trace.jsonl"
    memory, skills = pick("memory_file"), pick("skills_dir")
    assert memory is not None and skills is not None
    folders = _sessions_dirs(root, config, overrides.get("sessions_dir"), pick)
    paths = Paths(root, memory, skills, folders[0], state, trace, config, folders)
    for name, other, why in place_problems(paths) if checked else ():
        if source.get(name) is None and other is not None:
            name = other  # the setting the person wrote made the default wrong
        if source.get(name) != "toml":
            continue  # an argument (the reference module's paths) is the caller's own choice
        value = config.get(name)
        said = f"{name} = {value!r}" if isinstance(value, str) else name
        raise InputError(f"{config_place(root, name)}: {said} {why}")
    return paths


def _sessions_dirs(
    root: Path, config: dict[str, Any], override: Any, pick: Callable[..., Path | None]
) -> tuple[Path, ...]:
    """The sessions folders: ``override`` (a path or a list of paths) > talos.toml's
    ``sessions_dir`` (a string or an array of strings) > the default; each checked as one
    path setting (``pick``). Spellings that :func:`canonical` makes equal count once; a
    folder reached through two links is one folder when listed
    (:func:`talos.sources.sessions.session_folders`).

    Raises:
        InputError: an empty list, one of more than :data:`MAX_SESSIONS_DIRS` entries, or an entry
            that is not a usable path."""
    configured = override is None
    value = config.get("sessions_dir") if configured else override
    if not isinstance(value, list | tuple):  # one path (or a wrong type: pick says so)
        one = pick("sessions_dir")
        assert one is not None
        return (one,)
    if not value:
        where = f"{config_place(root, 'sessions_dir')}: " if configured else ""
        raise InputError(
            f"{where}sessions_dir is an empty list; name at least one folder, or remove it"
        )
    if len(value) > MAX_SESSIONS_DIRS:
        where = f"{config_place(root, 'sessions_dir')}: " if configured else ""
        raise InputError(
            f"{where}sessions_dir lists {len(value)} folders, more than {MAX_SESSIONS_DIRS}; "
            "use DIR/** for a folder of folders"
        )
    out: list[Path] = []
    for item in value:
        p = pick("sessions_dir", item, configured)
        assert p is not None
        if p not in out:
            out.append(p)
    return tuple(out)
