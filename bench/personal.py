#!/usr/bin/env python3
"""A personal home, asked as its owner would ask it (bench/README "A personal home").

``bench/personal_home/`` is a home written for this bench as a real person's would be: Jonas,
a backend and platform engineer, with facts under headings (some scoped to his two projects,
``project:orbit`` and ``project:atlas``; a Chinese section about his Shanghai colleagues),
seven skills (``skills/deploy/SKILL.md``'s long body holds the rollback steps; a long
``engineering-guidelines`` skill that shares a word with most tasks), seven Claude Code
transcripts of the two projects, and a ``talos.toml`` that reads them and maps each project's
folder to its scope. ``bench/personal_labels.toml`` holds the asks (a prompt, the folder it is
typed in, a piece of the record the block must carry, and for some a record that must not
be there) and prompts the home holds nothing for; both were written with the home, before
anything was measured.

What it reports, on a copy of the home in a temporary folder:

* **asks, recall**: the asks whose block carries the expected record through
  :meth:`talos.Memory.recall` in the prompt's scopes (what ``talos recall`` and MCP give);
* **asks, hook**: the same prompts through the Claude Code hook's own route
  (:meth:`talos.hooks.context.Responder.answer` on a ``UserPromptSubmit`` event whose ``cwd``
  is the project's folder: the scope comes from ``[hooks.scopes]``);
* **misleading**: asks whose block carries the record labelled ``absent`` (recall route);
* **unrelated quiet**: unrelated prompts the hook gives no context for;
* **rows per 2,000 characters** of the asks' blocks (recall route: rows × 2,000 / characters,
  summed over the non-empty blocks);
* **top record share**: over an everyday set (the asks, then the coding chores of
  ``bench/chores.py`` in every folder of the home), the share of recalls whose block holds the
  record delivered most often, and which record that is (recall and hook routes; the next
  two as well).

    python3 bench/personal.py              # the table
    python3 bench/personal.py --show       # and every missed ask's block
    python3 bench/personal.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import tomllib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chores import CHORES_EN, CHORES_ZH

from talos import Memory
from talos.hooks.context import Responder
from talos.hooks.state import hook_state

__all__ = [
    "HOME",
    "LABELS",
    "PROJECTS",
    "Ask",
    "Unrelated",
    "carries",
    "copy_home",
    "hook_text",
    "load_labels",
    "main",
    "measure",
    "scopes_of",
]

BENCH = Path(__file__).resolve().parent
#: The home (memory.md, skills/, claude-projects/, talos.toml).
HOME = BENCH / "personal_home"
#: The labelled prompts.
LABELS = BENCH / "personal_labels.toml"
#: The home's projects: a prompt is typed in ``code/NAME`` of the home's copy, which
#: ``talos.toml``'s ``[hooks.scopes]`` maps to ``project:NAME``; "" is a folder of no project.
PROJECTS = ("", "orbit", "atlas")


@dataclass(frozen=True)
class Ask:
    """A prompt the home holds an answer for: ``expect`` is a piece of the record the block
    must carry, ``absent`` (may be "") of one it must not."""

    prompt: str
    project: str
    expect: str
    absent: str = ""


@dataclass(frozen=True)
class Unrelated:
    """A prompt the home holds nothing for."""

    prompt: str
    project: str


def load_labels(path: Path = LABELS) -> tuple[list[Ask], list[Unrelated]]:
    """The asks and unrelated prompts of ``path`` (the TOML of ``personal_labels.toml``).

    Raises:
        ValueError: an entry lacks ``prompt`` or (an ask) ``expect``, holds an unknown key,
            or names a project not in :data:`PROJECTS`.
    """
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    asks: list[Ask] = []
    unrelated: list[Unrelated] = []
    for kind, keys, out in (
        ("ask", {"prompt", "project", "expect", "absent"}, asks),
        ("unrelated", {"prompt", "project"}, unrelated),
    ):
        for i, entry in enumerate(raw.get(kind, [])):
            where = f"{path.name}: [[{kind}]] #{i + 1}"
            if set(entry) - keys:
                raise ValueError(f"{where}: unknown keys {sorted(set(entry) - keys)}")
            if not str(entry.get("prompt", "")).strip():
                raise ValueError(f"{where}: no prompt")
            if entry.get("project", "") not in PROJECTS:
                raise ValueError(f"{where}: project {entry.get('project')!r} not in {PROJECTS}")
            if kind == "ask":
                if not str(entry.get("expect", "")).strip():
                    raise ValueError(f"{where}: no expect")
                out.append(Ask(**{"project": "", **entry}))  # type: ignore[arg-type]
            else:
                out.append(Unrelated(**{"project": "", **entry}))  # type: ignore[arg-type]
    return asks, unrelated


def copy_home(dest: Path) -> Path:
    """A copy of :data:`HOME` at ``dest/home`` (talos writes its state there), with the
    projects' folders ``code/orbit`` and ``code/atlas`` the hook events are typed in."""
    home = dest / "home"
    shutil.copytree(HOME, home)
    for p in PROJECTS:
        if p:
            (home / "code" / p).mkdir(parents=True, exist_ok=True)
    return home


