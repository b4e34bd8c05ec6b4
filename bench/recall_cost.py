#!/usr/bin/env python3
"""Recall cost by home size: what a talos recall costs against a 20-line SQLite FTS5 script.

For the empty home and ``make_home.py`` homes of ``--sizes`` sessions (default 3,000 and
30,000), five rows, each talos's median over ``--runs`` runs beside the FTS5 script's
(``bench/fts5_recall.py``) and the ratio of the two medians (talos over FTS5):

1. **recall process**: ``python -m talos recall QUERY --home H`` against ``fts5_recall.py H
   QUERY``, whole fresh processes (:func:`bench.startup.run_cpu`): wall ms, CPU s (user + sys
   of the child), peak RSS MB (``/usr/bin/time``). The homes, the empty one first, take turns
   within every run, so the growth of talos's wall from the smallest size to the largest
   (printed last, beside FTS5's) compares the same moments of the machine.
2. **warm ranking in-process**: one ``Memory(H).explain(query)`` (no writes) after one
   warm-up, against the FTS5 script's SQL on an open ``sqlite3`` connection; medians of
   ``--runs`` passes over the queries, the three calls in turn. "writes": the median of
   ``Memory.recall`` on the same queries minus the median of ``explain`` (ms) — what a recall
   adds (its selection, block, trace line and usage counts; ``explain`` does its own
   per-row explanation of 8 rows instead).
3. **hook without the resident server**: the hook command as ``talos hook install
   claude-code`` writes it, the event JSON on stdin, with ``[hooks] server = false`` in the
   home's talos.toml (the client then recalls in its own process and starts no server);
   median ms beside the FTS5 process, and how many runs delivered context (a non-empty
   ``additionalContext``) within the hook's deadline (``[hooks] timeout``, 2.5 s by default;
   the hook log's ``timeout`` lines are counted too).
4. **hook through the warm server after a write**: the server started and warm; one more
   memory.md line changed, then the hook; a new session file, then the hook. Each is paired
   with a warm hook of the same query just before the write (the ``warm`` line); delivered
   counts as in row 3. The FTS5 column is its query process, which does not see the write:
   the script has no update path, its rebuild is row 5.
5. **index build** on a fresh copy (no state): ``talos index --home H`` against
   ``fts5_recall.py H --build``, the order swapped every run: CPU s, wall s, peak RSS MB.

The hook runs from a small virtual environment in the cache whose only addition is a
``.pth`` naming this checkout and this interpreter's site-packages: ``-I`` (which the
installed command passes) ignores ``PYTHONPATH``, so the hook written for this interpreter
would import whichever talos is installed here, not this checkout. Every other talos
process runs this checkout through ``PYTHONPATH`` (:func:`bench.startup.env_for`).

**Realism.** ``make_home.py`` writes every session file now, and talos re-reads on every
refresh any session file modified within the last week (a session still going on); a real
history is mostly older. So the session files of each home made here get their mtimes set
30 days back (``--fresh-sessions`` keeps them as made); the header says which.

Homes are made once under ``--cache`` (``home-N-aged`` / ``home-N-fresh``) and reused; each
run works on a copy without talos's state (:func:`bench.startup.copy_for`), indexed untimed
first, and every row 5 run on a copy of its own.

Usage:
    python3 bench/recall_cost.py                               # 3,000 and 30,000 sessions
    python3 bench/recall_cost.py --sizes 100000 --runs 3 --rows 1 2 3 --json cost.json
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench.hook_latency import event, timed  # noqa: E402
from bench.scale import SETTLE, make_home  # noqa: E402
from bench.startup import FTS, QUERIES, copy_for, env_for, run_cpu  # noqa: E402
from talos import Memory  # noqa: E402
from talos.hooks.state import DEFAULTS  # noqa: E402

#: How far back the session files' mtimes are set (seconds): past talos's one-week window of
#: sessions still going on (``talos.index.sessions.LIVE_NS``).
AGE = 30 * 86_400
#: The FTS5 script's query (``bench/fts5_recall.py``), for the in-process row.
FTS_SQL = "SELECT kind, text FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 5"
#: Longest wait for the resident server to answer its first hook (seconds).
WARM_UP = 900.0
MS = 1000.0


def log(msg: str) -> None:
    """A progress line on stderr."""
    print(f"… {msg}", file=sys.stderr, flush=True)


def aged_home(data: Path, cache: Path, sessions: int, fresh: bool) -> Path:
    """The ``make_home.py`` home of ``sessions`` sessions under ``cache``, made once.

    Args:
        data: the folder of ``make_home.py``. cache: where homes are kept.
        sessions: the number of sessions. fresh: keep the session files' mtimes as made
            (now); otherwise they are set :data:`AGE` seconds back before the home is named.

    Returns:
        ``cache/home-N-aged`` (or ``-fresh``).
    """
    out = cache / f"home-{sessions}-{'fresh' if fresh else 'aged'}"
    if (out / "memory.md").exists():
        return out
    making = cache / "making"
    shutil.rmtree(making / f"home-{sessions}", ignore_errors=True)
    log(f"making a home of {sessions} sessions")
    made = make_home(data, making, sessions)
    if not fresh:
        then = time.time() - AGE
        for f in (made / ".talos" / "sessions").iterdir():
            os.utime(f, (then, then))
    made.rename(out)
    return out


def empty_home(cache: Path) -> Path:
    """A home whose memory.md is empty and which holds nothing else."""
    out = cache / "home-empty"
    out.mkdir(parents=True, exist_ok=True)
    (out / "memory.md").touch()
    return out


def hook_python(cache: Path) -> Path:
    """The interpreter of a virtual environment under ``cache`` that imports this checkout's
    talos with ``-I`` (a ``.pth`` naming this checkout, then this interpreter's packages).

    Raises:
        RuntimeError: it imports talos from elsewhere.
    """
    import site
    import sysconfig

    venv = cache / "hook-python"
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = subprocess.run(
        [str(py), "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    paths = [str(ROOT), *site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    pth = "\n".join(dict.fromkeys(paths)) + "\n"
    Path(purelib, "talos_checkout.pth").write_text(pth, encoding="utf-8")
    where = subprocess.run(
        [str(py), "-I", "-c", "import talos; print(talos.__file__)"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not Path(where).resolve().is_relative_to(ROOT / "talos"):
        raise RuntimeError(f"{py} -I imports talos from {where}, not from {ROOT}")
    return py


def hook_cmd(py: Path, home: Path) -> list[str]:
    """The hook command ``talos hook install claude-code`` (user scope) writes for the
    talos of ``py``, for ``home``."""
    code = (
        "import sys; from talos.hooks.install import hook_command; "
        "print(hook_command('claude-code', project=False, home=sys.argv[1]))"
    )
    out = subprocess.run(
        [str(py), "-I", "-c", code, str(home)], check=True, capture_output=True, text=True
    )
    return shlex.split(out.stdout.strip())


def delivered(out: bytes) -> bool:
    """Whether a hook's stdout holds a non-empty ``additionalContext``."""
    if not out.strip():
        return False
    inner = json.loads(out).get("hookSpecificOutput", {})
    return bool(inner.get("additionalContext"))


def stop_server(py: Path, home: Path) -> None:
    """Stop the resident hook server of ``home`` if one runs (``talos hook stop``)."""
    subprocess.run(
        [str(py), "-I", "-m", "talos", "hook", "stop", "--home", str(home)],
        capture_output=True,
        check=False,
    )


def timeouts(home: Path, since: int) -> int:
    """``timeout`` lines the hook log of ``home`` gained past byte ``since``."""
    path = home / ".talos" / "hook.log"
    if not path.exists():
        return 0
    with path.open("rb") as f:
        f.seek(since)
        return sum(b" timeout: " in line for line in f)


def log_size(home: Path) -> int:
    """The hook log's size in bytes (0 when absent)."""
    path = home / ".talos" / "hook.log"
    return path.stat().st_size if path.exists() else 0


def fts_cmd(home: Path, *args: str) -> list[str]:
    """``fts5_recall.py HOME ARGS`` with this interpreter."""
    return [sys.executable, str(FTS), str(home), *args]


def prepare(home: Path, env: dict[str, str]) -> None:
    """Build talos's index and the FTS5 database of ``home`` (untimed)."""
    talos = [sys.executable, "-m", "talos", "index", "--home", str(home)]
    subprocess.run(talos, env=env, check=True, capture_output=True)
    if not (home / "fts5.db").exists():
        subprocess.run(fts_cmd(home, "--build"), check=True)


def side(talos: list[float], fts: list[float], scale: float = 1.0, digits: int = 1) -> dict:
    """Medians of both sides times ``scale`` and the ratio of the medians (talos / FTS5)."""
    t, f = median(talos), median(fts)
    return {
        "talos": round(t * scale, digits),
        "fts5": round(f * scale, digits),
        "ratio": round(t / f, 2) if f else None,
    }


# -- row 1 -----------------------------------------------------------------------------------


def row_processes(works: dict[str, Path], env: dict[str, str], runs: int) -> dict[str, dict]:
    """Row 1 for every home: ``talos recall`` and the FTS5 query as whole processes, the homes
    and sides taking turns within each run (run 0 untimed).

    Returns:
        ``{label: {"wall_ms", "cpu_s", "rss_mb"}}``, each :func:`side`'s dict.
    """
    got: dict[str, dict[str, list[tuple[float, float, float]]]] = {
        label: {"talos": [], "fts5": []} for label in works
    }
    for i in range(runs + 1):
        q = QUERIES[i % len(QUERIES)]
        for label, home in works.items():
            fts = run_cpu(fts_cmd(home, q))
            talos = run_cpu([sys.executable, "-m", "talos", "recall", q, "--home", str(home)], env)
            if i:
                got[label]["fts5"].append(fts)
                got[label]["talos"].append(talos)
    out = {}
    for label, s in got.items():
        col = {name: list(zip(*rows, strict=True)) for name, rows in s.items()}
        out[label] = {
            "wall_ms": side(col["talos"][0], col["fts5"][0], MS),
            "cpu_s": side(col["talos"][2], col["fts5"][2], digits=3),
            "rss_mb": side(col["talos"][1], col["fts5"][1]),
        }
    return out


# -- row 2 -----------------------------------------------------------------------------------


def fts5_rows(con: sqlite3.Connection, query: str) -> list[tuple[str, str]]:
    """The FTS5 script's answer to ``query`` on an open connection (its match and SQL)."""
    match = " OR ".join(f'"{w}"' for w in re.findall(r"\w+", query))
    return con.execute(FTS_SQL, (match,)).fetchall()


def clock(fn: Callable[[str], object], query: str) -> float:
    """Seconds ``fn(query)`` takes."""
    t = time.perf_counter()
    fn(query)
    return time.perf_counter() - t


def row_in_process(home: Path, runs: int) -> dict:
    """Row 2: warm ``Memory.explain`` against the FTS5 query in this process, and the writes
    of a recall (``Memory.recall`` median minus ``explain`` median, ms)."""
    mem = Memory(home)
    con = sqlite3.connect(home / "fts5.db")
    try:
        mem.explain(QUERIES[0])  # warm-up: the index read, the graph built or loaded
        mem.recall(QUERIES[0])
        fts5_rows(con, QUERIES[0])
        explain, fts, recall = [], [], []
        for _ in range(runs):
            for q in QUERIES:
                explain.append(clock(mem.explain, q))
                fts.append(clock(lambda q: fts5_rows(con, q), q))
                recall.append(clock(mem.recall, q))
    finally:
        mem.close()
        con.close()
    out = side(explain, fts, MS, 2)
    out["recall_ms"] = round(median(recall) * MS, 2)
    out["writes_ms"] = round((median(recall) - median(explain)) * MS, 2)
    out["calls"] = len(explain)
    return out


# -- rows 3 and 4 ----------------------------------------------------------------------------


def row_hook_no_server(home: Path, hook: list[str], py: Path, runs: int) -> dict:
    """Row 3: the installed hook with ``[hooks] server = false`` against the FTS5 process,
    taking turns (one untimed pair first); talos.toml is removed after."""
    stop_server(py, home)
    toml = home / "talos.toml"
    toml.write_text("[hooks]\nserver = false\n", encoding="utf-8")
    try:
        timed(hook, event(QUERIES[0], home))
        timed(fts_cmd(home, QUERIES[0]))
        since = log_size(home)
        hooks, fts, got = [], [], 0
        for i in range(runs):
            q = QUERIES[i % len(QUERIES)]
            fts.append(timed(fts_cmd(home, q))[0])
            dt, out = timed(hook, event(q, home))
            hooks.append(dt)
            got += delivered(out)
    finally:
        toml.unlink()
    out = side(hooks, fts, MS)
    out.update(delivered=got, runs=runs, timeouts=timeouts(home, since))
    return out


def warm_server(home: Path, hook: list[str]) -> float:
    """Hook until the resident server answers with context (it starts on the first hook and
    answers once warm); returns the seconds that took.

    Raises:
        RuntimeError: no context within :data:`WARM_UP` seconds.
    """
    t = time.perf_counter()
    while time.perf_counter() - t < WARM_UP:
        if delivered(timed(hook, event(QUERIES[0], home))[1]):
            for q in QUERIES:  # one warm pass, untimed
                timed(hook, event(q, home))
            return time.perf_counter() - t
        time.sleep(0.5)
    raise RuntimeError(f"the hook server of {home} gave no context within {WARM_UP:g} s")


def row_hook_writes(home: Path, hook: list[str], py: Path, runs: int) -> dict:
    """Row 4: through the warm server, a memory.md line changed then the hook, and a new
    session file then the hook, each after a warm hook of the same query; the FTS5 query
    process beside. memory.md is restored, the sessions removed and the server stopped after.

    Returns:
        ``{"warm_ms", "edit_ms", "session_ms"}`` (each :func:`side`'s dict, ``edit`` and
        ``session`` with ``delivered``), ``runs`` and ``server_start_s``.
    """
    memory = home / "memory.md"
    original = memory.read_bytes()
    lines = original.split(b"\n")
    facts = [n for n, line in enumerate(lines) if line.startswith(b"- ")] or [len(lines)]
    folder = home / ".talos" / "sessions"
    made: list[Path] = []
    warm, edit, new, fts = [], [], [], []
    got = {"edit": 0, "session": 0}

    def settled_hook(q: str) -> float:
        time.sleep(SETTLE)  # a write is not this close to the next prompt in use
        timed(hook, event(q, home))  # untimed: the look again at the last write
        return timed(hook, event(q, home))[0]

    try:
        start = warm_server(home, hook)
        for i in range(runs):
            q = QUERIES[i % len(QUERIES)]
            fts.append(timed(fts_cmd(home, q))[0])
            warm.append(settled_hook(q))
            n = facts[i % len(facts)]
            lines[n : n + 1] = [f"- an edited fact number {i} about a camping trip".encode()]
            memory.write_bytes(b"\n".join(lines))
            dt, out = timed(hook, event(q, home))
            edit.append(dt)
            got["edit"] += delivered(out)
            warm.append(settled_hook(q))
            f = folder / f"99991231-{i:06d}__bench.jsonl"
            made.append(f)
            line = {"role": "user", "content": f"{q} (bench session {i})"}
            f.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
            dt, out = timed(hook, event(q, home))
            new.append(dt)
            got["session"] += delivered(out)
    finally:
        memory.write_bytes(original)
        for f in made:
            f.unlink(missing_ok=True)
        stop_server(py, home)
    return {
        "warm_ms": side(warm, fts, MS),
        "edit_ms": {**side(edit, fts, MS), "delivered": got["edit"]},
        "session_ms": {**side(new, fts, MS), "delivered": got["session"]},
        "runs": runs,
        "server_start_s": round(start, 1),
    }


# -- row 5 -----------------------------------------------------------------------------------


def row_build(home: Path, env: dict[str, str], runs: int) -> dict:
    """Row 5: ``talos index`` against ``fts5_recall.py --build``, both on one fresh copy of
    ``home`` (no state) per run, the order swapped every run.

    Returns:
        ``{"cpu_s", "wall_s", "rss_mb"}``, each :func:`side`'s dict.
    """
    got: dict[str, list[tuple[float, float, float]]] = {"talos": [], "fts5": []}
    for i in range(runs):
        fresh = copy_for(home, "build")
        cmds = {
            "talos": ([sys.executable, "-m", "talos", "index", "--home", str(fresh)], env),
            "fts5": (fts_cmd(fresh, "--build"), None),
        }
        for name in sorted(cmds, reverse=bool(i % 2)):
            got[name].append(run_cpu(*cmds[name]))
        shutil.rmtree(fresh)
    col = {name: list(zip(*rows, strict=True)) for name, rows in got.items()}
    return {
        "cpu_s": side(col["talos"][2], col["fts5"][2], digits=2),
        "wall_s": side(col["talos"][0], col["fts5"][0], digits=2),
        "rss_mb": side(col["talos"][1], col["fts5"][1]),
    }


# -- the table -------------------------------------------------------------------------------


def line(label: str, v: dict, note: str = "") -> str:
    """One table line: talos, FTS5, the ratio, a note."""
    ratio = f"x{v['ratio']}" if v.get("ratio") is not None else "-"
    return f"  {label:<38} {v['talos']:>10} {v['fts5']:>10} {ratio:>8}  {note}".rstrip()


def table(label: str, r: dict, runs: int) -> str:
    """The printed table of one home's rows."""
    out = [f"{label}: median of {runs} runs", f"  {'':<38} {'talos':>10} {'fts5':>10} {'ratio':>8}"]
    if "1" in r:
        p = r["1"]
        out += [
            line("1 recall process, wall ms", p["wall_ms"]),
            line("  CPU s (user+sys)", p["cpu_s"]),
            line("  peak RSS MB", p["rss_mb"]),
        ]
    if "2" in r:
        p = r["2"]
        out.append(line("2 warm explain in-process, ms", p, f"{p['calls']} calls each"))
        writes = f"writes (recall - explain) {p['writes_ms']} ms"
        out.append(f"  {'  in-process recall, ms':<38} {p['recall_ms']:>10} {'':>19}  {writes}")
    if "3" in r:
        p = r["3"]
        note = f"context {p['delivered']}/{p['runs']}, {p['timeouts']} timeouts"
        out.append(line("3 hook, no server, ms", p, note))
    if "4" in r:
        p = r["4"]
        n = p["runs"]
        out += [
            line("4 hook, warm server, ms", p["warm_ms"], f"server up in {p['server_start_s']} s"),
            line(
                "  memory.md line changed, then hook",
                p["edit_ms"],
                f"context {p['edit_ms']['delivered']}/{n}; FTS5 does not see it",
            ),
            line(
                "  new session file, then hook",
                p["session_ms"],
                f"context {p['session_ms']['delivered']}/{n}",
            ),
        ]
    if "5" in r:
        p = r["5"]
        out += [
            line("5 index build, CPU s", p["cpu_s"]),
            line("  wall s", p["wall_s"]),
            line("  peak RSS MB", p["rss_mb"]),
        ]
    return "\n".join(out)


def main() -> None:
    """Parse the options, make the homes, measure the rows asked for, print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=ROOT.parent.parent / "shared" / "bench",
        help="folder of make_home.py (default: ../../shared/bench)",
    )
    ap.add_argument("--sizes", type=int, nargs="+", default=[3000, 30000])
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each side per row")
    ap.add_argument("--rows", type=int, nargs="+", choices=range(1, 6), default=[1, 2, 3, 4, 5])
    ap.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "talos-cost",
        help="where homes are made once and reused",
    )
    ap.add_argument(
        "--fresh-sessions",
        action="store_true",
        help="keep the session files' mtimes as made (now), not 30 days back",
    )
    ap.add_argument("--json", type=Path, default=None, help="also write every number here")
    a = ap.parse_args()
    if not (a.data / "make_home.py").exists():
        sys.exit(f"{a.data}/make_home.py not found: pass --data DIR (the shared bench folder)")
    a.cache.mkdir(parents=True, exist_ok=True)
    for name in ("TALOS_HOME", "TALOS_SCOPE"):
        os.environ.pop(name, None)
    compileall.compile_dir(str(ROOT / "talos"), quiet=1)
    env = env_for(ROOT)
    rows = {str(n) for n in a.rows}
    ages = "as made (now)" if a.fresh_sessions else "set 30 days back"
    print(
        f"recall cost: talos vs fts5_recall.py; session files' mtimes {ages}; "
        f"hook deadline {DEFAULTS['timeout']} s; ratio = talos median / FTS5 median",
        flush=True,
    )
    homes = {f"{n} sessions": aged_home(a.data, a.cache, n, a.fresh_sessions) for n in a.sizes}
    if "1" in rows:
        homes = {"empty home": empty_home(a.cache), **homes}
    works = {}
    for label, home in homes.items():
        log(f"{label}: copying (no state) and indexing, untimed")
        works[label] = copy_for(home, "work")
        prepare(works[label], env)
    results: dict[str, dict] = {label: {} for label in homes}
    if "1" in rows:
        log("row 1: recall processes, every home in turn")
        for label, r in row_processes(works, env, a.runs).items():
            results[label]["1"] = r
        print(
            table(
                "empty home (empty memory.md; FTS5 on an empty database)",
                results["empty home"],
                a.runs,
            ),
            flush=True,
        )
    py = hook_python(a.cache) if rows & {"3", "4"} else Path()
    for label, r in results.items():
        if label == "empty home":
            continue
        home, work = homes[label], works[label]
        hook = hook_cmd(py, work) if rows & {"3", "4"} else []
        if "2" in rows:
            log(f"{label}: row 2, in-process")
            r["2"] = row_in_process(work, a.runs)
        if "3" in rows:
            log(f"{label}: row 3, hook without the server")
            r["3"] = row_hook_no_server(work, hook, py, a.runs)
        if "4" in rows:
            log(f"{label}: row 4, writes then a hook through the warm server")
            r["4"] = row_hook_writes(work, hook, py, a.runs)
        if "5" in rows:
            log(f"{label}: row 5, index builds")
            r["5"] = row_build(home, env, a.runs)
        print(table(label, r, a.runs), flush=True)
    growth = {}
    if "1" in rows and len(a.sizes) > 1:
        lo, hi = f"{min(a.sizes)} sessions", f"{max(a.sizes)} sessions"
        for name in ("talos", "fts5"):
            growth[name] = round(
                results[hi]["1"]["wall_ms"][name] / results[lo]["1"]["wall_ms"][name], 2
            )
        print(
            f"growth of the recall process's wall, {lo} -> {hi}: talos x{growth['talos']}, "
            f"fts5 x{growth['fts5']}",
            flush=True,
        )
    if a.json:
        doc = {
            "runs": a.runs,
            "session_mtimes": ages,
            "hook_timeout_s": DEFAULTS["timeout"],
            "results": results,
            "growth_wall": growth,
        }
        a.json.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
