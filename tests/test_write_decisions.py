"""Issue 12.2: a write decides under the lock, on memory.md as it is then (design §7.4, §7.6).

``talos resolve team.color --keep ID1 & talos resolve team.color --keep ID2`` printed success
twice and left no line of the key (6 times in 6): each process computed its losers from a view
taken before the lock. Here the test process holds the memory lock while real ``talos``
processes compute their view and queue on the lock, so their writes really run on a stale
view, one after the other — the interleaving that lost the key, made certain.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from talos import Memory
from talos.home import resolve_paths
from talos.writer import edits as writer
from talos.writer.edits import memory_lock

RED = "- team color = red <!-- user 2026-01-01 key=team.color -->"
BLUE = "- team color = blue <!-- user 2026-01-02 key=team.color -->"

#: Runs ``talos ARGS`` in a fresh process; touches READY right before it asks for the memory
#: lock (its view is computed by then), so the test knows it is queued behind the lock.
CLI = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from talos.writer import edits as writer
    from talos.cli import app

    ready, args = Path(sys.argv[1]), sys.argv[2:]
    real = writer.memory_lock

    def announced(paths):
        ready.touch()
        return real(paths)

    writer.memory_lock = announced
    app(args, prog_name="talos")
    """
)


def lid(line: str) -> str:
    return "L" + hashlib.sha256(line.encode("utf-8")).hexdigest()[:9]


def _queued(home: Path, tmp_path: Path, *commands: list[str]) -> list[subprocess.CompletedProcess]:
    """Start each ``talos`` command while the test holds the memory lock, wait until every
    one of them is waiting for it, then let them run; return their results."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "200"}
    procs = []
    with memory_lock(resolve_paths(home)):
        for no, args in enumerate(commands):
            ready = tmp_path / f"ready-{no}"
            procs.append(
                (
                    ready,
                    subprocess.Popen(
                        [sys.executable, "-c", CLI, str(ready), *args, "--home", str(home)],
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                        env=env,
                    ),
                )
            )
        deadline = time.monotonic() + 60
        while not all(r.exists() for r, _ in procs):
            assert time.monotonic() < deadline, "a talos process never reached the lock"
            assert all(p.poll() is None for _, p in procs), [p.communicate() for _, p in procs]
            time.sleep(0.01)
    out = []
    for _, p in procs:
        stdout, stderr = p.communicate(timeout=60)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def test_two_resolves_of_one_conflict_keep_one_record(make_home, tmp_path: Path) -> None:
    """Issue 12.2, the failing input: two processes resolve one conflict, each keeping the
    other's loser. Exactly one succeeds; the other says the key changed and writes nothing;
    one record of the key is left, and ``get`` gives its value. (Checked: with the decision
    taken from the stale view again, both succeed and ``get`` says unknown.)"""
    home = make_home(memory=f"- i like tea\n{RED}\n{BLUE}\n")
    first, second = _queued(
        home,
        tmp_path,
        ["resolve", "team.color", "--keep", lid(RED)],
        ["resolve", "team.color", "--keep", lid(BLUE)],
    )
    results = sorted([first, second], key=lambda r: r.returncode)
    ok, refused = results
    assert [ok.returncode, refused.returncode] == [0, 1], [r.stderr for r in results]
    kept = lid(RED) if "kept " + lid(RED) in ok.stderr else lid(BLUE)
    lost = lid(BLUE) if kept == lid(RED) else lid(RED)
    assert ok.stderr == f"team.color: kept {kept}; superseded {lost}\n"
    assert refused.stderr == (
        f"talos resolve: record {lost} of key 'team.color' is not in {home / 'memory.md'} any "
        f"more: another write changed the key since talos looked (ids now: {kept}). Nothing was "
        "changed; see talos conflicts\n"
    )
    left = (home / "memory.md").read_text().splitlines()
    assert left == ["- i like tea", RED if kept == lid(RED) else BLUE]
    decision = Memory(home).get("team.color")
    assert (decision.reason, decision.value) == ("ok", "red" if kept == lid(RED) else "blue")


def test_resolve_after_the_kept_record_was_revoked_changes_nothing(
    make_home, tmp_path: Path, monkeypatch
) -> None:
    """Variant (same class, another writer): while a ``resolve --keep RED`` waits for the lock,
    RED is revoked. The resolve must not go on and remove BLUE — that would leave the key with
    no value, an outcome nobody asked for: it refuses, BLUE stays."""
    red = "- team color = red <!-- user 2026-01-01 key=team.color ref=msg:7 -->"
    home = make_home(memory=f"{red}\n{BLUE}\n")
    paths = resolve_paths(home)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "200"}
    ready = tmp_path / "ready"
    held = memory_lock(paths)
    args = ["resolve", "team.color", "--keep", lid(red), "--home", str(home)]
    with held:
        proc = subprocess.Popen(
            [sys.executable, "-c", CLI, str(ready), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        # The revoke runs in this process, under the lock it already holds.
        monkeypatch.setattr(writer, "memory_lock", lambda _paths: held)
        assert Memory(home, index=False).revoke("msg:7") == [lid(red)]
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert stderr.startswith(f"talos resolve: record {lid(red)} of key 'team.color' is not in ")
    assert "(ids now: " + lid(BLUE) + ")" in stderr
    assert (home / "memory.md").read_text() == f"{BLUE}\n"
    assert Memory(home).get("team.color").value == "blue"
