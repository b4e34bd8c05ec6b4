"""Writes to a home: remember, forget, resolve, revoke (design §6.5, §7.5), with what a write
may store (:func:`check_value`) and how a line is written (:func:`format_fact_line`); restore,
the acknowledgement of outside edits and a skill's way to the trash are in
:mod:`talos.writer.restore`, and one change of memory.md under its lock in
:mod:`talos.writer.txn`. Every name of those two that other code uses is importable from here.

Every write takes the home's memory lock (``filelock``, flock-based: a dead holder releases
it), settles any transaction a killed writer left (:func:`talos.writer.audit.recover`), decides what
to change from what is on disk *now* (never from a view taken before the lock: two concurrent
``resolve`` calls each kept their own record and removed the other's, issue 12.2), appends its
entries to the audit log as *prepared*, changes memory.md, then commits.

A person edits memory.md too, without taking the lock (``echo … >> memory.md``, an editor's
save). So a write that adds one line and supersedes none only appends it
(:func:`talos.writer.shared_file.append_line`, nothing rewritten), and a write that removes lines
(or
puts a superseding line in the old one's place) replaces the file only if it is still the
file it read (:func:`talos.writer.shared_file.replace_if_unchanged`); otherwise the transaction is
aborted
and the edit redone on the new content, up to :data:`MAX_ATTEMPTS` times (issue 12.1; before,
132 to 232 of 600 person lines were lost in ``tests/test_outside_writer.py``). Lines that are not
valid UTF-8 are carried over byte for byte: no line a person wrote is ever lost.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from talos.errors import InputError
from talos.home import Paths
from talos.model import line_id
from talos.sources.facts import MIN_FACT_CHARS, ParsedFact, parse_fact_line
from talos.view.canon import canonical_name
from talos.view.trust import (
    authority_of,
    covers,
    derived_id,
    from_model,
    observed_day,
    overlaps,
    person_wrote,
    tag_problem,
    validity,
    window_of,
)
from talos.writer.restore import Restored, acknowledge, restore, skill_id, trash_skill
from talos.writer.txn import (
    LOCK_TIMEOUT,
    MAX_ATTEMPTS,
    Change,
    Record,
    apply_change,
    decode_line,
    dressed,
    joined,
    keyed,
    memory_lock,
    placed,
    settle,
    split_lines,
    supersede_entry,
)

__all__ = [
    "FIELD_ORDER",
    "LOCK_TIMEOUT",
    "MAX_ATTEMPTS",
    "MAX_TEXT_CHARS",
    "MAX_VALUE_CHARS",
    "Forgotten",
    "RememberResult",
    "RemovedLine",
    "Restored",
    "acknowledge",
    "check_value",
    "format_fact_line",
    "format_tag",
    "line_id",
    "memory_lock",
    "remember",
    "remove_fact_lines",
    "resolve",
    "restore",
    "skill_id",
    "trash_skill",
    "unsafe_char",
]

#: Longest value of a tag field (``--key``, ``--scope``, ``--source``, ``--ref``, ``--by``):
#: a 20,000-character key was stored as it came.
MAX_VALUE_CHARS = 1_000
#: Longest text of a fact :func:`remember` writes (any route: CLI, MCP, Python API). A model
#: sent a 2,000,000-character fact over MCP: it was appended, and every later command warned
#: that memory.md holds a line longer than the readers take
#: (``talos.sources.facts.MAX_FACT_BYTES``, 1 MiB, which 10,000 characters of at most 4
#: bytes cannot reach). The block shows 600 characters of a fact, and 1,200 match
#: (``tests/test_mcp_bounds.py``).
MAX_TEXT_CHARS = 10_000
#: Order of ``field=value`` pairs in a tag written by talos (design §7.1).
FIELD_ORDER = (
    "id",
    "key",
    "scope",
    "from",
    "until",
    "verified",
    "ref",
    "conf",
    "by",
    "supersedes",
    "status",
)
_SRC = re.compile(r"\w+")
_KEY = re.compile(r"[\w.\-:/]+")


@dataclass(frozen=True, slots=True)
class RemovedLine:
    """A line taken out of memory.md: its 1-based number, exact text and record id."""

    line: int
    raw: str
    id: str


@dataclass(frozen=True, slots=True)
class Forgotten:
    """A record ``forget`` took away: ``kind`` (``fact`` or ``skill``), its ``id`` (what
    ``talos restore`` takes), its ``text``, and ``where`` it was (``memory.md:LINE``) or,
    for a skill, where the file went (the trash)."""

    kind: str
    id: str
    text: str
    where: str


@dataclass(slots=True)
class RememberResult:
    """What :func:`remember` did.

    ``status``: ``active`` (appended, in force), ``shadowed`` (appended, but a record of higher
    authority holds the key), or ``history`` (late evidence: recorded in the audit log only).
    ``superseded``: ids of the records it replaced (removed from memory.md, restorable).
    """

    id: str
    line: str
    status: str
    superseded: list[str] = field(default_factory=list)


def format_tag(src: str, born: str, fields: dict[str, str]) -> str:
    """``<!-- SRC DATE field=value ... -->`` with values URL-encoded (design §7.1)."""
    order = [k for k in FIELD_ORDER if k in fields] + sorted(
        k for k in fields if k not in FIELD_ORDER
    )
    pairs = "".join(
        f" {k}={quote(str(fields[k]), safe=':/.@,+_-')}" for k in order if fields[k] != ""
    )
    return f"<!-- {src} {born}{pairs} -->"


def format_fact_line(text: str, src: str, born: str, fields: dict[str, str]) -> str:
    """A memory.md line ``- TEXT <!-- tag -->`` that :func:`parse_fact_line` reads back."""
    return f"- {text} {format_tag(src, born, fields)}"


# -- values (issue 12.5, 13.2) ----------------------------------------------------------------

#: Names for the invisible characters people actually paste.
_CHAR_NAMES = {
    "\x00": "a NUL byte",
    "\x08": "a backspace",
    "\t": "a tab",
    "\n": "a line feed",
    "\x0b": "a vertical tab",
    "\x0c": "a form feed",
    "\r": "a carriage return",
    "\x1b": "an escape (ESC)",
    "\x7f": "a delete (DEL)",
    "\x85": "a next line (NEL)",
}


def unsafe_char(value: str) -> str | None:
    """The first character of ``value`` that must not be stored: a control or format
    character (Unicode categories Cc, Cf, Zl, Zp) — a line break would split the record, a
    tab or zero-width character would make an invisible second key, ESC or a bidi override
    would act on a terminal (issue 12.5, 13.2) — or a lone surrogate (Cs: a byte of an
    argument that is not UTF-8, ``$'\\xff'``, or a ``\\ud800`` escape in JSON), which cannot
    be written as UTF-8 at all (the hostile pass: a prepared audit entry that could never be
    applied made every later write fail). Plain spaces are fine. ``None`` when clean."""
    for ch in value:
        if ch != " " and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            return ch
    return None


def describe_char(ch: str) -> str:
    """``a line feed (U+000A)``, ``a right-to-left override (U+202E)``: for messages."""
    name = _CHAR_NAMES.get(ch)
    if name is None and "\udc80" <= ch <= "\udcff":  # how Python decodes a non-UTF-8 byte
        return f"a byte that is not UTF-8 (0x{ord(ch) - 0xDC00:02X})"
    if name is None and unicodedata.category(ch) == "Cs":
        return f"a lone surrogate (U+{ord(ch):04X}), which is not UTF-8"
    if name is None:
        uname = unicodedata.name(ch, "")
        name = f"a {uname.lower()}" if uname else "a control character"
    return f"{name} (U+{ord(ch):04X})"


def check_value(option: str, value: str | None) -> None:
    """Refuse a value that holds a control or format character (:func:`unsafe_char`).

    Raises:
        InputError: ``--key 'a\\n': contains a line feed (U+000A)``; a value longer than
            :data:`MAX_VALUE_CHARS`.
    """
    if value is None:
        return
    if len(value) > MAX_VALUE_CHARS:
        raise InputError(
            f"{option} is {len(value):,} characters long; a value holds at most {MAX_VALUE_CHARS:,}"
        )
    ch = unsafe_char(value)
    if ch is not None:
        raise InputError(f"{option} {value!r}: contains {describe_char(ch)}")


def remove_fact_lines(
    paths: Paths,
    doomed: Callable[[ParsedFact, str], bool],
    op: str,
    reason: str,
) -> list[RemovedLine]:
    """Remove every memory.md line whose parsed fact satisfies ``doomed``, audited.

    The decision is made under the lock on memory.md as it is then (and made again if a
    person edits the file before the replace, see :func:`~talos.writer.txn.apply_change`).

    Args:
        paths: the home's paths.
        doomed: decides per ``(parsed line, exact line)``; undecodable and non-fact lines are
            always kept. It may be called more than once per line (a redone write).
        op: the audit operation (``forget``, ``revoke``, ``resolve``).
        reason: why, for the audit log.

    Returns:
        The removed lines in file order ([] when none matched; the file is then untouched).

    Raises:
        filelock.Timeout: another writer held the lock for :data:`LOCK_TIMEOUT` seconds.
        TalosError: memory.md kept changing (see :func:`~talos.writer.txn.apply_change`); it
            is then unchanged.
        OSError: the audit log or memory.md cannot be written (memory.md is then unchanged).
    """

    def plan(data: bytes) -> tuple[Change | None, list[RemovedLine]]:
        gone: set[int] = set()
        removed: list[tuple[RemovedLine, ParsedFact]] = []
        for no, blob in enumerate(split_lines(data), 1):
            line = decode_line(blob)
            parsed = parse_fact_line(line) if line is not None else None
            raw = line.rstrip("\r") if line is not None else ""
            if parsed is not None and doomed(parsed, raw):
                removed.append((RemovedLine(no, raw, derived_id(parsed.fields, raw)), parsed))
                gone.add(no - 1)
        if not removed:
            return None, []
        records = [
            {
                "op": op,
                "id": r.id,
                "key": p.fields.get("key"),
                "scope": p.fields.get("scope", "global"),
                "ref": p.fields.get("ref"),
                "file": str(paths.memory_file),
                "line": r.line,
                "before": r.raw,
                "after": None,
                "reason": reason,
            }
            for r, p in removed
        ]
        return Change(records, data=joined(data, gone)), [r for r, _ in removed]

    with memory_lock(paths):
        settle(paths)
        return apply_change(paths, plan)


def resolve(
    paths: Paths, key: str, keep: str, scopes: Sequence[str], at: dt.date
) -> list[RemovedLine]:
    """Settle a conflict (design §7.4): keep record ``keep``; every other active record of
    ``key`` in its scope that is readable and valid at ``at`` is superseded (removed,
    audited as ``resolve``, restorable).

    Decided under the lock on memory.md as it is then: two ``resolve`` runs of one conflict
    that each keep a different record end with one of the two kept, never with none (issue
    12.2: both used to succeed on their own stale view and remove each other's record).

    Raises:
        InputError: ``keep`` is no longer an active record of ``key`` in ``scopes`` (another
            write changed the key since the caller looked); nothing is changed.
    """

    key = canonical_name(key)

    def plan(data: bytes) -> tuple[Change | None, list[RemovedLine]]:
        blobs = split_lines(data)
        pool = [
            r
            for r in keyed(blobs, key)
            if r.scope in scopes
            and tag_problem(r.node()) is None
            and validity(r.node(), at) is None
        ]
        kept = [r for r in pool if r.id == keep]
        if len(kept) > 1:  # a copied line: "kept X; superseded nothing" left the conflict
            lines = ", ".join(str(r.idx + 1) for r in kept)
            raise InputError(
                f"record id {keep} is on lines {lines} of {paths.memory_file}: talos cannot "
                "tell which one to keep. Nothing was changed; give one of them another id (or "
                "delete one) by hand"
            )
        if not kept:
            ids = ", ".join(sorted({r.id for r in pool})) or "none"
            raise InputError(
                f"record {keep} of key {key!r} is not in {paths.memory_file} any more: another "
                f"write changed the key since talos looked (ids now: {ids}). Nothing was "
                "changed; see talos conflicts"
            )
        losers = [r for r in pool if r.scope == kept[0].scope and r.id != keep]
        if not losers:
            return None, []
        why = f"conflict on {key} resolved: kept {keep}"
        records = [
            {
                "op": "resolve",
                "id": r.id,
                "key": key,
                "scope": r.scope,
                "ref": r.fact.fields.get("ref"),
                "file": str(paths.memory_file),
                "line": r.idx + 1,
                "before": r.raw,
                "after": None,
                "reason": why,
            }
            for r in losers
        ]
        gone = {r.idx for r in losers}
        data_now = joined(data, gone)
        return Change(records, data=data_now), [RemovedLine(r.idx + 1, r.raw, r.id) for r in losers]

    with memory_lock(paths):
        settle(paths)
        return apply_change(paths, plan)


def remember(
    paths: Paths,
    text: str,
    *,
    key: str | None = None,
    source: str = "user",
    ref: str | None = None,
    scope: str = "global",
    observed: dt.date | None = None,
    valid_from: dt.date | None = None,
    until: dt.date | None = None,
    conf: float | None = None,
    by: str | None = None,
    authorized: Sequence[str] = (),
) -> RememberResult:
    """Append a tagged fact, atomically and under the lock (design §7.5).

    With a ``key``, the new record supersedes the active records of the same key and scope
    whose validity window overlaps its own, whose authority is not higher *and* whose
    observed date is not newer: they are removed from memory.md (audited, restorable) and
    the new line records ``supersedes=``. A window that leaves part of an old record's future
    uncovered (a value for next week only) keeps the old record: the new one names it in
    ``supersedes=`` and wins only inside its own window (issue 12.6,
    :func:`talos.view.trust.covers`).
    Windows that do not overlap never supersede. Evidence that arrives late (observed before
    an active record of equal authority) never replaces it: it goes straight to history (the
    audit log). A lower-authority write (``reflect`` over ``user``/``tool``), and any write
    marked model-written (``by=mcp``) over a record the person wrote, is stored, shadowed.
    Without anything to supersede the line is appended (memory.md is not rewritten); a
    superseding line takes the place of the last (in file order) line it supersedes, and one
    that leaves the old record in force goes right after it — under the same heading, not at
    the end of the file (:func:`~talos.writer.txn.placed`, ``tests/test_supersede_place.py``).

    Args:
        text: the fact, one line. key: canonical key (e.g. ``deploy.region``). source: ``user``,
        ``tool`` (requires ``ref``), ``import``, ``reflect`` or another word. ``key``,
        ``source`` and ``by`` are written in their canonical spelling
        (:func:`talos.view.canon.canonical_name`: ``USER`` is ``user``). ref: source id.
        scope: namespace. observed: when the evidence was observed (the tag date; default
        today). valid_from/until: validity window. conf: confidence 0–1. by: the producer
        (``mcp``: a model over MCP, :data:`talos.view.trust.MODEL_BY`). authorized: the scopes
        the writer reads; a model-written record of a key the person holds in one of them
        is stored, shadowed (the view shadows it there, :func:`talos.view.trust.build_view`).

    Returns:
        A :class:`RememberResult`.

    Raises:
        InputError: empty text (newlines and other whitespace runs fold to one space, so
            the fact stays one line), a text longer than :data:`MAX_TEXT_CHARS`, a tag
            inside the text, a control or format character in the text or any value
            (:func:`check_value`), a bad source/key/scope, ``observed`` after tomorrow
            (evidence is not seen in the future), ``tool`` without ``ref``, ``conf``
            outside 0–1, ``until`` not after ``from``.
        filelock.Timeout, TalosError, OSError: the write could not happen (memory.md is
            unchanged).
    """
    if len(text) > MAX_TEXT_CHARS:  # before any work on it: a model sent 2,000,000
        raise InputError(
            f"the text is {len(text):,} characters long; a fact holds at most "
            f"{MAX_TEXT_CHARS:,} (store a long document as a skill, or split it into facts)"
        )
    text = " ".join(text.split())
    if unsafe_char(text) is not None:
        check_value("the text", text)
    if len(text.lstrip("-*# ").strip()) < MIN_FACT_CHARS:
        raise InputError(f"a fact needs at least {MIN_FACT_CHARS} characters of text: {text!r}")
    if "<!--" in text or "-->" in text:
        raise InputError("the text must not contain '<!--' or '-->' (it would break the tag)")
    for option, value in (
        ("--source", source),
        ("--key", key),
        ("--scope", scope),
        ("--ref", ref),
        ("--by", by),
    ):
        check_value(option, value)
    # one spelling per name (talos.view.canon): a model's "Editor" is the person's "editor", and
    # "--source USER" writes "user" (tests/test_key_authority.py)
    source = canonical_name(source)
    key = canonical_name(key) if key is not None else None
    by = canonical_name(by) if by is not None else None
    if not any(c.isspace() for c in scope):  # folded as every route folds it (talos.view.scopes)
        scope = canonical_name(scope)
    if not _SRC.fullmatch(source):
        raise InputError(f"--source must be one word (user, tool, reflect, import): {source!r}")
    if source == "tool" and not ref:
        raise InputError("--source tool requires --ref (the lookup that confirmed it)")
    for name, value in (("key", key), ("scope", scope)):
        if value is not None and not _KEY.fullmatch(value):
            raise InputError(f"--{name} may hold letters, digits and . _ - : / only: {value!r}")
    if conf is not None and not 0.0 <= conf <= 1.0:
        raise InputError(f"--conf must be between 0 and 1: {conf}")
    observed = observed or dt.date.today()
    if observed > dt.date.today() + dt.timedelta(days=1):  # a day of slack for time zones
        raise InputError(
            f"--observed {observed} is in the future; give the date the evidence was seen"
        )
    start = valid_from or observed
    if until is not None and until <= start:
        raise InputError(f"--until {until} must be after the start of validity {start}")
    fields: dict[str, str] = {"id": "r" + secrets.token_hex(5)}
    if key:
        fields["key"] = key
    if scope != "global":
        fields["scope"] = scope
    if valid_from:
        fields["from"] = valid_from.isoformat()
    if until:
        fields["until"] = until.isoformat()
    if ref:
        fields["ref"] = ref
    if conf is not None:
        fields["conf"] = f"{conf:g}"
    if by:
        fields["by"] = by
    mine = authority_of(source, fields)
    window = (start, until)

    def plan(data: bytes) -> tuple[Change | None, RememberResult]:
        blobs = split_lines(data)
        doomed: list[Record] = []
        kept_but_named: list[Record] = []  # overlapping records in force outside our window
        status = "active"
        late_vs = ""
        for r in keyed(blobs, key) if key else []:
            p = r.fact
            if not overlaps(window, window_of(p.fields, p.born)):
                continue
            if r.scope != scope:
                if r.scope in authorized and from_model(fields) and person_wrote(p.src, p.fields):
                    status = "shadowed"
                continue
            theirs = authority_of(p.src, p.fields)
            their_day = observed_day(p.born)  # a clock error is no newer evidence
            if theirs > mine or (from_model(fields) and person_wrote(p.src, p.fields)):
                status = "shadowed"
            elif their_day is not None and their_day > observed:
                if theirs == mine:
                    late_vs = r.id
            elif covers(window, window_of(p.fields, p.born), dt.date.today()):
                doomed.append(r)
            else:
                kept_but_named.append(r)
        own = dict(fields)
        if late_vs:
            own["status"] = "superseded"
            own["superseded_by"] = late_vs
            new_line = format_fact_line(text, source, observed.isoformat(), own)
            entry = {
                "op": "history",
                "id": own["id"],
                "key": key,
                "scope": scope,
                "file": str(paths.memory_file),
                "before": None,
                "after": None,
                "line": new_line,
                "reason": f"late evidence: observed {observed}, before {late_vs}",
            }
            return Change([entry]), RememberResult(own["id"], new_line, "history")
        named = doomed + kept_but_named
        if named:
            own["supersedes"] = ",".join(r.id for r in named)
        new_line = format_fact_line(text, source, observed.isoformat(), own)
        # beside the line it supersedes, under the same heading (not at the end of the file),
        # and as that line stands there: in its list or quote, a heading if it was one
        anchor = max(named, key=lambda r: r.idx) if named else None
        if anchor is not None:
            new_line = dressed(new_line, anchor.raw)
        records = [
            supersede_entry(paths, r, key or "", own["id"], f"superseded by {own['id']}")
            for r in doomed
        ]
        records.append(
            {
                "op": "remember",
                "id": own["id"],
                "key": key,
                "scope": scope,
                "file": str(paths.memory_file),
                "before": None,
                "after": new_line,
                "reason": f"remember ({source})",
            }
        )
        result = RememberResult(own["id"], new_line, status, [r.id for r in doomed])
        if anchor is None:
            return Change(records, append=new_line), result
        data = placed(data, {r.idx for r in doomed}, new_line, anchor.idx)
        return Change(records, data=data), result

    with memory_lock(paths):
        settle(paths)
        return apply_change(paths, plan)
