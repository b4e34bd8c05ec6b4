"""memory.md merged line by line by talos's rules (design §12.3): a three-way merge in which
lines added on either side are kept, a line taken out on one side and left alone on the other
is taken out (a forget stays forgotten), and a line changed differently on both sides keeps
both versions. Which of two versions of a keyed fact is in force is the trust rules' decision
(the view, design §7), not the merge's; two versions of a person's own line are reported, so
``talos sync`` stops and asks.

Run as git's merge driver for memory.md (``.gitattributes``: ``memory.md merge=talos``)::

    python -m talos.sync.merge BASE OURS THEIRS [PATH]

It writes the result over OURS and exits 0 (1 when a file cannot be read), as git expects. A
device's ``device.json`` (also given to it) is never merged: only two homes that share a
device name (one ``TALOS_DEVICE`` on two machines) ever both change one; ``talos sync``
stops before that merge and says so, and once one home has its own name, the old
description must not stop the merge — the description of the device syncing stands, any
other device's is taken from the other side (:func:`_description`).
"""

from __future__ import annotations

import bisect
import os
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path

from talos.sources.facts import parse_fact_line

__all__ = ["SYNC_DEVICE", "Merged", "Overlap", "main", "merge_lines", "merge_text"]


@dataclass(frozen=True, slots=True)
class Overlap:
    """A line both sides edited by hand, differently: ``was`` the common version, ``here``
    ours, ``there`` theirs. Both stay in the merged file; ``talos sync`` reports them and
    stops. A person's own line is edited when a new line is alike enough; a keyed fact when a
    new line keeps its record id. (A record that supersedes another has an id of its own: two
    of those are not an overlap but the trust rules' to weigh, and ``talos conflicts`` shows
    them when they stand equal.)"""

    was: str
    here: str
    there: str

    def as_json(self) -> dict[str, str]:
        """``{"was", "here", "there"}``."""
        return {"was": self.was, "here": self.here, "there": self.there}


@dataclass(frozen=True, slots=True)
class Merged:
    """The merged lines and the person's lines changed differently on both sides."""

    lines: list[str]
    overlaps: list[Overlap] = field(default_factory=list)
    #: Lines deleted on one side and edited on the other: the edit is kept (nothing lost), and
    #: ``talos sync`` says so; ``here`` or ``there`` is "" on the side that deleted it.
    kept_edits: list[Overlap] = field(default_factory=list)


#: How alike (difflib ratio, 0-1) a new line must be to a replaced one to count as its edit.
EDITED = 0.5


def _record(line: str) -> str | None:
    """The record id in ``line``'s tag (``id=``), or ``None`` for a line without one."""
    parsed = parse_fact_line(line) if "id=" in line else None
    return parsed.fields.get("id") if parsed is not None else None


def _edit_of(line: str, candidates: Sequence[tuple[str, str | None]]) -> str | None:
    """The candidate most like ``line`` when it is alike enough to be its edit (:data:`EDITED`)
    and is the same record: a hand edit keeps a talos line's tag (its ``id=``), and a person's
    own line (no id) is never edited into a line talos wrote. Two devices that forgot one line
    and each wrote a fact after it are no edit of it (a random run of writes and syncs on three
    clones stopped for a person there: ``tests/test_sync_attack.py``).

    ``candidates``: ``(line, its record id)``. The cheap upper bounds of the ratio go first,
    as :func:`difflib.get_close_matches` does: 500 lines edited on both sides took 33 s."""
    best, score = None, EDITED
    rid = _record(line)
    sm = SequenceMatcher(None, autojunk=False)
    sm.set_seq2(line)
    for c, cid in candidates:
        if cid != rid:
            continue
        sm.set_seq1(c)
        if sm.real_quick_ratio() < score or sm.quick_ratio() < score:
            continue
        r = sm.ratio()
        if r >= score:
            best, score = c, r
    return best


#: How many lines either side of its place an edit of a line is looked for.
NEAR = 16


def _near(
    candidates: Sequence[tuple[str, str | None]], i: int, n: int
) -> Sequence[tuple[str, str | None]]:
    """The candidates around the place of line ``i`` of ``n`` (:data:`NEAR` either side): an
    edit stays about where the line was, and looking further made a merge quadratic (2,000
    lines reformatted on both sides took 54 s, the merge driver's git gave up at 60)."""
    at = i * len(candidates) // max(n, 1)
    return candidates[max(0, at - NEAR) : at + NEAR + 1]


#: Most line pairs compared by :class:`difflib.SequenceMatcher` in a stretch that holds no
#: line found once on each side (a run of blank or repeated lines); beyond, the stretch
#: counts as changed.
SMALL = 250_000


