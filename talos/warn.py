"""Warnings for people: one line on stderr, never an exception (SPEC §3.1, §6.1).

A warning about a record (an unreadable tag on line 7, a skill left out) names it, so it is
scoped like the record (SPEC §7.3, issue 13 item 8): while a request runs — :class:`Memory`
sets its authorized scopes as the *audience* with :func:`audience` — a warning about a record
is printed only when every scope the record claims is authorized. ``--scope project:alpha``
never hears of beta's line numbers. A line whose scope cannot be read claims ``global`` (what
an untagged line is). Outside a request (``talos doctor``, ``talos scan``: the person's view
of the whole home) every warning is printed.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Collection, Iterable, Iterator
from contextvars import ContextVar

from talos.text import one_line

__all__ = ["audible", "audience", "warn"]

_AUDIENCE: ContextVar[frozenset[str] | None] = ContextVar("talos_audience", default=None)


@contextlib.contextmanager
def audience(scopes: Iterable[str]) -> Iterator[None]:
    """Within the block, warnings about records are for a request authorized for ``scopes``."""
    token = _AUDIENCE.set(frozenset(scopes))
    try:
        yield
    finally:
        _AUDIENCE.reset(token)


def audible(scopes: Collection[str] | None) -> bool:
    """Whether a warning about a record of ``scopes`` may be printed now: ``None`` (not about a
    record) always; else when no request runs, or the request is authorized for all of them."""
    heard = _AUDIENCE.get()
    return scopes is None or heard is None or set(scopes) <= heard


def warn(message: str, scopes: Collection[str] | None = None) -> bool:
    """Print ``talos: warning: MESSAGE`` on stderr, on one line. Never raises (a closed stderr is
    ignored). A warning often quotes stored text (a file name, a line): it is shown through
    :func:`talos.text.one_line`, so it cannot move the terminal's cursor (SPEC §6.1 item 7).

    Args:
        message: one line that names the file (and line) and what to do.
        scopes: the scopes of the record the warning is about (see :func:`audible`);
            ``None`` for a warning about talos's own files.

    Returns:
        Whether it was printed (a caller that warns once per content marks it only then).
    """
    if not audible(scopes):
        return False
    with contextlib.suppress(OSError, ValueError):
        print(f"talos: warning: {one_line(message)}", file=sys.stderr)
    return True
