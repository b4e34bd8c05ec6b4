"""``talos scan``: what the safety scan keeps out of every route, and why (design §8.1, §8.2).

Exit codes: 0 when nothing is flagged, :data:`EXIT_FLAGGED` (4) when a skill, a file of the
skills tree, a memory.md line or a session is flagged or a file is refused — so a script can
branch on it — and 1 for usage or input errors, as for every command.
"""

from __future__ import annotations

from pathlib import Path

import typer

from talos.cli.common import (
    HomeOpt,
    JsonOpt,
    PlainOpt,
    checked_paths,
    emit,
    err,
    handle_errors,
)
from talos.render import shown
from talos.safety import mask_secrets
from talos.scan import scan_home

__all__ = ["EXIT_FLAGGED", "scan"]

#: Exit code of ``talos scan`` when something is flagged (0: clean, 1: usage or input error,
#: 3 is ``get``'s refusal).
EXIT_FLAGGED = 4


def _shown(path: str, home: Path) -> str:
    """``path`` relative to the home when it is inside it, else as given; a credential in it
    masked (a skill named after a token)."""
    try:
        return mask_secrets(Path(path).relative_to(home).as_posix())
    except ValueError:
        return mask_secrets(path)


@handle_errors("scan", listing=True)
def scan(home: HomeOpt = None, as_json: JsonOpt = False, plain: PlainOpt = False) -> None:
    """List what the safety scan flags (skills, facts, sessions) and why.

    A flagged skill or fact is left out of recall, explain, usage and dead on every call;
    this command shows what and why. It also lists the sessions whose text an episode
    withholds (a request, task or outcome addressed to the model) or masks (a credential),
    field by field, and the files talos refuses to read: what is not a regular file (a FIFO,
    a device), and skills or sessions that are links out of their folder. It reports the
    files (every scope's lines), not a view; it reads every session once, as building the
    index does. Reads only: nothing is written or moved.

    Exit code: 0 when clean, 4 when something is flagged, 1 on a usage or input error.

    Examples:
      talos scan
      talos scan --json
    """
    paths = checked_paths(home)
    report = scan_home(paths.memory_file, paths.skills_dir, paths.sessions_dirs, sessions=True)
    if as_json:
        # ok follows the exit code, as everywhere: false when something was flagged (exit 4).
        emit(
            "scan",
            report.to_json(),
            ok=report.clean,
            error=None if report.clean else "something was flagged",
        )
    elif report.clean:
        err.print("nothing flagged")
    else:
        from talos.cli.listing import Column, Listing, to_pipe

        sep = "; " if plain or to_pipe() else "\n"  # a pipe's record is one line
        table = Listing(
            "flagged by the safety scan (left out of every route)",
            [Column("kind"), Column("where", "wrap"), Column("reasons", "wrap")],
        )
        for s in report.skills:
            table.add(s.kind, shown(_shown(s.path, paths.home)), sep.join(map(shown, s.reasons)))
        for f in report.facts:
            where = shown(f"{_shown(f.path, paths.home)}:{f.line}")
            table.add("fact", where, sep.join(map(shown, f.reasons)))
        for r in (*report.refused, *report.sessions):
            table.add(r.kind, shown(_shown(r.path, paths.home)), sep.join(map(shown, r.reasons)))
        table.show(plain)
    if not report.clean:
        raise typer.Exit(EXIT_FLAGGED)
