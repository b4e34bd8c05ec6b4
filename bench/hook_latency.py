#!/usr/bin/env python3
"""Hook latency (issue 16.3): ``talos hook claude-code`` against a 20-line SQLite FTS5 script.

Both run as whole processes, the way an agent runs a hook: a fresh interpreter per prompt.
The hook runs as ``talos hook install claude-code`` writes it for a user (this interpreter,
``-I -m talos hook claude-code``; the event JSON on stdin, as Claude Code sends it) and, in a
second column, through the ``talos`` console script; the baseline is ``python3
bench/fts5_recall.py HOME QUERY``. Each index is built once beforehand (``talos index``;
``fts5_recall.py --build``), bytecode is compiled as a pip install does (``compileall``; this
environment may set ``PYTHONDONTWRITEBYTECODE``), and the hook's resident server is started
and warm before timing, as it is after the first prompt of a session. The sides take turns on
every query (FTS5, hook, script, FTS5, ...), so machine noise hits all; numbers are medians
(p50) and p90 in milliseconds, with ``python -c pass`` (the interpreter alone) for scale.
``talos recall`` (the Typer CLI, no server) is timed alongside with fewer repetitions.

Usage:
    python3 bench/hook_latency.py --data ../shared/bench --sizes 3000 30000
    python3 bench/hook_latency.py --sizes 3000 --reps 5 --json hook.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.scale import QUERIES, make_home, p  # noqa: E402

FTS = HERE / "fts5_recall.py"


def installed_hook(home: Path) -> list[str]:
    """The hook command exactly as ``talos hook install claude-code`` writes it (--user)."""
    import shlex

    from talos.hooks.install import hook_command

    return shlex.split(hook_command("claude-code", project=False, home=str(home)))


def talos_script() -> list[str]:
    """The ``talos`` console script beside this interpreter (what an agent's hook runs)."""
    script = Path(sys.executable).parent / "talos"
    return [str(script)] if script.exists() else [sys.executable, "-m", "talos"]


def timed(cmd: list[str], stdin: bytes = b"") -> tuple[float, bytes]:
    t = time.perf_counter()
    r = subprocess.run(cmd, input=stdin, capture_output=True, check=False)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} exited {r.returncode}: {r.stderr[-400:]!r}")
    return dt, r.stdout


def event(query: str, cwd: Path) -> bytes:
    return json.dumps(
        {
            "session_id": "bench",
            "transcript_path": "/dev/null",
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": query,
        }
    ).encode()


def prepare(home: Path, talos: list[str]) -> None:
    """Build both indexes once, compile bytecode, start the hook server (untimed)."""
    import compileall

    compileall.compile_dir(str(HERE.parent / "talos"), quiet=1)
    subprocess.run([*talos, "index", "--home", str(home)], check=True, capture_output=True)
    if not (home / "fts5.db").exists():
        subprocess.run([sys.executable, str(FTS), str(home), "--build"], check=True)
    hook = [*talos, "hook", "claude-code", "--home", str(home)]
    for _ in range(30):  # the first hooks start the server and may find it warming up
        _dt, out = timed(hook, event(QUERIES[0], home))
        if out:
            break
        time.sleep(1)
    for q in QUERIES:  # one warm pass over the queries, untimed
        timed(hook, event(q, home))
        timed([sys.executable, str(FTS), str(home), q])


def measure(home: Path, reps: int, recall_reps: int) -> dict[str, float]:
    talos = talos_script()
    prepare(home, talos)
    hook = installed_hook(home)
    script = [*talos, "hook", "claude-code", "--home", str(home)]
    fts, hooks, scripts, bare, empty = [], [], [], [], 0
    for _ in range(reps):
        for q in QUERIES:
            bare.append(timed([sys.executable, "-c", "pass"])[0])
            dt, _out = timed([sys.executable, str(FTS), str(home), q])
            fts.append(dt)
            dt, out = timed(hook, event(q, home))
            hooks.append(dt)
            empty += not out
            dt, out = timed(script, event(q, home))
            scripts.append(dt)
            empty += not out
    recall = [
        timed([*talos, "recall", q, "--home", str(home)])[0]
        for _ in range(recall_reps)
        for q in QUERIES[:4]
    ]
    subprocess.run([*talos, "hook", "stop", "--home", str(home)], capture_output=True)
    ms = 1000.0
    return {
        "runs": len(hooks),
        "python_pass_p50_ms": round(p(bare, 0.5) * ms, 1),
        "fts5_p50_ms": round(p(fts, 0.5) * ms, 1),
        "fts5_p90_ms": round(p(fts, 0.9) * ms, 1),
        "hook_p50_ms": round(p(hooks, 0.5) * ms, 1),
        "hook_p90_ms": round(p(hooks, 0.9) * ms, 1),
        "hook_over_fts5": round(p(hooks, 0.5) / p(fts, 0.5), 2),
        "script_p50_ms": round(p(scripts, 0.5) * ms, 1),
        "empty_answers": empty,
        "recall_cli_p50_ms": round(p(recall, 0.5) * ms, 1) if recall else 0.0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "bench")
    ap.add_argument("--sizes", type=int, nargs="+", default=[3000, 30000])
    ap.add_argument("--reps", type=int, default=10, help="passes over the 12 queries")
    ap.add_argument("--recall-reps", type=int, default=2, help="talos recall passes (4 queries)")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "talos-hookbench")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    if not (a.data / "make_home.py").exists():
        sys.exit(f"{a.data}/make_home.py not found: pass --data DIR (the shared bench folder)")
    a.cache.mkdir(parents=True, exist_ok=True)
    os.environ.pop("TALOS_HOME", None)
    results = {}
    for size in a.sizes:
        home = make_home(a.data, a.cache, size)
        results[size] = measure(home, a.reps, a.recall_reps)
        r = results[size]
        print(
            f"{size:>6} sessions: python -c pass p50 {r['python_pass_p50_ms']} ms | "
            f"FTS5 p50 {r['fts5_p50_ms']} ms (p90 {r['fts5_p90_ms']}) | "
            f"hook p50 {r['hook_p50_ms']} ms (p90 {r['hook_p90_ms']}) | "
            f"hook/FTS5 {r['hook_over_fts5']} | via the talos script p50 {r['script_p50_ms']} ms | "
            f"talos recall p50 {r['recall_cli_p50_ms']} ms | "
            f"{r['runs']} runs each, {r['empty_answers']} empty answers (nothing relevant)",
            flush=True,
        )
    if a.json:
        a.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
