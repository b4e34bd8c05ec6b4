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
    "timeout": (0.2, 30.0),
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