def _matches(base: Sequence[str], side: Sequence[str]) -> dict[int, int]:
    """base line index → side line index, for the lines the two have in common (in order).

    A patience diff (the one git offers): equal first and last lines are matched, then the
    longest increasing run of lines found exactly once on each side anchors the rest, and the
    stretches between anchors are matched the same way; a small stretch without such a line
    goes to :class:`difflib.SequenceMatcher`. difflib alone, over the whole file, spent 15 s
    on a 20,000-line memory.md of sections split by blank lines, for one line added on each
    side (``tests/test_sync_attack.py``): a line repeated thousands of times made it
    quadratic."""
    out: dict[int, int] = {}
    stack = [(0, len(base), 0, len(side))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        while alo < ahi and blo < bhi and base[alo] == side[blo]:
            out[alo] = blo
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and base[ahi - 1] == side[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
            out[ahi] = bhi
        if alo >= ahi or blo >= bhi:
            continue
        anchors = _unique_run(base, side, alo, ahi, blo, bhi)
        if anchors:
            pa, pb = alo, blo
            for i, j in anchors:
                out[i] = j
                stack.append((pa, i, pb, j))
                pa, pb = i + 1, j + 1
            stack.append((pa, ahi, pb, bhi))
        elif (ahi - alo) * (bhi - blo) <= SMALL:
            sm = SequenceMatcher(None, base[alo:ahi], side[blo:bhi], autojunk=False)
            for i, j, n in sm.get_matching_blocks():
                for k in range(n):
                    out[alo + i + k] = blo + j + k
    return out


_HEADING = re.compile(r"\s{0,3}#{1,6}\s")


def _unique_run(
    base: Sequence[str], side: Sequence[str], alo: int, ahi: int, blo: int, bhi: int
) -> list[tuple[int, int]]:
    """The longest run of ``(i, j)``, increasing in both, of the lines found exactly once in
    ``base[alo:ahi]`` and once in ``side[blo:bhi]`` (patience sorting, O(n log n))."""
    in_a = Counter(base[alo:ahi])
    in_b = Counter(side[blo:bhi])
    where = {side[j]: j for j in range(blo, bhi) if in_b[side[j]] == 1}
    pairs = [
        (i, where[base[i]]) for i in range(alo, ahi) if in_a[base[i]] == 1 and base[i] in where
    ]
    tops: list[int] = []  # the smallest last j of a run of each length
    ends: list[int] = []  # the pair index that run ends with
    back: list[int] = []
    for k, (_i, j) in enumerate(pairs):
        at = bisect.bisect_left(tops, j)
        back.append(ends[at - 1] if at else -1)
        if at == len(tops):
            tops.append(j)
            ends.append(k)
        else:
            tops[at], ends[at] = j, k
    run: list[tuple[int, int]] = []
    k = ends[-1] if ends else -1
    while k >= 0:
        run.append(pairs[k])
        k = back[k]
    return run[::-1]


def _union(base: Sequence[str], ours: Sequence[str], theirs: Sequence[str]) -> list[str]:
    """Both sides' changes of one region: a common line stays only if both kept it; every
    line either side added is kept once, ours first, then theirs in their order."""
    common = set(base)
    kept_ours, kept_theirs = set(ours), set(theirs)
    out: list[str] = []
    seen: set[str] = set()
    for line in (*ours, *theirs):
        if line in seen:
            continue
        if line in common and not (line in kept_ours and line in kept_theirs):
            continue  # taken out on one side, left alone on the other: out
        seen.add(line)
        out.append(line)
    return out


def merge_lines(base: Sequence[str], ours: Sequence[str], theirs: Sequence[str]) -> Merged:
    """Three-way merge of line lists (the diff3 walk of Khanna, Kunal and Pierce, 2007): runs of
    lines all three share are stable; between them, a region changed on one side only takes
    that side, one changed alike on both takes it once, and one changed differently on both is
    united (:func:`_union`) and recorded as an :class:`Overlap`; a talos line one side took
    out stays out wherever the other moved it (:func:`_no_moved_back`).

    Args:
        base: the common ancestor's lines; ours, theirs: the two sides' lines.

    Returns:
        :class:`Merged`. No line either side added is ever dropped.
    """
    ma, mb = _matches(base, ours), _matches(base, theirs)
    out: list[str] = []
    overlaps: list[Overlap] = []
    kept: list[Overlap] = []
    io = ia = ib = 0
    n = len(base)
    while True:
        if io < n and ma.get(io) == ia and mb.get(io) == ib:
            out.append(base[io])  # stable: unchanged on both sides
            io, ia, ib = io + 1, ia + 1, ib + 1
            continue
        k = io
        while k < n and not (ma.get(k, -1) >= ia and mb.get(k, -1) >= ib):
            k += 1
        ja, jb = (ma[k], mb[k]) if k < n else (len(ours), len(theirs))
        o, a, b = base[io:k], ours[ia:ja], theirs[ib:jb]
        if a == o:
            out.extend(b)
        elif b == o or a == b:
            out.extend(a)
        else:
            if not o and any(map(_HEADING.match, a)) and not any(map(_HEADING.match, b)):
                out.extend(_union(o, b, a))  # our new heading must not label their lines
            else:
                out.extend(_union(o, a, b))
            common = set(o)
            new_a = [(x, _record(x)) for x in a if x not in common]
            new_b = [(x, _record(x)) for x in b if x not in common]
            for i, line in enumerate(o):  # a line neither side kept as it was
                if line in a or line in b:
                    continue
                here = _edit_of(line, _near(new_a, i, len(o)))
                there = _edit_of(line, _near(new_b, i, len(o)))
                if here is not None and there is not None and here != there:
                    overlaps.append(Overlap(line, here, there))  # edited on both, differently
                elif (here is None) != (there is None):  # edited on one side, deleted on the other
                    kept.append(Overlap(line, here or "", there or ""))
        if k >= n:
            break
        io, ia, ib = k, ja, jb
    return Merged(_no_moved_back(base, ours, theirs, out), overlaps, kept)


def _no_moved_back(
    base: Sequence[str], ours: Sequence[str], theirs: Sequence[str], out: list[str]
) -> list[str]:
    """``out`` without the talos lines (an ``id=`` in their tag) that one side took out while
    the other moved them, and with each other talos line once. A move reads as a line taken
    out here and added there, so a value superseded or forgotten on one device came back
    where a person had moved it on the other (``tests/test_sync_attack.py``). A person's own
    line keeps git's reading: nothing of it is lost."""
    here, there = set(ours), set(theirs)
    gone = {x for x in set(base) - (here & there) if _record(x)}
    kept: list[str] = []
    seen: set[str] = set()
    for line in out:
        if line in gone or (line in seen and _record(line)):
            continue
        seen.add(line)
        kept.append(line)
    return kept


def _lines(data: bytes) -> tuple[list[str], bool]:
    """A file's lines (UTF-8, undecodable bytes kept as they are) without their ending, and
    whether most of them ended in CRLF. A missing final newline is read as if it were there,
    so it is no change."""
    text = data.decode("utf-8", errors="surrogateescape")
    if text.endswith("\n"):
        text = text[:-1]
    lines = text.split("\n") if text else []
    crlf = sum(1 for line in lines if line.endswith("\r"))
    return [line.removesuffix("\r") for line in lines], crlf * 2 > len(lines)


def merge_text(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, Merged]:
    """:func:`merge_lines` of three versions of a file; returns the merged bytes (ending in a
    newline unless empty) and the :class:`Merged` detail.

    Lines are compared without their CR: an editor that saved the file with CRLF on one
    device changed no line (every line looked new, and a line forgotten on the other device
    came back: ``tests/test_sync_attack.py``). The merged file ends its lines as the side that
    changed the ending does (ours when both did), else as the common version."""
    (o, o_crlf), (a, a_crlf), (b, b_crlf) = _lines(base), _lines(ours), _lines(theirs)
    crlf = a_crlf if a_crlf != o_crlf or not base else b_crlf if b_crlf != o_crlf else o_crlf
    merged = merge_lines(o, a, b)
    end = "\r\n" if crlf else "\n"
    text = "".join(line + end for line in merged.lines)
    return text.encode("utf-8", "surrogateescape"), merged


#: The environment variable by which ``talos sync`` tells its merge driver which device syncs.
SYNC_DEVICE = "TALOS_SYNC_DEVICE"


def _description(ours: str, theirs: str, device: str) -> int:
    """Merge a ``device.json``: this side's when it describes the device that syncs (or no
    device is named: a person's ``git merge``), else the other side's (a name this home used
    before it got its own, ``tests/test_sync_doctor.py``)."""
    syncing = os.environ.get(SYNC_DEVICE)
    if syncing is None or syncing == device:
        return 0
    try:
        Path(ours).write_bytes(Path(theirs).read_bytes())
    except OSError:
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """git's merge driver: ``BASE OURS THEIRS [PATH]``; the result replaces OURS.

    Returns:
        0 when merged (both versions of a line changed on both sides are kept: ``talos sync``
        reports them), 1 when a file cannot be read or written (git then marks a conflict).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3:
        print("usage: python -m talos.sync.merge BASE OURS THEIRS [PATH]", file=sys.stderr)
        return 2
    if len(args) > 3 and Path(args[3]).name == "device.json":
        return _description(args[1], args[2], Path(args[3]).parent.name)
    try:
        base, ours, theirs = (Path(p).read_bytes() for p in args[:3])
        data, _ = merge_text(base, ours, theirs)
        Path(args[1]).write_bytes(data)
    except OSError as e:
        print(f"talos: cannot merge {args[3] if len(args) > 3 else args[1]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
