#!/usr/bin/env python3
"""How long ``talos mcp`` takes to answer ``initialize``, and its first tool call.

An MCP client spawns ``talos mcp`` and sends ``initialize`` at once; until the answer comes
the agent waits. Each side runs as a fresh process the way a client runs it: ``python -m
talos mcp --home HOME`` with this checkout on ``PYTHONPATH`` (with ``--before REV``, the same
on a ``git archive`` of REV, for a before/after from one run on one machine), fed
``initialize`` on stdin; the time is from the spawn to the answer's line on stdout, then to
the answer of a ``tools/call`` of ``recall`` sent right after. ``python -c "import
mcp.server.mcpserver"`` is timed too: the SDK's own import, the floor no change of talos's
can go under. The sides take turns on every run so machine noise hits all of them; numbers
are medians over ``--runs`` runs, with the CPU time the server had used when it answered
(``/proc``): on a loaded machine the wall time says more about the neighbours. The home is
a copy of the example home (``talos init --example``) per side, its index built once,
untimed.

Where the time goes: ``python -X importtime -m talos mcp --home HOME < /dev/null``.

Usage:
    python3 bench/mcp_start.py --before main --runs 7
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
RECALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "recall", "arguments": {"query": "deploy region"}},
}


def _send(p: subprocess.Popen[bytes], msg: dict[str, object]) -> None:
    assert p.stdin is not None
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) process ``pid`` has used so far (Linux ``/proc``; NaN
    elsewhere): on a loaded machine the wall time says more about the neighbours."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve_once(src: Path, home: Path) -> tuple[float, float, float]:
    """Seconds from spawn to the ``initialize`` answer and to the first ``recall`` answer,
    and the CPU seconds the server had used when it answered ``initialize``."""
    env = dict(os.environ, PYTHONPATH=str(src))
    start = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-m", "talos", "mcp", "--home", str(home)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert p.stdout is not None and p.stdin is not None
    _send(p, INITIALIZE)
    line = p.stdout.readline()
    ready = time.perf_counter() - start
    cpu = cpu_seconds(p.pid)
    if b'"result"' not in line:
        raise SystemExit(f"{src}: no initialize answer: {line[:200]!r}")
    _send(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(p, RECALL)
    line = p.stdout.readline()
    answered = time.perf_counter() - start
    if b"eu-west-1" not in line:
        raise SystemExit(f"{src}: recall did not answer: {line[:200]!r}")
    p.stdin.close()
    p.wait(timeout=60)
    return ready, answered, cpu


def sdk_once() -> float:
    """Seconds of ``python -c "import mcp.server.mcpserver"``."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mcp.server.mcpserver"], check=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--before", metavar="REV", help="also time a git archive of REV")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"this": ROOT}
        if args.before:
            old = Path(tmp) / "before"
            old.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.before, "talos"],
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
            sides["before"] = old
        homes = {}
        for name, src in sides.items():
            home = Path(tmp) / f"home-{name}"
            env = dict(os.environ, PYTHONPATH=str(src))
            for cmd in (["init", "--example"], ["index"]):
                subprocess.run(
                    [sys.executable, "-m", "talos", *cmd, "--home", str(home)],
                    env=env,
                    check=True,
                    capture_output=True,
                )
            homes[name] = home
        for name, src in sides.items():  # untimed: bytecode, file cache
            serve_once(src, homes[name])
        times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in sides}
        sdk: list[float] = []
        for _ in range(args.runs):
            sdk.append(sdk_once())
            for name, src in sides.items():
                times[name].append(serve_once(src, homes[name]))
        print(f"import mcp.server.mcpserver alone: {median(sdk) * 1000:.0f} ms")
        for name, ts in times.items():
            ready = median(t for t, _, _ in ts) * 1000
            answered = median(a for _, a, _ in ts) * 1000
            cpu = median(c for _, _, c in ts) * 1000
            print(
                f"{name:7s} initialize answered {ready:.0f} ms ({cpu:.0f} ms of CPU), first "
                f"recall {answered:.0f} ms (median of {args.runs})"
            )
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
