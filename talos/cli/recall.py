"""``talos recall`` and ``talos explain`` (design §6.1, §6.2)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from talos.cli.common import (
    AtOpt,
    DenseOpt,
    HomeOpt,
    JsonOpt,
    LangOpt,
    ModelOpt,
    OverrideOpt,
    PlainOpt,
    ScopeOpt,
    SessionsDirOpt,
    emit,
    err,
    handle_errors,
    open_memory,
    out,
    parse_date,
    parse_overrides,
    scopes_from,
)
from talos.render import MIN_BUDGET, check_budget, kind_label, shown, shown_with_members
from talos.sources.sessions import sessions_root

__all__ = ["explain", "recall"]

QueryArg = Annotated[
    str, typer.Argument(metavar="QUERY", help="The task or question to recall memories for.")
]


@handle_errors("recall")
def recall(
    query: QueryArg,
    k: Annotated[
        int | None,
        typer.Option(
            "-k",
            "--k",
            metavar="N",
            min=0,
            help="Most rows to deliver (default: talos.toml's k, else 30); the budget decides.",
        ),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget",
            metavar="N",
            help=f"Most characters the block may take (at least {MIN_BUDGET}; default: "
            "talos.toml's budget, else 2000): rows go in rank order, a skill's body with its "
            "skill (cut at a line when too long); the least relevant rows are left out, and a "
            "last line says so.",
        ),
    ] = None,
    home: HomeOpt = None,
    lang: LangOpt = None,
    sessions_dir: SessionsDirOpt = None,
    scope: ScopeOpt = None,
    at: AtOpt = None,
    override: OverrideOpt = None,
    model: ModelOpt = None,
    dense: DenseOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the context block of memories relevant to QUERY.

    The block is for an agent's prompt. Writes one trace line and updates usage counts. Prints
    nothing (exit 0) when nothing is recalled. The block is plain text on stdout, in a pipe too (it
    is what an agent pastes); --json gives it with the picked rows, their scores and provenance
    (with --dense, each row's "legs": each leg's rank and score).

    Examples:
      talos recall "merge two csv files by user id" -k 5
      talos recall "fix the flaky login test" > context.md
      talos recall "deploy the billing service" --budget 2000
    """
    check_budget(budget)  # before the home is opened: a bad argument changes nothing
    mem = open_memory(
        home, lang, sessions_dir=sessions_dir, scopes=scopes_from(scope), model=model, dense=dense
    )
    result = mem.recall(
        query, k=k, at=parse_date(at), overrides=parse_overrides(override), budget=budget
    )
    if as_json:
        emit("recall", result.to_json())
    elif result.text:
        out.out(result.text)
    else:
        p = mem.paths
        folders = [sessions_root(d)[0] for d in p.sessions_dirs]
        if not (p.memory_file.exists() or p.skills_dir.exists() or any(map(Path.exists, folders))):
            err.print(
                f"nothing recalled: {p.home} has no memory.md, skills/ or sessions yet "
                "(talos init --example, or --home / TALOS_HOME to point at your home)"
            )
        else:
            err.print("nothing recalled")


