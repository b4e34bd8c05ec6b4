"""Warnings for people: one line on stderr, never an exception (design §3.1, §6.1).

A warning about a record (an unreadable tag on line 7, a skill left out) names it, so it is
scoped like the record (design §7.3, issue 13 item 8): while a request runs — :class:`Memory`
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

from talos.text import cut, one_line

__all__ = ["MESSAGE_CHARS", "audible", "audience", "bounded", "warn"]

#: Most characters of a warning or an error message: it names a file and quotes what it is
#: about, and a quoted stored text can be 50 MB (``forget`` of a line edited away meanwhile
#: printed it whole). Longer ones are cut with a visible mark.
MESSAGE_CHARS = 1000
_CUT = f"…(cut at {MESSAGE_CHARS} characters)"


def bounded(message: str) -> str:
    """``message`` on one line (:func:`talos.text.one_line`: it cannot move the terminal's
    cursor or start a line of its own) and at most :data:`MESSAGE_CHARS` characters, with a
    visible cut."""
    return cut(
        one_line(message[: 4 * MESSAGE_CHARS + 1]),
        MESSAGE_CHARS,
        _CUT,
        was_cut=len(message) > 4 * MESSAGE_CHARS + 1,
    )


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
    :func:`bounded`, so it cannot move the terminal's cursor (design §6.1 item 7) nor quote a
    stored text whole.

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
        print(f"talos: warning: {bounded(message)}", file=sys.stderr)
    return True
