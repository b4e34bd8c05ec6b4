"""The checks of what talos builds from a home's files and keeps beside them: the index, the
dense vectors, the usage counts, the safety scan, the view (conflicts, expired records,
forgetting suggestions) and the audit log. :func:`talos.doctor.diagnose` runs them in its order.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from pathlib import Path
from typing import Any

from talos.doctor.findings import (
    _GLOBAL,
    Add,
    Finding,
    _captured,
    _count,
    _details,
    _Listed,
    _Places,
    _refusal,
    _sees,
    _visible,
)
from talos.errors import InputError, TalosError
from talos.home import Paths
from talos.index import Index
from talos.memory import Memory
from talos.model import Node
from talos.ranking.activation import TERMS
from talos.safety import scan_skills
from talos.scan import ScanReport, fact_report, refused_files, scan_home
from talos.sources.facts import load_facts
from talos.sources.skills import skill_scopes
from talos.sync.device import device_dirs
from talos.usage import log as usage_log
from talos.usage.counts import SqliteUsage
from talos.usage.store import LOG
from talos.view.trust import record_id, stated_value
from talos.writer import audit
from talos.writer.logs import logs, written_since


def _check_index(mem: Memory, places: _Places, add: Add, seen: frozenset[str] | None) -> None:
    idx = mem.index if mem.index is not None else Index(mem.paths)
    name = places.path(idx.file)
    try:
        with _captured() as warned:
            idx.refresh()
            problems = idx.check()
            facts, episodes = idx.counts(mem.headings)  # counted by the index, no node built
            if seen is not None:
                facts = sum(
                    _visible(n.raw, seen)
                    for n in idx.facts()
                    if not (n.heading_level and mem.headings)
                )
            episodes = episodes if _sees(_GLOBAL, seen) else 0  # global's
    except (OSError, sqlite3.Error) as e:
        add(
            Finding(
                "index",
                "warn",
                f"{name} unavailable ({e}); recall reads every file",
                hint="make the state folder writable",
            )
        )
        return
    # Only what is about the index: unreadable lines are the memory check's.
    notes = [places.text(w) for w in warned if str(idx.file) in w]
    if problems:
        add(
            Finding(
                "index",
                "warn",
                f"{name} differs from the files",
                _details(notes + [places.text(p) for p in problems]),
                hint="talos index",
            )
        )
        return
    summary = f"{name} up to date: {_count(facts, 'fact')}, {_count(episodes, 'episode')}"
    add(Finding("index", "info" if notes else "ok", summary, _details(notes)))


def _check_dense(mem: Memory, places: _Places, add: Add) -> None:
    """The dense leg's state (issue 17), when talos.toml names it (a home that never asked
    for it gets no finding: the default install is model-free): off; asked for under a
    keyword model (``model = "bipartite"``: what recall warns of, with what to do); asked
    for but unable to run (the install command); or on, with its model and how many texts
    still lack a vector. The engine is not loaded."""
    from talos.ranking import hybrid

    if "dense" not in mem.paths.config:
        return
    if not mem.dense:
        add(Finding("dense", "ok", "off (dense = false in talos.toml): lexical recall"))
        return
    if mem.ranking.over != TERMS:  # every recall warns once: say it here too
        needs, todo = hybrid.model_problem(mem.model)
        add(Finding("dense", "warn", f"asked for but off: {needs}", hint=todo))
        return
    why = hybrid.available()
    if why:
        add(Finding("dense", "warn", f"asked for but off: {why}", hint=hybrid.INSTALL))
        return
    leg = hybrid.Leg(mem.paths)
    try:
        lacking = leg.cache.missing(hybrid.node_texts(mem.nodes())[0])
        stored = leg.cache.count()
    except TalosError as e:
        add(Finding("dense", "warn", places.text(str(e)), hint="talos index"))
        return
    finally:
        leg.close()
    name = places.path(leg.cache.path)
    summary = f"on: {leg.embedder.model_id}, {_count(stored, 'vector')} in {name}"
    if lacking:
        summary += f"; {_count(lacking, 'text')} without one"
        add(Finding("dense", "info", summary, hint="talos index"))
    else:
        add(Finding("dense", "ok", summary))


def _check_usage(paths: Paths, places: _Places, add: Add) -> None:
    """Can the usage counts be read? A damaged ``usage.db`` made doctor, dead and report end
    in a traceback (issue 12 item 4); recall goes on without counting. Every device's usage log
    too (design §9): one that is not a regular file, or its unreadable lines, are left out of
    the counts. A finding only when they cannot (the usual report stays as it was)."""
    with _captured():  # each said here once, not also as a warning
        bad = [p for d in device_dirs(paths.state_dir) for p in usage_log.problems(d / LOG)]
    if bad:
        add(
            Finding(
                "usage",
                "warn",
                "a device's usage log cannot be read whole: what cannot be read is not counted",
                tuple(places.text(p) for p in bad),
                hint="put back that device's usage.jsonl (only that device writes it)",
            )
        )
    name = places.path(paths.usage_db)
    if not paths.usage_db.exists() and not paths.usage_db.is_symlink():
        return
    why = _refusal(paths.usage_db, follow=True)  # a link loop or a dangling link: no counts
    if why:
        add(
            Finding(
                "usage",
                "warn",
                f"{name} {why}: recall goes on without counting; no forgetting suggestions",
                hint=f"remove {name} (talos then starts new counts) or put back a backup",
            )
        )
        return
    store = SqliteUsage(paths.usage_db, home=paths.home)
    try:
        with _captured():
            store.stats("global")
    except TalosError as e:
        add(
            Finding(
                "usage",
                "warn",
                f"{name} cannot be read: recall goes on without counting; no forgetting "
                "suggestions",
                (places.text(str(e.__cause__ or e)),),
                hint=f"move {name} aside (talos then starts new counts) or put back a backup",
            )
        )
        return
    finally:
        store.close()


def _check_safety(
    paths: Paths,
    places: _Places,
    add: Add,
    seen: frozenset[str] | None,
    flagged: list[Node] | None,
) -> None:
    """``talos scan``'s findings. ``flagged``: the fact nodes the fact filter rejects, known
    from the index's verdicts (:func:`_indexed_facts`); without them memory.md is scanned."""
    with _captured():
        if flagged is None:
            report = scan_home(paths.memory_file, paths.skills_dir, paths.sessions_dirs)
        else:
            report = ScanReport(
                scan_skills(paths.skills_dir),
                [r for n in flagged if (r := fact_report(n)) is not None],
                refused_files(paths.memory_file, paths.sessions_dirs),
            )
    if seen is not None:
        report = _scoped(report, paths, seen, flagged)
    items = [f"{places.path(s.path)}: {'; '.join(s.reasons)}" for s in report.skills]
    items += [f"{places.path(f.path)}:{f.line}: {'; '.join(f.reasons)}" for f in report.facts]
    items += [f"{places.path(r.path)}: {'; '.join(r.reasons)}" for r in report.refused]
    if items:
        what = []
        if report.skills:
            what.append(_count(len(report.skills), "skills-tree file"))
        if report.facts:
            what.append(_count(len(report.facts), "memory line"))
        if report.refused:
            what.append(_count(len(report.refused), "unreadable file"))
        add(
            Finding(
                "safety",
                "warn",
                f"{' and '.join(what)} flagged, left out of every route",
                _details(items),
                hint="talos scan",
            )
        )
    else:
        add(Finding("safety", "ok", "nothing flagged"))


