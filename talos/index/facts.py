"""memory.md in the facts table: a line's row, and the rows a process holds (design §3.1, §11).

:func:`parse_line` says what a memory.md line is as a row (a line the fact filter withholds is
kept with its credentials masked: :func:`indexed_fact`). :class:`FactRows` is the index's copy
of the facts table in memory: it re-reads memory.md when its signature changed, parses only
lines it has not seen, rewrites only the changed rows of an in-place edit (:meth:`FactRows.patch`)
and keeps the node of every unchanged row (:meth:`FactRows.nodes`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from talos.index import signatures
from talos.index.schema import damaged, meta
from talos.model import Node
from talos.safety import keep_fact, mask_secrets
from talos.sources.facts import (
    FRONTMATTER,
    MAX_FACT_BYTES,
    Outline,
    any_underline,
    bad_lines_warning,
    claimed_scopes,
    long_lines_warning,
    masked_fields,
    parse_fact_line,
    read_memory,
    setext_headings,
    structural,
    tag_reasons,
)
from talos.text import matching_keywords
from talos.warn import audible, warn

if TYPE_CHECKING:
    from talos.index import RefreshStats

__all__ = [
    "COLUMNS",
    "FactRows",
    "fields_of",
    "headings_column",
    "indexed_fact",
    "parse_line",
    "stored_line",
]

_UNSEEN: Any = object()
_MARKS = ", ".join("?" * 10)


#: The columns of a facts row, in order (``SELECT`` and ``INSERT`` use them all).
COLUMNS = "line, raw, text, kw, src, born, fields, safe, level, headings"


def _fact_rows(rows: list[Any]) -> list[Any]:
    """``rows`` of ``facts`` (:data:`COLUMNS`), checked."""
    for line, raw, text, kw, src, born, fields, safe, level, headings in rows:
        if not (
            isinstance(line, int)
            and all(isinstance(v, str) for v in (raw, text, kw, src, born, fields, headings))
            and (safe is None or isinstance(safe, int))
            and isinstance(level, int)
            and 0 <= level <= FRONTMATTER
        ):
            raise damaged("facts", f"line {line!r}")
    paths = {r[9] for r in rows if r[9]}
    for text in paths:
        got = _field(text)
        if not isinstance(got, list) or not all(isinstance(h, str) for h in got):
            raise damaged("facts", f"headings {text[:40]!r}")
    tagged = [r[6] for r in rows if r[6]]
    for value, text in zip(fields_of(tagged), tagged, strict=True):  # one decode for all
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise damaged("facts", f"fields {text[:40]!r}")
    return rows


def fields_of(texts: list[str]) -> list[dict[str, str]]:
    """The tag fields stored as JSON objects (``facts.fields``), decoded in one call."""
    if not texts:
        return []
    try:
        got = json.loads("[" + ",".join(texts) + "]")
    except (ValueError, RecursionError):
        got = None
    if not isinstance(got, list) or len(got) != len(texts):  # a damaged row: each on its own
        return [_field(t) for t in texts]
    return got


def _headings_of(text: str) -> tuple[str, ...]:
    """The heading path a ``facts.headings`` column holds (checked by :func:`_fact_rows`)."""
    return tuple(json.loads(text)) if text else ()


def _field(text: str) -> Any:
    """One row's tag fields, or ``None`` when they do not decode (a damaged row)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def headings_column(path: tuple[str, ...]) -> str:
    """A heading path as the ``facts.headings`` column keeps it: a JSON list, "" for none."""
    return json.dumps(list(path), ensure_ascii=False) if path else ""


def parse_line(line: str) -> tuple[str, str, str, str, str, int] | None:
    """What a memory.md line is in the facts table: ``(text, keywords, src, born, fields,
    safe)``, or ``None`` when it is no fact (design §3.1, §8.2). A line the fact filter
    withholds is kept with its credentials masked (:func:`indexed_fact`)."""
    parsed = parse_fact_line(line)
    if parsed is None:
        return None
    safe = keep_fact(parsed.text) and not (parsed.fields and tag_reasons(line))
    text, kw = indexed_fact(parsed.text, safe)
    if not kw:
        return None
    kept = parsed.fields if safe else masked_fields(parsed.fields)
    fields = json.dumps(kept, ensure_ascii=False) if kept else ""
    return (text, " ".join(sorted(kw)), parsed.src, parsed.born, fields, int(safe))


