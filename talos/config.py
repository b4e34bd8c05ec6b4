"""``talos.toml``: reading it and checking its values (design §2).

Every setting a home's ``talos.toml`` may hold (:data:`KNOWN_KEYS`), the defaults of those that
are numbers, how the file is read (:func:`load_config`: a regular file, UTF-8, TOML), and what
is wrong with a value, said as ``talos.toml:LINE: what`` (:func:`config_problems`,
:func:`unknown_keys`, :func:`block_limits`, :func:`dead_min_days`). Recall, the hooks and
``talos doctor`` read it here; :mod:`talos.home` resolves the path settings it holds.
"""

from __future__ import annotations

import difflib
import re
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from talos import fsutil
from talos.errors import InputError

if TYPE_CHECKING:
    from talos.home import Paths

__all__ = [
    "BUDGET",
    "CAP",
    "CONFIG_FILE",
    "DEAD_MIN_DAYS",
    "HOOK_KEYS",
    "HOOK_RANGES",
    "KNOWN_KEYS",
    "PATH_DEFAULTS",
    "block_limits",
    "config_line",
    "config_place",
    "config_problems",
    "dead_min_days",
    "defaults_only",
    "load_config",
    "place_problems",
    "unknown_keys",
]

CONFIG_FILE = "talos.toml"

#: The path settings of ``talos.toml`` and their defaults, relative to the home
#: (:func:`talos.home.resolve_paths` resolves them).
PATH_DEFAULTS: dict[str, str | None] = {
    "memory_file": "memory.md",
    "skills_dir": "skills",
    "sessions_dir": ".talos/sessions",
    "state_dir": ".talos",
    "trace_file": None,  # default: <state_dir>/recall_trace.jsonl
}

#: Every key ``talos.toml`` may hold; any other is reported (a typo such as ``modle`` was
#: silently ignored, issue 12.7). A module that reads a new key adds it here.
KNOWN_KEYS = frozenset(
    {*PATH_DEFAULTS, "lang", "model", "hooks", "dense", "dead_min_days", "budget", "k"}
)
#: The block's default budget in characters (``budget`` in talos.toml; design §6.1 rule 6): the
#: size an agent can afford on every turn. Dev (``bench/tune_lab.py budget``), block gold
#: recall / median size: 1,500 → LoCoMo 0.631 / 1,384, Chinese set 0.859; **2,000 → 0.667 /
#: 1,884, 0.873** (the ranking's top 10 is ~2,100 characters of LoCoMo rows); 3,000 → 0.707 /
#: 2,904, 0.904.
BUDGET = 2000
#: The most rows a block holds (``k`` in talos.toml, the CLI's and MCP's ``k``): a cap; the
#: budget decides. Dev at 2,000 characters: cap 10 → Chinese set 0.774, 20 → 0.853, **30 →
#: 0.870** (median 1,855 characters), 50 → 0.873 (LoCoMo 0.667 from 15 on: ~9 of its rows
#: fill the budget).
CAP = 30
#: Days a memory must have been counted (since the first recall that saw it) before ``talos
#: dead`` may propose it (``dead_min_days`` in talos.toml). A newcomer's fact was proposed
#: after 8 recalls in a new home's first ten minutes; two weeks give a fact used once a week
#: (the Friday deploy) two chances to be recalled first.
DEAD_MIN_DAYS = 14
#: Keys of the ``[hooks]`` table (:data:`talos.hooks.state.DEFAULTS` plus the scope table) and
#: the type each value must have; a wrong one is reported, and the hook uses its default.
HOOK_KEYS: dict[str, type | tuple[type, ...]] = {
    "timeout": (int, float),
    "server": bool,
    "idle": (int, float),
    "k": int,
    "budget": int,
    "session_facts": int,
    "session_hits": int,
    "scopes": dict,
}
#: The range the hook clamps each number of ``[hooks]`` to (``talos.hooks.state.RANGES``, which
#: this module's readers cannot import from the standard-library-only hook path, or back).
HOOK_RANGES: dict[str, tuple[float, float]] = {
    "timeout": (0.2, 9.0),  # below the 10 s the agent's handler allows (hook install)
    "idle": (1.0, 86_400.0),
    "k": (0, 1_000_000),
    "budget": (200, 1_000_000),
    "session_facts": (0, 1_000_000),
    "session_hits": (0, 1_000_000),
}


