"""``talos init``: create a home's layout, optionally with the bundled example (design §2)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from talos import fsutil
from talos.cli.common import HomeOpt, JsonOpt, checked_paths, emit, err, handle_errors
from talos.cli.transcripts import offer_transcripts
from talos.sources.agent_folders import AGENTS
from talos.sources.sessions import sessions_root

__all__ = ["example_dir", "init"]


def example_dir() -> Path:
    """Folder holding ``memory.md.example`` and ``skills/``: inside the installed package, or
    the repository root when running from a source checkout.

    Raises:
        FileNotFoundError: neither location has the example (a broken install).
    """
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_example", here.parent):
        if (candidate / "memory.md.example").is_file():
            return candidate
    raise FileNotFoundError("the bundled example is missing; reinstall talos")


def _not_created(path: Path, home_real: str) -> str | None:
    """Why ``init`` does not create ``path``: it is a pattern (``**``, ``*``, ``?``, ``[``:
    ``sessions_dir = "~/.claude/projects/**"`` made a folder named ``**`` inside the other
    agent's folder, issue 12.7), or it lies outside the home (talos creates nothing there)."""
    if fsutil.outside(path, home_real):
        return "outside the home: talos creates nothing there; create it yourself if you meant it"
    if any(ch in os.path.relpath(os.path.realpath(path), home_real) for ch in "*?["):
        return "a pattern, not a folder: create the folders it should match yourself"
    return None


@handle_errors("init")
def init(
    example: Annotated[
        bool, typer.Option("--example", help="Also copy the example memory.md and sample skills.")
    ] = False,
    git: Annotated[
        bool,
        typer.Option(
            "--git",
            help="Also make the home a git repository for talos sync: git init (unless it is "
            "in one), .gitignore (caches stay local) and .gitattributes (memory.md merges by "
            "talos's rules).",
        ),
    ] = False,
    transcripts: Annotated[
        bool,
        typer.Option(
            "--transcripts/--no-transcripts",
            help="Also add the agents' own transcript folders found here (Claude Code, Codex) "
            "to sessions_dir in talos.toml, so past sessions are recalled.",
        ),
    ] = True,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a home's files and folders; never overwrites a file.

    Creates memory.md, skills/ and .talos/sessions/. The home is --home, else $TALOS_HOME, else the
    platform's data folder for talos. --example also copies the bundled example memory.md and sample
    skills, so recall has something to find at once. Nothing is created outside the home or from a
    pattern (a talos.toml path elsewhere, sessions_dir = "DIR/**"): such paths are listed as not
    created. What is already there is listed as kept, so a second init changes nothing and says so.

    The agents' own transcript folders that exist (Claude Code's ~/.claude/projects, Codex's
    ~/.codex/sessions, or under $CLAUDE_CONFIG_DIR / $CODEX_HOME) are added to sessions_dir in
    talos.toml, your lines kept; remove an entry to stop reading it. --no-transcripts leaves
    talos.toml alone.

    --git prepares the home for one memory on several machines (talos sync): it runs git init
    unless the home is already in a repository, adds talos's lines to .gitignore and
    .gitattributes (the person's own lines are kept) and registers talos's merge driver for
    memory.md in the repository's config.

    Examples:
      talos init
      talos init --example --home ./my-home
      talos init --git --home ~/memory
    """
    paths = checked_paths(home)
    created: list[str] = []
    kept: list[str] = []
    skipped: list[dict[str, str]] = []
    if not paths.home.is_dir():
        paths.home.mkdir(parents=True, exist_ok=True)
        created.append(str(paths.home))
    home_real = os.path.realpath(paths.home)

    def allowed(path: Path) -> bool:
        why = _not_created(path, home_real)
        if why is not None:
            skipped.append({"path": str(path), "reason": why})
        return why is None

    sessions = dict.fromkeys(sessions_root(d)[0] for d in paths.sessions_dirs)  # each of a list
    folders = (paths.skills_dir, *sessions, paths.state_dir)
    there = [f.is_dir() for f in folders]  # before any is made (.talos/sessions makes .talos)
    for folder, was in zip(folders, there, strict=True):
        if was:
            if not fsutil.outside(folder, home_real):  # another agent's folder is not ours
                kept.append(str(folder))
        elif folder.is_dir():
            continue
        elif allowed(folder):
            folder.mkdir(parents=True, exist_ok=True)
            created.append(str(folder))
    src = example_dir() if example else None
    mem = paths.memory_file
    if os.path.lexists(mem):
        target = mem.resolve() if mem.is_symlink() else mem  # a dotfiles link: write through it
        if src is not None and target.is_file() and target.stat().st_size == 0:
            fsutil.atomic_write_bytes(target, (src / "memory.md.example").read_bytes())
            created.append(str(mem))
        else:
            kept.append(str(mem))
    elif allowed(mem):
        content = (src / "memory.md.example").read_bytes() if src is not None else b""
        fsutil.atomic_write_bytes(mem, content)
        created.append(str(mem))
    if src is not None and paths.skills_dir.is_dir():
        for skill in sorted((src / "skills").glob("*.md")):
            target = paths.skills_dir / skill.name
            if os.path.lexists(target):
                kept.append(str(target))
            else:
                fsutil.atomic_write_bytes(target, skill.read_bytes())
                created.append(str(target))
    if git:
        from talos.sync.git import git_init, write_git_files

        if git_init(paths.home):
            created.append(str(paths.home / ".git"))
        changed, complete = write_git_files(paths)
        created += changed
        kept += complete
    found = None
    if transcripts and as_json:
        found = offer_transcripts(paths, list(AGENTS), "talos init", False, as_json)
    if as_json:
        data: dict[str, object] = {"home": str(paths.home), "created": created, "kept": kept}
        data = {**data, "not_created": skipped} if skipped else data
        emit("init", {**data, "transcripts": found} if found is not None else data)
        return
    err.print(f"home: {paths.home}")
    for p in created:
        err.print(f"  created {p}")
    for p in kept:
        err.print(f"  kept existing {p}")
    for item in skipped:
        err.print(f"  not created {item['path']}: {item['reason']}")
    if not created and not skipped:
        err.print("  nothing to create: the home is already set up")
    if transcripts:
        offer_transcripts(paths, list(AGENTS), "talos init", False, as_json)
