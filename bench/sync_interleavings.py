"""Random interleavings of writes, hand edits and syncs on three clones (design §12).

Each seed makes a bare repository and three clones, then runs ``--steps`` random steps, each
on a random clone: remember (plain, keyed on a few keys with random observed days, from
``reflect``), forget a line talos wrote, restore a forgotten one, recall, a person's hand
edit (insert or append a line, swap two lines, delete a talos line, and with ``--hostile``
also CRLF endings, LF again, no final newline, a line of invalid UTF-8), or ``talos sync``.
At the end every clone syncs until quiet, and the invariants of design §12 are checked:

* every memory.md is the same, byte for byte, and so is every view;
* no line a person wrote (and did not take out) is lost;
* a line forgotten (and not restored) is gone, a line restored (no key) is there unless a
  forget its restore did not know of stands, and such a forget's line is gone;
* every device's audit log is on every clone, its lines in order;
* the conflicts (equal-standing keys) are the same on every clone;
* no record id is in memory.md twice;
* the audit log blames on an edit outside talos only the lines a person took out.

    python3 bench/sync_interleavings.py --seeds 40 --steps 60 --hostile

The last line is the figure: seeds run, seeds with a problem, and the time.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from talos.errors import TalosError
from talos.home import resolve_paths
from talos.memory import Memory
from talos.sync.git import sync
from talos.writer.audit import outside_edits, settled

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
]
STEPS = ["remember", "keyed", "keyed-reflect", "reflect", "forget", "forget", "recall", "hand"]
STEPS += ["sync", "sync", "restore"]
HANDS = ["insert", "append", "append", "swap", "delete-talos"]
HOSTILE = ["crlf", "lf", "no-final-newline", "invalid-utf8"]


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def clones(tmp: Path, names: list[str]) -> dict[str, Path]:
    """A bare repository in ``tmp`` and one clone per name (git identity set)."""
    remote = tmp / "remote.git"
    _git(tmp, "init", "-q", "--bare", "-b", "main", str(remote))
    homes = {}
    for name in names:
        home = tmp / name
        _git(tmp, "clone", "-q", str(remote), str(home))
        _git(home, "config", "user.email", f"{name}@example.invalid")
        _git(home, "config", "user.name", name)
        homes[name] = home
    return homes


@dataclass
class Run:
    """What one seed wrote and expects, and what went wrong."""

    person: set[str] = field(default_factory=set)  # lines a person wrote and kept
    forgotten: set[str] = field(default_factory=set)  # forgotten, not restored
    restored: set[str] = field(default_factory=set)  # restored, not forgotten since
    by_hand: set[str] = field(default_factory=set)  # ids of talos lines a person took out
    log: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _lines(path: Path) -> list[str]:
    data = path.read_bytes() if path.exists() else b""
    return data.decode("utf-8", "surrogateescape").split("\n")


def _write(path: Path, lines: list[str]) -> None:
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape"))


def _add(lines: list[str], new: str, at: int | None) -> None:
    if at is not None and len(lines) > 1:
        lines.insert(at, new)
    elif lines and lines[-1] == "":
        lines.insert(len(lines) - 1, new)
    else:
        lines.append(new)


def _hand(rng: random.Random, home: Path, name: str, n: int, run: Run, hostile: bool) -> None:
    path = home / "memory.md"
    lines = _lines(path)
    kind = rng.choice(HANDS + (HOSTILE if hostile else []))
    if kind in ("insert", "append", "invalid-utf8"):
        new = f"- {name} typed note {n} about {rng.choice(WORDS)}"
        if kind == "invalid-utf8":
            new = f"- {name} typed bytes {n} caf\udce9 au lait"
        _add(lines, new, rng.randrange(len(lines)) if kind == "insert" else None)
        run.person.add(new)
    elif kind == "swap" and len(lines) > 2:
        i, j = rng.randrange(len(lines) - 1), rng.randrange(len(lines) - 1)
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "delete-talos":
        tagged = [i for i, line in enumerate(lines) if "<!--" in line]
        if tagged:
            at = rng.choice(tagged)
            run.restored.discard(lines[at].rstrip("\r"))  # a person took it out: no rule
            run.by_hand.update(re.findall(r"\bid=(\w+)", lines[at]))
            del lines[at]
    elif kind == "crlf":
        lines = [ln if ln.endswith("\r") else ln + "\r" for ln in lines[:-1]] + lines[-1:]
    elif kind == "lf":
        lines = [ln.rstrip("\r") for ln in lines]
    elif kind == "no-final-newline" and lines and lines[-1] == "":
        lines.pop()
    run.log.append(f"{name}: hand {kind}")
    _write(path, lines)


def _step(rng: random.Random, homes: dict[str, Path], n: int, run: Run, hostile: bool) -> None:
    name = rng.choice(sorted(homes))
    home = homes[name]
    step = rng.choice(STEPS)
    run.log.append(f"{name}: {step}")
    if step == "remember":
        with Memory(home) as mem:
            mem.remember(f"{name} fact {n} about {rng.choice(WORDS)} things")
    elif step in ("keyed", "keyed-reflect"):
        key = rng.choice(["k1", "k2"] if step == "keyed" else ["k3", "k4"])
        with Memory(home) as mem:
            mem.remember(
                f"{key} value {n} {rng.choice(WORDS)}",
                key=key,
                source="user" if step == "keyed" else "reflect",
                observed=dt.date(2026, 1, rng.randint(1, 3)),
            )
    elif step == "reflect":
        with Memory(home) as mem:
            mem.remember(f"reflected {n} on {rng.choice(WORDS)}", source="reflect")
    elif step == "forget":
        tagged = [ln.rstrip("\r") for ln in _lines(home / "memory.md") if "<!-- reflect " in ln]
        if tagged:
            line = rng.choice(tagged)
            with Memory(home) as mem:
                if mem.forget_records([("fact", line[2 : line.index(" <!--")])]):
                    run.forgotten.add(line)
                    run.restored.discard(line)
    elif step == "recall":
        with Memory(home) as mem:
            mem.recall(rng.choice(WORDS))
    elif step == "restore" and run.forgotten:
        line = rng.choice(sorted(run.forgotten))
        rid = re.search(r"id=(\S+)", line)
        with contextlib.suppress(TalosError), Memory(home) as mem:
            mem.restore(rid.group(1) if rid else "")
            run.forgotten.discard(line)
            run.restored.add(line)
    elif step == "hand":
        _hand(rng, home, name, n, run, hostile)
    elif step == "sync":
        res = sync(resolve_paths(home))
        if res.stopped:
            run.problems.append(f"step {n}: sync of {name} stopped: {res.stopped}")


def _forgets_standing(home: Path) -> set[str]:
    """The lines a committed forget took out that no restore names in its ``undoes`` (a
    restore lifts only the forgets its device knew of: one made at the same time on another
    device stands, design §12.3)."""
    done = settled(resolve_paths(home))
    lifted = {t for e in done if e.get("op") == "restore" for t in e.get("undoes") or []}
    return {
        str(e["before"])
        for e in done
        if e.get("op") == "forget" and e.get("before") and e.get("txn") not in lifted
    }


def check(homes: dict[str, Path], run: Run) -> None:
    """Sync every clone until quiet, then check the invariants (module docstring)."""
    for _ in range(3):
        for name, home in homes.items():
            try:
                res = sync(resolve_paths(home))
            except TalosError as e:
                run.problems.append(f"final sync of {name}: {e}")
                continue
            if res.stopped:
                run.problems.append(f"final sync of {name} stopped: {res.stopped}")
    texts = {name: (home / "memory.md").read_bytes() for name, home in homes.items()}
    if len(set(texts.values())) != 1:
        run.problems.append("memory.md differs between clones")
    first = next(iter(texts.values())).decode("utf-8", "surrogateescape")
    lines = [ln.rstrip("\r") for ln in first.split("\n")]
    present = set(lines)
    run.problems += [f"a person's line lost: {ln}" for ln in run.person if ln not in present]
    run.problems += [f"a forgotten line is back: {ln}" for ln in run.forgotten if ln in present]
    open_forgets = _forgets_standing(next(iter(homes.values())))
    run.problems += [
        f"a restored line is gone: {ln}"
        for ln in run.restored
        if "key=" not in ln  # a keyed one may be superseded since
        and ln not in present
        and ln not in open_forgets  # forgotten on a device the restore did not know of
    ]
    run.problems += [f"a forget stands, its line is there: {ln}" for ln in open_forgets & present]
    ids: dict[str, int] = {}
    for ln in lines:
        for rid in re.findall(r"\bid=(\w+)", ln):
            ids[rid] = ids.get(rid, 0) + 1
    run.problems += [f"record {rid} is in memory.md {k} times" for rid, k in ids.items() if k > 1]
    for name, home in homes.items():
        own = resolve_paths(home).device_dir / "audit.jsonl"
        if not own.exists():
            continue
        mine = own.read_bytes()
        for other, there in homes.items():
            copy = resolve_paths(there).state_dir / "devices" / own.parent.name / "audit.jsonl"
            if not copy.exists() or not copy.read_bytes().startswith(mine):
                run.problems.append(f"the audit log of {name} is not whole on {other}")
    views, conflicts = set(), set()
    for home in homes.values():
        with Memory(home) as mem:
            views.add(tuple(sorted(n.raw for n in mem.nodes() if n.kind == "fact")))
            conflicts.add(tuple(sorted((s, k, len(r)) for s, k, r in mem.conflicts())))
    for name, home in homes.items():  # doctor blames on outside edits only the person's
        edits = outside_edits(resolve_paths(home), resolve_paths(home).memory_file)
        run.problems += [
            f"doctor on {name}: {e.kind} {e.id}, no person's edit"
            for e in edits
            if e.kind in ("missing", "back") and e.id not in run.by_hand
        ]
    if len(views) != 1:
        run.problems.append("the views differ between clones")
    if len(conflicts) != 1:
        run.problems.append(f"the conflicts differ between clones: {sorted(conflicts)}")


def one(seed: int, steps: int, hostile: bool, tmp: Path) -> Run:
    """One seed's run in ``tmp``; returns it with its problems."""
    rng = random.Random(seed)
    homes = clones(tmp, ["a", "b", "c"])
    run = Run()
    for n in range(1, steps + 1):
        _step(rng, homes, n, run, hostile)
    check(homes, run)
    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", type=int, default=20, help="how many seeds (default 20)")
    ap.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    ap.add_argument("--steps", type=int, default=60, help="steps per seed (default 60)")
    ap.add_argument("--hostile", action="store_true", help="also CRLF, no final newline, bytes")
    args = ap.parse_args()
    os.environ.pop("TALOS_DEVICE", None)
    started, bad = time.perf_counter(), 0
    for seed in range(args.first, args.first + args.seeds):
        with tempfile.TemporaryDirectory(prefix=f"talos-sync-{seed}-") as tmp:
            run = one(seed, args.steps, args.hostile, Path(tmp))
        if run.problems:
            bad += 1
            print(f"seed {seed}: {len(run.problems)} problems")
            for p in run.problems[:5]:
                print("  ", p)
    took = time.perf_counter() - started
    print(f"{args.seeds} seeds x {args.steps} steps: {bad} with a problem ({took:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
