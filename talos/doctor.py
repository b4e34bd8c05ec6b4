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
* ``error`` — talos cannot read the home as configured (no home, a broken ``talos.toml``);
  the checks that depend on it are not run.

A home needs attention when any finding is ``warn`` or ``error`` (``talos doctor`` then exits
5). Doctor changes no file of the person's; like any recall, it brings the index (a cache) up
to date first. Warnings talos would print on stderr while loading are taken into the finding
they belong to, so the report is the one place to read them. Places are ``file:line`` with
paths relative to the home when inside it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import os
import sqlite3
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from talos import audit, fsutil
from talos.activation import TERMS
from talos.errors import TalosError
from talos.home import (
    CONFIG_FILE,
    Paths,
    config_line,
    config_problems,
    resolve_home,
    resolve_paths,
    unknown_keys,
)
from talos.index import Index
from talos.memory import Memory
from talos.model import Node
from talos.safety import mask_secrets, scan_skills
from talos.scan import ScanReport, fact_report, refused_files, scan_home
from talos.sources.facts import (
    claimed_scopes,
    line_warnings,
    load_facts,
    parse_fact_line,
    read_memory,
)
from talos.sources.sessions import RECURSIVE_MARK, session_files, session_folders
from talos.sources.skills import skill_files, skill_scopes
from talos.text import matching_keywords
from talos.trust import (
    DEFAULT_SCOPES,
    record_id,
    stated_value,
    tag_problem,
    window_problem,
)
from talos.usage import SqliteUsage
from talos.warn import audience

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


# -- talos.toml ------------------------------------------------------------------------------


# -- helpers ---------------------------------------------------------------------------------


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


# -- the checks ------------------------------------------------------------------------------


