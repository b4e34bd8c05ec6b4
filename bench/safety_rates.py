"""Catch rate and false positives of the safety classes, before and after, side by side.

Positives are the labelled sets of the tests (``tests/injections_labelled.py``: instructions
addressed to the model, by class; ``tests/secrets_labelled.py``: credentials); negatives are
real conversation text, every distinct line of the bench sets (LoCoMo turns, MADial events zh
and en, MemoryBank pairs: ``bench/datasets.py``), and the look-alikes of the labelled sets. For
each side it reports:

* instructions: the share of the labelled instructions the fact filter withholds
  (``talos.safety.keep_fact``), overall and for the classes of the latest hostile pass, and
  of a held-out set never tuned on (``bench/safety_heldout.py``);
* credentials: the share of labelled (and held-out) secrets gone from the masked text
  (``mask_secrets``), and the look-alikes dropped;
* on each bench set: the share of lines the fact filter drops, the share masking changes, and
  the share an episode would withhold (the rules about words, design §8.4) — all false
  positives on ordinary talk;
* the cost: milliseconds per 1,000 LoCoMo lines of ``keep_fact`` (caches emptied, median of
  ``--repeat``), and of reading 1,000 synthetic sessions into episodes
  (``talos.sources.sessions.load_episodes``, the work the index build does per session).

"Before" is the code of a git revision (``--before``, default ``main``), extracted with ``git
archive`` to a temporary folder; "after" is this tree. Each side runs in its own process on the
same sets, the two alternating ``--rounds`` times in one run (costs are the median of the
rounds: a shared machine's load hits both sides):

    python3 bench/safety_rates.py --data ../shared/bench
    python3 bench/safety_rates.py --data ../shared/bench --before 20f1a76 --sessions 1000

Only counts are printed (LoCoMo is research-use only: ``--show`` prints flagged lines to look at,
never to commit).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: The instruction classes of the latest hostile pass (``tests/injections_labelled.py``).
LATEST = frozenset(
    {"role tags", "authority", "permissions", "split words", "from now on", "paraphrase"}
    | {f"override {c}" for c in "hi ar bn ur id mr te tr ta vi sw nl pl uk it".split()}  # noqa: SIM905
)
#: The prose rules an episode is withheld for (design §8.4).
PROSE = frozenset({"addresses the model", "claims authority"})


def _sessions(folder: Path, n: int) -> None:
    """``n`` synthetic Claude Code transcripts of ~50 KB each (a request, 20 turns with tool
    results of 2 KB, a last answer) in ``folder``."""
    import random

    rng = random.Random(1)
    words = "deploy billing staging cache index test fix refactor docs parser query".split()  # noqa: SIM905
    folder.mkdir(parents=True, exist_ok=True)

    def said(k: int) -> str:
        return " ".join(rng.choice(words) for _ in range(k))

    for i in range(n):
        lines: list[dict[str, Any]] = [
            {
                "type": "user",
                "timestamp": "2026-11-30T09:00:00Z",
                "message": {"role": "user", "content": said(12)},
            }
        ]
        for _ in range(20):
            lines.append(
                {
                    "type": "assistant",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": said(40)}],
                    },
                }
            )
            lines.append(
                {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "content": "x" * 2000}],
                    },
                }
            )
        lines.append(
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": said(50)}]},
            }
        )
        text = "".join(json.dumps(o) + "\n" for o in lines)
        (folder / f"s{i:05d}.jsonl").write_text(text, encoding="utf-8")


def measure(data: Path, repeat: int, sessions: Path | None, show: int) -> dict[str, Any]:
    """The figures of the code on ``sys.path`` (one side), as a dict."""
    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT / "tests"))
    import datasets
    from injections_labelled import INJECTIONS
    from injections_labelled import ORDINARY as PROSE_LOOKALIKES
    from safety_heldout import HELD_OUT_INSTRUCTIONS, HELD_OUT_ORDINARY, HELD_OUT_SECRETS
    from secrets_labelled import LABELLED, ORDINARY

    from talos import safety
    from talos.safety import secrets

    out: dict[str, Any] = {"code": str(Path(safety.__file__).parent.parent.parent)}
    caught = [not safety.keep_fact(t) for _k, t in INJECTIONS]
    latest = [not safety.keep_fact(t) for k, t in INJECTIONS if k in LATEST]
    out["instructions"] = (sum(caught), len(caught))
    out["instructions latest"] = (sum(latest), len(latest))
    out["instruction look-alikes dropped"] = (
        sum(not safety.keep_fact(t) for t in PROSE_LOOKALIKES),
        len(PROSE_LOOKALIKES),
    )
    out["held-out instructions"] = (
        sum(not safety.keep_fact(t) for t in HELD_OUT_INSTRUCTIONS),
        len(HELD_OUT_INSTRUCTIONS),
    )
    out["secrets"] = (sum(s not in secrets.mask_secrets(t) for t, s in LABELLED), len(LABELLED))
    out["held-out secrets"] = (
        sum(s not in secrets.mask_secrets(t) for t, s in HELD_OUT_SECRETS),
        len(HELD_OUT_SECRETS),
    )
    out["held-out ordinary dropped"] = (
        sum(not safety.keep_fact(t) for t in HELD_OUT_ORDINARY),
        len(HELD_OUT_ORDINARY),
    )
    out["secret look-alikes masked"] = (
        sum(secrets.mask_secrets(t) != t for t in ORDINARY),
        len(ORDINARY),
    )
    sets = {
        ds.name: list(dict.fromkeys(it.text for s in ds.stores for it in s.items))
        for ds in datasets.load_all(data)
    }
    for name, lines in sets.items():
        dropped = [ln for ln in lines if not safety.keep_fact(ln)]
        masked = [ln for ln in lines if secrets.mask_secrets(ln) != ln]
        prose = [ln for ln in lines if any(f.reason in PROSE for f in safety.scan_text(ln))]
        out[f"{name} dropped"] = (len(dropped), len(lines))
        out[f"{name} masked"] = (len(masked), len(lines))
        out[f"{name} episode withheld"] = (len(prose), len(lines))
        for ln in (dropped + masked)[:show]:
            print("    ", safety.instruction_reasons(ln), file=sys.stderr)
    lines = sets.get("locomo") or next(iter(sets.values()))
    runs = []
    for _ in range(repeat):
        safety.text_reasons.cache_clear()
        secrets.mask_secrets.cache_clear()
        t = time.perf_counter()
        for ln in lines:
            safety.keep_fact(ln)
        runs.append((time.perf_counter() - t) * 1e6 / len(lines))
    out["keep_fact ms per 1,000 lines"] = statistics.median(runs)
    if sessions is not None:
        from talos.sources.sessions import load_episodes, session_files

        n = len(session_files(sessions))
        runs = []
        for _ in range(repeat):
            secrets.mask_secrets.cache_clear()
            safety.text_reasons.cache_clear()
            t = time.perf_counter()
            load_episodes(sessions)
            runs.append((time.perf_counter() - t) * 1e6 / n)
        out["episodes ms per 1,000 sessions"] = statistics.median(runs)
        try:
            from talos.scan import scan_sessions
        except ImportError:
            scan_sessions = None
        if scan_sessions is not None:
            t = time.perf_counter()
            scan_sessions(sessions)
            out["scan ms per 1,000 sessions"] = (time.perf_counter() - t) * 1e6 / n
    return out


def _rate(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.0f}"
    if isinstance(v, list | tuple):
        k, n = v
        return f"{k}/{n} ({k / n:.1%})" if n else "0/0"
    return "n/a"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "bench")
    ap.add_argument("--before", default="main", help="git revision measured as 'before'")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3, help="alternating runs of the two sides")
    ap.add_argument("--sessions", type=int, default=0, help="synthetic sessions to time")
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sessions-dir", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.data, args.repeat, args.sessions_dir, args.show)))
        return
    with tempfile.TemporaryDirectory(prefix="talos-safety-") as tmp:
        before = Path(tmp) / "before"
        before.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.before, "talos"],
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive.stdout, check=True)
        folder = None
        if args.sessions:
            folder = Path(tmp) / "sessions"
            _sessions(folder, args.sessions)
        runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for _ in range(args.rounds):  # the sides alternate: a load change hits both
            for label, path in (("before", before), ("after", ROOT)):
                cmd = [sys.executable, __file__, "--measure", "--data", str(args.data)]
                cmd += ["--repeat", str(args.repeat), "--show", str(args.show)]
                if folder is not None:
                    cmd += ["--sessions-dir", str(folder)]
                env = {**os.environ, "PYTHONPATH": str(path)}
                got = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
                runs[label].append(json.loads(got.stdout.strip().splitlines()[-1]))
                if got.stderr.strip():
                    print(got.stderr, file=sys.stderr)
        sides = {
            label: {
                k: statistics.median(r[k] for r in got) if isinstance(v, float) else v
                for k, v in got[0].items()
            }
            for label, got in runs.items()
        }
        shutil.rmtree(before, ignore_errors=True)
    print(f"| figure | before ({args.before}) | after |")
    print("| --- | ---: | ---: |")
    for key in sides["after"]:
        if key == "code":
            continue
        print(f"| {key} | {_rate(sides['before'].get(key))} | {_rate(sides['after'][key])} |")


if __name__ == "__main__":
    main()
