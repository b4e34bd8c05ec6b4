#!/usr/bin/env python3
"""Asks with time words: does a recall deliver the expected episode or fact, and nothing
outside the window the words name? (design §7.3)

Builds a home from ``bench/time_asks/home.json`` in a temporary folder — twelve Claude Code
transcripts of one project (``atlas``, a git root), each stamped with its date, and six facts
(five tagged with a date or a validity window, one untagged) — and asks every labelled ask of
``bench/time_asks/asks.json`` (50: English and Chinese, relative and absolute) through
``Memory.recall(ask, at=TODAY, k=10)`` in the scopes ``global`` and ``project:atlas``.

An ask passes when its time words were found, every expected row is delivered, and either
(``fallback`` false) every delivered row is in the window — an episode by its session's date,
a fact by its tag date or validity — or (``fallback`` true: nothing in the window) the block
says so on its second line.

    python3 bench/time_asks.py            # the table and the pass rate
    python3 bench/time_asks.py --json     # one JSON object

The set is talos's own (no third-party text); ``docs/benchmarks.md`` has the figures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent / "time_asks"
_TAG = re.compile(r"<!--\s*\w+\s+(\d{4}-\d{2}-\d{2})(.*?)-->")


def build(root: Path, spec: dict[str, Any]) -> tuple[Path, dict[str, str]]:
    """The home under ``root`` and each session file's day (``{path: YYYY-MM-DD}``)."""
    project = root / "code" / spec["project"]
    (project / ".git").mkdir(parents=True)
    folder = root / "claude" / "projects" / f"-code-{spec['project']}"
    folder.mkdir(parents=True)
    days: dict[str, str] = {}
    for i, (stamp, request, answer) in enumerate(spec["sessions"]):
        base = {"sessionId": f"s{i}", "cwd": str(project), "timestamp": stamp}
        lines = [
            {**base, "type": "user", "message": {"role": "user", "content": request}},
            {**base, "type": "assistant",
             "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]}},
        ]  # fmt: skip
        path = folder / f"{i:02d}-session.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        days[str(path)] = stamp[:10]
    home = root / "home"
    home.mkdir()
    (home / "memory.md").write_text("\n".join(spec["memory"]) + "\n", encoding="utf-8")
    (home / "talos.toml").write_text(
        f'sessions_dir = ["{(root / "claude" / "projects").as_posix()}/**"]\nbudget = 8000\n',
        encoding="utf-8",
    )
    return home, days


def fact_in(line: str, start: dt.date, end: dt.date) -> bool:
    """Whether a memory.md line's tag date, or its validity window, meets ``[start, end)``."""
    m = _TAG.search(line)
    if m is None:
        return False
    born = dt.date.fromisoformat(m[1])
    if start <= born < end:
        return True
    fields = dict(f.split("=", 1) for f in m[2].split() if "=" in f)
    if "from" in fields or "until" in fields:
        lo = dt.date.fromisoformat(fields.get("from", m[1]))
        hi = dt.date.fromisoformat(fields["until"]) if "until" in fields else dt.date.max
        return lo < end and hi > start
    return False


def _find_window() -> Any:
    """This repository's :func:`talos.view.timewords.find_window`, loaded from its file, so the
    labels are judged the same way when ``talos`` is an older checkout (``PYTHONPATH``)."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "talos" / "view" / "timewords.py"
    spec = importlib.util.spec_from_file_location("_bench_timewords", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module.find_window


def run(limit: int | None = None) -> dict[str, Any]:
    from talos import Memory

    find_window = _find_window()

    spec = json.loads((HERE / "home.json").read_text(encoding="utf-8"))
    asks = json.loads((HERE / "asks.json").read_text(encoding="utf-8"))[:limit]
    today = dt.date.fromisoformat(spec["today"])
    lines = {re.sub(r"^- |\s*<!--.*$", "", x): x for x in spec["memory"]}
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        home, days = build(Path(tmp), spec)
        mem = Memory(home, scopes=["global", f"project:{spec['project']}"])
        mem.recall("warm the index", at=today)
        for item in asks:
            ask, fallback = item["ask"], item.get("fallback", False)
            window = find_window(ask, today)
            t0 = time.perf_counter()
            got = mem.recall(ask, at=today, k=10)
            ms = (time.perf_counter() - t0) * 1000
            texts = [r.node.text for r in got.picked]
            outside = []
            if window is not None:
                for r in got.picked:
                    n = r.node
                    if n.kind == "episode":
                        ins = any(
                            window.start <= dt.date.fromisoformat(days[m.path]) < window.end
                            for m in n.family()
                        )
                    else:
                        ins = fact_in(lines.get(n.text, ""), window.start, window.end)
                    if not ins:
                        outside.append(n.text)
            said = got.text.split("\n")[1] if got.text.count("\n") else ""
            noted = said.startswith(("(talos: nothing from", "（talos："))
            missing = [e for e in item["expect"] if e not in texts]
            ok = (
                window is not None
                and not missing
                and noted == fallback
                and (fallback or not outside)
            )
            out.append({
                "ask": ask, "ok": ok, "window": window.label() if window else None,
                "missing": missing, "outside": [] if fallback else outside,
                "fallback": noted, "rows": len(texts), "ms": round(ms, 1),
            })  # fmt: skip
    passed = sum(r["ok"] for r in out)
    zh = [r for r in out if re.search(r"[\u4e00-\u9fff]", r["ask"])]
    return {
        "asks": len(out),
        "passed": passed,
        "rate": round(passed / len(out), 3) if out else 0.0,
        "english": f"{sum(r['ok'] for r in out if r not in zh)}/{len(out) - len(zh)}",
        "chinese": f"{sum(r['ok'] for r in zh)}/{len(zh)}",
        "median_ms": sorted(r["ms"] for r in out)[len(out) // 2] if out else 0.0,
        "results": out,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--limit", type=int, default=None, help="the first N asks only")
    args = parser.parse_args()
    got = run(args.limit)
    if args.json:
        json.dump(got, sys.stdout, ensure_ascii=False, indent=1)
        print()
        return
    for r in got["results"]:
        mark = "ok  " if r["ok"] else "FAIL"
        extra = ""
        if r["missing"]:
            extra += f" missing={r['missing']}"
        if r["outside"]:
            extra += f" outside={r['outside']}"
        print(f"{mark} {r['ask']!r} [{r['window']}] rows={r['rows']}{extra}")
    print(
        f"passed {got['passed']}/{got['asks']} ({got['rate']:.1%}); English {got['english']}, "
        f"Chinese {got['chinese']}; median recall {got['median_ms']} ms"
    )


if __name__ == "__main__":
    main()