@handle_errors("explain", listing=True)
def explain(
    query: QueryArg,
    k: Annotated[
        int, typer.Option("-k", "--k", metavar="N", min=0, help="How many rows to show.")
    ] = 8,
    home: HomeOpt = None,
    lang: LangOpt = None,
    sessions_dir: SessionsDirOpt = None,
    scope: ScopeOpt = None,
    at: AtOpt = None,
    override: OverrideOpt = None,
    why_not: Annotated[
        bool,
        typer.Option(
            "--why-not",
            help="Also list in-scope records that did not make it, with a typed reason.",
        ),
    ] = False,
    model: ModelOpt = None,
    dense: DenseOpt = None,
    as_json: JsonOpt = False,
    plain: PlainOpt = False,
) -> None:
    """Show how QUERY ranks the memories, with scores.

    Score, kind and text of the top K rows. No side effects: no trace line, no usage change. --json
    (the default when stdout is not a terminal) gives {"rows": [...]} with, per row, the node's
    identity, seed activation, per-hop gain, the edges that carried it, merged members and
    provenance; --why-not adds "why_not": in-scope records left out and why (below-floor, below-
    threshold, beyond-k, shadowed, conflict, superseded, expired, unsafe, ...). With the evidence
    model (the default) the score is each row's evidence score, and a "cut" column marks the rows a
    recall of 5 leaves out (floor: below the relevance floor; beyond-k); --json adds per row
    "evidence", "cut" and "terms" (each matched query term as written and as analyzed). With
    --dense the rows are the fused ranking: the score is the fused one, the "lexical" and
    "dense" columns give each leg's rank and score (the evidence score, the cosine), and --json
    adds per row "legs", with "cut_by": what left the row out of a recall of 5 (floor: the
    lexical floor, with gate: the dense gate, or margin: too far below the best cosine; k:
    beyond the first 5). --why-not then says it per row, with both legs' columns.

    Examples:
      talos explain "upgrade rust dependencies" -k 10
      talos explain "deploy region" --why-not --json
    """
    mem = open_memory(
        home, lang, sessions_dir=sessions_dir, scopes=scopes_from(scope), model=model, dense=dense
    )
    day, overrides = parse_date(at), parse_overrides(override)
    rows = mem.explain(query, k=k, at=day, overrides=overrides)
    missed = mem.why_not(query, k=k, at=day, overrides=overrides) if why_not else []
    floor = _floor(rows)
    gate = mem.gate(query, at=day, overrides=overrides) if floor is not None else None
    # an asked block is weak when the gate finds no evidence and a row is still delivered
    weak = gate is not None and not gate.evidence and any(r.cut == "" for r in rows)
    if as_json:
        data: dict[str, object] = {"rows": [r.to_json() for r in rows]}
        if floor is not None:
            data["floor"] = floor
        if gate is not None:
            data["gate"] = {**gate.to_json(), "weak": weak}
        if why_not:
            data["why_not"] = [w.to_json() for w in missed]
        emit("explain", data)
        return
    if not rows and not missed:
        err.print("nothing ranked above the threshold")
        return
    from rich.table import Table  # imported on use: start-up of every command

    # the title says how many rows there are: fewer than k when fewer were ranked
    title = f"top {k}" if len(rows) >= k else f"{len(rows)} ranked of the top {k} asked"
    caption = None
    if floor is not None:  # where the relevance floor is (a newcomer could not tell)
        caption = (
            f"relevance floor: a block needs a row scoring ≥ {floor['query']:.2f} (or, for a "
            f"long query, holding {floor['held']:g} idf units of it); a row then needs "
            f"≥ {floor['row']:.2f} and a query word"
        )
        if gate is not None:
            caption += "\n" + _gate_line(gate, weak)
    table = Table(title=f"explain · {title}", caption=caption, show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("kind")
    table.add_column("text", overflow="fold")
    marked = any(r.cut is not None for r in rows)  # the evidence model marks the floor's cut
    legs = any(r.legs is not None for r in rows)  # the dense leg: each leg's rank and score
    if legs:
        table.add_column("lexical", justify="right")
        table.add_column("dense", justify="right")
    if marked:
        table.add_column("cut")
    for no, r in enumerate(rows, 1):
        text = shown_with_members(r.node, mem.lang)  # stored text: one line each, bounded
        score = f"{r.score:.3f}" if legs else f"{r.score:.2f}"
        cells = [str(no), score, kind_label(r.kind, mem.lang), text]
        if legs:
            cells += [_leg(r.legs, "lexical"), _leg(r.legs, "dense")]
        table.add_row(*cells, *([r.cut or ""] if marked else []))
    if rows:
        out.print(table)
    if why_not and not missed:
        err.print("why not: no in-scope record sharing a keyword was left out")
    elif why_not:
        miss = Table(title="why not: in-scope records left out")
        miss.add_column("reason")
        miss.add_column("score", justify="right")
        miss.add_column("kind")
        miss.add_column("text", overflow="fold")
        fused = any(w.legs is not None for w in missed)  # the dense leg: each leg's rank
        if fused:
            miss.add_column("lexical", justify="right")
            miss.add_column("dense", justify="right")
        miss.add_column("detail", overflow="fold")
        for w in missed:
            score = "" if w.score is None else f"{w.score:.2f}"
            kind = kind_label(w.node.kind, mem.lang)
            cells = [w.reason, score, kind, shown(w.node.text, mem.lang)]
            if fused:
                cells += [_leg(w.legs, "lexical"), _leg(w.legs, "dense")]
            miss.add_row(*cells, shown(w.detail))
        out.print(miss)


def _gate_line(gate: Any, weak: bool) -> str:
    """Explain's line on the query gate (design §6.1 rule 5): the query's best row against the
    floor, whether the hooks would inject a block, and whether ``talos recall`` marks its rows
    as weak matches."""
    if gate.evidence:
        return f"query gate: best row {gate.best:.2f} — evidence; the hooks inject this block"
    said = "recall shows these rows as weak matches" if weak else "recall finds no row"
    return (
        f"query gate: best row {gate.best:.2f} < {gate.to_json()['floor']:.2f} — no evidence; "
        f"the hooks stay quiet, {said}"
    )


def _floor(rows: list[Any]) -> dict[str, float] | None:
    """The relevance floor's constants (:mod:`talos.selection.relevance`) when ``rows`` are of the
    ``evidence`` model (they carry a cut mark), else None: ``query`` (the evidence score the
    best seed needs), ``held`` (idf units a long query's best seed may hold instead),
    ``whole`` (the share of the query a seed may hold instead), ``row`` (a row's own score)."""
    if not any(r.cut is not None for r in rows):
        return None
    from talos.selection import relevance

    return {
        "query": relevance.FLOOR,
        "held": relevance.HELD,
        "whole": relevance.WHOLE,
        "row": relevance.ROW,
    }


def _leg(legs: dict[str, Any] | None, name: str) -> str:
    """One leg's cell of a fused explain or why-not row (its ``legs``): ``#RANK SCORE``, or
    ``-`` where that leg does not rank the row."""
    leg = (legs or {}).get(name) or {}
    if leg.get("rank") is None:
        return "-"
    return f"#{leg['rank']} {leg['score']:.2f}"
