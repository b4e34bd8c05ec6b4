#!/usr/bin/env python3
"""Scale benchmark (SPEC §11, issue 4): recall latency and memory on synthetic homes.

Homes come from ``../shared/bench/make_home.py`` (real English and Chinese utterances, the same
arguments always give the same home) at several sizes. For each size and model it measures,
side by side in one run:

* cold build: ``talos index --rebuild`` in a fresh process (seconds);
* warm recall in-process: ``Memory.recall`` p50/p90 over the queries, after one warm-up;
* warm recall as a whole CLI process: ``talos recall`` p50 (includes Python start-up);
* the non-indexed path: a fresh ``Memory(index=False)`` per recall, which reads and links every
  file like the reference implementation (p50, fewer repetitions; ``--no-direct`` skips it);
* refresh: edit one memory.md line, then recall (in-process, p50 over edits);
* peak RSS of a warm CLI recall process (``ru_maxrss`` of the child).

Usage:
    python3 bench/scale.py --data ../shared/bench --sizes 1000 3000 --model classic
    python3 bench/scale.py --sizes 3000 30000 --json results.json

Numbers are medians; this machine is noisy, so compare ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from talos import Memory  # noqa: E402
from talos.graph import MODELS  # noqa: E402

QUERIES = [
    "I went hiking with my dog last weekend",
    "what did Caroline say about the adoption agency",
    "painting a sunset with my kids",
    "最近工作压力很大，睡不好",
    "周末和朋友去爬山",
    "recommend a book about self care",
    "我想学做饭，有什么建议",
    "charity race for mental health",
    "她对新工作感到非常开心",
    "camping trip with family in the mountains",
    "upgrade rust dependencies and fix the build",
    "合并两个表格",
]


def p(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, by nearest rank."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def make_home(data: Path, cache: Path, sessions: int) -> Path:
    """Generate (or reuse) the synthetic home with ``sessions`` sessions."""
    out = cache / f"home-{sessions}"
    if not (out / "memory.md").exists():
        subprocess.run(
            [sys.executable, str(data / "make_home.py"), str(out), "--sessions", str(sessions)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return out


def cli(home: Path, args: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """Run ``python -m talos ARGS`` in a fresh process; (seconds, peak RSS in MB, stdout)."""
    code = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "dt = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(dt, rss // 1024, r.returncode, sep='\\t')\n"
        "sys.stderr.write(r.stdout)\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code, sys.executable, "-m", "talos", *args, "--home", str(home)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    seconds, rss, rc = res.stdout.strip().split("\t")
    if rc != "0":
        raise RuntimeError(f"talos {' '.join(args)} exited {rc}: {res.stderr[-500:]}")
    return float(seconds), int(rss), res.stderr


def bench_size(home: Path, model: str, reps: int, direct: bool, env: dict[str, str]) -> dict:
    """All figures for one home and one model."""
    out: dict[str, object] = {"home": str(home), "model": model}
    env = dict(env, TALOS_HOME=str(home))
    (home / "talos.toml").write_text(f'model = "{model}"\n', encoding="utf-8")
    seconds, rss, _ = cli(home, ["index", "--rebuild", "--json"], env)
    out["cold_build_s"] = round(seconds, 2)
    out["cold_build_rss_mb"] = rss

    mem = Memory(home)
    mem.recall(QUERIES[0])  # warm-up: load the index, build the graph
    warm = []
    for i in range(reps):
        q = QUERIES[i % len(QUERIES)]
        t = time.perf_counter()
        mem.recall(q)
        warm.append(time.perf_counter() - t)
    out["warm_p50_ms"] = round(p(warm, 0.5) * 1000, 1)
    out["warm_p90_ms"] = round(p(warm, 0.9) * 1000, 1)
    out["nodes"] = len(mem.graph().nodes)

    procs, rsss = [], []
    for i in range(max(5, reps // 2)):  # whole processes are the noisiest figure: more runs
        seconds, rss, _ = cli(home, ["recall", QUERIES[i % len(QUERIES)]], env)
        procs.append(seconds)
        rsss.append(rss)
    out["cli_p50_ms"] = round(p(procs, 0.5) * 1000, 1)
    out["cli_peak_rss_mb"] = max(rsss)

    memory = home / "memory.md"
    original = memory.read_bytes()
    refresh = []
    try:
        for i in range(max(5, reps // 2)):  # edits: as many as CLI runs (noisy too)
            lines = original.split(b"\n")
            lines[i % max(1, len(lines) - 1)] = f"- an edited fact number {i} about hiking".encode()
            memory.write_bytes(b"\n".join(lines))
            t = time.perf_counter()
            mem.recall(QUERIES[i % len(QUERIES)])
            refresh.append(time.perf_counter() - t)
    finally:
        memory.write_bytes(original)
    out["edit_then_recall_p50_ms"] = round(p(refresh, 0.5) * 1000, 1)

    if direct:
        slow = []
        for i in range(max(2, reps // 10)):
            t = time.perf_counter()
            Memory(home, index=False).recall(QUERIES[i % len(QUERIES)])
            slow.append(time.perf_counter() - t)
        out["direct_p50_ms"] = round(p(slow, 0.5) * 1000, 1)
        out["speedup_vs_direct"] = round(p(slow, 0.5) / max(p(warm, 0.5), 1e-9), 1)
    (home / "talos.toml").unlink()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=HERE.parent.parent / "shared" / "bench",
        help="folder holding make_home.py and the data sets (default ../shared/bench)",
    )
    ap.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[1000, 3000, 10000, 30000],
        help="session counts of the homes",
    )
    ap.add_argument(
        "--model",
        action="append",
        choices=sorted(MODELS),
        help="activation model(s); default: the default model",
    )
    ap.add_argument("--reps", type=int, default=24, help="in-process recalls per size")
    ap.add_argument("--no-direct", action="store_true", help="skip the non-indexed path")
    ap.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "talos-scale",
        help="where generated homes are kept between runs",
    )
    ap.add_argument("--json", type=Path, help="also write the results to this file")
    a = ap.parse_args()
    if not (a.data / "make_home.py").exists():
        sys.exit(f"{a.data}/make_home.py not found: pass --data DIR (the shared bench folder)")
    a.cache.mkdir(parents=True, exist_ok=True)
    from talos.graph import DEFAULT_MODEL

    models = a.model or [DEFAULT_MODEL]
    # A CLI process runs with its bytecode compiled, as after `pip install` (which compiles
    # it); PYTHONDONTWRITEBYTECODE (set on this machine) would make every process recompile
    # every module of talos from source, which is not what a user's shell does.
    import compileall

    compileall.compile_dir(str(HERE.parent / "talos"), quiet=1)
    env = {
        k: v for k, v in os.environ.items() if k not in ("TALOS_HOME", "PYTHONDONTWRITEBYTECODE")
    }
    results = []
    for size in a.sizes:
        home = make_home(a.data, a.cache, size)
        for model in models:
            print(f"… {size} sessions, model {model}", file=sys.stderr, flush=True)
            r = bench_size(home, model, a.reps, not a.no_direct, env)
            r["sessions"] = size
            results.append(r)
            print(json.dumps(r), flush=True)
    by_model: dict[str, dict[int, float]] = {}
    for r in results:
        by_model.setdefault(str(r["model"]), {})[int(r["sessions"])] = float(r["warm_p50_ms"])
    growth = {
        m: round(v[30000] / v[3000], 2) for m, v in by_model.items() if 3000 in v and 30000 in v
    }
    summary = {
        "results": results,
        "growth_3k_to_30k": growth,
        "self_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    }
    print(json.dumps({"growth_3k_to_30k": growth}))
    if a.json:
        a.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
