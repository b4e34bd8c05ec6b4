"""Issue 4, "Reliability" (design §11): the persistent index under concurrent edits, kills and
deletion, and a fresh home opened by several processes at once.

1. 4 processes recall while a 5th edits memory.md (atomic rewrite, in-place rewrite, append)
   and adds/removes session files: no error, no stray stderr, no lost usage count, every
   recall consistent with some version of the files, and the last look of every process
   matches the final files.
2. SIGKILL during ``talos index --rebuild`` at random moments: the next call gives exactly the
   rows of the non-indexed path and ``talos index --check`` finds nothing.
3. Deleting ``.talos/index.db`` (and -wal/-shm) between recalls loses only speed.
4. Processes opening a brand-new home at once never delete each other's half-made index.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from helpers import audit_log
from helpers import session_line as _session
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.home import resolve_paths
from talos.index import Index

# -- helpers ---------------------------------------------------------------------------------


def _rows(mem: Memory, query: str) -> list[tuple[object, ...]]:
    """Explain rows with their provenance, for exact comparison of the two paths."""
    return [(r.score, r.kind, r.text, r.node.path, r.node.line) for r in mem.explain(query, k=50)]


def _index_files(home: Path) -> list[Path]:
    db = home / ".talos" / "index.db"
    return [db, Path(f"{db}-wal"), Path(f"{db}-shm")]


# -- 1. four recallers and an editor ---------------------------------------------------------

STABLE = [
    "the staging db is called pelican",
    "the ci runner uses ubuntu 24.04",
    "carol brews green tea every morning",
    "the garden compost bin is behind the shed",
]
# Slot A is rewritten atomically (temp file + rename): any text of this list.
SLOT_A = [f"the deploy region for pelican is {r}" for r in ("alpha", "bravo", "gamma", "delta")]
# Slot B is rewritten in place (same length, one byte changes with one pwrite): never torn.
SLOT_B = [f"the staging port is 543{d}" for d in range(10)]
B_DIGIT = len("- the staging port is 543")  # byte offset of the digit: slot B is line 1
APPENDED = [f"appended note {i} about the garden shed" for i in range(40)]
STABLE_SESSIONS = {"2026-01-01.jsonl": "how do I deploy pelican to staging"}
VARIED_SESSIONS = [f"session {i} asked about the garden compost" for i in range(30)]
QUERIES = [
    "staging pelican",
    "deploy region",
    "staging port",
    "garden compost shed",
    "ci runner ubuntu",
    "green tea",
    "appended note garden",
    "deploy pelican staging port region",
]
SKILL = "---\nname: deploy\ndescription: deploy the pelican service to staging\n---\nsteps\n"
RECALLERS, ROUNDS = 4, 30

RECALLER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from talos import Memory

    home, gate, me, rounds = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    queries = json.loads(sys.argv[5])
    mem = Memory(home, model="classic")
    mem.graph()
    deadline = time.time() + 30
    while not (gate / "go").exists() and time.time() < deadline:
        time.sleep(0.002)
    out = []
    for i in range(rounds):
        r = mem.recall(queries[(i + int(me)) % len(queries)], k=8)
        out.append([[row.kind, row.text] for row in r.picked])
        time.sleep(0.01)
    (gate / f"done{me}").touch()
    while not (gate / "edited").exists() and time.time() < deadline:
        time.sleep(0.005)
    last = {q: [[row.kind, row.text] for row in mem.explain(q, k=50)] for q in queries}
    print(json.dumps({"picked": out, "last": last}))
    """
)

