"""Is this home healthy? The checks behind ``talos doctor`` (issue 6).

:func:`diagnose` answers, in this order: is the home there; does ``talos.toml`` parse and hold
valid values; are memory.md, skills/, the sessions and the state folder present and readable;
do provenance tags parse; is the index in step with the files; can the usage counts be read;
does the safety scan flag anything; are there conflicts; which records expired; are there
forgetting suggestions; does the audit log agree with memory.md; did an agent hook give no
context (the hook log, issue 16). Each answer is a :class:`Finding` whose status is

* ``ok`` — fine; ``info`` — worth knowing, nothing to do (a missing optional file, expired
  records kept for ``--at``, forgetting suggestions waiting for ``talos forget``);
* ``warn`` — needs attention: something is left out of recall, contested or inconsistent;
* ``error`` — talos cannot read the home as configured (no home, a broken ``talos.toml``).
  Without a home nothing else is checked; with a ``talos.toml`` it cannot use, every check
  runs with the default settings but those of the state (index, dense vectors, usage counts:
  nothing is built in a folder the file may move elsewhere), so a credential pasted into
  memory.md is reported before the TOML is fixed.

A home needs attention when any finding is ``warn`` or ``error`` (``talos doctor`` then exits
5). Doctor changes no file of the person's; like any recall, it brings the index (a cache) up
to date first. Warnings talos would print on stderr while loading are taken into the finding
they belong to, so the report is the one place to read them. Places are ``file:line`` with
paths relative to the home when inside it.

The checks live by what they look at: :mod:`talos.doctor.files` (memory.md, skills, sessions,
the state folder, talos's own files, the hooks), :mod:`talos.doctor.derived` (index, dense
vectors, usage counts, safety scan, the view, the audit log); :mod:`talos.doctor.findings` holds
what they report. ``talos.toml`` is read and checked by :mod:`talos.config`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from talos.config import CONFIG_FILE, config_line, config_problems, defaults_only, unknown_keys
from talos.doctor.derived import (
    _check_audit,
    _check_dense,
    _check_index,
    _check_safety,
    _check_usage,
    _check_view,
)
from talos.doctor.files import (
    _check_hooks,
    _check_memory,
    _check_own_files,
    _check_sessions,
    _check_skills,
    _check_state,
    _check_tags,
)
from talos.doctor.findings import (
    ATTENTION,
    MAX_DETAILS,
    Diagnosis,
    Finding,
    _captured,
    _count,
    _details,
    _Places,
)
from talos.doctor.sync import check_sync
from talos.errors import TalosError
from talos.home import resolve_home, resolve_paths
from talos.memory import Memory
from talos.view.trust import DEFAULT_SCOPES
from talos.warn import audience
from talos.writer import audit
from talos.writer.logs import logs

__all__ = [
    "ATTENTION",
    "Acknowledged",
    "Diagnosis",
    "Finding",
    "acknowledge",
    "config_line",
    "config_problems",
    "diagnose",
]


#: The last detail of the config finding when talos.toml cannot be used.
_DEFAULTS_USED = (
    "the checks below ran with the default settings (memory.md, skills/, .talos/), the "
    "index and usage counts unchecked; other commands refuse this home until it is fixed"
)


def diagnose(
    home: str | os.PathLike[str] | None = None,
    scopes: Sequence[str] = DEFAULT_SCOPES,
    at: dt.date | None = None,
    scoped: bool = False,
) -> Diagnosis:
    """Check a home (see the module docstring for the questions and statuses).

    Args:
        home: the home (``None``: ``$TALOS_HOME``, else the platform data dir, design §2).
        scopes: the authorized scopes whose conflicts, expired records and suggestions count.
        at: the business date for validity (default today).
        scoped: a request's view (``talos doctor --scope …`` or ``$TALOS_SCOPE``): every
            finding about a record — an unreadable line, a tag, a flagged line or skill, an
            audit entry — and every count is of ``scopes`` only, as warnings are (design §7.3;
            hostile pass of issue 13 item 8: ``--scope project:alpha`` named beta's lines).
            ``False`` (the default): the person's check of the whole home's files.

    Returns:
        The :class:`Diagnosis`; it never raises for a problem of the home itself.
    """
    root = resolve_home(home).absolute()
    diag = Diagnosis(str(root), tuple(scopes))
    add = diag.findings.append
    places = _Places(root)

    if not root.exists():
        add(Finding("home", "error", f"{root} does not exist", hint=f"talos init --home {root}"))
        return diag
    if not root.is_dir():
        add(Finding("home", "error", f"{root} is a file, not a folder"))
        return diag
    add(Finding("home", "ok", str(root)))

    unreadable: str | None = None
    problems: list[str] = []
    try:
        with _captured():  # unknown keys are warned about: the finding below lists them
            paths = resolve_paths(root)
        problems = config_problems(paths)
    except TalosError as e:
        unreadable = places.text(str(e))
    broken = unreadable is not None or bool(problems)
    if broken:  # reported; every other check runs with the defaults
        summary, details = unreadable or "", [_DEFAULTS_USED]
        if unreadable is None:
            summary = "talos.toml has values talos cannot use"
            details = [*_details([places.text(p) for p in problems]), _DEFAULTS_USED]
        add(Finding("config", "error", summary, tuple(details), hint="fix talos.toml"))
        try:
            with defaults_only():
                paths = resolve_paths(root)
        except TalosError as e:
            add(Finding("home", "error", places.text(str(e))))
            return diag
    elif unknown := unknown_keys(root, paths.config):
        add(
            Finding(
                "config",
                "warn",
                f"talos.toml: {_count(len(unknown), 'setting')} not used as written",
                _details([places.text(u) for u in unknown]),
                hint="fix the spelling, the type or the value, or remove the key",
            )
        )
    else:
        has_config = (root / CONFIG_FILE).is_file()
        add(Finding("config", "ok", "talos.toml read" if has_config else "no talos.toml: defaults"))

    # Every finding about a record is for a request that may see the record (design §7.3,
    # hostile pass of issue 13 item 8): warnings are heard by the authorized scopes only, and
    # lines, skills and counts are those of these scopes; talos scan is the whole-home view.
    # One Memory for every check: memory.md is parsed once, by its index, whose fact nodes the
    # tags are checked on and the view is built from (a memory.md of 1,000,000 lines was
    # parsed four times, 126 s; issue 12 item 8).
    seen = frozenset(diag.scopes) if scoped else None
    with (
        defaults_only() if broken else contextlib.nullcontext(),
        audience(seen) if seen is not None else contextlib.nullcontext(),
        Memory(paths.home, scopes=diag.scopes, index=not broken) as mem,
    ):
        facts, flagged = _check_memory(paths, places, add, seen, mem)
        _check_skills(paths, places, add, seen)
        _check_sessions(paths, places, add, seen)
        if not _check_state(paths, places, add):
            return diag
        _check_tags(facts, places, add)
        if not broken:  # talos.toml may keep the state elsewhere: no index built in .talos/
            _check_index(mem, places, add, seen)
            _check_dense(mem, places, add)
            _check_usage(paths, places, add)
        _check_safety(paths, places, add, seen, flagged)
        _check_view(mem, at, places, add)
        _check_audit(paths, places, add, seen)
        _check_own_files(paths, places, add)
        _check_hooks(paths, places, add)
        check_sync(paths, places, add)
    return diag


@dataclass(frozen=True, slots=True)
class Acknowledged:
    """What :func:`acknowledge` recorded: the ``edits`` (:class:`talos.writer.audit.OutsideEdit`,
    [] when there was nothing to acknowledge) and the ``memory`` file and audit ``log`` they
    are of, as doctor names them (relative to the home)."""

    edits: list[audit.OutsideEdit]
    memory: str
    log: str

    def to_json(self) -> list[dict[str, Any]]:
        """``[{"id", "kind", "line"}]``: ``line`` 1-based in memory.md, 0 when absent; for an
        ``unreadable`` line (``id`` empty) of the audit log ``log`` (relative to the home: any
        device's, design §9)."""
        return [
            {"id": o.id, "kind": o.kind, "line": o.line}
            | ({"log": o.log} if o.kind == "unreadable" else {})
            for o in self.edits
        ]

    def sentence(self) -> str:
        """What ``talos doctor --ack`` says on stderr."""
        if not self.edits:
            return f"nothing to acknowledge: the audit log agrees with {self.memory}"
        edits = [o for o in self.edits if o.kind != "unreadable"]
        lost: dict[str, list[int]] = {}  # each log's lines (any device's log)
        for o in self.edits:
            if o.kind == "unreadable":
                lost.setdefault(o.log, []).append(o.line)
        parts = []
        if edits:
            which = ", ".join(f"{o.id} {o.kind}" for o in edits[:MAX_DETAILS])
            more = f", and {len(edits) - MAX_DETAILS} more" if len(edits) > MAX_DETAILS else ""
            parts.append(
                f"{_count(len(edits), 'outside edit')} of {self.memory} in {self.log} "
                f"({which}{more})"
            )
        for log, lines in lost.items():
            which = ", ".join(str(n) for n in lines[:MAX_DETAILS])
            more = f", and {len(lines) - MAX_DETAILS} more" if len(lines) > MAX_DETAILS else ""
            parts.append(f"{_count(len(lines), 'unreadable line')} of {log} (line {which}{more})")
        return (
            f"acknowledged {' and '.join(parts)}; talos doctor warns only about edits made "
            "after this"
        )


def acknowledge(
    home: str | os.PathLike[str] | None = None,
    scopes: Sequence[str] = DEFAULT_SCOPES,
    scoped: bool = False,
) -> Acknowledged:
    """Acknowledge the audit finding's outside edits (``talos doctor --ack``): the records
    talos wrote that were removed, edited or brought back by hand are recorded as reviewed in
    the audit log (:func:`talos.writer.edits.acknowledge`), so the next diagnosis warns only about
    edits made after it. ``scopes``/``scoped`` as for :func:`diagnose`: a request's view
    acknowledges its own scopes' records only.

    Raises:
        TalosError: the home or its talos.toml cannot be read (doctor's own finding).
        filelock.Timeout, OSError: the audit log cannot be written.
    """
    from talos.writer import edits as writer  # imported on use: a plain doctor writes nothing

    root = resolve_home(home).absolute()
    with _captured():
        paths = resolve_paths(root)
    places = _Places(root)
    names = places.path(paths.memory_file), places.path(paths.audit_file)
    if not any(os.path.lexists(log.path) for log in logs(paths)):
        return Acknowledged([], *names)
    done = writer.acknowledge(paths, frozenset(scopes) if scoped else None)
    # an unreadable line's log as doctor names it (any device's, design §9)
    shown = [dataclasses.replace(o, log=places.path(o.log)) if o.log else o for o in done]
    return Acknowledged(shown, *names)
