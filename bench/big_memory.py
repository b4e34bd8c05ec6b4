#!/usr/bin/env python3
"""Big memory.md benchmark (issue 12 item 8): a memory.md of up to 1,000,000 lines.

Makes a home deterministically — sessions from ``../shared/bench/make_home.py``, and facts
either from the same generator (``--kind utterances``: real English and Chinese utterances,
~155 bytes and ~30 keywords a line) or written here (``--kind short``: ``- NAME VERB THING …``
lines of 5-8 words from a fixed word list, like an imported address book or key-value dump) —
and measures, for this checkout and optionally an older one (``--against DIR``), side by side
and interleaved step by step (this machine is shared and noisy):

* ``cold recall``: ``talos recall`` in a fresh process on a home without index;
* ``index --rebuild``: ``talos index --rebuild`` (parses every line, stores the blocks);
* ``cli warm``: ``talos recall`` p50 after the rebuild;
* ``first`` / ``warm p50``: one ``Memory`` in a fresh process: its first recall, then the
  p50 / p90 of ``--reps`` recalls (queries taking turns);
* ``doctor``: ``talos doctor --json``;
* peak RSS of each process (``ru_maxrss`` of the child), and CPU seconds beside the wall
  clock (``*_cpu_*``: user + system; steadier than the wall clock when other work shares
  the machine).

``--long-line MB`` adds a case of one line of that many MB among a few facts: rebuild, recall
and the size of the delivered block.

Each checkout gets its own copy of the home (hard links to the same files), so the two never
share an index. The older checkout is run with ``PYTHONPATH=DIR``.

Usage:
    python3 bench/big_memory.py --data ../shared/bench --facts 1000000 --against /tmp/old
    python3 bench/big_memory.py --facts 100000 --kind short --reps 12 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

QUERIES = [
    "I went hiking with my dog last weekend",
    "what did Caroline say about the adoption agency",
    "painting a sunset with my kids",
    "最近工作压力很大，睡不好",
    "周末和朋友去爬山",
    "recommend a book about self care",
    "charity race for mental health",
    "camping trip with family in the mountains",
    "upgrade rust dependencies and fix the build",
    "who owns the blue bicycle in the garage",
    "合并两个表格",
    "meeting with the landlord about the kitchen",
]

# --kind short: a fixed vocabulary (no data set), ~2,000 distinct words with the suffixes
_STEMS = [
    "alice",
    "bob",
    "carol",
    "dave",
    "erin",
    "frank",
    "grace",
    "heidi",
    "ivan",
    "judy",
    "mallory",
    "nia",
    "oscar",
    "peggy",
    "quinn",
    "rupert",
    "sybil",
    "trent",
    "uma",
    "victor",
    "wendy",
    "xavier",
    "yara",
    "zack",
    "kettle",
    "garage",
    "kitchen",
    "bicycle",
    "laptop",
    "garden",
    "invoice",
    "passport",
    "landlord",
    "dentist",
    "recipe",
    "guitar",
    "piano",
    "ticket",
    "flight",
    "hotel",
    "budget",
    "server",
    "cluster",
    "deploy",
    "region",
    "backup",
    "mirror",
    "ledger",
    "report",
    "sprint",
    "review",
    "library",
    "museum",
    "harbor",
    "meadow",
    "river",
    "canyon",
    "forest",
    "market",
    "bakery",
    "clinic",
    "school",
    "office",
    "studio",
    "theater",
    "stadium",
    "blue",
    "green",
    "red",
    "amber",
    "silver",
    "golden",
    "quiet",
    "early",
    "late",
    "weekly",
    "monthly",
    "spare",
    "broken",
    "fresh",
    "owns",
    "keeps",
    "borrowed",
    "moved",
    "fixed",
    "booked",
    "paid",
    "lost",
    "found",
    "prefers",
    "visits",
    "plans",
    "sold",
    "painted",
]
_SUFFIX = ["", "s", "ing", "er", "ly", "ed", "able", "ment", "ness", "ful", "ist", "ish", "ion"]
_ZH = [
    "北京",
    "上海",
    "周末",
    "会议",
    "报告",
    "咖啡",
    "厨房",
    "花园",
    "医生",
    "学校",
    "电影",
    "音乐",
    "旅行",
    "预算",
    "项目",
    "朋友",
]


def short_facts(n: int, seed: int = 7) -> list[str]:
    """``n`` deterministic short fact lines (a third tagged ``import`` with a ref)."""
    rnd = random.Random(seed)
    words = [s + x for s in _STEMS for x in _SUFFIX]
    out = []
    for i in range(n):
        parts = rnd.sample(words, rnd.randint(4, 7))
        if rnd.random() < 0.3:
            parts.append(rnd.choice(_ZH) + rnd.choice(_ZH))
        day = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"
        tag = f" <!-- import {day} ref=imp:{i} -->" if i % 3 else ""
        out.append(f"- {' '.join(parts)}{tag}")
    return out


def make_home(data: Path, cache: Path, kind: str, facts: int, sessions: int) -> Path:
    """Generate (or reuse) the home; the same arguments always give the same files."""
    out = cache / f"big-{kind}-{facts}-{sessions}"
    if (out / "memory.md").exists():
        return out
    tmp = out.with_name(out.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    n = facts if kind == "utterances" else 0
    subprocess.run(
        [
            sys.executable,
            str(data / "make_home.py"),
            str(tmp),
            "--sessions",
            str(sessions),
            "--facts",
            str(n),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    if kind == "short":
        (tmp / "memory.md").write_text("\n".join(short_facts(facts)) + "\n", encoding="utf-8")
    tmp.rename(out)
    return out


def twin(home: Path, dest: Path) -> Path:
    """A copy of ``home`` made of hard links (the same files, a state folder of its own)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(home, dest, copy_function=os.link, ignore=shutil.ignore_patterns("*.db*"))
    return dest


