"""Kill ``talos sync`` at random points and check the home and the repository survive
(design §12.2; the acceptance's 100 kills).

Two clones of a bare repository write facts (talos remember) and a person's line each round;
one of them runs ``talos sync`` in its own process group, which is SIGKILLed after a random
delay within a sync's usual duration (measured first). After every kill: ``talos recall``
must answer (exit 0) and ``git status`` must run. At the end both homes sync until quiet, and
every fact and person's line written must be in both memory.md files, identical.

    python3 bench/sync_kills.py --kills 100
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _run(
    *cmd: str, cwd: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, check=check)


def _talos(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return _run(sys.executable, "-m", "talos", *args, check=check)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kills", type=int, default=100, help="how many syncs to kill (default 100)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="talos-sync-kills-"))
    remote = tmp / "remote.git"
    _run("git", "init", "-q", "--bare", "-b", "main", str(remote))
    homes = []
    for name in ("a", "b"):
        home = tmp / name
        _run("git", "clone", "-q", str(remote), str(home))
        _run("git", "config", "user.email", f"{name}@example.invalid", cwd=home)
        _run("git", "config", "user.name", name, cwd=home)
        _talos("init", "--git", "--home", str(home))
        homes.append(home)
    took = []
    for home in homes * 2:
        t = time.perf_counter()
        _talos("sync", "--home", str(home))
        took.append(time.perf_counter() - t)
    span = statistics.median(took)
    print(f"a sync takes {span:.2f} s (median of {len(took)}); kills land in [0, {span:.2f}] s")
    written: list[str] = []
    failures: list[str] = []
    for i in range(args.kills):
        for home in homes:
            fact = f"fact {i} written on {home.name} about the release checklist"
            _talos("remember", fact, "--home", str(home))
            written.append(fact)
            line = f"- a person's note {i} on {home.name} about the printer"
            with (home / "memory.md").open("a", encoding="utf-8") as f:
                f.write(line + "\n")
            written.append(line)
        home = homes[i % 2]
        proc = subprocess.Popen(
            [sys.executable, "-m", "talos", "sync", "--home", str(home)],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0, span))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        recall = _talos("recall", "release checklist", "--home", str(home), check=False)
        status = _run("git", "status", "--porcelain", cwd=home, check=False)
        if recall.returncode != 0 or status.returncode != 0:
            failures.append(
                f"kill {i}: recall {recall.returncode} {recall.stderr[-200:]!r} / "
                f"git {status.stderr[-200:]!r}"
            )
    for _ in range(3):
        for home in homes:
            done = _talos("sync", "--home", str(home), check=False)
            if done.returncode != 0:
                failures.append(
                    f"final sync of {home.name}: {done.returncode} {done.stderr[-300:]!r}"
                )
    texts = [(h / "memory.md").read_text("utf-8") for h in homes]
    lost = [w for w in written if w not in texts[0] or w not in texts[1]]
    fsck = [_run("git", "fsck", "--no-progress", cwd=h, check=False).returncode for h in homes]
    print(
        f"{args.kills} kills: {len(failures)} failures; "
        f"memory.md identical: {texts[0] == texts[1]}; "
        f"lines written {len(written)}, lost {len(lost)}; git fsck exit codes {fsck}"
    )
    for f in failures[:10]:
        print("  ", f)
    for w in lost[:10]:
        print("   lost:", w)
    ok = not failures and not lost and texts[0] == texts[1] and fsck == [0, 0]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
