"""``talos report``: recalls, empty rounds, bodies, scores, most and never recalled (design
§6.6)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from talos.cli.common import (
    HomeOpt,
    JsonOpt,
    PlainOpt,
    ScopeOpt,
    WideOpt,
    emit,
    err,
    handle_errors,
    open_memory,
    scopes_from,
)
from talos.fsutil import atomic_write_text, check_write_target
from talos.render import shown
from talos.report import build_report, render_html

if TYPE_CHECKING:
    from talos.cli.listing import Listing

__all__ = ["report"]

#: Rows of the never-recalled table in the terminal (all of them in a pipe, --json and --html).
NEVER_ROWS = 20


def _pct(rate: float) -> str:
    return f"{rate * 100:.1f}%"


def _tables(r: dict[str, Any], pipe: bool) -> list[Listing]:
    """The report's listings: summary, score distribution (its bars on a terminal only), most
    and never recalled; in a pipe each line starts with its section's name."""
    from talos.cli.listing import Column, Listing

    summary = Listing("talos report", [Column("what", "cut"), Column("value")], section="summary")
    span = f"{r['first_day']} → {r['last_day']}" if r["first_day"] else "no recalls yet"
    for what, value in (
        ("recalls", str(r["recalls"])),
        ("days (UTC)", span),
        ("empty rounds", f"{r['empty_rounds']} ({_pct(r['empty_rate'])})"),
        ("rounds with a skill body", f"{r['body_rounds']} ({_pct(r['body_rate'])})"),
        ("memories delivered", str(r["picks"])),
        (
            ("" if pipe else "  ") + " / ".join(_plural(k) for k in r["picks_by_kind"]),
            " / ".join(str(v) for v in r["picks_by_kind"].values()),
        ),
        ("facts & skills never recalled", f"{len(r['never_recalled'])} of {r['memories']}"),
    ):
        summary.add(what, value)
    if r["malformed_lines"]:
        summary.add("unreadable trace lines (skipped)", str(r["malformed_lines"]))
    tables = [summary]

    sc = r["scores"]
    if sc["count"]:
        dist = Listing(
            f"score distribution · median {sc['median']} · mean {sc['mean']} · "
            f"min {sc['min']} · max {sc['max']}",
            [Column("score"), Column("rows", right=True), *([] if pipe else [Column("", "cut")])],
            section="score",
        )
        peak = max(b["count"] for b in sc["bins"]) or 1
        for b in sc["bins"]:
            label = f"{b['lo']:.2f}–{b['hi']:.2f}" if b["hi"] is not None else f"≥ {b['lo']:.2f}"
            bar = [] if pipe else ["█" * round(b["count"] / peak * 30)]
            dist.add(label, str(b["count"]), *bar)
        tables.append(dist)

    if r["most_recalled"]:
        most = Listing(
            "most recalled",
            [
                Column("picks", right=True),
                Column("kind"),
                Column("memory", "cut"),
                Column("bodies", right=True),
                Column("mean score", right=True),
                Column("last", right=True),
            ],
            section="most",
        )
        for m in r["most_recalled"]:
            most.add(
                str(m["picks"]),
                shown(m["kind"]),
                shown(m["text"]),
                str(m["bodies"]),
                "" if m["mean_score"] is None else f"{m['mean_score']:.2f}",
                m["last_day"],
            )
        tables.append(most)

    never = r["never_recalled"]
    if never:
        rows = never if pipe else never[:NEVER_ROWS]  # a pipe gets every one, as --json does
        more = f" (first {NEVER_ROWS} of {len(never)})" if len(rows) < len(never) else ""
        nv = Listing(
            f"never recalled{more}",
            [Column("seen", right=True), Column("kind"), Column("memory", "cut")],
            section="never",
        )
        for n in rows:
            nv.add(str(n["seen"]), shown(n["kind"]), shown(n["text"]))
        tables.append(nv)
    return tables


@handle_errors("report", listing=True)
def report(
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="Also write a self-contained HTML page with plots to this file (no network).",
            show_default=False,
            dir_okay=False,
        ),
    ] = None,
    top: Annotated[
        int,
        typer.Option("--top", metavar="N", min=0, help="How many most-recalled memories to list."),
    ] = 10,
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    as_json: JsonOpt = False,
    plain: PlainOpt = False,
    wide: WideOpt = False,
) -> None:
    """Summarize the recall trace and usage counts.

    Recalls, empty rounds, rounds with a skill body, the score distribution, the most and the
    never recalled memories. Reads .talos/recall_trace.jsonl and the usage counts; changes
    nothing. With --html FILE it also writes one self-contained page with plots (recalls per
    day, empty-round and body-injection rates, scores, most recalled); FILE must be a new file
    or a regular one, in a folder that exists.

    Examples:
      talos report
      talos report --json
      talos report --html report.html
    """
    if html is not None:  # refused before anything is computed: a missing folder, a device
        check_write_target(html, create_folders=False)
    mem = open_memory(home, scopes=scopes_from(scope))
    data = build_report(mem, top=top)
    if html is not None:
        atomic_write_text(html, render_html(data), create_folders=False)
        err.print(f"wrote {html}", markup=False)
    if as_json:
        emit("report", data)
        return
    from talos.cli.listing import to_pipe

    for table in _tables(data, plain or to_pipe()):
        table.show(plain, wide)


def _plural(kind: str) -> str:
    """``fact`` → ``facts``: the label of a kind's count (a trace may hold a ``conflict`` row
    kind too, whose count stood under the label "facts / skills / episodes")."""
    return kind + "s"
