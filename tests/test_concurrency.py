"""Issue 2 acceptance 5: usage counts are safe under concurrency and cheap (design §6.3).

Four processes recall 50 times each on one home; afterwards every fact and skill has been seen
exactly 200 times, hits add up, and the trace holds exactly 200 well-formed lines.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from talos import Memory
from talos.usage.counts import today

PROCS, ROUNDS = 4, 50

MEMORY = (
    "- the staging db is called pelican <!-- reflect 2026-01-01 -->\n"
    "- the ci runner uses ubuntu 24.04 <!-- tool 2026-01-02 ref=run-7 -->\n"
    "- carol brews green tea every morning\n"
    "- nothing ever asks about this zebra line\n"
)
SKILL = "---\nname: deploy\ndescription: deploy the pelican service to staging\n---\nsteps\n"

WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from talos import Memory

    home, go, rounds = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    mem = Memory(home, model="classic")
    mem.graph()  # load before the start signal, so the recalls really overlap
    deadline = time.time() + 30
    while not go.exists() and time.time() < deadline:
        time.sleep(0.005)
    for i in range(rounds):
        mem.recall("staging pelican" if i % 2 == 0 else "ci runner ubuntu")
    """
)


def test_four_processes_recalling_lose_no_update(make_home, tmp_path: Path) -> None:
    """§6.3: 4 processes × 50 recalls → every fact's and skill's ``seen`` is 200, hits are
    exact, and the trace has exactly 200 lines, each one valid JSON of the one shape."""
    home = make_home(memory=MEMORY, skills={"deploy.md": SKILL})
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(home), str(go), str(ROUNDS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCS)
    ]
    time.sleep(0.3)
    go.touch()
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert err == ""  # not one warning: nothing failed and was papered over

    usage = {k: tuple(v) for k, v in Memory(home, model="classic").usage().items()}
    n, half = PROCS * ROUNDS, PROCS * ROUNDS // 2
    assert usage == {
        "fact:the staging db is called pelican": (n, half, today()),
        "fact:the ci runner uses ubuntu 24.04": (n, half, today()),
        "fact:carol brews green tea every morning": (n, 0, 0),
        "fact:nothing ever asks about this zebra line": (n, 0, 0),
        "skill:deploy — deploy the pelican service to staging": (n, half, today()),
    }
    lines = (home / ".talos" / "recall_trace.jsonl").read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    records = [json.loads(line) for line in lines[:-1]]
    assert len(records) == n
    assert all(sorted(r) == ["picked", "q", "scopes", "t"] for r in records)
    picked = sorted(json.dumps(r["picked"], sort_keys=True) for r in records)
    assert len(set(picked)) == 2
    assert picked.count(picked[0]) == picked.count(picked[-1]) == half


def test_recall_writes_do_not_grow_with_the_number_of_memories(make_home) -> None:
    """§6.3: writing usage must not cost O(number of memories) per recall: with 3000 facts, a
    recall writes the recall counter and one row per picked memory; a new fact costs one row."""
    # Facts share at most one keyword ("about"), so they are not linked: a query hits one.
    lines = [f"- note{i} about topic{i} <!-- reflect 2026-01-01 -->" for i in range(3000)]
    home = make_home(memory="\n".join(lines) + "\n")
    mem = Memory(home, model="classic")
    mem.recall("topic7")  # first recall: every memory becomes present once
    # Trace the usage store's own (persistent) connection: what writing usage costs.
    statements: list[str] = []
    mem.usage_store._connect().set_trace_callback(statements.append)

    def writes() -> list[str]:
        return [s for s in statements if s.split()[0].upper() in ("INSERT", "UPDATE", "DELETE")]

    log = mem.usage_store.log  # and one line of this device's usage log, of what changed
    size = log.stat().st_size
    mem.recall("topic7")
    assert len(writes()) == 3  # the recall counter, one hit, how far the log is
    assert log.stat().st_size - size < 100
    statements.clear()
    mem.recall("nothing matches this")
    assert len(writes()) == 2  # the recall counter, how far the log is
    statements.clear()
    with (home / "memory.md").open("a") as f:
        f.write("- a brand new fact about topic9999 <!-- reflect 2026-01-01 -->\n")
    mem.recall("topic9999")
    assert len(writes()) <= 5  # the new row, its fingerprint, the counter, one hit, the log
    mem.usage_store._connect().set_trace_callback(None)
    usage = mem.usage()
    assert usage["fact:note7 about topic7"] == (4, 2, today())
    assert usage["fact:note8 about topic8"] == (4, 0, 0)
    assert usage["fact:a brand new fact about topic9999"] == (1, 1, today())
