#!/usr/bin/env python3
"""Start-up cost of a ``talos`` process: whole-process wall time and peak memory of
``talos recall`` against ``bench/fts5_recall.py`` (a 20-line SQLite FTS5 script).

An agent or a person that runs ``talos recall`` (no resident hook server) pays for the
interpreter and every import before a word is answered; on a small home that is most of the
time. Each side runs as a fresh process, the way a shell runs it: ``python -m talos recall
QUERY --home HOME`` with this checkout on ``PYTHONPATH`` (and, with ``--before REV``, the same
command on a ``git archive`` of REV, for a before/after table from one run on one machine),
``python3 bench/fts5_recall.py HOME QUERY``, and ``python -c pass`` for scale. The sides take
turns on every run (pass, FTS5, talos, before, pass, ...) so machine noise hits all of them;
each process's wall time is taken around ``subprocess`` and its peak RSS (max resident set)
by ``/usr/bin/time``.
Numbers are medians over ``--runs`` runs; the ratios are talos's median over FTS5's.

Two homes: ``empty`` (an empty memory.md, nothing else) and the ``make_home.py`` home of
``--sessions`` sessions (default 3,000). Each talos side gets its own copy of a home (the
index's cached graph belongs to the code that built it). The indexes are built once, untimed
(``talos index``; ``fts5_recall.py --build``), the first pass of queries is untimed, and
bytecode is compiled as a pip install does (``compileall``; this environment may set
``PYTHONDONTWRITEBYTECODE``).

Usage:
    python3 bench/startup.py --before main                 # before/after, ~1 min on 2 cores
    python3 bench/startup.py --runs 20 --json startup.json
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FTS = HERE / "fts5_recall.py"
TIME = "/usr/bin/time"
#: Queries that recall rows on the make_home.py home (a recall that finds nothing skips the
#: block), English and Chinese, in turn.
QUERIES = [
    "camping trip with family in the mountains",
    "周末和朋友去爬山",
    "what did Caroline say about the adoption agency",
    "I went hiking with my dog last weekend",
]


def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Run ``cmd`` to its end: (wall seconds, peak RSS in MB). Raises on a non-zero exit.
    :func:`run_cpu` without the CPU time."""
    wall, mb, _cpu = run_cpu(cmd, env)
    return wall, mb


def run_cpu(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Run ``cmd`` to its end: (wall seconds, peak RSS in MB, CPU seconds). Raises on a
    non-zero exit.

    The peak is read by ``/usr/bin/time -f %M`` when it exists: a child forked from this
    process counts this process's pages in its own peak (``os.wait4`` said 20 MB for
    ``python -c pass`` once the harness had grown to 20 MB). Without it, ``os.wait4``.
    CPU is user + system time from ``os.wait4`` (microseconds; ``%U``/``%S`` have 10 ms
    steps): on Linux it holds the reaped children of the child too, so ``cmd``'s own time
    plus the ~1 ms of ``/usr/bin/time`` around it."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        timer = [TIME, "-f", "%M", "-o", rss.name] if os.path.exists(TIME) else []
        t = time.perf_counter()
        proc = subprocess.Popen(
            [*timer, *cmd],
            env=env,
            cwd=tempfile.gettempdir(),  # not a checkout: ``-m`` puts the cwd first on sys.path
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert proc.stderr is not None
        errors = proc.stderr.read()
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[:4]} exited {proc.returncode}: {errors[-400:]!r}")
        kb = int(rss.read().split()[-1]) if timer else usage.ru_maxrss  # Linux: kilobytes
    return wall, kb / 1024, usage.ru_utime + usage.ru_stime


def source_tree(rev: str, cache: Path) -> Path:
    """``talos/`` of git revision ``rev`` extracted under ``cache`` (once), compiled."""
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", rev],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    out = cache / f"src-{sha}"
    if not (out / "talos" / "__init__.py").exists():
        out.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", sha, "talos"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    compileall.compile_dir(str(out / "talos"), quiet=1)
    return out


def env_for(src: Path) -> dict[str, str]:
    """The environment that makes ``python -m talos`` import talos from ``src``."""
    env = {k: v for k, v in os.environ.items() if k not in ("TALOS_HOME", "TALOS_SCOPE")}
    env["PYTHONPATH"] = str(src)
    return env


