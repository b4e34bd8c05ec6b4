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

import difflib
import os
import re
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from talos import fsutil
from talos.errors import InputError
from talos.warn import warn

__all__ = [
    "BUDGET",
    "CAP",
    "CONFIG_FILE",
    "DEAD_MIN_DAYS",
    "KNOWN_KEYS",
    "MAX_SESSIONS_DIRS",
    "Paths",
    "block_limits",
    "canonical",
    "config_line",
    "config_problems",
    "dead_min_days",
    "load_config",
    "resolve_home",
    "resolve_paths",
    "unknown_keys",
]

CONFIG_FILE = "talos.toml"

#: Most folders ``sessions_dir`` may list: a session's sort key numbers its folder with three
#: digits (:class:`talos.sources.sessions.Folder`).
MAX_SESSIONS_DIRS = 999

_DEFAULTS = {
    "memory_file": "memory.md",
    "skills_dir": "skills",
    "sessions_dir": ".talos/sessions",
    "state_dir": ".talos",
    "trace_file": None,  # default: <state_dir>/recall_trace.jsonl
}

#: Every key ``talos.toml`` may hold; any other is reported (a typo such as ``modle`` was
#: silently ignored, issue 12.7). A module that reads a new key adds it here.
KNOWN_KEYS = frozenset(
    {*_DEFAULTS, "lang", "model", "hooks", "dense", "dead_min_days", "budget", "k"}
)
#: The block's default budget in characters (``budget`` in talos.toml; SPEC §6.1 rule 6): the
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
    "timeout": (0.2, 30.0),
    "idle": (1.0, 86_400.0),
    "k": (0, 1_000_000),
    "budget": (200, 1_000_000),
    "session_facts": (0, 1_000_000),
    "session_hits": (0, 1_000_000),
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
        InputError: ``home`` (or ``$TALOS_HOME``) holds a NUL byte, a ``~user`` that does not
            exist, or a name too long for the file system.
    """
    if home is not None and str(home) != "":
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
    """Every file talos reads or writes in one home (SPEC §2)."""

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

    Only a regular file of at most :data:`talos.fsutil.MAX_CONFIG_BYTES` is read: a FIFO
    there hung every command (issue 12.3).

    Raises:
        InputError: the file exists but is not a regular file, cannot be read, is not valid
            UTF-8 or TOML, nests values too deeply (``RecursionError``, issue 12.4) or holds a
            number too long for Python to read (``ValueError``); the message names the file
            (and the line when TOML gives one). A leading byte order mark is skipped.
    """
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


def _where(root: Path, key: str, table: str = "") -> str:
    """``talos.toml:LINE`` of ``key`` (of ``table``) in the home ``root`` (just the file when
    not found)."""
    file = root / CONFIG_FILE
    no = config_line(file, key, table)
    return f"{file}:{no}" if no else str(file)