EDITOR = textwrap.dedent(
    """
    import json, os, random, sys, time
    from pathlib import Path

    home, gate, spec = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
    rnd = random.Random(4)
    memory, sessions = home / "memory.md", home / ".talos" / "sessions"
    b, a, appended = spec["b"][0], spec["a"][0], []

    def lines():
        return [f"- {b}", *(f"- {t}" for t in spec["stable"]), f"- {a}",
                *(f"- {t}" for t in appended)]

    def rewrite():  # atomic: a reader sees the old file or the new one
        tmp = home / "memory.md.tmp"
        tmp.write_text("\\n".join(lines()) + "\\n", encoding="utf-8")
        os.replace(tmp, memory)

    live, n = [], 0
    deadline = time.time() + 25
    while not (gate / "go").exists() and time.time() < deadline:
        time.sleep(0.002)
    while time.time() < deadline and not all(
        (gate / f"done{i}").exists() for i in range(spec["recallers"])
    ):
        n += 1
        op = n % 5
        if op == 0:
            a = rnd.choice(spec["a"])
            if len(appended) > 6:
                del appended[:3]  # an atomic rewrite also drops old appended lines
            rewrite()
        elif op == 1:  # in place, one byte: same size, new mtime
            b = rnd.choice(spec["b"])
            fd = os.open(memory, os.O_WRONLY)
            os.pwrite(fd, b[-1].encode(), spec["b_digit"])
            os.close(fd)
        elif op == 2:  # append one line with one write
            t = spec["appended"][n % len(spec["appended"])]
            if t not in appended:
                appended.append(t)
                fd = os.open(memory, os.O_WRONLY | os.O_APPEND)
                os.write(fd, f"- {t}\\n".encode())
                os.close(fd)
        elif op == 3:  # a new session, written aside and renamed in
            i = n % len(spec["sessions"])
            name = f"2026-02-{i:02d}.jsonl"
            if name not in live:
                tmp = sessions / (name + ".part")
                tmp.write_text(json.dumps({"role": "user", "content": spec["sessions"][i]}) + "\\n")
                os.replace(tmp, sessions / name)
                live.append(name)
        elif live:
            (sessions / live.pop(rnd.randrange(len(live)))).unlink()
        time.sleep(0.003)
    rewrite()  # the final version: every appended line there is whole
    (gate / "edited").touch()
    print(json.dumps({"edits": n, "final_a": a, "final_b": b}))
    """
)