def scopes_of(project: str) -> tuple[str, ...]:
    """The scopes a prompt typed in ``project``'s folder is recalled in (as the hook's
    ``[hooks.scopes]`` maps it)."""
    return ("global", f"project:{project}") if project else ("global",)


def _flat(text: str) -> str:
    """``text`` with every whitespace run one space (a block wraps nothing, but a skill body
    keeps its own line breaks)."""
    return " ".join(text.split())


def carries(block: str, piece: str) -> bool:
    """Whether ``block`` holds ``piece`` (whitespace runs compared as one space)."""
    return bool(piece) and _flat(piece) in _flat(block)


def hook_text(responder: Responder, home: Path, prompt: str, project: str) -> str:
    """The context the Claude Code hook adds to ``prompt`` typed in ``project``'s folder
    (``additionalContext`` of its output; "" when it adds none)."""
    cwd = home / "code" / project if project else home
    event = {
        "session_id": "bench-personal",
        "transcript_path": str(home / "transcript.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    out = responder.answer("claude-code", event)
    if not out:
        return ""
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


@dataclass
class Result:
    """What :func:`measure` found (the module docstring says what each figure is)."""

    asks: int = 0
    unrelated: int = 0
    recall_hits: list[bool] = field(default_factory=list)
    hook_hits: list[bool] = field(default_factory=list)
    misled: list[str] = field(default_factory=list)
    quiet: list[bool] = field(default_factory=list)
    rows: int = 0
    chars: int = 0
    everyday: int = 0
    top_recall: list[tuple[str, int]] = field(default_factory=list)  # the 3 most frequent
    top_hook: list[tuple[str, int]] = field(default_factory=list)
    missed: list[tuple[str, str, str]] = field(default_factory=list)  # route, prompt, block
    loud: list[tuple[str, str]] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        """The figures as one JSON object."""
        return {
            "asks": self.asks,
            "asks_recall": sum(self.recall_hits),
            "asks_hook": sum(self.hook_hits),
            "misled": self.misled,
            "unrelated": self.unrelated,
            "unrelated_quiet": sum(self.quiet),
            "rows_per_2000": round(self.rows * 2000 / self.chars, 2) if self.chars else 0.0,
            "everyday": self.everyday,
            "top_records_recall": [{"key": k, "blocks": n} for k, n in self.top_recall],
            "top_records_hook": [{"key": k, "blocks": n} for k, n in self.top_hook],
        }


def _everyday(asks: Sequence[Ask]) -> list[tuple[str, str]]:
    """The everyday set: each ask in its project, then every chore in each of the home's
    folders (a chore is typed wherever one works)."""
    chores = [(c, p) for c in (*CHORES_EN, *CHORES_ZH) for p in PROJECTS]
    return [(a.prompt, a.project) for a in asks] + chores


def measure(
    home: Path,
    asks: Sequence[Ask],
    unrelated: Sequence[Unrelated],
    progress: Callable[[str], None] | None = None,
) -> Result:
    """Every figure of the module docstring on ``home`` (a :func:`copy_home` copy)."""
    res = Result(asks=len(asks), unrelated=len(unrelated))
    mems: dict[tuple[str, ...], Memory] = {}

    def recall(prompt: str, project: str) -> tuple[str, list[str]]:
        sc = scopes_of(project)
        if sc not in mems:
            mems[sc] = Memory(home, scopes=sc)
        got = mems[sc].recall(prompt)
        return got.text, [r.key for r in got.picked]

    state = hook_state(str(home))
    responder = Responder(state.home, state.settings)
    try:
        for a in asks:
            text, keys = recall(a.prompt, a.project)
            hit = carries(text, a.expect)
            res.recall_hits.append(hit)
            if not hit:
                res.missed.append(("recall", a.prompt, text))
            if a.absent and carries(text, a.absent):
                res.misled.append(a.prompt)
            if text:
                res.rows += len(keys)
                res.chars += len(text)
            hooked = hook_text(responder, home, a.prompt, a.project)
            hit = carries(hooked, a.expect)
            res.hook_hits.append(hit)
            if not hit:
                res.missed.append(("hook", a.prompt, hooked))
        for u in unrelated:
            hooked = hook_text(responder, home, u.prompt, u.project)
            res.quiet.append(not hooked)
            if hooked:
                res.loud.append((u.prompt, hooked))
        seen_recall: Counter[str] = Counter()
        seen_hook: Counter[str] = Counter()
        everyday = _everyday(asks)
        res.everyday = len(everyday)
        for prompt, project in everyday:
            _text, keys = recall(prompt, project)
            seen_recall.update(set(keys))
            hooked = hook_text(responder, home, prompt, project)
            seen_hook.update(_hook_keys(hooked))
        if progress:
            progress(f"{res.everyday} everyday prompts")
        res.top_recall = _top(seen_recall)
        res.top_hook = _top(seen_hook)
    finally:
        responder.close()
        for m in mems.values():
            m.close()
    return res


def _hook_keys(block: str) -> set[str]:
    """The rows of a hook block, by their first line (``- [kind] …``): the hook's output
    carries no keys."""
    return {line[:90] for line in block.splitlines() if line.startswith("- [")}


def _top(seen: Counter[str]) -> list[tuple[str, int]]:
    """The three most frequent records and their counts (ties: the first seen)."""
    return seen.most_common(3)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bench (``--show``: the missed asks' blocks; ``--json PATH``: the figures)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", action="store_true", help="print every missed ask's block")
    ap.add_argument("--json", type=Path, help="write the figures to this file")
    args = ap.parse_args(argv)
    asks, unrelated = load_labels()
    with tempfile.TemporaryDirectory(prefix="talos-personal-") as tmp:
        home = copy_home(Path(tmp))
        res = measure(home, asks, unrelated)
    s = res.summary()
    n = res.asks
    print(f"personal home: {n} asks, {res.unrelated} unrelated prompts")
    print(f"  asks delivering the expected record, recall : {s['asks_recall']}/{n}")
    print(f"  asks delivering the expected record, hook   : {s['asks_hook']}/{n}")
    print(f"  asks misled (the 'absent' record delivered): {len(res.misled)} {res.misled}")
    print(f"  unrelated prompts quiet through the hook    : {s['unrelated_quiet']}/{res.unrelated}")
    print(f"  rows per 2,000 characters (recall)          : {s['rows_per_2000']}")
    for route, top in (("recall", res.top_recall), ("hook", res.top_hook)):
        for i, (key, count) in enumerate(top):
            share = count / res.everyday if res.everyday else 0.0
            label = f"top record share, {route}" if i == 0 else f"  {i + 1}."
            print(f"  {label:27}: {count}/{res.everyday} = {share:.0%}  {key[:60]!r}")
    if args.show:
        for route, prompt, block in res.missed:
            print(f"\n--- missed ({route}): {prompt}\n{block or '(empty)'}")
        for prompt, block in res.loud:
            print(f"\n--- unrelated, not quiet: {prompt}\n{block}")
    if args.json:
        args.json.write_text(json.dumps(s, ensure_ascii=False, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
