"""Trust commands: remember, get, conflicts, resolve, history, restore, revoke (design §7)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer

from talos.cli.common import (
    AtOpt,
    HomeOpt,
    JsonOpt,
    OverrideOpt,
    PlainOpt,
    ScopeOpt,
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
from talos.errors import TalosError
from talos.model import node_provenance
from talos.render import TEXT_CHARS, labels, shown
from talos.sources.facts import strip_tag
from talos.text import cut, one_line
from talos.view.trust import record_id, stated_value

#: The visible cut of a value ``get`` prints (the English one: stdout is for scripts).
_CUT = labels("en")["cut"].format(n=TEXT_CHARS)

__all__ = ["conflicts", "get", "history", "remember", "resolve", "restore", "revoke"]

#: Exit code of a refusal an agent can branch on (design §7.7, §9.1).
EXIT_REFUSED = 3


@handle_errors("remember")
def remember(
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The fact, one line.")],
    key: Annotated[
        str | None, typer.Option("--key", metavar="KEY", help="Canonical key, e.g. deploy.region.")
    ] = None,
    source: Annotated[
        str,
        typer.Option(
            "--source",
            metavar="SRC",
            help="Who says so: user, tool (needs --ref), import, reflect.",
        ),
    ] = "user",
    ref: Annotated[
        str | None,
        typer.Option("--ref", metavar="REF", help="Source id: message id, commit, URL, tool call."),
    ] = None,
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope", metavar="SCOPE", help="Namespace (default: global / $TALOS_SCOPE)."
        ),
    ] = None,
    observed: Annotated[
        str | None,
        typer.Option(
            "--observed", metavar="DATE", help="When the evidence was observed (default today)."
        ),
    ] = None,
    valid_from: Annotated[
        str | None,
        typer.Option("--from", metavar="DATE", help="Valid from this date (default: --observed)."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", metavar="DATE", help="Valid until this date (exclusive)."),
    ] = None,
    conf: Annotated[
        float | None, typer.Option("--conf", metavar="0-1", help="Confidence 0-1.")
    ] = None,
    by: Annotated[
        str | None, typer.Option("--by", metavar="NAME", help="The producer (agent or policy).")
    ] = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append a fact to memory.md with its provenance, atomically.

    The write is audited and takes a lock. With --key, it supersedes older records of that key and
    scope whose authority is not higher and whose validity overlaps, and the new line takes the
    old one's place in memory.md (under the same heading; with nothing to supersede it is
    appended at the end); a value for a later window (--from/--until) leaves the current one in
    force outside that window and goes right after it; late evidence (observed
    before the current record) goes to history; a reflect write never replaces what the person
    (user) or a tool said: it is stored, shadowed. In the text, line breaks and tabs fold to
    one space (a fact is one line); any other control or format character (ESC, NUL, a
    zero-width or bidi character) is refused, and so is any control character in an option.

    Examples:
      talos remember "editor = helix" --key editor
      talos remember "region is eu-west-1" --key deploy.region \\
          --source tool --ref run:42
    """
    scopes = scopes_from(None if scope is None else [scope])  # "" is refused, not the default
    mem = open_memory(home, scopes=scopes)
    result = mem.remember(
        text,
        key=key,
        source=source,
        ref=ref,
        scope=scopes[0],
        observed=parse_date(observed, "--observed"),
        valid_from=parse_date(valid_from, "--from"),
        until=parse_date(until, "--until"),
        conf=conf,
        by=by,
    )
    if as_json:
        emit(
            "remember",
            {
                "id": result.id,
                "line": result.line,
                "status": result.status,
                "superseded": result.superseded,
            },
        )
        return
    err.print(f"remembered {result.id} ({result.status})")
    for rid in result.superseded:
        err.print(f"  superseded {rid} (restorable: talos restore {rid})")
    if result.status == "shadowed":
        err.print("  a record of higher authority holds this key: stored, but not used")
    if result.status == "history":
        err.print("  older than the current record: kept in the audit log only")