def diagnose(
    home: str | os.PathLike[str] | None = None,
    scopes: Sequence[str] = DEFAULT_SCOPES,
    at: dt.date | None = None,
    scoped: bool = False,
) -> Diagnosis:
    """Check a home (see the module docstring for the questions and statuses).

    Args:
        home: the home (``None``: ``$TALOS_HOME``, else the platform data dir, SPEC §2).
        scopes: the authorized scopes whose conflicts, expired records and suggestions count.
        at: the business date for validity (default today).
        scoped: a request's view (``talos doctor --scope …`` or ``$TALOS_SCOPE``): every
            finding about a record — an unreadable line, a tag, a flagged line or skill, an
            audit entry — and every count is of ``scopes`` only, as warnings are (SPEC §7.3;
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

    try:
        with _captured():  # unknown keys are warned about: the finding below lists them
            paths = resolve_paths(root)
    except TalosError as e:
        add(Finding("config", "error", places.text(str(e)), hint="fix talos.toml"))
        return diag
    problems = config_problems(paths)
    if problems:
        add(
            Finding(
                "config",
                "error",
                "talos.toml has values talos cannot use",
                _details([places.text(p) for p in problems]),
                hint="fix talos.toml",
            )
        )
        return diag
    unknown = unknown_keys(root, paths.config)
    if unknown:
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

    # Every finding about a record is for a request that may see the record (SPEC §7.3,
    # hostile pass of issue 13 item 8): warnings are heard by the authorized scopes only, and
    # lines, skills and counts are those of these scopes; talos scan is the whole-home view.
    # One Memory for every check: memory.md is parsed once, by its index, whose fact nodes the
    # tags are checked on and the view is built from (a memory.md of 1,000,000 lines was
    # parsed four times, 126 s; issue 12 item 8).
    seen = frozenset(diag.scopes) if scoped else None
    with (
        audience(seen) if seen is not None else contextlib.nullcontext(),
        Memory(paths.home, scopes=diag.scopes) as mem,
    ):
        facts, flagged = _check_memory(paths, places, add, seen, mem)
        _check_skills(paths, places, add, seen)
        _check_sessions(paths, places, add, seen)
        if not _check_state(paths, places, add):
            return diag
        _check_tags(facts, places, add)
        _check_index(mem, places, add, seen)
        _check_dense(mem, places, add)
        _check_usage(paths, places, add)
        _check_safety(paths, places, add, seen, flagged)
        _check_view(mem, at, places, add)
        _check_audit(paths, places, add, seen)
        _check_own_files(paths, places, add)
        _check_hooks(paths, places, add)
    return diag


@dataclass(frozen=True, slots=True)
class Acknowledged:
    """What :func:`acknowledge` recorded: the ``edits`` (:class:`talos.audit.OutsideEdit`,
    [] when there was nothing to acknowledge) and the ``memory`` file and audit ``log`` they
    are of, as doctor names them (relative to the home)."""

    edits: list[audit.OutsideEdit]
    memory: str
    log: str

    def to_json(self) -> list[dict[str, Any]]:
        """``[{"id", "kind", "line"}]``: ``line`` 1-based in memory.md, 0 when absent."""
        return [{"id": o.id, "kind": o.kind, "line": o.line} for o in self.edits]

    def sentence(self) -> str:
        """What ``talos doctor --ack`` says on stderr."""
        if not self.edits:
            return f"nothing to acknowledge: the audit log agrees with {self.memory}"
        which = ", ".join(f"{o.id} {o.kind}" for o in self.edits[:MAX_DETAILS])
        more = (
            f", and {len(self.edits) - MAX_DETAILS} more" if len(self.edits) > MAX_DETAILS else ""
        )
        return (
            f"acknowledged {_count(len(self.edits), 'outside edit')} of {self.memory} in "
            f"{self.log} ({which}{more}); talos doctor warns only about edits made after this"
        )


def acknowledge(
    home: str | os.PathLike[str] | None = None,
    scopes: Sequence[str] = DEFAULT_SCOPES,
    scoped: bool = False,
) -> Acknowledged:
    """Acknowledge the audit finding's outside edits (``talos doctor --ack``): the records
    talos wrote that were removed, edited or brought back by hand are recorded as reviewed in
    the audit log (:func:`talos.writer.acknowledge`), so the next diagnosis warns only about
    edits made after it. ``scopes``/``scoped`` as for :func:`diagnose`: a request's view
    acknowledges its own scopes' records only.

    Raises:
        TalosError: the home or its talos.toml cannot be read (doctor's own finding).
        filelock.Timeout, OSError: the audit log cannot be written.
    """
    from talos import writer  # imported on use: a plain doctor writes nothing

    root = resolve_home(home).absolute()
    with _captured():
        paths = resolve_paths(root)
    places = _Places(root)
    names = places.path(paths.memory_file), places.path(paths.audit_file)
    if not paths.audit_file.exists():
        return Acknowledged([], *names)
    done = writer.acknowledge(paths, frozenset(scopes) if scoped else None)
    return Acknowledged(done, *names)


Add = Callable[[Finding], None]
#: Episodes are ``global``'s (SPEC §7.3).
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


def _indexed_facts(mem: Memory, path: Path) -> tuple[list[Node], list[Node]] | None:
    """The fact nodes of memory.md from ``mem``'s index, brought up to date, and those the
    fact filter rejects (``None`` when the index is unavailable). The index keeps a rejected
    line with its credentials masked: those few are read again from the file, so every node
    is what :func:`talos.sources.facts.load_facts` gives (``keep_fact=None``)."""
    if mem.index is None:
        return None
    try:
        with _captured():  # the warnings are line_warnings'; the index's are _check_index's
            mem.index.refresh()
            rows = mem.index.fact_rows()
        data = read_memory(path) if any(not safe for _n, safe in rows) else b""
    except (OSError, sqlite3.Error):
        return None
    blobs = data.split(b"\n")
    facts: list[Node] = []
    flagged: list[Node] = []
    for n, safe in rows:
        if not safe:
            got = _line_node(n, blobs, str(path))
            if got is None:  # the file changed since the refresh: the index check says so
                return None
            flagged.append(got)
            n = got
        facts.append(n)
    return facts, flagged


def _line_node(n: Node, blobs: list[bytes], path: str) -> Node | None:
    """The fact node of line ``n.line`` of memory.md as :func:`load_facts` builds it."""
    try:
        line = blobs[n.line - 1].decode("utf-8")
    except (IndexError, UnicodeDecodeError):
        return None
    parsed = parse_fact_line(line)
    if parsed is None:
        return None
    raw = line.rstrip("\r")
    return Node(
        "fact",
        parsed.text,
        matching_keywords(parsed.text),
        n.order,
        path,
        n.line,
        raw,
        "",
        "",
        parsed.src,
        parsed.born,
        parsed.fields,
    )


def _check_memory(
    paths: Paths, places: _Places, add: Add, seen: frozenset[str] | None, mem: Memory
) -> tuple[list[Any], list[Any] | None]:
    """The memory file and the facts of the ``seen`` scopes (returned for the tags check),
    with the facts the fact filter rejects (for the safety check; ``None``: not known)."""
    mf = paths.memory_file
    name = places.path(mf)
    if not mf.exists() and not mf.is_symlink():
        add(
            Finding(
                "memory",
                "info",
                f"{name} does not exist yet: no facts",
                hint='talos remember "…" or write it by hand',
            )
        )
        return [], []
    try:
        fsutil.check_regular_or_missing(mf)
    except OSError as e:  # a FIFO hung every command (issue 12.3); a link loop failed doctor
        what = (
            e.strerror if isinstance(e, fsutil.NotRegularFile) else f"cannot be read ({e.strerror})"
        )
        add(
            Finding(
                "memory",
                "warn",
                f"{name} {what}: no facts loaded",
                hint="replace it with a regular file, or set memory_file in talos.toml",
            )
        )
        return [], None
    indexed = _indexed_facts(mem, mf)
    flagged: list[Any] | None = None
    if indexed is None:
        with _captured() as warned:
            every = load_facts(mf, keep_fact=None)
    else:
        every, flagged = indexed
        try:
            warned = line_warnings(mf, read_memory(mf))
        except OSError as e:
            warned = [f"{mf}: cannot read ({e.strerror}); no facts loaded"]
    if mem.headings:  # a heading labels the facts beneath it; it is none (SPEC §3.1)
        every = [n for n in every if not n.heading_level]
    facts = every if seen is None else [n for n in every if _visible(n.raw, seen)]
    if warned:
        add(
            Finding(
                "memory",
                "warn",
                f"{name}: {_count(len(facts), 'fact')} loaded; some lines could not be read",
                _details([places.text(w) for w in warned]),
                hint="save the file as UTF-8 text",
            )
        )
    else:
        add(Finding("memory", "ok", f"{name}: {_count(len(facts), 'fact')}"))
    return facts, flagged


def _missing_folder(folder: Path, missing: str, cost: str) -> tuple[str, str]:
    """Status and words for a sources folder that is not a folder: ``info`` when it does not
    exist, else ``warn`` with what it is — a link loop said "does not exist"."""
    try:
        os.stat(folder)
    except FileNotFoundError:
        if not os.path.islink(folder):
            return "info", missing
        return "warn", f"is a link to {os.path.realpath(folder)}, which does not exist: {cost}"
    except OSError as e:
        return "warn", f"cannot be looked at ({e.strerror}): {cost}"
    return "warn", f"is not a folder: {cost}"


def _check_skills(paths: Paths, places: _Places, add: Add, seen: frozenset[str] | None) -> None:
    sd = paths.skills_dir
    name = places.folder(sd)
    if not sd.is_dir():
        status, what = _missing_folder(sd, "does not exist: no skills", "no skills")
        add(Finding("skills", status, f"{name} {what}"))
        return
    try:
        os.listdir(sd)
    except OSError as e:
        add(Finding("skills", "warn", f"{name}: cannot list ({e.strerror})"))
        return
    # the Agent Skills layout's NAME/SKILL.md counts too, as every model but classic reads it
    folders = str(paths.config.get("model", "evidence")) != "classic"
    count = sum(_sees(skill_scopes(p), seen) for p in skill_files(sd, folders=folders))
    add(Finding("skills", "ok", f"{name}: {_count(count, 'skill file')}"))


def _check_sessions(paths: Paths, places: _Places, add: Add, seen: frozenset[str] | None) -> None:
    """One finding per sessions folder (issue 16.4: ``sessions_dir`` may be a list), in load
    order; a folder given twice counts once (:func:`session_folders`)."""
    for folder in session_folders(paths.sessions_dirs):
        configured = folder.root / RECURSIVE_MARK if folder.recursive else folder.root
        _check_sessions_folder(folder.root, configured, places.folder(configured), add, seen)


def _check_sessions_folder(
    root: Path, configured: Path, name: str, add: Add, seen: frozenset[str] | None
) -> None:
    if not root.is_dir():
        status, what = _missing_folder(root, "does not exist: no episodes", "no episodes")
        add(Finding("sessions", status, f"{name} {what}"))
        return
    try:
        os.listdir(root)
    except OSError as e:
        add(Finding("sessions", "warn", f"{name}: cannot list ({e.strerror})"))
        return
    count = len(session_files(configured)) if _sees(_GLOBAL, seen) else 0  # global's
    add(Finding("sessions", "ok", f"{name}: {_count(count, 'session file')}"))


def _check_state(paths: Paths, places: _Places, add: Add) -> bool:
    """The state folder (index, usage, trace, audit); False stops the checks that need it."""
    sd = paths.state_dir
    name = places.folder(sd)
    if (sd.exists() or sd.is_symlink()) and not sd.is_dir():  # a link loop too
        why = _refusal(sd, "folder", follow=True) or "is not a folder"
        add(Finding("state", "error", f"{name} {why}; talos keeps its state there"))
        return False
    probe = sd if sd.is_dir() else sd.parent
    if not os.access(probe, os.W_OK | os.X_OK):
        add(
            Finding(
                "state",
                "warn",
                f"{name} is not writable: no trace, usage or index",
                hint=f"make {name} writable",
            )
        )
        return True
    add(Finding("state", "ok", f"{name} writable"))
    return True


def _tag_issue(n: Any) -> str | None:
    """What is wrong with a fact's tag: unparsable, a date that is not a date (the record is
    then never valid), or an empty field value (``key=``)."""
    problem = tag_problem(n)
    if problem:
        return problem
    window = window_problem(n)
    if window:
        return f"{window[1]}: the record is never used"
    empty = sorted(k for k, v in n.fields.items() if v == "")
    if empty:
        return f"empty field value: {', '.join(k + '=' for k in empty)}"
    return None


def _check_tags(facts: list[Any], places: _Places, add: Add) -> None:
    bad = _Listed(
        [(n, problem) for n in facts if (problem := _tag_issue(n))],
        lambda x: f"{places.path(x[0].path)}:{x[0].line}: {x[1]}",
    )
    if bad:
        add(
            Finding(
                "tags",
                "warn",
                f"{_count(len(bad), 'line')} with an unreadable provenance tag, used by no one",
                _details(bad),
                hint="fix the tag: <!-- SRC YYYY-MM-DD field=value ... -->",
            )
        )
    else:
        add(Finding("tags", "ok", "every provenance tag parses"))


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
    from talos import hybrid

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
    in a traceback (issue 12 item 4); recall goes on without counting. A finding only when
    they cannot (the usual report stays as it was)."""
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
    store = SqliteUsage(paths.usage_db)
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
    talos (issue 12.1); a record edited in place is worth knowing only."""
    af = paths.audit_file
    name = places.path(af)
    if not af.exists() and not af.is_symlink():  # a link loop is no "no writes": it is read
        add(Finding("audit", "ok", f"{name}: no writes recorded yet"))
        return
    try:
        with _captured() as warned:
            problems = audit.verify(af, paths.memory_file, seen)
            edited = [
                o.message
                for o in audit.outside_edits(af, paths.memory_file, seen)
                if o.kind == "changed"
            ]
    except OSError as e:
        add(Finding("audit", "warn", f"{name}: cannot read ({e.strerror})"))
        return
    # verify() reads the log twice: an unreadable line is warned about twice, listed once
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
        add(Finding("audit", "ok", f"{name} agrees with {mf}"))


#: Days a failed hook stays worth a warning in ``talos doctor``.
HOOK_RECENT_DAYS = 7


def _refusal(path: Path, want: str = "file", follow: bool = False) -> str:
    """What is wrong with one of talos's own files, as "is a FIFO (named pipe), not a regular
    file", or "" when it is what its writer takes (``want``: ``file``, ``socket``, ``folder``)
    or missing. ``follow``: judged through a link, as a reader that follows links does (SQLite
    files); otherwise a link is itself refused, as :func:`talos.fsutil.open_append`,
    :func:`talos.fsutil.lock` and the hook's writers refuse it (SPEC §9.5)."""
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


