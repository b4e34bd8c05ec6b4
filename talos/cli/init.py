"""``talos init``: create a home's layout, optionally with the bundled example (SPEC §2)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer

from talos.cli.common import HomeOpt, JsonOpt, checked_paths, emit, err, handle_errors

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


@handle_errors("init")
def init(
    example: Annotated[
        bool, typer.Option("--example", help="Also copy the example memory.md and sample skills.")
    ] = False,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a home's files and folders; never overwrites a file.

    Creates memory.md, skills/ and .talos/sessions/. The home is --home, else $TALOS_HOME, else the
    platform's data folder for talos. --example also copies the bundled example memory.md and sample
    skills, so recall has something to find at once.

    Examples:
      talos init
      talos init --example --home ./my-home
    """
    paths = checked_paths(home)
    created: list[str] = []
    kept: list[str] = []
    for folder in (paths.home, paths.skills_dir, paths.sessions_dir, paths.state_dir):
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            created.append(str(folder))
    src = example_dir() if example else None
    mem = paths.memory_file
    has_content = mem.is_file() and mem.stat().st_size > 0
    if src is not None and not has_content:
        shutil.copyfile(src / "memory.md.example", mem)
        created.append(str(mem))
    elif not mem.exists():
        mem.touch()
        created.append(str(mem))
    elif src is not None:
        kept.append(str(mem))
    if src is not None:
        for skill in sorted((src / "skills").glob("*.md")):
            target = paths.skills_dir / skill.name
            if target.exists():
                kept.append(str(target))
            else:
                shutil.copyfile(skill, target)
                created.append(str(target))
    if as_json:
        emit("init", {"home": str(paths.home), "created": created, "kept": kept})
        return
    err.print(f"home: {paths.home}")
    for p in created:
        err.print(f"  created {p}")
    for p in kept:
        err.print(f"  kept existing {p}")