def indexed_fact(text: str, safe: bool) -> tuple[str, frozenset[str]]:
    """A fact's text and keywords as the index keeps them: a line the fact filter withholds
    (``safe`` false: it may hold a credential) with every credential masked, so index.db never
    holds one (hostile pass of issue 13 item 6: it kept "hunter2024x" as a keyword)."""
    if not safe:
        text = mask_secrets(text)
    return text, matching_keywords(text)


def stored_line(line: str, safe: int | bool) -> str:
    """The raw line a facts row keeps: masked when the line is withheld (``safe`` false: the
    parse's last field, a row's ``safe`` column)."""
    raw = line.rstrip("\r")
    return raw if safe else mask_secrets(raw)


class FactRows:
    """The rows of the facts table as this process last wrote or read them, and what it
    derived from them: the parse of every line seen (``_line_cache``), memory.md's lines
    (``_blobs``) and, while its signature is racy, bytes (``_memory_bytes``), the node of each
    row (``_fact_nodes``, ``_fact_out``).

    Staleness: the rows are those of the facts change token ``_rows_token`` (``meta``); they
    are used only while it is the index's token, else read again. ``sig`` is memory.md's
    signature as this object last saw it: the file is read again when it differs.

    Args:
        path: the home's memory.md.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sig: tuple[Any, ...] | None = None  # memory.md's signature, as last settled
        self._line_cache: dict[str, tuple[str, str, str, str, str, int] | None] = {}
        self._rows: list[tuple[Any, ...]] | None = None  # fact rows as of _rows_token
        self._rows_token: str | None = None
        self._fact_nodes: dict[tuple[Any, ...], Node] = {}
        self._blobs: list[bytes] | None = None  # memory.md's lines as of _rows
        self._row_at: dict[int, int] = {}  # line number -> index in _rows
        self._fact_out: tuple[list[Any], list[tuple[Node, bool]]] | None = None
        self._patched_from: list[Any] | None = None  # the rows patch last edited
        self._warned: tuple[bytes, list[int]] | None = None  # memory.md bytes warned about
        self._unreadable: str | None = None  # why memory.md could not be read, warned about
        self._memory_bytes: bytes | None = None  # memory.md as last read, while its sig is racy

    def look(self) -> tuple[Any, ...]:
        """memory.md's signature now (:func:`signatures.settled`); a racy one that settled
        since, with the same bytes as read then, becomes ``sig`` (trusted, no write)."""
        raw_sig = signatures.file_sig(self.path)
        memory_sig = signatures.settled(raw_sig)
        known = self.sig
        if known is not None and known[:3] == raw_sig != known and memory_sig == raw_sig:
            # Read within its last tick, settled since: the same bytes mean nothing changed
            # in that tick, and the signature can be trusted from now on (no write needed).
            with suppress(OSError):
                if read_memory(self.path) == self._memory_bytes:
                    self.sig = memory_sig
        return memory_sig

    def refused(self, con: sqlite3.Connection) -> None:
        """Warn, once per object, that memory.md was refused when the index last read it
        (``meta.facts_refused``): a run whose files are unchanged reads no file, and without
        this it recalled with no facts and no word."""
        why = meta(con, "facts_refused")
        if why is not None and self._unreadable != why:
            self._unreadable = why
            warn(f"{self.path}: cannot read ({why}); no facts loaded")

    def reread(self) -> None:
        """The code that turns lines into rows changed (:data:`signatures.READERS`): no
        parse or row held is kept."""
        self._line_cache = {}
        self._rows = self._blobs = self._patched_from = None

    def refresh(self, con: sqlite3.Connection, sig: tuple[Any, ...], stats: RefreshStats) -> None:
        """Re-read memory.md; only lines not seen before are parsed."""
        try:
            data = read_memory(self.path)
        except FileNotFoundError:
            data = b""
        except OSError as e:
            if self._unreadable != e.strerror:  # once, not on every racy re-read
                self._unreadable = e.strerror
                warn(f"{self.path}: cannot read ({e.strerror}); no facts loaded")
            # kept, so that every later run that recalls without the facts says so too
            # (Index.refresh, :meth:`refused`): a second recall said "nothing recalled"
            con.execute(
                "INSERT OR REPLACE INTO meta(k, v) VALUES ('facts_refused', ?)", (e.strerror,)
            )
            data = b""
        else:
            con.execute("DELETE FROM meta WHERE k = 'facts_refused'")
        blobs = data.split(b"\n") if data else []
        self._memory_bytes = data if len(sig) > 3 else None  # kept only while racy
        if not any_underline(data) and self.patch(con, blobs, sig, stats):
            return
        rows = []
        bad: list[int] = []
        long: list[int] = []
        token = meta(con, "facts_token")
        old = self._rows if self._rows_token == token else None
        stored = None
        if old is None:
            stored = _fact_rows(
                con.execute(f"SELECT {COLUMNS} FROM facts ORDER BY line").fetchall()
            )
        if not self._line_cache:
            # This object has parsed nothing yet (the index was built by another process):
            # the stored rows say what each known line parses to, so an edit still parses
            # only the edited line, not 3,000 (design §11).
            old_rows = self._rows or stored or []
            # (a withheld line's row keeps its line masked: it is no key, it is parsed again)
            self._line_cache = {r[1]: tuple(r[2:8]) for r in old_rows if r[7]}
        cache = self._line_cache
        fresh: dict[str, tuple[str, str, str, str, str, int] | None] = {}
        # the index keeps the default filter's verdicts
        outline = Outline(keep_fact, setext_headings(data, blobs))
        marks = outline.setext
        column: dict[tuple[str, ...], str] = {}
        for no, blob in enumerate(blobs, 1):
            if len(blob) > MAX_FACT_BYTES:
                long.append(no)  # not a fact (parse_fact_line); never decoded, never stored
                continue
            try:
                line = blob.decode("utf-8")
            except UnicodeDecodeError:
                bad.append(no)
                continue
            if line in fresh:
                entry = fresh[line]
            elif line in cache:
                entry = fresh[line] = cache[line]
            else:
                stats.lines_parsed += 1
                entry = fresh[line] = parse_line(line)
            if "#" in line or "`" in line or "~" in line or (marks and no - 1 in marks):
                level, path = outline.step(line, no - 1)  # no other line changes the outline
            else:
                level, path = 0, outline.path
            if entry is not None:
                under = column.get(path)
                if under is None:
                    under = column[path] = headings_column(path)
                rows.append((no, stored_line(line, entry[-1]), *entry, level, under))
        self._line_cache = fresh
        heard = [no for no in bad if audible(claimed_scopes(blobs[no - 1]))]  # §7.3
        loud = [no for no in long if audible(claimed_scopes(blobs[no - 1]))]
        if (heard or loud) and self._warned != (data, bad + long):  # once per content
            self._warned = (data, bad + long)
            if heard:
                warn(bad_lines_warning(self.path, heard))
            if loud:
                warn(long_lines_warning(self.path, loud))
        if old is None and token is not None and stored == rows:
            # Read again by a process that had not read it (a change within its tick looked
            # at again, signatures.settled): the same rows. No new token, so the stored records
            # block stays valid for every process.
            self._rows, self._rows_token, self._patched_from = rows, token, None
            self._blobs = blobs if not bad and not long else None
            self._row_at = {r[0]: i for i, r in enumerate(rows)}
            self._set_memory_sig(con, sig, stats, reparsed=False)
            return
        if old is None:
            con.execute("DELETE FROM facts")
            con.executemany(f"INSERT INTO facts({COLUMNS}) VALUES ({_MARKS})", rows)
        else:  # an edit writes the rows it changed, not the file
            before = {r[0]: r for r in old}
            after = {r[0]: r for r in rows}
            con.executemany(
                "DELETE FROM facts WHERE line=?",
                [(no,) for no in before.keys() - after.keys()],
            )
            con.executemany(
                f"INSERT OR REPLACE INTO facts({COLUMNS}) VALUES ({_MARKS})",
                [r for no, r in after.items() if before.get(no) != r],
            )
        self._rows, self._patched_from = rows, None
        self._blobs = blobs if not bad and not long else None
        self._row_at = {r[0]: i for i, r in enumerate(rows)}
        self._set_memory_sig(con, sig, stats)

    def _set_memory_sig(
        self,
        con: sqlite3.Connection,
        sig: tuple[Any, ...],
        stats: RefreshStats,
        reparsed: bool = True,
    ) -> None:
        con.execute(
            "INSERT OR REPLACE INTO meta(k, v) VALUES ('memory_sig', ?)",
            (json.dumps([str(self.path), *sig]),),
        )
        stats.facts_reparsed = stats.facts_reparsed or reparsed

    def patch(
        self,
        con: sqlite3.Connection,
        blobs: list[bytes],
        sig: tuple[Any, ...],
        stats: RefreshStats,
    ) -> bool:
        """Apply an edit that changed lines in place (same line count, each line a fact
        before and after, or neither) to the rows this object wrote last: compare the raw
        lines, parse and write only the changed ones; unchanged rows keep their objects.
        ``False`` when a full re-read is needed (design §11: a one-line edit costs one line):
        also when a changed line is or was a heading or a code fence
        (:func:`~talos.sources.facts.structural`), which re-labels the lines after it."""
        prev, rows = self._blobs, self._rows
        if (
            prev is None
            or rows is None
            or len(prev) != len(blobs)
            or self._rows_token != meta(con, "facts_token")
        ):
            return False
        changed = [i for i, (a, b) in enumerate(zip(prev, blobs, strict=True)) if a != b]
        if len(changed) > 64:
            return False
        if not changed:  # looked at again (a recent change, settled): same lines, no news
            self._blobs = blobs
            self._set_memory_sig(con, sig, stats, reparsed=False)
            return True
        new_rows = list(rows)
        writes: list[tuple[Any, ...]] = []
        for i in changed:
            try:
                line = blobs[i].decode("utf-8")
                before = prev[i].decode("utf-8")
            except UnicodeDecodeError:
                return False
            if structural(line) or structural(before):
                return False  # a heading or a fence: the lines after it change their path
            entry = self._line_cache.get(line, _UNSEEN)
            if entry is _UNSEEN:
                stats.lines_parsed += 1
                entry = self._line_cache[line] = parse_line(line)
            at = self._row_at.get(i + 1)
            if (at is None) != (entry is None):
                return False  # a line became a fact or stopped being one: rows shift
            if at is not None and entry is not None:
                new_rows[at] = row = (i + 1, stored_line(line, entry[-1]), *entry, *rows[at][8:])
                writes.append(row)
        con.executemany(f"INSERT OR REPLACE INTO facts({COLUMNS}) VALUES ({_MARKS})", writes)
        self._patched_from = rows
        self._rows, self._blobs = new_rows, blobs
        self._set_memory_sig(con, sig, stats)
        return True

    def nodes(
        self, connect: Callable[[], sqlite3.Connection], token: str | None
    ) -> list[tuple[Node, bool]]:
        """Fact nodes in file order, each with :func:`talos.safety.keep_fact`'s verdict, for
        the facts of ``token`` (the index's change token as of its last refresh); ``connect``
        gives the index's connection, used when the rows held are of another token.

        The rows this object wrote at its last refresh are used as they are, and a node whose
        row and position are unchanged is the node built before: after a one-line edit only
        that line's node is new (design §11).
        """
        rows = self._rows if self._rows_token == token else None
        if rows is None:
            con = connect()
            con.execute("BEGIN")
            try:  # the rows and the token they belong to, from one snapshot
                token = meta(con, "facts_token")
                rows = _fact_rows(
                    con.execute(f"SELECT {COLUMNS} FROM facts ORDER BY line").fetchall()
                )
            finally:
                con.execute("COMMIT")
            self._rows, self._rows_token, self._blobs = rows, token, None
            self._patched_from = None
        prev = self._fact_out
        if (
            prev is not None
            and prev[0] is self._patched_from
            and rows is self._rows
            and len(rows) == len(prev[0])
        ):
            # rows patched in place (patch): unchanged rows are the same objects
            src, before = prev
            out = [
                before[i] if rows[i] is src[i] else self._fact_node(i, rows[i])
                for i in range(len(rows))
            ]
            self._fact_out = (rows, out)
            return out
        if prev is not None and prev[0] is rows:
            return prev[1]
        path = str(self.path)
        old = self._fact_nodes
        # A row is known by its line, exact text, heading level and path (a "## Billing" line
        # that an edit above put inside a code fence is a fact now, same line and text: the
        # attacker's pass found the old heading node kept); the rest is parsed from
        # them by the same readers (READERS). Each new row's tag fields are decoded in one
        # call: a json.loads per row was a third of building 1,000,000 nodes (issue 12 item 8).
        nodes: list[Node | None] = (
            [
                n
                if (n := old.get((row[0], row[1], row[8], row[9]))) is not None and n.order == i
                else None
                for i, row in enumerate(rows)
            ]
            if old
            else [None] * len(rows)
        )
        fields = fields_of([r[6] for r, n in zip(rows, nodes, strict=True) if n is None and r[6]])
        at = 0
        paths: dict[str, tuple[str, ...]] = {}
        for i, row in enumerate(rows):
            if nodes[i] is None:
                line, raw, text, kw, src, born, tag, _safe, level, under = row
                if tag:
                    got, at = fields[at], at + 1
                else:
                    got = {}
                kws = frozenset(kw.split())
                heads = paths.get(under)
                if heads is None:
                    heads = paths[under] = _headings_of(under)
                nodes[i] = Node(
                    "fact", text, kws, i, path, line, raw, "", "", src, born, got, [], level, heads
                )
        built = cast(list[Node], nodes)  # every one is set above
        self._fact_nodes = {(r[0], r[1], r[8], r[9]): n for r, n in zip(rows, built, strict=True)}
        out = [(n, bool(r[7])) for n, r in zip(built, rows, strict=True)]
        self._fact_out = (rows, out)
        return out

    def _fact_node(self, i: int, row: tuple[Any, ...]) -> tuple[Node, bool]:
        line, raw, text, kw, src, born, fields, safe, level, under = row
        node = Node(
            kind="fact",
            text=text,
            keywords=frozenset(kw.split()),
            order=i,
            path=str(self.path),
            line=line,
            raw=raw,
            src=src,
            born=born,
            fields=json.loads(fields) if fields else {},
            heading_level=level,
            headings=_headings_of(under),
        )
        return node, bool(safe)

    def settle(self, sig: tuple[Any, ...], token: str | None, reparsed: bool) -> None:
        """Record the signature a refresh saw; the rows it wrote (``reparsed``) are those of
        ``token``."""
        self.sig = sig
        if reparsed:
            self._rows_token = token

    def held(self, token: str | None) -> list[tuple[Any, ...]] | None:
        """The rows held for ``token``, or ``None`` (read them from the table)."""
        return self._rows if self._rows is not None and self._rows_token == token else None

    def forget(self) -> None:
        """Drop every in-memory copy of the rows and line parses (re-read next time)."""
        self._memory_bytes = None
        self._rows = self._blobs = self._patched_from = None
        self._rows_token = None
        self._line_cache = {}
        self._row_at = {}
        self._fact_out = None
        self.sig = None
