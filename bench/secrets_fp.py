"""Issue 13 items 3 and 6: what the fact filter and the secret masking do to ordinary text.

For every bench text (LoCoMo turns, MADial events zh/en, MemoryBank pairs; each distinct line
once) and the project's example home (``memory.md.example`` line by line, each of ``skills/``
whole, scanned as a skill) it reports the share the default fact filter drops
(``talos.safety.keep_fact``) and the share that ``talos.safety.secrets.mask_secrets`` changes — on
ordinary text both are false positives. On the labelled synthetic set of
``tests/secrets_labelled.py`` it reports the true-positive rate (secret gone from the masked
text) and the false-positive rate on its ordinary look-alikes; on the labelled instructions
of ``tests/injections_labelled.py`` the catch rate (withheld by the fact filter) per class and
the false-positive rate on its look-alikes.

Then the cost per 1,000 lines of both, median of ``--repeat`` runs with the caches emptied,
and the one-off first-use costs (confusables table, detect-secrets import).

To measure older code with the same sets, run this script with that code first on the path:
``git archive main talos | tar -x -C /tmp/talos-main``, then ``PYTHONPATH=/tmp/talos-main
python3 bench/secrets_fp.py``.

``--baseline FILE`` loads an older ``talos/safety.py`` (e.g. ``git show main:talos/safety.py
> /tmp/old_safety.py``) and measures it side by side in the same run.

    python3 bench/secrets_fp.py --data ../shared/bench
    python3 bench/secrets_fp.py --data ../shared/bench --baseline /tmp/old_safety.py

Only counts are printed by default; ``--show N`` prints up to N flagged lines per set (to look
at, never to commit: LoCoMo is research-use only).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

import datasets  # noqa: E402
from injections_labelled import INJECTIONS  # noqa: E402
from injections_labelled import ORDINARY as ORDINARY_PROSE  # noqa: E402
from secrets_labelled import LABELLED, ORDINARY  # noqa: E402

from talos import safety  # noqa: E402
from talos.safety import secrets  # noqa: E402


def load_baseline(path: Path) -> ModuleType:
    """An older safety module loaded under its own name (it imports only ``talos.warn``)."""
    spec = importlib.util.spec_from_file_location("baseline_safety", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["baseline_safety"] = mod
    spec.loader.exec_module(mod)
    return mod


def clear(mod: ModuleType) -> None:
    """Empty the per-text caches of a safety module (and of talos.safety.secrets)."""
    for name in ("_text_reasons", "text_reasons", "mask_secrets"):
        fn = getattr(mod, name, None)
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()
    secrets.mask_secrets.cache_clear()


def per_1000(fn: Callable[[str], object], lines: list[str], mod: ModuleType, repeat: int) -> float:
    """Median milliseconds per 1,000 lines of ``fn`` over ``lines``, caches emptied each run."""
    runs = []
    for _ in range(repeat):
        clear(mod)
        t = time.perf_counter()
        for line in lines:
            fn(line)
        runs.append((time.perf_counter() - t) * 1000 / len(lines) * 1000)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "bench")
    ap.add_argument("--baseline", type=Path, help="an older talos/safety.py to compare")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--show", type=int, default=0, help="print up to N flagged lines per set")
    args = ap.parse_args()

    t = time.perf_counter()
    safety._confusable_map()
    confusables_ms = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    secrets._vendor_patterns()
    vendor_ms = (time.perf_counter() - t) * 1000
    mods = [("this", safety)]
    if args.baseline:
        mods.insert(0, ("baseline", load_baseline(args.baseline)))

    sets = [
        (ds.name, list(dict.fromkeys(it.text for s in ds.stores for it in s.items)))
        for ds in datasets.load_all(args.data)
    ]
    if not sets:
        sys.exit(f"no bench data under {args.data}")
    example = (ROOT / "memory.md.example").read_text(encoding="utf-8").splitlines()
    sets.append(("example memory.md", [ln for ln in example if ln.strip()]))
    skills = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "skills").glob("*.md"))]
    print("| set | lines | code | dropped by the fact filter | changed by masking |")
    print("| --- | ---: | --- | ---: | ---: |")
    for name, lines in sets:
        for label, mod in mods:
            clear(mod)
            dropped = [ln for ln in lines if not mod.keep_fact(ln)]
            masked = [ln for ln in lines if mod.mask_secrets(ln) != ln]
            n = len(lines)
            print(
                f"| {name} | {n} | {label} | {len(dropped)} ({len(dropped) / n:.2%})"
                f" | {len(masked)} ({len(masked) / n:.2%}) |"
            )
            for ln in (dropped + masked)[: args.show]:
                print("    ", mod.instruction_reasons(ln), mod.mask_secrets(ln)[:120])
    for label, mod in mods:
        flagged_skills = [t for t in skills if mod.scan_text(t)]
        changed = [t for t in skills if mod.mask_secrets(t) != t]
        print(
            f"| example skills/ (whole files) | {len(skills)} | {label} | "
            f"{len(flagged_skills)} flagged by the skill scan | {len(changed)} |"
        )

    print("\n| labelled instructions | code | withheld by the fact filter | kept look-alikes |")
    print("| --- | --- | ---: | ---: |")
    for label, mod in mods:
        clear(mod)
        by_class: dict[str, list[bool]] = {}
        for kind, text in INJECTIONS:
            by_class.setdefault(kind, []).append(not mod.keep_fact(text))
        caught = sum(sum(v) for v in by_class.values())
        per = ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in by_class.items())
        fp = sum(not mod.keep_fact(text) for text in ORDINARY_PROSE)
        print(
            f"| {len(INJECTIONS)} instructions ({per}), {len(ORDINARY_PROSE)} ordinary | {label} "
            f"| {caught}/{len(INJECTIONS)} ({caught / len(INJECTIONS):.0%}) | "
            f"{len(ORDINARY_PROSE) - fp}/{len(ORDINARY_PROSE)} kept ({fp} dropped) |"
        )

    print("\n| labelled set | code | true positives | false positives on ordinary look-alikes |")
    print("| --- | --- | ---: | ---: |")
    for label, mod in mods:
        clear(mod)
        tp = sum(secret not in mod.mask_secrets(text) for text, secret in LABELLED)
        fp = sum(mod.mask_secrets(text) != text for text in ORDINARY)
        flagged = sum(not mod.keep_fact(text) for text, _s in LABELLED)
        print(
            f"| {len(LABELLED)} secrets, {len(ORDINARY)} ordinary | {label} | "
            f"{tp}/{len(LABELLED)} ({tp / len(LABELLED):.0%}); fact withheld {flagged} | "
            f"{fp}/{len(ORDINARY)} ({fp / len(ORDINARY):.0%}) |"
        )

    en = next((ls for n, ls in sets if n == "locomo"), sets[0][1])
    zh = next((ls for n, ls in sets if n == "madial-zh"), sets[-1][1])
    print(
        f"\n| cost, ms per 1,000 lines (median of {args.repeat}) | code | keep_fact"
        " | mask_secrets |"
    )
    print("| --- | --- | ---: | ---: |")
    for set_name, lines in (("LoCoMo (English)", en), ("MADial zh (Chinese)", zh)):
        for label, mod in mods:
            kf = per_1000(mod.keep_fact, lines, mod, args.repeat)
            ms = per_1000(mod.mask_secrets, lines, mod, args.repeat)
            print(f"| {set_name}, {len(lines)} lines | {label} | {kf:.1f} | {ms:.1f} |")
    print(
        f"\nfirst use, once a process: confusables table {confusables_ms:.0f} ms, "
        f"detect-secrets import {vendor_ms:.0f} ms"
    )


if __name__ == "__main__":
    main()