def _flagged_nodes(paths: Paths) -> list[Any]:
    """Every fact node of memory.md (what the scan's fact reports are of)."""
    with _captured():
        return load_facts(paths.memory_file, keep_fact=None)


def _scoped(
    report: Any, paths: Paths, seen: frozenset[str], flagged: list[Node] | None = None
) -> Any:
    """``report`` with only what a request for ``seen`` may be told: flagged facts of its
    scopes, skills-tree files whose frontmatter claims its scopes (others are ``global``'s),
    refused sessions if it sees ``global`` (episodes are global's); a refused memory file is
    the home's own and always shown."""
    from talos.scan import ScanReport

    raw = {n.line: n.raw for n in (_flagged_nodes(paths) if flagged is None else flagged)}
    return ScanReport(
        [r for r in report.skills if skill_scopes(Path(r.path)) <= seen],
        [f for f in report.facts if _visible(raw.get(f.line, ""), seen)],
        [r for r in report.refused if r.kind == "memory" or "global" in seen],
    )


def _check_view(mem: Memory, at: dt.date | None, places: _Places, add: Add) -> None:
    """Conflicts, expired records and forgetting suggestions of the authorized view."""
    # Warnings here are reported by other checks: unreadable lines, tags, flagged skills.
    with _captured():
        view, _graph = mem.view(at)
        conflicts = mem.conflicts(at)
        try:
            dead: list[Any] | None = mem.dead(at=at)
        except TalosError:  # the usage counts cannot be read: the usage check says so
            dead = None

    items = [
        f"{scope} {key}: "
        + " vs ".join(f"{record_id(n)} {stated_value(n.text)!r} ({n.src})" for n in recs)
        for scope, key, recs in conflicts
    ]
    if items:
        add(
            Finding(
                "conflicts",
                "warn",
                f"{_count(len(items), 'contested key')}: no value is recalled for them",
                _details(items),
                hint="talos resolve KEY --keep ID",
            )
        )
    else:
        add(Finding("conflicts", "ok", "no conflicts"))

    expired = [e.node for e in view.excluded if e.reason == "expired"]
    listed = _Listed(
        expired,
        lambda n: (
            f"{places.path(n.path)}{f':{n.line}' if n.line else ''}: {n.text}"
            + (f" (until {n.fields['until']})" if n.fields.get("until") else "")
        ),
    )
    if listed:
        add(
            Finding(
                "expired",
                "info",
                f"{_count(len(listed), 'record')} expired: kept for --at, never recalled today",
                _details(listed),
            )
        )
    else:
        add(Finding("expired", "ok", "no expired records"))

    if dead is None:
        add(Finding("dead", "info", "no forgetting suggestions: the usage counts cannot be read"))
        return
    listed = _Listed(
        dead,
        lambda s: (
            f"{places.path(s.path)}{f':{s.line}' if s.line else ''}: {s.text} — {s.reason} "
            f"({'frontmatter says source: ' if s.kind == 'skill' else 'tag says '}{s.src})"
        ),
    )
    if listed:
        add(
            Finding(
                "dead",
                "info",
                f"{_count(len(listed), 'forgetting suggestion')} to review",
                _details(listed),
                hint="talos forget",
            )
        )
    else:
        add(Finding("dead", "ok", "no forgetting suggestions"))


