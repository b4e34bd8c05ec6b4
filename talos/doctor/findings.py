"""What a check of ``talos doctor`` answers (:class:`Finding`) and what every check shares.

A check adds findings (:data:`Add`); it shows places relative to the home (:class:`_Places`),
takes the warnings talos would print into its finding (:func:`_captured`), lists at most
:data:`MAX_DETAILS` of them (:func:`_details`), names to a scoped request only what it may see
(:func:`_visible`, :func:`_sees`), and says what is wrong with one of talos's own files
(:func:`_refusal`).
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from talos import fsutil
from talos.safety import mask_secrets
from talos.sources.facts import claimed_scopes

__all__ = ["ATTENTION", "MAX_DETAILS", "Add", "Diagnosis", "Finding"]

#: Statuses that make a home "need attention".
ATTENTION = frozenset({"warn", "error"})
#: Detail lines listed per finding (the count in the summary is always complete).
MAX_DETAILS = 20


@dataclass(frozen=True, slots=True)
class Finding:
    """One answer of the doctor.

    Attributes:
        check: which question (``home``, ``config``, ``memory``, ``skills``, ``sessions``,
            ``state``, ``tags``, ``index``, ``safety``, ``conflicts``, ``expired``, ``dead``,
            ``audit``, ``files`` (talos's own files its writers refuse), ``hooks``).
        status: ``ok``, ``info``, ``warn`` or ``error`` (see the module docstring).
        summary: one line.
        details: the places at fault, ``file:line: what`` (at most :data:`MAX_DETAILS`).
        hint: what to do about it ("" when nothing).
    """

    check: str
    status: str
    summary: str
    details: tuple[str, ...] = ()
    hint: str = ""

    @property
    def attention(self) -> bool:
        """Whether a person should act on it (``warn`` or ``error``)."""
        return self.status in ATTENTION

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "status": self.status,
            "summary": self.summary,
            "details": list(self.details),
            "hint": self.hint,
        }


@dataclass(slots=True)
class Diagnosis:
    """Everything :func:`diagnose` found about one home."""

    home: str
    scopes: tuple[str, ...]
    findings: list[Finding] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        """No finding needs attention."""
        return not any(f.attention for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "home": self.home,
            "scopes": list(self.scopes),
            "healthy": self.healthy,
            "findings": [f.to_json() for f in self.findings],
        }


@contextlib.contextmanager
def _captured() -> Iterator[list[str]]:
    """Collect the ``talos: warning:`` lines printed on stderr inside the block."""
    buf = io.StringIO()
    found: list[str] = []
    with contextlib.redirect_stderr(buf):
        yield found
    prefix = "talos: warning: "
    found.extend(line.removeprefix(prefix) for line in buf.getvalue().splitlines() if line.strip())


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


class _Places:
    """Paths shown relative to the home when inside it."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.prefix = str(home).rstrip(os.sep) + os.sep

    def path(self, p: str | Path) -> str:
        shown = str(p)
        if shown.startswith(self.prefix) and os.sep == "/":  # paths are canonical (talos.home)
            shown = shown[len(self.prefix) :]
        else:
            with contextlib.suppress(ValueError):
                shown = Path(p).relative_to(self.home).as_posix()
        return mask_secrets(shown)  # a file named after a token

    def folder(self, p: Path) -> str:
        shown = self.path(p)
        return shown if shown.endswith("**") else shown + "/"

    def text(self, s: str) -> str:
        return s.replace(self.prefix, "")


class _Listed(Sequence[str]):
    """``items`` shown through ``show``, each formatted only when asked for: a home with
    583,000 forgetting suggestions formatted every one of them for 20 lines (issue 12 item 8)."""

    def __init__(self, items: Sequence[Any], show: Callable[[Any], str]) -> None:
        self.items, self.show = items, show

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.show(x) for x in self.items[i]]
        return self.show(self.items[i])


def _details(items: Sequence[str]) -> tuple[str, ...]:
    shown = list(items[:MAX_DETAILS])
    if len(items) > MAX_DETAILS:
        shown.append(f"… and {len(items) - MAX_DETAILS} more")
    return tuple(shown)


Add = Callable[[Finding], None]
#: Episodes are ``global``'s (design §7.3).
_GLOBAL = frozenset({"global"})


def _visible(raw: str, seen: frozenset[str] | None) -> bool:
    """Whether a memory.md line may be named to a request authorized for ``seen`` (``None``:
    the person's whole view). A line without ``scope=`` is ``global``'s."""
    if seen is None:
        return True
    return claimed_scopes(raw) <= seen if "scope=" in raw else "global" in seen


def _sees(scopes: frozenset[str], seen: frozenset[str] | None) -> bool:
    """Whether a record of ``scopes`` may be named to ``seen`` (``None``: everything)."""
    return seen is None or scopes <= seen


def _refusal(path: Path, want: str = "file", follow: bool = False) -> str:
    """What is wrong with one of talos's own files, as "is a FIFO (named pipe), not a regular
    file", or "" when it is what its writer takes (``want``: ``file``, ``socket``, ``folder``)
    or missing. ``follow``: judged through a link, as a reader that follows links does (SQLite
    files); otherwise a link is itself refused, as :func:`talos.fsutil.open_append`,
    :func:`talos.fsutil.lock` and the hook's writers refuse it (design §9.5)."""
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except FileNotFoundError:
        if follow and os.path.islink(path):
            return f"is a link to {os.path.realpath(path)}, which does not exist"
        return ""
    except OSError as e:  # a link loop, a name too long
        return f"cannot be looked at ({e.strerror or e})"
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        with contextlib.suppress(OSError):
            noun = {"folder": "a folder", "socket": "a socket"}.get(want, "a regular file")
            return f"is a symbolic link (to {os.readlink(path)}), not {noun}"
    if want == "folder":
        return "" if stat.S_ISDIR(mode) else f"is {fsutil.file_kind(st) or 'a file'}, not a folder"
    if want == "socket":
        if stat.S_ISSOCK(mode):
            return ""
        kind = "a regular file" if stat.S_ISREG(mode) else fsutil.file_kind(st)
        return f"is {kind}, not a socket"
    kind = fsutil.file_kind(st)
    return f"is {kind}, not a regular file" if kind else ""
