#!/usr/bin/env python3
"""Several sessions folders (issue 16 item 4): a new session, then recall, with the sessions
in one folder and the same sessions split over two, side by side in one run.

The home comes from ``../shared/bench/make_home.py`` (as in ``bench/scale.py``). Three
``Memory`` objects, each on its own copy of the same files, take turns, one new session
each per round, every changed recall paired with a warm recall just before it (as
:func:`scale.paired` pairs them):

* ``one``: every session in ``.talos/sessions``; a new session sorting last is added there;
* ``two_last``: the same sessions, the first half in ``.talos/sessions``, the rest in a second
  folder listed after it; the new session goes to the second (last) folder: the episode
  block is extended (the fast path of SPEC §11);
* ``two_first``: the same two folders; the new session goes to the first folder, so it
  sorts before the second folder's episodes and the block is built again (the load order is
  folder by folder).

Usage:
    python3 bench/folders.py --sessions 3000 --count 15

Numbers are medians in ms; this machine is noisy, so compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from scale import QUERIES, SETTLE, make_home, p  # noqa: E402

from talos import Memory  # noqa: E402


def split_home(home: Path, out: Path) -> tuple[Path, Path]:
    """Copy ``home`` to ``out`` with its sessions split in two: the first half (by name) in
    ``.talos/sessions``, the rest in ``more/``; returns the two folders."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(home, out, ignore=shutil.ignore_patterns("index.db*", "usage.db*"))
    first, second = out / ".talos" / "sessions", out / "more"
    second.mkdir()
    names = sorted(f.name for f in first.iterdir())
    for name in names[len(names) // 2 :]:
        (first / name).rename(second / name)
    return first, second


def adder(folder: Path, tag: str, made: list[Path]):  # type: ignore[no-untyped-def]
    """A change for :func:`scale.paired`: one new session in ``folder``, named to sort last
    there."""

    def add(i: int) -> None:
        f = folder / f"99991231-{i:06d}__{tag}.jsonl"
        made.append(f)
        line = {"role": "user", "content": f"{QUERIES[i % len(QUERIES)]} (bench session {i})"}
        f.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")

    return add


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "bench")
    ap.add_argument("--sessions", type=int, default=3000)
    ap.add_argument("--count", type=int, default=15, help="new sessions per side")
    ap.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "talos-folders-bench"
    )
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    base = make_home(args.data, args.cache, args.sessions)
    one = args.cache / f"one-{args.sessions}"
    if one.exists():
        shutil.rmtree(one)
    shutil.copytree(base, one, ignore=shutil.ignore_patterns("index.db*", "usage.db*"))
    last = split_home(base, args.cache / f"two-last-{args.sessions}")
    early = split_home(base, args.cache / f"two-first-{args.sessions}")
    made: list[Path] = []
    mems = {  # each on its own copy: one index per home
        "one": Memory(one),
        "two_last": Memory(last[0].parent.parent, sessions_dir=list(last)),
        "two_first": Memory(early[0].parent.parent, sessions_dir=list(early)),
    }
    changes = {
        "one": adder(one / ".talos" / "sessions", "one", made),
        "two_last": adder(last[1], "last", made),
        "two_first": adder(early[0], "first", made),
    }
    warm: dict[str, list[float]] = {k: [] for k in mems}
    after: dict[str, list[float]] = {k: [] for k in mems}
    try:
        for m in mems.values():
            m.recall(QUERIES[0])  # builds the index and the block
        for i in range(args.count):  # the sides take turns, one new session each
            for name, mem in mems.items():
                # scale.paired's pairing, one round, the query of round i
                q = QUERIES[i % len(QUERIES)]
                time.sleep(SETTLE)
                mem.recall(q)
                t = time.perf_counter()
                mem.recall(q)
                warm[name].append(time.perf_counter() - t)
                changes[name](i)
                t = time.perf_counter()
                mem.recall(q)
                after[name].append(time.perf_counter() - t)
    finally:
        for f in made:
            f.unlink(missing_ok=True)
        for m in mems.values():
            m.close()
    result = {
        "sessions": args.sessions,
        "count": args.count,
        **{
            name: {
                "warm_p50_ms": round(p(warm[name], 0.5) * 1000, 2),
                "session_then_recall_p50_ms": round(p(after[name], 0.5) * 1000, 2),
                "session_ratio": round(p(after[name], 0.5) / p(warm[name], 0.5), 2),
            }
            for name in mems
        },
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