def _check_own_files(paths: Paths, places: _Places, add: Add) -> None:
    """talos's own files that its writers refuse (SPEC §9.5 and the hostile passes: a FIFO
    trace left doctor healthy while report failed on it). One ``warn`` per file, naming what
    it is and what it costs; the index, usage and audit files have their own checks."""
    sd = paths.state_dir
    what = {
        paths.trace_file: "no recall is traced, and talos report cannot read it",
        paths.lock_dir / "memory.lock": "every write to memory.md is refused",
    }
    lock_dir = _refusal(paths.lock_dir, "folder", follow=True)  # the writer's mkdir follows
    if lock_dir:
        name = places.path(paths.lock_dir)
        add(
            Finding(
                "files",
                "warn",
                f"{name} {lock_dir}: every write to memory.md is refused",
                hint=f"remove {name} (talos makes a new one)",
            )
        )
        what.pop(paths.lock_dir / "memory.lock")
    if paths.trace_file.parent != sd and not paths.trace_file.parent.is_dir():
        what.pop(paths.trace_file, None)  # a folder of the person's that is not there yet
    for path, cost in what.items():
        why = _refusal(path)
        if why:
            name = places.path(path)
            add(Finding("files", "warn", f"{name} {why}: {cost}", hint=f"remove or replace {name}"))


