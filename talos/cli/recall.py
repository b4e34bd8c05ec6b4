"""``talos recall`` and ``talos explain`` (design §6.1, §6.2)."""

from __future__ import annotations

import sys
from collections.abc import Callable
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
    WideOpt,
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
from talos.view.trust import record_id

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
    expect: Annotated[
        list[str] | None,
        typer.Option(
            "--expect",
            metavar="TEXT",
            help="A memory you expected (part of its text, or its id): say where it stands "
            "(ranked, left out and why, or sharing no word with the query, with its words). "
            "Repeatable; implies --why-not.",
            show_default=False,
        ),
    ] = None,
    model: ModelOpt = None,
    dense: DenseOpt = None,
    as_json: JsonOpt = False,
    plain: PlainOpt = False,
    wide: WideOpt = False,
) -> None:
    """Show how QUERY ranks the memories, with scores and the words each row matched.

    Score, kind, text and words of the top K rows: the words are the query's words the row
    holds, as written and, when the analyzer changed them, as matched ("deploying →
    deploy"); "-" marks a row reached through the rows it is linked to. No side effects: no
    trace line, no usage change. --why-not lists in-scope records left out and why
    (below-floor, below-threshold, beyond-k, shadowed, conflict, superseded, expired, unsafe, ...);
    it names only records that share a word with the query, so to ask about the line you
    expected, give part of it with --expect: explain says where it stands, or that it shares
    no word with the query, with its words and the query's. With the evidence model (the
    default) the score is each row's evidence score, and a "cut" column marks the rows a
    recall of 5 leaves out (floor: below the relevance floor; beyond-k). With --dense the
    rows are the fused ranking: the score is the fused one, the "lexical" and "dense"
    columns give each leg's rank and score (the evidence score, the cosine), and --why-not
    says per row which rule left it out.

    --json gives {"rows": [...]} with, per row, the node's identity, seed activation, per-hop
    gain, the edges that carried it, merged members and provenance; with the evidence model
    also "evidence", "cut" and "terms" (each matched query term as written and as analyzed);
    with --dense "legs" (each leg's rank and score) and "cut_by" (floor: the lexical floor,
    with gate: the dense gate, or margin: too far below the best cosine; k: beyond the first
    5); "why_not" with --why-not and "expected" with --expect.

    Examples:
      talos explain "upgrade rust dependencies" -k 10
      talos explain "deploy to production" --expect "staging service"
      talos explain "deploy region" --why-not --json
    """
    mem = open_memory(
        home, lang, sessions_dir=sessions_dir, scopes=scopes_from(scope), model=model, dense=dense
    )
    day, overrides = parse_date(at), parse_overrides(override)
    why_not = why_not or bool(expect)
    rows = mem.explain(query, k=k, at=day, overrides=overrides)
    missed = mem.why_not(query, k=k, at=day, overrides=overrides) if why_not else []
    wanted = [(t, mem.expected(query, t, k=k, at=day, overrides=overrides)) for t in expect or []]
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
        if expect:
            data["expected"] = [
                {"asked": t, "found": [e.to_json() for e in found]} for t, found in wanted
            ]
        emit("explain", data)
        return
    from talos.cli.listing import Column, Listing, note, to_pipe

    if not rows and not missed and not expect:
        err.print("nothing ranked above the threshold")
        return
    pipe = plain or to_pipe()
    if rows:
        # the title says how many rows there are: fewer than k when fewer were ranked
        title = f"top {k}" if len(rows) >= k else f"{len(rows)} ranked of the top {k} asked"
        marked = any(r.cut is not None for r in rows)  # the evidence model marks the floor's cut
        legs = any(r.legs is not None for r in rows)  # the dense leg: each leg's rank and score
        columns = [Column("#", right=True), Column("score", right=True), Column("kind")]
        columns += [Column("text", "cut"), Column("words", "cut")]
        if legs:
            columns += [Column("lexical", right=True), Column("dense", right=True)]
        listing = Listing(
            f"explain · {title}",
            [*columns, *([Column("cut")] if marked else [])],
            section="row" if why_not else None,  # a pipe tells the row lines from the others
        )
        words = _words(query, mem.model)
        for no, r in enumerate(rows, 1):
            text = shown_with_members(r.node, mem.lang)  # stored text: one line each, bounded
            score = f"{r.score:.3f}" if legs else f"{r.score:.2f}"
            cells = [str(no), score, kind_label(r.kind, mem.lang), text, words(r)]
            if legs:
                cells += [_leg(r.legs, "lexical"), _leg(r.legs, "dense")]
            listing.add(*cells, *([r.cut or ""] if marked else []))
        listing.show(plain, wide)
        if floor is not None and not pipe:  # where the floor is (a newcomer could not tell)
            note(
                f"relevance floor: a block needs a row scoring ≥ {floor['query']:.2f} (or, for a "
                f"long query, holding {floor['held']:g} idf units of it); a row then needs "
                f"≥ {floor['row']:.2f} and a query word"
            )
            if gate is not None:
                note(_gate_line(gate, weak, rows))
    if why_not and not missed:
        note("why not: no in-scope record sharing a word with the query was left out")
    elif why_not:
        fused = any(w.legs is not None for w in missed)  # the dense leg: each leg's rank
        columns = [Column("reason"), Column("score", right=True), Column("kind")]
        columns.append(Column("text", "cut"))
        if fused:
            columns += [Column("lexical", right=True), Column("dense", right=True)]
        miss = Listing(
            "why not: in-scope records left out",
            [*columns, Column("detail", "cut")],
            section="why-not",
        )
        for w in missed:
            score = "" if w.score is None else f"{w.score:.2f}"
            kind = kind_label(w.node.kind, mem.lang)
            cells = [w.reason, score, kind, shown(w.node.text, mem.lang)]
            if fused:
                cells += [_leg(w.legs, "lexical"), _leg(w.legs, "dense")]
            miss.add(*cells, shown(w.detail))
        miss.show(plain, wide)
    for asked, found in wanted:
        _say_expected(asked, found, mem.lang, pipe)


