"""What ``talos init`` and ``talos hook install AGENT`` do about the agents' own transcripts
(design §3.3): find the folders (:mod:`talos.sources.agent_folders`), add them to
``sessions_dir`` (:mod:`talos.sources.add_folders`), say so and how to undo it, and read the new
sessions once, with a progress bar on a terminal (never with ``--json``), so the first hook
does not spend its deadline on a folder of thousands of transcripts.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from talos.cli.common import err
from talos.home import Paths, resolve_paths
from talos.sources.add_folders import add_sessions_dirs
from talos.sources.agent_folders import found_folders, is_read

__all__ = ["offer_transcripts"]


def offer_transcripts(
    paths: Paths, agents: Sequence[str], command: str, dry_run: bool, as_json: bool
) -> dict[str, Any]:
    """Add the transcript folders of ``agents`` that exist and are not read to the home's
    ``sessions_dir``; say what was done on stderr unless ``as_json``.

    Args:
        paths: the home's paths. agents: ``claude-code``, ``codex``, ``gemini``.
        command: what is adding them (``talos hook install claude-code``), for the comment.
        dry_run: say what would be added; write and read nothing.
        as_json: say nothing; the caller puts the result in its JSON.

    Returns:
        ``{"added": [ENTRY…], "read_already": [FOLDER…], "not_readable": [FOLDER…],
        "config": PATH, "sessions_read": N}``.

    Raises:
        InputError: talos.toml could not be edited safely (nothing written; the message
            names the line to add by hand).
    """
    found = found_folders(agents)
    note = f"added by {command}: the agents' transcripts (remove an entry to stop reading it)"
    added = add_sessions_dirs(paths, found, note, dry_run=dry_run)
    new = {f.entry for f in added.added}
    already = [f for f in found if f.readable and f.entry not in new]
    unreadable = [f for f in found if not f.readable]
    read = 0
    if added.added and not dry_run:
        read = _first_read(resolve_paths(paths.home), show=not as_json)
    if not as_json:
        verb = "would now also read" if dry_run else "now also reads"
        lines = [
            f"{added.file}: sessions_dir {verb} {f.label}'s transcripts ({f.entry}); "
            "to stop, remove that entry"
            for f in added.added
        ]
        lines += [
            f"{f.label}'s transcripts ({f.folder}) are read already"
            for f in already
            if is_read(f.folder, paths.sessions_dirs)
        ]
        lines += [
            f"{f.label} keeps its chats in {f.folder} as JSON documents talos does not read "
            "yet; not added"
            for f in unreadable
        ]
        lines += [f"read {read} session file(s)"] if read else []
        if lines:
            from talos.render import shown  # imported on use: init opens no renderer

            for line in lines:
                err.print(shown(line))
    return {
        "added": [f.entry for f in added.added],
        "read_already": [str(f.folder) for f in already],
        "not_readable": [str(f.folder) for f in unreadable],
        "config": str(added.file),
        "sessions_read": read,
    }


def _first_read(paths: Paths, show: bool) -> int:
    """Read the sessions of the home's folders into its index, with a progress bar on stderr
    when ``show`` and stderr is a terminal; how many files were read (0 when the index cannot
    be written: the first recall reads them)."""
    from talos.cli.index import _progress  # imported on use: rich's progress bar
    from talos.index import Index

    idx = Index(paths)
    try:
        if show and err.console.is_terminal:
            with _progress("reading the agents' sessions") as progress:
                return idx.refresh(progress=progress).sessions_read
        return idx.refresh().sessions_read
    except (OSError, sqlite3.Error):
        return 0
    finally:
        idx.close()
