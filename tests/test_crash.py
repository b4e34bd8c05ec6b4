"""Issue 3 acceptance 9: a write killed at any moment loses nothing (design §7.5, §7.6).

A child process writes in a tight loop — remember with supersede, remember with a ref, revoke,
restore — and is SIGKILLed after a random short delay, 50 times. After every kill: memory.md
parses, every line the person wrote is still there byte for byte (a non-UTF-8 one included),
and once the interrupted transaction is settled — by ``talos.writer.audit.recover`` or simply by the
next write — ``talos.writer.audit.verify`` finds the audit log consistent with the file.

The child is forked from the test process (talos already imported), so 50 kills take seconds.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest
from helpers import audit_log

from talos import Memory
from talos.errors import InputError
from talos.home import resolve_paths
from talos.sources.facts import parse_fact_line
from talos.writer import audit
from talos.writer.edits import memory_lock

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or not hasattr(os, "fork"), reason="needs fork and SIGKILL"
)

KILLS = 50

HAND = [
    b"# my notes",
    b"- i prefer tabs over spaces",
    b"- not utf-8 \xff\xfe but mine",
    b"- the staging db is called pelican",
    b"- windows line ending here\r",
    b"- kettle descaling every two weeks",
]


def _writer_loop(home: Path, seed: int) -> None:
    """The child: write forever (until killed). Every write path of writer.py is exercised."""
    rng = random.Random(seed)
    mem = Memory(home, index=False)
    for i in range(10**9):
        op = rng.random()
        if op < 0.5:
            mem.remember(f"build cache size = {seed}-{i} gigabytes", key=f"cache.k{i % 3}")
        elif op < 0.8:
            mem.remember(f"note {seed}-{i} from a message", source="tool", ref=f"msg:{i % 4}")
        elif op < 0.9:
            with contextlib.suppress(InputError):  # nothing carries that ref (any more)
                mem.revoke(f"msg:{rng.randrange(4)}")
        else:
            gone = [e["id"] for e in mem.history() if e.get("op") in ("supersede", "revoke")]
            if gone:
                with contextlib.suppress(InputError):  # already restored: keep writing
                    mem.restore(rng.choice(gone))


def _kill_one(home: Path, seed: int, delay: float) -> None:
    pid = os.fork()
    if pid == 0:  # child
        try:
            _writer_loop(home, seed)
        finally:
            os._exit(0)
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def _check_file(memory_file: Path) -> list[bytes]:
    """memory.md parses and holds every hand-written line, exactly once, in order."""
    lines = memory_file.read_bytes().split(b"\n")
    assert [ln for ln in lines if ln in HAND] == HAND
    for ln in lines:
        if ln in HAND or not ln:
            continue
        text = ln.decode("utf-8")  # everything talos wrote is UTF-8 ...
        parsed = parse_fact_line(text)
        assert parsed is not None and parsed.fields.get("id"), text  # ... and a tagged record
    return lines


def test_sigkill_during_writes_50_times(make_home) -> None:
    """§7.5/§7.6: 50 SIGKILLs at random moments of a writing process; after each one the
    file parses, no hand-written line is lost, and after recovery the audit log is consistent
    with memory.md (``verify`` returns [])."""
    home = make_home(memory=b"\n".join(HAND) + b"\n")
    paths = resolve_paths(home)
    rng = random.Random(9)
    settled = 0
    start = time.monotonic()
    before = set(_check_file(paths.memory_file))
    for round_no in range(KILLS):
        _kill_one(home, seed=round_no, delay=rng.uniform(0.02, 0.12))
        _check_file(paths.memory_file)
        if round_no % 2 == 0:
            with memory_lock(paths):
                settled += audit.recover(paths.audit_file, paths.memory_file)
        else:  # any next write settles it too
            Memory(home, index=False).remember(f"after kill {round_no} all is well", key="probe")
        assert audit.verify(paths.audit_file, paths.memory_file) == []
        now = set(_check_file(paths.memory_file))
        done = audit.settled(paths.audit_file)
        added = {e["after"].encode() for e in done if e.get("after")}
        removed = {e["before"].encode() for e in done if e.get("before")}
        # every line talos wrote is accounted for by a committed entry ...
        assert not {ln for ln in now if ln and ln not in HAND} - added
        # ... and every line that vanished since the last check can be restored from the log
        assert not {ln for ln in before - now if ln} - removed
        before = now
    assert time.monotonic() - start < 60
    # The kills really landed inside transactions (prepared, not yet committed) sometimes.
    assert settled >= 1
    leftovers = sorted(p.name for p in home.iterdir() if p.name.endswith(".tmp"))
    assert leftovers == []


def test_torn_audit_line_does_not_swallow_the_next_entry(make_home) -> None:
    """§7.6: a writer killed inside its audit append leaves a torn last line (no newline).
    The next write must start on a fresh line: before the fix its first entry — here the
    ``supersede`` entry holding the removed line — was glued onto the fragment, unreadable,
    and the superseded record could never be restored."""
    home = make_home()
    mem = Memory(home, index=False)
    first = mem.remember("build cache size = 10 gigabytes", key="cache.size")
    with audit_log(home).open("ab") as f:
        f.write(b'{"t": 1, "txn": "torn", "op": "remem')  # what a kill mid-append leaves
    second = mem.remember("build cache size = 20 gigabytes", key="cache.size")
    assert second.superseded == [first.id]
    assert [e["op"] for e in mem.history(first.id)] == ["remember", "supersede"]
    assert mem.restore(first.id) == first.line
    assert audit.verify(mem.paths.audit_file, mem.paths.memory_file) == []
