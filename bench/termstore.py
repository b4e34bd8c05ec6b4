#!/usr/bin/env python3
"""The term rows in index.db (issue 15, "Left" item 2; ``talos/termrows.py``): a fresh-process
``talos recall --model evidence`` with the term index gathered from stored rows, against the
code before them (which analyses every node's text in every process) and against ``--model
bipartite``, side by side in one run; then the same after one new session per round; and the
index build time and index.db size of both.

    git archive main | tar -x -C /tmp/talos-before   # the code to compare against
    python3 bench/termstore.py --data ../shared/bench --sessions 3000 30000 \
        --before /tmp/talos-before

Each side has its own copy of a ``make_home.py`` home (``talos.toml``: ``model = "evidence"``),
built by ``talos index --rebuild`` with its own code and warmed by one recall. The sides take
turns, one process each per round (the query cycles), so load changes hit all of them alike.
Numbers are medians in ms over ``--rounds``; this machine is shared: compare the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale import QUERIES, cli, make_home  # noqa: E402

#: (name, code: "before" or "after", model, home copy)
SIDES = [
    ("before: evidence", "before", "evidence", "before"),
    ("after: evidence", "after", "evidence", "after"),
    ("before: bipartite", "before", "bipartite", "before"),
    ("after: bipartite", "after", "bipartite", "after"),
]


def env_of(code: Path) -> dict[str, str]:
    """The environment of a process running the talos of ``code`` (a source tree)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(code)
    env.pop("TALOS_HOME", None)
    return env


def talos(home: Path, args: list[str], code: Path) -> float:
    """Seconds of one fresh ``python -m talos ARGS --home HOME`` process of ``code``, run from
    the temp dir (from the repository, ``-m`` would import the talos there)."""
    return cli(home, args, env_of(code), cwd=Path(tempfile.gettempdir()))[0]


def copy_home(base: Path, out: Path) -> Path:
    """``base`` copied to ``out`` without its state, with ``model = "evidence"``."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(base, out, ignore=shutil.ignore_patterns("index.db*", "usage.db*", "*.log"))
    (out / "talos.toml").write_text('model = "evidence"\n', encoding="utf-8")
    return out


def add_session(home: Path, i: int) -> None:
    """One new session sorting after every other one (the episode block is extended)."""
    f = home / ".talos" / "sessions" / f"99991231-{i:06d}__termstore.jsonl"
    line = {"role": "user", "content": f"{QUERIES[i % len(QUERIES)]} (bench session {i})"}
    f.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")


def run(base: Path, cache: Path, codes: dict[str, Path], rounds: int) -> dict[str, object]:
    """The figures of one home size (see the module docstring)."""
    homes = {c: copy_home(base, cache / f"{base.name}-{c}") for c in codes}
    out: dict[str, object] = {}
    for c, home in homes.items():
        seconds = talos(home, ["index", "--rebuild", "--json"], codes[c])
        out[f"{c}: index build s"] = round(seconds, 2)
        out[f"{c}: index.db MB"] = round((home / ".talos" / "index.db").stat().st_size / 1e6, 1)
    for _name, c, model, h in SIDES:  # warm: the first recall after a build stores blocks
        talos(homes[h], ["recall", "--model", model, QUERIES[0]], codes[c])
    times: dict[str, list[float]] = {name: [] for name, *_ in SIDES}
    for i in range(rounds):
        for name, c, model, h in SIDES:
            q = QUERIES[i % len(QUERIES)]
            times[name].append(talos(homes[h], ["recall", "--model", model, q], codes[c]))
    for name, t in times.items():
        out[f"{name} recall ms"] = round(1000 * statistics.median(t), 1)
    grown: dict[str, list[float]] = {c: [] for c in codes}
    for i in range(rounds):  # a new session, then the first recall after it
        for c, home in homes.items():
            add_session(home, i)
            q = QUERIES[i % len(QUERIES)]
            grown[c].append(talos(home, ["recall", "--model", "evidence", q], codes[c]))
    for c, t in grown.items():
        out[f"{c}: new session, then recall ms"] = round(1000 * statistics.median(t), 1)
    return out


def in_process(home: Path, reps: int) -> dict[str, float]:
    """In this process (the code of this tree), medians in ms over ``reps``: the term index
    and edges of the recall graph from the stored rows (a new ``Memory`` each time: the rows
    read from index.db, the texts hashed, the rows gathered), and analysed by
    :func:`talos.evidence.of_nodes` over the same nodes."""
    from talos import Memory
    from talos.evidence import of_nodes

    stored, analysed = [], []
    for _ in range(reps):
        mem = Memory(home, model="evidence")
        graph = mem._kept.recall_graph(None, None)
        t = time.perf_counter()
        index, _edges = mem._kept.evidence_index(graph)
        stored.append(time.perf_counter() - t)
        text = mem.paths.memory_file.read_text(encoding="utf-8")
        t = time.perf_counter()
        of_nodes(graph.nodes, str(mem.paths.memory_file), text)
        analysed.append(time.perf_counter() - t)
        mem.close()
    return {
        "nodes": index.n,
        "entries": len(index.term),
        "stored rows ms": round(1000 * statistics.median(stored), 1),
        "analysed ms": round(1000 * statistics.median(analysed), 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "bench")
    ap.add_argument("--sessions", type=int, nargs="+", default=[3000, 30000])
    ap.add_argument("--before", type=Path, default=None, help="source tree of the old code")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=5, help="in-process repetitions")
    ap.add_argument("--in-process-only", action="store_true")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "talos-terms")
    a = ap.parse_args()
    a.cache.mkdir(parents=True, exist_ok=True)
    if a.before is None and not a.in_process_only:
        ap.error("--before DIR is needed (or --in-process-only)")
    codes = {"before": (a.before or HERE.parent).resolve(), "after": HERE.parent}
    for n in a.sessions:
        base = make_home(a.data, a.cache, n)
        if not a.in_process_only:
            got = run(base, a.cache, codes, a.rounds)
            print(n, "sessions:", json.dumps(got, ensure_ascii=False), flush=True)
        home = a.cache / f"{base.name}-after"  # the copy run() built, else a new one
        if not (home / ".talos" / "index.db").exists():
            copy_home(base, home)
        got = in_process(home, a.reps)
        print(n, "sessions, in-process:", json.dumps(got), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