_TIMED = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "dt = time.perf_counter() - t\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(dt, u.ru_maxrss // 1024, r.returncode, u.ru_utime + u.ru_stime, sep='\\t')\n"
    "sys.stderr.write(r.stdout[-2000:])\n"
)

_INPROC = """
import json, resource, sys, time
import talos, talos.memory
from talos import Memory
home, reps, queries = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
t = time.perf_counter()
mem = Memory(home)
first = mem.recall(queries[0])
first_s = time.perf_counter() - t
times, cpu = [], []
for i in range(reps):
    t, c = time.perf_counter(), time.process_time()
    mem.recall(queries[(i + 1) % len(queries)])
    times.append(time.perf_counter() - t)
    cpu.append(time.process_time() - c)
print(json.dumps({"first_s": first_s, "times": times, "cpu": cpu, "talos": talos.memory.__file__,
    "block_chars": len(first.text),
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
"""


class Side:
    """One checkout of talos: how to run its CLI and its Python API."""

    def __init__(self, name: str, code: Path, home: Path) -> None:
        self.name, self.code, self.home = name, code, home
        self.env = {k: v for k, v in os.environ.items() if k not in ("TALOS_HOME", "PYTHONPATH")}
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled, as an installed talos
        self.env["PYTHONPATH"] = str(code)

    def cli(self, *args: str, ok: tuple[int, ...] = (0,)) -> tuple[float, int, float]:
        """``python -m talos ARGS --home HOME`` in a fresh process: (seconds, peak RSS MB,
        CPU seconds)."""
        cmd = [sys.executable, "-c", _TIMED, sys.executable, "-m", "talos", *args]
        res = subprocess.run(
            [*cmd, "--home", str(self.home)],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.code,  # sys.path[0] is the current folder: it must be this checkout
        )
        seconds, rss, rc, cpu = res.stdout.strip().split("\t")
        if int(rc) not in ok:
            raise RuntimeError(f"{self.name}: talos {' '.join(args)} exited {rc}: {res.stderr}")
        return float(seconds), int(rss), float(cpu)

    def inproc(self, reps: int) -> dict:
        res = subprocess.run(
            [sys.executable, "-c", _INPROC, str(self.home), str(reps), json.dumps(QUERIES)],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.code,
            check=True,
        )
        got = json.loads(res.stdout.strip().splitlines()[-1])
        assert got["talos"].startswith(str(self.code)), (got["talos"], self.code)
        return got

    def drop_index(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            (self.home / ".talos" / f"index.db{suffix}").unlink(missing_ok=True)


def p(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, by nearest rank."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def measure(sides: list[Side], reps: int, cli_reps: int, log: bool = True) -> dict[str, dict]:
    """Every figure for every side, step by step, the sides taking turns within each step."""
    out: dict[str, dict] = {s.name: {} for s in sides}

    def say(msg: str) -> None:
        if log:
            print(f"… {msg}", file=sys.stderr, flush=True)

    for s in sides:
        s.drop_index()
    for s in sides:
        say(f"{s.name}: cold recall")
        sec, rss, cpu = s.cli("recall", QUERIES[0])
        out[s.name].update(
            cold_recall_s=round(sec, 2), cold_recall_cpu_s=round(cpu, 2), cold_recall_rss_mb=rss
        )
    for s in sides:
        say(f"{s.name}: index --rebuild")
        sec, rss, cpu = s.cli("index", "--rebuild", "--json")
        out[s.name].update(rebuild_s=round(sec, 2), rebuild_cpu_s=round(cpu, 2), rebuild_rss_mb=rss)
    cli: dict[str, list[float]] = {s.name: [] for s in sides}
    cli_cpu: dict[str, list[float]] = {s.name: [] for s in sides}
    rss_cli: dict[str, int] = {s.name: 0 for s in sides}
    for i in range(cli_reps):
        for s in sides:
            sec, rss, cpu = s.cli("recall", QUERIES[i % len(QUERIES)])
            cli[s.name].append(sec)
            cli_cpu[s.name].append(cpu)
            rss_cli[s.name] = max(rss_cli[s.name], rss)
    for s in sides:
        out[s.name].update(
            cli_warm_p50_ms=round(p(cli[s.name], 0.5) * 1000),
            cli_warm_cpu_p50_ms=round(p(cli_cpu[s.name], 0.5) * 1000),
            cli_warm_rss_mb=rss_cli[s.name],
        )
    for s in sides:
        say(f"{s.name}: in-process recalls")
        got = s.inproc(reps)
        out[s.name].update(
            inproc_first_s=round(got["first_s"], 2),
            warm_p50_ms=round(p(got["times"], 0.5) * 1000, 1),
            warm_p90_ms=round(p(got["times"], 0.9) * 1000, 1),
            warm_cpu_p50_ms=round(p(got["cpu"], 0.5) * 1000, 1),
            inproc_rss_mb=got["rss_mb"],
            block_chars=got["block_chars"],
        )
    for s in sides:
        say(f"{s.name}: doctor")
        sec, rss, cpu = s.cli("doctor", "--json", ok=(0, 5))
        out[s.name].update(doctor_s=round(sec, 2), doctor_cpu_s=round(cpu, 2), doctor_rss_mb=rss)
    return out


def long_line_home(cache: Path, mb: int) -> Path:
    """A home of a few facts and one line of ``mb`` MB (words, so it has keywords)."""
    out = cache / f"long-line-{mb}"
    if not (out / "memory.md").exists():
        out.mkdir(parents=True, exist_ok=True)
        rnd = random.Random(3)
        words = [s + x for s in _STEMS for x in _SUFFIX]
        chunk = " ".join(rnd.choice(words) for _ in range(20000))
        line = (chunk + " ") * (mb * 1_000_000 // (len(chunk) + 1) + 1)
        lines = ["- the kettle is in the garage", "- alice owns the blue bicycle"]
        text = "\n".join([*lines, "- " + line[: mb * 1_000_000], "- bob keeps the spare key"])
        (out / "memory.md").write_text(text + "\n", encoding="utf-8")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "bench")
    ap.add_argument("--facts", type=int, default=1_000_000, help="lines of memory.md")
    ap.add_argument("--kind", choices=["utterances", "short"], default="utterances")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=24, help="in-process warm recalls")
    ap.add_argument("--cli-reps", type=int, default=5, help="warm `talos recall` processes")
    ap.add_argument("--against", type=Path, help="an older checkout to measure side by side")
    ap.add_argument("--long-line", type=int, metavar="MB", help="also the one-long-line case")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "talos-big-memory")
    ap.add_argument("--json", type=Path, help="also write the results to this file")
    a = ap.parse_args()
    if not (a.data / "make_home.py").exists():
        sys.exit(f"{a.data}/make_home.py not found: pass --data DIR (the shared bench folder)")
    a.cache.mkdir(parents=True, exist_ok=True)
    import compileall

    codes = [("new", ROOT)] + ([("old", a.against.resolve())] if a.against else [])
    for _name, code in codes:
        compileall.compile_dir(str(code / "talos"), quiet=1)
    home = make_home(a.data, a.cache, a.kind, a.facts, a.sessions)
    lines = sum(1 for _ in (home / "memory.md").open("rb"))
    sides = [Side(name, code, twin(home, a.cache / f"run-{name}")) for name, code in codes]
    t = time.perf_counter()
    results: dict = {
        "home": {"kind": a.kind, "lines": lines, "sessions": a.sessions, "path": str(home)},
        "sides": measure(sides, a.reps, a.cli_reps),
    }
    if a.long_line:
        long_home = long_line_home(a.cache, a.long_line)
        long_sides = [
            Side(name, code, twin(long_home, a.cache / f"long-{name}")) for name, code in codes
        ]
        results["long_line"] = {"mb": a.long_line, "sides": measure(long_sides, 6, 3)}
    results["seconds"] = round(time.perf_counter() - t)
    print(json.dumps(results, indent=2))
    if a.json:
        a.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