#: Set inside :func:`defaults_only`: :func:`load_config` reads nothing.
_DEFAULTS_ONLY: ContextVar[bool] = ContextVar("talos_config_defaults_only", default=False)


@contextmanager
def defaults_only() -> Iterator[None]:
    """Within it, :func:`load_config` gives ``{}``: every setting is its default. ``talos
    doctor`` runs its other checks so when ``talos.toml`` cannot be used (a syntax error, a
    value talos refuses): a pasted credential in memory.md went unreported until the TOML
    was fixed (``tests/test_doctor_config.py``)."""
    token = _DEFAULTS_ONLY.set(True)
    try:
        yield
    finally:
        _DEFAULTS_ONLY.reset(token)


def load_config(home: Path) -> dict[str, Any]:
    """Read ``talos.toml`` in ``home`` ({} when absent, and inside :func:`defaults_only`).

    Only a regular file of at most :data:`talos.fsutil.MAX_CONFIG_BYTES` is read: a FIFO
    there hung every command (issue 12.3).

    Raises:
        InputError: the file exists but is not a regular file, cannot be read, is not valid
            UTF-8 or TOML, nests values too deeply (``RecursionError``, issue 12.4) or holds a
            number too long for Python to read (``ValueError``); the message names the file
            (and the line when TOML gives one). A leading byte order mark is skipped.
    """
    if _DEFAULTS_ONLY.get():
        return {}
    path = home / CONFIG_FILE
    try:
        data = fsutil.read_regular(path, fsutil.MAX_CONFIG_BYTES)
    except FileNotFoundError:
        return {}
    except (fsutil.NotRegularFile, fsutil.FileTooLarge):
        raise
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror}); make it readable") from None
    try:
        text = data.decode("utf-8-sig")  # an editor's byte order mark is not a statement
    except UnicodeDecodeError as e:  # found by bench/fuzz_readers.py
        raise InputError(f"{path}: not valid UTF-8 at byte {e.start}; save it as UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: invalid TOML: {_toml_where(str(e), text)}") from None
    except ValueError as e:  # an integer of 5,000 digits: Python's int() limit, not TOML's
        if "digits" in str(e):
            raise InputError(
                f"{path}: invalid TOML: a number has more than "
                f"{sys.get_int_max_str_digits()} digits; shorten it"
            ) from None
        raise InputError(f"{path}: invalid TOML: {e}") from None
    except RecursionError:
        raise InputError(
            f"{path}: values nested too deeply (arrays or tables inside each other); "
            "talos.toml holds plain key = value settings"
        ) from None


def _toml_where(message: str, text: str) -> str:
    """``tomllib``'s message with its place said as a line: "(at end of document)" (a key
    given twice on a last line without a newline) becomes the last line's number."""
    if message.endswith("(at end of document)"):
        last = text.count("\n") + (0 if text.endswith("\n") else 1)
        hint = "; is a key given twice?" if message.startswith("Cannot overwrite") else ""
        message = message.removesuffix("(at end of document)") + (
            f"(at line {last}, the last line{hint})"
        )
    return message


def config_line(path: Path, key: str, table: str = "") -> int | None:
    """1-based line of ``key = ...`` in the TOML file ``path``: a top-level key, or one of the
    table ``table`` (``"hooks"`` for ``[hooks]``); None when absent."""
    try:
        data = fsutil.read_regular(path, fsutil.MAX_CONFIG_BYTES)
        text = data.decode("utf-8-sig", "replace")
    except OSError:
        return None
    assign = re.compile(rf"""^\s*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*=""")
    here = ""
    for no, line in enumerate(text.splitlines(), 1):
        head = line.strip()
        if head.startswith("["):  # a table starts: the keys below are its own
            here = head.strip("[] \t").split("#")[0].strip("[] \t")
            continue
        if here == table and assign.match(line):
            return no
    return None