def dead_min_days(paths: Paths) -> int:
    """``dead_min_days`` of the home's talos.toml, else :data:`DEAD_MIN_DAYS` (SPEC §6.4:
    the span a memory must have been counted before ``dead`` may propose it).

    Raises:
        InputError: the value is not a whole number of days, 0 or more
            (``talos.toml:LINE: dead_min_days must be ...``).
    """
    value = paths.config.get("dead_min_days", DEAD_MIN_DAYS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(
            f"{_where(paths.home, 'dead_min_days')}: dead_min_days must be a whole number of "
            f"days, 0 or more, not {value!r}"
        )
    return value


def block_limits(paths: Paths) -> tuple[int, int]:
    """``(budget, k)`` of the home's talos.toml: the block's budget in characters (default
    :data:`BUDGET`) and its cap on rows (default :data:`CAP`), SPEC §6.1 rule 6.

    Raises:
        InputError: a value that is not a whole number in range (budget 200–1,000,000, k
            1–1,000), as ``talos.toml:LINE: budget must be ...``.
    """
    out = []
    for key, default, lo, hi in (("budget", BUDGET, 200, 1_000_000), ("k", CAP, 1, 1000)):
        value = paths.config.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise InputError(
                f"{_where(paths.home, key)}: {key} must be a whole number from {lo:,} to "
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
                f"{_where(paths.home, 'lang')}: lang must be one of {', '.join(sorted(LABELS))}"
                f", not {lang!r}"
            )
    model = paths.config.get("model")
    if model is not None:
        from talos.activation import MODEL_NAMES  # imported on use (see above)

        if not isinstance(model, str) or model not in MODEL_NAMES:
            out.append(
                f"{_where(paths.home, 'model')}: model must be one of {', '.join(MODEL_NAMES)}, "
                f"not {model!r}"
            )
    dense = paths.config.get("dense")
    if dense is not None and not isinstance(dense, bool):
        out.append(f"{_where(paths.home, 'dense')}: dense must be true or false, not {dense!r}")
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
        out.append(f"{_where(root, key)}: unknown key {key!r}{hint}; ignored")
    hooks = config.get("hooks")
    if "hooks" in config and not isinstance(hooks, dict):
        out.append(f"{_where(root, 'hooks')}: 'hooks' must be a table ([hooks]); ignored")
    elif isinstance(hooks, dict):
        for key, value in hooks.items():
            want = HOOK_KEYS.get(key)
            if want is None:
                near = difflib.get_close_matches(key, sorted(HOOK_KEYS), n=1, cutoff=0.6)
                hint = f" (did you mean 'hooks.{near[0]}'?)" if near else ""
                out.append(
                    f"{_where(root, key, 'hooks')}: unknown key 'hooks.{key}'{hint}; ignored"
                )
            elif (isinstance(value, bool) and want is not bool) or not isinstance(value, want):
                out.append(
                    f"{_where(root, key, 'hooks')}: hooks.{key} = {value!r} has the wrong type; "
                    "the hook uses its default"
                )
            elif isinstance(value, float) and value - value != 0.0:  # nan, inf, -inf
                out.append(
                    f"{_where(root, key, 'hooks')}: hooks.{key} = {value!r} is not a finite "
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
                    f"{_where(root, key, 'hooks')}: hooks.{key} = {value!r} is {side}; "
                    f"the hook uses {used:g}"
                )
            elif key == "scopes" and isinstance(value, dict):
                for folder, scope in value.items():
                    if not isinstance(scope, str):
                        where = _where(root, folder, "hooks.scopes")
                        out.append(
                            f"{where}: hooks.scopes.{folder!r} = {scope!r} must be a scope name "
                            "(a string); ignored"
                        )
    return out


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
            warns: the trace must never fail a recall (SPEC §6.1, issue 12.4).
    """
    root = resolve_home(home)
    config = load_config(root)
    for message in unknown_keys(root, config):
        if message not in _WARNED_KEYS:
            _WARNED_KEYS.add(message)
            warn(message)

    def pick(name: str, value: Any = None, configured: bool | None = None) -> Path | None:
        if configured is None:
            value = overrides.get(name)
            configured = value is None
            if configured:
                value = config.get(name)
        if value is None:
            value = _DEFAULTS[name]
            if value is None:
                return None
            return canonical(root / value)  # a default: its files are the readers' to check
        if not isinstance(value, str | os.PathLike):  # memory_file = 1: bench/fuzz_readers.py
            bad = f"{name} must be a path string, not {value!r}"
            raise InputError(f"{_where(root, name)}: {bad}" if configured else bad)
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
            raise InputError(f"{_where(root, name)}: {problem}" if configured else problem)
        return canonical(p)

    state = pick("state_dir")
    assert state is not None
    trace = pick("trace_file") or state / "recall_trace.jsonl"
    memory, skills = pick("memory_file"), pick("skills_dir")
    assert memory is not None and skills is not None
    folders = _sessions_dirs(root, config, overrides.get("sessions_dir"), pick)
    return Paths(root, memory, skills, folders[0], state, trace, config, folders)


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
        where = f"{_where(root, 'sessions_dir')}: " if configured else ""
        raise InputError(
            f"{where}sessions_dir is an empty list; name at least one folder, or remove it"
        )
    if len(value) > MAX_SESSIONS_DIRS:
        where = f"{_where(root, 'sessions_dir')}: " if configured else ""
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
