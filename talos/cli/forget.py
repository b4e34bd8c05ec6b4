"""``talos dead`` and ``talos forget``: reviewed forgetting (design §6.4, §6.5)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from talos.cli.common import (
    AtOpt,
    HomeOpt,
    JsonOpt,
    LangOpt,
    PlainOpt,
    ScopeOpt,
    WideOpt,
    emit,
    err,
    handle_errors,
    open_memory,
    parse_date,
    scopes_from,
)
from talos.errors import TalosError
from talos.render import shown
from talos.results import Suggestion
from talos.view.trust import parse_day

if TYPE_CHECKING:
    from talos.cli.listing import Listing
    from talos.writer.edits import Forgotten

__all__ = ["dead", "forget", "forgotten_summary", "parse_choice"]

MinSeenOpt = Annotated[
    int,
    typer.Option(
        "--min-seen", metavar="N", min=0, help="Only facts seen in at least this many recalls."
    ),
]
MinDaysOpt = Annotated[
    int | None,
    typer.Option(
        "--min-days",
        metavar="DAYS",
        min=0,
        show_default=False,
        help="Only memories counted for at least this many days since the first recall that "
        "saw them (default: 14, or dead_min_days in talos.toml).",
    ),
]
StaleOpt = Annotated[
    int,
    typer.Option(
        "--stale-days",
        metavar="DAYS",
        min=0,
        help="A fact last recalled this many days ago is stale.",
    ),
]


def _age(s: Suggestion) -> str:
    born = parse_day(s.born)
    return f"{(dt.date.today() - born).days} d" if born else "?"


def _table(suggestions: list[Suggestion]) -> Listing:
    from talos.cli.listing import Column, Listing

    table = Listing(
        "forgetting suggestions (memories whose tag says you did not write them)",
        [
            Column("#", right=True),
            Column("text", "cut"),
            Column("source"),
            Column("age", right=True),
            Column("reason", "cut"),
        ],
    )
    for no, s in enumerate(suggestions, 1):
        table.add(str(no), shown(s.text), shown(s.src), _age(s), shown(s.reason))
    return table


@handle_errors("dead", listing=True)
def dead(
    min_seen: MinSeenOpt = 8,
    stale_days: StaleOpt = 90,
    min_days: MinDaysOpt = None,
    home: HomeOpt = None,
    lang: LangOpt = None,
    scope: ScopeOpt = None,
    at: AtOpt = None,
    as_json: JsonOpt = False,
    plain: PlainOpt = False,
    wide: WideOpt = False,
) -> None:
    """List what talos wrote and never or no longer recalls; deletes nothing.

    A memory qualifies when it was seen in at least --min-seen recalls and never picked, or
    last picked --stale-days or more ago, over at least --min-days days since the first recall
    that saw it (a fact seen by 8 recalls in a new home's first minutes is not unused), and
    its tag says someone other than you wrote it: a
    memory.md line whose tag's source is not user, a skill whose frontmatter says source:
    other than user. The tag decides, not who typed the line: an untagged line, a line tagged
    user and a skill without source: are never listed; a line you tagged import or reflect
    yourself is. The source column shows what the tag says. Review and remove them with
    talos forget.

    Examples:
      talos dead
      talos dead --min-seen 20 --stale-days 30 --json
    """
    mem = open_memory(home, lang, scopes=scopes_from(scope))
    suggestions = mem.dead(min_seen, stale_days, at=parse_date(at), min_days=min_days)
    if as_json:
        emit("dead", [s.to_json() for s in suggestions])
    elif suggestions:
        _table(suggestions).show(plain, wide)
    else:
        err.print("no suggestions")


def parse_choice(answer: str, count: int) -> list[int]:
    """Parse a review answer: ``all``, ``none`` (or empty), or numbers like ``1,3 4``.

    Returns:
        0-based indices, sorted and unique.

    Raises:
        ValueError: a token is not a number in ``1..count``.
    """
    a = answer.strip().lower()
    if a in ("", "none", "n", "no"):
        return []
    if a in ("all", "a", "y", "yes"):
        return list(range(count))
    picked: set[int] = set()
    for tok in a.replace(",", " ").split():
        if not tok.isdigit() or not 1 <= int(tok) <= count:
            raise ValueError(f"{tok!r} is not a number from 1 to {count}")
        picked.add(int(tok) - 1)
    return sorted(picked)


@handle_errors("forget")
def forget(
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Forget every suggestion without asking.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only list what would be forgotten.")
    ] = False,
    min_seen: MinSeenOpt = 8,
    stale_days: StaleOpt = 90,
    min_days: MinDaysOpt = None,
    home: HomeOpt = None,
    lang: LangOpt = None,
    scope: ScopeOpt = None,
    at: AtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Review the dead list and remove what you pick from memory.md.

    Shows the suggestions of talos dead in a table and asks: all / none / numbers (e.g. "1,3"). Only
    lines whose tag's source is not user are removed (a skill: moved to .talos/trash/), never an
    untagged or user-tagged line; every removed record is kept in this device's audit log
    (.talos/devices/DEVICE/audit.jsonl) and listed with the command that restores it (talos restore
    ID, on any device that shares the home). --json
    needs --yes or --dry-run, since it cannot ask.

    Examples:
      talos forget
      talos forget --dry-run
      talos forget --yes --json
    """
    mem = open_memory(home, lang, scopes=scopes_from(scope))
    suggestions = mem.dead(min_seen, stale_days, at=parse_date(at), min_days=min_days)
    if not suggestions:
        if as_json:
            emit("forget", {"removed": 0, "suggestions": [], "dry_run": dry_run})
        else:
            err.print("nothing to forget")
        return
    if not as_json:  # the review is for a person, also when stderr is not a terminal
        err.print(_table(suggestions).table(err.console.width))
    if dry_run:
        if as_json:
            emit(
                "forget",
                {"removed": 0, "suggestions": [s.to_json() for s in suggestions], "dry_run": True},
            )
        else:
            err.print(f"dry run: {len(suggestions)} suggestion(s), nothing removed")
        return
    if yes:
        chosen = suggestions
    else:
        if as_json:
            raise TalosError("--json needs --yes or --dry-run (it cannot ask)")
        from rich.prompt import Prompt  # imported on use: start-up of every command

        answer = Prompt.ask(
            "Forget which? [bold]all[/] / [bold]none[/] / numbers like 1,3",
            default="none",
            console=err.console,
        )
        try:
            chosen = [suggestions[i] for i in parse_choice(answer, len(suggestions))]
        except ValueError as e:
            raise TalosError(f"{e}; nothing removed") from None
    done = mem.forget_records(chosen) if chosen else []
    if as_json:
        emit(
            "forget",
            {
                "removed": len(done),
                "suggestions": [s.to_json() for s in chosen],
                "forgotten": [
                    {
                        "kind": f.kind,
                        "id": f.id,
                        "text": f.text,
                        "where": f.where,
                        "restore": f"talos restore {f.id}",
                    }
                    for f in done
                ],
                "audit_log": str(mem.paths.audit_file),
                "dry_run": False,
            },
        )
    elif done:
        err.print(forgotten_summary(done, mem.paths.memory_file, mem.paths.audit_file))
    else:
        err.print("nothing removed")


def forgotten_summary(done: list[Forgotten], memory_file: Path, audit_file: Path) -> str:
    """What ``forget`` did, for a person: how many lines left memory.md and how many skill
    files went to the trash (a skill is counted as a skill, issue 12.6), then one line per
    record with the command that brings it back."""
    lines = sum(1 for f in done if f.kind == "fact")
    skills = len(done) - lines
    parts = []
    if lines:
        parts.append(f"removed {lines} line{'s' if lines != 1 else ''} from {memory_file}")
    if skills:
        parts.append(f"moved {skills} skill file{'s' if skills != 1 else ''} to the trash")
    head = " and ".join(parts) + f"; each is kept in {audit_file} and can be restored:"
    rows = [f"  talos restore {f.id}   ({f.kind}: {f.text})" for f in done]
    return "\n".join([head, *rows])