def config_place(root: Path, key: str, table: str = "") -> str:
    """``talos.toml:LINE`` of ``key`` (of ``table``) in the home ``root`` (just the file when
    not found)."""
    file = root / CONFIG_FILE
    no = config_line(file, key, table)
    return f"{file}:{no}" if no else str(file)


def dead_min_days(paths: Paths) -> int:
    """``dead_min_days`` of the home's talos.toml, else :data:`DEAD_MIN_DAYS` (design §6.4:
    the span a memory must have been counted before ``dead`` may propose it).

    Raises:
        InputError: the value is not a whole number of days, 0 or more
            (``talos.toml:LINE: dead_min_days must be ...``).
    """
    value = paths.config.get("dead_min_days", DEAD_MIN_DAYS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(
            f"{config_place(paths.home, 'dead_min_days')}: dead_min_days must be a whole number of "
            f"days, 0 or more, not {value!r}"
        )
    return value


def block_limits(paths: Paths) -> tuple[int, int]:
    """``(budget, k)`` of the home's talos.toml: the block's budget in characters (default
    :data:`BUDGET`) and its cap on rows (default :data:`CAP`), design §6.1 rule 6.

    Raises:
        InputError: a value that is not a whole number in range (budget 200–1,000,000, k
            1–1,000), as ``talos.toml:LINE: budget must be ...``.
    """
    out = []
    for key, default, lo, hi in (("budget", BUDGET, 200, 1_000_000), ("k", CAP, 1, 1000)):
        value = paths.config.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise InputError(
                f"{config_place(paths.home, key)}: {key} must be a whole number from {lo:,} to "
                f"{hi:,}, not {value!r}"
            )
        out.append(value)
    return out[0], out[1]


def config_problems(paths: Paths, check_lang: bool = True) -> list[str]:
    """Values of ``talos.toml`` that talos cannot use, each as ``talos.toml:LINE: what``.

    (Path values and TOML syntax are checked when the file is read, :func:`load_config`;
    unknown keys are not problems but warnings, :func:`unknown_keys`.) Every command checks
    these first (``talos.cli.common.checked_paths``), so the label and model tables are
    imported only when talos.toml names a ``lang`` or a ``model``: a command that needs
    neither does not load the renderer and numpy for them.

    Args:
        paths: the resolved paths; ``paths.config`` is the parsed file.
        check_lang: also check ``lang`` (the CLI skips it when ``--lang`` overrides it).
    """
    out: list[str] = []
    lang = paths.config.get("lang")
    if check_lang and lang is not None:
        from talos.render import LABELS  # imported on use (see above)

        if not isinstance(lang, str) or lang not in LABELS:
            out.append(
                f"{config_place(paths.home, 'lang')}: lang must be one of "
                f"{', '.join(sorted(LABELS))}, not {lang!r}"
            )
    model = paths.config.get("model")
    if model is not None:
        from talos.ranking.activation import MODEL_NAMES  # imported on use (see above)

        if not isinstance(model, str) or model not in MODEL_NAMES:
            out.append(
                f"{config_place(paths.home, 'model')}: model must be one of "
                f"{', '.join(MODEL_NAMES)}, not {model!r}"
            )
    dense = paths.config.get("dense")
    if dense is not None and not isinstance(dense, bool):
        out.append(
            f"{config_place(paths.home, 'dense')}: dense must be true or false, not {dense!r}"
        )
    for check in (dead_min_days, block_limits):
        try:
            check(paths)
        except InputError as e:
            out.append(str(e))
    return out


def unknown_keys(root: Path, config: dict[str, Any]) -> list[str]:
    """The keys of ``config`` (the home ``root``'s talos.toml) that talos does not know, each
    as ``talos.toml:LINE: unknown key 'modle' (did you mean 'model'?); ignored``."""
    out = []
    for key in config:
        if key in KNOWN_KEYS:
            continue
        near = difflib.get_close_matches(key, sorted(KNOWN_KEYS), n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        out.append(f"{config_place(root, key)}: unknown key {key!r}{hint}; ignored")
    hooks = config.get("hooks")
    if "hooks" in config and not isinstance(hooks, dict):
        out.append(f"{config_place(root, 'hooks')}: 'hooks' must be a table ([hooks]); ignored")
    elif isinstance(hooks, dict):
        for key, value in hooks.items():
            want = HOOK_KEYS.get(key)
            if want is None:
                near = difflib.get_close_matches(key, sorted(HOOK_KEYS), n=1, cutoff=0.6)
                hint = f" (did you mean 'hooks.{near[0]}'?)" if near else ""
                out.append(
                    f"{config_place(root, key, 'hooks')}: unknown key 'hooks.{key}'{hint}; ignored"
                )
            elif (isinstance(value, bool) and want is not bool) or not isinstance(value, want):
                out.append(
                    f"{config_place(root, key, 'hooks')}: hooks.{key} = {value!r} has the wrong "
                    "type; the hook uses its default"
                )
            elif isinstance(value, float) and value - value != 0.0:  # nan, inf, -inf
                out.append(
                    f"{config_place(root, key, 'hooks')}: hooks.{key} = {value!r} is not a finite "
                    "number; the hook uses its default"
                )
            elif (
                key in HOOK_RANGES
                and isinstance(value, int | float)
                and not (HOOK_RANGES[key][0] <= value <= HOOK_RANGES[key][1])
            ):
                low, high = HOOK_RANGES[key]
                used = min(max(value, low), high)
                side = f"below {low:g}" if value < low else f"above {high:g}"
                out.append(
                    f"{config_place(root, key, 'hooks')}: hooks.{key} = {value!r} is {side}; "
                    f"the hook uses {used:g}"
                )
            elif key == "scopes" and isinstance(value, dict):
                for folder, scope in value.items():
                    if not isinstance(scope, str):
                        where = config_place(root, folder, "hooks.scopes")
                        out.append(
                            f"{where}: hooks.scopes.{folder!r} = {scope!r} must be a scope name "
                            "(a string); ignored"
                        )
    return out


#: Folders of the state folder that hold talos's own files (design §2, §12.1): no path setting
#: may point into them but ``sessions_dir`` at ``sessions/``.
STATE_FOLDERS = ("devices", "sessions", "trash", "locks", "run")
#: Files of the home's own that are no path setting's (the trace may not be one).
HOME_FILES = ("talos.toml", ".gitignore", ".gitattributes")
#: Names of the per-device logs and the legacy audit log: the trace may not take one.
LOG_NAMES = ("audit.jsonl", "usage.jsonl")


def _fold(path: Path) -> Path:
    """``path`` as a file system that ignores case sees it (macOS's, Windows's by default;
    talos.toml travels to them): ``.talos/Audit.jsonl`` is the audit log there, ``.GIT`` git's
    folder, ``Skills`` the skills folder."""
    return Path(str(path).casefold())


def _under(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or inside it (both canonical), case ignored
    (:func:`_fold`)."""
    path, folder = _fold(path), _fold(folder)
    return path == folder or folder in path.parents


def _in_git(path: Path, home: Path) -> bool:
    """Whether ``path`` is in a ``.git`` folder (git's own files, any case): below the home
    when it is in the home, anywhere on its way otherwise."""
    parts = _fold(path).relative_to(_fold(home)).parts if _under(path, home) else path.parts
    return ".git" in (p.casefold() for p in parts)


def place_problems(paths: Paths) -> list[tuple[str, str | None, str]]:
    """Path settings that name another kind of file than their own, or a place that is not
    theirs (design §2, "each path setting names its own kind of file in its own place"):

    * ``memory_file`` — a markdown file (``.md``), not in a ``.git`` folder, the state folder
      or the skills folder (``.git/config``, ``talos.toml``, ``.gitattributes``, an audit log
      were all taken, and each remember appended a fact to them);
    * ``skills_dir``, ``state_dir`` — not in a ``.git`` folder, not the home or a folder around
      it, not inside each other;
    * ``trace_file`` — a ``.jsonl`` file inside the state folder, not in its ``devices/``,
      ``sessions/``, ``trash/``, ``locks/`` or ``run/`` and not named like a log
      (``trace_file = "memory.md"`` appended a JSON line to memory.md on each recall, and sync
      carried it everywhere);
    * each ``sessions_dir`` — not in a ``.git`` folder; in the state folder only under its
      ``sessions/`` (its logs would be read as transcripts), and a ``DIR/**`` may not take in
      the state folder.

    Only what talos.toml says is held to this (:func:`talos.home.paths_of`): an API argument,
    such as the reference module's paths, is the caller's own choice.

    Returns:
        ``(setting, other, why)`` for each problem: ``other`` is the setting the problem is
        about too (``None``: none), so a caller can name the one the person wrote; ``why``
        a sentence without the setting's place.
    """
    home, state, skills, memory = paths.home, paths.state_dir, paths.skills_dir, paths.memory_file
    out: list[tuple[str, str | None, str]] = []
    git = "is inside a .git folder (git's own files), not a place for talos's"
    for name, p in (("memory_file", memory), ("skills_dir", skills), ("state_dir", state)):
        if _in_git(p, home):
            out.append((name, None, git))
    if memory.suffix.lower() not in (".md", ".markdown"):
        out.append(
            (
                "memory_file",
                None,
                "is not a markdown file (.md): memory.md is a markdown file of facts, and "
                "talos appends to it",
            )
        )
    for name, folder in (("state_dir", state), ("skills_dir", skills)):
        if _under(home, folder):
            out.append(
                (
                    name,
                    None,
                    f"is the home {home} or a folder around it; it must be a folder of its own "
                    f"(memory.md and the other files of the home are not {name[:-4]} files)",
                )
            )
    for name, folder, what in (
        ("state_dir", state, "the state folder {} (talos's own files)"),
        ("skills_dir", skills, "the skills folder {} (each file there is read as a skill)"),
    ):
        if _under(memory, folder):
            where = what.format(folder)
            out.append(("memory_file", name, f"puts memory.md ({memory}) inside {where}"))
    if _under(state, skills) or _under(skills, state):
        out.append(
            (
                "state_dir",
                "skills_dir",
                f"overlaps another folder of talos's (state_dir {state}, skills_dir {skills}); "
                "each must be a folder of its own",
            )
        )
    trace = paths.trace_file
    if _in_git(trace, home):
        out.append(("trace_file", None, git))
    elif _fold(trace) == _fold(memory) or (
        _fold(trace.parent) == _fold(home) and trace.name.casefold() in HOME_FILES
    ):
        out.append(("trace_file", None, f"names {trace}, a file of the home, not a trace"))
    else:
        rel = _fold(trace).relative_to(_fold(state)).parts if _under(trace, state) else ()
        if not rel:
            why = f"must be a file inside the state folder {state} (the trace stays on its machine)"
        elif len(rel) > 1 and rel[0] in STATE_FOLDERS:
            why = f"is in {state / rel[0]}, which holds talos's own files, not the trace"
        elif trace.name.casefold() in LOG_NAMES:
            why = f"names {trace.name!r}, a log of talos's, not the trace"
        elif trace.suffix.lower() != ".jsonl":
            why = f"names {trace.name!r}: the trace is a JSON lines file (.jsonl)"
        else:
            why = ""
        if why:
            out.append(("trace_file", None, why))
    for entry in paths.sessions_dirs:
        recursive = entry.name == "**"
        folder = entry.parent if recursive else entry
        if _in_git(folder, home):
            out.append(("sessions_dir", None, git))
        elif _under(folder, state) and not _under(folder, state / "sessions"):
            out.append(
                (
                    "sessions_dir",
                    "state_dir",
                    f"names {entry}, inside the state folder {state}: its logs would be read as "
                    "transcripts (only its sessions/ folder holds them)",
                )
            )
        elif recursive and _under(state, folder):
            out.append(
                (
                    "sessions_dir",
                    "state_dir",
                    f"names {entry}, which takes in the state folder {state}: its logs would "
                    "be read as transcripts; name the transcripts' own folder",
                )
            )
    return out
