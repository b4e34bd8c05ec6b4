"""Which scopes a hook may recall from: the project the agent runs in, plus ``global``.

The rule (issue 16.1; scopes are design §7.3):

1. ``[hooks.scopes]`` in talos.toml maps folders to scopes; the folder that holds the event's
   ``cwd`` most closely wins (paths compared after ``~`` expansion and symlink resolution;
   relative folders are relative to the home)::

       [hooks.scopes]
       "~/work/acme" = "client:acme"
       "~/scratch" = "global"        # no project scope there

2. Otherwise the git root above ``cwd`` (the nearest folder holding ``.git``, a folder or a
   worktree's file), looked for from ``cwd``'s real path (a link named ``beta`` to acme's
   checkout is acme, as a ``[hooks.scopes]`` folder is compared after resolving links), names
   the scope ``project:<its folder name>`` (every run of characters a scope cannot hold,
   whitespace or brackets, becomes ``-``: :func:`talos.view.scopes.fold_scope`; "my app
   (old)" gave a scope ``remember`` refused, so nothing could be written for it), in its
   canonical spelling (``My App`` is ``project:my-app``, :func:`talos.view.scopes.check_scope`).
3. Otherwise — no ``cwd``, no git root — ``global`` alone.

``global`` always comes first, so a fact written from a hook's home stays where ``remember``
would put it. Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from talos.view.canon import canonical_name
from talos.view.scopes import check_scope, fold_scope

__all__ = ["git_root", "scopes_for"]

GLOBAL = "global"


def git_root(cwd: str) -> str | None:
    """The nearest folder at or above ``cwd`` that holds ``.git``; ``None`` when there is
    none (or ``cwd`` is not a folder)."""
    here = os.path.abspath(cwd)
    if not os.path.isdir(here):
        return None
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


def _within(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives
        return False


def scopes_for(cwd: str, config: Mapping[str, Any], home: str) -> tuple[str, ...]:
    """The scopes of a hook event whose ``cwd`` is given (see the module docstring).

    Args:
        cwd: the event's working folder ("" when it has none). config: the parsed talos.toml.
        home: the home folder (relative ``[hooks.scopes]`` folders resolve against it).

    Returns:
        ``("global",)`` or ``("global", SCOPE)``.

    Raises:
        InputError: the ``[hooks.scopes]`` value that applies is not a scope name (the hook
            logs it and gives no context; before, it recalled nothing, silently).
    """
    if not cwd:
        return (GLOBAL,)
    hooks = config.get("hooks")
    table = hooks.get("scopes") if isinstance(hooks, Mapping) else None
    here = _real(cwd)
    scope: str | None = None
    where = ""
    if isinstance(table, Mapping):
        best = -1
        for folder, value in table.items():
            if not isinstance(folder, str) or not isinstance(value, str):
                continue
            target = _real(os.path.join(home, os.path.expanduser(folder)))
            if _within(here, target) and len(target) > best:
                best, scope = len(target), value.strip()
                where = f"talos.toml [hooks.scopes] {folder!r} ="
        if scope is not None:
            if not scope:
                return (GLOBAL,)
            named = check_scope(scope, where, "one scope per folder")  # canonical: ＧＬＯＢＡＬ
            return (GLOBAL,) if named == GLOBAL else (GLOBAL, named)
    root = git_root(os.path.realpath(cwd))  # a link is the folder it points at
    if root is None:
        return (GLOBAL,)
    # in its canonical spelling, as every scope is read (talos.view.scopes): "My App" → my-app
    name = fold_scope(canonical_name(os.path.basename(root)))
    return (GLOBAL, f"project:{name}") if name else (GLOBAL,)
