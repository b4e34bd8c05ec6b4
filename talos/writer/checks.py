"""What a write through :class:`talos.Memory` must pass before the writer sees it.

The writer (:mod:`talos.writer.edits`) checks the shape of values under the lock; these are the
checks of the request against the person's memory: the scope it writes to must be one of the
authorized ones (design §7.3), a fact the fact filter would keep out of every route is not
stored (design §8.2: storing it would only hide it), no credential in a key, ref or by
(design §8.3), a conflict is settled by a record that is in view (design §7.4), and a revoke
that removed nothing says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from talos import safety
from talos.errors import InputError
from talos.view.canon import canonical_name
from talos.view.trust import record_id

if TYPE_CHECKING:
    from pathlib import Path

    from talos.view.trust import View

__all__ = ["check_keep", "check_remember", "check_revoked"]

#: The reason of the rule that finds a credential value (:data:`talos.safety.RULES`).
_CREDENTIAL = "contains a credential value"


def check_remember(
    text: str,
    scope: str | None,
    scopes: Sequence[str],
    keep_fact: Callable[[str], bool] | None,
    fields: dict[str, str | None],
) -> str:
    """The scope a fact is remembered in, once ``text`` and its ``fields`` (``key``, ``ref``,
    ``by``) pass: ``scope`` read in its canonical spelling, else the first of ``scopes``.

    Raises:
        InputError: ``scope`` is not one of the authorized ``scopes``; the text looks like
            an instruction (``keep_fact`` refuses it; found by a newcomer: it said
            "remembered"); the text or a field holds a credential value (said so, not "looks
            like an instruction", also when it looks like one too: a model told that rewrites
            its wording and sends the credential again).
    """
    scope = scope or (scopes[0] if scopes else "global")
    if not any(c.isspace() for c in scope):  # folded as the authorized ones are
        scope = canonical_name(scope)
    if scope not in scopes:
        raise InputError(f"scope {scope!r} is not authorized here ({', '.join(scopes)})")
    if keep_fact is not None and not keep_fact(" ".join(text.split())):
        found = safety.instruction_reasons(text)
        credentials = [r for r in found if r.startswith(_CREDENTIAL)]
        others = [r for r in found if not r.startswith(_CREDENTIAL)]
        if credentials:  # a credential is refused as one (design §8.3), whatever else
            also = (
                f"; it also looks like an instruction ({'; '.join(others)}), which talos "
                "never recalls (design §8.2)"
                if others
                else ""
            )
            raise InputError(
                "not remembered: the text holds a credential value "
                f"({'; '.join(credentials)}); a line holding one is never recalled "
                "(design §8.3): keep the value in a secret store and remember where it is "
                f'("the db password is in the team vault"){also}'
            )
        reasons = "; ".join(found) or "rejected by keep_fact"
        raise InputError(
            f"not remembered: the text looks like an instruction ({reasons}); talos never "
            "recalls such lines (design §8.2)"
        )
    for name, value in fields.items():
        if value and safety.secrets.holds_secret(value):
            raise InputError(
                f"not remembered: the {name} holds a credential value "
                f"({safety.mask_secrets(value)}); a line holding one is never recalled "
                "(design §8.3): give a reference without it"
            )
    return scope


def check_keep(view: View, key: str, keep: str) -> None:
    """That ``keep`` is an active record of canonical ``key`` in ``view`` (a fact in view, or
    one the view excluded as ``conflict`` or ``shadowed``), the one ``talos resolve`` keeps.

    Raises:
        InputError: it is not; the message lists the ids to choose from.
    """
    pool = [n for n in view.nodes if n.kind == "fact" and n.fields.get("key") == key]
    pool += [
        e.node
        for e in view.excluded
        if e.node.fields.get("key") == key and e.reason in ("conflict", "shadowed")
    ]
    if not any(record_id(n) == keep for n in pool):
        ids = ", ".join(sorted({record_id(n) for n in pool})) or "none"
        raise InputError(f"{keep!r} is not an active record of key {key!r} (ids: {ids})")


def check_revoked(
    removed: Sequence[object], memory_file: Path, ref: str, scopes: Sequence[str]
) -> None:
    """That ``talos revoke`` removed something ("revoked 0 record(s)" with exit 0 read as
    success).

    Raises:
        InputError: ``removed`` is empty: no record of ``scopes`` carries ``ref``.
    """
    if not removed:
        raise InputError(
            f"no record in {memory_file} carries ref={ref} "
            f"(scopes: {', '.join(scopes)}); nothing revoked"
        )
