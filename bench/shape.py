#!/usr/bin/env python3
"""The shape of the house: the limits the code base keeps, checked in one run.

Prints each rule with the figure found and ``ok`` or ``over``; exits 1 when any rule is
broken, so a script can branch on it. The rules: no module of ``talos/`` over 800 lines, no
class over 450, ``Memory`` at most 450; at most 15 modules at the top level of ``talos/``;
README.md at most 300 lines and bench/README.md at most 250; no test file named after a
round of work (``test_attack15``, ``_final``, ``_s20``); no strict xfail without a decision
(a ``reason`` that starts with ``decided:``).

Usage:
    python3 bench/shape.py            # the table
    python3 bench/shape.py --json     # the same figures for a machine
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: A test file named after a round of work, not a concern.
ROUND = re.compile(r"^test_(attack\d*|.*_(final|s\d+[a-z]?|round\d*))\.py$|^test_attack")


def lines(path: Path) -> int:
    """Lines of ``path`` (its newline count)."""
    return path.read_bytes().count(b"\n")


def classes(path: Path) -> list[tuple[str, int]]:
    """``(name, lines)`` of each class in ``path``, from its ``class`` line to its end."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.name, (node.end_lineno or node.lineno) - node.lineno + 1)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    ]


def strict_xfails(path: Path) -> list[str]:
    """Strict xfails of a test file without a decided reason, as ``file:line``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("xfail")):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        strict = kw.get("strict")
        reason = kw.get("reason")
        if isinstance(strict, ast.Constant) and strict.value is False:
            continue
        text = reason.value if isinstance(reason, ast.Constant) else ""
        if not (isinstance(text, str) and text.startswith("decided:")):
            out.append(f"{path.name}:{node.lineno}")
    return out


def measure() -> list[tuple[str, str, bool]]:
    """``(rule, figure, kept)`` for each rule of the module docstring."""
    modules = sorted((ROOT / "talos").rglob("*.py"))
    big = [(str(p.relative_to(ROOT)), lines(p)) for p in modules if lines(p) > 800]
    found = [(f"{p.relative_to(ROOT)}:{n}", k) for p in modules for n, k in classes(p)]
    wide = [(c, k) for c, k in found if k > 450]
    memory = max((k for c, k in found if c.endswith("memory.py:Memory")), default=0)
    top = [p.name for p in (ROOT / "talos").glob("*.py") if p.name not in ("__init__.py",)]
    tests = sorted((ROOT / "tests").glob("test_*.py"))
    rounds = [p.name for p in tests if ROUND.match(p.name)]
    xfails = [x for p in tests for x in strict_xfails(p)]
    readme, bench = lines(ROOT / "README.md"), lines(ROOT / "bench" / "README.md")

    def listed(items: list, what: str) -> str:
        return f"{len(items)} {what}" + (f": {', '.join(map(str, items[:8]))}" if items else "")

    return [
        ("modules over 800 lines", listed(big, "modules"), not big),
        ("classes over 450 lines", listed(wide, "classes"), not wide),
        ("Memory at most 450 lines", f"{memory} lines", memory <= 450),
        ("top-level modules in talos/ at most 15", f"{len(top)} modules", len(top) <= 15),
        ("README.md at most 300 lines", f"{readme} lines", readme <= 300),
        ("bench/README.md at most 250 lines", f"{bench} lines", bench <= 250),
        ("test files named after a round", listed(rounds, "files"), not rounds),
        ("strict xfails without a decision", listed(xfails, "xfails"), not xfails),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args()
    rows = measure()
    if a.json:
        print(json.dumps([{"rule": r, "found": f, "ok": k} for r, f, k in rows], indent=2))
    else:
        for rule, found, kept in rows:
            print(f"{'ok  ' if kept else 'over'}  {rule:<42} {found}")
    sys.exit(0 if all(k for _r, _f, k in rows) else 1)


if __name__ == "__main__":
    main()
