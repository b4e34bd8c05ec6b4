"""``talos doctor``: is this home healthy? (issue 6; the checks live in :mod:`talos.doctor`).

Exit codes: 0 when nothing needs attention (every finding ``ok`` or ``info``),
:data:`EXIT_ATTENTION` (5) when a finding is ``warn`` or ``error``, 1 for usage errors.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from talos.cli.common import (
    AtOpt,
    HomeOpt,
    JsonOpt,
    PlainOpt,
    ScopeOpt,
    emit,
    err,
    handle_errors,
    out,
    parse_date,
    scopes_from,
)
from talos.doctor import Diagnosis, acknowledge, diagnose
from talos.render import shown

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["EXIT_ATTENTION", "doctor"]

#: Exit code of ``talos doctor`` when something needs attention (0: healthy, 1: usage error,
#: 3 is ``get``'s refusal, 4 ``scan``'s flag).
EXIT_ATTENTION = 5

_STYLE = {"ok": "green", "info": "cyan", "warn": "yellow", "error": "bold red"}


def _table(diag: Diagnosis) -> Table:
    # rich is imported on use: every command's start-up would pay for it (issue 4)
    from rich.console import Group
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    table = Table(title="talos doctor", title_justify="left")  # the home is the first row
    table.add_column("check")
    table.add_column("status")
    table.add_column("finding", overflow="fold")
    for f in diag.findings:
        # a Text is not rendered from a string: each one is shown here (details quote lines)
        more = [Text(shown(d), overflow="fold") for d in f.details]
        if f.hint:
            more.append(Text(f"→ {shown(f.hint)}", style="bold"))
        summary = Text(shown(f.summary))
        cell = Group(summary, Padding(Group(*more), (0, 0, 0, 2))) if more else summary
        table.add_row(f.check, Text(f.status, style=_STYLE.get(f.status, "")), cell)
    return table


@handle_errors("doctor", listing=True)
def doctor(
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    at: AtOpt = None,
    ack: Annotated[
        bool,
        typer.Option(
            "--ack",
            help="First record in the audit log that you reviewed the edits made to memory.md "
            "outside talos (lines talos wrote that you removed, edited or brought back): "
            "doctor then warns only about edits made after this. Removed records stay "
            "restorable (talos restore ID).",
        ),
    ] = False,
    as_json: JsonOpt = False,
    plain: PlainOpt = False,
) -> None:
    """Check that the home is healthy and say what needs attention.

    Is the home there, does talos.toml parse, are memory.md, skills/, the sessions and the
    state folder readable, do provenance tags parse, is the index in step with the files,
    does the safety scan flag anything, are there conflicts, expired records, forgetting
    suggestions, and does the audit log agree with memory.md? Each finding is ok, info (worth
    knowing, nothing to do), warn (needs attention) or error (talos cannot read the home).
    Places are given as file:line. Changes none of your files; --ack appends to the audit log
    only (--json: the edits it recorded under "acknowledged").

    Exit code: 0 when nothing needs attention, 5 when a finding is warn or error, 1 on a usage
    error.

    Examples:
      talos doctor
      talos doctor --ack
      talos doctor --scope global --scope project:alpha --json
    """
    # --scope (or $TALOS_SCOPE) asks for a request's view: nothing of another scope is named
    # or counted; without it, doctor checks the whole home's files for the person
    scoped = bool(scope) or bool(os.environ.get("TALOS_SCOPE", "").strip(", "))
    acked = acknowledge(home, scopes_from(scope), scoped=scoped) if ack else None
    if acked is not None and not as_json:
        err.print(shown(acked.sentence()))
    diag = diagnose(home, scopes_from(scope), parse_date(at), scoped=scoped)
    attention = [f for f in diag.findings if f.attention]
    if as_json:
        extra = {"acknowledged": acked.to_json()} if acked is not None else {}
        emit(
            "doctor",
            {**diag.to_json(), **extra},
            ok=diag.healthy,
            error=None if diag.healthy else f"{len(attention)} finding(s) need attention",
        )
    else:
        from talos.cli.listing import plain_line, to_pipe

        if plain or to_pipe():  # one finding a line: check, status, summary, details, hint
            for f in diag.findings:
                details = "; ".join(shown(d) for d in f.details)
                sys.stdout.write(
                    plain_line((f.check, f.status, shown(f.summary), details, shown(f.hint))) + "\n"
                )
        else:
            out.print(_table(diag))
        if diag.healthy:
            err.print("healthy: nothing needs attention")
        else:
            err.print(f"{len(attention)} finding(s) need attention")
    if not diag.healthy:
        raise typer.Exit(EXIT_ATTENTION)
