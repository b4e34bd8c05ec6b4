#!/usr/bin/env python3
"""Scale benchmark (design §11, issue 4): recall latency and memory on synthetic homes.

Homes come from ``../shared/bench/make_home.py`` (real English and Chinese utterances, the same
arguments always give the same home) at several sizes. For each size and model it measures,
side by side in one run:

* cold build: ``talos index --rebuild`` in a fresh process (seconds);
* warm recall as a whole CLI process: ``talos recall`` p50 (includes Python start-up);
* peak RSS of a warm CLI recall process (``ru_maxrss`` of the child);
* the non-indexed path: a fresh ``Memory(index=False)`` per recall, which reads and links every
  file like the reference implementation (p50, fewer repetitions; ``--no-direct`` skips it);
* warm recall in-process: ``Memory.recall`` p50/p90 after one warm-up, one ``Memory`` per
  home and the homes taking turns (query *i* on every size, then query *i+1*), so the growth
  ratio 3k → 30k compares recalls of the same moments;
* refresh: edit one memory.md line, then recall, each edit paired with a warm recall of the
  same query just before it; ``edit_ratio`` is the edited p50 over that warm p50;
* a new session (a file named to sort last), then recall, paired the same way
  (``session_then_recall_p50_ms``, ``session_ratio``);
* removed sessions (issue 12 item 7): one session from the middle removed, then recall,
  paired the same way (``removal_then_recall_p50_ms``, ``removal_ratio``), and a whole
  ``talos recall`` process after each removal (``cli_after_removal_p50_ms``);
* the home spelled two ways (issue 12 item 7): ``talos recall`` processes alternating
  ``--home NAME`` (relative, from the parent folder) and ``--home /abs/NAME``
  (``cli_spellings_p50_ms``, to compare with ``cli_p50_ms``).

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
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from talos import Memory  # noqa: E402
from talos.ranking.activation import MODELS  # noqa: E402

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


#: Seconds between a write and the next paired warm recall: a file changed within a tick of
#: its clock is looked at again on the next call after it (talos.index.signatures.settled,
#: 20 ms on this file system). One untimed recall takes that look, so the paired warm recall
#: is warm.
SETTLE = 0.05


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


def cli(
    home: Path | str, args: list[str], env: dict[str, str], cwd: Path | None = None
) -> tuple[float, int, str]:
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
        cwd=cwd,
        check=True,
    )
    seconds, rss, rc = res.stdout.strip().split("\t")
    if rc != "0":
        raise RuntimeError(f"talos {' '.join(args)} exited {rc}: {res.stderr[-500:]}")
    return float(seconds), int(rss), res.stderr


def bench_processes(home: Path, reps: int, direct: bool, env: dict[str, str]) -> dict:
    """The figures of whole processes for one home (its talos.toml names the model): cold
    build, ``talos recall`` p50 and peak RSS, and the non-indexed path (in-process)."""
    out: dict[str, object] = {}
    seconds, rss, _ = cli(home, ["index", "--rebuild", "--json"], env)
    out["cold_build_s"] = round(seconds, 2)
    out["cold_build_rss_mb"] = rss
    procs, rsss = [], []
    for i in range(max(5, reps // 2)):  # whole processes are the noisiest figure: more runs
        seconds, rss, _ = cli(home, ["recall", QUERIES[i % len(QUERIES)]], env)
        procs.append(seconds)
        rsss.append(rss)
    out["cli_p50_ms"] = round(p(procs, 0.5) * 1000, 1)
    out["cli_peak_rss_mb"] = max(rsss)
    if direct:
        slow = []
        for i in range(max(2, reps // 10)):
            t = time.perf_counter()
            Memory(home, index=False).recall(QUERIES[i % len(QUERIES)])
            slow.append(time.perf_counter() - t)
        out["direct_p50_ms"] = round(p(slow, 0.5) * 1000, 1)
    return out


def bench_warm(mems: dict[int, Memory], reps: int) -> dict[int, list[float]]:
    """Warm in-process recalls of every home, side by side: query ``i`` on each home in
    turn, so a slow spell of this shared machine hits every size alike and the growth ratio
    compares like with like."""
    times: dict[int, list[float]] = {size: [] for size in mems}
    for i in range(reps):
        q = QUERIES[i % len(QUERIES)]
        for size, mem in mems.items():
            t = time.perf_counter()
            mem.recall(q)
            times[size].append(time.perf_counter() - t)
    return times


def paired(mem: Memory, count: int, change: Callable[[int], None]) -> tuple[list, list]:
    """``count`` times: a warm recall, then ``change(i)``, then a recall of the same query;
    ``(warm, after)`` seconds, side by side. Before each warm recall the change before has
    settled (:data:`SETTLE`) and an untimed recall took the look again at it."""
    warm, after = [], []
    for i in range(count):
        q = QUERIES[i % len(QUERIES)]
        time.sleep(SETTLE)  # calls are not this close to a write in use (signatures.settled)
        mem.recall(q)  # untimed: the look again at the last write, after its tick
        t = time.perf_counter()
        mem.recall(q)
        warm.append(time.perf_counter() - t)
        change(i)
        t = time.perf_counter()
        mem.recall(q)
        after.append(time.perf_counter() - t)
    return warm, after


def bench_edits(mem: Memory, home: Path, edits: int) -> tuple[list[float], list[float]]:
    """Edit one memory.md line, then recall, ``edits`` times (:func:`paired`). Edit ``i``
    replaces line ``i`` (the original file is restored after)."""
    memory = home / "memory.md"
    original = memory.read_bytes()

    def edit(i: int) -> None:
        lines = original.split(b"\n")
        lines[i % max(1, len(lines) - 1)] = f"- an edited fact number {i} about hiking".encode()
        memory.write_bytes(b"\n".join(lines))

    try:
        return paired(mem, edits, edit)
    finally:
        memory.write_bytes(original)


def bench_spellings(home: Path, reps: int, env: dict[str, str]) -> dict:
    """``talos recall`` processes alternating a relative and an absolute ``--home``."""
    times = []
    for i in range(max(4, reps // 2)):
        spelled, cwd = (home.name, home.parent) if i % 2 else (str(home.resolve()), None)
        seconds, _rss, _ = cli(spelled, ["recall", QUERIES[i % len(QUERIES)]], env, cwd=cwd)
        times.append(seconds)
    return {"cli_spellings_p50_ms": round(p(times, 0.5) * 1000, 1)}


def bench_removals(
    mem: Memory, home: Path, count: int, env: dict[str, str]
) -> tuple[list[float], list[float], list[float]]:
    """Remove one session from the middle of the folder, then recall, ``count`` times
    (:func:`paired`), then the same with a whole ``talos recall`` process after each
    removal. The files are put back after (the next recall then builds the block)."""
    folder = home / ".talos" / "sessions"
    names = sorted(f.name for f in folder.iterdir())
    aside = Path(tempfile.mkdtemp(prefix="removed-", dir=home.parent))
    moved: list[str] = []

    def remove(i: int) -> None:
        name = names[len(names) // 3 + 17 * (len(moved) + 1)]
        moved.append(name)
        (folder / name).rename(aside / name)

    try:
        warm, after = paired(mem, count, remove)
        procs = []
        for i in range(max(3, count // 2)):
            remove(i)
            time.sleep(SETTLE)
            seconds, _rss, _ = cli(home, ["recall", QUERIES[i % len(QUERIES)]], env)
            procs.append(seconds)
        return warm, after, procs
    finally:
        for name in moved:
            (aside / name).rename(folder / name)
        aside.rmdir()


def bench_sessions(mem: Memory, home: Path, count: int) -> tuple[list[float], list[float]]:
    """Add one session (named to sort after every other, as a new session does), then
    recall, ``count`` times (:func:`paired`). The added files are removed after."""
    folder = home / ".talos" / "sessions"
    made: list[Path] = []

    def add(i: int) -> None:
        f = folder / f"99991231-{i:06d}__bench.jsonl"
        made.append(f)
        line = {"role": "user", "content": f"{QUERIES[i % len(QUERIES)]} (bench session {i})"}
        f.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")

    try:
        return paired(mem, count, add)
    finally:
        for f in made:
            f.unlink(missing_ok=True)


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
    from talos.ranking.activation import DEFAULT_MODEL

    models = a.model or [DEFAULT_MODEL]
    # A CLI process runs with its bytecode compiled, as after `pip install` (which compiles
    # it); PYTHONDONTWRITEBYTECODE (set on this machine) would make every process recompile
    # every module of talos from source, which is not what a user's shell does.
    import compileall

    compileall.compile_dir(str(HERE.parent / "talos"), quiet=1)
    env = {
        k: v for k, v in os.environ.items() if k not in ("TALOS_HOME", "PYTHONDONTWRITEBYTECODE")
    }
    env["PYTHONPATH"] = str(HERE.parent)  # this checkout's talos, from any folder
    results = []
    growth: dict[str, float] = {}
    homes = {size: make_home(a.data, a.cache, size) for size in a.sizes}
    for model in models:
        rows: dict[int, dict[str, object]] = {}
        for size, home in homes.items():
            print(f"… {size} sessions, model {model}: processes", file=sys.stderr, flush=True)
            (home / "talos.toml").write_text(f'model = "{model}"\n', encoding="utf-8")
            rows[size] = {"home": str(home), "model": model, "sessions": size}
            rows[size].update(bench_processes(home, a.reps, not a.no_direct, env))
        print(f"… model {model}: in-process recalls and edits", file=sys.stderr, flush=True)
        mems = {size: Memory(home) for size, home in homes.items()}
        for mem in mems.values():
            mem.recall(QUERIES[0])  # warm-up: load the index, build or read the graph
        warm = bench_warm(mems, a.reps)
        for size, home in homes.items():
            r = rows[size]
            r["warm_p50_ms"] = round(p(warm[size], 0.5) * 1000, 1)
            r["warm_p90_ms"] = round(p(warm[size], 0.9) * 1000, 1)
            r["nodes"] = len(mems[size].graph().nodes)
            if "direct_p50_ms" in r:
                r["speedup_vs_direct"] = round(
                    float(r["direct_p50_ms"]) / max(float(r["warm_p50_ms"]), 1e-9), 1
                )
            before, after = bench_edits(mems[size], home, max(5, a.reps // 2))
            r["edit_warm_p50_ms"] = round(p(before, 0.5) * 1000, 1)
            r["edit_then_recall_p50_ms"] = round(p(after, 0.5) * 1000, 1)
            r["edit_ratio"] = round(p(after, 0.5) / max(p(before, 0.5), 1e-9), 2)
            before, after = bench_sessions(mems[size], home, max(5, a.reps // 4))
            r["session_then_recall_p50_ms"] = round(p(after, 0.5) * 1000, 1)
            r["session_ratio"] = round(p(after, 0.5) / max(p(before, 0.5), 1e-9), 2)
            r.update(bench_spellings(home, a.reps, env))
            before, after, procs = bench_removals(mems[size], home, max(5, a.reps // 4), env)
            r["removal_then_recall_p50_ms"] = round(p(after, 0.5) * 1000, 1)
            r["removal_ratio"] = round(p(after, 0.5) / max(p(before, 0.5), 1e-9), 2)
            r["cli_after_removal_p50_ms"] = round(p(procs, 0.5) * 1000, 1)
            mems[size].close()
            (home / "talos.toml").unlink()
            results.append(r)
            print(json.dumps(r), flush=True)
        if 3000 in rows and 30000 in rows:
            growth[model] = round(
                float(rows[30000]["warm_p50_ms"]) / float(rows[3000]["warm_p50_ms"]), 2
            )
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