def test_four_recallers_and_an_editor(make_home, tmp_path: Path) -> None:
    """4 processes × 30 recalls while a 5th edits: no stderr, no lost usage count (facts and
    the skill that existed throughout are seen exactly 120 times; each slot's versions add up
    to 120), every recall picks texts of one version per slot, and each process's last look
    equals the non-indexed computation over the final files."""
    memory = "".join(f"- {t}\n" for t in [SLOT_B[0], *STABLE, SLOT_A[0]])
    home = make_home(
        memory=memory,
        skills={"deploy.md": SKILL},
        sessions={k: _session(v) for k, v in STABLE_SESSIONS.items()},
    )
    Memory(home, model="classic").index.refresh()  # the index exists before the race
    gate = tmp_path / "gate"
    gate.mkdir()
    spec = {
        "stable": STABLE,
        "a": SLOT_A,
        "b": SLOT_B,
        "b_digit": B_DIGIT,
        "appended": APPENDED,
        "sessions": VARIED_SESSIONS,
        "recallers": RECALLERS,
    }

    def spawn(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    editor = spawn(EDITOR, str(home), str(gate), json.dumps(spec))
    recallers = [
        spawn(RECALLER, str(home), str(gate), str(i), str(ROUNDS), json.dumps(QUERIES))
        for i in range(RECALLERS)
    ]
    time.sleep(0.5)
    (gate / "go").touch()
    outs = []
    for p in [*recallers, editor]:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert err == ""  # no warning at all: nothing failed and was papered over
        outs.append(json.loads(out))
    *results, edited = outs
    assert edited["edits"] >= 20  # the edits really overlapped the recalls

    facts = set(STABLE) | set(SLOT_A) | set(SLOT_B) | set(APPENDED)
    episodes = set(STABLE_SESSIONS.values()) | set(VARIED_SESSIONS)
    for res in results:
        assert len(res["picked"]) == ROUNDS
        for picked in res["picked"]:
            texts = [t for kind, t in picked if kind == "fact"]
            assert set(texts) <= facts, texts
            assert len(texts) == len(set(texts))
            assert sum(t in SLOT_A for t in texts) <= 1  # one version of slot A at a time
            assert sum(t in SLOT_B for t in texts) <= 1
            assert {t for kind, t in picked if kind == "episode"} <= episodes
            assert {t for kind, t in picked if kind == "skill"} <= {
                "deploy — deploy the pelican service to staging"
            }

    # Every process's last look is the final version of the files, row for row.
    direct = Memory(home, model="classic", index=False)
    want = {q: [[r.kind, r.text] for r in direct.explain(q, k=50)] for q in QUERIES}
    for res in results:
        assert res["last"] == want
    assert ["fact", edited["final_a"]] in want["deploy region"]
    assert ["fact", edited["final_b"]] in want["staging port"]

    n = RECALLERS * ROUNDS
    usage = direct.usage()
    for t in STABLE:
        assert usage[f"fact:{t}"].seen == n
    assert usage["skill:deploy — deploy the pelican service to staging"].seen == n
    # One slot-A line and one slot-B line were in every recall's view: no count lost.
    assert sum(usage[f"fact:{t}"].seen for t in SLOT_A if f"fact:{t}" in usage) == n
    assert sum(usage[f"fact:{t}"].seen for t in SLOT_B if f"fact:{t}" in usage) == n
    assert all(usage[k].seen <= n for k in usage)
    trace = (home / ".talos" / "recall_trace.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(trace) == n


# -- 2. SIGKILL during talos index --rebuild -------------------------------------------------

KILL_QUERIES = ["deploy region", "部署 区域 tea"]
SESSIONS = 800


def _big_home(make_home, sessions: int) -> Path:
    rnd = random.Random(2)
    words = ["deploy", "region", "garden", "compost", "tea", "port", "部署", "区域", "日志"]
    return make_home(
        memory="".join(
            f"- note {i} {' '.join(rnd.choice(words) for _ in range(4))}\n" for i in range(150)
        ),
        sessions={
            f"2026-{i // 28 + 1:02d}-{i % 28 + 1:02d}-{i}.jsonl": _session(
                f"question {i} " + " ".join(rnd.choice(words) for _ in range(5))
            )
            for i in range(sessions)
        },
    )


def test_sigkill_during_rebuild_leaves_a_working_home(make_home) -> None:
    """12 kills of ``talos index --rebuild`` at random moments (before, during and after the
    build): each time the next Memory gives exactly the non-indexed rows, and then
    ``talos index --check`` exits 0 with no problems."""
    home = _big_home(make_home, SESSIONS)
    cmd = [sys.executable, "-m", "talos", "index", "--home", str(home)]
    start = time.perf_counter()
    subprocess.run([*cmd, "--rebuild", "--json"], check=True, capture_output=True)
    took = time.perf_counter() - start
    direct = Memory(home, index=False)
    want = {q: _rows(direct, q) for q in KILL_QUERIES}
    assert len(want["deploy region"]) == 50  # a real ranking to compare
    rnd = random.Random(11)
    for _ in range(12):
        p = subprocess.Popen(
            [*cmd, "--rebuild", "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rnd.uniform(took * 0.5, took * 1.1))
        p.send_signal(signal.SIGKILL)  # mostly during start-up, often in the build
        p.wait()
        with Memory(home) as mem:
            assert {q: _rows(mem, q) for q in KILL_QUERIES} == want
        check = CliRunner().invoke(app, ["index", "--home", str(home), "--check", "--json"])
        assert check.exit_code == 0, check.output
        assert json.loads(check.stdout)["data"]["problems"] == []


def test_sigkill_during_index_rebuild_in_a_child(make_home) -> None:
    """Same as above with ``Index.rebuild()`` in a bare child (no CLI start-up): kills land
    inside the build transaction."""
    home = _big_home(make_home, SESSIONS)
    child = (
        "import sys\nfrom talos.home import resolve_paths\nfrom talos.index import Index\n"
        "idx = Index(resolve_paths(sys.argv[1]))\nprint('go', flush=True)\nidx.rebuild()\n"
    )
    direct = Memory(home, index=False)
    want = {q: _rows(direct, q) for q in KILL_QUERIES}
    rnd = random.Random(12)
    for _ in range(10):
        p = subprocess.Popen(
            [sys.executable, "-c", child, str(home)], stdout=subprocess.PIPE, text=True
        )
        assert p.stdout is not None and p.stdout.readline() == "go\n"
        time.sleep(rnd.uniform(0.0, 0.3))
        p.kill()
        p.wait()
        with Memory(home) as mem:
            assert {q: _rows(mem, q) for q in KILL_QUERIES} == want
        with Index(resolve_paths(home)) as idx:
            assert idx.check() == []


# -- 3. deleting the index files --------------------------------------------------------------


def test_deleting_index_files_between_recalls_loses_only_speed(make_home) -> None:
    """Usage counts, the audit log and the results survive deleting index.db, -wal and -shm
    between recalls, for a long-lived Memory and for a fresh one per call (the CLI's way)."""
    home = make_home(
        memory="".join(f"- {t}\n" for t in [*STABLE, SLOT_A[0]]),
        skills={"deploy.md": SKILL},
        sessions={k: _session(v) for k, v in STABLE_SESSIONS.items()},
    )
    with Memory(home, model="classic") as mem:
        mem.remember("the old kettle is broken", source="reflect")
        assert mem.forget([("fact", "the old kettle is broken")]) == 1
    audit = audit_log(home).read_bytes()
    assert b"the old kettle is broken" in audit
    direct = Memory(home, index=False, model="classic")
    want = {q: _rows(direct, q) for q in QUERIES}
    long_lived = Memory(home, model="classic")
    recalls = 0
    for i, q in enumerate(QUERIES * 2):
        for f in _index_files(home):
            f.unlink(missing_ok=True)
        mem = long_lived if i % 2 else Memory(home, model="classic")
        assert _rows(mem, q) == want[q]
        mem.recall(q)
        recalls += 1
        if mem is not long_lived:  # it made a new index file; the long-lived one may go on
            mem.close()  # with the (unlinked) file it has open: both lose only speed
            assert (home / ".talos" / "index.db").exists()
    long_lived.close()
    assert audit_log(home).read_bytes() == audit
    usage = direct.usage()
    assert {k: usage[k].seen for k in usage} == {
        **{f"fact:{t}": recalls for t in [*STABLE, SLOT_A[0]]},
        "skill:deploy — deploy the pelican service to staging": recalls,
    }
    assert "fact:the old kettle is broken" not in usage
    assert len((home / ".talos" / "recall_trace.jsonl").read_text().splitlines()) == recalls
    for q in QUERIES:
        assert _rows(Memory(home, model="classic"), q) == want[q]


# -- 4. a brand-new home opened by three processes at once -----------------------------------

OPENER = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    from talos import Memory

    me, homes = sys.argv[1], [Path(h) for h in json.loads(sys.argv[2])]
    out = []

    def barrier(home, name):
        (home / f"{name}{me}").touch()
        deadline = time.time() + 20
        while time.time() < deadline and not all(
            (home / f"{name}{i}").exists() for i in range(3)
        ):
            time.sleep(0.0005)

    for home in homes:
        barrier(home, "ready")
        mem = Memory(home / "h", model="classic")
        rows = [[r.kind, r.text] for r in mem.explain("deploy region pelican", k=50)]
        barrier(home, "opened")
        # a connection to an index file another process deleted shows as "(deleted)"
        lost = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:  # the listing's own descriptor, closed by now
                continue
            if "index.db" in target and "(deleted)" in target:
                lost.append(target)
        out.append({"rows": rows, "lost": lost, "again": [
            [r.kind, r.text] for r in mem.explain("deploy region pelican", k=50)]})
        mem.close()
    print(json.dumps(out))
    """
)


def test_fresh_home_opened_by_three_processes_at_once(tmp_path: Path) -> None:
    """20 brand-new homes × 3 processes opening each at the same moment: no warning (a
    half-made index taken for a damaged one), no connection left on a deleted index file,
    the same rows everywhere."""
    homes = []
    for i in range(20):
        h = tmp_path / f"race{i}" / "h"
        (h / ".talos" / "sessions").mkdir(parents=True)
        (h / "memory.md").write_text("".join(f"- {t}\n" for t in [*STABLE, SLOT_A[i % 4]]))
        (h / ".talos" / "sessions" / "a.jsonl").write_text(_session("deploy pelican today"))
        homes.append(h.parent)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, str(i), json.dumps([str(h) for h in homes])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert err == ""
        outs.append(json.loads(out))
    for i, home in enumerate(homes):
        want = [
            [r.kind, r.text]
            for r in Memory(home / "h", index=False, model="classic").explain(
                "deploy region pelican", k=50
            )
        ]
        assert want[0] == ["fact", SLOT_A[i % 4]]
        for out in outs:
            assert out[i] == {"rows": want, "lost": [], "again": want}
        with Index(resolve_paths(home / "h")) as idx:
            assert idx.check() == []
