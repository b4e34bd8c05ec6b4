"""``talos sync``: one memory on several machines through git (design §12; the steps are
:mod:`talos.sync.git`'s).

Exit codes: 0 synced (or nothing to push), :data:`EXIT_STOPPED` (6) when sync stopped before
pushing and a person has to act (lines edited differently on two devices, no remote, a remote
that kept moving), 1 for an error (not a git repository, a git step failed, a file git cannot
merge).
"""

from __future__ import annotations

from typing import Annotated

import typer

from talos.cli.common import HomeOpt, JsonOpt, checked_paths, emit, err, handle_errors
from talos.render import shown
from talos.sync.git import SyncResult

__all__ = ["EXIT_STOPPED", "sync"]

#: Exit code of ``talos sync`` when it stopped before pushing and a person has to act.
EXIT_STOPPED = 6


@handle_errors("sync")
def sync(
    no_push: Annotated[
        bool, typer.Option("--no-push", help="Commit, pull and merge, but do not push.")
    ] = False,
    keep_both: Annotated[
        bool,
        typer.Option(
            "--keep-both",
            help="Go on although a line was edited differently here and on another device "
            "(both versions stay in memory.md).",
        ),
    ] = False,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Sync the home through git: commit, pull, merge by talos's rules, push.

    The home must be a git repository with a remote (talos init --git sets it up). memory.md
    is merged line by line: lines added on either device are kept, a line forgotten on one
    stays forgotten, and when two devices wrote the same key the one of higher authority,
    then the later observed day, supersedes the other; two values of equal standing stay a
    conflict (talos conflicts) on every device. Usage counts and the audit log are kept per
    device and merged on read, so nothing is counted twice. When a person's own line was
    edited differently on two devices, both versions stay in memory.md and sync stops before
    pushing (exit 6): keep the one you want, then run talos sync again. A kill at any point
    leaves a home that recalls and a repository the next talos sync continues from.

    Examples:
      talos sync --home ~/memory
      talos sync --json
    """
    from talos.sync.git import sync as run

    paths = checked_paths(home)
    result = run(paths, push=not no_push, keep_both=keep_both)
    if as_json:  # a stop is not ok: a script that reads "ok" must not take it for a sync
        emit("sync", result.as_json(), ok=result.stopped is None, error=result.stopped)
    else:
        _say(result, keep_both)
    if result.stopped:
        raise typer.Exit(EXIT_STOPPED)


def _say(result: SyncResult, keep_both: bool) -> None:
    """The result for a person, on stderr."""
    parts = []
    if result.committed:
        parts.append("committed local changes")
    if result.pulled:
        parts.append(f"pulled {result.pulled} commit{'s' if result.pulled != 1 else ''}")
    if result.merged:
        parts.append("merged")
    if result.pushed:
        parts.append(f"pushed to {result.remote}")
    err.print(f"talos sync ({result.device}): {', '.join(parts) or 'nothing to do'}")
    for rid in result.forgotten_again:
        err.print(f"  forgotten on another device, taken out again: {rid}")
    for r in result.resolved:
        err.print(f"  {r['key']} ({r['scope']}): kept {r['kept']}, it outranks the other")
    for c in result.conflicts:
        err.print(
            f"  conflict: {c['key']} ({c['scope']}) has {len(c['ids'])} values of equal "
            f"standing; talos resolve {c['key']} --keep ID"
        )
    for k in result.kept_edits:
        where = "here" if not k["here"] else "on another device"
        err.print(f"  a line deleted {where} was edited on the other side; the edit is kept:")
        err.print(f"    {shown(k['here'] or k['there'])}")
    for p in result.person_conflicts:
        both = "kept both (--keep-both)" if keep_both else "both versions are in memory.md"
        err.print(f"  a line edited differently on two devices; {both}:")
        err.print(f"    was:   {shown(p['was'])}")
        err.print(f"    here:  {shown(p['here'])}")
        err.print(f"    there: {shown(p['there'])}")
    others = [d for d in result.devices if d != result.device]
    err.print(f"  devices: {result.device} (this one){''.join(', ' + d for d in others)}")
    if result.stopped:
        err.print(f"stopped: {result.stopped}")