def homes(data: Path, cache: Path, sessions: int) -> dict[str, Path]:
    """The empty home and the ``make_home.py`` home (made once under ``cache``)."""
    empty = cache / "home-empty"
    empty.mkdir(parents=True, exist_ok=True)
    (empty / "memory.md").touch()
    big = cache / f"home-{sessions}"
    if not (big / "memory.md").exists():
        subprocess.run(
            [sys.executable, str(data / "make_home.py"), str(big), "--sessions", str(sessions)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return {"empty": empty, f"{sessions} sessions": big}


def copy_for(home: Path, side: str) -> Path:
    """A copy of ``home`` for one side, without talos's state: the index keeps a fingerprint
    of the code that built its cached graph, so two checkouts taking turns on one home rebuilt
    it on every run (1.4 s instead of 0.4 s a recall of the 3,000-session home, both sides)."""
    out = home.with_name(f"{home.name}@{side.replace(' ', '-').replace('/', '-')}")
    shutil.rmtree(out, ignore_errors=True)
    state = shutil.ignore_patterns("index.db*", "usage.db*", "recall_trace.jsonl", "fts5.db")
    shutil.copytree(home, out, ignore=state)
    return out


def measure(home: Path, sides: dict[str, dict[str, str]], runs: int) -> dict[str, dict]:
    """Medians of every side on ``home`` (each talos side on its own copy, indexes built
    first, one warm pass untimed)."""
    py = sys.executable
    homes = {name: copy_for(home, name) for name in sides}
    for name, env in sides.items():
        index = [py, "-m", "talos", "index", "--home", str(homes[name])]
        subprocess.run(index, env=env, cwd=home, check=True, capture_output=True)
    if not (home / "fts5.db").exists():
        subprocess.run([py, str(FTS), str(home), "--build"], check=True)
    cmds: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "python -c pass": ([py, "-c", "pass"], None)
    }
    times: dict[str, list[tuple[float, float]]] = {"python -c pass": [], "fts5": []}
    for i in range(runs + 1):  # run 0 warms the page cache and the cached graph, untimed
        q = QUERIES[i % len(QUERIES)]
        cmds["fts5"] = ([py, str(FTS), str(home), q], None)
        for name, env in sides.items():
            cmds[name] = ([py, "-m", "talos", "recall", q, "--home", str(homes[name])], env)
        for name, (cmd, env) in cmds.items():
            result = run(cmd, env)
            if i:
                times.setdefault(name, []).append(result)
    fts = median(t for t, _m in times["fts5"])
    fts_mb = median(m for _t, m in times["fts5"])
    out = {}
    for name, rows in times.items():
        wall, mb = median(t for t, _m in rows), median(m for _t, m in rows)
        out[name] = {
            "wall_ms": round(wall * 1000, 1),
            "rss_mb": round(mb, 1),
            "wall_over_fts5": round(wall / fts, 1),
            "rss_over_fts5": round(mb / fts_mb, 1),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent.parent / "shared" / "bench",
                    help="folder of make_home.py (default: ../../shared/bench)")  # fmt: skip
    ap.add_argument("--sessions", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=10, help="timed runs of each side per home")
    ap.add_argument("--before", metavar="REV", help="also time talos at git revision REV")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "talos-startup")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    if not (a.data / "make_home.py").exists():
        sys.exit(f"{a.data}/make_home.py not found: pass --data DIR (the shared bench folder)")
    a.cache.mkdir(parents=True, exist_ok=True)
    compileall.compile_dir(str(ROOT / "talos"), quiet=1)
    sides = {"talos": env_for(ROOT)}
    if a.before:
        sides[f"talos@{a.before}"] = env_for(source_tree(a.before, a.cache))
    results = {}
    for label, home in homes(a.data, a.cache, a.sessions).items():
        results[label] = r = measure(home, sides, a.runs)
        print(f"{label} home, median of {a.runs} runs (ratio: over fts5_recall.py)")
        for name, v in r.items():
            print(
                f"  {name:<24} {v['wall_ms']:>7.1f} ms  x{v['wall_over_fts5']:<5} "
                f"{v['rss_mb']:>6.1f} MB  x{v['rss_over_fts5']}",
                flush=True,
            )
    if a.json:
        a.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
