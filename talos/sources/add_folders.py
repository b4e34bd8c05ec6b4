"""Add sessions folders to a home's ``sessions_dir`` in talos.toml, keeping every line the person
wrote (design §3.3: the agents' transcript folders are offered when talos is set up for them).

The file is edited as text, never re-serialised: comments, order and spelling stay.

- No talos.toml: one is written holding ``sessions_dir = [".talos/sessions", ENTRY…]`` (the
  default folder first, so talos's own sessions are still read).
- No ``sessions_dir`` key: that line is inserted before the first table (top-level keys must
  come before any ``[table]``), after a comment naming what added it.
- ``sessions_dir = "DIR"``: the value becomes ``["DIR", ENTRY…]``.
- ``sessions_dir = [...]`` (one line or several, with comments): the entries go after its last
  value.

The result is parsed back and must hold the same settings plus the new entries (nothing else
moved); otherwise nothing is written and the caller is told the line to add by hand
(:class:`~talos.errors.InputError`). An entry whose folder the home already reads
(:func:`talos.sources.agent_folders.is_read`) is not added again, so a second install changes
nothing.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from talos import fsutil
from talos.config import CONFIG_FILE, PATH_DEFAULTS
from talos.errors import InputError
from talos.home import Paths
from talos.sources.agent_folders import Found, is_read

__all__ = ["Added", "add_sessions_dirs"]

#: The sessions folder of a home whose talos.toml names none.
_DEFAULT = str(PATH_DEFAULTS["sessions_dir"])

#: A top-level ``sessions_dir =`` (bare or quoted key) at a line's start.
_KEY = re.compile(r"""^[ \t]*(?:sessions_dir|"sessions_dir"|'sessions_dir')[ \t]*=[ \t]*""", re.M)
#: A table header at a line's start: where top-level keys end.
_TABLE = re.compile(r"^[ \t]*\[", re.M)


@dataclass(frozen=True, slots=True)
class Added:
    """What :func:`add_sessions_dirs` did: ``file`` (talos.toml), ``added`` (the entries
    written, [] when every folder was read already), ``before`` / ``after`` (the file's text;
    ``before`` is ``None`` when there was no file)."""

    file: Path
    added: list[Found]
    before: str | None
    after: str | None


def _literal(entry: str) -> str:
    """A TOML basic string holding ``entry``."""
    return json.dumps(entry, ensure_ascii=False)


def _value_end(text: str, start: int) -> tuple[int, int] | None:
    """Where the value starting at ``start`` ends, and where its last array item ends (the
    value's end for a string); ``None`` for a value this scanner does not follow."""
    i, n = start, len(text)
    if i < n and text[i] in "\"'":
        end = _string_end(text, i)
        return None if end is None else (end, end)
    if i >= n or text[i] != "[":
        return None
    depth, last, i = 0, -1, i
    while i < n:
        c = text[i]
        if c in "\"'":
            end = _string_end(text, i)
            if end is None:
                return None
            i, last = end, end
            continue
        if c == "#":
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
            continue
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i + 1, last
        i += 1
    return None


def _string_end(text: str, i: int) -> int | None:
    """The index after the TOML string opening at ``i`` (basic or literal, one line, or
    multi-line ``\"\"\"`` / ``'''``); ``None`` when it does not close."""
    quote = text[i]
    if text.startswith(quote * 3, i):
        end = text.find(quote * 3, i + 3)
        return None if end < 0 else end + 3
    j = i + 1
    while j < len(text) and text[j] != "\n":
        if text[j] == "\\" and quote == '"':
            j += 2
            continue
        if text[j] == quote:
            return j + 1
        j += 1
    return None


def _edited(text: str, entries: Sequence[str], note: str) -> str | None:
    """``text`` with ``entries`` added to its ``sessions_dir`` (module docstring), or ``None``
    when this edit cannot be made safely."""
    new = ", ".join(_literal(e) for e in entries)
    keys = list(_KEY.finditer(text))
    table = _TABLE.search(text)
    top = [m for m in keys if table is None or m.start() < table.start()]
    if not top:
        line = f"# {note}\nsessions_dir = [{_literal(_DEFAULT)}, {new}]\n"
        at = table.start() if table is not None else len(text)
        head = text[:at]
        if head and not head.endswith("\n"):
            head += "\n"
        return head + line + ("\n" if table is not None else "") + text[at:]
    if len(top) > 1:
        return None
    start = top[0].end()
    got = _value_end(text, start)
    if got is None:
        return None
    end, last = got
    if text[start] in "\"'":
        return text[:start] + "[" + text[start:end] + ", " + new + "]" + text[end:]
    if last < 0:  # an empty array
        return text[: end - 1] + new + text[end - 1 :]
    return text[:last] + ", " + new + text[last:]


def add_sessions_dirs(
    paths: Paths, found: Sequence[Found], note: str, dry_run: bool = False
) -> Added:
    """Add the readable folders of ``found`` that ``paths`` does not read yet to
    ``sessions_dir`` in the home's talos.toml (module docstring).

    Args:
        paths: the home's paths (its talos.toml and the sessions folders it reads now).
        found: the folders offered (:func:`talos.sources.agent_folders.found_folders`).
        note: the comment put above a ``sessions_dir`` line talos writes (what added it).
        dry_run: compute the edit, write nothing.

    Returns:
        :class:`Added`.

    Raises:
        InputError: talos.toml cannot be read, or not edited safely (the message names the
            line to add by hand); nothing is written.
    """
    file = paths.home / CONFIG_FILE
    todo = [f for f in found if f.readable and not is_read(f.folder, paths.sessions_dirs)]
    todo = list({f.entry: f for f in reversed(todo)}.values())[::-1]  # an entry once
    try:
        data = fsutil.read_regular(file, fsutil.MAX_CONFIG_BYTES)
        before: str | None = data.decode("utf-8-sig")
    except FileNotFoundError:
        before = None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{file}: cannot read it to add the agents' transcripts ({e})") from None
    if not todo:
        return Added(file, [], before, before)
    entries = [f.entry for f in todo]
    by_hand = (
        f"{file}: could not add {', '.join(entries)} to sessions_dir safely; add "
        f"them yourself: sessions_dir = [{_literal(_DEFAULT)}, "
        f"{', '.join(_literal(e) for e in entries)}]"
    )
    old: dict[str, object] = {}
    if before is None:
        after: str | None = _edited("", entries, note)
    else:
        try:
            old = tomllib.loads(before)
        except (tomllib.TOMLDecodeError, ValueError, RecursionError):
            raise InputError(by_hand + " (talos.toml is not valid TOML)") from None
        after = _edited(before, entries, note)
    if after is None:
        raise InputError(by_hand)
    try:
        new = tomllib.loads(after)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        raise InputError(by_hand) from None
    was = old.get("sessions_dir", _DEFAULT)
    was_list = [was] if isinstance(was, str) else list(was) if isinstance(was, list) else None
    rest_old = {k: v for k, v in old.items() if k != "sessions_dir"}
    rest_new = {k: v for k, v in new.items() if k != "sessions_dir"}
    if was_list is None or new.get("sessions_dir") != was_list + entries or rest_old != rest_new:
        raise InputError(by_hand)
    if not dry_run:
        fsutil.atomic_write_text(file, after)
    return Added(file, todo, before, after)