def _check_audit(paths: Paths, places: _Places, add: Add, seen: frozenset[str] | None) -> None:
    """Does the audit log agree with memory.md? An interrupted write is pending; a record
    talos wrote that is gone, or a line it removed that is back, was an edit made outside
    talos (issue 12.1); a record edited in place is worth knowing only. Every device's log is
    read, merged (design §9): another device's write is not an outside edit here."""
    try:
        found = [log for log in logs(paths) if os.path.lexists(log.path)]
    except InputError as e:  # TALOS_DEVICE cannot name a device
        add(Finding("audit", "warn", str(e)))
        return
    lost = written_since(paths)  # this device's log is append-only on every route (§12.1)
    if lost:
        add(
            Finding(
                "audit",
                "warn",
                places.text(lost),
                hint="a sync folder or a copy put back another version of it; take this "
                "device's log from a backup (or another device's copy of the home) if you "
                "have one: its history, restores and acknowledgements are in it",
            )
        )
    if not found:  # a link loop is no "no writes": it is read
        under = places.folder(paths.state_dir)
        add(Finding("audit", "ok", f"no writes recorded yet (no audit log under {under})"))
        return
    if len(found) > 1:
        name = f"the {len(found)} audit logs under {places.folder(paths.state_dir)}"
        agrees = "agree"
    else:
        name, agrees = places.path(found[0].path), "agrees"
    try:
        with _captured() as warned:
            problems = audit.verify(paths, paths.memory_file, seen)
            edited = [
                o.message
                for o in audit.outside_edits(paths, paths.memory_file, seen)
                if o.kind == "changed"
            ]
    except OSError as e:
        where = places.path(e.filename) if e.filename else name
        add(Finding("audit", "warn", f"{where}: cannot read ({e.strerror})"))
        return
    # verify() and outside_edits() each read the logs: a line warned about twice, listed once
    items = list(
        dict.fromkeys([places.text(w) for w in warned] + [places.text(p) for p in problems])
    )
    mf = places.path(paths.memory_file)
    if items:
        add(
            Finding(
                "audit",
                "warn",
                f"{name} and {mf} disagree",
                _details(items + [places.text(m) for m in edited]),
                hint="an interrupted write is settled by the next talos write; for an edit "
                "made outside talos each line says what to do (if you meant it: talos doctor "
                "--ack, and doctor warns only about later edits)",
            )
        )
    elif edited:
        add(
            Finding(
                "audit",
                "info",
                f"{mf}: {_count(len(edited), 'record')} by talos edited outside talos since",
                _details([places.text(m) for m in edited]),
                hint="talos doctor --ack records that you reviewed them",
            )
        )
    else:
        add(Finding("audit", "ok", f"{name} {agrees} with {mf}"))
