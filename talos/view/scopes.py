"""Scope names: one rule for every way a scope comes in (design §7.3, §9.1).

A scope is what a provenance tag's ``scope=`` field holds: letters, digits and ``. _ - : /``
(:data:`SCOPE`, the rule ``remember`` has always applied to ``--scope``). A request for any
other name can never see a record, since no record can carry it: ``recall --scope "a b"`` and
``--scope ""`` were accepted and recalled nothing while ``remember`` refused the same scope
(tests/test_bad_state_findings.py). So every command that takes ``--scope``, ``$TALOS_SCOPE``
(the MCP server's scopes come from these too) and the hooks' ``[hooks.scopes]`` table are
checked here. Standard library only on the way to a valid name: the hooks import it.

A scope name is read in its canonical spelling (:func:`talos.view.canon.canonical_name`, as keys
are): ``--scope ｇlobal`` (full-width g), ``glоbal`` (Cyrillic о) and ``GLOBAL`` were scopes of
their own, so recall saw none of the global facts and ``remember`` wrote where no default
request looks (attack pass 23). The fold is the same on every route: these checks, the tag
reader (:func:`talos.sources.facts.parse_fact_line`), the writer and the audit log's scopes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from talos.errors import InputError
from talos.view.canon import canonical_name

__all__ = ["DEFAULT", "SCOPE", "check_scope", "fold_scope", "request_scopes"]

#: A scope name (the same characters as a ``--key``).
SCOPE = re.compile(r"[\w.\-:/]+")
#: The scopes of a request that names none.
DEFAULT = ("global",)
_HOW = "is not a scope name: use letters, digits and . _ - : / only"
_UNSCOPED = re.compile(r"[^\w.\-:/]+")


def check_scope(value: str, where: str, how: str = "") -> str:
    """``value`` in its canonical spelling (:func:`talos.view.canon.canonical_name`: ``ｇlobal``,
    ``glоbal`` and ``GLOBAL`` are ``global``) when that is a scope name, else
    :class:`~talos.errors.InputError` saying where it came from (``where``: ``--scope``,
    ``$TALOS_SCOPE``, ...) and ``how`` to give several. A value holding whitespace is refused
    (it is not folded away)."""
    if isinstance(value, str) and not any(c.isspace() for c in value):
        folded = canonical_name(value)
        if SCOPE.fullmatch(folded):
            return folded
    if isinstance(value, str):
        from talos.writer.edits import (
            check_value,  # imported on failure only: the hooks import this
        )

        check_value(where, value)  # a control or invisible character: named (issue 12.5)
    raise InputError(f"{where} {value!r} {_HOW}{f' ({how})' if how else ''}")


def request_scopes(values: Sequence[str] | None, env: str | None = None) -> tuple[str, ...]:
    """The authorized scopes of a request: the ``--scope`` ``values`` (each checked whole, an
    empty one too), else ``$TALOS_SCOPE`` (``env``; default: the environment's) split on
    commas, blanks around and between them ignored, else :data:`DEFAULT`.

    Raises:
        InputError: a value is not a scope name (it would see nothing and could hold nothing).
    """
    if values:
        return tuple(check_scope(v, "--scope", "repeat --scope for several") for v in values)
    env = os.environ.get("TALOS_SCOPE", "") if env is None else env
    parts = [p.strip() for p in env.split(",") if p.strip()]
    how = "separate several with commas"
    return tuple(check_scope(p, "$TALOS_SCOPE", how) for p in parts) or DEFAULT


def fold_scope(name: str) -> str:
    """``name`` made a scope name: every run of other characters becomes ``-`` (a project
    folder "my app (old)" is scope ``my-app-old-``; whitespace folded so before)."""
    return _UNSCOPED.sub("-", name)