def _check_hooks(paths: Paths, places: _Places, add: Add) -> None:
    """The agent hooks' own files and log (issue 16, SPEC §9.5). A log, socket, lock or run
    folder the hook refuses is a ``warn`` each (a FIFO hook.log hung the hook and doctor;
    tests/test_hook_never_blocks.py). Then the log: no finding when no hook ever failed;
    ``warn`` for an error in the last :data:`HOOK_RECENT_DAYS` days, else ``info``
    (timeouts and a server still starting are transient)."""
    from talos.hooks.log import read_tail

    log = paths.state_dir / "hook.log"
    run = paths.state_dir / "run"
    costs = {
        log: ("file", "hooks that fail cannot say why"),
        Path(f"{log}.1"): ("file", "hooks that fail cannot say why"),
        run: ("folder", "every hook recalls in its own process"),
    }
    if not _refusal(run, "folder"):
        costs[run / "hook.sock"] = ("socket", "every hook recalls in its own process")
        costs[run / "hook.lock"] = ("file", "every hook recalls in its own process")
    for path, (want, cost) in costs.items():
        why = _refusal(path, want)
        if not why and want == "file" and path.exists() and not os.access(path, os.R_OK | os.W_OK):
            why = "cannot be read and written by this user"
        if why:
            name = places.path(path)
            add(
                Finding(
                    "hooks",
                    "warn",
                    f"{name} {why}: {cost}",
                    hint=f"remove {name} (talos makes a new one)",
                )
            )
    entries = read_tail(str(log))
    if not entries:
        return
    since = (dt.datetime.now(dt.UTC) - dt.timedelta(days=HOOK_RECENT_DAYS)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    recent = [e for e in entries if e.when >= since]
    # a warning (the hook may have answered) is no hook that gave no context
    failed = [e for e in recent if e.kind != "warning"]
    errors = sum(e.kind == "error" for e in recent)
    warned = len(recent) - len(failed)
    status = "warn" if errors or warned else "info"
    shown = ([e for e in recent if e.kind in ("error", "warning")] or recent or entries)[-5:]
    add(
        Finding(
            "hooks",
            status,
            f"{places.path(log)}: {_count(len(failed), 'hook')} gave no context in the last "
            f"{HOOK_RECENT_DAYS} days ({_count(errors, 'error')})"
            + (f"; {_count(warned, 'warning')} of talos on the hooks' way" if warned else ""),
            tuple(places.text(str(e)) for e in shown),
            hint="fix what the lines say; talos hook status shows the resident server"
            if errors or warned
            else "",
        )
    )
