"""``talos index``: build, refresh or check the persistent index (design §11)."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import Annotated

import typer

from talos.cli.common import DenseOpt, HomeOpt, JsonOpt, checked_paths, emit, err, handle_errors
from talos.errors import InputError, state_error
from talos.home import Paths
from talos.index import Index, RefreshStats
from talos.memory import Memory
from talos.render import shown

__all__ = ["index"]


@handle_errors("index")
def index(
    check: Annotated[
        bool, typer.Option("--check", help="Compare the index with the files; change nothing.")
    ] = False,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Throw the index away and build it from scratch.")
    ] = False,
    home: HomeOpt = None,
    dense: DenseOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Refresh the index from the files (or rebuild or check it).

    Recall refreshes the index by itself; run this after rewriting old session files in place,
    or to build the index of a large home ahead of time. The files stay the source of truth:
    deleting .talos/index.db loses only speed. --check only reads (a read-only home too) and
    exits 1 when the index differs; files changed since the last refresh are "behind", not
    different (the next recall catches up), and so is a home with no index yet. With the
    dense leg on (dense = true in talos.toml, or --dense) it also embeds every memory that has
    no vector yet into .talos/vectors.db, with a progress bar: a new session is one text, a
    model change embeds them all again.

    Examples:
      talos index
      talos index --rebuild
      talos index --check --json
    """
    if check and rebuild:  # --check changes nothing, --rebuild throws the index away
        raise InputError("use --check or --rebuild, not both: --check changes nothing")
    paths = checked_paths(home)
    idx = Index(paths, read_only=check)  # --check only reads: a read-only home too
    try:
        _index(idx, paths, check, rebuild, as_json, dense)
    except (OSError, sqlite3.Error) as e:
        if isinstance(e, OSError) and e.filename:
            raise  # a file of the person's (memory.md, a session): named by the error
        raise state_error(idx.file, e, "the index", _DAMAGED) from e
    finally:
        idx.close()


#: What to do with a damaged index: it is a cache of the files (design §11).
_DAMAGED = "run talos index --rebuild (a cache of the files: nothing is lost)"


def _index(
    idx: Index, paths: Paths, check: bool, rebuild: bool, as_json: bool, dense: bool | None = None
) -> None:
    """:func:`index` on an open :class:`Index`."""
    if check:
        try:  # read-only: compares what is indexed with the files
            behind, problems = idx.behind(), idx.check(skip_behind=True)
        except FileNotFoundError as e:
            if e.filename != str(idx.file):
                raise
            behind, problems = (
                [f"{idx.file}: no index yet; the next recall or talos index builds it"],
                [],
            )
        if as_json:
            emit(
                "index",
                {"check": True, "problems": problems, "behind": behind},
                ok=not problems,
                error="index differs from the files" if problems else None,
            )
        else:
            for p in problems:
                err.print(shown(p))  # one line each: a problem names a file
            if behind and len(behind) == 1 and "no index yet" in behind[0]:
                err.print(shown(behind[0]))
            elif behind:  # a cache not yet refreshed is behind, not different (exit 0)
                err.print(
                    shown(
                        f"index is behind: {'; '.join(behind)}; the next recall or talos index "
                        "brings it up to date"
                    )
                )
            elif not problems:
                err.print("index matches the files")
        if problems:
            raise typer.Exit(1)
        return
    start = time.perf_counter()
    stats = _run(idx, rebuild, show=not as_json)
    with Memory(paths.home, dense=dense) as mem:  # the blocks a recall reads: warm
        embedded = _embed(mem, show=not as_json) if mem.dense else None
        mem.prepare()
        headings = mem.headings
    seconds = time.perf_counter() - start
    facts, episodes = idx.counts(headings)  # counted by the index: no node built (1M facts: 10 s)
    counts = {"facts": facts, "episodes": episodes}
    data = {
        "file": str(idx.file),
        "seconds": round(seconds, 3),
        "sessions_read": stats.sessions_read,
        "sessions_dropped": stats.sessions_dropped,
        **counts,
        "embedded": embedded,
    }
    if as_json:
        emit("index", data)
    else:
        err.print(
            f"index {idx.file}: {_count(counts['facts'], 'fact')}, "
            f"{_count(counts['episodes'], 'episode')}; "
            f"read {stats.sessions_read} session file(s) in {seconds:.1f} s"
            + ("" if embedded is None else f"; embedded {embedded} text(s)")
        )


@contextlib.contextmanager
def _progress(what: str) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr for ``what`` (gone when done), as a ``(done, total)``
    callback."""
    from rich.progress import (  # imported on use: start-up of every command
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    with Progress(  # a TextColumn: a plain str column would print its markup (markup is off)
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err.console,
        transient=True,
    ) as bar:
        task = bar.add_task(what, total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield progress


def _embed(mem: Memory, show: bool) -> int | None:
    """The dense leg's vectors of every memory that lacks one (:meth:`Memory.embed`), with a
    rich progress bar on stderr when ``show``; None when the leg cannot run (warned)."""
    if not show:
        return mem.embed()
    with _progress("embedding memories") as progress:
        return mem.embed(progress)


def _count(n: int, what: str) -> str:
    """``1 episode``, ``2 episodes``."""
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def _run(idx: Index, rebuild: bool, show: bool) -> RefreshStats:
    """Refresh (or rebuild) with a rich progress bar on stderr when ``show``."""
    if not show:
        return idx.rebuild() if rebuild else idx.refresh(full=True)
    with _progress("reading sessions") as progress:
        return idx.rebuild(progress) if rebuild else idx.refresh(full=True, progress=progress)