@handle_errors("get")
def get(
    key: Annotated[str, typer.Argument(metavar="KEY", help="Canonical key, e.g. deploy.region.")],
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    at: AtOpt = None,
    override: OverrideOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the usable value of KEY, or refuse with a reason (exit 3).

    The value goes to stdout, its provenance to stderr. A refusal says why: unknown, expired,
    not-yet-valid, or conflict (with the competitors); a value from a reflect record is
    flagged as model-inferred. A record of a scope you are not authorized for is reported as
    unknown.

    Examples:
      talos get deploy.region
      talos get deploy.region --scope project:alpha --json
    """
    mem = open_memory(home, scopes=scopes_from(scope))
    decision = mem.get(key, at=parse_date(at), overrides=parse_overrides(override))
    if as_json:
        emit(
            "get",
            decision.to_json(),
            ok=decision.ok,
            error=None if decision.ok else decision.reason,
        )
    elif decision.ok and decision.record is not None:
        # stored text, on stdout and in the messages: on one line and bounded with a visible
        # cut, as MCP get gives it (a 100 kB value was printed whole, twice)
        value = cut(one_line(decision.value or ""), TEXT_CHARS, _CUT)
        out.out(value)
        rec = decision.record
        prov = node_provenance(rec)
        note = (
            " · model-inferred (reflect), verify before relying on it" if decision.inferred else ""
        )
        if decision.override:
            note = " · request-scoped override"
        src, born = shown(str(prov.get("src"))), shown(str(prov.get("born")))
        err.print(f"{shown(key)} = {value}  [{src} {born} id={record_id(rec)}]{note}")
    else:
        err.print(f"{shown(key)}: {decision.reason}")
        for n in decision.competitors:
            value = shown(stated_value(n.text))
            err.print(f"  {record_id(n)}: {value} ({shown(n.src)} {shown(n.born)})")
    if not decision.ok:
        raise typer.Exit(EXIT_REFUSED)


@handle_errors("conflicts", listing=True)
def conflicts(
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    at: AtOpt = None,
    as_json: JsonOpt = False,
    plain: PlainOpt = False,
    wide: WideOpt = False,
) -> None:
    """List keys whose records disagree at equal authority.

    Only records of the same key and scope can conflict. While a key is contested, recall
    gives no value for it, only a conflict line naming the competitors; settle it with
    talos resolve KEY --keep ID.

    Examples:
      talos conflicts
      talos conflicts --scope project:alpha --json
    """
    mem = open_memory(home, scopes=scopes_from(scope))
    found = mem.conflicts(at=parse_date(at))
    if as_json:
        emit(
            "conflicts",
            [
                {
                    "scope": s,
                    "key": k,
                    "records": [
                        {
                            "id": record_id(n),
                            "value": stated_value(n.text),
                            "text": n.text,
                            "provenance": node_provenance(n),
                        }
                        for n in recs
                    ],
                }
                for s, k, recs in found
            ],
        )
        return
    if not found:
        err.print("no conflicts")
        return
    from talos.cli.listing import Column, Listing

    table = Listing(
        "conflicts",
        [
            Column("scope", "cut"),
            Column("key", "cut"),
            Column("id"),
            Column("value", "cut", main=True),
            Column("source"),
            Column("date"),
        ],
    )
    for s, k, recs in found:
        for n in recs:
            cells = (s, k, record_id(n), stated_value(n.text), n.src, n.born)
            table.add(*map(shown, cells))
    table.show(plain, wide)


@handle_errors("resolve")
def resolve(
    key: Annotated[str, typer.Argument(metavar="KEY", help="The contested key.")],
    keep: Annotated[str, typer.Option("--keep", metavar="ID", help="Id of the record to keep.")],
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Settle a conflict: keep one record, supersede the others.

    The other records of KEY become superseded: their lines leave memory.md and are kept in the
    audit log (talos history KEY), so talos restore ID can bring one back. Ids are listed by talos
    conflicts. The decision is made on memory.md as it is when the write happens: if another write
    removed the record to keep meanwhile, nothing is changed (exit 1).

    Examples:
      talos conflicts
      talos resolve team.favourite --keep r3f9a01c2de
    """
    mem = open_memory(home, scopes=scopes_from(scope))
    removed = mem.resolve(key, keep)
    if as_json:
        emit("resolve", {"key": key, "kept": keep, "superseded": removed})
        return
    err.print(f"{key}: kept {keep}; superseded {', '.join(removed) or 'nothing'}")


@handle_errors("history", listing=True)
def history(
    target: Annotated[
        str | None, typer.Argument(metavar="KEY|ID", help="A key or a record id.")
    ] = None,
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    as_json: JsonOpt = False,
    plain: PlainOpt = False,
    wide: WideOpt = False,
) -> None:
    """Show the audit log: what was written, replaced, removed, restored.

    Every remember, supersede, resolve, forget, revoke and restore. Only entries of the authorized
    scopes are shown; give a key or a record id to narrow it down. The ids are what talos restore
    takes.

    Examples:
      talos history
      talos history editor --json
    """
    mem = open_memory(home, scopes=scopes_from(scope))
    rows = mem.history(target)
    if as_json:
        emit("history", rows)
        return
    if not rows:
        err.print("no history")
        return
    from talos.cli.listing import Column, Listing, to_pipe

    # a terminal's table leaves out what the title says (the key asked for) and what the op
    # says again (its reason's first word); plain lines keep every field, for scripts
    fit = not (plain or to_pipe() or wide)
    one_key = fit and {str(e.get("key") or "") for e in rows} == {target}
    title = f"history{' of ' + shown(target) if target else ''}"
    listing = Listing(
        title,
        [
            Column("time (UTC)"),
            Column("op"),
            Column("id"),
            *([] if one_key else [Column("key", "cut")]),
            Column("line (as written)" if wide else "record", "cut", main=True),
            Column("reason", "cut", drop=True),
        ],
    )
    times = [dt.datetime.fromtimestamp(int(e.get("t", 0)), dt.UTC) for e in rows]
    this_year = fit and {t.year for t in times} == {dt.datetime.now(dt.UTC).year}
    for e, t in zip(rows, times, strict=True):
        when = t.strftime("%m-%d %H:%M" if this_year else "%Y-%m-%d %H:%M")  # as ls -l does
        op, before, after = str(e.get("op")), e.get("before") or e.get("line"), e.get("after")
        if wide:  # the lines as the audit log holds them, tags and all
            line = " → ".join(str(t) for t in (before, after) if t)
        else:
            line = _record_text(str(after or before or ""))
        reason = str(e.get("reason") or "")
        if fit and reason.split(" ", 1)[0].startswith(op):
            reason = reason.split(" ", 1)[1] if " " in reason else ""
        key = [] if one_key else [str(e.get("key") or "")]
        # the log's texts are stored text: each on one line, bounded
        listing.add(when, *map(shown, (op, str(e.get("id") or ""), *key, line, reason)))
    listing.show(plain, wide)


def _record_text(line: str) -> str:
    """An audit log's line as a person reads the record: without its provenance tag (its
    source, date, id and key are the other columns; ``--wide`` and ``--json`` show the
    line as written) and its list bullet."""
    text, _src, _born = strip_tag(line)
    return text.removeprefix("- ").removeprefix("* ")


@handle_errors("restore")
def restore(
    rid: Annotated[
        str, typer.Argument(metavar="ID", help="Id of a removed record (see talos history).")
    ],
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Bring a removed line back into memory.md from the audit log.

    Works for lines removed by supersede, resolve, forget or revoke, and for a record talos wrote
    that an edit outside talos removed (talos doctor names it), of an authorized scope; a
    forgotten skill file comes back from .talos/trash/. The restored record is current again:
    the records of its key that took its place are superseded in turn (restorable), and the line
    goes back where they stand (else at the end of memory.md). The restore is audited too.

    Examples:
      talos history editor
      talos restore Lc1bafd77f
    """
    done = open_memory(home, scopes=scopes_from(scope)).restore_record(rid)
    if as_json:
        emit("restore", {"id": rid, "line": done.line, "superseded": list(done.superseded)})
        return
    err.print(f"restored {shown(rid)}: {shown(done.line)}")  # the audit log's line: stored text
    for other in done.superseded:
        err.print(f"  superseded {other} (restorable: talos restore {other})")


@handle_errors("revoke")
def revoke(
    source_ref: Annotated[
        str | None,
        typer.Argument(
            metavar="REF", help="The source id to retract, e.g. msg:42.", show_default=False
        ),
    ] = None,
    ref: Annotated[
        str | None,
        typer.Option("--ref", metavar="REF", help="The same REF as an option (older scripts)."),
    ] = None,
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Retract every record derived from source REF.

    The records are removed, audited and restorable. Provenance makes precise revocation possible:
    every line whose tag says ref=REF leaves memory.md, of the authorized scopes only; each is kept
    in the audit log. When no record carries REF, nothing is revoked and the command exits 1.

    Examples:
      talos revoke msg:42
      talos revoke run:42 --scope project:alpha --json
    """
    ref = _one_ref(source_ref, ref)
    removed = open_memory(home, scopes=scopes_from(scope)).revoke(ref)
    if as_json:
        emit("revoke", {"ref": ref, "removed": removed})
        return
    err.print(f"revoked {len(removed)} record(s) derived from {ref}: {', '.join(removed) or '-'}")


def _one_ref(positional: str | None, option: str | None) -> str:
    """``talos revoke REF`` (what the README and the help say) or ``--ref REF`` (the form
    before it, kept for scripts): the one REF given.

    Raises:
        TalosError: neither given, or two different ones (exit 1).
    """
    if positional is None and option is None:
        raise TalosError("give the source REF to retract, e.g. talos revoke msg:42")
    if positional is not None and option is not None and positional != option:
        raise TalosError(f"two sources given ({positional!r} and --ref {option!r}); give one")
    return positional if positional is not None else str(option)
