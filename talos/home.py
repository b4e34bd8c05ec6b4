"""Where a home is and where its files are (SPEC §2).

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
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from talos.errors import InputError

__all__ = ["CONFIG_FILE", "Paths", "canonical", "resolve_home", "resolve_paths"]

CONFIG_FILE = "talos.toml"

_DEFAULTS = {
    "memory_file": "memory.md",
    "skills_dir": "skills",
    "sessions_dir": ".talos/sessions",
    "state_dir": ".talos",
    "trace_file": None,  # default: <state_dir>/recall_trace.jsonl
}


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


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The home folder, canonical (:func:`canonical`, symlinks resolved): ``home`` if given,
    else ``$TALOS_HOME``, else the platform data dir.

    Raises:
        InputError: the path holds a NUL byte.
    """
    if home is not None and str(home) != "":
        return canonical(Path(home).expanduser(), follow=True)
    env = os.environ.get("TALOS_HOME")
    if env:
        return canonical(Path(env).expanduser(), follow=True)
    return canonical(Path(platformdirs.user_data_dir("talos")), follow=True)


@dataclass(frozen=True, slots=True)
class Paths:
    """Every file talos reads or writes in one home (SPEC §2)."""

    home: Path
    memory_file: Path
    skills_dir: Path
    sessions_dir: Path
    state_dir: Path
    trace_file: Path
    config: dict[str, Any]

    @property
    def usage_db(self) -> Path:
        """SQLite file with usage counts (SPEC §6.3)."""
        return self.state_dir / "usage.db"

    @property
    def audit_file(self) -> Path:
        """Append-only audit log of every write (SPEC §7.6)."""
        return self.state_dir / "audit.jsonl"

    @property
    def hits_file(self) -> Path:
        """A reference Talos ``recall_hits.json``, imported once (SPEC §6.3)."""
        return self.state_dir / "recall_hits.json"

    @property
    def lock_dir(self) -> Path:
        """Folder of inter-process lock files."""
        return self.state_dir / "locks"


def load_config(home: Path) -> dict[str, Any]:
    """Read ``talos.toml`` in ``home`` ({} when absent).

    Raises:
        InputError: the file exists but is not valid TOML (message names file and line).
    """
    path = home / CONFIG_FILE
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        return {}
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, expected a TOML file") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: invalid TOML: {e}") from None
    except UnicodeDecodeError as e:  # found by bench/fuzz_readers.py
        raise InputError(f"{path}: not valid UTF-8 at byte {e.start}; save it as UTF-8") from None


def resolve_paths(home: str | os.PathLike[str] | None = None, **overrides: Any) -> Paths:
    """Resolve every path of a home.

    Args:
        home: the home folder or ``None`` (see :func:`resolve_home`).
        **overrides: ``memory_file``, ``skills_dir``, ``sessions_dir``, ``state_dir``,
            ``trace_file``; ``None`` means "use talos.toml or the default".

    Returns:
        :class:`Paths`, every one canonical (:func:`canonical`).

    Raises:
        InputError: ``talos.toml`` is invalid.
    """
    root = resolve_home(home)
    config = load_config(root)

    def pick(name: str) -> Path | None:
        value = overrides.get(name)
        if value is None:
            value = config.get(name, _DEFAULTS[name])
        if value is None:
            return None
        if not isinstance(value, str | os.PathLike):  # memory_file = 1: bench/fuzz_readers.py
            raise InputError(f"{root / CONFIG_FILE}: {name} must be a path string, not {value!r}")
        p = Path(value).expanduser()
        try:
            return canonical(p if p.is_absolute() else root / p)
        except InputError as e:
            raise InputError(f"{root / CONFIG_FILE}: {name}: {e}") from None

    state = pick("state_dir")
    assert state is not None
    trace = pick("trace_file") or state / "recall_trace.jsonl"
    memory, skills, sessions = pick("memory_file"), pick("skills_dir"), pick("sessions_dir")
    assert memory is not None and skills is not None and sessions is not None
    return Paths(root, memory, skills, sessions, state, trace, config)