def _say_expected(asked: str, found: list[Any], lang: str, pipe: bool) -> None:
    """``--expect``'s answer: one line per record found, on stdout (it is the answer asked
    for): ``expected "TEXT": KIND "RECORD" — SENTENCE``; a pipe gets the fields TAB-separated
    (``expected``, asked, kind, id, record, status, sentence). Nothing found: one line on
    stderr."""
    from talos.cli.listing import note, plain_line

    if not found:
        note(
            f'expected "{shown(asked)}": no in-scope memory holds that text or id '
            "(talos scan lists lines left out as unsafe)"
        )
        return
    for e in found:
        n = e.node
        if pipe:
            cells = ("expected", asked, n.kind, record_id(n), n.text, e.status, e.sentence())
            sys.stdout.write(plain_line([shown(c) for c in cells]) + "\n")
        else:
            label, record = kind_label(n.kind, lang), shown(n.text, lang)
            out.print(
                f'expected "{shown(asked)}": {label} "{record}" — {shown(e.sentence())}',
                soft_wrap=False,
            )


def _words(query: str, model: str) -> Callable[[Any], str]:
    """A row's "words" cell: the query's words it holds (its ``terms``: ``deploy``,
    ``deploying → deploy``); for ``classic``, which keeps no terms, the query's keywords
    the node holds (design §4); ``-`` for a row reached only through its links."""
    from talos.selection.expected import shown_term

    asked: set[str] = set()
    if model == "classic":
        from talos.text import keywords

        asked = keywords(query)

    def cell(r: Any) -> str:
        if r.terms:
            return ", ".join(shown_term(t["written"], t["analyzed"]) for t in r.terms)
        held = sorted(asked & r.node.keywords) if asked else []
        return ", ".join(held) or "-"

    return cell


def _gate_line(gate: Any, weak: bool, rows: list[Any] | None = None) -> str:
    """Explain's line on the query gate (design §6.1 rule 5): the query's best seed against the
    floor, whether the hooks would inject a block, and whether ``talos recall`` marks its rows
    as weak matches.

    The gate reads the seeds, before spreading (docs/benchmarks.md: the gate reads the seeds):
    its ``best`` is a row's score on its own query words (seed × √Z), not the score column,
    which is after spreading (1.08 beside a row's 1.06). The line says so and names the row of
    ``rows`` (explain's, best first) that holds the best seed, with its score in the table."""
    said = f"best seed {gate.best:.2f}"
    for no, r in enumerate(rows or [], 1):
        scale = (r.evidence or 0.0) / r.activation if r.activation > 0 else 0.0
        if r.seed > 0 and abs(r.seed * scale - gate.best) < 5e-4:
            said += f" (row {no}'s own words, before spreading gives it {r.score:.2f})"
            break
    else:
        said += " (a row's own words, before spreading)"
    if gate.evidence:
        return f"query gate: {said} — evidence; the hooks inject this block"
    weak_said = "recall shows these rows as weak matches" if weak else "recall finds no row"
    return (
        f"query gate: {said} < {gate.to_json()['floor']:.2f} — no evidence; "
        f"the hooks stay quiet, {weak_said}"
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
