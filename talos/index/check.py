"""The index against the files (``talos doctor``, ``talos index --check``; design §11).

Nothing here changes the index: :func:`check` reads memory.md, the session files and the stored
episode block, and says where the index differs from them. Imported on use by
:meth:`talos.index.Index.check`, so a recall never loads it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from talos.graph.episodes import EpisodeBlock
from talos.graph.stored import BLOCK_VERSION, BlockError
from talos.index.blocks import caught_up, changes
from talos.index.facts import COLUMNS, headings_column, indexed_fact, parse_line, stored_line
from talos.index.schema import meta
from talos.index.signatures import READERS, dir_sig, file_sig
from talos.safety import keep_fact
from talos.sources.facts import MAX_FACT_BYTES, read_memory, tag_reasons

if TYPE_CHECKING:
    from talos.index import Index

__all__ = ["CHECK_ALL_LINES", "CHECK_SAMPLE", "behind", "check"]

#: :meth:`Index.check` parses every line of a memory.md of at most this many lines again;
#: of a longer one, :data:`CHECK_SAMPLE` rows (and every line without a row).
CHECK_ALL_LINES = 50_000
CHECK_SAMPLE = 2_000


def check(index: Index, full: bool | None = None, skip_behind: bool = False) -> list[str]:
    """Compare ``index`` with the files without changing it; returns differences.

    Args:
        full: parse every line of memory.md again and compare (``None``: when it has at
            most :data:`CHECK_ALL_LINES` lines). Otherwise every line's exact text and
            position are compared with its row, lines without a row are parsed (they
            must be no facts), and :data:`CHECK_SAMPLE` rows spread over the file are
            parsed again: a memory.md of 1,000,000 lines took 126 s in ``talos doctor``
            (issue 12 item 8).
        skip_behind: leave out the files that changed since the index was refreshed
            (:func:`behind`: ``talos index --check`` says those are behind, not different).
    """
    from talos.sources.sessions import load_episodes

    readers, memory, sessions = _changed(index) if skip_behind else (False, False, False)
    if readers:
        return []  # rows of other reader code: the next refresh reads every file again
    problems = [] if memory else _check_facts(index, full)
    if sessions:
        return problems
    want_e = {(n.path, n.text) for n in load_episodes(index.paths.sessions_dirs)}
    have_e = {(n.path, n.text) for n in index.episodes()}
    for path, text in sorted(want_e - have_e)[:20]:
        problems.append(f"{path}: episode {text!r} is not indexed")
    for path, text in sorted(have_e - want_e)[:20]:
        problems.append(f"{path}: indexed episode {text!r} is not in the files")
    problems += _check_block(index)
    return problems


def behind(index: Index) -> list[str]:
    """The files that changed since the index was refreshed, one sentence each (``PATH
    changed since it was indexed``): a cache not yet brought up to date is behind, not
    different — right after a ``remember`` that superseded a value, ``--check`` said "facts
    differ: 10 indexed, 10 in the file" (tests/test_bad_state_findings.py). :func:`check`
    with ``skip_behind`` leaves them out."""
    readers, memory, sessions = _changed(index)
    if readers:
        return [f"{index.file} was made by other talos code"]
    out = []
    if memory:
        out.append(f"{index.paths.memory_file} changed since it was indexed")
    if sessions:
        names = ", ".join(str(d) for d in index.paths.sessions_dirs)
        out.append(f"{names} changed since it was indexed")
    return out


def _unsettled(sig: Any) -> list[Any]:
    """A stored signature without the marks of a racy one (:func:`signatures.settled` adds
    ``"racy", NOW`` after a file's or folder's own numbers)."""
    out: list[Any] = []
    skip = False
    for x in sig if isinstance(sig, list) else []:
        if skip:
            skip = False
        elif x == "racy":
            skip = True
        else:
            out.append(x)
    return out


def _changed(index: Index) -> tuple[bool, bool, bool]:
    """Whether the reader code, memory.md and the sessions folders changed since the index
    was refreshed, by the signatures it stored (their racy marks aside)."""
    from talos.sources.sessions import session_folders

    con = index._connect()
    stored = {k: meta(con, k) for k in ("readers", "memory_sig", "sessions_sig")}
    if stored["readers"] is None and stored["memory_sig"] is None:
        return False, False, False  # never refreshed: nothing is indexed to be behind
    if stored["readers"] != READERS:
        return True, False, False
    path = index.paths.memory_file
    now = [str(path), *file_sig(path)]
    memory = _unsettled(_json(stored["memory_sig"])) != now
    dirs = sum((dir_sig(f.root) for f in session_folders(index.paths.sessions_dirs)), ())
    have = _json(stored["sessions_sig"])
    want = json.loads(index._dir_key(dirs))
    sessions = not isinstance(have, list) or have[:1] + _unsettled(have[1:]) != want
    return False, memory, sessions


def _json(text: str | None) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _check_facts(index: Index, full: bool | None) -> list[str]:
    """The memory.md half of :meth:`check`."""
    from talos.sources.facts import load_facts

    path = index.paths.memory_file
    con = index._connect()
    rows = index._facts.held(meta(con, "facts_token"))  # this object wrote or read it last
    if rows is None:
        rows = con.execute(f"SELECT {COLUMNS} FROM facts ORDER BY line").fetchall()
    try:
        data = read_memory(path)
    except OSError:
        data = b""  # missing or unreadable: load_facts says which, below
        full = True
    blobs = data.split(b"\n") if data else []
    if full or (full is None and len(blobs) <= CHECK_ALL_LINES):
        want = [
            (
                n.line,
                *indexed_fact(n.text, keep_fact(n.text) and not tag_reasons(n.raw)),
                n.heading_level,
                headings_column(n.headings),
            )
            for n in load_facts(path)
        ]
        want = [w for w in want if w[2]]
        have = [(r[0], r[2], frozenset(r[3].split()), r[8], r[9]) for r in rows]
        if want == have:
            return []
        return [f"facts differ from {path}: {_first_difference(want, have)}"]
    at = {r[0]: r for r in rows}
    step = max(1, len(rows) // CHECK_SAMPLE)
    seen = 0
    for no, blob in enumerate(blobs, 1):
        row = at.pop(no, None)
        try:
            line = blob.decode("utf-8") if len(blob) <= MAX_FACT_BYTES else None
        except UnicodeDecodeError:
            line = None
        if row is None:
            if line is not None and parse_line(line) is not None:
                return [f"facts differ from {path}: line {no} is a fact, not indexed"]
            continue
        if line is None or stored_line(line, row[7]) != row[1]:  # masked when withheld
            return [f"facts differ from {path}: line {no} is not the indexed line"]
        seen += 1
        if seen % step == 0:
            entry = parse_line(line)
            if entry is None or (entry[0], entry[1]) != (row[2], row[3]):
                return [f"facts differ from {path}: line {no} is indexed as another fact"]
    if at:
        return [f"facts differ from {path}: line {min(at)} is indexed, not in the file"]
    return []


def _first_difference(want: list[Any], have: list[Any]) -> str:
    """Where the facts parsed from the file (``want``) and the indexed ones (``have``), both
    ``(line, ...)`` in line order, first differ, with both counts: two equal counts alone
    ("10 indexed, 10 in the file") said nothing of what differs."""
    by_want = {w[0]: w for w in want}
    by_have = {h[0]: h for h in have}
    what = "the facts are in another order"
    for no in sorted(set(by_want) | set(by_have)):
        if by_want.get(no) == by_have.get(no):
            continue
        if no not in by_have:
            what = f"line {no} is a fact, not indexed"
        elif no not in by_want:
            what = f"line {no} is indexed, not a fact in the file"
        else:
            what = f"line {no} is indexed as another fact"
        break
    return f"{what} ({len(have)} indexed, {len(want)} in the file)"


def _check_block(index: Index) -> list[str]:
    """The stored episode block (built, or extended session by session) against a block
    merged afresh from the indexed rows: the same merged nodes, in the same order."""
    con = index._connect()
    con.execute("BEGIN")
    try:
        row = con.execute("SELECT token, data FROM blocks WHERE name='episodes'").fetchone()
        token = f"{meta(con, 'sessions_token')}:{BLOCK_VERSION}"
        base = meta(con, "sessions_base") or ""
        rows = con.execute(
            "SELECT path, text, kw, sortkey, task, outcome, parts FROM sessions"
            " WHERE text IS NOT NULL"
            " ORDER BY sortkey"
        ).fetchall()
        if row is None or row[0] is None:
            return []
        try:
            stored = EpisodeBlock.from_bytes(row[1], row[0])
        except BlockError as e:
            return [f"{index.file}: stored episode block unusable ({e})"]
        change = None if row[0] == token else changes(con, stored, base)
    finally:
        con.execute("COMMIT")
    if row[0] == token:
        have = stored
    elif change is not None:
        have = caught_up(stored, change)
    else:
        return []  # of another base: the next recall builds one

    def nodes(b: EpisodeBlock) -> list[Any]:
        return [
            (
                n.path,
                n.text,
                sorted(n.keywords),
                n.order,
                [m.path for m in n.members],
                n.task,
                n.outcome,
                n.parts,
            )
            for n in (b.node(g) for g in range(len(b)))
        ]

    if nodes(have) != nodes(EpisodeBlock.build(rows)):
        return [f"{index.file}: the episode block differs from the indexed sessions"]
    return []
